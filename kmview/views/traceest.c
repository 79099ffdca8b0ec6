/*
 * traceest.c — kmview trace --estimate: how large the trace of a run
 * would be, from the KM_output of a run made without one (doc/KM_trace.md,
 * "Size"): 32 bytes per region entered and left (an ENTER and a LEAVE
 * record) and per message (a SENT or RECEIVED with its slot), in blocks
 * of 256 KiB of which each thread fills its own (one CLOCK record
 * opens each), plus the header block; against the limit libkm stops at
 * (KM_TRACE_LIMIT, MiB per process).
 *
 * The counts are the KM_output's, which are exact even where the times
 * are extrapolated.  Must never read a trace, or print a rank per line
 * past the largest few.
 */
#include "kmview/views/traceest.h"

#include <inttypes.h>
#include <stdlib.h>

#include "kmview/read/model.h"
#include "support/buf.h"

#define BLOCK 262144u
#define PER_BLOCK ((BLOCK - 16 - 32) / 32)   /* enter+leave pairs a block holds */

struct est { int rank; uint64_t events, bytes; };

static uint64_t rank_events(const struct kv_rank *r, uint64_t *messages)
{
    uint64_t n = 0;
    for (size_t k = 0; k < r->nrc; k++)
        n += r->rc[k].count;
    for (size_t k = 0; k < r->nlc; k++)
        n += r->lc[k].count;
    *messages = 0;
    for (size_t k = 0; k < r->nmsgs; k++)
        *messages += r->msgs[k].messages;
    return n;
}

static uint64_t rank_bytes(const struct kv_rank *r, uint64_t pairs,
                           uint64_t messages)
{
    uint64_t threads = r->nthreads ? r->nthreads : 1;
    uint64_t blocks = (pairs + messages + PER_BLOCK - 1) / PER_BLOCK;
    return (uint64_t)BLOCK * (1 + blocks + threads - (blocks ? 1 : 0));
}

static int by_bytes(const void *a, const void *b)
{
    const struct est *x = a, *y = b;
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

static const char *mib(char b[32], uint64_t bytes)
{
    snprintf(b, 32, "%.1f MiB", (double)bytes / 1048576.0);
    return b;
}

void kv_trace_estimate(FILE *f, const struct kv_run *run, uint64_t limit)
{
    struct est *e = km_xcalloc(run->nsections + 1, sizeof *e);
    uint64_t total = 0, over = 0, events = 0;
    size_t n = 0;
    for (size_t k = 0; k < run->nsections; k++) {
        const struct kv_rank *r = &run->ranks[k];
        if (r->lost)
            continue;
        uint64_t messages, pairs = rank_events(r, &messages);
        e[n].rank = r->rank;
        e[n].events = 2 * pairs + messages;
        e[n].bytes = rank_bytes(r, pairs, messages);
        total += e[n].bytes;
        events += e[n].events;
        over += e[n].bytes > limit;
        n++;
    }
    qsort(e, n, sizeof *e, by_bytes);
    char b[2][32];
    fprintf(f, "A trace of this run (TRACE_FILE_NUMBER > 0, every measured "
            "region): %" PRIu64 " events, %s in %zu file%s\n", events,
            mib(b[0], total), n, n == 1 ? "" : "s");
    for (size_t k = 0; k < n && k < 10; k++)
        fprintf(f, "  rank %d: %" PRIu64 " events, %s%s\n", e[k].rank,
                e[k].events, mib(b[0], e[k].bytes),
                e[k].bytes > limit ? ": over the limit" : "");
    if (n > 10)
        fprintf(f, "  (the %zu largest of %zu ranks)\n", (size_t)10, n);
    if (over)
        fprintf(f, "%" PRIu64 " rank%s would stop at the limit of %s "
                "(KM_TRACE_LIMIT, MiB per process) and drop the events "
                "past it\n", over, over == 1 ? "" : "s", mib(b[1], limit));
    else
        fprintf(f, "Within the limit of %s per process (KM_TRACE_LIMIT)\n",
                mib(b[1], limit));
    free(e);
}
