/*
 * tc_options.h - the options of a conversion as the readers and writers read them.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_OPTIONS_H
#define TC_TC_OPTIONS_H

#include "tc_base.h"

/* ---- options ------------------------------------------------------------ */

/* report: the order of the method rows (option sort). */
enum tci_report_sort { TCI_SORT_INCL = 0, TCI_SORT_EXCL, TCI_SORT_CALLS, TCI_SORT_NAME };

#define TCI_MAX_OPTION_KEYS 64 /* distinct keys of every table together (registry.c checks) */

/* Where each option is stored: which formats read one is their tables' word (its rows:
 * weight's are six writers'), not these comments'. */
typedef struct tci_options {
    const char *process_name;
    bool strict;
    bool no_thread;      /* merge threads (no thread frame) */
    bool weight_cpu;     /* weight: cpu (index 1 of tci_weight_choices) */
    bool merge_threads;  /* one tree for all threads, no thread labels or frames */
    bool text;           /* systrace: plain ftrace text instead of HTML */
    uint32_t max_depth;  /* normalize: deeper frames are dropped (default 10000) */
    size_t read_chunk;   /* source: bytes per read() when spooling (0 = 64 KiB) */
    /* Resource limits: an input beyond one is refused with a clear error. */
    uint64_t max_input;   /* bytes of (decompressed) input; 0 = none */
    uint32_t max_string;  /* bytes in one name or metadata value */
    uint32_t max_threads;
    uint32_t max_methods;
    uint64_t max_events;  /* input records; 0 = none */
    uint64_t max_json;    /* bytes of JSON input, which is parsed in memory */
    uint64_t max_output;  /* bytes of each output (compressed for gzip writers); 0 = none, or: */
    uint32_t max_output_ratio; /* N: N times the input's (decompressed) size, at least TCI_MIN_RATIO_OUTPUT */
    const char *mapping;  /* rhea: method mapping file (NULL: looked for beside the input) */
    const char *deobfuscate; /* ProGuard/R8 mapping.txt applied to the method table (NULL: none) */
    /* flamegraph writer */
    const char *title;      /* NULL: the default title */
    uint32_t width;         /* image width in px (0: 1200) */
    double minwidth;        /* px, or % of the total with minwidth_pct (set: minwidth_given) */
    bool minwidth_pct, minwidth_given;
    bool inverted;          /* icicle graph */
    int palette;            /* enum tci_flame_palette (0: hot; the writer's default is android unless colors_given) */
    bool colors_given;
    const char *app_package; /* the android palette's app (NULL: the process name, else inferred) */
    bool hash;              /* colours from a hash of the name */
    bool negate;            /* diff flamegraph: swap red and blue (flamegraph.pl --negate) */
    bool reverse;           /* folded, flamegraph, report, diff: stacks read from the leaf (bottom-up) */
    uint8_t sort;         /* report: enum tci_report_sort */
    bool csv;             /* report: CSV rows instead of the text report */
    bool html;            /* report: a self-contained HTML page instead of the text report (not with csv) */
    bool threshold_set;   /* dot: threshold given (else the writer's default) */
    uint32_t threshold_ppm; /* dot: edges below this share of the total are hidden, in millionths (1% = 10000) */
    /* selection (select.c): the part of the trace every writer is given. Repeatable
     * options keep each value given, in order, joined by '\n' (NULL: none given). */
    const char *thread;     /* thread specs: a glob on the name, a tid, or "main" */
    int64_t since_ns, until_ns; /* the window [since, until), ns after the trace start */
    bool since_given, until_given;
    const char *focus;      /* globs on method names: only the call paths through them */
    const char *ignore;     /* globs on method names: the call paths through them left out */
    bool ignore_idle;       /* ignore the documented idle waits (select.c) */
    const char *callers;    /* folded, flamegraph, report: the callers of the methods of this pattern */
    bool patterns_may_miss; /* no option: diff.c sets it on its inputs, a pattern of focus, ignore or
                             * callers that matches no method of one of them is no error (of both is) */
    uint32_t threads;       /* threads of one conversion (conv.c, handoff.c): 1 (0: unset) none started */
    uint8_t given[TCI_MAX_OPTION_KEYS]; /* the keys set explicitly, in the order given: indexes of keys */
    const struct tci_option_def *const *keys; /* every format's keys, NULL-ended, in the tables' order: the
                                               * engine's (tci_option_set sets it; NULL: none given) */
    uint8_t n_given;
} tci_options;

/*
 * An option is a row of a table (options.c parses every one from its row): the core's
 * table holds what every conversion reads, each reader's and writer's descriptor the
 * options it reads. A key may be a row of several tables (weight: six writers): the rows
 * agree on type and storage, and differ only in their help and default. A writer's
 * option that changes the kind of its output selects a variant (tci_variant.option).
 */
enum tci_option_type { /* the words of traceconv.h's tc_option_info.type */
    TCI_OPT_BOOL, TCI_OPT_INT, TCI_OPT_FLOAT, TCI_OPT_SIZE, TCI_OPT_DURATION, TCI_OPT_ENUM, TCI_OPT_STRING, TCI_OPT_PATH
};
enum tci_option_flags {
    TCI_OPTF_OPEN = 1,       /* read by the open: refused once an input is open */
    TCI_OPTF_LIMIT = 2,      /* a resource limit: what a server sets for its clients */
    TCI_OPTF_HIDDEN = 4,     /* for tests: not in --help, the man page or serve's API */
    TCI_OPTF_REPEATABLE = 8, /* string: each use adds a value ('\n'-joined); an unset (NULL) clears them */
    TCI_OPTF_NEEDS_VALUE = 16, /* string or path: NULL is a bad value (else it unsets) */
    TCI_OPTF_SELECTION = 32    /* part of the selection every output records (tci_selection_text):
                                * which part of the trace, and how it is weighed */
};
typedef struct tci_option_def {
    const char *key;            /* "weight": tc_conv_set_option's key, the command's --weight */
    uint8_t type;               /* enum tci_option_type */
    uint8_t flags;              /* enum tci_option_flags */
    uint16_t offset, size;      /* the field of tci_options it is stored in (TCI_OPT_FIELD) */
    uint64_t min, max;          /* int, size: the range (max 0: what the field holds) */
    const char *const *choices; /* enum: NULL-terminated; the index of the one given is stored */
    const char *def;            /* the default, as text for display (NULL: none, or off) */
    const char *arg;            /* its value in --help ("N", "PX|N%"); NULL: from the type */
    const char *help;           /* one line, without the default */
    const char *expects;        /* what a bad value is told it should be (NULL: from the type) */
    /* The few with a form of their own (PX|N%, Nx, a percentage, a palette): parse and
     * store value, 0, or -1 for a bad value; float and duration rows always have one. */
    int (*parse)(tci_options *o, const char *value);
} tci_option_def;
#define TCI_OPT_FIELD(f) .offset = (uint16_t)offsetof(tci_options, f), .size = (uint16_t)sizeof(((tci_options *)0)->f)

/* The rows several formats share (the flame graph's own, also the differential graph's, are
 * analysis/tc_flame.h's; each format's other rows are in its own file). */
extern const char *const tci_weight_choices[], *const tci_sort_choices[];
#define TCI_OPTION_WEIGHT(help_)                                                                               \
    {.key = "weight", .type = TCI_OPT_ENUM, .flags = TCI_OPTF_SELECTION, .choices = tci_weight_choices,        \
     .def = "wall", .help = help_, TCI_OPT_FIELD(weight_cpu)}
#define TCI_OPTION_MERGE_THREADS(help_, def_)                                                                  \
    {.key = "merge-threads", .type = TCI_OPT_BOOL, .def = def_, .help = help_, TCI_OPT_FIELD(merge_threads)}
#define TCI_OPTION_SORT(help_)                                                                                 \
    {.key = "sort", .type = TCI_OPT_ENUM, .choices = tci_sort_choices, .def = "incl", .help = help_,          \
     TCI_OPT_FIELD(sort)}
#define TCI_OPTION_REVERSE(help_)                                                                              \
    {.key = "reverse", .type = TCI_OPT_BOOL, .flags = TCI_OPTF_SELECTION, .help = help_, TCI_OPT_FIELD(reverse)}
#define TCI_OPTION_CALLERS(help_)                                                                              \
    {.key = "callers", .type = TCI_OPT_STRING, .flags = TCI_OPTF_NEEDS_VALUE | TCI_OPTF_SELECTION, .arg = "METHOD",  \
     .help = help_, .expects = "a method's name, Class.method or a glob on pkg.Class.method", TCI_OPT_FIELD(callers)}

/* The pieces of the engine's tci_option_set (engine/tc_engine.h), which finds a key's row: a
 * bool's forms (1/0, true/false, yes/no; 0 or -1); a value parsed and stored by its row
 * (strings[index] keeps a string's copy; 0, -1 for a bad value, or TC_ERR_NOMEM); what a bad
 * value is told it should be; and the strings[] freed. */
int tci_option_parse_bool(const char *v, bool *out);
int tci_option_parse_row(tci_options *o, char **strings, int index, const struct tci_option_def *d, const char *v);
void tci_option_expects(const struct tci_option_def *d, char *out, size_t len);
void tci_option_strings_free(char **strings);
/* A size as the options take it ("64M"); approximate: "3.1G", or "1000 bytes" below 1K. */
void tci_size_text(uint64_t n, bool approximate, char *out, size_t len);

/* The options every conversion reads (options.c), NULL-key terminated like every table. */
extern const tci_option_def tci_core_options[];

#define TCI_DEFAULT_MAX_INPUT ((uint64_t)64 << 30)
#define TCI_DEFAULT_MAX_STRING (64u << 10)
#define TCI_DEFAULT_MAX_THREADS 1000000u
#define TCI_DEFAULT_MAX_METHODS 50000000u
#define TCI_DEFAULT_MAX_JSON ((uint64_t)256 << 20)
/* max-output Nx never bounds an output below this: a flame graph's or HTML report's fixed
 * script and style alone are tens of KiB, more than 64 times a tiny trace */
#define TCI_MIN_RATIO_OUTPUT ((uint64_t)4 << 20)

/* A time with its unit ("1.5s", "250ms", "40us", "1000ns"; "0"), exactly in ns: 0, or -1 for a bad text
 * (options.c; join.c's --offset takes it with a sign). */
int tci_parse_duration(const char *v, int64_t *out);
/* ns as the options take a time, exactly and shortest: "1.2s", "250ms", "40us", "7ns", "0". */
void tci_duration_text(int64_t ns, char *out, size_t len);

/* ---- the selection, written down (options.c) ----
 *
 * Every output records the selection it was made with, named as the options are, from this
 * one text: the options given whose rows are marked TCI_OPTF_SELECTION (thread, since,
 * until, focus, ignore, ignore-idle, reverse, weight, and any later one so marked), in the
 * tables' order (the same selection is the same text, whatever the order of the flags), each
 * value of a repeated one in the order given: "thread main, since 1.2s, until 1.5s". A bool is
 * its name when on; an enum "weight cpu". Names are the user's (a thread glob): a writer
 * escapes the text for its output as the last step. */
#define TCI_SELECTION_TEXT_MAX 1024
/* Into out (len bytes; a text longer than that is cut with "..."): "" when nothing is
 * selected. Its length. reads: the table of the writer that records it (NULL: none), whose
 * selection rows it shows besides the core's (--reverse in a folded output, not in a JSON
 * trace, which does not read it). _all: every selection option given (the command's). */
size_t tci_selection_text(const tci_options *o, const tci_option_def *reads, char *out, size_t len);
size_t tci_selection_text_all(const tci_options *o, char *out, size_t len);
/* What the selection keeps of trace t: the window [*from, *to) in the trace's ns (its
 * start and end clipped to the window given), and the threads kept (those with records
 * after the selection: select.c sets the others' to 0). */
struct tci_trace;
void tci_selection_window(const struct tci_trace *t, const tci_options *o, int64_t *from, int64_t *to);
uint32_t tci_selection_threads(const struct tci_trace *t);

#endif /* TC_TC_OPTIONS_H */
