/*
 * km_signal.c — results on the signals that stop a program from outside,
 * SIGTERM, SIGINT, SIGHUP, SIGXCPU, SIGUSR1 and SIGUSR2, and on SIGABRT,
 * with which it stops itself.
 *
 * Batch systems and mpirun stop a program with SIGTERM (then SIGKILL),
 * a user with ^C; a CPU-time limit sends SIGXCPU, and batch systems warn
 * with SIGUSR1 or SIGUSR2 before they kill.  A program stops itself with
 * SIGABRT: Fortran's CALL ABORT, C's abort() and a failed assert(), and
 * the MPI and C libraries on an error they cannot go on from.  For each of these libkm
 * installs a handler that writes the results so far, then puts back the
 * action that was there before it and raises the signal again, so the
 * process ends exactly as it would have (same signal, same messages, same
 * exit status for the shell and for mpirun).  It does so when, at libkm's
 * start (the main program's first statement, after the compiler's
 * runtime set itself up), the action is
 *   - the default one, or
 *   - a handler of the Fortran compiler's runtime: gfortran's (default
 *     -fbacktrace) catches SIGXCPU, among others, to print a backtrace
 *     before it dies; Intel's catches SIGINT and SIGTERM.  Such a handler
 *     is told from the program's own by where its code lies: dladdr names
 *     a shared library of the runtime (compiler_runtime below); in a
 *     statically linked program, gfortran's is known by its name there.
 *     flang-19's runtime catches no signal.  Any other runtime's handler
 *     in a static link is taken for the program's own, and left alone.
 * A program's own handler (installed from C before libkm started, by an
 * MPI library, or later, over libkm's, by the program), and an ignored
 * signal (nohup), are left alone.
 *
 * A signal sent to the process may be delivered to any of its threads
 * (MPI libraries start helper threads); on Linux the handler passes it on
 * to the thread that runs the program, whose state libkm measures, so
 * that the write never races with the program's own calls into libkm.
 *
 * The handler runs on top of whatever the program was doing, so the write
 * it makes (km_core_on_signal) takes no lock: its memory comes from mmap
 * (km_mem.c), its text from vsnprintf, its file from open/write/link;
 * MPI is never called (an MPI rank writes its own KM_output.NNN.<rank>).
 * The frame stack is kept consistent at every instruction of the hot path
 * (km_write.c) for this.  If a write is already under way the handler only
 * notes the signal; the writer raises it again when it is done.
 *
 * Must never: replace a handler the program installed, call malloc, stdio
 * or MPI from the handler, or swallow a signal.
 */
/* syscall(), dladdr(): beyond POSIX */
#define _GNU_SOURCE 1
#include "runtime/km_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<dlfcn.h>)
#include <dlfcn.h>
#define KM_HAVE_DLADDR 1
#endif
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#endif

static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGXCPU,
                                     SIGUSR1, SIGUSR2, SIGABRT };
#define NSIG_HANDLED (sizeof stop_signals / sizeof *stop_signals)

/* The action each signal had before libkm's, put back to end the process
 * (all SIG_DFL until km_signal_install took one over). */
static struct sigaction previous[NSIG_HANDLED];
static volatile sig_atomic_t previous_known[NSIG_HANDLED];

static int signal_index(int sig)
{
    for (size_t i = 0; i < NSIG_HANDLED; i++)
        if (stop_signals[i] == sig)
            return (int)i;
    return -1;
}

void km_signal_reraise(int sig)
{
    struct sigaction act;
    int i = signal_index(sig);
    if (i >= 0 && previous_known[i]) {
        act = previous[i];
    } else {
        memset(&act, 0, sizeof act);
        act.sa_handler = SIG_DFL;
        sigemptyset(&act.sa_mask);
    }
    sigaction(sig, &act, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    raise(sig);                      /* pending while blocked ... */
    sigprocmask(SIG_UNBLOCK, &set, NULL);   /* ... delivered here */
}

#if defined(__linux__) && defined(SYS_gettid) && defined(SYS_tgkill)
static long program_thread;          /* the thread that installed them */

/* 1 when the signal was passed on to the program's thread. */
static int passed_on(int sig)
{
    long self = syscall(SYS_gettid);
    if (program_thread == 0 || self == program_thread)
        return 0;
    return syscall(SYS_tgkill, (long)getpid(), program_thread, sig) == 0;
}

static void note_program_thread(void)
{
    program_thread = syscall(SYS_gettid);
}
#else
static int passed_on(int sig)
{
    (void)sig;
    return 0;
}

static void note_program_thread(void)
{
}
#endif

static void on_signal(int sig)
{
    int saved_errno = errno;
    if (passed_on(sig)) {
        errno = saved_errno;
        return;
    }
    if (km_core_on_signal(sig) == 0)
        km_signal_reraise(sig);
    errno = saved_errno;
}

/* gfortran's handler (-fbacktrace) in a statically linked program, where
 * libgfortran.a's compile_options.o, which main always links, gives it
 * this global name; in libgfortran.so it is hidden, and this weak
 * reference stays 0 (dladdr finds it there).  The name is libgfortran's,
 * hence its reserved form. */
extern void _gfortrani_backtrace_handler(int) __attribute__((weak));

static uintptr_t gfortran_static_handler(void)
{
    return (uintptr_t)_gfortrani_backtrace_handler;
}

#if defined(KM_HAVE_DLADDR)
/* Weak: in a static link dladdr would only drag in the dynamic loader
 * (and name nothing); before glibc 2.34 it lives in libdl, which the
 * program need not link. */
extern __typeof__(dladdr) dladdr __attribute__((weak));

/* The shared libraries of Fortran compilers' runtimes: gfortran's, the
 * two flangs' (classic libflang, LLVM's libFortranRuntime and
 * libflang_rt), Intel's. */
static const char *const compiler_runtimes[] = {
    "libgfortran.", "libflang", "libFortranRuntime", "libflang_rt",
    "libifcore",
};

/* 1 when the code at `code` lies in a Fortran compiler's runtime. */
static int compiler_runtime(uintptr_t code)
{
    Dl_info info;
    if (code != 0 && code == gfortran_static_handler())
        return 1;
    if (!dladdr || code == 0 ||
        !dladdr((const void *)code, &info) || !info.dli_fname)
        return 0;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (size_t i = 0; i < sizeof compiler_runtimes /
                           sizeof *compiler_runtimes; i++) {
        const char *name = compiler_runtimes[i];
        if (strncmp(base, name, strlen(name)) == 0)
            return 1;
    }
    return 0;
}
#else
static int compiler_runtime(uintptr_t code)
{
    return code != 0 && code == gfortran_static_handler();
}
#endif

/* 1 when libkm may take the signal whose action is `old` (see the top). */
static int may_take_over(const struct sigaction *old)
{
    if (old->sa_flags & SA_SIGINFO)
        return compiler_runtime((uintptr_t)old->sa_sigaction);
    if (old->sa_handler == SIG_DFL)
        return 1;
    if (old->sa_handler == SIG_IGN)
        return 0;
    return compiler_runtime((uintptr_t)old->sa_handler);
}

void km_signal_install(void)
{
    struct sigaction sa, old;
    note_program_thread();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIG_HANDLED; i++)   /* one write at a time */
        sigaddset(&sa.sa_mask, stop_signals[i]);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < NSIG_HANDLED; i++) {
        if (sigaction(stop_signals[i], NULL, &old) != 0 ||
            !may_take_over(&old))
            continue;
        previous[i] = old;
        previous_known[i] = 1;
        sigaction(stop_signals[i], &sa, NULL);
    }
}

/* A file-size limit (ulimit -f) makes write() raise SIGXFSZ, whose default
 * action (and the Fortran runtime's handler) kills the program: while
 * libkm writes a file (KM_output, KM_trace) the signal is ignored, so the
 * write fails with EFBIG instead and libkm says so.  1 if held. */
int km_signal_hold_xfsz(struct sigaction *old)
{
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    return sigaction(SIGXFSZ, &ign, old) == 0;
}

void km_signal_release_xfsz(const struct sigaction *old)
{
    sigaction(SIGXFSZ, old, NULL);
}
