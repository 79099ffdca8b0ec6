/*
 * interfaces.c — index files of separate module procedure interfaces (see
 * interfaces.h).
 */
#include "kmrun/interfaces.h"

#include "parser/modules.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/path.h"

#define MAGIC "kmtool-interfaces "
#define VERSION 2                 /* 2: a module's "spec" lines */

static void add_lower(struct km_buf *b, const char *s)
{
    for (; *s; s++)
        km_buf_addc(b, (char)tolower((unsigned char)*s));
}

bool km_interface_index(const struct km_program *p, int unit, char **name,
                        struct km_buf *text)
{
    const struct km_unit *u = &p->units[unit];
    const struct km_module *m = NULL;
    for (int k = 0; u->kind == KM_U_MODULE && k < p->nmodules; k++)
        if (strcmp(p->modules[k].name, u->name) == 0)
            m = &p->modules[k];
    int n = 0;
    for (int k = 0; k < p->nseparates; k++)
        n += p->separates[k].unit == unit;
    if (n == 0 && !m)
        return false;
    km_buf_printf(text, MAGIC "%d\n", VERSION);
    for (int k = 0; m && k < m->nlines; k++)
        km_buf_printf(text, "spec %s\n", m->lines[k]);
    for (int k = 0; k < p->nseparates; k++) {
        const struct km_separate *sep = &p->separates[k];
        if (sep->unit == unit)
            km_buf_printf(text, "%s %s%s\n", sep->qualified,
                          sep->kind == KM_U_FUNCTION ? "function"
                                                     : "subroutine",
                          sep->pure ? " pure" : "");
    }
    struct km_buf b = {0};
    add_lower(&b, u->qualified);
    if (u->kind == KM_U_SUBMODULE) {
        km_buf_addc(&b, '@');
        add_lower(&b, u->name);
    }
    km_buf_adds(&b, ".kmi");
    *name = b.data;
    return true;
}

/* The lines of index file `path` after its first, without their
 * newlines, into *lines (*n of them); its version, or 0 if there is no
 * such index file. */
static int read_lines(const char *path, char ***lines, int *n)
{
    *lines = NULL;
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char *line = NULL;
    size_t size = 0;
    int version = 0, cap = 0;
    if (getline(&line, &size, fp) > 0 &&
        strncmp(line, MAGIC, strlen(MAGIC)) == 0)
        version = atoi(line + strlen(MAGIC));
    ssize_t len;
    while (version > 0 && (len = getline(&line, &size, fp)) > 0) {
        if (line[len - 1] == '\n')
            line[len - 1] = '\0';
        KM_GROW(*lines, cap, *n + 1);
        (*lines)[(*n)++] = km_xstrdup(line);
    }
    free(line);
    fclose(fp);
    return version;
}

static void free_lines(char **lines, int n)
{
    for (int k = 0; k < n; k++)
        free(lines[k]);
    free(lines);
}

bool km_is_foreign_index(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    char head[sizeof MAGIC];
    bool ours = fread(head, 1, sizeof head - 1, fp) == sizeof head - 1 &&
                memcmp(head, MAGIC, sizeof head - 1) == 0;
    fclose(fp);
    return !ours;
}

/* The interfaces an index file holds, into from->separates. */
static void read_index(const char *path, struct km_program *from)
{
    char **lines;
    int n;
    read_lines(path, &lines, &n);
    for (int k = 0; k < n; k++) {
        char qualified[2048], kind[32], pure[32] = "";
        if (strncmp(lines[k], "spec ", 5) == 0 ||
            sscanf(lines[k], "%2047s %31s %31s", qualified, kind, pure) < 2)
            continue;
        KM_GROW(from->separates, from->separatecap, from->nseparates + 1);
        from->separates[from->nseparates++] = (struct km_separate){
            .qualified = km_xstrdup(qualified),
            .kind = strcmp(kind, "function") == 0 ? KM_U_FUNCTION
                                                  : KM_U_SUBROUTINE,
            .pure = strcmp(pure, "pure") == 0, .unit = -1};
    }
    free_lines(lines, n);
}

/* MODULE.kmi and every MODULE@*.kmi in dir (module: lower case). */
static void read_module(const char *dir, const char *module,
                        struct km_program *from)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t n = strlen(module);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *f = e->d_name;
        size_t len = strlen(f);
        if (strncmp(f, module, n) != 0 || len < n + 4 ||
            strcmp(f + len - 4, ".kmi") != 0 ||
            (f[n] != '.' && f[n] != '@'))
            continue;
        struct km_buf path = {0};
        km_buf_printf(&path, "%s/%s", dir, f);
        read_index(path.data, from);
        km_buf_free(&path);
    }
    closedir(d);
}

void km_find_interfaces(struct km_program *p, const char *const *dirs,
                        int ndirs)
{
    for (int u = 0; u < p->nunits; u++) {
        const struct km_unit *un = &p->units[u];
        const char *colons = strstr(un->qualified, "::");
        if (!un->inherits || !colons)
            continue;
        struct km_buf module = {0};
        for (const char *c = un->qualified; c < colons; c++)
            km_buf_addc(&module, (char)tolower((unsigned char)*c));
        struct km_program from = {0};
        for (int k = 0; k < ndirs; k++)
            read_module(dirs[k], module.data, &from);
        km_inherit_interfaces(p, &from);
        for (int k = 0; k < from.nseparates; k++)
            free(from.separates[k].qualified);
        free(from.separates);
        km_buf_free(&module);
    }
}

/* Module `name`'s specification from its index file in one of the
 * directories, added to p; false if none has one (of version 2 on). */
static bool find_module(struct km_program *p, const char *name,
                        const char *const *dirs, int ndirs)
{
    struct km_buf file = {0};
    add_lower(&file, name);
    km_buf_adds(&file, ".kmi");
    bool found = false;
    for (int k = 0; k < ndirs && !found; k++) {
        char *path = km_path_join(dirs[k], file.data);
        char **lines;
        int n;
        if (read_lines(path, &lines, &n) >= 2) {
            char **specs = km_xcalloc((size_t)n + 1, sizeof *specs);
            int nspecs = 0;
            for (int i = 0; i < n; i++)
                if (strncmp(lines[i], "spec ", 5) == 0)
                    specs[nspecs++] = km_xstrdup(lines[i] + 5);
            km_add_module(p, km_xstrdup(name), specs, nspecs);
            found = true;
        }
        free_lines(lines, n);
        free(path);
    }
    km_buf_free(&file);
    return found;
}

void km_find_modules(struct km_program *p, const char *const *dirs,
                     int ndirs)
{
    for (bool more = true; more;) {
        char **names;
        int n = km_missing_modules(p, &names);
        more = false;
        for (int k = 0; k < n; k++)
            more |= find_module(p, names[k], dirs, ndirs);
        free_lines(names, n);
    }
}
