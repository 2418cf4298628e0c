/*
 * tc_handoff.h - pass 2's events handed from the reading thread to a writing thread
 * (handoff.c; conv.c's threads option). Prefix tci_. Not installed.
 */
#ifndef TC_TC_HANDOFF_H
#define TC_TC_HANDOFF_H

#include "tc_conv.h"

#define TCI_HANDOFF_ROUTES 4 /* consumers an event can be handed to (conv.c: both, timeline, tree) */
#define TCI_HANDOFF_MARKS 3  /* counters of the reading side noted with each event */

typedef struct tci_handoff tci_handoff;

/* A writing thread that calls route[r](user, ev) for each pushed event, in push order,
 * until one answers non-zero (then it stops: what follows is dropped, as the reading
 * thread would have stopped there). marks: counters the reading thread keeps (its
 * figures); each push notes their values, and a stop puts back the ones noted with the
 * event that stopped it, so they read as if the reading thread had stopped at that event. */
int tci_handoff_start(tci_handoff **h, const tci_event_fn *route, size_t n_routes, void *user,
                      uint64_t *const *marks, size_t n_marks);
/* The reading thread's: hand one event over. TC_OK, or the answer of the event that
 * stopped the writing thread (known at a batch's hand-over, so a few later). */
int tci_handoff_push(tci_handoff *h, unsigned route, const tci_event *ev);
/* The reading thread's, always, after its last push (also after a failure): what was
 * pushed is handled, the thread ends, the marks are put back after a stop, h is freed.
 * Gives TC_OK, or the answer that stopped the writing thread. */
int tci_handoff_finish(tci_handoff *h);

#endif /* TC_TC_HANDOFF_H */
