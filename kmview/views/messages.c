/*
 * messages.c — the Messages part of the terminal summary: per MPI call
 * site, over the ranks, the messages, the bytes sent and received, and the
 * most frequent message size (its power-of-two bin).
 *
 * Must never read files or change the run.
 */
#include "kmview/views/messages.h"

#include <stdlib.h>
#include <string.h>

#include "kmview/read/model.h"
#include "support/buf.h"

static int by_bytes(const void *pa, const void *pb)
{
    const struct kv_msg_site *a = pa, *b = pb;
    uint64_t x = a->sent + a->received, y = b->sent + b->received;
    if ((a->ranks > 0) != (b->ranks > 0))   /* a site of empty messages */
        return a->ranks > 0 ? -1 : 1;       /* before one of none */
    if (x != y)
        return x > y ? -1 : 1;
    return a->location - b->location;
}

/* (messages.h) */
const char *kv_bytes_text(char buf[32], uint64_t v)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
    if (v < 1024) {
        snprintf(buf, 32, "%llu B", (unsigned long long)v);
        return buf;
    }
    double x = (double)v;
    int u = -1;
    while (x >= 1024 && u < 4) {
        x /= 1024;
        u++;
    }
    snprintf(buf, 32, "%.1f %s", x, unit[u]);
    return buf;
}

/* A power of two of at least 1 KiB: "4 KiB", "512 MiB" ... */
static const char *pow2_text(char buf[32], uint64_t v)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
    int u = 0;
    v /= 1024;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, 32, "%llu %s", (unsigned long long)v, unit[u]);
    return buf;
}

/* The size range of bin b: "0 B", "64-127 B", "1 KiB-2 KiB" (up to,
 * not including, the second) ... */
static const char *bin_text(char buf[48], int b)
{
    if (b == 0) {
        snprintf(buf, 48, "0 B");
        return buf;
    }
    uint64_t lo = 1ull << (b - 1);
    if (b >= KV_MSG_BINS - 1) {
        char l[32];
        snprintf(buf, 48, ">= %s", kv_bytes_text(l, lo));
        return buf;
    }
    uint64_t hi = (lo << 1) - 1;
    if (lo < 1024) {
        snprintf(buf, 48, "%llu-%llu B", (unsigned long long)lo,
                 (unsigned long long)hi);
        return buf;
    }
    char l[32], h[32];
    snprintf(buf, 48, "%.20s-%.20s", pow2_text(l, lo), pow2_text(h, hi + 1));
    return buf;
}

static int usual_bin(const struct kv_msg_site *s)
{
    int best = 0;
    for (int b = 1; b < KV_MSG_BINS; b++)
        if (s->bins[b] > s->bins[best])
            best = b;
    return best;
}

/* (messages.h) */
struct kv_msg_site *kv_msg_sites(const struct kv_run *run, size_t *n)
{
    struct kv_msg_site *v = km_xcalloc(run->nlocations + 1, sizeof *v);
    for (size_t l = 0; l < run->nlocations; l++)
        v[l].location = (int)l;
    size_t any = 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nmsgs; k++) {
            const struct kv_msg *m = &r->msgs[k];
            struct kv_msg_site *s = &v[m->location];
            any += s->ranks == 0;
            s->ranks++;
            s->messages += m->messages;
            s->sent += m->sent;
            s->received += m->received;
            const struct kv_msg_bin *bin = kv_msg_bins(r, m);
            for (uint32_t b = 0; b < m->nbins; b++)
                s->bins[bin[b].bin] += bin[b].messages;
        }
    }
    /* the sites no rank named (ranks 0) sort last and are left out */
    qsort(v, run->nlocations, sizeof *v, by_bytes);
    *n = any;
    return v;
}

void kv_summary_messages(FILE *f, const struct kv_stats *st, int top)
{
    const struct kv_run *run = st->run;
    size_t any;
    struct kv_msg_site *v = kv_msg_sites(run, &any);
    if (!any) {
        free(v);
        return;
    }
    size_t n = top > 0 && (size_t)top < any ? (size_t)top : any;
    fprintf(f, "\nMessages (what each MPI call site moved, summed over the "
            "ranks)\n");
    fprintf(f, "  %-16s %5s %6s %12s %12s %12s  %-16s %s\n", "Routine",
            "Line", "Ranks", "Messages", "Sent", "Received", "Usual size",
            "Statement");
    for (size_t k = 0; k < n; k++) {
        const struct kv_msg_site *s = &v[k];
        const struct kv_location *l = &run->locations[s->location];
        char a[32], b[32], c[48];
        fprintf(f, "  %-16s %5d %6d %12llu %12s %12s  %-16s %s\n",
                run->routines[l->routine].name, l->line, s->ranks,
                (unsigned long long)s->messages, kv_bytes_text(a, s->sent),
                kv_bytes_text(b, s->received), bin_text(c, usual_bin(s)),
                l->text ? l->text : "");
    }
    if (n < any)
        fprintf(f, "  ... %zu more call sites (-n 0: all)\n", any - n);
    free(v);
}

/* A pair of ranks and what one sent the other. */
struct pair {
    int from, to;
    uint64_t bytes, messages;
};

/* The most bytes first, then by sender and receiver. */
static int heavier_first(const void *pa, const void *pb)
{
    const struct pair *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return (a->to > b->to) - (a->to < b->to);
}

/* One part of the communication matrix in the summary (column `col` of
 * the peer rows: 0 point-to-point, 2 all-to-all collectives): how many
 * pairs of ranks exchanged bytes and how many peers a rank has; the
 * matrix itself (bytes sent, row to column) when it fits a terminal,
 * else the pairs that sent the most. */
static void matrix_part(FILE *f, const struct kv_run *run, int col,
                        const char *what, int top)
{
    size_t pairs = 0, maxp = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        size_t sent_to = 0;
        for (size_t k = 0; k < r->npeers; k++)
            if (r->peers[k].messages[col]) {
                sent_to++;
                total += r->peers[k].bytes[col];
            }
        pairs += sent_to;
        maxp = sent_to > maxp ? sent_to : maxp;
    }
    if (!pairs)
        return;
    char b[32];
    fprintf(f, "\n%s: %s sent between %zu pair%s of ranks; a rank sends to "
            "%.1f peers on average, at most %zu\n", what,
            kv_bytes_text(b, total), pairs, pairs == 1 ? "" : "s",
            (double)pairs / (double)run->nsections, maxp);
    if (run->nsections <= 16) {
        fprintf(f, "  bytes sent by rank (row) to rank (column)\n  %6s", "");
        for (size_t j = 0; j < run->nsections; j++)
            fprintf(f, " %10d", run->ranks[j].rank);
        fputc('\n', f);
        for (size_t i = 0; i < run->nsections; i++) {
            const struct kv_rank *r = &run->ranks[i];
            fprintf(f, "  %6d", r->rank);
            size_t k = 0;
            for (size_t j = 0; j < run->nsections; j++) {
                int to = run->ranks[j].rank;
                while (k < r->npeers && r->peers[k].peer < to)
                    k++;
                uint64_t v = k < r->npeers && r->peers[k].peer == to
                                 ? r->peers[k].bytes[col] : 0;
                fprintf(f, " %10s", v ? kv_bytes_text(b, v) : ".");
            }
            fputc('\n', f);
        }
        return;
    }
    size_t n = top > 0 ? (size_t)top : pairs;
    struct pair *v = km_xcalloc(pairs + 1, sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t k = 0; k < run->ranks[i].npeers; k++) {
            const struct kv_peer *p = &run->ranks[i].peers[k];
            if (p->messages[col])
                v[m++] = (struct pair){ run->ranks[i].rank, p->peer,
                                        p->bytes[col], p->messages[col] };
        }
    /* a sort, not a selection of the top n: with -n 0 that took
     * n x pairs steps, hours for the million pairs of 100,000 ranks */
    qsort(v, m, sizeof *v, heavier_first);
    fprintf(f, "  %8s %8s %12s %12s\n", "From", "To", "Messages", "Bytes");
    for (size_t i = 0; i < m && i < n; i++)
        fprintf(f, "  %8d %8d %12llu %12s\n", v[i].from, v[i].to,
                (unsigned long long)v[i].messages,
                kv_bytes_text(b, v[i].bytes));
    if (n < m)
        fprintf(f, "  ... %zu more pairs (-n 0: all; rank_peers.csv: the "
                "matrix)\n", m - n);
    free(v);
}

void kv_summary_peers(FILE *f, const struct kv_stats *st, int top)
{
    matrix_part(f, st->run, 0, "Point-to-point messages", top);
    matrix_part(f, st->run, 2, "All-to-all collectives", top);
}
