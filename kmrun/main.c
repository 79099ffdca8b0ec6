/*
 * main.c — the kmrun command: options, the control file, and one pass of
 * reader -> parser -> rewriter per source file.
 *
 * kmrun owns the user's files' safety: it never writes over an input file,
 * and every file it writes (KM_<file>, KM_message.txt, a copied control
 * file) appears whole under its final name or not at all (written to a
 * temporary name in the same directory, then renamed).  A file that cannot
 * be instrumented leaves no output; the others are still processed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control.h"
#include "lexer/reader.h"
#include "kmrun/compiler.h"
#include "kmrun/interfaces.h"
#include "kmrun/preprocess.h"
#include "parser/modules.h"
#include "parser/parse.h"
#include "rewriter/rewrite.h"
#include "support/buf.h"
#include "support/path.h"
#include "support/diag.h"
#include "support/opts.h"

#ifndef KM_PKGDATADIR
#define KM_PKGDATADIR "/usr/local/share/kmtool"
#endif

enum control_answer { ASK, USE_EXISTING, RESET };

/* The directories searched for INCLUDE files after the user's -I: the
 * compiler's own (--compiler: asked of it once, the first time a file is
 * in none of the others: most sources include nothing from there), then
 * the MPI installation's that configure found (mpif.h). */
struct late_dirs {
    const char *compiler;         /* --compiler=FC, or NULL */
    bool asked;
    char **asked_dirs;
    int nasked;
    const char **all;
    int nall;
};

struct options {
    const char *dir;              /* -td DIR */
    const char **files;
    int nfiles;
    const char **include_dirs;
    int ninclude_dirs;
    struct late_dirs *late;       /* after include_dirs */
    int line_length;              /* -1: the form's own (72 or 132) */
    bool form_forced;             /* --free-form or --fixed-form given */
    enum km_form form;            /* ... and which */
    bool d_lines_are_code;
    bool dump;
    enum control_answer answer;
    const char *default_control;  /* --default-control=FILE */
    const char *output;           /* -o FILE: the one file's copy; no
                                     KM_message.txt, no control file copied */
    const char *control;          /* --control=FILE, read as it is */
    bool line_markers;            /* --line-markers */
    const char *mpi_glue;         /* --mpi-glue=FILE: write it, nothing else */
    const char *prefix_shim;      /* --prefix-shim=FILE: the control's
                                     INNER_PREFIX routines, nothing else */
    bool with_mpi;                /* --with-mpi: ... MPII and MPIF too */
    const char *module_dir;       /* --module-dir=DIR: where the compiler
                                     writes module files, and kmrun its
                                     interface index files */
    bool cpp;                     /* --cpp: preprocess every file */
    bool cpp_macros;              /* -D or -U given: preprocess .F files */
    struct km_cpp_opts cpp_opts;
    char **respelled;             /* arguments respell_legacy rewrote */
    int nrespelled;
    struct file_id {              /* each input file's identity */
        bool known;
        dev_t dev;
        ino_t ino;
    } *ids;
};

static void usage(FILE *to)
{
    fputs("usage: kmrun [-td DIR] [options] file.f|file.f90 ...\n"
          "Write DIR/KM_<file> with timer calls for every source file.\n"
          "The extension chooses the source form, as for gfortran: .f .for\n"
          ".ftn .fpp (and upper case) fixed, .f90 .f95 .f03 .f08 (and upper\n"
          "case) free; any other is read as fixed form.\n"
          "\n"
          "  -td DIR               output directory (default: .; created if missing)\n"
          "  -o FILE               write the one file's instrumented copy to\n"
          "                        FILE (nothing else is written)\n"
          "  --control=FILE        read FILE as the control file (nothing is\n"
          "                        copied to DIR)\n"
          "  --line-markers        write line markers (# N \"file\") so that the\n"
          "                        compiler and debugger name the original lines\n"
          "  --module-dir=DIR      the compiler's module directory (-J): index\n"
          "                        files of what modules declare (interfaces,\n"
          "                        variables) are written and looked up there\n"
          "  -I DIR                search DIR for INCLUDE files (and index files)\n"
          "  --compiler=FC         search where FC finds INCLUDE files (omp_lib.h,\n"
          "                        an MPI wrapper's mpif.h), after the -I ones\n"
          "  --mpi-glue=FILE       write libkm's MPI calls (Fortran, for your MPI\n"
          "                        compiler) to FILE and stop\n"
          "  --prefix-shim=FILE    with an INNER_PREFIX other than KM_: write the\n"
          "                        routines it names to FILE (--with-mpi: those\n"
          "                        of MPI_INIT and MPI_FINALIZE too) and stop\n"
          "  -y, --use-control     use an existing DIR/KM_control.dat without asking\n"
          "  -n, --reset-control   replace it by the default (old one kept as .old)\n"
          "  --free-form           read every file as free form\n"
          "  --fixed-form          read every file as fixed form\n"
          "  --line-length=N       lines end at column N (none: no limit; default\n"
          "                        72 in fixed form, 132 in free form)\n"
          "  --d-lines-as-code     a D in column 1 is a blank, not a comment\n"
          "  -DNAME[=VALUE], -UNAME  define or undefine a macro for the\n"
          "                        preprocessor, which then runs on .F .F90 ...\n"
          "                        files (those gfortran preprocesses)\n"
          "  --cpp                 run the preprocessor on every file\n"
          "  --cpp-command=CMD     the preprocessor (default: $KM_CPP, or\n"
          "                        gfortran -E -cpp); it gets the -D -U -I\n"
          "                        options and the file, and writes to stdout\n"
          "  --dump                print what the front end found; write nothing\n"
          "  --default-control=F   use F as the default control file\n"
          "  -h, --help            this text\n"
          "  --version             kmtool's version\n", to);
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "kmrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    exit(2);
}

static int parse_line_length(const char *v)
{
    if (strcmp(v, "none") == 0 || strcmp(v, "0") == 0)
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 72 || n > 100000)
        die_usage("--line-length must be 'none' or a number from 72, not '%s'",
                  v);
    return (int)n;
}

/* An option for the preprocessor: -DNAME, -UNAME, -IDIR. */
static void add_cpp_arg(struct options *o, const char *opt, const char *v)
{
    struct km_buf b = {0};
    km_buf_printf(&b, "%s%s", opt, v);
    o->cpp_opts.args[o->cpp_opts.nargs++] = b.data;
}

static void free_cpp_args(struct options *o)
{
    for (int i = 0; i < o->cpp_opts.nargs; i++)
        free((char *)o->cpp_opts.args[i]);
    free(o->cpp_opts.args);
}

/* --- options -------------------------------------------------------------- */

/* The options getopt_long reads.  Those without a one-letter form have
 * values from 256 up. */
enum {
    OPT_TD = 256,
    OPT_CONTROL,
    OPT_MODULE_DIR,
    OPT_PREFIX_SHIM,
    OPT_WITH_MPI,
    OPT_MPI_GLUE,
    OPT_LINE_MARKERS,
    OPT_COMPILER,
    OPT_CPP,
    OPT_CPP_COMMAND,
    OPT_LINE_LENGTH,
    OPT_FREE_FORM,
    OPT_FIXED_FORM,
    OPT_D_LINES_AS_CODE,
    OPT_DUMP,
    OPT_DEFAULT_CONTROL,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"td", required_argument, NULL, OPT_TD}, /* -td: see respell_legacy */
    {"control", required_argument, NULL, OPT_CONTROL},
    {"module-dir", required_argument, NULL, OPT_MODULE_DIR},
    {"prefix-shim", required_argument, NULL, OPT_PREFIX_SHIM},
    {"with-mpi", no_argument, NULL, OPT_WITH_MPI},
    {"mpi-glue", required_argument, NULL, OPT_MPI_GLUE},
    {"line-markers", no_argument, NULL, OPT_LINE_MARKERS},
    {"compiler", required_argument, NULL, OPT_COMPILER},
    {"cpp", no_argument, NULL, OPT_CPP},
    {"cpp-command", required_argument, NULL, OPT_CPP_COMMAND},
    {"use-control", no_argument, NULL, 'y'},
    {"reset-control", no_argument, NULL, 'n'},
    {"line-length", required_argument, NULL, OPT_LINE_LENGTH},
    {"free-form", no_argument, NULL, OPT_FREE_FORM},
    {"fixed-form", no_argument, NULL, OPT_FIXED_FORM},
    {"d-lines-as-code", no_argument, NULL, OPT_D_LINES_AS_CODE},
    {"dump", no_argument, NULL, OPT_DUMP},
    {"default-control", required_argument, NULL, OPT_DEFAULT_CONTROL},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* '-': source files come back in place, as option 1, and nothing is
 * reordered (respell_legacy relies on it: the argument getopt reads next
 * is always argv[optind]); ':': a missing value is ':', not '?'. */
static const char short_options[] = "-:o:I:D:U:ynh";

/* The options kmrun has always taken with the value glued on (the old
 * hand-written parser matched a prefix): -tdDIR, -td=DIR, --controlFILE,
 * ...  -td is kmtool's one multi-letter option with a single dash, from
 * KMtool.  getopt_long_only would read -td DIR and -td=DIR, but not -tdDIR,
 * and would also take every long option with one dash (-control, -dump);
 * so these spellings are rewritten, one argument at a time just before
 * getopt_long reads it, as the long option getopt_long knows: --td=DIR,
 * --control=FILE.  Done then, and not over argv beforehand, so that an
 * option's value (-o -tdx) is never taken for an option. */
static const char *const glued_options[] = {
    "-td", "--control", "--module-dir", "--prefix-shim", "--mpi-glue",
    "--cpp-command", "--line-length", "--default-control",
};

/* `arg` in getopt_long's spelling (allocated), or NULL if it has it
 * already. */
static char *respell_legacy(const char *arg)
{
    for (size_t k = 0; k < sizeof glued_options / sizeof *glued_options;
         k++) {
        const char *opt = glued_options[k];
        size_t n = strlen(opt);
        if (strncmp(arg, opt, n) != 0)
            continue;
        const char *rest = arg + n;
        bool long_form = opt[1] == '-';
        if (long_form && (*rest == 0 || *rest == '='))
            return NULL;
        if (*rest == '=')
            rest++;
        struct km_buf b = {0};
        km_buf_printf(&b, "--%s%s%s", opt + (long_form ? 2 : 1),
                      *rest || arg[n] == '=' ? "=" : "", rest);
        return b.data;
    }
    return NULL;
}

/* An option as messages name it: -o, -td, --control. */
static const char *option_name(int val)
{
    static char name[32];
    if (val == OPT_TD)
        return "-td";
    if (val < 256) {
        snprintf(name, sizeof name, "-%c", val);
        return name;
    }
    return km_long_name(long_options, val);
}

static void add_include_dir(struct options *o, const char *dir)
{
    o->include_dirs[o->ninclude_dirs++] = dir;
    add_cpp_arg(o, "-I", dir);
}

/* Act on option `c` with value `v` (NULL for one that takes none). */
static void take_option(struct options *o, int c, const char *v)
{
    switch (c) {
    case OPT_TD: o->dir = v; break;
    case 'o': o->output = v; break;
    case OPT_CONTROL: o->control = v; break;
    case OPT_MODULE_DIR: o->module_dir = v; break;
    case OPT_PREFIX_SHIM: o->prefix_shim = v; break;
    case OPT_WITH_MPI: o->with_mpi = true; break;
    case OPT_MPI_GLUE: o->mpi_glue = v; break;
    case OPT_LINE_MARKERS: o->line_markers = true; break;
    case OPT_COMPILER: o->late->compiler = v; break;
    case 'I': add_include_dir(o, v); break;
    case 'D':
    case 'U':
        add_cpp_arg(o, c == 'D' ? "-D" : "-U", v);
        o->cpp_macros = true;
        break;
    case OPT_CPP: o->cpp = true; break;
    case OPT_CPP_COMMAND: o->cpp_opts.command = v; break;
    case 'y': o->answer = USE_EXISTING; break;
    case 'n': o->answer = RESET; break;
    case OPT_LINE_LENGTH: o->line_length = parse_line_length(v); break;
    case OPT_FREE_FORM:
    case OPT_FIXED_FORM:
        o->form_forced = true;
        o->form = c == OPT_FREE_FORM ? KM_FORM_FREE : KM_FORM_FIXED;
        break;
    case OPT_D_LINES_AS_CODE: o->d_lines_are_code = true; break;
    case OPT_DUMP: o->dump = true; break;
    case OPT_DEFAULT_CONTROL: o->default_control = v; break;
    case 'h':
        usage(stdout);
        exit(0);
    case OPT_VERSION:
        printf("kmrun (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        exit(0);
    }
}

static void parse_options(int argc, char **argv, struct options *o)
{
    o->dir = ".";
    o->line_length = -1;
    o->files = km_xcalloc((size_t)argc, sizeof *o->files);
    o->include_dirs = km_xcalloc((size_t)argc + 1, sizeof *o->include_dirs);
    o->cpp_opts.args = km_xcalloc((size_t)argc + 1, sizeof *o->cpp_opts.args);
    o->late = km_xcalloc(1, sizeof *o->late);
    o->respelled = km_xcalloc((size_t)argc, sizeof *o->respelled);
    opterr = 0; /* kmrun says what is wrong, in its own words */
    for (;;) {
        int at = optind;
        if (at < argc) {
            char *respelled = respell_legacy(argv[at]);
            if (respelled)
                argv[at] = o->respelled[o->nrespelled++] = respelled;
        }
        int c = getopt_long(argc, argv, short_options, long_options, NULL);
        if (c == -1)
            break;
        if (c == 1)
            o->files[o->nfiles++] = optarg;
        else if (c == '?')
            die_usage("unknown option '%s'", argv[at]);
        else if (c == ':')
            die_usage("%s needs a value", option_name(optopt));
        else if (c == 'o' || c == 'I' || c == 'D' || c == 'U')
            take_option(o, c, km_short_value(argv));
        else
            take_option(o, c, optarg);
    }
    /* after "--": files only */
    while (optind < argc)
        o->files[o->nfiles++] = argv[optind++];
    if (o->nfiles == 0 && !o->mpi_glue && !o->prefix_shim)
        die_usage("%s", "no source file given");
    if (o->output && o->nfiles > 1)
        die_usage("%s", "-o takes one source file");
    o->cpp_opts.command = km_cpp_command(o->cpp_opts.command);
    o->ids = km_xcalloc((size_t)o->nfiles, sizeof *o->ids);
    for (int i = 0; i < o->nfiles; i++) {
        struct stat st;
        if (stat(o->files[i], &st) == 0) {
            o->ids[i].known = true;
            o->ids[i].dev = st.st_dev;
            o->ids[i].ino = st.st_ino;
        }
    }
}

/* The lexer's late_include_dirs: the compiler's directories (asked the
 * first time), then the MPI installation's. */
static const char *const *late_include_dirs(void *ctx, int *n)
{
    struct late_dirs *l = ctx;
    if (!l->asked) {
        l->asked = true;
        if (l->compiler && *l->compiler)
            l->asked_dirs = km_compiler_include_dirs(l->compiler,
                                                     &l->nasked);
        l->all = km_xcalloc((size_t)l->nasked + 1, sizeof *l->all);
        for (int k = 0; k < l->nasked; k++)
            l->all[l->nall++] = l->asked_dirs[k];
        /* mpif.h is an include like any other */
        if (KM_MPIF_INCDIR[0])
            l->all[l->nall++] = KM_MPIF_INCDIR;
    }
    *n = l->nall;
    return l->all;
}

static void free_late_dirs(struct late_dirs *l)
{
    km_compiler_include_dirs_free(l->asked_dirs, l->nasked);
    free(l->all);
    free(l);
}

/* --- files ------------------------------------------------------------------ */

/* Is `path` one of the input files?  Their identities are taken once
 * (a stat of every input for every output is quadratic in the number of
 * files: minutes for a library of thousands). */
static bool is_input_file(const struct options *o, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    for (int i = 0; i < o->nfiles; i++)
        if (o->ids[i].known && o->ids[i].dev == st.st_dev &&
            o->ids[i].ino == st.st_ino)
            return true;
    return false;
}

/* Write `len` bytes to `path` whole or not at all: a temporary file in the
 * same directory, renamed over `path` once complete. */
static bool write_whole(const char *path, const char *data, size_t len,
                        struct km_diag *d)
{
    struct km_buf tmp = {0};
    km_buf_printf(&tmp, "%s.kmtmpXXXXXX", path);
    int fd = mkstemp(tmp.data);
    bool ok = fd >= 0;
    if (ok) {
        FILE *fp = fdopen(fd, "wb");
        ok = fp && fwrite(data, 1, len, fp) == len;
        ok = fp && fclose(fp) == 0 && ok;
        if (!fp)
            close(fd);
        /* mkstemp gives 0600; a source file is normally world-readable. */
        mode_t mask = umask(0);
        umask(mask);
        ok = ok && chmod(tmp.data, 0666 & ~mask) == 0;
        ok = ok && rename(tmp.data, path) == 0;
        if (!ok)
            unlink(tmp.data);
    }
    if (!ok)
        km_error(d, path, 0, 0, "cannot write: %s", strerror(errno));
    km_buf_free(&tmp);
    return ok;
}

static bool make_dir(const char *dir, struct km_diag *d)
{
    struct km_buf b = {0};
    km_buf_adds(&b, dir);
    /* Create every missing component, like mkdir -p. */
    for (size_t i = 1; i <= b.len; i++) {
        if (i < b.len && b.data[i] != '/')
            continue;
        char c = b.data[i];
        b.data[i] = 0;
        if (mkdir(b.data, 0777) != 0 && errno != EEXIST) {
            km_error(d, b.data, 0, 0, "cannot create the directory: %s",
                     strerror(errno));
            km_buf_free(&b);
            return false;
        }
        b.data[i] = c;
    }
    km_buf_free(&b);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        km_error(d, dir, 0, 0, "not a directory");
        return false;
    }
    return true;
}

/* --- the control file --------------------------------------------------------- */

/* The installed default: beside the executable first (an installation that
 * was moved, or installed with DESTDIR, still finds its own), then where
 * configure said it would be. */
static char *find_default_control(void)
{
    char *p = km_beside_self("../share/kmtool/KM_control.dat");
    return p ? p : km_xstrdup(KM_PKGDATADIR "/KM_control.dat");
}

static bool copy_default(const char *from, const char *to, struct km_diag *d)
{
    struct km_buf b = {0};
    if (!km_control_load(from, &b, d)) {
        km_buf_free(&b);
        return false;
    }
    bool ok = write_whole(to, b.data ? b.data : "", b.len, d);
    km_buf_free(&b);
    return ok;
}

static enum control_answer ask(const char *path)
{
    for (;;) {
        fprintf(stderr, "The control file %s already exists. "
                "Use this control file? (y/n) ", path);
        fflush(stderr);
        char line[64];
        if (!fgets(line, sizeof line, stdin))
            return USE_EXISTING;
        char c = line[0];
        if (c == 'y' || c == 'Y')
            return USE_EXISTING;
        if (c == 'n' || c == 'N')
            return RESET;
    }
}

/* Make sure DIR/KM_control.dat exists as the user wants it; read it.
 * (--control=FILE, or -o without it: read that file, or the default, as
 * it is.) */
static bool prepare_control(const struct options *o, struct km_settings *set,
                            struct km_diag *d)
{
    if (o->control || o->output || o->prefix_shim) {
        char *def = o->control ? km_xstrdup(o->control)
                  : o->default_control ? km_xstrdup(o->default_control)
                                       : find_default_control();
        bool ok = km_control_read(def, set, d);
        free(def);
        return ok;
    }
    char *path = km_path_join(o->dir, "KM_control.dat");
    char *def = o->default_control ? km_xstrdup(o->default_control)
                                   : find_default_control();
    bool ok = true;
    if (access(path, F_OK) != 0) {
        ok = copy_default(def, path, d);
        if (ok)
            km_note(d, "copied the default control file to %s", path);
    } else {
        enum control_answer a = o->answer;
        if (a == ASK && isatty(STDIN_FILENO))
            a = ask(path);
        if (a == RESET) {
            char *old = km_path_join(o->dir, "KM_control.dat.old");
            struct km_buf b = {0};
            ok = km_control_load(path, &b, d) &&
                 write_whole(old, b.data ? b.data : "", b.len, d) &&
                 copy_default(def, path, d);
            if (ok)
                km_note(d, "replaced %s by the default; the old one is %s",
                        path, old);
            km_buf_free(&b);
            free(old);
        } else {
            km_note(d, "using the existing control file %s", path);
        }
    }
    ok = ok && km_control_read(path, set, d);
    free(def);
    free(path);
    return ok;
}

/* --- the source files ---------------------------------------------------------- */

/* One input file, read and parsed. */
struct input {
    const char *file;
    char *out;                /* DIR/KM_<file>, or NULL with --dump */
    bool ok;
    struct km_source src;
    struct km_program prog;
};

static char *output_name(const struct options *o, const char *file)
{
    if (o->output)
        return km_xstrdup(o->output);
    struct km_buf name = {0};
    km_buf_printf(&name, "KM_%s", km_base_name(file));
    char *out = km_path_join(o->dir, name.data);
    km_buf_free(&name);
    return out;
}

/* The file's source form: the one forced, or its extension's (fixed form
 * for a name gfortran knows no form of, as kmrun always read them). */
static enum km_form form_of(const struct options *o, const char *file)
{
    enum km_form form = KM_FORM_FIXED;
    if (o->form_forced)
        return o->form;
    km_form_from_name(file, &form);
    return form;
}

static int line_length_of(const struct options *o, enum km_form form)
{
    return o->line_length >= 0 ? o->line_length
                               : km_default_line_length(form);
}

static bool runs_preprocessor(const struct options *o, const char *file)
{
    return o->cpp || (o->cpp_macros && km_preprocessed_name(file));
}

/* Read the file, or what the preprocessor makes of it. */
static bool read_input(const struct options *o, struct input *in,
                       struct km_reader_opts *ro, struct km_diag *d)
{
    if (!runs_preprocessor(o, in->file))
        return km_read_source(&in->src, in->file, ro, d);
    /* the preprocessor would wait on a FIFO forever, or read a device */
    struct stat st;
    if (stat(in->file, &st) == 0 && !S_ISREG(st.st_mode)) {
        km_error(d, in->file, 0, 0, "cannot read: %s", S_ISDIR(st.st_mode)
                 ? "is a directory" : "not a regular file (a device, FIFO "
                 "or socket is refused: it could be read forever)");
        return false;
    }
    struct km_buf text = {0};
    bool ok = km_preprocess(&o->cpp_opts, in->file, &text, d);
    if (ok) {
        ro->preprocessed = true;
        ok = km_read_source_text(&in->src, in->file, text.data ? text.data
                                 : "", text.len, ro, d);
    }
    km_buf_free(&text);
    return ok;
}

static void load(const struct options *o, struct input *in, struct km_diag *d)
{
    struct km_reader_opts ro = {0};
    ro.form = form_of(o, in->file);
    ro.line_length = line_length_of(o, ro.form);
    ro.d_lines_are_code = o->d_lines_are_code;
    ro.include_dirs = o->include_dirs;
    ro.ninclude_dirs = o->ninclude_dirs;
    ro.late_include_dirs = late_include_dirs;
    ro.late_ctx = o->late;
    in->ok = true;
    if (!o->dump) {
        in->out = output_name(o, in->file);
        if (is_input_file(o, in->out)) {
            km_error(d, in->out, 0, 0, "is an input file; kmrun will not "
                     "write over it (choose another -td directory)");
            in->ok = false;
        }
    }
    /* (a preprocessor's output, kmrun's or one the build made: what is
     * said about it names the user's files and lines) */
    if (in->ok)
        km_map_diagnostics(&in->src, d);
    in->ok = in->ok && read_input(o, in, &ro, d);
    in->ok = in->ok && km_parse(&in->src, &in->prog, d);
    d->map = NULL;
}

static void add_defined(char ***names, int *n, const char *name)
{
    for (int k = 0; k < *n; k++)
        if (strcmp((*names)[k], name) == 0)
            return;
    *names = km_xrealloc(*names, sizeof **names * (size_t)(*n + 1));
    (*names)[(*n)++] = km_xstrdup(name);
}

/* Every routine and ENTRY point the user's files define. */
static void defined_names(const struct input *in, int nin, char ***names,
                          int *n)
{
    for (int f = 0; f < nin; f++) {
        if (!in[f].ok)
            continue;
        const struct km_program *p = &in[f].prog;
        for (int u = 0; u < p->nunits; u++) {
            const struct km_unit *un = &p->units[u];
            if (un->kind == KM_U_SUBROUTINE || un->kind == KM_U_FUNCTION)
                add_defined(names, n, un->name);
            for (int k = 0; k < un->nentries; k++)
                add_defined(names, n, p->info[un->entries[k]].name);
        }
    }
}

/* A MODULE PROCEDURE body takes its kind and purity from an interface
 * that is often in another file: the module's; and the type of a unit in
 * a READ or WRITE may be a module's declaration. */
static void inherit_interfaces(const struct options *o, struct input *in,
                               int nin)
{
    for (int f = 0; f < nin; f++)
        for (int g = 0; g < nin; g++)
            if (in[f].ok && in[g].ok && f != g) {
                km_inherit_interfaces(&in[f].prog, &in[g].prog);
                km_adopt_modules(&in[f].prog, &in[g].prog);
            }
    /* then the index files of earlier compiles, where the compiler
     * looks for module files */
    const char **dirs = km_xcalloc((size_t)o->ninclude_dirs + 2,
                                   sizeof *dirs);
    int n = 0;
    if (o->module_dir)
        dirs[n++] = o->module_dir;
    for (int k = 0; k < o->ninclude_dirs; k++)
        dirs[n++] = o->include_dirs[k];
    dirs[n++] = ".";
    for (int f = 0; f < nin; f++)
        if (in[f].ok) {
            km_find_interfaces(&in[f].prog, dirs, n);
            km_find_modules(&in[f].prog, dirs, n);
        }
    free(dirs);
}

/* --module-dir: the interfaces the file's (sub)modules declare, for the
 * compiles that read their separate module procedures' bodies. */
static bool write_interfaces(const struct options *o, const struct input *in,
                             struct km_diag *d)
{
    bool ok = true;
    for (int u = 0; o->module_dir && u < in->prog.nunits; u++) {
        struct km_buf text = {0};
        char *name = NULL;
        if (km_interface_index(&in->prog, u, &name, &text)) {
            char *path = km_path_join(o->module_dir, name);
            if (km_is_foreign_index(path))
                km_warning(d, path, 0, 0, "not an index file of kmtool's: "
                           "left as it is (the module's declarations are "
                           "not written down for later compiles)");
            else
                ok = write_whole(path, text.data, text.len, d) && ok;
            free(path);
            free(name);
        }
        km_buf_free(&text);
    }
    return ok;
}

static bool instrument(const struct options *o, struct input *in,
                       const struct km_settings *set, char **defined,
                       int ndefined, bool *mpi_hooks, struct km_diag *d)
{
    struct km_buf text = {0};
    bool ok = in->ok;
    if (ok && o->dump) {
        if (o->nfiles > 1)
            printf("file %s\n", in->file);
        km_dump_program(&in->prog, &text);
        fwrite(text.data ? text.data : "", 1, text.len, stdout);
    } else if (ok) {
        if (in->src.opts.preprocessed)
            km_map_diagnostics(&in->src, d);
        struct km_rewrite_opts wo = {0};
        /* a file the build preprocessed already (x-pp.f90) goes by the
         * name of the file its preprocessor read */
        wo.file_name = km_base_name(runs_preprocessor(o, in->file)
                                    ? in->file : km_source_name(&in->src));
        wo.line_length = in->src.opts.line_length;
        wo.defined = defined;
        wo.ndefined = ndefined;
        wo.mpi_hooks = mpi_hooks;
        wo.line_markers = o->line_markers ? in->file : NULL;
        ok = km_rewrite(&in->prog, set, &wo, &text, d) &&
             write_interfaces(o, in, d) &&
             write_whole(in->out, text.data ? text.data : "", text.len, d);
        d->map = NULL;
    }
    km_buf_free(&text);
    return ok;
}

static void unload(struct input *in)
{
    if (in->prog.src)
        km_program_free(&in->prog);
    if (in->src.files)
        km_source_free(&in->src);
    free(in->out);
}

/* libkm's MPI calls, a Fortran file the user's MPI compiler compiles. */
static bool write_mpi_glue(const char *path, struct km_diag *d)
{
    struct km_buf text = {0};
    km_rewrite_mpi_glue(&text);
    bool ok = write_whole(path, text.data, text.len, d);
    km_buf_free(&text);
    return ok;
}

/* With an INNER_PREFIX other than KM_: DIR/KM_prefix_<prefix>.f, the
 * routines the instrumented files call, which forward to libkm. */
static bool write_prefix_shim(const struct options *o,
                              const struct km_settings *set, bool with_mpi,
                              struct km_diag *d)
{
    if (strcmp(set->prefix, "KM_") == 0)
        return true;
    struct km_buf name = {0}, text = {0};
    km_buf_printf(&name, "KM_prefix_%s.f", set->prefix);
    char *path = km_path_join(o->dir, name.data);
    km_rewrite_prefix_shim(set->prefix, with_mpi, &text);
    bool ok = write_whole(path, text.data, text.len, d);
    if (ok)
        km_note(d, "wrote %s: compile it with the instrumented files", path);
    free(path);
    km_buf_free(&name);
    km_buf_free(&text);
    return ok;
}

static void free_options(struct options *o)
{
    free(o->files);
    free(o->include_dirs);
    free_late_dirs(o->late);
    free_cpp_args(o);
    free(o->ids);
    for (int i = 0; i < o->nrespelled; i++)
        free(o->respelled[i]);
    free(o->respelled);
}

int main(int argc, char **argv)
{
    struct options o = {0};
    parse_options(argc, argv, &o);
    struct km_diag d = {0};
    if (o.prefix_shim) {
        /* (kmfc at a link: nothing is written for the prefix KM_) */
        struct km_settings set;
        km_settings_default(&set);
        int rc = 1;
        if (prepare_control(&o, &set, &d)) {
            rc = 0;
            if (strcmp(set.prefix, "KM_") != 0) {
                struct km_buf text = {0};
                km_rewrite_prefix_shim(set.prefix, o.with_mpi, &text);
                rc = write_whole(o.prefix_shim, text.data, text.len, &d)
                     ? 0 : 1;
                km_buf_free(&text);
            }
        }
        km_settings_free(&set);
        km_diag_flush(&d);
        km_diag_free(&d);
        free_options(&o);
        return rc;
    }
    if (o.mpi_glue) {
        int rc = write_mpi_glue(o.mpi_glue, &d) ? 0 : 1;
        km_diag_flush(&d);
        km_diag_free(&d);
        free_options(&o);
        return rc;
    }
    struct km_settings set;
    km_settings_default(&set);
    int status = 0;
    if (!o.dump) {
        if ((!o.output && !make_dir(o.dir, &d)) ||
            !prepare_control(&o, &set, &d)) {
            km_diag_flush(&d);
            km_diag_free(&d);
            km_settings_free(&set);
            free_options(&o);
            return 1;
        }
        km_diag_flush(&d);
    }
    int failed = 0;
    struct input *in = km_xcalloc((size_t)o.nfiles, sizeof *in);
    for (int i = 0; i < o.nfiles; i++) {
        in[i].file = o.files[i];
        load(&o, &in[i], &d);
    }
    char **defined = NULL;
    int ndefined = 0;
    inherit_interfaces(&o, in, o.nfiles);
    defined_names(in, o.nfiles, &defined, &ndefined);
    bool mpi_hooks = false;
    for (int i = 0; i < o.nfiles; i++) {
        if (!instrument(&o, &in[i], &set, defined, ndefined, &mpi_hooks, &d))
            failed++;
        km_diag_flush(&d);
        unload(&in[i]);
    }
    for (int k = 0; k < ndefined; k++)
        free(defined[k]);
    free(defined);
    free(in);
    if (!o.dump && !o.output && !write_prefix_shim(&o, &set, mpi_hooks, &d))
        status = 1;
    if (!o.dump && !o.output && mpi_hooks) {
        char *glue = km_path_join(o.dir, "KM_libkm_mpi.f");
        if (write_mpi_glue(glue, &d))
            km_note(&d, "wrote %s (libkm's MPI calls): compile it with the "
                    "instrumented files, with your MPI compiler", glue);
        else
            status = 1;
        free(glue);
    }
    if (failed) {
        km_note(&d, "%d of %d files could not be instrumented", failed,
                o.nfiles);
        status = 1;
    }
    km_diag_flush(&d);
    if (!o.dump && !o.output) {
        char *msg = km_path_join(o.dir, "KM_message.txt");
        d.quiet = 0;
        if (!write_whole(msg, d.log.data ? d.log.data : "", d.log.len, &d)) {
            km_diag_flush(&d);
            status = 1;
        }
        free(msg);
    }
    km_diag_free(&d);
    km_settings_free(&set);
    free_options(&o);
    return status;
}
