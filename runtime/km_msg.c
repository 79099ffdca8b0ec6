/*
 * km_msg.c — the bytes MPI call sites move: per call site (a location of
 * kind MPI), the messages, the bytes sent and received, and a histogram
 * of message sizes in powers of two.
 *
 * The instrumented code calls KM_libkm_mpi.f's KM_MPIS / KM_MPIQ / KM_MPIR
 * / KM_MPIC after a measured MPI call; they find the size of the datatype
 * through the user's MPI and call KM_MPI_BYTES_C (km_mpi.c, which serial
 * programs do not link) with the bytes, which records them here.
 * The figures are the rank's, over all its threads: a table per rank,
 * indexed by region id, in chunks that never move (a thread reads its
 * chunk without a lock), updated with relaxed atomic adds (threads of a
 * MPI_THREAD_MULTIPLE program may send at once).  A chunk is allocated
 * the first time a call site in it records a message.
 *
 * Point-to-point messages also go to the rank's peer table, indexed by
 * the peer's rank in MPI_COMM_WORLD, in chunks of PEER_CHUNK peers
 * allocated on first use, so that its memory follows the peers the rank
 * really talks to: the rank's row (and column) of the communication
 * matrix.
 *
 * Must never: call MPI, or take a lock on the way of a message but to
 * allocate a chunk.
 */
#include "runtime/km_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define km_mpi_coll_peer_c F77_FUNC_(km_mpi_coll_peer_c, KM_MPI_COLL_PEER_C)
void km_mpi_coll_peer_c(const int32_t *peer, const int64_t *bytes);

#define CHUNK 1024                   /* call sites per chunk */
#define NCHUNKS 4096                 /* ids up to 4M */

#define PEER_CHUNK 256
#define PEER_CHUNKS 16384            /* world ranks up to 4M */

static struct km_msg *chunks[NCHUNKS];
static struct km_peer *peer_chunks[PEER_CHUNKS];
static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;

/* The histogram bin of a message of `bytes`: 0 for an empty one, else k
 * for 2^(k-1) <= bytes < 2^k. */
static int bin_of(uint64_t bytes)
{
    int k = bytes ? 64 - __builtin_clzll(bytes) : 0;
    return k < KM_MSG_BINS ? k : KM_MSG_BINS - 1;
}

/* The chunk in *slot, of n elements of `size` bytes, allocated (zeroed)
 * on first use; NULL when memory runs out. */
static void *lazy_chunk(void **slot, size_t n, size_t size)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    pthread_mutex_lock(&chunk_lock);
    p = *slot;
    if (!p) {
        p = calloc(n, size);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&chunk_lock);
    return p;
}

/* Count a message of `bytes` in column `col` of `peer` (0 sent, 1
 * received, KM_PEER_COLL an all-to-all's part). */
static void peer_record(int32_t peer, int col, uint64_t bytes)
{
    if (peer < 0 || peer >= PEER_CHUNK * PEER_CHUNKS)
        return;
    struct km_peer *c = lazy_chunk((void **)&peer_chunks[peer / PEER_CHUNK],
                                   PEER_CHUNK, sizeof *c);
    if (!c)
        return;
    struct km_peer *p = &c[peer % PEER_CHUNK];
    __atomic_fetch_add(&p->messages[col], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&p->bytes[col], bytes, __ATOMIC_RELAXED);
}

void km_msg_record(int32_t id, int what, int64_t bytes, int32_t peer)
{
    if (id <= 0 || id > CHUNK * NCHUNKS || bytes < 0 ||
        what < KM_MSG_SENT || what > KM_MSG_RECEIVED)
        return;
    struct km_msg *c = lazy_chunk((void **)&chunks[(id - 1) / CHUNK], CHUNK,
                                  sizeof *c);
    if (!c)
        return;                      /* no memory: the message goes unseen */
    struct km_msg *m = &c[(id - 1) % CHUNK];
    uint64_t b = (uint64_t)bytes;
    __atomic_fetch_add(&m->messages, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(what == KM_MSG_SENT ? &m->sent : &m->received, b,
                       __ATOMIC_RELAXED);
    __atomic_fetch_add(&m->bins[bin_of(b)], 1, __ATOMIC_RELAXED);
    peer_record(peer, what == KM_MSG_RECEIVED, b);
}

struct km_peer *km_peer_copy(int32_t *n)
{
    int32_t count = 0;
    for (int32_t c = 0; c < PEER_CHUNKS; c++) {
        const struct km_peer *p = __atomic_load_n(&peer_chunks[c],
                                                  __ATOMIC_ACQUIRE);
        for (int32_t k = 0; p && k < PEER_CHUNK; k++)
            count += __atomic_load_n(&p[k].messages[0], __ATOMIC_RELAXED) ||
                     __atomic_load_n(&p[k].messages[1], __ATOMIC_RELAXED) ||
                     __atomic_load_n(&p[k].messages[2], __ATOMIC_RELAXED);
    }
    *n = 0;
    struct km_peer *v = km_mem_alloc(((size_t)count + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (int32_t c = 0; c < PEER_CHUNKS; c++) {
        const struct km_peer *p = __atomic_load_n(&peer_chunks[c],
                                                  __ATOMIC_ACQUIRE);
        for (int32_t k = 0; p && k < PEER_CHUNK && *n < count; k++) {
            struct km_peer x;
            for (int r = 0; r < 3; r++) {
                x.messages[r] = __atomic_load_n(&p[k].messages[r],
                                                __ATOMIC_RELAXED);
                x.bytes[r] = __atomic_load_n(&p[k].bytes[r],
                                             __ATOMIC_RELAXED);
            }
            if (!x.messages[0] && !x.messages[1] && !x.messages[2])
                continue;
            x.peer = c * PEER_CHUNK + k;
            v[(*n)++] = x;
        }
    }
    return v;
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

/* KM_libkm_mpi.f's call for each destination of an all-to-all: `bytes`
 * this rank sent to world rank `peer` in it. */
void km_mpi_coll_peer_c(const int32_t *peer, const int64_t *bytes)
{
    if (*bytes >= 0)
        peer_record(*peer, KM_PEER_COLL, (uint64_t)*bytes);
}
