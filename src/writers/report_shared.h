/*
 * report_shared.h - what the report writer's renderers share: the text report
 * and CSV (report.c, the writer, which picks the renderer of its variant) and
 * the HTML report (report_html.c). The figures are the profile module's;
 * report_view.c puts them in order (a view) once, and every renderer shows the
 * same rows, lists and totals from it. report_html.c uses report_view.c only:
 * no renderer calls another.
 */
#ifndef TC_REPORT_SHARED_H
#define TC_REPORT_SHARED_H

#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_profile.h"
#include "tc_writer.h"

/* Per method of the trace, where its rendered text lies in report_w.names: offset + 1 (0: not
 * rendered yet), the length of its first part and of the whole (a text name: without and with
 * its source file; a CSV field: the same). */
typedef struct kept_names {
    size_t *at;
    uint32_t *len, *whole_len;
} kept_names;

typedef struct report_w {
    bool cpu;               /* sort and percentages by thread CPU time */
    bool has_wall, has_cpu; /* which clocks the input has: the other's columns show "-" (CSV: empty) */
    const char *count;      /* a count profile: what its figures count ("cycles:HG"), held in the wall
                             * columns (no thread-CPU figure: has_cpu false); NULL: time (tc_profile.h) */
    tci_psort_item *items;  /* scratch: the rows or an edge list in order */
    uint32_t cap_items;
    tci_psort_item *list;   /* scratch: one parents or children list */
    uint32_t cap_list;
    uint32_t *index;        /* per row of the profile shown: its report index (1..) */
    uint32_t cap_index;
    /* method names, rendered once (report.c, kept_name): a name is printed in every
     * thread's section and edge list, and escaping it each time cost as much as the rest of
     * its row. Grows with the methods, never with events. */
    char *names;            /* the rendered names, one after another */
    size_t n_names, cap_names;
    struct tci_sink *name_sink; /* renders a name into names */
    kept_names text_names;  /* the text report's: the name, and the name with its "  [file:line]" */
    kept_names csv_names;   /* the CSV rows' method fields */
    uint8_t *callers;       /* the option callers' methods (tci_callers_marks; NULL: not given) */
} report_w;

/* What a renderer shows of one profile: its rows in report order. */
typedef struct rview {
    const tci_profile *p;
    const tci_psort_item *rows; /* p->n_methods, in report order */
    const uint32_t *index;      /* per row: 1.. in report order; (toplevel) is 0 */
} rview;

enum { TCI_REPORT_PARENTS, TCI_REPORT_CHILDREN };

/* The rows of p in report order (w's sort option); the view lives in w's scratch until the next call. */
int tci_report_view(tci_wctx *w, const tci_profile *p, rview *v);
/* The part of an edge a list shows: outer (the normal list) or the nested rest. */
tci_pcost tci_report_edge_part(const tci_pedge *e, int side, bool nested);
/* One parents or children list (edges at[0..n) of p), the part it shows, in order (time desc, then
 * name), in w's scratch list: *count items, .tag the edge, .row the other method. */
int tci_report_list(tci_wctx *w, const tci_profile *p, const uint32_t *at, uint32_t n, int side, bool nested,
                    uint32_t *count);
/* A row's calls, normal + recursive (saturated); 0 for (toplevel). */
uint64_t tci_report_total_calls(const tci_profile *p, uint32_t row);
/* "wall and thread CPU", ...: which clocks the report shows. */
const char *tci_report_clock_text(const report_w *r);
/* "inclusive", "exclusive", "calls", "name". */
const char *tci_report_sort_text(uint8_t sort);
/* "1 exit-without-enter, 1 open-at-end": the diagnostics' figures of one kind, or "none" (tci_figures_text). */
void tci_report_figures(tci_sink *o, const tci_diag *d, int kind);
/* The profile's sums that were capped: a warning (once per profile). */
void tci_report_saturation_note(tci_wctx *w, const tci_profile *p);
/* Whether thread t of the tree has calls (a section of its own). */
/* The k-th thread of the report's sections, its picker and its graphs: the views' order (main
 * first, then by time outside idle waits: tci_wctx.thread_order), else the tables'. */
static inline uint32_t tci_report_thread_at(const tci_wctx *w, const tci_calltree *ct, uint32_t k)
{
    return w->thread_order && ct->n_roots == w->trace->n_threads ? w->thread_order[k] : k;
}

static inline bool tci_report_thread_has_calls(const tci_calltree *ct, uint32_t t)
{
    return ct->spans[t].first_ts != TCI_NO_TIME;
}

/* The lines of a derived tree (bottom-up, callers) under root, depth-first, each level's
 * children by time (cpu: thread CPU, else wall) then name, those under min_time left out:
 * line(user, node, depth) for each (an error stops the walk and is returned). */
int tci_report_tree_lines(const tci_profile *p, const tci_calltree *tree, uint32_t root, bool cpu, int64_t min_time,
                          int (*line)(void *user, uint32_t node, uint32_t depth), void *user);
/* The profile's methods as the report names them (one row per full name): canon for the
 * derived trees (tci_calltree_reverse, tci_calltree_callers), so that a tree has one line
 * per method as the report names it; NULL: no memory. */
uint32_t *tci_report_row_methods(const tci_profile *p);
/* ct's bottom-up tree, or with r->callers its callers tree (per thread) into rev, and all
 * its threads summed into merged. */
int tci_report_derived_trees(tci_wctx *w, const tci_profile *p, const tci_calltree *ct, tci_calltree *rev,
                             tci_calltree *merged);

/* The report's option rows (report_view.c; tci_writer_report's, in report.c, points to them). */
extern const tci_option_def tci_report_options[];

/* ---- report_view.c: above; report_html.c: the HTML report, from report's finish ---- */
int tci_report_html(tci_wctx *w, const tci_calltree *ct);

#endif
