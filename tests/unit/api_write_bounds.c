/*
 * api_write_bounds.c - what stops an output while it is written (issue 22, item 2),
 * through the public API only:
 *
 * - max-output: an output that would pass the bound fails with TC_ERR_LIMIT and the
 *   message "output larger than --max-output (1M)", having handed no more than the bound
 *   to its sink; the other outputs of the same tc_conv_write_many are complete; a gzip
 *   writer's bound counts its compressed bytes; "Nx" is N times the input's size, never
 *   less than 4M; bad values are TC_ERR_USAGE.
 * - cancel while writing: the progress callback is asked during a writer's finish (with
 *   done == total), and a non-zero answer there stops the write with TC_ERR_CANCELED long
 *   before the output is complete.
 *
 * The input is a Chrome JSON trace of `depth` nested slices on one thread, so the sizes
 * follow from how it is built: its folded output has one line per depth naming every
 * frame above it (about depth^2/2 names).
 */
#include <traceconv.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

/* depth nested slices (names s0, s1, ... or all "s"), then their ends. */
static char *deep_json(size_t depth, int same_name, size_t *len)
{
    size_t cap = 64 + depth * 110, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < depth; i++)
        n += (size_t)snprintf(s + n, cap - n, "{\"ph\":\"B\",\"name\":\"s%zu\",\"pid\":7,\"tid\":7,\"ts\":%zu},\n",
                              same_name ? (size_t)0 : i, i);
    for (size_t i = 0; i < depth; i++)
        n += (size_t)snprintf(s + n, cap - n, "{\"ph\":\"E\",\"pid\":7,\"tid\":7,\"ts\":%zu}%s\n", depth + i + 1,
                              i + 1 < depth ? "," : "");
    n += (size_t)snprintf(s + n, cap - n, "]}\n");
    *len = n;
    return s;
}

typedef struct counter {
    size_t bytes, calls;
} counter;

static int count_bytes(void *user, const void *p, size_t n)
{
    (void)p;
    counter *c = user;
    c->bytes += n;
    c->calls++;
    return 0;
}

static char *input;
static size_t input_len;

static tc_conv *open_deep(const char *max_output)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "max-depth", "1000000"), TC_OK);
    if (max_output)
        CHECK_EQ_INT(tc_conv_set_option(c, "max-output", max_output), TC_OK);
    CHECK_EQ_INT(tc_conv_open_memory(c, input, input_len, "deep.json", "json"), TC_OK);
    return c;
}

/* The folded output's size without a bound (the expectation the bounded runs are measured by). */
static size_t unbounded(const char *writer)
{
    tc_conv *c = open_deep(NULL);
    counter k = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, writer, count_bytes, &k), TC_OK);
    tc_conv_free(c);
    return k.bytes;
}

static void test_limit(void)
{
    size_t full = unbounded("folded");
    CHECK(full > (8u << 20)); /* depth 4000: about 40 MB of folded text */
    tc_conv *c = open_deep("1M");
    counter k = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", count_bytes, &k), TC_ERR_LIMIT);
    CHECK(k.bytes <= (1u << 20));
    CHECK(strstr(tc_conv_error(c), "deep.json: folded: output larger than --max-output (1M)") != NULL);
    tc_conv_free(c);
}

static void test_limit_is_per_output(void)
{
    size_t json = unbounded("json");
    CHECK(json < (1u << 20)); /* the JSON of 8000 events fits in 1M */
    tc_conv *c = open_deep("1M");
    counter a = {0}, b = {0};
    tc_output outs[2] = {{.writer = "folded", .fn = count_bytes, .user = &a},
                         {.writer = "json", .fn = count_bytes, .user = &b}};
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_ERR_LIMIT);
    CHECK_EQ_INT(outs[0].status, TC_ERR_LIMIT);
    CHECK_EQ_INT(outs[1].status, TC_OK);
    CHECK_EQ_INT(b.bytes, json); /* complete: what the writer alone gives */
    CHECK(strstr(outs[0].error, "output larger than --max-output (1M)") != NULL);
    tc_conv_free(c);
}

static void test_limit_counts_compressed_bytes(void)
{
    /* one method at every level: pprof's location lists are depth^2/2 bytes of the same id,
     * which gzip compresses about 1000:1 */
    size_t len;
    char *same = deep_json(4000, 1, &len);
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "max-depth", "1000000"), TC_OK);
    CHECK_EQ_INT(tc_conv_set_option(c, "max-output", "1M"), TC_OK);
    CHECK_EQ_INT(tc_conv_open_memory(c, same, len, "same.json", "json"), TC_OK);
    counter k = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "pprof", count_bytes, &k), TC_OK); /* 8 MB before gzip */
    CHECK(k.bytes > 0 && k.bytes < (1u << 20));
    tc_conv_free(c);
    free(same);
}

static void test_ratio(void)
{
    tc_conv *c = open_deep("1x"); /* the input is about 400 KB: the floor, 4M, applies */
    counter k = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", count_bytes, &k), TC_ERR_LIMIT);
    CHECK(k.bytes <= (4u << 20));
    CHECK(strstr(tc_conv_error(c), "output larger than --max-output (1x the input: 4M)") != NULL);
    tc_conv_free(c);
    c = open_deep("1000x"); /* 1000 times 400 KB: the folded text fits */
    k = (counter){0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", count_bytes, &k), TC_OK);
    tc_conv_free(c);
    static const char *const bad[] = {"0", "-1", "1.5M", "10Kx", "x", "0x", "abc", "1000001x", ""};
    c = tc_conv_new();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_EQ_INT(tc_conv_set_option(c, "max-output", bad[i]), TC_ERR_USAGE);
    tc_conv_free(c);
}

/* ---- cancel while writing ---- */

typedef struct asked {
    int calls, while_writing, stop_at; /* stop at the stop_at-th call with done == total */
    uint64_t total;
} asked;

static int cancel_in_finish(void *user, uint64_t done, uint64_t total)
{
    asked *a = user;
    a->calls++;
    if (done == total)
        a->while_writing++;
    return a->while_writing >= a->stop_at;
}

static void test_cancel_while_writing(void)
{
    size_t full = unbounded("folded");
    tc_conv *c = open_deep(NULL);
    /* the first call with done == total ends the reading; the ones after it come from the writer's finish */
    asked a = {0, 0, 3, 0};
    tc_conv_set_progress(c, cancel_in_finish, &a);
    counter k = {0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", count_bytes, &k), TC_ERR_CANCELED);
    CHECK_EQ_INT(a.while_writing, 3);
    CHECK(k.bytes < full / 2);
    CHECK(strstr(tc_conv_error(c), "canceled") != NULL);
    tc_conv_free(c);
    /* a callback that never cancels is asked while writing, and changes nothing */
    c = open_deep(NULL);
    a = (asked){0, 0, 1 << 30, 0};
    tc_conv_set_progress(c, cancel_in_finish, &a);
    k = (counter){0};
    CHECK_EQ_INT(tc_conv_write_to(c, "folded", count_bytes, &k), TC_OK);
    CHECK_EQ_INT(k.bytes, full);
    CHECK(a.while_writing > 2);
    tc_conv_free(c);
}

int main(void)
{
    input = deep_json(4000, 0, &input_len);
    UNIT_RUN(test_limit);
    UNIT_RUN(test_limit_is_per_output);
    UNIT_RUN(test_limit_counts_compressed_bytes);
    UNIT_RUN(test_ratio);
    UNIT_RUN(test_cancel_while_writing);
    free(input);
    return UNIT_DONE();
}
