/*
 * paths.h — `kmview paths`: the calling-context trees of the Paths block
 * (KM_output 6) as an indented call-path table, folded stacks for flame
 * graphs, and speedscope's JSON file format.
 */
#ifndef KV_PATHS_H
#define KV_PATHS_H

#include <stdbool.h>
#include <stdio.h>

#include "kmview/model.h"

/* What a folded-stack line counts. */
enum kv_paths_value { KV_PV_TIME, KV_PV_COUNTS };

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
 * non-zero value (flamegraph.pl, inferno, speedscope). */
void kv_paths_folded(FILE *f, const struct kv_run *run,
                     const struct kv_paths_opts *o);

/* speedscope's file format: a sampled profile per rank, the weights each
 * path's own time in microseconds. */
void kv_paths_speedscope(FILE *f, const struct kv_run *run,
                         const struct kv_paths_opts *o);

#endif
