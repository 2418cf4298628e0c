/*
 * api_multi.c - tc_conv_write_many through the public API only: several
 * outputs from one read of the input.
 *
 * The model every check compares with is the one-writer conversion: for each
 * input, a fresh tc_conv per writer converts it alone (tc_conv_write_to), and
 * each output of one write_many call over the same input must be byte for
 * byte what that conversion wrote, with the same status. Then: a sink that
 * fails (a full disk) stops its own output only; a writer that refuses the
 * input stops its own only; the state machine; options counted as used when
 * any writer of the call reads them.
 */
#include <traceconv.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#ifndef TC_SOURCE_DIR
#define TC_SOURCE_DIR "."
#endif

static const char *const writers[] = {"json", "folded", "pprof", "perfetto", "systrace", "ir",
                                      "flamegraph", "report", "dot", "speedscope"};
#define N_WRITERS (sizeof writers / sizeof *writers)

/* ---- sinks ---- */

typedef struct buffer {
    unsigned char *p;
    size_t len, cap;
    int calls;
    int fail_at;    /* > 0: the call with this number (1 = the first) and every later one fail */
    int fail_errno; /* with this errno */
} buffer;

static int to_buffer(void *user, const void *p, size_t n)
{
    buffer *b = user;
    b->calls++;
    if (b->fail_at && b->calls >= b->fail_at) {
        errno = b->fail_errno;
        return -1;
    }
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static void buffer_free(buffer *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int same_bytes(const buffer *a, const buffer *b)
{
    return a->len == b->len && (a->len == 0 || !memcmp(a->p, b->p, a->len));
}

/* ---- the model: one writer alone ---- */

typedef struct option {
    const char *key, *value;
} option;

/* Which writers read an option (the options an output is converted alone with). */
static int writer_reads(const char *writer, const char *key)
{
    if (!strcmp(key, "weight"))
        return !strcmp(writer, "folded") || !strcmp(writer, "flamegraph") || !strcmp(writer, "report") ||
               !strcmp(writer, "dot") || !strcmp(writer, "speedscope");
    if (!strcmp(key, "sort") || !strcmp(key, "csv") || !strcmp(key, "html"))
        return !strcmp(writer, "report");
    if (!strcmp(key, "threshold"))
        return !strcmp(writer, "dot");
    if (!strcmp(key, "no-thread"))
        return !strcmp(writer, "folded");
    if (!strcmp(key, "merge-threads"))
        return !strcmp(writer, "pprof") || !strcmp(writer, "flamegraph");
    if (!strcmp(key, "title") || !strcmp(key, "width") || !strcmp(key, "minwidth") || !strcmp(key, "inverted") ||
        !strcmp(key, "colors") || !strcmp(key, "hash"))
        return !strcmp(writer, "flamegraph");
    if (!strcmp(key, "text"))
        return !strcmp(writer, "systrace");
    return 1; /* a core option */
}

static tc_conv *open_with(const char *path, const option *opts, size_t n_opts, const char *only_for)
{
    tc_conv *c = tc_conv_new();
    for (size_t i = 0; i < n_opts; i++)
        if (!only_for || writer_reads(only_for, opts[i].key))
            CHECK_EQ_INT(tc_conv_set_option(c, opts[i].key, opts[i].value), TC_OK);
    if (tc_conv_open(c, path, NULL) != TC_OK) {
        fprintf(stderr, "%s: cannot open: %s\n", path, tc_conv_error(c));
        CHECK(!"the input opens");
        tc_conv_free(c);
        return NULL;
    }
    return c;
}

/* The output and status of writer converting path alone. */
static int convert_alone(const char *path, const char *writer, const option *opts, size_t n_opts, buffer *out)
{
    tc_conv *c = open_with(path, opts, n_opts, writer);
    if (!c)
        return TC_ERR_IO;
    int rc = tc_conv_write_to(c, writer, to_buffer, out);
    tc_conv_free(c);
    return rc;
}

/* ---- inputs: the project's corpus (art, and a systrace and a rhea trace), the JSON and IR test inputs ---- */

static char *inputs[256];
static size_t n_inputs, n_missing;

static void add_dir(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && n_inputs < sizeof inputs / sizeof *inputs) {
        size_t n = strlen(e->d_name), k = strlen(suffix);
        if (n <= k || strcmp(e->d_name + n - k, suffix))
            continue;
        char *p = malloc(strlen(dir) + n + 2);
        sprintf(p, "%s/%s", dir, e->d_name);
        inputs[n_inputs++] = p;
    }
    closedir(d);
}

static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { /* the project's own inputs: test_all_writers_equal_separate_conversions fails */
        fprintf(stderr, "%s is missing\n", path);
        n_missing++;
        return;
    }
    fclose(f);
    inputs[n_inputs++] = strdup(path);
}

static void find_inputs(void)
{
    add_dir(TC_SOURCE_DIR "/corpus", ".trace");
    add_dir(TC_SOURCE_DIR "/tests/json", ".json");
    add_dir(TC_SOURCE_DIR "/tests/ir", ".ir.txt");
    add_file(TC_SOURCE_DIR "/corpus/systrace/capture-notgid.txt");
    add_file(TC_SOURCE_DIR "/corpus/rhea/v1-allthreads.rhea-atrace.txt");
}

/* ---- every writer at once equals every writer alone ---- */

/* order[i]: which writer is the i-th output (the order must not matter). */
static void check_all_writers(const char *path, const option *opts, size_t n_opts, const size_t *order)
{
    buffer alone[N_WRITERS], many[N_WRITERS];
    int alone_rc[N_WRITERS];
    tc_output outs[N_WRITERS];
    memset(alone, 0, sizeof alone);
    memset(many, 0, sizeof many);
    for (size_t w = 0; w < N_WRITERS; w++)
        alone_rc[w] = convert_alone(path, writers[w], opts, n_opts, &alone[w]);
    tc_conv *c = open_with(path, opts, n_opts, NULL);
    if (!c)
        return;
    for (size_t i = 0; i < N_WRITERS; i++)
        outs[i] = (tc_output){.writer = writers[order[i]], .fn = to_buffer, .user = &many[order[i]],
                              .status = 12345};
    int rc = tc_conv_write_many(c, outs, N_WRITERS);
    int first_failure = TC_OK;
    for (size_t i = 0; i < N_WRITERS; i++) {
        size_t w = order[i];
        if (first_failure == TC_OK)
            first_failure = outs[i].status;
        if (outs[i].status != alone_rc[w] || !same_bytes(&alone[w], &many[w]))
            fprintf(stderr, "%s -> %s: status %d (alone %d), %zu bytes (alone %zu)%s\n", path, writers[w],
                    outs[i].status, alone_rc[w], many[w].len, alone[w].len,
                    same_bytes(&alone[w], &many[w]) ? "" : ", bytes differ");
        CHECK_EQ_INT(outs[i].status, alone_rc[w]);
        CHECK(same_bytes(&alone[w], &many[w]));
        CHECK(outs[i].error != NULL && (outs[i].status == TC_OK) == (outs[i].error[0] == 0));
    }
    CHECK_EQ_INT(rc, first_failure);
    tc_conv_free(c);
    for (size_t w = 0; w < N_WRITERS; w++) {
        buffer_free(&alone[w]);
        buffer_free(&many[w]);
    }
}

/* The writers in their order, or reversed. */
static void writer_order(size_t *order, int reversed)
{
    for (size_t i = 0; i < N_WRITERS; i++)
        order[i] = reversed ? N_WRITERS - 1 - i : i;
}

static void test_all_writers_equal_separate_conversions(void)
{
    size_t forward[N_WRITERS], backward[N_WRITERS];
    writer_order(forward, 0);
    writer_order(backward, 1);
    CHECK(n_inputs >= 20); /* the corpus was found */
    CHECK(n_missing == 0); /* and the systrace and rhea traces */
    for (size_t i = 0; i < n_inputs; i++) {
        check_all_writers(inputs[i], NULL, 0, forward);
        check_all_writers(inputs[i], NULL, 0, backward);
    }
}

/* An ART trace of the project corpus: it has thread CPU time for weight cpu. */
static int is_art_trace(const char *path)
{
    size_t n = strlen(path);
    return strstr(path, "/corpus/") && n > 6 && !strcmp(path + n - 6, ".trace");
}

/* Writer options are the call's: each writer reads its own, and none of them is "unused". */
static void test_writer_options_apply_per_writer(void)
{
    static const option opts[] = {{"weight", "cpu"}, {"no-thread", "1"}, {"merge-threads", "1"}, {"text", "1"},
                                  {"process-name", "com.example.multi"}, {"title", "t<&>"}, {"width", "800"},
                                  {"minwidth", "1%"}, {"inverted", "1"}, {"colors", "hot"}, {"hash", "1"},
                                  {"sort", "calls"}, {"csv", "1"}, {"threshold", "0.5"}};
    size_t forward[N_WRITERS];
    writer_order(forward, 0);
    for (size_t i = 0; i < n_inputs; i++)
        if (is_art_trace(inputs[i]))
            check_all_writers(inputs[i], opts, sizeof opts / sizeof *opts, forward);
}

/* The report's other form: html instead of csv (the two together are refused). */
static void test_report_html_applies_per_writer(void)
{
    static const option opts[] = {{"weight", "cpu"}, {"merge-threads", "1"}, {"sort", "excl"}, {"html", "1"}};
    size_t backward[N_WRITERS];
    writer_order(backward, 1);
    for (size_t i = 0; i < n_inputs; i++)
        if (is_art_trace(inputs[i]))
            check_all_writers(inputs[i], opts, sizeof opts / sizeof *opts, backward);
}

static const char *input_named(const char *name)
{
    for (size_t i = 0; i < n_inputs; i++)
        if (strstr(inputs[i], name))
            return inputs[i];
    CHECK(!"the input is in the corpus");
    return inputs[0];
}

/* ---- a failing output stops alone ---- */

/* fail_at: which call of the failing output's sink fails first (0 or beyond: its last one). */
static void check_one_sink_fails(const char *path, size_t failing, int fail_at)
{
    buffer alone[N_WRITERS], many[N_WRITERS];
    tc_output outs[N_WRITERS];
    memset(alone, 0, sizeof alone);
    memset(many, 0, sizeof many);
    tc_conv *c = open_with(path, NULL, 0, NULL);
    if (!c)
        return;
    for (size_t w = 0; w < N_WRITERS; w++) {
        CHECK_EQ_INT(convert_alone(path, writers[w], NULL, 0, &alone[w]), TC_OK);
        outs[w] = (tc_output){.writer = writers[w], .fn = to_buffer, .user = &many[w]};
    }
    /* perfetto and pprof write this input in one call: then the second is the last */
    many[failing].fail_at = fail_at && fail_at < alone[failing].calls ? fail_at : alone[failing].calls;
    many[failing].fail_errno = ENOSPC;
    CHECK_EQ_INT(tc_conv_write_many(c, outs, N_WRITERS), TC_ERR_IO);
    char expected[256];
    snprintf(expected, sizeof expected, ": %s: cannot write the output: %s", writers[failing], strerror(ENOSPC));
    for (size_t w = 0; w < N_WRITERS; w++) {
        if (w == failing) {
            CHECK_EQ_INT(outs[w].status, TC_ERR_IO);
            CHECK(strstr(outs[w].error, expected) != NULL);
            CHECK_EQ_STR(tc_conv_error(c), outs[w].error); /* the call's error names the failing writer */
            CHECK(many[w].calls <= many[w].fail_at); /* nothing more was tried after the failure */
        } else {
            CHECK_EQ_INT(outs[w].status, TC_OK);
            CHECK_EQ_STR(outs[w].error, "");
            CHECK(same_bytes(&alone[w], &many[w])); /* complete and correct */
        }
    }
    if (!strstr(tc_conv_error(c), expected))
        fprintf(stderr, "failing %s: error '%s'\n", writers[failing], tc_conv_error(c));
    tc_conv_free(c);
    for (size_t w = 0; w < N_WRITERS; w++) {
        buffer_free(&alone[w]);
        buffer_free(&many[w]);
    }
}

static void test_full_disk_stops_one_output(void)
{
    /* the largest corpus trace: every writer's output is beyond the sink's 64 KiB buffer */
    const char *path = input_named("recursion-10000.trace");
    for (size_t w = 0; w < N_WRITERS; w++) {
        check_one_sink_fails(path, w, 1); /* the first write fails */
        check_one_sink_fails(path, w, 2); /* the second (most outputs are written in several) */
        check_one_sink_fails(path, w, 0); /* the last */
    }
    check_one_sink_fails(input_named("app-startup.trace"), 0, 1);
}

/* A FILE that cannot take the output (/dev/full) among callback outputs. */
static void test_full_file_stops_one_output(void)
{
    const char *path = input_named("app-startup.trace");
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        return; /* not Linux */
    buffer alone = {0}, ok = {0};
    CHECK_EQ_INT(convert_alone(path, "folded", NULL, 0, &alone), TC_OK);
    tc_conv *c = open_with(path, NULL, 0, NULL);
    tc_output outs[] = {{.writer = "perfetto", .fp = full}, {.writer = "folded", .fn = to_buffer, .user = &ok}};
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_IO);
    CHECK_EQ_INT(outs[0].status, TC_ERR_IO);
    CHECK(strstr(outs[0].error, "perfetto: cannot write the output") != NULL);
    CHECK_EQ_INT(outs[1].status, TC_OK);
    CHECK(same_bytes(&alone, &ok));
    tc_conv_free(c);
    fclose(full);
    buffer_free(&alone);
    buffer_free(&ok);
}

/* A writer that refuses the input (folded weighted by a CPU clock the input lacks) stops alone. */
static void test_writer_error_stops_one_output(void)
{
    const char *path = input_named("tests/json/system.json");
    static const option opts[] = {{"weight", "cpu"}};
    buffer alone = {0}, json = {0}, folded = {0};
    CHECK_EQ_INT(convert_alone(path, "json", opts, 1, &alone), TC_OK);
    tc_conv *c = open_with(path, opts, 1, NULL);
    tc_output outs[] = {{.writer = "folded", .fn = to_buffer, .user = &folded},
                        {.writer = "json", .fn = to_buffer, .user = &json}};
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_UNSUPPORTED);
    CHECK_EQ_INT(outs[0].status, TC_ERR_UNSUPPORTED);
    CHECK(strstr(outs[0].error, "folded: the input has no thread-CPU clock") != NULL);
    CHECK_EQ_STR(tc_conv_error(c), outs[0].error);
    CHECK_EQ_INT(outs[1].status, TC_OK);
    CHECK(same_bytes(&alone, &json));
    tc_conv_free(c);
    buffer_free(&alone);
    buffer_free(&json);
    buffer_free(&folded);
}

/* ---- the state machine ---- */

static void test_state_machine(void)
{
    const char *path = input_named("app-startup.trace");
    buffer a = {0}, b = {0};
    tc_output outs[] = {{.writer = "json", .fn = to_buffer, .user = &a},
                        {.writer = "folded", .fn = to_buffer, .user = &b}};

    tc_conv *c = tc_conv_new(); /* before an open */
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_STATE);
    CHECK_EQ_INT(outs[0].status, TC_ERR_STATE);
    CHECK(strstr(tc_conv_error(c), "tc_conv_write_many before an input was opened") != NULL);
    tc_conv_free(c);

    c = open_with(path, NULL, 0, NULL); /* after a write */
    CHECK_EQ_INT(tc_conv_write_to(c, "json", to_buffer, &a), TC_OK);
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_STATE);
    CHECK(strstr(tc_conv_error(c), "already converted") != NULL);
    tc_conv_free(c);

    c = open_with(path, NULL, 0, NULL); /* a write after write_many */
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_OK);
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_STATE);
    CHECK_EQ_INT(tc_conv_write_to(c, "json", to_buffer, &a), TC_ERR_STATE);
    tc_conv_free(c);

    /* refused before it starts: the object stays OPEN and a corrected call converts */
    c = open_with(path, NULL, 0, NULL);
    size_t before = a.len;
    outs[1].writer = "jsn";
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_USAGE);
    CHECK(strstr(tc_conv_error(c), "unknown output format 'jsn'") != NULL);
    CHECK_EQ_INT(outs[0].status, TC_ERR_USAGE);
    CHECK_EQ_INT(outs[1].status, TC_ERR_USAGE);
    outs[1].writer = NULL;
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_USAGE);
    outs[1] = (tc_output){.writer = "folded", .fp = stdout, .fn = to_buffer, .user = &b}; /* two sinks */
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 0), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write_many(c, NULL, 2), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write_many(NULL, outs, 2), TC_ERR_USAGE);
    CHECK_EQ_INT(a.len, before); /* nothing was written */
    outs[1].fp = NULL;
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_OK);
    CHECK(a.len > before);
    tc_conv_free(c);
    buffer_free(&a);
    buffer_free(&b);
}

/* The same writer twice: two outputs, each complete. */
static void test_same_writer_twice(void)
{
    const char *path = input_named("app-startup.trace");
    buffer alone = {0}, one = {0}, two = {0};
    CHECK_EQ_INT(convert_alone(path, "pprof", NULL, 0, &alone), TC_OK);
    tc_conv *c = open_with(path, NULL, 0, NULL);
    tc_output outs[] = {{.writer = "pprof", .fn = to_buffer, .user = &one},
                        {.writer = "pprof", .fn = to_buffer, .user = &two}};
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_OK);
    CHECK(same_bytes(&alone, &one));
    CHECK(same_bytes(&alone, &two));
    tc_conv_free(c);
    buffer_free(&alone);
    buffer_free(&one);
    buffer_free(&two);
}

/* ---- options used by any writer of the call ---- */

static uint64_t figure(const tc_conv *c, const char *name)
{
    tc_figure fig[64];
    size_t n = tc_conv_figures(c, fig, 64);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fig[i].name, name))
            return fig[i].value;
    return UINT64_MAX;
}

static int write_pair(const char *a, const char *b, int strict, uint64_t *unused)
{
    buffer x = {0}, y = {0};
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "weight", "cpu"), TC_OK);
    if (strict)
        CHECK_EQ_INT(tc_conv_set_option(c, "strict", "1"), TC_OK);
    CHECK_EQ_INT(tc_conv_open(c, input_named("app-startup.trace"), NULL), TC_OK);
    tc_output outs[] = {{.writer = a, .fn = to_buffer, .user = &x}, {.writer = b, .fn = to_buffer, .user = &y}};
    int rc = tc_conv_write_many(c, outs, 2);
    *unused = figure(c, "unused-option");
    if (rc == TC_ERR_STRICT) {
        CHECK_EQ_INT(outs[0].status, TC_ERR_STRICT);
        CHECK_EQ_INT(outs[1].status, TC_ERR_STRICT);
        CHECK(strstr(tc_conv_error(c), "option --weight is not used by any of the json, perfetto writers") != NULL);
        CHECK_EQ_INT(x.len + y.len, 0);
    }
    tc_conv_free(c);
    buffer_free(&x);
    buffer_free(&y);
    return rc;
}

static void test_option_used_by_any_writer(void)
{
    uint64_t unused;
    CHECK_EQ_INT(write_pair("json", "folded", 1, &unused), TC_OK); /* folded reads weight */
    CHECK_EQ_INT(unused, 0);
    CHECK_EQ_INT(write_pair("pprof", "folded", 1, &unused), TC_OK);
    CHECK_EQ_INT(unused, 0);
    CHECK_EQ_INT(write_pair("json", "perfetto", 0, &unused), TC_OK); /* neither does */
    CHECK_EQ_INT(unused, 1);
    CHECK_EQ_INT(write_pair("json", "perfetto", 1, &unused), TC_ERR_STRICT);
}

/* ---- cancel: every output ---- */

static int cancel_at_end(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    return done == total;
}

static void test_cancel_stops_every_output(void)
{
    buffer a = {0}, b = {0};
    tc_conv *c = open_with(input_named("app-startup.trace"), NULL, 0, NULL);
    tc_conv_set_progress(c, cancel_at_end, NULL);
    tc_output outs[] = {{.writer = "json", .fn = to_buffer, .user = &a},
                        {.writer = "systrace", .fn = to_buffer, .user = &b}};
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_CANCELED);
    CHECK_EQ_INT(outs[0].status, TC_ERR_CANCELED);
    CHECK_EQ_INT(outs[1].status, TC_ERR_CANCELED);
    CHECK(strstr(outs[1].error, "systrace: canceled") != NULL);
    tc_conv_free(c);
    buffer_free(&a);
    buffer_free(&b);
}

int main(void)
{
    find_inputs();
    UNIT_RUN(test_all_writers_equal_separate_conversions);
    UNIT_RUN(test_writer_options_apply_per_writer);
    UNIT_RUN(test_report_html_applies_per_writer);
    UNIT_RUN(test_full_disk_stops_one_output);
    UNIT_RUN(test_full_file_stops_one_output);
    UNIT_RUN(test_writer_error_stops_one_output);
    UNIT_RUN(test_state_machine);
    UNIT_RUN(test_same_writer_twice);
    UNIT_RUN(test_option_used_by_any_writer);
    UNIT_RUN(test_cancel_stops_every_output);
    for (size_t i = 0; i < n_inputs; i++)
        free(inputs[i]);
    return UNIT_DONE();
}
