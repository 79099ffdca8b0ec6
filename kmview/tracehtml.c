/*
 * tracehtml.c — the report's Trace view data (to come: the member
 * ,"trace":{...}); for now the report gains nothing from --trace.
 */
#include "kmview/trace.h"

int kv_trace_html(FILE *f, struct kv_trace_set *s)
{
    (void)f;
    (void)s;
    return 0;
}
