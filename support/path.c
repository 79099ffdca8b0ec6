/*
 * path.c — file names, and where the running program is installed.
 */
#include "support/path.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/buf.h"

char *km_path_join(const char *dir, const char *name)
{
    struct km_buf b = {0};
    if (strcmp(dir, ".") != 0) {
        km_buf_adds(&b, dir);
        if (b.len && b.data[b.len - 1] != '/')
            km_buf_addc(&b, '/');
    }
    km_buf_adds(&b, name);
    return (char *)km_buf_cstr(&b);
}

const char *km_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *km_dir_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return km_xstrdup(".");
    if (slash == path)
        return km_xstrdup("/");
    return km_xstrndup(path, (size_t)(slash - path));
}

char *km_beside_self(const char *rel)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *dir = km_dir_name(exe);
    char *p = km_path_join(dir, rel);
    free(dir);
    if (access(p, F_OK) == 0)
        return p;
    free(p);
    return NULL;
}
