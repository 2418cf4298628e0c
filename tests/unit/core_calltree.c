/*
 * core_calltree.c - the call tree's sums: exact on ordinary input (values
 * worked out by hand from the events below), saturating and counted on
 * durations that do not fit, never a signed overflow (UBSan build), and the
 * sum of the self times under any node never above TCI_SUM_MAX, so writers
 * may add them up.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

typedef struct fixture {
    tci_trace t;
    tci_diag d;
    tci_calltree ct;
    uint32_t a, b, c;
} fixture;

static void setup(fixture *f, uint32_t threads)
{
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(tci_trace_init(&f->t), TC_OK);
    for (uint32_t i = 0; i < threads; i++)
        tci_trace_add_thread(&f->t, 100 + i);
    f->a = tci_trace_name(&f->t, "A", 1);
    f->b = tci_trace_name(&f->t, "B", 1);
    f->c = tci_trace_name(&f->t, "C", 1);
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

static void ev(fixture *f, uint8_t kind, uint32_t thread, uint32_t method, int64_t ts, int64_t cpu)
{
    tci_event e = {.ts_ns = ts, .cpu_ns = cpu, .thread = thread, .method = method, .kind = kind};
    CHECK_EQ_INT(tci_calltree_event(&f->ct, &e), TC_OK);
}

static void sample(fixture *f, uint32_t thread, uint32_t stack, double weight)
{
    tci_event e = {.ts_ns = 0, .cpu_ns = TCI_NO_TIME, .thread = thread, .method = f->t.stacks[stack].method,
                   .kind = TCI_EV_SAMPLE, .id = stack, .value = weight};
    CHECK_EQ_INT(tci_calltree_event(&f->ct, &e), TC_OK);
}

static uint32_t child_of(const tci_calltree *ct, uint32_t node, uint32_t method)
{
    for (uint32_t c = ct->nodes[node].first_child; c != TCI_NONE; c = ct->nodes[c].next_sibling)
        if (ct->nodes[c].method == method)
            return c;
    return TCI_NONE;
}

/* Sum of the self times of a subtree (int128-free: each term is checked against the bound). */
static int64_t subtree_self(const tci_calltree *ct, uint32_t node, bool *over)
{
    int64_t s = ct->nodes[node].method == TCI_NONE ? 0 : ct->nodes[node].wall_self;
    for (uint32_t c = ct->nodes[node].first_child; c != TCI_NONE; c = ct->nodes[c].next_sibling) {
        int64_t k = subtree_self(ct, c, over);
        if (k > TCI_SUM_MAX - s)
            *over = true;
        else
            s += k;
    }
    return s;
}

static void test_ordinary_sums(void)
{
    fixture f;
    setup(&f, 2);
    /* thread 0: A [0,100] holds B [10,30] and B [40,50]; cpu advances half as fast */
    ev(&f, TCI_EV_ENTER, 0, f.a, 0, 0);
    ev(&f, TCI_EV_ENTER, 0, f.b, 10, 5);
    ev(&f, TCI_EV_EXIT, 0, f.b, 30, 15);
    ev(&f, TCI_EV_ENTER, 0, f.b, 40, 20);
    ev(&f, TCI_EV_EXIT, 0, f.b, 50, 25);
    ev(&f, TCI_EV_EXIT, 0, f.a, 100, 50);
    /* thread 1: A [0,10] */
    ev(&f, TCI_EV_ENTER, 1, f.a, 0, TCI_NO_TIME);
    ev(&f, TCI_EV_EXIT, 1, f.a, 10, TCI_NO_TIME);
    tci_calltree_finish(&f.ct);
    CHECK_EQ_INT(f.ct.saturated, 0);
    uint32_t a0 = child_of(&f.ct, f.ct.roots[0], f.a), b0 = child_of(&f.ct, a0, f.b);
    CHECK(a0 != TCI_NONE && b0 != TCI_NONE);
    CHECK_EQ_INT(f.ct.nodes[a0].wall_total, 100);
    CHECK_EQ_INT(f.ct.nodes[a0].wall_self, 70);
    CHECK_EQ_INT(f.ct.nodes[a0].cpu_total, 50);
    CHECK_EQ_INT(f.ct.nodes[a0].cpu_self, 35);
    CHECK_EQ_INT(f.ct.nodes[b0].wall_total, 30);
    CHECK_EQ_INT(f.ct.nodes[b0].calls, 2);
    CHECK_EQ_INT(f.ct.nodes[f.ct.roots[0]].wall_total, 100);

    tci_calltree m;
    CHECK_EQ_INT(tci_calltree_merge_threads(&f.ct, &m), TC_OK);
    uint32_t ma = child_of(&m, m.roots[0], f.a);
    CHECK_EQ_INT(m.nodes[ma].wall_total, 110);
    CHECK_EQ_INT(m.nodes[ma].wall_self, 80);
    CHECK_EQ_INT(m.nodes[ma].calls, 2);
    CHECK_EQ_INT(m.saturated, 0);
    tci_calltree_free(&m);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_SATURATED], 0);
    teardown(&f);
}

/* Two threads each with a call as long as the whole int64 timeline, nested calls inside. */
static void test_huge_durations_saturate(void)
{
    fixture f;
    setup(&f, 2);
    for (uint32_t t = 0; t < 2; t++) {
        ev(&f, TCI_EV_ENTER, t, f.a, INT64_MIN + 1, INT64_MIN + 1);
        ev(&f, TCI_EV_ENTER, t, f.b, -10, -10);
        ev(&f, TCI_EV_EXIT, t, f.b, INT64_MAX / 2 + 100, INT64_MAX / 2 + 100);
        ev(&f, TCI_EV_ENTER, t, f.c, INT64_MAX / 2 + 200, INT64_MAX / 2 + 200);
        ev(&f, TCI_EV_EXIT, t, f.c, INT64_MAX - 1, INT64_MAX - 1);
        ev(&f, TCI_EV_EXIT, t, f.a, INT64_MAX, INT64_MAX);
        ev(&f, TCI_EV_ENTER, t, f.a, INT64_MAX, INT64_MAX); /* a second top-level call */
        ev(&f, TCI_EV_EXIT, t, f.a, INT64_MAX, INT64_MAX);
    }
    tci_calltree_finish(&f.ct);
    CHECK(f.ct.saturated > 0);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_SATURATED], 1);
    CHECK(f.d.n_kept == 1 && strstr(f.d.kept[0], "calltree"));
    for (uint32_t i = 0; i < f.ct.n_nodes; i++) {
        const tci_ctnode *n = &f.ct.nodes[i];
        CHECK(n->wall_total >= 0 && n->wall_total <= TCI_SUM_MAX);
        CHECK(n->wall_self >= 0 && n->wall_self <= TCI_SUM_MAX);
        CHECK(n->cpu_self >= 0 && n->cpu_self <= TCI_SUM_MAX);
    }
    for (uint32_t t = 0; t < 2; t++) {
        bool over = false;
        subtree_self(&f.ct, f.ct.roots[t], &over);
        CHECK(!over);
        CHECK_EQ_INT(f.ct.nodes[child_of(&f.ct, f.ct.roots[t], f.a)].wall_total, TCI_SUM_MAX);
    }

    tci_calltree m;
    uint64_t before = f.d.fig[TCI_FIG_SATURATED];
    CHECK_EQ_INT(tci_calltree_merge_threads(&f.ct, &m), TC_OK);
    CHECK(m.saturated > 0);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_SATURATED], before + 1);
    bool over = false;
    subtree_self(&m, m.roots[0], &over);
    CHECK(!over);
    for (uint32_t i = 0; i < m.n_nodes; i++)
        CHECK(m.nodes[i].wall_self >= 0 && m.nodes[i].wall_self <= TCI_SUM_MAX);
    tci_calltree_free(&m);
    teardown(&f);
}

/* Many samples whose weights add up past int64. */
static void test_sample_weights_saturate(void)
{
    fixture f;
    setup(&f, 1);
    uint32_t s0 = tci_trace_stack(&f.t, TCI_NONE, f.a), s1 = tci_trace_stack(&f.t, s0, f.b);
    for (int i = 0; i < 8; i++) {
        sample(&f, 0, s1, 8.9e18);
        sample(&f, 0, s0, 8.9e18);
    }
    tci_calltree_finish(&f.ct);
    CHECK(f.ct.saturated > 0);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_SATURATED], 1);
    bool over = false;
    subtree_self(&f.ct, f.ct.roots[0], &over);
    CHECK(!over);
    uint32_t a = child_of(&f.ct, f.ct.roots[0], f.a);
    CHECK_EQ_INT(f.ct.nodes[a].wall_total, TCI_SUM_MAX);
    CHECK_EQ_INT(f.ct.nodes[a].calls, 8);
    teardown(&f);
}

int main(void)
{
    UNIT_RUN(test_ordinary_sums);
    UNIT_RUN(test_huge_durations_saturate);
    UNIT_RUN(test_sample_weights_saturate);
    return UNIT_DONE();
}
