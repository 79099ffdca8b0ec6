# kmpeer.awk — the rows of the Peers block of a KM_output file
# (doc/KM_output.md):
#   rank peer sent-messages sent-bytes received-messages received-bytes
#   alltoall-messages alltoall-bytes
# for every rank section: its row of the communication matrix.
/^! ===== Rank [0-9]+ =====/ { rank = $4; rows = 0; next }
/^! ===== Peers =====/ { rows = 1; next }
/^! ===== / { rows = 0; next }
/^!/ { next }
rows && NF == 7 { print rank, $1, $2, $3, $4, $5, $6, $7 }
