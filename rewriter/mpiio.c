/*
 * mpiio.c — the file a measured MPI-IO call works on, and the bytes it
 * moves.  Around an MPI_FILE_... call kmrun knows (runtime/km_io.c):
 *   before it  CALL KM_MPIO(handle, op)   the call's file handle
 *              CALL KM_MPIN(op, name)     MPI_FILE_OPEN, MPI_FILE_DELETE
 *   after it   CALL KM_MPIH(handle)       MPI_FILE_OPEN: the new handle
 *              CALL KM_MPIB(count, type)  a data access: count x the
 *                                         datatype's size, as posted
 *              CALL KM_MPIG(count, type, status)
 *                                         a blocking one: what its status
 *                                         says (KM_libkm_mpi.f's glue)
 * Handles go as TRANSFER(handle, 0) (km_mpi_handle), so that mpif.h, USE
 * MPI and USE MPI_F08 take the same calls; a status only where the unit
 * does not use MPI_F08 and it is not MPI_STATUS_IGNORE.
 *
 * Metadata calls count as the Files block's columns do (doc/KM_output.md,
 * "MPI-IO block"): OPEN; CLOSE and DELETE; the GET_ calls as inquiries;
 * the calls that move or reshape the file or its view as seeks; SYNC as a
 * flush.  A split collective's BEGIN counts the access and its bytes, its
 * END only adds its time.
 *
 * Must never: evaluate anything the call does not, or write text.
 */
#include "rewriter/plan.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/km_abi.h"

#define KIND "SELECTED_INT_KIND(9)"

/* The routines (without MPI_FILE_), their dummy arguments, and the
 * operation they count as. */
static const struct mpiio_shape {
    const char *names, *dummies;
    int op;
} shapes[] = {
    {"OPEN", "COMM FILENAME AMODE INFO FH", KM_IO_OPEN},
    {"DELETE", "FILENAME INFO", KM_IO_CLOSE},
    {"CLOSE", "FH", KM_IO_CLOSE},
    {"GET_SIZE GET_POSITION GET_POSITION_SHARED GET_BYTE_OFFSET GET_VIEW "
     "GET_INFO GET_AMODE GET_GROUP GET_ATOMICITY GET_TYPE_EXTENT",
     "FH", KM_IO_INQUIRE},
    {"SEEK SEEK_SHARED SET_VIEW SET_SIZE PREALLOCATE SET_INFO "
     "SET_ATOMICITY", "FH", KM_IO_REWIND},
    {"SYNC", "FH", KM_IO_FLUSH},
    {"READ READ_ALL READ_SHARED READ_ORDERED",
     "FH BUF COUNT DATATYPE STATUS", KM_IO_READ},
    {"READ_AT READ_AT_ALL", "FH OFFSET BUF COUNT DATATYPE STATUS",
     KM_IO_READ},
    {"IREAD IREAD_ALL IREAD_SHARED READ_ALL_BEGIN READ_ORDERED_BEGIN",
     "FH BUF COUNT DATATYPE", KM_IO_READ},
    {"IREAD_AT IREAD_AT_ALL READ_AT_ALL_BEGIN",
     "FH OFFSET BUF COUNT DATATYPE", KM_IO_READ},
    {"READ_ALL_END READ_AT_ALL_END READ_ORDERED_END", "FH",
     KM_IO_READ | KM_IO_END_PART},
    {"WRITE WRITE_ALL WRITE_SHARED WRITE_ORDERED",
     "FH BUF COUNT DATATYPE STATUS", KM_IO_WRITE},
    {"WRITE_AT WRITE_AT_ALL", "FH OFFSET BUF COUNT DATATYPE STATUS",
     KM_IO_WRITE},
    {"IWRITE IWRITE_ALL IWRITE_SHARED WRITE_ALL_BEGIN WRITE_ORDERED_BEGIN",
     "FH BUF COUNT DATATYPE", KM_IO_WRITE},
    {"IWRITE_AT IWRITE_AT_ALL WRITE_AT_ALL_BEGIN",
     "FH OFFSET BUF COUNT DATATYPE", KM_IO_WRITE},
    {"WRITE_ALL_END WRITE_AT_ALL_END WRITE_ORDERED_END", "FH",
     KM_IO_WRITE | KM_IO_END_PART},
};

static const struct mpiio_shape *shape_of(const char *name)
{
    const char *r = km_mpi_routine(name);
    if (!r || strncmp(r, "FILE_", 5) != 0)
        return NULL;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        if (km_word_in(shapes[k].names, r + 5))
            return &shapes[k];
    return NULL;
}

/* INT(TRANSFER(handle, 0), KIND): what libkm's C entry points take. */
static char *handle_arg(const char *handle)
{
    char *h = km_mpi_handle(handle);
    char *v = km_fmt("INT(%s, " KIND ")", h);
    free(h);
    return v;
}

/* The call before statement i that names its file. */
static char *file_call(const struct mpiio_shape *s, const struct km_actuals *a)
{
    const char *name = km_mpi_actual(a, s->dummies, "FILENAME");
    if (name)
        return km_fmt("CALL KM_MPIN(INT(%d, " KIND "), TRIM(%s)//CHAR(0))",
                      s->op, name);
    const char *fh = km_mpi_actual(a, s->dummies, "FH");
    if (!fh)
        return NULL;
    char *h = handle_arg(fh);
    char *call = km_fmt("CALL KM_MPIO(%s, INT(%d, " KIND "))", h, s->op);
    free(h);
    return call;
}

/* The call after a data access that gives its bytes. */
static char *bytes_call(struct plan *P, struct unit_ctx *c,
                        const struct mpiio_shape *s,
                        const struct km_actuals *a)
{
    const char *count = km_mpi_actual(a, s->dummies, "COUNT");
    const char *type = km_mpi_actual(a, s->dummies, "DATATYPE");
    if (!count || !type)
        return NULL;
    char *t = km_mpi_handle(type), *call;
    const char *status = km_mpi_status(P, c->index, a, s->dummies);
    if (status)
        call = km_fmt("CALL KM_MPIG(%s, %s, %s)", count, t, status);
    else
        call = km_fmt("CALL KM_MPIB(%s, %s)", count, t);
    free(t);
    return call;
}

void km_place_mpiio(struct plan *P, struct unit_ctx *c, struct region *r)
{
    if (r->rk != RG_LOC || r->kind != KM_K_MPI)
        return;
    int i = r->stmt;
    const char *name = P->prog->info[i].name;
    const struct mpiio_shape *s = name ? shape_of(name) : NULL;
    struct km_actuals a;
    if (!s || !km_read_actuals(P->src->tok.data + P->prog->info[i].name_tok,
                               &a, NULL))
        return;
    char *before = file_call(s, &a);
    if (before) {
        struct code *after = km_code_after(P, i);
        km_code_prepend(km_code_before(P, i), 0, 0, before);
        const char *fh = km_mpi_actual(&a, s->dummies, "FH");
        int op = s->op & KM_IO_OP;
        if (op == KM_IO_OPEN && fh) {
            char *h = handle_arg(fh);
            km_code_add(after, 0, 0, km_fmt("CALL KM_MPIH(%s)", h));
            free(h);
        }
        char *bytes = (op == KM_IO_READ || op == KM_IO_WRITE) &&
                              !(s->op & KM_IO_END_PART)
                          ? bytes_call(P, c, s, &a) : NULL;
        if (bytes)
            km_code_add(after, 0, 0, bytes);
    }
    km_actuals_free(&a);
}
