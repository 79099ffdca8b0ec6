/*
 * out.c — whole-or-nothing output files and shared formats.
 *
 * Owns the promise that kmview never leaves a half-written file: every
 * output goes to a temporary file beside its final name and is renamed
 * only when all of a command's files are complete.  Must never write to a
 * final name directly (standard output excepted).
 */
#include "kmview/out.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/buf.h"

FILE *kv_out_open(struct kv_out *o, const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    KM_GROW(o->files, o->cap, o->n + 1);
    struct kv_out_file *of = &o->files[o->n];
    of->path = km_xstrdup(path);
    size_t len = strlen(path) + 16;
    of->tmp = km_xmalloc(len);
    snprintf(of->tmp, len, "%s.tmpXXXXXX", path);
    int fd = mkstemp(of->tmp);
    if (fd < 0 || !(of->f = fdopen(fd, "w"))) {
        fprintf(stderr, "%s: error: cannot create: %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(of->tmp);
        }
        free(of->path);
        free(of->tmp);
        o->failed = true;
        return NULL;
    }
    o->n++;
    return of->f;
}

static void release(struct kv_out *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->files[i].path);
        free(o->files[i].tmp);
    }
    free(o->files);
    o->files = NULL;
    o->n = o->cap = 0;
    for (size_t i = 0; i < o->ndirs; i++)
        free(o->dirs[i]);
    free(o->dirs);
    o->dirs = NULL;
    o->ndirs = 0;
}

void kv_out_abandon(struct kv_out *o)
{
    for (size_t i = 0; i < o->n; i++) {
        if (o->files[i].f && o->files[i].f != stdout)
            fclose(o->files[i].f);
        unlink(o->files[i].tmp);
    }
    for (size_t i = o->ndirs; i-- > 0;)
        rmdir(o->dirs[i]);
    release(o);
}

int kv_out_commit(struct kv_out *o)
{
    bool ok = !o->failed;
    for (size_t i = 0; i < o->n; i++) {
        struct kv_out_file *of = &o->files[i];
        if (ferror(of->f) || fclose(of->f) != 0) {
            if (ok)
                fprintf(stderr, "%s: error: cannot write: %s\n", of->path,
                        strerror(errno));
            ok = false;
        }
        of->f = NULL;
    }
    for (size_t i = 0; ok && i < o->n; i++) {
        /* mkstemp makes 0600 files; outputs are ordinary files */
        mode_t mask = umask(0);
        umask(mask);
        chmod(o->files[i].tmp, 0666 & ~mask);
    }
    for (size_t i = 0; ok && i < o->n; i++)
        if (rename(o->files[i].tmp, o->files[i].path) != 0) {
            fprintf(stderr, "%s: error: cannot write: %s\n", o->files[i].path,
                    strerror(errno));
            ok = false;
            for (size_t j = 0; j < i; j++)       /* the ones already placed */
                unlink(o->files[j].path);
        }
    if (!ok) {
        for (size_t i = 0; i < o->n; i++)
            unlink(o->files[i].tmp);
        for (size_t i = o->ndirs; i-- > 0;)
            rmdir(o->dirs[i]);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "kmview: error: cannot write standard output\n");
        ok = false;
    }
    release(o);
    o->failed = false;
    return ok ? 0 : -1;
}

int kv_make_dir(struct kv_out *o, const char *dir)
{
    struct stat sb;
    if (mkdir(dir, 0777) == 0) {
        o->dirs = km_xrealloc(o->dirs, (o->ndirs + 1) * sizeof *o->dirs);
        o->dirs[o->ndirs++] = km_xstrdup(dir);
        return 0;
    }
    if (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    fprintf(stderr, "%s: error: cannot create directory: %s\n", dir,
            errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Formats                                                                   */

const char *kv_num(char buf[32], double v)
{
    if (!isfinite(v)) {
        buf[0] = '\0';
        return buf;
    }
    if (v == 0) {
        snprintf(buf, 32, "0");
        return buf;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

const char *kv_human(char buf[32], double v)
{
    if (!isfinite(v))
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, "%.4g", v);
    return buf;
}

const char *kv_human_mark(char buf[32], double v, bool est)
{
    if (!isfinite(v))
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, "%s%.4g", est ? "~" : "", v);
    return buf;
}

const char *kv_percent(char buf[32], double fraction)
{
    if (!isfinite(fraction))
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, "%.1f%%", 100 * fraction);
    return buf;
}

void kv_print_wrapped(FILE *f, const char *text, size_t width)
{
    while (*text) {
        size_t len = strlen(text), cut = len;
        if (len > width) {
            cut = width;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = strcspn(text, " ");
        }
        fprintf(f, "%.*s\n", (int)cut, text);
        text += cut;
        while (*text == ' ')
            text++;
    }
}

void kv_csv_str(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!s[strcspn(s, ",\"\n\r")] && s[0] != ' ' &&
        (!*s || s[strlen(s) - 1] != ' ')) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void kv_csv_num(FILE *f, double v)
{
    char buf[32];
    fputs(kv_num(buf, v), f);
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_length(const unsigned char *s)
{
    int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
          : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
          : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Source files are not always UTF-8 (statement texts may hold Latin-1 or
 * Shift JIS bytes): a byte that is not part of valid UTF-8 is taken as
 * Latin-1, so that JSON readers always get valid text. */
void kv_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int n = c >= 0x80 ? utf8_length((const unsigned char *)s) : 1;
        if (n > 1) {
            fwrite(s, 1, (size_t)n, f);
            s += n - 1;
        } else if (c >= 0x80)
            fprintf(f, "\\u%04x", c);
        else if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void kv_json_num(FILE *f, double v)
{
    char buf[32];
    fputs(isfinite(v) ? kv_num(buf, v) : "null", f);
}

void kv_html_str(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}
