/*
 * trace.h — reading libkm's binary traces (doc/KM_trace.md, format 2):
 * one file per rank, read as a set so that times share one axis and
 * point-to-point messages are matched between ranks.
 *
 * The interface every trace writer (text, Trace Event JSON, the HTML
 * timeline, an OTF2 writer) uses: kv_trace_set_open scans every file once
 * (checks it, counts, keeps the region table, the clock calibrations and
 * where each thread was at the end), then kv_trace_each calls back once
 * per event of one thread, in that thread's order, with its time on the
 * set's axis, its depth, and for a message the id it shares with its
 * partner on the other rank and its MPI call.  Nothing is held per event:
 * a pass over a thread reads one block at a time.  The regions of every
 * file are also unified on the set (kv_trace_set.regions, each file's
 * ids mapped by kv_trace.global), and the threads can be grouped by
 * where they were at the end (kv_trace_groups).  The communicators of
 * the messages (COMM records) are unified on the set too
 * (kv_trace_set.comms, each file's ids mapped by kv_trace.comm): the same
 * member list is the same communicator on every rank, and a message is
 * matched with its partner on its communicator.
 */
#ifndef KV_TRACE_H
#define KV_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum kv_tr_type {
    KV_TR_ENTER = 1, KV_TR_LEAVE = 2, KV_TR_SENT = 3, KV_TR_RECEIVED = 4,
    KV_TR_REGION = 5, KV_TR_CLOCK = 6, KV_TR_END = 7,
    KV_TR_COMM = 8
};

enum kv_tr_state {
    KV_TR_RUNNING = 1, KV_TR_ENDED = 2, KV_TR_LIMIT = 3, KV_TR_SIGNAL = 4
};

/* A region as its REGION record defines it (id - 1 indexes the table). */
struct kv_tr_region {
    char *name, *file;       /* NULL when no record defines the id */
    int kind, line, routine; /* KM_K_* code, source line, routine's id */
    uint64_t enters;         /* its ENTERs in the file */
};

/* A record kept from the scan: the regions open at the end, the last
 * events of a thread. */
struct kv_tr_rec {
    int64_t tick;
    int type;
    int32_t id, peer, tag;
    int64_t bytes;
    uint32_t comm;           /* SENT, RECEIVED: the set's communicator */
};

#define KV_TR_LAST 8         /* last events kept per thread */

struct kv_tr_thread {
    int thread;              /* libkm's thread number */
    uint64_t *blocks;        /* file offsets of its blocks, by sequence */
    size_t nblocks;
    uint64_t missing;        /* sequence numbers absent (file cut short) */
    uint64_t events;         /* ENTER, LEAVE, SENT, RECEIVED, END */
    uint64_t enters, leaves, sent, received;
    uint64_t stray_leaves;   /* LEAVEs with no region open: skipped */
    bool any;
    int64_t first_tick, last_tick;
    struct kv_tr_rec *open;  /* open at the end, outermost first */
    size_t nopen, capopen, max_depth;
    struct kv_tr_rec last[KV_TR_LAST];  /* ring of the last events */
    uint64_t nlast;
    bool ended;              /* an END record */
    int end_signal;
};

struct kv_tr_clock { int64_t tick, real_ns; };

/* One file. */
struct kv_trace {
    char *path;
    int fd;
    uint64_t size;
    /* the header */
    uint32_t block_size;
    int32_t rank, nranks;
    int64_t pid;
    double seconds_per_tick;
    int64_t t0_tick, t0_real_ns;
    uint64_t claimed;        /* data blocks claimed, as the header says */
    uint32_t state;
    int32_t signal;
    uint64_t dropped, limit_bytes;
    char clock[65], program[257];
    /* what the scan found */
    int proc;                /* the process on the set's axis: the rank,
                                or the file's position when not known */
    uint64_t present;        /* data blocks in the file */
    uint64_t unclaimed;      /* all-zero blocks (mapped, never written) */
    bool partial_block;      /* the file ends inside a block */
    struct kv_tr_thread *threads;   /* by thread number */
    size_t nthreads;
    struct kv_tr_region *regions;
    size_t nregions;
    size_t undefined;        /* ids entered that no record defines */
    struct kv_tr_clock *clocks;     /* by tick */
    size_t nclocks;
    uint32_t *global;        /* [id]: the set's region (kv_trace_set's
                                regions), for ids 1 .. nregions;
                                UINT32_MAX for an id nothing uses */
    uint32_t *comm;          /* [id]: the set's communicator (kv_trace_set's
                                comms) of this file's communicator id, for
                                0 .. ncomm - 1 (0: MPI_COMM_WORLD);
                                UINT32_MAX for an id no COMM record defines */
    size_t ncomm;
    struct kv_tr_chans *pending;    /* trace.c's: messages on the file's
                                       own communicators, while opening */
};

/* A communicator of the run.  Index 0 is MPI_COMM_WORLD (members NULL:
 * its rank i is world rank i).  The others are one per distinct member
 * list of the files' COMM records (the same world ranks in the same
 * order, and the same inter flag: the same communicator on every rank;
 * each list is held once), numbered in order of their first file by
 * rank, then by that file's id. */
struct kv_tr_comm {
    int32_t *members;        /* world ranks, by rank in the communicator */
    int32_t *by_world;       /* its ranks ordered by their world rank */
    int32_t size;            /* 0: the set's ranks, as far as known */
    bool inter;              /* an intercommunicator: members its remote
                                group, where its messages go */
    /* its messages (an intercommunicator's matched on any, counted on
     * the sender's): point-to-point matched, without a partner, and
     * SENT and RECEIVED without a peer */
    uint64_t matched, unmatched, collectives;
};

/* A region of the set: one per (kind, name, file, line) over the files,
 * and one per id entered without a definition in each file. */
struct kv_tr_gregion {
    const struct kv_trace *t;        /* the first file that has it */
    int32_t id;                      /* its id there */
};

struct kv_tr_chans;          /* trace.c's message channels */
struct kv_tr_commtab;        /* trace.c's communicators by member list */

/* Every file of a run. */
struct kv_trace_set {
    struct kv_trace *t;
    size_t n;
    int64_t origin_ns;       /* CLOCK_REALTIME of the earliest event */
    int64_t end_ns;          /* ... of the latest, relative to origin */
    uint64_t events;
    /* point-to-point messages: matched pairs, and those without one */
    uint64_t matched, unmatched_sent, unmatched_received;
    uint64_t collectives;    /* SENT and RECEIVED with peer -1 */
    struct kv_tr_chans *chans;
    struct kv_tr_comm *comms;        /* the run's communicators, 0 first */
    size_t ncomms;
    struct kv_tr_commtab *commtab;
    struct kv_tr_gregion *regions;   /* the regions of every file, unified */
    size_t nregions;
};

/* Open and scan `paths`.  0, or -1 with an error naming the file (and
 * the byte offset for a corrupt one) printed. */
int kv_trace_set_open(struct kv_trace_set *s, const char *const *paths,
                      size_t n);
void kv_trace_set_free(struct kv_trace_set *s);

/* One event as kv_trace_each gives it.  Regions still open when a
 * thread's records end are closed at its last event's time by LEAVEs
 * marked `at_end`, so that every ENTER has its LEAVE. */
struct kv_tr_event {
    int type;                /* ENTER, LEAVE, SENT, RECEIVED or END */
    int32_t id;              /* the region (for a LEAVE: the one left;
                                SENT, RECEIVED: the MPI call's; END: 0) */
    int64_t tick;
    int64_t ns;              /* on the set's axis, never before the
                                thread's previous event */
    int depth;               /* ENTER, LEAVE: the region's (0 outermost);
                                else the regions open */
    int64_t enter_ns;        /* LEAVE: its region's ENTER */
    int32_t peer, tag;       /* SENT, RECEIVED */
    int64_t bytes;
    uint32_t comm;           /* SENT, RECEIVED: the set's communicator */
    int64_t flow;            /* SENT, RECEIVED to or from a peer: the
                                message's id, shared with its partner's
                                event (matched per sender, receiver,
                                communicator and tag, in order); -1 when
                                it has none */
    /* SENT, RECEIVED: the MPI call's region (the record's id), its ENTER
     * and LEAVE when the record follows that LEAVE (as libkm writes it);
     * call_depth -1 when it does not (a record inside its region) */
    int call_depth;
    int64_t call_enter_ns, call_leave_ns;
    bool at_end;
};

typedef int (*kv_tr_fn)(void *ctx, const struct kv_trace *t,
                        const struct kv_tr_thread *th,
                        const struct kv_tr_event *e);

/* Call fn for every event of thread `th` of file `t` in order; stops at
 * fn's first non-zero value and returns it (-1: a read error, printed).
 * Message ids assume every thread of the set is passed exactly once
 * after kv_trace_rewind (kv_trace_set_open rewinds). */
int kv_trace_each(struct kv_trace_set *s, struct kv_trace *t,
                  struct kv_tr_thread *th, kv_tr_fn fn, void *ctx);
void kv_trace_rewind(struct kv_trace_set *s);

/* Where a SENT or RECEIVED is drawn: inside its MPI call's region (its
 * last ns) when the record follows the call's LEAVE, else its own time. */
int64_t kv_trace_message_ns(const struct kv_tr_event *e);

/* A tick of file t on the set's axis (ns since the earliest event). */
int64_t kv_trace_ns(const struct kv_trace_set *s, const struct kv_trace *t,
                    int64_t tick);

/* The region `id` of t, or NULL when no record defines it. */
const struct kv_tr_region *kv_trace_region(const struct kv_trace *t,
                                           int32_t id);
/* A region's name for a timeline: the routine's name, or "KIND line L
 * in ROUTINE" (an MPI call's KIND the MPI routine it calls: "MPI_SEND
 * line 30 in MAIN"); "region N" when not defined. */
const char *kv_trace_region_label(const struct kv_trace *t, int32_t id,
                                  char *buf, size_t size);
/* The rank of world rank `world` in communicator `comm` of the set
 * (MPI_COMM_WORLD: itself), -1 when it is no member. */
int32_t kv_trace_comm_rank(const struct kv_trace_set *s, uint32_t comm,
                           int32_t world);
/* "MPI_COMM_WORLD", "communicator 1 (4 ranks)", "intercommunicator 2
 * (remote group of 3 ranks)". */
const char *kv_trace_comm_name(const struct kv_trace_set *s, uint32_t comm,
                               char *buf, size_t size);
/* "program", "subroutine", ..., "DO", "MPI", ...; "?" */
const char *kv_trace_kind_name(int kind);
/* "running", "ended", "stopped at the size limit", "ended by a signal" */
const char *kv_trace_state_name(uint32_t state);

/* Where the threads were: every thread of the set, grouped by the
 * regions open at its end (the same set regions, outermost first). */
struct kv_tr_where {
    const struct kv_trace *t;
    const struct kv_tr_thread *th;
};
struct kv_tr_groups {
    struct kv_tr_where *w;   /* by group, then thread number, then rank */
    size_t n;
    size_t *start;           /* group k: w[start[k] .. start[k + 1]) */
    size_t ngroups, largest; /* largest: the group of the most threads */
};
void kv_trace_groups(struct kv_tr_groups *g, const struct kv_trace_set *s);
void kv_trace_groups_free(struct kv_tr_groups *g);
/* odd[k]: file k of the set has a thread outside the largest group. */
void kv_trace_odd_files(const struct kv_tr_groups *g,
                        const struct kv_trace_set *s, bool *odd);

/* kmview trace: the text summary of every file, with where each thread
 * was at the end (tracetext.c). */
void kv_trace_summary(FILE *f, struct kv_trace_set *s, int last);
/* kmview trace --json: Trace Event JSON (tracejson.c).  0 or -1. */
int kv_trace_json(FILE *f, struct kv_trace_set *s);
/* The report's member ,"trace":{...} (tracehtml.c).  0 or -1. */
int kv_trace_html(FILE *f, struct kv_trace_set *s);

#endif
