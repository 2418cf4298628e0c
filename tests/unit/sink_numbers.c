/*
 * sink_numbers.c - the sink's number formatting (tci_sink_milli, tci_fmt_milli, tci_fmt_milli_memo,
 * tci_sink_u64, tci_sink_i64)
 * against the C library's printf: every edge of the digit loops (powers of ten and their
 * neighbours, 2^32 thousandths where the 32-bit path ends, the int64 extremes) and a
 * pseudo-random sweep of every magnitude, written back to back so that values also land
 * across the sink buffer's flushes (the fixed 32-byte copy and its fallback).
 */
#include "tc_writer.h"
#include "unit.h"

#include <inttypes.h>

/* The values: edges, then a sweep whose magnitudes (1 to 19 digits) come from a xorshift. */
static size_t values(int64_t *out, size_t max)
{
    size_t n = 0;
    int64_t edges[] = {0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10000, 10001, 999999, 1000000,
                       99999999, 100000000, 9999999999, 10000000000, 4294967295999, 4294967296000,
                       4294967296999, 4294967297000, INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 999};
    for (size_t i = 0; i < sizeof edges / sizeof *edges && n + 2 <= max; i++) {
        out[n++] = edges[i];
        out[n++] = edges[i] == INT64_MIN ? INT64_MAX : -edges[i];
    }
    for (int64_t p = 1; p <= INT64_MAX / 10 && n + 6 <= max; p *= 10) {
        out[n++] = p - 1, out[n++] = p, out[n++] = p + 1;
        out[n++] = -(p - 1), out[n++] = -p, out[n++] = -(p + 1);
    }
    uint64_t x = 0x9e3779b97f4a7c15u;
    while (n < max) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t mag = 1;
        for (unsigned d = (unsigned)(x % 19); d; d--)
            mag *= 10;
        int64_t v = (int64_t)((x >> 8) % mag);
        out[n++] = x & 1 ? -v : v;
    }
    return n;
}

/* The reference: printf of the thousandths as "%d.%03u" (µs with three decimals). */
static size_t milli_printf(char *out, int64_t v)
{
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return (size_t)snprintf(out, 64, "%s%" PRIu64 ".%03u", v < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

static void test_milli_like_printf(void)
{
    enum { N = 200000 };
    static int64_t v[N];
    size_t n = values(v, N);
    unit_buf got = {0}, want = {0};
    tci_sink s;
    CHECK(tci_sink_open_fn(&s, unit_to_buf, &got, false) == TC_OK);
    for (size_t i = 0; i < n; i++) {
        tci_sink_milli(&s, v[i]);
        tci_sink_putc(&s, '\n');
        char line[64];
        size_t len = milli_printf(line, v[i]);
        line[len++] = '\n';
        unit_to_buf(&want, line, len);
    }
    CHECK(tci_sink_close(&s) == TC_OK);
    CHECK_EQ_INT(got.len, want.len);
    CHECK(got.p && want.p && !strcmp(got.p, want.p));
    free(got.p);
    free(want.p);
}

/* got (TCI_MILLI_ROOM + 8 bytes, filled with 'x' before the call) holds len bytes of v's
 * text as printf writes it, and nothing was written past the room. */
static void check_milli_text(const char *got, size_t len, int64_t v)
{
    char want[64];
    CHECK_EQ_INT(len, milli_printf(want, v));
    CHECK(!memcmp(got, want, len));
    CHECK(!memcmp(got + TCI_MILLI_ROOM, "xxxxxxxx", 8));
}

/* tci_fmt_milli, which json places straight into the sink's buffer: the same text, no byte
 * written past its room. */
static void test_fmt_milli_like_printf(void)
{
    enum { N = 200000 };
    static int64_t v[N];
    size_t n = values(v, N);
    for (size_t i = 0; i < n; i++) {
        char got[TCI_MILLI_ROOM + 8];
        memset(got, 'x', sizeof got);
        check_milli_text(got, tci_fmt_milli(got, v[i]), v[i]);
    }
}

/* tci_fmt_milli_memo: the kept leading digits must never show through a value that changed
 * them. Series that climb by small and large steps across its 10^7 boundaries,
 * two series sharing one memo and then keeping their own, and the edge values in their order
 * (sign changes, 0 to 10^7, 2^32 thousandths, the int64 extremes). */
static void test_fmt_milli_memo_like_printf(void)
{
    enum { N = 200000 };
    static int64_t v[N];
    size_t n = values(v, N);
    tci_milli_memo shared = {0}, own[2] = {{0}};
    uint64_t x = 0x2545f4914f6cdd1du;
    int64_t series[2] = {9999990, 4294967290000};
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int k = (int)(x >> 60) & 1;
        uint64_t step = (x >> 8) % (x & 256 ? 30000000 : 40000); /* mostly within 10^7, sometimes across */
        series[k] = series[k] > INT64_MAX - 30000000 ? 0 : series[k] + (int64_t)step;
        int64_t in[3] = {v[i], series[k], series[k]};
        tci_milli_memo *memo[3] = {&shared, &shared, &own[k]};
        for (int c = 0; c < 3; c++) {
            char got[TCI_MILLI_ROOM + 8];
            memset(got, 'x', sizeof got);
            check_milli_text(got, tci_fmt_milli_memo(got, in[c], memo[c]), in[c]);
        }
    }
}

static void test_integers_like_printf(void)
{
    enum { N = 100000 };
    static int64_t v[N];
    size_t n = values(v, N);
    unit_buf got = {0}, want = {0};
    tci_sink s;
    CHECK(tci_sink_open_fn(&s, unit_to_buf, &got, false) == TC_OK);
    for (size_t i = 0; i < n; i++) {
        tci_sink_i64(&s, v[i]);
        tci_sink_putc(&s, ' ');
        tci_sink_u64(&s, (uint64_t)v[i]);
        tci_sink_putc(&s, '\n');
        char line[64];
        int len = snprintf(line, sizeof line, "%" PRId64 " %" PRIu64 "\n", v[i], (uint64_t)v[i]);
        unit_to_buf(&want, line, (size_t)len);
    }
    CHECK(tci_sink_close(&s) == TC_OK);
    CHECK_EQ_INT(got.len, want.len);
    CHECK(got.p && want.p && !strcmp(got.p, want.p));
    free(got.p);
    free(want.p);
}

int main(void)
{
    UNIT_RUN(test_milli_like_printf);
    UNIT_RUN(test_fmt_milli_like_printf);
    UNIT_RUN(test_fmt_milli_memo_like_printf);
    UNIT_RUN(test_integers_like_printf);
    return UNIT_DONE();
}
