/*
 * opts.h — what kmrun and kmview share in reading their options with
 * getopt_long: a one-letter option's value as their old parsers took it,
 * and a long option's name for a message.
 */
#ifndef KM_OPTS_H
#define KM_OPTS_H

#include <getopt.h>

/* The value getopt_long just gave a one-letter option: -o FILE, -oFILE,
 * and -o=FILE as the hand-written parsers took it (FILE, not =FILE). */
const char *km_short_value(char **argv);

/* "--NAME" of the long option whose val is `val` (empty if none), in a
 * static buffer. */
const char *km_long_name(const struct option *longs, int val);

#endif
