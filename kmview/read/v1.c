/*
 * v1.c — version 1 of KM_output in version 2's shape (see v1.h).
 *
 * Owns the one place that knows what version 1's figures meant, so that
 * the summary, exports, HTML report, diff and ranks never ask which
 * version they show: version 1 counted MPI_INIT in its MPI time, which
 * made a short run look communication-bound, and put MPI time into its
 * "time in unmeasured callees".  What cannot be recovered stays unknown
 * (NaN), never guessed.  Must never print, nor touch a version 2 run.
 */
#include "kmview/read/v1.h"

#include <math.h>
#include <stdlib.h>

#include "support/buf.h"

/* a - b, but never below 0: version 1's figures were rounded apart */
static double less(double a, double b)
{
    return a > b ? a - b : 0;
}

/* Take each MPI_INIT location's time out of its routine's MPI column;
 * return the rank's whole start-up time. */
static double take_out_startup(const struct kv_run *run, struct kv_rank *r)
{
    double total = 0;
    /* the routine cells of this rank, by routine id */
    int *cell = km_xcalloc(run->nroutines + 1, sizeof *cell);
    for (size_t k = 0; k < r->nrc; k++)
        cell[r->rc[k].routine] = (int)k + 1;
    for (size_t k = 0; k < r->nlc; k++) {
        const struct kv_location *l = &run->locations[r->lc[k].location];
        if (l->kind != KV_MPI || !kv_is_mpi_startup(l->text))
            continue;
        total += r->lc[k].elapsed;
        if (cell[l->routine]) {
            struct kv_rcell *c = &r->rc[cell[l->routine] - 1];
            c->mpi = less(c->mpi, r->lc[k].elapsed);
        }
    }
    free(cell);
    return total;
}

static void upgrade_rank(const struct kv_run *run, struct kv_rank *r)
{
    if (r->lost)
        return;
    double mpi = r->fig[KV_F_MPI];
    double startup = take_out_startup(run, r);
    r->fig[KV_F_STARTUP] = startup;
    r->fig[KV_F_MPI] = less(mpi, startup);
    /* version 1's unmeasured callees held every MPI call */
    r->fig[KV_F_UNINSTRUMENTED] = less(r->fig[KV_F_UNINSTRUMENTED], mpi);
    r->fig[KV_F_ESTIMATED] = NAN;
}

void kv_v1_upgrade(struct kv_run *run)
{
    if (run->format_version != 1)
        return;
    run->startup_from_statements = true;
    for (size_t i = 0; i < run->nsections; i++)
        upgrade_rank(run, &run->ranks[i]);
}
