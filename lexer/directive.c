/*
 * directive.c — directive lines (see directive.h).  Works on the raw line
 * in either source form: a sentinel at the start of the line (after
 * blanks, in free form), then the directive's words; or a preprocessor
 * line.
 */
#include "lexer/directive.h"

#include <ctype.h>
#include <string.h>

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

enum km_directive km_directive_line(const char *p, int len,
                                    bool prev_continues)
{
    if (len > 0 && *p == '#')
        return cpp_line(p, p + len);
    const char *end = p + len;
    const char *q = p;
    bool fixed = len > 0 && (*p == 'c' || *p == 'C' || *p == '*');
    if (!fixed)
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
    if (q >= end || (*q != '!' && !fixed))
        return KM_DIR_NONE;
    q++;
    int n;
    int s = sentinel(q, end, &n);
    if (s < 0)
        return KM_DIR_NONE;
    q += n;
    /* a comment character in column 1: a character other than blank or
     * 0 in column 6 continues the directive (c$omp& ..., fixed form) */
    if (q - p == 5 && q < end && *q != ' ' && *q != '\t' && *q != '0')
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
