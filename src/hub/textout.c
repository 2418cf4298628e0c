/*
 * textout.c - names as the table writers print them (the report's text and
 * CSV, the diff's text and CSV), so that a name reads the same in every one
 * of them and one fix reaches them all.
 *
 * Text and CSV: escape.h's text rule (printable UTF-8 as it is; control
 * characters and backslashes as escapes: \n, \\, \x1B, \u009B), so no name
 * can break a line or drive a terminal; bytes that are not UTF-8 as \xFF in
 * text, U+FFFD in CSV, whose field is also quoted when it must be (RFC 4180).
 * Markup and Graphviz labels: escape.h's rules, into a sink.
 */
#include "tc_trace.h"
#include "tc_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* escape.h's writer: the bytes into the sink */
static void sink_put(void *sink, const char *p, size_t n) { tci_sink_write(sink, p, n); }

void tci_put_escaped_text(tci_sink *o, const char *s)
{
    /* Most names are printable ASCII without a backslash: that prefix goes out as one write
     * (the walk would copy it byte by byte, unchanged), escape.h's text rule takes the rest. */
    size_t n = 0;
    while ((uint8_t)s[n] >= 0x20 && (uint8_t)s[n] < 0x7f && s[n] != '\\')
        n++;
    tci_sink_write(o, s, n);
    if (s[n])
        tci_esc_text(sink_put, o, s + n, strlen(s + n), true);
}

bool tci_csv_needs_quotes(const char *s) { return s && s[strcspn(s, ",\"\r\n")]; }

/* escape.h's writer for a quoted CSV field: each '"' doubled */
static void csv_quoted_put(void *sink, const char *p, size_t n)
{
    for (const char *q; (q = memchr(p, '"', n)) != NULL; n -= (size_t)(q + 1 - p), p = q + 1) {
        tci_sink_write(sink, p, (size_t)(q + 1 - p));
        tci_sink_putc(sink, '"');
    }
    if (n)
        tci_sink_write(sink, p, n);
}

void tci_put_csv_text(tci_sink *o, const char *s, bool quoted)
{
    tci_esc_text(quoted ? csv_quoted_put : sink_put, o, s, strlen(s), false); /* the text rule, then CSV's quotes */
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

/* ---- numbers and strings into a sink, fast: no printf in hot paths (they were sink.c's) ---- */

/* Decimal digits of v, written backwards from end; returns the start. Two digits per division. */
static char *format_u64(char *end, uint64_t v)
{
    char *p = end;
    while (v >= 100) {
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digit_pairs[k + 1];
        *--p = digit_pairs[k];
    }
    if (v >= 10) {
        *--p = digit_pairs[v * 2 + 1];
        *--p = digit_pairs[v * 2];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

void tci_sink_u64(tci_sink *s, uint64_t v)
{
    char tmp[24];
    char *p = format_u64(tmp + sizeof tmp, v);
    tci_sink_write(s, p, (size_t)(tmp + sizeof tmp - p));
}

void tci_sink_i64(tci_sink *s, int64_t v)
{
    if (v < 0) {
        tci_sink_putc(s, '-');
        tci_sink_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        tci_sink_u64(s, (uint64_t)v);
    }
}

/* Digits of v < 2^32, backwards from end, in 32-bit arithmetic: a trace's times in ns from its
 * start and in µs of CPU time mostly fit, and their division by 100 is a cheaper multiply.
 * Four digits per division while there are more than four (json writes two such numbers per
 * event, of 7-8 digits: two rounds instead of four). */
static inline __attribute__((always_inline)) char *format_u32(char *end, uint32_t v)
{
    char *p = end;
    while (v >= 10000) {
        uint32_t four = v % 10000;
        v /= 10000;
        p -= 4;
        memcpy(p, digit_pairs + four / 100 * 2, 2);
        memcpy(p + 2, digit_pairs + four % 100 * 2, 2);
    }
    if (v >= 100) {
        unsigned k = v % 100 * 2;
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + k, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + v * 2, 2);
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

/* v / 1000 as "whole.ddd" (a minus sign first), written backwards from end; returns the start. */
static inline __attribute__((always_inline)) char *format_milli(char *end, int64_t v)
{
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t whole = a / 1000;
    unsigned frac = (unsigned)(a - whole * 1000), tens = frac / 10; /* ".ddd": a pair and a digit */
    end[-4] = '.';
    memcpy(end - 3, digit_pairs + tens * 2, 2);
    end[-1] = (char)('0' + (frac - tens * 10));
    char *p = whole <= UINT32_MAX ? format_u32(end - 4, (uint32_t)whole) : format_u64(end - 4, whole);
    if (v < 0)
        *--p = '-';
    return p;
}

/* Formatted before tmp + 32 and copied as a fixed 32 bytes: two vector moves, no memcpy call
 * (json writes two of these per event); any int64 has fewer than 32 characters. */
size_t tci_fmt_milli(char *dst, int64_t v)
{
    char tmp[64];
    char *p = format_milli(tmp + 32, v);
    memcpy(dst, p, TCI_MILLI_ROOM);
    return (size_t)(tmp + 32 - p);
}

/* The memo keeps the text of v / MEMO_LOW; each call places the last seven digits "dddd.ddd".
 * 10^7 ns: a thread's next time is mostly within the same 10 ms (misses cost a division per digit
 * pair and a mispredicted branch: 100 µs missed on 8.5% of the bench trace's times). */
#define MEMO_LOW 10000000u

static inline size_t memo_place(char *dst, int64_t v, uint64_t hi, const tci_milli_memo *m)
{
    unsigned low = (unsigned)((uint64_t)v - hi * MEMO_LOW);
    unsigned whole = low / 1000, frac = low - whole * 1000, tens = frac / 10;
    unsigned top = whole / 100;
    memcpy(dst, m->text, 16);
    char *d = dst + m->len;
    memcpy(d, digit_pairs + top * 2, 2);
    memcpy(d + 2, digit_pairs + (whole - top * 100) * 2, 2);
    d[4] = '.';
    memcpy(d + 5, digit_pairs + tens * 2, 2);
    d[7] = (char)('0' + (frac - tens * 10));
    return m->len + 8;
}

/* Out of line, so that the common call (a kept text) saves no registers and calls nothing. */
static __attribute__((noinline)) size_t memo_miss(char *dst, int64_t v, tci_milli_memo *m)
{
    if (v < (int64_t)MEMO_LOW) /* no digits before the last seven (or a minus sign) */
        return tci_fmt_milli(dst, v);
    uint64_t hi = (uint64_t)v / MEMO_LOW;
    char tmp[24];
    char *p = format_u64(tmp + sizeof tmp, hi); /* at most 12 digits: 2^63 / 10^7 */
    m->len = (uint32_t)(tmp + sizeof tmp - p);
    memcpy(m->text, p, m->len);
    m->hi = hi;
    return memo_place(dst, v, hi, m);
}

size_t tci_fmt_milli_memo(char *dst, int64_t v, tci_milli_memo *m)
{
    uint64_t hi = (uint64_t)v / MEMO_LOW;
    if (TCI_UNLIKELY(v < (int64_t)MEMO_LOW || hi != m->hi))
        return memo_miss(dst, v, m);
    return memo_place(dst, v, hi, m);
}

/* A buffer without 32 bytes of room: kept out of the common path. */
static __attribute__((noinline)) void milli_rare(tci_sink *s, int64_t v)
{
    char tmp[TCI_MILLI_ROOM];
    tci_sink_write(s, tmp, tci_fmt_milli(tmp, v));
}

void tci_sink_milli(tci_sink *s, int64_t v)
{
    if (TCI_UNLIKELY(s->len + TCI_MILLI_ROOM > sizeof s->buf)) {
        milli_rare(s, v);
        return;
    }
    s->len += tci_fmt_milli((char *)s->buf + s->len, v);
}

void tci_sink_printf(tci_sink *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof buf) {
        tci_sink_write(s, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        tci_sink_fail(s, ENOMEM);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tci_sink_write(s, big, (size_t)n);
    free(big);
}

/* Escape n bytes of str as a JSON string literal into dst (room for 6n+2). Every control
 * character (C0, DEL, C1) is an escape, so a JSON output that a person cats cannot drive the
 * terminal; JSON readers read the same string. */
static size_t json_escape(char *dst, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)str;
    size_t o = 0;
    dst[o++] = '"';
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x7F) {
            dst[o++] = (char)c;
            i++;
        } else if (c == 0xC2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F) { /* C1: U+0080..U+009F */
            memcpy(dst + o, "\\u00", 4);
            dst[o + 4] = hex[p[i + 1] >> 4];
            dst[o + 5] = hex[p[i + 1] & 15];
            o += 6;
            i += 2;
        } else if (c >= 0x80) {
            size_t k = tci_utf8_len(p + i, n - i);
            if (k) {
                memcpy(dst + o, p + i, k);
                o += k;
                i += k;
            } else { /* not UTF-8: keep the JSON valid */
                memcpy(dst + o, "\\ufffd", 6);
                o += 6;
                i++;
            }
        } else {
            dst[o++] = '\\';
            if (c == '"' || c == '\\') dst[o++] = (char)c;
            else if (c == '\n') dst[o++] = 'n';
            else if (c == '\t') dst[o++] = 't';
            else {
                memcpy(dst + o, "u00", 3);
                dst[o + 3] = hex[c >> 4];
                dst[o + 4] = hex[c & 15];
                o += 5;
            }
            i++;
        }
    }
    dst[o++] = '"';
    return o;
}

size_t tci_json_quote_to(char *dst, const char *str, size_t n) { return json_escape(dst, str, n); }

void tci_sink_json_string(tci_sink *s, const char *str)
{
    size_t n = strlen(str);
    char small[1024];
    char *buf = n <= (sizeof small - 2) / 6 ? small : malloc(6 * n + 2);
    if (!buf) {
        tci_sink_fail(s, ENOMEM);
        return;
    }
    tci_sink_write(s, buf, json_escape(buf, str, n));
    if (buf != small)
        free(buf);
}

char *tci_json_quote(tci_arena *a, const char *str, size_t *len)
{
    size_t n = strlen(str);
    char *buf = tci_arena_alloc(a, 6 * n + 2);
    if (buf) {
        *len = json_escape(buf, str, n);
        tci_arena_trim(a, buf, *len); /* the room for escapes that were not needed: 80 bytes a name */
    }
    return buf;
}
