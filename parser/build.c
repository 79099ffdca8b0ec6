/*
 * build.c — program units, loops and labels from the grammar's actions.
 *
 * See build.h.  Everything here is about structure the grammar cannot see:
 * which unit a statement belongs to, where declarations end, which DO a
 * labeled statement terminates, which assignments define statement
 * functions.  It never looks at raw source text; names and labels come from
 * the token text.
 */
#include "parser/build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/classify.h"
#include "lexer/tokens.h"

/* --- helpers --------------------------------------------------------------- */

void km_b_error(struct km_builder *B, int stmt, int tok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = 0, col = 0;
    const struct km_stmt *s = &B->src->stmts[stmt];
    if (tok < 0)
        tok = s->tok;
    km_tok_position(B->src, stmt, tok, &line, &col);
    km_error(B->diag, km_stmt_path(B->src, s), line, col, "%s", msg);
}

static char *tok_text(const struct km_builder *B, struct km_tokv t)
{
    return km_xstrndup(B->src->tok.data + t.off, (size_t)t.len);
}

/* The value of a label token: digits, 1-99999; 0 if out of range. */
int km_b_label_value(const struct km_builder *B, struct km_tokv t)
{
    const char *p = B->src->tok.data + t.off;
    int n = 0;
    for (int i = 0; i < t.len; i++) {
        if (p[i] < '0' || p[i] > '9' || n > 99999)
            return 0;
        n = n * 10 + (p[i] - '0');
    }
    return n <= 99999 ? n : 0;
}

static struct km_sinfo *info(struct km_builder *B, int stmt)
{
    return &B->prog->info[stmt];
}

/* The open unit; a statement outside any unit begins a main program. */
static struct km_unit *unit_for(struct km_builder *B, int stmt)
{
    struct km_program *p = B->prog;
    if (B->unit < 0) {
        KM_GROW(p->units, p->unitcap, p->nunits + 1);
        struct km_unit *u = &p->units[p->nunits];
        memset(u, 0, sizeof *u);
        u->kind = KM_U_PROGRAM;
        u->name = km_xstrdup("MAIN");
        u->qualified = km_xstrdup("MAIN");
        u->header = -1;
        u->first = stmt;
        u->end = -1;
        u->last = -1;
        u->host = -1;
        u->contains = -1;
        u->spec_end = -1;
        u->first_exec = -1;
        B->unit = p->nunits++;
    }
    return &p->units[B->unit];
}

static bool is_executable(int kind)
{
    return kind >= KS_ASSIGNMENT && kind <= KS_ALLOCATE;
}

/* --- constructs ------------------------------------------------------------- */

static void push_construct(struct km_builder *B, int stmt)
{
    KM_GROW(B->cons, B->conscap, B->ncons + 1);
    B->cons[B->ncons].stmt = stmt;
    B->cons[B->ncons].name = NULL;
    B->ncons++;
}

/* Close the construct that statement `stmt` opened, and any left open
 * inside it (diagnosed where they end wrongly). */
static void pop_construct(struct km_builder *B, int stmt)
{
    int i = B->ncons - 1;
    while (i >= 0 && B->cons[i].stmt != stmt)
        i--;
    if (i < 0)
        return;
    while (B->ncons > i) {
        B->ncons--;
        free(B->cons[B->ncons].name);
    }
}

static int innermost_construct(const struct km_builder *B)
{
    return B->ncons > 0 ? B->cons[B->ncons - 1].stmt : -1;
}

void km_b_name_construct(struct km_builder *B, int stmt, struct km_tokv name)
{
    /* the construct this statement opened, unless it closed at once */
    if (B->ncons > 0 && B->cons[B->ncons - 1].stmt == stmt) {
        free(B->cons[B->ncons - 1].name);
        B->cons[B->ncons - 1].name = km_xstrndup(B->src->tok.data + name.off,
                                                 (size_t)name.len);
    }
}

void km_b_exit(struct km_builder *B, int stmt, int kind, struct km_tokv name)
{
    unit_for(B, stmt);
    for (int i = B->ncons - 1; i >= 0; i--) {
        const char *n = B->cons[i].name;
        if (n && (int)strlen(n) == name.len &&
            memcmp(n, B->src->tok.data + name.off, (size_t)name.len) == 0) {
            int target = B->cons[i].stmt;
            int k = B->prog->info[target].kind;
            if (kind == KS_CYCLE && k != KS_DO && k != KS_DO_WHILE)
                km_b_error(B, stmt, name.off, "CYCLE names a construct "
                           "that is not a DO loop");
            B->prog->info[stmt].exit_target = target;
            return;
        }
    }
    km_b_error(B, stmt, name.off, "no open construct is named %.*s",
               name.len, B->src->tok.data + name.off);
}

static const char *end_text(int kind)
{
    switch (kind) {
    case KS_ENDSELECT: return "END SELECT";
    case KS_ENDWHERE: return "END WHERE";
    case KS_ENDFORALL: return "END FORALL";
    case KS_ENDBLOCK: return "END BLOCK";
    case KS_ENDASSOCIATE: return "END ASSOCIATE";
    default: return "END CRITICAL";
    }
}

/* SELECT, WHERE, FORALL, BLOCK, ASSOCIATE, CRITICAL and their ends. */
static void construct_statement(struct km_builder *B, int stmt, int kind)
{
    if (km_opens_construct(kind)) {
        push_construct(B, stmt);
        if (kind == KS_WHERE || kind == KS_FORALL)
            B->concurrent++;
        B->critical += kind == KS_CRITICAL;
    } else if (km_closes_construct(kind)) {
        int open = innermost_construct(B);
        int ok = open >= 0 ? B->prog->info[open].kind : KS_NONE;
        bool match = (kind == KS_ENDSELECT && ok == KS_SELECT) ||
                     (kind == KS_ENDWHERE && ok == KS_WHERE) ||
                     (kind == KS_ENDFORALL && ok == KS_FORALL) ||
                     (kind == KS_ENDBLOCK && ok == KS_BLOCK) ||
                     (kind == KS_ENDASSOCIATE && ok == KS_ASSOCIATE) ||
                     (kind == KS_ENDCRITICAL && ok == KS_CRITICAL);
        if (!match) {
            km_b_error(B, stmt, -1, "%s does not match the construct open "
                       "here%s", end_text(kind), open >= 0 ? "" : " (none)");
            return;
        }
        if (ok == KS_WHERE || ok == KS_FORALL)
            B->concurrent--;
        B->critical -= ok == KS_CRITICAL;
        pop_construct(B, open);
    } else if (km_branches_construct(kind)) {
        int open = innermost_construct(B);
        int ok = open >= 0 ? B->prog->info[open].kind : KS_NONE;
        if ((kind == KS_CASE && ok != KS_SELECT) ||
            (kind == KS_ELSEWHERE && ok != KS_WHERE))
            km_b_error(B, stmt, -1, "%s outside its construct",
                       kind == KS_CASE ? "CASE" : "ELSEWHERE");
    }
}


/* --- arguments ------------------------------------------------------------- */

int km_b_arg(struct km_builder *B, int kind, struct km_tokv key,
             struct km_ev val)
{
    KM_GROW(B->args, B->argcap, B->nargs + 1);
    struct km_arg *a = &B->args[B->nargs];
    a->kind = kind;
    a->key = key;
    a->val = val;
    a->next = -1;
    return B->nargs++;
}

static bool lone_name(const struct km_arg *a)
{
    return a->kind == KM_ARG_EXPR && a->val.lone == KM_T_NAME;
}

struct km_argl km_b_list0(void)
{
    struct km_argl l = {-1, -1, 0, true, false};
    return l;
}

struct km_argl km_b_list1(struct km_builder *B, int arg)
{
    struct km_argl l = {arg, arg, 1, lone_name(&B->args[arg]),
                        B->args[arg].kind == KM_ARG_RANGE};
    return l;
}

struct km_argl km_b_list_add(struct km_builder *B, struct km_argl l, int arg)
{
    B->args[l.tail].next = arg;
    l.tail = arg;
    l.count++;
    l.all_names = l.all_names && lone_name(&B->args[arg]);
    l.has_range = l.has_range || B->args[arg].kind == KM_ARG_RANGE;
    return l;
}

/* --- labels ------------------------------------------------------------------ */

static void note_label(struct km_builder *B, int label)
{
    struct km_unit *u = &B->prog->units[B->unit];
    if (label > u->max_label)
        u->max_label = label;
}

void km_b_label_ref(struct km_builder *B, struct km_tokv label, int kind)
{
    struct km_program *p = B->prog;
    unit_for(B, label.stmt);
    int n = km_b_label_value(B, label);
    if (n == 0) {
        char *text = tok_text(B, label);
        km_b_error(B, label.stmt, label.off, "label %s out of range 1-99999",
                   text);
        free(text);
        return;
    }
    KM_GROW(p->refs, p->refcap, p->nrefs + 1);
    p->refs[p->nrefs].stmt = label.stmt;
    p->refs[p->nrefs].label = n;
    p->refs[p->nrefs].kind = kind;
    p->refs[p->nrefs].tok = label.off;
    p->nrefs++;
    note_label(B, n);
}

/* --- statements -------------------------------------------------------------- */

void km_b_kind(struct km_builder *B, int stmt, int kind)
{
    /* an INCLUDE between units (of a file holding #defines, say) begins
     * none: what it holds may */
    if (kind != KS_INCLUDE || B->unit >= 0)
        unit_for(B, stmt);
    info(B, stmt)->kind = kind;
    info(B, stmt)->executable = is_executable(kind);
    construct_statement(B, stmt, kind);
}

struct km_lhs km_b_lhs(struct km_tokv name)
{
    struct km_lhs l = {name, km_b_list0(), 0, false};
    return l;
}

struct km_lhs km_b_lhs_part(struct km_lhs l, struct km_argl list, bool paren)
{
    if (l.parts == 0 && paren) {
        l.subs = list;
        l.subscripted = true;
    }
    l.parts++;
    return l;
}

/* Is `name` an array of unit u or of a unit it is inside? */
static bool known_array(const struct km_builder *B, int u, const char *name)
{
    for (; u >= 0; u = B->prog->units[u].host)
        if (km_names_has(&B->arrays, u, name))
            return true;
    return false;
}

int km_b_assignment(struct km_builder *B, int stmt, struct km_lhs lhs)
{
    struct km_unit *u = unit_for(B, stmt);
    /* Before the first executable statement, NAME(a, b) = ... with NAME
     * not an array (of the unit, or of a host) and only names as
     * arguments defines a statement function.  Where USE association can
     * bring arrays in unseen, only a name declared here without
     * dimensions can be one. */
    if (lhs.parts == 1 && lhs.subscripted && u->first_exec < 0 &&
        lhs.subs.all_names && !lhs.subs.has_range) {
        char *n = tok_text(B, lhs.name);
        bool function = !known_array(B, B->unit, n) &&
                        (!u->uses || km_names_has(&B->scalars, B->unit, n));
        free(n);
        if (function)
            return KS_STMT_FUNCTION;
    }
    return KS_ASSIGNMENT;
}

void km_b_logical_if(struct km_builder *B, int stmt, int action,
                     int action_tok, int cond_end_tok)
{
    km_b_kind(B, stmt, KS_IF_LOGICAL);
    struct km_sinfo *in = info(B, stmt);
    in->action = action;
    in->action_tok = action_tok;
    in->cond_end_tok = cond_end_tok;
    if (!is_executable(action) || action == KS_IF_LOGICAL)
        km_b_error(B, stmt, action_tok,
                   "this statement cannot follow a logical IF");
}

void km_b_goto(struct km_builder *B, int stmt, int form)
{
    unit_for(B, stmt);
    info(B, stmt)->goto_form = form;
}

void km_b_call(struct km_builder *B, int stmt, struct km_tokv name,
               struct km_argl args)
{
    struct km_unit *u = unit_for(B, stmt);
    struct km_sinfo *in = info(B, stmt);
    in->name = tok_text(B, name);
    in->name_tok = name.off;
    if (!km_names_has(&B->calls, B->unit, in->name)) {
        KM_GROW(u->calls, u->callcap, u->ncalls + 1);
        u->calls[u->ncalls++] = km_xstrdup(in->name);
        km_names_add(&B->calls, B->unit, u->calls[u->ncalls - 1]);
    }
    for (int a = args.head; a >= 0; a = B->args[a].next)
        if (B->args[a].kind == KM_ARG_ALTRET)
            km_b_label_ref(B, B->args[a].key, KM_REF_JUMP);
}

static bool key_is(const struct km_builder *B, const struct km_arg *a,
                   const char *key)
{
    return a->key.len == (int)strlen(key) &&
           memcmp(B->src->tok.data + a->key.off, key, strlen(key)) == 0;
}

void km_b_io(struct km_builder *B, int stmt, int kind, struct km_argl ctl,
             struct km_ev fmt)
{
    (void)kind;
    unit_for(B, stmt);
    if (fmt.lone == KM_T_INTCONST)
        km_b_label_ref(B, fmt.tok, KM_REF_FORMAT);
    int position = 0;
    for (int i = ctl.head; i >= 0; i = B->args[i].next) {
        const struct km_arg *a = &B->args[i];
        position++;
        if (a->kind == KM_ARG_KEYWORD && a->val.lone == KM_T_INTCONST) {
            if (key_is(B, a, "END") || key_is(B, a, "ERR") ||
                key_is(B, a, "EOR"))
                km_b_label_ref(B, a->val.tok, KM_REF_JUMP);
            else if (key_is(B, a, "FMT"))
                km_b_label_ref(B, a->val.tok, KM_REF_FORMAT);
        } else if (a->kind == KM_ARG_EXPR && position == 2 &&
                   a->val.lone == KM_T_INTCONST &&
                   (kind == KS_READ || kind == KS_WRITE)) {
            km_b_label_ref(B, a->val.tok, KM_REF_FORMAT);
        }
    }
}

void km_b_do_labeled(struct km_builder *B, int stmt, int kind,
                     struct km_tokv label)
{
    int value = km_b_label_value(B, label);
    km_b_label_ref(B, label, KM_REF_DO);
    if (value == 0) {
        km_b_kind(B, stmt, kind);   /* diagnosed: no loop to close */
        info(B, stmt)->do_end = -1;
        return;
    }
    km_b_do(B, stmt, kind, value);
}

void km_b_do(struct km_builder *B, int stmt, int kind, int label)
{
    bool concurrent = kind == KS_DO_CONCURRENT;
    km_b_kind(B, stmt, concurrent ? KS_DO : kind);
    struct km_sinfo *in = info(B, stmt);
    in->concurrent = concurrent;
    B->concurrent += concurrent;
    push_construct(B, stmt);
    in->do_label = label;
    in->do_depth = B->ndos + 1;
    in->do_end = -1;
    KM_GROW(B->dos, B->docap, B->ndos + 1);
    B->dos[B->ndos].stmt = stmt;
    B->dos[B->ndos].label = label;
    B->ndos++;
    if (label > 0) {
        if (!B->open_labels)
            B->open_labels = km_xcalloc(100000, sizeof *B->open_labels);
        B->open_labels[label]++;
    }
}

/* Close the innermost open DO loop, which ends at `stmt`. */
static void pop_do(struct km_builder *B, int stmt)
{
    struct km_open_do *d = &B->dos[--B->ndos];
    info(B, d->stmt)->do_end = stmt;
    B->concurrent -= info(B, d->stmt)->concurrent;
    pop_construct(B, d->stmt);
    if (d->label > 0)
        B->open_labels[d->label]--;
}

void km_b_enddo(struct km_builder *B, int stmt)
{
    km_b_kind(B, stmt, KS_ENDDO);
    int label = B->src->stmts[stmt].label;
    if (B->ndos == 0) {
        km_b_error(B, stmt, -1, "END DO without a DO");
        return;
    }
    struct km_open_do *d = &B->dos[B->ndos - 1];
    if (d->label != 0 && d->label != label) {
        km_b_error(B, stmt, -1,
                   "END DO ends the DO loop of line %d, which ends at "
                   "label %d", B->src->stmts[d->stmt].first_line, d->label);
        return;
    }
    info(B, stmt)->ends_dos = 1;
    pop_do(B, stmt);
}

void km_b_if_block(struct km_builder *B, int stmt, int kind)
{
    km_b_kind(B, stmt, kind);
    if (kind == KS_IF_BLOCK) {
        KM_GROW(B->ifs, B->ifcap, B->nifs + 1);
        B->ifs[B->nifs++] = stmt;
        push_construct(B, stmt);
        return;
    }
    if (B->nifs == 0) {
        km_b_error(B, stmt, -1, "%s without a block IF",
                   kind == KS_ENDIF ? "END IF" :
                   kind == KS_ELSE ? "ELSE" : "ELSE IF");
        return;
    }
    if (kind == KS_ENDIF)
        pop_construct(B, B->ifs[--B->nifs]);
}

/* The statement kind of each unit kind's header. */
static const int header_kind[] = {0, KS_PROGRAM, KS_SUBROUTINE, KS_FUNCTION,
                                  KS_BLOCKDATA, KS_MODULE, KS_SUBMODULE};

static const char *unit_kind_text(int kind)
{
    switch (kind) {
    case KM_U_PROGRAM: return "program";
    case KM_U_BLOCKDATA: return "block data";
    case KM_U_MODULE: return "module";
    case KM_U_SUBMODULE: return "submodule";
    default: return "routine";
    }
}

/* The name a unit is measured under: NAME, MODULE::NAME for a procedure
 * of a module or submodule, HOST/NAME for an internal procedure (the
 * host's own measured name before the slash). */
static char *qualified_name(const struct km_program *p, const struct km_unit *u)
{
    if (u->host < 0)
        return km_xstrdup(u->name);
    const struct km_unit *h = &p->units[u->host];
    struct km_buf b = {0};
    if (h->kind == KM_U_MODULE || h->kind == KM_U_SUBMODULE)
        km_buf_printf(&b, "%s::%s", h->qualified, u->name);
    else
        km_buf_printf(&b, "%s/%s", h->qualified, u->name);
    return b.data;
}

/* The unit a new one opened at `stmt` is contained in (-1: none); a unit
 * still open and not past its CONTAINS is an error. */
static int host_for_new_unit(struct km_builder *B, int stmt)
{
    if (B->unit < 0)
        return -1;
    struct km_unit *open = &B->prog->units[B->unit];
    if (open->contains >= 0)
        return B->unit;
    km_b_error(B, stmt, -1, "a new program unit begins before the END of "
               "%s %s", unit_kind_text(open->kind), open->name);
    B->unit = -1;
    return -1;
}

/* PURE, or ELEMENTAL without IMPURE. */
static bool is_pure(int prefixes)
{
    return (prefixes & KM_P_PURE) && !(prefixes & KM_P_IMPURE);
}

/* Open unit `ukind` named `name` (NULL: unnamed) at its header `stmt`. */
static struct km_unit *open_unit(struct km_builder *B, int stmt, int ukind,
                                 char *name, int prefixes)
{
    int host = host_for_new_unit(B, stmt);
    B->unit = -1;
    struct km_unit *u = unit_for(B, stmt);
    const struct km_unit *h = host >= 0 ? &B->prog->units[host] : NULL;
    free(u->name);
    free(u->qualified);
    u->kind = ukind;
    u->named = name != NULL;
    u->name = name ? name
            : km_xstrdup(ukind == KM_U_BLOCKDATA ? "_BLOCKDATA" : "MAIN");
    u->header = stmt;
    u->host = host;
    u->recursive = prefixes & KM_P_RECURSIVE;
    u->pure = is_pure(prefixes) || (h && h->pure);
    u->uses = h && h->uses;
    u->qualified = qualified_name(B->prog, u);
    info(B, stmt)->kind = header_kind[ukind];
    info(B, stmt)->name = km_xstrdup(u->name);
    return u;
}

/* An interface body with the MODULE prefix, in the open (sub)module. */
static void add_separate(struct km_builder *B, int ukind, const char *name,
                         bool pure)
{
    if (B->unit < 0)
        return;
    struct km_program *p = B->prog;
    struct km_buf q = {0};
    km_buf_printf(&q, "%s::%s", p->units[B->unit].qualified, name);
    KM_GROW(p->separates, p->separatecap, p->nseparates + 1);
    p->separates[p->nseparates++] = (struct km_separate){
        .qualified = q.data, .kind = ukind, .pure = pure, .unit = B->unit};
}

void km_inherit_interfaces(struct km_program *p,
                           const struct km_program *from)
{
    if (from->nseparates == 0)
        return;           /* (kmrun tries every pair of files) */
    for (int u = 0; u < p->nunits; u++) {
        struct km_unit *un = &p->units[u];
        for (int k = 0; un->inherits && k < from->nseparates; k++) {
            const struct km_separate *sep = &from->separates[k];
            if (strcmp(sep->qualified, un->qualified) != 0)
                continue;
            un->kind = sep->kind;
            un->pure = sep->pure;
            un->inherits = false;
        }
        /* hosts come first: what is inside a PURE procedure is too */
        if (un->host >= 0 && p->units[un->host].pure)
            un->pure = true;
    }
}

void km_b_unit(struct km_builder *B, int stmt, int ukind, struct km_tokv name,
               bool named, int prefixes)
{
    if (B->interface > 0) {
        /* an interface body: part of the enclosing unit's declarations */
        km_b_kind(B, stmt, header_kind[ukind]);
        if (named)
            info(B, stmt)->name = tok_text(B, name);
        if (named && (prefixes & KM_P_MODULE))
            add_separate(B, ukind, info(B, stmt)->name, is_pure(prefixes));
        return;
    }
    open_unit(B, stmt, ukind, named ? tok_text(B, name) : NULL, prefixes);
    if (named)
        info(B, stmt)->name_tok = name.off;
}

/* The last name in a text: SUBMODULE (PARENT:ANCESTOR) NAME's name. */
static char *last_name(const struct km_builder *B, struct km_tokv t)
{
    const char *p = B->src->tok.data + t.off;
    int end = t.len;
    while (end > 0 && p[end - 1] == ' ')
        end--;
    int start = end;
    while (start > 0 && p[start - 1] != ')' && p[start - 1] != ':' &&
           p[start - 1] != ' ')
        start--;
    return km_xstrndup(p + start, (size_t)(end - start));
}

/* The first name in a text: the module a submodule descends from. */
static char *first_name(const struct km_builder *B, struct km_tokv t)
{
    const char *p = B->src->tok.data + t.off;
    int start = 0;
    while (start < t.len && (p[start] == '(' || p[start] == ' '))
        start++;
    int end = start;
    while (end < t.len && p[end] != ')' && p[end] != ':')
        end++;
    return km_xstrndup(p + start, (size_t)(end - start));
}

/* A submodule's procedures are measured under the name of the module
 * whose interfaces they implement. */
void km_b_submodule(struct km_builder *B, int stmt, struct km_tokv text)
{
    struct km_unit *u = open_unit(B, stmt, KM_U_SUBMODULE,
                                  last_name(B, text), 0);
    free(u->qualified);
    u->qualified = first_name(B, text);
}

/* MODULE PROCEDURE: a list of names in an interface block, the header of
 * a separate module procedure after a (sub)module's CONTAINS. */
void km_b_module_procedure(struct km_builder *B, int stmt,
                           struct km_tokv text)
{
    const struct km_unit *open = B->unit >= 0 ? &B->prog->units[B->unit]
                                              : NULL;
    if (B->interface > 0 || !open || open->contains < 0 ||
        (open->kind != KM_U_MODULE && open->kind != KM_U_SUBMODULE)) {
        km_b_kind(B, stmt, KS_MODULE_PROCEDURE);
        return;
    }
    struct km_unit *u = open_unit(B, stmt, KM_U_SUBROUTINE,
                                  last_name(B, text), KM_P_MODULE);
    u->inherits = true;
    info(B, stmt)->kind = KS_MODULE_PROCEDURE;
}

void km_b_typedef(struct km_builder *B, int stmt, bool begin)
{
    km_b_kind(B, stmt, begin ? KS_TYPEDEF : KS_ENDTYPE);
    if (begin)
        B->typedef_depth++;
    else if (B->typedef_depth > 0)
        B->typedef_depth--;
    else
        km_b_error(B, stmt, -1, "END TYPE without TYPE");
}

void km_b_use(struct km_builder *B, int stmt)
{
    km_b_kind(B, stmt, KS_USE);
    unit_for(B, stmt)->uses = true;
}

void km_b_entry(struct km_builder *B, int stmt, struct km_tokv name)
{
    struct km_unit *u = unit_for(B, stmt);
    km_b_kind(B, stmt, KS_ENTRY);
    info(B, stmt)->name = tok_text(B, name);
    info(B, stmt)->name_tok = name.off;
    u->entries = km_xrealloc(u->entries, sizeof(int) * (size_t)(u->nentries + 1));
    u->entries[u->nentries++] = stmt;
    if (B->ndos > 0 || B->nifs > 0)
        km_b_error(B, stmt, -1, "ENTRY inside a DO loop or IF block");
}

/* The unit's executable part ends at `stmt` (its END or CONTAINS): every
 * DO loop and block IF must be closed. */
static void end_executable_part(struct km_builder *B, int stmt)
{
    const char *what = info(B, stmt)->kind == KS_CONTAINS ? "CONTAINS"
                                                           : "END";
    int line = B->src->stmts[stmt].first_line;
    for (int i = 0; i < B->ndos; i++) {
        if (B->dos[i].label)
            km_b_error(B, B->dos[i].stmt, -1,
                       "DO loop has no terminal statement with label %d "
                       "before the %s of line %d", B->dos[i].label, what,
                       line);
        else
            km_b_error(B, B->dos[i].stmt, -1,
                       "DO loop has no END DO before the %s of line %d",
                       what, line);
    }
    for (int i = 0; i < B->nifs; i++)
        km_b_error(B, B->ifs[i], -1, "block IF has no END IF before the %s "
                   "of line %d", what, line);
    while (B->ndos > 0)
        pop_do(B, -1);
    B->nifs = 0;
}

void km_b_end(struct km_builder *B, int stmt)
{
    struct km_unit *u = unit_for(B, stmt);
    km_b_kind(B, stmt, KS_END);
    info(B, stmt)->executable = false;
    if (B->interface > 0)
        return;           /* the end of an interface body */
    B->closing_unit = true;
    u->last = stmt;
    if (u->contains >= 0)
        return;           /* after its contained procedures */
    u->end = stmt;
    end_executable_part(B, stmt);
}

static bool is_module(const struct km_unit *u)
{
    return u->kind == KM_U_MODULE || u->kind == KM_U_SUBMODULE;
}

void km_b_contains(struct km_builder *B, int stmt)
{
    struct km_unit *u = unit_for(B, stmt);
    km_b_kind(B, stmt, KS_CONTAINS);
    if (B->typedef_depth > 0)
        return;           /* a type's bound procedures follow */
    bool internal = u->host >= 0 && !is_module(&B->prog->units[u->host]);
    if (u->contains >= 0 || internal || B->interface > 0) {
        km_b_error(B, stmt, -1, "CONTAINS inside an internal procedure or "
                   "an interface");
        return;
    }
    if (u->first_exec < 0)
        u->first_exec = stmt;
    if (u->spec_end < 0)
        u->spec_end = stmt;
    u->end = stmt;
    u->contains = stmt;
    end_executable_part(B, stmt);
}

void km_b_array(struct km_builder *B, struct km_tokv name)
{
    struct km_unit *u = unit_for(B, name.stmt);
    char *n = tok_text(B, name);
    if (km_names_has(&B->arrays, B->unit, n)) {
        free(n);
        return;
    }
    KM_GROW(u->arrays, u->arraycap, u->narrays + 1);
    u->arrays[u->narrays++] = n;
    km_names_add(&B->arrays, B->unit, n);
}

void km_b_entity(struct km_builder *B, struct km_tokv name, bool dims)
{
    KM_GROW(B->ents, B->entcap, B->nents + 1);
    B->ents[B->nents].name = name;
    B->ents[B->nents].dims = dims;
    B->nents++;
}

void km_b_attributes_end(struct km_builder *B)
{
    B->attr_split = B->nents;
}

static bool tok_is(const struct km_builder *B, struct km_tokv t,
                   const char *word)
{
    return t.len == (int)strlen(word) &&
           memcmp(B->src->tok.data + t.off, word, (size_t)t.len) == 0;
}

/* A type or attribute statement is complete: its names with dimensions,
 * or all of them after a DIMENSION attribute, are arrays. */
void km_b_declaration(struct km_builder *B, int stmt, bool f90)
{
    km_b_kind(B, stmt, KS_TYPE);
    int first = f90 ? B->attr_split : 0;
    bool all = false;
    for (int i = 0; f90 && i < first; i++)
        all = all || tok_is(B, B->ents[i].name, "DIMENSION");
    if (B->interface == 0 && B->typedef_depth == 0)
        for (int i = first; i < B->nents; i++) {
            if (all || B->ents[i].dims) {
                km_b_array(B, B->ents[i].name);
                continue;
            }
            char *n = tok_text(B, B->ents[i].name);
            if (km_names_has(&B->scalars, B->unit, n)) {
                free(n);
                continue;
            }
            struct km_unit *u = &B->prog->units[B->unit];
            KM_GROW(u->scalars, u->scalarcap, u->nscalars + 1);
            u->scalars[u->nscalars++] = n;
            km_names_add(&B->scalars, B->unit, n);
        }
    B->nents = 0;
    B->attr_split = 0;
}

void km_b_interface(struct km_builder *B, int stmt, bool begin)
{
    km_b_kind(B, stmt, begin ? KS_INTERFACE : KS_ENDINTERFACE);
    if (begin)
        B->interface++;
    else if (B->interface > 0)
        B->interface--;
    else
        km_b_error(B, stmt, -1, "END INTERFACE without INTERFACE");
}

void km_b_blanket_save(struct km_builder *B, int stmt)
{
    km_b_kind(B, stmt, KS_SAVE);
    unit_for(B, stmt)->blanket_save = true;
}

/* Close the DO loops whose terminal is this statement. */
static void end_loops(struct km_builder *B, int stmt, int label)
{
    int ended = 0;
    while (B->ndos > 0 && B->dos[B->ndos - 1].label == label) {
        pop_do(B, stmt);
        ended++;
    }
    info(B, stmt)->ends_dos = ended;
    if (B->open_labels && B->open_labels[label] > 0) {
        /* An outer loop ends here too, but loops nested in it do not.
         * Close them all, so that every loop is looked at once. */
        int i = B->ndos - 1;
        while (B->dos[i].label != label)
            i--;
        km_b_error(B, stmt, -1, "statement %d ends the DO loop of line %d "
                   "but not the loops nested in it", label,
                   B->src->stmts[B->dos[i].stmt].first_line);
        while (B->ndos > i)
            pop_do(B, stmt);
    }
    if (ended > 0) {
        int k = info(B, stmt)->kind;
        int a = k == KS_IF_LOGICAL ? info(B, stmt)->action : KS_NONE;
        if (k == KS_GOTO || k == KS_RETURN || k == KS_STOP ||
            k == KS_IF_ARITH || k == KS_DO || k == KS_DO_WHILE ||
            k == KS_IF_BLOCK || k == KS_ELSEIF || k == KS_ELSE ||
            k == KS_ENDIF || k == KS_END || a == KS_DO)
            km_b_error(B, stmt, -1, "a %s statement cannot end a DO loop",
                       km_skind_name(k));
    }
}

void km_b_end_statement(struct km_builder *B, int stmt)
{
    struct km_sinfo *in = info(B, stmt);
    if (in->kind == KS_INCLUDE && B->unit < 0) {
        in->unit = -1;        /* between units (see km_b_kind) */
        B->last_stmt = stmt;
        return;
    }
    struct km_unit *u = unit_for(B, stmt);
    const struct km_stmt *s = &B->src->stmts[stmt];
    in->unit = B->unit;
    bool opened = in->concurrent || in->kind == KS_WHERE ||
                  in->kind == KS_FORALL;
    in->in_concurrent = B->concurrent - opened > 0;
    in->in_critical = B->critical - (in->kind == KS_CRITICAL) > 0;
    in->do_parent = B->ndos > 0 ? B->dos[B->ndos - 1].stmt : -1;
    if (in->kind == KS_DO || in->kind == KS_DO_WHILE)
        in->do_parent = B->ndos > 1 ? B->dos[B->ndos - 2].stmt : -1;
    if (in->executable && u->first_exec < 0)
        u->first_exec = stmt;
    if ((in->executable || in->kind == KS_STMT_FUNCTION) && u->spec_end < 0)
        u->spec_end = stmt;
    if (s->label) {
        note_label(B, s->label);
        if (in->kind != KS_ENDDO && in->kind != KS_END)
            end_loops(B, stmt, s->label);
    }
    if (B->closing_unit) {
        if (u->first_exec < 0)
            u->first_exec = stmt;
        if (u->spec_end < 0)
            u->spec_end = stmt;
        if (B->interface > 0)
            km_b_error(B, stmt, -1, "INTERFACE block has no END INTERFACE");
        B->interface = 0;
        /* after an internal procedure, back to its host */
        B->unit = u->host >= 0 ? u->host : -1;
        B->closing_unit = false;
    }
    B->nargs = 0;
    B->nents = 0;
    B->last_stmt = stmt;
}

void km_b_bad_statement(struct km_builder *B, int stmt)
{
    unit_for(B, stmt);
    info(B, stmt)->kind = KS_NONE;
    info(B, stmt)->unit = B->unit;
    B->nargs = 0;
    B->nents = 0;
    B->closing_unit = false;
    B->last_stmt = stmt;
}
