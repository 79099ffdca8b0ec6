/*
 * reader.h — what the parts of the KM_output reader share: the reader's
 * state while it reads one file, and the functions one part calls in
 * another.  fields.c: fields, line kinds and errors; section.c: a rank
 * section's own lines; blocks.c: the blocks format versions 3 to 6 added
 * to a rank section; read.c: the file, its header, Prediction and
 * sections, and the bounded input.  Internal to read/: nothing outside
 * it includes this.
 */
#ifndef KV_READER_H
#define KV_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kmview/read/model.h"

enum state { S_START, S_HEADER, S_PREDICTION, S_RANK, S_SKIP, S_END };

struct reader {
    struct kv_run *run;
    const char *path;
    FILE *f;
    char *block;             /* what fread brought, block[pos..len) unread */
    size_t pos, len;
    uint64_t consumed, max_size;
    char *line;
    size_t cap;
    long lineno;
    int version;             /* this file's format version */
    enum state st;
    bool rank_only;          /* the Ranks line says "holds rank R only" */
    int only_rank;
    int sections;            /* rank sections in this file */

    /* the rank section being read */
    size_t rix;              /* index into run->ranks */
    long section_line;
    bool fig_seen[KV_NFIGS];
    bool procs_seen;
    bool table_started;
    size_t table_rows;
    int *row_routine;        /* routine id of table row k + 1 */
    size_t caprows;
    /* the location block being read */
    bool in_block;
    int block_routine;
    long block_expected, block_rows;
    long block_line;
    size_t block_first_cell; /* index of the block's first lcell */
    /* the Threads block being read (version 3): 0 none; 1 its Threads
     * figure; 2 the thread rows; 3 the region rows */
    int threads_part;
    long threads_expected;
    /* the Messages block being read (version 4): 0 none; 1 its Call
     * sites figure; 2 its rows */
    int messages_part;
    long messages_expected;
    /* the Peers block being read (version 4): 0 none; 1 its Peers
     * figure; 2 its rows */
    int peers_part;
    long peers_expected;
    /* the Files block being read (version 5): 0 none; 1 its Files
     * figure; 2 its rows */
    int files_part;
    long files_expected;
    bool files_mpiio;        /* it is the MPI-IO block */
    size_t files_first;      /* the rank's first file row of the block */
    /* the Timeline block being read (version 5): 0 none; 1 Slots, 2 Slot
     * width, 3 Origin, 4 Routines; 5 its rows (tl_rows read) */
    int tl_part;
    int tl_rows;
    /* the Paths block being read (version 6): 0 none; 1 its Trees figure;
     * 2 its trees */
    int paths_part;
    long paths_expected;
    double *kids_elapsed;    /* the tree being read: [path] its children's
                                elapsed time so far */
    size_t capkids;
    double root_elapsed;     /* the same of its paths outside every region */
    uint64_t *thread_counts; /* the tree's thread's counts over the run
                                so far (run->path_counts) */
};

static inline struct kv_rank *cur(struct reader *rd)
{
    return &rd->run->ranks[rd->rix];
}

/* ---- fields.c: errors, fields, line kinds ------------------------------ */

/* Print the one error line, `file:line:column: error: text`; `where`
 * points into rd->line (the column), or is NULL for what is wrong with
 * the line as a whole (column 1).  Returns -1. */
int fail_at(struct reader *rd, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Figures that cannot all be true: the file contradicts itself (a damaged
 * or hand-edited file, or a libkm bug), and the shares computed from them
 * would be absurd (a routine at 14479.5% of the run).  Reading goes on,
 * but each kind is named once per run, with the rank, region, line and
 * column of its first row.  Only checks a row can make by itself on what
 * it holds and its rank's header figures: a few comparisons per row. */
enum contradiction {
    C_NEGATIVE,              /* a time below 0 */
    C_NET_ABOVE_ELAPSED,     /* a routine's net time above its elapsed time */
    C_ABOVE_TOTAL,           /* a routine's net time above its rank's total
                                time: a share over 100% */
    C_HUGE_COUNT,            /* a count of 2^60 or more: 36 years at 1 ns */
};

#define HUGE_COUNT (1ull << 60)

void contradiction(struct reader *rd, enum contradiction kind,
                   const char *where, const char *region,
                   const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Fields of a data line, all of them (at most `max`). */
struct fields {
    const char *s[16];
    size_t len[16];
    int n;
};

/* Text with runs of blanks collapsed and both ends trimmed, in place. */
char *collapse(char *s);
/* Does `s` contain `word`, ignoring case? */
bool contains_word(const char *s, const char *word);
bool is_blank(const char *line);
bool is_comment(const char *line);
/* The next blank-separated field at or after *p: its start, and its length
 * through *len; *p moves past it.  NULL at the end of the line. */
const char *next_field(const char **p, size_t *len);
/* A count: digits, with a leading + when extrapolated. */
int parse_count(struct reader *rd, const char *s, size_t len,
                uint64_t *out, bool *plus, const char *what);
int parse_int(struct reader *rd, const char *s, size_t len, int *out,
              const char *what);
/* A percentage with its one decimal (an Est(%) column). */
int parse_percent(struct reader *rd, const char *s, size_t len,
                  double *out, const char *what);
int parse_seconds(struct reader *rd, const char *s, size_t len,
                  double *out, const char *what);
/* A time: seconds, with a leading ~ when it contains an estimate. */
int parse_time(struct reader *rd, const char *s, size_t len,
               double *out, bool *est, const char *what);
/* "! ===== Name =====": where the name starts in `line` and its length
 * (trimmed), or NULL. */
const char *section_marker(const char *line, size_t *len);
const char *skip_blanks(const char *p);
void split(const char *p, const char *stop, struct fields *fs);

/* ---- section.c: a rank section's own lines ----------------------------- */

/* "===== Rank N =====": `name` points at "Rank" in rd->line. */
int begin_rank(struct reader *rd, const char *name, size_t namelen);
int end_block(struct reader *rd);
int location_row(struct reader *rd);
const char *missing_figure(const struct reader *rd);
int rank_comment(struct reader *rd);
/* "value ! label" in a rank's header. */
int rank_figure(struct reader *rd, const char *bang);
int routine_row(struct reader *rd);

/* ---- blocks.c: the blocks of format versions 3 to 6 -------------------- */

/* Opens, closes, inquiries, seeks, flushes, metadata time, reads, their
 * time and bytes, writes, their time and bytes, size, then the name. */
int file_row(struct reader *rd);
/* A Files or MPI-IO block that ends before its rows do (fail_at). */
int files_block_short(struct reader *rd);
/* "N ! Files" */
int files_figure(struct reader *rd);
/* region, routine, kind, line, messages, sent, received, bin:messages... */
int message_row(struct reader *rd);
/* "N ! Call sites" */
int messages_figure(struct reader *rd);
/* Does the Paths block end before what it announced? */
int paths_block_short(struct reader *rd);
int paths_line(struct reader *rd);
/* peer, then messages and bytes sent, received and sent in all-to-alls */
int peer_row(struct reader *rd);
/* "N ! Peers" */
int peers_figure(struct reader *rd);
int threads_line(struct reader *rd);
int timeline_line(struct reader *rd);

#endif
