/*
 * core_profile.c - the per-method profile (profile.c) on hand-built call
 * trees. Every expected value below was worked out by hand from the rules
 * in tc_profile.h (outermost activations for inclusive time, every
 * activation for exclusive time, the three edge splits), not read from the
 * code's output:
 *
 * thread 0, direct recursion (DMTRACEDUMP-REPORT.md §7, thread 1):
 *   A 0-70 > A 10-60 > A 20-50 > B 30-40
 *   paths [A] 70 (self 20), [A,A] 50 (20), [A,A,A] 30 (20), [A,A,A,B] 10 (10)
 * thread 1, mutual recursion:
 *   X 0-100 > Y 10-60 > X 20-50 > Y 30-40, then X > Z 60-66
 *   paths [X] 100 (self 44), [X,Y] 50 (20), [X,Y,X] 30 (20), [X,Y,X,Y] 10 (10), [X,Z] 6 (6)
 * Thread CPU time is half the wall time everywhere.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

typedef struct fixture {
    tci_trace t;
    tci_diag d;
    tci_calltree ct;
    uint32_t a, b, x, y, z;
} fixture;

static uint32_t method(fixture *f, uint64_t id, const char *cls, const char *name, const char *sig)
{
    CHECK_EQ_INT(tci_trace_define_method(&f->t, id, cls, strlen(cls), name, strlen(name), sig, strlen(sig), NULL, 0, -1),
                 TC_OK);
    return tci_trace_method(&f->t, id);
}

static void setup(fixture *f, uint32_t threads)
{
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(tci_trace_init(&f->t), TC_OK);
    for (uint32_t i = 0; i < threads; i++)
        tci_trace_add_thread(&f->t, 100 + i);
    f->a = method(f, 4, "p.A", "f", "()V");
    f->b = method(f, 8, "p.B", "g", "()V");
    f->x = method(f, 12, "q.X", "x", "(I)V");
    f->y = method(f, 16, "q.Y", "y", "(I)V");
    f->z = method(f, 20, "q.Z", "z", "()V");
    f->d.input = "unit";
    CHECK_EQ_INT(tci_calltree_init(&f->ct, &f->t, threads), TC_OK);
    f->ct.diag = &f->d;
}

static void teardown(fixture *f)
{
    tci_calltree_free(&f->ct);
    for (size_t i = 0; i < f->d.n_kept; i++)
        free(f->d.kept[i]);
    tci_trace_free(&f->t);
}

static void ev(fixture *f, uint8_t kind, uint32_t thread, uint32_t m, int64_t ts)
{
    tci_event e = {.ts_ns = ts, .cpu_ns = ts / 2, .thread = thread, .method = m, .kind = kind};
    CHECK_EQ_INT(tci_calltree_event(&f->ct, &e), TC_OK);
}
static void enter(fixture *f, uint32_t thread, uint32_t m, int64_t ts) { ev(f, TCI_EV_ENTER, thread, m, ts); }
static void leave(fixture *f, uint32_t thread, uint32_t m, int64_t ts) { ev(f, TCI_EV_EXIT, thread, m, ts); }

static void build_both(fixture *f)
{
    enter(f, 0, f->a, 0);
    enter(f, 0, f->a, 10);
    enter(f, 0, f->a, 20);
    enter(f, 0, f->b, 30);
    leave(f, 0, f->b, 40);
    leave(f, 0, f->a, 50);
    leave(f, 0, f->a, 60);
    leave(f, 0, f->a, 70);

    enter(f, 1, f->x, 0);
    enter(f, 1, f->y, 10);
    enter(f, 1, f->x, 20);
    enter(f, 1, f->y, 30);
    leave(f, 1, f->y, 40);
    leave(f, 1, f->x, 50);
    leave(f, 1, f->y, 60);
    enter(f, 1, f->z, 60);
    leave(f, 1, f->z, 66);
    leave(f, 1, f->x, 100);
    tci_calltree_finish(&f->ct);
}

static const tci_pmethod *row(const tci_profile *p, uint32_t m)
{
    uint32_t r = tci_profile_row(p, m);
    CHECK(r != TCI_NONE);
    return r == TCI_NONE ? NULL : &p->methods[r];
}

/* The edge caller -> callee (caller TCI_NONE: from the thread root). */
static const tci_pedge *edge(const tci_profile *p, uint32_t caller, uint32_t callee)
{
    uint32_t rc = caller == TCI_NONE ? TCI_NONE : tci_profile_row(p, caller), re = tci_profile_row(p, callee);
    for (uint32_t e = 0; e < p->n_edges; e++)
        if (p->edges[e].caller == rc && p->edges[e].callee == re)
            return &p->edges[e];
    CHECK(!"edge not found");
    return NULL;
}

static void method_is(const tci_pmethod *m, uint64_t calls, uint64_t rec, int64_t incl, int64_t excl, int64_t outer_excl)
{
    if (!m)
        return;
    CHECK_EQ_INT(m->calls, calls);
    CHECK_EQ_INT(m->recursive_calls, rec);
    CHECK_EQ_INT(m->incl_wall, incl);
    CHECK_EQ_INT(m->incl_cpu, incl / 2);
    CHECK_EQ_INT(m->excl_wall, excl);
    CHECK_EQ_INT(m->excl_cpu, excl / 2);
    CHECK_EQ_INT(m->outer_excl_wall, outer_excl);
    CHECK_EQ_INT(m->outer_excl_cpu, outer_excl / 2);
}

static void cost_is(const tci_pcost *c, uint64_t calls, int64_t wall)
{
    CHECK_EQ_INT(c->calls, calls);
    CHECK_EQ_INT(c->wall, wall);
    CHECK_EQ_INT(c->cpu, wall / 2);
}

/* all, caller_outer, callee_outer, once: (calls, wall) each */
static void edge_is(const tci_pedge *e, uint64_t c_all, int64_t w_all, uint64_t c_co, int64_t w_co, uint64_t c_ceo,
                    int64_t w_ceo, uint64_t c_once, int64_t w_once)
{
    if (!e)
        return;
    cost_is(&e->all, c_all, w_all);
    cost_is(&e->caller_outer, c_co, w_co);
    cost_is(&e->callee_outer, c_ceo, w_ceo);
    cost_is(&e->once, c_once, w_once);
}

static void test_direct_recursion(void)
{
    fixture f;
    setup(&f, 2);
    build_both(&f);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, 0), TC_OK);
    CHECK_EQ_INT(p.n_methods, 2);
    CHECK_EQ_INT(p.n_threads, 1);
    CHECK_EQ_INT(p.calls, 4);
    /* A: one outermost call of 70 (self 20), two nested; self of all three 60 */
    method_is(row(&p, f.a), 1, 2, 70, 60, 20);
    method_is(row(&p, f.b), 1, 0, 10, 10, 10);
    edge_is(edge(&p, TCI_NONE, f.a), 1, 70, 1, 70, 1, 70, 1, 70);
    /* A->A: [A,A] (caller outermost, callee nested, first on the path) and [A,A,A] (all nested) */
    edge_is(edge(&p, f.a, f.a), 2, 80, 1, 50, 0, 0, 1, 50);
    /* A->B: made by the innermost (nested) A; B itself is outermost */
    edge_is(edge(&p, f.a, f.b), 1, 10, 0, 0, 1, 10, 1, 10);
    CHECK_EQ_INT(p.span_wall, 70);
    CHECK_EQ_INT(p.span_cpu, 35);
    CHECK_EQ_INT(p.busy_wall, 70);
    /* lists: A's parents are (toplevel) and A; its children A and B; (toplevel) calls A */
    const tci_pmethod *a = row(&p, f.a);
    CHECK_EQ_INT(a->n_parents, 2);
    CHECK_EQ_INT(a->n_children, 2);
    CHECK_EQ_INT(p.n_top_children, 1);
    CHECK(p.edges[p.child_edges[p.top_children_at]].callee == tci_profile_row(&p, f.a));
    for (uint32_t i = 0; i < a->n_children; i++)
        CHECK(p.edges[p.child_edges[a->children_at + i]].caller == tci_profile_row(&p, f.a));
    for (uint32_t i = 0; i < a->n_parents; i++)
        CHECK(p.edges[p.parent_edges[a->parents_at + i]].callee == tci_profile_row(&p, f.a));
    tci_profile_free(&p);
    teardown(&f);
}

static void test_mutual_recursion(void)
{
    fixture f;
    setup(&f, 2);
    build_both(&f);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, 1), TC_OK);
    CHECK_EQ_INT(p.n_methods, 3);
    method_is(row(&p, f.x), 1, 1, 100, 64, 44);
    method_is(row(&p, f.y), 1, 1, 50, 30, 20);
    method_is(row(&p, f.z), 1, 0, 6, 6, 6);
    edge_is(edge(&p, TCI_NONE, f.x), 1, 100, 1, 100, 1, 100, 1, 100);
    /* X->Y: [X,Y] outermost everything; [X,Y,X,Y] nested caller, nested callee, X->Y already on the path */
    edge_is(edge(&p, f.x, f.y), 2, 60, 1, 50, 1, 50, 1, 50);
    /* Y->X: made by the outermost Y, calling a nested X */
    edge_is(edge(&p, f.y, f.x), 1, 30, 1, 30, 0, 0, 1, 30);
    edge_is(edge(&p, f.x, f.z), 1, 6, 1, 6, 1, 6, 1, 6);
    /* the sums a report relies on: outermost self + caller_outer children = inclusive;
     * callee_outer parents = inclusive */
    for (uint32_t r = 0; r < p.n_methods; r++) {
        const tci_pmethod *m = &p.methods[r];
        int64_t kids = 0, parents = 0;
        for (uint32_t i = 0; i < m->n_children; i++)
            kids += p.edges[p.child_edges[m->children_at + i]].caller_outer.wall;
        for (uint32_t i = 0; i < m->n_parents; i++)
            parents += p.edges[p.parent_edges[m->parents_at + i]].callee_outer.wall;
        CHECK_EQ_INT(m->outer_excl_wall + kids, m->incl_wall);
        CHECK_EQ_INT(parents, m->incl_wall);
    }
    CHECK_EQ_INT(p.span_wall, 100);
    tci_profile_free(&p);
    teardown(&f);
}

static void test_all_threads(void)
{
    fixture f;
    setup(&f, 3); /* thread 2 has no call: not in the profile */
    build_both(&f);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, TCI_NONE), TC_OK);
    CHECK_EQ_INT(p.n_threads, 2);
    CHECK_EQ_INT(p.n_methods, 5);
    CHECK_EQ_INT(p.calls, 4 + 5);
    method_is(row(&p, f.a), 1, 2, 70, 60, 20);
    method_is(row(&p, f.x), 1, 1, 100, 64, 44);
    CHECK_EQ_INT(p.n_top_children, 2);
    CHECK_EQ_INT(p.span_wall, 170);
    CHECK_EQ_INT(p.busy_wall, 170);
    tci_profile_free(&p);
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, 2), TC_OK);
    CHECK_EQ_INT(p.n_methods, 0);
    CHECK_EQ_INT(p.n_threads, 0);
    tci_profile_free(&p);
    teardown(&f);
}

/* The same method in two threads sums; a thread's idle time counts in its span only. */
static void test_threads_sum(void)
{
    fixture f;
    setup(&f, 2);
    enter(&f, 0, f.a, 0);
    leave(&f, 0, f.a, 10);
    enter(&f, 0, f.a, 30); /* 20 idle between */
    leave(&f, 0, f.a, 40);
    enter(&f, 1, f.a, 5);
    enter(&f, 1, f.b, 6);
    leave(&f, 1, f.b, 8);
    leave(&f, 1, f.a, 9);
    tci_calltree_finish(&f.ct);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, TCI_NONE), TC_OK);
    method_is(row(&p, f.a), 3, 0, 24, 22, 22);
    method_is(row(&p, f.b), 1, 0, 2, 2, 2);
    CHECK_EQ_INT(p.span_wall, 40 + 4);
    CHECK_EQ_INT(p.busy_wall, 20 + 4);
    edge_is(edge(&p, TCI_NONE, f.a), 3, 24, 3, 24, 3, 24, 3, 24);
    tci_profile_free(&p);
    teardown(&f);
}

/* Sums over threads beyond TCI_SUM_MAX saturate there and are counted, never overflow (UBSan). */
static void test_saturation(void)
{
    fixture f;
    setup(&f, 3);
    for (uint32_t t = 0; t < 3; t++) {
        tci_event e = {.ts_ns = 0, .cpu_ns = 0, .thread = t, .method = f.a, .kind = TCI_EV_ENTER};
        CHECK_EQ_INT(tci_calltree_event(&f.ct, &e), TC_OK);
        e = (tci_event){.ts_ns = TCI_SUM_MAX, .cpu_ns = TCI_SUM_MAX, .thread = t, .method = f.a, .kind = TCI_EV_EXIT};
        CHECK_EQ_INT(tci_calltree_event(&f.ct, &e), TC_OK);
    }
    tci_calltree_finish(&f.ct);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, TCI_NONE), TC_OK);
    const tci_pmethod *a = row(&p, f.a);
    if (a) {
        CHECK_EQ_INT(a->calls, 3);
        CHECK_EQ_INT(a->incl_wall, TCI_SUM_MAX);
        CHECK_EQ_INT(a->excl_cpu, TCI_SUM_MAX);
    }
    CHECK_EQ_INT(p.span_wall, TCI_SUM_MAX);
    CHECK(p.saturated > 0);
    tci_profile_free(&p);
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, 1), TC_OK);
    CHECK_EQ_INT(p.saturated, 0); /* one thread fits */
    tci_profile_free(&p);
    teardown(&f);
}

/* A total order: key descending, then class, name, signature, method index; (toplevel) first among equals. */
static void test_sort_order(void)
{
    fixture f;
    setup(&f, 1);
    uint32_t twin = method(&f, 24, "p.A", "f", "()V"); /* the same texts as A under another id */
    uint32_t early = method(&f, 28, "p.A", "e", "(J)V");
    uint32_t ms[] = {f.z, twin, f.a, early, f.b};
    for (size_t i = 0; i < 5; i++) {
        enter(&f, 0, ms[i], (int64_t)i * 10);
        leave(&f, 0, ms[i], (int64_t)i * 10 + 5);
    }
    tci_calltree_finish(&f.ct);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, 0), TC_OK);
    tci_psort_item it[6];
    for (uint32_t r = 0; r < p.n_methods; r++)
        it[r] = (tci_psort_item){.key = p.methods[r].method == f.b ? 7 : 0, .row = r};
    it[5] = (tci_psort_item){.key = 0, .row = TCI_NONE};
    tci_profile_sort(&p, it, 6);
    /* B has the largest key; then (toplevel); then p.A.e, p.A.f (id 4), p.A.f (id 24), q.Z.z */
    uint32_t want[] = {f.b, TCI_NONE, early, f.a, twin, f.z};
    for (size_t i = 0; i < 6; i++)
        CHECK_EQ_INT(it[i].row == TCI_NONE ? TCI_NONE : p.methods[it[i].row].method, want[i]);
    tci_profile_free(&p);
    teardown(&f);
}

/* ART may list one method under several ids: after finalize (display names made) they are one
 * row, and one id called under another is a nested activation of that method. By hand, with
 * A (id 4) and A2 (id 24) both p.A.f ()V on thread 0:
 *   A 0-100 > { A2 10-40 > B 20-30 ; A2 50-80 }, then A2 100-120 at the top.
 * p.A.f: outermost 0-100 and 100-120: 2 calls, incl 120; nested: 2 recursive calls; self
 * 40 (A) + 20 (30-10: the first A2) + 30 + 20 = 110, of outermost ones 40 + 20 = 60.
 * B: 1 call, 10. Edges: (toplevel) -> p.A.f 2 calls 120 (all splits); p.A.f -> p.A.f 2 calls
 * 60, made by an outermost caller, nested callee; p.A.f -> B 1 call 10, nested caller. */
static void test_duplicate_ids(void)
{
    fixture f;
    setup(&f, 1);
    uint32_t twin = method(&f, 24, "p.A", "f", "()V");
    tci_options opt;
    memset(&opt, 0, sizeof opt);
    CHECK_EQ_INT(tci_trace_finalize(&f.t, &f.d, &opt), TC_OK);
    enter(&f, 0, f.a, 0);
    enter(&f, 0, twin, 10);
    enter(&f, 0, f.b, 20);
    leave(&f, 0, f.b, 30);
    leave(&f, 0, twin, 40);
    enter(&f, 0, twin, 50);
    leave(&f, 0, twin, 80);
    leave(&f, 0, f.a, 100);
    enter(&f, 0, twin, 100);
    leave(&f, 0, twin, 120);
    tci_calltree_finish(&f.ct);
    tci_profile p;
    CHECK_EQ_INT(tci_profile_build(&p, &f.ct, 0), TC_OK);
    CHECK_EQ_INT(p.n_methods, 2);
    CHECK_EQ_INT(tci_profile_row(&p, f.a), tci_profile_row(&p, twin));
    method_is(row(&p, twin), 2, 2, 120, 110, 60);
    method_is(row(&p, f.b), 1, 0, 10, 10, 10);
    CHECK_EQ_INT(p.n_edges, 3);
    edge_is(edge(&p, TCI_NONE, f.a), 2, 120, 2, 120, 2, 120, 2, 120);
    edge_is(edge(&p, f.a, twin), 2, 60, 2, 60, 0, 0, 2, 60);
    edge_is(edge(&p, twin, f.b), 1, 10, 0, 0, 1, 10, 1, 10);
    tci_profile_free(&p);
    teardown(&f);
}

int main(void)
{
    UNIT_RUN(test_direct_recursion);
    UNIT_RUN(test_mutual_recursion);
    UNIT_RUN(test_all_threads);
    UNIT_RUN(test_threads_sum);
    UNIT_RUN(test_saturation);
    UNIT_RUN(test_sort_order);
    UNIT_RUN(test_duplicate_ids);
    return UNIT_DONE();
}
