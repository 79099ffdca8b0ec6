/*
 * km_io.c — the files a rank's measured I/O statements worked on: per
 * file, the count and time of each operation (OPEN, CLOSE, INQUIRE,
 * REWIND, BACKSPACE, ENDFILE, FLUSH, WAIT: metadata; READ, WRITE, PRINT:
 * data), the bytes of unformatted transfers, and the file's size.
 *
 * kmrun writes, around a measured I/O statement (rewriter/files.c):
 *   before it  CALL KM_IOU(unit, op)        the unit it acts on
 *              CALL KM_ION(unit, op, name)  OPEN, INQUIRE(FILE=): by name
 *   after it   CALL KM_IOM(unit)            OPEN: the unit is now connected
 *                                           to the file KM_ION named
 *              CALL KM_IOL(length)          an unformatted transfer's
 *                                           INQUIRE(IOLENGTH=) of its list
 * The statement's own region (kind IO) carries KM_HOOK_IO: when it closes,
 * km_io_leave gives its elapsed time, measured or estimated, to the file
 * the "before" call chose, so that a rank's file times add up to its I/O
 * time whatever path the statement left by (END=, ERR=).
 *
 * Measured MPI-IO calls (rewriter/mpiio.c) go the same way into rows of
 * their own (a file both touched has a Fortran row and an MPI-IO row):
 *   before it  CALL KM_MPIO(handle, op)     the file handle it acts on
 *              CALL KM_MPIN(op, name)       MPI_FILE_OPEN, _DELETE: by name
 *   after it   CALL KM_MPIH(handle)         MPI_FILE_OPEN: the handle now
 *                                           stands for the file KM_MPIN
 *                                           named
 *              CALL KM_IOL(bytes)           through KM_libkm_mpi.f's glue:
 *                                           count x the datatype's size
 * and the call's region (kind MPI, its name MPI_FILE_...) carries
 * KM_HOOK_IO too (km_region.c).  Its time stays MPI time.
 *
 * Units are the process's, so the unit map and the file table are shared
 * by the threads, changed under one lock (I/O statements are slow; a
 * lock costs nothing beside them).  Files live in chunks that never move
 * and their figures are updated with relaxed atomics, so that a snapshot
 * (even from a signal handler) reads them without the lock.  At most
 * MAX_NAMED files are told apart; the others share one row (one per
 * interface).
 *
 * Must never: call the Fortran run-time library (C cannot), allocate in
 * a snapshot but through km_mem, or block a snapshot.
 */
#include "runtime/km_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define km_iou_f F77_FUNC_(km_iou, KM_IOU)
#define km_ion_f F77_FUNC_(km_ion, KM_ION)
#define km_iom_f F77_FUNC_(km_iom, KM_IOM)
#define km_iol_f F77_FUNC_(km_iol, KM_IOL)
#define km_mpio_f F77_FUNC_(km_mpio, KM_MPIO)
#define km_mpin_f F77_FUNC_(km_mpin, KM_MPIN)
#define km_mpih_f F77_FUNC_(km_mpih, KM_MPIH)
void km_iou_f(const int32_t *unit, const int32_t *op);
void km_ion_f(const int32_t *unit, const int32_t *op, const char *name);
void km_iom_f(const int32_t *unit);
void km_iol_f(const int64_t *length);
void km_mpio_f(const int32_t *handle, const int32_t *op);
void km_mpin_f(const int32_t *op, const char *name);
void km_mpih_f(const int32_t *handle);

#define FILE_CHUNK 64
#define MAX_NAMED 4095
/* the named rows and the two <other files> rows */
#define FILE_CHUNKS ((MAX_NAMED + 2 + FILE_CHUNK - 1) / FILE_CHUNK)
#define NBUCKETS 1024
#define NAME_MAX_LEN 4096

/* A file's figures, read by snapshots without the lock. */
struct iofile {
    const char *name;        /* set before the file is published */
    uint64_t n[KM_IO_NOPS];  /* operations, by enum km_io_op */
    km_time t[KM_IO_NOPS];   /* their elapsed time (subticks) */
    km_time te[KM_IO_NOPS];  /* the estimated part of t */
    uint64_t bytes[2];       /* exact: [0] read, [1] written */
    uint64_t formatted[2];   /* formatted reads and writes */
    uint64_t grown;          /* bytes the file grew by in connections
                                with formatted writes, once closed */
    int64_t size;            /* last size seen (stat), -1: never */
    int mpiio;               /* the row of MPI-IO calls */
    /* under the lock */
    int32_t next;            /* hash chain, index + 1 */
    int32_t units;           /* units connected to it now */
    int64_t conn_size;       /* its size when the last connection began */
    int64_t before_close;    /* its size just before a CLOSE (which may
                                delete it) */
    int conn_formatted;      /* that connection wrote formatted records */
};

/* What a unit (or an MPI-IO file handle) is connected to now. */
struct connection {
    int32_t unit, file;      /* file: index */
};
struct connections {
    struct connection *v;
    int32_t n, cap;
};

static struct iofile *chunks[FILE_CHUNKS];
static int32_t nfiles;                   /* published with release order */
static int32_t buckets[NBUCKETS];        /* index + 1 */
static int32_t nnamed;                   /* rows but <other files> */
static struct connections units, handles;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* What the calls around the statement this thread is in said. */
static __thread struct {
    int32_t file;            /* index + 1: its file; 0: none */
    int32_t op;              /* enum km_io_op */
    int32_t unit;            /* or an MPI-IO handle; -1: none */
    int formatted;
    int mpiio;               /* KM_IO_MPIIO */
    int end_part;            /* KM_IO_END_PART */
    int32_t last_file, last_op;   /* for KM_IOL, KM_IOM and KM_MPIH */
} pend __attribute__((tls_model("initial-exec")));

static struct iofile *file_at(int32_t i)
{
    return &chunks[i / FILE_CHUNK][i % FILE_CHUNK];
}

static uint32_t name_hash(const char *s, int mpiio)
{
    uint32_t h = 2166136261u ^ (uint32_t)mpiio;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % NBUCKETS;
}

/* Under the lock: the index of the file called `name` (its Fortran row,
 * or its MPI-IO row), added if new; the row of the files beyond
 * MAX_NAMED once the table is full; -1 when memory runs out. */
static int32_t file_named(const char *name, int mpiio)
{
    uint32_t b = name_hash(name, mpiio);
    for (int32_t i = buckets[b]; i; i = file_at(i - 1)->next)
        if (file_at(i - 1)->mpiio == mpiio &&
            strcmp(file_at(i - 1)->name, name) == 0)
            return i - 1;
    int other = strcmp(name, "<other files>") == 0;
    if (nnamed >= MAX_NAMED && !other)
        return file_named("<other files>", mpiio);
    if (!chunks[nfiles / FILE_CHUNK] &&
        !(chunks[nfiles / FILE_CHUNK] = calloc(FILE_CHUNK,
                                               sizeof(struct iofile))))
        return -1;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    struct iofile *f = file_at(nfiles);
    f->name = copy;
    f->mpiio = mpiio;
    f->size = -1;
    f->conn_size = -1;
    f->before_close = -1;
    f->next = buckets[b];
    buckets[b] = nfiles + 1;
    nnamed += !other;
    __atomic_store_n(&nfiles, nfiles + 1, __ATOMIC_RELEASE);
    return nfiles - 1;
}

static struct connection *connection_of(struct connections *c,
                                        int32_t unit)
{
    for (int32_t k = 0; k < c->n; k++)
        if (c->v[k].unit == unit)
            return &c->v[k];
    return NULL;
}

/* The name of a unit no measured OPEN connected: the units every Fortran
 * compiler preconnects, or the unit's number. */
static void unit_name(int32_t unit, char *buf, size_t size)
{
    if (unit == 5)
        snprintf(buf, size, "<stdin>");
    else if (unit == 6)
        snprintf(buf, size, "<stdout>");
    else if (unit == 0)
        snprintf(buf, size, "<stderr>");
    else
        snprintf(buf, size, "<unit %d>", (int)unit);
}

/* Under the lock: the file statement `op` on `unit` acts on. */
static int32_t file_of(int32_t unit, int32_t op)
{
    char name[64];
    switch (op & KM_IO_SOURCE) {
    case KM_IO_DEFAULT_UNIT:
        return file_named((op & KM_IO_OP) == KM_IO_READ ? "<stdin>"
                                                         : "<stdout>", 0);
    case KM_IO_INTERNAL:
        return file_named("<internal>", 0);
    case KM_IO_UNIT_UNKNOWN:
        return file_named("<unit not known>", 0);
    default:
        break;
    }
    const struct connection *m = connection_of(&units, unit);
    if (m)
        return m->file;
    unit_name(unit, name, sizeof name);
    return file_named(name, 0);
}

static int64_t size_of(const char *name)
{
    struct stat sb;
    if (name[0] == '<' || stat(name, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    return (int64_t)sb.st_size;
}

/* Under the lock: a connection of file f ends (CLOSE, or its unit opened
 * on another file): its size now, and what formatted writes grew it by. */
static void disconnect(struct iofile *f)
{
    int64_t size = size_of(f->name);
    if (size < 0)
        size = f->before_close;      /* CLOSE(STATUS='DELETE') */
    f->before_close = -1;
    if (size >= 0)
        __atomic_store_n(&f->size, size, __ATOMIC_RELAXED);
    if (f->conn_formatted && size > f->conn_size && f->conn_size >= 0)
        __atomic_fetch_add(&f->grown, (uint64_t)(size - f->conn_size),
                           __ATOMIC_RELAXED);
    f->conn_formatted = 0;
    if (f->units > 0)
        f->units--;
}

static void unmap(struct connections *c, int32_t unit)
{
    struct connection *m = connection_of(c, unit);
    if (!m)
        return;
    disconnect(file_at(m->file));
    *m = c->v[--c->n];
}

/* Under the lock: connect `unit` (or handle) to file i (an OPEN that
 * completed). */
static void map(struct connections *c, int32_t unit, int32_t i)
{
    struct connection *m = connection_of(c, unit);
    if (m && m->file == i)
        return;                  /* OPEN on a connected unit, same file */
    if (m) {
        disconnect(file_at(m->file));
        m->file = i;
    } else {
        if (c->n == c->cap) {
            int32_t cap = c->cap ? 2 * c->cap : 32;
            struct connection *v = realloc(c->v, (size_t)cap * sizeof *v);
            if (!v)
                return;
            c->v = v;
            c->cap = cap;
        }
        c->v[c->n++] = (struct connection){ unit, i };
    }
    struct iofile *f = file_at(i);
    f->units++;
    f->conn_size = size_of(f->name);
    f->conn_formatted = 0;
    if (f->conn_size >= 0)
        __atomic_store_n(&f->size, f->conn_size, __ATOMIC_RELAXED);
}

static void expect(int32_t file, int32_t unit, int32_t op)
{
    pend.file = file + 1;
    pend.op = op & KM_IO_OP;
    pend.unit = unit;
    pend.formatted = (op & KM_IO_FORMATTED) != 0;
    pend.mpiio = (op & KM_IO_MPIIO) != 0;
    pend.end_part = (op & KM_IO_END_PART) != 0;
}

/* Before a CLOSE of file i: its size, should the CLOSE delete it. */
static void before_close(int32_t i, int32_t op)
{
    if ((op & KM_IO_OP) == KM_IO_CLOSE) {
        struct iofile *f = file_at(i);
        f->before_close = size_of(f->name);
    }
}

void km_iou_f(const int32_t *unit, const int32_t *op)
{
    pthread_mutex_lock(&lock);
    int32_t i = file_of(*unit, *op);
    pthread_mutex_unlock(&lock);
    if (i < 0)
        return;
    before_close(i, *op);
    expect(i, *unit, *op);
}

/* `name` as the program gave it, without trailing blanks, into buf. */
static size_t trimmed(const char *name, char *buf, size_t size)
{
    size_t n = strnlen(name, size - 1);
    while (n > 0 && name[n - 1] == ' ')
        n--;
    memcpy(buf, name, n);
    buf[n] = 0;
    return n;
}

void km_ion_f(const int32_t *unit, const int32_t *op, const char *name)
{
    char buf[NAME_MAX_LEN];
    if (trimmed(name, buf, sizeof buf) == 0) {   /* OPEN without FILE= */
        if (*op & KM_IO_SCRATCH)
            snprintf(buf, sizeof buf, "<scratch>");
        else if ((*op & KM_IO_SOURCE) == KM_IO_UNIT)
            snprintf(buf, sizeof buf, "fort.%d", (int)*unit);
        else
            snprintf(buf, sizeof buf, "<unit not known>");
    }
    pthread_mutex_lock(&lock);
    int32_t i = file_named(buf, 0);
    pthread_mutex_unlock(&lock);
    if (i >= 0)
        expect(i, *unit, *op);
}

/* After an OPEN: `unit` (or an MPI-IO handle) now stands for the file
 * the call before it named. */
static void connect(struct connections *c, int32_t unit)
{
    if (pend.last_op != KM_IO_OPEN || pend.last_file <= 0)
        return;
    pthread_mutex_lock(&lock);
    map(c, unit, pend.last_file - 1);
    pthread_mutex_unlock(&lock);
    pend.last_op = 0;
}

void km_iom_f(const int32_t *unit)
{
    connect(&units, *unit);
}

void km_mpio_f(const int32_t *handle, const int32_t *op)
{
    char name[64];
    pthread_mutex_lock(&lock);
    const struct connection *m = connection_of(&handles, *handle);
    int32_t i;
    if (m) {
        i = m->file;
    } else {                     /* opened where kmrun measured no call */
        snprintf(name, sizeof name, "<file handle %d>", (int)*handle);
        i = file_named(name, 1);
    }
    pthread_mutex_unlock(&lock);
    if (i < 0)
        return;
    before_close(i, *op);
    expect(i, *handle, *op | KM_IO_MPIIO);
}

void km_mpin_f(const int32_t *op, const char *name)
{
    char buf[NAME_MAX_LEN];
    if (trimmed(name, buf, sizeof buf) == 0)
        snprintf(buf, sizeof buf, "<no name>");
    pthread_mutex_lock(&lock);
    int32_t i = file_named(buf, 1);
    pthread_mutex_unlock(&lock);
    if (i >= 0)
        expect(i, -1, *op | KM_IO_MPIIO);
}

void km_mpih_f(const int32_t *handle)
{
    connect(&handles, *handle);
}

void km_iol_f(const int64_t *length)
{
    int32_t op = pend.last_op;
    if (pend.last_file <= 0 || *length < 0 ||
        (op != KM_IO_READ && op != KM_IO_WRITE))
        return;
    struct iofile *f = file_at(pend.last_file - 1);
    __atomic_fetch_add(&f->bytes[op == KM_IO_WRITE], (uint64_t)*length,
                       __ATOMIC_RELAXED);
    pend.last_op = 0;
}

void km_io_leave(km_time e, int estimated)
{
    if (!pend.file)
        return;                  /* an object instrumented without files */
    int32_t op = pend.op;
    struct iofile *f = file_at(pend.file - 1);
    if (!pend.end_part)
        __atomic_fetch_add(&f->n[op], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&f->t[op], e, __ATOMIC_RELAXED);
    if (estimated)
        __atomic_fetch_add(&f->te[op], e, __ATOMIC_RELAXED);
    if (op == KM_IO_READ || op == KM_IO_WRITE) {
        if (pend.formatted)
            __atomic_fetch_add(&f->formatted[op == KM_IO_WRITE], 1,
                               __ATOMIC_RELAXED);
        if (pend.formatted && op == KM_IO_WRITE)
            f->conn_formatted = 1;   /* a flag: a race only repeats it */
    }
    if (op == KM_IO_CLOSE) {
        pthread_mutex_lock(&lock);
        unmap(pend.mpiio ? &handles : &units, pend.unit);
        pthread_mutex_unlock(&lock);
    }
    pend.last_file = pend.file;
    pend.last_op = op;
    pend.file = 0;
}

struct km_iofile *km_io_copy(int32_t *n)
{
    int32_t count = __atomic_load_n(&nfiles, __ATOMIC_ACQUIRE);
    *n = 0;
    struct km_iofile *v = km_mem_alloc(((size_t)count + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (int32_t i = 0; i < count; i++) {
        struct iofile *f = file_at(i);
        struct km_iofile *d = &v[i];
        d->name = f->name;
        d->mpiio = f->mpiio;
        for (int op = 0; op < KM_IO_NOPS; op++) {
            d->n[op] = __atomic_load_n(&f->n[op], __ATOMIC_RELAXED);
            d->t[op] = __atomic_load_n(&f->t[op], __ATOMIC_RELAXED);
            d->te[op] = __atomic_load_n(&f->te[op], __ATOMIC_RELAXED);
        }
        for (int k = 0; k < 2; k++) {
            d->bytes[k] = __atomic_load_n(&f->bytes[k], __ATOMIC_RELAXED);
            d->formatted[k] = __atomic_load_n(&f->formatted[k],
                                              __ATOMIC_RELAXED);
        }
        d->grown = __atomic_load_n(&f->grown, __ATOMIC_RELAXED);
        d->size = __atomic_load_n(&f->size, __ATOMIC_RELAXED);
        /* a connection still open: its growth so far (what the Fortran
         * library still holds in its buffers is not on disk yet) */
        int64_t now = __atomic_load_n(&f->units, __ATOMIC_RELAXED) > 0
                          ? size_of(f->name) : -1;
        if (now >= 0) {
            d->size = now;
            if (f->conn_formatted && f->conn_size >= 0 && now > f->conn_size)
                d->grown += (uint64_t)(now - f->conn_size);
        }
    }
    *n = count;
    return v;
}
