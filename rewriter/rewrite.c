/*
 * rewrite.c — plan the edits of a file unit by unit, then copy it with
 * them applied (copy.c).  This file owns routine measurement and the
 * hooks every routine gets; regions.c and jumps.c own the rest.
 *
 * What gets inserted in a measured routine (prefix KM_ shown):
 *
 *   declarations, before the first statement function or executable
 *   statement:   INTEGER(KIND=SELECTED_INT_KIND(9)) KM_H(n+1) / SAVE KM_H / DATA KM_H /(n+1)*0/
 *   entry code, before the first executable statement and after each
 *   ENTRY:       IF (KM_H(1) .EQ. 0) THEN / CALL KM_REG(...) ... / END IF
 *                CALL KM_IN(KM_H(k))
 *
 * Threads may reach the entry code together (a routine called in a
 * parallel region): the routine is registered first into KM_H(n+1), its
 * regions with that id, and only then into KM_H(1) again (libkm finds it
 * registered and stores the same id), so that a thread that sees KM_H(1)
 * set finds every handle set.
 *   before each RETURN and the END:  CALL KM_OUT(KM_H(1))
 *
 * KM_H(1) is the routine, KM_H(2..) its ENTRY points, then its measured
 * regions, all registered at the first entry.  In every routine, measured
 * or not: CALL KM_END before the END of the main program, CALL KM_STOP
 * before STOP, CALL KM_EXIT before CALL EXIT, CALL KM_ABOR before CALL
 * ABORT (none on an OpenMP conditional line, !$, where libkm's exit
 * handler writes the results instead), CALL KM_MPII after CALL
 * MPI_INIT, CALL KM_MPIF before CALL MPI_FINALIZE, CALL KM_ABRT before
 * CALL MPI_ABORT, CALL KM_WRIT when a
 * PRINT_OUT_ROUTINES routine returns.  A label on a statement that gets
 * code in front of it moves to that code, so a jump to it still runs the
 * code.  A RETURN that is the statement of a logical IF becomes a GOTO to
 * code placed before the END (the IF line keeps its condition, its label
 * and its place as a DO terminal); other hooked or measured statements of
 * a logical IF make it a block IF (STOP and CALL EXIT too: a GOTO out of an
 * OpenMP structured block does not compile, and a RETURN cannot be in
 * one).  An ENTRY statement
 * among the declarations moves down to the first executable statement,
 * where code can follow it.
 *
 * INNER_PREFIX other than KM_: the calls go to <prefix>IN etc., and kmrun
 * writes those routines (km_rewrite_prefix_shim) to forward to libkm.
 */
#include "rewriter/rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "rewriter/emit.h"
#include "rewriter/plan.h"
#include "runtime/km_abi.h"

/* --- routine measurement --------------------------------------------------------- */

static int routine_kind(const struct km_unit *u)
{
    switch (u->kind) {
    case KM_U_PROGRAM: return KM_K_PROGRAM;
    case KM_U_FUNCTION: return KM_K_FUNCTION;
    default: return KM_K_SUBROUTINE;
    }
}

static char *registration(const struct plan *P, const struct unit_ctx *c,
                          int handle, int routine, int kind, int line,
                          const char *name)
{
    int flags = (P->set->trace > 0 ? KM_F_TRACE : 0) |
                (km_is_redundant(P->set, name) ? KM_F_REDUNDANT : 0) |
                (c->mpi_unmeasured ? KM_F_MPI_UNMEASURED : 0);
    char *desc = km_fmt("%d %d %ld %d %s %s", kind, line, P->set->threshold,
                        flags, name, P->opts->file_name);
    struct km_buf b = {0};
    km_buf_printf(&b, "CALL %sREG(%s(%d), %s(%d), ", P->set->prefix, c->h,
                  handle, c->h, routine);
    km_fortran_cstring(&b, desc);
    km_buf_addc(&b, ')');
    free(desc);
    return b.data;
}

/* The control file's run-wide settings, for libkm (KM_OPT). */
static char *run_options(const struct plan *P)
{
    char *text = km_fmt("TRACE_SIZE_LIMIT=%ld", P->set->trace_limit);
    struct km_buf b = {0};
    km_buf_printf(&b, "CALL %sOPT(", P->set->prefix);
    km_fortran_cstring(&b, text);
    km_buf_addc(&b, ')');
    free(text);
    return b.data;
}

/* Registration of every routine and region of the unit, then entry into
 * `which` (0: the unit itself; k: its k-th ENTRY). */
static void add_entry_code(struct plan *P, struct unit_ctx *c, struct code *e,
                           int which)
{
    const struct km_unit *u = c->u;
    km_code_add(e, 0, 0, km_fmt("IF (%s(1) .EQ. 0) THEN", c->h));
    const struct km_stmt *h = &P->src->stmts[u->header >= 0 ? u->header
                                                            : u->first];
    int line = km_user_line(P->src, h->file, h->first_line, NULL);
    int scratch = c->nhandles + 1;
    if (u->kind == KM_U_PROGRAM && P->set->trace > 0)
        km_code_add(e, 0, 2, run_options(P));
    km_code_add(e, 0, 2, registration(P, c, scratch, scratch, routine_kind(u),
                                      line, u->qualified));
    for (int k = 0; k < u->nentries; k++) {
        int s = u->entries[k];
        km_code_add(e, 0, 2, registration(P, c, k + 2, k + 2, KM_K_ENTRY,
                                          km_user_line(P->src,
                                              P->src->stmts[s].file,
                                              P->src->stmts[s].first_line,
                                              NULL),
                                          P->prog->info[s].name));
    }
    km_register_regions(P, c, e, 2, scratch);
    km_code_add(e, 0, 2, registration(P, c, 1, 1, routine_kind(u), line,
                                      u->qualified));
    km_code_add(e, 0, 0, km_fmt("END IF"));
    if (u->nentries > 0)
        km_code_add(e, 0, 0, km_fmt("%s = %s(%d)", c->e, c->h, which + 1));
    km_code_add(e, 0, 0, km_fmt("CALL %sIN(%s)", P->set->prefix, c->hexpr));
}

static void declare_handles(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    int n = c->nhandles + 1;      /* and the scratch handle */
    int at = P->src->stmts[u->spec_end].anchor;
    struct code *d = &km_sedit(P, at)->entry;
    km_code_add(d, 0, 0, km_fmt("INTEGER(KIND=SELECTED_INT_KIND(9)) %s(%d)",
                                c->h, n));
    if (!u->blanket_save)
        km_code_add(d, 0, 0, km_fmt("SAVE %s", c->h));
    km_code_add(d, 0, 0, km_fmt("DATA %s /%d*0/", c->h, n));
    if (u->nentries > 0)
        km_code_add(d, 0, 0, km_fmt("INTEGER(KIND=SELECTED_INT_KIND(9)) %s",
                                    c->e));
    if (c->io_length) {
        /* saved, so that it may be THREADPRIVATE: a thread's INQUIRE
         * (IOLENGTH=) is never another's */
        km_code_add(d, 0, 0, km_fmt("INTEGER(KIND=SELECTED_INT_KIND(18)) %s",
                                    c->iolen));
        if (!u->blanket_save)
            km_code_add(d, 0, 0, km_fmt("SAVE %s", c->iolen));
        km_code_add(d, 0, 0, km_fmt("!$OMP THREADPRIVATE(%s)", c->iolen));
        d->v[d->n - 1].raw = true;
    }
}

/* The text of ENTRY statement s, to write again elsewhere. */
static char *entry_text(const struct plan *P, int s)
{
    return km_stmt_text(P, s, -1, false);
}

static void instrument_entries(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    int first = P->src->stmts[u->first_exec].anchor;
    struct code *e = &km_sedit(P, first)->entry;
    add_entry_code(P, c, e, 0);
    int skip = 0;
    for (int k = 0; k < u->nentries; k++) {
        int s = u->entries[k];
        if (P->src->stmts[s].file != 0) {
            km_fail(P, s, "an ENTRY statement inside an include file cannot "
                    "be instrumented");
            continue;
        }
        if (s < u->first_exec) {
            /* Among the declarations no code can follow it: it moves down
             * to the first executable statement, where its code can. */
            if (!skip)
                skip = km_fresh_label(P);
            km_sedit(P, s)->comment_out = true;
            km_code_add(e, 0, 0, km_fmt("GOTO %d", skip));
            km_code_add(e, 0, 0, entry_text(P, s));
            add_entry_code(P, c, e, k + 1);
            continue;
        }
        /* Falling through an ENTRY statement must not enter it again. */
        int over = km_fresh_label(P);
        struct sedit *b = km_sedit(P, s);
        km_code_add(&b->entry, 0, 0, km_fmt("GOTO %d", over));
        add_entry_code(P, c, &b->post[0], k + 1);
        km_code_add(&b->post[0], over, 0, km_fmt("CONTINUE"));
    }
    if (skip)
        km_code_add(e, skip, 0, km_fmt("CONTINUE"));
}

/* The code that ends the routine when it returns: KM_OUT and KM_WRIT. */
static void add_return_code(struct plan *P, struct unit_ctx *c,
                            struct code *e)
{
    const char *pre = P->set->prefix;
    if (c->u->kind == KM_U_PROGRAM) {
        km_code_add(e, 0, 0, km_fmt("CALL %sEND", pre));
        return;
    }
    if (c->measured)
        km_code_add(e, 0, 0, km_fmt("CALL %sOUT(%s)", pre, c->hexpr));
    if (c->print_out) {
        km_code_add(e, 0, 0, km_fmt("CALL %sWRIT", pre));
    } else if (c->entry_print_out && c->measured) {
        const struct km_unit *u = c->u;
        for (int k = 0; k < u->nentries; k++)
            if (km_is_print_out(P->set, P->prog->info[u->entries[k]].name))
                km_code_add(e, 0, 0, km_fmt("IF (%s .EQ. %s(%d)) CALL %sWRIT",
                                            c->e, c->h, k + 2, pre));
    }
}

static bool has_return_code(const struct unit_ctx *c)
{
    return c->u->kind == KM_U_PROGRAM || c->measured || c->print_out ||
           c->entry_print_out;
}

static int end_label(struct plan *P, struct unit_ctx *c)
{
    if (!c->end_label) {
        int l = P->src->stmts[c->u->end].label;
        c->end_label = l ? l : km_fresh_label(P);
    }
    return c->end_label;
}

/* A stub before the END, reached by GOTO from a logical IF (RETURN
 * expr): the return code then `statement`.  Returns the stub's label. */
static int add_end_stub(struct plan *P, struct unit_ctx *c, char *statement)
{
    struct sedit *e = km_sedit(P, c->u->end);
    KM_GROW(e->stubs, e->stubcap, e->nstubs + 1);
    struct stub *st = &e->stubs[e->nstubs++];
    memset(st, 0, sizeof *st);
    st->key_close = st->key_enter = -2;
    st->ends = true;
    add_return_code(P, c, &st->code);
    km_code_add(&st->code, 0, 0, statement);
    st->label = km_fresh_label(P);
    st->code.v[0].label = st->label;
    return st->label;
}

/* A RETURN in a logical IF: the IF's statement becomes GOTO. */
static void redirect(struct plan *P, int i, int label)
{
    km_sedit(P, i)->action = km_fmt("GOTO %d", label);
}

static bool in_include(struct plan *P, int i, const char *what)
{
    if (P->src->stmts[i].file == 0)
        return false;
    km_warn(P, i, "%s inside an include file cannot be instrumented; the "
            "results may be incomplete", what);
    return true;
}

static void hook_return(struct plan *P, struct unit_ctx *c, int i)
{
    if (c->u->kind != KM_U_PROGRAM && !has_return_code(c))
        return;
    if (in_include(P, i, "RETURN"))
        return;
    if (!km_is_logical_if(P, i)) {
        add_return_code(P, c, &km_sedit(P, i)->main);
        return;
    }
    const struct km_sinfo *in = &P->prog->info[i];
    char *stmt = km_stmt_text(P, i, in->action_tok, false);
    bool alternate = strlen(stmt) > 6;     /* RETURN expr */
    if (!alternate || c->u->kind == KM_U_PROGRAM) {
        free(stmt);
        redirect(P, i, end_label(P, c));
    } else {
        redirect(P, i, add_end_stub(P, c, stmt));
    }
}

/* The hook before a STOP, ERROR STOP or CALL EXIT; in a logical IF, the
 * IF becomes a block IF around hook and statement.  (Not a GOTO to a stub
 * before the END: inside an OpenMP or OpenACC structured block that
 * GOTO is a branch out of the block, which no compiler takes.)  On an
 * OpenMP conditional line (!$) the statement is code only to a compiler
 * with OpenMP, and the hook would run without it: it is left as it is,
 * and libkm's exit handler writes the results when it stops. */
static void hook_stop(struct plan *P, int i, const char *hook)
{
    if (P->src->stmts[i].flags & KM_SF_CONDITIONAL)
        return;
    if (in_include(P, i, "STOP or CALL EXIT"))
        return;
    km_code_add(km_code_before(P, i), 0, 0, km_xstrdup(hook));
}

/* CALL <prefix>`hook_name` (MPII, MPIF, ABRT) after statement i when
 * `init`, before it otherwise; `call` names the statement in a
 * complaint. */
static void hook_mpi(struct plan *P, int i, bool init, const char *call,
                     const char *hook_name)
{
    if (in_include(P, i, call))
        return;
    char *hook = km_fmt("CALL %s%s", P->set->prefix, hook_name);
    if (P->opts->mpi_hooks)
        *P->opts->mpi_hooks = true;
    struct sedit *e = km_sedit(P, i);
    if (km_is_logical_if(P, i))
        km_code_add(init ? &e->act_post : &e->act_pre, 0, 0, hook);
    else
        km_code_add(init ? &e->post[0] : &e->main, 0, 0, hook);
}

/* The code before the END: the stubs (jumped over), then the return
 * code, which a GOTO end_label reaches. */
static void hook_end(struct plan *P, struct unit_ctx *c)
{
    int end = c->u->end;
    if (P->src->stmts[end].file != 0) {
        km_fail(P, end, "END statement inside an include file");
        return;
    }
    const struct km_stmt *first = &P->src->stmts[c->u->header >= 0
                                                 ? c->u->header
                                                 : c->u->first];
    if (P->src->stmts[end].cpp_if != first->cpp_if)
        km_warn(P, end, "the end of %s's code is inside an #if: compiled "
                "with macros that choose another branch, its time would "
                "run on; give kmrun the build's -D options (or --cpp)",
                c->u->qualified);
    struct sedit *e = km_sedit(P, end);
    add_return_code(P, c, &e->main);
    if (c->end_label || e->nstubs > 0)
        e->main_label = end_label(P, c);
}

static bool calls(const struct plan *P, int i, const char *name)
{
    const struct km_sinfo *in = &P->prog->info[i];
    return km_effective_kind(P, i) == KS_CALL && in->name &&
           strcmp(in->name, name) == 0 && !km_user_routine(P, name);
}

static void hooks(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    char *stop = km_fmt("CALL %sSTOP", P->set->prefix);
    char *exit_hook = km_fmt("CALL %sEXIT", P->set->prefix);
    char *abort_hook = km_fmt("CALL %sABOR", P->set->prefix);
    for (int i = u->first; i <= u->end; i++) {
        if (P->prog->info[i].unit != c->index)
            continue;
        int k = km_effective_kind(P, i);
        /* Nothing may leave a DO CONCURRENT or a CRITICAL construct by a
         * jump (nor call an impure procedure in a DO CONCURRENT): an
         * ERROR STOP there stays as it is (libkm's exit handler writes
         * the results). */
        if (P->prog->info[i].in_concurrent || P->prog->info[i].in_critical)
            continue;
        if (k == KS_RETURN)
            hook_return(P, c, i);
        else if (k == KS_STOP)
            hook_stop(P, i, stop);
        else if (calls(P, i, "EXIT"))
            hook_stop(P, i, exit_hook);
        else if (calls(P, i, "ABORT"))  /* (gfortran's: no handler sees
                                           the SIGABRT it raises) */
            hook_stop(P, i, abort_hook);
        else if (calls(P, i, "MPI_INIT") || calls(P, i, "MPI_INIT_THREAD"))
            hook_mpi(P, i, true, "CALL MPI_INIT", "MPII");
        else if (calls(P, i, "MPI_FINALIZE"))
            hook_mpi(P, i, false, "CALL MPI_FINALIZE", "MPIF");
        else if (calls(P, i, "MPI_ABORT"))
            hook_mpi(P, i, false, "CALL MPI_ABORT", "ABRT");
    }
    free(stop);
    free(exit_hook);
    free(abort_hook);
}

static void setup_unit(struct plan *P, struct unit_ctx *c, int unit)
{
    const struct km_unit *u = &P->prog->units[unit];
    memset(c, 0, sizeof *c);
    c->index = unit;
    c->u = u;
    c->lv = km_levels_for(P->set, u->qualified);
    c->measured = c->lv.routine >= 1 && !km_is_ignored(P->set, u->qualified);
    c->locations = c->measured && c->lv.routine >= 2;
    c->print_out = km_is_print_out(P->set, u->qualified);
    for (int k = 0; k < u->nentries; k++)
        if (km_is_print_out(P->set, P->prog->info[u->entries[k]].name))
            c->entry_print_out = true;
    snprintf(c->h, sizeof c->h, "%sH", P->set->prefix);
    snprintf(c->iolen, sizeof c->iolen, "%sIOLEN", P->set->prefix);
    snprintf(c->e, sizeof c->e, "%sE", P->set->prefix);
    if (u->nentries)
        snprintf(c->hexpr, sizeof c->hexpr, "%s", c->e);
    else
        snprintf(c->hexpr, sizeof c->hexpr, "%s(1)", c->h);
    c->nhandles = 1 + u->nentries;
}

/* A PURE or ELEMENTAL procedure cannot call libkm: it is left as it is,
 * and KM_message.txt says so. */
static void leave_pure(struct plan *P, const struct km_unit *u)
{
    const struct km_stmt *h = &P->src->stmts[u->header];
    km_warning(P->diag, km_stmt_path(P->src, h), h->first_line, 1,
               "%s is PURE or ELEMENTAL (or inside one): not measured, "
               "nor anything in it", u->qualified);
}

/* MODULE PROCEDURE NAME is PURE if its interface is, and the interface
 * was in none of the files kmrun read (nor an index file): it may be
 * PURE, and a timer in a PURE body does not compile, so it is left as it
 * is (the module compiled without kmtool, a library's). */
static void leave_unseen_interface(struct plan *P, const struct km_unit *u,
                                   const struct km_unit *body)
{
    const struct km_stmt *h = &P->src->stmts[u->header];
    km_warning(P->diag, km_stmt_path(P->src, h), h->first_line, 1,
               "the interface of %s is in none of the files given (nor in "
               "an index file of --module-dir or -I): it may be PURE, so "
               "%s is not measured, nor anything in it (give kmrun its "
               "module's file too, or compile the module with kmfc first)",
               body->qualified, u->qualified);
}

/* The MODULE PROCEDURE body, u or one u is inside, whose interface kmrun
 * has not seen; NULL if none. */
static const struct km_unit *unseen_interface(const struct plan *P,
                                              const struct km_unit *u)
{
    for (;;) {
        if (u->inherits)
            return u;
        if (u->host < 0)
            return NULL;
        u = &P->prog->units[u->host];
    }
}

static void instrument_unit(struct plan *P, int unit)
{
    const struct km_unit *u = &P->prog->units[unit];
    if (u->kind == KM_U_BLOCKDATA || u->kind == KM_U_MODULE ||
        u->kind == KM_U_SUBMODULE)
        return;           /* no executable statements */
    if (u->pure) {
        leave_pure(P, u);
        return;
    }
    const struct km_unit *unseen = unseen_interface(P, u);
    if (unseen) {
        leave_unseen_interface(P, u, unseen);
        return;
    }
    km_collect_labels(P, unit);
    struct unit_ctx c;
    setup_unit(P, &c, unit);
    km_unit_structure(P, &c);
    km_choose_regions(P, &c);
    km_check_jumps(P, &c);
    /* Hooks first: regions put their KM_OUT before what hooks add after a
     * statement, and their KM_IN after what hooks add before it. */
    hooks(P, &c);
    km_place_regions(P, &c);
    if (c.measured) {
        declare_handles(P, &c);
        km_omp_share_handles(P, &c);
        instrument_entries(P, &c);
    }
    km_place_jumps(P, &c);
    hook_end(P, &c);
    km_place_terminals(P, &c);
    km_regions_free(&c);
    km_unit_structure_free(&c);
}

static void index_refs(struct plan *P)
{
    const struct km_program *prog = P->prog;
    P->ref_first = km_xmalloc(sizeof(int) * (size_t)(P->src->nstmts + 1));
    P->ref_next = km_xmalloc(sizeof(int) * (size_t)(prog->nrefs + 1));
    for (int i = 0; i < P->src->nstmts; i++)
        P->ref_first[i] = -1;
    for (int r = prog->nrefs - 1; r >= 0; r--) {
        P->ref_next[r] = P->ref_first[prog->refs[r].stmt];
        P->ref_first[prog->refs[r].stmt] = r;
    }
}

static void free_sedit(struct sedit *e)
{
    km_code_free(&e->entry);
    km_code_free(&e->open);
    km_code_free(&e->main);
    km_code_free(&e->act_pre);
    km_code_free(&e->act_post);
    for (int k = 0; k < e->nstubs; k++)
        km_code_free(&e->stubs[k].code);
    free(e->stubs);
    for (int m = 0; m < e->nslots; m++)
        km_code_free(&e->post[m]);
    free(e->post);
    free(e->term);
    free(e->rl);
    free(e->action);
    free(e);
}

bool km_rewrite(const struct km_program *prog, const struct km_settings *set,
                const struct km_rewrite_opts *opts, struct km_buf *out,
                struct km_diag *diag)
{
    struct plan P = {0};
    P.prog = prog;
    P.src = prog->src;
    P.set = set;
    P.opts = opts;
    P.diag = diag;
    P.ok = true;
    P.defined = opts->defined;
    P.ndefined = opts->ndefined;
    P.used = km_xmalloc(100000 / 8 + 1);
    P.lmap = km_xmalloc(sizeof(int) * 100000);
    for (int l = 0; l < 100000; l++)
        P.lmap[l] = -1;
    P.ed = km_xcalloc((size_t)P.src->nstmts + 1, sizeof *P.ed);
    int nlines = P.src->nfiles > 0 ? P.src->files[0].nlines : 0;
    P.line_before = km_xcalloc((size_t)nlines + 2, sizeof *P.line_before);
    P.line_after = km_xcalloc((size_t)nlines + 2, sizeof *P.line_after);
    P.added = km_xcalloc((size_t)nlines + 2, sizeof *P.added);
    P.replaced = km_xcalloc((size_t)nlines + 2, sizeof *P.replaced);
    index_refs(&P);
    km_find_markers(&P);
    for (int u = 0; u < prog->nunits && P.ok; u++)
        instrument_unit(&P, u);
    if (P.ok)
        km_copy_file(&P, out);
    for (int i = 0; i < P.src->nstmts; i++)
        if (P.ed[i])
            free_sedit(P.ed[i]);
    free(P.ed);
    for (int n = 0; n <= nlines + 1; n++) {
        km_code_free(&P.line_before[n]);
        km_code_free(&P.line_after[n]);
        free(P.added[n].text);
        km_code_free(&P.replaced[n].code);
    }
    free(P.line_before);
    free(P.line_after);
    free(P.added);
    free(P.replaced);
    km_markers_free(&P);
    free(P.ref_first);
    free(P.ref_next);
    free(P.used);
    free(P.lmap);
    free(P.lset);
    return P.ok;
}

void km_rewrite_prefix_shim(const char *prefix, bool with_mpi,
                            struct km_buf *out)
{
    static const char *const plain[] = {"END", "STOP", "EXIT", "ABOR",
                                        "WRIT", "ABRT", "MPII", "MPIF"};
    size_t n = sizeof plain / sizeof plain[0] - (with_mpi ? 0 : 2);
    km_buf_printf(out, "C     Written by kmrun: INNER_PREFIX = %s.  The "
                  "instrumented files call\nC     these routines, which "
                  "hand every call on to libkm.\n", prefix);
    km_buf_printf(out, "      SUBROUTINE %sREG(H, HR, TEXT)\n"
                  "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, HR\n"
                  "      CHARACTER(LEN=*) TEXT\n"
                  "      CALL KM_REG(H, HR, TEXT)\n      END\n", prefix);
    km_buf_printf(out, "      SUBROUTINE %sIN(H)\n"
                  "      INTEGER(KIND=SELECTED_INT_KIND(9)) H\n"
                  "      CALL KM_IN(H)\n      END\n", prefix);
    km_buf_printf(out, "      SUBROUTINE %sOUT(H)\n"
                  "      INTEGER(KIND=SELECTED_INT_KIND(9)) H\n"
                  "      CALL KM_OUT(H)\n      END\n", prefix);
    km_buf_printf(out, "      SUBROUTINE %sOPT(TEXT)\n"
                  "      CHARACTER(LEN=*) TEXT\n"
                  "      CALL KM_OPT(TEXT)\n      END\n", prefix);
    for (size_t k = 0; k < n; k++)
        km_buf_printf(out, "      SUBROUTINE %s%s\n      CALL KM_%s\n"
                      "      END\n", prefix, plain[k], plain[k]);
}

/* libkm's MPI calls, in Fortran: compiled by the user's own MPI compiler
 * with its mpif.h, so that libkm depends on no MPI's ABI (handles,
 * status layout, constants).  libkm (runtime/km_mpi.c) calls the KM_XMPI_
 * routines; MPI_INIT's and MPI_FINALIZE's hooks come here first.  PMPI_
 * only: libkm's own traffic stays out of the user's figures and out of
 * other tools' sight, on a private duplicate of MPI_COMM_WORLD whose
 * errors are returned, not fatal. */
void km_rewrite_mpi_glue(struct km_buf *out)
{
    static const char *const text[] = {
        "C     Written by kmtool: the MPI calls libkm makes.  Compile it with",
        "C     the instrumented files, with your MPI compiler (mpif77, mpif90):",
        "C     libkm itself depends on no MPI library.",
        "      BLOCK DATA KMXMPB",
        "      INTEGER KMCOMM",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      DATA KMOPEN /.FALSE./",
        "      END",
        "      SUBROUTINE KM_MPII",
        "      CALL KM_MPI_INIT_C",
        "      END",
        "      SUBROUTINE KM_MPIF",
        "      CALL KM_MPI_FINALIZE_C",
        "      END",
        "C     MPI_FINALIZE calls libkm first, wherever it is called from:",
        "C     it deletes MPI_COMM_SELF's attributes before anything else,",
        "C     while MPI still works (MPI-2.2 8.7.1), and KM_XMPI_ATEND is",
        "C     the delete function of one.  ERR 1: not set.",
        "      SUBROUTINE KM_XMPI_AT_FINALIZE(ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) ERR",
        "      EXTERNAL KM_XMPI_ATEND",
        "      INTEGER KEY, IERR",
        "      INTEGER(KIND=MPI_ADDRESS_KIND) VAL, EXTRA",
        "      VAL = 0",
        "      EXTRA = 0",
        "      ERR = 1",
        "      CALL PMPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN,",
        "     &    KM_XMPI_ATEND, KEY, EXTRA, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS) RETURN",
        "      CALL PMPI_COMM_SET_ATTR(MPI_COMM_SELF, KEY, VAL, IERR)",
        "      IF (IERR .EQ. MPI_SUCCESS) ERR = 0",
        "      END",
        "      SUBROUTINE KM_XMPI_ATEND(COMM, KEY, VAL, EXTRA, IERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER COMM, KEY, IERR",
        "      INTEGER(KIND=MPI_ADDRESS_KIND) VAL, EXTRA",
        "      CALL KM_MPI_AT_FINALIZE_C",
        "      IERR = MPI_SUCCESS",
        "      END",
        "C     The handshake there (runtime/km_gather.c), on MPI_COMM_WORLD,",
        "C     whose traffic the program has completed: V (0 or 1) to DEST",
        "C     with TAG, never waiting; V from SRC with TAG if it came, or -1.",
        "      SUBROUTINE KM_XMPI_HAIL(DEST, TAG, V)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) DEST, TAG, V",
        "      INTEGER VALS(0:1), REQ, IERR",
        "      DATA VALS /0, 1/",
        "      CALL PMPI_ISEND(VALS(V:V), 1, MPI_INTEGER, INT(DEST), INT(TAG),",
        "     &    MPI_COMM_WORLD, REQ, IERR)",
        "      IF (IERR .EQ. MPI_SUCCESS) CALL PMPI_REQUEST_FREE(REQ, IERR)",
        "      END",
        "      SUBROUTINE KM_XMPI_HEARD(SRC, TAG, V)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) SRC, TAG, V",
        "      INTEGER STATUS(MPI_STATUS_SIZE), IERR, BUF(1)",
        "      LOGICAL FLAG",
        "      V = -1",
        "      CALL PMPI_IPROBE(INT(SRC), INT(TAG), MPI_COMM_WORLD, FLAG,",
        "     &    STATUS, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. .NOT. FLAG) RETURN",
        "      CALL KM_XMPI_TAKE(BUF, INT(SRC), INT(TAG), IERR)",
        "      IF (IERR .EQ. MPI_SUCCESS) V = BUF(1)",
        "      END",
        "      SUBROUTINE KM_XMPI_TAKE(BUF, SRC, TAG, IERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER BUF(*), SRC, TAG, IERR, STATUS(MPI_STATUS_SIZE)",
        "      CALL PMPI_RECV(BUF, 1, MPI_INTEGER, SRC, TAG, MPI_COMM_WORLD,",
        "     &    STATUS, IERR)",
        "      END",
        "C     0: before MPI_INIT, 1: usable, 2: after MPI_FINALIZE",
        "      SUBROUTINE KM_XMPI_STATE(STATE)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) STATE",
        "      LOGICAL FLAG",
        "      INTEGER IERR",
        "      STATE = 0",
        "      CALL PMPI_INITIALIZED(FLAG, IERR)",
        "      IF (FLAG) STATE = 1",
        "      CALL PMPI_FINALIZED(FLAG, IERR)",
        "      IF (FLAG) STATE = 2",
        "      END",
        "      SUBROUTINE KM_XMPI_RANK_SIZE(RANK, NPROCS, ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) RANK, NPROCS, ERR",
        "      INTEGER R, N, IERR1, IERR2",
        "      CALL PMPI_COMM_RANK(MPI_COMM_WORLD, R, IERR1)",
        "      CALL PMPI_COMM_SIZE(MPI_COMM_WORLD, N, IERR2)",
        "      RANK = R",
        "      NPROCS = N",
        "      ERR = 0",
        "      IF (IERR1 .NE. MPI_SUCCESS .OR. IERR2 .NE. MPI_SUCCESS) ERR = 1",
        "      END",
        "      SUBROUTINE KM_XMPI_BEGIN(ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) ERR",
        "      INTEGER KMCOMM, IERR",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      CALL PMPI_COMM_DUP(MPI_COMM_WORLD, KMCOMM, IERR)",
        "      ERR = 0",
        "      KMOPEN = IERR .EQ. MPI_SUCCESS",
        "      IF (.NOT. KMOPEN) THEN",
        "        ERR = 1",
        "        RETURN",
        "      END IF",
        "      CALL PMPI_COMM_SET_ERRHANDLER(KMCOMM, MPI_ERRORS_RETURN, IERR)",
        "      END",
        "      SUBROUTINE KM_XMPI_SEND(BUF, N, DEST, ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER BUF(*)",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) N, DEST, ERR",
        "      INTEGER KMCOMM, IERR",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      CALL PMPI_SEND(BUF, INT(N), MPI_BYTE, INT(DEST), 7183, KMCOMM,",
        "     &    IERR)",
        "      ERR = 0",
        "      IF (IERR .NE. MPI_SUCCESS) ERR = 1",
        "      END",
        "      SUBROUTINE KM_XMPI_RECV(BUF, N, SRC, ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER BUF(*)",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) N, SRC, ERR",
        "      INTEGER KMCOMM, IERR, STATUS(MPI_STATUS_SIZE)",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      CALL PMPI_RECV(BUF, INT(N), MPI_BYTE, INT(SRC), 7183, KMCOMM,",
        "     &    STATUS, IERR)",
        "      ERR = 0",
        "      IF (IERR .NE. MPI_SUCCESS) ERR = 1",
        "      END",
        "      SUBROUTINE KM_XMPI_BCAST(V, ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) V, ERR",
        "      INTEGER KMCOMM, IERR, IV",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      IV = V",
        "      CALL PMPI_BCAST(IV, 1, MPI_INTEGER, 0, KMCOMM, IERR)",
        "      V = IV",
        "      ERR = 0",
        "      IF (IERR .NE. MPI_SUCCESS) ERR = 1",
        "      END",
        "      SUBROUTINE KM_XMPI_BARRIER(ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) ERR",
        "      INTEGER KMCOMM, IERR",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      CALL PMPI_BARRIER(KMCOMM, IERR)",
        "      ERR = 0",
        "      IF (IERR .NE. MPI_SUCCESS) ERR = 1",
        "      END",
        "C     The bytes a measured MPI call moved (runtime/km_msg.c): sent",
        "C     (KM_MPIS), received as posted (KM_MPIQ) or as its status says",
        "C     (KM_MPIR), a collective's count (KM_MPIC) or counts per rank",
        "C     (KM_MPIV); nothing to or from MPI_PROC_NULL.  A point-to-point",
        "C     message's peer goes as its rank in MPI_COMM_WORLD",
        "C     (runtime/km_mpi.c translates the others' ranks), its tag for",
        "C     the trace (-1: any, or none).",
        "      SUBROUTINE KM_MPIS(H, N, TYPE, PEER, TAG, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, W",
        "      INTEGER N, TYPE, PEER, TAG, COMM",
        "      IF (PEER .EQ. MPI_PROC_NULL) RETURN",
        "      W = 1",
        "      CALL KM_XMPI_BYTES(H, W, N, TYPE, PEER, TAG, COMM)",
        "      END",
        "      SUBROUTINE KM_MPIQ(H, N, TYPE, PEER, TAG, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, W",
        "      INTEGER N, TYPE, PEER, TAG, COMM, T",
        "      IF (PEER .EQ. MPI_PROC_NULL) RETURN",
        "      W = 2",
        "      T = TAG",
        "      IF (TAG .EQ. MPI_ANY_TAG) T = -1",
        "      CALL KM_XMPI_BYTES(H, W, N, TYPE, PEER, T, COMM)",
        "      END",
        "      SUBROUTINE KM_MPIR(H, TYPE, STATUS, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, W",
        "      INTEGER TYPE, STATUS(MPI_STATUS_SIZE), COMM, N, IERR",
        "      IF (STATUS(MPI_SOURCE) .EQ. MPI_PROC_NULL) RETURN",
        "      CALL PMPI_GET_COUNT(STATUS, TYPE, N, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. N .EQ. MPI_UNDEFINED) RETURN",
        "      W = 2",
        "      CALL KM_XMPI_BYTES(H, W, N, TYPE, STATUS(MPI_SOURCE),",
        "     &                   STATUS(MPI_TAG), COMM)",
        "      END",
        "      SUBROUTINE KM_MPIC(H, N, TYPE, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, W",
        "      INTEGER N, TYPE, COMM, NOPEER",
        "      W = 1",
        "      NOPEER = -1",
        "      CALL KM_XMPI_BYTES(H, W, N, TYPE, NOPEER, NOPEER, COMM)",
        "      END",
        "      SUBROUTINE KM_MPIV(H, COUNTS, TYPE, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, W, NOPEER, IC",
        "      INTEGER COUNTS(*), TYPE, COMM, NP, SIZE, IERR, I",
        "      INTEGER(KIND=SELECTED_INT_KIND(18)) BYTES",
        "      CALL PMPI_COMM_SIZE(COMM, NP, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS) RETURN",
        "      CALL PMPI_TYPE_SIZE(TYPE, SIZE, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. SIZE .LT. 0) RETURN",
        "      BYTES = 0",
        "      DO 10 I = 1, NP",
        "        BYTES = BYTES + INT(COUNTS(I), KIND(BYTES)) * SIZE",
        "   10 CONTINUE",
        "      W = 1",
        "      NOPEER = -1",
        "      IC = -1",
        "      IF (COMM .NE. MPI_COMM_WORLD) IC = COMM",
        "      CALL KM_MPI_BYTES_C(H, W, BYTES, NOPEER, NOPEER, IC)",
        "      END",
        "C     The bytes a measured MPI-IO data access moved (rewriter/mpiio.c):",
        "C     N elements of TYPE as posted (KM_MPIB), or as STATUS says",
        "C     (KM_MPIG); runtime/km_io.c gives them to the call's file.",
        "      SUBROUTINE KM_MPIB(N, TYPE)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER N, TYPE, SIZE, IERR",
        "      INTEGER(KIND=SELECTED_INT_KIND(18)) BYTES",
        "      CALL PMPI_TYPE_SIZE(TYPE, SIZE, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. SIZE .LT. 0) RETURN",
        "      BYTES = INT(N, KIND(BYTES)) * SIZE",
        "      CALL KM_IOL(BYTES)",
        "      END",
        "      SUBROUTINE KM_MPIG(N, TYPE, STATUS)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER N, TYPE, STATUS(MPI_STATUS_SIZE), COUNT, IERR",
        "      CALL PMPI_GET_COUNT(STATUS, TYPE, COUNT, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. COUNT .EQ. MPI_UNDEFINED)",
        "     &    COUNT = N",
        "      CALL KM_MPIB(COUNT, TYPE)",
        "      END",
        "C     An all-to-all's destinations: N (KM_MPIA) or COUNTS(I) (KM_MPIW)",
        "C     elements of TYPE to each rank I of COMM, for the matrix.",
        "      SUBROUTINE KM_MPIA(H, N, TYPE, COMM)",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H",
        "      INTEGER N, TYPE, COMM, COUNTS(1)",
        "      COUNTS(1) = N",
        "      CALL KM_XMPI_DESTS(COUNTS, 0, TYPE, COMM)",
        "      END",
        "      SUBROUTINE KM_MPIW(H, COUNTS, TYPE, COMM)",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H",
        "      INTEGER COUNTS(*), TYPE, COMM",
        "      CALL KM_XMPI_DESTS(COUNTS, 1, TYPE, COMM)",
        "      END",
        "      SUBROUTINE KM_XMPI_DESTS(COUNTS, STEP, TYPE, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER COUNTS(*), STEP, TYPE, COMM, NP, SIZE, IERR, I",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) WP, IP, IC",
        "      INTEGER(KIND=SELECTED_INT_KIND(18)) BYTES",
        "      CALL PMPI_COMM_SIZE(COMM, NP, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS) RETURN",
        "      CALL PMPI_TYPE_SIZE(TYPE, SIZE, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. SIZE .LT. 0) RETURN",
        "      IC = COMM",
        "      DO 10 I = 1, NP",
        "        BYTES = INT(COUNTS(1 + STEP * (I - 1)), KIND(BYTES)) * SIZE",
        "        IF (COMM .EQ. MPI_COMM_WORLD) THEN",
        "          WP = I - 1",
        "        ELSE",
        "          IP = I - 1",
        "          CALL KM_MPI_PEER_C(IC, IP, WP)",
        "        END IF",
        "        CALL KM_MPI_COLL_PEER_C(WP, BYTES)",
        "   10 CONTINUE",
        "      END",
        "      SUBROUTINE KM_XMPI_BYTES(H, WHAT, N, TYPE, PEER, TAG, COMM)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) H, WHAT, WP, IP, IC, IT, ICT",
        "      INTEGER N, TYPE, PEER, TAG, COMM, SIZE, IERR",
        "      INTEGER(KIND=SELECTED_INT_KIND(18)) BYTES",
        "      CALL PMPI_TYPE_SIZE(TYPE, SIZE, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS .OR. SIZE .LT. 0) RETURN",
        "      BYTES = INT(N, KIND(BYTES)) * SIZE",
        "      WP = -1",
        "      IF (PEER .GE. 0 .AND. COMM .EQ. MPI_COMM_WORLD) THEN",
        "        WP = PEER",
        "      ELSE IF (PEER .GE. 0) THEN",
        "        IP = PEER",
        "        IC = COMM",
        "        CALL KM_MPI_PEER_C(IC, IP, WP)",
        "      END IF",
        "      IT = TAG",
        "      ICT = -1",
        "      IF (COMM .NE. MPI_COMM_WORLD) ICT = COMM",
        "      CALL KM_MPI_BYTES_C(H, WHAT, BYTES, WP, IT, ICT)",
        "      END",
        "C     Is COMM an intercommunicator (FLAG 1)?  For the trace.",
        "      SUBROUTINE KM_XMPI_IS_INTER(COMM, FLAG)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) COMM, FLAG",
        "      INTEGER IC, IERR",
        "      LOGICAL INTER",
        "      IC = COMM",
        "      FLAG = 0",
        "      CALL PMPI_COMM_TEST_INTER(IC, INTER, IERR)",
        "      IF (IERR .EQ. MPI_SUCCESS .AND. INTER) FLAG = 1",
        "      END",
        "C     The group of COMM's peers (its remote group for an",
        "C     intercommunicator): its size N, and the ranks in MPI_COMM_WORLD",
        "C     of its N ranks (RANKS, -1 for none), or ERR 1.",
        "      SUBROUTINE KM_XMPI_PEER_GROUP(IC, G, IERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER IC, G, IERR",
        "      LOGICAL INTER",
        "      CALL PMPI_COMM_TEST_INTER(IC, INTER, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS) RETURN",
        "      IF (INTER) THEN",
        "        CALL PMPI_COMM_REMOTE_GROUP(IC, G, IERR)",
        "      ELSE",
        "        CALL PMPI_COMM_GROUP(IC, G, IERR)",
        "      END IF",
        "      END",
        "      SUBROUTINE KM_XMPI_GROUP_SIZE(COMM, N, ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) COMM, N, ERR",
        "      INTEGER IC, G, NP, IERR",
        "      IC = COMM",
        "      ERR = 1",
        "      CALL KM_XMPI_PEER_GROUP(IC, G, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS) RETURN",
        "      CALL PMPI_GROUP_SIZE(G, NP, IERR)",
        "      IF (IERR .EQ. MPI_SUCCESS) THEN",
        "        N = NP",
        "        ERR = 0",
        "      END IF",
        "      CALL PMPI_GROUP_FREE(G, IERR)",
        "      END",
        "      SUBROUTINE KM_XMPI_WORLD_RANKS(COMM, N, RANKS, ERR)",
        "      INCLUDE 'mpif.h'",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) COMM, N, RANKS(N), ERR",
        "      INTEGER IC, G, GW, IERR, I, IN(N), OUT(N)",
        "      IC = COMM",
        "      ERR = 1",
        "      CALL KM_XMPI_PEER_GROUP(IC, G, IERR)",
        "      IF (IERR .NE. MPI_SUCCESS) RETURN",
        "      CALL PMPI_COMM_GROUP(MPI_COMM_WORLD, GW, IERR)",
        "      DO 10 I = 1, N",
        "        IN(I) = I - 1",
        "   10 CONTINUE",
        "      CALL PMPI_GROUP_TRANSLATE_RANKS(G, N, IN, GW, OUT, IERR)",
        "      IF (IERR .EQ. MPI_SUCCESS) THEN",
        "        DO 20 I = 1, N",
        "          RANKS(I) = OUT(I)",
        "          IF (OUT(I) .EQ. MPI_UNDEFINED) RANKS(I) = -1",
        "   20   CONTINUE",
        "        ERR = 0",
        "      END IF",
        "      CALL PMPI_GROUP_FREE(G, IERR)",
        "      CALL PMPI_GROUP_FREE(GW, IERR)",
        "      END",
        "C     A communicator that MPI_COMM_FREE is about to free: its ranks",
        "C     are forgotten (its handle may come back for another one).",
        "      SUBROUTINE KM_MPIX(COMM)",
        "      INTEGER COMM",
        "      INTEGER(KIND=SELECTED_INT_KIND(9)) IC",
        "      IC = COMM",
        "      CALL KM_MPI_FORGET_C(IC)",
        "      END",
        "      SUBROUTINE KM_XMPI_END",
        "      INCLUDE 'mpif.h'",
        "      INTEGER KMCOMM, IERR",
        "      LOGICAL KMOPEN",
        "      COMMON /KMXMPI/ KMCOMM, KMOPEN",
        "      IF (KMOPEN) CALL PMPI_COMM_FREE(KMCOMM, IERR)",
        "      KMOPEN = .FALSE.",
        "      END",
    };
    for (size_t k = 0; k < sizeof text / sizeof *text; k++) {
        km_buf_adds(out, text[k]);
        km_buf_addc(out, '\n');
    }
}
