/*
 * dump.c — a readable account of a parsed file (kmrun --dump).
 *
 * The front end's fixtures compare against this text, so its layout is a
 * contract: change it only together with every expected dump.
 */
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
    default: return "?";
    }
}

static int line_of(const struct km_program *p, int stmt)
{
    return stmt >= 0 ? p->src->stmts[stmt].first_line : 0;
}

static void dump_statement(const struct km_program *p, int i,
                           struct km_buf *out)
{
    const struct km_source *src = p->src;
    const struct km_stmt *s = &src->stmts[i];
    const struct km_sinfo *in = &p->info[i];
    km_buf_adds(out, "  ");
    if (s->file != 0) {
        const char *path = src->files[s->file].path;
        const char *base = strrchr(path, '/');
        km_buf_printf(out, "%s:", base ? base + 1 : path);
    }
    km_buf_printf(out, "%d", s->first_line);
    if (s->last_line != s->first_line)
        km_buf_printf(out, "-%d", s->last_line);
    if (s->label)
        km_buf_printf(out, " L%d", s->label);
    km_buf_printf(out, " %s", km_skind_name(in->kind));
    if (in->kind == KS_IF_LOGICAL)
        km_buf_printf(out, "(%s)", km_skind_name(in->action));
    if (in->kind == KS_DO || in->kind == KS_DO_WHILE)
        km_buf_printf(out, " depth=%d end=%d", in->do_depth,
                      line_of(p, in->do_end));
    if (in->ends_dos)
        km_buf_printf(out, " ends=%d", in->ends_dos);
    if (in->name && in->kind != KS_PROGRAM && in->kind != KS_SUBROUTINE &&
        in->kind != KS_FUNCTION && in->kind != KS_BLOCKDATA)
        km_buf_printf(out, " name=%s", in->name);
    km_buf_adds(out, " | ");
    km_buf_add(out, src->tok.data + s->tok, (size_t)s->tok_len);
    km_buf_addc(out, '\n');
}

void km_dump_program(const struct km_program *p, struct km_buf *out)
{
    for (int u = 0; u < p->nunits; u++) {
        const struct km_unit *un = &p->units[u];
        km_buf_printf(out, "unit %s %s%s%s: spec-end %d, first-exec %d, "
                      "end %d", unit_kind(un->kind), un->name,
                      un->named ? "" : " (unnamed)",
                      un->recursive ? " (recursive)" : "",
                      line_of(p, un->spec_end), line_of(p, un->first_exec),
                      line_of(p, un->end));
        if (un->blanket_save)
            km_buf_adds(out, ", save");
        if (un->nentries)
            km_buf_printf(out, ", %d entries", un->nentries);
        km_buf_addc(out, '\n');
        for (int i = un->first; i <= un->end && i < p->src->nstmts; i++)
            if (p->info[i].unit == u)
                dump_statement(p, i, out);
    }
}
