#!/bin/sh
# mpi.sh — an MPI program (mpi.f) on 1, 2, 4 and 16 ranks (oversubscribed
# as needed): one KM_output.000
# (the rank-only files its PRINT_OUT routine wrote while MPI ran are gone,
# nothing is written after MPI_FINALIZE), one section per rank in rank
# order, exact counts on every rank, a Prediction section consistent with
# the sections (recomputed by check_output.awk), whose redundant time holds
# the region mpi.f declares redundant; on 2 ranks, one trace file per rank.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$MPIF77"
need "$MPIRUN"
grep -q 'define KM_HAVE_MPI 1' "$top_builddir/config.h" 2>/dev/null ||
    skip "libkm.a was built without MPI (no mpi.h at configure time)"

limit=
command -v timeout > /dev/null 2>&1 && limit="timeout 300"

$MPIF77 -o prog "$FIX/mpi.f" "$MPIGLUE" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build mpi.f with $MPIF77: $(cat build.log)"; finish; }

# libkm's own messages must never count as the program's MPI calls, nor be
# seen by another MPI tool: it calls MPI through the profiling names only.
if command -v nm > /dev/null 2>&1; then
    own=$(nm -u "$LIBKM" 2> /dev/null | awk '$1 == "U" && $2 ~ /^MPI_/ { print $2 }' | sort -u | tr '\n' ' ')
    expect "MPI functions libkm calls by their MPI_ names" "$own" ""
fi

for np in 1 2 4 16; do
    mkdir np$np && cd np$np || exit 1
    # on 2 ranks, with a trace per rank (KM_trace.000.<rank>)
    trace=0
    [ $np = 2 ] && trace=1
    KM_TRACE_FILE_NUMBER=$trace $limit $MPIRUN $MPIRUN_FLAGS -np $np ../prog > out 2> err ||
        fail "$np ranks: mpirun exited with status $?: $(tail -5 err)"
    expect "$np ranks: standard output" "$(cat out)" \
        "$(awk -v n=$np 'BEGIN { printf "%12.1f", n * (n - 1) / 2 + 5 * n }')"
    grep kmtool err && fail "$np ranks: libkm complained"
    only_outputs KM_output.000
    f=KM_output.000
    check $f
    if [ $np = 2 ]; then
        for r in 0 1; do
            # (the header's rank and ranks, and state 2: results written)
            expect "trace of rank $r" "$(od -An -t d4 -j 32 -N 8 KM_trace.000.$r 2> /dev/null | tr -s ' ')" " $r 2"
            expect "trace of rank $r: state" "$(od -An -t d4 -j 80 -N 4 KM_trace.000.$r 2> /dev/null | tr -d ' ')" 2
        done
    else
        ls KM_trace* > /dev/null 2>&1 && fail "$np ranks: a trace without being asked"
    fi
    expect "$np ranks: Written at" "$(sed -n 4p $f)" "! Written at : MPI_FINALIZE"
    expect "$np ranks: Ranks" "$(grep "^! Ranks      :" $f)" "! Ranks      : $np"
    expect "$np ranks: section order" \
        "$(grep '^! ===== ' $f | tr '\n' ' ')" \
        "! ===== Prediction ===== $(r=0; while [ $r -lt $np ]; do printf '! ===== Rank %d ===== ! ===== Timeline ===== ! ===== Paths ===== ' $r; r=$((r + 1)); done)! ===== End ===== "
    r=0
    while [ $r -lt $np ]; do
        expect "rank $r: Processors and Rank" \
            "$(grep -n '! Processors and Rank' $f | sed -n "$((r + 1))p" | sed 's/^[0-9]*://' | awk '{print $1, $2}')" \
            "$(printf '%04d %d' $np $r)"
        expect "rank $r: Output counts by KM_writ" "$(figure $f $r 'Output counts by KM_writ')" 2
        for rc in PMAIN:1 WORK:5 PRNT:1; do
            expect "rank $r: count of ${rc%:*}" "$(routine $f $r ${rc%:*} 5)" "${rc#*:}"
        done
        for lc in MPI:10:1 MPI:11:1 USER:12:1 DO:13:1 MPI:15:5 MPI:20:1; do
            l=${lc#*:}
            expect "rank $r: count of PMAIN's $lc" \
                "$(location $f $r PMAIN ${lc%%:*} ${l%:*} 5)" "${l#*:}"
        done
        expect "rank $r: count of the barrier" "$(location $f $r WORK MPI 47 5)" 5
        expect "rank $r: WORK's MPI time" "$(routine $f $r WORK 6)" \
            "$(location $f $r WORK MPI 47 4)"
        red=$(awk -v r=$r '/^! ===== Prediction/ { p = 1; next }
                           /^! ===== Rank/ { p = 0 }
                           p && !/^!/ && NF == 8 && $1 == r { print $5 }' $f)
        user=$(location $f $r PMAIN USER 12 4)
        awk -v red="$red" -v u="$user" 'BEGIN { exit !(red >= u * (1 - 1e-6)) }' ||
            fail "rank $r: redundant time $red < the declared region's $user"
        r=$((r + 1))
    done
    cd .. || exit 1
done

# Two traced jobs of 2 ranks in one directory, the second started 0.5 s
# after the first: a trace of its own for every rank of both (the second
# truncated the first's files under it, which died of SIGBUS: mpirun's
# status 135), each whole, its header's rank that of its name.
mkdir twice && cd twice || exit 1
KM_TRACE_FILE_NUMBER=1 $limit $MPIRUN $MPIRUN_FLAGS -np 2 ../prog > out.1 2> err.1 &
first=$!
sleep 0.5
KM_TRACE_FILE_NUMBER=1 $limit $MPIRUN $MPIRUN_FLAGS -np 2 ../prog > out.2 2> err.2 &
second=$!
wait $first
s1=$?
wait $second
expect "two traced jobs: their exit statuses" "$s1 $?" "0 0"
expect "two traced jobs: four traces" "$(ls KM_trace* | tr '\n' ' ')" \
    "KM_trace.000.0 KM_trace.000.1 KM_trace.001.0 KM_trace.001.1 "
for t in KM_trace.00[01].[01]; do
    expect "two traced jobs: $t's rank, ranks and state" \
        "$(od -An -t d4 -j 32 -N 8 $t | tr -s ' ') $(od -An -t d4 -j 80 -N 4 $t | tr -d ' ')" \
        " ${t##*.} 2 2"
done
cd .. || exit 1
finish
