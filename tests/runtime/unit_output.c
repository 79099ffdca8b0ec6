/*
 * unit_output.c — unit tests of writing KM_output: snapshots (KM_WRIT)
 * and the final write into one file, names already taken, a file replaced
 * meanwhile, a write that fails and moves to KM_OUTPUT_DIR or finds no
 * place at all, and the write at a terminating signal.
 */
#include "unit.h"

/* KM_WRIT writes snapshots into one file without disturbing the frames;
 * KM_END writes the final figures into the same file. */
void test_print_out_and_end(void)
{
    begin("printout");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t p = reg_routine("2 1 100000 0 P p.f");
    in_at(0, m);
    in_at(10, p);
    fake_now = 50;
    km_writ_f();                      /* with MAIN and P open */
    CHECK(exists("KM_output.000"));
    char *t1 = slurp("KM_output.000");
    CHECK_IN(t1, "! Written at : PRINT_OUT\n");
    CHECK_IN(t1, "\n1               ! Output counts by KM_writ\n");
    CHECK_IN(t1, "\n5.0000000e-08   ! Total time\n");
    CHECK_IN(t1, "\n! ===== End =====\n");
    CHECK_EQ(km_test_depth(), 2);
    out_at(60, p);
    fake_now = 70;
    fake_after_read = 100;            /* writing takes 100 ticks */
    km_writ_f();
    fake_after_read = 0;
    char *t2 = slurp("KM_output.000");
    CHECK_IN(t2, "\n2               ! Output counts by KM_writ\n");
    CHECK_IN(t2, "\n7.0000000e-08   ! Total time\n");
    CHECK(!exists("KM_output.001"));
    fake_now = 400;
    km_end_f();
    char *t3 = slurp("KM_output.000");
    CHECK_IN(t3, "! Written at : END\n");
    /* the time spent writing is in no figure: 400 - 100 */
    CHECK_IN(t3, "\n3.0000000e-07   ! Total time\n");
    CHECK_IN(t3, "MAIN                      3.0000000e-07    2.5000000e-07");
    CHECK_IN(t3, "\n3               ! Output counts by KM_writ\n");
    CHECK_IN(t3, "\n0001 0          ! Processors and Rank\n");
    /* P's elapsed was not disturbed by the snapshots: 10 .. 60 */
    CHECK_IN(t3, "P                         5.0000000e-08");
    CHECK(!exists("KM_output.001"));
    km_stop_f();                      /* already written: nothing */
    km_writ_f();
    char *t4 = slurp("KM_output.000");
    CHECK(t3 && t4 && strcmp(t3, t4) == 0);
    CHECK(!exists("KM_output.001"));
    free(t1);
    free(t2);
    free(t3);
    free(t4);
}

/* Taken names are skipped, never overwritten; no temporary file stays. */
void test_file_names(void)
{
    begin("names");
    FILE *f = fopen("KM_output.000", "w");
    fputs("someone else's\n", f);
    fclose(f);
    f = fopen("KM_output.001", "w");
    fclose(f);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 5;
    km_stop_f();
    char *t = slurp("KM_output.000");
    CHECK(t && strcmp(t, "someone else's\n") == 0);
    free(t);
    t = slurp("KM_output.002");
    CHECK_IN(t, "! Written at : STOP\n");
    free(t);
    CHECK(system("test `ls -A | wc -l` -eq 3") == 0);

    /* No place can take files (the working directory is gone, the
     * others lie below a regular file): one line naming each, no crash. */
    begin("names_gone");
    char file[4300], out[4400], tmp[4400], want[16384];
    snprintf(file, sizeof file, "%s/names_gone.file", topdir);
    snprintf(out, sizeof out, "%s/out", file);
    snprintf(tmp, sizeof tmp, "%s/tmp/", file);
    f = fopen(file, "w");
    fclose(f);
    setenv("KM_OUTPUT_DIR", out, 1);
    setenv("TMPDIR", tmp, 1);
    m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    CHECK(rmdir(workdir) == 0);
    capture_stderr();
    km_end_f();                       /* cwd is gone: must just complain */
    t = captured();
    snprintf(want, sizeof want, "kmtool: KM_output not written: cannot "
             "write in the working directory (No such file or directory), "
             "nor in %s (Not a directory), nor in %s (Not a directory)\n",
             out, tmp);
    CHECK(strcmp(t, want) == 0);
    free(t);
    unsetenv("KM_OUTPUT_DIR");
    setenv("TMPDIR", spare_tmp, 1);
    if (chdir(topdir) != 0)
        failures++;
}

/* A later write replaces this run's file only while it is still the one
 * this run wrote. */
void test_file_replaced_meanwhile(void)
{
    begin("replaced");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 10;
    km_writ_f();
    CHECK(exists("KM_output.000"));
    /* the user removes it, another run takes the name */
    CHECK(unlink("KM_output.000") == 0);
    FILE *f = fopen("KM_output.000", "w");
    fputs("another run\n", f);
    fclose(f);
    fake_now = 20;
    km_writ_f();
    char *t = slurp("KM_output.000");
    CHECK(t && strcmp(t, "another run\n") == 0);
    free(t);
    t = slurp("KM_output.001");
    CHECK_IN(t, "\n2               ! Output counts by KM_writ\n");
    free(t);
    fake_now = 30;
    km_end_f();                       /* now 001 is ours: replaced */
    t = slurp("KM_output.001");
    CHECK_IN(t, "! Written at : END\n");
    free(t);
    CHECK(!exists("KM_output.002"));
}

/* ---- a place that fails (use_spare, CHECK_MOVED: unit.h) ----------------- */

/* A file written the way the gathered file is: a head, room for rows
 * written in place later, a body in chunks (past the size of the buffer a
 * move copies through), each chunk followed by a few rows. */
enum { MV_HEAD = 1000, MV_ROWS = 64, MV_ROW = 50, MV_CHUNK = 4096,
       MV_BODY = 70000, MV_SIZE = MV_HEAD + MV_ROWS * MV_ROW + MV_BODY };

static void moved_text(char *text)
{
    for (size_t i = 0; i < MV_SIZE; i++)
        text[i] = (char)('a' + (i * 7 + i / 13) % 26);
    for (size_t i = 80; i < MV_SIZE; i += 81)
        text[i] = '\n';
}

static void write_like_gather(struct km_out_file *f, const char *text)
{
    const off_t body = MV_HEAD + MV_ROWS * MV_ROW;
    km_file_write(f, text, MV_HEAD);
    int row = 0;
    for (off_t at = 0; at < MV_BODY; at += MV_CHUNK) {
        size_t n = MV_BODY - at < MV_CHUNK ? (size_t)(MV_BODY - at) : MV_CHUNK;
        km_file_pwrite(f, text + body + at, n, body + at);
        for (int k = 0; k < 4 && row < MV_ROWS; k++, row++)
            km_file_pwrite(f, text + MV_HEAD + row * MV_ROW, MV_ROW,
                           MV_HEAD + row * MV_ROW);
    }
}

/* A write that fails in the working directory after `after` bytes (after
 * < 0: at the link) lands whole in KM_OUTPUT_DIR, byte for byte what an
 * unfailing write leaves, with one line saying so and nothing left
 * behind. */
void test_file_moved(void)
{
    static char text[MV_SIZE];
    moved_text(text);
    const off_t afters[] = { 0, 1, MV_HEAD - 1, MV_HEAD, MV_HEAD + 1,
                             MV_HEAD + 10 * MV_ROW + 7, MV_HEAD + MV_ROWS * MV_ROW,
                             20000, 40000, MV_SIZE - 1, -1, MV_SIZE };
    for (size_t i = 0; i < sizeof afters / sizeof afters[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "moved_%lld", (long long)afters[i]);
        begin(name);
        use_spare();
        int stays = afters[i] == MV_SIZE;    /* nothing beyond it */
        struct km_outname out = { .nnn = -1, .rank = -1 };
        struct km_out_file f;
        km_test_fail_writes(afters[i], ENOSPC);
        capture_stderr();
        CHECK_EQ(km_file_open_temp(&f), 0);
        write_like_gather(&f, text);
        km_file_close(&f);
        CHECK_EQ(km_file_place(&f, &out, -1), 0);
        char *err = captured();
        km_test_fail_writes(0, 0);
        if (stays) {
            CHECK(strcmp(err, "") == 0);
            free(err);
        } else {
            CHECK_MOVED(err, "No space left on device", "KM_output.000");
        }
        CHECK(strcmp(out.dir, stays ? "" : spare) == 0);
        CHECK_EQ(out.nnn, 0);
        CHECK(strcmp(listing(stays ? spare : workdir), "") == 0);
        CHECK(strcmp(listing(stays ? workdir : spare), "KM_output.000 ") == 0);
        size_t len = 0;
        char *got = slurp_n("KM_output.000", &len);
        if (!stays) {
            free(got);
            char path[4400];
            snprintf(path, sizeof path, "%s/KM_output.000", spare);
            got = slurp_n(path, &len);
        }
        CHECK(got && len == MV_SIZE && memcmp(got, text, MV_SIZE) == 0);
        free(got);
    }
    unsetenv("KM_OUTPUT_DIR");
}

/* The files of one run: a later write replaces the moved file in its
 * place without a second line; once the working directory takes files
 * again, the file goes there and the moved one is removed. */
void test_file_moved_replaced(void)
{
    begin("moved_replaced");
    use_spare();
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    km_test_fail_writes(100, EDQUOT);
    capture_stderr();
    fake_now = 10;
    km_writ_f();
    CHECK(strcmp(listing(spare), "KM_output.000 ") == 0);
    fake_now = 20;
    km_writ_f();
    char *err = captured();
    CHECK_MOVED(err, "Disk quota exceeded", "KM_output.000");
    CHECK(strcmp(listing(spare), "KM_output.000 ") == 0);
    CHECK(strcmp(listing(workdir), "") == 0);
    char path[4400];
    snprintf(path, sizeof path, "%s/KM_output.000", spare);
    char *t = slurp(path);
    CHECK(t && strstr(t, "! Written at : PRINT_OUT\n"));
    free(t);
    km_test_fail_writes(0, 0);
    capture_stderr();
    fake_now = 30;
    km_end_f();
    err = captured();
    CHECK(strcmp(err, "") == 0);
    free(err);
    CHECK(strcmp(listing(spare), "") == 0);
    CHECK(strcmp(listing(workdir), "KM_output.000 ") == 0);
    t = slurp("KM_output.000");
    CHECK(t && strstr(t, "! Written at : END\n"));
    free(t);
    unsetenv("KM_OUTPUT_DIR");
}

/* Every place fails, the first midway: one line, no file, no temporary
 * file anywhere; the next writes, failing the same way, say nothing. */
void test_file_nowhere(void)
{
    begin("nowhere");
    char file[4400], out[4500], tmp[4500], want[16384];
    snprintf(file, sizeof file, "%s/file", workdir);
    snprintf(out, sizeof out, "%s/out", file);
    snprintf(tmp, sizeof tmp, "%s/tmp", file);
    FILE *f = fopen(file, "w");
    fclose(f);
    setenv("KM_OUTPUT_DIR", out, 1);
    setenv("TMPDIR", tmp, 1);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    km_test_fail_writes(300, ENOSPC);
    capture_stderr();
    fake_now = 10;
    km_writ_f();
    fake_now = 20;
    km_writ_f();
    fake_now = 30;
    km_stop_f();
    char *err = captured();
    km_test_fail_writes(0, 0);
    snprintf(want, sizeof want, "kmtool: KM_output not written: cannot "
             "write in %s (No space left on device), nor in %s (Not a "
             "directory), nor in %s (Not a directory)\n", workdir, out, tmp);
    CHECK(strcmp(err, want) == 0);
    free(err);
    CHECK(strcmp(listing(workdir), "file ") == 0);
    unsetenv("KM_OUTPUT_DIR");
    setenv("TMPDIR", spare_tmp, 1);
}

/* A terminating signal writes the results like STOP, once. */
void test_signal_write(void)
{
    begin("signal");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 50;
    CHECK_EQ(km_core_on_signal(15), 0);
    char *t = slurp("KM_output.000");
    CHECK_IN(t, "! Written at : signal 15\n");
    CHECK_IN(t, "\n5.0000000e-08   ! Total time\n");
    free(t);
    fake_now = 60;
    km_end_f();                       /* already written: nothing */
    CHECK(!exists("KM_output.001"));
    t = slurp("KM_output.000");
    CHECK_IN(t, "! Written at : signal 15\n");
    free(t);
}
