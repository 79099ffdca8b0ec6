/*
 * path.h — file names, and where the running program is installed.
 */
#ifndef KM_PATH_H
#define KM_PATH_H

/* dir/name ("." gives name alone), newly allocated. */
char *km_path_join(const char *dir, const char *name);
/* The part after the last '/'. */
const char *km_base_name(const char *path);
/* The part before the last '/' ("." if none, "/" for the root), newly
 * allocated. */
char *km_dir_name(const char *path);
/* `rel` taken from the directory of the running executable, if that file
 * exists (an installation that was moved, or installed with DESTDIR,
 * finds its own files); else NULL. */
char *km_beside_self(const char *rel);

#endif
