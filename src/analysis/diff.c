/*
 * diff.c - two inputs compared per method (doc/diff-and-reports.md, "Diff"; the call, tc_diff_write, is
 * engine/diffconv.c's).
 *
 * Each input is read and normalized by its own tc_conv exactly as for a
 * conversion (the engine runs conv.c's pipeline into the capture writer
 * here, which is not registered), so the same repairs, limits and options
 * apply. The capture keeps, per input, the profile of all threads
 * (profile.c: the report's figures) and, for the differential flame graph,
 * the folded writer's stacks of its call tree (folding.c) added into one
 * differential flame tree: counts before from BASE, counts and widths from
 * NEW, as `difffolded.pl BASE.folded NEW.folded | flamegraph.pl` draws.
 *
 * Matching (the key of a row). Inputs of different formats name methods
 * differently: an ART trace has classes and dex signatures, a JSON or
 * systrace capture of the same app has slice names ("pkg.Class.method" or
 * "pkg.Class.method: (I)V"). Rows are keyed by the display name
 * "pkg.Class.method" (a slice's name as it is); a method whose name has
 * overloads is keyed by its full name with the signature instead, but only
 * when every method of that display name has a signature in each input that
 * has it, so that a side without signatures still matches by name (the
 * overloads are then one row on both sides, their figures added). Methods
 * of one input that share a key (two ids of one method, overloads shown as
 * one) are one row, their figures added.
 *
 * Selection: each input takes the conversion's options (thread, window, focus, ignore); a
 * method pattern may name a method of one input only, and is an error (with the closest
 * names of both) only when it names none of either (check_patterns).
 *
 * Memory grows with the methods and call paths of the two inputs, never
 * with their records: the inputs are read one after the other, each into
 * its call tree, which is freed once its profile (and stacks) are taken.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_diff.h"
#include "tc_flame.h"
#include "tc_folding.h"
#include "tc_options.h"
#include "tc_profile.h"
#include "tc_select.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* What the diff reads, whichever its format: the unused-option check takes them all for
 * every format, as a user gives them (a --title with -o text is not an error). */
const tci_option_def tci_diff_options[] = {
    TCI_OPTION_WEIGHT("the clock of the order (and the flame graph's widths)"),
    TCI_OPTION_SORT("order by |change| of inclusive (incl) or exclusive time, of calls, or by name"),
    TCI_OPTION_MERGE_THREADS("flamegraph: one tree for all threads (0: a tower per name-tid)", "1"),
    TCI_OPTIONS_FLAME("Differential Flame Graph"),
    {.key = "negate", .type = TCI_OPT_BOOL, .help = "flamegraph: swap red and blue (flamegraph.pl --negate)",
     TCI_OPT_FIELD(negate)},
    TCI_OPTION_REVERSE("bottom-up: both inputs' stacks read from the leaf before they are compared"),
    {0},
};

/* ---- the capture: one input's profile and stacks -------------------------- */


static int capture_begin(tci_wctx *w)
{
    tci_diff_capture *cp = w->priv;
    const tci_trace *t = w->trace;
    int rc = tci_weight_check(w->diag, t, cp->d->opt->weight_cpu, "diff");
    if (rc != TC_OK || !cp->d->flame)
        return rc;
    rc = tci_foldflame_begin(&cp->ff, t, cp->d->opt->weight_cpu);
    cp->ff.reverse = cp->d->opt->reverse;
    return rc;
}

static int capture_finish(tci_wctx *w, const tci_calltree *ct)
{
    tci_diff_capture *cp = w->priv;
    tci_dside *s = &cp->d->side[cp->side];
    int rc = tci_profile_build(&s->profile, ct, TCI_NONE);
    s->built = true;
    if (rc == TC_OK && s->profile.saturated)
        tci_warn(w->diag, TCI_FIG_SATURATED, "diff", UINT64_MAX,
                 "%llu sums of the profile went beyond %lld ns and were capped there; those figures are lower bounds",
                 (unsigned long long)s->profile.saturated, (long long)TCI_SUM_MAX);
    if (rc == TC_OK && cp->d->flame) /* BASE's counts are the counts before, NEW's the counts (difffolded.pl's columns) */
        rc = tci_foldflame_add(&cp->ff, cp->d->flame, ct, cp->d->merge_threads, cp->side == TCI_DIFF_BASE);
    return rc;
}

static void capture_close(tci_wctx *w)
{
    tci_diff_capture *cp = w->priv;
    tci_foldflame_free(&cp->ff); /* zeroed when not begun; zeroed again after */
}

const tci_writer tci_diff_capture_writer = {
    .name = "diff",
    .description = "the per-method comparison of two inputs (traceconv diff)",
    .extensions = "txt",
    .options = tci_diff_options,
    .flags = TCI_WF_AGGREGATE,
    .begin = capture_begin,
    .finish = capture_finish,
    .close = capture_close,
};

/* ---- matching ------------------------------------------------------------------ */

/* Interned texts: text -> index, by a 64-bit hash (another seed on a collision). */
typedef struct strset {
    tci_idmap ids;
    const char **text;
    uint32_t n, cap;
} strset;


/* The index of text (stored by pointer: it lives in a trace's arena), TCI_NONE: no memory. */
static uint32_t strset_intern(strset *s, const char *text)
{
    for (uint64_t seed = 0;; seed++) {
        uint64_t h = tci_text_hash(text, strlen(text), seed);
        uint32_t i = tci_idmap_get(&s->ids, h);
        if (i == TCI_NONE) {
            if (tci_grow((void **)&s->text, &s->cap, s->n, sizeof *s->text) != 0 || tci_idmap_put(&s->ids, h, s->n) != 0)
                return TCI_NONE;
            s->text[s->n] = text;
            return s->n++;
        }
        if (!strcmp(s->text[i], text))
            return i;
    }
}

static void strset_free(strset *s)
{
    tci_idmap_free(&s->ids);
    free(s->text);
}

/* What follows the display name in the full name (": (I)V"), or "". */
static const char *signature_of(const tci_method *m)
{
    size_t n = strlen(m->short_name);
    return strncmp(m->full_name, m->short_name, n) ? "" : m->full_name + n;
}

/* Per display name: whether its rows are keyed by the full name. */
typedef struct dgroup {
    bool seen[2], unsigned_seen[2]; /* a method without a signature on that side */
    const char *first_sig;          /* overloads: another signature than this one */
    bool overloaded;
} dgroup;

static const tci_method *row_method(const tci_dside *s, uint32_t row)
{
    return &s->trace->methods[s->profile.methods[row].method];
}

static int find_groups(const tci_diff *d, strset *names, dgroup **groups, uint32_t *cap)
{
    uint32_t made = 0; /* groups initialized: a new name's index is this one */
    for (int side = 0; side < 2; side++) {
        const tci_dside *s = &d->side[side];
        for (uint32_t r = 0; r < s->profile.n_methods; r++) {
            const tci_method *m = row_method(s, r);
            uint32_t g = strset_intern(names, m->short_name);
            if (g == TCI_NONE || tci_grow((void **)groups, cap, g, sizeof **groups) != 0)
                return TC_ERR_NOMEM;
            dgroup *gr = &(*groups)[g];
            if (g == made) {
                memset(gr, 0, sizeof *gr);
                made++;
            }
            const char *sig = signature_of(m);
            gr->seen[side] = true;
            if (!sig[0])
                gr->unsigned_seen[side] = true;
            else if (!gr->first_sig)
                gr->first_sig = sig;
            else if (strcmp(gr->first_sig, sig))
                gr->overloaded = true;
        }
    }
    return TC_OK;
}

static bool keyed_by_full_name(const dgroup *g)
{
    return g->overloaded && !g->unsigned_seen[0] && !g->unsigned_seen[1];
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r) && r <= TCI_SUM_MAX && r >= -TCI_SUM_MAX)
        return r;
    return b > 0 ? TCI_SUM_MAX : -TCI_SUM_MAX;
}

static void add_figures(tci_dfig *f, const tci_pmethod *m)
{
    uint64_t calls = m->calls + m->recursive_calls >= m->calls ? m->calls + m->recursive_calls : UINT64_MAX;
    f->calls = f->calls + calls >= f->calls ? f->calls + calls : UINT64_MAX;
    f->incl_wall = sat_add(f->incl_wall, m->incl_wall);
    f->excl_wall = sat_add(f->excl_wall, m->excl_wall);
    f->incl_cpu = sat_add(f->incl_cpu, m->incl_cpu);
    f->excl_cpu = sat_add(f->excl_cpu, m->excl_cpu);
}

static int match_rows(tci_diff *d)
{
    strset names = {0}, keys = {0};
    dgroup *groups = NULL;
    uint32_t cap_groups = 0;
    int rc = find_groups(d, &names, &groups, &cap_groups);
    for (int side = 0; side < 2 && rc == TC_OK; side++) {
        const tci_dside *s = &d->side[side];
        for (uint32_t r = 0; r < s->profile.n_methods; r++) {
            const tci_method *m = row_method(s, r);
            uint32_t g = strset_intern(&names, m->short_name); /* found: never allocates */
            const char *key = keyed_by_full_name(&groups[g]) ? m->full_name : m->short_name;
            uint32_t k = strset_intern(&keys, key);
            if (k == TCI_NONE || tci_grow((void **)&d->rows, &d->cap_rows, k, sizeof *d->rows) != 0) {
                rc = TC_ERR_NOMEM;
                break;
            }
            if (k == d->n_rows)
                d->rows[d->n_rows++] = (tci_drow){.name = key};
            d->rows[k].on[side] = true;
            add_figures(&d->rows[k].fig[side], &s->profile.methods[r]);
        }
    }
    strset_free(&names);
    strset_free(&keys);
    free(groups);
    return rc;
}

/* ---- order ----------------------------------------------------------------------- */

static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

/* The size of one change: |NEW - BASE|, a missing side counting as 0. */
static uint64_t time_change(const tci_diff *d, const tci_drow *r, bool incl)
{
    return magnitude(tci_dfig_time(&r->fig[TCI_DIFF_NEW], incl, d->by_cpu) -
                     tci_dfig_time(&r->fig[TCI_DIFF_BASE], incl, d->by_cpu));
}

typedef struct sort_item {
    uint64_t key, then; /* the sort's change, then the other time's (equal inclusive changes: the
                         * method whose own time changed - the cause - before its callers) */
    const tci_drow *row;
} sort_item;

static sort_item item_of(const tci_diff *d, const tci_drow *r)
{
    const tci_dfig *b = &r->fig[TCI_DIFF_BASE], *n = &r->fig[TCI_DIFF_NEW];
    switch (d->opt->sort) {
    case TCI_SORT_EXCL: return (sort_item){time_change(d, r, false), time_change(d, r, true), r};
    case TCI_SORT_CALLS:
        return (sort_item){n->calls > b->calls ? n->calls - b->calls : b->calls - n->calls, time_change(d, r, true), r};
    case TCI_SORT_NAME: return (sort_item){0, 0, r};
    default: return (sort_item){time_change(d, r, true), time_change(d, r, false), r};
    }
}

/* Largest change first, then the name (byte order): keys are distinct, so a total order. */
static int compare_items(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    if (a->then != b->then)
        return a->then > b->then ? -1 : 1;
    return strcmp(a->row->name, b->row->name);
}

static int order_rows(tci_diff *d)
{
    sort_item *items = tci_calloc(d->n_rows ? d->n_rows : 1, sizeof *items);
    tci_drow *sorted = tci_calloc(d->n_rows ? d->n_rows : 1, sizeof *sorted);
    if (!items || !sorted) {
        free(items);
        free(sorted);
        return TC_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < d->n_rows; i++)
        items[i] = item_of(d, &d->rows[i]);
    qsort(items, d->n_rows, sizeof *items, compare_items);
    for (uint32_t i = 0; i < d->n_rows; i++) {
        sorted[i] = *items[i].row;
        d->n_both += sorted[i].on[0] && sorted[i].on[1];
        d->n_new += !sorted[i].on[0];
        d->n_gone += !sorted[i].on[1];
    }
    free(items);
    free(d->rows);
    d->rows = sorted;
    d->cap_rows = d->n_rows ? d->n_rows : 1;
    return TC_OK;
}

/* ---- the comparison of the two sides read ----------------------------------------- */

/* The clocks compared: those both inputs have; or the counts both count profiles have (counts
 * and time, or counts of two events, are no figures one can subtract). */
static int choose_clocks(tci_diff *d, tci_diag *e)
{
    const tci_trace *b = d->side[0].trace, *n = d->side[1].trace;
    const char *cb = tci_trace_count_name(b), *cn = tci_trace_count_name(n);
    if ((cb || cn) && (!cb || !cn || strcmp(cb, cn)))
        return tci_error(e, TC_ERR_UNSUPPORTED, "diff", UINT64_MAX,
                         "the inputs weigh different things (BASE: %s%s, NEW: %s%s): no change to compute",
                         cb ? cb : "time", cb ? " counts" : "", cn ? cn : "time", cn ? " counts" : "");
    tci_weighs wb = tci_weighs_of(b), wn = tci_weighs_of(n);
    d->count = cb;
    d->wall = wb.wall && wn.wall;
    d->cpu = wb.cpu && wn.cpu;
    d->by_cpu = d->opt->weight_cpu || !d->wall;
    if (!d->wall && !d->cpu)
        return tci_error(e, TC_ERR_UNSUPPORTED, "diff", UINT64_MAX,
                         "the inputs have no clock in common (BASE: clock %s, NEW: clock %s)",
                         tci_clock_name(b->clock), tci_clock_name(n->clock));
    return TC_OK;
}

static int check_patterns(const tci_diff *d, tci_diag *e)
{
    const tci_trace *traces[2] = {d->side[TCI_DIFF_NEW].trace, d->side[TCI_DIFF_BASE].trace};
    const char *lists[2] = {d->opt->focus, d->opt->ignore}, *fields[2] = {"--focus ", "--ignore "};
    for (int k = 0; k < 2; k++) {
        for (const char *at = lists[k]; at && *at;) {
            const char *end = strchr(at, '\n');
            size_t len = end ? (size_t)(end - at) : strlen(at);
            char one[4096];
            snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), at);
            bool found = false;
            for (int t = 0; t < 2 && !found; t++)
                for (uint32_t i = 0; i < traces[t]->n_methods && !found; i++)
                    found = tci_pattern_matches(&traces[t]->methods[i], one);
            if (!found)
                return tci_pattern_unmatched(e, fields[k], at, len, traces, 2);
            at = end ? end + 1 : NULL;
        }
    }
    return TC_OK;
}

int tci_diff_compare(tci_diff *d, tci_diag *e)
{
    int rc = check_patterns(d, e);
    if (rc == TC_OK)
        rc = choose_clocks(d, e);
    if (rc == TC_OK)
        rc = match_rows(d);
    if (rc == TC_OK)
        rc = order_rows(d);
    return rc;
}

void tci_diff_free(tci_diff *d)
{
    for (int s = 0; s < 2; s++)
        if (d->side[s].built)
            tci_profile_free(&d->side[s].profile);
    free(d->rows);
    tci_flame_free(d->flame);
    tci_arena_free(&d->arena);
}
