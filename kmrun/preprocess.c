/*
 * preprocess.c — run the preprocessor (see preprocess.h): fork and exec
 * it with its output on a pipe, read all of it, and wait.
 */
#include "kmrun/preprocess.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OUTPUT ((size_t)1 << 30)

const char *km_cpp_command(const char *given)
{
    if (given && *given)
        return given;
    const char *env = getenv("KM_CPP");
    return env && *env ? env : "gfortran -E -cpp";
}

/* argv: the command's words, the options, the file. */
static char **arguments(const struct km_cpp_opts *o, const char *path,
                        char **words)
{
    int n = 0;
    size_t len = strlen(o->command);
    char **argv = km_xcalloc(len + (size_t)o->nargs + 3, sizeof *argv);
    *words = km_xstrdup(o->command);
    for (char *w = strtok(*words, " \t"); w; w = strtok(NULL, " \t"))
        argv[n++] = w;
    for (int i = 0; i < o->nargs; i++)
        argv[n++] = (char *)o->args[i];
    argv[n++] = (char *)path;
    argv[n] = NULL;
    return argv;
}

static bool read_all(int fd, struct km_buf *out)
{
    char chunk[65536];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0;
        if (out->len + (size_t)r > MAX_OUTPUT)
            return false;
        km_buf_add(out, chunk, (size_t)r);
    }
}

bool km_preprocess(const struct km_cpp_opts *o, const char *path,
                   struct km_buf *out, struct km_diag *d)
{
    char *words;
    char **argv = arguments(o, path, &words);
    bool ok = false;
    int fds[2];
    if (!argv[0]) {
        km_error(d, path, 0, 0, "no preprocessor command");
        goto done;
    }
    if (pipe(fds) != 0) {
        km_error(d, path, 0, 0, "cannot run the preprocessor: %s",
                 strerror(errno));
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        km_error(d, path, 0, 0, "cannot run the preprocessor: %s",
                 strerror(errno));
        close(fds[0]);
        close(fds[1]);
        goto done;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    bool whole = read_all(fds[0], out);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        km_error(d, path, 0, 0, "cannot run the preprocessor '%s' (choose "
                 "one with --cpp-command or KM_CPP)", argv[0]);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        km_error(d, path, 0, 0, "the preprocessor (%s) failed", o->command);
    else if (!whole)
        km_error(d, path, 0, 0, "cannot read the preprocessor's output");
    else
        ok = true;
done:
    free(argv);
    free(words);
    return ok;
}
