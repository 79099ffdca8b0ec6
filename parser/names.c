/*
 * names.c — open-addressing hash sets of (unit, name) (see names.h).
 */
#include "parser/names.h"

#include <stdlib.h>
#include <string.h>

#include "support/buf.h"

static unsigned hash_of(int unit, const char *name)
{
    unsigned h = 2166136261u ^ (unsigned)unit;     /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

static struct km_name_slot *find(const struct km_names *set, int unit,
                                 const char *name, unsigned h)
{
    size_t mask = set->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct km_name_slot *s = &set->slots[i];
        if (s->unit < 0 || (s->unit == unit && s->hash == h &&
                            strcmp(s->name, name) == 0))
            return s;
    }
}

bool km_names_has(const struct km_names *set, int unit, const char *name)
{
    if (set->cap == 0)
        return false;
    return find(set, unit, name, hash_of(unit, name))->unit >= 0;
}

static void grow(struct km_names *set)
{
    struct km_names bigger = {0};
    bigger.cap = set->cap ? set->cap * 2 : 64;
    bigger.slots = km_xmalloc(bigger.cap * sizeof *bigger.slots);
    for (size_t i = 0; i < bigger.cap; i++)
        bigger.slots[i].unit = -1;
    for (size_t i = 0; i < set->cap; i++)
        if (set->slots[i].unit >= 0)
            *find(&bigger, set->slots[i].unit, set->slots[i].name,
                  set->slots[i].hash) = set->slots[i];
    bigger.n = set->n;
    free(set->slots);
    *set = bigger;
}

void km_names_add(struct km_names *set, int unit, const char *name)
{
    if (2 * (set->n + 1) > set->cap)
        grow(set);
    unsigned h = hash_of(unit, name);
    struct km_name_slot *s = find(set, unit, name, h);
    s->unit = unit;
    s->hash = h;
    s->name = name;
    set->n++;
}

void km_names_free(struct km_names *set)
{
    free(set->slots);
    memset(set, 0, sizeof *set);
}
