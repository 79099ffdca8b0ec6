/*
 * km_core.c — the measuring heart of libkm.
 *
 * Owns the region table (KM_REG), the frame stack and the hot path
 * (KM_IN / KM_OUT), time extrapolation, snapshots of the figures
 * (struct km_report), and the moments results are written: KM_END, KM_STOP,
 * KM_EXIT, KM_WRIT, the atexit handler, and the core side of KM_MPII /
 * KM_MPIF.
 *
 * Must never: reference an MPI symbol (a serial program links without MPI;
 * MPI arrives as a table of function pointers), allocate, lock or make a
 * system call on the hot path other than the clock read, read the clock
 * for a region past its extrapolation threshold, crash or exit the user's
 * program, or print to standard output.
 *
 * Accounting.  Frame 0 of the stack is the root ("outside every routine").
 * A callee frame (routine, CALL, MPI) adds its elapsed time to the `child`
 * of the nearest callee frame below it (frame.own of the frame below), so
 * transparent frames (DO, IO, USER) pass their callees' time through to
 * their routine.  A callee's exclusive time is its elapsed minus its child
 * time: a routine's net, or for CALL / MPI the time no instrumented routine
 * accounts for.  Each instant is in exactly one innermost callee frame (or
 * none), so total = sum of routine net + sum of CALL/MPI exclusive + outside
 * holds exactly in ticks while nothing is extrapolated.
 */
#include "runtime/km_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KM_STACK_DEPTH 4096
#define KM_REG_TEXT_MAX 8192          /* longest registration text read */

#if defined(__GNUC__) || defined(__clang__)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#else
#define likely(x) (x)
#define unlikely(x) (x)
#endif

struct km_frame {
    struct km_region *r;     /* NULL for the root */
    km_tick start;           /* clock at entry (measured frames) */
    km_tick child;           /* callee time directly inside (callee frames) */
    int32_t own;             /* nearest callee frame at or below this one */
    uint8_t measured;        /* the clock was read at entry */
};

enum mpi_state { MPI_NONE, MPI_ACTIVE, MPI_DONE };

static struct {
    /* hot */
    struct km_region **tab;  /* tab[id - 1] */
    int32_t nreg;
    int32_t sp;              /* top frame; 0 = only the root */
    uint64_t overflow_depth; /* entries above a full stack still open */
    uint64_t reads;          /* clock reads, calibration excluded */
    struct km_clock clock;
    /* registration */
    int32_t cap;
    int32_t *hash;           /* open addressing over ids, 0 = empty */
    size_t hcap;
    int32_t nentered;        /* routines entered at least once */
    int have_override;
    long long override_thresh;
    /* problems */
    uint64_t lost, bad_out, bad_in, bad_reg;
    /* run */
    int initialized;
    int clock_injected;
    km_tick t0;
    time_t started;
    int nwrites;
    int final_done;          /* END / STOP / EXIT / exit / MPI_FINALIZE wrote */
    struct km_outname out;   /* this process's KM_output.NNN */
    /* MPI */
    enum mpi_state mpi_state;
    int rank, nranks;
    km_tick t_mpii;          /* when MPI_INIT returned */
    km_tick mpi_before;      /* MPI time before that */
    struct km_frame stack[KM_STACK_DEPTH];
} st;

static int atexit_registered;

static km_tick now_tick(void)
{
    st.reads++;
    return st.clock.read();
}

/* ------------------------------------------------------------------------ */
/* Start-up                                                                  */

static void at_exit(void);

static void read_environment(void)
{
    const char *s = getenv("KM_TIME_PREDICTION_MODE_NUMBER");
    if (!s || !*s)
        return;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ')
        end++;
    if (errno || *end || v < 0) {
        fprintf(stderr, "kmtool: ignoring KM_TIME_PREDICTION_MODE_NUMBER=%s "
                "(not a number >= 0)\n", s);
        return;
    }
    st.have_override = 1;
    st.override_thresh = v;
}

static void init(void)
{
    if (st.initialized)
        return;
    if (!st.clock_injected)
        km_clock_init(&st.clock);
    read_environment();
    st.out.nnn = -1;
    st.rank = 0;
    st.nranks = 1;
    st.started = time(NULL);
    st.sp = 0;
    st.stack[0] = (struct km_frame){ .r = NULL, .own = 0, .measured = 1 };
    st.t0 = now_tick();              /* the root's start */
    if (!atexit_registered && atexit(at_exit) == 0)
        atexit_registered = 1;
    st.initialized = 1;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n--)
        h = (h ^ *c++) * 1099511628211u;
    return h;
}

static uint64_t key_hash(int kind, int line, int32_t routine,
                         const char *name, const char *file)
{
    uint64_t h = 14695981039346656037u;
    h = fnv(h, &kind, sizeof kind);
    h = fnv(h, &line, sizeof line);
    if (!KM_KIND_IS_ROUTINE(kind))    /* a routine's own is set later */
        h = fnv(h, &routine, sizeof routine);
    if (name)
        h = fnv(h, name, strlen(name) + 1);
    if (file)
        h = fnv(h, file, strlen(file) + 1);
    return h;
}

static int same_key(const struct km_region *r, int kind, int line,
                    int32_t routine, const char *name, const char *file)
{
    if (r->kind != kind || r->line != line)
        return 0;
    if (KM_KIND_IS_ROUTINE(kind))
        return strcmp(r->name, name) == 0 && strcmp(r->file, file) == 0;
    return r->routine == routine;
}

static int32_t *hash_slot(int kind, int line, int32_t routine,
                          const char *name, const char *file)
{
    size_t mask = st.hcap - 1;
    size_t i = (size_t)key_hash(kind, line, routine, name, file) & mask;
    while (st.hash[i] &&
           !same_key(st.tab[st.hash[i] - 1], kind, line, routine, name, file))
        i = (i + 1) & mask;
    return &st.hash[i];
}

static int grow_tables(void)
{
    if (st.nreg == st.cap) {
        int32_t ncap = st.cap ? st.cap * 2 : 256;
        struct km_region **t = realloc(st.tab, (size_t)ncap * sizeof *t);
        if (!t)
            return -1;
        st.tab = t;
        st.cap = ncap;
    }
    if ((size_t)(st.nreg + 1) * 2 > st.hcap) {
        size_t ncap = st.hcap ? st.hcap * 2 : 512;
        int32_t *h = calloc(ncap, sizeof *h);
        if (!h)
            return -1;
        free(st.hash);
        st.hash = h;
        st.hcap = ncap;
        for (int32_t i = 0; i < st.nreg; i++) {
            const struct km_region *r = st.tab[i];
            *hash_slot(r->kind, r->line, r->routine, r->name, r->file) = r->id;
        }
    }
    return 0;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int read_int(const char **s, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(*s, &end, 10);
    if (end == *s || errno || !(is_blank(*end) || *end == '\0'))
        return -1;
    *s = end;
    while (is_blank(**s))
        (*s)++;
    return 0;
}

/* The fields of a registration text (see km_abi.h). */
struct reg_text {
    long long kind, line, thresh, flags;
    const char *rest;        /* routine "NAME file" or statement text */
    size_t rest_len;         /* trailing blanks excluded */
};

static int parse_reg_text(const char *text, struct reg_text *rt)
{
    size_t len = strnlen(text, KM_REG_TEXT_MAX);
    if (len == KM_REG_TEXT_MAX)
        return -1;
    const char *s = text;
    while (is_blank(*s))
        s++;
    if (read_int(&s, &rt->kind) || read_int(&s, &rt->line) ||
        read_int(&s, &rt->thresh) || read_int(&s, &rt->flags))
        return -1;
    if (rt->kind <= 0 || rt->kind > 1000 || rt->line < 0 || rt->line > 1000000000)
        return -1;
    const char *e = text + len;
    while (e > s && is_blank(e[-1]))
        e--;
    rt->rest = s;
    rt->rest_len = (size_t)(e - s);
    return 0;
}

static void report_bad_registration(const char *text, const char *why)
{
    if (st.bad_reg++ < 5)
        fprintf(stderr, "kmtool: region not registered (%s): %.200s\n", why,
                text);
}

static void free_region(struct km_region *r)
{
    free(r->name);
    free(r->file);
    free(r->text);
    free(r);
}

static struct km_region *new_region(const struct reg_text *rt, int32_t routine)
{
    struct km_region *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->kind = (int)rt->kind;
    r->line = (int)rt->line;
    r->flags = (int)rt->flags;
    long long th = st.have_override ? st.override_thresh : rt->thresh;
    r->thresh = th > 0 ? (uint64_t)th : UINT64_MAX;    /* 0: never */
    r->callee = KM_KIND_IS_ROUTINE(r->kind) || r->kind == KM_K_CALL ||
                r->kind == KM_K_MPI;
    r->routine = routine;
    if (KM_KIND_IS_ROUTINE(r->kind)) {
        size_t n = 0;
        while (n < rt->rest_len && !is_blank(rt->rest[n]))
            n++;
        const char *f = rt->rest + n;
        while (f < rt->rest + rt->rest_len && is_blank(*f))
            f++;
        r->name = dup_range(rt->rest, n);
        r->file = dup_range(f, (size_t)(rt->rest + rt->rest_len - f));
        if (r->name)
            for (char *c = r->name; *c; c++)
                if (*c >= 'a' && *c <= 'z')
                    *c = (char)(*c - 'a' + 'A');
    } else {
        r->text = dup_range(rt->rest, rt->rest_len);
    }
    if ((KM_KIND_IS_ROUTINE(r->kind) && (!r->name || !r->file)) ||
        (!KM_KIND_IS_ROUTINE(r->kind) && !r->text)) {
        free_region(r);
        return NULL;
    }
    return r;
}

void km_reg_f(int32_t *h, const int32_t *hr, const char *text)
{
    init();
    struct reg_text rt;
    if (parse_reg_text(text, &rt)) {
        report_bad_registration(text, "unreadable text");
        return;
    }
    int routine_kind = KM_KIND_IS_ROUTINE(rt.kind);
    int32_t routine = 0;
    if (!routine_kind) {
        routine = *hr;               /* h and hr alias for a routine */
        if (routine <= 0 || routine > st.nreg ||
            !KM_KIND_IS_ROUTINE(st.tab[routine - 1]->kind)) {
            report_bad_registration(text, "its routine is not registered");
            return;
        }
    } else if (rt.rest_len == 0) {
        report_bad_registration(text, "no routine name");
        return;
    }
    if (grow_tables()) {
        report_bad_registration(text, "out of memory");
        return;
    }
    struct km_region *r = new_region(&rt, routine);
    if (!r) {
        report_bad_registration(text, "out of memory");
        return;
    }
    int32_t *slot = hash_slot(r->kind, r->line, r->routine, r->name, r->file);
    if (*slot) {                     /* registered before, maybe elsewhere */
        free_region(r);
        *h = *slot;
        return;
    }
    r->id = st.nreg + 1;
    if (routine_kind)
        r->routine = r->id;
    st.tab[st.nreg++] = r;
    *slot = r->id;
    *h = r->id;
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                              */

static km_tick div_round(km_tick a, uint64_t b)
{
    km_tick d = (km_tick)b;
    return a >= 0 ? (a + d / 2) / d : -((-a + d / 2) / d);
}

/* The region has been measured `thresh` times: fix its means, after which
 * its frames no longer read the clock. */
static void start_extrapolation(struct km_region *r)
{
    r->mean_frame = div_round(r->frames, r->measured);
    r->mean_excl = div_round(r->excl, r->measured);
    r->mean_elapsed = r->outer ? div_round(r->elapsed, r->outer) : r->mean_frame;
    r->extrap = 1;
}

/* Close frame i of stk at `now` (unused for an extrapolated frame). */
static inline void leave(struct km_frame *stk, int32_t i, km_tick now)
{
    struct km_frame *f = &stk[i];
    struct km_region *r = f->r;
    int outermost = --r->active == 0;
    if (likely(f->measured)) {
        km_tick e = now - f->start;
        r->frames += e;
        r->measured++;
        if (r->callee) {
            r->excl += e - f->child;
            stk[stk[i - 1].own].child += e;
        }
        if (outermost) {
            r->elapsed += e;
            r->outer++;
        }
        if (unlikely(r->measured == r->thresh))
            start_extrapolation(r);
    } else {
        if (r->callee) {
            r->excl += r->mean_excl;
            stk[stk[i - 1].own].child += r->mean_frame;
        }
        if (outermost)
            r->elapsed += r->mean_elapsed;
    }
}

/* Close frames top .. bottom (inclusive) of stk at one instant. */
static void leave_down_to(struct km_frame *stk, int32_t top, int32_t bottom,
                          km_tick now)
{
    for (int32_t i = top; i >= bottom; i--)
        leave(stk, i, now);
}

static void first_entry(struct km_region *r)
{
    if (KM_KIND_IS_ROUTINE(r->kind))
        r->order = ++st.nentered;
}

void km_in_f(const int32_t *h)
{
    uint32_t id = (uint32_t)*h;
    if (unlikely(id - 1 >= (uint32_t)st.nreg)) {
        st.bad_in++;
        return;
    }
    if (unlikely(st.sp == KM_STACK_DEPTH - 1)) {
        st.lost++;
        st.overflow_depth++;
        return;
    }
    struct km_region *r = st.tab[id - 1];
    if (unlikely(r->count++ == 0))
        first_entry(r);
    r->active++;
    int32_t i = ++st.sp;
    struct km_frame *f = &st.stack[i];
    f->r = r;
    f->child = 0;
    f->own = r->callee ? i : st.stack[i - 1].own;
    if (r->extrap) {
        f->measured = 0;
        return;
    }
    f->measured = 1;
    f->start = now_tick();           /* last, so our work is not in it */
}

static void km_out_slow(int32_t id)
{
    if (id <= 0 || id > st.nreg) {
        st.bad_in++;
        return;
    }
    int32_t j = st.sp;
    while (j > 0 && st.stack[j].r->id != id)
        j--;
    if (j == 0) {                    /* not open: ignore, but say so */
        st.bad_out++;
        return;
    }
    int any_measured = 0;
    for (int32_t i = j; i <= st.sp; i++)
        any_measured |= st.stack[i].measured;
    km_tick now = any_measured ? now_tick() : 0;
    leave_down_to(st.stack, st.sp, j, now);
    st.sp = j - 1;
}

void km_out_f(const int32_t *h)
{
    if (unlikely(st.overflow_depth)) {   /* an entry that did not fit */
        st.overflow_depth--;
        return;
    }
    struct km_frame *f = &st.stack[st.sp];
    if (likely(st.sp > 0 && f->r->id == *h)) {
        km_tick now = f->measured ? now_tick() : 0;   /* first */
        leave(st.stack, st.sp, now);
        st.sp--;
        return;
    }
    km_out_slow(*h);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */

void km_report_free(struct km_report *rep)
{
    free(rep->reg);
    rep->reg = NULL;
}

/* The figures as if every open frame were left at `now`, without touching
 * the live regions or stack.  On failure (no memory) the report still has
 * its scalar fields, but no regions. */
static int make_report(struct km_report *rep, const char *event, km_tick now)
{
    memset(rep, 0, sizeof *rep);
    rep->total = now - st.t0;
    rep->clock_reads = st.reads;
    rep->clock = st.clock;
    rep->nwrites = st.nwrites;
    rep->nranks = st.nranks;
    rep->rank = st.rank;
    rep->event = event;
    rep->started = st.started;
    rep->bad_out = st.bad_out;
    rep->bad_in = st.bad_in;
    rep->lost = st.lost;
    rep->bad_reg = st.bad_reg;

    rep->reg = malloc(((size_t)st.nreg + 1) * sizeof *rep->reg);
    struct km_frame *stk = malloc(((size_t)st.sp + 1) * sizeof *stk);
    if (!rep->reg || !stk) {
        free(stk);
        km_report_free(rep);
        return -1;
    }
    rep->nreg = st.nreg;
    for (int32_t i = 0; i < st.nreg; i++)
        rep->reg[i] = *st.tab[i];
    memcpy(stk, st.stack, ((size_t)st.sp + 1) * sizeof *stk);
    for (int32_t i = 1; i <= st.sp; i++)
        stk[i].r = &rep->reg[stk[i].r->id - 1];
    leave_down_to(stk, st.sp, 1, now);
    rep->outside = rep->total - stk[0].child;
    free(stk);

    for (int32_t i = 0; i < rep->nreg; i++) {
        struct km_region *r = &rep->reg[i];
        struct km_region *owner = &rep->reg[r->routine - 1];
        if (KM_KIND_IS_ROUTINE(r->kind)) {
            rep->routine_counts += r->count;
            rep->net += r->excl;
            rep->extrapolated |= r->extrap && r->count > r->measured;
        } else if (r->kind == KM_K_CALL) {
            rep->unmeasured += r->excl;
        } else if (r->kind == KM_K_MPI) {
            rep->unmeasured += r->excl;
            rep->mpi += r->elapsed;
            owner->mpi += r->elapsed;
        } else if (r->kind == KM_K_IO) {
            rep->io += r->elapsed;
            owner->io += r->elapsed;
        }
    }
    if (st.mpi_state != MPI_NONE) {
        double spt = st.clock.seconds_per_tick;
        rep->t = (double)rep->total * spt;
        rep->c = (double)(rep->mpi - st.mpi_before) * spt;
        rep->r = (double)(st.t_mpii - st.t0) * spt;
        rep->p = rep->t - rep->c - rep->r;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

static void report_no_memory(void)
{
    fprintf(stderr, "kmtool: KM_output not written: out of memory\n");
}

/* Take `d` ticks just spent inside libkm (writing a snapshot) out of every
 * figure: the open frames, the start of the run and the MPI_INIT mark
 * move forward by it. */
static void hide_time(km_tick d)
{
    for (int32_t i = 1; i <= st.sp; i++)
        st.stack[i].start += d;
    st.t0 += d;
    if (st.mpi_state != MPI_NONE)
        st.t_mpii += d;
}

/* Write this process's results alone (serial program, or an MPI rank whose
 * results cannot be gathered).  `final`: END, STOP, EXIT or exit. */
static void write_results(const char *event, int final)
{
    if (!st.initialized || st.mpi_state == MPI_DONE || st.final_done)
        return;
    if (final)
        st.final_done = 1;
    st.nwrites++;
    struct km_report rep;
    km_tick now = now_tick();
    if (make_report(&rep, event, now)) {
        report_no_memory();
        return;
    }
    struct km_text t = { 0 };
    km_format_header(&t, &rep, st.mpi_state == MPI_ACTIVE ? st.rank : -1);
    km_format_section(&t, &rep);
    km_format_end(&t);
    if (t.failed)
        report_no_memory();
    else
        km_write_file(t.p, t.len, &st.out);
    km_text_free(&t);
    km_report_free(&rep);
    if (!final)
        hide_time(now_tick() - now);
}

void km_end_f(void)  { write_results("END", 1); }
void km_stop_f(void) { write_results("STOP", 1); }
void km_exit_f(void) { write_results("EXIT", 1); }
void km_writ_f(void) { write_results("PRINT_OUT", 0); }

static void at_exit(void)
{
    write_results("exit", 1);
}

/* ------------------------------------------------------------------------ */
/* MPI (through the table km_mpi.c hands over)                              */

void km_core_mpi_init(const struct km_mpi_ops *ops)
{
    init();
    if (st.mpi_state != MPI_NONE || ops->finalized())
        return;
    km_tick now = now_tick();
    struct km_report rep;
    if (make_report(&rep, "", now) == 0) {
        st.mpi_before = rep.mpi;
        km_report_free(&rep);
    }
    st.t_mpii = now;
    if (ops->rank_size(&st.rank, &st.nranks))
        st.rank = 0, st.nranks = 1;
    st.mpi_state = MPI_ACTIVE;
}

void km_core_mpi_finalize(const struct km_mpi_ops *ops)
{
    /* Every rank takes the same branch here, so the collective below is
     * entered by all ranks or none. */
    init();
    if (st.mpi_state == MPI_DONE || ops->finalized())
        return;
    if (st.mpi_state == MPI_NONE) {  /* MPI_INIT was not instrumented */
        st.t_mpii = st.t0;
        st.mpi_before = 0;
    }
    if (ops->rank_size(&st.rank, &st.nranks))
        st.rank = 0, st.nranks = 1;
    st.mpi_state = MPI_DONE;
    st.final_done = 1;
    st.nwrites++;

    struct km_report rep;
    struct km_text section = { 0 };
    if (make_report(&rep, "MPI_FINALIZE", now_tick()) == 0)
        km_format_section(&section, &rep);
    else
        section.failed = 1;          /* rank 0 notes the loss */
    km_write_gathered(ops, &rep, &section, &st.out);
    km_text_free(&section);
    km_report_free(&rep);
}

/* ------------------------------------------------------------------------ */
/* Test hooks                                                                */

void km_test_set_clock(km_tick (*read)(void), double seconds_per_tick)
{
    st.clock.read = read;
    st.clock.seconds_per_tick = seconds_per_tick;
    st.clock.name = "test clock";
    st.clock.read_cost = 0;
    st.clock_injected = 1;
}

void km_test_reset(void)
{
    for (int32_t i = 0; i < st.nreg; i++)
        free_region(st.tab[i]);
    free(st.tab);
    free(st.hash);
    struct km_clock c = st.clock;
    int injected = st.clock_injected;
    memset(&st, 0, sizeof st);
    st.clock = c;
    st.clock_injected = injected;
}

int km_test_report(struct km_report *rep, const char *event)
{
    return make_report(rep, event, now_tick());
}

int km_test_depth(void)
{
    return st.sp;
}
