/*
 * utf8.c - the one UTF-8 decoder (src/util/utf8.c) against Unicode's own
 * definition, and every place that reads names as characters against the
 * rule it states for bytes that are not UTF-8.
 *
 * The decoder: every 1- to 3-byte sequence, and every 4-byte one with any
 * lead and second byte, judged against a definition written from the bits
 * (continuation bytes 10xxxxxx, the shortest form, no surrogate, at most
 * U+10FFFF) rather than from table 3-7's byte ranges the decoder uses; and
 * the maximal subparts of The Unicode Standard's examples (chapter 3.9,
 * "U+FFFD Substitution of Maximal Subparts", tables 3-8 to 3-11).
 *
 * The callers, each with overlongs, a UTF-8-encoded surrogate, a code point
 * above U+10FFFF, a sequence cut short, and noncharacters (well-formed: each
 * caller decides whether to show them): the sink's JSON strings, the table
 * writers' text and CSV, the markup rule, the flame graph's names, the
 * library's messages and the command's terminal escapes (src/cli/cli_util.c,
 * compiled into this test). Before the decoder was one, the library's
 * messages let overlongs and surrogates through as they were.
 */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_flame.h"
#include "tc_writer.h"
#include "unit.h"
#include "../../src/cli/cli_util.h"

#include <stdlib.h>

/* ---- the decoder against a definition from the bits ---- */

/* Whether s[0, n) is exactly one well-formed character, from the definition: a lead byte
 * 0xxxxxxx, 110xxxxx, 1110xxxx or 11110xxx says the length, the others are 10xxxxxx, and the
 * code point is the shortest form's (not below 0x80, 0x800, 0x10000), not a surrogate and
 * at most 0x10FFFF. */
static bool one_character(const uint8_t *s, size_t n, uint32_t *cp)
{
    size_t len = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3 : (s[0] >> 3) == 30 ? 4 : 0;
    static const uint32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (!len || len != n)
        return false;
    uint32_t v = len == 1 ? s[0] : s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] >> 6) != 2)
            return false;
        v = v << 6 | (s[i] & 0x3F);
    }
    *cp = v;
    return v >= shortest[len] && v <= 0x10FFFF && !(v >= 0xD800 && v <= 0xDFFF);
}

/* The decoder on s[0, n): a whole character, or invalid at its first byte already. */
static void check_sequence(const uint8_t *s, size_t n, unsigned *mismatches)
{
    uint32_t want = 0, got;
    bool valid = one_character(s, n, &want);
    size_t k = tci_utf8_next(s, n, &got);
    bool ok = valid ? k == n && got == want : got == TCI_UTF8_INVALID ? k >= 1 && k <= n : k < n;
    if (!ok && (*mismatches)++ < 5)
        fprintf(stderr, "  %zu bytes %02X %02X %02X %02X: length %zu, U+%04X\n", n, s[0], n > 1 ? s[1] : 0,
                n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, k, (unsigned)got);
    CHECK_EQ_INT(tci_utf8_len(s, n) == n, valid);
}

static void test_decoder_agrees_with_the_definition(void)
{
    unsigned mismatches = 0;
    uint8_t s[4];
    for (unsigned a = 0; a < 256; a++) {
        s[0] = (uint8_t)a;
        check_sequence(s, 1, &mismatches);
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (uint8_t)b;
            check_sequence(s, 2, &mismatches);
            for (unsigned c = 0; c < 256 && a >= 0xC0; c++) {
                s[2] = (uint8_t)c;
                check_sequence(s, 3, &mismatches);
                static const uint8_t last[] = {0x00, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
                for (size_t d = 0; d < sizeof last && a >= 0xF0; d++) {
                    s[3] = last[d];
                    check_sequence(s, 4, &mismatches);
                }
            }
        }
    }
    CHECK_EQ_INT(mismatches, 0);
}

static void test_encoder_round_trips(void)
{
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        char u[4];
        uint32_t back;
        size_t k = tci_utf8_encode(cp, u);
        if (tci_utf8_next((const uint8_t *)u, k, &back) != k || back != cp) {
            CHECK_EQ_INT(back, cp);
            break;
        }
    }
}

/* The subparts the decoder finds in s, as "U+0061 FFFD:3 ..." (FFFD:n: n bytes not UTF-8). */
static const char *subparts(const char *s)
{
    static char out[512];
    size_t o = 0, n = strlen(s);
    out[0] = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = tci_utf8_next((const uint8_t *)s + i, n - i, &cp);
        if (cp == TCI_UTF8_INVALID)
            o += (size_t)snprintf(out + o, sizeof out - o, "%sFFFD:%zu", o ? " " : "", k);
        else
            o += (size_t)snprintf(out + o, sizeof out - o, "%sU+%04X", o ? " " : "", (unsigned)cp);
        i += k;
    }
    return out;
}

/* The Unicode Standard, chapter 3.9: tables 3-8 (non-shortest forms), 3-9 (surrogates),
 * 3-10 (other ill-formed sequences), 3-11 (truncated sequences), and the example above
 * them: one U+FFFD per maximal subpart. */
static void test_maximal_subparts_of_the_standard(void)
{
    CHECK_EQ_STR(subparts("a\xF1\x80\x80\xE1\x80\xC2" "b\x80" "c\x80\xBF" "d"),
                 "U+0061 FFFD:3 FFFD:2 FFFD:1 U+0062 FFFD:1 U+0063 FFFD:1 FFFD:1 U+0064");
    CHECK_EQ_STR(subparts("\xC0\xAF\xE0\x80\xBF\xF0\x81\x82" "A"),
                 "FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 U+0041");
    CHECK_EQ_STR(subparts("\xED\xA0\x80\xED\xBF\xBF\xED\xAF" "A"),
                 "FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 U+0041");
    CHECK_EQ_STR(subparts("\xF4\x91\x92\x93\xFF" "A\x80\xBF" "B"),
                 "FFFD:1 FFFD:1 FFFD:1 FFFD:1 FFFD:1 U+0041 FFFD:1 FFFD:1 U+0042");
    CHECK_EQ_STR(subparts("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF" "A"), "FFFD:2 FFFD:1 FFFD:3 FFFD:2 U+0041");
    CHECK_EQ_STR(subparts("\xE2\x82"), "FFFD:2"); /* cut short by the end of the name */
    /* noncharacters are characters: well-formed, each caller decides how to show them */
    CHECK_EQ_STR(subparts("\xEF\xBF\xBE\xEF\xB7\x90\xF4\x8F\xBF\xBF"), "U+FFFE U+FDD0 U+10FFFF");
}

/* ---- every caller: the same name, each with its rule for what is not UTF-8 ---- */

/* An overlong '/', an overlong NUL (3 bytes), a surrogate, U+110000, a noncharacter, U+10FFFF
 * (a noncharacter too), a valid e-acute, and a sequence cut short at the end. */
#define HOSTILE "a\xC0\xAF" "b\xE0\x80\x80" "c\xED\xA0\x80" "d\xF4\x90\x80\x80" "e\xEF\xBF\xBE\xF4\x8F\xBF\xBF\xC3\xA9\xE2\x82"

static unit_buf out;
static tci_sink sink;

static tci_sink *open_sink(void)
{
    free(out.p);
    out = (unit_buf){NULL, 0, 0};
    unit_to_buf(&out, "", 0);
    CHECK_EQ_INT(tci_sink_open_fn(&sink, unit_to_buf, &out, false), TC_OK);
    return &sink;
}

static const char *close_sink(void)
{
    CHECK_EQ_INT(tci_sink_close(&sink), TC_OK);
    return out.p;
}

/* JSON strings (sink.c): each byte that is not UTF-8 is \ufffd, characters as they are. */
static void test_json_string(void)
{
    tci_sink_json_string(open_sink(), HOSTILE);
    CHECK_EQ_STR(close_sink(), "\"a\\ufffd\\ufffdb\\ufffd\\ufffd\\ufffdc\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffd\\ufffd"
                               "e\xEF\xBF\xBE\xF4\x8F\xBF\xBF\xC3\xA9\\ufffd\\ufffd\"");
    tci_arena a = {0};
    size_t len;
    char *q = tci_json_quote(&a, "\xED\xBF\xBF", &len);
    CHECK(q && len == 20 && !memcmp(q, "\"\\ufffd\\ufffd\\ufffd\"", len));
    tci_arena_free(&a);
}

/* The text report (textout.c): each byte that is not UTF-8 as \xHH; CSV: one U+FFFD per maximal
 * subpart, as the markup (escape.h's text rule). */
static void test_text_and_csv(void)
{
    tci_put_escaped_text(open_sink(), HOSTILE);
    CHECK_EQ_STR(close_sink(), "a\\xC0\\xAFb\\xE0\\x80\\x80c\\xED\\xA0\\x80d\\xF4\\x90\\x80\\x80"
                               "e\xEF\xBF\xBE\xF4\x8F\xBF\xBF\xC3\xA9\\xE2\\x82");
#define R "\xEF\xBF\xBD"
    tci_put_csv_text(open_sink(), HOSTILE, false);
    CHECK_EQ_STR(close_sink(), "a" R R "b" R R R "c" R R R "d" R R R R "e\xEF\xBF\xBE\xF4\x8F\xBF\xBF\xC3\xA9" R);
}

/* Markup (escape.c): one U+FFFD per maximal subpart; noncharacters are not shown either. */
static void test_markup(void)
{
    tci_put_markup(open_sink(), HOSTILE, TCI_ESC_REPLACE);
    CHECK_EQ_STR(close_sink(), "a" R R "b" R R R "c" R R R "d" R R R R "e" R R "\xC3\xA9" R);
}

/* The flame graph (flamesvg.c) decodes names itself, for widths and colours: the same rule. */
static void test_flame_graph_name(void)
{
    tci_flame *f = tci_flame_new(false);
    tci_flame_add(f, tci_flame_child(f, TCI_FLAME_ROOT, tci_flame_name(f, HOSTILE, strlen(HOSTILE))), 5, 5);
    tci_flame_opts o = {.palette = TCI_PAL_HOT, .minwidth = 0.1};
    CHECK_EQ_INT(tci_flame_render(f, &o, open_sink()), TC_OK);
    const char *svg = close_sink();
    CHECK(strstr(svg, "<title>a" R R "b" R R R "c" R R R "d" R R R R "e" R R "\xC3\xA9" R " (5 samples, 100.00%)</title>"));
    tci_flame_free(f);
}

/* The library's messages (util.c): one line, each byte that is not UTF-8 as \xhh. */
static void test_message(void)
{
    tci_diag d;
    memset(&d, 0, sizeof d);
    tci_error(&d, TC_ERR_FORMAT, "json", UINT64_MAX, "name %s", HOSTILE);
    CHECK_EQ_STR(d.error, "json: name a\\xc0\\xafb\\xe0\\x80\\x80c\\xed\\xa0\\x80d\\xf4\\x90\\x80\\x80"
                          "e\xEF\xBF\xBE\xF4\x8F\xBF\xBF\xC3\xA9\\xe2\\x82");
}

/* The command's terminal escapes (cli_util.c): the same, and C1 controls as \u00XX. */
static void test_terminal(void)
{
    char esc[512];
    cli_escape(HOSTILE "\xC2\x9B", esc, sizeof esc);
    CHECK_EQ_STR(esc, "a\\xc0\\xafb\\xe0\\x80\\x80c\\xed\\xa0\\x80d\\xf4\\x90\\x80\\x80"
                      "e\xEF\xBF\xBE\xF4\x8F\xBF\xBF\xC3\xA9\\xe2\\x82\\u009b");
}

int main(void)
{
    UNIT_RUN(test_decoder_agrees_with_the_definition);
    UNIT_RUN(test_encoder_round_trips);
    UNIT_RUN(test_maximal_subparts_of_the_standard);
    UNIT_RUN(test_json_string);
    UNIT_RUN(test_text_and_csv);
    UNIT_RUN(test_markup);
    UNIT_RUN(test_flame_graph_name);
    UNIT_RUN(test_message);
    UNIT_RUN(test_terminal);
    free(out.p);
    return UNIT_DONE();
}
