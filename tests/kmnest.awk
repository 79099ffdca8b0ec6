# kmnest.awk — no region takes longer than the region it is always
# entered inside (doc/KM_output.md, "Rank section"):
#   awk -f kmnest.awk kmcheck.nest.* KM_output.NNN
# The kmcheck.nest files (tests/kmcheck.c) hold "CHILD|PARENT" lines, one
# file per process; a pair counts when every file that names the child
# gives it the same parent.  In every rank section of KM_output, the
# child's elapsed time must not exceed the parent's (up to the rounding of
# printed figures).  Prints one line per violation; exit status 1 if any.

function time_of(s) { sub(/^~/, "", s); return s + 0 }
function check_section(   c) {
    for (c in parent) {
        if (bad_pair[c] || !(c in el) || !(parent[c] in el))
            continue
        npairs++
        if (el[c] > el[parent[c]] * (1 + 1e-6) + 1e-15) {
            printf "%s: rank %s: %s (%s s) takes longer than %s (%s s) around it\n",
                   FILENAME, rank, c, el[c], parent[c], el[parent[c]]
            nbad++
        }
    }
    delete el
}

FILENAME ~ /kmcheck\.nest/ {
    split($0, kv, "|")
    if (kv[1] in parent && parent[kv[1]] != kv[2])
        bad_pair[kv[1]] = 1
    if (!(kv[1] in parent))
        nnamed++
    parent[kv[1]] = kv[2]
    next
}
/^! ===== Rank [0-9]+ =====/ { if (insec) check_section(); insec = 1; rank = $4; table = 0; routine = ""; next }
/^! ===== End/ { if (insec) check_section(); insec = 0; next }
/^! Routine [0-9]+ / { routine = $4; sub(/,$/, "", routine); table = 0; next }
/^!.*No Routine/ { table = 1; next }
/^!/ { if ($2 == "Total") table = 0; next }
insec && table && $1 ~ /^[0-9]+$/ { el["R " $2] = time_of($3); next }
insec && routine != "" && $1 ~ /^[0-9]+$/ { el["L " routine " " $2 " " $3] = time_of($4) }
END {
    if (npairs == 0 && nnamed > 0)
        print "kmnest.awk: no pair of regions found in " FILENAME
    exit nbad > 0
}
