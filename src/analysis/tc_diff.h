/*
 * tc_diff.h - two inputs compared per method (diff.c; rendered by the diff writers).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_DIFF_H
#define TC_TC_DIFF_H

#include "tc_flame.h"
#include "tc_folding.h"
#include "tc_profile.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "tc_writer.h"
#include "tc_base.h"

/* ---- diff: two inputs compared per method (diff.c; rendered by diff_*.c) ---- */

enum { TCI_DIFF_BASE = 0, TCI_DIFF_NEW = 1 };

/* One side of a row: what the profile shows for the methods of that key. */
typedef struct tci_dfig {
    uint64_t calls;                /* every activation (normal + recursive) */
    int64_t incl_wall, excl_wall;  /* ns, summed over the methods of the key */
    int64_t incl_cpu, excl_cpu;
} tci_dfig;

/* A method of either input, matched by name (doc/diff-and-reports.md, "Matching and options"). */
typedef struct tci_drow {
    const char *name; /* the key: "pkg.Class.method", or "pkg.Class.method: (I)V" for overloads */
    bool on[2];       /* present in BASE, in NEW */
    tci_dfig fig[2];
} tci_drow;

typedef struct tci_dside {
    const tci_trace *trace;
    const tci_diag *diag;
    const char *summary; /* "art v3 non-streaming, clock dual" */
    tci_profile profile; /* all threads: totals (span, busy, calls) */
    bool built;
} tci_dside;

typedef struct tci_diff {
    tci_dside side[2];
    const tci_options *opt; /* NEW's: weight, sort, the flame graph's */
    bool wall, cpu;         /* the clocks both inputs have: the columns shown */
    const char *count;      /* both inputs' sampled stacks weigh counts of this event ("cycles:HG"): the
                             * wall figures are those counts, and no cpu column (tc_calltree.h); NULL: time */
    bool by_cpu;            /* order (and the flame graph's widths) by thread-CPU time */
    tci_drow *rows;         /* in report order after matching */
    uint32_t n_rows, cap_rows;
    uint32_t n_both, n_new, n_gone;
    bool merge_threads;     /* flamegraph: one tree (default) or a tower per "name-tid" */
    tci_flame *flame;       /* flamegraph: the differential tree (NULL for the tables) */
    tci_arena arena;
} tci_diff;

/* The key's figures of one clock: incl (true) or excl, wall or cpu. */
static inline int64_t tci_dfig_time(const tci_dfig *f, bool incl, bool cpu)
{
    return incl ? (cpu ? f->incl_cpu : f->incl_wall) : (cpu ? f->excl_cpu : f->excl_wall);
}
/* The options the diff reads, whatever its format (diff.c): each diff format's table. */
extern const tci_option_def tci_diff_options[];

/* The capture: a writer that is not registered, into which the engine (engine/diffconv.c,
 * tci_conv_aggregate) converts each input; priv is a tci_diff_capture of that side. It keeps
 * the side's profile (all threads) and, with d->flame, adds its stacks to the differential
 * flame tree (BASE's counts are the counts before). */
typedef struct tci_diff_capture {
    tci_diff *d;
    int side;         /* TCI_DIFF_BASE or TCI_DIFF_NEW */
    tci_foldflame ff; /* the flame graph's stacks of this input (begun only with d->flame) */
} tci_diff_capture;
extern const tci_writer tci_diff_capture_writer;
/* Both sides read: a pattern of focus or ignore that names no method of either is an error
 * (with the closest names of both), the clocks compared are chosen (those both inputs have),
 * and the rows are matched by key and ordered. Errors in e. */
int tci_diff_compare(tci_diff *d, tci_diag *e);
/* What d holds (the profiles, rows, flame tree, arena); d itself is the caller's. */
void tci_diff_free(tci_diff *d);

/* ---- diff formats: the descriptors of diff_*.c (writers/tc_writers.h lists them) ---- */

/* A format of traceconv diff (diff_*.c; the comparison it renders is above):
 * the same description as a writer's, and a renderer that writes the whole output into o (write errors stay in the sink). */
typedef struct tci_diff_format {
    const char *name, *description, *extensions;
    const tci_option_def *options; /* tci_diff_options */
    const tci_variant *variants;   /* one: its output */
    int (*render)(const tci_diff *d, tci_sink *o); /* the comparison, above */
    bool flame;                    /* it draws diff.c's differential flame tree */
} tci_diff_format;

#endif /* TC_TC_DIFF_H */
