/*
 * textout_numbers.c - the table writers' number cells (src/hub/textout.c:
 * tci_fmt_u64, tci_fmt_i64, tci_fmt_fixed1, tci_put_aligned), which replace
 * printf in the report's millions of cells, against the C library's own
 * snprintf ("%llu", "%lld", "%.1f", "%*s", "%-*s"): the edges (0, -0.0, the
 * extremes, subnormals, the 2^50 boundary where printf takes over, infinity,
 * NaN), every exact tie at a twentieth (x.x5 in binary: 0.25, 0.75, ...,
 * which go to the even tenth), percentages of random integer pairs as the
 * report computes them, and random bit patterns of every exponent. And the
 * text escaping's fast path (a printable ASCII prefix written at once)
 * against the rule written out by hand.
 */
#include "tc_base.h"
#include "tc_writer.h"
#include "unit.h"

#include <math.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check_fixed1(double x)
{
    char want[TCI_FMT_FIXED1_MAX], got[TCI_FMT_FIXED1_MAX];
    int n = snprintf(want, sizeof want, "%.1f", x);
    size_t k = tci_fmt_fixed1(got, x);
    if ((size_t)n != k || strcmp(want, got))
        fprintf(stderr, "  %a: \"%s\" (%zu), printf \"%s\"\n", x, got, k, want);
    CHECK((size_t)n == k && !strcmp(want, got));
}

static void check_u64(uint64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    CHECK(tci_fmt_u64(got, v) == strlen(want) && !strcmp(got, want));
}

static void check_i64(int64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%lld", (long long)v);
    CHECK(tci_fmt_i64(got, v) == strlen(want) && !strcmp(got, want));
}

static void test_integers(void)
{
    static const uint64_t edges[] = {0, 1, 9, 10, 99, 100, 999999, 1000000, 4294967295u, 4294967296u,
                                     9999999999999999999u, 10000000000000000000u, INT64_MAX, UINT64_MAX};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        check_u64(edges[i]);
        check_i64((int64_t)edges[i]);
        check_i64(-(int64_t)(edges[i] & INT64_MAX));
    }
    check_i64(INT64_MIN);
    for (int i = 0; i < 100000; i++) {
        uint64_t r = next_random() >> (next_random() & 63);
        check_u64(r);
        check_i64((int64_t)r);
    }
}

static void test_fixed1_edges(void)
{
    static const double edges[] = {0.0, -0.0, 0.04, 0.05, -0.04, -0.05, 0.15, 0.25, 0.35, 0.45, 0.95, 99.95,
                                   99.94999999999999, 100.0, -100.0, 1e-320, -1e-320, 4.9e-324, 0x1p-1022,
                                   0x1p50 - 0.25, 0x1p50 - 0.5, 0x1p50, -0x1p50, 0x1p50 + 1, 1e15, 1e300,
                                   -1e300, 1.7976931348623157e308, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        check_fixed1(edges[i]);
    /* exact binary ties at a twentieth: k/4 for odd k (x.25, x.75), up to where tenths end */
    for (int64_t k = -4001; k <= 4001; k += 2)
        check_fixed1((double)k / 4);
    for (int e = 0; e < 50; e++)
        check_fixed1(ldexp(1.0, e) + 0.25), check_fixed1(ldexp(1.0, e) + 0.75), check_fixed1(ldexp(1.0, e) - 0.05);
}

static void test_fixed1_percentages(void)
{
    /* as the report computes them: 100.0 * part / whole, exact ns or calls */
    for (int i = 0; i < 300000; i++) {
        int64_t part = (int64_t)(next_random() >> (next_random() % 64));
        int64_t whole = (int64_t)(next_random() >> (next_random() % 64)) | 1;
        if (i & 1)
            part = -part;
        if (i & 2)
            whole = whole > part ? whole : part ? part : 1; /* mostly below 100% */
        check_fixed1(100.0 * (double)part / (double)whole);
    }
    for (int64_t part = -2000; part <= 2000; part++) /* small wholes: many exact ties */
        for (int64_t whole = 1; whole <= 80; whole++)
            check_fixed1(100.0 * (double)part / (double)whole);
}

static void test_fixed1_bit_patterns(void)
{
    for (int i = 0; i < 300000; i++) {
        uint64_t bits = next_random();
        double x;
        memcpy(&x, &bits, sizeof x);
        check_fixed1(x);
        bits = (bits & 0x800FFFFFFFFFFFFFull) | (uint64_t)(1023 - 60 + (int)(next_random() % 120)) << 52;
        memcpy(&x, &bits, sizeof x); /* exponents near the tenths, where rounding is decided */
        check_fixed1(x);
    }
}

static tci_sink sink;
static unit_buf out;

static const char *put(void (*fn)(tci_sink *, const void *), const void *arg)
{
    free(out.p);
    out = (unit_buf){NULL, 0, 0};
    CHECK_EQ_INT(tci_sink_open_fn(&sink, unit_to_buf, &out, false), TC_OK);
    fn(&sink, arg);
    CHECK_EQ_INT(tci_sink_close(&sink), TC_OK);
    return out.p ? out.p : "";
}

typedef struct aligned_case {
    const char *text;
    int width;
} aligned_case;

static void put_aligned_case(tci_sink *o, const void *arg)
{
    const aligned_case *c = arg;
    tci_put_aligned(o, c->text, strlen(c->text), c->width);
}

static void test_aligned(void)
{
    static const char *const texts[] = {"", "-", "[12]", "35.0%", "a text longer than every width here"};
    static const int widths[] = {0, 1, 5, 6, 7, 15, 31, 32, 33, 70, -1, -6, -7, -33, -70};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
            char want[128];
            snprintf(want, sizeof want, "%*s", widths[k], texts[i]);
            CHECK_EQ_STR(put(put_aligned_case, &(aligned_case){texts[i], widths[k]}), want);
        }
}

/* The same cells where the sink's buffer is nearly full (the cell crosses a flush). */
static void put_after_fill(tci_sink *o, const void *arg)
{
    static char fill[sizeof o->buf];
    memset(fill, 'x', sizeof fill);
    tci_sink_write(o, fill, sizeof o->buf - 3);
    put_aligned_case(o, arg);
}

static void test_aligned_across_a_flush(void)
{
    static const int widths[] = {0, 2, 7, 40, -2, -7, -40};
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
        char want[128];
        snprintf(want, sizeof want, "%*s", widths[k], "[12]");
        const char *got = put(put_after_fill, &(aligned_case){"[12]", widths[k]});
        CHECK(strlen(got) == sizeof sink.buf - 3 + strlen(want) && !strcmp(got + sizeof sink.buf - 3, want));
    }
}

static void put_text(tci_sink *o, const void *arg) { tci_put_escaped_text(o, arg); }

/* The rule (textout.c): printable UTF-8 as it is; \\, \n, \r, \t; other controls, DEL and
 * bytes that are not UTF-8 as \xHH: wherever the first byte that is not plain ASCII falls. */
static void test_escaped_text(void)
{
    CHECK_EQ_STR(put(put_text, ""), "");
    CHECK_EQ_STR(put(put_text, "pkg.Class.run ()V"), "pkg.Class.run ()V");
    CHECK_EQ_STR(put(put_text, "\\"), "\\\\");
    CHECK_EQ_STR(put(put_text, "a\\b"), "a\\\\b");
    CHECK_EQ_STR(put(put_text, "ab\ncd\re\tf"), "ab\\ncd\\re\\tf");
    CHECK_EQ_STR(put(put_text, "x\x7f" "y\x01"), "x\\x7Fy\\x01");
    CHECK_EQ_STR(put(put_text, "caf\xC3\xA9!"), "caf\xC3\xA9!");
    CHECK_EQ_STR(put(put_text, "\xC3\xA9" "a\\"), "\xC3\xA9" "a\\\\");
    CHECK_EQ_STR(put(put_text, "ab\xFF" "cd"), "ab\\xFFcd");
    CHECK_EQ_STR(put(put_text, "~ }\x80"), "~ }\\x80");
}

int main(void)
{
    UNIT_RUN(test_integers);
    UNIT_RUN(test_fixed1_edges);
    UNIT_RUN(test_fixed1_percentages);
    UNIT_RUN(test_fixed1_bit_patterns);
    UNIT_RUN(test_aligned);
    UNIT_RUN(test_aligned_across_a_flush);
    UNIT_RUN(test_escaped_text);
    free(out.p);
    return UNIT_DONE();
}
