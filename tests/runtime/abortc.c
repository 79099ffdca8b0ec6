/* abortc.c — abort.f's ways out that Fortran has not: a failed assert
 * and quick_exit. */
#undef NDEBUG
#include <assert.h>
#include <stdlib.h>

void kmtassert_(void)
{
    int ready = 0;
    assert(ready);
}

void kmtquick_(void)
{
    quick_exit(3);
}
