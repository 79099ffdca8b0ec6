/*
 * traceotf2.h — kmview trace --otf2=DIR: a trace set as an OTF2 archive
 * (traceotf2.c), for Vampir, Score-P's tools and otf2-print.
 */
#ifndef KV_TRACEOTF2_H
#define KV_TRACEOTF2_H

#include <stdbool.h>

#include "kmview/trace/trace.h"

/* Whether this kmview was built with the OTF2 library. */
bool kv_trace_otf2_available(void);

/* Write DIR/traces.otf2, DIR/traces.def and DIR/traces/ (DIR made when
 * missing): every event of every thread of `s`.  An archive already in
 * DIR is an error, and an error leaves nothing behind.  0, or -1 with the
 * error printed. */
int kv_trace_otf2(const char *dir, struct kv_trace_set *s);

#endif
