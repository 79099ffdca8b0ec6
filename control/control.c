/*
 * control.c — read KM_control.dat (see control.h).
 *
 * Line oriented: `KEY = value`, `!` comments, `IF_ROUTINE = a,b` ...
 * `END_IF` blocks holding level keys, and `END_OF_DATA`, after which
 * nothing is read.  Every error names the file, line and column.  Only
 * a regular file of at most KM_CONTROL_MAX_SIZE bytes without a NUL byte
 * is read: a device or a FIFO could be read forever.
 */
#include "control/control.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "support/buf.h"

enum key_kind { K_LEVEL, K_INT, K_LIST, K_PREFIX, K_IF, K_ENDIF };

struct key {
    const char *name;
    enum key_kind kind;
    long min, max;
    int level_bit;        /* K_LEVEL: which KM_LV_* */
};

static const struct key keys[] = {
    {"ROUTINE_MEASURED_LEVEL", K_LEVEL, 0, 2, KM_LV_ROUTINE},
    {"DOLOOP_MEASURED_LEVEL", K_LEVEL, 0, 99, KM_LV_DOLOOP},
    {"CALL_MEASURED_LEVEL", K_LEVEL, 0, 2, KM_LV_CALL},
    {"MPI_MEASURED_LEVEL", K_LEVEL, 0, 2, KM_LV_MPI},
    {"IO_MEASURED_LEVEL", K_LEVEL, 0, 2, KM_LV_IO},
    {"OMP_MEASURED_LEVEL", K_LEVEL, 0, 1, KM_LV_OMP},
    {"TIME_PREDICTION_MODE_NUMBER", K_INT, 0, 2000000000L, 0},
    {"TRACE_FILE_NUMBER", K_INT, 0, 99999, 0},
    {"TRACE_SIZE_LIMIT", K_INT, 1, 1048576, 0},
    {"OUTPUT_FILE_NUMBER", K_INT, 1, 99999, 0},
    {"KMPI_FOR_STA", K_INT, 0, 1, 0},
    {"TABNUM", K_INT, 0, 99, 0},
    {"TABCODE", K_INT, 0, 255, 0},
    {"IGNORED_ROUTINES", K_LIST, 0, 0, 0},
    {"PRINT_OUT_ROUTINES", K_LIST, 0, 0, 0},
    {"REDUNDANT_ROUTINES", K_LIST, 0, 0, 0},
    {"INNER_PREFIX", K_PREFIX, 0, 0, 0},
    {"IF_ROUTINE", K_IF, 0, 0, 0},
    {"END_IF", K_ENDIF, 0, 0, 0},
};

static void add_name(char ***list, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*list)[i], name) == 0)
            return;
    *list = km_xrealloc(*list, sizeof **list * (size_t)(*n + 1));
    (*list)[(*n)++] = km_xstrdup(name);
}

void km_settings_default(struct km_settings *s)
{
    memset(s, 0, sizeof *s);
    s->levels.routine = 2;
    s->levels.doloop = 1;
    s->levels.call = 1;
    s->levels.mpi = 2;
    s->levels.io = 0;
    s->threshold = 100000;
    s->trace = 0;
    s->trace_limit = 4096;
    s->output_unit = 99;
    strcpy(s->prefix, "KM_");
    add_name(&s->ignored, &s->nignored, "MPI_WTIME");
    add_name(&s->ignored, &s->nignored, "MPI_WTICK");
}

static void free_names(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

void km_settings_free(struct km_settings *s)
{
    free_names(s->ignored, s->nignored);
    free_names(s->print_out, s->nprint_out);
    free_names(s->redundant, s->nredundant);
    for (int b = 0; b < s->nblocks; b++)
        free_names(s->blocks[b].routines, s->blocks[b].nroutines);
    free(s->blocks);
    memset(s, 0, sizeof *s);
}

/* The procedure's own name in a measured name: FOO in M::FOO, HOST/FOO
 * and M::HOST/FOO. */
static const char *own_name(const char *name)
{
    const char *own = name;
    for (const char *p = name; *p; p++)
        if (*p == '/' || (p[0] == ':' && p[1] == ':'))
            own = *p == '/' ? p + 1 : p + 2;
    return own;
}

/* A list names a procedure by its measured name (M::FOO, HOST/FOO), or by
 * its own name alone, which then stands for every procedure of that name. */
static bool in_list(char **list, int n, const char *name)
{
    const char *own = own_name(name);
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i], name) == 0)
            return true;
        if (own != name && strcmp(list[i], own) == 0 &&
            own_name(list[i]) == list[i])
            return true;
    }
    return false;
}

bool km_is_ignored(const struct km_settings *s, const char *name)
{
    return in_list(s->ignored, s->nignored, name);
}

bool km_is_print_out(const struct km_settings *s, const char *name)
{
    return in_list(s->print_out, s->nprint_out, name);
}

bool km_is_redundant(const struct km_settings *s, const char *name)
{
    return in_list(s->redundant, s->nredundant, name);
}

struct km_levels km_levels_for(const struct km_settings *s,
                               const char *routine)
{
    struct km_levels lv = s->levels;
    for (int b = 0; b < s->nblocks; b++) {
        const struct km_if_routine *blk = &s->blocks[b];
        if (!in_list(blk->routines, blk->nroutines, routine))
            continue;
        if (blk->set & KM_LV_ROUTINE) lv.routine = blk->levels.routine;
        if (blk->set & KM_LV_DOLOOP) lv.doloop = blk->levels.doloop;
        if (blk->set & KM_LV_CALL) lv.call = blk->levels.call;
        if (blk->set & KM_LV_MPI) lv.mpi = blk->levels.mpi;
        if (blk->set & KM_LV_IO) lv.io = blk->levels.io;
        if (blk->set & KM_LV_OMP) lv.omp = blk->levels.omp;
    }
    return lv;
}

/* --- parsing ------------------------------------------------------------------ */

struct reader {
    const char *path;
    struct km_diag *d;
    struct km_settings *s;
    int line;
    const char *text;     /* the current line, comment removed */
    int len;
    unsigned seen;        /* keys set outside blocks (bit per keys[] index) */
    unsigned block_seen;  /* keys set in the open block */
    int block;            /* open IF_ROUTINE block, or -1 */
    int block_line;
    bool ok;
};

static void fail(struct reader *r, int col, const char *fmt, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    km_error(r->d, r->path, r->line, col, "%s", msg);
    r->ok = false;
}

static int skip_blanks(const struct reader *r, int i)
{
    while (i < r->len && (r->text[i] == ' ' || r->text[i] == '\t'))
        i++;
    return i;
}

/* A character of a routine name: MODULE::NAME and HOST/NAME included. */
static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == ':' ||
           c == '/';
}

/* Parse a comma-separated list of names at i into (*list, *n). */
static void parse_names(struct reader *r, int i, char ***list, int *n)
{
    for (;;) {
        i = skip_blanks(r, i);
        if (i >= r->len)
            return;
        int start = i;
        char name[256];
        int k = 0;
        while (i < r->len && name_char(r->text[i])) {
            if (k < (int)sizeof name - 1)
                name[k++] = (char)toupper((unsigned char)r->text[i]);
            i++;
        }
        name[k] = '\0';
        if (k == 0 || !isalpha((unsigned char)name[0])) {
            char bad[2] = {r->text[start], '\0'};
            fail(r, start + 1, "expected a routine name, found '%s'", bad);
            return;
        }
        add_name(list, n, name);
        i = skip_blanks(r, i);
        if (i >= r->len)
            return;
        if (r->text[i] != ',') {
            char bad[2] = {r->text[i], '\0'};
            fail(r, i + 1, "expected ',' between routine names, found '%s'",
                 bad);
            return;
        }
        i++;
    }
}

static bool parse_long(struct reader *r, int i, const struct key *k,
                       long *out)
{
    i = skip_blanks(r, i);
    char buf[64];
    int n = 0;
    int start = i;
    while (i < r->len && r->text[i] != ' ' && r->text[i] != '\t' &&
           n < (int)sizeof buf - 1)
        buf[n++] = r->text[i++];
    buf[n] = '\0';
    if (skip_blanks(r, i) < r->len) {
        fail(r, i + 1, "unexpected text after the value of %s", k->name);
        return false;
    }
    if (n == 0) {
        fail(r, start + 1, "%s has no value", k->name);
        return false;
    }
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (*end || errno) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be an integer, not '%s'", k->name,
                 buf);
        fail(r, start + 1, "%s", msg);
        return false;
    }
    if (v < k->min || v > k->max) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s = %ld is out of range %ld-%ld",
                 k->name, v, k->min, k->max);
        fail(r, start + 1, "%s", msg);
        return false;
    }
    *out = v;
    return true;
}

static void set_level(struct km_levels *lv, int bit, int v)
{
    switch (bit) {
    case KM_LV_ROUTINE: lv->routine = v; break;
    case KM_LV_DOLOOP: lv->doloop = v; break;
    case KM_LV_CALL: lv->call = v; break;
    case KM_LV_MPI: lv->mpi = v; break;
    case KM_LV_IO: lv->io = v; break;
    case KM_LV_OMP: lv->omp = v; break;
    }
}

static void parse_prefix(struct reader *r, int i)
{
    i = skip_blanks(r, i);
    int start = i, n = 0;
    char buf[sizeof r->s->prefix];
    while (i < r->len && (isalnum((unsigned char)r->text[i]) ||
                          r->text[i] == '_')) {
        if (n < (int)sizeof buf - 1)
            buf[n] = (char)toupper((unsigned char)r->text[i]);
        n++;
        i++;
    }
    if (n == 0 || !isalpha((unsigned char)r->text[start]) ||
        skip_blanks(r, i) < r->len) {
        fail(r, start + 1, "%s", "INNER_PREFIX must be a letter followed by "
             "letters, digits or underscores");
        return;
    }
    if (n > 8) {
        fail(r, start + 1, "%s", "INNER_PREFIX is longer than 8 characters");
        return;
    }
    buf[n] = '\0';
    strcpy(r->s->prefix, buf);
}

static void parse_line(struct reader *r)
{
    int i = skip_blanks(r, 0);
    int kstart = i;
    while (i < r->len && (isalnum((unsigned char)r->text[i]) ||
                          r->text[i] == '_'))
        i++;
    char key[64];
    int klen = i - kstart < 63 ? i - kstart : 63;
    for (int j = 0; j < klen; j++)
        key[j] = (char)toupper((unsigned char)r->text[kstart + j]);
    key[klen] = '\0';
    if (klen == 0) {
        char bad[2] = {r->text[kstart], '\0'};
        fail(r, kstart + 1, "expected a key, found '%s'", bad);
        return;
    }
    int ki = -1;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strcmp(keys[k].name, key) == 0)
            ki = (int)k;
    if (ki < 0) {
        fail(r, kstart + 1, "unknown key '%s'", key);
        return;
    }
    const struct key *k = &keys[ki];
    if (k->kind == K_ENDIF) {
        if (skip_blanks(r, i) < r->len)
            fail(r, skip_blanks(r, i) + 1, "%s", "unexpected text after END_IF");
        else if (r->block < 0)
            fail(r, kstart + 1, "%s", "END_IF without IF_ROUTINE");
        r->block = -1;
        return;
    }
    i = skip_blanks(r, i);
    if (i >= r->len || r->text[i] != '=') {
        fail(r, i + 1, "missing '=' after %s", key);
        return;
    }
    i++;
    if (k->kind == K_IF) {
        if (r->block >= 0) {
            fail(r, kstart + 1, "%s", "IF_ROUTINE inside another IF_ROUTINE "
                 "block (END_IF missing?)");
            return;
        }
        struct km_settings *s = r->s;
        s->blocks = km_xrealloc(s->blocks, sizeof *s->blocks *
                                (size_t)(s->nblocks + 1));
        struct km_if_routine *b = &s->blocks[s->nblocks];
        memset(b, 0, sizeof *b);
        r->block = s->nblocks++;
        r->block_line = r->line;
        r->block_seen = 0;
        parse_names(r, i, &b->routines, &b->nroutines);
        if (b->nroutines == 0)
            fail(r, i + 1, "%s", "IF_ROUTINE names no routine");
        return;
    }
    unsigned *seen = r->block >= 0 ? &r->block_seen : &r->seen;
    if (*seen & (1u << ki)) {
        fail(r, kstart + 1, r->block >= 0 ? "%s is set twice in this "
             "IF_ROUTINE block" : "%s is set twice", key);
        return;
    }
    *seen |= 1u << ki;
    if (r->block >= 0 && k->kind != K_LEVEL) {
        fail(r, kstart + 1, "%s cannot be set inside an IF_ROUTINE block "
             "(only the *_MEASURED_LEVEL keys can)", key);
        return;
    }
    long v;
    struct km_settings *s = r->s;
    switch (k->kind) {
    case K_LEVEL:
        if (!parse_long(r, i, k, &v))
            return;
        if (r->block >= 0) {
            set_level(&s->blocks[r->block].levels, k->level_bit, (int)v);
            s->blocks[r->block].set |= (unsigned)k->level_bit;
        } else {
            set_level(&s->levels, k->level_bit, (int)v);
        }
        break;
    case K_INT:
        if (!parse_long(r, i, k, &v))
            return;
        if (strcmp(k->name, "TIME_PREDICTION_MODE_NUMBER") == 0)
            s->threshold = v;
        else if (strcmp(k->name, "TRACE_FILE_NUMBER") == 0)
            s->trace = (int)v;
        else if (strcmp(k->name, "TRACE_SIZE_LIMIT") == 0)
            s->trace_limit = v;
        else if (strcmp(k->name, "OUTPUT_FILE_NUMBER") == 0)
            s->output_unit = (int)v;
        else if (strcmp(k->name, "KMPI_FOR_STA") == 0)
            s->kmpi_for_sta = (int)v;
        else if (strcmp(k->name, "TABNUM") == 0)
            s->tabnum = (int)v;
        else
            s->tabcode = (int)v;
        break;
    case K_LIST:
        if (strcmp(k->name, "IGNORED_ROUTINES") == 0)
            parse_names(r, i, &s->ignored, &s->nignored);
        else if (strcmp(k->name, "PRINT_OUT_ROUTINES") == 0)
            parse_names(r, i, &s->print_out, &s->nprint_out);
        else
            parse_names(r, i, &s->redundant, &s->nredundant);
        break;
    case K_PREFIX:
        parse_prefix(r, i);
        break;
    default:
        break;
    }
}

bool km_control_parse(const char *path, const char *text,
                      struct km_settings *s, struct km_diag *d)
{
    struct reader r = {0};
    r.path = path;
    r.d = d;
    r.s = s;
    r.block = -1;
    r.ok = true;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        r.line++;
        const char *bang = memchr(p, '!', (size_t)len);
        int n = bang ? (int)(bang - p) : len;
        while (n > 0 && isspace((unsigned char)p[n - 1]))
            n--;
        r.text = p;
        r.len = n;
        int first = skip_blanks(&r, 0);
        if (first < n) {
            if (n - first == 11 && strncasecmp(p + first, "END_OF_DATA", 11) == 0)
                break;
            parse_line(&r);
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (r.block >= 0) {
        r.line = r.block_line;
        fail(&r, 1, "%s", "IF_ROUTINE block is not closed by END_IF");
    }
    return r.ok;
}

/* A NUL byte would end the text early, and what follows it would go
 * unread without a word: say where the first one is. */
static bool has_nul(const char *path, const char *text, size_t len,
                    struct km_diag *d)
{
    const char *nul = memchr(text, '\0', len);
    if (!nul)
        return false;
    int line = 1, col = 1;
    for (const char *p = text; p < nul; p++) {
        if (*p == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    km_error(d, path, line, col, "NUL character in the control file (is it "
             "a text file?)");
    return true;
}

bool km_control_load(const char *path, struct km_buf *b, struct km_diag *d)
{
    const char *why = "";
    if (!km_buf_read_regular(b, path, KM_CONTROL_MAX_SIZE,
                             "larger than " KM_CONTROL_MAX_SIZE_TEXT
                             " (is it a control file?)", &why)) {
        km_error(d, path, 0, 0, "cannot read the control file: %s", why);
        return false;
    }
    return !has_nul(path, b->data, b->len, d);
}

bool km_control_read(const char *path, struct km_settings *s,
                     struct km_diag *d)
{
    struct km_buf b = {0};
    bool ok = km_control_load(path, &b, d) &&
              km_control_parse(path, b.data, s, d);
    km_buf_free(&b);
    return ok;
}
