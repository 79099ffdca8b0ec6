/*
 * messages.c — the bytes a measured MPI call moves.  After the KM_OUT of
 * a point-to-point or collective call kmrun knows, a call of
 * KM_libkm_mpi.f's KM_MPIS (sent), KM_MPIQ (received, as posted), KM_MPIR
 * (received, as its status says), KM_MPIC (a collective's part), KM_MPIV
 * (a collective's part given as counts per rank), and for an all-to-all
 * KM_MPIA / KM_MPIW (what goes to each rank, for the matrix) with
 * the count, datatype and peer the call names; runtime/km_msg.c adds them
 * up per call site.
 *
 * The datatype goes as TRANSFER(type, 0): an INTEGER handle (mpif.h, USE
 * MPI) stays what it is, and a TYPE(MPI_Datatype) of USE MPI_F08 gives
 * its one INTEGER component, so one glue routine serves both.  A status
 * is read only where the unit does not use MPI_F08 (its TYPE(MPI_Status)
 * is no INTEGER array); elsewhere a receive counts what it posted.
 *
 * Must never: evaluate anything the call does not (its own actual
 * arguments, again, after it), or write text (copy.c does).
 */
#include "rewriter/plan.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lexer/classify.h"
#include "runtime/km_abi.h"

/* The routines (without MPI_), the names of their dummy arguments, and
 * which of them say what is sent, received (count, datatype, peer and
 * status) or a collective's part (count, datatype; the second pair when
 * the send buffer is MPI_IN_PLACE). */
static const struct shape {
    const char *names, *dummies, *send, *recv, *coll, *in_place;
    const char *counts;       /* a collective's counts per rank, its
                                 datatype and communicator */
    const char *dest, *dests; /* an all-to-all's count to every rank (or
                                 counts per rank), datatype, communicator:
                                 the matrix's collective part */
} shapes[] = {
    {.names = "SEND BSEND SSEND RSEND ISEND IBSEND ISSEND IRSEND",
     .dummies = "BUF COUNT DATATYPE DEST TAG COMM",
     .send = "COUNT DATATYPE DEST TAG"},
    {.names = "RECV", .dummies = "BUF COUNT DATATYPE SOURCE TAG COMM STATUS",
     .recv = "COUNT DATATYPE SOURCE TAG STATUS"},
    {.names = "IRECV", .dummies = "BUF COUNT DATATYPE SOURCE TAG COMM",
     .recv = "COUNT DATATYPE SOURCE TAG"},
    {.names = "SENDRECV",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE DEST SENDTAG RECVBUF RECVCOUNT "
                "RECVTYPE SOURCE RECVTAG COMM STATUS",
     .send = "SENDCOUNT SENDTYPE DEST SENDTAG",
     .recv = "RECVCOUNT RECVTYPE SOURCE RECVTAG STATUS"},
    {.names = "SENDRECV_REPLACE",
     .dummies = "BUF COUNT DATATYPE DEST SENDTAG SOURCE RECVTAG COMM STATUS",
     .send = "COUNT DATATYPE DEST SENDTAG",
     .recv = "COUNT DATATYPE SOURCE RECVTAG STATUS"},
    {.names = "BCAST IBCAST", .dummies = "BUFFER COUNT DATATYPE ROOT COMM",
     .coll = "COUNT DATATYPE"},
    {.names = "REDUCE IREDUCE",
     .dummies = "SENDBUF RECVBUF COUNT DATATYPE OP ROOT COMM",
     .coll = "COUNT DATATYPE"},
    {.names = "ALLREDUCE IALLREDUCE SCAN ISCAN EXSCAN IEXSCAN",
     .dummies = "SENDBUF RECVBUF COUNT DATATYPE OP COMM",
     .coll = "COUNT DATATYPE"},
    {.names = "REDUCE_SCATTER_BLOCK IREDUCE_SCATTER_BLOCK",
     .dummies = "SENDBUF RECVBUF RECVCOUNT DATATYPE OP COMM",
     .coll = "RECVCOUNT DATATYPE"},
    {.names = "GATHER IGATHER",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE RECVBUF RECVCOUNT RECVTYPE ROOT "
                "COMM",
     .coll = "SENDCOUNT SENDTYPE", .in_place = "RECVCOUNT RECVTYPE"},
    {.names = "SCATTER ISCATTER",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE RECVBUF RECVCOUNT RECVTYPE ROOT "
                "COMM",
     .coll = "RECVCOUNT RECVTYPE"},
    {.names = "ALLGATHER IALLGATHER",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE RECVBUF RECVCOUNT RECVTYPE COMM",
     .coll = "SENDCOUNT SENDTYPE", .in_place = "RECVCOUNT RECVTYPE"},
    {.names = "ALLTOALL IALLTOALL",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE RECVBUF RECVCOUNT RECVTYPE COMM",
     .coll = "SENDCOUNT SENDTYPE", .in_place = "RECVCOUNT RECVTYPE",
     .dest = "SENDCOUNT SENDTYPE COMM"},
    {.names = "GATHERV IGATHERV",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE RECVBUF RECVCOUNTS DISPLS "
                "RECVTYPE ROOT COMM",
     .coll = "SENDCOUNT SENDTYPE"},
    {.names = "SCATTERV ISCATTERV",
     .dummies = "SENDBUF SENDCOUNTS DISPLS SENDTYPE RECVBUF RECVCOUNT "
                "RECVTYPE ROOT COMM",
     .coll = "RECVCOUNT RECVTYPE"},
    {.names = "ALLGATHERV IALLGATHERV",
     .dummies = "SENDBUF SENDCOUNT SENDTYPE RECVBUF RECVCOUNTS DISPLS "
                "RECVTYPE COMM",
     .coll = "SENDCOUNT SENDTYPE"},
    {.names = "ALLTOALLV IALLTOALLV",
     .dummies = "SENDBUF SENDCOUNTS SDISPLS SENDTYPE RECVBUF RECVCOUNTS "
                "RDISPLS RECVTYPE COMM",
     .counts = "SENDCOUNTS SENDTYPE COMM",
     .dests = "SENDCOUNTS SENDTYPE COMM"},
    {.names = "REDUCE_SCATTER IREDUCE_SCATTER",
     .dummies = "SENDBUF RECVBUF RECVCOUNTS DATATYPE OP COMM",
     .counts = "RECVCOUNTS DATATYPE COMM"},
};

const char *km_mpi_actual(const struct km_actuals *a, const char *dummies,
                          const char *name)
{
    int pos = 0;
    size_t n = strlen(name);
    for (const char *d = dummies; *d; pos++) {
        const char *e = strchr(d, ' ');
        size_t len = e ? (size_t)(e - d) : strlen(d);
        if (len == n && strncmp(d, name, n) == 0)
            break;
        d += len + (e != NULL);
        if (!e) {
            pos = -1;
            break;
        }
    }
    if (pos < 0)
        return NULL;
    if (pos < a->n && !a->kw[pos])
        return a->text[pos];
    for (int k = 0; k < a->n; k++)
        if (a->kw[k] && strcasecmp(a->kw[k], name) == 0)
            return a->text[k];
    return NULL;
}

/* The k-th word (0-based) of `words`, into buf. */
static const char *word(const char *words, int k, char *buf, size_t size)
{
    const char *p = words;
    for (; k > 0 && p; k--) {
        p = strchr(p, ' ');
        p = p ? p + 1 : NULL;
    }
    if (!p)
        return NULL;
    size_t n = strcspn(p, " ");
    snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), p);
    return buf;
}

/* Actuals of dummies words[0..n-1] of `roles` into v; false if one is
 * missing. */
static bool role(const struct km_actuals *a, const char *dummies,
                 const char *roles, int n, const char **v)
{
    char w[32];
    for (int k = 0; k < n; k++)
        if (!word(roles, k, w, sizeof w) ||
            !(v[k] = km_mpi_actual(a, dummies, w)))
            return false;
    return true;
}

bool km_word_in(const char *words, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = words; p;) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = p[len] ? p + len + 1 : NULL;
    }
    return false;
}

const char *km_mpi_routine(const char *name)
{
    if (strncmp(name, "PMPI_", 5) == 0)
        name++;
    return strncmp(name, "MPI_", 4) == 0 ? name + 4 : NULL;
}

static const struct shape *shape_of(const char *name)
{
    const char *r = km_mpi_routine(name);
    if (!r)
        return NULL;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        if (km_word_in(shapes[k].names, r))
            return &shapes[k];
    return NULL;
}

/* Does unit `unit`, or a unit it is inside, use MPI_F08? */
static bool uses_f08(const struct plan *P, int unit)
{
    const struct km_program *prog = P->prog;
    for (int x = unit; x >= 0; x = prog->units[x].host) {
        const struct km_unit *u = &prog->units[x];
        if (!u->uses)
            return false;
        for (int i = u->first; i <= u->end; i++) {
            if (prog->info[i].unit != x || prog->info[i].kind != KS_USE)
                continue;
            const struct km_stmt *s = &P->src->stmts[i];
            const char *t = P->src->tok.data + s->tok;
            for (int k = 0; k + 7 <= s->tok_len; k++)
                if (strncasecmp(t + k, "MPI_F08", 7) == 0)
                    return true;
        }
    }
    return false;
}

const char *km_mpi_status(const struct plan *P, int unit,
                          const struct km_actuals *a, const char *dummies)
{
    const char *status = km_mpi_actual(a, dummies, "STATUS");
    if (!status || strncmp(status, "MPI_STATUS", 10) == 0 ||
        uses_f08(P, unit))
        return NULL;
    return status;
}

char *km_mpi_handle(const char *t)
{
    return km_fmt("TRANSFER(%s, 0)", t);
}

/* The calls that record what statement i (a measured MPI call, region
 * handle h) moves, added to `out`. */
static void message_calls(struct plan *P, struct unit_ctx *c, int i, int h,
                          struct code *out)
{
    const char *name = P->prog->info[i].name;
    const struct shape *s = name ? shape_of(name) : NULL;
    struct km_actuals a;
    if (!s || !km_read_actuals(P->src->tok.data + P->prog->info[i].name_tok, &a,
                         NULL))
        return;
    const char *v[5];
    const char *comm = km_mpi_actual(&a, s->dummies, "COMM");
    char *cm = comm ? km_mpi_handle(comm) : NULL;
    if (cm && s->send && role(&a, s->dummies, s->send, 4, v)) {
        char *t = km_mpi_handle(v[1]);
        km_code_add(out, 0, 0, km_fmt("CALL KM_MPIS(%s(%d), %s, %s, %s, %s, "
                                      "%s)", c->h, h, v[0], t, v[2], v[3],
                                      cm));
        free(t);
    }
    if (cm && s->recv && role(&a, s->dummies, s->recv, 4, v)) {
        char *t = km_mpi_handle(v[1]);
        const char *status = strstr(s->recv, "STATUS")
                                 ? km_mpi_status(P, c->index, &a, s->dummies)
                                 : NULL;
        if (status)
            km_code_add(out, 0, 0, km_fmt("CALL KM_MPIR(%s(%d), %s, %s, %s)",
                                          c->h, h, t, status, cm));
        else
            km_code_add(out, 0, 0, km_fmt("CALL KM_MPIQ(%s(%d), %s, %s, %s, "
                                          "%s, %s)", c->h, h, v[0], t, v[2],
                                          v[3], cm));
        free(t);
    }
    const char *buf = km_mpi_actual(&a, s->dummies, "SENDBUF");
    bool in_place = buf && strcmp(buf, "MPI_IN_PLACE") == 0;
    const char *coll = in_place ? s->in_place : s->coll;
    if (cm && coll && role(&a, s->dummies, coll, 2, v)) {
        char *t = km_mpi_handle(v[1]);
        km_code_add(out, 0, 0, km_fmt("CALL KM_MPIC(%s(%d), %s, %s, %s)",
                                      c->h, h, v[0], t, cm));
        free(t);
    }
    free(cm);
    static const struct {
        size_t off;
        const char *routine;
    } per_rank[] = {
        {offsetof(struct shape, counts), "KM_MPIV"},
        {offsetof(struct shape, dest), "KM_MPIA"},
        {offsetof(struct shape, dests), "KM_MPIW"},
    };
    for (size_t k = 0; k < sizeof per_rank / sizeof *per_rank; k++) {
        const char *roles = *(const char *const *)((const char *)s +
                                                   per_rank[k].off);
        if (!roles || in_place || !role(&a, s->dummies, roles, 3, v))
            continue;
        char *t = km_mpi_handle(v[1]), *comm = km_mpi_handle(v[2]);
        km_code_add(out, 0, 0, km_fmt("CALL %s(%s(%d), %s, %s, %s)",
                                      per_rank[k].routine, c->h, h, v[0], t,
                                      comm));
        free(t);
        free(comm);
    }
    km_actuals_free(&a);
}

/* Before MPI_COMM_FREE (measured): libkm forgets the communicator's
 * ranks, since its handle may come back for another one. */
static void comm_free(struct plan *P, int i, struct code *before)
{
    const char *name = P->prog->info[i].name;
    struct km_actuals a;
    if (!name || (strcmp(name, "MPI_COMM_FREE") != 0 &&
                  strcmp(name, "PMPI_COMM_FREE") != 0) ||
        !km_read_actuals(P->src->tok.data + P->prog->info[i].name_tok, &a,
                         NULL))
        return;
    const char *comm = km_mpi_actual(&a, "COMM", "COMM");
    if (comm) {
        char *t = km_mpi_handle(comm);
        km_code_add(before, 0, 0, km_fmt("CALL KM_MPIX(%s)", t));
        free(t);
    }
    km_actuals_free(&a);
}

void km_place_messages(struct plan *P, struct unit_ctx *c, struct region *r)
{
    if (r->rk != RG_LOC || r->kind != KM_K_MPI)
        return;
    /* the calls below are KM_libkm_mpi.f's: a file with measured MPI
     * calls needs it, even where MPI_INIT is in another file (or in C) */
    if (P->opts->mpi_hooks)
        *P->opts->mpi_hooks = true;
    comm_free(P, r->stmt, km_code_before(P, r->stmt));
    message_calls(P, c, r->stmt, r->handle, km_code_after(P, r->stmt));
}
