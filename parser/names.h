/*
 * names.h — sets of names per program unit, for the builder.
 *
 * The builder asks, for every assignment before a unit's first executable
 * statement and every declared array and CALL, whether a unit already has
 * a name: with the thousands of arrays a COMMON include can declare in
 * every routine, a list would make that quadratic.  A set holds (unit,
 * name) pairs; it does not own the names, which live in the km_unit.
 */
#ifndef KM_NAMES_H
#define KM_NAMES_H

#include <stdbool.h>
#include <stddef.h>

struct km_name_slot {
    int unit;             /* -1: empty */
    unsigned hash;
    const char *name;
};

struct km_names {
    struct km_name_slot *slots;
    size_t cap;           /* a power of two, or 0 */
    size_t n;
};

bool km_names_has(const struct km_names *set, int unit, const char *name);
/* Add (unit, name), which must not be in the set; `name` must outlive it. */
void km_names_add(struct km_names *set, int unit, const char *name);
void km_names_free(struct km_names *set);

#endif
