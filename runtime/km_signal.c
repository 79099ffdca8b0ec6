/*
 * km_signal.c — results on SIGTERM, SIGINT, SIGHUP and SIGXCPU.
 *
 * Batch systems and mpirun stop a program with SIGTERM (then SIGKILL),
 * a user with ^C; a CPU-time limit sends SIGXCPU.  For each of these
 * whose action is still the default when libkm starts (a program's own
 * handler, or SIG_IGN from nohup, is left alone), libkm installs a handler
 * that writes the results so far, then restores the default action and
 * raises the signal again, so the process ends exactly as it would have
 * (same signal, same exit status for the shell and for mpirun).
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
 * (km_core.c) for this.  If a write is already under way the handler only
 * notes the signal; the writer raises it again when it is done.
 *
 * Must never: replace a handler the program installed, call malloc, stdio
 * or MPI from the handler, or swallow a signal.
 */
/* syscall(): beyond POSIX */
#define _DEFAULT_SOURCE 1
#include "runtime/km_internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGXCPU };
#define NSIG_HANDLED (sizeof stop_signals / sizeof *stop_signals)

void km_signal_reraise(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
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
        if (sigaction(stop_signals[i], NULL, &old) != 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            sigaction(stop_signals[i], &sa, NULL);
    }
}
