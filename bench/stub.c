/*
 * stub.c — libkm's entry points doing nothing (but giving every region a
 * handle, so that the instrumented code registers each one once, as with
 * libkm).  bench/runtime.sh links instrumented programs with this too:
 * the difference to the plain build is what instrumenting does to the
 * compiled code itself (calls, lost inlining, another layout), the
 * difference to the libkm build is libkm's own work.
 */
#include "config.h"

#include <stdint.h>

#include "runtime/km_abi.h"

void km_reg_f(int32_t *h, const int32_t *hr, const char *t)
{
    (void)hr;
    (void)t;
    *h = 1;
}

void km_in_f(const int32_t *h) { (void)h; }
void km_out_f(const int32_t *h) { (void)h; }
void km_end_f(void) {}
void km_stop_f(void) {}
void km_exit_f(void) {}
void km_abrt_f(void) {}
void km_abor_f(void) {}
void km_writ_f(void) {}
void km_opt_f(const char *text) { (void)text; }

/* An unformatted transfer's length (the glue's MPI-IO calls it too). */
#define km_iol_f F77_FUNC_(km_iol, KM_IOL)
void km_iol_f(const int64_t *length);
void km_iol_f(const int64_t *length) { (void)length; }

/* The MPI glue's C side (kmrun's KM_libkm_mpi.f, which defines KM_MPII
 * and KM_MPIF itself, calls these): nothing either, a peer unknown. */
#define km_mpi_bytes_c F77_FUNC_(km_mpi_bytes_c, KM_MPI_BYTES_C)
#define km_mpi_coll_peer_c F77_FUNC_(km_mpi_coll_peer_c, KM_MPI_COLL_PEER_C)
#define km_mpi_peer_c F77_FUNC_(km_mpi_peer_c, KM_MPI_PEER_C)
#define km_mpi_forget_c F77_FUNC_(km_mpi_forget_c, KM_MPI_FORGET_C)
#define km_mpi_init_c F77_FUNC_(km_mpi_init_c, KM_MPI_INIT_C)
#define km_mpi_finalize_c F77_FUNC_(km_mpi_finalize_c, KM_MPI_FINALIZE_C)
#define km_mpi_at_finalize_c F77_FUNC_(km_mpi_at_finalize_c, \
                                       KM_MPI_AT_FINALIZE_C)
void km_mpi_bytes_c(const int32_t *h, const int32_t *what,
                    const int64_t *bytes, const int32_t *peer,
                    const int32_t *tag, const int32_t *comm);
void km_mpi_coll_peer_c(const int32_t *peer, const int64_t *bytes);
void km_mpi_peer_c(const int32_t *comm, const int32_t *peer, int32_t *world);
void km_mpi_forget_c(const int32_t *comm);
void km_mpi_init_c(void);
void km_mpi_finalize_c(void);
void km_mpi_at_finalize_c(void);

void km_mpi_bytes_c(const int32_t *h, const int32_t *what,
                    const int64_t *bytes, const int32_t *peer,
                    const int32_t *tag, const int32_t *comm)
{
    (void)comm;
    (void)h;
    (void)what;
    (void)bytes;
    (void)peer;
    (void)tag;
}

void km_mpi_coll_peer_c(const int32_t *peer, const int64_t *bytes)
{
    (void)peer;
    (void)bytes;
}

void km_mpi_peer_c(const int32_t *comm, const int32_t *peer, int32_t *world)
{
    (void)comm;
    (void)peer;
    *world = -1;
}

void km_mpi_forget_c(const int32_t *comm) { (void)comm; }
void km_mpi_init_c(void) {}
void km_mpi_finalize_c(void) {}
void km_mpi_at_finalize_c(void) {}
