/*
 * tracenames.c — what kmview trace's writers (text, Trace Event JSON,
 * OTF2, the report's Trace view) share about a trace set once it is
 * read: where the threads were at the end, as groups of the threads that
 * had the same regions open (and the files odd among them), and the
 * names they give regions (with an MPI call's routine), event kinds and
 * a trace's final state.  Reads nothing (trace.c does); writes nothing.
 */
#include "kmview/trace/trace.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "support/buf.h"

/* ------------------------------------------------------------------------ */
/* Where the threads were                                                    */

struct keyed { struct kv_tr_where w; char *key; };

static int by_open(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    if (x->w.th->thread != y->w.th->thread)
        return x->w.th->thread < y->w.th->thread ? -1 : 1;
    return (x->w.t->proc > y->w.t->proc) - (x->w.t->proc < y->w.t->proc);
}

/* The regions open at a thread's end as the set's ids: "/3/7/". */
static char *open_key(const struct kv_trace *t, const struct kv_tr_thread *th)
{
    struct km_buf b = { 0 };
    km_buf_adds(&b, "/");
    for (size_t k = 0; k < th->nopen; k++)
        km_buf_printf(&b, "%u/", (unsigned)t->global[th->open[k].id]);
    return (char *)km_buf_cstr(&b);
}

void kv_trace_groups(struct kv_tr_groups *g, const struct kv_trace_set *s)
{
    memset(g, 0, sizeof *g);
    for (size_t k = 0; k < s->n; k++)
        g->n += s->t[k].nthreads;
    struct keyed *v = km_xcalloc(g->n + 1, sizeof *v);
    size_t m = 0;
    for (size_t k = 0; k < s->n; k++)
        for (size_t j = 0; j < s->t[k].nthreads; j++, m++) {
            v[m].w.t = &s->t[k];
            v[m].w.th = &s->t[k].threads[j];
            v[m].key = open_key(v[m].w.t, v[m].w.th);
        }
    qsort(v, g->n, sizeof *v, by_open);
    g->w = km_xcalloc(g->n + 1, sizeof *g->w);
    g->start = km_xcalloc(g->n + 2, sizeof *g->start);
    for (size_t k = 0; k < g->n; k++) {
        if (k == 0 || strcmp(v[k].key, v[k - 1].key))
            g->start[g->ngroups++] = k;
        g->w[k] = v[k].w;
    }
    g->start[g->ngroups] = g->n;
    for (size_t k = 1; k < g->ngroups; k++)
        if (g->start[k + 1] - g->start[k] >
            g->start[g->largest + 1] - g->start[g->largest])
            g->largest = k;
    for (size_t k = 0; k < g->n; k++)
        free(v[k].key);
    free(v);
}

void kv_trace_groups_free(struct kv_tr_groups *g)
{
    free(g->w);
    free(g->start);
    memset(g, 0, sizeof *g);
}

void kv_trace_odd_files(const struct kv_tr_groups *g,
                        const struct kv_trace_set *s, bool *odd)
{
    memset(odd, 0, s->n * sizeof *odd);
    for (size_t k = 0; k < g->ngroups; k++)
        for (size_t i = g->start[k]; k != g->largest && i < g->start[k + 1]; i++)
            odd[g->w[i].t - s->t] = true;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */

const struct kv_tr_region *kv_trace_region(const struct kv_trace *t,
                                           int32_t id)
{
    if (id < 1 || (size_t)id > t->nregions || !t->regions[id - 1].name)
        return NULL;
    return &t->regions[id - 1];
}

const char *kv_trace_kind_name(int kind)
{
    switch (kind) {
    case 1: return "program";
    case 2: return "subroutine";
    case 3: return "function";
    case 4: return "entry";
    case 10: return "DO";
    case 11: return "CALL";
    case 12: return "MPI";
    case 13: return "I/O";
    case 14: return "region";
    case 15: return "OpenMP";
    }
    return "?";
}

const char *kv_trace_state_name(uint32_t state)
{
    switch (state) {
    case KV_TR_RUNNING: return "running";
    case KV_TR_ENDED: return "ended";
    case KV_TR_LIMIT: return "stopped at the size limit";
    case KV_TR_SIGNAL: return "ended by a signal";
    }
    return "state not known";
}

/* The MPI routine a statement calls ("CALL MPI_SEND(..." -> MPI_SEND,
 * upper case) into buf; false when the text is no such call. */
static bool mpi_callee(const char *text, char *buf, size_t size)
{
    while (*text == ' ')
        text++;
    if (strncasecmp(text, "call", 4) != 0)
        return false;
    text += 4;
    while (*text == ' ')
        text++;
    if (strncasecmp(text, "mpi_", 4) != 0)
        return false;
    size_t n = 0;
    while (n + 1 < size && (isalnum((unsigned char)text[n]) || text[n] == '_')) {
        buf[n] = (char)toupper((unsigned char)text[n]);
        n++;
    }
    buf[n] = '\0';
    return true;
}

const char *kv_trace_region_label(const struct kv_trace *t, int32_t id,
                                  char *buf, size_t size)
{
    const struct kv_tr_region *g = kv_trace_region(t, id);
    char kind[64];
    if (!g)
        snprintf(buf, size, "region %d", (int)id);
    else if (g->kind >= 1 && g->kind <= 4)
        snprintf(buf, size, "%s", g->name);
    else {
        const struct kv_tr_region *r = kv_trace_region(t, g->routine);
        /* an MPI call by the routine it calls: what a timeline is read by */
        if (g->kind != 12 || !mpi_callee(g->name, kind, sizeof kind))
            snprintf(kind, sizeof kind, "%s", kv_trace_kind_name(g->kind));
        snprintf(buf, size, "%s line %d in %s", kind, g->line,
                 r ? r->name : "?");
    }
    return buf;
}
