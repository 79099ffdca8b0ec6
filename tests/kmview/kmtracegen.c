/*
 * kmtracegen.c — writes KM_trace files (doc/KM_trace.md, format 2) of
 * known content for kmview's trace tests and benchmarks, as libkm will:
 * blocks claimed by threads in turn, a REGION record before a region's
 * first ENTER on each thread, a CLOCK record at the start of every block
 * and at the end, a message's SENT or RECEIVED right after its MPI
 * call's LEAVE, and at the end an END on thread 0 followed by the LEAVEs
 * of the regions it still has open.  Deterministic: the same options
 * give the same bytes.
 *
 *   kmtracegen [options] DIR      writes DIR/KM_trace.<rank>, and
 *                                 DIR/expect: "key value" lines
 *     --ranks N       ranks (default 2)
 *     --threads T     threads per rank (default 1); threads past 0 run an
 *                     OpenMP construct around the same calls
 *     --depth D       regions nested (default 4: MAIN, a DO, SUB1, SUB2..)
 *     --events E      events per thread, about (default 1000)
 *     --messages M    point-to-point messages each rank sends on thread 0
 *                     to the next rank in a ring, tags 0..2; rank 1
 *                     receives from rank 0 with tag -1 (not known); every
 *                     4th message also an MPI_ALLREDUCE (default 10)
 *     --killed        the run killed: every rank stops part-way (rank r
 *                     after (60 + 10 r)% of its events), no END, regions
 *                     left open, state running, the file cut after its
 *                     last block's used part
 *     --undefined     thread 0 of rank 0 enters region 999, which no
 *                     record defines
 *     --comms         two communicators besides MPI_COMM_WORLD, with
 *                     COMM records (ids that differ from rank to rank):
 *                     "sub", ranks m-1 .. 0 (m: half the ranks, at least
 *                     2), whose ranks also send every message to the next
 *                     one on it (the same pairs and tags as the ring's,
 *                     other bytes; received before the ring's, as MPI
 *                     allows on another communicator) and call
 *                     MPI_BARRIER on it every 5th; and "all", every rank
 *                     in reverse order (several COMM records past 1016
 *                     ranks), defined by the last thread with an
 *                     MPI_BCAST on it at the start, and on which thread
 *                     0 sends its 2nd message's once more (tag 7)
 *   The other threads' regions are closed before the end, as an OpenMP
 *   construct ends before the program does; they have no END.
 *
 * expect holds what a reader must find, counted here, independently of
 * kmview: per rank r and thread t "r.t.events", ".enters", ".leaves",
 * ".sent", ".received", ".open" (regions open at the end), ".depth" (the
 * deepest nesting); and "events", "regions" (every ENTER, each a complete
 * event once the open ones are closed), "matched" (messages with a
 * partner), "unmatched_sent", "unmatched_received", "collectives"
 * (SENT and RECEIVED with peer -1); with --comms "comms" (2), and per
 * communicator c (0 MPI_COMM_WORLD, 1 sub, 2 all, numbered as kmview
 * does: by rank 0's ids) "comm.c.size", ".matched", ".unmatched",
 * ".collectives".  Must never include kmview's code.
 */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BS 262144
#define REC 16
#define MAXDEPTH 64
#define NREG 16

enum { ENTER = 1, LEAVE, SENT, RECEIVED, REGION, CLOCK, END, COMM };

#define COMM_MEMBERS 1016        /* per COMM record, at most */

struct opts {
    int ranks, threads, depth, messages;
    long events;
    bool killed, undefined, comms;
};

struct thr {
    unsigned char *blk;      /* the block being filled */
    size_t used;             /* bytes of it */
    long index;              /* its place among the data blocks */
    uint64_t seq;
    int64_t tick;
    long events, enters, leaves, sent, received;
    int stack[MAXDEPTH], depth, maxdepth;
    long stop;               /* events after which a killed run stops */
    bool stopped;
};

struct rank {
    int r, fd;
    long nblocks;
    bool (*defined)[1000];   /* per thread */
    double spt;
    int64_t real0;
    struct thr *th;
};

/* Message counts per channel of the ring, from -> from + 1, and tag + 1;
 * tag -1 folds a pair; per communicator (0 world, 1 sub, 2 all). */
static long (*nsent[3])[9], (*nrecv[3])[9];
static long collectives, comm_coll[3];
static int sub_size;             /* --comms: the sub-communicator's ranks */

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    if (!p) { perror("kmtracegen"); exit(1); }
    return p;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static int64_t real_of(const struct rank *k, int64_t tick)
{
    return k->real0 + (int64_t)llround((double)tick * k->spt * 1e9);
}

static void flush_block(struct rank *k, struct thr *t, size_t len)
{
    off_t off = (off_t)(1 + t->index) * BS;
    if (pwrite(k->fd, t->blk, len, off) != (ssize_t)len) {
        perror("kmtracegen: write");
        exit(1);
    }
}

static void record(struct rank *k, int tn, int type, int extra, int32_t id,
                   int comm, const unsigned char *slots);

/* Claim the thread's next block: header, then a CLOCK record. */
static void claim(struct rank *k, int tn)
{
    struct thr *t = &k->th[tn];
    if (t->blk && t->used)
        flush_block(k, t, BS);
    memset(t->blk, 0, BS);
    t->index = k->nblocks++;
    put32(t->blk, 0x42544d4bu);
    put32(t->blk + 4, (uint32_t)tn);
    put64(t->blk + 8, t->seq++);
    t->used = 16;
    unsigned char c[16];
    put64(c, (uint64_t)real_of(k, t->tick));
    put64(c + 8, (uint64_t)t->tick);
    record(k, tn, CLOCK, 1, 0, 0, c);
}

static void record(struct rank *k, int tn, int type, int extra, int32_t id,
                   int comm, const unsigned char *slots)
{
    struct thr *t = &k->th[tn];
    size_t need = REC * (size_t)(1 + extra);
    if (t->used + need > BS)
        claim(k, tn);
    unsigned char *p = t->blk + t->used;
    if (extra)                       /* (slots is NULL without: UBSan) */
        memcpy(p + REC, slots, REC * (size_t)extra);
    put64(p, type == REGION ? 0 : (uint64_t)t->tick);
    p[9] = (unsigned char)extra;
    p[10] = (unsigned char)(comm & 0xff);
    p[11] = (unsigned char)(comm >> 8);
    put32(p + 12, (uint32_t)id);
    p[8] = (unsigned char)type;      /* last: makes the record valid */
    t->used += need;
}

/* Regions: 1 MAIN, 2 the DO, 3.. SUBn, 10 send, 11 receive, 12 allreduce,
 * 13 the OpenMP construct, 14 send and 15 receive on a communicator, 16
 * its barrier, 17 its broadcast. */
static void region_def(int id, int *kind, int *line, int *routine,
                       char *text, size_t size)
{
    *routine = 1;
    if (id == 1) { *kind = 1; *line = 1; snprintf(text, size, "MAIN"); }
    else if (id == 2) { *kind = 10; *line = 20; snprintf(text, size, "DO 10 IT = 1, N"); }
    else if (id >= 3 && id < 10) {
        *kind = 2; *line = 100 * id; *routine = id;
        snprintf(text, size, "SUB%d", id - 2);
    } else if (id == 10) { *kind = 12; *line = 30; snprintf(text, size, "CALL MPI_SEND(A, N, MPI_REAL8, NEXT, TAG, COMM, IERR)"); }
    else if (id == 11) { *kind = 12; *line = 31; snprintf(text, size, "CALL MPI_RECV(B, N, MPI_REAL8, PREV, TAG, COMM, ST, IERR)"); }
    else if (id == 12) { *kind = 12; *line = 32; snprintf(text, size, "CALL MPI_ALLREDUCE(X, Y, 1, MPI_REAL8, MPI_SUM, COMM, IERR)"); }
    else if (id == 14) { *kind = 12; *line = 50; snprintf(text, size, "CALL MPI_SEND(C, N, MPI_REAL8, TO, TAG, SUB, IERR)"); }
    else if (id == 15) { *kind = 12; *line = 51; snprintf(text, size, "CALL MPI_RECV(D, N, MPI_REAL8, FROM, TAG, SUB, ST, IERR)"); }
    else if (id == 16) { *kind = 12; *line = 52; snprintf(text, size, "CALL MPI_BARRIER(SUB, IERR)"); }
    else if (id == 17) { *kind = 12; *line = 53; snprintf(text, size, "CALL MPI_BCAST(N, 1, MPI_INTEGER, 0, ALL, IERR)"); }
    else { *kind = 15; *line = 40; snprintf(text, size, "!$OMP PARALLEL DO"); }
}

static void define(struct rank *k, int tn, int id)
{
    if (id >= 999 || k->defined[tn][id])  /* 999: --undefined */
        return;
    k->defined[tn][id] = true;
    int kind, line, routine;
    char name[128], text[256];
    region_def(id, &kind, &line, &routine, name, sizeof name);
    int n = snprintf(text, sizeof text, "%s%c%s", name, 0,
                     id >= 3 && id < 10 ? "subs.f" : "main.f");
    n += 1;                                  /* the file's NUL */
    int slots = 1 + (n + REC - 1) / REC;
    unsigned char x[REC * 20] = { 0 };
    put32(x, (uint32_t)kind);
    put32(x + 4, (uint32_t)line);
    put32(x + 8, (uint32_t)routine);
    put32(x + 12, (uint32_t)n);
    memcpy(x + REC, text, (size_t)n);
    record(k, tn, REGION, slots, id, 0, x);
}

static bool done(struct thr *t) { return t->stopped; }

static void tick(struct rank *k, int tn)
{
    struct thr *t = &k->th[tn];
    t->tick += 200 + (int64_t)((t->events * 7919 + k->r * 31 + tn) % 97);
}

/* One event; a killed run's thread stops taking them at its stop. */
static bool event(struct rank *k, int tn, int type, int32_t id, int comm,
                  const unsigned char *slot)
{
    struct thr *t = &k->th[tn];
    if (t->stopped || (t->stop >= 0 && t->events >= t->stop)) {
        t->stopped = true;
        return false;
    }
    tick(k, tn);
    if (type == ENTER)
        define(k, tn, id);
    record(k, tn, type, slot ? 1 : 0, id, comm, slot);
    t->events++;
    if (type == ENTER) {
        t->enters++;
        t->stack[t->depth++] = id;
        if (t->depth > t->maxdepth)
            t->maxdepth = t->depth;
    } else if (type == LEAVE) {
        t->leaves++;
        t->depth--;
    }
    return true;
}

static void enter(struct rank *k, int tn, int id) { event(k, tn, ENTER, id, 0, NULL); }
static void leave(struct rank *k, int tn)
{
    struct thr *t = &k->th[tn];
    if (t->depth)
        event(k, tn, LEAVE, t->stack[t->depth - 1], 0, NULL);
}

/* The file's id of communicator c (1 sub, 2 all): another on each rank. */
static int comm_id(const struct rank *k, int c)
{
    return c == 1 ? 1 + k->r % 3 : 10 + k->r % 4;
}

/* A call at site `id` moving a message on communicator c (0 world, 1
 * sub, 2 all): its region, then the record. */
static void message(struct rank *k, int tn, int id, int type, int peer,
                    int tag, long bytes, int c)
{
    unsigned char x[16];
    enter(k, tn, id);
    leave(k, tn);
    put32(x, (uint32_t)peer);
    put32(x + 4, (uint32_t)tag);
    put64(x + 8, (uint64_t)bytes);
    if (!event(k, tn, type, id, c ? comm_id(k, c) : 0, x))
        return;
    struct thr *t = &k->th[tn];
    if (type == SENT) t->sent++; else t->received++;
    if (peer < 0) {
        collectives++;
        comm_coll[c]++;
        return;
    }
    int from = type == SENT ? k->r : peer, to = type == SENT ? peer : k->r;
    (void)to;                        /* the ring's: from + 1 */
    if (type == SENT) nsent[c][from][tag + 1]++;
    else nrecv[c][from][tag + 1]++;
}

/* COMM records of communicator c (1 sub, 2 all): members world ranks
 * n-1 .. 0, at most COMM_MEMBERS a record. */
static void define_comm(struct rank *k, int tn, int c, int n)
{
    static unsigned char x[REC * 256];
    for (int first = 0; first < n; first += COMM_MEMBERS) {
        int count = n - first < COMM_MEMBERS ? n - first : COMM_MEMBERS;
        memset(x, 0, sizeof x);
        put32(x, (uint32_t)n);
        put32(x + 4, (uint32_t)first);
        put32(x + 8, (uint32_t)count);
        put32(x + 12, 0);
        for (int j = 0; j < count; j++)
            put32(x + REC + 4 * j, (uint32_t)(n - 1 - (first + j)));
        record(k, tn, COMM, 1 + (count + 3) / 4, comm_id(k, c), 0, x);
    }
}

/* Message i of rank r: to the next rank, from the previous one. */
static void exchange(struct rank *k, int tn, int i, int nranks, int depth)
{
    int next = (k->r + 1) % nranks, prev = (k->r + nranks - 1) % nranks;
    long bytes = 8L * (i + 1);
    if (k->th[tn].depth >= depth)
        return;
    bool sub = sub_size && k->r < sub_size;
    int snext = sub ? (k->r + 1) % sub_size : 0;     /* (no sub: no % 0) */
    int sprev = sub ? (k->r + sub_size - 1) % sub_size : 0;
    if (sub && i == 0)
        define_comm(k, tn, 1, sub_size);
    message(k, tn, 10, SENT, next, i % 3, bytes, 0);
    if (sub) {                   /* the same pairs, received first */
        message(k, tn, 14, SENT, snext, i % 3, 1000 + bytes, 1);
        message(k, tn, 15, RECEIVED, sprev, i % 3, 1000 + bytes, 1);
    }
    message(k, tn, 11, RECEIVED, prev, k->r == 1 ? -1 : i % 3, bytes, 0);
    if (i % 4 == 3)
        message(k, tn, 12, SENT, -1, -1, 8, 0);     /* a collective */
    if (sub && i % 5 == 4)
        message(k, tn, 16, SENT, -1, -1, 0, 1);
    if (sub_size && i == 1) {    /* once more on "all", tag 7 */
        message(k, tn, 10, SENT, next, 7, 16, 2);
        message(k, tn, 11, RECEIVED, prev, 7, 16, 2);
    }
}

/* One iteration of a thread: SUB1 .. down to the depth, a message on
 * thread 0 while any are left, back up. */
static void iteration(struct rank *k, int tn, long it, const struct opts *o)
{
    struct thr *t = &k->th[tn];
    int base = t->depth;
    for (int d = base; d < o->depth - (tn == 0 && it < o->messages ? 1 : 0) && d - base < 7; d++)
        enter(k, tn, 3 + (d - base));
    if (tn == 0 && it < o->messages)
        exchange(k, tn, (int)it, o->ranks, o->depth);
    if (o->undefined && k->r == 0 && tn == 0 && it == 1) {
        event(k, tn, ENTER, 999, 0, NULL);
        leave(k, tn);
    }
    while (t->depth > base && !done(t))
        leave(k, tn);
}

static void write_header(struct rank *k, const struct opts *o, bool killed)
{
    unsigned char h[BS];
    memset(h, 0, sizeof h);
    memcpy(h, "kmtool-trace", 12);
    put32(h + 16, 2);
    put32(h + 20, 0x01020304u);
    put32(h + 24, BS);
    put32(h + 28, REC);
    put32(h + 32, (uint32_t)k->r);
    put32(h + 36, (uint32_t)o->ranks);
    put64(h + 40, (uint64_t)(4000 + k->r));
    double spt = 0.4e-9;
    memcpy(h + 48, &spt, 8);
    put64(h + 56, 1000);
    put64(h + 64, (uint64_t)real_of(k, 1000));
    put64(h + 72, (uint64_t)k->nblocks);
    put32(h + 80, killed ? 1 : 2);
    put64(h + 96, 4096ull << 20);
    strcpy((char *)h + 104, "TSC (kmtracegen)");
    strcpy((char *)h + 168, "./kmtracegen.x");
    if (pwrite(k->fd, h, 512, 0) != 512) {   /* the zeros after: a hole */
        perror("kmtracegen: header");
        exit(1);
    }
}

static void run_rank(struct rank *k, const struct opts *o, FILE *ex)
{
    k->th = xcalloc((size_t)o->threads, sizeof *k->th);
    k->defined = xcalloc((size_t)o->threads, sizeof *k->defined);
    k->spt = 0.4e-9 * (1 + k->r * 1e-5);
    k->real0 = 1700000000000000000LL + k->r * 1000;
    for (int tn = 0; tn < o->threads; tn++) {
        struct thr *t = &k->th[tn];
        t->blk = xcalloc(BS, 1);
        t->tick = 1000 + tn * 50;
        t->stop = o->killed ? o->events * (60 + 10 * k->r) / 100 : -1;
    }
    for (int tn = 0; tn < o->threads; tn++)   /* claimed in turn */
        claim(k, tn);
    for (int tn = 0; tn < o->threads; tn++) {
        enter(k, tn, tn == 0 ? 1 : 13);
        if (tn == 0)
            enter(k, tn, 2);
    }
    if (o->comms) {              /* "all": defined by the last thread */
        define_comm(k, o->threads - 1, 2, o->ranks);
        message(k, o->threads - 1, 17, SENT, -1, -1, 8, 2);
    }
    /* round robin so that the threads' blocks interleave as libkm's do */
    bool more = true;
    for (long it = 0; more; it++) {
        more = false;
        for (int tn = 0; tn < o->threads; tn++) {
            struct thr *t = &k->th[tn];
            if (t->stopped || t->events >= o->events - 2 * (long)t->depth - 2)
                continue;
            iteration(k, tn, it, o);
            more = more || !t->stopped;
        }
    }
    for (int tn = o->killed ? o->threads : 1; tn < o->threads; tn++)
        while (k->th[tn].depth)
            leave(k, tn);
    if (!o->killed) {                 /* END, then what thread 0 left open */
        struct thr *t = &k->th[0];
        event(k, 0, END, 0, 0, NULL);
        while (t->depth)
            leave(k, 0);
        unsigned char c[16];
        put64(c, (uint64_t)real_of(k, t->tick));
        put64(c + 8, (uint64_t)t->tick);
        record(k, 0, CLOCK, 1, 0, 0, c);
    }
    /* partial blocks: whole (zeros after the used part), except that a
     * killed run's file ends after its last block's used part */
    long last = -1;
    int lastt = 0;
    for (int tn = 0; tn < o->threads; tn++)
        if (k->th[tn].index > last)
            last = k->th[tn].index, lastt = tn;
    for (int tn = 0; tn < o->threads; tn++)   /* the zeros after: holes */
        flush_block(k, &k->th[tn], k->th[tn].used);
    if (o->killed) {
        if (ftruncate(k->fd, (off_t)(1 + last) * BS + (off_t)k->th[lastt].used))
            perror("kmtracegen: ftruncate");
    } else if (ftruncate(k->fd, (off_t)(1 + ((k->nblocks + 63) / 64) * 64) * BS))
        perror("kmtracegen: ftruncate");  /* as libkm grows: 64 blocks */
    write_header(k, o, o->killed);
    for (int tn = 0; tn < o->threads; tn++) {
        struct thr *t = &k->th[tn];
        fprintf(ex, "%d.%d.events %ld\n%d.%d.enters %ld\n%d.%d.leaves %ld\n"
                "%d.%d.sent %ld\n%d.%d.received %ld\n%d.%d.open %d\n"
                "%d.%d.depth %d\n", k->r, tn, t->events, k->r, tn, t->enters,
                k->r, tn, t->leaves, k->r, tn, t->sent, k->r, tn, t->received,
                k->r, tn, t->depth, k->r, tn, t->maxdepth);
        free(t->blk);
    }
}

static long arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "kmtracegen: %s needs a value\n", argv[*i]);
        exit(2);
    }
    return strtol(argv[++*i], NULL, 10);
}

int main(int argc, char **argv)
{
    struct opts o = { 2, 1, 4, 10, 1000, false, false, false };
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ranks")) o.ranks = (int)arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--threads")) o.threads = (int)arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--depth")) o.depth = (int)arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--events")) o.events = arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--messages")) o.messages = (int)arg(argc, argv, &i);
        else if (!strcmp(argv[i], "--killed")) o.killed = true;
        else if (!strcmp(argv[i], "--undefined")) o.undefined = true;
        else if (!strcmp(argv[i], "--comms")) o.comms = true;
        else if (argv[i][0] != '-' && !dir) dir = argv[i];
        else { fprintf(stderr, "kmtracegen: bad argument %s\n", argv[i]); return 2; }
    }
    if (!dir || o.ranks < 1 || o.ranks > 100000 || o.threads < 1 || o.depth < 3 ||
        o.depth > 9 || o.events < 10 || (o.comms && o.ranks < 2)) {
        fputs("usage: kmtracegen [--ranks N<=100000] [--threads T] [--depth 3..9] "
              "[--events E>=10] [--messages M] [--killed] [--undefined] "
              "[--comms (2 ranks at least)] DIR\n", stderr);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/expect", dir);
    FILE *ex = fopen(path, "w");
    if (!ex) { perror(path); return 1; }
    long events = 0, regions = 0;
    for (int c = 0; c < 3; c++) {
        nsent[c] = xcalloc((size_t)o.ranks, sizeof *nsent[c]);
        nrecv[c] = xcalloc((size_t)o.ranks, sizeof *nrecv[c]);
    }
    if (o.comms)
        sub_size = o.ranks / 2 > 2 ? o.ranks / 2 : 2;
    for (int r = 0; r < o.ranks; r++) {
        struct rank k = { 0 };
        k.r = r;
        snprintf(path, sizeof path, "%s/KM_trace.%d", dir, r);
        k.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (k.fd < 0) { perror(path); return 1; }
        run_rank(&k, &o, ex);
        for (int tn = 0; tn < o.threads; tn++)
            events += k.th[tn].events, regions += k.th[tn].enters;
        close(k.fd);
        free(k.th);
        free(k.defined);
    }
    long matched = 0, us = 0, ur = 0;
    for (int c = 0; c < 3; c++) {
        long cm = 0, cu = 0;
        for (int a = 0; a < o.ranks; a++) {
            long *ns = nsent[c][a], *nr = nrecv[c][a];
            bool fold = ns[0] || nr[0];
            long s = 0, rv = 0;
            for (int g = 0; g < 9; g++) {
                if (fold) { s += ns[g]; rv += nr[g]; continue; }
                long m = ns[g] < nr[g] ? ns[g] : nr[g];
                cm += m, us += ns[g] - m, ur += nr[g] - m;
                cu += ns[g] + nr[g] - 2 * m;
            }
            if (fold) {
                long m = s < rv ? s : rv;
                cm += m, us += s - m, ur += rv - m, cu += s + rv - 2 * m;
            }
        }
        matched += cm;
        if (o.comms)
            fprintf(ex, "comm.%d.size %d\ncomm.%d.matched %ld\n"
                    "comm.%d.unmatched %ld\ncomm.%d.collectives %ld\n", c,
                    c == 0 ? o.ranks : c == 1 ? sub_size : o.ranks, c, cm,
                    c, cu, c, comm_coll[c]);
        free(nsent[c]);
        free(nrecv[c]);
    }
    if (o.comms)
        fprintf(ex, "comms 2\n");
    fprintf(ex, "events %ld\nregions %ld\nmatched %ld\nunmatched_sent %ld\n"
            "unmatched_received %ld\ncollectives %ld\n", events, regions,
            matched, us, ur, collectives);
    fclose(ex);
    return 0;
}
