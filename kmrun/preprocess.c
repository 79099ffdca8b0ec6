/*
 * preprocess.c — run the preprocessor (see preprocess.h): fork and exec
 * it with its output on a pipe, read all of it, and wait (km_run_output,
 * which asking the compiler where its INCLUDE files are uses too).
 */
#include "kmrun/preprocess.h"

#include <errno.h>
#include <fcntl.h>
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

/* Read fd to its end into out, at most `max` bytes: false if it said
 * more, or a read failed. */
static bool read_all(int fd, struct km_buf *out, size_t max)
{
    char chunk[65536];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0;
        if (out->len + (size_t)r > max)
            return false;
        km_buf_add(out, chunk, (size_t)r);
    }
}

int km_run_output(char *const argv[], bool quiet, size_t max,
                  struct km_buf *out, bool *whole)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        int null = quiet ? open("/dev/null", O_RDWR) : -1;
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    *whole = read_all(fds[0], out, max);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}

bool km_preprocess(const struct km_cpp_opts *o, const char *path,
                   struct km_buf *out, struct km_diag *d)
{
    char *words;
    char **argv = arguments(o, path, &words);
    bool ok = false, whole = false;
    if (!argv[0]) {
        km_error(d, path, 0, 0, "no preprocessor command");
        goto done;
    }
    int status = km_run_output(argv, false, MAX_OUTPUT, out, &whole);
    if (status < 0) {
        km_error(d, path, 0, 0, "cannot run the preprocessor: %s",
                 strerror(errno));
        goto done;
    }
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
