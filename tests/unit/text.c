/*
 * text.c - the text parsers' helpers (src/util/text.c), one rule each, at
 * their edges: numbers against the C library's strtoull/strtoll (overflow,
 * the caller's max, empty, signs, leading zeros, hex), lines written out by
 * hand (LF, CRLF, CR CR LF, a lone CR, no final newline, empty lines, an end
 * inside a line), and trimming.
 */
#include "text.h"
#include "unit.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

/* ---- numbers ---- */

/* What strtoull says of s as a whole decimal number: digits only (strtoull also takes
 * spaces and signs), in range. */
static bool libc_u64(const char *s, uint64_t *v)
{
    if (!*s || s[strspn(s, "0123456789")])
        return false;
    errno = 0;
    char *end;
    *v = strtoull(s, &end, 10);
    return !errno && !*end;
}

static void check_u64(const char *s, uint64_t max)
{
    uint64_t want = 0, got = 0;
    bool ok = libc_u64(s, &want) && want <= max;
    bool parsed = tci_parse_u64(s, strlen(s), max, &got);
    if (parsed != ok || (ok && got != want))
        fprintf(stderr, "  \"%s\" (max %llu): %d %llu, libc %d %llu\n", s, (unsigned long long)max, parsed,
                (unsigned long long)got, ok, (unsigned long long)want);
    CHECK(parsed == ok && (!ok || got == want));
}

static void test_u64(void)
{
    static const char *const cases[] = {"", "0", "7", "007", "42", "18446744073709551615", "18446744073709551616",
                                        "018446744073709551615", "99999999999999999999", "184467440737095516150",
                                        "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
                                        "1 ", " 1", "+1", "-1", "1a", "0x10", "12\r", "\n"};
    static const uint64_t maxes[] = {UINT64_MAX, INT64_MAX, UINT32_MAX, 0xFFFF, 9, 5, 0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < sizeof maxes / sizeof *maxes; k++)
            check_u64(cases[i], maxes[k]);
    uint64_t v = 1;
    CHECK(tci_parse_u64("123", 2, UINT64_MAX, &v) && v == 12); /* the span, not the string */
    CHECK(!tci_parse_u64("123", 0, UINT64_MAX, &v));
}

static void check_i64(const char *s)
{
    errno = 0;
    char *end;
    bool shape = *s && strspn(s + (*s == '-' || *s == '+'), "0123456789") == strlen(s + (*s == '-' || *s == '+')) &&
                 s[*s == '-' || *s == '+'];
    long long want = strtoll(s, &end, 10);
    bool ok = shape && !errno && !*end;
    int64_t got = 0;
    bool parsed = tci_parse_i64(s, strlen(s), &got);
    if (parsed != ok || (ok && got != want))
        fprintf(stderr, "  \"%s\": %d %lld, libc %d %lld\n", s, parsed, (long long)got, ok, want);
    CHECK(parsed == ok && (!ok || got == want));
}

static void test_i64(void)
{
    static const char *const cases[] = {"", "-", "+", "0", "-0", "+0", "12", "-12", "+12", "--1", "-+1", " 1",
                                        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                        "-9223372036854775809", "+9223372036854775807", "-00009223372036854775808",
                                        "99999999999999999999", "1-"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_i64(cases[i]);
}

static void test_hex(void)
{
    static const char *const cases[] = {"0", "1f", "1F", "0x1f", "0X1F", "0x", "x1", "ffffffffffffffff",
                                        "0xffffffffffffffff", "10000000000000000", "0x10000000000000000", "g",
                                        "", "0x0x1", "-1", "00000000000000000000ff"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *s = cases[i];
        const char *digits = strlen(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? s + 2 : s;
        errno = 0;
        char *end;
        unsigned long long want = strtoull(digits, &end, 16);
        bool ok = *digits && !digits[strspn(digits, "0123456789abcdefABCDEF")] && !errno;
        uint64_t got = 0;
        bool parsed = tci_parse_hex_u64(s, strlen(s), &got);
        if (parsed != ok || (ok && got != want))
            fprintf(stderr, "  hex \"%s\": %d %llx, libc %d %llx\n", s, parsed, (unsigned long long)got, ok, want);
        CHECK(parsed == ok && (!ok || got == want));
    }
}

/* ---- lines ---- */

/* Every line of text[0, end) as "off:text|", CR shown as "\r". */
static const char *lines(const char *text, size_t end)
{
    static char out[1024];
    size_t pos = 0, o = 0;
    tci_line l;
    out[0] = 0;
    while (tci_next_line(text, end, &pos, &l)) {
        o += (size_t)snprintf(out + o, sizeof out - o, "%llu:", (unsigned long long)l.off);
        for (size_t i = 0; i < l.n; i++)
            o += (size_t)snprintf(out + o, sizeof out - o, l.p[i] == '\r' ? "\\r" : "%c", l.p[i]);
        o += (size_t)snprintf(out + o, sizeof out - o, "|");
    }
    CHECK_EQ_INT(pos, end); /* every byte is in a line or its end */
    return out;
}

#define LINES(lit) lines(lit, sizeof lit - 1)

static void test_lines(void)
{
    CHECK_EQ_STR(LINES(""), "");
    CHECK_EQ_STR(LINES("a\nbc\n"), "0:a|2:bc|");
    CHECK_EQ_STR(LINES("a\nbc"), "0:a|2:bc|");                 /* no final newline */
    CHECK_EQ_STR(LINES("a\r\nbc\r\n"), "0:a|3:bc|");           /* CRLF */
    CHECK_EQ_STR(LINES("a\r\r\nb\r"), "0:a|4:b|");             /* CRLF made twice; a CR at the very end */
    CHECK_EQ_STR(LINES("\n\r\n\n"), "0:|1:|3:|");              /* empty lines */
    CHECK_EQ_STR(LINES("a\rb\r\n"), "0:a\\rb|");               /* a CR inside a line is the line's */
    CHECK_EQ_STR(LINES("\r"), "0:|");
    CHECK_EQ_STR(lines("abc\ndef", 5), "0:abc|4:d|");          /* the end given, not the text's */
}

/* ---- whitespace ---- */

static void test_trim_and_spaces(void)
{
    tci_span s = tci_span_trim((tci_span){" \t\r\f\va b\v\f\r\t ", 13});
    CHECK(s.n == 3 && !memcmp(s.p, "a b", 3));
    CHECK_EQ_INT(tci_span_trim((tci_span){" \t ", 3}).n, 0);
    CHECK_EQ_INT(tci_span_trim((tci_span){"", 0}).n, 0);
    CHECK_EQ_INT(tci_span_trim((tci_span){"\nx\n", 3}).n, 3); /* an LF ends a line: never inside one */
    for (int c = 0; c < 256; c++) {
        CHECK_EQ_INT(tci_is_blank((char)c), c == ' ' || c == '\t');
        CHECK_EQ_INT(tci_is_space((char)c), c != '\n' && isspace(c));
        CHECK_EQ_INT(tci_is_digit((char)c), c >= '0' && c <= '9');
    }
    CHECK(tci_span_is((tci_span){"*end", 4}, "*end"));
    CHECK(!tci_span_is((tci_span){"*end", 3}, "*end"));
    CHECK(tci_span_eq((tci_span){NULL, 0}, (tci_span){"", 0}));
}

int main(void)
{
    UNIT_RUN(test_u64);
    UNIT_RUN(test_i64);
    UNIT_RUN(test_hex);
    UNIT_RUN(test_lines);
    UNIT_RUN(test_trim_and_spaces);
    return UNIT_DONE();
}
