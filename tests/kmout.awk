# kmout.awk — the routine rows of a KM_output file (doc/KM_output.md):
#   rank name count elapsed net mpi
# for every rank section, the marks of estimates ('+', '~') removed.  Used
# by the tests to check exact counts.
/^! ===== Rank [0-9]+ =====/ { rank = $4; table = 0; next }
/^! ===== / { table = 0; next }
/^!.*Routine.*Elapsed/ { table = 1; next }
/^!/ { if (table && $2 == "Total") table = 0; next }
table && NF >= 6 && $1 ~ /^[0-9]+$/ {
    count = $5
    sub(/^\+/, "", count)
    for (i = 3; i <= 6; i++)
        sub(/^~/, "", $i)
    print rank, $2, count, $3, $4, $6
}
