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
 * the 134 MB ART v3 bench file (doc/performance.md): the reading thread is 75% of
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
 *
 * Several writing threads (conv.c splits several outputs over them, each its own
 * share): each is a consumer reading every batch in push order, a batch is filled again
 * once the slowest is done with it. A consumer that stops (its outputs all failed) only
 * takes batches back; the reading thread stops when every one has stopped, at the last
 * of their stopping events (the one a single thread calling them all would stop at).
 */
#include "tc_handoff.h"
#include "tc_compat.h"

#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* 32 x 2048 events of 32 bytes (the slots below): 2 MB in all, and the marks' changes. A
 * batch amortizes the meeting of the threads (a mutex and a condition variable); 32 of them
 * let either side run ahead when the other is slow for a while. That matters where there
 * are more threads than cores (-o json,perfetto,pprof: the reading thread and two writing
 * threads on two cores): a thread that is ahead and blocked leaves a core idle when the
 * other threads cannot use it. 8 batches: 1.36 s, 32: 1.23 s (median of 8 alternating
 * runs; perfetto or pprof alone unchanged).
 *
 * A writing thread that has caught up sleeps until half the ring is full again, counted
 * from its own place, and a reading thread that found the ring full sleeps until half of
 * it is free: woken for every batch, either costs a futex wake and two context switches
 * per 2048 events (+50% CPU on a loaded VM). Two writing threads woken together, the
 * faster for the one batch the slower had just let go, made 70,000 futex calls of
 * -o json,perfetto,pprof's 4,700 batches. */
#define HANDOFF_BATCH 2048
#define HANDOFF_RING 32
#define HANDOFF_WAKE (HANDOFF_RING / 2)

/* The marks from event `at` of a batch on, until the next change. The first mark (the
 * events counted) grows by one an event: it is kept less the event's index, so that it
 * does not change. Noting every event's marks cost a third of the bytes the reading
 * thread wrote, and it is the thread that bounds a conversion (doc/performance.md). */
typedef struct mark_change {
    uint32_t at;
    uint64_t mark[TCI_HANDOFF_MARKS];
} mark_change;

/* An event as the ring holds it, with its route: 32 bytes, two stores. A call's enter or
 * exit (nearly every event) has neither value nor id; an event that has one keeps them in
 * its batch's extras, found through `more`, where the others keep their depth. The 48-byte
 * tci_event and a route array beside it made the copy into the ring 9% of -o json's
 * samples, a fifth of the reading thread's time in pass 2. */
typedef struct slot {
    int64_t ts_ns, cpu_ns;
    uint32_t thread, method;
    uint32_t more; /* the depth, or (has_extra) the index of the extra */
    uint8_t kind, flags, route, has_extra;
} slot;
_Static_assert(sizeof(slot) == 32, "a slot is two 16-byte stores");

typedef struct extra {
    double value;
    uint64_t id;
    uint32_t depth;
} extra;

typedef struct batch {
    _Alignas(64) size_t n;
    size_t n_changes, n_extras;
    _Alignas(64) slot ev[HANDOFF_BATCH];
    extra extras[HANDOFF_BATCH];
    mark_change change[HANDOFF_BATCH];
} batch;

/* One writing thread: its routes, the batches it has handled, where it stopped. */
typedef struct consumer {
    tci_handoff_consumer fn;
    struct tci_handoff *h;
    pthread_t thread;
    bool started;
    pthread_cond_t wake; /* signalled when it is asleep and has half the ring to handle */
    bool asleep;         /* waiting for batches; under the lock */
    uint64_t done;     /* batches handled (sequence numbers below it); under the lock */
    int stop_rc;       /* the answer that stopped it (TC_OK: none); under the lock */
    uint64_t stop_seq; /* ... at this event (batch sequence x HANDOFF_BATCH + index) */
    uint64_t stop_mark[TCI_HANDOFF_MARKS];
} consumer;

struct tci_handoff {
    /* the reading thread's, read at every push: a cache line of their own, away from the
     * lock and the counts the writing threads write (else each hand-over steals it) */
    _Alignas(64) batch *fill; /* the batch being filled (ring[sent % HANDOFF_RING]) */
    size_t n_marks;
    uint64_t *marks[TCI_HANDOFF_MARKS];
    uint64_t noted[TCI_HANDOFF_MARKS]; /* the fill batch's last change */
    batch *ring;         /* HANDOFF_RING batches */
    size_t n_consumers;
    consumer cons[TCI_HANDOFF_CONSUMERS];
    _Alignas(64) pthread_mutex_t lock; /* guards what follows (and each consumer's done, stop_*) */
    pthread_cond_t emptied;
    uint64_t sent;       /* batches handed over; a batch is free again when every consumer is done with it */
    bool ended;          /* no more batches will come */
    bool reader_waiting; /* the reading thread waits for half the ring to be free */
};

/* The marks noted with event i of b: the last change at or before it. */
static void marks_at(const batch *b, size_t i, uint64_t *mark)
{
    size_t lo = 0, hi = b->n_changes; /* change[0].at is 0: the first push notes its marks */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->change[mid].at <= i)
            lo = mid;
        else
            hi = mid;
    }
    memcpy(mark, b->change[lo].mark, sizeof b->change[lo].mark);
    mark[0] += i;
}

/* The event a slot holds, as it was pushed. */
static inline void take_event(const batch *b, const slot *s, tci_event *ev)
{
    *ev = (tci_event){.ts_ns = s->ts_ns, .cpu_ns = s->cpu_ns, .thread = s->thread, .method = s->method,
                      .depth = s->more, .kind = s->kind, .flags = s->flags};
    if (TCI_UNLIKELY(s->has_extra)) {
        const extra *x = &b->extras[s->more];
        ev->value = x->value;
        ev->id = x->id;
        ev->depth = x->depth;
    }
}

/* One consumer's part of one batch (sequence seq); a non-zero answer stops it for good. */
static void handle_batch(consumer *c, const batch *b, uint64_t seq, int *stopped, uint64_t *stop_seq, uint64_t *mark)
{
    for (size_t i = 0; i < b->n && !*stopped; i++) {
        if (i + 16 < HANDOFF_BATCH)
            __builtin_prefetch(&b->ev[i + 16]); /* the ring was written past the caches: ask for it ahead */
        const slot *s = &b->ev[i];
        tci_event_fn fn = c->fn.route[s->route];
        if (!fn)
            continue;
        tci_event ev;
        take_event(b, s, &ev);
        int rc = fn(c->fn.user, &ev);
        if (TCI_UNLIKELY(rc != TC_OK)) {
            *stopped = rc;
            *stop_seq = seq * HANDOFF_BATCH + i;
            marks_at(b, i, mark);
        }
    }
}

/* The batches no consumer still needs: the slowest one's count. Under the lock. */
static uint64_t all_done(const tci_handoff *h)
{
    uint64_t least = UINT64_MAX;
    for (size_t k = 0; k < h->n_consumers; k++)
        if (h->cons[k].done < least)
            least = h->cons[k].done;
    return least;
}

static void *writing_thread(void *arg)
{
    consumer *c = arg;
    tci_handoff *h = c->h;
    int stopped = TC_OK;
    uint64_t stop_seq = 0, mark[TCI_HANDOFF_MARKS] = {0};
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (c->done == h->sent && !h->ended) {
            c->asleep = true;
            pthread_cond_wait(&c->wake, &h->lock);
            c->asleep = false;
        }
        if (c->done == h->sent)
            break;
        uint64_t seq = c->done;
        const batch *b = &h->ring[seq % HANDOFF_RING];
        pthread_mutex_unlock(&h->lock);
        handle_batch(c, b, seq, &stopped, &stop_seq, mark); /* after a stop: batches are only taken back */
        pthread_mutex_lock(&h->lock);
        if (stopped && c->stop_rc == TC_OK) {
            c->stop_rc = stopped;
            c->stop_seq = stop_seq;
            memcpy(c->stop_mark, mark, sizeof mark);
        }
        c->done++;
        if (h->reader_waiting && h->sent - all_done(h) <= HANDOFF_RING - HANDOFF_WAKE)
            pthread_cond_signal(&h->emptied);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* Every consumer stopped: the last of them to stop (in push order) is where one thread
 * would have stopped. NULL while one goes on. Under the lock, or after the joins. */
static const consumer *stopped_at(const tci_handoff *h)
{
    const consumer *last = NULL;
    for (size_t k = 0; k < h->n_consumers; k++) {
        const consumer *c = &h->cons[k];
        if (c->stop_rc == TC_OK)
            return NULL;
        if (!last || c->stop_seq > last->stop_seq)
            last = c;
    }
    return last;
}

/* The writing thread takes no asynchronous signal (SIGINT, SIGTERM, ...): they reach the
 * threads they reached before (the caller's handlers run where they always ran). The
 * synchronous ones (SIGBUS of a shrunk input, SIGPIPE, SIGXFSZ) go to the thread that
 * caused them, whatever its mask says for the others. */
static int start_thread(consumer *c)
{
    sigset_t all, old;
    sigfillset(&all);
    int synchronous[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGPIPE, SIGXFSZ};
    for (size_t i = 0; i < sizeof synchronous / sizeof *synchronous; i++)
        sigdelset(&all, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&c->thread, NULL, writing_thread, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* The writing threads asleep with at least `least` batches to handle are woken. Under the lock. */
static void wake_consumers(tci_handoff *h, uint64_t least)
{
    for (size_t k = 0; k < h->n_consumers; k++) {
        consumer *c = &h->cons[k];
        if (c->asleep && h->sent - c->done >= least)
            pthread_cond_signal(&c->wake);
    }
}

/* No more batches will come: every writing thread is told. */
static void announce_end(tci_handoff *h)
{
    pthread_mutex_lock(&h->lock);
    h->ended = true;
    wake_consumers(h, 0);
    pthread_mutex_unlock(&h->lock);
}

/* The threads are told the end, joined, and everything is released. */
static void end_threads(tci_handoff *h)
{
    announce_end(h);
    for (size_t k = 0; k < h->n_consumers; k++)
        if (h->cons[k].started)
            pthread_join(h->cons[k].thread, NULL);
    for (size_t k = 0; k < h->n_consumers; k++)
        pthread_cond_destroy(&h->cons[k].wake);
    pthread_cond_destroy(&h->emptied);
    pthread_mutex_destroy(&h->lock);
    munmap(h->ring, HANDOFF_RING * sizeof *h->ring);
    free(h);
}

int tci_handoff_start(tci_handoff **out, const tci_handoff_consumer *consumers, size_t n_consumers,
                      uint64_t *const *marks, size_t n_marks)
{
    *out = NULL;
    if (!n_consumers || n_consumers > TCI_HANDOFF_CONSUMERS || n_marks > TCI_HANDOFF_MARKS)
        return TC_ERR_USAGE;
    tci_handoff *h = aligned_alloc(64, sizeof *h); /* the sizes are multiples of 64 (_Alignas) */
    if (!h)
        return TC_ERR_NOMEM;
    memset(h, 0, sizeof *h);
    /* mapped, not allocated: a conversion pays for the pages it fills (a small one, for a
     * part of the first batch), and a sanitized build does not poison 5.6 MB of shadow for
     * each one (the fuzz replay's threads=2 conversions: +10% of its time) */
    void *ring = tci_map_anon(NULL, HANDOFF_RING * sizeof *h->ring, PROT_READ | PROT_WRITE);
    if (ring == MAP_FAILED) {
        free(h);
        return TC_ERR_NOMEM;
    }
    h->ring = ring; /* page-aligned: the batches' 64-byte alignment holds */
    static uint64_t no_mark; /* read, never written: the marks put back are the first n_marks */
    for (size_t k = 0; k < TCI_HANDOFF_MARKS; k++)
        h->marks[k] = k < n_marks ? marks[k] : &no_mark;
    h->n_marks = n_marks;
    h->n_consumers = n_consumers;
    h->fill = &h->ring[0];
    h->fill->n = h->fill->n_changes = h->fill->n_extras = 0;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->emptied, NULL);
    for (size_t k = 0; k < n_consumers; k++)
        pthread_cond_init(&h->cons[k].wake, NULL); /* all before any thread: end_threads destroys them all */
    for (size_t k = 0; k < n_consumers; k++) {
        consumer *c = &h->cons[k];
        c->fn = consumers[k];
        c->h = h;
        if (start_thread(c) != 0) {
            end_threads(h); /* none has been handed anything */
            return TC_ERR_NOMEM; /* no thread to be had: the caller goes on with one */
        }
        c->started = true;
    }
    *out = h;
    return TC_OK;
}

/* An event into the ring past the caches (x86: non-temporal stores, then a fence at the
 * hand-over). A plain copy must first own each line, and the line is in the other core's
 * cache, which read it when the ring last came round: that transfer was a third of the
 * reading thread's time, and made -j 2 slower than -j 1 on two idle cores (perf: the
 * copy's stores 34% of the samples; ART -> perfetto 0.75 s against 0.66 s, now 0.47 s).
 * Under load both threads share a core and the lines never move, which hid it. */
/* The slot of ev (more: its depth or extra; the kind, flags, route and has_extra bytes).
 * The two halves are made in registers: a slot built in memory field by field, then read
 * back 16 bytes at a time, waited on the stores (no forwarding from several narrow
 * stores to one wide load), and cost more than the 48 bytes it saved. */
#if defined(__SSE2__) && defined(__x86_64__)
_Static_assert(offsetof(batch, ev) % 16 == 0, "slots are written 16 bytes at a time");
_Static_assert(offsetof(tci_event, cpu_ns) == 8 && offsetof(slot, cpu_ns) == 8 && offsetof(slot, thread) == 16 &&
                   offsetof(tci_event, method) == offsetof(tci_event, thread) + 4 && offsetof(slot, more) == 24 &&
                   offsetof(slot, kind) == 28 && offsetof(slot, flags) == 29 && offsetof(slot, route) == 30,
               "the halves below are laid out as these structs (x86-64: little-endian)");
static inline void put_slot(slot *dst, const tci_event *ev, uint32_t more, uint8_t route, uint8_t has_extra)
{
    uint64_t thread_method;
    memcpy(&thread_method, &ev->thread, sizeof thread_method);
    uint64_t tail = (uint64_t)ev->kind | (uint64_t)ev->flags << 8 | (uint64_t)route << 16 | (uint64_t)has_extra << 24;
    __m128i times = _mm_loadu_si128((const __m128i *)(const void *)&ev->ts_ns);
    __m128i rest = _mm_set_epi64x((long long)(more | tail << 32), (long long)thread_method);
    _mm_stream_si128((__m128i *)(void *)dst, times);
    _mm_stream_si128((__m128i *)(void *)dst + 1, rest);
}
static inline void put_fence(void) { _mm_sfence(); } /* the events are seen before the batch is handed over */
#else
static inline void put_slot(slot *dst, const tci_event *ev, uint32_t more, uint8_t route, uint8_t has_extra)
{
    *dst = (slot){.ts_ns = ev->ts_ns, .cpu_ns = ev->cpu_ns, .thread = ev->thread, .method = ev->method,
                  .more = more, .kind = ev->kind, .flags = ev->flags, .route = route, .has_extra = has_extra};
}
static inline void put_fence(void) {}
#endif

/* The filled batch goes to the writing threads; the next free one is filled. */
static int hand_over(tci_handoff *h)
{
    put_fence();
    pthread_mutex_lock(&h->lock);
    h->sent++;
    wake_consumers(h, HANDOFF_WAKE);
    if (h->sent - all_done(h) == HANDOFF_RING) { /* every batch is full: the next to fill is being handled */
        wake_consumers(h, 1); /* none asleep holds a batch with WAKE <= RING; a wake costs nothing then */
        h->reader_waiting = true;
        while (h->sent - all_done(h) > HANDOFF_RING - HANDOFF_WAKE)
            pthread_cond_wait(&h->emptied, &h->lock);
        h->reader_waiting = false;
    }
    const consumer *stop = stopped_at(h);
    int rc = stop ? stop->stop_rc : TC_OK;
    pthread_mutex_unlock(&h->lock);
    h->fill = &h->ring[h->sent % HANDOFF_RING];
    h->fill->n = h->fill->n_changes = h->fill->n_extras = 0;
    return rc;
}

/* The marks as event i notes them, when they are not those of the last change. Unused
 * marks point at a zero (tci_handoff_start), so the test is three loads and compares. */
static inline void note_marks(tci_handoff *h, batch *b, size_t i)
{
    uint64_t m0 = *h->marks[0] - i, m1 = *h->marks[1], m2 = *h->marks[2]; /* m0 wraps as it likes: marks_at adds i back */
    if (TCI_LIKELY(b->n_changes) && m0 == h->noted[0] && m1 == h->noted[1] && m2 == h->noted[2])
        return;
    mark_change *ch = &b->change[b->n_changes++];
    ch->at = (uint32_t)i;
    ch->mark[0] = h->noted[0] = m0, ch->mark[1] = h->noted[1] = m1, ch->mark[2] = h->noted[2] = m2;
}

int tci_handoff_push(tci_handoff *h, unsigned route, const tci_event *ev)
{
    batch *b = h->fill;
    size_t i = b->n++;
    uint64_t value_bits;
    memcpy(&value_bits, &ev->value, sizeof value_bits); /* -0.0 is not 0 here */
    if (TCI_LIKELY(!(value_bits | ev->id))) {
        put_slot(&b->ev[i], ev, ev->depth, (uint8_t)route, 0);
    } else {
        put_slot(&b->ev[i], ev, (uint32_t)b->n_extras, (uint8_t)route, 1);
        b->extras[b->n_extras++] = (extra){ev->value, ev->id, ev->depth};
    }
    note_marks(h, b, i);
    return TCI_LIKELY(b->n < HANDOFF_BATCH) ? TC_OK : hand_over(h);
}

int tci_handoff_finish(tci_handoff *h)
{
    if (!h)
        return TC_OK;
    if (h->fill->n)
        hand_over(h);
    announce_end(h);
    for (size_t k = 0; k < h->n_consumers; k++) {
        pthread_join(h->cons[k].thread, NULL);
        h->cons[k].started = false;
    }
    const consumer *stop = stopped_at(h);
    int rc = stop ? stop->stop_rc : TC_OK;
    if (stop)
        for (size_t k = 0; k < h->n_marks; k++)
            *h->marks[k] = stop->stop_mark[k];
    end_threads(h);
    return rc;
}
