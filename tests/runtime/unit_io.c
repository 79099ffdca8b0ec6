/*
 * unit_io.c — unit tests of libkm's table of files (the I/O statistics):
 * MPI-IO handles followed to the files they opened, and the table full.
 * test_files_full fills the process's table, so main() runs it last.
 */
#include "unit.h"

/* More files than the table tells apart: the first 4095 keep their rows,
 * every later one goes to "<other files>", the last row, and nothing
 * is written past the table.  (The table is the process's: this test
 * runs last.) */
#define km_ion_t F77_FUNC_(km_ion, KM_ION)
#define km_iou_t F77_FUNC_(km_iou, KM_IOU)
void km_ion_t(const int32_t *unit, const int32_t *op, const char *name);
void km_iou_t(const int32_t *unit, const int32_t *op);
void km_io_leave(km_time e, int estimated);
void test_files_full(void)
{
    int32_t unit = 0, op = KM_IO_INQUIRE, n0;
    char name[32];
    km_mem_free(km_io_copy(&n0));       /* rows earlier tests made */
    for (int k = 0; k < 5000; k++) {
        snprintf(name, sizeof name, "f%d", k);
        km_ion_t(&unit, &op, name);
        km_io_leave(T(1), 0);
    }
    int32_t n;
    struct km_iofile *v = km_io_copy(&n);
    CHECK(v != NULL);
    CHECK_EQ(n, 4096);
    if (v && n == 4096) {
        snprintf(name, sizeof name, "f%d", 4094 - n0);
        CHECK(strcmp(v[n0].name, "f0") == 0);
        CHECK(strcmp(v[4094].name, name) == 0);
        CHECK(strcmp(v[4095].name, "<other files>") == 0);
        CHECK_EQ(v[4095].n[KM_IO_INQUIRE], 5000 - (4095 - n0));
        CHECK_EQ(v[n0].n[KM_IO_INQUIRE], 1);
    }
    km_mem_free(v);
}

#define km_mpio_t F77_FUNC_(km_mpio, KM_MPIO)
#define km_mpin_t F77_FUNC_(km_mpin, KM_MPIN)
#define km_mpih_t F77_FUNC_(km_mpih, KM_MPIH)
#define km_iol_t F77_FUNC_(km_iol, KM_IOL)
void km_mpio_t(const int32_t *handle, const int32_t *op);
void km_mpin_t(const int32_t *op, const char *name);
void km_mpih_t(const int32_t *handle);
void km_iol_t(const int64_t *length);

/* The row of `name` (MPI-IO or not) in v[0..n-1], or NULL. */
static const struct km_iofile *file_row(const struct km_iofile *v, int32_t n,
                                        const char *name, int mpiio)
{
    for (int32_t k = 0; v && k < n; k++)
        if (v[k].mpiio == mpiio && strcmp(v[k].name, name) == 0)
            return &v[k];
    return NULL;
}

/* MPI-IO calls as rewriter/mpiio.c brackets them: a handle follows the
 * file MPI_FILE_OPEN named until MPI_FILE_CLOSE, then may come back for
 * another; a split collective's END adds time but no operation; a
 * handle libkm never saw opened has a row of its own; a Fortran unit of
 * the same number is another thing. */
void test_mpiio(void)
{
    int32_t h = 3, open = KM_IO_OPEN, close = KM_IO_CLOSE;
    int32_t rd = KM_IO_READ, wr = KM_IO_WRITE;
    int32_t wr_end = KM_IO_WRITE | KM_IO_END_PART, unit = 3;
    int64_t b800 = 800, b40 = 40;
    km_mpin_t(&open, "a.dat");
    km_io_leave(T(2), 0);
    km_mpih_t(&h);
    km_mpio_t(&h, &wr);
    km_io_leave(T(3), 0);
    km_iol_t(&b800);
    km_mpio_t(&h, &wr);                 /* a BEGIN ... */
    km_io_leave(T(1), 1);
    km_iol_t(&b40);
    km_mpio_t(&h, &wr_end);             /* ... and its END */
    km_io_leave(T(4), 0);
    km_iou_t(&unit, &rd);               /* Fortran unit 3: not the handle */
    km_io_leave(T(1), 0);
    km_mpio_t(&h, &close);
    km_io_leave(T(1), 0);
    km_mpin_t(&open, "b.dat");          /* the handle comes back */
    km_io_leave(T(1), 0);
    km_mpih_t(&h);
    km_mpio_t(&h, &rd);
    km_io_leave(T(1), 0);
    km_iol_t(&b40);
    int32_t stale = 9;
    km_mpio_t(&stale, &rd);
    km_io_leave(T(1), 0);
    int32_t n;
    struct km_iofile *v = km_io_copy(&n);
    const struct km_iofile *a = file_row(v, n, "a.dat", 1);
    const struct km_iofile *b = file_row(v, n, "b.dat", 1);
    const struct km_iofile *u = file_row(v, n, "<unit 3>", 0);
    const struct km_iofile *x = file_row(v, n, "<file handle 9>", 1);
    CHECK(a && b && u && x);
    if (a && b && u && x) {
        CHECK_EQ(a->n[KM_IO_OPEN], 1);
        CHECK_EQ(a->n[KM_IO_CLOSE], 1);
        CHECK_EQ(a->n[KM_IO_WRITE], 2);
        CHECK_EQ(a->t[KM_IO_WRITE], T(8));
        CHECK_EQ(a->te[KM_IO_WRITE], T(1));
        CHECK_EQ(a->bytes[1], 840);
        CHECK_EQ(a->n[KM_IO_READ], 0);
        CHECK_EQ(b->n[KM_IO_READ], 1);
        CHECK_EQ(b->bytes[0], 40);
        CHECK_EQ(u->n[KM_IO_READ], 1);
        CHECK_EQ(u->bytes[0], 0);
        CHECK_EQ(x->n[KM_IO_READ], 1);
    }
    km_mem_free(v);
}
