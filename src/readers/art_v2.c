/*
 * art_v2.c - Android ART method traces, the V2 family: versions 4 (one clock)
 * and 5 (dual), streaming 0xF4 / 0xF5 (shared/docs/formats/ART.md §5).
 *
 * A 32-byte "SLOW" header (start time u64 at offset 6: CLOCK_MONOTONIC), then
 * packets: 0x00 thread (u32 real tid, u16 length, name), 0x01 method (u64
 * ArtMethod*, u16 length, "class\tname\tsig\tsource[\tline]\n"), 0x02 a block
 * of one thread's records, 0x03 the text summary (the last packet).
 *
 * Which layout of the records is followed, and why: ART's own writer is the
 * authority (TraceWriter::FlushEntriesFormatV2 in runtime/trace.cc). Its
 * newest version we could read (Android 16 QPR, Aug 2025, ns) writes §5.2:
 * a 12-byte block header (u32 tid, u24 records, u32 payload size), then per
 * record sleb128 Δ(method|action), uleb128 Δwall (if wall), uleb128 Δcpu (if
 * thread-cpu), the first record of a block relative to 0. Times are µs before
 * 2025-03 and ns after: the summary says elapsed-time-usec or -nsec; with no
 * summary, the header start decides (>= 1e12 is taken as ns) with a warning.
 * Android 15 (§5.3) has a 21/25-byte block header holding the first record
 * (u64 method|action, u32 cpu µs, u32 wall µs) and u16 counts that wrap.
 * Perfetto's importer (art_method_v2_tokenizer.cc, 2026) reads another layout
 * (§5.4: Δ(ts<<2|action), Δcpu, Δmethod on entries only, a TSC frequency in
 * the header) that no ART source up to the newest we read writes: it is
 * accepted only when decoding proves it (see choose_layout).
 *
 * Quirks handled: the writer bug of §5.2 (a flush split into several blocks
 * keeps its accumulators and writes the cumulative record count: detected per
 * block, see continues_previous); Android 15's wrapped u16 sizes (the block
 * end is searched among the declared size + k * 65536: see a15_block_end);
 * a file cut inside a packet converts what is there, with a warning.
 * Not handled: Android 15 non-streaming files (they begin with packets
 * before the header, ART.md §5.3), the 2024-02 main-branch variant with
 * index ids. Clock pairing and every other rule live in normalize.c.
 */
#include "art_common.h"
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_leb128.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>

#define ART_MAGIC 0x574F4C53u
#define HEADER_SIZE 32
#define A16_BLOCK_HEADER 12
#define METHOD_CACHE 4096   /* raw method id -> index, direct-mapped in front of the trace's hash (2^12: see method_index) */
#define PROBE_BLOCKS 16     /* blocks decoded both ways to choose the layout */
#define A15_MAX_WRAPS 256   /* a wrapped Android 15 block is looked for up to 16 MiB past its declared end */
#define MODULE "art-v2"

enum layout { L_A16, L_A15, L_PERFETTO };
enum mode { M_FRAMING, M_WALK, M_READ }; /* what reads the packets: see plausible_packet */
enum { T_THREAD = 0, T_METHOD = 1, T_BLOCK = 2, T_SUMMARY = 3 };
enum { RANK_PACKET = 1 };
#define BLOCK_NO_END 2

typedef struct block {
    size_t at;             /* the packet's offset */
    size_t data, end;      /* its payload */
    uint32_t tid, thread;
    uint64_t declared;     /* records its header says (A15: the first record included) */
    bool partial;          /* the input ends inside it */
} block;

typedef struct v2 {
    enum layout layout;
    bool streaming, wall, cpu; /* which times records carry */
    unsigned fields;           /* LEB128 values per record (§5.2, §5.3) */
    uint64_t tsc_hz;           /* §5.4: ticks per second of the times (0: ns) */
    size_t end;                /* packets stop here (the summary, or the cut) */
    size_t cut_at;             /* where the input ends inside a packet (0: it does not) */
    size_t pos;
    uint64_t declared, declared_at; /* num-method-calls of the summary */
    uint64_t read_pass1;
    /* the block being decoded */
    bool in_block;
    block b;
    const uint8_t *p;
    uint64_t left;             /* records left (§5.4: the declared count; else UINT64_MAX: the payload decides) */
    uint64_t nrec;             /* records decoded */
    uint64_t base_declared;    /* the previous block's count, when this one continues it (writer bug) */
    uint64_t m, w, c;          /* accumulators */
    /* the block before it, for the writer bug */
    bool have_prev;
    size_t prev_end;
    uint32_t prev_tid;
    uint64_t prev_declared, prev_m, prev_w, prev_c;
    tci_idmap tids;            /* tid -> thread index */
    enum mode mode;
    struct wrap { size_t at, end; } *wraps; /* Android 15 blocks whose u16 size wrapped, in order */
    size_t n_wraps, cap_wraps, wrap_i;
    uint64_t search_left;      /* bytes the searches for wrapped ends may still count: 2 x the input + 16 MiB */
    uint32_t *direct;          /* (raw id - direct_base) >> direct_shift -> method index, when the ids are dense */
    uint64_t direct_base, direct_n, direct_mask; /* mask: the low bits every defined id has clear */
    unsigned direct_shift;
    struct { uint64_t id; uint32_t index; } cache[METHOD_CACHE];
} v2;

/* How many LEB128 values end in [p, end): one per byte without the high bit. */
static uint64_t count_lebs(const uint8_t *p, const uint8_t *end)
{
    uint64_t n = 0;
    for (; p < end; p++)
        n += !(*p & 0x80);
    return n;
}

/* ---- tables ---------------------------------------------------------------- */

static uint32_t thread_for_tid(tci_rctx *r, v2 *s, uint32_t tid)
{
    uint32_t th = tci_idmap_get(&s->tids, tid);
    if (th != TCI_NONE)
        return th;
    if ((th = tci_trace_add_thread(r->trace, tid)) == TCI_NONE)
        return TCI_NONE;
    return tci_idmap_put(&s->tids, tid, th) == 0 ? th : TCI_NONE;
}

/* The method index of a raw id (created undefined in pass 1 if new). */
static inline uint32_t method_index(tci_rctx *r, v2 *s, uint64_t id)
{
    uint64_t d = id - s->direct_base, k = d >> s->direct_shift;
    bool slot = !(d & s->direct_mask) && k < s->direct_n;
    if (TCI_LIKELY(slot && s->direct[k] != TCI_NONE))
        return s->direct[k];
    size_t h = (size_t)((id * 0x9E3779B97F4A7C15ull) >> 52); /* 4096 slots: ids are pointers, aligned */
    if (TCI_LIKELY(s->cache[h].id == id && s->cache[h].index != TCI_NONE))
        return s->cache[h].index;
    uint32_t m = tci_trace_method(r->trace, id);
    if (m != TCI_NONE) {
        s->cache[h].id = id;
        s->cache[h].index = m;
        if (slot)
            s->direct[k] = m;
    }
    return m;
}

/* ArtMethod* values of one trace mostly lie in a few arrays, as far apart as an
 * ArtMethod is long: when the defined ids, in units of the alignment they all
 * share (at least 4), span at most 16 slots per method (+ 4096), a table
 * indexed by (id - lowest) >> shift finds them in one load, as art.c's direct
 * table does for V1's dense ids; an id off that alignment goes to the hash. */
static int build_direct(tci_rctx *r, v2 *s)
{
    const tci_trace *t = r->trace;
    uint64_t lo = UINT64_MAX, hi = 0, bits = 0;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (t->methods[i].defined) {
            lo = t->methods[i].raw_id < lo ? t->methods[i].raw_id : lo;
            hi = t->methods[i].raw_id > hi ? t->methods[i].raw_id : hi;
        }
    for (uint32_t i = 0; i < t->n_methods && lo <= hi; i++)
        if (t->methods[i].defined)
            bits |= t->methods[i].raw_id - lo;
    unsigned shift = 2;
    while (shift < 12 && bits && !(bits & ((uint64_t)1 << shift)))
        shift++;
    if (lo > hi || ((hi - lo) >> shift) + 1 > 16 * (uint64_t)t->n_methods + 4096 || ((hi - lo) >> shift) + 1 > (1u << 22))
        return TC_OK;
    uint64_t n = ((hi - lo) >> shift) + 1;
    if (!(s->direct = malloc(n * sizeof *s->direct)))
        return tci_error(r->diag, TC_ERR_NOMEM, MODULE, UINT64_MAX, "out of memory");
    memset(s->direct, 0xff, n * sizeof *s->direct);
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (t->methods[i].defined)
            s->direct[(t->methods[i].raw_id - lo) >> shift] = i;
    s->direct_base = lo;
    s->direct_n = n;
    s->direct_shift = shift;
    s->direct_mask = ((uint64_t)1 << shift) - 1;
    return TC_OK;
}

/* Does a method packet define this raw id? (Never creates an entry.) */
static bool is_defined(const tci_trace *t, uint64_t id)
{
    uint32_t m = tci_idmap_get(&t->method_ids, id);
    return m != TCI_NONE && t->methods[m].defined;
}

/* "class\tname\tsig\tsource[\tline]\n": ART writes 4 fields (no id, dotted
 * class); Perfetto's reader also takes a 5th, the line number. */
static int method_packet(tci_rctx *r, uint64_t id, tci_span line, uint64_t off)
{
    tci_span f[5];
    if (line.n && line.p[line.n - 1] == '\n')
        line.n--;
    size_t n = tci_art_split_tabs(line, f, 5);
    if (n < 2) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, MODULE, off, "method packet is not '<class>\\t<name>...'; ignored");
        return TC_OK;
    }
    tci_span sig = n >= 3 ? f[2] : (tci_span){"", 0}, file = {NULL, 0};
    if (n >= 4 && f[3].n && !tci_span_is(f[3], "(null)"))
        file = f[3];
    int64_t lineno = -1;
    if (n == 5 && (!tci_parse_i64(f[4].p, f[4].n, &lineno) || lineno < -2 || lineno > INT32_MAX))
        lineno = -1;
    if (tci_trace_define_method(r->trace, id & ~(uint64_t)3, f[0].p, f[0].n, f[1].p, f[1].n, sig.p, sig.n, file.p,
                                file.n, (int32_t)lineno) != TC_OK)
        return tci_trace_fail(r->trace, r->diag, MODULE, off);
    return TC_OK;
}

static int summary_packet(tci_rctx *r, v2 *s, const char *text, size_t len, uint64_t file_off)
{
    size_t pos = 0;
    tci_line l;
    tci_trace *t = r->trace;
    bool want_version = false;
    while (tci_next_line(text, len, &pos, &l)) {
        tci_span line = {l.p, l.n};
        if (!line.n || tci_span_is(line, "*end"))
            continue;
        if (line.p[0] == '*') {
            want_version = tci_span_is(line, "*version");
            if (!want_version) /* a V2 summary has no other section (ART.md 5.1) */
                tci_warn(r->diag, TCI_FIG_BAD_LINE, MODULE, file_off + l.off, "unknown section '%.*s' ignored",
                         (int)(line.n > 40 ? 40 : line.n), line.p);
            continue;
        }
        if (want_version) { /* 4 or 5: the header's version says the same */
            want_version = false;
            continue;
        }
        uint64_t off = file_off + l.off, n;
        int rc = tci_art_key_value(r, line, off, &s->declared, &s->declared_at);
        if (rc != TC_OK)
            return rc;
        const char *eq = memchr(line.p, '=', line.n);
        tci_span k = {line.p, eq ? (size_t)(eq - line.p) : 0};
        if (eq && tci_span_is(k, "elapsed-time-nsec") &&
            tci_parse_u64(eq + 1, line.n - k.n - 1, INT64_MAX, &n)) { /* Android 16 since 2025-03 */
            t->elapsed_ns = (int64_t)n;
            t->elapsed_offset = off + k.n + 1;
        }
    }
    return TC_OK;
}

/* ---- packet framing -------------------------------------------------------- */

static size_t block_header_size(const v2 *s)
{
    if (s->layout != L_A15)
        return A16_BLOCK_HEADER;
    return 1 + 4 + 8 + (s->wall ? 4 : 0) + (s->cpu ? 4 : 0) + 2 + 2;
}

/* Could a packet start at q? (The end of the packets is a packet boundary too.)
 * During open()'s walk (M_WALK) the tables read so far make it stricter: a
 * thread or block names a tid other than 0, a thread's name and a method's
 * line are text (the line with its tabs), a block's first record (in its
 * Android 15 header) a method already defined, as ART defines it before the
 * block that uses it. */
static bool plausible_packet(const tci_rctx *r, const v2 *s, size_t q)
{
    const uint8_t *b = r->data;
    size_t n = r->size;
    bool strict = s->mode == M_WALK;
    if (q == n)
        return true;
    switch (b[q]) {
    case T_THREAD: {
        size_t len = q + 7 <= n ? tci_le16(b + q + 5) : 0;
        if (q + 7 > n || q + 7 + len > n)
            return false;
        if (strict && (!tci_le32(b + q + 1) || !len || len > 1024))
            return false;
        for (size_t i = 0; strict && i < len; i++) /* a name is text: LEB128 runs hold 0x00..0x1f */
            if (b[q + 7 + i] < 0x20 || b[q + 7 + i] == 0x7F)
                return false;
        return true;
    }
    case T_METHOD: {
        size_t len = q + 11 <= n ? tci_le16(b + q + 9) : 0, tabs = 0;
        if (!len || q + 11 + len > n || b[q + 11 + len - 1] != '\n')
            return false;
        for (size_t i = 0; strict && i + 1 < len; i++) { /* "class\tname\tsig\tsource": text with tabs */
            uint8_t c = b[q + 11 + i];
            if (c < 0x20 && c != '\t')
                return false;
            tabs += c == '\t';
        }
        return !strict || tabs >= 2;
    }
    case T_BLOCK:
        if (q + block_header_size(s) > n)
            return false;
        if (strict && s->layout == L_A15)
            return tci_le32(b + q + 1) && (b[q + 5] & 3) != 3 && is_defined(r->trace, tci_le64(b + q + 5) & ~(uint64_t)3);
        return true;
    case T_SUMMARY: return q + 3 + 8 <= n && memcmp(b + q + 3, "*version", 8) == 0;
    default: return false;
    }
}

/*
 * Android 15 writes the record count - 1 and the payload size as u16, cut
 * (ART.md §5.3): a block of 65536 bytes or more ends at size + k * 65536 for
 * some k. The first k whose payload holds as many records as declared (modulo
 * 65536 past k = 0) and whose end is followed by a plausible packet is taken.
 * Bounded: A15_MAX_WRAPS tries, one count over the bytes searched, and all
 * the searches of one input count at most twice its size (a real wrapped
 * block's search covers its own payload once). 0 when none
 * fits. Decided once, in open()'s walk, which keeps the wrapped ends found
 * (one per 64 KiB of input at most) for the passes.
 */
static size_t a15_block_end(const tci_rctx *r, v2 *s, size_t data, size_t size, uint64_t rest)
{
    uint64_t lebs = count_lebs(r->data + data, r->data + (data + size <= r->size ? data + size : r->size));
    if (data + size <= r->size && (s->mode == M_FRAMING || lebs == rest * s->fields) &&
        plausible_packet(r, s, data + size))
        return data + size;
    for (size_t k = 1, end = data + size; k <= A15_MAX_WRAPS && end + 65536 <= r->size; k++) {
        if (s->search_left < 65536) /* many blocks that end nowhere (a hostile file): not quadratic */
            return 0;
        s->search_left -= 65536;
        lebs += count_lebs(r->data + end, r->data + end + 65536);
        end += 65536;
        if (lebs % s->fields == 0 && (lebs / s->fields) % 65536 == rest && plausible_packet(r, s, end))
            return end;
    }
    return 0;
}

static bool keep_wrap(v2 *s, size_t at, size_t end)
{
    if (s->n_wraps == s->cap_wraps) {
        size_t cap = s->cap_wraps ? 2 * s->cap_wraps : 16;
        struct wrap *w = tci_realloc_array(s->wraps, cap, sizeof *w);
        if (!w)
            return true;
        s->wraps = w;
        s->cap_wraps = cap;
    }
    s->wraps[s->n_wraps++] = (struct wrap){at, end};
    return false;
}

/* The block at `at` (whose header fits): its payload and counts. TC_OK;
 * TC_EOF when the input ends inside it (b->partial); BLOCK_NO_END when an
 * Android 15 block has no end that fits (not reported: the caller says). */
static int parse_block(tci_rctx *r, v2 *s, size_t at, block *b)
{
    const uint8_t *h = r->data + at;
    size_t hs = block_header_size(s);
    b->at = at;
    b->tid = tci_le32(h + 1);
    b->data = at + hs;
    b->partial = false;
    if (s->layout == L_A15) {
        uint64_t rest = tci_le16(h + hs - 4);
        size_t size = tci_le16(h + hs - 2);
        b->declared = rest + 1;
        if (s->mode == M_READ) { /* the walk found where it ends */
            bool wrapped = s->wrap_i < s->n_wraps && s->wraps[s->wrap_i].at == at;
            b->end = wrapped ? s->wraps[s->wrap_i++].end : b->data + size <= r->size ? b->data + size : 0;
        } else {
            b->end = a15_block_end(r, s, b->data, size, rest);
            if (s->mode == M_WALK && b->end && b->end != b->data + size && keep_wrap(s, at, b->end))
                return TC_ERR_NOMEM;
        }
        if (!b->end) {
            if (b->data + size > r->size) {
                b->end = r->size;
                b->partial = true;
                return TC_EOF;
            }
            return BLOCK_NO_END;
        }
        return TC_OK;
    }
    b->declared = h[5] | (uint64_t)h[6] << 8 | (uint64_t)h[7] << 16;
    uint64_t size = tci_le32(h + 8);
    if (size > r->size - b->data) {
        b->end = r->size;
        b->partial = true;
        return TC_EOF;
    }
    b->end = b->data + (size_t)size;
    return TC_OK;
}

/* The input ends inside the packet at `at`: the packets stop there. */
static int cut(tci_rctx *r, v2 *s, size_t at, size_t need)
{
    s->cut_at = at;
    s->end = at;
    tci_warn(r->diag, TCI_FIG_TRUNCATED, MODULE, at,
             "input ends inside a packet (need %zu bytes, have %zu); converting what is there", need, r->size - at);
    return TC_EOF;
}

/* The summary is the last packet ART writes: what follows it is read by nothing, and each
 * packet there (framed as the walk frames them) is counted as not converted; bytes that
 * frame as no packet, once. */
static void after_summary(tci_rctx *r, v2 *s, size_t q)
{
    static const char *const kinds[] = {"thread packet after the summary", "method packet after the summary",
                                        "block after the summary", "summary after the summary"};
    const uint8_t *b = r->data;
    size_t n = r->size;
    block k;
    enum mode keep = s->mode;
    s->mode = M_FRAMING; /* the walk's rules keep what they find: here, nothing is kept */
    while (q < n) {
        size_t left = n - q, next = 0;
        if (b[q] == T_THREAD && left >= 7 && left - 7 >= tci_le16(b + q + 5))
            next = q + 7 + tci_le16(b + q + 5);
        else if (b[q] == T_METHOD && left >= 11 && left - 11 >= tci_le16(b + q + 9))
            next = q + 11 + tci_le16(b + q + 9);
        else if (b[q] == T_BLOCK && left >= block_header_size(s) && parse_block(r, s, q, &k) == TC_OK)
            next = k.end;
        else if (b[q] == T_SUMMARY && left >= 3 && left - 3 >= tci_le16(b + q + 1))
            next = q + 3 + tci_le16(b + q + 1);
        if (!next) {
            tci_not_converted(r->diag, MODULE, q, "bytes after the summary", 23);
            break;
        }
        tci_not_converted(r->diag, MODULE, q, kinds[b[q]], strlen(kinds[b[q]]));
        q = next;
    }
    s->mode = keep;
}

/* One packet at s->pos during the walk of open(): tables filled, pos moved on.
 * TC_OK, TC_EOF (the summary or the end), or an error. */
static int walk_packet(tci_rctx *r, v2 *s)
{
    const uint8_t *b = r->data + s->pos;
    size_t at = s->pos, left = r->size - at;
    int rc;
    switch (b[0]) {
    case T_THREAD: {
        if (left < 7 || left - 7 < tci_le16(b + 5))
            return cut(r, s, at, left < 7 ? 7 : 7 + (size_t)tci_le16(b + 5));
        uint32_t th = thread_for_tid(r, s, tci_le32(b + 1));
        if (th == TCI_NONE || tci_trace_name_thread(r->trace, th, (const char *)b + 7, tci_le16(b + 5), RANK_PACKET))
            return tci_trace_fail(r->trace, r->diag, MODULE, at);
        s->pos += 7 + (size_t)tci_le16(b + 5);
        return TC_OK;
    }
    case T_METHOD: {
        if (left < 11 || left - 11 < tci_le16(b + 9))
            return cut(r, s, at, left < 11 ? 11 : 11 + (size_t)tci_le16(b + 9));
        if ((rc = method_packet(r, tci_le64(b + 1), (tci_span){(const char *)b + 11, tci_le16(b + 9)}, at + 11)))
            return rc;
        s->pos += 11 + (size_t)tci_le16(b + 9);
        return TC_OK;
    }
    case T_BLOCK: {
        block k;
        if (left < block_header_size(s))
            return cut(r, s, at, block_header_size(s));
        if (thread_for_tid(r, s, tci_le32(b + 1)) == TCI_NONE)
            return tci_trace_fail(r->trace, r->diag, MODULE, at);
        if ((rc = parse_block(r, s, at, &k)) == TC_EOF) {
            cut(r, s, at, k.data - at + (size_t)(s->layout == L_A15 ? tci_le16(b + block_header_size(s) - 2)
                                                                     : tci_le32(b + 8)));
            s->end = r->size; /* the partial block is decoded as far as it goes */
            return TC_EOF;
        }
        if (rc == BLOCK_NO_END)
            return tci_error(r->diag, TC_ERR_FORMAT, MODULE, at + block_header_size(s) - 2,
                             "Android 15 block of %u bytes: no packet follows it, nor any of its wrapped "
                             "sizes (u16 counts, ART.md §5.3)", (unsigned)tci_le16(b + block_header_size(s) - 2));
        if (rc != TC_OK)
            return rc;
        s->pos = k.end;
        return TC_OK;
    }
    case T_SUMMARY: {
        size_t len = left >= 3 ? tci_le16(b + 1) : 0;
        if (left < 3 || left - 3 < len)
            return cut(r, s, at, 3 + len);
        if ((rc = summary_packet(r, s, (const char *)b + 3, len, at + 3)) != TC_OK)
            return rc;
        s->end = at;
        after_summary(r, s, at + 3 + len);
        return TC_EOF;
    }
    default:
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, at, "unknown packet type 0x%02x", b[0]);
    }
}

/* The walks of open() touch a block header every few KiB, and the kernel maps
 * the pages around each: given back a MiB at a time, so that a large input is
 * not all resident before pass 1 begins (which gives pages back as it goes). */
static void walked(tci_rctx *r, size_t *dropped, size_t pos)
{
    if (pos - *dropped >= ((size_t)1 << 20) && pos <= r->size) {
        tci_source_drop(r->source, *dropped, pos);
        *dropped = pos;
    }
}

/* Walk every packet from the header on: threads, methods, the summary. */
static int walk(tci_rctx *r, v2 *s)
{
    int rc = TC_OK;
    size_t dropped = 0;
    s->pos = HEADER_SIZE;
    s->end = r->size;
    s->mode = M_WALK;
    while (s->pos < r->size && (rc = walk_packet(r, s)) == TC_OK)
        walked(r, &dropped, s->pos);
    s->mode = M_READ;
    return rc == TC_EOF ? TC_OK : rc == TC_ERR_NOMEM ? tci_error(r->diag, rc, MODULE, s->pos, "out of memory") : rc;
}

/* Packets walked in a layout's framing from the header on; *whole: it ends
 * exactly at the end of the input or at the summary. Tells Android 15 (whose
 * block header differs) from the others. */
static uint64_t framing(tci_rctx *r, v2 *s, enum layout l, bool *whole)
{
    enum layout keep = s->layout;
    uint64_t packets = 0;
    size_t q = HEADER_SIZE, n = r->size, dropped = 0;
    s->layout = l;
    *whole = false;
    while (q < n) {
        const uint8_t *b = r->data + q;
        size_t left = n - q;
        block k;
        if (b[0] == T_SUMMARY) {
            *whole = plausible_packet(r, s, q);
            break;
        }
        if (b[0] == T_THREAD && left >= 7)
            q += 7 + (size_t)tci_le16(b + 5);
        else if (b[0] == T_METHOD && left >= 11)
            q += 11 + (size_t)tci_le16(b + 9);
        else if (b[0] == T_BLOCK && left >= block_header_size(s) && parse_block(r, s, q, &k) == TC_OK)
            q = k.end;
        else
            break;
        packets++;
        *whole = q == n;
        walked(r, &dropped, q);
    }
    s->layout = keep;
    return packets;
}

/* The first block, after the thread and method packets (framed alike in both):
 * read as Android 16, its payload holds the records it declares; read as
 * Android 15, its header's first record names a method defined before it. */
static int first_block_says(tci_rctx *r, v2 *s)
{
    const uint8_t *b = r->data;
    size_t q = HEADER_SIZE, n = r->size;
    while (q + 11 <= n && (b[q] == T_THREAD || b[q] == T_METHOD))
        q += b[q] == T_THREAD ? 7 + (size_t)tci_le16(b + q + 5) : 11 + (size_t)tci_le16(b + q + 9);
    if (q + 25 > n || b[q] != T_BLOCK)
        return -1;
    uint64_t size = tci_le32(b + q + 8), declared = b[q + 5] | (uint64_t)b[q + 6] << 8 | (uint64_t)b[q + 7] << 16;
    bool a16 = size <= n - q - 12 && count_lebs(b + q + 12, b + q + 12 + size) == declared * s->fields;
    uint64_t first = tci_le64(b + q + 5) & ~(uint64_t)3;
    bool a15 = false;
    for (size_t p = HEADER_SIZE; p < q && !a15; p += b[p] == T_THREAD ? 7 + (size_t)tci_le16(b + p + 5)
                                                                        : 11 + (size_t)tci_le16(b + p + 9))
        a15 = b[p] == T_METHOD && tci_le64(b + p + 1) == first;
    return a16 ? L_A16 : a15 ? L_A15 : -1;
}

static enum layout choose_framing(tci_rctx *r, v2 *s)
{
    bool w16, w15;
    int said = first_block_says(r, s);
    if (said >= 0)
        return (enum layout)said;
    uint64_t n16 = framing(r, s, L_A16, &w16);
    if (w16)
        return L_A16;
    uint64_t n15 = framing(r, s, L_A15, &w15);
    return w15 || n15 > n16 ? L_A15 : L_A16;
}

/* ---- records ---------------------------------------------------------------- */

/* One record of a §5.2 / §5.3 block into the accumulators. */
static inline int delta_record(v2 *s, const uint8_t **p, const uint8_t *end)
{
    uint64_t dm, dw = 0, dc = 0;
    int rc;
    if (TCI_LIKELY(end - *p >= 3 * TCI_LEB_MAX)) { /* the whole of any record is there */
        rc = tci_sleb_fast(p, &dm);
        if (!rc && s->wall)
            rc = tci_uleb_fast(p, &dw);
        if (!rc && s->cpu)
            rc = tci_uleb_fast(p, &dc);
    } else {
        rc = tci_sleb(p, end, &dm);
        if (!rc && s->wall)
            rc = tci_uleb(p, end, &dw);
        if (!rc && s->cpu)
            rc = tci_uleb(p, end, &dc);
    }
    if (rc)
        return rc;
    s->m += dm;
    s->w += dw;
    s->c += dc;
    if (s->layout == L_A15) { /* µs truncated to u32 before differencing: normalize unwraps */
        s->w &= 0xFFFFFFFFu;
        s->c &= 0xFFFFFFFFu;
    }
    return TCI_LEB_OK;
}

/* One §5.4 record: Δ(ts << 2 | action), [Δcpu], Δmethod on an entry only. */
static inline int perfetto_record(v2 *s, const uint8_t **p, const uint8_t *end, bool *entry)
{
    uint64_t dt, dc = 0, dm = 0;
    int rc = tci_sleb(p, end, &dt);
    if (!rc && s->cpu && s->wall)
        rc = tci_sleb(p, end, &dc);
    *entry = !rc && ((s->w + dt) & 3) == 0;
    if (!rc && *entry)
        rc = tci_sleb(p, end, &dm);
    if (rc)
        return rc;
    s->w += dt;
    s->c += dc;
    s->m += dm;
    return TCI_LEB_OK;
}

/*
 * The writer bug of §5.2: one flush that did not fit ART's encode buffer is
 * written as several blocks of the same thread, one after the other, but the
 * accumulators go on from the previous block and num_records is cumulative.
 * A block after one of the same thread continues it when its first record,
 * read from zero, names no defined method while read on from the previous
 * block it does; failing that evidence, when its count is the previous count
 * plus its own records; failing that, when read from zero its wall time would
 * go back before the previous record of the thread. Otherwise it starts at 0.
 */
static bool continues_previous(tci_rctx *r, v2 *s, const block *b)
{
    if (!s->have_prev || s->prev_tid != b->tid || s->prev_end != b->at || b->partial)
        return false;
    const uint8_t *p = r->data + b->data, *end = r->data + b->end;
    uint64_t dm, dw = 0;
    if (tci_sleb(&p, end, &dm) || (s->wall && tci_uleb(&p, end, &dw)))
        return false;
    const tci_trace *t = r->trace;
    bool reset_ok = is_defined(t, dm & ~(uint64_t)3), cont_ok = is_defined(t, (s->prev_m + dm) & ~(uint64_t)3);
    if (reset_ok != cont_ok)
        return cont_ok;
    uint64_t lebs = count_lebs(r->data + b->data, end), own = lebs / s->fields;
    if (lebs % s->fields == 0 && b->declared != own && b->declared == s->prev_declared + own)
        return true;
    if (b->declared == own)
        return false;
    return s->wall && dw < s->prev_w;
}

static int start_block(tci_rctx *r, v2 *s, size_t at)
{
    int rc = parse_block(r, s, at, &s->b);
    if (rc != TC_OK && rc != TC_EOF) /* the walk of open() found it */
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, at, "block has no end");
    if (s->b.partial)
        s->b.end = s->end;
    if ((s->b.thread = thread_for_tid(r, s, s->b.tid)) == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, MODULE, at);
    s->p = r->data + s->b.data;
    s->left = s->b.declared;
    s->nrec = 0;
    s->base_declared = 0;
    if (s->layout == L_A16 && continues_previous(r, s, &s->b)) {
        s->m = s->prev_m, s->w = s->prev_w, s->c = s->prev_c;
        s->base_declared = s->prev_declared; /* the count is cumulative */
    } else {
        s->m = s->w = s->c = 0;
    }
    if (s->layout != L_PERFETTO) /* the payload decides, as in ART's own reader; the count is checked at the
                                  * end (Android 15's modulo 2^16: it wraps) */
        s->left = UINT64_MAX;
    if (s->layout == L_A15) { /* the first record is in the header */
        const uint8_t *h = r->data + at + 5;
        s->m = tci_le64(h);
        size_t o = 8;
        if (s->cpu)
            s->c = tci_le32(h + o), o += 4;
        if (s->wall)
            s->w = tci_le32(h + o);
    }
    s->in_block = true;
    return TC_OK;
}

/* A block decoded: its count checked (A16 and §5.4: a cumulative count after
 * the writer bug; Android 15's is cut to 16 bits), its state kept for the next. */
static void end_block(tci_rctx *r, v2 *s)
{
    uint64_t want = s->b.declared - s->base_declared;
    if (s->layout == L_PERFETTO && !s->b.partial && s->p < r->data + s->b.end) /* §5.4: the count decides */
        tci_not_converted(r->diag, MODULE, (uint64_t)(s->p - r->data), "block bytes past its count", 26);
    if (s->layout == L_A15 ? (s->nrec & 0xFFFF) != (want & 0xFFFF) : s->nrec != want)
        if (!s->b.partial)
            tci_warn(r->diag, TCI_FIG_TRUNCATED, MODULE, s->b.at,
                     "block of thread %u declares %llu records, its payload holds %llu; converting what is there",
                     s->b.tid, (unsigned long long)want, (unsigned long long)s->nrec);
    s->pos = s->b.end;
    s->in_block = false;
    s->have_prev = true;
    s->prev_tid = s->b.tid;
    s->prev_end = s->b.end;
    s->prev_declared = s->b.declared;
    s->prev_m = s->m, s->prev_w = s->w, s->prev_c = s->c;
}

static int record_error(tci_rctx *r, v2 *s, int leb)
{
    uint64_t at = (uint64_t)(s->p - r->data);
    if (leb == TCI_LEB_OVERLONG)
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, at, "a LEB128 number runs over 10 bytes (block at 0x%zx)",
                         s->b.at);
    return tci_error(r->diag, TC_ERR_FORMAT, MODULE, at,
                     "a record runs past the end of its block (block at 0x%zx, %zu payload bytes)", s->b.at,
                     s->b.end - s->b.data);
}

static inline void put_event(v2 *s, tci_raw *ev, uint32_t method, uint8_t action, uint64_t at)
{
    ev->thread = s->b.thread;
    ev->method = method;
    ev->action = action;
    ev->offset = at;
    ev->wall = s->wall ? (int64_t)s->w : TCI_NO_TIME;
    ev->cpu = s->cpu ? (int64_t)s->c : TCI_NO_TIME;
}

/* The common case, Android 16 with both clocks, while every byte of a record
 * is surely there: the state in registers, no bounds checks, no clock tests.
 * It stops before anything unusual (an overlong LEB128, the block's last 30
 * bytes) and leaves it to the general loop, which says what was wrong. */
static int a16_dual_run(tci_rctx *r, v2 *s, tci_raw *ev, size_t *k, size_t max, const uint8_t *end)
{
    const uint8_t *p = s->p;
    uint64_t m = s->m, w = s->w, c = s->c, n = s->nrec;
    size_t i = *k;
    int rc = TC_OK;
    /* One record, its values in dm, dw, dc, at `at`: its event, or a failed lookup. */
#define A16_EMIT(at)                                                                  \
    do {                                                                              \
        uint32_t mi = method_index(r, s, (m + dm) & ~(uint64_t)3);                    \
        if (TCI_UNLIKELY(mi == TCI_NONE)) {                                           \
            p = (at);                                                                 \
            rc = tci_trace_fail(r->trace, r->diag, MODULE, (uint64_t)((at) - r->data)); \
            goto out;                                                                 \
        }                                                                             \
        m += dm, w += dw, c += dc;                                                    \
        tci_raw *e = &ev[i++];                                                        \
        e->thread = s->b.thread;                                                      \
        e->method = mi;                                                               \
        e->action = (uint8_t)(m & 3);                                                 \
        e->offset = (uint64_t)((at) - r->data);                                       \
        e->wall = (int64_t)w;                                                         \
        e->cpu = (int64_t)c;                                                          \
        n++;                                                                          \
    } while (0)
    while (i < max && end - p >= 3 * TCI_LEB_MAX) {
        const uint8_t *at = p;
        uint64_t dm, dw, dc, lo = tci_le64(p), hi = tci_le64(p + 8);
        unsigned len = tci_leb_triple_word(lo, &dm, &dw, &dc); /* most records: one word */
        if (TCI_LIKELY(len))
            p += len;
        else if (TCI_UNLIKELY(tci_sleb_fast(&p, &dm) || tci_uleb_fast(&p, &dw) || tci_uleb_fast(&p, &dc))) {
            p = at; /* an overlong value: the general loop says so */
            break;
        }
        A16_EMIT(at);
        /* The next record from the same 16 bytes: its word does not wait for a load at p. */
        unsigned len2 = len && i < max ? tci_leb_triple_word(tci_leb_word_at(lo, hi, len), &dm, &dw, &dc) : 0;
        if (len2) {
            const uint8_t *at2 = p;
            p += len2;
            A16_EMIT(at2);
        }
    }
out:
#undef A16_EMIT
    s->p = p, s->m = m, s->w = w, s->c = c, s->nrec = n;
    *k = i;
    return rc;
}

/* Records of the current block into ev[k..max); the new k. */
static int block_records(tci_rctx *r, v2 *s, tci_raw *ev, size_t *k, size_t max)
{
    const uint8_t *end = r->data + s->b.end;
    int rc;
    if (s->layout == L_A16 && s->wall && s->cpu && (rc = a16_dual_run(r, s, ev, k, max, end)) != TC_OK)
        return rc;
    if (s->layout == L_A15 && !s->nrec && *k < max) {
        uint32_t m = method_index(r, s, s->m & ~(uint64_t)3); /* the header's record */
        if (m == TCI_NONE)
            return tci_trace_fail(r->trace, r->diag, MODULE, s->b.at);
        put_event(s, &ev[(*k)++], m, (uint8_t)(s->m & 3), s->b.at);
        s->nrec++;
    }
    while (*k < max && s->left && s->p < end) {
        const uint8_t *at = s->p;
        int rc;
        uint32_t m;
        uint8_t action;
        if (s->layout == L_PERFETTO) {
            bool entry;
            rc = perfetto_record(s, &s->p, end, &entry);
            action = (uint8_t)(s->w & 3);
            m = TCI_NONE; /* an exit closes the innermost frame (§5.4 writes no method for it) */
            if (!rc && (entry || action == TCI_ACT_INVALID) && /* action 3: Perfetto's last method */
                (m = method_index(r, s, s->m & ~(uint64_t)3)) == TCI_NONE)
                return tci_trace_fail(r->trace, r->diag, MODULE, (uint64_t)(at - r->data));
        } else {
            rc = delta_record(s, &s->p, end);
            action = (uint8_t)(s->m & 3);
            if (!rc && (m = method_index(r, s, s->m & ~(uint64_t)3)) == TCI_NONE)
                return tci_trace_fail(r->trace, r->diag, MODULE, (uint64_t)(at - r->data));
        }
        if (TCI_UNLIKELY(rc)) {
            s->p = at;
            if (rc == TCI_LEB_END && s->b.partial) { /* the cut: said at open */
                s->p = end;
                break;
            }
            return record_error(r, s, rc);
        }
        tci_raw *e = &ev[(*k)++];
        put_event(s, e, m, action, (uint64_t)(at - r->data));
        if (s->layout == L_PERFETTO) {
            uint64_t ts = s->w >> 2;
            if (s->tsc_hz) /* ticks to ns without overflow */
                ts = ts / s->tsc_hz * 1000000000u + ts % s->tsc_hz * 1000000000u / s->tsc_hz;
            e->wall = (int64_t)(ts & INT64_MAX);
            e->cpu = s->cpu && s->wall ? (int64_t)s->c : TCI_NO_TIME;
        }
        if (s->left != UINT64_MAX)
            s->left--;
        s->nrec++;
    }
    return TC_OK;
}

static int v2_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *n)
{
    v2 *s = r->priv;
    size_t k = 0;
    int rc;
    while (k < max) {
        if (s->in_block) {
            if ((rc = block_records(r, s, ev, &k, max)) != TC_OK)
                return rc;
            if ((!s->left || s->p >= r->data + s->b.end) && (s->layout != L_A15 || s->nrec))
                end_block(r, s); /* (Android 15: once the header's record is out too) */
            continue;
        }
        if (s->pos >= s->end)
            break;
        const uint8_t *b = r->data + s->pos;
        if (b[0] == T_BLOCK) {
            if ((rc = start_block(r, s, s->pos)) != TC_OK)
                return rc;
            continue;
        }
        /* threads and methods were read at open; the summary ends the packets */
        if (b[0] == T_THREAD)
            s->pos += 7 + (size_t)tci_le16(b + 5);
        else if (b[0] == T_METHOD)
            s->pos += 11 + (size_t)tci_le16(b + 9);
        else
            s->pos = s->end;
    }
    r->pos = s->pos;
    *n = k;
    if (r->pass == 1) {
        s->read_pass1 += k;
        if (!k && !s->read_pass1)
            return tci_error(r->diag, TC_ERR_NO_TRACE, MODULE, s->end, "no trace events found: no block holds a record");
        if (!k && s->declared > s->read_pass1 && !s->cut_at)
            tci_warn(r->diag, TCI_FIG_TRUNCATED, MODULE, s->end,
                     "truncated: %llu of %llu records (num-method-calls=%llu in the summary)",
                     (unsigned long long)s->read_pass1, (unsigned long long)s->declared,
                     (unsigned long long)s->declared);
    }
    return k ? TC_OK : TC_EOF;
}

/* ---- the layout ------------------------------------------------------------- */

/* Decode up to PROBE_BLOCKS blocks as the layout says: do all of them decode
 * whole (every record inside its payload, the declared count met), and how
 * many of their method ids are defined? */
static void probe_layout(tci_rctx *r, v2 *s, enum layout l, bool *whole, uint64_t *hits, uint64_t *ids)
{
    enum layout keep = s->layout;
    s->layout = l;
    *whole = true;
    *hits = *ids = 0;
    unsigned blocks = 0;
    for (size_t q = HEADER_SIZE; q < s->end && blocks < PROBE_BLOCKS;) {
        const uint8_t *b = r->data + q;
        if (b[0] == T_THREAD) { q += 7 + (size_t)tci_le16(b + 5); continue; }
        if (b[0] == T_METHOD) { q += 11 + (size_t)tci_le16(b + 9); continue; }
        block k;
        if (b[0] != T_BLOCK || q + A16_BLOCK_HEADER > r->size || parse_block(r, s, q, &k) != TC_OK)
            break;
        blocks++;
        const uint8_t *p = r->data + k.data, *end = r->data + k.end;
        uint64_t n = 0;
        s->m = s->w = s->c = 0;
        while (p < end) {
            bool entry = true;
            int rc = l == L_PERFETTO ? perfetto_record(s, &p, end, &entry) : delta_record(s, &p, end);
            if (rc) {
                *whole = false;
                break;
            }
            n++;
            if (entry) {
                (*ids)++;
                *hits += is_defined(r->trace, s->m & ~(uint64_t)3);
            }
        }
        if (n != k.declared)
            *whole = false;
        q = k.end;
    }
    s->layout = keep;
}

/*
 * ART's layout (§5.2) unless decoding proves Perfetto's (§5.4): its blocks
 * decode whole and most of its method ids are defined while §5.2's are not;
 * or the header holds §5.4's TSC fields (§5.2 leaves them zero) and §5.4
 * decodes whole with at least as many defined ids.
 */
static void choose_layout(tci_rctx *r, v2 *s)
{
    bool w52, w54;
    uint64_t h52, n52, h54, n54;
    probe_layout(r, s, L_A16, &w52, &h52, &n52);
    probe_layout(r, s, L_PERFETTO, &w54, &h54, &n54);
    bool tsc = false;
    for (size_t i = 14; i < 30; i++)
        tsc |= r->data[i] != 0;
    bool ids54 = n54 && h54 * 10 >= n54 * 9 && h52 * 2 < n52;
    if (w54 && (ids54 || (tsc && h54 * n52 >= h52 * n54 && (h54 || !w52)))) {
        s->layout = L_PERFETTO;
        s->tsc_hz = tci_le64(r->data + 22);
    }
}

/* µs or ns: the summary says (elapsed-time-usec / -nsec); else the header start. */
static int64_t time_unit(tci_rctx *r, v2 *s, uint64_t start)
{
    if (s->layout == L_A15)
        return 1000;
    if (s->layout == L_PERFETTO)
        return 1;
    if (tci_trace_meta(r->trace, "elapsed-time-nsec"))
        return 1;
    if (tci_trace_meta(r->trace, "elapsed-time-usec"))
        return 1000;
    bool ns = start >= 1000000000000ull; /* 1e12: 16.7 min of uptime in ns, 11.6 days in µs */
    tci_warn(r->diag, TCI_FIG_NO_SUMMARY, MODULE, r->size,
             "no summary (cut short): times taken as %s, from the header's start time %llu", ns ? "ns" : "µs",
             (unsigned long long)start);
    return ns ? 1 : 1000;
}

static int v2_open(tci_rctx *r)
{
    v2 *s = r->priv;
    tci_trace *t = r->trace;
    for (size_t i = 0; i < METHOD_CACHE; i++)
        s->cache[i].index = TCI_NONE;
    if (r->size < HEADER_SIZE || tci_le32(r->data) != ART_MAGIC)
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, 0, "no \"SLOW\" header of %d bytes", HEADER_SIZE);
    unsigned version = tci_le16(r->data + 4);
    if (version != 4 && version != 5 && version != 0xF4 && version != 0xF5)
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, 4, "version 0x%x is not a V2 trace (4, 5, 0xF4, 0xF5)", version);
    s->streaming = version >= 0xF0;
    bool dual = (version & 0x0F) == 5;
    /* one clock: wall until the summary says thread-cpu (the sizes of
     * headers and records do not depend on which) */
    s->wall = true;
    s->cpu = dual;
    s->fields = 1 + s->wall + s->cpu;
    s->search_left = 2 * (uint64_t)r->size + (16u << 20);
    s->layout = choose_framing(r, s);
    s->search_left = 2 * (uint64_t)r->size + (16u << 20);
    int rc = walk(r, s);
    if (rc != TC_OK)
        return rc;
    if (s->layout == L_A16)
        choose_layout(r, s);
    if (!dual && s->layout != L_PERFETTO && t->clock == TCI_CLOCK_THREAD_CPU)
        s->wall = false, s->cpu = true;
    uint64_t start = tci_le64(r->data + 6);
    t->time_unit_ns = time_unit(r, s, start);
    if (start > (uint64_t)INT64_MAX / (uint64_t)t->time_unit_ns)
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, 6, "start time %llu is not plausible",
                         (unsigned long long)start);
    t->start_ns = (int64_t)start * t->time_unit_ns;
    t->start_given = true;
    t->wrap_bits = s->layout == L_A15 ? 32 : 0;
    t->has_wall = s->wall;
    t->has_cpu = s->cpu;
    if (t->clock == TCI_CLOCK_UNKNOWN)
        t->clock = dual ? TCI_CLOCK_DUAL : s->cpu ? TCI_CLOCK_THREAD_CPU : TCI_CLOCK_WALL;
    /* The family's name, as V1's: a V2 trace converts exactly as its v3 twin (categories included) */
    t->reader = "art";
    static const char *const names[] = {"Android 16 layout", "Android 15 layout", "Perfetto's layout (ART.md 5.4)"};
    snprintf(t->detail, sizeof t->detail, "V2, %s, %s, %sstreaming (0x%X)", names[s->layout],
             t->time_unit_ns == 1 ? "ns" : "us", s->streaming ? "" : "non-", version);
    s->pos = HEADER_SIZE;
    return build_direct(r, s);
}

static int v2_rewind(tci_rctx *r)
{
    v2 *s = r->priv;
    s->pos = HEADER_SIZE;
    s->in_block = s->have_prev = false;
    s->wrap_i = 0;
    return TC_OK;
}

static void v2_close(tci_rctx *r)
{
    v2 *s = r->priv;
    if (s) {
        tci_idmap_free(&s->tids);
        free(s->direct);
        free(s->wraps);
    }
}

static int v2_probe(const uint8_t *buf, size_t len, const char *filename)
{
    (void)filename;
    if (len < 6 || tci_le32(buf) != ART_MAGIC)
        return 0;
    unsigned v = tci_le16(buf + 4);
    return v == 0xF4 || v == 0xF5 ? 100 : v == 4 || v == 5 ? 80 : 0;
}

const tci_reader tci_reader_art_v2 = {
    .name = "art-v2",
    .description = "Android ART method trace, format V2 (.trace: versions 4, 5, streaming 0xF4, 0xF5)",
    .extensions = "trace",
    .priv_size = sizeof(v2),
    .probe = v2_probe,
    .open = v2_open,
    .read = v2_read,
    .rewind = v2_rewind,
    .close = v2_close,
};
