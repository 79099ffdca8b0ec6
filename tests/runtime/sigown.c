/* sigown.c -- OWNSET for sigown.f with the program's own SIGUSR1 handler
 * installed in C before main (a constructor), so before libkm starts:
 * libkm must tell it from a compiler runtime's handler and leave it.
 * The handler sets sigown.f's COMMON /OWNSIG/ (gfortran's name). */
#include <signal.h>
#include <string.h>

extern struct { int icaught; } ownsig_;

static void on_usr1(int sig)
{
    (void)sig;
    ownsig_.icaught = 1;
}

__attribute__((constructor)) static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

void ownset_(void)
{
}
