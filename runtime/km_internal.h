/*
 * km_internal.h — what the files of libkm share with each other (and with
 * the runtime's unit tests); nothing here is seen by the instrumented code.
 *
 *   km_clock.c   the clock: ticks, their length, the cost of one read
 *   km_core.c    regions, the frame stack, the entry points, snapshots
 *   km_output.c  text of a KM_output file; choosing its name; writing it
 *   km_mpi.c     every MPI call libkm makes (only linked into MPI programs)
 *
 * The core never references an MPI symbol: km_mpi.c hands it a table of
 * function pointers (struct km_mpi_ops) the first time the instrumented
 * program calls KM_MPII or KM_MPIF.  So this header must never mention an
 * MPI type or need mpi.h, and holds no state of its own.
 */
#ifndef KM_INTERNAL_H
#define KM_INTERNAL_H

#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "runtime/km_abi.h"

/* ---- Fortran entry points (km_abi.h), named through the configure test -- */

#define km_reg_f  F77_FUNC_(km_reg, KM_REG)
#define km_in_f   F77_FUNC_(km_in, KM_IN)
#define km_out_f  F77_FUNC_(km_out, KM_OUT)
#define km_end_f  F77_FUNC_(km_end, KM_END)
#define km_stop_f F77_FUNC_(km_stop, KM_STOP)
#define km_exit_f F77_FUNC_(km_exit, KM_EXIT)
#define km_writ_f F77_FUNC_(km_writ, KM_WRIT)
#define km_mpii_f F77_FUNC_(km_mpii, KM_MPII)
#define km_mpif_f F77_FUNC_(km_mpif, KM_MPIF)

void km_reg_f(int32_t *h, const int32_t *hr, const char *text);
void km_in_f(const int32_t *h);
void km_out_f(const int32_t *h);
void km_end_f(void);
void km_stop_f(void);
void km_exit_f(void);
void km_writ_f(void);
void km_mpii_f(void);   /* km_mpi.c */
void km_mpif_f(void);   /* km_mpi.c */

/* ---- clock (km_clock.c) ------------------------------------------------- */

typedef int64_t km_tick;          /* clock units; differences only */

struct km_clock {
    km_tick (*read)(void);        /* the hot path calls this */
    double seconds_per_tick;
    const char *name;             /* for the "! Clock" header line */
    double read_cost;             /* seconds per read, measured at start-up */
};

/* Choose the best clock this machine offers and measure one read. */
void km_clock_init(struct km_clock *c);

/* ---- regions (km_core.c) ------------------------------------------------ */

/*
 * One measured region: a routine or a location.  The first block is what
 * KM_IN/KM_OUT touch; the rest is identity, set at registration.
 * "Callee" regions (routines, CALL, MPI) give their elapsed time to the
 * nearest callee frame below them; "transparent" ones (DO, IO, USER) only
 * record their own elapsed time.
 */
struct km_region {
    uint64_t count;          /* executions (entries), always exact */
    uint64_t measured;       /* exits whose time was read from the clock */
    uint64_t outer;          /* measured exits of the outermost activation */
    uint64_t thresh;         /* extrapolate after this many measured exits */
    km_tick elapsed;         /* inclusive, outermost activations only */
    km_tick excl;            /* routines: net; CALL/MPI: time in no routine */
    km_tick frames;          /* sum of every frame's elapsed, nested too */
    km_tick mean_elapsed;    /* the means, fixed when extrapolation starts */
    km_tick mean_excl;
    km_tick mean_frame;
    int32_t active;          /* open frames of this region (recursion) */
    int32_t id;              /* 1-based; the handle's value */
    uint8_t callee;          /* 1: routine, CALL, MPI; 0: transparent */
    uint8_t extrap;          /* 1 once the means are fixed */
    /* identity (cold) */
    int32_t order;           /* routines: 1-based order of first entry */
    int32_t routine;         /* id of the routine it belongs to (itself) */
    int kind;                /* enum km_kind */
    int line;
    int flags;
    char *name;              /* routines: upper-case name; else NULL */
    char *file;              /* routines: source file; else NULL */
    char *text;              /* locations: statement text; else NULL */
    /* filled in snapshots only (struct km_report), for routines */
    km_tick mpi;             /* elapsed of its MPI locations */
    km_tick io;              /* elapsed of its IO locations */
};

/* ---- one rank's figures at one moment (km_core.c builds, km_output.c
 *      prints) ------------------------------------------------------------ */

struct km_report {
    struct km_region *reg;   /* copies of every region, index id - 1, with
                                the open frames closed at the snapshot */
    int32_t nreg;
    km_tick total;           /* first entry .. snapshot */
    km_tick outside;         /* in no callee frame */
    km_tick unmeasured;      /* sum of excl of CALL and MPI regions */
    km_tick mpi, io;         /* sum of elapsed of MPI / IO regions */
    km_tick net;             /* sum of excl of routines */
    uint64_t routine_counts;
    uint64_t clock_reads;
    int extrapolated;        /* some routine's count gets a '+' */
    struct km_clock clock;
    int nwrites;             /* this write included */
    int nranks, rank;
    const char *event;       /* "END", "STOP", ... */
    time_t started;
    /* problems, printed as comment lines */
    uint64_t bad_out;        /* KM_OUT of a region not on the stack */
    uint64_t bad_in;         /* KM_IN / KM_OUT of an unregistered handle */
    uint64_t lost;           /* entries beyond the frame stack's depth */
    uint64_t bad_reg;        /* registrations with unreadable text */
    /* prediction figures, seconds (0 until KM_MPII or KM_MPIF) */
    double t, c, r, p;
};

void km_report_free(struct km_report *rep);

/* ---- MPI (km_mpi.c provides, km_core.c and km_output.c use) ------------ */

/*
 * Only valid between begin() and end() on every rank at once (the
 * collective part of KM_MPIF), except rank_size() and finalized(), which
 * work at any time.  Every function returns 0 on success.
 */
struct km_mpi_ops {
    int (*finalized)(void);                  /* 1: MPI no longer usable */
    int (*rank_size)(int *rank, int *size);
    int (*begin)(void);                      /* private communicator */
    int (*gather4)(const double in[4], double *out);  /* 4 * size at 0 */
    int (*send)(const void *buf, size_t n, int dest);
    int (*recv)(void *buf, size_t n, int src);
    int (*bcast_int)(int *v);                /* from rank 0 */
    int (*barrier)(void);
    void (*end)(void);
};

void km_core_mpi_init(const struct km_mpi_ops *ops);       /* KM_MPII */
void km_core_mpi_finalize(const struct km_mpi_ops *ops);   /* KM_MPIF */

/* ---- output (km_output.c) ----------------------------------------------- */

/* Growable text; allocation failure sets `failed` instead of aborting. */
struct km_text {
    char *p;
    size_t len, cap;
    int failed;
};

#if defined(__GNUC__) || defined(__clang__)
#define KM_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define KM_PRINTF_LIKE(f, a)
#endif

void km_text_printf(struct km_text *t, const char *fmt, ...) KM_PRINTF_LIKE(2, 3);
void km_text_free(struct km_text *t);

/* The lines before the first section.  rank_only >= 0: the file holds
 * only that rank's section (MPI was not finalized through KM_MPIF). */
void km_format_header(struct km_text *t, const struct km_report *rep,
                      int rank_only);
void km_format_prediction(struct km_text *t, const double *tcrp, int nranks);
void km_format_section(struct km_text *t, const struct km_report *rep);
void km_format_end(struct km_text *t);

/* The KM_output.NNN this process wrote last, so that a later write of the
 * same run replaces it, and only it (nnn -1: none yet).  Inode numbers are
 * reused at once, so size and modification time identify it too. */
struct km_outname {
    int nnn;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

/* Write one whole file: replace this process's file when it is still there
 * and still the one it wrote, else take the lowest free KM_output.NNN.
 * 0 on success; on failure one line on stderr and no file. */
int km_write_file(const char *text, size_t len, struct km_outname *name);

/* The MPI_FINALIZE file: every rank calls this with its own report and
 * section; rank 0 writes the file, the others send their sections when
 * asked.  Once the gathered text is safely in rank 0's temporary file,
 * every rank removes its own earlier file (*name, from KM_WRIT while MPI
 * ran), then rank 0 links the gathered file to the lowest free name.
 * Returns 0 when the file was written (the same answer on every rank). */
int km_write_gathered(const struct km_mpi_ops *ops, const struct km_report *rep,
                      const struct km_text *section, struct km_outname *name);

/* ---- test hooks (unit tests only; km_core.c) ---------------------------- */

/* Use `read` as the clock from the next registration on (no calibration). */
void km_test_set_clock(km_tick (*read)(void), double seconds_per_tick);
/* Forget every region and figure, as if the program had just started. */
void km_test_reset(void);
/* The report a write would print now (free with km_report_free). */
int km_test_report(struct km_report *rep, const char *event);
/* Current stack depth (frames above the root). */
int km_test_depth(void);

#endif
