/*
 * reader.c — physical lines into statements (see reader.h).
 *
 * One pass over each file.  A statement is opened by an initial line,
 * extended by continuation lines, and closed by the next initial line, a
 * `;`, or the end of the file; comment and preprocessor lines may sit
 * between its lines.  Character constants and Hollerith constants are
 * tracked across lines because they decide where `!` and `;` count, and
 * because a constant continued from a line shorter than the statement field
 * holds the blanks that pad that line, as compilers read it.
 *
 * Offsets are ints, and input can be hostile: only regular files are read
 * (an INCLUDE of a device could be read forever), include cycles are
 * caught, and lines, files and the text read are bounded.
 */
#include "lexer/reader.h"

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
/* No compiler's fixed form needs more; a longer line is not source. */
#define MAX_LINE 100000
/* Offsets are ints: no file, and not all text read for one source file
 * with its includes, may come near 2 GiB. */
#define MAX_FILE_SIZE ((size_t)512 << 20)
#define MAX_TOTAL_TEXT ((size_t)1 << 30)

/* State of the statement being assembled in one file. */
struct asm_state {
    struct km_source *src;
    int file;
    int cur;              /* open statement, -1 if none */
    char quote;           /* open character constant's delimiter, or 0 */
    int holl;             /* Hollerith characters still to come */
    int open_line, open_col;  /* where the open constant began */
};

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
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    char *text = NULL;
    if (fstat(fd, st) != 0) {
        *why = strerror(errno);
    } else if (!S_ISREG(st->st_mode)) {
        *why = S_ISDIR(st->st_mode) ? "is a directory" : "not a regular file";
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

static bool load_file(struct km_source *src, const char *path, int *out,
                      const char **why)
{
    size_t room = MAX_TOTAL_TEXT - src->text_read;
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
static const char *line_text(const struct km_file *f, int n, int *len)
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

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* --- statements ---------------------------------------------------------- */

static int open_statement(struct asm_state *st, int line, int label,
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

static void add_text(struct asm_state *st, int line, int col,
                     int field_col, const char *p, int len)
{
    if (len <= 0)
        return;
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
    while (i >= start && is_blank(raw[i]))
        i--;
    if (i < start)
        return false;
    char c = raw[i];
    if (c == '(' || c == ',' || c == '/' || c == '=')
        return true;
    if (c == '*') {
        /* a DATA repeat factor (2*3HABC), not a type length (REAL*8 H) */
        i--;
        while (i >= start && is_blank(raw[i]))
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

/* Append one line's statement field to the open statement, tracking
 * constants.  Returns the offset within `p` where a `;` ends the statement,
 * or -1.  `width` is the field width (0: unlimited) used for padding. */
static int add_field(struct asm_state *st, int line, int col0, int fcol,
                     const char *p, int len, int width, bool *padded)
{
    struct km_source *src = st->src;
    int start_raw = src->stmts[st->cur].raw;
    int i = 0;
    int piece = 0;        /* start of the piece not yet appended */
    int end = len;
    int semi = -1;
    *padded = false;
    while (i < len) {
        char c = p[i];
        if (st->holl > 0) {
            st->holl--;
            i++;
            continue;
        }
        if (st->quote) {
            if (c == st->quote) {
                if (i + 1 < len && p[i + 1] == st->quote)
                    i++;            /* doubled delimiter */
                else
                    st->quote = 0;
            }
            i++;
            continue;
        }
        if (c == '\'' || c == '"') {
            st->quote = c;
            st->open_line = line;
            st->open_col = col0 + i;
        } else if (c == '!') {
            end = i;
            break;
        } else if (c == ';') {
            end = i;
            semi = i;
            break;
        } else if ((c == 'H' || c == 'h') &&
                   (i == 0 || isdigit((unsigned char)p[i - 1]))) {
            /* A digit right before: nH may begin a Hollerith constant.
             * The count is already in raw text: append what we have. */
            add_text(st, line, col0 + piece, fcol, p + piece, i - piece);
            piece = i;
            int have = (int)src->raw.len - start_raw;
            int n = have > 0 ? km_hollerith_count(src->raw.data + start_raw,
                                                  have) : 0;
            if (n > 0) {
                st->holl = n;
                st->open_line = line;
                st->open_col = col0 + i;
            }
        }
        i++;
    }
    /* Trailing blanks outside constants mean nothing; drop them. */
    if (!st->quote && st->holl == 0 && semi < 0)
        while (end > piece && is_blank(p[end - 1]))
            end--;
    add_text(st, line, col0 + piece, fcol, p + piece, end - piece);
    if ((st->quote || st->holl > 0) && semi < 0 && width > 0 && len < width) {
        /* The compiler pads a short line with blanks up to the line length,
         * and a constant that continues on the next line includes them. */
        char blanks[256];
        memset(blanks, ' ', sizeof blanks);
        int pad = width - len;
        int done = 0;
        while (done < pad) {
            int n = pad - done > 256 ? 256 : pad - done;
            if (st->holl > 0) {
                if (n > st->holl)
                    n = st->holl;
                st->holl -= n;
            }
            add_text(st, line, col0 + len + done, fcol, blanks, n);
            done += n;
            if (st->holl == 0 && !st->quote)
                break;
        }
        *padded = true;
    }
    return semi;
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
        while (p < e && is_blank(*p))
            p++;
        if (p >= e || tolower((unsigned char)*p) != *kw)
            return NULL;
        p++;
        kw++;
    }
    while (p < e && is_blank(*p))
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
    while (p < e && is_blank(*p))
        p++;
    if (p != e || name.len == 0) {
        km_buf_free(&name);
        return NULL;
    }
    return name.data;
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
    FILE *fp = fopen(b.data, "rb");
    if (fp) {
        fclose(fp);
        return b.data;
    }
    for (int i = 0; i < src->opts.ninclude_dirs; i++) {
        b.len = 0;
        km_buf_adds(&b, src->opts.include_dirs[i]);
        km_buf_addc(&b, '/');
        km_buf_adds(&b, name);
        fp = fopen(b.data, "rb");
        if (fp) {
            fclose(fp);
            return b.data;
        }
    }
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

/* --- lines ----------------------------------------------------------------- */

/* Close the open statement: diagnose constants left open, drop it if it
 * holds no text, and expand it if it is an INCLUDE line. */
static bool close_statement(struct asm_state *st, int depth)
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
        if (!is_blank(src->raw.data[s->raw + k])) {
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
    return expand_include(src, i, depth);
}

enum line_kind { LK_COMMENT, LK_INITIAL, LK_CONTINUATION };

struct line_layout {
    enum line_kind kind;
    int label;            /* 0 if none */
    int label_col;
    int field;            /* index of the statement field's first character */
    bool tab;
    bool bad_label;       /* something other than digits in columns 1-5 */
    int len;              /* the line's length, less a `!` comment begun
                             in columns 2-5 */
};

/* Decide what a physical line is and where its statement field starts. */
static struct line_layout layout(const char *p, int len,
                                 const struct km_reader_opts *o)
{
    struct line_layout L = {LK_COMMENT, 0, 0, 6, false, false, len};
    if (len == 0)
        return L;
    char c0 = p[0];
    if (c0 == 'C' || c0 == 'c' || c0 == '*' || c0 == '!')
        return L;
    if ((c0 == 'D' || c0 == 'd') && !o->d_lines_are_code)
        return L;
    int tab = -1;
    for (int i = 0; i < len && i < 6; i++) {
        if (p[i] == '\t') {
            tab = i;
            break;
        }
        if (p[i] == '!' && i < 5) {
            len = L.len = i;  /* a comment from columns 2-5 on (gfortran) */
            break;
        }
    }
    int lab_end = tab >= 0 ? tab : (len < 5 ? len : 5);
    bool cont = false;
    if (tab >= 0) {
        L.tab = true;
        L.field = tab + 1;
        if (L.field < len && p[L.field] >= '1' && p[L.field] <= '9') {
            cont = true;
            L.field++;
        }
    } else if (len > 5 && p[5] != ' ' && p[5] != '0') {
        cont = true;
    }
    int start = (c0 == 'D' || c0 == 'd') ? 1 : 0;
    for (int i = start; i < lab_end; i++) {
        if (isdigit((unsigned char)p[i])) {
            if (!L.label_col)
                L.label_col = i + 1;
            if (L.label < 100000)
                L.label = L.label * 10 + (p[i] - '0');
        } else if (!is_blank(p[i])) {
            L.bad_label = true;
        }
    }
    if (L.label_col && L.label == 0)
        L.label_col = 0;      /* "0" is no label */
    /* Is there anything in the statement field (before a `!` comment)? */
    int width = o->line_length > 0 ? o->line_length - 6 : len;
    int fend = L.field + width < len ? L.field + width : len;
    int first = L.field;
    while (first < fend && is_blank(p[first]))
        first++;
    bool empty = first >= fend || (!cont && p[first] == '!');
    if (!cont && empty && !L.label && !L.bad_label)
        return L;             /* a blank line, or only a `!` comment */
    L.kind = cont ? LK_CONTINUATION : LK_INITIAL;
    return L;
}

/* An OpenMP conditional compilation line: !$, c$ or *$ in columns 1-2,
 * then blanks or a label in 3-5.  A compiler with OpenMP reads it as code,
 * so the reader does too (the rewriter never edits it): declarations and
 * the first executable statement must be known where they really are. */
static bool conditional_line(const char *p, int len)
{
    if (len < 3 || p[1] != '$' ||
        (p[0] != '!' && p[0] != 'c' && p[0] != 'C' && p[0] != '*'))
        return false;
    for (int i = 2; i < 5 && i < len; i++)
        if (p[i] != ' ' && !isdigit((unsigned char)p[i]))
            return false;
    return true;
}

/* The layout of a conditional line: its sentinel counts as blanks. */
static struct line_layout conditional_layout(const char *p, int len,
                                             const struct km_reader_opts *o)
{
    char *copy = km_xstrndup(p, (size_t)len);
    copy[0] = copy[1] = ' ';
    struct line_layout L = layout(copy, len, o);
    free(copy);
    return L;
}

static bool read_file(struct km_source *src, int file, int depth)
{
    struct asm_state st = {src, file, -1, 0, 0, 0, 0};
    const struct km_reader_opts *o = &src->opts;
    bool ok = true;
    bool cpp_continues = false;
    const char *path = src->files[file].path;

    const struct km_file *f = file_of(src, file);
    const char *nul = memchr(f->text, '\0', f->size);
    if (nul) {
        int off = (int)(nul - f->text), line = 1, col = 1;
        for (int i = 0; i < off; i++) {
            if (f->text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        km_error(src->diag, path, line, col,
                 "binary file: NUL character in the source");
        return false;
    }

    int nlines = f->nlines;
    for (int n = 1; n <= nlines; n++) {
        int len;
        const char *p = line_text(file_of(src, file), n, &len);
        if (len > MAX_LINE) {
            km_error(src->diag, path, n, MAX_LINE + 1,
                     "line longer than %d characters (is this a Fortran "
                     "source file?)", MAX_LINE);
            ok = false;
            continue;
        }
        if (cpp_continues || (len > 0 && p[0] == '#')) {
            cpp_continues = len > 0 && p[len - 1] == '\\';
            continue;         /* preprocessor line: the compiler's business */
        }
        bool conditional = conditional_line(p, len);
        struct line_layout L = conditional ? conditional_layout(p, len, o)
                                           : layout(p, len, o);
        if (L.kind == LK_COMMENT)
            continue;
        len = L.len;
        if (L.bad_label) {
            int col = 1;
            while (col <= 5 && (isdigit((unsigned char)p[col - 1]) ||
                                is_blank(p[col - 1])))
                col++;
            km_error(src->diag, path, n, col,
                     "invalid character '%c' in the label field "
                     "(columns 1-5)", p[col - 1]);
            ok = false;
            continue;
        }
        if (L.kind == LK_CONTINUATION) {
            if (st.cur < 0) {
                km_error(src->diag, path, n, L.tab ? L.field : 6,
                         "continuation line with no statement to continue");
                ok = false;
                continue;
            }
            if (L.label)
                km_warning(src->diag, path, n, L.label_col,
                           "label on a continuation line is ignored");
        } else {
            if (!close_statement(&st, depth))
                ok = false;
            open_statement(&st, n, L.label, L.label_col,
                           (L.tab ? KM_SF_TAB_FORM : 0) |
                           (conditional ? KM_SF_CONDITIONAL : 0));
        }
        int width = o->line_length > 0 ? o->line_length - 6 : 0;
        int flen = len - L.field;
        if (flen < 0)
            flen = 0;
        if (width > 0 && flen > width)
            flen = width;
        const char *fp = p + L.field;
        int col0 = L.field + 1;
        if (src->raw.len > MAX_TOTAL_TEXT) {
            /* blanks padding constants continued over many short lines */
            km_error(src->diag, path, n, 1, "too much statement text: "
                     "more than %zu bytes", MAX_TOTAL_TEXT);
            return false;
        }
        for (;;) {
            bool padded;
            int semi = add_field(&st, n, col0, L.field + 1, fp, flen, width,
                                 &padded);
            if (semi < 0)
                break;
            /* `;` ends this statement; the rest of the line begins another */
            src->stmts[st.cur].flags |= KM_SF_SHARES_LINE;
            if (!close_statement(&st, depth))
                ok = false;
            fp += semi + 1;
            flen -= semi + 1;
            col0 += semi + 1;
            width = 0;        /* no padding for a statement begun mid-line */
            open_statement(&st, n, 0, 0, KM_SF_SHARES_LINE);
        }
    }
    if (!close_statement(&st, depth))
        ok = false;
    return ok;
}

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
    return read_file(src, f, 0);
}

void km_source_free(struct km_source *src)
{
    for (int i = 0; i < src->nfiles; i++) {
        free(src->files[i].path);
        free(src->files[i].text);
        free(src->files[i].line_start);
    }
    free(src->files);
    km_buf_free(&src->raw);
    free(src->segs);
    free(src->stmts);
    km_buf_free(&src->tok);
    free(src->seps);
    memset(src, 0, sizeof *src);
}
