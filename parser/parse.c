/*
 * parse.c — drive the classifier, the scanner and the bison parser.
 */
#include "parser/parse.h"

#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "lexer/tokens.h"
#include "parser/grammar.h"
#include "parser/modules.h"

int km_yylex(KM_YYSTYPE *lval, KM_YYLTYPE *lloc, struct km_builder *B)
{
    struct km_token t;
    int code = km_scan(B->scanner, &t);
    lval->tok.code = code;
    lval->tok.stmt = t.stmt;
    lval->tok.off = t.off;
    lval->tok.len = t.len;
    lloc->stmt = t.stmt < 0 ? 0 : t.stmt;
    lloc->first = t.off;
    lloc->last = t.off + t.len;
    return code;
}

void km_yyerror(KM_YYLTYPE *lloc, struct km_builder *B, const char *msg)
{
    if (lloc->stmt >= B->src->nstmts) {
        km_error(B->diag, B->src->files[0].path, 0, 0, "%s", msg);
        return;
    }
    /* The classifier has already reported a statement it did not know. */
    if (B->src->stmts[lloc->stmt].kind == KS_NONE)
        return;
    /* "syntax error, unexpected X, expecting Y": say which statement,
     * and which character when X is one Fortran has no use for. */
    const char *kind = km_skind_name(B->src->stmts[lloc->stmt].kind);
    unsigned char c = (unsigned char)B->src->tok.data[lloc->first];
    if (strstr(msg, "unexpected invalid character")) {
        if (c > ' ' && c < 127)
            km_b_error(B, lloc->stmt, lloc->first, "invalid character '%c' "
                       "in %s statement", c, kind);
        else
            km_b_error(B, lloc->stmt, lloc->first, "invalid character "
                       "(byte 0x%02X) in %s statement", c, kind);
    } else if (strncmp(msg, "syntax error", 12) == 0) {
        km_b_error(B, lloc->stmt, lloc->first, "syntax error in %s statement%s",
                   kind, msg + 12);
    } else if (strcmp(msg, "memory exhausted") == 0) {
        km_b_error(B, lloc->stmt, lloc->first, "%s statement nested too "
                   "deeply for the parser", kind);
    } else {
        km_b_error(B, lloc->stmt, lloc->first, "%s", msg);
    }
}

bool km_parse(struct km_source *src, struct km_program *prog,
              struct km_diag *diag)
{
    memset(prog, 0, sizeof *prog);
    prog->src = src;
    int errors = diag->errors;
    km_classify(src);
    if (src->nstmts == 0) {
        /* a compiler makes an empty object of it; the build needs its
         * copy all the same */
        km_warning(diag, src->files[0].path, 1, 1,
                   "no statements: the file holds no program unit and is "
                   "copied unchanged");
        return true;
    }
    prog->info = km_xcalloc((size_t)src->nstmts, sizeof *prog->info);
    for (int i = 0; i < src->nstmts; i++) {
        prog->info[i].unit = -1;
        prog->info[i].do_parent = -1;
        prog->info[i].do_end = -1;
        prog->info[i].action_tok = -1;
        prog->info[i].exit_target = -1;
    }
    struct km_builder B = {0};
    B.prog = prog;
    B.src = src;
    B.diag = diag;
    B.unit = -1;
    B.last_stmt = -1;
    B.scanner = km_scanner_new(src);
    int rc = km_yyparse(&B);
    if (rc == 0 && B.unit >= 0) {
        struct km_unit *u = &prog->units[B.unit];
        int last = B.last_stmt >= 0 ? B.last_stmt : 0;
        const struct km_stmt *s = &src->stmts[last];
        int line, col;
        km_raw_position(src, s, s->raw + s->raw_len, &line, &col);
        km_error(diag, km_stmt_path(src, s), line, col,
                 "END statement missing at the end of %s %s",
                 u->kind == KM_U_PROGRAM ? "program" :
                 u->kind == KM_U_BLOCKDATA ? "block data" :
                 u->kind == KM_U_MODULE ? "module" :
                 u->kind == KM_U_SUBMODULE ? "submodule" : "routine",
                 u->name);
    }
    km_inherit_interfaces(prog, prog);
    km_collect_modules(prog);
    km_scanner_free(B.scanner);
    free(B.dos);
    free(B.open_labels);
    free(B.ifs);
    free(B.args);
    free(B.ents);
    for (int i = 0; i < B.ncons; i++)
        free(B.cons[i].name);
    free(B.cons);
    km_names_free(&B.arrays);
    km_names_free(&B.scalars);
    km_names_free(&B.calls);
    return rc == 0 && diag->errors == errors;
}

void km_program_free(struct km_program *p)
{
    if (p->info)
        for (int i = 0; i < p->src->nstmts; i++)
            free(p->info[i].name);
    free(p->info);
    for (int u = 0; u < p->nunits; u++) {
        struct km_unit *un = &p->units[u];
        free(un->name);
        free(un->qualified);
        free(un->entries);
        for (int i = 0; i < un->nscalars; i++)
            free(un->scalars[i]);
        free(un->scalars);
        for (int i = 0; i < un->narrays; i++)
            free(un->arrays[i]);
        free(un->arrays);
        for (int i = 0; i < un->ncalls; i++)
            free(un->calls[i]);
        free(un->calls);
    }
    free(p->units);
    free(p->refs);
    for (int i = 0; i < p->nseparates; i++)
        free(p->separates[i].qualified);
    free(p->separates);
    km_modules_free(p);
    memset(p, 0, sizeof *p);
}
