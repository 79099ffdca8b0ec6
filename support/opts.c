/*
 * opts.c — see opts.h.
 */
#include "support/opts.h"

#include <stdbool.h>
#include <stdio.h>

const char *km_short_value(char **argv)
{
    bool glued = optarg != argv[optind - 1];
    return glued && optarg[0] == '=' ? optarg + 1 : optarg;
}

const char *km_long_name(const struct option *longs, int val)
{
    static char name[32];
    name[0] = 0;
    for (const struct option *l = longs; l->name; l++)
        if (l->val == val)
            snprintf(name, sizeof name, "--%s", l->name);
    return name;
}
