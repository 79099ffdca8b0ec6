# kmloc.awk — the location rows of a KM_output file (doc/KM_output.md):
#   rank routine kind line count
# for every rank section, a leading + removed from extrapolated counts.
# Used by the tests to check which locations are measured, exactly.
/^! ===== Rank [0-9]+ =====/ { rank = $4; routine = ""; next }
/^! ===== / { routine = ""; next }
/^! Routine [0-9]+ / { routine = $4; sub(/,$/, "", routine); next }
/^!/ { next }
routine != "" && NF >= 5 && $1 ~ /^[0-9]+$/ && $2 ~ /^[A-Z]+$/ {
    count = $5
    sub(/^\+/, "", count)
    print rank, routine, $2, $3, count
}
