/*
 * km_thread.c — start-up, registration and threads.
 *
 * Owns the core's state (defined here once), the clock's and the costs'
 * start-up, KM_REG and the region table (identities under a lock, figures
 * per thread), a thread's first call and its end, what an entry and exit
 * cost (measured at start-up), and the hooks the unit tests drive the core
 * with.
 *
 * Must never take a lock or allocate on a path the hot path takes after a
 * thread's first call, except when the region table grows.
 */
#include "runtime/km_core.h"

__thread struct km_thread *km_self
    __attribute__((tls_model("initial-exec")));
__thread int km_on_main __attribute__((tls_model("initial-exec")));
struct km_thread km_main_thread;
struct km_state km_st = { .lock = PTHREAD_MUTEX_INITIALIZER };
struct km_timeline km_main_tl;
km_time km_main_tl_done[KM_STACK_DEPTH];
int32_t km_main_tl_low;

static int atexit_registered;

/* ------------------------------------------------------------------------ */
/* Start-up                                                                  */


/* A number >= 0 from the environment, or -1 (absent or bad: said once). */
static long long env_count(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ')
        end++;
    if (errno || *end || v < 0) {
        km_complain("ignoring %s=%.40s (not a number >= 0)", name, s);
        return -1;
    }
    return v;
}

static void read_environment(void)
{
    km_st.opt.thresh_override = env_count("KM_TIME_PREDICTION_MODE_NUMBER");
    long long trace = env_count("KM_TRACE_FILE_NUMBER");
    km_st.opt.trace_override = trace < 0 ? -1 : trace > 0;
}

static void note_start_time(void)
{
    time_t now = time(NULL);
    struct tm tm;
    snprintf(km_st.started, sizeof km_st.started, "unknown");
    if (localtime_r(&now, &tm))
        strftime(km_st.started, sizeof km_st.started, "%Y-%m-%d %H:%M:%S", &tm);
}

static void calibrate_costs(struct km_thread *t);

/* Thread states that ended (see thread_ended).  The key's two functions
 * are weak references: in a static link (gfortran -static) a strong one
 * would pull in glibc's pthread_key_create.o, whose __pthread_key_create
 * is the symbol libgfortran's __gthread_active_p looks for; it would then
 * take the program for threaded and call pthread functions that nothing
 * linked in (a call to address 0 at the first WRITE).  Left out of a
 * static link, the key is not made and a serial program loses nothing; a
 * threaded one links them anyway.  In a dynamic link they resolve to
 * libc's as before. */
extern __typeof__(pthread_key_create) pthread_key_create
    __attribute__((weak));
extern __typeof__(pthread_setspecific) pthread_setspecific
    __attribute__((weak));
static pthread_key_t end_key;
static int end_key_made;
static struct km_thread *free_states;    /* under km_st.lock */
static void thread_ended(void *arg);

/* The thread's call paths with the root alone, and nothing open; -1
 * without memory for them. */
static int reset_root(struct km_thread *t)
{
    t->task_depth = 0;
    t->task_entered = 0;
    t->cur = &km_no_node;            /* (until it has a root) */
    return km_paths_init(t);
}

/* 0.25 ns in subticks: the least sampling may add to an execution. */
static void set_budget(void)
{
    double spt = km_st.clock.seconds_per_tick;
    km_st.budget = spt > 0 ? (km_time)(0.25e-9 / spt * (1 << KM_SUB_BITS)) : 0;
    if (km_st.budget < 1)
        km_st.budget = 1;
}

/* What the whole process needs once, done by the first thread to call
 * libkm (on itself: it calibrates the costs on its own stack) while any
 * other waits. */
static void init_once(struct km_thread *t)
{
    if (!km_st.clock_injected)
        km_clock_init(&km_st.clock);
    read_environment();
    km_paths_limits();
    note_start_time();
    km_st.out.nnn = -1;
    km_st.out.rank = -1;
    km_st.rank = 0;
    km_st.nranks = 1;
    if (!km_st.seed)
        km_st.seed = 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
    set_budget();
    t->rng = km_st.seed;
    reset_root(t);
    /* calibration runs the timeline's fast path too (slots that never
     * end: no clock read here, and a restart below) */
    km_tl_start(&km_main_tl, 0, tl_width0());
    km_main_tl.slot_start = INT64_MIN;
    km_main_tl.slot_end = INT64_MAX;
    if (!km_st.clock_injected)
        calibrate_costs(t);
    km_wait_start(t);
    km_st.pid = getpid();
    if (!atexit_registered) {
        atexit_registered = 1;
        atexit(km_at_exit);
        at_quick_exit(km_at_exit);   /* (which runs none of atexit's: a C
                                        library may end the program so) */
    }
    if (!km_st.clock_injected)
        km_signal_install();
    if (!end_key_made && pthread_key_create && pthread_setspecific &&
        pthread_key_create(&end_key, thread_ended) == 0)
        end_key_made = 1;
    km_st.waited0 = km_st.clock_injected ? -1 : km_clock_waited_ns();
    km_st.t0 = cold_now();              /* the root's start */
    t->t0 = km_st.t0;
    km_wait_thread(t, t->t0);
    km_tl_start(&km_main_tl, km_st.t0, tl_width0());
    t->started = 1;
}

static void init(struct km_thread *t)
{
    int32_t state = __atomic_load_n(&km_st.init_state, __ATOMIC_ACQUIRE);
    if (KM_LIKELY(state == 2))
        return;
    int32_t none = 0;
    if (__atomic_compare_exchange_n(&km_st.init_state, &none, 1, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        init_once(t);
        km_st.initialized = 1;
        __atomic_store_n(&km_st.init_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&km_st.init_state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */

static int32_t *hash_slot(const struct km_region *key)
{
    size_t mask = km_st.hcap - 1;
    size_t i = (size_t)km_region_hash(key) & mask;
    while (km_st.hash[i] && !km_region_same(km_st.tmpl[km_st.hash[i] - 1], key))
        i = (i + 1) & mask;
    return &km_st.hash[i];
}

/* Room for one more region.  The table a signal handler may be reading is
 * freed only after the new one is published. */
static int grow_tables(void)
{
    if (km_st.ntmpl == km_st.tcap) {
        int32_t ncap = km_st.tcap ? km_st.tcap * 2 : 256;
        struct km_region **t = malloc((size_t)ncap * sizeof *t);
        if (!t)
            return -1;
        if (km_st.ntmpl)
            memcpy(t, km_st.tmpl, (size_t)km_st.ntmpl * sizeof *t);
        struct km_region **old = km_st.tmpl;
        signal_fence();
        km_st.tmpl = t;
        signal_fence();
        free(old);
        km_st.tcap = ncap;
    }
    if ((size_t)(km_st.ntmpl + 1) * 2 > km_st.hcap) {
        size_t ncap = km_st.hcap ? km_st.hcap * 2 : 512;
        int32_t *h = calloc(ncap, sizeof *h);
        if (!h)
            return -1;
        free(km_st.hash);
        km_st.hash = h;
        km_st.hcap = ncap;
        for (int32_t i = 0; i < km_st.ntmpl; i++)
            *hash_slot(km_st.tmpl[i]) = km_st.tmpl[i]->id;
    }
    return 0;
}

static void report_bad_registration(const char *text, const char *why)
{
    if (km_st.bad_reg++ < 5)
        km_complain("region not registered (%s): %.200s", why, text);
}

static void reg(int32_t *h, const int32_t *hr, const char *text)
{
    /* h and hr alias for a routine: read hr before anything writes h */
    int32_t routine = *hr;
    if (routine <= 0 || routine > km_st.ntmpl ||
        !KM_KIND_IS_ROUTINE(km_st.tmpl[routine - 1]->kind))
        routine = 0;
    const char *why;
    struct km_region *r = km_region_new(text, routine, &km_st.opt, &why);
    if (!r) {
        report_bad_registration(text, why);
        return;
    }
    if (grow_tables()) {
        km_region_free(r);
        report_bad_registration(text, "out of memory");
        return;
    }
    int32_t *slot = hash_slot(r);
    if (*slot) {                     /* registered before, maybe elsewhere */
        km_region_free(r);
        /* (another thread may have set the handle already: a handle that
         * holds its id is never written again) */
        if (__atomic_load_n(h, __ATOMIC_ACQUIRE) != *slot)
            __atomic_store_n(h, *slot, __ATOMIC_RELEASE);
        return;
    }
    r->id = km_st.ntmpl + 1;
    if (KM_KIND_IS_ROUTINE(r->kind))
        r->routine = r->id;
    km_st.tmpl[km_st.ntmpl] = r;
    __atomic_store_n(&km_st.ntmpl, km_st.ntmpl + 1, __ATOMIC_RELEASE);
    *slot = r->id;
    __atomic_store_n(h, r->id, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                   */

/* Is the calling thread the process's initial one (Linux: its thread id
 * is the process id)?  Elsewhere the first thread to call libkm is taken
 * for it. */
static int initial_thread(void)
{
#ifdef SYS_gettid
    return syscall(SYS_gettid) == getpid();
#else
    return __atomic_load_n(&km_st.nthreads, __ATOMIC_RELAXED) == 0;
#endif
}

/* The OpenMP thread number, where the program runs OpenMP (a weak
 * reference: libkm does not need libgomp or libomp). */
extern int omp_get_thread_num(void) __attribute__((weak));

/* The calling thread's first call into libkm: its state, set up and
 * published in km_st.threads; NULL when there is no memory for it (its
 * calls are then ignored and counted). */
uint64_t km_lost_threads;

static int main_taken;

/* A thread that ends with every frame closed leaves its state to the next
 * thread that starts (its row, its figures go on with that thread), so a
 * program that starts and ends threads without end keeps no more states
 * than it ever ran at once (OpenMP keeps its threads anyway). */
static void thread_ended(void *arg)
{
    struct km_thread *t = arg;
    if (!t || t == &km_main_thread)
        return;
    if (cpu_clock()) {               /* its clock ends with it */
        t->cpu_end = cold_now();
        __atomic_store_n(&t->ended, 1, __ATOMIC_RELEASE);
    }
    if (t->rd_fd > 0)                /* (its run delay's file) */
        close(t->rd_fd - 1);
    t->rd_fd = 0;
    if (t->sp != 0)
        return;
    pthread_mutex_lock(&km_st.lock);
    t->free_next = free_states;
    free_states = t;
    pthread_mutex_unlock(&km_st.lock);
}

static struct km_thread *recycled_state(void)
{
    pthread_mutex_lock(&km_st.lock);
    struct km_thread *t = free_states;
    if (t)
        free_states = t->free_next;
    pthread_mutex_unlock(&km_st.lock);
    return t;
}

/* With the CPU clock, thread t's clock is the calling thread's from now
 * on; a state an ended thread left goes on from that thread's CPU time
 * (the new thread's clock starts elsewhere: t0 moves by the difference,
 * as hide_time moves it; every frame is closed). */
static void take_cpu_clock(struct km_thread *t)
{
    if (!cpu_clock())
        return;
    t->cpu_id_ok = km_clock_cpu_id(&t->cpu_id) == 0;
    if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE)) {
        t->t0 += cold_now() - t->cpu_end;
        __atomic_store_n(&t->ended, 0, __ATOMIC_RELEASE);
    }
}

static struct km_thread *attach(void)
{
    struct km_thread *t;
    if (initial_thread() &&
        !__atomic_exchange_n(&main_taken, 1, __ATOMIC_ACQ_REL)) {
        t = &km_main_thread;
    } else if ((t = recycled_state()) != NULL) {
        km_self = t;
        km_on_main = 0;
        take_cpu_clock(t);
        km_wait_thread(t, t->t0);    /* (another thread's run delay) */
        if (end_key_made)
            pthread_setspecific(end_key, t);
        return t;
    } else {
        t = km_mem_alloc(sizeof *t);
        if (!t) {
            __atomic_fetch_add(&km_lost_threads, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        memset(t, 0, offsetof(struct km_thread, stk));
    }
    t->omp = omp_get_thread_num ? omp_get_thread_num() : -1;
    km_self = t;
    km_on_main = t == &km_main_thread;
    init(t);                         /* the first thread: calibrates on t */
    if (t != &km_main_thread && end_key_made)
        pthread_setspecific(end_key, t);
    pthread_mutex_lock(&km_st.lock);
    t->index = t == &km_main_thread ? 0 : ++km_st.nthreads;
    pthread_mutex_unlock(&km_st.lock);
    t->trace.thread = t->index;  /* (a recycled state keeps both) */
    if (!t->started) {               /* not the thread init_once set up */
        if (reset_root(t)) {
            km_self = NULL;
            __atomic_fetch_add(&km_lost_threads, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        t->rng = km_st.seed ^ (0x9e3779b97f4a7c15u * (uint64_t)(t->index + 1));
        t->t0 = cold_now();
        km_wait_thread(t, t->t0);
        t->started = 1;
    }
    take_cpu_clock(t);
    pthread_mutex_lock(&km_st.lock);
    t->next = km_st.threads;
    __atomic_store_n(&km_st.threads, t, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&km_st.lock);
    return t;
}

/* A thread's first call (the first thread's starts libkm: calibration,
 * floating point; the program's exception flags stay as they were). */
KM_NOINLINE struct km_thread *km_attach(void)
{
    struct km_fpflags fp;
    km_fp_save(&fp);
    struct km_thread *t = attach();
    km_fp_restore(&fp);
    return t;
}


/* The thread's table catches up with the registrations (under the lock):
 * a copy of each new region's identity, with figures of its own. */
KM_NOINLINE void km_sync_regions(struct km_thread *t)
{
    pthread_mutex_lock(&km_st.lock);
    int32_t n = km_st.ntmpl;
    if (n > t->cap) {
        int32_t ncap = t->cap ? t->cap : 256;
        while (ncap < n)
            ncap *= 2;
        struct km_region **tab = km_mem_alloc((size_t)ncap * sizeof *tab);
        if (!tab) {
            pthread_mutex_unlock(&km_st.lock);
            return;
        }
        if (t->nreg)
            memcpy(tab, t->tab, (size_t)t->nreg * sizeof *tab);
        /* the old table is kept: a write on another thread may be
         * reading it */
        signal_fence();
        t->tab = tab;
        t->cap = ncap;
    }
    while (t->nreg < n) {
        struct km_region *r = km_region_alloc();
        if (!r)
            break;
        *r = *km_st.tmpl[t->nreg];
        t->tab[t->nreg] = r;
        signal_fence();
        t->nreg++;
    }
    if (t == &km_main_thread)
        km_tl_grow(&km_main_tl, t->tab, t->nreg);
    pthread_mutex_unlock(&km_st.lock);
}


/* A registration is libkm's own work: its time goes to the overhead, and
 * so out of the frame that is open around it.  Until MPI is seen running,
 * the program's thread also asks whether it runs (notice_mpi). */
void km_reg_f(int32_t *h, const int32_t *hr, const char *text)
{
    THREAD_OR(return);
    struct km_fpflags fp;
    km_fp_save(&fp);
    km_tick t1 = cold_now();
    pthread_mutex_lock(&km_st.lock);
    reg(h, hr, text);
    pthread_mutex_unlock(&km_st.lock);
    if (KM_UNLIKELY(km_st.mpi_state == MPI_NONE) && t == &km_main_thread)
        km_notice_mpi(t, 0);
    km_time took = KM_SUB(cold_now() - t1);
    t->ovh += took;
    t->acc += took;
    km_fp_restore(&fp);
}

/* ------------------------------------------------------------------------ */
/* libkm's own costs                                                         */

/* What an entry and exit cost, measured on a region of libkm's own before
 * the program's first region is registered: the best of a few batches,
 * so that an interruption cannot inflate them (a cost taken out that is
 * too small leaves a little of libkm in the figures; one too large would
 * take the program's time out). */
static void calibrate_costs(struct km_thread *t)
{
    /* the least of many short batches: a core still speeding up, or
     * another process, can make every one of a few slow (NEXTX's inner
     * cost came out 42 ns instead of 37 once in three runs with 8) */
    enum { PAIRS = 256, BATCHES = 32 };
    /* the thread's table, as sync_regions would make it, for one region
     * that is not registered */
    struct km_region *r = km_region_alloc();
    if (!r || !(t->tab = km_mem_alloc(256 * sizeof *t->tab))) {
        free(r);
        return;
    }
    t->cap = 256;
    *r = (struct km_region){ .id = 1, .callee = 1, .kind = KM_K_SUBROUTINE,
                             .routine = 1, .thresh = UINT64_MAX };
    t->tab[0] = r;
    t->nreg = 1;
    int32_t h = 1;
    km_in_f(&h);                     /* its node, cached in the root's */
    km_out_f(&h);
    struct km_node *n = km_node_at(t, 1);
    km_tick best_measured = INT64_MAX, best_estimated = INT64_MAX;
    km_time best_inner = INT64_MAX;
    for (int b = 0; b < BATCHES; b++) {
        km_time before = n->own;
        km_tick t0 = km_clock_read(&km_st.clock);
        for (int p = 0; p < PAIRS; p++) {
            km_in_f(&h);
            km_out_f(&h);
        }
        km_tick t1 = km_clock_read(&km_st.clock);
        if (t1 - t0 < best_measured)
            best_measured = t1 - t0;
        if (n->own - before < best_inner)
            best_inner = n->own - before;
        n->next = UINT64_MAX;        /* estimated */
        t0 = km_clock_read(&km_st.clock);
        for (int p = 0; p < PAIRS; p++) {
            km_in_f(&h);
            km_out_f(&h);
        }
        t1 = km_clock_read(&km_st.clock);
        if (t1 - t0 < best_estimated)
            best_estimated = t1 - t0;
        n->next = 0;
    }
    km_st.cost_measured = KM_SUB(best_measured) / PAIRS;
    km_st.cost_estimated = KM_SUB(best_estimated) / PAIRS;
    km_st.cost_inner = best_inner / PAIRS;
    if (km_st.cost_inner > km_st.cost_measured)
        km_st.cost_inner = km_st.cost_measured;
    t->nreg = 0;
    t->tab[0] = NULL;
    km_region_free(r);
    t->ovh = 0;
    t->acc = 0;
    t->nest = 0;
    t->nmeas = 0;
    t->nentered = 0;
    reset_root(t);
}

/* ------------------------------------------------------------------------ */
/* Test hooks                                                                */

void km_test_set_clock(km_tick (*read)(void), double seconds_per_tick)
{
    memset(&km_st.clock, 0, sizeof km_st.clock);
    km_st.clock.kind = KM_CLOCK_CALL;
    km_st.clock.read = read;
    km_st.clock.seconds_per_tick = seconds_per_tick;
    snprintf(km_st.clock.name, sizeof km_st.clock.name, "test clock");
    km_st.clock_injected = 1;
}

void km_test_set_costs(double measured, double estimated, double inner)
{
    km_st.cost_measured = (km_time)(measured * (1 << KM_SUB_BITS));
    km_st.cost_estimated = (km_time)(estimated * (1 << KM_SUB_BITS));
    km_st.cost_inner = (km_time)(inner * (1 << KM_SUB_BITS));
}

void km_test_seed(uint64_t seed)
{
    km_st.seed = seed ? seed : 1;
    if (km_self)
        km_self->rng = km_st.seed;
}

void km_test_set_interval(uint32_t k)
{
    km_st.fixed_k = k;
}

/* Every thread that called libkm must have finished (or be the caller). */
void km_test_reset(void)
{
    for (struct km_thread *t = km_st.threads, *next; t; t = next) {
        next = t->next;
        for (int32_t i = 0; i < t->nreg; i++)
            free(t->tab[i]);    /* a copy: the identity is the template's */
        if (t != &km_main_thread)
            km_mem_free(t);
    }
    for (int32_t i = 0; i < km_st.ntmpl; i++)
        km_region_free(km_st.tmpl[i]);
    free(km_st.tmpl);
    free(km_st.hash);
    memset(&km_main_thread, 0, offsetof(struct km_thread, stk));
    memset(&km_main_tl, 0, sizeof km_main_tl);  /* (tables leaked: tests) */
    km_main_tl_low = 0;
    memset(km_main_tl_done, 0, sizeof km_main_tl_done);
    main_taken = 0;
    km_self = NULL;
    km_on_main = 0;
    free_states = NULL;
    struct km_clock c = km_st.clock;
    int injected = km_st.clock_injected;
    memset(&km_st, 0, sizeof km_st);
    km_st.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    km_st.clock = c;
    km_st.clock_injected = injected;
    km_st.seed = 1;
}

int km_test_report(struct km_report *rep, const char *event)
{
    THREAD_OR(return -1);
    (void)t;
    return km_make_report(rep, event, cold_now());
}

int km_test_depth(void)
{
    THREAD_OR(return 0);
    return t->sp - (t->overflow_depth > 0);
}

int km_test_path_estimate(int32_t id, km_time *mean)
{
    THREAD_OR(return -1);
    for (int32_t i = 1; i < t->nnodes; i++) {
        const struct km_node *n = km_node_at(t, i);
        if (n->id == id) {
            *mean = n->mean;
            return n->sampling;
        }
    }
    return -1;
}

void km_test_set_waited(int64_t (*fn)(void))
{
    km_st.waited_fn = fn;
    if (km_st.initialized && km_self) {
        km_wait_start(km_self);
        km_wait_thread(km_self, km_self->t0);
    }
}

const struct km_clock *km_test_clock(void)
{
    THREAD_OR(return &km_st.clock);
    (void)t;
    return &km_st.clock;
}

