/*
 * plan.c — helpers every part of the rewriter uses: inserted code, the
 * per-statement edits, labels, diagnostics and statement text.
 *
 * Must never write output text: that is the copy pass's (copy.c).
 */
#include "rewriter/plan.h"

#include <ctype.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "rewriter/emit.h"

char *km_fmt(const char *f, ...)
{
    struct km_buf b = {0};
    va_list ap;
    va_start(ap, f);
    km_buf_vprintf(&b, f, ap);
    va_end(ap);
    km_buf_cstr(&b);
    return b.data;
}

void km_code_add(struct code *c, int label, int indent, char *text)
{
    KM_GROW(c->v, c->cap, c->n + 1);
    c->v[c->n] = (struct ins){ .label = label, .indent = indent,
                               .text = text };
    c->n++;
}

void km_code_prepend(struct code *c, int label, int indent, char *text)
{
    KM_GROW(c->v, c->cap, c->n + 1);
    memmove(c->v + 1, c->v, sizeof *c->v * (size_t)c->n);
    c->v[0] = (struct ins){ .label = label, .indent = indent, .text = text };
    c->n++;
}

void km_code_free(struct code *c)
{
    for (int k = 0; k < c->n; k++)
        free(c->v[k].text);
    free(c->v);
    memset(c, 0, sizeof *c);
}

struct sedit *km_sedit(struct plan *P, int stmt)
{
    if (!P->ed[stmt]) {
        struct sedit *e = km_xcalloc(1, sizeof *e);
        e->main_label = -1;
        P->ed[stmt] = e;
        km_sedit_slots(P, stmt, 1);
    }
    return P->ed[stmt];
}

bool km_is_logical_if(const struct plan *P, int i)
{
    return P->prog->info[i].kind == KS_IF_LOGICAL;
}

struct code *km_code_before(struct plan *P, int i)
{
    struct sedit *e = km_sedit(P, i);
    return km_is_logical_if(P, i) ? &e->act_pre : &e->main;
}

struct code *km_code_after(struct plan *P, int i)
{
    struct sedit *e = km_sedit(P, i);
    return km_is_logical_if(P, i) ? &e->act_post : &e->post[0];
}

/* Make room for post[0 .. nslots-1]. */
void km_sedit_slots(struct plan *P, int stmt, int nslots)
{
    struct sedit *e = km_sedit(P, stmt);
    if (e->nslots >= nslots)
        return;
    e->post = km_xrealloc(e->post, sizeof *e->post * (size_t)nslots);
    e->term = km_xrealloc(e->term, sizeof *e->term * (size_t)nslots);
    for (int m = e->nslots; m < nslots; m++) {
        memset(&e->post[m], 0, sizeof e->post[m]);
        e->term[m] = 0;
    }
    e->nslots = nslots;
}

void km_add_relabel(struct plan *P, int stmt, int tok, int label)
{
    struct sedit *e = km_sedit(P, stmt);
    for (int k = 0; k < e->nrl; k++)
        if (e->rl[k].tok == tok) {
            e->rl[k].label = label;
            return;
        }
    KM_GROW(e->rl, e->rlcap, e->nrl + 1);
    e->rl[e->nrl].tok = tok;
    e->rl[e->nrl].label = label;
    e->nrl++;
}

static void mark_used(struct plan *P, int l)
{
    P->used[l / 8] |= (unsigned char)(1u << (l % 8));
}

/* A label not used anywhere in the current unit. */
int km_fresh_label(struct plan *P)
{
    while (P->next_label > 0 && (P->used[P->next_label / 8] &
                                 (1u << (P->next_label % 8))))
        P->next_label--;
    if (P->next_label <= 0)
        return 0;
    int l = P->next_label--;
    mark_used(P, l);
    return l;
}

void km_collect_labels(struct plan *P, int unit)
{
    memset(P->used, 0, 100000 / 8 + 1);
    for (int k = 0; k < P->nlset; k++)
        P->lmap[P->lset[k]] = -1;
    P->nlset = 0;
    const struct km_program *prog = P->prog;
    const struct km_unit *u = &prog->units[unit];
    for (int i = u->first; i <= u->end; i++) {
        int l = P->src->stmts[i].label;
        if (prog->info[i].unit != unit || !l)
            continue;
        mark_used(P, l);
        if (P->lmap[l] < 0) {
            P->lmap[l] = i;
            KM_GROW(P->lset, P->lsetcap, P->nlset + 1);
            P->lset[P->nlset++] = l;
        }
    }
    for (int r = 0; r < prog->nrefs; r++)
        if (prog->info[prog->refs[r].stmt].unit == unit)
            mark_used(P, prog->refs[r].label);
    P->next_label = 99999;
}

static void report(struct plan *P, int stmt, bool error, const char *fmt,
                   va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const struct km_stmt *s = &P->src->stmts[stmt];
    int line, col;
    km_raw_position(P->src, s, s->raw, &line, &col);
    if (error) {
        km_error(P->diag, km_stmt_path(P->src, s), line, col, "%s", msg);
        P->ok = false;
    } else {
        km_warning(P->diag, km_stmt_path(P->src, s), line, col, "%s", msg);
    }
}

void km_fail(struct plan *P, int stmt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(P, stmt, true, fmt, ap);
    va_end(ap);
}

void km_warn(struct plan *P, int stmt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(P, stmt, false, fmt, ap);
    va_end(ap);
}

bool km_editable(const struct plan *P, int i)
{
    const struct km_stmt *s = &P->src->stmts[i];
    return s->file == 0 && !(s->flags & KM_SF_CONDITIONAL);
}

int km_effective_kind(const struct plan *P, int i)
{
    const struct km_sinfo *in = &P->prog->info[i];
    return in->kind == KS_IF_LOGICAL ? in->action : in->kind;
}

bool km_is_io_kind(int kind)
{
    switch (kind) {
    case KS_READ: case KS_WRITE: case KS_PRINT: case KS_OPEN: case KS_CLOSE:
    case KS_INQUIRE: case KS_REWIND: case KS_BACKSPACE: case KS_ENDFILE:
    case KS_FLUSH: case KS_WAIT:
        return true;
    default:
        return false;
    }
}

char *km_stmt_text(const struct plan *P, int i, int from, bool first_line)
{
    const struct km_source *src = P->src;
    const struct km_stmt *s = &src->stmts[i];
    int a = from < 0 ? s->raw : km_tok_to_raw(src, i, from);
    int b = s->raw + s->raw_len;
    if (first_line && s->nseg > 0) {
        int line = src->segs[s->seg].line;
        for (int g = 0; g < s->nseg; g++) {
            const struct km_seg *sg = &src->segs[s->seg + g];
            if (sg->line == line)
                b = sg->raw + sg->len;
        }
        if (b < a)
            b = a;
    }
    struct km_buf out = {0};
    char quote = 0;
    const char *raw = src->raw.data;
    const char *base = raw + s->raw;
    for (int k = a; k < b; k++) {
        char c = raw[k];
        int holl = !quote && (c == 'H' || c == 'h') ?
                   km_hollerith_count(base, k - s->raw) : 0;
        if (holl > 0) {     /* its blanks are part of it */
            int n = k + holl < b ? holl : b - k - 1;
            km_buf_add(&out, raw + k, (size_t)n + 1);
            k += n;
            continue;
        }
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == ' ' || c == '\t') {
            if (out.len == 0 || out.data[out.len - 1] == ' ')
                continue;
            c = ' ';
        }
        km_buf_addc(&out, c);
    }
    while (out.len > 0 && out.data[out.len - 1] == ' ')
        out.len--;
    km_buf_cstr(&out);
    return out.data;
}

int km_label_stmt(const struct plan *P, int label)
{
    return label > 0 && label < 100000 ? P->lmap[label] : -1;
}

void km_actuals_free(struct km_actuals *a)
{
    for (int k = 0; k < a->n; k++) {
        free(a->kw[k]);
        free(a->text[k]);
    }
    a->n = 0;
}

bool km_read_actuals(const char *p, struct km_actuals *a, const char **end)
{
    a->n = 0;
    while (*p && *p != '(' && *p != '\n')
        p++;
    if (*p != '(')
        return false;
    p++;
    for (;;) {
        const char *s = p;
        int depth = 0;
        char quote = 0;
        for (; *p; p++) {
            if (quote) {
                quote = *p == quote ? 0 : quote;
            } else if (*p == '\'' || *p == '"') {
                quote = *p;
            } else if (*p == '(' || *p == '[') {
                depth++;
            } else if ((*p == ')' || *p == ']') && depth > 0) {
                depth--;
            } else if ((*p == ',' || *p == ')') && depth == 0) {
                break;
            } else if (*p == '\n') {
                km_actuals_free(a);
                return false;
            }
        }
        if (!*p || a->n == KM_MAXARGS) {
            km_actuals_free(a);
            return false;
        }
        const char *eq = s;
        while (eq < p && (isalnum((unsigned char)*eq) || *eq == '_'))
            eq++;
        bool keyword = eq > s && eq < p && *eq == '=' && eq[1] != '=';
        a->kw[a->n] = keyword ? km_fmt("%.*s", (int)(eq - s), s) : NULL;
        a->text[a->n] = keyword ? km_fmt("%.*s", (int)(p - eq - 1), eq + 1)
                                : km_fmt("%.*s", (int)(p - s), s);
        a->n++;
        if (*p == ')') {
            if (end)
                *end = p + 1;
            return true;
        }
        p++;
    }
}
