/*
 * dump.c — a readable account of a parsed file (kmrun --dump).
 *
 * The front end's fixtures compare against this text, so its layout is a
 * contract: change it only together with every expected dump.  It only
 * reads the program; it never decides anything the rewriter relies on.
 */
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "parser/program.h"
#include "support/buf.h"

static const char *unit_kind(int k)
{
    switch (k) {
    case KM_U_PROGRAM: return "program";
    case KM_U_SUBROUTINE: return "subroutine";
    case KM_U_FUNCTION: return "function";
    case KM_U_BLOCKDATA: return "block-data";
    case KM_U_MODULE: return "module";
    case KM_U_SUBMODULE: return "submodule";
    default: return "?";
    }
}

/* km_buf_printf is the dump's cost on a large file: numbers and words
 * are appended by hand. */
static void add_int(struct km_buf *out, int n)
{
    char digits[16];
    int k = sizeof digits;
    unsigned v = n < 0 ? 0u - (unsigned)n : (unsigned)n;
    do {
        digits[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (n < 0)
        digits[--k] = '-';
    km_buf_add(out, digits + k, sizeof digits - (size_t)k);
}

/* " key=" then n */
static void add_field(struct km_buf *out, const char *key, int n)
{
    km_buf_adds(out, key);
    add_int(out, n);
}

/* Lines as the user knows them (a preprocessed file's: its source's). */
static int line_of(const struct km_program *p, int stmt)
{
    if (stmt < 0)
        return 0;
    const struct km_stmt *s = &p->src->stmts[stmt];
    return km_user_line(p->src, s->file, s->first_line, NULL);
}

/* Where one statement's label references lie in p->refs: within
 * [first, end), in the order the parser found them. */
struct ref_span {
    int first, end;
};

/* For every statement, where its references lie in p->refs (the parser
 * appends them statement after statement, so the spans are short). */
static struct ref_span *refs_by_statement(const struct km_program *p)
{
    int n = p->src->nstmts;
    struct ref_span *span = km_xcalloc((size_t)n + 1, sizeof *span);
    for (int r = p->nrefs - 1; r >= 0; r--) {
        int s = p->refs[r].stmt;
        if (s < 0 || s >= n)
            continue;
        if (span[s].end == 0)
            span[s].end = r + 1;
        span[s].first = r;
    }
    return span;
}

/* " jump=10,20 format=100 assign=30": the labels a statement refers to,
 * by kind (a DO's terminal is shown by its end= already). */
static void dump_refs(const struct km_program *p, int stmt,
                      struct ref_span span, struct km_buf *out)
{
    static const struct {
        int kind;
        const char *name;
    } kinds[] = {
        {KM_REF_JUMP, "jump"},
        {KM_REF_FORMAT, "format"},
        {KM_REF_ASSIGN, "assign"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int shown = 0;
        for (int r = span.first; r < span.end; r++) {
            if (p->refs[r].stmt != stmt || p->refs[r].kind != kinds[k].kind)
                continue;
            if (shown++) {
                add_field(out, ",", p->refs[r].label);
            } else {
                km_buf_addc(out, ' ');
                km_buf_adds(out, kinds[k].name);
                add_field(out, "=", p->refs[r].label);
            }
        }
    }
}

static void dump_statement(const struct km_program *p, int i,
                           struct ref_span refs, struct km_buf *out)
{
    const struct km_source *src = p->src;
    const struct km_stmt *s = &src->stmts[i];
    const struct km_sinfo *in = &p->info[i];
    km_buf_adds(out, "  ");
    const char *path;
    int line = km_user_line(src, s->file, s->first_line, &path);
    if (s->file != 0 || strcmp(path, src->files[0].path) != 0) {
        /* an include (a preprocessed file's too) */
        const char *base = strrchr(path, '/');
        km_buf_adds(out, base ? base + 1 : path);
        km_buf_addc(out, ':');
    }
    add_int(out, line);
    if (s->last_line != s->first_line)
        add_field(out, "-", km_user_line(src, s->file, s->last_line, NULL));
    if (s->label)
        add_field(out, " L", s->label);
    km_buf_addc(out, ' ');
    km_buf_adds(out, km_skind_name(in->kind));
    if (in->kind == KS_IF_LOGICAL) {
        km_buf_addc(out, '(');
        km_buf_adds(out, km_skind_name(in->action));
        km_buf_addc(out, ')');
    }
    if (in->kind == KS_DO || in->kind == KS_DO_WHILE) {
        if (in->concurrent)
            km_buf_adds(out, " concurrent");
        add_field(out, " depth=", in->do_depth);
        add_field(out, " end=", line_of(p, in->do_end));
    }
    if (in->exit_target >= 0)
        add_field(out, " target=", line_of(p, in->exit_target));
    if (in->in_concurrent)
        km_buf_adds(out, " (concurrent)");
    if (in->ends_dos)
        add_field(out, " ends=", in->ends_dos);
    if (in->name && in->kind != KS_PROGRAM && in->kind != KS_SUBROUTINE &&
        in->kind != KS_FUNCTION && in->kind != KS_BLOCKDATA) {
        km_buf_adds(out, " name=");
        km_buf_adds(out, in->name);
    }
    dump_refs(p, i, refs, out);
    km_buf_adds(out, " | ");
    km_buf_add(out, src->tok.data + s->tok, (size_t)s->tok_len);
    km_buf_addc(out, '\n');
}

static void dump_unit_header(const struct km_program *p, int u,
                             struct km_buf *out)
{
    const struct km_unit *un = &p->units[u];
    if (un->kind == KM_U_SUBMODULE)
        km_buf_printf(out, "unit submodule %s (of %s)", un->name,
                      un->qualified);
    else
        km_buf_printf(out, "unit %s %s", unit_kind(un->kind), un->qualified);
    km_buf_printf(out, "%s%s%s", un->named ? "" : " (unnamed)",
                  un->recursive ? " (recursive)" : "",
                  un->pure ? " (pure)" : "");
    if (un->host >= 0)
        km_buf_printf(out, " (%s %s)",
                      p->units[un->host].kind == KM_U_MODULE ||
                      p->units[un->host].kind == KM_U_SUBMODULE
                          ? "in" : "internal to",
                      p->units[un->host].name);
    km_buf_printf(out, ": spec-end %d, first-exec %d, end %d",
                  line_of(p, un->spec_end), line_of(p, un->first_exec),
                  line_of(p, un->end));
    if (un->last != un->end)
        km_buf_printf(out, ", last %d", line_of(p, un->last));
    if (un->blanket_save)
        km_buf_adds(out, ", save");
    if (un->nentries)
        km_buf_printf(out, ", %d entries", un->nentries);
    km_buf_addc(out, '\n');
}

void km_dump_program(const struct km_program *p, struct km_buf *out)
{
    struct ref_span *refs = refs_by_statement(p);
    for (int u = 0; u < p->nunits; u++) {
        const struct km_unit *un = &p->units[u];
        dump_unit_header(p, u, out);
        int last = un->last >= 0 ? un->last : un->end;
        for (int i = un->first; i <= last && i < p->src->nstmts; i++)
            if (p->info[i].unit == u)
                dump_statement(p, i, refs[i], out);
    }
    free(refs);
}
