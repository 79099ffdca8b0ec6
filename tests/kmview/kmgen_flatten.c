/*
 * kmgen_flatten.c — kmview's exports as "key<TAB>value" lines, so that a
 * test compares them with kmgen's expectations value by value: JSON
 * flattened to "path<TAB>value" per leaf, CSV to "FILE:key:column<TAB>
 * value", and the comparison (numbers within 1e-9).
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmgen.h"

/* ------------------------------------------------------------------------ */
/* Flattening JSON                                                           */

struct json {
    const char *p;
    char path[512];
    int bad;
};

static void json_ws(struct json *j)
{
    while (isspace((unsigned char)*j->p))
        j->p++;
}

static void json_string(struct json *j, char *out, size_t size)
{
    size_t n = 0;
    if (*j->p != '"') {
        j->bad = 1;
        return;
    }
    for (j->p++; *j->p && *j->p != '"'; j->p++) {
        char c = *j->p;
        if ((unsigned char)c < 0x20) {
            j->bad = 1;
            return;
        }
        if (c == '\\') {
            c = *++j->p;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'u') {
                unsigned v = 0;
                if (sscanf(j->p + 1, "%4x", &v) != 1) {
                    j->bad = 1;
                    return;
                }
                j->p += 4;
                c = v < 0x80 ? (char)v : '?';
            } else if (!strchr("\"\\/", c)) {
                j->bad = 1;
                return;
            }
        }
        if (n + 1 < size)
            out[n++] = c;
    }
    out[n] = '\0';
    if (*j->p != '"')
        j->bad = 1;
    else
        j->p++;
}

static void json_value(struct json *j);

static void json_leaf(struct json *j, const char *text)
{
    printf("%s\t%s\n", j->path, text);
}

static void json_children(struct json *j, bool object)
{
    size_t base = strlen(j->path);
    int index = 0;
    j->p++;
    json_ws(j);
    if (*j->p == (object ? '}' : ']')) {
        j->p++;
        return;
    }
    for (;;) {
        json_ws(j);
        if (object) {
            char key[256];
            json_string(j, key, sizeof key);
            json_ws(j);
            if (j->bad || *j->p != ':') {
                j->bad = 1;
                return;
            }
            j->p++;
            snprintf(j->path + base, sizeof j->path - base, "%s%s",
                     base ? "." : "", key);
        } else {
            snprintf(j->path + base, sizeof j->path - base, "[%d]", index++);
        }
        json_value(j);
        j->path[base] = '\0';
        json_ws(j);
        if (j->bad)
            return;
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p != (object ? '}' : ']'))
            j->bad = 1;
        else
            j->p++;
        return;
    }
}

static void json_value(struct json *j)
{
    json_ws(j);
    char buf[65536];
    if (*j->p == '{' || *j->p == '[')
        json_children(j, *j->p == '{');
    else if (*j->p == '"') {
        json_string(j, buf, sizeof buf);
        json_leaf(j, buf);
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
        snprintf(buf, 5, "%s", j->p);
        j->p += 4;
        json_leaf(j, buf);
    } else if (!strncmp(j->p, "false", 5)) {
        j->p += 5;
        json_leaf(j, "false");
    } else {
        char *end;
        strtod(j->p, &end);
        if (end == j->p || *j->p == '+' || *j->p == '.') {
            j->bad = 1;
            return;
        }
        snprintf(buf, sizeof buf, "%.*s", (int)(end - j->p), j->p);
        j->p = end;
        json_leaf(j, buf);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *b = xcalloc(cap, 1);
    size_t n;
    while ((n = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            b = realloc(b, cap *= 2);
            if (!b)
                exit(2);
        }
    }
    b[len] = '\0';
    fclose(f);
    return b;
}

int flatten_json(const char *path)
{
    char *text = slurp(path);
    if (!text)
        return perror(path), 2;
    struct json j = { .p = text };
    json_value(&j);
    json_ws(&j);
    if (j.bad || *j.p) {
        fprintf(stderr, "%s: invalid JSON at byte %ld\n", path,
                (long)(j.p - text));
        return 1;
    }
    free(text);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Flattening CSV                                                            */

/* One CSV record (RFC 4180) from *p into fields; false at the end. */
static bool csv_record(char **p, char fields[][512], int *n, int max)
{
    char *s = *p;
    if (!*s)
        return false;
    *n = 0;
    for (;;) {
        size_t len = 0;
        char *out = fields[*n];
        if (*s == '"') {
            for (s++; *s; s++) {
                if (*s == '"' && s[1] == '"')
                    s++;
                else if (*s == '"') {
                    s++;
                    break;
                }
                if (len < 511)
                    out[len++] = *s;
            }
        } else {
            while (*s && *s != ',' && *s != '\n')
                if (len < 511)
                    out[len++] = *s++;
                else
                    s++;
        }
        out[len] = '\0';
        if (*n < max - 1)
            (*n)++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    return true;
}

int flatten_csv(const char *dir, const char *name)
{
    char path[1024];
    static char head[64][512], row[64][512];
    int nh, nr;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = slurp(path), *p = text;
    if (!text)
        return perror(path), 2;
    if (!csv_record(&p, head, &nh, 64))
        return free(text), 0;
    /* rank_* files are keyed by rank and id (rank_threads.csv by rank
     * and thread), the others by their first
     * column (escaping ':' in keys) */
    bool two = !strncmp(name, "rank_routines", 13) ||
               !strncmp(name, "rank_messages", 13) ||
               !strncmp(name, "rank_peers", 10) ||
               !strncmp(name, "rank_locations", 14) ||
               !strncmp(name, "rank_thread", 11);
    while (csv_record(&p, row, &nr, 64)) {
        if (nr != nh) {
            fprintf(stderr, "%s: a record of %d fields under %d columns\n",
                    path, nr, nh);
            return free(text), 1;
        }
        char key[1100];
        if (two)
            snprintf(key, sizeof key, "%s/%s", row[0], row[1]);
        else {
            size_t k = 0;
            for (const char *s = row[0]; *s && k + 2 < sizeof key; s++) {
                if (*s == ':')
                    key[k++] = '\\';
                key[k++] = *s;
            }
            key[k] = '\0';
        }
        for (int i = two ? 2 : 1; i < nh; i++)
            printf("%s:%s:%s\t%s\n", name, key, head[i], row[i]);
    }
    free(text);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Comparing                                                                 */

struct kv {
    char *key, *value;
};

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

static struct kv *load(const char *path, size_t *n, char **keep)
{
    char *text = *keep = slurp(path);
    if (!text) {
        perror(path);
        exit(2);
    }
    size_t cap = 1024;
    struct kv *v = xcalloc(cap, sizeof *v);
    *n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (*n == cap && !(v = realloc(v, (cap *= 2) * sizeof *v)))
            exit(2);
        v[*n].key = line;
        v[*n].value = tab ? (*tab = '\0', tab + 1) : (char *)"";
        (*n)++;
    }
    qsort(v, *n, sizeof *v, by_key);
    return v;
}

static bool same_value(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return true;
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (*ea || *eb || ea == a || eb == b)
        return false;
    return fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y)) + 1e-300;
}

int compare(const char *expect, const char *got)
{
    size_t ne, ng, bad = 0;
    char *te, *tg;
    struct kv *e = load(expect, &ne, &te), *g = load(got, &ng, &tg);
    for (size_t i = 0; i < ne; i++) {
        struct kv *hit = bsearch(&e[i], g, ng, sizeof *g, by_key);
        if (!hit || !same_value(e[i].value, hit->value)) {
            if (bad++ < 10)
                printf("    %s: expected '%s', got %s%s%s\n", e[i].key,
                       e[i].value, hit ? "'" : "nothing",
                       hit ? hit->value : "", hit ? "'" : "");
        }
    }
    printf("    %zu of %zu values as expected\n", ne - bad, ne);
    free(e);
    free(g);
    free(te);
    free(tg);
    return bad ? 1 : 0;
}
