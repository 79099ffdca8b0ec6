# summary-expect.awk — what kmview's terminal summary must print, from
# kmgen's expectations ("key<TAB>value" lines), as normalised lines:
#   figure KEY MIN MEAN MAX MAXRANK
#   share LABEL SECONDS PERCENT
#   pred T_1pe|Speedup|Efficiency VALUE   (or "pred n/a")
#   predrow RANK VALUE...       a Prediction row, the columns the file has
#   predspread COLUMN MIN MEAN MAX   instead of the rows, past 16 ranks
#   routine NAME NET SHARE MIN MAX MAX/MEAN RANK ELAPSED COUNTS MPI IO EST
#   threads RANK N MIN MEAN MAX IMBAL MAXOUT   (several ranks: each rank's
#           threads' net time; from rank_threads.csv)
#   tregion NAME KIND LINE THREADS COUNTS MIN MEAN MAX IMBAL [RANK]
# in kmview's formats (4 significant digits, one decimal for percentages,
# '~' before a figure that contains an estimate), routines in order of
# mean net time, largest first.  summary-got.awk turns the summary itself
# into the same lines.
BEGIN { FS = "\t" }
{ v[$1] = $2 }
# A count as the summary shows it: whole while below 1e9, else %.6g.
function count(c) {
    c += 0
    return c == int(c) && c < 1e9 ? sprintf("%.0f", c) : sprintf("%.6g", c)
}

function g(x) { return x == "" ? "-" : sprintf("%.4g", x) }
function m(x, est) { return x == "" ? "-" : (est == 1 || est == "true" ? "~" : "") g(x) }
function pct(x) { return x == "" ? "-" : sprintf("%.1f%%", 100 * x) }
function cnt(x) { return x == int(x) ? sprintf("%.0f", x) : sprintf("%.7g", x) }
function share(label, key, sk) {
    print "share", label, m(v["run.csv:" key ":value"], v["run.csv:" key "_estimated:value"]),
          pct(v["run.csv:" sk ":value"])
}
# The Prediction's rows, or past 16 ranks each column's spread over ranks
# (marked when any rank's figure is): the columns the file has.
function prediction_rows(   ncol, col, nrow, k, p, x, line, lo, hi, sum, e) {
    ncol = split("total startup mpi redundant overhead parallel waited", col, " ")
    for (nrow = 0; ("prediction.csv:" nrow ":total") in v; nrow++)
        ;
    for (p = 0; p < nrow && nrow <= 16; p++) {
        line = "predrow " p
        for (k = 1; k <= ncol; k++)
            if (v["prediction.csv:0:" col[k]] != "")
                line = line " " m(v["prediction.csv:" p ":" col[k]], v["prediction.csv:" p ":" col[k] "_estimated"])
        print line
    }
    for (k = 1; k <= ncol && nrow > 16; k++) {
        if (v["prediction.csv:0:" col[k]] == "")
            continue
        sum = 0; e = 0
        for (p = 0; p < nrow; p++) {
            x = v["prediction.csv:" p ":" col[k]] + 0
            if (p == 0 || x < lo) lo = x
            if (p == 0 || x > hi) hi = x
            sum += x
            e += v["prediction.csv:" p ":" col[k] "_estimated"] == 1
        }
        print "predspread", col[k], m(lo, e > 0), m(sum / nrow, e > 0), m(hi, e > 0)
    }
}
function fshare(label, key,   x) {
    x = v["figures.csv:" key ":mean"]
    print "share", label, m(x, v["figures.csv:" key ":estimated"]), pct(x / t)
}
END {
    nf = split("total_time counts_of_routines counts_of_time_get_function " \
               "time_get_function_cost_1_call libkm_overhead " \
               "output_counts_by_km_writ mpi_time mpi_startup_time io_time " \
               "time_outside_routines time_in_uninstrumented_routines " \
               "estimated_time routines", keys, " ")
    split("0 1 1 0 0 1 0 0 0 0 0 0 1", integer, " ")
    for (k = 1; k <= nf; k++) {
        p = "figures.csv:" keys[k] ":"
        if (v[p "mean"] == "")
            continue                             # format 1 has no such figure
        e = v[p "estimated"]
        if (integer[k])
            print "figure", keys[k], cnt(v[p "min"]), cnt(v[p "mean"]), cnt(v[p "max"]), v[p "max_rank"]
        else
            print "figure", keys[k], m(v[p "min"], e), m(v[p "mean"], e), m(v[p "max"], e), v[p "max_rank"]
    }
    t = v["run.csv:total_time:value"]
    print "share", "Total time", m(t, v["run.csv:total_time_estimated:value"]), pct(1)
    share("MPI communication (after start-up)", "mpi_time", "mpi_share")
    share("MPI start-up (MPI_INIT)", "mpi_startup_time", "mpi_startup_share")
    share("I/O", "io_time", "io_share")
    share("Computation (total - MPI - start-up - I/O)", "computation_time", "computation_share")
    share("Net time of the routines", "routines_net_time", "routines_net_share")
    fshare("Outside routines", "time_outside_routines")
    fshare("In uninstrumented routines", "time_in_uninstrumented_routines")
    share("libkm overhead", "libkm_overhead", "libkm_overhead_share")
    if (v["figures.csv:estimated_time:mean"] != "")
        fshare("Estimated (place of the time estimated)", "estimated_time")
    if (v["run.csv:prediction_available:value"] == 0)
        print "pred n/a"
    else {
        print "pred T_1pe", m(v["run.csv:t_1pe:value"], v["run.csv:t_1pe_estimated:value"])
        print "pred Speedup", m(v["run.csv:speedup:value"], v["run.csv:speedup_estimated:value"])
        print "pred Efficiency", (v["run.csv:efficiency_estimated:value"] == 1 ? "~" : "") \
              pct(v["run.csv:efficiency:value"])
    }
    prediction_rows()
    # routines by mean net time, ties by id (insertion sort: few of them)
    n = 0
    for (id = 1; ("routines.csv:" id ":name") in v; id++) {
        x = v["routines.csv:" id ":net_mean"] + 0
        for (j = n; j > 0 && order_m[j] < x; j--) { order[j + 1] = order[j]; order_m[j + 1] = order_m[j] }
        order[j + 1] = id; order_m[j + 1] = x; n++
    }
    for (k = 1; k <= n; k++) {
        p = "routines.csv:" order[k] ":"
        plus = v[p "extrapolated"] == 1 ? "+" : ""
        ne = v[p "net_estimated"]
        print "routine", v[p "name"], m(v[p "net_mean"], ne), pct(v[p "net_share"]), m(v[p "net_min"], ne),
              m(v[p "net_max"], ne), g(v[p "net_max_over_mean"]), v[p "net_max_rank"],
              m(v[p "elapsed_mean"], v[p "elapsed_estimated"]), plus count(v[p "counts_mean"]),
              m(v[p "mpi_mean"], v[p "mpi_estimated"]), m(v[p "io_mean"], v[p "io_estimated"]),
              pct(v[p "estimated_fraction"])
    }
    threads()
}

# The Threads part: every rank's threads (several ranks), then the regions
# over ranks, the longest mean first (ties: routine, then the routine
# before its locations, then location id).
function threads(   p, k, n, mn, mx, sum, out, est, x, key, id, f, q, nreg, j, i, t, mean, ranks) {
    if (!(("rank_threads.csv:0/0:net") in v) && !(("rank_threads.csv:1/0:net") in v) &&
        !(("rank_threads.csv:2/0:net") in v))
        return
    ranks = v["run.csv:ranks_in_run:value"] + 0
    for (p = 0; p < ranks && ranks > 1; p++) {
        if (!(("rank_threads.csv:" p "/0:net") in v))
            continue
        n = 0; sum = 0; out = 0; est = 0
        for (k = 0; ("rank_threads.csv:" p "/" k ":net") in v; k++) {
            x = v["rank_threads.csv:" p "/" k ":net"] + 0
            if (n == 0 || x < mn) mn = x
            if (n == 0 || x > mx) mx = x
            sum += x; n++
            if (v["rank_threads.csv:" p "/" k ":net_estimated"] == 1) est = 1
            x = v["rank_threads.csv:" p "/" k ":outside"] + 0
            if (x > out) out = x
        }
        mean = sum / n
        print "threads", p, n, m(mn, est), m(mean, est), m(mx, est),
              pct(mx > 0 ? (mx - mean) / mx : 0), g(out)
    }
    # regions: "R id" or "L id" over ranks
    nreg = 0
    for (key in v) {
        if (key !~ /^rank_thread_(routines|locations)\.csv:[0-9]+\/[0-9]+:threads$/)
            continue
        split(key, f, /[:\/]/)
        p = f[2] + 0; id = f[3] + 0
        t = (f[1] ~ /routines/ ? "R" : "L") " " id
        q = f[1] ":" p "/" id ":"
        if (!(t in rmean)) {
            nreg++; rkey[nreg] = t
            rmin[t] = v[q "min"] + 0; rmax[t] = -1; rthr[t] = 0; rcnt[t] = 0
            rest[t] = 0; rimb[t] = 0; rn[t] = 0; rmean[t] = 0
        }
        rn[t]++
        if (v[q "threads"] + 0 > rthr[t]) rthr[t] = v[q "threads"] + 0
        rcnt[t] += v[q "counts"]
        if (v[q "times_estimated"] == 1) rest[t] = 1
        if (v[q "min"] + 0 < rmin[t]) rmin[t] = v[q "min"] + 0
        rmean[t] += v[q "mean"]
        if (v[q "max"] + 0 > rmax[t] || (v[q "max"] + 0 == rmax[t] && p < rmaxr[t])) {
            rmax[t] = v[q "max"] + 0; rmaxr[t] = p
        }
        if (v[q "imbalance"] + 0 > rimb[t]) rimb[t] = v[q "imbalance"] + 0
    }
    for (i = 1; i <= nreg; i++) {
        t = rkey[i]; rmean[t] /= rn[t]
        split(t, f, " ")
        rrout[t] = f[1] == "R" ? f[2] : v["locations.csv:" f[2] ":routine_id"]
        rloc[t] = f[1] == "R" ? -1 : f[2]
    }
    for (i = 2; i <= nreg; i++)                  # insertion sort
        for (j = i; j > 1 && before(rkey[j], rkey[j - 1]); j--) {
            t = rkey[j]; rkey[j] = rkey[j - 1]; rkey[j - 1] = t
        }
    for (i = 1; i <= nreg; i++) {
        t = rkey[i]; split(t, f, " ")
        line = "tregion " v["routines.csv:" rrout[t] ":name"] " " \
               (f[1] == "R" ? "ROUT " v["routines.csv:" rrout[t] ":line"] \
                            : v["locations.csv:" f[2] ":kind"] " " v["locations.csv:" f[2] ":line"]) \
               " " rthr[t] " " count(rcnt[t]) " " m(rmin[t], rest[t]) " " m(rmean[t], rest[t]) \
               " " m(rmax[t], rest[t]) " " pct(rimb[t])
        if (ranks > 1) line = line " " rmaxr[t]
        print line
    }
}
function before(a, b) {
    if (rmean[a] != rmean[b]) return rmean[a] > rmean[b]
    if (rrout[a] != rrout[b]) return rrout[a] + 0 < rrout[b] + 0
    return rloc[a] + 0 < rloc[b] + 0
}
