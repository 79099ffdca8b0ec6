/*
 * km_trace.c — the trace file (TRACE_FILE_NUMBER > 0, or the environment's
 * KM_TRACE_FILE_NUMBER): every entry into and exit from a traced region,
 * and the messages of measured MPI calls, with their clock ticks, in the
 * binary format doc/KM_trace.md fixes; kmview reads it.
 *
 * One file per process in the working directory, numbered as KM_output
 * files are: KM_trace.NNN for a serial program, KM_trace.NNN.<rank> for
 * an MPI rank (the rank is taken from the launcher's environment at the
 * first event, or from KM_MPII, which renames the file), NNN the lowest
 * number free, taken with O_EXCL: a trace never replaces another, which
 * another run may have mapped (truncated under it, its next store would
 * kill it with SIGBUS).
 *
 * The file is mapped (MAP_SHARED) a block at a time: an event is a
 * 16-byte store into the page cache, so it costs no system call and
 * survives the process being killed, even by SIGKILL.  Each thread writes
 * into a block of its own (its cursor, in its km_thread), claimed under a
 * lock every TRACE_RECORDS records.  The file grows by fallocate, never by
 * a sparse ftruncate alone: a page the disk had no room for would kill
 * the program with SIGBUS when stored to.  It stops at the control file's
 * TRACE_SIZE_LIMIT (MiB; the environment's KM_TRACE_LIMIT overrides it) or
 * when the disk would keep less than DISK_MARGIN free, saying so in one
 * line and in the header.
 *
 * Must never: call malloc or stdio on the way of an event, or disturb the
 * program when the file cannot be made or grown (one line on stderr, then
 * no more tracing).
 */
#include "runtime/km_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define TRACE_VERSION 2
#define BLOCK ((size_t)1 << 18)                /* 256 KiB */
#define REC 16
#define TRACE_RECORDS ((BLOCK - REC) / REC)    /* records per data block */
#define GROW_BLOCKS 64                         /* 16 MiB at a time */
#define LIMIT_DEFAULT_MIB 4096
#define DISK_MARGIN ((uint64_t)256 << 20)      /* never leave less free */
#define BLOCK_MAGIC 0x42544d4bu                /* "KMTB" */

enum { T_ENTER = 1, T_LEAVE, T_SENT, T_RECEIVED, T_REGION, T_CLOCK, T_END,
       T_COMM };
enum { S_RUNNING = 1, S_ENDED, S_LIMIT, S_SIGNAL };

/* Block 0, as doc/KM_trace.md lays it out. */
struct header {
    char magic[16];
    uint32_t version, byte_order, block_size, record_size;
    int32_t rank, nranks;
    int64_t pid;
    double seconds_per_tick;
    int64_t t0_tick, t0_realtime_ns;
    uint64_t blocks;
    uint32_t state;
    int32_t signal;
    uint64_t dropped, limit_bytes;
    char clock[64];
    char program[256];
};

struct record {
    int64_t time;
    uint32_t type_extra;       /* type | extra << 8, stored last */
    int32_t id;
};

static struct {
    int state;                 /* 0 not started, 1 writing, -1 given up */
    int fd;
    struct header *head;       /* block 0, mapped */
    uint64_t size;             /* of the file, allocated */
    uint64_t limit;
    int warned_half, warned_stop;
    km_tick start_tick;
    double seconds_per_tick;
    pthread_mutex_t lock;      /* claiming blocks, growing the file */
    char path[32];
} tr = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

_Static_assert(sizeof(struct header) <= 4096, "the header fits a page");
_Static_assert(sizeof(struct record) == REC, "a record is 16 bytes");

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The rank the launcher gave this process, or -1. */
static int launcher_rank(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                        "PMI_RANK", "MV2_COMM_WORLD_RANK",
                                        "SLURM_PROCID" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *s = getenv(vars[i]);
        char *end;
        if (s && *s) {
            long v = strtol(s, &end, 10);
            if (*end == '\0' && v >= 0 && v < 100000000)
                return (int)v;
        }
    }
    return -1;
}

static uint64_t control_limit_mib = LIMIT_DEFAULT_MIB;

void km_trace_set_limit(long long mib)
{
    if (mib >= 1 && mib <= (1LL << 30))
        control_limit_mib = (uint64_t)mib;
}

static uint64_t limit_bytes(void)
{
    const char *s = getenv("KM_TRACE_LIMIT");
    uint64_t mib = control_limit_mib;
    if (s && *s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end || v < 1 || v > ((uint64_t)1 << 30))
            km_complain("ignoring KM_TRACE_LIMIT=%.40s (MiB, 1 or more)", s);
        else
            mib = v;
    }
    uint64_t b = mib << 20;
    return b < 2 * BLOCK ? 2 * BLOCK : b;
}

/* Make the file KM_trace.NNN (rank < 0) or KM_trace.NNN.<rank>, NNN the
 * lowest free: its descriptor (its name in tr.path), or -1 (errno). */
static int claim_by_open(const char *path, void *fd)
{
    int d = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (d < 0)
        return errno == EEXIST ? 1 : -1;
    *(int *)fd = d;
    snprintf(tr.path, sizeof tr.path, "%s", path);
    return 0;
}

static int create_numbered(int rank)
{
    int fd = -1;
    int n = km_file_lowest("", "KM_trace", rank, claim_by_open, &fd);
    if (n == -2)
        errno = EEXIST;              /* (KM_trace.000 to .999 taken) */
    return n >= 0 ? fd : -1;
}

/* Give the file `from` the lowest free name of a rank's. */
static int claim_by_link(const char *path, void *from)
{
    if (link(from, path) != 0)
        return errno == EEXIST ? 1 : -1;
    snprintf(tr.path, sizeof tr.path, "%s", path);
    return 0;
}

/* The file could not be made: say so once, and remove what open()
 * created, so that no empty or headerless KM_trace is left behind (it
 * would pass for a trace to kmview, and hide the earlier one's absence). */
static void give_up(const char *what)
{
    int e = errno;
    if (tr.fd >= 0) {
        close(tr.fd);
        unlink(tr.path);
    }
    errno = e;
    km_complain("trace %s: %s: %s; no trace is written", tr.path, what,
                strerror(errno));
    tr.fd = -1;
    tr.state = -1;
}

static int fill(uint64_t size);

/* Room for the file up to `size` bytes, really on the disk; SIGXFSZ
 * ignored meanwhile (km_signal_hold_xfsz), so that a file-size limit
 * fails the call with EFBIG instead of killing the program. */
static int allocate(uint64_t size)
{
    if (size <= tr.size)
        return 0;
    struct sigaction old;
    int held = km_signal_hold_xfsz(&old);
    int e = fill(size);
    if (held)
        km_signal_release_xfsz(&old);
    if (e != 0) {
        errno = e;
        return -1;
    }
    tr.size = size;
    return 0;
}

/* allocate's work: 0 or an errno. */
static int fill(uint64_t size)
{
    int e = posix_fallocate(tr.fd, (off_t)tr.size, (off_t)(size - tr.size));
    if (e == EINVAL || e == EOPNOTSUPP) {
        /* (a file system without it: zeros, written) */
        static const char zeros[4096];
        for (uint64_t at = tr.size; at < size; at += sizeof zeros)
            if (pwrite(tr.fd, zeros, sizeof zeros, (off_t)at) !=
                (ssize_t)sizeof zeros)
                return errno ? errno : ENOSPC;
        e = 0;
    }
    return e;
}

static void start(const struct km_trace_run *run, km_tick now)
{
    tr.state = 1;
    int rank = launcher_rank();
    snprintf(tr.path, sizeof tr.path, "KM_trace.NNN%s",
             rank >= 0 ? ".<rank>" : "");
    tr.limit = limit_bytes();
    tr.fd = create_numbered(rank);
    if (tr.fd < 0) {
        give_up("cannot create it");
        return;
    }
    if (allocate(BLOCK) != 0) {
        give_up("cannot size it");
        return;
    }
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, tr.fd, 0);
    if (m == MAP_FAILED) {
        give_up("cannot map it");
        return;
    }
    struct header *h = tr.head = m;
    memcpy(h->magic, "kmtool-trace", 12);
    h->version = TRACE_VERSION;
    h->byte_order = 0x01020304;
    h->block_size = (uint32_t)BLOCK;
    h->record_size = REC;
    h->rank = rank;
    h->pid = getpid();
    h->seconds_per_tick = run->seconds_per_tick;
    h->t0_tick = run->t0;
    h->t0_realtime_ns = clock_ns(CLOCK_REALTIME) -
        (int64_t)((double)(now - run->t0) * run->seconds_per_tick * 1e9);
    h->limit_bytes = tr.limit;
    h->state = S_RUNNING;
    snprintf(h->clock, sizeof h->clock, "%s", run->clock_name);
    km_program_name(h->program, sizeof h->program);
    tr.start_tick = run->t0;
    tr.seconds_per_tick = run->seconds_per_tick;
}

/* One line, once: how fast the trace grows, and when it stops. */
static void warn_growth(uint64_t end, km_tick now)
{
    double secs = (double)(now - tr.start_tick) * tr.seconds_per_tick;
    if (!tr.warned_half && end >= tr.limit / 2 && secs > 0) {
        tr.warned_half = 1;
        double rate = (double)end / secs;
        km_complain("trace %s: %.1f MiB in %.1f s; at %.1f MiB/s it reaches "
                    "its limit of %.0f MiB (TRACE_SIZE_LIMIT) in %.1f s",
                    tr.path, (double)end / 1048576, secs, rate / 1048576,
                    (double)tr.limit / 1048576,
                    (double)(tr.limit - end) / rate);
    }
}

static void stop(const char *why)
{
    if (tr.warned_stop++)
        return;
    __atomic_store_n(&tr.head->state, S_LIMIT, __ATOMIC_RELEASE);
    km_complain("trace %s stopped at %.0f MiB: %s; the events after it are "
                "counted, not recorded", tr.path, (double)tr.size / 1048576,
                why);
}

/* Room on the disk for the file to grow to `want`? */
static int disk_has_room(uint64_t want)
{
    struct statvfs vfs;
    if (fstatvfs(tr.fd, &vfs) != 0)
        return 1;
    uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    return avail >= want - tr.size + DISK_MARGIN;
}

/* The next data block's number for the calling thread, the file grown to
 * hold it; 0 when the trace stops. */
static uint64_t claim_block(km_tick now)
{
    pthread_mutex_lock(&tr.lock);
    uint64_t index = tr.head->blocks + 1;
    uint64_t end = (index + 1) * BLOCK;
    if (tr.head->state != S_RUNNING && tr.head->state != S_ENDED) {
        index = 0;
    } else if (end > tr.limit) {
        stop("its size limit (TRACE_SIZE_LIMIT, MiB) was reached");
        index = 0;
    } else if (end > tr.size) {
        /* doubling, up to GROW_BLOCKS: a short run's file stays small */
        uint64_t grow = tr.size / BLOCK;
        uint64_t want = tr.size + (grow < GROW_BLOCKS ? grow : GROW_BLOCKS) *
                                  BLOCK;
        if (want > tr.limit)
            want = tr.limit / BLOCK * BLOCK;
        if (!disk_has_room(want)) {
            stop("the disk is nearly full");
            index = 0;
        } else if (allocate(want) != 0) {
            stop(strerror(errno));
            index = 0;
        }
        warn_growth(end, now);
    }
    if (index)
        __atomic_store_n(&tr.head->blocks, index, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&tr.lock);
    return index;
}

static struct record *slot(struct km_trace_cursor *c, int n)
{
    struct record *r = (struct record *)c->at;
    c->at += (size_t)n * REC;
    c->left -= (uint32_t)n;
    return r;
}

/* The record's fields, its type word last: `comm` for SENT and RECEIVED
 * (the record's bits 16-31), else 0. */
static void publish_comm(struct record *r, int type, int extra, int comm,
                         int32_t id, int64_t time)
{
    r->time = time;
    r->id = id;
    __atomic_store_n(&r->type_extra, (uint32_t)type | (uint32_t)extra << 8 |
                                         (uint32_t)comm << 16,
                     __ATOMIC_RELEASE);
}

static void publish(struct record *r, int type, int extra, int32_t id,
                    int64_t time)
{
    publish_comm(r, type, extra, 0, id, time);
}

static void put_clock(struct km_trace_cursor *c, km_tick now)
{
    struct record *r = slot(c, 2);
    int64_t *x = (int64_t *)(r + 1);
    x[0] = clock_ns(CLOCK_REALTIME);
    x[1] = clock_ns(CLOCK_MONOTONIC);
    publish(r, T_CLOCK, 1, 0, now);
}

/* A new block for cursor c; 0 if there is none (the trace stopped). */
static int next_block(struct km_trace_cursor *c, km_tick now)
{
    if (c->block)
        munmap(c->block, BLOCK);
    c->block = NULL;
    c->left = 0;
    uint64_t index = claim_block(now);
    if (!index)
        return 0;
    void *m = mmap(NULL, BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, tr.fd,
                   (off_t)(index * BLOCK));
    if (m == MAP_FAILED)
        return 0;
    c->block = m;
    uint32_t *head = m;
    head[0] = BLOCK_MAGIC;
    head[1] = (uint32_t)c->thread;
    uint64_t seq = c->seq++;
    memcpy((char *)m + 8, &seq, sizeof seq);
    c->at = (char *)m + REC;
    c->left = (uint32_t)TRACE_RECORDS;
    put_clock(c, now);
    return 1;
}

/* Room for n records in c's block (a new block if need be). */
static int room(struct km_trace_cursor *c, int n, km_tick now)
{
    if (KM_LIKELY(c->left >= (uint32_t)n))
        return 1;
    if (next_block(c, now))
        return 1;
    __atomic_fetch_add(&tr.head->dropped, 1, __ATOMIC_RELAXED);
    return 0;
}

static int ready(const struct km_trace_run *run, km_tick now)
{
    if (KM_UNLIKELY(tr.state == 0)) {
        pthread_mutex_lock(&tr.lock);
        if (tr.state == 0)
            start(run, now);
        pthread_mutex_unlock(&tr.lock);
    }
    return tr.state > 0;
}

/* The REGION record of r, before its first event on this thread. */
static void define(struct km_trace_cursor *c, struct km_region *r,
                   const struct km_region *routine, km_tick now)
{
    const char *name = KM_KIND_IS_ROUTINE(r->kind) ? r->name : r->text;
    const char *file = routine ? routine->file : NULL;
    name = name ? name : "";
    file = file ? file : "";
    size_t ln = strlen(name), lf = strlen(file);
    if (ln > 1000)
        ln = 1000;
    if (lf > 1000)
        lf = 1000;
    size_t text = ln + 1 + lf + 1;
    int slots = (int)((text + REC - 1) / REC);
    if (!room(c, 2 + slots, now))
        return;
    struct record *rec = slot(c, 2 + slots);
    int32_t *d = (int32_t *)(rec + 1);
    d[0] = r->kind;
    d[1] = r->line;
    d[2] = r->routine;
    d[3] = (int32_t)text;
    char *t = (char *)(rec + 2);
    memset(t, 0, (size_t)slots * REC);
    memcpy(t, name, ln);
    memcpy(t + ln + 1, file, lf);
    publish(rec, T_REGION, 1 + slots, r->id, 0);
    r->traced = 1;
}

void km_trace_event(struct km_trace_cursor *c, const struct km_trace_run *run,
                    struct km_region *r, const struct km_region *routine,
                    int in, km_tick now)
{
    if (!ready(run, now))
        return;
    if (KM_UNLIKELY(!r->traced))
        define(c, r, routine, now);
    if (room(c, 1, now))
        publish(slot(c, 1), in ? T_ENTER : T_LEAVE, 0, r->id, now);
}

void km_trace_message(struct km_trace_cursor *c,
                      const struct km_trace_run *run, int32_t id, int sent,
                      int64_t bytes, int32_t peer, int32_t tag, int comm,
                      km_tick now)
{
    if (tr.state <= 0 || !ready(run, now) || !room(c, 2, now))
        return;
    struct record *r = slot(c, 2);
    int32_t *x = (int32_t *)(r + 1);
    x[0] = peer;
    x[1] = tag;
    memcpy(x + 2, &bytes, sizeof bytes);
    publish_comm(r, sent ? T_SENT : T_RECEIVED, 1, comm, id, now);
}

#define COMM_PER_RECORD 1016         /* (255 - 1) slots of 4 members */

void km_trace_comm(struct km_trace_cursor *c, const struct km_trace_run *run,
                   int id, int32_t size, int32_t inter, const int32_t *world,
                   km_tick now)
{
    if (tr.state <= 0 || !ready(run, now))
        return;
    for (int32_t first = 0; first < size; first += COMM_PER_RECORD) {
        int32_t count = size - first < COMM_PER_RECORD ? size - first
                                                       : COMM_PER_RECORD;
        int slots = 1 + (count * 4 + REC - 1) / REC;
        if (!room(c, 1 + slots, now))
            return;
        struct record *r = slot(c, 1 + slots);
        int32_t *x = (int32_t *)(r + 1);
        x[0] = size;
        x[1] = first;
        x[2] = count;
        x[3] = inter;
        memset(x + 4, 0, (size_t)(slots - 1) * REC);
        memcpy(x + 4, world + first, (size_t)count * sizeof *world);
        publish(r, T_COMM, slots, id, now);
    }
}

void km_trace_rank(int rank, int nranks)
{
    if (tr.state <= 0)
        return;
    if (rank != tr.head->rank) {
        /* (under a name of its own first: its serial name would keep its
         * number from a rank's) */
        char own[sizeof tr.path];
        snprintf(own, sizeof own, "KM_trace.%ld", (long)getpid());
        if (rename(tr.path, own) == 0) {
            if (km_file_lowest("", "KM_trace", rank, claim_by_link, own) < 0)
                rename(own, tr.path);
            else
                unlink(own);
        }
        tr.head->rank = rank;
    }
    tr.head->nranks = nranks;
}

void km_trace_end(struct km_trace_cursor *c, int sig, km_tick now)
{
    if (tr.state <= 0)
        return;
    if (c && c->block && room(c, 3, now)) {
        put_clock(c, now);
        publish(slot(c, 1), T_END, 0, sig, now);
    }
    if (!sig) {
        /* the room no thread claimed yet (it is claimed again if need be) */
        pthread_mutex_lock(&tr.lock);
        uint64_t used = (tr.head->blocks + 1) * BLOCK;
        if (used < tr.size && ftruncate(tr.fd, (off_t)used) == 0)
            tr.size = used;
        pthread_mutex_unlock(&tr.lock);
    }
    if (sig) {
        tr.head->signal = sig;
        __atomic_store_n(&tr.head->state, S_SIGNAL, __ATOMIC_RELEASE);
    } else if (tr.head->state == S_RUNNING) {
        __atomic_store_n(&tr.head->state, S_ENDED, __ATOMIC_RELEASE);
    }
}

int km_trace_active(void)
{
    return tr.state > 0;
}
