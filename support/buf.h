/*
 * buf.h — growable byte buffers and arrays.
 *
 * Every module builds text and tables of unknown size; this is the one
 * place that knows how to grow them.  Allocation failure is fatal (kmrun
 * cannot do anything useful without memory), so callers never check.
 */
#ifndef KM_BUF_H
#define KM_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct km_buf {
    char *data;     /* always NUL-terminated when len > 0 or after km_buf_cstr */
    size_t len;
    size_t cap;
};

void km_buf_reserve(struct km_buf *b, size_t extra);
void km_buf_add(struct km_buf *b, const char *s, size_t n);
void km_buf_adds(struct km_buf *b, const char *s);
void km_buf_addc(struct km_buf *b, char c);
void km_buf_printf(struct km_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void km_buf_vprintf(struct km_buf *b, const char *fmt, va_list ap);
const char *km_buf_cstr(struct km_buf *b);
/* Append the whole file `path` to `b` (NUL-terminated).  Returns false,
 * with errno set, if it cannot be read. */
bool km_buf_read_file(struct km_buf *b, const char *path);
/* The same for a regular file only, of at most `limit` bytes: returns
 * false with `why` saying what is wrong (`too_large` past the limit) for
 * anything else.  Never waits on a FIFO. */
bool km_buf_read_regular(struct km_buf *b, const char *path, size_t limit,
                         const char *too_large, const char **why);
void km_buf_free(struct km_buf *b);

void *km_xmalloc(size_t n);
void *km_xcalloc(size_t n, size_t size);
void *km_xrealloc(void *p, size_t n);
char *km_xstrdup(const char *s);
char *km_xstrndup(const char *s, size_t n);

/* Grow an array so that index `need` - 1 is valid: KM_GROW(p, cap, need). */
#define KM_GROW(ptr, cap, need)                                           \
    do {                                                                  \
        if ((size_t)(need) > (size_t)(cap)) {                             \
            size_t km_nc_ = (cap) ? (size_t)(cap) * 2 : 16;               \
            while (km_nc_ < (size_t)(need)) km_nc_ *= 2;                  \
            (ptr) = km_xrealloc((ptr), km_nc_ * sizeof *(ptr));           \
            (cap) = km_nc_;                                               \
        }                                                                 \
    } while (0)

#endif
