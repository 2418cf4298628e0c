/* unused_options.c - the library warns about an option the chosen reader and
 * writer do not use (figure unused-option), and refuses it under strict. */
#include "traceconv.h"
#include "unit.h"

static const char ir_trace[] =
    "traceconv-ir 1\n"
    "trace clock=wall has_wall=1 has_cpu=0 pid=5 start_ns=0\n"
    "process \"p\"\n"
    "thread 0 tid=5 records=0 name=\"main\"\n"
    "method 0 id=0 name=\"main\"\n"
    "stack 0 parent=- m=0\n"
    "P t=0 m=- ts=1000 id=0 value=5000\n";

static uint64_t figure(tc_conv *c, const char *name)
{
    tc_figure f[64];
    size_t n = tc_conv_figures(c, f, 64);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(f[i].name, name))
            return f[i].value;
    return UINT64_MAX;
}

/* Convert the IR trace with the options (key, value pairs, NULL-ended); the status of the write. */
static int convert(tc_conv *c, const char *writer, const char *const *opts)
{
    for (; opts[0]; opts += 2)
        CHECK_EQ_INT(tc_conv_set_option(c, opts[0], opts[1]), TC_OK);
    CHECK_EQ_INT(tc_conv_open_memory(c, ir_trace, sizeof ir_trace - 1, "t.ir.txt", "ir"), TC_OK);
    FILE *out = tmpfile();
    int rc = tc_conv_write(c, writer, out);
    long size = ftell(out);
    fclose(out);
    if (rc != TC_OK)
        CHECK_EQ_INT(size, 0); /* refused before anything was written */
    return rc;
}

static void expect_unused(const char *writer, const char *const *opts, const char *message)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(convert(c, writer, opts), TC_OK);
    CHECK_EQ_INT(figure(c, "unused-option"), 1);
    CHECK(tc_conv_warning_at(c, 0) && strstr(tc_conv_warning_at(c, 0), message));
    tc_conv_free(c);

    c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "strict", "1"), TC_OK);
    CHECK_EQ_INT(convert(c, writer, opts), TC_ERR_STRICT);
    CHECK(strstr(tc_conv_error(c), message) != NULL);
    tc_conv_free(c);
}

static void expect_used(const char *writer, const char *const *opts)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "strict", "1"), TC_OK);
    CHECK_EQ_INT(convert(c, writer, opts), TC_OK);
    CHECK_EQ_INT(figure(c, "unused-option"), 0);
    tc_conv_free(c);
}

static void test_writer_options_elsewhere(void)
{
    expect_unused("json", (const char *const[]){"text", "1", NULL}, "option --text is not used by the json writer");
    expect_unused("pprof", (const char *const[]){"weight", "cpu", NULL},
                  "option --weight is not used by the pprof writer");
    expect_unused("folded", (const char *const[]){"merge-threads", "1", NULL},
                  "option --merge-threads is not used by the folded writer");
    expect_unused("pprof", (const char *const[]){"title", "x", NULL}, "option --title is not used by the pprof writer");
    expect_unused("folded", (const char *const[]){"inverted", "1", NULL},
                  "option --inverted is not used by the folded writer");
    expect_unused("speedscope", (const char *const[]){"no-thread", "1", NULL},
                  "option --no-thread is not used by the speedscope writer");
}

static void test_reader_option_elsewhere(void)
{
    /* a missing file: the ir reader never opens it, so it is unused, not an error */
    expect_unused("json", (const char *const[]){"mapping", "/nonexistent/mapping.txt", NULL},
                  "option --mapping is not used by the ir reader");
}

static void test_used_and_core_options(void)
{
    expect_used("systrace", (const char *const[]){"text", "1", NULL});
    expect_used("folded", (const char *const[]){"weight", "wall", "no-thread", "1", NULL});
    expect_used("speedscope", (const char *const[]){"weight", "wall", NULL});
    expect_used("pprof", (const char *const[]){"merge-threads", "1", NULL});
    expect_used("flamegraph", (const char *const[]){"weight", "wall", "merge-threads", "1", "title", "t", "width",
                                                     "900", "minwidth", "2", "inverted", "1", "colors", "aqua",
                                                     "hash", "1", NULL});
    expect_used("json", (const char *const[]){"process-name", "x", "max-depth", "10", "max-json", "1M",
                                               "max-events", "100", "read-chunk", "7", NULL});
}

static void test_each_key_counted_once(void)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(convert(c, "json", (const char *const[]){"text", "1", "text", "0", "no-thread", "1", NULL}), TC_OK);
    CHECK_EQ_INT(figure(c, "unused-option"), 2);
    tc_conv_free(c);
}

int main(void)
{
    UNIT_RUN(test_writer_options_elsewhere);
    UNIT_RUN(test_reader_option_elsewhere);
    UNIT_RUN(test_used_and_core_options);
    UNIT_RUN(test_each_key_counted_once);
    return UNIT_DONE();
}
