/*
 * reader.c — source files into statements (see reader.h): the files and
 * their lines, the statements being assembled, INCLUDE, and the choice of
 * the form's reader (fixed.c or freeform.c) for each file.
 *
 * A form's reader decides what each physical line is and hands pieces of
 * statement text to km_add_text (assemble.h); closing a statement checks
 * its constants, drops it if empty and reads the file an INCLUDE line
 * names, in the same form as the file that includes it (as gfortran does).
 *
 * Offsets are ints, and input can be hostile: only regular files are read
 * (an INCLUDE of a device could be read forever), include cycles are
 * caught, and lines, files and the text read are bounded.
 */
#include "lexer/assemble.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_INCLUDE_DEPTH 32
#define MAX_HOLLERITH 100000
/* Offsets are ints: no file may come near 2 GiB. */
#define MAX_FILE_SIZE ((size_t)512 << 20)

static struct km_file *file_of(struct km_source *src, int f)
{
    return &src->files[f];
}

const char *km_stmt_path(const struct km_source *src, const struct km_stmt *s)
{
    return src->files[s->file].path;
}

void km_raw_position(const struct km_source *src, const struct km_stmt *s,
                     int raw, int *line, int *col)
{
    const struct km_seg *seg = &src->segs[s->seg];
    for (int i = 0; i < s->nseg; i++) {
        const struct km_seg *g = &src->segs[s->seg + i];
        if (raw >= g->raw && raw < g->raw + g->len) {
            seg = g;
            break;
        }
        if (raw >= g->raw + g->len)
            seg = g;
    }
    if (s->nseg == 0) {
        *line = s->first_line;
        *col = 7;
        return;
    }
    *line = seg->line;
    *col = seg->col + (raw - seg->raw);
}

/* Read the whole regular file `path`: its text (NUL-terminated) and
 * size, or NULL with `why` saying what is wrong.  Only regular files: a
 * device or a FIFO named by an INCLUDE line could be read forever. */
static char *slurp(const char *path, size_t limit, const char *too_large,
                   struct stat *st, size_t *size, const char **why)
{
    /* (O_NONBLOCK: the open of a FIFO would wait for a writer) */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    char *text = NULL;
    if (fstat(fd, st) != 0) {
        *why = strerror(errno);
    } else if (!S_ISREG(st->st_mode)) {
        *why = S_ISDIR(st->st_mode) ? "is a directory" : "not a regular file "
               "(a device, FIFO or socket is refused: it could be read "
               "forever)";
    } else if ((unsigned long long)st->st_size > limit) {
        *why = too_large;
    } else {
        size_t want = (size_t)st->st_size, got = 0;
        text = km_xmalloc(want + 1);
        while (got < want) {
            ssize_t n = read(fd, text + got, want - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                *why = strerror(errno);
                free(text);
                text = NULL;
                break;
            }
            if (n == 0)
                break;    /* shorter than fstat said: it shrank */
            got += (size_t)n;
        }
        if (text) {
            text[got] = '\0';
            *size = got;
        }
    }
    close(fd);
    return text;
}

/* Make `text` (malloc'ed, NUL-terminated, owned from now on) file number
 * src->nfiles, with the index of its lines. */
static int add_file(struct km_source *src, const char *path, char *text,
                    size_t size, const struct stat *st)
{
    src->text_read += size;
    KM_GROW(src->files, src->filecap, src->nfiles + 1);
    struct km_file *f = &src->files[src->nfiles];
    memset(f, 0, sizeof *f);
    f->path = km_xstrdup(path);
    f->text = text;
    f->size = size;
    f->include_stmt = -1;
    if (st) {
        f->dev = st->st_dev;
        f->ino = st->st_ino;
    }
    int cap = 0;
    size_t pos = 0;
    while (pos < size) {
        KM_GROW(f->line_start, cap, f->nlines + 1);
        f->line_start[f->nlines++] = (int)pos;
        char *nl = memchr(text + pos, '\n', size - pos);
        pos = nl ? (size_t)(nl - text) + 1 : size;
    }
    return src->nfiles++;
}

/* The "name" at p (before e), unescaped (\" and \\ as cpp writes
 * them), malloc'd; p is left after it. */
static char *quoted_name(const char **pp, const char *e)
{
    const char *p = *pp + 1;
    struct km_buf b = {0};
    while (p < e && *p != '"') {
        if (*p == '\\' && p + 1 < e)
            p++;
        km_buf_addc(&b, *p++);
    }
    *pp = p < e ? p + 1 : p;
    km_buf_cstr(&b);
    return b.data;
}

/* A line marker of the preprocessor's output: # N "name" ... (or #line N
 * "name", or flang's #line "name" N).  Returns N, or 0 if the line is
 * none. */
static int line_marker(const char *p, int len, char **name)
{
    const char *e = p + len;
    *name = NULL;
    if (len < 3 || *p != '#')
        return 0;
    p++;
    while (p < e && km_is_blank(*p))
        p++;
    bool line_word = e - p >= 4 && !memcmp(p, "line", 4);
    if (line_word)
        p += 4;
    while (p < e && km_is_blank(*p))
        p++;
    char *first = NULL;
    if (line_word && p < e && *p == '"') {     /* flang: name, then N */
        first = quoted_name(&p, e);
        while (p < e && km_is_blank(*p))
            p++;
    }
    if (p >= e || !isdigit((unsigned char)*p)) {
        free(first);
        return 0;
    }
    long n = strtol(p, (char **)&p, 10);
    while (p < e && km_is_blank(*p))
        p++;
    if (first)
        *name = first;
    else if (p < e && *p == '"')
        *name = quoted_name(&p, e);
    if (n > 0 && n < 100000000)
        return (int)n;
    free(*name);
    *name = NULL;
    return 0;
}

/* Does file f hold a line marker (text the preprocessor wrote)? */
static bool has_line_markers(const struct km_file *f)
{
    for (int n = 1; n <= f->nlines; n++) {
        int len;
        const char *p = km_line_text(f, n, &len);
        if (len < 3 || *p != '#')
            continue;
        char *name = NULL;
        bool yes = line_marker(p, len, &name) > 0;
        free(name);
        if (yes)
            return true;
    }
    return false;
}

bool km_is_line_marker(const struct km_file *f, int n)
{
    if (!f->orig_line)
        return false;
    int len;
    char *name = NULL;
    const char *p = km_line_text(f, n, &len);
    bool yes = line_marker(p, len, &name) > 0;
    free(name);
    return yes;
}

/* Where each line of a preprocessed file came from, by its line markers. */
static void map_lines(struct km_file *f)
{
    f->orig_line = km_xcalloc((size_t)f->nlines + 1, sizeof *f->orig_line);
    f->orig_name = km_xcalloc((size_t)f->nlines + 1, sizeof *f->orig_name);
    int cur = 1, name = -1, cap = 0;
    for (int n = 1; n <= f->nlines; n++) {
        int len;
        const char *p = km_line_text(f, n, &len);
        char *file = NULL;
        int mark = line_marker(p, len, &file);
        f->orig_line[n - 1] = cur;
        f->orig_name[n - 1] = name;
        if (!mark) {
            cur++;
            continue;
        }
        cur = mark;
        if (!file)
            continue;
        name = -1;
        for (int k = 0; k < f->norig_names; k++)
            if (!strcmp(f->orig_names[k], file))
                name = k;
        if (name < 0) {
            KM_GROW(f->orig_names, cap, f->norig_names + 1);
            name = f->norig_names;
            f->orig_names[f->norig_names++] = file;
        } else {
            free(file);
        }
    }
}

static bool load_file(struct km_source *src, const char *path, int *out,
                      const char **why)
{
    size_t room = KM_MAX_TOTAL_TEXT - src->text_read;
    size_t size = 0;
    struct stat st;
    char *text = room < MAX_FILE_SIZE
        ? slurp(path, room, "the INCLUDE files read add up to too much "
                "text (do they include each other many times over?)",
                &st, &size, why)
        : slurp(path, MAX_FILE_SIZE, "file too large for a Fortran source "
                "file", &st, &size, why);
    if (!text)
        return false;
    *out = add_file(src, path, text, size, &st);
    return true;
}

/* The physical line n (1-based) of file f, without its line end. */
const char *km_line_text(const struct km_file *f, int n, int *len)
{
    int start = f->line_start[n - 1];
    int end = n < f->nlines ? f->line_start[n] : (int)f->size;
    if (end > start && f->text[end - 1] == '\n')
        end--;
    if (end > start && f->text[end - 1] == '\r')
        end--;
    *len = end - start;
    return f->text + start;
}


/* --- statements ---------------------------------------------------------- */

int km_open_statement(struct asm_state *st, int line, int label,
                      int label_col, int flags)
{
    struct km_source *src = st->src;
    KM_GROW(src->stmts, src->stmtcap, src->nstmts + 1);
    int i = src->nstmts++;
    struct km_stmt *s = &src->stmts[i];
    memset(s, 0, sizeof *s);
    s->file = st->file;
    s->anchor = st->file == 0 ? i
              : src->stmts[file_of(src, st->file)->include_stmt].anchor;
    s->label = label;
    s->label_col = label_col;
    s->first_line = s->last_line = line;
    s->raw = (int)src->raw.len;
    s->seg = src->nsegs;
    s->flags = flags;
    s->sub_tok = -1;
    st->cur = i;
    st->quote = 0;
    st->holl = 0;
    return i;
}

void km_add_text(struct asm_state *st, int line, int col, int field_col,
                 const char *p, int len)
{
    if (len <= 0)
        return;
    /* gfortran drops NUL bytes (binary_file): the text around one goes
     * in as pieces of their own, each with its own column */
    const char *nul = memchr(p, '\0', (size_t)len);
    if (nul) {
        int n = (int)(nul - p);
        km_add_text(st, line, col, field_col, p, n);
        km_add_text(st, line, col + n + 1, field_col, nul + 1, len - n - 1);
        return;
    }
    struct km_source *src = st->src;
    struct km_stmt *s = &src->stmts[st->cur];
    KM_GROW(src->segs, src->segcap, src->nsegs + 1);
    struct km_seg *g = &src->segs[src->nsegs++];
    g->line = line;
    g->col = col;
    g->field_col = field_col;
    g->raw = (int)src->raw.len;
    g->len = len;
    km_buf_add(&src->raw, p, (size_t)len);
    s->nseg++;
    s->raw_len += len;
    s->last_line = line;
}

/* A character before a digit string that makes `nH` a Hollerith constant:
 * an argument, a list item, a DATA value or a FORMAT item begins there. */
static bool hollerith_context(const char *raw, int start, int digits_at)
{
    int i = digits_at - 1;
    while (i >= start && km_is_blank(raw[i]))
        i--;
    if (i < start)
        return false;
    char c = raw[i];
    if (c == '(' || c == ',' || c == '/' || c == '=')
        return true;
    if (c == '*') {
        /* a DATA repeat factor (2*3HABC), not a type length (REAL*8 H) */
        i--;
        while (i >= start && km_is_blank(raw[i]))
            i--;
        return i >= start && isdigit((unsigned char)raw[i]);
    }
    return false;
}

int km_hollerith_count(const char *raw, int h)
{
    int i = h;
    while (i > 0 && isdigit((unsigned char)raw[i - 1]))
        i--;
    if (i == h || h - i > 6)
        return 0;
    if (!hollerith_context(raw, 0, i))
        return 0;
    int n = atoi(raw + i);
    return n > 0 && n <= MAX_HOLLERITH ? n : 0;
}

/* --- INCLUDE -------------------------------------------------------------- */

/* If statement i is an INCLUDE line, return the file name it names. */
static char *include_name(const struct km_source *src, int i)
{
    const struct km_stmt *s = &src->stmts[i];
    const char *p = src->raw.data + s->raw;
    const char *e = p + s->raw_len;
    const char *kw = "include";
    while (*kw) {
        while (p < e && km_is_blank(*p))
            p++;
        if (p >= e || tolower((unsigned char)*p) != *kw)
            return NULL;
        p++;
        kw++;
    }
    while (p < e && km_is_blank(*p))
        p++;
    if (p >= e || (*p != '\'' && *p != '"'))
        return NULL;
    char q = *p++;
    struct km_buf name = {0};
    while (p < e) {
        if (*p == q) {
            if (p + 1 < e && p[1] == q) {
                km_buf_addc(&name, q);
                p += 2;
                continue;
            }
            break;
        }
        km_buf_addc(&name, *p++);
    }
    if (p >= e) {
        km_buf_free(&name);
        return NULL;
    }
    p++;
    while (p < e && km_is_blank(*p))
        p++;
    if (p != e || name.len == 0) {
        km_buf_free(&name);
        return NULL;
    }
    return name.data;
}

/* Can `path` be opened for reading?  Without waiting: the open of a FIFO
 * would wait for a writer (load_file then refuses it). */
static bool can_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* dir/name in *b if that file can be opened. */
static bool found_in(struct km_buf *b, const char *dir, const char *name)
{
    b->len = 0;
    km_buf_adds(b, dir);
    km_buf_addc(b, '/');
    km_buf_adds(b, name);
    return can_open(b->data);
}

static char *resolve_include(const struct km_source *src, const char *from,
                             const char *name)
{
    struct km_buf b = {0};
    if (name[0] == '/')
        return km_xstrdup(name);
    const char *slash = strrchr(from, '/');
    if (slash)
        km_buf_add(&b, from, (size_t)(slash - from + 1));
    km_buf_adds(&b, name);
    if (can_open(b.data))
        return b.data;
    for (int i = 0; i < src->opts.ninclude_dirs; i++)
        if (found_in(&b, src->opts.include_dirs[i], name))
            return b.data;
    int nlate = 0;
    const char *const *late = src->opts.late_include_dirs
        ? src->opts.late_include_dirs(src->opts.late_ctx, &nlate) : NULL;
    for (int i = 0; i < nlate; i++)
        if (found_in(&b, late[i], name))
            return b.data;
    km_buf_free(&b);
    return NULL;
}

static bool read_file(struct km_source *src, int file, int depth);

/* Drop the file loaded last (nothing refers to it yet). */
static void forget_last_file(struct km_source *src)
{
    struct km_file *f = &src->files[--src->nfiles];
    src->text_read -= f->size;
    free(f->path);
    free(f->text);
    free(f->line_start);
}

/* Does file f, or a file that includes it, have the identity of file g? */
static bool on_include_chain(const struct km_source *src, int f, int g)
{
    const struct km_file *b = &src->files[g];
    for (;;) {
        const struct km_file *a = &src->files[f];
        if (a->dev == b->dev && a->ino == b->ino)
            return true;
        if (a->include_stmt < 0)
            return false;
        f = src->stmts[a->include_stmt].file;
    }
}

static bool expand_include(struct km_source *src, int i, int depth)
{
    struct km_stmt *s = &src->stmts[i];
    char *name = include_name(src, i);
    if (!name)
        return true;
    s->flags |= KM_SF_INCLUDE;
    const char *from = src->files[s->file].path;
    int line, col;
    km_raw_position(src, s, s->raw, &line, &col);
    bool ok = false;
    char *path = resolve_include(src, from, name);
    const char *why = "";
    int f;
    if (depth >= MAX_INCLUDE_DEPTH) {
        km_error(src->diag, from, line, col,
                 "INCLUDE nested more than %d deep", MAX_INCLUDE_DEPTH);
    } else if (!path && (s->flags & KM_SF_CPP_INCLUDE)) {
        /* the compiler's preprocessor may know where it is (a system
         * header); what it declares is not read */
        km_warning(src->diag, from, line, col,
                   "cannot find '%s' (#include): what it declares is not "
                   "read (add its directory with -I)", name);
        ok = true;
    } else if (!path && (s->flags & KM_SF_CONDITIONAL)) {
        /* `!$ include 'omp_lib.h'`: the compiler finds it in its own
         * directory with OpenMP, and reads a comment without.  omp_lib.h
         * declares only OpenMP's procedures and constants, which nothing
         * kmrun decides depends on; another file may declare arrays. */
        if (strcmp(name, "omp_lib.h") != 0)
            km_warning(src->diag, from, line, col,
                       "cannot find '%s' (an OpenMP conditional INCLUDE): "
                       "what it declares is not read (add its directory "
                       "with -I)", name);
        ok = true;
    } else if (!path) {
        km_error(src->diag, from, line, col,
                 "cannot find include file '%s' (add its directory with -I)",
                 name);
    } else if (!load_file(src, path, &f, &why)) {
        km_error(src->diag, from, line, col, "cannot read '%s': %s", path,
                 why);
    } else if (on_include_chain(src, s->file, f)) {
        km_error(src->diag, from, line, col,
                 "'%s' includes itself", path);
        forget_last_file(src);
    } else {
        src->files[f].include_stmt = i;
        ok = read_file(src, f, depth + 1);
    }
    free(path);
    free(name);
    return ok;
}

bool km_cpp_include(struct asm_state *st, int line, char *name)
{
    struct km_buf text = {0};
    km_buf_adds(&text, "include '");
    for (const char *p = name; *p; p++) {
        if (*p == '\'')
            km_buf_addc(&text, '\'');
        km_buf_addc(&text, *p);
    }
    km_buf_addc(&text, '\'');
    free(name);
    km_open_statement(st, line, 0, 0, KM_SF_CPP_INCLUDE);
    km_add_text(st, line, 1, 1, text.data, (int)text.len);
    km_buf_free(&text);
    return km_close_statement(st);
}

/* --- closing statements, reading files ------------------------------------------- */

/* Close the open statement: diagnose constants left open, drop it if it
 * holds no text, and expand it if it is an INCLUDE line. */
bool km_close_statement(struct asm_state *st)
{
    if (st->cur < 0)
        return true;
    struct km_source *src = st->src;
    int i = st->cur;
    st->cur = -1;
    const char *path = src->files[st->file].path;
    if (st->quote) {
        km_error(src->diag, path, st->open_line, st->open_col,
                 "unterminated character constant");
        st->quote = 0;
        return false;
    }
    if (st->holl > 0) {
        km_error(src->diag, path, st->open_line, st->open_col,
                 "Hollerith constant runs past the end of the statement");
        st->holl = 0;
        return false;
    }
    struct km_stmt *s = &src->stmts[i];
    bool empty = true;
    for (int k = 0; k < s->raw_len; k++)
        if (!km_is_blank(src->raw.data[s->raw + k])) {
            empty = false;
            break;
        }
    if (empty) {
        if (s->label)
            km_warning(src->diag, path, s->first_line, s->label_col,
                       "label %d on an empty statement is ignored", s->label);
        /* Forget it: it is the last statement and its text the last text. */
        src->raw.len = (size_t)s->raw;
        src->nsegs = s->seg;
        src->nstmts--;
        return true;
    }
    return expand_include(src, i, st->depth);
}

bool km_line_too_long(struct km_source *src, int file, int n, int len)
{
    if (len <= KM_MAX_LINE)
        return false;
    km_error(src->diag, src->files[file].path, n, KM_MAX_LINE + 1,
             "line longer than %d characters (is this a Fortran source "
             "file?)", KM_MAX_LINE);
    return true;
}

bool km_text_overflows(struct asm_state *st, int line)
{
    struct km_source *src = st->src;
    if (src->raw.len <= KM_MAX_TOTAL_TEXT)
        return false;
    km_error(src->diag, src->files[st->file].path, line, 1,
             "too much statement text: more than %zu bytes",
             KM_MAX_TOTAL_TEXT);
    return true;
}

/* A NUL byte: gfortran ignores it wherever it is (flang refuses one
 * outside a character constant), so kmrun reads the text around it and
 * leaves it in the copy for the compiler to judge; the first one of each
 * file is named, since it is likely a damaged file. */
static void warn_nul(struct km_source *src, int file)
{
    const struct km_file *f = file_of(src, file);
    const char *nul = memchr(f->text, '\0', f->size);
    if (!nul)
        return;
    int off = (int)(nul - f->text), line = 1, col = 1;
    for (int i = 0; i < off; i++) {
        if (f->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    km_warning(src->diag, f->path, line, col, "NUL character, ignored as "
               "gfortran ignores it (flang refuses it outside a character "
               "constant)");
}

/* Read file `file` (the source, or an include `depth` deep) in the
 * source's form. */
static bool read_file(struct km_source *src, int file, int depth)
{
    warn_nul(src, file);
    if (src->opts.form == KM_FORM_FREE)
        return km_read_free(src, file, depth);
    return km_read_fixed(src, file, depth);
}

/* --- forms ------------------------------------------------------------------------ */

/* --- entry points ------------------------------------------------------------------ */

bool km_read_source(struct km_source *src, const char *path,
                    const struct km_reader_opts *opts, struct km_diag *diag)
{
    memset(src, 0, sizeof *src);
    src->opts = *opts;
    src->diag = diag;
    int f;
    const char *why = "";
    if (!load_file(src, path, &f, &why)) {
        km_error(diag, path, 0, 0, "cannot read: %s", why);
        return false;
    }
    /* a preprocessor's output already (CMake's Ninja rules compile
     * x-pp.f90, what gfortran -E made of x.F90): the compiler follows
     * its line markers, and so does every line number kmrun gives */
    if (!src->opts.preprocessed && has_line_markers(&src->files[f])) {
        src->opts.preprocessed = true;
        map_lines(&src->files[f]);
    }
    return read_file(src, f, 0);
}

bool km_read_source_text(struct km_source *src, const char *path,
                         const char *text, size_t size,
                         const struct km_reader_opts *opts,
                         struct km_diag *diag)
{
    memset(src, 0, sizeof *src);
    src->opts = *opts;
    src->diag = diag;
    if (size > MAX_FILE_SIZE) {
        km_error(diag, path, 0, 0, "cannot read: file too large for a "
                 "Fortran source file");
        return false;
    }
    int f = add_file(src, path, km_xstrndup(text, size), size, NULL);
    if (opts->preprocessed || has_line_markers(&src->files[f])) {
        src->opts.preprocessed = true;
        map_lines(&src->files[f]);
    }
    return read_file(src, f, 0);
}

int km_user_line(const struct km_source *src, int f, int n,
                 const char **name)
{
    const struct km_file *file = &src->files[f];
    if (name)
        *name = file->path;
    if (!file->orig_line || n < 1 || n > file->nlines)
        return n;
    if (name && file->orig_name[n - 1] >= 0)
        *name = file->orig_names[file->orig_name[n - 1]];
    return file->orig_line[n - 1];
}

const char *km_source_name(const struct km_source *src)
{
    const struct km_file *f = &src->files[0];
    for (int k = 0; f->orig_line && k < f->norig_names; k++)
        if (f->orig_names[k][0] && f->orig_names[k][0] != '<')
            return f->orig_names[k];
    return f->path;
}

char *km_marked_origin(const char *text, size_t size)
{
    const char *p = text, *e = text + size;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *end = nl ? nl : e;
        int len = (int)(end - p);
        if (len > 0 && p[len - 1] == '\r')
            len--;
        char *name = NULL;
        if (len < 3 || *p != '#' || line_marker(p, len, &name) == 0)
            return NULL;      /* the markers a preprocessor begins with */
        if (name && name[0] && name[0] != '<')
            return name;
        free(name);
        p = nl ? nl + 1 : e;
    }
    return NULL;
}

static void map_position(void *ctx, const char **file, int *line)
{
    const struct km_source *src = ctx;
    if (src->nfiles > 0 && strcmp(*file, src->files[0].path) == 0)
        *line = km_user_line(src, 0, *line, file);
}

void km_map_diagnostics(struct km_source *src, struct km_diag *diag)
{
    diag->map = map_position;
    diag->map_ctx = src;
}

void km_source_free(struct km_source *src)
{
    for (int i = 0; i < src->nfiles; i++) {
        free(src->files[i].path);
        free(src->files[i].text);
        free(src->files[i].line_start);
        free(src->files[i].orig_line);
        free(src->files[i].orig_name);
        for (int k = 0; k < src->files[i].norig_names; k++)
            free(src->files[i].orig_names[k]);
        free(src->files[i].orig_names);
    }
    free(src->files);
    km_buf_free(&src->raw);
    free(src->segs);
    free(src->stmts);
    km_buf_free(&src->tok);
    km_macros_free(&src->macros);
    free(src->seps);
    memset(src, 0, sizeof *src);
}
