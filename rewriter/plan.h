/*
 * plan.h — what the files of the rewriter share: the plan of edits.
 *
 *   rewrite.c   the driver and routine measurement (handles, entry and
 *               return code, STOP / EXIT / MPI hooks, ENTRY points)
 *   regions.c   the unit's structure (DO loops, IF blocks) and the regions
 *               measured in it: DO loops, CALL / MPI / I/O statements and
 *               !KM_measure / !KM_redundant regions
 *   jumps.c     jumps that leave or enter measured regions
 *   copy.c      the copy pass: original lines out, with the edits applied
 *   emit.c      the layout of either source form, and inserted
 *               statements written in it
 *
 * Planning never writes text; it fills one `struct sedit` per statement
 * that needs one, and the copy pass writes them in a fixed order around
 * the statement (see struct sedit).  Nothing outside rewriter/ sees this.
 */
#ifndef KM_PLAN_H
#define KM_PLAN_H

#include <stdbool.h>

#include "control/control.h"
#include "parser/program.h"
#include "rewriter/rewrite.h"
#include "support/buf.h"
#include "support/diag.h"

/* One inserted statement. */
struct ins {
    int label;            /* 0: none */
    int indent;           /* extra columns of indentation */
    char *text;
    bool raw;             /* a directive line, written as it is (column 1) */
};

/* A sequence of inserted statements. */
struct code {
    struct ins *v;
    int n, cap;
};

/* A stub: code reached only by a redirected jump, then on to the target. */
struct stub {
    int label;
    struct code code;
    int key_close;        /* region closed first (-1: none) */
    int key_enter;        /* first region entered (-1: none) */
    bool ends;            /* its code ends with RETURN or STOP */
};

/* A label token of the statement written with another label. */
struct relabel {
    int tok;              /* offset of the token in km_source.tok */
    int label;
};

/*
 * The edits of one statement, written in this order:
 *
 *   entry      routine entry code (never takes the statement's label)
 *   open       KM_IN of user regions that begin here
 *   stubs      "GOTO lead", then each stub (a jump's way in), each but
 *              the last ending with "GOTO lead"
 *   main       what runs just before the statement: KM_IN of a loop or
 *              location, hooks; main[0] takes the statement's label (or
 *              `main_label`), so a jump to the statement runs it
 *   the statement, its label tokens replaced (relabels); a logical IF
 *              whose statement has `act_pre` / `act_post` code becomes a
 *              block IF around them; `action` replaces the logical IF's
 *              statement instead
 *   stubs, when `stubs_after` (an END IF target): after the statement
 *   post[0]    what runs just after it (in the same DO iteration)
 *   for each DO loop m = 1..k that ends here, innermost first: its new
 *              terminal "term[m] CONTINUE" if it has one, then post[m],
 *              which runs once loop m has completed
 */
struct sedit {
    struct code entry, open, main;
    struct stub *stubs;
    int nstubs, stubcap;
    bool stubs_after;
    int after_label;      /* stubs_after: where the normal path goes on */
    int main_label;       /* label main[0] carries; -1: the statement's */
    struct code act_pre, act_post;
    char *action;
    struct code *post;    /* nslots of them */
    int nslots;
    int *term;            /* term[m], m = 1..nslots-1: new terminal label */
    struct relabel *rl;
    int nrl, rlcap;
    bool comment_out;     /* written as comment lines (a moved ENTRY) */
};

enum region_kind { RG_LOOP = 1, RG_USER, RG_LOC, RG_OMP };

/* A measured region of the unit being planned. */
struct region {
    int rk;               /* enum region_kind */
    int kind;             /* KM_K_DO, ... KM_K_USER */
    int stmt;             /* DO statement, location statement, or the
                             first statement of a user region */
    int first, last;      /* the statements it contains */
    int rank;             /* orders regions that begin at one statement:
                             user regions (by marker) before the loop */
    int end_slot;         /* user region: after `last`, in this slot */
    int line;             /* reported line */
    char *text;           /* reported statement text */
    int flags;            /* KM_F_* */
    bool measured;
    int handle;           /* index into the handle array, once assigned */
    /* RG_OMP: placed by physical line of file 0, around directive lines:
     * KM_IN before (or after) line in_line, KM_OUT before (or after)
     * out_line; `barrier`: "!$omp barrier" between the two (both before
     * out_line), the wait at the end of a parallel region */
    int in_line, out_line;
    bool in_after, out_after, barrier;
    bool by_split;        /* its code is its split construct's */
    struct omp_split *split;
};

/* Regions that begin at one statement, from the outermost: user regions
 * (ranked by marker), the DO loop, a combined OpenMP construct split
 * inside that loop, the statement's own location. */
#define KM_RANK_LOOP 1000000
#define KM_RANK_SPLIT 1500000
#define KM_RANK_LOC 2000000

/* A combined OpenMP construct (parallel do, parallel sections ...) written
 * as the two it stands for, so that the threads can be measured inside:
 * its directive becomes "!$omp parallel" with the parallel's clauses, its
 * KM_IN, then the inner construct with the others; its end becomes the
 * inner construct's end with NOWAIT, the barrier (measured), its KM_OUT
 * and "!$omp end parallel". */
struct omp_split {
    char *par;            /* the parallel's clauses */
    char *inner;          /* "do", "do simd", "sections", "workshare",
                             "master", "masked" */
    char *inner_clauses;
    int first, last;      /* the directive's lines */
    int end_first, end_last;  /* its end directive's lines, or 0 */
    int terminal;         /* a parallel do without end directive: its
                             loop's terminal statement */
    int barrier;          /* the barrier's region (index) */
    int block;            /* master / masked: the block's region, or -1 */
};

/* Directive lines of file 0 written as other text: what replaces lines
 * first..last (kept at `first`). */
struct line_replace {
    int last;             /* 0: none */
    struct code code;
};

/* The body of a tied OpenMP task: its code may run on a thread where its
 * routine is not open (a task another thread created), so what is measured
 * inside it enters the routine there first (KM_IN of minus the routine's
 * handle, after the directive; KM_OUT of it before the end). */
struct task_body {
    int dir_last, end_line;   /* the directive's last line, END TASK's */
    int first, last;          /* the statements inside */
};

/* The construct tree of a unit: DO loops and branches of block IFs. */
struct cnode {
    int stmt;             /* DO, IF, ELSE IF or ELSE statement; -1: the unit */
    int parent;
};

struct unit_ctx {
    int index;
    const struct km_unit *u;
    struct km_levels lv;
    bool measured;        /* the routine itself is timed */
    bool locations;       /* ROUTINE_MEASURED_LEVEL 2 */
    bool print_out;       /* the unit's own name is a PRINT_OUT routine */
    bool entry_print_out; /* some ENTRY's name is */
    bool mpi_unmeasured;  /* it has MPI calls no region measures: its
                             registration says so (KM_F_MPI_UNMEASURED) */
    char h[32];           /* handle array name */
    char iolen[40];       /* INQUIRE(IOLENGTH=) variable (files.c) */
    char e[32];           /* active-entry variable, if the unit has ENTRYs */
    char hexpr[40];       /* what KM_OUT of the routine is given */
    int end_label;        /* label of the return code before END, if any */
    /* structure (regions.c), indexed by statement - u->first */
    struct cnode *nodes;
    int nnodes, nodecap;
    int *before;          /* context just before the statement */
    int *ctx;             /* the statement's own context */
    int **after;          /* after[i][m]: context after it, once m loops
                             ending at it have completed (-1: no such
                             place, as inside a loop after its END DO) */
    int **ending;         /* ending[i][m-1]: DO statement of the m-th loop
                             ending at it, innermost first */
    int *nend;            /* how many loops end at it */
    /* regions */
    struct region *rg;
    int nrg, rgcap;
    struct task_body *tasks;   /* tied OpenMP tasks (omp.c) */
    int ntasks, taskcap;
    int nhandles;
    bool io_length;       /* declares <prefix>IOLEN (files.c) */
};

/* A !KM_measure or !KM_redundant line. */
struct marker {
    int line;
    bool redundant;
    bool start;
    char *text;           /* the line, blanks collapsed */
    int after;            /* the statement after it (km_source index) */
    int unit;
};

struct plan {
    const struct km_program *prog;
    const struct km_source *src;
    const struct km_settings *set;
    const struct km_rewrite_opts *opts;
    struct km_diag *diag;
    struct sedit **ed;    /* per statement; NULL: untouched */
    unsigned char *used;  /* labels in use in the current unit */
    int next_label;
    int *lmap;            /* label -> statement in the current unit, or -1 */
    int *lset;            /* the labels set in lmap */
    int nlset, lsetcap;
    int *ref_first;       /* per statement: its first label reference */
    int *ref_next;        /* per reference: the next of its statement */
    char **defined;       /* upper-case names of the user's routines */
    int ndefined;
    struct marker *markers;
    int nmarkers, markercap;
    struct code *line_before, *line_after;   /* per line of file 0: code
                             around a directive line (OpenMP regions) */
    struct clause_add *added;   /* per line of file 0 */
    struct line_replace *replaced;  /* per line of file 0 */
    bool ok;
};

/* Clauses added to a directive, at the end of its last line (before a
 * comment) or, when the line has no room, on a continuation line of their
 * own (fixed form: !$omp+ ...; free form: the line gets a final '&' and
 * !$omp& ... follows): NOWAIT to the end of a worksharing construct whose
 * barrier is made explicit, SHARED(KM_H) to a construct whose DEFAULT
 * would not share the handles. */
struct clause_add {
    unsigned char how;    /* ADD_* */
    char *text;           /* the clauses, blank-separated */
};
enum { ADD_NONE, ADD_APPEND, ADD_FIXED_LINE, ADD_FREE_LINE };

/* --- plan.c: shared helpers ---------------------------------------------- */

char *km_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
void km_code_add(struct code *c, int label, int indent, char *text);
void km_code_prepend(struct code *c, int label, int indent, char *text);
void km_code_free(struct code *c);
struct sedit *km_sedit(struct plan *P, int stmt);
void km_sedit_slots(struct plan *P, int stmt, int nslots);
/* Is statement i a logical IF (whose action is the statement measured)? */
bool km_is_logical_if(const struct plan *P, int i);
/* Where code goes just before (after) the work of location statement i:
 * around its action when a logical IF guards it, else around the
 * statement (after: the slot right after it).  Use at once: adding slots
 * moves them. */
struct code *km_code_before(struct plan *P, int i);
struct code *km_code_after(struct plan *P, int i);
void km_add_relabel(struct plan *P, int stmt, int tok, int label);
int km_fresh_label(struct plan *P);
void km_collect_labels(struct plan *P, int unit);
/* An error at the start of statement i; marks the plan failed. */
void km_fail(struct plan *P, int stmt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void km_warn(struct plan *P, int stmt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Can statement i carry edits of its own: are its lines in the file, and
 * its own? */
bool km_editable(const struct plan *P, int i);
/* The kind of what the statement does: its own, or its logical IF's. */
int km_effective_kind(const struct plan *P, int i);
bool km_is_io_kind(int kind);
/* The statement's text from token offset `from` (or its start, -1) to the
 * end, first physical line only if `first_line`, blanks collapsed outside
 * character constants. */
char *km_stmt_text(const struct plan *P, int i, int from, bool first_line);
/* The statement with that label in the current unit, or -1. */
int km_label_stmt(const struct plan *P, int label);

/* --- regions.c ------------------------------------------------------------ */

/* The !KM_ lines of the file, each placed between two statements. */
void km_find_markers(struct plan *P);
void km_markers_free(struct plan *P);
/* Is `name` a routine of the user's (defined in a file kmrun was given)? */
bool km_user_routine(const struct plan *P, const char *name);

void km_unit_structure(struct plan *P, struct unit_ctx *c);
void km_unit_structure_free(struct unit_ctx *c);
/* Choose the unit's measured regions (user regions from the markers, then
 * loops and locations by the levels). */
void km_choose_regions(struct plan *P, struct unit_ctx *c);
/* Is statement s inside region r (for a location: is it r's statement)? */
bool km_region_contains(const struct region *r, int s);
/* Is region a outside region b (both containing some statement)? */
bool km_region_outer(const struct region *a, const struct region *b);
/* The measured region of the location statement s, or -1. */
int km_location_of(const struct unit_ctx *c, int s);
/* Assign handles and write the code of every measured region. */
void km_place_regions(struct plan *P, struct unit_ctx *c);
/* Registration statements of the measured regions, for the entry code;
 * `routine`: the handle that holds the routine's id by then. */
void km_register_regions(struct plan *P, struct unit_ctx *c,
                         struct code *out, int indent, int routine);
void km_regions_free(struct unit_ctx *c);
/* Helpers for omp.c. */
struct region *km_add_region(struct unit_ctx *c, int rk, int kind, int stmt);
/* The first statement placed after physical line `line` of file 0. */
int km_statement_after(const struct plan *P, int line);
/* Line p..end as a report shows it (malloc'd): up to its line end, runs
 * of blanks collapsed, no trailing blank nor any character of `trim`. */
char *km_collapsed(const char *p, const char *end, const char *trim);
char *km_call_in(const struct plan *P, const struct unit_ctx *c, int h);
char *km_call_out(const struct plan *P, const struct unit_ctx *c, int h);

/* --- omp.c ----------------------------------------------------------------- */

/* OMP_MEASURED_LEVEL 1: the unit's OpenMP constructs as regions. */
void km_omp_regions(struct plan *P, struct unit_ctx *c);
void km_omp_split_free(struct omp_split *s);
/* An OpenMP region's code, around its directive lines. */
void km_place_omp(struct plan *P, struct unit_ctx *c, struct region *r);
/* Tasks: the tied ones' bodies (c->tasks); in an untied task's body or a
 * taskloop's loop, whose code may move between threads, nothing is
 * measured.  After the other regions are chosen. */
void km_omp_tasks(struct plan *P, struct unit_ctx *c);
/* The code around task bodies that hold measured regions: after every
 * region's own. */
void km_omp_place_tasks(struct plan *P, struct unit_ctx *c);
/* SHARED(KM_H) on the unit's constructs whose DEFAULT clause would make
 * the handle array anything but shared. */
void km_omp_share_handles(struct plan *P, struct unit_ctx *c);

/* A call's actual arguments, or an I/O statement's control list: keyword
 * (or NULL) and text, from the token text (blanks gone, names in upper
 * case). */
#define KM_MAXARGS 40
struct km_actuals {
    int n;
    char *kw[KM_MAXARGS], *text[KM_MAXARGS];
};

/* The parenthesised list that begins at the first '(' at or after p (on
 * its line); false when it cannot be read or holds too many items.
 * *end (if not NULL): just past its ')'. */
bool km_read_actuals(const char *p, struct km_actuals *a, const char **end);
void km_actuals_free(struct km_actuals *a);

/* --- messages.c ------------------------------------------------------------ */

/* After measured MPI location r: the calls that record the bytes it
 * moves, when kmrun knows the routine. */
void km_place_messages(struct plan *P, struct unit_ctx *c, struct region *r);
/* The actual argument of dummy `name` (`dummies`: the MPI routine's
 * dummy arguments in order, blank-separated): by position, or by keyword;
 * NULL if the call has none. */
const char *km_mpi_actual(const struct km_actuals *a, const char *dummies,
                          const char *name);
/* What follows MPI_ (or PMPI_) in `name`: "SEND" of MPI_SEND; NULL when
 * it names no MPI routine. */
const char *km_mpi_routine(const char *name);
/* Is `name` one of the blank-separated `words`? */
bool km_word_in(const char *words, const char *name);
/* The STATUS actual of an MPI call whose `dummies` name one, in unit
 * `unit`, if the glue can read it (an INTEGER array: not
 * MPI_STATUS(ES)_IGNORE, not a TYPE(MPI_Status) of MPI_F08); else NULL. */
const char *km_mpi_status(const struct plan *P, int unit,
                          const struct km_actuals *a, const char *dummies);
/* An MPI handle as a default INTEGER: TRANSFER(handle, 0), which keeps an
 * INTEGER handle (mpif.h, USE MPI) and gives a TYPE(MPI_...) of MPI_F08
 * its one INTEGER component.  Free it. */
char *km_mpi_handle(const char *handle);

/* --- mpiio.c --------------------------------------------------------------- */

/* Around measured MPI location r, when it is an MPI-IO call kmrun knows:
 * the calls that tell libkm the file it works on and the bytes it moved. */
void km_place_mpiio(struct plan *P, struct unit_ctx *c, struct region *r);

/* --- files.c --------------------------------------------------------------- */

/* Around measured I/O location r: the calls that tell libkm the file it
 * works on and, for an unformatted transfer, its bytes. */
void km_place_files(struct plan *P, struct unit_ctx *c, struct region *r);

/* --- jumps.c --------------------------------------------------------------- */

/* Find the jumps that leave or enter measured regions; regions that cannot
 * be kept balanced are no longer measured (with a warning).  Call before
 * km_place_regions. */
void km_check_jumps(struct plan *P, struct unit_ctx *c);
/* Write the code that keeps them balanced.  Call after handles exist. */
void km_place_jumps(struct plan *P, struct unit_ctx *c);
/* New terminal labels where code must run after a DO terminal. */
void km_place_terminals(struct plan *P, struct unit_ctx *c);

/* --- copy.c ---------------------------------------------------------------- */

void km_copy_file(struct plan *P, struct km_buf *out);

#endif
