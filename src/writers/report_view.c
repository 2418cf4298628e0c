/*
 * report_view.c - what the report's renderers share: the rows of a profile in report
 * order (a view, sorted once), the parents and children lists, and the texts of its
 * facts. The text and CSV report (report.c) and the HTML report (report_html.c) show the
 * same rows, lists and totals from it; neither calls the other's code (report.c picks the
 * renderer of the variant it writes).
 */
#include "report_shared.h"
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_writer.h"

#include <stdlib.h>

/* ---- the report's options: its rows, which both renderers read (the HTML page's selection) ---- */

const tci_option_def tci_report_options[] = {
    TCI_OPTION_WEIGHT("the clock of the order and the percentages"),
    TCI_OPTION_SORT("the order of the methods"),
    {.key = "csv", .type = TCI_OPT_BOOL, .help = "CSV rows instead of the text report (-o report-csv)",
     TCI_OPT_FIELD(csv)},
    {.key = "html", .type = TCI_OPT_BOOL,
     .help = "a self-contained HTML page: sortable tables, flame graphs (-o report-html)", TCI_OPT_FIELD(html)},
    TCI_OPTION_REVERSE("bottom-up: who calls each method (text: the tree after the table; CSV: its rows)"),
    TCI_OPTION_CALLERS("the callers of METHOD: each call's inclusive time by chain of callers (text: the tree "
                       "after the table; CSV: its rows; HTML: a section, the graphs rooted at it)"),
    {0},
};

static int64_t sort_key(const report_w *r, const tci_pmethod *m, uint8_t sort)
{
    switch (sort) {
    case TCI_SORT_EXCL: return r->cpu ? m->excl_cpu : m->excl_wall;
    case TCI_SORT_CALLS: return tci_clamp_calls(m->calls + m->recursive_calls >= m->calls ? m->calls + m->recursive_calls
                                                                                      : UINT64_MAX);
    case TCI_SORT_NAME: return 0;
    default: return r->cpu ? m->incl_cpu : m->incl_wall;
    }
}

int tci_report_view(tci_wctx *w, const tci_profile *p, rview *v)
{
    report_w *r = w->priv;
    uint32_t n = p->n_methods;
    if (tci_grow((void **)&r->items, &r->cap_items, n, sizeof *r->items) != 0 ||
        tci_grow((void **)&r->index, &r->cap_index, n, sizeof *r->index) != 0)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++)
        r->items[i] = (tci_psort_item){.key = sort_key(r, &p->methods[i], w->opt->sort), .row = i, .tag = i};
    tci_profile_sort(p, r->items, n);
    for (uint32_t i = 0; i < n; i++)
        r->index[r->items[i].row] = i + 1;
    *v = (rview){p, r->items, r->index};
    return TC_OK;
}

/* ---- the facts ----------------------------------------------------------------- */

const char *tci_report_clock_text(const report_w *r)
{
    if (r->count)
        return "the figures are counts of the sampled stacks, the cpu columns show -; slices weigh nothing, their "
               "time is on the timelines";
    if (r->has_wall && r->has_cpu)
        return "wall and thread CPU";
    if (r->has_wall)
        return "wall only: no thread-CPU clock, the cpu columns show -";
    return "thread CPU only: no wall clock, the wall columns show -; the timeline is each thread's CPU time";
}

void tci_report_figures(tci_sink *o, const tci_diag *d, int kind)
{
    char text[TCI_FIGURES_TEXT_MAX];
    tci_sink_puts(o, tci_figures_text(d, kind, text, sizeof text));
}

const char *tci_report_sort_text(uint8_t sort)
{
    switch (sort) {
    case TCI_SORT_EXCL: return "exclusive";
    case TCI_SORT_CALLS: return "calls";
    case TCI_SORT_NAME: return "name";
    default: return "inclusive";
    }
}

/* ---- parents and children ----------------------------------------------------- */

/* The part of an edge a list shows: outer (the normal list) or the nested rest. */
tci_pcost tci_report_edge_part(const tci_pedge *e, int side, bool nested)
{
    const tci_pcost *outer = side == TCI_REPORT_PARENTS ? &e->callee_outer : &e->caller_outer;
    if (!nested)
        return *outer;
    return (tci_pcost){e->all.calls - outer->calls, e->all.wall - outer->wall, e->all.cpu - outer->cpu};
}

static bool part_shown(const tci_pcost *c) { return c->calls || c->wall || c->cpu; }

int tci_report_list(tci_wctx *w, const tci_profile *p, const uint32_t *at, uint32_t n, int side, bool nested,
                      uint32_t *count)
{
    report_w *r = w->priv;
    if (tci_grow((void **)&r->list, &r->cap_list, n, sizeof *r->list) != 0)
        return TC_ERR_NOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tci_pedge *e = &p->edges[at[i]];
        tci_pcost c = tci_report_edge_part(e, side, nested);
        if (!part_shown(&c))
            continue;
        r->list[k++] = (tci_psort_item){.key = r->cpu ? c.cpu : c.wall, .row = side == TCI_REPORT_PARENTS ? e->caller : e->callee,
                                        .tag = at[i]};
    }
    tci_profile_sort(p, r->list, k);
    *count = k;
    return TC_OK;
}

uint64_t tci_report_total_calls(const tci_profile *p, uint32_t row)
{
    if (row == TCI_NONE)
        return 0;
    const tci_pmethod *m = &p->methods[row];
    return m->calls + m->recursive_calls >= m->calls ? m->calls + m->recursive_calls : UINT64_MAX;
}

void tci_report_saturation_note(tci_wctx *w, const tci_profile *p)
{
    if (p->saturated)
        tci_warn(w->diag, TCI_FIG_SATURATED, "report", UINT64_MAX,
                 "%llu sums of the profile went beyond %lld ns and were capped there; those figures are lower bounds",
                 (unsigned long long)p->saturated, (long long)TCI_SUM_MAX);
}

/* ---- a derived tree's lines (bottom-up, callers) ------------------------------------- */

/* One open level of the tree: its children in order, in order[at..at+n). */
typedef struct tree_level {
    uint32_t at, n, next;
} tree_level;

typedef struct tree_lines {
    const tci_profile *p;
    const tci_calltree *tree;
    bool cpu;
    int64_t min_time;
    tci_psort_item *order;
    uint32_t n_order, cap_order;
    tree_level *levels;
    uint32_t n_levels, cap_levels;
} tree_lines;

static int64_t line_time(const tree_lines *tl, uint32_t node)
{
    return tl->cpu ? tl->tree->nodes[node].cpu_total : tl->tree->nodes[node].wall_total;
}

/* A new level: node's children that are shown, by time (then name). */
static int push_level(tree_lines *tl, uint32_t node)
{
    uint32_t at = tl->n_order;
    for (uint32_t c = tl->tree->nodes[node].first_child; c != TCI_NONE; c = tl->tree->nodes[c].next_sibling) {
        int64_t t = line_time(tl, c);
        if (t <= 0 || t < tl->min_time)
            continue;
        if (tci_grow((void **)&tl->order, &tl->cap_order, tl->n_order, sizeof *tl->order) != 0)
            return TC_ERR_NOMEM;
        tl->order[tl->n_order++] =
            (tci_psort_item){.key = t, .row = tci_profile_row(tl->p, tl->tree->nodes[c].method), .tag = c};
    }
    if (tci_grow((void **)&tl->levels, &tl->cap_levels, tl->n_levels, sizeof *tl->levels) != 0)
        return TC_ERR_NOMEM;
    tci_profile_sort(tl->p, tl->order + at, tl->n_order - at);
    tl->levels[tl->n_levels++] = (tree_level){at, tl->n_order - at, 0};
    return TC_OK;
}

int tci_report_tree_lines(const tci_profile *p, const tci_calltree *tree, uint32_t root, bool cpu, int64_t min_time,
                          int (*line)(void *user, uint32_t node, uint32_t depth), void *user)
{
    tree_lines tl = {.p = p, .tree = tree, .cpu = cpu, .min_time = min_time};
    int rc = push_level(&tl, root);
    while (rc == TC_OK && tl.n_levels) {
        tree_level *l = &tl.levels[tl.n_levels - 1];
        if (l->next == l->n) { /* done: its children's slots are free again */
            tl.n_order = l->at;
            tl.n_levels--;
            continue;
        }
        uint32_t node = tl.order[l->at + l->next++].tag;
        if ((rc = line(user, node, tl.n_levels - 1)) == TC_OK)
            rc = push_level(&tl, node);
    }
    free(tl.order);
    free(tl.levels);
    return rc;
}

uint32_t *tci_report_row_methods(const tci_profile *p)
{
    uint32_t n = p->trace->n_methods;
    uint32_t *canon = tci_malloc((n ? n : 1) * sizeof *canon);
    for (uint32_t m = 0; canon && m < n; m++) {
        uint32_t row = tci_profile_row(p, m);
        canon[m] = row == TCI_NONE ? m : p->methods[row].method;
    }
    return canon;
}

int tci_report_derived_trees(tci_wctx *w, const tci_profile *p, const tci_calltree *ct, tci_calltree *rev,
                             tci_calltree *merged)
{
    const report_w *r = w->priv;
    uint32_t *canon = tci_report_row_methods(p);
    int rc = !canon      ? TC_ERR_NOMEM
             : r->callers ? tci_calltree_callers(ct, canon, r->callers, w->opt->callers, rev)
                          : tci_calltree_reverse(ct, canon, rev);
    free(canon);
    return rc == TC_OK ? tci_calltree_merge_threads(rev, merged) : rc;
}
