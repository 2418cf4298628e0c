/*
 * folded.c - folded (collapsed) stacks for flamegraph.pl, inferno and
 * speedscope (shared/docs/outputs/FOLDED.md): "root;...;leaf count\n".
 *
 * Built from the shared call tree through the folding module (folding.c),
 * which the flame graph writer shares: names made safe for every parser,
 * identical stacks (overloads with the same short name) as one path, counts
 * in integer µs of self time (wall by default, thread CPU with weight=cpu)
 * rounded cumulatively per thread, so they add up to that thread's rounded
 * total; a count profile's counts (perf's cycles: tc_calltree.h), its slices
 * weighing nothing. The first frame is the thread ("name-tid") unless no-thread merges
 * threads. Paths are printed in order of first appearance. With reverse every stack
 * is read from the leaf, the thread frame last (the bottom-up tree, tci_calltree_reverse).
 * With callers, the stacks through the method from its outermost frame up, each weighing
 * that frame's inclusive time: "METHOD;caller;...;top-level frame;thread count", root first
 * as every folded line is, so flamegraph.pl and speedscope draw METHOD at the base with its
 * callers above it (tci_calltree_callers).
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_folding.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_writers.h"
#include "tc_select.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <stdlib.h>

typedef struct folded_w {
    tci_folding fold;
    uint8_t *callers;         /* the option callers' methods (tci_callers_marks; NULL: none) */
    uint32_t *depth_of;       /* per path of the current tree: its number of frames */
    uint32_t cap_depth_of;
    uint32_t *chain;          /* the frames of the last path put in `path`, root first */
    size_t *ends;             /* path_len after the first frame (ends[0]) and after each of chain */
    uint32_t cap_chain, cap_ends, depth;
    char *path;               /* the line being printed, frames joined by ';' */
    size_t path_len, path_cap;
} folded_w;

static int folded_begin(tci_wctx *w)
{
    folded_w *f = w->priv;
    const tci_trace *t = w->trace;
    int rc = tci_weight_check(w->diag, w->trace, w->opt->weight_cpu, "folded");
    if (rc == TC_OK)
        rc = tci_callers_marks(t, w->opt, w->diag, &f->callers);
    return rc != TC_OK ? rc : tci_folding_begin(&f->fold, t, w->opt->weight_cpu);
}

static int path_push(folded_w *f, const char *name)
{
    size_t n = strlen(name), need = f->path_len + n + 2;
    if (need > f->path_cap) {
        size_t cap = f->path_cap ? f->path_cap : 4096;
        while (cap < need)
            cap *= 2;
        char *p = realloc(f->path, cap);
        if (!p)
            return TC_ERR_NOMEM;
        f->path = p;
        f->path_cap = cap;
    }
    if (f->path_len)
        f->path[f->path_len++] = ';';
    memcpy(f->path + f->path_len, name, n);
    f->path_len += n;
    return TC_OK;
}

/* Every path's depth (parents come before children), and `path` holding `first` alone: what
 * path_text builds on. */
static int paths_begin(folded_w *f, const char *first)
{
    const tci_folding *fo = &f->fold;
    if (tci_grow((void **)&f->depth_of, &f->cap_depth_of, fo->n_paths, sizeof *f->depth_of) != 0 ||
        tci_grow((void **)&f->ends, &f->cap_ends, 0, sizeof *f->ends) != 0)
        return TC_ERR_NOMEM;
    f->depth_of[0] = 0;
    for (uint32_t p = 1; p < fo->n_paths; p++)
        f->depth_of[p] = f->depth_of[fo->paths[p].parent] + 1;
    f->path_len = 0;
    if (first && path_push(f, first) != TC_OK)
        return TC_ERR_NOMEM;
    f->ends[0] = f->path_len;
    f->depth = 0;
    return TC_OK;
}

/* The text of path p after `first` and before `last` (the thread frame, or NULL) into f->path.
 * Paths come in order of first appearance, so one mostly shares a long prefix with the path
 * before it: the text is cut back to the frames they share and only the rest is added (the
 * bench trace's paths are 40 frames deep; each line was built from its root, a strlen and a
 * copy per frame). The bytes are those of building it whole: the text up to a shared frame is
 * what it was when that frame was pushed. */
static int path_text(folded_w *f, const char *first, uint32_t p, const char *last)
{
    (void)first; /* in ends[0], since paths_begin */
    const tci_folding *fo = &f->fold;
    uint32_t d = f->depth_of[p];
    if (tci_grow((void **)&f->chain, &f->cap_chain, d, sizeof *f->chain) != 0 ||
        tci_grow((void **)&f->ends, &f->cap_ends, d, sizeof *f->ends) != 0)
        return TC_ERR_NOMEM;
    uint32_t q = p;
    while (q != 0 && !(f->depth_of[q] <= f->depth && f->chain[f->depth_of[q] - 1] == q)) {
        f->chain[f->depth_of[q] - 1] = q; /* deeper than any frame still shared */
        q = fo->paths[q].parent;
    }
    uint32_t k = f->depth_of[q];
    f->path_len = f->ends[k];
    for (; k < d; k++) {
        if (path_push(f, fo->method_name[fo->paths[f->chain[k]].name]) != TC_OK) {
            f->depth = 0; /* the text no longer matches chain */
            return TC_ERR_NOMEM;
        }
        f->ends[k + 1] = f->path_len;
    }
    f->depth = d;
    return last ? path_push(f, last) : TC_OK;
}

/* One line per path with a count, in order of first appearance. */
static int emit_paths(tci_wctx *w, const char *first, const char *last)
{
    folded_w *f = w->priv;
    tci_sink *o = w->out;
    if (paths_begin(f, first) != TC_OK)
        return TC_ERR_NOMEM;
    for (uint32_t p = 1; p < f->fold.n_paths && !tci_sink_failed(o); p++) { /* a path's text costs its depth */
        int64_t us = f->fold.paths[p].self_us;
        if (us <= 0)
            continue;
        if (path_text(f, first, p, last) != TC_OK)
            return TC_ERR_NOMEM;
        tci_sink_write(o, f->path, f->path_len);
        tci_sink_putc(o, ' ');
        tci_sink_i64(o, us);
        tci_sink_putc(o, '\n');
    }
    return TC_OK;
}

/* The folded lines of one tree (a thread's, or all threads merged); thread: its frame,
 * first, or last in a bottom-up tree (NULL: none). */
static int fold_tree(tci_wctx *w, const tci_calltree *ct, uint32_t root, const char *thread)
{
    folded_w *f = w->priv;
    int rc = tci_folding_tree(&f->fold, ct, root);
    if (rc == TC_OK)
        rc = w->opt->reverse || f->callers ? emit_paths(w, NULL, thread) : emit_paths(w, thread, NULL);
    return rc;
}

static int fold_threads(tci_wctx *w, const tci_calltree *ct)
{
    folded_w *f = w->priv;
    for (uint32_t t = 0; t < ct->n_roots && !tci_sink_failed(w->out); t++) {
        if (!w->trace->threads[t].records)
            continue;
        int rc = fold_tree(w, ct, ct->roots[t], f->fold.thread_name[t]);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static int folded_finish(tci_wctx *w, const tci_calltree *ct)
{
    tci_calltree merged = {0}, reversed = {0};
    int rc = TC_OK;
    if (w->opt->no_thread && (rc = tci_calltree_merge_threads(ct, &merged)) == TC_OK)
        ct = &merged;
    folded_w *f = w->priv;
    if (rc == TC_OK && f->callers && (rc = tci_calltree_callers(ct, NULL, f->callers, w->opt->callers, &reversed)) == TC_OK)
        ct = &reversed;
    else if (rc == TC_OK && w->opt->reverse && (rc = tci_calltree_reverse(ct, NULL, &reversed)) == TC_OK)
        ct = &reversed;
    if (rc == TC_OK)
        rc = w->opt->no_thread ? fold_tree(w, ct, ct->roots[0], NULL) : fold_threads(w, ct);
    tci_calltree_free(&reversed);
    tci_calltree_free(&merged);
    return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
}

static void folded_close(tci_wctx *w)
{
    folded_w *f = w->priv;
    if (!f)
        return;
    tci_folding_free(&f->fold);
    free(f->callers);
    free(f->depth_of);
    free(f->ends);
    free(f->chain);
    free(f->path);
}

const tci_writer tci_writer_folded = {
    .name = "folded",
    .description = "folded stacks (flamegraph.pl, inferno, speedscope)",
    .extensions = "folded",
    .options = (const tci_option_def[]){TCI_OPTION_WEIGHT("weigh stacks by wall or thread-CPU time"),
                                        {.key = "no-thread", .type = TCI_OPT_BOOL,
                                         .help = "merge all threads (no thread frame)", TCI_OPT_FIELD(no_thread)},
                                        TCI_OPTION_REVERSE("stacks read from the leaf, thread frame last "
                                                           "(flamegraph.pl --reverse)"),
                                        TCI_OPTION_CALLERS("the callers of METHOD: each call's inclusive time on "
                                                           "METHOD;caller;...;thread (root first)"),
                                        {0}},
    .variants = (const tci_variant[]){{.name = "folded", .extension = "folded",
                                       .mime = "text/plain; charset=utf-8",
                                       .aliases = "collapsed,stackcollapse,folded-stacks"}, {0}},
    .priv_size = sizeof(folded_w),
    .flags = TCI_WF_AGGREGATE,
    .begin = folded_begin,
    .finish = folded_finish,
    .close = folded_close,
};
