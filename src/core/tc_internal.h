/*
 * tc_internal.h - what the files of libtraceconv share with each other.
 * Prefix tci_. Not installed; not for the traceconv command.
 */
#ifndef TC_INTERNAL_H
#define TC_INTERNAL_H

#ifndef TC_BUILDING_LIBRARY
#error "tc_internal.h is private to libtraceconv; include traceconv.h instead"
#endif

#include "traceconv.h"
#include "escape.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#define TCI_NO_TIME INT64_MIN
#define TCI_NONE UINT32_MAX

#if defined(__GNUC__)
#define TCI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TCI_LIKELY(x) __builtin_expect(!!(x), 1)
#define TCI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TCI_PRINTF(a, b)
#define TCI_LIKELY(x) (x)
#define TCI_UNLIKELY(x) (x)
#endif

/* ---- little-endian input helpers (never cast structs onto input) -------- */

static inline uint16_t tci_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t tci_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}
static inline uint64_t tci_le64(const uint8_t *p) { return (uint64_t)tci_le32(p) | ((uint64_t)tci_le32(p + 4) << 32); }

/* ---- memory ------------------------------------------------------------- */

/* Allocation failure is fatal only through these: they return NULL and callers report TC_ERR_NOMEM. */
void *tci_malloc(size_t n);
void *tci_calloc(size_t n, size_t size);
void *tci_realloc_array(void *p, size_t n, size_t size); /* checks n*size overflow */
/* Grow *arr (element size esz) so that index `need` fits; doubles capacity. 0 ok, -1 no memory. */
int tci_grow(void **arr, uint32_t *cap, uint32_t need, size_t esz);
/* The same for arrays counted in size_t (per-record arrays of in-memory readers). */
int tci_grow_n(void **arr, size_t *cap, size_t need, size_t esz);

/* Temporary files (spooled input, the global-order merge): unlinked at once,
 * so they are gone when closed, even after a crash. In TMPDIR, else /tmp. */
int tci_temp_fd(const char *purpose); /* fd, or -1 with errno */
/* Write all of p (retrying EINTR and short writes): 0, or -1 with errno (ENOSPC for a 0-byte write). */
int tci_write_all(int fd, const void *p, size_t n);

typedef struct tci_arena {
    struct tci_arena_block *head;
} tci_arena;
void *tci_arena_alloc(tci_arena *a, size_t n);
/* p, the latest allocation, keeps only its first n bytes: a worst-case reservation given back. */
void tci_arena_trim(tci_arena *a, void *p, size_t n);
char *tci_arena_strndup(tci_arena *a, const char *s, size_t n);
char *tci_arena_printf(tci_arena *a, const char *fmt, ...) TCI_PRINTF(2, 3);
void tci_arena_free(tci_arena *a);

/* u64 -> u32 hash map (open addressing); grows with entries, not with lookups. */
typedef struct tci_idmap {
    uint64_t *keys;
    uint32_t *vals;
    uint32_t cap, count; /* cap is a power of two or 0 */
} tci_idmap;
uint32_t tci_idmap_get(const tci_idmap *m, uint64_t key); /* TCI_NONE if absent */
int tci_idmap_put(tci_idmap *m, uint64_t key, uint32_t val);
void tci_idmap_free(tci_idmap *m);

/* ---- diagnostics -------------------------------------------------------- */

/* Every figure the core reports, in one list: X(id, "name", kind). */
#define TCI_FIGURES(X)                                                  \
    X(RECORDS, "records", TC_FIG_COUNT)                                 \
    X(EVENTS, "events", TC_FIG_COUNT)                                   \
    X(THREADS, "threads", TC_FIG_COUNT)                                 \
    X(METHODS, "methods", TC_FIG_COUNT)                                 \
    X(EXIT_WITHOUT_ENTER, "exit-without-enter", TC_FIG_REPAIR)          \
    X(OPEN_AT_END, "open-at-end", TC_FIG_REPAIR)                        \
    X(UNKNOWN_METHOD, "unknown-method-id", TC_FIG_WARNING)              \
    X(MISMATCHED_EXIT, "mismatched-exit", TC_FIG_WARNING)               \
    X(IGNORED_EXIT, "ignored-exit", TC_FIG_WARNING)                     \
    X(INVALID_ACTION, "invalid-action", TC_FIG_WARNING)                 \
    X(TIME_BACKWARDS, "time-backwards", TC_FIG_WARNING)                 \
    X(CLOCK_WRAP, "clock-wrap", TC_FIG_REPAIR)                          \
    X(TRUNCATED, "truncated-input", TC_FIG_WARNING)                     \
    X(OVERFLOW, "data-file-overflow", TC_FIG_WARNING)                   \
    X(NO_SUMMARY, "no-summary", TC_FIG_WARNING)                         \
    X(THREAD_CPU_TIMELINE, "thread-cpu-timeline", TC_FIG_NOTE)          \
    X(DEPTH_LIMIT, "depth-limit", TC_FIG_WARNING)                       \
    X(SATURATED, "saturated-sum", TC_FIG_WARNING)                       \
    X(UNEXPECTED_RECON, "unmatched-exit-dropped", TC_FIG_WARNING)       \
    X(AMBIGUOUS_THREAD, "ambiguous-thread-id", TC_FIG_WARNING)          \
    X(UNKNOWN_THREAD, "unlisted-thread", TC_FIG_REPAIR)                 \
    X(BAD_LINE, "bad-line", TC_FIG_WARNING)                             \
    X(UNMATCHED_ASYNC_END, "unmatched-async-end", TC_FIG_WARNING)       \
    X(WRITER_DROPPED, "writer-dropped-frames", TC_FIG_WARNING)                     \
    X(SAMPLES, "samples", TC_FIG_COUNT)                                 \
    X(UNUSED_OPTION, "unused-option", TC_FIG_WARNING)                   \
    X(DEOBF_CLASSES, "deobf-classes", TC_FIG_COUNT)                     \
    X(DEOBF_METHODS, "deobf-methods", TC_FIG_COUNT)                     \
    X(DEOBF_UNMAPPED, "deobf-unmapped", TC_FIG_COUNT)                   \
    X(DEOBF_AMBIGUOUS, "deobf-ambiguous", TC_FIG_WARNING)               \
    X(DEOBF_FALLBACK, "deobf-fallback", TC_FIG_WARNING)                 \
    X(DEOBF_MISMATCH, "deobf-mismatch", TC_FIG_WARNING)                 \
    X(DEOBF_BAD_LINE, "deobf-bad-line", TC_FIG_WARNING)                 \
    X(LONE_SURROGATE, "unpaired-surrogate", TC_FIG_WARNING)             \
    X(FTRACE_IGNORED, "ftrace-events-ignored", TC_FIG_WARNING)         \
    X(GZIP_PADDING, "gzip-zero-padding", TC_FIG_NOTE)

enum tci_figure_id {
#define TCI_FIG_ENUM(id, name, kind) TCI_FIG_##id,
    TCI_FIGURES(TCI_FIG_ENUM)
#undef TCI_FIG_ENUM
    TCI_FIG__COUNT
};

/* Name ("exit-without-enter") and kind (TC_FIG_*) of a figure: one table for every user. */
const char *tci_figure_name(enum tci_figure_id id);
int tci_figure_kind(enum tci_figure_id id);

#define TCI_MAX_KEPT_WARNINGS 8

typedef struct tci_diag {
    const char *input;                /* file name shown in messages */
    char error[1024];                 /* the one error line */
    uint64_t fig[TCI_FIG__COUNT];
    char *kept[TCI_MAX_KEPT_WARNINGS]; /* first warning messages */
    size_t n_kept;
    bool muted;                       /* pass 2: the same anomalies are not counted again */
    bool strict;
} tci_diag;

/* Record an error; returns code (so: `return tci_error(...)`). offset UINT64_MAX = none. */
int tci_error(tci_diag *d, int code, const char *module, uint64_t offset, const char *fmt, ...)
    TCI_PRINTF(5, 6);
/* Count a warning of a kind and keep its message if among the first few. */
void tci_warn(tci_diag *d, enum tci_figure_id kind, const char *module, uint64_t offset,
              const char *fmt, ...) TCI_PRINTF(5, 6);
/* Count n occurrences without a message. */
static inline void tci_count(tci_diag *d, enum tci_figure_id kind, uint64_t n)
{
    if (!d->muted)
        d->fig[kind] += n;
}

/* How the CLI summary and every output that lists figures head a kind: "repaired", "warnings", "notes". */
const char *tci_figure_heading(int kind);
/* The figures of one kind as the CLI summary lists them: "2 exit-without-enter, 1 open-at-end",
 * or "none"; into buf (TCI_FIGURES_TEXT_MAX bytes hold every figure), which it returns. The one
 * form for every output that names them (report, pprof's comments). */
#define TCI_FIGURES_TEXT_MAX 2048
const char *tci_figures_text(const tci_diag *d, int kind, char *buf, size_t size);

/* ---- options ------------------------------------------------------------ */

/* report: the order of the method rows (option sort). */
enum tci_report_sort { TCI_SORT_INCL = 0, TCI_SORT_EXCL, TCI_SORT_CALLS, TCI_SORT_NAME };

#define TCI_MAX_OPTION_KEYS 64 /* distinct keys of every table together (options.c checks) */

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
    int palette;            /* enum tci_flame_palette (0: hot; the writer's default is java unless colors_given) */
    bool colors_given;
    bool hash;              /* colours from a hash of the name */
    bool negate;            /* diff flamegraph: swap red and blue (flamegraph.pl --negate) */
    uint8_t sort;         /* report: enum tci_report_sort */
    bool csv;             /* report: CSV rows instead of the text report */
    bool html;            /* report: a self-contained HTML page instead of the text report (not with csv) */
    bool threshold_set;   /* dot: threshold given (else the writer's default) */
    uint32_t threshold_ppm; /* dot: edges below this share of the total are hidden, in millionths (1% = 10000) */
    uint8_t given[TCI_MAX_OPTION_KEYS]; /* the keys set explicitly, in the order given (options.c) */
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
    TCI_OPTF_REPEATABLE = 8, /* each use adds a value (none yet: the selection options to come) */
    TCI_OPTF_NEEDS_VALUE = 16 /* string or path: NULL is a bad value (else it unsets) */
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

/* The rows several formats share (the flame graph's are also the differential graph's). */
extern const char *const tci_weight_choices[], *const tci_sort_choices[], *const tci_palette_choices[];
int tci_option_parse_minwidth(tci_options *o, const char *value);
int tci_option_parse_colors(tci_options *o, const char *value);
int tci_option_parse_threshold(tci_options *o, const char *value); /* dot's PCT, kept in millionths */
#define TCI_OPTION_WEIGHT(help_)                                                                               \
    {.key = "weight", .type = TCI_OPT_ENUM, .choices = tci_weight_choices, .def = "wall", .help = help_,       \
     TCI_OPT_FIELD(weight_cpu)}
#define TCI_OPTION_MERGE_THREADS(help_, def_)                                                                  \
    {.key = "merge-threads", .type = TCI_OPT_BOOL, .def = def_, .help = help_, TCI_OPT_FIELD(merge_threads)}
#define TCI_OPTION_SORT(help_)                                                                                 \
    {.key = "sort", .type = TCI_OPT_ENUM, .choices = tci_sort_choices, .def = "incl", .help = help_,          \
     TCI_OPT_FIELD(sort)}
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
    {.key = "colors", .type = TCI_OPT_ENUM, .choices = tci_palette_choices, .def = "java", .help = "the palette", \
     TCI_OPT_FIELD(palette), .parse = tci_option_parse_colors},                                               \
    {.key = "hash", .type = TCI_OPT_BOOL, .help = "colours from a hash of the name", TCI_OPT_FIELD(hash)}

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

/* ---- the trace: tables every reader fills ------------------------------ */

enum tci_clock { TCI_CLOCK_UNKNOWN = 0, TCI_CLOCK_WALL, TCI_CLOCK_THREAD_CPU, TCI_CLOCK_DUAL };
const char *tci_clock_name(enum tci_clock c);

typedef struct tci_method {
    uint64_t raw_id;
    const char *cls;   /* dotted class name; NULL for an unknown id */
    const char *name;  /* method name */
    const char *sig;   /* dex signature "(I)V" or "" */
    const char *file;  /* source file or NULL */
    int32_t line;      /* -1 unknown */
    const char *full_name;  /* "pkg.Class.method: (I)V" - timelines (set before finalize: deobfuscation's, kept) */
    const char *short_name; /* "pkg.Class.method" - flame graphs, pprof */
    bool defined;
    bool plain_name;        /* a name from tci_trace_name, not a method: shown as it is */
    uint32_t short_len;     /* plain names: length of the short form (0: all of it) */
} tci_method;

typedef struct tci_thread {
    uint64_t tid;       /* full id as the input lists it */
    const char *name;   /* never NULL after tci_trace_finalize */
    uint8_t name_rank;  /* a name of higher or equal rank replaces the current one */
    uint32_t process;   /* index into the trace's processes (0: the input's own process) */
    uint64_t records;   /* input records of this thread (pass 1) */
} tci_thread;

/* A process: method traces have one (index 0, the traced app); system
 * traces (atrace/systrace) have many. */
typedef struct tci_process {
    int64_t pid;        /* -1 unknown: process 0 gets the trace's pid at finalize */
    const char *name;   /* NULL: process 0 takes the trace's process name, others "process <pid>" */
    uint8_t name_rank;
    /* After finalize: its first thread with records (TCI_NONE: none), so that
     * writers skip empty processes without scanning the threads per process. */
    uint32_t first_thread;
} tci_process;

/* A node of a sampled stack: frames are interned, so a stack is one id. */
typedef struct tci_stack {
    uint32_t parent;   /* TCI_NONE for an outermost frame */
    uint32_t method;
} tci_stack;

typedef struct tci_meta {
    const char *key, *value;
} tci_meta;

typedef struct tci_trace {
    tci_arena arena;
    const char *input_path;   /* as given */
    const char *input_name;   /* base name */
    const char *reader;       /* "art" */
    const char *format_name;  /* what the input is called when not its reader's name: "dalvik" (an
                               * ART-format file Dalvik wrote); set by the reader, NULL: none */
    char detail[96];          /* "v3 non-streaming" */
    enum tci_clock clock;
    bool has_wall, has_cpu;   /* which timestamps events carry */
    const char *vm;           /* "art", "dalvik" or NULL */
    int64_t pid;              /* -1 unknown */
    const char *process_name; /* never NULL after finalize */
    /* Readers set start_ns to the origin of their raw wall times, and
     * start_given when the input says when tracing began (a header start).
     * Otherwise normalize moves start_ns to the first event's time after
     * pass 1 (events keep their absolute times): from then on start_ns is
     * the trace start every writer measures from. */
    int64_t start_ns;
    bool start_given;
    int64_t end_ns;           /* largest timestamp (after pass 1), or start + elapsed */
    int64_t elapsed_ns;       /* from the input's metadata; -1 unknown */
    int64_t time_unit_ns;     /* raw time unit of the reader (1000 for ART µs) */
    int wrap_bits;            /* raw times wrap at 2^wrap_bits units (32 for ART); 0 never */

    tci_method *methods;
    uint32_t n_methods, cap_methods;
    tci_idmap method_ids;     /* raw id -> index */

    tci_thread *threads;
    uint32_t n_threads, cap_threads;

    tci_process *processes;   /* [0] always exists; after finalize it is the main (or first)
                               * real process, with a pid that is never 0 when any thread has one */
    uint32_t n_processes, cap_processes;

    tci_stack *stacks;        /* sampled stacks (tci_trace_stack) */
    uint32_t n_stacks, cap_stacks;
    tci_idmap stack_ids;      /* (parent, method) -> stack */

    tci_meta *meta;
    uint32_t n_meta, cap_meta;
    tci_idmap meta_ids;       /* hash of a key's text -> meta index */
    tci_idmap process_ids;    /* pid -> process index */

    uint64_t elapsed_offset;  /* where the input gave elapsed_ns (messages); UINT64_MAX unknown */

    /* After pass 1 the writers size their arrays from the counts above, so
     * normalize freezes the tables (tci_trace_freeze): from then on a call
     * that would create or change an entry fails, lookups keep working. */
    bool frozen;

    /* limits (from the options) and why the last table operation failed */
    uint32_t max_string, max_threads, max_methods;
    int fail_status;          /* TC_ERR_LIMIT or TC_ERR_FORMAT (frozen) when limit_msg is set */
    char limit_msg[192];
} tci_trace;

int tci_trace_init(tci_trace *t);
void tci_trace_free(tci_trace *t);
/*
 * Text given to the tables is measured by its length, never by a NUL: a NUL
 * byte inside a name is stored as U+FFFD (EF BF BD), so every writer can use
 * the stored names as C strings, and the same input text always finds the
 * same entry (in pass 1 and in pass 2). Every function below that can create
 * or change an entry fails once the tables are frozen (tci_trace_fail says
 * why); the lookups of existing entries keep working.
 */
/* Index of the method with raw id, creating an undefined entry if needed (TCI_NONE: no memory). */
uint32_t tci_trace_method(tci_trace *t, uint64_t raw_id);
/* Define (or redefine) a method. Strings are copied. cls may be slash-separated. */
int tci_trace_define_method(tci_trace *t, uint64_t raw_id, const char *cls, size_t cls_len,
                            const char *name, size_t name_len, const char *sig, size_t sig_len,
                            const char *file, size_t file_len, int32_t line);
/* Add a thread (of process 0); returns its index (TCI_NONE: no memory or a limit). */
uint32_t tci_trace_add_thread(tci_trace *t, uint64_t tid);
/* The process with this pid, created if new (TCI_NONE: no memory or a limit). */
uint32_t tci_trace_process(tci_trace *t, int64_t pid);
int tci_trace_name_process(tci_trace *t, uint32_t process, const char *name, size_t len, uint8_t rank);
/* A slice, instant, counter or async name that is not a method: an entry of
 * the method table (no class), the same entry for the same text. */
uint32_t tci_trace_name(tci_trace *t, const char *name, size_t len);
/* The stack `parent` + `method` (parent TCI_NONE: an outermost frame), interned. */
uint32_t tci_trace_stack(tci_trace *t, uint32_t parent, uint32_t method);
/* The same, where the first short_len bytes are the short form ("pkg.C.m" of
 * "pkg.C.m: (I)V") that flame graphs and pprof show. */
uint32_t tci_trace_name_split(tci_trace *t, const char *name, size_t len, size_t short_len);
/* A name read back from a timeline (JSON, systrace): a Java method written as
 * "pkg.Class.method: (sig)ret" keeps "pkg.Class.method" as its short form. */
uint32_t tci_trace_timeline_name(tci_trace *t, const char *name, size_t len);
int tci_trace_name_thread(tci_trace *t, uint32_t thread, const char *name, size_t len, uint8_t rank);
/* After a table function failed (TCI_NONE or an error code): report why, at offset, as module. */
int tci_trace_fail(const tci_trace *t, tci_diag *d, const char *module, uint64_t offset);
int tci_trace_add_meta(tci_trace *t, const char *key, size_t klen, const char *val, size_t vlen);
const char *tci_trace_meta(const tci_trace *t, const char *key);
/* Give every method and thread its display names; called once after pass 1. */
int tci_trace_finalize(tci_trace *t, tci_diag *d, const tci_options *o);
/* End of pass 1 (normalize, before the writers' begin()): no entry is created or changed after this. */
void tci_trace_freeze(tci_trace *t);
/* What the input is, as the CLI summary and every output's metadata call it: the reader's name,
 * or the one the reader gave (format_name: "dalvik" for an ART-format file that Dalvik wrote);
 * and that name with the reader's detail ("dalvik v1 non-streaming") in buf
 * (TCI_FORMAT_TEXT_MAX bytes), returned. */
#define TCI_FORMAT_TEXT_MAX 128
const char *tci_trace_format_name(const tci_trace *t);
const char *tci_trace_format(const tci_trace *t, char *buf, size_t size);

/* ---- events: what normalize gives the writers --------------------------- */

enum tci_event_kind {
    TCI_EV_ENTER = 1,       /* a slice begins on the thread (method: its name) */
    TCI_EV_EXIT = 2,        /* the innermost open slice of the thread ends */
    TCI_EV_INSTANT = 3,     /* a point event on the thread */
    TCI_EV_COUNTER = 4,     /* value of the counter `method` of the thread's process */
    TCI_EV_ASYNC_BEGIN = 5, /* an async slice `method` with cookie `id`, process-scoped */
    TCI_EV_ASYNC_END = 6,
    TCI_EV_SAMPLE = 7       /* a sampled stack: `id` is its stack, `value` its weight in ns */
};
enum tci_event_flags {
    TCI_EVF_SYNTHETIC = 1, /* made by a conversion rule (reconstructed, closed at end) */
    TCI_EVF_UNWIND = 2,    /* exit caused by an exception */
    TCI_EVF_FORCED = 4     /* exit forced by an exit of a deeper frame */
};

typedef struct tci_event {
    int64_t ts_ns;   /* timeline time: absolute ns */
    int64_t cpu_ns;  /* thread CPU time since the thread's clock base, or TCI_NO_TIME */
    double value;    /* COUNTER: the value */
    uint64_t id;     /* ASYNC_*: the cookie */
    uint32_t thread, method;
    uint32_t depth;  /* ENTER/EXIT: 0 = outermost frame of the thread */
    uint8_t kind, flags;
} tci_event;

/* ---- readers ------------------------------------------------------------ */

enum tci_action {
    TCI_ACT_ENTER = 0, TCI_ACT_EXIT = 1, TCI_ACT_UNWIND = 2, TCI_ACT_INVALID = 3, /* ART's action bits */
    TCI_ACT_INSTANT = 4, TCI_ACT_COUNTER = 5, TCI_ACT_ASYNC_BEGIN = 6, TCI_ACT_ASYNC_END = 7,
    TCI_ACT_SAMPLE = 8 /* id: a stack (tci_trace_stack), value: weight in ns */
};

/* One input record as a reader sees it: raw times in the reader's unit.
 * An EXIT or UNWIND with method TCI_NONE closes the innermost open frame
 * (systrace's bare "E"). */
typedef struct tci_raw {
    int64_t wall;    /* TCI_NO_TIME when the input has none */
    int64_t cpu;     /* TCI_NO_TIME when the input has none */
    uint64_t offset; /* byte offset of the record, for messages */
    double value;    /* COUNTER */
    uint64_t id;     /* ASYNC_*: the cookie */
    uint32_t thread, method;
    uint8_t action;
} tci_raw;

/* Records per read() call: big enough to amortize the call, small enough for L1. */
#define TCI_RAW_BATCH 256

/* ---- atrace payloads (atrace.c; the grammar is at the top of that file) ---- */

enum { TCI_ATRACE_OK = 0, TCI_ATRACE_NONE = 1, TCI_ATRACE_BAD = 2 };

/* One `tracing_mark_write` payload. Strings point into the payload (or to a
 * literal) and are not NUL-terminated: they may hold NUL bytes. */
typedef struct tci_atrace {
    char kind;                  /* B E C S F I N G H */
    uint8_t action;             /* the record it makes: TCI_ACT_* */
    bool has_pid;               /* only E may lack one */
    uint32_t pid;
    const char *name;           /* B I C S F N G, H's optional name, E's ignored tail */
    const char *track;          /* N G H */
    const char *category;       /* C: what follows the value */
    size_t name_len, track_len, category_len;
    double value;               /* C */
    int64_t cookie;             /* S F G H */
    const char *why;            /* TCI_ATRACE_BAD: what is wrong, "its pid is not a number ..." */
} tci_atrace;

/* Parse [p, p+n): TCI_ATRACE_OK, TCI_ATRACE_NONE (not a payload: clock sync,
 * free text) or TCI_ATRACE_BAD (a payload that breaks the grammar; a->why).
 * Never reads past n; linear in n. */
int tci_atrace_parse(const char *p, size_t n, tci_atrace *a);
/* The name the record takes: the event's name, or the track for G and H. */
const char *tci_atrace_record_name(const tci_atrace *a, size_t *len);

typedef struct tci_rctx {
    void *priv;
    const uint8_t *data; /* the whole input (mmapped or spooled) */
    size_t size;
    tci_trace *trace;
    tci_diag *diag;
    const tci_options *opt;
    int pass;            /* 1: first pass (tables may grow), 2: events */
    uint64_t pos;        /* byte offset reached, for progress and messages */
    struct tci_source *source; /* lets normalize release pages already read */
    /* The input's path when it is a real file opened by path; NULL for memory
     * and stdin. Side files (mappings) are looked for beside it only. */
    const char *input_file;
    struct tci_deobf *deobf;   /* option deobfuscate: applied by normalize after pass 1 (NULL: none) */
} tci_rctx;

typedef struct tci_reader {
    const char *name, *description, *extensions;
    const tci_option_def *options; /* the options it reads (NULL-key terminated); NULL: none */
    size_t priv_size;
    /* 0..100 from the first bytes (len may be short) and the file name; pure. */
    int (*probe)(const uint8_t *buf, size_t len, const char *filename);
    int (*open)(tci_rctx *r);                /* header and tables */
    /* Up to max records into ev, count in *n: TC_OK (n > 0), TC_EOF (n == 0) or < 0. */
    int (*read)(tci_rctx *r, tci_raw *ev, size_t max, size_t *n);
    int (*rewind)(tci_rctx *r);              /* back to the first record for pass 2 */
    void (*close)(tci_rctx *r);              /* always called; tolerates a partial open */
    /* An input kept in two files, read as one source: parts[0], then parts[1] (ART's legacy
     * pairs: name.key, then name.data). Given one path (other NULL: tc_conv_open), the other
     * part is found beside it, never elsewhere (DESIGN.md §5b); given both
     * (tc_conv_open_pair), they are put in order. TC_OK with parts[] malloc'd; an error,
     * reported in d; or TCI_NOT_A_PAIR (other NULL only): path is an input of its own.
     * NULL: the format has no such inputs. */
    int (*pair_parts)(const char *path, const char *other, char *parts[2], tci_diag *d);
} tci_reader;
#define TCI_NOT_A_PAIR 1

/* ---- stopping while the outputs are written ------------------------------ */

/*
 * The progress callback can cancel a conversion while it reads (normalize asks it
 * every 256Ki records) and while the outputs are written: the sinks (per 64 KiB
 * handed to the output) and the core's walks of the call tree (per node) spend a
 * budget, and each time it runs out the callback is asked (done == total then).
 * One tci_cancel per conversion; NULL where there is no callback (no cost).
 */
typedef struct tci_cancel {
    int (*ask)(void *user); /* non-zero: stop */
    void *user;
    int64_t budget;         /* work left before the next ask */
    bool stopped;           /* asked and told to stop: every later step says so */
} tci_cancel;

#define TCI_CANCEL_BUDGET ((int64_t)4 << 20) /* about 64 sink buffers, or 64Ki nodes of a walk */
#define TCI_CANCEL_NODE 64                     /* the cost of one node of a walk */

bool tci_cancel_ask(tci_cancel *c);
/* Spend cost; true when the conversion must stop (the callback said so, now or before). */
static inline bool tci_cancel_step(tci_cancel *c, int64_t cost)
{
    if (TCI_LIKELY(!c))
        return false;
    if (TCI_LIKELY((c->budget -= cost) > 0))
        return c->stopped;
    return tci_cancel_ask(c);
}

/* ---- output sink -------------------------------------------------------- */

typedef struct tci_sink {
    FILE *fp;              /* the output: a FILE, or */
    tc_write_fn fn;        /* a caller's function (fp NULL) */
    void *fn_user;
    struct z_stream_s *z;  /* non-NULL: gzip the output */
    uint8_t *zbuf;
    size_t len;
    int err;               /* set once a write failed: nothing more is written */
    int errnum;            /* the errno of that failure, for the message */
    int status;            /* what failed it: TC_ERR_IO (errnum), TC_ERR_LIMIT (limit), TC_ERR_CANCELED */
    uint64_t written;
    uint64_t emitted;      /* bytes handed to the FILE or function (compressed for gzip) */
    uint64_t limit;        /* emitted may not pass it (max-output): the output fails with TC_ERR_LIMIT */
    tci_cancel *cancel;    /* asked at flushes (NULL: none) */
    bool script_data;      /* inside a <script> that readers take raw: escape.h's rule at flush */
    bool script_lt;        /* the last byte flushed in it was '<' */
    bool script_at_start;  /* script_data as it was for buf[0] */
    uint8_t n_switches;    /* offsets in buf where script_data flips, not yet flushed: */
    uint32_t switch_at[8]; /* a switch does not flush, so nothing leaves before it must */
    uint8_t buf[1 << 16];
} tci_sink;

int tci_sink_open(tci_sink *s, FILE *fp, bool gzip);
int tci_sink_open_fn(tci_sink *s, tc_write_fn fn, void *user, bool gzip);
int tci_sink_flush_buf(tci_sink *s);
int tci_sink_close(tci_sink *s); /* finish gzip, flush; returns error status */
/* Drop what is buffered and release the sink without writing more (a canceled conversion). */
void tci_sink_discard(tci_sink *s);
/* Mark the sink failed with errnum (the first failure is kept). */
void tci_sink_fail(tci_sink *s, int errnum);
/* Mark it failed for another cause (TC_ERR_LIMIT, TC_ERR_CANCELED); the first is kept. */
void tci_sink_stop(tci_sink *s, int status);
/* Whether the output has failed (a write error, max-output, cancel): nothing more reaches it,
 * so a writer's long loop stops here instead of computing bytes nobody will see. */
static inline bool tci_sink_failed(const tci_sink *s) { return s->err != 0; }
/* From here on (on) or no longer (off), the bytes written are the contents of a <script>
 * element read raw (systrace's trace-data): escape.h's script-data rule is applied to them as
 * they leave the sink, so it holds for the final bytes whatever wrote them. The switch is
 * noted at its offset in the buffer, not flushed: nothing is written earlier than without it
 * (a conversion canceled before its first 64 KiB writes nothing). */
void tci_sink_script_data(tci_sink *s, bool on);

static inline void tci_sink_write(tci_sink *s, const void *p, size_t n)
{
    if (TCI_LIKELY(s->len + n <= sizeof s->buf)) {
        memcpy(s->buf + s->len, p, n);
        s->len += n;
        return;
    }
    const uint8_t *b = p;
    while (n) {
        if (s->len == sizeof s->buf && tci_sink_flush_buf(s) != 0)
            return;
        size_t room = sizeof s->buf - s->len, k = n < room ? n : room;
        memcpy(s->buf + s->len, b, k);
        s->len += k;
        b += k;
        n -= k;
    }
}
/* A string literal: its length is known at compile time. */
#define TCI_PUT_LIT(sink, lit) tci_sink_write((sink), "" lit, sizeof(lit) - 1)
static inline void tci_sink_puts(tci_sink *s, const char *str) { tci_sink_write(s, str, strlen(str)); }
static inline void tci_sink_putc(tci_sink *s, char c)
{
    if (TCI_UNLIKELY(s->len == sizeof s->buf) && tci_sink_flush_buf(s) != 0)
        return;
    s->buf[s->len++] = (uint8_t)c;
}
void tci_sink_u64(tci_sink *s, uint64_t v);
void tci_sink_i64(tci_sink *s, int64_t v);
/* v / 1000 with exactly three decimals, e.g. 1234567 -> "1234.567" (µs from ns). */
void tci_sink_milli(tci_sink *s, int64_t v);
void tci_sink_printf(tci_sink *s, const char *fmt, ...) TCI_PRINTF(2, 3);
/* A JSON string literal with quotes; invalid UTF-8 bytes become U+FFFD. */
void tci_sink_json_string(tci_sink *s, const char *str);
/* The same literal in the arena, for writers that repeat names (len set, not NUL-terminated). */
char *tci_json_quote(tci_arena *a, const char *str, size_t *len);

/* ---- text out (textout.c): names and numbers as the table writers print them ---- */

/* ns to µs, to the nearest, halves away from zero (|ns| <= TCI_SUM_MAX: no overflow). Every
 * writer that prints µs (report, dot, diff) rounds each figure once, this way. */
static inline int64_t tci_us_of(int64_t ns) { return ns >= 0 ? (ns + 500) / 1000 : -((-ns + 500) / 1000); }
/* A call count as a signed figure (saturated), so that two can be subtracted. */
static inline int64_t tci_clamp_calls(uint64_t c) { return c > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)c; }
/* Text: printable UTF-8 as it is; control bytes, backslashes and bytes that are not UTF-8 as escapes (\n, \\, \xHH). */
void tci_put_escaped_text(tci_sink *o, const char *s);
/* The walk under every escaped form: valid UTF-8 sequences as they are, each other byte
 * through escape_byte; after max bytes of s, "..." and the rest left out. */
void tci_put_escaped_with(tci_sink *o, const char *s, size_t max, void (*escape_byte)(tci_sink *o, uint8_t c));
/* Whether a CSV field must be quoted (a ',', '"', CR or LF in it; NULL: no). */
bool tci_csv_needs_quotes(const char *s);
/* The text of a CSV field (quotes doubled when quoted), bytes that are not UTF-8 as U+FFFD. */
void tci_put_csv_text(tci_sink *o, const char *s, bool quoted);
/* One whole CSV field: quoted only when it must be. */
void tci_put_csv_field(tci_sink *o, const char *s);
/* Names in markup, Graphviz labels (escape.h's rules) into a sink. */
void tci_put_markup(tci_sink *o, const char *s, enum tci_esc_shown shown);
void tci_put_markup_cp(tci_sink *o, const uint32_t *cp, size_t n);
void tci_put_dot_label(tci_sink *o, const char *s, size_t max);
/* A method as the reports name it: "pkg.Class.method (sig)ret", a plain name (a systrace slice)
 * as it is, an unknown id as every writer names it ("unknown.0x1c"); put writes each part in the
 * output's escaping. */
void tci_put_method_name(tci_sink *o, const tci_method *m, void (*put)(tci_sink *, const char *));

/* ---- call tree (aggregating writers) ------------------------------------ */

typedef struct tci_ctnode {
    uint32_t parent;       /* TCI_NONE for a thread root */
    uint32_t method;       /* TCI_NONE for a thread root */
    uint32_t thread;
    uint32_t first_child, next_sibling;
    uint32_t last_child;   /* the child entered last: most calls repeat it */
    uint64_t calls;               /* calls, or samples */
    int64_t sampled;              /* weight of samples whose leaf is this node, ns */
    int64_t wall_total, cpu_total; /* inclusive ns */
    int64_t wall_self, cpu_self;   /* exclusive ns (after tci_calltree_finish) */
} tci_ctnode;

/* Sums of times saturate at TCI_SUM_MAX (only a hostile input's durations
 * get there), counted (figure saturated-sum); then the tree is trimmed so that
 * children never add up to more than their parent. So every total and self
 * time, and the sum of the self times under any node, is at most TCI_SUM_MAX:
 * a writer may add them up, and add rounding, without overflow. */
#define TCI_SUM_MAX (INT64_MAX / 2)
/* Per thread: the times of its first and last call events (enter, exit,
 * sample), reconstructed and closing frames included; TCI_NO_TIME until seen. */
typedef struct tci_ctspan {
    int64_t first_ts, last_ts;
    int64_t first_cpu, last_cpu;
} tci_ctspan;
typedef struct tci_calltree {
    const tci_trace *trace;  /* its stack table resolves samples */
    tci_diag *diag;          /* where saturation is reported (NULL: counted only) */
    uint64_t saturated;      /* sums that saturated */
    tci_ctnode *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t *roots;        /* per thread: node index of its root */
    uint32_t n_roots;
    tci_idmap child_index;  /* (parent << 32 | method) -> node */
    struct tci_ctstack *stacks; /* per thread: open frames while building */
    tci_ctspan *spans;      /* per root (a merged tree's one root has none: TCI_NO_TIME) */
    tci_cancel *cancel;     /* the walks over the tree (folding, profile, merging) stop here (NULL: never) */
} tci_calltree;

int tci_calltree_init(tci_calltree *ct, const tci_trace *t, uint32_t n_threads);
int tci_calltree_event(tci_calltree *ct, const tci_event *ev);
void tci_calltree_finish(tci_calltree *ct);
void tci_calltree_free(tci_calltree *ct);
/* A one-root tree where equal call paths of all threads are summed (after finish). */
int tci_calltree_merge_threads(const tci_calltree *in, tci_calltree *out);
/* The one walk over a tree (calltree.c): every node under root, depth-first, parents before
 * children, siblings in order; iterative, no memory of its own (stacks can be 10000 deep).
 * enter(user, node, depth) (depth 0: a child of root) returns TC_OK to go on into the node's
 * children, TCI_WALK_PRUNE to leave the node and its subtree out (no leave for it), or an
 * error, which stops the walk and is returned. leave(user, node, depth) follows a node's
 * subtree. A cancel (ct->cancel) stops the walk with TC_ERR_CANCELED. */
#define TCI_WALK_PRUNE 1
typedef struct tci_ctvisit {
    int (*enter)(void *user, uint32_t node, uint32_t depth);
    void (*leave)(void *user, uint32_t node, uint32_t depth);
    void *user;
} tci_ctvisit;
int tci_calltree_walk(const tci_calltree *ct, uint32_t root, const tci_ctvisit *v);

/* ---- folding: the folded writer's stacks, shared with the flame graph (folding.c) ---- */

/* A distinct stack of one tree: its last frame and the rest. */
typedef struct tci_fpath {
    uint32_t parent;  /* TCI_NONE: the tree's root (no frame); parents come before children */
    uint32_t name;    /* index of the first method whose sanitized name is this text */
    int64_t self_ns;  /* summed self time of the call paths with this text */
    int64_t self_us;  /* the count printed: µs rounded cumulatively in path order (0: no line) */
} tci_fpath;

typedef struct tci_folding {
    tci_arena arena;
    const char **method_name; /* per method: its sanitized short name */
    uint32_t *same_name;      /* per method: the first method whose sanitized name is the same text */
    const char **thread_name; /* per thread: sanitized "name-tid" */
    tci_fpath *paths;         /* the current tree's distinct stacks; [0] is its root */
    uint32_t n_paths, cap_paths;
    tci_idmap path_ids;       /* (parent path << 32 | name) -> path */
    bool cpu;                 /* weigh by thread CPU time, else wall */
} tci_folding;

/* Names of every method and thread (tables final). */
int tci_folding_begin(tci_folding *f, const tci_trace *t, bool cpu);
/* The paths of the tree under root (a thread's, or a merged tree's), counts rounded. */
int tci_folding_tree(tci_folding *f, const tci_calltree *ct, uint32_t root);
void tci_folding_free(tci_folding *f);

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
    TCI_PAL_YELLOW, TCI_PAL_PURPLE, TCI_PAL_AQUA, TCI_PAL_ORANGE
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
    uint32_t width;          /* 0: 1200 */
    double minwidth;         /* px, or percent of the total with minwidth_pct */
    bool minwidth_pct;
    bool inverted;           /* icicle: root at the top */
    enum tci_flame_palette palette;
    bool hash;               /* colour from a hash of the name instead of the seeded default */
    bool negate;             /* differential: swap red and blue, and the delta's sign */
} tci_flame_opts;

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
/* Whether frame has children yet. */
bool tci_flame_has_children(const tci_flame *f, uint32_t frame);
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
/* ---- folded stacks into a flame tree (folding.c): the flame graph writer, the HTML
 * report's graphs and the differential flame graph draw the same frames ---- */

typedef struct tci_foldflame {
    tci_folding fold;
    uint32_t *name_of;  /* per method (its same_name class): the flame name, TCI_NONE until used */
    uint32_t *frame_of; /* per path of the current tree: its flame frame */
    uint32_t cap_frame_of;
    int64_t total;      /* µs added so far (saturated): 0, nothing to draw */
} tci_foldflame;

/* The folded names of t (tables final), counts by thread CPU time or wall. */
int tci_foldflame_begin(tci_foldflame *ff, const tci_trace *t, bool cpu);
/* Add ct's folded stacks to flame: one tower per thread with records ("name-tid" under
 * "all"), or with merge_threads one tree under "all" (equal paths of all threads summed).
 * The µs go to each frame's count, or with before to its count before (a differential
 * tree's BASE, difffolded.pl's first column). */
int tci_foldflame_add(tci_foldflame *ff, tci_flame *flame, const tci_calltree *ct, bool merge_threads, bool before);
/* Safe on a zeroed or half-begun ff. */
void tci_foldflame_free(tci_foldflame *ff);

/* ---- SHA-256 (sha256.c): a page's Content-Security-Policy hashes ---------- */

typedef struct tci_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t n;
} tci_sha256;
void tci_sha256_init(tci_sha256 *s);
void tci_sha256_update(tci_sha256 *s, const void *data, size_t len);
void tci_sha256_final(tci_sha256 *s, uint8_t out[32]);
/* The digest in base64 (44 characters and a NUL), as CSP's 'sha256-...' writes it. */
void tci_sha256_base64(const uint8_t digest[32], char out[45]);

/* ---- profile: per-method figures from the call tree (profile.c) ------------ */

/*
 * What a profile report shows (README "Profile accounting"), computed from
 * a finished call tree for one thread or for all threads together. Every
 * figure is exact ns (or a count), summed with saturation at TCI_SUM_MAX.
 *
 * An activation of method m is nested (recursive) when m is already on the
 * thread's stack above it, outermost otherwise. The tree's nodes are call
 * paths, so this is decided per node: whether m appears among its ancestors.
 */
typedef struct tci_pcost {
    uint64_t calls;
    int64_t wall, cpu; /* inclusive ns */
} tci_pcost;

typedef struct tci_pmethod {
    uint32_t method;            /* index in the trace's method table: the first called of its full
                                 * name (one row for the ids under which ART may list one method) */
    uint64_t calls;             /* outermost activations ("normal" calls) */
    uint64_t recursive_calls;   /* nested activations */
    int64_t incl_wall, incl_cpu; /* outermost activations only: recursion never counts twice */
    int64_t excl_wall, excl_cpu; /* self time of every activation */
    int64_t outer_excl_wall, outer_excl_cpu; /* self time of the outermost activations */
    uint32_t parents_at, n_parents;   /* its edges as callee: profile.parent_edges[parents_at..] */
    uint32_t children_at, n_children; /* its edges as caller: profile.child_edges[children_at..] */
} tci_pmethod;

/* Calls from one method (row, or TCI_NONE: the thread root, "(toplevel)")
 * to another. `all` counts every call along the edge, so with recursion its
 * time counts an instant once per level; the three splits never do:
 *   caller_outer: calls made by outermost activations of the caller (a
 *     caller's children lists: their times plus its outermost self time are
 *     its inclusive time),
 *   callee_outer: calls that are outermost activations of the callee (a
 *     callee's parent lists: their times add up to its inclusive time),
 *   once: calls not made inside another call along the same edge (the
 *     call graph: each instant once per edge).
 * all - caller_outer and all - callee_outer are the nested parts. */
typedef struct tci_pedge {
    uint32_t caller, callee; /* rows of the profile; caller TCI_NONE = (toplevel) */
    tci_pcost all, caller_outer, callee_outer, once;
} tci_pedge;

typedef struct tci_profile {
    const tci_trace *trace;
    uint32_t thread;          /* TCI_NONE: all threads */
    uint32_t n_threads;       /* threads with calls in it */
    tci_pmethod *methods;     /* rows: the methods called in it, in order of first call */
    uint32_t n_methods;
    tci_pedge *edges;
    uint32_t n_edges;
    uint32_t *parent_edges;   /* edge indexes grouped by callee (tci_pmethod.parents_at) */
    uint32_t *child_edges;    /* grouped by caller; (toplevel)'s first: top_children_at */
    uint32_t top_children_at, n_top_children;
    uint64_t calls;           /* every activation */
    int64_t span_wall, span_cpu; /* Σ per thread: first to last call event (or its busy time if larger) */
    int64_t busy_wall, busy_cpu; /* Σ per thread: time in some method (the root's total) */
    uint64_t saturated;       /* sums capped at TCI_SUM_MAX (the writer reports them) */
    tci_idmap row_of;         /* method index -> row */
} tci_profile;

/* thread: a root of ct (per-thread tree), or TCI_NONE for all of them. */
int tci_profile_build(tci_profile *p, const tci_calltree *ct, uint32_t thread);
void tci_profile_free(tci_profile *p);
/* The row of a method index, or TCI_NONE when it is not called in p. */
uint32_t tci_profile_row(const tci_profile *p, uint32_t method);

/* Sorting with a total order: key descending, then the row's method by
 * class, name, signature and method index (row TCI_NONE, (toplevel), first).
 * The caller fills key (TCI_PSORT_NAME: 0 everywhere sorts by name). */
typedef struct tci_psort_item {
    int64_t key;
    uint32_t row;
    uint32_t tag;   /* the caller's (an edge index, ...) */
    const tci_method *m; /* set by tci_profile_sort */
} tci_psort_item;
void tci_profile_sort(const tci_profile *p, tci_psort_item *items, size_t n);

/* ---- diff: two inputs compared per method (diff.c; rendered by diff_*.c) ---- */

enum { TCI_DIFF_BASE = 0, TCI_DIFF_NEW = 1 };

/* One side of a row: what the profile shows for the methods of that key. */
typedef struct tci_dfig {
    uint64_t calls;                /* every activation (normal + recursive) */
    int64_t incl_wall, excl_wall;  /* ns, summed over the methods of the key */
    int64_t incl_cpu, excl_cpu;
} tci_dfig;

/* A method of either input, matched by name (README "Diff": the key rule). */
typedef struct tci_drow {
    const char *name; /* the key: "pkg.Class.method", or "pkg.Class.method: (I)V" for overloads */
    bool on[2];       /* present in BASE, in NEW */
    tci_dfig fig[2];
} tci_drow;

typedef struct tci_dside {
    const tci_trace *trace;
    const tci_diag *diag;
    const char *summary; /* "art v3 non-streaming, clock dual" */
    tci_profile profile; /* all threads: totals (span, busy, calls) */
    bool built;
} tci_dside;

typedef struct tci_diff {
    tci_dside side[2];
    const tci_options *opt; /* NEW's: weight, sort, the flame graph's */
    bool wall, cpu;         /* the clocks both inputs have: the columns shown */
    bool by_cpu;            /* order (and the flame graph's widths) by thread-CPU time */
    tci_drow *rows;         /* in report order after matching */
    uint32_t n_rows, cap_rows;
    uint32_t n_both, n_new, n_gone;
    bool merge_threads;     /* flamegraph: one tree (default) or a tower per "name-tid" */
    tci_flame *flame;       /* flamegraph: the differential tree (NULL for the tables) */
    tci_arena arena;
} tci_diff;

/* The key's figures of one clock: incl (true) or excl, wall or cpu. */
static inline int64_t tci_dfig_time(const tci_dfig *f, bool incl, bool cpu)
{
    return incl ? (cpu ? f->incl_cpu : f->incl_wall) : (cpu ? f->excl_cpu : f->excl_wall);
}
/* The options the diff reads, whatever its format (diff.c): each diff format's table. */
extern const tci_option_def tci_diff_options[];

/* conv.c, for diff.c: convert c into one writer that is not registered
 * (priv: its state, the caller's); the same pipeline, options check
 * (against w's option list) and diagnostics as tc_conv_write. OPEN -> WRITTEN. */
struct tci_writer;
int tci_conv_aggregate(tc_conv *c, const struct tci_writer *w, void *priv, const char *function);
const tci_options *tci_conv_options(const tc_conv *c);
const tci_trace *tci_conv_trace_of(const tc_conv *c);
uint64_t tci_conv_input_size(const tc_conv *c); /* bytes read (gzip inflated) */
/* max-output in bytes for an output of input_size bytes of input (UINT64_MAX: none), and
 * the one message of an output that reached it (TC_ERR_LIMIT, in d). */
uint64_t tci_output_limit(const tci_options *opt, uint64_t input_size);
int tci_output_limit_error(tci_diag *d, const tci_options *opt, const char *module, uint64_t limit);
const tci_diag *tci_conv_diag(const tc_conv *c);
bool tci_conv_is_open(const tc_conv *c);
void tci_conv_consume(tc_conv *c); /* OPEN -> WRITTEN without reading (the other input of a diff failed) */
void tci_conv_call_begin(tc_conv *c);
int tci_conv_call_end(tc_conv *c, int rc);
tci_diag *tci_conv_error_slot(tc_conv *c); /* where a call's message goes (diag.error) */

/* ---- writers ------------------------------------------------------------ */

enum tci_writer_flags {
    TCI_WF_AGGREGATE = 1,    /* finish() receives the call tree */
    TCI_WF_GLOBAL_ORDER = 2, /* events must arrive in global time order */
    TCI_WF_GZIP = 4,         /* the sink gzips the output */
    TCI_WF_BINARY = 8        /* output is not text */
};

typedef struct tci_wctx {
    const char *writer_name;
    void *priv;
    tci_sink *out;
    const tci_trace *trace;
    const tci_options *opt;
    tci_diag *diag;
} tci_wctx;

/*
 * What a writer (or a diff format) makes: its first variant is its default output, named
 * after it; an option of its own may select another (report's html: report-html), and the
 * other's name selects it for one output (-o report-html). The command names outputs,
 * serves them and tells its own outputs from original traces by these rows.
 */
typedef struct tci_variant {
    const char *name;      /* what -o and tc_conv_write take; the first is the format's own name */
    const char *extension; /* of a default output name ("report.html"); unique among all variants */
    const char *mime;      /* its media type ("text/html; charset=utf-8") */
    const char *mark;      /* text in the first or last 8 KiB of every such output (NULL: none) */
    const char *option;    /* the bool option that selects it (NULL: the first, the default) */
    bool inline_view;      /* a browser shows it as a page or an image (not a download) */
} tci_variant;

typedef struct tci_writer {
    const char *name, *description, *extensions;
    const tci_option_def *options; /* the options it reads (NULL-key terminated); NULL: none */
    const tci_variant *variants;   /* at least one (NULL-name terminated) */
    size_t priv_size;
    unsigned flags;
    int (*begin)(tci_wctx *w);                          /* tables are final here */
    int (*event)(tci_wctx *w, const tci_event *ev);     /* may be NULL */
    int (*finish)(tci_wctx *w, const tci_calltree *ct); /* ct NULL unless TCI_WF_AGGREGATE */
    void (*close)(tci_wctx *w);                         /* always called */
} tci_writer;

/* A format of traceconv diff (diff_*.c): the same description as a writer's, and a
 * renderer that writes the whole output into o (write errors stay in the sink). */
typedef struct tci_diff_format {
    const char *name, *description, *extensions;
    const tci_option_def *options; /* tci_diff_options */
    const tci_variant *variants;   /* one: its output */
    int (*render)(const tci_diff *d, tci_sink *o);
    bool flame;                    /* it draws diff.c's differential flame tree */
} tci_diff_format;

/* For finish(): n events this writer could not show, counted with one kept
 * message (the diagnostics are muted while events flow). */
void tci_writer_dropped(tci_wctx *w, uint64_t n, const char *what);

/* ---- registry ------------------------------------------------------------ */

#define TCI_READER(sym) extern const tci_reader sym;
#define TCI_WRITER(sym) extern const tci_writer sym;
#define TCI_DIFF(sym) extern const tci_diff_format sym;
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
#undef TCI_DIFF

const tci_reader *tci_find_reader(const char *name); /* in any case */
const tci_writer *tci_find_writer(const char *name);
/* The writer of an output name in any case: a writer's ("report"; *variant -1: the one its
 * options select) or one of its variants' ("report-html"; *variant its index). NULL: none. */
const tci_writer *tci_find_output(const char *name, int *variant);
const tci_diff_format *tci_find_diff_format(const char *name); /* in any case */
/* A failed write's cause for a message: strerror, but EFBIG is "file size limit exceeded" (conv.c). */
void tci_write_error_text(int errnum, char *why, size_t len);
size_t tci_reader_count(void);
const tci_reader *tci_reader_at(size_t i);
size_t tci_writer_count(void);
const tci_writer *tci_writer_at(size_t i);
size_t tci_diff_format_count(void);
const tci_diff_format *tci_diff_format_at(size_t i);
/* "text, csv or flamegraph": the diff formats' names, for messages. */
const char *tci_diff_format_names(void);

/* ---- options.c: every option parsed from its row ---------------------------
 *
 * The key's row is the first of the core's table, then the readers', writers' and diff
 * formats' tables in registry order (the rows of one key agree). */
const tci_option_def *tci_option_find(const char *key);
/* How many distinct keys the tables hold (more than TCI_MAX_OPTION_KEYS: some are lost). */
size_t tci_option_key_count(void);
/* Parse value for key into o (strings: a copy in strings[], indexed by the key, which the
 * caller frees with tci_option_strings_free): TC_OK, else TC_ERR_USAGE (an unknown key,
 * listing the keys; a bad value, saying what it takes; two options that choose two variants
 * of one writer) or TC_ERR_NOMEM, with the message in d. The key is noted as given. */
int tci_option_set(tci_options *o, char **strings, const char *key, const char *value, tci_diag *d);
void tci_option_strings_free(char **strings);
/* Whether key was set explicitly (to any value). */
bool tci_option_given(const tci_options *o, const char *key);
/* The value of a bool option (false for a key that is not one). */
bool tci_option_bool(const tci_options *o, const char *key);
/* The variant of writer w that o selects: the first whose option is set, else 0. */
int tci_variant_selected(const tci_options *o, const tci_writer *w);
/* o for one output of w's variant v given by name: its option set, its siblings' cleared. */
void tci_variant_force(tci_options *o, const tci_writer *w, int v);
/* At write time, warn about each given key that is a format's option (in some reader's,
 * writer's or diff format's table) but read by neither rd nor any of the n_ws writers ws:
 * counted unused-option warnings, TC_ERR_STRICT under strict. */
int tci_options_check_used(const tci_options *o, const tci_reader *rd, const tci_writer *const *ws, size_t n_ws,
                           tci_diag *d);

/* ---- input source -------------------------------------------------------- */

typedef struct tci_source {
    const uint8_t *data;
    size_t size;
    bool mapped;      /* data is an mmap to unmap */
    bool gzipped;     /* the input was gzip-compressed */
    void *owned;      /* heap copy when mmap is impossible */
    uint64_t released; /* pages before this offset were given back (tci_source_release) */
    int guard;        /* 1 + the guard.c slot watching the mapping (ours or the caller's); 0 none */
    bool guard_owned; /* the slot is ours: released by tci_source_close */
} tci_source;

/* Open path ("-" = stdin): mmap regular files, spool streams and gzip to a temp file. */
int tci_source_open(tci_source *s, const char *path, const tci_options *o, tci_diag *d);
/* Two files read as one (a legacy .key + .data pair), through a spool file. */
int tci_source_open_concat(tci_source *s, const char *first, const char *second, const tci_options *o,
                           tci_diag *d);
/* The same over a caller's buffer (borrowed; gzip is inflated into a spool file). */
int tci_source_open_memory(tci_source *s, const uint8_t *data, size_t size, const tci_options *o, tci_diag *d);
/* The zlib stream data[0, len) that a reader found in its input (at input
 * offset base; messages name module) inflated into an unlinked temporary file
 * and mapped as s, with gzip input's guard: at most max-input bytes, and more
 * than 200:1 beyond 256 MiB refused as a bomb. Bytes after the stream's end
 * are ignored. The reader owns s: it releases pages as it reads
 * (tci_source_release) and closes it. */
int tci_source_inflate(tci_source *s, const uint8_t *data, size_t len, const char *module, uint64_t base,
                       const tci_options *o, tci_diag *d);
void tci_source_close(tci_source *s);
/* Readers move forward: drop mapped pages before `upto` so peak memory stays flat on huge inputs.
 * A reader that starts again from the front (pass 2) is noticed: its pages go back again. */
void tci_source_release(tci_source *s, uint64_t upto);
/* Give back the whole pages of [from, to) now (a reader that scanned them out of order). */
void tci_source_drop(tci_source *s, uint64_t from, uint64_t to);
/* 0 while the mapped input is intact; else 1 + the offset at which its bytes
 * were found gone (the file shrank under the mapping: guard.c). */
uint64_t tci_source_changed(const tci_source *s);

/* ---- guard.c: a mapped input that shrinks while it is read (SIGBUS) ---------- */

/* Watch [addr, addr+len) of a file mapping: a SIGBUS there maps zero pages
 * over the rest of it and marks it changed (the process-wide handler is
 * installed on the first call). The slot, or -1 (table full, no handler: the
 * mapping is then read unguarded). owned: the library's own mapping, which
 * tc_unguard_mapping must not release. Remove the slot before the munmap. */
int tci_guard_add(const void *addr, size_t len, bool owned);
void tci_guard_remove(int slot);
/* The slot watching all of [addr, addr+len) (a caller's mapping), or -1. */
int tci_guard_find(const void *addr, size_t len);
/* 0 while the slot's mapping is intact; else 1 + the offset, counted from data, of the first fault. */
uint64_t tci_guard_fault(int slot, const void *data);
/* The error of a conversion whose input changed under it ("input changed while
 * reading", TC_ERR_IO), replacing whatever the reader said about the zeros. */
int tci_guard_error(tci_diag *d, uint64_t offset);

/* ---- jscan.c: JSON read without a tree (readers of JSON input) -------------- */

/* A scanner over s[0, n): pos is the next byte; after a failure, where it went wrong.
 * src (or NULL): the mapped input s lies in, whose pages are given back as the
 * scanner moves on, also inside one large value. */
typedef struct tci_jscan {
    const char *s;
    size_t n, pos;
    struct tci_source *src;
    size_t release_at;
} tci_jscan;
/* A raw value in the text (a string with its quotes); p NULL: absent. */
typedef struct tci_jspan {
    const char *p;
    size_t n;
} tci_jspan;
void tci_jscan_ws(tci_jscan *sc);
/* Skip the value at pos, validated as cJSON would (nesting depth 1000), without allocating. */
bool tci_jscan_value(tci_jscan *sc);
/* An object's "key" and its colon; key, len: the raw bytes between the quotes. */
bool tci_jscan_key(tci_jscan *sc, const char **key, size_t *len);
/* The object at pos, validated and skipped; vals[i]: the first member named keys[i] (short keys). */
bool tci_jscan_object(tci_jscan *sc, const char *const *keys, size_t n_keys, tci_jspan *vals);
/* The string literal raw[0, n) (between its quotes, validated) decoded into out[0, cap):
 * returns the decoded length (bytes past cap are counted, not written). A \u escape
 * of half a surrogate pair becomes U+FFFD and is counted in *lone. */
size_t tci_json_unescape(const char *raw, size_t n, char *out, size_t cap, uint64_t *lone);
bool tci_jspan_is_string(tci_jspan v);
/* A number, or a string that holds exactly one (as some writers quote them); finite only. */
bool tci_jspan_number(tci_jspan v, double *out);

/* ---- external sort: readers that reorder more records than memory should hold (extsort.c) ---- */

/* A total order on records (they carry their own tie-break); no context, so no global state. */
typedef int (*tci_sort_cmp)(const void *a, const void *b);
typedef struct tci_extsort tci_extsort;
/* Sorted runs of at most max_bytes (0: 8 MiB) spill to an unlinked temporary
 * file and are merged: memory stays near max_bytes whatever the count. */
tci_extsort *tci_extsort_new(size_t elem_size, tci_sort_cmp cmp, size_t max_bytes); /* NULL: no memory */
int tci_extsort_add(tci_extsort *s, const void *elem); /* 0, or -1 with errno */
int tci_extsort_done(tci_extsort *s);                  /* no more adds; reading starts (0 / -1 errno) */
int tci_extsort_next(tci_extsort *s, void *out);       /* 1 a record, 0 the end, -1 errno */
int tci_extsort_rewind(tci_extsort *s);                /* read from the first record again */
uint64_t tci_extsort_count(const tci_extsort *s);
void tci_extsort_free(tci_extsort *s);

/* ---- deobfuscation: a ProGuard/R8 mapping (deobfuscate.c) ---------------- */

/* The mapping, indexed (class lines only; the file stays mapped, its pages
 * given back). Errors name the mapping's file, offset and line. */
typedef struct tci_deobf tci_deobf;
int tci_deobf_open(tci_deobf **out, const char *path, const tci_options *o, tci_diag *d);
/* The same over a buffer (borrowed until tci_deobf_free; gzip is inflated), name in messages. */
int tci_deobf_open_memory(tci_deobf **out, const void *data, size_t size, const char *name, const tci_options *o,
                          tci_diag *d);
/* Rename the methods of t (tables complete, display names not made yet):
 * ART methods get their original class, name, descriptor and source file;
 * qualified text names (timelines, slices, Rhea) their shown names. Figures
 * deobf-*; a malformed member line of a class the trace uses is an error. */
int tci_deobf_apply(tci_deobf *m, tci_trace *t, tci_diag *d);
void tci_deobf_free(tci_deobf *m);

/* ---- normalize: two passes over a reader, events out --------------------- */

typedef int (*tci_event_fn)(void *user, const tci_event *ev);
typedef int (*tci_ready_fn)(void *user); /* tables final, before the first event */

int tci_normalize_run(tci_rctx *r, const tci_reader *rd, tci_ready_fn ready, tci_event_fn emit,
                      void *user, tc_progress_fn progress, void *progress_user);

/* ---- merge: global time order for TCI_WF_GLOBAL_ORDER writers (merge.c) ---- */

/* Events are spilled per thread to an unlinked temporary file and k-way merged
 * by (ts_ns, thread index): memory grows with threads, not with events. */
typedef struct tci_merge tci_merge;
int tci_merge_open(tci_merge **m, const tci_trace *t, tci_diag *d); /* tables final */
int tci_merge_add(tci_merge *m, const tci_event *ev); /* in each thread's time order */
int tci_merge_run(tci_merge *m, tci_event_fn fn, void *user); /* every event, globally ordered */
void tci_merge_free(tci_merge *m);

/* ---- spool: per-stream byte sequences in bounded memory (spool.c) ------------ */

/* A caller appends encoded records to numbered streams (a writer: one per
 * thread) in any interleaving; full buffers spill as blocks to one unlinked
 * temporary file; each stream is read back in order, as many times as
 * needed. Memory: one buffer per stream used (their sum capped near 16 MiB),
 * not per record. */
typedef struct tci_spool_stream {
    uint8_t *buf;                    /* the block being filled; NULL until the first record */
    uint8_t *pos, *end;              /* where the next record goes; the end of buf (NULL: none) */
    struct tci_spool_block *blocks;  /* spilled, in order */
    uint32_t n_blocks, cap_blocks;
} tci_spool_stream;
typedef struct tci_spool {
    tci_spool_stream *streams;
    uint32_t n_streams;
    uint32_t block;      /* bytes per buffer: the largest record that fits */
    int fd;              /* the temporary file; -1 until the first spill */
    uint64_t size;
    uint8_t *rbuf;       /* reading: one spilled block */
    int status;          /* the first failure, kept: every later call fails with it */
    const char *module;  /* names the user in messages */
    tci_diag *diag;
} tci_spool;
typedef struct tci_spool_cursor {
    uint32_t stream, next_block;
    bool tail_done;
} tci_spool_cursor;

/* active: how many streams will receive records (sizes the buffers). */
int tci_spool_init(tci_spool *s, uint32_t n_streams, uint64_t active, const char *module, tci_diag *d);
void tci_spool_free(tci_spool *s);
uint8_t *tci_spool_room_slow(tci_spool *s, uint32_t stream, uint32_t n);
/* Where the next record of stream goes, with room for n bytes (n <= s->block);
 * NULL on failure (s->status). Write it, then tci_spool_wrote its end. */
static inline uint8_t *tci_spool_room(tci_spool *s, uint32_t stream, uint32_t n)
{
    if (TCI_LIKELY(stream < s->n_streams)) {
        tci_spool_stream *st = &s->streams[stream];
        if (TCI_LIKELY((size_t)(st->end - st->pos) >= n))
            return st->pos;
    }
    return tci_spool_room_slow(s, stream, n);
}
static inline void tci_spool_wrote(tci_spool *s, uint32_t stream, uint8_t *end)
{
    s->streams[stream].pos = end;
}
/* Reading: rewind a cursor to a stream, then each call hands back the next
 * chunk of whole records (valid until the next call): 1 a chunk, 0 the
 * stream's end, < 0 an error (also kept in s->status). */
void tci_spool_rewind(tci_spool_cursor *c, uint32_t stream);
int tci_spool_next(tci_spool *s, tci_spool_cursor *c, const uint8_t **p, size_t *n);

#endif
