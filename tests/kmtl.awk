# kmtl.awk — what the Timeline block of each rank section of a KM_output
# file (doc/KM_output.md) shows about the routines it has columns for:
#   rank ROUTINE FACT
# one line per fact that holds:
#   before-mpi     every slot with the routine's time comes before the first
#                  slot with MPI time, or is that slot (the phases share at
#                  most the slot where one ends and the other begins)
#   after-mpi      every slot with its time is at or after the slot before
#                  the first slot with MPI time (a routine that begins
#                  just before a slot ends and calls MPI in the next has
#                  time in both)
#   several-slots  its time is in more than one slot, or fits in one: at
#                  most one slot width (how many slots a phase spans
#                  depends on how long the rest of the run took, which
#                  load changes: 4 ranks on 2 loaded cores made the MPI
#                  phase so long that the slots grew wider than the
#                  whole compute phase)
# Structure only: never a figure's size, but for that one comparison.
function num(s) { sub(/^~/, "", s); return s + 0 }
function flush(   k, name, first, last, n, s, sum) {
    if (!tl) return
    for (k = 1; k <= ntop; k++) {
        name = rname[top[k]]
        first = -1; last = -1; n = 0; sum = 0
        for (s = 0; s < nrows; s++)
            if (col[k, s] > 0) {
                if (first < 0) first = s
                last = s; n++; sum += col[k, s]
            }
        if (n == 0) continue
        if (firstmpi >= 0 && last <= firstmpi) print rank, name, "before-mpi"
        if (firstmpi >= 0 && first >= firstmpi - 1) print rank, name, "after-mpi"
        if (n > 1 || sum <= width) print rank, name, "several-slots"
    }
    tl = 0
}
/^! ===== Rank [0-9]+ =====/ { flush(); rank = $4; intable = 0; delete rname; next }
/^!     No Routine/ { intable = 1; next }
intable && /^!/ { intable = 0 }
intable && NF >= 7 { rname[$1 + 0] = $2; next }
/^! ===== Timeline =====/ { tl = 1; nrows = 0; firstmpi = -1; ntop = 0; next }
tl && /! Slot width/ { width = num($1) * 1e9; next }
tl && /! Routines:/ { ntop = $1; for (k = 1; k <= ntop; k++) top[k] = $(3 + k); next }
/^! ===== / { flush(); next }
/^!/ { next }
tl && NF >= 5 {
    s = nrows++
    if (firstmpi < 0 && num($3) > 0) firstmpi = s
    for (k = 1; k <= ntop; k++) col[k, s] = num($(5 + k))
}
END { flush() }
