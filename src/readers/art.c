/*
 * art.c - Android ART/Dalvik method traces, V1 family (shared/docs/formats/ART.md §2-4).
 *
 * Non-streaming (v1/v2/v3): a text key section "*version ... *end\n", then a
 * "SLOW" header (data offset usually 32, 16 from createtesttrace) and fixed
 * size records: v1 9 bytes (u8 tid), v2 10, v3 the size stored at +16.
 * Streaming (0xF1..0xF3): the SLOW header, then items that start with a u16
 * tid; tid 0 escapes an inline new-method, new-thread or summary item. The
 * summary (last item) carries the real clock; it is found from the end of the
 * file at open, so one pass knows how to read the records.
 *
 * Quirks handled here: method ids printed as "0", "0x0" or "0x%08x"; 4, 5
 * and 6-field method lines; slash class names (shown dotted); "(null)" source
 * files; records carry the tid truncated to 16 bits while *threads lists the
 * full tid (mapped by the low bits when unambiguous); a missing summary or a
 * truncated last record converts what is there, with a warning.
 * Clock unwrap, pairing and every other rule live in normalize.c.
 */
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"
#include "text.h"
#include "art_common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ART_MAGIC 0x574F4C53u
#define TID_AMBIGUOUS (TCI_NONE - 1)

enum { RANK_KEY = 1, RANK_INLINE = 1, RANK_SUMMARY = 2 };

typedef struct art {
    bool streaming;
    int version;          /* 1, 2 or 3 (streaming bit stripped) */
    size_t data_off;      /* first record or item */
    size_t end;           /* records stop here (a streaming summary starts here) */
    size_t pos;
    size_t rec_size;      /* bytes per record, tid included */
    size_t tid_size;      /* 1 (v1) or 2 */
    int ntimes;           /* time fields per record */
    bool first_is_cpu;    /* single time field: thread-cpu rather than wall */
    bool truncation_seen;
    uint64_t declared;    /* records the key or summary says were written (num-method-calls); 0: not said */
    uint64_t declared_at; /* offset of that line */
    uint64_t read_pass1;  /* records decoded in pass 1 (a stream's count is known only there) */
    size_t cut_at, cut_need, cut_have; /* where the input ends inside a record or item */
    uint32_t tid_map[65536]; /* record thread id -> thread index */
    tci_idmap listed;     /* full tid as listed -> thread index (a list of 100,000 threads stays linear) */
    uint32_t *direct;     /* method id >> 2 -> method index: ART >= 6 ids are dense */
    uint32_t direct_n;
    bool child;           /* a split's second reader: read-only tables (art_split) */
    size_t split_end;     /* the parent of a split: its end before the cut */
} art;

/* ---- key lines' fields (the text rules: text.h) ------------------------- */

size_t tci_art_split_tabs(tci_span line, tci_span *f, size_t max)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= line.n && n < max; i++) {
        if (i == line.n || (line.p[i] == '\t' && n + 1 < max)) {
            f[n++] = (tci_span){line.p + start, i - start};
            start = i + 1;
        }
    }
    return n;
}

/* ---- thread ids ---------------------------------------------------------- */

/* The thread listed (or met) with this tid; created on first sight. */
static uint32_t thread_for_tid(tci_rctx *r, art *a, uint64_t tid)
{
    uint32_t th = tci_idmap_get(&a->listed, tid);
    if (th != TCI_NONE)
        return th;
    if ((th = tci_trace_add_thread(r->trace, tid)) == TCI_NONE)
        return TCI_NONE;
    if (tci_idmap_put(&a->listed, tid, th) != 0)
        return TCI_NONE; /* reported as out of memory */
    return th;
}

/* Remember which thread a record id (the tid truncated to 16 bits) means. */
static void map_record_id(art *a, uint64_t tid, uint32_t thread)
{
    uint16_t key = (uint16_t)(a->tid_size == 1 ? tid & 0xFF : tid & 0xFFFF);
    uint32_t cur = a->tid_map[key];
    if (cur == TCI_NONE || cur == thread)
        a->tid_map[key] = thread;
    else /* two listed tids share the low bits: decided per record, with a warning */
        a->tid_map[key] = TID_AMBIGUOUS;
}

static uint32_t thread_for_record(tci_rctx *r, art *a, uint16_t id)
{
    uint32_t th = a->tid_map[id];
    if (TCI_LIKELY(th < TID_AMBIGUOUS))
        return th;
    if (th == TID_AMBIGUOUS)
        tci_warn(r->diag, TCI_FIG_AMBIGUOUS_THREAD, "art", a->pos,
                 "record thread id %u matches several listed threads; using the one listed as %u", id, id);
    else
        tci_warn(r->diag, TCI_FIG_UNKNOWN_THREAD, "art", a->pos,
                 "record thread id %u is not in the thread list", id);
    th = thread_for_tid(r, a, id); /* the one listed as id, or a new one */
    a->tid_map[id] = th;
    return th;
}

/* ---- the key section (and the streaming summary, same syntax) ------------ */

/* SEC_UNKNOWN: under a section header no ART writes (a bad line itself); its lines are
 * counted as not converted, by the section's name, rather than read as the previous
 * section's. */
enum section { SEC_NONE, SEC_VERSION, SEC_THREADS, SEC_METHODS, SEC_UNKNOWN };

int tci_art_key_value(tci_rctx *r, tci_span line, uint64_t off, uint64_t *declared, uint64_t *declared_at)
{
    tci_trace *t = r->trace;
    const char *eq = memchr(line.p, '=', line.n);
    if (!eq) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "art", off, "key line without '=' ignored");
        return TC_OK;
    }
    tci_span k = {line.p, (size_t)(eq - line.p)}, v = {eq + 1, line.n - k.n - 1};
    uint64_t n;
    if (TCI_UNLIKELY(tci_trace_meta_full(t, k.p, k.n))) /* a hostile key section: the rest is not kept */
        tci_not_converted(r->diag, "art", off, "key past 4096 keys", 18);
    else if (tci_trace_add_meta(t, k.p, k.n, v.p, v.n) != TC_OK)
        return tci_trace_fail(t, r->diag, "art", off);
    if (tci_span_is(k, "clock")) {
        if (tci_span_is(v, "dual")) t->clock = TCI_CLOCK_DUAL;
        else if (tci_span_is(v, "wall") || tci_span_is(v, "global")) t->clock = TCI_CLOCK_WALL;
        else if (tci_span_is(v, "thread-cpu")) t->clock = TCI_CLOCK_THREAD_CPU;
        else tci_warn(r->diag, TCI_FIG_BAD_LINE, "art", off, "unknown clock '%.*s'", (int)v.n, v.p);
    } else if (tci_span_is(k, "pid") && tci_parse_u64(v.p, v.n, UINT64_MAX, &n) && n < INT32_MAX) {
        t->pid = (int64_t)n;
    } else if (tci_span_is(k, "vm")) {
        t->vm = tci_trace_meta(t, "vm");
        t->format_name = t->vm && !strcmp(t->vm, "dalvik") ? "dalvik" : NULL; /* called what wrote it */
    } else if (tci_span_is(k, "elapsed-time-usec") && tci_parse_u64(v.p, v.n, UINT64_MAX, &n) &&
               n < INT64_MAX / 1000) {
        t->elapsed_ns = (int64_t)n * 1000; /* normalize checks it against the start time */
        t->elapsed_offset = off + k.n + 1;
    } else if (tci_span_is(k, "num-method-calls") && tci_parse_u64(v.p, v.n, UINT64_MAX, &n)) {
        *declared = n; /* the number of records written, not of calls (ART.md §3.1) */
        *declared_at = off;
    } else if (tci_span_is(k, "data-file-overflow") && tci_span_is(v, "true")) {
        tci_warn(r->diag, TCI_FIG_OVERFLOW, "art", off,
                 "data-file-overflow=true: the trace buffer filled up and later records were dropped");
    }
    return TC_OK;
}

static int thread_line(tci_rctx *r, art *a, tci_span line, uint64_t off, uint8_t rank)
{
    tci_span f[2];
    uint64_t tid;
    if (tci_art_split_tabs(line, f, 2) != 2 || !tci_parse_u64(f[0].p, f[0].n, UINT64_MAX, &tid)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "art", off, "thread line is not '<id>\\t<name>'; ignored");
        return TC_OK;
    }
    uint32_t th = thread_for_tid(r, a, tid);
    if (th == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "art", off);
    if (tci_trace_name_thread(r->trace, th, f[1].p, f[1].n, rank) != TC_OK)
        return tci_trace_fail(r->trace, r->diag, "art", off);
    map_record_id(a, tid, th);
    return TC_OK;
}

static int method_line(tci_rctx *r, tci_span line, uint64_t off)
{
    tci_span f[6];
    uint64_t id;
    size_t n = tci_art_split_tabs(line, f, 6);
    if (n < 3 || !tci_parse_hex_u64(f[0].p, f[0].n, &id)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "art", off, "method line is not '<id>\\t<class>\\t<name>...'; ignored");
        return TC_OK;
    }
    tci_span sig = n >= 4 ? f[3] : (tci_span){"", 0}, file = {NULL, 0};
    int64_t lineno = -1;
    if (n == 4 && sig.n && sig.p[0] != '(') { /* legacy "id class path line" */
        file = sig;
        sig = (tci_span){"", 0};
    }
    if (n >= 5 && !tci_span_is(f[4], "(null)"))
        file = f[4];
    if (n >= 6) {
        char buf[24];
        size_t k = f[5].n < sizeof buf - 1 ? f[5].n : sizeof buf - 1;
        memcpy(buf, f[5].p, k);
        buf[k] = 0;
        lineno = strtol(buf, NULL, 10);
        if (lineno < -2 || lineno > INT32_MAX)
            lineno = -1;
    }
    if (tci_trace_define_method(r->trace, id & ~(uint64_t)3, f[1].p, f[1].n, f[2].p, f[2].n, sig.p, sig.n,
                                file.p, file.n, (int32_t)lineno) != TC_OK)
        return tci_trace_fail(r->trace, r->diag, "art", off);
    return TC_OK;
}

/*
 * Parse key text from base[0..len): returns the offset just past the "*end"
 * line in *end_off, or len if the text has no *end (stream summaries may lack
 * one). Offsets in messages are file offsets (file_off + position).
 */
static int parse_key_text(tci_rctx *r, art *a, const char *text, size_t len, uint64_t file_off,
                          uint8_t rank, size_t *end_off, int *version)
{
    enum section sec = SEC_NONE;
    bool want_version = false;
    size_t pos = 0;
    tci_span unknown = {"", 0}; /* the header of the SEC_UNKNOWN section */
    *end_off = SIZE_MAX;
    tci_line l;
    while (tci_next_line(text, len, &pos, &l)) {
        tci_span line = {l.p, l.n};
        uint64_t off = file_off + l.off;
        int rc = TC_OK;
        if (line.n && line.p[0] == '*') {
            if (tci_span_is(line, "*version")) { sec = SEC_VERSION; want_version = true; }
            else if (tci_span_is(line, "*threads")) sec = SEC_THREADS;
            else if (tci_span_is(line, "*methods")) sec = SEC_METHODS;
            else if (tci_span_is(line, "*end")) { *end_off = pos; return TC_OK; }
            else {
                tci_warn(r->diag, TCI_FIG_BAD_LINE, "art", off, "unknown section '%.*s' ignored", (int)(line.n > 40 ? 40 : line.n), line.p);
                sec = SEC_UNKNOWN;
                unknown = line;
            }
            continue;
        }
        if (!line.n)
            continue;
        if (want_version) {
            uint64_t v;
            if (!tci_parse_u64(line.p, line.n, 0xFFFF, &v))
                return tci_error(r->diag, TC_ERR_FORMAT, "art", off, "*version is not followed by a version number");
            *version = (int)v;
            want_version = false;
            continue;
        }
        switch (sec) {
        case SEC_VERSION: rc = tci_art_key_value(r, line, off, &a->declared, &a->declared_at); break;
        case SEC_THREADS: rc = thread_line(r, a, line, off, rank); break;
        case SEC_METHODS: rc = method_line(r, line, off); break;
        case SEC_UNKNOWN: tci_not_converted(r->diag, "art", off, unknown.p, unknown.n); break;
        default:
            return tci_error(r->diag, TC_ERR_FORMAT, "art", off, "text before *version");
        }
        if (rc != TC_OK)
            return rc; /* reported where it happened */
    }
    *end_off = SIZE_MAX;
    return TC_OK;
}

/* ---- the binary header and the record layout ------------------------------ */

/*
 * Two ways a trace is damaged on its way off the device, each named in the
 * error so that the user fetches it again rather than doubting the tool:
 * - a text re-encode (an editor, a text-mode checkout) turns every byte that
 *   is not valid UTF-8 into U+FFFD, EF BF BD: the binary data fills with it;
 * - CRLF conversion (`adb shell cat` on old adb) turns each 0A into 0D 0A.
 */
#define REFETCH_HINT "fetch it again as binary with `adb pull` or `adb exec-out` (not `adb shell cat`)"

static size_t count_replacements(const uint8_t *b, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i + 3 <= n; i++)
        if (b[i] == 0xEF && b[i + 1] == 0xBF && b[i + 2] == 0xBD)
            k++, i += 2;
    return k;
}

/* The binary part from at: one U+FFFD in the 32-byte header, or several in
 * its first 64 KiB (a real trace has one by chance once in 16 MiB). */
static int check_not_reencoded(tci_rctx *r, size_t at)
{
    size_t left = r->size - at, head = left < 32 ? left : 32, scan = left < 65536 ? left : 65536;
    size_t k = count_replacements(r->data + at, scan);
    if (!count_replacements(r->data + at, head) && k < 4)
        return TC_OK;
    const uint8_t *first = r->data + at;
    while (!(first[0] == 0xEF && first[1] == 0xBF && first[2] == 0xBD))
        first++;
    return tci_error(r->diag, TC_ERR_FORMAT, "art", (uint64_t)(first - r->data),
                     "the binary data holds %zu U+FFFD replacement characters (EF BF BD) in its first %zu bytes: "
                     "the file was re-encoded as text (an editor, or a text-mode checkout) and its bytes are lost; "
                     REFETCH_HINT, k, scan);
}

static int check_not_crlf(tci_rctx *r)
{
    if (r->size >= 10 && memcmp(r->data, "*version\r\n", 10) == 0)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", 8,
                         "the key section ends its lines with CRLF (\\r\\n): the file went through a line-end "
                         "conversion, which also corrupts every 0x0A byte of the binary data; " REFETCH_HINT);
    return TC_OK;
}

static int parse_slow_header(tci_rctx *r, art *a, size_t at)
{
    const uint8_t *b = r->data + at;
    size_t left = r->size - at;
    if (left < 16 || tci_le32(b) != ART_MAGIC)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", at, "no \"SLOW\" data header after the key section");
    unsigned raw_version = tci_le16(b + 4);
    size_t off = tci_le16(b + 6);
    uint64_t start_us = tci_le64(b + 8);
    a->streaming = (raw_version & 0xF0) == 0xF0;
    a->version = (int)(raw_version & 0x0F);
    if (a->version < 1 || a->version > 3 || (raw_version & 0xFF00) || ((raw_version & 0xF0) && !a->streaming))
        return tci_error(r->diag, TC_ERR_FORMAT, "art", at + 4, "data header has an unsupported version 0x%x%s", raw_version,
                         (a->version == 4 || a->version == 5) ? " (a V2 trace: read with -i art-v2)" : "");
    if (off < 16 || off > left)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", at + 6,
                         "data offset %zu is outside the header (16..%zu)", off, left);
    /* createtesttrace writes (tv_sec << 32) | tv_usec instead of µs (ART-PEERS.md §1) */
    if (start_us > ((uint64_t)1 << 53) && (start_us & 0xFFFFFFFFu) < 1000000)
        start_us = (start_us >> 32) * 1000000 + (start_us & 0xFFFFFFFFu);
    if (start_us > ((uint64_t)1 << 53)) /* µs after the year 2255: garbage, not a clock */
        return tci_error(r->diag, TC_ERR_FORMAT, "art", at + 8, "start time %llu µs is not plausible",
                         (unsigned long long)start_us);
    a->data_off = at + off;
    a->tid_size = a->version == 1 ? 1 : 2;
    a->rec_size = a->version == 1 ? 9 : 10;
    if (a->version >= 3 || a->streaming) {
        if (off < 18)
            return tci_error(r->diag, TC_ERR_FORMAT, "art", at + 6,
                             "data offset %zu leaves no room for the record size field", off);
        a->rec_size = tci_le16(b + 16);
    }
    size_t min = a->tid_size + 4 + 4;
    if (a->rec_size < min || a->rec_size > 64)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", at + 16,
                         "record size %zu is not plausible (expected %zu..64)", a->rec_size, min);
    a->ntimes = a->rec_size >= a->tid_size + 12 ? 2 : 1;
    r->trace->start_ns = (int64_t)start_us * 1000;
    r->trace->start_given = true;
    return TC_OK;
}

/* Which clock do the time fields carry? Known after the key text / summary. */
static void settle_clock(tci_rctx *r, art *a)
{
    tci_trace *t = r->trace;
    if (t->clock == TCI_CLOCK_UNKNOWN) /* perflib and traceview assume thread-cpu; v3 is always dual */
        t->clock = a->ntimes == 2 ? TCI_CLOCK_DUAL : TCI_CLOCK_THREAD_CPU;
    if (a->ntimes == 2) {
        t->has_wall = t->has_cpu = true;
    } else {
        a->first_is_cpu = t->clock == TCI_CLOCK_THREAD_CPU;
        t->has_wall = !a->first_is_cpu;
        t->has_cpu = a->first_is_cpu;
    }
    t->time_unit_ns = 1000;
    t->wrap_bits = 32;
}

/* Is the summary item (00 00 03, u32 length, "*version..." text) at p, ending the file? */
static bool summary_at(const tci_rctx *r, size_t p)
{
    const uint8_t *b = r->data;
    return p + 7 + 9 <= r->size && b[p] == 0 && b[p + 1] == 0 && b[p + 2] == 3 &&
           tci_le32(b + p + 3) == r->size - p - 7 && memcmp(b + p + 7, "*version", 8) == 0;
}

static bool text_byte(uint8_t c) { return c >= 0x20 || c == '\t' || c == '\n' || c == '\r'; }

/* The summary item of a stream ends the file: 00 00 03, u32 length, text. It is
 * looked for from the end without reading the records: a summary's text starts
 * right after the last byte that text never holds (its item header; the length's
 * high bytes may look like text). Only when that fails (no summary, or one whose
 * text holds a control byte) is every "*version" a candidate, from the end, a
 * MiB at a time, each MiB's pages given back once looked at: a stream without a
 * summary no longer stays whole in memory before the first pass begins. */
static size_t find_stream_summary(const tci_rctx *r, size_t from)
{
    const uint8_t *b = r->data;
    if (r->size < from + 7 + 9)
        return SIZE_MAX;
    size_t q = r->size;
    while (q > from && text_byte(b[q - 1]))
        q--;
    for (size_t k = 3; k <= 7; k++)
        if (q >= from + k && summary_at(r, q - k))
            return q - k;
    const size_t chunk = 1u << 20;
    for (size_t hi = r->size - 9 + 1; hi > from + 7;) { /* the text's '*' is at p + 7, p + 16 <= size */
        size_t lo = hi - from - 7 > chunk ? hi - chunk : from + 7;
        for (const uint8_t *star = tci_memrchr(b + lo, '*', hi - lo); star;
             star = star > b + lo ? tci_memrchr(b + lo, '*', (size_t)(star - (b + lo))) : NULL)
            if (summary_at(r, (size_t)(star - b) - 7))
                return (size_t)(star - b) - 7;
        tci_source_drop(r->source, lo, hi);
        hi = lo;
    }
    return SIZE_MAX;
}

static int open_streaming(tci_rctx *r, art *a)
{
    int version = 0;
    size_t end_off;
    size_t at = find_stream_summary(r, a->data_off);
    if (at == SIZE_MAX) {
        a->end = r->size;
        tci_warn(r->diag, TCI_FIG_NO_SUMMARY, "art", r->size,
                 "stream has no summary (cut short, or written before Android 8); assuming clock=%s",
                 a->ntimes == 2 ? "dual" : "wall");
        r->trace->clock = a->ntimes == 2 ? TCI_CLOCK_DUAL : TCI_CLOCK_WALL;
    } else {
        a->end = at;
        const char *text = (const char *)r->data + at + 7;
        size_t len = r->size - at - 7;
        int rc = parse_key_text(r, a, text, len, at + 7, RANK_SUMMARY, &end_off, &version);
        if (rc != TC_OK)
            return rc;
        tci_line l; /* the summary ends the file: lines after its *end are read by nothing */
        for (size_t pos = end_off == SIZE_MAX ? len : end_off; tci_next_line(text, len, &pos, &l);)
            if (l.n)
                tci_not_converted(r->diag, "art", at + 7 + l.off, "line after the summary's *end", 29);
    }
    settle_clock(r, a);
    snprintf(r->trace->detail, sizeof r->trace->detail, "v%d streaming (0x%X)", a->version, 0xF0 | a->version);
    return TC_OK;
}

/* A non-streaming file holds whole records to its end, as many as
 * num-method-calls says: fewer means it was cut (at a record boundary too,
 * which nothing else would show), a tail means it was cut inside one. Said
 * once, at open, as the figure truncated-input (an error under --strict).
 * No record at all is nothing to convert: refused. */
static int check_record_count(tci_rctx *r, art *a)
{
    uint64_t whole = (a->end - a->data_off) / a->rec_size, tail = (a->end - a->data_off) % a->rec_size;
    uint64_t at = a->data_off + whole * a->rec_size;
    if (!whole)
        return tci_error(r->diag, TC_ERR_NO_TRACE, "art", at, "no trace events found: the data section holds no record%s",
                         a->declared ? " (the key section says num-method-calls is not 0: the file was cut)" : "");
    if (a->declared > whole)
        tci_warn(r->diag, TCI_FIG_TRUNCATED, "art", at,
                 "truncated: %llu of %llu records (num-method-calls=%llu in the key section)%s; converting what is there",
                 (unsigned long long)whole, (unsigned long long)a->declared, (unsigned long long)a->declared,
                 tail ? ", the file ends inside the next one" : "");
    else if (tail)
        tci_warn(r->diag, TCI_FIG_TRUNCATED, "art", at,
                 "input ends inside a record (need %zu bytes, have %llu); converting what is there", a->rec_size,
                 (unsigned long long)tail);
    a->truncation_seen = a->declared > whole || tail;
    return TC_OK;
}

static int art_open_tables(tci_rctx *r)
{
    art *a = r->priv;
    memset(a->tid_map, 0xff, sizeof a->tid_map);
    tci_trace *t = r->trace;
    int rc, version = 0;
    if ((rc = check_not_crlf(r)) != TC_OK)
        return rc;
    if (r->size >= 4 && tci_le32(r->data) == ART_MAGIC) {
        if ((rc = check_not_reencoded(r, 4)) != TC_OK || (rc = parse_slow_header(r, a, 0)) != TC_OK)
            return rc;
        if (!a->streaming)
            return tci_error(r->diag, TC_ERR_FORMAT, "art", 0,
                             "a data file (SLOW header) without its key section: a legacy split trace is read from "
                             "both halves, NAME.key and NAME.data (give both, or keep NAME.key beside it)");
        a->pos = a->data_off;
        return open_streaming(r, a);
    }
    size_t key_end;
    if ((rc = parse_key_text(r, a, (const char *)r->data, r->size, 0, RANK_KEY, &key_end, &version)) != TC_OK)
        return rc;
    if (key_end == SIZE_MAX)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", r->size, "key section has no *end line");
    if ((rc = check_not_reencoded(r, key_end)) != TC_OK || (rc = parse_slow_header(r, a, key_end)) != TC_OK)
        return rc;
    if (a->streaming)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", key_end + 4, "streaming data after a key section");
    if (version && version != a->version)
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "art", key_end + 4,
                 "*version says %d but the data header says %d; using the data header", version, a->version);
    a->end = r->size;
    a->pos = a->data_off;
    settle_clock(r, a);
    snprintf(t->detail, sizeof t->detail, "v%d non-streaming", a->version);
    return check_record_count(r, a);
}

/* ---- records ------------------------------------------------------------- */

/* A stream's summary may say how many records were written too (a V2 summary
 * does): checked when pass 1 has read them all. */
static void check_stream_count(tci_rctx *r, art *a)
{
    if (a->declared > a->read_pass1 && !a->truncation_seen)
        tci_warn(r->diag, TCI_FIG_TRUNCATED, "art", a->end, "truncated: %llu of %llu records (num-method-calls=%llu in the summary)",
                 (unsigned long long)a->read_pass1, (unsigned long long)a->declared, (unsigned long long)a->declared);
}

static void truncated(tci_rctx *r, art *a, size_t need)
{
    if (!a->truncation_seen) {
        tci_warn(r->diag, TCI_FIG_TRUNCATED, "art", a->pos,
                 "input ends inside a record or item (need %zu bytes, have %zu); converting what is there",
                 need, a->end - a->pos);
        a->cut_at = a->pos, a->cut_need = need, a->cut_have = a->end - a->pos;
    }
    a->truncation_seen = true;
}

/* The end of pass 1 over a stream: a stream that held no record is refused, saying why. */
static int stream_read(tci_rctx *r, art *a)
{
    check_stream_count(r, a);
    if (a->read_pass1)
        return TC_OK;
    if (a->cut_need)
        return tci_error(r->diag, TC_ERR_FORMAT, "art", a->cut_at,
                         "no trace events found: the input ends inside a record or item (need %zu bytes, have %zu)",
                         a->cut_need, a->cut_have);
    return tci_error(r->diag, TC_ERR_NO_TRACE, "art", a->end, "no trace events found: the stream holds no record");
}

/* An inline item of a stream: new method, new thread (the summary ends the records). */
static int stream_item(tci_rctx *r, art *a)
{
    const uint8_t *b = r->data + a->pos;
    size_t left = a->end - a->pos;
    if (left < 3)
        return truncated(r, a, 3), TC_EOF;
    int op = b[2];
    if (op == 1) {
        if (left < 5 || left < 5 + (size_t)tci_le16(b + 3))
            return truncated(r, a, left < 5 ? 5 : 5 + (size_t)tci_le16(b + 3)), TC_EOF;
        size_t len = tci_le16(b + 3);
        if (r->pass == 1) {
            tci_span line = {(const char *)b + 5, len};
            if (line.n && line.p[line.n - 1] == '\n')
                line.n--;
            int rc = method_line(r, line, a->pos + 5);
            if (rc != TC_OK)
                return rc; /* reported by method_line */
        }
        a->pos += 5 + len;
        return TC_OK;
    }
    if (op == 2) {
        if (left < 7 || left < 7 + (size_t)tci_le16(b + 5))
            return truncated(r, a, left < 7 ? 7 : 7 + (size_t)tci_le16(b + 5)), TC_EOF;
        size_t len = tci_le16(b + 5);
        if (r->pass == 1) {
            uint16_t id = tci_le16(b + 3);
            uint32_t th = a->tid_map[id];
            if (th >= TID_AMBIGUOUS) {
                th = thread_for_tid(r, a, id);
                if (th == TCI_NONE)
                    return tci_trace_fail(r->trace, r->diag, "art", a->pos);
                a->tid_map[id] = th;
            }
            if (tci_trace_name_thread(r->trace, th, (const char *)b + 7, len, RANK_INLINE) != TC_OK)
                return tci_trace_fail(r->trace, r->diag, "art", a->pos + 7);
        }
        a->pos += 7 + len;
        return TC_OK;
    }
    if (op == 3) { /* a summary that is not the last item: not read (the last one is), counted */
        if (left < 7 || left - 7 < tci_le32(b + 3))
            return truncated(r, a, 7), TC_EOF;
        tci_not_converted(r->diag, "art", a->pos, "summary item before the end", 27);
        a->pos += 7 + (size_t)tci_le32(b + 3);
        return TC_OK;
    }
    return tci_error(r->diag, TC_ERR_FORMAT, "art", a->pos + 2, "unknown stream item opcode %d", op);
}

/* Size the direct table from the ids known at open; pointer-valued ids (Dalvik, ART 5) stay in the hash. */
static int build_direct(tci_rctx *r, art *a)
{
    const tci_trace *t = r->trace;
    uint64_t max = 0;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (t->methods[i].raw_id > max)
            max = t->methods[i].raw_id;
    uint64_t n = (max >> 2) + 1024;
    if (n > (1u << 22) || n > 16 * (uint64_t)t->n_methods + 4096)
        return TC_OK;
    a->direct = malloc(n * sizeof *a->direct);
    if (!a->direct)
        return tci_error(r->diag, TC_ERR_NOMEM, "art", UINT64_MAX, "out of memory");
    memset(a->direct, 0xff, n * sizeof *a->direct);
    a->direct_n = (uint32_t)n;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if ((t->methods[i].raw_id >> 2) < n)
            a->direct[t->methods[i].raw_id >> 2] = i;
    return TC_OK;
}

static uint32_t method_slow(tci_rctx *r, art *a, uint32_t id)
{
    uint32_t m = tci_trace_method(r->trace, id), k = id >> 2;
    if (m == TCI_NONE)
        return m;
    /* streams define methods as they go: grow the table while ids stay dense */
    if (k >= a->direct_n && k < (1u << 22) && k < 16 * r->trace->n_methods + 4096) {
        uint32_t n = a->direct_n ? a->direct_n : 1024;
        while (n <= k)
            n *= 2;
        uint32_t *d = tci_realloc_array(a->direct, n, sizeof *d);
        if (d) {
            memset(d + a->direct_n, 0xff, (size_t)(n - a->direct_n) * sizeof *d);
            a->direct = d;
            a->direct_n = n;
        }
    }
    if (k < a->direct_n)
        a->direct[k] = m;
    return m;
}

/*
 * Decode a run of up to n complete records from b into ev; returns how many were decoded
 * (fewer when a stream's escape, tid 0, comes first; a->pos is advanced past them), with
 * *rc set on a failure. Inlined with the layout as constants for the common shapes (u16
 * tids and dual clocks, streaming or not: every ART v3 file), so the loop that runs for
 * every record holds no test of the layout and keeps its position in a register.
 */
static inline __attribute__((always_inline)) size_t decode_run(tci_rctx *r, art *a, const uint8_t *b, size_t n,
                                                             tci_raw *ev, size_t tid_size, int ntimes,
                                                             bool streaming, int *rc)
{
    const uint32_t *direct = a->direct;
    uint32_t direct_n = a->direct_n;
    const size_t rec_size = a->rec_size;
    const bool first_is_cpu = a->first_is_cpu;
    size_t pos = a->pos, i = 0;
    for (; i < n; i++, b += rec_size, pos += rec_size) {
        uint16_t id = tid_size == 1 ? b[0] : tci_le16(b);
        if (streaming && id == 0)
            break;
        const uint8_t *p = b + tid_size;
        uint32_t value = tci_le32(p);
        uint32_t th = a->tid_map[id];
        if (TCI_UNLIKELY(th >= TID_AMBIGUOUS)) {
            if (a->child) /* it would warn or list a thread: the shared tables are not its own */
                return a->pos = pos, *rc = TC_ERR_FORMAT, i;
            a->pos = pos; /* messages name this record */
            th = thread_for_record(r, a, id);
        }
        uint32_t m = (value >> 2) < direct_n ? direct[value >> 2] : TCI_NONE;
        if (TCI_UNLIKELY(m == TCI_NONE)) {
            if (a->child) /* it would name an unknown method: a table growth */
                return a->pos = pos, *rc = TC_ERR_FORMAT, i;
            a->pos = pos;
            m = method_slow(r, a, value & ~3u); /* may grow the direct table */
            direct = a->direct;
            direct_n = a->direct_n;
        }
        if (TCI_UNLIKELY(th == TCI_NONE || m == TCI_NONE)) {
            a->pos = pos;
            *rc = tci_trace_fail(r->trace, r->diag, "art", pos);
            return i;
        }
        tci_raw *e = &ev[i];
        e->thread = th;
        e->method = m;
        e->action = (uint8_t)(value & 3);
        e->offset = pos;
        if (ntimes == 2) {
            e->cpu = tci_le32(p + 4);
            e->wall = tci_le32(p + 8);
        } else if (first_is_cpu) {
            e->cpu = tci_le32(p + 4);
            e->wall = TCI_NO_TIME;
        } else {
            e->wall = tci_le32(p + 4);
            e->cpu = TCI_NO_TIME;
        }
    }
    a->pos = pos;
    return i;
}

static size_t decode_records(tci_rctx *r, art *a, const uint8_t *b, size_t n, tci_raw *ev, int *rc)
{
    if (a->tid_size == 2 && a->ntimes == 2)
        return a->streaming ? decode_run(r, a, b, n, ev, 2, 2, true, rc) : decode_run(r, a, b, n, ev, 2, 2, false, rc);
    return decode_run(r, a, b, n, ev, a->tid_size, a->ntimes, a->streaming, rc);
}

static int art_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *n)
{
    art *a = r->priv;
    size_t k = 0;
    int rc = TC_OK;
    while (k < max && a->pos < a->end) {
        const uint8_t *b = r->data + a->pos;
        if (a->streaming && a->end - a->pos >= 2 && tci_le16(b) == 0) {
            if ((rc = stream_item(r, a)) == TC_EOF) {
                a->pos = a->end; /* cut inside an item: nothing after it can be trusted */
                break;
            }
            if (rc != TC_OK)
                return rc;
            continue;
        }
        if (TCI_UNLIKELY(a->end - a->pos < a->rec_size)) {
            truncated(r, a, a->rec_size);
            a->pos = a->end;
            break;
        }
        /* a run of records: non-streaming files are nothing else */
        size_t run = (a->end - a->pos) / a->rec_size;
        if (run > max - k)
            run = max - k;
        k += decode_records(r, a, b, run, ev + k, &rc);
        if (rc != TC_OK)
            return rc;
    }
    r->pos = a->pos;
    *n = k;
    if (r->pass == 1) {
        a->read_pass1 += k;
        if (!k && a->streaming && (rc = stream_read(r, a)) != TC_OK)
            return rc;
    }
    return k ? TC_OK : TC_EOF;
}

static int art_rewind(tci_rctx *r)
{
    art *a = r->priv;
    a->pos = a->data_off;
    return TC_OK;
}

/* Pass 1 on two threads: a non-streaming file is whole records of one size
 * after its header, so the record at any index is found without reading those
 * before it. A file cut inside a record is not split (its tail warns as it is
 * read). The child copies the thread map and the direct method table, so the
 * parent may grow its own while the child reads. */
static int art_split(tci_rctx *r, tci_rctx *child)
{
    art *a = r->priv;
    if (a->streaming || a->pos != a->data_off || (a->end - a->data_off) % a->rec_size)
        return TCI_NO_SPLIT;
    /* every record is one tci_raw here, so a cut at a multiple of TCI_RAW_BATCH records is
     * where one thread's read ends too (tc_reader.h) */
    size_t records = (a->end - a->data_off) / a->rec_size, cut = records / 2 / TCI_RAW_BATCH * TCI_RAW_BATCH;
    if (!cut)
        return TCI_NO_SPLIT;
    art *c = malloc(sizeof *c);
    uint32_t *direct = a->direct_n ? malloc((size_t)a->direct_n * sizeof *direct) : NULL;
    if (!c || (a->direct_n && !direct)) {
        free(c);
        free(direct);
        return TCI_NO_SPLIT;
    }
    memcpy(c, a, sizeof *c);
    if (direct)
        memcpy(direct, a->direct, (size_t)a->direct_n * sizeof *direct);
    c->direct = direct;
    memset(&c->listed, 0, sizeof c->listed);
    c->child = true;
    c->pos = a->data_off + cut * a->rec_size;
    a->split_end = a->end;
    a->end = c->pos;
    *child = *r;
    child->priv = c;
    child->source = NULL; /* its pages are the parent's to release */
    child->pos = c->pos;
    return TC_OK;
}

static void art_join(tci_rctx *r, tci_rctx *child)
{
    art *a = r->priv, *c = child->priv;
    a->end = a->split_end;
    if (c)
        free(c->direct);
    free(c);
    child->priv = NULL;
}

static void art_close(tci_rctx *r)
{
    art *a = r->priv;
    if (a) {
        free(a->direct);
        tci_idmap_free(&a->listed);
    }
}

static int art_open(tci_rctx *r)
{
    int rc = art_open_tables(r);
    return rc == TC_OK ? build_direct(r, r->priv) : rc;
}

static int art_probe(const uint8_t *buf, size_t len, const char *filename)
{
    (void)filename;
    if (len >= 9 && memcmp(buf, "*version\n", 9) == 0)
        return 100;
    if (len >= 10 && memcmp(buf, "*version\r\n", 10) == 0)
        return 100; /* CRLF-converted: open() says so */
    if (len >= 6 && tci_le32(buf) == ART_MAGIC) {
        unsigned v = tci_le16(buf + 4);
        if (v >= 0xF1 && v <= 0xF3)
            return 100;
        if (v >= 1 && v <= 3)
            return 80; /* V2 (4, 5, 0xF4, 0xF5) is art_v2.c's */
        if (len >= 7 && buf[4] == 0xEF && buf[5] == 0xBF && buf[6] == 0xBD)
            return 100; /* a stream (0xF3) re-encoded as text: open() says so */
    }
    return 0;
}

/* ---- legacy split pairs (pre-1.0 SDK, ART.md §7): name.key, then name.data ---- */

/* Does the file begin with a key section ("*version")? */
static bool starts_with_key(const char *path)
{
    char head[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool key = fd >= 0 && read(fd, head, sizeof head) == (ssize_t)sizeof head && !memcmp(head, "*version", 8);
    if (fd >= 0)
        close(fd);
    return key;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

/* The path with its last `from` (an extension it ends with) replaced by `to`; malloc'd. */
static char *with_extension(const char *path, const char *from, const char *to)
{
    size_t stem = strlen(path) - strlen(from);
    char *s = malloc(stem + strlen(to) + 1);
    if (s) {
        memcpy(s, path, stem);
        strcpy(s + stem, to);
    }
    return s;
}

static int art_pair_parts(const char *path, const char *other, char *parts[2], tci_diag *d)
{
    parts[0] = parts[1] = NULL;
    if (other) { /* both given: the half that begins with the key section first, whichever order they came in */
        bool swap = !starts_with_key(path) && starts_with_key(other);
        parts[0] = strdup(swap ? other : path);
        parts[1] = strdup(swap ? path : other);
    } else if (ends_with(path, ".key") || ends_with(path, ".data")) {
        bool key = ends_with(path, ".key");
        char *sibling = key ? with_extension(path, ".key", ".data") : with_extension(path, ".data", ".key");
        struct stat st;
        if (sibling && stat(sibling, &st) != 0) {
            tci_error(d, TC_ERR_IO, "art", UINT64_MAX, "a legacy split trace needs both halves: %s is missing",
                      sibling);
            free(sibling);
            return TC_ERR_IO;
        }
        parts[0] = key ? strdup(path) : sibling;
        parts[1] = key ? sibling : strdup(path);
    } else {
        return TCI_NOT_A_PAIR;
    }
    if (parts[0] && parts[1])
        return TC_OK;
    free(parts[0]);
    free(parts[1]);
    parts[0] = parts[1] = NULL;
    return tci_error(d, TC_ERR_NOMEM, "art", UINT64_MAX, "out of memory");
}

const tci_reader tci_reader_art = {
    .name = "art",
    .description = "Android ART/Dalvik method trace (.trace: v1-v3, streaming)",
    .extensions = "trace",
    .aliases = "dmtrace,dalvik",
    .priv_size = sizeof(art),
    .probe = art_probe,
    .open = art_open,
    .read = art_read,
    .rewind = art_rewind,
    .close = art_close,
    .pair_parts = art_pair_parts,
    .split = art_split,
    .join = art_join,
};
