# kmfile.awk — the rows of the Files block of a KM_output file
# (doc/KM_output.md), times left out:
#   rank file opens closes inquires seeks flushes reads read-bytes writes
#   write-bytes size
# for every rank section (a file's name is the rest of its row); with
# -v block=MPI-IO the rows of the MPI-IO block instead.
/^! ===== Rank [0-9]+ =====/ { rank = $4; rows = 0; next }
BEGIN { if (block == "") block = "Files" }
$0 == "! ===== " block " =====" { rows = 1; next }
/^! ===== / { rows = 0; next }
/^!/ { next }
rows && NF >= 14 {
    name = $14
    for (i = 15; i <= NF; i++)
        name = name " " $i
    print rank, name, $1, $2, $3, $4, $5, $7, $9, $10, $12, $13
}
