/*
 * speedscope.c - speedscope's own JSON format (shared/docs/outputs/SPEEDSCOPE.md
 * §7), which https://www.speedscope.app opens with each thread's timeline in
 * order: one "evented" profile per thread (O/C events, wall clock, or thread
 * CPU with weight=cpu), a "sampled" profile for a thread's sampled stacks.
 *
 * Regrouping. Events arrive per thread in time order, threads interleaved,
 * but each profile's events must be contiguous in the file. So event()
 * encodes each shown event compactly into its thread's stream of a spool
 * (spool.c: bounded buffers spilled to an unlinked temporary file) and
 * finish() writes the whole file, replaying each thread's stream in turn.
 * Memory grows with threads, methods and stack depth, never with events.
 *
 * Spool record (the thread is the stream): varint tag = dt << 2 | kind, dt
 * the ns since the thread's previous record (times are clamped so that they
 * never go back), then
 *   OPEN   varint method
 *   CLOSE  nothing: it closes the innermost open frame (a replay stack)
 *   SAMPLE varint stack id, varint weight (ns)
 *   JUMP   varint dt: a time step too big for the tag (hostile input only)
 *
 * Values. Every time is relative to the trace start (thread CPU: to the
 * thread's clock base), in microseconds for inputs with µs clocks (ART) and
 * nanoseconds otherwise (time_unit_ns), as integers: no exponent, no
 * fraction. Only if a value would pass 2^53 (a double's exact integers: a
 * hostile input's times) does the unit grow (ms, s); a coarser unit rounds
 * times down, which keeps them in order.
 *
 * Frames. One per distinct method text: name = the short `pkg.Class.method`,
 * or the full `pkg.Class.method: (sig)ret` when another method shown under
 * the same short name differs (overloads stay distinct functions in the
 * sandwich view), plus `file` and `line` when known; absent members are
 * omitted. Entries are de-duplicated on their escaped JSON text, so two
 * methods that read the same become one frame and no two entries are equal.
 * Only the methods the profiles use are listed.
 *
 * Not shown: instants, counters and async slices (not call stacks), and with
 * weight=cpu the sampled stacks (a sample carries no thread-CPU time); each
 * is counted as writer-dropped-frames. A sampled stack is shown under the
 * calls its thread had open (as folded and pprof count it), in a "sampled"
 * profile whose weights are the samples' durations with explicit idle
 * samples ([]) for the gaps between them.
 */
#include "tc_internal.h"

#include <stdlib.h>

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"

enum { SS_JUMP = 0, SS_OPEN = 1, SS_CLOSE = 2, SS_SAMPLE = 3 };
#define SS_REC_MAX 48u                  /* jump (11) + tag (10) + two varints (20), rounded up */
#define SS_TAG_DT_MAX (UINT64_MAX >> 2) /* larger steps go in a JUMP record */
#define SS_EXACT_MAX ((int64_t)1 << 53) /* doubles hold every integer below this */
#define SS_EVENT_MAX 80u                /* bytes of one event object, a comma and a sign included */

/* Per thread, while events arrive. Times are ns of the profile's clock. */
typedef struct ss_thread {
    int64_t first, last;        /* its first and last shown event */
    int64_t first_sample;       /* its first sample */
    int64_t sample_end;         /* where its sampled timeline ends: samples and idle gaps */
    uint64_t calls, samples;
    uint32_t depth;             /* frames open */
    bool seen;
    uint32_t profile;           /* index of its first profile (finish) */
} ss_thread;

/* Per frame, the constant start of its events: `,{"type":"O","frame":N,"at":`. */
typedef struct ss_slot {
    char text[47];
    uint8_t len;
} ss_slot;
#define SS_TYPE_AT 10 /* offset of the O in the text above */

/* A frame's entry in shared.frames: escaped JSON texts. */
typedef struct ss_frame {
    const char *name, *file; /* file NULL: unknown */
    size_t name_len, file_len;
    int32_t line;            /* <= 0: unknown */
} ss_frame;

typedef struct speedscope_w {
    tci_arena arena;
    bool cpu;                /* weight=cpu: thread CPU clock */
    bool spool_ok;
    tci_spool spool;
    ss_thread *th;
    uint8_t *method_used;    /* per method: some profile shows it */
    uint8_t *stack_used;     /* per sampled stack: some sample has it (then every stack above it) */
    uint32_t *frame_of;      /* per method: its frame (TCI_NONE: not shown) */
    ss_frame *frames;
    uint32_t n_frames, cap_frames;
    ss_slot *slots;          /* per frame */
    uint32_t *open;          /* replay: frames open, outermost first */
    uint32_t cap_open;
    uint32_t *chain;         /* scratch: one sampled stack's frames, leaf first */
    uint32_t cap_chain;
    uint64_t clamped, not_stacks, cpu_samples, stray_exits;
    int64_t base;            /* subtracted from every time: the trace start (wall) or 0 (thread CPU) */
    int64_t div;             /* ns per unit */
    const char *unit;
} speedscope_w;

/* ---- numbers ---------------------------------------------------------------- */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_table[20] = {1ull,
                                         10ull,
                                         100ull,
                                         1000ull,
                                         10000ull,
                                         100000ull,
                                         1000000ull,
                                         10000000ull,
                                         100000000ull,
                                         1000000000ull,
                                         10000000000ull,
                                         100000000000ull,
                                         1000000000000ull,
                                         10000000000000ull,
                                         100000000000000ull,
                                         1000000000000000ull,
                                         10000000000000000ull,
                                         100000000000000000ull,
                                         1000000000000000000ull,
                                         10000000000000000000ull};

/* Decimal digits of u (1 for 0): log2 to log10, then one comparison. */
static inline unsigned digit_count(uint64_t u)
{
    uint64_t v = u | 1; /* same count for u >= 1 (powers of ten are even); 1 digit for 0 */
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

/* a - b, saturated to the int64 range (times span it only in hostile inputs). */
static int64_t diff_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r))
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

/* ns -> units, rounded down (so that order is kept); div is a constant in each replay. */
static inline __attribute__((always_inline)) int64_t to_unit(int64_t ns, int64_t div)
{
    if (div == 1)
        return ns;
    return ns >= 0 ? ns / div : -((-(ns + 1)) / div) - 1;
}

static inline uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

/* ---- begin, events ---------------------------------------------------------- */

static int speedscope_begin(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    s->cpu = w->opt->weight_cpu;
    if (s->cpu && !t->has_cpu)
        return tci_error(w->diag, TC_ERR_UNSUPPORTED, "speedscope", UINT64_MAX,
                         "the input has no thread-CPU clock (clock=%s); use --weight wall", tci_clock_name(t->clock));
    s->base = s->cpu ? 0 : t->start_ns;
    s->th = tci_calloc(t->n_threads, sizeof *s->th);
    s->method_used = tci_calloc(t->n_methods, 1);
    s->stack_used = tci_calloc(t->n_stacks, 1);
    if (!s->th || !s->method_used || !s->stack_used)
        return TC_ERR_NOMEM;
    uint64_t active = 0;
    for (uint32_t i = 0; i < t->n_threads; i++)
        active += t->threads[i].records != 0;
    int rc = tci_spool_init(&s->spool, t->n_threads, active, "speedscope", w->diag);
    s->spool_ok = true;
    return rc;
}

/* A sample's weight in ns, as the call tree reads it (calltree.c): 0 = nothing to show. */
static int64_t sample_weight(double value)
{
    int64_t wt = value > 0 && value < 9.0e18 ? (int64_t)value : 0;
    return wt > TCI_SUM_MAX ? TCI_SUM_MAX : wt;
}

/* The event's time on the profile's clock, clamped so that the thread's time never goes back. */
static inline int64_t event_time(speedscope_w *s, ss_thread *t, const tci_event *ev)
{
    int64_t now = s->cpu ? ev->cpu_ns : ev->ts_ns;
    if (TCI_UNLIKELY(now == TCI_NO_TIME)) /* thread CPU on some events only: it stands still */
        now = t->seen ? t->last : 0;
    if (TCI_UNLIKELY(!t->seen)) {
        t->seen = true;
        t->first = t->last = now;
    } else if (TCI_UNLIKELY(now < t->last)) {
        s->clamped++;
        now = t->last;
    }
    return now;
}

static int speedscope_event(tci_wctx *w, const tci_event *ev)
{
    speedscope_w *s = w->priv;
    ss_thread *t = &s->th[ev->thread];
    unsigned kind;
    int64_t weight = 0;
    switch (ev->kind) {
    case TCI_EV_ENTER: kind = SS_OPEN; break;
    case TCI_EV_EXIT:
        if (TCI_UNLIKELY(!t->depth)) { /* normalize never does this: keep the nesting exact anyway */
            s->stray_exits++;
            return TC_OK;
        }
        kind = SS_CLOSE;
        break;
    case TCI_EV_SAMPLE:
        if (s->cpu) {
            s->cpu_samples++;
            return TC_OK;
        }
        if (!(weight = sample_weight(ev->value)))
            return TC_OK; /* no time: nothing to show (folded shows nothing either) */
        kind = SS_SAMPLE;
        break;
    default:
        s->not_stacks++;
        return TC_OK;
    }
    int64_t now = event_time(s, t, ev);
    uint64_t dt = (uint64_t)now - (uint64_t)t->last;
    t->last = now;
    uint8_t *p = tci_spool_room(&s->spool, ev->thread, SS_REC_MAX);
    if (TCI_UNLIKELY(!p))
        return s->spool.status;
    if (TCI_UNLIKELY(dt > SS_TAG_DT_MAX)) {
        p = put_varint(p, SS_JUMP);
        p = put_varint(p, dt);
        dt = 0;
    }
    p = put_varint(p, dt << 2 | kind);
    if (kind == SS_OPEN) {
        p = put_varint(p, ev->method);
        s->method_used[ev->method] = 1;
        t->depth++;
        t->calls++;
    } else if (kind == SS_CLOSE) {
        t->depth--;
    } else {
        p = put_varint(p, ev->id);
        p = put_varint(p, (uint64_t)weight);
        s->stack_used[ev->id] = 1;
        if (!t->samples++)
            t->first_sample = t->sample_end = now;
        /* the sampled timeline: an idle gap up to this sample, then its weight */
        t->sample_end = add_sat(now > t->sample_end ? now : t->sample_end, weight);
    }
    tci_spool_wrote(&s->spool, ev->thread, p);
    return TC_OK;
}

/* ---- frames ----------------------------------------------------------------- */

static uint64_t text_hash(const char *s, size_t n, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* Every method of a used sampled stack is used. A stack's parent was
 * interned before it (tci_trace_stack), so one backward sweep reaches every
 * ancestor; a parent out of that order is walked to its end. */
static void mark_stack_methods(speedscope_w *s, const tci_trace *t)
{
    for (uint32_t i = t->n_stacks; i-- > 0;) {
        if (!s->stack_used[i])
            continue;
        s->method_used[t->stacks[i].method] = 1;
        uint32_t parent = t->stacks[i].parent;
        if (parent == TCI_NONE)
            continue;
        if (parent < i) {
            s->stack_used[parent] = 1;
            continue;
        }
        for (uint32_t p = parent, steps = 0; p != TCI_NONE && p < t->n_stacks && steps < t->n_stacks;
             p = t->stacks[p].parent, steps++)
            s->method_used[t->stacks[p].method] = 1;
    }
}

typedef struct quoted {
    char *text;
    size_t len;
} quoted;

static bool same_text(const char *a, size_t na, const char *b, size_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, na));
}

/* The first index (in order) whose text equals texts[i]'s, through a hash
 * map keyed by the text's hash (a collision of two texts tries the next seed). */
static int intern_text(tci_idmap *seen, const quoted *texts, uint32_t i, uint32_t *first)
{
    for (uint64_t seed = 0;; seed++) {
        uint64_t h = text_hash(texts[i].text, texts[i].len, seed);
        uint32_t j = tci_idmap_get(seen, h);
        if (j == TCI_NONE) {
            *first = i;
            return tci_idmap_put(seen, h, i) != 0 ? TC_ERR_NOMEM : TC_OK;
        }
        if (same_text(texts[j].text, texts[j].len, texts[i].text, texts[i].len)) {
            *first = j;
            return TC_OK;
        }
    }
}

/* Each used method's displayed name: its short name, or its full name when
 * another used method has the same short name but a different full one. */
static int display_names(speedscope_w *s, const tci_trace *t, quoted *shown)
{
    uint32_t n = t->n_methods;
    quoted *brief = tci_calloc(n, sizeof *brief), *full = tci_calloc(n, sizeof *full);
    uint32_t *leader = tci_calloc(n, sizeof *leader);
    uint8_t *ambiguous = tci_calloc(n, 1);
    tci_idmap seen = {0};
    int rc = brief && full && leader && ambiguous ? TC_OK : TC_ERR_NOMEM;
    for (uint32_t i = 0; i < n && rc == TC_OK; i++) {
        if (!s->method_used[i])
            continue;
        const tci_method *m = &t->methods[i];
        if (!(brief[i].text = tci_json_quote(&s->arena, m->short_name, &brief[i].len)) ||
            !(full[i].text = tci_json_quote(&s->arena, m->full_name, &full[i].len)))
            rc = TC_ERR_NOMEM;
        else if ((rc = intern_text(&seen, brief, i, &leader[i])) == TC_OK && leader[i] != i &&
                 !same_text(full[i].text, full[i].len, full[leader[i]].text, full[leader[i]].len))
            ambiguous[leader[i]] = 1;
    }
    for (uint32_t i = 0; i < n && rc == TC_OK; i++)
        if (s->method_used[i])
            shown[i] = ambiguous[leader[i]] ? full[i] : brief[i];
    tci_idmap_free(&seen);
    free(brief);
    free(full);
    free(leader);
    free(ambiguous);
    return rc;
}

/* One frame per distinct (name, file, line) among the used methods, in method order. */
static int build_frames(speedscope_w *s, const tci_trace *t)
{
    uint32_t n = t->n_methods;
    mark_stack_methods(s, t);
    quoted *shown = tci_calloc(n, sizeof *shown), *key = tci_calloc(n, sizeof *key);
    s->frame_of = tci_malloc((n ? n : 1) * sizeof *s->frame_of);
    tci_idmap seen = {0};
    int rc = shown && key && s->frame_of ? display_names(s, t, shown) : TC_ERR_NOMEM;
    for (uint32_t i = 0; i < n && rc == TC_OK; i++) {
        s->frame_of[i] = TCI_NONE;
        if (!s->method_used[i])
            continue;
        const tci_method *m = &t->methods[i];
        ss_frame f = {shown[i].text, NULL, shown[i].len, 0, m->line > 0 ? m->line : 0};
        if (m->file && m->file[0] && !(f.file = tci_json_quote(&s->arena, m->file, &f.file_len))) {
            rc = TC_ERR_NOMEM;
            break;
        }
        /* the frame's identity: its exact entry text */
        char *k = tci_arena_printf(&s->arena, "%.*s\x01%.*s\x01%d", (int)f.name_len, f.name,
                                   f.file ? (int)f.file_len : 0, f.file ? f.file : "", (int)f.line);
        if (!k) {
            rc = TC_ERR_NOMEM;
            break;
        }
        key[i] = (quoted){k, strlen(k)};
        uint32_t first;
        if ((rc = intern_text(&seen, key, i, &first)) != TC_OK)
            break;
        if (first != i) {
            s->frame_of[i] = s->frame_of[first];
            continue;
        }
        if (tci_grow((void **)&s->frames, &s->cap_frames, s->n_frames, sizeof *s->frames) != 0) {
            rc = TC_ERR_NOMEM;
            break;
        }
        s->frame_of[i] = s->n_frames;
        s->frames[s->n_frames++] = f;
    }
    tci_idmap_free(&seen);
    free(shown);
    free(key);
    if (rc != TC_OK)
        return rc;
    if (!(s->slots = tci_calloc(s->n_frames, sizeof *s->slots)))
        return TC_ERR_NOMEM;
    for (uint32_t f = 0; f < s->n_frames; f++) {
        ss_slot *sl = &s->slots[f];
        uint8_t *p = (uint8_t *)sl->text;
        memcpy(p, ",{\"type\":\"O\",\"frame\":", 21);
        p = put_u64(p + 21, f);
        memcpy(p, ",\"at\":", 6);
        sl->len = (uint8_t)(p + 6 - (uint8_t *)sl->text);
    }
    return TC_OK;
}

static void write_frames(tci_sink *o, const speedscope_w *s)
{
    for (uint32_t i = 0; i < s->n_frames; i++) {
        const ss_frame *f = &s->frames[i];
        tci_sink_write(o, i ? ",{\"name\":" : "{\"name\":", i ? 9 : 8);
        tci_sink_write(o, f->name, f->name_len);
        if (f->file) {
            TCI_PUT_LIT(o, ",\"file\":");
            tci_sink_write(o, f->file, f->file_len);
        }
        if (f->line > 0) {
            TCI_PUT_LIT(o, ",\"line\":");
            sink_i64(o, f->line);
        }
        tci_sink_putc(o, '}');
    }
}

/* ---- units and profiles ------------------------------------------------------ */

/* A time of the profile's clock relative to the base, in ns (saturated). */
static int64_t rel(const speedscope_w *s, int64_t t) { return diff_sat(t, s->base); }

/* Where a thread's evented profile ends: the trace end (wall), else its last event. */
static int64_t thread_end(const speedscope_w *s, const tci_trace *t, const ss_thread *th)
{
    return !s->cpu && t->end_ns > th->last ? t->end_ns : th->last;
}

/* Every value the file will hold, in ns: the finest unit that keeps them all below 2^53. */
static void choose_unit(speedscope_w *s, const tci_trace *t)
{
    uint64_t most = s->cpu ? 0 : magnitude(rel(s, t->end_ns));
    for (uint32_t i = 0; i < t->n_threads; i++) {
        const ss_thread *th = &s->th[i];
        if (!th->seen)
            continue;
        uint64_t m[] = {magnitude(rel(s, th->first)), magnitude(rel(s, thread_end(s, t, th))),
                        th->samples ? magnitude(rel(s, th->sample_end)) : 0};
        for (size_t k = 0; k < sizeof m / sizeof *m; k++)
            most = m[k] > most ? m[k] : most;
    }
    static const struct { int64_t div; const char *name; } units[] = {
        {1, "nanoseconds"}, {1000, "microseconds"}, {1000000, "milliseconds"}, {1000000000, "seconds"}};
    size_t u = t->time_unit_ns > 0 && t->time_unit_ns % 1000 == 0 ? 1 : 0;
    /* one more unit of margin: the rounding of sampled weights may add one */
    while (u + 1 < sizeof units / sizeof *units && most / (uint64_t)units[u].div >= (uint64_t)SS_EXACT_MAX - 1)
        u++;
    s->div = units[u].div;
    s->unit = units[u].name;
}

/* The thread whose profile is shown first: the process's main thread (tid = pid), else one named main. */
static uint32_t main_thread(const speedscope_w *s, const tci_trace *t)
{
    for (uint32_t i = 0; i < t->n_threads; i++)
        if (s->th[i].seen && t->threads[i].process == 0 && (int64_t)t->threads[i].tid == t->processes[0].pid)
            return i;
    for (uint32_t i = 0; i < t->n_threads; i++)
        if (s->th[i].seen && !strcmp(t->threads[i].name, "main"))
            return i;
    return TCI_NONE;
}

static bool has_evented(const ss_thread *th) { return th->seen && (th->calls || !th->samples); }
static bool has_sampled(const ss_thread *th) { return th->seen && th->samples; }

static void write_profile_head(tci_sink *o, const speedscope_w *s, const char *type, const char *name, size_t name_len,
                               int64_t start, int64_t end)
{
    tci_sink_puts(o, type);
    TCI_PUT_LIT(o, "\",\"name\":");
    tci_sink_write(o, name, name_len);
    TCI_PUT_LIT(o, ",\"unit\":\"");
    tci_sink_puts(o, s->unit);
    TCI_PUT_LIT(o, "\",\"startValue\":");
    sink_i64(o, start);
    TCI_PUT_LIT(o, ",\"endValue\":");
    sink_i64(o, end);
}

/* The profile name "<thread name> (tid N)[ samples]", escaped. */
static char *profile_name(speedscope_w *s, const tci_thread *th, const char *suffix, size_t *len)
{
    char *raw = tci_arena_printf(&s->arena, "%s (tid %llu)%s", th->name, (unsigned long long)th->tid, suffix);
    return raw ? tci_json_quote(&s->arena, raw, len) : NULL;
}

static inline int push_open(speedscope_w *s, uint32_t *depth, uint32_t frame)
{
    if (TCI_UNLIKELY(*depth >= s->cap_open) && tci_grow((void **)&s->open, &s->cap_open, *depth, sizeof *s->open) != 0)
        return TC_ERR_NOMEM;
    s->open[(*depth)++] = frame;
    return TC_OK;
}

static int damaged(tci_wctx *w)
{
    return tci_error(w->diag, TC_ERR_IO, "speedscope", UINT64_MAX, "the temporary file of the per-thread spool is damaged");
}

/* One event object into the sink's buffer at p (room for SS_EVENT_MAX bytes). */
static inline uint8_t *put_event(uint8_t *p, const ss_slot *sl, uint8_t type, size_t skip, int64_t at)
{
    memcpy(p, sl->text + skip, 40); /* the longest text is 37 bytes: one fixed-size copy */
    p[SS_TYPE_AT - skip] = type;
    p = put_i64(p + sl->len - skip, at);
    *p++ = '}';
    return p;
}

/*
 * The events of one thread's evented profile, straight into the sink's
 * buffer. div is a constant in each caller (replay_evented), so the division
 * to units compiles to a multiplication.
 */
static inline __attribute__((always_inline)) int replay_events(tci_wctx *w, uint32_t thread, int64_t div)
{
    speedscope_w *s = w->priv;
    tci_sink *o = w->out;
    const ss_thread *th = &s->th[thread];
    tci_spool_cursor c;
    tci_spool_rewind(&c, thread);
    int64_t now = th->first, base = s->base;
    uint32_t depth = 0;
    size_t skip = 1; /* the first event has no comma before it */
    uint8_t *p = o->buf + o->len, *limit = o->buf + sizeof o->buf - SS_EVENT_MAX;
    const uint8_t *in, *end;
    size_t n;
    int rc;
    while ((rc = tci_spool_next(&s->spool, &c, &in, &n)) == 1) {
        for (end = in + n; in < end;) {
            uint64_t tag, v;
            if (TCI_UNLIKELY(!get_varint(&in, end, &tag)))
                return damaged(w);
            now = (int64_t)((uint64_t)now + (tag >> 2));
            if (TCI_UNLIKELY(p > limit)) {
                o->len = (size_t)(p - o->buf);
                if (tci_sink_flush_buf(o) != 0)
                    return TC_ERR_IO;
                p = o->buf + o->len;
            }
            switch (tag & 3) {
            case SS_OPEN: {
                if (TCI_UNLIKELY(!get_varint(&in, end, &v) || v >= w->trace->n_methods ||
                                 s->frame_of[v] == TCI_NONE))
                    return damaged(w);
                uint32_t f = s->frame_of[v];
                if (TCI_UNLIKELY(push_open(s, &depth, f) != TC_OK))
                    return TC_ERR_NOMEM;
                p = put_event(p, &s->slots[f], 'O', skip, to_unit(diff_sat(now, base), div));
                skip = 0;
                break;
            }
            case SS_CLOSE:
                if (TCI_UNLIKELY(!depth))
                    return damaged(w);
                p = put_event(p, &s->slots[s->open[--depth]], 'C', skip, to_unit(diff_sat(now, base), div));
                skip = 0;
                break;
            case SS_SAMPLE: /* shown in the sampled profile */
                if (TCI_UNLIKELY(!get_varint(&in, end, &v) || !get_varint(&in, end, &v)))
                    return damaged(w);
                break;
            default: /* SS_JUMP */
                if (TCI_UNLIKELY(!get_varint(&in, end, &v)))
                    return damaged(w);
                now = (int64_t)((uint64_t)now + v);
            }
        }
    }
    o->len = (size_t)(p - o->buf);
    if (rc < 0)
        return rc;
    if (TCI_UNLIKELY(depth)) { /* normalize closes every frame; if one were left, close it at the end */
        tci_warn(w->diag, TCI_FIG_OPEN_AT_END, "speedscope", UINT64_MAX,
                 "thread %llu: %u frames left open; closed at the end", (unsigned long long)w->trace->threads[thread].tid,
                 depth);
        int64_t at = to_unit(rel(s, thread_end(s, w->trace, th)), div);
        while (depth) {
            uint8_t tmp[SS_EVENT_MAX];
            tci_sink_write(o, tmp, (size_t)(put_event(tmp, &s->slots[s->open[--depth]], 'C', skip, at) - tmp));
            skip = 0;
        }
    }
    return o->err ? TC_ERR_IO : TC_OK;
}

static int replay_evented(tci_wctx *w, uint32_t thread)
{
    switch (((speedscope_w *)w->priv)->div) {
    case 1: return replay_events(w, thread, 1);
    case 1000: return replay_events(w, thread, 1000);
    case 1000000: return replay_events(w, thread, 1000000);
    default: return replay_events(w, thread, 1000000000);
    }
}

static int write_evented(tci_wctx *w, uint32_t thread)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    const ss_thread *th = &s->th[thread];
    size_t len;
    char *name = profile_name(s, &t->threads[thread], "", &len);
    if (!name)
        return TC_ERR_NOMEM;
    write_profile_head(w->out, s, "{\"type\":\"evented", name, len, to_unit(rel(s, th->first), s->div),
                       to_unit(rel(s, thread_end(s, t, th)), s->div));
    TCI_PUT_LIT(w->out, ",\"events\":[");
    int rc = replay_evented(w, thread);
    TCI_PUT_LIT(w->out, "]}");
    return rc;
}

/* ---- sampled profiles ---------------------------------------------------------- */

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
 * frames, root first), or its weight. Stacks use the writer's scratch. */
static int put_sample(tci_wctx *w, bool weights, bool *first, uint32_t depth, uint32_t stack, int64_t weight)
{
    speedscope_w *s = w->priv;
    tci_sink *o = w->out;
    if (!*first)
        tci_sink_putc(o, ',');
    *first = false;
    if (weights) {
        sink_i64(o, weight);
        return TC_OK;
    }
    tci_sink_putc(o, '[');
    for (uint32_t i = 0; i < depth; i++) {
        if (i)
            tci_sink_putc(o, ',');
        sink_i64(o, s->open[i]);
    }
    uint32_t n = 0;
    const tci_trace *t = w->trace;
    for (uint32_t id = stack; id != TCI_NONE && id < t->n_stacks && n < t->n_stacks; id = t->stacks[id].parent) {
        if (tci_grow((void **)&s->chain, &s->cap_chain, n, sizeof *s->chain) != 0)
            return TC_ERR_NOMEM;
        s->chain[n++] = s->frame_of[t->stacks[id].method];
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
    ss_rounding r = {0, 0};
    uint32_t depth = 0;
    bool first = true;
    const uint8_t *in, *end;
    size_t n;
    int rc;
    while ((rc = tci_spool_next(&s->spool, &c, &in, &n)) == 1) {
        for (end = in + n; in < end;) {
            uint64_t tag, v, stack, ns;
            if (!get_varint(&in, end, &tag))
                return damaged(w);
            now = (int64_t)((uint64_t)now + (tag >> 2));
            switch (tag & 3) {
            case SS_OPEN:
                if (!get_varint(&in, end, &v) || v >= w->trace->n_methods || s->frame_of[v] == TCI_NONE)
                    return damaged(w);
                if (push_open(s, &depth, s->frame_of[v]) != TC_OK)
                    return TC_ERR_NOMEM;
                break;
            case SS_CLOSE:
                if (!depth)
                    return damaged(w);
                depth--;
                break;
            case SS_SAMPLE: {
                if (!get_varint(&in, end, &stack) || !get_varint(&in, end, &ns) || stack >= w->trace->n_stacks)
                    return damaged(w);
                int64_t gap = now > pos ? diff_sat(now, pos) : 0, step;
                pos = add_sat(pos, gap);
                if (gap && (step = round_step(&r, gap, s->div)) > 0 &&
                    (rc = put_sample(w, weights, &first, 0, TCI_NONE, step)) != TC_OK) /* idle: [] */
                    return rc;
                pos = add_sat(pos, (int64_t)ns);
                if ((step = round_step(&r, (int64_t)ns, s->div)) > 0 &&
                    (rc = put_sample(w, weights, &first, depth, (uint32_t)stack, step)) != TC_OK)
                    return rc;
                break;
            }
            default:
                if (!get_varint(&in, end, &v))
                    return damaged(w);
                now = (int64_t)((uint64_t)now + v);
            }
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
    char *name = profile_name(s, &t->threads[thread], th->calls ? " samples" : "", &len);
    if (!name)
        return TC_ERR_NOMEM;
    int64_t start = to_unit(rel(s, th->first_sample), s->div);
    ss_rounding r = {0, 0};
    int64_t length = round_step(&r, diff_sat(th->sample_end, th->first_sample), s->div);
    int64_t end = to_unit(rel(s, thread_end(s, t, th)), s->div);
    if (add_sat(start, length) > end) /* overlapping samples make a timeline longer than the trace */
        end = add_sat(start, length);
    write_profile_head(w->out, s, "{\"type\":\"sampled", name, len, start, end);
    TCI_PUT_LIT(w->out, ",\"samples\":[");
    int rc = replay_samples(w, thread, false);
    TCI_PUT_LIT(w->out, "],\"weights\":[");
    if (rc == TC_OK)
        rc = replay_samples(w, thread, true);
    TCI_PUT_LIT(w->out, "]}");
    return rc;
}

/* ---- finish ----------------------------------------------------------------- */

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
}

/* Profile indexes in thread order; the index of the main thread's first one. */
static uint32_t number_profiles(speedscope_w *s, const tci_trace *t, uint32_t *count)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        s->th[i].profile = n;
        n += has_evented(&s->th[i]) + has_sampled(&s->th[i]);
    }
    *count = n;
    uint32_t m = main_thread(s, t);
    return m != TCI_NONE ? s->th[m].profile : 0;
}

/* A trace without a call stack still opens: one empty profile, the process's. */
static void write_empty_profile(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    char *raw = tci_arena_printf(&s->arena, "%s (no call stacks)", t->process_name ? t->process_name : "trace");
    size_t len = 0;
    char *name = raw ? tci_json_quote(&s->arena, raw, &len) : NULL;
    write_profile_head(w->out, s, "{\"type\":\"evented", name ? name : "\"trace\"", name ? len : 7, 0,
                       s->cpu ? 0 : to_unit(rel(s, t->end_ns), s->div));
    TCI_PUT_LIT(w->out, ",\"events\":[]}");
}

static int speedscope_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    speedscope_w *s = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    if (s->spool.status != TC_OK)
        return s->spool.status;
    report_drops(w);
    int rc = build_frames(s, t);
    if (rc != TC_OK)
        return rc;
    choose_unit(s, t);
    uint32_t n_profiles;
    uint32_t active = number_profiles(s, t, &n_profiles);
    TCI_PUT_LIT(o, "{\"$schema\":\"" SS_SCHEMA "\",\"exporter\":\"traceconv@" TC_VERSION_STRING "\",\"name\":");
    tci_sink_json_string(o, t->input_name ? t->input_name : "-");
    TCI_PUT_LIT(o, ",\"activeProfileIndex\":");
    sink_i64(o, active);
    TCI_PUT_LIT(o, ",\n\"shared\":{\"frames\":[");
    write_frames(o, s);
    TCI_PUT_LIT(o, "]},\n\"profiles\":[");
    if (!n_profiles)
        write_empty_profile(w);
    for (uint32_t i = 0, written = 0; i < t->n_threads && rc == TC_OK; i++) {
        if (has_evented(&s->th[i])) {
            if (written++)
                TCI_PUT_LIT(o, ",\n");
            rc = write_evented(w, i);
        }
        if (rc == TC_OK && has_sampled(&s->th[i])) {
            if (written++)
                TCI_PUT_LIT(o, ",\n");
            rc = write_sampled(w, i);
        }
    }
    TCI_PUT_LIT(o, "]}\n");
    return rc != TC_OK ? rc : o->err ? TC_ERR_IO : TC_OK;
}

static void speedscope_close(tci_wctx *w)
{
    speedscope_w *s = w->priv;
    if (!s)
        return;
    if (s->spool_ok)
        tci_spool_free(&s->spool);
    free(s->th);
    free(s->method_used);
    free(s->stack_used);
    free(s->frame_of);
    free(s->frames);
    free(s->slots);
    free(s->open);
    free(s->chain);
    tci_arena_free(&s->arena);
}

const tci_writer tci_writer_speedscope = {
    .name = "speedscope",
    .description = "speedscope JSON (speedscope.app): a timeline per thread",
    .extensions = "speedscope.json",
    .options = "weight",
    .priv_size = sizeof(speedscope_w),
    .begin = speedscope_begin,
    .event = speedscope_event,
    .finish = speedscope_finish,
    .close = speedscope_close,
};
