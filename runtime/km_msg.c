/*
 * km_msg.c — the bytes MPI call sites move: per call site (a location of
 * kind MPI), the messages, the bytes sent and received, and a histogram
 * of message sizes in powers of two.
 *
 * The instrumented code calls KM_libkm_mpi.f's KM_MPIS / KM_MPIQ / KM_MPIR
 * / KM_MPIC after a measured MPI call; they find the size of the datatype
 * through the user's MPI and call KM_MPI_BYTES_C here with the bytes.
 * The figures are the rank's, over all its threads: a table per rank,
 * indexed by region id, in chunks that never move (a thread reads its
 * chunk without a lock), updated with relaxed atomic adds (threads of a
 * MPI_THREAD_MULTIPLE program may send at once).  A chunk is allocated
 * the first time a call site in it records a message.
 *
 * Must never: call MPI, or take a lock on the way of a message but to
 * allocate a chunk.
 */
#include "runtime/km_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define km_mpi_bytes_c F77_FUNC_(km_mpi_bytes_c, KM_MPI_BYTES_C)
void km_mpi_bytes_c(const int32_t *h, const int32_t *what,
                    const int64_t *bytes);

#define CHUNK 1024                   /* call sites per chunk */
#define NCHUNKS 4096                 /* ids up to 4M */

static struct km_msg *chunks[NCHUNKS];
static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;

/* The histogram bin of a message of `bytes`: 0 for an empty one, else k
 * for 2^(k-1) <= bytes < 2^k. */
static int bin_of(uint64_t bytes)
{
    int k = bytes ? 64 - __builtin_clzll(bytes) : 0;
    return k < KM_MSG_BINS ? k : KM_MSG_BINS - 1;
}

static struct km_msg *chunk(int32_t c)
{
    struct km_msg *p = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);
    if (p)
        return p;
    pthread_mutex_lock(&chunk_lock);
    p = chunks[c];
    if (!p) {
        p = calloc(CHUNK, sizeof *p);
        __atomic_store_n(&chunks[c], p, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&chunk_lock);
    return p;
}

void km_msg_record(int32_t id, int what, int64_t bytes)
{
    if (id <= 0 || id > CHUNK * NCHUNKS || bytes < 0 ||
        what < KM_MSG_SENT || what > KM_MSG_RECEIVED)
        return;
    struct km_msg *c = chunk((id - 1) / CHUNK);
    if (!c)
        return;                      /* no memory: the message goes unseen */
    struct km_msg *m = &c[(id - 1) % CHUNK];
    uint64_t b = (uint64_t)bytes;
    __atomic_fetch_add(&m->messages, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(what == KM_MSG_SENT ? &m->sent : &m->received, b,
                       __ATOMIC_RELAXED);
    __atomic_fetch_add(&m->bins[bin_of(b)], 1, __ATOMIC_RELAXED);
}

struct km_msg *km_msg_copy(int32_t nreg)
{
    struct km_msg *v = km_mem_alloc(((size_t)nreg + 1) * sizeof *v);
    if (!v)
        return NULL;
    memset(v, 0, ((size_t)nreg + 1) * sizeof *v);
    for (int32_t c = 0; c * CHUNK < nreg && c < NCHUNKS; c++) {
        const struct km_msg *p = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);
        if (!p)
            continue;
        for (int32_t k = 0; k < CHUNK && c * CHUNK + k < nreg; k++) {
            struct km_msg *d = &v[c * CHUNK + k];
            d->messages = __atomic_load_n(&p[k].messages, __ATOMIC_RELAXED);
            d->sent = __atomic_load_n(&p[k].sent, __ATOMIC_RELAXED);
            d->received = __atomic_load_n(&p[k].received, __ATOMIC_RELAXED);
            for (int b = 0; b < KM_MSG_BINS; b++)
                d->bins[b] = __atomic_load_n(&p[k].bins[b], __ATOMIC_RELAXED);
        }
    }
    return v;
}

/* KM_libkm_mpi.f's call: `what` KM_MSG_SENT or KM_MSG_RECEIVED. */
void km_mpi_bytes_c(const int32_t *h, const int32_t *what,
                    const int64_t *bytes)
{
    km_msg_record(*h, *what, *bytes);
}
