/*
 * copy.c — the copy pass: the original lines out, with the plan applied.
 *
 * A line no edit touches is copied byte for byte.  An edited statement's
 * own lines are edited in place: label digits replaced (relabels), the
 * label blanked when it moved to inserted code, a logical IF's line split
 * where its statement begins (the IF part gets THEN, the statement goes on
 * a line of its own at the same column, so that nothing of the user's
 * text moves), or its statement replaced.  A line that grows past the
 * line length continues on a new line, broken outside character and
 * Hollerith constants.  Comment lines between a statement's lines stay
 * where they were.  Statements sharing lines through `;` are written on
 * lines of their own when one of them is edited: each keeps its columns,
 * the others' text blanked or cut away.  Columns and continuation marks come from the source form's
 * layout (emit.h); nothing here tests the form.
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
    const struct km_layout *lay;
    struct km_emitter em;     /* inserted statements: 72 or 132 columns */
    int width;                /* the source's line length (0: none) */
    bool isolate;             /* the statement being written shares lines
                                 (';') and gets lines of its own: */
    int iso_first, iso_last;  /* ... these */
    struct sedit none;        /* the edits of a statement that has none */
    bool *entry_done;         /* per statement: its entry code went out */
    bool *before_done;        /* its code before it went out, */
    bool *moved;              /* ... taking its label */
    struct code none_post;
    /* line markers (opts->line_markers): the compiler numbers the line
     * that begins at byte mark_pos of the output mark_line, in file
     * mark_name */
    size_t mark_pos;
    int mark_line;
    const char *mark_name;
    int pin_line;             /* inserted code is numbered this line */
    const char *pin_name;
    int *next_statement;      /* per line: the statement of file 0 that
                                 begins after it, or -1 */
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
    int shift;                /* bytes cut from the line before the
                                 statement (isolated: others' text) */
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

/* The line the compiler gives the next line of output. */
static int compiler_line(struct copier *C)
{
    const struct km_buf *out = C->em.out;
    for (size_t k = C->mark_pos; k < out->len; k++)
        if (out->data[k] == '\n')
            C->mark_line++;
    C->mark_pos = out->len;
    return C->mark_line;
}

static void add_marker(struct km_buf *out, int line, const char *name,
                       const char *eol)
{
    km_buf_printf(out, "# %d \"", line);
    for (const char *p = name; *p; p++) {
        if (*p == '"' || *p == '\\')
            km_buf_addc(out, '\\');
        km_buf_addc(out, *p);
    }
    km_buf_addc(out, '"');
    km_buf_adds(out, eol);
}

/* The next line out is numbered `line` of `name`. */
static void mark_user(struct copier *C, int line, const char *name)
{
    if (compiler_line(C) == line && C->mark_name &&
        strcmp(C->mark_name, name) == 0)
        return;
    add_marker(C->em.out, line, name, C->em.eol);
    C->mark_pos = C->em.out->len;
    C->mark_line = line;
    C->mark_name = name;
}

/* What goes out next belongs to physical line n: if the compiler would
 * number it otherwise, a line marker will say which line it is.  Inserted
 * code that follows, however many lines, is numbered n too (the pin). */
static void mark(struct copier *C, int n)
{
    const char *path = C->P->opts->line_markers;
    if (!path)
        return;
    const char *name = NULL;
    C->pin_line = km_user_line(C->P->src, 0, n, &name);
    C->pin_name = name ? name : path;
}

/* About to write a line: number it as the pin says. */
static void numbered(struct copier *C)
{
    if (C->pin_name)
        mark_user(C, C->pin_line, C->pin_name);
}

/* One inserted statement, every line of it numbered as the pin says (a
 * debugger's breakpoint on the user's next line must not land in it). */
static void emit_pinned(struct copier *C, int label, int indent,
                        const char *text)
{
    if (!C->P->opts->line_markers || !C->pin_name) {
        km_emit_stmt(&C->em, label, indent, text);
        return;
    }
    numbered(C);
    size_t pos = C->em.out->len;
    km_emit_stmt(&C->em, label, indent, text);
    struct km_buf *out = C->em.out;
    struct km_buf tail = {0};
    km_buf_add(&tail, out->data + pos, out->len - pos);
    out->len = pos;
    for (size_t k = 0; k < tail.len; k++) {
        km_buf_addc(out, tail.data[k]);
        if (tail.data[k] == '\n' && k + 1 < tail.len)
            add_marker(out, C->pin_line, C->pin_name, C->em.eol);
    }
    km_buf_free(&tail);
    C->mark_pos = out->len;
    C->mark_line = C->pin_line + 1;
}

static void emit_raw(struct copier *C, const char *text);
static void emit_line_code(struct copier *C, const struct code *k, int n);

/* Line n as it is; a directive that gets clauses gets them (its text,
 * comment and line end kept). */
static void copy_text(struct copier *C, int n)
{
    const struct km_file *f = C->f;
    int start = f->line_start[n - 1];
    int end = n < f->nlines ? f->line_start[n] : (int)f->size;
    int body = end;
    while (body > start && (f->text[body - 1] == '\n' ||
                            f->text[body - 1] == '\r'))
        body--;
    const struct clause_add *a = &C->P->added[n];
    if (a->how == ADD_APPEND || a->how == ADD_FREE_LINE) {
        int at = start + km_directive_text_len(f->text + start, body - start);
        if (C->lay->field_col > 1 && at - start > C->em.width)
            at = start + C->em.width;     /* columns past the last one */
        while (at > start && (f->text[at - 1] == ' ' ||
                              f->text[at - 1] == '\t'))
            at--;
        km_buf_add(C->em.out, f->text + start, (size_t)(at - start));
        km_buf_adds(C->em.out, " ");
        km_buf_adds(C->em.out, a->how == ADD_APPEND ? a->text : "&");
        km_buf_add(C->em.out, f->text + at, (size_t)(end - at));
    } else {
        km_buf_add(C->em.out, f->text + start, (size_t)(end - start));
    }
    if (end == (int)f->size && (end == start || f->text[end - 1] != '\n'))
        km_buf_adds(C->em.out, C->em.eol);
    if (a->how == ADD_FIXED_LINE || a->how == ADD_FREE_LINE) {
        char *line = km_fmt("!$omp%c %s", a->how == ADD_FIXED_LINE ? '+' : '&',
                            a->text);
        emit_raw(C, line);
        free(line);
    }
}

/* Line n of the file, with the code that goes around it (OpenMP
 * regions), or the code that replaces the directive beginning there (a
 * combined construct, split).  Returns the last line written. */
static int copy_line(struct copier *C, int n)
{
    const struct km_file *f = C->f;
    if (C->P->opts->line_markers && km_is_line_marker(f, n))
        return n;         /* the preprocessor's own: ours replace them */
    emit_line_code(C, &C->P->line_before[n], n);
    const struct line_replace *r = &C->P->replaced[n];
    if (r->last) {
        emit_line_code(C, &r->code, n);
        n = r->last;
    } else {
        mark(C, n);
        numbered(C);
        copy_text(C, n);
    }
    emit_line_code(C, &C->P->line_after[n], n);
    return n;
}

static int indent_of(const struct copier *C, int i);

/* A directive line of ours, from column 1, numbered as the pin says. */
static void emit_raw(struct copier *C, const char *text)
{
    if (C->P->opts->line_markers && C->pin_name)
        numbered(C);
    km_buf_adds(C->em.out, text);
    km_buf_adds(C->em.out, C->em.eol);
    if (C->P->opts->line_markers && C->pin_name) {
        C->mark_pos = C->em.out->len;
        C->mark_line = C->pin_line + 1;
    }
}

static void emit_code(struct copier *C, const struct code *k, int indent,
                      int first_label)
{
    for (int j = 0; j < k->n; j++) {
        int label = j == 0 && first_label > 0 ? first_label : k->v[j].label;
        if (k->v[j].raw)
            emit_raw(C, k->v[j].text);
        else
            emit_pinned(C, label, indent + k->v[j].indent, k->v[j].text);
    }
}

/* The code around directive line n (OpenMP regions), indented as the
 * statement that follows. */
static void emit_line_code(struct copier *C, const struct code *k, int n)
{
    if (k->n == 0)
        return;
    int next = C->next_statement[n];
    mark(C, n);
    emit_code(C, k, next >= 0 ? indent_of(C, next) : 0, 0);
}

static void emit_one(struct copier *C, int label, int indent, char *text)
{
    emit_pinned(C, label, indent, text);
    free(text);
}

static int isolation_shift(const struct copier *C, int i);

/* The column where a statement's text begins, for indenting inserts. */
static int indent_of(const struct copier *C, int i)
{
    const struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[P->src->stmts[i].anchor];
    int field = C->lay->field_col;
    if (s->nseg == 0)
        return field;
    const struct km_seg *g = &P->src->segs[s->seg];
    const char *raw = P->src->raw.data + g->raw;
    int lead = 0;
    while (lead < g->len && (raw[lead] == ' ' || raw[lead] == '\t'))
        lead++;
    int col = field + (g->col + lead - g->field_col) - isolation_shift(C, i);
    return col > 40 ? field : col;
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

/* The lines statement i's own text is on: its first piece's to its last
 * piece's (a statement begun after a `;` and continued at once begins on
 * the next line). */
static void own_lines(const struct km_source *src, int i, int *first,
                      int *last)
{
    const struct km_stmt *s = &src->stmts[i];
    *first = s->first_line;
    *last = s->last_line;
    if (s->nseg > 0) {
        *first = src->segs[s->seg].line;
        *last = src->segs[s->seg + s->nseg - 1].line;
    }
}

/* The next statement of the file after statement i, or -1. */
static int next_in_file(const struct km_source *src, int i)
{
    for (int k = i + 1; k < src->nstmts; k++)
        if (src->stmts[k].file == 0)
            return k;
    return -1;
}

/* Does a statement after i begin on physical line n? */
static bool followed_on_line(const struct km_source *src, int i, int n)
{
    int k = next_in_file(src, i);
    int first, last;
    if (k < 0)
        return false;
    own_lines(src, k, &first, &last);
    return first == n;
}

/* The indentation of a line shared by statements: its leading blanks,
 * and the first statement's label with the blanks after it. */
static int shared_indent(const char *p, int len)
{
    int k = 0;
    while (k < len && (p[k] == ' ' || p[k] == '\t'))
        k++;
    int d = k;
    while (d < len && isdigit((unsigned char)p[d]))
        d++;
    if (d == k || d == len || (p[d] != ' ' && p[d] != '\t'))
        return k;
    while (d < len && (p[d] == ' ' || p[d] == '\t'))
        d++;
    return d;
}

/* On statement i's first own line: the line's indentation (*lead bytes)
 * and the byte where the statement (its label, or its text) begins.
 * What lies between belongs to other statements. */
static int own_start(const struct copier *C, int i, int *lead)
{
    const struct km_source *src = C->P->src;
    const struct km_stmt *s = &src->stmts[i];
    int first, last, start, len;
    own_lines(src, i, &first, &last);
    line_bounds(C->f, first, &start, &len);
    *lead = shared_indent(C->f->text + start, len);
    if (s->label && s->first_line == first)
        return s->label_col - 1;
    return s->nseg > 0 ? src->segs[s->seg].col - 1 : *lead;
}

/* How many bytes isolating statement i cuts from its first line. */
static int isolation_shift(const struct copier *C, int i)
{
    int lead;
    int start = C->isolate ? own_start(C, i, &lead) : 0;
    return C->isolate && start > lead ? start - lead : 0;
}

/* Statement i shares line L with others and gets it to itself: what
 * comes before it there, after the line's indentation, is cut (so it
 * keeps the line's indentation), and what follows it there, from its `;`
 * on, too. */
static void isolate_line(const struct copier *C, int i, struct eline *L)
{
    const struct km_source *src = C->P->src;
    if (!L->stmt_line)
        return;
    int first, last;
    own_lines(src, i, &first, &last);
    if (L->n == last && followed_on_line(src, i, L->n)) {
        L->text.len = (size_t)L->field1;
        km_buf_cstr(&L->text);
    }
    int cut = L->n == first ? isolation_shift(C, i) : 0;
    if (cut > 0) {
        int lead;
        own_start(C, i, &lead);
        int len = (int)L->text.len;
        for (int b = 0; b < lead; b++)      /* another's label */
            if (L->text.data[b] != '\t')
                L->text.data[b] = ' ';
        memmove(L->text.data + lead, L->text.data + lead + cut,
                (size_t)(len - lead - cut + 1));
        memmove(L->mask + lead, L->mask + lead + cut,
                (size_t)(len - lead - cut));
        L->text.len -= (size_t)cut;
        L->field0 -= cut;
        L->field1 -= cut;
        L->shift = cut;
        /* what followed the text (fixed form: sequence numbers) no
         * longer lines up */
        L->changed = true;
    }
}

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
    L->fc = C->lay->field_col;
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
    if (C->isolate)
        isolate_line(C, i, L);
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
        int k = line[r] - lines[0].n;
        if (k < 0 || k >= nlines) {
            ok = false;
            break;
        }
        struct eline *L = &lines[k];
        char digits[16];
        snprintf(digits, sizeof digits, "%d", e->rl[r].label);
        splice(L, c0[r] - 1 - L->shift, c1[r] - L->shift, digits, NO_BREAK);
        if (L->open_constant)
            ok = false;
    }
    free(order);
    free(line);
    free(c0);
    free(c1);
    return ok;
}

/* --- writing the lines ------------------------------------------------------------ */

/* The effective column of byte b of a line whose statement field starts
 * at column fc (fixed form: after a tab in the label field, the field
 * begins at column 7 all the same). */
static int eff(const struct copier *C, const struct eline *L, int b)
{
    return b + C->lay->field_col + 1 - L->fc;
}

/* The last break point in (lo, hi] at which bytes before it end at or
 * before `width`, or -1. */
static int break_at(const struct copier *C, const struct eline *L, int lo,
                    int hi, int width)
{
    for (int b = hi; b > lo; b--)
        if (eff(C, L, b - 1) <= width && L->mask[b] == BREAK_OK)
            return b;
    return -1;
}

/* Where what follows the statement's text on a line begins: a comment,
 * the mark that continues the statement (free form's `&`), or anything
 * else (sequence numbers past the line length).  *mark says which. */
static const char *rest_of_line(const struct copier *C, const struct eline *L,
                                bool *keep, bool *mark)
{
    const char *rest = L->text.data + L->field1;
    const char *r = rest;
    while (*r == ' ' || *r == '\t')
        r++;
    char m = C->lay->cont_end[0];
    *mark = m && *r == m;
    *keep = *r == '!' || *mark;
    return rest;
}

/* Write the rest of a changed line after its text, which ends at column
 * `col`: a continuing mark must stay within the line length, so the blanks
 * before it go if they would push it out. */
static void write_rest(const struct copier *C, const char *rest, bool mark,
                       int col)
{
    const char *r = rest;
    while (*r == ' ' || *r == '\t')
        r++;
    if (mark && C->width > 0 && col + (int)(r - rest) + 1 > C->width)
        rest = r;
    km_buf_adds(C->em.out, rest);
}

static void write_line(struct copier *C, const struct eline *L)
{
    struct km_buf *out = C->em.out;
    numbered(C);
    if (!L->changed) {
        km_buf_add(out, L->text.data, L->text.len);
        km_buf_adds(out, C->em.eol);
        return;
    }
    /* What followed the statement's text: a ! comment or a continuation
     * mark is kept, text past the line length (sequence numbers) is not,
     * as it no longer lines up. */
    bool keep_rest, mark;
    const char *rest = rest_of_line(C, L, &keep_rest, &mark);
    const struct km_layout *lay = C->lay;
    int width = C->width;
    int reserve = (int)strlen(lay->cont_end);
    int last_width = width - (mark ? 1 : 0);
    int from = 0;
    int end = L->field1;
    struct eline piece = *L;
    bool first = true;
    while (true) {
        int room_end = end;
        if (width > 0 && eff(C, &piece, end - 1) > last_width) {
            int b = break_at(C, &piece, first ? piece.field0 : from, end,
                             width - reserve);
            if (b < 0)      /* one constant longer than a line: cut */
                b = width - reserve + piece.fc - lay->field_col;
            room_end = b;
        }
        if (first)
            km_buf_add(out, L->text.data, (size_t)room_end);
        else
            km_buf_add(out, L->text.data + from, (size_t)(room_end - from));
        if (room_end == end) {
            if (keep_rest)
                write_rest(C, rest, mark, eff(C, &piece, end - 1));
            km_buf_adds(out, C->em.eol);
            return;
        }
        km_buf_adds(out, lay->cont_end);
        km_buf_adds(out, C->em.eol);
        km_buf_adds(out, lay->cont_begin);
        /* the rest goes on right after the mark */
        from = room_end;
        piece.fc = from + lay->field_col - (int)strlen(lay->cont_begin);
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
static void tail_line(const struct copier *C, const struct eline *L, int at,
                      struct eline *T)
{
    memset(T, 0, sizeof *T);
    T->n = L->n;
    T->stmt_line = true;
    int col = eff(C, L, at);
    for (int k = 0; k < col - 1; k++)
        km_buf_addc(&T->text, ' ');
    int pad = (int)T->text.len;
    km_buf_add(&T->text, L->text.data + at, L->text.len - (size_t)at);
    km_buf_cstr(&T->text);
    T->mask = km_xcalloc(T->text.len + 1, 1);
    memcpy(T->mask + pad, L->mask + at, L->text.len - (size_t)at);
    T->fc = C->lay->field_col;
    T->field0 = pad;
    T->field1 = pad + (L->field1 - at);
    T->changed = true;
    T->open_constant = L->open_constant;
}

/* Blank the label of statement s on its first line L: the digits from its
 * first one on, up to the end of the label field if the layout has one
 * (a fixed-form label may hold blanks), else while they are digits. */
static void blank_label(const struct copier *C, const struct km_stmt *s,
                        struct eline *L)
{
    int end = C->lay->label_end;
    int len = (int)L->text.len;
    if (L->n != s->first_line || !s->label_col)
        return;
    for (int k = s->label_col - 1 - L->shift; k < len && (!end || k < end);
         k++) {
        char c = L->text.data[k];
        if (c == '\t' || (!end && !isdigit((unsigned char)c)))
            break;
        if (isdigit((unsigned char)c))
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
    numbered(C);
    km_buf_addc(C->em.out, C->lay->comment);
    km_buf_add(C->em.out, L->text.data, L->text.len);
    km_buf_adds(C->em.out, C->em.eol);
}

/* Statement i's own lines, edited. */
static void emit_lines(struct copier *C, int i, const struct sedit *e,
                       bool blank)
{
    struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    int first = s->first_line, last = s->last_line;
    if (C->isolate) {
        first = C->iso_first;
        last = C->iso_last;
    }
    int nl = last - first + 1;
    struct eline *lines = km_xcalloc((size_t)nl, sizeof *lines);
    unsigned char *cmask = constant_mask(P, i);
    for (int k = 0; k < nl; k++) {
        lines[k].n = first + k;
        load_line(C, i, cmask, &lines[k]);
    }
    free(cmask);
    if (e->nrl > 0 && !apply_relabels(C, i, e, lines, nl))
        km_fail(P, i, "a label in this statement is split across lines, or "
                "its line ends inside a continued character constant: "
                "the jump it makes cannot be redirected");
    if (blank)
        blank_label(C, s, &lines[0]);
    bool wrap = !e->action && (e->act_pre.n > 0 || e->act_post.n > 0);
    int aline = 0, abyte = 0;
    if (wrap || e->action) {
        action_start(P, i, &aline, &abyte);
        if (aline >= first && aline <= last)
            abyte -= lines[aline - first].shift;
    }
    int indent = indent_of(C, i);
    bool dropping = false;
    for (int k = 0; k < nl; k++) {
        struct eline *L = &lines[k];
        mark(C, L->n);
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
            tail_line(C, L, abyte, &T);
            head_line(L, abyte, e->action ? e->action : "THEN");
            write_line(C, L);
            if (e->action) {
                dropping = true;
            } else {
                emit_code(C, &e->act_pre, indent + 2, 0);
                mark(C, L->n);
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

/* Does line p (of a branch the reader did not read) look like an
 * executable statement?  Comments, continuations and specification
 * statements do not. */
static bool looks_executable(const char *p, int len)
{
    static const char *const specs[] = {
        "integer", "real", "double", "complex", "logical", "character",
        "type", "class", "use", "implicit", "parameter", "dimension",
        "common", "external", "intrinsic", "save", "data", "include",
        "equivalence", "namelist", "allocatable", "pointer", "target",
        "interface", "procedure", "import", "intent", "optional", "byte",
        "contiguous", "volatile", "asynchronous", "protected", "value",
        "format", "entry", "enum", "public", "private", "sequence",
    };
    if (len == 0 || p[0] == 'c' || p[0] == 'C' || p[0] == '*' ||
        p[0] == '#')
        return false;
    int i = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t' || isdigit((unsigned char)p[i])))
        i++;
    if (i >= len || p[i] == '!' || p[i] == '&' || (i == 5 && p[i] != ' '))
        return false;
    char w[16];
    int k = 0;
    while (i < len && k < 15 && isalpha((unsigned char)p[i]))
        w[k++] = (char)tolower((unsigned char)p[i++]);
    w[k] = '\0';
    if (k == 0)
        return false;
    for (size_t j = 0; j < sizeof specs / sizeof specs[0]; j++)
        if (!strncmp(w, specs[j], strlen(specs[j])))
            return false;
    return true;
}

/* The first line of the directives right above statement i, with only
 * comments between (0 if none): of loop directives (!$omp do, !dir$ ivdep
 * ...) above a DO, before which the loop's KM_IN goes, or (`any`) of every
 * directive, before which the routine's declarations and entry code go:
 * never inside !$omp parallel.  Preprocessor conditionals are crossed
 * whole: a loop directive inside #ifdef _OPENMP ... #endif takes the
 * #ifdef with it, and entry code goes above the #if (or, from an #else
 * branch, the #if before it) that its statement is in, and above a
 * conditional whose unread branch holds code, so that every branch still
 * declares and enters what the rest of the routine uses. */
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
    int lead = 0, depth = 0;
    bool pending = false;     /* a lead inside the conditional being crossed */
    for (int n = to; n >= from; n--) {
        enum km_directive d = kind[n - from];
        if (any && depth > 0 && d == KM_DIR_NONE) {
            /* code in a branch not read: the entry code goes above it */
            int start, len;
            line_bounds(C->f, n, &start, &len);
            if (looks_executable(C->f->text + start, len))
                pending = true;
        }
        if (d == KM_DIR_CPP_ENDIF) {
            depth++;
        } else if (d == KM_DIR_CPP_ELSE) {
            if (depth == 0 && !any)
                break;
            if (depth == 0) {
                depth = 1;
                pending = true;
            }
        } else if (d == KM_DIR_CPP_IF) {
            if (depth == 0 && !any)
                break;
            if (depth == 0 || (--depth == 0 && pending)) {
                lead = n;
                pending = false;
            }
        } else if (d == KM_DIR_CPP) {
            continue;
        } else if (d == KM_DIR_LOOP ||
                   (any && d != KM_DIR_NONE && d != KM_DIR_DECLARATIVE)) {
            if (depth > 0)
                pending = true;
            else
                lead = n;
        } else if (d != KM_DIR_NONE) {
            break;
        }
    }
    free(kind);
    return lead;
}

/* The last line of the end directives (!$omp end do ...) right below
 * statement i, with only comments between; 0 if none.  A conditional
 * holding one is taken whole, as above. */
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
    int last = 0, depth = 0;
    bool pending = false;     /* an end directive inside a conditional */
    for (int n = from; n <= to; n++) {
        enum km_directive d = kind[n - from];
        if (d == KM_DIR_CPP_IF) {
            depth++;
        } else if (d == KM_DIR_CPP_ELSE || d == KM_DIR_CPP_ENDIF) {
            if (depth == 0)
                break;
            if (d == KM_DIR_CPP_ENDIF && --depth == 0 && pending) {
                last = n;
                pending = false;
            }
        } else if (d == KM_DIR_END_LOOP) {
            if (depth > 0)
                pending = true;
            else
                last = n;
        } else if (d != KM_DIR_NONE && d != KM_DIR_CPP) {
            break;
        }
    }
    free(kind);
    return last;
}

/* Statement i's declarations and routine entry code, once (it may go
 * out above directives before the statement is reached). */
static void emit_entry(struct copier *C, int i, const struct sedit *e)
{
    if (C->entry_done[i])
        return;
    C->entry_done[i] = true;
    mark(C, C->P->src->stmts[i].first_line);
    emit_code(C, &e->entry, indent_of(C, i), 0);
}

/* Statement i's code that runs just before it, once: stubs, KM_IN.
 * Returns whether the statement's label moved to that code. */
static bool emit_before(struct copier *C, int i, const struct sedit *e)
{
    struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    if (C->before_done[i])
        return C->moved[i];
    C->before_done[i] = true;
    int indent = indent_of(C, i);
    mark(C, s->first_line);
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
    C->moved[i] = moved;
    return moved;
}

/* Statement i and what goes after it.  Returns the last line written:
 * its own, or that of the loop end directives that follow it. */
static int emit_rest(struct copier *C, int i, const struct sedit *e,
                     bool moved)
{
    struct plan *P = C->P;
    const struct km_stmt *s = &P->src->stmts[i];
    int indent = indent_of(C, i);
    int last = s->last_line;
    mark(C, C->isolate ? C->iso_first : s->first_line);
    emit_lines(C, i, e, moved);
    /* what follows the statement is numbered as its last line */
    mark(C, s->last_line);
    if (e->stubs_after) {
        emit_stubs(C, e, e->after_label, indent);
        emit_one(C, e->after_label, indent, km_fmt("CONTINUE"));
    }
    emit_code(C, &e->post[0], indent, 0);
    int end_dir = e->nslots > 1 ? loop_end_directives_below(C, i) : 0;
    for (int m = 1; m < e->nslots; m++) {
        mark(C, last);
        if (e->term[m] && e->term[m] != e->term[m - 1])
            emit_one(C, e->term[m], indent, km_fmt("CONTINUE"));
        if (m == 1 && end_dir) {
            /* !$omp end do directly after its loop, the loop's KM_OUT
             * after it */
            for (int n = last + 1; n <= end_dir; n++)
                n = copy_line(C, n);
            last = end_dir;
        }
        mark(C, last);
        emit_code(C, &e->post[m], indent, 0);
    }
    return last;
}

/* Statement i with its edits e: what has not gone out yet of the code
 * before it, then the rest.  Returns the last line written. */
static int emit_statement(struct copier *C, int i, const struct sedit *e)
{
    emit_entry(C, i, e);
    return emit_rest(C, i, e, emit_before(C, i, e));
}

/* --- statements sharing lines -------------------------------------------------- */

/* The last statement of the group that begins with statement i: the
 * statements of the file whose lines overlap through `;`.  *last_line is
 * the group's last line. */
static int group_end(const struct km_source *src, int i, int *last_line)
{
    int j = i;
    *last_line = src->stmts[i].last_line;
    for (int k = next_in_file(src, i);
         k >= 0 && src->stmts[k].first_line <= *last_line;
         k = next_in_file(src, k)) {
        j = k;
        if (src->stmts[k].last_line > *last_line)
            *last_line = src->stmts[k].last_line;
    }
    return j;
}

static bool group_edited(const struct plan *P, int i, int j)
{
    for (int k = i; k <= j; k++)
        if (P->ed[k] && P->src->stmts[k].file == 0)
            return true;
    return false;
}

/* Statements i..j share lines and some of them are edited: each is
 * written on lines of its own, with its edits.  Lines between two of
 * them (comments after an `&` that ended a line after a `;`) go with the
 * second.  Returns the last line written. */
static int write_group(struct copier *C, int i, int j)
{
    const struct km_source *src = C->P->src;
    int prev_last = 0, written = 0;
    C->isolate = true;
    for (int k = i; k >= 0 && k <= j; k = next_in_file(src, k)) {
        int first, last;
        own_lines(src, k, &first, &last);
        if (k == i)
            first = src->stmts[k].first_line;
        else if (prev_last < first)
            first = prev_last + 1;
        C->iso_first = first;
        C->iso_last = last;
        int w = emit_statement(C, k, C->P->ed[k] ? C->P->ed[k] : &C->none);
        if (w > written)
            written = w;
        prev_last = last;
    }
    C->isolate = false;
    return written;
}

/* --- the file ------------------------------------------------------------------- */

static void setup(struct copier *C, struct plan *P, struct km_buf *out)
{
    C->P = P;
    C->f = &P->src->files[0];
    C->lay = km_layout_of(P->src->opts.form);
    const char *eol = "\n";
    const char *nl = memchr(C->f->text, '\n', C->f->size);
    if (nl && nl > C->f->text && nl[-1] == '\r')
        eol = "\r\n";
    C->width = P->opts->line_length;
    C->em.out = out;
    C->em.eol = eol;
    C->em.lay = C->lay;
    C->em.width = C->lay->width;
    if (C->width > 0 && C->width < C->em.width)
        C->em.width = C->width;
    int n = P->src->nstmts + 1;
    C->entry_done = km_xcalloc((size_t)n, sizeof *C->entry_done);
    C->before_done = km_xcalloc((size_t)n, sizeof *C->before_done);
    C->moved = km_xcalloc((size_t)n, sizeof *C->moved);
    C->mark_line = 1;
    C->none.main_label = -1;
    C->none.nslots = 1;
    C->none.post = &C->none_post;
}

/* A preprocessor's output begins with line markers, and a compiler told
 * its input is one (gfortran -fpreprocessed, as CMake's Ninja rules
 * compile x-pp.f90) takes its first two lines for them, whatever they
 * hold: the copy of such a source begins with two markers too. */
static void preprocessor_start(struct copier *C)
{
    if (!C->P->opts->line_markers || !C->f->orig_line)
        return;
    const char *name = km_source_name(C->P->src);
    add_marker(C->em.out, 1, name, C->em.eol);
    add_marker(C->em.out, 1, name, C->em.eol);
    C->mark_pos = C->em.out->len;
    C->mark_line = 1;
    C->mark_name = name;
}

void km_copy_file(struct plan *P, struct km_buf *out)
{
    struct copier C = {0};
    setup(&C, P, out);
    preprocessor_start(&C);
    const struct km_source *src = P->src;
    const struct km_file *f = C.f;
    int *starts = km_xmalloc(sizeof(int) * (size_t)(f->nlines + 2));
    for (int n = 0; n <= f->nlines + 1; n++)
        starts[n] = -1;
    for (int i = 0; i < src->nstmts; i++)
        if (src->stmts[i].file == 0 && starts[src->stmts[i].first_line] < 0)
            starts[src->stmts[i].first_line] = i;
    /* the statement of file 0 that begins after each line (indentation of
     * code inserted around directive lines) */
    int *next_statement = km_xmalloc(sizeof(int) * (size_t)(f->nlines + 2));
    for (int n = f->nlines + 1, s = -1; n >= 0; n--) {
        next_statement[n] = s;
        if (n >= 1 && n <= f->nlines && starts[n] >= 0)
            s = starts[n];
    }
    C.next_statement = next_statement;
    /* Directives above an edited statement: its entry code goes before
     * all of them, a DO's KM_IN before its loop directives. */
    int *lead = km_xcalloc((size_t)f->nlines + 2, sizeof *lead);
    int *lead_entry = km_xcalloc((size_t)f->nlines + 2, sizeof *lead_entry);
    for (int i = 0; i < src->nstmts; i++)
        if (src->stmts[i].file == 0 && P->ed[i]) {
            int n = directives_above(&C, i, false);
            if (n > 0)
                lead[n] = i + 1;
            n = P->ed[i]->entry.n > 0 ? directives_above(&C, i, true) : 0;
            if (n > 0)
                lead_entry[n] = i + 1;
        }
    for (int n = 1; n <= f->nlines; n++) {
        /* the directive lines themselves are copied below */
        if (lead_entry[n])
            emit_entry(&C, lead_entry[n] - 1, P->ed[lead_entry[n] - 1]);
        if (lead[n])
            emit_before(&C, lead[n] - 1, P->ed[lead[n] - 1]);
        int i = starts[n];
        int last, j;
        if (i >= 0 &&
            (j = group_end(src, i, &last)) != i && group_edited(P, i, j)) {
            int w = write_group(&C, i, j);
            n = w > last ? w : last;
            continue;
        }
        if (i < 0 || !P->ed[i]) {
            n = copy_line(&C, n);
            continue;
        }
        n = emit_statement(&C, i, P->ed[i]);
    }
    free(C.moved);
    free(C.before_done);
    free(C.entry_done);
    free(lead_entry);
    free(lead);
    free(next_statement);
    free(starts);
}
