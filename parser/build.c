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
        u->header = -1;
        u->first = stmt;
        u->end = -1;
        u->last = -1;
        u->host = -1;
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
    unit_for(B, stmt);
    info(B, stmt)->kind = kind;
    info(B, stmt)->executable = is_executable(kind);
}

int km_b_assignment(struct km_builder *B, int stmt, struct km_tokv name,
                    struct km_argl subscripts, bool has_subscripts)
{
    struct km_unit *u = unit_for(B, stmt);
    /* Before the first executable statement, NAME(a, b) = ... with NAME
     * not an array (of the unit, or of its host for an internal
     * procedure) and only names as arguments defines a statement
     * function. */
    if (has_subscripts && u->first_exec < 0 && subscripts.all_names &&
        !subscripts.has_range) {
        char *n = tok_text(B, name);
        bool array = km_names_has(&B->arrays, B->unit, n) ||
                     (u->host >= 0 && km_names_has(&B->arrays, u->host, n));
        free(n);
        if (!array)
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
    km_b_kind(B, stmt, kind);
    struct km_sinfo *in = info(B, stmt);
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
        return;
    }
    if (B->nifs == 0) {
        km_b_error(B, stmt, -1, "%s without a block IF",
                   kind == KS_ENDIF ? "END IF" :
                   kind == KS_ELSE ? "ELSE" : "ELSE IF");
        return;
    }
    if (kind == KS_ENDIF)
        B->nifs--;
}

void km_b_unit(struct km_builder *B, int stmt, int ukind, struct km_tokv name,
               bool named, bool recursive)
{
    static const int kinds[] = {0, KS_PROGRAM, KS_SUBROUTINE, KS_FUNCTION,
                                KS_BLOCKDATA};
    if (B->interface > 0) {
        /* an interface body: part of the enclosing unit's declarations */
        km_b_kind(B, stmt, kinds[ukind]);
        if (named)
            info(B, stmt)->name = tok_text(B, name);
        return;
    }
    int host = -1;
    if (B->host >= 0 && B->unit == B->host) {
        host = B->host;   /* an internal procedure */
        B->unit = -1;
    } else if (B->unit >= 0) {
        struct km_unit *open = &B->prog->units[B->unit];
        km_b_error(B, stmt, -1, "a new program unit begins before the END "
                   "of %s %s", open->kind == KM_U_PROGRAM ? "program" :
                   open->kind == KM_U_BLOCKDATA ? "block data" : "routine",
                   open->name);
        B->unit = -1;
    }
    struct km_unit *u = unit_for(B, stmt);
    free(u->name);
    u->kind = ukind;
    u->name = named ? tok_text(B, name)
            : km_xstrdup(ukind == KM_U_BLOCKDATA ? "_BLOCKDATA" : "MAIN");
    u->named = named;
    u->header = stmt;
    u->host = host;
    u->recursive = recursive;
    info(B, stmt)->kind = kinds[ukind];
    info(B, stmt)->name = km_xstrdup(u->name);
    if (named)
        info(B, stmt)->name_tok = name.off;
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
    if (B->unit == B->host) {
        B->host = -1;     /* the host's END, after its internal procedures */
        return;
    }
    u->end = stmt;
    end_executable_part(B, stmt);
}

void km_b_contains(struct km_builder *B, int stmt)
{
    struct km_unit *u = unit_for(B, stmt);
    km_b_kind(B, stmt, KS_CONTAINS);
    if (B->host >= 0 || u->host >= 0 || B->interface > 0) {
        km_b_error(B, stmt, -1, "CONTAINS inside an internal procedure or "
                   "an interface");
        return;
    }
    if (u->first_exec < 0)
        u->first_exec = stmt;
    if (u->spec_end < 0)
        u->spec_end = stmt;
    u->end = stmt;
    B->host = B->unit;
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
    if (B->interface == 0)
        for (int i = first; i < B->nents; i++)
            if (all || B->ents[i].dims)
                km_b_array(B, B->ents[i].name);
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
    struct km_unit *u = unit_for(B, stmt);
    struct km_sinfo *in = info(B, stmt);
    const struct km_stmt *s = &B->src->stmts[stmt];
    in->unit = B->unit;
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
