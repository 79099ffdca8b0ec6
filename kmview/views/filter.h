/*
 * filter.h — kmview filter: a control file that leaves out what costs more
 * to measure than it tells (as scorep-score -g proposes a Score-P filter).
 *
 * From one run's KM_output: every routine's measured events (its entries,
 * the locations inside it, the CALL statements that call it), what they
 * cost at the run's own Overhead line, and what the routine's own time
 * per call is.  A routine whose measurement costs more than `distortion`
 * of its time per call is a candidate; the candidates go into
 * IGNORED_ROUTINES, the most distorted (cost over time) first, until
 * libkm's estimated overhead is at most `target` of the run time.  The proposal is the base control file with that list,
 * headed by comment lines: the overhead before and after (estimates, and
 * said so), and each routine left out with its figures.
 */
#ifndef KV_FILTER_H
#define KV_FILTER_H

#include <stdio.h>

#include "kmview/read/model.h"

struct kv_filter_opts {
    double target;            /* overhead wanted, a fraction of the run time */
    double distortion;        /* a candidate's cost per call / time per call */
    const char *control;      /* the base control file; NULL: the default */
    const char *default_control;
    const double *plain;      /* NULL, or the plain build's time of each
                                 run (seconds): what the run lost beyond
                                 libkm's figure is shared out too */
};

/* Write the proposed control file to `to`, from one run or several (a
 * test suite's programs: their routines are added up by name).  Returns
 * 0, or -1 with a message on stderr (the base control file cannot be
 * read, a run has no Overhead line). */
int kv_filter(FILE *to, const struct kv_run *runs, size_t nruns,
              const struct kv_filter_opts *o);

#endif
