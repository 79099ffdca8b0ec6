/*
 * interfaces.c — index files of separate module procedure interfaces (see
 * interfaces.h).
 */
#include "kmrun/interfaces.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "kmtool-interfaces 1"

static void add_lower(struct km_buf *b, const char *s)
{
    for (; *s; s++)
        km_buf_addc(b, (char)tolower((unsigned char)*s));
}

bool km_interface_index(const struct km_program *p, int unit, char **name,
                        struct km_buf *text)
{
    const struct km_unit *u = &p->units[unit];
    int n = 0;
    for (int k = 0; k < p->nseparates; k++) {
        const struct km_separate *sep = &p->separates[k];
        if (sep->unit != unit)
            continue;
        if (n++ == 0)
            km_buf_adds(text, MAGIC "\n");
        km_buf_printf(text, "%s %s%s\n", sep->qualified,
                      sep->kind == KM_U_FUNCTION ? "function" : "subroutine",
                      sep->pure ? " pure" : "");
    }
    if (n == 0)
        return false;
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

/* The interfaces an index file holds, into from->separates. */
static void read_index(const char *path, struct km_program *from)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    char line[4096];
    if (!fgets(line, sizeof line, fp) || strncmp(line, MAGIC, strlen(MAGIC))) {
        fclose(fp);
        return;
    }
    while (fgets(line, sizeof line, fp)) {
        char qualified[2048], kind[32], pure[32] = "";
        if (sscanf(line, "%2047s %31s %31s", qualified, kind, pure) < 2)
            continue;
        KM_GROW(from->separates, from->separatecap, from->nseparates + 1);
        from->separates[from->nseparates++] = (struct km_separate){
            .qualified = km_xstrdup(qualified),
            .kind = strcmp(kind, "function") == 0 ? KM_U_FUNCTION
                                                  : KM_U_SUBROUTINE,
            .pure = strcmp(pure, "pure") == 0, .unit = -1};
    }
    fclose(fp);
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
