# kmpaths.awk — the paths of every thread's tree in every rank section of
# a KM_output file (doc/KM_output.md, "Paths block"):
#   rank path count                 (thread 0)
#   rank thread=T path count        (the other threads)
# a path its regions from the outermost, joined by ';': a routine by its
# name, a location as ROUTINE:KIND:LINE; a leading + removed from the
# count.  Used by the tests to check the call paths, exactly.
/^! ===== Rank [0-9]+ =====/ { rank = $4; tab = 0; blk = 0; inpaths = 0
                               delete name; delete loc; delete path; next }
/^! ===== Paths =====/ { inpaths = 1; tree = -1; next }
/^! ===== / { inpaths = 0; tab = 0; blk = 0; next }
/^![ ]+No Routine/ { tab = 1; next }
tab && /^![ ]+Total / { tab = 0; next }
tab && !/^!/ { name[$1] = $2; next }
/^! Routine [0-9]+ / { blk = $3 + 0; nloc = 0; next }
blk && !/^!/ && $1 ~ /^[0-9]+$/ { loc[blk "." $1] = name[blk] ":" $2 ":" $3; next }
inpaths && /^! Thread [0-9]+:/ { tree = $3 + 0; next }
inpaths && tree >= 0 && !/^!/ && NF >= 7 {
    r = $3
    label = r in name ? name[r] : r in loc ? loc[r] : "?" r
    path[$1] = $2 == 0 ? label : path[$2] ";" label
    count = $4
    sub(/^\+/, "", count)
    if (tree == 0)
        print rank, path[$1], count
    else
        print rank, "thread=" tree, path[$1], count
}
