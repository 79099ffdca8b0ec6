/*
 * files.c — which file a measured I/O statement works on, and how many
 * bytes an unformatted one moves, told to libkm (runtime/km_io.c):
 *
 *   before it   CALL KM_IOU(INT(unit, k), INT(op, k))      (most)
 *               CALL KM_ION(INT(unit, k), INT(op, k), TRIM(file)//CHAR(0))
 *                                                (OPEN, INQUIRE(FILE=))
 *   after it    CALL KM_IOM(INT(unit, k))                  (OPEN)
 *               INQUIRE(IOLENGTH=KM_IOLEN) list / CALL KM_IOL(KM_IOLEN)
 *                                          (unformatted READ and WRITE)
 *
 * with k = SELECTED_INT_KIND(9), so that no flag changes what libkm gets,
 * and op a sum of km_abi.h's KM_IO_* codes.  The region's own KM_OUT,
 * wherever the statement leaves to (END=, ERR=), gives its time to the
 * file KM_IOU or KM_ION chose.  KM_IOLEN is a saved variable, private to
 * each OpenMP thread (THREADPRIVATE), declared where it is used.
 *
 * A READ or WRITE with a format may name an internal file: its unit is
 * then a CHARACTER variable, which INT() would not compile.  The unit's
 * type is read from the declarations of its unit, its hosts and the
 * modules they USE (parser/modules.h); when they do not tell (a module
 * nobody read, an IMPLICIT statement), the statement goes to a row of its
 * own ("unit not known") rather than risk the compile.
 *
 * Must never: evaluate anything but what the statement itself does (its
 * unit, its FILE= and its list again), or write text (copy.c does).
 */
#include "rewriter/plan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lexer/classify.h"
#include "parser/modules.h"
#include "runtime/km_abi.h"

#define KIND "SELECTED_INT_KIND(9)"

/* What the statement says, from its token text. */
struct io_stmt {
    int op;                   /* KM_IO_OPEN ... KM_IO_WRITE */
    struct km_actuals ctl;    /* its control list, if in parentheses */
    const char *unit;         /* its unit's text, NULL: the default unit */
    bool formatted;           /* READ, WRITE, PRINT: a format or namelist */
    char *list;               /* READ, WRITE: its list, NULL if none */
};

static int op_of(int kind)
{
    switch (kind) {
    case KS_OPEN: return KM_IO_OPEN;
    case KS_CLOSE: return KM_IO_CLOSE;
    case KS_INQUIRE: return KM_IO_INQUIRE;
    case KS_REWIND: return KM_IO_REWIND;
    case KS_BACKSPACE: return KM_IO_BACKSPACE;
    case KS_ENDFILE: return KM_IO_ENDFILE;
    case KS_FLUSH: return KM_IO_FLUSH;
    case KS_WAIT: return KM_IO_WAIT;
    case KS_READ: return KM_IO_READ;
    default: return KM_IO_WRITE;         /* WRITE, PRINT */
    }
}

/* The control-list item with keyword `kw`, or the `pos`-th positional
 * one (pos < 0: none), or NULL. */
static const char *item(const struct km_actuals *a, const char *kw, int pos)
{
    for (int k = 0; k < a->n; k++)
        if (a->kw[k] && strcasecmp(a->kw[k], kw) == 0)
            return a->text[k];
    return pos >= 0 && pos < a->n && !a->kw[pos] ? a->text[pos] : NULL;
}

/* The text from p to the end of the statement (its line in tok). */
static char *rest(const char *p)
{
    size_t n = strcspn(p, "\n");
    return n ? km_fmt("%.*s", (int)n, p) : NULL;
}

/* Just past the first comma outside parentheses and constants, or NULL. */
static const char *after_comma(const char *p)
{
    int depth = 0;
    char quote = 0;
    for (; *p && *p != '\n'; p++) {
        if (quote)
            quote = *p == quote ? 0 : quote;
        else if (*p == '\'' || *p == '"')
            quote = *p;
        else if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (*p == ',' && depth == 0)
            return p + 1;
    }
    return NULL;
}

/* Read statement i's I/O statement (its action, for a logical IF). */
static bool read_io(const struct plan *P, int i, struct io_stmt *io)
{
    const struct km_sinfo *in = &P->prog->info[i];
    const struct km_stmt *s = &P->src->stmts[i];
    int kind = km_effective_kind(P, i);
    const char *p = P->src->tok.data +
                    (in->kind == KS_IF_LOGICAL ? in->action_tok : s->tok);
    *io = (struct io_stmt){ .op = op_of(kind) };
    while (*p == ' ' || islower((unsigned char)*p))
        p++;                          /* the keyword */
    bool data = io->op == KM_IO_READ || io->op == KM_IO_WRITE;
    if (*p == '(' && kind != KS_PRINT) {
        const char *end;
        if (!km_read_actuals(p, &io->ctl, &end))
            return false;
        io->unit = item(&io->ctl, "UNIT", 0);
        if (data) {
            io->formatted = item(&io->ctl, "FMT", 1) ||
                            item(&io->ctl, "NML", -1);
            io->list = rest(end);
        }
        if (io->unit && strcmp(io->unit, "*") == 0)
            io->unit = NULL;
        return io->unit || data || item(&io->ctl, "FILE", -1) ||
               item(&io->ctl, "NEWUNIT", -1) || item(&io->ctl, "IOLENGTH", -1);
    }
    if (data) {                       /* READ f, list / PRINT f, list */
        io->formatted = true;
        const char *l = after_comma(p);
        io->list = l ? rest(l) : NULL;
        return true;
    }
    char *u = rest(p);                /* REWIND u, FLUSH u ... */
    if (!u)
        return false;
    io->ctl.kw[0] = NULL;
    io->ctl.text[0] = u;
    io->ctl.n = 1;
    io->unit = u;
    return true;
}

static void io_free(struct io_stmt *io)
{
    km_actuals_free(&io->ctl);
    free(io->list);
}

/* A unit's text: an integer (external unit), character (internal file)
 * or not known.  An expression with arithmetic is an integer. */
static enum km_name_type unit_type(const struct plan *P, int x, const char *u)
{
    if (isdigit((unsigned char)u[0]))
        return KM_NT_INTEGER;
    if (u[0] == '\'' || u[0] == '"' || strstr(u, "//"))
        return KM_NT_CHARACTER;
    if (strchr(u, '%'))
        return KM_NT_UNKNOWN;
    size_t n = strspn(u, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (n == 0)
        return KM_NT_UNKNOWN;
    if (u[n] && u[n] != '(')
        return strpbrk(u + n, "+-*/") ? KM_NT_INTEGER : KM_NT_UNKNOWN;
    char *name = km_fmt("%.*s", (int)n, u);
    bool array;
    enum km_name_type t = km_declared_type(P->prog, x, name, &array);
    free(name);
    /* F(I) of an integer F that is no array: a function, which INT()
     * would call a second time */
    if (t == KM_NT_INTEGER && u[n] == '(' && !array)
        return KM_NT_UNKNOWN;
    return t;
}

static char *int_k(const char *v)
{
    return km_fmt("INT(%s, " KIND ")", v);
}

static char *op_arg(int op)
{
    char *n = km_fmt("%d", op);
    char *v = int_k(n);
    free(n);
    return v;
}

/* CALL KM_IOU(unit, op) before the statement: the unit it works on. */
static char *unit_call(const struct plan *P, int x, const struct io_stmt *io)
{
    int op = io->op | (io->formatted ? KM_IO_FORMATTED : 0);
    const char *unit = io->unit;
    if (!unit && item(&io->ctl, "IOLENGTH", -1)) {
        op |= KM_IO_INTERNAL;
    } else if (!unit) {
        op |= KM_IO_DEFAULT_UNIT;
    } else if (io->formatted) {
        enum km_name_type t = unit_type(P, x, unit);
        if (t == KM_NT_CHARACTER)
            op |= KM_IO_INTERNAL;
        else if (t == KM_NT_UNKNOWN)
            op |= KM_IO_UNIT_UNKNOWN;
    }
    if (op & KM_IO_SOURCE)
        unit = "0";
    char *u = int_k(unit), *o = op_arg(op);
    char *call = km_fmt("CALL KM_IOU(%s, %s)", u, o);
    free(u);
    free(o);
    return call;
}

static bool is_scratch(const char *status)
{
    return status && strlen(status) == 9 &&
           strncasecmp(status + 1, "SCRATCH", 7) == 0;
}

/* CALL KM_ION(unit, op, name) before an OPEN or INQUIRE(FILE=). */
static char *name_call(const struct io_stmt *io, const char *file)
{
    const char *newunit = item(&io->ctl, "NEWUNIT", -1);
    int op = io->op;
    if (io->op == KM_IO_OPEN && (newunit || !io->unit))
        op |= KM_IO_NEWUNIT;
    if (io->op == KM_IO_OPEN && is_scratch(item(&io->ctl, "STATUS", -1)))
        op |= KM_IO_SCRATCH;
    char *u = int_k(newunit || !io->unit ? "0" : io->unit), *o = op_arg(op);
    char *name = file ? km_fmt("TRIM(%s)//CHAR(0)", file) : km_fmt("CHAR(0)");
    char *call = km_fmt("CALL KM_ION(%s, %s, %s)", u, o, name);
    free(u);
    free(o);
    free(name);
    return call;
}

void km_place_files(struct plan *P, struct unit_ctx *c, struct region *r)
{
    if (r->rk != RG_LOC || r->kind != KM_K_IO)
        return;
    int i = r->stmt;
    struct io_stmt io;
    if (!read_io(P, i, &io)) {
        io_free(&io);
        return;
    }
    struct code *before = km_code_before(P, i);
    struct code *after = km_code_after(P, i);
    const char *file = item(&io.ctl, "FILE", -1);
    if (io.op == KM_IO_OPEN || (io.op == KM_IO_INQUIRE && file)) {
        km_code_prepend(before, 0, 0, name_call(&io, file));
    } else {
        km_code_prepend(before, 0, 0, unit_call(P, c->index, &io));
    }
    const char *newunit = item(&io.ctl, "NEWUNIT", -1);
    if (io.op == KM_IO_OPEN && (newunit || io.unit)) {
        char *u = int_k(newunit ? newunit : io.unit);
        km_code_add(after, 0, 0, km_fmt("CALL KM_IOM(%s)", u));
        free(u);
    }
    bool data = io.op == KM_IO_READ || io.op == KM_IO_WRITE;
    if (data && !io.formatted && io.list) {
        const char *len = c->iolen;
        km_code_add(after, 0, 0, km_fmt("INQUIRE(IOLENGTH=%s) %s", len,
                                        io.list));
        km_code_add(after, 0, 0, km_fmt("CALL KM_IOL(%s)", len));
        c->io_length = true;
    }
    io_free(&io);
}
