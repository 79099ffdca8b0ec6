/*
 * km_write.c — the moments results are written, and the core side of MPI.
 *
 * Owns KM_END, KM_STOP, KM_EXIT, KM_WRIT, the atexit handler, a
 * terminating signal (km_signal.c hands it over), KM_ABRT (before
 * MPI_ABORT), KM_MPII / KM_MPIF, and MPI started or finalized where no
 * instrumented code sees it.
 *
 * Must never reference an MPI symbol (a serial program links without MPI;
 * MPI arrives as a table of function pointers), write the same final
 * results twice, or print to standard output.
 */
#include "runtime/km_core.h"

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* Take `d` ticks just spent inside libkm (writing a snapshot) out of every
 * figure: the open frames, the start of the run and the MPI_INIT marks
 * move forward by it. */
static void hide_time(struct km_thread *t, km_tick d)
{
    if (!t)
        return;
    for (int32_t m = 1; m <= t->msp; m++)
        km_mf(t, m)->start += d;
    t->t0 += d;
    if (t == &km_main_thread)
        km_tl_hide(&km_main_tl, d);
    if (km_st.t_startup)
        km_st.t_startup += d;
    if (km_st.mpi_state != MPI_NONE)
        km_st.t_mpii += d;
}

/* Write this process's results alone (serial program, or an MPI rank whose
 * results cannot be gathered), as they are at `now`; 0 once written. */
static int write_alone(const char *event, km_tick now)
{
    km_st.nwrites++;
    km_clock_calibrate(&km_st.clock);
    struct km_report rep;
    int only = km_st.mpi_state == MPI_ACTIVE ? km_st.rank
             : !km_st.mpi_missed ? -1
             : km_st.rank_unknown ? KM_RANK_UNKNOWN : km_st.rank;
    if (km_make_report(&rep, event, now)) {
        km_complain("KM_output not written: out of memory");
        return -1;
    }
    struct km_text t = { 0 };
    km_format_header(&t, &rep, only);
    km_format_section(&t, &rep);
    km_format_end(&t);
    int failed = t.failed;
    if (failed)
        km_complain("KM_output not written: out of memory");
    else
        failed = km_file_write_whole(t.p, t.len, &km_st.out,
                                     only >= 0 ? only : -1) != 0;
    km_text_free(&t);
    km_report_free(&rep);
    return failed ? -1 : 0;
}

static void take_pending_signal(void);

/* `final`: END, STOP, EXIT or exit; nothing is written after these. */
/* One write at a time: another thread's final write (STOP inside a
 * parallel region, exit) waits for the one under way, then finds the
 * results written. */
static int begin_write(int wait)
{
    for (;;) {
        sig_atomic_t none = 0;
        if (__atomic_compare_exchange_n(&km_st.writing, &none, 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
        if (!wait)
            return 0;
        sched_yield();
    }
}

/* The program ends (END, STOP, EXIT, exit) with regions of thread t
 * open: their LEAVEs at this moment, innermost first, so that the trace
 * closes what it opened; once (the exit handler may come after END). */
static void trace_leave_open(struct km_thread *t)
{
    if (!t || t->trace_closed || !km_trace_active())
        return;
    t->trace_closed = 1;
    km_tick now = km_core_trace_now(t);
    for (int32_t i = t->sp; i >= 1; i--) {
        struct km_region *r = (*km_stk(t, i))->r;
        if (r && (r->hooks & KM_HOOK_TRACE))
            km_core_trace_event(t, r, 0, now);
    }
}

static void write_now(const char *event, int final)
{
    if (final && km_st.initialized && getpid() == km_st.pid)
        trace_leave_open(km_self);
    if (!km_st.initialized || km_st.mpi_state == MPI_DONE || km_st.final_done ||
        getpid() != km_st.pid)
        return;
    km_notice_mpi(km_self, 1);
    if (!begin_write(final))
        return;
    if (km_st.final_done || km_st.mpi_state == MPI_DONE) {
        __atomic_store_n(&km_st.writing, 0, __ATOMIC_RELEASE);
        return;
    }
    if (final)
        km_st.final_done = 1;
    km_tick now = cold_now();
    if (write_alone(event, now) == 0 && final)
        km_trace_end(km_self ? &km_self->trace : NULL, 0, now);
    if (!final)
        hide_time(km_self, cold_now() - now);
    __atomic_store_n(&km_st.writing, 0, __ATOMIC_RELEASE);
    take_pending_signal();
}

/* (every entry from the program into what computes in floating point
 * leaves the program's exception flags as they were: km_fp.c) */
static void write_results(const char *event, int final)
{
    struct km_fpflags fp;
    km_fp_save(&fp);
    write_now(event, final);
    km_fp_restore(&fp);
}

void km_end_f(void)  { write_results("END", 1); }
void km_stop_f(void) { write_results("STOP", 1); }
void km_exit_f(void) { write_results("EXIT", 1); }
void km_writ_f(void) { write_results("PRINT_OUT", 0); }

/* Before CALL MPI_ABORT: the rank's own file, as the other ranks write
 * theirs when mpirun kills them; the abort itself runs no exit handler. */
void km_abrt_f(void) { write_results("MPI_ABORT", 1); }

/* Before CALL ABORT: gfortran's runtime puts SIGABRT's action back to the
 * default before it aborts, so that no handler (libkm's neither) sees
 * it. */
void km_abor_f(void) { write_results("ABORT", 1); }

void km_opt_f(const char *text)
{
    const char *p = strstr(text, "TRACE_SIZE_LIMIT=");
    if (p)
        km_trace_set_limit(strtoll(p + 17, NULL, 10));
}

void km_at_exit(void)
{
    write_results("exit", 1);
}

/* ------------------------------------------------------------------------ */
/* Signals                                                                   */

/* An MPI rank that has written its results on a signal waits a moment
 * before it dies: mpirun kills every other rank the moment one dies, and
 * they got the signal at the same time and may still be writing theirs.
 * At least 0.2 s, ten times this rank's own write, at most 3 s; the batch
 * system's SIGKILL, if it comes sooner, ends the wait. */
static void linger(double write_seconds)
{
    double wait = 10 * write_seconds;
    if (wait < 0.2)
        wait = 0.2;
    if (wait > 3)
        wait = 3;
    struct timespec ts = { (time_t)wait,
                           (long)((wait - (double)(time_t)wait) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The write a terminating signal asks for; 0 when the caller should let
 * the signal go on, 1 when a write under way will raise it again. */
static int on_signal_now(int sig)
{
    if (!km_st.initialized || getpid() != km_st.pid)
        return 0;
    if (km_st.writing) {
        km_st.pending_signal = sig;
        return 1;
    }
    snprintf(km_st.signal_event, sizeof km_st.signal_event, "signal %d", sig);
    if (km_st.gathering) {
        /* the gathered file will not be finished: this rank's own file */
        struct km_out_file *f = km_gather_temp();
        if (f)
            km_file_abandon(f);
        km_st.mpi_state = MPI_ACTIVE;
        km_st.final_done = 0;
    }
    if (km_st.mpi_state != MPI_DONE && !km_st.final_done) {
        km_st.writing = 1;
        km_st.final_done = 1;
        km_tick t = cold_now();
        write_alone(km_st.signal_event, t);
        km_st.writing = 0;
        if (km_st.mpi_state == MPI_ACTIVE)
            linger((double)(cold_now() - t) * km_st.clock.seconds_per_tick);
    }
    km_trace_end(NULL, sig, cold_now());
    return 0;
}

int km_core_on_signal(int sig)
{
    struct km_fpflags fp;
    km_fp_save(&fp);
    int rc = on_signal_now(sig);
    km_fp_restore(&fp);
    return rc;
}

static void take_pending_signal(void)
{
    int sig = km_st.pending_signal;
    if (!sig)
        return;
    km_st.pending_signal = 0;
    km_core_on_signal(sig);
    km_signal_reraise(sig);
}

/* ------------------------------------------------------------------------ */
/* MPI (through the table km_mpi.c hands over)                              */

/* The glue's table, when the program links it (km_mpi.c hands it over
 * before main): libkm may then ask MPI at any time whether it runs. */
static const struct km_mpi_ops *linked_mpi;

void km_core_mpi_linked(const struct km_mpi_ops *ops)
{
    linked_mpi = ops;
}

/* MPI runs from now on (MPI_INIT has just returned, or libkm has just seen
 * that it ran), or ran before libkm started (`before`): thread t's figures
 * so far are the time before it. */
static void rank_starts(const struct km_mpi_ops *ops, struct km_thread *t,
                        int before)
{
    km_tick now = before ? t->t0 : cold_now();
    km_st.red_before = 0;
    if (!before) {
        struct km_report rep;
        /* (the scalars survive a failure) */
        km_make_thread_report(t, &rep, "", now, NULL);
        km_st.red_before = rep.redundant;
        km_report_free(&rep);
    }
    km_st.t_mpii = now;
    if (t == &km_main_thread) {         /* slots start at MPI_INIT's return */
        km_cross_slot(t, now);
        km_tl_rebase(&km_main_tl, now);
    }
    if (ops->rank_size(&km_st.rank, &km_st.nranks))
        km_st.rank = 0, km_st.nranks = 1;
    km_st.mpi_state = MPI_ACTIVE;
    /* so that an MPI_FINALIZE no instrumented code calls (a C main, a
     * library built plain) still gathers the ranks into one file */
    if (!km_st.mpi_hooked)
        km_st.mpi_hooked = ops->at_finalize() == 0;
    km_trace_rank(km_st.rank, km_st.nranks);
}

/* What the environment says of this process's place in an MPI run
 * (Open MPI, MPICH's Hydra, PMIx): rank and size, or -1 and 0. */
static void rank_from_environment(int *rank, int *size)
{
    static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                         "PMIX_RANK" };
    static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         NULL };
    *rank = -1;
    *size = 0;
    for (size_t k = 0; k < sizeof ranks / sizeof *ranks; k++) {
        const char *r = getenv(ranks[k]);
        const char *n = sizes[k] ? getenv(sizes[k]) : NULL;
        if (r && *r) {
            *rank = atoi(r);
            *size = n && *n ? atoi(n) : 0;
            return;
        }
    }
}

/* MPI started where no KM_MPII saw it (a C main, a library built plain):
 * asked of MPI when the program's thread registers a region, until it
 * runs, and before a write (`at_write`).  Running: this process is a rank
 * from now on.  Finalized at a write, never seen running, or seen running
 * but finalized without calling libkm: the ranks cannot be gathered any
 * more, and each file says so. */
void km_notice_mpi(struct km_thread *t, int at_write)
{
    static int asked;                /* MPI did not run when last asked */
    const struct km_mpi_ops *ops = linked_mpi;
    if (!ops || !t || km_st.mpi_missed)
        return;
    if (km_st.mpi_state == MPI_ACTIVE && at_write && ops->state() == 2) {
        km_st.mpi_state = MPI_NONE;     /* the rank's file, all the same */
        km_st.mpi_missed = 1;
        km_st.alone = "MPI finalized where libkm could not gather the ranks";
        km_complain("MPI was finalized without calling libkm back: rank %d "
                    "writes its own KM_output.NNN.%d", km_st.rank, km_st.rank);
        return;
    }
    if (km_st.mpi_state != MPI_NONE)
        return;
    int state = ops->state();
    int before = !asked && t == &km_main_thread;
    asked = 1;
    if (state == 1) {
        rank_starts(ops, t, before);
    } else if (state == 2 && at_write) {
        int rank, size;
        rank_from_environment(&rank, &size);
        km_st.mpi_missed = 1;
        km_st.rank_unknown = rank < 0;
        km_st.rank = rank < 0 ? 0 : rank;
        km_st.nranks = size > rank ? size : rank + 1;
        km_st.alone = "MPI ran and was finalized where libkm did not see it: "
                   "not gathered";
        if (rank >= 0)
            km_complain("MPI ran and was finalized where no instrumented "
                        "code saw it: rank %d writes its own "
                        "KM_output.NNN.%d", rank, rank);
        else
            km_complain("MPI ran and was finalized where no instrumented "
                        "code saw it: this process writes its own "
                        "KM_output.NNN, rank unknown");
    }
}

void km_core_mpi_init(const struct km_mpi_ops *ops)
{
    THREAD_OR(return);
    if (km_st.mpi_state != MPI_NONE || ops->finalized())
        return;
    struct km_fpflags fp;
    km_fp_save(&fp);
    rank_starts(ops, t, 0);
    km_fp_restore(&fp);
}

static void finalize_now(const struct km_mpi_ops *ops)
{
    /* Every rank takes the same branch here, so the collective below is
     * entered by all ranks or none. */
    THREAD_OR(return);
    if (km_st.mpi_state == MPI_DONE || ops->finalized())
        return;
    begin_write(1);
    if (km_st.mpi_state == MPI_NONE) {  /* MPI_INIT was not instrumented */
        km_st.t_mpii = km_main_thread.started ? km_main_thread.t0 : km_st.t0;
        km_st.t_startup = 0;
        km_st.red_before = 0;
    }
    if (ops->rank_size(&km_st.rank, &km_st.nranks))
        km_st.rank = 0, km_st.nranks = 1;
    km_st.mpi_state = MPI_DONE;
    km_st.final_done = 1;
    km_st.nwrites++;
    km_clock_calibrate(&km_st.clock);

    struct km_report rep;
    struct km_text section = { 0 };
    if (km_make_report(&rep, "MPI_FINALIZE", cold_now()) == 0)
        km_format_section(&section, &rep);
    else
        section.failed = 1;          /* rank 0 notes the loss */
    km_st.gathering = 1;
    if (km_gather_write(ops, &rep, &section, &km_st.out) == 0)
        km_trace_end(km_self ? &km_self->trace : NULL, 0, cold_now());
    km_st.gathering = 0;
    km_text_free(&section);
    km_report_free(&rep);
    __atomic_store_n(&km_st.writing, 0, __ATOMIC_RELEASE);
    (void)t;
}

void km_core_mpi_finalize(const struct km_mpi_ops *ops)
{
    struct km_fpflags fp;
    km_fp_save(&fp);
    finalize_now(ops);
    km_fp_restore(&fp);
}

/* How long a rank waits at MPI_FINALIZE for the others' libkm before it
 * writes its own file (KM_MPI_WAIT seconds, default 30). */
static double finalize_wait(void)
{
    const char *e = getenv("KM_MPI_WAIT");
    double w = e && *e ? strtod(e, NULL) : 30;
    return w >= 0 ? w : 30;
}

/* MPI_FINALIZE called where no KM_MPIF came first (C, a library built
 * plain): the ranks gather as at KM_MPIF when every rank's libkm is there,
 * else each writes its own file. */
static void at_finalize_now(const struct km_mpi_ops *ops)
{
    THREAD_OR(return);
    if (km_st.mpi_state != MPI_ACTIVE || ops->finalized())
        return;
    /* the wait for the other ranks is libkm's, not the program's: out of
     * the times, and out of the time the thread waited for a processor */
    km_tick t1 = cold_now();
    int64_t w1 = t == &km_main_thread && km_st.waited0 >= 0
                     ? km_clock_waited_ns() : -1;
    int all = km_gather_agree(ops, km_st.rank, km_st.nranks, finalize_wait());
    hide_time(t, cold_now() - t1);
    int64_t w2 = w1 >= 0 ? km_clock_waited_ns() : -1;
    if (w2 >= w1 && w1 >= 0)
        km_st.waited0 += w2 - w1;
    if (all) {
        km_core_mpi_finalize(ops);
        return;
    }
    km_st.alone = "not every rank's libkm was at MPI_FINALIZE: not gathered";
    km_complain("not every rank's libkm answered at MPI_FINALIZE: rank %d "
                "writes its own KM_output.NNN.%d", km_st.rank, km_st.rank);
    write_results("MPI_FINALIZE", 1);
}

void km_core_mpi_at_finalize(const struct km_mpi_ops *ops)
{
    struct km_fpflags fp;
    km_fp_save(&fp);
    at_finalize_now(ops);
    km_fp_restore(&fp);
}
