/*
 * diff_flamegraph.c - `traceconv diff -o flamegraph`: the differential flame
 * graph (FLAMEGRAPH-SVG.md §7) that `difffolded.pl BASE.folded NEW.folded |
 * flamegraph.pl` draws from our folded outputs: frame widths from NEW, the
 * colour of a frame from the change of its own (self) count, red where NEW
 * is slower, blue where faster, white unchanged; tooltips
 * "NAME (N us, P%; +D%)" with D in % of NEW's total. diff.c built the tree
 * (the folded writer's stacks of each input, µs rounded as folded does);
 * the SVG engine (flamesvg.c) draws it as flamegraph.pl does.
 *
 * As upstream, frames only in BASE have no width in NEW and do not appear:
 * doc/diff-and-reports.md shows the negated pair (`traceconv diff --negate NEW BASE`)
 * that draws BASE's widths coloured by what will change.
 */
#include "tc_base.h"
#include "tc_diff.h"
#include "tc_flame.h"
#include "tc_options.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

static int diff_flamegraph(const tci_diff *d, tci_sink *o)
{
    const tci_options *opt = d->opt;
    const tci_trace *b = d->side[TCI_DIFF_BASE].trace, *n = d->side[TCI_DIFF_NEW].trace;
    tci_arena a = {0};
    /* the clock the widths are: d->by_cpu, which is thread CPU also where an input has no wall
     * clock (a CPU-only trace), not only with --weight cpu */
    const char *what = d->count    ? tci_arena_printf(&a, "%s counts", d->count)
                       : d->by_cpu ? (d->wall ? "thread CPU time in µs" : "thread CPU time in µs (no wall clock in common)")
                                   : "wall time in µs";
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection (NEW's options, both inputs'), or all threads */
    bool selected = tci_selection_text(opt, tci_diff_options, sel, sizeof sel) > 0;
    char *subtitle = !what ? NULL
                           : tci_arena_printf(&a, "BASE %s (%s) -> NEW %s (%s): %s, %s, %s; red: %s in NEW, blue: %s%s",
                                      b->input_name, tci_trace_format_name(b), n->input_name, tci_trace_format_name(n),
                                      what, selected ? sel : "all threads",
                                      d->merge_threads ? "threads merged" : "one tower per thread",
                                      d->count ? "more" : "slower", d->count ? "fewer" : "faster",
                                      opt->negate ? " (negated: colours swapped)" : "");
    if (!subtitle)
        return TC_ERR_NOMEM;
    tci_flame_opts fo = tci_flame_document_opts(opt);
    if (!opt->title)
        fo.title = "Differential Flame Graph";
    fo.subtitle = subtitle;
    fo.negate = opt->negate;
    if (d->count) /* tooltips "NAME (3,000 cycles:HG, P%; +D%)" */
        fo.countname = d->count;
    int rc = tci_flame_render(d->flame, &fo, o);
    tci_arena_free(&a);
    return rc;
}

const tci_diff_format tci_diff_flamegraph = {
    .name = "flamegraph",
    .description = "a differential flame graph SVG: widths from NEW, red where NEW is slower, blue where faster",
    .extensions = "svg",
    .options = tci_diff_options,
    .variants = (const tci_variant[]){{.name = "flamegraph", .extension = "diff.svg", .mime = "image/svg+xml",
                                       .inline_view = true, .mark = "visualization, drawn by traceconv as flamegraph.pl",
                                       .aliases = "svg,flame,flame-graph"}, {0}},
    .render = diff_flamegraph,
    .flame = true,
};
