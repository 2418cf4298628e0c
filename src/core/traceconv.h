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
 * Every failing call returns a negative tc_status and leaves one message in
 * the error slot: "in.trace: art: offset 0x1f4a: truncated record".
 */
#ifndef TRACECONV_H
#define TRACECONV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_VERSION_STRING "0.1.0"

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
    TC_ERR_STRICT = -7       /* a warning under --strict */
} tc_status;

/* ---- the format registry ------------------------------------------------ */

typedef struct tc_format_info {
    const char *name;        /* "art", "json", ... */
    const char *description; /* "Android ART/Dalvik method trace" */
    const char *extensions;  /* comma separated, first is the default */
    int is_reader;           /* 1 reader, 0 writer */
    int is_binary;           /* writers: output is not text (do not send it to a terminal) */
} tc_format_info;

/* Readers first, then writers; NULL past the end. */
TC_API const tc_format_info *tc_format_at(size_t index);

/* ---- a conversion ------------------------------------------------------- */

typedef struct tc_conv tc_conv;

TC_API tc_conv *tc_conv_new(void);
TC_API void tc_conv_free(tc_conv *c);

/*
 * Options are key/value strings so that new writers do not change the ABI.
 * Known keys: "process-name" (string), "strict" (0/1), "no-thread" (0/1),
 * "weight" (wall|cpu), "max-depth" (integer), "merge-threads" (0/1),
 * "text" (0/1: systrace writes plain ftrace text instead of HTML),
 * "read-chunk" (bytes per read when spooling a stream; for tests),
 * "mapping" (path of a RheaTrace/btrace method mapping file; default: looked
 * for beside the input; a given file that cannot be read is an error), and the
 * resource limits "max-input" (bytes, K/M/G suffixes; default 64G),
 * "max-string" (default 64K), "max-threads" (default 1000000),
 * "max-methods" (default 50000000), "max-events" (input records; default
 * none). Unknown keys are a usage error.
 */
TC_API int tc_conv_set_option(tc_conv *c, const char *key, const char *value);

/* Progress: called now and then during long conversions. done/total in input bytes. */
typedef void (*tc_progress_fn)(void *user, uint64_t done, uint64_t total);
TC_API void tc_conv_set_progress(tc_conv *c, tc_progress_fn fn, void *user);

/*
 * Open the input: a path, or "-" for stdin. gzip input is decompressed
 * transparently. format NULL means: detect from content.
 */
TC_API int tc_conv_open(tc_conv *c, const char *path, const char *format);

/* A legacy split trace given as both halves (name.key, name.data). tc_conv_open
 * finds the other half by itself when given one of them. */
TC_API int tc_conv_open_pair(tc_conv *c, const char *key_path, const char *data_path);

/* The same for input already in memory (borrowed until tc_conv_free). name is
 * used in messages and as the default process name; NULL means "(memory)". */
TC_API int tc_conv_open_memory(tc_conv *c, const void *data, size_t size, const char *name, const char *format);

/* Convert the opened input with the named writer into out. */
TC_API int tc_conv_write(tc_conv *c, const char *writer, FILE *out);

/* The last error, one line without trailing newline; "" when none. */
TC_API const char *tc_conv_error(const tc_conv *c);

/* The reader chosen by tc_conv_open ("art"), or NULL. */
TC_API const char *tc_conv_reader_name(const tc_conv *c);

/* The default file extension of a writer ("json"), or NULL. */
TC_API const char *tc_writer_extension(const char *writer);

/*
 * After tc_conv_write: named figures of the conversion. kind is
 * TC_FIG_COUNT (records, events, threads, methods), TC_FIG_REPAIR (a
 * documented repair such as frames reconstructed at the start) or
 * TC_FIG_WARNING (an anomaly in the input; an error under "strict").
 */
enum { TC_FIG_COUNT = 0, TC_FIG_REPAIR = 1, TC_FIG_WARNING = 2 };
typedef struct tc_figure {
    const char *name;
    uint64_t value;
    int kind;
} tc_figure;
TC_API size_t tc_conv_figures(const tc_conv *c, tc_figure *out, size_t max);

/* Human-readable warning messages kept so far (the first few), NULL past the end. */
TC_API const char *tc_conv_warning_at(const tc_conv *c, size_t index);

/* A short description of the input, e.g. "art v3 non-streaming, clock dual". */
TC_API const char *tc_conv_input_summary(const tc_conv *c);

/* ---- probing ------------------------------------------------------------- */

typedef struct tc_probe_score {
    const char *reader;
    int score; /* 0..100 */
} tc_probe_score;

/* Scores of every reader for the input at path; returns how many were filled. */
TC_API int tc_probe_file(const char *path, tc_probe_score *out, size_t max, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
