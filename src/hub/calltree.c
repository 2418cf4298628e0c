/* calltree.c - the call tree shared by every aggregating writer (folded,
 * pprof, ...): one node per distinct (thread, call path), with inclusive and
 * exclusive wall and CPU time and a call count. Built from the normalized
 * stream, so it grows with distinct call paths, never with events. A trace
 * whose sampled stacks weigh counts makes a count tree (tc_calltree.h: the
 * samples' counts only, its slices weigh nothing). */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_cancel.h"
#include "tc_diag.h"
#include "tc_trace.h"

#include <stdlib.h>

typedef struct tci_ctframe {
    uint32_t node;
    int64_t ts, cpu;
} tci_ctframe;

struct tci_ctstack {
    tci_ctframe *frames;
    uint32_t depth, cap;
};

/* ---- checked sums ----------------------------------------------------------- */

/* a + b within [-TCI_SUM_MAX, TCI_SUM_MAX]: saturates (and counts it) instead of overflowing. */
static inline int64_t sum(tci_calltree *ct, int64_t a, int64_t b)
{
    int64_t r;
    if (TCI_LIKELY(!__builtin_add_overflow(a, b, &r) && r <= TCI_SUM_MAX && r >= -TCI_SUM_MAX))
        return r;
    ct->saturated++;
    return b > 0 ? TCI_SUM_MAX : -TCI_SUM_MAX;
}

/* The length of [from, to] in ns, within [0, TCI_SUM_MAX] (times may span the whole int64 range). */
static inline int64_t span(tci_calltree *ct, int64_t from, int64_t to)
{
    int64_t d;
    if (TCI_UNLIKELY(__builtin_sub_overflow(to, from, &d) || d > TCI_SUM_MAX)) {
        ct->saturated++;
        return TCI_SUM_MAX;
    }
    return d > 0 ? d : 0;
}

/* total + span(from, to), as sum() of span() gives it: one range test for the common case
 * (a frame's length within [0, TCI_SUM_MAX] added to a total that stays in range; a total
 * is in [-TCI_SUM_MAX, TCI_SUM_MAX], so the addition cannot overflow). */
static inline int64_t add_span(tci_calltree *ct, int64_t total, int64_t from, int64_t to)
{
    int64_t d;
    if (TCI_LIKELY(!__builtin_sub_overflow(to, from, &d) && (uint64_t)d <= TCI_SUM_MAX && total + d <= TCI_SUM_MAX))
        return total + d;
    return sum(ct, total, span(ct, from, to));
}

static uint32_t new_node(tci_calltree *ct, uint32_t parent, uint32_t method, uint32_t thread)
{
    if (tci_grow((void **)&ct->nodes, &ct->cap_nodes, ct->n_nodes, sizeof *ct->nodes) != 0)
        return TCI_NONE;
    uint32_t i = ct->n_nodes++;
    tci_ctnode *n = &ct->nodes[i];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->method = method;
    n->thread = thread;
    n->first_child = n->next_sibling = n->last_child = TCI_NONE;
    if (parent != TCI_NONE) {
        n->next_sibling = ct->nodes[parent].first_child;
        ct->nodes[parent].first_child = i;
    }
    return i;
}

const char *tci_trace_count_name(const tci_trace *t)
{
    const char *unit = t->n_meta ? tci_trace_meta(t, "sample-unit") : NULL;
    if (!unit || strcmp(unit, "count"))
        return NULL;
    const char *type = tci_trace_meta(t, "sample-type");
    return type && type[0] ? type : "samples";
}

int tci_calltree_init(tci_calltree *ct, const tci_trace *t, uint32_t n_threads)
{
    memset(ct, 0, sizeof *ct);
    ct->trace = t;
    ct->count = tci_trace_count_name(t);
    ct->roots = tci_calloc(n_threads, sizeof *ct->roots);
    ct->stacks = tci_calloc(n_threads, sizeof *ct->stacks);
    ct->spans = tci_calloc(n_threads, sizeof *ct->spans);
    if (!ct->roots || !ct->stacks || !ct->spans)
        return TC_ERR_NOMEM;
    ct->n_roots = n_threads;
    for (uint32_t t = 0; t < n_threads; t++) {
        ct->spans[t] = (tci_ctspan){TCI_NO_TIME, TCI_NO_TIME, TCI_NO_TIME, TCI_NO_TIME};
        if ((ct->roots[t] = new_node(ct, TCI_NONE, TCI_NONE, t)) == TCI_NONE)
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

static uint32_t child(tci_calltree *ct, uint32_t parent, uint32_t method, uint32_t thread)
{
    uint32_t last = ct->nodes[parent].last_child;
    if (last != TCI_NONE && ct->nodes[last].method == method)
        return last;
    uint64_t key = (uint64_t)parent << 32 | method;
    uint32_t c = tci_idmap_get(&ct->child_index, key);
    if (c == TCI_NONE) {
        c = new_node(ct, parent, method, thread);
        if (c == TCI_NONE || tci_idmap_put(&ct->child_index, key, c) != 0)
            return TCI_NONE;
    }
    ct->nodes[parent].last_child = c;
    return c;
}

/* Every sampled stack's depth and the stack a sample of it is cut to (itself, or its
 * ancestor TCI_SAMPLE_MAX_FRAMES deep): one forward sweep, for a stack's parent was interned
 * before it (tci_trace_stack), so each sample walks at most TCI_SAMPLE_MAX_FRAMES frames. */
static int stack_cuts(tci_calltree *ct, const tci_trace *t)
{
    uint32_t n = t->n_stacks ? t->n_stacks : 1;
    ct->stack_depth = tci_malloc(n * sizeof *ct->stack_depth);
    ct->stack_cut = tci_malloc(n * sizeof *ct->stack_cut);
    if (!ct->stack_depth || !ct->stack_cut)
        return TC_ERR_NOMEM;
    for (uint32_t s = 0; s < t->n_stacks; s++) {
        uint32_t p = t->stacks[s].parent;
        bool above = p < s; /* always, for the tables' stacks; a stack read as an outermost one else */
        ct->stack_depth[s] = above ? ct->stack_depth[p] + (ct->stack_depth[p] < UINT32_MAX) : 1;
        ct->stack_cut[s] = ct->stack_depth[s] <= TCI_SAMPLE_MAX_FRAMES ? s : ct->stack_cut[p];
    }
    return TC_OK;
}

/* A sampled stack adds its weight to the node of its path (under the calls
 * the thread has open, so samples and traced calls of one thread merge). A
 * stack deeper than TCI_SAMPLE_MAX_FRAMES keeps its outermost frames. */
static int add_sample(tci_calltree *ct, const tci_trace *t, const tci_event *ev)
{
    uint32_t frames[TCI_SAMPLE_MAX_FRAMES], n = 0, s = (uint32_t)ev->id;
    if (TCI_UNLIKELY(!ct->stack_cut) && stack_cuts(ct, t) != TC_OK)
        return TC_ERR_NOMEM;
    if (TCI_UNLIKELY(s != TCI_NONE && ct->stack_cut[s] != s)) {
        ct->cut_samples++;
        ct->cut_frames += ct->stack_depth[s] - TCI_SAMPLE_MAX_FRAMES;
        s = ct->stack_cut[s];
    }
    for (; s != TCI_NONE && n < TCI_SAMPLE_MAX_FRAMES; s = t->stacks[s].parent)
        frames[n++] = t->stacks[s].method;
    struct tci_ctstack *st = &ct->stacks[ev->thread];
    uint32_t node = st->depth ? st->frames[st->depth - 1].node : ct->roots[ev->thread];
    while (n)
        if ((node = child(ct, node, frames[--n], ev->thread)) == TCI_NONE)
            return TC_ERR_NOMEM;
    int64_t w = ev->value > 0 && ev->value < 9.0e18 ? (int64_t)ev->value : 0;
    if (w > TCI_SUM_MAX) {
        ct->saturated++;
        w = TCI_SUM_MAX;
    }
    ct->nodes[node].calls++;
    ct->nodes[node].sampled = sum(ct, ct->nodes[node].sampled, w);
    return TC_OK;
}

/* A thread's span: from its first call event to its last. Normalized streams
 * are well nested (every frame is closed by the end), so those are an enter
 * or an exit at depth 0, or a sample: times are noted there only, not on
 * every event. Each thread's events come in its own time order. */
static inline void span_from(tci_ctspan *sp, const tci_event *ev)
{
    if (TCI_UNLIKELY(sp->first_ts == TCI_NO_TIME))
        sp->first_ts = ev->ts_ns;
    if (TCI_UNLIKELY(sp->first_cpu == TCI_NO_TIME))
        sp->first_cpu = ev->cpu_ns;
}

static inline void span_to(tci_ctspan *sp, const tci_event *ev)
{
    sp->last_ts = ev->ts_ns;
    if (ev->cpu_ns != TCI_NO_TIME)
        sp->last_cpu = ev->cpu_ns;
}

int tci_calltree_event(tci_calltree *ct, const tci_event *ev)
{
    if (ev->kind == TCI_EV_SAMPLE) {
        span_from(&ct->spans[ev->thread], ev);
        span_to(&ct->spans[ev->thread], ev);
        return add_sample(ct, ct->trace, ev);
    }
    if (ev->kind != TCI_EV_ENTER && ev->kind != TCI_EV_EXIT)
        return TC_OK; /* instants, counters and async slices are not calls */
    struct tci_ctstack *st = &ct->stacks[ev->thread];
    if (ev->kind == TCI_EV_ENTER) {
        uint32_t parent;
        if (st->depth) {
            parent = st->frames[st->depth - 1].node;
        } else {
            parent = ct->roots[ev->thread];
            span_from(&ct->spans[ev->thread], ev);
        }
        uint32_t node = child(ct, parent, ev->method, ev->thread);
        if (node == TCI_NONE || (TCI_UNLIKELY(st->depth >= st->cap) &&
                                 tci_grow((void **)&st->frames, &st->cap, st->depth, sizeof *st->frames) != 0))
            return TC_ERR_NOMEM;
        st->frames[st->depth++] = (tci_ctframe){node, ev->ts_ns, ev->cpu_ns};
        ct->nodes[node].calls++;
        ct->unweighed += ct->count != NULL; /* a count tree: the slice is a frame, not a weight */
        return TC_OK;
    }
    if (!st->depth) /* normalize never does this; tolerate it anyway */
        return TC_OK;
    tci_ctframe f = st->frames[--st->depth];
    tci_ctnode *n = &ct->nodes[f.node];
    if (TCI_UNLIKELY(ct->count)) { /* counts and time do not add up: only the samples weigh */
        if (!st->depth)
            span_to(&ct->spans[ev->thread], ev);
        return TC_OK;
    }
    n->wall_total = add_span(ct, n->wall_total, f.ts, ev->ts_ns);
    if (ev->cpu_ns != TCI_NO_TIME && f.cpu != TCI_NO_TIME)
        n->cpu_total = add_span(ct, n->cpu_total, f.cpu, ev->cpu_ns);
    if (!st->depth)
        span_to(&ct->spans[ev->thread], ev);
    return TC_OK;
}

static void reverse_children(tci_calltree *ct, uint32_t i)
{
    uint32_t prev = TCI_NONE, c = ct->nodes[i].first_child;
    while (c != TCI_NONE) {
        uint32_t next = ct->nodes[c].next_sibling;
        ct->nodes[c].next_sibling = prev;
        prev = c;
        c = next;
    }
    ct->nodes[i].first_child = prev;
}

/* Every node's self time set to its total: where both sweeps below start. */
static void self_from_totals(tci_calltree *ct)
{
    for (uint32_t i = 0; i < ct->n_nodes; i++) {
        ct->nodes[i].wall_self = ct->nodes[i].wall_total;
        ct->nodes[i].cpu_self = ct->nodes[i].cpu_total;
    }
}

/* After a saturation, children may add up to more than their parent: trim
 * them, in order, to what the parent has left (parents come before their
 * children, so one forward sweep settles each level before the next). */
static void trim_to_parents(tci_calltree *ct)
{
    self_from_totals(ct); /* a node's self is its budget left for children */
    for (uint32_t i = 0; i < ct->n_nodes; i++) {
        tci_ctnode *n = &ct->nodes[i];
        if (n->parent == TCI_NONE)
            continue;
        tci_ctnode *p = &ct->nodes[n->parent];
        if (n->wall_total > p->wall_self)
            n->wall_total = n->wall_self = p->wall_self;
        if (n->cpu_total > p->cpu_self)
            n->cpu_total = n->cpu_self = p->cpu_self;
        p->wall_self -= n->wall_total;
        p->cpu_self -= n->cpu_total;
    }
}

/* Self time: the total less the children's totals. Negative only where the
 * children have CPU times and the parent has none (some inputs carry thread
 * CPU time on some events only); a sum out of range counts as saturated. */
static void self_times(tci_calltree *ct)
{
    self_from_totals(ct);
    for (uint32_t i = 0; i < ct->n_nodes; i++) {
        tci_ctnode *n = &ct->nodes[i];
        if (n->parent == TCI_NONE)
            continue;
        tci_ctnode *p = &ct->nodes[n->parent];
        p->wall_self = sum(ct, p->wall_self, -n->wall_total);
        p->cpu_self = sum(ct, p->cpu_self, -n->cpu_total);
    }
}

/* What the tree left out, said once for every aggregating writer (their figures take the
 * tree's): sampled frames past the depth limit, and a count tree's slices. */
static void finish_notes(tci_calltree *ct)
{
    if (ct->cut_samples) {
        tci_warn(ct->diag, TCI_FIG_DEPTH_LIMIT, "calltree", UINT64_MAX,
                 "%llu sampled stacks deeper than %u frames: their %llu deeper frames were dropped, each "
                 "sample's weight kept on its deepest frame left", (unsigned long long)ct->cut_samples,
                 TCI_SAMPLE_MAX_FRAMES, (unsigned long long)ct->cut_frames);
        tci_count(ct->diag, TCI_FIG_DEPTH_LIMIT, ct->cut_samples - 1);
    }
    if (ct->count && ct->unweighed) {
        tci_warn(ct->diag, TCI_FIG_SLICES_NOT_WEIGHED, "calltree", UINT64_MAX,
                 "%llu slices weigh nothing in the aggregates: the sampled stacks weigh %s counts, which do not "
                 "add up with time; the slices' time is on the timelines (json, perfetto, systrace, speedscope)",
                 (unsigned long long)ct->unweighed, ct->count);
        tci_count(ct->diag, TCI_FIG_SLICES_NOT_WEIGHED, ct->unweighed - 1);
    }
}

void tci_calltree_finish(tci_calltree *ct)
{
    /* The tree is complete: its child index (about a third of its memory) is not
     * needed by any writer, and the writers' own structures are built next. */
    tci_idmap_free(&ct->child_index);
    /* sampled weight counts for its node and every node above it; children come
     * after their parents, so one backward sweep sums each path */
    int64_t *below = tci_calloc(ct->n_nodes, sizeof *below);
    if (below) {
        for (uint32_t i = ct->n_nodes; i-- > 0;) {
            below[i] = sum(ct, below[i], ct->nodes[i].sampled);
            ct->nodes[i].wall_total = sum(ct, ct->nodes[i].wall_total, below[i]);
            uint32_t p = ct->nodes[i].parent;
            if (p != TCI_NONE && ct->nodes[p].parent != TCI_NONE) /* roots are summed from their children below */
                below[p] = sum(ct, below[p], below[i]);
        }
        free(below);
    }
    /* children are created after their parent, so one backward sweep sums them */
    for (uint32_t i = ct->n_nodes; i-- > 0;) {
        tci_ctnode *n = &ct->nodes[i];
        if (n->parent == TCI_NONE)
            continue;
        tci_ctnode *p = &ct->nodes[n->parent];
        if (p->parent == TCI_NONE) { /* a root's time is the sum of its top-level frames */
            p->wall_total = sum(ct, p->wall_total, n->wall_total);
            p->cpu_total = sum(ct, p->cpu_total, n->cpu_total);
        }
    }
    if (!ct->saturated)
        self_times(ct);
    if (TCI_UNLIKELY(ct->saturated)) {
        trim_to_parents(ct);
        if (ct->diag)
            tci_warn(ct->diag, TCI_FIG_SATURATED, "calltree", UINT64_MAX,
                     "%llu sums of times went beyond %lld ns and were capped there; the times of those "
                     "frames are lower bounds", (unsigned long long)ct->saturated, (long long)TCI_SUM_MAX);
    }
    for (uint32_t i = 0; i < ct->n_nodes; i++)
        reverse_children(ct, i); /* siblings in order of first call */
    free(ct->stack_depth);
    free(ct->stack_cut);
    ct->stack_depth = ct->stack_cut = NULL;
    if (ct->diag)
        finish_notes(ct);
}

void tci_calltree_free(tci_calltree *ct)
{
    free(ct->stack_depth);
    free(ct->stack_cut);
    for (uint32_t t = 0; t < ct->n_roots; t++)
        free(ct->stacks ? ct->stacks[t].frames : NULL);
    free(ct->stacks);
    free(ct->spans);
    free(ct->roots);
    free(ct->nodes);
    tci_idmap_free(&ct->child_index);
    memset(ct, 0, sizeof *ct);
}

/* A tree made from a finished one (threads merged, bottom-up) is finished alike: sums that
 * saturated trimmed and reported (what: whose sums), children in order of first call (new_node
 * links them in reverse), the child index dropped as after tci_calltree_finish. */
static int finish_derived(tci_calltree *out, int rc, const char *what)
{
    if (rc == TC_OK && TCI_UNLIKELY(out->saturated)) {
        trim_to_parents(out);
        if (out->diag)
            tci_warn(out->diag, TCI_FIG_SATURATED, "calltree", UINT64_MAX,
                     "%llu sums of times of %s went beyond %lld ns and were capped there",
                     (unsigned long long)out->saturated, what, (long long)TCI_SUM_MAX);
    }
    for (uint32_t i = 0; i < out->n_nodes; i++)
        reverse_children(out, i);
    tci_idmap_free(&out->child_index);
    return rc;
}

int tci_calltree_merge_threads(const tci_calltree *in, tci_calltree *out)
{
    if (tci_calltree_init(out, in->trace, 1) != TC_OK)
        return TC_ERR_NOMEM;
    out->diag = in->diag;
    out->cancel = in->cancel;
    uint32_t *map = tci_calloc(in->n_nodes, sizeof *map);
    if (!map)
        return TC_ERR_NOMEM;
    int rc = TC_OK;
    for (uint32_t i = 0; i < in->n_nodes && rc == TC_OK; i++) { /* parents come before children */
        const tci_ctnode *n = &in->nodes[i];
        if (TCI_UNLIKELY(tci_cancel_step(in->cancel, TCI_CANCEL_NODE))) {
            rc = TC_ERR_CANCELED;
            break;
        }
        uint32_t m = n->parent == TCI_NONE ? out->roots[0] : child(out, map[n->parent], n->method, 0);
        if (m == TCI_NONE) {
            rc = TC_ERR_NOMEM;
            break;
        }
        map[i] = m;
        tci_ctnode *o = &out->nodes[m];
        o->calls = o->calls + n->calls >= o->calls ? o->calls + n->calls : UINT64_MAX;
        o->sampled = sum(out, o->sampled, n->sampled);
        o->wall_total = sum(out, o->wall_total, n->wall_total);
        o->cpu_total = sum(out, o->cpu_total, n->cpu_total);
        o->wall_self = sum(out, o->wall_self, n->wall_self);
        o->cpu_self = sum(out, o->cpu_self, n->cpu_self);
    }
    free(map);
    return finish_derived(out, rc, "the merged threads");
}

/* ---- bottom-up ---------------------------------------------------------------- */

/* in's node i's path read backwards into out, under its thread's root: the node's method
 * first, then its callers up to the thread's top level, each adding the node's calls and
 * the weights wall and cpu to its totals; where the chain ends, the weights are its self
 * time. The bottom-up tree weighs each node by its self times, the callers tree by its
 * totals. */
static int add_path_backwards(const tci_calltree *in, const uint32_t *canon, uint32_t i, int64_t wall, int64_t cpu,
                              tci_calltree *out)
{
    const tci_ctnode *n = &in->nodes[i];
    uint32_t thread = n->thread, o = out->roots[thread];
    tci_ctnode *r = &out->nodes[o];
    r->wall_total = sum(out, r->wall_total, wall);
    r->cpu_total = sum(out, r->cpu_total, cpu);
    for (uint32_t q = i; in->nodes[q].parent != TCI_NONE; q = in->nodes[q].parent) {
        uint32_t m = in->nodes[q].method;
        if ((o = child(out, o, canon ? canon[m] : m, thread)) == TCI_NONE)
            return TC_ERR_NOMEM;
        tci_ctnode *on = &out->nodes[o];
        on->calls = on->calls + n->calls >= on->calls ? on->calls + n->calls : UINT64_MAX;
        on->wall_total = sum(out, on->wall_total, wall);
        on->cpu_total = sum(out, on->cpu_total, cpu);
    }
    out->nodes[o].wall_self = sum(out, out->nodes[o].wall_self, wall);
    out->nodes[o].cpu_self = sum(out, out->nodes[o].cpu_self, cpu);
    return TC_OK;
}

/* The bottom-up tree holds at most the sum of in's depths, which deep stacks of distinct
 * methods make quadratic (10000 nested methods: 50 million nodes, 4 GB). Real trees stay
 * within a few times their own size (the bench trace's: 5x); past 32x and 1M nodes the
 * conversion stops with a clear error instead of growing without bound. */
static uint64_t reverse_limit(const tci_calltree *in) { return 32 * (uint64_t)in->n_nodes + (1u << 20); }

static int reverse_too_large(tci_calltree *out, uint64_t limit)
{
    if (!out->diag)
        return TC_ERR_LIMIT;
    return tci_error(out->diag, TC_ERR_LIMIT, "calltree", UINT64_MAX,
                     "the bottom-up tree would hold more than %llu call paths (stacks this deep and this "
                     "varied); --max-depth N cuts them", (unsigned long long)limit);
}

int tci_calltree_reverse(const tci_calltree *in, const uint32_t *canon, tci_calltree *out)
{
    if (tci_calltree_init(out, in->trace, in->n_roots) != TC_OK)
        return TC_ERR_NOMEM;
    out->diag = in->diag;
    out->cancel = in->cancel;
    memcpy(out->spans, in->spans, in->n_roots * sizeof *in->spans);
    int rc = TC_OK;
    uint64_t limit = reverse_limit(in);
    for (uint32_t i = 0; i < in->n_nodes && rc == TC_OK; i++) {
        if (in->nodes[i].parent == TCI_NONE)
            continue;
        if (TCI_UNLIKELY(tci_cancel_step(in->cancel, TCI_CANCEL_NODE)))
            rc = TC_ERR_CANCELED;
        else if (TCI_UNLIKELY(out->n_nodes > limit))
            rc = reverse_too_large(out, limit);
        else
            rc = add_path_backwards(in, canon, i, in->nodes[i].wall_self, in->nodes[i].cpu_self, out);
    }
    return finish_derived(out, rc, "the bottom-up tree");
}

/* ---- callers ------------------------------------------------------------------- */

int tci_calltree_callers(const tci_calltree *in, const uint32_t *canon, const uint8_t *mark, const char *what,
                         tci_calltree *out)
{
    if (tci_calltree_init(out, in->trace, in->n_roots) != TC_OK)
        return TC_ERR_NOMEM;
    out->diag = in->diag;
    out->cancel = in->cancel;
    memcpy(out->spans, in->spans, in->n_roots * sizeof *in->spans);
    /* per node of in: whether it or a frame above it is a marked method's (parents first) */
    uint8_t *under = tci_calloc(in->n_nodes ? in->n_nodes : 1, 1);
    if (!under)
        return TC_ERR_NOMEM;
    int rc = TC_OK;
    bool called = false;
    uint64_t limit = reverse_limit(in); /* out's paths are some of the bottom-up tree's */
    for (uint32_t i = 0; i < in->n_nodes && rc == TC_OK; i++) {
        const tci_ctnode *n = &in->nodes[i];
        if (n->parent == TCI_NONE)
            continue;
        bool above = under[n->parent];
        under[i] = above || mark[n->method];
        if (above || !mark[n->method])
            continue; /* not the method's, or a recursive call inside its outermost one: counted there */
        called = true;
        if (TCI_UNLIKELY(tci_cancel_step(in->cancel, TCI_CANCEL_NODE)))
            rc = TC_ERR_CANCELED;
        else if (TCI_UNLIKELY(out->n_nodes > limit))
            rc = reverse_too_large(out, limit);
        else
            rc = add_path_backwards(in, canon, i, n->wall_total, n->cpu_total, out);
    }
    free(under);
    if (rc == TC_OK && !called && out->diag) /* an empty graph or report would look like an answer */
        rc = tci_error(out->diag, TC_ERR_EMPTY_SELECTION, "calltree", UINT64_MAX,
                       "--callers '%.200s' names methods that are never called in the part of the trace selected",
                       what ? what : "");
    return finish_derived(out, rc, "the callers tree");
}

/* ---- the walk ---------------------------------------------------------------- */

int tci_calltree_walk(const tci_calltree *ct, uint32_t root, const tci_ctvisit *v)
{
    const tci_ctnode *nodes = ct->nodes;
    uint32_t depth = 0, node = nodes[root].first_child;
    while (node != TCI_NONE) {
        if (TCI_UNLIKELY(tci_cancel_step(ct->cancel, TCI_CANCEL_NODE)))
            return TC_ERR_CANCELED;
        int rc = v->enter(v->user, node, depth);
        if (rc < 0)
            return rc;
        if (rc == TC_OK && nodes[node].first_child != TCI_NONE) {
            node = nodes[node].first_child;
            depth++;
            continue;
        }
        if (rc == TC_OK)
            v->leave(v->user, node, depth); /* a leaf: its subtree is done */
        /* up (leaving each finished node) until a node has a next sibling */
        while (nodes[node].next_sibling == TCI_NONE) {
            if (!depth)
                return TC_OK;
            node = nodes[node].parent;
            v->leave(v->user, node, --depth);
        }
        node = nodes[node].next_sibling;
    }
    return TC_OK;
}
