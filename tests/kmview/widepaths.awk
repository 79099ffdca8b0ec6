# widepaths.awk — a KM_output 6 file of one rank whose thread 0 has a
# tree of B + B^2 + B^3 + B^4 paths under MAIN (B = 12: 22,621 paths with
# MAIN), child k of a path taking 0.9 / 2^(k+1) of its time: most frames
# far narrower than a pixel.  For html.test (the Paths view of a big tree).
# awk -v B=N: N children a path instead (18: 111,151 paths).
function row(no, parent, region, el, net) {
    printf "%10d %8d %-8s %12d   %15.7e  %15.7e     0.0\n", no, parent, region, 1, el, net
}
function gen(parent, depth, el,    k, no, c) {
    for (k = 0; k < B; k++) {
        c = el * 0.9 / 2 ^ (k + 1)
        no = ++n
        row(no, parent, k + 2, c, depth < D ? c * (1 - 0.9 * (1 - 2 ^ -B)) : c)
        if (depth < D) gen(no, depth + 1, c)
    }
}
BEGIN {
    if (!B) B = 12
    D = 4; total = 10
    print "! kmtool KM_output 6"
    print "! Program    : ./wide"
    print "! Started    : 2026-11-27 10:00:00"
    print "! Written at : END"
    print "! Clock      : CLOCK_MONOTONIC"
    print "! Overhead   : 2.00e-08 s per measured entry and exit; taken out of every time"
    print "! Ranks      : 1"
    print "!"
    print "! ===== Rank 0 ====="
    print "0001 0          ! Processors and Rank"
    printf "%.7e   ! Total time\n", total
    print "1               ! Counts of routines"
    print "2               ! Counts of time get function"
    print "2.0000000e-08   ! Time get function cost(1 call)"
    print "0.0000000e+00   ! libkm overhead"
    print "1               ! Output counts by KM_writ"
    print "0.0000000e+00   ! MPI time"
    print "0.0000000e+00   ! MPI start-up time"
    print "0.0000000e+00   ! I/O time"
    print "0.0000000e+00   ! Time outside routines"
    print "0.0000000e+00   ! Time in uninstrumented routines"
    print "0.0000000e+00   ! Estimated time"
    printf "%d               ! Routines\n", B + 1
    printf "%8d %-20s %15.7e  %15.7e %10d  %15.7e  %15.7e     0.0\n", 1, "MAIN", total, total * 0.1, 1, 0, 0
    for (k = 0; k < B; k++)
        printf "%8d %-20s %15.7e  %15.7e %10d  %15.7e  %15.7e     0.0\n", k + 2, sprintf("SUB%02d", k + 1), 0.1, 0.1, 1, 0, 0
    print "!"
    print "! ===== Paths ====="
    print "1               ! Trees"
    printf "! Thread 0: %d paths, 0 entries on folded paths\n", B + B^2 + B^3 + B^4 + 1
    n = 1
    row(1, 0, 1, total, total * (1 - 0.9 * (1 - 2 ^ -B)))
    gen(1, 1, total)
    print "! ===== End ====="
}
