/* fuzz_target.h - what every fuzz target and replay program shares.
 *
 * A fuzz input is a control block followed by the trace (the idea of FFmpeg's
 * tools/target_dec_fuzzer.c): the fuzzer mutates the choice of writer and
 * options together with the bytes, so every writer and every option path is
 * fuzzed, not only the one a target happened to hard-code.
 *
 *   byte 0   the writer: its index among the registry's writers (tc_format_at),
 *            then the diff's formats ("diff:text", "diff:csv", "diff:flamegraph":
 *            the first half of the trace diffed against all of it), then traceconv
 *            merge's timelines ("merge:perfetto", "merge:json", "merge:systrace": the
 *            first half put on the timeline of all of it), modulo their
 *            number, so a new writer is fuzzed without a change here
 *   byte 1   options: bits 0-4 are FUZZ_OPT_*; bits 5-7 one limit, FUZZ_LIMIT_* (4-7),
 *            or a set of writer options, FUZZ_VARIANT_* (1-3; 0 none): a limit stops
 *            most inputs early, so most go without. A variant sets the options of
 *            several writers at once; the others count them as unused (never
 *            strict, which is a limit value)
 *   byte 2.. the trace, opened from memory with the target's reader
 *
 * Only the public header is used: the fuzzers exercise what an embedder can.
 */
#ifndef FUZZ_TARGET_H
#define FUZZ_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUZZ_CONTROL_SIZE 2

enum fuzz_option {
    FUZZ_OPT_WEIGHT_CPU = 1 << 0,    /* weight=cpu */
    FUZZ_OPT_NO_THREAD = 1 << 1,     /* no-thread */
    FUZZ_OPT_MERGE_THREADS = 1 << 2, /* merge-threads */
    FUZZ_OPT_TEXT = 1 << 3,          /* text */
    FUZZ_OPT_MAX_DEPTH = 1 << 4,     /* max-depth=3: frames get dropped */
    FUZZ_LIMIT_SHIFT = 5,
    FUZZ_VARIANT_1 = 1 << 5,         /* flamegraph: inverted, minwidth=0, colors=hot, a title with markup;
                                      * a process name with markup; report: csv, sort=name; dot:
                                      * threshold=0 (every edge); thread=*, until=50us, ignore=*a* */
    FUZZ_VARIANT_2 = 2 << 5,         /* flamegraph: hash, minwidth=5%, width=200; report: sort=calls,
                                      * html; dot: threshold=100; since=1ns, focus=*, ignore-idle */
    FUZZ_VARIANT_3 = 3 << 5,         /* report: sort=excl; dot: threshold=0.5; diff: negate; since=1us,
                                      * until=1ms, ignore=*.take */
    FUZZ_LIMIT_MAX_OUTPUT = 4 << 5,  /* max-output=2K: every writer stops at its first failed write */
    FUZZ_LIMIT_STRICT = 5 << 5,      /* strict: every warning is an error */
    FUZZ_LIMIT_MAX_STRING = 6 << 5,  /* max-string=16: names hit the limit */
    FUZZ_LIMIT_TIGHT = 7 << 5        /* max-threads=4, max-methods=64, max-events=512, max-json=4K */
};

/* Option sets a plain trace (a seed, without a control block) is replayed
 * with, each through every writer: the defaults, then every option and
 * every limit in at least one set. Strict goes only with max-depth, which
 * every writer uses: an option a writer ignores may be an error under strict. */
#define FUZZ_SEED_OPTION_SETS                                                                                  \
    {0u, FUZZ_OPT_WEIGHT_CPU | FUZZ_OPT_MERGE_THREADS | FUZZ_OPT_TEXT | FUZZ_OPT_MAX_DEPTH,                    \
     FUZZ_OPT_NO_THREAD | FUZZ_LIMIT_MAX_STRING, FUZZ_OPT_MAX_DEPTH | FUZZ_LIMIT_STRICT, FUZZ_LIMIT_TIGHT,      \
     FUZZ_OPT_MERGE_THREADS | FUZZ_VARIANT_1, FUZZ_OPT_WEIGHT_CPU | FUZZ_VARIANT_2, FUZZ_VARIANT_3,              \
     FUZZ_OPT_MAX_DEPTH | FUZZ_LIMIT_MAX_OUTPUT}

/* The reader a target fuzzes ("art"); NULL: detect it from content, as the command does. */
extern const char *const fuzz_reader;

/* A target may turn its input into the trace and options of the conversion
 * (fuzz_deobf.c: the input is a mapping, the trace is made from it); the
 * others define none (a weak symbol) and their input is the trace. Non-zero:
 * the input is skipped. */
struct tc_conv;
int fuzz_prepare(struct tc_conv *c, const uint8_t **trace, size_t *size) __attribute__((weak));

/* The number of writers in the registry (at least 1). */
size_t fuzz_writer_count(void);

/* The name of writer index modulo fuzz_writer_count(). */
const char *fuzz_writer_name(size_t index);

/* One conversion of trace with the given writer and options. Aborts when the
 * library breaks its own contract (a failure without a message); a memory
 * error is the sanitizers' to report. Whether the input opened (read and
 * normalized) at all: false when the reader refuses it. */
bool fuzz_convert_one(const uint8_t *trace, size_t size, size_t writer, unsigned options);

/* How the fuzzers reach a library option: the label of a choice of byte 1 that sets it
 * ("inverted,minwidth=0,colors=hot"), or why none does; NULL: not reached (replay
 * --check-options fails, so a new option of the tables gets a choice). */
const char *fuzz_option_reached(const char *key);

/* "writer=pprof options=weight-cpu,strict" for messages. */
void fuzz_describe(char *buf, size_t len, size_t writer, unsigned options);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
