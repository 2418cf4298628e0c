/*
 * api_diff.c - the contract of tc_diff_write / tc_diff_write_to (traceconv.h):
 * refusals before anything is read leave both convs OPEN; a diff consumes both;
 * every failure leaves one message on NEW naming the input that failed; the
 * FILE and callback forms write the same bytes; a failing callback is an I/O error.
 */
#include "traceconv.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

#define TRACE TC_SOURCE_DIR "/corpus/app-startup.trace"
#define OTHER TC_SOURCE_DIR "/corpus/v3-dual.trace"

static tc_conv *opened(const char *path)
{
    tc_conv *c = tc_conv_new();
    CHECK(c != NULL);
    CHECK_EQ_INT(tc_conv_open(c, path, NULL), TC_OK);
    return c;
}

typedef struct buf {
    char *p;
    size_t n;
    int fail_after; /* calls before failing with ENOSPC; < 0 never */
} buf;

static int collect(void *user, const void *data, size_t len)
{
    buf *b = user;
    if (b->fail_after == 0) {
        errno = ENOSPC;
        return -1;
    }
    if (b->fail_after > 0)
        b->fail_after--;
    char *p = realloc(b->p, b->n + len);
    if (!p)
        return -1;
    memcpy(p + b->n, data, len);
    b->p = p;
    b->n += len;
    return 0;
}

static void test_refusals_keep_both_open(void)
{
    tc_conv *a = opened(TRACE), *b = opened(OTHER);
    buf out = {NULL, 0, -1};
    CHECK_EQ_INT(tc_diff_write_to(a, b, "json", collect, &out), TC_ERR_USAGE);
    CHECK(strstr(tc_conv_error(b), "unknown diff format 'json'") != NULL);
    CHECK_EQ_INT(tc_diff_write_to(b, b, "text", collect, &out), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_diff_write_to(NULL, b, "text", collect, &out), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_diff_write_to(a, b, "text", NULL, NULL), TC_ERR_USAGE);
    CHECK_EQ_INT(tc_diff_write_to(a, NULL, "text", collect, &out), TC_ERR_USAGE);
    CHECK_EQ_INT(out.n, 0);
    /* still OPEN: the corrected call works */
    CHECK_EQ_INT(tc_diff_write_to(a, b, "csv", collect, &out), TC_OK);
    CHECK(out.n > 0 && !strncmp(out.p, "method,status,calls_base,", 25));
    /* consumed: a second diff, or a write, is a state error */
    CHECK_EQ_INT(tc_diff_write_to(a, b, "text", collect, &out), TC_ERR_STATE);
    CHECK_EQ_INT(tc_conv_write(a, "json", stdout), TC_ERR_STATE);
    tc_conv *c = tc_conv_new(), *d = opened(TRACE); /* c never opened */
    CHECK_EQ_INT(tc_diff_write_to(c, d, "text", collect, &out), TC_ERR_STATE);
    CHECK(strstr(tc_conv_error(d), "BASE is not an opened") != NULL);
    free(out.p);
    tc_conv_free(a);
    tc_conv_free(b);
    tc_conv_free(c);
    tc_conv_free(d);
}

static void test_file_equals_callback(void)
{
    for (int k = 0; k < 3; k++) {
        static const char *const formats[] = {"text", "csv", "flamegraph"};
        tc_conv *a = opened(TRACE), *b = opened(OTHER);
        buf cb = {NULL, 0, -1};
        CHECK_EQ_INT(tc_diff_write_to(a, b, formats[k], collect, &cb), TC_OK);
        tc_conv_free(a);
        tc_conv_free(b);
        a = opened(TRACE);
        b = opened(OTHER);
        char *mem = NULL;
        size_t n = 0;
        FILE *fp = open_memstream(&mem, &n);
        CHECK_EQ_INT(tc_diff_write(a, b, formats[k], fp), TC_OK);
        fclose(fp);
        CHECK_EQ_INT(n, cb.n);
        CHECK(n == cb.n && !memcmp(mem, cb.p, n));
        free(mem);
        free(cb.p);
        tc_conv_free(a);
        tc_conv_free(b);
    }
}

static void test_errors_name_the_input(void)
{
    /* a warning of BASE's input under strict fails its read: the message names BASE */
    tc_conv *a = tc_conv_new(), *b = opened(TRACE);
    buf out = {NULL, 0, -1};
    CHECK_EQ_INT(tc_conv_set_option(a, "strict", "1"), TC_OK);
    CHECK_EQ_INT(tc_conv_open(a, TC_SOURCE_DIR "/corpus/mismatched-exit-and-action3.trace", NULL), TC_OK);
    CHECK_EQ_INT(tc_diff_write_to(a, b, "text", collect, &out), TC_ERR_STRICT);
    CHECK(!strncmp(tc_conv_error(b), "BASE: ", 6) && strstr(tc_conv_error(b), "mismatched-exit-and-action3.trace"));
    CHECK(strstr(tc_conv_error(a), "mismatched-exit-and-action3.trace") != NULL && strncmp(tc_conv_error(a), "BASE", 4));
    CHECK_EQ_INT(out.n, 0);
    CHECK_EQ_INT(tc_diff_write_to(a, b, "text", collect, &out), TC_ERR_STATE); /* both consumed */
    tc_conv_free(a);
    tc_conv_free(b);
    /* weight cpu with a wall-only NEW: refused, naming NEW */
    a = opened(TRACE);
    b = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(b, "weight", "cpu"), TC_OK);
    CHECK_EQ_INT(tc_conv_open(b, TC_SOURCE_DIR "/corpus/v2-wall.trace", NULL), TC_OK);
    CHECK_EQ_INT(tc_diff_write_to(a, b, "text", collect, &out), TC_ERR_UNSUPPORTED);
    CHECK(!strncmp(tc_conv_error(b), "NEW: ", 5) && strstr(tc_conv_error(b), "no thread-CPU clock"));
    tc_conv_free(a);
    tc_conv_free(b);
    free(out.p);
}

static void test_write_failure(void)
{
    tc_conv *a = opened(TRACE), *b = opened(OTHER);
    buf out = {NULL, 0, 0};
    CHECK_EQ_INT(tc_diff_write_to(a, b, "flamegraph", collect, &out), TC_ERR_IO);
    CHECK(strstr(tc_conv_error(b), "cannot write the output") != NULL);
    free(out.p);
    tc_conv_free(a);
    tc_conv_free(b);
}

static void test_unused_option_strict(void)
{
    tc_conv *a = opened(TRACE), *b = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(b, "strict", "1"), TC_OK);
    CHECK_EQ_INT(tc_conv_set_option(b, "threshold", "5"), TC_OK); /* dot's: the diff does not read it */
    CHECK_EQ_INT(tc_conv_open(b, OTHER, NULL), TC_OK);
    buf out = {NULL, 0, -1};
    CHECK_EQ_INT(tc_diff_write_to(a, b, "text", collect, &out), TC_ERR_STRICT);
    CHECK(strstr(tc_conv_error(b), "--threshold") != NULL);
    free(out.p);
    tc_conv_free(a);
    tc_conv_free(b);
}

int main(void)
{
    UNIT_RUN(test_refusals_keep_both_open);
    UNIT_RUN(test_file_equals_callback);
    UNIT_RUN(test_errors_name_the_input);
    UNIT_RUN(test_write_failure);
    UNIT_RUN(test_unused_option_strict);
    return UNIT_DONE();
}
