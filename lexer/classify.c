/*
 * classify.c — statement kinds and token text (see classify.h).
 *
 * Each statement is first "crunched": blanks outside constants removed,
 * letters outside constants upper-cased.  A mask copy replaces the contents
 * of constants by MASK so that quotes, parentheses and `=` inside them
 * never count.  The kind is decided on the mask; the keywords found are
 * recorded as spans and written in lower case into the token text.
 */
#include "lexer/classify.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MASK '\001'
#define MAX_SPANS 32

static const char *const kind_names[KS_COUNT_] = {
    [KS_NONE] = "none",
    [KS_ASSIGNMENT] = "assignment", [KS_ASSIGN] = "assign",
    [KS_CALL] = "call", [KS_GOTO] = "goto",
    [KS_IF_LOGICAL] = "if-logical", [KS_IF_ARITH] = "if-arithmetic",
    [KS_IF_BLOCK] = "if-then", [KS_ELSEIF] = "else-if", [KS_ELSE] = "else",
    [KS_ENDIF] = "end-if", [KS_DO] = "do", [KS_DO_WHILE] = "do-while",
    [KS_DO_CONCURRENT] = "do-concurrent", [KS_ENDDO] = "end-do", [KS_CONTINUE] = "continue", [KS_EXIT] = "exit",
    [KS_CYCLE] = "cycle", [KS_RETURN] = "return", [KS_STOP] = "stop",
    [KS_PAUSE] = "pause", [KS_READ] = "read", [KS_WRITE] = "write",
    [KS_PRINT] = "print", [KS_OPEN] = "open", [KS_CLOSE] = "close",
    [KS_INQUIRE] = "inquire", [KS_REWIND] = "rewind",
    [KS_BACKSPACE] = "backspace", [KS_ENDFILE] = "endfile",
    [KS_FLUSH] = "flush", [KS_WAIT] = "wait",
    [KS_SELECT] = "select", [KS_CASE] = "case", [KS_ENDSELECT] = "end-select",
    [KS_WHERE] = "where", [KS_ELSEWHERE] = "elsewhere",
    [KS_ENDWHERE] = "end-where", [KS_WHERE_STMT] = "where-statement",
    [KS_FORALL] = "forall", [KS_ENDFORALL] = "end-forall",
    [KS_FORALL_STMT] = "forall-statement", [KS_BLOCK] = "block",
    [KS_ENDBLOCK] = "end-block", [KS_ASSOCIATE] = "associate",
    [KS_ENDASSOCIATE] = "end-associate", [KS_CRITICAL] = "critical",
    [KS_ENDCRITICAL] = "end-critical", [KS_SYNC] = "image-control",
    [KS_ALLOCATE] = "allocate",
    [KS_FORMAT] = "format", [KS_ENTRY] = "entry", [KS_DATA] = "data",
    [KS_INCLUDE] = "include", [KS_PROGRAM] = "program",
    [KS_SUBROUTINE] = "subroutine", [KS_FUNCTION] = "function",
    [KS_BLOCKDATA] = "block-data", [KS_END] = "end",
    [KS_CONTAINS] = "contains", [KS_MODULE] = "module",
    [KS_SUBMODULE] = "submodule", [KS_TYPE] = "type",
    [KS_IMPLICIT] = "implicit", [KS_DIMENSION] = "dimension",
    [KS_COMMON] = "common", [KS_EQUIVALENCE] = "equivalence",
    [KS_PARAMETER] = "parameter", [KS_EXTERNAL] = "external",
    [KS_INTRINSIC] = "intrinsic", [KS_SAVE] = "save",
    [KS_NAMELIST] = "namelist", [KS_POINTER] = "pointer",
    [KS_ATTRIBUTE] = "attribute", [KS_INTENT] = "intent", [KS_USE] = "use",
    [KS_PROCEDURE] = "procedure", [KS_INTERFACE] = "interface",
    [KS_ENDINTERFACE] = "end-interface",
    [KS_MODULE_PROCEDURE] = "module-procedure",
    [KS_TYPEDEF] = "type-definition", [KS_ENDTYPE] = "end-type",
    [KS_SPEC] = "specification",
    [KS_STMT_FUNCTION] = "statement-function",
};

bool km_opens_construct(int kind)
{
    return kind == KS_SELECT || kind == KS_WHERE || kind == KS_FORALL ||
           kind == KS_BLOCK || kind == KS_ASSOCIATE || kind == KS_CRITICAL;
}

bool km_branches_construct(int kind)
{
    return kind == KS_CASE || kind == KS_ELSEWHERE;
}

bool km_closes_construct(int kind)
{
    return kind == KS_ENDSELECT || kind == KS_ENDWHERE ||
           kind == KS_ENDFORALL || kind == KS_ENDBLOCK ||
           kind == KS_ENDASSOCIATE || kind == KS_ENDCRITICAL;
}

const char *km_skind_name(int kind)
{
    if (kind >= 0 && kind < KS_COUNT_ && kind_names[kind])
        return kind_names[kind];
    return "?";
}

/* --- crunching ------------------------------------------------------------ */

struct crunch {
    struct km_buf c;      /* crunched text */
    struct km_buf m;      /* the same with constants' contents masked */
    int *c2r;             /* crunched offset -> offset in the statement's raw */
    int cap;
};

/* Every character pushed consumes at least one of the statement's, so
 * crunch_stmt reserves room for all of them first and push never grows. */
static inline void push(struct crunch *cr, char c, char m, int raw)
{
    size_t at = cr->c.len++;
    cr->c2r[at] = raw;
    cr->c.data[at] = c;
    cr->m.data[at] = m;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static void crunch_stmt(const char *raw, int n, struct crunch *cr)
{
    cr->c.len = cr->m.len = 0;
    km_buf_reserve(&cr->c, (size_t)n + 1);
    km_buf_reserve(&cr->m, (size_t)n + 1);
    KM_GROW(cr->c2r, cr->cap, n + 1);
    int i = 0;
    while (i < n) {
        char ch = raw[i];
        if (ch == '\'' || ch == '"') {
            push(cr, ch, ch, i++);
            while (i < n) {
                if (raw[i] == ch) {
                    if (i + 1 < n && raw[i + 1] == ch) {
                        push(cr, ch, MASK, i);
                        push(cr, ch, MASK, i + 1);
                        i += 2;
                        continue;
                    }
                    push(cr, ch, ch, i++);
                    break;
                }
                push(cr, raw[i], MASK, i);
                i++;
            }
            continue;
        }
        if (blank(ch)) {
            i++;
            continue;
        }
        if (ch == 'H' || ch == 'h') {
            int k = km_hollerith_count(raw, i);
            if (k > 0 && k < n - i) {
                /* lower case: the scanner's sign of a Hollerith constant */
                push(cr, 'h', 'h', i++);
                for (; k > 0 && i < n; k--, i++)
                    push(cr, raw[i], MASK, i);
                continue;
            }
        }
        char u = upper(ch);
        push(cr, u, u, i++);
    }
    cr->m.len = cr->c.len;
    cr->c.data[cr->c.len] = '\0';
    cr->m.data[cr->m.len] = '\0';
}

/* --- classification ------------------------------------------------------- */

struct cls {
    const char *m;
    int n;
    int span[MAX_SPANS][2];
    int nspan;
    int sub_kind;
    int sub_off;
    int err_off;          /* where the statement went wrong, or -1 */
    const char *err;
};

static bool at(const struct cls *k, int i, const char *w)
{
    size_t l = strlen(w);
    return i >= 0 && (size_t)i + l <= (size_t)k->n &&
           memcmp(k->m + i, w, l) == 0;
}

static bool rest_is(const struct cls *k, int i, const char *w)
{
    return at(k, i, w) && i + (int)strlen(w) == k->n;
}

static int add_span(struct cls *k, int i, const char *w)
{
    if (k->nspan < MAX_SPANS) {
        k->span[k->nspan][0] = i;
        k->span[k->nspan][1] = i + (int)strlen(w);
        k->nspan++;
    }
    return i + (int)strlen(w);
}

/* After the parenthesis group opening at i, or -1 if unbalanced. */
static int close_paren(const struct cls *k, int i)
{
    int depth = 0;
    for (; i < k->n; i++) {
        if (k->m[i] == '(')
            depth++;
        else if (k->m[i] == ')' && --depth == 0)
            return i + 1;
    }
    return -1;
}

/* The first `ch` at parenthesis depth 0 from i on, or -1. */
static int find0(const struct cls *k, int i, char ch)
{
    int depth = 0;
    for (; i < k->n; i++) {
        char c = k->m[i];
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        else if (c == ch && depth == 0)
            return i;
    }
    return -1;
}

static int skip_digits(const struct cls *k, int i)
{
    while (i < k->n && isdigit((unsigned char)k->m[i]))
        i++;
    return i;
}

static bool name_start(char c)
{
    return c >= 'A' && c <= 'Z';
}

static bool name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
}

static int skip_name(const struct cls *k, int i)
{
    if (i >= k->n || !name_start(k->m[i]))
        return i;
    while (i < k->n && name_char(k->m[i]))
        i++;
    return i;
}

static bool fail(struct cls *k, int off, const char *msg)
{
    if (k->err_off < 0) {
        k->err_off = off;
        k->err = msg;
    }
    return false;
}

/* A type keyword at i: its length, or 0. */
static const char *type_keyword(const struct cls *k, int i)
{
    static const char *const types[] = {
        "DOUBLEPRECISION", "DOUBLECOMPLEX", "INTEGER", "REAL", "COMPLEX",
        "LOGICAL", "CHARACTER", "BYTE",
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        if (at(k, i, types[t]))
            return types[t];
    return NULL;
}

/* Skip a length specification `*8` or `*(...)` at i. */
static int skip_len(const struct cls *k, int i)
{
    if (i < k->n && k->m[i] == '*') {
        i++;
        if (i < k->n && k->m[i] == '(') {
            int j = close_paren(k, i);
            return j < 0 ? k->n : j;
        }
        return skip_digits(k, i);
    }
    return i;
}

static int classify_at(struct cls *k, int i, bool unit_start);

/* `IF (...)` at i: block, arithmetic or logical. */
static int classify_if(struct cls *k, int i)
{
    int p = close_paren(k, i + 2);
    if (p < 0)
        return fail(k, i + 2, "unbalanced parenthesis"), KS_NONE;
    add_span(k, i, "IF");
    if (rest_is(k, p, "THEN")) {
        add_span(k, p, "THEN");
        return KS_IF_BLOCK;
    }
    int j = skip_digits(k, p);
    int labels = j > p;
    while (labels && j < k->n && k->m[j] == ',') {
        int e = skip_digits(k, j + 1);
        if (e == j + 1)
            break;
        labels++;
        j = e;
    }
    if (labels >= 2 && j == k->n)
        return KS_IF_ARITH;
    if (p < k->n && name_start(k->m[p])) {
        if (k->sub_off >= 0)  /* IF (a) IF (b) ...: nothing can hold it */
            return fail(k, i, "a logical IF cannot hold another IF"),
                   KS_NONE;
        k->sub_off = p;
        k->sub_kind = classify_at(k, p, false);
        if (k->sub_kind == KS_NONE)
            return KS_NONE;
        return KS_IF_LOGICAL;
    }
    return fail(k, p, "expected a statement, THEN or labels after IF (...)"),
           KS_NONE;
}

/* Statements with `=` outside parentheses: DO, a logical IF whose statement
 * is an assignment, or an assignment. */
static int classify_with_equals(struct cls *k, int i, int eq)
{
    if (at(k, i, "DO")) {
        int j = skip_digits(k, i + 2);
        if (j < k->n && k->m[j] == ',')
            j++;
        int e = skip_name(k, j);
        if (e > j && e == eq && find0(k, eq + 1, ',') >= 0) {
            add_span(k, i, "DO");
            return KS_DO;
        }
    }
    if (at(k, i, "IF(")) {
        int p = close_paren(k, i + 2);
        if (p > 0 && p < eq && name_start(k->m[p]))
            return classify_if(k, i);
    }
    static const struct {
        const char *kw;
        int kind;
    } masked[] = {{"WHERE", KS_WHERE_STMT}, {"FORALL", KS_FORALL_STMT}};
    for (size_t w = 0; w < 2; w++) {
        int n = (int)strlen(masked[w].kw);
        if (at(k, i, masked[w].kw) && i + n < k->n && k->m[i + n] == '(') {
            int p = close_paren(k, i + n);
            if (p > 0 && p < eq && name_start(k->m[p])) {
                add_span(k, i, masked[w].kw);
                return masked[w].kind;
            }
        }
    }
    return KS_ASSIGNMENT;
}

/* Keyword statements that take the rest of the statement as their operand
 * and need nothing else recognised here. */
static const struct {
    const char *kw;
    int kind;
} simple[] = {
    {"CALL", KS_CALL}, {"GOTO", KS_GOTO}, {"RETURN", KS_RETURN},
    {"STOP", KS_STOP}, {"PAUSE", KS_PAUSE}, {"READ", KS_READ},
    {"WRITE", KS_WRITE}, {"PRINT", KS_PRINT}, {"OPEN", KS_OPEN},
    {"CLOSE", KS_CLOSE}, {"INQUIRE", KS_INQUIRE}, {"REWIND", KS_REWIND},
    {"BACKSPACE", KS_BACKSPACE}, {"ENDFILE", KS_ENDFILE},
    {"PROGRAM", KS_PROGRAM}, {"SUBROUTINE", KS_SUBROUTINE},
    {"FUNCTION", KS_FUNCTION}, {"BLOCKDATA", KS_BLOCKDATA},
    {"ENTRY", KS_ENTRY}, {"DIMENSION", KS_DIMENSION},
    {"VIRTUAL", KS_DIMENSION}, {"COMMON", KS_COMMON},
    {"EQUIVALENCE", KS_EQUIVALENCE}, {"PARAMETER", KS_PARAMETER},
    {"EXTERNAL", KS_EXTERNAL}, {"INTRINSIC", KS_INTRINSIC},
    {"SAVE", KS_SAVE}, {"DATA", KS_DATA}, {"NAMELIST", KS_NAMELIST},
    {"POINTER", KS_POINTER}, {"AUTOMATIC", KS_ATTRIBUTE},
    {"STATIC", KS_ATTRIBUTE}, {"VOLATILE", KS_ATTRIBUTE},
    {"INCLUDE", KS_INCLUDE},
    /* Fortran 90 statements found in fixed-form code and in the include
     * files of MPI libraries */
    {"ALLOCATABLE", KS_ATTRIBUTE}, {"OPTIONAL", KS_ATTRIBUTE},
    {"TARGET", KS_ATTRIBUTE}, {"INTENT", KS_INTENT},
    {"ALLOCATE", KS_ALLOCATE}, {"DEALLOCATE", KS_ALLOCATE},
    {"NULLIFY", KS_ALLOCATE}, {"USE", KS_USE},
    {"MODULEPROCEDURE", KS_MODULE_PROCEDURE}, {"PROCEDURE", KS_PROCEDURE},
    {"INTERFACE", KS_INTERFACE},
    /* Fortran 2003-2008 */
    {"FLUSH", KS_FLUSH}, {"WAIT", KS_WAIT},
    {"PROTECTED", KS_ATTRIBUTE}, {"VALUE", KS_ATTRIBUTE},
    {"ASYNCHRONOUS", KS_ATTRIBUTE}, {"CONTIGUOUS", KS_ATTRIBUTE},
    {"PUBLIC", KS_SPEC}, {"PRIVATE", KS_SPEC}, {"BIND", KS_SPEC},
    {"IMPORT", KS_SPEC}, {"GENERIC", KS_SPEC}, {"FINAL", KS_SPEC},
    {"SEQUENCE", KS_SPEC}, {"ENUMERATOR", KS_SPEC}, {"ENUM", KS_SPEC},
    {"CODIMENSION", KS_SPEC},
    {"SYNCALL", KS_SYNC}, {"SYNCIMAGES", KS_SYNC}, {"SYNCMEMORY", KS_SYNC},
    {"LOCK", KS_SYNC}, {"UNLOCK", KS_SYNC},
};

/* After a type specification at i (INTEGER*4, REAL(KIND=8), TYPE(T),
 * CLASS(*), DOUBLE PRECISION ...), its keyword spanned; i if none. */
static int skip_type_spec(struct cls *k, int i)
{
    const char *t = type_keyword(k, i);
    if (t) {
        add_span(k, i, t);
        int j = skip_len(k, i + (int)strlen(t));
        if (j == i + (int)strlen(t) && j < k->n && k->m[j] == '(') {
            int p = close_paren(k, j);
            return p < 0 ? j : p;
        }
        return j;
    }
    if (at(k, i, "TYPE(") || at(k, i, "CLASS(")) {
        int j = add_span(k, i, k->m[i] == 'T' ? "TYPE" : "CLASS");
        int p = close_paren(k, j);
        return p < 0 ? i : p;
    }
    return i;
}

/* A prefix word of a SUBROUTINE or FUNCTION statement at i, or NULL. */
static const char *prefix_word(const struct cls *k, int i)
{
    static const char *const words[] = {
        "RECURSIVE", "NON_RECURSIVE", "PURE", "IMPURE", "ELEMENTAL",
        "MODULE",
    };
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if (at(k, i, words[w]))
            return words[w];
    return NULL;
}

/* RESULT(...) and BIND(...) after a unit's name and dummy arguments. */
static void span_suffixes(struct cls *k, int j)
{
    j = skip_name(k, j);
    if (j < k->n && k->m[j] == '(')
        j = close_paren(k, j);
    while (j > 0 && j < k->n) {
        if (at(k, j, "RESULT("))
            j = close_paren(k, add_span(k, j, "RESULT"));
        else if (at(k, j, "BIND("))
            j = close_paren(k, add_span(k, j, "BIND"));
        else
            return;
    }
}

/* A SUBROUTINE or FUNCTION statement with prefixes (RECURSIVE, PURE,
 * ELEMENTAL, IMPURE, NON_RECURSIVE, MODULE, a type): its kind, or
 * KS_NONE with nothing spanned.  A type alone makes a FUNCTION statement
 * only where a unit may start: elsewhere INTEGER FUNCTIONX(N) declares an
 * array. */
static int classify_prefixed(struct cls *k, int i, bool unit_start)
{
    int nspan = k->nspan;
    int j = i;
    bool words = false, typed = false;
    for (;;) {
        const char *w = prefix_word(k, j);
        if (w) {
            j = add_span(k, j, w);
            words = true;
            continue;
        }
        int e = typed ? j : skip_type_spec(k, j);
        if (e == j)
            break;
        typed = true;
        j = e;
    }
    if ((words || (typed && unit_start)) && at(k, j, "FUNCTION")) {
        span_suffixes(k, add_span(k, j, "FUNCTION"));
        return KS_FUNCTION;
    }
    if (words && !typed && at(k, j, "SUBROUTINE")) {
        span_suffixes(k, add_span(k, j, "SUBROUTINE"));
        return KS_SUBROUTINE;
    }
    k->nspan = nspan;
    return KS_NONE;
}

static int classify_type(struct cls *k, int i, bool unit_start)
{
    int kind = classify_prefixed(k, i, unit_start);
    if (kind != KS_NONE)
        return kind;
    skip_type_spec(k, i);
    return KS_TYPE;
}

static int classify_implicit(struct cls *k, int i)
{
    int j = add_span(k, i, "IMPLICIT");
    if (rest_is(k, j, "NONE")) {
        add_span(k, j, "NONE");
        return KS_IMPLICIT;
    }
    for (;;) {
        const char *t = type_keyword(k, j);
        if (!t)
            return fail(k, j, "expected a type in IMPLICIT"), KS_NONE;
        add_span(k, j, t);
        j = skip_len(k, j + (int)strlen(t));
        if (j >= k->n || k->m[j] != '(')
            return fail(k, j, "expected '(' in IMPLICIT"), KS_NONE;
        j = close_paren(k, j);
        if (j < 0)
            return fail(k, k->n, "unbalanced parenthesis"), KS_NONE;
        if (j == k->n)
            return KS_IMPLICIT;
        if (k->m[j] != ',')
            return fail(k, j, "expected ',' in IMPLICIT"), KS_NONE;
        j++;
    }
}

/* END, END IF, END DO, END SUBROUTINE name, END SELECT ...: the kind, or
 * KS_NONE. */
static int classify_end(struct cls *k, int i)
{
    static const char *const units[] = {
        "PROGRAM", "SUBROUTINE", "FUNCTION", "BLOCKDATA", "MODULE",
        "SUBMODULE", "PROCEDURE",
    };
    static const struct {
        const char *kw;
        int kind;
    } constructs[] = {
        {"ENDIF", KS_ENDIF}, {"ENDDO", KS_ENDDO},
        {"ENDSELECT", KS_ENDSELECT}, {"ENDWHERE", KS_ENDWHERE},
        {"ENDFORALL", KS_ENDFORALL}, {"ENDASSOCIATE", KS_ENDASSOCIATE},
        {"ENDCRITICAL", KS_ENDCRITICAL}, {"ENDTYPE", KS_ENDTYPE},
        {"ENDENUM", KS_SPEC},
    };
    if (rest_is(k, i, "END")) {
        add_span(k, i, "END");
        return KS_END;
    }
    if (at(k, i, "ENDINTERFACE")) {
        add_span(k, i, "ENDINTERFACE");
        return KS_ENDINTERFACE;
    }
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        int j = i + 3;
        if (at(k, j, units[u]) &&
            skip_name(k, j + (int)strlen(units[u])) == k->n) {
            add_span(k, i, "END");
            add_span(k, j, units[u]);
            return KS_END;
        }
    }
    if (at(k, i, "ENDBLOCK") && skip_name(k, i + 8) == k->n) {
        add_span(k, i, "ENDBLOCK");
        return KS_ENDBLOCK;
    }
    for (size_t c = 0; c < sizeof constructs / sizeof constructs[0]; c++) {
        const char *kw = constructs[c].kw;
        if (at(k, i, kw) && skip_name(k, i + (int)strlen(kw)) == k->n) {
            add_span(k, i, kw);
            return constructs[c].kind;
        }
    }
    return KS_NONE;
}

static int classify_do(struct cls *k, int i)
{
    int j = skip_digits(k, i + 2);
    if (j < k->n && k->m[j] == ',' && j > i + 2)
        j++;
    if (at(k, j, "WHILE(")) {
        add_span(k, i, "DO");
        add_span(k, j, "WHILE");
        return KS_DO_WHILE;
    }
    if (j == i + 2 && at(k, j, "CONCURRENT(")) {
        add_span(k, i, "DO");
        add_span(k, j, "CONCURRENT");
        return KS_DO_CONCURRENT;
    }
    if (j == k->n) {
        add_span(k, i, "DO");
        return KS_DO;          /* DO with no control: loops until EXIT */
    }
    return KS_NONE;
}

/* Keyword `kw` at i, then a parenthesis group, then (if `name_after`) an
 * optional construct name, and nothing else: kind, else KS_NONE. */
static int keyword_paren(struct cls *k, int i, const char *kw, int kind,
                         bool name_after)
{
    int p = close_paren(k, i + (int)strlen(kw));
    if (p < 0)
        return fail(k, i, "unbalanced parenthesis"), KS_NONE;
    if (p != k->n && !(name_after && skip_name(k, p) == k->n))
        return KS_NONE;
    add_span(k, i, kw);
    return kind;
}

/* Keyword `kw` at i, then an optional construct name to the end. */
static int keyword_named(struct cls *k, int i, const char *kw, int kind)
{
    if (!at(k, i, kw) || skip_name(k, i + (int)strlen(kw)) != k->n)
        return KS_NONE;
    add_span(k, i, kw);
    return kind;
}

/* The statements of SELECT CASE / TYPE / RANK constructs. */
static int classify_select(struct cls *k, int i)
{
    static const char *const what[] = {"CASE(", "TYPE(", "RANK("};
    if (at(k, i, "SELECT")) {
        for (size_t w = 0; w < 3; w++)
            if (at(k, i + 6, what[w])) {
                add_span(k, i, "SELECT");
                add_span(k, i + 6, w == 0 ? "CASE" : w == 1 ? "TYPE" : "RANK");
                return KS_SELECT;
            }
        return KS_NONE;
    }
    static const char *const guards[] = {"CASE(", "TYPEIS(", "CLASSIS(",
                                         "RANK("};
    for (size_t g = 0; g < 4; g++)
        if (at(k, i, guards[g])) {
            int n = (int)strlen(guards[g]) - 1;
            char kw[16];
            memcpy(kw, guards[g], (size_t)n);
            kw[n] = '\0';
            int p = close_paren(k, i + n);
            if (p < 0 || skip_name(k, p) != k->n)
                return KS_NONE;
            add_span(k, i, kw);
            return KS_CASE;
        }
    static const char *const defaults[] = {"CASEDEFAULT", "CLASSDEFAULT",
                                           "RANKDEFAULT"};
    for (size_t d = 0; d < 3; d++) {
        int kind = keyword_named(k, i, defaults[d], KS_CASE);
        if (kind)
            return kind;
    }
    return KS_NONE;
}

/* TYPE name, TYPE :: name, TYPE, EXTENDS(T) :: name: a type definition. */
static int classify_typedef(struct cls *k, int i)
{
    int j = i + 4;
    if (at(k, j, ",") || at(k, j, "::") ||
        (j < k->n && name_start(k->m[j]) && skip_name(k, j) == k->n)) {
        add_span(k, i, "TYPE");
        return KS_TYPEDEF;
    }
    return KS_NONE;
}

/* The Fortran 90-2008 constructs and statements that begin with a
 * keyword; KS_NONE if none. */
static int classify_f90_keyword(struct cls *k, int i, bool unit_start)
{
    int kind = KS_NONE;
    if ((at(k, i, "SELECT") || at(k, i, "CASE") || at(k, i, "TYPEIS(") ||
         at(k, i, "CLASS") || at(k, i, "RANK")) &&
        (kind = classify_select(k, i)) != KS_NONE)
        return kind;
    if (at(k, i, "ELSEWHERE")) {
        int j = i + 9;
        if (j < k->n && k->m[j] == '(') {
            j = close_paren(k, j);
            if (j < 0)
                return fail(k, i, "unbalanced parenthesis"), KS_NONE;
        }
        if (skip_name(k, j) == k->n) {
            add_span(k, i, "ELSEWHERE");
            return KS_ELSEWHERE;
        }
    }
    if (at(k, i, "WHERE(") &&
        (kind = keyword_paren(k, i, "WHERE", KS_WHERE, false)) != KS_NONE)
        return kind;
    if (at(k, i, "FORALL(") &&
        (kind = keyword_paren(k, i, "FORALL", KS_FORALL, false)) != KS_NONE)
        return kind;
    if (at(k, i, "ASSOCIATE(") &&
        (kind = keyword_paren(k, i, "ASSOCIATE", KS_ASSOCIATE, false)))
        return kind;
    if (rest_is(k, i, "BLOCK")) {
        add_span(k, i, "BLOCK");
        return KS_BLOCK;
    }
    if (rest_is(k, i, "CRITICAL")) {
        add_span(k, i, "CRITICAL");
        return KS_CRITICAL;
    }
    if (at(k, i, "ERRORSTOP")) {
        add_span(k, i, "ERRORSTOP");
        return KS_STOP;
    }
    if (at(k, i, "SUBMODULE(")) {
        add_span(k, i, "SUBMODULE");
        return KS_SUBMODULE;
    }
    if (at(k, i, "ABSTRACTINTERFACE")) {
        add_span(k, i, "ABSTRACT");
        add_span(k, i + 8, "INTERFACE");
        return KS_INTERFACE;
    }
    if (at(k, i, "MODULE") && !at(k, i, "MODULEPROCEDURE")) {
        if ((kind = classify_prefixed(k, i, unit_start)) != KS_NONE)
            return kind;
        if (skip_name(k, i + 6) == k->n && i + 6 < k->n) {
            add_span(k, i, "MODULE");
            return KS_MODULE;
        }
    }
    if (prefix_word(k, i) &&
        (kind = classify_prefixed(k, i, unit_start)) != KS_NONE)
        return kind;
    if (at(k, i, "TYPE(") || at(k, i, "CLASS("))
        return classify_type(k, i, unit_start);
    if (at(k, i, "TYPE") && (kind = classify_typedef(k, i)) != KS_NONE)
        return kind;
    return KS_NONE;
}

static int classify_keyword(struct cls *k, int i, bool unit_start)
{
    int kind;
    if (at(k, i, "IF("))
        return classify_if(k, i);
    if ((kind = classify_f90_keyword(k, i, unit_start)) != KS_NONE)
        return kind;
    if (at(k, i, "ELSEIF(")) {
        int p = close_paren(k, i + 6);
        if (p < 0)
            return fail(k, i + 6, "unbalanced parenthesis"), KS_NONE;
        if (!rest_is(k, p, "THEN"))
            return fail(k, p, "expected THEN after ELSE IF (...)"), KS_NONE;
        add_span(k, i, "ELSEIF");
        add_span(k, p, "THEN");
        return KS_ELSEIF;
    }
    if (at(k, i, "ELSE") && !at(k, i, "ELSEWHERE") &&
        skip_name(k, i + 4) == k->n) {
        add_span(k, i, "ELSE");
        return KS_ELSE;
    }
    if (at(k, i, "END") && (kind = classify_end(k, i)) != KS_NONE)
        return kind;
    if (type_keyword(k, i))
        return classify_type(k, i, unit_start);
    if (at(k, i, "DO") && (kind = classify_do(k, i)) != KS_NONE)
        return kind;
    if (rest_is(k, i, "CONTINUE")) {
        add_span(k, i, "CONTINUE");
        return KS_CONTINUE;
    }
    if (rest_is(k, i, "CONTAINS")) {
        add_span(k, i, "CONTAINS");
        return KS_CONTAINS;
    }
    if ((at(k, i, "EXIT") && skip_name(k, i + 4) == k->n) ||
        (at(k, i, "CYCLE") && skip_name(k, i + 5) == k->n)) {
        bool exit = at(k, i, "EXIT");
        add_span(k, i, exit ? "EXIT" : "CYCLE");
        return exit ? KS_EXIT : KS_CYCLE;
    }
    if (at(k, i, "FORMAT(")) {
        add_span(k, i, "FORMAT");
        return KS_FORMAT;
    }
    if (at(k, i, "ASSIGN")) {
        int j = skip_digits(k, i + 6);
        if (j > i + 6 && at(k, j, "TO")) {
            add_span(k, i, "ASSIGN");
            add_span(k, j, "TO");
            return KS_ASSIGN;
        }
    }
    if (at(k, i, "IMPLICIT"))
        return classify_implicit(k, i);
    for (size_t s = 0; s < sizeof simple / sizeof simple[0]; s++)
        if (simple[s].kw[0] == k->m[i] && at(k, i, simple[s].kw)) {
            int j = add_span(k, i, simple[s].kw);
            if (simple[s].kind == KS_SUBROUTINE ||
                simple[s].kind == KS_FUNCTION)
                span_suffixes(k, j);
            return simple[s].kind;
        }
    return fail(k, i, "unrecognised statement"), KS_NONE;
}

/* Is there a `::` outside parentheses between i and `end`?  Then the
 * statement declares (INTEGER, PARAMETER :: N = 1) and `=` initialises. */
static bool double_colon(const struct cls *k, int i, int end)
{
    int c = find0(k, i, ':');
    return c >= 0 && c + 1 < end && k->m[c + 1] == ':';
}

/* USE M, A => B: the `=>` of a rename, not a pointer assignment. */
static bool use_rename(const struct cls *k, int i, int eq)
{
    if (!at(k, i, "USE") || eq + 1 >= k->n || k->m[eq + 1] != '>')
        return false;
    int comma = find0(k, i, ',');
    return comma >= 0 && comma < eq;
}

/* The `=` of an assignment (or a DO's) outside parentheses from i, or -1:
 * not one of the relational operators ==, /=, <=, >= (PRINT *, A >= B). */
static int find_equals(const struct cls *k, int i)
{
    for (int eq = find0(k, i, '='); eq >= 0; eq = find0(k, eq + 1, '=')) {
        char before = eq > i ? k->m[eq - 1] : ' ';
        char after = eq + 1 < k->n ? k->m[eq + 1] : ' ';
        if (after == '=') {              /* ==: skip both */
            eq++;
            continue;
        }
        if (before != '<' && before != '>' && before != '/')
            return eq;
    }
    return -1;
}

static int classify_at(struct cls *k, int i, bool unit_start)
{
    int eq = find_equals(k, i);
    if (eq >= 0 && !double_colon(k, i, eq) && !use_rename(k, i, eq))
        return classify_with_equals(k, i, eq);
    return classify_keyword(k, i, unit_start);
}

/* `NAME:` before DO, IF ... THEN, SELECT ... and the other constructs:
 * the length of the name, or 0. */
static int construct_name(const struct cls *k)
{
    int j = skip_name(k, 0);
    if (j == 0 || j + 1 >= k->n || k->m[j] != ':' || k->m[j + 1] == ':')
        return 0;
    return j;
}

static bool may_be_named(int kind)
{
    return kind == KS_DO || kind == KS_DO_WHILE ||
           kind == KS_DO_CONCURRENT || kind == KS_IF_BLOCK ||
           km_opens_construct(kind);
}

/* A statement, with the construct name it may begin with. */
static int classify_statement(struct cls *k, bool unit_start, int *cname)
{
    *cname = construct_name(k);
    if (*cname == 0)
        return classify_at(k, 0, unit_start);
    int kind = classify_at(k, *cname + 1, false);
    if (kind != KS_NONE && !may_be_named(kind)) {
        k->nspan = 0;
        return fail(k, 0, "a construct name can only begin DO, IF ... THEN, "
                    "SELECT, WHERE, FORALL, BLOCK, ASSOCIATE or CRITICAL"),
               KS_NONE;
    }
    return kind;
}

/* --- token text ------------------------------------------------------------ */

/* The keyword spans in text order (insertion sort: there are few);
 * a span overlapping the one before it is dropped. */
static int sorted_spans(const struct cls *k, int (*out)[2])
{
    int n = 0;
    for (int s = 0; s < k->nspan; s++) {
        int j = n;
        while (j > 0 && out[j - 1][0] > k->span[s][0]) {
            out[j][0] = out[j - 1][0];
            out[j][1] = out[j - 1][1];
            j--;
        }
        out[j][0] = k->span[s][0];
        out[j][1] = k->span[s][1];
        n++;
    }
    int kept = 0;
    for (int s = 0; s < n; s++) {
        if (kept > 0 && out[s][0] < out[kept - 1][1])
            continue;
        out[kept][0] = out[s][0];
        out[kept][1] = out[s][1];
        kept++;
    }
    return kept;
}

/* The statement's token text: the crunched text with its keywords in
 * lower case, and a blank between two keywords that touch. */
static void write_tok(struct km_source *src, struct km_stmt *s,
                      const struct crunch *cr, const struct cls *k)
{
    int span[MAX_SPANS][2];
    int nspan = sorted_spans(k, span);
    int n = (int)cr->c.len;
    km_buf_reserve(&src->tok, (size_t)(n + nspan + 1));
    char *out = src->tok.data;
    int at = (int)src->tok.len;
    s->tok = at;
    int j = 0;
    for (int sp = 0; sp <= nspan; sp++) {
        int start = sp < nspan ? span[sp][0] : n;
        memcpy(out + at, cr->c.data + j, (size_t)(start - j));
        at += start - j;
        if (sp == nspan)
            break;
        if (sp > 0 && span[sp - 1][1] == start) {
            KM_GROW(src->seps, src->sepcap, src->nseps + 1);
            src->seps[src->nseps++] = at;
            out[at++] = ' ';
        }
        for (j = start; j < span[sp][1]; j++) {
            char c = cr->c.data[j];
            out[at++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
        }
    }
    if (k->sub_kind != KS_NONE && k->sub_off >= 0) {
        /* where the logical IF's statement begins, blanks counted */
        int off = k->sub_off;
        for (int sp = 0; sp < nspan && span[sp][0] <= k->sub_off; sp++)
            if (sp > 0 && span[sp - 1][1] == span[sp][0])
                off++;
        s->sub_tok = s->tok + off;
    }
    out[at++] = '\n';
    s->tok_len = at - 1 - s->tok;
    src->tok.len = (size_t)at;
    out[at] = '\0';
}

bool km_classify(struct km_source *src)
{
    struct crunch cr = {0};
    bool ok = true;
    bool unit_start = true;
    src->tok.len = 0;
    src->nseps = 0;
    for (int i = 0; i < src->nstmts; i++) {
        struct km_stmt *s = &src->stmts[i];
        crunch_stmt(src->raw.data + s->raw, s->raw_len, &cr);
        struct cls k = {0};
        k.m = cr.m.data;
        k.n = (int)cr.m.len;
        k.err_off = -1;
        k.sub_kind = KS_NONE;
        k.sub_off = -1;
        s->kind = classify_statement(&k, unit_start, &s->cname_len);
        s->sub_kind = k.sub_kind;
        s->sub_tok = -1;
        if (s->kind == KS_NONE) {
            int off = k.err_off < 0 ? 0 : k.err_off;
            int raw = off < k.n ? cr.c2r[off] : s->raw_len;
            int line, col;
            km_raw_position(src, s, s->raw + raw, &line, &col);
            int shown = k.n - off > 24 ? 24 : k.n - off;
            char *what = km_xstrndup(cr.c.data + off, (size_t)shown);
            km_error(src->diag, km_stmt_path(src, s), line, col, "%s%s%s%s",
                     k.err, *what ? " at '" : "", what, *what ? "'" : "");
            free(what);
            ok = false;
        }
        write_tok(src, s, &cr, &k);
        /* A FUNCTION statement may only follow an END, an INTERFACE, a
         * CONTAINS or nothing; elsewhere INTEGER FUNCTIONX(N) declares
         * an array. */
        if (s->kind == KS_END || s->kind == KS_INTERFACE ||
            s->kind == KS_CONTAINS || s->kind == KS_MODULE_PROCEDURE)
            unit_start = true;
        else if (s->kind != KS_INCLUDE)
            unit_start = false;
    }
    km_buf_free(&cr.c);
    km_buf_free(&cr.m);
    free(cr.c2r);
    return ok;
}

/* --- positions ------------------------------------------------------------- */

int km_tok_to_raw(const struct km_source *src, int stmt, int tok)
{
    const struct km_stmt *s = &src->stmts[stmt];
    int off = tok - s->tok;
    if (off <= 0)
        return s->raw;
    /* Blanks the classifier inserted before `tok` have no raw counterpart. */
    int lo = 0, hi = src->nseps;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (src->seps[mid] < s->tok)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int j = lo; j < src->nseps && src->seps[j] < tok; j++)
        off--;
    struct crunch cr = {0};
    crunch_stmt(src->raw.data + s->raw, s->raw_len, &cr);
    int raw = off < (int)cr.c.len ? cr.c2r[off] : s->raw_len;
    km_buf_free(&cr.c);
    km_buf_free(&cr.m);
    free(cr.c2r);
    return s->raw + raw;
}

void km_tok_position(const struct km_source *src, int stmt, int tok,
                     int *line, int *col)
{
    km_raw_position(src, &src->stmts[stmt], km_tok_to_raw(src, stmt, tok),
                    line, col);
}
