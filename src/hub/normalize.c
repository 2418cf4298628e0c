/*
 * normalize.c - the conversion rules of DESIGN.md §4, written once for every
 * reader and writer.
 *
 * Two passes over the reader (cheap: input is mmapped):
 *   pass 1 learns, per thread, the frames that were already on the stack when
 *          tracing began (exits without enter), the first and last times, and
 *          lets the reader finish its tables (inline definitions, summaries);
 *   pass 2 replays the same state machine and emits well-nested events:
 *          reconstructed enters at the trace start (the exit proves the frame
 *          was open since tracing began), forced exits for frames above a
 *          deeper exit, synthetic exits at the end.
 * Between the passes the trace gets its start (the header's, else the first
 * event's time) and end (the last event's, or start + elapsed when later).
 * Both passes run the same code on the same input, so their decisions agree.
 * Memory: per thread a stack bounded by max-depth; nothing per record.
 * Time: linear in the records. An exit is matched against the stack in O(1)
 * when it closes the top frame; otherwise the thread counts, per method, its
 * frames above the floor (built on the first such exit, dropped when the
 * stack empties), so an exit of a method that is not on the stack is ignored
 * in O(1), and one that is closes every frame it walks past.
 *
 * The tables are frozen between the passes (tci_trace_freeze): every pass-2
 * record is checked against the counts the writers were given.
 *
 * Time: raw reader times are unwrapped per thread (a drop of more than half
 * the wrap period means the u32 µs counter wrapped), converted to ns and
 * clamped so that a thread's time never goes backwards.
 */
#include "tc_base.h"
#include "tc_conv.h"
#include "tc_diag.h"
#include "tc_reader.h"
#include "tc_trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct nthread {
    /* unwrap state, per clock */
    int64_t wall_prev, wall_off, cpu_prev, cpu_off;
    bool seen;
    /* learnt in pass 1 */
    int64_t first_ts, first_cpu, last_ts, last_cpu;
    uint32_t *recon;              /* exits without enter, innermost first */
    uint32_t n_recon, cap_recon;
    /* the stack: in pass 2 reconstructed frames sit below `floor` */
    uint32_t *stack;
    uint32_t depth, cap_stack, floor;
    uint32_t overflow;            /* entered frames dropped by the depth limit */
    tci_idmap on_stack;           /* method -> its frames above the floor, while `counting` */
    bool counting;
    bool started;                 /* pass 2: reconstructed enters emitted */
    int64_t prev_ts, prev_cpu;    /* monotonic clamp */
    /* pass 1's second half on another thread (split_pass): recon holds its leading exits */
    int64_t first_raw_wall, first_raw_cpu;
    uint64_t records;
    uint32_t max_local;           /* its deepest stack, counted from the cut */
} nthread;

typedef struct norm {
    tci_rctx *r;
    tci_trace *t;
    tci_diag *d;
    nthread *th;
    uint32_t n_th, cap_th;
    int pass;
    uint32_t max_depth;
    int64_t last_wall_ref;        /* unwrapped raw wall of the previous record, any thread */
    bool have_ref;
    uint64_t offset;              /* of the record being handled, for messages */
    int64_t origin;               /* ns of raw time 0: the reader's start_ns, kept when the trace start moves */
    tci_event_fn emit;
    void *user;
    int status;
    int64_t sys_first, sys_last;  /* pass 1: times of the first and last system event (TCI_NO_TIME: none) */
} norm;

static inline nthread *thread_state(norm *n, uint32_t thread)
{
    if (thread >= n->n_th) {
        uint32_t need = thread;
        if (tci_grow((void **)&n->th, &n->cap_th, need, sizeof *n->th) != 0)
            return NULL;
        memset(n->th + n->n_th, 0, (size_t)(need + 1 - n->n_th) * sizeof *n->th);
        n->n_th = need + 1;
    }
    return &n->th[thread];
}

/* ---- time ---------------------------------------------------------------- */

static inline int64_t unwrap(norm *n, int64_t raw, int64_t *prev, int64_t *off, bool first, bool use_ref)
{
    int bits = n->t->wrap_bits;
    if (!bits)
        return raw;
    int64_t period = (int64_t)1 << bits, half = period >> 1; /* a shift: the division cost more, per record */
    if (first) {
        *off = 0;
        /* A thread that starts after a wrap: place it nearest the previous
         * record of any thread, unless the whole trace is shorter than a period. */
        bool short_trace = n->t->elapsed_ns >= 0 && n->t->elapsed_ns / n->t->time_unit_ns < period;
        if (use_ref && n->have_ref && !short_trace && n->last_wall_ref > raw + half)
            *off = (n->last_wall_ref - raw + half) / period * period;
    } else if (raw + half < *prev && *off <= INT64_MAX / 4) { /* the cap: only a hostile file wraps 2^29 times */
        *off += period;
        tci_count(n->d, TCI_FIG_CLOCK_WRAP, 1);
    }
    *prev = raw;
    return raw + *off;
}

/* Times of a record in ns: timeline (absolute) and thread CPU. */
static void record_times(norm *n, nthread *s, const tci_raw *raw, int64_t *ts, int64_t *cpu)
{
    const tci_trace *t = n->t;
    bool first = !s->seen;
    int64_t wall = TCI_NO_TIME, c = TCI_NO_TIME;
    if (raw->wall != TCI_NO_TIME) {
        wall = unwrap(n, raw->wall, &s->wall_prev, &s->wall_off, first, true);
        n->last_wall_ref = wall;
        n->have_ref = true;
    }
    if (raw->cpu != TCI_NO_TIME &&
        __builtin_mul_overflow(unwrap(n, raw->cpu, &s->cpu_prev, &s->cpu_off, first, false), t->time_unit_ns, &c))
        c = INT64_MAX;
    s->seen = true;
    /* no wall clock: the timeline is the thread's own CPU time (and we say so) */
    int64_t rel = c != TCI_NO_TIME ? c : 0;
    bool bad = c == INT64_MAX || (wall != TCI_NO_TIME && __builtin_mul_overflow(wall, t->time_unit_ns, &rel)) ||
               __builtin_add_overflow(n->origin, rel, ts) || *ts == TCI_NO_TIME;
    if (TCI_UNLIKELY(bad)) { /* only a corrupt or hostile input gets here */
        n->status = tci_error(n->d, TC_ERR_FORMAT, "normalize", n->offset,
                              "a timestamp is out of range (beyond the 64-bit ns timeline)");
        return;
    }
    *cpu = c;
    if (first) {
        s->prev_ts = *ts;
        s->prev_cpu = c;
        return;
    }
    if (*ts < s->prev_ts || (c != TCI_NO_TIME && s->prev_cpu != TCI_NO_TIME && c < s->prev_cpu)) {
        tci_warn(n->d, TCI_FIG_TIME_BACKWARDS, "normalize", n->offset,
                 "thread %llu: time goes backwards; clamped to the previous record's time",
                 (unsigned long long)t->threads[raw->thread].tid);
        if (*ts < s->prev_ts)
            *ts = s->prev_ts;
        if (c != TCI_NO_TIME && s->prev_cpu != TCI_NO_TIME && c < s->prev_cpu)
            *cpu = s->prev_cpu;
    }
    s->prev_ts = *ts;
    s->prev_cpu = *cpu;
}

/* ---- events ---------------------------------------------------------------- */

static void emit(norm *n, uint32_t thread, uint32_t method, uint32_t depth, uint8_t kind, uint8_t flags,
                 int64_t ts, int64_t cpu)
{
    if (n->pass != 2 || n->status != TC_OK)
        return;
    tci_event ev = {.ts_ns = ts, .cpu_ns = cpu, .value = 0, .id = 0, .thread = thread, .method = method,
                    .depth = depth, .kind = kind, .flags = flags};
    n->d->fig[TCI_FIG_EVENTS]++;
    int rc = n->emit(n->user, &ev);
    if (rc != TC_OK)
        n->status = rc;
}

/* Events outside the call stack (instants, counters, async slices) pass through. */
static void emit_point(norm *n, const tci_raw *raw, int64_t ts, int64_t cpu)
{
    if (n->pass != 2 || n->status != TC_OK)
        return;
    static const uint8_t kinds[] = {[TCI_ACT_INSTANT] = TCI_EV_INSTANT, [TCI_ACT_COUNTER] = TCI_EV_COUNTER,
                                    [TCI_ACT_ASYNC_BEGIN] = TCI_EV_ASYNC_BEGIN, [TCI_ACT_ASYNC_END] = TCI_EV_ASYNC_END,
                                    [TCI_ACT_SAMPLE] = TCI_EV_SAMPLE};
    bool has_value = raw->action == TCI_ACT_COUNTER || raw->action == TCI_ACT_SAMPLE;
    if (raw->action == TCI_ACT_SAMPLE)
        n->d->fig[TCI_FIG_SAMPLES]++;
    tci_event ev = {.ts_ns = ts, .cpu_ns = cpu, .value = has_value ? raw->value : 0,
                    .id = raw->action >= TCI_ACT_ASYNC_BEGIN ? raw->id : 0, .thread = raw->thread,
                    .method = raw->method, .depth = 0, .kind = kinds[raw->action], .flags = 0};
    n->d->fig[TCI_FIG_EVENTS]++;
    int rc = n->emit(n->user, &ev);
    if (rc != TC_OK)
        n->status = rc;
}

static inline int push(nthread *s, uint32_t method)
{
    if (TCI_UNLIKELY(s->depth >= s->cap_stack) &&
        tci_grow((void **)&s->stack, &s->cap_stack, s->depth, sizeof *s->stack) != 0)
        return TC_ERR_NOMEM;
    s->stack[s->depth++] = method;
    return TC_OK;
}

/* ---- per-method counts of the frames above the floor --------------------------- */

static void stop_counting(nthread *s)
{
    tci_idmap_free(&s->on_stack);
    s->counting = false;
}

static int count_frame(nthread *s, uint32_t method, int delta)
{
    uint32_t c = tci_idmap_get(&s->on_stack, method);
    c = (c == TCI_NONE ? 0 : c) + (uint32_t)delta;
    return tci_idmap_put(&s->on_stack, method, c) == 0 ? TC_OK : TC_ERR_NOMEM;
}

/* The first exit that does not close the top frame: count what is open. Paid
 * once per emptying of the stack, by the enters that filled it. */
static int start_counting(nthread *s)
{
    s->counting = true;
    for (uint32_t i = s->floor; i < s->depth; i++) {
        if (count_frame(s, s->stack[i], 1) != TC_OK) {
            stop_counting(s);
            return TC_ERR_NOMEM;
        }
    }
    return TC_OK;
}

/* An entered frame (above the floor) is pushed or popped. The counts are a
 * cache: when they cannot be kept (no memory), they are dropped and rebuilt
 * by the next exit that needs them. */
static inline int entered(nthread *s, uint32_t method)
{
    int rc = push(s, method);
    if (rc == TC_OK && TCI_UNLIKELY(s->counting) && count_frame(s, method, 1) != TC_OK)
        stop_counting(s);
    return rc;
}

static inline uint32_t leave(nthread *s)
{
    uint32_t method = s->stack[--s->depth];
    if (TCI_UNLIKELY(s->counting) && (s->depth == s->floor || count_frame(s, method, -1) != TC_OK))
        stop_counting(s);
    return method;
}

/* Pass 2, before a thread's first record: enter the frames that were open
 * when tracing began, at the trace start (thread CPU 0, the base of its CPU
 * clock). An exit without an enter proves the frame was open since then; the
 * thread's first record can come much later (0.7 s on a real trace). Never
 * after that first record, so the thread's time still never goes back. */
static int start_thread(norm *n, uint32_t thread, nthread *s)
{
    s->started = true;
    int64_t ts = n->t->start_ns < s->first_ts ? n->t->start_ns : s->first_ts;
    int64_t cpu = s->first_cpu == TCI_NO_TIME || s->first_cpu < 0 ? s->first_cpu : 0;
    for (uint32_t i = s->n_recon; i-- > 0;) {
        if (push(s, s->recon[i]) != TC_OK)
            return TC_ERR_NOMEM;
        emit(n, thread, s->recon[i], s->depth - 1, TCI_EV_ENTER, TCI_EVF_SYNTHETIC, ts, cpu);
    }
    s->floor = s->depth;
    return TC_OK;
}

static int on_enter(norm *n, uint32_t thread, nthread *s, uint32_t method, int64_t ts, int64_t cpu)
{
    if (s->depth - s->floor >= n->max_depth) {
        if (!s->overflow)
            tci_warn(n->d, TCI_FIG_DEPTH_LIMIT, "normalize", n->offset,
                     "thread %llu: call depth above %u; deeper frames are dropped (option max-depth)",
                     (unsigned long long)n->t->threads[thread].tid, n->max_depth);
        s->overflow++;
        return TC_OK;
    }
    if (entered(s, method) != TC_OK)
        return TC_ERR_NOMEM;
    emit(n, thread, method, s->depth - 1, TCI_EV_ENTER, 0, ts, cpu);
    return TC_OK;
}

/* An exit with no entered frame below it: a frame that began before tracing. */
static void on_exit_of_recon(norm *n, uint32_t thread, nthread *s, uint32_t method, uint8_t flags,
                             int64_t ts, int64_t cpu)
{
    if (n->pass == 1) {
        if (s->n_recon >= n->max_depth) {
            tci_warn(n->d, TCI_FIG_UNEXPECTED_RECON, "normalize", n->offset,
                     "thread %llu: more than %u exits without enter; the rest are ignored",
                     (unsigned long long)n->t->threads[thread].tid, n->max_depth);
            return;
        }
        if (tci_grow((void **)&s->recon, &s->cap_recon, s->n_recon, sizeof *s->recon) != 0) {
            n->status = TC_ERR_NOMEM;
            return;
        }
        s->recon[s->n_recon++] = method;
        tci_count(n->d, TCI_FIG_EXIT_WITHOUT_ENTER, 1);
        return;
    }
    if (s->depth > 0 && s->stack[s->depth - 1] == method) {
        s->depth--;
        s->floor = s->depth;
        emit(n, thread, method, s->depth, TCI_EV_EXIT, flags, ts, cpu);
    }
}

static void on_exit(norm *n, uint32_t thread, nthread *s, uint32_t method, uint8_t flags, int64_t ts,
                    int64_t cpu)
{
    if (s->overflow) {
        s->overflow--;
        return;
    }
    if (method == TCI_NONE) { /* "end whatever is open" (systrace's bare E) */
        if (s->depth == s->floor) { /* nothing entered: an unnamed frame cannot be reconstructed */
            tci_warn(n->d, TCI_FIG_IGNORED_EXIT, "normalize", n->offset,
                     "thread %llu: an end without a begin; ignored", (unsigned long long)n->t->threads[thread].tid);
            return;
        }
        method = s->stack[s->depth - 1];
    }
    if (s->depth == s->floor) {
        on_exit_of_recon(n, thread, s, method, flags, ts, cpu);
        return;
    }
    if (TCI_LIKELY(s->stack[s->depth - 1] == method)) {
        leave(s);
        emit(n, thread, method, s->depth, TCI_EV_EXIT, flags, ts, cpu);
        return;
    }
    if (!s->counting && start_counting(s) != TC_OK) {
        n->status = TC_ERR_NOMEM;
        return;
    }
    uint32_t c = tci_idmap_get(&s->on_stack, method);
    if (c == TCI_NONE || c == 0) {
        tci_warn(n->d, TCI_FIG_IGNORED_EXIT, "normalize", n->offset,
                 "thread %llu: exit of %s, which is not on the stack; ignored",
                 (unsigned long long)n->t->threads[thread].tid,
                 n->t->methods[method].name ? n->t->methods[method].name : "a method");
        return;
    }
    /* the frame is on the stack: each frame walked past is closed, so the walk is paid by its enters */
    uint32_t i = s->depth - 1;
    while (s->stack[i] != method)
        i--;
    tci_warn(n->d, TCI_FIG_MISMATCHED_EXIT, "normalize", n->offset,
             "thread %llu: exit of a frame %u levels below the top; the frames above it are closed",
             (unsigned long long)n->t->threads[thread].tid, s->depth - 1 - i);
    while (s->depth - 1 > i) {
        uint32_t closed = leave(s);
        emit(n, thread, closed, s->depth, TCI_EV_EXIT, TCI_EVF_FORCED, ts, cpu);
    }
    leave(s);
    emit(n, thread, method, s->depth, TCI_EV_EXIT, flags, ts, cpu);
}

/* A system event (scheduler data): passed through in input order. Not a
 * thread's record (no clamp, no `records`, no stack): it is the kernel's
 * view, and a thread with only these stays out of method-level outputs. */
static int on_system(norm *n, const tci_raw *raw)
{
    int64_t ts;
    if (raw->wall == TCI_NO_TIME || __builtin_mul_overflow(raw->wall, n->t->time_unit_ns, &ts) ||
        __builtin_add_overflow(n->origin, ts, &ts) || ts == TCI_NO_TIME)
        return tci_error(n->d, TC_ERR_FORMAT, "normalize", n->offset,
                         "a timestamp is out of range (beyond the 64-bit ns timeline)");
    if (n->pass == 1) {
        tci_count(n->d, TCI_FIG_SYSTEM_EVENTS, 1);
        uint64_t all = n->d->fig[TCI_FIG_RECORDS] + n->d->fig[TCI_FIG_SYSTEM_EVENTS];
        if (TCI_UNLIKELY(n->r->opt->max_events && all > n->r->opt->max_events))
            return tci_error(n->d, TC_ERR_LIMIT, "normalize", n->offset, "more than %llu records (option --max-events)",
                             (unsigned long long)n->r->opt->max_events);
        if (n->sys_first == TCI_NO_TIME)
            n->sys_first = ts;
        if (n->sys_last == TCI_NO_TIME || ts > n->sys_last)
            n->sys_last = ts;
        return TC_OK;
    }
    if (n->status != TC_OK)
        return n->status;
    tci_event ev = {.ts_ns = ts, .cpu_ns = raw->cpu, .value = raw->value, .id = raw->id, .thread = raw->thread,
                    .method = raw->method, .depth = 0,
                    .kind = (uint8_t)(raw->action - TCI_ACT_SYS + TCI_EV_SYS_FIRST), .flags = 0};
    n->d->fig[TCI_FIG_EVENTS]++;
    int rc = n->emit(n->user, &ev);
    if (rc != TC_OK)
        n->status = rc;
    return n->status;
}

static int on_record(norm *n, const tci_raw *raw)
{
    if (TCI_UNLIKELY(raw->action >= TCI_ACT_SYS))
        return on_system(n, raw);
    nthread *s = thread_state(n, raw->thread);
    if (!s)
        return TC_ERR_NOMEM;
    int64_t ts = 0, cpu = TCI_NO_TIME;
    /* A record that is skipped (action 3) leaves no trace in any clock: its times, maybe the
     * corrupt part, would unwrap (a false wrap) or clamp the thread's next times. */
    bool skipped = raw->action == TCI_ACT_INVALID, first = !s->seen;
    if (!skipped)
        record_times(n, s, raw, &ts, &cpu);
    if (TCI_UNLIKELY(n->status != TC_OK))
        return n->status;
    if (n->pass == 1) {
        tci_count(n->d, TCI_FIG_RECORDS, 1);
        if (TCI_UNLIKELY(n->r->opt->max_events && n->d->fig[TCI_FIG_RECORDS] > n->r->opt->max_events))
            return tci_error(n->d, TC_ERR_LIMIT, "normalize", n->offset,
                             "more than %llu records (option --max-events)",
                             (unsigned long long)n->r->opt->max_events);
        n->t->threads[raw->thread].records++;
        if (raw->action == TCI_ACT_ENTER) /* the name of a call: what --focus and its suggestions mean */
            n->t->methods[raw->method].called = true;
        if (!skipped) {
            if (first) {
                s->first_ts = ts;
                s->first_cpu = cpu;
            }
            s->last_ts = ts;
            s->last_cpu = cpu;
        }
    } else if (!s->started && start_thread(n, raw->thread, s) != TC_OK) {
        return TC_ERR_NOMEM;
    }
    switch (raw->action) {
    case TCI_ACT_INSTANT:
    case TCI_ACT_COUNTER:
    case TCI_ACT_ASYNC_BEGIN:
    case TCI_ACT_ASYNC_END:
    case TCI_ACT_SAMPLE:
        emit_point(n, raw, ts, cpu);
        return n->status;
    case TCI_ACT_ENTER:
        return on_enter(n, raw->thread, s, raw->method, ts, cpu);
    case TCI_ACT_EXIT:
    case TCI_ACT_UNWIND:
        on_exit(n, raw->thread, s, raw->method, raw->action == TCI_ACT_UNWIND ? TCI_EVF_UNWIND : 0, ts, cpu);
        return n->status;
    default:
        tci_warn(n->d, TCI_FIG_INVALID_ACTION, "normalize", n->offset,
                 "record with action 3 (never written by ART or Dalvik); skipped");
        return TC_OK;
    }
}

/* ---- passes -------------------------------------------------------------- */

/* A record must name entries that exist: in pass 2 the tables are frozen and
 * the writers' arrays have exactly these sizes. Checked here, once for every
 * reader, so no out-of-range index ever reaches a writer. */
static int check_record(norm *n, const tci_raw *raw)
{
    const tci_trace *t = n->t;
    /* the common record, a call's enter or exit of a known thread and method, in one test */
    if (TCI_LIKELY(raw->action <= TCI_ACT_UNWIND && raw->thread < t->n_threads && raw->method < t->n_methods))
        return TC_OK;
    const char *what = NULL;
    uint64_t got = 0, have = 0;
    bool bare_exit = raw->method == TCI_NONE && (raw->action == TCI_ACT_EXIT || raw->action == TCI_ACT_UNWIND);
    bool sys = raw->action >= TCI_ACT_SYS;
    uint8_t kind = (uint8_t)(raw->action - TCI_ACT_SYS + TCI_EV_SYS_FIRST);
    bool other_is_thread = sys && tci_sys_has_other(kind);
    if (raw->action > TCI_ACT_SYS_LAST)
        what = "action", got = raw->action, have = TCI_ACT_SYS_LAST + 1;
    else if (raw->thread >= t->n_threads)
        what = "thread", got = raw->thread, have = t->n_threads;
    else if (other_is_thread && tci_sys_other(raw->id) >= t->n_threads)
        what = "thread", got = tci_sys_other(raw->id), have = t->n_threads;
    else if (sys && raw->method != TCI_NONE && raw->method >= t->n_methods)
        what = "method", got = raw->method, have = t->n_methods; /* an ftrace event's name */
    else if (sys)
        return TC_OK;
    else if (raw->method >= t->n_methods && !bare_exit)
        what = "method", got = raw->method, have = t->n_methods;
    else if (raw->action == TCI_ACT_SAMPLE && raw->id >= t->n_stacks)
        what = "stack", got = raw->id, have = t->n_stacks;
    if (TCI_LIKELY(!what))
        return TC_OK;
    return tci_error(n->d, TC_ERR_FORMAT, "normalize", raw->offset,
                     "reader produced a record of %s %llu, but the %s table has %llu entries%s", what,
                     (unsigned long long)got, what, (unsigned long long)have,
                     n->pass == 2 ? " (frozen after the first pass)" : "");
}

/* The records from where the reader is to its end (a split's fallback goes on from the cut). */
static int run_records(norm *n, const tci_reader *rd, tc_progress_fn progress, void *pu)
{
    tci_raw batch[TCI_RAW_BATCH];
    uint64_t count = 0;
    for (;;) {
        size_t got = 0;
        int rc = rd->read(n->r, batch, TCI_RAW_BATCH, &got);
        if (rc == TC_EOF)
            return TC_OK;
        if (rc != TC_OK)
            return rc;
        for (size_t i = 0; i < got; i++) {
            const tci_raw *raw = &batch[i];
            n->offset = raw->offset;
            if ((rc = check_record(n, raw)) != TC_OK || (rc = on_record(n, raw)) != TC_OK)
                return rc;
        }
        count += got;
        tci_source_release(n->r->source, n->r->pos); /* text formats: 256k records can be 20 MiB */
        if (TCI_UNLIKELY(count >= 0x40000)) {
            count = 0;
            uint64_t fault = tci_source_changed(n->r->source);
            if (fault) /* the file shrank under us: no point reading the zeros that replaced it */
                return tci_guard_error(n->d, fault - 1);
            if (progress && progress(pu, (n->pass == 1 ? 0 : n->r->size / 2) + n->r->pos / 2, n->r->size))
                return TC_ERR_CANCELED; /* the caller's callback asked to stop */
        }
    }
}

static int run_pass(norm *n, const tci_reader *rd, tc_progress_fn progress, void *pu)
{
    n->have_ref = false;
    return run_records(n, rd, progress, pu);
}

/* An input in which the reader found nothing it converts or reports is refused,
 * whichever reader it is (-i rhea on any text made an empty output, exit 0). Records
 * read and not converted are reported (the input says what it left out), so they are
 * not nothing. */
static int nothing_found(norm *n)
{
    const tci_diag *d = n->d;
    if (d->fig[TCI_FIG_RECORDS] || d->fig[TCI_FIG_SYSTEM_EVENTS] || d->fig[TCI_FIG_NOT_CONVERTED])
        return TC_OK;
    const char *mod = n->t->reader ? n->t->reader : "normalize";
    if (d->n_kept) { /* why, as the reader said it (a cut item, lines it could not read): without the file name */
        const char *why = d->kept[0];
        size_t skip = d->input ? strlen(d->input) : 0;
        if (skip && !strncmp(why, d->input, skip) && !strncmp(why + skip, ": ", 2))
            why += skip + 2;
        return tci_error(n->d, TC_ERR_NO_TRACE, mod, UINT64_MAX, "no trace events found (%s)", why);
    }
    return tci_error(n->d, TC_ERR_NO_TRACE, mod, UINT64_MAX, "no trace events found");
}

/* What every reader read and did not convert, said once, the same way for all of them: a
 * warning and the trace's metadata (not-converted: "O 1, ( 2"), which the outputs that
 * carry metadata show. */
static int report_not_converted(norm *n)
{
    if (!n->d->fig[TCI_FIG_NOT_CONVERTED])
        return TC_OK;
    tci_report_not_converted(n->d);
    char list[512];
    tci_not_converted_text(n->d, list, sizeof list);
    if (tci_trace_add_meta(n->t, "not-converted", 13, list, strlen(list)) != TC_OK)
        return tci_trace_fail(n->t, n->d, "normalize", UINT64_MAX);
    return TC_OK;
}

/* After pass 1: trace start and end, thread and method figures, names. */
static int between_passes(norm *n)
{
    tci_trace *t = n->t;
    int rc = nothing_found(n);
    if (rc != TC_OK || (rc = report_not_converted(n)) != TC_OK)
        return rc;
    int64_t end = TCI_NO_TIME, first = TCI_NO_TIME;
    uint32_t with_events = 0;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        if (!t->threads[i].records)
            continue;
        nthread *s = thread_state(n, i);
        if (!s)
            return TC_ERR_NOMEM;
        if (!s->seen) /* its records were all skipped (action 3): no time, no event */
            continue;
        with_events++;
        if (s->last_ts > end)
            end = s->last_ts;
        if (first == TCI_NO_TIME || s->first_ts < first)
            first = s->first_ts; /* a thread's first record is its earliest (times are clamped) */
        tci_count(n->d, TCI_FIG_OPEN_AT_END, s->depth);
    }
    /* No header start (systrace, Rhea, foreign JSON): the trace starts at its
     * first event, not at the clock's zero (boot, 13 days earlier on a real
     * capture). Events keep their absolute times (n->origin). */
    if (first == TCI_NO_TIME && n->sys_first != TCI_NO_TIME) {
        /* system events only (a scheduler capture): they span the trace. With
         * records, the records alone do, so the method-level outputs of a
         * capture do not change with the scheduler data beside them. */
        first = n->sys_first;
        end = n->sys_last;
    }
    if (!t->start_given && first != TCI_NO_TIME)
        t->start_ns = first;
    int64_t stop;
    if (t->has_wall && t->elapsed_ns >= 0) {
        if (__builtin_add_overflow(t->start_ns, t->elapsed_ns, &stop))
            tci_warn(n->d, TCI_FIG_BAD_LINE, "normalize", t->elapsed_offset,
                     "the elapsed time (%lld ns) added to the start time (%lld ns) is beyond the 64-bit ns "
                     "timeline; ignored", (long long)t->elapsed_ns, (long long)t->start_ns);
        else if (stop > end)
            end = stop;
    }
    t->end_ns = end == TCI_NO_TIME ? t->start_ns : end;
    n->d->fig[TCI_FIG_THREADS] = with_events;
    n->d->fig[TCI_FIG_METHODS] = t->n_methods;
    uint64_t unknown = 0;
    for (uint32_t i = 0; i < t->n_methods; i++)
        unknown += !t->methods[i].defined;
    if (unknown)
        tci_warn(n->d, TCI_FIG_UNKNOWN_METHOD, "normalize", UINT64_MAX,
                 "%llu method ids are used by records but not defined; named unknown.0x<id>",
                 (unsigned long long)unknown);
    if (unknown > 1)
        n->d->fig[TCI_FIG_UNKNOWN_METHOD] += unknown - 1;
    if (!t->has_wall && with_events) /* a note: the format's nature, not a defect (strict ignores it) */
        tci_count(n->d, TCI_FIG_THREAD_CPU_TIMELINE, 1);
    /* reset for pass 2: the same state machine runs again from the start */
    for (uint32_t i = 0; i < n->n_th; i++) {
        nthread *s = &n->th[i];
        s->seen = false;
        s->wall_off = s->cpu_off = s->wall_prev = s->cpu_prev = 0;
        s->depth = s->floor = s->overflow = 0;
        stop_counting(s);
    }
    return TC_OK;
}

/* After pass 2: close what is still open, at the trace's end (or, without a
 * wall clock, at the thread's own last time). */
static void close_open_frames(norm *n)
{
    const tci_trace *t = n->t;
    for (uint32_t i = 0; i < n->n_th && i < t->n_threads; i++) {
        nthread *s = &n->th[i];
        int64_t end = t->has_wall ? t->end_ns : s->last_ts;
        while (s->depth) {
            s->depth--;
            emit(n, i, s->stack[s->depth], s->depth, TCI_EV_EXIT, TCI_EVF_SYNTHETIC, end, s->last_cpu);
        }
    }
}

static void free_threads(norm *n)
{
    for (uint32_t i = 0; i < n->n_th; i++) {
        free(n->th[i].stack);
        free(n->th[i].recon);
        tci_idmap_free(&n->th[i].on_stack);
    }
    free(n->th);
}

/* ---- pass 1 on two threads (option threads, a reader that can split) ---------
 *
 * Speculation with an exact fallback. The reader cuts the records near their
 * middle; the first half runs here, through run_pass as always, and the second
 * half on another thread, from empty per-thread state. What the second half
 * cannot know (the stacks, clocks and figures at the cut) it does not guess:
 * it keeps, per thread, its leading exits (those that met its empty stack, in
 * order), its first raw times, records, first/last times and deepest local
 * stack, and it gives up on anything else that depends on the state before the
 * cut (a warning of any kind, an exit that does not close its own top frame, a
 * clock offset, a record that would grow a table, an error). Once the first
 * half has ended with the true state, stitch() checks that replaying the
 * second half on it would take exactly the decisions the second half took,
 * and then adds it in. Else the first half's reader simply goes on from the
 * cut, through today's loop with the true state: byte-identical by
 * construction. TC_DEBUG_SPLIT=1 says on stderr which way it went.
 */

typedef struct spec {
    norm n;                  /* the second half's state (n.t: the snapshot below) */
    tci_trace t;             /* the tables at the cut, for the clock code: a copy of the header, */
    tci_thread *threads;     /* and of the thread list (the first half may grow and move both) */
    tci_rctx r;              /* the reader's second context */
    tci_diag d;              /* private: any warning in it ends the speculation */
    const tci_reader *rd;
    const tci_source *source; /* the first half's, only to drop the pages read here */
    int64_t first_ref_raw;   /* raw wall time of the half's first record that has one */
    uint32_t first_ref_thread;
    bool first_ref_is_first; /* ... and it was its thread's first in the half */
    atomic_bool stop;        /* the first half failed: no point going on */
    double cpu_s;            /* the thread's CPU time, for TC_DEBUG_SPLIT */
    const char *failed;      /* why the speculation does not hold; NULL: it held so far */
} spec;

static void spec_fail(spec *sp, const char *why)
{
    if (!sp->failed)
        sp->failed = why;
}

/* One record of the second half: pass 1's rules for a call's enter or exit,
 * with the state the first half will have handed over left open. NULL, or
 * why the speculation does not hold. */
static const char *spec_record(spec *sp, const tci_raw *raw)
{
    norm *n = &sp->n;
    if (raw->action > TCI_ACT_UNWIND || raw->thread >= sp->t.n_threads || raw->method >= sp->t.n_methods)
        return "a record other than a known thread's enter or exit of a known method";
    nthread *s = thread_state(n, raw->thread);
    if (!s)
        return "out of memory";
    bool first = !s->seen, ref = raw->wall != TCI_NO_TIME && !n->have_ref;
    int64_t ts = 0, cpu = TCI_NO_TIME;
    record_times(n, s, raw, &ts, &cpu);
    if (n->status != TC_OK || s->wall_off || s->cpu_off || sp->d.fig[TCI_FIG_TIME_BACKWARDS])
        return "a clock wraps, steps back or is out of range";
    if (ref) {
        sp->first_ref_raw = raw->wall;
        sp->first_ref_thread = raw->thread;
        sp->first_ref_is_first = first;
    }
    if (first) {
        s->first_ts = ts, s->first_cpu = cpu;
        s->first_raw_wall = raw->wall, s->first_raw_cpu = raw->cpu;
    }
    s->last_ts = ts, s->last_cpu = cpu;
    s->records++;
    if (raw->action == TCI_ACT_ENTER) {
        if (s->depth >= n->max_depth || push(s, raw->method) != TC_OK)
            return "the depth limit (max-depth) or out of memory";
        if (s->depth > s->max_local)
            s->max_local = s->depth;
    } else if (s->depth) {
        if (s->stack[s->depth - 1] != raw->method)
            return "an exit that does not close the top frame";
        s->depth--;
    } else { /* a leading exit: closes a frame of the first half, or one open before the trace */
        if (s->n_recon >= 2 * n->max_depth ||
            tci_grow((void **)&s->recon, &s->cap_recon, s->n_recon, sizeof *s->recon) != 0)
            return "too many exits without enter, or out of memory";
        s->recon[s->n_recon++] = raw->method;
    }
    return NULL;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + ts.tv_nsec / 1e9 : 0;
}

static void *spec_main(void *arg)
{
    spec *sp = arg;
    tci_raw batch[TCI_RAW_BATCH];
    uint64_t dropped = sp->r.pos, max_events = sp->r.opt->max_events, records = 0;
    /* as tci_source_release, a TLB flush per 4 MiB; the reader looks back at nothing here */
    const uint64_t step = 4u << 20, keep = 64u << 10;
    while (!sp->failed) {
        if (atomic_load_explicit(&sp->stop, memory_order_relaxed))
            return spec_fail(sp, "the first half failed"), NULL;
        size_t got = 0;
        int rc = sp->rd->read(&sp->r, batch, TCI_RAW_BATCH, &got);
        if (rc == TC_EOF)
            break;
        if (rc != TC_OK)
            return spec_fail(sp, "the reader refused a record (an error, a warning or a table growth)"), NULL;
        for (size_t i = 0; i < got && !sp->failed; i++)
            sp->failed = spec_record(sp, &batch[i]);
        if (max_events && (records += got) > max_events)
            spec_fail(sp, "more records than max-events");
        if (sp->r.pos > dropped + step + keep) { /* the pages read here: the first half's loop never reaches them */
            tci_source_drop((tci_source *)sp->source, dropped, sp->r.pos - keep);
            dropped = sp->r.pos - keep;
        }
    }
    for (int k = 0; k < TCI_FIG__COUNT && !sp->failed; k++)
        if (sp->d.fig[k])
            spec_fail(sp, "a warning");
    sp->cpu_s = thread_cpu_s();
    return NULL;
}

/* True when the raw time `raw`, following `prev`, is taken for a wrap of the clock. */
static bool wraps_after(const norm *n, int64_t prev, int64_t raw)
{
    int bits = n->t->wrap_bits;
    return bits && raw + (((int64_t)1 << bits) >> 1) < prev;
}

/* Would replaying the second half on the first half's final state take the
 * decisions the second half took? NULL when it would, else why not. Changes nothing. */
static const char *stitch_check(norm *n, spec *sp)
{
    norm *h = &sp->n;
    uint64_t records = n->d->fig[TCI_FIG_RECORDS];
    if (sp->first_ref_is_first && n->have_ref && wraps_after(n, n->last_wall_ref, sp->first_ref_raw) &&
        (sp->first_ref_thread >= n->n_th || !n->th[sp->first_ref_thread].seen))
        return "a thread's first time would be placed after a clock wrap";
    for (uint32_t i = 0; i < h->n_th; i++) {
        const nthread *b = &h->th[i];
        if (!b->records)
            continue;
        records += b->records;
        if (i >= n->n_th || !n->th[i].seen) { /* the thread starts in the second half: its exits are recons */
            if (b->n_recon > n->max_depth)
                return "more exits without enter than max-depth";
            continue;
        }
        const nthread *a = &n->th[i];
        if (a->overflow || a->wall_off || a->cpu_off)
            return "a thread above max-depth, or a clock offset, at the cut";
        if ((b->first_raw_wall != TCI_NO_TIME && wraps_after(n, a->wall_prev, b->first_raw_wall)) ||
            (b->first_raw_cpu != TCI_NO_TIME && wraps_after(n, a->cpu_prev, b->first_raw_cpu)))
            return "a clock wraps across the cut";
        if (b->first_ts < a->prev_ts || (b->first_cpu != TCI_NO_TIME && a->prev_cpu != TCI_NO_TIME &&
                                         b->first_cpu < a->prev_cpu))
            return "a time steps back across the cut";
        if ((uint64_t)a->depth + b->max_local > n->max_depth)
            return "max-depth crossed after the cut";
        uint32_t depth = a->depth, recon = a->n_recon;
        for (uint32_t j = 0; j < b->n_recon; j++) {
            if (depth && a->stack[depth - 1] != b->recon[j])
                return "an exit after the cut that does not close the first half's top frame";
            if (depth)
                depth--;
            else if (recon++ >= n->max_depth)
                return "more exits without enter than max-depth";
        }
    }
    if (n->r->opt->max_events && records > n->r->opt->max_events)
        return "more records than max-events";
    return NULL;
}

/* Add the second half to the first half's state, as the records would have. */
static int stitch(norm *n, spec *sp)
{
    norm *h = &sp->n;
    for (uint32_t i = 0; i < h->n_th; i++) {
        nthread *b = &h->th[i], *a;
        if (!b->records)
            continue;
        if (!(a = thread_state(n, i)))
            return TC_ERR_NOMEM;
        for (uint32_t j = 0; j < b->n_recon; j++) {
            if (a->depth) {
                leave(a);
            } else {
                if (tci_grow((void **)&a->recon, &a->cap_recon, a->n_recon, sizeof *a->recon) != 0)
                    return TC_ERR_NOMEM;
                a->recon[a->n_recon++] = b->recon[j];
                tci_count(n->d, TCI_FIG_EXIT_WITHOUT_ENTER, 1);
            }
        }
        for (uint32_t j = 0; j < b->depth; j++)
            if (entered(a, b->stack[j]) != TC_OK)
                return TC_ERR_NOMEM;
        tci_thread *t = &n->t->threads[i];
        if (!a->seen) /* no time of the thread in the first half (a skipped record has none) */
            a->first_ts = b->first_ts, a->first_cpu = b->first_cpu;
        t->records += b->records;
        n->d->fig[TCI_FIG_RECORDS] += b->records;
        a->last_ts = b->last_ts, a->last_cpu = b->last_cpu;
        a->prev_ts = b->prev_ts, a->prev_cpu = b->prev_cpu;
        a->wall_prev = b->wall_prev, a->cpu_prev = b->cpu_prev;
        a->seen = true;
    }
    if (h->have_ref)
        n->last_wall_ref = h->last_wall_ref, n->have_ref = true;
    return TC_OK;
}

static bool split_debug(void)
{
    const char *e = getenv("TC_DEBUG_SPLIT");
    return e && *e && strcmp(e, "0");
}

static void free_spec(spec *sp)
{
    free_threads(&sp->n);
    for (size_t i = 0; i < sp->d.n_kept; i++)
        free(sp->d.kept[i]);
    free(sp->threads);
    free(sp);
}

/* Pass 1: on two threads when asked (option threads) and the reader can cut its records; else run_pass. */
static int pass_one(norm *n, const tci_reader *rd, tc_progress_fn progress, void *pu)
{
    if (n->r->opt->threads < 2 || !rd->split)
        return run_pass(n, rd, progress, pu);
    const tci_trace *t = n->t;
    spec *sp = calloc(1, sizeof *sp);
    tci_thread *threads = sp ? malloc(((size_t)t->n_threads + 1) * sizeof *threads) : NULL;
    if (!threads) {
        free(sp);
        return run_pass(n, rd, progress, pu);
    }
    if (t->n_threads)
        memcpy(threads, t->threads, (size_t)t->n_threads * sizeof *threads);
    sp->t = *t;
    sp->t.threads = sp->threads = threads;
    sp->n.r = &sp->r, sp->n.t = &sp->t, sp->n.d = &sp->d, sp->n.pass = 1;
    sp->n.max_depth = n->max_depth, sp->n.origin = n->origin, sp->n.sys_first = sp->n.sys_last = TCI_NO_TIME;
    sp->rd = rd, sp->source = n->r->source;
    atomic_init(&sp->stop, false);
    pthread_t thread;
    if (rd->split(n->r, &sp->r) != TC_OK) {
        free_spec(sp);
        return run_pass(n, rd, progress, pu);
    }
    sp->r.diag = &sp->d;
    if (pthread_create(&thread, NULL, spec_main, sp) != 0) {
        rd->join(n->r, &sp->r);
        free_spec(sp);
        return run_pass(n, rd, progress, pu);
    }
    double cpu0 = thread_cpu_s();
    int rc = run_pass(n, rd, progress, pu);
    double first_half_s = thread_cpu_s() - cpu0;
    if (rc != TC_OK || n->status != TC_OK)
        atomic_store(&sp->stop, true);
    pthread_join(thread, NULL);
    rd->join(n->r, &sp->r);
    if (rc == TC_OK && n->status == TC_OK) {
        const char *why = sp->failed ? sp->failed : stitch_check(n, sp);
        if (!why && tci_source_changed(n->r->source))
            why = "the input changed";
        cpu0 = thread_cpu_s();
        rc = why ? run_records(n, rd, progress, pu) : stitch(n, sp);
        if (split_debug()) /* the CPU times say whether the halves were even and what the join cost */
            fprintf(stderr, "split: %s%s%s (CPU s: first half %.3f, second half %.3f, %s %.3f)\n",
                    why ? "fell back (" : "stitched", why ? why : "", why ? ")" : "", first_half_s, sp->cpu_s,
                    why ? "sequential rest" : "stitch", thread_cpu_s() - cpu0);
    }
    free_spec(sp);
    return rc;
}

int tci_normalize_run(tci_rctx *r, const tci_reader *rd, tci_ready_fn ready, tci_event_fn emit_fn,
                      void *user, tc_progress_fn progress, void *progress_user)
{
    norm n;
    memset(&n, 0, sizeof n);
    n.r = r;
    n.t = r->trace;
    n.d = r->diag;
    n.max_depth = r->opt->max_depth ? r->opt->max_depth : 10000;
    n.emit = emit_fn;
    n.user = user;
    n.origin = n.t->start_ns;
    n.sys_first = n.sys_last = TCI_NO_TIME;
    int rc;

    n.pass = r->pass = 1;
    if ((rc = pass_one(&n, rd, progress, progress_user)) != TC_OK || (rc = n.status) != TC_OK)
        goto out;
    if ((rc = between_passes(&n)) != TC_OK)
        goto out;
    /* the method table is complete and nothing has been shown: the one point to rename it */
    if (r->transform.apply && (rc = r->transform.apply(r->transform.state, n.t, n.d)) != TC_OK)
        goto out;
    if ((rc = tci_trace_finalize(n.t, n.d, r->opt)) != TC_OK)
        goto out;
    /* the selection matches names, drops threads and may add sampled stacks: after the names, before the freeze */
    if (r->select.apply && (rc = r->select.apply(r->select.state, n.t, n.d)) != TC_OK)
        goto out;
    tci_trace_freeze(n.t); /* before the writers size their arrays in ready() */
    if (n.d->strict) {
        for (int k = 0; k < TCI_FIG__COUNT; k++) {
            if (tci_figure_kind(k) == TC_FIG_WARNING && n.d->fig[k]) {
                snprintf(n.d->error, sizeof n.d->error, "%s (an error under --strict)",
                         n.d->n_kept ? n.d->kept[0] : "a warning");
                rc = TC_ERR_STRICT;
                goto out;
            }
        }
    }
    if ((rc = ready(user)) != TC_OK)
        goto out;
    n.d->muted = true;
    n.pass = r->pass = 2;
    if ((rc = rd->rewind(r)) != TC_OK)
        goto out;
    if (r->source)
        r->source->released = 0; /* pages come back as pass 2 touches them */
    if ((rc = run_pass(&n, rd, progress, progress_user)) != TC_OK || (rc = n.status) != TC_OK)
        goto out;
    close_open_frames(&n);
    rc = n.status;
    if (progress)
        progress(progress_user, r->size, r->size);
out:
    n.d->muted = false;
    free_threads(&n);
    return rc;
}
