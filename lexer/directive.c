/*
 * directive.c — directive lines (see directive.h).  Works on the raw line
 * in either source form: a sentinel at the start of the line (after
 * blanks, in free form), then the directive's words; or a preprocessor
 * line.
 */
#include "lexer/directive.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "support/buf.h"

/* Sentinels, lower case, without the comment character that begins
 * them; a compiler's hint line governs the next loop whatever it says. */
static const struct {
    const char *text;
    bool hint;
} sentinels[] = {
    {"$omp", false}, {"$acc", false}, {"dir$", true}, {"dec$", true},
    {"gcc$", true}, {"$dir", true}, {"ibm*", true}, {"pgi$", true},
};

/* Directive names that govern the next DO loop (OpenMP's and OpenACC's
 * loop constructs and the combined forms; every compiler hint line). */
static const char *const loop_names[] = {
    "do", "simd", "loop", "taskloop", "distribute", "parallel do",
    "parallel loop", "kernels loop", "serial loop", "teams distribute",
    "teams loop", "target parallel do", "target parallel loop",
    "target teams distribute", "target teams loop", "target simd",
    "masked taskloop", "master taskloop", "parallel masked taskloop",
    "parallel master taskloop", "unroll", "tile",
};

/* Directives that belong to the specification part. */
static const char *const declarative_names[] = {
    "threadprivate", "declare", "requires", "groupprivate", "routine",
};

/* The letters after the sentinel at p, lower case, without blanks (fixed
 * form directives may be written ENDPARALLEL DO), up to the first
 * character that is neither, at most n - 1 of them. */
static void letters(const char *p, const char *end, char *out, int n)
{
    int k = 0;
    for (; p < end && k < n - 1; p++) {
        char c = (char)tolower((unsigned char)*p);
        if (c == ' ' || c == '\t')
            continue;
        if (!isalpha((unsigned char)c))
            break;
        out[k++] = c;
    }
    out[k] = '\0';
}

/* Does the directive's text w begin with `name` (blanks in it ignored)? */
static bool begins_with(const char *w, const char *name)
{
    for (; *name; name++) {
        if (*name == ' ')
            continue;
        if (*w++ != *name)
            return false;
    }
    return true;
}

static bool any_of(const char *w, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (begins_with(w, names[i]))
            return true;
    return false;
}

static bool governs_loop(const char *w)
{
    return any_of(w, loop_names, sizeof loop_names / sizeof loop_names[0]);
}

/* The sentinel at p (after its comment character), or -1; its length in
 * *len. */
static int sentinel(const char *p, const char *end, int *len)
{
    for (size_t s = 0; s < sizeof sentinels / sizeof sentinels[0]; s++) {
        const char *t = sentinels[s].text;
        int n = (int)strlen(t);
        if (end - p < n)
            continue;
        int k = 0;
        while (k < n && tolower((unsigned char)p[k]) == t[k])
            k++;
        if (k == n) {
            *len = n;
            return (int)s;
        }
    }
    return -1;
}

/* A preprocessor line's kind. */
static enum km_directive cpp_line(const char *p, const char *end)
{
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    char w[8];
    int k = 0;
    while (p < end && k < 7 && isalpha((unsigned char)*p))
        w[k++] = *p++;
    w[k] = '\0';
    if (!strcmp(w, "if") || !strcmp(w, "ifdef") || !strcmp(w, "ifndef"))
        return KM_DIR_CPP_IF;
    if (!strcmp(w, "else") || !strcmp(w, "elif"))
        return KM_DIR_CPP_ELSE;
    if (!strcmp(w, "endif"))
        return KM_DIR_CPP_ENDIF;
    return KM_DIR_CPP;
}

/* Line p..end past its directive sentinel, or NULL when it has none; *s:
 * which sentinel; *fixed_cont: a fixed-form continuation (a comment
 * character in column 1, then a character other than blank or 0 in
 * column 6: c$omp& ...). */
static const char *after_sentinel(const char *p, const char *end, int *s,
                                  bool *fixed_cont)
{
    const char *q = p;
    bool fixed = end > p && (*p == 'c' || *p == 'C' || *p == '*');
    if (!fixed)
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
    if (q >= end || (*q != '!' && !fixed))
        return NULL;
    q++;
    int n;
    if ((*s = sentinel(q, end, &n)) < 0)
        return NULL;
    q += n;
    *fixed_cont = q - p == 5 && q < end && *q != ' ' && *q != '\t' &&
                  *q != '0';
    return q;
}

enum km_directive km_directive_line(const char *p, int len,
                                    bool prev_continues)
{
    if (len > 0 && *p == '#')
        return cpp_line(p, p + len);
    const char *end = p + len;
    int s;
    bool fixed_cont;
    const char *q = after_sentinel(p, end, &s, &fixed_cont);
    if (!q)
        return KM_DIR_NONE;
    if (fixed_cont)
        return KM_DIR_CONTINUATION;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    if (prev_continues || (q < end && *q == '&'))
        return KM_DIR_CONTINUATION;
    if (sentinels[s].hint)
        return KM_DIR_LOOP;
    char w[96];
    letters(q, end, w, sizeof w);
    if (begins_with(w, "end"))
        return governs_loop(w + 3) ? KM_DIR_END_LOOP : KM_DIR_OTHER;
    if (any_of(w, declarative_names,
               sizeof declarative_names / sizeof declarative_names[0]))
        return KM_DIR_DECLARATIVE;
    return governs_loop(w) ? KM_DIR_LOOP : KM_DIR_OTHER;
}

bool km_directive_continues(const char *p, int len)
{
    const char *end = p + len;
    const char *q = p;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    /* past the sentinel's comment character, a '!' begins a comment: no
     * directive holds one inside a string often enough to matter */
    for (const char *r = q + 1; r < end; r++)
        if (*r == '!') {
            end = r;
            break;
        }
    while (end > q && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return end > q && end[-1] == '&';
}

/* The next word (letters) from *p, lower case, into w; "" at the end or
 * at a character that is neither a letter nor a blank. */
static void next_word(const char **p, const char *end, char *w, int n)
{
    const char *q = *p;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    int k = 0;
    while (q < end && isalpha((unsigned char)*q) && k < n - 1)
        w[k++] = (char)tolower((unsigned char)*q++);
    w[k] = '\0';
    *p = q;
}

/* The combined forms that begin with PARALLEL, by the letters of their
 * words run together; those kmrun does not split are NONE. */
static const struct {
    const char *letters;
    enum km_omp kind;
} parallel_forms[] = {
    {"parallelmastertaskloop", KM_OMP_NONE},
    {"parallelmaskedtaskloop", KM_OMP_NONE},
    {"paralleldo", KM_OMP_PARALLEL_DO},
    {"parallelsections", KM_OMP_PARALLEL_SECTIONS},
    {"parallelworkshare", KM_OMP_PARALLEL_WORKSHARE},
    {"parallelmaster", KM_OMP_PARALLEL_MASTER},
    {"parallelmasked", KM_OMP_PARALLEL_MASKED},
    {"parallelloop", KM_OMP_NONE},
    {"parallelsimd", KM_OMP_NONE},
};

/* A construct's name from its first words a b c (lower case letters):
 * the combined forms of PARALLEL are told apart by their words run
 * together (fixed form may write "paralleldo"), the taskloop forms of
 * master and masked are none of these. */
static enum km_omp construct_named(const char *a, const char *b,
                                   const char *c)
{
    static const struct {
        const char *name;
        enum km_omp kind;
    } names[] = {
        {"sections", KM_OMP_SECTIONS}, {"section", KM_OMP_SECTION},
        {"critical", KM_OMP_CRITICAL},
        {"single", KM_OMP_SINGLE},     {"master", KM_OMP_MASTER},
        {"masked", KM_OMP_MASKED},     {"barrier", KM_OMP_BARRIER},
        {"taskwait", KM_OMP_TASKWAIT},
    };
    if (strcmp(a, "task") == 0)   /* not taskwait, taskloop, taskgroup ... */
        return KM_OMP_TASK;
    if (strncmp(a, "parallel", 8) == 0) {
        char w[100];
        snprintf(w, sizeof w, "%s%s%s", a, b, c);
        for (size_t k = 0; k < sizeof parallel_forms / sizeof parallel_forms[0];
             k++)
            if (strncmp(w, parallel_forms[k].letters,
                        strlen(parallel_forms[k].letters)) == 0)
                return parallel_forms[k].kind;
        return KM_OMP_PARALLEL;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t n = strlen(names[k].name);
        if (strncmp(a, names[k].name, n) != 0)
            continue;
        const char *next = a[n] ? a + n : b;
        if ((names[k].kind == KM_OMP_MASTER || names[k].kind == KM_OMP_MASKED)
            && strncmp(next, "taskloop", 8) == 0)
            return KM_OMP_NONE;
        return names[k].kind;
    }
    return KM_OMP_NONE;
}

/* The END kind of construct k, or NONE for those without one. */
static enum km_omp end_of(enum km_omp k)
{
    switch (k) {
    case KM_OMP_PARALLEL: case KM_OMP_CRITICAL: case KM_OMP_SINGLE:
    case KM_OMP_MASTER: case KM_OMP_MASKED: case KM_OMP_TASK:
    case KM_OMP_PARALLEL_DO: case KM_OMP_PARALLEL_SECTIONS:
    case KM_OMP_PARALLEL_WORKSHARE: case KM_OMP_PARALLEL_MASTER:
    case KM_OMP_PARALLEL_MASKED:
        return (enum km_omp)(k + 1);
    default:
        return KM_OMP_NONE;
    }
}

enum km_omp km_omp_construct(const char *p, int len)
{
    const char *end = p + len;
    int s;
    bool fixed_cont;
    const char *q = after_sentinel(p, end, &s, &fixed_cont);
    if (!q || s != 0 || fixed_cont)            /* $omp only, not continued */
        return KM_OMP_NONE;
    char a[32], b[32], c[32], d[32];
    next_word(&q, end, a, sizeof a);
    next_word(&q, end, b, sizeof b);
    next_word(&q, end, c, sizeof c);
    next_word(&q, end, d, sizeof d);
    const char *ends = strcmp(a, "end") == 0 ? b
                     : strncmp(a, "end", 3) == 0 && a[3] ? a + 3 : NULL;
    const char *after = strcmp(a, "end") == 0 ? c : b;
    if (ends && strcmp(ends, "do") == 0 && strcmp(after, "simd") != 0)
        return KM_OMP_END_DO;
    if (ends && strcmp(ends, "sections") == 0)
        return KM_OMP_END_SECTIONS;
    if (ends && strcmp(ends, "workshare") == 0)
        return KM_OMP_END_WORKSHARE;
    if (strcmp(a, "end") == 0)
        return end_of(construct_named(b, c, d));
    if (strncmp(a, "end", 3) == 0 && a[3])     /* fixed form: "endparallel" */
        return end_of(construct_named(a + 3, b, c));
    return construct_named(a, b, c);
}

/* Where the directive line's text ends: before a trailing comment. */
static const char *directive_end(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    for (const char *r = q + 1; r < end; r++)
        if (*r == '!')
            return r;
    return end;
}

bool km_directive_is_omp(const char *p, int len)
{
    int s;
    bool cont;
    return after_sentinel(p, p + len, &s, &cont) && s == 0;
}

int km_directive_text_len(const char *p, int len)
{
    const char *e = directive_end(p, p + len);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return (int)(e - p);
}

/* Where the words of directive line p begin (past its sentinel and a
 * fixed-form continuation mark) and end (before a comment), or NULL. */
static const char *directive_words(const char *p, int len, const char **end)
{
    int s;
    bool cont;
    *end = directive_end(p, p + len);
    const char *q = after_sentinel(p, *end, &s, &cont);
    return q && cont ? q + 1 : q;
}

char *km_directive_body(const char *p, int len)
{
    const char *end;
    const char *q = directive_words(p, len, &end);
    if (!q)
        return NULL;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    if (q < end && *q == '&')             /* free form: continued here */
        q++;
    while (end > q && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end > q && end[-1] == '&')        /* free form: continues */
        end--;
    size_t n = (size_t)(end - q);
    char *b = km_xmalloc(n + 1);
    memcpy(b, q, n);
    b[n] = '\0';
    return b;
}

bool km_directive_has_word(const char *p, int len, const char *word)
{
    const char *end;
    const char *q = directive_words(p, len, &end);
    if (!q)
        return false;
    while (q < end) {
        char w[32];
        next_word(&q, end, w, sizeof w);
        if (strcmp(w, word) == 0)
            return true;
        if (!w[0])
            q++;               /* a character that is neither */
    }
    return false;
}

int km_directive_collapse(const char *p, int len)
{
    static const char word[] = "collapse";
    const char *end = p + len;
    for (const char *q = p; q < end; q++) {
        const char *r = q;
        const char *w = word;
        while (*w && r < end && tolower((unsigned char)*r) == *w) {
            r++;
            w++;
        }
        if (*w)
            continue;
        while (r < end && (*r == ' ' || *r == '\t'))
            r++;
        if (r >= end || *r != '(')
            continue;
        r++;
        while (r < end && (*r == ' ' || *r == '\t'))
            r++;
        int n = 0;
        while (r < end && isdigit((unsigned char)*r) && n < 1000)
            n = n * 10 + (*r++ - '0');
        return n;
    }
    return 0;
}
