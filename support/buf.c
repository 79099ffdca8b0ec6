/*
 * buf.c — growable byte buffers, checked allocation, and whole files
 * read into a buffer.
 */
#include "support/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *km_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("kmrun: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *km_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fputs("kmrun: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *km_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("kmrun: out of memory\n", stderr);
        abort();
    }
    return p;
}

char *km_xstrndup(const char *s, size_t n)
{
    char *d = km_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *km_xstrdup(const char *s)
{
    return km_xstrndup(s, strlen(s));
}

void km_buf_reserve(struct km_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < need)
            cap *= 2;
        b->data = km_xrealloc(b->data, cap);
        b->cap = cap;
    }
}

void km_buf_add(struct km_buf *b, const char *s, size_t n)
{
    km_buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void km_buf_adds(struct km_buf *b, const char *s)
{
    km_buf_add(b, s, strlen(s));
}

void km_buf_addc(struct km_buf *b, char c)
{
    km_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void km_buf_vprintf(struct km_buf *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0)
        return;
    km_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void km_buf_printf(struct km_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    km_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *km_buf_cstr(struct km_buf *b)
{
    km_buf_reserve(b, 0);
    b->data[b->len] = '\0';
    return b->data;
}

bool km_buf_read_file(struct km_buf *b, const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return false;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        km_buf_add(b, chunk, n);
    bool ok = !ferror(fp);
    fclose(fp);
    km_buf_cstr(b);
    return ok;
}

/* Read what is left of fd into b, failing once it passes `limit` bytes
 * (a file that grows while it is read is bounded too). */
static bool read_bounded(struct km_buf *b, int fd, size_t limit,
                         const char *too_large, const char **why)
{
    char chunk[65536];
    size_t start = b->len;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *why = strerror(errno);
            return false;
        }
        if (n == 0)
            return true;
        if (b->len - start + (size_t)n > limit) {
            *why = too_large;
            return false;
        }
        km_buf_add(b, chunk, (size_t)n);
    }
}

bool km_buf_read_regular(struct km_buf *b, const char *path, size_t limit,
                         const char *too_large, const char **why)
{
    /* O_NONBLOCK: opening a FIFO for reading waits for a writer, forever
     * if none comes; fstat then refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        *why = strerror(errno);
        return false;
    }
    struct stat st;
    bool ok = false;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        *why = "is a directory";
    else if (!S_ISREG(st.st_mode))
        *why = "not a regular file (a device, FIFO or socket is refused: "
               "it could be read forever)";
    else if ((unsigned long long)st.st_size > limit)
        *why = too_large;
    else
        ok = read_bounded(b, fd, limit, too_large, why);
    close(fd);
    km_buf_cstr(b);
    return ok;
}

void km_buf_free(struct km_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
