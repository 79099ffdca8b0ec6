/*
 * modules.c — the type a name is declared with, through hosts and USE
 * (see modules.h).
 */
#include "parser/modules.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "support/buf.h"

#define NAME_MAX_ 64          /* a Fortran name has at most 63 characters */
#define USE_DEPTH 16          /* modules using modules using modules ... */

/* What a lookup in one place found. */
enum found { F_NONE, F_TYPE, F_CANNOT_KNOW };

/* Where the entities of a declaration begin: after its "::", or after
 * its type with any (KIND=...) and *LEN (INTEGER*4 N, CHARACTER*80LINE,
 * CHARACTER*(*) NAME). */
static const char *entities(const char *t, const char *end)
{
    for (const char *c = t; c + 1 < end; c++)
        if (c[0] == ':' && c[1] == ':')
            return c + 2;
    const char *c = t;
    while (c < end && (islower((unsigned char)*c) || *c == ' '))
        c++;
    for (int pass = 0; pass < 2 && c < end; pass++) {
        if (*c == '*')
            c++;
        if (c < end && *c == '(') {
            int depth = 0;
            do
                depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
            while (++c < end && depth > 0);
        }
        while (pass == 1 && c < end && isdigit((unsigned char)*c))
            c++;
    }
    return c < end && *c == ',' ? c + 1 : c;
}

/* Does declaration text t (len characters) declare `name`: is it the
 * first name of one of its entities (A, B(10), C = 5, D*8)? */
static bool declares(const char *t, int len, const char *name)
{
    const char *end = t + len;
    size_t n = strlen(name);
    for (const char *c = entities(t, end); c < end;) {
        const char *a = c;
        while (c < end && (isupper((unsigned char)*c) ||
                           isdigit((unsigned char)*c) || *c == '_'))
            c++;
        if ((size_t)(c - a) == n && strncmp(a, name, n) == 0)
            return true;
        int depth = 0;            /* on to the next entity */
        char quote = 0;
        for (; c < end && (*c != ',' || depth > 0 || quote); c++) {
            if (quote)
                quote = *c == quote ? 0 : quote;
            else if (*c == '\'' || *c == '"')
                quote = *c;
            else
                depth += *c == '(' || *c == '[' ? 1
                         : *c == ')' || *c == ']' ? -1 : 0;
        }
        c++;
    }
    return false;
}

/* The type a type declaration or FUNCTION statement begins with. */
static enum km_name_type type_named(const char *t, int len)
{
    const char *end = t + len;
    const char *f = t;
    while (f < end && (islower((unsigned char)*f) || *f == ' '))
        f++;                          /* PURE RECURSIVE ... and the type */
    for (const char *p = t; p < f; p++) {
        if (strncmp(p, "integer", 7) == 0)
            return KM_NT_INTEGER;
        if (strncmp(p, "character", 9) == 0)
            return KM_NT_CHARACTER;
    }
    return KM_NT_UNKNOWN;
}

/* The name in a FUNCTION statement's RESULT(), or NULL. */
static const char *result_of(const char *t, int len, int *n)
{
    for (int k = 0; k + 7 <= len; k++)
        if (strncmp(t + k, "result(", 7) == 0) {
            const char *r = t + k + 7;
            *n = (int)strcspn(r, ")\n");
            return r;
        }
    return NULL;
}

/* Is `name` function unit u's result (its name, or its RESULT())? */
static bool result_named(const char *t, int len, const struct km_unit *u,
                         const char *name)
{
    int n;
    const char *r = result_of(t, len, &n);
    if (r)
        return n == (int)strlen(name) && strncmp(r, name, (size_t)n) == 0;
    return u->name && strcmp(u->name, name) == 0;
}

static const char *tok_of(const struct km_program *p, int i, int *len)
{
    const struct km_stmt *s = &p->src->stmts[i];
    *len = s->tok_len;
    return p->src->tok.data + s->tok;
}

/* Calls fn for each statement of unit x's own specification that declares
 * something of x: not those of derived type definitions and interface
 * bodies, whose names are components and dummy arguments. */
struct spec_walk {
    const struct km_program *p;
    int x, i, depth;
};

static bool next_spec(struct spec_walk *w, int *kind)
{
    const struct km_unit *u = &w->p->units[w->x];
    if (w->i == 0)
        w->i = u->first;
    for (; w->i <= u->end; w->i++) {
        int i = w->i;
        if (w->p->info[i].unit != w->x)
            continue;
        int k = w->p->info[i].kind;
        if (k == KS_TYPEDEF || k == KS_INTERFACE)
            w->depth++;
        bool inside = w->depth > 0;
        if ((k == KS_ENDTYPE || k == KS_ENDINTERFACE) && w->depth > 0)
            w->depth--;
        if (inside && k != KS_INTERFACE)
            continue;
        *kind = k;
        w->i++;
        return true;
    }
    return false;
}

/* The type unit x's own declarations give `name`; *implicit is set if x
 * has IMPLICIT rules of its own. */
static enum found declared_in_unit(const struct km_program *p, int x,
                                   const char *name, enum km_name_type *type,
                                   bool *implicit)
{
    const struct km_unit *u = &p->units[x];
    struct spec_walk w = {.p = p, .x = x};
    int kind;
    while (next_spec(&w, &kind)) {
        int len;
        const char *t = tok_of(p, w.i - 1, &len);
        if (kind == KS_IMPLICIT)
            *implicit = true;         /* even NONE: then we missed one */
        if ((kind == KS_FUNCTION && result_named(t, len, u, name)) ||
            (kind == KS_TYPE && declares(t, len, name))) {
            *type = type_named(t, len);
            return F_TYPE;
        }
        if ((kind == KS_PROCEDURE && declares(t, len, name)) ||
            (kind == KS_INTERFACE && len == 9 + (int)strlen(name) &&
             strncmp(t, "interface", 9) == 0 &&
             strncmp(t + 9, name, strlen(name)) == 0)) {
            *type = KM_NT_UNKNOWN;
            return F_TYPE;
        }
    }
    return F_NONE;
}

/* ---- USE statements --------------------------------------------------- */

/* The module a USE statement's text names, and the name it gives `name`
 * there (*orig), or false if it does not make `name` accessible. */
static bool use_gives(const char *t, int len, const char *name,
                      char module[NAME_MAX_], char orig[NAME_MAX_])
{
    const char *end = t + len;
    const char *c = t + 3;                          /* past "use" */
    const char *dc = memchr(t, ':', (size_t)len);
    if (dc && dc + 1 < end && dc[1] == ':')
        c = dc + 2;                   /* USE, INTRINSIC :: M, USE :: M */
    size_t n = 0;
    while (c < end && *c != ',' && n + 1 < NAME_MAX_)
        module[n++] = *c++;
    module[n] = '\0';
    bool only = end - c >= 6 && strncmp(c, ",ONLY:", 6) == 0;
    if (only)
        c += 6;
    else if (c < end)
        c++;
    bool renamed_away = false;
    while (c < end) {
        const char *item = c;
        int depth = 0;
        while (c < end && (*c != ',' || depth > 0)) {
            depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
            c++;
        }
        int ilen = (int)(c - item);
        c++;
        if (memchr(item, '(', (size_t)ilen))
            continue;                 /* OPERATOR(.X.), ASSIGNMENT(=) */
        const char *arrow = NULL;
        for (int k = 0; k + 1 < ilen; k++)
            if (item[k] == '=' && item[k + 1] == '>')
                arrow = item + k;
        int llen = arrow ? (int)(arrow - item) : ilen;
        const char *o = arrow ? arrow + 2 : item;
        int olen = arrow ? ilen - llen - 2 : ilen;
        if (llen == (int)strlen(name) && strncmp(item, name, (size_t)llen) == 0 &&
            olen < NAME_MAX_) {
            memcpy(orig, o, (size_t)olen);
            orig[olen] = '\0';
            return true;
        }
        if (arrow && olen == (int)strlen(name) &&
            strncmp(o, name, (size_t)olen) == 0)
            renamed_away = true;
    }
    if (only || renamed_away)
        return false;
    snprintf(orig, NAME_MAX_, "%s", name);
    return true;
}

/* ---- Modules of the standard, MPI and OpenMP -------------------------- */

/* What ISO_FORTRAN_ENV holds (Fortran 2018): integer constants, but for
 * two functions and three types. */
static const char *const fortran_env[] = {
    "integer::ATOMIC_INT_KIND,ATOMIC_LOGICAL_KIND,CHARACTER_KINDS,"
    "CHARACTER_STORAGE_SIZE,CURRENT_TEAM,ERROR_UNIT,FILE_STORAGE_SIZE,"
    "INITIAL_TEAM,INPUT_UNIT,INT8,INT16,INT32,INT64,INTEGER_KINDS,"
    "IOSTAT_END,IOSTAT_EOR,IOSTAT_INQUIRE_INTERNAL_UNIT,LOGICAL_KINDS,"
    "NUMERIC_STORAGE_SIZE,OUTPUT_UNIT,PARENT_TEAM,REAL16,REAL32,REAL64,"
    "REAL128,REAL_KINDS,STAT_FAILED_IMAGE,STAT_LOCKED,"
    "STAT_LOCKED_OTHER_IMAGE,STAT_STOPPED_IMAGE,STAT_UNLOCKED",
    "procedure::COMPILER_OPTIONS,COMPILER_VERSION,EVENT_TYPE,LOCK_TYPE,"
    "TEAM_TYPE"};

/* Modules whose names all begin with a prefix the standard (or MPI, or
 * OpenMP) reserves: whatever else a program calls a variable is not
 * theirs. */
static const struct {
    const char *module, *prefixes;
} prefixed[] = {
    {"MPI", "MPI PMPI"}, {"MPI_F08", "MPI PMPI"},
    {"OMP_LIB", "OMP_ KMP_ OPENMP_"}, {"OMP_LIB_KINDS", "OMP_ KMP_"},
    {"ISO_C_BINDING", "C_"}, {"IEEE_ARITHMETIC", "IEEE_"},
    {"IEEE_EXCEPTIONS", "IEEE_"}, {"IEEE_FEATURES", "IEEE_"},
};

static int prefixed_module(const char *module)
{
    for (size_t k = 0; k < sizeof prefixed / sizeof *prefixed; k++)
        if (strcmp(prefixed[k].module, module) == 0)
            return (int)k;
    return -1;
}

static bool has_prefix(const char *list, const char *name)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (strncmp(name, p, n) == 0)
            return true;
        p += n + (p[n] == ' ');
    }
    return false;
}

static bool is_known_elsewhere(const char *module)
{
    return strcmp(module, "ISO_FORTRAN_ENV") == 0 ||
           prefixed_module(module) >= 0;
}

/* ---- Lookups ------------------------------------------------------------ */

static const struct km_module *module_named(const struct km_program *p,
                                            const char *name)
{
    for (int k = 0; k < p->nmodules; k++)
        if (strcmp(p->modules[k].name, name) == 0)
            return &p->modules[k];
    return NULL;
}

static enum found in_lines(const struct km_program *p, const char *const *lines,
                           int n, const char *name, enum km_name_type *type,
                           bool *array, int depth);

/* The type module `module` gives `name`. */
static enum found in_module(const struct km_program *p, const char *module,
                            const char *name, enum km_name_type *type,
                            bool *array, int depth)
{
    const struct km_module *m = module_named(p, module);
    if (m)
        return in_lines(p, (const char *const *)m->lines, m->nlines, name,
                        type, array, depth);
    if (strcmp(module, "ISO_FORTRAN_ENV") == 0)
        return in_lines(p, fortran_env, 2, name, type, array, depth);
    int k = prefixed_module(module);
    if (k < 0)
        return F_CANNOT_KNOW;
    if (!has_prefix(prefixed[k].prefixes, name))
        return F_NONE;
    *type = KM_NT_UNKNOWN;
    return F_TYPE;
}

/* What `name` is, through USE statement text t; F_NONE if it does not
 * make `name` accessible. */
static enum found through_use(const struct km_program *p, const char *t,
                              int len, const char *name,
                              enum km_name_type *type, bool *array, int depth)
{
    char module[NAME_MAX_], orig[NAME_MAX_];
    if (!use_gives(t, len, name, module, orig))
        return F_NONE;
    if (depth >= USE_DEPTH)
        return F_CANNOT_KNOW;
    return in_module(p, module, orig, type, array, depth + 1);
}

/* Several places at once: a type found anywhere is the answer (two
 * different ones would be an ambiguous reference, which the compiler
 * refuses); else whether one of them could not tell. */
static enum found combine(enum found sofar, enum found next)
{
    if (sofar == F_TYPE || next == F_TYPE)
        return F_TYPE;
    return sofar == F_CANNOT_KNOW || next == F_CANNOT_KNOW ? F_CANNOT_KNOW
                                                           : F_NONE;
}

static enum found in_lines(const struct km_program *p, const char *const *lines,
                           int n, const char *name, enum km_name_type *type,
                           bool *array, int depth)
{
    enum found f = F_NONE;
    bool implicit = false;
    for (int k = 0; k < n && f != F_TYPE; k++) {
        const char *t = lines[k];
        int len = (int)strlen(t);
        if (strncmp(t, "use", 3) == 0)
            f = combine(f, through_use(p, t, len, name, type, array, depth));
        else if (strncmp(t, "dimension::", 11) == 0)
            *array |= declares(t, len, name);
        else if (strncmp(t, "implicit", 8) == 0)
            implicit |= !strstr(t, "none");
        else if (declares(t, len, name)) {
            *type = type_named(t, len);
            f = F_TYPE;
        }
    }
    /* a name a module types by IMPLICIT rules of its own */
    return f == F_NONE && implicit ? F_CANNOT_KNOW : f;
}

static bool in_list(char *const *list, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (strcmp(list[k], name) == 0)
            return true;
    return false;
}

enum km_name_type km_declared_type(const struct km_program *p, int x,
                                   const char *name, bool *array)
{
    *array = false;
    enum km_name_type type = KM_NT_UNKNOWN;
    bool implicit = false;
    for (int h = x; h >= 0; h = p->units[h].host)
        if (declared_in_unit(p, h, name, &type, &implicit) == F_TYPE) {
            *array = in_list(p->units[h].arrays, p->units[h].narrays, name);
            return type;
        }
    enum found f = F_NONE;
    for (int h = x; h >= 0 && f != F_TYPE; h = p->units[h].host) {
        const struct km_unit *u = &p->units[h];
        for (int i = u->first; u->uses && i <= u->end && f != F_TYPE; i++) {
            if (p->info[i].unit != h || p->info[i].kind != KS_USE)
                continue;
            int len;
            const char *t = tok_of(p, i, &len);
            f = combine(f, through_use(p, t, len, name, &type, array, 0));
        }
    }
    if (f == F_TYPE)
        return type;
    if (f == F_CANNOT_KNOW || implicit)
        return KM_NT_UNKNOWN;
    return name[0] >= 'I' && name[0] <= 'N' ? KM_NT_INTEGER : KM_NT_UNKNOWN;
}

/* ---- Collecting modules --------------------------------------------------- */

/* "type::NAME" */
static char *line_of(const char *type, const char *name, int len)
{
    struct km_buf b = {0};
    km_buf_printf(&b, "%s::%.*s", type, len, name);
    return b.data;
}

/* Module unit m's lines (see modules.h). */
static void module_lines(const struct km_program *p, int m,
                         struct km_module *out)
{
    int cap = 0;
    const struct km_unit *mu = &p->units[m];
    if (mu->narrays > 0) {
        struct km_buf b = {0};
        km_buf_adds(&b, "dimension::");
        for (int k = 0; k < mu->narrays; k++)
            km_buf_printf(&b, "%s%s", k ? "," : "", mu->arrays[k]);
        KM_GROW(out->lines, cap, 1);
        out->lines[out->nlines++] = b.data;
    }
    struct spec_walk w = {.p = p, .x = m};
    int kind;
    while (next_spec(&w, &kind)) {
        int len;
        const char *t = tok_of(p, w.i - 1, &len);
        char *line = NULL;
        if (kind == KS_TYPE || kind == KS_USE || kind == KS_IMPLICIT ||
            kind == KS_PROCEDURE)
            line = km_xstrndup(t, (size_t)len);
        else if (kind == KS_INTERFACE && len > 9 &&
                 strncmp(t, "interface", 9) == 0)
            line = line_of("procedure", t + 9, len - 9);
        if (!line)
            continue;
        KM_GROW(out->lines, cap, out->nlines + 1);
        out->lines[out->nlines++] = line;
    }
    /* a module function in a unit's place would be called twice */
    for (int f = 0; f < p->nunits; f++) {
        const struct km_unit *u = &p->units[f];
        if (u->host != m || !u->name)
            continue;
        KM_GROW(out->lines, cap, out->nlines + 1);
        out->lines[out->nlines++] =
            line_of("procedure", u->name, (int)strlen(u->name));
    }
}

void km_collect_modules(struct km_program *p)
{
    for (int m = 0; m < p->nunits; m++) {
        const struct km_unit *u = &p->units[m];
        if (u->kind != KM_U_MODULE || !u->name || module_named(p, u->name))
            continue;
        struct km_module mod = {0};
        module_lines(p, m, &mod);
        km_add_module(p, km_xstrdup(u->name), mod.lines, mod.nlines);
    }
}

void km_add_module(struct km_program *p, char *name, char **lines,
                   int nlines)
{
    KM_GROW(p->modules, p->modulecap, p->nmodules + 1);
    p->modules[p->nmodules++] =
        (struct km_module){.name = name, .lines = lines, .nlines = nlines};
}

void km_adopt_modules(struct km_program *p, const struct km_program *from)
{
    for (int k = 0; k < from->nmodules; k++) {
        const struct km_module *m = &from->modules[k];
        if (module_named(p, m->name))
            continue;
        char **lines = km_xcalloc((size_t)m->nlines + 1, sizeof *lines);
        for (int i = 0; i < m->nlines; i++)
            lines[i] = km_xstrdup(m->lines[i]);
        km_add_module(p, km_xstrdup(m->name), lines, m->nlines);
    }
}

/* Add `module` to names[0..*n) unless p holds it, it is known elsewhere
 * or it is there already. */
static void want(const struct km_program *p, const char *t, int len,
                 char ***names, int *n, int *cap)
{
    char module[NAME_MAX_], orig[NAME_MAX_];
    use_gives(t, len, "", module, orig);
    if (!module[0] || module_named(p, module) || is_known_elsewhere(module))
        return;
    for (int k = 0; k < *n; k++)
        if (strcmp((*names)[k], module) == 0)
            return;
    KM_GROW(*names, *cap, *n + 1);
    (*names)[(*n)++] = km_xstrdup(module);
}

int km_missing_modules(const struct km_program *p, char ***names)
{
    int n = 0, cap = 0;
    *names = NULL;
    for (int i = 0; p->info && i < p->src->nstmts; i++)
        if (p->info[i].kind == KS_USE) {
            int len;
            const char *t = tok_of(p, i, &len);
            want(p, t, len, names, &n, &cap);
        }
    for (int k = 0; k < p->nmodules; k++)
        for (int i = 0; i < p->modules[k].nlines; i++) {
            const char *t = p->modules[k].lines[i];
            if (strncmp(t, "use", 3) == 0)
                want(p, t, (int)strlen(t), names, &n, &cap);
        }
    return n;
}

void km_modules_free(struct km_program *p)
{
    for (int k = 0; k < p->nmodules; k++) {
        for (int i = 0; i < p->modules[k].nlines; i++)
            free(p->modules[k].lines[i]);
        free(p->modules[k].lines);
        free(p->modules[k].name);
    }
    free(p->modules);
    p->modules = NULL;
    p->nmodules = p->modulecap = 0;
}
