/*
 * html.h — the frame of kmview's self-contained HTML pages, and the
 * compact number arrays their data elements carry.
 */
#ifndef KV_HTML_H
#define KV_HTML_H

#include <stdint.h>
#include <stdio.h>

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
