/*
 * handoff.c - pass 2's events from the reading thread to a writing thread.
 *
 * With option threads above 1, one conversion uses two threads: the reading thread
 * runs the reader, normalize and the selection; the writing thread runs everything
 * the events reach after that (call tree, writers, the global-order merge, sinks and
 * gzip). The events cross in batches through a small fixed ring, so memory does not
 * grow with the input and the threads meet once per batch, not once per event. The
 * writing thread calls the very functions the reading thread would have called, in
 * the same order, so the outputs are the same bytes.
 *
 * Why this split: it needs no change to any reader, normalize or writer, and each
 * side's state stays its own (the reading side's diag and tables; the outputs' diags,
 * the tree's and the merge's). What it gains is bounded by the reading thread: pass 1
 * (reader + normalize, no events) must end before pass 2 starts (the reconstructed
 * frames, the trace's start and the frozen tables come from it), so a conversion takes
 * P1 + max(P2 read, W) + finish instead of P1 + P2 + W + finish. Measured with perf on
 * the 134 MB ART v3 bench file (README, Memory and speed): the reading thread is 75% of
 * the CPU for perfetto, 56-65% for json, folded and pprof, so 1.13-1.5x on two cores.
 * More needs pass 1 split too (its per-thread machines are independent).
 *
 * The reading thread stops where it would have stopped on one thread: a consumer's
 * non-zero answer (every output failed) stops the writing thread at that event and
 * reaches the reading thread at its next hand-over; the events it pushed meanwhile
 * are dropped, and its counters (the figures: events, samples, left out) are put
 * back to their values at the stopping event, noted with each event (marks). A
 * failure of the reading side (a format error, a cancel) ends its pushes: what it
 * pushed before is still handled, as one thread would have handled it.
 */
#define _GNU_SOURCE
#include "tc_handoff.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

/* 8 x 2048 events of 73 bytes (event, route, marks): 1.2 MB in all, fixed. A batch
 * amortizes the meeting of the threads (a mutex and a condition variable); eight of them
 * let either side run ahead when the other is slow for a moment. A writing thread that
 * has caught up sleeps until half the ring is full again: woken for every batch, it cost
 * a futex wake and two context switches per 2048 events, +50% CPU on a loaded VM. */
#define HANDOFF_BATCH 2048
#define HANDOFF_RING 8
#define HANDOFF_WAKE (HANDOFF_RING / 2)

typedef struct batch {
    _Alignas(64) size_t n;
    tci_event ev[HANDOFF_BATCH];
    uint8_t route[HANDOFF_BATCH];
    uint64_t mark[HANDOFF_BATCH][TCI_HANDOFF_MARKS];
} batch;

struct tci_handoff {
    /* the reading thread's, read at every push: a cache line of their own, away from the
     * lock and the counts the writing thread writes (else each hand-over steals it) */
    _Alignas(64) batch *fill; /* the batch being filled (ring[tail]) */
    size_t n_marks;
    uint64_t *marks[TCI_HANDOFF_MARKS];
    _Alignas(64) tci_event_fn route[TCI_HANDOFF_ROUTES];
    void *user;
    batch *ring;         /* HANDOFF_RING batches */
    pthread_t thread;
    _Alignas(64) pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t filled, emptied;
    size_t head, tail, count; /* batches handed over and not yet handled: ring[head..] */
    bool ended;          /* no more batches will come */
    int stop_rc;         /* the consumer's answer that stopped the writing thread (TC_OK: none) */
    uint64_t stop_mark[TCI_HANDOFF_MARKS];
};

/* The writing thread's part of one batch; a non-zero answer stops it for good. */
static void handle_batch(tci_handoff *h, batch *b, int *stopped, uint64_t *mark)
{
    for (size_t i = 0; i < b->n && !*stopped; i++) {
        int rc = h->route[b->route[i]](h->user, &b->ev[i]);
        if (TCI_UNLIKELY(rc != TC_OK)) {
            *stopped = rc;
            memcpy(mark, b->mark[i], sizeof b->mark[i]);
        }
    }
}

static void *writing_thread(void *arg)
{
    tci_handoff *h = arg;
    int stopped = TC_OK;
    uint64_t mark[TCI_HANDOFF_MARKS] = {0};
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->count && !h->ended)
            pthread_cond_wait(&h->filled, &h->lock);
        if (!h->count)
            break;
        batch *b = &h->ring[h->head];
        pthread_mutex_unlock(&h->lock);
        handle_batch(h, b, &stopped, mark); /* after a stop: batches are only taken back */
        pthread_mutex_lock(&h->lock);
        if (stopped && h->stop_rc == TC_OK) {
            h->stop_rc = stopped;
            memcpy(h->stop_mark, mark, sizeof mark);
        }
        h->head = (h->head + 1) % HANDOFF_RING;
        h->count--;
        pthread_cond_signal(&h->emptied);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* The writing thread takes no asynchronous signal (SIGINT, SIGTERM, ...): they reach the
 * threads they reached before (the caller's handlers run where they always ran). The
 * synchronous ones (SIGBUS of a shrunk input, SIGPIPE, SIGXFSZ) go to the thread that
 * caused them, whatever its mask says for the others. */
static int start_thread(tci_handoff *h)
{
    sigset_t all, old;
    sigfillset(&all);
    int synchronous[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGPIPE, SIGXFSZ};
    for (size_t i = 0; i < sizeof synchronous / sizeof *synchronous; i++)
        sigdelset(&all, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&h->thread, NULL, writing_thread, h);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int tci_handoff_start(tci_handoff **out, const tci_event_fn *route, size_t n_routes, void *user,
                      uint64_t *const *marks, size_t n_marks)
{
    *out = NULL;
    if (n_routes > TCI_HANDOFF_ROUTES || n_marks > TCI_HANDOFF_MARKS)
        return TC_ERR_USAGE;
    tci_handoff *h = aligned_alloc(64, sizeof *h); /* the sizes are multiples of 64 (_Alignas) */
    if (!h)
        return TC_ERR_NOMEM;
    memset(h, 0, sizeof *h);
    if (!(h->ring = aligned_alloc(64, HANDOFF_RING * sizeof *h->ring))) {
        free(h);
        return TC_ERR_NOMEM;
    }
    memcpy(h->route, route, n_routes * sizeof *route);
    memcpy(h->marks, marks, n_marks * sizeof *marks);
    h->n_marks = n_marks;
    h->user = user;
    h->fill = &h->ring[0];
    h->fill->n = 0;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->filled, NULL);
    pthread_cond_init(&h->emptied, NULL);
    if (start_thread(h) != 0) {
        pthread_cond_destroy(&h->emptied);
        pthread_cond_destroy(&h->filled);
        pthread_mutex_destroy(&h->lock);
        free(h->ring);
        free(h);
        return TC_ERR_NOMEM; /* no thread to be had: the caller goes on with one */
    }
    *out = h;
    return TC_OK;
}

/* The filled batch goes to the writing thread; the next free one is filled. */
static int hand_over(tci_handoff *h)
{
    pthread_mutex_lock(&h->lock);
    h->count++;
    h->tail = (h->tail + 1) % HANDOFF_RING;
    if (h->count >= HANDOFF_WAKE)
        pthread_cond_signal(&h->filled);
    while (h->count == HANDOFF_RING) /* every batch is full: the next to fill is being handled */
        pthread_cond_wait(&h->emptied, &h->lock);
    int rc = h->stop_rc;
    pthread_mutex_unlock(&h->lock);
    h->fill = &h->ring[h->tail];
    h->fill->n = 0;
    return rc;
}

int tci_handoff_push(tci_handoff *h, unsigned route, const tci_event *ev)
{
    batch *b = h->fill;
    size_t i = b->n++;
    b->ev[i] = *ev;
    b->route[i] = (uint8_t)route;
    for (size_t k = 0; k < h->n_marks; k++)
        b->mark[i][k] = *h->marks[k];
    return TCI_LIKELY(b->n < HANDOFF_BATCH) ? TC_OK : hand_over(h);
}

int tci_handoff_finish(tci_handoff *h)
{
    if (!h)
        return TC_OK;
    if (h->fill->n)
        hand_over(h);
    pthread_mutex_lock(&h->lock);
    h->ended = true;
    pthread_cond_signal(&h->filled);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->thread, NULL);
    int rc = h->stop_rc;
    if (rc != TC_OK)
        for (size_t k = 0; k < h->n_marks; k++)
            *h->marks[k] = h->stop_mark[k];
    pthread_cond_destroy(&h->emptied);
    pthread_cond_destroy(&h->filled);
    pthread_mutex_destroy(&h->lock);
    free(h->ring);
    free(h);
    return rc;
}
