/*
 * tracejson.c — kmview trace --json: the trace as Trace Event JSON, the
 * format chrome://tracing and Perfetto open.
 *
 * Ranks are processes (pid = rank, named "rank N"), libkm's threads are
 * threads (named "thread N"), every region is one complete event ("ph":
 * "X", ts and dur in microseconds with three decimals: ns exactly, so a
 * child lies inside its parent as the trace has it), its name the
 * routine's or "KIND line L in ROUTINE", its category the region's kind,
 * its args the source file and line, and what moved inside it (bytes
 * sent and received, point-to-point and collective, and the
 * communicator when it is not MPI_COMM_WORLD: "comm": "communicator 1
 * (4 ranks)", as on a flow's args).  A point-to-point
 * message is a flow: "ph":"s" at the sender's SENT, "ph":"f" with "bp":
 * "e" at the receiver's RECEIVED, sharing the id trace.c matched them by.
 * libkm writes a message's record right after its call's LEAVE, so a
 * region is written when the next event that is not its message comes
 * (its bytes known by then), and the flow is put at the call's last ns,
 * inside its slice, where a viewer binds it.
 * Regions open at a thread's end are closed at its last event and carry
 * "closed_at_end": true.
 *
 * Events are written as the reader gives them, a region when it is left
 * (the format does not ask for an order), so nothing is held but the open
 * regions and each region's name, written once as a ready fragment.
 * Must never write a number the format cannot read (no NaN).
 */
#include "kmview/trace/trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "support/buf.h"

struct acc {
    int64_t sent, received, coll_sent, coll_received;
    uint32_t comm;           /* the set's communicator of its messages */
};

struct jctx {
    FILE *f;
    const struct kv_trace_set *s;
    /* the region last left, written when what follows it is not its own
     * message */
    bool pending;
    struct kv_tr_event pend;
    struct acc pend_acc;
    const struct kv_trace *pend_t;
    const struct kv_tr_thread *pend_th;
    char **frag;             /* per region id: "name":..,"cat":..,"args":{.. */
    size_t nfrag;
    struct acc *stack;
    size_t depth, cap;
    bool first;
};

/* ,"comm":"communicator 1 (4 ranks)" for a communicator not
 * MPI_COMM_WORLD. */
static void comm_arg(struct jctx *j, uint32_t comm)
{
    char name[96];
    if (!comm)
        return;
    fputs(",\"comm\":", j->f);
    kv_json_str(j->f, kv_trace_comm_name(j->s, comm, name, sizeof name));
}

/* ns as microseconds with three decimals, into b; its length. */
static int put_us(char *b, int64_t ns)
{
    char tmp[24];
    int n = 0, len = 0;
    int64_t us = ns / 1000, frac = ns % 1000;
    do { tmp[n++] = (char)('0' + us % 10); us /= 10; } while (us);
    while (n)
        b[len++] = tmp[--n];
    b[len++] = '.';
    b[len++] = (char)('0' + frac / 100);
    b[len++] = (char)('0' + frac / 10 % 10);
    b[len++] = (char)('0' + frac % 10);
    return len;
}

static void sep(struct jctx *j)
{
    fputs(j->first ? "\n" : ",\n", j->f);
    j->first = false;
}

/* The name, category and start of args of region id, made once. */
static const char *fragment(struct jctx *j, const struct kv_trace *t,
                            int32_t id)
{
    if ((size_t)id >= j->nfrag) {
        size_t old = j->nfrag;
        j->nfrag = (size_t)id + 1 > 2 * old ? (size_t)id + 1 : 2 * old;
        j->frag = km_xrealloc(j->frag, j->nfrag * sizeof *j->frag);
        memset(j->frag + old, 0, (j->nfrag - old) * sizeof *j->frag);
    }
    if (j->frag[id])
        return j->frag[id];
    char label[512];
    const struct kv_tr_region *g = kv_trace_region(t, id);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fputs("\"name\":", m);
    kv_json_str(m, kv_trace_region_label(t, id, label, sizeof label));
    fputs(",\"cat\":", m);
    kv_json_str(m, g ? kv_trace_kind_name(g->kind) : "undefined");
    fprintf(m, ",\"args\":{\"region\":%d", (int)id);
    if (g) {
        fputs(",\"file\":", m);
        kv_json_str(m, g->file);
        fprintf(m, ",\"line\":%d", g->line);
        if (!(g->kind >= 1 && g->kind <= 4)) {
            fputs(",\"text\":", m);
            kv_json_str(m, g->name);
        }
    }
    fclose(m);
    return j->frag[id] = text;
}

static void metadata(struct jctx *j, const struct kv_trace *t)
{
    sep(j);
    fprintf(j->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,"
            "\"tid\":0,\"args\":{\"name\":\"rank %d\"}}", t->proc, t->proc);
    sep(j);
    fprintf(j->f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,"
            "\"tid\":0,\"args\":{\"sort_index\":%d}}", t->proc, t->proc);
    for (size_t k = 0; k < t->nthreads; k++) {
        sep(j);
        fprintf(j->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,"
                "\"tid\":%d,\"args\":{\"name\":\"thread %d\"}}", t->proc,
                t->threads[k].thread, t->threads[k].thread);
    }
}

static void complete(struct jctx *j, const struct kv_trace *t,
                     const struct kv_tr_thread *th,
                     const struct kv_tr_event *e, const struct acc *a)
{
    char b[64];
    sep(j);
    fprintf(j->f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", t->proc,
            th->thread);
    fwrite(b, 1, (size_t)put_us(b, e->enter_ns), j->f);
    fputs(",\"dur\":", j->f);
    fwrite(b, 1, (size_t)put_us(b, e->ns - e->enter_ns), j->f);
    fputc(',', j->f);
    fputs(fragment(j, t, e->id), j->f);
    if (a->sent || a->received)
        fprintf(j->f, ",\"sent_bytes\":%" PRId64 ",\"received_bytes\":%"
                PRId64, a->sent, a->received);
    if (a->coll_sent || a->coll_received)
        fprintf(j->f, ",\"collective_sent_bytes\":%" PRId64 ","
                "\"collective_received_bytes\":%" PRId64, a->coll_sent,
                a->coll_received);
    comm_arg(j, a->comm);
    if (e->at_end)
        fputs(",\"closed_at_end\":true", j->f);
    fputs("}}", j->f);
}

static void flow(struct jctx *j, const struct kv_trace *t,
                 const struct kv_tr_thread *th, const struct kv_tr_event *e)
{
    char b[64];
    bool sent = e->type == KV_TR_SENT;
    sep(j);
    fprintf(j->f, "{\"ph\":\"%s\",\"name\":\"message\",\"cat\":\"mpi\","
            "\"id\":%" PRId64 ",\"pid\":%d,\"tid\":%d,\"ts\":",
            sent ? "s" : "f", e->flow, t->proc, th->thread);
    fwrite(b, 1, (size_t)put_us(b, kv_trace_message_ns(e)), j->f);
    if (!sent)
        fputs(",\"bp\":\"e\"", j->f);
    fprintf(j->f, ",\"args\":{\"%s\":%d,\"tag\":%d,\"bytes\":%" PRId64,
            sent ? "to" : "from", e->peer, e->tag, e->bytes);
    comm_arg(j, e->comm);
    fputs("}}", j->f);
}

static void flush_pending(struct jctx *j)
{
    if (j->pending)
        complete(j, j->pend_t, j->pend_th, &j->pend, &j->pend_acc);
    j->pending = false;
}

/* A message's bytes: to its call's region, just left (pending), or to the
 * innermost open region when the record lies inside its call. */
static void add_bytes(struct jctx *j, const struct kv_tr_event *e)
{
    struct acc *a = e->call_depth >= 0 && j->pending ? &j->pend_acc
                  : j->depth ? &j->stack[j->depth - 1] : NULL;
    if (!a)
        return;
    if (e->comm)
        a->comm = e->comm;
    if (e->peer >= 0)
        *(e->type == KV_TR_SENT ? &a->sent : &a->received) += e->bytes;
    else
        *(e->type == KV_TR_SENT ? &a->coll_sent : &a->coll_received) += e->bytes;
}

static int on_event(void *ctx, const struct kv_trace *t,
                    const struct kv_tr_thread *th, const struct kv_tr_event *e)
{
    struct jctx *j = ctx;
    bool message = e->type == KV_TR_SENT || e->type == KV_TR_RECEIVED;
    if (!(message && e->call_depth >= 0))
        flush_pending(j);
    switch (e->type) {
    case KV_TR_ENTER:
        KM_GROW(j->stack, j->cap, j->depth + 1);
        memset(&j->stack[j->depth++], 0, sizeof *j->stack);
        break;
    case KV_TR_LEAVE:
        j->depth--;
        j->pending = true;
        j->pend = *e;
        j->pend_acc = j->stack[j->depth];
        j->pend_t = t, j->pend_th = th;
        break;
    case KV_TR_SENT:
    case KV_TR_RECEIVED:
        add_bytes(j, e);
        if (e->flow >= 0)
            flow(j, t, th, e);
        break;
    }
    return 0;
}

static void free_fragments(struct jctx *j)
{
    for (size_t k = 0; k < j->nfrag; k++)
        free(j->frag[k]);
    free(j->frag);
    j->frag = NULL;
    j->nfrag = 0;
}

int kv_trace_json(FILE *f, struct kv_trace_set *s)
{
    struct jctx j = { .f = f, .s = s, .first = true };
    int rc = 0;
    kv_trace_rewind(s);
    fputs("{\"traceEvents\":[", f);
    for (size_t k = 0; rc == 0 && k < s->n; k++) {
        struct kv_trace *t = &s->t[k];
        metadata(&j, t);
        for (size_t n = 0; rc == 0 && n < t->nthreads; n++) {
            j.depth = 0;
            rc = kv_trace_each(s, t, &t->threads[n], on_event, &j);
            flush_pending(&j);
        }
        free_fragments(&j);          /* region ids are per file */
    }
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":"
          "\"kmview trace\",\"origin_realtime_ns\":", f);
    fprintf(f, "%" PRId64 ",\"files\":[", s->origin_ns);
    for (size_t k = 0; k < s->n; k++) {
        fputs(k ? "," : "", f);
        kv_json_str(f, s->t[k].path);
    }
    fprintf(f, "],\"matched_messages\":%" PRIu64 "}}\n", s->matched);
    free(j.stack);
    return rc ? -1 : 0;
}
