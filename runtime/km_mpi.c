/*
 * km_mpi.c — every MPI call libkm makes, and the core side of the
 * KM_MPII / KM_MPIF hooks.
 *
 * libkm includes no mpi.h and links no MPI library: the calls are made by
 * a Fortran file kmtool writes (KM_libkm_mpi.f, rewriter/rewrite.c's
 * km_rewrite_mpi_glue) that the user's MPI compiler compiles with its own
 * mpif.h, whatever MPI that is (Open MPI, MPICH and its derivatives).
 * The instrumented code calls KM_MPII and KM_MPIF, which live there and
 * call back KM_MPI_INIT_C and KM_MPI_FINALIZE_C here; these hand the core
 * a table of the few MPI operations it needs (struct km_mpi_ops), each
 * one a call of that file's KM_XMPI_ routines.  A serial program never
 * links this file.
 *
 * Must never: hold any measurement state, or assume anything of an MPI
 * but what the Fortran binding promises (INTEGER handles, byte counts).
 */
#include "runtime/km_internal.h"

#include <limits.h>
#include <stdint.h>

#define kmx_state F77_FUNC_(km_xmpi_state, KM_XMPI_STATE)
#define kmx_rank_size F77_FUNC_(km_xmpi_rank_size, KM_XMPI_RANK_SIZE)
#define kmx_begin F77_FUNC_(km_xmpi_begin, KM_XMPI_BEGIN)
#define kmx_send F77_FUNC_(km_xmpi_send, KM_XMPI_SEND)
#define kmx_recv F77_FUNC_(km_xmpi_recv, KM_XMPI_RECV)
#define kmx_bcast F77_FUNC_(km_xmpi_bcast, KM_XMPI_BCAST)
#define kmx_barrier F77_FUNC_(km_xmpi_barrier, KM_XMPI_BARRIER)
#define kmx_end F77_FUNC_(km_xmpi_end, KM_XMPI_END)
#define km_mpi_init_c F77_FUNC_(km_mpi_init_c, KM_MPI_INIT_C)
#define km_mpi_finalize_c F77_FUNC_(km_mpi_finalize_c, KM_MPI_FINALIZE_C)

void kmx_state(int32_t *state);
void kmx_rank_size(int32_t *rank, int32_t *size, int32_t *err);
void kmx_begin(int32_t *err);
void kmx_send(const void *buf, const int32_t *n, const int32_t *dest,
              int32_t *err);
void kmx_recv(void *buf, const int32_t *n, const int32_t *src, int32_t *err);
void kmx_bcast(int32_t *v, int32_t *err);
void kmx_barrier(int32_t *err);
void kmx_end(void);
void km_mpi_init_c(void);
void km_mpi_finalize_c(void);

static int mpi_finalized(void)
{
    int32_t state = 0;
    kmx_state(&state);
    return state != 1;
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

static const struct km_mpi_ops ops = {
    .finalized = mpi_finalized,
    .rank_size = mpi_rank_size,
    .begin = mpi_begin,
    .send = mpi_send,
    .recv = mpi_recv,
    .bcast_int = mpi_bcast_int,
    .barrier = mpi_barrier,
    .end = mpi_end,
};

void km_mpi_init_c(void)
{
    km_core_mpi_init(&ops);
}

void km_mpi_finalize_c(void)
{
    km_core_mpi_finalize(&ops);
}
