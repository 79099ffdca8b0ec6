/*
 * kmgen.c — test helper for kmview: writes KM_output files of known
 * content, with every figure kmview derives from them computed here,
 * independently, and flattens kmview's CSV and JSON exports so that a
 * test can compare them with those expectations value by value.
 *
 *   kmgen profile OUT EXPECT [options]   a run of known content
 *       --ranks N --routines R --locations L --seed S
 *       --lost K          rank K's results were lost
 *       --extras          comments, header lines, figures and a section
 *                         this kmview does not know (must be skipped)
 *       --uniform         every rank has the same profile, within 0.5%
 *       --v1              write format version 1 (no estimate marks, MPI
 *                         time holding MPI_INIT); the default is version 2,
 *                         with estimated figures marked ~ and Est(%)
 *       --no-prediction   the Prediction section says n/a, and why
 *       --old-prediction  version 2's Prediction rows as its earlier
 *                         development versions wrote them: T, S, C, R, P,
 *                         without libkm's overhead O and the time waited W
 *   Version 2's Prediction rows are T, S, C, R, O, P, W: O is the rank's
 *   libkm overhead (marked as that figure is), P = T - S - C - R - O, W a
 *   known time waited for a processor (0 on every third rank).
 *   With --locations 3 or more, SUB0001's third location is CALL
 *   MPI_INIT(IERR): the rank's MPI start-up (in version 1 also counted in
 *   SUB0001's and the header's MPI time, which kmview takes out).
 *       --outlier K:R:F   rank K spends F times the computation in
 *                         routine R (and less in MPI, so totals stay equal)
 *       --threads T       every rank ran T threads: a Threads block (format
 *                         version 3) with a row per thread and rows for
 *                         its first three routines and their first
 *                         locations
 *       --messages        Messages and Peers blocks (format version 4): a
 *                         ring of point-to-point messages of known sizes
 *                         (see write_messages); needs 3 routines and 3
 *                         locations
 *       --alltoall        also an all-to-all collective, every rank to
 *                         every rank (5 routines)
 *   kmgen flatten-json FILE              "path<TAB>value" per JSON leaf
 *   kmgen flatten-csv DIR FILE...        "FILE:key:column<TAB>value"
 *   kmgen compare EXPECT GOT             every expected value present and
 *                                        equal (numbers within 1e-9)
 *
 * EXPECT holds the same "key<TAB>value" lines: one for the CSV export and
 * one for the JSON export of every figure.  Values are printed with
 * %.7e as libkm prints them and read back, so the expectations start from
 * exactly the numbers kmview reads.  Must never include kmview's code:
 * the point is a second, independent computation.
 *
 * This file reads the command line; the run and what is derived from it
 * are in kmgen_run.c, the KM_output writer in kmgen_write.c, the
 * expectations in kmgen_expect.c, the flatteners and compare in
 * kmgen_flatten.c (kmgen.h: what they share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmgen.h"

static int profile(int argc, char **argv)
{
    struct gen g = { .n = 4, .nr = 10, .nl = 0, .lost = -1, .out_rank = -1,
                     .version = 2 };
    rng_state = 88172645463325252ULL;
    if (argc < 4)
        return fputs("usage: kmgen profile OUT EXPECT [options]\n", stderr), 2;
    for (int i = 4; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(a, "--ranks")) g.n = atoi(v), i++;
        else if (!strcmp(a, "--routines")) g.nr = atoi(v), i++;
        else if (!strcmp(a, "--locations")) g.nl = atoi(v), i++;
        else if (!strcmp(a, "--seed")) rng_state += strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--lost")) g.lost = atoi(v), i++;
        else if (!strcmp(a, "--extras")) g.extras = true;
        else if (!strcmp(a, "--uniform")) g.uniform = true;
        else if (!strcmp(a, "--v1")) g.version = 1;
        else if (!strcmp(a, "--threads")) g.threads = atoi(v), g.version = 3,
                                          i++;
        else if (!strcmp(a, "--messages")) g.messages = true;
        else if (!strcmp(a, "--alltoall")) g.messages = g.alltoall = true;
        else if (!strcmp(a, "--no-prediction")) g.no_prediction = true;
        else if (!strcmp(a, "--old-prediction")) g.old_prediction = true;
        else if (!strcmp(a, "--outlier") &&
                 sscanf(v, "%d:%d:%lf", &g.out_rank, &g.out_routine,
                        &g.out_factor) == 3) i++;
        else
            return fprintf(stderr, "kmgen: bad option %s\n", a), 2;
    }
    if (g.n < 1 || g.nr < 1 || g.nl < 0 || g.nl > 6)
        return fputs("kmgen: bad sizes (locations at most 6)\n", stderr), 2;
    if (g.messages && (g.version < 2 || g.nl < 3 || g.nr < (g.alltoall ? 5 : 3)))
        return fputs("kmgen: --messages needs version 2, 3 locations and 3 "
                     "routines (--alltoall 5)\n", stderr), 2;
    if (g.messages)
        g.version = 4;
    if ((g.no_prediction || g.old_prediction) && g.version < 2)
        return fputs("kmgen: --no-prediction and --old-prediction need "
                     "version 2\n", stderr), 2;
    make_run(&g);
    /* EXPECT "-": no expectations (a run made only to be big) */
    FILE *f = fopen(argv[2], "w");
    FILE *e = strcmp(argv[3], "-") ? fopen(argv[3], "w") : fopen("/dev/null", "w");
    if (!f || !e)
        return perror("kmgen"), 2;
    double pred[3], mf[NFIGS], net_sum;
    bool fe[NFIGS], pred_est, net_est;
    write_run(f, &g, pred, &pred_est);
    struct live lv = live_ranks(&g);
    expect_figures(e, &g, &lv, mf, fe);
    expect_routines(e, &g, &lv, mf[F_TOTAL], &net_sum, &net_est);
    expect_run(e, &g, mf, fe, net_sum, net_est, net_fraction(&g, &lv), pred,
               pred_est);
    expect_locations(e, &g, &lv);
    expect_cells(e, &g);
    expect_prediction(e, &g);
    expect_threads(e, &g);
    expect_messages(e, &g);
    free(lv.rank);
    free_run(&g);
    return fclose(f) || fclose(e) ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "profile"))
        return profile(argc, argv);
    if (argc == 3 && !strcmp(argv[1], "flatten-json"))
        return flatten_json(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "flatten-csv")) {
        for (int i = 3; i < argc; i++)
            if (flatten_csv(argv[2], argv[i]))
                return 1;
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "compare"))
        return compare(argv[2], argv[3]);
    fputs("usage: kmgen profile|flatten-json|flatten-csv|compare ...\n", stderr);
    return 2;
}
