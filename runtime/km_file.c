/*
 * km_file.c — KM_output files: where they go, their names, and writing
 * them whole or not at all.
 *
 * Places, in order: the working directory; $KM_OUTPUT_DIR if set and not
 * empty; $TMPDIR if set, else /tmp (a place that is the same directory as
 * an earlier one is left out).  Every file is first written to a temporary
 * name in the first place that lets one be created, then linked to its
 * final name there (EEXIST: try the next), so a file is either whole or
 * absent and another run's file is never overwritten.  Any failure in a
 * place (the temporary file cannot be created, a write fails midway:
 * ENOSPC, EDQUOT, EFBIG, EIO, a short write; the link fails other than
 * with EEXIST; all names are taken) moves the file to the next place: what
 * the temporary file holds so far is copied into a new temporary file
 * there, the old one removed, and the failed write done again.  So a text
 * that cannot be produced again (the gathered file is streamed from the
 * other ranks and its Prediction rows written in place) is never lost on
 * the way, and the callers never know.  One line on standard error says
 * where a moved file went, or why no place took it.  A file whose close()
 * fails (NFS reports a full disk there) may lack part of its text: a whole
 * text at hand (km_file_write_whole) is written again in the next place,
 * the gathered file is lost.  Names, in every place:
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
 * Must never: leave a partial KM_output file or a temporary file in any
 * place, print more than one line per write, use stdio, malloc or anything
 * else that is unsafe inside a signal handler on the paths a final write
 * takes (fixed buffers only, on the stack: paths up to KM_PATH_MAX).
 */
/* MAP_ANONYMOUS, syscall(): beyond POSIX */
#define _DEFAULT_SOURCE 1
#include "runtime/km_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
    char buf[2 * KM_PATH_MAX];
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
/* The test hook                                                             */

static struct {
    off_t after;
    int err;                 /* 0: off */
} test_fail;

void km_test_fail_writes(off_t after, int err)
{
    test_fail.after = after;
    test_fail.err = err;
}

/* pwrite(), or the part of it the test hook lets through. */
static ssize_t write_at(const struct km_out_file *f, const void *p, size_t n,
                        off_t at)
{
    if (KM_UNLIKELY(test_fail.err) && f->place == 0 && test_fail.after >= 0) {
        if (at >= test_fail.after) {
            errno = test_fail.err;
            return -1;
        }
        if ((off_t)n > test_fail.after - at)
            n = (size_t)(test_fail.after - at);
    }
    return pwrite(f->fd, p, n, at);
}

/* Does the test hook make naming the file fail here? */
static int naming_fails(const struct km_out_file *f)
{
    if (KM_UNLIKELY(test_fail.err) && f->place == 0 && test_fail.after < 0) {
        errno = test_fail.err;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Places                                                                    */

/* dir/leaf ("" is the working directory: leaf alone).  0, or -1 with errno
 * ENAMETOOLONG. */
static int join(char *buf, size_t size, const char *dir, const char *leaf)
{
    size_t d = strlen(dir);
    while (d > 1 && dir[d - 1] == '/')
        d--;
    int n = d == 0 ? snprintf(buf, size, "%s", leaf)
                   : snprintf(buf, size, "%.*s%s%s", (int)d, dir,
                              dir[d - 1] == '/' ? "" : "/", leaf);
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* How a message names a place: its path, the working directory's absolute
 * path, or "the working directory" (removed, say). */
static const char *place_name(const char *dir, char *buf, size_t size)
{
    if (dir[0])
        return dir;
#if defined(__linux__) && defined(SYS_getcwd)
    if (syscall(SYS_getcwd, buf, size) > 0 && buf[0] == '/')
        return buf;               /* getcwd() may allocate */
#else
    if (getcwd(buf, size) && buf[0] == '/')
        return buf;
#endif
    return "the working directory";
}

/* The places, in order, without repeating a directory. */
static void choose_places(struct km_out_file *f)
{
    const char *out = getenv("KM_OUTPUT_DIR"), *tmp = getenv("TMPDIR");
    const char *cand[KM_PLACES] = { "", out && *out ? out : NULL,
                                    tmp && *tmp ? tmp : "/tmp" };
    struct { int known; dev_t dev; ino_t ino; } id[KM_PLACES];
    f->nplaces = 0;
    for (int i = 0; i < KM_PLACES; i++) {
        if (!cand[i])
            continue;
        struct stat sb;
        int known = stat(cand[i][0] ? cand[i] : ".", &sb) == 0;
        int same = 0;
        for (int j = 0; j < f->nplaces && !same; j++)
            same = strcmp(f->dirs[j], cand[i]) == 0 ||
                   (known && id[j].known && id[j].dev == sb.st_dev &&
                    id[j].ino == sb.st_ino);
        if (same)
            continue;
        id[f->nplaces].known = known;
        id[f->nplaces].dev = known ? sb.st_dev : 0;
        id[f->nplaces].ino = known ? sb.st_ino : 0;
        f->dirs[f->nplaces++] = cand[i];
    }
}

/* The place the file is in has failed. */
static void refuse(struct km_out_file *f, const char *why)
{
    if (f->place < f->nplaces)
        snprintf(f->refused[f->place], sizeof f->refused[0], "%s", why);
}

/* Append to the text in buf (truncated if it must be). */
static void append(char *buf, size_t size, const char *fmt, ...)
    KM_PRINTF_LIKE(3, 4);
static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (len + 1 < size)
        vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* Append "in A (why), nor in B (why)" for places 0 .. n - 1. */
static void refusals(const struct km_out_file *f, int n, char *buf,
                     size_t size)
{
    char cwd[KM_PATH_MAX];
    for (int p = 0; p < n; p++)
        append(buf, size, "%sin %s (%s)", p ? ", nor " : "",
               place_name(f->dirs[p], cwd, sizeof cwd), f->refused[p]);
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
    char why[sizeof f->why];
    snprintf(why, sizeof why, "%s %s: %s", what, name, strerror(errno));
    km_file_fail(f, why);
}

/* "KM_output not written: ..." for a failed f. */
static void failure(const struct km_out_file *f, char *buf, size_t size)
{
    buf[0] = '\0';
    if (f->nowhere) {
        append(buf, size, "KM_output not written: cannot write ");
        refusals(f, f->nplaces, buf, size);
    } else {
        append(buf, size, "KM_output not written: %s", f->why);
    }
}

void km_file_complain(const struct km_out_file *f)
{
    char line[2 * KM_PATH_MAX];
    failure(f, line, sizeof line);
    km_complain("%s", line);
}

/* SIGXFSZ is ignored while the file is written (km_signal_hold_xfsz), so
 * that a file-size limit fails the write with EFBIG: the temporary file is
 * removed, and the program goes on. */
static void hold_xfsz(struct km_out_file *f)
{
    if (!f->xfsz_held)
        f->xfsz_held = km_signal_hold_xfsz(&f->xfsz);
}

static void release_xfsz(struct km_out_file *f)
{
    if (f->xfsz_held)
        km_signal_release_xfsz(&f->xfsz);
    f->xfsz_held = 0;
}

/* A new, empty temporary file in the first place from `from` on that lets
 * one be created: 0 with f->fd, f->tmp and f->place set.  -1 when none
 * does (each refusal noted): f->failed, f->nowhere. */
static int create_temp(struct km_out_file *f, int from)
{
    static unsigned seq;
    char leaf[64];
    for (f->place = from; f->place < f->nplaces; f->place++) {
        for (int tries = 0; tries < 100; tries++) {
            snprintf(leaf, sizeof leaf, ".KM_output.tmp.%ld.%u",
                     (long)getpid(), seq++);
            if (join(f->tmp, sizeof f->tmp, f->dirs[f->place], leaf) != 0)
                break;
            f->fd = open(f->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (f->fd >= 0)
                return 0;
            if (errno != EEXIST)
                break;
        }
        refuse(f, strerror(errno));
    }
    f->fd = -1;
    f->tmp[0] = '\0';
    if (!f->failed)
        f->nowhere = 1;
    f->failed = 1;
    return -1;
}

int km_file_open_temp(struct km_out_file *f)
{
    *f = (struct km_out_file){ .fd = -1 };
    choose_places(f);
    hold_xfsz(f);
    if (create_temp(f, 0) == 0)
        return 0;
    release_xfsz(f);
    return -1;
}

/* n bytes at `at`, through short writes: 0, else -1 with errno set. */
static int write_all(const struct km_out_file *f, const char *c, size_t n,
                     off_t at)
{
    while (n > 0) {
        ssize_t w = write_at(f, c, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        c += w;
        at += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The f->size bytes of `src` into f's new temporary file: 0, else -1 with
 * errno set and *lost when reading `src` failed. */
static int copy_from(struct km_out_file *f, int src, int *lost)
{
    char buf[16384];
    *lost = 0;
    for (off_t at = 0; at < f->size;) {
        size_t n = f->size - at < (off_t)sizeof buf ? (size_t)(f->size - at)
                                                    : sizeof buf;
        ssize_t r = pread(src, buf, n, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            *lost = 1;
            return -1;
        }
        if (write_all(f, buf, (size_t)r, at) != 0)
            return -1;
        at += r;
    }
    return 0;
}

/* The place f is in has failed (its refusal noted): copy what f holds
 * into a new temporary file in the next place that takes it, and remove
 * the old one.  The new file is left open if the old one was.  0, else -1
 * with f->failed set and no temporary file left anywhere. */
static int move_on(struct km_out_file *f)
{
    int was_open = f->fd >= 0;
    int src = was_open ? f->fd : open(f->tmp, O_RDONLY | O_CLOEXEC);
    memcpy(f->moving, f->tmp, sizeof f->moving);
    f->fd = -1;
    f->tmp[0] = '\0';
    if (src < 0)
        fail_errno(f, "read back", f->moving);
    while (!f->failed && create_temp(f, f->place + 1) == 0) {
        int lost, rc = copy_from(f, src, &lost);
        if (rc == 0 && !was_open) {
            rc = close(f->fd);
            lost = 0;
            f->fd = -1;
        }
        if (rc == 0)
            break;
        if (lost)
            fail_errno(f, "read back", f->moving);
        else
            refuse(f, strerror(errno));
        if (f->fd >= 0)
            close(f->fd);
        f->fd = -1;
        unlink(f->tmp);
        f->tmp[0] = '\0';
    }
    if (src >= 0)
        close(src);
    unlink(f->moving);
    f->moving[0] = '\0';
    return f->failed ? -1 : 0;
}

void km_file_pwrite(struct km_out_file *f, const void *p, size_t n, off_t at)
{
    while (!f->failed) {
        if (write_all(f, p, n, at) == 0) {
            if (at + (off_t)n > f->size)
                f->size = at + (off_t)n;
            return;
        }
        refuse(f, strerror(errno));
        move_on(f);
    }
}

void km_file_write(struct km_out_file *f, const void *p, size_t n)
{
    km_file_pwrite(f, p, n, f->end);
    f->end += (off_t)n;
}

void km_file_close(struct km_out_file *f)
{
    if (f->fd >= 0 && close(f->fd) != 0 && errno != EINTR)
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
    if (f->moving[0])
        unlink(f->moving);
    f->tmp[0] = '\0';
    f->moving[0] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */

/* The path of BASE.NNN[.<rank>] in `dir`: 0, else -1. */
static int numbered_path(char *buf, size_t size, const char *dir,
                         const char *base, int nnn, int rank)
{
    char leaf[48];
    if (rank >= 0)
        snprintf(leaf, sizeof leaf, "%s.%03d.%d", base, nnn, rank);
    else
        snprintf(leaf, sizeof leaf, "%s.%03d", base, nnn);
    return join(buf, size, dir, leaf);
}

/* The path of KM_output.NNN[.<rank>] in `dir`: 0, else -1. */
static int file_path(char *buf, size_t size, const char *dir, int nnn,
                     int rank)
{
    return numbered_path(buf, size, dir, "KM_output", nnn, rank);
}

/* "BASE.DDD" or "BASE.DDD.<digits>": DDD, else -1. */
static int taken_number(const char *s, const char *base)
{
    size_t len = strlen(base);
    if (strncmp(s, base, len) != 0 || s[len] != '.')
        return -1;
    s += len + 1;
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

/* Mark every number some BASE file in `dir` takes.  On Linux through
 * getdents64, which (unlike opendir) does not allocate, so a signal
 * handler may call it. */
static void scan_taken(const char *dir, const char *base,
                       unsigned char used[KM_MAX_FILES])
{
    if (!dir[0])
        dir = ".";
#if defined(__linux__) && defined(SYS_getdents64)
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
            int k = taken_number(buf + off + 19, base);    /* d_name */
            if (k >= 0)
                used[k] = 1;
            off += reclen;
        }
    }
    close(fd);
#else
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int k = taken_number(e->d_name, base);
        if (k >= 0)
            used[k] = 1;
    }
    closedir(d);
#endif
}

/* Link the temporary file to `path`: 0 done, 1 taken, -1 failed (errno). */
static int link_to(const struct km_out_file *f, const char *path)
{
    if (naming_fails(f))
        return -1;
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
            int e = errno;
            unlink(path);
            errno = e;
        }
    }
    return -1;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

int km_file_lowest(const char *dir, const char *base, int rank,
                   int (*claim)(const char *path, void *arg), void *arg)
{
    unsigned char used[KM_MAX_FILES] = { 0 };
    char path[KM_PATH_MAX], whole[KM_PATH_MAX];
    if (rank < 0)
        scan_taken(dir, base, used);
    for (int n = 0; n < KM_MAX_FILES; n++) {
        if (used[n])
            continue;
        if (rank >= 0) {
            if (numbered_path(whole, sizeof whole, dir, base, n, -1) != 0)
                return -1;
            if (exists(whole))
                continue;
        }
        if (numbered_path(path, sizeof path, dir, base, n, rank) != 0)
            return -1;
        int rc = claim(path, arg);
        if (rc == 0)
            return n;
        if (rc < 0)
            return -1;
    }
    return -2;
}

static int claim_by_link(const char *path, void *f)
{
    return link_to(f, path);
}

/* Take the lowest free name in name->dir for the temporary file.  0 with
 * name->nnn set, else -1 (the place refused). */
static int link_lowest(struct km_out_file *f, struct km_outname *name)
{
    int n = km_file_lowest(name->dir, "KM_output", name->rank, claim_by_link,
                           f);
    if (n >= 0) {
        name->nnn = n;
        return 0;
    }
    refuse(f, n == -2 ? "KM_output.000 to KM_output.999 are taken"
                      : strerror(errno));
    return -1;
}

/* Is the file *name names still the one this process wrote? */
static int still_ours(const struct km_outname *name)
{
    char path[KM_PATH_MAX];
    struct stat sb;
    if (name->nnn < 0 ||
        file_path(path, sizeof path, name->dir, name->nnn, name->rank) != 0)
        return 0;
    return stat(path, &sb) == 0 && sb.st_dev == name->dev &&
           sb.st_ino == name->ino && sb.st_size == name->size &&
           sb.st_mtim.tv_sec == name->mtime.tv_sec &&
           sb.st_mtim.tv_nsec == name->mtime.tv_nsec;
}

/* Name the temporary file in the place it is in (see km_file_place): 0
 * done, -1 the place refused. */
static int name_here(struct km_out_file *f, struct km_outname *name, int rank)
{
    const char *dir = f->dirs[f->place];
    char path[KM_PATH_MAX];
    if (still_ours(name) && name->rank == rank &&
        strcmp(name->dir, dir) == 0) {      /* this run's file: replace */
        if (file_path(path, sizeof path, dir, name->nnn, rank) == 0 &&
            !naming_fails(f) && rename(f->tmp, path) == 0)
            return 0;
        refuse(f, strerror(errno));
        return -1;
    }
    struct km_outname fresh = { .nnn = -1, .rank = rank };
    snprintf(fresh.dir, sizeof fresh.dir, "%s", dir);   /* fits: f->tmp did */
    if (link_lowest(f, &fresh) != 0)
        return -1;
    km_file_remove_own(name);        /* superseded (other kind or place) */
    fresh.said = name->said;
    *name = fresh;
    return 0;
}

/* What identifies the file just written, so that a later write knows it. */
static void remember(struct km_outname *name)
{
    char path[KM_PATH_MAX];
    struct stat sb;
    if (file_path(path, sizeof path, name->dir, name->nnn, name->rank) == 0 &&
        stat(path, &sb) == 0) {
        name->dev = sb.st_dev;
        name->ino = sb.st_ino;
        name->size = sb.st_size;
        name->mtime = sb.st_mtim;
    }
}

/* "cannot write KM_output in A (why); written to B/KM_output.NNN instead" */
static void moved(const struct km_out_file *f, const struct km_outname *name,
                  char *buf, size_t size)
{
    char path[KM_PATH_MAX];
    file_path(path, sizeof path, name->dir, name->nnn, name->rank);
    buf[0] = '\0';
    append(buf, size, "cannot write KM_output ");
    refusals(f, f->place, buf, size);
    append(buf, size, "; written to %s instead", path);
}

/* Print `line` unless the last write printed the same (a file replaced
 * in the place it moved to, every place failing again the same way). */
static void say_once(struct km_outname *name, const char *line)
{
    uint64_t h = 14695981039346656037u;      /* FNV-1a */
    for (const char *c = line; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    h |= 1;
    if (h != name->said)
        km_complain("%s", line);
    name->said = h;
}

int km_file_place(struct km_out_file *f, struct km_outname *name, int rank)
{
    hold_xfsz(f);                    /* a move writes */
    while (!f->failed && name_here(f, name, rank) != 0)
        move_on(f);
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (f->tmp[0])
        unlink(f->tmp);              /* after link(), or a failure */
    f->tmp[0] = '\0';
    release_xfsz(f);
    char line[2 * KM_PATH_MAX];
    if (f->failed) {
        failure(f, line, sizeof line);
        say_once(name, line);
        return -1;
    }
    remember(name);
    if (f->place > 0) {
        moved(f, name, line, sizeof line);
        say_once(name, line);
    } else {
        name->said = 0;
    }
    return 0;
}

int km_file_write_whole(const char *text, size_t len, struct km_outname *name,
                        int rank)
{
    struct km_out_file f;
    km_file_open_temp(&f);
    km_file_write(&f, text, len);
    while (!f.failed) {
        int rc = close(f.fd);
        f.fd = -1;
        if (rc == 0 || errno == EINTR)
            break;
        /* NFS reports a full disk here: the file may lack part of the
         * text, which is at hand: write it again in the next place */
        refuse(&f, strerror(errno));
        unlink(f.tmp);
        f.size = f.end = 0;
        if (create_temp(&f, f.place + 1) == 0)
            km_file_write(&f, text, len);
    }
    km_file_close(&f);
    return km_file_place(&f, name, rank);
}

void km_file_remove_own(struct km_outname *name)
{
    char path[KM_PATH_MAX];
    if (still_ours(name) &&
        file_path(path, sizeof path, name->dir, name->nnn, name->rank) == 0)
        unlink(path);
    name->nnn = -1;
}
