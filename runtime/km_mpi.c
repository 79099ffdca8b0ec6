/*
 * km_mpi.c — every MPI call libkm makes, and the KM_MPII / KM_MPIF entry
 * points.
 *
 * Only MPI programs link this file: the instrumented code calls KM_MPII and
 * KM_MPIF, which live here, and they hand the core a table of the few MPI
 * operations it needs (struct km_mpi_ops).  Compiled against mpi.h only;
 * the user's MPI link supplies the library.
 *
 * Must never: use the MPI_ names (only PMPI_, so the runtime's own traffic
 * is invisible to the user's figures and to other tools that intercept
 * MPI), talk on the user's communicators (a private duplicate of
 * MPI_COMM_WORLD carries everything, with errors returned rather than
 * fatal), or hold any measurement state.
 */
#include "runtime/km_internal.h"

#include <limits.h>
#include <mpi.h>

#define KM_TAG 7183

static MPI_Comm comm = MPI_COMM_NULL;

static int mpi_finalized(void)
{
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    return !initialized || finalized;
}

static int mpi_rank_size(int *rank, int *size)
{
    return PMPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS ||
           PMPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS;
}

static int mpi_begin(void)
{
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
        return -1;
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return 0;
}

static int mpi_send(const void *buf, size_t n, int dest)
{
    if (n > INT_MAX)
        return -1;
    return PMPI_Send((void *)buf, (int)n, MPI_BYTE, dest, KM_TAG, comm) !=
           MPI_SUCCESS;
}

static int mpi_recv(void *buf, size_t n, int src)
{
    if (n > INT_MAX)
        return -1;
    return PMPI_Recv(buf, (int)n, MPI_BYTE, src, KM_TAG, comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS;
}

static int mpi_bcast_int(int *v)
{
    return PMPI_Bcast(v, 1, MPI_INT, 0, comm) != MPI_SUCCESS;
}

static int mpi_barrier(void)
{
    return PMPI_Barrier(comm) != MPI_SUCCESS;
}

static void mpi_end(void)
{
    if (comm != MPI_COMM_NULL)
        PMPI_Comm_free(&comm);
    comm = MPI_COMM_NULL;
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

void km_mpii_f(void)
{
    km_core_mpi_init(&ops);
}

void km_mpif_f(void)
{
    km_core_mpi_finalize(&ops);
}
