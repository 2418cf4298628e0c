/*
 * json.c - Chrome Trace Event Format input (shared/docs/outputs/CHROME_JSON.md),
 * so that any Chrome trace reaches pprof, folded, Perfetto and systrace.
 *
 * Object form {"traceEvents":[...]} or a bare array; phases B/E, X, i/I, C,
 * b/e, M (process_name, thread_name). Streamed: a validating scanner walks
 * the document (mmapped) and finds each event's bytes, and only that one
 * event is parsed with cJSON, then freed, so memory never grows with the
 * input (the whole document as a cJSON tree took 8 times the file). The
 * option max-json bounds the one value parsed at a time (default 256 MiB).
 * Slices and records go through tci_extsort (runs spilled to a temporary
 * file), so the reader keeps no per-event array of its own.
 *
 * Quirks: events need not be in time order and X events may come in any
 * order, so each thread's slices are collected as intervals (B/E pairs
 * matched in file order per thread, X with their dur), sorted by (start,
 * longer first) and replayed through a stack: equal-time boundaries nest
 * properly. An E that closes nothing is passed on and handled by the
 * conversion rules; a B never closed stays open (closed at the end).
 * ts/dur/tts are µs doubles in JSON; they become integer ns with llround,
 * exact for the three-decimal form viewers (and our writer) use. pid/tid
 * may be strings; a non-numeric one gets an id of its own.
 */
#define _GNU_SOURCE /* memmem */
#include "tc_internal.h"

#include <cjson/cJSON.h>
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

/* The records, per thread in time order, sorted on disk when there are many
 * (tci_extsort): after open() the reader holds no per-event array. */
typedef struct jreader {
    tci_extsort *recs;
    uint64_t taken;
    bool done;
} jreader;

/* ---- small helpers ------------------------------------------------------------ */

static bool number_of(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return isfinite(*out);
    }
    if (cJSON_IsString(v) && v->valuestring[0]) { /* some writers quote numbers */
        char *end;
        *out = strtod(v->valuestring, &end);
        return !*end && isfinite(*out);
    }
    return false;
}

/* µs (JSON) -> ns, or false when absent or out of range. 146 years at most,
 * so that ts + dur and tts + tdur stay within int64. */
static bool ns_of(const cJSON *o, const char *key, int64_t *out)
{
    double us;
    if (!number_of(o, key, &us) || fabs(us) > 4.6e15)
        return false;
    *out = llround(us * 1000.0);
    return true;
}

/* pid/tid: a number, a numeric string, or any string (then a stable id of its own). */
static int64_t id_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 9.0e18)
        return (int64_t)v->valuedouble;
    if (cJSON_IsString(v)) {
        char *end;
        long long x = strtoll(v->valuestring, &end, 10);
        if (!*end && v->valuestring[0])
            return x;
        uint64_t h = 1469598103934665603ull; /* FNV-1a, kept positive and away from real ids */
        for (const char *p = v->valuestring; *p; p++)
            h = (h ^ (uint8_t)*p) * 1099511628211ull;
        return (int64_t)(h >> 2) | ((int64_t)1 << 60);
    }
    return 0;
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

static const char *string_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The cookie of a b/e event: "id", or "id2": {"local": ...} / {"global": ...} (our writer
 * scopes its async slices to their process with id2.local); a string or a number. The IR
 * scopes every async slice to its thread's process. */
static uint64_t async_id_of(const cJSON *e)
{
    const cJSON *o = e, *id2 = cJSON_GetObjectItemCaseSensitive(e, "id2");
    const char *key = "id";
    if (cJSON_IsObject(id2)) {
        o = id2;
        key = cJSON_GetObjectItemCaseSensitive(id2, "local") ? "local" : "global";
    }
    const char *id = string_of(o, key);
    double idn;
    return id ? strtoull(id, NULL, 0) : number_of(o, key, &idn) ? id_of_number(idn) : 0;
}

/* ---- the open() walk's state --------------------------------------------------------- */

/* Per thread: its B slices not closed yet, innermost last (E closes by position). */
typedef struct open_stack {
    jslice *s;
    size_t n, cap;
} open_stack;

typedef struct jwalk {
    tci_idmap process_of;     /* pid -> process (exact: the pid is the key) */
    tci_idmap tid_index;      /* tid -> a dense index of the tids seen */
    tci_idmap thread_of;      /* process << 32 | tid index -> thread */
    uint32_t n_tids;
    open_stack *open;         /* per thread */
    uint32_t n_threads;       /* slots in open (empty ones included) */
    tci_extsort *slices;      /* closed B/E pairs and X events, every thread's */
    uint64_t seq;             /* records made so far */
    char *name;               /* counter series names: "name.series" */
    size_t name_cap;
} jwalk;

static int nomem(tci_rctx *r) { return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory"); }

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

static int add_slice(tci_rctx *r, jwalk *w, const jslice *s)
{
    return tci_extsort_add(w->slices, s) == 0 ? TC_OK : sort_error(r, "write");
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

static int metadata_event(tci_rctx *r, jwalk *w, const cJSON *e, const char *name)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const char *value = args ? string_of(args, "name") : NULL;
    if (!value)
        return TC_OK;
    tci_trace *t = r->trace;
    int64_t pid = id_of(e, "pid");
    if (!strcmp(name, "process_name")) {
        uint32_t p = process_of(r, w, pid);
        if (p == TCI_NONE || tci_trace_name_process(t, p, value, strlen(value), 2) != TC_OK)
            return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    } else if (!strcmp(name, "thread_name")) {
        uint32_t th = thread_of(r, w, pid, id_of(e, "tid"));
        if (th == TCI_NONE || tci_trace_name_thread(t, th, value, strlen(value), 2) != TC_OK)
            return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    }
    return TC_OK;
}

/* ---- slices: B/E pairs and X events become intervals, per thread ----------------- */

static int slice_begin(tci_rctx *r, jwalk *w, const jslice *s)
{
    open_stack *st = &w->open[s->thread];
    if (tci_grow_n((void **)&st->s, &st->cap, st->n, sizeof *st->s) != 0)
        return nomem(r);
    st->s[st->n++] = *s;
    return TC_OK;
}

/* E closes the innermost open B of its thread (viewers match by position, not name). */
static int slice_end(tci_rctx *r, jreader *j, jwalk *w, uint32_t thread, int64_t ts, int64_t cpu, uint32_t method)
{
    open_stack *st = &w->open[thread];
    if (!st->n) { /* closes nothing here: the conversion rules decide */
        jrec rec = {.ts = ts, .cpu = cpu, .thread = thread, .method = method, .action = TCI_ACT_EXIT};
        return add_rec(r, j, w, rec);
    }
    jslice s = st->s[--st->n];
    s.end = ts < s.start ? s.start : ts;
    s.cpu_end = cpu;
    return add_slice(r, w, &s);
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

/* Pop what ends before s starts (all of it when s is NULL), as exit records. */
static int close_before(tci_rctx *r, jreader *j, jwalk *w, open_stack *st, const jslice *s)
{
    while (st->n && !stays_open(&st->s[st->n - 1], s)) {
        const jslice *top = &st->s[--st->n];
        if (top->end == NO_END)
            continue; /* a B never closed stays open: normalize closes it at the end */
        jrec e = {.ts = top->end, .cpu = top->cpu_end, .thread = top->thread, .method = top->method,
                  .action = TCI_ACT_EXIT};
        int rc = add_rec(r, j, w, e);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* Every thread's sorted slices through a stack into B/E records, one slice at a time. */
static int slices_to_records(tci_rctx *r, jreader *j, jwalk *w)
{
    open_stack stack = {0};
    jslice s;
    int rc = tci_extsort_done(w->slices) == 0 ? TC_OK : sort_error(r, "sort");
    for (;;) {
        int k = rc == TC_OK ? tci_extsort_next(w->slices, &s) : 0;
        if (k < 0)
            rc = sort_error(r, "read back");
        if (k <= 0)
            break;
        if (stack.n && stack.s[0].thread != s.thread && (rc = close_before(r, j, w, &stack, NULL)) != TC_OK)
            break;
        if ((rc = close_before(r, j, w, &stack, &s)) != TC_OK)
            break;
        jrec b = {.ts = s.start, .cpu = s.cpu_start, .thread = s.thread, .method = s.method, .action = TCI_ACT_ENTER};
        if ((rc = add_rec(r, j, w, b)) != TC_OK)
            break;
        if (tci_grow_n((void **)&stack.s, &stack.cap, stack.n, sizeof *stack.s) != 0) {
            rc = nomem(r);
            break;
        }
        stack.s[stack.n++] = s;
    }
    if (rc == TC_OK)
        rc = close_before(r, j, w, &stack, NULL);
    free(stack.s);
    return rc;
}

/* ---- the events ------------------------------------------------------------------ */

/* A counter event: one counter per numeric series, "name" alone or "name.series". */
static int counter_event(tci_rctx *r, jreader *j, jwalk *w, const cJSON *e, const char *name, jrec rec)
{
    tci_trace *t = r->trace;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args"), *a;
    if (!name)
        name = "[unnamed]";
    size_t name_len = strlen(name);
    bool several = args && args->child && args->child->next; /* counted once, not per series */
    rec.action = TCI_ACT_COUNTER;
    cJSON_ArrayForEach(a, args) {
        if (!cJSON_IsNumber(a) || !isfinite(a->valuedouble))
            continue;
        rec.value = a->valuedouble;
        if (several) {
            size_t series = a->string ? strlen(a->string) : 0, len = name_len + 1 + series;
            if (len + 1 > w->name_cap) {
                char *p = realloc(w->name, len + 1);
                if (!p)
                    return nomem(r);
                w->name = p;
                w->name_cap = len + 1;
            }
            memcpy(w->name, name, name_len);
            w->name[name_len] = '.';
            memcpy(w->name + name_len + 1, a->string ? a->string : "", series);
            if ((rec.method = tci_trace_name(t, w->name, len)) == TCI_NONE)
                return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
        }
        int rc = add_rec(r, j, w, rec);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static int one_event(tci_rctx *r, jreader *j, jwalk *w, const cJSON *e, uint64_t order)
{
    tci_trace *t = r->trace;
    const char *ph = string_of(e, "ph");
    if (!ph || !ph[0])
        return TC_OK;
    const char *name = string_of(e, "name");
    if (ph[0] == 'M')
        return name ? metadata_event(r, w, e, name) : TC_OK;
    if (!strchr("BEXiICbe", ph[0]))
        return TC_OK; /* flows, samples, objects, marks: not in the IR */
    int64_t ts, cpu = TCI_NO_TIME, dur;
    if (!ns_of(e, "ts", &ts)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", UINT64_MAX, "a \"%c\" event without a numeric ts; skipped", ph[0]);
        return TC_OK;
    }
    uint32_t th = thread_of(r, w, id_of(e, "pid"), id_of(e, "tid"));
    if (th == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    if (ns_of(e, "tts", &cpu))
        t->has_cpu = true;
    uint32_t method = TCI_NONE;
    if (name && (method = tci_trace_timeline_name(t, name, strlen(name))) == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    if (method == TCI_NONE && ph[0] != 'E' && (method = tci_trace_name(t, "[unnamed]", 9)) == TCI_NONE)
        return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    switch (ph[0]) {
    case 'B': {
        jslice s = {ts, NO_END, cpu, TCI_NO_TIME, order, th, method};
        return slice_begin(r, w, &s);
    }
    case 'E':
        return slice_end(r, j, w, th, ts, cpu, method);
    case 'X': {
        int64_t tdur;
        if (!ns_of(e, "dur", &dur) || dur < 0)
            dur = 0;
        jslice s = {ts, ts + dur, cpu, cpu != TCI_NO_TIME && ns_of(e, "tdur", &tdur) ? cpu + tdur : cpu, order,
                    th, method};
        return add_slice(r, w, &s);
    }
    default: {
        jrec rec = {.ts = ts, .cpu = cpu, .thread = th, .method = method};
        if (ph[0] == 'C')
            return counter_event(r, j, w, e, name, rec);
        if (ph[0] == 'b' || ph[0] == 'e') {
            rec.id = async_id_of(e);
            rec.action = ph[0] == 'b' ? TCI_ACT_ASYNC_BEGIN : TCI_ACT_ASYNC_END;
        } else {
            rec.action = TCI_ACT_INSTANT;
        }
        return add_rec(r, j, w, rec);
    }
    }
}

/* B events never closed go to the sort with their end unknown. */
static int flush_open(tci_rctx *r, jwalk *w)
{
    int rc = TC_OK;
    for (uint32_t i = 0; i < w->n_threads && rc == TC_OK; i++)
        for (size_t k = 0; k < w->open[i].n && rc == TC_OK; k++)
            rc = add_slice(r, w, &w->open[i].s[k]);
    return rc;
}

static void free_walk(jwalk *w)
{
    for (uint32_t i = 0; i < w->n_threads; i++)
        free(w->open[i].s);
    free(w->open);
    free(w->name);
    tci_extsort_free(w->slices);
    tci_idmap_free(&w->process_of);
    tci_idmap_free(&w->tid_index);
    tci_idmap_free(&w->thread_of);
}

/* ---- the scanner: the extent of one JSON value, validated ------------------------------ */

/* As deep as cJSON goes (CJSON_NESTING_LIMIT): what one accepts, the other does. */
#define JSON_MAX_DEPTH 1000

typedef struct jscan {
    const char *s;
    size_t n, pos;       /* pos: the next byte; on failure, where it went wrong */
} jscan;

/* Whitespace as cJSON has it (any byte up to ' '), so the scanner and the parser of each
 * event never disagree on where a value starts. */
static void skip_ws(jscan *sc)
{
    while (sc->pos < sc->n && (unsigned char)sc->s[sc->pos] <= ' ')
        sc->pos++;
}

static bool is_hex(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

/* A string at pos (on its opening quote); escapes checked as cJSON does. Linear: the
 * next quote is searched for again only once an escape has gone past it. */
static bool skip_string(jscan *sc)
{
    const char *s = sc->s, *q = NULL;
    size_t i = sc->pos + 1;
    for (;;) {
        if (!q || q < s + i)
            q = i < sc->n ? memchr(s + i, '"', sc->n - i) : NULL;
        if (!q) {
            sc->pos = sc->n;
            return false;
        }
        const char *b = memchr(s + i, '\\', (size_t)(q - (s + i)));
        if (!b) { /* no escape before the closing quote */
            sc->pos = (size_t)(q - s) + 1;
            return true;
        }
        i = (size_t)(b - s) + 1; /* the escaped character (b < q: there is one) */
        if (!s[i] || !strchr("\"\\/bfnrtu", s[i])) {
            sc->pos = i;
            return false;
        }
        if (s[i] == 'u') {
            for (int k = 1; k <= 4; k++)
                if (i + k >= sc->n || !is_hex(s[i + k])) {
                    sc->pos = i;
                    return false;
                }
            i += 4;
        }
        i++;
    }
}

static bool skip_literal(jscan *sc, const char *word)
{
    size_t len = strlen(word);
    if (sc->n - sc->pos < len || memcmp(sc->s + sc->pos, word, len))
        return false;
    sc->pos += len;
    return true;
}

/* A number as cJSON reads one: the run of [0-9+-.eE], of which strtod takes what it can.
 * A run of 1024 characters or more is refused (no allocation for a hostile number).
 * parsed_after: cJSON parses this value next and checks the number itself, so the run is
 * enough (in valid JSON it is the number: what follows one is never in the run). */
static bool skip_number(jscan *sc, bool parsed_after)
{
    char num[1024], *end;
    size_t k = 0;
    while (sc->pos + k < sc->n && sc->s[sc->pos + k] && strchr("0123456789+-.eE", sc->s[sc->pos + k]))
        if (++k == sizeof num)
            return false;
    if (parsed_after) {
        sc->pos += k;
        return k > 0;
    }
    memcpy(num, sc->s + sc->pos, k);
    num[k] = 0;
    (void)strtod(num, &end);
    sc->pos += (size_t)(end - num);
    return end > num;
}

/* An object's key and its colon; key, len: the key's raw bytes (between its quotes). */
static bool skip_key_at(jscan *sc, const char **key, size_t *len)
{
    skip_ws(sc);
    size_t start = sc->pos + 1;
    if (sc->pos >= sc->n || sc->s[sc->pos] != '"' || !skip_string(sc))
        return false;
    *key = sc->s + start;
    *len = sc->pos - 1 - start;
    skip_ws(sc);
    if (sc->pos >= sc->n || sc->s[sc->pos] != ':')
        return false;
    sc->pos++;
    return true;
}

static bool skip_key(jscan *sc)
{
    const char *key;
    size_t len;
    return skip_key_at(sc, &key, &len);
}

/* One value (objects and arrays iteratively: depth is bounded, the stack is not used);
 * parsed_after: see skip_number. */
static bool skip_value(jscan *sc, bool parsed_after)
{
    char open[JSON_MAX_DEPTH]; /* the containers we are in: '{' or '[' */
    int depth = 0;
    for (;;) {
        skip_ws(sc);
        if (sc->pos >= sc->n)
            return false;
        char c = sc->s[sc->pos];
        bool scalar = true;
        if (c == '{' || c == '[') {
            if (depth == JSON_MAX_DEPTH)
                return false;
            open[depth++] = c;
            sc->pos++;
            skip_ws(sc);
            if (sc->pos < sc->n && sc->s[sc->pos] == (c == '{' ? '}' : ']')) {
                sc->pos++;
                depth--;
            } else {
                scalar = false;
            }
        } else if (c == '"') {
            if (!skip_string(sc))
                return false;
        } else if (c == 't' || c == 'f' || c == 'n') {
            if (!skip_literal(sc, c == 't' ? "true" : c == 'f' ? "false" : "null"))
                return false;
        } else if (!skip_number(sc, parsed_after)) {
            return false;
        }
        if (!scalar) { /* the first member of a container: an object's starts with its key */
            if (open[depth - 1] == '{' && !skip_key(sc))
                return false;
            continue;
        }
        /* after a value: a comma and the next member, or the end of containers */
        for (;;) {
            if (!depth)
                return true;
            skip_ws(sc);
            if (sc->pos >= sc->n)
                return false;
            char d = sc->s[sc->pos];
            if (d == ',') {
                sc->pos++;
                if (open[depth - 1] == '{' && !skip_key(sc))
                    return false;
                break;
            }
            if (d != (open[depth - 1] == '{' ? '}' : ']'))
                return false;
            sc->pos++;
            depth--;
        }
    }
}

/* ---- the document, streamed ------------------------------------------------------------ */

static int bad_json(tci_rctx *r, size_t off)
{
    return tci_error(r->diag, TC_ERR_FORMAT, "json", off, "not valid JSON here");
}

/* The value at sc->pos parsed on its own (at most max-json bytes), sc->pos past it; NULL with
 * the error reported. */
static cJSON *parse_one(tci_rctx *r, jscan *sc, int *rc)
{
    size_t start = sc->pos;
    if (!skip_value(sc, true)) {
        *rc = bad_json(r, sc->pos);
        return NULL;
    }
    uint64_t max = r->opt->max_json ? r->opt->max_json : TCI_DEFAULT_MAX_JSON;
    if (sc->pos - start > max) {
        *rc = tci_error(r->diag, TC_ERR_LIMIT, "json", start,
                        "a JSON value of %zu bytes is held in memory to parse; the limit is %llu (option --max-json)",
                        sc->pos - start, (unsigned long long)max);
        return NULL;
    }
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(sc->s + start, sc->pos - start, &end, false);
    if (!v)
        *rc = bad_json(r, end ? (size_t)(end - sc->s) : start);
    return v;
}

/* The elements of the events array at sc->pos ('['), one at a time. */
static int read_events(tci_rctx *r, jreader *j, jscan *sc)
{
    jwalk w;
    memset(&w, 0, sizeof w);
    w.slices = tci_extsort_new(sizeof(jslice), cmp_slice, 0);
    j->recs = tci_extsort_new(sizeof(jrec), cmp_rec, 0);
    if (!w.slices || !j->recs) {
        free_walk(&w);
        return nomem(r);
    }
    int rc = TC_OK;
    uint64_t order = 0, events = 0; /* events: objects with a "ph", whatever the reader keeps of them */
    sc->pos++;
    skip_ws(sc);
    bool more = sc->pos < sc->n && sc->s[sc->pos] != ']';
    while (more && rc == TC_OK) {
        skip_ws(sc);
        if (sc->pos < sc->n && sc->s[sc->pos] == '{') {
            cJSON *e = parse_one(r, sc, &rc);
            events += e && string_of(e, "ph") && string_of(e, "ph")[0];
            if (e)
                rc = one_event(r, j, &w, e, order++);
            cJSON_Delete(e);
            if (rc == TC_OK && r->opt->max_events && order > r->opt->max_events)
                rc = tci_error(r->diag, TC_ERR_LIMIT, "json", sc->pos, "more than %llu events (option --max-events)",
                               (unsigned long long)r->opt->max_events);
        } else if (!skip_value(sc, false)) { /* not an event: skipped, as viewers do */
            rc = bad_json(r, sc->pos);
        }
        if (rc != TC_OK)
            break;
        tci_source_release(r->source, sc->pos); /* read once, front to back */
        skip_ws(sc);
        if (sc->pos < sc->n && sc->s[sc->pos] == ',')
            sc->pos++;
        else if (sc->pos < sc->n && sc->s[sc->pos] == ']')
            more = false;
        else
            rc = bad_json(r, sc->pos);
    }
    if (rc == TC_OK && sc->pos >= sc->n)
        rc = bad_json(r, sc->pos);
    if (rc == TC_OK && !events)
        rc = tci_error(r->diag, TC_ERR_NO_TRACE, "json", 0, "no trace events: the events array holds no event (an object with \"ph\")");
    sc->pos++; /* past ']' */
    if (rc == TC_OK)
        rc = flush_open(r, &w);
    if (rc == TC_OK)
        rc = slices_to_records(r, j, &w);
    if (rc == TC_OK && tci_extsort_done(j->recs) != 0)
        rc = sort_error(r, "sort");
    free_walk(&w);
    return rc;
}

/* ---- the reader ---------------------------------------------------------------------- */

/* JSON times are µs from any origin; our own writer says which in otherData. */
static void settle_times(tci_trace *t, const cJSON *other)
{
    double start;
    t->start_given = cJSON_IsObject(other) && number_of(other, "start_time_ns", &start) && fabs(start) < 9.0e18;
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
static int read_object(tci_rctx *r, jreader *j, jscan *sc, cJSON **other)
{
    bool have_events = false;
    int rc = TC_OK;
    sc->pos++;
    skip_ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == '}')
        sc->pos++;
    else
        for (bool more = true; more && rc == TC_OK;) {
            const char *key;
            size_t len;
            if (!skip_key_at(sc, &key, &len))
                return bad_json(r, sc->pos);
            if (len == 11 && !memcmp(key, "traceEvents", 11) && !have_events) {
                skip_ws(sc);
                if (sc->pos >= sc->n || sc->s[sc->pos] != '[')
                    return tci_error(r->diag, TC_ERR_FORMAT, "json", sc->pos, "\"traceEvents\" is not an array");
                have_events = true;
                rc = read_events(r, j, sc);
            } else if (len == 9 && !memcmp(key, "otherData", 9) && !*other) {
                skip_ws(sc);
                *other = parse_one(r, sc, &rc);
            } else if (!skip_value(sc, false)) {
                return bad_json(r, sc->pos);
            }
            if (rc != TC_OK)
                return rc;
            skip_ws(sc);
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
    jscan sc = {(const char *)r->data, r->size, 0};
    cJSON *other = NULL;
    int rc;
    skip_ws(&sc);
    if (sc.pos < sc.n && sc.s[sc.pos] == '[')
        rc = read_events(r, j, &sc);
    else if (sc.pos < sc.n && sc.s[sc.pos] == '{')
        rc = read_object(r, j, &sc, &other);
    else if (skip_value(&sc, false))
        rc = tci_error(r->diag, TC_ERR_NO_TRACE, "json", 0, NO_TRACE_EVENTS);
    else
        rc = bad_json(r, sc.pos);
    if (rc == TC_OK)
        settle_times(r->trace, other);
    cJSON_Delete(other);
    if (rc != TC_OK)
        return rc;
    snprintf(r->trace->detail, sizeof r->trace->detail, "Chrome trace JSON");
    return TC_OK;
}

static int json_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    jreader *j = r->priv;
    size_t k = 0;
    jrec x;
    while (k < max && !j->done) {
        int n = tci_extsort_next(j->recs, &x);
        if (n < 0)
            return sort_error(r, "read back");
        if (n == 0) {
            j->done = true;
            break;
        }
        ev[k++] = (tci_raw){.wall = x.ts, .cpu = r->trace->has_cpu ? x.cpu : TCI_NO_TIME, .offset = j->taken++,
                            .value = x.value, .id = x.id, .thread = x.thread, .method = x.method, .action = x.action};
    }
    /* progress: the share of records read, as a byte offset */
    uint64_t total = tci_extsort_count(j->recs);
    r->pos = total && !j->done ? (uint64_t)((double)r->size * (double)j->taken / (double)total) : r->size;
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int json_rewind(tci_rctx *r)
{
    jreader *j = r->priv;
    j->taken = 0;
    j->done = false;
    return tci_extsort_rewind(j->recs) == 0 ? TC_OK : sort_error(r, "read back");
}

static void json_close(tci_rctx *r)
{
    jreader *j = r->priv;
    if (j)
        tci_extsort_free(j->recs);
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
