# kmmsg.awk — the rows of the Messages block of a KM_output file
# (doc/KM_output.md):
#   rank routine kind line messages sent received bin:messages...
# for every rank section.  Used by the tests to check exact bytes.
/^! ===== Rank [0-9]+ =====/ { rank = $4; rows = 0; next }
/^! ===== Messages =====/ { rows = 1; next }
/^! ===== / { rows = 0; next }
/^!/ { next }
rows && NF >= 8 && $1 ~ /\./ {
    s = rank " " $2 " " $3 " " $4 " " $5 " " $6 " " $7
    for (i = 8; i <= NF; i++)
        s = s " " $i
    print s
}
