# linkage.awk — complete-linkage clustering the slow, obvious way, to check
# kmview's nearest-neighbour chain: reads kmview's rank_routines.csv and
# rank_figures.csv (pass both, in that order), builds each rank's profile
# (per routine: net - I/O, MPI, I/O; time outside routines; time in
# uninstrumented routines; MPI start-up), takes L1 distances over the mean
# total time, and merges
# the closest pair of clusters until one is left, printing each merge's
# height (%.6g), lowest first.
BEGIN { FS = "," }
FNR == 1 { file++; for (i = 1; i <= NF; i++) col[file, $i] = i; next }
file == 1 {
    p = $col[1, "rank"]; r = $col[1, "id"]
    x[p, "c" r] = $col[1, "net"] - $col[1, "io"]
    x[p, "m" r] = $col[1, "mpi"]; x[p, "i" r] = $col[1, "io"]
    feat["c" r]; feat["m" r]; feat["i" r]
}
file == 2 && $col[2, "lost"] == 0 {
    p = $col[2, "rank"]; rank[n++] = p
    x[p, "out"] = $col[2, "time_outside_routines"]
    x[p, "cal"] = $col[2, "time_in_uninstrumented_routines"]
    x[p, "su"] = $col[2, "mpi_startup_time"]
    total += $col[2, "total_time"]
}
END {
    feat["out"]; feat["cal"]; feat["su"]; mean = total / n
    for (a = 0; a < n; a++) for (b = a + 1; b < n; b++) {
        s = 0
        for (f in feat) { v = x[rank[a], f] - x[rank[b], f]; s += v < 0 ? -v : v }
        d[a, b] = d[b, a] = s / mean
    }
    for (a = 0; a < n; a++) alive[a] = 1
    for (k = 1; k < n; k++) {
        best = -1
        for (a = 0; a < n; a++) if (alive[a]) for (b = a + 1; b < n; b++)
            if (alive[b] && (best < 0 || d[a, b] < best)) { best = d[a, b]; ba = a; bb = b }
        printf "%.6g\n", best
        for (c = 0; c < n; c++) if (alive[c] && c != ba && c != bb)
            d[ba, c] = d[c, ba] = d[ba, c] > d[bb, c] ? d[ba, c] : d[bb, c]
        alive[bb] = 0
    }
}
