/*
 * model.c — building and freeing the in-memory run (see model.h).
 *
 * Owns interning: routines by name and locations by (routine, kind, line,
 * occurrence), each through one open-addressing hash table, so that reading
 * a file of a thousand ranks stays linear.  Must never print or judge the
 * data: read.c decides what is malformed.
 */
#include "kmview/read/model.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "support/buf.h"

const struct kv_figure_info kv_figures[KV_NFIGS] = {
    [KV_F_TOTAL] = { "Total time", "Total time", "total_time", false },
    [KV_F_ROUTINE_COUNTS] = { "Counts of routines", "Counts of routines",
                              "counts_of_routines", true },
    [KV_F_CLOCK_READS] = { "Counts of time get function",
                           "Counts of time get function",
                           "counts_of_time_get_function", true },
    [KV_F_READ_COST] = { "Time get function cost(1 call)",
                         "Time get function cost(1 call)",
                         "time_get_function_cost_1_call", false },
    [KV_F_OVERHEAD] = { "libkm overhead", "Time get function cost (Total)",
                        "libkm_overhead", false },
    [KV_F_WRITES] = { "Output counts by KM_writ", "Output counts by KM_writ",
                      "output_counts_by_km_writ", true },
    [KV_F_MPI] = { "MPI time", "MPI time", "mpi_time", false },
    [KV_F_STARTUP] = { "MPI start-up time", NULL, "mpi_startup_time", false },
    [KV_F_IO] = { "I/O time", "I/O time", "io_time", false },
    [KV_F_OUTSIDE] = { "Time outside routines", "Time outside routines",
                       "time_outside_routines", false },
    [KV_F_UNINSTRUMENTED] = { "Time in uninstrumented routines",
                              "Time in unmeasured callees",
                              "time_in_uninstrumented_routines", false },
    [KV_F_ESTIMATED] = { "Estimated time", NULL, "estimated_time", false },
    [KV_F_ROUTINES] = { "Routines", "Routines", "routines", true },
};

const char *const kv_pred_key[KV_NPRCOLS] = {
    [KV_PR_TOTAL] = "total", [KV_PR_STARTUP] = "startup", [KV_PR_MPI] = "mpi",
    [KV_PR_REDUNDANT] = "redundant", [KV_PR_OVERHEAD] = "overhead",
    [KV_PR_PARALLEL] = "parallel", [KV_PR_WAITED] = "waited",
};

const char *const kv_pred_fig_key[KV_NPRFIGS] = {
    [KV_PF_T1PE] = "t_1pe", [KV_PF_SPEEDUP] = "speedup",
    [KV_PF_EFFICIENCY] = "efficiency",
};

bool kv_figure_known(int format_version, int f)
{
    return format_version >= 2 || f != KV_F_ESTIMATED;
}

bool kv_cpu_time(const struct kv_run *run)
{
    return run->clock && strncmp(run->clock, "CPU time", 8) == 0;
}

bool kv_is_mpi_startup(const char *text)
{
    char s[32];
    size_t n = 0;
    /* blanks are insignificant in Fortran: compare without them */
    for (; *text && n + 1 < sizeof s; text++)
        if (*text != ' ' && *text != '\t')
            s[n++] = (char)toupper((unsigned char)*text);
    s[n] = '\0';
    if (strncmp(s, "CALLMPI_INIT", 12) != 0)
        return false;
    const char *rest = s + 12;
    if (strncmp(rest, "_THREAD", 7) == 0)
        rest += 7;
    return *rest == '(' || *rest == '\0';
}

static const char *const kind_names[KV_NKINDS] = {
    [KV_DO] = "DO", [KV_CALL] = "CALL", [KV_MPI] = "MPI", [KV_IO] = "IO",
    [KV_USER] = "USER", [KV_OMP] = "OMP", [KV_OTHER] = "OTHER",
};

const char *kv_kind_name(int kind)
{
    return kind >= 0 && kind < KV_NKINDS ? kind_names[kind] : "OTHER";
}

int kv_kind_parse(const char *word)
{
    for (int k = 0; k < KV_NKINDS; k++)
        if (strcmp(word, kind_names[k]) == 0)
            return k;
    return -1;
}

void kv_run_init(struct kv_run *run)
{
    memset(run, 0, sizeof *run);
    run->nranks = -1;
}

static void free_rank(struct kv_rank *r)
{
    free(r->rc);
    free(r->lc);
    free(r->threads);
    free(r->tregions);
    free(r->msgs);
    free(r->msg_bins);
    free(r->peers);
    for (size_t k = 0; k < r->nfiles; k++)
        free(r->files[k].name);
    free(r->files);
    free(r->tl.v);
    for (size_t k = 0; k < r->ntrees; k++)
        free(r->trees[k].paths);
    free(r->trees);
    for (size_t i = 0; i < r->nwarn; i++)
        free(r->warnings[i]);
    free(r->warnings);
}

void kv_run_free(struct kv_run *run)
{
    free(run->section_of_rank);
    free(run->path_counts);
    for (size_t i = 0; i < run->nsources; i++)
        free(run->sources[i]);
    free(run->sources);
    free(run->program);
    free(run->started);
    free(run->written_at);
    free(run->clock);
    free(run->overhead);
    free(run->pred.note);
    free(run->pred.reason);
    for (size_t i = 0; i < run->nextra; i++) {
        free(run->extra[i].key);
        free(run->extra[i].value);
    }
    free(run->extra);
    free(run->pred.rows);
    for (size_t i = 0; i < run->nroutines; i++) {
        free(run->routines[i].name);
        free(run->routines[i].file);
    }
    free(run->routines);
    for (size_t i = 0; i < run->nlocations; i++)
        free(run->locations[i].text);
    free(run->locations);
    for (size_t i = 0; i < run->nsections; i++)
        free_rank(&run->ranks[i]);
    free(run->ranks);
    free(run->routine_index.slot);
    free(run->location_index.slot);
    kv_run_init(run);
}

/* ------------------------------------------------------------------------ */
/* Hash tables                                                               */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;       /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return mix(h);
}

static uint64_t hash_location(int routine, int kind, int line, int occurrence)
{
    uint64_t h = (uint64_t)(uint32_t)routine;
    h = mix(h * 31 + (uint64_t)(uint32_t)kind);
    h = mix(h * 31 + (uint64_t)(uint32_t)line);
    return mix(h * 31 + (uint64_t)(uint32_t)occurrence);
}

/* The slot where the entry for `h` is or belongs; `same` tells whether
 * index i is the entry sought. */
static size_t probe(const struct kv_hash *t, uint64_t h,
                    bool (*same)(const struct kv_run *, int, const void *),
                    const struct kv_run *run, const void *key)
{
    size_t mask = t->cap - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask)
        if (t->slot[s] == 0 || same(run, t->slot[s] - 1, key))
            return s;
}

/* Make room for one more entry: the table is kept at most half full.
 * `rehash` gives the hash of entry i. */
static void grow(struct kv_hash *t, const struct kv_run *run,
                 uint64_t (*rehash)(const struct kv_run *, int))
{
    if (2 * (t->used + 1) <= t->cap)
        return;
    size_t ncap = t->cap ? 2 * t->cap : 64;
    int *old = t->slot;
    size_t ocap = t->cap;
    t->slot = km_xcalloc(ncap, sizeof *t->slot);
    t->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i])
            continue;
        size_t s = rehash(run, old[i] - 1) & (ncap - 1);
        while (t->slot[s])
            s = (s + 1) & (ncap - 1);
        t->slot[s] = old[i];
    }
    free(old);
}

static bool routine_is(const struct kv_run *run, int i, const void *key)
{
    return strcmp(run->routines[i].name, key) == 0;
}

static uint64_t routine_hash(const struct kv_run *run, int i)
{
    return hash_name(run->routines[i].name);
}

struct location_key {
    int routine, kind, line, occurrence;
};

static bool location_is(const struct kv_run *run, int i, const void *key)
{
    const struct location_key *k = key;
    const struct kv_location *l = &run->locations[i];
    return l->routine == k->routine && l->kind == k->kind &&
           l->line == k->line && l->occurrence == k->occurrence;
}

static uint64_t location_hash(const struct kv_run *run, int i)
{
    const struct kv_location *l = &run->locations[i];
    return hash_location(l->routine, l->kind, l->line, l->occurrence);
}

int kv_routine_find(const struct kv_run *run, const char *name)
{
    const struct kv_hash *t = &run->routine_index;
    if (!t->cap)
        return -1;
    size_t s = probe(t, hash_name(name), routine_is, run, name);
    return t->slot[s] - 1;
}

int kv_routine_intern(struct kv_run *run, const char *name)
{
    int found = kv_routine_find(run, name);
    if (found >= 0)
        return found;
    grow(&run->routine_index, run, routine_hash);
    KM_GROW(run->routines, run->caproutines, run->nroutines + 1);
    int id = (int)run->nroutines++;
    run->routines[id] = (struct kv_routine){ .name = km_xstrdup(name) };
    struct kv_hash *t = &run->routine_index;
    t->slot[probe(t, hash_name(name), routine_is, run, name)] = id + 1;
    t->used++;
    return id;
}

int kv_location_find(const struct kv_run *run, int routine, int kind, int line,
                     int occurrence)
{
    const struct kv_hash *t = &run->location_index;
    if (!t->cap)
        return -1;
    struct location_key k = { routine, kind, line, occurrence };
    size_t s = probe(t, hash_location(routine, kind, line, occurrence),
                     location_is, run, &k);
    return t->slot[s] - 1;
}

int kv_location_intern(struct kv_run *run, int routine, int kind, int line,
                       int occurrence, const char *text)
{
    int found = kv_location_find(run, routine, kind, line, occurrence);
    if (found >= 0)
        return found;
    grow(&run->location_index, run, location_hash);
    KM_GROW(run->locations, run->caplocations, run->nlocations + 1);
    int id = (int)run->nlocations++;
    run->locations[id] = (struct kv_location){
        .routine = routine, .kind = kind, .line = line,
        .occurrence = occurrence, .text = km_xstrdup(text),
    };
    struct location_key k = { routine, kind, line, occurrence };
    struct kv_hash *t = &run->location_index;
    t->slot[probe(t, hash_location(routine, kind, line, occurrence),
                  location_is, run, &k)] = id + 1;
    t->used++;
    return id;
}

/* ------------------------------------------------------------------------ */
/* Ranks                                                                     */

const struct kv_rank *kv_rank_seen(const struct kv_run *run, int rank)
{
    if (rank < 0 || (size_t)rank >= run->nsection_of_rank ||
        !run->section_of_rank[rank])
        return NULL;
    return &run->ranks[run->section_of_rank[rank] - 1];
}

struct kv_rank *kv_rank_add(struct kv_run *run, int rank)
{
    KM_GROW(run->ranks, run->capsections, run->nsections + 1);
    if (rank >= 0) {                 /* an index by rank number: no O(n^2) */
        size_t old = run->nsection_of_rank;
        KM_GROW(run->section_of_rank, run->nsection_of_rank, (size_t)rank + 1);
        memset(run->section_of_rank + old, 0,
               (run->nsection_of_rank - old) * sizeof *run->section_of_rank);
        run->section_of_rank[rank] = run->nsections + 1;
    }
    struct kv_rank *r = &run->ranks[run->nsections++];
    memset(r, 0, sizeof *r);
    r->rank = rank;
    return r;
}

struct kv_rcell *kv_rank_add_routine(struct kv_rank *r)
{
    KM_GROW(r->rc, r->caprc, r->nrc + 1);
    struct kv_rcell *c = &r->rc[r->nrc++];
    memset(c, 0, sizeof *c);
    return c;
}

struct kv_lcell *kv_rank_add_location(struct kv_rank *r)
{
    KM_GROW(r->lc, r->caplc, r->nlc + 1);
    struct kv_lcell *c = &r->lc[r->nlc++];
    memset(c, 0, sizeof *c);
    return c;
}

const char *const kv_thread_key[KV_NTFIGS] = {
    "total", "net", "mpi", "outside", "overhead"
};

struct kv_thread *kv_rank_add_thread(struct kv_rank *r)
{
    KM_GROW(r->threads, r->capthreads, r->nthreads + 1);
    struct kv_thread *t = &r->threads[r->nthreads++];
    memset(t, 0, sizeof *t);
    return t;
}

struct kv_tregion *kv_rank_add_tregion(struct kv_rank *r)
{
    KM_GROW(r->tregions, r->captregions, r->ntregions + 1);
    struct kv_tregion *t = &r->tregions[r->ntregions++];
    memset(t, 0, sizeof *t);
    return t;
}

struct kv_tree *kv_rank_add_tree(struct kv_rank *r)
{
    KM_GROW(r->trees, r->captrees, r->ntrees + 1);
    struct kv_tree *t = &r->trees[r->ntrees++];
    memset(t, 0, sizeof *t);
    return t;
}

struct kv_path *kv_tree_add_path(struct kv_tree *t)
{
    KM_GROW(t->paths, t->cappaths, t->npaths + 1);
    struct kv_path *p = &t->paths[t->npaths++];
    memset(p, 0, sizeof *p);
    return p;
}

struct kv_msg *kv_rank_add_msg(struct kv_rank *r)
{
    KM_GROW(r->msgs, r->capmsgs, r->nmsgs + 1);
    struct kv_msg *m = &r->msgs[r->nmsgs++];
    memset(m, 0, sizeof *m);
    return m;
}

void kv_rank_set_msg_bins(struct kv_rank *r, struct kv_msg *m,
                          const uint64_t bins[KV_MSG_BINS])
{
    m->first_bin = (uint32_t)r->nmsg_bins;
    m->nbins = 0;
    for (int b = 0; b < KV_MSG_BINS; b++)
        if (bins[b]) {
            KM_GROW(r->msg_bins, r->capmsg_bins, r->nmsg_bins + 1);
            r->msg_bins[r->nmsg_bins++] = (struct kv_msg_bin){ b, bins[b] };
            m->nbins++;
        }
}

const struct kv_msg_bin *kv_msg_bins(const struct kv_rank *r,
                                     const struct kv_msg *m)
{
    return r->msg_bins + m->first_bin;
}

/* Shrink *ptr, an array of `size` byte rows with room for *cap, to n. */
static void *fit(void *ptr, size_t *cap, size_t n, size_t size)
{
    if (*cap == n)
        return ptr;
    *cap = n;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    return km_xrealloc(ptr, n * size);
}

#define KV_FIT(ptr, cap, n) ((ptr) = fit((ptr), &(cap), (n), sizeof *(ptr)))

void kv_rank_trim(struct kv_rank *r)
{
    KV_FIT(r->rc, r->caprc, r->nrc);
    KV_FIT(r->lc, r->caplc, r->nlc);
    KV_FIT(r->warnings, r->capwarn, r->nwarn);
    KV_FIT(r->threads, r->capthreads, r->nthreads);
    KV_FIT(r->tregions, r->captregions, r->ntregions);
    KV_FIT(r->msgs, r->capmsgs, r->nmsgs);
    KV_FIT(r->msg_bins, r->capmsg_bins, r->nmsg_bins);
    KV_FIT(r->peers, r->cappeers, r->npeers);
    KV_FIT(r->files, r->capfiles, r->nfiles);
    KV_FIT(r->trees, r->captrees, r->ntrees);
    for (size_t k = 0; k < r->ntrees; k++)
        KV_FIT(r->trees[k].paths, r->trees[k].cappaths, r->trees[k].npaths);
}

struct kv_peer *kv_rank_add_peer(struct kv_rank *r)
{
    KM_GROW(r->peers, r->cappeers, r->npeers + 1);
    struct kv_peer *p = &r->peers[r->npeers++];
    memset(p, 0, sizeof *p);
    return p;
}

struct kv_file *kv_rank_add_file(struct kv_rank *r)
{
    KM_GROW(r->files, r->capfiles, r->nfiles + 1);
    struct kv_file *p = &r->files[r->nfiles++];
    memset(p, 0, sizeof *p);
    return p;
}

void kv_rank_add_warning(struct kv_rank *r, const char *text)
{
    KM_GROW(r->warnings, r->capwarn, r->nwarn + 1);
    r->warnings[r->nwarn++] = km_xstrdup(text);
}

static int by_rank(const void *a, const void *b)
{
    const struct kv_rank *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static void rehash(struct kv_hash *t, const struct kv_run *run, size_t n,
                   uint64_t (*hash)(const struct kv_run *, int))
{
    memset(t->slot, 0, t->cap * sizeof *t->slot);
    for (size_t i = 0; i < n; i++) {
        size_t s = hash(run, (int)i) & (t->cap - 1);
        while (t->slot[s])
            s = (s + 1) & (t->cap - 1);
        t->slot[s] = (int)i + 1;
    }
}

/* The new number of `old`: the next one if it has none yet. */
static int first_seen(int *map, int old, size_t *next)
{
    if (map[old] < 0)
        map[old] = (int)(*next)++;
    return map[old];
}

/* Renumber routines (and then locations) by first appearance in the
 * sections as they now stand. */
static void renumber(struct kv_run *run)
{
    size_t nr = run->nroutines, nl = run->nlocations, next = 0;
    int *rmap = km_xcalloc(nr + 1, sizeof *rmap), *lmap;
    for (size_t i = 0; i < nr; i++)
        rmap[i] = -1;
    for (size_t s = 0; s < run->nsections; s++)
        for (size_t k = 0; k < run->ranks[s].nrc; k++)
            first_seen(rmap, run->ranks[s].rc[k].routine, &next);
    struct kv_routine *rt = km_xcalloc(nr + 1, sizeof *rt);
    for (size_t i = 0; i < nr; i++)
        rt[rmap[i]] = run->routines[i];
    free(run->routines);
    run->routines = rt;
    run->caproutines = nr + 1;
    for (size_t i = 0; i < nl; i++)
        run->locations[i].routine = rmap[run->locations[i].routine];
    lmap = km_xcalloc(nl + 1, sizeof *lmap);
    for (size_t i = 0; i < nl; i++)
        lmap[i] = -1;
    next = 0;
    for (size_t s = 0; s < run->nsections; s++) {
        struct kv_rank *r = &run->ranks[s];
        for (size_t k = 0; k < r->nrc; k++)
            r->rc[k].routine = rmap[r->rc[k].routine];
        for (int k = 0; k < r->tl.ntop; k++)
            r->tl.top[k] = rmap[r->tl.top[k]];
        for (size_t k = 0; k < r->nlc; k++)
            r->lc[k].location = first_seen(lmap, r->lc[k].location, &next);
    }
    struct kv_location *lt = km_xcalloc(nl + 1, sizeof *lt);
    for (size_t i = 0; i < nl; i++)
        lt[lmap[i]] = run->locations[i];
    free(run->locations);
    run->locations = lt;
    run->caplocations = nl + 1;
    if (run->routine_index.cap)
        rehash(&run->routine_index, run, nr, routine_hash);
    if (run->location_index.cap)
        rehash(&run->location_index, run, nl, location_hash);
    free(rmap);
    free(lmap);
}

void kv_run_sort_ranks(struct kv_run *run)
{
    qsort(run->ranks, run->nsections, sizeof *run->ranks, by_rank);
    for (size_t i = 0; i < run->nsections; i++)     /* the index follows */
        if (run->ranks[i].rank >= 0 &&
            (size_t)run->ranks[i].rank < run->nsection_of_rank)
            run->section_of_rank[run->ranks[i].rank] = i + 1;
    renumber(run);
}

size_t kv_run_live_ranks(const struct kv_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->nsections; i++)
        n += !run->ranks[i].lost;
    return n;
}
