/*
 * model.h — one run's KM_output, in memory, as kmview reads it.
 *
 * Owns the shape of the data every kmview command works on: the file's
 * header lines, the Prediction section, and one section per rank holding
 * that rank's header figures, routine rows and location rows.  Routines and
 * locations are interned run-wide (a routine by its name, a location by its
 * routine, kind, source line and occurrence), so that ranks whose tables
 * list them in different orders line up, and so that a thousand ranks of a
 * thousand routines do not keep a million copies of the names.
 *
 * Must never: print, read files, or compute derived figures (stats.c does).
 */
#ifndef KV_MODEL_H
#define KV_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Location kinds, as KM_output spells them. */
enum kv_kind { KV_DO, KV_CALL, KV_MPI, KV_IO, KV_USER, KV_OTHER, KV_NKINDS };

const char *kv_kind_name(int kind);
/* The kind a KM_output kind word names, or -1. */
int kv_kind_parse(const char *word);

/* The header figures of a rank section, in the order KM_output prints
 * them ("Processors and Rank" is kept apart: it holds two integers). */
enum kv_figure {
    KV_F_TOTAL, KV_F_ROUTINE_COUNTS, KV_F_CLOCK_READS, KV_F_READ_COST,
    KV_F_READ_COST_TOTAL, KV_F_WRITES, KV_F_MPI, KV_F_IO, KV_F_OUTSIDE,
    KV_F_UNMEASURED, KV_F_ROUTINES, KV_NFIGS
};

struct kv_figure_info {
    const char *label;       /* as KM_output writes it after the '!' */
    const char *key;         /* the CSV/JSON name */
    bool integer;            /* a count, not seconds */
};
extern const struct kv_figure_info kv_figures[KV_NFIGS];

struct kv_routine {
    char *name;              /* upper case, as in the file */
    char *file;              /* from a location heading; NULL if none */
    int line;                /* 0 when unknown */
};

struct kv_location {
    int routine;             /* index into run->routines */
    int kind;                /* enum kv_kind */
    int line;
    int occurrence;          /* how many earlier locations share routine, kind, line */
    char *text;              /* the statement as the first rank that has it wrote it */
};

/* One routine row of one rank. */
struct kv_rcell {
    int routine;
    double elapsed, net, mpi, io;
    uint64_t count;
    bool extrap;             /* the count had a leading + */
};

/* One location row of one rank. */
struct kv_lcell {
    int location;
    double elapsed;
    uint64_t count;
    bool extrap;
};

struct kv_rank {
    int rank;
    int processors;
    bool lost;               /* "this rank's results were lost": no figures */
    double fig[KV_NFIGS];
    struct kv_rcell *rc;
    size_t nrc, caprc;
    struct kv_lcell *lc;
    size_t nlc, caplc;
    char **warnings;
    size_t nwarn, capwarn;
    char *source;            /* the file this section came from */
    int source_line;         /* the line of its "===== Rank" heading */
};

struct kv_prediction_row {
    int rank;
    double total, mpi, redundant, parallel;
};

struct kv_prediction {
    bool present;
    struct kv_prediction_row *rows;
    size_t nrows, caprows;
    double t_1pe, speedup, efficiency;
    bool have_t_1pe, have_speedup, have_efficiency;
};

/* A header line this kmview does not know ("! Key : value"). */
struct kv_extra {
    char *key, *value;
};

struct kv_hash {             /* open addressing: slot holds index + 1 */
    int *slot;
    size_t cap, used;
};

struct kv_run {
    char **sources;          /* the files read */
    size_t nsources;
    int format_version;
    char *program, *started, *written_at, *clock;
    int nranks;              /* ranks in the run (the Ranks line) */
    struct kv_extra *extra;
    size_t nextra, capextra;
    struct kv_prediction pred;

    struct kv_routine *routines;
    size_t nroutines, caproutines;
    struct kv_location *locations;
    size_t nlocations, caplocations;
    struct kv_rank *ranks;   /* sorted by rank number once reading is done */
    size_t nsections, capsections;

    struct kv_hash routine_index, location_index;
};

void kv_run_init(struct kv_run *run);
void kv_run_free(struct kv_run *run);

/* The routine called `name`, added if new. */
int kv_routine_intern(struct kv_run *run, const char *name);
/* The routine called `name`, or -1. */
int kv_routine_find(const struct kv_run *run, const char *name);
/* The location (routine, kind, line, occurrence), added with `text` if new. */
int kv_location_intern(struct kv_run *run, int routine, int kind, int line,
                       int occurrence, const char *text);
int kv_location_find(const struct kv_run *run, int routine, int kind, int line,
                     int occurrence);

struct kv_rank *kv_rank_add(struct kv_run *run, int rank);
struct kv_rcell *kv_rank_add_routine(struct kv_rank *r);
struct kv_lcell *kv_rank_add_location(struct kv_rank *r);
void kv_rank_add_warning(struct kv_rank *r, const char *text);
/* Put the sections in rank order and number routines and locations in
 * order of first appearance in that order (after reading every file), so
 * that the order files are given in changes nothing. */
void kv_run_sort_ranks(struct kv_run *run);

/* Ranks whose figures are known (not lost). */
size_t kv_run_live_ranks(const struct kv_run *run);

#endif
