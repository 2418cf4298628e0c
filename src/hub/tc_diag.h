/*
 * tc_diag.h - diagnostics: errors with file, format and offset, counted warnings, strict.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_DIAG_H
#define TC_TC_DIAG_H

#include "tc_base.h"

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
    X(NOT_CONVERTED, "not-converted", TC_FIG_WARNING)                   \
    X(GZIP_PADDING, "gzip-zero-padding", TC_FIG_NOTE)                   \
    X(THREADS_LEFT_OUT, "threads-left-out", TC_FIG_NOTE)                \
    X(EVENTS_LEFT_OUT, "events-left-out", TC_FIG_NOTE)                  \
    X(PROCESS_DISAGREES, "process-dump-disagrees", TC_FIG_WARNING)      \
    X(MERGE_CLAMPED, "merge-clamped", TC_FIG_REPAIR)                    \
    X(MERGE_UNMATCHED_THREAD, "merge-unmatched-thread", TC_FIG_WARNING) \
    X(MERGE_CLOCK_GUESS, "merge-clock-guess", TC_FIG_WARNING)            \
    X(MERGE_LEFT_OUT, "merge-left-out", TC_FIG_REPAIR)                   \
    X(MERGE_DISJOINT, "merge-disjoint", TC_FIG_WARNING)                  \
    X(SYSTEM_EVENTS, "sched-events", TC_FIG_COUNT)                      \
    X(SYSTEM_NOT_SHOWN, "sched-events-not-shown", TC_FIG_NOTE)         \
    X(SLICES_NOT_WEIGHED, "slices-not-weighed", TC_FIG_NOTE)

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
/* A kind that recurs (thousands of ends without a begin) leaves room for the others' messages. */
#define TCI_KEPT_PER_KIND 3

/* Input records a reader read and did not convert, by kind (a JSON phase "O", an event
 * name): the first TCI_LEFT_KINDS kinds met are named, the others only add to the figure
 * not-converted (which counts them all). */
#define TCI_LEFT_KINDS 12
#define TCI_LEFT_NAME_MAX 32
typedef struct tci_left_kind {
    char name[TCI_LEFT_NAME_MAX];
    uint64_t count;
} tci_left_kind;

typedef struct tci_diag {
    const char *input;                /* file name shown in messages */
    char error[1024];                 /* the one error line */
    uint64_t fig[TCI_FIG__COUNT];
    char *kept[TCI_MAX_KEPT_WARNINGS]; /* first warning messages, at most TCI_KEPT_PER_KIND of a kind */
    size_t n_kept;
    uint8_t kept_of[TCI_FIG__COUNT];   /* messages kept per figure */
    bool muted;                       /* pass 2: the same anomalies are not counted again */
    bool strict;
    tci_left_kind left[TCI_LEFT_KINDS]; /* records not converted, by kind (tci_not_converted) */
    const char *left_module;          /* the reader that counted the first of them, and where */
    uint64_t left_offset;
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

/* One input record of this kind (len bytes of text; cut to fit a name) was read and not
 * converted: counted in the figure not-converted and by kind. Readers call it in pass 1 (it
 * counts nothing while muted); normalize says it once at the end of pass 1
 * (tci_report_not_converted). */
void tci_not_converted(tci_diag *d, const char *module, uint64_t offset, const char *kind, size_t len);
/* "O 1, ( 2, ) 1, 3 of other kinds" into buf (at least 64 bytes; whole entries only), or "". */
const char *tci_not_converted_text(const tci_diag *d, char *buf, size_t size);
/* The one warning that says them all, at the first one's offset ("12 input records not
 * converted (O 10, ( 2)"): kept among the warnings, the figure unchanged. */
void tci_report_not_converted(tci_diag *d);

/* How the CLI summary and every output that lists figures head a kind: "repaired", "warnings", "notes". */
const char *tci_figure_heading(int kind);
/* The figures of one kind as the CLI summary lists them: "2 exit-without-enter, 1 open-at-end",
 * or "none"; into buf (TCI_FIGURES_TEXT_MAX bytes hold every figure), which it returns. The one
 * form for every output that names them (report, pprof's comments). */
#define TCI_FIGURES_TEXT_MAX 2048
const char *tci_figures_text(const tci_diag *d, int kind, char *buf, size_t size);

#endif /* TC_TC_DIAG_H */
