/*
 * report.c - the profile people read (shared/docs/outputs/DMTRACEDUMP-REPORT.md):
 * per method, calls (normal+recursive), inclusive and exclusive wall and
 * thread-CPU time, its parents and children; for all threads, then per thread;
 * or, with csv, one machine row per method and thread; with html, the same
 * figures as one self-contained page (report_html.c).
 *
 * The figures are the profile module's (profile.c; the rules are in
 * tc_profile.h and doc/diff-and-reports.md). report_view.c puts them in order (a view)
 * and here they are rendered. The view is renderer-neutral: rows in report
 * order, each with its report index, so that another renderer (the HTML
 * report) shows the same rows without sorting again.
 *
 * The text keeps dmtracedump's layout where the two share columns (the
 * parents/children blocks of its inclusive section: index, %/total,
 * %/self, calls, usecs, name) so its users recognise it, fixed for its
 * weaknesses (§8): both clocks, signed numbers, one row per unknown id
 * ("unknown.0x1c", as every writer names it), the source file apart from the signature, "(toplevel)"
 * never "(null)", nested (recursive) edge time labelled as already counted,
 * a total order, per-thread sections, the trace's facts and repairs.
 *
 * A count profile (perf's cycles: tc_calltree.h) shows its counts in the
 * wall columns, named after the event in the header, the section titles and
 * the CSV header ("incl_cycles:HG"), and no thread-CPU figure.
 *
 * The text's counts and times are grouped by thousands ("1,234,567 us", as
 * flamegraph.pl's tooltips and pprof show them), so that a 22-second span
 * reads at a glance; identifiers stay as they are (indexes, tids, pids, the
 * start timestamp one pastes into another tool), and so does every CSV cell
 * (machines read it). The columns are wide enough for the separators.
 *
 * Times are µs: each figure is its exact ns sum rounded once, when printed,
 * to the nearest µs (halves away from zero). Nothing is rounded before it is
 * summed, so every printed value is within 0.5 µs of the truth; rows may not
 * add up to a printed total exactly (each is rounded on its own).
 *
 * Names are text: in the report, control bytes, backslashes and bytes that
 * are not UTF-8 are written as escapes (\n, \\, \xHH), so no name can break
 * a line; in CSV, fields are quoted per RFC 4180 and bytes that are not
 * UTF-8 become U+FFFD.
 */
#include "report_shared.h"
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_flame.h" /* the app-package row of the HTML variant's graphs */
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_writers.h"
#include "tc_select.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <math.h>
#include <stdlib.h>

/* ---- numbers ----------------------------------------------------------------- */

/* The cells are printf's ("%*lld", "%.1f%%", ...) without printf: a report has millions of
 * them (a section per thread), and printf's parsing was most of its time. A cell's text is
 * built from its end in a scratch between blanks, then placed with one fixed-size copy
 * straight into the sink's buffer (the blanks before or after it are its padding); near the
 * buffer's end, or wider than the copy, it goes through tci_put_aligned. */

#define CELL_COPY 32 /* bytes a cell's copy moves: its widest text or padding */

/* The scratch: CELL_COPY blanks, the text ending at `end` (at most CELL_COPY bytes), blanks. */
typedef struct cell {
    char b[3 * CELL_COPY];
    char *p; /* the text's first byte */
} cell;

static char *cell_end(cell *c) { return c->b + 2 * CELL_COPY; }

static void cell_start(cell *c)
{
    memset(c->b, ' ', sizeof c->b);
    c->p = cell_end(c);
}

static void cell_char(cell *c, char ch) { *--c->p = ch; }

/* v's decimal digits before the text already built ("%llu"). */
static void cell_digits(cell *c, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    for (; v >= 100; v /= 100) { /* two digits a division */
        c->p -= 2;
        memcpy(c->p, pairs + v % 100 * 2, 2);
    }
    if (v >= 10) {
        c->p -= 2;
        memcpy(c->p, pairs + v * 2, 2);
    } else {
        *--c->p = (char)('0' + v);
    }
}

/* v's digits grouped by thousands ("1,234,567"): a reading figure of the text report. */
static void cell_grouped(cell *c, uint64_t v)
{
    for (; v >= 1000; v /= 1000) {
        unsigned r = (unsigned)(v % 1000);
        *--c->p = (char)('0' + r % 10);
        *--c->p = (char)('0' + r / 10 % 10);
        *--c->p = (char)('0' + r / 100);
        *--c->p = ',';
    }
    cell_digits(c, v);
}

static void cell_signed(cell *c, int64_t v)
{
    cell_grouped(c, v >= 0 ? (uint64_t)v : (uint64_t)0 - (uint64_t)v);
    if (v < 0)
        cell_char(c, '-');
}

/* The text, right-aligned in width, or left-aligned when width is negative ("%*s"). */
static void cell_put(tci_sink *o, const cell *c, int width)
{
    const char *end = c->b + 2 * CELL_COPY;
    size_t len = (size_t)(end - c->p), w = (size_t)(width < 0 ? -(int64_t)width : width);
    if (TCI_UNLIKELY(w > CELL_COPY || o->len + CELL_COPY > sizeof o->buf)) {
        tci_put_aligned(o, c->p, len, width);
        return;
    }
    /* right-aligned: the copy starts w bytes before the text's end, in the blanks before it */
    const char *from = width > 0 && len < w ? end - w : c->p;
    memcpy(o->buf + o->len, from, CELL_COPY);
    o->len += len > w ? len : w;
}

/* Right-aligned in width (left-aligned when negative): a number, or "-" when absent. */
static void cell_i64(tci_sink *o, int64_t v, int width)
{
    cell c;
    cell_start(&c);
    cell_signed(&c, v);
    cell_put(o, &c, width);
}

static void cell_u64(tci_sink *o, uint64_t v, int width)
{
    cell c;
    cell_start(&c);
    cell_grouped(&c, v);
    cell_put(o, &c, width);
}

static void cell_absent(tci_sink *o, int width)
{
    cell c;
    cell_start(&c);
    cell_char(&c, '-');
    cell_put(o, &c, width);
}

static void cell_us(tci_sink *o, int64_t ns, bool present, int width)
{
    if (present)
        cell_i64(o, tci_us_of(ns), width);
    else
        cell_absent(o, width);
}

/* "35.0%" of part in whole; "-" when absent or whole is 0. */
static void cell_pct(tci_sink *o, int64_t part, int64_t whole, bool present, int width)
{
    if (!present || whole == 0) {
        cell_absent(o, width);
        return;
    }
    double x = 100.0 * (double)part / (double)whole;
    uint64_t tenths;
    if (TCI_UNLIKELY(!tci_fixed1_tenths(x, &tenths))) { /* beyond 2^50 %: printf's digits */
        char b[TCI_FMT_FIXED1_MAX + 1];
        size_t n = tci_fmt_fixed1(b, x);
        b[n++] = '%';
        tci_put_aligned(o, b, n, width);
        return;
    }
    cell c;
    cell_start(&c);
    cell_char(&c, '%');
    cell_char(&c, (char)('0' + tenths % 10));
    cell_char(&c, '.');
    cell_digits(&c, tenths / 10);
    if (signbit(x))
        cell_char(&c, '-');
    cell_put(o, &c, width);
}

/* "[12]", a row's report index (0: (toplevel)), aligned in width. */
static void cell_index(tci_sink *o, uint32_t index, int width)
{
    cell c;
    cell_start(&c);
    cell_char(&c, ']');
    cell_digits(&c, index);
    cell_char(&c, '[');
    cell_put(o, &c, width);
}

/* "%9s+%-9s" (normal+recursive calls, grouped) aligned in width (at most 2 * half + 1: no
 * padding beyond the halves'). */
static void cell_calls(tci_sink *o, uint64_t calls, uint64_t recursive, int half)
{
    cell_u64(o, calls, half);
    tci_sink_putc(o, '+');
    cell_u64(o, recursive, -half);
}

/* ---- names --------------------------------------------------------------------- */

/* The method's name in a report: "pkg.Class.method (sig)ret", a plain name
 * (a systrace slice) as it is, an unknown id as "unknown.0x1c". */
static void put_method_text_file(tci_sink *o, const tci_method *m)
{
    if (m->defined && !m->plain_name && m->file && m->file[0] && strcmp(m->file, "(null)")) { /* ART writes "(null)" for none */
        TCI_PUT_LIT(o, "  [");
        tci_put_escaped_text(o, m->file);
        if (m->line > 0)
            tci_sink_printf(o, ":%d", (int)m->line);
        tci_sink_putc(o, ']');
    }
}

static void put_method_text(tci_sink *o, const tci_method *m, bool with_file)
{
    tci_put_method_name(o, m, tci_put_escaped_text);
    if (with_file)
        put_method_text_file(o, m);
}

/* The sink kept_name renders into: the bytes are appended to r->names. */
static int append_name(void *user, const void *buf, size_t len)
{
    report_w *r = user;
    if (len > r->cap_names - r->n_names) {
        size_t cap = r->cap_names ? r->cap_names : 4096;
        while (cap - r->n_names < len)
            cap *= 2;
        char *n = tci_realloc_array(r->names, cap, 1);
        if (!n)
            return -1;
        r->names = n;
        r->cap_names = cap;
    }
    memcpy(r->names + r->n_names, buf, len);
    r->n_names += len;
    return 0;
}

static void free_kept(kept_names *k)
{
    free(k->at);
    free(k->len);
    free(k->whole_len);
    *k = (kept_names){0};
}

/* k's tables for every method of t, all or none (a half-made table would be read later). */
static bool alloc_kept(report_w *r, const tci_trace *t, kept_names *k)
{
    size_t n = t->n_methods ? t->n_methods : 1;
    k->at = tci_calloc(n, sizeof *k->at);
    k->len = tci_calloc(n, sizeof *k->len);
    k->whole_len = tci_calloc(n, sizeof *k->whole_len);
    if (!r->name_sink)
        r->name_sink = tci_malloc(sizeof *r->name_sink);
    if (k->at && k->len && k->whole_len && r->name_sink)
        return true;
    free_kept(k);
    return false;
}

typedef void method_renderer(tci_sink *o, const tci_method *m);

/* Method mi's text, rendered by first and then rest (when not NULL) on its first use and kept
 * in k: *len bytes (of the first part, or of the whole), or NULL when it could not be kept
 * (memory; then the caller renders it itself). */
static const char *kept_name(report_w *r, const tci_trace *t, kept_names *k, uint32_t mi, method_renderer *first,
                             method_renderer *rest, bool whole, size_t *len)
{
    if (!k->at && !alloc_kept(r, t, k))
        return NULL;
    if (!k->at[mi]) {
        tci_sink *o = r->name_sink;
        size_t at = r->n_names;
        if (tci_sink_open_fn(o, append_name, r, false) != TC_OK)
            return NULL;
        first(o, &t->methods[mi]);
        int bad = tci_sink_flush_buf(o) != 0;
        size_t first_len = r->n_names - at;
        if (rest)
            rest(o, &t->methods[mi]);
        bad |= tci_sink_close(o) != TC_OK;
        if (bad || r->n_names - at > UINT32_MAX) {
            r->n_names = at;
            return NULL;
        }
        k->at[mi] = at + 1;
        k->len[mi] = (uint32_t)first_len;
        k->whole_len[mi] = (uint32_t)(r->n_names - at);
    }
    *len = whole ? k->whole_len[mi] : k->len[mi];
    return r->names + k->at[mi] - 1;
}

static void put_method_bare(tci_sink *o, const tci_method *m) { put_method_text(o, m, false); }

/* A method's name (put_method_text), from the names rendered once. */
static void put_method_name_kept(tci_sink *o, report_w *r, const tci_trace *t, uint32_t mi, bool with_file)
{
    size_t len;
    const char *text = kept_name(r, t, &r->text_names, mi, put_method_bare, put_method_text_file, with_file, &len);
    if (text)
        tci_sink_write(o, text, len);
    else
        put_method_text(o, &t->methods[mi], with_file);
}

static void put_row_name(tci_sink *o, report_w *r, const tci_profile *p, uint32_t row, bool with_file)
{
    if (row == TCI_NONE)
        TCI_PUT_LIT(o, "(toplevel)");
    else
        put_method_name_kept(o, r, p->trace, p->methods[row].method, with_file);
}

/* The method as one CSV field: the report's name without the source file. */
static void put_method_csv(tci_sink *o, const tci_method *m)
{
    const char *parts[4] = {NULL, NULL, NULL, NULL};
    if (m->plain_name) {
        parts[0] = m->name;
    } else if (!m->defined) {
        parts[0] = m->short_name; /* "unknown.0x1c", as tci_put_method_name */
    } else {
        parts[0] = m->cls;
        parts[1] = m->name;
        parts[2] = m->sig && m->sig[0] ? m->sig : NULL;
    }
    bool quoted = tci_csv_needs_quotes(parts[0]) || tci_csv_needs_quotes(parts[1]) || tci_csv_needs_quotes(parts[2]);
    if (quoted)
        tci_sink_putc(o, '"');
    tci_put_csv_text(o, parts[0], quoted);
    if (parts[1]) {
        tci_sink_putc(o, '.');
        tci_put_csv_text(o, parts[1], quoted);
    }
    if (parts[2]) {
        tci_sink_putc(o, ' ');
        tci_put_csv_text(o, parts[2], quoted);
    }
    if (quoted)
        tci_sink_putc(o, '"');
}

/* The CSV field of method mi (put_method_csv), rendered once: a method is a row in every
 * thread's rows. */
static void put_method_csv_kept(tci_sink *o, report_w *r, const tci_trace *t, uint32_t mi)
{
    size_t len;
    const char *text = kept_name(r, t, &r->csv_names, mi, put_method_csv, NULL, true, &len);
    if (text)
        tci_sink_write(o, text, len);
    else
        put_method_csv(o, &t->methods[mi]);
}

static int64_t total_of(const report_w *r, const tci_profile *p) { return r->cpu ? p->span_cpu : p->span_wall; }

/* ---- text: the facts --------------------------------------------------------- */

static void text_header(tci_wctx *w)
{
    const report_w *r = w->priv;
    const tci_trace *t = w->trace;
    const tci_diag *d = w->diag;
    tci_sink *o = w->out;
    TCI_PUT_LIT(o, "# traceconv " TC_VERSION_STRING " profile report\n\ninput       ");
    tci_put_escaped_text(o, t->input_name ? t->input_name : "-");
    char format[TCI_FORMAT_TEXT_MAX];
    TCI_PUT_LIT(o, "\nformat      ");
    tci_put_escaped_text(o, tci_trace_format(t, format, sizeof format));
    tci_sink_printf(o, "\nclock       %s (%s)\n", tci_clock_name(t->clock), tci_report_clock_text(r));
    if (t->vm) { /* the input's own vm= text */
        TCI_PUT_LIT(o, "vm          ");
        tci_put_escaped_text(o, t->vm);
        tci_sink_putc(o, '\n');
    }
    TCI_PUT_LIT(o, "process     ");
    tci_put_escaped_text(o, t->processes[0].name ? t->processes[0].name : "?");
    /* the facts of what was selected: the window's duration, the threads kept (and of how many) */
    char sel[TCI_SELECTION_TEXT_MAX];
    int64_t from, to;
    tci_selection_window(t, w->opt, &from, &to);
    uint64_t kept = w->opt->thread ? tci_selection_threads(t) : d->fig[TCI_FIG_THREADS];
    tci_sink_printf(o, " (pid %lld)\nstart       %lld ns\n", (long long)t->processes[0].pid,
                    (long long)t->start_ns); /* the start: a timestamp to paste, as it is */
    if (tci_selection_text(w->opt, tci_report_options, sel, sizeof sel)) {
        TCI_PUT_LIT(o, "selection   ");
        tci_put_escaped_text(o, sel);
        tci_sink_putc(o, '\n');
    }
    TCI_PUT_LIT(o, "duration    ");
    cell_i64(o, tci_us_of(to - from), 0);
    TCI_PUT_LIT(o, " us");
    if (to - from != t->end_ns - t->start_ns) {
        TCI_PUT_LIT(o, " (the window, from ");
        cell_i64(o, tci_us_of(from - t->start_ns), 0);
        TCI_PUT_LIT(o, " us; the trace lasts ");
        cell_i64(o, tci_us_of(t->end_ns - t->start_ns), 0);
        TCI_PUT_LIT(o, " us)");
    }
    TCI_PUT_LIT(o, "\nthreads     ");
    cell_u64(o, kept, 0);
    if (kept != d->fig[TCI_FIG_THREADS]) {
        TCI_PUT_LIT(o, " (kept, of ");
        cell_u64(o, d->fig[TCI_FIG_THREADS], 0);
        tci_sink_putc(o, ')');
    }
    TCI_PUT_LIT(o, "\nmethods     ");
    cell_u64(o, d->fig[TCI_FIG_METHODS], 0);
    TCI_PUT_LIT(o, "\nrecords     ");
    cell_u64(o, d->fig[TCI_FIG_RECORDS], 0);
    tci_sink_putc(o, '\n');
    if (d->fig[TCI_FIG_SAMPLES]) {
        TCI_PUT_LIT(o, "samples     ");
        cell_u64(o, d->fig[TCI_FIG_SAMPLES], 0);
        tci_sink_putc(o, '\n');
    }
    static const int kinds[] = {TC_FIG_REPAIR, TC_FIG_WARNING, TC_FIG_NOTE}; /* the CLI summary's groups */
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        tci_sink_printf(o, "%-12s", tci_figure_heading(kinds[i]));
        tci_report_figures(o, d, kinds[i]);
        tci_sink_putc(o, '\n');
    }
    bool by_time = w->opt->sort == TCI_SORT_INCL || w->opt->sort == TCI_SORT_EXCL;
    if (r->count) {
        tci_sink_printf(o, "counts      ");
        tci_put_escaped_text(o, r->count);
        tci_sink_printf(o, "\nsorted by   %s%s", tci_report_sort_text(w->opt->sort), by_time ? " count" : "");
        TCI_PUT_LIT(o, "\n\n"
            "Figures are counts of ");
        tci_put_escaped_text(o, r->count);
        TCI_PUT_LIT(o, ", the weights of the sampled stacks (columns\n"
            "incl-count, excl-count); slices add their frames and calls, not their time,\n"
            "which the timelines show. A call is recursive (calls = normal+recursive)\n"
            "when its method is already on the thread's stack. Inclusive counts are a\n"
            "method's outermost calls' only, so recursion never counts twice; exclusive\n"
            "counts are those of all its calls' own samples. Percentages are of the total:\n"
            "the threads' counts, or the thread's in a thread's section. Per call: inclusive\n"
            "count / normal calls.\n");
        return;
    }
    tci_sink_printf(o, "sorted by   %s%s\n", tci_report_sort_text(w->opt->sort),
                    !by_time ? "" : r->cpu ? " thread-CPU time" : " wall time");
    TCI_PUT_LIT(o, "\n"
        "Times are microseconds (us), each rounded once from its exact ns sum. A call is\n"
        "recursive (calls = normal+recursive) when its method is already on the thread's\n"
        "stack. Inclusive time counts a method's outermost calls only, so recursion never\n"
        "counts twice; exclusive time is the self time of all its calls. Percentages are\n"
        "of the total: the sum of the threads' spans (first to last call event), or of\n"
        "the thread's span in a thread's section. Per call: inclusive time / normal calls.\n");
}

/* ---- text: the method table ---------------------------------------------------- */

#define RULE "======================================================================\n"

/* "wall 200 us, cpu -": a figure in both clocks; a count profile's "1234 cycles:HG". */
static void both_clocks(tci_sink *o, const report_w *r, int64_t wall, int64_t cpu)
{
    if (r->count) {
        cell_i64(o, tci_us_of(wall), 0);
        tci_sink_putc(o, ' ');
        tci_put_escaped_text(o, r->count);
        tci_sink_putc(o, '\n');
        return;
    }
    TCI_PUT_LIT(o, "wall ");
    cell_us(o, wall, r->has_wall, 0);
    tci_sink_puts(o, r->has_wall ? " us, cpu " : ", cpu ");
    cell_us(o, cpu, r->has_cpu, 0);
    if (r->has_cpu)
        TCI_PUT_LIT(o, " us");
    tci_sink_putc(o, '\n');
}

static void section_facts(tci_wctx *w, const tci_profile *p)
{
    const report_w *r = w->priv;
    tci_sink *o = w->out;
    TCI_PUT_LIT(o, "  span        ");
    both_clocks(o, r, p->span_wall, p->span_cpu);
    TCI_PUT_LIT(o, "  in methods  ");
    both_clocks(o, r, p->busy_wall, p->busy_cpu);
    TCI_PUT_LIT(o, "  calls       ");
    cell_u64(o, p->calls, 0);
    TCI_PUT_LIT(o, "\n  methods     ");
    cell_u64(o, p->n_methods, 0);
    tci_sink_putc(o, '\n');
}

/* A count profile's columns are its counts where the wall time is (the cpu columns show -). */
static void table_head(tci_sink *o, const report_w *r)
{
    bool c = r->count != NULL;
    tci_sink_printf(o, "%-7s %19s %13s %6s %13s %6s %13s %6s %13s %6s %12s %12s  %s\n", "index", "calls+recur",
                    c ? "incl-count" : "incl-wall", "%", c ? "excl-count" : "excl-wall", "%", "incl-cpu", "%",
                    "excl-cpu", "%", c ? "count/call" : "wall/call", "cpu/call", "name");
}

/* Inclusive time per normal call ("-" without calls: sampled input). */
static void cell_per_call(tci_sink *o, int64_t incl, uint64_t calls, bool present)
{
    if (present && calls)
        cell_i64(o, tci_us_of(incl / tci_clamp_calls(calls)), 12);
    else
        cell_absent(o, 12);
}

/* A time and its share of whole, each followed by a blank: the table's four time columns. */
static void cells_us_pct(tci_sink *o, int64_t ns, int64_t whole, bool present)
{
    cell_us(o, ns, present, 13);
    tci_sink_putc(o, ' ');
    cell_pct(o, ns, whole, present, 6);
    tci_sink_putc(o, ' ');
}

static void table_row(tci_wctx *w, const rview *v, uint32_t row)
{
    const report_w *r = w->priv;
    const tci_profile *p = v->p;
    const tci_pmethod *m = &p->methods[row];
    tci_sink *o = w->out;
    cell_index(o, v->index[row], -7); /* "%-7s %19s ": index, calls */
    tci_sink_putc(o, ' ');
    cell_calls(o, m->calls, m->recursive_calls, 9);
    tci_sink_putc(o, ' ');
    cells_us_pct(o, m->incl_wall, p->span_wall, r->has_wall);
    cells_us_pct(o, m->excl_wall, p->span_wall, r->has_wall);
    cells_us_pct(o, m->incl_cpu, p->span_cpu, r->has_cpu);
    cells_us_pct(o, m->excl_cpu, p->span_cpu, r->has_cpu);
    cell_per_call(o, m->incl_wall, m->calls, r->has_wall);
    tci_sink_putc(o, ' ');
    cell_per_call(o, m->incl_cpu, m->calls, r->has_cpu);
    TCI_PUT_LIT(o, "  ");
    put_method_name_kept(o, w->priv, p->trace, m->method, true);
    tci_sink_putc(o, '\n');
}

static void method_table(tci_wctx *w, const rview *v)
{
    table_head(w->out, w->priv);
    for (uint32_t i = 0; i < v->p->n_methods; i++)
        table_row(w, v, v->rows[i].row);
}

/* ---- text: parents and children (dmtracedump's inclusive section) ---------------- */

/* "%6s %5s   %5.1f%% %6s %8s/%-8s %11s NAME": one parent or child row (counts grouped). */
static void edge_row(tci_wctx *w, const rview *v, const tci_psort_item *it, int side, bool nested, uint32_t self,
                     int64_t self_incl)
{
    const report_w *r = w->priv;
    const tci_profile *p = v->p;
    tci_sink *o = w->out;
    tci_pcost c = tci_report_edge_part(&p->edges[it->tag], side, nested);
    int64_t t = r->cpu ? c.cpu : c.wall;
    TCI_PUT_LIT(o, "               ");
    if (nested)
        TCI_PUT_LIT(o, "      ");
    else
        cell_pct(o, t, self_incl, true, 6);
    /* a parent row's total is this method's calls; a child row's, the child's */
    uint64_t of = tci_report_total_calls(p, side == TCI_REPORT_PARENTS ? self : it->row);
    tci_sink_putc(o, ' '); /* " %6s %8s/%-8s %11s ": index, calls/of, time */
    cell_index(o, it->row == TCI_NONE ? 0 : v->index[it->row], 6);
    tci_sink_putc(o, ' ');
    cell_u64(o, c.calls, 8);
    tci_sink_putc(o, '/');
    cell_u64(o, of, -8);
    tci_sink_putc(o, ' ');
    cell_i64(o, tci_us_of(t), 11);
    tci_sink_putc(o, ' ');
    put_row_name(o, w->priv, p, it->row, false);
    tci_sink_putc(o, '\n');
}

static int edge_list(tci_wctx *w, const rview *v, const uint32_t *at, uint32_t n, int side, uint32_t self,
                     int64_t self_incl)
{
    report_w *r = w->priv;
    for (int nested = 0; nested < 2; nested++) {
        uint32_t k;
        int rc = tci_report_list(w, v->p, at, n, side, nested, &k);
        if (rc != TC_OK)
            return rc;
        if (nested && k)
            TCI_PUT_LIT(w->out, "               +++++++++++++++++++++++++ nested: already inside the lines above\n");
        for (uint32_t i = 0; i < k; i++)
            edge_row(w, v, &r->list[i], side, nested, self, self_incl);
    }
    return TC_OK;
}

/* "%-6s %5.1f%%   %5s %6s %8s+%-8s %11s NAME" and its "excl" line (counts grouped). */
static void method_line(tci_wctx *w, const rview *v, uint32_t row, uint64_t calls, uint64_t rec, int64_t incl,
                        int64_t excl, int64_t total)
{
    static const char *const excl_what[2] = {"(self time of the outermost calls)", "(time outside any method)"};
    tci_sink *o = w->out;
    cell_index(o, row == TCI_NONE ? 0 : v->index[row], -6);
    tci_sink_putc(o, ' ');
    cell_pct(o, incl, total, true, 6);
    TCI_PUT_LIT(o, "                "); /* "   %5s %6s " of two empty texts */
    cell_calls(o, calls, rec, 8);
    tci_sink_putc(o, ' ');
    cell_i64(o, tci_us_of(incl), 11);
    tci_sink_putc(o, ' ');
    put_row_name(o, w->priv, v->p, row, true);
    TCI_PUT_LIT(o, "\n               ");
    cell_pct(o, excl, incl, true, 6);
    TCI_PUT_LIT(o, "   excl                   "); /* " %6s %8s %8s " of "excl" and two empty texts */
    cell_i64(o, tci_us_of(excl), 11);
    tci_sink_putc(o, ' ');
    tci_sink_puts(o, excl_what[row == TCI_NONE]);
    tci_sink_putc(o, '\n');
}

static int calls_section(tci_wctx *w, const rview *v)
{
    const report_w *r = w->priv;
    const tci_profile *p = v->p;
    tci_sink *o = w->out;
    int64_t total = total_of(r, p);
    if (r->count) {
        TCI_PUT_LIT(o, "\n" RULE "\nParents and children of each method, by inclusive count (");
        tci_put_escaped_text(o, r->count);
        TCI_PUT_LIT(o, ")\n\n");
    } else {
        tci_sink_printf(o, "\n" RULE "\nParents and children of each method, by inclusive %s time (us)\n\n",
                        r->cpu ? "thread-CPU" : "wall");
    }
    TCI_PUT_LIT(o,
        "A method's line: its index, %/total, calls (normal+recursive), inclusive time;\n"
        "its excl line: the self time of its outermost calls (%/self of inclusive).\n"
        "Above it, its parents: calls along each edge / all its calls, and their time;\n"
        "below it, its children called by its outermost calls: calls / all the child's\n"
        "calls, and their time. After \"+++ nested\": the calls made while the method\n"
        "(above: the callee, below: the caller) was already running; their time is\n"
        "already inside the lines above it, never extra.\n\n");
    tci_sink_puts(o, r->count ? "index  %/total %/self  index       calls             count name\n"
                              : "index  %/total %/self  index       calls             usecs name\n");
    /* (toplevel): the threads themselves; its excl is the time outside any method */
    TCI_PUT_LIT(o, "----------------------------------------------------\n");
    int64_t busy = r->cpu ? p->busy_cpu : p->busy_wall;
    method_line(w, v, TCI_NONE, 0, 0, total, total - busy, total);
    int rc = edge_list(w, v, p->child_edges + p->top_children_at, p->n_top_children, TCI_REPORT_CHILDREN, TCI_NONE, total);
    for (uint32_t i = 0; i < p->n_methods && rc == TC_OK; i++) {
        uint32_t row = v->rows[i].row;
        const tci_pmethod *m = &p->methods[row];
        int64_t incl = r->cpu ? m->incl_cpu : m->incl_wall;
        TCI_PUT_LIT(o, "----------------------------------------------------\n");
        rc = edge_list(w, v, p->parent_edges + m->parents_at, m->n_parents, TCI_REPORT_PARENTS, row, incl);
        if (rc != TC_OK)
            break;
        method_line(w, v, row, m->calls, m->recursive_calls, incl, r->cpu ? m->outer_excl_cpu : m->outer_excl_wall,
                    total);
        rc = edge_list(w, v, p->child_edges + m->children_at, m->n_children, TCI_REPORT_CHILDREN, row, incl);
    }
    return rc;
}

/* ---- bottom-up (reverse): the call tree read from the leaf ---------------------- */

#define BOTTOM_UP_MAX_INDENT 20 /* levels; deeper lines say their depth in its column */

/* Whether the report shows the callers of a method (the option callers) */
static bool r_callers(const tci_wctx *w) { return ((const report_w *)w->priv)->callers != NULL; }

typedef struct bottom_up {
    tci_wctx *w;
    const rview *v;
    const tci_calltree *tree;
    int64_t total; /* %/total's whole (callers: the methods' time) */
} bottom_up;

static int64_t node_time(const bottom_up *bu, uint32_t node)
{
    const report_w *r = bu->w->priv;
    return r->cpu ? bu->tree->nodes[node].cpu_total : bu->tree->nodes[node].wall_total;
}

static int bottom_up_line(void *user, uint32_t node, uint32_t depth)
{
    const bottom_up *bu = user;
    tci_sink *o = bu->w->out;
    const tci_ctnode *n = &bu->tree->nodes[node];
    int64_t t = node_time(bu, node);
    cell_pct(o, t, bu->total, true, 8);
    tci_sink_putc(o, ' '); /* " %12s %14s %6u  %*s": time, calls (grouped), depth, indent */
    cell_i64(o, tci_us_of(t), 12);
    tci_sink_putc(o, ' ');
    cell_u64(o, n->calls, 14);
    tci_sink_putc(o, ' ');
    cell_u64(o, depth, 6);
    TCI_PUT_LIT(o, "  ");
    tci_put_aligned(o, "", 0, (int)(2 * (depth < BOTTOM_UP_MAX_INDENT ? depth : BOTTOM_UP_MAX_INDENT)));
    put_row_name(o, bu->w->priv, bu->v->p, tci_profile_row(bu->v->p, n->method), false);
    tci_sink_putc(o, '\n');
    return tci_sink_failed(o) ? TC_ERR_IO : TC_OK;
}

/* The lines of the merged derived tree (bottom-up, callers), 0.1% of total and more. */
static int derived_lines(tci_wctx *w, const rview *v, const tci_calltree *ct, int64_t total)
{
    const report_w *r = w->priv;
    tci_calltree rev = {0}, merged = {0};
    int rc = tci_report_derived_trees(w, v->p, ct, &rev, &merged);
    bottom_up bu = {.w = w, .v = v, .tree = &merged, .total = total};
    if (rc == TC_OK && r->callers) /* the shares are of the methods' own time */
        bu.total = r->cpu ? merged.nodes[merged.roots[0]].cpu_total : merged.nodes[merged.roots[0]].wall_total;
    int64_t min_time = bu.total / 1000 + (bu.total % 1000 != 0); /* 0.1% of the total, rounded up */
    if (rc == TC_OK)
        rc = tci_report_tree_lines(v->p, &merged, merged.roots[0], r->cpu, min_time, bottom_up_line, &bu);
    tci_calltree_free(&merged);
    tci_calltree_free(&rev);
    return rc == TC_ERR_IO ? TC_OK : rc; /* a failed sink: the writer's return says so */
}

static int bottom_up_section(tci_wctx *w, const rview *v, const tci_calltree *ct)
{
    const report_w *r = w->priv;
    tci_sink *o = w->out;
    if (r->count) {
        TCI_PUT_LIT(o, "\n" RULE "\nBottom-up: who calls each method, by self count (");
        tci_put_escaped_text(o, r->count);
        TCI_PUT_LIT(o, ")\n\n");
    } else {
        tci_sink_printf(o, "\n" RULE "\nBottom-up: who calls each method, by self %s time (us)\n\n",
                        r->cpu ? "thread-CPU" : "wall");
    }
    tci_sink_printf(o,
        "Each method with self time is a root (its time: its exclusive time), its callers\n"
        "beneath it, their callers beneath them: a line's time is the root's self time\n"
        "while called through that chain of callers, its calls the root's calls through\n"
        "it. Lines under 0.1%% of the total are left out; the depth column counts the\n"
        "levels (indented up to %d).\n\n", BOTTOM_UP_MAX_INDENT);
    tci_sink_puts(o, r->count ? " %/total        count          calls  depth  name\n"
                              : " %/total        usecs          calls  depth  name\n");
    return derived_lines(w, v, ct, total_of(r, v->p));
}

/* --callers: each call of the methods with its inclusive time, their callers beneath (pprof's
 * -peek, speedscope's sandwich): the shares are of the methods' own time. */
static int callers_section(tci_wctx *w, const rview *v, const tci_calltree *ct)
{
    const report_w *r = w->priv;
    tci_sink *o = w->out;
    TCI_PUT_LIT(o, "\n" RULE "\nCallers of ");
    tci_put_escaped_text(o, w->opt->callers);
    if (r->count) {
        TCI_PUT_LIT(o, ", by inclusive count (");
        tci_put_escaped_text(o, r->count);
        TCI_PUT_LIT(o, ")\n\n");
    } else {
        tci_sink_printf(o, ", by inclusive %s time (us)\n\n", r->cpu ? "thread-CPU" : "wall");
    }
    tci_sink_printf(o,
        "Each method the pattern names is a root with the whole time of its calls (a\n"
        "recursive call counted once, in its outermost frame); its callers are beneath it,\n"
        "their callers beneath them: a line's time is the method's time while called\n"
        "through that chain of callers, its %%/method that time's share of all of the\n"
        "method's time, its calls the method's calls through it. Lines under 0.1%% of the\n"
        "method's time are left out; the depth column counts the levels (indented up to %d).\n\n",
        BOTTOM_UP_MAX_INDENT);
    tci_sink_puts(o, r->count ? "%/method        count          calls  depth  name\n"
                              : "%/method        usecs          calls  depth  name\n");
    return derived_lines(w, v, ct, 0);
}

/* ---- text: sections ------------------------------------------------------------ */

static int text_all(tci_wctx *w, const tci_calltree *ct)
{
    tci_profile p;
    rview v;
    int rc = tci_profile_build(&p, ct, TCI_NONE);
    if (rc == TC_OK)
        rc = tci_report_view(w, &p, &v);
    if (rc == TC_OK) {
        tci_sink_printf(w->out, "\n" RULE "\nAll threads (%u)\n", p.n_threads);
        section_facts(w, &p);
        TCI_PUT_LIT(w->out, "\n");
        if (p.n_methods) {
            method_table(w, &v);
            rc = r_callers(w) ? callers_section(w, &v, ct)
                 : w->opt->reverse ? bottom_up_section(w, &v, ct)
                                   : calls_section(w, &v);
        } else {
            TCI_PUT_LIT(w->out, "No method calls: no thread of the input has a slice or a sample.\n");
        }
        tci_report_saturation_note(w, &p);
    }
    tci_profile_free(&p);
    return rc;
}

static int text_thread(tci_wctx *w, const tci_calltree *ct, uint32_t t)
{
    const tci_thread *th = &w->trace->threads[t];
    tci_profile p;
    rview v;
    int rc = tci_profile_build(&p, ct, t);
    if (rc == TC_OK)
        rc = tci_report_view(w, &p, &v);
    if (rc == TC_OK) {
        TCI_PUT_LIT(w->out, "\n" RULE "\nThread ");
        tci_put_escaped_text(w->out, th->name);
        tci_sink_printf(w->out, " (tid %llu)\n", (unsigned long long)th->tid);
        section_facts(w, &p);
        TCI_PUT_LIT(w->out, "\n");
        method_table(w, &v);
        tci_report_saturation_note(w, &p);
    }
    tci_profile_free(&p);
    return rc;
}

/* ---- CSV ----------------------------------------------------------------------- */

static void csv_us(tci_sink *o, int64_t ns, bool present)
{
    tci_sink_putc(o, ',');
    if (present)
        tci_sink_i64(o, tci_us_of(ns));
}

/* The thread's cells of a row: "name,tid,", or "all,," for all threads (NULL). */
static void csv_thread_cells(tci_sink *o, const tci_thread *th)
{
    if (!th) {
        TCI_PUT_LIT(o, "all,,");
        return;
    }
    bool q = tci_csv_needs_quotes(th->name);
    if (q)
        tci_sink_putc(o, '"');
    tci_put_csv_text(o, th->name, q);
    if (q)
        tci_sink_putc(o, '"');
    tci_sink_putc(o, ',');
    tci_sink_u64(o, th->tid);
    tci_sink_putc(o, ',');
}

/* One profile's rows; thread NULL: the merged rows ("all", no tid). */
static int csv_rows(tci_wctx *w, const tci_calltree *ct, uint32_t t)
{
    const report_w *r = w->priv;
    tci_sink *o = w->out;
    const tci_thread *th = t == TCI_NONE ? NULL : &w->trace->threads[t];
    tci_profile p;
    rview v;
    int rc = tci_profile_build(&p, ct, t);
    if (rc == TC_OK)
        rc = tci_report_view(w, &p, &v);
    for (uint32_t i = 0; rc == TC_OK && i < p.n_methods; i++) {
        const tci_pmethod *m = &p.methods[v.rows[i].row];
        csv_thread_cells(o, th);
        put_method_csv_kept(o, w->priv, w->trace, m->method);
        tci_sink_putc(o, ',');
        tci_sink_u64(o, tci_report_total_calls(&p, v.rows[i].row));
        csv_us(o, m->incl_wall, r->has_wall);
        csv_us(o, m->excl_wall, r->has_wall);
        csv_us(o, m->incl_cpu, r->has_cpu);
        csv_us(o, m->excl_cpu, r->has_cpu);
        tci_sink_putc(o, '\n');
    }
    if (rc == TC_OK)
        tci_report_saturation_note(w, &p);
    tci_profile_free(&p);
    return rc;
}

/* ---- CSV, bottom-up (reverse): the tree's nodes as rows ------------------------------ */

/* The walk over one root of the bottom-up tree: every node a row, numbered through the file. */
typedef struct csv_bottom_up {
    tci_wctx *w;
    const tci_calltree *tree;
    const tci_thread *th;   /* NULL: all threads */
    uint64_t next_id;       /* the file's next row id */
    uint64_t *ids;          /* per depth: the row id of the open node */
    uint32_t cap_ids;
} csv_bottom_up;

static int csv_bottom_up_row(void *user, uint32_t node, uint32_t depth)
{
    csv_bottom_up *cb = user;
    const report_w *r = cb->w->priv;
    const tci_ctnode *n = &cb->tree->nodes[node];
    tci_sink *o = cb->w->out;
    if (tci_sink_failed(o))
        return TC_ERR_IO;
    if (tci_grow((void **)&cb->ids, &cb->cap_ids, depth, sizeof *cb->ids) != 0)
        return TC_ERR_NOMEM;
    cb->ids[depth] = cb->next_id++;
    csv_thread_cells(o, cb->th);
    put_method_csv_kept(o, cb->w->priv, cb->w->trace, n->method);
    tci_sink_putc(o, ',');
    tci_sink_u64(o, n->calls);
    csv_us(o, n->wall_total, r->has_wall);
    csv_us(o, n->wall_self, r->has_wall);
    csv_us(o, n->cpu_total, r->has_cpu);
    csv_us(o, n->cpu_self, r->has_cpu);
    tci_sink_putc(o, ',');
    tci_sink_u64(o, cb->ids[depth]);
    tci_sink_putc(o, ',');
    if (depth)
        tci_sink_u64(o, cb->ids[depth - 1]);
    tci_sink_putc(o, '\n');
    return TC_OK;
}

static void csv_bottom_up_leave(void *user, uint32_t node, uint32_t depth) { (void)user, (void)node, (void)depth; }

static int csv_bottom_up_tree(csv_bottom_up *cb, const tci_calltree *tree, uint32_t root, const tci_thread *th)
{
    cb->tree = tree;
    cb->th = th;
    int rc = tci_calltree_walk(tree, root, &(tci_ctvisit){csv_bottom_up_row, csv_bottom_up_leave, cb});
    return rc == TC_ERR_IO ? TC_OK : rc; /* a failed sink: the writer's return says so */
}

/* The rows of the bottom-up tree: all threads, then each thread with calls. */
static int csv_bottom_up_rows(tci_wctx *w, const tci_calltree *ct)
{
    tci_profile p;
    tci_calltree rev = {0}, merged = {0};
    csv_bottom_up cb = {.w = w, .next_id = 1};
    int rc = tci_profile_build(&p, ct, TCI_NONE);
    if (rc == TC_OK)
        rc = tci_report_derived_trees(w, &p, ct, &rev, &merged);
    if (rc == TC_OK)
        rc = csv_bottom_up_tree(&cb, &merged, merged.roots[0], NULL);
    for (uint32_t t = 0; t < ct->n_roots && rc == TC_OK && !tci_sink_failed(w->out); t++)
        if (tci_report_thread_has_calls(ct, t))
            rc = csv_bottom_up_tree(&cb, &rev, rev.roots[t], &w->trace->threads[t]);
    free(cb.ids);
    tci_calltree_free(&merged);
    tci_calltree_free(&rev);
    tci_profile_free(&p);
    return rc;
}

/* ---- the writer ---------------------------------------------------------------- */

static int report_begin(tci_wctx *w)
{
    report_w *r = w->priv;
    int rc = tci_weight_check(w->diag, w->trace, w->opt->weight_cpu, "report");
    if (rc != TC_OK)
        return rc;
    tci_weighs ws = tci_weighs_of(w->trace);
    r->count = ws.count;
    r->has_wall = ws.wall;
    r->has_cpu = ws.cpu;
    r->cpu = w->opt->weight_cpu || !ws.wall; /* without a wall clock, CPU time is all there is */
    return tci_callers_marks(w->trace, w->opt, w->diag, &r->callers);
}

/* The CSV header: the figures' columns are "incl_wall_us,excl_wall_us,", or a count profile's
 * "incl_cycles:HG,excl_cycles:HG," (RFC 4180 quotes when its name needs them). */
static void csv_header(tci_wctx *w, bool bottom_up)
{
    const report_w *r = w->priv;
    tci_sink *o = w->out;
    TCI_PUT_LIT(o, "thread,tid,method,calls,");
    if (r->count) {
        for (int k = 0; k < 2; k++) {
            const char *head = k ? "excl_" : "incl_";
            bool q = tci_csv_needs_quotes(r->count);
            if (q)
                tci_sink_putc(o, '"');
            tci_sink_puts(o, head);
            tci_put_csv_text(o, r->count, q);
            if (q)
                tci_sink_putc(o, '"');
            tci_sink_putc(o, ',');
        }
    } else {
        TCI_PUT_LIT(o, "incl_wall_us,excl_wall_us,");
    }
    tci_sink_puts(o, bottom_up ? "incl_cpu_us,excl_cpu_us,id,callee\n" : "incl_cpu_us,excl_cpu_us\n");
}

static int report_finish(tci_wctx *w, const tci_calltree *ct)
{
    int rc;
    if (w->opt->html) {
        rc = tci_report_html(w, ct);
    } else if (w->opt->csv && (w->opt->reverse || r_callers(w))) {
        csv_header(w, true);
        rc = csv_bottom_up_rows(w, ct);
    } else if (w->opt->csv) {
        csv_header(w, false);
        rc = csv_rows(w, ct, TCI_NONE);
        for (uint32_t k = 0; k < ct->n_roots && rc == TC_OK && !tci_sink_failed(w->out); k++) {
            uint32_t t = tci_report_thread_at(w, ct, k); /* the text's order: main first */
            if (tci_report_thread_has_calls(ct, t))
                rc = csv_rows(w, ct, t);
        }
    } else {
        text_header(w);
        rc = text_all(w, ct);
        for (uint32_t k = 0; k < ct->n_roots && rc == TC_OK && !tci_sink_failed(w->out); k++) {
            uint32_t t = tci_report_thread_at(w, ct, k); /* main's section first */
            if (tci_report_thread_has_calls(ct, t))
                rc = text_thread(w, ct, t);
        }
    }
    if (rc != TC_OK)
        return rc;
    return w->out->err ? TC_ERR_IO : TC_OK;
}

static void report_close(tci_wctx *w)
{
    report_w *r = w->priv;
    if (!r)
        return;
    free(r->items);
    free(r->list);
    free(r->index);
    free(r->names);
    free_kept(&r->text_names);
    free_kept(&r->csv_names);
    free(r->name_sink);
    free(r->callers);
}

const tci_writer tci_writer_report = {
    .name = "report",
    .description = "profile report: per-method calls, inclusive/exclusive wall and CPU time, callers and callees (text; CSV with --csv; a self-contained page with --html)",
    .extensions = "txt,csv,html",
    .options = tci_report_options,
    .variants = (const tci_variant[]){{.name = "report", .extension = "txt", .mime = "text/plain; charset=utf-8",
                                       .mark = "# traceconv ", .aliases = "text,txt,report-text"},
                                      {.name = "report-csv", .extension = "csv", .mime = "text/csv; charset=utf-8",
                                       .mark = "thread,tid,method,calls,incl_", .option = "csv", .aliases = "csv"},
                                      {.name = "report-html", .extension = "report.html",
                                       .mime = "text/html; charset=utf-8", .mark = " (traceconv)</title>",
                                       .option = "html", .inline_view = true, .aliases = "html,page",
                                       .options = (const tci_option_def[]){TCI_OPTION_APP_PACKAGE, {0}}},
                                      {0}},
    .priv_size = sizeof(report_w),
    .flags = TCI_WF_AGGREGATE,
    .begin = report_begin,
    .finish = report_finish,
    .close = report_close,
};
