/*
 * json.c - Chrome Trace Event Format input (shared/docs/outputs/CHROME_JSON.md),
 * so that any Chrome trace reaches pprof, folded, Perfetto and systrace.
 *
 * Object form {"traceEvents":[...]} or a bare array; phases B/E, X, i/I, C,
 * b/e, M (process_name, thread_name). Parsed with cJSON, so the input is
 * held in memory: the option max-json bounds it (default 256 MiB).
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_END INT64_MAX

/* One record to replay, already in the IR's terms. */
typedef struct jrec {
    int64_t ts, cpu;
    double value;
    uint64_t id;
    uint32_t thread, method;
    uint8_t action;
} jrec;

/* A slice of one thread while sorting. */
typedef struct jslice {
    int64_t start, end;       /* end NO_END: never closed */
    int64_t cpu_start, cpu_end;
    uint32_t thread, method;
    uint32_t order;           /* file order, for stable ties */
} jslice;

typedef struct jreader {
    jrec *recs;               /* all records, per thread in time order */
    size_t n, cap, pos;
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

static int add_rec(tci_rctx *r, jreader *j, const jrec *rec)
{
    if (tci_grow_n((void **)&j->recs, &j->cap, j->n, sizeof *j->recs) != 0)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    j->recs[j->n++] = *rec;
    return TC_OK;
}

/* ---- threads and processes ------------------------------------------------------ */

typedef struct tmap {
    tci_idmap ids;            /* hash(pid, tid) -> thread */
} tmap;

static uint64_t pair_key(int64_t pid, int64_t tid)
{
    uint64_t k = (uint64_t)pid * 0x9E3779B97F4A7C15ull ^ (uint64_t)tid;
    return k;
}

static uint32_t thread_of(tci_rctx *r, tmap *m, int64_t pid, int64_t tid)
{
    tci_trace *t = r->trace;
    uint64_t key = pair_key(pid, tid);
    uint32_t th = tci_idmap_get(&m->ids, key);
    if (th != TCI_NONE)
        return th;
    uint32_t p = tci_trace_process(t, pid);
    if (p == TCI_NONE || (th = tci_trace_add_thread(t, (uint64_t)tid)) == TCI_NONE)
        return TCI_NONE;
    t->threads[th].process = p;
    if (tci_idmap_put(&m->ids, key, th) != 0)
        return TCI_NONE;
    return th;
}

static int metadata_event(tci_rctx *r, tmap *m, const cJSON *e, const char *name)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const char *value = args ? string_of(args, "name") : NULL;
    if (!value)
        return TC_OK;
    tci_trace *t = r->trace;
    int64_t pid = id_of(e, "pid");
    if (!strcmp(name, "process_name")) {
        uint32_t p = tci_trace_process(t, pid);
        if (p == TCI_NONE || tci_trace_name_process(t, p, value, strlen(value), 2) != TC_OK)
            return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    } else if (!strcmp(name, "thread_name")) {
        uint32_t th = thread_of(r, m, pid, id_of(e, "tid"));
        if (th == TCI_NONE || tci_trace_name_thread(t, th, value, strlen(value), 2) != TC_OK)
            return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
    }
    return TC_OK;
}

/* ---- slices: B/E pairs and X events become intervals, per thread ----------------- */

/* Per thread: the B slices not closed yet (indexes, innermost last), for matching E. */
typedef struct open_stack {
    uint32_t *idx;
    uint32_t n, cap;
} open_stack;

typedef struct slices {
    jslice *s;                /* every thread's */
    size_t n, cap;
    open_stack *open;         /* per thread */
    uint32_t n_threads;
} slices;

static int slice_add(tci_rctx *r, slices *sl, const jslice *s, uint32_t *index)
{
    if (tci_grow_n((void **)&sl->s, &sl->cap, sl->n, sizeof *sl->s) != 0)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    sl->s[sl->n] = *s;
    *index = (uint32_t)sl->n++;
    return TC_OK;
}

static int ensure_thread_slots(tci_rctx *r, slices *sl, uint32_t thread)
{
    if (thread < sl->n_threads)
        return TC_OK;
    open_stack *o = tci_realloc_array(sl->open, (size_t)thread + 1, sizeof *o);
    if (!o)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    memset(o + sl->n_threads, 0, (size_t)(thread + 1 - sl->n_threads) * sizeof *o);
    sl->open = o;
    sl->n_threads = thread + 1;
    return TC_OK;
}

static int slice_begin(tci_rctx *r, slices *sl, const jslice *s)
{
    uint32_t idx = 0;
    int rc = ensure_thread_slots(r, sl, s->thread);
    if (rc == TC_OK)
        rc = slice_add(r, sl, s, &idx);
    if (rc != TC_OK)
        return rc;
    open_stack *st = &sl->open[s->thread];
    if (tci_grow((void **)&st->idx, &st->cap, st->n, sizeof *st->idx) != 0)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    st->idx[st->n++] = idx;
    return TC_OK;
}

/* E closes the innermost open B of its thread (viewers match by position, not name). */
static int slice_end(tci_rctx *r, jreader *j, slices *sl, uint32_t thread, int64_t ts, int64_t cpu, uint32_t method)
{
    int rc = ensure_thread_slots(r, sl, thread);
    if (rc != TC_OK)
        return rc;
    open_stack *st = &sl->open[thread];
    if (!st->n) { /* closes nothing here: the conversion rules decide */
        jrec rec = {.ts = ts, .cpu = cpu, .thread = thread, .method = method, .action = TCI_ACT_EXIT};
        return add_rec(r, j, &rec);
    }
    jslice *s = &sl->s[st->idx[--st->n]];
    s->end = ts < s->start ? s->start : ts;
    s->cpu_end = cpu;
    return TC_OK;
}

/* Sort key: thread, start, longer first, file order. */
static const slices *sort_ctx;
static int cmp_slice(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const jslice *s = &sort_ctx->s[x], *u = &sort_ctx->s[y];
    if (s->thread != u->thread) return s->thread < u->thread ? -1 : 1;
    if (s->start != u->start) return s->start < u->start ? -1 : 1;
    if (s->end != u->end) return s->end > u->end ? -1 : 1;
    return s->order < u->order ? -1 : s->order > u->order;
}

/* Replay one thread's sorted slices through a stack into B/E records. */
static int replay_thread(tci_rctx *r, jreader *j, const slices *sl, const uint32_t *idx, size_t n)
{
    uint32_t *stack = tci_malloc((n ? n : 1) * sizeof *stack);
    size_t depth = 0;
    int rc = TC_OK;
    if (!stack)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    for (size_t i = 0; i <= n && rc == TC_OK; i++) {
        const jslice *s = i < n ? &sl->s[idx[i]] : NULL;
        while (depth && rc == TC_OK) { /* close what ends before this slice starts */
            const jslice *top = &sl->s[stack[depth - 1]];
            if (s && (top->end > s->start || (top->end == s->start && top->start == s->start && top->end >= s->end)))
                break;
            if (top->end == NO_END && s)
                break;
            depth--;
            if (top->end != NO_END) {
                jrec e = {.ts = top->end, .cpu = top->cpu_end, .thread = top->thread,
                          .method = top->method, .action = TCI_ACT_EXIT};
                rc = add_rec(r, j, &e);
            }
        }
        if (!s || rc != TC_OK)
            break;
        jrec b = {.ts = s->start, .cpu = s->cpu_start, .thread = s->thread, .method = s->method,
                  .action = TCI_ACT_ENTER};
        rc = add_rec(r, j, &b);
        stack[depth++] = idx[i];
    }
    free(stack);
    return rc;
}

/* ---- the events ------------------------------------------------------------------ */

static int one_event(tci_rctx *r, jreader *j, tmap *m, slices *sl, const cJSON *e, uint32_t order)
{
    tci_trace *t = r->trace;
    const char *ph = string_of(e, "ph");
    if (!ph || !ph[0])
        return TC_OK;
    const char *name = string_of(e, "name");
    if (ph[0] == 'M')
        return name ? metadata_event(r, m, e, name) : TC_OK;
    if (!strchr("BEXiICbe", ph[0]))
        return TC_OK; /* flows, samples, objects, marks: not in the IR */
    int64_t ts, cpu = TCI_NO_TIME, dur;
    if (!ns_of(e, "ts", &ts)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, "json", UINT64_MAX, "a \"%c\" event without a numeric ts; skipped", ph[0]);
        return TC_OK;
    }
    uint32_t th = thread_of(r, m, id_of(e, "pid"), id_of(e, "tid"));
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
        jslice s = {ts, NO_END, cpu, TCI_NO_TIME, th, method, order};
        return slice_begin(r, sl, &s);
    }
    case 'E':
        return slice_end(r, j, sl, th, ts, cpu, method);
    case 'X': {
        int64_t tdur;
        if (!ns_of(e, "dur", &dur) || dur < 0)
            dur = 0;
        jslice s = {ts, ts + dur, cpu, cpu != TCI_NO_TIME && ns_of(e, "tdur", &tdur) ? cpu + tdur : cpu, th,
                    method, order};
        uint32_t idx;
        int rc = ensure_thread_slots(r, sl, th);
        return rc == TC_OK ? slice_add(r, sl, &s, &idx) : rc;
    }
    default: {
        jrec rec = {.ts = ts, .cpu = cpu, .thread = th, .method = method};
        if (ph[0] == 'C') {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args"), *a;
            rec.action = TCI_ACT_COUNTER;
            cJSON_ArrayForEach(a, args) { /* one counter per series: "name" or "name.series" */
                if (!cJSON_IsNumber(a) || !isfinite(a->valuedouble))
                    continue;
                rec.value = a->valuedouble;
                if (cJSON_GetArraySize(args) > 1) {
                    char full[512];
                    snprintf(full, sizeof full, "%s.%s", name ? name : "[unnamed]", a->string);
                    if ((rec.method = tci_trace_name(t, full, strlen(full))) == TCI_NONE)
                        return tci_trace_fail(t, r->diag, "json", UINT64_MAX);
                }
                int rc = add_rec(r, j, &rec);
                if (rc != TC_OK)
                    return rc;
            }
            return TC_OK;
        }
        if (ph[0] == 'b' || ph[0] == 'e') {
            const char *id = string_of(e, "id");
            double idn;
            rec.id = id ? strtoull(id, NULL, 0) : number_of(e, "id", &idn) ? id_of_number(idn) : 0;
            rec.action = ph[0] == 'b' ? TCI_ACT_ASYNC_BEGIN : TCI_ACT_ASYNC_END;
        } else {
            rec.action = TCI_ACT_INSTANT;
        }
        return add_rec(r, j, &rec);
    }
    }
}

/* Records per thread in time order; at equal times, the order they were made in
 * (which the slice replay chose so that frames nest). */
typedef struct seqrec {
    jrec r;
    size_t seq;
} seqrec;

static int cmp_seqrec(const void *a, const void *b)
{
    const seqrec *x = a, *y = b;
    if (x->r.thread != y->r.thread) return x->r.thread < y->r.thread ? -1 : 1;
    if (x->r.ts != y->r.ts) return x->r.ts < y->r.ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int order_records(tci_rctx *r, jreader *j)
{
    seqrec *tmp = tci_realloc_array(NULL, j->n ? j->n : 1, sizeof *tmp);
    if (!tmp)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    for (size_t i = 0; i < j->n; i++)
        tmp[i] = (seqrec){j->recs[i], i};
    qsort(tmp, j->n, sizeof *tmp, cmp_seqrec);
    for (size_t i = 0; i < j->n; i++)
        j->recs[i] = tmp[i].r;
    free(tmp);
    return TC_OK;
}

static int slices_to_records(tci_rctx *r, jreader *j, slices *sl)
{
    uint32_t *idx = tci_malloc((sl->n ? sl->n : 1) * sizeof *idx);
    if (!idx)
        return tci_error(r->diag, TC_ERR_NOMEM, "json", UINT64_MAX, "out of memory");
    for (size_t i = 0; i < sl->n; i++)
        idx[i] = (uint32_t)i;
    sort_ctx = sl;
    qsort(idx, sl->n, sizeof *idx, cmp_slice);
    int rc = TC_OK;
    for (size_t a = 0; a < sl->n && rc == TC_OK;) {
        size_t b = a;
        while (b < sl->n && sl->s[idx[b]].thread == sl->s[idx[a]].thread)
            b++;
        rc = replay_thread(r, j, sl, idx + a, b - a);
        a = b;
    }
    free(idx);
    return rc;
}

static void free_slices(slices *sl)
{
    for (uint32_t i = 0; i < sl->n_threads; i++)
        free(sl->open[i].idx);
    free(sl->open);
    free(sl->s);
}

static int read_events(tci_rctx *r, jreader *j, const cJSON *events)
{
    tmap m;
    slices sl;
    memset(&m, 0, sizeof m);
    memset(&sl, 0, sizeof sl);
    int rc = TC_OK;
    uint32_t order = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        if (!cJSON_IsObject(e))
            continue;
        if ((rc = one_event(r, j, &m, &sl, e, order++)) != TC_OK)
            break;
        if (r->opt->max_events && order > r->opt->max_events) {
            rc = tci_error(r->diag, TC_ERR_LIMIT, "json", UINT64_MAX, "more than %llu events (option --max-events)",
                           (unsigned long long)r->opt->max_events);
            break;
        }
    }
    if (rc == TC_OK)
        rc = slices_to_records(r, j, &sl);
    if (rc == TC_OK)
        rc = order_records(r, j);
    free_slices(&sl);
    tci_idmap_free(&m.ids);
    return rc;
}

/* ---- the reader ---------------------------------------------------------------------- */

/* JSON times are µs from any origin; our own writer says which in otherData. */
static void settle_times(tci_trace *t, const cJSON *root)
{
    const cJSON *other = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "otherData") : NULL;
    double start;
    t->start_ns = other && number_of(other, "start_time_ns", &start) && fabs(start) < 9.0e18 ? (int64_t)start : 0;
    t->time_unit_ns = 1;
    t->wrap_bits = 0;
    t->has_wall = true;
    t->clock = t->has_cpu ? TCI_CLOCK_DUAL : TCI_CLOCK_WALL;
}

static int json_open(tci_rctx *r)
{
    jreader *j = r->priv;
    uint64_t max = r->opt->max_json ? r->opt->max_json : TCI_DEFAULT_MAX_JSON;
    if (r->size > max)
        return tci_error(r->diag, TC_ERR_LIMIT, "json", UINT64_MAX,
                         "JSON input of %zu bytes is held in memory to parse; the limit is %llu (option --max-json)",
                         r->size, (unsigned long long)max);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)r->data, r->size, &end, false);
    if (!root) {
        uint64_t off = end ? (uint64_t)(end - (const char *)r->data) : UINT64_MAX;
        return tci_error(r->diag, TC_ERR_FORMAT, "json", off, "not valid JSON here");
    }
    const cJSON *events = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    int rc;
    if (!cJSON_IsArray(events))
        rc = tci_error(r->diag, TC_ERR_FORMAT, "json", 0, "neither an array of events nor an object with \"traceEvents\"");
    else
        rc = read_events(r, j, events);
    if (rc == TC_OK)
        settle_times(r->trace, root);
    cJSON_Delete(root);
    if (rc != TC_OK)
        return rc;
    snprintf(r->trace->detail, sizeof r->trace->detail, "Chrome trace JSON");
    return TC_OK;
}

static int json_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    jreader *j = r->priv;
    size_t k = 0;
    for (; k < max && j->pos < j->n; k++, j->pos++) {
        const jrec *x = &j->recs[j->pos];
        ev[k] = (tci_raw){.wall = x->ts, .cpu = r->trace->has_cpu ? x->cpu : TCI_NO_TIME, .offset = j->pos,
                          .value = x->value, .id = x->id, .thread = x->thread, .method = x->method,
                          .action = x->action};
    }
    r->pos = j->pos;
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int json_rewind(tci_rctx *r)
{
    ((jreader *)r->priv)->pos = 0;
    return TC_OK;
}

static void json_close(tci_rctx *r)
{
    jreader *j = r->priv;
    if (j)
        free(j->recs);
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
