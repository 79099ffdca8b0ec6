/*
 * directive.h — which comment lines are directives, and what they govern.
 *
 * OpenMP and OpenACC directives (!$omp, c$omp, *$omp, !$acc ...) and the
 * compilers' loop hints (!dir$, !dec$, !gcc$, cdir$ ...) are comments to
 * kmrun's reader, but some must stay next to what they govern: a loop
 * directive (!$omp do, !$omp parallel do, !$acc loop, !dir$ ivdep) directly
 * precedes its DO, and its end directive (!$omp end do) directly follows
 * the loop.  The rewriter asks here so that no timer call lands between
 * them.
 */
#ifndef KM_DIRECTIVE_H
#define KM_DIRECTIVE_H

#include <stdbool.h>

enum km_directive {
    KM_DIR_NONE = 0,      /* not a directive line */
    KM_DIR_LOOP,          /* begins a directive that governs the next DO */
    KM_DIR_END_LOOP,      /* ends such a directive, right after its loop */
    KM_DIR_DECLARATIVE,   /* a directive of the specification part
                             (threadprivate, declare ...) */
    KM_DIR_OTHER,         /* any other directive (parallel, single, ...) */
    KM_DIR_CONTINUATION,  /* continues the directive on the line before */
    /* preprocessor lines (# in column 1): what was kept of a file read
     * without the preprocessor may sit inside a conditional */
    KM_DIR_CPP_IF,        /* #if, #ifdef, #ifndef */
    KM_DIR_CPP_ELSE,      /* #elif, #else */
    KM_DIR_CPP_ENDIF,     /* #endif */
    KM_DIR_CPP            /* any other (#define, #include ...) */
};

/* What physical line `p` (`len` bytes, no line end) is, given the kind
 * of the directive line before it (for free-form continuations, which
 * only the line before can announce): `prev_continues` is true when that
 * line ended with '&'. */
enum km_directive km_directive_line(const char *p, int len,
                                    bool prev_continues);

/* The N of a collapse(N) clause on directive line p (a loop directive or
 * its continuation), or 0: the N loops below are one loop to it. */
int km_directive_collapse(const char *p, int len);

/* Does directive line `p` end with '&' (free form: continued)? */
bool km_directive_continues(const char *p, int len);

/* The OpenMP constructs kmrun can measure (OMP_MEASURED_LEVEL 1). */
enum km_omp {
    KM_OMP_NONE = 0,
    KM_OMP_PARALLEL, KM_OMP_END_PARALLEL,
    KM_OMP_CRITICAL, KM_OMP_END_CRITICAL,
    KM_OMP_SINGLE, KM_OMP_END_SINGLE,
    KM_OMP_MASTER, KM_OMP_END_MASTER,
    KM_OMP_MASKED, KM_OMP_END_MASKED,
    KM_OMP_BARRIER, KM_OMP_TASKWAIT,
    /* the ends of worksharing constructs, each with an implicit barrier
     * unless NOWAIT */
    KM_OMP_END_DO, KM_OMP_END_SECTIONS, KM_OMP_END_WORKSHARE,
    /* SECTIONS and each SECTION in it: blocks measured one by one */
    KM_OMP_SECTIONS, KM_OMP_SECTION,
    KM_OMP_TASK, KM_OMP_END_TASK,
    /* the combined forms kmrun writes as the two constructs they stand
     * for (PARALLEL DO: also PARALLEL DO SIMD) */
    KM_OMP_PARALLEL_DO, KM_OMP_END_PARALLEL_DO,
    KM_OMP_PARALLEL_SECTIONS, KM_OMP_END_PARALLEL_SECTIONS,
    KM_OMP_PARALLEL_WORKSHARE, KM_OMP_END_PARALLEL_WORKSHARE,
    KM_OMP_PARALLEL_MASTER, KM_OMP_END_PARALLEL_MASTER,
    KM_OMP_PARALLEL_MASKED, KM_OMP_END_PARALLEL_MASKED
};

/* The construct an !$omp directive line (not a continuation line) begins
 * or ends, or KM_OMP_NONE.  An END kind is its begin kind + 1 (but for the
 * worksharing ends, which kmrun only needs to find). */
enum km_omp km_omp_construct(const char *p, int len);

/* Does directive line p hold `word` (lower case) as a word of its own,
 * outside a trailing comment (NOWAIT)? */
bool km_directive_has_word(const char *p, int len, const char *word);

/* Is line p an OpenMP directive line (!$omp, c$omp, *$omp, or a
 * continuation of one)? */
bool km_directive_is_omp(const char *p, int len);

/* The length of directive line p without its trailing comment (a '!'
 * after its sentinel) and the blanks before it. */
int km_directive_text_len(const char *p, int len);

/* What directive line p says after its sentinel (and its continuation
 * mark), without comment, blanks around it nor a final '&' (malloc'd);
 * NULL if it is no directive line. */
char *km_directive_body(const char *p, int len);

#endif
