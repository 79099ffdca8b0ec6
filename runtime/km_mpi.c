/*
 * km_mpi.c — every MPI call libkm makes, and the core side of the
 * KM_MPII / KM_MPIF hooks.
 *
 * libkm includes no mpi.h and links no MPI library: the calls are made by
 * a Fortran file kmtool writes (KM_libkm_mpi.f, rewriter/rewrite.c's
 * km_rewrite_mpi_glue) that the user's MPI compiler compiles with its own
 * mpif.h, whatever MPI that is (Open MPI, MPICH and its derivatives).
 * The instrumented code calls KM_MPII and KM_MPIF, which live there and
 * call back KM_MPI_INIT_C and KM_MPI_FINALIZE_C here.  The core gets a
 * table of the few MPI operations it needs (struct km_mpi_ops), each one a
 * call of that file's KM_XMPI_ routines, before main (this file is linked
 * only with the glue, which calls it), so that it can also see MPI that
 * was started where no instrumented code calls KM_MPII.  MPI_FINALIZE
 * calls KM_MPI_AT_FINALIZE_C, through an attribute of MPI_COMM_SELF
 * (at_finalize), wherever the program calls it.  A serial program never
 * links this file.
 *
 * Must never: hold any measurement state, or assume anything of an MPI
 * but what the Fortran binding promises (INTEGER handles, byte counts).
 */
#include "runtime/km_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define kmx_state F77_FUNC_(km_xmpi_state, KM_XMPI_STATE)
#define kmx_at_finalize F77_FUNC_(km_xmpi_at_finalize, KM_XMPI_AT_FINALIZE)
#define kmx_hail F77_FUNC_(km_xmpi_hail, KM_XMPI_HAIL)
#define kmx_heard F77_FUNC_(km_xmpi_heard, KM_XMPI_HEARD)
#define kmx_rank_size F77_FUNC_(km_xmpi_rank_size, KM_XMPI_RANK_SIZE)
#define kmx_begin F77_FUNC_(km_xmpi_begin, KM_XMPI_BEGIN)
#define kmx_send F77_FUNC_(km_xmpi_send, KM_XMPI_SEND)
#define kmx_recv F77_FUNC_(km_xmpi_recv, KM_XMPI_RECV)
#define kmx_bcast F77_FUNC_(km_xmpi_bcast, KM_XMPI_BCAST)
#define kmx_barrier F77_FUNC_(km_xmpi_barrier, KM_XMPI_BARRIER)
#define kmx_end F77_FUNC_(km_xmpi_end, KM_XMPI_END)
#define kmx_group_size F77_FUNC_(km_xmpi_group_size, KM_XMPI_GROUP_SIZE)
#define kmx_world_ranks F77_FUNC_(km_xmpi_world_ranks, KM_XMPI_WORLD_RANKS)
#define kmx_is_inter F77_FUNC_(km_xmpi_is_inter, KM_XMPI_IS_INTER)
#define km_mpi_bytes_c F77_FUNC_(km_mpi_bytes_c, KM_MPI_BYTES_C)
void km_mpi_bytes_c(const int32_t *h, const int32_t *what,
                    const int64_t *bytes, const int32_t *peer,
                    const int32_t *tag, const int32_t *comm);
#define km_mpi_peer_c F77_FUNC_(km_mpi_peer_c, KM_MPI_PEER_C)
#define km_mpi_forget_c F77_FUNC_(km_mpi_forget_c, KM_MPI_FORGET_C)
#define km_mpi_init_c F77_FUNC_(km_mpi_init_c, KM_MPI_INIT_C)
#define km_mpi_finalize_c F77_FUNC_(km_mpi_finalize_c, KM_MPI_FINALIZE_C)
#define km_mpi_at_finalize_c F77_FUNC_(km_mpi_at_finalize_c, \
                                       KM_MPI_AT_FINALIZE_C)

void kmx_state(int32_t *state);
void kmx_at_finalize(int32_t *err);
void kmx_hail(const int32_t *dest, const int32_t *tag, const int32_t *v);
void kmx_heard(const int32_t *src, const int32_t *tag, int32_t *v);
void kmx_rank_size(int32_t *rank, int32_t *size, int32_t *err);
void kmx_begin(int32_t *err);
void kmx_send(const void *buf, const int32_t *n, const int32_t *dest,
              int32_t *err);
void kmx_recv(void *buf, const int32_t *n, const int32_t *src, int32_t *err);
void kmx_bcast(int32_t *v, int32_t *err);
void kmx_barrier(int32_t *err);
void kmx_end(void);
void kmx_group_size(const int32_t *comm, int32_t *n, int32_t *err);
void kmx_is_inter(const int32_t *comm, int32_t *flag);
void kmx_world_ranks(const int32_t *comm, const int32_t *n, int32_t *ranks,
                     int32_t *err);
void km_mpi_peer_c(const int32_t *comm, const int32_t *peer, int32_t *world);
void km_mpi_forget_c(const int32_t *comm);
void km_mpi_init_c(void);
void km_mpi_finalize_c(void);
void km_mpi_at_finalize_c(void);

static int mpi_state(void)
{
    int32_t state = 0;
    kmx_state(&state);
    return state;
}

static int mpi_finalized(void)
{
    return mpi_state() != 1;
}

static int mpi_at_finalize(void)
{
    int32_t err = 0;
    kmx_at_finalize(&err);
    return err != 0;
}

static int mpi_rank_size(int *rank, int *size)
{
    int32_t r = 0, s = 1, err = 0;
    kmx_rank_size(&r, &s, &err);
    *rank = r;
    *size = s;
    return err != 0;
}

static int mpi_begin(void)
{
    int32_t err = 0;
    kmx_begin(&err);
    return err ? -1 : 0;
}

static int mpi_send(const void *buf, size_t n, int dest)
{
    if (n > INT32_MAX)
        return -1;
    int32_t len = (int32_t)n, to = dest, err = 0;
    kmx_send(buf, &len, &to, &err);
    return err != 0;
}

static int mpi_recv(void *buf, size_t n, int src)
{
    if (n > INT32_MAX)
        return -1;
    int32_t len = (int32_t)n, from = src, err = 0;
    kmx_recv(buf, &len, &from, &err);
    return err != 0;
}

static int mpi_bcast_int(int *v)
{
    int32_t x = *v, err = 0;
    kmx_bcast(&x, &err);
    *v = x;
    return err != 0;
}

static int mpi_barrier(void)
{
    int32_t err = 0;
    kmx_barrier(&err);
    return err != 0;
}

static void mpi_end(void)
{
    kmx_end();
}

static void mpi_hail(int dest, int tag, int v)
{
    int32_t d = dest, t = tag, x = v;
    kmx_hail(&d, &t, &x);
}

static int mpi_heard(int src, int tag)
{
    int32_t s = src, t = tag, v = -1;
    kmx_heard(&s, &t, &v);
    return v;
}

static const struct km_mpi_ops ops = {
    .state = mpi_state,
    .finalized = mpi_finalized,
    .rank_size = mpi_rank_size,
    .at_finalize = mpi_at_finalize,
    .hail = mpi_hail,
    .heard = mpi_heard,
    .begin = mpi_begin,
    .send = mpi_send,
    .recv = mpi_recv,
    .bcast_int = mpi_bcast_int,
    .barrier = mpi_barrier,
    .end = mpi_end,
};

/* Linked, so the program links the glue: the core may ask MPI. */
__attribute__((constructor)) static void hand_over(void)
{
    km_core_mpi_linked(&ops);
}

void km_mpi_init_c(void)
{
    km_core_mpi_init(&ops);
}

void km_mpi_finalize_c(void)
{
    km_core_mpi_finalize(&ops);
}

void km_mpi_at_finalize_c(void)
{
    km_core_mpi_at_finalize(&ops);
}

/* ---- ranks in MPI_COMM_WORLD of other communicators' ranks ------------------
 *
 * A message's peer is recorded as its rank in MPI_COMM_WORLD.  The ranks of
 * a communicator other than MPI_COMM_WORLD are translated once, through
 * KM_libkm_mpi.f (its group, or its remote group, against the world's), and
 * kept until MPI_COMM_FREE frees it (KM_MPIX, which the instrumented code
 * calls first): the handle may then come back for another communicator.
 * A communicator freed where no instrumented code sees it keeps its entry
 * until the table is full and it is the oldest.
 */
#define NCOMMS 64

static struct comm_ranks {
    int32_t comm, n;
    int32_t *world;          /* NULL: a free entry */
    int trace_id;            /* its id in the trace, 0: none yet */
} comms[NCOMMS];
static int last_trace_id;
static int next_victim;
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of `comm`, translated now if it has none (under comms_lock);
 * NULL when the translation failed. */
static struct comm_ranks *comm_entry(int32_t comm)
{
    for (int k = 0; k < NCOMMS; k++)
        if (comms[k].world && comms[k].comm == comm)
            return &comms[k];
    int32_t n = 0, err = 0;
    kmx_group_size(&comm, &n, &err);
    if (err || n <= 0)
        return NULL;
    int32_t *world = malloc((size_t)n * sizeof *world);
    if (!world)
        return NULL;
    kmx_world_ranks(&comm, &n, world, &err);
    if (err) {
        free(world);
        return NULL;
    }
    int slot = -1;
    for (int k = 0; k < NCOMMS && slot < 0; k++)
        if (!comms[k].world)
            slot = k;
    if (slot < 0) {
        slot = next_victim;
        next_victim = (next_victim + 1) % NCOMMS;
        free(comms[slot].world);
    }
    comms[slot] = (struct comm_ranks){ comm, n, world, 0 };
    return &comms[slot];
}

void km_mpi_peer_c(const int32_t *comm, const int32_t *peer, int32_t *world)
{
    *world = -1;
    pthread_mutex_lock(&comms_lock);
    const struct comm_ranks *c = comm_entry(*comm);
    if (c && *peer >= 0 && *peer < c->n)
        *world = c->world[*peer];
    pthread_mutex_unlock(&comms_lock);
}

/* The trace's id of communicator `comm` (not MPI_COMM_WORLD), its COMM
 * records written into the calling thread's trace the first time; 0 when
 * its members cannot be told. */
static int trace_comm_id(int32_t comm)
{
    pthread_mutex_lock(&comms_lock);
    struct comm_ranks *e = comm_entry(comm);
    int id = 0;
    if (e && !e->trace_id && last_trace_id < 65535) {
        int32_t handle = comm, inter = 0;
        kmx_is_inter(&handle, &inter);
        e->trace_id = ++last_trace_id;
        km_core_trace_comm(e->trace_id, e->n, inter, e->world);
    }
    if (e)
        id = e->trace_id;
    pthread_mutex_unlock(&comms_lock);
    return id;
}

/* KM_libkm_mpi.f's call: `what` KM_MSG_SENT or KM_MSG_RECEIVED, `peer`
 * the rank in MPI_COMM_WORLD sent to or received from, or -1 (a
 * collective, a source unknown); for the trace, `tag` (-1 if none) and
 * `comm` (its Fortran handle; -1 for MPI_COMM_WORLD). */
void km_mpi_bytes_c(const int32_t *h, const int32_t *what,
                    const int64_t *bytes, const int32_t *peer,
                    const int32_t *tag, const int32_t *comm)
{
    km_msg_record(*h, *what, *bytes, *peer);
    if (!km_trace_active())
        return;
    int c = *comm == -1 ? 0 : trace_comm_id(*comm);
    km_core_trace_message(*h, *what == KM_MSG_SENT, *bytes, *peer, *tag, c);
}

void km_mpi_forget_c(const int32_t *comm)
{
    pthread_mutex_lock(&comms_lock);
    for (int k = 0; k < NCOMMS; k++)
        if (comms[k].world && comms[k].comm == *comm) {
            free(comms[k].world);
            comms[k].world = NULL;
        }
    pthread_mutex_unlock(&comms_lock);
}
