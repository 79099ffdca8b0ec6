# summary-got.awk — kmview's terminal summary (several ranks) as the
# normalised lines summary-expect.awk writes.
/^Header figures/ { sec = "fig"; next }
/^Where the time goes/ { sec = "share"; next }
/^Prediction/ { sec = "pred"; next }
/^Threads \(/ { sec = "threads"; next }
/^Top .* regions threads other than 0 ran/ { sec = "tregion"; next }
/^Top / { sec = "routine"; next }
/^Warnings/ || /^~/ || /^Est:/ { sec = ""; next }
/^$/ { next }
sec == "fig" {
    label = ""
    for (i = 1; i <= NF - 4; i++) label = label (i > 1 ? " " : "") $i
    key = tolower(label)
    sub(/ \(s\)$/, "", key)
    gsub(/[^a-z0-9]+/, "_", key); sub(/_$/, "", key)
    if (key == "i_o_time") key = "io_time"
    if (key == "mpi_start_up_time") key = "mpi_startup_time"
    print "figure", key, $(NF - 3), $(NF - 2), $(NF - 1), $NF
}
sec == "share" && $1 ~ /^\(/ { sec = ""; next }
sec == "share" {
    label = ""
    for (i = 1; i <= NF - 2; i++) label = label (i > 1 ? " " : "") $i
    print "share", label, $(NF - 1), $NF
}
sec == "pred" && $1 == "n/a:" { print "pred n/a" }
sec == "pred" && $1 == "T_1pe" { print "pred T_1pe", $(NF - 1) }
sec == "pred" && ($1 == "Speedup" || $1 == "Efficiency") { print "pred", $1, $NF }
sec == "pred" && $1 ~ /^[0-9]+$/ {
    line = "predrow"
    for (i = 1; i <= NF; i++) line = line " " $i
    print line
}
sec == "pred" && NF == 4 && $1 ~ /^(Total|Start-up|MPI|Redundant|Overhead|Waited|Parallel)$/ {
    key = tolower($1); sub(/-/, "", key)
    print "predspread", key, $2, $3, $4
}
sec == "routine" && $1 ~ /^[0-9]+$/ {
    print "routine", $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13
}
sec == "threads" && $1 ~ /^[0-9]+$/ {
    print "threads", $1, $2, $3, $4, $5, $6, $7
}
sec == "tregion" && NF >= 9 && $1 != "Routine" && $1 !~ /^\(/ {
    line = "tregion"
    for (i = 1; i <= NF; i++) line = line " " $i
    print line
}
