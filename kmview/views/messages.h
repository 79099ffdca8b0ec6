/*
 * messages.h — what the MPI call sites moved (the Messages blocks of
 * format 4): summed over the ranks for the terminal summary (and the
 * HTML report).
 */
#ifndef KV_MESSAGES_H
#define KV_MESSAGES_H

#include <stdio.h>

#include "kmview/figures/stats.h"

/* One MPI call site over the ranks. */
struct kv_msg_site {
    int location;            /* index into run->locations */
    int ranks;               /* ranks whose Messages block names it */
    uint64_t messages, sent, received;
    uint64_t bins[KV_MSG_BINS];
};

/* The call sites some rank recorded a message at, the most bytes (sent
 * and received) first: *n of them at the start of the array returned
 * (caller frees; it holds every location). */
struct kv_msg_site *kv_msg_sites(const struct kv_run *run, size_t *n);

/* A size in bytes as a person reads it: "80 B", "1.5 KiB", "12.0 MiB"... */
const char *kv_bytes_text(char buf[32], uint64_t v);

/* The call sites that moved the most bytes over all ranks, `top` of them
 * (0: all); nothing when no rank recorded a message. */
void kv_summary_messages(FILE *f, const struct kv_stats *st, int top);

/* The communication matrix, point-to-point and all-to-all apart: pairs,
 * peers per rank, and the matrix of bytes sent (up to 16 ranks) or the
 * `top` pairs that sent the most. */
void kv_summary_peers(FILE *f, const struct kv_stats *st, int top);

#endif
