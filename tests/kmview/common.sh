# common.sh — what the kmview tests share (sourced after tests/lib.sh).
KMVIEW="$top_builddir/kmview/kmview"
KMGEN="$top_builddir/tests/kmview/kmgen"
KMVIEW_CSVS="run.csv figures.csv rank_figures.csv prediction.csv routines.csv
locations.csv rank_routines.csv rank_locations.csv warnings.csv rank_threads.csv
rank_thread_routines.csv rank_thread_locations.csv rank_messages.csv rank_peers.csv"

kmview() { "$KMVIEW" "$@"; }
kmgen() { "$KMGEN" "$@"; }

# Flatten kmview's CSV directory DIR and JSON file J into "key<TAB>value".
flatten_exports() {
    # shellcheck disable=SC2086
    kmgen flatten-json "$2" && kmgen flatten-csv "$1" $KMVIEW_CSVS
}
