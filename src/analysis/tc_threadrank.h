/*
 * tc_threadrank.h - the order the views show threads in (the flame graph's towers, the report's
 * sections and thread picker, speedscope's profiles, serve's thread picker): the main thread
 * first, then the others by their time outside idle waits, the idle daemons last. Prefix tci_.
 * Not installed; CONTRIBUTING.md, Layers.
 */
#ifndef TC_TC_THREADRANK_H
#define TC_TC_THREADRANK_H

#include "tc_calltree.h"
#include "tc_trace.h"
#include "tc_base.h"

/* Per method of t: 1 when it is one of --ignore-idle's idle waits (select.c's list:
 * MessageQueue.nativePollOnce, Object.wait, Unsafe.park, ...). NULL: no memory. Free with free(). */
uint8_t *tci_idle_methods(const tci_trace *t);

/* Per thread, from a finished call tree (wall, else thread CPU on a CPU-only tree): busy[i] the
 * time of thread i's frames outside idle waits (an idle wait's inclusive time counted once,
 * at its outermost frame), idle[i] the time in them (idle may be NULL). TC_OK, or an error of
 * the walk (canceled). */
int tci_thread_busy_of_tree(const tci_calltree *ct, const uint8_t *idle_method, int64_t *busy, int64_t *idle);

/* The same from the event stream, for a writer without the call tree (speedscope): each
 * enter and exit of a thread in its order (normalize's: well nested, an exit at its frame's
 * depth) adds to framed (the time of its outermost frames) and idle (of its outermost idle
 * waits); busy = framed - idle. Inline: it runs at every event. */
typedef struct tci_busy_thread {
    uint32_t idle_at;             /* depth + 1 of the outermost open idle wait (0: none) */
    int64_t since, idle_since;    /* when the outermost frame, and that idle wait, began */
} tci_busy_thread;
static inline void tci_busy_event(tci_busy_thread *bt, const uint8_t *idle_method, const tci_event *ev,
                                  int64_t *framed, int64_t *idle)
{
    if (ev->kind == TCI_EV_ENTER) {
        if (ev->depth == 0)
            bt->since = ev->ts_ns;
        if (TCI_UNLIKELY(idle_method[ev->method]) && !bt->idle_at) {
            bt->idle_at = ev->depth + 1;
            bt->idle_since = ev->ts_ns;
        }
    } else if (ev->kind == TCI_EV_EXIT) {
        if (TCI_UNLIKELY(bt->idle_at == ev->depth + 1)) {
            *idle += ev->ts_ns > bt->idle_since ? ev->ts_ns - bt->idle_since : 0;
            bt->idle_at = 0;
        }
        if (ev->depth == 0)
            *framed += ev->ts_ns > bt->since ? ev->ts_ns - bt->since : 0;
    }
}

/*
 * order[0..n_threads): the thread indexes of t in the views' order. "Main" first: the thread
 * named "main", else the thread whose tid is the process's pid, else the busiest; then the
 * others by busy time (more first), then by tid. A thread without records comes after every
 * thread with records. busy may be NULL (records stand for it).
 */
void tci_thread_rank(const tci_trace *t, const int64_t *busy, uint32_t *order);

/* Whether idle waits are most of the kept threads' time (idle > busy, summed over the threads). */
bool tci_mostly_idle(const tci_trace *t, const int64_t *busy, const int64_t *idle);

#endif /* TC_TC_THREADRANK_H */
