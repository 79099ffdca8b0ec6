/*
 * km_gather.c — every rank's results in one KM_output file, at
 * MPI_FINALIZE.
 *
 * Rank 0 writes the file; the other ranks format their own sections (in
 * parallel) and send them when asked.  Rank 0 asks a few ranks at a time
 * (KM_WINDOW tokens in flight), so neither its memory nor MPI's buffers
 * ever hold more than a few ranks' sections, and copies each one to the
 * file in chunks as it arrives.  The Prediction section comes first in the
 * file but needs every rank: its rows and figures have a fixed width, so
 * rank 0 leaves room for them and writes each row in place as its rank's
 * message arrives, keeping only min R, sum P and max T.  Rank 0's memory is
 * thus independent of the number of ranks, and its work is linear in the
 * size of the file; every other rank sends one message and a few chunks.
 * The text cannot be produced again: a write that fails where rank 0's
 * temporary file is moves the file, with what it holds, to the next place
 * (km_file.c), and the gather goes on there without the ranks knowing.
 *
 * Before a gather no instrumented code asked for (MPI_FINALIZE called from
 * C, or from a library built plain), the ranks first make sure that every
 * one of them is there (km_gather_agree, below).
 *
 * Must never: call MPI directly (struct km_mpi_ops), let the ranks take
 * different paths through the collectives, leave a partial KM_output file.
 */
#include "runtime/km_internal.h"

#include <string.h>
#include <time.h>

#define KM_CHUNK (1u << 20)       /* bytes per message of a rank's section */
#define KM_WINDOW 4               /* ranks asked ahead of the one read */

/* What a rank sends first when asked: its section's length and its
 * Prediction row. */
struct rank_head {
    uint64_t len;
    struct km_prediction_row row;
};

static struct km_out_file *gather_file;   /* for km_gather_temp */

struct km_out_file *km_gather_temp(void)
{
    return gather_file;
}

/* The section a rank sends: its own, or a note that it was lost. */
static void section_to_send(const struct km_text *section, int rank,
                            struct km_text *lost, const char **p, size_t *len)
{
    if (!section->failed) {
        *p = section->p;
        *len = section->len;
        return;
    }
    km_format_lost_section(lost, rank);
    *p = lost->failed ? "" : lost->p;
    *len = lost->failed ? 0 : lost->len;
}

/* Rank != 0: wait to be asked, then send the head and the text. */
static int send_section(const struct km_mpi_ops *ops,
                        const struct km_report *rep,
                        const struct km_text *section)
{
    struct km_text lost = { 0 };
    const char *p;
    size_t len;
    section_to_send(section, rep->rank, &lost, &p, &len);
    struct rank_head head = { len, rep->pred };
    if (section->failed)
        head.row.none |= KM_NOPRED_LOST;
    int token;
    int rc = ops->recv(&token, sizeof token, 0) ||
             ops->send(&head, sizeof head, 0);
    for (size_t off = 0; !rc && off < len; off += KM_CHUNK) {
        size_t n = len - off < KM_CHUNK ? len - off : KM_CHUNK;
        rc = ops->send(p + off, n, 0);
    }
    km_text_free(&lost);
    return rc;
}

/* Rank 0's running state while it writes the file. */
struct collector {
    const struct km_mpi_ops *ops;
    struct km_out_file *f;
    char *buf;               /* KM_CHUNK bytes */
    int nranks;
    off_t note_at;           /* offset of the Prediction's note */
    size_t note_len;
    off_t rows_at;           /* offset of rank 0's Prediction row */
    size_t row_len;
    off_t at;                /* where the next section goes */
    double min_r, sum_p, max_t;   /* max_t: of T - S - O */
    double waited;                /* largest share of the time waited */
    int estimated, none;
    int cpu;                      /* the times are CPU time */
};

static void add_row(struct collector *c, int rank,
                    const struct km_prediction_row *p)
{
    char row[256];
    size_t n = km_format_prediction_row(row, sizeof row, rank, p);
    if (n != c->row_len)
        km_file_fail(c->f, "a Prediction row does not fit its width");
    km_file_pwrite(c->f, row, n, c->rows_at + (off_t)rank * (off_t)c->row_len);
    if (rank == 0 || p->r < c->min_r)
        c->min_r = p->r;
    if (rank == 0 || p->t - p->s - p->o > c->max_t)
        c->max_t = p->t - p->s - p->o;
    c->sum_p += p->p;
    if (km_waited_share(p->w, p->t, c->cpu) > c->waited)
        c->waited = km_waited_share(p->w, p->t, c->cpu);
    c->estimated |= p->estimated;
    c->none |= p->none;
}

static void add_text(struct collector *c, const char *p, size_t n)
{
    km_file_pwrite(c->f, p, n, c->at);
    c->at += (off_t)n;
}

/* Rank 0: ask rank `ask` (if any) for its section, then copy rank `src`'s
 * into the file chunk by chunk. */
static int collect_one(struct collector *c, int src, int ask)
{
    int token = 1;
    struct rank_head head;
    if (ask < c->nranks && c->ops->send(&token, sizeof token, ask))
        return -1;
    if (c->ops->recv(&head, sizeof head, src))
        return -1;
    add_row(c, src, &head.row);
    for (uint64_t off = 0; off < head.len; off += KM_CHUNK) {
        size_t n = head.len - off < KM_CHUNK ? (size_t)(head.len - off)
                                             : KM_CHUNK;
        if (c->ops->recv(c->buf, n, src))
            return -1;
        add_text(c, c->buf, n);
    }
    return 0;
}

/* Rank 0: the whole file into the temporary file f.  Returns the MPI
 * outcome; a failed write only marks f (the protocol goes on, so that the
 * other ranks are not left waiting). */
static int collect(const struct km_mpi_ops *ops, struct km_out_file *f,
                   char *buf, const struct km_report *rep,
                   const struct km_text *section)
{
    struct collector c = { .ops = ops, .f = f, .buf = buf,
                           .nranks = rep->nranks,
                           .cpu = km_clock_is_cpu(&rep->clock) };
    struct km_text head = { 0 }, lost = { 0 }, end = { 0 };
    char sample[512];
    const struct km_prediction_row zero = { 0 };
    km_format_header(&head, rep, -1);
    km_format_prediction_heading(&head);
    km_format_end(&end);
    c.note_len = km_format_prediction_note(sample, sizeof sample, 0, 0,
                                           c.cpu);
    c.row_len = km_format_prediction_row(sample, sizeof sample, 0, &zero);
    size_t figs_len = km_format_prediction_figures(sample, sizeof sample, 0,
                                                   0, 0, 0, 0, c.cpu);
    if (head.failed || end.failed || !c.note_len || !c.row_len || !figs_len)
        km_file_fail(f, "out of memory");
    c.note_at = (off_t)head.len;
    c.rows_at = c.note_at + (off_t)c.note_len;
    c.at = c.rows_at + (off_t)rep->nranks * (off_t)c.row_len +
           (off_t)figs_len;
    km_file_pwrite(f, head.p, head.failed ? 0 : head.len, 0);

    const char *p;
    size_t len;
    add_row(&c, 0, &rep->pred);
    section_to_send(section, 0, &lost, &p, &len);
    add_text(&c, p, len);
    int rc = 0;
    for (int ask = 1; ask < KM_WINDOW && ask < rep->nranks && rc == 0; ask++)
        rc = ops->send(&(int){ 1 }, sizeof(int), ask);
    for (int src = 1; src < rep->nranks && rc == 0; src++)
        rc = collect_one(&c, src, src + KM_WINDOW - 1);

    if (section->failed)
        c.none |= KM_NOPRED_LOST;
    double speedup = c.max_t > 0 ? (c.min_r + c.sum_p) / c.max_t : 0;
    size_t n = km_format_prediction_figures(sample, sizeof sample,
                                            c.min_r + c.sum_p, speedup,
                                            speedup / rep->nranks,
                                            c.estimated != 0, c.none,
                                            c.cpu);
    if (n != figs_len)
        km_file_fail(f, "the predicted figures do not fit their width");
    km_file_pwrite(f, sample, n,
                   c.rows_at + (off_t)rep->nranks * (off_t)c.row_len);
    n = km_format_prediction_note(sample, sizeof sample, c.none, c.waited,
                                  c.cpu);
    if (n != c.note_len)
        km_file_fail(f, "the Prediction's note does not fit its width");
    km_file_pwrite(f, sample, n, c.note_at);
    add_text(&c, end.p, end.failed ? 0 : end.len);
    km_text_free(&head);
    km_text_free(&lost);
    km_text_free(&end);
    return rc;
}

int km_gather_write(const struct km_mpi_ops *ops, const struct km_report *rep,
                    const struct km_text *section, struct km_outname *name)
{
    if (ops->begin()) {
        km_complain("KM_output not written: cannot set up MPI communication");
        return -1;
    }
    /* Rank 0 says whether it can write at all, so that every rank takes
     * the same path through the collectives below. */
    struct km_out_file f = { .fd = -1 };
    char *buf = NULL;
    int ok = 1;
    if (rep->rank == 0) {
        buf = km_mem_alloc(KM_CHUNK);
        if (!buf)
            km_file_fail(&f, "out of memory");
        else if (km_file_open_temp(&f) == 0)
            gather_file = &f;
        ok = gather_file != NULL;
        if (!ok)
            km_file_complain(&f);
    }
    int rc = ops->bcast_int(&ok);
    if (rc == 0 && ok && rep->rank != 0)
        rc = send_section(ops, rep, section);
    if (rc == 0 && ok && rep->rank == 0) {
        rc = collect(ops, &f, buf, rep, section);
        if (rc)
            km_file_fail(&f, "MPI communication failed");
        km_file_close(&f);
        ok = !f.failed;              /* the whole text is in the file */
    }
    /* The gathered file supersedes the files of one rank KM_WRIT wrote
     * while MPI was running: they go first, so that it takes the lowest
     * free name. */
    if (rc == 0)
        rc = ops->bcast_int(&ok);
    if (rc == 0 && ok) {
        km_file_remove_own(name);
        rc = ops->barrier();
    }
    if (gather_file) {               /* rank 0, with a temporary file */
        km_file_close(&f);
        if (!ok || rc)
            km_file_fail(&f, "MPI communication failed");
        ok = km_file_place(&f, name, -1) == 0;
    }
    gather_file = NULL;
    if (rc == 0)
        rc = ops->bcast_int(&ok);    /* so every rank knows the outcome */
    ops->end();
    km_mem_free(buf);
    return rc == 0 && ok ? 0 : -1;
}

/* ---- the handshake at an MPI_FINALIZE no instrumented code calls ---------
 *
 * MPI_FINALIZE calls libkm back on every rank whose libkm saw MPI running;
 * a rank that never ran instrumented code (a C master, another program of
 * an MPMD run) makes no such call, and a gather would wait for it forever.
 * So rank 0 hails every rank, each rank that hears it answers, and rank 0
 * tells every rank whether all answered.  A rank answers only once it has
 * heard rank 0, so the verdict reaches every rank that waits for it; a
 * rank that hears nothing within `wait` seconds, and rank 0 when an answer
 * is missing by then, give up the gather.  No process leaves MPI_FINALIZE
 * before every rank has entered it, so no message goes to one that is
 * gone.  (A message that a rank that gave up never reads is left behind.)
 */
enum { TAG_HAIL = 7184, TAG_HERE = 7185, TAG_VERDICT = 7186 };

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pause_a_moment(void)
{
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
}

/* What src sends with tag, waiting until `until` (0: for ever); -1 if
 * nothing came. */
static int hear(const struct km_mpi_ops *ops, int src, int tag, double until)
{
    int v;
    while ((v = ops->heard(src, tag)) < 0) {
        if (until > 0 && seconds_now() > until)
            return -1;
        pause_a_moment();
    }
    return v;
}

int km_gather_agree(const struct km_mpi_ops *ops, int rank, int nranks,
                    double wait)
{
    if (nranks <= 1)
        return 1;
    double until = seconds_now() + wait;
    if (rank != 0) {
        if (hear(ops, 0, TAG_HAIL, until) < 0)
            return 0;
        ops->hail(0, TAG_HERE, 1);
        return hear(ops, 0, TAG_VERDICT, 0) == 1;   /* it always comes */
    }
    for (int k = 1; k < nranks; k++)
        ops->hail(k, TAG_HAIL, 1);
    int all = 1;
    for (int k = 1; k < nranks && all; k++)
        all = hear(ops, k, TAG_HERE, until) >= 0;
    for (int k = 1; k < nranks; k++)
        ops->hail(k, TAG_VERDICT, all);
    return all;
}
