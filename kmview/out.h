/*
 * out.h — writing kmview's output files whole or not at all, and the
 * number and string formats every writer shares.
 */
#ifndef KV_OUT_H
#define KV_OUT_H

#include <stdbool.h>
#include <stdio.h>

/* A set of output files written under temporary names in their final
 * directories and renamed into place together by kv_out_commit, so that
 * an error leaves none of them behind.  "-" is standard output. */
struct kv_out {
    struct kv_out_file {
        char *path, *tmp;
        FILE *f;
    } *files;
    size_t n, cap;
    char **dirs;             /* directories kv_make_dir created */
    size_t ndirs;
    bool failed;
};

/* A stream for `path`, or NULL (error printed, o->failed set). */
FILE *kv_out_open(struct kv_out *o, const char *path);
/* Flush, close and rename every file; on any error remove them all and
 * return -1 (error printed). */
int kv_out_commit(struct kv_out *o);
/* Remove every file opened so far. */
void kv_out_abandon(struct kv_out *o);

/* Create directory `dir` if it does not exist (removed again if `o` is
 * abandoned).  -1 with an error printed. */
int kv_make_dir(struct kv_out *o, const char *dir);

/* Shortest text that reads back as exactly v; "" for NaN or infinities. */
const char *kv_num(char buf[32], double v);
/* Seconds (or any figure) for people: 4 significant digits. */
const char *kv_human(char buf[32], double v);
/* kv_human with a leading '~' when `est` (the value contains an
 * estimate), as KM_output marks it. */
const char *kv_human_mark(char buf[32], double v, bool est);
/* A fraction as a percentage with one decimal: "12.5%"; "-" for NaN. */
const char *kv_percent(char buf[32], double fraction);

/* Text as lines of at most `width` characters, broken at blanks. */
void kv_print_wrapped(FILE *f, const char *text, size_t width);
void kv_csv_str(FILE *f, const char *s);
void kv_csv_num(FILE *f, double v);
/* A JSON string; '<', '>' and '&' are escaped too, so the text can sit
 * inside an HTML <script> element. */
void kv_json_str(FILE *f, const char *s);
/* A JSON number, or null for NaN and infinities. */
void kv_json_num(FILE *f, double v);
/* Text for HTML element content or attribute values. */
void kv_html_str(FILE *f, const char *s);

#endif
