/*
 * paths.c — `kmview paths`: where the time went, call path by call path.
 *
 * Owns merging calling-context trees (the Paths block, KM_output 6) by
 * path identity — the sequence of regions from outside every region, so
 * that ranks whose trees list their paths in different orders, or lack
 * some of them, line up — and the three ways the merged tree is written:
 * an indented table (gprof's call graph, Cube's tree), folded stacks
 * (flamegraph.pl, inferno, speedscope; every region a frame, or with
 * --value=net routines only, the tree folded onto its stacks of
 * routines) and speedscope's JSON file format.
 * A single rank's tree goes through the same merge (one rank), so that a
 * path the file lists twice shows once.
 *
 * It also hands the merged tree to the commands that compare paths
 * (kv_paths_merge: diff's paths, ranks --paths).
 *
 * Trees are walked with stacks of their own, never by recursion (a chain
 * of 20,000 paths overflowed the C stack), in time and memory linear in
 * the paths; what is as long as a path is deep (a folded line, a
 * speedscope sample, an indentation) stops at KV_PATHS_DEPTH levels, the
 * paths below summed under a frame or in a line that says so.
 *
 * Must never: read files, or open outputs (main.c hands it streams).
 */
#include "config.h"

#include "kmview/views/paths.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "support/buf.h"

/* A path of the merged tree.  Node 0 is the root, outside every region;
 * every other node is its parent's path and one more region. */
struct pnode {
    int parent;              /* node index; -1 for the root */
    int routine, location;   /* as struct kv_path has them */
    double incl, excl, mpi;  /* sums over the ranks merged: inclusive
                                time, own time (in no path below: see
                                finish_tree), and the own time of the MPI
                                calls at or below the path */
    double net;              /* the file's Net(s), summed over the ranks */
    double est_w;            /* the ranks' elapsed x Est(%), summed */
    double min, max;         /* of one rank's inclusive time */
    double cur;              /* the rank being merged: its inclusive time */
    int stamp;               /* ordinal of the rank cur belongs to; its
                                negative once folded into min and max */
    int ranks;               /* ranks that have the path */
    uint64_t count;
    bool extrap;
    unsigned est;            /* KV_EST(KV_M_ELAPSED | KV_M_NET | KV_M_MPI) */
    unsigned file_est;       /* the ranks' own marks, before finish_tree
                                adds those of the paths below */
    bool rfold;              /* a rank's path holds deeper recursion of its
                                region (Fold r) */
    size_t first, nchild;    /* its children: t->child[first ...] */
    size_t below;            /* paths below it */
};

struct kv_ptree {
    const struct kv_run *run;
    struct pnode *n;
    size_t nn, capn;
    size_t *child;           /* every node's children, sorted, by parent */
    size_t *slot;            /* (parent, region) -> node index + 1 */
    size_t cap;              /* slots: a power of two, at most half full */
    int nranks;              /* ranks merged */
    int rank;                /* the rank, when one was merged */
    double total;            /* sum of their total times */
    bool total_est;
};

static size_t region_hash(size_t parent, int routine, int location)
{
    uint64_t h = (uint64_t)parent * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)(uint32_t)routine << 32 | (uint32_t)location) +
         0xbf58476d1ce4e5b9ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    return (size_t)(h ^ h >> 29);
}

static size_t add_node(struct kv_ptree *t, int parent, int routine,
                       int location)
{
    KM_GROW(t->n, t->capn, t->nn + 1);
    struct pnode *n = &t->n[t->nn];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->routine = routine;
    n->location = location;
    n->min = INFINITY;
    return t->nn++;
}

/* Twice the slots, every node but the root placed again. */
static void rehash(struct kv_ptree *t)
{
    free(t->slot);
    t->cap = t->cap ? 2 * t->cap : 1024;
    t->slot = km_xcalloc(t->cap, sizeof *t->slot);
    for (size_t k = 1; k < t->nn; k++) {
        const struct pnode *n = &t->n[k];
        size_t h = region_hash((size_t)n->parent, n->routine, n->location);
        while (t->slot[h & (t->cap - 1)])
            h++;
        t->slot[h & (t->cap - 1)] = k + 1;
    }
}

/* The child of `parent` that ends in the region, added if new. */
static size_t child_of(struct kv_ptree *t, size_t parent, int routine,
                       int location)
{
    if (2 * (t->nn + 1) > t->cap)
        rehash(t);
    size_t mask = t->cap - 1;
    for (size_t h = region_hash(parent, routine, location);; h++) {
        size_t s = t->slot[h & mask];
        if (!s) {
            size_t k = add_node(t, (int)parent, routine, location);
            t->slot[h & mask] = k + 1;
            return k;
        }
        const struct pnode *n = &t->n[s - 1];
        if (n->parent == (int)parent && n->routine == routine &&
            n->location == location)
            return s - 1;
    }
}

static bool is_mpi(const struct kv_run *run, int location)
{
    return location >= 0 && run->locations[location].kind == KV_MPI;
}

/* Add a rank's inclusive time to node n (the rank's `ordinal`). */
static void add_incl(struct pnode *n, double elapsed, unsigned est,
                     int ordinal)
{
    if (n->stamp != ordinal) {
        n->stamp = ordinal;
        n->cur = 0;
        n->ranks++;
    }
    n->cur += elapsed;
    n->incl += elapsed;
    n->est |= est & KV_EST(KV_M_ELAPSED);
}

/* The node of path p under node `parent`, added if new.  A path folded at
 * KM_PATHS_MAX (Fold m) stands for deeper paths its parent did not call
 * directly: it goes under a frame of its own, [folded at KM_PATHS_MAX],
 * under the parent (a path apart from the parent's own child of that
 * region, which may be there too), which holds the time of all such
 * paths of the parent (`ordinal`: the rank's, for its inclusive time). */
static size_t path_node(struct kv_ptree *t, size_t parent,
                        const struct kv_path *p, int ordinal)
{
    if (p->fold == KV_FOLD_MAX) {
        parent = child_of(t, parent, KV_FOLDED, -1);
        if (ordinal)
            add_incl(&t->n[parent], p->elapsed, p->est, ordinal);
    }
    return child_of(t, parent, p->routine, p->location);
}

/* Add one rank's tree (its `ordinal`, from 1) to the merged tree. */
static void merge_tree(struct kv_ptree *t, const struct kv_tree *tree,
                       int ordinal)
{
    size_t *node_of = km_xmalloc((tree->npaths ? tree->npaths : 1) *
                                 sizeof *node_of);
    for (size_t i = 0; i < tree->npaths; i++) {
        const struct kv_path *p = &tree->paths[i];
        size_t parent = p->parent < 0 ? 0 : node_of[p->parent];
        size_t k = path_node(t, parent, p, ordinal);
        node_of[i] = k;
        struct pnode *n = &t->n[k];
        add_incl(n, p->elapsed, 0, ordinal);
        n->rfold |= p->fold == KV_FOLD_RECURSION;
        n->count += p->count;
        n->net += p->net;
        n->est_w += p->elapsed * p->est_pct;
        n->extrap |= p->extrap;
        n->est |= p->est;
        n->file_est |= p->est;
        if (is_mpi(t->run, p->location)) {
            n->mpi += p->net;
            if (p->est & KV_EST(KV_M_NET))
                n->est |= KV_EST(KV_M_MPI);
        }
    }
    /* min and max over ranks of the rank's whole inclusive time, once per
     * path even where the file lists it twice */
    for (size_t i = 0; i < tree->npaths; i++)
        for (int up = 0; up < 2; up++) {   /* and a frame of folded paths */
            size_t k = node_of[i];
            if (up && (tree->paths[i].fold != KV_FOLD_MAX ||
                       (k = (size_t)t->n[k].parent) == 0))
                continue;
            struct pnode *n = &t->n[k];
            if (n->stamp != ordinal)
                continue;
            n->stamp = -ordinal;
            if (n->cur < n->min)
                n->min = n->cur;
            if (n->cur > n->max)
                n->max = n->cur;
        }
    free(node_of);
}

static const struct kv_tree *tree_of(const struct kv_rank *r, int thread)
{
    for (size_t i = 0; i < r->ntrees; i++)
        if (r->trees[i].thread == thread)
            return &r->trees[i];
    return NULL;
}

/* The lowest rank with a tree of `thread`, or -1. */
static int first_rank(const struct kv_run *run, int thread)
{
    for (size_t s = 0; s < run->nsections; s++)
        if (!run->ranks[s].lost && tree_of(&run->ranks[s], thread))
            return run->ranks[s].rank;
    return -1;
}

struct child_key {
    double incl;
    int routine, location;
    size_t node;
};

/* Inclusive time descending; ties in the run's order of the regions, so
 * that the output never depends on the order the file lists paths in. */
static int by_incl(const void *a, const void *b)
{
    const struct child_key *x = a, *y = b;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    if (x->routine != y->routine)
        return x->routine < y->routine ? -1 : 1;
    if (x->location != y->location)
        return x->location < y->location ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Figures that need the whole tree: a rank without a path had 0 of it;
 * MPI time and the count of paths below add up towards the root; a
 * path's own time is its inclusive time less its children's.  (The
 * file's Net of a routine also holds the own time of its loops, I/O
 * statements and user regions, which are paths below it: summed over a
 * tree, as flame graphs sum it, that would count them twice.  For every
 * other path the two are the same.)  Last, every node's children in
 * order. */
static void finish_tree(struct kv_ptree *t)
{
    for (size_t k = 1; k < t->nn; k++) {
        struct pnode *n = &t->n[k];
        if (n->ranks < t->nranks)
            n->min = 0;
        n->excl = n->incl;
        if (n->est & KV_EST(KV_M_ELAPSED))
            n->est |= KV_EST(KV_M_NET);
    }
    for (size_t k = t->nn; k-- > 1;) {       /* children after parents */
        struct pnode *n = &t->n[k], *p = &t->n[n->parent];
        p->excl -= n->incl;
        if (n->est & KV_EST(KV_M_ELAPSED))
            p->est |= KV_EST(KV_M_NET);
        p->mpi += n->mpi;
        p->est |= n->est & KV_EST(KV_M_MPI);
        p->below += n->below + 1;
        p->nchild++;
    }
    for (size_t k = 1; k < t->nn; k++)       /* printed figures' rounding */
        if (t->n[k].excl < 0)
            t->n[k].excl = 0;
    size_t at = 0;
    for (size_t k = 0; k < t->nn; k++) {
        t->n[k].first = at;
        at += t->n[k].nchild;
        t->n[k].nchild = 0;
    }
    struct child_key *keys = km_xmalloc(t->nn * sizeof *keys);
    for (size_t k = 1; k < t->nn; k++) {
        struct pnode *p = &t->n[t->n[k].parent];
        keys[p->first + p->nchild++] = (struct child_key){
            t->n[k].incl, t->n[k].routine, t->n[k].location, k };
    }
    t->child = km_xmalloc(t->nn * sizeof *t->child);
    for (size_t k = 0; k < t->nn; k++) {
        struct pnode *p = &t->n[k];
        qsort(keys + p->first, p->nchild, sizeof *keys, by_incl);
        for (size_t c = 0; c < p->nchild; c++)
            t->child[p->first + c] = keys[p->first + c].node;
    }
    free(keys);
}

/* The merged tree of `thread` over the live ranks, or of rank `rank`
 * alone (rank >= 0). */
static void build(struct kv_ptree *t, const struct kv_run *run, int rank,
                  int thread)
{
    memset(t, 0, sizeof *t);
    t->run = run;
    t->rank = rank;
    add_node(t, -1, -1, -1);
    for (size_t s = 0; s < run->nsections; s++) {
        const struct kv_rank *r = &run->ranks[s];
        const struct kv_tree *tree = tree_of(r, thread);
        if (r->lost || !tree || (rank >= 0 && r->rank != rank))
            continue;
        merge_tree(t, tree, ++t->nranks);
        t->rank = r->rank;
        t->total += r->fig[KV_F_TOTAL];
        t->total_est |= r->fig_est[KV_F_TOTAL];
    }
    finish_tree(t);
}

static void free_tree(struct kv_ptree *t)
{
    free(t->n);
    free(t->child);
    free(t->slot);
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */

/* A region as the tables name it: the routine, or "ROUTINE KIND LINE"
 * for a location (and "#k" for the k-th location of that kind on the
 * line).  A ';' (which folded stacks join names with) cannot be in a
 * Fortran name, but the file's text is not trusted: it becomes ':'. */
static const char *region_name(char buf[320], const struct kv_run *run,
                               int routine, int location)
{
    if (routine == KV_DEEPER) {
        snprintf(buf, 320, "[paths deeper than %d levels]", KV_PATHS_DEPTH);
        return buf;
    }
    if (routine == KV_FOLDED)
        return strcpy(buf, "[folded at KM_PATHS_MAX]");
    const char *rname = routine >= 0 ? run->routines[routine].name
                                     : "(no routine)";
    if (location < 0)
        snprintf(buf, 320, "%.300s", rname);
    else {
        const struct kv_location *l = &run->locations[location];
        int n = snprintf(buf, 320, "%.250s %s %d", rname,
                         kv_kind_name(l->kind), l->line);
        if (l->occurrence > 0 && n > 0 && n < 300)
            snprintf(buf + n, 320 - (size_t)n, "#%d", l->occurrence + 1);
    }
    for (char *p = buf; *p; p++)
        if (*p == ';')
            *p = ':';
    return buf;
}

/* A region as a frame of folded stacks: the routine, or "ROUTINE
 * KIND@LINE" for a location ("#k" after it for the k-th location of that
 * kind on the line).  flamegraph.pl and inferno read a line's last
 * blank-separated number as its count and, when what is before it also
 * ends in a blank and a number, that one as a differential profile's
 * first count: "MAIN;X_SOLVE DO 44 292100" became the frame "X_SOLVE DO"
 * with counts 44 and 292100.  No frame ends in a blank and digits so. */
static const char *folded_name(char buf[320], const struct kv_run *run,
                               int routine, int location)
{
    if (location < 0)
        return region_name(buf, run, routine, location);
    const char *rname = routine >= 0 ? run->routines[routine].name
                                     : "(no routine)";
    const struct kv_location *l = &run->locations[location];
    int n = snprintf(buf, 320, "%.250s %s@%d", rname, kv_kind_name(l->kind),
                     l->line);
    if (l->occurrence > 0 && n > 0 && n < 300)
        snprintf(buf + n, 320 - (size_t)n, "#%d", l->occurrence + 1);
    for (char *p = buf; *p; p++)
        if (*p == ';')
            *p = ':';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

struct text_ctx {
    FILE *f;
    const struct kv_ptree *t;
    bool stats;              /* mean, min and max columns */
    double threshold;        /* mean inclusive time a path needs; < 0: all */
};

static const char *share(char buf[32], double part, double whole)
{
    if (!(whole > 0) || !isfinite(part))
        return "-";
    snprintf(buf, 32, "%.1f", 100 * part / whole);
    return buf;
}

static const char *counts(char buf[32], uint64_t count, bool extrap)
{
    char *p = buf;
    if (extrap)
        *p++ = '+';
    *kv_put_uint(p, count) = '\0';
    return buf;
}

/* Rows indent two columns a level down to this depth; deeper ones say
 * their level instead, so that a deep chain's rows stay short. */
#define INDENT_LEVELS 50

static void print_row(const struct text_ctx *c, const struct pnode *n,
                      int depth)
{
    char a[32], b[32], d[32], e[32], cn[32], run[32], mpi[32], name[320];
    double k = c->t->nranks;
    bool el = n->est & KV_EST(KV_M_ELAPSED);
    fprintf(c->f, "%11s", kv_human_mark(a, n->incl / k, el));
    if (c->stats)                    /* a rank without the path: exact 0 */
        fprintf(c->f, " %11s %11s",
                kv_human_mark(b, n->min, el && n->ranks == c->t->nranks),
                kv_human_mark(d, n->max, el));
    fprintf(c->f, " %11s %11s %6s %6s  %*s",
            kv_human_mark(e, n->excl / k, n->est & KV_EST(KV_M_NET)),
            n->routine == KV_FOLDED ? "-" : counts(cn, n->count, n->extrap),
            share(run, n->incl, c->t->total), share(mpi, n->mpi, n->incl),
            2 * (depth < INDENT_LEVELS ? depth : INDENT_LEVELS), "");
    if (depth >= INDENT_LEVELS)
        fprintf(c->f, "[level %d] ", depth + 1);
    fprintf(c->f, "%s%s\n", region_name(name, c->t->run, n->routine,
                                         n->location),
            n->rfold ? KV_RFOLD_MARK : "");
}

/* The rows under node k (the root): every child at or above the
 * threshold, then its children the same way; the ones below it (the
 * last, in inclusive order) summarised in one line after their
 * siblings: how many paths that hides, and their time.  Paths deeper
 * than KV_PATHS_DEPTH levels are summarised so too under their
 * ancestor at that depth.  Walked with a stack of its own, not
 * recursion: a chain of 10^5 paths overflowed the C stack. */
struct text_frame {
    size_t node, next;       /* the node, and its next child to show */
    size_t hidden;           /* paths hidden under it so far */
    double hidden_s;
    bool hidden_est, deep;   /* deep: hidden for their depth */
};

static void print_tree(const struct text_ctx *c)
{
    const struct kv_ptree *t = c->t;
    struct text_frame *st = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *st);
    int sp = 0;
    st[0] = (struct text_frame){ 0, 0, 0, 0, false, false };
    while (sp >= 0) {
        struct text_frame *fr = &st[sp];
        const struct pnode *p = &t->n[fr->node];
        if (fr->next == p->nchild) {
            if (fr->hidden) {
                char b[32];
                /* in the Path column, where its children's names begin */
                int d = sp < INDENT_LEVELS ? sp : INDENT_LEVELS;
                char deep[48] = "";
                if (fr->deep)
                    snprintf(deep, sizeof deep, " deeper than %d levels",
                             KV_PATHS_DEPTH);
                fprintf(c->f, "%*s  %*s(%zu %spath%s%s, %s s)\n",
                        c->stats ? 73 : 49, "", 2 * d, "", fr->hidden,
                        fr->deep ? "" : "more ", fr->hidden == 1 ? "" : "s",
                        deep, kv_human_mark(b, fr->hidden_s, fr->hidden_est));
            }
            sp--;
            continue;
        }
        size_t k = t->child[p->first + fr->next++];
        const struct pnode *n = &t->n[k];
        bool deep = sp >= KV_PATHS_DEPTH;
        if (deep || n->incl / t->nranks < c->threshold) {
            fr->hidden += 1 + n->below;
            fr->hidden_s += n->incl / t->nranks;
            fr->hidden_est |= n->est & KV_EST(KV_M_ELAPSED);
            fr->deep |= deep;
            continue;
        }
        print_row(c, n, sp);
        st[++sp] = (struct text_frame){ k, 0, 0, 0, false, false };
    }
    free(st);
}

/* Entries on paths folded at a limit, over the trees of thread `thread`
 * of rank `rank` (-1: every rank). */
static long long folded_entries(const struct kv_run *run, int rank,
                                int thread)
{
    long long n = 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        if (rank >= 0 && r->rank != rank)
            continue;
        for (size_t k = 0; k < r->ntrees; k++)
            if (r->trees[k].thread == thread)
                n += r->trees[k].folded;
    }
    return n;
}

void kv_paths_text(FILE *f, const struct kv_run *run,
                   const struct kv_paths_opts *o)
{
    struct kv_ptree t;
    bool stats = o->rank < 0 && kv_run_live_ranks(run) > 1;
    build(&t, run, stats ? -1 : o->rank >= 0 ? o->rank
                                             : first_rank(run, o->thread),
          o->thread);
    char tot[32];
    kv_human_mark(tot, t.total / t.nranks, t.total_est);
    size_t npaths = t.nn - 1;        /* the file's: not the frames kmview adds */
    for (size_t k = 1; k < t.nn; k++)
        npaths -= t.n[k].routine == KV_FOLDED;
    if (stats)
        fprintf(f, "Call paths of thread %d over %d ranks, merged by path: "
                "%zu paths; mean total time %s s\n"
                "Per path the mean over the ranks (a rank without the path "
                "counts 0), the min and\nmax of its inclusive time, its "
                "counts summed.\n", o->thread, t.nranks, npaths, tot);
    else
        fprintf(f, "Call paths of rank %d, thread %d: %zu paths; total time "
                "%s s\n", t.rank, o->thread, npaths, tot);
    long long folded = folded_entries(run, stats ? -1 : t.rank, o->thread);
    if (folded > 0 && run->format_version >= 7)
        fprintf(f, "%lld entries went on paths folded at a limit.  A path "
                "marked [recursion folded]\nholds deeper recursion of its "
                "region, past KM_PATHS_RECURSION (its counts hold the\n"
                "calls made deeper); a frame [folded at KM_PATHS_MAX] holds "
                "paths not kept past\nKM_PATHS_MAX paths per thread, their "
                "entries gone on under the path's outermost\nregion: not "
                "calls made from there.\n", folded);
    else if (folded > 0)
        fprintf(f, "%lld entries went on paths folded at a limit "
                "(KM_PATHS_MAX paths per thread, KM_PATHS_RECURSION): those "
                "paths end early (KM_output %d does not say which they "
                "are).\n", folded, run->format_version);
    if (o->min > 0)
        fprintf(f, "Paths under %g%% of the %stotal time are summarised "
                "(--min=0: all).\n", 100 * o->min, stats ? "mean " : "");
    fputc('\n', f);
    if (stats)
        fprintf(f, "%11s %11s %11s %11s %11s %6s %6s  %s\n", "Incl(s)",
                "Min incl(s)", "Max incl(s)", "Excl(s)", "Counts", "Run%",
                "MPI%", "Path");
    else
        fprintf(f, "%11s %11s %11s %6s %6s  %s\n", "Incl(s)", "Excl(s)",
                "Counts", "Run%", "MPI%", "Path");
    struct text_ctx c = { f, &t, stats,
                          o->min > 0 ? o->min * t.total / t.nranks : -1 };
    print_tree(&c);
    fputs("\nIncl: the path's time, the paths below it included.  Excl: "
          "its own, in no path below\nit (the tables' Net of a routine also "
          "holds its loops' and I/O statements').\nRun%: Incl, % of the total "
          "time.  MPI%: % of Incl in the MPI calls at or below it.\n~ contains "
          "an estimate; + counts include estimated executions.\n", f);
    free_tree(&t);
}

/* ------------------------------------------------------------------------ */
/* Folded stacks                                                             */

int kv_paths_value_parse(const char *word)
{
    if (strcmp(word, "time") == 0)
        return KV_PV_TIME;
    if (strcmp(word, "net") == 0)
        return KV_PV_NET;
    if (strcmp(word, "counts") == 0)
        return KV_PV_COUNTS;
    return -1;
}

/* A path's own time in whole microseconds: what a flame graph sums into
 * the widths of the path and of every path above it. */
static unsigned long long micros(double s)
{
    return s > 0 ? (unsigned long long)llround(s * 1e6) : 0;
}

static unsigned long long fold_value(const struct pnode *n,
                                     enum kv_paths_value value)
{
    return value == KV_PV_COUNTS ? n->count
         : value == KV_PV_NET    ? micros(n->net)
                                 : micros(n->excl);
}

/* The value of every path below node k, summed (a stack of its own). */
static unsigned long long below_value(const struct kv_ptree *t, size_t k,
                                      enum kv_paths_value value,
                                      size_t *scratch)
{
    unsigned long long sum = 0;
    size_t n = 0;
    scratch[n++] = k;
    while (n > 0) {
        const struct pnode *p = &t->n[scratch[--n]];
        for (size_t i = 0; i < p->nchild; i++) {
            size_t c = t->child[p->first + i];
            unsigned long long v = fold_value(&t->n[c], value);
            sum = v > ULLONG_MAX - sum ? ULLONG_MAX : sum + v;
            scratch[n++] = c;
        }
    }
    return sum;
}

/* A line per path under the root with a non-zero value, its names from
 * the root joined by ';'.  A line of a path d levels down is d names
 * long: the lines of a chain of d paths hold d^2/2 names (10^6 paths:
 * 5 * 10^11), so a path KV_PATHS_DEPTH levels down is the last written
 * whole, and what is below it one line more, its value summed, under a
 * frame that says so.  Walked with a stack of its own (a chain of 20,000
 * paths overflowed the C stack). */
static void fold(FILE *f, const struct kv_ptree *t,
                 enum kv_paths_value value)
{
    struct km_buf stack = { 0 };
    size_t *node = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *node);
    size_t *next = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *next);
    size_t *len = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *len);
    size_t *scratch = km_xmalloc(t->nn * sizeof *scratch);
    int sp = 0;
    node[0] = 0;
    next[0] = 0;
    len[0] = 0;
    while (sp >= 0) {
        const struct pnode *p = &t->n[node[sp]];
        if (next[sp] == p->nchild) {
            stack.len = len[sp--];
            continue;
        }
        size_t c = t->child[p->first + next[sp]++];
        const struct pnode *n = &t->n[c];
        char name[320];
        size_t before = stack.len;
        if (before)
            km_buf_addc(&stack, ';');
        /* (names come from the file: no control character may reach a
         * terminal, nor a newline the file) */
        folded_name(name, t->run, n->routine, n->location);
        kv_buf_add_escaped(&stack, name, strlen(name));
        if (n->rfold)
            km_buf_adds(&stack, KV_RFOLD_MARK);
        unsigned long long v = fold_value(n, value);
        if (v) {
            fwrite(stack.data, 1, stack.len, f);
            fprintf(f, " %llu\n", v);
        }
        if (sp + 1 < KV_PATHS_DEPTH) {
            ++sp;
            node[sp] = c;
            next[sp] = 0;
            len[sp] = before;
            continue;
        }
        unsigned long long deeper = n->nchild ? below_value(t, c, value,
                                                            scratch) : 0;
        if (deeper) {
            fwrite(stack.data, 1, stack.len, f);
            fprintf(f, ";%s %llu\n", region_name(name, t->run, KV_DEEPER, -1),
                    deeper);
        }
        stack.len = before;
    }
    km_buf_free(&stack);
    free(node);
    free(next);
    free(len);
    free(scratch);
}

/* gprof's view of t: a node per distinct stack of routines (DO loops,
 * CALL statements, MPI calls, I/O statements and user regions left out
 * of the stacks), holding the Net(s) and inclusive time of t's paths
 * that end in its routine on that stack.  A routine reached through
 * several loops or call sites of its caller is one node: its net time
 * (which holds its own loops' and I/O statements' time) once, so that
 * the nodes of a routine sum to its Net in the routine table. */
static void routine_tree(struct kv_ptree *r, const struct kv_ptree *t)
{
    memset(r, 0, sizeof *r);
    r->run = t->run;
    r->rank = t->rank;
    r->nranks = t->nranks;
    add_node(r, -1, -1, -1);
    size_t *of = km_xmalloc(t->nn * sizeof *of);   /* t's node -> r's */
    of[0] = 0;
    for (size_t k = 1; k < t->nn; k++) {           /* parents first */
        const struct pnode *n = &t->n[k];
        if (n->location >= 0) {
            of[k] = of[n->parent];
            continue;
        }
        of[k] = child_of(r, of[n->parent], n->routine, -1);
        r->n[of[k]].incl += n->incl;   /* orders the lines as the table */
        r->n[of[k]].net += n->net;
        r->n[of[k]].rfold |= n->rfold;
    }
    free(of);
    finish_tree(r);
}

void kv_paths_folded(FILE *f, const struct kv_run *run,
                     const struct kv_paths_opts *o)
{
    struct kv_ptree t;
    build(&t, run, o->rank >= 0 ? o->rank : first_rank(run, o->thread),
          o->thread);
    if (o->value == KV_PV_NET) {
        struct kv_ptree r;
        routine_tree(&r, &t);
        fold(f, &r, o->value);
        free_tree(&r);
    } else
        fold(f, &t, o->value);
    free_tree(&t);
}

/* ------------------------------------------------------------------------ */
/* speedscope                                                                */

/* speedscope's frames: one per region any profile shows, numbered in the
 * order the ranks' trees first reach them. */
struct frames {
    int *of_routine[2];      /* [rfold][routine + 1]: frame + 1, 0 none yet */
    int *of_location[2];     /* [rfold][location] */
    int of_special[KV_NSPECIAL];  /* [-1 - code]: the frames kmview adds */
    int *routine, *location; /* [frame] */
    bool *rfold;             /* [frame]: a region that holds deeper
                                recursion, a frame of its own */
    int n;
};

static int frame_of(struct frames *fr, int routine, int location,
                    bool rfold)
{
    int *slot = routine < -1 ? &fr->of_special[-1 - routine]
              : location >= 0 ? &fr->of_location[rfold][location]
              : &fr->of_routine[rfold][routine + 1];
    if (!*slot) {
        fr->routine[fr->n] = routine;
        fr->location[fr->n] = location;
        fr->rfold[fr->n] = rfold && routine >= -1;
        *slot = ++fr->n;
    }
    return *slot - 1;
}

static bool in_profiles(const struct kv_rank *r,
                        const struct kv_paths_opts *o)
{
    return !r->lost && tree_of(r, o->thread) &&
           (o->rank < 0 || r->rank == o->rank);
}

static void collect_frames(struct frames *fr, const struct kv_run *run,
                           const struct kv_paths_opts *o)
{
    size_t most = 2 * (run->nroutines + 1 + run->nlocations) + KV_NSPECIAL;
    memset(fr->of_special, 0, sizeof fr->of_special);
    for (int r = 0; r < 2; r++) {
        fr->of_routine[r] = km_xcalloc(run->nroutines + 1,
                                       sizeof *fr->of_routine[r]);
        fr->of_location[r] = km_xcalloc(run->nlocations + 1,
                                        sizeof *fr->of_location[r]);
    }
    fr->routine = km_xmalloc(most * sizeof *fr->routine);
    fr->location = km_xmalloc(most * sizeof *fr->location);
    fr->rfold = km_xmalloc(most * sizeof *fr->rfold);
    fr->n = 0;
    for (size_t s = 0; s < run->nsections; s++) {
        const struct kv_rank *r = &run->ranks[s];
        if (!in_profiles(r, o))
            continue;
        const struct kv_tree *tree = tree_of(r, o->thread);
        int *depth = km_xmalloc((tree->npaths + 1) * sizeof *depth);
        for (size_t i = 0; i < tree->npaths; i++) {
            const struct kv_path *p = &tree->paths[i];
            depth[i] = p->parent < 0 ? 1 : depth[p->parent] + 1;
            if (p->fold == KV_FOLD_MAX && depth[i] <= KV_PATHS_DEPTH)
                frame_of(fr, KV_FOLDED, -1, false);
            if (depth[i] <= KV_PATHS_DEPTH)
                frame_of(fr, p->routine, p->location,
                         p->fold == KV_FOLD_RECURSION);
            else
                frame_of(fr, KV_DEEPER, -1, false);
        }
        free(depth);
    }
}

static void write_frames(FILE *f, const struct kv_run *run,
                         const struct frames *fr)
{
    fputs("\"shared\":{\"frames\":[", f);
    for (int i = 0; i < fr->n; i++) {
        char name[320];
        int routine = fr->routine[i], location = fr->location[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        region_name(name, run, routine, location);
        if (fr->rfold[i])
            strcat(name, KV_RFOLD_MARK);
        kv_json_str(f, name);
        const char *file = routine >= 0 ? run->routines[routine].file : NULL;
        int line = location >= 0 ? run->locations[location].line
                   : routine >= 0 ? run->routines[routine].line : 0;
        if (file) {
            fputs(",\"file\":", f);
            kv_json_str(f, file);
        }
        if (line > 0)
            fprintf(f, ",\"line\":%d", line);
        fputc('}', f);
    }
    fputs("]},\n", f);
}

/* Nanoseconds as microseconds, exactly: "12.345". */
static void put_micros(FILE *f, long long ns)
{
    fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000);
}

static long long nanos(double s)
{
    return s > 0 ? llround(s * 1e9) : 0;    /* (at most 10^9 s a path) */
}

/* A profile's samples: every path with an own time of at least a
 * nanosecond, in the order of the table (depth first, children by
 * inclusive time), its stack the frames from the root; a path
 * KV_PATHS_DEPTH levels down is the last one sampled whole, what is
 * below it one sample more under a frame that says so (a stack per
 * sample: a chain of d paths holds d^2/2 frames).  Walked with a stack of
 * its own.  The weights go into *w (their count returned). */
static size_t write_samples(FILE *f, const struct kv_ptree *t,
                            struct frames *fr, long long *w)
{
    size_t *node = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *node);
    size_t *next = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *next);
    int *frame = km_xmalloc((KV_PATHS_DEPTH + 2) * sizeof *frame);
    size_t *scratch = km_xmalloc(t->nn * sizeof *scratch);
    size_t ns = 0;
    int sp = 0;
    node[0] = 0;
    next[0] = 0;
    while (sp >= 0) {
        const struct pnode *p = &t->n[node[sp]];
        if (next[sp] == p->nchild) {
            sp--;
            continue;
        }
        size_t c = t->child[p->first + next[sp]++];
        const struct pnode *n = &t->n[c];
        frame[sp] = frame_of(fr, n->routine, n->location, n->rfold);
        long long own[2] = { nanos(n->excl), 0 };
        bool deep = sp + 1 >= KV_PATHS_DEPTH;
        if (deep && n->nchild) {         /* what is below it, summed */
            size_t m = 0;
            scratch[m++] = c;
            while (m > 0) {
                const struct pnode *q = &t->n[scratch[--m]];
                for (size_t i = 0; i < q->nchild; i++) {
                    size_t k = t->child[q->first + i];
                    own[1] += nanos(t->n[k].excl);
                    scratch[m++] = k;
                }
            }
            frame[sp + 1] = frame_of(fr, KV_DEEPER, -1, false);
        }
        for (int s = 0; s < 2; s++) {
            if (own[s] <= 0)
                continue;
            fputs(ns ? ",\n[" : "\n[", f);
            for (int d = 0; d <= sp + s; d++)
                fprintf(f, "%d%s", frame[d], d < sp + s ? "," : "");
            fputc(']', f);
            w[ns++] = own[s];
        }
        if (!deep) {
            ++sp;
            node[sp] = c;
            next[sp] = 0;
        }
    }
    free(node);
    free(next);
    free(frame);
    free(scratch);
    return ns;
}

static void write_profile(FILE *f, const struct kv_run *run, int rank,
                          const struct kv_paths_opts *o, struct frames *fr)
{
    struct kv_ptree t;
    build(&t, run, rank, o->thread);
    long long *w = km_xmalloc(t.nn * sizeof *w);
    /* (the samples come first in the file, endValue before them: written
     * into memory, then copied) */
    char *samples = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&samples, &size);
    if (!mem) {
        perror("kmview");
        exit(1);
    }
    size_t n = write_samples(mem, &t, fr, w);
    fclose(mem);
    long long end = 0;
    for (size_t i = 0; i < n; i++)
        end += w[i];
    fprintf(f, "{\"type\":\"sampled\",\"name\":\"rank %d\","
            "\"unit\":\"microseconds\",\"startValue\":0,\"endValue\":", rank);
    put_micros(f, end);
    fputs(",\n\"samples\":[", f);
    fwrite(samples, 1, size, f);
    fputs("],\n\"weights\":[", f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        put_micros(f, w[i]);
    }
    fputs("]}", f);
    free(samples);
    free(w);
    free_tree(&t);
}

void kv_paths_speedscope(FILE *f, const struct kv_run *run,
                         const struct kv_paths_opts *o)
{
    struct frames fr;
    collect_frames(&fr, run, o);
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"kmview " PACKAGE_VERSION "\",\"name\":", f);
    kv_json_str(f, run->program ? run->program : "kmview paths");
    fputs(",\"activeProfileIndex\":0,\n", f);
    write_frames(f, run, &fr);
    fputs("\"profiles\":[", f);
    bool first = true;
    for (size_t s = 0; s < run->nsections; s++) {
        const struct kv_rank *r = &run->ranks[s];
        if (!in_profiles(r, o))
            continue;
        fputs(first ? "\n" : ",\n", f);
        first = false;
        write_profile(f, run, r->rank, o, &fr);
    }
    fputs("]}\n", f);
    for (int r = 0; r < 2; r++) {
        free(fr.of_routine[r]);
        free(fr.of_location[r]);
    }
    free(fr.routine);
    free(fr.location);
    free(fr.rfold);
}

/* ------------------------------------------------------------------------ */
/* Merged paths for diff and ranks                                           */

void kv_paths_merge(struct kv_mpaths *m, const struct kv_run *run,
                    int thread)
{
    memset(m, 0, sizeof *m);
    m->thread = thread;
    m->t = km_xmalloc(sizeof *m->t);
    build(m->t, run, -1, thread);
    const struct kv_ptree *t = m->t;
    m->n = t->nn - 1;
    m->nranks = t->nranks;
    m->v = km_xcalloc(m->n + 1, sizeof *m->v);
    for (size_t k = 1; k < t->nn; k++) {     /* node k is path k - 1 */
        const struct pnode *n = &t->n[k];
        m->v[k - 1] = (struct kv_mpath){
            .parent = n->parent - 1, .routine = n->routine,
            .depth = n->parent > 0 ? m->v[n->parent - 1].depth + 1 : 1,
            .location = n->location, .incl = n->incl, .net = n->net,
            .est_pct = n->incl > 0 ? n->est_w / n->incl : 0,
            .count = n->count, .extrap = n->extrap, .rfold = n->rfold,
            .est = (n->est & KV_EST(KV_M_ELAPSED)) != 0,
            .net_est = (n->file_est & KV_EST(KV_M_NET)) != 0 };
    }
}

void kv_mpaths_free(struct kv_mpaths *m)
{
    if (m->t)
        free_tree(m->t);
    free(m->t);
    free(m->v);
    memset(m, 0, sizeof *m);
}

void kv_paths_own_times(const struct kv_mpaths *m,
                        const struct kv_rank *const *ranks, size_t nranks,
                        double *x, bool *xest)
{
    size_t n = m->n;
    memset(x, 0, nranks * n * sizeof *x);
    memset(xest, 0, nranks * n * sizeof *xest);
    for (size_t i = 0; i < nranks; i++) {
        const struct kv_tree *tree = tree_of(ranks[i], m->thread);
        if (ranks[i]->lost || !tree || !n)
            continue;
        double *row = x + i * n;
        bool *erow = xest + i * n;
        size_t *node_of = km_xmalloc((tree->npaths + 1) * sizeof *node_of);
        for (size_t j = 0; j < tree->npaths; j++) {  /* all in m already */
            const struct kv_path *p = &tree->paths[j];
            size_t parent = p->parent < 0 ? 0 : node_of[p->parent];
            node_of[j] = path_node(m->t, parent, p, 0);
            row[node_of[j] - 1] += p->elapsed;
            erow[node_of[j] - 1] |= (p->est & KV_EST(KV_M_ELAPSED)) != 0;
            if (p->fold == KV_FOLD_MAX)     /* its frame holds its time */
                row[m->t->n[node_of[j]].parent - 1] += p->elapsed;
        }
        free(node_of);
        for (size_t k = 0; k < n; k++)       /* children after parents */
            if (m->v[k].parent >= 0)
                erow[m->v[k].parent] |= erow[k];
        double *incl = km_xmalloc(n * sizeof *incl);
        memcpy(incl, row, n * sizeof *incl);
        for (size_t k = 0; k < n; k++)
            if (m->v[k].parent >= 0)
                row[m->v[k].parent] -= incl[k];
        for (size_t k = 0; k < n; k++)       /* the figures' rounding */
            if (row[k] < 0)
                row[k] = 0;
        free(incl);
    }
}

void kv_mpath_label(struct km_buf *b, const struct kv_run *run,
                    const struct kv_mpaths *m, size_t k)
{
    size_t depth = 0;
    for (int j = (int)k; j >= 0; j = m->v[j].parent)
        depth++;
    int *at = km_xmalloc(depth * sizeof *at);
    size_t d = depth;
    for (int j = (int)k; j >= 0; j = m->v[j].parent)
        at[--d] = j;
    int in = -2;                             /* the routine the path is in */
    for (d = 0; d < depth; d++) {
        const struct kv_mpath *p = &m->v[at[d]];
        char name[320];
        if (d)
            km_buf_adds(b, " > ");
        region_name(name, run, p->routine, p->location);
        if (p->location >= 0 && p->routine == in) {
            const char *shortname = strchr(name, ' ');
            km_buf_adds(b, shortname ? shortname + 1 : name);
        } else
            km_buf_adds(b, name);
        if (p->location < 0)
            in = p->routine;
    }
    free(at);
}

/* ------------------------------------------------------------------------ */

int kv_paths_check(const struct kv_run *run, const struct kv_paths_opts *o)
{
    const char *file = run->nsources ? run->sources[0] : "kmview";
    if (run->format_version < 6) {
        kv_eprintf("%s: error: KM_output %d has no Paths block (libkm "
                "writes one from format version 6 on)\n", file,
                run->format_version);
        return -1;
    }
    if (o->rank < 0) {
        if (first_rank(run, o->thread) >= 0)
            return 0;
        kv_eprintf("%s: error: no rank has a tree of thread %d (a "
                "Paths block)\n", file, o->thread);
        return -1;
    }
    for (size_t s = 0; s < run->nsections; s++) {
        const struct kv_rank *r = &run->ranks[s];
        if (r->rank != o->rank)
            continue;
        if (r->lost)
            kv_eprintf("%s: error: rank %d's results were lost\n",
                    file, o->rank);
        else if (!tree_of(r, o->thread))
            kv_eprintf("%s: error: rank %d has no tree of thread %d\n",
                    file, o->rank, o->thread);
        else
            return 0;
        return -1;
    }
    kv_eprintf("%s: error: the run has no rank %d\n", file, o->rank);
    return -1;
}
