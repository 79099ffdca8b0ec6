# check_output.awk — everything a KM_output file (doc/KM_output.md) must
# satisfy whatever the timings were:
#   awk -v exact=1 -f check_output.awk KM_output.NNN
# Structure: first and last lines, header lines, sections in rank order, the
# twelve header figures in order, table rows numbered, location blocks
# matching the table.  Arithmetic, up to the rounding of printed figures:
# the Total row and the header figures are the sums of their columns,
# 0 <= net <= elapsed (where no count is extrapolated), cost total = reads * cost, the Prediction section recomputed from
# its rows, T(p) equal to rank p's total time, C(p) <= its MPI time; with
# exact=1, total = sum of net + outside + unmeasured callees in every
# section without extrapolated ('+') counts.
# Prints one line per problem; exit status 1 if any.

function bad(msg) {
    printf "%s:%d: %s\n    %s\n", FILENAME, FNR, msg, $0
    nbad++
}
function abs(x) { return x < 0 ? -x : x }
# equal up to the rounding of 8-digit figures, relative to `scale`
function near(a, b, scale) { return abs(a - b) <= 1e-6 * abs(scale) + 1e-15 }
function num(s) { sub(/^\+/, "", s); return s + 0 }

function end_section() {
    if (!insec)
        return
    insec = 0
    if (nfig != 12)
        bad("rank " rank ": " nfig " header figures, expected 12")
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
    if (!near(fig["Time get function cost (Total)"],
              fig["Counts of time get function"] * fig["Time get function cost(1 call)"],
              fig["Time get function cost (Total)"]))
        bad("rank " rank ": time get function cost (Total) != reads * cost")
    if (exact && !plus) {
        rhs = sumnet + fig["Time outside routines"] + fig["Time in unmeasured callees"]
        if (!near(T, rhs, T))
            bad(sprintf("rank %d: total %.9e != net %.9e + outside + unmeasured = %.9e",
                        rank, T, sumnet, rhs))
    }
    if (nblocks_expected != nblocks)
        bad("rank " rank ": " nblocks " location blocks")
    sec_total[rank] = fig["Total time"]
    sec_total_text[rank] = total_text
    sec_mpi[rank] = fig["MPI time"]
    if (blk && nloc != blk_n)
        bad("rank " rank ": block of " blk_name " has " nloc " rows, heading says " blk_n)
    blk = 0
}

BEGIN {
    npred = 0; nsec = 0; nbad = 0
    split("Processors and Rank|Total time|Counts of routines|" \
          "Counts of time get function|Time get function cost(1 call)|" \
          "Time get function cost (Total)|Output counts by KM_writ|MPI time|" \
          "I/O time|Time outside routines|Time in unmeasured callees|Routines",
          fignames, "|")
}

FNR == 1 && $0 != "! kmtool KM_output 1" { bad("first line") }
FNR == 2 && $0 !~ /^! Program    : ./ { bad("Program line") }
FNR == 3 && $0 !~ /^! Started    : [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/ { bad("Started line") }
FNR == 4 && $0 !~ /^! Written at : (END|STOP|EXIT|MPI_FINALIZE|PRINT_OUT|exit|signal [0-9]+)$/ { bad("Written at line") }
FNR == 5 && $0 !~ /^! Clock      : ./ { bad("Clock line") }
FNR == 6 {
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
pred && /^!/ { next }
pred && /! Predicted one-PE time T_1pe$/ { p_t1 = $1; next }
pred && /! Predicted speedup$/ { p_su = $1; next }
pred && /! Predicted parallel efficiency$/ { p_ef = $1; next }
pred {
    if (NF != 5 || $1 != npred) { bad("Prediction row " npred); next }
    pt[npred] = $2; pt_text[npred] = $2; pc[npred] = $3; pr[npred] = $4; pp[npred] = $5
    if (!near(pp[npred], pt[npred] - pc[npred] - pr[npred], pt[npred]))
        bad("P != T - C - R")
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
    blk = 0; netbad = ""; delete fig; delete rowname
    next
}
/^! ===== End =====$/ { end_section(); ended = 1; next }
ended { bad("text after the End line") }

insec && nfig < 12 {
    if (/^!/) { bad("comment among the header figures"); next }
    i = index($0, "! ")
    name = i ? substr($0, i + 2) : ""
    if (name != fignames[nfig + 1]) bad("figure " nfig + 1 " is '" name "'")
    fig[name] = $1
    if (nfig == 0) {
        if ($1 != sprintf("%04d", nranks) || $2 != rank)
            bad("Processors and Rank")
    } else if (nfig == 1) {
        total_text = $1
    }
    nfig++
    next
}
insec && /^![ ]+No Routine/ { tab = 1; next }
insec && tab && /^![ ]+Total / {
    tab = 0; total_seen = 1
    # "!", "Total", net, counts, MPI, IO
    if (!near($3, sumnet, fig["Total time"])) bad("Total net")
    if (num($4) != sumcnt) bad("Total counts")
    if (($4 ~ /^\+/) != (plus > 0)) bad("Total counts '+'")
    if (!near($5, summpi, fig["Total time"])) bad("Total MPI")
    if (!near($6, sumio, fig["Total time"])) bad("Total IO")
    if (!plus && netbad != "") { printf "%s", netbad; nbad++ }
    next
}
insec && tab {
    if (NF != 7 || $1 != nrows + 1) { bad("routine row"); next }
    nrows++
    rowname[nrows] = $2
    # an extrapolated callee's mean can exceed what its caller measured
    if ($4 > $3 + 1e-6 * $3 + 1e-15 || $4 < 0)
        netbad = netbad FILENAME ":" FNR ": net outside 0 .. elapsed\n    " $0 "\n"
    if ($3 < 0 || $6 < 0 || $7 < 0) bad("negative time")
    if ($6 > $3 + 1e-6 * $3 + 1e-15 || $7 > $3 + 1e-6 * $3 + 1e-15)
        bad("MPI or IO time > elapsed")
    if ($5 ~ /^\+/) plus++
    sumcnt += num($5); sumnet += $4; summpi += $6; sumio += $7
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
insec && /^! Warning: / { next }
insec && /^!$/ { next }
insec && blk && !/^!/ {
    nloc++
    if ($1 != nloc) bad("location number")
    if ($2 !~ /^(DO|CALL|MPI|IO|USER|OTHER)$/) bad("location kind")
    if ($3 !~ /^[0-9]+$/) bad("location line")
    if ($4 < 0) bad("negative time")
    if ($5 !~ /^\+?[0-9]+$/) bad("location count")
    next
}
insec { bad("unexpected line") }

END {
    if (lastline != "! ===== End =====") bad("the last line is not the End line")
    if (!only && nsec != nranks) bad(nsec " sections for " nranks " ranks")
    if (only && nsec != 1) bad("rank-only file with " nsec " sections")
    if (npred) {
        if (npred != nranks) bad(npred " Prediction rows for " nranks " ranks")
        minr = pr[0]; maxt = pt[0]; sump = 0; scale = 0
        for (p = 0; p < npred; p++) {
            if (pr[p] < minr) minr = pr[p]
            if (pt[p] > maxt) maxt = pt[p]
            sump += pp[p]
            scale += abs(pp[p]) + abs(pr[p])
            if (pt_text[p] != sec_total_text[p])
                bad("T(" p ") " pt_text[p] " != total time of rank " p " " sec_total_text[p])
            if (pc[p] > sec_mpi[p] * (1 + 1e-6) + 1e-15)
                bad("C(" p ") > MPI time of rank " p)
            if (pr[p] > pt[p] * (1 + 1e-6)) bad("R(" p ") > T(" p ")")
        }
        # the printed terms are rounded to 8 digits: scale the tolerance
        # by their magnitudes, not by the (possibly small) result
        t1 = minr + sump
        if (!near(p_t1, t1, scale)) bad(sprintf("T_1pe %s, recomputed %.9e", p_t1, t1))
        su = t1 / maxt
        if (!near(p_su, su, scale / maxt + abs(su)))
            bad(sprintf("speedup %s, recomputed %.9e", p_su, su))
        if (!near(p_ef, su / npred, (scale / maxt + abs(su)) / npred))
            bad(sprintf("efficiency %s, recomputed %.9e", p_ef, su / npred))
    }
    exit nbad > 0
}
