/*
 * flamesvg.c - the interactive flame graph SVG engine
 * (shared/docs/outputs/FLAMEGRAPH-SVG.md): a tree of frames drawn exactly as
 * flamegraph.pl draws the folded lines of that tree, with traceconv's own
 * script for zoom, search and details. Used by the flamegraph writer; made to
 * be reused (an HTML report embeds graphs, a diff draws a differential one).
 *
 * Layout. flamegraph.pl sorts the folded lines as strings, then merges
 * adjacent lines that share a prefix. Under one parent, a child X brings two
 * kinds of lines: its own line "X <count>" (self time, key X + ' ') and the
 * lines of its descendants (key X + ';'). Every other sibling's lines compare
 * the same way with all of X's descendant lines, so each child is two sort
 * items at most, S(X) and D(X), sorted with their keys (S before D, and a
 * sibling whose name extends X with a character between ' ' and ';' - "run2"
 * beside "run" - lands between them). Adjacent S(X), D(X) are one frame with
 * its self time on the left; separated, X is drawn twice, as flamegraph.pl
 * does. Frames are written in depth-first pre-order (deterministic, unlike
 * Perl's hash order), and a frame narrower than minwidth is pruned with its
 * subtree before anything is written, so the SVG stays small on big trees.
 *
 * Text. Every name goes into XML by escape.h's markup rule (& < > " '
 * escaped; invalid UTF-8, one U+FFFD per maximal invalid subsequence as
 * Python and browsers decode; control characters and noncharacters, not XML
 * characters or not allowed in HTML, as U+FFFD too); the title (--title, a
 * user's string), subtitle and count name as well. Names never enter the
 * script or the style: the script reads them from the <title> text nodes;
 * ids are the checked prefix.
 *
 * Colours. Upstream's deterministic default: v = drand48 seeded with the sum
 * of the name's code points, as Perl's srand/rand; --hash: upstream's
 * namehash. The java palette classifies a name as flamegraph.pl would the
 * slash form of its class: "com.example.Foo.run" is green like
 * "com/example/Foo.run" (upstream's rule sees only slashes and would paint
 * every dotted Java name red). The android palette (the writer's default)
 * paints a frame by its name's code group (tci_flame_set_group; the rules
 * are codegroup.c's), a hue family each, and draws a legend in a band of
 * its own between the frames and the details line, so frames keep
 * flamegraph.pl's coordinates upright and inverted.
 *
 * Controls. flamegraph.pl's are faint words ("Search" at 10 % opacity, "ic");
 * ours are drawn as controls one sees: a search field (a box that says
 * "Search (/ or Ctrl-F)"; the script puts a text input into it, an XHTML
 * <input> in a <foreignObject> it creates, so the file itself holds only SVG
 * and a viewer without script shows a plain box; without foreignObject the
 * box asks with prompt() as flamegraph.pl does), a clear button in it while a
 * search is shown, an "Aa" toggle for ignoring case, and a "Reset zoom"
 * button while zoomed; each a box with a border, dark text on white.
 *
 * The root frame is labelled with what the graph is (root_name: "all 6
 * threads", "thread main-1234") and its total, kept when a zoom redraws the
 * labels (data-label); its tooltip stays flamegraph.pl's "all (N us, 100%)".
 *
 * Script. One function, tcFlame(svg), binds one graph: every element is
 * looked up inside that <svg> with its id prefix, listeners sit on the <svg>
 * (keys on the window: "/", Ctrl-F, F3 search, Ctrl-I case and Escape (reset
 * the zoom) only while the pointer is over an embedded graph, and never while
 * a field of the page has the keys), so two graphs live on one page. A
 * standalone document and an EMBED element carry the script inside the
 * <svg> (CDATA, which XML and HTML's foreign content both read) as its last
 * child, calling tcFlame on its own <svg>; EMBED_NOSCRIPT leaves it out for a
 * page that runs tci_flame_script() once in a page-level script (a CSP nonce),
 * which binds every svg[data-tc-flame].
 */
#include "tc_base.h"
#include "tc_codegroup.h"
#include "tc_flame.h"
#include "tc_options.h"
#include "tc_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- geometry of flamegraph.pl (upstream 41fee1f) ------------------------------ */

enum {
    XPAD = 10,
    FONTSIZE = 12,
    FRAMEHEIGHT = 16,
    FRAMEPAD = 1,
    YPAD1 = FONTSIZE * 3,      /* top, the title */
    YPAD2 = FONTSIZE * 2 + 10, /* bottom, the details line */
    YPAD3 = FONTSIZE * 2,      /* the subtitle */
    DEFAULT_WIDTH = 1200,
    /* the controls' row, in the top pad: boxes CTL_H high from CTL_Y */
    CTL_Y = 8, CTL_H = 20, CTL_UNZOOM_W = 86, CTL_IC_W = 28, CTL_GAP = 4,
    CTL_SEARCH_MIN = 64, CTL_SEARCH_MAX = 230
};
#define FONTWIDTH 0.59

/* ---- the tree ---------------------------------------------------------------------- */

typedef struct fframe {
    uint32_t parent, name;
    uint32_t first_child, next_sibling; /* creation order, reversed: the sort decides the order */
    uint32_t items, n_items;            /* its children's sort items in f->items (once sorted) */
    bool sorted;
    bool indexed; /* its children are in f->child_ids (made on the first lookup under it) */
    bool line;   /* a folded line ends here: a self count (or, differential, a count before) */
    bool below;  /* a line ends somewhere below */
    int64_t self, before, total;        /* total: inclusive, from the self counts */
} fframe;

struct tci_flame {
    tci_arena arena;
    bool differential;
    fframe *frames;
    uint32_t n_frames, cap_frames;
    tci_idmap child_ids;   /* (parent << 32 | name) -> frame, for the parents looked up under */
    const char **names;    /* bytes as given (NUL-terminated copies) */
    uint32_t *name_len;
    uint8_t *name_group;   /* the android palette's enum tci_code_group (0: neutral) */
    uint32_t n_names, cap_names;
    tci_idmap name_ids;    /* hash of the bytes -> name */
    uint32_t *items;       /* sort items: child << 1 | 1 for D (descendants), | 0 for S (own line) */
    uint32_t n_items, cap_items;
    uint32_t *scratch;     /* merge sort */
    uint32_t cap_scratch;
    bool root_in_order;    /* the root's children in the order they were made (tci_flame_keep_root_order) */
};

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

tci_flame *tci_flame_new(bool differential)
{
    tci_flame *f = tci_calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->differential = differential;
    if (tci_grow((void **)&f->frames, &f->cap_frames, 0, sizeof *f->frames) != 0) {
        free(f);
        return NULL;
    }
    f->frames[0] = (fframe){.parent = TCI_NONE, .name = TCI_NONE, .first_child = TCI_NONE, .next_sibling = TCI_NONE};
    f->n_frames = 1;
    return f;
}

void tci_flame_free(tci_flame *f)
{
    if (!f)
        return;
    free(f->frames);
    free(f->names);
    free(f->name_len);
    free(f->name_group);
    free(f->items);
    free(f->scratch);
    tci_idmap_free(&f->child_ids);
    tci_idmap_free(&f->name_ids);
    tci_arena_free(&f->arena);
    free(f);
}


uint32_t tci_flame_name(tci_flame *f, const char *name, size_t len)
{
    if (len > UINT32_MAX)
        len = UINT32_MAX;
    for (uint64_t seed = 0;; seed++) { /* a collision of two texts: try the next hash */
        uint64_t h = tci_text_hash(name, len, seed);
        uint32_t j = tci_idmap_get(&f->name_ids, h);
        if (j == TCI_NONE) {
            if (f->n_names == UINT32_MAX - 1 ||
                tci_grow((void **)&f->names, &f->cap_names, f->n_names, sizeof *f->names) != 0)
                return TCI_NONE;
            uint32_t *lens = tci_realloc_array(f->name_len, f->cap_names, sizeof *lens);
            if (!lens)
                return TCI_NONE;
            f->name_len = lens;
            uint8_t *groups = tci_realloc_array(f->name_group, f->cap_names, sizeof *groups);
            if (!groups)
                return TCI_NONE;
            f->name_group = groups;
            char *copy = tci_arena_strndup(&f->arena, name, len);
            if (!copy || tci_idmap_put(&f->name_ids, h, f->n_names) != 0)
                return TCI_NONE;
            f->names[f->n_names] = copy;
            f->name_len[f->n_names] = (uint32_t)len;
            f->name_group[f->n_names] = TCI_CODE_OTHER;
            return f->n_names++;
        }
        if (f->name_len[j] == len && !memcmp(f->names[j], name, len))
            return j;
    }
}

void tci_flame_set_group(tci_flame *f, uint32_t name, unsigned group)
{
    if (name < f->n_names && group < TCI_CODE__COUNT)
        f->name_group[name] = (uint8_t)group;
}

/* A new last frame under parent (indexed if parent is). */
static uint32_t append_child(tci_flame *f, uint32_t parent, uint32_t name)
{
    if (f->n_frames >= 1u << 31 || /* a sort item is frame << 1 | kind */
        tci_grow((void **)&f->frames, &f->cap_frames, f->n_frames, sizeof *f->frames) != 0)
        return TCI_NONE;
    if (f->frames[parent].indexed && tci_idmap_put(&f->child_ids, (uint64_t)parent << 32 | name, f->n_frames) != 0)
        return TCI_NONE;
    uint32_t c = f->n_frames++;
    f->frames[c] = (fframe){.parent = parent, .name = name, .first_child = TCI_NONE,
                            .next_sibling = f->frames[parent].first_child};
    f->frames[parent].first_child = c;
    return c;
}

/* Puts parent's children into the index, once: a tree built only by
 * tci_flame_new_child (a flame graph's threads) never pays for an index. */
static int index_children(tci_flame *f, uint32_t parent)
{
    if (f->frames[parent].indexed)
        return 0;
    for (uint32_t c = f->frames[parent].first_child; c != TCI_NONE; c = f->frames[c].next_sibling)
        if (tci_idmap_put(&f->child_ids, (uint64_t)parent << 32 | f->frames[c].name, c) != 0)
            return -1;
    f->frames[parent].indexed = true;
    return 0;
}

uint32_t tci_flame_child(tci_flame *f, uint32_t parent, uint32_t name)
{
    if (parent >= f->n_frames || name >= f->n_names || index_children(f, parent) != 0)
        return TCI_NONE;
    uint32_t c = tci_idmap_get(&f->child_ids, (uint64_t)parent << 32 | name);
    return c != TCI_NONE ? c : append_child(f, parent, name);
}

uint32_t tci_flame_new_child(tci_flame *f, uint32_t parent, uint32_t name)
{
    if (parent >= f->n_frames || name >= f->n_names)
        return TCI_NONE;
    return append_child(f, parent, name);
}

void tci_flame_keep_root_order(tci_flame *f) { f->root_in_order = true; }

bool tci_flame_has_children(const tci_flame *f, uint32_t frame)
{
    return frame < f->n_frames && f->frames[frame].first_child != TCI_NONE;
}

void tci_flame_add(tci_flame *f, uint32_t frame, int64_t self, int64_t before)
{
    if (frame == TCI_FLAME_ROOT || frame >= f->n_frames) /* the root has no line of its own */
        return;
    fframe *fr = &f->frames[frame];
    if (self > 0)
        fr->self = sat_add(fr->self, self);
    if (f->differential && before > 0)
        fr->before = sat_add(fr->before, before);
}

/* Inclusive totals and which frames have lines: children come after their parents. */
static void sum_totals(tci_flame *f)
{
    for (uint32_t i = 0; i < f->n_frames; i++) {
        fframe *fr = &f->frames[i];
        fr->total = i == TCI_FLAME_ROOT ? 0 : fr->self;
        fr->line = i != TCI_FLAME_ROOT && (fr->self > 0 || (f->differential && fr->before > 0));
        fr->below = false;
        fr->sorted = false;
    }
    for (uint32_t i = f->n_frames; i-- > 1;) {
        fframe *fr = &f->frames[i], *p = &f->frames[fr->parent];
        p->total = sat_add(p->total, fr->total);
        if (fr->line || fr->below)
            p->below = true;
    }
    f->n_items = 0;
}

/* ---- sibling order: flamegraph.pl's sort of the folded lines ----------------------- */

/* Byte i of item's sort key: the name, then ' ' and the count (S) or ';' (D); -1 past the end. */
static int key_at(const tci_flame *f, uint32_t item, size_t i, const char *digits)
{
    const fframe *fr = &f->frames[item >> 1];
    size_t n = f->name_len[fr->name];
    if (i < n)
        return (uint8_t)f->names[fr->name][i];
    if (i == n)
        return item & 1 ? ';' : ' ';
    if (item & 1)
        return -1;
    i -= n + 1;
    return i < strlen(digits) ? (uint8_t)digits[i] : -1;
}

static void sort_digits(const tci_flame *f, uint32_t item, char *buf, size_t len)
{
    const fframe *fr = &f->frames[item >> 1];
    snprintf(buf, len, "%lld", (long long)(f->differential ? fr->before : fr->self));
}

static int item_cmp(const tci_flame *f, uint32_t a, uint32_t b)
{
    const fframe *fa = &f->frames[a >> 1], *fb = &f->frames[b >> 1];
    if (f->root_in_order && fa->parent == TCI_FLAME_ROOT && fb->parent == TCI_FLAME_ROOT) /* made in the views' order */
        return a >> 1 != b >> 1 ? (a >> 1 < b >> 1 ? -1 : 1) : (int)(a & 1) - (int)(b & 1);
    size_t na = f->name_len[fa->name], nb = f->name_len[fb->name], n = na < nb ? na : nb;
    int c = memcmp(f->names[fa->name], f->names[fb->name], n);
    if (c)
        return c;
    if (na == nb && a >> 1 == b >> 1) /* the same child: its own line sorts before its descendants' */
        return (int)(a & 1) - (int)(b & 1);
    char da[24] = "", db[24] = "";
    if (!(a & 1))
        sort_digits(f, a, da, sizeof da);
    if (!(b & 1))
        sort_digits(f, b, db, sizeof db);
    for (size_t i = n;; i++) {
        int x = key_at(f, a, i, da), y = key_at(f, b, i, db);
        if (x != y)
            return x - y;
        if (x < 0)
            return 0;
    }
}

/* A stable merge sort with the tree as context (qsort has none, and no global state is allowed). */
static void merge_sort(const tci_flame *f, uint32_t *a, uint32_t *tmp, uint32_t n)
{
    for (uint32_t run = 1; run < n; run *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * run) {
            uint32_t mid = lo + run < n ? lo + run : n, hi = lo + 2 * run < n ? lo + 2 * run : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = item_cmp(f, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
}

/* The sort items of frame's children, sorted once. */
static int sort_children(tci_flame *f, uint32_t frame)
{
    fframe *fr = &f->frames[frame];
    if (fr->sorted)
        return TC_OK;
    uint32_t start = f->n_items;
    for (uint32_t c = fr->first_child; c != TCI_NONE; c = f->frames[c].next_sibling) {
        for (uint32_t d = 0; d < 2; d++) {
            if (!(d ? f->frames[c].below : f->frames[c].line))
                continue;
            if (f->n_items == UINT32_MAX || tci_grow((void **)&f->items, &f->cap_items, f->n_items, sizeof *f->items))
                return TC_ERR_NOMEM;
            f->items[f->n_items++] = c << 1 | d;
        }
    }
    uint32_t n = f->n_items - start;
    if (n > 1) {
        if (tci_grow((void **)&f->scratch, &f->cap_scratch, n, sizeof *f->scratch) != 0)
            return TC_ERR_NOMEM;
        merge_sort(f, f->items + start, f->scratch, n);
    }
    fr = &f->frames[frame];
    fr->items = start;
    fr->n_items = n;
    fr->sorted = true;
    return TC_OK;
}

/* ---- walking the drawn frames --------------------------------------------------------- */

/* One drawn frame: a part (or all) of a tree frame. */
typedef struct drawn {
    uint32_t frame;
    uint32_t depth;
    int64_t start, width; /* in counts */
    int64_t delta;        /* differential: the change of the own line drawn here, else 0 */
    bool has_line;        /* the frame's own line is part of it */
} drawn;

/* Text as code points (names are decoded once per drawn frame). */
typedef struct cpbuf {
    uint32_t *cp;
    size_t n, cap;
} cpbuf;

typedef struct walk_level {
    uint32_t frame, next_item, depth;
    int64_t pos;
} walk_level;

typedef struct render {
    tci_flame *f;
    const tci_flame_opts *o;
    tci_sink *out;
    int64_t timemax;
    double wpt, minwidth_time;
    uint32_t depthmax;
    uint32_t width, height;
    uint32_t legend_h;       /* the android palette's legend band above the details line (0: none) */
    int64_t maxdelta;
    const char *pfx;         /* id prefix with its '-' ("" for a document) */
    walk_level *stack;
    uint32_t cap_stack;
    cpbuf name;              /* scratch: a frame's name as code points */
    cpbuf misc;              /* scratch: titles, the count name */
} render;

typedef int (*drawn_fn)(render *r, const drawn *d);

static bool pruned(const render *r, int64_t width) { return (double)width < r->minwidth_time; }

/* Every drawn frame in pre-order: the root, then each level's items left to right. */
static int walk(render *r, drawn_fn fn)
{
    tci_flame *f = r->f;
    drawn root = {TCI_FLAME_ROOT, 0, 0, r->timemax, 0, false};
    if (pruned(r, root.width))
        return TC_OK;
    int rc = fn(r, &root);
    if (rc != TC_OK || (rc = sort_children(f, TCI_FLAME_ROOT)) != TC_OK)
        return rc;
    uint32_t sp = 0;
    if (tci_grow((void **)&r->stack, &r->cap_stack, sp, sizeof *r->stack) != 0)
        return TC_ERR_NOMEM;
    r->stack[sp++] = (walk_level){TCI_FLAME_ROOT, 0, 0, 0};
    while (sp && !tci_sink_failed(r->out)) {
        walk_level *lv = &r->stack[sp - 1];
        const fframe *parent = &f->frames[lv->frame];
        if (lv->next_item == parent->n_items) {
            sp--;
            continue;
        }
        uint32_t item = f->items[parent->items + lv->next_item++], c = item >> 1;
        const fframe *fr = &f->frames[c];
        drawn d = {c, lv->depth + 1, lv->pos, 0, 0, false};
        int64_t children_at = -1;
        if (!(item & 1)) { /* its own line, joined by its descendants when they follow at once */
            d.has_line = true;
            d.delta = f->differential ? fr->self - fr->before : 0;
            d.width = fr->self;
            if (lv->next_item < parent->n_items && f->items[parent->items + lv->next_item] == (c << 1 | 1)) {
                lv->next_item++;
                d.width = fr->total;
                children_at = lv->pos + fr->self;
            }
        } else {
            d.width = fr->total - fr->self;
            children_at = lv->pos;
        }
        lv->pos = sat_add(lv->pos, d.width);
        if (pruned(r, d.width))
            continue; /* its children are no wider */
        if ((rc = fn(r, &d)) != TC_OK)
            return rc;
        if (children_at < 0)
            continue;
        if ((rc = sort_children(f, c)) != TC_OK)
            return rc;
        if (tci_grow((void **)&r->stack, &r->cap_stack, sp, sizeof *r->stack) != 0)
            return TC_ERR_NOMEM;
        r->stack[sp++] = (walk_level){c, 0, d.depth, children_at};
    }
    return TC_OK;
}

static int measure(render *r, const drawn *d)
{
    if (d->depth > r->depthmax)
        r->depthmax = d->depth;
    return TC_OK;
}

/* flamegraph.pl scales colours by the largest change of any input line, also of
 * lines too narrow to be drawn (a stack gone in the second profile has no width). */
static int64_t max_delta(const tci_flame *f)
{
    int64_t max = 1;
    for (uint32_t i = 1; f->differential && i < f->n_frames; i++) {
        const fframe *fr = &f->frames[i];
        int64_t m = fr->self - fr->before;
        m = m < 0 ? -m : m;
        if (fr->line && m > max)
            max = m;
    }
    return max;
}

/* ---- text --------------------------------------------------------------------------------- */

static int cp_push(cpbuf *b, uint32_t cp)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        uint32_t *p = tci_realloc_array(b->cp, cap, sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        b->cp = p;
        b->cap = cap;
    }
    b->cp[b->n++] = cp;
    return TC_OK;
}

/* A name made safe, as code points: invalid UTF-8 (one U+FFFD per maximal invalid
 * subpart), control characters (C0, DEL, C1) and the noncharacters (U+FDD0..U+FDEF,
 * U+xFFFE/U+xFFFF) become U+FFFD: XML does not allow or discourages them and HTML, which
 * embeds the graph in a report, does not allow them (escape.h's markup rule, TCI_ESC_REPLACE). */
static int decode_name(const char *s, size_t n, cpbuf *b)
{
    b->n = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += tci_utf8_next((const uint8_t *)s + i, n - i, &cp);
        if (cp == TCI_UTF8_INVALID || tci_esc_unsafe(cp))
            cp = 0xFFFD;
        if (cp_push(b, cp) != TC_OK)
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

/* Code points [0, n) of cp as escaped XML text (escape.h's markup rule). */
static void put_xml(tci_sink *o, const uint32_t *cp, size_t n) { tci_put_markup_cp(o, cp, n); }

/* A C string (title, subtitle, count name) as escaped XML text. */
static int put_xml_str(tci_sink *o, const char *s, cpbuf *b)
{
    if (decode_name(s, strlen(s), b) != TC_OK)
        return TC_ERR_NOMEM;
    put_xml(o, b->cp, b->n);
    return TC_OK;
}

/* flamegraph.pl strips a trailing annotation _[k] _[w] _[i] _[j] from labels and tooltips. */
static size_t without_annotation(const uint32_t *cp, size_t n)
{
    if (n >= 4 && cp[n - 4] == '_' && cp[n - 3] == '[' && cp[n - 1] == ']' &&
        (cp[n - 2] == 'k' || cp[n - 2] == 'w' || cp[n - 2] == 'i' || cp[n - 2] == 'j'))
        return n - 4;
    return n;
}

/* "1,234,567" into out (at least 40 bytes, not terminated): Perl's sprintf "%.0f" with
 * perlfaq5's commas. Its length. */
static size_t group_digits(char *out, int64_t v)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%lld", (long long)v);
    int neg = digits[0] == '-';
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        out[k++] = digits[i];
        int left = n - 1 - i;
        if (i >= neg && left > 0 && left % 3 == 0)
            out[k++] = ',';
    }
    return k;
}

static void put_count(tci_sink *o, int64_t v)
{
    char out[40];
    tci_sink_write(o, out, group_digits(out, v));
}

/* ---- colours (FLAMEGRAPH-SVG.md §6) ------------------------------------------------------ */

/* Perl >= 5.20's rand(1) right after srand(seed): its own drand48. */
static double perl_rand_after_srand(uint32_t seed)
{
    uint64_t x = ((uint64_t)seed << 16) + 0x330E;
    x = (0x5DEECE66Dull * x + 0xB) & ((1ull << 48) - 1);
    return ldexp((double)x, -48);
}

/* upstream's namehash: the first three characters after a "module`" prefix, weighted. */
static double namehash(const uint32_t *cp, size_t n, bool reversed)
{
    size_t i = 0;
    /* s/.(.*?)`//: the first backtick after the first character ends a module prefix */
    for (size_t k = 1; k < n; k++) {
        uint32_t c = reversed ? cp[n - 1 - k] : cp[k];
        if (c == '`') {
            i = k + 1;
            break;
        }
    }
    double vector = 0, weight = 1, max = 1;
    for (unsigned mod = 10; i < n && mod <= 12; i++, mod++) {
        uint32_t c = reversed ? cp[n - 1 - i] : cp[i];
        vector += (double)(c % mod) / (mod - 1) * weight;
        max += weight;
        weight *= 0.70;
    }
    return 1 - vector / max;
}

static bool ends_with(const uint32_t *cp, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n < k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (cp[n - k + i] != (uint8_t)lit[i])
            return false;
    return true;
}

static bool contains(const uint32_t *cp, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    for (size_t i = 0; i + k <= n; i++) {
        size_t j = 0;
        while (j < k && cp[i + j] == (uint8_t)lit[j])
            j++;
        if (j == k)
            return true;
    }
    return false;
}

/* ^L?(java|javax|jdk|net|org|com|io|sun)/ on the slash form of the class: '.' or '/' ends the package. */
static bool java_package(const uint32_t *cp, size_t n)
{
    static const char *const roots[] = {"java", "javax", "jdk", "net", "org", "com", "io", "sun"};
    size_t at = n && cp[0] == 'L' ? 1 : 0;
    for (int pass = 0; pass < 2; pass++, at = 0) {
        for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
            size_t k = strlen(roots[r]), j = 0;
            while (j < k && at + j < n && cp[at + j] == (uint8_t)roots[r][j])
                j++;
            if (j == k && at + k < n && (cp[at + k] == '/' || cp[at + k] == '.'))
                return true;
        }
        if (!at)
            break;
    }
    return false;
}

/* The java palette's choice among the flat palettes (first match wins). */
static enum tci_flame_palette java_class(const uint32_t *cp, size_t n)
{
    if (ends_with(cp, n, "_[j]")) return TCI_PAL_GREEN;
    if (ends_with(cp, n, "_[i]")) return TCI_PAL_AQUA;
    if (java_package(cp, n)) return TCI_PAL_GREEN;
    if (contains(cp, n, ":::")) return TCI_PAL_GREEN;
    if (contains(cp, n, "::")) return TCI_PAL_YELLOW;
    if (ends_with(cp, n, "_[k]")) return TCI_PAL_ORANGE;
    return TCI_PAL_RED;
}

static void put_rgb(tci_sink *o, int r, int g, int b) { tci_sink_printf(o, "rgb(%d,%d,%d)", r, g, b); }

/* The android palette (doc/cli.md, Flame graphs): one hue family per code group, shaded by v:
 * the app orange, the framework green, the runtime blue, libraries purple, the rest grey. */
static void put_android(tci_sink *o, unsigned group, double v)
{
    switch (group) {
    case TCI_CODE_APP: put_rgb(o, 220 + (int)(35 * v), 120 + (int)(60 * v), 30 + (int)(20 * v)); break;
    case TCI_CODE_FRAMEWORK: put_rgb(o, 60 + (int)(50 * v), 170 + (int)(60 * v), 70 + (int)(50 * v)); break;
    case TCI_CODE_RUNTIME: put_rgb(o, 80 + (int)(50 * v), 130 + (int)(50 * v), 210 + (int)(45 * v)); break;
    case TCI_CODE_LIBRARY: put_rgb(o, 170 + (int)(50 * v), 110 + (int)(40 * v), 200 + (int)(45 * v)); break;
    default: put_rgb(o, 180 + (int)(40 * v), 180 + (int)(40 * v), 180 + (int)(40 * v)); break;
    }
}

/* group: the frame's code group (the android palette's). */
static void put_color(tci_sink *o, const tci_flame_opts *opt, const uint32_t *cp, size_t n, unsigned group)
{
    if (n == 2 && cp[0] == '-' && cp[1] == '-') {
        put_rgb(o, 160, 160, 160);
        return;
    }
    if (n == 1 && cp[0] == '-') {
        put_rgb(o, 200, 200, 200);
        return;
    }
    double v1, v2, v3;
    if (opt->hash) {
        v1 = namehash(cp, n, false);
        v2 = v3 = namehash(cp, n, true);
    } else {
        uint32_t seed = 0;
        for (size_t i = 0; i < n; i++)
            seed += cp[i];
        v1 = v2 = v3 = perl_rand_after_srand(seed);
    }
    enum tci_flame_palette p = opt->palette == TCI_PAL_JAVA ? java_class(cp, n) : opt->palette;
    switch (p) {
    case TCI_PAL_ANDROID: put_android(o, group, v1); break;
    case TCI_PAL_HOT: put_rgb(o, 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2)); break;
    case TCI_PAL_MEM: put_rgb(o, 0, 190 + (int)(50 * v2), (int)(210 * v1)); break;
    case TCI_PAL_IO: put_rgb(o, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2)); break;
    case TCI_PAL_RED: put_rgb(o, 200 + (int)(55 * v1), 50 + (int)(80 * v1), 50 + (int)(80 * v1)); break;
    case TCI_PAL_GREEN: put_rgb(o, 50 + (int)(60 * v1), 200 + (int)(55 * v1), 50 + (int)(60 * v1)); break;
    case TCI_PAL_BLUE: put_rgb(o, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 205 + (int)(50 * v1)); break;
    case TCI_PAL_YELLOW: put_rgb(o, 175 + (int)(55 * v1), 175 + (int)(55 * v1), 50 + (int)(20 * v1)); break;
    case TCI_PAL_PURPLE: put_rgb(o, 190 + (int)(65 * v1), 80 + (int)(60 * v1), 190 + (int)(65 * v1)); break;
    case TCI_PAL_AQUA: put_rgb(o, 50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1)); break;
    case TCI_PAL_ORANGE: put_rgb(o, 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0); break;
    case TCI_PAL_JAVA: break; /* resolved above */
    }
}

/* Differential (§7): red where the own count grew, blue where it shrank, white when equal. */
static void put_delta_color(tci_sink *o, int64_t delta, int64_t maxdelta, bool negate)
{
    double v = (double)(negate ? -delta : delta), max = (double)maxdelta;
    int r = 255, g = 255, b = 255;
    if (v > 0)
        g = b = (int)(210 * (max - v) / max);
    else if (v < 0)
        r = g = (int)(210 * (max + v) / max);
    put_rgb(o, r, g, b);
}

static const char *const palette_names[] = {"hot", "java", "mem", "io", "red", "green",
                                            "blue", "yellow", "purple", "aqua", "orange", "android"};

int tci_flame_palette(const char *name)
{
    for (size_t i = 0; name && i < sizeof palette_names / sizeof *palette_names; i++)
        if (!strcmp(name, palette_names[i]))
            return (int)i;
    return -1;
}

/* ---- the document ------------------------------------------------------------------------- */

/* The script every graph shares, src/assets/flamegraph.js. It must hold neither "]]>" nor
 * "</script" (checked by a test). */
static const char FLAME_SCRIPT[] = {
#include "flamegraph.js.h"
    0};
/* The same, then src/assets/flamegraph-page.js: run as a page-level script, it binds every
 * graph of the page. */
static const char FLAME_SCRIPT_PAGE[] = {
#include "flamegraph.js.h"
#include "flamegraph-page.js.h"
    0};

const char *tci_flame_script(void) { return FLAME_SCRIPT_PAGE; }

static bool valid_prefix(const char *p);

/* The rules of the graph's <style> element; p: its id prefix with the dash ("" standalone). */
static void put_style_rules(tci_sink *o, const char *p)
{
    /* embedded: every rule scoped to this graph (and as specific as its text rule), so a page's
     * other graphs and text stay as they are */
    char scope[96] = "";
    if (*p)
        snprintf(scope, sizeof scope, "#%.*s ", (int)strlen(p) - 1, p);
    TCI_PUT_LIT(o, "\n");
    tci_sink_printf(o, "\t%stext { font-family:Verdana; font-size:%dpx; fill:rgb(0,0,0); }\n", scope, FONTSIZE);
    /* the controls: boxes with a border, dark text on white (contrast 15:1; the hint 7:1) */
    tci_sink_printf(o, "\t%s.tc-ctl { cursor:pointer; }\n", scope);
    tci_sink_printf(o, "\t%s.tc-ctl rect { fill:rgb(255,255,255); stroke:rgb(118,118,118); stroke-width:1; }\n",
                    scope);
    tci_sink_printf(o, "\t%s.tc-ctl:hover rect, %s.tc-ctl.focus rect, %s.tc-ctl:focus rect { stroke:rgb(11,95,255); "
                       "stroke-width:1.5; }\n", scope, scope, scope);
    tci_sink_printf(o, "\t%s.tc-ctl:focus { outline:none; }\n", scope);
    tci_sink_printf(o, "\t%s.tc-ctl text { fill:rgb(0,0,0); }\n", scope);
    tci_sink_printf(o, "\t%s#%ssearch text.hint { fill:rgb(80,80,80); }\n", scope, p);
    tci_sink_printf(o, "\t%s#%signorecase.show rect { fill:rgb(11,95,255); stroke:rgb(11,95,255); }\n", scope, p);
    tci_sink_printf(o, "\t%s#%signorecase.show text { fill:rgb(255,255,255); }\n", scope, p);
    tci_sink_printf(o, "\t%s#%ssearchfield { box-sizing:border-box; width:100%%; height:100%%; margin:0; border:none; "
                       "outline:none; background:transparent; padding:0 22px 0 6px; font-family:Verdana; "
                       "font-size:%dpx; color:rgb(0,0,0); }\n", scope, p, FONTSIZE);
    tci_sink_printf(o, "\t%s#%ssearchfield::placeholder { color:rgb(80,80,80); opacity:1; }\n", scope, p);
    tci_sink_printf(o, "\t%s#%ssubtitle { text-anchor:middle; fill:rgb(160,160,160); }\n", scope, p);
    tci_sink_printf(o, "\t%s#%stitle { text-anchor:middle; font-size:%dpx; }\n", scope, p, FONTSIZE + 5);
    tci_sink_printf(o, "\t%s#%sframes > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n", scope, p);
    tci_sink_printf(o, "\t%s.hide { display:none; }\n", scope);
    tci_sink_printf(o, "\t%s.parent { opacity:0.5; }\n", scope);
}

int tci_flame_style(const char *id_prefix, tci_sink *out)
{
    char pfx[72];
    if (!valid_prefix(id_prefix))
        return TC_ERR_USAGE;
    snprintf(pfx, sizeof pfx, "%s-", id_prefix);
    put_style_rules(out, pfx);
    return TC_OK;
}

static void put_style(render *r)
{
    TCI_PUT_LIT(r->out, "<style type=\"text/css\">");
    put_style_rules(r->out, r->pfx);
    TCI_PUT_LIT(r->out, "</style>\n");
}

static void put_background(render *r)
{
    const char *c1 = "#eeeeee", *c2 = "#eeeeb0"; /* yellow: hot, java */
    switch (r->o->palette) {
    case TCI_PAL_HOT: case TCI_PAL_JAVA: break;
    case TCI_PAL_IO: c2 = "#e0e0ff"; break;
    case TCI_PAL_MEM: c1 = "#eef2ee"; c2 = "#e0ffe0"; break;
    case TCI_PAL_ANDROID: c1 = "#f8f8f8"; c2 = "#e8e8e8"; break; /* colours that mean something: no tint */
    default: c1 = "#f8f8f8"; c2 = "#e8e8e8"; break; /* the flat palettes */
    }
    if (r->f->differential) {
        c1 = "#f8f8f8";
        c2 = "#e8e8e8";
    }
    tci_sink_printf(r->out,
                    "<defs>\n\t<linearGradient id=\"%sbackground\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
                    "\t\t<stop stop-color=\"%s\" offset=\"5%%\"/>\n\t\t<stop stop-color=\"%s\" offset=\"95%%\"/>\n"
                    "\t</linearGradient>\n</defs>\n", r->pfx, c1, c2);
}

/* ---- the android palette's legend ------------------------------------------------------- */

enum { LEGEND_ROW = 16, LEGEND_SWATCH = 11, LEGEND_GAP = 16, LEGEND_APP_CHARS = 48 };

static bool has_legend(const render *r) { return r->o->palette == TCI_PAL_ANDROID && !r->f->differential; }

static int cp_push_ascii(cpbuf *b, const char *s)
{
    for (; *s; s++)
        if (cp_push(b, (uint8_t)*s) != TC_OK)
            return TC_ERR_NOMEM;
    return TC_OK;
}

/* The legend's words for group g, into b. The app's name its package and how it was chosen;
 * the package is the input's text (a process name), so it is decoded and escaped as a frame's
 * name is, and cut to what fits one row of the width (at most LEGEND_APP_CHARS code points). */
static int legend_words(render *r, unsigned g, cpbuf *b)
{
    const tci_flame_opts *o = r->o;
    b->n = 0;
    if (g != TCI_CODE_APP)
        return cp_push_ascii(b, tci_code_group_label(g));
    if (!o->app_package)
        return cp_push_ascii(b, "app: none found");
    const char *source = o->app_source ? o->app_source : "?";
    cpbuf *pkg = &r->name;
    if (decode_name(o->app_package, strlen(o->app_package), pkg) != TC_OK || cp_push_ascii(b, "app: ") != TC_OK)
        return TC_ERR_NOMEM;
    /* one row: the package first (its evidence keeps at least 12 characters), then the evidence
     * ("MainActivity.onCreate called by Instrumentation.callActivityOnCreate") in what is left */
    double room = (double)(r->width - 2 * XPAD - LEGEND_SWATCH - 4) / (FONTSIZE * FONTWIDTH) - 8;
    size_t src_len = strlen(source), keep = src_len < 12 ? src_len : 12;
    double pkg_room = room - (double)keep;
    size_t fit = pkg_room < 4 ? 4 : pkg_room > LEGEND_APP_CHARS ? LEGEND_APP_CHARS : (size_t)pkg_room;
    size_t n = pkg->n > fit ? fit - 2 : pkg->n;
    for (size_t i = 0; i < n; i++)
        if (cp_push(b, pkg->cp[i]) != TC_OK)
            return TC_ERR_NOMEM;
    double left = room - (double)(n < pkg->n ? n + 2 : n);
    size_t src_fit = left < (double)keep ? keep : (size_t)left;
    bool cut = n < pkg->n;
    /* the evidence names the input's methods: decoded as a frame's name (pkg's buffer is free now) */
    if ((cut && cp_push_ascii(b, "..") != TC_OK) || cp_push_ascii(b, " (") != TC_OK ||
        decode_name(source, src_len, pkg) != TC_OK)
        return TC_ERR_NOMEM;
    size_t shown = pkg->n > src_fit ? src_fit - 2 : pkg->n;
    for (size_t i = 0; i < shown; i++)
        if (cp_push(b, pkg->cp[i]) != TC_OK)
            return TC_ERR_NOMEM;
    if ((shown < pkg->n && cp_push_ascii(b, "..") != TC_OK) || cp_push_ascii(b, ")") != TC_OK)
        return TC_ERR_NOMEM;
    return TC_OK;
}

/* The legend: a swatch and the words of each group, left to right in rows that fit the
 * width, in a band of its own between the frames and the details line (so it covers no
 * frame, upright or inverted). Without draw, only measures: r->legend_h. */
static int legend(render *r, bool draw)
{
    static const unsigned order[] = {TCI_CODE_APP, TCI_CODE_FRAMEWORK, TCI_CODE_RUNTIME, TCI_CODE_LIBRARY,
                                     TCI_CODE_OTHER};
    cpbuf *b = &r->misc;
    double x = XPAD;
    unsigned row = 0, top = r->height - YPAD2 - r->legend_h;
    if (draw)
        tci_sink_printf(r->out, "<g id=\"%slegend\">\n", r->pfx);
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        if (legend_words(r, order[i], b) != TC_OK)
            return TC_ERR_NOMEM;
        double w = LEGEND_SWATCH + 4 + (double)b->n * FONTSIZE * FONTWIDTH;
        if (x > XPAD && x + w > r->width - XPAD) {
            row++;
            x = XPAD;
        }
        if (draw) {
            unsigned y = top + row * LEGEND_ROW;
            tci_sink_printf(r->out, "<rect x=\"%0.1f\" y=\"%u\" width=\"%d\" height=\"%d\" fill=\"", x, y + 3,
                            LEGEND_SWATCH, LEGEND_SWATCH);
            put_android(r->out, order[i], 0.5);
            tci_sink_printf(r->out, "\"/><text x=\"%0.1f\" y=\"%u\">", x + LEGEND_SWATCH + 4, y + 13);
            put_xml(r->out, b->cp, b->n);
            TCI_PUT_LIT(r->out, "</text>\n");
        }
        x += w + LEGEND_GAP;
    }
    if (draw)
        TCI_PUT_LIT(r->out, "</g>\n");
    else
        r->legend_h = (row + 1) * LEGEND_ROW + 4;
    return r->out->err ? TC_ERR_IO : TC_OK;
}

/* A control: a box at x, width wide, in the controls' row, with a text at tx (NULL: none). */
static void put_control(render *r, const char *id, const char *cls, unsigned x, unsigned width, const char *title,
                        double tx, const char *text)
{
    tci_sink *o = r->out;
    tci_sink_printf(o, "<g id=\"%s%s\" class=\"tc-ctl%s%s\" tabindex=\"0\" role=\"button\"><title>%s</title>"
                       "<rect x=\"%u\" y=\"%d\" width=\"%u\" height=\"%d\" rx=\"3\" ry=\"3\"/>",
                    r->pfx, id, cls ? " " : "", cls ? cls : "", title, x, CTL_Y, width, CTL_H);
    if (text)
        tci_sink_printf(o, "<text x=\"%0.1f\" y=\"%d\">%s</text>", tx, CTL_Y + CTL_H - 6, text);
}

/* The controls' row: Reset zoom (shown while zoomed) on the left; on the right the search
 * field (its clear button inside, shown while a search is) and the ignore-case toggle. Fixed
 * texts only: nothing from the input goes here. */
static void put_controls(render *r)
{
    tci_sink *o = r->out;
    unsigned w = r->width, field = (w - 2 * XPAD) / 4;
    field = field < CTL_SEARCH_MIN ? CTL_SEARCH_MIN : field > CTL_SEARCH_MAX ? CTL_SEARCH_MAX : field;
    unsigned ic_x = w - XPAD - CTL_IC_W, field_x = ic_x - CTL_GAP - field;
    put_control(r, "unzoom", "hide", XPAD, CTL_UNZOOM_W, "Reset zoom (Escape)", XPAD + 7, "Reset zoom");
    TCI_PUT_LIT(o, "</g>\n");
    /* the hint as it fits: 7.08 px a character, 28 px of padding and the clear button */
    const char *hint = field >= 20 * FONTSIZE * FONTWIDTH + 28 ? "Search (/ or Ctrl-F)" : "Search";
    put_control(r, "search", NULL, field_x, field, "Search: a regular expression (/ or Ctrl-F)", field_x + 6, NULL);
    tci_sink_printf(o, "<text class=\"hint\" x=\"%u\" y=\"%d\">%s</text>", field_x + 6, CTL_Y + CTL_H - 6, hint);
    TCI_PUT_LIT(o, "</g>\n");
    put_control(r, "searchclear", "hide", field_x + field - 20, 18, "Reset search (Escape)", field_x + field - 15.0,
                "&#215;");
    TCI_PUT_LIT(o, "</g>\n");
    put_control(r, "ignorecase", NULL, ic_x, CTL_IC_W, "Ignore case (Ctrl-I)", ic_x + 5.0, "Aa");
    TCI_PUT_LIT(o, "</g>\n");
}

static int put_head(render *r)
{
    cpbuf *b = &r->misc;
    tci_sink *o = r->out;
    const tci_flame_opts *opt = r->o;
    unsigned w = r->width, h = r->height;
    if (opt->mode == TCI_FLAME_DOCUMENT) {
        TCI_PUT_LIT(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                       "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
                       "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n");
        tci_sink_printf(o, "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
                           "data-tc-flame=\"\" data-inverted=\"%d\" ", w, h, w, h, opt->inverted);
    } else {
        tci_sink_printf(o, "<svg id=\"%.*s\" class=\"tc-flame\" version=\"1.1\" width=\"%u\" height=\"%u\" "
                           "viewBox=\"0 0 %u %u\" data-tc-flame=\"%s\" data-inverted=\"%d\" ",
                        (int)strlen(r->pfx) - 1, r->pfx, w, h, w, h, r->pfx, opt->inverted);
    }
    TCI_PUT_LIT(o, "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
                   "<!-- Flame graph stack visualization, drawn by traceconv as flamegraph.pl does (see "
                   "https://github.com/brendangregg/FlameGraph). -->\n");
    put_background(r);
    put_style(r);
    tci_sink_printf(o, "<rect x=\"0.0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#%sbackground)\"/>\n", w, h,
                    r->pfx);
    const char *title = opt->title ? opt->title : opt->inverted ? "Icicle Graph" : "Flame Graph";
    tci_sink_printf(o, "<text id=\"%stitle\" x=\"%u\" y=\"%d\">", r->pfx, w / 2, FONTSIZE * 2);
    if (put_xml_str(o, title, b) != TC_OK)
        return TC_ERR_NOMEM;
    TCI_PUT_LIT(o, "</text>\n");
    if (opt->subtitle) {
        tci_sink_printf(o, "<text id=\"%ssubtitle\" x=\"%u\" y=\"%d\">", r->pfx, w / 2, FONTSIZE * 4);
        if (put_xml_str(o, opt->subtitle, b) != TC_OK)
            return TC_ERR_NOMEM;
        TCI_PUT_LIT(o, "</text>\n");
    }
    tci_sink_printf(o, "<text id=\"%sdetails\" x=\"%d\" y=\"%u\"> </text>\n", r->pfx, XPAD, h - YPAD2 / 2);
    put_controls(r);
    tci_sink_printf(o, "<text id=\"%smatched\" x=\"%u\" y=\"%u\" class=\"hide\"> </text>\n", r->pfx,
                    w - XPAD - 100, h - YPAD2 / 2);
    if (r->legend_h && legend(r, true) != TC_OK)
        return o->err ? TC_ERR_IO : TC_ERR_NOMEM;
    tci_sink_printf(o, "<g id=\"%sframes\">\n", r->pfx);
    return TC_OK;
}

/* The root's label into b: "all 6 threads (1,234 us)", the writer's name for the whole graph
 * (the engine's own: "all") and its count. */
static int root_label(render *r, int64_t count, cpbuf *b)
{
    char digits[40];
    const char *what = r->o->root_name ? r->o->root_name : "all";
    b->n = 0;
    if (decode_name(what, strlen(what), b) != TC_OK ||
        cp_push_ascii(b, " (") != TC_OK)
        return TC_ERR_NOMEM;
    size_t n = group_digits(digits, count);
    for (size_t i = 0; i < n; i++)
        if (cp_push(b, (uint8_t)digits[i]) != TC_OK)
            return TC_ERR_NOMEM;
    if (cp_push(b, ' ') != TC_OK)
        return TC_ERR_NOMEM;
    cpbuf *name = &r->misc;
    const char *unit = r->o->countname ? r->o->countname : "samples";
    if (decode_name(unit, strlen(unit), name) != TC_OK)
        return TC_ERR_NOMEM;
    for (size_t i = 0; i < name->n; i++)
        if (cp_push(b, name->cp[i]) != TC_OK)
            return TC_ERR_NOMEM;
    return cp_push(b, ')');
}

/* A number as Perl prints it: integral values without a point ("%.15g"). */
static void put_perl_number(tci_sink *o, double v) { tci_sink_printf(o, "%.15g", v); }

static int put_frame(render *r, const drawn *d)
{
    tci_flame *f = r->f;
    tci_sink *o = r->out;
    const tci_flame_opts *opt = r->o;
    cpbuf *b = &r->name;
    bool root = d->frame == TCI_FLAME_ROOT;
    b->n = 0;
    if (!root) {
        const fframe *fr = &f->frames[d->frame];
        if (decode_name(f->names[fr->name], f->name_len[fr->name], b) != TC_OK)
            return TC_ERR_NOMEM;
    }
    size_t shown = without_annotation(b->cp, b->n); /* the name without its _[k]-style annotation */
    double x1 = XPAD + (double)d->start * r->wpt, x2 = XPAD + ((double)d->start + (double)d->width) * r->wpt;
    unsigned y1, y2;
    if (!opt->inverted) {
        y1 = r->height - YPAD2 - r->legend_h - (d->depth + 1) * FRAMEHEIGHT + FRAMEPAD;
        y2 = r->height - YPAD2 - r->legend_h - d->depth * FRAMEHEIGHT;
    } else {
        unsigned top = YPAD1 + (opt->subtitle ? YPAD3 : 0);
        y1 = top + d->depth * FRAMEHEIGHT;
        y2 = top + (d->depth + 1) * FRAMEHEIGHT - FRAMEPAD;
    }
    /* tooltip; the frame to open zoomed on (tci_flame_opts.open_first), a tower drawn from the left */
    bool open = opt->open_first && !f->differential && d->depth == 1 && d->start == 0 && d->width * 3 < r->timemax;
    TCI_PUT_LIT(o, "<g");
    if (open)
        TCI_PUT_LIT(o, " data-open=\"\"");
    TCI_PUT_LIT(o, ">\n<title>");
    if (root) {
        TCI_PUT_LIT(o, "all");
    } else {
        put_xml(o, b->cp, shown);
    }
    TCI_PUT_LIT(o, " (");
    put_count(o, d->width);
    tci_sink_putc(o, ' ');
    if (put_xml_str(o, opt->countname ? opt->countname : "samples", &r->misc) != TC_OK)
        return TC_ERR_NOMEM;
    if (root) {
        TCI_PUT_LIT(o, ", 100%)");
    } else {
        tci_sink_printf(o, ", %.2f%%", 100.0 * (double)d->width / (double)r->timemax);
        if (f->differential) {
            int64_t delta = opt->negate ? -d->delta : d->delta;
            tci_sink_printf(o, "; %s%.2f%%", delta > 0 ? "+" : "", 100.0 * (double)delta / (double)r->timemax);
        }
        tci_sink_putc(o, ')');
    }
    TCI_PUT_LIT(o, "</title>");
    /* rectangle, as flamegraph.pl's filledRectangle rounds it */
    char xs1[48], xs2[48];
    snprintf(xs1, sizeof xs1, "%0.1f", x1);
    snprintf(xs2, sizeof xs2, "%0.1f", x2);
    tci_sink_printf(o, "<rect x=\"%s\" y=\"%u\" width=\"%0.1f\" height=\"%0.1f\" fill=\"", xs1, y1,
                    strtod(xs2, NULL) - strtod(xs1, NULL), (double)(y2 - y1));
    if (f->differential)
        put_delta_color(o, root ? 0 : d->delta, r->maxdelta, opt->negate);
    else
        put_color(o, opt, b->cp, b->n, root ? TCI_CODE_OTHER : f->name_group[f->frames[d->frame].name]);
    TCI_PUT_LIT(o, "\" rx=\"2\" ry=\"2\"/>\n");
    /* label: as many characters as fit (7.08 px each), the last two replaced by ".." when cut */
    tci_sink_printf(o, "<text x=\"%0.2f\" y=\"", x1 + 3);
    put_perl_number(o, 3 + (y1 + y2) / 2.0);
    tci_sink_putc(o, '"');
    if (root) { /* what the whole graph is, and its total: kept for the script's redraws */
        if (root_label(r, d->width, b) != TC_OK)
            return TC_ERR_NOMEM;
        shown = b->n;
        TCI_PUT_LIT(o, " data-label=\"");
        put_xml(o, b->cp, b->n);
        tci_sink_putc(o, '"');
    }
    tci_sink_putc(o, '>');
    double chars = floor((x2 - x1) / (FONTSIZE * FONTWIDTH));
    if (chars >= 3) {
        size_t n = chars < (double)shown ? (size_t)chars : shown;
        if (n < shown) {
            put_xml(o, b->cp, n - 2);
            TCI_PUT_LIT(o, "..");
        } else {
            put_xml(o, b->cp, n);
        }
    }
    TCI_PUT_LIT(o, "</text>\n</g>\n");
    return o->err ? TC_ERR_IO : TC_OK;
}

static int put_tail(render *r)
{
    tci_sink *o = r->out;
    TCI_PUT_LIT(o, "</g>\n");
    if (r->o->mode != TCI_FLAME_EMBED_NOSCRIPT) {
        TCI_PUT_LIT(o, "<script type=\"text/ecmascript\"><![CDATA[\n");
        tci_sink_write(o, FLAME_SCRIPT, sizeof FLAME_SCRIPT - 1);
        if (r->o->mode == TCI_FLAME_DOCUMENT)
            TCI_PUT_LIT(o, "tcFlame(document.documentElement, \"\");\n");
        else
            tci_sink_printf(o, "tcFlame(document.getElementById(\"%.*s\"), \"%s\");\n", (int)strlen(r->pfx) - 1,
                            r->pfx, r->pfx);
        TCI_PUT_LIT(o, "]]></script>\n");
    }
    TCI_PUT_LIT(o, "</svg>\n");
    return o->err ? TC_ERR_IO : TC_OK;
}

/* No count at all: an SVG that says so (flamegraph.pl prints an error and exits 2). */
static int put_empty(render *r)
{
    r->height = FONTSIZE * 5;
    int rc = put_head(r);
    if (rc != TC_OK)
        return rc;
    tci_sink_printf(r->out, "</g>\n<text x=\"%u\" y=\"%d\" style=\"text-anchor:middle\">No stack counts found</text>\n",
                    r->width / 2, FONTSIZE * 4);
    TCI_PUT_LIT(r->out, "</svg>\n");
    return r->out->err ? TC_ERR_IO : TC_OK;
}

static bool valid_prefix(const char *p)
{
    if (!p || !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) || strlen(p) > 64)
        return false;
    for (; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-'))
            return false;
    return true;
}

int tci_flame_render(tci_flame *f, const tci_flame_opts *o, tci_sink *out)
{
    render r = {.f = f, .o = o, .out = out, .maxdelta = 1};
    char pfx[72] = "";
    if (o->mode != TCI_FLAME_DOCUMENT) {
        if (!valid_prefix(o->id_prefix))
            return TC_ERR_USAGE;
        snprintf(pfx, sizeof pfx, "%s-", o->id_prefix);
    }
    r.pfx = pfx;
    r.width = o->width ? o->width : DEFAULT_WIDTH;
    if (r.width <= 2 * XPAD + 100)
        return TC_ERR_USAGE;
    sum_totals(f);
    r.timemax = f->frames[TCI_FLAME_ROOT].total;
    if (r.timemax <= 0) {
        int rc = put_empty(&r);
        free(r.misc.cp);
        return rc;
    }
    r.wpt = (double)(r.width - 2 * XPAD) / (double)r.timemax;
    r.minwidth_time = o->minwidth_pct ? (double)r.timemax * o->minwidth / 100 : o->minwidth / r.wpt;
    r.maxdelta = max_delta(f);
    int rc = walk(&r, measure);
    if (rc == TC_OK && has_legend(&r))
        rc = legend(&r, false);
    if (rc == TC_OK) {
        r.height = (r.depthmax + 1) * FRAMEHEIGHT + YPAD1 + YPAD2 + (o->subtitle ? YPAD3 : 0) + r.legend_h;
        rc = put_head(&r);
    }
    if (rc == TC_OK)
        rc = walk(&r, put_frame);
    if (rc == TC_OK)
        rc = put_tail(&r);
    free(r.stack);
    free(r.name.cp);
    free(r.misc.cp);
    return rc;
}

tci_flame_opts tci_flame_document_opts(const tci_options *opt)
{
    return (tci_flame_opts){
        .mode = TCI_FLAME_DOCUMENT,
        .title = opt->title,
        .countname = "us",
        .width = opt->width,
        .minwidth = opt->minwidth_given ? opt->minwidth : 0.1, /* flamegraph.pl's default, px */
        .minwidth_pct = opt->minwidth_given && opt->minwidth_pct,
        .inverted = opt->inverted,
        .palette = opt->colors_given ? (enum tci_flame_palette)opt->palette : TCI_PAL_ANDROID,
        .hash = opt->hash,
    };
}

/* ---- the flame graph's options (the flame graph writer's, the diff's): rows of its own ---- */

/* The palettes by name (tci_flame_palette), the default first: the order --help shows. */
const char *const tci_palette_choices[] = {"android", "java", "hot", "mem", "io", "red", "green", "blue",
                                           "yellow", "purple", "aqua", "orange", NULL};

/* minwidth: px ("0.1") or a percentage of the total ("0.5%"). */
int tci_option_parse_minwidth(tci_options *o, const char *v)
{
    char *end;
    if (!v || !((*v >= '0' && *v <= '9') || *v == '.'))
        return -1;
    errno = 0;
    double x = strtod(v, &end);
    bool pct = *end == '%';
    if (pct)
        end++;
    if (*end || errno || !(x >= 0) || x > (pct ? 100 : 1e9))
        return -1;
    o->minwidth = x;
    o->minwidth_pct = pct;
    o->minwidth_given = true;
    return 0;
}

/* The palette's number for the name (the writer's default is android unless given). */
int tci_option_parse_colors(tci_options *o, const char *v)
{
    int p = tci_flame_palette(v);
    if (p < 0)
        return -1;
    o->palette = p;
    o->colors_given = true;
    return 0;
}
