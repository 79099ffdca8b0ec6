/*
 * omp.c — OpenMP constructs at OMP_MEASURED_LEVEL 1: which ones become
 * regions, and their code around the directive lines.
 *
 * A construct is measured on every thread that runs it (KM_IN after its
 * directive, KM_OUT before its end); the barrier at the end of a parallel
 * region or of a worksharing construct is made explicit and measured
 * apart, which is where a user sees the imbalance.
 */
#include "rewriter/plan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lexer/directive.h"
#include "rewriter/emit.h"
#include "runtime/km_abi.h"

/* Physical line n of file 0: its text and length. */
static const char *line_text(const struct km_file *f, int n, int *len)
{
    int a = f->line_start[n - 1];
    int b = n < f->nlines ? f->line_start[n] : (int)f->size;
    while (b > a && (f->text[b - 1] == '\n' || f->text[b - 1] == '\r'))
        b--;
    *len = b - a;
    return f->text + a;
}

/* The directive's first line as a report shows it: blanks collapsed. */
static char *directive_text(const struct km_file *f, int n)
{
    int len;
    const char *p = line_text(f, n, &len);
    return km_collapsed(p, p + len, " &");
}

/* The rank of a region listed after every other that begins at its
 * statement (an OpenMP directive line after that statement), plus its
 * line; a construct's own region takes its line less this (listed before
 * what begins inside it). */
#define LAST_RANK 1000000

struct omp_open {
    enum km_omp kind;
    int line, last;       /* the directive's first and last line */
    int block, block_last;  /* SECTIONS: the directive that opened the
                             current section block (its first and last
                             line) */
};

static struct region *omp_region(struct unit_ctx *c, int stmt, int line,
                                 char *text)
{
    struct region *r = km_add_region(c, RG_OMP, KM_K_OMP, stmt);
    r->line = line;
    r->text = text;
    r->in_line = r->out_line = line;
    return r;
}

/* The column where lines end for kmrun (fixed form 72, free form 132, or
 * less as --line-length says). */
static int line_width(const struct plan *P)
{
    int width = km_layout_of(P->src->opts.form)->width;
    if (P->opts->line_length > 0 && P->opts->line_length < width)
        width = P->opts->line_length;
    return width;
}

/* Add `clauses` to the directive whose last line is `last`: on that line
 * if it has room, else on a continuation line.  False (nothing added)
 * when a free-form line has no room even for the '&'. */
static bool add_clauses(struct plan *P, int last, const char *clauses)
{
    const struct km_file *f = &P->src->files[0];
    int len;
    const char *p = line_text(f, last, &len);
    bool fixed = km_layout_of(P->src->opts.form)->field_col > 1;
    int width = line_width(P);
    struct clause_add *a = &P->added[last];
    char *text = a->text ? km_fmt("%s %s", a->text, clauses)
                         : km_fmt("%s", clauses);
    int at = km_directive_text_len(p, len);
    if (fixed && at > width)      /* columns past the last one */
        at = width;
    while (at > 0 && (p[at - 1] == ' ' || p[at - 1] == '\t'))
        at--;
    if (at + 1 + (int)strlen(text) <= width)
        a->how = ADD_APPEND;
    else if (fixed)
        a->how = ADD_FIXED_LINE;
    else if (at + 2 <= width)
        a->how = ADD_FREE_LINE;
    else {
        free(text);
        return false;
    }
    free(a->text);
    a->text = text;
    return true;
}

/* The implicit barrier at the end of a worksharing construct (end
 * directive on lines e..last), made explicit and measured apart: NOWAIT
 * added to the end directive, "!$omp barrier" after it (the program waits
 * where it waited).  Not when the directive has NOWAIT or COPYPRIVATE, or
 * (free form) no room for the word. */
static void worksharing_barrier(struct plan *P, struct unit_ctx *c, int e,
                                int last)
{
    const struct km_file *f = &P->src->files[0];
    for (int n = e; n <= last; n++) {
        int len;
        const char *p = line_text(f, n, &len);
        /* (COPYPRIVATE and NOWAIT exclude each other) */
        if (km_directive_has_word(p, len, "nowait") ||
            km_directive_has_word(p, len, "copyprivate"))
            return;
    }
    if (!add_clauses(P, last, "nowait"))
        return;
    char *text = directive_text(f, e);
    struct region *b = omp_region(c, km_statement_after(P, last) - 1, e,
                                  km_fmt("%s (its barrier)", text));
    free(text);
    b->in_line = b->out_line = last;
    b->in_after = b->out_after = true;
    b->barrier = true;
    b->rank = LAST_RANK + last;
}

/* Does the directive on lines n..last say UNTIED? */
static bool untied(const struct km_file *f, int n, int last)
{
    for (; n <= last; n++) {
        int len;
        const char *p = line_text(f, n, &len);
        if (km_directive_has_word(p, len, "untied"))
            return true;
    }
    return false;
}

/* A construct from its directive o to its end directive (lines e..e_last):
 * a parallel region and the blocks of SINGLE, MASTER, MASKED and TASK are
 * measured inside (every thread that runs them opens its own frame); a
 * parallel region's closing barrier apart, made explicit just before its
 * end; a CRITICAL section from before its directive (the wait to enter)
 * to after its end. */
static void omp_construct(struct plan *P, struct unit_ctx *c,
                          const struct omp_open *o, int e, int e_last)
{
    const struct km_file *f = &P->src->files[0];
    int first = km_statement_after(P, o->last);
    if (first >= km_statement_after(P, e)) {
        km_warning(P->diag, f->path, o->line, 1, "this OpenMP construct "
                   "holds no statement and is not measured");
        return;
    }
    if (o->kind == KM_OMP_PARALLEL) {
        char *text = directive_text(f, e);
        struct region *b = omp_region(c, km_statement_after(P, e) - 1, e,
                                      km_fmt("%s (its barrier)", text));
        free(text);
        b->barrier = true;
        b->rank = LAST_RANK + e;
    }
    if (o->kind == KM_OMP_SINGLE)
        worksharing_barrier(P, c, e, e_last);
    if (o->kind == KM_OMP_TASK && untied(f, o->line, o->last))
        return;                   /* may resume on another thread */
    struct region *r = omp_region(c, first, o->line, directive_text(f, o->line));
    r->last = km_statement_after(P, e) - 1;
    r->rank = o->line - LAST_RANK;   /* before what begins inside it */
    if (o->kind == KM_OMP_CRITICAL) {
        r->out_line = e_last;
        r->out_after = true;
    } else {
        r->in_line = o->last;
        r->in_after = true;
        r->out_line = e;
    }
}

/* One SECTION block of a SECTIONS construct, from its opening directive
 * (lines from..from_last: SECTIONS or SECTION) to the line `to` that ends
 * it (the next SECTION, or END SECTIONS): measured inside, on the thread
 * that runs it. */
static void section_block(struct plan *P, struct unit_ctx *c, int from,
                          int from_last, int to)
{
    int first = km_statement_after(P, from_last);
    if (first >= km_statement_after(P, to))
        return;                   /* an empty section */
    struct region *r = omp_region(c, first, from,
                                  directive_text(&P->src->files[0], from));
    r->last = km_statement_after(P, to) - 1;
    r->rank = from - LAST_RANK;
    r->in_line = from_last;
    r->in_after = true;
    r->out_line = to;
}

/* The last line of the directive that begins on line n (its continuation
 * lines). */
static int directive_last(const struct km_file *f, int n)
{
    int len;
    const char *p = line_text(f, n, &len);
    bool cont = km_directive_continues(p, len);
    while (n < f->nlines) {
        p = line_text(f, n + 1, &len);
        if (km_directive_line(p, len, cont) != KM_DIR_CONTINUATION)
            break;
        cont = km_directive_continues(p, len);
        n++;
    }
    return n;
}

/* OMP_MEASURED_LEVEL 1: the OpenMP constructs between the unit's first and
 * last statements (in the file kmrun was given, not include files). */
void km_omp_regions(struct plan *P, struct unit_ctx *c)
{
    if (c->lv.omp < 1 || !c->measured)
        return;
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    const struct km_unit *u = c->u;
    int from = src->stmts[src->stmts[u->first].anchor].last_line + 1;
    int to = src->stmts[src->stmts[u->end].anchor].first_line - 1;
    struct omp_open *open = NULL;
    int n_open = 0, cap = 0;
    for (int n = from; n <= to; n++) {
        int len;
        const char *p = line_text(f, n, &len);
        enum km_omp k = km_omp_construct(p, len);
        if (k == KM_OMP_NONE)
            continue;
        int last = directive_last(f, n);
        int before = km_statement_after(P, n) - 1;
        if (before >= 0 && src->stmts[src->stmts[before].anchor].last_line > n) {
            n = last;             /* a comment line inside a statement */
            continue;
        }
        struct omp_open *top = n_open > 0 ? &open[n_open - 1] : NULL;
        if (k == KM_OMP_SECTIONS) {
            KM_GROW(open, cap, n_open + 1);
            open[n_open++] = (struct omp_open){ k, n, last, n, last };
        } else if (k == KM_OMP_SECTION && top && top->kind == KM_OMP_SECTIONS) {
            section_block(P, c, top->block, top->block_last, n);
            top->block = n;
            top->block_last = last;
        } else if (k == KM_OMP_END_SECTIONS && top &&
                   top->kind == KM_OMP_SECTIONS) {
            section_block(P, c, top->block, top->block_last, n);
            n_open--;
            worksharing_barrier(P, c, n, last);
        } else if (k == KM_OMP_SECTION) {
            ;                     /* of PARALLEL SECTIONS: not measured */
        } else if (k == KM_OMP_END_DO || k == KM_OMP_END_SECTIONS ||
                   k == KM_OMP_END_WORKSHARE) {
            worksharing_barrier(P, c, n, last);
        } else if (k == KM_OMP_BARRIER || k == KM_OMP_TASKWAIT) {
            /* (listed after what begins at the statement before) */
            struct region *r = omp_region(c, km_statement_after(P, n) - 1, n,
                                          directive_text(f, n));
            r->out_line = last;
            r->out_after = true;
            r->rank = LAST_RANK + n;
        } else if (k == KM_OMP_PARALLEL || k == KM_OMP_CRITICAL ||
                   k == KM_OMP_SINGLE || k == KM_OMP_MASTER ||
                   k == KM_OMP_MASKED || k == KM_OMP_TASK) {
            KM_GROW(open, cap, n_open + 1);
            open[n_open++] = (struct omp_open){ .kind = k, .line = n,
                                                .last = last };
        } else if (n_open > 0 && (int)open[n_open - 1].kind + 1 == (int)k) {
            omp_construct(P, c, &open[--n_open], n, last);
        } else {
            km_warning(P->diag, f->path, n, 1, "this OpenMP end directive "
                       "ends no construct kmrun saw begin; the constructs "
                       "open here are not measured");
            n_open = 0;
        }
        n = last;
    }
    for (int k = 0; k < n_open; k++)
        km_warning(P->diag, f->path, open[k].line, 1, "this OpenMP construct "
                   "has no end directive in its routine and is not measured");
    free(open);
}

/* What the directive on lines n..last says after its sentinels, its
 * lines joined by a blank (malloc'd). */
static char *directive_body(const struct km_file *f, int n, int last)
{
    struct km_buf b = {0};
    for (; n <= last; n++) {
        int len;
        const char *p = line_text(f, n, &len);
        char *t = km_directive_body(p, len);
        if (t && *t) {
            if (b.len)
                km_buf_addc(&b, ' ');
            km_buf_adds(&b, t);
        }
        free(t);
    }
    km_buf_cstr(&b);
    return b.data;
}

/* The argument of clause `name` (lower case) in directive text `body`,
 * lower case and without blanks (malloc'd); NULL if it has none. */
static char *clause_arg(const char *body, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = body; *p; p++) {
        if (strncasecmp(p, name, n) != 0 ||
            (p > body && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
            continue;
        const char *q = p + n;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '(')
            continue;
        struct km_buf b = {0};
        int depth = 1;
        for (q++; *q && depth > 0; q++) {
            depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
            if (depth > 0 && *q != ' ' && *q != '\t')
                km_buf_addc(&b, (char)tolower((unsigned char)*q));
        }
        km_buf_cstr(&b);
        return b.data;
    }
    return NULL;
}

/* The first line of a directive the unit holds (not a continuation, not
 * inside a statement, not in a procedure it contains), its last line in
 * *last; 0 past `to`. */
static int next_directive(const struct plan *P, const struct unit_ctx *c,
                          int n, int to, int *last)
{
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    for (; n <= to; n++) {
        int len;
        const char *p = line_text(f, n, &len);
        enum km_directive d = km_directive_line(p, len, false);
        if (d != KM_DIR_OTHER && d != KM_DIR_LOOP && d != KM_DIR_END_LOOP)
            continue;
        *last = directive_last(f, n);
        int after = km_statement_after(P, n);
        int before = after - 1;
        if (before >= 0 &&
            src->stmts[src->stmts[before].anchor].last_line > n) {
            n = *last;            /* a comment line inside a statement */
            continue;
        }
        if (after < src->nstmts && P->prog->info[after].unit != c->index) {
            n = *last;
            continue;
        }
        return n;
    }
    return 0;
}

void km_omp_share_handles(struct plan *P, struct unit_ctx *c)
{
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    const struct km_unit *u = c->u;
    int from = src->stmts[src->stmts[u->first].anchor].last_line + 1;
    int to = src->stmts[src->stmts[u->end].anchor].first_line - 1;
    char *clause = km_fmt("shared(%s)", c->h);
    int last;
    for (int n = from; (n = next_directive(P, c, n, to, &last)) > 0;
         n = last + 1) {
        int len;
        const char *p = line_text(f, n, &len);
        if (!km_directive_is_omp(p, len))
            continue;
        char *body = directive_body(f, n, last);
        char *def = clause_arg(body, "default");
        if (def && strcmp(def, "shared") != 0 && !add_clauses(P, last, clause))
            km_warning(P->diag, f->path, last, 1, "no room on this line for "
                       "%s, which the code kmrun writes inside the construct "
                       "needs: compile with a longer line length", clause);
        free(def);
        free(body);
    }
    free(clause);
}

/* An OpenMP region's code, around its directive lines; raw: the barrier
 * made explicit. */
void km_place_omp(struct plan *P, struct unit_ctx *c, struct region *r)
{
    struct code *in = r->in_after ? &P->line_after[r->in_line]
                                  : &P->line_before[r->in_line];
    struct code *out = r->out_after ? &P->line_after[r->out_line]
                                    : &P->line_before[r->out_line];
    km_code_add(in, 0, 0, km_call_in(P, c, r->handle));
    if (r->barrier) {
        km_code_add(out, 0, 0, km_fmt("!$omp barrier"));
        out->v[out->n - 1].raw = true;
    }
    km_code_add(out, 0, 0, km_call_out(P, c, r->handle));
}

