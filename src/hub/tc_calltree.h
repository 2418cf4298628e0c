/*
 * tc_calltree.h - the call tree the aggregating writers receive.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_CALLTREE_H
#define TC_TC_CALLTREE_H

#include "tc_cancel.h"
#include "tc_diag.h"
#include "tc_trace.h"
#include "tc_base.h"

/* ---- call tree (aggregating writers) ------------------------------------ */

typedef struct tci_ctnode {
    uint32_t parent;       /* TCI_NONE for a thread root */
    uint32_t method;       /* TCI_NONE for a thread root */
    uint32_t thread;
    uint32_t first_child, next_sibling;
    uint32_t last_child;   /* the child entered last: most calls repeat it */
    uint64_t calls;               /* calls, or samples */
    int64_t sampled;              /* weight of samples whose leaf is this node, ns (a count: TCI_COUNT_NS each) */
    int64_t wall_total, cpu_total; /* inclusive ns (a count tree: wall is the sampled counts, cpu 0) */
    int64_t wall_self, cpu_self;   /* exclusive ns (after tci_calltree_finish) */
} tci_ctnode;

/* ---- what the aggregates weigh ------------------------------------------------ */

/*
 * Sampled stacks weigh time (ns: a CPU profile's, Rhea's) or counts (Linux perf's samples in
 * Chrome JSON: cycles of "cycles:HG", the metadata sample-unit "count"; the IR carries a
 * count as TCI_COUNT_NS ns, so that the writers' µs rounding prints the counts). The one
 * rule of a count profile (doc/formats.md, "Conversion rules: Samples"), kept here once for every
 * aggregating writer: its call tree weighs the samples only. Slices keep their place in it
 * (a sample taken inside a slice is under that slice's frame, and a slice counts its calls)
 * but add no time, wall or thread CPU, since time and counts do not add up; their time stays
 * on the timelines (json, perfetto, systrace, speedscope's evented profiles). The tree says
 * how many slices it did not weigh (note slices-not-weighed).
 */
#define TCI_COUNT_NS 1000
/* What the trace's sampled stacks count ("cycles:HG", else "samples"), or NULL when its
 * aggregates weigh time: the metadata sample-unit "count" and sample-type, read here so
 * that no writer parses them. */
const char *tci_trace_count_name(const tci_trace *t);
/* The weight of a count tree's node as the count it is (ns / TCI_COUNT_NS, rounded). */
static inline int64_t tci_count_of(int64_t ns) { return ns / TCI_COUNT_NS + (ns % TCI_COUNT_NS >= TCI_COUNT_NS / 2); }

/* Frames of one sampled stack kept in the tree: deeper ones are dropped and counted (figure
 * depth-limit, one a stack cut), the outermost kept as every depth limit keeps them
 * (--max-depth, speedscope's, perfetto's), the sample's weight on its deepest kept frame. */
#define TCI_SAMPLE_MAX_FRAMES 1024u

/* Sums of times saturate at TCI_SUM_MAX (only a hostile input's durations
 * get there), counted (figure saturated-sum); then the tree is trimmed so that
 * children never add up to more than their parent. So every total and self
 * time, and the sum of the self times under any node, is at most TCI_SUM_MAX:
 * a writer may add them up, and add rounding, without overflow. */
#define TCI_SUM_MAX (INT64_MAX / 2)
/* a + b of the tree's times (each in [0, TCI_SUM_MAX]), held at TCI_SUM_MAX: what an
 * analysis adds up over a tree (a package's time, the threads' busy time) stays a time. */
static inline int64_t tci_sum_add(int64_t a, int64_t b) { return a > TCI_SUM_MAX - b ? TCI_SUM_MAX : a + b; }
/* Per thread: the times of its first and last call events (enter, exit,
 * sample), reconstructed and closing frames included; TCI_NO_TIME until seen. */
typedef struct tci_ctspan {
    int64_t first_ts, last_ts;
    int64_t first_cpu, last_cpu;
} tci_ctspan;
typedef struct tci_calltree {
    const tci_trace *trace;  /* its stack table resolves samples */
    tci_diag *diag;          /* where saturation is reported (NULL: counted only) */
    uint64_t saturated;      /* sums that saturated */
    tci_ctnode *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t *roots;        /* per thread: node index of its root */
    uint32_t n_roots;
    tci_idmap child_index;  /* (parent << 32 | method) -> node */
    struct tci_ctstack *stacks; /* per thread: open frames while building */
    tci_ctspan *spans;      /* per root (a merged tree's one root has none: TCI_NO_TIME) */
    tci_cancel *cancel;     /* the walks over the tree (folding, profile, merging) stop here (NULL: never) */
    const char *count;      /* tci_trace_count_name(trace): the tree weighs these counts, slices nothing; NULL: time */
    uint64_t unweighed;     /* count trees: slices (calls) whose time the tree leaves out */
    uint64_t cut_samples, cut_frames; /* samples deeper than TCI_SAMPLE_MAX_FRAMES, and their frames dropped */
    uint32_t *stack_depth;  /* per sampled stack: its frames (made at the first sample; NULL: not yet) */
    uint32_t *stack_cut;    /* per sampled stack: itself, or its ancestor at depth TCI_SAMPLE_MAX_FRAMES */
} tci_calltree;

int tci_calltree_init(tci_calltree *ct, const tci_trace *t, uint32_t n_threads);
int tci_calltree_event(tci_calltree *ct, const tci_event *ev);
void tci_calltree_finish(tci_calltree *ct);
void tci_calltree_free(tci_calltree *ct);
/* A one-root tree where equal call paths of all threads are summed (after finish). */
int tci_calltree_merge_threads(const tci_calltree *in, tci_calltree *out);
/* The bottom-up tree of a finished tree (flamegraph.pl's --reverse, "who calls this method"):
 * one root per root of in, under which every call path of in is read from its leaf: path
 * root;a;b;c of in is root;c;b;a of out. Each node of out has, summed over the nodes of in
 * whose path read backwards starts with its own: their self times (wall, cpu) as its totals
 * and their calls as its calls (a method's calls through that chain of callers); its self
 * times are those of the nodes of in whose path read backwards is exactly its own (the chain
 * ends at the thread's top level). So out's totals of a root equal in's, and the self times
 * of out's nodes are in's, path for path. canon: per method of the trace, the method it is
 * shown as (methods of one name as one frame), NULL: itself. sampled is 0 (its weight is in
 * the wall times). Memory grows with the distinct paths read backwards (at most the sum of
 * in's depths); past 32 times in's nodes plus 1M it stops with TC_ERR_LIMIT (in diag). Spans
 * are in's. */
int tci_calltree_reverse(const tci_calltree *in, const uint32_t *canon, tci_calltree *out);
/* The callers tree of a finished tree (pprof's -peek, speedscope's sandwich "callers"): one
 * root per root of in; under it, for every node of in whose method is marked (mark[method]
 * != 0) and that no marked frame encloses (the outermost call of the methods on its stack:
 * recursion counted once, as everywhere), its path read backwards from it: method;caller;
 * caller's caller;...;the thread's top-level frame. Each node of out has, summed over those
 * nodes of in: their totals (wall, cpu: the whole inclusive time of each call) as its totals
 * and their calls as its calls; its self times those whose chain ends there (the caller is
 * at the thread's top level). So a root's total is the time spent in the methods (their
 * --focus total). canon as for reverse. Its nodes are some of the bottom-up tree's (the
 * paths of the marked nodes, read backwards), so it is never larger than that, and stops at
 * the same limit. Spans are in's. No marked node at all is an error (TC_ERR_EMPTY_SELECTION,
 * naming what: the pattern), as an empty --focus is. */
int tci_calltree_callers(const tci_calltree *in, const uint32_t *canon, const uint8_t *mark, const char *what,
                         tci_calltree *out);
/* The one walk over a tree (calltree.c): every node under root, depth-first, parents before
 * children, siblings in order; iterative, no memory of its own (stacks can be 10000 deep).
 * enter(user, node, depth) (depth 0: a child of root) returns TC_OK to go on into the node's
 * children, TCI_WALK_PRUNE to leave the node and its subtree out (no leave for it), or an
 * error, which stops the walk and is returned. leave(user, node, depth) follows a node's
 * subtree. A cancel (ct->cancel) stops the walk with TC_ERR_CANCELED. */
#define TCI_WALK_PRUNE 1
typedef struct tci_ctvisit {
    int (*enter)(void *user, uint32_t node, uint32_t depth);
    void (*leave)(void *user, uint32_t node, uint32_t depth);
    void *user;
} tci_ctvisit;
int tci_calltree_walk(const tci_calltree *ct, uint32_t root, const tci_ctvisit *v);

#endif /* TC_TC_CALLTREE_H */
