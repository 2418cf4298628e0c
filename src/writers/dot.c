/*
 * dot.c - the call graph for Graphviz (`dot -Tsvg app.dot > app.svg`):
 * one node per method, labelled with its name, inclusive and exclusive time
 * (ms) and calls (normal+recursive); one edge per caller -> callee pair,
 * labelled with its calls and its time (a count profile: its counts, named
 * after the event, "1234 cycles:HG"). All threads in one graph: a call
 * graph's nodes are methods, and a method called on several threads is one
 * node (the report writer has the per-thread figures).
 *
 * Figures come from the profile module (profile.c). An edge's time counts
 * each instant once: a call made inside another call along the same edge
 * (recursion through it) adds nothing more, so no edge is ever longer than
 * its caller's or its callee's inclusive time.
 *
 * threshold PCT (default 1): an edge is drawn when its own time is at least
 * PCT % of the total (the sum of the threads' spans), and a method when some
 * drawn edge leads to or from it. Judged on each edge's time, not on the
 * methods' global totals as dmtracedump does (DMTRACEDUMP-REPORT.md §5), so a
 * method that is heavy elsewhere is not drawn under a caller that barely
 * calls it. 1 % by default: the edges at one call depth share the total
 * time, so at most 100 of them can reach 1 % there, which keeps a real
 * app's graph readable (a few dozen nodes; 20 % hid most of it in
 * dmtracedump), while anything costing 1 % of the run stays visible;
 * 0 draws everything.
 *
 * Weight, as pprof's graph draws it (github.com/google/pprof, internal/graph/
 * dotgraph.go): a method's font size grows with its exclusive ("flat") time,
 * 8 + ceil(16 * sqrt(excl / the largest drawn excl)) points, and its border and
 * fill colour with its inclusive ("cum") share of the total, grey through red
 * (pprof's dotColor); an edge's pen width (1 + 5 * time / total, at most 6),
 * layout weight and colour follow its own time. A node is labelled with the
 * method's short name, "Class.method" (package and signature dropped; a name
 * shown by two drawn nodes, an overload or one class name in two packages,
 * is shown whole on both), the full name with its signature in its tooltip
 * (the SVG's title). (toplevel) is not a method: drawn plain, dashed.
 *
 * Labels are Graphviz-safe (escape.h's Graphviz rule): box nodes (never
 * record shapes, whose fields would eat "<init>", '{', '|'), quoted strings
 * showing a name as the HTML report does (control characters as the text
 * "\n", "\t", "\xHH", "\u0085", a backslash as "\\", bytes that are not
 * UTF-8 and noncharacters such as U+FFFF as U+FFFD), with '"' and '\'
 * escaped for dot and '&' written as "&amp;" (Graphviz reads entities), so
 * that `dot -Tsvg` writes well-formed XML; very long names are cut (with
 * "...") so that a node stays drawable. The
 * output is deterministic: nodes in order of inclusive time (then name),
 * each node's edges by time.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <math.h>
#include <stdlib.h>

#define DOT_DEFAULT_PPM 10000u /* 1 % */
#define DOT_NAME_MAX 400       /* bytes of a name shown in a label */

typedef struct dot_w {
    bool cpu;                /* weigh by thread CPU time */
    const char *count;       /* a count profile: what its figures count ("cycles:HG"); NULL: time */
    tci_psort_item *rows;    /* rows in drawing order */
    uint32_t cap_rows;
    tci_psort_item *list;    /* one node's edges in order */
    uint32_t cap_list;
    bool *edge_kept;         /* per edge of the profile */
    bool *row_kept;          /* per row */
    bool *row_whole;         /* per row: its short name is another drawn node's too: shown whole */
    bool top_kept;
    int64_t max_excl;        /* the largest exclusive time of a drawn method (font sizes) */
    char *scratch;           /* a short name being compared */
    uint32_t cap_scratch;
} dot_w;

/* ---- labels ---------------------------------------------------------------- */

/* Text inside a DOT "string" label (escape.h's Graphviz rule; see the top of the file). */
static void put_label_text(tci_sink *o, const char *s, size_t max) { tci_put_dot_label(o, s, max); }

static void put_label_name(tci_sink *o, const char *s) { put_label_text(o, s, DOT_NAME_MAX); }

/* The report's form of a method name: "pkg.Class.method (sig)ret", "unknown.0x1c". */
static void put_method_label(tci_sink *o, const tci_method *m) { tci_put_method_name(o, m, put_label_name); }

/* A method's short name, as people say it: "Class.method" (the class without its package;
 * a nested class keeps its outer one, "Outer$Inner.run"), a plain name (a slice, a sampled
 * frame) its short form as every writer shows it, an unknown id "unknown.0x1c". Its two parts:
 * *head, and *tail (NULL: none) after a '.'. */
static void short_parts(const tci_method *m, const char **head, const char **tail)
{
    *tail = NULL;
    if (m->plain_name || !m->defined || !m->cls) {
        *head = m->short_name;
        return;
    }
    const char *dot = strrchr(m->cls, '.');
    *head = dot && dot[1] ? dot + 1 : m->cls;
    *tail = m->name;
}

static void put_short_label(tci_sink *o, const tci_method *m)
{
    const char *head, *tail;
    short_parts(m, &head, &tail);
    put_label_name(o, head);
    if (tail) {
        tci_sink_putc(o, '.');
        put_label_name(o, tail);
    }
}

/* A figure: ns as ms with three decimals (µs rounded to the nearest, halves away from zero),
 * or a count profile's count ("1234 cycles:HG"). */
static void put_ms(tci_sink *o, const dot_w *d, int64_t ns)
{
    if (d->count) {
        tci_sink_i64(o, tci_count_of(ns));
        tci_sink_putc(o, ' ');
        put_label_text(o, d->count, DOT_NAME_MAX);
        return;
    }
    tci_sink_milli(o, tci_us_of(ns));
    TCI_PUT_LIT(o, " ms");
}

static void put_pct(tci_sink *o, int64_t part, int64_t whole)
{
    if (whole <= 0)
        return;
    char b[TCI_FMT_FIXED1_MAX]; /* printf's "%.1f" without its parsing (textout.c) */
    TCI_PUT_LIT(o, " (");
    tci_sink_write(o, b, tci_fmt_fixed1(b, 100.0 * (double)part / (double)whole));
    TCI_PUT_LIT(o, "%)");
}

/* ---- which edges and nodes are drawn -------------------------------------------- */

static int64_t edge_time(const dot_w *d, const tci_pedge *e) { return d->cpu ? e->once.cpu : e->once.wall; }

/* time >= ppm/10^6 of total, exactly (no floating point: the test computes the same with fractions) */
static bool at_least(int64_t time, uint32_t ppm, int64_t total)
{
    return (__int128)time * 1000000 >= (__int128)ppm * total;
}

static int choose(tci_wctx *w, const tci_profile *p, int64_t total, uint32_t *n_nodes, uint32_t *n_edges)
{
    dot_w *d = w->priv;
    uint32_t ppm = w->opt->threshold_set ? w->opt->threshold_ppm : DOT_DEFAULT_PPM;
    d->edge_kept = tci_calloc(p->n_edges ? p->n_edges : 1, sizeof *d->edge_kept);
    d->row_kept = tci_calloc(p->n_methods ? p->n_methods : 1, sizeof *d->row_kept);
    if (!d->edge_kept || !d->row_kept)
        return TC_ERR_NOMEM;
    *n_nodes = *n_edges = 0;
    for (uint32_t e = 0; e < p->n_edges; e++) {
        const tci_pedge *ed = &p->edges[e];
        if (!at_least(edge_time(d, ed), ppm, total))
            continue;
        d->edge_kept[e] = true;
        ++*n_edges;
        if (ed->caller == TCI_NONE)
            d->top_kept = true;
        else
            d->row_kept[ed->caller] = true;
        d->row_kept[ed->callee] = true;
    }
    for (uint32_t r = 0; r < p->n_methods; r++) {
        *n_nodes += d->row_kept[r];
        int64_t excl = d->cpu ? p->methods[r].excl_cpu : p->methods[r].excl_wall;
        if (d->row_kept[r] && excl > d->max_excl)
            d->max_excl = excl;
    }
    return TC_OK;
}

/* The short name of row r into d->scratch ("Class.method"); its length, or SIZE_MAX (memory). */
static size_t short_text(dot_w *d, const tci_profile *p, uint32_t r)
{
    const char *head, *tail;
    short_parts(&p->trace->methods[p->methods[r].method], &head, &tail);
    size_t a = strlen(head), b = tail ? strlen(tail) + 1 : 0;
    if (a + b >= UINT32_MAX || tci_grow((void **)&d->scratch, &d->cap_scratch, (uint32_t)(a + b), 1) != 0)
        return SIZE_MAX;
    memcpy(d->scratch, head, a);
    if (tail) {
        d->scratch[a] = '.';
        memcpy(d->scratch + a + 1, tail, b - 1);
    }
    return a + b;
}

/* Which drawn methods share their short name with another drawn one (overloads, a class name
 * in two packages): those are shown whole, so that no two nodes read the same. A hash of the
 * short name finds the first row that showed it; texts are compared, and two texts of one
 * hash count as a clash too (shown whole: harmless). */
static int mark_clashes(dot_w *d, const tci_profile *p)
{
    tci_idmap first = {0};
    int rc = TC_OK;
    d->row_whole = tci_calloc(p->n_methods ? p->n_methods : 1, sizeof *d->row_whole);
    if (!d->row_whole)
        return TC_ERR_NOMEM;
    for (uint32_t r = 0; r < p->n_methods && rc == TC_OK; r++) {
        if (!d->row_kept[r])
            continue;
        size_t n = short_text(d, p, r);
        if (n == SIZE_MAX) {
            rc = TC_ERR_NOMEM;
            break;
        }
        uint64_t h = tci_text_hash(d->scratch, n, 0);
        uint32_t other = tci_idmap_get(&first, h);
        if (other == TCI_NONE)
            rc = tci_idmap_put(&first, h, r) != 0 ? TC_ERR_NOMEM : TC_OK;
        else
            d->row_whole[other] = d->row_whole[r] = true;
    }
    tci_idmap_free(&first);
    return rc;
}

/* ---- weight: pprof's sizes and colours ------------------------------------------- */

/* pprof's dotColor(score, isBackground): score in [-1, 1] (here a share of the total, >= 0)
 * from grey (0) to red (1); a light fill (background) or a dark border. Its constants,
 * its order of operations, and Go's float-to-uint8 conversion (truncation). */
static void put_dot_color(tci_sink *o, double score, bool background)
{
    const double shift = 0.7, bg_saturation = 0.1, bg_value = 0.93, fg_saturation = 1.0, fg_value = 0.7;
    double saturation = background ? bg_saturation : fg_saturation, value = background ? bg_value : fg_value;
    score = fmax(-1.0, fmin(1.0, score));
    if (fabs(score) < 0.2)
        saturation *= fabs(score) / 0.2; /* grey near 0, not yellow */
    if (score > 0.0)
        score = pow(score, 1.0 - shift);
    if (score < 0.0)
        score = -pow(-score, 1.0 - shift);
    double r, g, b;
    if (score < 0.0) {
        g = value;
        r = value * (1 + saturation * score);
    } else {
        r = value;
        g = value * (1 - saturation * score);
    }
    b = value * (1 - saturation);
    tci_sink_printf(o, "#%02x%02x%02x", (unsigned)(uint8_t)(r * 255.0), (unsigned)(uint8_t)(g * 255.0),
                    (unsigned)(uint8_t)(b * 255.0));
}

static double share(int64_t part, int64_t total) { return total > 0 ? (double)part / (double)total : 0.0; }

/* pprof's node font size: 8, plus up to 16 by the square root of the exclusive time's share of
 * the largest drawn one (the square root: small differences stay visible). */
static int font_size(const dot_w *d, int64_t excl)
{
    int size = 8;
    if (d->max_excl > 0 && excl > 0 && excl <= d->max_excl)
        size += (int)ceil(16.0 * sqrt((double)excl / (double)d->max_excl));
    return size;
}

/* An edge's attributes after its label: pprof's layout weight (1 + its % of the total, when
 * above 1), pen width (1 + 5 * time / total, at most 6, when above 1), and colour. */
static void put_edge_weight(tci_sink *o, int64_t time, int64_t total)
{
    if (total <= 0)
        return;
    __int128 t = time < 0 ? -(__int128)time : time;
    __int128 pct = t * 100 / total, wid = t * 5 / total;
    int weight = 1 + (int)(pct < 100 ? pct : 100), width = 1 + (int)(wid < 5 ? wid : 5);
    if (weight > 1)
        tci_sink_printf(o, ", weight=%d", weight);
    if (width > 1)
        tci_sink_printf(o, ", penwidth=%d", width);
    TCI_PUT_LIT(o, ", color=\"");
    put_dot_color(o, share(time, total), false);
    tci_sink_putc(o, '"');
}

/* ---- output ------------------------------------------------------------------ */

static void graph_head(tci_wctx *w, const tci_profile *p, int64_t total, uint32_t n_nodes, uint32_t n_edges)
{
    const dot_w *d = w->priv;
    uint32_t ppm = w->opt->threshold_set ? w->opt->threshold_ppm : DOT_DEFAULT_PPM;
    tci_sink *o = w->out;
    TCI_PUT_LIT(o, "// traceconv " TC_VERSION_STRING " call graph: dot -Tsvg FILE.dot > FILE.svg\n"
                   "digraph \"traceconv\" {\n  graph [labelloc=t, fontname=\"Helvetica\", label=\"");
    put_label_text(o, w->trace->input_name ? w->trace->input_name : "-", DOT_NAME_MAX);
    char pct[24];
    unsigned frac = ppm % 10000;
    int decimals = 4;
    for (; decimals && frac % 10 == 0; decimals--)
        frac /= 10; /* "1", "0.5": no trailing zeros */
    if (decimals)
        snprintf(pct, sizeof pct, "%u.%0*u", ppm / 10000, decimals, frac);
    else
        snprintf(pct, sizeof pct, "%u", ppm / 10000);
    if (d->count) {
        TCI_PUT_LIT(o, ": call graph of all threads, ");
        put_label_text(o, d->count, DOT_NAME_MAX);
        tci_sink_printf(o, " counts of the sampled stacks\\nmethods and edges with at least %s%% of ", pct);
    } else {
        tci_sink_printf(o, ": call graph of all threads, %s time\\nmethods and edges with at least %s%% of ",
                        d->cpu ? "thread-CPU" : "wall", pct);
    }
    put_ms(o, d, total);
    tci_sink_printf(o, " (%u of %u methods, %u of %u edges)", n_nodes, p->n_methods, n_edges, p->n_edges);
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection it was made with, named as the options are */
    if (tci_selection_text(w->opt, tci_writer_dot.options, sel, sizeof sel)) {
        TCI_PUT_LIT(o, "\\nselection: ");
        put_label_text(o, sel, TCI_SELECTION_TEXT_MAX);
    }
    TCI_PUT_LIT(o, "\"];\n");
    TCI_PUT_LIT(o, "  node [shape=box, style=filled, fillcolor=\"#f8f8f8\", fontname=\"Helvetica\", fontsize=10];\n"
                   "  edge [fontname=\"Helvetica\", fontsize=9];\n");
}

static void node_id(tci_sink *o, const tci_profile *p, uint32_t row)
{
    if (row == TCI_NONE)
        TCI_PUT_LIT(o, "top");
    else
        tci_sink_printf(o, "m%u", p->methods[row].method);
}

static void put_node(tci_wctx *w, const tci_profile *p, uint32_t row, int64_t total)
{
    const dot_w *d = w->priv;
    tci_sink *o = w->out;
    TCI_PUT_LIT(o, "  ");
    node_id(o, p, row);
    TCI_PUT_LIT(o, " [label=\"");
    if (row == TCI_NONE) {
        TCI_PUT_LIT(o, "(toplevel)\\nall threads ");
        put_ms(o, d, total);
        TCI_PUT_LIT(o, "\", style=dashed, tooltip=\"the threads themselves: their calls start here\"];\n");
        return;
    }
    const tci_pmethod *m = &p->methods[row];
    const tci_method *tm = &p->trace->methods[m->method];
    int64_t incl = d->cpu ? m->incl_cpu : m->incl_wall, excl = d->cpu ? m->excl_cpu : m->excl_wall;
    if (d->row_whole[row])
        put_method_label(o, tm);
    else
        put_short_label(o, tm);
    TCI_PUT_LIT(o, "\\nincl ");
    put_ms(o, d, incl);
    put_pct(o, incl, total);
    TCI_PUT_LIT(o, ", excl ");
    put_ms(o, d, excl);
    put_pct(o, excl, total);
    tci_sink_printf(o, "\\n%llu+%llu calls\", fontsize=%d, color=\"", (unsigned long long)m->calls,
                    (unsigned long long)m->recursive_calls, font_size(d, excl));
    put_dot_color(o, share(incl, total), false);
    TCI_PUT_LIT(o, "\", fillcolor=\"");
    put_dot_color(o, share(incl, total), true);
    TCI_PUT_LIT(o, "\", tooltip=\"");
    put_method_label(o, tm);
    TCI_PUT_LIT(o, " (incl ");
    put_ms(o, d, incl);
    TCI_PUT_LIT(o, ")\"];\n");
}

/* A row's full name in a tooltip; (toplevel) for the threads themselves. */
static void put_row_name(tci_sink *o, const tci_profile *p, uint32_t row)
{
    if (row == TCI_NONE)
        TCI_PUT_LIT(o, "(toplevel)");
    else
        put_method_label(o, &p->trace->methods[p->methods[row].method]);
}

/* The drawn edges out of one node, by time (then callee name). */
static int put_edges(tci_wctx *w, const tci_profile *p, uint32_t row, int64_t total)
{
    dot_w *d = w->priv;
    tci_sink *o = w->out;
    const uint32_t *at = row == TCI_NONE ? p->child_edges + p->top_children_at
                                         : p->child_edges + p->methods[row].children_at;
    uint32_t n = row == TCI_NONE ? p->n_top_children : p->methods[row].n_children, k = 0;
    if (tci_grow((void **)&d->list, &d->cap_list, n, sizeof *d->list) != 0)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (d->edge_kept[at[i]])
            d->list[k++] = (tci_psort_item){.key = edge_time(d, &p->edges[at[i]]), .row = p->edges[at[i]].callee,
                                            .tag = at[i]};
    tci_profile_sort(p, d->list, k);
    for (uint32_t i = 0; i < k; i++) {
        const tci_pedge *e = &p->edges[d->list[i].tag];
        TCI_PUT_LIT(o, "  ");
        node_id(o, p, row);
        TCI_PUT_LIT(o, " -> ");
        node_id(o, p, e->callee);
        tci_sink_printf(o, " [label=\"%llu call%s\\n", (unsigned long long)e->all.calls, e->all.calls == 1 ? "" : "s");
        put_ms(o, d, edge_time(d, e));
        tci_sink_putc(o, '"');
        put_edge_weight(o, edge_time(d, e), total);
        for (int k = 0; k < 2; k++) { /* pprof's: the whole edge and its label say the same */
            tci_sink_puts(o, k ? ", labeltooltip=\"" : ", tooltip=\"");
            put_row_name(o, p, row);
            TCI_PUT_LIT(o, " -> ");
            put_row_name(o, p, e->callee);
            TCI_PUT_LIT(o, " (");
            put_ms(o, d, edge_time(d, e));
            TCI_PUT_LIT(o, ")\"");
        }
        TCI_PUT_LIT(o, "];\n");
    }
    return TC_OK;
}

static int draw(tci_wctx *w, const tci_profile *p)
{
    dot_w *d = w->priv;
    int64_t total = d->cpu ? p->span_cpu : p->span_wall;
    uint32_t n_nodes, n_edges;
    int rc = choose(w, p, total, &n_nodes, &n_edges);
    if (rc == TC_OK)
        rc = mark_clashes(d, p);
    if (rc == TC_OK && tci_grow((void **)&d->rows, &d->cap_rows, p->n_methods, sizeof *d->rows) != 0)
        rc = TC_ERR_NOMEM;
    if (rc != TC_OK)
        return rc;
    for (uint32_t r = 0; r < p->n_methods; r++)
        d->rows[r] = (tci_psort_item){.key = d->cpu ? p->methods[r].incl_cpu : p->methods[r].incl_wall, .row = r};
    tci_profile_sort(p, d->rows, p->n_methods);
    graph_head(w, p, total, n_nodes, n_edges);
    if (d->top_kept)
        put_node(w, p, TCI_NONE, total);
    for (uint32_t i = 0; i < p->n_methods; i++)
        if (d->row_kept[d->rows[i].row])
            put_node(w, p, d->rows[i].row, total);
    if (d->top_kept)
        rc = put_edges(w, p, TCI_NONE, total);
    for (uint32_t i = 0; i < p->n_methods && rc == TC_OK; i++)
        if (d->row_kept[d->rows[i].row])
            rc = put_edges(w, p, d->rows[i].row, total);
    TCI_PUT_LIT(w->out, "}\n");
    if (p->saturated)
        tci_warn(w->diag, TCI_FIG_SATURATED, "dot", UINT64_MAX,
                 "%llu sums of the call graph went beyond %lld ns and were capped there; those figures are lower "
                 "bounds", (unsigned long long)p->saturated, (long long)TCI_SUM_MAX);
    return rc;
}

static int dot_begin(tci_wctx *w)
{
    dot_w *d = w->priv;
    const tci_trace *t = w->trace;
    int rc = tci_weight_check(w->diag, w->trace, w->opt->weight_cpu, "dot");
    if (rc != TC_OK)
        return rc;
    tci_weighs ws = tci_weighs_of(t);
    d->count = ws.count;
    d->cpu = w->opt->weight_cpu || !ws.wall; /* without a wall clock, CPU time is all there is */
    return TC_OK;
}

static int dot_finish(tci_wctx *w, const tci_calltree *ct)
{
    tci_profile p;
    int rc = tci_profile_build(&p, ct, TCI_NONE);
    if (rc == TC_OK)
        rc = draw(w, &p);
    tci_profile_free(&p);
    if (rc != TC_OK)
        return rc;
    return w->out->err ? TC_ERR_IO : TC_OK;
}

static void dot_close(tci_wctx *w)
{
    dot_w *d = w->priv;
    if (!d)
        return;
    free(d->rows);
    free(d->list);
    free(d->edge_kept);
    free(d->row_kept);
    free(d->row_whole);
    free(d->scratch);
}

/* The threshold: a percentage from 0 to 100 with at most 4 decimals ("1", "0.5",
 * "0.0001"), kept exactly in millionths so that a threshold compares without rounding. */
static int parse_threshold(tci_options *o, const char *v)
{
    uint64_t whole = 0, frac = 0;
    int digits = 0, decimals = 0;
    if (!v)
        return -1;
    for (; *v >= '0' && *v <= '9' && whole <= 100; v++, digits++)
        whole = whole * 10 + (uint64_t)(*v - '0');
    if (*v == '.')
        for (v++; *v >= '0' && *v <= '9' && decimals < 5; v++, decimals++, digits++)
            frac = frac * 10 + (uint64_t)(*v - '0');
    if (*v || !digits || decimals > 4)
        return -1;
    for (; decimals < 4; decimals++)
        frac *= 10;
    uint64_t x = whole * 10000 + frac;
    if (x > 1000000)
        return -1;
    o->threshold_ppm = (uint32_t)x;
    o->threshold_set = true;
    return 0;
}

const tci_writer tci_writer_dot = {
    .name = "dot",
    .description = "call graph for Graphviz (dot -Tsvg), nodes and edges above a threshold of the total time",
    .extensions = "dot,gv",
    .options = (const tci_option_def[]){TCI_OPTION_WEIGHT("the clock of the threshold and the percentages"),
                                        {.key = "threshold", .type = TCI_OPT_FLOAT, .def = "1", .arg = "PCT",
                                         .help = "hide edges below PCT % of the total time",
                                         .expects = "a percentage from 0 to 100, at most 4 decimals",
                                         TCI_OPT_FIELD(threshold_ppm), .parse = parse_threshold},
                                        {0}},
    .variants = (const tci_variant[]){{.name = "dot", .extension = "dot",
                                       .mime = "text/vnd.graphviz; charset=utf-8", .mark = "// traceconv ",
                                       .aliases = "graphviz,gv,callgraph,call-graph"}, {0}},
    .priv_size = sizeof(dot_w),
    .flags = TCI_WF_AGGREGATE,
    .begin = dot_begin,
    .finish = dot_finish,
    .close = dot_close,
};
