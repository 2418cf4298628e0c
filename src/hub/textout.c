/*
 * textout.c - names as the table writers print them (the report's text and
 * CSV, the diff's text and CSV), so that a name reads the same in every one
 * of them and one fix reaches them all.
 *
 * Text: printable UTF-8 as it is; control bytes, backslashes and bytes that
 * are not UTF-8 as escapes (\n, \r, \t, \\, \xHH), so no name can break a
 * line. CSV: a field is quoted when it must be (RFC 4180), bytes that are
 * not UTF-8 become U+FFFD. Markup and Graphviz labels: escape.h's rules, into
 * a sink.
 */
#include "tc_trace.h"
#include "tc_writer.h"

#include <math.h>

void tci_put_escaped_with(tci_sink *o, const char *s, size_t max, void (*escape_byte)(tci_sink *o, uint8_t c))
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        if (i >= max) {
            TCI_PUT_LIT(o, "...");
            return;
        }
        uint8_t c = p[i];
        size_t k = c >= 0x80 ? tci_utf8_len(p + i, n - i) : 1;
        if (c >= 0x80 && k) {
            tci_sink_write(o, p + i, k);
            i += k;
            continue;
        }
        escape_byte(o, c);
        i++;
    }
}

static void text_byte(tci_sink *o, uint8_t c)
{
    if (c == '\\')
        TCI_PUT_LIT(o, "\\\\");
    else if (c == '\n')
        TCI_PUT_LIT(o, "\\n");
    else if (c == '\r')
        TCI_PUT_LIT(o, "\\r");
    else if (c == '\t')
        TCI_PUT_LIT(o, "\\t");
    else if (c < 0x20 || c >= 0x7f)
        tci_sink_printf(o, "\\x%02X", c);
    else
        tci_sink_putc(o, (char)c);
}

void tci_put_escaped_text(tci_sink *o, const char *s)
{
    /* Most names are printable ASCII without a backslash: that prefix goes out as one write
     * (the walk would copy it byte by byte, unchanged), the walk takes the rest. */
    size_t n = 0;
    while ((uint8_t)s[n] >= 0x20 && (uint8_t)s[n] < 0x7f && s[n] != '\\')
        n++;
    tci_sink_write(o, s, n);
    if (s[n])
        tci_put_escaped_with(o, s + n, SIZE_MAX, text_byte);
}

bool tci_csv_needs_quotes(const char *s) { return s && s[strcspn(s, ",\"\r\n")]; }

void tci_put_csv_text(tci_sink *o, const char *s, bool quoted)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = p[i] >= 0x80 ? tci_utf8_len(p + i, n - i) : 1;
        if (!k) {
            TCI_PUT_LIT(o, "\xEF\xBF\xBD");
            i++;
            continue;
        }
        if (quoted && p[i] == '"')
            tci_sink_putc(o, '"');
        tci_sink_write(o, p + i, k);
        i += k;
    }
}

void tci_put_csv_field(tci_sink *o, const char *s)
{
    bool quoted = tci_csv_needs_quotes(s);
    if (quoted)
        tci_sink_putc(o, '"');
    tci_put_csv_text(o, s, quoted);
    if (quoted)
        tci_sink_putc(o, '"');
}

void tci_put_method_name(tci_sink *o, const tci_method *m, void (*put)(tci_sink *, const char *))
{
    if (m->plain_name) {
        put(o, m->name);
    } else if (!m->defined) {
        put(o, m->short_name); /* "unknown.0x1c": the name trace.c gives it, as every other writer shows it */
    } else {
        put(o, m->cls);
        tci_sink_putc(o, '.');
        put(o, m->name);
        if (m->sig && m->sig[0]) {
            tci_sink_putc(o, ' ');
            put(o, m->sig);
        }
    }
}

/* escape.h's writer: the bytes into the sink */
static void sink_put(void *sink, const char *p, size_t n) { tci_sink_write(sink, p, n); }

void tci_put_markup(tci_sink *o, const char *s, enum tci_esc_shown shown)
{
    tci_esc_markup(sink_put, o, s, strlen(s), shown);
}

void tci_put_markup_cp(tci_sink *o, const uint32_t *cp, size_t n) { tci_esc_markup_cp(sink_put, o, cp, n); }

void tci_put_js_visible(tci_sink *o, const char *s) { tci_esc_js_visible(sink_put, o, s, strlen(s)); }

void tci_put_dot_label(tci_sink *o, const char *s, size_t max) { tci_esc_dot_label(sink_put, o, s, strlen(s), max); }

/* ---- numbers as printf prints them, without its cost (a report prints millions) ---- */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t tci_fmt_u64(char *b, uint64_t v)
{
    char tmp[20], *end = tmp + sizeof tmp, *p = end;
    for (; v >= 100; v /= 100) { /* two digits a division */
        p -= 2;
        memcpy(p, digit_pairs + v % 100 * 2, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + v * 2, 2);
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(end - p);
    memcpy(b, p, n);
    b[n] = 0;
    return n;
}

size_t tci_fmt_i64(char *b, int64_t v)
{
    if (v >= 0)
        return tci_fmt_u64(b, (uint64_t)v);
    b[0] = '-';
    return 1 + tci_fmt_u64(b + 1, (uint64_t)0 - (uint64_t)v);
}

/* printf's "%.1f": the exact binary value of x rounded to tenths, a tie to the even tenth
 * (glibc's rule in the default rounding mode), "-" whenever the sign bit is set ("-0.0").
 * |x| = m * 2^-s exactly, so the tenths are m*10 >> s and the bits shifted out decide the
 * rounding; |x| >= 2^50, infinities and NaN are left to printf itself (false). */
bool tci_fixed1_tenths(double x, uint64_t *tenths)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int exp = (int)(bits >> 52 & 0x7ff);
    if (exp >= 1023 + 50)
        return false;
    uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
    if (exp)
        m |= UINT64_C(1) << 52;
    else
        exp = 1; /* subnormal */
    int s = 1075 - exp; /* >= 3 */
    *tenths = 0;
    if (s < 64) { /* else m*10 < 2^57 is below half of 2^s: 0 */
        uint64_t t = m * 10, rest = t & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
        *tenths = t >> s;
        if (rest > half || (rest == half && (*tenths & 1)))
            ++*tenths;
    }
    return true;
}

size_t tci_fmt_fixed1(char *b, double x)
{
    uint64_t tenths;
    if (!tci_fixed1_tenths(x, &tenths))
        return (size_t)snprintf(b, TCI_FMT_FIXED1_MAX, "%.1f", x);
    size_t n = 0;
    if (signbit(x))
        b[n++] = '-';
    n += tci_fmt_u64(b + n, tenths / 10);
    b[n++] = '.';
    b[n++] = (char)('0' + tenths % 10);
    b[n] = 0;
    return n;
}

void tci_put_aligned(tci_sink *o, const char *text, size_t len, int width)
{
    static const char blanks[32] = "                                ";
    size_t w = (size_t)(width < 0 ? -(int64_t)width : width), pad = w > len ? w - len : 0;
    if (TCI_LIKELY(o->len + pad + len <= sizeof o->buf)) { /* the common cell: straight into the buffer */
        uint8_t *at = o->buf + o->len;
        if (width < 0) {
            memcpy(at, text, len);
            memset(at + len, ' ', pad);
        } else {
            memset(at, ' ', pad);
            memcpy(at + pad, text, len);
        }
        o->len += pad + len;
        return;
    }
    if (width < 0)
        tci_sink_write(o, text, len);
    for (size_t k; pad; pad -= k) {
        k = pad < sizeof blanks ? pad : sizeof blanks;
        tci_sink_write(o, blanks, k);
    }
    if (width >= 0)
        tci_sink_write(o, text, len);
}
