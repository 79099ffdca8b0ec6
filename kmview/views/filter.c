/*
 * filter.c — kmview filter (see filter.h).
 *
 * The cost model: a region's first TIME_PREDICTION_MODE_NUMBER executions
 * on a rank are measured (the Overhead line's first figure each), the rest
 * estimated (its second figure).  That model only shares out the overhead
 * each rank actually reports (libkm overhead): the figures printed are
 * that overhead, before and after, as the model divides it.
 *
 * Several runs (a test suite's programs) are judged run by run: a routine
 * is as distorted as it is in the run where it distorts most (among the
 * runs where it costs something that matters), and routines leave until
 * every run's estimated overhead is within the target.  A routine cheap
 * in one program and costly in another (LAPACK's SLARFG) leaves for the
 * sake of the first only if it matters there.  Runs too short to weigh
 * in the suite's time (a program of microseconds, where registering the
 * regions is all the overhead there is) are judged with the others only.
 *
 * libkm's figure is its own work at costs calibrated hot in the caches;
 * the instrumented code also slows the program's own (the calls, another
 * code layout, caches and branch predictors shared with libkm): on
 * LAPACK's tests the figure was half of what the run lost, a quarter once
 * filtered.  Given the plain build's time of each run (--plain), the rest
 * of what a run lost is shared out too, by executions (an event's share
 * of it goes with its routine, as its cost does), and lowering the
 * threshold saves none of it.
 */
#include "kmview/views/filter.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "control/control.h"
#include "kmview/write/out.h"
#include "support/buf.h"
#include "support/diag.h"

struct candidate {
    int routine;
    double elapsed;           /* all ranks */
    uint64_t count;
    double worst;             /* its distortion in the run it distorts most */
    bool inside_only;         /* only its loops and calls would go */
};

/* One run's totals, and what the routines left out take off its model;
 * with the plain build's time, what it lost beyond libkm's figure (rest)
 * and its events, and how many of them the routines left out take. */
struct tally {
    double total, overhead, model, dropped;
    double plain;             /* the plain run's time, over ranks; 0: none */
    double rest, events, events_dropped;
    int judged;               /* long enough to be judged on its own */
};

/* A routine's cost in one run matters when it is this share of the run's
 * time without overhead: below that, its distortion there says nothing. */
#define MATERIAL 0.005
/* A routine that takes this share of the time of all the runs together,
 * and whose entries cost at most WORTH of its time to measure, is what
 * the user measures for: it stays measured; when its loops and calls cost
 * too much, it is measured without them (an IF_ROUTINE block at
 * ROUTINE_MEASURED_LEVEL = 1).  (One whose entries cost more adds more
 * than a fifth to its own time, mostly estimated: LAPACK's LSAME, 1% of
 * xlintstd's time, 89 million calls of 5 ns, cost 68% of that to count;
 * keeping such routines left the run at 1.5 times the plain one.) */
#define TAKES_THE_TIME 0.01
#define WORTH 0.2

/* A region's cost on one rank: measured up to the threshold, then
 * estimated. */
static double events_cost(uint64_t n, long threshold, double measured,
                          double estimated)
{
    double m = threshold > 0 && n > (uint64_t)threshold ? (double)threshold
                                                        : (double)n;
    return m * measured + ((double)n - m) * estimated;
}

/* The name after the last "::" or "/" (a procedure's own name). */
static const char *bare(const char *name)
{
    const char *b = name;
    for (const char *p = name; *p; p++)
        if (*p == '/' || (p[0] == ':' && p[1] == ':'))
            b = p + (*p == '/' ? 1 : 2);
    return b;
}

/* CALL NAME(...) -> NAME, upper case, into buf; false if not a CALL. */
static bool callee_of(const char *text, char *buf, size_t size)
{
    while (isspace((unsigned char)*text))
        text++;
    if (strncasecmp(text, "CALL", 4) != 0)
        return false;
    text += 4;
    while (isspace((unsigned char)*text))
        text++;
    size_t n = 0;
    while ((isalnum((unsigned char)*text) || *text == '_') && n + 1 < size)
        buf[n++] = (char)toupper((unsigned char)*text++);
    buf[n] = 0;
    return n > 0;
}

/* How much measuring distorts a routine: its cost over its time (a
 * routine that takes nothing measurable first). */
static double distortion(double cost, double elapsed)
{
    return elapsed > 0 ? cost / elapsed : HUGE_VAL;
}

/* The most distorted first: what goes costs most for what it tells, and
 * the routines that take the time stay measured longest. */
static int by_distortion(const void *a, const void *b)
{
    double x = ((const struct candidate *)a)->worst;
    double y = ((const struct candidate *)b)->worst;
    return (x < y) - (x > y);
}

static double plain_of(const struct tally *t)
{
    return t->plain > 0 ? t->plain : t->total - t->overhead;
}

/* What the run loses to measuring once the routines left out are gone. */
static double overhead_after(const struct tally *t)
{
    /* (the saved events are counted once each, so never more than the
     * model: the bounds only keep rounding from going below 0) */
    double kept = t->model > 0 ? 1 - t->dropped / t->model : 1;
    double rest_kept = t->events > 0 ? 1 - t->events_dropped / t->events
                                     : 1;
    return t->overhead * (kept > 0 ? kept : 0) +
           t->rest * (rest_kept > 0 ? rest_kept : 0);
}

static bool over_target(const struct tally *t, double target)
{
    return t->judged && plain_of(t) > 0 &&
           overhead_after(t) > target * plain_of(t);
}

/* The share of its time a run's overhead is estimated to be. */
static double share_after(const struct tally *t)
{
    return plain_of(t) > 0 ? overhead_after(t) / plain_of(t) : 0;
}

/* The base control file with every active IGNORED_ROUTINES line (and,
 * with `threshold`, TIME_PREDICTION_MODE_NUMBER line) and an earlier
 * proposal's heading taken out, and `line` (the lines proposed) put
 * before END_OF_DATA (below it, all is comment) or at the end. */
static bool copy_base(struct km_buf *out, const char *path, const char *line,
                      bool threshold)
{
    struct km_buf in = {0};
    if (!km_buf_read_file(&in, path)) {
        km_buf_free(&in);
        return false;
    }
    const char *p = in.data ? in.data : "";
    const char *end = p + in.len;
    bool old_heading = false;    /* in an earlier proposal's heading */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *q = p;
        while (q < e && isspace((unsigned char)*q))
            q++;
        /* a base that is an earlier proposal: its figures are not this
         * one's (its heading ends at a line of "!" alone) */
        if ((size_t)(e - q) >= 27 &&
            strncmp(q, "! Proposed by kmview filter", 27) == 0)
            old_heading = true;
        if (old_heading) {
            old_heading = !(e - q == 1 && *q == '!');
            p = nl ? nl + 1 : end;
            continue;
        }
        if (line && (size_t)(e - q) >= 11 &&
            strncasecmp(q, "END_OF_DATA", 11) == 0) {
            km_buf_adds(out, line);
            line = NULL;
        }
        bool replaced =
            ((size_t)(e - q) >= 16 &&
             strncasecmp(q, "IGNORED_ROUTINES", 16) == 0) ||
            (threshold && (size_t)(e - q) >= 27 &&
             strncasecmp(q, "TIME_PREDICTION_MODE_NUMBER", 27) == 0);
        if (!replaced) {
            km_buf_add(out, p, (size_t)(e - p));
            km_buf_addc(out, '\n');
        }
        p = nl ? nl + 1 : end;
    }
    if (line)
        km_buf_adds(out, line);
    km_buf_free(&in);
    return true;
}

static void add_lower(struct km_buf *b, const char *s)
{
    for (; *s; s++)
        km_buf_addc(b, (char)tolower((unsigned char)*s));
}

/* Every routine of every run, by name, and by its own name (a CALL
 * statement names no module or host): same[b] lists, through next[], the
 * routines whose own name is bare name b. */
struct routine_names {
    struct kv_run names, bares;
    int *first, *next;
};

static void names_build(struct routine_names *n, const struct kv_run *runs,
                        size_t nruns)
{
    kv_run_init(&n->names);
    kv_run_init(&n->bares);
    for (size_t k = 0; k < nruns; k++)
        for (size_t r = 0; r < runs[k].nroutines; r++)
            kv_routine_intern(&n->names, runs[k].routines[r].name);
    size_t nr = n->names.nroutines;
    n->first = km_xmalloc(sizeof *n->first * (nr + 1));
    n->next = km_xmalloc(sizeof *n->next * (nr + 1));
    for (size_t r = 0; r < nr; r++)
        n->first[r] = -1;
    for (size_t r = nr; r-- > 0;) {
        int b = kv_routine_intern(&n->bares, bare(n->names.routines[r].name));
        n->next[r] = n->first[b];
        n->first[b] = (int)r;
    }
}

static void names_free(struct routine_names *n)
{
    kv_run_free(&n->names);
    kv_run_free(&n->bares);
    free(n->first);
    free(n->next);
}

/* One run's events into c[] (indexed by the name's index in n->names),
 * its times into *total and *overhead. */
/* One run's locations, each once (summed over its ranks), for what a
 * set of routines left out saves: a location goes when its routine
 * goes or is measured without its loops and calls, and a CALL statement
 * also when its callee goes; counted once however many of those go
 * (a CALL R inside R, or a call between two routines that both go,
 * would otherwise be saved twice, and the proposal promised a negative
 * overhead). */
struct run_sites {
    size_t n;                 /* the run's locations */
    double *cost, *events;    /* [location] */
    int *owner;               /* [location]: its routine's index by name */
    int *callee;              /* [location]: a CALL's callee's bare name
                                 (rn->bares), or -1 */
    unsigned char *gone;      /* [location]: saved already */
};

/* Cells of the routine x run matrices. */
struct cells {
    double *cost, *elapsed;   /* [routine * nruns + run] */
    double *inner;            /* the part of cost its own locations make */
    double *events, *inner_events;   /* executions measured, the same way */
    double *entry, *entry_events;    /* its entries alone */
    struct run_sites *sites;  /* [run] */
    size_t nruns;
};


/* Cells for routines 0..nr (nr: no routine's) of nruns runs, zero. */
static struct cells cells_new(size_t nr, size_t nruns)
{
    size_t n = (nr + 1) * nruns;
    return (struct cells){ km_xcalloc(n, sizeof(double)),
                           km_xcalloc(n, sizeof(double)),
                           km_xcalloc(n, sizeof(double)),
                           km_xcalloc(n, sizeof(double)),
                           km_xcalloc(n, sizeof(double)),
                           km_xcalloc(n, sizeof(double)),
                           km_xcalloc(n, sizeof(double)),
                           km_xcalloc(nruns, sizeof(struct run_sites)),
                           nruns };
}

static void cells_free(struct cells *m)
{
    free(m->cost);
    free(m->elapsed);
    free(m->inner);
    free(m->events);
    free(m->inner_events);
    free(m->entry);
    free(m->entry_events);
    for (size_t k = 0; k < m->nruns; k++) {
        struct run_sites *s = &m->sites[k];
        free(s->cost);
        free(s->events);
        free(s->owner);
        free(s->callee);
        free(s->gone);
    }
    free(m->sites);
}

/* What leaving out candidate x takes from run k beyond what the
 * candidates left out before it took (`commit`: and mark it taken): its
 * entries, unless it stays measured without its loops and calls, and
 * every location not taken yet that is its own or, when it goes, calls
 * it.  `bare_x` is its bare name's index in rn->bares. */
static void marginal(struct cells *m, const struct candidate *x, int bare_x,
                     size_t k, bool commit, double *cost, double *events)
{
    size_t i = (size_t)x->routine * m->nruns + k;
    struct run_sites *s = &m->sites[k];
    *cost = x->inside_only ? 0 : m->entry[i];
    *events = x->inside_only ? 0 : m->entry_events[i];
    for (size_t l = 0; l < s->n; l++) {
        if (s->gone[l] || !(s->owner[l] == x->routine ||
                            (!x->inside_only && bare_x >= 0 &&
                             s->callee[l] == bare_x)))
            continue;
        *cost += s->cost[l];
        *events += s->events[l];
        if (commit)
            s->gone[l] = 1;
    }
}

/* The bare name (rn->bares) of routine r (rn->names), or -1. */
static int bare_index(const struct routine_names *rn, int r)
{
    return kv_routine_find(&rn->bares, bare(rn->names.routines[r].name));
}

/* What leaving out candidate x takes off run k's model. */
static double saving(const struct cells *m, const struct candidate *x,
                     size_t k)
{
    size_t i = (size_t)x->routine * m->nruns + k;
    return x->inside_only ? m->inner[i] : m->cost[i];
}

/* The events leaving out candidate x takes from run k. */
static double saving_events(const struct cells *m, const struct candidate *x,
                            size_t k)
{
    size_t i = (size_t)x->routine * m->nruns + k;
    return x->inside_only ? m->inner_events[i] : m->events[i];
}

/* The share of run k's rest (what it lost beyond libkm's figure) that
 * `events` of its events hold. */
static double rest_share(const struct tally *t, double events)
{
    return t->events > 0 ? t->rest * events / t->events : 0;
}

/* x's distortion in the run it distorts most, among those where what
 * leaving it out saves matters; `entries`: what measuring its entries
 * alone (and its call sites) costs, not its loops and calls. */
static double worst_distortion(const struct cells *m, const struct candidate *x,
                               const struct tally *t, bool entries)
{
    double worst = 0;
    for (size_t k = 0; k < m->nruns; k++) {
        size_t i = (size_t)x->routine * m->nruns + k;
        double cost = entries ? m->cost[i] - m->inner[i] : saving(m, x, k);
        cost += rest_share(&t[k], entries ? m->events[i] - m->inner_events[i]
                                          : saving_events(m, x, k));
        double el = m->elapsed[(size_t)x->routine * m->nruns + k];
        if (cost > 0 && cost >= MATERIAL * plain_of(&t[k]) &&
            distortion(cost, el) > worst)
            worst = distortion(cost, el);
    }
    return worst;
}

static void add_cell(struct cells *m, struct candidate *c, int r, size_t k,
                     double cost, double events, double elapsed)
{
    size_t i = (size_t)r * m->nruns + k;
    c[r].elapsed += elapsed;
    m->cost[i] += cost;
    m->events[i] += events;
    m->elapsed[i] += elapsed;
}

static int add_run(const struct kv_run *run, size_t k,
                   const struct km_settings *set,
                   const struct routine_names *n, struct candidate *c,
                   struct cells *m, struct tally *t)
{
    double measured, estimated;
    if (!run->overhead) {
        kv_eprintf("%s:1:1: error: the header has no Overhead line (a "
                "KM_output of version 2 has one): nothing to estimate from\n",
                run->nsources ? run->sources[0] : "input");
        return -1;
    }
    if (sscanf(run->overhead, "%lf s per measured entry and exit, %lf s per "
               "estimated one", &measured, &estimated) != 2) {
        kv_eprintf("%s:%ld:%d: error: the Overhead line is not 'T s per "
                "measured entry and exit, T s per estimated one': nothing to "
                "estimate from\n", run->sources[run->overhead_source],
                run->overhead_line, run->overhead_col);
        return -1;
    }
    int *to = km_xcalloc(run->nroutines + 1, sizeof *to);
    for (size_t r = 0; r < run->nroutines; r++)
        to[r] = kv_routine_find(&n->names, run->routines[r].name);
    /* each location once, and each CALL location's callee, by its bare
     * name (-1: none) */
    struct run_sites *sites = &m->sites[k];
    size_t nl = run->nlocations;
    sites->n = nl;
    sites->cost = km_xcalloc(nl + 1, sizeof *sites->cost);
    sites->events = km_xcalloc(nl + 1, sizeof *sites->events);
    sites->owner = km_xcalloc(nl + 1, sizeof *sites->owner);
    sites->callee = km_xcalloc(nl + 1, sizeof *sites->callee);
    sites->gone = km_xcalloc(nl + 1, sizeof *sites->gone);
    int *callee = sites->callee;
    char name[256];
    for (size_t l = 0; l < nl; l++) {
        const struct kv_location *loc = &run->locations[l];
        sites->owner[l] = to[loc->routine];
        callee[l] = loc->kind == KV_CALL &&
                    callee_of(loc->text, name, sizeof name)
                    ? kv_routine_find(&n->bares, name) : -1;
    }
    for (size_t s = 0; s < run->nsections; s++) {
        const struct kv_rank *rk = &run->ranks[s];
        if (rk->lost)
            continue;
        if (!isnan(rk->fig[KV_F_TOTAL]))
            t->total += rk->fig[KV_F_TOTAL];
        if (!isnan(rk->fig[KV_F_OVERHEAD]))
            t->overhead += rk->fig[KV_F_OVERHEAD];
        for (size_t i = 0; i < rk->nrc; i++) {
            const struct kv_rcell *rc = &rk->rc[i];
            double e = events_cost(rc->count, set->threshold, measured,
                                   estimated);
            add_cell(m, c, to[rc->routine], k, e, (double)rc->count,
                     rc->elapsed);
            m->entry[(size_t)to[rc->routine] * m->nruns + k] += e;
            m->entry_events[(size_t)to[rc->routine] * m->nruns + k] +=
                (double)rc->count;
            c[to[rc->routine]].count += rc->count;
            t->model += e;
            t->events += (double)rc->count;
        }
        for (size_t i = 0; i < rk->nlc; i++) {
            const struct kv_lcell *lc = &rk->lc[i];
            const struct kv_location *loc = &run->locations[lc->location];
            double e = events_cost(lc->count, set->threshold, measured,
                                   estimated);
            double ev = (double)lc->count;
            t->model += e;
            t->events += ev;
            add_cell(m, c, to[loc->routine], k, e, ev, 0); /* gone with it */
            m->inner[(size_t)to[loc->routine] * m->nruns + k] += e;
            m->inner_events[(size_t)to[loc->routine] * m->nruns + k] += ev;
            sites->cost[lc->location] += e;
            sites->events[lc->location] += ev;
            /* and its call sites (a CALL R inside R is R's already) */
            int b = callee[lc->location];
            for (int r = b >= 0 ? n->first[b] : -1; r >= 0; r = n->next[r])
                if (r != to[loc->routine])
                    add_cell(m, c, r, k, e, ev, 0);
        }
    }
    free(to);
    return 0;
}

/* The lowest threshold proposed: below it the estimates would rest on
 * too few measured executions of each routine. */
#define LOWEST_THRESHOLD 100

/* When leaving routines out is not enough: the threshold, a tenth of the
 * base one at a time down to LOWEST_THRESHOLD, at which fewer executions
 * measured before sampling starts bring every run within the target (or
 * the lowest, if none does); the runs' `dropped` then hold what it takes
 * off their model too.  Returns the base threshold when none helps. */
static long lower_threshold(const struct kv_run *runs, size_t nruns,
                            const struct km_settings *set,
                            const struct routine_names *rn,
                            const struct candidate *drop, size_t ndrop,
                            struct tally *t, double target)
{
    size_t nr = rn->names.nroutines;
    long best = set->threshold;
    double *dropped = km_xcalloc(nruns, sizeof *dropped);
    for (long th = set->threshold / 10; th >= LOWEST_THRESHOLD; th /= 10) {
        struct km_settings at = *set;
        at.threshold = th;
        struct candidate *scratch = km_xcalloc(nr + 1, sizeof *scratch);
        struct cells m = cells_new(nr, nruns);
        struct tally *u = km_xcalloc(nruns, sizeof *u);
        int failed = 0;
        for (size_t k = 0; k < nruns && !failed; k++)
            failed = add_run(&runs[k], k, &at, rn, scratch, &m, &u[k]);
        bool within = !failed;
        for (size_t k = 0; k < nruns && !failed; k++) {
            double saved = 0;
            for (size_t i = 0; i < ndrop; i++) {
                double cost, events;
                marginal(&m, &drop[i], bare_index(rn, drop[i].routine), k,
                         true, &cost, &events);
                saved += cost;
            }
            /* what this threshold's model keeps, in the base model's
             * terms (the one that shares out the overhead) */
            double kept = u[k].model - saved;
            dropped[k] = t[k].model - (kept > 0 ? kept : 0);
            struct tally after = t[k];
            after.dropped = dropped[k];
            within = within && !over_target(&after, target);
        }
        cells_free(&m);
        free(u);
        free(scratch);
        if (failed)
            break;
        best = th;
        if (within || th / 10 < LOWEST_THRESHOLD) {
            for (size_t k = 0; k < nruns; k++)
                t[k].dropped = dropped[k];
            break;
        }
    }
    free(dropped);
    return best;
}

/* Run t took `plain` seconds on each of its `ranks` ranks unmeasured:
 * what it lost beyond libkm's figure is its rest. */
static void calibrate(struct tally *t, double plain, size_t ranks)
{
    t->plain = plain * (double)ranks;
    double lost = t->total - t->plain;
    t->rest = lost > t->overhead ? lost - t->overhead : 0;
}

int kv_filter(FILE *to, const struct kv_run *runs, size_t nruns,
              const struct kv_filter_opts *o)
{
    const char *path = o->control ? o->control : o->default_control;
    struct km_settings set;
    km_settings_default(&set);
    struct km_diag d = {0};
    if (!km_control_read(path, &set, &d)) {
        km_diag_flush(&d);
        km_diag_free(&d);
        km_settings_free(&set);
        return -1;
    }
    km_diag_free(&d);

    struct routine_names rn;
    names_build(&rn, runs, nruns);
    const struct kv_run *names = &rn.names;
    size_t nranks = 0;
    for (size_t k = 0; k < nruns; k++)
        nranks += kv_run_live_ranks(&runs[k]);
    size_t nr = names->nroutines;
    struct candidate *c = km_xcalloc(nr + 1, sizeof *c);
    for (size_t r = 0; r < nr; r++)
        c[r].routine = (int)r;
    struct cells m = cells_new(nr, nruns);
    struct tally *t = km_xcalloc(nruns, sizeof *t);
    int failed = 0;
    for (size_t k = 0; k < nruns && !failed; k++)
        failed = add_run(&runs[k], k, &set, &rn, c, &m, &t[k]);
    if (failed) {
        cells_free(&m);
        free(t);
        free(c);
        names_free(&rn);
        km_settings_free(&set);
        return -1;
    }
    if (o->plain)
        for (size_t k = 0; k < nruns; k++)
            calibrate(&t[k], o->plain[k], kv_run_live_ranks(&runs[k]));
    double total = 0, overhead = 0, rest = 0, plain = 0;
    for (size_t k = 0; k < nruns; k++) {
        total += t[k].total;
        overhead += t[k].overhead;
        rest += t[k].rest;
        plain += plain_of(&t[k]);
    }
    /* Candidates: measuring costs more than `distortion` of their time in
     * a run where they matter, the most distorted first. */
    size_t n = 0;
    for (size_t r = 0; r < nr; r++) {
        c[r].inside_only = c[r].elapsed >= TAKES_THE_TIME * plain &&
                           worst_distortion(&m, &c[r], t, true) <= WORTH;
        c[r].worst = worst_distortion(&m, &c[r], t, false);
        if (c[r].count > 0 && c[r].worst > o->distortion &&
            !km_is_ignored(&set, names->routines[r].name))
            c[n++] = c[r];
    }
    qsort(c, n, sizeof *c, by_distortion);
    /* the runs judged on their own */
    for (size_t k = 0; k < nruns; k++)
        t[k].judged = plain_of(&t[k]) >= MATERIAL * plain;
    /* Leave out, in that order, what costs something in a run still over
     * the target, until none is. */
    size_t ndrop = 0;
    double kept_worst = 0;
    /* what each routine left out saves in each run beyond those before
     * it: [drop * nruns + run] */
    double *saved = km_xcalloc(n * nruns + 1, sizeof *saved);
    double *saved_events = km_xcalloc(n * nruns + 1, sizeof *saved_events);
    for (size_t i = 0; i < n; i++) {
        int helps = 0, any_over = 0;
        int b = bare_index(&rn, c[i].routine);
        for (size_t k = 0; k < nruns; k++)
            if (over_target(&t[k], o->target)) {
                double cost, events;
                any_over = 1;
                marginal(&m, &c[i], b, k, false, &cost, &events);
                helps |= cost > 0;
            }
        if (!any_over || !helps) {
            if (c[i].worst > kept_worst)
                kept_worst = c[i].worst;
            continue;
        }
        for (size_t k = 0; k < nruns; k++) {
            double *cost = &saved[ndrop * nruns + k];
            double *events = &saved_events[ndrop * nruns + k];
            marginal(&m, &c[i], b, k, true, cost, events);
            t[k].dropped += *cost;
            t[k].events_dropped += *events;
        }
        c[ndrop++] = c[i];
    }
    long threshold = set.threshold;
    bool any_over = false;
    for (size_t k = 0; k < nruns; k++)
        any_over = any_over || over_target(&t[k], o->target);
    if (any_over && set.threshold > LOWEST_THRESHOLD)
        threshold = lower_threshold(runs, nruns, &set, &rn, c, ndrop, t,
                                    o->target);
    double after = 0;
    size_t nover = 0, njudged = 0, worst_run = 0;
    for (size_t k = 0; k < nruns; k++) {
        after += overhead_after(&t[k]);
        nover += over_target(&t[k], o->target);
        njudged += t[k].judged;
        if (t[k].judged && (!t[worst_run].judged ||
                            share_after(&t[k]) > share_after(&t[worst_run])))
            worst_run = k;
    }

    struct km_buf out = {0};
    if (nruns == 1)
        km_buf_printf(&out, "! Proposed by kmview filter from %s (%zu "
                      "rank%s).\n", runs[0].nsources ? runs[0].sources[0]
                      : "?", nranks, nranks == 1 ? "" : "s");
    else
        km_buf_printf(&out, "! Proposed by kmview filter from %zu runs "
                      "(%s ...), %zu ranks in all.\n", nruns,
                      runs[0].nsources ? runs[0].sources[0] : "?", nranks);
    if (o->plain && total <= plain)
        km_buf_printf(&out, "! Against the plain build (--plain): %s no "
                      "slower than it (%.4g s against %.4g s); libkm's "
                      "overhead figure, %.4g s, is all there is to go by.\n",
                      nruns == 1 ? "that run was" : "those runs were", total,
                      plain, overhead);
    else if (o->plain && rest <= 0)
        km_buf_printf(&out, "! Against the plain build (--plain): %s lost "
                      "%.4g s (%.1f%% of %.4g s), no more than libkm's "
                      "overhead figure, %.4g s (its calibrated costs "
                      "overstate the cost here, or the plain run was slower "
                      "than usual): that figure is what the model goes "
                      "by.\n",
                      nruns == 1 ? "that run" : "those runs", total - plain,
                      plain > 0 ? 100 * (total - plain) / plain : 0.0, plain,
                      overhead);
    else if (o->plain)
        km_buf_printf(&out, "! Against the plain build (--plain): %s lost "
                      "%.4g s (%.1f%% of %.4g s), of which libkm's overhead "
                      "figure %.4g s; the rest, %.4g s, is what the "
                      "instrumented code does to the program's own, shared "
                      "out by executions.\n",
                      nruns == 1 ? "that run" : "those runs", total - plain,
                      plain > 0 ? 100 * (total - plain) / plain : 0.0, plain,
                      overhead, rest);
    else
        km_buf_printf(&out, "! libkm overhead of %s: %.4g s of %.4g s "
                      "(%.1f%% of the time without it).\n! (Not in it: what "
                      "the instrumented code does to the program's own code; "
                      "give --plain, the plain build's time, to count that "
                      "too.)\n",
                      nruns == 1 ? "that run" : "those runs", overhead, total,
                      plain > 0 ? 100 * overhead / plain : 0.0);
    size_t nout = 0, ninside = 0;
    for (size_t k = 0; k < ndrop; k++)
        ninside += c[k].inside_only;
    nout = ndrop - ninside;
    km_buf_printf(&out, "! With this file, estimated: %.4g s (%.1f%%), ",
                  after, plain > 0 ? 100 * after / plain : 0.0);
    if (nout)
        km_buf_printf(&out, "leaving out %zu routine%s, the most distorted "
                      "first (each costs over %.0f%% of its own time to "
                      "measure)", nout, nout == 1 ? "" : "s",
                      100 * o->distortion);
    else
        km_buf_adds(&out, "leaving out no routine");
    if (ninside)
        km_buf_printf(&out, ", and the loops and calls inside %zu that take "
                      "%.0f%% of the time or more", ninside,
                      100 * TAKES_THE_TIME);
    km_buf_adds(&out, ".\n");
    if (threshold != set.threshold)
        km_buf_printf(&out, "! And TIME_PREDICTION_MODE_NUMBER %ld instead of "
                      "%ld: each region's first %ld executions measured, "
                      "the others sampled (their times estimated).\n",
                      threshold, set.threshold, threshold);
    if (nruns > 1 && njudged > 0)
        km_buf_printf(&out, "! Runs within %.1f%%: %zu of the %zu that take "
                      "%.1f%% of the time or more; the run worst off (%s): "
                      "%.1f%%.\n", 100 * o->target, njudged - nover,
                      njudged, 100 * MATERIAL,
                      runs[worst_run].nsources ? runs[worst_run].sources[0]
                                               : "?",
                      100 * share_after(&t[worst_run]));
    if (kept_worst > 0)
        km_buf_printf(&out, "! Every routine still measured costs at most "
                      "%.1f%% of its own time to measure where it "
                      "matters.\n", 100 * kept_worst);
    if (nover > 0)
        km_buf_printf(&out, "! (The target, %.1f%%, is out of reach without "
                      "leaving out routines that are worth measuring%s.)\n",
                      100 * o->target, threshold != set.threshold
                      ? ", even so" : "");
    for (int inside = 0; inside <= 1; inside++) {
        if ((inside ? ninside : nout) == 0)
            continue;
        km_buf_printf(&out, "!   %-28s %14s %14s %14s\n",
                      inside ? "measured without loops, calls" : "left out",
                      "calls", "s per call", "overhead(s)");
        for (size_t k = 0; k < ndrop; k++) {
            if (c[k].inside_only != inside)
                continue;
            double cost = 0;
            for (size_t j = 0; j < nruns; j++)
                cost += (t[j].model > 0 ? t[j].overhead *
                         saved[k * nruns + j] / t[j].model : 0) +
                        rest_share(&t[j], saved_events[k * nruns + j]);
            km_buf_printf(&out, "!   %-28s %14llu %14.4g %14.4g\n",
                          names->routines[c[k].routine].name,
                          (unsigned long long)c[k].count,
                          c[k].elapsed / (double)c[k].count, cost);
        }
    }
    cells_free(&m);
    free(t);
    free(saved);
    free(saved_events);
    km_buf_adds(&out, "!\n");
    struct km_buf line = {0};
    km_buf_adds(&line, "IGNORED_ROUTINES = ");
    for (int k = 0; k < set.nignored; k++) {
        add_lower(&line, set.ignored[k]);
        if (k + 1 < set.nignored || nout > 0)
            km_buf_addc(&line, ',');
    }
    size_t listed = 0;
    for (size_t k = 0; k < ndrop; k++) {
        if (c[k].inside_only)
            continue;
        add_lower(&line, names->routines[c[k].routine].name);
        if (++listed < nout)
            km_buf_addc(&line, ',');
    }
    km_buf_addc(&line, '\n');
    if (ninside) {
        km_buf_adds(&line, "IF_ROUTINE = ");
        listed = 0;
        for (size_t k = 0; k < ndrop; k++) {
            if (!c[k].inside_only)
                continue;
            add_lower(&line, names->routines[c[k].routine].name);
            if (++listed < ninside)
                km_buf_addc(&line, ',');
        }
        km_buf_adds(&line, "\n  ROUTINE_MEASURED_LEVEL = 1\nEND_IF\n");
    }
    if (threshold != set.threshold)
        km_buf_printf(&line, "TIME_PREDICTION_MODE_NUMBER = %ld\n", threshold);
    bool ok = copy_base(&out, path, line.data, threshold != set.threshold);
    km_buf_free(&line);
    if (ok) {
        fwrite(out.data, 1, out.len, to);
    } else {
        kv_eprintf("%s: error: cannot read the control file\n", path);
    }
    km_buf_free(&out);
    free(c);
    names_free(&rn);
    km_settings_free(&set);
    return ok ? 0 : -1;
}
