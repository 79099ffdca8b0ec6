/*
 * km_snapshot.c — snapshots of the figures (struct km_report).
 *
 * Owns copying a thread's call paths and open frames, closing the open
 * frames on the copy (as if they closed now), summing the settled paths
 * into the regions, fitting locations into their parents, the totals, the
 * prediction, and the rank's shared tables and time slots.
 *
 * Must never change the live figures (a snapshot may be taken from a
 * signal handler, between any two instructions of the hot path), or
 * allocate other than with km_mem.
 */
#include "runtime/km_core.h"

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */

void km_report_free(struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nothers; i++)
        km_report_free(&rep->others[i]);
    km_mem_free(rep->others);
    rep->others = NULL;
    rep->nothers = 0;
    km_mem_free(rep->reg);
    rep->reg = NULL;
    km_mem_free(rep->msg);
    rep->msg = NULL;
    km_mem_free(rep->peers);
    rep->peers = NULL;
    rep->npeers = 0;
    km_mem_free(rep->files);
    rep->files = NULL;
    rep->nfiles = 0;
    km_tl_free(rep->tl);
    rep->tl = NULL;
    km_mem_free(rep->paths);
    rep->paths = NULL;
    rep->npaths = 0;
}

/* Clock reads so far: two per measured execution, less one per open
 * measured frame and the reads closing frames shared, plus the others. */
static uint64_t clock_reads(const struct km_thread *t,
                            const struct km_counters *s, int32_t open)
{
    uint64_t n = 2 * s->nmeas - (uint64_t)open - t->saved_reads;
    n += __atomic_load_n(&km_st.cold_reads, __ATOMIC_RELAXED);
    n += __atomic_load_n(&t->trace_reads, __ATOMIC_RELAXED);
    return n;
}

/* Declared redundant time so far, net of the MPI calls inside it, as if
 * the open frames mf[1..msp] closed at the snapshot (their elapsed times
 * in e[]); redundant regions and MPI calls are always measured. */
static km_time redundant_so_far(const struct km_thread *t,
                                const struct km_mframe *mf, int32_t msp,
                                const km_time *e)
{
    km_time red = t->red_time - t->red_mpi;
    int32_t m = 1;
    while (m <= msp && !(mf[m].n->r->hooks & KM_HOOK_REDUNDANT))
        m++;
    if (m > msp)
        return red;
    red += e[m];                     /* the outermost one open */
    for (m++; m <= msp; m++)
        if (mf[m].n->r->hooks & KM_HOOK_MPI)
            red -= e[m];
    return red;
}

/* A loop, I/O statement or user region never outlasts the region around
 * it: an estimate that does is cut to it (callees need nothing of the
 * kind, their frames already hold what is inside them). */
static void fit_in_parent(struct km_region *reg, int32_t id, uint8_t *done)
{
    struct km_region *q = &reg[id - 1];
    if (done[id - 1])
        return;
    done[id - 1] = 1;
    if (KM_KIND_IS_ROUTINE(q->kind) || q->parent <= 0 || q->parent == id)
        return;
    fit_in_parent(reg, q->parent, done);
    km_time limit = reg[q->parent - 1].elapsed;
    if (q->callee || q->elapsed <= limit)
        return;
    km_time cut = q->elapsed - limit;
    q->est_el = q->est_el > cut ? q->est_el - cut : 0;
    q->elapsed = limit;
    if (q->excl > limit) {           /* its own time, too */
        cut = q->excl - limit;
        q->est_excl = q->est_excl > cut ? q->est_excl - cut : 0;
        q->excl = limit;
    }
}

static void fit_locations(struct km_report *rep)
{
    uint8_t *done = km_mem_alloc((size_t)rep->nreg + 1);
    if (!done)
        return;
    memset(done, 0, (size_t)rep->nreg + 1);
    for (int32_t i = 0; i < rep->nreg; i++)
        fit_in_parent(rep->reg, i + 1, done);
    km_mem_free(done);
}

static void add_routine(struct km_report *rep, const struct km_region *r)
{
    rep->routine_counts += r->count;
    rep->net += r->excl;
    rep->net_est += r->est_excl;
    rep->estimated += r->est_excl;
    rep->extrapolated |= r->count > r->measured;
    rep->net_marked |= KM_EST_EXCL(r);
    if ((r->flags & KM_F_MPI_UNMEASURED) && r->count > 0 &&
        rep->mpi_unmeasured++ == 0)
        rep->mpi_unmeasured_first = r->name;
}

static void add_mpi(struct km_report *rep, const struct km_region *r,
                    struct km_region *owner)
{
    rep->estimated += r->est_excl;
    if (r->hooks & KM_HOOK_STARTUP) {
        rep->startup += r->excl;
        return;
    }
    rep->mpi += r->excl;
    owner->mpi += r->excl;
    rep->mpi_est |= KM_EST_EXCL(r);
    owner->mpi_est |= KM_EST_EXCL(r);
}

/* Totals over the regions of a snapshot. */
static void sum_regions(struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nreg; i++) {
        struct km_region *r = &rep->reg[i];
        struct km_region *owner = &rep->reg[r->routine - 1];
        if (KM_KIND_IS_ROUTINE(r->kind)) {
            add_routine(rep, r);
        } else if (r->kind == KM_K_CALL) {
            rep->uninstr += r->excl;
            rep->uninstr_est |= KM_EST_EXCL(r);
            rep->estimated += r->est_excl;
        } else if (r->kind == KM_K_MPI) {
            add_mpi(rep, r, owner);
        } else if (r->kind == KM_K_IO) {
            rep->io += r->elapsed;
            owner->io += r->elapsed;
            rep->io_est |= KM_EST_EL(r);
            owner->io_est |= KM_EST_EL(r);
        }
    }
}

static int redundant_estimated(const struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nreg; i++)
        if ((rep->reg[i].flags & KM_F_REDUNDANT) && KM_EST_EL(&rep->reg[i]))
            return 1;
    return 0;
}

/* Seconds this rank waited for a processor since the run began (0 where
 * unknown); with the CPU clock too, whose times leave it out but whose
 * run took that much longer. */
static double seconds_waited(void)
{
    if (km_st.waited0 < 0)
        return 0;
    int64_t now = km_clock_waited_ns();
    return now > km_st.waited0 ? (double)(now - km_st.waited0) * 1e-9 : 0;
}

/* T, S, C, R, O, P, W of this rank (doc/KM_output.md, "Prediction"). */
static void predict(const struct km_thread *t, struct km_report *rep)
{
    double spt = km_st.clock.seconds_per_tick;
    double sub = spt / (double)(1 << KM_SUB_BITS);
    struct km_prediction_row *p = &rep->pred;
    km_tick init_called = km_st.t_startup ? km_st.t_startup : km_st.t_mpii;
    p->t = (double)rep->total * sub;
    p->s = (double)rep->startup * sub;
    p->c = (double)rep->mpi * sub;
    rep->declared = (double)(rep->redundant - km_st.red_before) * sub;
    p->r = (double)(init_called - t->t0) * spt + rep->declared;
    p->o = (double)rep->overhead * sub;
    p->p = p->t - p->s - p->c - p->r - p->o;
    p->w = rep->waited;
    p->estimated = KM_PRED_O | KM_PRED_P |
                   (rep->mpi_est ? KM_PRED_C : 0) |
                   (redundant_estimated(rep) ? KM_PRED_R : 0);
    p->none = rep->mpi_unmeasured ? KM_NOPRED_MPI_UNMEASURED : 0;
}

static void fill_scalars(const struct km_thread *t, struct km_report *rep,
                         const char *event, km_tick now)
{
    double waited = t->index == 0 ? seconds_waited() : 0;
    memset(rep, 0, sizeof *rep);
    rep->thread = t->index;
    rep->omp = t->omp;
    rep->total = KM_SUB(now - t->t0);
    if (rep->total < 0)
        rep->total = 0;
    rep->clock = km_st.clock;
    double sub = km_st.clock.seconds_per_tick / (double)(1 << KM_SUB_BITS);
    rep->cost_measured = (double)km_st.cost_measured * sub;
    rep->cost_estimated = (double)km_st.cost_estimated * sub;
    rep->cost_inner = (double)km_st.cost_inner * sub;
    rep->nwrites = km_st.nwrites;
    rep->nranks = km_st.nranks;
    rep->rank = km_st.rank;
    rep->alone = km_st.alone;
    rep->event = event;
    rep->started = km_st.started;
    rep->bad_out = t->bad_out;
    rep->bad_in = t->bad_in;
    rep->lost = t->lost;
    rep->bad_reg = km_st.bad_reg;
    rep->lost_threads = __atomic_load_n(&km_lost_threads, __ATOMIC_RELAXED);
    rep->waited = waited;
}

/* The open measured frames of thread t as they are now, copied into mf:
 * those of the frames up to sp that read consistently (another thread's
 * frames may change while they are copied; a frame it is pushing is left
 * out).  Returns the top frame copied. */
static int32_t copy_frames(const struct km_thread *t, struct km_mframe *mf,
                           int32_t msp, int32_t sp, int32_t nn)
{
    for (int32_t m = 0; m <= msp; m++)
        mf[m] = *km_mf(t, m);
    for (int32_t m = 1; m <= msp; m++) {
        const struct km_node *n = mf[m].n;
        if (!n || n->index < 1 || n->index >= nn ||
            km_node_at(t, n->index) != n || mf[m].sp > sp ||
            mf[m].sp <= mf[m - 1].sp)
            return m - 1;
    }
    return msp;
}

/* The instant of a snapshot of another thread t, read after its stack
 * was copied: the clock now, or later than `now`; with the CPU clock, t's
 * own CPU time (the reader's would hold nothing of t's), or its time when
 * it ended (its clock is gone), or failing both its start. */
static km_tick foreign_now(const struct km_thread *t, km_tick now)
{
    if (!cpu_clock()) {
        km_tick later = cold_now();
        return later > now ? later : now;
    }
    km_tick v;
    if (!__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) && t->cpu_id_ok &&
        km_clock_cpu_read_id(t->cpu_id, &v) == 0) {
        __atomic_fetch_add(&km_st.cold_reads, 1, __ATOMIC_RELAXED);
        return v;
    }
    if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
        return t->cpu_end;
    return t->t0;
}

/* The regions' figures: the sums over their paths. */
static void sum_paths(struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nreg; i++) {
        struct km_region *q = &rep->reg[i];
        q->count = q->measured = 0;
        q->elapsed = q->excl = q->est_el = q->est_excl = q->absorbed = 0;
    }
    for (int32_t i = 1; i < rep->npaths; i++) {
        const struct km_pnode *p = &rep->paths[i];
        if (p->id < 1 || p->id > rep->nreg)
            continue;
        struct km_region *q = &rep->reg[p->id - 1];
        q->count += p->count;
        q->measured += p->measured;
        q->excl += p->own + p->est;
        q->est_excl += p->est;
        q->absorbed += p->absorbed;
        if (!p->nested) {
            q->elapsed += p->incl;
            q->est_el += p->incl_est;
        }
    }
    const struct km_pnode *root = &rep->paths[0];
    rep->outside = root->own;
    for (int32_t k = root->first_kid; k >= 0; k = rep->paths[k].next_sib)
        rep->outside_est |= rep->paths[k].incl_est > 0;
}

/* Thread t's call paths as they are now, into rep->paths; -1 without
 * memory. */
static int copy_paths(const struct km_thread *t, struct km_report *rep,
                      int32_t nn)
{
    rep->paths = km_mem_alloc((size_t)nn * sizeof *rep->paths);
    if (!rep->paths)
        return -1;
    rep->npaths = nn;
    rep->folded = 0;
    for (int32_t i = 0; i < nn; i++) {
        const struct km_node *n = km_node_at(t, i);
        struct km_pnode *p = &rep->paths[i];
        *p = (struct km_pnode){
            .id = n->id, .parent = n->parent ? n->parent->index : -1,
            .callee = n->callee, .nested = n->nested, .folded = n->folded,
            .marked = n->absorbed > 0, .count = n->count,
            .measured = n->measured, .own = n->own,
            .est = i ? km_node_estimated(n, NULL) : 0,
        };
        if (i > 0 && (p->parent < 0 || p->parent >= i))
            p->parent = 0;           /* (being written: under the root) */
        if (p->folded)               /* its entries, folded ones or not */
            rep->folded += (int64_t)p->count;
    }
    return 0;
}

/* What thread t's measured frames waited during the estimated executions
 * inside them (t->wait_est, taken out of their own time) goes to the
 * estimated time of its callee paths, in proportion to it: which
 * estimated executions waited is not known, only that the frames around
 * them did (nor where else; with none estimated, it goes outside); with
 * `open`, what the open frames would give at their close. */
static void give_waiting(const struct km_thread *t, struct km_report *rep,
                         km_time open)
{
    km_time waited = __atomic_load_n(&t->wait_est, __ATOMIC_RELAXED) + open;
    if (waited <= 0)
        return;
    double est = 0;
    int32_t most = 0;
    for (int32_t i = 1; i < rep->npaths; i++) {
        const struct km_pnode *p = &rep->paths[i];
        if (p->callee && p->est > 0) {
            est += (double)p->est;
            if (most == 0 || p->est > rep->paths[most].est)
                most = i;
        }
    }
    if (most == 0) {
        rep->paths[0].own += waited;
        return;
    }
    km_time given = 0;
    for (int32_t i = 1; i < rep->npaths; i++) {
        struct km_pnode *p = &rep->paths[i];
        if (i == most || !p->callee || p->est <= 0)
            continue;
        km_time share = (km_time)((double)waited * ((double)p->est / est));
        p->est += share;
        p->marked = 1;
        given += share;
    }
    rep->paths[most].est += waited - given;     /* (what rounding left) */
    rep->paths[most].marked = 1;
}

struct closing {
    struct km_report *rep;
    const struct km_mframe *mf;
    km_time *e;
    const km_time *moved;    /* waiting out of each one's own time */
};

static void close_copy(void *arg, int32_t m, km_time own, km_time e,
                       km_tick end)
{
    (void)end;
    struct closing *c = arg;
    c->e[m] = e;
    if (m == 0)
        c->rep->paths[0].own = own;
    else
        c->rep->paths[c->mf[m].n->index].own += own - c->moved[m];
}

/* Thread t's figures as if every open frame were left at `now` (another
 * thread's: at the instant foreign_now gives, into *at), without touching
 * the live state.  Regions registered since t last caught up appear with
 * no executions.  On failure (no memory) the report still has its scalar
 * fields, but no regions. */
int km_make_thread_report(const struct km_thread *t, struct km_report *rep,
                          const char *event, km_tick now, km_tick *at)
{
    /* Another thread may run on while it is copied: its counters are read
     * first and the clock last, so that no frame it opens meanwhile
     * begins after the snapshot's instant. */
    int foreign = t != km_self;
    struct km_counters s = {
        __atomic_load_n(&t->acc, __ATOMIC_ACQUIRE),
        __atomic_load_n(&t->ovh, __ATOMIC_ACQUIRE),
        __atomic_load_n(&t->nest, __ATOMIC_ACQUIRE),
        __atomic_load_n(&t->nmeas, __ATOMIC_ACQUIRE),
    };
    fill_scalars(t, rep, event, now);
    int32_t nreg = __atomic_load_n(&t->nreg, __ATOMIC_ACQUIRE);
    int32_t ntmpl = __atomic_load_n(&km_st.ntmpl, __ATOMIC_ACQUIRE);
    int32_t sp = __atomic_load_n(&t->sp, __ATOMIC_ACQUIRE);
    int32_t msp = __atomic_load_n(&t->msp, __ATOMIC_ACQUIRE);
    int32_t nn = t->chunk ? __atomic_load_n(&t->nnodes, __ATOMIC_ACQUIRE) : 0;
    /* (its size after them, the arrays after that: a stack that grows
     * publishes the arrays first, and keeps the old ones) */
    if (sp < 0 || sp >= km_stack_places(t))
        sp = 0;
    if (msp < 0 || msp > sp)
        msp = 0;

    rep->reg = km_mem_alloc(((size_t)ntmpl + 1) * sizeof *rep->reg);
    struct km_mframe *mf = km_mem_alloc(((size_t)msp + 1) * sizeof *mf);
    km_time *e = km_mem_alloc(2 * ((size_t)msp + 1) * sizeof *e);
    if (!rep->reg || !mf || !e || nn < 1 || copy_paths(t, rep, nn)) {
        km_mem_free(mf);
        km_mem_free(e);
        km_report_free(rep);
        if (km_st.mpi_state != MPI_NONE && t->index == 0)
            predict(t, rep);
        return -1;
    }
    rep->nreg = ntmpl;
    for (int32_t i = 0; i < nreg; i++)
        rep->reg[i] = *t->tab[i];
    for (int32_t i = nreg; i < ntmpl; i++)   /* stable once published */
        rep->reg[i] = *km_st.tmpl[i];
    msp = copy_frames(t, mf, msp, sp, nn);
    rep->clock_reads = clock_reads(t, &s, msp);
    if (foreign) {
        now = foreign_now(t, now);
        rep->total = KM_SUB(now - t->t0);
        if (rep->total < 0)
            rep->total = 0;
    }
    km_time *moved = e + msp + 1;
    km_time open = km_wait_open((struct km_thread *)t, mf, msp, &s, now,
                                moved);
    struct closing c = { rep, mf, e, moved };
    km_close_open((struct km_frames){ mf, mf + KM_STACK_DEPTH }, msp, 0, &s,
                  now, t->t0, close_copy, &c);
    give_waiting(t, rep, open);
    rep->redundant = redundant_so_far(t, mf, msp, e);
    km_mem_free(mf);
    km_mem_free(e);
    km_time ovh = (km_time)s.nest * km_st.cost_estimated +
                  (km_time)s.nmeas * km_st.cost_measured + s.ovh;
    if (ovh < 0)
        ovh = 0;
    if (ovh > rep->total)
        ovh = rep->total;
    /* what the overhead loses goes outside */
    rep->paths[0].own += (km_time)s.nest * km_st.cost_estimated +
                         (km_time)s.nmeas * km_st.cost_measured + s.ovh - ovh;
    km_settle_tree(rep->paths, rep->npaths, &ovh, &rep->total);
    rep->overhead = ovh;
    if (at)
        *at = now;
    sum_paths(rep);
    fit_locations(rep);
    sum_regions(rep);
    if (km_st.mpi_state != MPI_NONE && t->index == 0)
        predict(t, rep);
    return 0;
}

/* The program's thread's time slots up to `now` (a copy, to which the
 * estimates since the last slot's end and the open frames give their time
 * so far). */
static void copy_timeline(struct km_report *rep, km_tick now)
{
    if (!km_main_thread.started ||
        (rep->tl = km_tl_copy(&km_main_tl, now)) == NULL)
        return;
    int32_t msp = km_main_thread.msp;
    if (msp < 0 || msp >= km_stack_places(&km_main_thread))
        msp = 0;
    km_tl_fit(rep->tl, now);
    km_give_open_slots(&km_main_thread, msp, now, rep->tl, 0);
    km_tl_place(rep->tl, now);
}

/* Every thread that has called libkm, in order of number, into a
 * km_mem array of *n (NULL when none or no memory). */
static struct km_thread **thread_list(int32_t *n)
{
    int32_t count = 0;
    for (struct km_thread *t = __atomic_load_n(&km_st.threads,
                                               __ATOMIC_ACQUIRE);
         t; t = t->next)
        count++;
    *n = 0;
    struct km_thread **v = count ? km_mem_alloc((size_t)count * sizeof *v)
                                 : NULL;
    if (!v)
        return NULL;
    for (struct km_thread *t = __atomic_load_n(&km_st.threads,
                                               __ATOMIC_ACQUIRE);
         t && *n < count; t = t->next)
        v[(*n)++] = t;
    for (int32_t i = 1; i < *n; i++)         /* insertion sort by index */
        for (int32_t j = i; j > 0 && v[j - 1]->index > v[j]->index; j--) {
            struct km_thread *x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v;
}

/* What the rank's threads share: its messages, peers and files. */
static void copy_rank_tables(struct km_report *rep)
{
    rep->msg = km_msg_copy(rep->nreg);
    rep->peers = km_peer_copy(&rep->npeers);
    rep->files = km_io_copy(&rep->nfiles);
}

/* The rank's figures: the program's thread's (the first in number), and
 * every other thread's report in rep->others.  When the writing thread
 * has not called libkm yet (km_self NULL) there is still the program's. */
int km_make_report(struct km_report *rep, const char *event, km_tick now)
{
    int32_t n;
    struct km_thread **v = thread_list(&n);
    if (!v) {                        /* no thread yet, or no memory */
        if (!__atomic_load_n(&km_st.threads, __ATOMIC_ACQUIRE)) {
            fill_scalars(&km_main_thread, rep, event, now);
            return -1;
        }
        int rc = km_make_thread_report(&km_main_thread, rep, event, now,
                                       &now);
        if (rc == 0) {
            copy_rank_tables(rep);
            copy_timeline(rep, now);
        }
        return rc;
    }
    km_tick now0 = now;              /* the program's thread's instant */
    int rc = km_make_thread_report(v[0], rep, event, now, &now0);
    if (rc == 0) {
        copy_rank_tables(rep);
        if (v[0] == &km_main_thread)
            copy_timeline(rep, now0);
    }
    if (n > 1) {
        rep->others = km_mem_alloc((size_t)(n - 1) * sizeof *rep->others);
        if (rep->others) {
            for (int32_t i = 1; i < n; i++)
                if (km_make_thread_report(v[i], &rep->others[rep->nothers],
                                          event, now, NULL) == 0)
                    rep->nothers++;
                else
                    km_report_free(&rep->others[rep->nothers]);
        }
    }
    km_mem_free(v);
    return rc;
}

