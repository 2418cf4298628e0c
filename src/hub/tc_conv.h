/*
 * tc_conv.h - the stages of a conversion that the hub runs: normalize, the selection, the
 * time-order merge. The conversion that assembles them (conv.c) is the engine's: engine/tc_engine.h.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_CONV_H
#define TC_TC_CONV_H

#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_trace.h"
#include "tc_writer.h"
#include "tc_base.h"

/* ---- normalize: two passes over a reader, events out --------------------- */

typedef int (*tci_event_fn)(void *user, const tci_event *ev);
typedef int (*tci_ready_fn)(void *user); /* tables final, before the first event */

int tci_normalize_run(tci_rctx *r, const tci_reader *rd, tci_ready_fn ready, tci_event_fn emit,
                      void *user, tc_progress_fn progress, void *progress_user);

/* ---- the selection (select.c): the part of the trace the writers are given ---- */

/* Where the selected events go: both (the same event to every consumer), or, once a thread
 * has ignored time behind it, the timeline as it is and the call tree without that time
 * (timeline or tree NULL: no output reads it, so it is not given). */
typedef struct tci_select_out {
    tci_event_fn both, timeline, tree;
    void *user;
} tci_select_out;
typedef struct tci_select tci_select;
/* Whether the options select anything (else there is no stage: events go straight on). */
bool tci_select_wanted(const tci_options *o);
/* Names final, tables not yet frozen (normalize's select hook): drops the threads not kept
 * (records 0), marks methods, interns focused sample stacks. A spec that matches nothing and
 * an empty window are errors (TC_ERR_EMPTY_SELECTION, in d). */
int tci_select_open(tci_select **s, tci_trace *t, const tci_options *o, const tci_select_out *out, tci_diag *d);
int tci_select_event(tci_select *s, const tci_event *ev); /* each of normalize's events, in its order */
/* --ignore-idle's waits: globs on pkg.Class.method, NULL-ended (doc/cli.md, "Selection"). */
const char *const *tci_idle_wait_globs(void);
void tci_select_free(tci_select *s);

/* ---- merge: global time order for TCI_WF_GLOBAL_ORDER writers (merge.c) ---- */

/* Events are spilled per thread to an unlinked temporary file and k-way merged
 * by (ts_ns, thread index): memory grows with threads, not with events. */
typedef struct tci_merge tci_merge;
int tci_merge_open(tci_merge **m, const tci_trace *t, tci_diag *d); /* tables final */
int tci_merge_add(tci_merge *m, const tci_event *ev); /* in each thread's time order */
int tci_merge_run(tci_merge *m, tci_event_fn fn, void *user); /* every event, globally ordered */
void tci_merge_free(tci_merge *m);
/* The same over n_runs runs of which about `active` get events (join.c: the threads of two
 * inputs); an event's thread is its run. */
int tci_merge_open_runs(tci_merge **m, uint32_t n_runs, uint64_t active, tci_diag *d);
/* Equal times of different runs: an exit first (a slice that ends as another begins does not hold it). */
void tci_merge_exits_first(tci_merge *m);
/* Pulled instead of pushed: start (again: the spilled events are read once more), then
 * next gives 1 and an event, 0 at the end, or < 0. */
int tci_merge_start(tci_merge *m);
int tci_merge_next(tci_merge *m, tci_event *ev);

#endif /* TC_TC_CONV_H */
