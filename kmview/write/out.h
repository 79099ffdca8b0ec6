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

/* Open dir/name through `o`. */
FILE *kv_out_open_in(struct kv_out *o, const char *dir, const char *name);

/* A set of CSV files in one directory, each written by its function from
 * the same context. */
struct kv_csv_file {
    const char *name;
    void (*write)(FILE *f, const void *ctx);
};
/* Create `dir` if needed and write each file through `o`.  -1 on error. */
int kv_csv_files(struct kv_out *o, const char *dir,
                 const struct kv_csv_file *files, size_t n, const void *ctx);

/* Text for people (every command's standard output, kmview filter's
 * control file), gathered in memory and written with kv_text_close: names
 * and statements come from the input files as they are, and a control
 * character in them must not reach a terminal (an ESC sequence retitles
 * or recolours it).  So every byte below 0x20 but the newline, and DEL,
 * becomes \xHH, and a C1 control in UTF-8 (C2 80 .. C2 9F) \u00HH; the
 * writers themselves put no control character but the newline. */
struct kv_text {
    FILE *f;
    char *buf;
    size_t len;
};
/* The stream to write the text to (exits on lack of memory). */
FILE *kv_text_open(struct kv_text *t);
/* Write the text, escaped, to `to`, and free it. */
void kv_text_close(struct kv_text *t, FILE *to);
/* `len` bytes of text escaped so (error messages quoting a file). */
void kv_put_escaped(FILE *to, const char *text, size_t len);
/* `len` bytes of text escaped so, appended to b (a name inside a line
 * of its own format: folded stacks). */
struct km_buf;
void kv_buf_add_escaped(struct km_buf *b, const char *text, size_t len);
/* A message on standard error, escaped so: kmview's every error and
 * warning goes through it, since file names (on the command line, in a
 * KM_output file) and names read from files may hold any byte. */
void kv_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
/* What kv_csv_str writes, as a malloc'd string. */
char *kv_csv_field(const char *s);
void kv_csv_num(FILE *f, double v);

/* Fast, exact number texts for the writers' big tables (10^5 ranks make
 * hundreds of millions of fields, where printf's format parsing costs
 * more than the writing): each writes at p and returns the end, no '\0'.
 * kv_put_int: as printf's %lld.  kv_put_ns: whole nanoseconds as seconds,
 * "%lld.%09lld" of ns / 10^9 and |ns % 10^9| without trailing zeros, nor
 * the point when nothing follows it ("0.9", "2", "1.000000001"). */
char *kv_put_int(char *p, long long v);
char *kv_put_uint(char *p, unsigned long long v);
char *kv_put_ns(char *p, long long ns);
/* Write [start, end) to f. */
void kv_put_end(FILE *f, const char *start, const char *end);
/* A JSON string; '<', '>' and '&' are escaped too, so the text can sit
 * inside an HTML <script> element. */
void kv_json_str(FILE *f, const char *s);
/* A JSON number, or null for NaN and infinities. */
void kv_json_num(FILE *f, double v);
/* Text for HTML element content or attribute values. */
void kv_html_str(FILE *f, const char *s);

#endif
