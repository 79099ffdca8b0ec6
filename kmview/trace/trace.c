/*
 * trace.c — libkm's binary traces (doc/KM_trace.md), read as a set of
 * files, one per rank.
 *
 * Two passes.  kv_trace_set_open scans every file once: the header, the
 * block headers (a thread's blocks put in order of their sequence), then
 * every record of every thread in order, which checks the file, counts
 * the events, collects the REGION table and the CLOCK calibrations, keeps
 * the regions open at the end and the last few events of each thread,
 * builds the communicators from the COMM records, and counts the
 * point-to-point messages per channel (sender, receiver, communicator,
 * tag).  The regions are then unified over the files (kind, name, file,
 * line), and the communicators by member list: a file's message on its
 * own communicator waits in the file's table until every thread's COMM
 * records are read and the set has numbered them.  Then kv_trace_each
 * reads a thread again, block by block, and calls back per event with
 * its time on the set's one axis and, for a message, the id it shares
 * with its partner: the k-th message from a to b on communicator c with
 * tag t is the k-th that b received from a on c with tag t (MPI's
 * non-overtaking order is per communicator); a pair that ever had a tag
 * not known (-1) is matched by (a, b, c) alone, and every
 * intercommunicator's messages as one communicator's (its sides list
 * each other's group, not one list).  A message's record follows its MPI call's LEAVE (libkm's
 * order): the event names that call's ENTER and LEAVE, so that writers
 * can put the message inside it.  Memory is one block plus the per-thread
 * and per-channel tables,
 * whatever the number of events.
 *
 * A run killed at any point leaves a readable file, and this reader takes
 * it as it is: a block ends at its first zero type, blocks nobody wrote
 * (all zeros) are skipped, a file shorter than its claimed blocks or
 * ending inside a block is read as far as it goes, and the regions still
 * open at a thread's end are closed at its last event (the event says
 * at_end; the summary says so).  What does not follow the format (a bad
 * magic, type or length) is an error naming the file and the byte.
 *
 * Ticks become time by the CLOCK records (and the header's start): linear
 * between the two around a tick, the end segments extended; with one
 * calibration only, seconds_per_tick.  The set's axis is CLOCK_REALTIME in
 * ns, from the earliest event of every file.
 *
 * What the writers then say of the set (where the threads were, the
 * names of regions, kinds and states) is tracenames.c's.
 *
 * Must never: hold a file's events in memory, a communicator's member
 * list once per file that has it, or write anything but errors.
 */
#include "kmview/trace/trace.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <strings.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmview/write/out.h"
#include "support/buf.h"

#define MAGIC "kmtool-trace"
#define BLOCK_MAGIC 0x42544d4bu
#define REC 16
#define MAX_REGION_ID (1 << 24)

/* ------------------------------------------------------------------------ */
/* Bytes                                                                     */

static uint32_t u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static int32_t i32(const unsigned char *p) { int32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static int64_t i64(const unsigned char *p) { int64_t v; memcpy(&v, p, 8); return v; }

static int corrupt(const struct kv_trace *t, uint64_t off, const char *what)
{
    kv_eprintf("%s: byte %llu: error: %s\n", t->path,
            (unsigned long long)off, what);
    return -1;
}

/* Read up to n bytes at off; the count read, or -1 (printed). */
static ssize_t read_at(const struct kv_trace *t, void *buf, size_t n,
                       uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(t->fd, (char *)buf + got, n - got,
                          (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            kv_eprintf("%s: error: cannot read: %s\n", t->path,
                    strerror(errno));
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */

struct raw {
    int64_t tick;
    int type, extra;
    int32_t id;
    uint32_t comm;           /* SENT, RECEIVED: the file's communicator */
    const unsigned char *x;  /* the extra slots */
    uint64_t off;            /* the record's byte in the file */
};

/* The record at *pos of a block's bytes b[0..len): 1 (pos moved past it
 * and its slots), 0 at the block's end, -1 when corrupt (printed). */
static int next_record(const struct kv_trace *t, const unsigned char *b,
                       size_t len, size_t *pos, uint64_t base, struct raw *r)
{
    if (*pos + REC > len)
        return 0;
    const unsigned char *p = b + *pos;
    r->type = p[8];
    if (r->type == 0)
        return 0;
    r->off = base + *pos;
    r->tick = i64(p);
    r->extra = p[9];
    r->id = i32(p + 12);
    r->comm = (uint32_t)p[10] | (uint32_t)p[11] << 8;
    r->x = p + REC;
    if (r->type > KV_TR_COMM)
        return corrupt(t, r->off, "a record of a type not known");
    if (*pos + REC * (size_t)(1 + r->extra) > len) {
        /* a killed run's last block may end inside a record's slots */
        if (base + len >= t->size)
            return 0;
        return corrupt(t, r->off, "a record's slots run past its block");
    }
    int need = r->type == KV_TR_SENT || r->type == KV_TR_RECEIVED ||
               r->type == KV_TR_REGION || r->type == KV_TR_CLOCK ||
               r->type == KV_TR_COMM;
    if (need && r->extra < 1)
        return corrupt(t, r->off, "a record without its extra slot");
    if ((r->type == KV_TR_ENTER || r->type == KV_TR_REGION) &&
        (r->id < 1 || r->id > MAX_REGION_ID))
        return corrupt(t, r->off, "a region id out of range");
    *pos += REC * (size_t)(1 + r->extra);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The header and the blocks                                                 */

static int read_header(struct kv_trace *t)
{
    unsigned char h[424];
    ssize_t n = read_at(t, h, sizeof h, 0);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof h || memcmp(h, MAGIC "\0\0\0", 16) != 0)
        return corrupt(t, 0, "not a kmtool trace (KM_trace format 2)");
    if (u32(h + 20) == 0x04030201u)
        return corrupt(t, 20, "written with the other byte order");
    if (u32(h + 20) != 0x01020304u)
        return corrupt(t, 20, "byte_order is not 0x01020304");
    if (u32(h + 16) != 2) {
        kv_eprintf("%s: byte 16: error: trace format %u; this kmview "
                "reads format 2\n", t->path, u32(h + 16));
        return -1;
    }
    t->block_size = u32(h + 24);
    if (t->block_size < 4096 || t->block_size > (1u << 30) ||
        t->block_size % REC)
        return corrupt(t, 24, "block_size out of range");
    if (u32(h + 28) != REC)
        return corrupt(t, 28, "record_size is not 16");
    t->rank = i32(h + 32);
    t->nranks = i32(h + 36);
    /* a rank is a number from 0 below nranks (INT_MAX would overflow the
     * rank + 1 of the world's size) */
    if (t->nranks < 0)
        return corrupt(t, 36, "nranks out of range");
    if (t->rank < -1 || t->rank == INT_MAX ||
        (t->nranks > 0 && t->rank >= t->nranks))
        return corrupt(t, 32, "rank out of range");
    t->pid = i64(h + 40);
    memcpy(&t->seconds_per_tick, h + 48, 8);
    t->t0_tick = i64(h + 56);
    t->t0_real_ns = i64(h + 64);
    t->claimed = u64(h + 72);
    t->state = u32(h + 80);
    t->signal = i32(h + 84);
    t->dropped = u64(h + 88);
    t->limit_bytes = u64(h + 96);
    memcpy(t->clock, h + 104, 64);
    t->clock[64] = '\0';
    memcpy(t->program, h + 168, 256);
    t->program[256] = '\0';
    return 0;
}

static struct kv_tr_thread *thread_of(struct kv_trace *t, int number,
                                      size_t *cap)
{
    for (size_t k = 0; k < t->nthreads; k++)
        if (t->threads[k].thread == number)
            return &t->threads[k];
    KM_GROW(t->threads, *cap, t->nthreads + 1);
    struct kv_tr_thread *th = &t->threads[t->nthreads++];
    memset(th, 0, sizeof *th);
    th->thread = number;
    return th;
}

struct blockref { uint64_t seq, off; };

static int by_seq(const void *a, const void *b)
{
    const struct blockref *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_thread(const void *a, const void *b)
{
    const struct kv_tr_thread *x = a, *y = b;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

/* Put one thread's blocks in order of sequence; a number seen twice is an
 * error, a number skipped a block lost (counted). */
static int order_blocks(struct kv_trace *t, struct kv_tr_thread *th,
                        struct blockref *refs, size_t n)
{
    qsort(refs, n, sizeof *refs, by_seq);
    th->blocks = km_xcalloc(n + 1, sizeof *th->blocks);
    for (size_t k = 0; k < n; k++) {
        if (k && refs[k].seq == refs[k - 1].seq)
            return corrupt(t, refs[k].off, "a thread's block sequence "
                           "number given twice");
        uint64_t expect = k ? refs[k - 1].seq + 1 : 0;
        if (refs[k].seq > expect)
            th->missing += refs[k].seq - expect;
        th->blocks[k] = refs[k].off;
    }
    th->nblocks = n;
    return 0;
}

/* Find the data blocks: their thread and sequence from their headers. */
static int find_blocks(struct kv_trace *t)
{
    struct { int thread; struct blockref r; } *all = NULL;
    size_t nall = 0, cap = 0, tcap = 0;
    int rc = 0;
    for (uint64_t off = t->block_size; off < t->size; off += t->block_size) {
        unsigned char b[16];
        ssize_t n = read_at(t, b, sizeof b, off);
        if (n < 0) { rc = -1; break; }
        if (off + t->block_size > t->size)
            t->partial_block = true;
        uint32_t magic = n >= 4 ? u32(b) : 0;
        if (magic == 0) {                 /* claimed but never written */
            t->unclaimed++;
            continue;
        }
        if (magic != BLOCK_MAGIC || n < 16) {
            rc = corrupt(t, off, "a data block without its magic KMTB");
            break;
        }
        KM_GROW(all, cap, nall + 1);
        all[nall].thread = i32(b + 4);
        all[nall].r.seq = u64(b + 8);
        all[nall].r.off = off;
        nall++;
        thread_of(t, i32(b + 4), &tcap);
    }
    t->present = nall;
    struct blockref *refs = km_xcalloc(nall + 1, sizeof *refs);
    for (size_t k = 0; rc == 0 && k < t->nthreads; k++) {
        size_t n = 0;
        for (size_t j = 0; j < nall; j++)
            if (all[j].thread == t->threads[k].thread)
                refs[n++] = all[j].r;
        rc = order_blocks(t, &t->threads[k], refs, n);
    }
    free(refs);
    free(all);
    if (rc == 0 && t->nthreads)
        qsort(t->threads, t->nthreads, sizeof *t->threads, by_thread);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Message channels: (sender, receiver, communicator, tag) -> counts, ids    */

/* A channel's communicator: the set's (or, in a file's pending table, the
 * file's own id); every intercommunicator is one, as its two sides list
 * each other's group. */
#define COMM_INTER UINT32_MAX

struct kv_tr_chan {
    int32_t from, to, tag;   /* tag INT32_MIN: the pair had a tag not known */
    uint32_t comm;
    bool used;
    uint64_t nsent, nrecv, base, ksent, krecv;
};

struct kv_tr_chans {
    struct kv_tr_chan *chan;
    size_t n, cap;
};

static size_t chan_hash(int32_t a, int32_t b, uint32_t comm, int32_t tag,
                        size_t cap)
{
    uint64_t h = (uint64_t)(uint32_t)a * 0x9e3779b97f4a7c15u;
    h ^= (uint64_t)(uint32_t)b * 0xc2b2ae3d27d4eb4fu;
    h ^= (uint64_t)(uint32_t)tag * 0x165667b19e3779f9u;
    h ^= (uint64_t)comm * 0x27d4eb2f165667c5u;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct kv_tr_chan *chan_find(struct kv_tr_chans *ch, int32_t a,
                                    int32_t b, uint32_t comm, int32_t tag,
                                    bool add);

static void chan_grow(struct kv_tr_chans *ch)
{
    struct kv_tr_chan *old = ch->chan;
    size_t oldcap = ch->cap;
    ch->cap = oldcap ? oldcap * 2 : 8;   /* a file's pending table: few */
    ch->chan = km_xcalloc(ch->cap, sizeof *ch->chan);
    ch->n = 0;
    for (size_t k = 0; k < oldcap; k++)
        if (old[k].used)
            *chan_find(ch, old[k].from, old[k].to, old[k].comm, old[k].tag,
                       true) = old[k];
    free(old);
}

static struct kv_tr_chan *chan_find(struct kv_tr_chans *ch, int32_t a,
                                    int32_t b, uint32_t comm, int32_t tag,
                                    bool add)
{
    if (!ch)
        return NULL;
    if (add && 2 * (ch->n + 1) > ch->cap)
        chan_grow(ch);
    if (!ch->cap)
        return NULL;
    for (size_t k = chan_hash(a, b, comm, tag, ch->cap);;
         k = (k + 1) & (ch->cap - 1)) {
        struct kv_tr_chan *c = &ch->chan[k];
        if (c->used && c->from == a && c->to == b && c->comm == comm &&
            c->tag == tag)
            return c;
        if (!c->used) {
            if (!add)
                return NULL;
            memset(c, 0, sizeof *c);
            c->used = true;
            c->from = a, c->to = b, c->comm = comm, c->tag = tag;
            ch->n++;
            return c;
        }
    }
}

static void chans_free(struct kv_tr_chans *ch)
{
    if (ch)
        free(ch->chan);
    free(ch);
}

/* The key a message of the set's communicator `comm` is matched by. */
static uint32_t comm_key(const struct kv_trace_set *s, uint32_t comm)
{
    return comm < s->ncomms && s->comms[comm].inter ? COMM_INTER : comm;
}

/* The channel a message goes by: the pair alone (on its communicator)
 * when it ever had a tag not known. */
static struct kv_tr_chan *channel(struct kv_trace_set *s, int32_t from,
                                  int32_t to, uint32_t comm, int32_t tag)
{
    if (tag == -1 || chan_find(s->chans, from, to, comm, INT32_MIN, false))
        tag = -1;
    return chan_find(s->chans, from, to, comm, tag, false);
}

/* Count `sent` and `received` messages on a channel of table ch (a tag
 * -1 marks the pair). */
static void count_on(struct kv_tr_chans *ch, int32_t from, int32_t to,
                     uint32_t comm, int32_t tag, uint64_t sent,
                     uint64_t received)
{
    struct kv_tr_chan *c = chan_find(ch, from, to, comm, tag, true);
    c->nsent += sent;
    c->nrecv += received;
    if (tag == -1)
        chan_find(ch, from, to, comm, INT32_MIN, true);
}

/* A message of file t: on MPI_COMM_WORLD into the set's channels, on one
 * of the file's own communicators into its pending table until the set
 * has numbered them (kv_trace_set_open). */
static void count_message(struct kv_trace_set *s, struct kv_trace *t,
                          int type, int32_t peer, int32_t tag, uint32_t comm)
{
    int32_t from = type == KV_TR_SENT ? t->proc : peer;
    int32_t to = type == KV_TR_SENT ? peer : t->proc;
    struct kv_tr_chans *ch = s->chans;
    if (comm) {
        if (!t->pending)
            t->pending = km_xcalloc(1, sizeof *t->pending);
        ch = t->pending;
    }
    count_on(ch, from, to, comm, tag, type == KV_TR_SENT,
             type == KV_TR_RECEIVED);
}

/* A file's pending messages into the set's channels, on the set's
 * communicators. */
static void flush_pending(struct kv_trace_set *s, struct kv_trace *t)
{
    if (!t->pending)
        return;
    for (size_t k = 0; k < t->pending->cap; k++) {
        const struct kv_tr_chan *c = &t->pending->chan[k];
        if (!c->used || c->comm >= t->ncomm || t->comm[c->comm] == UINT32_MAX)
            continue;
        uint32_t comm = comm_key(s, t->comm[c->comm]);
        if (c->tag == INT32_MIN)
            chan_find(s->chans, c->from, c->to, comm, INT32_MIN, true);
        else
            count_on(s->chans, c->from, c->to, comm, c->tag, c->nsent,
                     c->nrecv);
    }
    chans_free(t->pending);
    t->pending = NULL;
}

static int by_channel(const void *a, const void *b)
{
    const struct kv_tr_chan *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
    return (x->tag > y->tag) - (x->tag < y->tag);
}

/* Fold the channels of pairs with an unknown tag into (a, b, comm, -1),
 * then number the matched messages channel by channel. */
static void match_channels(struct kv_trace_set *s)
{
    struct kv_tr_chans *ch = s->chans;
    for (size_t k = 0; k < ch->cap; k++) {
        struct kv_tr_chan *c = &ch->chan[k];
        if (!c->used || c->tag == INT32_MIN || c->tag == -1 ||
            !chan_find(ch, c->from, c->to, c->comm, INT32_MIN, false))
            continue;
        struct kv_tr_chan *w = chan_find(ch, c->from, c->to, c->comm, -1,
                                         true);
        w->nsent += c->nsent, w->nrecv += c->nrecv;
        c->nsent = c->nrecv = 0;
    }
    /* ids in an order that does not depend on the hash table's */
    struct kv_tr_chan *sorted = km_xcalloc(ch->n + 1, sizeof *sorted);
    size_t n = 0;
    for (size_t k = 0; k < ch->cap; k++)
        if (ch->chan[k].used)
            sorted[n++] = ch->chan[k];
    qsort(sorted, n, sizeof *sorted, by_channel);
    uint64_t next = 0;
    for (size_t k = 0; k < n; k++) {
        struct kv_tr_chan *c = chan_find(ch, sorted[k].from, sorted[k].to,
                                         sorted[k].comm, sorted[k].tag, false);
        uint64_t m = c->nsent < c->nrecv ? c->nsent : c->nrecv;
        c->base = next;
        next += m;
        s->unmatched_sent += c->nsent - m;
        s->unmatched_received += c->nrecv - m;
        if (c->comm < s->ncomms) {
            s->comms[c->comm].matched += m;
            s->comms[c->comm].unmatched += c->nsent + c->nrecv - 2 * m;
        }
    }
    s->matched = next;
    free(sorted);
}

void kv_trace_rewind(struct kv_trace_set *s)
{
    for (size_t k = 0; s->chans && k < s->chans->cap; k++)
        s->chans->chan[k].ksent = s->chans->chan[k].krecv = 0;
}

/* The id of the next message on a channel, or -1 when it has no partner;
 * comm is the file's own id. */
static int64_t flow_id(struct kv_trace_set *s, const struct kv_trace *t,
                       int type, int32_t peer, int32_t tag, uint32_t comm)
{
    if (peer < 0 || comm >= (comm ? t->ncomm : 1) ||
        (comm && t->comm[comm] == UINT32_MAX))
        return -1;
    bool sent = type == KV_TR_SENT;
    struct kv_tr_chan *c = channel(s, sent ? t->proc : peer,
                                   sent ? peer : t->proc,
                                   comm ? comm_key(s, t->comm[comm]) : 0, tag);
    if (!c)
        return -1;
    uint64_t m = c->nsent < c->nrecv ? c->nsent : c->nrecv;
    uint64_t k = sent ? c->ksent++ : c->krecv++;
    return k < m ? (int64_t)(c->base + k) : -1;
}

/* ------------------------------------------------------------------------ */
/* Communicators: a file's COMM records, the run's by member list            */

#define MAX_COMM_ID 65535
#define COMM_MEMBERS 1016    /* at most per record */

/* A communicator of the file being scanned, as its records build it. */
struct lcomm {
    int32_t *members;
    size_t cap;
    int32_t size, have, inter;
    uint64_t used_off;       /* the byte of the first message on it; 0 none */
    uint64_t collectives;
};

/* The set's communicators by member list: slot[h] is index + 1. */
struct kv_tr_commtab {
    uint32_t *slot;
    size_t nslot;
    size_t cap;              /* of kv_trace_set.comms */
};

static uint64_t comm_hash(const int32_t *m, int32_t n, int inter)
{
    uint64_t h = 1469598103934665603u ^ (uint64_t)inter;
    for (int32_t k = 0; k < n; k++)
        h = (h ^ (uint32_t)m[k]) * 1099511628211u;
    return h ^ (h >> 31);
}

static bool comm_same(const struct kv_tr_comm *c, const int32_t *m,
                      int32_t n, int inter)
{
    return c->size == n && c->inter == (inter != 0) &&
           memcmp(c->members, m, (size_t)n * sizeof *m) == 0;
}

static void commtab_grow(struct kv_trace_set *s)
{
    struct kv_tr_commtab *ct = s->commtab;
    free(ct->slot);
    ct->nslot = ct->nslot ? 2 * ct->nslot : 64;
    ct->slot = km_xcalloc(ct->nslot, sizeof *ct->slot);
    for (size_t k = 1; k < s->ncomms; k++) {
        const struct kv_tr_comm *c = &s->comms[k];
        size_t i = (size_t)comm_hash(c->members, c->size, c->inter) &
                   (ct->nslot - 1);
        while (ct->slot[i])
            i = (i + 1) & (ct->nslot - 1);
        ct->slot[i] = (uint32_t)k + 1;
    }
}

/* The set's communicator of member list m[0..n) (taken, or freed when
 * the set has it already). */
static uint32_t intern_comm(struct kv_trace_set *s, int32_t *m, int32_t n,
                            int inter)
{
    struct kv_tr_commtab *ct = s->commtab;
    if (2 * s->ncomms >= ct->nslot)
        commtab_grow(s);
    size_t i = (size_t)comm_hash(m, n, inter) & (ct->nslot - 1);
    for (; ct->slot[i]; i = (i + 1) & (ct->nslot - 1))
        if (comm_same(&s->comms[ct->slot[i] - 1], m, n, inter)) {
            free(m);
            return ct->slot[i] - 1;
        }
    KM_GROW(s->comms, ct->cap, s->ncomms + 1);
    struct kv_tr_comm *c = &s->comms[s->ncomms];
    memset(c, 0, sizeof *c);
    c->members = km_xrealloc(m, (size_t)n * sizeof *m);
    c->size = n;
    c->inter = inter != 0;
    ct->slot[i] = (uint32_t)s->ncomms + 1;
    return (uint32_t)s->ncomms++;
}

/* COMM: a part of communicator r->id of the file; 0 or -1 (printed). */
static int define_comm(struct kv_trace *t, struct lcomm **lc, size_t *cap,
                       const struct raw *r)
{
    if (r->extra < 1)
        return corrupt(t, r->off, "a record without its extra slot");
    if (r->id < 1 || r->id > MAX_COMM_ID)
        return corrupt(t, r->off, "a communicator id out of range");
    int32_t size = i32(r->x), first = i32(r->x + 4), count = i32(r->x + 8);
    int32_t inter = i32(r->x + 12);
    if (size < 1 || (t->nranks > 0 && size > t->nranks) || count < 1 ||
        count > COMM_MEMBERS || first < 0 || (int64_t)first + count > size ||
        (inter != 0 && inter != 1))
        return corrupt(t, r->off, "a COMM record's size, first, count or "
                       "inter out of range");
    if (r->extra < 1 + (count + 3) / 4)
        return corrupt(t, r->off, "a COMM record's members run past its "
                       "slots");
    size_t id = (size_t)r->id;
    if (id >= *cap) {
        size_t old = *cap;
        KM_GROW(*lc, *cap, id + 1);
        memset(*lc + old, 0, (*cap - old) * sizeof **lc);
    }
    struct lcomm *c = &(*lc)[id];
    if (c->have == 0 && first == 0)
        c->size = size, c->inter = inter;
    else if (c->have && c->have == c->size)
        return corrupt(t, r->off, "a communicator defined twice");
    else if (first != c->have || size != c->size || inter != c->inter)
        return corrupt(t, r->off, "a COMM record that does not continue "
                       "its communicator's members");
    KM_GROW(c->members, c->cap, (size_t)c->have + (size_t)count);
    for (int32_t k = 0; k < count; k++) {
        int32_t m = i32(r->x + REC + 4 * (size_t)k);
        if (m < 0 || (t->nranks > 0 && m >= t->nranks))
            return corrupt(t, r->off + 2 * REC + 4 * (uint64_t)k,
                           "a communicator's member out of range");
        c->members[c->have++] = m;
    }
    return 0;
}

/* After a file's scan: its communicators onto the set's (t->comm); a
 * message on one its COMM records do not define whole is an error. */
static int finish_comms(struct kv_trace_set *s, struct kv_trace *t,
                        struct lcomm *lc, size_t n)
{
    int rc = 0;
    t->ncomm = 1;
    for (size_t id = 1; id < n; id++)
        if (lc[id].have || lc[id].used_off)
            t->ncomm = id + 1;
    t->comm = km_xcalloc(t->ncomm, sizeof *t->comm);
    for (size_t id = 1; id < t->ncomm; id++) {
        struct lcomm *c = &lc[id];
        t->comm[id] = UINT32_MAX;
        if (rc == 0 && c->used_off && c->have == 0)
            rc = corrupt(t, c->used_off, "a message on a communicator no "
                         "COMM record defines");
        else if (rc == 0 && c->used_off && c->have < c->size)
            rc = corrupt(t, c->used_off, "a message on a communicator "
                         "whose COMM records end before its last member");
        if (rc == 0 && c->have && c->have == c->size) {
            t->comm[id] = intern_comm(s, c->members, c->size, c->inter);
            s->comms[t->comm[id]].collectives += c->collectives;
            c->members = NULL;
        }
        free(c->members);
    }
    for (size_t id = t->ncomm; id < n; id++)
        free(lc[id].members);
    return rc;
}

struct world_rank { int32_t world, rank; };

static int by_world_rank(const void *a, const void *b)
{
    const struct world_rank *x = a, *y = b;
    if (x->world != y->world)
        return x->world < y->world ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* c's ranks ordered by their world rank, for kv_trace_comm_rank. */
static void order_by_world(struct kv_tr_comm *c)
{
    struct world_rank *v = km_xcalloc((size_t)c->size + 1, sizeof *v);
    for (int32_t r = 0; r < c->size; r++)
        v[r].world = c->members[r], v[r].rank = r;
    qsort(v, (size_t)c->size, sizeof *v, by_world_rank);
    c->by_world = km_xcalloc((size_t)c->size + 1, sizeof *c->by_world);
    for (int32_t r = 0; r < c->size; r++)
        c->by_world[r] = v[r].rank;
    free(v);
}

/* The set's communicators numbered by their first file (by rank), then
 * by its id, whatever order the files were read in; each file's pending
 * messages then onto them. */
static void number_comms(struct kv_trace_set *s)
{
    uint32_t *to = km_xcalloc(s->ncomms + 1, sizeof *to);
    uint32_t next = 1;
    for (size_t k = 0; k < s->n; k++)
        for (size_t id = 1; id < s->t[k].ncomm; id++) {
            uint32_t g = s->t[k].comm[id];
            if (g != UINT32_MAX && !to[g])
                to[g] = next++;
        }
    struct kv_tr_comm *c = km_xcalloc(s->ncomms + 1, sizeof *c);
    c[0] = s->comms[0];
    for (size_t g = 1; g < s->ncomms; g++)
        c[to[g]] = s->comms[g];
    free(s->comms);
    s->comms = c;
    s->commtab->cap = s->ncomms + 1;
    free(s->commtab->slot);
    s->commtab->slot = NULL;         /* no longer needed */
    s->commtab->nslot = 0;
    for (size_t k = 0; k < s->n; k++) {
        struct kv_trace *t = &s->t[k];
        for (size_t id = 1; id < t->ncomm; id++)
            if (t->comm[id] != UINT32_MAX)
                t->comm[id] = to[t->comm[id]];
        for (size_t j = 0; j < t->nthreads; j++)
            for (size_t i = 0; i < KV_TR_LAST; i++) {
                struct kv_tr_rec *r = &t->threads[j].last[i];
                r->comm = r->comm < t->ncomm ? t->comm[r->comm] : UINT32_MAX;
            }
        flush_pending(s, t);
        if (t->proc + 1 > s->comms[0].size)
            s->comms[0].size = t->proc + 1;
        if (t->nranks > s->comms[0].size)
            s->comms[0].size = t->nranks;
    }
    for (size_t g = 1; g < s->ncomms; g++) {
        struct kv_tr_comm *m = &s->comms[g];
        order_by_world(m);
        for (int32_t r = 0; r < m->size; r++)
            if (m->members[r] + 1 > s->comms[0].size)
                s->comms[0].size = m->members[r] + 1;
    }
    free(to);
}

int32_t kv_trace_comm_rank(const struct kv_trace_set *s, uint32_t comm,
                           int32_t world)
{
    if (comm == 0)
        return world >= 0 ? world : -1;
    if (comm >= s->ncomms)
        return -1;
    const struct kv_tr_comm *c = &s->comms[comm];
    size_t lo = 0, hi = (size_t)c->size;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t w = c->members[c->by_world[mid]];
        if (w == world)
            return c->by_world[mid];
        if (w < world)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

const char *kv_trace_comm_name(const struct kv_trace_set *s, uint32_t comm,
                               char *buf, size_t size)
{
    if (comm == 0)
        snprintf(buf, size, "MPI_COMM_WORLD");
    else if (comm >= s->ncomms)
        snprintf(buf, size, "communicator not known");
    else if (s->comms[comm].inter)
        snprintf(buf, size, "intercommunicator %u (remote group of %d "
                 "rank%s)", (unsigned)comm, (int)s->comms[comm].size,
                 s->comms[comm].size == 1 ? "" : "s");
    else
        snprintf(buf, size, "communicator %u (%d rank%s)", (unsigned)comm,
                 (int)s->comms[comm].size, s->comms[comm].size == 1 ? "" : "s");
    return buf;
}

/* ------------------------------------------------------------------------ */
/* The scan                                                                  */

/* The table's row for id (1 .. MAX_REGION_ID), made when new. */
static struct kv_tr_region *region_row(struct kv_trace *t, size_t *cap,
                                       int32_t id)
{
    size_t n = (size_t)id;
    if (n > *cap) {
        size_t old = *cap;
        KM_GROW(t->regions, *cap, n);
        memset(t->regions + old, 0, (*cap - old) * sizeof *t->regions);
    }
    if (n > t->nregions)
        t->nregions = n;
    return &t->regions[n - 1];
}

static void define_region(struct kv_trace *t, size_t *cap,
                          const struct raw *r)
{
    struct kv_tr_region *g = region_row(t, cap, r->id);
    if (g->name)
        return;                          /* defined once; keep the first */
    int32_t bytes = i32(r->x + 12);
    size_t room = (size_t)(r->extra - 1) * REC;
    if (bytes < 0 || (size_t)bytes > room)
        bytes = (int32_t)room;
    const char *text = (const char *)r->x + REC;
    size_t nl = strnlen(text, (size_t)bytes);
    g->name = km_xstrndup(text, nl);
    g->file = nl < (size_t)bytes ? km_xstrndup(text + nl + 1,
                                   strnlen(text + nl + 1, (size_t)bytes - nl - 1))
                                 : km_xstrdup("");
    g->kind = i32(r->x);
    g->line = i32(r->x + 4);
    g->routine = i32(r->x + 8);
}

static void add_clock(struct kv_trace *t, size_t *cap, int64_t tick,
                      int64_t real)
{
    KM_GROW(t->clocks, *cap, t->nclocks + 1);
    t->clocks[t->nclocks].tick = tick;
    t->clocks[t->nclocks].real_ns = real;
    t->nclocks++;
}

static void keep_last(struct kv_tr_thread *th, const struct raw *r)
{
    struct kv_tr_rec *l = &th->last[th->nlast++ % KV_TR_LAST];
    l->tick = r->tick, l->type = r->type, l->id = r->id;
    l->peer = r->type == KV_TR_SENT || r->type == KV_TR_RECEIVED ? i32(r->x) : 0;
    l->tag = l->peer || r->type == KV_TR_SENT || r->type == KV_TR_RECEIVED
             ? i32(r->x + 4) : 0;
    l->bytes = l->tag || r->type == KV_TR_SENT || r->type == KV_TR_RECEIVED
               ? i64(r->x + 8) : 0;
    if (r->type == KV_TR_LEAVE && th->nopen)
        l->id = th->open[th->nopen - 1].id;  /* the region it leaves */
    l->comm = r->type == KV_TR_SENT || r->type == KV_TR_RECEIVED ? r->comm : 0;
}

struct scan {
    struct kv_trace_set *s;
    struct kv_trace *t;
    size_t regcap, clockcap;
    struct lcomm *lc;        /* the file's communicators, by id */
    size_t caplc;
};

/* A message's communicator, the file's own: counted, its first use kept
 * (its COMM records may come from any thread of the file). */
static void use_comm(struct scan *sc, const struct raw *r)
{
    if (r->comm >= sc->caplc) {
        size_t old = sc->caplc;
        KM_GROW(sc->lc, sc->caplc, r->comm + 1);
        memset(sc->lc + old, 0, (sc->caplc - old) * sizeof *sc->lc);
    }
    struct lcomm *c = &sc->lc[r->comm];
    if (!c->used_off)
        c->used_off = r->off;
    if (i32(r->x) < 0)
        c->collectives++;
}

static int scan_record(struct scan *sc, struct kv_tr_thread *th,
                       const struct raw *r)
{
    struct kv_trace *t = sc->t;
    if (r->type == KV_TR_REGION) {
        define_region(t, &sc->regcap, r);
        return 0;
    }
    if (r->type == KV_TR_CLOCK) {
        add_clock(t, &sc->clockcap, r->tick, i64(r->x));
        return 0;
    }
    if (r->type == KV_TR_COMM)
        return define_comm(t, &sc->lc, &sc->caplc, r);
    if (!th->any)
        th->first_tick = r->tick, th->any = true;
    th->last_tick = r->tick;
    th->events++;
    keep_last(th, r);
    switch (r->type) {
    case KV_TR_ENTER:
        th->enters++;
        region_row(t, &sc->regcap, r->id)->enters++;
        KM_GROW(th->open, th->capopen, th->nopen + 1);
        th->open[th->nopen].id = r->id;
        th->open[th->nopen].tick = r->tick;
        if (++th->nopen > th->max_depth)
            th->max_depth = th->nopen;
        break;
    case KV_TR_LEAVE:
        if (th->nopen)
            th->nopen--, th->leaves++;
        else
            th->stray_leaves++;
        break;
    case KV_TR_SENT:
    case KV_TR_RECEIVED:
        if (r->type == KV_TR_SENT)
            th->sent++;
        else
            th->received++;
        if (r->comm)
            use_comm(sc, r);
        if (i32(r->x) >= 0)
            count_message(sc->s, t, r->type, i32(r->x), i32(r->x + 4),
                          r->comm);
        else {
            sc->s->collectives++;
            if (!r->comm)
                sc->s->comms[0].collectives++;
        }
        break;
    case KV_TR_END:
        th->ended = true;
        th->end_signal = r->id;
        break;
    }
    return 0;
}

/* One block's records, by `each` (0 or -1). */
static int walk_block(struct kv_trace *t, unsigned char *buf, uint64_t off,
                      int (*each)(void *, const struct raw *), void *ctx)
{
    ssize_t len = read_at(t, buf, t->block_size, off);
    if (len < 0)
        return -1;
    size_t pos = 16, n = (size_t)len & ~(size_t)(REC - 1);
    struct raw r;
    int rc;
    while ((rc = next_record(t, buf, n, &pos, off, &r)) == 1)
        if ((rc = each(ctx, &r)) != 0)
            return rc;
    return rc;
}

struct scan_thread { struct scan *sc; struct kv_tr_thread *th; };

static int scan_one(void *ctx, const struct raw *r)
{
    struct scan_thread *st = ctx;
    return scan_record(st->sc, st->th, r);
}

static int by_tick(const void *a, const void *b)
{
    const struct kv_tr_clock *x = a, *y = b;
    return (x->tick > y->tick) - (x->tick < y->tick);
}

/* Calibrations by tick, one per tick. */
static void order_clocks(struct kv_trace *t)
{
    qsort(t->clocks, t->nclocks, sizeof *t->clocks, by_tick);
    size_t n = 0;
    for (size_t k = 0; k < t->nclocks; k++)
        if (n == 0 || t->clocks[k].tick != t->clocks[n - 1].tick)
            t->clocks[n++] = t->clocks[k];
    t->nclocks = n;
}

/* Ids entered that no REGION record of any thread defines. */
static void count_undefined(struct kv_trace *t)
{
    for (size_t k = 0; k < t->nregions; k++)
        if (!t->regions[k].name && t->regions[k].enters)
            t->undefined++;
}

static int scan_file(struct kv_trace_set *s, struct kv_trace *t)
{
    struct scan sc = { s, t, 0, 0, NULL, 0 };
    if (find_blocks(t))
        return -1;
    add_clock(t, &sc.clockcap, t->t0_tick, t->t0_real_ns);
    unsigned char *buf = km_xmalloc(t->block_size);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < t->nthreads; k++) {
        struct scan_thread st = { &sc, &t->threads[k] };
        for (size_t b = 0; rc == 0 && b < st.th->nblocks; b++)
            rc = walk_block(t, buf, st.th->blocks[b], scan_one, &st);
    }
    free(buf);
    order_clocks(t);
    count_undefined(t);
    if (finish_comms(s, t, sc.lc, sc.caplc))
        rc = -1;
    free(sc.lc);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Time                                                                      */

/* CLOCK_REALTIME in ns at a tick of t (absolute). */
static int64_t real_ns(const struct kv_trace *t, int64_t tick, size_t *hint)
{
    const struct kv_tr_clock *c = t->clocks;
    size_t n = t->nclocks;
    if (n < 2) {
        double spt = t->seconds_per_tick > 0 ? t->seconds_per_tick : 1e-9;
        return c[0].real_ns + llround((double)(tick - c[0].tick) * spt * 1e9);
    }
    size_t i = *hint < n - 1 ? *hint : 0;
    if (tick < c[i].tick)
        i = 0;
    while (i + 2 < n && tick >= c[i + 1].tick)
        i++;
    *hint = i;
    double slope = (double)(c[i + 1].real_ns - c[i].real_ns) /
                   (double)(c[i + 1].tick - c[i].tick);
    return c[i].real_ns + llround((double)(tick - c[i].tick) * slope);
}

int64_t kv_trace_ns(const struct kv_trace_set *s, const struct kv_trace *t,
                    int64_t tick)
{
    size_t hint = 0;
    return real_ns(t, tick, &hint) - s->origin_ns;
}

static void set_axis(struct kv_trace_set *s)
{
    bool any = false;
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < s->n; k++) {
        struct kv_trace *t = &s->t[k];
        for (size_t j = 0; j < t->nthreads; j++) {
            struct kv_tr_thread *th = &t->threads[j];
            s->events += th->events;
            if (!th->any)
                continue;
            size_t h = 0;
            int64_t a = real_ns(t, th->first_tick, &h);
            int64_t b = real_ns(t, th->last_tick, &h);
            if (!any || a < lo) lo = a;
            if (!any || b > hi) hi = b;
            any = true;
        }
    }
    s->origin_ns = lo;
    s->end_ns = hi - lo;
}

/* ------------------------------------------------------------------------ */
/* Regions over the files                                                    */

/* The key that tells regions apart across files. */
static char *region_key(const struct kv_trace *t, size_t id)
{
    const struct kv_tr_region *g = &t->regions[id - 1];
    struct km_buf b = { 0 };
    if (g->name)
        km_buf_printf(&b, "%d\037%d\037%s\037%s", g->kind, g->line,
                      g->name, g->file);
    else                                 /* no definition: its own */
        km_buf_printf(&b, "?\037%s\037%zu", t->path, id);
    return (char *)km_buf_cstr(&b);
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211u;
    return h;
}

/* Number every file's regions on the set, the same region once. */
static void unify_regions(struct kv_trace_set *s)
{
    size_t total = 0, cap = 16, used = 0;
    for (size_t k = 0; k < s->n; k++)
        total += s->t[k].nregions;
    while (cap < 2 * total)
        cap *= 2;
    struct { char *key; uint32_t g; } *tab = km_xcalloc(cap, sizeof *tab);
    s->regions = km_xcalloc(total + 1, sizeof *s->regions);
    for (size_t k = 0; k < s->n; k++) {
        struct kv_trace *t = &s->t[k];
        t->global = km_xcalloc(t->nregions + 1, sizeof *t->global);
        for (size_t id = 1; id <= t->nregions; id++) {
            if (!t->regions[id - 1].name && !t->regions[id - 1].enters) {
                t->global[id] = UINT32_MAX;  /* an id nothing uses */
                continue;
            }
            char *key = region_key(t, id);
            size_t i = (size_t)str_hash(key) & (cap - 1);
            while (tab[i].key && strcmp(tab[i].key, key))
                i = (i + 1) & (cap - 1);
            if (!tab[i].key) {
                tab[i].key = key;
                tab[i].g = (uint32_t)used;
                s->regions[used].t = t;
                s->regions[used++].id = (int32_t)id;
            } else
                free(key);
            t->global[id] = tab[i].g;
        }
    }
    s->nregions = used;
    for (size_t i = 0; i < cap; i++)
        free(tab[i].key);
    free(tab);
}

/* ------------------------------------------------------------------------ */
/* The set                                                                   */

static int open_file(struct kv_trace *t, const char *path, int position)
{
    t->path = km_xstrdup(path);
    t->fd = open(path, O_RDONLY);
    if (t->fd < 0) {
        kv_eprintf("%s: error: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(t->fd, &st) == 0)
        t->size = (uint64_t)st.st_size;
    t->proc = position;
    return 0;
}

static int by_proc(const void *a, const void *b)
{
    const struct kv_trace *x = a, *y = b;
    return (x->proc > y->proc) - (x->proc < y->proc);
}

int kv_trace_set_open(struct kv_trace_set *s, const char *const *paths,
                      size_t n)
{
    memset(s, 0, sizeof *s);
    s->t = km_xcalloc(n + 1, sizeof *s->t);
    s->chans = km_xcalloc(1, sizeof *s->chans);
    s->commtab = km_xcalloc(1, sizeof *s->commtab);
    KM_GROW(s->comms, s->commtab->cap, 1);
    memset(s->comms, 0, sizeof *s->comms);   /* 0: MPI_COMM_WORLD */
    s->ncomms = 1;
    for (size_t k = 0; k < n; k++)
        s->t[k].fd = -1;
    s->n = n;
    for (size_t k = 0; k < n; k++) {
        struct kv_trace *t = &s->t[k];
        if (open_file(t, paths[k], (int)k) || read_header(t))
            return -1;
        if (t->rank >= 0)
            t->proc = t->rank;
        for (size_t j = 0; j < k; j++)
            if (s->t[j].proc == t->proc) {
                kv_eprintf("%s: error: rank %d again (%s has it)\n",
                        t->path, t->proc, s->t[j].path);
                return -1;
            }
        if (scan_file(s, t))
            return -1;
        close(t->fd);            /* a pass opens it again: thousands of */
        t->fd = -1;              /* ranks must not need as many fds */
    }
    /* rank order, whatever order the shell gave (KM_trace.10 < .2) */
    qsort(s->t, s->n, sizeof *s->t, by_proc);
    unify_regions(s);
    number_comms(s);
    match_channels(s);
    set_axis(s);
    return 0;
}

void kv_trace_set_free(struct kv_trace_set *s)
{
    for (size_t k = 0; k < s->n; k++) {
        struct kv_trace *t = &s->t[k];
        if (t->fd >= 0)
            close(t->fd);
        for (size_t j = 0; j < t->nthreads; j++) {
            free(t->threads[j].blocks);
            free(t->threads[j].open);
        }
        for (size_t j = 0; j < t->nregions; j++) {
            free(t->regions[j].name);
            free(t->regions[j].file);
        }
        free(t->threads);
        free(t->regions);
        free(t->global);
        free(t->comm);
        chans_free(t->pending);
        free(t->clocks);
        free(t->path);
    }
    free(s->t);
    chans_free(s->chans);
    for (size_t k = 0; k < s->ncomms; k++) {
        free(s->comms[k].members);
        free(s->comms[k].by_world);
    }
    free(s->comms);
    if (s->commtab)
        free(s->commtab->slot);
    free(s->commtab);
    free(s->regions);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

struct open_region { int32_t id; int64_t ns; };

struct cursor {
    struct kv_trace_set *s;
    struct kv_trace *t;
    struct kv_tr_thread *th;
    kv_tr_fn fn;
    void *ctx;
    size_t hint;
    int64_t prev_ns;
    struct open_region *stack;
    size_t depth, cap;
    /* the last region left, while only messages have followed it */
    bool left;
    int32_t left_id;
    int left_depth;
    int64_t left_enter_ns, left_ns;
};

/* A message's MPI call: the region just left when the record follows its
 * LEAVE (libkm's order), else none. */
static void message_call(struct cursor *c, struct kv_tr_event *e)
{
    e->call_depth = -1;
    if (c->left && c->left_id == e->id) {
        e->call_depth = c->left_depth;
        e->call_enter_ns = c->left_enter_ns;
        e->call_leave_ns = c->left_ns;
    }
}

static int deliver(void *ctx, const struct raw *r)
{
    struct cursor *c = ctx;
    if (r->type == KV_TR_REGION || r->type == KV_TR_CLOCK ||
        r->type == KV_TR_COMM)
        return 0;
    struct kv_tr_event e = { 0 };
    e.type = r->type;
    e.id = r->id;
    e.tick = r->tick;
    e.ns = real_ns(c->t, r->tick, &c->hint) - c->s->origin_ns;
    if (e.ns < c->prev_ns)
        e.ns = c->prev_ns;           /* a clock stepped back: keep order */
    c->prev_ns = e.ns;
    e.flow = -1;
    e.depth = (int)c->depth;
    if (r->type != KV_TR_SENT && r->type != KV_TR_RECEIVED)
        c->left = false;
    switch (r->type) {
    case KV_TR_ENTER:
        KM_GROW(c->stack, c->cap, c->depth + 1);
        c->stack[c->depth].id = r->id;
        c->stack[c->depth++].ns = e.ns;
        break;
    case KV_TR_LEAVE:
        if (c->depth == 0)
            return 0;                /* counted by the scan as stray */
        c->depth--;
        e.id = c->stack[c->depth].id;
        e.enter_ns = c->stack[c->depth].ns;
        e.depth = (int)c->depth;
        c->left = true;
        c->left_id = e.id, c->left_depth = e.depth;
        c->left_enter_ns = e.enter_ns, c->left_ns = e.ns;
        break;
    case KV_TR_SENT:
    case KV_TR_RECEIVED:
        e.peer = i32(r->x);
        e.tag = i32(r->x + 4);
        e.bytes = i64(r->x + 8);
        e.comm = r->comm == 0 ? 0 : r->comm < c->t->ncomm
                 ? c->t->comm[r->comm] : UINT32_MAX;
        e.flow = flow_id(c->s, c->t, r->type, e.peer, e.tag, r->comm);
        message_call(c, &e);
        break;
    }
    return c->fn(c->ctx, c->t, c->th, &e);
}

int64_t kv_trace_message_ns(const struct kv_tr_event *e)
{
    if (e->call_depth < 0)
        return e->ns;
    return e->call_leave_ns > e->call_enter_ns ? e->call_leave_ns - 1
                                               : e->call_enter_ns;
}

/* The regions still open at the thread's end, closed at its last event. */
static int close_open(struct cursor *c)
{
    int rc = 0;
    while (rc == 0 && c->depth) {
        c->depth--;
        struct kv_tr_event e = { 0 };
        e.type = KV_TR_LEAVE;
        e.id = c->stack[c->depth].id;
        e.enter_ns = c->stack[c->depth].ns;
        e.ns = c->prev_ns;
        e.tick = c->th->last_tick;
        e.depth = (int)c->depth;
        e.flow = -1;
        e.at_end = true;
        rc = c->fn(c->ctx, c->t, c->th, &e);
    }
    return rc;
}

int kv_trace_each(struct kv_trace_set *s, struct kv_trace *t,
                  struct kv_tr_thread *th, kv_tr_fn fn, void *ctx)
{
    struct cursor c = { .s = s, .t = t, .th = th, .fn = fn, .ctx = ctx,
                        .prev_ns = INT64_MIN };
    if (th->nblocks == 0)
        return close_open(&c);
    t->fd = open(t->path, O_RDONLY);
    if (t->fd < 0) {
        kv_eprintf("%s: error: cannot open: %s\n", t->path,
                strerror(errno));
        return -1;
    }
    unsigned char *buf = km_xmalloc(t->block_size);
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < th->nblocks; b++)
        rc = walk_block(t, buf, th->blocks[b], deliver, &c);
    if (rc == 0)
        rc = close_open(&c);
    close(t->fd);
    t->fd = -1;
    free(buf);
    free(c.stack);
    return rc;
}
