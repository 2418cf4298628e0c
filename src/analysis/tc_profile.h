/*
 * tc_profile.h - per-method figures from the call tree (report, dot, diff).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_PROFILE_H
#define TC_TC_PROFILE_H

#include "tc_calltree.h"
#include "tc_trace.h"
#include "tc_writer.h"
#include "tc_base.h"

/* ---- profile: per-method figures from the call tree (profile.c) ------------ */

/*
 * What a profile report shows (doc/diff-and-reports.md, "Profile accounting"), computed from
 * a finished call tree for one thread or for all threads together. Every
 * figure is exact ns (or a count), summed with saturation at TCI_SUM_MAX.
 *
 * An activation of method m is nested (recursive) when m is already on the
 * thread's stack above it, outermost otherwise. The tree's nodes are call
 * paths, so this is decided per node: whether m appears among its ancestors.
 */
typedef struct tci_pcost {
    uint64_t calls;
    int64_t wall, cpu; /* inclusive ns */
} tci_pcost;

typedef struct tci_pmethod {
    uint32_t method;            /* index in the trace's method table: the first called of its full
                                 * name (one row for the ids under which ART may list one method) */
    uint64_t calls;             /* outermost activations ("normal" calls) */
    uint64_t recursive_calls;   /* nested activations */
    int64_t incl_wall, incl_cpu; /* outermost activations only: recursion never counts twice */
    int64_t excl_wall, excl_cpu; /* self time of every activation */
    int64_t outer_excl_wall, outer_excl_cpu; /* self time of the outermost activations */
    uint32_t parents_at, n_parents;   /* its edges as callee: profile.parent_edges[parents_at..] */
    uint32_t children_at, n_children; /* its edges as caller: profile.child_edges[children_at..] */
} tci_pmethod;

/* Calls from one method (row, or TCI_NONE: the thread root, "(toplevel)")
 * to another. `all` counts every call along the edge, so with recursion its
 * time counts an instant once per level; the three splits never do:
 *   caller_outer: calls made by outermost activations of the caller (a
 *     caller's children lists: their times plus its outermost self time are
 *     its inclusive time),
 *   callee_outer: calls that are outermost activations of the callee (a
 *     callee's parent lists: their times add up to its inclusive time),
 *   once: calls not made inside another call along the same edge (the
 *     call graph: each instant once per edge).
 * all - caller_outer and all - callee_outer are the nested parts. */
typedef struct tci_pedge {
    uint32_t caller, callee; /* rows of the profile; caller TCI_NONE = (toplevel) */
    tci_pcost all, caller_outer, callee_outer, once;
} tci_pedge;

typedef struct tci_profile {
    const tci_trace *trace;
    uint32_t thread;          /* TCI_NONE: all threads */
    uint32_t n_threads;       /* threads with calls in it */
    tci_pmethod *methods;     /* rows: the methods called in it, in order of first call */
    uint32_t n_methods;
    tci_pedge *edges;
    uint32_t n_edges;
    uint32_t *parent_edges;   /* edge indexes grouped by callee (tci_pmethod.parents_at) */
    uint32_t *child_edges;    /* grouped by caller; (toplevel)'s first: top_children_at */
    uint32_t top_children_at, n_top_children;
    uint64_t calls;           /* every activation */
    int64_t span_wall, span_cpu; /* Σ per thread: first to last call event (or its busy time if larger) */
    int64_t busy_wall, busy_cpu; /* Σ per thread: time in some method (the root's total) */
    uint64_t saturated;       /* sums capped at TCI_SUM_MAX (the writer reports them) */
    tci_idmap row_of;         /* method index -> row */
} tci_profile;

/* thread: a root of ct (per-thread tree), or TCI_NONE for all of them. */
int tci_profile_build(tci_profile *p, const tci_calltree *ct, uint32_t thread);
void tci_profile_free(tci_profile *p);
/* The row of a method index, or TCI_NONE when it is not called in p. */
uint32_t tci_profile_row(const tci_profile *p, uint32_t method);

/* Sorting with a total order: key descending, then the row's method by
 * class, name, signature and method index (row TCI_NONE, (toplevel), first).
 * The caller fills key (TCI_PSORT_NAME: 0 everywhere sorts by name). */
typedef struct tci_psort_item {
    int64_t key;
    uint32_t row;
    uint32_t tag;   /* the caller's (an edge index, ...) */
    const tci_method *m; /* set by tci_profile_sort */
} tci_psort_item;
void tci_profile_sort(const tci_profile *p, tci_psort_item *items, size_t n);

/* ---- what an aggregating writer weighs (profile.c) -------------------------- */

/* What the figures of t's call tree are, for every aggregating writer (folded, flamegraph,
 * report, dot, diff): time (count NULL; wall and, when the input has that clock, thread CPU),
 * or the counts of a count profile (tc_calltree.h), held in the wall fields, with no
 * thread-CPU figure. */
typedef struct tci_weighs {
    const char *count; /* tci_trace_count_name: "cycles:HG"; NULL: time */
    bool wall, cpu;    /* the clocks of the figures (a count profile: wall, its counts) */
} tci_weighs;
tci_weighs tci_weighs_of(const tci_trace *t);
/* The check of --weight at a writer's begin (module: the writer's name in the message):
 * cpu needs a thread-CPU clock, which a count profile's counts are not. TC_OK or the error (in d). */
int tci_weight_check(tci_diag *d, const tci_trace *t, bool weight_cpu, const char *module);

#endif /* TC_TC_PROFILE_H */
