/*
 * traceotf2.c — kmview trace --otf2=DIR: the trace set as an OTF2 archive
 * (DIR/traces.otf2, traces.def, traces/), written with the OTF2 library's
 * serial writer.  doc/KM_trace.md ("As OTF2") says how kmtool's events
 * map; in short:
 *
 * Locations are (rank, thread): location thread << 32 | rank, as Score-P
 * numbers them, in location group `rank` (a process) under one system
 * tree node.  One location is written at a time, straight from
 * kv_trace_each, so memory is at most 16 OTF2 chunks of 1 MiB and the
 * definition tables whatever the number of events; the definitions last,
 * when the events have named every region.  Regions are global: the same
 * (kind, name, file, line) on several ranks is one OTF2 region.
 *
 * A SENT or RECEIVED follows its MPI call's LEAVE, so that LEAVE is held
 * back until the next event and the messages go inside the call: MpiSend
 * at the call's start, MpiRecv at its end, a collective (by the call's
 * routine: MPI_BCAST, ...) as MpiCollectiveBegin at the start and
 * MpiCollectiveEnd at the end with the bytes, on the message's
 * communicator: MPI_COMM_WORLD, or one OTF2 communicator per other
 * communicator of the set (trace.h: the same member list on every rank),
 * its group its members' indices into MPI_COMM_WORLD's locations, a peer
 * given as its rank in it (an intercommunicator's messages go on
 * MPI_COMM_WORLD, with world ranks: the trace lists only its remote
 * group).  The two events of a matched message carry the sender's bytes and the tag
 * known on either side (a first pass over the threads with messages, 12
 * bytes per matched message); a tag known nowhere is
 * OTF2_UNDEFINED_UINT32.
 *
 * Without the OTF2 library (configure found none) only the stubs remain.
 * Must never: write into DIR anything but the archive, leave part of an
 * archive behind, or hold a thread's events.
 */
#include "config.h"

#include "kmview/trace/traceotf2.h"

#include <stdio.h>

#ifndef KM_HAVE_OTF2

bool kv_trace_otf2_available(void) { return false; }

int kv_trace_otf2(const char *dir, struct kv_trace_set *s)
{
    (void)s;
    kv_eprintf("%s: error: this kmview was built without OTF2 "
            "(configure found no OTF2 library)\n", dir);
    return -1;
}

#else

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "kmview/write/out.h"
#include "support/buf.h"

#define NAME "traces"
#define COMM_WORLD ((OTF2_CommRef)0)
#define GROUP_LOCATIONS ((OTF2_GroupRef)0)
#define GROUP_WORLD ((OTF2_GroupRef)1)

bool kv_trace_otf2_available(void) { return true; }

/* ------------------------------------------------------------------------ */
/* Interned keys: a key's index, the same for the same text                 */

struct intern {
    char **keys;
    size_t n, cap;
    uint32_t *slot;          /* index + 1; 0 free */
    size_t nslot;
};

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

static void intern_rehash(struct intern *t)
{
    free(t->slot);
    t->nslot = t->nslot ? 2 * t->nslot : 256;
    t->slot = km_xcalloc(t->nslot, sizeof *t->slot);
    for (size_t k = 0; k < t->n; k++) {
        size_t i = hash(t->keys[k]) & (t->nslot - 1);
        while (t->slot[i])
            i = (i + 1) & (t->nslot - 1);
        t->slot[i] = (uint32_t)k + 1;
    }
}

static uint32_t intern(struct intern *t, const char *key, bool *added)
{
    if (2 * (t->n + 1) > t->nslot)
        intern_rehash(t);
    size_t i = hash(key) & (t->nslot - 1);
    for (; t->slot[i]; i = (i + 1) & (t->nslot - 1))
        if (strcmp(t->keys[t->slot[i] - 1], key) == 0) {
            *added = false;
            return t->slot[i] - 1;
        }
    KM_GROW(t->keys, t->cap, t->n + 1);
    t->keys[t->n] = km_xstrdup(key);
    t->slot[i] = (uint32_t)++t->n;
    *added = true;
    return (uint32_t)t->n - 1;
}

static void intern_free(struct intern *t)
{
    for (size_t k = 0; k < t->n; k++)
        free(t->keys[k]);
    free(t->keys);
    free(t->slot);
}

/* ------------------------------------------------------------------------ */
/* The writer's state                                                        */

struct region {
    OTF2_StringRef name, canonical, description, file;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
    uint32_t line;
    bool mpi;
    int op;                  /* an OTF2_COLLECTIVE_OP_*, or -1 */
};

struct location {
    OTF2_LocationRef ref;
    int proc, thread;
    uint64_t events;
};

/* A region open on the thread being written: a collective's bytes
 * recorded inside it (the format puts them after its LEAVE; a generator
 * of traces may put them before). */
struct open {
    OTF2_RegionRef region;
    uint64_t sent, received;
    OTF2_CommRef comm;       /* a collective's */
};

/* An MPI call's LEAVE held back for the messages that follow it. */
struct held {
    bool on;
    OTF2_RegionRef region;
    uint64_t enter, leave;   /* timestamps */
    uint64_t sent, received; /* a collective's bytes */
    OTF2_CommRef comm;       /* ... and communicator */
};

struct ow {
    const char *dir;
    struct kv_trace_set *s;
    OTF2_Archive *archive;
    OTF2_EvtWriter *evt;     /* the location being written */
    struct intern strings, keys;
    struct region *regions;  /* by region ref (keys' index) */
    size_t capregions;
    uint32_t *map;           /* the current file's id -> region ref + 1 */
    size_t nmap;
    int32_t *flow_tag;       /* per matched message: its tag, -1 none */
    int64_t *flow_bytes;     /* ... the sender's bytes, -1 not seen */
    struct location *locs;
    size_t nlocs, caplocs;
    struct held held;
    struct open *stack;      /* the regions open, outermost first */
    size_t depth, capstack;
    uint64_t last, first_ts, max_ts;
    bool any_ts, comm_used;
    int32_t max_peer;
    unsigned paradigms;      /* 1 << OTF2_PARADIGM_* used */
    uint64_t dropped;        /* message records with no peer outside a
                                collective call */
    char otf2_msg[512];      /* the OTF2 library's last error */
};

static int otf2_failed(struct ow *w, OTF2_ErrorCode rc, const char *what)
{
    kv_eprintf("%s: error: OTF2 %s failed: %s%s%s\n", w->dir, what,
            OTF2_Error_GetDescription(rc), w->otf2_msg[0] ? ": " : "",
            w->otf2_msg);
    return -1;
}

#define OK(w, call, what)                                                 \
    do {                                                                  \
        OTF2_ErrorCode ok_rc_ = (call);                                   \
        if (ok_rc_ != OTF2_SUCCESS)                                       \
            return otf2_failed((w), ok_rc_, (what));                      \
    } while (0)

static OTF2_ErrorCode on_otf2_error(void *data, const char *file,
                                    uint64_t line, const char *function,
                                    OTF2_ErrorCode code, const char *fmt,
                                    va_list va)
{
    struct ow *w = data;
    (void)file, (void)line, (void)function;
    vsnprintf(w->otf2_msg, sizeof w->otf2_msg, fmt ? fmt : "", va);
    return code;
}

static OTF2_FlushType pre_flush(void *data, OTF2_FileType type,
                                OTF2_LocationRef loc, void *caller,
                                bool final)
{
    (void)data, (void)type, (void)loc, (void)caller, (void)final;
    return OTF2_FLUSH;
}

/* OTF2's chunks: at most MAX_CHUNKS per writer, then a NULL makes OTF2
 * write them out (pre_flush) and free them (free_chunks).  Its own pool
 * would hold up to 128 MiB of a location before writing any. */
#define MAX_CHUNKS 16

struct chunks { size_t n; void *p[MAX_CHUNKS]; };

static void *new_chunk(void *data, OTF2_FileType type, OTF2_LocationRef loc,
                       void **per_buffer, uint64_t size)
{
    (void)data, (void)type, (void)loc;
    struct chunks *c = *per_buffer;
    if (!c)
        c = *per_buffer = km_xcalloc(1, sizeof *c);
    if (c->n == MAX_CHUNKS)
        return NULL;
    return c->p[c->n++] = km_xmalloc((size_t)size);
}

static void free_chunks(void *data, OTF2_FileType type, OTF2_LocationRef loc,
                        void **per_buffer, bool final)
{
    (void)data, (void)type, (void)loc;
    struct chunks *c = *per_buffer;
    if (!c)
        return;
    for (size_t k = 0; k < c->n; k++)
        free(c->p[k]);
    c->n = 0;
    if (final) {
        free(c);
        *per_buffer = NULL;
    }
}

static OTF2_StringRef str(struct ow *w, const char *text)
{
    bool added;
    return intern(&w->strings, text ? text : "", &added);
}

/* ------------------------------------------------------------------------ */
/* Regions                                                                   */

/* The MPI routine a call's text names ("CALL MPI_ISEND(A, ..."), upper
 * case, into buf; "" when none. */
static const char *mpi_routine(const char *text, char *buf, size_t size)
{
    buf[0] = '\0';
    for (const char *p = text; *p; p++) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p;
        if (toupper((unsigned char)*q) == 'P')
            q++;
        if (strncasecmp(q, "MPI_", 4) != 0)
            continue;
        size_t n = 0;
        while ((isalnum((unsigned char)q[n]) || q[n] == '_') && n + 1 < size) {
            buf[n] = (char)toupper((unsigned char)q[n]);
            n++;
        }
        buf[n] = '\0';
        break;
    }
    return buf;
}

/* MPI_ISEND -> MPI_Isend, the standard's spelling. */
static void mpi_canonical(const char *upper, char *buf, size_t size)
{
    snprintf(buf, size, "%s", upper);
    for (size_t k = 5; buf[k]; k++)
        buf[k] = (char)tolower((unsigned char)buf[k]);
}

struct mpi_coll { const char *name; int op; OTF2_RegionRole role; };

/* The collective of a routine (MPI_ and a leading I of a non-blocking
 * one, or NEIGHBOR_, taken off): its op and role; op -1 when none. */
static int mpi_collective(const char *routine, OTF2_RegionRole *role)
{
    static const struct mpi_coll table[] = {
        {"BARRIER", OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER},
        {"BCAST", OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL},
        {"GATHER", OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE},
        {"GATHERV", OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE},
        {"SCATTER", OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL},
        {"SCATTERV", OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL},
        {"ALLGATHER", OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"ALLGATHERV", OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"ALLTOALL", OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"ALLTOALLV", OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"ALLTOALLW", OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"ALLREDUCE", OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"REDUCE", OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE},
        {"REDUCE_SCATTER", OTF2_COLLECTIVE_OP_REDUCE_SCATTER, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"REDUCE_SCATTER_BLOCK", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"SCAN", OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_OTHER},
        {"EXSCAN", OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_OTHER},
    };
    const char *base = routine + 4;
    for (int pass = 0; pass < 2; pass++) {
        const char *b = base;
        if (pass == 1) {
            if (*b != 'I')
                break;
            b++;
        }
        if (strncmp(b, "NEIGHBOR_", 9) == 0)
            b += 9;
        for (size_t k = 0; k < sizeof table / sizeof *table; k++)
            if (strcmp(b, table[k].name) == 0) {
                *role = table[k].role;
                return table[k].op;
            }
    }
    return -1;
}

static OTF2_RegionRole mpi_role(const char *routine)
{
    static const char *const p2p[] = {
        "WAIT", "TEST", "PROBE", "IPROBE", "MPROBE", "IMPROBE", "CANCEL",
        "REQUEST_FREE", "START", "STARTALL",
    };
    if (strncmp(routine, "MPI_FILE_", 9) == 0)
        return OTF2_REGION_ROLE_FILE_IO;
    if (strstr(routine, "SEND") || strstr(routine, "RECV"))
        return OTF2_REGION_ROLE_POINT2POINT;
    for (size_t k = 0; k < sizeof p2p / sizeof *p2p; k++)
        if (strncmp(routine + 4, p2p[k], strlen(p2p[k])) == 0)
            return OTF2_REGION_ROLE_POINT2POINT;
    return OTF2_REGION_ROLE_FUNCTION;
}

/* An OpenMP directive's role, from its first words. */
static OTF2_RegionRole omp_role(const char *text)
{
    static const struct { const char *word; OTF2_RegionRole role; } table[] = {
        {"PARALLEL", OTF2_REGION_ROLE_PARALLEL},
        {"DO", OTF2_REGION_ROLE_LOOP},
        {"SECTIONS", OTF2_REGION_ROLE_SECTIONS},
        {"SECTION", OTF2_REGION_ROLE_SECTION},
        {"SINGLE", OTF2_REGION_ROLE_SINGLE},
        {"MASTER", OTF2_REGION_ROLE_MASTER},
        {"MASKED", OTF2_REGION_ROLE_MASTER},
        {"CRITICAL", OTF2_REGION_ROLE_CRITICAL},
        {"ATOMIC", OTF2_REGION_ROLE_ATOMIC},
        {"BARRIER", OTF2_REGION_ROLE_BARRIER},
        {"TASKWAIT", OTF2_REGION_ROLE_TASK_WAIT},
        {"TASKGROUP", OTF2_REGION_ROLE_TASK_WAIT},
        {"TASK", OTF2_REGION_ROLE_TASK_CREATE},
        {"ORDERED", OTF2_REGION_ROLE_ORDERED},
        {"FLUSH", OTF2_REGION_ROLE_FLUSH},
        {"WORKSHARE", OTF2_REGION_ROLE_WORKSHARE},
    };
    const char *p = text;
    while (*p && *p != '$')
        p++;
    if (*p)
        p++;
    if (strncasecmp(p, "OMP", 3) == 0)
        p += 3;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = 0;
    while (isalpha((unsigned char)p[n]))
        n++;
    for (size_t k = 0; k < sizeof table / sizeof *table; k++)
        if (strlen(table[k].word) == n && strncasecmp(p, table[k].word, n) == 0)
            return table[k].role;
    return OTF2_REGION_ROLE_CODE;
}

/* What region `id` of t is in OTF2 terms, and the key that makes it one
 * region across ranks, into d and key. */
static void describe(struct ow *w, const struct kv_trace *t, int32_t id,
                     struct region *d, struct km_buf *key)
{
    const struct kv_tr_region *g = kv_trace_region(t, id);
    char label[512], routine[64], canon[64];
    kv_trace_region_label(t, id, label, sizeof label);
    memset(d, 0, sizeof *d);
    d->op = -1;
    if (!g) {
        km_buf_printf(key, "?%d.%d", t->proc, (int)id);
        d->name = d->canonical = str(w, label);
        d->description = d->file = str(w, "");
        d->role = OTF2_REGION_ROLE_UNKNOWN;
        d->paradigm = OTF2_PARADIGM_USER;
        return;
    }
    km_buf_printf(key, "%d\037%d\037%s\037%s", g->kind, g->line, g->name,
                  g->file);
    d->file = str(w, g->file);
    d->line = g->line > 0 ? (uint32_t)g->line : 0;
    d->description = str(w, g->kind >= 1 && g->kind <= 4
                            ? kv_trace_kind_name(g->kind) : g->name);
    if (g->kind != 12)
        d->name = d->canonical = str(w, g->kind >= 1 && g->kind <= 4
                                        ? g->name : label);
    d->paradigm = OTF2_PARADIGM_COMPILER;
    switch (g->kind) {
    case 1: case 2: case 3: case 4:
        d->role = OTF2_REGION_ROLE_FUNCTION;
        break;
    case 10:
        d->role = OTF2_REGION_ROLE_LOOP;
        break;
    case 13:
        d->role = OTF2_REGION_ROLE_FILE_IO;
        break;
    case 14:
        d->role = OTF2_REGION_ROLE_CODE;
        d->paradigm = OTF2_PARADIGM_USER;
        break;
    case 15:
        d->role = omp_role(g->name);
        d->paradigm = OTF2_PARADIGM_OPENMP;
        break;
    case 12:
        d->mpi = true;
        d->paradigm = OTF2_PARADIGM_MPI;
        if (!*mpi_routine(g->name, routine, sizeof routine)) {
            d->name = d->canonical = str(w, label);
            d->role = OTF2_REGION_ROLE_FUNCTION;
            break;
        }
        mpi_canonical(routine, canon, sizeof canon);
        d->canonical = str(w, canon);
        const struct kv_tr_region *r = kv_trace_region(t, g->routine);
        snprintf(label, sizeof label, "%s line %d in %s", canon, g->line,
                 r ? r->name : "?");
        d->name = str(w, label);
        d->op = mpi_collective(routine, &d->role);
        if (d->op < 0)
            d->role = mpi_role(routine);
        break;
    default:
        d->role = OTF2_REGION_ROLE_CODE;
    }
}

/* The OTF2 region of id in file t. */
static uint32_t region_ref(struct ow *w, const struct kv_trace *t, int32_t id)
{
    size_t i = id > 0 ? (size_t)id : 0;
    if (i < w->nmap && w->map[i])
        return w->map[i] - 1;
    if (i >= w->nmap) {
        size_t old = w->nmap;
        w->nmap = i + 1 > 2 * old ? i + 1 : 2 * old;
        w->map = km_xrealloc(w->map, w->nmap * sizeof *w->map);
        memset(w->map + old, 0, (w->nmap - old) * sizeof *w->map);
    }
    struct region d;
    struct km_buf key = { 0 };
    describe(w, t, id, &d, &key);
    bool added;
    uint32_t ref = intern(&w->keys, km_buf_cstr(&key), &added);
    km_buf_free(&key);
    if (added) {
        KM_GROW(w->regions, w->capregions, ref + 1);
        w->regions[ref] = d;
        w->paradigms |= 1u << d.paradigm;
    }
    w->map[i] = ref + 1;
    return ref;
}

/* ------------------------------------------------------------------------ */
/* Messages: the tag and bytes both ends of a matched message carry          */

static int learn_flow(void *ctx, const struct kv_trace *t,
                      const struct kv_tr_thread *th,
                      const struct kv_tr_event *e)
{
    struct ow *w = ctx;
    (void)t, (void)th;
    if (e->type != KV_TR_SENT && e->type != KV_TR_RECEIVED)
        return 0;
    if (e->peer > w->max_peer)
        w->max_peer = e->peer;
    if (e->flow < 0)
        return 0;
    bool sent = e->type == KV_TR_SENT;
    if (sent)
        w->flow_bytes[e->flow] = e->bytes;
    if (e->tag >= 0 && (sent || w->flow_tag[e->flow] < 0))
        w->flow_tag[e->flow] = e->tag;
    return 0;
}

static int learn_flows(struct ow *w)
{
    struct kv_trace_set *s = w->s;
    w->flow_tag = km_xmalloc((s->matched + 1) * sizeof *w->flow_tag);
    w->flow_bytes = km_xmalloc((s->matched + 1) * sizeof *w->flow_bytes);
    for (uint64_t k = 0; k < s->matched; k++)
        w->flow_tag[k] = -1, w->flow_bytes[k] = -1;
    kv_trace_rewind(s);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < s->n; k++)
        for (size_t n = 0; rc == 0 && n < s->t[k].nthreads; n++) {
            struct kv_tr_thread *th = &s->t[k].threads[n];
            if (th->sent || th->received)
                rc = kv_trace_each(s, &s->t[k], th, learn_flow, w);
        }
    kv_trace_rewind(s);
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

/* A timestamp no earlier than the location's last. */
static uint64_t at(struct ow *w, uint64_t ts)
{
    if (ts < w->last)
        ts = w->last;
    w->last = ts;
    if (!w->any_ts || ts < w->first_ts)
        w->first_ts = ts;
    if (!w->any_ts || ts > w->max_ts)
        w->max_ts = ts;
    w->any_ts = true;
    return ts;
}

/* Write the held LEAVE of an MPI call, a collective's events before it. */
static int release(struct ow *w)
{
    struct held *h = &w->held;
    if (!h->on)
        return 0;
    h->on = false;
    const struct region *r = &w->regions[h->region];
    if (r->op >= 0) {
        w->comm_used = true;
        OK(w, OTF2_EvtWriter_MpiCollectiveBegin(w->evt, NULL, at(w, h->enter)),
           "MpiCollectiveBegin");
        OK(w, OTF2_EvtWriter_MpiCollectiveEnd(w->evt, NULL, at(w, h->leave),
                                              (OTF2_CollectiveOp)r->op,
                                              h->comm, OTF2_UNDEFINED_UINT32,
                                              h->sent, h->received),
           "MpiCollectiveEnd");
    }
    OK(w, OTF2_EvtWriter_Leave(w->evt, NULL, at(w, h->leave), h->region),
       "Leave");
    return 0;
}

/* The OTF2 communicator of the set's communicator `comm`: the same
 * number, MPI_COMM_WORLD for an intercommunicator's (not defined). */
static OTF2_CommRef comm_ref(const struct ow *w, uint32_t comm)
{
    return comm < w->s->ncomms && !w->s->comms[comm].inter
           ? (OTF2_CommRef)comm : COMM_WORLD;
}

static int message(struct ow *w, const struct kv_tr_event *e, uint64_t ts)
{
    struct held *h = &w->held;
    bool sent = e->type == KV_TR_SENT;
    OTF2_CommRef comm = comm_ref(w, e->comm);
    if (e->peer < 0) {
        struct open *o = w->depth ? &w->stack[w->depth - 1] : NULL;
        if (h->on && w->regions[h->region].op >= 0) {
            *(sent ? &h->sent : &h->received) += (uint64_t)e->bytes;
            h->comm = comm;
        } else if (!h->on && o && w->regions[o->region].op >= 0) {
            *(sent ? &o->sent : &o->received) += (uint64_t)e->bytes;
            o->comm = comm;
        } else
            w->dropped++;
        return 0;
    }
    /* the peer as its rank in the communicator (OTF2's convention) */
    int32_t peer = kv_trace_comm_rank(w->s, comm, e->peer);
    if (peer < 0)
        comm = COMM_WORLD, peer = e->peer;
    uint32_t tag = e->tag >= 0 ? (uint32_t)e->tag : OTF2_UNDEFINED_UINT32;
    uint64_t bytes = (uint64_t)e->bytes;
    if (e->flow >= 0) {
        int32_t t = w->flow_tag[e->flow];
        tag = t >= 0 ? (uint32_t)t : OTF2_UNDEFINED_UINT32;
        if (w->flow_bytes[e->flow] >= 0)
            bytes = (uint64_t)w->flow_bytes[e->flow];
    }
    w->comm_used = true;
    if (sent)
        OK(w, OTF2_EvtWriter_MpiSend(w->evt, NULL, at(w, h->on ? h->enter : ts),
                                     (uint32_t)peer, comm, tag, bytes),
           "MpiSend");
    else
        OK(w, OTF2_EvtWriter_MpiRecv(w->evt, NULL, at(w, h->on ? h->leave : ts),
                                     (uint32_t)peer, comm, tag, bytes),
           "MpiRecv");
    return 0;
}

static int on_event(void *ctx, const struct kv_trace *t,
                    const struct kv_tr_thread *th,
                    const struct kv_tr_event *e)
{
    struct ow *w = ctx;
    (void)th;
    int64_t ns = w->s->origin_ns + e->ns;
    uint64_t ts = ns > 0 ? (uint64_t)ns : 0;
    switch (e->type) {
    case KV_TR_ENTER: {
        if (release(w))
            return -1;
        uint32_t r = region_ref(w, t, e->id);
        KM_GROW(w->stack, w->capstack, w->depth + 1);
        w->stack[w->depth++] = (struct open){ r, 0, 0, COMM_WORLD };
        OK(w, OTF2_EvtWriter_Enter(w->evt, NULL, at(w, ts), r), "Enter");
        return 0;
    }
    case KV_TR_LEAVE: {
        if (release(w))
            return -1;
        uint32_t r = region_ref(w, t, e->id);
        struct open o = { r, 0, 0, COMM_WORLD };
        if (w->depth)
            o = w->stack[--w->depth];
        if (w->regions[r].mpi && !e->at_end) {
            int64_t enter = w->s->origin_ns + e->enter_ns;
            w->held = (struct held){ true, r, enter > 0 ? (uint64_t)enter : 0,
                                     ts, o.sent, o.received, o.comm };
            return 0;
        }
        OK(w, OTF2_EvtWriter_Leave(w->evt, NULL, at(w, ts), r), "Leave");
        return 0;
    }
    case KV_TR_SENT:
    case KV_TR_RECEIVED:
        if (e->peer > w->max_peer)
            w->max_peer = e->peer;
        return message(w, e, ts);
    }
    return release(w);               /* END */
}

static OTF2_LocationRef location_ref(int proc, int thread)
{
    return (uint64_t)(uint32_t)thread << 32 | (uint32_t)proc;
}

static struct location *add_location(struct ow *w, int proc, int thread)
{
    KM_GROW(w->locs, w->caplocs, w->nlocs + 1);
    struct location *l = &w->locs[w->nlocs++];
    l->ref = location_ref(proc, thread);
    l->proc = proc;
    l->thread = thread;
    l->events = 0;
    return l;
}

/* Every event of one thread into its location. */
static int write_thread(struct ow *w, struct kv_trace *t,
                        struct kv_tr_thread *th)
{
    struct location *l = add_location(w, t->proc, th->thread);
    w->evt = OTF2_Archive_GetEvtWriter(w->archive, l->ref);
    if (!w->evt)
        return otf2_failed(w, OTF2_ERROR_INVALID, "GetEvtWriter");
    w->last = 0;
    w->held.on = false;
    w->depth = 0;
    int rc = kv_trace_each(w->s, t, th, on_event, w);
    if (rc == 0)
        rc = release(w);
    OTF2_ErrorCode erc = OTF2_EvtWriter_GetNumberOfEvents(w->evt, &l->events);
    if (rc == 0 && erc != OTF2_SUCCESS)
        rc = otf2_failed(w, erc, "GetNumberOfEvents");
    erc = OTF2_Archive_CloseEvtWriter(w->archive, w->evt);
    w->evt = NULL;
    if (rc == 0 && erc != OTF2_SUCCESS)
        rc = otf2_failed(w, erc, "CloseEvtWriter");
    return rc ? -1 : 0;
}

/* MPI_COMM_WORLD's size: every rank a header, a file or a message names. */
static int world_size(const struct ow *w)
{
    int n = w->max_peer + 1;
    for (size_t k = 0; k < w->s->n; k++) {
        const struct kv_trace *t = &w->s->t[k];
        if (t->nranks > n)
            n = t->nranks;
        if (w->s->comms[0].size > n)
            n = w->s->comms[0].size;
        if (t->proc + 1 > n)
            n = t->proc + 1;
    }
    return n;
}

/* Location (rank r, thread 0) with no events. */
static int empty_location(struct ow *w, int r)
{
    add_location(w, r, 0);
    OTF2_EvtWriter *e = OTF2_Archive_GetEvtWriter(w->archive,
                                                  location_ref(r, 0));
    if (!e)
        return otf2_failed(w, OTF2_ERROR_INVALID, "GetEvtWriter");
    OTF2_ErrorCode erc = OTF2_Archive_CloseEvtWriter(w->archive, e);
    return erc != OTF2_SUCCESS ? otf2_failed(w, erc, "CloseEvtWriter") : 0;
}

/* A rank of MPI_COMM_WORLD with no trace file still needs its location
 * (no events) for the communicator's group. */
static int placeholder_locations(struct ow *w, int nworld)
{
    char *seen = km_xcalloc((size_t)nworld + 1, 1);
    for (size_t k = 0; k < w->nlocs; k++)
        if (w->locs[k].thread == 0 && w->locs[k].proc < nworld)
            seen[w->locs[k].proc] = 1;
    int rc = 0;
    for (int r = 0; rc == 0 && r < nworld; r++)
        if (!seen[r])
            rc = empty_location(w, r);
    free(seen);
    return rc;
}

/* A trace file with no events (its first block cut short) still gets a
 * location, so that a reader finds the rank and an archive of such files
 * has the location definitions OTF2 readers require. */
static int locations_of_empty_files(struct ow *w)
{
    for (size_t k = 0; k < w->s->n; k++) {
        int proc = w->s->t[k].proc;
        bool found = false;
        for (size_t j = 0; j < w->nlocs && !found; j++)
            found = w->locs[j].proc == proc;
        if (!found && empty_location(w, proc))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Definitions                                                               */

static const struct kv_trace *file_of(const struct ow *w, int proc)
{
    for (size_t k = 0; k < w->s->n; k++)
        if (w->s->t[k].proc == proc)
            return &w->s->t[k];
    return NULL;
}

static void group_name(const struct ow *w, int proc, char *buf, size_t size)
{
    const struct kv_trace *t = file_of(w, proc);
    if (!t)
        snprintf(buf, size, "rank %d (no trace)", proc);
    else if (t->rank >= 0)
        snprintf(buf, size, "rank %d", proc);
    else
        snprintf(buf, size, "process %d", proc);
}

/* "rank R thread T" ("process P thread T" for a serial run's file). */
static void location_name(const struct ow *w, const struct location *l,
                          char *buf, size_t size)
{
    const struct kv_trace *t = file_of(w, l->proc);
    snprintf(buf, size, "%s %d thread %d", t && t->rank < 0 ? "process" : "rank",
             l->proc, l->thread);
}

/* Strings must be defined before the definitions use them, and are only
 * all known once those are made: every other string is interned first. */
static void name_everything(struct ow *w)
{
    char buf[128];
    str(w, "");
    str(w, "kmtool run");
    str(w, "machine");
    str(w, "MPI_COMM_WORLD");
    str(w, "MPI_COMM_WORLD's locations");
    str(w, "MPI");
    str(w, "OpenMP");
    str(w, "Compiler");
    str(w, "User");
    for (size_t k = 0; k < w->nlocs; k++) {
        group_name(w, w->locs[k].proc, buf, sizeof buf);
        str(w, buf);
        location_name(w, &w->locs[k], buf, sizeof buf);
        str(w, buf);
    }
    for (size_t k = 1; w->comm_used && k < w->s->ncomms; k++)
        str(w, kv_trace_comm_name(w->s, (uint32_t)k, buf, sizeof buf));
}

static int write_strings(struct ow *w, OTF2_GlobalDefWriter *g)
{
    for (size_t k = 0; k < w->strings.n; k++)
        OK(w, OTF2_GlobalDefWriter_WriteString(g, (OTF2_StringRef)k,
                                               w->strings.keys[k]), "WriteString");
    return 0;
}

static int write_paradigms(struct ow *w, OTF2_GlobalDefWriter *g)
{
    static const struct { OTF2_Paradigm p; const char *name; OTF2_ParadigmClass c; } table[] = {
        {OTF2_PARADIGM_COMPILER, "Compiler", OTF2_PARADIGM_CLASS_PROCESS},
        {OTF2_PARADIGM_USER, "User", OTF2_PARADIGM_CLASS_PROCESS},
        {OTF2_PARADIGM_MPI, "MPI", OTF2_PARADIGM_CLASS_PROCESS},
        {OTF2_PARADIGM_OPENMP, "OpenMP", OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN},
    };
    for (size_t k = 0; k < sizeof table / sizeof *table; k++)
        if (w->paradigms & (1u << table[k].p) ||
            (table[k].p == OTF2_PARADIGM_MPI && w->comm_used))
            OK(w, OTF2_GlobalDefWriter_WriteParadigm(g, table[k].p,
                                                     str(w, table[k].name),
                                                     table[k].c), "WriteParadigm");
    return 0;
}

static int by_proc_thread(const void *a, const void *b)
{
    const struct location *x = a, *y = b;
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

static int write_system(struct ow *w, OTF2_GlobalDefWriter *g)
{
    char buf[128];
    OK(w, OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str(w, "kmtool run"),
                                                   str(w, "machine"),
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
       "WriteSystemTreeNode");
    for (size_t k = 0; k < w->nlocs; k++) {
        if (k && w->locs[k].proc == w->locs[k - 1].proc)
            continue;
        group_name(w, w->locs[k].proc, buf, sizeof buf);
        OK(w, OTF2_GlobalDefWriter_WriteLocationGroup(g,
               (OTF2_LocationGroupRef)w->locs[k].proc, str(w, buf),
               OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
               OTF2_UNDEFINED_LOCATION_GROUP), "WriteLocationGroup");
    }
    for (size_t k = 0; k < w->nlocs; k++) {
        const struct location *l = &w->locs[k];
        location_name(w, l, buf, sizeof buf);
        OK(w, OTF2_GlobalDefWriter_WriteLocation(g, l->ref, str(w, buf),
                                                 OTF2_LOCATION_TYPE_CPU_THREAD,
                                                 l->events,
                                                 (OTF2_LocationGroupRef)l->proc),
           "WriteLocation");
    }
    return 0;
}

static int write_regions(struct ow *w, OTF2_GlobalDefWriter *g)
{
    for (size_t k = 0; k < w->keys.n; k++) {
        const struct region *r = &w->regions[k];
        OK(w, OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)k, r->name,
                                               r->canonical, r->description,
                                               r->role, r->paradigm,
                                               OTF2_REGION_FLAG_NONE, r->file,
                                               r->line, r->line), "WriteRegion");
    }
    return 0;
}

/* MPI_COMM_WORLD: its ranks' locations (thread 0 of each), the group of
 * all of them, the communicator. */
static int write_world(struct ow *w, OTF2_GlobalDefWriter *g, int nworld)
{
    uint64_t *members = km_xcalloc((size_t)nworld + 1, sizeof *members);
    for (int r = 0; r < nworld; r++)
        members[r] = location_ref(r, 0);
    OTF2_ErrorCode rc = OTF2_GlobalDefWriter_WriteGroup(g, GROUP_LOCATIONS,
        str(w, "MPI_COMM_WORLD's locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)nworld, members);
    for (int r = 0; r < nworld; r++)
        members[r] = (uint64_t)r;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_GlobalDefWriter_WriteGroup(g, GROUP_WORLD,
            str(w, "MPI_COMM_WORLD"), OTF2_GROUP_TYPE_COMM_GROUP,
            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)nworld, members);
    free(members);
    if (rc != OTF2_SUCCESS)
        return otf2_failed(w, rc, "WriteGroup");
    OK(w, OTF2_GlobalDefWriter_WriteComm(g, COMM_WORLD, str(w, "MPI_COMM_WORLD"),
                                         GROUP_WORLD, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE), "WriteComm");
    return 0;
}

/* The set's other communicators (not the intercommunicators): communicator
 * k of group 1 + k, its members their indices into MPI_COMM_WORLD's
 * locations (their world ranks), MPI_COMM_WORLD its parent. */
static int write_comms(struct ow *w, OTF2_GlobalDefWriter *g)
{
    char name[96];
    for (size_t k = 1; k < w->s->ncomms; k++) {
        const struct kv_tr_comm *c = &w->s->comms[k];
        if (c->inter)
            continue;
        uint64_t *members = km_xcalloc((size_t)c->size + 1, sizeof *members);
        for (int32_t r = 0; r < c->size; r++)
            members[r] = (uint64_t)c->members[r];
        OTF2_StringRef s = str(w, kv_trace_comm_name(w->s, (uint32_t)k, name,
                                                     sizeof name));
        OTF2_ErrorCode rc = OTF2_GlobalDefWriter_WriteGroup(g,
            (OTF2_GroupRef)(1 + k), s, OTF2_GROUP_TYPE_COMM_GROUP,
            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)c->size,
            members);
        free(members);
        if (rc != OTF2_SUCCESS)
            return otf2_failed(w, rc, "WriteGroup");
        OK(w, OTF2_GlobalDefWriter_WriteComm(g, (OTF2_CommRef)k, s,
                                             (OTF2_GroupRef)(1 + k), COMM_WORLD,
                                             OTF2_COMM_FLAG_NONE), "WriteComm");
    }
    return 0;
}

static int write_definitions(struct ow *w, int nworld)
{
    OK(w, OTF2_Archive_OpenDefFiles(w->archive), "OpenDefFiles");
    for (size_t k = 0; k < w->nlocs; k++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(w->archive, w->locs[k].ref);
        if (!d)
            return otf2_failed(w, OTF2_ERROR_INVALID, "GetDefWriter");
        OK(w, OTF2_Archive_CloseDefWriter(w->archive, d), "CloseDefWriter");
    }
    OK(w, OTF2_Archive_CloseDefFiles(w->archive), "CloseDefFiles");
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(w->archive);
    if (!g)
        return otf2_failed(w, OTF2_ERROR_INVALID, "GetGlobalDefWriter");
    uint64_t offset = w->any_ts ? w->first_ts : 0;
    OK(w, OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, offset,
          w->any_ts ? w->max_ts - offset : 0,
          w->any_ts ? offset : OTF2_UNDEFINED_TIMESTAMP), "WriteClockProperties");
    if (w->nlocs)                     /* no events: locs is NULL */
        qsort(w->locs, w->nlocs, sizeof *w->locs, by_proc_thread);
    name_everything(w);
    if (write_strings(w, g) || write_paradigms(w, g) || write_system(w, g) ||
        write_regions(w, g) || (w->comm_used && write_world(w, g, nworld)) ||
        (w->comm_used && write_comms(w, g)))
        return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The archive, whole or not at all                                          */

/* dir/name, allocated. */
static char *path_in(const char *dir, const char *name)
{
    struct km_buf b = { 0 };
    km_buf_printf(&b, "%s/%s", dir, name);
    return b.data;
}

/* Remove the temporary directory OTF2 wrote into: NAME.otf2, NAME.def
 * and NAME/ with the location files. */
static void remove_temporary(const char *tmp)
{
    static const char *const files[] = { NAME ".otf2", NAME ".def" };
    char *path = path_in(tmp, NAME);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char *f = path_in(path, de->d_name);
            unlink(f);
            free(f);
        }
        closedir(d);
        rmdir(path);
    }
    free(path);
    for (size_t k = 0; k < 2; k++) {
        path = path_in(tmp, files[k]);
        unlink(path);
        free(path);
    }
    rmdir(tmp);
}

static const char *const parts[] = { NAME, NAME ".def", NAME ".otf2" };

/* Move the archive from tmp into dir: the location files first, the
 * anchor file last, so that an anchor is never there without its parts. */
static int move_into_place(const char *tmp, const char *dir)
{
    for (size_t k = 0; k < 3; k++) {
        char *from = path_in(tmp, parts[k]), *to = path_in(dir, parts[k]);
        int rc = rename(from, to);
        if (rc != 0)
            kv_eprintf("%s: error: cannot rename %s to %s: %s\n", dir,
                    from, to, strerror(errno));
        free(from);
        free(to);
        if (rc == 0)
            continue;
        while (k--) {                  /* back again */
            from = path_in(tmp, parts[k]);
            to = path_in(dir, parts[k]);
            rename(to, from);
            free(from);
            free(to);
        }
        return -1;
    }
    return 0;
}

/* DIR exists (made when missing: *made) and holds no archive yet. */
static int prepare_dir(const char *dir, bool *made)
{
    *made = false;
    if (mkdir(dir, 0777) == 0)
        *made = true;
    else if (errno != EEXIST) {
        kv_eprintf("%s: error: cannot create: %s\n", dir, strerror(errno));
        return -1;
    }
    for (size_t k = 3; k-- > 0;) {     /* the anchor file first */
        struct stat st;
        char *path = path_in(dir, parts[k]);
        int there = lstat(path, &st) == 0;
        free(path);
        if (there) {
            kv_eprintf("%s: error: holds an OTF2 archive already (%s): "
                    "remove it or give another directory\n", dir, parts[k]);
            return -1;
        }
    }
    return 0;
}

static int write_archive(struct ow *w, const char *tmp)
{
    struct kv_trace_set *s = w->s;
    size_t nloc = 0;
    for (size_t k = 0; k < s->n; k++)
        nloc += s->t[k].nthreads;
    uint64_t defchunk = OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT;
    while (defchunk < 16 * (uint64_t)(nloc + 1) && defchunk < 16u << 20)
        defchunk *= 2;
    w->archive = OTF2_Archive_Open(tmp, NAME, OTF2_FILEMODE_WRITE,
                                   OTF2_CHUNK_SIZE_EVENTS_DEFAULT, defchunk,
                                   OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!w->archive)
        return otf2_failed(w, OTF2_ERROR_INVALID, "Archive_Open");
    static const OTF2_FlushCallbacks flush = { pre_flush, NULL };
    static const OTF2_MemoryCallbacks memory = { new_chunk, free_chunks };
    OK(w, OTF2_Archive_SetFlushCallbacks(w->archive, &flush, NULL),
       "SetFlushCallbacks");
    OK(w, OTF2_Archive_SetMemoryCallbacks(w->archive, &memory, NULL),
       "SetMemoryCallbacks");
    OK(w, OTF2_Archive_SetSerialCollectiveCallbacks(w->archive),
       "SetSerialCollectiveCallbacks");
    OK(w, OTF2_Archive_SetCreator(w->archive, "kmview trace (" PACKAGE_NAME
                                  " " PACKAGE_VERSION ")"), "SetCreator");
    OK(w, OTF2_Archive_SetDescription(w->archive, "a kmtool trace "
                                      "(doc/KM_trace.md) converted"),
       "SetDescription");
    OK(w, OTF2_Archive_OpenEvtFiles(w->archive), "OpenEvtFiles");
    if (s->matched && learn_flows(w))
        return -1;
    for (size_t k = 0; k < s->n; k++) {
        struct kv_trace *t = &s->t[k];
        w->nmap = 0;                   /* region ids are per file */
        free(w->map);
        w->map = NULL;
        for (size_t n = 0; n < t->nthreads; n++)
            if (write_thread(w, t, &t->threads[n]))
                return -1;
    }
    int nworld = w->comm_used ? world_size(w) : 0;
    if (w->comm_used && placeholder_locations(w, nworld))
        return -1;
    if (locations_of_empty_files(w))
        return -1;
    OK(w, OTF2_Archive_CloseEvtFiles(w->archive), "CloseEvtFiles");
    if (write_definitions(w, nworld))
        return -1;
    OTF2_ErrorCode rc = OTF2_Archive_Close(w->archive);
    w->archive = NULL;
    if (rc != OTF2_SUCCESS)
        return otf2_failed(w, rc, "Archive_Close");
    return 0;
}

static void free_writer(struct ow *w)
{
    if (w->archive)
        OTF2_Archive_Close(w->archive);
    intern_free(&w->strings);
    intern_free(&w->keys);
    free(w->regions);
    free(w->map);
    free(w->flow_tag);
    free(w->flow_bytes);
    free(w->locs);
    free(w->stack);
}

int kv_trace_otf2(const char *dir, struct kv_trace_set *s)
{
    bool made;
    if (prepare_dir(dir, &made))
        return -1;
    char *tmp = path_in(dir, ".kmview-otf2-XXXXXX");
    if (!mkdtemp(tmp)) {
        kv_eprintf("%s: error: cannot create a directory in it: %s\n",
                dir, strerror(errno));
        free(tmp);
        if (made)
            rmdir(dir);
        return -1;
    }
    struct ow w = { 0 };
    w.dir = dir;
    w.s = s;
    w.max_peer = -1;
    OTF2_ErrorCallback old = OTF2_Error_RegisterCallback(on_otf2_error, &w);
    int rc = write_archive(&w, tmp);
    free_writer(&w);
    OTF2_Error_RegisterCallback(old, NULL);
    if (rc == 0)
        rc = move_into_place(tmp, dir);
    remove_temporary(tmp);
    free(tmp);
    if (rc && made)
        rmdir(dir);
    if (rc == 0 && w.dropped)
        kv_eprintf("%s: warning: %llu message record(s) with no peer "
                "outside a collective call (a receive from a source not "
                "known) left out\n", dir, (unsigned long long)w.dropped);
    return rc;
}

#endif
