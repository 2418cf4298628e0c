/*
 * calltree_walk.c - the one walk over a call tree (tci_calltree_walk), which
 * the folded stacks, pprof's samples and the profile report share: the order
 * of enter and leave written out by hand from the calls below (paths in
 * order of first call, parents before children), a pruned subtree left out
 * with no leave, a walk from an inner node that stays under it, an error or
 * a cancel that stops it, and a 200000-deep chain walked without recursion.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_cancel.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

typedef struct fixture {
    tci_trace t;
    tci_calltree ct;
    uint32_t a, b, c;
    int64_t ts;
} fixture;

static void setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(tci_trace_init(&f->t), TC_OK);
    tci_trace_add_thread(&f->t, 100);
    f->a = tci_trace_name(&f->t, "A", 1);
    f->b = tci_trace_name(&f->t, "B", 1);
    f->c = tci_trace_name(&f->t, "C", 1);
    CHECK_EQ_INT(tci_calltree_init(&f->ct, &f->t, 1), TC_OK);
}

static void teardown(fixture *f)
{
    tci_calltree_free(&f->ct);
    tci_trace_free(&f->t);
}

static void call(fixture *f, uint8_t kind, uint32_t method)
{
    tci_event e = {.ts_ns = f->ts++, .cpu_ns = TCI_NO_TIME, .thread = 0, .method = method, .kind = kind};
    CHECK_EQ_INT(tci_calltree_event(&f->ct, &e), TC_OK);
}

/* A{ B{ C{} } C{} B{} } B{}: the tree root -> A -> (B -> C, C); root -> B. */
static void calls(fixture *f)
{
    uint32_t seq[][2] = {{TCI_EV_ENTER, f->a}, {TCI_EV_ENTER, f->b}, {TCI_EV_ENTER, f->c}, {TCI_EV_EXIT, f->c},
                         {TCI_EV_EXIT, f->b},  {TCI_EV_ENTER, f->c}, {TCI_EV_EXIT, f->c},  {TCI_EV_ENTER, f->b},
                         {TCI_EV_EXIT, f->b},  {TCI_EV_EXIT, f->a},  {TCI_EV_ENTER, f->b}, {TCI_EV_EXIT, f->b}};
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++)
        call(f, (uint8_t)seq[i][0], seq[i][1]);
    tci_calltree_finish(&f->ct);
}

/* What the callbacks saw: "+A0 -A0 ..." (name, depth); prune_at / fail_at: the path
 * ("A;B") whose enter prunes or fails. */
typedef struct trace_log {
    fixture *f;
    char text[4096];
    const char *prune_at, *fail_at;
    uint32_t max_depth;
    uint64_t entered, left;
    bool quiet; /* counts only */
} trace_log;

static void path_of(const fixture *f, uint32_t node, char *out, size_t cap)
{
    char rev[64][8];
    size_t n = 0, o = 0;
    for (; f->ct.nodes[node].method != TCI_NONE && n < 64; node = f->ct.nodes[node].parent)
        snprintf(rev[n++], sizeof rev[0], "%s", f->t.methods[f->ct.nodes[node].method].name);
    out[0] = 0;
    while (n--)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? ";" : "", rev[n]);
}

static void note(trace_log *l, char sign, uint32_t node, uint32_t depth)
{
    const tci_method *m = &l->f->t.methods[l->f->ct.nodes[node].method];
    size_t o = strlen(l->text);
    snprintf(l->text + o, sizeof l->text - o, "%s%c%s%u", o ? " " : "", sign, m->name, depth);
}

static int on_enter(void *user, uint32_t node, uint32_t depth)
{
    trace_log *l = user;
    l->entered++;
    l->max_depth = depth > l->max_depth ? depth : l->max_depth;
    if (l->quiet)
        return TC_OK;
    char path[256];
    path_of(l->f, node, path, sizeof path);
    if (l->fail_at && !strcmp(path, l->fail_at))
        return TC_ERR_NOMEM;
    note(l, '+', node, depth);
    return l->prune_at && !strcmp(path, l->prune_at) ? TCI_WALK_PRUNE : TC_OK;
}

static void on_leave(void *user, uint32_t node, uint32_t depth)
{
    trace_log *l = user;
    l->left++;
    if (!l->quiet)
        note(l, '-', node, depth);
}

static int walk(fixture *f, uint32_t root, trace_log *l)
{
    l->f = f;
    return tci_calltree_walk(&f->ct, root, &(tci_ctvisit){on_enter, on_leave, l});
}

static void test_order(void)
{
    fixture f;
    setup(&f);
    calls(&f);
    trace_log l = {0};
    CHECK_EQ_INT(walk(&f, f.ct.roots[0], &l), TC_OK);
    CHECK_EQ_STR(l.text, "+A0 +B1 +C2 -C2 -B1 +C1 -C1 -A0 +B0 -B0");
    teardown(&f);
}

static void test_prune(void)
{
    fixture f;
    setup(&f);
    calls(&f);
    trace_log l = {.prune_at = "A;B"};
    CHECK_EQ_INT(walk(&f, f.ct.roots[0], &l), TC_OK);
    CHECK_EQ_STR(l.text, "+A0 +B1 +C1 -C1 -A0 +B0 -B0"); /* A;B;C not entered, A;B not left */
    trace_log top = {.prune_at = "B"};
    CHECK_EQ_INT(walk(&f, f.ct.roots[0], &top), TC_OK);
    CHECK_EQ_STR(top.text, "+A0 +B1 +C2 -C2 -B1 +C1 -C1 -A0 +B0");
    teardown(&f);
}

static void test_from_an_inner_node(void)
{
    fixture f;
    setup(&f);
    calls(&f);
    uint32_t a = f.ct.nodes[f.ct.roots[0]].first_child;
    trace_log l = {0};
    CHECK_EQ_INT(walk(&f, a, &l), TC_OK);
    CHECK_EQ_STR(l.text, "+B0 +C1 -C1 -B0 +C0 -C0"); /* A's subtree only: not A, not the top-level B */
    uint32_t leaf = f.ct.nodes[f.ct.nodes[a].first_child].first_child; /* A;B;C */
    trace_log none = {0};
    CHECK_EQ_INT(walk(&f, leaf, &none), TC_OK);
    CHECK_EQ_STR(none.text, "");
    teardown(&f);
}

static void test_error_and_cancel_stop(void)
{
    fixture f;
    setup(&f);
    calls(&f);
    trace_log l = {.fail_at = "A;C"};
    CHECK_EQ_INT(walk(&f, f.ct.roots[0], &l), TC_ERR_NOMEM);
    CHECK_EQ_STR(l.text, "+A0 +B1 +C2 -C2 -B1"); /* nothing after the failing enter */
    tci_cancel stop = {.budget = TCI_CANCEL_BUDGET, .stopped = true};
    f.ct.cancel = &stop;
    trace_log c = {0};
    CHECK_EQ_INT(walk(&f, f.ct.roots[0], &c), TC_ERR_CANCELED);
    CHECK_EQ_INT(c.entered, 0);
    teardown(&f);
}

static void test_deep_chain(void)
{
    enum { DEPTH = 200000 };
    fixture f;
    setup(&f);
    for (int i = 0; i < DEPTH; i++)
        call(&f, TCI_EV_ENTER, i % 2 ? f.a : f.b);
    for (int i = DEPTH; i-- > 0;)
        call(&f, TCI_EV_EXIT, i % 2 ? f.a : f.b);
    tci_calltree_finish(&f.ct);
    trace_log l = {.quiet = true};
    CHECK_EQ_INT(walk(&f, f.ct.roots[0], &l), TC_OK);
    CHECK_EQ_INT(l.entered, DEPTH);
    CHECK_EQ_INT(l.left, DEPTH);
    CHECK_EQ_INT(l.max_depth, DEPTH - 1);
    teardown(&f);
}

int main(void)
{
    UNIT_RUN(test_order);
    UNIT_RUN(test_prune);
    UNIT_RUN(test_from_an_inner_node);
    UNIT_RUN(test_error_and_cancel_stop);
    UNIT_RUN(test_deep_chain);
    return UNIT_DONE();
}
