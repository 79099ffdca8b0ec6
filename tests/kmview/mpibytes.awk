# mpibytes.awk — the exact figures fixtures/run/mpi-bytes states (its
# `messages` and `peers` files) as the keys report-test.js reads for a
# run of np ranks (kmgen's keys: rank_peers.csv:R/P:..., rank_messages.csv:
# R/ID:..., the locations' lines and routines, the routines' names).
#
# usage: awk -v np=4 -f mpibytes.awk LOCATIONS.CSV MESSAGES PEERS
# LOCATIONS.CSV (kmview's, of that run) only names the call sites: their
# ids, routines and lines; every figure comes from the fixture.
BEGIN { FS = "," }
FILENAME == ARGV[1] {
    if (FNR > 1) {
        id[$3 " " $5] = $1
        printf "locations.csv:%s:line\t%s\nlocations.csv:%s:routine_id\t%s\n", $1, $5, $1, $2
        printf "routines.csv:%s:name\t%s\n", $2, $3
    }
    next
}
/^#/ || NF == 0 { next }
# "np=N rank=R" limits a line to rank R of a run of N ranks
{
    FS = " "
    $0 = $0
    first = 1
    only = -1
    if ($1 ~ /^np=/) {
        if (substr($1, 4) != np)
            next
        only = substr($2, 6)
        first = 3
    }
}
FILENAME == ARGV[2] {
    site = id[$first " " $(first + 2)]
    if (site == "") {
        print "mpibytes.awk: no location " $first " line " $(first + 2) > "/dev/stderr"
        exit 1
    }
    sizes = ""
    for (i = first + 6; i <= NF; i++)
        sizes = sizes (sizes == "" ? "" : " ") $i
    for (r = 0; r < np; r++) {
        if (only >= 0 && r != only)
            continue
        printf "rank_messages.csv:%d/%s:messages\t%s\n", r, site, $(first + 3)
        printf "rank_messages.csv:%d/%s:sent\t%s\n", r, site, $(first + 4)
        printf "rank_messages.csv:%d/%s:received\t%s\n", r, site, $(first + 5)
        printf "rank_messages.csv:%d/%s:sizes\t%s\n", r, site, sizes
    }
    next
}
FILENAME == ARGV[3] && only >= 0 {
    split("messages_sent bytes_sent messages_received bytes_received alltoall_messages alltoall_bytes", key, " ")
    for (k = 1; k <= 6; k++)
        printf "rank_peers.csv:%d/%s:%s\t%s\n", only, $first, key[k], $(first + k)
}
END { print "per\t1" }
