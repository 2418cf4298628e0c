/*
 * profile.c - the per-method profile (report, dot, and later the HTML report
 * and the diff): calls, inclusive and exclusive times and the caller/callee
 * edges of every method, from a finished call tree (tc_profile.h explains
 * each figure; doc/diff-and-reports.md, "Profile accounting" says it for users).
 *
 * One depth-first walk per thread tree, without recursion (stacks can be
 * 10000 deep). The walk keeps, for each row (method) and each edge, how many
 * times it is on the current path: a node whose method is already on the
 * path is a nested activation, an edge already on the path a nested call
 * along that edge. So every node is classified in O(1) (two hash lookups),
 * and the time is linear in the tree's nodes: memory and time grow with
 * distinct call paths, methods and edges, never with events.
 *
 * A row is a method as the outputs name it (its full name): the ids under
 * which ART may list one method share a row, so their figures add up (as
 * folded stacks and the diff merge them) and a call from one id to another
 * is a nested activation of the method.
 *
 * Sums saturate at TCI_SUM_MAX and are counted (p->saturated): the tree keeps
 * each thread's times within it, but the sum over many threads, or an edge's
 * `all` sum that counts each recursion level again, can go beyond.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_profile.h"
#include "tc_trace.h"

#include <stdlib.h>

/* One open node of the walk. */
typedef struct pframe {
    uint32_t node, row, edge;
    bool outer; /* the node is an outermost activation of its method */
} pframe;

typedef struct builder {
    tci_profile *p;
    const tci_calltree *ct;
    uint32_t *row_depth;  /* per row: its activations on the current path */
    uint32_t cap_row_depth;
    uint32_t *edge_depth; /* per edge: its calls on the current path */
    uint32_t cap_edge_depth;
    uint32_t cap_methods, cap_edges;
    tci_idmap edge_of;    /* (caller row + 1) << 32 | callee row -> edge */
    tci_idmap row_named;  /* hash of a full name -> the row of that name (row_for) */
    pframe *stack;
    uint32_t cap_stack;
} builder;

/* ---- saturating sums ---------------------------------------------------------- */

static int64_t add_time(tci_profile *p, int64_t a, int64_t b)
{
    int64_t r;
    if (TCI_LIKELY(!__builtin_add_overflow(a, b, &r) && r <= TCI_SUM_MAX && r >= -TCI_SUM_MAX))
        return r;
    p->saturated++;
    return b > 0 ? TCI_SUM_MAX : -TCI_SUM_MAX;
}

static uint64_t add_calls(tci_profile *p, uint64_t a, uint64_t b)
{
    if (TCI_LIKELY(a + b >= a))
        return a + b;
    p->saturated++;
    return UINT64_MAX;
}

static void add_cost(tci_profile *p, tci_pcost *c, const tci_ctnode *n)
{
    c->calls = add_calls(p, c->calls, n->calls);
    c->wall = add_time(p, c->wall, n->wall_total);
    c->cpu = add_time(p, c->cpu, n->cpu_total);
}

/* ---- rows and edges ------------------------------------------------------------- */

uint32_t tci_profile_row(const tci_profile *p, uint32_t method)
{
    return tci_idmap_get(&p->row_of, method);
}

static uint64_t name_hash(const char *s, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* The row already made for a method of the same full name ("pkg.Class.method: (I)V": ART
 * may list one method under several ids, and a row is a method as every output names it),
 * or TCI_NONE with *slot the hash a new row goes under. Unknown ids have names of their own. */
static uint32_t row_of_name(const builder *b, const char *name, uint64_t *slot)
{
    const tci_trace *t = b->p->trace;
    for (uint64_t seed = 0;; seed++) { /* a collision of two texts: try the next hash */
        uint64_t h = name_hash(name, seed);
        uint32_t r = tci_idmap_get(&b->row_named, h);
        if (r == TCI_NONE || !strcmp(t->methods[b->p->methods[r].method].full_name, name)) {
            *slot = h;
            return r;
        }
    }
}

/* Rows are looked up by method index (every node), and by name only for an index met first. */
static uint32_t row_for(builder *b, uint32_t method)
{
    tci_profile *p = b->p;
    uint32_t r = tci_idmap_get(&p->row_of, method);
    if (r != TCI_NONE)
        return r;
    uint64_t slot = 0;
    const char *name = p->trace->methods[method].full_name; /* NULL: tables not finalized (unit tests) */
    r = name ? row_of_name(b, name, &slot) : TCI_NONE;
    if (r != TCI_NONE)
        return tci_idmap_put(&p->row_of, method, r) != 0 ? TCI_NONE : r;
    r = p->n_methods;
    if (tci_grow((void **)&p->methods, &b->cap_methods, r, sizeof *p->methods) != 0 ||
        tci_grow((void **)&b->row_depth, &b->cap_row_depth, r, sizeof *b->row_depth) != 0 ||
        tci_idmap_put(&p->row_of, method, r) != 0 || (name && tci_idmap_put(&b->row_named, slot, r) != 0))
        return TCI_NONE;
    memset(&p->methods[r], 0, sizeof p->methods[r]);
    p->methods[r].method = method;
    b->row_depth[r] = 0;
    p->n_methods++;
    return r;
}

static uint32_t edge_for(builder *b, uint32_t caller, uint32_t callee)
{
    tci_profile *p = b->p;
    uint64_t key = (uint64_t)(caller + 1u) << 32 | callee; /* TCI_NONE + 1 wraps to 0: (toplevel) */
    uint32_t e = tci_idmap_get(&b->edge_of, key);
    if (e != TCI_NONE)
        return e;
    e = p->n_edges;
    if (tci_grow((void **)&p->edges, &b->cap_edges, e, sizeof *p->edges) != 0 ||
        tci_grow((void **)&b->edge_depth, &b->cap_edge_depth, e, sizeof *b->edge_depth) != 0 ||
        tci_idmap_put(&b->edge_of, key, e) != 0)
        return TCI_NONE;
    memset(&p->edges[e], 0, sizeof p->edges[e]);
    p->edges[e].caller = caller;
    p->edges[e].callee = callee;
    b->edge_depth[e] = 0;
    p->n_edges++;
    return e;
}

/* ---- the walk ------------------------------------------------------------------- */

/* Node `node` under `parent` (NULL: under the thread root): its figures go
 * to its method's row and to the edge from the parent, then it is on the path. */
static int enter_node(builder *b, uint32_t node, const pframe *parent, uint32_t depth)
{
    tci_profile *p = b->p;
    const tci_ctnode *n = &b->ct->nodes[node];
    uint32_t caller = parent ? parent->row : TCI_NONE;
    bool caller_outer = !parent || parent->outer; /* read now: the stack may move below */
    uint32_t row = row_for(b, n->method);
    uint32_t e = row == TCI_NONE ? TCI_NONE : edge_for(b, caller, row);
    if (e == TCI_NONE || tci_grow((void **)&b->stack, &b->cap_stack, depth, sizeof *b->stack) != 0)
        return TC_ERR_NOMEM;
    bool outer = b->row_depth[row] == 0;
    tci_pmethod *m = &p->methods[row];
    if (outer) {
        m->calls = add_calls(p, m->calls, n->calls);
        m->incl_wall = add_time(p, m->incl_wall, n->wall_total);
        m->incl_cpu = add_time(p, m->incl_cpu, n->cpu_total);
        m->outer_excl_wall = add_time(p, m->outer_excl_wall, n->wall_self);
        m->outer_excl_cpu = add_time(p, m->outer_excl_cpu, n->cpu_self);
    } else {
        m->recursive_calls = add_calls(p, m->recursive_calls, n->calls);
    }
    m->excl_wall = add_time(p, m->excl_wall, n->wall_self);
    m->excl_cpu = add_time(p, m->excl_cpu, n->cpu_self);
    tci_pedge *ed = &p->edges[e];
    add_cost(p, &ed->all, n);
    if (caller_outer)
        add_cost(p, &ed->caller_outer, n);
    if (outer)
        add_cost(p, &ed->callee_outer, n);
    if (b->edge_depth[e] == 0)
        add_cost(p, &ed->once, n);
    p->calls = add_calls(p, p->calls, n->calls);
    b->row_depth[row]++;
    b->edge_depth[e]++;
    b->stack[depth] = (pframe){node, row, e, outer};
    return TC_OK;
}

static void leave_node(builder *b, const pframe *f)
{
    b->row_depth[f->row]--;
    b->edge_depth[f->edge]--;
}

/* The walk over one thread's tree (tci_calltree_walk): the path of frames in b->stack. */
static int profile_enter(void *user, uint32_t node, uint32_t depth)
{
    builder *b = user;
    return enter_node(b, node, depth ? &b->stack[depth - 1] : NULL, depth);
}

static void profile_leave(void *user, uint32_t node, uint32_t depth)
{
    (void)node;
    builder *b = user;
    leave_node(b, &b->stack[depth]);
}

/* Every node under one thread's root, parents before children. */
static int walk_thread(builder *b, uint32_t root)
{
    return tci_calltree_walk(b->ct, root, &(tci_ctvisit){profile_enter, profile_leave, b});
}

/* The thread's share of the totals: its span (first to last call event),
 * never less than its time in methods (sampled weights may reach past the
 * last sample's time), and that time in methods. A count tree's span is its
 * samples' counts: its time is no part of them. */
static void add_thread_totals(tci_profile *p, const tci_calltree *ct, uint32_t t)
{
    const tci_ctspan *sp = &ct->spans[t];
    const tci_ctnode *root = &ct->nodes[ct->roots[t]];
    int64_t wall = 0, cpu = 0;
    if (!ct->count && sp->first_ts != TCI_NO_TIME && __builtin_sub_overflow(sp->last_ts, sp->first_ts, &wall))
        wall = TCI_SUM_MAX;
    if (!ct->count && sp->first_cpu != TCI_NO_TIME && __builtin_sub_overflow(sp->last_cpu, sp->first_cpu, &cpu))
        cpu = TCI_SUM_MAX;
    wall = wall > TCI_SUM_MAX ? TCI_SUM_MAX : wall < root->wall_total ? root->wall_total : wall;
    cpu = cpu > TCI_SUM_MAX ? TCI_SUM_MAX : cpu < root->cpu_total ? root->cpu_total : cpu;
    p->span_wall = add_time(p, p->span_wall, wall);
    p->span_cpu = add_time(p, p->span_cpu, cpu);
    p->busy_wall = add_time(p, p->busy_wall, root->wall_total);
    p->busy_cpu = add_time(p, p->busy_cpu, root->cpu_total);
    p->n_threads++;
}

/* parent_edges and child_edges: each edge index listed under its callee and its caller. */
static int group_edges(tci_profile *p)
{
    uint32_t n = p->n_edges;
    p->parent_edges = tci_malloc((n ? n : 1) * sizeof *p->parent_edges);
    p->child_edges = tci_malloc((n ? n : 1) * sizeof *p->child_edges);
    if (!p->parent_edges || !p->child_edges)
        return TC_ERR_NOMEM;
    for (uint32_t e = 0; e < n; e++) {
        const tci_pedge *ed = &p->edges[e];
        p->methods[ed->callee].n_parents++;
        if (ed->caller == TCI_NONE)
            p->n_top_children++;
        else
            p->methods[ed->caller].n_children++;
    }
    uint32_t at_p = 0, at_c = p->n_top_children;
    p->top_children_at = 0;
    for (uint32_t r = 0; r < p->n_methods; r++) {
        tci_pmethod *m = &p->methods[r];
        m->parents_at = at_p;
        m->children_at = at_c;
        at_p += m->n_parents;
        at_c += m->n_children;
        m->n_parents = m->n_children = 0; /* counted again while filling */
    }
    uint32_t n_top = 0;
    for (uint32_t e = 0; e < n; e++) {
        const tci_pedge *ed = &p->edges[e];
        tci_pmethod *callee = &p->methods[ed->callee];
        p->parent_edges[callee->parents_at + callee->n_parents++] = e;
        if (ed->caller == TCI_NONE) {
            p->child_edges[n_top++] = e;
        } else {
            tci_pmethod *caller = &p->methods[ed->caller];
            p->child_edges[caller->children_at + caller->n_children++] = e;
        }
    }
    return TC_OK;
}

int tci_profile_build(tci_profile *p, const tci_calltree *ct, uint32_t thread)
{
    memset(p, 0, sizeof *p);
    p->trace = ct->trace;
    p->thread = thread;
    builder b = {.p = p, .ct = ct};
    int rc = TC_OK;
    uint32_t from = thread == TCI_NONE ? 0 : thread, to = thread == TCI_NONE ? ct->n_roots : thread + 1;
    for (uint32_t t = from; t < to && t < ct->n_roots && rc == TC_OK; t++) {
        if (ct->spans[t].first_ts == TCI_NO_TIME)
            continue; /* no call event: not in the profile */
        rc = walk_thread(&b, ct->roots[t]);
        if (rc == TC_OK)
            add_thread_totals(p, ct, t);
    }
    if (rc == TC_OK)
        rc = group_edges(p);
    free(b.row_depth);
    free(b.edge_depth);
    free(b.stack);
    tci_idmap_free(&b.edge_of);
    tci_idmap_free(&b.row_named);
    return rc;
}

void tci_profile_free(tci_profile *p)
{
    free(p->methods);
    free(p->edges);
    free(p->parent_edges);
    free(p->child_edges);
    tci_idmap_free(&p->row_of);
    memset(p, 0, sizeof *p);
}

/* ---- a total order ------------------------------------------------------------------ */

static int cmp_text(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

static int cmp_items(const void *va, const void *vb)
{
    const tci_psort_item *a = va, *b = vb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    if (a->row != b->row && (a->row == TCI_NONE || b->row == TCI_NONE))
        return a->row == TCI_NONE ? -1 : 1; /* (toplevel) first */
    if (a->row == TCI_NONE || a->m == b->m)
        return a->tag < b->tag ? -1 : a->tag > b->tag;
    int c = cmp_text(a->m->cls, b->m->cls);
    if (!c)
        c = cmp_text(a->m->name, b->m->name);
    if (!c)
        c = cmp_text(a->m->sig, b->m->sig);
    if (c)
        return c;
    /* the same texts under two ids: the method index (its place in the table) decides */
    return a->m < b->m ? -1 : 1;
}

void tci_profile_sort(const tci_profile *p, tci_psort_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        items[i].m = items[i].row == TCI_NONE ? NULL : &p->trace->methods[p->methods[items[i].row].method];
    /* an empty selection sorts nothing, and its list may be NULL: qsort's base must not be
     * (C11 7.1.4; UBSan's nonnull-attribute check found it, fuzz replay of a window past the end) */
    if (n > 1)
        qsort(items, n, sizeof *items, cmp_items);
}

/* ---- what an aggregating writer weighs ------------------------------------------ */

tci_weighs tci_weighs_of(const tci_trace *t)
{
    const char *count = tci_trace_count_name(t);
    return (tci_weighs){count, count || t->has_wall, !count && t->has_cpu};
}

int tci_weight_check(tci_diag *d, const tci_trace *t, bool weight_cpu, const char *module)
{
    if (!weight_cpu)
        return TC_OK;
    const char *count = tci_trace_count_name(t);
    if (count)
        return tci_error(d, TC_ERR_UNSUPPORTED, module, UINT64_MAX,
                         "the sampled stacks weigh %s counts, not thread-CPU time; use --weight wall (the counts)",
                         count);
    if (!t->has_cpu)
        return tci_error(d, TC_ERR_UNSUPPORTED, module, UINT64_MAX,
                         "the input has no thread-CPU clock (clock=%s); use --weight wall", tci_clock_name(t->clock));
    return TC_OK;
}
