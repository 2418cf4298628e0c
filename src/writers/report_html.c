/*
 * report_html.c - the profile report as one self-contained HTML page
 * (report --html): the trace's facts and every repair, warning and note count,
 * the flame graph (wall, and thread CPU when the input has that clock), the
 * all-threads method table with each method's parents and children, then one
 * collapsed section per thread. The figures, rows and order are the text
 * report's (report.c's view); only the rendering differs.
 *
 * Self-contained and inert: no network, no external anything. The styles
 * and the one script are inline and allowed by a Content-Security-Policy
 * that lists their SHA-256 hashes and nothing else (default-src 'none'), so
 * even a name that got through the escaping could neither run nor load
 * anything; hashes rather than a nonce keep the page the same bytes on every
 * run. The page works without JavaScript: tables are plain tables, parents
 * and children open with <details>; the script adds sorting by any column
 * header (numbers numerically, stable, toggling, aria-sort), opens a
 * method's row when a parent/child link leads to it, and binds the flame
 * graphs (tci_flame_script: zoom, search, details).
 *
 * The document is also well-formed XML (void elements closed, attribute
 * values quoted, only XML's five entities, the script inside a commented
 * CDATA section), so a strict XML parser checks it too.
 *
 * Names are text, by escape.h's markup rule (TCI_ESC_VISIBLE): HTML-escaped
 * (& < > " '), bytes that are not UTF-8 as U+FFFD (as the CSV rows), control
 * characters as visible escapes (\n, \t, \xHH; C1 controls \u0085),
 * backslash as \\ (so an escape is unambiguous), Unicode noncharacters as
 * U+FFFD: none is ever raw. The same rule for every other text of the page
 * (input name, format, process, vm, thread names).
 *
 * Size: the table lists every method (it is the profile); parents and
 * children are listed for the first EDGE_METHODS methods of the all-threads
 * table (its report order) and EDGE_ROWS rows per list, the rest summed in
 * one line; the page says so. Memory grows with methods and edges, as the
 * profile's, never with records.
 */
#include "report_shared.h"
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_flame.h"
#include "tc_folding.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_sha256.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <stdlib.h>

enum {
    EDGE_METHODS = 250, /* methods of the all-threads table with parents/children lists */
    EDGE_ROWS = 40      /* rows per parents or children list (normal and nested each) */
};

/* ---- the page's own style and script (hashed into the CSP) ------------------------ */

/* The <style> element holds a newline and src/assets/report.css; the <script> element a
 * commented CDATA section (the page is XML too) holding src/assets/report.js (sorting and
 * opening), then tci_flame_script() (every graph bound). */
#define STYLE_START "\n"
static const char PAGE_STYLE[] = {
#include "report.css.h"
    0};
#define SCRIPT_START "\n//<![CDATA[\n"
static const char PAGE_SCRIPT[] = {
#include "report.js.h"
    0};
#define SCRIPT_END "//]]>\n"

/* One flame graph of the page: its id prefix and clock. */
typedef struct graph {
    const char *prefix; /* ids PREFIX-..., [A-Za-z][A-Za-z0-9_-]* */
    bool cpu;
    const char *label;
} graph;

typedef struct page {
    tci_wctx *w;
    report_w *r;
    tci_sink *o;
    graph graphs[2];
    int n_graphs;
} page;

/* ---- text ------------------------------------------------------------------------ */

/* Text for an element's content or an attribute value: escape.h's markup rule, control
 * characters shown as the text report's escapes (see the top of the file). */
static void put_text(tci_sink *o, const char *s) { tci_put_markup(o, s ? s : "", TCI_ESC_VISIBLE); }

/* The method's name, as the CSV rows write it: "pkg.Class.method (sig)ret", a plain name as it is,
 * an unknown id as "unknown.0x1c"; the source file apart. */
static void put_method(tci_sink *o, const tci_method *m, bool with_file)
{
    TCI_PUT_LIT(o, "<span class=\"name\">");
    tci_put_method_name(o, m, put_text);
    TCI_PUT_LIT(o, "</span>");
    if (with_file && m->defined && !m->plain_name && m->file && m->file[0] && strcmp(m->file, "(null)")) {
        TCI_PUT_LIT(o, "<span class=\"src\">");
        put_text(o, m->file);
        if (m->line > 0)
            tci_sink_printf(o, ":%d", (int)m->line);
        TCI_PUT_LIT(o, "</span>");
    }
}

static void put_row_method(tci_sink *o, const tci_profile *p, uint32_t row)
{
    if (row == TCI_NONE)
        TCI_PUT_LIT(o, "<span class=\"name\">(toplevel)</span>");
    else
        put_method(o, &p->trace->methods[p->methods[row].method], false);
}

/* ---- numbers --------------------------------------------------------------------- */

/* A count or a time with thousands separators, 1,234,567: the same in every locale (the
 * page's script groups its numbers the same way). */
static void put_grouped(tci_sink *o, int64_t v)
{
    char digits[24], text[40];
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    size_t n = tci_fmt_u64(digits, a), k = 0;
    if (v < 0)
        text[k++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            text[k++] = ',';
        text[k++] = digits[i];
    }
    tci_sink_write(o, text, k);
}

static void put_grouped_u64(tci_sink *o, uint64_t v)
{
    put_grouped(o, v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

static void td_grouped(tci_sink *o, int64_t v)
{
    TCI_PUT_LIT(o, "<td>");
    put_grouped(o, v);
    TCI_PUT_LIT(o, "</td>");
}

static void td_us(tci_sink *o, int64_t ns, bool present)
{
    if (present)
        td_grouped(o, tci_us_of(ns));
    else
        TCI_PUT_LIT(o, "<td>-</td>");
}

static void td_pct(tci_sink *o, int64_t part, int64_t whole, bool present)
{
    char b[TCI_FMT_FIXED1_MAX];
    if (present && whole) { /* "%.1f%%" without printf's cost: a page has a million of them */
        TCI_PUT_LIT(o, "<td>");
        tci_sink_write(o, b, tci_fmt_fixed1(b, 100.0 * (double)part / (double)whole));
        TCI_PUT_LIT(o, "%</td>");
    } else
        TCI_PUT_LIT(o, "<td>-</td>");
}

/* Inclusive time per normal call ("-" without calls: sampled input), as the text report. */
static void td_per_call(tci_sink *o, int64_t incl, uint64_t calls, bool present)
{
    if (present && calls)
        td_grouped(o, tci_us_of(incl / tci_clamp_calls(calls)));
    else
        TCI_PUT_LIT(o, "<td>-</td>");
}

/* ---- the Content-Security-Policy ------------------------------------------------- */

static int hash_write(void *user, const void *buf, size_t len)
{
    tci_sha256_update(user, buf, len);
    return 0;
}

/* 'sha256-...' of a graph's style element, as the engine writes it. */
static int put_style_hash(tci_sink *o, const char *prefix)
{
    tci_sha256 h;
    tci_sink *s = tci_malloc(sizeof *s);
    if (!s)
        return TC_ERR_NOMEM;
    tci_sha256_init(&h);
    int rc = tci_sink_open_fn(s, hash_write, &h, false);
    if (rc == TC_OK)
        rc = tci_flame_style(prefix, s);
    if (rc == TC_OK)
        rc = tci_sink_close(s);
    free(s);
    if (rc != TC_OK)
        return rc;
    uint8_t d[32];
    char b64[45];
    tci_sha256_final(&h, d);
    tci_sha256_base64(d, b64);
    tci_sink_printf(o, " 'sha256-%s'", b64);
    return TC_OK;
}

static void put_text_hash(tci_sink *o, const char *const *parts, int n)
{
    tci_sha256 h;
    uint8_t d[32];
    char b64[45];
    tci_sha256_init(&h);
    for (int i = 0; i < n; i++)
        tci_sha256_update(&h, parts[i], strlen(parts[i]));
    tci_sha256_final(&h, d);
    tci_sha256_base64(d, b64);
    tci_sink_printf(o, " 'sha256-%s'", b64);
}

static int put_csp(page *pg)
{
    tci_sink *o = pg->o;
    const char *style[2] = {STYLE_START, PAGE_STYLE};
    const char *script[4] = {SCRIPT_START, PAGE_SCRIPT, tci_flame_script(), SCRIPT_END};
    TCI_PUT_LIT(o, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src");
    put_text_hash(o, style, 2);
    for (int i = 0; i < pg->n_graphs; i++) {
        int rc = put_style_hash(o, pg->graphs[i].prefix);
        if (rc != TC_OK)
            return rc;
    }
    TCI_PUT_LIT(o, "; script-src");
    put_text_hash(o, script, 4);
    TCI_PUT_LIT(o, "; base-uri 'none'; form-action 'none'\"/>\n");
    return TC_OK;
}

/* ---- head and facts -------------------------------------------------------------- */

static int put_head(page *pg)
{
    tci_sink *o = pg->o;
    const tci_trace *t = pg->w->trace;
    TCI_PUT_LIT(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    int rc = put_csp(pg);
    if (rc != TC_OK)
        return rc;
    TCI_PUT_LIT(o, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                   "<meta name=\"generator\" content=\"traceconv " TC_VERSION_STRING "\"/>\n<title>");
    put_text(o, t->input_name ? t->input_name : "-");
    TCI_PUT_LIT(o, ": profile report (traceconv)</title>\n<style>" STYLE_START);
    tci_sink_puts(o, PAGE_STYLE);
    TCI_PUT_LIT(o, "</style>\n</head>\n<body>\n<h1>Profile report: ");
    put_text(o, t->input_name ? t->input_name : "-");
    TCI_PUT_LIT(o, "</h1>\n");
    char sel[TCI_SELECTION_TEXT_MAX];
    if (tci_selection_text(pg->w->opt, tci_report_options, sel, sizeof sel)) { /* what this page shows of the trace */
        TCI_PUT_LIT(o, "<p class=\"selection\">Selection: <span class=\"name\">");
        put_text(o, sel);
        TCI_PUT_LIT(o, "</span></p>\n");
    }
    TCI_PUT_LIT(o, "<nav><a href=\"#facts\">Facts</a><a href=\"#tree\">Call tree</a><a href=\"#flame\">Flame graph</a>"
                   "<a href=\"#all\">All threads</a><a href=\"#threads\">Threads</a></nav>\n");
    return TC_OK;
}

static void fact_start(tci_sink *o, const char *what)
{
    tci_sink_printf(o, "<tr><th scope=\"row\">%s</th><td>", what);
}

static void fact_text(tci_sink *o, const char *what, const char *value)
{
    fact_start(o, what);
    put_text(o, value);
    TCI_PUT_LIT(o, "</td></tr>\n");
}

static void fact_u64(tci_sink *o, const char *what, uint64_t v)
{
    fact_start(o, what);
    put_grouped_u64(o, v);
    TCI_PUT_LIT(o, "</td></tr>\n");
}

/* "1 exit-without-enter, 1 open-at-end" for the figures of one kind, or "none" (as the text). */
static void fact_figures(tci_sink *o, const char *what, const tci_diag *d, int kind)
{
    fact_start(o, what);
    tci_report_figures(o, d, kind); /* figure names are fixed ASCII words: nothing to escape */
    TCI_PUT_LIT(o, "</td></tr>\n");
}

static void put_facts(page *pg)
{
    tci_sink *o = pg->o;
    const tci_trace *t = pg->w->trace;
    const tci_diag *d = pg->w->diag;
    TCI_PUT_LIT(o, "<section id=\"facts\">\n<h2>Facts</h2>\n<table class=\"facts\">\n");
    fact_text(o, "input", t->input_name ? t->input_name : "-");
    char format[TCI_FORMAT_TEXT_MAX];
    fact_start(o, "format");
    put_text(o, tci_trace_format(t, format, sizeof format));
    TCI_PUT_LIT(o, "</td></tr>\n");
    fact_start(o, "clock");
    tci_sink_printf(o, "%s (", tci_clock_name(t->clock));
    put_text(o, tci_report_clock_text(pg->r));
    TCI_PUT_LIT(o, ")</td></tr>\n");
    if (t->vm)
        fact_text(o, "vm", t->vm);
    fact_start(o, "process");
    put_text(o, t->processes[0].name ? t->processes[0].name : "?");
    tci_sink_printf(o, " (pid %lld)</td></tr>\n", (long long)t->processes[0].pid);
    if (pg->w->app && pg->w->app->name) { /* the graphs' app, and the evidence it was found by */
        fact_start(o, "app");
        put_text(o, pg->w->app->name);
        TCI_PUT_LIT(o, " (");
        put_text(o, pg->w->app->evidence);
        TCI_PUT_LIT(o, ")</td></tr>\n");
    }
    fact_start(o, "start");
    put_grouped(o, t->start_ns);
    TCI_PUT_LIT(o, " ns</td></tr>\n");
    /* the facts of what was selected: the window's duration, the threads kept (and of how many) */
    char sel[TCI_SELECTION_TEXT_MAX];
    if (tci_selection_text(pg->w->opt, tci_report_options, sel, sizeof sel))
        fact_text(o, "selection", sel);
    int64_t from, to;
    tci_selection_window(t, pg->w->opt, &from, &to);
    fact_start(o, "duration");
    put_grouped(o, tci_us_of(to - from));
    TCI_PUT_LIT(o, " µs");
    if (to - from != t->end_ns - t->start_ns) {
        TCI_PUT_LIT(o, " (the window, from ");
        put_grouped(o, tci_us_of(from - t->start_ns));
        TCI_PUT_LIT(o, " µs; the trace lasts ");
        put_grouped(o, tci_us_of(t->end_ns - t->start_ns));
        TCI_PUT_LIT(o, " µs)");
    }
    TCI_PUT_LIT(o, "</td></tr>\n");
    uint64_t kept = pg->w->opt->thread ? tci_selection_threads(t) : d->fig[TCI_FIG_THREADS];
    fact_start(o, "threads");
    put_grouped_u64(o, kept);
    if (kept != d->fig[TCI_FIG_THREADS]) {
        TCI_PUT_LIT(o, " (kept, of ");
        put_grouped_u64(o, d->fig[TCI_FIG_THREADS]);
        TCI_PUT_LIT(o, ")");
    }
    TCI_PUT_LIT(o, "</td></tr>\n");
    fact_u64(o, "methods", d->fig[TCI_FIG_METHODS]);
    fact_u64(o, "records", d->fig[TCI_FIG_RECORDS]);
    if (d->fig[TCI_FIG_SAMPLES])
        fact_u64(o, "samples", d->fig[TCI_FIG_SAMPLES]);
    fact_figures(o, "repaired", d, TC_FIG_REPAIR);
    fact_figures(o, "warnings", d, TC_FIG_WARNING);
    fact_figures(o, "notes", d, TC_FIG_NOTE);
    uint8_t sort = pg->w->opt->sort;
    const char *count = pg->r->count;
    if (count)
        fact_text(o, "counts", count);
    fact_start(o, "sorted by");
    tci_sink_printf(o, "%s%s</td></tr>\n</table>\n", tci_report_sort_text(sort),
                    sort != TCI_SORT_INCL && sort != TCI_SORT_EXCL ? ""
                    : count                                        ? " count"
                    : pg->r->cpu                                   ? " thread-CPU time"
                                                                   : " wall time");
    if (count) {
        TCI_PUT_LIT(o, "<p class=\"note\">Figures are counts of <span class=\"name\">");
        put_text(o, count);
        TCI_PUT_LIT(o,
            "</span>, the weights of the sampled stacks; slices add their frames and calls, not their time, "
            "which the timelines show (no thread-CPU figure: the CPU columns show -). A call is recursive (the "
            "+rec column) when its method is already on the thread's stack. Inclusive counts are a method's "
            "outermost calls' only, so recursion never counts twice; exclusive counts are those of all its "
            "calls' own samples. Percentages are of the total: the threads' counts, or the thread's in a "
            "thread's section. Per call: inclusive count / normal calls.</p>\n</section>\n");
        return;
    }
    TCI_PUT_LIT(o,
        "<p class=\"note\">Times are microseconds (µs), each rounded once from its exact ns sum. A call is "
        "recursive (the +rec column) when its method is already on the thread's stack. Inclusive time counts "
        "a method's outermost calls only, so recursion never counts twice; exclusive time is the self time of "
        "all its calls. Percentages are of the total: the sum of the threads' spans (first to last call "
        "event), or of the thread's span in a thread's section. Per call: inclusive time / normal calls.</p>\n"
        "</section>\n");
}

/* ---- the call trees (the profiler view) ------------------------------------------- */

/* The page's script draws the top-down and the bottom-up tree, the thread picker and the
 * filter from one JSON block (a <script type="application/json">, which no browser runs, so the
 * CSP's hashes need not cover it): each thread's call tree in preorder, five numbers a node,
 * [depth (0: the thread), method (-1: the thread), calls, total ns, self ns] by the --weight
 * clock, then the names of the methods used, each once. So the page grows with the distinct
 * call paths, never with records; the bottom-up tree is computed from it in the page, a level
 * at a time as it is opened. Names go through escape.h's JavaScript rule in their visible form
 * (tci_put_js_visible): a literal that holds no '<', so no "</script" can end the block, and the
 * script sets them as text, never as markup. */
typedef struct tree_json {
    tci_sink *o;
    const tci_calltree *ct;
    bool cpu;
    uint32_t *ref;  /* per trace method: its index in the block's "methods", TCI_NONE until used */
    uint32_t *used; /* the trace methods in the order of first use */
    uint32_t n_used;
    bool started; /* a node written: the next one after a comma */
} tree_json;

static void tree_node(tree_json *tj, const tci_ctnode *n, uint32_t depth, int64_t method)
{
    tci_sink *o = tj->o;
    if (tj->started)
        tci_sink_putc(o, ',');
    tj->started = true;
    tci_sink_u64(o, depth);
    tci_sink_putc(o, ',');
    tci_sink_i64(o, method);
    tci_sink_putc(o, ',');
    tci_sink_u64(o, n->calls);
    tci_sink_putc(o, ',');
    tci_sink_i64(o, tj->cpu ? n->cpu_total : n->wall_total);
    tci_sink_putc(o, ',');
    tci_sink_i64(o, tj->cpu ? n->cpu_self : n->wall_self);
}

static int tree_enter(void *user, uint32_t node, uint32_t depth)
{
    tree_json *tj = user;
    const tci_ctnode *n = &tj->ct->nodes[node];
    if (tj->ref[n->method] == TCI_NONE) {
        tj->ref[n->method] = tj->n_used;
        tj->used[tj->n_used++] = n->method;
    }
    tree_node(tj, n, depth + 1, tj->ref[n->method]);
    return tci_sink_failed(tj->o) ? TCI_WALK_PRUNE : TC_OK; /* a failed output: nothing more to write */
}

static void tree_leave(void *user, uint32_t node, uint32_t depth) { (void)user, (void)node, (void)depth; }

static void put_tree_methods(tree_json *tj, const tci_trace *t)
{
    TCI_PUT_LIT(tj->o, "],\"methods\":[");
    for (uint32_t i = 0; i < tj->n_used; i++) {
        if (i)
            tci_sink_putc(tj->o, ',');
        tci_sink_putc(tj->o, '"');
        tci_put_method_name(tj->o, &t->methods[tj->used[i]], tci_put_js_visible);
        tci_sink_putc(tj->o, '"');
    }
    TCI_PUT_LIT(tj->o, "]}");
}

static void put_tree_threads(tci_sink *o, const tci_wctx *w, const tci_calltree *ct)
{
    const tci_trace *t = w->trace;
    TCI_PUT_LIT(o, "\"threads\":[");
    bool first = true;
    for (uint32_t k = 0; k < ct->n_roots; k++) {
        uint32_t i = tci_report_thread_at(w, ct, k); /* the picker lists main first */
        if (!tci_report_thread_has_calls(ct, i))
            continue;
        if (!first)
            tci_sink_putc(o, ',');
        TCI_PUT_LIT(o, "{\"name\":\"");
        tci_put_js_visible(o, t->threads[i].name);
        TCI_PUT_LIT(o, "\",\"tid\":");
        tci_sink_u64(o, t->threads[i].tid);
        tci_sink_putc(o, '}');
        first = false;
    }
    tci_sink_putc(o, ']');
}

static int put_tree_data(page *pg, const tci_calltree *ct)
{
    const tci_trace *t = pg->w->trace;
    tree_json tj = {.o = pg->o, .ct = ct, .cpu = pg->r->cpu};
    tj.ref = tci_malloc(((size_t)t->n_methods + 1) * sizeof *tj.ref);
    tj.used = tci_malloc(((size_t)t->n_methods + 1) * sizeof *tj.used);
    int rc = tj.ref && tj.used ? TC_OK : TC_ERR_NOMEM;
    if (rc == TC_OK) {
        memset(tj.ref, 0xff, (size_t)t->n_methods * sizeof *tj.ref); /* TCI_NONE */
        tci_sink_printf(pg->o, "<script type=\"application/json\" id=\"pv-data\">{\"clock\":\"%s\",\"view\":\"%s\",",
                        pg->r->cpu ? "cpu" : "wall", pg->w->opt->reverse ? "bottom-up" : "top-down");
        if (pg->r->count) { /* a count profile: what its figures count */
            TCI_PUT_LIT(pg->o, "\"count\":\"");
            tci_put_js_visible(pg->o, pg->r->count);
            TCI_PUT_LIT(pg->o, "\",");
        }
        put_tree_threads(pg->o, pg->w, ct);
        TCI_PUT_LIT(pg->o, ",\"nodes\":[");
        for (uint32_t k = 0; k < ct->n_roots && rc == TC_OK && !tci_sink_failed(pg->o); k++) {
            uint32_t i = tci_report_thread_at(pg->w, ct, k); /* in the order of "threads" */
            if (!tci_report_thread_has_calls(ct, i))
                continue;
            tree_node(&tj, &ct->nodes[ct->roots[i]], 0, -1);
            rc = tci_calltree_walk(ct, ct->roots[i], &(tci_ctvisit){tree_enter, tree_leave, &tj});
        }
        put_tree_methods(&tj, t);
        TCI_PUT_LIT(pg->o, "</script>\n");
    }
    free(tj.ref);
    free(tj.used);
    return rc;
}

static int put_profiler(page *pg, const tci_calltree *ct)
{
    const char *unit = pg->r->count ? "count" : "µs"; /* the event is named in the facts and the help line */
    TCI_PUT_LIT(pg->o,
        "<section id=\"tree\">\n<h2>Call tree</h2>\n"
        "<div id=\"pv\" class=\"pv\" hidden=\"\">\n<div class=\"pv-bar\">"
        "<span role=\"tablist\" aria-label=\"tree\"><button type=\"button\" role=\"tab\" id=\"pv-td\" "
        "aria-selected=\"true\">Top-down</button><button type=\"button\" role=\"tab\" id=\"pv-bu\" "
        "aria-selected=\"false\">Bottom-up</button></span>\n"
        "<label>Thread <select id=\"pv-thread\"></select></label>\n"
        "<label>Filter <input type=\"search\" id=\"pv-filter\" placeholder=\"part of a method name\" "
        "autocomplete=\"off\"/></label></div>\n"
        "<p class=\"note\" id=\"pv-help\"></p>\n"
        "<table class=\"tree\" role=\"treegrid\" id=\"pv-table\"><colgroup><col/><col class=\"n\"/>"
        "<col class=\"p\"/><col class=\"n\"/><col class=\"p\"/><col class=\"n\"/></colgroup>\n");
    tci_sink_printf(pg->o,
        "<thead><tr><th scope=\"col\">method</th><th scope=\"col\">total %s</th><th scope=\"col\">%%</th>"
        "<th scope=\"col\">self %s</th><th scope=\"col\">%%</th><th scope=\"col\">calls</th></tr></thead>\n",
        unit, unit);
    TCI_PUT_LIT(pg->o,
        "<tbody id=\"pv-rows\"></tbody></table>\n</div>\n"
        "<p class=\"note\" id=\"pv-nojs\">The call trees (top-down and bottom-up) need JavaScript; the tables "
        "below show the same figures per method.</p>\n");
    int rc = put_tree_data(pg, ct);
    TCI_PUT_LIT(pg->o, "</section>\n");
    return rc;
}

/* ---- callers (--callers) ------------------------------------------------------------ */

/* The walk over the merged callers tree: one row a line, indented by its depth. */
typedef struct callers_rows {
    page *pg;
    const tci_profile *p;
    const tci_calltree *tree;
    int64_t total; /* the methods' time: the shares' whole */
} callers_rows;

#define CALLERS_MAX_INDENT 20 /* levels, as the text report's; the depth column says the rest */

static int callers_row(void *user, uint32_t node, uint32_t depth)
{
    callers_rows *cr = user;
    tci_sink *o = cr->pg->o;
    const tci_ctnode *n = &cr->tree->nodes[node];
    int64_t t = cr->pg->r->cpu ? n->cpu_total : n->wall_total;
    tci_sink_printf(o, "<tr><td class=\"m\">");
    for (uint32_t k = 0; k < (depth < CALLERS_MAX_INDENT ? depth : CALLERS_MAX_INDENT); k++)
        TCI_PUT_LIT(o, "\xc2\xa0\xc2\xa0"); /* two U+00A0: no style attribute, the page's policy allows none */
    put_row_method(o, cr->p, tci_profile_row(cr->p, n->method));
    TCI_PUT_LIT(o, "</td>");
    td_us(o, t, true);
    td_pct(o, t, cr->total, true);
    td_grouped(o, tci_clamp_calls(n->calls));
    td_grouped(o, depth);
    TCI_PUT_LIT(o, "</tr>\n");
    return tci_sink_failed(o) ? TC_ERR_IO : TC_OK;
}

/* The callers of the methods --callers names: each call with its whole inclusive time, its
 * callers beneath (pprof's -peek, speedscope's sandwich), as the text report's section. */
static int put_callers(page *pg, const tci_calltree *ct)
{
    tci_sink *o = pg->o;
    tci_profile p;
    tci_calltree rev = {0}, merged = {0};
    int rc = tci_profile_build(&p, ct, TCI_NONE);
    if (rc == TC_OK)
        rc = tci_report_derived_trees(pg->w, &p, ct, &rev, &merged);
    if (rc == TC_OK) {
        const tci_ctnode *root = &merged.nodes[merged.roots[0]];
        callers_rows cr = {pg, &p, &merged, pg->r->cpu ? root->cpu_total : root->wall_total};
        TCI_PUT_LIT(o, "<section id=\"callers\">\n<h2>Callers of <span class=\"name\">");
        put_text(o, pg->w->opt->callers);
        tci_sink_printf(o, "</span></h2>\n<p class=\"note\">Each method the pattern names with the whole %s of "
                           "its calls (a recursive call counted once, in its outermost frame); beneath it its "
                           "callers, their callers beneath them: a row's time is the method's while called "
                           "through that chain, its share of all of the method's. Rows under 0.1%% of it are "
                           "left out.</p>\n",
                        pg->r->count ? "count" : pg->r->cpu ? "thread CPU time" : "wall time");
        tci_sink_printf(o, "<table class=\"callers\">\n<thead><tr><th>method</th><th>%s</th>"
                           "<th>%% of the method</th><th>calls</th><th>depth</th></tr></thead>\n<tbody>\n",
                        pg->r->count ? "incl count" : pg->r->cpu ? "incl CPU µs" : "incl wall µs");
        int64_t min_time = cr.total / 1000 + (cr.total % 1000 != 0);
        rc = tci_report_tree_lines(&p, &merged, merged.roots[0], pg->r->cpu, min_time, callers_row, &cr);
        TCI_PUT_LIT(o, "</tbody></table>\n</section>\n");
    }
    tci_calltree_free(&merged);
    tci_calltree_free(&rev);
    tci_profile_free(&p);
    return rc == TC_ERR_IO ? TC_OK : rc; /* a failed sink: the writer's return says so */
}

/* ---- flame graphs ---------------------------------------------------------------- */

/* The flame tree of every thread (one tower each, "name-tid", under "all"), as the flamegraph writer draws it. */
typedef struct flame_build {
    tci_foldflame ff;
    tci_flame *flame;
} flame_build;

static int flame_build_all(flame_build *f, tci_wctx *w, const tci_calltree *ct, bool cpu, tci_flame_opts *fo)
{
    int rc = tci_foldflame_begin(&f->ff, w->trace, cpu);
    if (rc != TC_OK || (rc = tci_foldflame_colors(&f->ff, w->trace, ct, w->opt, w->app, fo)) != TC_OK)
        return rc;
    f->ff.reverse = w->opt->reverse; /* --reverse: the graphs bottom-up too, as -o flamegraph --reverse draws them */
    if ((rc = tci_foldflame_callers(&f->ff, w->trace, w->opt, w->diag)) != TC_OK) /* --callers: rooted at the method */
        return rc;
    f->ff.thread_order = w->thread_order; /* main's tower first, as the writer's */
    fo->open_first = w->thread_order && !w->opt->reverse && !w->opt->callers; /* and opened on it, as the writer's */
    if (!(f->flame = tci_flame_new(false)))
        return TC_ERR_NOMEM;
    return tci_foldflame_add(&f->ff, f->flame, ct, false, false);
}

static void flame_build_free(flame_build *f)
{
    tci_foldflame_free(&f->ff);
    tci_flame_free(f->flame);
}

static int put_graph(page *pg, const tci_calltree *ct, const graph *g, bool first)
{
    tci_sink *o = pg->o;
    flame_build f;
    memset(&f, 0, sizeof f);
    tci_sink_printf(o, "<details class=\"graph\"%s><summary>", first ? " open=\"\"" : "");
    if (pg->r->count) {
        TCI_PUT_LIT(o, "Flame graph: ");
        put_text(o, pg->r->count);
        TCI_PUT_LIT(o, " counts (all threads)");
    } else {
        tci_sink_puts(o, g->label);
    }
    TCI_PUT_LIT(o, "</summary>\n");
    tci_flame_opts fo = {
        .mode = TCI_FLAME_EMBED_NOSCRIPT,
        .id_prefix = g->prefix,
        .title = pg->r->count ? "Flame Graph: counts of the sampled stacks"
                 : g->cpu     ? "Flame Graph: thread CPU time"
                              : "Flame Graph: wall time",
        .subtitle = pg->w->opt->callers
                        ? "callers: each call of the method from its frame up, threads last; click a frame to zoom"
                    : pg->w->opt->reverse
                        ? "bottom-up: every stack from its leaf, threads last; click a frame to zoom, Search (Ctrl-F)"
                        : "one tower per thread; click a frame to zoom, Search (Ctrl-F) for a regular expression",
        .countname = pg->r->count ? pg->r->count : "us", /* tooltips "NAME (3,000 cycles:HG, 1.00%)" */
        .minwidth = 0.1,
        .palette = TCI_PAL_ANDROID, /* whose code, with its legend: the flame graph writer's default */
    };
    int rc = flame_build_all(&f, pg->w, ct, g->cpu, &fo);
    if (rc == TC_OK && f.ff.total > 0) {
        rc = tci_flame_render(f.flame, &fo, o);
    } else if (rc == TC_OK) {
        TCI_PUT_LIT(o, "<p class=\"note\">No stack counts: nothing to draw.</p>\n");
    }
    TCI_PUT_LIT(o, "</details>\n");
    flame_build_free(&f);
    return rc;
}

static int put_graphs(page *pg, const tci_calltree *ct)
{
    TCI_PUT_LIT(pg->o, "<section id=\"flame\">\n<h2>Flame graph</h2>\n");
    for (int i = 0; i < pg->n_graphs; i++) {
        int rc = put_graph(pg, ct, &pg->graphs[i], i == 0);
        if (rc != TC_OK)
            return rc;
    }
    TCI_PUT_LIT(pg->o, "</section>\n");
    return TC_OK;
}

/* ---- parents and children -------------------------------------------------------- */

static void edge_head(tci_sink *o, int side, const report_w *r)
{
    tci_sink_printf(o, "<tr><th>%s</th><th>calls</th><th>%s</th><th>CPU µs</th><th>%% of incl %s</th></tr>\n",
                    side == TCI_REPORT_PARENTS ? "parents" : "children", r->count ? "count" : "wall µs",
                    r->count ? "count" : r->cpu ? "CPU" : "wall");
}

/* One parent or child: [index] name (a link to its row), calls / all, wall, CPU, % of this method's inclusive. */
static void edge_row(page *pg, const rview *v, const tci_psort_item *it, int side, bool nested, uint32_t self,
                     int64_t self_incl)
{
    tci_sink *o = pg->o;
    const report_w *r = pg->r;
    const tci_profile *p = v->p;
    tci_pcost c = tci_report_edge_part(&p->edges[it->tag], side, nested);
    tci_sink_puts(o, nested ? "<tr class=\"nested\"><td class=\"m\">" : "<tr><td class=\"m\">");
    if (it->row == TCI_NONE) {
        TCI_PUT_LIT(o, "[0] ");
        put_row_method(o, p, it->row);
    } else {
        tci_sink_printf(o, "<a class=\"to\" href=\"#m-%u\">[%u] ", v->index[it->row], v->index[it->row]);
        put_row_method(o, p, it->row);
        TCI_PUT_LIT(o, "</a>");
    }
    /* a parent row's total is this method's calls; a child row's, the child's */
    uint64_t of = tci_report_total_calls(p, side == TCI_REPORT_PARENTS ? self : it->row);
    TCI_PUT_LIT(o, "</td><td>");
    put_grouped_u64(o, c.calls);
    tci_sink_putc(o, '/');
    put_grouped_u64(o, of);
    TCI_PUT_LIT(o, "</td>");
    td_us(o, c.wall, r->has_wall);
    td_us(o, c.cpu, r->has_cpu);
    if (nested)
        TCI_PUT_LIT(o, "<td>-</td>");
    else
        td_pct(o, r->cpu ? c.cpu : c.wall, self_incl, true);
    TCI_PUT_LIT(o, "</tr>\n");
}

/* Both are within ±TCI_SUM_MAX: the sum cannot overflow; it is capped as the profile's sums. */
static int64_t sum_capped(int64_t a, int64_t b)
{
    int64_t s = a + b;
    return s > TCI_SUM_MAX ? TCI_SUM_MAX : s < -TCI_SUM_MAX ? -TCI_SUM_MAX : s;
}

/* The rows beyond EDGE_ROWS, summed in one line. */
static void edge_more(page *pg, const tci_profile *p, const tci_psort_item *rest, uint32_t n, int side, bool nested)
{
    tci_pcost sum = {0, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        tci_pcost c = tci_report_edge_part(&p->edges[rest[i].tag], side, nested);
        sum.calls += c.calls;
        sum.wall = sum_capped(sum.wall, c.wall);
        sum.cpu = sum_capped(sum.cpu, c.cpu);
    }
    TCI_PUT_LIT(pg->o, "<tr class=\"more\"><td class=\"m\">");
    put_grouped_u64(pg->o, n);
    tci_sink_printf(pg->o, " more %s (not listed)</td><td>", side == TCI_REPORT_PARENTS ? "parents" : "children");
    put_grouped_u64(pg->o, sum.calls);
    TCI_PUT_LIT(pg->o, "</td>");
    td_us(pg->o, sum.wall, pg->r->has_wall);
    td_us(pg->o, sum.cpu, pg->r->has_cpu);
    TCI_PUT_LIT(pg->o, "<td></td></tr>\n");
}

static int edge_list(page *pg, const rview *v, const uint32_t *at, uint32_t n, int side, uint32_t self,
                     int64_t self_incl)
{
    edge_head(pg->o, side, pg->r);
    for (int nested = 0; nested < 2; nested++) {
        uint32_t k;
        int rc = tci_report_list(pg->w, v->p, at, n, side, nested, &k);
        if (rc != TC_OK)
            return rc;
        if (nested && k)
            tci_sink_printf(pg->o, "<tr class=\"nested\"><td class=\"m\" colspan=\"5\">nested: called while %s "
                                   "was already running; already inside the lines above</td></tr>\n",
                            side == TCI_REPORT_PARENTS ? "the method" : "the caller");
        uint32_t shown = k < EDGE_ROWS ? k : EDGE_ROWS;
        for (uint32_t i = 0; i < shown; i++)
            edge_row(pg, v, &pg->r->list[i], side, nested, self, self_incl);
        if (k > shown)
            edge_more(pg, v->p, pg->r->list + shown, k - shown, side, nested);
    }
    return TC_OK;
}

/* A method's parents, its own self time, its children, as the text's calls section (by the sort clock). */
static int put_edges(page *pg, const rview *v, uint32_t row)
{
    tci_sink *o = pg->o;
    const report_w *r = pg->r;
    const tci_profile *p = v->p;
    const tci_pmethod *m = &p->methods[row];
    int64_t incl = r->cpu ? m->incl_cpu : m->incl_wall;
    TCI_PUT_LIT(o, "<table class=\"edges\">\n");
    int rc = edge_list(pg, v, p->parent_edges + m->parents_at, m->n_parents, TCI_REPORT_PARENTS, row, incl);
    if (rc != TC_OK)
        return rc;
    tci_sink_puts(o, r->count ? "<tr class=\"self\"><td class=\"m\">own count of its outermost calls</td><td></td>"
                              : "<tr class=\"self\"><td class=\"m\">self time of its outermost calls</td><td></td>");
    td_us(o, m->outer_excl_wall, r->has_wall);
    td_us(o, m->outer_excl_cpu, r->has_cpu);
    td_pct(o, r->cpu ? m->outer_excl_cpu : m->outer_excl_wall, incl, true);
    TCI_PUT_LIT(o, "</tr>\n");
    rc = edge_list(pg, v, p->child_edges + m->children_at, m->n_children, TCI_REPORT_CHILDREN, row, incl);
    TCI_PUT_LIT(o, "</table>\n");
    return rc;
}

/* ---- method tables --------------------------------------------------------------- */

/* The column sorted at first: the report's order (by the sort key, name ascending). */
static int sorted_column(const page *pg)
{
    switch (pg->w->opt->sort) {
    case TCI_SORT_EXCL: return pg->r->cpu ? 10 : 6;
    case TCI_SORT_CALLS: return -1; /* calls+recursive: two columns */
    case TCI_SORT_NAME: return 1;
    default: return pg->r->cpu ? 8 : 4;
    }
}

static void table_head(page *pg)
{
    static const char *const time_heads[] = {"#", "method", "calls", "+rec", "incl wall µs", "%", "excl wall µs", "%",
                                             "incl CPU µs", "%", "excl CPU µs", "%", "wall µs/call", "CPU µs/call"};
    /* a count profile: its counts where the wall time is (the event is named in the facts) */
    static const char *const count_heads[] = {"#", "method", "calls", "+rec", "incl count", "%", "excl count", "%",
                                              "incl CPU µs", "%", "excl CPU µs", "%", "count/call", "CPU µs/call"};
    const char *const *heads = pg->r->count ? count_heads : time_heads;
    tci_sink *o = pg->o;
    int sorted = sorted_column(pg);
    TCI_PUT_LIT(o, "<table class=\"prof\">\n<thead><tr>");
    for (int i = 0; i < (int)(sizeof time_heads / sizeof *time_heads); i++) {
        tci_sink_printf(o, "<th scope=\"col\"%s%s>%s</th>", i == 1 ? " data-type=\"text\"" : "",
                        i != sorted ? "" : i == 1 ? " aria-sort=\"ascending\"" : " aria-sort=\"descending\"",
                        heads[i]);
    }
    TCI_PUT_LIT(o, "</tr></thead>\n<tbody>\n");
}

static int table_row(page *pg, const rview *v, uint32_t row, bool all, bool edges)
{
    tci_sink *o = pg->o;
    const report_w *r = pg->r;
    const tci_profile *p = v->p;
    const tci_pmethod *m = &p->methods[row];
    const tci_method *tm = &p->trace->methods[m->method];
    uint32_t idx = v->index[row];
    if (all) {
        TCI_PUT_LIT(o, "<tr id=\"m-");
        tci_sink_u64(o, idx);
        TCI_PUT_LIT(o, "\"><td>");
    } else {
        TCI_PUT_LIT(o, "<tr><td>");
    }
    tci_sink_u64(o, idx);
    TCI_PUT_LIT(o, "</td><td class=\"m\">");
    int rc = TC_OK;
    if (edges) {
        TCI_PUT_LIT(o, "<details><summary>");
        put_method(o, tm, true);
        TCI_PUT_LIT(o, "</summary>\n");
        rc = put_edges(pg, v, row);
        TCI_PUT_LIT(o, "</details>");
    } else {
        put_method(o, tm, true);
    }
    TCI_PUT_LIT(o, "</td><td>");
    put_grouped_u64(o, m->calls);
    TCI_PUT_LIT(o, "</td><td>");
    put_grouped_u64(o, m->recursive_calls);
    TCI_PUT_LIT(o, "</td>");
    td_us(o, m->incl_wall, r->has_wall);
    td_pct(o, m->incl_wall, p->span_wall, r->has_wall);
    td_us(o, m->excl_wall, r->has_wall);
    td_pct(o, m->excl_wall, p->span_wall, r->has_wall);
    td_us(o, m->incl_cpu, r->has_cpu);
    td_pct(o, m->incl_cpu, p->span_cpu, r->has_cpu);
    td_us(o, m->excl_cpu, r->has_cpu);
    td_pct(o, m->excl_cpu, p->span_cpu, r->has_cpu);
    td_per_call(o, m->incl_wall, m->calls, r->has_wall);
    td_per_call(o, m->incl_cpu, m->calls, r->has_cpu);
    TCI_PUT_LIT(o, "</tr>\n");
    return rc;
}

static int method_table(page *pg, const rview *v, bool all)
{
    table_head(pg);
    int rc = TC_OK;
    for (uint32_t i = 0; i < v->p->n_methods && rc == TC_OK; i++)
        rc = table_row(pg, v, v->rows[i].row, all, all && i < EDGE_METHODS);
    TCI_PUT_LIT(pg->o, "</tbody>\n</table>\n");
    return rc;
}

/* "wall 200 µs, CPU -": a figure in both clocks; a count profile's "1,234 cycles:HG". */
static void both_clocks(tci_sink *o, const report_w *r, int64_t wall, int64_t cpu)
{
    if (r->count) {
        put_grouped(o, tci_us_of(wall));
        tci_sink_putc(o, ' ');
        put_text(o, r->count);
        return;
    }
    TCI_PUT_LIT(o, "wall ");
    if (r->has_wall) {
        put_grouped(o, tci_us_of(wall));
        TCI_PUT_LIT(o, " µs");
    } else {
        tci_sink_putc(o, '-');
    }
    TCI_PUT_LIT(o, ", CPU ");
    if (r->has_cpu) {
        put_grouped(o, tci_us_of(cpu));
        TCI_PUT_LIT(o, " µs");
    } else {
        tci_sink_putc(o, '-');
    }
}

static void section_facts(page *pg, const tci_profile *p)
{
    tci_sink *o = pg->o;
    TCI_PUT_LIT(o, "<table class=\"facts\">\n<tr><th scope=\"row\">span</th><td>");
    both_clocks(o, pg->r, p->span_wall, p->span_cpu);
    TCI_PUT_LIT(o, "</td></tr>\n<tr><th scope=\"row\">in methods</th><td>");
    both_clocks(o, pg->r, p->busy_wall, p->busy_cpu);
    TCI_PUT_LIT(o, "</td></tr>\n<tr><th scope=\"row\">calls</th><td>");
    put_grouped_u64(o, p->calls);
    TCI_PUT_LIT(o, "</td></tr>\n<tr><th scope=\"row\">methods</th><td>");
    put_grouped_u64(o, p->n_methods);
    TCI_PUT_LIT(o, "</td></tr>\n</table>\n");
}

static int put_all(page *pg, const tci_calltree *ct)
{
    tci_profile p;
    rview v;
    tci_sink *o = pg->o;
    int rc = tci_profile_build(&p, ct, TCI_NONE);
    if (rc == TC_OK)
        rc = tci_report_view(pg->w, &p, &v);
    if (rc == TC_OK) {
        tci_sink_printf(o, "<section id=\"all\">\n<h2>All threads (%u)</h2>\n", p.n_threads);
        section_facts(pg, &p);
        if (p.n_methods) {
            tci_sink_printf(o, "<p class=\"note\">Click a column header to sort (again: the other way). Open a "
                               "method to see its parents and children: calls along each edge / all its calls "
                               "(a child's: all the child's calls), their %s, and their share of "
                               "its inclusive %s; listed for the first %u methods of the table's first order, "
                               "%u rows per list at most (the rest summed in one line).</p>\n",
                            pg->r->count ? "counts" : "wall and CPU time", pg->r->count ? "count" : "time",
                            (unsigned)EDGE_METHODS, (unsigned)EDGE_ROWS);
            rc = method_table(pg, &v, true);
        } else {
            TCI_PUT_LIT(o, "<p>No method calls: no thread of the input has a slice or a sample.</p>\n");
        }
        TCI_PUT_LIT(o, "</section>\n");
        tci_report_saturation_note(pg->w, &p);
    }
    tci_profile_free(&p);
    return rc;
}

static int put_thread(page *pg, const tci_calltree *ct, uint32_t t)
{
    const tci_thread *th = &pg->w->trace->threads[t];
    tci_sink *o = pg->o;
    tci_profile p;
    rview v;
    int rc = tci_profile_build(&p, ct, t);
    if (rc == TC_OK)
        rc = tci_report_view(pg->w, &p, &v);
    if (rc == TC_OK) {
        TCI_PUT_LIT(o, "<details class=\"thread\"><summary>Thread <span class=\"thread-name\">");
        put_text(o, th->name);
        tci_sink_printf(o, "</span> (tid %llu): ", (unsigned long long)th->tid); /* an id: not grouped */
        put_grouped_u64(o, p.calls);
        TCI_PUT_LIT(o, " calls, ");
        put_grouped_u64(o, p.n_methods);
        TCI_PUT_LIT(o, " methods</summary>\n");
        section_facts(pg, &p);
        rc = method_table(pg, &v, false);
        TCI_PUT_LIT(o, "</details>\n");
        tci_report_saturation_note(pg->w, &p);
    }
    tci_profile_free(&p);
    return rc;
}

static int put_threads(page *pg, const tci_calltree *ct)
{
    TCI_PUT_LIT(pg->o, "<section id=\"threads\">\n<h2>Threads</h2>\n");
    int rc = TC_OK;
    for (uint32_t k = 0; k < ct->n_roots && rc == TC_OK && !tci_sink_failed(pg->o); k++) {
        uint32_t t = tci_report_thread_at(pg->w, ct, k); /* main's section first */
        if (tci_report_thread_has_calls(ct, t))
            rc = put_thread(pg, ct, t);
    }
    TCI_PUT_LIT(pg->o, "</section>\n");
    return rc;
}

static void put_tail(page *pg)
{
    tci_sink *o = pg->o;
    TCI_PUT_LIT(o, "<script>" SCRIPT_START);
    tci_sink_puts(o, PAGE_SCRIPT);
    tci_sink_puts(o, tci_flame_script());
    TCI_PUT_LIT(o, SCRIPT_END "</script>\n</body>\n</html>\n");
}

/* The graphs: wall when the input has that clock, thread CPU when it has that one. */
static void plan_graphs(page *pg)
{
    if (pg->r->has_wall)
        pg->graphs[pg->n_graphs++] = (graph){"fg-wall", false, "Flame graph: wall time (all threads)"};
    if (pg->r->has_cpu)
        pg->graphs[pg->n_graphs++] = (graph){"fg-cpu", true, "Flame graph: thread CPU time (all threads)"};
}

int tci_report_html(tci_wctx *w, const tci_calltree *ct)
{
    page pg = {.w = w, .r = w->priv, .o = w->out};
    plan_graphs(&pg);
    int rc = put_head(&pg);
    if (rc == TC_OK) {
        put_facts(&pg);
        rc = pg.r->callers ? put_callers(&pg, ct) : TC_OK;
    }
    if (rc == TC_OK) {
        rc = put_profiler(&pg, ct);
    }
    if (rc == TC_OK) {
        rc = put_graphs(&pg, ct);
    }
    if (rc == TC_OK)
        rc = put_all(&pg, ct);
    if (rc == TC_OK)
        rc = put_threads(&pg, ct);
    if (rc == TC_OK)
        put_tail(&pg);
    return rc;
}
