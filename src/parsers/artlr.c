/*
 * artlr.c - ART's long-running-method dump (ART.md §6 and §11; ART's
 * runtime/trace_profile.cc, TraceProfiler::DumpLongRunningMethodBuffer and
 * DumpThreadMethodInfo). Two forms, one body:
 *
 *   headerless (Android 16): packets from the first byte;
 *   SLOW form: "SLOW", u16 version 0xF6, u64 session start ns at 6, zeros to 32,
 *              then optionally the 17-byte summary record 0x03 + two u64.
 *   packets:   0x02 chunk:  u32 tid, u24 records, u32 payload bytes, payload
 *              0x00 thread: u32 tid, u16 len, name
 *              0x01 method: u64 ArtMethod*, u16 len, "class\tname\tsig\tsource\n"
 *                           (class dotted, or a JVM descriptor "Lcom/x/Y;")
 *   record:    sleb128 delta of (time_ns << 1 | is_exit); on an entry, then
 *              sleb128 delta of the ArtMethod*. Both accumulators start at 0 in
 *              each chunk, so a chunk's first record carries absolute values.
 *
 * Method and thread packets follow the chunks (ART writes them once it knows
 * which methods ran), so a record names a method before its packet: the reader
 * creates the method entry then and the packet defines it in the same pass.
 * Exits carry no method: they end the innermost open frame (a bare exit).
 * ART keeps only methods that ran longer than its threshold and may flush
 * unmatched entries or exits: normalize's rules handle them (ignored-exit,
 * open-at-end). Every length is checked against the bytes there; a record
 * count and a payload size that disagree are an error, not a guess.
 */
#include "tc_artlr.h"
#include "tc_leb128.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>

#define ARTLR_MAGIC 0x574F4C53u
#define HEADER_LEN 32
#define SUMMARY_LEN 17
#define CHUNK_HEADER 12  /* kAlwaysOnTraceHeaderSize */
#define THREAD_HEADER 7  /* kAlwaysOnThreadInfoHeaderSize */
#define METHOD_HEADER 11 /* kAlwaysOnMethodInfoHeaderSize */
#define TIME_MAX ((int64_t)1 << 62) /* ns: beyond any monotonic clock (146 years) */

enum { PKT_THREAD = 0, PKT_METHOD = 1, PKT_CHUNK = 2, PKT_SUMMARY = 3 };

static int lr_error(const tci_artlr *lr, size_t at, const char *fmt, ...) TCI_PRINTF(3, 4);
static int lr_error(const tci_artlr *lr, size_t at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tci_error(lr->diag, TC_ERR_FORMAT, lr->module, lr->base + at, "%s%s", msg, lr->note);
}

/* A signed LEB128 in [*pos, end) (tc_leb128.h): false when it runs past end or past 10 bytes
 * (*overlong), *pos then unchanged. */
static bool read_sleb(const uint8_t *p, size_t end, size_t *pos, uint64_t *out, bool *overlong)
{
    *overlong = false;
    if (*pos >= end)
        return false;
    const uint8_t *q = p + *pos;
    int rc = tci_sleb(&q, p + end, out);
    if (rc != TCI_LEB_OK) {
        *overlong = rc == TCI_LEB_OVERLONG;
        return false;
    }
    *pos = (size_t)(q - p);
    return true;
}

static uint32_t le24(const uint8_t *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16; }

/* ---- probing ---- */

/* Is the first packet at p a believable one (the first record of a chunk decoded)? */
static bool packet_plausible(const uint8_t *p, size_t n)
{
    if (!n)
        return false;
    if (p[0] == PKT_CHUNK) {
        if (n < CHUNK_HEADER + 1)
            return false;
        uint32_t tid = tci_le32(p + 1), recs = le24(p + 5), size = tci_le32(p + 8);
        /* tids are Linux tids (pid_max <= 2^22); a record takes 1..20 bytes */
        if (!tid || tid > (1u << 22) || !recs || size < recs || size > 20 * (uint64_t)recs)
            return false;
        size_t end = CHUNK_HEADER + size < n ? CHUNK_HEADER + size : n, pos = CHUNK_HEADER;
        uint64_t v;
        bool overlong;
        if (!read_sleb(p, end, &pos, &v, &overlong))
            return false;
        int64_t ts = (int64_t)v >> 1; /* the first record's time is absolute: positive, entry or exit */
        return ts > 0 && ts < TIME_MAX;
    }
    /* a dump that starts with a method or thread packet has no chunk (they come first): nothing
     * to convert, but said as such only when the whole packet is there and looks like one */
    if (p[0] == PKT_METHOD) {
        if (n < METHOD_HEADER)
            return false;
        size_t len = tci_le16(p + 9);
        if (!tci_le64(p + 1) || len < 6 || len > n - METHOD_HEADER || p[METHOD_HEADER + len - 1] != '\n')
            return false;
        size_t tabs = 0;
        for (size_t i = 0; i + 1 < len; i++) {
            uint8_t c = p[METHOD_HEADER + i];
            if (c == '\t')
                tabs++;
            else if (c < 0x20)
                return false;
        }
        return tabs >= 2; /* "class\tname\tsig\tsource\n" */
    }
    if (p[0] == PKT_THREAD) {
        if (n < THREAD_HEADER)
            return false;
        size_t len = tci_le16(p + 5);
        uint32_t tid = tci_le32(p + 1);
        if (!tid || tid > (1u << 22) || !len || len > n - THREAD_HEADER)
            return false;
        for (size_t i = 0; i < len; i++)
            if (p[THREAD_HEADER + i] < 0x20)
                return false;
        return true;
    }
    return false;
}

bool tci_artlr_plausible(const uint8_t *p, size_t n)
{
    if (n >= 6 && tci_le32(p) == ARTLR_MAGIC)
        return tci_le16(p + 4) == TCI_ARTLR_VERSION;
    return packet_plausible(p, n);
}

/* ---- opening ---- */

int tci_artlr_open(tci_artlr *lr, const uint8_t *p, size_t n, uint64_t base, const char *note, const char *module,
                   tci_diag *d)
{
    *lr = (tci_artlr){.p = p, .n = n, .base = base, .note = note ? note : "", .module = module, .diag = d};
    if (n >= 4 && tci_le32(p) == ARTLR_MAGIC) {
        if (n < HEADER_LEN)
            return lr_error(lr, n, "the SLOW header is cut short (need %d bytes, have %zu)", HEADER_LEN, n);
        unsigned version = tci_le16(p + 4);
        if (version != TCI_ARTLR_VERSION)
            return lr_error(lr, 4, "version 0x%X is not a long-running method dump (0x%X)", version,
                            TCI_ARTLR_VERSION);
        uint64_t start = tci_le64(p + 6);
        if (start >= (uint64_t)TIME_MAX)
            return lr_error(lr, 6, "session start %llu ns is not a monotonic time", (unsigned long long)start);
        lr->slow = true;
        lr->header_start = (int64_t)start;
        lr->body = HEADER_LEN;
        if (n > HEADER_LEN && p[HEADER_LEN] == PKT_SUMMARY) {
            if (n < HEADER_LEN + SUMMARY_LEN)
                return lr_error(lr, HEADER_LEN, "the summary record is cut short (need %d bytes, have %zu)",
                                SUMMARY_LEN, n - HEADER_LEN);
            lr->has_summary = true; /* read as an item by tci_artlr_next, as one anywhere else would be */
        }
    }
    lr->pos = lr->body;
    return TC_OK;
}

void tci_artlr_rewind(tci_artlr *lr)
{
    lr->pos = lr->body;
    lr->left = 0;
    lr->chunk_end = 0;
}

/* ---- decoding ---- */

/* Enter the chunk at pos: its header checked against the bytes there. */
static int open_chunk(tci_artlr *lr)
{
    size_t at = lr->pos, rest = lr->n - at;
    if (rest < CHUNK_HEADER)
        return lr_error(lr, at, "chunk header cut short (need %d bytes, have %zu)", CHUNK_HEADER, rest);
    uint32_t recs = le24(lr->p + at + 5), size = tci_le32(lr->p + at + 8);
    if (size > rest - CHUNK_HEADER)
        return lr_error(lr, at + 8, "chunk payload of %u bytes runs past the end of the dump (%zu bytes left)", size,
                        rest - CHUNK_HEADER);
    if (!recs && size)
        return lr_error(lr, at + 5, "chunk of 0 records has a payload of %u bytes", size);
    lr->tid = tci_le32(lr->p + at + 1);
    lr->left = recs;
    lr->pos = at + CHUNK_HEADER;
    lr->chunk_end = lr->pos + size;
    lr->acc_time = lr->acc_method = 0;
    return TC_OK;
}

static int record(tci_artlr *lr, tci_artlr_item *it)
{
    size_t at = lr->pos;
    uint64_t d;
    bool overlong;
    if (!read_sleb(lr->p, lr->chunk_end, &lr->pos, &d, &overlong))
        return overlong ? lr_error(lr, at, "a LEB128 value longer than 10 bytes")
                        : lr_error(lr, at, "record runs past its chunk's payload (%u records still to come)", lr->left);
    lr->acc_time += d; /* unsigned: wraps, never undefined */
    it->is_exit = lr->acc_time & 1;
    it->ts = (int64_t)lr->acc_time >> 1;
    if (it->ts < 0 || it->ts >= TIME_MAX)
        return lr_error(lr, at, "timestamp %lld ns is not a monotonic time", (long long)it->ts);
    it->method = 0;
    if (!it->is_exit) {
        size_t mat = lr->pos;
        if (!read_sleb(lr->p, lr->chunk_end, &lr->pos, &d, &overlong))
            return overlong ? lr_error(lr, mat, "a LEB128 value longer than 10 bytes")
                            : lr_error(lr, mat, "entry record's method runs past its chunk's payload");
        lr->acc_method += d;
        it->method = lr->acc_method;
    }
    it->kind = TCI_ARTLR_RECORD;
    it->tid = lr->tid;
    it->offset = lr->base + at;
    lr->left--;
    return TC_OK;
}

/* A thread or method packet at pos: [header][u16 len][text]. */
static int named_packet(tci_artlr *lr, tci_artlr_item *it, size_t header)
{
    size_t at = lr->pos, rest = lr->n - at;
    const char *what = header == THREAD_HEADER ? "thread" : "method";
    if (rest < header)
        return lr_error(lr, at, "%s packet header cut short (need %zu bytes, have %zu)", what, header, rest);
    size_t len = tci_le16(lr->p + at + header - 2);
    if (len > rest - header)
        return lr_error(lr, at + header - 2, "%s packet of %zu bytes runs past the end of the dump (%zu bytes left)",
                        what, len, rest - header);
    it->offset = lr->base + at;
    it->text = (const char *)lr->p + at + header;
    it->len = len;
    if (header == THREAD_HEADER) {
        it->kind = TCI_ARTLR_THREAD;
        it->tid = tci_le32(lr->p + at + 1);
    } else {
        it->kind = TCI_ARTLR_METHOD;
        it->method = tci_le64(lr->p + at + 1);
    }
    lr->pos = at + header + len;
    return TC_OK;
}

int tci_artlr_next(tci_artlr *lr, tci_artlr_item *it)
{
    for (;;) {
        if (lr->left)
            return record(lr, it);
        if (lr->chunk_end) {
            if (lr->pos != lr->chunk_end)
                return lr_error(lr, lr->pos, "chunk payload has %zu bytes after its last record",
                                lr->chunk_end - lr->pos);
            lr->chunk_end = 0;
        }
        if (lr->pos >= lr->n)
            return TC_EOF;
        int rc;
        switch (lr->p[lr->pos]) {
        case PKT_CHUNK:
            if ((rc = open_chunk(lr)) != TC_OK)
                return rc;
            continue;
        case PKT_THREAD:
            return named_packet(lr, it, THREAD_HEADER);
        case PKT_METHOD:
            return named_packet(lr, it, METHOD_HEADER);
        case PKT_SUMMARY:
            if (!lr->slow) /* the headerless form has no summary */
                break;
            if (lr->n - lr->pos < SUMMARY_LEN) /* newer builds put it after the header; tolerated anywhere */
                return lr_error(lr, lr->pos, "summary record cut short (need %d bytes, have %zu)", SUMMARY_LEN,
                                lr->n - lr->pos);
            it->kind = TCI_ARTLR_SUMMARY;
            it->offset = lr->base + lr->pos;
            it->summary[0] = tci_le64(lr->p + lr->pos + 1);
            it->summary[1] = tci_le64(lr->p + lr->pos + 9);
            lr->pos += SUMMARY_LEN;
            return TC_OK;
        default:
            break;
        }
        return lr_error(lr, lr->pos, "unknown packet type 0x%02x", lr->p[lr->pos]);
    }
}

int64_t tci_artlr_earliest(const tci_artlr *lr)
{
    int64_t min = INT64_MAX;
    size_t pos = lr->body;
    while (pos < lr->n) {
        const uint8_t *b = lr->p + pos;
        size_t rest = lr->n - pos, header = b[0] == PKT_CHUNK ? CHUNK_HEADER : b[0] == PKT_THREAD ? THREAD_HEADER
                                                                          : b[0] == PKT_METHOD ? METHOD_HEADER : 0;
        if (b[0] == PKT_SUMMARY && lr->slow && rest >= SUMMARY_LEN) {
            pos += SUMMARY_LEN;
            continue;
        }
        if (!header || rest < header)
            break; /* the decoder says what is wrong there */
        size_t len = b[0] == PKT_CHUNK ? tci_le32(b + 8) : tci_le16(b + header - 2);
        if (len > rest - header)
            break;
        if (b[0] == PKT_CHUNK && len) {
            size_t p = header;
            uint64_t v;
            bool overlong;
            if (read_sleb(b, header + len, &p, &v, &overlong) && (int64_t)v >= 0 && ((int64_t)v >> 1) < min)
                min = (int64_t)v >> 1;
        }
        pos += header + len;
    }
    return min;
}

/* ---- into the trace ---- */

void tci_artlr_trace_setup(tci_trace *t)
{
    t->clock = TCI_CLOCK_WALL;
    t->has_wall = true;
    t->has_cpu = false; /* the dump has no thread CPU time */
    t->time_unit_ns = 1;
    t->wrap_bits = 0;
    t->vm = "art";
}

static uint32_t thread_of(tci_rctx *r, const tci_artlr_sink *s, uint32_t tid)
{
    /* tid_key is a process index (32 bits) << 32, tid is 32 bits: the key holds both whole */
    _Static_assert(sizeof tid == 4, "a tid must fit below tid_key");
    uint32_t th = tci_idmap_get(s->threads, s->tid_key | tid);
    if (th != TCI_NONE)
        return th;
    if ((th = tci_trace_add_thread(r->trace, tid)) == TCI_NONE || tci_idmap_put(s->threads, s->tid_key | tid, th))
        return TCI_NONE;
    r->trace->threads[th].process = s->process;
    return th;
}

/* The method of ArtMethod* ptr: of the sink's process when it keeps a map per process (two
 * processes' pointers may coincide, and a pointer uses all 64 bits: no key packs a process with
 * it), else the trace's method of that raw id. TCI_NONE: no memory or a limit. */
static uint32_t method_of(tci_rctx *r, const tci_artlr_sink *s, uint64_t ptr)
{
    if (!s->methods)
        return tci_trace_method(r->trace, ptr);
    uint32_t m = tci_idmap_get(s->methods, ptr);
    if (m == TCI_NONE && (m = tci_trace_add_method(r->trace, ptr)) != TCI_NONE && tci_idmap_put(s->methods, ptr, m) != 0)
        return TCI_NONE;
    return m;
}

/* "class\tname\tsig\tsource\n": the class dotted or a JVM descriptor (Lcom/x/Y;), which is shown as com.x.Y. */
static int define_method(tci_rctx *r, const tci_artlr *lr, const tci_artlr_sink *s, const tci_artlr_item *it)
{
    tci_span f[4], line = {it->text, it->len};
    if (line.n && line.p[line.n - 1] == '\n')
        line.n--;
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= line.n && n < 4; i++)
        if (i == line.n || (line.p[i] == '\t' && n < 3)) {
            f[n++] = (tci_span){line.p + start, i - start};
            start = i + 1;
        }
    if (n < 3) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, lr->module, it->offset,
                 "method packet is not 'class\\tname\\tsignature\\tsource'; ignored");
        return TC_OK;
    }
    tci_span cls = f[0];
    if (cls.n >= 3 && cls.p[0] == 'L' && cls.p[cls.n - 1] == ';')
        cls = (tci_span){cls.p + 1, cls.n - 2};
    tci_span file = n == 4 ? f[3] : (tci_span){NULL, 0};
    uint32_t m = method_of(r, s, it->method);
    if (m == TCI_NONE || tci_trace_define_method_at(r->trace, m, cls.p, cls.n, f[1].p, f[1].n, f[2].p, f[2].n,
                                                    file.n ? file.p : NULL, file.n, -1) != TC_OK)
        return tci_trace_fail(r->trace, r->diag, lr->module, it->offset);
    return TC_OK;
}

/* A summary record's two u64 (timestamps, ART.md §11; what they mean is not documented, and
 * Perfetto's importer skips them) kept as the metadata summary-timestamps, "A B": each dump's
 * appended ("A B; C D") when a trace holds several. */
static int keep_summary(tci_rctx *r, const tci_artlr *lr, const tci_artlr_item *it)
{
    const char *had = tci_trace_meta(r->trace, "summary-timestamps");
    char v[512];
    int k = snprintf(v, sizeof v, "%s%s%llu %llu", had ? had : "", had ? "; " : "", (unsigned long long)it->summary[0],
                     (unsigned long long)it->summary[1]);
    if (k < 0 || (size_t)k >= sizeof v) { /* dozens of dumps: the rest are counted, not listed */
        tci_not_converted(r->diag, lr->module, it->offset, "summary record", 14);
        return TC_OK;
    }
    if (tci_trace_add_meta(r->trace, "summary-timestamps", 18, v, (size_t)k) != TC_OK)
        return tci_trace_fail(r->trace, r->diag, lr->module, it->offset);
    return TC_OK;
}

int tci_artlr_read(tci_rctx *r, tci_artlr *lr, const tci_artlr_sink *s, tci_raw *ev, size_t max, size_t *n)
{
    size_t k = 0;
    int rc = TC_OK;
    tci_artlr_item it;
    while (k < max && (rc = tci_artlr_next(lr, &it)) == TC_OK) {
        if (it.kind == TCI_ARTLR_RECORD) {
            uint32_t th = thread_of(r, s, it.tid);
            uint32_t m = it.is_exit ? TCI_NONE : method_of(r, s, it.method);
            if (th == TCI_NONE || (!it.is_exit && m == TCI_NONE))
                return tci_trace_fail(r->trace, r->diag, lr->module, it.offset);
            ev[k++] = (tci_raw){.wall = it.ts - s->origin, .cpu = TCI_NO_TIME, .offset = it.offset, .thread = th,
                                .method = m, .action = it.is_exit ? TCI_ACT_EXIT : TCI_ACT_ENTER};
        } else if (r->pass == 1 && it.kind == TCI_ARTLR_THREAD) {
            uint32_t th = thread_of(r, s, it.tid);
            if (th == TCI_NONE || tci_trace_name_thread(r->trace, th, it.text, it.len, 1) != TC_OK)
                return tci_trace_fail(r->trace, r->diag, lr->module, it.offset);
        } else if (r->pass == 1 && it.kind == TCI_ARTLR_METHOD) {
            if ((rc = define_method(r, lr, s, &it)) != TC_OK)
                return rc;
        } else if (r->pass == 1 && it.kind == TCI_ARTLR_SUMMARY) {
            if ((rc = keep_summary(r, lr, &it)) != TC_OK)
                return rc;
        }
    }
    *n = k;
    if (rc != TC_OK && rc != TC_EOF)
        return rc;
    return k ? TC_OK : TC_EOF;
}
