/*
 * regions.c — the structure of a unit and the regions measured in it.
 *
 * Structure: a tree of constructs (DO loops, branches of block IFs) and,
 * for every statement, the construct just before it, its own, and the one
 * after it — after a DO terminal there are several, one per loop that has
 * completed (a terminal shared by k loops is followed by k+1 places).
 * A !KM_measure region must begin and end in the same construct, which is
 * what keeps every region properly nested with the loops and the others.
 *
 * Regions: user regions from the !KM_measure / !KM_redundant lines, DO
 * loops up to DOLOOP_MEASURED_LEVEL, CALL / CALL MPI_xxx / I/O statements
 * by their levels.  Then their code: KM_IN before, KM_OUT after, in the
 * slots of struct sedit, so that an inner region always closes first.
 *
 * Must never decide anything about jumps (jumps.c) or write text (copy.c).
 */
#include "rewriter/plan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lexer/classify.h"
#include "lexer/directive.h"
#include "rewriter/emit.h"
#include "runtime/km_abi.h"


/* --- structure ------------------------------------------------------------- */

static int new_node(struct unit_ctx *c, int stmt, int parent)
{
    KM_GROW(c->nodes, c->nodecap, c->nnodes + 1);
    c->nodes[c->nnodes].stmt = stmt;
    c->nodes[c->nnodes].parent = parent;
    return c->nnodes++;
}

static bool is_branch(const struct plan *P, const struct unit_ctx *c, int node)
{
    int s = c->nodes[node].stmt;
    if (s < 0)
        return false;
    int k = P->prog->info[s].kind;
    return k == KS_IF_BLOCK || k == KS_ELSEIF || k == KS_ELSE ||
           km_opens_construct(k) || km_branches_construct(k);
}

static bool is_loop_ending(const struct plan *P, const struct unit_ctx *c,
                           int node, int stmt)
{
    int s = c->nodes[node].stmt;
    return s >= 0 && !is_branch(P, c, node) && P->prog->info[s].do_end == stmt;
}

void km_unit_structure(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    int n = u->end - u->first + 1;
    c->before = km_xcalloc((size_t)n, sizeof *c->before);
    c->ctx = km_xcalloc((size_t)n, sizeof *c->ctx);
    c->nend = km_xcalloc((size_t)n, sizeof *c->nend);
    c->after = km_xcalloc((size_t)n, sizeof *c->after);
    c->ending = km_xcalloc((size_t)n, sizeof *c->ending);
    int cur = new_node(c, -1, -1);
    for (int i = u->first; i <= u->end; i++) {
        int x = i - u->first;
        const struct km_sinfo *in = &P->prog->info[i];
        c->before[x] = cur;
        if (in->unit != c->index) {
            c->ctx[x] = cur;
            continue;
        }
        int k = in->kind;
        if ((k == KS_ELSEIF || k == KS_ELSE || k == KS_ENDIF ||
             km_branches_construct(k) || km_closes_construct(k)) &&
            is_branch(P, c, cur))
            cur = c->nodes[cur].parent;
        c->ctx[x] = cur;
        if (k == KS_IF_BLOCK || k == KS_ELSEIF || k == KS_ELSE ||
            km_opens_construct(k) || km_branches_construct(k))
            cur = new_node(c, i, cur);
        if ((k == KS_DO || k == KS_DO_WHILE) && in->do_end >= 0)
            cur = new_node(c, i, cur);
        int nend = 0;
        for (int t = cur; t > 0 && is_loop_ending(P, c, t, i);
             t = c->nodes[t].parent)
            nend++;
        c->nend[x] = nend;
        c->after[x] = km_xmalloc(sizeof(int) * (size_t)(nend + 1));
        c->after[x][0] = cur;
        if (nend > 0) {
            c->ending[x] = km_xmalloc(sizeof(int) * (size_t)nend);
            if (k == KS_ENDDO)
                c->after[x][0] = -1;     /* nothing runs after END DO
                                            inside its loop */
            for (int m = 1; m <= nend; m++) {
                c->ending[x][m - 1] = c->nodes[cur].stmt;
                cur = c->nodes[cur].parent;
                c->after[x][m] = cur;
            }
        }
    }
}

void km_unit_structure_free(struct unit_ctx *c)
{
    if (!c->before)
        return;
    int n = c->u->end - c->u->first + 1;
    for (int x = 0; x < n; x++) {
        free(c->after[x]);
        free(c->ending[x]);
    }
    free(c->after);
    free(c->ending);
    free(c->nend);
    free(c->before);
    free(c->ctx);
    free(c->nodes);
    c->before = c->ctx = c->nend = NULL;
    c->after = c->ending = NULL;
    c->nodes = NULL;
    c->nnodes = c->nodecap = 0;
}

/* --- the !KM_ lines ---------------------------------------------------------- */

static bool word_at(const char *p, const char *end, const char *w, int *len)
{
    int n = (int)strlen(w);
    if (end - p < n || strncasecmp(p, w, (size_t)n) != 0)
        return false;
    if (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '_'))
        return false;
    *len = n;
    return true;
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* Line p..end as a report shows it (malloc'd): up to its line end, runs
 * of blanks collapsed, no trailing blank nor any character of `trim`. */
char *km_collapsed(const char *p, const char *end, const char *trim)
{
    struct km_buf t = {0};
    for (const char *r = p; r < end; r++) {
        char ch = *r == '\t' ? ' ' : *r;
        if (ch == '\r' || ch == '\n')
            break;
        if (ch == ' ' && (t.len == 0 || t.data[t.len - 1] == ' '))
            continue;
        km_buf_addc(&t, ch);
    }
    while (t.len > 0 && strchr(trim, t.data[t.len - 1]))
        t.len--;
    km_buf_cstr(&t);
    return t.data;
}

/* 1: a marker (filled in); 0: not one; -1: a !KM_measure or
 * !KM_redundant line that says neither start nor end. */
static int read_marker(const char *p, const char *end, bool indented,
                       struct marker *m)
{
    int n;
    const char *q = indented ? skip_blanks(p, end) : p;
    if (q < end && *q == '!')
        q++;
    else
        return 0;
    if (word_at(q, end, "KM_MEASURE", &n))
        m->redundant = false;
    else if (word_at(q, end, "KM_REDUNDANT", &n))
        m->redundant = true;
    else
        return 0;
    q = skip_blanks(q + n, end);
    if (word_at(q, end, "START", &n))
        m->start = true;
    else if (word_at(q, end, "END", &n))
        m->start = false;
    else
        return -1;
    m->text = km_collapsed(p, end, " ");
    return 1;
}

/* The first statement placed after physical line `line` of file 0. */
int km_statement_after(const struct plan *P, int line)
{
    const struct km_source *src = P->src;
    int lo = 0, hi = src->nstmts;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const struct km_stmt *a = &src->stmts[src->stmts[mid].anchor];
        if (a->first_line > line)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void marker_error(struct plan *P, int line, const char *msg)
{
    km_error(P->diag, P->src->files[0].path, line, 1, "%s", msg);
    P->ok = false;
}

void km_find_markers(struct plan *P)
{
    const struct km_file *f = &P->src->files[0];
    const struct km_layout *lay = km_layout_of(P->src->opts.form);
    for (int n = 1; n <= f->nlines; n++) {
        const char *p = f->text + f->line_start[n - 1];
        const char *end = n < f->nlines ? f->text + f->line_start[n]
                                        : f->text + f->size;
        struct marker m = {0};
        int r = read_marker(p, end, lay->indented_comments, &m);
        if (r == 0)
            continue;
        if (r < 0) {
            marker_error(P, n, "expected 'start' or 'end' after "
                         "!KM_measure or !KM_redundant");
            continue;
        }
        m.line = n;
        m.after = km_statement_after(P, n);
        int before = m.after - 1;
        const struct km_stmt *b = before >= 0 ?
            &P->src->stmts[P->src->stmts[before].anchor] : NULL;
        if (b && b->last_line >= n) {
            marker_error(P, n, "a !KM_ line between the lines of a continued "
                         "statement; put it before or after the statement");
            free(m.text);
            continue;
        }
        int ua = before >= 0 ? P->prog->info[before].unit : -1;
        int ub = m.after < P->src->nstmts ? P->prog->info[m.after].unit : -1;
        bool between = ua >= 0 && P->prog->units[ua].end == before;
        if (ub < 0 || between) {
            marker_error(P, n, "a !KM_ line outside any program unit");
            free(m.text);
            continue;
        }
        m.unit = ub;
        KM_GROW(P->markers, P->markercap, P->nmarkers + 1);
        P->markers[P->nmarkers++] = m;
    }
}

void km_markers_free(struct plan *P)
{
    for (int k = 0; k < P->nmarkers; k++)
        free(P->markers[k].text);
    free(P->markers);
    P->markers = NULL;
    P->nmarkers = P->markercap = 0;
}

bool km_user_routine(const struct plan *P, const char *name)
{
    for (int k = 0; k < P->ndefined; k++)
        if (strcmp(P->defined[k], name) == 0)
            return true;
    for (int u = 0; u < P->prog->nunits; u++) {
        const struct km_unit *un = &P->prog->units[u];
        if (strcmp(un->name, name) == 0)
            return true;
        for (int k = 0; k < un->nentries; k++)
            if (strcmp(P->prog->info[un->entries[k]].name, name) == 0)
                return true;
    }
    return false;
}

/* --- choosing regions ---------------------------------------------------------- */

struct region *km_add_region(struct unit_ctx *c, int rk, int kind,
                             int stmt)
{
    KM_GROW(c->rg, c->rgcap, c->nrg + 1);
    struct region *r = &c->rg[c->nrg++];
    memset(r, 0, sizeof *r);
    r->rk = rk;
    r->kind = kind;
    r->stmt = stmt;
    r->first = r->last = stmt;
    r->measured = true;
    r->handle = 0;
    return r;
}

static int x_of(const struct unit_ctx *c, int i)
{
    return i - c->u->first;
}

/* The place after statement a, in the construct `want`: the slot, or -1. */
static int slot_for(const struct unit_ctx *c, int a, int want)
{
    int x = x_of(c, a);
    for (int m = 0; m <= c->nend[x]; m++)
        if (c->after[x][m] == want)
            return m;
    return -1;
}

static bool contains_entry(const struct plan *P, int first, int last)
{
    for (int i = first; i <= last; i++)
        if (P->prog->info[i].kind == KS_ENTRY)
            return true;
    return false;
}

/* A matched pair of lines: the region between them. */
static void user_region(struct plan *P, struct unit_ctx *c,
                        const struct marker *s, const struct marker *e,
                        int rank)
{
    const struct km_unit *u = c->u;
    int first = s->after;
    if (first < u->first_exec)
        first = u->first_exec;
    int last = e->after - 1;
    if (first > last || first >= u->end) {
        km_warning(P->diag, P->src->files[0].path, s->line, 1,
                   "this region holds no executable statement and is not "
                   "measured");
        return;
    }
    int want = c->before[x_of(c, first)];
    int slot = slot_for(c, last, want);
    if (slot < 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "this end of region is not in the DO loop "
                 "or IF block where its start (line %d) is", s->line);
        marker_error(P, e->line, msg);
        return;
    }
    if (contains_entry(P, first, last)) {
        marker_error(P, s->line, "a measured region cannot hold an ENTRY "
                     "statement");
        return;
    }
    if (P->src->stmts[last].file != 0 && c->nend[x_of(c, last)] > 0) {
        marker_error(P, e->line, "a region cannot end after a DO terminal "
                     "inside an include file");
        return;
    }
    struct region *r = km_add_region(c, RG_USER, KM_K_USER, first);
    r->last = last;
    r->end_slot = slot;
    r->rank = rank;
    r->line = s->line;
    r->text = km_xstrdup(s->text);
    r->flags = s->redundant ? KM_F_REDUNDANT : 0;
    if (!c->measured) {
        km_warning(P->diag, P->src->files[0].path, s->line, 1,
                   "routine %s is not measured (ROUTINE_MEASURED_LEVEL 0 or "
                   "IGNORED_ROUTINES), so neither is this region", u->name);
        r->measured = false;
    }
}

static void user_regions(struct plan *P, struct unit_ctx *c)
{
    const struct marker **stack = NULL;
    int n = 0, cap = 0, rank = 0;
    for (int k = 0; k < P->nmarkers; k++) {
        const struct marker *m = &P->markers[k];
        if (m->unit != c->index)
            continue;
        if (m->start) {
            KM_GROW(stack, cap, n + 1);
            stack[n++] = m;
            continue;
        }
        if (n == 0) {
            marker_error(P, m->line, m->redundant ?
                         "!KM_redundant end without a !KM_redundant start" :
                         "!KM_measure end without a !KM_measure start");
            continue;
        }
        const struct marker *s = stack[--n];
        if (s->redundant != m->redundant) {
            char msg[200];
            snprintf(msg, sizeof msg, "%s closes the %s of line %d",
                     m->redundant ? "!KM_redundant end" : "!KM_measure end",
                     s->redundant ? "!KM_redundant start" :
                     "!KM_measure start", s->line);
            marker_error(P, m->line, msg);
            continue;
        }
        user_region(P, c, s, m, rank++);
    }
    for (int k = 0; k < n; k++)
        marker_error(P, stack[k]->line, stack[k]->redundant ?
                     "!KM_redundant start without a !KM_redundant end in "
                     "its program unit" :
                     "!KM_measure start without a !KM_measure end in its "
                     "program unit");
    free(stack);
}

static int loop_depth(const struct plan *P, int i)
{
    int d = P->prog->info[i].do_parent;
    return d >= 0 ? P->prog->info[d].do_depth : 0;
}

/* CALL_ / MPI_ / IO_MEASURED_LEVEL `level` at nesting depth `depth`. */
static bool level_measures(int level, int depth, int doloop)
{
    return level == 2 || (level == 1 && (doloop == 0 || depth < doloop));
}

static void not_editable(struct plan *P, int i, const char *what)
{
    const struct km_stmt *s = &P->src->stmts[i];
    if (s->file != 0)
        km_warn(P, i, "%s inside an include file is not measured", what);
    else
        km_warn(P, i, "%s is on an OpenMP conditional line (!$) and is not "
                "measured", what);
}

/* How many loops the directives right above DO statement i collapse
 * into one (!$omp do collapse(2), !$acc loop collapse(3) ...): 1 if
 * none. */
static int collapsed_loops(const struct plan *P, int i)
{
    const struct km_source *src = P->src;
    const struct km_stmt *s = &src->stmts[i];
    if (i == 0 || s->file != 0)
        return 1;
    const struct km_file *f = &src->files[0];
    int from = src->stmts[src->stmts[i - 1].anchor].last_line + 1;
    int n = 1;
    enum km_directive open = KM_DIR_NONE;
    bool continues = false;
    for (int line = from; line < s->first_line; line++) {
        int a = f->line_start[line - 1];
        int b = line < f->nlines ? f->line_start[line] : (int)f->size;
        const char *p = f->text + a;
        enum km_directive d = km_directive_line(p, b - a, continues);
        if (d == KM_DIR_CONTINUATION)
            d = open;
        else if (d != KM_DIR_NONE)
            open = d;
        continues = d != KM_DIR_NONE && km_directive_continues(p, b - a);
        int c = d == KM_DIR_LOOP ? km_directive_collapse(p, b - a) : 0;
        if (c > n)
            n = c;
    }
    return n;
}

/* The loops inside a collapsed loop nest: no code may come between them,
 * so they are not measured (the nest is, as its outermost loop). */
static bool *collapsed_inner_loops(const struct plan *P,
                                   const struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    bool *inner = km_xcalloc((size_t)P->src->nstmts + 1, sizeof *inner);
    for (int i = u->first; i <= u->end; i++) {
        int k = P->prog->info[i].kind;
        if (k != KS_DO && k != KS_DO_WHILE)
            continue;
        int n = collapsed_loops(P, i);
        for (int j = i + 1; n > 1 && j <= u->end; j++, n--) {
            k = P->prog->info[j].kind;
            if (k != KS_DO && k != KS_DO_WHILE)
                break;
            inner[j] = true;
        }
    }
    return inner;
}

static void loop_regions(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    bool *collapsed = collapsed_inner_loops(P, c);
    for (int i = u->first; i <= u->end; i++) {
        const struct km_sinfo *in = &P->prog->info[i];
        if (in->unit != c->index || (in->kind != KS_DO &&
                                     in->kind != KS_DO_WHILE) ||
            in->do_end < 0 || in->do_depth > c->lv.doloop ||
            in->in_concurrent || collapsed[i])
            continue;
        if (!km_editable(P, i) || !km_editable(P, in->do_end)) {
            not_editable(P, km_editable(P, i) ? in->do_end : i, "this DO loop");
            continue;
        }
        struct region *r = km_add_region(c, RG_LOOP, KM_K_DO, i);
        r->first = i + 1;
        r->last = in->do_end;
        r->rank = KM_RANK_LOOP;
        r->line = km_user_line(P->src, P->src->stmts[i].file,
                               P->src->stmts[i].first_line, NULL);
        r->text = km_stmt_text(P, i, -1, true);
    }
    free(collapsed);
}

/* Is statement i a CALL of an MPI routine (not one of the user's, nor an
 * IGNORED one), and which? */
static const char *mpi_call(struct plan *P, int i)
{
    if (km_effective_kind(P, i) != KS_CALL)
        return NULL;
    const char *name = P->prog->info[i].name;
    if (!name || km_is_ignored(P->set, name) || km_user_routine(P, name))
        return NULL;
    return strncmp(name, "MPI_", 4) == 0 || strncmp(name, "PMPI_", 5) == 0
               ? name : NULL;
}

/* The location kind of statement i, or 0 if the levels leave it out. */
static int location_kind(struct plan *P, struct unit_ctx *c, int i)
{
    int k = km_effective_kind(P, i);
    int depth = loop_depth(P, i);
    if (P->prog->info[i].in_concurrent)
        return 0;         /* no impure call may go there */
    if (km_is_io_kind(k))
        return level_measures(c->lv.io, depth, c->lv.doloop) ? KM_K_IO : 0;
    if (k != KS_CALL)
        return 0;
    const char *name = P->prog->info[i].name;
    if (!name || km_is_ignored(P->set, name))
        return 0;
    bool user = km_user_routine(P, name);
    /* CALL EXIT, ABORT and MPI_ABORT end the program and MPI_FINALIZE is
     * where the results are written: there is no "after" to time them
     * to. */
    if (!user && (strcmp(name, "EXIT") == 0 || strcmp(name, "ABORT") == 0 ||
                  strcmp(name, "MPI_FINALIZE") == 0 ||
                  strcmp(name, "MPI_ABORT") == 0))
        return 0;
    if (mpi_call(P, i))
        return level_measures(c->lv.mpi, depth, c->lv.doloop) ? KM_K_MPI : 0;
    return level_measures(c->lv.call, depth, c->lv.doloop) ? KM_K_CALL : 0;
}

/* Does the unit call MPI where no region measures it (MPI_FINALIZE and
 * MPI_ABORT, which are never measured, aside)?  Its rank's MPI time would then miss that
 * time, and the prediction would count it as parallel work. */
static bool has_unmeasured_mpi(struct plan *P, const struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    for (int i = u->first_exec; i <= u->end; i++) {
        if (P->prog->info[i].unit != c->index)
            continue;
        const char *name = mpi_call(P, i);
        if (name && strcmp(name, "MPI_FINALIZE") != 0 &&
            strcmp(name, "MPI_ABORT") != 0 &&
            km_location_of(c, i) < 0)
            return true;
    }
    return false;
}

static void location_regions(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    for (int i = u->first_exec; i <= u->end; i++) {
        if (P->prog->info[i].unit != c->index)
            continue;
        int kind = location_kind(P, c, i);
        if (!kind)
            continue;
        if (!km_editable(P, i)) {
            not_editable(P, i, "this statement");
            continue;
        }
        struct region *r = km_add_region(c, RG_LOC, kind, i);
        r->rank = KM_RANK_LOC;
        r->line = km_user_line(P->src, P->src->stmts[i].file,
                               P->src->stmts[i].first_line, NULL);
        r->text = km_stmt_text(P, i, -1, true);
    }
}

void km_choose_regions(struct plan *P, struct unit_ctx *c)
{
    user_regions(P, c);
    km_omp_regions(P, c);
    if (c->locations) {
        loop_regions(P, c);
        location_regions(P, c);
    }
    km_omp_tasks(P, c);
    c->mpi_unmeasured = has_unmeasured_mpi(P, c);
}

void km_regions_free(struct unit_ctx *c)
{
    for (int k = 0; k < c->nrg; k++) {
        free(c->rg[k].text);
        km_omp_split_free(c->rg[k].split);
    }
    free(c->rg);
    c->rg = NULL;
    c->nrg = c->rgcap = 0;
    free(c->tasks);
    c->tasks = NULL;
    c->ntasks = c->taskcap = 0;
}

/* --- nesting -------------------------------------------------------------------- */

bool km_region_contains(const struct region *r, int s)
{
    return s >= r->first && s <= r->last;
}

bool km_region_outer(const struct region *a, const struct region *b)
{
    if (a->stmt != b->stmt)
        return a->stmt < b->stmt;
    return a->rank < b->rank;
}

int km_location_of(const struct unit_ctx *c, int s)
{
    for (int k = 0; k < c->nrg; k++)
        if (c->rg[k].rk == RG_LOC && c->rg[k].stmt == s &&
            c->rg[k].measured)
            return k;
    return -1;
}

/* --- code ------------------------------------------------------------------------ */

char *km_call_in(const struct plan *P, const struct unit_ctx *c, int h)
{
    return km_fmt("CALL %sIN(%s(%d))", P->set->prefix, c->h, h);
}

char *km_call_out(const struct plan *P, const struct unit_ctx *c, int h)
{
    return km_fmt("CALL %sOUT(%s(%d))", P->set->prefix, c->h, h);
}

static int by_position(const void *pa, const void *pb)
{
    const struct region *a = *(const struct region *const *)pa;
    const struct region *b = *(const struct region *const *)pb;
    if (km_region_outer(a, b))
        return -1;
    return km_region_outer(b, a) ? 1 : 0;
}

/* Measured regions in source order (outer first where they share a
 * statement); NULL-free array of *n. */
static struct region **in_order(struct unit_ctx *c, int *n)
{
    struct region **v = km_xmalloc(sizeof *v * (size_t)(c->nrg + 1));
    *n = 0;
    for (int k = 0; k < c->nrg; k++)
        if (c->rg[k].measured)
            v[(*n)++] = &c->rg[k];
    qsort(v, (size_t)*n, sizeof *v, by_position);
    return v;
}

/* The slot of terminal T that follows the completion of loop `d`. */
static int loop_slot(const struct unit_ctx *c, int T, int d)
{
    int x = x_of(c, T);
    for (int m = 1; m <= c->nend[x]; m++)
        if (c->ending[x][m - 1] == d)
            return m;
    return c->nend[x];
}

void km_place_regions(struct plan *P, struct unit_ctx *c)
{
    int n;
    struct region **v = in_order(c, &n);
    int base = 2 + c->u->nentries;
    for (int k = 0; k < n; k++)
        v[k]->handle = base + k;
    c->nhandles = base - 1 + n;
    /* KM_IN: outer regions first, so user regions in marker order. */
    for (int k = 0; k < n; k++) {
        struct region *r = v[k];
        int h = r->handle;
        if (r->rk == RG_OMP) {
            continue;             /* by line, below */
        } else if (r->rk == RG_USER) {
            km_code_add(&km_sedit(P, r->first)->open, 0, 0, km_call_in(P, c, h));
        } else if (r->rk == RG_LOOP) {
            km_code_add(&km_sedit(P, r->stmt)->main, 0, 0, km_call_in(P, c, h));
        } else {
            km_code_add(km_code_before(P, r->stmt), 0, 0,
                        km_call_in(P, c, h));
        }
    }
    /* KM_OUT: loops and locations first in their slot (they are the
     * innermost there), user regions after, in the order of their ends. */
    for (int k = 0; k < c->nrg; k++) {
        struct region *r = &c->rg[k];
        if (!r->measured)
            continue;
        int h = r->handle;
        if (r->rk == RG_LOOP) {
            int m = loop_slot(c, r->last, r->stmt);
            km_sedit_slots(P, r->last, c->nend[x_of(c, r->last)] + 1);
            km_code_prepend(&km_sedit(P, r->last)->post[m], 0, 0,
                            km_call_out(P, c, h));
        } else if (r->rk == RG_LOC) {
            km_code_prepend(km_code_after(P, r->stmt), 0, 0,
                            km_call_out(P, c, h));
        }
    }
    for (int k = 0; k < c->nrg; k++)
        if (c->rg[k].measured && c->rg[k].rk == RG_OMP)
            km_place_omp(P, c, &c->rg[k]);
    for (int k = 0; k < c->nrg; k++)
        if (c->rg[k].measured) {
            km_place_messages(P, c, &c->rg[k]);
            km_place_mpiio(P, c, &c->rg[k]);
            km_place_files(P, c, &c->rg[k]);
        }
    for (int k = 0; k < c->nrg; k++) {
        struct region *r = &c->rg[k];
        if (!r->measured || r->rk != RG_USER)
            continue;
        int a = r->last;
        if (P->src->stmts[a].file != 0)
            a = P->src->stmts[a].anchor;
        km_sedit_slots(P, a, r->end_slot + 1);
        km_code_add(&km_sedit(P, a)->post[r->end_slot], 0, 0,
                    km_call_out(P, c, r->handle));
    }
    km_omp_place_tasks(P, c);
    free(v);
}

void km_register_regions(struct plan *P, struct unit_ctx *c,
                         struct code *out, int indent, int routine)
{
    int n;
    struct region **v = in_order(c, &n);
    /* TRACE_FILE_NUMBER > 0 traces every measured region, as
     * KM_TRACE_FILE_NUMBER does at run time, not the routines alone */
    int trace = P->set->trace > 0 ? KM_F_TRACE : 0;
    for (int k = 0; k < n; k++) {
        struct region *r = v[k];
        char *desc = km_fmt("%d %d %ld %d %s", r->kind, r->line,
                            P->set->threshold, r->flags | trace, r->text);
        struct km_buf b = {0};
        km_buf_printf(&b, "CALL %sREG(%s(%d), %s(%d), ", P->set->prefix, c->h,
                      r->handle, c->h, routine);
        km_fortran_cstring(&b, desc);
        km_buf_addc(&b, ')');
        free(desc);
        km_code_add(out, 0, indent, b.data);
    }
    free(v);
}
