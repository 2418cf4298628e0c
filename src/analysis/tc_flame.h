/*
 * tc_flame.h - the flame graph SVG renderer (flame graph writer, HTML report, diff flame graph).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_FLAME_H
#define TC_TC_FLAME_H

#include "tc_options.h"
#include "tc_writer.h"
#include "tc_base.h"

/* ---- flame graph SVG (flamesvg.c; shared/docs/outputs/FLAMEGRAPH-SVG.md) ---- */

/*
 * A flame tree (frames with a name and a self count, optionally the count
 * before for a differential graph) drawn as flamegraph.pl draws the folded
 * lines of that tree: same sibling order, geometry, labels, tooltips and
 * colours; frames narrower than minwidth are pruned before anything is
 * written. Memory grows with the frames of the tree, never with its counts.
 */
typedef struct tci_flame tci_flame;
#define TCI_FLAME_ROOT 0u /* the frame "all" */

enum tci_flame_palette {
    TCI_PAL_HOT, TCI_PAL_JAVA, TCI_PAL_MEM, TCI_PAL_IO, TCI_PAL_RED, TCI_PAL_GREEN, TCI_PAL_BLUE,
    TCI_PAL_YELLOW, TCI_PAL_PURPLE, TCI_PAL_AQUA, TCI_PAL_ORANGE,
    TCI_PAL_ANDROID /* whose code: a hue family per tci_code_group (the frames' groups, tci_flame_set_group) */
};
/* The palette called name ("java"), or -1. */
int tci_flame_palette(const char *name);

enum tci_flame_mode {
    TCI_FLAME_DOCUMENT,     /* a standalone .svg file: XML prolog, DOCTYPE, its own script */
    TCI_FLAME_EMBED,        /* an <svg> element for an HTML page, ids prefixed, its own script */
    TCI_FLAME_EMBED_NOSCRIPT /* the same without a script: the page runs tci_flame_script() once
                              * (a page-level script, e.g. with a CSP nonce) */
};

typedef struct tci_flame_opts {
    enum tci_flame_mode mode;
    const char *id_prefix;   /* EMBED*: ids become PREFIX-frames ...; [A-Za-z][A-Za-z0-9_-]* */
    const char *title;       /* NULL: "Flame Graph", or "Icicle Graph" when inverted */
    const char *subtitle;    /* NULL: none */
    const char *countname;   /* NULL: "samples" */
    const char *root_name;   /* the root frame's label, what the whole graph is ("all 6 threads"; its
                              * total is added); NULL: "all". Its tooltip stays "all (N us, 100%)" */
    uint32_t width;          /* 0: 1200 */
    double minwidth;         /* px, or percent of the total with minwidth_pct */
    bool minwidth_pct;
    bool inverted;           /* icicle: root at the top */
    enum tci_flame_palette palette;
    bool hash;               /* colour from a hash of the name instead of the seeded default */
    bool negate;             /* differential: swap red and blue, and the delta's sign */
    /* android palette: the legend's app package and how it was chosen (tc_codegroup.h) */
    const char *app_package; /* NULL: none found */
    const char *app_source;  /* its evidence: "given", "process name", "MainActivity.onCreate called by ..." */
    /* the root's first child is the main thread's tower (the views' order): the script opens
     * the graph zoomed on it when it has less than a third of the root's count, where idle and
     * busy daemons would leave main a sliver (data-open on its frame; Reset zoom shows all) */
    bool open_first;
} tci_flame_opts;

/* ---- the flame graph's options: the rows of the writers that draw one (tc_options.h's form) ---- */

extern const char *const tci_palette_choices[]; /* the palettes' names, the default first */
int tci_option_parse_minwidth(tci_options *o, const char *value); /* PX or N% */
int tci_option_parse_colors(tci_options *o, const char *value);   /* a palette's name */
/* The android palette's app: the flame graph's, and the HTML report's graphs' (its variant's table). */
#define TCI_OPTION_APP_PACKAGE                                                                                 \
    {.key = "app-package", .type = TCI_OPT_STRING, .arg = "PKG",                                               \
     .help = "the app's package for the android palette (default: found from the framework's calls of its "   \
             "lifecycle methods, the process name, else the package with the most time)",                     \
     TCI_OPT_FIELD(app_package)}
#define TCI_OPTIONS_FLAME(title_default)                                                                       \
    {.key = "title", .type = TCI_OPT_STRING, .def = title_default, .arg = "TEXT", .help = "the title",         \
     TCI_OPT_FIELD(title)},                                                                                    \
    {.key = "width", .type = TCI_OPT_INT, .min = 200, .max = 100000, .def = "1200", .arg = "PX",               \
     .help = "image width", .expects = "pixels, 200 to 100000", TCI_OPT_FIELD(width)},                        \
    {.key = "minwidth", .type = TCI_OPT_FLOAT, .def = "0.1", .arg = "PX|N%",                                   \
     .help = "omit frames narrower than PX pixels or N% of the total",                                        \
     .expects = "pixels (0.1) or a percentage of the total (0.5%)", TCI_OPT_FIELD(minwidth),                   \
     .parse = tci_option_parse_minwidth},                                                                     \
    {.key = "inverted", .type = TCI_OPT_BOOL, .help = "icicle graph (root at the top)", TCI_OPT_FIELD(inverted)}, \
    {.key = "colors", .type = TCI_OPT_ENUM, .choices = tci_palette_choices, .def = "android", .help = "the palette", \
     TCI_OPT_FIELD(palette), .parse = tci_option_parse_colors},                                               \
    TCI_OPTION_APP_PACKAGE,                                                                                   \
    {.key = "hash", .type = TCI_OPT_BOOL, .help = "colours from a hash of the name", TCI_OPT_FIELD(hash)}

/* A standalone SVG's options from the command's (title, width, minwidth, inverted, colors, hash;
 * counts in "us"): the flame graph writer's and the differential graph's, the same defaults. */
tci_flame_opts tci_flame_document_opts(const tci_options *opt);
/* An empty tree (root "all"); differential: frames carry a count before too. NULL: no memory. */
tci_flame *tci_flame_new(bool differential);
/* The name's id (bytes; stored once). TCI_NONE: no memory. */
uint32_t tci_flame_name(tci_flame *f, const char *name, size_t len);
/* The child of parent with that name, made if new. TCI_NONE: no memory. */
uint32_t tci_flame_child(tci_flame *f, uint32_t parent, uint32_t name);
/* A new child of parent, with no lookup: the caller knows parent has no child of that name
 * (it fills a frame that had no children from a tree of distinct paths). TCI_NONE: no memory. */
uint32_t tci_flame_new_child(tci_flame *f, uint32_t parent, uint32_t name);
/* The code group (enum tci_code_group) the android palette paints a name's frames with;
 * names start as TCI_CODE_OTHER (neutral). */
void tci_flame_set_group(tci_flame *f, uint32_t name, unsigned group);
/* Whether frame has children yet. */
bool tci_flame_has_children(const tci_flame *f, uint32_t frame);
/* The root's children (a flame graph's threads) drawn left to right in the order they were
 * made (the views' thread order: main first), not flamegraph.pl's order of names. */
void tci_flame_keep_root_order(tci_flame *f);
/* Add to a frame's self count (and, differential, to its count before); sums saturate. */
void tci_flame_add(tci_flame *f, uint32_t frame, int64_t self, int64_t before);
/* Draw it. TC_OK, TC_ERR_USAGE (a bad id prefix) or TC_ERR_NOMEM; write errors stay in the sink. */
int tci_flame_render(tci_flame *f, const tci_flame_opts *o, tci_sink *out);
void tci_flame_free(tci_flame *f);
/* The script of every graph (no CDATA end, no "</script"): tcFlame(svg) binds one
 * graph; run as a page-level script it binds every svg[data-tc-flame] of the page. */
const char *tci_flame_script(void);
/* The exact text of the <style> element of a graph embedded with this id prefix (a page
 * under a Content-Security-Policy hashes it). TC_ERR_USAGE: a bad prefix. */
int tci_flame_style(const char *id_prefix, tci_sink *out);

#endif /* TC_TC_FLAME_H */
