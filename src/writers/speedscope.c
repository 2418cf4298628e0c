/*
 * speedscope.c - speedscope's own JSON format (shared/docs/outputs/SPEEDSCOPE.md
 * §7), which https://www.speedscope.app opens with each thread's timeline in
 * order: one "evented" profile per thread (O/C events on the wall clock, or on
 * the thread's CPU clock with weight=cpu), and a "sampled" profile for a
 * thread's sampled stacks.
 *
 * Layout: {"$schema", "exporter", "name", "activeProfileIndex" (0: the main
 * thread's first profile), "shared": {"frames"}, "profiles": one or two per
 * thread with shown events, in the views' order (analysis/tc_threadrank.h: the
 * thread named main, else tid = pid, else the busiest, first; then the others by
 * their time outside idle waits, so speedscope opens on main and lists the idle
 * daemons last)}.
 *
 * Regrouping. Events arrive per thread in time order, threads interleaved,
 * but each profile's events must be contiguous. So event() encodes each
 * event compactly into its thread's stream of a spool (spool.c: bounded
 * buffers spilled to an unlinked temporary file, ~4 bytes an event), and
 * finish() writes the file, replaying each stream in turn in one tight loop.
 * Memory grows with threads, methods and stack depth, never with events.
 * (Writing one thread's events as they come, straight into the output,
 * measured slower: which thread an event belongs to is a branch the CPU
 * cannot predict, in the middle of normalize's own work.)
 *
 * Spool records (the thread is the stream; dt is the time since the thread's
 * previous record, which never goes back). Most events are one 32-bit word:
 * bit 0 open (1) or close (0), bits 1-15 dt in µs, bits 16-31 the frame. A
 * fixed size, so the replay reads it without branching on its content (the
 * O/C pattern of a trace is too irregular to predict). Anything else - a
 * step that is not a whole number of µs below 32767, a frame above 65535, a
 * sample, a jump - is the word SS_ESCAPE (dt field all ones), then a varint
 * tag = dt << 2 | kind with dt in ns, then
 *   OPEN, CLOSE  varint frame
 *   SAMPLE       varint stack id, varint weight (ns)
 *   JUMP         varint dt: a time step too big for the tag (hostile input only)
 * The frame of a close is the frame normalize's exit names, which is the
 * innermost open one; the replay takes it from its own stack anyway, so the
 * nesting written is exact whatever the records say.
 *
 * Values. Every time is relative to the trace start (thread CPU: to the
 * thread's clock base), in microseconds for inputs with µs clocks (ART) and
 * nanoseconds otherwise (time_unit_ns), as integers: no exponent, no
 * fraction. A double holds every integer up to 2^53; if a value would pass
 * it (a hostile input's times), the whole file takes a coarser unit (ms, s;
 * times rounded down, which keeps their order).
 *
 * Frames. One per distinct entry: name = the short `pkg.Class.method`, or the
 * full `pkg.Class.method: (sig)ret` when another method of the trace has the
 * same short name and a different full one (overloads stay distinct
 * functions in the sandwich view), plus `file` and `line` when known; absent
 * members are omitted. Entries are compared as escaped JSON text, so two
 * methods that read the same are one frame and no two entries are equal.
 * Only the frames the profiles use are listed, in order of first use.
 *
 * Not shown: instants, counters and async slices (not call stacks), and with
 * weight=cpu the sampled stacks (a sample carries no thread-CPU time); each
 * is counted as writer-dropped-frames, an async slice once (its begin and its
 * end are one slice; an end that no begin opened counts alone). A sampled stack is shown under the
 * calls its thread had open (as folded and pprof count it), in a "sampled"
 * profile whose weights are the samples' durations, with explicit idle
 * samples ([]) for the gaps between them. Samples that weigh counts (perf's
 * cycles: a count profile, tc_calltree.h) make a sampled profile of unit
 * "none" named after the event ("main (tid 1) cycles:HG"), whose weights are
 * the counts, without gaps (a count is no time), from 0 to the thread's total
 * count; its slices stay in the thread's evented profile, on the clock.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_threadrank.h"
#include "tc_writer.h"

#include <stdlib.h>

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"

enum { SS_JUMP = 0, SS_OPEN = 1, SS_CLOSE = 2, SS_SAMPLE = 3 };
#define SS_ESCAPE 0xFFFEu                      /* a word whose dt field is all ones (open bit 0) */
#define SS_WORD_DT_MAX 0x7FFEu                 /* µs steps a word holds */
#define SS_REC_MAX 48u                         /* escape (4) + jump (11) + tag (10) + two varints (20) */
#define SS_TAG_DT_MAX (UINT64_MAX >> 2)        /* larger steps go in a JUMP record */
#define SS_VALUE_MAX (((int64_t)1 << 53) - 2) /* a double holds every integer up to 2^53 (one spare: rounding) */
#define SS_EVENT_MAX 80u                       /* bytes written for one event object (copies overrun its text) */
/* speedscope's importer recurses per level: in Chromium it throws "Maximum call stack size
 * exceeded" on a stack between 5500 and 6000 frames deep (tests/browser/test_speedscope_browser.py).
 * Deeper frames are dropped and counted, with a margin for smaller browser stacks. */
#define SS_MAX_DEPTH 2000u

/* Per thread, while events arrive. Times are ns of the profile's clock. */
typedef struct ss_thread {
    int64_t first, last;  /* its first and last shown event */
    int64_t first_sample; /* its first sample */
    int64_t sample_end;   /* where its sampled timeline ends: samples and idle gaps */
    uint64_t samples;
    bool calls;           /* it has enters: known for threads with samples only (finish) */
} ss_thread;

/* A thread with a shown event: its last time is set (TCI_NO_TIME is never an event's time). */
static inline bool seen(const ss_thread *th) { return th->last != TCI_NO_TIME; }

/* Per frame, the constant start of its events: `{"type":"O","frame":N,"at":`. Each event
 * ends with `},`; the array's last comma becomes its `]` (events_end), so no event needs a
 * test for being the first. */
typedef struct ss_slot {
    char text[47];
    uint8_t len;
} ss_slot;
#define SS_TYPE_AT 9 /* offset of the O in the text above */

/* A method's entry in shared.frames, as escaped JSON texts. */
typedef struct ss_entry {
    const char *name, *file; /* file NULL: unknown */
    size_t name_len, file_len;
    int32_t line;            /* <= 0: unknown */
} ss_entry;

/*
 * The times of one profile are formatted incrementally (an odometer): they
 * never go down and mostly step by a few units, so the next one is the
 * previous text with new last two digits (and now and then a carry), not a
 * full conversion. The digits are right-aligned at digits + 24 and copied
 * as 16 bytes (every value is below 2^53 < 10^16); the last two are written at
 * the output only.
 */
typedef struct ss_odo {
    uint64_t value; /* the number in digits; below 100: none (the next one is formatted in full) */
    uint32_t len;   /* its digits */
    uint32_t low;   /* value % 100 */
} ss_odo;

/* One evented profile being written: its open frames, its times' text. */
typedef struct ss_events {
    uint32_t *mem;  /* mem[0] is a sentinel below the stack, so its top can be read at depth 0 */
    uint32_t *open; /* mem + 1: frames, outermost first */
    uint32_t depth, cap;
    ss_odo od;
    uint8_t digits[48];
} ss_events;

/*
 * The same state in local variables while events are written: the output is
 * bytes, and a store through a byte pointer may alias anything, so fields
 * read from memory would be read again after every store into the output.
 */
typedef struct ss_cursor {
    uint32_t *open;
    uint32_t depth, cap;
    ss_odo od;
    uint8_t *digits;
} ss_cursor;

static inline ss_cursor cursor_load(ss_events *ev)
{
    return (ss_cursor){ev->open, ev->depth, ev->cap, ev->od, ev->digits};
}

static inline void cursor_store(ss_events *ev, const ss_cursor *c)
{
    ev->depth = c->depth;
    ev->od = c->od;
}

typedef struct speedscope_w {
    tci_arena arena;
    bool cpu;                /* weight=cpu: thread CPU clock */
    bool spool_ok;
    int64_t base;            /* subtracted from every time: the trace start (wall) or 0 (thread CPU) */
    int64_t div;             /* ns per unit */
    const char *unit;
    const char *count;       /* samples weigh counts of this ("cycles:HG"); NULL: time */
    int64_t count_div;       /* count profiles: IR ns per value written (TCI_COUNT_NS, x1000 past 2^53) */
    tci_spool spool;
    ss_thread *th;
    ss_entry *entry;         /* per method */
    uint32_t *same_entry;    /* per method: the first method with the same entry */
    uint32_t *frame_of;      /* per method: its frame, TCI_NONE until first shown */
    uint32_t *frame_method;  /* per frame: the method whose entry it is */
    ss_slot *slots;          /* per frame */
    uint32_t n_frames, cap_frame_method, cap_slots;
    uint8_t *stack_used;     /* per sampled stack: some sample has it (then every stack above it) */
    ss_events replay;        /* the profile being written */
    uint32_t *chain;         /* scratch: one sampled stack's frames, leaf first */
    uint32_t cap_chain;
    uint32_t n_profiles;
    uint64_t clamped, not_stacks, cpu_samples, stray_exits, too_deep;
    uint8_t *idle_method;    /* per method: an idle wait (tci_idle_methods) */
    tci_busy_thread *busy;   /* per thread: its open frames and idle waits, for the profiles' order */
    int64_t *framed, *idle;  /* per thread: time in frames, and in idle waits */
    tci_idmap async_balance; /* per async key: begins - ends so far, biased by ASYNC_EVEN */
    uint32_t async_uneven;   /* keys of async_balance whose balance is not even */
} speedscope_w;

/* ---- numbers ---------------------------------------------------------------- */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_table[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
    1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
    10000000000000000000ull};

/* Decimal digits of u (1 for 0): log2 to log10, then one comparison. */
static inline unsigned digit_count(uint64_t u)
{
    uint64_t v = u | 1; /* the same count for u >= 1 (powers of ten are even); 1 digit for 0 */
    unsigned t = ((unsigned)(64 - __builtin_clzll(v)) * 1233) >> 12;
    return t + (v >= pow10_table[t]);
}

/* u in decimal at p, forwards; returns the end. Two digits per division. */
static inline uint8_t *put_u64(uint8_t *p, uint64_t u)
{
    uint8_t *end = p + digit_count(u), *e = end;
    while (u >= 100) {
        unsigned k = (unsigned)(u % 100) * 2;
        u /= 100;
        e -= 2;
        e[0] = (uint8_t)digit_pairs[k];
        e[1] = (uint8_t)digit_pairs[k + 1];
    }
    if (u >= 10) {
        e[-2] = (uint8_t)digit_pairs[u * 2];
        e[-1] = (uint8_t)digit_pairs[u * 2 + 1];
    } else {
        e[-1] = (uint8_t)('0' + u);
    }
    return end;
}

static inline uint8_t *put_i64(uint8_t *p, int64_t v)
{
    if (TCI_UNLIKELY(v < 0)) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static void sink_i64(tci_sink *o, int64_t v)
{
    uint8_t tmp[24];
    tci_sink_write(o, tmp, (size_t)(put_i64(tmp, v) - tmp));
}

/* v in full at p; when 100 <= v < 10^16 (every value below 2^53) its digits are also kept
 * right-aligned at digits + 24, and the odometer takes over. Returns the length. */
static __attribute__((noinline)) size_t odometer_reset(uint8_t *p, uint8_t *digits, int64_t v)
{
    unsigned len = v < 0 ? 0 : digit_count((uint64_t)v);
    if (v < 100 || len > 16)
        return (size_t)(put_i64(p, v) - p);
    put_u64(digits + 24 - len, (uint64_t)v);
    memcpy(p, digits + 24 - len, 16);
    return len;
}

/* v (never below the previous value) in decimal at p (24 bytes of room); returns the end. */
static inline __attribute__((always_inline)) uint8_t *odometer_put(uint8_t *p, ss_cursor *c, int64_t v)
{
    uint64_t step = (uint64_t)v - c->od.value;
    if (TCI_UNLIKELY(step >= 100 || c->od.value < 100)) {
        size_t n = odometer_reset(p, c->digits, v);
        if (v >= 100 && n <= 16)
            c->od = (ss_odo){(uint64_t)v, (uint32_t)n, (uint32_t)((uint64_t)v % 100)};
        else
            c->od.value = 0;
        return p + n;
    }
    uint32_t low = c->od.low + (uint32_t)step, len = c->od.len;
    if (TCI_UNLIKELY(low >= 100)) { /* carry into the hundreds */
        low -= 100;
        uint32_t top = 24 - len, i = 21;
        while (i >= top && c->digits[i] == '9')
            c->digits[i--] = '0';
        if (i < top) {
            c->digits[i] = '1';
            len++;
        } else {
            c->digits[i]++;
        }
    }
    if (TCI_UNLIKELY(len > 16)) { /* a carry to 10^16 (beyond 2^53: not a value we write) */
        c->od.value = 0;
        return p + odometer_reset(p, c->digits, v);
    }
    c->od = (ss_odo){(uint64_t)v, len, low};
    memcpy(p, c->digits + 24 - len, 16);
    memcpy(p + len - 2, digit_pairs + low * 2, 2);
    return p + len;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Our own bytes, read back; a damaged temporary file must still not run off the chunk. */
static inline bool get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (TCI_LIKELY(p < end && *p < 0x80)) {
        *v = *p;
        *pp = p + 1;
        return true;
    }
    uint64_t x = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *v = x;
            return true;
        }
    }
    return false;
}

/* The start of an escaped record: the escape word, a jump if the step is too big for the tag, the tag. */
static uint8_t *put_escape(uint8_t *p, uint64_t dt, unsigned kind)
{
    uint32_t word = SS_ESCAPE;
    memcpy(p, &word, 4);
    p += 4;
    if (TCI_UNLIKELY(dt > SS_TAG_DT_MAX)) {
        p = put_varint(p, SS_JUMP);
        p = put_varint(p, dt);
        dt = 0;
    }
    return put_varint(p, dt << 2 | kind);
}

/* An open or a close that no word holds. Out of line: the common path keeps its registers. */
static __attribute__((noinline)) uint8_t *escaped_call(uint8_t *p, uint64_t dt, unsigned is_open, uint32_t f)
{
    return put_varint(put_escape(p, dt, is_open ? SS_OPEN : SS_CLOSE), f);
}

/* One spooled record, decoded. */
typedef struct ss_record {
    unsigned kind;     /* SS_OPEN, SS_CLOSE, SS_SAMPLE; SS_JUMP: only time passes */
    uint64_t dt;       /* ns */
    uint64_t frame;    /* OPEN, CLOSE */
    uint64_t stack, weight; /* SAMPLE */
} ss_record;

/* The record after an escape word (at *pp): false if the bytes are damaged. */
static bool read_escaped(const uint8_t **pp, const uint8_t *end, ss_record *r)
{
    uint64_t tag, jump = 0;
    if (!get_varint(pp, end, &tag))
        return false;
    /* a step too big for a tag comes first, then the record it leads to (its tag's dt 0) */
    if ((tag & 3) == SS_JUMP && (!get_varint(pp, end, &jump) || !get_varint(pp, end, &tag)))
        return false;
    r->kind = (unsigned)(tag & 3);
    r->dt = jump + (tag >> 2);
    switch (r->kind) {
    case SS_JUMP: return true; /* never written after a jump: nothing more to read */
    case SS_SAMPLE: return get_varint(pp, end, &r->stack) && get_varint(pp, end, &r->weight);
    default: return get_varint(pp, end, &r->frame);
    }
}

/* Any record at *pp (a word or an escaped record): false if the bytes are damaged. */
static bool read_record(const uint8_t **pp, const uint8_t *end, ss_record *r)
{
    uint32_t word;
    if (end - *pp < 4)
        return false;
    memcpy(&word, *pp, 4);
    *pp += 4;
    if ((word & 0xFFFF) == SS_ESCAPE || (word & 0xFFFF) == (SS_ESCAPE | 1))
        return read_escaped(pp, end, r);
    r->kind = word & 1 ? SS_OPEN : SS_CLOSE;
    r->dt = (uint64_t)((word >> 1) & 0x7FFF) * 1000;
    r->frame = word >> 16;
    return true;
}

/* a - b, saturated to the int64 range (times span it only in hostile inputs). */
static inline int64_t diff_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (TCI_LIKELY(!__builtin_sub_overflow(a, b, &r)))
        return r;
    return a > b ? INT64_MAX : INT64_MIN;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

/* ns -> units, rounded down (which keeps the order). Constant divisors compile to multiplications. */
static inline int64_t floor_div(int64_t ns, int64_t div)
{
    return ns >= 0 ? ns / div : -((-(ns + 1)) / div) - 1;
}

/* A time of the profile's clock as the value written: relative to the base, in units. */
static int64_t value_of(const speedscope_w *s, int64_t ns) { return floor_div(diff_sat(ns, s->base), s->div); }

/* ---- frames ----------------------------------------------------------------- */

static uint64_t text_hash(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static bool same_text(const char *a, size_t na, const char *b, size_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, na));
}

/* What methods are grouped by: a text (short names), or a whole entry. */
typedef struct ss_key {
    const char *text, *file;
    size_t text_len, file_len;
    int32_t line;
} ss_key;

static uint64_t key_hash(const ss_key *k, uint64_t seed)
{
    uint64_t h = text_hash(0xcbf29ce484222325ull ^ seed, k->text, k->text_len);
    h = text_hash(h ^ 0x1f, k->file ? k->file : "", k->file ? k->file_len : 0);
    return (h ^ (uint64_t)(uint32_t)k->line ^ (k->file ? 0x100000000ull : 0)) * 0x100000001b3ull;
}

static bool same_key(const ss_key *a, const ss_key *b)
{
    return same_text(a->text, a->text_len, b->text, b->text_len) && !a->file == !b->file &&
           (!a->file || same_text(a->file, a->file_len, b->file, b->file_len)) && a->line == b->line;
}

/* first[i] = the first index whose key equals keys[i]'s, for every i (a hash
 * collision of two different keys tries the next seed). */
static int group_keys(const ss_key *keys, uint32_t n, uint32_t *first)
{
    tci_idmap seen = {0};
    int rc = TC_OK;
    for (uint32_t i = 0; i < n && rc == TC_OK; i++) {
        for (uint64_t seed = 0;; seed++) {
            uint64_t h = key_hash(&keys[i], seed);
            uint32_t j = tci_idmap_get(&seen, h);
            if (j == TCI_NONE) {
                first[i] = i;
                rc = tci_idmap_put(&seen, h, i) != 0 ? TC_ERR_NOMEM : TC_OK;
                break;
            }
            if (same_key(&keys[i], &keys[j])) {
                first[i] = j;
                break;
            }
        }
    }
    tci_idmap_free(&seen);
    return rc;
}

/* Every method's entry (escaped), and which methods share one (same_entry). */
static int build_entries(speedscope_w *s, const tci_trace *t)
{
    uint32_t n = t->n_methods;
    ss_key *brief = tci_calloc(n, sizeof *brief), *key = tci_calloc(n, sizeof *key);
    char **full = tci_calloc(n, sizeof *full);
    size_t *full_len = tci_calloc(n, sizeof *full_len);
    uint32_t *leader = tci_calloc(n, sizeof *leader);
    uint8_t *ambiguous = tci_calloc(n, 1);
    s->entry = tci_calloc(n, sizeof *s->entry);
    s->same_entry = tci_calloc(n, sizeof *s->same_entry);
    s->frame_of = tci_malloc((n ? n : 1) * sizeof *s->frame_of);
    int rc = brief && key && full && full_len && leader && ambiguous && s->entry && s->same_entry && s->frame_of
                 ? TC_OK
                 : TC_ERR_NOMEM;
    for (uint32_t i = 0; i < n && rc == TC_OK; i++) {
        const tci_method *m = &t->methods[i];
        s->frame_of[i] = TCI_NONE;
        if (!(brief[i].text = tci_json_quote(&s->arena, m->short_name, &brief[i].text_len)) ||
            !(full[i] = tci_json_quote(&s->arena, m->full_name, &full_len[i])) ||
            (m->file && m->file[0] && !(s->entry[i].file = tci_json_quote(&s->arena, m->file, &s->entry[i].file_len))))
            rc = TC_ERR_NOMEM;
        s->entry[i].line = m->line > 0 ? m->line : 0;
    }
    /* overloads: a short name that two different full names share is shown in full */
    if (rc == TC_OK)
        rc = group_keys(brief, n, leader);
    for (uint32_t i = 0; i < n && rc == TC_OK; i++)
        if (leader[i] != i && !same_text(full[i], full_len[i], full[leader[i]], full_len[leader[i]]))
            ambiguous[leader[i]] = 1;
    for (uint32_t i = 0; i < n && rc == TC_OK; i++) {
        ss_entry *e = &s->entry[i];
        bool whole = ambiguous[leader[i]];
        e->name = whole ? full[i] : brief[i].text;
        e->name_len = whole ? full_len[i] : brief[i].text_len;
        key[i] = (ss_key){e->name, e->file, e->name_len, e->file_len, e->line};
    }
    if (rc == TC_OK)
        rc = group_keys(key, n, s->same_entry);
    free(brief);
    free(key);
    free(full);
    free(full_len);
    free(leader);
    free(ambiguous);
    return rc;
}

/* The frame of a method shown for the first time: its entry's, made now if new. */
static __attribute__((noinline)) uint32_t new_frame(speedscope_w *s, uint32_t method)
{
    uint32_t first = s->same_entry[method];
    if (s->frame_of[first] == TCI_NONE) {
        uint32_t f = s->n_frames;
        if (f == TCI_NONE - 1 ||
            tci_grow((void **)&s->frame_method, &s->cap_frame_method, f, sizeof *s->frame_method) != 0 ||
            tci_grow((void **)&s->slots, &s->cap_slots, f, sizeof *s->slots) != 0)
            return TCI_NONE;
        s->frame_method[f] = first;
        ss_slot *sl = &s->slots[f];
        uint8_t *p = (uint8_t *)sl->text;
        memcpy(p, "{\"type\":\"O\",\"frame\":", 20);
        p = put_u64(p + 20, f);
        memcpy(p, ",\"at\":", 6);
        sl->len = (uint8_t)(p + 6 - (uint8_t *)sl->text);
        s->frame_of[first] = f;
        s->n_frames++;
    }
    return s->frame_of[method] = s->frame_of[first];
}

static inline uint32_t frame_for(speedscope_w *s, uint32_t method)
{
    uint32_t f = s->frame_of[method];
    return TCI_LIKELY(f != TCI_NONE) ? f : new_frame(s, method);
}

static void write_frames(tci_sink *o, const speedscope_w *s)
{
    for (uint32_t i = 0; i < s->n_frames; i++) {
        const ss_entry *e = &s->entry[s->frame_method[i]];
        tci_sink_write(o, i ? ",{\"name\":" : "{\"name\":", i ? 9 : 8);
        tci_sink_write(o, e->name, e->name_len);
        if (e->file) {
            TCI_PUT_LIT(o, ",\"file\":");
            tci_sink_write(o, e->file, e->file_len);
        }
        if (e->line > 0) {
            TCI_PUT_LIT(o, ",\"line\":");
            sink_i64(o, e->line);
        }
        tci_sink_putc(o, '}');
    }
}

/* ---- profiles ------------------------------------------------------------------ */

/* A thread with samples has an evented profile too if it has calls (finish: has_calls). */
static bool has_evented(const ss_thread *th) { return seen(th) && (th->calls || !th->samples); }
static bool has_sampled(const ss_thread *th) { return seen(th) && th->samples; }

/* The profile name "<thread name> (tid N)[ samples]", escaped. */
static char *profile_name(speedscope_w *s, const tci_thread *th, const char *suffix, size_t *len)
{
    char *raw = tci_arena_printf(&s->arena, "%s (tid %llu)%s", th->name, (unsigned long long)th->tid, suffix);
    return raw ? tci_json_quote(&s->arena, raw, len) : NULL;
}

/* `{"type":"T","name":N,"unit":U` and the comma before it when it is not the first profile. */
static void profile_head(tci_wctx *w, const char *type, const char *name, size_t name_len, const char *unit)
{
    speedscope_w *s = w->priv;
    tci_sink *o = w->out;
    if (s->n_profiles++)
        TCI_PUT_LIT(o, ",\n");
    TCI_PUT_LIT(o, "{\"type\":\"");
    tci_sink_puts(o, type);
    TCI_PUT_LIT(o, "\",\"name\":");
    tci_sink_write(o, name, name_len);
    TCI_PUT_LIT(o, ",\"unit\":\"");
    tci_sink_puts(o, unit);
    tci_sink_putc(o, '"');
}

static void start_end(tci_sink *o, int64_t start, int64_t end)
{
    TCI_PUT_LIT(o, ",\"startValue\":");
    sink_i64(o, start);
    TCI_PUT_LIT(o, ",\"endValue\":");
    sink_i64(o, end);
}

/* Where a thread's evented profile ends: the trace end (wall), else its last event. */
static int64_t thread_end(const speedscope_w *s, const tci_trace *t, const ss_thread *th)
{
    return !s->cpu && t->end_ns > th->last ? t->end_ns : th->last;
}

/* One event object and its comma into the output buffer at p (SS_EVENT_MAX bytes of room). */
static inline __attribute__((always_inline)) uint8_t *put_event(uint8_t *p, const ss_slot *sl, unsigned is_open,
                                                                ss_cursor *c, int64_t at)
{
    memcpy(p, sl->text, 40); /* the longest text is 36 bytes: one fixed-size copy */
    p[SS_TYPE_AT] = (uint8_t)('C' + ('O' - 'C') * is_open);
    p = odometer_put(p + sl->len, c, at);
    memcpy(p, "},", 2);
    return p + 2;
}

/* Room for the stack to hold depth + 2 frames (a push, and the store made before a pop). */
static int stack_room(ss_events *ev)
{
    if (TCI_LIKELY(ev->depth + 2 < ev->cap))
        return TC_OK;
    uint32_t cap = ev->cap;
    if (tci_grow((void **)&ev->mem, &cap, ev->depth + 3, sizeof *ev->mem) != 0)
        return TC_ERR_NOMEM;
    ev->mem[0] = TCI_NONE;
    ev->open = ev->mem + 1;
    ev->cap = cap - 1;
    return TC_OK;
}

/*
 * An open (is_open 1, frame f) or a close (0) on the stack: the frame to
 * write, without a branch on which it is (f for an open, the top for a
 * close; the caller has checked that a close has a frame to close, and that
 * the stack has room: depth + 2 < cap).
 */
static inline uint32_t stack_step(ss_cursor *c, unsigned is_open, uint32_t f)
{
    uint32_t top = c->open[(int32_t)c->depth - 1];
    c->open[c->depth] = f; /* a push; overwritten later if this is a close */
    c->depth = c->depth + 2 * is_open - 1;
    return is_open ? f : top;
}

/* Room on the cursor's stack (it is the stack of ev): TC_OK or TC_ERR_NOMEM. */
static inline int cursor_room(ss_events *ev, ss_cursor *c)
{
    if (TCI_LIKELY(c->depth + 2 < c->cap))
        return TC_OK;
    ev->depth = c->depth;
    if (stack_room(ev) != TC_OK)
        return TC_ERR_NOMEM;
    c->open = ev->open;
    c->cap = ev->cap;
    return TC_OK;
}

static int events_reset(ss_events *ev)
{
    ev->depth = 0;
    ev->od.value = 0;
    return stack_room(ev);
}

/* The end of an evented profile: frames left open closed at its end (normalize
 * closes every frame, so this is a guard), then its start and end values. */
static int events_end(tci_wctx *w, uint32_t thread, ss_events *ev)
{
    speedscope_w *s = w->priv;
    const ss_thread *th = &s->th[thread];
    tci_sink *o = w->out;
    int64_t end = value_of(s, thread_end(s, w->trace, th));
    if (TCI_UNLIKELY(ev->depth))
        tci_warn(w->diag, TCI_FIG_OPEN_AT_END, "speedscope", UINT64_MAX, "thread %llu: %u frames left open; closed at the end",
                 (unsigned long long)w->trace->threads[thread].tid, ev->depth);
    ss_cursor c = cursor_load(ev);
    while (c.depth) {
        uint8_t tmp[SS_EVENT_MAX];
        tci_sink_write(o, tmp, (size_t)(put_event(tmp, &s->slots[c.open[--c.depth]], 0, &c, end) - tmp));
    }
    cursor_store(ev, &c);
    /* the last byte written is the last event's comma, or the '[' of an empty array (an
     * event is always written after a flush, so that byte is still in the buffer) */
    if (o->len && o->buf[o->len - 1] == ',')
        o->buf[o->len - 1] = ']';
    else
        tci_sink_putc(o, ']');
    start_end(o, value_of(s, th->first), end);
    tci_sink_putc(o, '}');
    return o->err ? TC_ERR_IO : TC_OK;
}

/* ---- begin, events ---------------------------------------------------------- */

static int speedscope_begin(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    s->cpu = w->opt->weight_cpu;
    s->count = tci_trace_count_name(t);
    if (s->cpu && !t->has_cpu)
        return tci_error(w->diag, TC_ERR_UNSUPPORTED, "speedscope", UINT64_MAX,
                         "the input has no thread-CPU clock (clock=%s); use --weight wall", tci_clock_name(t->clock));
    s->base = s->cpu ? 0 : t->start_ns;
    s->th = tci_calloc(t->n_threads, sizeof *s->th);
    s->stack_used = tci_calloc(t->n_stacks, 1);
    s->idle_method = tci_idle_methods(t);
    s->busy = tci_calloc(t->n_threads ? t->n_threads : 1, sizeof *s->busy);
    s->framed = tci_calloc(t->n_threads ? 2 * (size_t)t->n_threads : 1, sizeof *s->framed);
    if (!s->th || !s->stack_used || !s->idle_method || !s->busy || !s->framed)
        return TC_ERR_NOMEM;
    s->idle = s->framed + t->n_threads;
    for (uint32_t i = 0; i < t->n_threads; i++)
        s->th[i].last = TCI_NO_TIME;
    int rc = build_entries(s, t);
    if (rc != TC_OK)
        return rc;
    uint64_t active = 0;
    for (uint32_t i = 0; i < t->n_threads; i++)
        active += t->threads[i].records != 0;
    if ((rc = tci_spool_init(&s->spool, t->n_threads, active, "speedscope", w->diag)) != TC_OK)
        return rc;
    s->spool_ok = true;
    return TC_OK;
}

/* A sample's weight in ns, as the call tree reads it (calltree.c): 0 = nothing to show. */
static int64_t sample_weight(double value)
{
    int64_t wt = value > 0 && value < 9.0e18 ? (int64_t)value : 0;
    return wt > TCI_SUM_MAX ? TCI_SUM_MAX : wt;
}


/* The thread's first event, a thread-CPU time missing (it stands still), or a time going back (clamped). */
static __attribute__((noinline)) int64_t unusual_time(speedscope_w *s, ss_thread *t, int64_t now)
{
    if (now == TCI_NO_TIME)
        now = t->last == TCI_NO_TIME ? 0 : t->last;
    if (t->last == TCI_NO_TIME)
        t->first = t->last = now;
    else if (now < t->last) {
        s->clamped++;
        now = t->last;
    }
    return now;
}

/* The event's time on the profile's clock (never before the thread's previous one); *dt the step. */
static inline int64_t event_time(speedscope_w *s, ss_thread *t, const tci_event *ev, uint64_t *dt)
{
    int64_t now = s->cpu ? ev->cpu_ns : ev->ts_ns, before = t->last;
    if (TCI_UNLIKELY(now < before || before == TCI_NO_TIME)) { /* also a missing time (TCI_NO_TIME is the least) */
        now = unusual_time(s, t, now);
        before = t->last;
    }
    t->last = now;
    *dt = (uint64_t)now - (uint64_t)before;
    return now;
}

/* An async slice is keyed by (process, name, cookie), as every timeline writer scopes it;
 * the key is hashed into 64 bits (a collision could only miscount what was left out). */
static uint64_t async_key(const tci_trace *t, const tci_event *ev)
{
    uint64_t k = ((uint64_t)t->threads[ev->thread].process << 32 | ev->method) * 0x9E3779B97F4A7C15ull;
    k ^= ev->id + 0x632BE59BD9B4E019ull + (k << 6) + (k >> 2);
    k = (k ^ (k >> 30)) * 0xBF58476D1CE4E5B9ull; /* splitmix64's finalizer */
    k = (k ^ (k >> 27)) * 0x94D049BB133111EBull;
    return k ^ (k >> 31);
}

#define ASYNC_EVEN 0x80000000u    /* a key's balance 0 (an absent key's) */
#define ASYNC_KEYS_MAX (1u << 18)  /* keys kept (about 6 MB); past it a new key's events count alone */
#define ASYNC_KEYS_RESET 4096u     /* a table this large with every key even is dropped */

/* Count what an instant, counter or async event leaves out: one each, except that an
 * async slice (a begin and an end of one key) is one thing left out. Events come in
 * each thread's order, so an end may come before its begin (another thread's): per key
 * the count is max(begins, ends), kept as the balance begins - ends, which counts an
 * event only when it takes the balance further from 0. Memory: the keys with a slice
 * open, not every key seen (when none is open the table starts again), and at most
 * ASYNC_KEYS_MAX of them (then a hostile input's new keys count each event alone). */
static int count_not_stack(speedscope_w *s, const tci_trace *t, const tci_event *ev)
{
    if (ev->kind != TCI_EV_ASYNC_BEGIN && ev->kind != TCI_EV_ASYNC_END) {
        s->not_stacks++;
        return TC_OK;
    }
    uint64_t key = async_key(t, ev);
    uint32_t balance = tci_idmap_get(&s->async_balance, key);
    if (balance == TCI_NONE) {
        if (s->async_balance.count >= ASYNC_KEYS_MAX) {
            s->not_stacks++;
            return TC_OK;
        }
        balance = ASYNC_EVEN;
    }
    uint32_t was = balance;
    if (ev->kind == TCI_EV_ASYNC_BEGIN) {
        if (balance == TCI_NONE - 1)
            return TC_OK; /* 2^31 - 1 more begins than ends: saturated, counted no further */
        s->not_stacks += ++balance > ASYNC_EVEN;
    } else {
        if (balance == 0)
            return TC_OK;
        s->not_stacks += --balance < ASYNC_EVEN;
    }
    if (was == ASYNC_EVEN)
        s->async_uneven++;
    else if (balance == ASYNC_EVEN)
        s->async_uneven--;
    if (s->async_uneven == 0 && s->async_balance.count >= ASYNC_KEYS_RESET) {
        tci_idmap_free(&s->async_balance); /* every key even: as if none were kept */
        return TC_OK;
    }
    return tci_idmap_put(&s->async_balance, key, balance) != 0 ? TC_ERR_NOMEM : TC_OK;
}

/* An event that is not an enter or an exit: a sample with a weight is spooled (with
 * weight=cpu it has no time to show); the others are not call stacks. Both are counted. */
static __attribute__((noinline)) int other_event(tci_wctx *w, const tci_event *ev)
{
    speedscope_w *s = w->priv;
    ss_thread *t = &s->th[ev->thread];
    int64_t weight = 0;
    if (ev->kind != TCI_EV_SAMPLE)
        return count_not_stack(s, w->trace, ev);
    if (s->cpu) {
        s->cpu_samples++;
        return TC_OK;
    }
    if (!(weight = sample_weight(ev->value)))
        return TC_OK; /* no time: nothing to show (folded shows nothing either) */
    uint64_t dt;
    int64_t now = event_time(s, t, ev, &dt);
    uint8_t *p = tci_spool_room(&s->spool, ev->thread, SS_REC_MAX);
    if (TCI_UNLIKELY(!p))
        return s->spool.status;
    p = put_escape(p, dt, SS_SAMPLE);
    p = put_varint(p, ev->id);
    p = put_varint(p, (uint64_t)weight);
    s->stack_used[ev->id] = 1;
    if (!t->samples++)
        t->first_sample = t->sample_end = s->count ? 0 : now;
    /* the sampled timeline: an idle gap up to this sample, then its weight; counts: the weights */
    t->sample_end = add_sat(now > t->sample_end && !s->count ? now : t->sample_end, weight);
    tci_spool_wrote(&s->spool, ev->thread, p);
    return TC_OK;
}

/* An event, encoded into its thread's stream of the spool. */
static int speedscope_event(tci_wctx *w, const tci_event *ev)
{
    if (TCI_UNLIKELY(ev->kind != TCI_EV_ENTER && ev->kind != TCI_EV_EXIT))
        return other_event(w, ev);
    speedscope_w *s = w->priv;
    if (TCI_UNLIKELY(ev->depth >= SS_MAX_DEPTH)) { /* its enter and its exit both */
        s->too_deep += ev->kind == TCI_EV_ENTER;
        return TC_OK;
    }
    ss_thread *t = &s->th[ev->thread];
    unsigned is_open = ev->kind == TCI_EV_ENTER;
    uint64_t dt;
    tci_busy_event(&s->busy[ev->thread], s->idle_method, ev, &s->framed[ev->thread], &s->idle[ev->thread]);
    (void)event_time(s, t, ev, &dt);
    uint32_t f = frame_for(s, ev->method);
    uint8_t *p = tci_spool_room(&s->spool, ev->thread, SS_REC_MAX);
    if (TCI_UNLIKELY(!p || f == TCI_NONE))
        return p ? TC_ERR_NOMEM : s->spool.status;
    uint64_t us = dt / 1000;
    if (TCI_LIKELY(us * 1000 == dt && us <= SS_WORD_DT_MAX && f <= 0xFFFF)) {
        uint32_t word = is_open | (uint32_t)us << 1 | f << 16;
        memcpy(p, &word, 4);
        tci_spool_wrote(&s->spool, ev->thread, p + 4);
    } else {
        tci_spool_wrote(&s->spool, ev->thread, escaped_call(p, dt, is_open, f));
    }
    return TC_OK;
}

/* ---- replaying the spool ------------------------------------------------------- */

static int damaged(tci_wctx *w)
{
    return tci_error(w->diag, TC_ERR_IO, "speedscope", UINT64_MAX, "the temporary file of the per-thread spool is damaged");
}

/*
 * The events of one spooled thread, straight into the sink's buffer. div is
 * a constant in each caller (replay_events), so the division to units is a
 * multiplication, and with µs or ns units a word's µs step just adds to the
 * time's value. A word is decoded without branching on open or close.
 */
static inline __attribute__((always_inline)) int replay_events_div(tci_wctx *w, uint32_t thread, int64_t div)
{
    speedscope_w *s = w->priv;
    tci_sink *o = w->out;
    ss_events *ev = &s->replay;
    ss_cursor c = cursor_load(ev);
    const ss_slot *slots = s->slots;
    uint32_t n_frames = s->n_frames;
    tci_spool_cursor sc;
    tci_spool_rewind(&sc, thread);
    int64_t now = s->th[thread].first, base = s->base;
    int64_t at = floor_div(diff_sat(now, base), div); /* now in units */
    uint8_t *p = o->buf + o->len, *limit = o->buf + sizeof o->buf - SS_EVENT_MAX;
    const uint8_t *in, *end;
    size_t n;
    int rc = 0; /* stays 0 when the output failed before the first chunk */
    while (!tci_sink_failed(o) && (rc = tci_spool_next(&s->spool, &sc, &in, &n)) == 1) {
        for (end = in + n; in < end;) {
            uint32_t word;
            unsigned is_open;
            uint64_t f;
            if (TCI_UNLIKELY(end - in < 4))
                return damaged(w);
            memcpy(&word, in, 4);
            if (TCI_LIKELY((word & SS_ESCAPE) != SS_ESCAPE)) {
                in += 4;
                uint64_t us = (word >> 1) & 0x7FFF;
                is_open = word & 1;
                f = word >> 16;
                now = (int64_t)((uint64_t)now + us * 1000);
                if (div == 1000 || div == 1) /* exact: floor((x + k div) / div) = floor(x / div) + k */
                    at = (int64_t)((uint64_t)at + us * (uint64_t)(1000 / div));
                else
                    at = floor_div(diff_sat(now, base), div);
            } else {
                ss_record r;
                in += 4;
                if (TCI_UNLIKELY(!read_escaped(&in, end, &r)))
                    return damaged(w);
                now = (int64_t)((uint64_t)now + r.dt);
                at = floor_div(diff_sat(now, base), div);
                if (r.kind != SS_OPEN && r.kind != SS_CLOSE)
                    continue; /* a jump, or a sample (shown in the sampled profile) */
                is_open = r.kind == SS_OPEN;
                f = r.frame;
            }
            if (TCI_UNLIKELY(f >= n_frames))
                return damaged(w);
            /* a close with nothing open (normalize never makes one: its exits close the innermost
             * open frame) is dropped, so the nesting stays exact; tested without a branch on
             * is_open (the pattern of opens and closes is unpredictable) */
            if (TCI_UNLIKELY((c.depth | is_open) == 0)) {
                s->stray_exits++;
                continue;
            }
            if (TCI_UNLIKELY(cursor_room(ev, &c) != TC_OK))
                return TC_ERR_NOMEM;
            if (TCI_UNLIKELY(p > limit)) {
                o->len = (size_t)(p - o->buf);
                if (tci_sink_flush_buf(o) != 0)
                    return TC_ERR_IO;
                p = o->buf + o->len;
            }
            uint32_t shown = stack_step(&c, is_open, (uint32_t)f);
            p = put_event(p, &slots[shown], is_open, &c, at);
        }
    }
    o->len = (size_t)(p - o->buf);
    cursor_store(ev, &c);
    return rc < 0 ? rc : TC_OK;
}

static int replay_events(tci_wctx *w, uint32_t thread)
{
    switch (((speedscope_w *)w->priv)->div) {
    case 1: return replay_events_div(w, thread, 1);
    case 1000: return replay_events_div(w, thread, 1000);
    case 1000000: return replay_events_div(w, thread, 1000000);
    default: return replay_events_div(w, thread, 1000000000);
    }
}

static int write_evented(tci_wctx *w, uint32_t thread)
{
    speedscope_w *s = w->priv;
    size_t len;
    char *name = profile_name(s, &w->trace->threads[thread], "", &len);
    if (!name)
        return TC_ERR_NOMEM;
    profile_head(w, "evented", name, len, s->unit);
    TCI_PUT_LIT(w->out, ",\"events\":[");
    int rc = events_reset(&s->replay);
    if (rc == TC_OK)
        rc = replay_events(w, thread);
    return rc != TC_OK ? rc : events_end(w, thread, &s->replay);
}

/* Rounds a sampled timeline cumulatively: its weights add up to its rounded length. */
typedef struct ss_rounding {
    int64_t cum_ns, emitted;
} ss_rounding;

static int64_t round_step(ss_rounding *r, int64_t ns, int64_t div)
{
    r->cum_ns = add_sat(r->cum_ns, ns);
    int64_t total = div == 1 ? r->cum_ns : r->cum_ns / div + (r->cum_ns % div >= (div + 1) / 2);
    int64_t step = total - r->emitted;
    r->emitted = total;
    return step;
}

/* One sample of a sampled profile: its stack (open calls, then the sampled
 * frames, root first; stack TCI_NONE: idle), or its weight. */
static int put_sample(tci_wctx *w, bool weights, bool *first, uint32_t stack, int64_t weight)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    if (!*first)
        tci_sink_putc(o, ',');
    *first = false;
    if (weights) {
        sink_i64(o, weight);
        return TC_OK;
    }
    uint32_t depth = stack == TCI_NONE ? 0 : s->replay.depth, n = 0;
    for (uint32_t id = stack; id != TCI_NONE && id < t->n_stacks && n < t->n_stacks; id = t->stacks[id].parent) {
        if (tci_grow((void **)&s->chain, &s->cap_chain, n, sizeof *s->chain) != 0)
            return TC_ERR_NOMEM;
        s->chain[n++] = s->frame_of[t->stacks[id].method];
    }
    if (depth + n > SS_MAX_DEPTH) { /* the outermost frames are kept (counted in the stacks' pass only) */
        s->too_deep += weights ? 0 : depth + n - SS_MAX_DEPTH;
        depth = depth < SS_MAX_DEPTH ? depth : SS_MAX_DEPTH;
        uint32_t keep = SS_MAX_DEPTH - depth;
        memmove(s->chain, s->chain + (n - keep), keep * sizeof *s->chain);
        n = keep;
    }
    tci_sink_putc(o, '[');
    for (uint32_t i = 0; i < depth; i++) {
        if (i)
            tci_sink_putc(o, ',');
        sink_i64(o, s->replay.open[i]);
    }
    for (uint32_t i = n; i-- > 0;) {
        if (depth || i + 1 < n)
            tci_sink_putc(o, ',');
        sink_i64(o, s->chain[i]);
    }
    tci_sink_putc(o, ']');
    return TC_OK;
}

/* One pass over a thread's stream writing its samples' stacks, or their weights. */
static int replay_samples(tci_wctx *w, uint32_t thread, bool weights)
{
    speedscope_w *s = w->priv;
    const ss_thread *th = &s->th[thread];
    tci_spool_cursor c;
    tci_spool_rewind(&c, thread);
    int64_t now = th->first, pos = th->first_sample;
    ss_rounding rounding = {0, 0};
    bool first = true;
    const uint8_t *in, *end;
    size_t n;
    int rc = events_reset(&s->replay);
    if (rc != TC_OK)
        return rc;
    while (!tci_sink_failed(w->out) && (rc = tci_spool_next(&s->spool, &c, &in, &n)) == 1) {
        for (end = in + n; in < end;) {
            ss_record r;
            if (!read_record(&in, end, &r))
                return damaged(w);
            now = (int64_t)((uint64_t)now + r.dt);
            if (r.kind == SS_OPEN || r.kind == SS_CLOSE) {
                if (r.frame >= s->n_frames)
                    return damaged(w);
                if (r.kind == SS_CLOSE && !s->replay.depth)
                    continue; /* counted by the evented pass */
                if (stack_room(&s->replay) != TC_OK)
                    return TC_ERR_NOMEM;
                ss_cursor c = cursor_load(&s->replay);
                stack_step(&c, r.kind == SS_OPEN, (uint32_t)r.frame);
                cursor_store(&s->replay, &c);
                continue;
            }
            if (r.kind != SS_SAMPLE)
                continue;
            if (r.stack >= w->trace->n_stacks)
                return damaged(w);
            int64_t gap = now > pos && !s->count ? diff_sat(now, pos) : 0, step; /* counts: no time between */
            pos = add_sat(pos, gap);
            if (gap && (step = round_step(&rounding, gap, s->div)) > 0 &&
                (rc = put_sample(w, weights, &first, TCI_NONE, step)) != TC_OK) /* idle: [] */
                return rc;
            pos = add_sat(pos, (int64_t)r.weight);
            if ((step = round_step(&rounding, (int64_t)r.weight, s->count ? s->count_div : s->div)) > 0 &&
                (rc = put_sample(w, weights, &first, (uint32_t)r.stack, step)) != TC_OK)
                return rc;
        }
    }
    return rc < 0 ? rc : w->out->err ? TC_ERR_IO : TC_OK;
}

static int write_sampled(tci_wctx *w, uint32_t thread)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    const ss_thread *th = &s->th[thread];
    size_t len;
    ss_rounding r = {0, 0};
    if (s->count) { /* "main (tid 1) cycles:HG": counts from 0 to the thread's total */
        char *what = s->count_div == TCI_COUNT_NS
                         ? tci_arena_printf(&s->arena, " %s", s->count)
                         : tci_arena_printf(&s->arena, " %s / %lld", s->count, (long long)(s->count_div / TCI_COUNT_NS));
        char *name = what ? profile_name(s, &t->threads[thread], what, &len) : NULL;
        if (!name)
            return TC_ERR_NOMEM;
        profile_head(w, "sampled", name, len, "none");
        start_end(w->out, 0, round_step(&r, th->sample_end, s->count_div));
    } else {
        char *name = profile_name(s, &t->threads[thread], th->calls ? " samples" : "", &len);
        if (!name)
            return TC_ERR_NOMEM;
        int64_t start = value_of(s, th->first_sample);
        int64_t length = round_step(&r, diff_sat(th->sample_end, th->first_sample), s->div);
        int64_t end = value_of(s, thread_end(s, t, th));
        if (add_sat(start, length) > end) /* overlapping samples make a timeline longer than the trace */
            end = add_sat(start, length);
        profile_head(w, "sampled", name, len, s->unit);
        start_end(w->out, start, end);
    }
    TCI_PUT_LIT(w->out, ",\"samples\":[");
    int rc = replay_samples(w, thread, false);
    TCI_PUT_LIT(w->out, "],\"weights\":[");
    if (rc == TC_OK)
        rc = replay_samples(w, thread, true);
    TCI_PUT_LIT(w->out, "]}");
    return rc;
}

/* A thread's spooled profiles: evented, sampled, or both. */
static int write_spooled(tci_wctx *w, uint32_t thread)
{
    const ss_thread *th = &((speedscope_w *)w->priv)->th[thread];
    int rc = has_evented(th) ? write_evented(w, thread) : TC_OK;
    return rc == TC_OK && has_sampled(th) ? write_sampled(w, thread) : rc;
}

/* ---- finish ----------------------------------------------------------------- */

/* Every value the file will hold, in ns from the base: the finest unit
 * (the input clock's, µs or ns) that keeps them all within 2^53. */
static void choose_unit(speedscope_w *s, const tci_trace *t)
{
    static const struct {
        int64_t div;
        const char *name;
    } units[] = {{1, "nanoseconds"}, {1000, "microseconds"}, {1000000, "milliseconds"}, {1000000000, "seconds"}};
    uint64_t most = 0, most_count = 0;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        const ss_thread *th = &s->th[i];
        if (!seen(th))
            continue;
        uint64_t m[] = {magnitude(diff_sat(th->first, s->base)), magnitude(diff_sat(thread_end(s, t, th), s->base)),
                        th->samples && !s->count ? magnitude(diff_sat(th->sample_end, s->base)) : 0};
        for (size_t k = 0; k < sizeof m / sizeof *m; k++)
            most = m[k] > most ? m[k] : most;
        if (th->samples && s->count && (uint64_t)th->sample_end > most_count)
            most_count = (uint64_t)th->sample_end;
    }
    /* counts: written as they are, or (a hostile input's totals past 2^53) in thousands, and so on */
    s->count_div = TCI_COUNT_NS;
    while (most_count / (uint64_t)s->count_div > (uint64_t)SS_VALUE_MAX && s->count_div <= INT64_MAX / 1000)
        s->count_div *= 1000;
    size_t u = t->time_unit_ns > 0 && t->time_unit_ns % 1000 == 0 ? 1 : 0;
    while (u + 1 < sizeof units / sizeof *units && most / (uint64_t)units[u].div > (uint64_t)SS_VALUE_MAX)
        u++;
    s->div = units[u].div;
    s->unit = units[u].name;
}

static void report_drops(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    if (s->clamped)
        tci_warn(w->diag, TCI_FIG_TIME_BACKWARDS, "speedscope", UINT64_MAX,
                 "%llu event times went back within a thread; clamped to the thread's previous time",
                 (unsigned long long)s->clamped);
    tci_writer_dropped(w, s->not_stacks, "instants, counters and async slices not shown (not call stacks)");
    tci_writer_dropped(w, s->cpu_samples, "sampled stacks not shown with weight=cpu (samples carry no thread-CPU time)");
    tci_writer_dropped(w, s->stray_exits, "exits without an open frame dropped");
    tci_writer_dropped(w, s->too_deep, "frames deeper than 2000 levels dropped (speedscope's importer overflows "
                                       "the browser's stack near 6000)");
}

/* Every method of a used sampled stack gets its frame. A stack's parent was
 * interned before it (tci_trace_stack), so one backward sweep reaches every
 * ancestor; a parent out of that order is walked to its end. */
static int sampled_frames(speedscope_w *s, const tci_trace *t)
{
    for (uint32_t i = t->n_stacks; i-- > 0;) {
        if (!s->stack_used[i])
            continue;
        if (frame_for(s, t->stacks[i].method) == TCI_NONE)
            return TC_ERR_NOMEM;
        uint32_t parent = t->stacks[i].parent;
        if (parent < i) {
            s->stack_used[parent] = 1;
            continue;
        }
        for (uint32_t p = parent, steps = 0; p < t->n_stacks && steps < t->n_stacks; p = t->stacks[p].parent, steps++)
            if (frame_for(s, t->stacks[p].method) == TCI_NONE)
                return TC_ERR_NOMEM;
    }
    return TC_OK;
}

/* Which threads with samples have calls too (their stream holds an open): only those
 * need the answer, and only they pay the scan; the event path keeps no such flag. */
static int find_calls(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    for (uint32_t i = 0; i < w->trace->n_threads; i++) {
        ss_thread *th = &s->th[i];
        if (!th->samples)
            continue;
        tci_spool_cursor c;
        tci_spool_rewind(&c, i);
        const uint8_t *in, *end;
        size_t n;
        int rc = 0; /* read only after the loop ran (gcc -O1 cannot tell) */
        while (!th->calls && (rc = tci_spool_next(&s->spool, &c, &in, &n)) == 1) {
            for (end = in + n; in < end && !th->calls;) {
                ss_record r;
                if (!read_record(&in, end, &r))
                    return damaged(w);
                th->calls = r.kind == SS_OPEN;
            }
        }
        if (!th->calls && rc < 0)
            return rc;
    }
    return TC_OK;
}

/* The views' order of the threads (main first), from each thread's time outside idle waits
 * as its events showed it. NULL: no memory. */
static uint32_t *profile_order(speedscope_w *s, const tci_trace *t)
{
    uint32_t *order = tci_malloc((t->n_threads ? t->n_threads : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (uint32_t i = 0; i < t->n_threads; i++) /* framed becomes the busy time */
        s->framed[i] = s->framed[i] > s->idle[i] ? s->framed[i] - s->idle[i] : 0;
    tci_thread_rank(t, s->framed, order);
    return order;
}

/* A trace without a call stack still opens: one empty profile, the process's. */
static void write_empty_profile(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    char *raw = tci_arena_printf(&s->arena, "%s (no call stacks)", t->process_name ? t->process_name : "trace");
    size_t len = 0;
    char *name = raw ? tci_json_quote(&s->arena, raw, &len) : NULL;
    profile_head(w, "evented", name ? name : "\"trace\"", name ? len : 7, s->unit);
    TCI_PUT_LIT(w->out, ",\"events\":[]");
    start_end(w->out, 0, s->cpu ? 0 : value_of(s, t->end_ns));
    tci_sink_putc(w->out, '}');
}

/* The document's name, speedscope's title: the input, and the selection it was made with
 * ("app.trace (thread main, since 1.2s)"). */
static void put_document_name(tci_wctx *w, tci_sink *o)
{
    const char *input = w->trace->input_name ? w->trace->input_name : "-";
    char sel[TCI_SELECTION_TEXT_MAX], name[TCI_SELECTION_TEXT_MAX + 512];
    if (tci_selection_text(w->opt, tci_writer_speedscope.options, sel, sizeof sel) &&
        (size_t)snprintf(name, sizeof name, "%s (%s)", input, sel) < sizeof name)
        tci_sink_json_string(o, name);
    else
        tci_sink_json_string(o, input);
}

static int speedscope_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    if (s->spool.status != TC_OK)
        return s->spool.status;
    int rc = sampled_frames(s, t);
    if (rc == TC_OK)
        rc = find_calls(w);
    if (rc != TC_OK)
        return rc;
    choose_unit(s, t);
    TCI_PUT_LIT(o, "{\"$schema\":\"" SS_SCHEMA "\",\"exporter\":\"traceconv@" TC_VERSION_STRING "\",\"name\":");
    put_document_name(w, o);
    uint32_t *order = profile_order(s, t);
    if (!order)
        return TC_ERR_NOMEM;
    TCI_PUT_LIT(o, ",\"activeProfileIndex\":0"); /* the first profile: main's */
    TCI_PUT_LIT(o, ",\n\"shared\":{\"frames\":[");
    write_frames(o, s);
    TCI_PUT_LIT(o, "]},\n\"profiles\":[");
    for (uint32_t k = 0; k < t->n_threads && rc == TC_OK && !tci_sink_failed(o); k++)
        rc = write_spooled(w, order[k]);
    free(order);
    if (rc != TC_OK)
        return rc;
    if (!s->n_profiles)
        write_empty_profile(w);
    TCI_PUT_LIT(o, "]}\n");
    report_drops(w);
    return o->err ? TC_ERR_IO : TC_OK;
}

static void speedscope_close(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    if (!s)
        return;
    if (s->spool_ok)
        tci_spool_free(&s->spool);
    free(s->th);
    free(s->idle_method);
    free(s->busy);
    free(s->framed);
    free(s->entry);
    free(s->same_entry);
    free(s->frame_of);
    free(s->frame_method);
    free(s->slots);
    free(s->stack_used);
    free(s->replay.mem);
    free(s->chain);
    tci_idmap_free(&s->async_balance);
    tci_arena_free(&s->arena);
}

const tci_writer tci_writer_speedscope = {
    .name = "speedscope",
    .description = "speedscope JSON (speedscope.app): a timeline per thread",
    .extensions = "speedscope.json",
    .options = (const tci_option_def[]){TCI_OPTION_WEIGHT("timelines on the wall or each thread's CPU clock"), {0}},
    .variants = (const tci_variant[]){{.name = "speedscope", .extension = "speedscope.json",
                                       .mime = "application/json", .mark = "\"exporter\":\"traceconv@"},
                                      {0}},
    .priv_size = sizeof(speedscope_w),
    .begin = speedscope_begin,
    .event = speedscope_event,
    .finish = speedscope_finish,
    .close = speedscope_close,
};
