/*
 * messages.h — what the MPI call sites moved (the Messages blocks of
 * format 4): summed over the ranks for the terminal summary.
 */
#ifndef KV_MESSAGES_H
#define KV_MESSAGES_H

#include <stdio.h>

#include "kmview/stats.h"

/* The call sites that moved the most bytes over all ranks, `top` of them
 * (0: all); nothing when no rank recorded a message. */
void kv_summary_messages(FILE *f, const struct kv_stats *st, int top);

#endif
