/* fuzz_target.c - the body of every fuzz target: decode the control block
 * (fuzz_target.h), convert the rest with the chosen writer and options. The
 * target's file only names its reader (fuzz_reader.c, fuzz_convert.c). */
#include "fuzz_target.h"

#include "traceconv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The registry's writers, looked up once: the registry lists readers first
 * and is fixed at build time, so a new writer joins the rotation by itself.
 * After them, the diff's formats (tc_diff_format_at), as "diff:FORMAT": the
 * input's first half is BASE, the whole input NEW. */
static const char *writers[64];
static size_t n_writers;
static char diff_names[16][48];
/* After those, traceconv merge ("merge:FORMAT", tc_conv_open_merge) into the timelines: the
 * input's first half as the method trace, the whole input as the system trace. */
static const char *const merge_names[] = {"merge:perfetto", "merge:json", "merge:systrace"};

static void find_writers(void)
{
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)) && n_writers < sizeof writers / sizeof *writers; i++)
        if (!f->is_reader)
            writers[n_writers++] = f->name;
    for (size_t i = 0; n_writers && (f = tc_diff_format_at(i)) && i < 16; i++)
        if (n_writers < sizeof writers / sizeof *writers) {
            snprintf(diff_names[i], sizeof diff_names[i], "diff:%s", f->name);
            writers[n_writers++] = diff_names[i];
        }
    for (size_t i = 0; n_writers && i < sizeof merge_names / sizeof *merge_names; i++)
        if (n_writers < sizeof writers / sizeof *writers)
            writers[n_writers++] = merge_names[i];
    if (!n_writers) {
        fprintf(stderr, "fuzz: the registry lists no writer\n");
        abort();
    }
}

size_t fuzz_writer_count(void)
{
    if (!n_writers)
        find_writers();
    return n_writers;
}

const char *fuzz_writer_name(size_t index) { return writers[index % fuzz_writer_count()]; }

/* One option bit or one limit value: the library options it sets. */
struct choice {
    unsigned value, mask;
    const char *label;
    const char *keys[3];
    const char *values[3];
};

static const struct choice choices[] = {
    {FUZZ_OPT_WEIGHT_CPU, FUZZ_OPT_WEIGHT_CPU, "weight-cpu", {"weight"}, {"cpu"}},
    {FUZZ_OPT_NO_THREAD, FUZZ_OPT_NO_THREAD, "no-thread", {"no-thread"}, {"1"}},
    {FUZZ_OPT_MERGE_THREADS, FUZZ_OPT_MERGE_THREADS, "merge-threads", {"merge-threads"}, {"1"}},
    {FUZZ_OPT_TEXT, FUZZ_OPT_TEXT, "text", {"text"}, {"1"}},
    {FUZZ_OPT_MAX_DEPTH, FUZZ_OPT_MAX_DEPTH, "max-depth=3", {"max-depth"}, {"3"}},
    {FUZZ_LIMIT_STRICT, 7u << FUZZ_LIMIT_SHIFT, "strict", {"strict"}, {"1"}},
    {FUZZ_LIMIT_MAX_OUTPUT, 7u << FUZZ_LIMIT_SHIFT, "max-output=2K", {"max-output"}, {"2K"}},
    {FUZZ_LIMIT_MAX_STRING, 7u << FUZZ_LIMIT_SHIFT, "max-string=16", {"max-string"}, {"16"}},
    {FUZZ_LIMIT_TIGHT, 7u << FUZZ_LIMIT_SHIFT, "max-threads=4,max-methods=64,max-events=512",
     {"max-threads", "max-methods", "max-events"}, {"4", "64", "512"}},
    {FUZZ_LIMIT_TIGHT, 7u << FUZZ_LIMIT_SHIFT, "max-json=4K", {"max-json"}, {"4K"}},
    {FUZZ_VARIANT_1, 7u << FUZZ_LIMIT_SHIFT, "inverted,minwidth=0,colors=hot", {"inverted", "minwidth", "colors"},
     {"1", "0", "hot"}},
    {FUZZ_VARIANT_1, 7u << FUZZ_LIMIT_SHIFT, "title=markup,process-name=markup", {"title", "process-name"},
     {"<&>\"]]></script>\xff", "</title><!--\x1b[2J\xff"}},
    {FUZZ_VARIANT_2, 7u << FUZZ_LIMIT_SHIFT, "hash,minwidth=5%,width=200", {"hash", "minwidth", "width"},
     {"1", "5%", "200"}},
    {FUZZ_VARIANT_1, 7u << FUZZ_LIMIT_SHIFT, "csv,sort=name,threshold=0", {"csv", "sort", "threshold"}, {"1", "name", "0"}},
    {FUZZ_VARIANT_2, 7u << FUZZ_LIMIT_SHIFT, "sort=calls,threshold=100", {"sort", "threshold"}, {"calls", "100"}},
    {FUZZ_VARIANT_3, 7u << FUZZ_LIMIT_SHIFT, "sort=excl,threshold=0.5", {"sort", "threshold"}, {"excl", "0.5"}},
    {FUZZ_VARIANT_2, 7u << FUZZ_LIMIT_SHIFT, "html", {"html"}, {"1"}},
    {FUZZ_VARIANT_3, 7u << FUZZ_LIMIT_SHIFT, "negate", {"negate"}, {"1"}},
    {FUZZ_VARIANT_3, 7u << FUZZ_LIMIT_SHIFT, "app-package=markup", {"app-package"}, {"a.<&>]]></text>\xff\x1b"}},
    {FUZZ_VARIANT_2, 7u << FUZZ_LIMIT_SHIFT, "reverse", {"reverse"}, {"1"}}, /* with html, hash: every reader of it */
    {FUZZ_VARIANT_2, 7u << FUZZ_LIMIT_SHIFT, "threads=2", {"threads"}, {"2"}}, /* a writing thread (handoff.c) */
    /* the selection (every writer): a window and globs that match, so most inputs still convert */
    {FUZZ_VARIANT_1, 7u << FUZZ_LIMIT_SHIFT, "thread=*,until=50us,ignore=*a*", {"thread", "until", "ignore"},
     {"*", "50us", "*a*"}},
    {FUZZ_VARIANT_2, 7u << FUZZ_LIMIT_SHIFT, "since=1ns,focus=*,ignore-idle", {"since", "focus", "ignore-idle"},
     {"1ns", "*", "1"}},
    {FUZZ_VARIANT_3, 7u << FUZZ_LIMIT_SHIFT, "since=1us,until=1ms,ignore=*n*", {"since", "until", "ignore"},
     {"1us", "1ms", "*n*"}}, /* a pattern that names no method is an error: one that most inputs have */
    /* the callers of every outermost frame (not with reverse: variant 2's) */
    {FUZZ_VARIANT_3, 7u << FUZZ_LIMIT_SHIFT, "callers=*", {"callers"}, {"*"}},
};
#define N_CHOICES (sizeof choices / sizeof *choices)

/* The options no choice sets, on purpose: each is fuzzed elsewhere or means nothing here. */
static const struct {
    const char *key, *why;
} not_chosen[] = {
    {"max-input", "set for every input (64M: keeps one input fast; a bomb is still refused)"},
    {"deobfuscate", "fuzz_deobf.c's input is the mapping it names"},
    {"mapping", "a side file named by path; the input is one buffer (tests/unit/rhea_side_files.c)"},
    {"read-chunk", "the read size of a spooled stream; the input is in memory"},
};

const char *fuzz_option_reached(const char *key)
{
    for (size_t i = 0; i < N_CHOICES; i++)
        for (size_t k = 0; k < 3 && choices[i].keys[k]; k++)
            if (!strcmp(choices[i].keys[k], key))
                return choices[i].label;
    for (size_t i = 0; i < sizeof not_chosen / sizeof *not_chosen; i++)
        if (!strcmp(not_chosen[i].key, key))
            return not_chosen[i].why;
    return NULL;
}

void fuzz_describe(char *buf, size_t len, size_t writer, unsigned options)
{
    int n = snprintf(buf, len, "writer=%s options=", fuzz_writer_name(writer));
    const char *sep = "";
    for (size_t i = 0; i < N_CHOICES; i++)
        if ((options & choices[i].mask) == choices[i].value && n >= 0 && (size_t)n < len) {
            n += snprintf(buf + n, len - (size_t)n, "%s%s", sep, choices[i].label);
            sep = ",";
        }
    if (!*sep && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "default");
}

/* Every option is set before the open: that order is valid whatever the
 * library decides about options given after it. */
static void set_options(tc_conv *c, unsigned options)
{
    tc_conv_set_option(c, "max-input", "64M"); /* keep one input fast: a bomb is still refused */
    for (size_t i = 0; i < N_CHOICES; i++)
        if ((options & choices[i].mask) == choices[i].value)
            for (size_t k = 0; k < 3 && choices[i].keys[k]; k++)
                if (tc_conv_set_option(c, choices[i].keys[k], choices[i].values[k]) != TC_OK) {
                    fprintf(stderr, "fuzz: option %s=%s refused: %s\n", choices[i].keys[k], choices[i].values[k],
                            tc_conv_error(c));
                    abort();
                }
}

/* traceconv.h: "every failing call returns a negative tc_status and leaves
 * one message in the error slot". Out of memory may have no words left. */
static void check_contract(const tc_conv *c, int rc, const char *call)
{
    if (rc == TC_OK)
        return;
    const char *msg = tc_conv_error(c);
    if (rc > 0 || (rc != TC_ERR_NOMEM && (!msg || !*msg))) {
        fprintf(stderr, "fuzz: %s returned %d with the error message \"%s\"\n", call, rc, msg ? msg : "(null)");
        abort();
    }
}

/* diff:FORMAT: the first half of the input against the whole of it; every
 * failure (of either input, or the diff) must leave its message on NEW. */
static bool fuzz_diff_one(const uint8_t *trace, size_t size, const char *format, unsigned options, FILE *sink)
{
    tc_conv *base = tc_conv_new(), *next = tc_conv_new();
    bool opened = false;
    if (base && next) {
        set_options(base, options);
        set_options(next, options);
        int rb = tc_conv_open_memory(base, trace, size / 2, "fuzz.base", fuzz_reader);
        check_contract(base, rb, "tc_conv_open_memory (base)");
        int rn = tc_conv_open_memory(next, trace, size, "fuzz.input", fuzz_reader);
        check_contract(next, rn, "tc_conv_open_memory");
        opened = rn == TC_OK;
        if (rb == TC_OK && rn == TC_OK)
            check_contract(next, tc_diff_write(base, next, format, sink), "tc_diff_write");
    }
    tc_conv_free(base);
    tc_conv_free(next);
    return opened;
}

/* merge:FORMAT: the first half of the input on the timeline of the whole of it, placed by
 * its clock-sync markers, or (no-thread set) by an offset, so that inputs without markers
 * reach the join too; every failure must leave its message on the merged conversion. */
static bool fuzz_merge_one(const uint8_t *trace, size_t size, const char *format, unsigned options, FILE *sink)
{
    tc_conv *c = tc_conv_new(), *method = tc_conv_new(), *system = tc_conv_new();
    bool opened = false;
    if (c && method && system) {
        set_options(c, options);
        set_options(method, options);
        set_options(system, options);
        int rm = tc_conv_open_memory(method, trace, size / 2, "fuzz.method", fuzz_reader);
        check_contract(method, rm, "tc_conv_open_memory (method)");
        int rs = tc_conv_open_memory(system, trace, size, "fuzz.input", fuzz_reader);
        check_contract(system, rs, "tc_conv_open_memory");
        opened = rs == TC_OK;
        if (rm == TC_OK && rs == TC_OK) {
            int rc = tc_conv_open_merge(c, method, system, (options & FUZZ_OPT_NO_THREAD) ? "-1ms" : NULL);
            method = system = NULL; /* c has them */
            check_contract(c, rc, "tc_conv_open_merge");
            if (rc == TC_OK)
                check_contract(c, tc_conv_write(c, format, sink), "tc_conv_write (merge)");
        }
    }
    tc_conv_free(c);
    tc_conv_free(method);
    tc_conv_free(system);
    return opened;
}

/* What batch does (tc_probe_memory, then a conversion that probes again) must
 * agree: the reader a probing open chose is the unique best score of the
 * public probe over the same bytes and name, and every score is 0..100. */
static void check_probe_agrees(const tc_conv *c, const uint8_t *trace, size_t size)
{
    tc_probe_score scores[64];
    char err[256];
    int n = tc_probe_memory(trace, size, "fuzz.input", scores, 64, err, sizeof err);
    const char *chosen = tc_conv_reader_name(c), *best = NULL;
    int top = 0;
    for (int i = 0; i < n; i++) {
        if (scores[i].score < 0 || scores[i].score > 100) {
            fprintf(stderr, "fuzz: tc_probe_memory: %s scores %d\n", scores[i].reader, scores[i].score);
            abort();
        }
        if (scores[i].score > top)
            top = scores[i].score, best = scores[i].reader;
    }
    if (n <= 0 || !chosen || !best || strcmp(best, chosen)) {
        fprintf(stderr, "fuzz: tc_probe_memory returned %d (%s) and picks %s; the open chose %s\n", n,
                n < 0 ? err : "ok", best ? best : "no reader", chosen ? chosen : "(null)");
        abort();
    }
}

bool fuzz_convert_one(const uint8_t *trace, size_t size, size_t writer, unsigned options)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    const char *name = fuzz_writer_name(writer);
    if (!strncmp(name, "diff:", 5))
        return fuzz_diff_one(trace, size, name + 5, options, sink);
    if (!strncmp(name, "merge:", 6))
        return fuzz_merge_one(trace, size, name + 6, options, sink);
    tc_conv *c = tc_conv_new();
    if (!c)
        return false;
    set_options(c, options);
    if (fuzz_prepare && fuzz_prepare(c, &trace, &size) != 0) {
        tc_conv_free(c);
        return false;
    }
    int rc = tc_conv_open_memory(c, trace, size, "fuzz.input", fuzz_reader);
    check_contract(c, rc, "tc_conv_open_memory");
    bool opened = rc == TC_OK;
    if (rc == TC_OK && !fuzz_reader)
        check_probe_agrees(c, trace, size);
    if (rc == TC_OK) {
        rc = tc_conv_write(c, fuzz_writer_name(writer), sink);
        check_contract(c, rc, "tc_conv_write");
    }
    tc_conv_free(c);
    return opened;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FUZZ_CONTROL_SIZE)
        return 0;
    fuzz_convert_one(data + FUZZ_CONTROL_SIZE, size - FUZZ_CONTROL_SIZE, data[0], data[1]);
    return 0;
}
