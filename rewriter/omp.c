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

#include "lexer/classify.h"
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
    struct omp_split *split;  /* a combined construct kmrun splits, read
                                 from its directive */
    bool untied;          /* a task that may move between threads */
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
static struct region *section_block(struct plan *P, struct unit_ctx *c,
                                    int from, int from_last, int to)
{
    int first = km_statement_after(P, from_last);
    if (first >= km_statement_after(P, to))
        return NULL;              /* an empty section */
    struct region *r = omp_region(c, first, from,
                                  directive_text(&P->src->files[0], from));
    r->last = km_statement_after(P, to) - 1;
    r->rank = from - LAST_RANK;
    r->in_line = from_last;
    r->in_after = true;
    r->out_line = to;
    return r;
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

/* --- combined constructs ------------------------------------------------ */

/* One clause of a directive: its name (lower case), its text as written
 * and what its parentheses hold (NULL: none). */
struct clause {
    char name[24];
    char *text, *arg;
};

static void free_clauses(struct clause *v, int n)
{
    for (int k = 0; k < n; k++) {
        free(v[k].text);
        free(v[k].arg);
    }
    free(v);
}

/* The clauses in text p (after the construct's name); -1 when it cannot
 * be read (unbalanced parentheses, something that is no clause). */
static int parse_clauses(const char *p, struct clause **out)
{
    struct clause *v = NULL;
    int n = 0, cap = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *start = p;
        int k = 0;
        char name[24];
        while (isalnum((unsigned char)*p) || *p == '_') {
            if (k < (int)sizeof name - 1)
                name[k++] = (char)tolower((unsigned char)*p);
            p++;
        }
        name[k] = '\0';
        if (k == 0 || k == (int)sizeof name - 1)
            goto bad;
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        char *arg = NULL;
        if (*q == '(') {
            int depth = 0;
            const char *r = q;
            do {
                depth += *r == '(' ? 1 : *r == ')' ? -1 : 0;
                r++;
            } while (*r && depth > 0);
            if (depth > 0)
                goto bad;
            arg = km_fmt("%.*s", (int)(r - q - 2), q + 1);
            p = r;
        }
        KM_GROW(v, cap, n + 1);
        memcpy(v[n].name, name, (size_t)k + 1);
        v[n].text = km_fmt("%.*s", (int)(p - start), start);
        v[n].arg = arg;
        n++;
    }
    *out = v;
    return n;
bad:
    free_clauses(v, n);
    return -1;
}

/* The variables of a clause's list (what follows a modifier's ':', or
 * what precedes a step's ':' for LINEAR), appended to b comma-separated. */
static void list_items(const struct clause *cl, struct km_buf *b)
{
    const char *a = cl->arg, *e = a + strlen(a);
    const char *colon = strchr(a, ':');
    if (colon && strcmp(cl->name, "linear") == 0)
        e = colon;
    else if (colon)
        a = colon + 1;
    while (a < e && (*a == ' ' || *a == '\t'))
        a++;
    if (a >= e)
        return;
    if (b->len)
        km_buf_addc(b, ',');
    km_buf_add(b, a, (size_t)(e - a));
}

/* The next variable of comma-separated list *p (blanks around it
 * dropped) in *item..*end; false at the list's end. */
static bool next_item(const char **p, const char **item, const char **end)
{
    for (;;) {
        const char *s = *p;
        while (*s == ' ' || *s == ',')
            s++;
        if (!*s)
            return false;
        const char *q = s;
        while (*q && *q != ',')
            q++;
        const char *e = q;
        while (e > s && e[-1] == ' ')
            e--;
        *p = q;
        if (e > s) {
            *item = s;
            *end = e;
            return true;
        }
    }
}

/* Is variable item..end (any case) in comma-separated list `list`? */
static bool in_list(const char *list, const char *item, const char *end)
{
    size_t n = (size_t)(end - item);
    const char *s, *e;
    for (const char *p = list; next_item(&p, &s, &e);)
        if ((size_t)(e - s) == n && strncasecmp(s, item, n) == 0)
            return true;
    return false;
}

/* List `list` with each variable once, blanks around them dropped. */
static char *distinct_items(const char *list)
{
    struct km_buf b = {0};
    km_buf_cstr(&b);
    const char *s, *e;
    for (const char *p = list; next_item(&p, &s, &e);) {
        if (in_list(b.data, s, e))
            continue;
        if (b.len)
            km_buf_addc(&b, ',');
        km_buf_add(&b, s, (size_t)(e - s));
        km_buf_cstr(&b);
    }
    return b.data;
}

static void add_clause_text(struct km_buf *b, const char *text)
{
    if (b->len)
        km_buf_addc(b, ' ');
    km_buf_adds(b, text);
}

/* Where each clause of combined construct `kind` goes once it is written
 * as PARALLEL plus the construct inside (as OpenMP 5.2, 17.2, says for a
 * source that combines them, and as gfortran splits them itself):
 * the parallel takes its own clauses (IF, NUM_THREADS, DEFAULT, SHARED,
 * COPYIN, PROC_BIND) and PRIVATE, FIRSTPRIVATE and REDUCTION, whose
 * effect on the whole parallel region is the one they had; the inside
 * takes the loop's (SCHEDULE, COLLAPSE, ORDERED, ORDER, LINEAR, the SIMD
 * ones), LASTPRIVATE, FIRSTPRIVATE of a LASTPRIVATE variable, REDUCTION
 * with a modifier (INSCAN, TASK) and FILTER, each of their variables then
 * SHARED on the parallel.  False when a clause is none of these. */
static bool split_clauses(enum km_omp kind, const char *clauses,
                          const char *handles, struct omp_split *s)
{
    static const char *const par_own[] = {
        "num_threads", "default", "shared", "copyin", "proc_bind",
        "private",
    };
    static const char *const loop_own[] = {
        "schedule", "collapse", "ordered", "order", "safelen", "simdlen",
        "aligned", "nontemporal",
    };
    struct clause *v;
    int n = parse_clauses(clauses, &v);
    if (n < 0)
        return false;
    bool is_do = kind == KM_OMP_PARALLEL_DO;
    struct km_buf par = {0}, in = {0}, shared = {0}, last = {0};
    for (int k = 0; k < n; k++)
        if (strcmp(v[k].name, "lastprivate") == 0 && v[k].arg)
            list_items(&v[k], &last);
    km_buf_cstr(&last);
    bool ok = true, unshared = false;
    for (int k = 0; k < n && ok; k++) {
        const struct clause *cl = &v[k];
        const char *nm = cl->name;
        bool own = false;
        for (size_t j = 0; j < sizeof par_own / sizeof par_own[0]; j++)
            own |= strcmp(nm, par_own[j]) == 0;
        bool loop = false;
        for (size_t j = 0; j < sizeof loop_own / sizeof loop_own[0]; j++)
            loop |= strcmp(nm, loop_own[j]) == 0;
        if (strcmp(nm, "default") == 0 && cl->arg) {
            char *a = km_collapsed(cl->arg, cl->arg + strlen(cl->arg), " ");
            unshared = strcasecmp(a, "shared") != 0;
            free(a);
        }
        if (strcmp(nm, "if") == 0 && cl->arg) {
            const char *a = cl->arg;
            while (*a == ' ')
                a++;
            bool simd = strncasecmp(a, "simd", 4) == 0 &&
                        strchr(a, ':') != NULL;
            add_clause_text(simd ? &in : &par, cl->text);
        } else if (own) {
            add_clause_text(&par, cl->text);
        } else if (loop && is_do) {
            add_clause_text(&in, cl->text);
        } else if (strcmp(nm, "firstprivate") == 0 && cl->arg) {
            struct km_buf items = {0};
            list_items(cl, &items);
            km_buf_cstr(&items);
            bool both = false;
            const char *s, *e;
            for (const char *p = items.data; next_item(&p, &s, &e);)
                both |= in_list(last.data, s, e);
            free(items.data);
            if (both && kind != KM_OMP_PARALLEL_WORKSHARE) {
                add_clause_text(&in, cl->text);
                list_items(cl, &shared);
            } else {
                add_clause_text(&par, cl->text);
            }
        } else if (strcmp(nm, "reduction") == 0 && cl->arg) {
            const char *colon = strchr(cl->arg, ':');
            bool modifier = colon && memchr(cl->arg, ',',
                                            (size_t)(colon - cl->arg));
            if (modifier && kind != KM_OMP_PARALLEL_WORKSHARE) {
                add_clause_text(&in, cl->text);
                list_items(cl, &shared);
            } else {
                add_clause_text(&par, cl->text);
            }
        } else if ((strcmp(nm, "lastprivate") == 0 && cl->arg &&
                    (is_do || kind == KM_OMP_PARALLEL_SECTIONS)) ||
                   (strcmp(nm, "linear") == 0 && cl->arg && is_do &&
                    !strchr(cl->arg, '('))) {
            add_clause_text(&in, cl->text);
            list_items(cl, &shared);
        } else if (strcmp(nm, "filter") == 0 &&
                   kind == KM_OMP_PARALLEL_MASKED) {
            add_clause_text(&in, cl->text);
        } else {
            ok = false;
        }
    }
    if (ok && shared.len) {
        km_buf_cstr(&shared);
        char *items = distinct_items(shared.data);
        char *t = km_fmt("shared(%s)", items);
        free(items);
        add_clause_text(&par, t);
        free(t);
    }
    if (ok && unshared) {
        char *t = km_fmt("shared(%s)", handles);
        add_clause_text(&par, t);
        free(t);
    }
    km_buf_cstr(&par);
    km_buf_cstr(&in);
    free(shared.data);
    free(last.data);
    free_clauses(v, n);
    if (!ok) {
        free(par.data);
        free(in.data);
        return false;
    }
    s->par = par.data;
    s->inner_clauses = in.data;
    return true;
}

/* The clauses of the combined directive on lines n..last: what follows
 * its name (the words of "parallel do simd" ... run together in fixed
 * form); sets the construct inside. NULL when the name is not there. */
static const char *after_name(const char *body, enum km_omp kind,
                              struct omp_split *s)
{
    static const struct {
        enum km_omp kind;
        const char *letters, *inner;
    } names[] = {
        {KM_OMP_PARALLEL_DO, "paralleldosimd", "do simd"},
        {KM_OMP_PARALLEL_DO, "paralleldo", "do"},
        {KM_OMP_PARALLEL_SECTIONS, "parallelsections", "sections"},
        {KM_OMP_PARALLEL_WORKSHARE, "parallelworkshare", "workshare"},
        {KM_OMP_PARALLEL_MASTER, "parallelmaster", "master"},
        {KM_OMP_PARALLEL_MASKED, "parallelmasked", "masked"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (names[k].kind != kind)
            continue;
        const char *p = body, *w = names[k].letters;
        while (*w) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (tolower((unsigned char)*p) != *w)
                break;
            p++;
            w++;
        }
        /* the name ends there: no letter of a longer word follows */
        if (!*w && !isalnum((unsigned char)*p) && *p != '_') {
            s->inner = km_fmt("%s", names[k].inner);
            return p;
        }
    }
    return NULL;
}

/* The lines between the unit's first and last statements (of the file
 * kmrun was given, not include files). */
static void unit_lines(const struct plan *P, const struct unit_ctx *c,
                       int *from, int *to)
{
    const struct km_source *src = P->src;
    *from = src->stmts[src->stmts[c->u->first].anchor].last_line + 1;
    *to = src->stmts[src->stmts[c->u->end].anchor].first_line - 1;
}

/* Is there a preprocessor conditional (#if, #else, #endif) among the
 * lines between the statements around line n?  Code written there would
 * be compiled or not as the conditional chooses, whatever the code at the
 * construct's other end. */
static bool in_conditional(const struct plan *P, int n)
{
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    int after = km_statement_after(P, n);
    int from = after > 0 ? src->stmts[src->stmts[after - 1].anchor].last_line + 1
                         : 1;
    int to = after < src->nstmts
                 ? src->stmts[src->stmts[after].anchor].first_line - 1
                 : f->nlines;
    for (int k = from; k <= to; k++) {
        int len;
        const char *p = line_text(f, k, &len);
        enum km_directive d = km_directive_line(p, len, false);
        if (d == KM_DIR_CPP_IF || d == KM_DIR_CPP_ELSE ||
            d == KM_DIR_CPP_ENDIF)
            return true;
    }
    return false;
}

void km_omp_split_free(struct omp_split *s)
{
    if (!s)
        return;
    free(s->par);
    free(s->inner);
    free(s->inner_clauses);
    free(s);
}

/* The combined directive `kind` on lines n..last read for splitting: its
 * clauses distributed; NULL (with a warning when a clause is the reason)
 * when it cannot be split or sits in a preprocessor conditional. */
static struct omp_split *read_split(struct plan *P, struct unit_ctx *c,
                                    enum km_omp kind, int n, int last)
{
    const struct km_file *f = &P->src->files[0];
    if (in_conditional(P, n))
        return NULL;              /* measured as it was: its loop */
    struct omp_split *s = km_xcalloc(1, sizeof *s);
    char *body = directive_body(f, n, last);
    const char *clauses = after_name(body, kind, s);
    bool ok = clauses && split_clauses(kind, clauses, c->h, s);
    free(body);
    if (!ok) {
        km_warning(P->diag, f->path, n, 1, "kmrun cannot split this "
                   "combined construct's clauses: its threads are not "
                   "measured");
        km_omp_split_free(s);
        return NULL;
    }
    s->first = n;
    s->last = last;
    s->block = -1;
    return s;
}

/* Combined construct `kind` (split s, its directive on lines s->first..
 * s->last) written split: the statements inside are first..last_stmt; its
 * end directive on lines e..e_last, or (a parallel do without one) the end
 * of its loop at statement `terminal`.  Its region, measured on every
 * thread, and its barrier's; s is the region's from then on (freed when
 * the end sits in a preprocessor conditional). */
static void split_construct(struct plan *P, struct unit_ctx *c,
                            struct omp_split *s, enum km_omp kind, int first,
                            int last_stmt, int e, int e_last, int terminal)
{
    const struct km_file *f = &P->src->files[0];
    int line = e ? e : P->src->stmts[terminal].last_line;
    if (in_conditional(P, line)) {
        km_omp_split_free(s);
        return;
    }
    s->end_first = e;
    s->end_last = e_last;
    s->terminal = terminal;
    char *text = directive_text(f, e ? e : s->first);
    struct region *b = omp_region(c, last_stmt, line,
                                  km_fmt("%s (its barrier)", text));
    free(text);
    b->barrier = true;
    b->by_split = true;
    b->rank = LAST_RANK + line;
    s->barrier = (int)(b - c->rg);
    struct region *r = omp_region(c, first, s->first,
                                  directive_text(f, s->first));
    r->last = last_stmt;
    r->rank = kind == KM_OMP_PARALLEL_DO ? KM_RANK_SPLIT
                                         : s->first - LAST_RANK;
    r->split = s;
}

/* The lines after statement i up to the next statement: the first
 * directive there, if it is an end of kind k (its lines in *e, *e_last). */
static void end_directive_after(const struct plan *P, int i, enum km_omp k,
                                int *e, int *e_last)
{
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    int to = i + 1 < src->nstmts && src->stmts[i + 1].file == 0
                 ? src->stmts[i + 1].first_line - 1 : f->nlines;
    *e = *e_last = 0;
    for (int n = src->stmts[i].last_line + 1; n <= to; n++) {
        int len;
        const char *p = line_text(f, n, &len);
        enum km_directive d = km_directive_line(p, len, false);
        if (d == KM_DIR_NONE || d == KM_DIR_CPP_IF || d == KM_DIR_CPP_ELSE ||
            d == KM_DIR_CPP_ENDIF || d == KM_DIR_CPP)
            continue;             /* (a conditional: not split, above) */
        if (km_omp_construct(p, len) == k) {
            *e = n;
            *e_last = directive_last(f, n);
        }
        return;
    }
}

/* A PARALLEL DO on lines n..last: its loop is the DO that follows, which
 * must end at a terminal of its own (not shared with a loop it is in). */
static void parallel_do(struct plan *P, struct unit_ctx *c, int n, int last)
{
    int i = km_statement_after(P, last);
    const struct km_unit *u = c->u;
    if (i > u->end || P->prog->info[i].unit != c->index ||
        P->prog->info[i].kind != KS_DO || P->prog->info[i].do_end < 0)
        return;
    int t = P->prog->info[i].do_end;
    int x = t - u->first;
    if (P->src->stmts[t].file != 0 || c->nend[x] < 1 ||
        c->ending[x][0] != i)
        return;
    struct omp_split *s = read_split(P, c, KM_OMP_PARALLEL_DO, n, last);
    if (!s)
        return;
    int e, e_last;
    end_directive_after(P, t, KM_OMP_END_PARALLEL_DO, &e, &e_last);
    split_construct(P, c, s, KM_OMP_PARALLEL_DO, i, t, e, e_last,
                    e ? -1 : t);
}

/* A combined construct that ends with an end directive of its own. */
static bool combined_block(enum km_omp k)
{
    return k == KM_OMP_PARALLEL_SECTIONS || k == KM_OMP_PARALLEL_WORKSHARE ||
           k == KM_OMP_PARALLEL_MASTER || k == KM_OMP_PARALLEL_MASKED;
}

/* A section block of a PARALLEL SECTIONS that ends at line `to`; the
 * first, when no SECTION directive opens it, at its first statement's
 * line (the directive's is the construct's). */
static void combined_section(struct plan *P, struct unit_ctx *c,
                             const struct omp_open *o, int to)
{
    struct region *r = section_block(P, c, o->block, o->block_last, to);
    if (r && o->block == o->line)
        r->line = P->src->stmts[P->src->stmts[r->stmt].anchor].first_line;
}

/* The end directive (lines e..e_last) of combined construct o. */
static void combined_end(struct plan *P, struct unit_ctx *c,
                         struct omp_open *o, int e, int e_last)
{
    int first = km_statement_after(P, o->last);
    int after = km_statement_after(P, e);
    if (first >= after) {
        km_warning(P->diag, P->src->files[0].path, o->line, 1, "this OpenMP "
                   "construct holds no statement and is not measured");
        km_omp_split_free(o->split);
    } else {
        if (o->kind == KM_OMP_PARALLEL_SECTIONS)
            combined_section(P, c, o, e);
        split_construct(P, c, o->split, o->kind, first, after - 1, e, e_last,
                        -1);
    }
    o->split = NULL;
}

/* OMP_MEASURED_LEVEL 1: the OpenMP constructs between the unit's first and
 * last statements (in the file kmrun was given, not include files). */
void km_omp_regions(struct plan *P, struct unit_ctx *c)
{
    if (c->lv.omp < 1 || !c->measured)
        return;
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    int from, to;
    unit_lines(P, c, &from, &to);
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
        if (k == KM_OMP_PARALLEL_DO) {
            parallel_do(P, c, n, last);
        } else if (k == KM_OMP_END_PARALLEL_DO) {
            ;                     /* found by the construct, after its loop */
        } else if (k == KM_OMP_PARALLEL_SECTIONS ||
                   k == KM_OMP_PARALLEL_WORKSHARE ||
                   k == KM_OMP_PARALLEL_MASTER ||
                   k == KM_OMP_PARALLEL_MASKED) {
            KM_GROW(open, cap, n_open + 1);
            open[n_open++] = (struct omp_open){ .kind = k, .line = n,
                .last = last, .split = read_split(P, c, k, n, last),
                .block = n, .block_last = last };
        } else if (k == KM_OMP_SECTION && top &&
                   top->kind == KM_OMP_PARALLEL_SECTIONS) {
            if (top->split)
                combined_section(P, c, top, n);
            top->block = n;
            top->block_last = last;
        } else if (top && (int)top->kind + 1 == (int)k &&
                   combined_block(top->kind)) {
            if (top->split)
                combined_end(P, c, top, n, last);
            n_open--;
        } else if (k == KM_OMP_SECTIONS) {
            KM_GROW(open, cap, n_open + 1);
            open[n_open++] = (struct omp_open){ .kind = k, .line = n, .last = last,
                                                .block = n, .block_last = last };
        } else if (k == KM_OMP_SECTION && top && top->kind == KM_OMP_SECTIONS) {
            section_block(P, c, top->block, top->block_last, n);
            top->block = n;
            top->block_last = last;
        } else if (k == KM_OMP_END_SECTIONS && top &&
                   top->kind == KM_OMP_SECTIONS) {
            section_block(P, c, top->block, top->block_last, n);
            n_open--;
            worksharing_barrier(P, c, n, last);
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
            while (n_open > 0)
                km_omp_split_free(open[--n_open].split);
        }
        n = last;
    }
    for (int k = 0; k < n_open; k++) {
        km_warning(P->diag, f->path, open[k].line, 1, "this OpenMP construct "
                   "has no end directive in its routine and is not measured");
        km_omp_split_free(open[k].split);
    }
    free(open);
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
    int from, to;
    unit_lines(P, c, &from, &to);
    char *clause = km_fmt("shared(%s)", c->h);
    int last;
    for (int n = from; (n = next_directive(P, c, n, to, &last)) > 0;
         n = last + 1) {
        int len;
        const char *p = line_text(f, n, &len);
        if (!km_directive_is_omp(p, len) || P->replaced[n].last)
            continue;             /* (a split construct shares them) */
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

static void add_raw(struct code *k, char *text)
{
    km_code_add(k, 0, 0, text);
    k->v[k->n - 1].raw = true;
}

/* Directive "!$omp words clauses" as raw lines no longer than the width:
 * continued with !$omp+ (fixed form) or '&' and !$omp& (free form),
 * broken between clauses or after a comma inside one. */
static void directive_lines(const struct plan *P, struct code *k,
                            const char *words, const char *clauses)
{
    bool fixed = km_layout_of(P->src->opts.form)->field_col > 1;
    int room = line_width(P) - (fixed ? 0 : 2);
    struct km_buf line = {0};
    km_buf_printf(&line, "!$omp %s", words);
    int depth = 0;                /* of parentheses, across atoms */
    for (const char *p = clauses; *p;) {
        bool blank = p == clauses;
        while (*p == ' ' || *p == '\t') {
            blank = true;
            p++;
        }
        if (!*p)
            break;
        const char *q = p;
        for (; *q; q++) {
            if (*q == '(')
                depth++;
            else if (*q == ')')
                depth--;
            else if (*q == ',' && depth > 0) {
                q++;
                break;
            } else if ((*q == ' ' || *q == '\t') && depth == 0)
                break;
        }
        if ((int)(line.len + blank + (size_t)(q - p)) > room && line.len > 7) {
            if (!fixed)
                km_buf_adds(&line, " &");
            km_buf_cstr(&line);
            add_raw(k, line.data);
            line = (struct km_buf){0};
            km_buf_adds(&line, fixed ? "!$omp+" : "!$omp&");
            blank = true;
        }
        if (blank)
            km_buf_addc(&line, ' ');
        km_buf_add(&line, p, (size_t)(q - p));
        p = q;
    }
    km_buf_cstr(&line);
    add_raw(k, line.data);
}

/* A split construct's code: its directive's lines replaced by the
 * parallel, KM_IN and the construct inside; its end directive's by the
 * inside's end, the barrier, KM_OUT and the parallel's end - or, a
 * parallel do without end directive, that code first after its loop. */
static void place_split(struct plan *P, struct unit_ctx *c,
                        const struct region *r)
{
    const struct omp_split *s = r->split;
    const struct region *b = &c->rg[s->barrier];
    struct line_replace *begin = &P->replaced[s->first];
    begin->last = s->last;
    directive_lines(P, &begin->code, "parallel", s->par);
    km_code_add(&begin->code, 0, 0, km_call_in(P, c, r->handle));
    directive_lines(P, &begin->code, s->inner, s->inner_clauses);
    struct code end = {0};
    bool nowait = strcmp(s->inner, "master") != 0 &&
                  strcmp(s->inner, "masked") != 0;
    char *words = km_fmt("end %s%s", s->inner, nowait ? " nowait" : "");
    directive_lines(P, &end, words, "");
    free(words);
    km_code_add(&end, 0, 0, km_call_in(P, c, b->handle));
    add_raw(&end, km_fmt("!$omp barrier"));
    km_code_add(&end, 0, 0, km_call_out(P, c, b->handle));
    km_code_add(&end, 0, 0, km_call_out(P, c, r->handle));
    add_raw(&end, km_fmt("!$omp end parallel"));
    if (s->end_first) {
        P->replaced[s->end_first].last = s->end_last;
        P->replaced[s->end_first].code = end;
        return;
    }
    /* before the loop's own KM_OUT, which is already there */
    int x = s->terminal - c->u->first;
    km_sedit_slots(P, s->terminal, c->nend[x] + 1);
    struct code *post = &km_sedit(P, s->terminal)->post[1];
    for (int j = end.n - 1; j >= 0; j--) {
        km_code_prepend(post, 0, 0, end.v[j].text);
        post->v[0].raw = end.v[j].raw;
    }
    free(end.v);
}

/* An OpenMP region's code, around its directive lines; raw: the barrier
 * made explicit. */
void km_place_omp(struct plan *P, struct unit_ctx *c, struct region *r)
{
    if (r->by_split)
        return;                   /* written with its construct's */
    if (r->split) {
        place_split(P, c, r);
        return;
    }
    struct code *in = r->in_after ? &P->line_after[r->in_line]
                                  : &P->line_before[r->in_line];
    struct code *out = r->out_after ? &P->line_after[r->out_line]
                                    : &P->line_before[r->out_line];
    km_code_add(in, 0, 0, km_call_in(P, c, r->handle));
    if (r->barrier)
        add_raw(out, km_fmt("!$omp barrier"));
    km_code_add(out, 0, 0, km_call_out(P, c, r->handle));
}

/* --- tasks ------------------------------------------------------------------ */

/* Is region r inside the statements first..last, whose directive lines
 * (an OpenMP region's place) lie between lines from and to? */
static bool region_within(const struct region *r, int first, int last,
                          int from, int to)
{
    if (r->rk == RG_OMP)
        return r->line > from && r->line < to;
    return r->stmt >= first && r->stmt <= last;
}

/* No region inside statements first..last (lines from..to) is measured. */
static void unmeasure(struct unit_ctx *c, int first, int last, int from,
                      int to)
{
    for (int k = 0; k < c->nrg; k++)
        if (region_within(&c->rg[k], first, last, from, to))
            c->rg[k].measured = false;
}

/* A taskloop directive on line p: its loop's body is left unmeasured. */
static bool is_taskloop(const char *p, int len)
{
    return km_directive_line(p, len, false) == KM_DIR_LOOP &&
           km_directive_has_word(p, len, "taskloop");
}

void km_omp_tasks(struct plan *P, struct unit_ctx *c)
{
    if (!c->measured)
        return;
    const struct km_source *src = P->src;
    const struct km_file *f = &src->files[0];
    const struct km_unit *u = c->u;
    int from, to;
    unit_lines(P, c, &from, &to);
    struct omp_open *open = NULL;
    int n_open = 0, cap = 0, last;
    for (int n = from; (n = next_directive(P, c, n, to, &last)) > 0;
         n = last + 1) {
        int len;
        const char *p = line_text(f, n, &len);
        enum km_omp k = km_omp_construct(p, len);
        if (k == KM_OMP_TASK) {
            KM_GROW(open, cap, n_open + 1);
            open[n_open++] = (struct omp_open){ .kind = k, .line = n,
                .last = last, .untied = untied(f, n, last) };
        } else if (k == KM_OMP_END_TASK && n_open > 0) {
            const struct omp_open *o = &open[--n_open];
            int first = km_statement_after(P, o->last);
            int inside = km_statement_after(P, n) - 1;
            if (o->untied) {
                unmeasure(c, first, inside, o->last, n);
                continue;
            }
            KM_GROW(c->tasks, c->taskcap, c->ntasks + 1);
            c->tasks[c->ntasks++] = (struct task_body){ o->last, n, first,
                                                        inside };
        } else if (is_taskloop(p, len)) {
            int i = km_statement_after(P, last);
            if (i <= u->end && P->prog->info[i].kind == KS_DO &&
                P->prog->info[i].do_end >= 0) {
                int t = P->prog->info[i].do_end;
                unmeasure(c, i + 1, t, src->stmts[i].first_line,
                          src->stmts[t].last_line + 1);
            }
        }
    }
    free(open);
}

void km_omp_place_tasks(struct plan *P, struct unit_ctx *c)
{
    for (int t = 0; t < c->ntasks; t++) {
        const struct task_body *b = &c->tasks[t];
        bool measured = false;
        for (int k = 0; k < c->nrg && !measured; k++)
            measured = c->rg[k].measured &&
                       region_within(&c->rg[k], b->first, b->last,
                                     b->dir_last - 1, b->end_line + 1);
        if (!measured)
            continue;
        km_code_prepend(&P->line_after[b->dir_last], 0, 0,
                        km_fmt("CALL %sIN(-%s)", P->set->prefix, c->hexpr));
        km_code_add(&P->line_before[b->end_line], 0, 0,
                    km_fmt("CALL %sOUT(-%s)", P->set->prefix, c->hexpr));
    }
}
