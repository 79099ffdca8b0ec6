/*
 * compiler.c — ask the compiler where it finds INCLUDE files (see
 * compiler.h): run each question (km_run_output), keep the directories
 * that exist.
 */
#define _XOPEN_SOURCE 700  /* realpath */
#include "kmrun/compiler.h"

#include <limits.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/buf.h"
#include "support/path.h"
#include "kmrun/preprocess.h"

/* What a question prints is a line or two; more is not an answer. */
#define MAX_ANSWER 65536

/* Run compiler + option, standard error thrown away; its standard
 * output in *out (what was there before is dropped).  Returns whether it
 * exited 0. */
static bool ask(const char *compiler, const char *option, struct km_buf *out)
{
    out->len = 0;
    if (out->data)
        out->data[0] = 0;
    char *argv[] = { (char *)compiler, (char *)option, NULL };
    bool whole;
    int status = km_run_output(argv, true, MAX_ANSWER, out, &whole);
    return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return p[0] == '/' && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

struct dirs {
    char **v;
    int n, cap;
};

static void add_dir(struct dirs *d, const char *p, size_t len)
{
    char *dir = km_xstrndup(p, len);
    bool seen = false;
    for (int k = 0; k < d->n && !seen; k++)
        seen = strcmp(d->v[k], dir) == 0;
    if (seen || !is_dir(dir)) {
        free(dir);
        return;
    }
    KM_GROW(d->v, d->cap, d->n + 1);
    d->v[d->n++] = dir;
}

/* Each blank-separated word of `text` (with `prefix` removed; words
 * without it skipped) that is a directory. */
static void add_words(struct dirs *d, const char *text, const char *prefix)
{
    size_t pl = strlen(prefix);
    for (const char *p = text; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (p > w && (size_t)(p - w) > pl && !strncmp(w, prefix, pl))
            add_dir(d, w + pl, (size_t)(p - w) - pl);
    }
}

/* An MPI wrapper, by its name (mpif77, mpifort, mpiifort, mpif90.mpich);
 * only they are asked -show, which another compiler may take for
 * something else. */
static bool mpi_wrapper(const char *compiler)
{
    const char *base = strrchr(compiler, '/');
    base = base ? base + 1 : compiler;
    return strncmp(base, "mpi", 3) == 0;
}

char **km_compiler_include_dirs(const char *compiler, int *n)
{
    struct dirs d = {0};
    struct km_buf b = {0};
    /* a wrapper's -I first: the compiler searches them before its own */
    if (mpi_wrapper(compiler)) {
        if (ask(compiler, "--showme:incdirs", &b)) {
            add_words(&d, b.data ? b.data : "", "");
        } else if (ask(compiler, "-show", &b)) {
            add_words(&d, b.data ? b.data : "", "-I");
        }
    }
    int before = d.n;
    if (ask(compiler, "-print-file-name=finclude", &b) && b.data)
        add_dir(&d, b.data, strcspn(b.data, "\r\n"));
    bool found_finclude = d.n > before;
    if (!found_finclude && ask(compiler, "-print-resource-dir", &b) &&
        b.data) {
        /* PREFIX/lib/clang/N -> PREFIX/include/flang */
        size_t len = strcspn(b.data, "\r\n");
        b.data[len] = 0;
        struct km_buf flang = {0};
        km_buf_printf(&flang, "%s/../../../include/flang", b.data);
        char real[PATH_MAX];
        if (realpath(flang.data, real))
            add_dir(&d, real, strlen(real));
        km_buf_free(&flang);
    }
    km_buf_free(&b);
    *n = d.n;
    return d.v;
}

void km_compiler_include_dirs_free(char **dirs, int n)
{
    for (int k = 0; k < n; k++)
        free(dirs[k]);
    free(dirs);
}
