/*
 * traceconv.h - the public interface of libtraceconv.
 *
 * libtraceconv reads Android method traces (and, over time, other trace
 * formats) into one normalized event stream and writes it out in the formats
 * people look at: Chrome trace JSON, folded stacks, Perfetto, pprof, ...
 *
 * A conversion is one tc_conv object:
 *
 *     tc_conv *c = tc_conv_new();
 *     tc_conv_set_option(c, "process-name", "com.example");
 *     if (tc_conv_open(c, "in.trace", NULL) != TC_OK ||       // NULL: detect format
 *         tc_conv_write(c, "json", out_fp) != TC_OK)
 *         fprintf(stderr, "%s\n", tc_conv_error(c));
 *     tc_conv_free(c);
 *
 * Every failing call returns a negative tc_status and leaves one message,
 * retrieved with tc_conv_error: "in.trace: art: offset 0x1f4a: truncated record".
 *
 * ---- the life of a tc_conv (a state machine) ----
 *
 *     NEW  --open ok-->  OPEN  --write-->  WRITTEN
 *      ^  \--open failed--/ (back to NEW, may be opened again)
 *
 *   NEW      options of both tables below may be set; one of the tc_conv_open*
 *            calls moves to OPEN. A failed open (missing file, unknown or bad
 *            format, a limit) leaves the object in NEW, as if never opened:
 *            options set so far are kept; open again, with another input or
 *            other options.
 *   OPEN     write-time options may still be set; an open-time option is
 *            refused with TC_ERR_STATE (it would have no effect). A write
 *            that is refused before it starts (unknown writer, NULL output)
 *            leaves the object in OPEN, so a corrected write works.
 *   WRITTEN  the input was converted once, into one or several outputs
 *            (successfully or not: the conversion consumed it). Another write, open or option is
 *            TC_ERR_STATE; the figures, warnings and summary stay readable.
 *
 * Misuse (write before open, open twice, write twice, an option in the wrong
 * state) returns TC_ERR_STATE with a message naming what was wrong; a NULL
 * tc_conv or a NULL required argument returns TC_ERR_USAGE. A failed call
 * never changes the state (except a failed conversion: WRITTEN) and never
 * affects later calls: the error message is not state.
 *
 * ---- threads ----
 *
 * Distinct tc_conv objects may be used from different threads at once; the
 * functions without a tc_conv (tc_format_at, tc_diff_format_at, tc_option_at,
 * tc_variant_at, tc_writer_extension, tc_status_string, tc_version_*, tc_probe_file,
 * tc_probe_memory) may be called from any thread. One tc_conv must not be used by two
 * threads at the same time.
 */
#ifndef TRACECONV_H
#define TRACECONV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version: the single source of truth; CMake's project(VERSION) reads
 * these three lines. NUMBER is MAJOR*10000 + MINOR*100 + PATCH. */
#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 5
#define TC_VERSION_PATCH 0
#define TC_VERSION_STR_(x) #x
#define TC_VERSION_XSTR_(x) TC_VERSION_STR_(x)
#define TC_VERSION_NUMBER (TC_VERSION_MAJOR * 10000 + TC_VERSION_MINOR * 100 + TC_VERSION_PATCH)
#define TC_VERSION_STRING \
    TC_VERSION_XSTR_(TC_VERSION_MAJOR) "." TC_VERSION_XSTR_(TC_VERSION_MINOR) "." TC_VERSION_XSTR_(TC_VERSION_PATCH)

#if defined(_WIN32)
#define TC_API
#else
#define TC_API __attribute__((visibility("default")))
#endif

typedef enum tc_status {
    TC_OK = 0,
    TC_EOF = 1,              /* internal: end of a stream */
    TC_ERR_IO = -1,          /* cannot read input / write output */
    TC_ERR_FORMAT = -2,      /* input is malformed */
    TC_ERR_NOMEM = -3,
    TC_ERR_USAGE = -4,       /* bad option, unknown format name, ... */
    TC_ERR_LIMIT = -5,       /* a resource limit was hit */
    TC_ERR_UNSUPPORTED = -6, /* valid input the chosen writer cannot express */
    TC_ERR_STRICT = -7,      /* a warning under --strict */
    TC_ERR_STATE = -8,       /* the call is not allowed in the object's state (see above) */
    TC_ERR_CANCELED = -9,    /* the progress callback asked to stop */
    TC_ERR_NO_TRACE = -10,   /* input in which the reader finds nothing it converts or reports
                                ("no trace events found": a JSON document with no trace events,
                                text with no line of the format, an ART trace with no record): a
                                batch of files skips it, where a conversion fails */
    TC_ERR_EMPTY_SELECTION = -11 /* the selection (options thread, since, until) names nothing in
                                    this input: no thread matches, the window is past its end, or
                                    the methods of callers are never called in it, or a focus,
                                    ignore or callers names a method and it has none (since 0.3; one
                                    that matches none of its methods: TC_ERR_USAGE) */
} tc_status;

/* A short English description of a status ("no space", ...); never NULL. */
TC_API const char *tc_status_string(int status);

/* The library's version, as built (the macros above are the header's). */
TC_API int tc_version_number(void);
TC_API const char *tc_version_string(void);

/* ---- the format registry ------------------------------------------------ */

typedef struct tc_conv tc_conv; /* a conversion (below) */

typedef struct tc_format_info {
    const char *name;        /* "art", "json", ... */
    const char *description; /* "Android ART/Dalvik method trace" */
    const char *extensions;  /* comma separated, first is the default */
    int is_reader;           /* 1 reader, 0 writer */
    int is_binary;           /* writers: output is not text (do not send it to a terminal) */
    const char *aliases;     /* readers: other names -i and tc_conv_open take ("atrace,ftrace"),
                                comma separated, or NULL; a writer's are its variants'. Since 0.5. */
} tc_format_info;

/* Readers first, then writers; NULL past the end. */
TC_API const tc_format_info *tc_format_at(size_t index);

/* The formats of tc_diff_write ("text", "csv", "flamegraph"; is_reader 0), NULL past the
 * end. Since 0.2. */
TC_API const tc_format_info *tc_diff_format_at(size_t index);

/* ---- what each format takes and makes (since 0.2) ---------------------------
 *
 * Every option is a row of a table: the options every conversion takes (the core's)
 * and those of each reader, writer and diff format, which the command's --help and
 * `traceconv --list-formats --json` print. An option of a writer that changes the kind
 * of its output selects one of the writer's variants: the report's csv and html, the
 * systrace writer's text. A variant's own name may be given to tc_conv_write (and -o)
 * instead: "report-html" is the report writer with html set for that output alone.
 */
typedef enum tc_option_type {
    TC_OPT_BOOL,     /* "1", "0", "true", "false", "yes", "no"; NULL means "1" */
    TC_OPT_INT,      /* a count, K/M/G suffixes allowed, within the row's range */
    TC_OPT_FLOAT,    /* a number (the row's help says its form: "PX|N%", a percentage) */
    TC_OPT_SIZE,     /* bytes, K/M/G suffixes allowed */
    TC_OPT_DURATION, /* a time with its unit (since, until: "1.5s", "250ms") */
    TC_OPT_ENUM,     /* one of the row's choices */
    TC_OPT_STRING,   /* any text; NULL unsets it */
    TC_OPT_PATH      /* a file's path */
} tc_option_type;

typedef struct tc_option_info {
    const char *name;           /* the key of tc_conv_set_option, and the command's --NAME */
    int type;                   /* tc_option_type */
    const char *type_name;      /* "bool", "int", "float", "size", "duration", "enum", "string", "path" */
    const char *const *choices; /* enum: the values, NULL-terminated; else NULL */
    uint64_t min, max;          /* int, size: the range (max 0: what the type holds, min 1) */
    const char *default_value;  /* as text for display ("wall", "10000", "64G"); NULL: none, or off */
    const char *arg;            /* how --help names the value ("N", "wall|cpu", "PX|N%"); NULL for a bool */
    const char *help;           /* one line */
    int open_time;              /* 1: read by the open, so set before tc_conv_open (else TC_ERR_STATE) */
    int limit;                  /* 1: a resource limit (what a server keeps for itself) */
    int repeatable;             /* 1: each use adds a value (thread, focus, ignore); NULL clears them */
    int hidden;                 /* 1: for tests, left out of --help */
    int selection;              /* 1: part of the selection every output records (thread, since,
                                   weight, ...: tc_conv_selection_text). Since 0.5. */
} tc_option_info;

/* The options of format (from tc_format_at or tc_diff_format_at), in order; format NULL:
 * those every conversion takes. NULL past the end, or for a pointer of neither. A key may
 * be an option of several formats (weight): its rows differ only in help and default. */
TC_API const tc_option_info *tc_option_at(const tc_format_info *format, size_t index);

typedef struct tc_variant_info {
    const char *name;      /* what tc_conv_write and -o take ("report-html"); a format's first
                              variant, its default output, has the format's own name */
    const char *format;    /* the writer (or diff format) it is an output of: "report" */
    const char *extension; /* of a default output name ("report.html"); no two variants of the
                              writers share one, so one input's outputs never share a name */
    const char *mime;      /* its media type: "text/html; charset=utf-8" */
    const char *mark;      /* text that every such output holds in its first or last 8 KiB, by
                              which a file is known as traceconv's own (NULL: none) */
    const char *option;    /* the bool option that selects it when the writer is named ("html");
                              NULL for the first */
    int inline_view;       /* 1: a browser shows it (a page, an image) rather than saves it */
    int is_binary;         /* 1: not text */
    const char *aliases;   /* other names tc_conv_write and -o take for it ("svg"), comma
                              separated, or NULL. Since 0.5. */
} tc_variant_info;

/* The output variants of a writer or diff format, in order, the default first; NULL past
 * the end (and for a reader). */
TC_API const tc_variant_info *tc_variant_at(const tc_format_info *format, size_t index);

/* The variant tc_conv_write(c, writer, ...) writes with c's options (c may be NULL: the
 * defaults): "report" with html set is report-html, a variant's own name is itself. Any
 * case; NULL for a name that is no writer's nor variant's. */
TC_API const tc_variant_info *tc_output_variant(const tc_conv *c, const char *writer);

/* ---- a conversion ------------------------------------------------------- */

TC_API tc_conv *tc_conv_new(void);
TC_API void tc_conv_free(tc_conv *c);

/*
 * Options are key/value strings so that new writers do not change the ABI. The keys,
 * their types, ranges or choices, defaults and help are the tables of tc_option_at
 * (`traceconv --help` prints them). An unknown key is TC_ERR_USAGE naming the keys, a
 * bad value TC_ERR_USAGE saying what the option takes; a NULL value means "1" for a
 * bool. What reads an option decides when it may be set:
 *
 *   open-time (tc_option_info.open_time; NEW only: after an open, TC_ERR_STATE naming it)
 *     the limits max-input, max-string, max-threads, max-methods, max-json, max-events;
 *     "read-chunk" (tests); "mapping", the rhea reader's method mapping (default: looked
 *     for beside an input opened by path, never for tc_conv_open_memory or stdin; a given
 *     file that cannot be read is an error); "deobfuscate", the path of a ProGuard/R8
 *     mapping.txt: every method of the input (any reader) is renamed back to its source
 *     name before any writer sees it; open-time because the open reads and indexes the
 *     mapping: one that cannot be read or does not parse fails the open (file, offset
 *     and line in the message), before any output is begun; never looked for beside the
 *     input; figures deobf-* (doc/deobfuscation.md)
 *
 *   write-time (NEW or OPEN, until the write): the others, such as
 *     "strict"       a warning is an error (TC_ERR_STRICT)
 *     "max-output"   bytes of each output (compressed bytes for gzip writers), or "Nx":
 *                    N times the input's size after gzip is inflated, never less than
 *                    4M. An output that would pass it fails alone with TC_ERR_LIMIT
 *                    ("output larger than --max-output (64M)"); nothing more is computed
 *                    for it
 *     and each writer's own (weight, title, sort, threshold, ...). Two options that
 *     select two variants of one writer (report's "csv" and "html") are TC_ERR_USAGE.
 */
TC_API int tc_conv_set_option(tc_conv *c, const char *key, const char *value);

/* Progress: called now and then during long conversions (done/total in input
 * bytes), also while the outputs are written (done == total then: about every
 * 4 MiB of output or 64Ki call paths walked). A non-zero return cancels the
 * conversion: tc_conv_write stops, writes nothing more and returns
 * TC_ERR_CANCELED ("canceled"). NULL fn: none. */
typedef int (*tc_progress_fn)(void *user, uint64_t done, uint64_t total);
TC_API void tc_conv_set_progress(tc_conv *c, tc_progress_fn fn, void *user);

/*
 * Open the input: a path, or "-" for stdin. gzip input is decompressed
 * transparently. format NULL means: detect from content.
 */
TC_API int tc_conv_open(tc_conv *c, const char *path, const char *format);

/* A legacy split trace given as both halves (name.key, name.data). tc_conv_open
 * finds the other half by itself when given one of them. The half that begins
 * with the key section ("*version") is read first, in whichever order they come. */
TC_API int tc_conv_open_pair(tc_conv *c, const char *key_path, const char *data_path);

/* The same for input already in memory (borrowed until tc_conv_free). name is
 * used in messages and as the default process name; NULL means "(memory)". */
TC_API int tc_conv_open_memory(tc_conv *c, const void *data, size_t size, const char *name, const char *format);

/*
 * One timeline (traceconv merge; doc/merge.md): c reads a method trace and the
 * system trace of the same run (atrace/systrace or Chrome JSON) as one input, in the
 * system trace's clock, with the method trace's threads on the system trace's threads
 * (by tid, else by name), so every writer shows both on one track per thread. a and b
 * are two OPEN conversions (tc_conv_open...), in either order: the one read by the
 * systrace or json reader is the system trace (both or neither: a is the method trace).
 * c takes them (they are freed with c, also when this call fails) and reads both here.
 * offset: NULL to place the method trace by the system trace's clock-sync markers, else
 * the signed time added to the method trace's timestamps ("-1.5s", "250ms", "40us",
 * "1000ns"). tc_conv_input_summary(c) says which clock rule was used, and its precision.
 */
TC_API int tc_conv_open_merge(tc_conv *c, tc_conv *a, tc_conv *b, const char *offset);

/* Convert the opened input with the named writer into out (flushed, not closed). */
TC_API int tc_conv_write(tc_conv *c, const char *writer, FILE *out);

/* The same through a caller's function: it gets the output in pieces, in
 * order, and returns 0, or non-zero after setting errno to say why (0: EIO);
 * the conversion then fails with TC_ERR_IO and "cannot write the output: <why>".
 * gzip writers (pprof) call it with the compressed bytes. */
typedef int (*tc_write_fn)(void *user, const void *buf, size_t len);
TC_API int tc_conv_write_to(tc_conv *c, const char *writer, tc_write_fn fn, void *user);

/*
 * Several outputs from one read of the input: each tc_output names a writer
 * and exactly one sink (fp, flushed not closed; or fn/user as for
 * tc_conv_write_to). The input is read and normalized once; the call tree is
 * built once for every aggregating writer (pprof, folded) and the global time
 * order is merged once for every writer that needs it (systrace), only when
 * one of the outputs does. Every output is byte for byte what a conversion of
 * the same input with that writer alone would write, given the options it
 * reads (an option that only another writer of the call reads is not an
 * unused-option warning here, as it would be for that writer alone).
 *
 * Each output has its own writer state, sink and status: a writer or sink
 * that fails (a full disk, a writer that cannot express the input) stops
 * that output only; the others are completed. A failure of the input itself
 * (malformed, a limit, cancel, strict) fails every output. A failed output is
 * handed nothing after its failure: one that fails before its first 64 KiB
 * (any failure while the input is first read) gets no byte, not even a gzip
 * stream's header. On return,
 * outs[i].status is the output's TC_OK or error and outs[i].error its
 * message ("" when it succeeded; owned by c, valid until tc_conv_free). The
 * call returns TC_OK when every output succeeded, else the status of the
 * first failed output in array order, whose message is also tc_conv_error's
 * (naming its writer: "in.trace: pprof: cannot write the output: No space
 * left on device").
 *
 * The same writer may appear more than once (each gets its own state; the
 * sinks must be distinct). Write-time options are the call's and each writer
 * reads its own (tc_option_at); an output named by a variant ("report-html")
 * has that variant's option set for itself alone, so "report" and
 * "report-html" may be outputs of one call. An option is "used" when the reader
 * or any writer of the call reads it.
 *
 * State: like tc_conv_write, one call converts once (OPEN -> WRITTEN; before
 * an open or after a conversion: TC_ERR_STATE). A call refused before it
 * starts (n == 0, NULL outs, an unknown writer, an output with no sink or
 * with both fp and fn) is TC_ERR_USAGE and leaves the object OPEN; a refused
 * call sets every status to its return value. tc_conv_write and
 * tc_conv_write_to are the one-output case of this call.
 */
typedef struct tc_output {
    const char *writer;  /* in: "json", "perfetto", ... */
    FILE *fp;            /* in: the output, or NULL and */
    tc_write_fn fn;      /* in: a caller's function ... */
    void *user;          /* ... and its argument */
    int status;          /* out: TC_OK or this output's error */
    const char *error;   /* out: this output's error message, "" on success */
} tc_output;
TC_API int tc_conv_write_many(tc_conv *c, tc_output *outs, size_t n);

/* The message of the most recent failed call on c, one line without trailing
 * newline; "" when no call failed yet. A successful call does not clear it. */
TC_API const char *tc_conv_error(const tc_conv *c);

/* The reader chosen by tc_conv_open ("art"), or NULL. */
TC_API const char *tc_conv_reader_name(const tc_conv *c);

/* The default file extension of a writer ("json") or of a variant ("report-html":
 * "report.html"), or NULL. */
TC_API const char *tc_writer_extension(const char *writer);

/*
 * After tc_conv_write: named figures of the conversion. kind is
 * TC_FIG_COUNT (records, events, threads, methods), TC_FIG_REPAIR (a
 * documented repair such as frames reconstructed at the start),
 * TC_FIG_WARNING (an anomaly in the input; an error under "strict") or
 * TC_FIG_NOTE (what the input's format implies, such as a timeline of thread
 * CPU time; not a defect, so "strict" ignores it).
 */
enum { TC_FIG_COUNT = 0, TC_FIG_REPAIR = 1, TC_FIG_WARNING = 2, TC_FIG_NOTE = 3 };
typedef struct tc_figure {
    const char *name;
    uint64_t value;
    int kind;
} tc_figure;
TC_API size_t tc_conv_figures(const tc_conv *c, tc_figure *out, size_t max);

/*
 * After tc_conv_open: the input records the reader read and did not convert, by kind (a
 * Chrome JSON phase "O", an event name), the first kinds met; the figure not-converted
 * counts them all, so their sum may be less. Stores at most max entries (kind is valid
 * until the next tc_conv_open or tc_conv_free) and returns how many kinds there are.
 */
typedef struct tc_kind_count {
    const char *kind;
    uint64_t count;
} tc_kind_count;
TC_API size_t tc_conv_not_converted(const tc_conv *c, tc_kind_count *out, size_t max);

/* Human-readable warning messages kept so far (the first few), NULL past the end. */
TC_API const char *tc_conv_warning_at(const tc_conv *c, size_t index);

/* A short description of the input, e.g. "art v3 non-streaming, clock dual". */
TC_API const char *tc_conv_input_summary(const tc_conv *c);

/* The selection c's options make, named as the options are, the text every output records
 * ("thread main, since 1.2s, until 1.5s"; "" for none): the options given that are marked
 * tc_option_info.selection, in the tables' order. Into out (len bytes); its length. Since 0.5. */
TC_API size_t tc_conv_selection_text(const tc_conv *c, char *out, size_t len);

/* The input's threads and time span, for a caller that offers a choice of them (serve's
 * thread picker and time range). Since 0.3. After a conversion
 * (tc_conv_write*, success or not: what was read), the tables of the input as it was read
 * (a thread that option "thread" left out has records 0, as writers see it); before one,
 * no thread and a duration of 0. */
typedef struct tc_thread_info {
    uint64_t tid;        /* the thread's id as the input gives it (what "thread" takes) */
    int64_t pid;         /* its process's id; -1 unknown */
    const char *name;    /* the name every output shows ("Thread-<tid>" when the input has
                            none); owned by c, valid until tc_conv_free */
    uint64_t records;    /* the input's records of this thread (0: listed, never traced) */
} tc_thread_info;
/* The index-th thread in the tables' order: 1 and *out filled, or 0 past the end. */
TC_API int tc_conv_thread_at(const tc_conv *c, size_t index, tc_thread_info *out);
/* The trace's duration in ns: from its start (time 0 of every output, and of "since" and
 * "until") to its end (doc/formats.md, Conversion rules: trace start and end); 0 before a conversion. */
TC_API int64_t tc_conv_duration_ns(const tc_conv *c);
/* After tc_conv_write: advice about the input, one line each (no newline), NULL past the
 * end: most class names look minified by R8/ProGuard and option "deobfuscate" was not given
 * (the rule: src/analysis/tc_codegroup.h); idle waits are most of the kept threads' wall time
 * and option "ignore-idle" was not given (after an aggregating output). Since 0.3. */
TC_API const char *tc_conv_hint_at(const tc_conv *c, size_t index);

/* After tc_conv_write with an output that aggregates (flame graph, report, pprof, folded, ...):
 * the app's package and the evidence it was found by, as the flame graph's legend says it:
 * "com.example.shop (MainActivity.onCreate called by Instrumentation.callActivityOnCreate)",
 * "... (process name)", "... (inferred: 38% of the wall time)", "... (given)". NULL: no such
 * output, or no app found. Owned by c. Since 0.6. */
TC_API const char *tc_conv_app(const tc_conv *c);

/* After tc_conv_write: the views' order of the threads (the flame graph's towers, the
 * report's sections, speedscope's profiles): the main thread first (the thread named main,
 * else the one whose tid is the pid, else the busiest), then the others by their time outside
 * idle waits (the "ignore-idle" list), threads without records last. 1 and *index (for
 * tc_conv_thread_at) for rank < the thread count, else 0. Without an aggregating output the
 * tables' order. Since 0.6. */
TC_API int tc_conv_thread_order_at(const tc_conv *c, size_t rank, size_t *index);

/* ---- comparing two inputs (traceconv diff) --------------------------------- */

/*
 * The per-method change from BASE to NEW: base and next are two tc_conv
 * objects, each with its input opened (OPEN); they may be of different
 * formats (an ART trace and a systrace capture of the same app). Each is
 * read and normalized exactly as for a conversion, with its own open-time
 * and reading options (strict, max-depth, the limits); the output options
 * are NEW's (next's): "weight" (the clock of the order, and the flame
 * graph's widths), "sort" (incl, default: by |change of inclusive time|;
 * excl; calls; name), and for the flame graph "title", "width", "minwidth",
 * "inverted", "colors", "hash", "negate" (0/1: swap red and blue, as
 * flamegraph.pl --negate) and "merge-threads" (default 1 here: one tree for
 * all threads; 0: a tower per "name-tid"). Each conv's options are checked
 * against this list (unused-option warnings, errors under strict).
 *
 * format:
 *   "text"        a table: per method calls, inclusive and exclusive wall
 *                 (and thread-CPU when both inputs have it) time in µs for
 *                 BASE, NEW, the signed change and the change in % of BASE;
 *                 methods of one input only show "-" on the other side and
 *                 "new" or "gone" for the percentage
 *   "csv"         the same rows, with a fixed header (doc/diff-and-reports.md, "Diff")
 *   "flamegraph"  a differential flame graph SVG: widths from NEW, red
 *                 where NEW is slower, blue where faster (flamegraph.pl on
 *                 difffolded.pl's output of the two folded stacks)
 * Methods are matched by name (doc/diff-and-reports.md, "Matching and options").
 *
 * State: a diff that starts consumes both convs (OPEN -> WRITTEN, success
 * or not); one refused before it starts (unknown format, the same conv
 * twice, a conv not OPEN: TC_ERR_USAGE / TC_ERR_STATE) leaves them as they
 * were. The call's message is next's tc_conv_error; when an input failed it
 * names which: "BASE: a.trace: art: offset 0x1f4a: truncated record" (that
 * conv's own tc_conv_error has the message without the prefix). Figures and
 * warnings of each input stay readable on its conv.
 */
TC_API int tc_diff_write(tc_conv *base, tc_conv *next, const char *format, FILE *out);
TC_API int tc_diff_write_to(tc_conv *base, tc_conv *next, const char *format, tc_write_fn fn, void *user);

/* ---- probing ------------------------------------------------------------- */

typedef struct tc_probe_score {
    const char *reader;
    int score; /* 0..100 */
} tc_probe_score;

/* Scores of every reader for the input at path; returns how many were filled. */
TC_API int tc_probe_file(const char *path, tc_probe_score *out, size_t max, char *err, size_t errlen);

/* The same for an input in memory (gzip is inflated first, within the default
 * max-input). name, which may be NULL, is only a hint, as a file's name is:
 * NULL scores the content alone. The caller keeps data alive during the call. */
TC_API int tc_probe_memory(const void *data, size_t size, const char *name, tc_probe_score *out, size_t max,
                           char *err, size_t errlen);

/* ---- decompression guard ----------------------------------------------------- */

/* The guard the library puts on every decompression it makes (gzip input, the zlib
 * stream of atrace -z), for an application that decompresses by other means (traceconv
 * batch's archive members, read with libarchive): call it as the bytes come, with the
 * bytes made so far (expanded) from the compressed bytes taken so far (consumed; equal for
 * stored data). TC_OK while expanded stays within max_input (0: the default, 64G) and
 * within 200:1 of consumed beyond 256 MiB; else TC_ERR_LIMIT with the library's message
 * in err: "<what> expands more than 200:1 (N bytes from M): refused as a decompression
 * bomb", "<what> expands beyond max-input (N bytes); raise it with --max-input" or, for
 * stored data, "<what> is larger than max-input ...". what NULL: "the input". */
TC_API int tc_check_expansion(uint64_t expanded, uint64_t consumed, uint64_t max_input, const char *what, char *err,
                              size_t errlen);

/* ---- mapped input that changes while it is read (SIGBUS) ------------------ */

/*
 * A file that shrinks while it is mapped and read raises SIGBUS when a page
 * past its new end is touched; by default that kills the process. The
 * library therefore installs one SIGBUS handler (SA_SIGINFO, process-wide,
 * once: on the first tc_conv_open of a regular file, tc_probe_file or
 * tc_guard_mapping), keeping the action that was installed before it. A
 * fault inside a mapping it watches gets zero pages mapped over the rest of
 * that mapping (the reading goes on over zeros; nothing unwinds), and the
 * call that read it fails with TC_ERR_IO "input changed while reading"
 * (offset: where the bytes were gone) and no output; other conversions go
 * on. A fault anywhere else goes to the previous action (a handler, or the
 * default: the process dies of SIGBUS as it would have without the library).
 * An application that installs its own SIGBUS handler after that must pass
 * the faults it does not handle to the action sigaction() returned as the
 * old one (call its sa_sigaction with the same arguments), or the library's
 * guard stops working. The library watches the files it maps itself (inputs
 * opened by path, a deobfuscation mapping); a caller that maps input itself
 * and hands it over with tc_conv_open_memory / tc_probe_memory registers the
 * mapping for as long as the bytes are read:
 *
 *     void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
 *     tc_guard_mapping(p, len);               // before the first read
 *     ... tc_probe_memory / tc_conv_open_memory(c, p, ...) / tc_conv_write ...
 *     if (tc_unguard_mapping(p) == 1) ...     // it changed; before the munmap
 *     munmap(p, len);
 *
 * tc_guard_mapping: addr and len describe (part of) one read-only mapping of
 * a file; TC_OK, TC_ERR_LIMIT when 1024 mappings are already watched (the
 * mapping is then not watched), TC_ERR_USAGE for NULL or 0. Any pointer into
 * a watched mapping given to tc_conv_open_memory or tc_probe_memory is
 * watched for that conversion. tc_mapping_changed(addr): 1 when a fault
 * replaced part of the mapping registered at addr, 0 when not.
 * tc_unguard_mapping(addr): the same answer, and stops watching (call it
 * before munmap: the address may be reused at once). Both return
 * TC_ERR_USAGE for an address that was not registered. Thread-safe and
 * lock-free; callable from any thread.
 */
TC_API int tc_guard_mapping(const void *addr, size_t len);
TC_API int tc_mapping_changed(const void *addr);
TC_API int tc_unguard_mapping(const void *addr);

#ifdef __cplusplus
}
#endif
#endif
