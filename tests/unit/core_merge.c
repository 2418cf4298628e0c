/*
 * core_merge.c - the global-order merge (merge.c) that TCI_WF_GLOBAL_ORDER
 * writers read: events added per thread in that thread's order, in any
 * interleaving of threads, come back in (timestamp, thread index) order, a
 * thread's equal timestamps in its own order, every field intact, through
 * many spilled blocks. The expected order is a plain sort of the events
 * kept here, independent of merge.c's heap and encoding.
 */
#include "tc_base.h"
#include "tc_conv.h"
#include "tc_diag.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

#define N_THREADS 5
#define N_EVENTS 300000 /* ~2 MB encoded: many 64 KiB blocks per thread */

typedef struct keyed {
    tci_event ev;
    uint32_t seq; /* position in its thread's sequence */
} keyed;

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int by_time_thread_seq(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->ev.ts_ns != y->ev.ts_ns)
        return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
    if (x->ev.thread != y->ev.thread)
        return x->ev.thread < y->ev.thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct collected {
    tci_event *ev;
    size_t n;
} collected;

static int collect(void *user, const tci_event *ev)
{
    collected *c = user;
    if (c->n >= N_EVENTS)
        return TC_ERR_FORMAT; /* more events out than in */
    c->ev[c->n++] = *ev;
    return TC_OK;
}

static bool same_event(const tci_event *a, const tci_event *b)
{
    return a->ts_ns == b->ts_ns && a->cpu_ns == b->cpu_ns && a->value == b->value && a->id == b->id &&
           a->thread == b->thread && a->method == b->method && a->depth == b->depth && a->kind == b->kind &&
           a->flags == b->flags;
}

/* Per thread: non-decreasing times with many ties (within the thread and
 * across threads), big jumps both ways of the delta encoding's range. */
static keyed *make_events(void)
{
    keyed *k = calloc(N_EVENTS, sizeof *k);
    int64_t ts[N_THREADS], cpu[N_THREADS];
    uint32_t seq[N_THREADS] = {0};
    for (int t = 0; t < N_THREADS; t++) {
        ts[t] = (int64_t)1140000000000000 + t * 7;
        cpu[t] = 0;
    }
    for (size_t i = 0; k && i < N_EVENTS; i++) {
        uint32_t t = (uint32_t)(next_rand() % N_THREADS); /* the interleaving of threads is arbitrary */
        uint64_t r = next_rand();
        ts[t] += (r & 3) == 0 ? 0 : (r & 3) == 1 ? 1 : (int64_t)(r >> 40) % 5000; /* ties are common */
        if ((r & 0xFFFF) == 7)
            ts[t] += (int64_t)1 << 40;
        cpu[t] += (int64_t)(r >> 50);
        keyed *e = &k[i];
        e->seq = seq[t]++;
        e->ev.ts_ns = ts[t];
        e->ev.cpu_ns = (r >> 8 & 7) == 0 ? TCI_NO_TIME : cpu[t];
        e->ev.thread = t;
        e->ev.method = (uint32_t)(r >> 20) % 1000;
        e->ev.depth = (uint32_t)(r >> 30) % 600;
        e->ev.kind = (uint8_t)(1 + (r >> 12) % 7);
        e->ev.flags = (uint8_t)((r >> 16) & 7);
        if (e->ev.kind == TCI_EV_COUNTER)
            e->ev.value = (double)(int64_t)(r >> 33) / 8.0 - 1e6;
        if (e->ev.kind == TCI_EV_ASYNC_BEGIN || e->ev.kind == TCI_EV_ASYNC_END || e->ev.kind == TCI_EV_SAMPLE)
            e->ev.id = r ^ (r << 31);
    }
    return k;
}

static void test_global_order_through_spilled_blocks(void)
{
    tci_trace t;
    CHECK_EQ_INT(tci_trace_init(&t), TC_OK);
    for (int i = 0; i < N_THREADS; i++) {
        uint32_t th = tci_trace_add_thread(&t, 100 + (uint64_t)i);
        CHECK(th == (uint32_t)i);
        t.threads[th].records = N_EVENTS / N_THREADS;
    }
    keyed *k = make_events();
    tci_event *out = calloc(N_EVENTS, sizeof *out);
    CHECK(k && out);
    tci_diag d;
    memset(&d, 0, sizeof d);
    tci_merge *m = NULL;
    CHECK_EQ_INT(tci_merge_open(&m, &t, &d), TC_OK);
    for (size_t i = 0; m && k && i < N_EVENTS; i++)
        CHECK_EQ_INT(tci_merge_add(m, &k[i].ev), TC_OK);
    collected c = {out, 0};
    if (m)
        CHECK_EQ_INT(tci_merge_run(m, collect, &c), TC_OK);
    CHECK_EQ_INT(c.n, N_EVENTS);
    if (k)
        qsort(k, N_EVENTS, sizeof *k, by_time_thread_seq);
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; k && i < c.n; i++)
        if (!same_event(&out[i], &k[i].ev) && !bad++)
            first_bad = i;
    if (bad)
        fprintf(stderr, "first difference at event %zu of %zu (%zu differ)\n", first_bad, c.n, bad);
    CHECK_EQ_INT(bad, 0);
    tci_merge_free(m);
    tci_trace_free(&t);
    free(k);
    free(out);
}

static void test_threads_without_events(void)
{
    tci_trace t;
    CHECK_EQ_INT(tci_trace_init(&t), TC_OK);
    for (int i = 0; i < 3; i++)
        tci_trace_add_thread(&t, 1 + (uint64_t)i); /* no records: nothing to merge */
    tci_diag d;
    memset(&d, 0, sizeof d);
    tci_merge *m = NULL;
    CHECK_EQ_INT(tci_merge_open(&m, &t, &d), TC_OK);
    tci_event ev = {.ts_ns = 5, .cpu_ns = TCI_NO_TIME, .thread = 1, .kind = TCI_EV_INSTANT};
    CHECK_EQ_INT(tci_merge_add(m, &ev), TC_OK);
    tci_event got[2];
    collected c = {got, 0};
    CHECK_EQ_INT(tci_merge_run(m, collect, &c), TC_OK);
    CHECK_EQ_INT(c.n, 1);
    CHECK(c.n == 1 && same_event(&got[0], &ev));
    tci_merge_free(m);
    tci_trace_free(&t);
}

int main(void)
{
    UNIT_RUN(test_global_order_through_spilled_blocks);
    UNIT_RUN(test_threads_without_events);
    return UNIT_DONE();
}
