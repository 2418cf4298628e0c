/*
 * json.c - Chrome Trace Event Format input (shared/docs/outputs/CHROME_JSON.md),
 * so that any Chrome trace reaches pprof, folded, Perfetto and systrace.
 *
 * Object form {"traceEvents":[...]} or a bare array; phases B/E, X, i/I, C,
 * b/e, M (process_name, thread_name). Streamed: a validating scanner
 * (jscan.c) walks the document (mmapped) and, in each event, decodes only
 * the members the reader uses (ph, name, ts, tts, dur, tdur, pid, tid, id,
 * and args for M and C events), where they lie: no tree is built, so memory
 * depends neither on the file nor on the size of one event (a 60 MB event
 * made a 2.4 GB cJSON tree), and running out of it is never taken for bad
 * JSON. The option max-json still bounds one event (default 256 MiB).
 * Slices and the other records go through tci_extsort (runs spilled to a
 * temporary file), so the reader keeps no per-event array of its own; the
 * slices become enter/exit records at each read (jreader).
 *
 * Quirks: events need not be in time order and X events may come in any
 * order, so each thread's slices are collected as intervals (B/E pairs
 * matched in file order per thread, X with their dur), sorted by (start,
 * longer first) and replayed through a stack: equal-time boundaries nest
 * properly. An E that closes nothing is passed on and handled by the
 * conversion rules; a B never closed stays open (closed at the end).
 * ts/dur/tts are µs doubles in JSON; they become integer ns with llround,
 * exact for the three-decimal form viewers (and our writer) use. pid/tid
 * may be strings; a non-numeric one gets an id of its own; a negative one is
 * refused (no viewer keeps it: Perfetto reads it as 0), never wrapped. A \u
 * escape of half a surrogate pair becomes U+FFFD, counted (unpaired-surrogate).
 */
#define _GNU_SOURCE /* memmem */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_jscan.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_registry.h"
#include "tc_trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_END INT64_MAX

/* One record to replay, already in the IR's terms. */
typedef struct jrec {
    int64_t ts, cpu;
    double value;
    uint64_t id;
    uint64_t seq;             /* order made in: the tie-break at equal times */
    uint32_t thread, method;
    uint8_t action;
} jrec;

/* A slice of one thread while sorting. */
typedef struct jslice {
    int64_t start, end;       /* end NO_END: never closed */
    int64_t cpu_start, cpu_end;
    uint64_t order;           /* file order, for stable ties */
    uint32_t thread, method;
} jslice;

/* ---- an event's members, decoded where they lie ------------------------------ */

/* The members one_event reads; the first of each counts, as a lookup in a parsed object finds it. */
enum { EV_PH, EV_NAME, EV_TS, EV_TTS, EV_DUR, EV_TDUR, EV_PID, EV_TID, EV_ID, EV_ID2, EV_ARGS, EV__N };
static const char *const event_keys[EV__N] = {"ph", "name", "ts", "tts", "dur", "tdur", "pid", "tid", "id", "id2", "args"};

typedef struct jevent {
    tci_jspan v[EV__N];
    double num[EV__N];  /* num[i]: v[i]'s value, when bit i of numbered is set */
    uint32_t numbered;  /* the numbers the scanner read as it went (tci_jscan_members_num) */
    uint64_t at;        /* input offset of the event */
} jevent;

/* A decoded string; grown as needed, never past max-string + 1 bytes. */
typedef struct jtext {
    char *p;
    size_t len, cap;
} jtext;

/* Member `which` as tci_jspan_number reads it: most were read by the scanner already. */
static bool number_of(const jevent *e, int which, double *out)
{
    if (e->numbered >> which & 1) {
        *out = e->num[which];
        return true;
    }
    return tci_jspan_number(e->v[which], out);
}

/* µs (JSON) -> ns, or false when absent or out of range. 146 years at most,
 * so that ts + dur and tts + tdur stay within int64. */
static bool ns_of(const jevent *e, int which, int64_t *out)
{
    double us;
    if (!number_of(e, which, &us) || fabs(us) > 4.6e15)
        return false;
    *out = llround(us * 1000.0);
    return true;
}

/* A numeric async id: itself when it is a whole number in range, else the
 * bits of the double (still one id per value; a cast would be undefined). */
static uint64_t id_of_number(double v)
{
    if (v >= 0 && v < 18446744073709551616.0 && v == floor(v))
        return (uint64_t)v;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

/* FNV-1a of a text that is not a number: a stable id of its own, kept positive and away from real ids. */
static int64_t id_of_text(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return (int64_t)(h >> 2) | ((int64_t)1 << 60);
}

/* ---- the open() walk's state --------------------------------------------------------- */

/* Per thread: its B slices not closed yet, innermost last (E closes by position). */
typedef struct open_stack {
    jslice *s;
    size_t n, cap;
    uint64_t deeper; /* B events past max-depth, dropped: the next ends close them first */
} open_stack;

/* Records made by the replay and held until due, at most: beyond, they are sorted (late). */
#define HELD_MAX ((size_t)1 << 16)

/* The records, per thread in time order. Two sorted streams (tci_extsort: on disk
 * when there are many), so that after open() the reader holds no per-event array:
 * the records the walk made (instants, counters, async slices, ends that close
 * nothing), and the slices, replayed into enter and exit records at each read
 * rather than stored as twice as many records (writing those to the spool was a
 * fifth of a conversion). The replay's records are held until no later record
 * can come before them, which is at once when slices nest, and soon when they
 * overlap a little (an exit waiting under a slice that ends later, as rounded
 * times make them); when more than HELD_MAX would wait (the count at open
 * finds out) they are sorted (late) as all records were sorted before. Merged by (thread, time), the walk's first at equal times: the
 * order of one sort of all records by (thread, time, order made in), the walk's
 * records being made before the replay's. */
typedef struct jreader {
    tci_extsort *recs;        /* the walk's records */
    tci_extsort *slices;      /* every thread's slices, by (thread, start, longer first, file order) */
    tci_extsort *late;        /* the replay's records sorted, when they do not come out in order */
    uint64_t walk_recs, total; /* records: the walk's, and with the replay's (counted at open) */
    uint32_t max_depth;
    /* the replay: the slices open (and the earliest end among them), the records
     * made but not yet due (a heap), and those due, in order */
    open_stack stack;
    int64_t *min_end;         /* min_end[i]: the earliest end of stack.s[0..i] (NO_END: none) */
    size_t cap_min_end;
    jrec *held;
    size_t n_held, cap_held;
    jrec *batch;
    size_t batch_n, batch_pos, batch_cap;
    size_t fresh;             /* batch[fresh, batch_n): made in this step, in order, not released yet */
    uint64_t seq;             /* replay records made so far (their order at equal times) */
    enum { REPLAY_COUNT, REPLAY_SORT, REPLAY_READ } mode;
    bool too_many_held;       /* (the count) HELD_MAX records were held at once: sort them instead */
    uint32_t warned;          /* the thread last warned about (max-depth), in the count at open */
    bool slices_done;
    jrec walk_head;           /* the walk's next record, when have_walk */
    bool have_walk;
    uint64_t taken;
    bool done;
} jreader;

/* Frames deeper than this are dropped (option max-depth), as normalize drops them; the
 * reader's own stacks stop there too, so that no nesting grows them per event. */
static uint32_t max_depth(const tci_rctx *r) { return r->opt->max_depth ? r->opt->max_depth : 10000; }

static void depth_warning(tci_rctx *r, uint32_t thread, uint64_t at)
{
    tci_warn(r->diag, TCI_FIG_DEPTH_LIMIT, "json", at,
             "thread %llu: slices nested deeper than %u; the deeper ones are dropped (option max-depth)",
             (unsigned long long)r->trace->threads[thread].tid, max_depth(r));
}

typedef struct jwalk {
    tci_idmap process_of;     /* pid -> process (exact: the pid is the key) */
    tci_idmap tid_index;      /* tid -> a dense index of the tids seen */
    tci_idmap thread_of;      /* process << 32 | tid index -> thread */
    uint32_t n_tids;
    open_stack *open;         /* per thread */
    uint32_t n_threads;       /* slots in open (empty ones included) */
    uint64_t seq;             /* records made so far */
    char *name;               /* counter series names: "name.series" */
    size_t name_cap;
    jtext text[3];            /* decoded strings: an event's name, a pid or tid, one other member */
    uint64_t lone;            /* unpaired surrogates replaced so far */
    uint64_t lone_at;         /* the event of the first one */
    struct name_slot *names;  /* recent slice names and their methods (NAME_SLOTS) */
    int64_t last_pid, last_tid; /* the thread of the last event, when last_thread is not TCI_NONE */
    uint32_t last_thread;
} jwalk;

/* ---- recent names and threads: most events repeat the ones before ------------------- */

/* A direct-mapped cache of slice names: the table's lookup hashes the whole
 * text byte by byte and searches it for a signature, a fifth of a conversion
 * whose names are Java methods, while a name seen before is found here with a
 * word-wise hash and one comparison with the text the table stored. */
#define NAME_SLOTS 4096
typedef struct name_slot {
    uint64_t hash;
    size_t len;
    const char *stored; /* the method's name (in the trace's arena: it never moves) */
    uint32_t method;
} name_slot;

static uint64_t quick_hash(const char *p, size_t n)
{
    const uint64_t mul = 0xff51afd7ed558ccdull;
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ull, w;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * mul;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ w) * mul;
    return h ^ h >> 29;
}

/* tci_trace_timeline_name through the cache: the same method for the same text. A
 * slot is trusted only when the method's stored name is this text (a name with a
 * NUL, stored with U+FFFD in its place, always misses and takes the table's way). */
static inline bool slot_has(const name_slot *slot, uint64_t h, const char *name, size_t len)
{
    return slot->hash == h && slot->len == len && slot->method != TCI_NONE && !memcmp(slot->stored, name, len) &&
           !slot->stored[len]; /* the stored name read where it lies, not through the method table */
}

/* Two ways a set (a pair of slots, one cache line), the one used last first: a
 * name whose slot another name took came back through the table (13% of the
 * events of the 20 MB bench file, with 1,768 names in 4,096 slots). */
static uint32_t timeline_method(tci_trace *t, jwalk *w, const char *name, size_t len)
{
    uint64_t h = quick_hash(name, len);
    name_slot *set = &w->names[h & (NAME_SLOTS - 2)];
    if (slot_has(&set[0], h, name, len))
        return set[0].method;
    if (slot_has(&set[1], h, name, len)) {
        name_slot hit = set[1];
        set[1] = set[0];
        set[0] = hit;
        return hit.method;
    }
    uint32_t m = tci_trace_timeline_name(t, name, len);
    set[1] = set[0];
    set[0] = (name_slot){h, len, m != TCI_NONE ? t->methods[m].name : NULL, m};
    return m;
}

static int nomem(tci_rctx *r) { return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory"); }

/* The string member v decoded into t: 1 (t->p, t->len; NUL-terminated), 0 when v is
 * absent or not a string, or an error: a string longer than max-string is refused
 * here, as the tables would refuse it, before more than that is decoded. */
static int text_of(tci_rctx *r, jwalk *w, tci_jspan v, jtext *t, uint64_t at)
{
    if (!tci_jspan_is_string(v))
        return 0;
    size_t max = r->opt->max_string ? r->opt->max_string : TCI_DEFAULT_MAX_STRING;
    size_t raw = v.n - 2, keep = raw < max + 1 ? raw : max + 1;
    if (keep + 1 > t->cap) {
        char *p = realloc(t->p, keep + 1);
        if (!p)
            return nomem(r);
        t->p = p;
        t->cap = keep + 1;
    }
    uint64_t lone = w->lone;
    t->len = tci_json_unescape(v.p + 1, raw, t->p, keep, &w->lone);
    if (w->lone > lone && !w->lone_at)
        w->lone_at = at + 1;
    if (t->len > max)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", at, "a string of %zu bytes is above the limit of %zu (option --max-string)",
                         t->len, max);
    t->p[t->len] = 0;
    return 1;
}

/* pid/tid: a number, a numeric string, or any string (then a stable id of its own);
 * absent: 0. A negative one is refused: no viewer keeps it, and it must not wrap. */
static int id_of(tci_rctx *r, jwalk *w, const jevent *e, int which, int64_t *id)
{
    tci_jspan v = e->v[which];
    const char *key = event_keys[which];
    double d;
    *id = 0;
    if (v.p && v.p[0] != '"' && number_of(e, which, &d)) {
        if (fabs(d) < 9.0e18)
            *id = (int64_t)d;
    } else if (tci_jspan_is_string(v)) {
        jtext *t = &w->text[1];
        int rc = text_of(r, w, v, t, e->at);
        if (rc < 0)
            return rc;
        char *end;
        errno = 0;
        long long x = strtoll(t->p, &end, 10);
        bool number = t->len && end == t->p + t->len && errno != ERANGE;
        *id = number ? x : id_of_text(t->p, t->len);
    }
    if (*id < 0)
        return tci_error(r->diag, TC_ERR_FORMAT, "json", e->at,
                         "\"%s\" is %lld: a %s id is never negative (Perfetto reads it as 0); refused rather than "
                         "changed", key, (long long)*id, which == EV_PID ? "process" : "thread");
    return TC_OK;
}

/* The members of the object v (an event's args) named in keys, as tci_jscan_object finds them. */
static void members_of(tci_rctx *r, tci_jspan v, const char *const *keys, size_t n, tci_jspan *out)
{
    tci_jscan sc = {v.p, v.p ? v.n : 0, 0, r->source, 0};
    if (!v.p || !tci_jscan_object(&sc, keys, n, out))
        for (size_t i = 0; i < n; i++)
            out[i] = (tci_jspan){NULL, 0};
}

static int sort_error(tci_rctx *r, const char *what)
{
    return tci_error(r->diag, errno == ENOMEM ? TC_ERR_NOMEM : TC_ERR_IO, "json", UINT64_MAX,
                     "cannot %s the events' sort spool: %s", what, strerror(errno));
}

static int add_rec(tci_rctx *r, jreader *j, jwalk *w, jrec rec)
{
    rec.seq = w->seq++;
    return tci_extsort_add(j->recs, &rec) == 0 ? TC_OK : sort_error(r, "write");
}

static int add_slice(tci_rctx *r, jreader *j, const jslice *s)
{
    return tci_extsort_add(j->slices, s) == 0 ? TC_OK : sort_error(r, "write");
}

/* ---- threads and processes ------------------------------------------------------ */

/* A stable dense index for any 64-bit value, through an exact map. */
static uint32_t index_of(tci_idmap *m, uint32_t *count, uint64_t key)
{
    uint32_t i = tci_idmap_get(m, key);
    if (i != TCI_NONE)
        return i;
    if (*count == UINT32_MAX - 1 || tci_idmap_put(m, key, *count) != 0)
        return TCI_NONE;
    return (*count)++;
}

static uint32_t process_of(tci_rctx *r, jwalk *w, int64_t pid)
{
    uint32_t p = tci_idmap_get(&w->process_of, (uint64_t)pid);
    if (p != TCI_NONE)
        return p;
    if ((p = tci_trace_process(r->trace, pid)) == TCI_NONE || tci_idmap_put(&w->process_of, (uint64_t)pid, p) != 0)
        return TCI_NONE;
    return p;
}

/* The thread of (pid, tid): two exact maps, so no two pairs ever share a thread. */
static uint32_t thread_of(tci_rctx *r, jwalk *w, int64_t pid, int64_t tid)
{
    tci_trace *t = r->trace;
    uint32_t p = process_of(r, w, pid), ti = index_of(&w->tid_index, &w->n_tids, (uint64_t)tid);
    if (p == TCI_NONE || ti == TCI_NONE)
        return TCI_NONE;
    uint64_t key = (uint64_t)p << 32 | ti;
    uint32_t th = tci_idmap_get(&w->thread_of, key);
    if (th != TCI_NONE)
        return th;
    if ((th = tci_trace_add_thread(t, (uint64_t)tid)) == TCI_NONE)
        return TCI_NONE;
    t->threads[th].process = p;
    if (tci_idmap_put(&w->thread_of, key, th) != 0)
        return TCI_NONE;
    uint32_t had = w->n_threads; /* its open stack: the array doubles, new slots empty */
    if (th >= had) {
        if (tci_grow((void **)&w->open, &w->n_threads, th, sizeof *w->open) != 0)
            return TCI_NONE;
        memset(w->open + had, 0, (size_t)(w->n_threads - had) * sizeof *w->open);
    }
    return th;
}

static bool text_is(const jtext *t, const char *lit) { return t->len == strlen(lit) && !memcmp(t->p, lit, t->len); }

/* M events that name a process or a thread (args.name); the others are not in the IR. */
static int metadata_event(tci_rctx *r, jwalk *w, const jevent *e, const jtext *name)
{
    bool process = text_is(name, "process_name");
    if (!process && !text_is(name, "thread_name"))
        return TC_OK;
    static const char *const keys[] = {"name"};
    tci_jspan value;
    members_of(r, e->v[EV_ARGS], keys, 1, &value);
    jtext *v = &w->text[2];
    int rc = text_of(r, w, value, v, e->at);
    if (rc <= 0)
        return rc; /* no args.name: nothing to name it */
    tci_trace *t = r->trace;
    int64_t pid, tid = 0;
    if ((rc = id_of(r, w, e, EV_PID, &pid)) != TC_OK || (!process && (rc = id_of(r, w, e, EV_TID, &tid)) != TC_OK))
        return rc;
    if (process) {
        uint32_t p = process_of(r, w, pid);
        if (p == TCI_NONE || tci_trace_name_process(t, p, v->p, v->len, 2) != TC_OK)
            return tci_trace_fail(t, r->diag, "json", e->at);
    } else {
        uint32_t th = thread_of(r, w, pid, tid);
        if (th == TCI_NONE || tci_trace_name_thread(t, th, v->p, v->len, 2) != TC_OK)
            return tci_trace_fail(t, r->diag, "json", e->at);
    }
    return TC_OK;
}

/* ---- slices: B/E pairs and X events become intervals, per thread ----------------- */

static int slice_begin(tci_rctx *r, jwalk *w, const jslice *s, uint64_t at)
{
    open_stack *st = &w->open[s->thread];
    if (st->n >= max_depth(r)) { /* B events that are never closed must not grow memory per event */
        if (!st->deeper++)
            depth_warning(r, s->thread, at);
        return TC_OK;
    }
    if (tci_grow_n((void **)&st->s, &st->cap, st->n, sizeof *st->s) != 0)
        return nomem(r);
    st->s[st->n++] = *s;
    return TC_OK;
}

/* E closes the innermost open B of its thread (viewers match by position, not name). */
static int slice_end(tci_rctx *r, jreader *j, jwalk *w, uint32_t thread, int64_t ts, int64_t cpu, uint32_t method)
{
    open_stack *st = &w->open[thread];
    if (st->deeper) { /* it closes a dropped one */
        st->deeper--;
        return TC_OK;
    }
    if (!st->n) { /* closes nothing here: the conversion rules decide */
        jrec rec = {.ts = ts, .cpu = cpu, .thread = thread, .method = method, .action = TCI_ACT_EXIT};
        return add_rec(r, j, w, rec);
    }
    jslice s = st->s[--st->n];
    s.end = ts < s.start ? s.start : ts;
    s.cpu_end = cpu;
    return add_slice(r, j, &s);
}

/* Sort key: thread, start, longer first, file order (the slice carries it all). */
static int cmp_slice(const void *a, const void *b)
{
    const jslice *s = a, *u = b;
    if (s->thread != u->thread) return s->thread < u->thread ? -1 : 1;
    if (s->start != u->start) return s->start < u->start ? -1 : 1;
    if (s->end != u->end) return s->end > u->end ? -1 : 1;
    return s->order < u->order ? -1 : s->order > u->order;
}

/* ---- the slices' sort: by a radix sort of one 64-bit key -------------------------------- */

/* A slice's place as one number: (thread, start) packed, when the run's spread of both
 * fits in 64 bits (ties: the rest of cmp_slice), with the slice's index in the run. */
typedef struct slice_key {
    uint64_t key;
    uint64_t index;
} slice_key;

static unsigned bits_of(uint64_t v) { return v ? 64u - (unsigned)__builtin_clzll(v) : 0; }

/* The keys of s[0, n) into k, or false when (thread, start) does not pack into 64 bits. */
static bool slice_keys(const jslice *s, size_t n, slice_key *k)
{
    uint32_t tmin = UINT32_MAX, tmax = 0;
    int64_t smin = INT64_MAX, smax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        tmin = s[i].thread < tmin ? s[i].thread : tmin;
        tmax = s[i].thread > tmax ? s[i].thread : tmax;
        smin = s[i].start < smin ? s[i].start : smin;
        smax = s[i].start > smax ? s[i].start : smax;
    }
    unsigned sbits = bits_of((uint64_t)smax - (uint64_t)smin), tbits = bits_of((uint64_t)(tmax - tmin));
    if (sbits + tbits > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = (uint64_t)(s[i].thread - tmin);
        k[i] = (slice_key){(sbits < 64 ? t << sbits : 0) | ((uint64_t)s[i].start - (uint64_t)smin), i};
    }
    return true;
}

/* k[0, n) by key, stable: a byte a pass, the passes where all keys share the byte skipped. */
static void radix_keys(slice_key *k, slice_key *tmp, size_t n)
{
    size_t count[8][256] = {{0}};
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 8; b++)
            count[b][(k[i].key >> (8 * b)) & 255]++;
    slice_key *from = k, *to = tmp;
    for (unsigned b = 0; b < 8; b++) {
        size_t *c = count[b], sum = 0;
        if (c[(k[0].key >> (8 * b)) & 255] == n)
            continue;
        for (unsigned v = 0; v < 256; v++) {
            size_t x = c[v];
            c[v] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++)
            to[c[(from[i].key >> (8 * b)) & 255]++] = from[i];
        slice_key *t = from;
        from = to;
        to = t;
    }
    if (from != k)
        memcpy(k, from, n * sizeof *k);
}

/* A tie's order in cmp_slice (same thread, same start): longer first, then file order. */
typedef struct slice_tie {
    int64_t end;
    uint64_t order, index;
} slice_tie;

static int cmp_tie(const void *a, const void *b)
{
    const slice_tie *x = a, *y = b;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Equal keys (one thread's slices starting together; index order is the order added,
 * none of cmp_slice's) sorted by the rest of cmp_slice: insertion for a few, qsort for
 * many (never quadratic). false: no memory for a large group. */
static bool order_ties(const jslice *s, slice_key *k, size_t n)
{
    for (size_t i = 0, e; i < n; i = e) {
        for (e = i + 1; e < n && k[e].key == k[i].key;)
            e++;
        if (e - i <= 16) {
            for (size_t a = i + 1; a < e; a++) {
                slice_key x = k[a];
                size_t b = a;
                for (; b > i && cmp_slice(&s[k[b - 1].index], &s[x.index]) > 0; b--)
                    k[b] = k[b - 1];
                k[b] = x;
            }
            continue;
        }
        slice_tie *t = tci_realloc_array(NULL, e - i, sizeof *t);
        if (!t)
            return false;
        for (size_t a = i; a < e; a++)
            t[a - i] = (slice_tie){s[k[a].index].end, s[k[a].index].order, k[a].index};
        qsort(t, e - i, sizeof *t, cmp_tie);
        for (size_t a = i; a < e; a++)
            k[a].index = t[a - i].index;
        free(t);
    }
    return true;
}

/* tci_sort_run for the slices: cmp_slice's order with a handful of operations per slice
 * (qsort of the 48-byte slices was a sixth of a conversion). scratch: the keys (twice)
 * and the slices gathered in order, read from where they lie one after another rather
 * than moved along the permutation's cycles, each move waiting for the one before.
 * qsort when the keys do not pack or a large group of ties finds no memory. */
#define SLICE_SCRATCH (2 * sizeof(slice_key) + sizeof(jslice))
static void sort_slices(void *base, size_t n, void *scratch)
{
    jslice *s = base, *out = (jslice *)((slice_key *)scratch + 2 * n);
    slice_key *k = scratch;
    if (n < 2)
        return;
    if (!slice_keys(s, n, k)) {
        qsort(base, n, sizeof *s, cmp_slice);
        return;
    }
    radix_keys(k, k + n, n);
    if (!order_ties(s, k, n)) {
        qsort(base, n, sizeof *s, cmp_slice);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = s[k[i].index];
    memcpy(s, out, n * sizeof *s);
}

/* Records per thread in time order; at equal times, the order they were made in
 * (which the slice replay chose so that frames nest). */
static int cmp_rec(const void *a, const void *b)
{
    const jrec *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Does the open slice `top` stay open across the start of s (NULL: the thread's slices ended)? */
static bool stays_open(const jslice *top, const jslice *s)
{
    if (!s)
        return false;
    if (top->end == NO_END)
        return true;
    return top->end > s->start || (top->end == s->start && top->start == s->start && top->end >= s->end);
}

/* Held records: a min-heap by (time, order made); one thread's at a time. */
static bool held_before(const jrec *a, const jrec *b) { return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq); }

static void held_push(jreader *j, jrec e)
{
    size_t i = j->n_held++;
    for (; i && held_before(&e, &j->held[(i - 1) / 2]); i = (i - 1) / 2)
        j->held[i] = j->held[(i - 1) / 2];
    j->held[i] = e;
}

static jrec held_pop(jreader *j)
{
    jrec top = j->held[0], last = j->held[--j->n_held];
    size_t i = 0, n = j->n_held;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && held_before(&j->held[c + 1], &j->held[c]))
            c++;
        if (!held_before(&j->held[c], &last))
            break;
        j->held[i] = j->held[c];
        i = c;
    }
    if (n)
        j->held[i] = last;
    return top;
}

/* Room for one more at a[n] (the check inline: the replay makes records at every step). */
static inline int room(void **a, size_t *cap, size_t n, size_t esz)
{
    return TCI_LIKELY(n < *cap) ? 0 : tci_grow_n(a, cap, n, esz);
}

/* This step's records still in the batch go to the heap: one came out of order. */
static void hold_fresh(jreader *j)
{
    for (size_t i = j->fresh; i < j->batch_n; i++)
        held_push(j, j->batch[i]);
    j->batch_n = j->fresh;
}

/* The replay's record e, numbered in the order made (its place at equal times): held
 * (reading), counted (the count at open, which also sees how many wait at once), or
 * sorted (late). Held means in the heap, or, while the heap is empty and the step's
 * records come in time order (slices that nest: nearly always), at the batch's end,
 * where the heap would have put them in the same order; release decides which of
 * them are due. */
static int replay_add(tci_rctx *r, jreader *j, jrec e)
{
    e.seq = j->walk_recs + j->seq++;
    if (j->mode == REPLAY_SORT)
        return tci_extsort_add(j->late, &e) == 0 ? TC_OK : sort_error(r, "write");
    if (j->too_many_held)
        return TC_OK; /* counting only */
    /* reading, the same replay holds fewer */
    if (j->n_held + (j->batch_n - j->fresh) == HELD_MAX && j->mode == REPLAY_COUNT) {
        j->too_many_held = true;
        j->n_held = 0;
        j->batch_n = j->fresh;
        return TC_OK;
    }
    if (!j->n_held && (j->batch_n == j->fresh || j->batch[j->batch_n - 1].ts <= e.ts)) {
        if (room((void **)&j->batch, &j->batch_cap, j->batch_n, sizeof *j->batch) != 0)
            return nomem(r);
        j->batch[j->batch_n++] = e;
        return TC_OK;
    }
    if (room((void **)&j->held, &j->cap_held, j->n_held + (j->batch_n - j->fresh), sizeof *j->held) != 0)
        return nomem(r);
    hold_fresh(j);
    held_push(j, e);
    return TC_OK;
}

/* The held records at or before `due` (all when due is INT64_MAX) into the batch, in order. */
static int release(tci_rctx *r, jreader *j, int64_t due)
{
    if (!j->n_held) { /* this step's records, in order: those after due wait in the heap */
        size_t k = j->batch_n;
        while (k > j->fresh && j->batch[k - 1].ts > due)
            k--;
        if (k < j->batch_n) {
            if (room((void **)&j->held, &j->cap_held, j->batch_n - k, sizeof *j->held) != 0)
                return nomem(r);
            size_t end = j->batch_n;
            for (size_t i = k; i < end; i++)
                held_push(j, j->batch[i]);
            j->batch_n = k;
        }
        j->fresh = j->batch_n;
        return TC_OK;
    }
    while (j->n_held && j->held[0].ts <= due) {
        if (room((void **)&j->batch, &j->batch_cap, j->batch_n, sizeof *j->batch) != 0)
            return nomem(r);
        j->batch[j->batch_n++] = held_pop(j);
    }
    j->fresh = j->batch_n;
    return TC_OK;
}

/* Pop what ends before s starts (all of it when s is NULL), as exit records. */
static int close_before(tci_rctx *r, jreader *j, const jslice *s)
{
    open_stack *st = &j->stack;
    while (st->n && !stays_open(&st->s[st->n - 1], s)) {
        const jslice *top = &st->s[--st->n];
        if (top->end == NO_END)
            continue; /* a B never closed stays open: normalize closes it at the end */
        jrec e = {.ts = top->end, .cpu = top->cpu_end, .thread = top->thread, .method = top->method,
                  .action = TCI_ACT_EXIT};
        int rc = replay_add(r, j, e);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* s on the stack, with the earliest end of the stack so far. */
static int push_open(tci_rctx *r, jreader *j, const jslice *s)
{
    open_stack *st = &j->stack;
    if (room((void **)&st->s, &st->cap, st->n, sizeof *st->s) != 0 ||
        room((void **)&j->min_end, &j->cap_min_end, st->n, sizeof *j->min_end) != 0)
        return nomem(r);
    int64_t below = st->n ? j->min_end[st->n - 1] : NO_END;
    j->min_end[st->n] = s->end < below ? s->end : below;
    st->s[st->n++] = *s;
    return TC_OK;
}

/* One step of the replay of the sorted slices through a stack: the next slice's
 * records (the exits of what ends before it starts, and its enter; at a thread's
 * change, all of the last thread's exits first), and then into j->batch, in order,
 * the records held that are due: every record still to come is at the earliest
 * end among the open slices or at this slice's start or later (starts are sorted,
 * an exit is never before its start), and is made later. So the batches in turn
 * hold the replay's records as one sort of them all by (thread, time, order made)
 * would order them. warn: say where max-depth drops slices (the count at open).
 * 1: a batch (maybe empty), 0: no slice left, else an error. */
static int replay_step(tci_rctx *r, jreader *j, bool warn)
{
    jslice s;
    j->batch_n = j->batch_pos = j->fresh = 0;
    if (j->slices_done)
        return 0;
    int k = tci_extsort_next(j->slices, &s), rc;
    if (k < 0)
        return sort_error(r, "read back");
    if (k == 0) {
        j->slices_done = true;
        if ((rc = close_before(r, j, NULL)) != TC_OK || (rc = release(r, j, INT64_MAX)) != TC_OK)
            return rc;
        return j->batch_n ? 1 : 0;
    }
    open_stack *st = &j->stack;
    if (st->n && st->s[0].thread != s.thread &&
        ((rc = close_before(r, j, NULL)) != TC_OK || (rc = release(r, j, INT64_MAX)) != TC_OK))
        return rc;
    if ((rc = close_before(r, j, &s)) != TC_OK)
        return rc;
    if (st->n >= j->max_depth) { /* inside max-depth open slices: dropped, and what nests in it */
        if (warn && j->warned != s.thread)
            depth_warning(r, s.thread, UINT64_MAX);
        j->warned = s.thread;
    } else {
        jrec b = {.ts = s.start, .cpu = s.cpu_start, .thread = s.thread, .method = s.method, .action = TCI_ACT_ENTER};
        if ((rc = replay_add(r, j, b)) != TC_OK || (rc = push_open(r, j, &s)) != TC_OK)
            return rc;
    }
    int64_t due = st->n && j->min_end[st->n - 1] < s.start ? j->min_end[st->n - 1] : s.start;
    if ((rc = release(r, j, due)) != TC_OK)
        return rc;
    return 1;
}

/* Both streams from their first record again. */
static int replay_rewind(tci_rctx *r, jreader *j)
{
    j->stack.n = 0;
    j->batch_n = j->batch_pos = 0;
    j->n_held = 0;
    j->seq = 0;
    j->slices_done = false;
    if (tci_extsort_rewind(j->slices) != 0 || tci_extsort_rewind(j->recs) != 0 ||
        (j->late && tci_extsort_rewind(j->late) != 0))
        return sort_error(r, "read back");
    int k = tci_extsort_next(j->recs, &j->walk_head);
    if (k < 0)
        return sort_error(r, "read back");
    j->have_walk = k > 0;
    return TC_OK;
}

/* The replay from its first slice to its last in the current mode. */
static int replay_all(tci_rctx *r, jreader *j, bool warn)
{
    int rc = replay_rewind(r, j);
    while (rc == TC_OK && (rc = replay_step(r, j, warn)) == 1)
        rc = TC_OK;
    return rc < 0 ? rc : TC_OK;
}

/* The replay's records once more, into the sort (late): too many would wait. */
static int sort_replay(tci_rctx *r, jreader *j)
{
    if (!(j->late = tci_extsort_new(sizeof(jrec), cmp_rec, 0)))
        return nomem(r);
    j->mode = REPLAY_SORT;
    int rc = replay_all(r, j, false);
    if (rc != TC_OK)
        return rc;
    return tci_extsort_done(j->late) == 0 ? TC_OK : sort_error(r, "sort");
}

/* At open: the slices sorted and replayed once, to count the records (progress, and
 * whether there are any), to warn where max-depth drops slices, as the reader always
 * did before its first record, and to see how many records wait at once (too many:
 * they are sorted). */
static int count_replay(tci_rctx *r, jreader *j)
{
    if (tci_extsort_done(j->slices) != 0 || tci_extsort_done(j->recs) != 0)
        return sort_error(r, "sort");
    j->walk_recs = tci_extsort_count(j->recs);
    j->max_depth = max_depth(r);
    j->warned = TCI_NONE;
    j->mode = REPLAY_COUNT;
    int rc = replay_all(r, j, true);
    if (rc != TC_OK)
        return rc;
    j->total = j->walk_recs + j->seq;
    if (j->too_many_held && (rc = sort_replay(r, j)) != TC_OK)
        return rc;
    j->mode = REPLAY_READ;
    return replay_rewind(r, j);
}

/* The next record of the merged streams: 1, 0 at the end, or an error. */
static int next_record(tci_rctx *r, jreader *j, jrec *out)
{
    while (j->batch_pos == j->batch_n && !j->slices_done) {
        int rc;
        if (j->late) { /* the replay's records, sorted: one at a time through the batch */
            j->batch_n = j->batch_pos = j->fresh = 0;
            if (!j->batch_cap && tci_grow_n((void **)&j->batch, &j->batch_cap, 0, sizeof *j->batch) != 0)
                return nomem(r);
            if ((rc = tci_extsort_next(j->late, j->batch)) < 0)
                return sort_error(r, "read back");
            j->batch_n = (size_t)rc;
            j->slices_done = !rc;
        } else if ((rc = replay_step(r, j, false)) < 0) {
            return rc;
        }
    }
    bool have_replay = j->batch_pos < j->batch_n;
    if (!have_replay && !j->have_walk)
        return 0;
    const jrec *x = have_replay ? &j->batch[j->batch_pos] : NULL, *w = &j->walk_head;
    bool walk_first = j->have_walk && (!x || w->thread < x->thread || (w->thread == x->thread && w->ts <= x->ts));
    if (!walk_first) {
        *out = *x;
        j->batch_pos++;
        return 1;
    }
    *out = *w;
    int k = tci_extsort_next(j->recs, &j->walk_head);
    if (k < 0)
        return sort_error(r, "read back");
    j->have_walk = k > 0;
    return 1;
}

/* ---- the events ------------------------------------------------------------------ */

/* The members of args (an object, or an array whose elements have no key) one at a
 * time: 1 with the member's raw key (NULL in an array) and value, 0 at the end. */
typedef struct jmembers {
    tci_jscan sc;
    bool object;
} jmembers;

static void members_start(tci_rctx *r, jmembers *m, tci_jspan v)
{
    m->sc = (tci_jscan){v.p, v.p ? v.n : 0, 1, r->source, 0}; /* past the '{' or '[' (validated with the event) */
    m->object = v.p && v.p[0] == '{';
    tci_jscan_ws(&m->sc);
}

static int members_next(jmembers *m, tci_jspan *key, tci_jspan *value)
{
    tci_jscan *sc = &m->sc;
    if (sc->pos >= sc->n || sc->s[sc->pos] == '}' || sc->s[sc->pos] == ']')
        return 0;
    *key = (tci_jspan){NULL, 0};
    const char *k;
    size_t len;
    if (m->object) {
        if (!tci_jscan_key(sc, &k, &len))
            return 0;
        *key = (tci_jspan){k - 1, len + 2}; /* with its quotes, as a string value is */
    }
    tci_jscan_ws(sc);
    size_t start = sc->pos;
    if (!tci_jscan_value(sc))
        return 0;
    *value = (tci_jspan){sc->s + start, sc->pos - start};
    tci_jscan_ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == ',')
        sc->pos++;
    tci_jscan_ws(sc);
    return 1;
}

/* A counter event: one counter per numeric series, "name" alone or "name.series". */
static int counter_event(tci_rctx *r, jreader *j, jwalk *w, const jevent *e, const jtext *name, jrec rec)
{
    tci_trace *t = r->trace;
    tci_jspan args = e->v[EV_ARGS], key, value;
    if (!args.p || (args.p[0] != '{' && args.p[0] != '['))
        return TC_OK;
    const char *nm = name ? name->p : "[unnamed]";
    size_t name_len = name ? name->len : 9;
    jmembers m;
    members_start(r, &m, args);
    int n = 0;
    while (n < 2 && members_next(&m, &key, &value))
        n++;
    bool several = n > 1; /* counted once, not per series */
    rec.action = TCI_ACT_COUNTER;
    members_start(r, &m, args);
    while (members_next(&m, &key, &value)) {
        if (value.p[0] == '"' || !tci_jspan_number(value, &rec.value))
            continue; /* numbers only, not numeric strings */
        if (several) {
            jtext *series = &w->text[2];
            int rc = key.p ? text_of(r, w, key, series, e->at) : 0;
            if (rc < 0)
                return rc;
            size_t k = rc ? series->len : 0, len = name_len + 1 + k;
            if (len + 1 > w->name_cap) {
                char *p = realloc(w->name, len + 1);
                if (!p)
                    return nomem(r);
                w->name = p;
                w->name_cap = len + 1;
            }
            memcpy(w->name, nm, name_len);
            w->name[name_len] = '.';
            memcpy(w->name + name_len + 1, rc ? series->p : "", k);
            if ((rec.method = tci_trace_name(t, w->name, len)) == TCI_NONE)
                return tci_trace_fail(t, r->diag, "json", e->at);
        }
        int rc = add_rec(r, j, w, rec);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* The cookie of a b/e event: "id2": {"local": ...} or {"global": ...} (our writer scopes its
 * async slices to their process with id2.local, as Chrome and Perfetto read it), else "id".
 * The IR scopes every async slice to its thread's process. */
static tci_jspan cookie_of(const jevent *e)
{
    static const char *const scopes[2] = {"local", "global"};
    tci_jspan id2 = e->v[EV_ID2], in[2] = {{0}};
    if (!id2.p || id2.p[0] != '{')
        return e->v[EV_ID];
    tci_jscan sc = {.s = id2.p, .n = id2.n}; /* validated when the event was scanned */
    if (!tci_jscan_object(&sc, scopes, 2, in))
        return e->v[EV_ID];
    return in[0].p ? in[0] : in[1];
}

/* An async slice's id: a number, or a string that is one (decimal or 0x hex), else an id of its own. */
static int async_id(tci_rctx *r, jwalk *w, const jevent *e, uint64_t *id)
{
    tci_jspan v = cookie_of(e);
    double d;
    *id = 0;
    if (tci_jspan_is_string(v)) {
        jtext *t = &w->text[2];
        int rc = text_of(r, w, v, t, e->at);
        if (rc < 0)
            return rc;
        char *end;
        *id = strtoull(t->p, &end, 0);
        if (!t->len || end != t->p + t->len)
            *id = (uint64_t)id_of_text(t->p, t->len);
    } else if (tci_jspan_number(v, &d)) {
        *id = id_of_number(d);
    }
    return TC_OK;
}

static int one_event(tci_rctx *r, jreader *j, jwalk *w, const jevent *e, uint64_t order)
{
    tci_trace *t = r->trace;
    char ph = 0;
    uint64_t lone = 0;
    if (tci_jspan_is_string(e->v[EV_PH]))
        tci_json_unescape(e->v[EV_PH].p + 1, e->v[EV_PH].n - 2, &ph, 1, &lone);
    if (!ph)
        return TC_OK;
    jtext *name = &w->text[0];
    int rc = text_of(r, w, e->v[EV_NAME], name, e->at);
    if (rc < 0)
        return rc;
    if (!rc)
        name = NULL;
    if (ph == 'M')
        return name ? metadata_event(r, w, e, name) : TC_OK;
    if (!strchr("BEXiICbe", ph))
        return TC_OK; /* flows, samples, objects, marks: not in the IR */
    int64_t ts, cpu = TCI_NO_TIME, dur, pid, tid;
    if (!ns_of(e, EV_TS, &ts)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", e->at, "a \"%c\" event without a numeric ts; skipped", ph);
        return TC_OK;
    }
    if ((rc = id_of(r, w, e, EV_PID, &pid)) != TC_OK || (rc = id_of(r, w, e, EV_TID, &tid)) != TC_OK)
        return rc;
    uint32_t th = w->last_thread;
    if (th == TCI_NONE || pid != w->last_pid || tid != w->last_tid) {
        if ((th = thread_of(r, w, pid, tid)) == TCI_NONE)
            return tci_trace_fail(t, r->diag, "json", e->at);
        w->last_pid = pid;
        w->last_tid = tid;
        w->last_thread = th;
    }
    if (ns_of(e, EV_TTS, &cpu))
        t->has_cpu = true;
    uint32_t method = TCI_NONE;
    if (name && (method = timeline_method(t, w, name->p, name->len)) == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", e->at);
    if (method == TCI_NONE && ph != 'E' && (method = tci_trace_name(t, "[unnamed]", 9)) == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", e->at);
    switch (ph) {
    case 'B': {
        jslice s = {ts, NO_END, cpu, TCI_NO_TIME, order, th, method};
        return slice_begin(r, w, &s, e->at);
    }
    case 'E':
        return slice_end(r, j, w, th, ts, cpu, method);
    case 'X': {
        int64_t tdur;
        if (!ns_of(e, EV_DUR, &dur) || dur < 0)
            dur = 0;
        jslice s = {ts, ts + dur, cpu, cpu != TCI_NO_TIME && ns_of(e, EV_TDUR, &tdur) ? cpu + tdur : cpu, order,
                    th, method};
        return add_slice(r, j, &s);
    }
    default: {
        jrec rec = {.ts = ts, .cpu = cpu, .thread = th, .method = method};
        if (ph == 'C')
            return counter_event(r, j, w, e, name, rec);
        if (ph == 'b' || ph == 'e') {
            if ((rc = async_id(r, w, e, &rec.id)) != TC_OK)
                return rc;
            rec.action = ph == 'b' ? TCI_ACT_ASYNC_BEGIN : TCI_ACT_ASYNC_END;
        } else {
            rec.action = TCI_ACT_INSTANT;
        }
        return add_rec(r, j, w, rec);
    }
    }
}

/* B events never closed go to the sort with their end unknown. */
static int flush_open(tci_rctx *r, jreader *j, jwalk *w)
{
    int rc = TC_OK;
    for (uint32_t i = 0; i < w->n_threads && rc == TC_OK; i++)
        for (size_t k = 0; k < w->open[i].n && rc == TC_OK; k++)
            rc = add_slice(r, j, &w->open[i].s[k]);
    return rc;
}

static void free_walk(jwalk *w)
{
    for (uint32_t i = 0; i < w->n_threads; i++)
        free(w->open[i].s);
    free(w->open);
    free(w->name);
    free(w->names);
    for (size_t i = 0; i < sizeof w->text / sizeof *w->text; i++)
        free(w->text[i].p);
    tci_idmap_free(&w->process_of);
    tci_idmap_free(&w->tid_index);
    tci_idmap_free(&w->thread_of);
}

/* ---- the document, streamed ------------------------------------------------------------ */

static int bad_json(tci_rctx *r, size_t off)
{
    return tci_error(r->diag, TC_ERR_FORMAT, "json", off, "not valid JSON here");
}

/* The event object at sc->pos: its members found, sc->pos past it. */
static int scan_event(tci_rctx *r, const tci_jkeys *keys, tci_jscan *sc, jevent *e)
{
    size_t start = sc->pos;
    e->at = start;
    if (!tci_jscan_members_num(sc, keys, e->v, e->num, &e->numbered))
        return bad_json(r, sc->pos);
    uint64_t max = r->opt->max_json ? r->opt->max_json : TCI_DEFAULT_MAX_JSON;
    if (sc->pos - start > max)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", start,
                         "an event of %zu bytes is above the limit of %llu for one event (option --max-json)",
                         sc->pos - start, (unsigned long long)max);
    return TC_OK;
}

/* After the events: what was replaced, and whether anything was found at all. */
static int events_read(tci_rctx *r, jreader *j, const jwalk *w, uint64_t events)
{
    if (w->lone) {
        tci_warn(r->diag, TCI_FIG_LONE_SURROGATE, "json", w->lone_at - 1,
                 "%llu \\u escapes of half a surrogate pair (not a character) in the strings read; each shown as U+FFFD",
                 (unsigned long long)w->lone);
        tci_count(r->diag, TCI_FIG_LONE_SURROGATE, w->lone - 1);
    }
    if (!j->total) /* names alone (M events) show nothing either */
        return tci_error(r->diag, TC_ERR_NO_TRACE, "json", UINT64_MAX,
                         "no trace events found (%llu array elements, none a B, E, X, i, I, C, b or e event with a "
                         "numeric ts)",
                         (unsigned long long)events);
    return TC_OK;
}

/* The elements of the events array at sc->pos ('['), one at a time. */
static int read_events(tci_rctx *r, jreader *j, tci_jscan *sc)
{
    jwalk w;
    memset(&w, 0, sizeof w);
    w.last_thread = TCI_NONE;
    w.names = tci_calloc(NAME_SLOTS, sizeof *w.names);
    j->slices = tci_extsort_new(sizeof(jslice), cmp_slice, 0);
    j->recs = tci_extsort_new(sizeof(jrec), cmp_rec, 0);
    if (!w.names || !j->slices || !j->recs) {
        free_walk(&w);
        return nomem(r);
    }
    tci_extsort_set_sort(j->slices, sort_slices, SLICE_SCRATCH);
    for (size_t i = 0; i < NAME_SLOTS; i++)
        w.names[i].method = TCI_NONE; /* empty */
    tci_jkeys keys;
    tci_jkeys_init(&keys, event_keys, EV__N);
    int rc = TC_OK;
    uint64_t order = 0, elements = 0;
    sc->pos++;
    tci_jscan_ws(sc);
    bool more = sc->pos < sc->n && sc->s[sc->pos] != ']';
    while (more && rc == TC_OK) {
        tci_jscan_ws(sc);
        elements++;
        if (sc->pos < sc->n && sc->s[sc->pos] == '{') {
            jevent e;
            if ((rc = scan_event(r, &keys, sc, &e)) == TC_OK)
                rc = one_event(r, j, &w, &e, order++);
            if (rc == TC_OK && r->opt->max_events && order > r->opt->max_events)
                rc = tci_error(r->diag, TC_ERR_LIMIT, "json", sc->pos, "more than %llu events (option --max-events)",
                               (unsigned long long)r->opt->max_events);
        } else if (!tci_jscan_value(sc)) { /* not an event: skipped, as viewers do */
            rc = bad_json(r, sc->pos);
        }
        if (rc != TC_OK)
            break;
        tci_source_release(r->source, sc->pos); /* read once, front to back */
        tci_jscan_ws(sc);
        if (sc->pos < sc->n && sc->s[sc->pos] == ',')
            sc->pos++;
        else if (sc->pos < sc->n && sc->s[sc->pos] == ']')
            more = false;
        else
            rc = bad_json(r, sc->pos);
    }
    if (rc == TC_OK && sc->pos >= sc->n)
        rc = bad_json(r, sc->pos);
    sc->pos++; /* past ']' */
    if (rc == TC_OK)
        rc = flush_open(r, j, &w);
    if (rc == TC_OK)
        rc = count_replay(r, j);
    if (rc == TC_OK)
        rc = events_read(r, j, &w, elements);
    free_walk(&w);
    return rc;
}

/* ---- the reader ---------------------------------------------------------------------- */

/* JSON times are µs from any origin; our own writer says which in otherData. */
static void settle_times(tci_rctx *r, tci_jspan other)
{
    tci_trace *t = r->trace;
    static const char *const keys[] = {"start_time_ns"};
    tci_jspan v;
    double start;
    members_of(r, other, keys, 1, &v);
    t->start_given = tci_jspan_number(v, &start) && fabs(start) < 9.0e18;
    t->start_ns = t->start_given ? (int64_t)start : 0;
    t->time_unit_ns = 1;
    t->wrap_bits = 0;
    t->has_wall = true;
    t->clock = t->has_cpu ? TCI_CLOCK_DUAL : TCI_CLOCK_WALL;
}

/* Valid JSON that is no trace (package.json, a facts file): TC_ERR_NO_TRACE, which batch skips. */
#define NO_TRACE_EVENTS "no trace events: neither an array of events nor an object with \"traceEvents\""

/* {"traceEvents": [...], "otherData": {...}, ...}: the first of each key counts (as a
 * lookup in a parsed tree would find it); every other value is only checked. */
static int read_object(tci_rctx *r, jreader *j, tci_jscan *sc, tci_jspan *other)
{
    bool have_events = false;
    int rc = TC_OK;
    sc->pos++;
    tci_jscan_ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == '}')
        sc->pos++;
    else
        for (bool more = true; more && rc == TC_OK;) {
            const char *key;
            size_t len;
            if (!tci_jscan_key(sc, &key, &len))
                return bad_json(r, sc->pos);
            tci_jscan_ws(sc);
            size_t start = sc->pos;
            if (len == 11 && !memcmp(key, "traceEvents", 11) && !have_events) {
                if (sc->pos >= sc->n || sc->s[sc->pos] != '[')
                    return tci_error(r->diag, TC_ERR_FORMAT, "json", sc->pos, "\"traceEvents\" is not an array");
                have_events = true;
                rc = read_events(r, j, sc);
            } else if (!tci_jscan_value(sc)) {
                return bad_json(r, sc->pos);
            } else if (len == 9 && !memcmp(key, "otherData", 9) && !other->p) {
                *other = (tci_jspan){sc->s + start, sc->pos - start};
            }
            if (rc != TC_OK)
                return rc;
            tci_jscan_ws(sc);
            if (sc->pos < sc->n && (sc->s[sc->pos] == ',' || sc->s[sc->pos] == '}'))
                more = sc->s[sc->pos++] == ',';
            else
                return bad_json(r, sc->pos);
        }
    if (!have_events)
        return tci_error(r->diag, TC_ERR_NO_TRACE, "json", 0, NO_TRACE_EVENTS);
    return TC_OK;
}

static int json_open(tci_rctx *r)
{
    jreader *j = r->priv;
    tci_jscan sc = {(const char *)r->data, r->size, 0, r->source, 0};
    tci_jspan other = {NULL, 0};
    int rc;
    tci_jscan_ws(&sc);
    if (sc.pos < sc.n && sc.s[sc.pos] == '[')
        rc = read_events(r, j, &sc);
    else if (sc.pos < sc.n && sc.s[sc.pos] == '{')
        rc = read_object(r, j, &sc, &other);
    else if (tci_jscan_value(&sc))
        rc = tci_error(r->diag, TC_ERR_NO_TRACE, "json", 0, NO_TRACE_EVENTS);
    else
        rc = bad_json(r, sc.pos);
    if (rc != TC_OK)
        return rc;
    settle_times(r, other);
    snprintf(r->trace->detail, sizeof r->trace->detail, "Chrome trace JSON");
    return TC_OK;
}

static int json_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    jreader *j = r->priv;
    size_t k = 0;
    jrec x = {0}; /* set by next_record before it is used */
    while (k < max && !j->done) {
        int n = next_record(r, j, &x);
        if (n < 0)
            return n;
        if (n == 0) {
            j->done = true;
            break;
        }
        ev[k++] = (tci_raw){.wall = x.ts, .cpu = r->trace->has_cpu ? x.cpu : TCI_NO_TIME, .offset = j->taken++,
                            .value = x.value, .id = x.id, .thread = x.thread, .method = x.method, .action = x.action};
    }
    /* progress: the share of records read, as a byte offset */
    uint64_t total = j->total;
    r->pos = total && !j->done ? (uint64_t)((double)r->size * (double)j->taken / (double)total) : r->size;
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int json_rewind(tci_rctx *r)
{
    jreader *j = r->priv;
    j->taken = 0;
    j->done = false;
    return replay_rewind(r, j);
}

static void json_close(tci_rctx *r)
{
    jreader *j = r->priv;
    if (!j)
        return;
    tci_extsort_free(j->recs);
    tci_extsort_free(j->slices);
    tci_extsort_free(j->late);
    free(j->stack.s);
    free(j->min_end);
    free(j->held);
    free(j->batch);
}

static int json_probe(const uint8_t *buf, size_t len, const char *filename)
{
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
        i++;
    if (i == len || (buf[i] != '{' && buf[i] != '['))
        return 0;
    size_t look = len - i < 4096 ? len - i : 4096;
    const char *p = (const char *)buf + i;
    bool has_events = memmem(p, look, "\"traceEvents\"", 13) != NULL;
    bool has_ph = memmem(p, look, "\"ph\"", 4) != NULL;
    int score = buf[i] == '{' ? (has_events ? 95 : has_ph ? 60 : 10) : (has_ph ? 90 : 10);
    size_t fl = filename ? strlen(filename) : 0;
    if (score < 95 && fl > 5 && (!strcmp(filename + fl - 5, ".json") || strstr(filename, ".json.")))
        score += 5;
    return score;
}

const tci_reader tci_reader_json = {
    .name = "json",
    .description = "Chrome trace JSON (object or array form)",
    .extensions = "json",
    .priv_size = sizeof(jreader),
    .probe = json_probe,
    .open = json_open,
    .read = json_read,
    .rewind = json_rewind,
    .close = json_close,
};
