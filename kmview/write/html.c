/*
 * html.c — the frame of the self-contained HTML pages kmview writes, and
 * the compact arrays their data elements carry.
 *
 * Owns the page frame (inline style and script, a Content-Security-Policy
 * that forbids every network request, so the page provably needs nothing
 * but itself) and the base64 encoding of number arrays: little-endian
 * float32 or float64, or 16-bit words.  The style and scripts are the
 * files report.css, common.js, report.js (with the views of messages.js,
 * files.js, flame.js and ../trace/trace.js) and diff.js, compiled in
 * (assets.c is generated from them by embed.sh).  What a page shows is
 * its caller's: the report (views/report.c), the diff (views/diff.c).
 *
 * Must never reference anything outside the page: no URL, font, image or
 * script that a browser would fetch; and never know a run's figures.
 */
#include "kmview/write/html.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/assets.h"
#include "kmview/write/out.h"

void kv_html_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
          "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
          "img-src data:\">\n<meta name=\"viewport\" content=\"width=device-"
          "width, initial-scale=1\">\n<meta name=\"generator\" content=\"kmview\">\n"
          "<title>", f);
    kv_html_str(f, title);
    fputs("</title>\n<style>\n", f);
    fputs(kv_asset_report_css, f);
    fputs("</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
          "<div id=\"tip\" role=\"tooltip\" hidden></div>\n", f);
}

void kv_html_end(FILE *f, const char *script)
{
    fputs("<script>\n", f);
    fputs(kv_asset_common_js, f);
    if (strcmp(script, "diff") == 0)
        fputs(kv_asset_diff_js, f);
    else {
        fputs(kv_asset_messages_js, f);
        fputs(kv_asset_files_js, f);
        fputs(kv_asset_trace_js, f);
        fputs(kv_asset_flame_js, f);
        fputs(kv_asset_report_js, f);
    }
    fputs("</script>\n</body>\n</html>\n", f);
}

/* ------------------------------------------------------------------------ */
/* Base64 arrays                                                             */

struct b64 {
    FILE *f;
    unsigned char in[3];
    int nin;
    char line[4096];
    size_t len;
};

static void b64_flush_line(struct b64 *b)
{
    fwrite(b->line, 1, b->len, b->f);
    b->len = 0;
}

static void b64_quad(struct b64 *b, int pad)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t v = (uint32_t)b->in[0] << 16 | (uint32_t)b->in[1] << 8 | b->in[2];
    char *o = b->line + b->len;
    o[0] = digits[v >> 18 & 63];
    o[1] = digits[v >> 12 & 63];
    o[2] = pad >= 2 ? '=' : digits[v >> 6 & 63];
    o[3] = pad >= 1 ? '=' : digits[v & 63];
    b->len += 4;
    if (b->len + 4 > sizeof b->line)
        b64_flush_line(b);
}

static void b64_byte(struct b64 *b, unsigned char c)
{
    b->in[b->nin++] = c;
    if (b->nin == 3) {
        b64_quad(b, 0);
        b->nin = 0;
    }
}

static void b64_end(struct b64 *b)
{
    if (b->nin) {
        int pad = 3 - b->nin;
        while (b->nin < 3)
            b->in[b->nin++] = 0;
        b64_quad(b, pad);
    }
    b64_flush_line(b);
}

void kv_html_b64_array(FILE *f, const double *v, size_t n, int as_f32)
{
    struct b64 b = { .f = f };
    for (size_t i = 0; i < n; i++) {
        unsigned char bytes[8];
        int nb = as_f32 ? 4 : 8;
        uint64_t bits = 0;
        if (as_f32) {
            float x = (float)v[i];
            uint32_t u;
            memcpy(&u, &x, 4);
            bits = u;
        } else {
            memcpy(&bits, &v[i], 8);
        }
        for (int k = 0; k < nb; k++)             /* little-endian */
            bytes[k] = (unsigned char)(bits >> (8 * k));
        for (int k = 0; k < nb; k++)
            b64_byte(&b, bytes[k]);
    }
    b64_end(&b);
}

static bool exact_in_float(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((double)(float)v[i] != v[i])
            return false;
    return true;
}

void kv_html_u16_array(FILE *f, const uint16_t *v, size_t n)
{
    struct b64 b = { .f = f };
    fputs("{\"t\":\"u16\",\"b\":\"", f);
    for (size_t i = 0; i < n; i++) {
        b64_byte(&b, (unsigned char)(v[i] & 0xff));   /* little-endian */
        b64_byte(&b, (unsigned char)(v[i] >> 8));
    }
    b64_end(&b);
    fputs("\"}", f);
}

void kv_html_array(FILE *f, const double *v, size_t n, int lossy_ok)
{
    int f32 = lossy_ok || exact_in_float(v, n);
    fprintf(f, "{\"t\":\"%s\",\"b\":\"", f32 ? "f32" : "f64");
    kv_html_b64_array(f, v, n, f32);
    fputs("\"}", f);
}
