/*
 * km_region.c — a region from its registration text (km_abi.h), and its
 * identity.
 *
 * Owns the reading of "<kind> <line> <thresh> <flags> <rest>", the region
 * it describes (with its threshold and hooks decided), and what makes two
 * registrations the same region: (kind, line, routine) for a location,
 * (kind, line, name, file) for a routine.
 *
 * Must never: touch the live measurement state (km_thread.c registers the
 * region it gets), accept a text it cannot fully read, or be called on the
 * hot path.
 */
#include "runtime/km_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KM_REG_TEXT_MAX 8192          /* longest registration text read */

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int read_int(const char **s, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(*s, &end, 10);
    if (end == *s || errno || !(is_blank(*end) || *end == '\0'))
        return -1;
    *s = end;
    while (is_blank(**s))
        (*s)++;
    return 0;
}

/* The fields of a registration text. */
struct reg_text {
    long long kind, line, thresh, flags;
    const char *rest;        /* routine "NAME file" or statement text */
    size_t rest_len;         /* trailing blanks excluded */
};

static int parse_reg_text(const char *text, struct reg_text *rt)
{
    size_t len = strnlen(text, KM_REG_TEXT_MAX);
    if (len == KM_REG_TEXT_MAX)
        return -1;
    const char *s = text;
    while (is_blank(*s))
        s++;
    if (read_int(&s, &rt->kind) || read_int(&s, &rt->line) ||
        read_int(&s, &rt->thresh) || read_int(&s, &rt->flags))
        return -1;
    if (rt->kind <= 0 || rt->kind > 1000 || rt->line < 0 ||
        rt->line > 1000000000 || rt->flags < 0 || rt->flags > 1000000)
        return -1;
    const char *e = text + len;
    while (e > s && is_blank(e[-1]))
        e--;
    rt->rest = s;
    rt->rest_len = (size_t)(e - s);
    return 0;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

struct km_region *km_region_alloc(void)
{
    /* a multiple of the line, as aligned_alloc wants */
    size_t size = (sizeof(struct km_region) + 63) / 64 * 64;
    struct km_region *r = aligned_alloc(64, size);
    if (r)
        memset(r, 0, size);
    return r;
}

void km_region_free(struct km_region *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->file);
    free(r->text);
    free(r);
}

/* "NAME file": the name in upper case, the file as written. */
static int set_routine_identity(struct km_region *r, const struct reg_text *rt)
{
    size_t n = 0;
    while (n < rt->rest_len && !is_blank(rt->rest[n]))
        n++;
    const char *f = rt->rest + n;
    while (f < rt->rest + rt->rest_len && is_blank(*f))
        f++;
    r->name = dup_range(rt->rest, n);
    r->file = dup_range(f, (size_t)(rt->rest + rt->rest_len - f));
    if (!r->name || !r->file)
        return -1;
    for (char *c = r->name; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    return 0;
}

/* Does `text` (a statement as written, blanks collapsed) call `name`
 * (upper case), whatever the case of its letters? */
static int calls(const char *text, const char *name)
{
    const char *p = text;
    for (const char *w = "CALL "; *w; w++, p++)
        if ((*p & ~0x20) != (*w & ~0x20) && !(*w == ' ' && *p == ' '))
            return 0;
    while (*p == ' ')
        p++;
    for (; *name; name++, p++)
        if ((*p & ~0x20) != *name && !(*name == '_' && *p == '_'))
            return 0;
    return *p == '(' || *p == ' ' || *p == '\0';
}

/* MPI start-up: MPI_INIT or MPI_INIT_THREAD. */
static int is_startup(const struct km_region *r)
{
    return r->kind == KM_K_MPI && r->text &&
           (calls(r->text, "MPI_INIT") || calls(r->text, "MPI_INIT_THREAD"));
}

/* An MPI-IO call (MPI_FILE_... or PMPI_FILE_...), whose time also goes
 * to its file (km_io.c). */
static int is_mpi_io(const struct km_region *r)
{
    if (r->kind != KM_K_MPI || !r->text)
        return 0;
    for (const char *p = r->text; *p; p++)
        if (strncasecmp(p, "MPI_FILE_", 9) == 0)
            return 1;
    return 0;
}

static uint8_t hooks_of(const struct km_region *r,
                        const struct km_region_options *opt)
{
    uint8_t h = 0;
    int trace = opt->trace_override >= 0 ? opt->trace_override > 0
                                         : (r->flags & KM_F_TRACE) != 0;
    if (trace)
        h |= KM_HOOK_TRACE;
    if (r->flags & KM_F_REDUNDANT)
        h |= KM_HOOK_REDUNDANT;
    if (r->kind == KM_K_MPI)
        h |= KM_HOOK_MPI;
    if (r->kind == KM_K_IO || is_mpi_io(r))
        h |= KM_HOOK_IO;
    if (is_startup(r))
        h |= KM_HOOK_STARTUP;
    return h;
}

struct km_region *km_region_new(const char *text, int32_t routine,
                                const struct km_region_options *opt,
                                const char **why)
{
    struct reg_text rt;
    if (parse_reg_text(text, &rt)) {
        *why = "unreadable text";
        return NULL;
    }
    int is_routine = KM_KIND_IS_ROUTINE(rt.kind);
    if (is_routine && rt.rest_len == 0) {
        *why = "no routine name";
        return NULL;
    }
    if (!is_routine && routine <= 0) {
        *why = "its routine is not registered";
        return NULL;
    }
    struct km_region *r = km_region_alloc();
    *why = "out of memory";
    if (!r)
        return NULL;
    r->kind = (int)rt.kind;
    r->line = (int)rt.line;
    r->flags = (int)rt.flags;
    long long th = opt->thresh_override >= 0 ? opt->thresh_override : rt.thresh;
    r->thresh = th > 0 ? (uint64_t)th : UINT64_MAX;    /* 0: never */
    r->callee = is_routine || r->kind == KM_K_CALL || r->kind == KM_K_MPI;
    r->routine = routine;
    if (is_routine ? set_routine_identity(r, &rt) != 0
                   : !(r->text = dup_range(rt.rest, rt.rest_len))) {
        km_region_free(r);
        return NULL;
    }
    r->hooks = hooks_of(r, opt);
    return r;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n--)
        h = (h ^ *c++) * 1099511628211u;
    return h;
}

uint64_t km_region_hash(const struct km_region *r)
{
    uint64_t h = 14695981039346656037u;
    h = fnv(h, &r->kind, sizeof r->kind);
    h = fnv(h, &r->line, sizeof r->line);
    if (KM_KIND_IS_ROUTINE(r->kind)) {
        h = fnv(h, r->name, strlen(r->name) + 1);
        h = fnv(h, r->file, strlen(r->file) + 1);
    } else {
        h = fnv(h, &r->routine, sizeof r->routine);
    }
    return h;
}

int km_region_same(const struct km_region *a, const struct km_region *b)
{
    if (a->kind != b->kind || a->line != b->line)
        return 0;
    if (KM_KIND_IS_ROUTINE(a->kind))
        return strcmp(a->name, b->name) == 0 && strcmp(a->file, b->file) == 0;
    return a->routine == b->routine;
}
