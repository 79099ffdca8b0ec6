/*
 * kmfc — the compiler wrapper: `make FC="kmfc mpif90"`.
 *
 * kmfc COMPILER ARGS... runs the compile as the build asked, with every
 * Fortran source instrumented first: kmrun -o writes the instrumented copy
 * KM_<stem><ext> beside the object file (the user reads it there), or
 * where that may not be (-o /dev/null, a read-only directory) in a
 * directory of kmfc's own that it removes when it ends, with
 * line markers so that diagnostics, runtime errors and debuggers name the
 * original file and line; the compiler then gets the copy in place of the
 * source, with the same flags, the object named as the plain compile
 * names it, and -I<the source's directory> first (INCLUDE and #include
 * search the including file's directory).  A link gets libkm.  Everything
 * else, and configure's and CMake's probes, pass through untouched.
 *
 * kmrun searches for INCLUDE files where the compiler does: the user's
 * -I, then what the compiler says (kmrun --compiler: omp_lib.h, mpif.h).
 * A dependency file (-MD, -MMD) is the compiler's rule for the source as
 * the user wrote it (-M, after the copy's compile): the copy has no
 * #include left.
 *
 * Must never: change where an output lands (object, module, dependency
 * file), write over a file kmtool did not write, write where the user's
 * build writes nothing (beside /dev/null, into a read-only directory),
 * leave a temporary file behind, share a temporary name between two
 * compiles (parallel make), or fail a build the plain
 * compiler passes: a file kmrun cannot read, and one whose instrumented
 * copy does not compile, is compiled as it is, with a warning
 * (KMFC_STRICT=1 makes either an error).
 */
#define _XOPEN_SOURCE 700  /* realpath, sigaction */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lexer/reader.h"
#include "support/buf.h"
#include "support/path.h"

#ifndef KM_BINDIR
#define KM_BINDIR "/usr/local/bin"
#endif
#ifndef KM_LIBDIR
#define KM_LIBDIR "/usr/local/lib"
#endif
#ifndef KM_PKGDATADIR
#define KM_PKGDATADIR "/usr/local/share/kmtool"
#endif

static bool verbose;

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kmfc: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* --- the compile line ----------------------------------------------------- */

/* Options whose value is the next argument when not attached. */
static const char *const with_value[] = {
    "-o", "-I", "-J", "-D", "-U", "-L", "-l", "-MF", "-MT", "-MQ", "-x",
    "-include", "-isystem", "-iquote", "-idirafter", "-imacros", "-module",
    "-Xlinker", "-Xpreprocessor", "-Xassembler", "-fintrinsic-modules-path",
    "-z", "-T", "-u", "-e", "-module-dir",
};


static bool takes_value(const char *a)
{
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
        if (!strcmp(a, with_value[k]))
            return true;
    return false;
}

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? dot : "";
}

/* A Fortran source, by its name as gfortran decides. */
static bool is_fortran(const char *path)
{
    enum km_form form;
    return km_form_from_name(path, &form);
}

struct line {
    char **argv;              /* argv[0]: the compiler */
    int argc;
    int *sources;             /* indexes of the Fortran sources */
    int nsources;
    int output;               /* index of -o's value, or -1 */
    const char *module_dir;   /* -J / -module / -module-dir value */
    bool compile_only;        /* -c */
    bool no_code;             /* -E -S -M -MM -fsyntax-only: nothing to
                                 instrument */
    bool query;               /* no input: --version, -v, -qversion,
                                 -print-file-name=... */
    bool other_input;         /* objects, libraries, C sources, -l */
    bool cpp, nocpp;          /* -cpp / -fpp, -nocpp */
    bool deps;                /* -MD / -MMD: a dependency file is written */
    bool deps_system;         /* -MD: system headers in it too */
    const char *dep_file;     /* -MF value */
    const char *form;         /* --free-form / --fixed-form, or NULL */
    const char *line_length;  /* -ffixed-line-length-N etc.: N or none */
    bool d_lines;             /* -fd-lines-as-code */
    const char *openmp;       /* -fopenmp and friends: they define _OPENMP */
    bool lang_forced;         /* -x: the compiler is told the language */
    bool shared;              /* -shared: a library, not a program */
};

/* The value of option `a` at argv[*i] (attached or the next argument). */
static const char *option_value(const struct line *L, int *i, const char *a)
{
    const char *arg = L->argv[*i];
    size_t n = strlen(a);
    if (arg[n])
        return arg + n + (arg[n] == '=');
    return *i + 1 < L->argc ? L->argv[++*i] : "";
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* -ffixed-line-length-N, -ffree-line-length-N (-none), or flang's =N. */
static const char *line_length_of(const char *a)
{
    const char *v = NULL;
    if (starts(a, "-ffixed-line-length"))
        v = a + strlen("-ffixed-line-length");
    else if (starts(a, "-ffree-line-length"))
        v = a + strlen("-ffree-line-length");
    if (!v || (*v != '-' && *v != '='))
        return NULL;
    v++;
    return strcmp(v, "0") == 0 ? "none" : v;
}

static void read_line(struct line *L, int argc, char **argv)
{
    memset(L, 0, sizeof *L);
    L->argv = argv;
    L->argc = argc;
    L->output = -1;
    L->sources = calloc((size_t)argc + 1, sizeof *L->sources);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == 0) {
            if (is_fortran(a) && !L->lang_forced)
                L->sources[L->nsources++] = i;
            else
                L->other_input = true;
            continue;
        }
        const char *v;
        if (!strcmp(a, "-c")) {
            L->compile_only = true;
        } else if (!strcmp(a, "-o")) {
            L->output = i + 1 < argc ? ++i : -1;
        } else if (!strcmp(a, "-E") || !strcmp(a, "-S") || !strcmp(a, "-M") ||
                   !strcmp(a, "-MM") || !strcmp(a, "-fsyntax-only")) {
            L->no_code = true;
        } else if (!strcmp(a, "-shared")) {
            L->shared = true;
        } else if (!strcmp(a, "-MD") || !strcmp(a, "-MMD")) {
            L->deps = true;
            L->deps_system |= !strcmp(a, "-MD");
        } else if (starts(a, "-MF")) {
            L->dep_file = option_value(L, &i, "-MF");
        } else if (starts(a, "-MT") || starts(a, "-MQ")) {
            option_value(L, &i, a[2] == 'T' ? "-MT" : "-MQ");
        } else if (!strcmp(a, "-cpp") || !strcmp(a, "-fpp") ||
                   !strcmp(a, "-Mpreprocess")) {
            L->cpp = true;
        } else if (!strcmp(a, "-nocpp") || !strcmp(a, "-nofpp") ||
                   !strcmp(a, "-fpreprocessed")) {
            /* (-fpreprocessed: the preprocessor's output already, as
             * CMake's Ninja rules compile x-pp.f90) */
            L->nocpp = true;
        } else if (!strcmp(a, "-ffree-form") || !strcmp(a, "-free") ||
                   !strcmp(a, "-Mfree")) {
            L->form = "--free-form";
        } else if (!strcmp(a, "-ffixed-form") || !strcmp(a, "-fixed") ||
                   !strcmp(a, "-Mfixed")) {
            L->form = "--fixed-form";
        } else if ((v = line_length_of(a)) != NULL) {
            L->line_length = v;
        } else if (!strcmp(a, "-fd-lines-as-code")) {
            L->d_lines = true;
        } else if (!strcmp(a, "-fopenmp") || !strcmp(a, "-qopenmp") ||
                   !strcmp(a, "-mp") || !strcmp(a, "-fiopenmp")) {
            L->openmp = a;
        } else if (starts(a, "-J")) {
            L->module_dir = option_value(L, &i, "-J");
        } else if (!strcmp(a, "-module") || !strcmp(a, "-module-dir")) {
            L->module_dir = option_value(L, &i, a);
        } else if (starts(a, "-x")) {
            const char *lang = option_value(L, &i, "-x");
            L->lang_forced = strcmp(lang, "none") != 0;
        } else if (starts(a, "-l")) {
            option_value(L, &i, "-l");
            L->other_input = true;
        } else if (takes_value(a)) {
            i++;
        }
    }
    /* nothing to compile or link: a question to the compiler (-qversion,
     * -V, ...), whatever its flag */
    L->query = L->nsources == 0 && !L->other_input;
}

/* --- probes ------------------------------------------------------------------ */

/* configure's conftest programs and CMake's compiler checks must see the
 * compiler as it is. */
static bool probe_path(const char *p)
{
    const char *base = strrchr(p, '/');
    base = base ? base + 1 : p;
    return starts(base, "conftest") || strstr(p, "CMakeFiles/CMakeTmp") ||
           strstr(p, "CMakeFiles/CMakeScratch") ||
           strstr(p, "CMakeFiles/FortranCInterface") ||
           strstr(p, "CompilerIdFortran") || strstr(p, "CMakeFortranCompilerId");
}

static bool is_probe(const struct line *L)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) && probe_path(cwd))
        return true;
    for (int k = 0; k < L->nsources; k++)
        if (probe_path(L->argv[L->sources[k]]))
            return true;
    return L->output >= 0 && probe_path(L->argv[L->output]);
}

/* --- where kmtool is ------------------------------------------------------------- */

/* $ENV, else REL beside this executable if it exists, else FALLBACK. */
static char *locate(const char *env, const char *rel, const char *fallback)
{
    const char *e = getenv(env);
    if (e && *e)
        return km_xstrdup(e);
    char *p = km_beside_self(rel);
    return p ? p : km_xstrdup(fallback);
}

/* The control file: $KM_CONTROL, else KM_control.dat in the build
 * directory (the current one or a parent), else in the source's
 * directory or a parent, else NULL (kmrun reads the installed default). */
static char *find_up(const char *start)
{
    char dir[PATH_MAX];
    if (!realpath(start, dir))
        return NULL;
    for (;;) {
        char *p = km_path_join(dir, "KM_control.dat");
        if (access(p, R_OK) == 0)
            return p;
        free(p);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return NULL;
        *slash = 0;
    }
}

static char *control_for(const char *source)
{
    const char *e = getenv("KM_CONTROL");
    if (e && *e)
        return km_xstrdup(e);
    char *c = find_up(".");
    if (!c) {
        char *d = km_dir_name(source);
        c = find_up(d);
        free(d);
    }
    return c;
}

/* --- running things ------------------------------------------------------------ */

static void show(char **argv)
{
    fprintf(stderr, "kmfc:");
    for (int k = 0; argv[k]; k++)
        fprintf(stderr, " %s", argv[k]);
    fprintf(stderr, "\n");
}

/* Run argv and wait (quiet: its output thrown away; errfile: its
 * standard error added to that file); returns its exit status (127: could
 * not run). */
static int run_to(char **argv, bool quiet, const char *errfile)
{
    if (verbose)
        show(argv);
    pid_t pid = fork();
    if (pid < 0) {
        say("cannot run %s: %s", argv[0], strerror(errno));
        return 127;
    }
    if (pid == 0) {
        if (quiet) {
            freopen("/dev/null", "w", stdout);
            freopen("/dev/null", "w", stderr);
        } else if (errfile) {
            freopen(errfile, "a", stderr);
        }
        execvp(argv[0], argv);
        say("cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 127;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int run_how(char **argv, bool quiet)
{
    return run_to(argv, quiet, NULL);
}

static int run(char **argv)
{
    return run_how(argv, false);
}

static void run_and_exit(char **argv)
{
    if (verbose)
        show(argv);
    execvp(argv[0], argv);
    say("cannot run %s: %s", argv[0], strerror(errno));
    exit(127);
}

/* --- kmfc's own directory ---------------------------------------------------------- */

/* What the build must not see lives in one directory of this kmfc's own,
 * $TMPDIR/kmfc.XXXXXX (parallel compiles share nothing), made when first
 * needed and removed with all it holds when kmfc ends, or is interrupted,
 * hung up or terminated: the copies that cannot lie beside their object
 * (-o /dev/null, a read-only directory), libkm's MPI calls and the prefix
 * routines of a link, a compile's standard error.  (The one value this
 * file keeps outside main(): a signal handler must find it.) */
static char *scratch;
static char *scratch_rm[4];       /* rm -rf DIR, ready for a signal */

static void scratch_signal(int sig)
{
    pid_t pid = fork();
    if (pid == 0) {
        execv("/bin/rm", scratch_rm);
        _exit(127);
    }
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The directory, made if need be; NULL if it cannot be. */
static const char *scratch_dir(void)
{
    if (scratch)
        return scratch;
    const char *t = getenv("TMPDIR");
    struct km_buf b = {0};
    km_buf_printf(&b, "%s/kmfc.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(b.data)) {
        km_buf_free(&b);
        return NULL;
    }
    scratch = b.data;
    scratch_rm[0] = "rm";
    scratch_rm[1] = "-rf";
    scratch_rm[2] = scratch;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = scratch_signal;
        sigemptyset(&sa.sa_mask);
        /* (a signal the build ignores, nohup's SIGHUP, stays ignored) */
        if (sigaction(sigs[k], &sa, &old) == 0 && old.sa_handler == SIG_IGN)
            sigaction(sigs[k], &old, NULL);
    }
    return scratch;
}

/* Remove the directory and everything in it (kmrun's, the compiler's). */
static void remove_scratch(void)
{
    if (!scratch)
        return;
    DIR *d = opendir(scratch);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = km_path_join(scratch, e->d_name);
        unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(scratch);
    scratch_rm[2] = NULL;
    free(scratch);
    scratch = NULL;
}

/* A file of its own in the directory, `stem`.XXXXXX, or NULL. */
static char *scratch_file(const char *stem)
{
    const char *dir = scratch_dir();
    if (!dir)
        return NULL;
    struct km_buf b = {0};
    km_buf_printf(&b, "%s/%s.XXXXXX", dir, stem);
    int fd = mkstemp(b.data);
    if (fd < 0) {
        km_buf_free(&b);
        return NULL;
    }
    close(fd);
    return b.data;
}

struct args {
    char **v;
    int n, cap;
};

static void push(struct args *a, const char *s)
{
    KM_GROW(a->v, a->cap, a->n + 2);
    a->v[a->n++] = km_xstrdup(s);
    a->v[a->n] = NULL;
}

/* One argument: `opt` and `value` run together (--control=FILE, -IDIR). */
static void push_joined(struct args *a, const char *opt, const char *value)
{
    struct km_buf b = {0};
    km_buf_printf(&b, "%s%s", opt, value);
    push(a, b.data);
    km_buf_free(&b);
}

static void free_args(struct args *a)
{
    for (int k = 0; k < a->n; k++)
        free(a->v[k]);
    free(a->v);
    *a = (struct args){0};
}

/* --- instrumenting one source --------------------------------------------------- */

static char *stem_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    return km_xstrndup(base, dot ? (size_t)(dot - base) : strlen(base));
}

/* The object file a compile of `source` writes. */
static char *object_of(const struct line *L, const char *source)
{
    if (L->compile_only && L->output >= 0 && L->nsources == 1)
        return km_xstrdup(L->argv[L->output]);
    char *stem = stem_of(source);
    struct km_buf o = {0};
    km_buf_printf(&o, "%s.o", stem);
    free(stem);
    return o.data;
}

/* Was the file at `path` written by kmfc (so it may be written again)?
 * Its first line is kmrun's line marker. */
static bool ours_or_absent(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return errno == ENOENT;
    char first[8] = "";
    bool ours = fgets(first, sizeof first, fp) && starts(first, "# 1 \"");
    fclose(fp);
    return ours;
}

/* What the copy's extension is: the source's, or when kmrun ran the
 * preprocessor, its unpreprocessed twin (.F90 -> .f90), so the compiler
 * does not run it again. */
static const char *copy_ext(const char *ext, bool preprocessed)
{
    static const char *const map[][2] = {
        {".F", ".f"}, {".FOR", ".for"}, {".FTN", ".ftn"}, {".fpp", ".f"}, {".FPP", ".f"}, {".F90", ".f90"}, {".F95", ".f95"},
        {".F03", ".f03"}, {".F08", ".f08"},
    };
    if (preprocessed)
        for (size_t k = 0; k < sizeof map / sizeof *map; k++)
            if (!strcmp(ext, map[k][0]))
                return map[k][1];
    return ext;
}

/* The preprocessor kmrun runs: the user's compiler, which knows the
 * build's predefined macros (-fopenmp's _OPENMP too); $KM_CPP wins. */
static char *cpp_command(const struct line *L)
{
    const char *env = getenv("KM_CPP");
    if (env && *env)
        return NULL;
    struct km_buf c = {0};
    km_buf_printf(&c, "%s -E -cpp", L->argv[0]);
    if (L->openmp)
        km_buf_printf(&c, " %s", L->openmp);
    return c.data;
}

/* flang (flang-new, flang-19, ...): free-form lines have no length limit
 * (its own omp_lib.h has lines past column 132). */
static bool is_flang(const char *compiler)
{
    const char *base = strrchr(compiler, '/');
    return starts(base ? base + 1 : compiler, "flang");
}

static bool reads_free_form(const struct line *L, const char *source)
{
    enum km_form form = KM_FORM_FIXED;
    if (L->form)
        return !strcmp(L->form, "--free-form");
    return km_form_from_name(source, &form) && form == KM_FORM_FREE;
}

/* kmrun -o COPY SOURCE with what the compile line says about reading it.
 * Returns whether the copy was written. */
static bool instrument(const struct line *L, const char *kmrun,
                       const char *source, const char *copy, bool preprocess)
{
    struct args a = {0};
    push(&a, kmrun);
    push(&a, "--line-markers");
    char *control = control_for(source);
    if (control)
        push_joined(&a, "--control=", control);
    free(control);
    push_joined(&a, "--module-dir=", L->module_dir ? L->module_dir : ".");
    /* INCLUDE files the user names no directory for (omp_lib.h, mpif.h):
     * kmrun asks the compiler, only if it needs to */
    push_joined(&a, "--compiler=", L->argv[0]);
    if (L->form)
        push(&a, L->form);
    if (L->line_length)
        push_joined(&a, "--line-length=", L->line_length);
    else if (is_flang(L->argv[0]) && reads_free_form(L, source))
        push(&a, "--line-length=none");
    if (L->d_lines)
        push(&a, "--d-lines-as-code");
    if (preprocess) {
        push(&a, "--cpp");
        char *cmd = cpp_command(L);
        if (cmd)
            push_joined(&a, "--cpp-command=", cmd);
        free(cmd);
    }
    /* -I -D -U, attached or not, as kmrun takes them */
    static const char *const cpp_opts[] = {"-I", "-D", "-U"};
    for (int i = 1; i < L->argc; i++) {
        const char *x = L->argv[i];
        for (size_t k = 0; k < sizeof cpp_opts / sizeof *cpp_opts; k++) {
            const char *o = cpp_opts[k];
            if (!strcmp(x, o) && i + 1 < L->argc)
                push_joined(&a, o, L->argv[i + 1]);
            else if (starts(x, o) && x[2])
                push(&a, x);
        }
    }
    push(&a, "-o");
    push(&a, copy);
    push(&a, source);
    int rc = run(a.v);
    free_args(&a);
    return rc == 0;
}

/* May a copy lie beside the object `obj`, where the user reads it?  Only
 * if the object is a file (or not there yet) in a directory kmfc may
 * write: not beside -o /dev/null, not in a read-only directory. */
static bool beside(const char *obj, const char *dir)
{
    struct stat st;
    if (stat(obj, &st) == 0 ? !S_ISREG(st.st_mode) : errno != ENOENT)
        return false;
    return access(dir, W_OK | X_OK) == 0;
}

/* The copy of `source`: KM_<stem of the object><ext> beside the object,
 * or where it may not be, in kmfc's own directory (*own set); NULL if
 * that cannot be made either. */
static char *copy_path(const struct line *L, const char *source, bool pre,
                       bool *own)
{
    char *obj = object_of(L, source);
    char *dir = km_dir_name(obj);
    *own = !beside(obj, dir);
    if (*own) {
        free(dir);
        dir = scratch_dir() ? km_xstrdup(scratch) : NULL;
    }
    if (!dir) {
        free(obj);
        return NULL;
    }
    char *stem = stem_of(obj);
    /* CMake names objects x.f90.o, and x.F90.o when its Ninja rules
     * compile x.F90-pp.f90 */
    const char *e = ext_of(source);
    const char *se = ext_of(stem);
    if (*se && se != stem && is_fortran(stem))
        stem[se - stem] = 0;
    struct km_buf name = {0};
    km_buf_printf(&name, "KM_%s%s", stem, copy_ext(e, pre));
    char *p = km_path_join(dir, name.data);
    km_buf_free(&name);
    free(obj);
    free(dir);
    free(stem);
    return p;
}

/* --- the link ------------------------------------------------------------------ */

/* `made` (kmrun has written src): compile it to obj with the link's
 * compiler (quiet: its complaints are not the user's business), remove
 * src.  Returns obj, or NULL (freed) if anything failed. */
static char *compile_written(bool made, const char *compiler, char *src,
                             char *obj, bool quiet)
{
    bool ok = made;
    if (ok) {
        struct args c = {0};
        push(&c, compiler);
        push(&c, "-c");
        push(&c, "-o");
        push(&c, obj);
        push(&c, src);
        ok = run_how(c.v, quiet) == 0;
        free_args(&c);
    }
    unlink(src);
    free(src);
    if (!ok) {
        free(obj);
        return NULL;
    }
    return obj;
}

/* libkm's MPI calls (kmrun --mpi-glue), compiled in `tmp` by the link's
 * own compiler: if it compiles (it finds an mpif.h), the program is an
 * MPI program and links them.  Returns the object, or NULL. */
static char *mpi_glue(const char *compiler, const char *kmrun, const char *tmp)
{
    char *src = km_path_join(tmp, "KM_libkm_mpi.f");
    char *obj = km_path_join(tmp, "KM_libkm_mpi.o");
    struct args a = {0};
    push(&a, kmrun);
    push_joined(&a, "--mpi-glue=", src);
    bool ok = run(a.v) == 0;
    free_args(&a);
    return compile_written(ok, compiler, src, obj, true);
}

/* With an INNER_PREFIX other than KM_ in the control file, the
 * instrumented objects call <prefix>IN and so on: the routines that hand
 * those calls on to libkm (kmrun --prefix-shim), compiled in `tmp`.
 * Returns the object, or NULL (no such prefix, or it did not compile). */
static char *prefix_shim(const char *compiler, const char *kmrun,
                         const char *tmp, bool with_mpi)
{
    char *src = km_path_join(tmp, "KM_prefix.f");
    char *obj = km_path_join(tmp, "KM_prefix.o");
    struct args a = {0};
    push(&a, kmrun);
    push_joined(&a, "--prefix-shim=", src);
    char *control = control_for(".");
    if (control)
        push_joined(&a, "--control=", control);
    free(control);
    if (with_mpi)
        push(&a, "--with-mpi");
    bool ok = run(a.v) == 0 && access(src, F_OK) == 0;
    free_args(&a);
    return compile_written(ok, compiler, src, obj, false);
}

static void add_link(struct args *a, const char *glue, const char *shim)
{
    if (shim)
        push(a, shim);
    if (glue)
        push(a, glue);
    char *lib = locate("KMFC_LIBKM", "../lib/libkm.a", KM_LIBDIR "/libkm.a");
    push(a, lib);
    free(lib);
}

/* -I<directory of each instrumented source>: the copy lies elsewhere, and
 * INCLUDE and #include search the including file's directory first. */
static void push_source_dirs(struct args *a, const struct line *L,
                             char *const *copies)
{
    for (int k = 0; k < L->nsources; k++) {
        if (!copies[k])
            continue;
        char *d = km_dir_name(L->argv[L->sources[k]]);
        push_joined(a, "-I", d);
        free(d);
    }
}

/* The name the user knows `source` by, for kmfc's messages (malloc'd):
 * a preprocessor's output (CMake's x.F90-pp.f90) by the file its line
 * markers name, as the compiler's and kmrun's messages name it. */
static char *user_name(const char *source)
{
    struct km_buf b = {0};
    char *name = NULL;
    if (km_buf_read_file(&b, source) && b.len)
        name = km_marked_origin(b.data, b.len);
    km_buf_free(&b);
    return name ? name : km_xstrdup(source);
}

/* Instrument every source into copies[k] (NULL: compiled as it is, said
 * so).  Returns false if that happened and `strict` forbids it. */
static bool instrument_all(const struct line *L, const char *kmrun,
                           char **copies, bool strict)
{
    for (int k = 0; k < L->nsources; k++) {
        const char *src = L->argv[L->sources[k]];
        bool pre = (km_preprocessed_name(src) || L->cpp) && !L->nocpp;
        bool own = false;
        char *copy = copy_path(L, src, pre, &own);
        const char *what = strict ? "not compiled (KMFC_STRICT)"
                                  : "compiled as it is";
        bool foreign = copy && !own && !ours_or_absent(copy);
        if (!copy || foreign || !instrument(L, kmrun, src, copy, pre)) {
            char *name = user_name(src);
            if (!copy)
                say("no directory for the copy of %s ($TMPDIR): %s", name,
                    what);
            else if (foreign)
                say("%s exists and is not kmtool's: %s is %s", copy, name,
                    what);
            else
                say("%s could not be instrumented: %s", name, what);
            free(name);
            free(copy);
            if (strict)
                return false;
            continue;
        }
        copies[k] = copy;
    }
    return true;
}

/* --- dependency files ------------------------------------------------------------ */

/* -MD / -MMD: the compiler writes a rule whose targets are the object,
 * -MT's and -MQ's and the module files the source defines, and whose
 * prerequisites are the source, the files the compiler read before it
 * (gfortran's math-vector-fortran.h), its #include files and the module
 * files it uses.  The copy reads no #include (it is the preprocessor's
 * output), names itself, and a .f90 copy of x.F90 cannot even be asked
 * for a rule without -cpp; so the copy is compiled without those
 * options, and the rule is the compiler's own for the source as the
 * user wrote it: the same line with -M / -MM in place of -MD / -MMD (the
 * compiler's front end reads the source, writes the module files it
 * would write anyway, no code), into the file the plain compile writes. */

/* How many arguments from argv[i] are a dependency file's option (-MD
 * -MMD -MP -MG, -MF -MT -MQ and their value), or 0. */
static int dep_option(const struct line *L, int i)
{
    const char *a = L->argv[i];
    if (!strcmp(a, "-MD") || !strcmp(a, "-MMD") || !strcmp(a, "-MP") ||
        !strcmp(a, "-MG"))
        return 1;
    if (starts(a, "-MF") || starts(a, "-MT") || starts(a, "-MQ"))
        return a[3] || i + 1 >= L->argc ? 1 : 2;
    return 0;
}

/* The file the compiler writes the rule of `source` to: -MF's, else the
 * output's name with its suffix made .d (-o x.F90.o: x.F90.d), else the
 * source's base name with .d. */
static char *dep_path(const struct line *L, int output, const char *source)
{
    if (L->dep_file)
        return km_xstrdup(L->dep_file);
    const char *out = output >= 0 ? L->argv[output] : NULL;
    char *stem = out ? km_xstrdup(out) : stem_of(source);
    if (out) {
        char *slash = strrchr(stem, '/');
        char *base = slash ? slash + 1 : stem;
        char *dot = strrchr(base, '.');
        if (dot && dot != base)
            *dot = 0;
    }
    struct km_buf b = {0};
    km_buf_printf(&b, "%s.d", stem);
    free(stem);
    return b.data;
}

/* Is argument i an input the compiler compiles other than a Fortran
 * source (a C source; not an object, a library, an option's value)? */
static bool other_source(const struct line *L, int i)
{
    const char *x = L->argv[i];
    if ((x[0] == '-' && x[1]) || (i > 1 && takes_value(L->argv[i - 1])) ||
        is_fortran(x))
        return false;
    const char *e = ext_of(x);
    return *e && strcmp(e, ".o") && strcmp(e, ".a") && strcmp(e, ".so") &&
           !strstr(x, ".so.");
}

/* The compiler's rule for `source` as the user wrote it (output: -o's
 * index, or -1 when the source is compiled alone without one), where the
 * plain compile writes it; what the compiler says goes to `errfile`.
 * Returns whether the compiler wrote it. */
static bool write_rule(const struct line *L, int output, const char *source,
                       const char *errfile)
{
    struct args a = {0};
    bool targets = false;
    push(&a, L->argv[0]);
    for (int i = 1; i < L->argc; i++) {
        const char *x = L->argv[i];
        int n = dep_option(L, i);
        if (n && (starts(x, "-MT") || starts(x, "-MQ") ||
                  !strcmp(x, "-MP") || !strcmp(x, "-MG"))) {
            /* (the targets and -MP's rules as the user asked) */
            targets |= x[2] == 'T' || x[2] == 'Q';
            for (int m = 0; m < n; m++)
                push(&a, L->argv[i + m]);
        } else if (n || !strcmp(x, "-c") || (x[0] != '-' || !x[1])) {
            /* (-MD -MMD -MF, and every input: this one is added last) */
        } else if (!strcmp(x, "-o")) {
            n = 2;
        } else if (takes_value(x) && i + 1 < L->argc) {
            push(&a, x);
            push(&a, L->argv[i + 1]);
            n = 2;
        } else {
            push(&a, x);
        }
        i += n > 1 ? n - 1 : 0;
    }
    /* what the compiler driver adds for -MD / -MMD with -o */
    if (!targets && output >= 0) {
        push(&a, "-MQ");
        push(&a, L->argv[output]);
    }
    push(&a, L->deps_system ? "-M" : "-MM");
    char *dep = dep_path(L, output, source);
    push(&a, "-MF");
    push(&a, dep);
    push(&a, source);
    bool ok = run_to(a.v, false, errfile) == 0;
    free(dep);
    free_args(&a);
    return ok;
}

/* --- compiling ------------------------------------------------------------------ */

struct group_ctx {
    const struct line *L;
    char **copies;            /* NULL where the source is compiled as it is */
    int groups;               /* sources compiled one at a time, or 1 */
    bool link;
    const char *glue, *shim;
    bool strict;
};

/* Is source k compiled in group g? */
static bool in_group(const struct group_ctx *G, int k, int g)
{
    return G->groups == 1 || k == g;
}

/* The compile line of group g: the copies in place of their sources,
 * the sources' directories before the first -I, -o the object the plain
 * compile writes (the copy's name would give KM_x.o), libkm on a link. */
static void group_args(const struct group_ctx *G, int g, struct args *a)
{
    const struct line *L = G->L;
    bool first_include = false;
    bool copies = false;
    for (int k = 0; k < L->nsources; k++)
        copies |= in_group(G, k, g) && G->copies[k];
    for (int i = 0; i < L->argc; i++) {
        int n = copies ? dep_option(L, i) : 0;
        if (n) {
            /* (the rule is the compiler's for the sources: write_rule) */
            i += n - 1;
            continue;
        }
        int which = -1;
        for (int k = 0; k < L->nsources; k++)
            if (L->sources[k] == i)
                which = k;
        if (which >= 0 && !in_group(G, which, g))
            continue;
        if (which >= 0 && G->copies[which]) {
            push(a, G->copies[which]);
            continue;
        }
        if (!first_include && starts(L->argv[i], "-I")) {
            /* the sources' own directories first, as for the source */
            push_source_dirs(a, L, G->copies);
            first_include = true;
        }
        push(a, L->argv[i]);
    }
    if (!first_include)
        push_source_dirs(a, L, G->copies);
    if (L->compile_only && L->output < 0 &&
        (G->groups > 1 || L->nsources == 1)) {
        int k = G->groups > 1 ? g : 0;
        if (G->copies[k]) {
            char *obj = object_of(L, L->argv[L->sources[k]]);
            push(a, "-o");
            push(a, obj);
            free(obj);
        }
    }
    if (G->link)
        add_link(a, G->glue, G->shim);
}


/* The file's text on our standard error. */
static void replay(const char *path)
{
    struct km_buf b = {0};
    if (km_buf_read_file(&b, path) && b.len)
        fwrite(b.data, 1, b.len, stderr);
    km_buf_free(&b);
}

/* Is this line of a compiler's message the one that says what is wrong
 * (gfortran's "Error: ...", flang's and the linker's "...: error: ...")? */
static bool error_line(const char *text)
{
    return starts(text, "Error:") || starts(text, "error:") ||
           strstr(text, ": error:") || strstr(text, ": Error:");
}

/* gfortran's "file:line:col:" line, which its "Error:" line follows. */
static bool location_line(const char *text)
{
    size_t n = strlen(text);
    return n > 1 && text[0] != ' ' && text[n - 1] == ':' &&
           strchr(text, ':') != text + n - 1;
}

/* What the compiler said was wrong: its first error line (after
 * gfortran's location line), else its first line. */
static char *first_error(const char *path)
{
    struct km_buf b = {0}, where = {0};
    char *found = NULL, *first = NULL;
    if (km_buf_read_file(&b, path) && b.len) {
        for (char *line = b.data; line && *line && !found;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            if (error_line(line)) {
                struct km_buf e = {0};
                km_buf_printf(&e, "%s%s%s", where.len ? where.data : "",
                              where.len ? " " : "", line);
                found = e.data;
            } else if (location_line(line)) {
                where.len = 0;
                km_buf_adds(&where, line);
            }
            if (!first && *line)
                first = km_xstrdup(line);
            line = nl ? nl + 1 : NULL;
        }
    }
    km_buf_free(&b);
    km_buf_free(&where);
    if (found) {
        free(first);
        return found;
    }
    return first ? first : km_xstrdup("no message");
}

/* Compile group g.  If its instrumented copies do not compile, the
 * plain compile of its sources decides (kmfc never fails a build the
 * plain compiler passes): what the copies' compile said is shown only
 * when it passes, or with KMFC_STRICT. */
static int compile_group(struct group_ctx *G, int g)
{
    const struct line *L = G->L;
    bool instrumented = false;
    for (int k = 0; k < L->nsources; k++)
        instrumented |= in_group(G, k, g) && G->copies[k];
    struct args a = {0};
    group_args(G, g, &a);
    char *errors = instrumented ? scratch_file("kmfc-err") : NULL;
    int status = run_to(a.v, false, errors);
    free_args(&a);
    if (!errors)
        return status;
    /* the dependency files: the compiler's rule for each source of the
     * group (sources compiled one at a time have no -o); one it cannot
     * write fails the group as a failed compile does */
    bool no_rule = false;
    for (int i = 1; status == 0 && L->deps && i < L->argc; i++) {
        int k = 0;
        while (k < L->nsources && L->sources[k] != i)
            k++;
        if ((k < L->nsources ? in_group(G, k, g)
                             : G->groups == 1 && other_source(L, i)) &&
            !write_rule(L, G->groups > 1 ? -1 : L->output, L->argv[i],
                        errors))
            status = 1, no_rule = true;
    }
    if (status == 0 || G->strict)
        replay(errors);
    if (status != 0 && !G->strict) {
        /* the plain compile: its own messages if it fails too (a
         * mistake of the user's), else a warning that says why */
        char **failed = km_xcalloc((size_t)L->nsources, sizeof *failed);
        for (int k = 0; k < L->nsources; k++)
            if (in_group(G, k, g)) {
                failed[k] = G->copies[k];
                G->copies[k] = NULL;
            }
        group_args(G, g, &a);
        status = run(a.v);
        free_args(&a);
        char *why = first_error(errors);
        for (int k = 0; k < L->nsources; k++) {
            if (failed[k] && status == 0) {
                char *name = user_name(L->argv[L->sources[k]]);
                if (no_rule)
                    say("the compiler wrote no dependency file for %s "
                        "(%s): %s is compiled as it is", name, why, name);
                else
                    say("%s did not compile (%s): %s is compiled as it is",
                        failed[k], why, name);
                free(name);
            }
            free(failed[k]);
        }
        free(why);
        free(failed);
    } else if (status != 0) {
        for (int k = 0; k < L->nsources; k++)
            if (in_group(G, k, g) && G->copies[k]) {
                char *name = user_name(L->argv[L->sources[k]]);
                if (no_rule)
                    say("the compiler wrote no dependency file for %s: it "
                        "is not compiled (KMFC_STRICT)", name);
                else
                    say("%s did not compile: %s is not compiled "
                        "(KMFC_STRICT)", G->copies[k], name);
                free(name);
            }
    }
    unlink(errors);
    free(errors);
    return status;
}

/* --- a line without its compiler ------------------------------------------------- */

static bool is_kmfc(const char *word)
{
    const char *base = strrchr(word, '/');
    return !strcmp(base ? base + 1 : word, "kmfc");
}

/* The word after kmfc in `cmd` ("kmfc gfortran", "/x/kmfc mpif90 -O2"),
 * or NULL. */
static char *compiler_after_kmfc(const char *cmd)
{
    char *copy = km_xstrdup(cmd), *save = NULL, *found = NULL;
    char *first = strtok_r(copy, " \t", &save);
    char *second = first ? strtok_r(NULL, " \t", &save) : NULL;
    if (first && second && is_kmfc(first) && second[0] != '-')
        found = km_xstrdup(second);
    free(copy);
    return found;
}

/* CMakeCache.txt's value of `key` (KEY:TYPE=VALUE), blanks trimmed. */
static char *cmake_cache_value(const char *key)
{
    struct km_buf b = {0};
    char *found = NULL;
    if (km_buf_read_file(&b, "CMakeCache.txt"))
        for (char *line = b.data; line && !found;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            size_t n = strlen(key);
            char *eq = strchr(line, '=');
            if (!strncmp(line, key, n) && line[n] == ':' && eq) {
                eq++;
                while (*eq == ' ' || *eq == '\t')
                    eq++;
                size_t len = strcspn(eq, " \t\r");
                found = km_xstrndup(eq, len);
            }
            line = nl ? nl + 1 : NULL;
        }
    km_buf_free(&b);
    return found;
}

/* CMake runs its last is-it-GNU check (CMakeDetermineFortranCompiler's
 * MinGW one) as `CMAKE_Fortran_COMPILER -E .../CMakeTestGNU.c`, without
 * CMAKE_Fortran_COMPILER_ARG1: with FC="kmfc gfortran" kmfc gets no
 * compiler.  It is the word after kmfc in $FC (CMake's first run), else
 * CMakeCache.txt's CMAKE_Fortran_COMPILER_ARG1 when its compiler is kmfc
 * (a run again), else NULL. */
static char *missing_compiler(void)
{
    const char *fc = getenv("FC");
    char *c = fc ? compiler_after_kmfc(fc) : NULL;
    if (c)
        return c;
    char *comp = cmake_cache_value("CMAKE_Fortran_COMPILER");
    if (comp && is_kmfc(comp))
        c = cmake_cache_value("CMAKE_Fortran_COMPILER_ARG1");
    free(comp);
    if (c && (!*c || c[0] == '-')) {
        free(c);
        c = NULL;
    }
    return c;
}

/* One of CMake's own files (its Modules directory: CMakeTestGNU.c). */
static bool cmake_module_file(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strstr(argv[i], "/Modules/CMake"))
            return true;
    return false;
}

/* --- main ------------------------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: kmfc COMPILER [ARGS...]\n"
          "Compile as COMPILER ARGS would, with every Fortran source measured\n"
          "by kmtool (see kmfc(1)): make FC=\"kmfc mpif90\".\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        usage();
    if (!strcmp(argv[1], "--version")) {
        printf("kmfc (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return 0;
    }
    verbose = getenv("KMFC_VERBOSE") && *getenv("KMFC_VERBOSE") &&
              strcmp(getenv("KMFC_VERBOSE"), "0") != 0;
    char *missing = NULL;
    if (argv[1][0] == '-') {
        missing = missing_compiler();
        if (!missing && cmake_module_file(argc, argv))
            return 1;     /* no compiler to ask: the check says no */
        if (!missing) {
            say("no compiler before %s: kmfc COMPILER [ARGS...]", argv[1]);
            return 2;
        }
        /* argv[0], the compiler, the arguments */
        char **with = km_xcalloc((size_t)argc + 2, sizeof *with);
        with[0] = argv[0];
        with[1] = missing;
        memcpy(with + 2, argv + 1, sizeof *argv * (size_t)argc);
        argv = with;
        argc++;
    }
    const char *off = getenv("KMFC_OFF");
    struct line L;
    read_line(&L, argc - 1, argv + 1);
    if ((off && *off && strcmp(off, "0") != 0) || L.query || L.no_code ||
        is_probe(&L))
        run_and_exit(argv + 1);
    bool strict = getenv("KMFC_STRICT") && strcmp(getenv("KMFC_STRICT"), "0");
    char *kmrun = locate("KMFC_KMRUN", "kmrun", KM_BINDIR "/kmrun");

    /* The sources, each instrumented: copies[k] replaces argv[sources[k]] */
    char **copies = km_xcalloc((size_t)L.nsources + 1, sizeof *copies);
    int status = instrument_all(&L, kmrun, copies, strict) ? 0 : 1;

    /* Compile: each instrumented source gets -o with the object the plain
     * compile writes (the copy's name would give KM_x.o); several at
     * once are compiled one at a time for that. */
    bool link = status == 0 && !L.compile_only && !L.shared;
    const char *tmp = link ? scratch_dir() : NULL;
    char *glue = tmp ? mpi_glue(L.argv[0], kmrun, tmp) : NULL;
    char *shim = tmp ? prefix_shim(L.argv[0], kmrun, tmp, glue != NULL)
                     : NULL;
    int groups = L.compile_only && L.output < 0 && !L.other_input &&
                 L.nsources > 1 ? L.nsources : 1;
    struct group_ctx G = {&L, copies, groups, link, glue, shim, strict};
    for (int g = 0; g < groups && status == 0; g++)
        status = compile_group(&G, g);
    remove_scratch();
    free(shim);
    free(glue);
    for (int k = 0; k < L.nsources; k++)
        free(copies[k]);
    free(copies);
    free(kmrun);
    free(L.sources);
    return status;
}
