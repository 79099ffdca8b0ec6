/*
 * rewrite.c — plan the edits of a file, then copy it with them applied.
 *
 * What gets inserted in a measured routine (prefix KM_ shown):
 *
 *   declarations, before the first statement function or executable
 *   statement:   INTEGER*4 KM_H(n) / SAVE KM_H / DATA KM_H /n*0/
 *   entry code, before the first executable statement and after each
 *   ENTRY:       IF (KM_H(1) .EQ. 0) THEN / CALL KM_REG(...) ... / END IF
 *                CALL KM_IN(KM_H(k))
 *   before each RETURN and the END:  CALL KM_OUT(KM_H(1))
 *
 * and in every routine, measured or not: CALL KM_END before the END of the
 * main program, CALL KM_STOP before STOP, CALL KM_EXIT before CALL EXIT,
 * CALL KM_MPII after CALL MPI_INIT, CALL KM_MPIF before CALL
 * MPI_FINALIZE.  A label on a statement that gets code in front of it
 * moves to that code, so a jump to it still runs the code.  A RETURN or
 * STOP that is the statement of a logical IF becomes a GOTO to code placed
 * before the END (the IF line keeps its condition, its label and its place
 * as a DO terminal); other hooked statements in a logical IF become a
 * block IF.
 */
#include "rewriter/rewrite.h"

#include <ctype.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "rewriter/emit.h"
#include "runtime/km_abi.h"

enum where { W_BEFORE, W_ACTION, W_REPLACE, W_AFTER };

struct ins {
    int label;
    int indent;           /* extra indentation inside a block */
    char *text;
};

struct edit {
    int stmt;             /* a statement of file 0 */
    int where;
    int order;
    bool blank_label;     /* the statement's label moved to inserted code */
    struct ins *ins;
    int nins;
    char *action;         /* W_ACTION: the logical IF's new statement */
};

struct plan {
    const struct km_program *prog;
    const struct km_source *src;
    const struct km_settings *set;
    const struct km_rewrite_opts *opts;
    struct km_diag *diag;
    struct edit *edits;
    int nedits, editcap;
    unsigned char *used;  /* labels in use in the current unit */
    int next_label;
    bool ok;
};

/* --- small helpers ----------------------------------------------------------- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    struct km_buf b = {0};
    va_list ap;
    va_start(ap, f);
    km_buf_vprintf(&b, f, ap);
    va_end(ap);
    km_buf_cstr(&b);
    return b.data;
}

static void fail(struct plan *P, int stmt, const char *msg)
{
    const struct km_stmt *s = &P->src->stmts[stmt];
    int line, col;
    km_raw_position(P->src, s, s->raw, &line, &col);
    km_error(P->diag, km_stmt_path(P->src, s), line, col, "%s", msg);
    P->ok = false;
}

static const struct km_stmt *stmt_of(const struct plan *P, int i)
{
    return &P->src->stmts[i];
}

static const struct km_sinfo *info_of(const struct plan *P, int i)
{
    return &P->prog->info[i];
}

static struct edit *new_edit(struct plan *P, int stmt, int where, int order)
{
    KM_GROW(P->edits, P->editcap, P->nedits + 1);
    struct edit *e = &P->edits[P->nedits++];
    memset(e, 0, sizeof *e);
    e->stmt = stmt;
    e->where = where;
    e->order = order;
    return e;
}

static void add_ins(struct edit *e, int label, int indent, char *text)
{
    e->ins = km_xrealloc(e->ins, sizeof *e->ins * (size_t)(e->nins + 1));
    e->ins[e->nins].label = label;
    e->ins[e->nins].indent = indent;
    e->ins[e->nins].text = text;
    e->nins++;
}

/* The statement's label moves to the first inserted statement. */
static void take_label(const struct plan *P, struct edit *e)
{
    int label = stmt_of(P, e->stmt)->label;
    if (label && e->nins > 0) {
        e->ins[0].label = label;
        e->blank_label = true;
    }
}

/* A label not used anywhere in the current unit. */
static int fresh_label(struct plan *P)
{
    while (P->next_label > 0 && (P->used[P->next_label / 8] &
                                 (1u << (P->next_label % 8))))
        P->next_label--;
    if (P->next_label <= 0)
        return 0;
    int l = P->next_label--;
    P->used[l / 8] |= (unsigned char)(1u << (l % 8));
    return l;
}

static void collect_labels(struct plan *P, int unit)
{
    memset(P->used, 0, 100000 / 8 + 1);
    const struct km_program *prog = P->prog;
    for (int i = 0; i < P->src->nstmts; i++)
        if (prog->info[i].unit == unit && P->src->stmts[i].label)
            P->used[P->src->stmts[i].label / 8] |=
                (unsigned char)(1u << (P->src->stmts[i].label % 8));
    for (int r = 0; r < prog->nrefs; r++)
        if (prog->info[prog->refs[r].stmt].unit == unit)
            P->used[prog->refs[r].label / 8] |=
                (unsigned char)(1u << (prog->refs[r].label % 8));
    P->next_label = 99999;
}

/* The raw text of statement i from token offset `from` (or its start, if
 * -1) to token offset `to` (or its end, if -1), blanks collapsed outside
 * character constants. */
static char *raw_slice(const struct plan *P, int i, int from, int to)
{
    const struct km_stmt *s = stmt_of(P, i);
    int a = from < 0 ? s->raw : km_tok_to_raw(P->src, i, from);
    int b = to < 0 ? s->raw + s->raw_len : km_tok_to_raw(P->src, i, to);
    struct km_buf out = {0};
    char quote = 0;
    const char *raw = P->src->raw.data;
    for (int k = a; k < b; k++) {
        char c = raw[k];
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == ' ' || c == '\t') {
            if (out.len == 0 || out.data[out.len - 1] == ' ')
                continue;
            c = ' ';
        }
        km_buf_addc(&out, c);
    }
    while (out.len > 0 && out.data[out.len - 1] == ' ')
        out.len--;
    km_buf_cstr(&out);
    return out.data;
}

/* The column where a statement's text begins, for indenting inserts. */
static int indent_of(const struct plan *P, int i)
{
    const struct km_stmt *s = stmt_of(P, stmt_of(P, i)->anchor);
    if (s->nseg == 0)
        return 7;
    const struct km_seg *g = &P->src->segs[s->seg];
    int col = 7 + (g->col - g->field_col);
    return col > 40 ? 7 : col;
}

/* --- what a statement is ----------------------------------------------------- */

/* The kind of what the statement does: its own, or its logical IF's. */
static int effective_kind(const struct plan *P, int i)
{
    const struct km_sinfo *in = info_of(P, i);
    return in->kind == KS_IF_LOGICAL ? in->action : in->kind;
}

static bool defined_here(const struct plan *P, const char *name)
{
    for (int u = 0; u < P->prog->nunits; u++)
        if (strcmp(P->prog->units[u].name, name) == 0)
            return true;
    return false;
}

static bool calls(const struct plan *P, int i, const char *name)
{
    const struct km_sinfo *in = info_of(P, i);
    return effective_kind(P, i) == KS_CALL && in->name &&
           strcmp(in->name, name) == 0 && !defined_here(P, name);
}

/* --- routine measurement ------------------------------------------------------- */

struct unit_ctx {
    int index;
    const struct km_unit *u;
    bool measured;        /* the routine itself is timed */
    bool print_out;       /* PRINT_OUT_ROUTINES */
    char h[32];           /* handle array name */
    char e[32];           /* active-entry variable, if the unit has ENTRYs */
    char hexpr[40];       /* what KM_OUT is given */
    int end_label;        /* label of the code before END, when needed */
    int stubs;            /* edit holding code placed before END that is
                             only jumped to, or -1 */
};

static int routine_kind(const struct km_unit *u)
{
    switch (u->kind) {
    case KM_U_PROGRAM: return KM_K_PROGRAM;
    case KM_U_FUNCTION: return KM_K_FUNCTION;
    default: return KM_K_SUBROUTINE;
    }
}

static char *registration(const struct plan *P, const struct unit_ctx *c,
                          int handle, int kind, int line, const char *name)
{
    char *desc = fmt("%d %d %ld %d %s %s", kind, line, P->set->threshold,
                     P->set->trace > 0 ? KM_F_TRACE : 0, name,
                     P->opts->file_name);
    struct km_buf b = {0};
    km_buf_printf(&b, "CALL %sREG(%s(%d), %s(%d), ", P->set->prefix, c->h,
                  handle, c->h, handle);
    km_fortran_cstring(&b, desc);
    km_buf_addc(&b, ')');
    free(desc);
    return b.data;
}

/* Registration of every routine of the unit, then entry into `which`
 * (0: the unit itself; k: its k-th ENTRY). */
static void add_entry_code(struct plan *P, struct unit_ctx *c, struct edit *e,
                           int which)
{
    const struct km_unit *u = c->u;
    const char *pre = P->set->prefix;
    add_ins(e, 0, 0, fmt("IF (%s(1) .EQ. 0) THEN", c->h));
    int line = stmt_of(P, u->header >= 0 ? u->header : u->first)->first_line;
    add_ins(e, 0, 2, registration(P, c, 1, routine_kind(u), line, u->name));
    for (int k = 0; k < u->nentries; k++) {
        int s = u->entries[k];
        add_ins(e, 0, 2, registration(P, c, k + 2, KM_K_ENTRY,
                                      stmt_of(P, s)->first_line,
                                      info_of(P, s)->name));
    }
    add_ins(e, 0, 0, fmt("END IF"));
    if (u->nentries > 0)
        add_ins(e, 0, 0, fmt("%s = %s(%d)", c->e, c->h, which + 1));
    add_ins(e, 0, 0, fmt("CALL %sIN(%s)", pre, c->hexpr));
}

static void declare_handles(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    int n = 1 + u->nentries;
    struct edit *e = new_edit(P, stmt_of(P, u->spec_end)->anchor, W_BEFORE,
                              0);
    add_ins(e, 0, 0, fmt("INTEGER*4 %s(%d)", c->h, n));
    if (!u->blanket_save)
        add_ins(e, 0, 0, fmt("SAVE %s", c->h));
    add_ins(e, 0, 0, fmt("DATA %s /%d*0/", c->h, n));
    if (u->nentries > 0)
        add_ins(e, 0, 0, fmt("INTEGER*4 %s", c->e));
}

static void instrument_entries(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    struct edit *e = new_edit(P, stmt_of(P, u->first_exec)->anchor, W_BEFORE,
                              1);
    add_entry_code(P, c, e, 0);
    for (int k = 0; k < u->nentries; k++) {
        int s = u->entries[k];
        if (stmt_of(P, s)->file != 0) {
            fail(P, s, "an ENTRY statement inside an include file cannot be "
                 "instrumented");
            continue;
        }
        if (s < u->first_exec) {
            fail(P, s, "ENTRY before the first executable statement is not "
                 "supported yet; move it after the first executable "
                 "statement, or set ROUTINE_MEASURED_LEVEL = 0 for this "
                 "routine");
            continue;
        }
        /* Falling through an ENTRY statement must not enter it again. */
        int skip = fresh_label(P);
        struct edit *b = new_edit(P, s, W_BEFORE, 1);
        add_ins(b, 0, 0, fmt("GOTO %d", skip));
        struct edit *a = new_edit(P, s, W_AFTER, 1);
        add_entry_code(P, c, a, k + 1);
        add_ins(a, skip, 0, fmt("CONTINUE"));
    }
}

/* The code that ends the routine when it returns: KM_OUT (and KM_WRIT). */
static void add_return_code(struct plan *P, struct unit_ctx *c, struct edit *e)
{
    if (c->u->kind == KM_U_PROGRAM) {
        add_ins(e, 0, 0, fmt("CALL %sEND", P->set->prefix));
        return;
    }
    if (!c->measured)
        return;
    add_ins(e, 0, 0, fmt("CALL %sOUT(%s)", P->set->prefix, c->hexpr));
    if (c->print_out)
        add_ins(e, 0, 0, fmt("CALL %sWRIT", P->set->prefix));
}

static int end_label(struct plan *P, struct unit_ctx *c)
{
    if (!c->end_label) {
        int l = stmt_of(P, c->u->end)->label;
        c->end_label = l ? l : fresh_label(P);
    }
    return c->end_label;
}

/* A stub before the END, reached by GOTO from a logical IF: `hook` (or,
 * if NULL, the return code) then `statement`.  Returns the stub's label. */
static int add_stub(struct plan *P, struct unit_ctx *c, const char *hook,
                    char *statement)
{
    if (c->stubs < 0) {
        new_edit(P, c->u->end, W_BEFORE, 3);
        c->stubs = P->nedits - 1;
    }
    struct edit *e = &P->edits[c->stubs];
    int first = e->nins;
    if (hook)
        add_ins(e, 0, 0, km_xstrdup(hook));
    else
        add_return_code(P, c, e);
    add_ins(e, 0, 0, statement);
    int l = fresh_label(P);
    e->ins[first].label = l;
    return l;
}

/* A hooked statement in a logical IF: the IF's statement becomes GOTO. */
static void redirect(struct plan *P, int i, int label)
{
    if (stmt_of(P, i)->flags & KM_SF_SHARES_LINE) {
        fail(P, i, "a logical IF sharing its line with another statement "
             "(';') cannot be instrumented yet");
        return;
    }
    struct edit *e = new_edit(P, i, W_ACTION, 2);
    e->action = fmt("GOTO %d", label);
}

/* A hooked statement in a logical IF that must continue after it: the
 * logical IF becomes a block IF around the code and the statement. */
static void to_block_if(struct plan *P, int i, char *before, char *after)
{
    const struct km_sinfo *in = info_of(P, i);
    if (in->ends_dos) {
        fail(P, i, "this logical IF ends a DO loop and cannot be "
             "instrumented yet");
        return;
    }
    struct edit *e = new_edit(P, i, W_REPLACE, 2);
    char *cond = raw_slice(P, i, -1, in->cond_end_tok);
    add_ins(e, stmt_of(P, i)->label, 0, fmt("%s THEN", cond));
    free(cond);
    if (before)
        add_ins(e, 0, 2, before);
    add_ins(e, 0, 2, raw_slice(P, i, in->action_tok, -1));
    if (after)
        add_ins(e, 0, 2, after);
    add_ins(e, 0, 0, fmt("END IF"));
}

static bool in_include(struct plan *P, int i, const char *what)
{
    if (stmt_of(P, i)->file == 0)
        return false;
    char *msg = fmt("%s inside an include file cannot be instrumented; "
                    "the results may be incomplete", what);
    const struct km_stmt *s = stmt_of(P, i);
    km_warning(P->diag, km_stmt_path(P->src, s), s->first_line, 0, "%s", msg);
    free(msg);
    return true;
}

/* Code before a statement, which takes over its label. */
static void before_with_label(struct plan *P, int i, char *text)
{
    struct edit *e = new_edit(P, i, W_BEFORE, 2);
    add_ins(e, 0, 0, text);
    take_label(P, e);
}

static void hook_return(struct plan *P, struct unit_ctx *c, int i)
{
    if (c->u->kind != KM_U_PROGRAM && !c->measured)
        return;
    if (in_include(P, i, "RETURN"))
        return;
    const struct km_sinfo *in = info_of(P, i);
    if (in->kind == KS_RETURN) {
        struct edit *e = new_edit(P, i, W_BEFORE, 2);
        add_return_code(P, c, e);
        take_label(P, e);
        return;
    }
    char *stmt = raw_slice(P, i, in->action_tok, -1);
    bool alternate = strlen(stmt) > 6;     /* RETURN expr */
    if (!alternate || c->u->kind == KM_U_PROGRAM) {
        free(stmt);
        redirect(P, i, end_label(P, c));
    } else {
        redirect(P, i, add_stub(P, c, NULL, stmt));
    }
}

static void hook_stop(struct plan *P, struct unit_ctx *c, int i,
                      const char *hook)
{
    if (in_include(P, i, "STOP or CALL EXIT"))
        return;
    const struct km_sinfo *in = info_of(P, i);
    if (in->kind != KS_IF_LOGICAL) {
        before_with_label(P, i, km_xstrdup(hook));
        return;
    }
    char *stmt = raw_slice(P, i, in->action_tok, -1);
    redirect(P, i, add_stub(P, c, hook, stmt));
}

static void hook_mpi(struct plan *P, int i, bool init)
{
    if (in_include(P, i, init ? "CALL MPI_INIT" : "CALL MPI_FINALIZE"))
        return;
    const struct km_sinfo *in = info_of(P, i);
    char *hook = fmt("CALL %s%s", P->set->prefix, init ? "MPII" : "MPIF");
    if (in->kind == KS_IF_LOGICAL) {
        to_block_if(P, i, init ? NULL : hook, init ? hook : NULL);
        return;
    }
    if (!init) {
        before_with_label(P, i, hook);
        return;
    }
    if (in->ends_dos) {
        free(hook);
        fail(P, i, "CALL MPI_INIT ends a DO loop and cannot be instrumented");
        return;
    }
    struct edit *e = new_edit(P, i, W_AFTER, 0);
    add_ins(e, 0, 0, hook);
}

/* The code before the END: jumps over the stubs, then the return code. */
static void hook_end(struct plan *P, struct unit_ctx *c)
{
    int end = c->u->end;
    if (stmt_of(P, end)->file != 0) {
        fail(P, end, "END statement inside an include file");
        return;
    }
    struct edit *e = new_edit(P, end, W_BEFORE, 4);
    add_return_code(P, c, e);
    bool needs_label = c->end_label != 0 || c->stubs >= 0;
    if (needs_label) {
        int l = end_label(P, c);
        if (e->nins == 0)
            add_ins(e, 0, 0, fmt("CONTINUE"));
        e->ins[0].label = l;
        if (stmt_of(P, end)->label == l)
            e->blank_label = true;
    } else {
        take_label(P, e);
    }
    if (c->stubs >= 0) {
        struct edit *g = new_edit(P, end, W_BEFORE, 2);
        add_ins(g, 0, 0, fmt("GOTO %d", end_label(P, c)));
    }
}

static void instrument_unit(struct plan *P, int unit)
{
    const struct km_program *prog = P->prog;
    const struct km_unit *u = &prog->units[unit];
    if (u->kind == KM_U_BLOCKDATA)
        return;
    collect_labels(P, unit);
    struct km_levels lv = km_levels_for(P->set, u->name);
    struct unit_ctx c = {0};
    c.index = unit;
    c.u = u;
    c.stubs = -1;
    c.measured = lv.routine >= 1 && !km_is_ignored(P->set, u->name);
    c.print_out = km_is_print_out(P->set, u->name);
    snprintf(c.h, sizeof c.h, "%sH", P->set->prefix);
    snprintf(c.e, sizeof c.e, "%sE", P->set->prefix);
    snprintf(c.hexpr, sizeof c.hexpr, "%s", u->nentries ? c.e : "");
    if (!u->nentries)
        snprintf(c.hexpr, sizeof c.hexpr, "%s(1)", c.h);

    if (c.measured) {
        declare_handles(P, &c);
        instrument_entries(P, &c);
    }
    char *stop = fmt("CALL %sSTOP", P->set->prefix);
    char *exit_hook = fmt("CALL %sEXIT", P->set->prefix);
    for (int i = u->first; i <= u->end; i++) {
        if (prog->info[i].unit != unit)
            continue;
        int k = effective_kind(P, i);
        if (k == KS_RETURN)
            hook_return(P, &c, i);
        else if (k == KS_STOP)
            hook_stop(P, &c, i, stop);
        else if (calls(P, i, "EXIT"))
            hook_stop(P, &c, i, exit_hook);
        else if (calls(P, i, "MPI_INIT") || calls(P, i, "MPI_INIT_THREAD"))
            hook_mpi(P, i, true);
        else if (calls(P, i, "MPI_FINALIZE"))
            hook_mpi(P, i, false);
    }
    free(stop);
    free(exit_hook);
    hook_end(P, &c);
}

/* --- the copy pass ------------------------------------------------------------- */

static int cmp_edit(const void *a, const void *b)
{
    const struct edit *x = a, *y = b;
    if (x->stmt != y->stmt)
        return x->stmt < y->stmt ? -1 : 1;
    if (x->where != y->where)
        return x->where < y->where ? -1 : 1;
    return x->order - y->order;
}

struct copier {
    const struct plan *P;
    const struct km_file *f;
    struct km_emitter em;
    struct km_emitter user;   /* for re-emitted user text */
};

static void copy_line(struct copier *C, int n, bool blank_label)
{
    const struct km_file *f = C->f;
    int start = f->line_start[n - 1];
    int end = n < f->nlines ? f->line_start[n] : (int)f->size;
    size_t at = C->em.out->len;
    km_buf_add(C->em.out, f->text + start, (size_t)(end - start));
    if (blank_label) {
        /* Blank the digits of columns 1-5 (up to a tab). */
        char *p = C->em.out->data + at;
        for (int i = 0; i < 5 && at + (size_t)i < C->em.out->len; i++) {
            if (p[i] == '\t')
                break;
            if (isdigit((unsigned char)p[i]))
                p[i] = ' ';
        }
    }
    if (end == (int)f->size && (end == start || f->text[end - 1] != '\n'))
        km_buf_adds(C->em.out, C->em.eol);
}

static void emit_ins(struct km_emitter *em, const struct edit *e, int indent)
{
    for (int k = 0; k < e->nins; k++)
        km_emit_stmt(em, e->ins[k].label, indent + e->ins[k].indent,
                     e->ins[k].text);
}

/* Does a physical line carry text of statement i? */
static bool statement_line(const struct plan *P, int i, int line)
{
    const struct km_stmt *s = stmt_of(P, i);
    for (int g = 0; g < s->nseg; g++)
        if (P->src->segs[s->seg + g].line == line)
            return true;
    return false;
}

/* Copy statement i's lines with its logical IF's statement replaced. */
static void copy_action(struct copier *C, int i, const struct edit *e,
                        bool blank_label)
{
    const struct plan *P = C->P;
    const struct km_stmt *s = stmt_of(P, i);
    int raw = km_tok_to_raw(P->src, i, info_of(P, i)->action_tok);
    int line, col;
    km_raw_position(P->src, s, raw, &line, &col);
    const struct km_seg *seg = NULL;
    for (int g = 0; g < s->nseg; g++)
        if (P->src->segs[s->seg + g].line == line)
            seg = &P->src->segs[s->seg + g];
    for (int n = s->first_line; n <= s->last_line; n++) {
        if (n < line) {
            copy_line(C, n, blank_label && n == s->first_line);
            continue;
        }
        if (n > line) {
            if (!statement_line(P, i, n))
                copy_line(C, n, false);
            continue;
        }
        const struct km_file *f = C->f;
        int start = f->line_start[n - 1];
        size_t at = C->em.out->len;
        km_buf_add(C->em.out, f->text + start, (size_t)(col - 1));
        if (blank_label && n == s->first_line)
            for (int k = 0; k < 5 && at + (size_t)k < C->em.out->len; k++)
                if (isdigit((unsigned char)C->em.out->data[at + k]))
                    C->em.out->data[at + k] = ' ';
        int fixed = seg ? 7 + (col - seg->field_col) : col;
        int len = (int)strlen(e->action);
        if (fixed + len - 1 <= 72) {
            km_buf_adds(C->em.out, e->action);
            km_buf_adds(C->em.out, C->em.eol);
        } else {
            km_buf_adds(C->em.out, C->em.eol);
            km_buf_adds(C->em.out, "     &");
            km_buf_adds(C->em.out, e->action);
            km_buf_adds(C->em.out, C->em.eol);
        }
    }
}

static void copy_file(struct copier *C, struct edit *edits, int nedits)
{
    const struct plan *P = C->P;
    const struct km_source *src = P->src;
    const struct km_file *f = C->f;
    int *starts = km_xmalloc(sizeof(int) * (size_t)(f->nlines + 2));
    for (int n = 0; n <= f->nlines + 1; n++)
        starts[n] = -1;
    for (int i = 0; i < src->nstmts; i++)
        if (src->stmts[i].file == 0 && starts[src->stmts[i].first_line] < 0)
            starts[src->stmts[i].first_line] = i;
    int ei = 0;
    for (int n = 1; n <= f->nlines; n++) {
        int i = starts[n];
        if (i < 0 || ei >= nedits || edits[ei].stmt != i) {
            copy_line(C, n, false);
            continue;
        }
        /* Edits are sorted by statement, and every edited statement is
         * the only one beginning on its line (check_shared_lines). */
        const struct km_stmt *s = &src->stmts[i];
        int first = ei, last = ei;
        while (last < nedits && edits[last].stmt == i)
            last++;
        ei = last;
        int indent = indent_of(P, i);
        bool blank = false;
        const struct edit *replace = NULL, *action = NULL;
        for (int k = first; k < last; k++) {
            blank = blank || edits[k].blank_label;
            if (edits[k].where == W_BEFORE)
                emit_ins(&C->em, &edits[k], indent);
            else if (edits[k].where == W_REPLACE)
                replace = &edits[k];
            else if (edits[k].where == W_ACTION)
                action = &edits[k];
        }
        if (replace) {
            for (int m = s->first_line; m <= s->last_line; m++)
                if (!statement_line(P, i, m))
                    copy_line(C, m, false);
            emit_ins(&C->user, replace, indent);
        } else if (action) {
            copy_action(C, i, action, blank);
        } else {
            for (int m = s->first_line; m <= s->last_line; m++)
                copy_line(C, m, blank && m == s->first_line);
        }
        n = s->last_line;
        for (int k = first; k < last; k++)
            if (edits[k].where == W_AFTER)
                emit_ins(&C->em, &edits[k], indent);
    }
    free(starts);
}

/* Statements sharing a line (';') cannot take edits yet. */
static void check_shared_lines(struct plan *P)
{
    for (int k = 0; k < P->nedits; k++) {
        int i = P->edits[k].stmt;
        if (stmt_of(P, i)->flags & KM_SF_SHARES_LINE) {
            fail(P, i, "this statement shares its line with another (';') "
                 "and needs instrumentation around it; put it on a line of "
                 "its own");
            return;
        }
    }
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
    P.used = km_xmalloc(100000 / 8 + 1);
    for (int u = 0; u < prog->nunits; u++)
        instrument_unit(&P, u);
    check_shared_lines(&P);
    if (P.ok) {
        if (P.nedits > 0)     /* no edits (BLOCK DATA only): no array */
            qsort(P.edits, (size_t)P.nedits, sizeof *P.edits, cmp_edit);
        struct copier C = {0};
        C.P = &P;
        C.f = &P.src->files[0];
        const char *eol = "\n";
        const char *nl = memchr(C.f->text, '\n', C.f->size);
        if (nl && nl > C.f->text && nl[-1] == '\r')
            eol = "\r\n";
        C.em.out = out;
        C.em.eol = eol;
        C.em.width = 72;
        C.user = C.em;
        C.user.width = opts->line_length;
        copy_file(&C, P.edits, P.nedits);
    }
    for (int k = 0; k < P.nedits; k++) {
        for (int j = 0; j < P.edits[k].nins; j++)
            free(P.edits[k].ins[j].text);
        free(P.edits[k].ins);
        free(P.edits[k].action);
    }
    free(P.edits);
    free(P.used);
    return P.ok;
}
