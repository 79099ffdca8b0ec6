/*
 * main.c — the kmview command: its options (read by getopt_long, in every
 * spelling kmview has taken), and one of its commands.
 *
 *   kmview [options] FILE...     summary, CSV, JSON, HTML report of one run
 *   kmview diff [options] A B    relative profile of two runs
 *   kmview ranks [options] FILE  groups of ranks and the odd ones out
 *   kmview filter [options] FILE a control file without what costs more
 *                                to measure than it tells
 *   kmview trace [options] TRACE where a traced run was; Trace Event JSON,
 *                                OTF2
 *   kmview paths [options] FILE  the calling-context trees: a table, folded
 *                                stacks, speedscope's file format
 *
 * Owns the command line and the order of work: read every input first (a
 * bad file stops everything before any output exists), then write every
 * output through one kv_out set, renamed into place only when all of it is
 * complete.  Must never print a result itself: the modules do.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/views/diff.h"
#include "kmview/views/export.h"
#include "kmview/views/filter.h"
#include "kmview/views/report.h"
#include "kmview/views/traceest.h"
#include "kmview/write/out.h"
#include "kmview/views/paths.h"
#include "kmview/views/ranks.h"
#include "kmview/views/timeline.h"
#include "kmview/trace/trace.h"
#include "kmview/trace/traceotf2.h"
#include "kmview/read/read.h"
#include "kmview/figures/stats.h"
#include "kmview/views/summary.h"
#include "kmview/views/threads.h"
#include "support/buf.h"
#include "support/opts.h"

/* Every option, as a bit of struct options' `given`: each command names
 * the bits it takes in one place (its check_options call), so that an
 * option a command has no use for is a wrong command line, never
 * silently ignored. */
enum option_bit {
    O_TOP = 1 << 0, O_CSV = 1 << 1, O_JSON = 1 << 2, O_HTML = 1 << 3,
    O_QUIET = 1 << 4, O_ORDER = 1 << 5, O_CUT = 1 << 6, O_GROUPS = 1 << 7,
    O_THREADS = 1 << 8, O_EXACT = 1 << 9, O_EXACT_MAX = 1 << 10,
    O_MAX_SIZE = 1 << 11, O_TARGET = 1 << 12, O_CONTROL = 1 << 13,
    O_OUTPUT = 1 << 14, O_RUNS = 1 << 15, O_TRACE = 1 << 16,
    O_OTF2 = 1 << 17, O_ESTIMATE = 1 << 18, O_LIMIT = 1 << 19,
    O_RANK = 1 << 20, O_THREAD = 1 << 21, O_MIN = 1 << 22,
    O_FOLDED = 1 << 23, O_VALUE = 1 << 24, O_SPEEDSCOPE = 1 << 25,
    O_PATHS = 1 << 26, O_PLAIN = 1 << 27,
};

/* The options' names as the messages give them, in bit order. */
static const char *const option_name[] = {
    "-n/--top", "--csv", "--json", "--html", "-q/--quiet", "--order",
    "--cut", "--groups", "--threads", "--exact", "--exact-max",
    "--max-size", "--target", "--control", "-o", "--runs", "--trace",
    "--otf2", "--estimate", "--limit", "--rank", "--thread", "--min",
    "--folded", "--value", "--speedscope", "--paths", "--plain",
};

struct options {
    unsigned given;          /* enum option_bit: the options given */
    const char **files;
    int nfiles;
    int top;                 /* -n */
    bool top_given;
    bool quiet;
    const char *csv, *json, *html;
    enum kv_diff_order order;
    double cut;
    size_t groups;
    bool threads;            /* ranks --threads */
    bool by_paths;           /* ranks --paths */
    struct kv_cluster_opts how; /* ranks: --exact, --exact-max */
    int reasons;
    uint64_t max_size;       /* --max-size: bytes read at most per file */
    double target;           /* filter: --target, a fraction */
    const char *control;     /* filter: --control */
    const char *output;      /* filter: -o */
    bool runs;               /* filter: --runs, every file a run */
    const char **traces;     /* --trace: KM_trace files for the report */
    const char *otf2;        /* trace --otf2: the archive's directory */
    int ntraces;
    bool estimate;           /* trace --estimate: files are KM_output */
    uint64_t limit;          /* trace --limit, bytes */
    struct kv_paths_opts paths; /* paths: --rank, --thread, --min, --value */
    const char *folded;      /* paths --folded */
    const char *speedscope;  /* paths --speedscope */
    double *plain;           /* --plain: the plain build's time of each run */
    size_t nplain;
};

static void usage(FILE *to)
{
    fputs("usage: kmview [options] KM_output.NNN ...\n"
          "       kmview diff [options] A B\n"
          "       kmview ranks [options] KM_output.NNN ...\n"
          "       kmview paths [options] KM_output.NNN ...\n"
          "Summarise, export and chart kmtool's KM_output files.\n"
          "\n"
          "kmview FILE...   summary of one run (several files: one rank each)\n"
          "  -n, --top=N     routines in the summary (default 10; 0: all)\n"
          "  --csv=DIR       write every figure as CSV files into DIR\n"
          "  --json=FILE     write every figure as JSON ('-': standard output)\n"
          "  --html=FILE     write the self-contained HTML report\n"
          "  -q, --quiet     no summary on standard output\n"
          "  --plain=S       the plain build's time of the same run, in seconds:\n"
          "                  what measuring really cost beside libkm's figure\n"
          "  --cut, --exact, --exact-max (as for ranks; with --html) the\n"
          "                  report's rank groups\n"
          "kmview diff A B  relative profile of run B against run A\n"
          "  --order=O       score (PARP, default), diff, ratio, a, b, name\n"
          "  -n, --top=N     regions listed (default 20; 0: all)\n"
          "  --csv=DIR, --json=FILE, --html=FILE, -q as above\n"
          "kmview ranks FILE...  cluster the ranks, name the outliers\n"
          "  --cut=D         group ranks within D of the run time (default 0.05)\n"
          "  --groups=K      cut the dendrogram into K groups instead\n"
          "  --threads       cluster the threads of every rank instead\n"
          "  --paths         cluster by the call paths (KM_output 6) instead\n"
          "  --exact         always the exact dendrogram (memory: 2 n^2 bytes)\n"
          "  --exact-max=N   distinct profiles clustered exactly at most\n"
          "                  (default 16384; more: by cells, see kmview(1))\n"
          "  -n, --top=N     differences named per outlier group (default 5)\n"
          "  --csv=DIR, -q as above\n"
          "kmview filter FILE...  propose a control file that leaves out the\n"
          "                  routines that cost more to measure than they tell\n"
          "  --target=PCT    libkm's overhead wanted, % of the run (default 2)\n"
          "  --control=FILE  the control file to start from (default: kmtool's)\n"
          "  -o FILE         write it to FILE (default: standard output)\n"
          "  --runs          every file is a run of its own (a test suite)\n"
          "  --plain=S[,S..] the plain build's time of each run: the cost\n"
          "                  libkm cannot see is shared out too\n"
          "kmview paths FILE...  the call paths (KM_output 6): a tree of inclusive\n"
          "                  and own time, counts, share of the run and of MPI\n"
          "  --rank=R        rank R only (default: statistics over the ranks)\n"
          "  --thread=T      thread T's tree (default 0, the program's)\n"
          "  --min=PCT       summarise paths under PCT % of the run (default\n"
          "                  0.5; 0: all)\n"
          "  --folded=FILE   write folded stacks (flamegraph.pl, inferno) of one\n"
          "                  rank (--rank, default the lowest)\n"
          "  --value=V       what a folded line counts: time (own time, whole\n"
          "                  microseconds; default), net (routines only, each\n"
          "                  stack's net time, as gprof) or counts\n"
          "  --speedscope=FILE  write speedscope's JSON, a profile per rank\n"
          "  -q              no tree on standard output (nor when a file is '-')\n"
          "kmview trace KM_trace.NNN ...  where each rank and thread was at the end\n"
          "                  of a traced run (TRACE_FILE_NUMBER > 0): the regions\n"
          "                  open, the last events; one file per rank\n"
          "  --json=FILE     write Trace Event JSON (Perfetto, chrome://tracing)\n"
          "  --otf2=DIR      write an OTF2 archive, DIR/traces.otf2 (Vampir,\n"
          "                  otf2-print)\n"
          "  -n, --top=N     last events shown per thread (default 5, at most 8)\n"
          "  -q              no text\n"
          "kmview trace --estimate KM_output.NNN  the size a trace of that run\n"
          "                  would have, per rank (--limit=N: its TRACE_SIZE_LIMIT in\n"
          "                  bytes, suffix K, M, G; default 4096M)\n"
          "kmview FILE... --html=FILE --trace KM_trace.NNN ...  the report with a\n"
          "                  timeline of the trace (every argument after --trace\n"
          "                  that is no option is a trace file; or --trace=FILE)\n"
          "\n"
          "Every command that reads KM_output files (all but kmview trace\n"
          "without --estimate):\n"
          "  --max-size=N    read at most N bytes of a file (suffix K, M, G or T;\n"
          "                  default 16G)\n"
          "An option a command does not list is a wrong command line (status 2).\n"
          "  -h, --help      this text\n"
          "  --version       kmtool's version\n"
          "See kmview(1) and doc/kmview-export.md.\n", to);
}

static void die_usage(const char *fmt, const char *arg)
{
    kv_eprintf("kmview: ");
    kv_eprintf(fmt, arg);                  /* arg: from the command line */
    kv_eprintf("\n");
    usage(stderr);
    exit(2);
}

static long parse_long(const char *v, const char *opt, long min)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*end || end == v || errno || n < min)
        die_usage("bad value for %s", opt);
    return n;
}

/* A size in bytes: digits, then K, M, G or T (powers of 1024). */
static uint64_t parse_size(const char *v, const char *opt)
{
    static const char units[] = "KMGT";
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = 0;
    if (*end) {
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u || end[1])
            die_usage("bad value for %s", opt);
        shift = 10 * (int)(u - units + 1);
    }
    if (end == v || !isdigit((unsigned char)v[0]) || errno || n == 0 ||
        n > (UINT64_MAX >> shift))
        die_usage("bad value for %s", opt);
    return (uint64_t)n << shift;
}

/* The options getopt_long reads.  Those without a one-letter form have
 * values from 256 up. */
enum {
    OPT_CSV = 256, OPT_JSON, OPT_HTML, OPT_ORDER, OPT_CUT, OPT_GROUPS,
    OPT_THREADS, OPT_EXACT, OPT_EXACT_MAX, OPT_MAX_SIZE, OPT_TARGET,
    OPT_CONTROL, OPT_RUNS, OPT_TRACE, OPT_OTF2, OPT_ESTIMATE, OPT_LIMIT,
    OPT_RANK, OPT_THREAD, OPT_MIN, OPT_FOLDED, OPT_VALUE, OPT_SPEEDSCOPE,
    OPT_PATHS, OPT_PLAIN, OPT_VERSION,
};

static const struct option long_options[] = {
    {"top", required_argument, NULL, 'n'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"csv", required_argument, NULL, OPT_CSV},
    {"json", required_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"order", required_argument, NULL, OPT_ORDER},
    {"cut", required_argument, NULL, OPT_CUT},
    {"groups", required_argument, NULL, OPT_GROUPS},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"exact", no_argument, NULL, OPT_EXACT},
    {"exact-max", required_argument, NULL, OPT_EXACT_MAX},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"target", required_argument, NULL, OPT_TARGET},
    {"control", required_argument, NULL, OPT_CONTROL},
    {"runs", no_argument, NULL, OPT_RUNS},
    /* --trace alone: the arguments after it that are no option are trace
     * files; --trace=FILE: one trace file */
    {"trace", optional_argument, NULL, OPT_TRACE},
    {"otf2", required_argument, NULL, OPT_OTF2},
    {"estimate", no_argument, NULL, OPT_ESTIMATE},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"rank", required_argument, NULL, OPT_RANK},
    {"thread", required_argument, NULL, OPT_THREAD},
    {"min", required_argument, NULL, OPT_MIN},
    {"folded", required_argument, NULL, OPT_FOLDED},
    {"value", required_argument, NULL, OPT_VALUE},
    {"speedscope", required_argument, NULL, OPT_SPEEDSCOPE},
    {"paths", no_argument, NULL, OPT_PATHS},
    {"plain", required_argument, NULL, OPT_PLAIN},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* '-': files come back in place, as option 1, and nothing is reordered
 * (refused_spelling relies on it: the argument getopt reads next is
 * always argv[optind]; and --trace makes the files after it traces);
 * ':': a missing value is ':', not '?'. */
static const char short_options[] = "-:n:qho:";

/* A spelling kmview has never taken, which getopt_long alone would: one-
 * letter options run together (-qn3), -o with its value glued on (-oFILE;
 * only -n takes one so: -n3), a long option abbreviated (--qui) or
 * unknown.  Checked on each argument just before getopt_long reads it as
 * an option, so that an option's value (-o -qq) is never taken for one. */
static bool refused_spelling(const char *arg)
{
    if (arg[0] != '-' || arg[1] == '\0' || !strcmp(arg, "--"))
        return false;                             /* a file, or "--" */
    if (arg[1] != '-')
        return !(arg[1] == 'n' || !strcmp(arg, "-q") || !strcmp(arg, "-h") ||
                 !strcmp(arg, "-o"));
    size_t n = strcspn(arg + 2, "=");
    for (const struct option *l = long_options; l->name; l++)
        if (strlen(l->name) == n && !strncmp(arg + 2, l->name, n))
            return false;
    return true;
}

/* An option as the messages name it when its value is missing: -n or
 * --top as given (`arg`), -o, --csv. */
static const char *missing_name(int val, const char *arg)
{
    if (val == 'n')
        return arg[1] == 'n' ? "-n" : "--top";
    if (val == 'o')
        return "-o";
    return km_long_name(long_options, val);
}

/* A percentage option's value as a fraction; -1 when it is no number or
 * below 0. */
static double fraction(const char *v)
{
    char *end;
    double x = strtod(v, &end) / 100;
    return *end || end == v || !(x >= 0) ? -1 : x;
}

/* The plain build's time a --plain value may give: a microsecond to 31
 * years (a figure beyond them is a typing error, and the shares printed
 * from it would be absurd). */
#define PLAIN_MIN 1e-6
#define PLAIN_MAX 1e9

/* A plain decimal number of seconds at [p, *end): digits, at most one
 * point (12, 12.5, .5, 12.); no sign, exponent, hexadecimal, inf or nan
 * (strtod takes them all: 0x10 was 16 s).  -1 when it is none. */
static double plain_seconds(const char *p, const char **end)
{
    const char *q = p;
    size_t digits = 0, points = 0;
    for (; isdigit((unsigned char)*q) || *q == '.'; q++) {
        digits += *q != '.';
        points += *q == '.';
    }
    *end = q;
    if (digits == 0 || points > 1 || q - p > 32)
        return -1;
    char buf[40];
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    return strtod(buf, NULL);
}

/* --plain=S[,S...]: seconds, each a plain decimal number from PLAIN_MIN
 * to PLAIN_MAX. */
static void parse_plain(struct options *o, const char *v)
{
    size_t n = 1;
    for (const char *p = v; *p; p++)
        n += *p == ',';
    free(o->plain);
    o->plain = km_xcalloc(n, sizeof *o->plain);
    o->nplain = 0;
    for (const char *p = v;; p++) {
        const char *end;
        double x = plain_seconds(p, &end);
        if (!(x >= PLAIN_MIN && x <= PLAIN_MAX) || (*end && *end != ','))
            die_usage("bad value for --plain: '%s' (seconds, a plain decimal "
                      "number from 0.000001 to 1000000000, comma-separated)",
                      v);
        o->plain[o->nplain++] = x;
        if (!*end)
            break;
        p = end;
    }
}

/* The plain build's times are of the runs read (kmview filter --runs:
 * one each): a time more than PLAIN_FACTOR away from the run's total
 * (mean over its ranks) is of another run, or in other units; the shares
 * printed from it would be absurd.  -1 with an error printed. */
#define PLAIN_FACTOR 1000
static int check_plain(const struct kv_run *runs, size_t nruns,
                       const double *plain)
{
    for (size_t k = 0; k < nruns; k++) {
        const struct kv_run *run = &runs[k];
        double total = 0;
        size_t n = 0;
        for (size_t s = 0; s < run->nsections; s++)
            if (!run->ranks[s].lost && isfinite(run->ranks[s].fig[KV_F_TOTAL])) {
                total += run->ranks[s].fig[KV_F_TOTAL];
                n++;
            }
        if (n == 0 || !(total > 0))
            continue;
        total /= (double)n;
        if (total <= plain[k] * PLAIN_FACTOR &&
            plain[k] <= total * PLAIN_FACTOR)
            continue;
        kv_eprintf("kmview: error: --plain: %s ran %.4g s (mean over its ranks), the plain build "
                "%.4g s: more than %d times apart, not the same run (or "
                "not seconds)\n", run->nsources ? run->sources[0] : "the run", total,
                   plain[k], PLAIN_FACTOR);
        return -1;
    }
    return 0;
}

/* Act on option `c` with value `v` (NULL for one that takes none);
 * `arg` is the argument it was given in (the messages about -n quote
 * it). */
static void take_option(struct options *o, int c, const char *v,
                        const char *arg)
{
    char *end;
    switch (c) {
    case 'n':
        o->top = (int)parse_long(v, arg, 0);
        o->top_given = true;
        o->given |= O_TOP;
        break;
    case 'q': o->quiet = true; o->given |= O_QUIET; break;
    case 'h':
        usage(stdout);
        exit(0);
    case OPT_VERSION:
        printf("kmview (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        exit(0);
    case 'o': o->output = v; o->given |= O_OUTPUT; break;
    case OPT_CSV: o->csv = v; o->given |= O_CSV; break;
    case OPT_JSON: o->json = v; o->given |= O_JSON; break;
    case OPT_HTML: o->html = v; o->given |= O_HTML; break;
    case OPT_OTF2: o->otf2 = v; o->given |= O_OTF2; break;
    case OPT_ORDER: {
        o->given |= O_ORDER;
        int ord = kv_diff_order_parse(v);
        if (ord < 0)
            die_usage("unknown --order (%s)", "score, diff, ratio, a, b, name");
        o->order = (enum kv_diff_order)ord;
        break;
    }
    case OPT_CUT:
        o->given |= O_CUT;
        o->cut = strtod(v, &end);
        if (*end || end == v || !(o->cut >= 0))
            die_usage("bad value for --cut: '%s'", v);
        break;
    case OPT_MAX_SIZE:
        o->max_size = parse_size(v, "--max-size");
        o->given |= O_MAX_SIZE;
        break;
    case OPT_TARGET:
        o->given |= O_TARGET;
        o->target = fraction(v);
        if (o->target < 0)
            die_usage("bad value for --target: '%s'", v);
        break;
    case OPT_CONTROL: o->control = v; o->given |= O_CONTROL; break;
    case OPT_ESTIMATE: o->estimate = true; o->given |= O_ESTIMATE; break;
    case OPT_LIMIT:
        o->limit = parse_size(v, "--limit");
        o->given |= O_LIMIT;
        break;
    case OPT_RUNS: o->runs = true; o->given |= O_RUNS; break;
    case OPT_RANK:
        o->paths.rank = (int)parse_long(v, "--rank", 0);
        o->given |= O_RANK;
        break;
    case OPT_THREAD:
        o->paths.thread = (int)parse_long(v, "--thread", 0);
        o->given |= O_THREAD;
        break;
    case OPT_MIN:
        o->paths.min = fraction(v);
        if (!(o->paths.min >= 0 && o->paths.min <= 1))
            die_usage("bad value for --min: '%s' (a percentage)", v);
        o->given |= O_MIN;
        break;
    case OPT_FOLDED: o->folded = v; o->given |= O_FOLDED; break;
    case OPT_VALUE: {
        int val = kv_paths_value_parse(v);
        if (val < 0)
            die_usage("unknown --value (%s)", "time, net, counts");
        o->paths.value = (enum kv_paths_value)val;
        o->given |= O_VALUE;
        break;
    }
    case OPT_SPEEDSCOPE: o->speedscope = v; o->given |= O_SPEEDSCOPE; break;
    case OPT_PATHS: o->by_paths = true; o->given |= O_PATHS; break;
    case OPT_PLAIN: parse_plain(o, v); o->given |= O_PLAIN; break;
    case OPT_THREADS: o->threads = true; o->given |= O_THREADS; break;
    case OPT_EXACT: o->how.exact = true; o->given |= O_EXACT; break;
    case OPT_EXACT_MAX:
        o->how.max_exact = (size_t)parse_long(v, "--exact-max", 0);
        o->given |= O_EXACT_MAX;
        break;
    case OPT_GROUPS:
        o->groups = (size_t)parse_long(v, "--groups", 1);
        o->given |= O_GROUPS;
        break;
    }
}

/* The arguments from argv[first] on: options, files, and after --trace
 * (alone) trace files. */
static void parse_options(int argc, char **argv, int first,
                          struct options *o)
{
    o->files = km_xcalloc((size_t)argc + 1, sizeof *o->files);
    o->max_size = KV_DEFAULT_MAX_SIZE;
    o->cut = 0.05;
    o->reasons = 5;
    o->target = 0.02;
    o->how.max_exact = KV_EXACT_MAX;
    o->paths.rank = -1;
    o->paths.min = 0.005;
    o->traces = km_xcalloc((size_t)argc + 1, sizeof *o->traces);
    bool traces = false;     /* --trace alone was given */
    opterr = 0; /* kmview says what is wrong, in its own words */
    optind = first;
    for (;;) {
        int at = optind;
        if (at < argc && refused_spelling(argv[at]))
            die_usage("unknown option '%s'", argv[at]);
        int c = getopt_long(argc, argv, short_options, long_options, NULL);
        if (c == -1)
            break;
        if (c == 1) {
            if (traces)
                o->traces[o->ntraces++] = optarg;
            else
                o->files[o->nfiles++] = optarg;
        } else if (c == '?')
            die_usage("unknown option '%s'", argv[at]);
        else if (c == ':')
            die_usage("%s needs a value", missing_name(optopt, argv[at]));
        else if (c == OPT_TRACE) {
            if (optarg)
                o->traces[o->ntraces++] = optarg;
            else
                traces = true;
            o->given |= O_TRACE;
        } else if (c == 'n' || c == 'o')
            take_option(o, c, km_short_value(argv), argv[at]);
        else
            take_option(o, c, optarg, argv[at]);
    }
    /* after "--": files only (traces after --trace) */
    while (optind < argc) {
        if (traces)
            o->traces[o->ntraces++] = argv[optind++];
        else
            o->files[o->nfiles++] = argv[optind++];
    }
}

/* A wrong command line unless every option given is one `cmd` takes. */
static void check_options(const struct options *o, const char *cmd,
                          unsigned allowed)
{
    unsigned extra = o->given & ~allowed;
    for (size_t b = 0; b < sizeof option_name / sizeof *option_name; b++)
        if (extra >> b & 1) {
            char msg[128];
            snprintf(msg, sizeof msg, "%s takes no %s (see its options below)",
                     cmd, option_name[b]);
            die_usage("%s", msg);
        }
}

/* Read the files of one run; exits on error. */
static void read_run(struct kv_run *run, const char *const *files, int n,
                     uint64_t max_size)
{
    kv_run_init(run);
    if (kv_read_files(run, files, n, max_size)) {
        kv_run_free(run);
        exit(1);
    }
}

static int finish(struct kv_out *o, int rc)
{
    if (rc) {
        kv_out_abandon(o);
        return 1;
    }
    return kv_out_commit(o) ? 1 : 0;
}

/* Open the trace files; exits on error. */
static void open_traces(struct kv_trace_set *s, const char *const *files,
                        int n)
{
    if (kv_trace_set_open(s, files, (size_t)n)) {
        kv_trace_set_free(s);
        exit(1);
    }
}

static int cmd_summary(struct options *o)
{
    /* --cut, --exact and --exact-max shape the report's rank groups */
    check_options(o, "kmview FILE...", O_TOP | O_CSV | O_JSON | O_HTML |
                  O_QUIET | O_TRACE | O_MAX_SIZE | O_CUT | O_EXACT |
                  O_EXACT_MAX | O_PLAIN);
    if (o->nfiles == 0)
        die_usage("%s", "no KM_output file given");
    if (o->nplain > 1)
        die_usage("%s", "--plain takes one time here: the files are one run");
    if (o->ntraces && !o->html)
        die_usage("%s", "--trace adds a timeline to the report: give --html too");
    if ((o->given & (O_CUT | O_EXACT | O_EXACT_MAX)) && !o->html)
        die_usage("%s", "--cut, --exact and --exact-max shape the report's "
                  "rank groups: give --html too");
    struct kv_run run;
    struct kv_stats st;
    struct kv_out out = { 0 };
    struct kv_trace_set traces = { 0 };
    read_run(&run, o->files, o->nfiles, o->max_size);
    if (o->nplain && check_plain(&run, 1, o->plain)) {
        kv_run_free(&run);
        return 1;
    }
    if (o->ntraces)
        open_traces(&traces, o->traces, o->ntraces);
    kv_stats_build(&st, &run);
    int rc = 0;
    if (o->csv)
        rc = kv_export_csv(&out, o->csv, &st);
    if (!rc && o->json)
        rc = kv_export_json(&out, o->json, &st);
    if (!rc && o->html) {
        FILE *f = kv_out_open(&out, o->html);
        struct kv_rank_groups g;
        rc = f ? 0 : -1;
        if (f) {
            kv_rank_groups_build(&g, &st, o->cut, 0, &o->how);
            rc = kv_html_report(f, &st, &g, o->ntraces ? &traces : NULL,
                                o->nplain ? o->plain[0] : 0);
            kv_rank_groups_free(&g);
        }
    }
    if (!rc && !o->quiet) {
        struct kv_text text;
        kv_summary(kv_text_open(&text), &st, o->top_given ? o->top : 10,
                   o->nplain ? o->plain[0] : 0);
        kv_text_close(&text, stdout);
    }
    rc = finish(&out, rc);
    kv_trace_set_free(&traces);
    kv_stats_free(&st);
    kv_run_free(&run);
    return rc;
}

static int cmd_trace(struct options *o)
{
    /* --estimate reads KM_output files and writes one table */
    if (o->estimate)
        check_options(o, "kmview trace --estimate",
                      O_ESTIMATE | O_LIMIT | O_MAX_SIZE);
    else
        check_options(o, "kmview trace", O_JSON | O_OTF2 | O_TOP | O_QUIET);
    if (o->nfiles == 0)
        die_usage("%s", o->estimate ? "no KM_output file given"
                                    : "no KM_trace file given");
    if (o->estimate) {
        struct kv_run run;
        read_run(&run, o->files, o->nfiles, o->max_size);
        struct kv_text text;
        kv_trace_estimate(kv_text_open(&text), &run,
                          o->limit ? o->limit : 4096ull << 20);
        kv_text_close(&text, stdout);
        kv_run_free(&run);
        return 0;
    }
    if (o->otf2 && !kv_trace_otf2_available()) {
        kv_eprintf("kmview: error: --otf2: this kmview was built without OTF2 "
                "(configure found no OTF2 library; Debian: libotf2-trace-dev)\n");
        return 1;
    }
    struct kv_trace_set s;
    struct kv_out out = { 0 };
    open_traces(&s, o->files, o->nfiles);
    int rc = 0;
    if (o->json) {
        FILE *f = kv_out_open(&out, o->json);
        rc = f ? kv_trace_json(f, &s) : -1;
    }
    if (!rc && o->otf2)
        rc = kv_trace_otf2(o->otf2, &s);
    if (!rc && !o->quiet) {
        struct kv_text text;
        kv_trace_summary(kv_text_open(&text), &s, o->top_given ? o->top : 5);
        kv_text_close(&text, stdout);
    }
    rc = finish(&out, rc);
    kv_trace_set_free(&s);
    return rc;
}

static int cmd_diff(struct options *o)
{
    check_options(o, "kmview diff", O_TOP | O_CSV | O_JSON | O_HTML |
                  O_QUIET | O_ORDER | O_MAX_SIZE);
    if (o->nfiles != 2)
        die_usage("%s", "diff compares two files: kmview diff A B");
    struct kv_run run[2];
    struct kv_stats st[2];
    struct kv_diff d;
    struct kv_out out = { 0 };
    for (int s = 0; s < 2; s++) {
        read_run(&run[s], o->files + s, 1, o->max_size);
        kv_stats_build(&st[s], &run[s]);
    }
    kv_diff_build(&d, &st[0], &st[1], o->files[0], o->files[1]);
    kv_diff_sort(&d, o->order);
    int rc = 0;
    if (o->csv)
        rc = kv_diff_csv(&out, o->csv, &d);
    if (!rc && o->json)
        rc = kv_diff_json(&out, o->json, &d);
    if (!rc && o->html) {
        FILE *f = kv_out_open(&out, o->html);
        if (f)
            kv_diff_html(f, &d);
        rc = f ? 0 : -1;
    }
    if (!rc && !o->quiet) {
        struct kv_text text;
        kv_diff_print(kv_text_open(&text), &d, o->top_given ? o->top : 20);
        kv_text_close(&text, stdout);
    }
    rc = finish(&out, rc);
    kv_diff_free(&d);
    for (int s = 0; s < 2; s++) {
        kv_stats_free(&st[s]);
        kv_run_free(&run[s]);
    }
    return rc;
}

static int cmd_ranks(struct options *o)
{
    /* -n names the differences of rank groups; --threads has none */
    check_options(o, o->threads ? "kmview ranks --threads" : "kmview ranks",
                  (o->threads ? 0 : O_TOP) | O_CSV | O_QUIET | O_CUT |
                  O_GROUPS | O_THREADS | O_EXACT | O_EXACT_MAX | O_MAX_SIZE |
                  O_PATHS);
    if (o->nfiles == 0)
        die_usage("%s", "no KM_output file given");
    if (o->threads && o->by_paths)
        die_usage("%s", "--threads and --paths cannot both be given");
    struct kv_run run;
    struct kv_stats st;
    struct kv_rank_groups g;
    struct kv_out out = { 0 };
    read_run(&run, o->files, o->nfiles, o->max_size);
    kv_stats_build(&st, &run);
    struct kv_text text;
    FILE *tf = kv_text_open(&text);
    if (o->threads) {
        int trc = kv_thread_groups(o->quiet ? NULL : tf, &st, o->cut,
                                   o->groups, &o->how, &out, o->csv);
        kv_text_close(&text, stdout);
        trc = finish(&out, trc);
        kv_stats_free(&st);
        kv_run_free(&run);
        return trc;
    }
    if (o->by_paths) {
        if (kv_rank_groups_build_paths(&g, &st, o->cut, o->groups,
                                       &o->how) < 0) {
            kv_text_close(&text, stdout);
            kv_stats_free(&st);
            kv_run_free(&run);
            return 1;
        }
    } else
        kv_rank_groups_build(&g, &st, o->cut, o->groups, &o->how);
    int rc = o->csv ? kv_ranks_csv(&out, o->csv, &g, &st) : 0;
    if (!rc && !o->quiet)
        kv_ranks_print(tf, &g, &st, o->top_given ? o->top : 5);
    kv_rank_groups_free(&g);
    struct kv_tl_analysis tl;        /* the same over time slots */
    if (!rc && kv_tl_analyse(&tl, &st, o->cut, 0, &o->how) == 0) {
        if (o->csv)
            rc = kv_ranks_timeline_csv(&out, o->csv, &tl, &st);
        if (!rc && !o->quiet)
            kv_ranks_timeline(tf, &tl, &st);
        kv_tl_analysis_free(&tl);
    }
    kv_text_close(&text, stdout);
    rc = finish(&out, rc);
    kv_stats_free(&st);
    kv_run_free(&run);
    return rc;
}

static int cmd_filter(struct options *o)
{
    check_options(o, "kmview filter", O_TARGET | O_CONTROL | O_OUTPUT |
                  O_RUNS | O_MAX_SIZE | O_PLAIN);
    if (o->nfiles == 0)
        die_usage("%s", "no KM_output file given");
    /* --runs: every file a run of its own; else the files are one run */
    size_t nruns = o->runs ? (size_t)o->nfiles : 1;
    if (o->nplain && o->nplain != nruns) {
        char why[128];
        snprintf(why, sizeof why, "%zu time%s for %zu run%s", o->nplain,
                 o->nplain == 1 ? "" : "s", nruns, nruns == 1 ? "" : "s");
        die_usage("--plain gives %s: give one per run, in the order of the "
                  "files", why);
    }
    struct kv_run *runs = km_xcalloc(nruns, sizeof *runs);
    struct kv_out out = { 0 };
    for (size_t k = 0; k < nruns; k++)
        read_run(&runs[k], o->files + (o->runs ? k : 0),
                 o->runs ? 1 : o->nfiles, o->max_size);
    if (o->nplain && check_plain(runs, nruns, o->plain)) {
        for (size_t k = 0; k < nruns; k++)
            kv_run_free(&runs[k]);
        free(runs);
        return 1;
    }
    struct kv_filter_opts fo = {
        .target = o->target, .distortion = 0.05, .control = o->control,
        .default_control = KM_PKGDATADIR "/KM_control.dat",
        .plain = o->plain,
    };
    FILE *f = o->output ? kv_out_open(&out, o->output) : stdout;
    struct kv_text text;
    int rc = f ? kv_filter(kv_text_open(&text), runs, nruns, &fo) : -1;
    if (f)
        kv_text_close(&text, f);
    rc = o->output ? finish(&out, rc) : (rc ? 1 : 0);
    for (size_t k = 0; k < nruns; k++)
        kv_run_free(&runs[k]);
    free(runs);
    return rc;
}

static int cmd_paths(struct options *o)
{
    check_options(o, "kmview paths", O_RANK | O_THREAD | O_MIN | O_FOLDED |
                  O_VALUE | O_SPEEDSCOPE | O_QUIET | O_MAX_SIZE);
    if (o->nfiles == 0)
        die_usage("%s", "no KM_output file given");
    if ((o->given & O_VALUE) && !o->folded)
        die_usage("%s", "--value says what --folded writes: give --folded too");
    bool folded_out = o->folded && !strcmp(o->folded, "-");
    bool speedscope_out = o->speedscope && !strcmp(o->speedscope, "-");
    if (folded_out && speedscope_out)
        die_usage("%s", "--folded and --speedscope cannot both be standard "
                  "output");
    struct kv_run run;
    struct kv_out out = { 0 };
    read_run(&run, o->files, o->nfiles, o->max_size);
    int rc = kv_paths_check(&run, &o->paths);
    if (!rc && o->folded) {
        FILE *f = kv_out_open(&out, o->folded);
        if (f)
            kv_paths_folded(f, &run, &o->paths);
        rc = f ? 0 : -1;
    }
    if (!rc && o->speedscope) {
        FILE *f = kv_out_open(&out, o->speedscope);
        if (f)
            kv_paths_speedscope(f, &run, &o->paths);
        rc = f ? 0 : -1;
    }
    /* a file written to standard output is all it holds */
    if (!rc && !o->quiet && !folded_out && !speedscope_out) {
        struct kv_text text;
        kv_paths_text(kv_text_open(&text), &run, &o->paths);
        kv_text_close(&text, stdout);
    }
    rc = finish(&out, rc);
    kv_run_free(&run);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o = { 0 };
    int rc;
    if (argc > 1 && strcmp(argv[1], "diff") == 0) {
        parse_options(argc, argv, 2, &o);
        rc = cmd_diff(&o);
    } else if (argc > 1 && strcmp(argv[1], "ranks") == 0) {
        parse_options(argc, argv, 2, &o);
        rc = cmd_ranks(&o);
    } else if (argc > 1 && strcmp(argv[1], "trace") == 0) {
        parse_options(argc, argv, 2, &o);
        rc = cmd_trace(&o);
    } else if (argc > 1 && strcmp(argv[1], "paths") == 0) {
        parse_options(argc, argv, 2, &o);
        rc = cmd_paths(&o);
    } else if (argc > 1 && strcmp(argv[1], "filter") == 0) {
        parse_options(argc, argv, 2, &o);
        rc = cmd_filter(&o);
    } else {
        parse_options(argc, argv, 1, &o);
        rc = cmd_summary(&o);
    }
    free(o.files);
    free(o.traces);
    free(o.plain);
    return rc;
}
