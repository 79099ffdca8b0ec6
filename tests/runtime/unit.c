/*
 * unit.c — unit tests of libkm's core, driven through the Fortran entry
 * points with a fake clock (km_test_set_clock), so every time is exact.
 * This file owns the harness (unit.h declares it: the fake clock, begin(),
 * the helpers) and main(), which runs the tests of unit_*.c in order.
 *
 * Each test starts from km_test_reset() in a fresh temporary directory.
 * Output: one line per failed check; exit status 0 when all pass.
 */
#include "unit.h"

int failures;
const char *current;

/* ---- fake clock --------------------------------------------------------- */

km_tick fake_now;
long long fake_reads;

km_tick fake_after_read;     /* time that passes after each read */

static km_tick fake_read(void)
{
    fake_reads++;
    km_tick t = fake_now;
    fake_now += fake_after_read;
    return t;
}

/* ---- helpers ------------------------------------------------------------ */

char topdir[4096];
char workdir[4200];
char spare_tmp[4200];         /* TMPDIR: nothing goes to /tmp */

void begin(const char *name)
{
    current = name;
    km_test_reset();
    km_test_set_clock(fake_read, 1e-9);
    fake_now = 0;
    fake_reads = 0;
    fake_after_read = 0;
    unsetenv("KM_TIME_PREDICTION_MODE_NUMBER");
    km_test_set_interval(0);
    snprintf(workdir, sizeof workdir, "%s/%s", topdir, name);
    if (mkdir(workdir, 0777) != 0 || chdir(workdir) != 0) {
        printf("FAIL %s: cannot make %s: %s\n", name, workdir, strerror(errno));
        failures++;
    }
}

int32_t reg(const char *text, int32_t hr)
{
    int32_t h = 0;
    km_reg_f(&h, &hr, text);
    return h;
}

int32_t reg_routine(const char *text)
{
    int32_t h = 0;
    km_reg_f(&h, &h, text);           /* h and hr alias, as in Fortran */
    return h;
}

void in_at(km_tick t, int32_t h)
{
    fake_now = t;
    km_in_f(&h);
}

void out_at(km_tick t, int32_t h)
{
    fake_now = t;
    km_out_f(&h);
}

struct km_report report_at(km_tick t)
{
    struct km_report rep;
    fake_now = t;
    if (km_test_report(&rep, "test")) {
        printf("FAIL %s: no report\n", current);
        failures++;
        exit(1);
    }
    return rep;
}

/* The figures add up, exactly: total = net + MPI + start-up +
 * uninstrumented + outside + overhead; and nothing contradicts anything:
 * 0 <= own <= elapsed, estimated parts within their figures, a location
 * within its routine. */
void check_identity(const struct km_report *rep)
{
    km_time net = 0, calls = 0, mpi = 0;
    for (int32_t i = 0; i < rep->nreg; i++) {
        const struct km_region *r = &rep->reg[i];
        if (KM_KIND_IS_ROUTINE(r->kind))
            net += r->excl;
        else if (r->kind == KM_K_CALL)
            calls += r->excl;
        else if (r->kind == KM_K_MPI)
            mpi += r->excl;
        CHECK(r->excl >= 0);
        CHECK(r->elapsed >= 0);
        CHECK(r->excl <= r->elapsed);
        CHECK(r->est_el >= 0 && r->est_el <= r->elapsed);
        CHECK(r->est_excl >= 0 && r->est_excl <= r->excl);
        CHECK(r->elapsed <= rep->total);
        if (!KM_KIND_IS_ROUTINE(r->kind))
            CHECK(r->elapsed <= rep->reg[r->routine - 1].elapsed);
    }
    CHECK_EQ(net, rep->net);
    CHECK_EQ(calls, rep->uninstr);
    CHECK_EQ(mpi, rep->mpi + rep->startup);
    for (int32_t i = 1; i < rep->npaths; i++) {  /* every path, too */
        const struct km_pnode *p = &rep->paths[i];
        km_time kids = 0;
        for (int32_t k = 1; k < rep->npaths; k++)
            if (rep->paths[k].parent == i)
                kids += rep->paths[k].incl;
        CHECK(p->own >= 0 && p->est >= 0);
        CHECK(p->incl_est >= 0 && p->incl_est <= p->incl);
        CHECK(p->own + p->est <= p->incl);
        CHECK(kids <= p->incl);
    }
    CHECK(rep->outside >= 0);
    CHECK(rep->overhead >= 0);
    CHECK_EQ(rep->total, rep->net + rep->mpi + rep->startup + rep->uninstr +
                         rep->outside + rep->overhead);
}

char *slurp(const char *name)
{
    FILE *f = fopen(name, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

int exists(const char *name)
{
    return access(name, F_OK) == 0;
}

/* A whole file (malloc'd, NUL-terminated; *len its size), or NULL. */
char *slurp_n(const char *name, size_t *len)
{
    struct stat sb;
    FILE *f = fopen(name, "rb");
    if (!f)
        return NULL;
    char *p = fstat(fileno(f), &sb) == 0 ? malloc((size_t)sb.st_size + 1)
                                         : NULL;
    size_t n = p ? fread(p, 1, (size_t)sb.st_size, f) : 0;
    fclose(f);
    if (p)
        p[n] = '\0';
    *len = n;
    return p;
}

/* The names in a directory, sorted, space-separated ("" if empty). */
char *listing(const char *dir)
{
    static char buf[4096];
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "ls -A '%s' 2>/dev/null | tr '\\n' ' '", dir);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    if (p)
        pclose(p);
    buf[n] = '\0';
    return buf;
}

/* Standard error into a file until captured() returns what was written. */
static int saved_stderr = -1;
static char stderr_path[4300];

void capture_stderr(void)
{
    fflush(stderr);
    snprintf(stderr_path, sizeof stderr_path, "%s/stderr.captured", topdir);
    int fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    saved_stderr = dup(2);
    if (fd < 0 || saved_stderr < 0 || dup2(fd, 2) != 2) {
        printf("FAIL %s: cannot capture standard error\n", current);
        failures++;
    }
    if (fd >= 0)
        close(fd);
}

char *captured(void)
{
    fflush(stderr);
    if (saved_stderr >= 0) {
        dup2(saved_stderr, 2);
        close(saved_stderr);
    }
    saved_stderr = -1;
    size_t len;
    char *t = slurp_n(stderr_path, &len);
    unlink(stderr_path);
    return t ? t : strdup("(nothing captured)");
}

char *formatted(const struct km_report *rep)
{
    struct km_text t = { 0 };
    km_format_section(&t, rep);
    CHECK(!t.failed);
    char *copy = t.failed ? NULL : strndup(t.p, t.len);
    km_text_free(&t);
    return copy;
}

/* Ten routines R0 ... R9, threshold 2. */
void reg_ten(int32_t r[10])
{
    char text[64];
    for (int k = 0; k < 10; k++) {
        snprintf(text, sizeof text, "2 %d 2 0 R%d r.f", k + 1, k);
        r[k] = reg_routine(text);
    }
}

/* ---- a place that fails ------------------------------------------------- */

/* KM_OUTPUT_DIR for the test under way: <workdir>.spare, made empty. */
char spare[4300];

void use_spare(void)
{
    snprintf(spare, sizeof spare, "%s.spare", workdir);
    CHECK(mkdir(spare, 0777) == 0);
    setenv("KM_OUTPUT_DIR", spare, 1);
}

int main(void)
{
    char cwd[3000];
    if (!getcwd(cwd, sizeof cwd)) {
        perror("getcwd");
        return 1;
    }
    snprintf(topdir, sizeof topdir, "%s/kmrt-unit.XXXXXX", cwd);
    if (!mkdtemp(topdir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(spare_tmp, sizeof spare_tmp, "%s/tmp", topdir);
    if (mkdir(spare_tmp, 0777) != 0 || setenv("TMPDIR", spare_tmp, 1) != 0) {
        perror(spare_tmp);
        return 1;
    }
    unsetenv("KM_OUTPUT_DIR");
    test_spec_example();
    test_transparent_and_callee();
    test_recursion();
    test_unwinding();
    test_estimates();
    test_threshold_override();
    test_costly_start();
    test_settle();
    test_paths_inside_frames();
    test_paths_two_callers();
    test_paths_one_slot();
    test_paths_recursion_limit();
    test_paths_limit();
    test_paths_recursion_callers();
    test_paths_new_cost();
    test_many_estimated();
    test_fit_in_parent();
    test_overhead();
    test_estimated_loop();
    test_long_samples();
    test_waiting_estimated();
    test_waiting_open();
    test_sampling_rate();
    test_per_caller();
    test_changing_costs();
    test_adaptive_sampling();
    test_stack_overflow();
    test_registration();
    test_print_out_and_end();
    test_file_names();
    test_file_replaced_meanwhile();
    test_file_moved();
    test_file_moved_replaced();
    test_file_nowhere();
    test_mpi_finalize();
    test_mpi_unmeasured();
    test_mpi_not_finalized();
    test_header_alone();
    test_gather_agree();
    test_gather_many();
    test_gather_moved();
    test_rank_file_moved();
    test_timeline_phases();
    test_timeline_doubling();
    test_timeline_estimated();
    test_redundant();
    test_trace();
    test_signal_write();
    test_mpiio();
    test_files_full();
    km_test_reset();                  /* so that the atexit handler is idle */
    current = "the end";
    CHECK(strcmp(listing(spare_tmp), "") == 0);
    if (chdir(topdir) == 0 && chdir("..") == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", topdir);
        if (failures == 0 && system(cmd) != 0)
            printf("note: could not remove %s\n", topdir);
    }
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
