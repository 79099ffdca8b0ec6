/*
 * km_file.c — KM_output files: their names, and writing them whole or not
 * at all.
 *
 * Every file is first written to a temporary name in the working
 * directory, then linked to its final name (EEXIST: try the next), so a
 * file is either whole or absent and another run's file is never
 * overwritten.  Names:
 *
 *   KM_output.NNN        a serial program's results, or every rank's (the
 *                        gathered file): NNN is the lowest number that no
 *                        KM_output.NNN and no KM_output.NNN.<rank> takes
 *   KM_output.NNN.<rank> one rank's own results, written while MPI runs
 *                        (collectives are unsafe then): NNN is the lowest
 *                        number whose KM_output.NNN does not exist and whose
 *                        KM_output.NNN.<rank> is free, so each rank probes
 *                        its own names only and thousands of ranks do not
 *                        race for the same ones
 *
 * Must never: leave a partial KM_output file or a temporary file, print
 * more than one line per failed write, use stdio, malloc or anything else
 * that is unsafe inside a signal handler on the paths a final write takes.
 */
/* MAP_ANONYMOUS, syscall(): beyond POSIX */
#define _DEFAULT_SOURCE 1
#include "runtime/km_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if !defined(__linux__) || !defined(SYS_getdents64)
#include <dirent.h>
#endif

#define KM_MAX_FILES 1000

void km_complain(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "kmtool: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    for (size_t off = 0; off < len;) {
        ssize_t w = write(2, buf + off, len - off);
        if (w <= 0 && errno != EINTR)
            return;
        if (w > 0)
            off += (size_t)w;
    }
}

/* ------------------------------------------------------------------------ */
/* The temporary file                                                        */

void km_file_fail(struct km_out_file *f, const char *why)
{
    if (!f->failed)
        snprintf(f->why, sizeof f->why, "%s", why);
    f->failed = 1;
}

static void fail_errno(struct km_out_file *f, const char *what,
                       const char *name)
{
    char why[160];
    snprintf(why, sizeof why, "%s %s: %s", what, name, strerror(errno));
    km_file_fail(f, why);
}

/* A file-size limit (ulimit -f) makes write() raise SIGXFSZ, whose
 * default action (and the Fortran runtime's handler) kills the program:
 * while libkm writes, the signal is ignored, so the write fails with EFBIG
 * instead, the temporary file is removed, and the program goes on. */
static void hold_xfsz(struct km_out_file *f)
{
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    f->xfsz_held = sigaction(SIGXFSZ, &ign, &f->xfsz) == 0;
}

static void release_xfsz(struct km_out_file *f)
{
    if (f->xfsz_held)
        sigaction(SIGXFSZ, &f->xfsz, NULL);
    f->xfsz_held = 0;
}

int km_file_open_temp(struct km_out_file *f)
{
    static unsigned seq;
    *f = (struct km_out_file){ .fd = -1 };
    hold_xfsz(f);
    for (int tries = 0; tries < 100; tries++) {
        snprintf(f->tmp, sizeof f->tmp, ".KM_output.tmp.%ld.%u",
                 (long)getpid(), seq++);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (f->fd >= 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    fail_errno(f, "create", f->tmp);
    f->tmp[0] = '\0';
    release_xfsz(f);
    return -1;
}

void km_file_pwrite(struct km_out_file *f, const void *p, size_t n, off_t at)
{
    const char *c = p;
    while (n > 0 && !f->failed) {
        ssize_t w = pwrite(f->fd, c, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            fail_errno(f, "write", f->tmp);
            return;
        }
        c += w;
        at += w;
        n -= (size_t)w;
    }
}

void km_file_write(struct km_out_file *f, const void *p, size_t n)
{
    km_file_pwrite(f, p, n, f->end);
    f->end += (off_t)n;
}

void km_file_close(struct km_out_file *f)
{
    if (f->fd >= 0 && close(f->fd) != 0)
        fail_errno(f, "close", f->tmp);
    f->fd = -1;
    release_xfsz(f);
}

void km_file_abandon(struct km_out_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    release_xfsz(f);
    if (f->tmp[0])
        unlink(f->tmp);
    f->tmp[0] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */

static void file_name(char *buf, size_t size, int nnn, int rank)
{
    if (rank >= 0)
        snprintf(buf, size, "KM_output.%03d.%d", nnn, rank);
    else
        snprintf(buf, size, "KM_output.%03d", nnn);
}

/* "KM_output.DDD" or "KM_output.DDD.<digits>": DDD, else -1. */
static int taken_number(const char *s)
{
    static const char prefix[] = "KM_output.";
    if (strncmp(s, prefix, sizeof prefix - 1) != 0)
        return -1;
    s += sizeof prefix - 1;
    for (int i = 0; i < 3; i++)
        if (s[i] < '0' || s[i] > '9')
            return -1;
    int n = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
    if (s[3] == '\0')
        return n;
    if (s[3] != '.' || s[4] == '\0')
        return -1;
    for (s += 4; *s; s++)
        if (*s < '0' || *s > '9')
            return -1;
    return n;
}

/* Mark every number some KM_output file in the working directory takes.
 * On Linux through getdents64, which (unlike opendir) does not allocate, so
 * a signal handler may call it. */
static void scan_taken(unsigned char used[KM_MAX_FILES])
{
#if defined(__linux__) && defined(SYS_getdents64)
    int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    union {
        char c[8192];
        uint64_t align;
    } u;
    char *buf = u.c;
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof u.c)) > 0) {
        for (long off = 0; off < n;) {
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            int k = taken_number(buf + off + 19);    /* d_name */
            if (k >= 0)
                used[k] = 1;
            off += reclen;
        }
    }
    close(fd);
#else
    DIR *d = opendir(".");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int k = taken_number(e->d_name);
        if (k >= 0)
            used[k] = 1;
    }
    closedir(d);
#endif
}

/* Link the temporary file to `path`: 0 done, 1 taken, -1 failed. */
static int link_to(struct km_out_file *f, const char *path)
{
    if (link(f->tmp, path) == 0)
        return 0;
    if (errno == EEXIST)
        return 1;
    if (errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP) {
        /* no hard links here: claim the name, then replace it */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST)
            return 1;
        if (fd >= 0) {
            close(fd);
            if (rename(f->tmp, path) == 0)
                return 0;
            unlink(path);
        }
    }
    fail_errno(f, "link to", path);
    return -1;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Take the lowest free name for the temporary file.  0 with name->nnn set,
 * else -1 (f->why set). */
static int link_lowest(struct km_out_file *f, struct km_outname *name)
{
    unsigned char used[KM_MAX_FILES] = { 0 };
    char path[48], whole[48];
    if (name->rank < 0)
        scan_taken(used);
    for (int n = 0; n < KM_MAX_FILES; n++) {
        if (used[n])
            continue;
        if (name->rank >= 0) {
            file_name(whole, sizeof whole, n, -1);
            if (exists(whole))
                continue;
        }
        file_name(path, sizeof path, n, name->rank);
        int rc = link_to(f, path);
        if (rc == 0) {
            name->nnn = n;
            return 0;
        }
        if (rc < 0)
            return -1;
    }
    errno = EEXIST;
    fail_errno(f, "choose a name: KM_output.000 to", "KM_output.999");
    return -1;
}

/* Is the file *name names still the one this process wrote? */
static int still_ours(const struct km_outname *name)
{
    char path[48];
    struct stat sb;
    if (name->nnn < 0)
        return 0;
    file_name(path, sizeof path, name->nnn, name->rank);
    return stat(path, &sb) == 0 && sb.st_dev == name->dev &&
           sb.st_ino == name->ino && sb.st_size == name->size &&
           sb.st_mtim.tv_sec == name->mtime.tv_sec &&
           sb.st_mtim.tv_nsec == name->mtime.tv_nsec;
}

int km_file_place(struct km_out_file *f, struct km_outname *name, int rank)
{
    char path[48];
    struct stat sb;
    int replace = still_ours(name) && name->rank == rank;
    if (!f->failed && replace) {             /* this run's file: replace */
        file_name(path, sizeof path, name->nnn, name->rank);
        if (rename(f->tmp, path) != 0)
            fail_errno(f, "rename to", path);
    } else if (!f->failed) {
        struct km_outname fresh = { .nnn = -1, .rank = rank };
        if (link_lowest(f, &fresh) == 0) {
            km_file_remove_own(name);        /* superseded (other kind) */
            *name = fresh;
        }
    }
    if (f->tmp[0])
        unlink(f->tmp);              /* after link(), or a failed rename */
    f->tmp[0] = '\0';
    if (f->failed) {
        km_complain("KM_output not written: %s", f->why);
        return -1;
    }
    file_name(path, sizeof path, name->nnn, name->rank);
    if (stat(path, &sb) == 0) {
        name->dev = sb.st_dev;
        name->ino = sb.st_ino;
        name->size = sb.st_size;
        name->mtime = sb.st_mtim;
    }
    return 0;
}

int km_file_write_whole(const char *text, size_t len, struct km_outname *name,
                        int rank)
{
    struct km_out_file f;
    if (km_file_open_temp(&f)) {
        km_complain("KM_output not written: %s", f.why);
        return -1;
    }
    km_file_write(&f, text, len);
    km_file_close(&f);
    return km_file_place(&f, name, rank);
}

void km_file_remove_own(struct km_outname *name)
{
    char path[48];
    if (still_ours(name)) {
        file_name(path, sizeof path, name->nnn, name->rank);
        unlink(path);
    }
    name->nnn = -1;
}
