/*
 * unit_mpi.c — unit tests of libkm under MPI, through a fake MPI (its
 * operations, fake_ops, are shared with unit_timeline.c): the Prediction
 * (T, S, C, R, P) and the gathered file at MPI_FINALIZE, ranks' own files,
 * the handshake before a gather, the gather of many ranks and its move
 * when the working directory fails, redundant regions.
 */
#include "unit.h"

/* ---- fake MPI ------------------------------------------------------------ */

/* Rank 0's view of up to FAKE_MAX ranks: rank p (p > 0) answers a token
 * with its head (section length; T = 10p, S = p, C = 2p, R = 3p,
 * O = 0.5p, P = 3.5p, W = 0.01p)
 * and then its section, "! ===== Rank p =====\nfake section of rank p\n". */
enum { FAKE_MAX = 16, FAKE_WINDOW = 4 };
static int fake_rank, fake_size, fake_finalized;
static int fake_step[FAKE_MAX];      /* 0 not asked, 1 asked, 2 head sent,
                                        3 section sent */
static int tokens_sent, sections_done;

void fake_reset(int rank, int size)
{
    fake_rank = rank;
    fake_size = size;
    fake_finalized = 0;
    memset(fake_step, 0, sizeof fake_step);
    tokens_sent = sections_done = 0;
}

static void fake_section(char *buf, size_t size, int p)
{
    snprintf(buf, size, "! ===== Rank %d =====\nfake section of rank %d\n",
             p, p);
}

static int f_finalized(void) { return fake_finalized; }
static int f_rank_size(int *r, int *s) { *r = fake_rank; *s = fake_size; return 0; }
static int f_begin(void) { return 0; }
static int f_send(const void *buf, size_t n, int dest)
{
    (void)buf;
    CHECK_EQ(n, sizeof(int));
    CHECK(dest > 0 && dest < fake_size && fake_step[dest] == 0);
    /* never more than the window ahead of the sections received */
    CHECK(dest <= sections_done + FAKE_WINDOW);
    fake_step[dest] = 1;
    tokens_sent++;
    return 0;
}
static int f_recv(void *buf, size_t n, int src)
{
    char text[128];
    CHECK(src > 0 && src < fake_size);
    CHECK_EQ(src, sections_done + 1);            /* in rank order */
    fake_section(text, sizeof text, src);
    uint64_t len = strlen(text);
    if (fake_step[src] == 1) {
        /* T = 10p, S = p, C = 2p, R = 3p, O = 0.5p, P = 3.5p, W = 0.01p */
        struct { uint64_t len; struct km_prediction_row row; } head =
            { len, { 10.0 * src, src, 2.0 * src, 3.0 * src, 0.5 * src,
                     3.5 * src, 0.01 * src, KM_PRED_O | KM_PRED_P, 0 } };
        CHECK_EQ(n, sizeof head);
        memcpy(buf, &head, sizeof head);
    } else {
        CHECK_EQ(fake_step[src], 2);
        CHECK_EQ(n, len);
        memcpy(buf, text, len);
        sections_done++;
    }
    fake_step[src]++;
    return 0;
}
static int f_bcast(int *v) { (void)v; return 0; }
static int f_barrier(void) { return 0; }
static void f_end(void) {}
static int f_state(void) { return f_finalized() ? 2 : 1; }
static int f_at_finalize(void) { return 0; }
static void f_hail(int dest, int tag, int v) { (void)dest, (void)tag, (void)v; }
static int f_heard(int src, int tag) { (void)src, (void)tag; return 1; }

const struct km_mpi_ops fake_ops = {
    f_finalized, f_rank_size, f_begin, f_send, f_recv, f_bcast, f_barrier, f_end,
    f_state, f_at_finalize, f_hail, f_heard
};

/* A Prediction row as libkm prints it (O and P marked: libkm's overhead
 * is an estimate). */
static void want_row(char *buf, size_t size, int rank, double t, double s,
                     double c, double r, double o, double p, double w)
{
    char ro[32], rp[32];
    snprintf(ro, sizeof ro, "~%.7e", o);
    snprintf(rp, sizeof rp, "~%.7e", p);
    snprintf(buf, size, "\n%8d %16.7e%16.7e%16.7e%16.7e%16s%16s%16.7e\n",
             rank, t, s, c, r, ro, rp, w);
}

/* T, S, C, R, P of one rank, the gathered file, nothing written after it. */
void test_mpi_finalize(void)
{
    begin("mpi_finalize");
    fake_reset(0, 2);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t init = reg("12 3 100000 0 CALL MPI_INIT(IERR)", m);
    int32_t red = reg("12 5 100000 0 CALL MPI_ALLREDUCE(A, B, 1)", m);
    in_at(100, m);
    in_at(110, init);                 /* R = 110 - 0 */
    out_at(150, init);                /* S = 40 */
    fake_now = 160;
    km_core_mpi_init(&fake_ops);
    in_at(200, red);
    out_at(230, red);                 /* C = 30 */
    fake_now = 1000;
    struct km_report rep = report_at(1000);
    CHECK_NEAR(rep.pred.t, 1000e-9);
    CHECK_NEAR(rep.pred.s, 40e-9);
    CHECK_NEAR(rep.pred.r, 110e-9);
    CHECK_NEAR(rep.pred.c, 30e-9);
    CHECK_NEAR(rep.pred.p, 820e-9);
    CHECK_EQ(rep.pred.estimated, KM_PRED_O | KM_PRED_P);
    CHECK_EQ(rep.pred.none, 0);
    CHECK_EQ(rep.mpi, T(30));
    CHECK_EQ(rep.startup, T(40));
    CHECK_EQ(R(&rep, m)->mpi, T(30));        /* start-up left out */
    CHECK_EQ(rep.nranks, 2);
    check_identity(&rep);
    km_report_free(&rep);
    km_writ_f();                      /* while MPI runs: this rank alone */
    char *t = slurp("KM_output.000.0");
    CHECK_IN(t, "! Written at : PRINT_OUT\n");
    CHECK_IN(t, "this file holds rank 0 only");
    free(t);
    fake_now = 1000;
    km_core_mpi_finalize(&fake_ops);
    CHECK_EQ(tokens_sent, 1);
    CHECK_EQ(sections_done, 1);
    t = slurp("KM_output.000");         /* replaced the rank-only file */
    CHECK(system("test `ls -A | wc -l` -eq 1") == 0);
    CHECK_IN(t, "\n2               ! Output counts by KM_writ\n");
    CHECK_IN(t, "! Written at : MPI_FINALIZE\n! Clock      : test clock, 0.00e+00 s per read\n! Overhead   : 0.00e+00 s per measured entry and exit, 0.00e+00 s per estimated one, 0.00e+00 s inside a measured region; taken out of every time\n! Ranks      : 2\n!\n! ===== Prediction =====\n! Times without MPI start-up (MPI_INIT) and libkm; ~ marks figures that contain estimates           \n!   Rank        Total(s)     Start-up(s)          MPI(s)    Redundant(s)     Overhead(s)     Parallel(s)       Waited(s)\n");
    char want[512];
    want_row(want, sizeof want, 0, 1000e-9, 40e-9, 30e-9, 110e-9, 0, 820e-9,
             0);
    CHECK_IN(t, want);
    want_row(want, sizeof want, 1, 10, 1, 2, 3, 0.5, 3.5, 0.01);
    CHECK_IN(t, want);
    /* T_1pe = min R + sum P = 1.1e-7 + 8.2e-7 + 3.5; max T - S - O = 8.5;
     * marked: it rests on libkm's overhead, an estimate */
    double t1 = 110e-9 + 820e-9 + 3.5;
    snprintf(want, sizeof want, "\n~%-15.7e! Predicted one-PE time T_1pe\n"
             "~%-15.7e! Predicted speedup\n~%-15.7e! Predicted parallel "
             "efficiency\n! ===== Rank 0 =====\n0002 0 ", t1, t1 / 8.5,
             t1 / 8.5 / 2);
    CHECK_IN(t, want);
    CHECK_IN(t, "\n! ===== Rank 1 =====\nfake section of rank 1\n! ===== End =====\n");
    free(t);
    fake_now = 1100;
    km_end_f();                       /* after MPI_FINALIZE: nothing */
    CHECK(!exists("KM_output.001"));
}

/* A rank that ran a routine with MPI calls kmrun left unmeasured: no
 * prediction, and a warning saying why. */
void test_mpi_unmeasured(void)
{
    begin("mpi_unmeasured");
    fake_reset(0, 2);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t x = reg_routine("2 1 100000 4 EXCHNG x.f");
    in_at(0, m);
    fake_now = 10;
    km_core_mpi_init(&fake_ops);
    in_at(20, x);
    out_at(30, x);
    fake_now = 100;
    km_core_mpi_finalize(&fake_ops);
    char *t = slurp("KM_output.000");
    CHECK_IN(t, "\n! No prediction: MPI calls were not measured in some routines (see the ranks' warnings)");
    CHECK_IN(t, "\nn/a             ! Predicted one-PE time T_1pe\nn/a             ! Predicted speedup\nn/a             ! Predicted parallel efficiency\n");
    CHECK_IN(t, "\n! Warning: MPI calls were not measured in 1 routines (first: EXCHNG); no prediction\n");
    free(t);
}

/* STOP while MPI is initialised: this rank's own file, so marked. */
void test_mpi_not_finalized(void)
{
    begin("mpi_stop");
    fake_reset(3, 4);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 10;
    km_core_mpi_init(&fake_ops);
    fake_now = 20;
    km_stop_f();
    char *t = slurp("KM_output.000.3");
    CHECK_IN(t, "! Ranks      : 4, this file holds rank 3 only (MPI not finalized)\n");
    CHECK_IN(t, "! ===== Rank 3 =====\n0004 3 ");
    CHECK(t && !strstr(t, "Prediction"));
    free(t);
}

/* A file of one MPI process says why it holds one only, and whether its
 * rank is known. */
void test_header_alone(void)
{
    begin("header_alone");
    struct km_report rep;
    memset(&rep, 0, sizeof rep);
    rep.event = "exit";
    rep.started = "2026-01-01 00:00:00";
    rep.nranks = 3;
    struct km_text t = { 0 };
    km_format_header(&t, &rep, 2);
    CHECK_IN(t.p, "! Ranks      : 3, this file holds rank 2 only (MPI not finalized)\n");
    km_text_free(&t);
    rep.alone = "MPI ran and was finalized where libkm did not see it: "
                "not gathered";
    memset(&t, 0, sizeof t);
    km_format_header(&t, &rep, 2);
    CHECK_IN(t.p, "! Ranks      : 3, this file holds rank 2 only (MPI ran and was finalized where libkm did not see it: not gathered)\n");
    km_text_free(&t);
    rep.nranks = 1;
    memset(&t, 0, sizeof t);
    km_format_header(&t, &rep, KM_RANK_UNKNOWN);
    CHECK_IN(t.p, "! Ranks      : 1, this file holds one MPI process only, its rank unknown (MPI ran and was finalized where libkm did not see it: not gathered)\n");
    km_text_free(&t);
}

/* The handshake at an MPI_FINALIZE no instrumented code calls: a mailbox
 * of what each peer has sent (tag 7184 hail, 7185 here, 7186 verdict),
 * and what this rank sent. */
static int box[8][3];                /* [peer][tag - 7184]: value or -1 */
static int sent[8][3];
static int ag_heard(int src, int tag)
{
    int v = box[src][tag - 7184];
    box[src][tag - 7184] = -1;       /* read once */
    return v;
}
static void ag_hail(int dest, int tag, int v) { sent[dest][tag - 7184] = v; }

static void agree_reset(void)
{
    for (int p = 0; p < 8; p++)
        for (int k = 0; k < 3; k++)
            box[p][k] = sent[p][k] = -1;
}

void test_gather_agree(void)
{
    begin("gather_agree");
    struct km_mpi_ops ops = fake_ops;
    ops.heard = ag_heard;
    ops.hail = ag_hail;
    /* rank 0, every rank answers: gather, and each is told so */
    agree_reset();
    box[1][1] = box[2][1] = 1;
    CHECK_EQ(km_gather_agree(&ops, 0, 3, 0.05), 1);
    CHECK_EQ(sent[1][0], 1);
    CHECK_EQ(sent[2][0], 1);
    CHECK_EQ(sent[1][2], 1);
    CHECK_EQ(sent[2][2], 1);
    /* rank 0, rank 2 never answers: no gather, and each is told so */
    agree_reset();
    box[1][1] = 1;
    CHECK_EQ(km_gather_agree(&ops, 0, 3, 0.05), 0);
    CHECK_EQ(sent[1][2], 0);
    CHECK_EQ(sent[2][2], 0);
    /* rank 1, rank 0 never hails: no gather, and rank 0 is not told */
    agree_reset();
    CHECK_EQ(km_gather_agree(&ops, 1, 3, 0.05), 0);
    CHECK_EQ(sent[0][1], -1);
    /* rank 1, hailed: answers, then does as the verdict says */
    agree_reset();
    box[0][0] = 1;
    box[0][2] = 1;
    CHECK_EQ(km_gather_agree(&ops, 1, 3, 0.05), 1);
    CHECK_EQ(sent[0][1], 1);
    agree_reset();
    box[0][0] = 1;
    box[0][2] = 0;
    CHECK_EQ(km_gather_agree(&ops, 1, 3, 0.05), 0);
    /* one rank: nothing to ask */
    agree_reset();
    CHECK_EQ(km_gather_agree(&ops, 0, 1, 0.05), 1);
    CHECK_EQ(sent[0][0], -1);
}

/* Rank 0 of 7: each rank's row lands in place, the sections follow in
 * rank order, never more than the window of ranks asked ahead, no hole. */
void test_gather_many(void)
{
    begin("gather_many");
    fake_reset(0, 7);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 10;
    km_core_mpi_init(&fake_ops);      /* R(0) = 10: MPI_INIT not measured */
    fake_now = 100;                   /* T(0) = 100, C(0) = 0, P(0) = 90 */
    km_core_mpi_finalize(&fake_ops);
    CHECK_EQ(tokens_sent, 6);
    CHECK_EQ(sections_done, 6);
    char *t = slurp("KM_output.000");
    CHECK(t != NULL);
    if (!t)
        return;
    struct stat sb;
    CHECK(stat("KM_output.000", &sb) == 0 && (size_t)sb.st_size == strlen(t));
    char want[512];
    const char *at = strstr(t, "! ===== Prediction =====\n");
    CHECK(at != NULL);
    for (int p = 0; p < 7 && at; p++) {
        if (p == 0)
            want_row(want, sizeof want, 0, 100e-9, 0, 0, 10e-9, 0, 90e-9, 0);
        else
            want_row(want, sizeof want, p, 10.0 * p, p, 2.0 * p, 3.0 * p,
                     0.5 * p, 3.5 * p, 0.01 * p);
        const char *row = strstr(at, want);
        CHECK(row != NULL);
        at = row ? row + 1 : NULL;
    }
    /* T_1pe = min R + sum P = 1e-8 + (9e-8 + 3.5 * 21); max T - S - O =
     * 8.5 * 6 = 51 */
    double t1 = 10e-9 + 90e-9 + 73.5;
    snprintf(want, sizeof want, "\n~%-15.7e! Predicted one-PE time T_1pe\n"
             "~%-15.7e! Predicted speedup\n~%-15.7e! Predicted parallel "
             "efficiency\n! ===== Rank 0 =====\n", t1, t1 / 51, t1 / 51 / 7);
    CHECK(strstr(t, want) != NULL);
    at = strstr(t, "! ===== Rank 0 =====\n");
    for (int p = 1; p < 7 && at; p++) {
        fake_section(want, sizeof want, p);
        const char *sec = strstr(at, want);
        CHECK(sec != NULL);
        at = sec;
    }
    CHECK(at && strcmp(at + strlen(want), "! ===== End =====\n") == 0);
    free(t);
}

/* Rank 0 of 7 writes its own file while MPI runs (KM_WRIT), then the
 * gathered file; writes in the working directory fail after `after` bytes
 * (after < 0: at the link; err 0: never) from the gather on.  The gathered
 * text with its Started time blanked (malloc'd), NULL if none; *where its
 * directory. */
static char *gather_run(const char *name, off_t after, int err,
                        const char **where)
{
    begin(name);
    use_spare();
    fake_reset(0, 7);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 10;
    km_core_mpi_init(&fake_ops);
    fake_now = 50;
    km_writ_f();
    CHECK(exists("KM_output.000.0"));
    km_test_fail_writes(after, err);
    fake_now = 100;
    km_core_mpi_finalize(&fake_ops);
    km_test_fail_writes(0, 0);
    CHECK_EQ(sections_done, 6);
    char path[4400];
    size_t len = 0;
    *where = exists("KM_output.000") ? workdir : spare;
    snprintf(path, sizeof path, "%s/KM_output.000", *where);
    char *t = slurp_n(path, &len);
    CHECK(t && strlen(t) == len);
    char *started = t ? strstr(t, "\n! Started    : ") : NULL;
    CHECK(started != NULL);
    for (char *c = started ? started + 16 : NULL; c && *c && *c != '\n'; c++)
        *c = 'X';
    unsetenv("KM_OUTPUT_DIR");
    return t;
}

/* The gathered file, streamed from the ranks with its Prediction rows
 * written in place, moves whole when the working directory fails at any
 * point of it: the text is the one an unfailing gather writes, the rank's
 * own file is gone, nothing else is left. */
void test_gather_moved(void)
{
    const char *where;
    char *ref = gather_run("gather_ref", 0, 0, &where);
    CHECK(where == workdir);
    CHECK(strcmp(listing(workdir), "KM_output.000 ") == 0);
    if (!ref)
        return;
    off_t size = (off_t)strlen(ref);
    const char *rows = strstr(ref, "! ===== Prediction =====\n");
    const char *sec = strstr(ref, "! ===== Rank 3 =====\n");
    CHECK(rows && sec);
    if (!rows || !sec)
        return;
    const off_t afters[] = { 0, 10, rows - ref + 30, sec - ref + 5,
                             size - 1, -1 };
    for (size_t i = 0; i < sizeof afters / sizeof afters[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "gather_moved_%lld", (long long)afters[i]);
        capture_stderr();
        char *t = gather_run(name, afters[i], ENOSPC, &where);
        char *err = captured();
        CHECK(where == spare);
        CHECK(t && strcmp(t, ref) == 0);
        CHECK_MOVED(err, "No space left on device", "KM_output.000");
        CHECK(strcmp(listing(workdir), "") == 0);
        CHECK(strcmp(listing(spare), "KM_output.000 ") == 0);
        free(t);
    }
    free(ref);
}

/* A rank's own file moves to KM_OUTPUT_DIR and takes the lowest number
 * free there; the gathered file, written in the working directory,
 * removes it. */
void test_rank_file_moved(void)
{
    begin("rank_moved");
    use_spare();
    char path[4400];
    snprintf(path, sizeof path, "%s/KM_output.000", spare);
    FILE *f = fopen(path, "w");
    fclose(f);
    fake_reset(0, 1);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    in_at(0, m);
    fake_now = 10;
    km_core_mpi_init(&fake_ops);
    km_test_fail_writes(0, ENOSPC);
    capture_stderr();
    fake_now = 20;
    km_writ_f();
    char *err = captured();
    km_test_fail_writes(0, 0);
    CHECK_MOVED(err, "No space left on device", "KM_output.001.0");
    CHECK(strcmp(listing(workdir), "") == 0);
    CHECK(strcmp(listing(spare), "KM_output.000 KM_output.001.0 ") == 0);
    snprintf(path, sizeof path, "%s/KM_output.001.0", spare);
    char *t = slurp(path);
    CHECK(t && strstr(t, "this file holds rank 0 only"));
    free(t);
    fake_now = 30;
    km_core_mpi_finalize(&fake_ops);
    CHECK(strcmp(listing(spare), "KM_output.000 ") == 0);
    CHECK(strcmp(listing(workdir), "KM_output.000 ") == 0);
    unsetenv("KM_OUTPUT_DIR");
}

/* Regions flagged redundant count into R(p) after MPI_INIT: outermost
 * activations only, less the MPI calls inside them; before MPI_INIT all
 * time is redundant already. */
void test_redundant(void)
{
    begin("redundant");
    fake_reset(0, 2);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t init = reg("12 3 100000 0 CALL MPI_INIT(IERR)", m);
    int32_t red = reg_routine("2 1 100000 2 RED red.f");
    int32_t bar = reg("12 5 100000 0 CALL MPI_BARRIER(C, IERR)", red);
    int32_t u = reg("14 7 100000 2 !KM_redundant start", red);
    in_at(0, m);
    in_at(2, red);                    /* before MPI_INIT: not again */
    out_at(8, red);
    in_at(10, init);
    out_at(18, init);
    fake_now = 20;
    km_core_mpi_init(&fake_ops);      /* 20 ticks before */
    in_at(30, red);
    in_at(40, bar);
    out_at(50, bar);                  /* MPI inside: not redundant */
    in_at(55, red);                   /* recursion: counted once */
    in_at(58, u);                     /* nested: counted once */
    out_at(62, u);
    out_at(65, red);
    out_at(90, red);                  /* 60 - 10 */
    struct km_report rep = report_at(100);
    CHECK_EQ(rep.redundant, T(6 + 50));
    CHECK_NEAR(rep.declared, 50e-9);
    CHECK_NEAR(rep.pred.s, 8e-9);
    CHECK_NEAR(rep.pred.r, 60e-9);    /* until MPI_INIT was called, + 50 */
    CHECK_NEAR(rep.pred.c, 10e-9);
    CHECK_NEAR(rep.pred.p, 22e-9);
    km_report_free(&rep);
    /* open at the snapshot: RED from 100, a closed barrier (5), an open
     * one since 120 */
    in_at(100, red);
    in_at(110, bar);
    out_at(115, bar);
    in_at(120, bar);
    rep = report_at(130);
    CHECK_NEAR(rep.declared, (50 + 30 - 5 - 10) * 1e-9);
    CHECK_NEAR(rep.pred.c, 25e-9);
    CHECK_NEAR(rep.pred.p, rep.pred.t - rep.pred.s - rep.pred.c - rep.pred.r);
    check_identity(&rep);
    km_report_free(&rep);
    out_at(130, bar);
    out_at(130, red);
    out_at(130, m);
}
