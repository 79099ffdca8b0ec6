/*
 * km_abi.h — the contract between code kmrun generates and libkm.
 *
 * This header is the only thing the rewriter and the runtime share.  It
 * fixes the entry points the instrumented Fortran calls and the integer
 * codes it passes; changing anything here breaks object files instrumented
 * by an earlier kmrun (stepwise measurement links old and new objects), so
 * only ever add.
 *
 * Every argument is passed by reference, as Fortran does.  The only
 * integers passed are handles, declared INTEGER*4 explicitly in the
 * generated code so that -fdefault-integer-8 cannot change their size;
 * literal constants are never passed (their kind follows such flags), which
 * is why a region's numbers travel inside its registration text.  That text
 * is a CHARACTER constant terminated with CHAR(0) and passed as the last
 * argument, so the runtime never depends on how a compiler passes the
 * hidden length.
 *
 * Entry points (Fortran spelling; C names come from F77_FUNC_):
 *
 *   CALL KM_REG(H, HR, TEXT)
 *       Register one region, once.  H is the region's handle (0 until
 *       registered, then a positive id), HR the handle of the routine the
 *       region belongs to (for a routine, H itself, already set).
 *       TEXT = "<kind> <line> <thresh> <flags> <rest>" then CHAR(0):
 *         kind    a KM_K_* code
 *         line    the source line of the routine's first statement or of
 *                 the location's statement
 *         thresh  TIME_PREDICTION_MODE_NUMBER when the file was instrumented
 *         flags   a sum of KM_F_* bits
 *         rest    for a routine "<NAME> <file>" (the file name may contain
 *                 blanks, the name cannot); for a location the statement
 *                 text as written (blanks collapsed).
 *       A region is identified by (file, routine, kind, line), so the same
 *       region registered through two handles gets one id.
 *   CALL KM_IN(H)     enter region H (routine or location)
 *   CALL KM_OUT(H)    leave region H; frames above it on the stack (left by a
 *                     jump out of a measured loop) are closed at the same time
 *   CALL KM_END       the main program reaches its END
 *   CALL KM_STOP      a STOP statement is about to execute
 *   CALL KM_EXIT      CALL EXIT (an extension) is about to execute
 *   CALL KM_ABOR      CALL ABORT (an extension) is about to execute
 *                     These four close every open frame and write the
 *                     results, unless MPI_FINALIZE already wrote them.
 *   CALL KM_WRIT      write the results so far (PRINT_OUT_ROUTINES)
 *   CALL KM_OPT(TEXT) the control file's run-wide settings, from the main
 *                     program before its first KM_IN: TEXT (as KM_REG's)
 *                     holds KEY=VALUE words, e.g. "TRACE_SIZE_LIMIT=4096";
 *                     the environment's KM_KEY overrides each
 *   CALL KM_MPII      MPI_INIT has just returned
 *   CALL KM_MPIF      MPI_FINALIZE is about to be called: gather every rank's
 *                     results into one KM_output file
 *
 * Around a measured I/O statement (runtime/km_io.c); UNIT and OP are
 * INTEGER(KIND=SELECTED_INT_KIND(9)) expressions, OP a sum of KM_IO_* codes,
 * LENGTH an INTEGER(KIND=SELECTED_INT_KIND(18)) variable:
 *   CALL KM_IOU(UNIT, OP)        before it: the unit it works on
 *   CALL KM_ION(UNIT, OP, NAME)  before an OPEN or INQUIRE(FILE=): the
 *                                file's name (NAME as KM_REG's TEXT; empty:
 *                                an OPEN without FILE=)
 *   CALL KM_IOM(UNIT)            after an OPEN: UNIT is connected to the
 *                                file KM_ION named
 *   CALL KM_IOL(LENGTH)          after an unformatted READ or WRITE: its
 *                                list's INQUIRE(IOLENGTH=)
 */
#ifndef KM_ABI_H
#define KM_ABI_H

/* Region kinds (the <kind> field of KM_REG's text). */
enum km_kind {
    KM_K_PROGRAM = 1,    /* main program */
    KM_K_SUBROUTINE = 2,
    KM_K_FUNCTION = 3,
    KM_K_ENTRY = 4,      /* an ENTRY point: a routine of its own */
    KM_K_DO = 10,        /* a DO loop, from the DO statement to its terminal */
    KM_K_CALL = 11,      /* a CALL statement */
    KM_K_MPI = 12,       /* a CALL MPI_xxx statement */
    KM_K_IO = 13,        /* an I/O statement */
    KM_K_USER = 14,      /* a !KM_measure start ... end region */
    KM_K_OMP = 15        /* an OpenMP construct, on each thread that runs it
                            (OMP_MEASURED_LEVEL); the text is the directive */
};

/* The OP of KM_IOU and KM_ION: the operation, */
enum km_io_op {
    KM_IO_OPEN = 1, KM_IO_CLOSE, KM_IO_INQUIRE, KM_IO_REWIND, KM_IO_BACKSPACE,
    KM_IO_ENDFILE, KM_IO_FLUSH, KM_IO_WAIT, KM_IO_READ, KM_IO_WRITE,
    KM_IO_NOPS,                 /* (PRINT is a WRITE) */
    KM_IO_OP = 15
};
/* plus where its unit comes from, */
enum km_io_source {
    KM_IO_UNIT = 0,             /* UNIT is the unit */
    KM_IO_DEFAULT_UNIT = 16,    /* `*`: standard input or output */
    KM_IO_INTERNAL = 32,        /* an internal file: no file at all */
    KM_IO_UNIT_UNKNOWN = 48,    /* a unit kmrun cannot tell the type of */
    KM_IO_NEWUNIT = 64,         /* OPEN(NEWUNIT=): known after it */
    KM_IO_SOURCE = 112
};
/* plus these bits. */
enum km_io_bit {
    KM_IO_FORMATTED = 128,      /* a formatted or list-directed transfer */
    KM_IO_SCRATCH = 256,        /* OPEN(STATUS='SCRATCH') */
    KM_IO_MPIIO = 512,          /* an MPI-IO call (KM_MPIO, KM_MPIN): its
                                   "unit" is the file handle */
    KM_IO_END_PART = 1024       /* the end of a split collective
                                   (MPI_FILE_READ_ALL_END ...): its time
                                   joins the operation its BEGIN counted */
};

#define KM_KIND_IS_ROUTINE(k) ((k) >= KM_K_PROGRAM && (k) <= KM_K_ENTRY)

/* Bits of the <flags> field of KM_REG's text. */
enum km_flag {
    KM_F_TRACE = 1,      /* TRACE_FILE_NUMBER > 0 when instrumented */
    KM_F_REDUNDANT = 2,  /* the user declared this region's time redundant
                            (work every rank repeats): REDUNDANT_ROUTINES in
                            the control file, or a !KM_redundant region */
    KM_F_MPI_UNMEASURED = 4  /* a routine with MPI calls kmrun left
                            unmeasured (MPI_MEASURED_LEVEL, IF_ROUTINE):
                            its rank's MPI time misses them, so no
                            prediction can be made */
};

/* The entry points' C names, through the Fortran name mangling configure
 * found (F77_FUNC_ in config.h).  libkm defines them but KM_MPII and
 * KM_MPIF, which KM_libkm_mpi.f defines (runtime/km_mpi.c); tests/kmcheck.c
 * and bench/stub.c stand in for them. */
#ifdef F77_FUNC_
#include <stdint.h>

#define km_reg_f  F77_FUNC_(km_reg, KM_REG)
#define km_in_f   F77_FUNC_(km_in, KM_IN)
#define km_out_f  F77_FUNC_(km_out, KM_OUT)
#define km_end_f  F77_FUNC_(km_end, KM_END)
#define km_stop_f F77_FUNC_(km_stop, KM_STOP)
#define km_exit_f F77_FUNC_(km_exit, KM_EXIT)
#define km_writ_f F77_FUNC_(km_writ, KM_WRIT)
#define km_opt_f  F77_FUNC_(km_opt, KM_OPT)
#define km_mpii_f F77_FUNC_(km_mpii, KM_MPII)
#define km_mpif_f F77_FUNC_(km_mpif, KM_MPIF)
#define km_abrt_f F77_FUNC_(km_abrt, KM_ABRT)
#define km_abor_f F77_FUNC_(km_abor, KM_ABOR)

void km_reg_f(int32_t *h, const int32_t *hr, const char *text);
void km_in_f(const int32_t *h);
void km_out_f(const int32_t *h);
void km_end_f(void);
void km_stop_f(void);
void km_exit_f(void);
void km_writ_f(void);
void km_opt_f(const char *text);
void km_mpii_f(void);
void km_mpif_f(void);
void km_abrt_f(void);    /* before CALL MPI_ABORT: this rank's own file */
void km_abor_f(void);    /* before CALL ABORT */
#endif

#endif
