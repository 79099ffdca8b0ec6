# chain.awk — a KM_output file of one rank whose thread 0's tree is one
# chain of N paths: MAIN, then SUB inside SUB N - 1 times, each path 1
# microsecond of its own (the deepest tree there is, for paths.test and
# html.test).  awk -v N=PATHS -v V=FORMAT (6, or 7: rows with Fold).
BEGIN {
    total = N * 1e-6
    print "! kmtool KM_output " V
    print "! Program    : ./chain"
    print "! Clock      : CLOCK_MONOTONIC"
    print "! Overhead   : 2.00e-08 s per measured entry and exit; taken out of every time"
    print "! Ranks      : 1"
    print "! ===== Rank 0 ====="
    print "0001 0 ! Processors and Rank"
    printf "%.7e ! Total time\n", total
    printf "%d ! Counts of routines\n", N
    print "2 ! Counts of time get function"
    print "2.0000000e-08 ! Time get function cost(1 call)"
    print "0.0000000e+00 ! libkm overhead"
    print "1 ! Output counts by KM_writ"
    print "0.0000000e+00 ! MPI time"
    print "0.0000000e+00 ! MPI start-up time"
    print "0.0000000e+00 ! I/O time"
    print "0.0000000e+00 ! Time outside routines"
    print "0.0000000e+00 ! Time in uninstrumented routines"
    print "0.0000000e+00 ! Estimated time"
    print "2 ! Routines"
    printf "1 MAIN %.7e 1.0000000e-06 1 0 0 0.0\n", total
    printf "2 SUB %.7e %.7e %d 0 0 0.0\n", total - 1e-6, total - 1e-6, N - 1
    print "! ===== Paths ====="
    print "1 ! Trees"
    printf "! Thread 0: %d paths, 0 entries on folded paths\n", N
    fold = V >= 7 ? " -" : ""
    for (k = 1; k <= N; k++)
        printf "%d %d %d 1 %.7e 1.0000000e-06 0.0%s\n", k, k - 1, k == 1 ? 1 : 2, (N - k + 1) * 1e-6, fold
    print "! ===== End ====="
}
