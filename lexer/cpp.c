/*
 * cpp.c — preprocessor lines read without the preprocessor (see cpp.h):
 * which branches of #if / #ifdef / #ifndef / #elif / #else are kept, the
 * macros #define and #undef make, the files #include names.
 *
 * #if expressions are evaluated as the C preprocessor does: macros
 * expanded (an identifier no macro names is 0; `defined NAME` and
 * `defined(NAME)` test), then integer arithmetic with C's operators and
 * precedence.  A function-like macro in an #if is beyond this reader: the
 * condition is an error that names the way out (--cpp).
 */
#include "lexer/cpp.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lexer/assemble.h"

#define MAX_EXPANSION 32          /* macros within macros */
#define MAX_EXPANDED  65536       /* bytes of an expanded #if condition */

void km_macros_free(struct km_macros *ms)
{
    for (int i = 0; i < ms->n; i++) {
        free(ms->m[i].name);
        free(ms->m[i].value);
    }
    free(ms->m);
    memset(ms, 0, sizeof *ms);
}

static bool ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static struct km_macro *find_macro(struct km_macros *ms, const char *name,
                                   size_t len)
{
    for (int i = 0; i < ms->n; i++)
        if (strlen(ms->m[i].name) == len && !memcmp(ms->m[i].name, name, len))
            return &ms->m[i];
    return NULL;
}

static const char *skip_blanks(const char *p, const char *e)
{
    while (p < e && km_is_blank(*p))
        p++;
    return p;
}

/* --- #if expressions ------------------------------------------------------------ */

struct expr {
    const char *p, *e;
    const char *error;        /* the first problem, or NULL */
};

static void expand(struct km_macros *ms, const char *p, const char *e,
                   struct km_buf *out, int depth, const char **error);

/* `defined NAME` or `defined ( NAME )` at p: appends 1 or 0. */
static const char *expand_defined(struct km_macros *ms, const char *p,
                                  const char *e, struct km_buf *out,
                                  const char **error)
{
    p = skip_blanks(p, e);
    bool paren = p < e && *p == '(';
    if (paren)
        p = skip_blanks(p + 1, e);
    const char *n = p;
    while (p < e && ident_char(*p))
        p++;
    if (p == n || !ident_start(*n)) {
        *error = "'defined' without a macro name";
        return e;
    }
    km_buf_adds(out, find_macro(ms, n, (size_t)(p - n)) ? " 1 " : " 0 ");
    if (paren) {
        p = skip_blanks(p, e);
        if (p >= e || *p != ')') {
            *error = "missing ')' after 'defined'";
            return e;
        }
        p++;
    }
    return p;
}

/* Expand the macros of p[0..e) into out: identifiers no macro names
 * become 0, as in the C preprocessor's #if. */
static void expand(struct km_macros *ms, const char *p, const char *e,
                   struct km_buf *out, int depth, const char **error)
{
    while (p < e && !*error) {
        if (out->len > MAX_EXPANDED) {
            *error = "the condition grows too large when expanded";
            return;
        }
        if (isdigit((unsigned char)*p)) {
            while (p < e && ident_char(*p))     /* 10, 0x1F, 10L */
                km_buf_addc(out, *p++);
            continue;
        }
        if (!ident_start(*p)) {
            km_buf_addc(out, *p++);
            continue;
        }
        const char *n = p;
        while (p < e && ident_char(*p))
            p++;
        size_t len = (size_t)(p - n);
        if (len == 7 && !memcmp(n, "defined", 7)) {
            p = expand_defined(ms, p, e, out, error);
            continue;
        }
        struct km_macro *m = find_macro(ms, n, len);
        if (!m) {
            km_buf_adds(out, " 0 ");
        } else if (m->function) {
            *error = "a function-like macro in the condition (run the "
                     "preprocessor: kmrun --cpp)";
        } else if (depth >= MAX_EXPANSION) {
            *error = "macros nested too deep in the condition";
        } else {
            km_buf_addc(out, ' ');
            expand(ms, m->value, m->value + strlen(m->value), out, depth + 1,
                   error);
            km_buf_addc(out, ' ');
        }
    }
}

static intmax_t ternary(struct expr *x);

static void fail(struct expr *x, const char *why)
{
    if (!x->error)
        x->error = why;
    x->p = x->e;
}

static bool take(struct expr *x, const char *op)
{
    x->p = skip_blanks(x->p, x->e);
    size_t n = strlen(op);
    if ((size_t)(x->e - x->p) < n || memcmp(x->p, op, n))
        return false;
    /* `<` is not `<<` or `<=`, `&` not `&&`, `!` not `!=`, `=` never alone */
    if (n == 1 && x->p + 1 < x->e && strchr("<>&|=!", *op) &&
        (x->p[1] == '=' || (x->p[1] == *op && *op != '!' && *op != '=')))
        return false;
    if (n == 2 && op[0] == op[1] && (op[0] == '<' || op[0] == '>') &&
        x->p + 2 < x->e && x->p[2] == '=')
        return false;
    x->p += n;
    return true;
}

static intmax_t number(struct expr *x)
{
    x->p = skip_blanks(x->p, x->e);
    if (x->p >= x->e || !isdigit((unsigned char)*x->p)) {
        fail(x, x->p >= x->e ? "the condition ends too soon"
                             : "a number or a macro expected");
        return 0;
    }
    char buf[64];
    size_t n = 0;
    while (x->p < x->e && ident_char(*x->p) && n < sizeof buf - 1)
        buf[n++] = *x->p++;
    buf[n] = '\0';
    char *end;
    intmax_t v = strtoimax(buf, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
        end++;
    if (*end)
        fail(x, "not a number in the condition");
    return v;
}

static intmax_t unary(struct expr *x)
{
    if (take(x, "!"))
        return !unary(x);
    if (take(x, "~"))
        return ~unary(x);
    if (take(x, "-"))
        return (intmax_t)(0 - (uintmax_t)unary(x));
    if (take(x, "+"))
        return unary(x);
    if (take(x, "(")) {
        intmax_t v = ternary(x);
        if (!take(x, ")"))
            fail(x, "missing ')' in the condition");
        return v;
    }
    return number(x);
}

/* Binary operators by precedence, loosest first (|| and && and ?: are
 * handled apart: they do not evaluate what they skip). */
static const char *const levels[][5] = {
    {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"},
    {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
};
#define NLEVELS ((int)(sizeof levels / sizeof levels[0]))

static intmax_t apply(struct expr *x, const char *op, intmax_t a, intmax_t b)
{
    switch (op[0]) {
    case '|': return a | b;
    case '^': return a ^ b;
    case '&': return a & b;
    case '=': return a == b;
    case '!': return a != b;
    case '<':
        return op[1] == '<' ? (b >= 0 && b < 63
                               ? (intmax_t)((uintmax_t)a << b) : 0)
               : op[1] == '=' ? a <= b : a < b;
    case '>':
        return op[1] == '>' ? (b >= 0 && b < 63 ? a >> b : 0)
               : op[1] == '=' ? a >= b : a > b;
    /* wrapping, as the preprocessor's arithmetic does, never undefined */
    case '+': return (intmax_t)((uintmax_t)a + (uintmax_t)b);
    case '-': return (intmax_t)((uintmax_t)a - (uintmax_t)b);
    case '*': return (intmax_t)((uintmax_t)a * (uintmax_t)b);
    default:
        if (b == 0) {
            fail(x, "division by zero in the condition");
            return 0;
        }
        if (b == -1)
            return op[0] == '/' ? (intmax_t)(0 - (uintmax_t)a) : 0;
        return op[0] == '/' ? a / b : a % b;
    }
}

static intmax_t binary(struct expr *x, int level)
{
    if (level == NLEVELS)
        return unary(x);
    intmax_t v = binary(x, level + 1);
    for (;;) {
        const char *op = NULL;
        for (int k = 0; k < 5 && levels[level][k]; k++)
            if (take(x, levels[level][k])) {
                op = levels[level][k];
                break;
            }
        if (!op)
            return v;
        v = apply(x, op, v, binary(x, level + 1));
    }
}

static intmax_t logical_and(struct expr *x)
{
    intmax_t v = binary(x, 0);
    while (take(x, "&&")) {
        intmax_t w = binary(x, 0);
        v = v && w;
    }
    return v;
}

static intmax_t logical_or(struct expr *x)
{
    intmax_t v = logical_and(x);
    while (take(x, "||")) {
        intmax_t w = logical_and(x);
        v = v || w;
    }
    return v;
}

static intmax_t ternary(struct expr *x)
{
    intmax_t c = logical_or(x);
    if (!take(x, "?"))
        return c;
    intmax_t a = ternary(x);
    if (!take(x, ":"))
        fail(x, "missing ':' in the condition");
    intmax_t b = ternary(x);
    return c ? a : b;
}

/* The value of an #if condition p[0..e), or -1 with *error set. */
static int condition(struct km_macros *ms, const char *p, const char *e,
                     const char **error)
{
    struct km_buf b = {0};
    *error = NULL;
    expand(ms, p, e, &b, 0, error);
    int v = -1;
    if (!*error) {
        struct expr x = {b.data ? b.data : "", b.data ? b.data + b.len : "",
                         NULL};
        if (x.p == x.e)
            x.error = "#if with no condition";
        intmax_t r = x.error ? 0 : ternary(&x);
        if (!x.error && skip_blanks(x.p, x.e) != x.e)
            x.error = "unexpected text in the condition";
        *error = x.error;
        v = x.error ? -1 : r != 0;
    }
    km_buf_free(&b);
    return v;
}

/* --- directives ----------------------------------------------------------------- */

static struct km_macros *macros(struct km_cpp_file *c);

static void error_at(struct km_cpp_file *c, int line, const char *what,
                     const char *detail)
{
    struct km_source *src = c->src;
    km_error(src->diag, src->files[c->file].path, line, 1, "%s%s%s", what,
             detail ? ": " : "", detail ? detail : "");
    c->ok = false;
}

static bool active(const struct km_cpp_file *c)
{
    return c->depth == 0 || (c->cond[c->depth - 1].enclosing_active &&
                             c->cond[c->depth - 1].active);
}

void km_cpp_begin(struct km_cpp_file *c, struct km_source *src, int file)
{
    memset(c, 0, sizeof *c);
    c->src = src;
    c->file = file;
    c->ok = true;
}

static void open_if(struct km_cpp_file *c, int line, int value)
{
    if (c->depth == KM_CPP_MAX_NESTING) {
        error_at(c, line, "#if nested too deep", NULL);
        return;
    }
    bool enclosing = active(c);
    c->cond[c->depth].enclosing_active = enclosing;
    c->cond[c->depth].active = value > 0;
    c->cond[c->depth].taken = value > 0;
    c->cond[c->depth].seen_else = false;
    c->cond[c->depth].line = line;
    c->depth++;
}

/* #ifdef / #ifndef NAME */
static int defined_value(struct km_cpp_file *c, int line, const char *p,
                         const char *e, bool want)
{
    p = skip_blanks(p, e);
    const char *n = p;
    while (p < e && ident_char(*p))
        p++;
    if (p == n) {
        error_at(c, line, "#ifdef or #ifndef without a macro name", NULL);
        return -1;
    }
    return (find_macro(macros(c), n, (size_t)(p - n)) != NULL) == want;
}

static void define(struct km_cpp_file *c, int line, const char *p,
                   const char *e)
{
    p = skip_blanks(p, e);
    const char *n = p;
    while (p < e && ident_char(*p))
        p++;
    if (p == n || !ident_start(*n)) {
        error_at(c, line, "#define without a macro name", NULL);
        return;
    }
    struct km_macros *ms = macros(c);
    struct km_macro *m = find_macro(ms, n, (size_t)(p - n));
    if (!m) {
        KM_GROW(ms->m, ms->cap, ms->n + 1);
        m = &ms->m[ms->n++];
        m->name = km_xstrndup(n, (size_t)(p - n));
        m->value = NULL;
    }
    m->function = p < e && *p == '(';
    if (m->function)
        while (p < e && *p != ')')
            p++;
    if (p < e && *p == ')')
        p++;
    p = skip_blanks(p, e);
    while (e > p && km_is_blank(e[-1]))
        e--;
    free(m->value);
    m->value = km_xstrndup(p, (size_t)(e - p));
}

static void undef(struct km_cpp_file *c, const char *p, const char *e)
{
    p = skip_blanks(p, e);
    const char *n = p;
    while (p < e && ident_char(*p))
        p++;
    struct km_macros *ms = macros(c);
    struct km_macro *m = find_macro(ms, n, (size_t)(p - n));
    if (!m)
        return;
    free(m->name);
    free(m->value);
    *m = ms->m[--ms->n];
}

/* #include "name" or <name>: the name, or NULL (a macro, say). */
static char *include_name(const char *p, const char *e)
{
    p = skip_blanks(p, e);
    if (p >= e || (*p != '"' && *p != '<'))
        return NULL;
    char close = *p == '"' ? '"' : '>';
    const char *n = ++p;
    while (p < e && *p != close)
        p++;
    if (p >= e || p == n)
        return NULL;
    return km_xstrndup(n, (size_t)(p - n));
}

/* The C preprocessor drops C comments from directives. */
static void drop_comments(struct km_buf *d)
{
    km_buf_cstr(d);
    size_t w = 0;
    for (size_t r = 0; r < d->len; r++) {
        if (d->data[r] == '/' && r + 1 < d->len && d->data[r + 1] == '*') {
            char *end = strstr(d->data + r + 2, "*/");
            r = end ? (size_t)(end - d->data) + 1 : d->len;
            d->data[w++] = ' ';
            continue;
        }
        if (d->data[r] == '/' && r + 1 < d->len && d->data[r + 1] == '/')
            break;
        d->data[w++] = d->data[r];
    }
    d->len = w;
    km_buf_cstr(d);
}

static enum km_cpp_what directive(struct km_cpp_file *c, int line,
                                  char **name)
{
    drop_comments(&c->dir);
    const char *p = c->dir.data + 1, *e = c->dir.data + c->dir.len;
    p = skip_blanks(p, e);
    const char *w = p;
    while (p < e && isalpha((unsigned char)*p))
        p++;
    size_t n = (size_t)(p - w);
#define IS(word) (n == strlen(word) && !memcmp(w, word, n))
    const char *why;
    if (IS("if") || IS("ifdef") || IS("ifndef")) {
        int v = 0;
        if (active(c)) {
            v = IS("if") ? condition(macros(c), p, e, &why)
                         : defined_value(c, line, p, e, IS("ifdef"));
            if (IS("if") && v < 0)
                error_at(c, line, "cannot evaluate this #if", why);
        }
        open_if(c, line, v);
    } else if (IS("elif") || IS("else")) {
        if (c->depth == 0) {
            error_at(c, line, IS("else") ? "#else without #if"
                                         : "#elif without #if", NULL);
            return KM_CPP_SKIP;
        }
        struct km_cpp_cond *k = &c->cond[c->depth - 1];
        if (k->seen_else)
            error_at(c, line, IS("else") ? "#else after #else"
                                         : "#elif after #else", NULL);
        int v = 1;
        if (IS("elif") && k->enclosing_active && !k->taken) {
            v = condition(macros(c), p, e, &why);
            if (v < 0)
                error_at(c, line, "cannot evaluate this #elif", why);
        }
        k->seen_else = IS("else");
        k->active = !k->taken && v > 0;
        k->taken = k->taken || k->active;
    } else if (IS("endif")) {
        if (c->depth == 0)
            error_at(c, line, "#endif without #if", NULL);
        else
            c->depth--;
    } else if (!active(c)) {
        return KM_CPP_SKIP;
    } else if (IS("define")) {
        define(c, line, p, e);
    } else if (IS("undef")) {
        undef(c, p, e);
    } else if (IS("include")) {
        *name = include_name(p, e);
        if (*name)
            return KM_CPP_INCLUDE;
    }
#undef IS
    return KM_CPP_SKIP;
}

/* Does the C comment that began on an earlier line end on this one? */
static bool comment_ends(const char *p, int len)
{
    for (int i = 0; i + 1 < len; i++)
        if (p[i] == '*' && p[i + 1] == '/')
            return true;
    return false;
}

/* A RETURN on a line of a branch not read (the word, outside a comment,
 * not a variable's name being assigned): compiled with other macros it
 * leaves its routine with no timer stopped.  Say so. */
static void unread_return(struct km_cpp_file *c, int n, const char *p,
                          int len)
{
    const char *e = p + len;
    char quote = 0;
    for (const char *q = p; q + 6 <= e; q++) {
        if (quote) {
            quote = *q == quote ? 0 : quote;
            continue;
        }
        if (*q == '\'' || *q == '"') {
            quote = *q;
            continue;
        }
        if (*q == '!')
            return;
        if (q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '_'))
            continue;
        if (strncasecmp(q, "return", 6) != 0)
            continue;
        const char *r = skip_blanks(q + 6, e);
        if (q + 6 < e && (isalnum((unsigned char)q[6]) || q[6] == '_'))
            continue;
        if (r < e && (*r == '=' || *r == '%' || *r == '('))
            continue;
        struct km_source *src = c->src;
        km_warning(src->diag, src->files[c->file].path, n,
                   (int)(q - p) + 1, "a RETURN in an #if branch kmrun does "
                   "not read: compiled with the macros that choose it, its "
                   "routine's time would run on; give kmrun the build's -D "
                   "options (or --cpp)");
        return;
    }
}

enum km_cpp_what km_cpp_line(struct km_cpp_file *c, int n, const char *p,
                             int len, char **name)
{
    if (c->in_comment) {
        c->in_comment = !comment_ends(p, len);
        return KM_CPP_SKIP;
    }
    /* A line that begins a C comment (a header's, for its #defines): the
     * preprocessor removes it, up to its end */
    const char *b = skip_blanks(p, p + len);
    if (b + 1 < p + len && b[0] == '/' && b[1] == '*') {
        c->in_comment = !comment_ends(b + 2, (int)(p + len - b - 2));
        return KM_CPP_SKIP;
    }
    bool continued = c->dir.len > 0;
    if (!continued && (len == 0 || p[0] != '#')) {
        if (active(c))
            return KM_CPP_CODE;
        unread_return(c, n, p, len);
        return KM_CPP_SKIP;
    }
    if (!continued)
        c->dir_line = n;
    bool more = len > 0 && p[len - 1] == '\\';
    km_buf_add(&c->dir, p, (size_t)(more ? len - 1 : len));
    if (more)
        return KM_CPP_SKIP;
    enum km_cpp_what w = directive(c, c->dir_line, name);
    c->dir.len = 0;
    return w;
}

int km_cpp_innermost(const struct km_cpp_file *c)
{
    return c->depth > 0 ? c->cond[c->depth - 1].line : 0;
}

bool km_cpp_end(struct km_cpp_file *c)
{
    if (c->dir.len > 0)
        c->dir.len = 0;       /* a '\' on the last line continues nothing */
    for (int k = c->depth; k > 0; k--)
        error_at(c, c->cond[k - 1].line, "#if without #endif", NULL);
    km_buf_free(&c->dir);
    return c->ok;
}

static struct km_macros *macros(struct km_cpp_file *c)
{
    return &c->src->macros;
}
