/*
 * tracetext.c — kmview trace's text: per file and thread what the trace
 * holds (events, time span, the run's state, what was lost), and where
 * each thread was when its records end — the regions open, outermost
 * first, and its last events — which is what a hung or killed run's
 * trace is read for.
 *
 * With several files the threads are first grouped by where they were
 * (the same regions open, by the set's unified regions), largest group
 * first, as a hung MPI run is read: most ranks wait in one collective,
 * the odd one is elsewhere.  Past KV_TT_DETAIL files the details follow
 * only for the files that have a thread outside the largest group.
 *
 * Everything here comes from the scan (trace.c); nothing reads the file
 * again.  Must never print a figure that the trace does not hold: what
 * the reader made up (regions closed at the end) is said to be made up.
 */
#include "kmview/trace/trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "support/buf.h"

#define KV_TT_DETAIL 16          /* files shown whole, at most */

static const char *count(char buf[32], uint64_t v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRIu64, v);
    size_t n = strlen(raw), o = 0;
    for (size_t k = 0; k < n; k++) {
        if (k && (n - k) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[k];
    }
    buf[o] = '\0';
    return buf;
}

static double sec(const struct kv_trace_set *s, const struct kv_trace *t,
                  int64_t tick)
{
    return (double)kv_trace_ns(s, t, tick) * 1e-9;
}

static void print_state(FILE *f, const struct kv_trace *t)
{
    fprintf(f, "  state: %s", kv_trace_state_name(t->state));
    if (t->state == KV_TR_SIGNAL)
        fprintf(f, " %d (%s)", t->signal, strsignal(t->signal));
    if (t->state == KV_TR_RUNNING)
        fputs(" (no end recorded: the run was killed, hung, or is still "
              "running)", f);
    if (t->state == KV_TR_LIMIT || t->dropped) {
        char b[32];
        fprintf(f, "; %s events dropped past the limit of %" PRIu64 " MiB",
                count(b, t->dropped), t->limit_bytes >> 20);
    }
    fputc('\n', f);
}

static void print_blocks(FILE *f, const struct kv_trace *t)
{
    uint64_t missing = 0;
    for (size_t k = 0; k < t->nthreads; k++)
        missing += t->threads[k].missing;
    uint64_t in_file = t->present + t->unclaimed;
    fprintf(f, "  blocks: %" PRIu64 " with data", t->present);
    if (t->claimed > in_file)
        fprintf(f, "; the header claims %" PRIu64 ": the file was cut short",
                t->claimed);
    if (t->partial_block)
        fputs("; the file ends inside a block", f);
    if (missing)
        fprintf(f, "; %" PRIu64 " of a thread's blocks missing", missing);
    fputc('\n', f);
    if (t->undefined)
        fprintf(f, "  %zu region id(s) entered without a definition: named "
                "\"region N\"\n", t->undefined);
}

static void region_text(FILE *f, const struct kv_trace *t, int32_t id)
{
    char b[512];
    const struct kv_tr_region *g = kv_trace_region(t, id);
    fputs(kv_trace_region_label(t, id, b, sizeof b), f);
    if (g)
        fprintf(f, " (%s, %s:%d)", kv_trace_kind_name(g->kind),
                g->file[0] ? g->file : "?", g->line);
    else
        fputs(" (no definition)", f);
}

static void print_open(FILE *f, const struct kv_trace_set *s,
                       const struct kv_trace *t, const struct kv_tr_thread *th)
{
    if (th->nopen == 0) {
        fputs("    open at the end: none\n", f);
        return;
    }
    fprintf(f, "    open at the end, outermost first (%zu; the views close "
            "them at its last event):\n", th->nopen);
    for (size_t k = 0; k < th->nopen; k++) {
        fprintf(f, "      %*s", (int)(2 * (k < 10 ? k : 10)), "");
        region_text(f, t, th->open[k].id);
        fprintf(f, " since %.9f s\n", sec(s, t, th->open[k].tick));
    }
}

static void print_event(FILE *f, const struct kv_trace_set *s,
                        const struct kv_trace *t, const struct kv_tr_rec *e)
{
    static const char *const what[] = { "?", "enter", "leave", "sent",
                                        "received", "?", "?", "end" };
    fprintf(f, "      %.9f s  %-8s ", sec(s, t, e->tick), what[e->type]);
    if (e->type == KV_TR_ENTER || e->type == KV_TR_LEAVE)
        region_text(f, t, e->id);
    else if (e->type == KV_TR_END)
        fputs("results written", f);
    else if (e->peer < 0)
        fprintf(f, "%" PRId64 " bytes, no peer (collective, or source not "
                "known)", e->bytes);
    else
        fprintf(f, "%" PRId64 " bytes %s rank %d, tag %d", e->bytes,
                e->type == KV_TR_SENT ? "to" : "from", e->peer, e->tag);
    if ((e->type == KV_TR_SENT || e->type == KV_TR_RECEIVED) && e->comm) {
        char name[96];
        fprintf(f, ", on %s", kv_trace_comm_name(s, e->comm, name,
                                                 sizeof name));
    }
    fputc('\n', f);
}

static void print_thread(FILE *f, const struct kv_trace_set *s,
                         const struct kv_trace *t,
                         const struct kv_tr_thread *th, int last)
{
    char b[5][32];
    fprintf(f, "  thread %d: %s events (%s enters, %s leaves, %s sent, %s "
            "received)", th->thread, count(b[0], th->events),
            count(b[1], th->enters), count(b[2], th->leaves),
            count(b[3], th->sent), count(b[4], th->received));
    if (th->any)
        fprintf(f, ", %.9f .. %.9f s, nested %zu deep",
                sec(s, t, th->first_tick), sec(s, t, th->last_tick),
                th->max_depth);
    fprintf(f, "%s\n", th->ended ? "" : ", no END");
    if (th->stray_leaves)
        fprintf(f, "    %s leaves with no region open: skipped\n",
                count(b[0], th->stray_leaves));
    print_open(f, s, t, th);
    uint64_t n = th->nlast < KV_TR_LAST ? th->nlast : KV_TR_LAST;
    if ((uint64_t)last < n)
        n = (uint64_t)last;
    if (n == 0)
        return;
    fprintf(f, "    last %s:\n", n == 1 ? "event" : "events");
    for (uint64_t k = th->nlast - n; k < th->nlast; k++)
        print_event(f, s, t, &th->last[k % KV_TR_LAST]);
}

/* ------------------------------------------------------------------------ */
/* Where the threads were, grouped                                           */

/* "ranks 0-3, 7 (thread 0)" for a group's members w[0..n), which are by
 * thread, then rank. */
static void print_members(FILE *f, const struct kv_tr_where *w, size_t n)
{
    for (size_t k = 0; k < n;) {
        size_t e = k;
        while (e < n && w[e].th->thread == w[k].th->thread)
            e++;
        fprintf(f, "%s%s ", k ? "; " : "", e - k > 1 ? "ranks" : "rank");
        for (size_t i = k; i < e;) {
            size_t j = i;
            while (j + 1 < e && w[j + 1].t->proc == w[j].t->proc + 1)
                j++;
            fprintf(f, "%s%d", i > k ? "," : "", w[i].t->proc);
            if (j > i)
                fprintf(f, "-%d", w[j].t->proc);
            i = j + 1;
        }
        fprintf(f, " (thread %d)", w[k].th->thread);
        k = e;
    }
}

static void print_stack(FILE *f, const struct kv_tr_where *w)
{
    char b[512];
    if (w->th->nopen == 0) {
        fputs("      nothing open\n", f);
        return;
    }
    fputs("      ", f);
    for (size_t k = 0; k < w->th->nopen; k++)
        fprintf(f, "%s%s", k ? " > " : "",
                kv_trace_region_label(w->t, w->th->open[k].id, b, sizeof b));
    fputc('\n', f);
}

/* The groups, largest first; marks in `common` the files that have only
 * threads of the largest group. */
static void print_groups(FILE *f, const struct kv_trace_set *s, bool *common)
{
    struct kv_tr_groups g;
    kv_trace_groups(&g, s);
    fprintf(f, "where they were at the end (regions open, outermost first; "
            "%zu group%s of threads):\n", g.ngroups, g.ngroups == 1 ? "" : "s");
    for (size_t r = 0; r < g.ngroups; r++) {
        size_t k = r == 0 ? g.largest : r <= g.largest ? r - 1 : r;
        size_t n = g.start[k + 1] - g.start[k];
        fprintf(f, "  %zu thread%s: ", n, n == 1 ? "" : "s");
        print_members(f, g.w + g.start[k], n);
        fputc('\n', f);
        print_stack(f, &g.w[g.start[k]]);
    }
    kv_trace_odd_files(&g, s, common);
    for (size_t k = 0; k < s->n; k++)
        common[k] = !common[k];
    kv_trace_groups_free(&g);
}

/* The messages per communicator, when there are others than
 * MPI_COMM_WORLD. */
static void print_comms(FILE *f, const struct kv_trace_set *s)
{
    char b[3][32], name[96];
    if (s->ncomms < 2)
        return;
    for (size_t k = 0; k < s->ncomms; k++) {
        const struct kv_tr_comm *c = &s->comms[k];
        fprintf(f, "  on %s: ", kv_trace_comm_name(s, (uint32_t)k, name,
                                                  sizeof name));
        if (c->inter)
            fprintf(f, "%s without a peer (its point-to-point messages "
                    "matched with every intercommunicator's)\n",
                    count(b[0], c->collectives));
        else
            fprintf(f, "%s matched, %s without a partner, %s without a "
                    "peer\n", count(b[0], c->matched),
                    count(b[1], c->unmatched), count(b[2], c->collectives));
    }
}

void kv_trace_summary(FILE *f, struct kv_trace_set *s, int last)
{
    bool *common = km_xcalloc(s->n + 1, sizeof *common);
    char b[4][32];
    fprintf(f, "%zu trace file%s, %s events over %.9f s (CLOCK_REALTIME, "
            "from the earliest event of any file)\n", s->n,
            s->n == 1 ? "" : "s", count(b[0], s->events),
            (double)s->end_ns * 1e-9);
    fprintf(f, "messages: %s matched point-to-point, %s sent and %s "
            "received without a partner, %s without a peer (collective, or "
            "source not known)\n",
            count(b[0], s->matched), count(b[1], s->unmatched_sent),
            count(b[2], s->unmatched_received), count(b[3], s->collectives));
    print_comms(f, s);
    if (s->n > 1)
        print_groups(f, s, common);
    bool some = s->n > KV_TT_DETAIL;
    if (some)
        fprintf(f, "(more than %d files: the details of those with a thread "
                "outside the largest group only)\n", KV_TT_DETAIL);
    for (size_t k = 0; k < s->n; k++) {
        const struct kv_trace *t = &s->t[k];
        if (some && common[k])
            continue;
        fprintf(f, "\n%s: ", t->path);
        if (t->rank >= 0)
            fprintf(f, "rank %d of %d", t->rank, t->nranks);
        else
            fputs("rank not known", f);
        fprintf(f, ", pid %" PRId64 ", %s, clock %s\n", t->pid,
                t->program[0] ? t->program : "?",
                t->clock[0] ? t->clock : "?");
        print_state(f, t);
        print_blocks(f, t);
        for (size_t j = 0; j < t->nthreads; j++)
            print_thread(f, s, t, &t->threads[j], last);
    }
    free(common);
}
