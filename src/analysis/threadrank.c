/*
 * threadrank.c - the views' order of threads (tc_threadrank.h). A real 98-thread trace opened
 * its report on FinalizerWatchdogDaemon and gave main a 12 px sliver: wall time alone favours
 * the threads that wait the longest. So the order weighs the time outside the idle waits of
 * --ignore-idle (select.c's list, one place), and the main thread comes first whatever it did.
 */
#include "tc_base.h"
#include "tc_conv.h"
#include "tc_threadrank.h"

#include <fnmatch.h>
#include <stdlib.h>

uint8_t *tci_idle_methods(const tci_trace *t)
{
    uint8_t *idle = tci_calloc(t->n_methods ? t->n_methods : 1, 1);
    if (!idle)
        return NULL;
    const char *const *globs = tci_idle_wait_globs();
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *s = t->methods[i].short_name;
        for (const char *const *g = globs; s && *g && !idle[i]; g++)
            idle[i] = fnmatch(*g, s, 0) == 0;
    }
    return idle;
}


typedef struct busy_walk {
    const tci_calltree *ct;
    const uint8_t *idle_method;
    int64_t idle_ns; /* the current root's */
    bool cpu;
} busy_walk;

static int busy_enter(void *user, uint32_t node, uint32_t depth)
{
    (void)depth;
    busy_walk *bw = user;
    const tci_ctnode *nd = &bw->ct->nodes[node];
    if (nd->method == TCI_NONE || nd->method >= bw->ct->trace->n_methods || !bw->idle_method[nd->method])
        return TC_OK;
    bw->idle_ns = tci_sum_add(bw->idle_ns, bw->cpu ? nd->cpu_total : nd->wall_total);
    return TCI_WALK_PRUNE; /* the outermost idle wait holds the time of those under it */
}

static void busy_leave(void *user, uint32_t node, uint32_t depth) { (void)user, (void)node, (void)depth; }

int tci_thread_busy_of_tree(const tci_calltree *ct, const uint8_t *idle_method, int64_t *busy, int64_t *idle)
{
    bool any_wall = false;
    for (uint32_t r = 0; r < ct->n_roots && !any_wall; r++)
        any_wall = ct->nodes[ct->roots[r]].wall_total > 0;
    busy_walk bw = {ct, idle_method, 0, !any_wall};
    tci_ctvisit v = {busy_enter, busy_leave, &bw};
    for (uint32_t r = 0; r < ct->n_roots; r++) {
        const tci_ctnode *root = &ct->nodes[ct->roots[r]];
        bw.idle_ns = 0;
        int rc = tci_calltree_walk(ct, ct->roots[r], &v);
        if (rc != TC_OK)
            return rc;
        int64_t total = bw.cpu ? root->cpu_total : root->wall_total;
        busy[r] = total > bw.idle_ns ? total - bw.idle_ns : 0;
        if (idle)
            idle[r] = bw.idle_ns;
    }
    return TC_OK;
}

typedef struct rank_ctx {
    const tci_trace *t;
    const int64_t *busy;
    uint32_t main;
} rank_ctx;

static int64_t busy_of(const rank_ctx *r, uint32_t i)
{
    return r->busy ? r->busy[i] : (int64_t)(r->t->threads[i].records > INT64_MAX ? INT64_MAX : r->t->threads[i].records);
}

/* a before b in the views' order */
static bool before(const rank_ctx *r, uint32_t a, uint32_t b)
{
    const tci_thread *ta = &r->t->threads[a], *tb = &r->t->threads[b];
    if ((a == r->main) != (b == r->main))
        return a == r->main;
    if ((ta->records > 0) != (tb->records > 0))
        return ta->records > 0;
    int64_t ba = busy_of(r, a), bb = busy_of(r, b);
    if (ba != bb)
        return ba > bb;
    return ta->tid != tb->tid ? ta->tid < tb->tid : a < b;
}

static uint32_t main_thread(const rank_ctx *r)
{
    const tci_trace *t = r->t;
    int64_t pid = t->n_processes ? t->processes[0].pid : -1;
    uint32_t by_pid = TCI_NONE, busiest = TCI_NONE;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        const tci_thread *th = &t->threads[i];
        if (!th->records)
            continue;
        if (th->name && !strcmp(th->name, "main"))
            return i;
        if (by_pid == TCI_NONE && pid > 0 && th->tid == (uint64_t)pid)
            by_pid = i;
        if (busiest == TCI_NONE || busy_of(r, i) > busy_of(r, busiest))
            busiest = i;
    }
    return by_pid != TCI_NONE ? by_pid : busiest;
}

void tci_thread_rank(const tci_trace *t, const int64_t *busy, uint32_t *order)
{
    rank_ctx r = {t, busy, TCI_NONE};
    r.main = main_thread(&r);
    for (uint32_t i = 0; i < t->n_threads; i++) { /* insertion sort: threads are few (hundreds) */
        uint32_t k = i;
        for (; k > 0 && before(&r, i, order[k - 1]); k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
}

bool tci_mostly_idle(const tci_trace *t, const int64_t *busy, const int64_t *idle)
{
    int64_t b = 0, i = 0;
    for (uint32_t k = 0; k < t->n_threads; k++)
        if (t->threads[k].records) {
            b = tci_sum_add(b, busy[k]);
            i = tci_sum_add(i, idle[k]);
        }
    return i > b;
}
