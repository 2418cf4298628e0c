/*
 * json.c - Chrome Trace Event Format input (shared/docs/outputs/CHROME_JSON.md),
 * so that any Chrome trace reaches pprof, folded, Perfetto and systrace; and the
 * sampled stacks of Chrome DevTools and Node CPU profiles and of Linux perf.
 *
 * Object form {"traceEvents":[...]} or a bare array; phases B/E, X, i/I, C,
 * b/e, M (process_name, thread_name, thread_sort_index), P (Profile and
 * ProfileChunk, and P samples), and those with an IR form that catapult's and
 * Perfetto's importers read: legacy async S/F (async slices, as b/e: the
 * cookie scoped alike; an end without its begin is the writers' to drop, as
 * for e), a step T/p (catapult: a part of its S/F slice titled args.step; here
 * an instant on its thread of that name, else the event's), n (nestable async
 * instant) and R (a mark: both peers read it as i) as instants. S, T, p, F
 * and n without an id are counted ("S without id"), as both peers drop them.
 * The tts of async events and marks is left out: it is the thread time when
 * they were written, not at their ts (Perfetto's rule for async slices; a
 * real WebView trace's marks went back 1,720 times). Streamed: a validating scanner
 * (jscan.c) walks the document (mmapped) and, in each event, decodes only
 * the members the reader uses (ph, name, ts, tts, dur, tdur, pid, tid, id,
 * sf, and args for M, C and P events), where they lie: no tree is built, so memory
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
 *
 * Sampled stacks (TCI_ACT_SAMPLE records: a stack interned root first, a weight):
 *  - the top-level "stackFrames" ({id: {name, category, parent}}) and "samples"
 *    ([{sf, ts, tid, pid, weight, name, comm}]) of Linux perf's converter
 *    (catapult's profile_chrome) and of the Trace Event Format, in any order
 *    around traceEvents. A frame is a method named as the file names it, its
 *    category in the method's file. A sample's weight is a count (default 1;
 *    perf's period: cycles for "cycles:HG"), carried as 1000 ns a unit
 *    (TCI_COUNT_NS); the trace's metadata sample-type (the samples' event name,
 *    else "samples") and sample-unit ("count") say so, and every aggregating
 *    writer shows counts of that event, its slices weighing nothing there
 *    (tc_calltree.h). Samples of another event
 *    name than the first are not converted (one profile, one unit). A sample
 *    without pid is on the thread of that tid that the events have, else on
 *    a thread of process pid = tid (as catapult reads them); its comm names
 *    the thread when no thread_name does. A P event with an sf is one sample
 *    of weight 1, as catapult reads it; a P without sf, an instant named after
 *    the event (catapult draws a one-frame "legacySample": as a sample it made
 *    a trace of slices and two P events a count profile), unless it is V8's
 *    (V8Sample, another Profile* name) or has no name: counted as "P".
 *  - DevTools CPU profiles: Profile and ProfileChunk (P) events (nodes spread
 *    over the chunks, samples with timeDeltas), a CpuProfile event's whole
 *    cpuProfile, and a .cpuprofile document (Chrome, node --cpu-prof). Each
 *    sample is on the Profile event's thread (a .cpuprofile's: one thread
 *    "main", tid 1), at startTime plus its summed deltas (which may go back:
 *    samples are sorted), weighing the time to the next sample in ns (the
 *    last: to endTime, else the profile's mean interval, else 1 ms). A frame
 *    is named functionName or "(anonymous)" in flame graphs and pprof, with
 *    " (url:line:column)" after it in its full name (1-based, as DevTools
 *    shows them), url as its file; (root), the tree's head, is left out of
 *    the stacks below it, and (program), (idle) and (garbage collector) stay
 *    frames of their own, as DevTools shows them.
 *  When a document has both, the CPU profiles' samples (time) are converted
 *  and the others are counted as not converted.
 * Samples are held in an external sort (pending) until the document is read,
 * for the frames, threads and profiles they name may come after them; the
 * frame, node, profile and sample-thread tables grow with distinct entries,
 * never with the samples.
 *
 * Nothing is left out unsaid: every element of traceEvents and samples (and
 * every sample of a CPU profile) is converted, a bad-line warning (no
 * numeric ts), or counted by kind through tci_not_converted: phases the IR
 * has no form for (flows s/t/f, objects O/N/D, contexts ( ), memory dumps v,
 * clock syncs c: the phase), async events without an id, M events other than the
 * names ("M process_labels"; a thread_sort_index whose order is not the
 * threads' order of appearance in its process), a C event without a numeric
 * series ("C"), elements that are not events, samples whose frame or node is
 * missing ("sample without frame") or whose profile has no Profile event, and
 * a systemTraceEvents text.
 */
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_jscan.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_readers.h"
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
enum { EV_PH, EV_NAME, EV_TS, EV_TTS, EV_DUR, EV_TDUR, EV_PID, EV_TID, EV_ID, EV_ID2, EV_ARGS, EV_SF, EV__N };
static const char *const event_keys[EV__N] = {"ph", "name", "ts", "tts", "dur", "tdur", "pid", "tid", "id", "id2", "args",
                                              "sf"};

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

/* Per thread while walking: its B slices not closed yet, and its thread_sort_index. */
typedef struct jthr {
    open_stack open;
    int64_t sort;             /* the last sort_index given (when sort_events) */
    uint32_t sort_events;     /* thread_sort_index events that gave one */
} jthr;

/* A frame of a sampled stack: an entry of stackFrames (FS_FRAME) or a node of a CPU
 * profile (FS_NODE), by its key in that space; its parent by key, found at the end. */
enum { FS_FRAME = 0, FS_NODE = 1 };
enum { FR_OPEN = 0, FR_DONE, FR_BROKEN, FR_WALK };
typedef struct jframe {
    uint64_t parent;          /* its parent's key (has_parent) */
    uint32_t method;          /* TCI_NONE: named so far only as a parent or a child */
    uint32_t stack;           /* FR_DONE: its stack; TCI_NONE for a profile's head */
    uint8_t space, state, has_parent, root; /* root: a node named "(root)" */
} jframe;

/* A CPU profile: a Profile event's (pid, id), a CpuProfile event's, or a .cpuprofile's. */
typedef struct jprofile {
    int64_t pid;
    uint64_t id;
    uint32_t thread;          /* its samples' thread (the Profile event's); TCI_NONE: no Profile yet */
    uint8_t start_rank;       /* where start came from: 0 nowhere, 1 a chunk's cpuProfile, 2 the profile, 3 a chunk */
    uint8_t end_rank;         /* where end came from, alike */
    int64_t start, end;       /* startTime, endTime (ns); end TCI_NO_TIME: none given */
    int64_t event_ts;         /* the Profile event's ts (ns): its start when no startTime is given */
    int64_t cum;              /* its time deltas so far, summed (ns) */
    int64_t lo, hi;           /* its earliest and latest sample, from its start */
    uint64_t n;               /* its samples */
} jprofile;

/* The thread of a top-level sample: its (pid, tid) as the sample gives it, resolved at the end. */
typedef struct jsthread {
    int64_t pid, tid;
    bool has_pid;
    uint32_t thread;
    char *comm;               /* the latest comm it gave (perf's name of the thread), malloc'd */
    size_t comm_len;
} jsthread;

/* A sample until the document is read: its frame, thread and profile may come after it. */
enum { SK_TOP = 0, SK_P = 1, SK_PROFILE = 2 };
typedef struct jpend {
    int64_t ts;               /* ns: absolute (SK_TOP, SK_P); from its profile's start (SK_PROFILE) */
    double weight;            /* SK_TOP, SK_P: the record's value (the count, 1000 a unit) */
    uint64_t frame;           /* the key of its frame (SK_TOP, SK_P) or node (SK_PROFILE) */
    uint64_t order;           /* made in this order: the tie-break */
    uint64_t at;              /* input offset, for messages */
    uint32_t owner;           /* SK_TOP: its sample thread; SK_P: its thread; SK_PROFILE: its profile */
    uint8_t kind;
} jpend;

typedef struct jwalk {
    tci_idmap process_of;     /* pid -> process (exact: the pid is the key) */
    tci_idmap tid_index;      /* tid -> a dense index of the tids seen */
    tci_idmap thread_of;      /* process << 32 | tid index -> thread */
    tci_idmap thread_by_tid;  /* tid -> the first thread of that tid (samples without a pid) */
    uint32_t n_tids;
    jthr *th;                 /* per thread */
    uint32_t n_threads;       /* slots in th (empty ones included) */
    uint64_t seq;             /* records made so far */
    char *name;               /* counter series names: "name.series" */
    size_t name_cap;
    jtext text[3];            /* decoded strings: an event's name, a pid or tid, one other member */
    jtext ftext[4];           /* a frame's name, its url or category, a sample's comm, a frame id */
    char *fbuf;               /* a frame's text as the method table gets it */
    size_t fbuf_cap;
    uint64_t lone;            /* unpaired surrogates replaced so far */
    uint64_t lone_at;         /* the event of the first one */
    struct name_slot *names;  /* recent slice names and their methods (NAME_SLOTS) */
    int64_t last_pid, last_tid; /* the thread of the last event, when last_thread is not TCI_NONE */
    uint32_t last_thread;
    uint64_t elements;        /* elements of traceEvents and samples, events or not */
    uint64_t order;           /* events read so far: the slices' file order */
    /* sampled stacks */
    jframe *frames;
    uint32_t n_frames, cap_frames;
    tci_idmap frame_ids, node_ids; /* key -> frame, per space */
    uint32_t *chain;          /* scratch: the frames walked up from one */
    uint32_t cap_chain;
    jprofile *profiles;
    uint32_t n_profiles, cap_profiles;
    tci_idmap profile_ids;    /* hash of (pid, id) -> profile (checked) */
    jsthread *sthreads;
    uint32_t n_sthreads, cap_sthreads;
    tci_idmap sthread_ids;    /* hash of (has_pid, pid, tid) -> sample thread (checked) */
    tci_extsort *pend;        /* the samples, until the document is read */
    uint64_t n_pend[3];       /* per kind */
    uint64_t sample_order;
    char *sample_name;        /* the first top-level sample's name: the samples' event (malloc'd) */
    size_t sample_name_len;
    bool have_sample_name;
    bool frames_seen;         /* a stackFrames object was read */
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

/* A pid or tid v (key names it in messages; d its value when the scanner read it). */
static int id_value(tci_rctx *r, jwalk *w, tci_jspan v, const double *d, const char *key, bool pid, uint64_t at,
                    int64_t *id)
{
    double x = 0;
    *id = 0;
    if (v.p && v.p[0] != '"' && (d || tci_jspan_number(v, &x))) {
        x = d ? *d : x;
        if (fabs(x) < 9.0e18)
            *id = (int64_t)x;
    } else if (tci_jspan_is_string(v)) {
        jtext *t = &w->text[1];
        int rc = text_of(r, w, v, t, at);
        if (rc < 0)
            return rc;
        char *end;
        errno = 0;
        long long n = strtoll(t->p, &end, 10);
        bool number = t->len && end == t->p + t->len && errno != ERANGE;
        *id = number ? n : id_of_text(t->p, t->len);
    }
    if (*id < 0)
        return tci_error(r->diag, TC_ERR_FORMAT, "json", at,
                         "\"%s\" is %lld: a %s id is never negative (Perfetto reads it as 0); refused rather than "
                         "changed", key, (long long)*id, pid ? "process" : "thread");
    return TC_OK;
}

/* pid/tid: a number, a numeric string, or any string (then a stable id of its own);
 * absent: 0. A negative one is refused: no viewer keeps it, and it must not wrap. */
static int id_of(tci_rctx *r, jwalk *w, const jevent *e, int which, int64_t *id)
{
    return id_value(r, w, e->v[which], e->numbered >> which & 1 ? &e->num[which] : NULL, event_keys[which],
                    which == EV_PID, e->at, id);
}

/* The members of the object v (an event's args) named in keys, as tci_jscan_object finds them. */
static void members_of(tci_rctx *r, tci_jspan v, const char *const *keys, size_t n, tci_jspan *out)
{
    tci_jscan sc = {v.p, v.p ? v.n : 0, 0, r->source, 0, false};
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
    if (tci_idmap_get(&w->thread_by_tid, (uint64_t)tid) == TCI_NONE &&
        tci_idmap_put(&w->thread_by_tid, (uint64_t)tid, th) != 0)
        return TCI_NONE;
    uint32_t had = w->n_threads; /* its open stack: the array doubles, new slots empty */
    if (th >= had) {
        if (tci_grow((void **)&w->th, &w->n_threads, th, sizeof *w->th) != 0)
            return TCI_NONE;
        memset(w->th + had, 0, (size_t)(w->n_threads - had) * sizeof *w->th);
    }
    return th;
}

static bool text_is(const jtext *t, const char *lit) { return t->len == strlen(lit) && !memcmp(t->p, lit, t->len); }

/* An input record read and not converted, counted by kind (the summary says them once). */
static int not_converted(tci_rctx *r, uint64_t at, const char *kind, size_t len)
{
    char k[TCI_LEFT_NAME_MAX];
    size_t n = len < sizeof k ? len : sizeof k - 1;
    for (size_t i = 0; i < n; i++)
        k[i] = kind[i] ? kind[i] : '?'; /* a NUL would end the kind's name */
    tci_not_converted(r->diag, "json", at, k, n);
    return TC_OK;
}

/* The kind "prefix text" ("M process_labels", "sample cycles:HG"), cut to fit. */
static int not_converted_as(tci_rctx *r, uint64_t at, const char *prefix, const char *text, size_t len)
{
    char k[TCI_LEFT_NAME_MAX];
    size_t p = strlen(prefix), n = len < sizeof k - 1 - p ? len : sizeof k - 1 - p;
    memcpy(k, prefix, p);
    memcpy(k + p, text, n);
    return not_converted(r, at, k, p + n);
}

/* thread_sort_index: kept per thread, and converted at the end when the order it gives is
 * the order in which its process's threads appear (the order the IR keeps them in, and our
 * writer's sort_index); else counted as not converted (sort_order_check). */
static int sort_event(tci_rctx *r, jwalk *w, const jevent *e, const jtext *name)
{
    static const char *const keys[] = {"sort_index"};
    tci_jspan value;
    double v;
    members_of(r, e->v[EV_ARGS], keys, 1, &value);
    int64_t pid, tid;
    int rc;
    if (!value.p || value.p[0] == '"' || !tci_jspan_number(value, &v) || fabs(v) > 9.0e18)
        return not_converted_as(r, e->at, "M ", name->p, name->len);
    if ((rc = id_of(r, w, e, EV_PID, &pid)) != TC_OK || (rc = id_of(r, w, e, EV_TID, &tid)) != TC_OK)
        return rc;
    uint32_t th = thread_of(r, w, pid, tid);
    if (th == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "json", e->at);
    w->th[th].sort = (int64_t)v;
    w->th[th].sort_events++;
    return TC_OK;
}

/* M events that name a process or a thread (args.name), and thread_sort_index; the others
 * are not in the IR: counted as "M <name>". */
static int metadata_event(tci_rctx *r, jwalk *w, const jevent *e, const jtext *name)
{
    bool process = text_is(name, "process_name");
    if (text_is(name, "thread_sort_index"))
        return sort_event(r, w, e, name);
    if (!process && !text_is(name, "thread_name"))
        return not_converted_as(r, e->at, "M ", name->p, name->len);
    static const char *const keys[] = {"name"};
    tci_jspan value;
    members_of(r, e->v[EV_ARGS], keys, 1, &value);
    jtext *v = &w->text[2];
    int rc = text_of(r, w, value, v, e->at);
    if (rc < 0)
        return rc;
    if (!rc) /* no args.name: nothing to name it */
        return not_converted_as(r, e->at, "M ", name->p, name->len);
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

/* At the end: the thread_sort_index events of a process whose threads they do not order as
 * they appear (the IR's order) are counted as not converted; the others were kept. Ties are
 * taken as kept (Chrome orders them by name). */
static int sort_order_check(tci_rctx *r, jwalk *w)
{
    const tci_trace *t = r->trace;
    uint32_t n = w->n_threads < t->n_threads ? w->n_threads : t->n_threads, np = t->n_processes;
    bool any = false;
    for (uint32_t i = 0; i < n && !any; i++)
        any = w->th[i].sort_events != 0;
    if (!any)
        return TC_OK;
    int64_t *last = tci_calloc(np, sizeof *last);
    uint8_t *state = tci_calloc(np, 1); /* 1: a sort index seen, 2: out of order */
    if (!last || !state) {
        free(last);
        free(state);
        return nomem(r);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = t->threads[i].process;
        if (!w->th[i].sort_events)
            continue;
        if (state[p] && w->th[i].sort < last[p])
            state[p] = 2;
        else if (state[p] != 2)
            state[p] = 1;
        last[p] = w->th[i].sort;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; state[t->threads[i].process] == 2 && k < w->th[i].sort_events; k++)
            not_converted(r, UINT64_MAX, "M thread_sort_index", 19);
    free(last);
    free(state);
    return TC_OK;
}

/* ---- slices: B/E pairs and X events become intervals, per thread ----------------- */

static int slice_begin(tci_rctx *r, jwalk *w, const jslice *s, uint64_t at)
{
    open_stack *st = &w->th[s->thread].open;
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
    open_stack *st = &w->th[thread].open;
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
    m->sc = (tci_jscan){v.p, v.p ? v.n : 0, 1, r->source, 0, false}; /* past the '{' or '[' (validated with the event) */
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

/* A counter event: one counter per numeric series, "name" alone or "name.series". One
 * without a numeric series is counted as not converted ("C"). */
static int counter_event(tci_rctx *r, jreader *j, jwalk *w, const jevent *e, const jtext *name, jrec rec)
{
    tci_trace *t = r->trace;
    tci_jspan args = e->v[EV_ARGS], key, value;
    uint64_t made = w->seq;
    if (!args.p || (args.p[0] != '{' && args.p[0] != '['))
        return not_converted(r, e->at, "C", 1);
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
    return w->seq != made ? TC_OK : not_converted(r, e->at, "C", 1);
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

/* A legacy async step (T: into, p: past; catapult draws it as a part of the S/F slice of its
 * name and id, titled args.step): an instant on its thread, named after its step, else after
 * the event (*method, already its name's). */
static int step_method(tci_rctx *r, jwalk *w, const jevent *e, uint32_t *method)
{
    static const char *const keys[] = {"step"};
    tci_jspan step;
    members_of(r, e->v[EV_ARGS], keys, 1, &step);
    jtext *t = &w->text[2];
    int rc = step.p ? text_of(r, w, step, t, e->at) : 0;
    if (rc <= 0 || !t->len)
        return rc < 0 ? rc : TC_OK;
    if ((*method = timeline_method(r->trace, w, t->p, t->len)) == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "json", e->at);
    return TC_OK;
}

/* ---- sampled stacks: frames and their methods --------------------------------------------- */

/* s[0, n) at w->fbuf + *len, a NUL byte as U+FFFD (as the tables store it: a frame's text is
 * compared with the stored one). false: no memory. */
static bool fbuf_put(jwalk *w, size_t *len, const char *s, size_t n)
{
    size_t nuls = 0;
    for (const char *p = n ? memchr(s, 0, n) : NULL; p; p = memchr(p + 1, 0, n - (size_t)(p + 1 - s)))
        nuls++;
    size_t need = *len + n + 2 * nuls + 1;
    if (need > w->fbuf_cap) {
        size_t cap = w->fbuf_cap ? w->fbuf_cap : 256;
        while (cap < need)
            cap *= 2;
        char *b = realloc(w->fbuf, cap);
        if (!b)
            return false;
        w->fbuf = b;
        w->fbuf_cap = cap;
    }
    char *o = w->fbuf + *len;
    for (size_t i = 0; i < n; i++) {
        if (s[i]) {
            *o++ = s[i];
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
        }
    }
    *len = (size_t)(o - w->fbuf);
    w->fbuf[*len] = 0;
    return true;
}

static bool stored_is(const char *stored, const char *s, size_t n)
{
    return stored && strlen(stored) == n && !memcmp(stored, s, n);
}

/* The method of a sampled frame: text (no NUL byte), its first short_len bytes the name that
 * flame graphs and pprof show, from file at line (-1: unknown). One method per distinct
 * (text, file, line, salt), so that two functions that read alike (anonymous ones of one
 * script) stay apart where the writers key by method. Its id lies among the names' ids (top
 * bit set); a collision with another entry tries the next seed, as names do. */
static uint32_t frame_method(tci_trace *t, const char *text, size_t len, size_t short_len, const char *file,
                             size_t file_len, int32_t line, uint64_t salt)
{
    size_t shown = short_len < len ? short_len : len;
    for (uint64_t seed = 1;; seed++) {
        uint64_t h = tci_text_hash(text, len, seed);
        h = tci_text_hash(file ? file : "", file ? file_len : 0, h ^ (file ? 0x5bd1e995u : 0));
        h = (h ^ (uint64_t)(uint32_t)line ^ salt * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
        uint64_t id = (h ^ h >> 31) | (uint64_t)1 << 63;
        uint32_t i = tci_idmap_get(&t->method_ids, id);
        if (i == TCI_NONE) {
            if (tci_trace_define_method(t, id, "", 0, text, len, NULL, 0, file, file_len, line) != TC_OK ||
                (i = tci_idmap_get(&t->method_ids, id)) == TCI_NONE)
                return TCI_NONE;
            t->methods[i].plain_name = true; /* shown as it is, as slice names are */
            t->methods[i].short_len = shown < len ? (uint32_t)shown : 0;
            return i;
        }
        const tci_method *m = &t->methods[i];
        if (m->plain_name && m->line == line && stored_is(m->name, text, len) &&
            (file ? stored_is(m->file, file, file_len) : !m->file) && (m->short_len ? m->short_len : len) == shown)
            return i;
    }
}

/* An id of stackFrames, or an sf, as one key. The ids are an object's keys, so the number 7
 * and the text "7" are one id, as JavaScript reads stackFrames[sf]: a whole number from 0 (as
 * a number, or as its decimal text) is itself, any other text a hash of it, top bit set.
 * 1: *key, 0: none (neither a number nor a string), or an error. */
static int frame_key(tci_rctx *r, jwalk *w, tci_jspan v, uint64_t at, uint64_t *key)
{
    double d;
    if (!v.p)
        return 0;
    if (v.p[0] != '"') {
        if (!tci_jspan_number(v, &d))
            return 0;
        *key = d >= 0 && d < 9.2e18 && d == floor(d) ? (uint64_t)d : tci_text_hash(v.p, v.n, 0) | (uint64_t)1 << 63;
        return 1;
    }
    jtext *t = &w->ftext[3];
    int rc = text_of(r, w, v, t, at);
    if (rc <= 0)
        return rc;
    uint64_t n = 0;
    bool digits = t->len && t->len <= 18 && (t->len == 1 || t->p[0] != '0');
    for (size_t i = 0; digits && i < t->len; i++) {
        digits = t->p[i] >= '0' && t->p[i] <= '9';
        n = n * 10 + (uint64_t)(t->p[i] - '0');
    }
    *key = digits ? n : tci_text_hash(t->p, t->len, 0) | (uint64_t)1 << 63;
    return 1;
}

/* The frame of key in space, made (empty) when absent and make. TCI_NONE: none, or no memory. */
static uint32_t frame_at(jwalk *w, uint8_t space, uint64_t key, bool make)
{
    tci_idmap *map = space == FS_NODE ? &w->node_ids : &w->frame_ids;
    uint32_t f = tci_idmap_get(map, key);
    if (f != TCI_NONE || !make)
        return f;
    if (w->n_frames >= UINT32_MAX - 1 ||
        tci_grow((void **)&w->frames, &w->cap_frames, w->n_frames, sizeof *w->frames) != 0 ||
        tci_idmap_put(map, key, w->n_frames) != 0)
        return TCI_NONE;
    w->frames[w->n_frames] = (jframe){.method = TCI_NONE, .stack = TCI_NONE, .space = space};
    return w->n_frames++;
}

/* One entry of stackFrames, id -> {name, category, parent}: a method named as the entry
 * names it, its category as its file (one method per name and category). The first entry
 * of an id counts, as a lookup in a parsed object finds it. */
static int one_frame(tci_rctx *r, jwalk *w, tci_jspan id, tci_jspan v, uint64_t at)
{
    static const char *const keys[] = {"name", "category", "parent"};
    tci_jspan m[3];
    uint64_t key, parent = 0;
    int rc = frame_key(r, w, id, at, &key);
    if (rc <= 0 || v.p[0] != '{')
        return rc < 0 ? rc : TC_OK; /* no frame: what names it is counted where it does */
    uint32_t f = frame_at(w, FS_FRAME, key, true);
    if (f == TCI_NONE)
        return nomem(r);
    if (w->frames[f].method != TCI_NONE)
        return TC_OK;
    members_of(r, v, keys, 3, m);
    jtext *name = &w->ftext[0], *cat = &w->ftext[1];
    size_t len = 0;
    if ((rc = text_of(r, w, m[0], name, at)) < 0)
        return rc;
    if (!fbuf_put(w, &len, rc ? name->p : "[unnamed]", rc ? name->len : 9))
        return nomem(r);
    size_t name_len = len;
    if ((rc = text_of(r, w, m[1], cat, at)) < 0)
        return rc;
    bool has_cat = rc && cat->len;
    if (has_cat && !fbuf_put(w, &len, cat->p, cat->len))
        return nomem(r);
    uint32_t method = frame_method(r->trace, w->fbuf, name_len, name_len, has_cat ? w->fbuf + name_len : NULL,
                                   len - name_len, -1, 0);
    if (method == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "json", at);
    if ((rc = frame_key(r, w, m[2], at, &parent)) < 0)
        return rc;
    jframe *fr = &w->frames[f];
    fr->method = method;
    fr->has_parent = rc == 1;
    fr->parent = parent;
    return TC_OK;
}

/* ---- sampled stacks: CPU profiles ------------------------------------------------------- */

/* The elements of an array, one at a time (validated with what holds it). drop: a large
 * array of the document read again at its end: the pages behind go back as it goes (two such
 * arrays are read side by side, so not through the scanner's release, which goes forward). */
typedef struct jarr {
    tci_jscan sc;
    bool open;
    size_t dropped;
} jarr;

static void arr_start(jarr *a, tci_jspan v)
{
    a->open = v.p && v.n && v.p[0] == '[';
    a->sc = (tci_jscan){v.p, a->open ? v.n : 0, a->open, NULL, 0, false};
    a->dropped = 0;
    if (a->open)
        tci_jscan_ws(&a->sc);
}

static bool arr_next(tci_rctx *r, jarr *a, tci_jspan *out, bool drop)
{
    tci_jscan *sc = &a->sc;
    if (!a->open || sc->pos >= sc->n || sc->s[sc->pos] == ']')
        return false;
    size_t start = sc->pos;
    if (!tci_jscan_value(sc)) {
        a->open = false;
        return false;
    }
    *out = (tci_jspan){sc->s + start, sc->pos - start};
    tci_jscan_ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == ',')
        sc->pos++;
    tci_jscan_ws(sc);
    if (drop && sc->pos - a->dropped >= ((size_t)8 << 20)) {
        uint64_t base = (uint64_t)(sc->s - (const char *)r->data);
        tci_source_drop(r->source, base + a->dropped, base + start);
        a->dropped = start;
    }
    return true;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ x >> 33;
}

#define MAX_PROFILES ((uint32_t)1 << 23) /* node keys: profile << 40 | node id */

static int new_profile(tci_rctx *r, jwalk *w, int64_t pid, uint64_t id, uint32_t *out)
{
    if (w->n_profiles >= MAX_PROFILES)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", UINT64_MAX, "more than %u CPU profiles", MAX_PROFILES);
    if (tci_grow((void **)&w->profiles, &w->cap_profiles, w->n_profiles, sizeof *w->profiles) != 0)
        return nomem(r);
    w->profiles[w->n_profiles] = (jprofile){.pid = pid, .id = id, .thread = TCI_NONE, .end = TCI_NO_TIME,
                                            .event_ts = TCI_NO_TIME};
    *out = w->n_profiles++;
    return TC_OK;
}

/* The profile of a Profile or ProfileChunk event: its (pid, id) ((pid, tid) without an id),
 * made when new. */
static int profile_of(tci_rctx *r, jwalk *w, const jevent *e, uint32_t *out)
{
    int64_t pid, tid;
    uint64_t id;
    double d;
    int rc;
    if ((rc = id_of(r, w, e, EV_PID, &pid)) != TC_OK || (rc = id_of(r, w, e, EV_TID, &tid)) != TC_OK)
        return rc;
    tci_jspan v = e->v[EV_ID];
    if (tci_jspan_is_string(v)) {
        jtext *t = &w->text[2];
        if ((rc = text_of(r, w, v, t, e->at)) < 0)
            return rc;
        id = (uint64_t)id_of_text(t->p, t->len);
    } else if (v.p && tci_jspan_number(v, &d)) {
        id = id_of_number(d);
    } else {
        id = mix64((uint64_t)tid) | (uint64_t)1 << 63;
    }
    for (uint64_t seed = 0;; seed++) {
        uint64_t h = mix64(mix64((uint64_t)pid ^ seed * 0x9e3779b97f4a7c15ull) ^ id);
        uint32_t p = tci_idmap_get(&w->profile_ids, h);
        if (p == TCI_NONE) {
            if ((rc = new_profile(r, w, pid, id, &p)) != TC_OK)
                return rc;
            if (tci_idmap_put(&w->profile_ids, h, p) != 0)
                return nomem(r);
            *out = p;
            return TC_OK;
        }
        if (w->profiles[p].pid == pid && w->profiles[p].id == id) {
            *out = p;
            return TC_OK;
        }
    }
}

/* A time in µs (a number or a numeric string) as ns; false when absent or past 146 years. */
static bool us_to_ns(tci_jspan v, int64_t *out)
{
    double us;
    if (!tci_jspan_number(v, &us) || fabs(us) > 4.6e15)
        return false;
    *out = llround(us * 1000.0);
    return true;
}

/* startTime and endTime of a profile, where given. rank: who says it (a chunk's cpuProfile 1,
 * the Profile event or a whole profile 2, a chunk's data 3, which speedscope also takes over
 * the Profile's); the start and the end of the highest rank count (the last of a rank). An
 * end of a lower rank than the start is not used: it may be on another clock (a Profile
 * at startTime 0 whose chunk's cpuProfile gives the process's own times). */
static void profile_times(jprofile *p, tci_jspan start, tci_jspan end, uint8_t rank)
{
    int64_t ns;
    if (rank >= p->start_rank && us_to_ns(start, &ns)) {
        p->start = ns;
        p->start_rank = rank;
    }
    if (rank >= p->end_rank && us_to_ns(end, &ns)) {
        p->end = ns;
        p->end_rank = rank;
    }
}

/* A node's key: its profile and its id (a whole number below 2^40). */
static bool node_key(uint32_t prof, tci_jspan v, uint64_t *key)
{
    double d;
    if (!v.p || !tci_jspan_number(v, &d) || d < 0 || d >= 1099511627776.0 || d != floor(d) || prof >= MAX_PROFILES)
        return false;
    *key = (uint64_t)prof << 40 | (uint64_t)d;
    return true;
}

/* A call frame (functionName, url, lineNumber, columnNumber, scriptId) as a method:
 * "functionName: (url:line:column)", as a Java method is "pkg.Class.method: (sig)ret" (the
 * one form whose part before ": (" every output and the IR text take as the short name),
 * its name part ("(anonymous)" for an empty one) what flame graphs and pprof show, url its
 * file, line and column from 1 (DevTools' count from 0). The column and scriptId keep apart
 * the functions that read alike. */
static uint32_t js_method(tci_rctx *r, jwalk *w, const tci_jspan *cf, uint64_t at, int *rc, bool *root)
{
    jtext *fn = &w->ftext[0], *url = &w->ftext[1];
    int a = text_of(r, w, cf[0], fn, at), b = a < 0 ? a : text_of(r, w, cf[1], url, at);
    if (a < 0 || b < 0) {
        *rc = a < 0 ? a : b;
        return TCI_NONE;
    }
    double line = -1, col = -1;
    if (!cf[2].p || !tci_jspan_number(cf[2], &line) || !(line >= 0 && line < 2e9))
        line = -1;
    if (!cf[3].p || !tci_jspan_number(cf[3], &col) || !(col >= 0 && col < 2e9))
        col = -1;
    uint64_t salt = (cf[4].p ? tci_text_hash(cf[4].p, cf[4].n, 7) : 0) ^ (uint64_t)(int64_t)(col + 2);
    bool named = a && fn->len;
    size_t len = 0, file_at = 0, file_len = 0;
    if (!fbuf_put(w, &len, named ? fn->p : "(anonymous)", named ? fn->len : 11))
        goto nomem;
    size_t name_len = len;
    *root = named && text_is(fn, "(root)");
    if (b && url->len) {
        char num[48] = "";
        if (line >= 0 && col >= 0)
            snprintf(num, sizeof num, ":%d:%d", (int)line + 1, (int)col + 1);
        else if (line >= 0)
            snprintf(num, sizeof num, ":%d", (int)line + 1);
        if (!fbuf_put(w, &len, ": (", 3))
            goto nomem;
        file_at = len;
        if (!fbuf_put(w, &len, url->p, url->len))
            goto nomem;
        file_len = len - file_at;
        if (!fbuf_put(w, &len, num, strlen(num)) || !fbuf_put(w, &len, ")", 1))
            goto nomem;
    }
    uint32_t m = frame_method(r->trace, w->fbuf, len, name_len, file_len ? w->fbuf + file_at : NULL, file_len,
                              line >= 0 ? (int32_t)line + 1 : -1, salt);
    if (m == TCI_NONE)
        *rc = tci_trace_fail(r->trace, r->diag, "json", at);
    return m;
nomem:
    *rc = nomem(r);
    return TCI_NONE;
}

/* One node of a CPU profile: {id, callFrame, parent} (traces), {id, callFrame, children}
 * (.cpuprofile, CpuProfile), or both; the first definition of an id, and the first parent a
 * node is given, count. */
static int one_node(tci_rctx *r, jwalk *w, uint32_t prof, tci_jspan node, uint64_t at)
{
    static const char *const keys[] = {"id", "callFrame", "parent", "children"};
    static const char *const cf_keys[] = {"functionName", "url", "lineNumber", "columnNumber", "scriptId"};
    tci_jspan v[4], cf[5];
    uint64_t key, pkey;
    if (node.p[0] != '{')
        return TC_OK;
    members_of(r, node, keys, 4, v);
    if (!node_key(prof, v[0], &key))
        return TC_OK; /* no id that a sample could name */
    uint32_t f = frame_at(w, FS_NODE, key, true);
    if (f == TCI_NONE)
        return nomem(r);
    int rc = TC_OK;
    if (w->frames[f].method == TCI_NONE) {
        members_of(r, v[1].p ? v[1] : node, cf_keys, 5, cf); /* no callFrame: the old form, on the node */
        bool root = false;
        uint32_t m = js_method(r, w, cf, at, &rc, &root);
        if (m == TCI_NONE)
            return rc;
        w->frames[f].method = m;
        w->frames[f].root = root;
    }
    if (!w->frames[f].has_parent && node_key(prof, v[2], &pkey)) {
        w->frames[f].has_parent = 1;
        w->frames[f].parent = pkey;
    }
    jarr c;
    tci_jspan e;
    arr_start(&c, v[3]);
    while (arr_next(r, &c, &e, false)) {
        uint64_t child;
        if (!node_key(prof, e, &child))
            continue;
        uint32_t k = frame_at(w, FS_NODE, child, true);
        if (k == TCI_NONE)
            return nomem(r);
        if (!w->frames[k].has_parent) {
            w->frames[k].has_parent = 1;
            w->frames[k].parent = key;
        }
    }
    return TC_OK;
}

static int cmp_pend(const void *a, const void *b)
{
    const jpend *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->owner != y->owner) return x->owner < y->owner ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* A sample, held until the document is read. */
static int pend_add(tci_rctx *r, jwalk *w, jpend p)
{
    if (!w->pend && !(w->pend = tci_extsort_new(sizeof(jpend), cmp_pend, 0)))
        return nomem(r);
    p.order = w->sample_order++;
    w->n_pend[p.kind]++;
    if (r->opt->max_events && w->sample_order > r->opt->max_events)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", p.at, "more than %llu samples (option --max-events)",
                         (unsigned long long)r->opt->max_events);
    return tci_extsort_add(w->pend, &p) == 0 ? TC_OK : sort_error(r, "write");
}

/* The samples of a profile (node ids) and their time deltas (µs), side by side: each at
 * the deltas summed so far (absolute: the old .cpuprofile's timestamps, each the time itself). A sample without a numeric node id or delta is a bad line (a
 * delta still moves the time); a node id that no node has is kept (no frame, counted then). */
static int profile_samples(tci_rctx *r, jwalk *w, uint32_t prof, tci_jspan samples, tci_jspan deltas, bool drop,
                           bool absolute)
{
    jarr s, d;
    tci_jspan sv, dv = {NULL, 0};
    uint64_t bad = 0, first_bad = UINT64_MAX;
    int rc = TC_OK;
    arr_start(&s, samples);
    arr_start(&d, deltas);
    while (rc == TC_OK && arr_next(r, &s, &sv, drop)) {
        uint64_t at = (uint64_t)(sv.p - (const char *)r->data), key;
        double delta, id;
        bool have = arr_next(r, &d, &dv, drop) && tci_jspan_number(dv, &delta) && fabs(delta) < 4.6e12;
        jprofile *p = &w->profiles[prof];
        if (have) {
            int64_t c = (absolute ? 0 : p->cum) + llround(delta * 1000.0); /* timestamps: each the time itself */
            p->cum = c > 4600000000000000000 ? 4600000000000000000 : c < -4600000000000000000 ? -4600000000000000000 : c;
        }
        if (!have || !tci_jspan_number(sv, &id)) {
            if (!bad++)
                first_bad = at;
            continue;
        }
        if (!node_key(prof, sv, &key))
            key = UINT64_MAX; /* no node has it */
        if (!p->n || p->cum < p->lo)
            p->lo = p->cum;
        if (!p->n || p->cum > p->hi)
            p->hi = p->cum;
        p->n++;
        rc = pend_add(r, w, (jpend){.ts = p->cum, .frame = key, .at = at, .owner = prof, .kind = SK_PROFILE});
    }
    if (bad) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", first_bad,
                 "%llu samples of a CPU profile without a numeric node id or time delta; skipped",
                 (unsigned long long)bad);
        tci_count(r->diag, TCI_FIG_BAD_LINE, bad - 1);
    }
    return rc;
}

/* The old .cpuprofile's times: its samples' timestamps are µs on the clock itself (no start is
 * added to them), its startTime and endTime seconds; endTime ends the last sample when it is
 * not before it (Node writes them cut to whole seconds: then the mean interval does). */
static void old_profile_end(jprofile *p, tci_jspan end)
{
    double sec;
    if (end.p && tci_jspan_number(end, &sec) && sec >= 0 && sec < 4.6e9) {
        p->end = llround(sec * 1e9);
        p->end_rank = 2;
    }
}

/* The old .cpuprofile's call tree (Node 10 and older, Chrome's first DevTools profiles): "head",
 * a node whose "children" are the nodes themselves, nested, not ids. Walked with a stack of its
 * own (of spans into the input: no more entries than nodes, as the frames table has), never by
 * recursion, however deep; each node is read by one_node, and is its children's parent. */
typedef struct jhead_item {
    tci_jspan node;
    uint64_t parent; /* UINT64_MAX: the head */
} jhead_item;

static int head_nodes(tci_rctx *r, jwalk *w, uint32_t prof, tci_jspan head)
{
    static const char *const keys[] = {"id", "children"};
    jhead_item *stack = NULL;
    size_t n = 0, cap = 0;
    int rc = TC_OK;
    if (!(stack = malloc(16 * sizeof *stack)))
        return nomem(r);
    cap = 16;
    stack[n++] = (jhead_item){head, UINT64_MAX};
    while (n && rc == TC_OK) {
        jhead_item it = stack[--n];
        uint64_t at = (uint64_t)(it.node.p - (const char *)r->data), key;
        tci_jspan v[2];
        if ((rc = one_node(r, w, prof, it.node, at)) != TC_OK)
            break;
        members_of(r, it.node, keys, 2, v);
        if (!node_key(prof, v[0], &key))
            continue; /* no id: neither a sample's frame nor a parent */
        uint32_t f = frame_at(w, FS_NODE, key, true);
        if (f == TCI_NONE) {
            rc = nomem(r);
            break;
        }
        if (it.parent != UINT64_MAX && !w->frames[f].has_parent) {
            w->frames[f].has_parent = 1;
            w->frames[f].parent = it.parent;
        }
        jarr c;
        tci_jspan e;
        arr_start(&c, v[1]);
        while (rc == TC_OK && arr_next(r, &c, &e, false)) {
            if (e.p[0] != '{')
                continue; /* an id: one_node took it */
            if (n == cap) {
                jhead_item *more = realloc(stack, 2 * cap * sizeof *stack);
                if (!more) {
                    rc = nomem(r);
                    break;
                }
                stack = more;
                cap *= 2;
            }
            stack[n++] = (jhead_item){e, key};
        }
    }
    free(stack);
    return rc;
}

/* A whole CPU profile (a CpuProfile event's cpuProfile, a .cpuprofile document): its nodes (a
 * list, or the old form's nested head) and its samples (with time deltas, or the old form's
 * timestamps), on thread th. */
static int whole_profile(tci_rctx *r, jwalk *w, uint32_t th, int64_t pid, tci_jspan nodes, tci_jspan samples,
                         tci_jspan deltas, tci_jspan start, tci_jspan end, bool drop, tci_jspan head, tci_jspan stamps)
{
    uint32_t p;
    int rc = new_profile(r, w, pid, 0, &p);
    if (rc != TC_OK)
        return rc;
    w->profiles[p].thread = th;
    bool absolute = !deltas.p && stamps.p;
    if (!absolute)
        profile_times(&w->profiles[p], start, end, 2);
    else
        old_profile_end(&w->profiles[p], end);
    uint64_t max = r->opt->max_json ? r->opt->max_json : TCI_DEFAULT_MAX_JSON;
    jarr a;
    tci_jspan e;
    arr_start(&a, nodes);
    while (rc == TC_OK && arr_next(r, &a, &e, drop)) {
        uint64_t at = (uint64_t)(e.p - (const char *)r->data);
        if (e.n > max)
            return tci_error(r->diag, TC_ERR_LIMIT, "json", at,
                             "a node of %zu bytes is above the limit of %llu for one event (option --max-json)", e.n,
                             (unsigned long long)max);
        rc = one_node(r, w, p, e, at);
    }
    if (rc == TC_OK && !nodes.p && head.p && head.p[0] == '{')
        rc = head_nodes(r, w, p, head);
    return rc != TC_OK ? rc : profile_samples(r, w, p, samples, absolute ? stamps : deltas, drop, absolute);
}

/* A CpuProfile event (Chrome before the chunks): args.data.cpuProfile {nodes, startTime,
 * endTime, samples, timeDeltas}, on the event's thread. */
static int cpu_profile_event(tci_rctx *r, jwalk *w, const jevent *e, uint32_t th, int64_t pid)
{
    static const char *const dkeys[] = {"cpuProfile", "timeDeltas"};
    static const char *const ckeys[] = {"nodes", "samples", "timeDeltas", "startTime", "endTime"};
    static const char *const akeys[] = {"data"};
    tci_jspan data, d[2], c[5];
    members_of(r, e->v[EV_ARGS], akeys, 1, &data);
    members_of(r, data, dkeys, 2, d);
    if (!d[0].p || d[0].p[0] != '{')
        return TC_OK;
    members_of(r, d[0], ckeys, 5, c);
    return whole_profile(r, w, th, pid, c[0], c[1], c[2].p ? c[2] : d[1], c[3], c[4], false, (tci_jspan){NULL, 0},
                         (tci_jspan){NULL, 0});
}

/* A Profile event: its profile's thread (the samples of its chunks are on it: the sampler
 * writes the chunks from a thread of its own) and start. The first of an id counts. */
static int profile_event(tci_rctx *r, jwalk *w, const jevent *e)
{
    static const char *const akeys[] = {"data"}, *const keys[] = {"startTime", "endTime"};
    tci_jspan data, v[2];
    int64_t pid, tid, ts;
    uint32_t p, th;
    int rc;
    if ((rc = profile_of(r, w, e, &p)) != TC_OK)
        return rc;
    if (w->profiles[p].thread != TCI_NONE)
        return TC_OK;
    if ((rc = id_of(r, w, e, EV_PID, &pid)) != TC_OK || (rc = id_of(r, w, e, EV_TID, &tid)) != TC_OK)
        return rc;
    if ((th = thread_of(r, w, pid, tid)) == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "json", e->at);
    jprofile *pr = &w->profiles[p];
    pr->thread = th;
    if (ns_of(e, EV_TS, &ts))
        pr->event_ts = ts;
    members_of(r, e->v[EV_ARGS], akeys, 1, &data);
    members_of(r, data, keys, 2, v);
    profile_times(pr, v[0], v[1], 2);
    return TC_OK;
}

/* A ProfileChunk event: args.data {cpuProfile {nodes, samples}, timeDeltas} and maybe
 * startTime, endTime; its profile's nodes are spread over its chunks. */
static int chunk_event(tci_rctx *r, jwalk *w, const jevent *e)
{
    static const char *const akeys[] = {"data"};
    static const char *const keys[] = {"cpuProfile", "timeDeltas", "startTime", "endTime"};
    static const char *const ckeys[] = {"nodes", "samples", "timeDeltas", "startTime", "endTime"};
    tci_jspan data, d[4], c[5], node;
    uint32_t p;
    members_of(r, e->v[EV_ARGS], akeys, 1, &data);
    if (!data.p || data.p[0] != '{')
        return TC_OK; /* no data: nothing in it */
    int rc = profile_of(r, w, e, &p);
    if (rc != TC_OK)
        return rc;
    members_of(r, data, keys, 4, d);
    members_of(r, d[0], ckeys, 5, c);
    profile_times(&w->profiles[p], c[3], c[4], 1);
    profile_times(&w->profiles[p], d[2], d[3], 3);
    jarr a;
    arr_start(&a, c[0]);
    while (rc == TC_OK && arr_next(r, &a, &node, false))
        rc = one_node(r, w, p, node, e->at);
    return rc != TC_OK ? rc : profile_samples(r, w, p, c[1], d[1].p ? d[1] : c[2], false, false);
}

/* A P event: Profile and ProfileChunk (a CPU profile's start and its parts), or a sample of
 * weight 1 of the stack its sf names; without an sf, P_MARK: the caller makes it an instant
 * named after the event (catapult draws it as a one-frame "legacySample"; a sample of weight 1
 * would make a trace of thousands of slices and two such events a profile of two counts, its
 * slices weighing nothing); V8's legacy samples (V8Sample, other Profile* events), whose
 * stacks are addresses, and a P without a name are counted as not converted. */
#define P_MARK 1
static int p_event(tci_rctx *r, jwalk *w, const jevent *e, const jtext *name)
{
    if (name && text_is(name, "Profile"))
        return profile_event(r, w, e);
    if (name && text_is(name, "ProfileChunk"))
        return chunk_event(r, w, e);
    uint64_t key;
    int64_t ts, pid, tid;
    int rc = frame_key(r, w, e->v[EV_SF], e->at, &key);
    if (rc < 0)
        return rc;
    bool named = rc == 0; /* no sf: a frame of the event's name */
    if (named && (!name || !name->len || text_is(name, "V8Sample") ||
                  (name->len >= 7 && !memcmp(name->p, "Profile", 7))))
        return not_converted(r, e->at, "P", 1);
    if (named)
        return P_MARK;
    if (!ns_of(e, EV_TS, &ts)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", e->at, "a \"P\" event without a numeric ts; skipped");
        return TC_OK;
    }
    if ((rc = id_of(r, w, e, EV_PID, &pid)) != TC_OK || (rc = id_of(r, w, e, EV_TID, &tid)) != TC_OK)
        return rc;
    uint32_t th = thread_of(r, w, pid, tid);
    if (th == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "json", e->at);
    return pend_add(r, w, (jpend){.ts = ts, .weight = 1000.0, .frame = key, .at = e->at, .owner = th, .kind = SK_P});
}

/* ---- sampled stacks: the top-level samples ------------------------------------------------ */

enum { SM_SF, SM_TS, SM_TID, SM_PID, SM_WEIGHT, SM_NAME, SM_COMM, SM__N };
static const char *const sample_keys[SM__N] = {"sf", "ts", "tid", "pid", "weight", "name", "comm"};

/* The sample thread of (pid, tid) as a sample gives them (has_pid: with a pid), made when new. */
static uint32_t sthread_of(jwalk *w, bool has_pid, int64_t pid, int64_t tid)
{
    for (uint64_t seed = 0;; seed++) {
        uint64_t h = mix64(mix64((uint64_t)tid ^ seed * 0x9e3779b97f4a7c15ull) ^ (has_pid ? (uint64_t)pid * 2 + 1 : 0));
        uint32_t s = tci_idmap_get(&w->sthread_ids, h);
        if (s == TCI_NONE) {
            if (w->n_sthreads >= UINT32_MAX - 1 ||
                tci_grow((void **)&w->sthreads, &w->cap_sthreads, w->n_sthreads, sizeof *w->sthreads) != 0 ||
                tci_idmap_put(&w->sthread_ids, h, w->n_sthreads) != 0)
                return TCI_NONE;
            w->sthreads[w->n_sthreads] = (jsthread){.pid = pid, .tid = tid, .has_pid = has_pid, .thread = TCI_NONE};
            return w->n_sthreads++;
        }
        const jsthread *st = &w->sthreads[s];
        if (st->has_pid == has_pid && st->tid == tid && (!has_pid || st->pid == pid))
            return s;
    }
}

/* One element of the top-level samples: {sf, ts, tid, pid, weight, name, comm}. The first
 * sample's name is the samples' event: one of another name is not converted (a profile
 * has one unit). No numeric ts, or a weight that is not a count: a bad line. */
static int one_sample(tci_rctx *r, jwalk *w, const tci_jspan *v, const double *num, uint32_t numbered, uint64_t at)
{
    jtext *name = &w->ftext[0], *comm = &w->ftext[2];
    double x = 0;
    int rc = text_of(r, w, v[SM_NAME], name, at);
    if (rc < 0)
        return rc;
    const char *nm = rc ? name->p : "";
    size_t nl = rc ? name->len : 0;
    if (!w->have_sample_name) {
        if (!(w->sample_name = malloc(nl + 1)))
            return nomem(r);
        memcpy(w->sample_name, nm, nl);
        w->sample_name[nl] = 0;
        w->sample_name_len = nl;
        w->have_sample_name = true;
    } else if (nl != w->sample_name_len || memcmp(nm, w->sample_name, nl)) {
        return not_converted_as(r, at, nl ? "sample " : "sample", nm, nl);
    }
    bool have_ts = numbered >> SM_TS & 1 ? (x = num[SM_TS], true) : tci_jspan_number(v[SM_TS], &x);
    if (!have_ts || fabs(x) > 4.6e15) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", at, "a sample without a numeric ts; skipped");
        return TC_OK;
    }
    int64_t ts = llround(x * 1000.0), pid = 0, tid = 0;
    double weight = 1;
    if (v[SM_WEIGHT].p && (!tci_jspan_number(v[SM_WEIGHT], &weight) || !(weight >= 0 && weight <= 1125899906842624.0))) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", at, "a sample whose weight is not a count from 0 to 2^50; skipped");
        return TC_OK;
    }
    uint64_t key;
    if ((rc = frame_key(r, w, v[SM_SF], at, &key)) <= 0)
        return rc < 0 ? rc : not_converted(r, at, "sample without frame", 20);
    if ((rc = id_value(r, w, v[SM_TID], numbered >> SM_TID & 1 ? &num[SM_TID] : NULL, "tid", false, at, &tid)) != TC_OK ||
        (v[SM_PID].p &&
         (rc = id_value(r, w, v[SM_PID], numbered >> SM_PID & 1 ? &num[SM_PID] : NULL, "pid", true, at, &pid)) != TC_OK))
        return rc;
    uint32_t s = sthread_of(w, v[SM_PID].p != NULL, pid, tid);
    if (s == TCI_NONE)
        return nomem(r);
    if ((rc = text_of(r, w, v[SM_COMM], comm, at)) < 0)
        return rc;
    jsthread *st = &w->sthreads[s];
    if (rc && comm->len && !(st->comm && st->comm_len == comm->len && !memcmp(st->comm, comm->p, comm->len))) {
        char *c = realloc(st->comm, comm->len);
        if (!c)
            return nomem(r);
        memcpy(c, comm->p, comm->len);
        st->comm = c;
        st->comm_len = comm->len;
    }
    return pend_add(r, w, (jpend){.ts = ts, .weight = floor(weight * 1000.0 + 0.5), .frame = key, .at = at,
                                  .owner = s, .kind = SK_TOP});
}

/* ---- sampled stacks: at the end of the document ----------------------------------------- */

/* The stack of frame f as the frames below it see it, interned from its root (TCI_NONE: a
 * profile's head, "(root)", which is above every frame and is none of them), every frame
 * walked once: its state FR_DONE, or FR_BROKEN when its chain of parents breaks (a parent
 * missing or undefined, or a loop). */
static int frame_stack(tci_rctx *r, jwalk *w, uint32_t f)
{
    uint32_t n = 0, base = TCI_NONE;
    bool bad = false;
    for (uint32_t i = f;;) {
        jframe *x = &w->frames[i];
        if (x->state == FR_DONE) {
            base = x->stack;
            break;
        }
        if (x->state != FR_OPEN || x->method == TCI_NONE) {
            bad = true;
            break;
        }
        if (tci_grow((void **)&w->chain, &w->cap_chain, n, sizeof *w->chain) != 0)
            return nomem(r);
        w->chain[n++] = i;
        x->state = FR_WALK;
        if (!x->has_parent)
            break;
        uint32_t p = frame_at(w, x->space, x->parent, false);
        if (p == TCI_NONE) {
            bad = true;
            break;
        }
        i = p;
    }
    for (uint32_t k = n; k-- > 0;) {
        jframe *x = &w->frames[w->chain[k]];
        x->state = bad ? FR_BROKEN : FR_DONE;
        if (bad)
            continue;
        if (k == n - 1 && !x->has_parent && x->root && x->space == FS_NODE)
            x->stack = TCI_NONE; /* the head: the frames below it start the stacks */
        else if ((x->stack = base = tci_trace_stack(r->trace, base, x->method)) == TCI_NONE)
            return tci_trace_fail(r->trace, r->diag, "json", UINT64_MAX);
    }
    return TC_OK;
}

/* A sample's record: the stack of its frame (counted as not converted when it has none). */
static int emit_sample(tci_rctx *r, jreader *j, jwalk *w, uint8_t space, uint64_t key, uint32_t thread, int64_t ts,
                       double value, uint64_t at, uint64_t *converted)
{
    uint32_t f = frame_at(w, space, key, false);
    int rc = f == TCI_NONE || w->frames[f].state != FR_OPEN ? TC_OK : frame_stack(r, w, f);
    if (rc != TC_OK)
        return rc;
    if (f == TCI_NONE || w->frames[f].state != FR_DONE)
        return not_converted(r, at, "sample without frame", 20);
    uint32_t stack = w->frames[f].stack;
    if (stack == TCI_NONE && (stack = tci_trace_stack(r->trace, TCI_NONE, w->frames[f].method)) == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, "json", at); /* a sample in the head itself */
    jrec rec = {.ts = ts, .cpu = TCI_NO_TIME, .value = value, .id = stack, .thread = thread,
                .method = r->trace->stacks[stack].method, .action = TCI_ACT_SAMPLE};
    (*converted)++;
    return add_rec(r, j, w, rec);
}

/* A CPU profile's sample q, weighing the time to the next one (next, in time order), or for
 * its last: to the profile's endTime, else its mean interval, else 1 ms. */
static int profile_sample(tci_rctx *r, jreader *j, jwalk *w, const jpend *q, const jpend *next, uint64_t *converted)
{
    const jprofile *p = &w->profiles[q->owner];
    if (p->thread == TCI_NONE)
        return not_converted(r, q->at, "sample without Profile", 22);
    int64_t start = p->start_rank ? p->start : p->event_ts != TCI_NO_TIME ? p->event_ts : 0;
    int64_t ts = start + q->ts; /* both within 4.6e18 */
    double weight;
    if (next)
        weight = (double)next->ts - (double)q->ts;
    else if (p->end != TCI_NO_TIME && p->end_rank >= p->start_rank && p->end >= ts)
        weight = (double)p->end - (double)ts;
    else if (p->n > 1)
        weight = floor(((double)p->hi - (double)p->lo) / (double)(p->n - 1) + 0.5);
    else
        weight = 1e6;
    return emit_sample(r, j, w, FS_NODE, q->frame, p->thread, ts, weight, q->at, converted);
}

/* The sample threads' threads: with a pid, (pid, tid); without, the thread of that tid that
 * the events have, else one of process pid = tid (catapult's way). A comm names the thread
 * below a thread_name. */
static int sample_threads(tci_rctx *r, jwalk *w)
{
    tci_trace *t = r->trace;
    for (uint32_t i = 0; i < w->n_sthreads; i++) {
        jsthread *st = &w->sthreads[i];
        uint32_t th = st->has_pid ? thread_of(r, w, st->pid, st->tid) : tci_idmap_get(&w->thread_by_tid, (uint64_t)st->tid);
        if (th == TCI_NONE && !st->has_pid)
            th = thread_of(r, w, st->tid, st->tid);
        if (th == TCI_NONE || (st->comm && tci_trace_name_thread(t, th, st->comm, st->comm_len, 1) != TC_OK))
            return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
        st->thread = th;
    }
    return TC_OK;
}

/* The samples, once the document is read: each with its stack and weight, on its thread.
 * A document's samples have one unit: the CPU profiles' (time) when it has any, else the
 * top-level samples' counts, else those of the P samples; the others are not converted.
 * Counts: the trace's metadata sample-type and sample-unit say so. */
static int finish_samples(tci_rctx *r, jreader *j, jwalk *w)
{
    if (!w->pend)
        return TC_OK;
    bool time = w->n_pend[SK_PROFILE] != 0, top = w->n_pend[SK_TOP] != 0;
    int rc = TC_OK, k = 0;
    if (top && !time && (rc = sample_threads(r, w)) != TC_OK)
        return rc;
    if (tci_extsort_done(w->pend) != 0)
        return sort_error(r, "sort");
    jpend q, prev;
    bool have_prev = false;
    uint64_t converted = 0;
    while (rc == TC_OK && (k = tci_extsort_next(w->pend, &q)) > 0) {
        if (have_prev && (q.kind != SK_PROFILE || q.owner != prev.owner)) {
            rc = profile_sample(r, j, w, &prev, NULL, &converted);
            have_prev = false;
        }
        if (rc != TC_OK)
            break;
        if (q.kind == SK_PROFILE) {
            if (have_prev)
                rc = profile_sample(r, j, w, &prev, &q, &converted);
            prev = q;
            have_prev = true;
        } else if (q.kind == SK_TOP && time) {
            rc = not_converted_as(r, q.at, w->sample_name_len ? "sample " : "sample", w->sample_name,
                                  w->sample_name_len);
        } else if (q.kind == SK_P && (time || top)) {
            rc = not_converted(r, q.at, "P", 1);
        } else {
            uint32_t th = q.kind == SK_TOP ? w->sthreads[q.owner].thread : q.owner;
            rc = emit_sample(r, j, w, FS_FRAME, q.frame, th, q.ts, q.weight, q.at, &converted);
        }
    }
    if (k < 0)
        return sort_error(r, "read back");
    if (rc == TC_OK && have_prev)
        rc = profile_sample(r, j, w, &prev, NULL, &converted);
    tci_extsort_free(w->pend);
    w->pend = NULL;
    if (rc != TC_OK || time || !converted)
        return rc;
    tci_trace *t = r->trace;
    const char *type = top && w->sample_name_len ? w->sample_name : "samples";
    size_t len = top && w->sample_name_len ? w->sample_name_len : 7;
    if (tci_trace_add_meta(t, "sample-type", 11, type, len) != TC_OK ||
        tci_trace_add_meta(t, "sample-unit", 11, "count", 5) != TC_OK)
        return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    return TC_OK;
}

static int one_event(tci_rctx *r, jreader *j, jwalk *w, const jevent *e, uint64_t order)
{
    tci_trace *t = r->trace;
    char phase[8];
    size_t ph_len = 0;
    uint64_t lone = 0;
    if (tci_jspan_is_string(e->v[EV_PH]))
        ph_len = tci_json_unescape(e->v[EV_PH].p + 1, e->v[EV_PH].n - 2, phase, sizeof phase, &lone);
    if (!ph_len)
        return not_converted(r, e->at, "no ph", 5);
    if (ph_len != 1) /* a phase is one character: "BX" is none of them */
        return not_converted(r, e->at, phase, ph_len < sizeof phase ? ph_len : sizeof phase);
    char ph = phase[0];
    jtext *name = &w->text[0];
    int rc = text_of(r, w, e->v[EV_NAME], name, e->at);
    if (rc < 0)
        return rc;
    if (!rc)
        name = NULL;
    if (ph == 'M')
        return name ? metadata_event(r, w, e, name) : not_converted(r, e->at, "M", 1);
    if (ph == 'P' && (rc = p_event(r, w, e, name)) != P_MARK)
        return rc;
    if (!ph || !strchr("BEXiICbeSFTpnRP", ph))
        return not_converted(r, e->at, &ph, 1); /* flows, objects, contexts, memory dumps: not in the IR */
    /* legacy async (S, T, p, F) and nestable instants (n) are keyed by their id: catapult and
     * Perfetto drop them without one */
    if (strchr("STpFn", ph) && !cookie_of(e).p) {
        char kind[16] = {ph};
        memcpy(kind + 1, " without id", 12);
        return not_converted(r, e->at, kind, 12);
    }
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
    /* the tts of an async event or a mark (R) is the thread's time when it was written, not at its ts
     * (Chrome gives them their ts: a navigation's start, a user timing mark; in a real WebView trace
     * 1,720 of them went back in thread time): Perfetto leaves it out of async slices ("not well
     * defined"), and the IR out of both */
    if (!strchr("STpFnR", ph) && ns_of(e, EV_TTS, &cpu))
        t->has_cpu = true;
    uint32_t method = TCI_NONE;
    if (name && (method = timeline_method(t, w, name->p, name->len)) == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", e->at);
    if (method == TCI_NONE && ph != 'E' && (method = tci_trace_name(t, "[unnamed]", 9)) == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", e->at);
    /* Chrome before the chunks wrote the whole CPU profile in one event: its samples too */
    if (name && text_is(name, "CpuProfile") && (rc = cpu_profile_event(r, w, e, th, pid)) != TC_OK)
        return rc;
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
        if (ph == 'b' || ph == 'e' || ph == 'S' || ph == 'F') { /* legacy S/F: b/e's slices, id scoped alike */
            if ((rc = async_id(r, w, e, &rec.id)) != TC_OK)
                return rc;
            rec.action = ph == 'b' || ph == 'S' ? TCI_ACT_ASYNC_BEGIN : TCI_ACT_ASYNC_END;
        } else {
            rec.action = TCI_ACT_INSTANT; /* i, I, R (a mark), n, a step T/p (step_method), a P without sf */
            if ((ph == 'T' || ph == 'p') && (rc = step_method(r, w, e, &rec.method)) != TC_OK)
                return rc;
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
        for (size_t k = 0; k < w->th[i].open.n && rc == TC_OK; k++)
            rc = add_slice(r, j, &w->th[i].open.s[k]);
    return rc;
}

static void free_walk(jwalk *w)
{
    for (uint32_t i = 0; i < w->n_threads; i++)
        free(w->th[i].open.s);
    free(w->th);
    free(w->name);
    free(w->names);
    for (size_t i = 0; i < sizeof w->text / sizeof *w->text; i++)
        free(w->text[i].p);
    for (size_t i = 0; i < sizeof w->ftext / sizeof *w->ftext; i++)
        free(w->ftext[i].p);
    free(w->fbuf);
    free(w->frames);
    free(w->chain);
    free(w->profiles);
    for (uint32_t i = 0; i < w->n_sthreads; i++)
        free(w->sthreads[i].comm);
    free(w->sthreads);
    free(w->sample_name);
    tci_extsort_free(w->pend);
    tci_idmap_free(&w->process_of);
    tci_idmap_free(&w->tid_index);
    tci_idmap_free(&w->thread_of);
    tci_idmap_free(&w->thread_by_tid);
    tci_idmap_free(&w->frame_ids);
    tci_idmap_free(&w->node_ids);
    tci_idmap_free(&w->profile_ids);
    tci_idmap_free(&w->sthread_ids);
}

/* ---- the document, streamed ------------------------------------------------------------ */

/* Where the scan of sc failed, and why as far as it knows: nesting past its depth is valid JSON
 * that this reader (as cJSON) does not go into, not a damaged file. */
static int bad_json(tci_rctx *r, const tci_jscan *sc)
{
    if (sc->too_deep)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", sc->pos,
                         "arrays and objects nested deeper than %d, more than this reader goes into", TCI_JSCAN_MAX_DEPTH);
    return tci_error(r->diag, TC_ERR_FORMAT, "json", sc->pos, "not valid JSON here");
}

/* The event object at sc->pos: its members found, sc->pos past it. An object the input ends
 * inside sets *cut (when cut is given: an array that may end open) instead of being an error. */
static int scan_event(tci_rctx *r, const tci_jkeys *keys, tci_jscan *sc, jevent *e, bool *cut)
{
    size_t start = sc->pos;
    e->at = start;
    if (!tci_jscan_members_num(sc, keys, e->v, e->num, &e->numbered)) {
        if (cut && sc->pos >= sc->n) { /* the scan fails where the input ends: a file cut short */
            *cut = true;
            return TC_OK;
        }
        return bad_json(r, sc);
    }
    uint64_t max = r->opt->max_json ? r->opt->max_json : TCI_DEFAULT_MAX_JSON;
    if (sc->pos - start > max)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", start,
                         "an event of %zu bytes is above the limit of %llu for one event (option --max-json)",
                         sc->pos - start, (unsigned long long)max);
    return TC_OK;
}

/* After the document: what was replaced, and whether anything was found at all. */
static int events_read(tci_rctx *r, jreader *j, const jwalk *w)
{
    if (w->lone) {
        tci_warn(r->diag, TCI_FIG_LONE_SURROGATE, "json", w->lone_at - 1,
                 "%llu \\u escapes of half a surrogate pair (not a character) in the strings read; each shown as U+FFFD",
                 (unsigned long long)w->lone);
        tci_count(r->diag, TCI_FIG_LONE_SURROGATE, w->lone - 1);
    }
    if (!j->total) { /* names alone (M events) show nothing either */
        char left[256];
        tci_not_converted_text(r->diag, left, sizeof left);
        return tci_error(r->diag, TC_ERR_NO_TRACE, "json", UINT64_MAX,
                         "no trace events found (%llu array elements, none a B, E, X, i, I, R, C, b, e, n, S, T, p or "
                         "F event with a numeric ts, nor a sample of a known stack%s%s)",
                         (unsigned long long)w->elements, left[0] ? "; not converted: " : "", left);
    }
    return TC_OK;
}

/* The walk's state for one document. */
static int walk_init(tci_rctx *r, jreader *j, jwalk *w)
{
    memset(w, 0, sizeof *w);
    w->last_thread = TCI_NONE;
    w->names = tci_calloc(NAME_SLOTS, sizeof *w->names);
    j->slices = tci_extsort_new(sizeof(jslice), cmp_slice, 0);
    j->recs = tci_extsort_new(sizeof(jrec), cmp_rec, 0);
    if (!w->names || !j->slices || !j->recs)
        return nomem(r);
    tci_extsort_set_sort(j->slices, sort_slices, SLICE_SCRATCH);
    for (size_t i = 0; i < NAME_SLOTS; i++)
        w->names[i].method = TCI_NONE; /* empty */
    return TC_OK;
}

/* The input ends inside the top-level array (no ']'): the Trace Event Format lets its array
 * form end open, so that a process that dies while tracing leaves a readable file (Chrome,
 * catapult, Perfetto and speedscope read such files). What is whole is converted; an event
 * the input ends inside is left out with truncated-input. */
static void array_ended_open(tci_rctx *r, size_t at, bool cut)
{
    if (cut)
        tci_warn(r->diag, TCI_FIG_TRUNCATED, "json", at,
                 "input ends inside an event of the array (no closing ']'); that event is left out, the ones "
                 "before it converted");
}

/* The elements of the array at sc->pos ('['), one at a time: objects to one(), with the members of
 * keys found (max-json bounds each), anything else counted as not converted; then sc is past it.
 * open_end: the top-level array, which may end with the input (array_ended_open). */
typedef int (*element_fn)(tci_rctx *r, jreader *j, jwalk *w, const jevent *e);
static int read_array(tci_rctx *r, jreader *j, jwalk *w, tci_jscan *sc, const tci_jkeys *keys, element_fn one,
                      bool open_end)
{
    int rc = TC_OK;
    bool cut = false;
    sc->pos++;
    tci_jscan_ws(sc);
    bool more = sc->pos < sc->n && sc->s[sc->pos] != ']';
    while (more && rc == TC_OK) {
        tci_jscan_ws(sc);
        if (open_end && sc->pos >= sc->n)
            break; /* after a trailing ',' */
        if (sc->pos < sc->n && sc->s[sc->pos] == '{') {
            jevent e;
            if ((rc = scan_event(r, keys, sc, &e, open_end ? &cut : NULL)) != TC_OK)
                break;
            if (cut) {
                sc->pos = e.at; /* the warning names where the event the input ends inside begins */
                break;
            }
            w->elements++;
            rc = one(r, j, w, &e);
        } else {
            w->elements++;
            size_t at = sc->pos;
            if (!tci_jscan_value(sc))
                rc = bad_json(r, sc);
            else
                not_converted(r, at, "not an object", 13); /* skipped, as viewers do */
        }
        if (rc != TC_OK)
            break;
        tci_source_release(r->source, sc->pos); /* read once, front to back */
        tci_jscan_ws(sc);
        if (sc->pos < sc->n && sc->s[sc->pos] == ',')
            sc->pos++;
        else if (sc->pos < sc->n && sc->s[sc->pos] == ']')
            more = false;
        else if (!(open_end && sc->pos >= sc->n))
            rc = bad_json(r, sc);
    }
    if (rc == TC_OK && (sc->pos >= sc->n || cut)) {
        if (!open_end)
            return bad_json(r, sc);
        array_ended_open(r, sc->pos, cut);
        sc->pos = sc->n;
        return TC_OK;
    }
    sc->pos++; /* past ']' */
    return rc;
}

static int event_element(tci_rctx *r, jreader *j, jwalk *w, const jevent *e)
{
    int rc = one_event(r, j, w, e, w->order++);
    if (rc == TC_OK && r->opt->max_events && w->order > r->opt->max_events)
        rc = tci_error(r->diag, TC_ERR_LIMIT, "json", e->at, "more than %llu events (option --max-events)",
                       (unsigned long long)r->opt->max_events);
    return rc;
}

static int sample_element(tci_rctx *r, jreader *j, jwalk *w, const jevent *e)
{
    (void)j;
    return one_sample(r, w, e->v, e->num, e->numbered, e->at);
}

/* The events array at sc->pos ('['); open_end: the document is that array (array_ended_open). */
static int read_events(tci_rctx *r, jreader *j, jwalk *w, tci_jscan *sc, bool open_end)
{
    tci_jkeys keys;
    tci_jkeys_init(&keys, event_keys, EV__N);
    return read_array(r, j, w, sc, &keys, event_element, open_end);
}

/* The top-level samples array at sc->pos ('['), whose elements are objects. */
static int read_samples(tci_rctx *r, jreader *j, jwalk *w, tci_jscan *sc)
{
    tci_jkeys keys;
    tci_jkeys_init(&keys, sample_keys, SM__N);
    return read_array(r, j, w, sc, &keys, sample_element, false);
}

/* The stackFrames object at sc->pos ('{'), one entry at a time (max-json bounds each). */
static int read_frames(tci_rctx *r, jwalk *w, tci_jscan *sc)
{
    uint64_t max = r->opt->max_json ? r->opt->max_json : TCI_DEFAULT_MAX_JSON;
    int rc = TC_OK;
    w->frames_seen = true;
    sc->pos++;
    tci_jscan_ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == '}') {
        sc->pos++;
        return TC_OK;
    }
    for (bool more = true; more && rc == TC_OK;) {
        const char *key;
        size_t len;
        if (!tci_jscan_key(sc, &key, &len))
            return bad_json(r, sc);
        tci_jscan_ws(sc);
        size_t start = sc->pos;
        if (!tci_jscan_value(sc))
            return bad_json(r, sc);
        if (sc->pos - start > max)
            return tci_error(r->diag, TC_ERR_LIMIT, "json", start,
                             "a stack frame of %zu bytes is above the limit of %llu for one event (option --max-json)",
                             sc->pos - start, (unsigned long long)max);
        rc = one_frame(r, w, (tci_jspan){key - 1, len + 2}, (tci_jspan){sc->s + start, sc->pos - start}, start);
        tci_source_release(r->source, sc->pos);
        tci_jscan_ws(sc);
        if (sc->pos < sc->n && (sc->s[sc->pos] == ',' || sc->s[sc->pos] == '}'))
            more = sc->s[sc->pos++] == ',';
        else
            return bad_json(r, sc);
    }
    return rc;
}

/* After the document: the samples, the sort indices, the slices never closed, and the
 * records sorted and counted. */
static int finish_document(tci_rctx *r, jreader *j, jwalk *w)
{
    int rc = finish_samples(r, j, w);
    if (rc == TC_OK)
        rc = sort_order_check(r, w);
    if (rc == TC_OK)
        rc = flush_open(r, j, w);
    if (rc == TC_OK)
        rc = count_replay(r, j);
    if (rc == TC_OK)
        rc = events_read(r, j, w);
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
#define NO_TRACE_EVENTS                                                                                        \
    "no trace events: neither an array of events nor an object with \"traceEvents\", \"samples\" or a CPU " \
    "profile's \"nodes\""

/* The members of a top-level object that are read at its end (a .cpuprofile's), or say what it is. */
typedef struct jdoc {
    tci_jspan other;          /* otherData */
    tci_jspan nodes, samples, deltas, start, end; /* a .cpuprofile's */
    tci_jspan head, stamps;   /* the old .cpuprofile's nested call tree and absolute timestamps */
    bool events, frames, top_samples; /* traceEvents, stackFrames and samples (objects) were read */
    bool cpuprofile;
} jdoc;

static bool key_is(const char *key, size_t len, const char *lit) { return len == strlen(lit) && !memcmp(key, lit, len); }

/* A .cpuprofile ({nodes, startTime, endTime, samples, timeDeltas}): one profile on one thread,
 * "main" (the format names none; tid 1), read once the document's end has shown it is one. */
static int read_cpuprofile(tci_rctx *r, jwalk *w, const jdoc *doc)
{
    tci_trace *t = r->trace;
    uint32_t th = tci_trace_add_thread(t, 1);
    if (th == TCI_NONE || tci_trace_name_thread(t, th, "main", 4, 2) != TC_OK)
        return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    return whole_profile(r, w, th, -1, doc->nodes, doc->samples, doc->deltas, doc->start, doc->end, true, doc->head,
                         doc->stamps);
}

/* {"traceEvents": [...], "stackFrames": {...}, "samples": [...], "otherData": {...}, ...}, or a
 * .cpuprofile: the first of each key counts (as a lookup in a parsed tree would find it);
 * every other value is only checked. The samples are an array of objects in a trace, of node
 * ids in a .cpuprofile. */
static int read_object(tci_rctx *r, jreader *j, jwalk *w, tci_jscan *sc, jdoc *doc)
{
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
                return bad_json(r, sc);
            tci_jscan_ws(sc);
            size_t start = sc->pos;
            char c = sc->pos < sc->n ? sc->s[sc->pos] : 0;
            tci_jspan *span = NULL;
            if (key_is(key, len, "traceEvents") && !doc->events) {
                if (c != '[')
                    return tci_error(r->diag, TC_ERR_FORMAT, "json", sc->pos, "\"traceEvents\" is not an array");
                doc->events = true;
                rc = read_events(r, j, w, sc, false);
            } else if (key_is(key, len, "stackFrames") && !doc->frames && c == '{') {
                doc->frames = true;
                rc = read_frames(r, w, sc);
            } else if (key_is(key, len, "samples") && !doc->top_samples && !doc->samples.p && c == '[') {
                size_t k = sc->pos + 1;
                while (k < sc->n && (unsigned char)sc->s[k] <= ' ')
                    k++;
                if (k < sc->n && sc->s[k] == '{') {
                    doc->top_samples = true;
                    rc = read_samples(r, j, w, sc);
                } else {
                    span = &doc->samples; /* a .cpuprofile's node ids */
                }
            } else if (key_is(key, len, "otherData")) {
                span = &doc->other;
            } else if (key_is(key, len, "nodes")) {
                span = &doc->nodes;
            } else if (key_is(key, len, "timeDeltas")) {
                span = &doc->deltas;
            } else if (key_is(key, len, "head")) {
                span = &doc->head;
            } else if (key_is(key, len, "timestamps")) {
                span = &doc->stamps;
            } else if (key_is(key, len, "startTime")) {
                span = &doc->start;
            } else if (key_is(key, len, "endTime")) {
                span = &doc->end;
            } else if (key_is(key, len, "systemTraceEvents") && !(c == '"' && sc->s[sc->pos + 1] == '"')) {
                not_converted(r, start, "systemTraceEvents", 17); /* ftrace text inside a JSON trace */
            }
            if (rc != TC_OK)
                return rc;
            if (sc->pos == start) { /* not read above: checked, and kept where wanted */
                if (!tci_jscan_value(sc))
                    return bad_json(r, sc);
                if (span && !span->p)
                    *span = (tci_jspan){sc->s + start, sc->pos - start};
            }
            tci_jscan_ws(sc);
            if (sc->pos < sc->n && (sc->s[sc->pos] == ',' || sc->s[sc->pos] == '}'))
                more = sc->s[sc->pos++] == ',';
            else
                return bad_json(r, sc);
        }
    if (doc->events || doc->top_samples)
        return TC_OK;
    bool listed = doc->nodes.p && doc->nodes.p[0] == '[', nested = doc->head.p && doc->head.p[0] == '{';
    if (!listed && !nested)
        return tci_error(r->diag, TC_ERR_NO_TRACE, "json", 0, NO_TRACE_EVENTS);
    if (!listed)
        doc->nodes = (tci_jspan){NULL, 0};
    doc->cpuprofile = true;
    return read_cpuprofile(r, w, doc);
}

static int json_open(tci_rctx *r)
{
    jreader *j = r->priv;
    tci_jscan sc = {(const char *)r->data, r->size, 0, r->source, 0, false};
    jdoc doc;
    jwalk w;
    memset(&doc, 0, sizeof doc);
    int rc = walk_init(r, j, &w);
    tci_jscan_ws(&sc);
    if (rc != TC_OK)
        ;
    else if (sc.pos < sc.n && sc.s[sc.pos] == '[')
        rc = read_events(r, j, &w, &sc, true);
    else if (sc.pos < sc.n && sc.s[sc.pos] == '{')
        rc = read_object(r, j, &w, &sc, &doc);
    else if (tci_jscan_value(&sc))
        rc = tci_error(r->diag, TC_ERR_NO_TRACE, "json", 0, NO_TRACE_EVENTS);
    else
        rc = bad_json(r, &sc);
    if (rc == TC_OK)
        rc = finish_document(r, j, &w);
    free_walk(&w);
    if (rc != TC_OK)
        return rc;
    settle_times(r, doc.other);
    snprintf(r->trace->detail, sizeof r->trace->detail, doc.cpuprofile ? "CPU profile (.cpuprofile)" : "Chrome trace JSON");
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
    bool has_events = tci_memmem(p, look, "\"traceEvents\"", 13) != NULL;
    bool has_ph = tci_memmem(p, look, "\"ph\"", 4) != NULL;
    /* a .cpuprofile: {"nodes":[{"id":1,"callFrame":{"functionName":"(root)",...}}, ...], ...} */
    bool cpuprofile = (tci_memmem(p, look, "\"nodes\"", 7) && tci_memmem(p, look, "\"callFrame\"", 11)) ||
                      (tci_memmem(p, look, "\"head\"", 6) && tci_memmem(p, look, "\"functionName\"", 14));
    int score = buf[i] == '{' ? (has_events ? 95 : cpuprofile ? 90 : has_ph ? 60 : 10) : (has_ph ? 90 : 10);
    size_t fl = filename ? strlen(filename) : 0;
    if (score < 95 && ((fl > 5 && (!strcmp(filename + fl - 5, ".json") || strstr(filename, ".json."))) ||
                       (fl > 11 && strstr(filename, ".cpuprofile"))))
        score += 5;
    return score;
}

const tci_reader tci_reader_json = {
    .name = "json",
    .description = "Chrome trace JSON (object or array form), DevTools/Node .cpuprofile",
    .extensions = "json,cpuprofile",
    .aliases = "chrome,trace-event,catapult,cpuprofile",
    .priv_size = sizeof(jreader),
    .probe = json_probe,
    .open = json_open,
    .read = json_read,
    .rewind = json_rewind,
    .close = json_close,
};
