/*
 * escape.c - the escaping rules of src/util/escape.c, one context at a time,
 * against expectations written out by hand from the rules (HTML's script
 * data states, XML 1.0's Char production, dot's label escapes, JSON), and
 * the sink's script-data mode: the rule holds on the bytes as finally
 * written, when a '<' and the '/' after it are written by different calls
 * and land on both sides of a flush of the sink's 64 KiB buffer.
 */
#include "tc_writer.h"
#include "unit.h"

#include <stdlib.h>

typedef struct buf {
    char p[4096];
    size_t len;
    unsigned calls;
} buf;

static void put(void *to, const char *p, size_t n)
{
    buf *b = to;
    CHECK(n > 0); /* escape.h: never called with nothing */
    if (b->len + n < sizeof b->p) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    }
    b->p[b->len] = 0;
    b->calls++;
}

static const char *markup(const char *s, enum tci_esc_shown shown)
{
    static buf b;
    b.len = 0;
    b.p[0] = 0;
    tci_esc_markup(put, &b, s, strlen(s), shown);
    return b.p;
}

static const char *js(const char *s)
{
    static buf b;
    b.len = 0;
    b.p[0] = 0;
    tci_esc_js_string(put, &b, s, strlen(s));
    return b.p;
}

static const char *js_visible(const char *s)
{
    static buf b;
    b.len = 0;
    b.p[0] = 0;
    tci_esc_js_visible(put, &b, s, strlen(s));
    return b.p;
}

static const char *dot(const char *s, size_t max)
{
    static buf b;
    b.len = 0;
    b.p[0] = 0;
    tci_esc_dot_label(put, &b, s, strlen(s), max);
    return b.p;
}

#define FFFD "\xEF\xBF\xBD"

static void test_markup(void)
{
    CHECK_EQ_STR(markup("com.example.A.<init> ()V", TCI_ESC_REPLACE), "com.example.A.&lt;init&gt; ()V");
    CHECK_EQ_STR(markup("</script><img src=x onerror='a&b'>\"", TCI_ESC_REPLACE),
                 "&lt;/script&gt;&lt;img src=x onerror=&#39;a&amp;b&#39;&gt;&quot;");
    CHECK_EQ_STR(markup("]]><!--", TCI_ESC_REPLACE), "]]&gt;&lt;!--");
    /* not XML characters: C0 (a name is one line: TAB, LF, CR too), U+FFFE, U+FFFF; C1, DEL */
    CHECK_EQ_STR(markup("a\x01\t\n\rb\x7f", TCI_ESC_REPLACE), "a" FFFD FFFD FFFD FFFD "b" FFFD);
    CHECK_EQ_STR(markup("\xEF\xBF\xBF\xEF\xBF\xBE\xC2\x85\xEF\xB7\x90", TCI_ESC_REPLACE), FFFD FFFD FFFD FFFD);
    /* invalid UTF-8: one U+FFFD per maximal subpart (a surrogate ED A0 80 is three) */
    CHECK_EQ_STR(markup("s\xED\xA0\x80t", TCI_ESC_REPLACE), "s" FFFD FFFD FFFD "t");
    CHECK_EQ_STR(markup("\xF0\x9F\x98x\xFF\xC0\xAF", TCI_ESC_REPLACE), FFFD "x" FFFD FFFD FFFD);
    CHECK_EQ_STR(markup("\xF0\x9F\x98\x80 \xE2\x80\xA8 \xC3\xA9", TCI_ESC_REPLACE),
                 "\xF0\x9F\x98\x80 \xE2\x80\xA8 \xC3\xA9"); /* U+1F600, U+2028, é stay */
    CHECK_EQ_STR(markup("cut \xE2\x82", TCI_ESC_REPLACE), "cut " FFFD);
    /* visible: the text report's escapes, backslash doubled */
    CHECK_EQ_STR(markup("a\\b\n\r\t\x01\x7f\xC2\x85<", TCI_ESC_VISIBLE), "a\\\\b\\n\\r\\t\\x01\\x7F\\u0085&lt;");
    CHECK_EQ_STR(markup("\xEF\xBF\xBF\xFF", TCI_ESC_VISIBLE), FFFD FFFD);
    CHECK_EQ_STR(markup("", TCI_ESC_VISIBLE), "");
}

static void test_markup_cp(void)
{
    static buf b;
    const uint32_t cp[] = {'<', 'a', '&', 0xE9, 0xFFFF, 0xD800, 0x1F600, 0x110000, '\'', 0x85, '\n'};
    tci_esc_markup_cp(put, &b, cp, sizeof cp / sizeof *cp);
    CHECK_EQ_STR(b.p, "&lt;a&amp;\xC3\xA9" FFFD FFFD "\xF0\x9F\x98\x80" FFFD "&#39;" FFFD FFFD);
}

static void test_js(void)
{
    CHECK_EQ_STR(js("plain name.json"), "plain name.json");
    CHECK_EQ_STR(js("\"\\</script>'&"), "\\\"\\\\\\u003c/script\\u003e\\u0027\\u0026");
    CHECK_EQ_STR(js("a\nb\x01\x7f"), "a\\u000ab\\u0001\\u007f");
    CHECK_EQ_STR(js("\xE2\x80\xA8\xE2\x80\xA9\xFF\xEF\xBF\xBF"), "\\u2028\\u2029\\ufffd\\uffff");
    CHECK_EQ_STR(js("\xC3\xA9"), "\xC3\xA9");
    /* a noncharacter past the BMP: a surrogate pair, not "\u1ffff" (which JavaScript reads as U+1FFF, "f") */
    CHECK_EQ_STR(js("\xF0\x9F\xBF\xBF|\xF4\x8F\xBF\xBE"), "\\ud83f\\udfff|\\udbff\\udffe");
    /* the visible form: what markup(TCI_ESC_VISIBLE) shows, as a literal (each backslash doubled) */
    CHECK_EQ_STR(js_visible("a\\b\n\r\t\x01\x7f\xC2\x85<"), "a\\\\\\\\b\\\\n\\\\r\\\\t\\\\x01\\\\x7F\\\\u0085\\u003c");
    CHECK_EQ_STR(js_visible("\xEF\xBF\xBF\xFF\xF0\x9F\xBF\xBF\"'&>"), "\\ufffd\\ufffd\\ufffd\\\"\\u0027\\u0026\\u003e");
    CHECK_EQ_STR(js_visible("\xE2\x80\xA8 \xC3\xA9 \xF0\x9F\x98\x80"), "\\u2028 \xC3\xA9 \xF0\x9F\x98\x80");
}

static void test_dot(void)
{
    CHECK_EQ_STR(dot("a.B.<init> ()V {}|", 400), "a.B.<init> ()V {}|"); /* dot escapes < > itself */
    CHECK_EQ_STR(dot("q\"uote back\\slash", 400), "q\\\"uote back\\\\\\\\slash");
    CHECK_EQ_STR(dot("new\nline tab\t\x01", 400), "new\\\\nline tab\\\\t\\\\x01");
    CHECK_EQ_STR(dot("&amp; &#xFFFF; &", 400), "&amp;amp; &amp;#xFFFF; &amp;");
    CHECK_EQ_STR(dot("\xEF\xBF\xBF\xEF\xBF\xBE\xED\xA0\x80\xC2\x85", 400), FFFD FFFD FFFD FFFD FFFD "\\\\u0085");
    /* cut after max bytes, between characters */
    CHECK_EQ_STR(dot("abcdef", 3), "abc...");
    CHECK_EQ_STR(dot("ab\xC3\xA9xyz", 3), "ab\xC3\xA9...");
    CHECK_EQ_STR(dot("abc", 3), "abc");
}

/* The script-data rule on s, fed in pieces cut at every pair of positions: always the same
 * bytes, those of want. */
static void script_split(const char *s, const char *want)
{
    size_t n = strlen(s);
    for (size_t i = 0; i <= n; i++) {
        for (size_t j = i; j <= n; j++) {
            buf b = {.len = 0};
            tci_esc_script st = {0};
            tci_esc_script_data(put, &b, s, i, &st);
            tci_esc_script_data(put, &b, s + i, j - i, &st);
            tci_esc_script_data(put, &b, s + j, n - j, &st);
            tci_esc_script_end(put, &b, &st);
            b.p[b.len] = 0;
            if (strcmp(b.p, want)) {
                fprintf(stderr, "split at %zu, %zu: \"%s\"\n", i, j, b.p);
                CHECK_EQ_STR(b.p, want);
                return;
            }
        }
    }
}

static void test_script_data(void)
{
    script_split("B|7|<init>", "B|7|<init>");
    script_split("x</script><img src=x onerror=alert(1)>", "x<\\/script><img src=x onerror=alert(1)>");
    script_split("ab<!--7 <!-- -->", "ab<\\!--7 <\\!-- -->");
    script_split("<</<!<", "<<\\/<\\!<");
    script_split("</SCRIPT <!DOCTYPE", "<\\/SCRIPT <\\!DOCTYPE");
    script_split("a > b & c", "a > b & c");
    /* "<script" in any case (issue 38): the backslash after its '<'; a prefix of it is left */
    script_split("</ScRiPt><!--<script>", "<\\/ScRiPt><\\!--<\\script>");
    script_split("x<SCRIPT src=y><scrip<scri<<script", "x<\\SCRIPT src=y><scrip<scri<<\\script");
    script_split("List<String> <s <sc", "List<String> <s <sc");
    script_split("<scrip", "<scrip");
    script_split("<", "<");
}

/* The sink's script-data mode: '<' as the last byte of a full buffer, '/' as the first of the next. */
static int to_mem(void *user, const void *p, size_t n)
{
    buf *b = user; /* keeps the last bytes: what was written around the flush, and the tail */
    const char *c = p;
    size_t half = sizeof b->p / 2;
    if (n >= half) {
        c += n - half;
        n = half;
        b->len = 0;
    } else if (b->len + n >= sizeof b->p) {
        memmove(b->p, b->p + b->len - half, half);
        b->len = half;
    }
    memcpy(b->p + b->len, c, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

static void test_sink_script_data(void)
{
    static tci_sink s;
    static buf b;
    CHECK_EQ_INT(tci_sink_open_fn(&s, to_mem, &b, false), TC_OK);
    TCI_PUT_LIT(&s, "<script>");
    tci_sink_script_data(&s, true);
    CHECK_EQ_INT(b.len, 0); /* a switch is noted, not flushed: nothing leaves earlier for it */
    static char fill[sizeof s.buf];
    memset(fill, 'x', sizeof fill);
    tci_sink_write(&s, fill, sizeof fill - 1 - strlen("<script>")); /* after "<script>", up to */
    tci_sink_putc(&s, '<');                                          /* the buffer's last byte */
    CHECK_EQ_INT(s.len, sizeof s.buf);
    TCI_PUT_LIT(&s, "/script><!"); /* flushed before these */
    tci_sink_putc(&s, '-');
    tci_sink_putc(&s, '-');
    tci_sink_script_data(&s, false);
    TCI_PUT_LIT(&s, "</script>");
    CHECK_EQ_INT(tci_sink_close(&s), TC_OK);
    const char *tail = b.p + b.len - strlen("x<\\/script><\\!--</script>");
    CHECK_EQ_STR(tail, "x<\\/script><\\!--</script>");
}

/* "<scr" as the last bytes of a full buffer, "ipt>" the first of the next: held back across the
 * flush, then written "<\\script>"; a block's held "<sc" goes out as it is when the block ends. */
static void test_sink_script_split(void)
{
    static tci_sink s;
    static buf b;
    CHECK_EQ_INT(tci_sink_open_fn(&s, to_mem, &b, false), TC_OK);
    tci_sink_script_data(&s, true);
    static char fill[sizeof s.buf];
    memset(fill, 'x', sizeof fill);
    tci_sink_write(&s, fill, sizeof fill - 4);
    TCI_PUT_LIT(&s, "<scr");
    CHECK_EQ_INT(s.len, sizeof s.buf);
    TCI_PUT_LIT(&s, "ipt>y<sc");
    tci_sink_script_data(&s, false);
    TCI_PUT_LIT(&s, "ript>");
    CHECK_EQ_INT(tci_sink_close(&s), TC_OK);
    const char *want = "x<\\script>y<script>";
    CHECK_EQ_STR(b.p + b.len - strlen(want), want);
}

/* More blocks in one buffer than the sink notes switches for: each block under the rule, the
 * text between them as it is, and the '<' that ends one block never pairs with the next's '/' */
static void test_sink_many_blocks(void)
{
    static tci_sink s;
    static buf b;
    CHECK_EQ_INT(tci_sink_open_fn(&s, to_mem, &b, false), TC_OK);
    char want[1024] = "";
    for (int i = 0; i < 20; i++) {
        tci_sink_script_data(&s, true);
        TCI_PUT_LIT(&s, "a</b<");
        tci_sink_script_data(&s, false);
        TCI_PUT_LIT(&s, "/c</d>");
        strcat(want, "a<\\/b</c</d>");
    }
    CHECK_EQ_INT(tci_sink_close(&s), TC_OK);
    CHECK_EQ_STR(b.p, want);
}

int main(void)
{
    UNIT_RUN(test_markup);
    UNIT_RUN(test_markup_cp);
    UNIT_RUN(test_js);
    UNIT_RUN(test_dot);
    UNIT_RUN(test_script_data);
    UNIT_RUN(test_sink_script_split);
    UNIT_RUN(test_sink_script_data);
    UNIT_RUN(test_sink_many_blocks);
    return UNIT_DONE();
}
