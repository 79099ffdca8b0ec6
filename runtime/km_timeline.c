/*
 * km_timeline.c — the time slots of the program's thread (the Timeline
 * block of KM_output, doc/KM_output.md).
 *
 * Owns the slot grid (origin, width, doubling by merging adjacent pairs),
 * spreading a region's time over the slots it ran in, moving the time
 * before MPI_INIT's return into row 0, and
 * turning the raw rows into the printed figures: each category scaled to
 * the rank's own figure for it, in whole nanoseconds that add up exactly.
 *
 * Must never: read the clock (the core hands it the times it already
 * has), allocate anywhere but km_tl_grow and km_tl_copy (which run off
 * the hot path), or print.
 */
#include "runtime/km_internal.h"

#include <string.h>

/* Until the first registration: every id's code, and rt's row 0, which
 * the hot path adds to for regions that are not routines. */
static const int32_t no_code[1] = { KM_TL_OTHER };
static km_time nobody[KM_TL_ROWS];

void km_tl_start(struct km_timeline *tl, km_tick now, km_tick width0)
{
    memset(tl->cat_rows, 0, sizeof tl->cat_rows);
    tl->cat = tl->cat_rows;
    if (!tl->code)
        tl->code = no_code;
    if (!tl->rt)
        tl->rt = nobody;
    memset(tl->rt, 0, (size_t)(tl->nrt ? tl->nrt : 1) * KM_TL_ROWS *
                      sizeof *tl->rt);
    tl->width0 = width0 > 0 ? width0 : 1;
    tl->width = tl->width0;
    tl->origin = now;
    tl->origin_base = now;
    tl->origin_mpi = 0;
    tl->row = 1;
    tl->slot_start = now;
    tl->slot_end = now + tl->width;
}

/* Where the time of a region of this kind goes. */
static int kind_category(const struct km_region *r)
{
    if (KM_KIND_IS_ROUTINE(r->kind))
        return KM_TL_COMP;
    if (r->kind == KM_K_MPI)
        return (r->hooks & KM_HOOK_STARTUP) ? KM_TL_OTHER : KM_TL_MPI;
    if (r->kind == KM_K_IO)
        return KM_TL_IO;
    return KM_TL_OTHER;   /* a CALL (Other), a loop (its routine's own) */
}

static int grow_routines(struct km_timeline *tl, int32_t need)
{
    if (need <= tl->caprt)
        return 0;
    int32_t cap = tl->caprt ? tl->caprt * 2 : 64;
    while (cap < need)
        cap *= 2;
    km_time *rt = km_mem_alloc((size_t)cap * KM_TL_ROWS * sizeof *rt);
    int32_t *rid = km_mem_alloc((size_t)cap * sizeof *rid);
    if (!rt || !rid) {
        km_mem_free(rt);
        km_mem_free(rid);
        return -1;
    }
    memset(rt, 0, (size_t)cap * KM_TL_ROWS * sizeof *rt);
    if (tl->nrt) {
        memcpy(rt, tl->rt, (size_t)tl->nrt * KM_TL_ROWS * sizeof *rt);
        memcpy(rid, tl->rid, (size_t)tl->nrt * sizeof *rid);
    } else {
        memcpy(rt, tl->rt, KM_TL_ROWS * sizeof *rt);     /* nobody's */
        rid[0] = 0;
        tl->nrt = 1;
    }
    /* the old arrays are kept: a signal's snapshot may be reading them */
    tl->rt = rt;
    tl->rid = rid;
    tl->caprt = cap;
    return 0;
}

static int grow_codes(struct km_timeline *tl, int32_t nreg)
{
    if (nreg < tl->cap)
        return 0;
    int32_t cap = tl->cap ? tl->cap * 2 : 256;
    while (cap <= nreg)
        cap *= 2;
    int32_t *code = km_mem_alloc((size_t)cap * sizeof *code);
    if (!code)
        return -1;
    memcpy(code, tl->code, ((size_t)tl->nreg + 1) * sizeof *code);
    tl->code = code;                 /* (the old one kept, as above) */
    tl->cap = cap;
    return 0;
}

/* A routine's row in rt, or 0. */
static int32_t routine_row(const struct km_timeline *tl, int32_t id)
{
    if (id < 1 || id > tl->nreg)
        return 0;
    return KM_TL_RIX(tl->code[id]);
}

int km_tl_grow(struct km_timeline *tl, struct km_region *const *tab,
               int32_t nreg)
{
    if (nreg <= tl->nreg)
        return 0;
    if (!tl->code)
        tl->code = no_code;
    if (!tl->rt)
        tl->rt = nobody;
    if (grow_codes(tl, nreg))
        return -1;
    int32_t *code = (int32_t *)tl->code;
    for (int32_t id = tl->nreg + 1; id <= nreg; id++) {
        const struct km_region *r = tab[id - 1];
        int c = kind_category(r);
        int32_t rix = 0;
        if (c == KM_TL_COMP) {
            if (grow_routines(tl, tl->nrt + 1 + (tl->nrt == 0)) == 0) {
                rix = tl->nrt++;
                tl->rid[rix] = id;
            }
        } else if (c == KM_TL_IO) {
            rix = routine_row(tl, r->routine);
        }
        code[id] = KM_TL_CODE(rix, c);
        __atomic_store_n(&tl->nreg, id, __ATOMIC_RELEASE);
    }
    return 0;
}

void km_tl_put(struct km_timeline *tl, int32_t code, km_time amount)
{
    int c = KM_TL_CAT(code);
    km_time *rt = &tl->rt[(size_t)KM_TL_RIX(code) * KM_TL_ROWS];
    if (c == KM_TL_IO) {             /* out of its routine's computation */
        tl->cat[tl->row][KM_TL_COMP] -= amount;
        rt[tl->row] -= amount;
    } else {
        rt[tl->row] += amount;
    }
    tl->cat[tl->row][c] += amount;
}

/* Twice the width: slot pairs merged, the second half of the rows empty. */
static void double_width(struct km_timeline *tl)
{
    for (int32_t s = 0; s < KM_TL_SLOTS; s++) {
        int32_t to = 1 + s / 2, from = 1 + s;
        for (int c = 0; c < KM_TL_NCAT; c++) {
            km_time v = tl->cat[from][c];
            tl->cat[from][c] = 0;
            tl->cat[to][c] += v;
        }
        for (int32_t k = 0; k < tl->nrt; k++) {
            km_time *row = &tl->rt[(size_t)k * KM_TL_ROWS];
            km_time v = row[from];
            row[from] = 0;
            row[to] += v;
        }
    }
    tl->width *= 2;
    tl->row = 1 + (tl->row - 1) / 2;
    tl->slot_start = tl->origin + (km_tick)(tl->row - 1) * tl->width;
    tl->slot_end = tl->slot_start + tl->width;
}

void km_tl_fit(struct km_timeline *tl, km_tick now)
{
    if (tl->slot_end == 0)
        return;
    while (now - tl->origin >= (km_tick)KM_TL_SLOTS * tl->width)
        double_width(tl);
}

void km_tl_place(struct km_timeline *tl, km_tick now)
{
    if (tl->slot_end == 0 || now < tl->origin)
        return;
    km_tl_fit(tl, now);
    tl->row = 1 + (int32_t)((now - tl->origin) / tl->width);
    tl->slot_start = tl->origin + (km_tick)(tl->row - 1) * tl->width;
    tl->slot_end = tl->slot_start + tl->width;
}

void km_tl_spread(struct km_timeline *tl, km_tick from, km_tick now,
                  int32_t code, km_time amount)
{
    if (tl->slot_end == 0 || amount == 0)
        return;
    int32_t row = tl->row;
    if (from < tl->slot_start)
        from = tl->slot_start;
    if (now <= from) {
        km_tl_put(tl, code, amount);
        return;
    }
    km_time done = 0;
    km_tick end = tl->slot_start + tl->width;   /* current row's end */
    for (km_tick at = from; at < now; end += tl->width) {
        km_tick to = now < end ? now : end;
        if (to > at) {
            km_time part = to == now ? amount - done
                : (km_time)((__int128)amount * (to - at) / (now - from));
            km_tl_put(tl, code, part);
            done += part;
            at = to;
        }
        if (tl->row < KM_TL_ROWS - 1 && to == end)
            tl->row++;
    }
    tl->row = row;
}

void km_tl_rebase(struct km_timeline *tl, km_tick now)
{
    if (tl->slot_end == 0)
        return;
    for (int32_t r = 1; r < KM_TL_ROWS; r++)
        for (int c = 0; c < KM_TL_NCAT; c++) {
            tl->cat[0][c] += tl->cat[r][c];
            tl->cat[r][c] = 0;
        }
    for (int32_t k = 0; k < tl->nrt; k++) {
        km_time *row = &tl->rt[(size_t)k * KM_TL_ROWS];
        for (int32_t r = 1; r < KM_TL_ROWS; r++) {
            row[0] += row[r];
            row[r] = 0;
        }
    }
    tl->width = tl->width0;
    tl->origin = now;
    tl->origin_mpi = 1;
    tl->row = 1;
    tl->slot_start = now;
    tl->slot_end = now + tl->width;
}

void km_tl_hide(struct km_timeline *tl, km_tick d)
{
    if (tl->slot_end == 0)
        return;
    tl->origin += d;
    tl->origin_base += d;
    tl->slot_start += d;
    tl->slot_end += d;
}

struct km_timeline *km_tl_copy(const struct km_timeline *tl, km_tick at)
{
    if (tl->slot_end == 0)
        return NULL;
    struct km_timeline *c = km_mem_alloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *tl;
    c->cat = c->cat_rows;
    c->code = tl->code;              /* (read only; not freed) */
    c->rt = NULL;
    c->rid = NULL;
    c->at = at;
    int32_t nrt = tl->nrt ? tl->nrt : 1;
    size_t n = (size_t)nrt * KM_TL_ROWS;
    c->rt = km_mem_alloc(n * sizeof *c->rt);
    c->rid = km_mem_alloc((size_t)nrt * sizeof *c->rid);
    if (!c->rt || !c->rid) {
        km_tl_free(c);
        return NULL;
    }
    memcpy(c->rt, tl->rt, n * sizeof *c->rt);
    if (tl->nrt)
        memcpy(c->rid, tl->rid, (size_t)nrt * sizeof *c->rid);
    else
        c->rid[0] = 0;
    c->nrt = nrt;
    c->caprt = nrt;
    return c;
}

void km_tl_free(struct km_timeline *copy)
{
    if (!copy)
        return;
    km_mem_free(copy->rt);
    km_mem_free(copy->rid);
    km_mem_free(copy);
}

/* ------------------------------------------------------------------------ */
/* The printed figures                                                       */

static int64_t to_ns(km_time t, double spt)
{
    double ns = (double)t * spt / (double)(1 << KM_SUB_BITS) * 1e9;
    return ns > 0 ? (int64_t)(ns + 0.5) : 0;
}

/* Share `total` out over rows 0..n-1 in proportion to raw[r * stride]
 * (negative raws count as none), in whole units that add up to `total`
 * exactly: each row gets the growth of the rounded running share.  A
 * total with no raw time at all goes to the last row. */
static void share_out(int64_t total, const km_time *raw, size_t stride,
                      int32_t n, int64_t *out, size_t ostride)
{
    long double sum = 0;
    for (int32_t r = 0; r < n; r++)
        if (raw[r * stride] > 0)
            sum += (long double)raw[r * stride];
    for (int32_t r = 0; r < n; r++)
        out[r * ostride] = 0;
    if (n == 0)
        return;
    if (sum <= 0) {
        out[(size_t)(n - 1) * ostride] = total;
        return;
    }
    long double run = 0;
    int64_t given = 0;
    for (int32_t r = 0; r < n; r++) {
        if (raw[r * stride] > 0)
            run += (long double)raw[r * stride];
        int64_t upto = r == n - 1 ? total
                                  : (int64_t)((long double)total * run / sum +
                                              0.5L);
        out[r * ostride] = upto - given;
        given = upto;
    }
}

/* The rows in use: row 0 and every slot up to the snapshot's. */
static int32_t rows_used(const struct km_timeline *tl)
{
    int32_t n = tl->row + 1;
    for (int32_t r = KM_TL_ROWS - 1; r >= n; r--)
        for (int c = 0; c < KM_TL_NCAT; c++)
            if (tl->cat[r][c] != 0)
                return r + 1;
    return n > KM_TL_ROWS ? KM_TL_ROWS : n;
}

/* Other's raw time: what the others leave of each row's time (row 0:
 * the start to the origin; the last row ends at the snapshot). */
static void other_raw(const struct km_timeline *tl, int32_t rows,
                      km_time *out)
{
    for (int32_t r = 0; r < rows; r++) {
        km_tick from = r == 0 ? tl->origin_base
                              : tl->origin + (km_tick)(r - 1) * tl->width;
        km_tick to = r == 0 ? tl->origin : from + tl->width;
        if (to > tl->at)
            to = tl->at;
        km_time v = to > from ? KM_SUB(to - from) : 0;
        for (int c = 0; c < KM_TL_OTHER; c++)
            v -= tl->cat[r][c];
        out[r] = v;
    }
}

/* The KM_TL_TOP routines with the most net time (ids), most first. */
static int32_t top_routines(const struct km_report *rep,
                            const struct km_timeline *tl, int32_t *top)
{
    int32_t n = 0;
    for (int32_t k = 1; k < tl->nrt; k++) {
        int32_t id = tl->rid[k];
        if (id < 1 || id > rep->nreg || rep->reg[id - 1].excl <= 0)
            continue;
        km_time v = rep->reg[id - 1].excl;
        int32_t i = n < KM_TL_TOP ? n++ : KM_TL_TOP;
        while (i > 0 && rep->reg[top[i - 1] - 1].excl < v) {
            if (i < KM_TL_TOP)
                top[i] = top[i - 1];
            i--;
        }
        if (i < KM_TL_TOP)
            top[i] = id;
    }
    return n;
}

static int32_t rix_of(const struct km_timeline *tl, int32_t id)
{
    for (int32_t k = 1; k < tl->nrt; k++)
        if (tl->rid[k] == id)
            return k;
    return -1;
}

/* The top routines' columns: their computation scaled as the category's,
 * rounded down, and never more together than the row's computation. */
static void routine_columns(const struct km_timeline *tl,
                            struct km_tl_figures *f)
{
    long double raw = 0;
    for (int32_t r = 0; r < f->rows; r++)
        if (tl->cat[r][KM_TL_COMP] > 0)
            raw += (long double)tl->cat[r][KM_TL_COMP];
    for (int32_t k = 0; k < f->ntop; k++) {
        int32_t x = rix_of(tl, f->top[k]);
        for (int32_t r = 0; r < f->rows; r++) {
            km_time v = x >= 0 ? tl->rt[(size_t)x * KM_TL_ROWS + r] : 0;
            f->rt[k][r] = v > 0 && raw > 0
                ? (int64_t)((long double)f->total[KM_TL_COMP] * v / raw)
                : 0;
        }
    }
    for (int32_t r = 0; r < f->rows; r++) {
        int64_t sum = 0;
        for (int32_t k = 0; k < f->ntop; k++)
            sum += f->rt[k][r];
        for (int32_t k = 0; sum > f->cat[r][KM_TL_COMP] && k < f->ntop; k++) {
            int64_t cut = sum - f->cat[r][KM_TL_COMP];
            if (cut > f->rt[k][r])
                cut = f->rt[k][r];
            f->rt[k][r] -= cut;
            sum -= cut;
        }
    }
}

int km_tl_figures(const struct km_report *rep, struct km_tl_figures *f)
{
    const struct km_timeline *tl = rep->tl;
    if (!tl)
        return -1;
    double spt = rep->clock.seconds_per_tick;
    memset(f, 0, sizeof *f);
    f->rows = rows_used(tl);
    f->width = (double)tl->width * spt;
    f->origin = (double)(tl->origin - tl->origin_base) * spt;
    f->origin_mpi = tl->origin_mpi;
    km_time comp = rep->net > rep->io ? rep->net - rep->io : 0;
    int64_t all = to_ns(rep->total, spt);
    f->total[KM_TL_COMP] = to_ns(comp, spt);
    f->total[KM_TL_MPI] = to_ns(rep->mpi, spt);
    f->total[KM_TL_IO] = to_ns(rep->io, spt);
    int64_t other = all - f->total[KM_TL_COMP] - f->total[KM_TL_MPI] -
                    f->total[KM_TL_IO];
    f->total[KM_TL_OTHER] = other > 0 ? other : 0;
    for (int c = 0; c < KM_TL_OTHER; c++)
        share_out(f->total[c], &tl->cat[0][c], KM_TL_NCAT, f->rows,
                  &f->cat[0][c], KM_TL_NCAT);
    km_time rest[KM_TL_ROWS];
    other_raw(tl, f->rows, rest);
    share_out(f->total[KM_TL_OTHER], rest, 1, f->rows,
              &f->cat[0][KM_TL_OTHER], KM_TL_NCAT);
    f->est[KM_TL_COMP] = rep->net_marked || rep->io_est;
    f->est[KM_TL_MPI] = rep->mpi_est;
    f->est[KM_TL_IO] = rep->io_est;
    f->est[KM_TL_OTHER] = 1;         /* it holds libkm's overhead */
    f->ntop = top_routines(rep, tl, f->top);
    for (int32_t k = 0; k < f->ntop; k++)
        f->top_est[k] = KM_EST_EXCL(&rep->reg[f->top[k] - 1]);
    routine_columns(tl, f);
    return 0;
}
