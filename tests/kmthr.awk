# kmthr.awk — the region rows of the Threads block of a KM_output file
# (doc/KM_output.md):
#   rank routine kind line threads count
# for every rank section, a leading + removed from extrapolated counts
# (kind ROUT for a routine).  Used by the tests to check exact counts.
/^! ===== Rank [0-9]+ =====/ { rank = $4; rows = 0; next }
/^! Regions run by threads other than 0/ { rows = 1; next }
/^! ===== / { rows = 0; next }
/^!/ { next }
rows && NF >= 10 {
    count = $6
    sub(/^\+/, "", count)
    print rank, $2, $3, $4, $5, count
}
