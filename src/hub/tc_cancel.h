/*
 * tc_cancel.h - stopping a conversion while its outputs are written (sinks and walks ask the callback).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_CANCEL_H
#define TC_TC_CANCEL_H

#include "tc_base.h"

/* ---- stopping while the outputs are written ------------------------------ */

/*
 * The progress callback can cancel a conversion while it reads (normalize asks it
 * every 256Ki records) and while the outputs are written: the sinks (per 64 KiB
 * handed to the output) and the core's walks of the call tree (per node) spend a
 * budget, and each time it runs out the callback is asked (done == total then).
 * One tci_cancel per conversion; NULL where there is no callback (no cost).
 */
typedef struct tci_cancel {
    int (*ask)(void *user); /* non-zero: stop */
    void *user;
    int64_t budget;         /* work left before the next ask */
    bool stopped;           /* asked and told to stop: every later step says so */
} tci_cancel;

#define TCI_CANCEL_BUDGET ((int64_t)4 << 20) /* about 64 sink buffers, or 64Ki nodes of a walk */
#define TCI_CANCEL_NODE 64                     /* the cost of one node of a walk */

/* Spend cost; true when the conversion must stop (the callback said so, now or before). The
 * whole of it is here: a header with no function of its own elsewhere (nothing to call back). */
static inline bool tci_cancel_step(tci_cancel *c, int64_t cost)
{
    if (TCI_LIKELY(!c))
        return false;
    if (TCI_LIKELY((c->budget -= cost) > 0))
        return c->stopped;
    c->budget = TCI_CANCEL_BUDGET; /* spent: ask the callback, once per budget */
    if (!c->stopped && c->ask(c->user))
        c->stopped = true;
    return c->stopped;
}

#endif /* TC_TC_CANCEL_H */
