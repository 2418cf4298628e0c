/*
 * tc_folding.h - folded stacks and the flame tree built from them (folded, flame graph, HTML report, diff).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_FOLDING_H
#define TC_TC_FOLDING_H

#include "tc_codegroup.h"
#include "tc_flame.h"
#include "tc_calltree.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "tc_base.h"

/* ---- folding: the folded writer's stacks, shared with the flame graph (folding.c) ---- */

/* A distinct stack of one tree: its last frame and the rest. */
typedef struct tci_fpath {
    uint32_t parent;  /* TCI_NONE: the tree's root (no frame); parents come before children */
    uint32_t name;    /* index of the first method whose sanitized name is this text */
    int64_t self_ns;  /* summed self time of the call paths with this text */
    int64_t self_us;  /* the count printed: µs rounded cumulatively in path order (0: no line) */
} tci_fpath;

typedef struct tci_folding {
    tci_arena arena;
    const char **method_name; /* per method: its sanitized short name */
    uint32_t *same_name;      /* per method: the first method whose sanitized name is the same text */
    const char **thread_name; /* per thread: sanitized "name-tid" */
    tci_fpath *paths;         /* the current tree's distinct stacks; [0] is its root */
    uint32_t n_paths, cap_paths;
    tci_idmap path_ids;       /* (parent path << 32 | name) -> path */
    bool cpu;                 /* weigh by thread CPU time, else wall */
} tci_folding;

/* Names of every method and thread (tables final). */
int tci_folding_begin(tci_folding *f, const tci_trace *t, bool cpu);
/* The paths of the tree under root (a thread's, or a merged tree's), counts rounded. */
int tci_folding_tree(tci_folding *f, const tci_calltree *ct, uint32_t root);
void tci_folding_free(tci_folding *f);

/* ---- folded stacks into a flame tree (folding.c): the flame graph writer, the HTML
 * report's graphs and the differential flame graph draw the same frames ---- */

typedef struct tci_foldflame {
    tci_folding fold;
    uint32_t *name_of;  /* per method (its same_name class): the flame name, TCI_NONE until used */
    uint32_t *frame_of; /* per path of the current tree: its flame frame */
    uint32_t cap_frame_of;
    int64_t total;      /* µs added so far (saturated): 0, nothing to draw */
    bool code_groups;   /* give each method's name its code group (the android palette; threads stay neutral) */
    const char *app_package; /* with code_groups: the app's package (NULL: none) */
    bool reverse;       /* set after begin: stacks read from the leaf (flamegraph.pl --reverse), the
                         * thread frame last (tci_calltree_reverse) */
    uint8_t *callers;   /* tci_foldflame_callers (NULL: none): the callers of the methods marked here,
                         * each stack read from the method up, the thread frame last
                         * (tci_calltree_callers); callers_of names them (the pattern) */
    const char *callers_of;
    const uint32_t *thread_order; /* set after begin: one tower per thread in this order (the views',
                                   * main first: tci_wctx.thread_order), leftmost first; NULL: by name */
} tci_foldflame;

/* The folded names of t (tables final), counts by thread CPU time or wall. */
int tci_foldflame_begin(tci_foldflame *ff, const tci_trace *t, bool cpu);
/* Add ct's folded stacks to flame: one tower per thread with records ("name-tid" under
 * "all"), or with merge_threads one tree under "all" (equal paths of all threads summed).
 * With ff->reverse each stack is read from its other end: the leaf under "all", the thread
 * frame (without merge_threads) last; with ff->callers the stacks through the marked methods
 * from their outermost frame up (the method under "all", its callers above, the thread last),
 * each weighing that frame's inclusive time.
 * The µs go to each frame's count, or with before to its count before (a differential
 * tree's BASE, difffolded.pl's first column). */
int tci_foldflame_add(tci_foldflame *ff, tci_flame *flame, const tci_calltree *ct, bool merge_threads, bool before);
/* After begin: the option callers (opt->callers, else nothing), its pattern read (tc_select.h:
 * one that matches no method, or callers with reverse, is an error in d). */
int tci_foldflame_callers(tci_foldflame *ff, const tci_trace *t, const tci_options *opt, tci_diag *d);
/* The colours of fo's palette: for the android palette, the app's package for the frames'
 * groups and the legend: app, the one the conversion found (tci_wctx.app), else found here in
 * t and ct (tc_codegroup.h; ct may be NULL). Before tci_foldflame_add; every graph of the
 * palette (the writer's, the HTML report's) calls it. */
int tci_foldflame_colors(tci_foldflame *ff, const tci_trace *t, const tci_calltree *ct, const tci_options *opt,
                         const tci_app_package *app, tci_flame_opts *fo);
/* Safe on a zeroed or half-begun ff. */
void tci_foldflame_free(tci_foldflame *ff);

#endif /* TC_TC_FOLDING_H */
