/* sink.c - buffered output with optional gzip, and the number and string
 * formatting every text writer needs (fast: no printf in hot paths). */
#include "tc_base.h"
#include "tc_cancel.h"
#include "tc_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include <errno.h>

void tci_sink_fail(tci_sink *s, int errnum)
{
    if (!s->err) {
        s->errnum = errnum ? errnum : EIO;
        s->status = TC_ERR_IO;
    }
    s->err = 1;
}

void tci_sink_stop(tci_sink *s, int status)
{
    if (!s->err) {
        s->errnum = 0;
        s->status = status;
    }
    s->err = 1;
}

bool tci_cancel_ask(tci_cancel *c)
{
    c->budget = TCI_CANCEL_BUDGET;
    if (!c->stopped && c->ask(c->user))
        c->stopped = true;
    return c->stopped;
}

static int sink_init(tci_sink *s, bool gzip)
{
    s->len = 0;
    s->err = 0;
    s->errnum = 0;
    s->status = TC_OK;
    s->written = 0;
    s->emitted = 0;
    s->limit = UINT64_MAX;
    s->cancel = NULL;
    s->script_data = s->script_lt = s->script_at_start = false;
    s->n_switches = 0;
    s->z = NULL;
    s->zbuf = NULL;
    if (!gzip)
        return TC_OK;
    s->z = calloc(1, sizeof *s->z);
    s->zbuf = malloc(sizeof s->buf);
    if (!s->z || !s->zbuf)
        return TC_ERR_NOMEM;
    /* windowBits 15 + 16: a gzip wrapper, which is what pprof and zcat expect */
    if (deflateInit2(s->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(s->z);
        s->z = NULL;
        return TC_ERR_NOMEM;
    }
    return TC_OK;
}

int tci_sink_open(tci_sink *s, FILE *fp, bool gzip)
{
    s->fp = fp;
    s->fn = NULL;
    s->fn_user = NULL;
    return sink_init(s, gzip);
}

int tci_sink_open_fn(tci_sink *s, tc_write_fn fn, void *user, bool gzip)
{
    s->fp = NULL;
    s->fn = fn;
    s->fn_user = user;
    return sink_init(s, gzip);
}

/* The one place bytes leave the sink: a failure keeps its errno; past the limit
 * (max-output) nothing more leaves, and the output fails with TC_ERR_LIMIT. */
static int emit(tci_sink *s, const void *p, size_t n)
{
    if (TCI_UNLIKELY(n > s->limit - s->emitted)) {
        tci_sink_stop(s, TC_ERR_LIMIT);
        return -1;
    }
    s->emitted += n;
    errno = 0;
    int bad = s->fn ? s->fn(s->fn_user, p, n) != 0 : fwrite(p, 1, n, s->fp) != n;
    if (bad)
        tci_sink_fail(s, errno);
    return bad ? -1 : 0;
}

static int deflate_out(tci_sink *s, const uint8_t *p, size_t n, int flush)
{
    s->z->next_in = (Bytef *)p;
    s->z->avail_in = (uInt)n;
    int rc;
    do {
        s->z->next_out = s->zbuf;
        s->z->avail_out = sizeof s->buf;
        rc = deflate(s->z, flush);
        if (rc == Z_STREAM_ERROR) {
            tci_sink_fail(s, EIO);
            return -1;
        }
        size_t have = sizeof s->buf - s->z->avail_out;
        if (have && emit(s, s->zbuf, have) != 0)
            return -1;
    } while (s->z->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}

static int out(tci_sink *s, const void *p, size_t n)
{
    return s->z ? deflate_out(s, p, n, Z_NO_FLUSH) : emit(s, p, n);
}

/* escape.h's writer for the script-data rule: stops at the first failure */
static void out_script(void *sink, const char *p, size_t n)
{
    tci_sink *s = sink;
    if (!s->err)
        (void)out(s, p, n);
}

/* n buffered bytes out, under the script-data rule or as they are */
static int out_segment(tci_sink *s, const uint8_t *p, size_t n, bool script)
{
    if (!n)
        return 0;
    if (!script)
        return out(s, p, n);
    tci_esc_script_data(out_script, s, (const char *)p, n, &s->script_lt);
    return s->err ? -1 : 0;
}

int tci_sink_flush_buf(tci_sink *s)
{
    if (s->err)
        return -1;
    if (tci_cancel_step(s->cancel, (int64_t)s->len + 1)) {
        tci_sink_stop(s, TC_ERR_CANCELED);
        return -1;
    }
    int bad = 0;
    if (s->len) {
        bool script = s->script_at_start;
        size_t from = 0;
        for (unsigned k = 0; k < s->n_switches && !bad; k++) {
            bad = out_segment(s, s->buf + from, s->switch_at[k] - from, script);
            from = s->switch_at[k];
            script = !script;
            s->script_lt = false; /* a block's '<' does not pair with the next block's '/' */
        }
        if (!bad)
            bad = out_segment(s, s->buf + from, s->len - from, script);
        s->written += s->len;
        s->len = 0;
    }
    s->n_switches = 0;
    s->script_at_start = s->script_data;
    return bad ? -1 : 0;
}

void tci_sink_script_data(tci_sink *s, bool on)
{
    if (on == s->script_data)
        return;
    if (s->n_switches == sizeof s->switch_at / sizeof *s->switch_at)
        (void)tci_sink_flush_buf(s); /* more blocks than noted in one buffer: rare, write them */
    if (s->len == 0) {
        s->script_at_start = on;
        s->script_lt = false;
    } else {
        s->switch_at[s->n_switches++] = (uint32_t)s->len;
    }
    s->script_data = on;
}

static void release_gzip(tci_sink *s)
{
    if (s->z) {
        deflateEnd(s->z);
        free(s->z);
        s->z = NULL;
    }
    free(s->zbuf);
    s->zbuf = NULL;
}

int tci_sink_close(tci_sink *s)
{
    int bad = tci_sink_flush_buf(s) != 0;
    if (s->z && !bad && deflate_out(s, NULL, 0, Z_FINISH) != 0)
        bad = 1;
    release_gzip(s);
    if (!bad && s->fp) {
        errno = 0;
        if (fflush(s->fp) != 0) {
            tci_sink_fail(s, errno);
            bad = 1;
        }
    }
    return bad || s->err ? TC_ERR_IO : TC_OK;
}

void tci_sink_discard(tci_sink *s)
{
    s->len = 0;
    release_gzip(s);
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

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

/* Escape n bytes of str as a JSON string literal into dst (room for 6n+2). */
static size_t json_escape(char *dst, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)str;
    size_t o = 0;
    dst[o++] = '"';
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            dst[o++] = (char)c;
            i++;
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
