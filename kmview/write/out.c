/*
 * out.c — whole-or-nothing output files and shared formats.
 *
 * Owns the promise that kmview never leaves a half-written file: every
 * output goes to a temporary file beside its final name and is renamed
 * only when all of a command's files are complete (an output that names
 * a device or a pipe, /dev/null or a FIFO, is written to directly: a
 * rename would put a file in its place).  Also owns the number
 * texts every writer shares (exact, and fast enough for 10^8 fields) and
 * the escaping of text meant for a terminal (kv_text), and writing a set
 * of CSV files into one directory (kv_csv_files).  Must never write
 * to a final name directly (standard output excepted).
 */
#include "kmview/write/out.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/buf.h"

/* An output that exists and is no regular file (a device, a FIFO): it
 * is opened as it is, and no temporary file stands in for it. */
static FILE *open_special(struct kv_out *o, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        kv_eprintf("%s: error: cannot write: %s\n", path, strerror(errno));
        o->failed = true;
        return NULL;
    }
    struct kv_out_file *of = &o->files[o->n++];
    of->path = km_xstrdup(path);
    of->tmp = NULL;
    of->f = f;
    return f;
}

FILE *kv_out_open(struct kv_out *o, const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    KM_GROW(o->files, o->cap, o->n + 1);
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
        return open_special(o, path);
    struct kv_out_file *of = &o->files[o->n];
    of->path = km_xstrdup(path);
    size_t len = strlen(path) + 16;
    of->tmp = km_xmalloc(len);
    snprintf(of->tmp, len, "%s.tmpXXXXXX", path);
    int fd = mkstemp(of->tmp);
    if (fd < 0 || !(of->f = fdopen(fd, "w"))) {
        kv_eprintf("%s: error: cannot create: %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(of->tmp);
        }
        free(of->path);
        free(of->tmp);
        o->failed = true;
        return NULL;
    }
    /* big buffers: a CSV export of 10^5 ranks is gigabytes, and 4 KiB
     * writes cost more system time than the copying */
    setvbuf(of->f, NULL, _IOFBF, 1 << 20);
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
        if (o->files[i].tmp)
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
                kv_eprintf("%s: error: cannot write: %s\n", of->path,
                        strerror(errno));
            ok = false;
        }
        of->f = NULL;
    }
    for (size_t i = 0; ok && i < o->n; i++) {
        /* mkstemp makes 0600 files; outputs are ordinary files */
        mode_t mask = umask(0);
        umask(mask);
        if (o->files[i].tmp)
            chmod(o->files[i].tmp, 0666 & ~mask);
    }
    for (size_t i = 0; ok && i < o->n; i++)
        if (o->files[i].tmp &&
            rename(o->files[i].tmp, o->files[i].path) != 0) {
            kv_eprintf("%s: error: cannot write: %s\n", o->files[i].path,
                    strerror(errno));
            ok = false;
            for (size_t j = 0; j < i; j++)       /* the ones already placed */
                if (o->files[j].tmp)
                    unlink(o->files[j].path);
        }
    if (!ok) {
        for (size_t i = 0; i < o->n; i++)
            if (o->files[i].tmp)
                unlink(o->files[i].tmp);
        for (size_t i = o->ndirs; i-- > 0;)
            rmdir(o->dirs[i]);
    }
    if (fflush(stdout) != 0) {
        kv_eprintf("kmview: error: cannot write standard output\n");
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
    kv_eprintf("%s: error: cannot create directory: %s\n", dir,
            errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return -1;
}

FILE *kv_out_open_in(struct kv_out *o, const char *dir, const char *name)
{
    struct km_buf path = { 0 };
    km_buf_printf(&path, "%s/%s", dir, name);
    FILE *f = kv_out_open(o, km_buf_cstr(&path));
    km_buf_free(&path);
    return f;
}

int kv_csv_files(struct kv_out *o, const char *dir,
                 const struct kv_csv_file *files, size_t n, const void *ctx)
{
    if (kv_make_dir(o, dir))
        return -1;
    for (size_t i = 0; i < n; i++) {
        FILE *f = kv_out_open_in(o, dir, files[i].name);
        if (!f)
            return -1;
        files[i].write(f, ctx);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Formats                                                                   */

FILE *kv_text_open(struct kv_text *t)
{
    t->buf = NULL;
    t->len = 0;
    t->f = open_memstream(&t->buf, &t->len);
    if (!t->f) {
        kv_eprintf("kmview: error: %s\n", strerror(errno));
        exit(1);
    }
    return t->f;
}

void kv_text_close(struct kv_text *t, FILE *to)
{
    if (fclose(t->f) != 0) {
        kv_eprintf("kmview: error: %s\n", strerror(errno));
        exit(1);
    }
    kv_put_escaped(to, t->buf, t->len);
    free(t->buf);
    t->buf = NULL;
    t->f = NULL;
}

/* Is s[i] (of len bytes) a control character kv_text escapes: 1 a byte
 * below 0x20 but the newline, or DEL; 2 a C1 control in UTF-8 (two
 * bytes); 0 none. */
static int control_at(const unsigned char *s, size_t i, size_t len)
{
    unsigned char c = s[i];
    if (c == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
        return 2;
    return (c < 0x20 && c != '\n') || c == 0x7f;
}

void kv_put_escaped(FILE *to, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        int k = control_at(s, i, len);
        if (!k)
            continue;
        fwrite(s + start, 1, i - start, to);
        if (k == 2)
            fprintf(to, "\\u%04x", s[++i]);
        else
            fprintf(to, "\\x%02x", s[i]);
        start = i + 1;
    }
    fwrite(s + start, 1, len - start, to);
}

void kv_buf_add_escaped(struct km_buf *b, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++) {
        int k = control_at(s, i, len);
        if (k == 2)
            km_buf_printf(b, "\\u%04x", s[++i]);
        else if (k || s[i] == '\n')
            km_buf_printf(b, "\\x%02x", s[i]);
        else
            km_buf_addc(b, (char)s[i]);
    }
}

void kv_eprintf(const char *fmt, ...)
{
    char small[1024], *text = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof small) {
        text = km_xmalloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    kv_put_escaped(stderr, text, (size_t)n);
    if (text != small)
        free(text);
}

/* The shortest text that reads back: printf's %.{p}g for the smallest p
 * from 6 to 17 that strtod turns back into v. */
static const char *num_by_printf(char buf[32], double v, int from)
{
    for (int prec = from; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

/* What %.{p}g prints for the value m x 10^k (m of p digits, or 10^p):
 * style f when p > X >= -4 (X the exponent of the value), else style e;
 * trailing zeros and a point with nothing after it dropped. */
static void format_g(char *buf, bool negative, unsigned long long m, int k,
                     int p)
{
    char d[24];
    int n = (int)(kv_put_uint(d, m) - d);
    int x = n - 1 + k;
    while (n > 1 && d[n - 1] == '0')
        n--;
    char *q = buf;
    if (negative)
        *q++ = '-';
    if (p > x && x >= -4) {
        if (x >= 0) {
            for (int i = 0; i <= x; i++)
                *q++ = i < n ? d[i] : '0';
            if (n > x + 1) {
                *q++ = '.';
                for (int i = x + 1; i < n; i++)
                    *q++ = d[i];
            }
        } else {
            *q++ = '0';
            *q++ = '.';
            for (int i = 0; i < -x - 1; i++)
                *q++ = '0';
            for (int i = 0; i < n; i++)
                *q++ = d[i];
        }
    } else {
        *q++ = d[0];
        if (n > 1) {
            *q++ = '.';
            for (int i = 1; i < n; i++)
                *q++ = d[i];
        }
        *q++ = 'e';
        *q++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax < 10)
            *q++ = '0';
        q = kv_put_int(q, ax);
    }
    *q = '\0';
}

/* kv_num without printf or strtod, byte for byte the same.  For p <= 15
 * at most one p-digit decimal lies within half an ulp of v (their spacing
 * is 10^-15 of v or more, an ulp 2.2 10^-16 at most), so %.{p}g reads
 * back exactly when that decimal m x 10^k does; m is v / 10^k rounded,
 * and it reads back when m x 10^k (or m / 10^-k) in double arithmetic is
 * v: with m < 2^53 and |k| <= 22 that one operation is correctly rounded,
 * as strtod is (Clinger's fast path).  Anything outside that (p 16 or 17,
 * |k| > 22) goes to printf. */
const char *kv_num(char buf[32], double v)
{
    static const double pow10[] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    };
    if (!isfinite(v)) {
        buf[0] = '\0';
        return buf;
    }
    if (v == 0) {
        snprintf(buf, 32, "0");
        return buf;
    }
    double a = fabs(v);
    int e = (int)floor(log10(a));       /* v's decimal exponent, or +-1 */
    for (int p = 6; p <= 15; p++) {
        int k = e - p + 1;
        if (k > 22 || k < -22)
            return num_by_printf(buf, v, 6);
        double scaled = k >= 0 ? a / pow10[k] : a * pow10[-k];
        double r = nearbyint(scaled);
        unsigned long long lo = (unsigned long long)pow10[p - 1];
        if (!(r >= (double)lo && r <= 10.0 * (double)lo))
            return num_by_printf(buf, v, 6);  /* e was off: let printf */
        unsigned long long m = (unsigned long long)r;
        double back = k >= 0 ? (double)m * pow10[k] : (double)m / pow10[-k];
        if (back == a) {
            format_g(buf, v < 0, m, k, p);
            return buf;
        }
    }
    return num_by_printf(buf, v, 16);
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

/* Whether a CSV field needs quotes: a comma, quote or line break in it, or
 * a blank at either end that readers would strip. */
static bool csv_needs_quotes(const char *s)
{
    return s[strcspn(s, ",\"\n\r")] || s[0] == ' ' ||
           (*s && s[strlen(s) - 1] == ' ');
}

void kv_csv_str(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!csv_needs_quotes(s)) {
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

char *kv_csv_field(const char *s)
{
    struct km_buf b = { 0 };
    if (!s)
        s = "";
    if (!csv_needs_quotes(s))
        km_buf_adds(&b, s);
    else {
        km_buf_addc(&b, '"');
        for (; *s; s++) {
            if (*s == '"')
                km_buf_addc(&b, '"');
            km_buf_addc(&b, *s);
        }
        km_buf_addc(&b, '"');
    }
    char *field = km_xstrdup(km_buf_cstr(&b));
    km_buf_free(&b);
    return field;
}

void kv_csv_num(FILE *f, double v)
{
    char buf[32];
    fputs(kv_num(buf, v), f);
}

char *kv_put_uint(char *p, unsigned long long v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        *p++ = d[--n];
    return p;
}

char *kv_put_int(char *p, long long v)
{
    if (v < 0) {
        *p++ = '-';
        return kv_put_uint(p, 0ull - (unsigned long long)v);
    }
    return kv_put_uint(p, (unsigned long long)v);
}

/* "00" .. "99" */
static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

char *kv_put_ns(char *p, long long ns)
{
    long long s = ns / 1000000000, frac = ns % 1000000000;
    p = kv_put_int(p, s);
    if (frac == 0)
        return p;
    unsigned f = (unsigned)(frac < 0 ? -frac : frac);
    *p++ = '.';
    p[8] = (char)('0' + f % 10);           /* 9 digits: 1 + 4 pairs */
    f /= 10;
    for (int i = 6; i >= 0; i -= 2) {
        memcpy(p + i, two_digits + 2 * (f % 100), 2);
        f /= 100;
    }
    int n = 9;
    while (p[n - 1] == '0')
        n--;
    return p + n;
}

void kv_put_end(FILE *f, const char *start, const char *end)
{
    fwrite(start, 1, (size_t)(end - start), f);
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
        if (n == 2 && c == 0xc2 && (unsigned char)s[1] <= 0x9f) {
            fprintf(f, "\\u%04x", (unsigned char)s[1]);   /* a C1 control */
            s++;
        } else if (n > 1) {
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
