/*
 * core_handoff.c - the hand-over of pass 2's events to writing threads (handoff.c), alone:
 * every consumer gets every event of its routes, as pushed and in push order, whatever the speeds of the
 * threads; a stop of every consumer reaches the reading thread with the answer of the last
 * of their stopping events, and the marks read as they were at that event; nothing hangs.
 *
 * The speeds are what the wake-ups depend on (a writing thread sleeps until half the ring
 * waits for it, the reading thread until half the ring is free), so each case changes which
 * thread is slow as it goes: each consumer in turn sleeps a little at every event of its
 * phase, and the reading thread pauses now and then so that the consumers catch up and
 * sleep. A lost wake-up is a hang: an alarm ends the program with the case's seed.
 *
 * Each run takes a random seed and prints it; TC_HANDOFF_SEED=N replays run N exactly.
 */
#include "tc_base.h"
#include "tc_handoff.h"
#include "unit.h"

#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define PHASE 20000 /* events a consumer stays the slow one */

typedef struct consumer_state {
    int k;              /* its index */
    unsigned routes;    /* the routes it takes (bit r: route r) */
    uint64_t next;      /* the id it expects next, among the events of its routes */
    uint64_t seen, sum; /* events and the sum of their ids */
    int64_t stop_at;    /* answers TC_ERR_IO at this id (-1: never) */
    bool stopped;       /* it answered so: it must not be called again */
    bool out_of_order, called_after_stop, altered;
    unsigned n_consumers;
} consumer_state;

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* The route of event id: a hash, so the pushing side and the check agree without a table. */
static unsigned route_of(uint64_t id, uint64_t salt)
{
    uint64_t x = (id + 1) * 0x9E3779B97F4A7C15ull ^ salt;
    x ^= x >> 29;
    return (unsigned)(x % 3);
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static uint64_t case_salt;

/* Event id as pushed: the id is its time; value, id and depth vary, so that both forms of
 * the ring's slots (with and without an extra) are taken, -0.0 among the values. */
static tci_event event_of(uint64_t id)
{
    tci_event ev = {.ts_ns = (int64_t)id, .cpu_ns = id % 5 ? (int64_t)id * 2 : TCI_NO_TIME, .thread = (uint32_t)(id % 13),
                    .method = (uint32_t)id ^ 0x5a5a, .depth = (uint32_t)(id % 1000), .kind = (uint8_t)(1 + id % 2),
                    .flags = (uint8_t)(id % 4)};
    if (id % 7 == 0)
        ev.id = id * 3 + 1;
    if (id % 11 == 0)
        ev.value = id % 22 ? -0.0 : (double)id * 0.25;
    return ev;
}

static bool same_event(const tci_event *a, const tci_event *b)
{
    return a->ts_ns == b->ts_ns && a->cpu_ns == b->cpu_ns && a->thread == b->thread && a->method == b->method &&
           a->depth == b->depth && a->kind == b->kind && a->flags == b->flags && a->id == b->id &&
           !memcmp(&a->value, &b->value, sizeof a->value);
}

static int take(void *user, const tci_event *ev)
{
    consumer_state *c = user;
    if (c->stopped) {
        c->called_after_stop = true;
        return TC_ERR_IO;
    }
    uint64_t id = (uint64_t)ev->ts_ns;
    tci_event want = event_of(id);
    if (!same_event(ev, &want))
        c->altered = true;
    while (c->next < id && !((c->routes >> route_of(c->next, case_salt)) & 1))
        c->next++; /* the ids between were other routes' */
    if (id != c->next || !((c->routes >> route_of(id, case_salt)) & 1))
        c->out_of_order = true;
    c->next = id + 1;
    c->seen++;
    c->sum += id;
    if ((id / PHASE) % c->n_consumers == (uint64_t)c->k && id % 64 == 0)
        pause_us(20); /* the slow one in this phase */
    if ((int64_t)id == c->stop_at) {
        c->stopped = true;
        return TC_ERR_IO;
    }
    return TC_OK;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "core_handoff: no progress for 60 s (a lost wake-up?)\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(2);
}

/* One case: n events to n_consumers consumers, each stopping at stop[k] (-1: never). */
static void run_case(uint64_t n, unsigned n_consumers, const int64_t *stop)
{
    consumer_state st[TCI_HANDOFF_CONSUMERS];
    tci_handoff_consumer cons[TCI_HANDOFF_CONSUMERS];
    for (unsigned k = 0; k < n_consumers; k++) {
        /* every consumer takes route 0; routes 1 and 2 by turns (conv.c: both, timeline, tree) */
        st[k] = (consumer_state){.k = (int)k, .routes = 1u | (k % 2 ? 4u : 2u), .stop_at = stop[k], .n_consumers = n_consumers};
        for (unsigned r = 0; r < TCI_HANDOFF_ROUTES; r++)
            cons[k].route[r] = ((st[k].routes >> r) & 1) ? take : NULL;
        cons[k].user = &st[k];
    }
    alarm(60); /* per case */
    uint64_t pushed = 0, other = 7;
    uint64_t *marks[] = {&pushed, &other};
    tci_handoff *h = NULL;
    CHECK_EQ_INT(tci_handoff_start(&h, cons, n_consumers, marks, 2), TC_OK);
    if (!h)
        return;
    /* the last of the stopping events, when every consumer stops */
    int64_t last_stop = -1;
    bool all_stop = true;
    for (unsigned k = 0; k < n_consumers; k++) {
        /* a consumer stops at its stop id only if an event of its routes has that id: else at the next one */
        int64_t at = stop[k];
        while (at >= 0 && (uint64_t)at < n && !((st[k].routes >> route_of((uint64_t)at, case_salt)) & 1))
            at++;
        if (at < 0 || (uint64_t)at >= n)
            all_stop = false;
        else if (at > last_stop)
            last_stop = at;
        st[k].stop_at = at;
    }
    int rc = TC_OK;
    uint64_t id = 0;
    for (; id < n && rc == TC_OK; id++) {
        pushed++; /* as the events figure: counted, then the event handed over */
        if (id % 100000 == 50000)
            other++; /* a mark that changes in the middle of a batch */
        tci_event ev = event_of(id);
        rc = tci_handoff_push(h, route_of(id, case_salt), &ev);
        if (id % 30011 == 0)
            pause_us(2000); /* the consumers catch up and sleep */
    }
    int end = tci_handoff_finish(h);
    if (all_stop) {
        CHECK_EQ_INT(end, TC_ERR_IO);
        CHECK_EQ_INT(pushed, (uint64_t)last_stop + 1); /* put back to the stopping event's */
        CHECK_EQ_INT(other, 7 + (last_stop >= 50000 ? (uint64_t)(last_stop - 50000) / 100000 + 1 : 0)); /* +1 at 50000, 150000, ... */
    } else {
        CHECK_EQ_INT(rc, TC_OK);
        CHECK_EQ_INT(end, TC_OK);
        CHECK_EQ_INT(pushed, n);
    }
    for (unsigned k = 0; k < n_consumers; k++) {
        consumer_state *c = &st[k];
        CHECK(!c->out_of_order);
        CHECK(!c->altered); /* every field as pushed */
        CHECK(!c->called_after_stop);
        uint64_t until = c->stop_at >= 0 && (uint64_t)c->stop_at < n ? (uint64_t)c->stop_at + 1 : n;
        uint64_t seen = 0, sum = 0;
        for (uint64_t i = 0; i < until; i++)
            if ((c->routes >> route_of(i, case_salt)) & 1)
                seen++, sum += i;
        CHECK_EQ_INT(c->seen, seen); /* every event of its routes up to its stop, none after */
        CHECK_EQ_INT(c->sum, sum);
    }
}

static uint64_t run_seed;

static void test_every_event_in_order(void)
{
    for (unsigned n_consumers = 1; n_consumers <= TCI_HANDOFF_CONSUMERS; n_consumers++) {
        int64_t never[TCI_HANDOFF_CONSUMERS] = {-1, -1, -1, -1};
        case_salt = rng();
        run_case(400000 + rng() % 5000, n_consumers, never); /* not a whole number of batches */
    }
}

static void test_stops(void)
{
    for (unsigned n_consumers = 1; n_consumers <= TCI_HANDOFF_CONSUMERS; n_consumers++) {
        int64_t stop[TCI_HANDOFF_CONSUMERS];
        for (unsigned k = 0; k < TCI_HANDOFF_CONSUMERS; k++)
            stop[k] = (int64_t)(rng() % 390000);
        case_salt = rng();
        run_case(400000, n_consumers, stop); /* every consumer stops: the last stop is the reader's */
        if (n_consumers > 1) {
            stop[rng() % n_consumers] = -1; /* one goes on: the reader never stops */
            case_salt = rng();
            run_case(400000, n_consumers, stop);
        }
    }
}

int main(void)
{
    const char *replay = getenv("TC_HANDOFF_SEED");
    run_seed = replay && *replay ? strtoull(replay, NULL, 10) : ((uint64_t)time(NULL) << 16 ^ (uint64_t)getpid());
    if (!run_seed)
        run_seed = 1;
    rng_state = run_seed;
    printf("core_handoff: seed %llu (TC_HANDOFF_SEED=%llu replays it)\n", (unsigned long long)run_seed,
           (unsigned long long)run_seed);
    fflush(stdout);
    signal(SIGALRM, on_alarm);
    UNIT_RUN(test_every_event_in_order);
    UNIT_RUN(test_stops);
    return UNIT_DONE();
}
