/*
 * html.h — self-contained HTML pages: the report of one run, and the
 * frame the diff view shares with it.
 */
#ifndef KV_HTML_H
#define KV_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "kmview/ranks.h"
#include "kmview/stats.h"

struct kv_trace_set;
/* Write the report of one run; `groups` (may be NULL) orders the heat
 * map's ranks by their clustering; `traces` (may be NULL) adds the
 * Trace view.  0, or -1 when a trace could not be read (printed). */
int kv_html_report(FILE *f, const struct kv_stats *st,
                   const struct kv_rank_groups *groups,
                   struct kv_trace_set *traces);

/* The page around a view: head with the inline style, then the caller
 * writes the data element, then kv_html_end adds the script. */
void kv_html_begin(FILE *f, const char *title);
/* `script` is one of the page scripts ("report" or "diff"). */
void kv_html_end(FILE *f, const char *script);

/* Base64 of n values as little-endian float32 (as_f32) or float64. */
void kv_html_b64_array(FILE *f, const double *v, size_t n, int as_f32);
/* {"t":"u16","b":"..."}: base64 of n little-endian 16-bit words. */
void kv_html_u16_array(FILE *f, const uint16_t *v, size_t n);
/* {"t":"f32"|"f64","b":"..."}: float32 when every value is exact in it
 * or `lossy_ok`, float64 otherwise. */
void kv_html_array(FILE *f, const double *v, size_t n, int lossy_ok);

#endif
