/*
 * diff_csv.c - `traceconv diff -o csv`: the text table's rows for machines,
 * in the same order, under a fixed header (doc/diff-and-reports.md, "Diff"):
 *
 *   method,status,calls_base,calls_new,calls_delta,
 *   incl_wall_us_base,incl_wall_us_new,incl_wall_us_delta,
 *   excl_wall_us_base,excl_wall_us_new,excl_wall_us_delta,
 *   incl_cpu_us_base,incl_cpu_us_new,incl_cpu_us_delta,
 *   excl_cpu_us_base,excl_cpu_us_new,excl_cpu_us_delta
 *
 * status is both, new (only in NEW) or gone (only in BASE); the cells of a
 * missing side are empty (never 0), its delta is the other side's value
 * signed (+NEW, -BASE); a clock that one input lacks has empty cells. µs are
 * rounded as in the text. Two count profiles of one event (perf's cycles:
 * tc_calltree.h) have their counts where the wall time is, the columns named
 * after the event (incl_cycles:HG_base, ...), the cpu columns empty. Fields are quoted per RFC 4180 when needed; bytes
 * that are not UTF-8 become U+FFFD.
 */
#include "tc_diff.h"
#include "tc_writers.h"
#include "tc_writer.h"

/* ",BASE,NEW,DELTA" of one figure (a missing side's cell empty); shown false: three empty cells. */
static void triple(tci_sink *o, const tci_drow *r, int64_t b, int64_t n, int64_t delta, bool shown)
{
    if (!shown) {
        TCI_PUT_LIT(o, ",,,");
        return;
    }
    tci_sink_putc(o, ',');
    if (r->on[TCI_DIFF_BASE])
        tci_sink_i64(o, b);
    tci_sink_putc(o, ',');
    if (r->on[TCI_DIFF_NEW])
        tci_sink_i64(o, n);
    tci_sink_putc(o, ',');
    tci_sink_i64(o, delta);
}

static void time_triple(tci_sink *o, const tci_drow *r, bool incl, bool cpu, bool shown)
{
    int64_t b = tci_dfig_time(&r->fig[TCI_DIFF_BASE], incl, cpu), n = tci_dfig_time(&r->fig[TCI_DIFF_NEW], incl, cpu);
    /* the delta is rounded from the exact ns difference, as in the text */
    triple(o, r, tci_us_of(b), tci_us_of(n), tci_us_of(n - b), shown);
}

/* Count profiles: "incl_cycles:HG_base,..." where the wall time's columns are (RFC 4180 quotes when
 * the event's name needs them). */
static void count_columns(tci_sink *o, const char *count)
{
    static const char *const side[3] = {"_base", "_new", "_delta"};
    bool q = tci_csv_needs_quotes(count);
    for (int k = 0; k < 6; k++) {
        tci_sink_putc(o, ',');
        if (q)
            tci_sink_putc(o, '"');
        tci_sink_puts(o, k < 3 ? "incl_" : "excl_");
        tci_put_csv_text(o, count, q);
        tci_sink_puts(o, side[k % 3]);
        if (q)
            tci_sink_putc(o, '"');
    }
}

static int diff_csv(const tci_diff *d, tci_sink *o)
{
    TCI_PUT_LIT(o, "method,status,calls_base,calls_new,calls_delta");
    if (d->count)
        count_columns(o, d->count);
    else
        TCI_PUT_LIT(o, ",incl_wall_us_base,incl_wall_us_new,incl_wall_us_delta,"
                       "excl_wall_us_base,excl_wall_us_new,excl_wall_us_delta");
    TCI_PUT_LIT(o, ",incl_cpu_us_base,incl_cpu_us_new,incl_cpu_us_delta,"
                   "excl_cpu_us_base,excl_cpu_us_new,excl_cpu_us_delta\n");
    for (uint32_t i = 0; i < d->n_rows; i++) {
        const tci_drow *r = &d->rows[i];
        tci_put_csv_field(o, r->name);
        tci_sink_puts(o, !r->on[TCI_DIFF_BASE] ? ",new" : !r->on[TCI_DIFF_NEW] ? ",gone" : ",both");
        int64_t cb = tci_clamp_calls(r->fig[TCI_DIFF_BASE].calls), cn = tci_clamp_calls(r->fig[TCI_DIFF_NEW].calls);
        triple(o, r, cb, cn, cn - cb, true);
        time_triple(o, r, true, false, d->wall);
        time_triple(o, r, false, false, d->wall);
        time_triple(o, r, true, true, d->cpu);
        time_triple(o, r, false, true, d->cpu);
        tci_sink_putc(o, '\n');
    }
    return TC_OK;
}

const tci_diff_format tci_diff_csv = {
    .name = "csv",
    .description = "the table's rows as CSV, under a fixed header",
    .extensions = "csv",
    .options = tci_diff_options,
    .variants = (const tci_variant[]){{.name = "csv", .extension = "csv", .mime = "text/csv; charset=utf-8",
                                       .mark = "method,status,calls_base,calls_new,"},
                                      {0}},
    .render = diff_csv,
};
