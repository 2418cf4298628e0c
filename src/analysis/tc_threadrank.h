/*
 * tc_threadrank.h - the order the views show threads in (the flame graph's towers, the report's
 * sections and thread picker, speedscope's profiles, serve's thread picker): the main thread
 * first, then the others by their time outside idle waits, the idle daemons last. Prefix tci_.
 * Not installed; README.md, Layout.
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

/* The same from the event stream, for a writer without the call tree (speedscope): feed each
 * enter and exit of a thread, in its order (normalize's, well nested). */
typedef struct tci_busy_thread {
    uint32_t depth, idle_depth; /* open frames, and open idle-wait frames */
    int64_t since, idle_since;  /* when the outermost frame, and the outermost idle wait, began */
} tci_busy_thread;
void tci_busy_event(tci_busy_thread *bt, const uint8_t *idle_method, const tci_event *ev, int64_t *busy,
                    int64_t *idle);

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
