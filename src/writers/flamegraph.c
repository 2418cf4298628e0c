/*
 * flamegraph.c - an interactive flame graph SVG, the one flamegraph.pl draws
 * from our folded output (shared/docs/outputs/FLAMEGRAPH-SVG.md), without
 * flamegraph.pl: zoom, search with "Matched", tooltips, details.
 *
 * Built from the shared call tree through the folded writer's own stacks
 * (folding.c): the same names ("pkg.Class.method", overloads with one short
 * name as one frame), the same µs counts rounded cumulatively per thread
 * (wall, or thread CPU with weight=cpu), one root frame per thread
 * ("name-tid", threads of the same text as one, as flamegraph.pl merges
 * their lines) under "all", or one tree with merge-threads. The SVG engine
 * (flamesvg.c) sorts, lays out, prunes and colours as flamegraph.pl.
 *
 * Options: title, width, minwidth (px, or N%), inverted (icicle), colors
 * (default java), hash. The subtitle names the input and the clock.
 */
#include "tc_internal.h"

#include <stdlib.h>

typedef struct flame_w {
    tci_folding fold;
    tci_flame *flame;
    uint32_t *name_of;   /* per method (its same_name class): the flame name, TCI_NONE until used */
    uint32_t *frame_of;  /* per path of the current tree: its flame frame */
    uint32_t cap_frame_of;
    char *subtitle;
} flame_w;

static int flame_begin(tci_wctx *w)
{
    flame_w *f = w->priv;
    const tci_trace *t = w->trace;
    if (w->opt->weight_cpu && !t->has_cpu)
        return tci_error(w->diag, TC_ERR_UNSUPPORTED, "flamegraph", UINT64_MAX,
                         "the input has no thread-CPU clock (clock=%s); use --weight wall", tci_clock_name(t->clock));
    int rc = tci_folding_begin(&f->fold, t, w->opt->weight_cpu);
    if (rc != TC_OK)
        return rc;
    f->name_of = tci_malloc((t->n_methods ? t->n_methods : 1) * sizeof *f->name_of);
    f->flame = tci_flame_new(false);
    if (!f->name_of || !f->flame)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++)
        f->name_of[i] = TCI_NONE;
    return TC_OK;
}

static uint32_t flame_name_of(flame_w *f, uint32_t method)
{
    uint32_t m = f->fold.same_name[method];
    if (f->name_of[m] == TCI_NONE) {
        const char *s = f->fold.method_name[m];
        f->name_of[m] = tci_flame_name(f->flame, s, strlen(s));
    }
    return f->name_of[m];
}

/* The paths of one tree (a thread's, or the merged one) hung under frame `top`. */
static int add_tree(flame_w *f, const tci_calltree *ct, uint32_t root, uint32_t top)
{
    int rc = tci_folding_tree(&f->fold, ct, root);
    if (rc != TC_OK)
        return rc;
    if (tci_grow((void **)&f->frame_of, &f->cap_frame_of, f->fold.n_paths, sizeof *f->frame_of) != 0)
        return TC_ERR_NOMEM;
    f->frame_of[0] = top;
    for (uint32_t p = 1; p < f->fold.n_paths; p++) { /* parents come before children */
        const tci_fpath *fp = &f->fold.paths[p];
        uint32_t name = flame_name_of(f, fp->name);
        uint32_t frame = name == TCI_NONE ? TCI_NONE : tci_flame_child(f->flame, f->frame_of[fp->parent], name);
        if (frame == TCI_NONE)
            return TC_ERR_NOMEM;
        f->frame_of[p] = frame;
        tci_flame_add(f->flame, frame, fp->self_us, 0);
    }
    return TC_OK;
}

static int build(tci_wctx *w, const tci_calltree *ct)
{
    flame_w *f = w->priv;
    if (w->opt->merge_threads) {
        tci_calltree merged;
        int rc = tci_calltree_merge_threads(ct, &merged);
        if (rc == TC_OK)
            rc = add_tree(f, &merged, merged.roots[0], TCI_FLAME_ROOT);
        tci_calltree_free(&merged);
        return rc;
    }
    for (uint32_t t = 0; t < ct->n_roots; t++) {
        if (!w->trace->threads[t].records)
            continue;
        const char *tn = f->fold.thread_name[t];
        uint32_t name = tci_flame_name(f->flame, tn, strlen(tn));
        uint32_t top = name == TCI_NONE ? TCI_NONE : tci_flame_child(f->flame, TCI_FLAME_ROOT, name);
        if (top == TCI_NONE)
            return TC_ERR_NOMEM;
        int rc = add_tree(f, ct, ct->roots[t], top);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static int flame_finish(tci_wctx *w, const tci_calltree *ct)
{
    flame_w *f = w->priv;
    const tci_options *opt = w->opt;
    int rc = build(w, ct);
    if (rc != TC_OK)
        return rc;
    const tci_trace *t = w->trace;
    bool cpu_timeline = t->clock == TCI_CLOCK_THREAD_CPU; /* no wall clock: the timeline is CPU time */
    f->subtitle = tci_arena_printf(&f->fold.arena, "%s (%s, clock %s): %s time in µs, %s", t->input_name, t->reader,
                                   tci_clock_name(t->clock),
                                   opt->weight_cpu || cpu_timeline ? "thread CPU" : "wall",
                                   opt->merge_threads ? "all threads merged" : "one tower per thread");
    if (!f->subtitle)
        return TC_ERR_NOMEM;
    tci_flame_opts o = {
        .mode = TCI_FLAME_DOCUMENT,
        .title = opt->title,
        .subtitle = f->subtitle,
        .countname = "us",
        .width = opt->width,
        .minwidth = opt->minwidth_given ? opt->minwidth : 0.1,
        .minwidth_pct = opt->minwidth_given && opt->minwidth_pct,
        .inverted = opt->inverted,
        .palette = opt->colors_given ? (enum tci_flame_palette)opt->palette : TCI_PAL_JAVA,
        .hash = opt->hash,
    };
    rc = tci_flame_render(f->flame, &o, w->out);
    return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
}

static void flame_close(tci_wctx *w)
{
    flame_w *f = w->priv;
    if (!f)
        return;
    tci_folding_free(&f->fold);
    tci_flame_free(f->flame);
    free(f->name_of);
    free(f->frame_of);
}

const tci_writer tci_writer_flamegraph = {
    .name = "flamegraph",
    .description = "interactive flame graph SVG (as flamegraph.pl draws it)",
    .extensions = "svg",
    .options = "weight merge-threads title width minwidth inverted colors hash",
    .priv_size = sizeof(flame_w),
    .flags = TCI_WF_AGGREGATE,
    .begin = flame_begin,
    .finish = flame_finish,
    .close = flame_close,
};
