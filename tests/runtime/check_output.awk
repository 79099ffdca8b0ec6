# check_output.awk — everything a KM_output file (doc/KM_output.md, format
# version 2) must satisfy whatever the timings and whatever was estimated:
#   awk -f check_output.awk KM_output.NNN
# Structure: first and last lines, header lines, sections in rank order, the
# fourteen header figures in order, table rows numbered, location blocks
# matching the table, every time a number with an optional '~' mark, every
# count with an optional '+'.  Arithmetic, up to the rounding of printed
# figures: every time >= 0; for every routine net <= elapsed <= total time,
# MPI and I/O times <= elapsed; every location's elapsed <= its routine's;
# Est(%) within 0..100, and 0 exactly when a figure carries no '~'; the
# Total row and the header figures the sums of their columns; total =
# total net + MPI + MPI start-up + uninstrumented + outside + overhead; the
# Prediction recomputed from its rows, T(p), S(p), C(p) and O(p) equal to
# rank p's total, start-up, MPI times and libkm overhead, W(p) <= T(p) but
# with the CPU clock, whose Clock line and Prediction figures must say
# that the times are CPU time.  A Threads block
# (format version 3): one row per thread, numbered from 0, thread 0's
# equal to the rank's figures, every thread's net <= total; one row per
# region some other thread ran, naming a routine of the table (and one of
# its locations), min <= mean <= max, as many threads as there are at
# most, and at least thread 0's count of it.  A Messages block (format
# version 4): as many rows as call sites, each naming an MPI location of
# the rank's tables, its size bins in order and holding its messages.  A
# Peers block: as many rows as peers, in rank order, each a rank of the
# run with messages.  A Timeline block (format version 5): its figures,
# the routines it names in the routine table, the row "before" and one
# row per slot, whole nanoseconds; each category's rows adding up to the
# rank's figure for it (computation = total net - I/O, MPI, I/O, other =
# the rest of the total time), and each row's routine columns to no more
# than its computation.  A Paths block (format version 6): its Trees
# figure, then per tree its heading (thread, paths, folded entries) and
# as many rows, numbered, each after its parent, naming a routine row or
# location of the tables, net <= elapsed, (version 7) what folded into it
# (a path folded at KM_PATHS_MAX right under an outermost one, apart from
# its region's other paths there), its children's elapsed times
# adding up to no more than its own (the root's: to no more than the
# total time); thread 0's counts per region adding up exactly to the
# tables' counts.
# Prints one line per problem; exit status 1 if any.

function bad(msg) {
    printf "%s:%d: %s\n    %s\n", FILENAME, FNR, msg, $0
    nbad++
}
function abs(x) { return x < 0 ? -x : x }
# equal up to the rounding of 8-digit figures, relative to `scale`
function near(a, b, scale) { return abs(a - b) <= 1e-6 * abs(scale) + 1e-15 }
# a <= b up to that rounding
function le(a, b) { return a <= b + 1e-6 * abs(b) + 1e-15 }
function is_time(s) { return s ~ /^~?-?[0-9]\.[0-9]+e[-+][0-9]+$/ }
function is_count(s) { return s ~ /^\+?[0-9]+$/ }
function marked(s) { return s ~ /^~/ }
function num(s) { sub(/^[~+]/, "", s); return s + 0 }
# a time field: checked, and its value
function time_of(s, what) {
    if (!is_time(s)) bad(what " is not a time: '" s "'")
    if (num(s) < 0) bad(what " is negative")
    return num(s)
}
function check_est(pct, fields, what) {
    if (pct !~ /^[0-9]+\.[0-9]$/ || pct + 0 > 100) bad(what ": Est(%) '" pct "'")
    if (pct + 0 > 0 && !fields) bad(what ": Est(%) " pct " but no figure marked ~")
}

function end_section() {
    if (!insec)
        return
    insec = 0
    if (msg && msgrows != nmsg)
        bad("rank " rank ": " msgrows " message rows for " nmsg " call sites")
    if (peers && peerrows != npeers)
        bad("rank " rank ": " peerrows " peer rows for " npeers " peers")
    if (files && filerows != nfiles)
        bad("rank " rank ": " filerows " file rows for " nfiles " files")
    if (fortran_files && !nthr && !near(fig["I/O time"], sumfile, fig["Total time"]))
        bad("rank " rank ": I/O time " fig["I/O time"] " != the files' time " sumfile)
    if (mpiio_files && !le(summpiio, fig["MPI time"]))
        bad("rank " rank ": MPI-IO time " summpiio " > MPI time " fig["MPI time"])
    if (tl) end_timeline()
    if (paths) end_paths()
    if (nfig != 14)
        bad("rank " rank ": " nfig " header figures, expected 14")
    if (!total_seen)
        bad("rank " rank ": no Total row")
    if (fig["Routines"] != nrows)
        bad("rank " rank ": Routines " fig["Routines"] ", table rows " nrows)
    if (fig["Counts of routines"] != sumcnt)
        bad("rank " rank ": Counts of routines " fig["Counts of routines"] " != sum " sumcnt)
    T = fig["Total time"]
    if (!near(fig["MPI time"], summpi, T))
        bad("rank " rank ": MPI time != sum of the MPI column")
    if (!near(fig["I/O time"], sumio, T))
        bad("rank " rank ": I/O time != sum of the IO column")
    rhs = sumnet + fig["MPI time"] + fig["MPI start-up time"] + \
          fig["Time in uninstrumented routines"] + \
          fig["Time outside routines"] + fig["libkm overhead"]
    if (!near(T, rhs, T))
        bad(sprintf("rank %d: total %.9e != net %.9e + MPI + start-up + uninstrumented + outside + overhead = %.9e",
                    rank, T, sumnet, rhs))
    if (!le(fig["Estimated time"], T))
        bad("rank " rank ": Estimated time > Total time")
    if (nblocks_expected != nblocks)
        bad("rank " rank ": " nblocks " location blocks")
    sec_total[rank] = fig["Total time"]
    sec_total_text[rank] = total_text
    sec_mpi[rank] = fig["MPI time"]
    sec_startup[rank] = fig["MPI start-up time"]
    sec_overhead[rank] = fig["libkm overhead"]
    if (blk && nloc != blk_n)
        bad("rank " rank ": block of " blk_name " has " nloc " rows, heading says " blk_n)
    blk = 0
}

BEGIN {
    npred = 0; nsec = 0; nbad = 0
    split("Processors and Rank|Total time|Counts of routines|" \
          "Counts of time get function|Time get function cost(1 call)|" \
          "libkm overhead|Output counts by KM_writ|MPI time|" \
          "MPI start-up time|I/O time|Time outside routines|" \
          "Time in uninstrumented routines|Estimated time|Routines",
          fignames, "|")
    split("Total time|Time get function cost(1 call)|libkm overhead|" \
          "MPI time|MPI start-up time|I/O time|Time outside routines|" \
          "Time in uninstrumented routines|Estimated time", t, "|")
    for (i in t) timefig[t[i]] = 1
}

# (version 5, as bench/kmoutgen writes it: all but the Paths block)
FNR == 1 { version = $0; sub(/^! kmtool KM_output /, "", version) }
FNR == 1 && version !~ /^[567]$/ { bad("first line") }
FNR == 2 && $0 !~ /^! Program    : ./ { bad("Program line") }
FNR == 3 && $0 !~ /^! Started    : [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/ { bad("Started line") }
FNR == 4 && $0 !~ /^! Written at : (END|STOP|EXIT|ABORT|MPI_FINALIZE|MPI_ABORT|PRINT_OUT|exit|signal [0-9]+)$/ { bad("Written at line") }
FNR == 5 && $0 !~ /^! Clock      : ./ { bad("Clock line") }
# the CPU clock: every time is CPU time, and says so
FNR == 5 { cpu = $0 ~ /^! Clock      : CPU time / }
FNR == 5 && cpu && $0 !~ /; every time in this file is CPU time, not elapsed time$/ { bad("CPU clock not said") }
FNR == 6 && $0 !~ /^! Overhead   : [0-9.e+-]+ s per measured entry and exit, [0-9.e+-]+ s per estimated one, [0-9.e+-]+ s inside a measured region; taken out of every time$/ { bad("Overhead line") }
FNR == 7 {
    if ($0 !~ /^! Ranks      : [0-9]+/) bad("Ranks line")
    nranks = $4 + 0
    if ($0 ~ /this file holds rank [0-9]+ only/) {
        only = 1
        x = $0; sub(/.*holds rank /, "", x); only_rank = x + 0
    }
}
{ lastline = $0 }

/^! ===== Prediction =====$/ { pred = 1; next }
pred && /^! ===== Rank / { pred = 0 }
pred && /^! No prediction: / { p_none = 1; next }
pred && /^! Ranks waited for a processor / { p_waited = 1; next }
pred && /^!/ { next }
pred && !cpu && /! Predicted one-PE time T_1pe$/ { p_t1 = $1; next }
pred && !cpu && /! Predicted speedup$/ { p_su = $1; next }
pred && !cpu && /! Predicted parallel efficiency$/ { p_ef = $1; next }
pred && cpu && /! Predicted one-PE CPU time T_1pe$/ { p_t1 = $1; next }
pred && cpu && /! Predicted speedup of CPU time \(not of wall time\)$/ { p_su = $1; next }
pred && cpu && /! Predicted parallel efficiency of CPU time \(not of wall time\)$/ { p_ef = $1; next }
pred {
    # rank, T, S, C, R, O, P, W
    if (NF != 8 || $1 != npred) { bad("Prediction row " npred); next }
    pt_text[npred] = $2
    pt[npred] = time_of($2, "T"); ps[npred] = time_of($3, "S")
    pc[npred] = time_of($4, "C"); pr[npred] = time_of($5, "R")
    po[npred] = time_of($6, "O"); pp[npred] = num($7)
    pw[npred] = time_of($8, "W")
    if (!is_time($7)) bad("P is not a time")
    if (!near(pp[npred], pt[npred] - ps[npred] - pc[npred] - pr[npred] - po[npred], pt[npred]))
        bad("P != T - S - C - R - O")
    # (CPU time leaves the waiting out: a rank may wait longer than it ran)
    if (!cpu && !le(pw[npred], pt[npred])) bad("W > T")
    pest += marked($4) + marked($5) + marked($6) + marked($7)
    npred++
    next
}

/^! ===== Rank [0-9]+ =====$/ {
    end_section()
    insec = 1; rank = $4 + 0
    want = only ? only_rank : nsec
    if (rank != want) bad("section of rank " rank ", expected rank " want)
    nsec++
    nfig = 0; nrows = 0; sumcnt = 0; sumnet = 0; summpi = 0; sumio = 0
    plus = 0; total_seen = 0; tab = 0; nblocks = 0; nblocks_expected = 0
    blk = 0; delete fig; delete rowname; delete rowel; delete rowno
    delete rowcnt; delete loccnt; thr = 0; nthr = 0; thrrows = 0; thrreg = 0
    msg = 0; nmsg = 0; msgrows = 0; peers = 0; npeers = 0; peerrows = 0
    files = 0; nfiles = 0; filerows = 0; sumfile = 0; summpiio = 0
    fortran_files = 0; mpiio_files = 0
    tl = 0; paths = 0
    next
}
/^! ===== End =====$/ { end_section(); ended = 1; next }
ended { bad("text after the End line") }

insec && nfig < 14 {
    if (/^!/) { bad("comment among the header figures"); next }
    i = index($0, "! ")
    name = i ? substr($0, i + 2) : ""
    if (name != fignames[nfig + 1]) bad("figure " nfig + 1 " is '" name "'")
    if (name in timefig)
        fig[name] = time_of($1, name)
    else if (nfig > 0 && !is_count($1))
        bad(name " is not a count")
    else if (nfig > 0)
        fig[name] = $1 + 0
    if (nfig == 0) {
        if ($1 != sprintf("%04d", nranks) || $2 != rank)
            bad("Processors and Rank")
    } else if (nfig == 1) {
        total_text = $1
        if (marked($1)) bad("Total time is marked as an estimate")
    }
    nfig++
    next
}
insec && /^![ ]+No Routine/ { tab = 1; next }
insec && tab && /^![ ]+Total / {
    tab = 0; total_seen = 1
    # "!", "Total", net, counts, MPI, IO, Est(%)
    if (NF != 7) { bad("Total row"); next }
    if (!near(num($3), sumnet, fig["Total time"])) bad("Total net")
    if (num($4) != sumcnt) bad("Total counts")
    if (($4 ~ /^\+/) != (plus > 0)) bad("Total counts '+'")
    if (!near(num($5), summpi, fig["Total time"])) bad("Total MPI")
    if (!near(num($6), sumio, fig["Total time"])) bad("Total IO")
    check_est($7, marked($3), "Total row")
    next
}
insec && tab {
    # No, name, elapsed, net, counts, MPI, IO, Est(%)
    if (NF != 8 || $1 != nrows + 1) { bad("routine row"); next }
    nrows++
    rowname[nrows] = $2
    el = time_of($3, "elapsed"); net = time_of($4, "net")
    mpi = time_of($6, "MPI"); io = time_of($7, "IO")
    rowel[nrows] = el; rowcnt[nrows] = num($5)
    if (!is_count($5)) bad("routine count")
    if (!le(net, el)) bad("net > elapsed")
    if (!le(el, fig["Total time"])) bad("elapsed > Total time")
    if (!le(mpi, el) || !le(io, el)) bad("MPI or IO time > elapsed")
    check_est($8, marked($3), "routine " $2)
    if ($5 ~ /^\+/) plus++
    sumcnt += num($5); sumnet += net; summpi += mpi; sumio += io
    next
}
insec && /^! Routine [0-9]+ / {
    if (blk && nloc != blk_n) bad("block of " blk_name " has " nloc " rows, heading says " blk_n)
    blk = 1; nloc = 0; nblocks++; nblocks_expected++
    blk_no = $3 + 0; blk_name = $4; sub(/,$/, "", blk_name)
    blk_n = $(NF - 1) + 0
    if (rowname[blk_no] != blk_name) bad("block names routine " blk_no " " blk_name)
    next
}
insec && blk && /^![ ]+No Kind/ { next }
insec && /^! ===== Threads =====$/ {
    if (blk && nloc != blk_n) bad("block of " blk_name " has " nloc " rows, heading says " blk_n)
    blk = 0; thr = 1; next
}
insec && thr == 1 {
    if ($3 != "Threads" || !is_count($1) || $1 < 2) bad("Threads figure")
    nthr = $1 + 0; thr = 2; next
}
insec && thr == 2 && /^![ ]+Thread +OMP/ { next }
insec && thr == 2 && !/^!/ {
    # thread, OMP, total, net, counts, MPI, outside, overhead, Est(%)
    if (NF != 9 || $1 != thrrows) { bad("thread row"); next }
    tt = time_of($3, "thread total"); tn = time_of($4, "thread net")
    tm = time_of($6, "thread MPI"); to = time_of($7, "thread outside")
    tv = time_of($8, "thread overhead")
    if (!is_count($5)) bad("thread count")
    if (!le(tn, tt) || !le(tm, tt) || !le(to, tt)) bad("thread figure > its total")
    check_est($9, marked($4), "thread " $1)
    if ($1 == 0) {
        T = fig["Total time"]
        if (!near(tt, T, T) || !near(tn, sumnet, T) || num($5) != sumcnt ||
            !near(tm, fig["MPI time"], T) ||
            !near(to, fig["Time outside routines"], T) ||
            !near(tv, fig["libkm overhead"], T))
            bad("thread 0's row is not the rank's figures")
    }
    thrrows++
    next
}
insec && thr == 2 && /^! Regions run by threads other than 0/ {
    if (thrrows != nthr) bad(thrrows " thread rows for " nthr " threads")
    thr = 3; next
}
insec && thr == 3 && /^![ ]+Region +Routine/ { next }
insec && thr == 3 && !/^!/ {
    # region, routine, kind, line, threads, counts, min, mean, max,
    # Imbal(%), statement...
    if (NF < 10) { bad("thread region row"); next }
    thrreg++
    split($1, part, ".")
    if (rowname[part[1] + 0] != $2) bad("thread region names routine " part[1] " " $2)
    if (($1 ~ /\./) != ($3 != "ROUT")) bad("thread region kind")
    if ($5 !~ /^[0-9]+$/ || $5 < 1 || $5 > nthr) bad("thread region's threads")
    if (!is_count($6)) bad("thread region count")
    want = $1 ~ /\./ ? loccnt[$1] : rowcnt[$1 + 0]
    if (num($6) < want) bad("thread region count below thread 0's")
    mn = time_of($7, "min"); mean = time_of($8, "mean"); mx = time_of($9, "max")
    if (!le(mn, mean) || !le(mean, mx)) bad("min <= mean <= max")
    if ($10 !~ /^[0-9]+\.[0-9]$/ || $10 + 0 > 100) bad("Imbal(%)")
    next
}
insec && /^! ===== Messages =====$/ {
    if (blk && nloc != blk_n) bad("block of " blk_name " has " nloc " rows, heading says " blk_n)
    if (thr && thr != 3) bad("Messages block inside the Threads block")
    blk = 0; thr = 0; msg = 1; msgrows = 0; next
}
insec && msg == 1 {
    if ($3 != "Call" || $4 != "sites" || !is_count($1) || $1 < 1) bad("Call sites figure")
    nmsg = $1 + 0; msg = 2; next
}
insec && msg == 2 && /^![ ]+Region +Routine/ { next }
insec && msg == 2 && !/^!/ {
    # region, routine, kind, line, messages, sent, received, bin:messages...
    if (NF < 8) { bad("message row"); next }
    msgrows++
    split($1, part, ".")
    if ($1 !~ /^[0-9]+\.[0-9]+$/ || rowname[part[1] + 0] != $2) bad("message row names routine " part[1] " " $2)
    if ($3 != "MPI") bad("message row of kind " $3)
    if (!($1 in loccnt)) bad("message row names no location " $1)
    if ($5 !~ /^[0-9]+$/ || $5 < 1 || $6 !~ /^[0-9]+$/ || $7 !~ /^[0-9]+$/) bad("message row figures")
    nb = 0; last = -1
    for (i = 8; i <= NF; i++) {
        if ($i !~ /^[0-9]+:[0-9]+$/) { bad("size bin " $i); continue }
        split($i, b, ":")
        if (b[1] + 0 <= last || b[1] + 0 > 47 || b[2] + 0 < 1) bad("size bins out of order")
        last = b[1] + 0; nb += b[2]
    }
    if (nb != $5) bad("the size bins of " $1 " hold " nb " messages, not " $5)
    next
}
insec && /^! ===== Peers =====$/ {
    if (msg && msgrows != nmsg) bad(msgrows " message rows for " nmsg " call sites")
    if (blk && nloc != blk_n) bad("block of " blk_name " has " nloc " rows, heading says " blk_n)
    if (thr && thr != 3) bad("Peers block inside the Threads block")
    blk = 0; thr = 0; msg = 0; peers = 1; peerrows = 0; lastpeer = -1; next
}
insec && peers == 1 {
    if ($3 != "Peers" || !is_count($1) || $1 < 1) bad("Peers figure")
    npeers = $1 + 0; peers = 2; next
}
insec && peers == 2 && /^![ ]+Peer +Sent/ { next }
insec && peers == 2 && !/^!/ {
    # peer, then messages and bytes sent, received, sent in all-to-alls
    if (NF != 7) { bad("peer row"); next }
    peerrows++
    for (i = 1; i <= 7; i++) if ($i !~ /^[0-9]+$/) bad("peer row figure " i)
    if ($1 + 0 <= lastpeer || $1 + 0 >= nranks) bad("peer " $1 " out of order or range")
    lastpeer = $1 + 0
    if ($2 + $4 + $6 < 1) bad("a peer without a message")
    if (($2 == 0 && $3 != 0) || ($4 == 0 && $5 != 0) || ($6 == 0 && $7 != 0)) bad("bytes without messages")
    next
}
# the Files block, then the MPI-IO block (the same columns)
insec && /^! ===== (Files|MPI-IO) =====$/ {
    if (msg && msgrows != nmsg) bad(msgrows " message rows for " nmsg " call sites")
    if (peers && peerrows != npeers) bad(peerrows " peer rows for " npeers " peers")
    if (blk && nloc != blk_n) bad("block of " blk_name " has " nloc " rows, heading says " blk_n)
    if (thr && thr != 3) bad($3 " block inside the Threads block")
    if (files && filerows != nfiles) bad(filerows " file rows for " nfiles " files")
    if (mpiio_files || ($3 == "Files" && fortran_files)) bad("a second " $3 " block")
    if ($3 == "Files") fortran_files = 1; else mpiio_files = 1
    blk = 0; thr = 0; msg = 0; peers = 0; files = 1; filerows = 0; next
}
insec && files == 1 {
    if ($3 != "Files" || !is_count($1) || $1 < 1) bad("Files figure")
    nfiles = $1 + 0; files = 2; next
}
insec && files == 2 && /^![ ]+Opens +Closes/ { next }
insec && files == 2 && !/^!/ {
    # five metadata counts, their time, reads, time, bytes, writes, time,
    # bytes, size, name
    if (NF < 14) { bad("file row"); next }
    filerows++
    for (i = 1; i <= 5; i++) if ($i !~ /^[0-9]+$/) bad("file row count " i)
    if ($7 !~ /^[0-9]+$/ || $10 !~ /^[0-9]+$/) bad("file row reads or writes")
    if (!is_time($6) || !is_time($8) || !is_time($11)) bad("file row time")
    if ($9 !~ /^(~|>=)?[0-9]+$|^-$/ || $12 !~ /^(~|>=)?[0-9]+$|^-$/) bad("file row bytes")
    if ($13 !~ /^[0-9]+$|^-$/) bad("file row size")
    if ($1 + $2 + $3 + $4 + $5 + $7 + $10 < 1) bad("a file without an operation")
    if (($7 == 0 && num($8) != 0) || ($10 == 0 && num($11) != 0)) bad("time without operations")
    if (mpiio_files && ($9 !~ /^[0-9]+$/ || $12 !~ /^[0-9]+$/)) bad("MPI-IO bytes not exact")
    if (mpiio_files) summpiio += num($6) + num($8) + num($11)
    else sumfile += num($6) + num($8) + num($11)
    next
}
# the Paths block, after every other block of the rank
insec && /^! ===== Paths =====$/ {
    if (tl) end_timeline()
    if (paths) bad("a second Paths block")
    blk = 0; thr = 0; msg = 0; peers = 0; if (files) files = 3
    paths = 1; ntrees = 0; tree_open = 0; next
}
insec && paths == 1 {
    if ($3 != "Trees" || !is_count($1) || $1 < 1) bad("Trees figure")
    trees_expected = $1 + 0; paths = 2; next
}
insec && paths == 2 && /^! Thread [0-9]+: [0-9]+ paths, [0-9]+ entries on folded paths$/ {
    end_tree()
    ntrees++; tree_open = 1; tree_thread = $3 + 0
    x = $4; tree_expected = x + 0; npath = 0
    delete pel; delete ppar; delete pcs; delete pregcnt; delete pkid
    next
}
insec && paths == 2 && /^! +Path +Parent/ { next }
insec && paths == 2 && /^! Warning: / { next }
insec && paths == 2 && !/^!/ {
    # path, parent, region, counts, elapsed, net, Est(%), (7) Fold
    if (!tree_open) { bad("a path row before its tree's heading"); next }
    if (NF != (version >= 7 ? 8 : 7)) { bad("path row"); next }
    if (version >= 7 && $8 !~ /^[-rm]$/) bad("Fold " $8)
    if (version >= 7 && $8 == "m" && ($2 == 0 || ppar[$2 + 0] != 0))
        bad("a path folded at KM_PATHS_MAX not right under an outermost path")
    kid = $2 " " $3 " " (version >= 7 && $8 == "m")
    if (kid in pkid) bad("two paths of region " $3 " under path " $2)
    pkid[kid] = 1
    npath++
    if ($1 != npath) bad("path number " $1 ", expected " npath)
    if ($2 !~ /^[0-9]+$/ || $2 + 0 >= npath) bad("parent " $2 " is not a path before it")
    if ($3 != "0" && !(($3 ~ /^[0-9]+$/ && ($3 + 0) in rowname) || ($3 ~ /^[0-9]+\.[0-9]+$/ && $3 in loccnt)))
        bad("path names no region of the tables: " $3)
    if (!is_count($4)) bad("path count")
    el = time_of($5, "path elapsed"); net = time_of($6, "path net")
    if (!le(net, el)) bad("path net > elapsed")
    check_est($7, marked($5), "path")
    pel[npath] = el; ppar[npath] = $2 + 0; pcs[$2 + 0] += el
    pregcnt[$3] += num($4)
    next
}
insec && paths == 2 { bad("unexpected line in the Paths block"); next }
insec && /^! ===== Timeline =====$/ {
    if (msg && msgrows != nmsg) bad(msgrows " message rows for " nmsg " call sites")
    if (peers && peerrows != npeers) bad(peerrows " peer rows for " npeers " peers")
    if (blk && nloc != blk_n) bad("block of " blk_name " has " nloc " rows, heading says " blk_n)
    if (thr && thr != 3) bad("Timeline block inside the Threads block")
    if (files && filerows != nfiles) bad(filerows " file rows for " nfiles " files")
    blk = 0; thr = 0; msg = 0; peers = 0; if (files) files = 3; tl = 1; tlrows = 0
    for (c = 1; c <= 4; c++) tlsum[c] = 0
    next
}
insec && tl == 1 {
    if ($3 != "Slots" || !is_count($1) || $1 < 1 || $1 > 128) bad("Slots figure")
    tlslots = $1 + 0; tl = 2; next
}
insec && tl == 2 {
    if ($3 != "Slot" || !is_time($1) || num($1) <= 0) bad("Slot width figure")
    tl = 3; next
}
insec && tl == 3 {
    if ($3 != "Origin" || !is_time($1)) bad("Origin figure")
    if (!le(num($1), fig["Total time"])) bad("Origin after the total time")
    tl = 4; next
}
insec && tl == 4 {
    if ($3 != "Routines:" || !is_count($1) || $1 > 8 || NF != 3 + $1) bad("Routines line of the Timeline")
    ntl = $1 + 0
    for (i = 4; i <= NF; i++) if (!(($i + 0) in rowname)) bad("Timeline names routine " $i)
    tl = 5; next
}
insec && tl == 5 && /^! +Slot +Computation/ { next }
insec && tl == 5 && !/^!/ {
    if (NF != 5 + ntl) { bad("timeline row"); next }
    want = tlrows == 0 ? "before" : tlrows - 1
    if ($1 != want) bad("timeline row " $1 ", expected " want)
    tlrows++
    rsum = 0
    for (i = 2; i <= NF; i++) {
        if ($i !~ /^~?[0-9]+$/) bad("timeline figure '" $i "'")
        if (i <= 5) tlsum[i - 1] += num($i)
        else rsum += num($i)
    }
    if (rsum > num($2)) bad("the routines' columns hold more than the row's computation")
    next
}
insec && /^! Warning: / { next }
insec && /^!$/ { next }
insec && blk && !/^!/ {
    # No, kind, line, elapsed, counts, Est(%), statement...
    nloc++
    loccnt[blk_no "." nloc] = num($5)
    if ($1 != nloc) bad("location number")
    if ($2 !~ /^(DO|CALL|MPI|IO|USER|OMP|OTHER)$/) bad("location kind")
    if ($3 !~ /^[0-9]+$/) bad("location line")
    el = time_of($4, "location elapsed")
    if (!le(el, rowel[blk_no])) bad("location elapsed > its routine's elapsed")
    if (!is_count($5)) bad("location count")
    check_est($6, marked($4), "location")
    next
}
insec { bad("unexpected line") }

function end_tree(   p, k) {
    if (!tree_open) return
    tree_open = 0
    if (npath != tree_expected) bad("rank " rank ": tree of thread " tree_thread " has " npath " paths, heading says " tree_expected)
    for (p = 1; p <= npath; p++)
        if (!le(pcs[p], pel[p]))
            bad(sprintf("rank %d thread %d: path %d's children take %.9e s of its %.9e s", rank, tree_thread, p, pcs[p], pel[p]))
    if (tree_thread != 0) return     # (its own total is in the Threads block)
    if (!le(pcs[0], fig["Total time"])) bad("rank " rank ": the paths take more than the total time")
    for (k in rowname)
        if ((k in pregcnt ? pregcnt[k] : 0) != rowcnt[k])
            bad("rank " rank ": routine " k "'s paths count " pregcnt[k] ", the table " rowcnt[k])
    for (k in loccnt)
        if ((k in pregcnt ? pregcnt[k] : 0) != loccnt[k])
            bad("rank " rank ": location " k "'s paths count " pregcnt[k] ", its block " loccnt[k])
}

function end_paths() {
    end_tree()
    paths = 0
    if (ntrees != trees_expected) bad("rank " rank ": " ntrees " trees, the figure says " trees_expected)
}

function end_timeline(   T, want, c, name) {
    tl = 0
    if (tlrows != tlslots + 1) bad("rank " rank ": " tlrows " timeline rows for " tlslots " slots")
    T = fig["Total time"]
    want[1] = sumnet - fig["I/O time"]; if (want[1] < 0) want[1] = 0
    want[2] = fig["MPI time"]; want[3] = fig["I/O time"]
    want[4] = T - want[1] - want[2] - want[3]
    split("computation MPI I/O other", name, " ")
    for (c = 1; c <= 4; c++)
        if (abs(tlsum[c] * 1e-9 - want[c]) > 1e-6 * T + 4e-9)
            bad(sprintf("rank %d: the timeline's %s adds up to %.9e s, the figures say %.9e s", rank, name[c], tlsum[c] * 1e-9, want[c]))
}

END {
    if (lastline != "! ===== End =====") bad("the last line is not the End line")
    if (!only && nsec != nranks) bad(nsec " sections for " nranks " ranks")
    if (only && nsec != 1) bad("rank-only file with " nsec " sections")
    if (npred) {
        if (npred != nranks) bad(npred " Prediction rows for " nranks " ranks")
        minr = pr[0]; maxt = pt[0] - ps[0] - po[0]
        maxt_scale = pt[0] + ps[0] + po[0]
        sump = 0; scale = 0
        for (p = 0; p < npred; p++) {
            if (pr[p] < minr) minr = pr[p]
            if (pt[p] - ps[p] - po[p] > maxt) {
                maxt = pt[p] - ps[p] - po[p]; maxt_scale = pt[p] + ps[p] + po[p]
            }
            sump += pp[p]
            scale += abs(pp[p]) + abs(pr[p])
            if (pt_text[p] != sec_total_text[p])
                bad("T(" p ") " pt_text[p] " != total time of rank " p " " sec_total_text[p])
            if (!near(pc[p], sec_mpi[p], sec_total[p]))
                bad("C(" p ") != MPI time of rank " p)
            if (!near(ps[p], sec_startup[p], sec_total[p]))
                bad("S(" p ") != MPI start-up time of rank " p)
            if (!near(po[p], sec_overhead[p], sec_total[p]))
                bad("O(" p ") != libkm overhead of rank " p)
            if (!le(pr[p], pt[p])) bad("R(" p ") > T(" p ")")
        }
        if (p_none) {
            if (p_t1 != "n/a" || p_su != "n/a" || p_ef != "n/a")
                bad("no prediction, but figures")
        } else {
            if (pest && !(marked(p_t1) && marked(p_su) && marked(p_ef)))
                bad("the prediction rests on estimates but is not marked")
            # the printed terms are rounded to 8 digits: scale the tolerance
            # by their magnitudes, not by the (possibly small) result
            # (T - S may be a small difference of two rounded figures)
            t1 = minr + sump
            if (!near(num(p_t1), t1, scale)) bad(sprintf("T_1pe %s, recomputed %.9e", p_t1, t1))
            su = t1 / maxt
            rel = (scale + abs(t1)) / abs(t1) + maxt_scale / maxt
            if (!near(num(p_su), su, abs(su) * rel))
                bad(sprintf("speedup %s, recomputed %.9e", p_su, su))
            if (!near(num(p_ef), su / npred, abs(su) * rel / npred))
                bad(sprintf("efficiency %s, recomputed %.9e", p_ef, su / npred))
        }
    }
    exit nbad > 0
}
