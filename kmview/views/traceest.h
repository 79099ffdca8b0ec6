/*
 * traceest.h — kmview trace --estimate: the size a trace of a run would
 * have (traceest.c).
 */
#ifndef KV_TRACEEST_H
#define KV_TRACEEST_H

#include <stdint.h>
#include <stdio.h>

struct kv_run;
/* kmview trace --estimate: the size of a trace of the run `run` (read
 * from a KM_output made without one), per rank against `limit` bytes
 * (traceest.c). */
void kv_trace_estimate(FILE *f, const struct kv_run *run, uint64_t limit);

#endif
