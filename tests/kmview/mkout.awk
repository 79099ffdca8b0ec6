# mkout.awk — a KM_output file from a short description, for tests whose
# every figure is chosen by hand.  Every rank gets the same figures.
#   ranks N
#   total T mpi M io I          header figures (seconds)
#   routine NAME ELAPSED NET COUNT MPI IO
#   loc ROUTINE KIND LINE ELAPSED COUNT STATEMENT...
# The prediction takes R = 0, so T_1pe = N * (T - M), as libkm would.
$1 == "ranks" { n = $2 }
$1 == "total" { total = $2; mpi = $4; io = $6 }
$1 == "routine" {
    nr++; name[nr] = $2; el[nr] = $3; net[nr] = $4; cnt[nr] = $5; rm[nr] = $6; rio[nr] = $7
    no[$2] = nr; sumnet += $4; sumcnt += $5
}
$1 == "loc" {
    r = $2; nl[r]++; k = nl[r]
    lkind[r, k] = $3; lline[r, k] = $4; lel[r, k] = $5; lcnt[r, k] = $6
    t = $0; for (i = 1; i <= 6; i++) sub(/^[^ ]+ +/, "", t); ltext[r, k] = t
}
END {
    print "! kmtool KM_output 1"
    print "! Program    : ./demo"
    print "! Started    : 2026-11-22 10:00:00"
    print "! Written at : MPI_FINALIZE"
    print "! Clock      : CLOCK_MONOTONIC"
    print "! Ranks      : " n
    print "!"
    print "! ===== Prediction ====="
    for (p = 0; p < n; p++) printf "%8d %15.7e %15.7e %15.7e %15.7e\n", p, total, mpi, 0, total - mpi
    printf "%-15.7e ! Predicted one-PE time T_1pe\n", n * (total - mpi)
    printf "%-15.7e ! Predicted speedup\n", n * (total - mpi) / total
    printf "%-15.7e ! Predicted parallel efficiency\n", (total - mpi) / total
    for (p = 0; p < n; p++) {
        print "! ===== Rank " p " ====="
        printf "%04d %-10d ! Processors and Rank\n", n, p
        printf "%-15.7e ! Total time\n", total
        printf "%-15d ! Counts of routines\n", sumcnt
        printf "%-15d ! Counts of time get function\n", 2 * sumcnt
        printf "%-15.7e ! Time get function cost(1 call)\n", 2e-8
        printf "%-15.7e ! Time get function cost (Total)\n", 4e-8 * sumcnt
        printf "%-15d ! Output counts by KM_writ\n", 1
        printf "%-15.7e ! MPI time\n", mpi
        printf "%-15.7e ! I/O time\n", io
        printf "%-15.7e ! Time outside routines\n", 0
        printf "%-15.7e ! Time in unmeasured callees\n", total - sumnet
        printf "%-15d ! Routines\n", nr
        for (i = 1; i <= nr; i++)
            printf "%8d %-22s %15.7e %15.7e %10d %15.7e %15.7e\n", i, name[i], el[i], net[i], cnt[i], rm[i], rio[i]
        for (i = 1; i <= nr; i++) {
            r = name[i]
            if (!nl[r]) continue
            printf "!\n! Routine %d %s, file demo.f, line %d, %d locations\n", i, r, 10 * i, nl[r]
            for (k = 1; k <= nl[r]; k++)
                printf "%8d %-5s %6d %15.7e %10d %s\n", k, lkind[r, k], lline[r, k], lel[r, k], lcnt[r, k], ltext[r, k]
        }
    }
    print "! ===== End ====="
}
