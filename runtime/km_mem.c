/*
 * km_mem.c — the memory libkm uses while it writes results.
 *
 * A write can happen inside a signal handler (km_signal.c), where the
 * program may have been interrupted inside malloc: calling malloc then can
 * deadlock or corrupt the heap.  So every buffer a write needs (the report's
 * copy of the regions, the text of the file) comes straight from the
 * kernel with mmap, which takes no user-space lock.  A write needs only a
 * handful of buffers, so a mapping each costs nothing that matters.
 *
 * Owns nothing but the few bytes in front of each block that remember its
 * size.  Must never call malloc or free, nor keep state of its own.
 */
/* MAP_ANONYMOUS, syscall(): beyond POSIX; mremap: Linux */
#define _DEFAULT_SOURCE 1
#define _GNU_SOURCE 1
#include "runtime/km_internal.h"

#include <string.h>
#include <sys/mman.h>

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

/* Each block starts with its mapping's size; the user's bytes follow,
 * 16-byte aligned. */
#define KM_MEM_HEAD 16

void *km_mem_alloc(size_t n)
{
    if (n > (size_t)-1 / 2)
        return NULL;
    size_t total = n + KM_MEM_HEAD;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memcpy(m, &total, sizeof total);
    return (char *)m + KM_MEM_HEAD;
}

static size_t mapping_size(void *p)
{
    size_t total;
    memcpy(&total, (char *)p - KM_MEM_HEAD, sizeof total);
    return total;
}

void km_mem_free(void *p)
{
    if (p)
        munmap((char *)p - KM_MEM_HEAD, mapping_size(p));
}

void *km_mem_realloc(void *p, size_t n)
{
    if (!p)
        return km_mem_alloc(n);
#ifdef MREMAP_MAYMOVE
    /* (the kernel moves the pages: no copy, and no moment with both the
     * old block and the new one in memory, as a file's text grows) */
    if (n <= (size_t)-1 / 2) {
        size_t total = n + KM_MEM_HEAD;
        void *m = mremap((char *)p - KM_MEM_HEAD, mapping_size(p), total,
                         MREMAP_MAYMOVE);
        if (m != MAP_FAILED) {
            memcpy(m, &total, sizeof total);
            return (char *)m + KM_MEM_HEAD;
        }
    }
#endif
    size_t old = mapping_size(p) - KM_MEM_HEAD;
    void *q = km_mem_alloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    km_mem_free(p);
    return q;
}
