/*
 * diffpaths.c — `kmview diff A B`, call path by call path.
 *
 * Owns matching the call paths of two runs (thread 0's trees of the
 * Paths block, KM_output 6, merged over each run's ranks by paths.c) and
 * writing them: the text section, paths.csv, the JSON array and the HTML
 * view's data.  A path is the sequence of regions from the root, named
 * by routine names, kinds and source lines, so that two runs whose
 * routines and locations are numbered differently line up.  Its time is
 * its inclusive time, the mean over the ranks that have a tree (what
 * `kmview paths` shows); a rank without the path counts 0.  diff.c
 * scores and orders the rows as it does the regions'.  When either run
 * has no Paths block (a format before 6), no path is compared.  Paths
 * folded at KM_PATHS_MAX are under a frame of their own, "[folded at
 * KM_PATHS_MAX]", in their name; a path that holds deeper recursion
 * (format 7's Fold r) is matched as the same path, its name marked.
 *
 * Must never read files or change the runs.
 */
#include "kmview/views/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/views/paths.h"
#include "support/buf.h"

/* ------------------------------------------------------------------------ */
/* Matching                                                                  */

struct named {
    char *name;              /* "MAIN > SOLVE > DO 12" */
    size_t k;                /* its index in the run's merged paths */
};

static int by_name(const void *pa, const void *pb)
{
    const struct named *a = pa, *b = pb;
    return strcmp(a->name, b->name);
}

/* The paths of a merged tree at most KV_PATHS_DEPTH levels deep (a
 * path's name is as long as it is deep: the names of a chain of d paths
 * hold d^2/2 regions), named, in name order; their number in *n, the
 * deeper ones' in *deeper. */
static struct named *name_paths(const struct kv_run *run,
                                const struct kv_mpaths *m, size_t *n,
                                size_t *deeper)
{
    struct named *v = km_xcalloc(m->n + 1, sizeof *v);
    struct km_buf b = { 0 };
    *n = *deeper = 0;
    for (size_t k = 0; k < m->n; k++) {
        if (m->v[k].depth > KV_PATHS_DEPTH) {
            ++*deeper;
            continue;
        }
        b.len = 0;
        kv_mpath_label(&b, run, m, k);
        v[*n].name = km_xstrdup(km_buf_cstr(&b));
        v[(*n)++].k = k;
    }
    km_buf_free(&b);
    qsort(v, *n, sizeof *v, by_name);
    return v;
}

static bool has_trees(const struct kv_run *run)
{
    if (run->format_version < 6)
        return false;
    for (size_t s = 0; s < run->nsections; s++)
        for (size_t t = 0; t < run->ranks[s].ntrees; t++)
            if (!run->ranks[s].lost && run->ranks[s].trees[t].thread == 0)
                return true;
    return false;
}

static void set_path_side(struct kv_diff_row *r, int side,
                          const struct kv_mpaths *m, size_t k)
{
    const struct kv_mpath *p = &m->v[k];
    double n = m->nranks > 0 ? m->nranks : 1;
    r->t[side] = p->incl / n;
    r->t_est[side] = p->est;
    r->calls[side] = (double)p->count / n;
    r->per_call[side] = r->calls[side] > 0 ? r->t[side] / r->calls[side]
                                           : NAN;
}

/* A path that holds deeper recursion of its region (Fold r) in A or B
 * (or both) is the same path as one that does not: matched by its
 * regions, its name says so. */
static char *rfold_name(char *name, bool a, bool b)
{
    if (!a && !b)
        return name;
    struct km_buf n = { 0 };
    km_buf_printf(&n, "%s [recursion folded%s]", name,
                  a && b ? "" : a ? " in A" : " in B");
    free(name);
    char *marked = km_xstrdup(km_buf_cstr(&n));
    km_buf_free(&n);
    return marked;
}

/* (d->path_names has room for every path of both runs.) */
static struct kv_diff_row *add_path_row(struct kv_diff *d, size_t *cap,
                                        char *name, enum kv_diff_status st)
{
    KM_GROW(d->paths, *cap, d->npaths + 1);
    struct kv_diff_row *r = &d->paths[d->npaths];
    memset(r, 0, sizeof *r);
    r->per_call[0] = r->per_call[1] = NAN;
    r->sent[0] = r->sent[1] = r->received[0] = r->received[1] = NAN;
    r->status = st;
    r->kind = -1;
    r->routine = name;
    d->path_names[d->npaths++] = name;
    return r;
}

void kv_diff_paths_match(struct kv_diff *d)
{
    for (int s = 0; s < 2; s++)
        d->have_paths[s] = has_trees(d->run[s]->run);
    if (!d->have_paths[0] || !d->have_paths[1])
        return;
    struct kv_mpaths m[2];
    struct named *v[2];
    size_t nv[2];
    for (int s = 0; s < 2; s++) {
        kv_paths_merge(&m[s], d->run[s]->run, 0);
        v[s] = name_paths(d->run[s]->run, &m[s], &nv[s],
                          &d->paths_deeper[s]);
    }
    size_t i = 0, j = 0, cap = 0;
    d->path_names = km_xcalloc(nv[0] + nv[1] + 1, sizeof *d->path_names);
    while (i < nv[0] || j < nv[1]) {
        int c = i == nv[0] ? 1 : j == nv[1] ? -1
                               : strcmp(v[0][i].name, v[1][j].name);
        struct kv_diff_row *r;
        if (c <= 0) {
            bool ra = m[0].v[v[0][i].k].rfold;
            bool rb = c == 0 && m[1].v[v[1][j].k].rfold;
            r = add_path_row(d, &cap, rfold_name(v[0][i].name, ra, rb),
                             c ? KV_ONLY_A : KV_BOTH);
            set_path_side(r, 0, &m[0], v[0][i++].k);
            if (c == 0) {
                set_path_side(r, 1, &m[1], v[1][j].k);
                free(v[1][j++].name);
            }
        } else {
            r = add_path_row(d, &cap, rfold_name(v[1][j].name, false,
                                                 m[1].v[v[1][j].k].rfold),
                             KV_ONLY_B);
            set_path_side(r, 1, &m[1], v[1][j++].k);
        }
    }
    for (int s = 0; s < 2; s++) {
        free(v[s]);
        kv_mpaths_free(&m[s]);
    }
}

void kv_diff_paths_free(struct kv_diff *d)
{
    for (size_t i = 0; i < d->npaths; i++)
        free(d->path_names[i]);
    free(d->path_names);
    free(d->paths);
    d->path_names = NULL;
    d->paths = NULL;
    d->npaths = 0;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */

static const char *ratio_text(char b[32], double v)
{
    return isinf(v) ? "new" : kv_human(b, v);
}

static size_t count_status(const struct kv_diff *d, enum kv_diff_status st)
{
    size_t n = 0;
    for (size_t i = 0; i < d->npaths; i++)
        n += d->paths[i].status == st;
    return n;
}

static void print_both(FILE *f, const struct kv_diff *d, int top)
{
    size_t both = count_status(d, KV_BOTH);
    size_t n = top > 0 && (size_t)top < both ? (size_t)top : both;
    fprintf(f, "\nCall paths in both runs (thread 0; inclusive time, means "
            "over ranks; score as\nfor the regions)\n  %4s %10s %10s %10s "
            "%7s %7s  %s\n", "#", "tA(s)", "tB(s)", "B-A(s)", "B/A",
            "score", "Path");
    char b[5][32];
    for (size_t k = 0; k < n; k++) {     /* the KV_BOTH rows come first */
        const struct kv_diff_row *r = &d->paths[k];
        fprintf(f, "  %4zu %10s %10s %10s %7s %7s  %s\n", k + 1,
                kv_human_mark(b[0], r->t[0], r->t_est[0]),
                kv_human_mark(b[1], r->t[1], r->t_est[1]),
                kv_human_mark(b[2], r->diff, r->t_est[0] || r->t_est[1]),
                ratio_text(b[3], r->ratio),
                isinf(r->score) ? "inf" : kv_human(b[4], r->score),
                r->routine);
    }
    if (n < both)
        fprintf(f, "  (%zu more; -n 0 lists them all)\n", both - n);
}

static void print_one_sided(FILE *f, const struct kv_diff *d,
                            enum kv_diff_status which, int top)
{
    int side = which == KV_ONLY_A ? 0 : 1;
    size_t all = count_status(d, which), shown = 0;
    if (!all)
        return;
    fprintf(f, "\nCall paths only in %s (%s)\n  %10s %9s  %s\n",
            side ? "B" : "A", d->name[side], "t (s)", "calls", "Path");
    char b[2][32];
    for (size_t i = 0; i < d->npaths; i++) {
        const struct kv_diff_row *r = &d->paths[i];
        if (r->status != which || (top > 0 && shown == (size_t)top))
            continue;
        shown++;
        fprintf(f, "  %10s %9s  %s\n",
                kv_human_mark(b[0], r->t[side], r->t_est[side]),
                kv_human(b[1], r->calls[side]), r->routine);
    }
    if (shown < all)
        fprintf(f, "  (%zu more; -n 0 lists them all)\n", all - shown);
}

void kv_diff_paths_print(FILE *f, const struct kv_diff *d, int top)
{
    if (!d->have_paths[0] || !d->have_paths[1]) {
        int s = d->have_paths[0] ? 1 : 0;
        const struct kv_run *run = d->run[s]->run;
        fprintf(f, "\nCall paths: not compared: %s (%s) has no Paths block "
                "(KM_output %d;\nlibkm writes one from format 6 on).\n",
                s ? "B" : "A", d->name[s], run->format_version);
        return;
    }
    print_both(f, d, top);
    print_one_sided(f, d, KV_ONLY_A, top);
    print_one_sided(f, d, KV_ONLY_B, top);
    for (int s = 0; s < 2; s++)
        if (d->paths_deeper[s])
            fprintf(f, "\n(%zu call path%s of %s deeper than %d levels not "
                    "compared: their time is in their callers' at that "
                    "depth.)\n", d->paths_deeper[s],
                    d->paths_deeper[s] == 1 ? "" : "s", s ? "B" : "A",
                    KV_PATHS_DEPTH);
}

/* ------------------------------------------------------------------------ */
/* CSV, JSON and HTML                                                        */

static const char *const status_names[] = { "both", "only_a", "only_b" };

static size_t depth_of(const char *path)
{
    size_t n = 1;
    for (const char *p = path; (p = strstr(p, " > ")); p += 3)
        n++;
    return n;
}

void kv_diff_paths_csv(FILE *f, const void *ctx)
{
    const struct kv_diff *d = ctx;
    fputs("order,status,path,depth,t_a,t_b,diff,ratio,calls_a,calls_b,score,"
          "t_a_estimated,t_b_estimated\n", f);
    for (size_t i = 0; i < d->npaths; i++) {
        const struct kv_diff_row *r = &d->paths[i];
        fprintf(f, "%zu,%s,", i + 1, status_names[r->status]);
        kv_csv_str(f, r->routine);
        fprintf(f, ",%zu", depth_of(r->routine));
        double v[] = { r->t[0], r->t[1], r->diff, r->ratio, r->calls[0],
                       r->calls[1] };
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
            fputc(',', f);
            kv_csv_num(f, v[k]);
        }
        fputc(',', f);
        if (isinf(r->score))
            fputs("inf", f);
        else
            kv_csv_num(f, r->score);
        fprintf(f, ",%d,%d\n", r->t_est[0], r->t_est[1]);
    }
}

static void json_num(FILE *f, const char *key, double v)
{
    fprintf(f, ",\"%s\":", key);
    kv_json_num(f, v);
}

void kv_diff_paths_json(FILE *f, const struct kv_diff *d)
{
    if (!d->have_paths[0] || !d->have_paths[1]) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    for (size_t i = 0; i < d->npaths; i++) {
        const struct kv_diff_row *r = &d->paths[i];
        fprintf(f, "%s{\"order\":%zu,\"status\":\"%s\",\"path\":",
                i ? ",\n" : "\n", i + 1, status_names[r->status]);
        kv_json_str(f, r->routine);
        fprintf(f, ",\"depth\":%zu", depth_of(r->routine));
        json_num(f, "t_a", r->t[0]);
        json_num(f, "t_b", r->t[1]);
        json_num(f, "diff", r->diff);
        json_num(f, "ratio", r->ratio);
        json_num(f, "calls_a", r->calls[0]);
        json_num(f, "calls_b", r->calls[1]);
        if (isinf(r->score))
            fputs(",\"score\":\"inf\"", f);
        else
            json_num(f, "score", r->score);
        fprintf(f, ",\"t_a_estimated\":%s,\"t_b_estimated\":%s}",
                r->t_est[0] ? "true" : "false",
                r->t_est[1] ? "true" : "false");
    }
    fputs("]", f);
}

/* The page shows the top rows of each list: a tree of a large program has
 * ten thousand paths, and the CSV and JSON have them all. */
#define HTML_TOP 100

void kv_diff_paths_html(FILE *f, const struct kv_diff *d)
{
    if (!d->have_paths[0] || !d->have_paths[1]) {
        fputs("null", f);
        return;
    }
    size_t shown[3] = { 0, 0, 0 };
    bool first = true;
    fputc('[', f);
    for (size_t i = 0; i < d->npaths; i++) {
        const struct kv_diff_row *r = &d->paths[i];
        if (shown[r->status]++ >= HTML_TOP)
            continue;
        fprintf(f, "%s[\"%s\",", first ? "\n" : ",\n",
                status_names[r->status]);
        first = false;
        kv_json_str(f, r->routine);
        double v[] = { r->t[0], r->t[1], r->calls[0], r->calls[1] };
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
            fputc(',', f);
            kv_json_num(f, v[k]);
        }
        fputc(',', f);
        if (isinf(r->score))
            fputs("\"inf\"", f);
        else
            kv_json_num(f, r->score);
        fprintf(f, ",%d,%d]", r->t_est[0], r->t_est[1]);
    }
    fputs("]", f);
}
