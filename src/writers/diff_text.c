/*
 * diff_text.c - `traceconv diff` as a table people read (the sibling of the
 * report writer's text): a header naming both inputs with their spans and
 * totals, then one row per method (matched by name, diff.c) with calls,
 * inclusive and exclusive wall time, and thread-CPU time when both inputs
 * have that clock: BASE, NEW, the signed change and the change in % of BASE.
 *
 * The fixes of dmtracedump's diff mode (DMTRACEDUMP-REPORT.md §6, §8 #9):
 * signed numbers ("+12", "-3", "0"), a real percentage change (not a ratio
 * called "Diff (%)"), one row per method, methods of one input only in the
 * same table marked "new" or "gone" with "-" for the missing side (never a
 * fake zero), signatures where overloads need them, a total order.
 *
 * Times are µs, each rounded once from its exact ns sum (the change too: it
 * is NEW - BASE in ns, rounded, so it may differ by 1 from the difference of
 * the two rounded cells). Names are escaped as in the report: control bytes,
 * backslashes and bytes that are not UTF-8 as \n, \\, \xHH.
 */
#include "tc_diff.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_writers.h"
#include "tc_writer.h"

#include <stdio.h>

/* ---- cells ------------------------------------------------------------------------- */

static void cell(tci_sink *o, const char *text, int width) { tci_sink_printf(o, " %*s", width, text); }

static void cell_count(tci_sink *o, int64_t v, bool present, bool signed_, int width)
{
    char b[32];
    if (!present)
        snprintf(b, sizeof b, "-");
    else if (signed_ && v > 0)
        snprintf(b, sizeof b, "+%lld", (long long)v);
    else
        snprintf(b, sizeof b, "%lld", (long long)v);
    cell(o, b, width);
}

/* The change in % of BASE: "+12.5%", "0.0%"; "new" / "gone" for a side missing; "new" when BASE is 0. */
static void cell_pct(tci_sink *o, int64_t base, int64_t delta, const tci_drow *r)
{
    char b[32];
    if (!r->on[TCI_DIFF_BASE])
        snprintf(b, sizeof b, "new");
    else if (!r->on[TCI_DIFF_NEW])
        snprintf(b, sizeof b, "gone");
    else if (delta == 0)
        snprintf(b, sizeof b, "0.0%%");
    else if (base == 0)
        snprintf(b, sizeof b, "new");
    else
        snprintf(b, sizeof b, "%+.1f%%", 100.0 * (double)delta / (double)base);
    cell(o, b, 8);
}

/* BASE, NEW, change and % of one time figure. */
static void time_cells(tci_sink *o, const tci_drow *r, bool incl, bool cpu)
{
    int64_t b = tci_dfig_time(&r->fig[TCI_DIFF_BASE], incl, cpu), n = tci_dfig_time(&r->fig[TCI_DIFF_NEW], incl, cpu);
    cell_count(o, tci_us_of(b), r->on[TCI_DIFF_BASE], false, 11);
    cell_count(o, tci_us_of(n), r->on[TCI_DIFF_NEW], false, 11);
    cell_count(o, tci_us_of(n - b), true, true, 11);
    cell_pct(o, b, n - b, r);
}

/* ---- header ----------------------------------------------------------------------- */

static void input_line(tci_sink *o, const tci_dside *s, const char *label)
{
    tci_sink_printf(o, "%-11s ", label);
    tci_put_escaped_text(o, s->trace->input_name ? s->trace->input_name : "-");
    TCI_PUT_LIT(o, " (");
    tci_put_escaped_text(o, s->summary ? s->summary : "?");
    tci_sink_printf(o, "), %u threads with calls, %u methods called\n", s->profile.n_threads, s->profile.n_methods);
}

/* One totals line: BASE, NEW, change, % (the totals are both present). */
static void total_line(tci_sink *o, const char *what, int64_t b, int64_t n)
{
    static const tci_drow both = {.on = {true, true}};
    tci_sink_printf(o, "%-22s", what);
    cell_count(o, tci_us_of(b), true, false, 11);
    cell_count(o, tci_us_of(n), true, false, 11);
    cell_count(o, tci_us_of(n - b), true, true, 11);
    cell_pct(o, b, n - b, &both);
    tci_sink_putc(o, '\n');
}

static const char *sort_text(const tci_diff *d)
{
    if (d->count && d->opt->sort != TCI_SORT_CALLS && d->opt->sort != TCI_SORT_NAME)
        return d->opt->sort == TCI_SORT_EXCL ? "|change of exclusive count|" : "|change of inclusive count|";
    switch (d->opt->sort) {
    case TCI_SORT_EXCL: return d->by_cpu ? "|change of exclusive thread-CPU time|" : "|change of exclusive wall time|";
    case TCI_SORT_CALLS: return "|change of calls|";
    case TCI_SORT_NAME: return "name";
    default: return d->by_cpu ? "|change of inclusive thread-CPU time|" : "|change of inclusive wall time|";
    }
}

static void header(const tci_diff *d, tci_sink *o)
{
    const tci_profile *b = &d->side[TCI_DIFF_BASE].profile, *n = &d->side[TCI_DIFF_NEW].profile;
    TCI_PUT_LIT(o, "# traceconv " TC_VERSION_STRING " diff: the change per method from BASE to NEW\n\n");
    input_line(o, &d->side[TCI_DIFF_BASE], "BASE");
    input_line(o, &d->side[TCI_DIFF_NEW], "NEW");
    /* the selection both were made with, named as the options are: the core's rows (reverse and
     * weight change no row of the table; the order says its clock) */
    char sel[TCI_SELECTION_TEXT_MAX];
    if (tci_selection_text(d->opt, NULL, sel, sizeof sel)) {
        TCI_PUT_LIT(o, "selection   ");
        tci_put_escaped_text(o, sel);
        tci_sink_putc(o, '\n');
    }
    if (d->count) {
        TCI_PUT_LIT(o, "counts      ");
        tci_put_escaped_text(o, d->count);
        TCI_PUT_LIT(o, " (both inputs' sampled stacks; slices weigh nothing)\n");
    } else {
        tci_sink_printf(o, "clocks      %s\n", d->wall && d->cpu ? "wall and thread CPU (both inputs have both)"
                                               : d->wall ? "wall only (an input has no thread-CPU clock: no cpu columns)"
                                                         : "thread CPU only (an input has no wall clock: no wall columns)");
    }
    tci_sink_printf(o, "sorted by   %s%s\n", sort_text(d),
                    d->opt->sort == TCI_SORT_NAME ? ""
                    : d->opt->sort == TCI_SORT_EXCL ? (d->count ? ", then |change of inclusive count|, then name"
                                                                : ", then |change of inclusive time|, then name")
                    : d->count                      ? ", then |change of exclusive count|, then name"
                                                    : ", then |change of exclusive time|, then name");
    tci_sink_printf(o, "methods     %u in both, %u only in NEW (new), %u only in BASE (gone)\n\n", d->n_both, d->n_new,
                    d->n_gone);
    tci_sink_printf(o, "%-22s %11s %11s %11s %8s\n", d->count ? "all threads (count)" : "all threads (us)", "BASE",
                    "NEW", "change", "%");
    if (d->count) {
        total_line(o, "counts", b->span_wall, n->span_wall);
    } else if (d->wall) {
        total_line(o, "span wall", b->span_wall, n->span_wall);
        total_line(o, "in methods wall", b->busy_wall, n->busy_wall);
    }
    if (d->cpu) {
        total_line(o, "span cpu", b->span_cpu, n->span_cpu);
        total_line(o, "in methods cpu", b->busy_cpu, n->busy_cpu);
    }
    tci_sink_printf(o, "%-22s", "calls");
    cell_count(o, tci_clamp_calls(b->calls), true, false, 11);
    cell_count(o, tci_clamp_calls(n->calls), true, false, 11);
    cell_count(o, tci_clamp_calls(n->calls) - tci_clamp_calls(b->calls), true, true, 11);
    if (d->count) {
        TCI_PUT_LIT(o, "\n\n"
            "Figures are counts of the sampled stacks' event (above); a change is NEW - BASE,\n"
            "in % of BASE. Calls count every call (normal + recursive). Inclusive counts\n"
            "are a method's outermost calls' only; exclusive counts are those of all its\n"
            "calls' own samples (as in the profile report). Methods are matched by name\n"
            "(pkg.Class.method; with the signature where overloads must be told apart);\n"
            "\"-\" is a side where the method does not appear (new, gone).\n\n");
        return;
    }
    TCI_PUT_LIT(o, "\n\n"
        "Times are microseconds (us), each rounded once from its exact ns sum; a change\n"
        "is NEW - BASE, in % of BASE. Calls count every call (normal + recursive).\n"
        "Inclusive time counts a method's outermost calls only; exclusive time is the\n"
        "self time of all its calls (as in the profile report). Methods are matched by\n"
        "name (pkg.Class.method; with the signature where overloads must be told\n"
        "apart); \"-\" is a side where the method does not appear (new, gone).\n\n");
}

/* ---- the table ------------------------------------------------------------------------ */

static void table_head(const tci_diff *d, tci_sink *o)
{
    static const char *const groups[2][2] = {{"inclusive wall (us)", "exclusive wall (us)"},
                                             {"inclusive thread CPU (us)", "exclusive thread CPU (us)"}};
    static const char *const count_groups[2] = {"inclusive count", "exclusive count"}; /* a count profile's */
    TCI_PUT_LIT(o, " calls                     ");
    const char *last = NULL; /* the last group is not padded: no trailing blanks */
    for (int cpu = 0; cpu < 2; cpu++)
        for (int k = 0; k < 2 && (cpu ? d->cpu : d->wall); k++) {
            if (last)
                tci_sink_printf(o, " %-44s", last);
            last = d->count ? count_groups[k] : groups[cpu][k];
        }
    tci_sink_printf(o, " %s\n", last);
    tci_sink_printf(o, " %8s %8s %8s", "BASE", "NEW", "change");
    for (int block = 0; block < 2 * ((int)d->wall + (int)d->cpu); block++)
        tci_sink_printf(o, " %11s %11s %11s %8s", "BASE", "NEW", "change", "%");
    TCI_PUT_LIT(o, "  method\n");
}

static void table_row(const tci_diff *d, tci_sink *o, const tci_drow *r)
{
    int64_t cb = tci_clamp_calls(r->fig[TCI_DIFF_BASE].calls), cn = tci_clamp_calls(r->fig[TCI_DIFF_NEW].calls);
    cell_count(o, cb, r->on[TCI_DIFF_BASE], false, 8);
    cell_count(o, cn, r->on[TCI_DIFF_NEW], false, 8);
    cell_count(o, cn - cb, true, true, 8);
    for (int cpu = 0; cpu < 2; cpu++) {
        if (!(cpu ? d->cpu : d->wall))
            continue;
        time_cells(o, r, true, cpu);
        time_cells(o, r, false, cpu);
    }
    TCI_PUT_LIT(o, "  ");
    tci_put_escaped_text(o, r->name);
    tci_sink_putc(o, '\n');
}

static int diff_text(const tci_diff *d, tci_sink *o)
{
    header(d, o);
    if (!d->n_rows) {
        TCI_PUT_LIT(o, "No method calls in either input.\n");
        return TC_OK;
    }
    table_head(d, o);
    for (uint32_t i = 0; i < d->n_rows; i++)
        table_row(d, o, &d->rows[i]);
    return TC_OK;
}

const tci_diff_format tci_diff_text = {
    .name = "text",
    .description = "the change per method as a table: calls, inclusive and exclusive time, BASE, NEW, change",
    .extensions = "txt",
    .options = tci_diff_options,
    .variants = (const tci_variant[]){{.name = "text", .extension = "txt", .mime = "text/plain; charset=utf-8",
                                       .mark = "# traceconv ", .aliases = "txt,table"}, {0}},
    .render = diff_text,
};
