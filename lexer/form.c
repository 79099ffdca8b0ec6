/*
 * form.c — what a file's name says of it, as gfortran reads it: its
 * source form, and whether it is preprocessed.  Kept apart from the
 * reader so that kmfc can ask without linking the whole front end.
 */
#include <stdbool.h>
#include <string.h>

#include "lexer/reader.h"

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? dot + 1 : NULL;
}

static bool one_of(const char *ext, const char *const *list, size_t n)
{
    for (size_t k = 0; ext && k < n; k++)
        if (strcmp(ext, list[k]) == 0)
            return true;
    return false;
}

bool km_form_from_name(const char *path, enum km_form *form)
{
    static const char *const fixed[] = {"f", "for", "ftn", "fpp", "F",
                                        "FOR", "FTN", "FPP"};
    static const char *const free_[] = {"f90", "f95", "f03", "f08", "F90",
                                        "F95", "F03", "F08"};
    const char *ext = extension(path);
    if (one_of(ext, fixed, sizeof fixed / sizeof *fixed)) {
        *form = KM_FORM_FIXED;
        return true;
    }
    if (one_of(ext, free_, sizeof free_ / sizeof *free_)) {
        *form = KM_FORM_FREE;
        return true;
    }
    return false;
}

bool km_preprocessed_name(const char *path)
{
    static const char *const pre[] = {"F", "FOR", "FTN", "FPP", "fpp",
                                      "F90", "F95", "F03", "F08"};
    return one_of(extension(path), pre, sizeof pre / sizeof *pre);
}

int km_default_line_length(enum km_form form)
{
    return form == KM_FORM_FREE ? 132 : 72;
}
