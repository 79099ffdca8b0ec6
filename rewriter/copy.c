/*
 * copy.c — the copy pass: the original lines out, with the plan applied.
 *
 * A line no edit touches is copied byte for byte.  An edited statement's
 * own lines are edited in place: label digits replaced (relabels), the
 * label field blanked when the label moved to inserted code, a logical
 * IF's line split where its statement begins (the IF part gets THEN, the
 * statement goes on a line of its own at the same column, so that
 * nothing of the user's text moves), or its statement replaced.  A line
 * that grows past the line length continues on a new line, broken outside
 * character and Hollerith constants.  Comment lines between a statement's
 * lines stay where they were.
 *
 * Must never change a character of the user's text other than those.
 */
#include "rewriter/plan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "lexer/directive.h"
#include "rewriter/emit.h"

/* Mask values: where a line may be broken. */
enum { BREAK_OK = 0, IN_CONSTANT = 1, NO_BREAK = 2 };

struct copier {
    struct plan *P;
    const struct km_file *f;
    struct km_emitter em;     /* inserted statements: 72 columns */
    struct km_emitter user;   /* user text written again */
    int width;                /* the source's line length (0: none) */
};

/* One physical line of an edited statement, as it will be written. */
struct eline {
    int n;                    /* physical line */
    bool stmt_line;           /* carries text of the statement */
    struct km_buf text;       /* without end of line */
    unsigned char *mask;      /* per byte of text */
    int field0, field1;       /* the statement's text: [field0, field1) */
    int fc;                   /* column where the statement field starts */
    bool changed;
    bool open_constant;       /* a constant continues on the next line */
};

static void line_bounds(const struct km_file *f, int n, int *start, int *len)
{
    int a = f->line_start[n - 1];
    int b = n < f->nlines ? f->line_start[n] : (int)f->size;
    while (b > a && (f->text[b - 1] == '\n' || f->text[b - 1] == '\r'))
        b--;
    *start = a;
    *len = b - a;
}

static void copy_line(struct copier *C, int n)
{
    const struct km_file *f = C->f;
    int start = f->line_start[n - 1];
    int end = n < f->nlines ? f->line_start[n] : (int)f->size;
    km_buf_add(C->em.out, f->text + start, (size_t)(end - start));
    if (end == (int)f->size && (end == start || f->text[end - 1] != '\n'))
        km_buf_adds(C->em.out, C->em.eol);
}

static void emit_code(struct copier *C, const struct code *k, int indent,
                      int first_label)
{
    for (int j = 0; j < k->n; j++) {
        int label = j == 0 && first_label > 0 ? first_label : k->v[j].label;
        km_emit_stmt(&C->em, label, indent + k->v[j].indent, k->v[j].text);
    }
}

static void emit_one(struct copier *C, int label, int indent, char *text)
{
    km_emit_stmt(&C->em, label, indent, text);
    free(text);
}

/* The column where a statement's text begins, for indenting inserts. */
static int indent_of(const struct plan *P, int i)
{
    const struct km_stmt *s = &P->src->stmts[P->src->stmts[i].anchor];
    if (s->nseg == 0)
        return 7;
    const struct km_seg *g = &P->src->segs[s->seg];
    const char *raw = P->src->raw.data + g->raw;
    int lead = 0;
    while (lead < g->len && (raw[lead] == ' ' || raw[lead] == '\t'))
        lead++;
    int col = 7 + (g->col + lead - g->field_col);
    return col > 40 ? 7 : col;
}

/* --- constants ---------------------------------------------------------------- */

/* Per byte of statement i's raw text: inside a character or Hollerith
 * constant (after its opening delimiter or count). */
static unsigned char *constant_mask(const struct plan *P, int i)
{
    const struct km_stmt *s = &P->src->stmts[i];
    const char *raw = P->src->raw.data + s->raw;
    unsigned char *m = km_xcalloc((size_t)s->raw_len + 1, 1);
    char quote = 0;
    int holl = 0;
    for (int k = 0; k < s->raw_len; k++) {
        char c = raw[k];
        if (holl > 0) {
            m[k] = IN_CONSTANT;
            holl--;
        } else if (quote) {
            m[k] = IN_CONSTANT;
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == 'H' || c == 'h') {
            holl = km_hollerith_count(raw, k);
        }
    }
    return m;
}

/* --- building the lines -------------------------------------------------------- */

static void load_line(struct copier *C, int i, const unsigned char *cmask,
                      struct eline *L)
{
    const struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    int start, len;
    line_bounds(C->f, L->n, &start, &len);
    km_buf_add(&L->text, C->f->text + start, (size_t)len);
    km_buf_cstr(&L->text);
    L->mask = km_xcalloc((size_t)len + 1, 1);
    L->field0 = len;
    L->field1 = 0;
    L->fc = 7;
    L->stmt_line = false;
    for (int g = 0; g < s->nseg; g++) {
        const struct km_seg *sg = &P->src->segs[s->seg + g];
        if (sg->line != L->n)
            continue;
        L->stmt_line = true;
        L->fc = sg->field_col;
        int b0 = sg->col - 1;
        for (int j = 0; j < sg->len; j++) {
            int b = b0 + j;
            if (b >= len) {
                /* blanks the compiler pads a continued constant with */
                L->open_constant = true;
                break;
            }
            L->mask[b] = cmask[sg->raw - s->raw + j];
        }
        if (b0 < L->field0)
            L->field0 = b0;
        if (b0 + sg->len > L->field1)
            L->field1 = b0 + sg->len > len ? len : b0 + sg->len;
    }
    if (L->field1 < L->field0)
        L->field1 = L->field0;
}

/* Replace bytes [a, b) of the line by `with`, masked `m`. */
static void splice(struct eline *L, int a, int b, const char *with,
                   unsigned char m)
{
    int n = (int)strlen(with);
    int len = (int)L->text.len;
    struct km_buf t = {0};
    km_buf_add(&t, L->text.data, (size_t)a);
    km_buf_adds(&t, with);
    km_buf_add(&t, L->text.data + b, (size_t)(len - b));
    km_buf_cstr(&t);
    unsigned char *mask = km_xcalloc((size_t)(t.len + 1), 1);
    memcpy(mask, L->mask, (size_t)a);
    for (int k = 0; k < n; k++)
        mask[a + k] = k == 0 ? BREAK_OK : m;
    memcpy(mask + a + n, L->mask + b, (size_t)(len - b));
    km_buf_free(&L->text);
    free(L->mask);
    L->text = t;
    L->mask = mask;
    int delta = n - (b - a);
    if (L->field1 >= b)
        L->field1 += delta;
    L->changed = true;
}

static int digits_at(const char *p)
{
    int n = 0;
    while (isdigit((unsigned char)p[n]))
        n++;
    return n;
}

/* Apply statement i's relabels to its lines. */
static bool apply_relabels(struct copier *C, int i, const struct sedit *e,
                           struct eline *lines, int nlines)
{
    const struct plan *P = C->P;
    const struct km_source *src = P->src;
    const struct km_stmt *s = &src->stmts[i];
    /* right to left, so earlier columns stay where they are */
    int *order = km_xmalloc(sizeof(int) * (size_t)(e->nrl + 1));
    int *line = km_xmalloc(sizeof(int) * (size_t)(e->nrl + 1));
    int *c0 = km_xmalloc(sizeof(int) * (size_t)(e->nrl + 1));
    int *c1 = km_xmalloc(sizeof(int) * (size_t)(e->nrl + 1));
    bool ok = true;
    for (int k = 0; k < e->nrl; k++) {
        int nd = digits_at(src->tok.data + e->rl[k].tok);
        int r0 = km_tok_to_raw(src, i, e->rl[k].tok);
        int r1 = km_tok_to_raw(src, i, e->rl[k].tok + (nd > 0 ? nd - 1 : 0));
        int l1, x1;
        km_raw_position(src, s, r0, &line[k], &c0[k]);
        km_raw_position(src, s, r1, &l1, &x1);
        c1[k] = x1;
        if (l1 != line[k])
            ok = false;
        order[k] = k;
    }
    for (int a = 1; a < e->nrl; a++)
        for (int b = a; b > 0; b--) {
            int p = order[b - 1], q = order[b];
            if (line[p] < line[q] || (line[p] == line[q] && c0[p] < c0[q])) {
                order[b - 1] = q;
                order[b] = p;
            }
        }
    for (int k = 0; k < e->nrl && ok; k++) {
        int r = order[k];
        struct eline *L = &lines[line[r] - s->first_line];
        char digits[16];
        snprintf(digits, sizeof digits, "%d", e->rl[r].label);
        splice(L, c0[r] - 1, c1[r], digits, NO_BREAK);
        if (L->open_constant)
            ok = false;
    }
    (void)nlines;
    free(order);
    free(line);
    free(c0);
    free(c1);
    return ok;
}

/* --- writing the lines ------------------------------------------------------------ */

/* The effective column of byte b of a line whose field starts at fc. */
static int eff(const struct eline *L, int b)
{
    return b + 8 - L->fc;
}

/* The last break point in (lo, hi] at which bytes before it end at or
 * before `width`, or -1. */
static int break_at(const struct eline *L, int lo, int hi, int width)
{
    for (int b = hi; b > lo; b--)
        if (eff(L, b - 1) <= width && L->mask[b] == BREAK_OK)
            return b;
    return -1;
}

static void write_line(struct copier *C, const struct eline *L)
{
    struct km_buf *out = C->em.out;
    if (!L->changed) {
        km_buf_add(out, L->text.data, L->text.len);
        km_buf_adds(out, C->em.eol);
        return;
    }
    /* What followed the statement's text: a ! comment is kept, text past
     * the line length (sequence numbers) is not, as it no longer lines up. */
    const char *rest = L->text.data + L->field1;
    const char *r = rest;
    while (*r == ' ' || *r == '\t')
        r++;
    bool keep_rest = *r == '!';
    int width = C->width;
    int from = 0;
    int end = L->field1;
    struct eline piece = *L;
    bool first = true;
    while (true) {
        int room_end = end;
        if (width > 0 && eff(&piece, end - 1) > width) {
            int b = break_at(&piece, first ? piece.field0 : from, end, width);
            if (b < 0)      /* one constant longer than a line: cut */
                b = width - 7 + piece.fc;
            room_end = b;
        }
        if (first)
            km_buf_add(out, L->text.data, (size_t)room_end);
        else
            km_buf_add(out, L->text.data + from, (size_t)(room_end - from));
        if (room_end == end) {
            if (keep_rest)
                km_buf_adds(out, rest);
            km_buf_adds(out, C->em.eol);
            return;
        }
        km_buf_adds(out, C->em.eol);
        km_buf_adds(out, "     &");
        /* the rest continues at column 7: eff(from) == 7 */
        from = room_end;
        piece.fc = from + 1;
        first = false;
    }
}

/* Byte where the logical IF's statement starts, on its line. */
static void action_start(const struct plan *P, int i, int *line, int *byte)
{
    const struct km_stmt *s = &P->src->stmts[i];
    int raw = km_tok_to_raw(P->src, i, P->prog->info[i].action_tok);
    int col;
    km_raw_position(P->src, s, raw, line, &col);
    *byte = col - 1;
}

/* The head of a split line: up to byte `at`, then `word`. */
static void head_line(struct eline *L, int at, const char *word)
{
    int len = (int)L->text.len;
    splice(L, at, len, word, NO_BREAK);
    L->field1 = at + (int)strlen(word);
}

/* The statement part of a split line, alone at the same column. */
static void tail_line(const struct eline *L, int at, struct eline *T)
{
    memset(T, 0, sizeof *T);
    T->n = L->n;
    T->stmt_line = true;
    int col = eff(L, at);
    for (int k = 0; k < col - 1; k++)
        km_buf_addc(&T->text, ' ');
    int pad = (int)T->text.len;
    km_buf_add(&T->text, L->text.data + at, L->text.len - (size_t)at);
    km_buf_cstr(&T->text);
    T->mask = km_xcalloc(T->text.len + 1, 1);
    memcpy(T->mask + pad, L->mask + at, L->text.len - (size_t)at);
    T->fc = 7;
    T->field0 = pad;
    T->field1 = pad + (L->field1 - at);
    T->changed = true;
    T->open_constant = L->open_constant;
}

static void blank_label(struct eline *L)
{
    for (int k = 0; k < 5 && k < (int)L->text.len; k++) {
        if (L->text.data[k] == '\t')
            break;
        if (isdigit((unsigned char)L->text.data[k]))
            L->text.data[k] = ' ';
    }
}

static void free_line(struct eline *L)
{
    km_buf_free(&L->text);
    free(L->mask);
}

static void comment_out(struct copier *C, const struct eline *L)
{
    km_buf_addc(C->em.out, 'C');
    km_buf_add(C->em.out, L->text.data, L->text.len);
    km_buf_adds(C->em.out, C->em.eol);
}

/* Statement i's own lines, edited. */
static void emit_lines(struct copier *C, int i, const struct sedit *e,
                       bool blank)
{
    struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    int nl = s->last_line - s->first_line + 1;
    struct eline *lines = km_xcalloc((size_t)nl, sizeof *lines);
    unsigned char *cmask = constant_mask(P, i);
    for (int k = 0; k < nl; k++) {
        lines[k].n = s->first_line + k;
        load_line(C, i, cmask, &lines[k]);
    }
    free(cmask);
    if (e->nrl > 0 && !apply_relabels(C, i, e, lines, nl))
        km_fail(P, i, "a label in this statement is split across lines, or "
                "its line ends inside a continued character constant: "
                "the jump it makes cannot be redirected");
    if (blank)
        blank_label(&lines[0]);
    bool wrap = !e->action && (e->act_pre.n > 0 || e->act_post.n > 0);
    int aline = 0, abyte = 0;
    if (wrap || e->action)
        action_start(P, i, &aline, &abyte);
    int indent = indent_of(P, i);
    bool dropping = false;
    for (int k = 0; k < nl; k++) {
        struct eline *L = &lines[k];
        if (!L->stmt_line) {
            write_line(C, L);
            continue;
        }
        if (e->comment_out) {
            comment_out(C, L);
            continue;
        }
        if (dropping)
            continue;
        if ((wrap || e->action) && L->n == aline) {
            struct eline T;
            tail_line(L, abyte, &T);
            head_line(L, abyte, e->action ? e->action : "THEN");
            write_line(C, L);
            if (e->action) {
                dropping = true;
            } else {
                emit_code(C, &e->act_pre, indent + 2, 0);
                write_line(C, &T);
            }
            free_line(&T);
            continue;
        }
        write_line(C, L);
    }
    if (wrap) {
        emit_code(C, &e->act_post, indent + 2, 0);
        emit_one(C, 0, indent, km_fmt("END IF"));
    }
    for (int k = 0; k < nl; k++)
        free_line(&lines[k]);
    free(lines);
}

/* The stubs, reached only by jumps, each going on to `lead`. */
static void emit_stubs(struct copier *C, const struct sedit *e, int lead,
                       int indent)
{
    emit_one(C, 0, indent, km_fmt("GOTO %d", lead));
    for (int k = 0; k < e->nstubs; k++) {
        emit_code(C, &e->stubs[k].code, indent, 0);
        if (k + 1 < e->nstubs && !e->stubs[k].ends)
            emit_one(C, 0, indent, km_fmt("GOTO %d", lead));
    }
}

/* --- directives ---------------------------------------------------------- */

/* The kind of each line from `from` to `to` (directive continuations take
 * the kind of the directive they continue; other lines are NONE). */
static void directive_kinds(const struct km_file *f, int from, int to,
                            enum km_directive *kind)
{
    enum km_directive open = KM_DIR_NONE;
    bool continues = false;
    for (int n = from; n <= to; n++) {
        int start, len;
        line_bounds(f, n, &start, &len);
        const char *p = f->text + start;
        enum km_directive k = km_directive_line(p, len, continues);
        if (k == KM_DIR_CONTINUATION)
            k = open;
        else if (k != KM_DIR_NONE)
            open = k;
        continues = k != KM_DIR_NONE && km_directive_continues(p, len);
        kind[n - from] = k;
    }
}

/* The first line of the directives right above statement i, with only
 * comments between (0 if none): of loop directives (!$omp do, !dir$ ivdep
 * ...) above a DO, before which the loop's KM_IN goes, or (`any`) of every
 * directive, before which the routine's declarations and entry code go:
 * never inside !$omp parallel. */
static int directives_above(const struct copier *C, int i, bool any)
{
    const struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    int k = km_effective_kind(P, i);
    if ((!any && k != KS_DO && k != KS_DO_WHILE) || i == 0)
        return 0;
    const struct km_stmt *b = &P->src->stmts[P->src->stmts[i - 1].anchor];
    int from = b->last_line + 1, to = s->first_line - 1;
    if (to < from)
        return 0;
    enum km_directive *kind = km_xmalloc(sizeof *kind * (size_t)(to - from + 1));
    directive_kinds(C->f, from, to, kind);
    int lead = 0;
    for (int n = to; n >= from; n--) {
        enum km_directive d = kind[n - from];
        if (d == KM_DIR_LOOP ||
            (any && d != KM_DIR_NONE && d != KM_DIR_DECLARATIVE))
            lead = n;
        else if (d != KM_DIR_NONE)
            break;
    }
    free(kind);
    return lead;
}

/* The last line of the end directives (!$omp end do ...) right below
 * statement i, with only comments between; 0 if none. */
static int loop_end_directives_below(const struct copier *C, int i)
{
    const struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    int from = s->last_line + 1, to = from;
    while (to <= C->f->nlines && (i + 1 >= P->src->nstmts ||
                                  P->src->stmts[i + 1].file != 0 ||
                                  to < P->src->stmts[i + 1].first_line))
        to++;
    to--;
    if (to < from)
        return 0;
    enum km_directive *kind = km_xmalloc(sizeof *kind * (size_t)(to - from + 1));
    directive_kinds(C->f, from, to, kind);
    int last = 0;
    for (int n = from; n <= to; n++) {
        enum km_directive d = kind[n - from];
        if (d == KM_DIR_END_LOOP)
            last = n;
        else if (d != KM_DIR_NONE)
            break;
    }
    free(kind);
    return last;
}

/* Statement i's declarations and routine entry code. */
static void emit_entry(struct copier *C, int i)
{
    emit_code(C, &C->P->ed[i]->entry, indent_of(C->P, i), 0);
}

/* Statement i's code that runs just before it: stubs, KM_IN.  Returns
 * whether the statement's label moved to that code. */
static bool emit_before(struct copier *C, int i)
{
    struct plan *P = C->P;
    const struct sedit *e = P->ed[i];
    const struct km_stmt *s = &P->src->stmts[i];
    int indent = indent_of(P, i);
    emit_code(C, &e->open, indent, 0);
    int lead = e->main_label >= 0 ? e->main_label : s->label;
    if (e->nstubs > 0 && !e->stubs_after)
        emit_stubs(C, e, lead, indent);
    bool moved = false;
    if (e->main.n > 0) {
        emit_code(C, &e->main, indent, lead);
        moved = lead == s->label && s->label;
    } else if (lead > 0 && lead != s->label) {
        emit_one(C, lead, indent, km_fmt("CONTINUE"));
    }
    return moved;
}

/* Statement i and what goes after it.  Returns the last line written:
 * its own, or that of the loop end directives that follow it. */
static int emit_rest(struct copier *C, int i, bool moved)
{
    struct plan *P = C->P;
    const struct sedit *e = P->ed[i];
    const struct km_stmt *s = &P->src->stmts[i];
    int indent = indent_of(P, i);
    int last = s->last_line;
    emit_lines(C, i, e, moved);
    if (e->stubs_after) {
        emit_stubs(C, e, e->after_label, indent);
        emit_one(C, e->after_label, indent, km_fmt("CONTINUE"));
    }
    emit_code(C, &e->post[0], indent, 0);
    int end_dir = e->nslots > 1 ? loop_end_directives_below(C, i) : 0;
    for (int m = 1; m < e->nslots; m++) {
        if (e->term[m] && e->term[m] != e->term[m - 1])
            emit_one(C, e->term[m], indent, km_fmt("CONTINUE"));
        if (m == 1 && end_dir) {
            /* !$omp end do directly after its loop, the loop's KM_OUT
             * after it */
            for (int n = last + 1; n <= end_dir; n++)
                copy_line(C, n);
            last = end_dir;
        }
        emit_code(C, &e->post[m], indent, 0);
    }
    return last;
}

void km_copy_file(struct plan *P, struct km_buf *out)
{
    struct copier C = {0};
    C.P = P;
    C.f = &P->src->files[0];
    const char *eol = "\n";
    const char *nl = memchr(C.f->text, '\n', C.f->size);
    if (nl && nl > C.f->text && nl[-1] == '\r')
        eol = "\r\n";
    C.em.out = out;
    C.em.eol = eol;
    C.em.width = 72;
    C.user = C.em;
    C.user.width = P->opts->line_length;
    C.width = P->opts->line_length;
    const struct km_source *src = P->src;
    const struct km_file *f = C.f;
    int *starts = km_xmalloc(sizeof(int) * (size_t)(f->nlines + 2));
    for (int n = 0; n <= f->nlines + 1; n++)
        starts[n] = -1;
    for (int i = 0; i < src->nstmts; i++)
        if (src->stmts[i].file == 0 && starts[src->stmts[i].first_line] < 0)
            starts[src->stmts[i].first_line] = i;
    /* Directives above an edited statement: its entry code goes before
     * all of them, a DO's KM_IN before its loop directives. */
    int *lead = km_xcalloc((size_t)f->nlines + 2, sizeof *lead);
    int *lead_entry = km_xcalloc((size_t)f->nlines + 2, sizeof *lead_entry);
    bool *entry_moved = km_xcalloc((size_t)src->nstmts + 1,
                                   sizeof *entry_moved);
    for (int i = 0; i < src->nstmts; i++)
        if (src->stmts[i].file == 0 && P->ed[i]) {
            int n = directives_above(&C, i, false);
            if (n > 0)
                lead[n] = i + 1;
            n = P->ed[i]->entry.n > 0 ? directives_above(&C, i, true) : 0;
            if (n > 0) {
                lead_entry[n] = i + 1;
                entry_moved[i] = true;
            }
        }
    for (int n = 1; n <= f->nlines; n++) {
        if (lead_entry[n])
            emit_entry(&C, lead_entry[n] - 1);
        if (lead[n]) {
            /* its entry code, if any, went out at lead_entry, at or
             * above this line */
            int i = lead[n] - 1;
            bool moved = emit_before(&C, i);
            for (; n < src->stmts[i].first_line; n++)
                copy_line(&C, n);
            n = emit_rest(&C, i, moved);
            continue;
        }
        int i = starts[n];
        if (i < 0 || !P->ed[i]) {
            copy_line(&C, n);
            continue;
        }
        if (!entry_moved[i])
            emit_entry(&C, i);
        n = emit_rest(&C, i, emit_before(&C, i));
    }
    free(entry_moved);
    free(lead_entry);
    free(lead);
    free(starts);
}
