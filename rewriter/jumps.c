/*
 * jumps.c — jumps that leave or enter measured regions, and DO terminals
 * that need code after them.
 *
 * A jump from statement s to label L leaves the regions open at s that are
 * not open at L (C) and enters those open at L that are not open at s (E,
 * only user regions: a jump into a DO loop is not Fortran).  Regions nest,
 * so closing the outermost of C closes the rest (KM_OUT closes the frames
 * above it).  The code that does it runs
 *
 *   - just before s, for an unconditional GO TO, an assigned GO TO (when
 *     every target it may take needs the same), EXIT and CYCLE;
 *   - otherwise in a stub placed just before L's statement (after an END
 *     IF, for an END IF), reached because the jump's label token is
 *     rewritten to the stub's label: arithmetic IF, computed GO TO, a
 *     logical IF's GO TO, alternate returns, END=, ERR= and EOR=.
 *
 * A jump to a RETURN, STOP, CALL EXIT or END needs nothing: what runs there
 * closes every region.  A jump that cannot be redirected (its statement or
 * target in an include file, or sharing a line; an assigned GO TO whose
 * targets need different code) makes the regions it would unbalance
 * unmeasured, with a warning, so that the program is never changed.
 *
 * Terminals: code that must run after a DO terminal in the same iteration
 * (the KM_OUT of a measured terminal statement, the END IF of a logical IF
 * made a block IF) or after an inner loop sharing the terminal has
 * completed (its KM_OUT) gets the loops a new terminal: their DO
 * statements' labels are rewritten to a CONTINUE placed after that code.
 */
#include "rewriter/plan.h"

#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"

enum mode { M_MAIN = 1, M_ACTION, M_STUB };

/* What one jump needs. */
struct need {
    int src, target, label, tok;
    int mode;
    int close;            /* region index closed (outermost of C), or -1 */
    int *enter;           /* regions entered, outer first */
    int nenter;
};

struct needs {
    struct need *v;
    int n, cap;
    int *assigned;        /* labels in ASSIGN statements of the unit */
    int nassigned, assignedcap;
};

/* Measured loops and user regions containing s, outer first, in out[]
 * (room for c->nrg). */
static int chain(const struct unit_ctx *c, int s, int *out)
{
    int n = 0;
    for (int k = 0; k < c->nrg; k++) {
        const struct region *r = &c->rg[k];
        /* (no jump may leave or enter an OpenMP construct) */
        if (!r->measured || r->rk == RG_LOC || r->rk == RG_OMP ||
            !km_region_contains(r, s))
            continue;
        int j = n++;
        while (j > 0 && km_region_outer(r, &c->rg[out[j - 1]])) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = k;
    }
    return n;
}

/* Does control reaching statement t close every region anyway? */
static bool full_exit(const struct plan *P, int t)
{
    const struct km_sinfo *in = &P->prog->info[t];
    if (in->kind == KS_RETURN || in->kind == KS_STOP || in->kind == KS_END)
        return true;
    return in->kind == KS_CALL && in->name &&
           (strcmp(in->name, "EXIT") == 0 || strcmp(in->name, "ABORT") == 0) &&
           !km_user_routine(P, in->name);
}

static void add_need(struct needs *N, struct need nd)
{
    KM_GROW(N->v, N->cap, N->n + 1);
    N->v[N->n++] = nd;
}

/* C and E of a jump from s (with s's own location open if `during`) to t,
 * into nd. */
static void close_and_enter(const struct unit_ctx *c, int s, bool during,
                            int t, struct need *nd)
{
    int *a = km_xmalloc(sizeof(int) * (size_t)(c->nrg + 2));
    int *b = km_xmalloc(sizeof(int) * (size_t)(c->nrg + 2));
    int na = chain(c, s, a);
    if (during) {
        int loc = km_location_of(c, s);
        if (loc >= 0)
            a[na++] = loc;
    }
    int nb = t >= 0 ? chain(c, t, b) : 0;
    int j = 0;
    while (j < na && j < nb && a[j] == b[j])
        j++;
    nd->close = j < na ? a[j] : -1;
    nd->nenter = nb - j;
    nd->enter = km_xmalloc(sizeof(int) * (size_t)(nd->nenter + 1));
    for (int k = j; k < nb; k++)
        nd->enter[k - j] = b[k];
    free(a);
    free(b);
}

/* EXIT and CYCLE: the regions inside the loop (or, EXIT with a name, the
 * construct) they act on. */
static void loop_exit_need(const struct plan *P, const struct unit_ctx *c,
                           int s, struct needs *N)
{
    int X = P->prog->info[s].exit_target;
    if (X < 0)
        X = P->prog->info[s].do_parent;
    if (X < 0)
        return;
    int *a = km_xmalloc(sizeof(int) * (size_t)(c->nrg + 1));
    int na = chain(c, s, a);
    struct need nd = {s, -1, 0, -1, 0, -1, NULL, 0};
    for (int k = 0; k < na; k++)
        if (c->rg[a[k]].stmt > X) {
            nd.close = a[k];
            break;
        }
    free(a);
    if (nd.close < 0)
        return;
    nd.mode = P->prog->info[s].kind == KS_IF_LOGICAL ? M_ACTION : M_MAIN;
    nd.enter = km_xmalloc(sizeof(int));
    add_need(N, nd);
}

/* Labels of the unit's ASSIGN statements that label executable
 * statements: what an assigned GO TO without a list may jump to. */
static void assigned_labels(const struct plan *P, const struct unit_ctx *c,
                            struct needs *N)
{
    for (int r = 0; r < P->prog->nrefs; r++) {
        const struct km_label_ref *ref = &P->prog->refs[r];
        if (ref->kind != KM_REF_ASSIGN ||
            P->prog->info[ref->stmt].unit != c->index)
            continue;
        int t = km_label_stmt(P, ref->label);
        if (t < 0 || P->prog->info[t].kind == KS_FORMAT)
            continue;
        KM_GROW(N->assigned, N->assignedcap, N->nassigned + 1);
        N->assigned[N->nassigned++] = ref->label;
    }
}

static bool same_need(const struct need *a, const struct need *b)
{
    if (a->close != b->close || a->nenter != b->nenter)
        return false;
    for (int k = 0; k < a->nenter; k++)
        if (a->enter[k] != b->enter[k])
            return false;
    return true;
}

/* Demote every region a need touches; returns true if one was measured. */
static bool demote(struct plan *P, struct unit_ctx *c, const struct need *nd,
                   const char *why)
{
    bool changed = false;
    int *a = km_xmalloc(sizeof(int) * (size_t)(c->nrg + 2));
    int na = chain(c, nd->src, a);
    int loc = km_location_of(c, nd->src);
    if (loc >= 0)
        a[na++] = loc;
    int start = 0;
    while (start < na && a[start] != nd->close)
        start++;
    for (int k = nd->close >= 0 ? start : na; k < na; k++) {
        struct region *r = &c->rg[a[k]];
        if (r->measured) {
            r->measured = false;
            changed = true;
            km_warn(P, r->rk == RG_LOOP || r->rk == RG_LOC ? r->stmt : nd->src,
                    "%s of line %d is not measured: %s (line %d)",
                    r->rk == RG_USER ? "the region" :
                    r->rk == RG_LOOP ? "the DO loop" : "the statement",
                    r->line, why, P->src->stmts[nd->src].first_line);
        }
    }
    for (int k = 0; k < nd->nenter; k++) {
        struct region *r = &c->rg[nd->enter[k]];
        if (r->measured) {
            r->measured = false;
            changed = true;
            km_warn(P, nd->src, "%s of line %d is not measured: %s",
                    r->rk == RG_USER ? "the region" : "the DO loop", r->line,
                    why);
        }
    }
    free(a);
    return changed;
}

static void free_needs(struct needs *N)
{
    for (int k = 0; k < N->n; k++)
        free(N->v[k].enter);
    free(N->v);
    free(N->assigned);
    memset(N, 0, sizeof *N);
}

/* The needs of the jumps of statement s with label references. */
static void jump_needs(const struct plan *P, const struct unit_ctx *c,
                       int s, struct needs *N)
{
    const struct km_sinfo *in = &P->prog->info[s];
    int k = km_effective_kind(P, s);
    bool during = k == KS_CALL || km_is_io_kind(k);
    int mode = M_STUB;
    if (k == KS_GOTO && in->goto_form == KM_GOTO_PLAIN &&
        in->kind == KS_GOTO)
        mode = M_MAIN;
    for (int r = P->ref_first[s]; r >= 0; r = P->ref_next[r]) {
        const struct km_label_ref *ref = &P->prog->refs[r];
        if (ref->kind != KM_REF_JUMP)
            continue;
        int t = km_label_stmt(P, ref->label);
        if (t < 0 || full_exit(P, t))
            continue;
        struct need nd = {s, t, ref->label, ref->tok, mode, -1, NULL, 0};
        close_and_enter(c, s, during, t, &nd);
        if (nd.close < 0 && nd.nenter == 0) {
            free(nd.enter);
            continue;
        }
        add_need(N, nd);
    }
}

/* An assigned GO TO: one need if all its targets agree; if they do not,
 * a need marked impossible (mode 0) that names every region involved. */
static void assigned_needs(const struct plan *P, const struct unit_ctx *c,
                           int s, struct needs *N)
{
    int *labels = NULL, nlabels = 0, cap = 0;
    for (int r = P->ref_first[s]; r >= 0; r = P->ref_next[r])
        if (P->prog->refs[r].kind == KM_REF_JUMP) {
            KM_GROW(labels, cap, nlabels + 1);
            labels[nlabels++] = P->prog->refs[r].label;
        }
    const int *from = nlabels ? labels : N->assigned;
    int nfrom = nlabels ? nlabels : N->nassigned;
    struct need all = {s, -1, 0, -1, 0, -1, NULL, 0};
    all.enter = km_xmalloc(sizeof(int) * (size_t)(c->nrg + 1));
    bool any = false, agree = true;
    struct need first = {0};
    for (int k = 0; k < nfrom; k++) {
        int t = km_label_stmt(P, from[k]);
        if (t < 0 || full_exit(P, t))
            continue;
        struct need nd = {s, t, from[k], -1, 0, -1, NULL, 0};
        close_and_enter(c, s, false, t, &nd);
        if (nd.close >= 0 && (all.close < 0 ||
                              km_region_outer(&c->rg[nd.close],
                                              &c->rg[all.close])))
            all.close = nd.close;
        for (int j = 0; j < nd.nenter; j++) {
            int q = 0;
            while (q < all.nenter && all.enter[q] != nd.enter[j])
                q++;
            if (q == all.nenter)
                all.enter[all.nenter++] = nd.enter[j];
        }
        if (!any) {
            first = nd;
            any = true;
        } else {
            agree = agree && same_need(&first, &nd);
            free(nd.enter);
        }
    }
    free(labels);
    if (!any || (all.close < 0 && all.nenter == 0)) {
        free(first.enter);
        free(all.enter);
        return;
    }
    if (agree) {
        free(all.enter);
        first.target = -1;
        first.mode = P->prog->info[s].kind == KS_IF_LOGICAL ? M_ACTION
                                                            : M_MAIN;
        add_need(N, first);
    } else {
        free(first.enter);
        all.mode = 0;
        add_need(N, all);
    }
}

static void collect_needs(const struct plan *P, const struct unit_ctx *c,
                          struct needs *N)
{
    const struct km_unit *u = c->u;
    assigned_labels(P, c, N);
    for (int s = u->first_exec; s <= u->end; s++) {
        const struct km_sinfo *in = &P->prog->info[s];
        if (in->unit != c->index || !in->executable)
            continue;
        int k = km_effective_kind(P, s);
        if (k == KS_EXIT || k == KS_CYCLE)
            loop_exit_need(P, c, s, N);
        else if (k == KS_GOTO && in->goto_form == KM_GOTO_ASSIGNED)
            assigned_needs(P, c, s, N);
        else
            jump_needs(P, c, s, N);
    }
}

/* Why a need cannot be met, or NULL. */
static const char *impossible(const struct plan *P, const struct unit_ctx *c,
                              const struct need *nd)
{
    if (nd->mode == 0)
        return "an assigned GO TO whose targets leave different measured "
               "regions";
    if (!km_editable(P, nd->src))
        return "a jump in a statement that cannot be rewritten (include file "
               "or ';')";
    if (nd->mode == M_STUB && !km_editable(P, nd->target))
        return "a jump to a statement that cannot be rewritten (include "
               "file or ';')";
    for (int k = 0; k < nd->nenter; k++)
        if (c->rg[nd->enter[k]].rk == RG_LOOP)
            return "a jump into a DO loop";
    return NULL;
}

void km_check_jumps(struct plan *P, struct unit_ctx *c)
{
    bool changed = true;
    while (changed) {
        changed = false;
        struct needs N = {0};
        collect_needs(P, c, &N);
        for (int k = 0; k < N.n && !changed; k++) {
            const char *why = impossible(P, c, &N.v[k]);
            if (why)
                changed = demote(P, c, &N.v[k], why);
        }
        free_needs(&N);
    }
}

/* --- code -------------------------------------------------------------------- */

static void balance_code(const struct plan *P, const struct unit_ctx *c,
                         const struct need *nd, struct code *out, int label)
{
    if (nd->close >= 0) {
        km_code_add(out, label, 0, km_fmt("CALL %sOUT(%s(%d))", P->set->prefix,
                                          c->h, c->rg[nd->close].handle));
        label = 0;
    }
    for (int k = 0; k < nd->nenter; k++) {
        km_code_add(out, label, 0, km_fmt("CALL %sIN(%s(%d))", P->set->prefix,
                                          c->h, c->rg[nd->enter[k]].handle));
        label = 0;
    }
}

/* The stub at nd's target for its C and E: found, or made. */
static int stub_for(struct plan *P, const struct unit_ctx *c,
                    const struct need *nd)
{
    struct sedit *e = km_sedit(P, nd->target);
    int key_enter = nd->nenter ? nd->enter[0] : -1;
    for (int k = 0; k < e->nstubs; k++)
        if (e->stubs[k].key_close == nd->close &&
            e->stubs[k].key_enter == key_enter)
            return e->stubs[k].label;
    if (P->prog->info[nd->target].kind == KS_ENDIF && !e->stubs_after) {
        e->stubs_after = true;
        e->after_label = km_fresh_label(P);
    }
    KM_GROW(e->stubs, e->stubcap, e->nstubs + 1);
    struct stub *st = &e->stubs[e->nstubs++];
    memset(st, 0, sizeof *st);
    st->label = km_fresh_label(P);
    st->key_close = nd->close;
    st->key_enter = key_enter;
    balance_code(P, c, nd, &st->code, st->label);
    return st->label;
}

void km_place_jumps(struct plan *P, struct unit_ctx *c)
{
    struct needs N = {0};
    collect_needs(P, c, &N);
    for (int k = 0; k < N.n; k++) {
        const struct need *nd = &N.v[k];
        if (nd->mode == M_MAIN) {
            balance_code(P, c, nd, &km_sedit(P, nd->src)->main, 0);
        } else if (nd->mode == M_ACTION) {
            balance_code(P, c, nd, &km_sedit(P, nd->src)->act_pre, 0);
        } else if (nd->mode == M_STUB) {
            int l = stub_for(P, c, nd);
            if (!l) {
                km_fail(P, nd->src, "no free statement label left");
                continue;
            }
            km_add_relabel(P, nd->src, nd->tok, l);
        }
    }
    free_needs(&N);
}

/* --- DO terminals ---------------------------------------------------------------- */

static int do_label_tok(const struct plan *P, int d)
{
    for (int r = P->ref_first[d]; r >= 0; r = P->ref_next[r])
        if (P->prog->refs[r].kind == KM_REF_DO)
            return P->prog->refs[r].tok;
    return -1;
}

static bool wrapped(const struct sedit *e)
{
    return !e->action && (e->act_pre.n > 0 || e->act_post.n > 0);
}

static void new_terminals(struct plan *P, struct unit_ctx *c, int T)
{
    int x = T - c->u->first;
    int nend = c->nend[x];
    km_sedit_slots(P, T, nend + 1);
    struct sedit *e = P->ed[T];
    int prev = 0;
    for (int m = 1; m <= nend; m++) {
        bool need = m == 1 ? (e->main.n > 0 && P->src->stmts[T].label) ||
                                 e->post[0].n > 0 || wrapped(e)
                           : e->post[m - 1].n > 0;
        int lab = need ? km_fresh_label(P) : prev;
        if (need && !lab) {
            km_fail(P, T, "no free statement label left");
            return;
        }
        e->term[m] = lab;
        prev = lab;
        if (!lab)
            continue;
        int d = c->ending[x][m - 1];
        int tok = do_label_tok(P, d);
        if (tok < 0 || !km_editable(P, d)) {
            km_fail(P, d, "this DO statement needs a new terminal label but "
                    "cannot be rewritten");
            return;
        }
        km_add_relabel(P, d, tok, lab);
    }
}

void km_place_terminals(struct plan *P, struct unit_ctx *c)
{
    const struct km_unit *u = c->u;
    for (int T = u->first; T <= u->end; T++) {
        int x = T - u->first;
        if (P->prog->info[T].unit != c->index || c->nend[x] == 0 ||
            P->prog->info[T].kind == KS_ENDDO || !P->ed[T])
            continue;
        if (P->src->stmts[T].file != 0) {
            km_fail(P, T, "a DO terminal in an include file cannot take the "
                    "code measurement needs after it");
            continue;
        }
        new_terminals(P, c, T);
    }
}
