/*
 * paths.h — `kmview paths`: the calling-context trees of the Paths block
 * (KM_output 6) as an indented call-path table, folded stacks for flame
 * graphs, and speedscope's JSON file format.
 */
#ifndef KV_PATHS_H
#define KV_PATHS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "support/buf.h"

#include "kmview/read/model.h"

/* The deepest level of a tree kmview shows path by path: a line of
 * folded stacks, a speedscope sample and a diff's path name are as long
 * as the path is deep, so a chain of d paths makes d^2/2 names; a path
 * deeper than this is summed into one line, sample or row under its
 * ancestor at this depth, which says so (the table, the report). */
#define KV_PATHS_DEPTH 1000

/* The regions of the frames kmview adds to a tree (a routine number
 * below -1 in struct kv_mpath and the report's trees, location -1): the
 * paths a parent holds that libkm folded at KM_PATHS_MAX (Fold m: not
 * calls the parent made), the paths deeper than KV_PATHS_DEPTH. */
enum { KV_FOLDED = -2, KV_DEEPER = -3, KV_NSPECIAL = 3 };

/* A name's mark for a path that holds deeper recursion of its region
 * (Fold r). */
#define KV_RFOLD_MARK " [recursion folded]"

/* What a folded-stack line counts: a path's own time (every region a
 * frame), a routine stack's net time (routines the only frames, as in
 * gprof: the Net of the routine table, split by stack), or a path's
 * executions. */
enum kv_paths_value { KV_PV_TIME, KV_PV_NET, KV_PV_COUNTS };

struct kv_paths_opts {
    int rank;                /* -1: the text gives statistics over ranks,
                                the folded stacks the lowest rank, the
                                speedscope file every rank */
    int thread;              /* whose tree (0: the program's thread) */
    double min;              /* the text prunes paths whose inclusive
                                time is below this fraction of the total */
    enum kv_paths_value value;
};

/* The value --value names, or -1. */
int kv_paths_value_parse(const char *word);

/* Does the run have what `o` asks for (a Paths block, the rank, a tree
 * of the thread)?  -1 with an error printed when not. */
int kv_paths_check(const struct kv_run *run, const struct kv_paths_opts *o);

/* The tree as text: one line per path, children under their parent by
 * inclusive time; with o->rank < 0 and several ranks, statistics over
 * the ranks' trees merged by path. */
void kv_paths_text(FILE *f, const struct kv_run *run,
                   const struct kv_paths_opts *o);

/* Folded stacks of one rank's tree: "A;B;C value" per path with a
 * non-zero value (flamegraph.pl, inferno, speedscope); with KV_PV_NET
 * per stack of routines. */
void kv_paths_folded(FILE *f, const struct kv_run *run,
                     const struct kv_paths_opts *o);

/* speedscope's file format: a sampled profile per rank, the weights each
 * path's own time in microseconds. */
void kv_paths_speedscope(FILE *f, const struct kv_run *run,
                         const struct kv_paths_opts *o);

/* ------------------------------------------------------------------------ */
/* Paths merged over ranks, for commands that compare them (diff, ranks)    */

/* A path of one thread's tree merged by identity over a run's live ranks
 * that have a tree of it; a list's parents come before their children. */
struct kv_mpath {
    int parent;              /* index in the list; -1: outside every region */
    int routine, location;   /* as struct kv_path has them */
    int depth;               /* 1: outside every region, 2 under such... */
    double incl;             /* inclusive time, summed over the ranks */
    double net;              /* the file's Net(s), summed over the ranks
                                (a routine's also holds its loops' and
                                I/O statements' own time) */
    double est_pct;          /* Est(%) of incl: the ranks' Est(%)
                                weighted by their elapsed time (0 when
                                incl is 0) */
    uint64_t count;          /* summed over the ranks */
    bool extrap;             /* a count included estimated executions */
    bool rfold;              /* some rank's path holds deeper recursion */
    bool est;                /* the time contains an estimate */
    bool net_est;            /* some rank's Net(s) had a ~ */
};

struct kv_ptree;            /* paths.c's merged tree */
struct kv_mpaths {
    struct kv_mpath *v;
    size_t n;
    int nranks;              /* ranks merged */
    int thread;
    struct kv_ptree *t;
};

/* Merge thread `thread`'s trees of the run's live ranks (none: m->n 0). */
void kv_paths_merge(struct kv_mpaths *m, const struct kv_run *run,
                    int thread);
void kv_mpaths_free(struct kv_mpaths *m);

/* Each rank's own time on each path of m (its inclusive time less its
 * children's, as the flame graphs have it): x[i * m->n + k] for
 * ranks[i], 0 where it lacks the path; xest the same cells, estimated.
 * Own times partition a rank's time in regions, so that distances
 * between ranks count a difference once, not once per path above it. */
void kv_paths_own_times(const struct kv_mpaths *m,
                        const struct kv_rank *const *ranks, size_t nranks,
                        double *x, bool *xest);

/* Path k of m as "MAIN > SOLVE > DO 12 > HALO": a location's routine is
 * named only where it is not the routine the path is in.  As long as the
 * path is deep: callers name paths of at most KV_PATHS_DEPTH levels. */
void kv_mpath_label(struct km_buf *b, const struct kv_run *run,
                    const struct kv_mpaths *m, size_t k);

#endif
