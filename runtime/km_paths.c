/*
 * km_paths.c — the call paths: a thread's nodes, and finding the child of
 * a node for a region.
 *
 * Owns a thread's node list (chunks of KM_NODE_CHUNK nodes, never moved:
 * the frame stack and the children's caches point into them), the table
 * from (parent, region, folded at the limit or not) to node, a node's
 * cache of children (a slot per id % KM_NKID, and KM_NALT places for
 * those another child took the slot of), the list of the nodes that
 * sample (the time slots' walk), and the limits.  Both limits fold paths,
 * and neither loses a count nor moves one to another caller:
 *
 * - A region with KM_PATHS_RECURSION nodes on a path goes on in the
 *   nearest of them that was entered from the same region as this entry
 *   (a new node while none was), so that every execution is still
 *   counted on an edge from the region that really called it (indirect
 *   recursion alternating between two callers keeps each one's calls).
 * - Once the thread has KM_PATHS_MAX nodes, a new path goes on in a node
 *   of its region directly under the path's outermost region, marked as
 *   folded at the limit and apart from a path that really runs there (the
 *   regions between leave its time out of theirs; those around it keep
 *   it).
 *
 * The time a new node takes (a chunk, a bigger table) is libkm's
 * overhead, not the caller's.
 *
 * Must never free or move a node while the thread runs (a snapshot may
 * be reading it), publish a node before it is complete, or be reached
 * from the fast path other than for a child it did not find.
 */
#include "runtime/km_core.h"

struct km_node km_no_node = {
    .id = INT32_MIN,
    .kid = { &km_no_node, &km_no_node, &km_no_node, &km_no_node,
             &km_no_node, &km_no_node, &km_no_node, &km_no_node },
    .alt = { &km_no_node, &km_no_node },
};

static void init_node(struct km_node *n, int32_t index, struct km_node *parent,
                      struct km_region *r)
{
    memset(n, 0, sizeof *n);
    n->index = index;
    n->parent = parent;
    n->r = r;
    n->id = r ? r->id : 0;
    n->callee = r ? r->callee : 1;
    n->wrapper = r && r->kind == KM_K_CALL;
    n->hooks = r ? r->hooks : 0;
    n->add = km_st.cost_estimated;
    n->k = 1;
    for (int i = 0; i < KM_NKID; i++)
        n->kid[i] = &km_no_node;
    for (int i = 0; i < KM_NALT; i++)
        n->alt[i] = &km_no_node;
    for (const struct km_node *a = parent; a; a = a->parent)
        if (a->id == n->id && r)
            n->nested = 1;
}

/* A node's key in the table: its parent, its region, and whether it
 * holds paths folded at KM_PATHS_MAX (such a node is apart from the
 * region's node for a path that really runs there). */
struct kid_key {
    int32_t parent, id;
    int max;
};

static struct kid_key key_of(const struct km_node *n)
{
    return (struct kid_key){ n->parent->index, n->id,
                             (n->folded & KM_FOLD_MAX) != 0 };
}

static uint32_t kid_hash(struct kid_key k)
{
    uint64_t x = (uint64_t)(uint32_t)k.parent * 0x9e3779b97f4a7c15u ^
                 (uint64_t)(uint32_t)k.id * 0xc2b2ae3d27d4eb4fu ^
                 (uint64_t)k.max * 0x165667b19e3779f9u;
    return (uint32_t)(x >> 32);
}

static int32_t *kid_slot(int32_t *tab, uint32_t cap, const struct km_thread *t,
                         struct kid_key k)
{
    uint32_t i = kid_hash(k) & (cap - 1);
    for (;;) {
        int32_t v = tab[i];
        if (v == 0)
            return &tab[i];
        const struct km_node *n = km_node_at(t, v - 1);
        if (n->id == k.id && n->parent && n->parent->index == k.parent &&
            ((n->folded & KM_FOLD_MAX) != 0) == k.max)
            return &tab[i];
        i = (i + 1) & (cap - 1);
    }
}

/* The node of key k, or NULL. */
static struct km_node *lookup(const struct km_thread *t, struct kid_key k)
{
    if (!t->kids)
        return NULL;
    int32_t v = *kid_slot(t->kids, t->kidcap, t, k);
    return v ? km_node_at(t, v - 1) : NULL;
}

/* Room in the table for one more node (it stays at most half full). */
static int grow_kids(struct km_thread *t)
{
    if ((uint32_t)(t->nnodes + 1) * 2 <= t->kidcap)
        return 0;
    uint32_t cap = t->kidcap ? t->kidcap * 2 : 1024;
    int32_t *tab = km_mem_alloc((size_t)cap * sizeof *tab);
    if (!tab)
        return -1;
    memset(tab, 0, (size_t)cap * sizeof *tab);
    for (int32_t i = 1; i < t->nnodes; i++) {
        *kid_slot(tab, cap, t, key_of(km_node_at(t, i))) = i + 1;
    }
    km_mem_free(t->kids);
    t->kids = tab;
    t->kidcap = cap;
    return 0;
}

/* Room for node `index`: its chunk, aligned to a line. */
static int grow_chunks(struct km_thread *t, int32_t index)
{
    int32_t c = index / KM_NODE_CHUNK;
    if (t->chunk[c])
        return 0;
    char *raw = km_mem_alloc(KM_NODE_CHUNK * sizeof(struct km_node) + 64);
    if (!raw)
        return -1;
    uintptr_t p = ((uintptr_t)raw + 63) & ~(uintptr_t)63;
    signal_fence();
    t->chunk[c] = (struct km_node *)p;
    return 0;
}

static long long env_limit(const char *name, long long dflt, long long lo,
                           long long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || v < lo || v > hi) {
        km_complain("ignoring %s=%.40s (not a number from %lld to %lld)",
                    name, s, lo, hi);
        return dflt;
    }
    return v;
}

/* The limits, from the environment (once, at start-up). */
void km_paths_limits(void)
{
    km_st.max_nodes = (int32_t)env_limit("KM_PATHS_MAX", KM_NODES_DEFAULT,
                                         2, 1 << 24);
    km_st.max_recursion = (int32_t)env_limit("KM_PATHS_RECURSION",
                                             KM_RECURSION_DEFAULT, 1, 4096);
}

/* Thread t's node list with its root alone; -1 without memory. */
int km_paths_init(struct km_thread *t)
{
    if (!t->chunk) {
        int32_t max = km_st.max_nodes > 0 ? km_st.max_nodes : KM_NODES_DEFAULT;
        /* room past the limit for the regions' nodes under the
         * outermost ones (paths that fold) */
        t->maxnodes = max;
        size_t nchunks = ((size_t)max + (size_t)INT16_MAX) / KM_NODE_CHUNK + 2;
        t->chunk = km_mem_alloc(nchunks * sizeof *t->chunk);
        if (!t->chunk)
            return -1;
        memset(t->chunk, 0, nchunks * sizeof *t->chunk);
    }
    if (grow_chunks(t, 0))
        return -1;
    km_paths_reset(t);
    return 0;
}

/* Every node but a fresh root forgotten (calibration, tests). */
void km_paths_reset(struct km_thread *t)
{
    struct km_node *root = km_node_at(t, 0);
    init_node(root, 0, NULL, NULL);
    if (t->kids)
        memset(t->kids, 0, (size_t)t->kidcap * sizeof *t->kids);
    t->nnodes = 1;
    t->nsampled = 0;
    t->sampled_lost = 0;
    init_node(&t->force, -1, NULL, NULL);
    t->force.id = INT32_MIN + 1;
    t->cur = root;
    t->stk[0] = root;
    t->sp = 0;
    t->msp = 0;
    t->mtop = 0;
    if (t == &km_main_thread)
        km_main_tl_low = 0;
    t->mf[0] = (struct km_mframe){ .n = NULL };
}

/* A new node of region r under `parent` (`folded`: KM_FOLD_MAX or 0);
 * NULL without memory.  Its time (a chunk, a bigger table: system calls)
 * is libkm's own, out of the frame open around it. */
static struct km_node *new_node(struct km_thread *t, struct km_node *parent,
                                struct km_region *r, uint8_t folded)
{
    km_tick t1 = cold_now();
    struct km_node *n = NULL;
    int32_t i = t->nnodes;
    if (i < t->maxnodes + INT16_MAX && !grow_chunks(t, i) && !grow_kids(t)) {
        n = km_node_at(t, i);
        init_node(n, i, parent, r);
        n->folded = folded;
        *kid_slot(t->kids, t->kidcap, t, key_of(n)) = i + 1;
        __atomic_store_n(&t->nnodes, i + 1, __ATOMIC_RELEASE);
    }
    km_time took = KM_SUB(cold_now() - t1);
    t->ovh += took;
    t->acc += took;
    return n;
}

void km_paths_sampling(struct km_thread *t, const struct km_node *n)
{
    if (!n->callee)
        return;
    if (t->nsampled == t->sampledcap) {
        int32_t cap = t->sampledcap ? t->sampledcap * 2 : 256;
        int32_t *v = km_mem_alloc((size_t)cap * sizeof *v);
        if (!v) {
            t->sampled_lost = 1;
            return;
        }
        if (t->nsampled)
            memcpy(v, t->sampled, (size_t)t->nsampled * sizeof *v);
        signal_fence();
        /* (the old list is not freed: another thread's snapshot may be
         * reading it; the lists together take twice the last one) */
        t->sampled = v;
        t->sampledcap = cap;
    }
    t->sampled[t->nsampled] = n->index;
    __atomic_store_n(&t->nsampled, t->nsampled + 1, __ATOMIC_RELEASE);
}

/* The node a path folds into once r has max_recursion nodes above
 * `parent`: the nearest of them whose parent is of parent's region (the
 * same caller, so that the call counts on the right edge); NULL while
 * the path may grow, or while no node of r was entered from that region
 * on it (then a new one is: at most one per caller region past the
 * limit). */
static struct km_node *recursion_fold(struct km_node *parent,
                                      const struct km_region *r)
{
    struct km_node *nearest = NULL;
    int32_t same = 0;
    for (struct km_node *a = parent; a->parent; a = a->parent)
        if (a->id == r->id) {
            if (!nearest && a->parent->id == parent->id)
                nearest = a;
            same++;
        }
    return same >= km_st.max_recursion ? nearest : NULL;
}

/* n becomes the child parent's cache holds in its slot; the one it
 * held moves to the front of alt[]. */
static struct km_node *found(struct km_node *parent, struct km_node *n)
{
    struct km_node **slot = &parent->kid[(uint32_t)n->id % KM_NKID];
    if (*slot != &km_no_node && *slot != n) {
        for (int i = KM_NALT - 1; i > 0; i--)
            parent->alt[i] = parent->alt[i - 1];
        parent->alt[0] = *slot;
    }
    *slot = n;
    return n;
}

struct km_node *km_alt_child(struct km_node *parent, int32_t id)
{
    for (int i = 0; i < KM_NALT; i++) {
        struct km_node *n = parent->alt[i];
        if (n->id == id) {
            struct km_node **slot = &parent->kid[(uint32_t)id % KM_NKID];
            parent->alt[i] = *slot;
            *slot = n;
            return n;
        }
    }
    return NULL;
}

/* The node a new path of region r under `parent` goes on in once the
 * thread has its KM_PATHS_MAX nodes: r's folded node under the path's
 * outermost region (the main program on the program's thread), whose
 * time stays inside that region: under the root it would be out of
 * every region around it.  NULL while there is room, or where the path
 * is the outermost region or right under it. */
static struct km_node *limit_fold(struct km_thread *t, struct km_node *parent,
                                  struct km_region *r)
{
    if (t->nnodes < t->maxnodes || parent->index == 0 ||
        parent->parent->index == 0)
        return NULL;
    struct km_node *top = parent;
    while (top->parent->index != 0)
        top = top->parent;
    struct km_node *n = lookup(t, (struct kid_key){ top->index, r->id, 1 });
    return n ? n : new_node(t, top, r, KM_FOLD_MAX);
}

/* The child of `parent` for region r, created at its first entry (or the
 * node its path folds into); NULL without memory. */
struct km_node *km_child(struct km_thread *t, struct km_node *parent,
                         struct km_region *r)
{
    /* (an entry inside a measured CALL statement looks here for the
     * CALL's children: it missed only t->force's empty cache) */
    struct km_node *n = parent->kid[(uint32_t)r->id % KM_NKID];
    if (n->id == r->id || (n = km_alt_child(parent, r->id)) != NULL)
        return n;
    n = lookup(t, (struct kid_key){ parent->index, r->id, 0 });
    if (n)
        return found(parent, n);
    n = recursion_fold(parent, r);
    if (n) {
        n->folded |= KM_FOLD_RECURSION;
        return found(parent, n);
    }
    n = limit_fold(t, parent, r);
    if (n)
        return found(parent, n);
    n = new_node(t, parent, r, 0);
    return n ? found(parent, n) : NULL;
}
