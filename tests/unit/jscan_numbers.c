/*
 * jscan_numbers.c - the JSON scanner's numbers (src/parsers/jscan.c) against
 * the C library's strtod, the reference they must equal bit for bit: the
 * scanner reads the common forms (-?digits(.digits)?) itself since issue 26,
 * and only those whose value it can compute exactly. Random texts of every
 * shape around the fast path's limits (19 digits, 2^53, 22 decimals, a run
 * that goes on: "1.5e3", "1-2"), bare and quoted; each must give strtod's
 * double (sign of zero included) and end where strtod ends. A number read
 * as an object is scanned (tci_jscan_members_num: read once, not skipped and
 * read again) must be strtod's too, found under its key in each of the key's
 * forms (short and long names, escaped, spaced: the word-wise path and the
 * general one), with the object accepted exactly where the container walk
 * (tci_jscan_value) accepts it.
 */
#include "tc_jscan.h"
#include "unit.h"

#include <math.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;

static unsigned next(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static size_t digits(char *p, unsigned most)
{
    size_t n = 1 + next(most);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)('0' + (i == 0 && next(4) ? 1 + next(9) : next(10)));
    return n;
}

/* A number text: mostly the common form, sometimes with what ends it otherwise. */
static size_t number_text(char *p)
{
    size_t n = 0;
    if (next(3) == 0)
        p[n++] = '-';
    n += digits(p + n, next(4) ? 12 : 24);
    if (next(4)) {
        p[n++] = '.';
        n += digits(p + n, next(3) ? 6 : 26);
    }
    switch (next(12)) {
    case 0: n += (size_t)sprintf(p + n, "e%d", (int)next(40) - 20); break;
    case 1: n += (size_t)sprintf(p + n, "E+%u", next(5)); break;
    case 2: p[n++] = '-'; p[n++] = '2'; break;
    case 3: p[n++] = '.'; break;
    default: break;
    }
    p[n] = 0;
    return n;
}

static bool same_double(double a, double b) { return !memcmp(&a, &b, sizeof a); }

/* Bare: the value and where the scanner's skip ends, as strtod reads the text. */
static void check_bare(const char *text, size_t n)
{
    char *end;
    double want = strtod(text, &end), got = 0;
    tci_jscan sc = {text, n, 0, NULL, 0, false};
    bool ok = tci_jscan_value(&sc);
    CHECK(ok == (end > text));
    if (!ok)
        return;
    CHECK_EQ_INT(sc.pos, end - text);
    CHECK(tci_jspan_number((tci_jspan){text, sc.pos}, &got) == (bool)isfinite(want));
    if (isfinite(want) && !same_double(got, want))
        fprintf(stderr, "bare %s: %.17g, strtod %.17g\n", text, got, want);
    CHECK(!isfinite(want) || same_double(got, want));
}

/* In an object, as a member asked for: under one of a key's forms, between other members. */
static void check_member(const char *text)
{
    static const char *const forms[][2] = {
        {"\"v\":", "v"}, {"\"tdur\":", "tdur"}, {"\"abcdefgh\":", "abcdefgh"},
        {"\"abcdefghijklmno\":", "abcdefghijklmno"}, {"\"abcdefghijklmnopqr\":", "abcdefghijklmnopqr"},
        {"\"t\\u0064ur\":", "tdur"}, {" \"v\" : ", "v"}, {"\"v\"\n:", "v"},
    };
    static const char *const before[] = {"", "\"a\":\"x\",", "\"args\":{\"d\":1,\"s\":\"t\"},", "\"n\":[1,{}],"};
    static const char *const after[] = {"}", ",\"z\":null}", " }", ",\"q\":{\"w\":-2.5}}"};
    char obj[256];
    unsigned f = next(sizeof forms / sizeof *forms);
    size_t at = (size_t)snprintf(obj, sizeof obj, "{%s%s", before[next(4)], forms[f][0]);
    snprintf(obj + at, sizeof obj - at, "%s%s", text, after[next(4)]);
    const char *const keys[] = {"n", forms[f][1]};
    tci_jkeys k;
    tci_jkeys_init(&k, keys, 2);
    tci_jspan vals[2];
    double num[2] = {0, 0}, want = 0;
    uint32_t numbered = 0;
    tci_jscan sc = {obj, strlen(obj), 0, NULL, 0, false}, walk = sc;
    bool ok = tci_jscan_members_num(&sc, &k, vals, num, &numbered), walk_ok = tci_jscan_value(&walk);
    CHECK(ok == walk_ok);
    if (!ok || !walk_ok)
        return;
    CHECK_EQ_INT(sc.pos, walk.pos);
    CHECK(vals[1].p == obj + at);
    CHECK(!(numbered & 1));
    bool read = tci_jspan_number(vals[1], &want);
    CHECK(!(numbered & 2) || (read && same_double(num[1], want)));
}

/* Quoted: a number only when strtod takes the whole text. */
static void check_quoted(const char *text, size_t n)
{
    char q[160], *end;
    snprintf(q, sizeof q, "\"%s\"", text);
    double want = strtod(text, &end), got = 0;
    bool whole = !*end && isfinite(want);
    CHECK(tci_jspan_number((tci_jspan){q, n + 2}, &got) == whole);
    CHECK(!whole || same_double(got, want));
}

static void test_random_numbers_equal_strtod(void)
{
    char text[128];
    for (int i = 0; i < 300000; i++) {
        size_t n = number_text(text);
        check_bare(text, n);
        check_quoted(text, n);
        check_member(text);
    }
}

/* The fast path's edges, each side. */
static void test_edges_equal_strtod(void)
{
    static const char *const cases[] = {
        "0", "-0", "-0.0", "0.000", "9007199254740992", "9007199254740993", "-9007199254740993",
        "1234567890123456789", "12345678901234567890", "0.1", "0.3", "1497966.000", "1497966.001",
        "4611686018427387.904", "0.0000000000000000000001", "0.00000000000000000000001", "00012",
        "1.7976931348623157", "123456789.123456789", "1.5.2", "7-", "1e", "-", "-.5", "5.",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_bare(cases[i], strlen(cases[i]));
        check_quoted(cases[i], strlen(cases[i]));
        check_member(cases[i]);
    }
}

int main(void)
{
    UNIT_RUN(test_random_numbers_equal_strtod);
    UNIT_RUN(test_edges_equal_strtod);
    return UNIT_DONE();
}
