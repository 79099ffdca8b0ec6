# mkout.awk — a KM_output file from a short description, for tests whose
# every figure is chosen by hand.  Every rank gets the same figures.
#   version V                   1 (the default), 2, 5 (file lines), 6
#                               (path lines) or 7 (path lines with Fold)
#   ranks N
#   total T mpi M io I [startup S] [estimated E] [overhead O] [waited W]
#                               header figures (seconds); S, E, O, W:
#                               version 2 (O: libkm overhead; W: the
#                               Prediction's time waited for a processor)
#   costs M E                   version 2: the Overhead line's costs of a
#                               measured and of an estimated execution
#                               (seconds; without it: 2e-8, none given)
#   routine NAME ELAPSED NET COUNT MPI IO [EST%]
#   loc ROUTINE KIND LINE ELAPSED COUNT [EST%] STATEMENT...
#   file RANKS OPENS CLOSES INQUIRE SEEKS FLUSHES META READS READ_S READ_B
#        WRITES WRITE_S WRITE_B SIZE NAME...
#                               a row of the Files block of the ranks
#                               RANKS ("all", or numbers and ranges A-B
#                               joined by commas), in order; bytes as
#                               KM_output writes them (N, ~N, >=N or -),
#                               SIZE N or -; NAME the rest of the line,
#                               %d in it the rank
#   mpiio RANKS ...             the same, a row of the MPI-IO block
#   path RANKS ID PARENT REGION COUNTS ELAPSED NET EST% [FOLD]
#                               a row of thread 0's tree in the Paths block
#                               of the ranks RANKS, in order: ID names the
#                               path (any word), PARENT the ID of its parent
#                               or - (outside every region); REGION as the
#                               file writes it (k routine row k, k.j its
#                               j-th location); times may carry '~'; FOLD
#                               (version 7: -, r or m; default -) and
#                               the heading's folded entries ("folded N"
#                               sets them)
# EST% only in version 2 and 5 (required there).  A time may carry version 2's
# '~' (contains an estimate), a count version 1's '+'.  Version 1's MPI
# time holds its start-up (give it so); version 2's figures add up:
# time in uninstrumented routines = T - net - M - S - O.  The prediction
# takes R = 0, so P = T - S - M - O - W, T_1pe = N * P and the speedup
# T_1pe / (T - S - O), as libkm would (version 1: P = T - M, T_1pe / T).
# P and the predicted figures are marked ~ when M, O or W is.
function tm(x) { return (x ~ /^~/ ? "~" : "") sprintf("%.7e", x ~ /^~/ ? substr(x, 2) : x) }
function val(x) { return x ~ /^~/ ? substr(x, 2) + 0 : x + 0 }
BEGIN { version = 1 }
$1 == "version" { version = $2 }
$1 == "ranks" { n = $2 }
$1 == "costs" { cm = $2; ce = $3 }
$1 == "total" {
    for (i = 1; i < NF; i += 2) fig[$i] = $(i + 1)
    total = fig["total"]; mpi = fig["mpi"]; io = fig["io"]; startup = fig["startup"] + 0
    est = fig["estimated"] + 0; overhead = fig["overhead"] ""; waited = fig["waited"] ""
    if (overhead == "") overhead = 0
    if (waited == "") waited = 0
}
$1 == "routine" {
    nr++; name[nr] = $2; el[nr] = $3; net[nr] = $4; cnt[nr] = $5; rm[nr] = $6; rio[nr] = $7
    rest[nr] = $8; no[$2] = nr; sumnet += val($4); sumcnt += $5 + 0
    if ($4 ~ /^~/) netest = 1
}
$1 == "loc" {
    r = $2; nl[r]++; k = nl[r]
    lkind[r, k] = $3; lline[r, k] = $4; lel[r, k] = $5; lcnt[r, k] = $6
    skip = version >= 2 ? 7 : 6
    if (version >= 2) lest[r, k] = $7
    t = $0; for (i = 1; i <= skip; i++) sub(/^[^ ]+ +/, "", t); ltext[r, k] = t
}
$1 == "path" {
    np++; prank[np] = $2; pid[np] = $3; ppar[np] = $4; preg[np] = $5; pcnt[np] = $6
    pel[np] = $7; pnet[np] = $8; pest[np] = $9; pfold[np] = NF >= 10 ? $10 : "-"
}
$1 == "folded" { folded = $2 }
# the Paths block of rank p: the path lines that name it
function paths(p,    k, c, no, c2) {
    for (k = 1; k <= np; k++) if (names(prank[k], p)) c++
    if (!c) return
    print "!\n! ===== Paths ====="
    printf "%-15d ! Trees\n", 1
    printf "! Thread 0: %d paths, %d entries on folded paths\n", c, folded
    print "!     Path   Parent Region           Counts       Elapsed(s)           Net(s)  Est(%)" \
          (version >= 7 ? " Fold" : "")
    for (k = 1; k <= np; k++)
        if (names(prank[k], p)) {
            no[pid[k]] = ++c2
            printf "%10d %8d %-15s %10s %16s %16s %7.1f%s\n", c2, ppar[k] == "-" ? 0 : no[ppar[k]], preg[k],
                   pcnt[k], tm(pel[k]), tm(pnet[k]), pest[k], (version >= 7 ? "    " pfold[k] : "")
        }
}
$1 == "file" || $1 == "mpiio" {
    nf++; frank[nf] = $2; fblock[nf] = $1 == "file" ? "Files" : "MPI-IO"
    frow[nf] = sprintf("%7d %7d %7d %7d %7d %15s %9d %15s %14s %9d %15s %14s %14s", $3, $4, $5, $6, $7, tm($8), $9,
                       tm($10), $11, $12, tm($13), $14, $15)
    t = $0; for (i = 1; i <= 15; i++) sub(/^[^ ]+ +/, "", t); fname[nf] = t
}
# does the RANKS of a file line name rank p?
function names(spec, p,    n, i, it, ab) {
    if (spec == "all") return 1
    n = split(spec, it, ",")
    for (i = 1; i <= n; i++) {
        if (split(it[i], ab, "-") == 2 ? p >= ab[1] + 0 && p <= ab[2] + 0 : p == it[i] + 0) return 1
    }
    return 0
}
# the Files or MPI-IO block of rank p: the lines of the block that name it
function files(p, block,    k, c) {
    for (k = 1; k <= nf; k++) if (fblock[k] == block && names(frank[k], p)) c++
    if (!c) return
    print "!\n! ===== " block " ====="
    printf "%-15d ! Files\n", c
    print "! Opens  Closes Inquire   Seeks Flushes         Meta(s)     Reads         Read(s)        Read(B)    Writes" \
          "        Write(s)       Write(B)        Size(B) File"
    for (k = 1; k <= nf; k++)
        if (fblock[k] == block && names(frank[k], p)) {
            t = fname[k]; gsub(/%d/, p, t)
            print frow[k] " " t
        }
}
END {
    v2 = version >= 2
    m = val(mpi); o = v2 ? val(overhead) : 0; w = v2 ? val(waited) : 0
    par = total - (v2 ? startup : 0) - m - o
    busy = total - (v2 ? startup : 0) - o
    pm = mpi ~ /^~/ || (v2 && overhead ~ /^~/) ? "~" : ""
    print "! kmtool KM_output " version
    print "! Program    : ./demo"
    print "! Started    : 2026-11-22 10:00:00"
    print "! Written at : MPI_FINALIZE"
    print "! Clock      : CLOCK_MONOTONIC"
    if (v2 && ce != "")
        printf "! Overhead   : %.2e s per measured entry and exit, %.2e s per estimated one; taken out of every time\n", cm, ce
    else if (v2)
        print "! Overhead   : 2.00e-08 s per measured entry and exit; taken out of every time"
    print "! Ranks      : " n
    print "!"
    print "! ===== Prediction ====="
    if (v2) printf "! %-98s\n", "Times without MPI start-up (MPI_INIT) and libkm; ~ marks figures that contain estimates"
    for (p = 0; p < n; p++)
        if (v2)
            printf "%8d %15s %15s %15s %15s %15s %15s %15s\n", p, tm(total), tm(startup), tm(mpi), tm(0),
                   tm(overhead), pm tm(par), tm(waited)
        else
            printf "%8d %15.7e %15.7e %15.7e %15.7e\n", p, total, m, 0, par
    printf "%-15s ! Predicted one-PE time T_1pe\n", pm tm(n * par)
    printf "%-15s ! Predicted speedup\n", pm tm(n * par / busy)
    printf "%-15s ! Predicted parallel efficiency\n", pm tm(par / busy)
    for (p = 0; p < n; p++) {
        print "! ===== Rank " p " ====="
        printf "%04d %-10d ! Processors and Rank\n", n, p
        printf "%-15.7e ! Total time\n", total
        printf "%-15d ! Counts of routines\n", sumcnt
        printf "%-15d ! Counts of time get function\n", 2 * sumcnt
        printf "%-15.7e ! Time get function cost(1 call)\n", 2e-8
        if (v2) printf "%-15s ! libkm overhead\n", tm(overhead)
        else printf "%-15.7e ! Time get function cost (Total)\n", 4e-8 * sumcnt
        printf "%-15d ! Output counts by KM_writ\n", 1
        printf "%-15s ! MPI time\n", tm(mpi)
        if (v2) printf "%-15s ! MPI start-up time\n", tm(startup)
        printf "%-15s ! I/O time\n", tm(io)
        printf "%-15.7e ! Time outside routines\n", 0
        if (v2) {
            printf "%-15.7e ! Time in uninstrumented routines\n", total - sumnet - m - startup - o
            printf "%-15s ! Estimated time\n", (est > 0 ? "~" : "") tm(est)
        } else
            printf "%-15.7e ! Time in unmeasured callees\n", total - sumnet
        printf "%-15d ! Routines\n", nr
        for (i = 1; i <= nr; i++)
            printf "%8d %-22s %15s %15s %10s %15s %15s%s\n", i, name[i], tm(el[i]), tm(net[i]), cnt[i],
                   tm(rm[i]), tm(rio[i]), v2 ? sprintf(" %7.1f", rest[i]) : ""
        if (v2)
            printf "!%7s %-22s %15s %15s %10d %15s %15s %7.1f\n", "", "Total", "", (netest ? "~" : "") tm(sumnet),
                   sumcnt, tm(mpi), tm(io), 0
        for (i = 1; i <= nr; i++) {
            r = name[i]
            if (!nl[r]) continue
            printf "!\n! Routine %d %s, file demo.f, line %d, %d locations\n", i, r, 10 * i, nl[r]
            for (k = 1; k <= nl[r]; k++)
                printf "%8d %-5s %6d %15s %10s%s %s\n", k, lkind[r, k], lline[r, k], tm(lel[r, k]), lcnt[r, k],
                       v2 ? sprintf(" %7.1f", lest[r, k]) : "", ltext[r, k]
        }
        files(p, "Files")
        files(p, "MPI-IO")
        paths(p)
    }
    print "! ===== End ====="
}
