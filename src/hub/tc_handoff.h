/*
 * tc_handoff.h - pass 2's events handed from the reading thread to a writing thread
 * (handoff.c; conv.c's threads option). Prefix tci_. Not installed.
 */
#ifndef TC_TC_HANDOFF_H
#define TC_TC_HANDOFF_H

#include "tc_conv.h"

#define TCI_HANDOFF_ROUTES 4 /* consumers an event can be handed to (conv.c: both, timeline, tree) */
#define TCI_HANDOFF_MARKS 3  /* counters of the reading side noted with each event */
#define TCI_HANDOFF_CONSUMERS 4 /* writing threads at most */

typedef struct tci_handoff tci_handoff;

/* One writing thread's share: route[r](user, ev) for the events pushed with route r
 * (NULL: none of its business). */
typedef struct tci_handoff_consumer {
    tci_event_fn route[TCI_HANDOFF_ROUTES];
    void *user;
} tci_handoff_consumer;

/* One writing thread per consumer; each calls its route[r](user, ev) for every pushed
 * event, in push order, until one answers non-zero (then it stops: it has nothing left
 * to do). The reading thread stops when every consumer has stopped, at the last of their
 * stopping events (as one thread, calling them all in turn, would have stopped there).
 * marks: counters the reading thread keeps (its figures); each push notes their values,
 * and a stop puts back the ones noted with that event, so they read as if the reading
 * thread had stopped at that event. marks[0] is best a count that grows by one a push (the
 * events): only the marks' changes beyond that are noted. */
int tci_handoff_start(tci_handoff **h, const tci_handoff_consumer *consumers, size_t n_consumers,
                      uint64_t *const *marks, size_t n_marks);
/* The reading thread's: hand one event over. TC_OK, or the answer of the event that
 * stopped the writing threads (known at a batch's hand-over, so a few later). */
int tci_handoff_push(tci_handoff *h, unsigned route, const tci_event *ev);
/* The reading thread's, always, after its last push (also after a failure): what was
 * pushed is handled, the threads end, the marks are put back after a stop, h is freed.
 * Gives TC_OK, or the answer that stopped the writing threads. */
int tci_handoff_finish(tci_handoff *h);

#endif /* TC_TC_HANDOFF_H */
