/*
 * api_contract.c - the library contract of traceconv.h, through the public
 * API only: the state machine (each misuse and each recovery), open-time and
 * write-time options, the latest error, status strings, the version, cancel,
 * the write callback and a full disk.
 *
 * Inputs are built here as Chrome JSON text, so what the output must contain
 * follows from how they were built.
 */
#include <traceconv.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

/* ---- inputs and outputs ---- */

/* A Chrome JSON trace of n nested-then-closed slices on one thread: 2n events. */
static char *json_trace(size_t n)
{
    size_t cap = 128 + n * 120, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                "{\"ph\":\"B\",\"name\":\"slice%zu\",\"pid\":7,\"tid\":7,\"ts\":%zu},\n"
                                "{\"ph\":\"E\",\"pid\":7,\"tid\":7,\"ts\":%zu}%s\n",
                                i % 50, 10 * i, 10 * i + 5, i + 1 < n ? "," : "");
    snprintf(s + len, cap - len, "]}\n");
    return s;
}

static char *small_json;
static char *big_json; /* more records than normalize reports progress after (0x40000) */
static char *medium_json; /* output well beyond the sink's 64 KiB buffer */

static const char *const writers[] = {"json", "folded", "pprof", "perfetto", "systrace", "ir",
                                      "flamegraph", "report", "dot"};
#define N_WRITERS (sizeof writers / sizeof *writers)

typedef struct buffer {
    unsigned char *p;
    size_t len, cap;
    int calls;
    int fail_errno; /* non-zero: every call fails with this errno (-1: errno left 0) */
} buffer;

static int to_buffer(void *user, const void *p, size_t n)
{
    buffer *b = user;
    b->calls++;
    if (b->fail_errno) {
        errno = b->fail_errno > 0 ? b->fail_errno : 0; /* -1: fail without saying why */
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

static tc_conv *open_small(void)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "json"), TC_OK);
    return c;
}

/* The whole output of writer for the small input, through a FILE (tmpfile). */
static unsigned char *convert_to_file(const char *writer, size_t *len)
{
    tc_conv *c = open_small();
    FILE *fp = tmpfile();
    CHECK_EQ_INT(tc_conv_write(c, writer, fp), TC_OK);
    tc_conv_free(c);
    long n = ftell(fp);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    rewind(fp);
    *len = fread(p, 1, (size_t)n, fp);
    fclose(fp);
    return p;
}

static int contains(const buffer *b, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= b->len; i++)
        if (!memcmp(b->p + i, needle, k))
            return 1;
    return 0;
}

static FILE *null_out(void) { return fopen("/dev/null", "w"); }

/* ---- recovery: a failed call leaves the object usable ---- */

static void test_bad_option_then_good_conversion(void)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "no-such-option", "1"), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_set_option(c, "max-depth", "deep"), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "json"), TC_OK);
    FILE *out = null_out();
    CHECK_EQ_INT(tc_conv_write(c, "json", out), TC_OK);
    fclose(out);
    tc_conv_free(c);
}

static void test_unknown_writer_then_good_writer(void)
{
    tc_conv *c = open_small();
    FILE *out = null_out();
    CHECK_EQ_INT(tc_conv_write(c, "jsn", out), TC_ERR_USAGE);
    CHECK(strstr(tc_conv_error(c), "jsn") != NULL);
    CHECK_EQ_INT(tc_conv_write(c, "json", out), TC_OK);
    fclose(out);
    tc_conv_free(c);
}

static void test_failed_open_then_open_again(void)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_open(c, "no/such/dir/missing.trace", NULL), TC_ERR_IO);
    CHECK(strstr(tc_conv_error(c), "missing.trace") != NULL);
    static const char garbage[] = "\x01\x02\x03\xfe\xff\x00\x7f\x80 no reader knows these bytes";
    CHECK(tc_conv_open_memory(c, garbage, sizeof garbage - 1, "garbage.bin", NULL) < 0);
    CHECK(tc_conv_open_memory(c, garbage, sizeof garbage - 1, "garbage.bin", "art") < 0);
    CHECK(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "no-such-reader") == TC_ERR_USAGE);
    CHECK(tc_conv_reader_name(c) == NULL);
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", NULL), TC_OK);
    CHECK_EQ_STR(tc_conv_reader_name(c), "json");
    buffer b = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", to_buffer, &b), TC_OK);
    CHECK(contains(&b, "slice0"));
    free(b.p);
    tc_conv_free(c);
}

/* ---- misuse: a clear status, never a crash ---- */

static void test_misuse_returns_state(void)
{
    tc_conv *c = tc_conv_new();
    FILE *out = null_out();
    CHECK_EQ_INT(tc_conv_write(c, "json", out), TC_ERR_STATE);
    CHECK(strstr(tc_conv_error(c), "open") != NULL);
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "json"), TC_OK);
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "again.json", "json"), TC_ERR_STATE);
    CHECK(strstr(tc_conv_error(c), "already open") != NULL);
    CHECK_EQ_INT(tc_conv_write(c, "json", out), TC_OK); /* the refused second open changed nothing */
    CHECK_EQ_INT(tc_conv_write(c, "json", out), TC_ERR_STATE);
    CHECK(strstr(tc_conv_error(c), "already converted") != NULL);
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "json"), TC_ERR_STATE);
    CHECK_EQ_INT(tc_conv_set_option(c, "process-name", "late"), TC_ERR_STATE);
    fclose(out);
    tc_conv_free(c);
}

static void test_null_arguments(void)
{
    FILE *out = null_out();
    CHECK_EQ_INT(tc_conv_open(NULL, "x.trace", NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open_pair(NULL, "x.key", "x.data"), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open_memory(NULL, "", 0, NULL, NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write(NULL, "json", out), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write_to(NULL, "json", to_buffer, NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_set_option(NULL, "strict", "1"), TC_ERR_USAGE);
    CHECK(tc_conv_error(NULL) != NULL);
    CHECK(tc_conv_reader_name(NULL) == NULL);
    CHECK(tc_conv_figures(NULL, NULL, 0) == 0);
    CHECK(tc_conv_warning_at(NULL, 0) == NULL);
    CHECK(tc_conv_input_summary(NULL) != NULL);
    CHECK(tc_writer_extension(NULL) == NULL);
    tc_conv_set_progress(NULL, NULL, NULL);
    tc_conv_free(NULL);

    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, NULL, "1"), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open(c, NULL, NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open_pair(c, "x.key", NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open_memory(c, NULL, 10, "x", NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "json"), TC_OK);
    CHECK_EQ_INT(tc_conv_write(c, NULL, out), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write(c, "json", NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_conv_write_to(c, "json", NULL, NULL), TC_ERR_USAGE);
    CHECK(strstr(tc_conv_error(c), "NULL") != NULL);
    CHECK_EQ_INT(tc_conv_write(c, "json", out), TC_OK); /* the refused calls changed nothing */
    tc_conv_free(c);
    fclose(out);
}

/* ---- options before and after open ---- */

static void test_open_time_option_after_open(void)
{
    static const char *const open_time[][2] = {
        {"mapping", "m.txt"}, {"max-input", "1G"},    {"max-string", "1K"}, {"max-threads", "10"},
        {"max-methods", "10"}, {"max-json", "1M"},    {"max-events", "10"}, {"read-chunk", "4K"}};
    tc_conv *c = open_small();
    for (size_t i = 0; i < sizeof open_time / sizeof *open_time; i++) {
        CHECK_EQ_INT(tc_conv_set_option(c, open_time[i][0], open_time[i][1]), TC_ERR_STATE);
        CHECK(strstr(tc_conv_error(c), open_time[i][0]) != NULL);
    }
    /* ignored after open: the limit of 10 events did not apply */
    buffer b = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "json", to_buffer, &b), TC_OK);
    free(b.p);
    tc_conv_free(c);

    /* the same limit set before the open applies */
    c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "max-events", "10"), TC_OK);
    int rc = tc_conv_open_memory(c, small_json, strlen(small_json), "small.json", "json");
    if (rc == TC_OK) {
        FILE *out = null_out();
        rc = tc_conv_write(c, "json", out);
        fclose(out);
    }
    CHECK(rc < 0);
    tc_conv_free(c);
}

static void test_write_time_option_after_open(void)
{
    static const char *const write_time[][2] = {{"weight", "wall"},   {"no-thread", "1"}, {"merge-threads", "0"},
                                                {"text", "0"},        {"max-depth", "100"}, {"strict", "0"},
                                                {"process-name", "x"}};
    tc_conv *c = open_small();
    for (size_t i = 0; i < sizeof write_time / sizeof *write_time; i++)
        CHECK_EQ_INT(tc_conv_set_option(c, write_time[i][0], write_time[i][1]), TC_OK);
    tc_conv_free(c);

    /* an ART trace's one process takes the name set after the open */
    c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_open(c, TC_SOURCE_DIR "/corpus/app-startup.trace", NULL), TC_OK);
    CHECK_EQ_INT(tc_conv_set_option(c, "process-name", "com.example.after.open"), TC_OK);
    buffer b = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "json", to_buffer, &b), TC_OK);
    CHECK(contains(&b, "com.example.after.open"));
    free(b.p);
    tc_conv_free(c);

    /* no-thread set after open still merges the threads of folded output */
    c = open_small();
    CHECK_EQ_INT(tc_conv_set_option(c, "no-thread", "1"), TC_OK);
    b = (buffer){0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", to_buffer, &b), TC_OK);
    CHECK(b.len > 0 && !contains(&b, "thread"));
    CHECK(contains(&b, "slice1"));
    free(b.p);
    tc_conv_free(c);
}

/* ---- the error slot: the latest failure ---- */

static void test_error_is_latest(void)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_STR(tc_conv_error(c), "");
    CHECK_EQ_INT(tc_conv_set_option(c, "first-bad-option", "1"), TC_ERR_USAGE);
    CHECK(strstr(tc_conv_error(c), "first-bad-option") != NULL);
    CHECK_EQ_INT(tc_conv_set_option(c, "second-bad-option", "1"), TC_ERR_USAGE);
    CHECK(strstr(tc_conv_error(c), "second-bad-option") != NULL);
    CHECK(strstr(tc_conv_error(c), "first-bad-option") == NULL);
    CHECK_EQ_INT(tc_conv_open(c, "missing-input.trace", NULL), TC_ERR_IO);
    CHECK(strstr(tc_conv_error(c), "missing-input.trace") != NULL);
    tc_conv_free(c);
}

static void test_status_strings(void)
{
    static const int all[] = {TC_OK, TC_EOF, TC_ERR_IO, TC_ERR_FORMAT, TC_ERR_NOMEM, TC_ERR_USAGE,
                              TC_ERR_LIMIT, TC_ERR_UNSUPPORTED, TC_ERR_STRICT, TC_ERR_STATE, TC_ERR_CANCELED,
                              TC_ERR_NO_TRACE, TC_ERR_EMPTY_SELECTION};
    size_t n = sizeof all / sizeof *all;
    for (size_t i = 0; i < n; i++) {
        const char *s = tc_status_string(all[i]);
        CHECK(s != NULL && s[0] != 0);
        CHECK(strcmp(s, tc_status_string(-1000)) != 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(s, tc_status_string(all[j])) != 0);
    }
    CHECK(tc_status_string(-1000) != NULL);
    CHECK_EQ_STR(tc_status_string(TC_ERR_CANCELED), "canceled");
}

static void test_version(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TC_VERSION_MAJOR, TC_VERSION_MINOR, TC_VERSION_PATCH);
    CHECK_EQ_STR(TC_VERSION_STRING, want);
    CHECK_EQ_STR(tc_version_string(), want);
    CHECK_EQ_INT(TC_VERSION_NUMBER, TC_VERSION_MAJOR * 10000 + TC_VERSION_MINOR * 100 + TC_VERSION_PATCH);
    CHECK_EQ_INT(tc_version_number(), TC_VERSION_NUMBER);
#ifdef TC_CMAKE_PROJECT_VERSION
    CHECK_EQ_STR(TC_CMAKE_PROJECT_VERSION, want); /* CMake's project(VERSION) reads the header */
#else
    CHECK(!"TC_CMAKE_PROJECT_VERSION is not defined by tests/unit/api_contract.cmake");
#endif
}

/* ---- cancel ---- */

typedef struct cancel_at {
    int calls, stop_at; /* return non-zero on call number stop_at (1-based) */
} cancel_at;

static int cancel_progress(void *user, uint64_t done, uint64_t total)
{
    cancel_at *k = user;
    (void)done;
    (void)total;
    return ++k->calls >= k->stop_at;
}

static void test_cancel(void)
{
    for (size_t i = 0; i < N_WRITERS; i++) {
        /* during pass 1 of a big input: nothing reaches the output (pass 1 is the
         * same for every writer: two of them are enough) */
        if (i > 1)
            goto small;
        tc_conv *c = tc_conv_new();
        CHECK_EQ_INT(tc_conv_open_memory(c, big_json, strlen(big_json), "big.json", "json"), TC_OK);
        cancel_at k = {0, 1};
        tc_conv_set_progress(c, cancel_progress, &k);
        buffer b = {0};
        CHECK_EQ_INT(tc_conv_write_to(c, writers[i], to_buffer, &b), TC_ERR_CANCELED);
        CHECK_EQ_INT(k.calls, 1);
        CHECK_EQ_INT(b.len, 0);
        CHECK(strstr(tc_conv_error(c), "canceled") != NULL);
        free(b.p);
        tc_conv_free(c);

    small: /* at the last progress call (small input): the writer's finish is not run, nothing written */
        c = open_small();
        k = (cancel_at){0, 1};
        tc_conv_set_progress(c, cancel_progress, &k);
        b = (buffer){0};
        CHECK_EQ_INT(tc_conv_write_to(c, writers[i], to_buffer, &b), TC_ERR_CANCELED);
        CHECK_EQ_INT(b.len, 0);
        free(b.p);
        tc_conv_free(c);
    }
    /* a callback that never cancels changes nothing */
    tc_conv *c = open_small();
    cancel_at k = {0, 1 << 30};
    tc_conv_set_progress(c, cancel_progress, &k);
    buffer b = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "json", to_buffer, &b), TC_OK);
    CHECK(k.calls >= 1 && b.len > 0);
    free(b.p);
    tc_conv_free(c);
}

/* ---- the write callback and the FILE give the same bytes ---- */

static void test_write_callback_equals_file(void)
{
    for (size_t i = 0; i < N_WRITERS; i++) {
        size_t want_len;
        unsigned char *want = convert_to_file(writers[i], &want_len);
        tc_conv *c = open_small();
        buffer b = {0};
        CHECK_EQ_INT(tc_conv_write_to(c, writers[i], to_buffer, &b), TC_OK);
        CHECK(want_len > 0 && b.len == want_len && !memcmp(b.p, want, want_len));
        if (!strcmp(writers[i], "pprof")) /* gzip writers go through the callback compressed */
            CHECK(b.len > 2 && b.p[0] == 0x1f && b.p[1] == 0x8b);
        free(b.p);
        free(want);
        tc_conv_free(c);
    }
}

/* ---- a full disk names its cause, whichever writer and whichever step hits it ---- */

/* Writers that write while events flow: the sink fails mid-stream on a medium input
 * (the others write everything at the end, the small input's case). */
static int streams_output(const char *writer)
{
    return !strcmp(writer, "json") || !strcmp(writer, "perfetto") || !strcmp(writer, "systrace") ||
           !strcmp(writer, "ir");
}

static void check_enospc_message(tc_conv *c, int rc, const char *writer)
{
    CHECK_EQ_INT(rc, TC_ERR_IO);
    if (!strstr(tc_conv_error(c), "cannot write the output: No space left on device"))
        fprintf(stderr, "  %s: %s\n", writer, tc_conv_error(c));
    CHECK(strstr(tc_conv_error(c), "cannot write the output: No space left on device") != NULL);
}

static void test_enospc_through_callback(void)
{
    const char *inputs[] = {small_json, medium_json};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < N_WRITERS; i++) {
            if (k == 1 && !streams_output(writers[i]))
                continue;
            tc_conv *c = tc_conv_new();
            CHECK_EQ_INT(tc_conv_open_memory(c, inputs[k], strlen(inputs[k]), "in.json", "json"), TC_OK);
            buffer b = {.fail_errno = ENOSPC};
            check_enospc_message(c, tc_conv_write_to(c, writers[i], to_buffer, &b), writers[i]);
            CHECK(b.calls >= 1);
            tc_conv_free(c);
        }
    }
    /* a callback that fails without errno: still a cause, not "conversion failed" */
    tc_conv *c = open_small();
    buffer b = {.fail_errno = -1};
    CHECK_EQ_INT(tc_conv_write_to(c, "json", to_buffer, &b), TC_ERR_IO);
    CHECK(strstr(tc_conv_error(c), "cannot write the output: Input/output error") != NULL);
    tc_conv_free(c);
}

static void test_enospc_dev_full(void)
{
    const char *inputs[] = {small_json, medium_json};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < N_WRITERS; i++) {
            if (k == 1 && !streams_output(writers[i]))
                continue;
            FILE *full = fopen("/dev/full", "w");
            if (!full) {
                fprintf(stderr, "  /dev/full is missing: skipped\n");
                return;
            }
            tc_conv *c = tc_conv_new();
            CHECK_EQ_INT(tc_conv_open_memory(c, inputs[k], strlen(inputs[k]), "in.json", "json"), TC_OK);
            check_enospc_message(c, tc_conv_write(c, writers[i], full), writers[i]);
            fclose(full);
            tc_conv_free(c);
        }
    }
}

/* ---- probing ---- */

static int best_reader(const tc_probe_score *s, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (s[i].score > s[best].score)
            best = i;
    return best;
}

/* tc_probe_memory scores what tc_probe_file scores for the same bytes in a file
 * whose name says nothing; a name is a hint to both alike; junk scores nothing. */
static void test_probe_memory_equals_file(void)
{
    char path[] = "/tmp/traceconv-probe-XXXXXX", err[256];
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *fp = fdopen(fd, "wb");
    fputs(small_json, fp);
    fclose(fp);
    tc_probe_score from_file[32], from_memory[32], named[32];
    int nf = tc_probe_file(path, from_file, 32, err, sizeof err);
    int nm = tc_probe_memory(small_json, strlen(small_json), NULL, from_memory, 32, err, sizeof err);
    unlink(path);
    CHECK(nf > 1);
    CHECK_EQ_INT(nm, nf);
    for (int i = 0; i < nf && i < nm; i++) {
        CHECK_EQ_STR(from_memory[i].reader, from_file[i].reader);
        CHECK_EQ_INT(from_memory[i].score, from_file[i].score);
    }
    CHECK_EQ_STR(from_memory[best_reader(from_memory, nm)].reader, "json");
    CHECK(from_memory[best_reader(from_memory, nm)].score > 0);
    /* a name only hints: with a .json name the json score is no lower */
    CHECK_EQ_INT(tc_probe_memory(small_json, strlen(small_json), "x.json", named, 32, err, sizeof err), nm);
    CHECK(named[best_reader(from_memory, nm)].score >= from_memory[best_reader(from_memory, nm)].score);
    static const char junk[] = "\x01\x02 nothing any reader knows \x7f";
    int nj = tc_probe_memory(junk, sizeof junk - 1, NULL, named, 32, err, sizeof err);
    CHECK_EQ_INT(nj, nm);
    for (int i = 0; i < nj; i++)
        CHECK_EQ_INT(named[i].score, 0);
    CHECK_EQ_INT(tc_probe_memory(NULL, 10, NULL, named, 32, err, sizeof err), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_probe_memory(small_json, 4, NULL, NULL, 32, err, sizeof err), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_probe_memory(small_json, 4, NULL, named, 1, NULL, 8), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_probe_memory(small_json, strlen(small_json), NULL, named, 1, err, sizeof err), 1);
}

int main(void)
{
    small_json = json_trace(20);
    big_json = json_trace(135000); /* 270,000 records: progress is reported every 262,144 */
    medium_json = json_trace(5000);
    UNIT_RUN(test_bad_option_then_good_conversion);
    UNIT_RUN(test_unknown_writer_then_good_writer);
    UNIT_RUN(test_failed_open_then_open_again);
    UNIT_RUN(test_misuse_returns_state);
    UNIT_RUN(test_null_arguments);
    UNIT_RUN(test_open_time_option_after_open);
    UNIT_RUN(test_write_time_option_after_open);
    UNIT_RUN(test_error_is_latest);
    UNIT_RUN(test_status_strings);
    UNIT_RUN(test_version);
    UNIT_RUN(test_cancel);
    UNIT_RUN(test_write_callback_equals_file);
    UNIT_RUN(test_enospc_through_callback);
    UNIT_RUN(test_enospc_dev_full);
    UNIT_RUN(test_probe_memory_equals_file);
    free(small_json);
    free(big_json);
    free(medium_json);
    return UNIT_DONE();
}
