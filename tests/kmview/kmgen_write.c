/*
 * kmgen_write.c — writes a run (struct gen) as a KM_output file, in
 * format version 1 to 4 as libkm wrote them: header, Prediction, and per
 * rank its figures, routine table, locations, Threads, Messages and Peers.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmgen.h"

/* ------------------------------------------------------------------------ */
/* Writing KM_output                                                         */

/* A time as version 2 prints it: %.7e, '~' first when estimated. */
static const char *tm(char b[32], double v, bool est)
{
    snprintf(b, 32, "%s%.7e", est ? "~" : "", v);
    return b;
}

const char overhead_line[] =
    "2.05e-08 s per measured entry and exit, 4.10e-09 s per estimated one, "
    "1.02e-08 s inside a measured region; taken out of every time";

static void write_header(FILE *f, const struct gen *g)
{
    fprintf(f, "! kmtool KM_output %d\n! Program    : ./gen, \"quoted\"\n"
            "! Started    : 2026-11-22 13:40:00\n! Written at : MPI_FINALIZE\n"
            "! Clock      : CLOCK_MONOTONIC\n", g->version);
    if (g->version >= 2)
        fprintf(f, "! Overhead   : %s\n", overhead_line);
    if (g->extras)
        fprintf(f, "! Compiler   : gfortran -O2\n! a comment kmview skips\n");
    fprintf(f, "! Ranks      : %d\n!\n", g->n);
}

const char no_prediction_note[] =
    "No prediction: MPI calls were not measured in some routines (see the "
    "ranks' warnings)";

static void write_prediction(FILE *f, const struct gen *g, double pred[3],
                             bool *pred_est)
{
    static const char *const heading[NPR] = {
        "Total(s)", "Start-up(s)", "MPI(s)", "Redundant(s)", "Overhead(s)",
        "Waited(s)", "Parallel(s)",
    };
    double min_r = 0, sum_p = 0, max_t = 0, v[NPR];
    bool e[NPR], est = false;
    char b[32];
    fprintf(f, "! ===== Prediction =====\n");
    if (g->version >= 2)
        fprintf(f, "! %-98s\n", g->no_prediction ? no_prediction_note
                : g->old_prediction ? "Times without MPI start-up (MPI_INIT); "
                  "~ marks figures that contain estimates"
                : "Times without MPI start-up (MPI_INIT) and libkm; ~ marks "
                  "figures that contain estimates");
    fprintf(f, "!   Rank");
    for (int k = 0; k < NPR; k++)
        if (pred_has(g, k))
            fprintf(f, "%16s", heading[k]);
    fputc('\n', f);
    for (int p = 0; p < g->n; p++) {
        prediction_row(g, p, v, e);
        fprintf(f, "%8d", p);
        for (int k = 0; k < NPR; k++)
            if (pred_has(g, k))
                fprintf(f, " %15s", tm(b, v[k], e[k]));
        fputc('\n', f);
        if (p == 0 || v[PR_R] < min_r)
            min_r = v[PR_R];
        /* the speedup divides by max (T - S - O), as far as the row has
         * them (version 1: max T) */
        double t = v[PR_T];
        if (pred_has(g, PR_S))
            t -= v[PR_S];
        if (pred_has(g, PR_O))
            t -= v[PR_O];
        if (t > max_t)
            max_t = t;
        sum_p += v[PR_P];
        est |= e[PR_P] || e[PR_O];
    }
    pred[0] = printed(min_r + sum_p);
    pred[1] = printed(pred[0] / max_t);
    pred[2] = printed(pred[1] / g->n);
    *pred_est = est;
    static const char *const what[] = { "Predicted one-PE time T_1pe",
                                        "Predicted speedup",
                                        "Predicted parallel efficiency" };
    for (int k = 0; k < 3; k++) {
        if (g->no_prediction)
            pred[k] = NAN;
        fprintf(f, "%-15s ! %s\n", g->no_prediction ? "n/a"
                : g->version >= 2 ? tm(b, pred[k], est)
                : (snprintf(b, 32, "%.7e", pred[k]), b), what[k]);
    }
}

static void write_count(FILE *f, uint64_t c, bool plus, int width)
{
    char b[32];
    snprintf(b, sizeof b, "%s%llu", plus ? "+" : "", (unsigned long long)c);
    fprintf(f, " %*s", width, b);
}

static void write_locations(FILE *f, const struct gen *g, int p, int no, int r)
{
    char name[16], text[64], b[32];
    bool v2 = g->version >= 2;
    routine_name(name, sizeof name, r);
    fprintf(f, "!\n! Routine %d %s, file src/%s, v2.f, line %d, %d locations\n",
            no, name, name, 10 * (r + 1) - 5, g->nl);
    fprintf(f, "!     No Kind    Line      Elapsed(s)     Counts %sStatement\n",
            v2 ? " Est(%) " : "");
    for (int k = 0; k < g->nl; k++) {
        size_t at = ((size_t)r * g->nl + k) * g->n + p;
        loc_text(text, sizeof text, r, k);
        fprintf(f, "%8d %-5s %6d %15s", k + 1, kinds[loc_kind(k)],
                loc_line(r, k), tm(b, g->lel[at], g->lest[at]));
        write_count(f, g->lcnt[at], g->lplus[at], 10);
        if (v2)
            fprintf(f, " %7.1f", g->lpct[at]);
        fprintf(f, " %s\n", text);
    }
}

static void write_figures(FILE *f, const struct gen *g, int p,
                          const struct rank_sums *s)
{
    bool v2 = g->version >= 2;
    char b[32];
    fprintf(f, "%04d %-10d ! Processors and Rank\n", g->n, p);
    fprintf(f, "%-15.7e ! Total time\n", s->total);
    fprintf(f, "%-15llu ! Counts of routines\n", (unsigned long long)s->counts);
    fprintf(f, "%-15llu ! Counts of time get function\n",
            (unsigned long long)g->reads[p]);
    fprintf(f, "%-15.7e ! Time get function cost(1 call)\n", g->read_cost[p]);
    fprintf(f, "%-15s ! %s\n", tm(b, s->overhead, v2 && s->plus),
            v2 ? "libkm overhead" : "Time get function cost (Total)");
    fprintf(f, "%-15d ! Output counts by KM_writ\n", 1 + p % 2);
    fprintf(f, "%-15s ! MPI time\n",
            tm(b, printed(v2 ? s->mpi : s->mpi_file), mpi_est(s)));
    if (v2)
        fprintf(f, "%-15.7e ! MPI start-up time\n", g->startup[p]);
    fprintf(f, "%-15s ! I/O time\n", tm(b, printed(s->io), io_est(s)));
    if (g->extras)
        fprintf(f, "4.2             ! A figure a later libkm may add\n");
    fprintf(f, "%-15.7e ! Time outside routines\n", g->outside[p]);
    if (v2) {
        fprintf(f, "%-15s ! Time in uninstrumented routines\n",
                tm(b, g->unmeasured[p], uninst_est(g, s, p)));
        fprintf(f, "%-15s ! Estimated time\n", tm(b, s->est_time, s->est_time > 0));
    } else {
        fprintf(f, "%-15.7e ! Time in unmeasured callees\n",
                printed(g->unmeasured[p] + s->mpi_file));
    }
    fprintf(f, "%-15d ! Routines\n", s->routines);
}

static void write_table(FILE *f, const struct gen *g, int p,
                        const struct rank_sums *s)
{
    bool v2 = g->version >= 2;
    char name[16], b[4][32];
    fprintf(f, "!     No Routine                   Elapsed(s)          Net(s)"
            "     Counts          MPI(s)           IO(s)%s\n", v2 ? "  Est(%)" : "");
    int no = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        size_t at = (size_t)p * g->nr + r;
        if (!g->present[at])
            continue;
        unsigned e = g->est[at];
        routine_name(name, sizeof name, r);
        fprintf(f, "%8d %-22s %15s %15s", ++no, name, tm(b[0], g->el[at], e & E_EL),
                tm(b[1], g->net[at], e & E_NET));
        write_count(f, g->cnt[at], g->plus[at], 10);
        fprintf(f, " %15s %15s", tm(b[2], g->mpi_file[at], e & E_MPI),
                tm(b[3], g->io[at], e & E_IO));
        if (v2)
            fprintf(f, " %7.1f", g->pct[at]);
        fputc('\n', f);
    }
    if (v2) {
        char c[32];
        snprintf(c, sizeof c, "%s%llu", s->plus ? "+" : "",
                 (unsigned long long)s->counts);
        fprintf(f, "!%7s %-22s %15s %15s %10s %15s %15s %7.1f\n", "", "Total", "",
                tm(b[0], s->net, s->est & E_NET), c, tm(b[1], s->mpi, mpi_est(s)),
                tm(b[2], s->io, io_est(s)), s->net_pct);
    } else {
        fprintf(f, "!%7s %-22s %15s %15.7e %10s %15.7e %15.7e\n", "", "Total", "",
                s->net, "(sums)", s->mpi_file, s->io);
    }
}

/* ---- threads (--threads T) ------------------------------------------------ */

static void write_tregion(FILE *f, const struct gen *g, int p, int no, int loc)
{
    char id[16], name[16], text[64], b[3][32];
    int r = table_routine(g, p, no);
    struct treg t = thread_region(g, p, no, loc);
    snprintf(id, sizeof id, loc ? "%d.1" : "%d", no);
    routine_name(name, sizeof name, r);
    fprintf(f, "%10s %-22s %-5s %6d %7d", id, name, loc ? kinds[loc_kind(0)]
            : "ROUT", loc ? loc_line(r, 0) : 10 * (r + 1) - 5, t.threads);
    write_count(f, t.count, false, 12);
    fprintf(f, " %16s %16s %16s %8.1f", tm(b[0], t.min, t.est),
            tm(b[1], t.mean, t.est), tm(b[2], t.max, t.est), t.imbal);
    if (loc) {
        loc_text(text, sizeof text, r, 0);
        fprintf(f, " %s", text);
    }
    fputc('\n', f);
}

static void write_threads(FILE *f, const struct gen *g, int p)
{
    char b[NTF][32];
    fprintf(f, "!\n! ===== Threads =====\n%-15d ! Threads\n", g->threads);
    fprintf(f, "! Thread    OMP         Total(s)           Net(s)       Counts"
            "           MPI(s)       Outside(s)      Overhead(s)  Est(%%)\n");
    for (int k = 0; k < g->threads; k++) {
        struct trow t = thread_row(g, p, k);
        fprintf(f, "%8d %6d %16s %16s", k, t.omp, tm(b[0], t.v[0], t.est[0]),
                tm(b[1], t.v[1], t.est[1]));
        write_count(f, t.count, t.plus, 12);
        fprintf(f, " %16s %16s %16s %7.1f\n", tm(b[2], t.v[2], t.est[2]),
                tm(b[3], t.v[3], t.est[3]), tm(b[4], t.v[4], t.est[4]), t.pct);
    }
    fprintf(f, "!\n! Regions run by threads other than 0, over the threads "
            "that ran them\n!   Region Routine                Kind    Line "
            "Threads       Counts           Min(s)          Mean(s)         "
            "  Max(s) Imbal(%%) Statement\n");
    for (int no = 1; no <= thread_rows_of(g, p); no++) {
        write_tregion(f, g, p, no, 0);
        if (g->nl)
            write_tregion(f, g, p, no, 1);
    }
}

/* ---- messages (--messages, --alltoall) ------------------------------------ */

/* The table row (1-based) of routine r in rank p's table, 0 if absent. */
static int row_of(const struct gen *g, int p, int r)
{
    for (int no = 1; table_routine(g, p, no) >= 0; no++)
        if (table_routine(g, p, no) == r)
            return no;
    return 0;
}

static void write_sizes(FILE *f, const uint64_t bins[48])
{
    for (int b = 0; b < 48; b++)
        if (bins[b])
            fprintf(f, " %d:%llu", b, (unsigned long long)bins[b]);
}

static void write_messages(FILE *f, const struct gen *g, int p,
                           struct peer_row *peers)
{
    struct site_row s[3];
    int n = sites_of(g, p, s);
    char id[16], name[16];
    fprintf(f, "!\n! ===== Messages =====\n%-15d ! Call sites\n", n);
    fprintf(f, "!   Region Routine                Kind    Line     Messages"
            "          Sent(B)      Received(B) Sizes(bin:messages)\n");
    for (int k = 0; k < n; k++) {
        snprintf(id, sizeof id, "%d.3", row_of(g, p, s[k].r));
        routine_name(name, sizeof name, s[k].r);
        fprintf(f, "%10s %-22s %-5s %6d %12llu %16llu %16llu", id, name,
                "MPI", loc_line(s[k].r, 2), (unsigned long long)s[k].messages,
                (unsigned long long)s[k].sent,
                (unsigned long long)s[k].received);
        write_sizes(f, s[k].bins);
        fputc('\n', f);
    }
    int np = peers_of(g, p, peers);
    fprintf(f, "!\n! ===== Peers =====\n%-15d ! Peers\n", np);
    fprintf(f, "!     Peer     Sent(msgs)          Sent(B) Received(msgs)"
            "      Received(B) Alltoall(msgs)      Alltoall(B)\n");
    for (int k = 0; k < np; k++) {
        fprintf(f, "%10d", peers[k].peer);
        for (int c = 0; c < NPC; c++)
            fprintf(f, " %*llu", c % 2 ? 16 : 14,
                    (unsigned long long)peers[k].v[c]);
        fputc('\n', f);
    }
}

static void write_rank_messages(FILE *f, const struct gen *g, int p)
{
    struct peer_row *peers = xcalloc((size_t)g->n, sizeof *peers);
    write_messages(f, g, p, peers);
    free(peers);
}

static void write_rank(FILE *f, const struct gen *g, int p)
{
    struct rank_sums s = sums(g, p);
    fprintf(f, "! ===== Rank %d =====\n", p);
    if (p == g->lost) {
        fprintf(f, "! Warning: this rank's results were lost (out of memory)\n");
        return;
    }
    write_figures(f, g, p, &s);
    write_table(f, g, p, &s);
    int no = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        if (!g->present[(size_t)p * g->nr + r])
            continue;
        no++;
        if (g->nl)
            write_locations(f, g, p, no, r);
    }
    if (p == 1)
        fprintf(f, "! Warning: 3 KM_OUT calls for regions that were not open "
                "were ignored\n");
    if (g->no_prediction)
        fprintf(f, "! Warning: MPI calls were not measured in 2 routines "
                "(first: SUB0002); no prediction\n");
    if (g->threads > 1)
        write_threads(f, g, p);
    if (g->messages)
        write_rank_messages(f, g, p);
}

void write_run(FILE *f, const struct gen *g, double pred[3],
               bool *pred_est)
{
    write_header(f, g);
    write_prediction(f, g, pred, pred_est);
    for (int p = 0; p < g->n; p++)
        write_rank(f, g, p);
    if (g->extras)
        fprintf(f, "! ===== Notes =====\nfree text a later libkm may write\n");
    fprintf(f, "! ===== End =====\n");
}
