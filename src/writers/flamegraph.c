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
 * (default android: whose code each frame is, tc_codegroup.h, with a legend
 * naming the app's package, app-package or found), hash. The subtitle names
 * the input and the clock. A count profile's frames are its counts (perf's
 * cycles: tc_calltree.h), named after the event in the subtitle and the
 * tooltips ("main (3,000 cycles:HG, 12.00%)"). The root frame's label says what the graph is
 * ("all 6 threads (7,762,240 us)", "thread main-1234 (...)"). reverse: the bottom-up graph (every
 * stack read from its leaf, the thread frame last, as flamegraph.pl --reverse draws it). callers:
 * the graph of the folded writer's callers stacks (the method at the base, each call's inclusive
 * time, its callers above, the thread frame last), titled "Callers of METHOD".
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_flame.h"
#include "tc_folding.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

typedef struct flame_w {
    tci_foldflame ff;
    tci_flame *flame;
    char *subtitle;
} flame_w;

static int flame_begin(tci_wctx *w)
{
    flame_w *f = w->priv;
    const tci_trace *t = w->trace;
    int rc = tci_weight_check(w->diag, w->trace, w->opt->weight_cpu, "flamegraph");
    if (rc == TC_OK)
        rc = tci_foldflame_begin(&f->ff, t, w->opt->weight_cpu);
    if (rc != TC_OK)
        return rc;
    f->ff.reverse = w->opt->reverse;
    if ((rc = tci_foldflame_callers(&f->ff, t, w->opt, w->diag)) != TC_OK)
        return rc;
    f->flame = tci_flame_new(false);
    return f->flame ? TC_OK : TC_ERR_NOMEM;
}

/* What the root frame is, as its label says it: "all 6 threads" (the threads with a width in
 * the graph), "all 6 threads, merged", or the one thread's frame name, "thread main-1234". */
static const char *root_name(flame_w *f, const tci_calltree *ct, bool cpu, bool merged)
{
    const tci_trace *t = ct->trace;
    uint32_t n = 0, one = TCI_NONE;
    for (uint32_t th = 0; th < ct->n_roots; th++) {
        const tci_ctnode *root = &ct->nodes[ct->roots[th]];
        if (t->threads[th].records && (cpu ? root->cpu_total : root->wall_total) > 0) {
            n++;
            one = th;
        }
    }
    if (n == 1)
        return tci_arena_printf(&f->ff.fold.arena, "thread %s", f->ff.fold.thread_name[one]);
    return tci_arena_printf(&f->ff.fold.arena, "all %u threads%s", n, merged ? ", merged" : "");
}

static int flame_finish(tci_wctx *w, const tci_calltree *ct)
{
    flame_w *f = w->priv;
    const tci_options *opt = w->opt;
    tci_flame_opts o = tci_flame_document_opts(opt);
    f->ff.thread_order = w->thread_order; /* main's tower first */
    int rc = tci_foldflame_colors(&f->ff, w->trace, ct, opt, w->app, &o);
    if (rc == TC_OK)
        rc = tci_foldflame_add(&f->ff, f->flame, ct, opt->merge_threads, false);
    if (rc != TC_OK)
        return rc;
    const tci_trace *t = w->trace;
    bool cpu_timeline = t->clock == TCI_CLOCK_THREAD_CPU; /* no wall clock: the timeline is CPU time */
    const char *what = ct->count ? tci_arena_printf(&f->ff.fold.arena, "%s counts of the sampled stacks%s", ct->count,
                                                    ct->unweighed ? " (slices weigh nothing)" : "")
                       : opt->weight_cpu || cpu_timeline ? "thread CPU time in µs"
                                                         : "wall time in µs";
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection it was made with, named as the options are */
    bool selected = tci_selection_text(opt, tci_writer_flamegraph.options, sel, sizeof sel) > 0;
    f->subtitle = !what ? NULL
                        : tci_arena_printf(&f->ff.fold.arena, "%s (%s, clock %s): %s, %s%s%s%s", t->input_name,
                                           tci_trace_format_name(t), tci_clock_name(t->clock), what,
                                           opt->merge_threads ? "all threads merged"
                                           : opt->reverse || opt->callers ? "threads last"
                                                              : "one tower per thread",
                                           opt->reverse ? ", bottom-up (stacks from the leaf)" : "",
                                           selected ? "; " : "", selected ? sel : "");
    if (!f->subtitle)
        return TC_ERR_NOMEM;
    o.subtitle = f->subtitle;
    if (opt->callers && !opt->title) /* what the graph is: each call of the method, its callers above it */
        o.title = tci_arena_printf(&f->ff.fold.arena, "Callers of %s", opt->callers);
    if (ct->count) /* tooltips "NAME (COUNT cycles:HG, P%)", as flamegraph.pl --countname=cycles:HG */
        o.countname = ct->count;
    o.root_name = root_name(f, ct, f->ff.fold.cpu, opt->merge_threads);
    o.open_first = w->thread_order && !opt->merge_threads && !opt->reverse && !opt->callers; /* main's tower */
    if (!o.root_name)
        return TC_ERR_NOMEM;
    rc = tci_flame_render(f->flame, &o, w->out);
    return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
}

static void flame_close(tci_wctx *w)
{
    flame_w *f = w->priv;
    if (!f)
        return;
    tci_foldflame_free(&f->ff);
    tci_flame_free(f->flame);
}

const tci_writer tci_writer_flamegraph = {
    .name = "flamegraph",
    .description = "interactive flame graph SVG (as flamegraph.pl draws it)",
    .extensions = "svg",
    .options = (const tci_option_def[]){TCI_OPTION_WEIGHT("frame widths by wall or thread-CPU time"),
                                        TCI_OPTION_MERGE_THREADS("one tree for all threads (no thread frames)", NULL),
                                        TCI_OPTIONS_FLAME("Flame Graph"),
                                        TCI_OPTION_REVERSE("bottom-up: stacks read from the leaf, thread frames "
                                                           "last (flamegraph.pl --reverse)"),
                                        TCI_OPTION_CALLERS("the callers of METHOD: a graph rooted at it, each call's "
                                                           "inclusive time, its callers above, threads last"),
                                        {0}},
    .variants = (const tci_variant[]){{.name = "flamegraph", .extension = "svg", .mime = "image/svg+xml",
                                       .inline_view = true, .mark = "visualization, drawn by traceconv as flamegraph.pl",
                                       .aliases = "svg,flame,flame-graph"}, {0}},
    .priv_size = sizeof(flame_w),
    .flags = TCI_WF_AGGREGATE,
    .begin = flame_begin,
    .finish = flame_finish,
    .close = flame_close,
};
