/*
 * join.c - one timeline: a method trace and the system trace of the same run read as
 * one input (tc_conv_open_merge; `traceconv merge`; doc/merge.md).
 *
 * The join is a reader of the core that reads no bytes of its own: its open()
 * normalizes both inputs, each by its own tc_conv exactly as for a conversion (its
 * reader, its pairing and repair rules, its deobfuscation), and its read() gives
 * the records of both, in the system trace's clock, to the ordinary pipeline, so
 * that every writer, the selection and several outputs in one read work on the
 * merged trace unchanged.
 *
 *   open:  the system trace's normalize runs; when its tables are final, the
 *          method trace's runs inside it (ready_system), and when those are final
 *          too (ready_method) the clock offset is chosen, the tables are joined
 *          (the method trace's threads onto the system trace's, processes by pid)
 *          and both event streams are spilled, per thread of each input, into one
 *          tci_merge (merge.c): memory grows with threads, not with events.
 *   read:  the merge gives the events of both in time order (at equal times an
 *          exit first: a slice that ends as another begins does not hold it);
 *          each becomes a raw record of the joined thread. The outer normalize
 *          pairs them again (they are already well nested) and counts them.
 *
 * Nesting on a shared track (the one rule, enforced here): each input's own
 * frames are well nested (its normalize saw to it), but the two interleave,
 * and a boundary may cross by a few µs (ART's µs truncation, the precision of
 * the clock offset). When a frame ends while frames of the other input that
 * began inside it are still open, those frames end with it (their end is
 * clamped to its end), and the rest of them (their later children and their
 * own exits) is dropped. A clamp that moved an end is counted: the figure
 * merge-clamped, and the largest cut in its message; the slices dropped so (begun
 * inside a clamped frame after its end) are counted too: merge-left-out. Equal times
 * are no clamp.
 *
 * Spans: when the method trace's span, once aligned, and the system trace's do not
 * overlap (an --offset years off, a capture of another run), nothing of one can nest in
 * the other: the warning merge-disjoint names both spans (the command refuses such a
 * merge unless --force; doc/merge.md).
 *
 * Clock rules (ART.md §2.3, SYSTRACE.md): the system trace's clock is the
 * timeline; the method trace's timestamps are shifted by one offset:
 *   --offset given                -> that offset, exact;
 *   Dalvik (vm=dalvik)            -> wall-clock µs since the epoch: marker - realtime_ts (1 ms);
 *   any other method trace        -> CLOCK_MONOTONIC: marker - parent_ts (1 µs); a method
 *                                    trace on the boot clock (Rhea's monotonic-minus-
 *                                    boottime-ns) adds that difference;
 *   ART >= 14 V1 (synthetic small thread ids): the same, with a warning: on Android 14
 *                                    the start is a hardware counter (not detectable from
 *                                    the file; Android 15 writes the same layout on
 *                                    CLOCK_MONOTONIC), so --offset may be needed;
 *   no marker and no --offset     -> an error that asks for --offset.
 *
 * Threads: by tid in the app's process (exact, else the low 16 bits of an ART <= 13
 * record tid when one thread agrees); when no thread matches by tid (Dalvik ids,
 * ART >= 14's synthetic ids) by name: "main" is the thread whose tid is the pid,
 * others the one thread of that name (or of its 15-byte kernel comm). The process:
 * the method trace's pid= when the system trace has it, else the process that
 * holds the most of its threads by tid. An unmatched thread keeps its own track in
 * the app's process, with a warning (merge-unmatched-thread). A pair that shares no
 * process at all is no recording of one run: an error that names --offset, unless an
 * offset is given (then every method-trace thread keeps a track of its own).
 */
#include "tc_base.h"
#include "tc_engine.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_trace.h"

#include <stdio.h>
#include <stdlib.h>

enum { SYS = 0, METH = 1 };
static const char *const role[2] = {"system trace", "method trace"};

typedef struct jframe {
    uint32_t depth;  /* in its own input */
    uint32_t method; /* joined */
    uint8_t src;
} jframe;

typedef struct jthread {
    jframe *stack;
    uint32_t depth, cap;
    uint32_t clamp[2];     /* per input: the depth of its outermost frame ended early (TCI_NONE: none) */
    int64_t clamp_ts[2];   /* when it was ended */
} jthread;

typedef struct join {
    tc_conv *in[2];
    const tci_trace *t[2];
    uint32_t *thread_map[2], *method_map[2], *stack_map[2];
    uint32_t run_base[2];
    tci_merge *merge;
    int64_t offset;
    bool offset_given;
    tci_rctx *r;
    jthread *th;
    uint32_t n_th;
    tci_event pending;     /* pulled from the merge, not yet fully given */
    bool have_pending;
    uint64_t clamped;      /* pass 1: ends moved */
    uint64_t left_out;     /* pass 1: slices dropped inside a clamped frame */
    int64_t max_cut;
    char rule[64];
} join;

static void reset_threads(join *j);

/* ---- the clock ------------------------------------------------------------ */

/* "MARKER_NS CLOCK_NS" of a clock-sync metadata value (systrace.c). */
static bool marker(const tci_trace *t, const char *key, int64_t *marker_ns, int64_t *clock_ns)
{
    const char *v = tci_trace_meta(t, key);
    long long a, b;
    int used = 0;
    if (!v || sscanf(v, "%lld %lld%n", &a, &b, &used) != 2 || v[used])
        return false;
    *marker_ns = a;
    *clock_ns = b;
    return true;
}

/* ART >= 14's V1 files number threads 1, 2, 3... in order of first use (ART.md §2.2). */
static bool synthetic_ids(const tci_trace *m)
{
    if (!m->vm || strcmp(m->vm, "art") || m->detail[0] != 'v' || m->detail[1] < '1' || m->detail[1] > '3')
        return false;
    for (uint32_t i = 0; i < m->n_threads; i++)
        if (m->threads[i].tid == 0 || m->threads[i].tid > (uint64_t)m->n_threads + 8)
            return false;
    return m->n_threads > 0;
}

static int offset_error(join *j, const char *what)
{
    const tci_diag *d = tci_conv_diag(j->in[SYS]); /* a marker it could not read says why */
    const char *bad = NULL;
    for (size_t i = 0; i < d->n_kept && !bad; i++)
        bad = strstr(d->kept[i], "clock-sync marker");
    return tci_error(j->r->diag, TC_ERR_USAGE, "merge", UINT64_MAX,
                     "the system trace (%s) has no %s%s%.200s%s; give the method trace's offset with --offset "
                     "(doc/merge.md, The clock offset)", j->t[SYS]->input_name, what, bad ? " (" : "", bad ? bad : "",
                     bad ? ")" : "");
}

static int choose_offset(join *j)
{
    const tci_trace *m = j->t[METH], *s = j->t[SYS];
    int64_t mk, clock;
    if (j->offset_given) {
        snprintf(j->rule, sizeof j->rule, "--offset %lldns (exact)", (long long)j->offset);
        return TC_OK;
    }
    if (m->vm && !strcmp(m->vm, "dalvik")) { /* gettimeofday µs since the epoch */
        if (!marker(s, "clock-sync-realtime-ts", &mk, &clock))
            return offset_error(j, "trace_event_clock_sync realtime_ts marker (a Dalvik trace is on the wall clock)");
        snprintf(j->rule, sizeof j->rule, "realtime_ts marker (1 ms)");
    } else {
        if (!marker(s, "clock-sync-parent-ts", &mk, &clock))
            return offset_error(j, "trace_event_clock_sync parent_ts marker");
        snprintf(j->rule, sizeof j->rule, "parent_ts marker (1 us)");
        const char *boot = tci_trace_meta(m, "monotonic-minus-boottime-ns");
        long long d;
        int used = 0;
        if (boot && sscanf(boot, "%lld%n", &d, &used) == 1 && !boot[used] &&
            !__builtin_add_overflow(mk, (int64_t)d, &mk))
            snprintf(j->rule, sizeof j->rule, "parent_ts marker + boot offset (1 us)");
        if (synthetic_ids(m))
            tci_warn(j->r->diag, TCI_FIG_MERGE_CLOCK_GUESS, "merge", UINT64_MAX,
                     "%s is an ART >= 14 trace (synthetic thread ids): placed by the parent_ts marker as "
                     "CLOCK_MONOTONIC; if it was recorded on Android 14 its clock is a hardware counter, "
                     "and --offset must give its place", m->input_name);
    }
    if (__builtin_sub_overflow(mk, clock, &j->offset))
        return tci_error(j->r->diag, TC_ERR_FORMAT, "merge", UINT64_MAX,
                         "the clock-sync marker's times are beyond the 64-bit ns timeline");
    return TC_OK;
}

/* ---- tables ---------------------------------------------------------------- */

static int table_fail(join *j)
{
    return tci_trace_fail(j->r->trace, j->r->diag, "merge", UINT64_MAX);
}

/* The system trace's process with this pid (TCI_NONE: none). sys_process is once per merge. */
static uint32_t sys_process(const tci_trace *s, int64_t pid)
{
    for (uint32_t p = 0; pid > 0 && p < s->n_processes; p++)
        if (s->processes[p].pid == pid)
            return p;
    return TCI_NONE;
}

/*
 * The system trace's threads indexed once (linear), so that matching costs O(1) per method
 * thread whatever the two inputs hold: by tid (Linux tids are system-wide), by the low 16
 * bits of the app's tids, and by name within a process (and in any process, to find the
 * app by names). A key that two threads share is AMBIGUOUS: neither matches.
 */
#define AMBIGUOUS (TCI_NONE - 1)
typedef struct sysindex {
    tci_idmap tid, low, name, any_name;
} sysindex;

static uint64_t name_key(const char *name, size_t len, uint32_t process)
{
    return tci_text_hash(name, len, 0x6a6f696e) ^ ((uint64_t)process + 1) * 0x9E3779B97F4A7C15ull;
}

static int index_put(tci_idmap *m, uint64_t key, uint32_t thread)
{
    uint32_t had = tci_idmap_get(m, key);
    if (had == thread || had == AMBIGUOUS)
        return TC_OK;
    return tci_idmap_put(m, key, had == TCI_NONE ? thread : AMBIGUOUS) == 0 ? TC_OK : TC_ERR_NOMEM;
}

static int index_system(sysindex *ix, const tci_trace *s)
{
    for (uint32_t i = 0; i < s->n_threads; i++) {
        const tci_thread *th = &s->threads[i];
        size_t len = strlen(th->name);
        if (index_put(&ix->tid, th->tid, i) != TC_OK || index_put(&ix->name, name_key(th->name, len, th->process), i) != TC_OK ||
            index_put(&ix->any_name, name_key(th->name, len, TCI_NONE), i) != TC_OK)
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

/* The app's threads by the low 16 bits of their tids (ART <= 13 records cut tids to 16 bits). */
static int index_app(sysindex *ix, const tci_trace *s, uint32_t app)
{
    for (uint32_t i = 0; app != TCI_NONE && i < s->n_threads; i++)
        if (s->threads[i].process == app && index_put(&ix->low, s->threads[i].tid & 0xFFFF, i) != TC_OK)
            return TC_ERR_NOMEM;
    return TC_OK;
}

static void index_free(sysindex *ix)
{
    tci_idmap_free(&ix->tid);
    tci_idmap_free(&ix->low);
    tci_idmap_free(&ix->name);
    tci_idmap_free(&ix->any_name);
}

/* The app's thread that the method thread of this tid is: the same tid, else (a tid below
 * 65536) the one thread whose low 16 bits agree. */
static uint32_t match_tid(const sysindex *ix, const tci_trace *s, uint32_t app, uint64_t tid)
{
    uint32_t i = tci_idmap_get(&ix->tid, tid);
    if (i != TCI_NONE && i != AMBIGUOUS && s->threads[i].process == app)
        return i;
    i = tid < 65536 ? tci_idmap_get(&ix->low, tid) : TCI_NONE;
    return i == AMBIGUOUS ? TCI_NONE : i;
}

/* The thread of this name in process p (TCI_NONE: any process): the same name, else the
 * 15-byte kernel comm a longer name was cut to. */
static uint32_t find_name(const tci_idmap *m, const tci_trace *s, const char *name, uint32_t p)
{
    size_t len = strlen(name);
    uint32_t i = tci_idmap_get(m, name_key(name, len, p));
    if (i != TCI_NONE && i != AMBIGUOUS && !strcmp(s->threads[i].name, name))
        return i;
    if (len <= 15)
        return TCI_NONE;
    i = tci_idmap_get(m, name_key(name, 15, p));
    return i != TCI_NONE && i != AMBIGUOUS && strlen(s->threads[i].name) == 15 && !memcmp(s->threads[i].name, name, 15)
           ? i : TCI_NONE;
}

/* By name, where the method trace's ids are no Linux tids: "main" is the thread whose tid
 * is the pid; another the one thread of that name (or comm) in the app's process. */
static uint32_t match_name(const sysindex *ix, const tci_trace *s, uint32_t app, const char *name)
{
    if (strcmp(name, "main"))
        return find_name(&ix->name, s, name, app);
    uint32_t i = tci_idmap_get(&ix->tid, (uint64_t)s->processes[app].pid);
    return i != TCI_NONE && i != AMBIGUOUS && s->threads[i].process == app ? i : TCI_NONE;
}

/* The process with most of the method trace's threads: by tid, or (ids that are no tids) by name. */
static uint32_t most_threads(const sysindex *ix, const tci_trace *s, const tci_trace *m, bool by_name, uint32_t *count)
{
    uint32_t best = TCI_NONE, best_n = 0;
    for (uint32_t k = 0; k < m->n_threads; k++) {
        const tci_thread *mt = &m->threads[k];
        uint32_t i = !mt->records                ? TCI_NONE
                     : !by_name                  ? tci_idmap_get(&ix->tid, mt->tid)
                     : strcmp(mt->name, "main") ? find_name(&ix->any_name, s, mt->name, TCI_NONE)
                                                 : TCI_NONE;
        if (i == TCI_NONE || i == AMBIGUOUS)
            continue;
        uint32_t p = s->threads[i].process;
        if (++count[p] > best_n)
            best = p, best_n = count[p];
    }
    return best;
}

/* The app's process in the system trace: pid= when the system trace has it, else the one
 * holding most of the method trace's tids (or, where ids are no tids, its thread names),
 * else the pid the method trace implies. TCI_NONE: none; *rc an error. */
static uint32_t find_app(const sysindex *ix, const tci_trace *s, const tci_trace *m, int *rc)
{
    *rc = TC_OK;
    uint32_t p = tci_trace_meta(m, "pid") ? sys_process(s, m->pid) : TCI_NONE;
    if (p != TCI_NONE || !s->n_processes)
        return p;
    uint32_t *count = tci_calloc(s->n_processes, sizeof *count);
    if (!count) {
        *rc = TC_ERR_NOMEM;
        return TCI_NONE;
    }
    bool no_tids = (m->vm && !strcmp(m->vm, "dalvik")) || synthetic_ids(m);
    p = most_threads(ix, s, m, false, count);
    if (p == TCI_NONE && !no_tids)
        p = sys_process(s, m->pid); /* the main thread's tid, which is the pid on Android */
    if (p == TCI_NONE && no_tids) {
        memset(count, 0, s->n_processes * sizeof *count);
        p = most_threads(ix, s, m, true, count);
    }
    free(count);
    return p;
}

static int copy_methods(join *j, int k, uint64_t base)
{
    const tci_trace *in = j->t[k];
    tci_trace *t = j->r->trace;
    if (in->n_methods && !(j->method_map[k] = tci_calloc(in->n_methods, sizeof(uint32_t))))
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < in->n_methods; i++) {
        uint32_t idx = tci_trace_method(t, base + i);
        if (idx == TCI_NONE)
            return table_fail(j);
        tci_method m = in->methods[i]; /* named (finalized): the names point into the input's arena, kept with it */
        t->methods[idx] = m;
        j->method_map[k][i] = idx;
    }
    if (in->n_stacks && !(j->stack_map[k] = tci_calloc(in->n_stacks, sizeof(uint32_t))))
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < in->n_stacks; i++) { /* a parent is interned before its children */
        const tci_stack *st = &in->stacks[i];
        uint32_t parent = st->parent == TCI_NONE ? TCI_NONE : j->stack_map[k][st->parent];
        if ((j->stack_map[k][i] = tci_trace_stack(t, parent, j->method_map[k][st->method])) == TCI_NONE)
            return table_fail(j);
    }
    return TC_OK;
}

static int name_thread(join *j, uint32_t idx, const char *name, uint8_t rank)
{
    return tci_trace_name_thread(j->r->trace, idx, name, strlen(name), rank) == TC_OK ? TC_OK : table_fail(j);
}

/* The system trace's processes and threads as they are; process 0 is the app's. */
static int copy_system(join *j, uint32_t app, uint32_t **pmap)
{
    const tci_trace *s = j->t[SYS], *m = j->t[METH];
    tci_trace *t = j->r->trace;
    if (!(*pmap = tci_calloc(s->n_processes ? s->n_processes : 1, sizeof(uint32_t))))
        return TC_ERR_NOMEM;
    t->processes[0].pid = app != TCI_NONE ? s->processes[app].pid : m->pid;
    t->processes[0].ppid = app != TCI_NONE ? s->processes[app].ppid : -1;
    const char *app_name = app != TCI_NONE && !m->process_named ? s->processes[app].name : m->process_name;
    if (tci_trace_name_process(t, 0, app_name, strlen(app_name), 2) != TC_OK)
        return table_fail(j);
    for (uint32_t p = 0; p < s->n_processes; p++) {
        if (p == app) {
            (*pmap)[p] = 0;
            continue;
        }
        uint32_t q = tci_trace_process(t, s->processes[p].pid);
        if (q == TCI_NONE || tci_trace_name_process(t, q, s->processes[p].name, strlen(s->processes[p].name),
                                                    s->processes[p].name_rank) != TC_OK)
            return table_fail(j);
        t->processes[q].ppid = s->processes[p].ppid;
        (*pmap)[p] = q;
    }
    if (s->n_threads && !(j->thread_map[SYS] = tci_calloc(s->n_threads, sizeof(uint32_t))))
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < s->n_threads; i++) {
        uint32_t idx = tci_trace_add_thread(t, s->threads[i].tid);
        if (idx == TCI_NONE)
            return table_fail(j);
        t->threads[idx].process = (*pmap)[s->threads[i].process];
        t->threads[idx].process_given = s->threads[i].process_given;
        int rc = name_thread(j, idx, s->threads[i].name, s->threads[i].name_rank);
        if (rc != TC_OK)
            return rc;
        j->thread_map[SYS][i] = idx;
    }
    return TC_OK;
}

/* The method trace's threads onto the system trace's (the file comment's rule). */
static int map_method_threads(join *j, const sysindex *ix, uint32_t app)
{
    const tci_trace *s = j->t[SYS], *m = j->t[METH];
    tci_trace *t = j->r->trace;
    if (m->n_threads && !(j->thread_map[METH] = tci_calloc(m->n_threads, sizeof(uint32_t))))
        return TC_ERR_NOMEM;
    bool by_tid = false;
    for (uint32_t k = 0; app != TCI_NONE && k < m->n_threads && !by_tid; k++)
        by_tid = m->threads[k].records && match_tid(ix, s, app, m->threads[k].tid) != TCI_NONE;
    for (uint32_t k = 0; k < m->n_threads; k++) {
        const tci_thread *mt = &m->threads[k];
        uint32_t hit = app == TCI_NONE ? TCI_NONE
                       : by_tid        ? match_tid(ix, s, app, mt->tid)
                                       : match_name(ix, s, app, mt->name);
        uint32_t idx;
        if (hit != TCI_NONE) {
            idx = j->thread_map[SYS][hit];
            /* the system trace's name, unless it is the kernel's 15-byte cut of the method trace's */
            const char *sn = s->threads[hit].name;
            if (strlen(sn) == 15 && strlen(mt->name) > 15 && !memcmp(sn, mt->name, 15)) {
                t->threads[idx].name_rank = 0;
                int rc = name_thread(j, idx, mt->name, 255);
                if (rc != TC_OK)
                    return rc;
            }
        } else {
            if ((idx = tci_trace_add_thread(t, mt->tid)) == TCI_NONE)
                return table_fail(j);
            t->threads[idx].process = 0;
            int rc = name_thread(j, idx, mt->name, mt->name_rank);
            if (rc != TC_OK)
                return rc;
            if (mt->records && app != TCI_NONE) /* else the one warning said it of all of them */
                tci_warn(j->r->diag, TCI_FIG_MERGE_UNMATCHED_THREAD, "merge", UINT64_MAX,
                         "thread %llu (%s) of %s has no thread in the system trace's process %lld; it keeps a "
                         "track of its own", (unsigned long long)mt->tid, mt->name, m->input_name,
                         (long long)t->processes[0].pid);
        }
        j->thread_map[METH][k] = idx;
    }
    return TC_OK;
}

static int join_tables(join *j)
{
    const tci_trace *s = j->t[SYS], *m = j->t[METH];
    tci_trace *t = j->r->trace;
    if (!m->has_wall)
        return tci_error(j->r->diag, TC_ERR_UNSUPPORTED, "merge", UINT64_MAX,
                         "%s has no wall clock (clock=%s): nothing places it on the system trace's timeline",
                         m->input_name, tci_clock_name(m->clock));
    sysindex ix;
    memset(&ix, 0, sizeof ix);
    uint32_t *pmap = NULL, app = TCI_NONE;
    int rc = index_system(&ix, s);
    if (rc == TC_OK)
        app = find_app(&ix, s, m, &rc);
    /* Two traces that share no process are most likely not of one run: nothing ties their
     * clocks either (a marker in the system trace is another app's run), so only an offset
     * the user gives puts them on one timeline. */
    if (rc == TC_OK && app == TCI_NONE && !j->offset_given)
        rc = tci_error(j->r->diag, TC_ERR_UNSUPPORTED, "merge", UINT64_MAX,
                       "%s and %s share no process (the method trace's pid %lld and its threads' tids are in no "
                       "process of the system trace): not a recording of one run? To put them on one timeline "
                       "anyway, give the method trace's offset with --offset TIME",
                       m->input_name, s->input_name, (long long)m->pid);
    if (rc == TC_OK)
        rc = choose_offset(j);
    if (rc == TC_OK)
        rc = index_app(&ix, s, app);
    if (rc != TC_OK) {
        index_free(&ix);
        return rc;
    }
    if (app == TCI_NONE) /* --offset given: the user places it */
        tci_warn(j->r->diag, TCI_FIG_MERGE_UNMATCHED_THREAD, "merge", UINT64_MAX,
                 "no process of the system trace is %s's (pid %lld, or its threads' tids); its threads keep "
                 "their own tracks", m->input_name, (long long)m->pid);
    if ((rc = copy_system(j, app, &pmap)) == TC_OK && (rc = map_method_threads(j, &ix, app)) == TC_OK &&
        (rc = copy_methods(j, SYS, 0)) == TC_OK)
        rc = copy_methods(j, METH, (uint64_t)1 << 40);
    free(pmap);
    index_free(&ix);
    if (rc != TC_OK)
        return rc;
    int64_t mstart, mend;
    if (__builtin_add_overflow(m->start_ns, j->offset, &mstart) || __builtin_add_overflow(m->end_ns, j->offset, &mend))
        return tci_error(j->r->diag, TC_ERR_FORMAT, "merge", UINT64_MAX,
                         "the offset %lld ns moves %s beyond the 64-bit ns timeline", (long long)j->offset,
                         m->input_name);
    if (mend < s->start_ns || mstart > s->end_ns) { /* nothing of one can nest in the other */
        char a0[40], a1[40], b0[40], b1[40];
        tci_duration_text(mstart, a0, sizeof a0);
        tci_duration_text(mend, a1, sizeof a1);
        tci_duration_text(s->start_ns, b0, sizeof b0);
        tci_duration_text(s->end_ns, b1, sizeof b1);
        tci_warn(j->r->diag, TCI_FIG_MERGE_DISJOINT, "merge", UINT64_MAX,
                 "the method trace %s (%s to %s on the system trace's clock, by %s) and the system trace %s "
                 "(%s to %s) do not overlap", m->input_name, a0, a1, j->rule, s->input_name, b0, b1);
    }
    t->start_ns = s->start_ns < mstart ? s->start_ns : mstart;
    t->start_given = true;
    t->elapsed_ns = -1;
    t->time_unit_ns = 1;
    t->wrap_bits = 0;
    t->has_wall = true;
    t->has_cpu = m->has_cpu || s->has_cpu;
    t->clock = t->has_cpu ? TCI_CLOCK_DUAL : TCI_CLOCK_WALL;
    t->vm = m->vm;
    t->format_name = "merge";
    char a[TCI_FORMAT_TEXT_MAX];
    snprintf(t->detail, sizeof t->detail, "of %.30s onto %.12s, %.40s", tci_trace_format(m, a, sizeof a),
             tci_trace_format_name(s), j->rule);
    char off[32];
    int n = snprintf(off, sizeof off, "%lld", (long long)j->offset);
    if (tci_trace_add_meta(t, "merge-clock-rule", 16, j->rule, strlen(j->rule)) != TC_OK ||
        tci_trace_add_meta(t, "merge-offset-ns", 15, off, (size_t)n) != TC_OK)
        return table_fail(j);
    uint64_t active = 0;
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < j->t[k]->n_threads; i++)
            active += j->t[k]->threads[i].records != 0;
    j->run_base[SYS] = 0;
    j->run_base[METH] = s->n_threads;
    if ((uint64_t)s->n_threads + m->n_threads > UINT32_MAX - 1)
        return tci_error(j->r->diag, TC_ERR_LIMIT, "merge", UINT64_MAX, "too many threads");
    if ((rc = tci_merge_open_runs(&j->merge, s->n_threads + m->n_threads, active, j->r->diag)) != TC_OK)
        return rc;
    tci_merge_exits_first(j->merge);
    return TC_OK;
}

/* ---- the two inputs, normalized and spilled ---------------------------------- */

static int spill(join *j, int k, const tci_event *ev)
{
    tci_event e = *ev;
    if (k == METH && __builtin_add_overflow(e.ts_ns, j->offset, &e.ts_ns))
        return tci_error(j->r->diag, TC_ERR_FORMAT, "merge", UINT64_MAX,
                         "the offset %lld ns moves a timestamp of %s beyond the 64-bit ns timeline",
                         (long long)j->offset, j->t[METH]->input_name);
    e.thread += j->run_base[k];
    return tci_merge_add(j->merge, &e);
}

static int spill_system(void *user, const tci_event *ev) { return spill(user, SYS, ev); }
static int spill_method(void *user, const tci_event *ev) { return spill(user, METH, ev); }

static int ready_method(void *user)
{
    join *j = user;
    j->t[METH] = tci_conv_trace_of(j->in[METH]);
    return join_tables(j);
}

/* An input's failure is the merge's, in its own words. */
static int input_failed(join *j, int k, int rc)
{
    const tci_diag *d = tci_conv_diag(j->in[k]);
    if (d->error[0] && !j->r->diag->error[0])
        snprintf(j->r->diag->error, sizeof j->r->diag->error, "%s", d->error);
    else if (!j->r->diag->error[0])
        tci_error(j->r->diag, rc, "merge", UINT64_MAX, "the %s could not be read", role[k]);
    return rc;
}

static int ready_system(void *user)
{
    join *j = user;
    j->t[SYS] = tci_conv_trace_of(j->in[SYS]);
    int rc = tci_conv_normalize(j->in[METH], ready_method, spill_method, j);
    return rc == TC_OK || j->r->diag->error[0] ? rc : input_failed(j, METH, rc);
}

/* Each input's warnings and repairs are the merge's (its counts are the merged trace's own). */
static void take_diagnostics(join *j)
{
    tci_diag *d = j->r->diag;
    for (int k = 0; k < 2; k++) {
        const tci_diag *from = tci_conv_diag(j->in[k]);
        for (int f = 0; f < TCI_FIG__COUNT; f++)
            if (tci_figure_kind(f) != TC_FIG_COUNT)
                d->fig[f] += from->fig[f];
        for (size_t i = 0; i < from->n_kept && d->n_kept < TCI_MAX_KEPT_WARNINGS; i++)
            if ((d->kept[d->n_kept] = strdup(from->kept[i])))
                d->n_kept++;
    }
}

static int join_open(tci_rctx *r)
{
    join *j = r->priv;
    j->r = r;
    int rc = tci_conv_normalize(j->in[SYS], ready_system, spill_system, j);
    if (rc != TC_OK)
        return r->diag->error[0] ? rc : input_failed(j, SYS, rc);
    take_diagnostics(j);
    r->trace->process_listing = j->t[SYS]->process_listing;
    r->trace->sys_text = j->t[SYS]->sys_text; /* the kernel events' text: the system trace's, still open */
    r->trace->sys_text_len = j->t[SYS]->sys_text_len;
    r->trace->sys_text_mapped = j->t[SYS]->sys_text_mapped;
    if (!(j->th = tci_calloc(r->trace->n_threads ? r->trace->n_threads : 1, sizeof *j->th)))
        return TC_ERR_NOMEM;
    j->n_th = r->trace->n_threads;
    reset_threads(j);
    return tci_merge_start(j->merge);
}

/* ---- read: the rule of nesting --------------------------------------------------- */

static void reset_threads(join *j)
{
    for (uint32_t i = 0; i < j->n_th; i++) {
        j->th[i].depth = 0;
        j->th[i].clamp[SYS] = j->th[i].clamp[METH] = TCI_NONE;
    }
}

static int push(jthread *th, jframe f)
{
    if (th->depth >= th->cap && tci_grow((void **)&th->stack, &th->cap, th->depth, sizeof *th->stack) != 0)
        return TC_ERR_NOMEM;
    th->stack[th->depth++] = f;
    return TC_OK;
}

/* The raw record of a joined event. */
static tci_raw raw_of(const join *j, const tci_event *ev, uint32_t thread, uint32_t method, uint8_t action)
{
    return (tci_raw){.wall = ev->ts_ns - j->r->trace->start_ns, .cpu = ev->cpu_ns, .offset = UINT64_MAX,
                     .value = ev->value, .id = ev->id, .thread = thread, .method = method, .action = action};
}

/* An exit of a frame that was ended early (or of one of its children): dropped; the exit
 * of the frame itself ends the clamp, and counts it when the end moved. */
static bool clamped_away(join *j, jthread *th, int src, const tci_event *ev)
{
    uint32_t c = th->clamp[src];
    if (c == TCI_NONE || ev->depth < c)
        return false;
    if (ev->kind == TCI_EV_ENTER && j->r->pass == 1) { /* a slice begun inside the clamped frame: left out */
        j->left_out++;
        tci_count(j->r->diag, TCI_FIG_MERGE_LEFT_OUT, 1);
    }
    if (ev->kind == TCI_EV_EXIT && ev->depth == c) {
        th->clamp[src] = TCI_NONE;
        int64_t cut = ev->ts_ns - th->clamp_ts[src];
        if (cut > 0 && j->r->pass == 1) {
            if (cut > j->max_cut)
                j->max_cut = cut;
            tci_count(j->r->diag, TCI_FIG_MERGE_CLAMPED, 1);
        }
    }
    return true;
}

/* One step of the pending event: *out is filled (1), or nothing is (0); *done once the
 * event is fully given. */
static int step(join *j, tci_raw *out, bool *done)
{
    const tci_event *ev = &j->pending;
    int src = ev->thread >= j->run_base[METH] ? METH : SYS;
    uint32_t local = ev->thread - j->run_base[src];
    uint32_t thread = j->thread_map[src][local];
    const tci_trace *in = j->t[src];
    uint32_t method = ev->method < in->n_methods ? j->method_map[src][ev->method] : TCI_NONE;
    jthread *th = &j->th[thread];
    *done = true;
    switch (ev->kind) {
    case TCI_EV_ENTER:
        if (clamped_away(j, th, src, ev))
            return 0;
        if (push(th, (jframe){ev->depth, method, (uint8_t)src}) != TC_OK)
            return TC_ERR_NOMEM;
        *out = raw_of(j, ev, thread, method, TCI_ACT_ENTER);
        return 1;
    case TCI_EV_EXIT: {
        if (clamped_away(j, th, src, ev))
            return 0;
        uint32_t i = th->depth;
        while (i > 0 && th->stack[i - 1].src != src)
            i--;
        if (i == 0 || th->stack[i - 1].depth != ev->depth)
            return 0; /* not open here (cannot happen with a well-nested input): nothing to end */
        jframe top = th->stack[th->depth - 1];
        if (top.src != src) { /* a frame of the other input began inside this one: it ends now */
            int other = top.src;
            th->clamp[other] = top.depth;
            th->clamp_ts[other] = ev->ts_ns;
            th->depth--;
            *done = false;
            *out = raw_of(j, ev, thread, top.method, TCI_ACT_EXIT);
            out->cpu = TCI_NO_TIME;
            return 1;
        }
        th->depth--;
        *out = raw_of(j, ev, thread, method, (ev->flags & TCI_EVF_UNWIND) ? TCI_ACT_UNWIND : TCI_ACT_EXIT);
        return 1;
    }
    case TCI_EV_INSTANT:
    case TCI_EV_COUNTER:
    case TCI_EV_ASYNC_BEGIN:
    case TCI_EV_ASYNC_END: {
        static const uint8_t act[] = {[TCI_EV_INSTANT] = TCI_ACT_INSTANT, [TCI_EV_COUNTER] = TCI_ACT_COUNTER,
                                      [TCI_EV_ASYNC_BEGIN] = TCI_ACT_ASYNC_BEGIN, [TCI_EV_ASYNC_END] = TCI_ACT_ASYNC_END};
        *out = raw_of(j, ev, thread, method, act[ev->kind]);
        return 1;
    }
    case TCI_EV_SCHED_SWITCH:
    case TCI_EV_SCHED_WAKING:
    case TCI_EV_SCHED_WAKEUP:
    case TCI_EV_SCHED_WAKEUP_NEW:
    case TCI_EV_TASK_EXIT:
    case TCI_EV_TASK_RENAME:
    case TCI_EV_CPU_FREQUENCY:
    case TCI_EV_CPU_IDLE: { /* scheduler data: the second thread is mapped like the first */
        uint64_t id = ev->id;
        if (tci_sys_has_other(ev->kind)) {
            uint32_t other = tci_sys_other(id);
            if (other >= in->n_threads)
                return 0;
            id = tci_sys_pack_id(tci_sys_cpu(id), j->thread_map[src][other], tci_sys_prev_state(id));
        }
        *out = raw_of(j, ev, thread, TCI_NONE, (uint8_t)(TCI_ACT_SYS + (ev->kind - TCI_EV_SYS_FIRST)));
        out->id = id;
        return 1;
    }
    case TCI_EV_FTRACE: /* its text stays the system trace's (join_open gives the merge its sys_text) */
        *out = raw_of(j, ev, thread, method, (uint8_t)(TCI_ACT_SYS + (ev->kind - TCI_EV_SYS_FIRST)));
        return 1;
    case TCI_EV_SAMPLE:
        if (ev->id >= in->n_stacks)
            return 0;
        *out = raw_of(j, ev, thread, method, TCI_ACT_SAMPLE);
        out->id = j->stack_map[src][ev->id];
        return 1;
    default:
        return 0;
    }
}

static int join_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *n)
{
    join *j = r->priv;
    size_t k = 0;
    while (k < max) {
        if (!j->have_pending) {
            int rc = tci_merge_next(j->merge, &j->pending);
            if (rc < 0)
                return rc;
            if (rc == 0)
                break;
            j->have_pending = true;
        }
        bool done;
        int got = step(j, &ev[k], &done);
        if (got < 0)
            return got;
        k += (size_t)got;
        if (done)
            j->have_pending = false;
    }
    if (k == 0 && r->pass == 1 && j->clamped == 0 && r->diag->fig[TCI_FIG_MERGE_CLAMPED]) {
        j->clamped = r->diag->fig[TCI_FIG_MERGE_CLAMPED];
        r->diag->fig[TCI_FIG_MERGE_CLAMPED]--; /* tci_warn counts the one it says */
        tci_warn(r->diag, TCI_FIG_MERGE_CLAMPED, "merge", UINT64_MAX,
                 "%llu slices crossed a slice of the other trace on their thread and were ended with it "
                 "(at most %lld ns earlier); %llu slices that began inside them after that were left out",
                 (unsigned long long)j->clamped, (long long)j->max_cut, (unsigned long long)j->left_out);
    }
    *n = k;
    return k ? TC_OK : TC_EOF;
}

static int join_rewind(tci_rctx *r)
{
    join *j = r->priv;
    reset_threads(j);
    j->have_pending = false;
    return tci_merge_start(j->merge);
}

static void join_close(tci_rctx *r)
{
    join *j = r->priv;
    if (!j)
        return;
    for (uint32_t i = 0; i < j->n_th; i++)
        free(j->th[i].stack);
    free(j->th);
    for (int k = 0; k < 2; k++) {
        free(j->thread_map[k]);
        free(j->method_map[k]);
        free(j->stack_map[k]);
        tc_conv_free(j->in[k]);
        j->in[k] = NULL;
    }
    tci_merge_free(j->merge);
    j->merge = NULL;
}

static int join_probe(const uint8_t *buf, size_t len, const char *filename)
{
    (void)buf, (void)len, (void)filename;
    return 0; /* never chosen by content: only tc_conv_open_merge opens it */
}

static const tci_reader join_reader = {
    .name = "merge",
    .description = "a method trace and the system trace of the same run, on one timeline",
    .extensions = "",
    .priv_size = sizeof(join),
    .probe = join_probe,
    .open = join_open,
    .read = join_read,
    .rewind = join_rewind,
    .close = join_close,
};

/* ---- the public call ------------------------------------------------------------- */

/* A signed duration: '-'? then the options' form ("1.5s", "250ms", "40us", "1000ns"). */
static bool parse_offset(const char *v, int64_t *out)
{
    bool neg = *v == '-';
    if (tci_parse_duration(v + neg, out) != 0)
        return false;
    if (neg)
        *out = -*out;
    return true;
}

static bool is_system(const tc_conv *c)
{
    const char *rd = tc_conv_reader_name(c);
    return rd && (!strcmp(rd, "systrace") || !strcmp(rd, "json"));
}

int tc_conv_open_merge(tc_conv *c, tc_conv *a, tc_conv *b, const char *offset)
{
    if (!c || !a || !b || a == b || a == c || b == c) {
        if (c && a != c)
            tc_conv_free(a);
        if (c && b != c && b != a)
            tc_conv_free(b);
        return TC_ERR_USAGE;
    }
    join *j = tci_calloc(1, sizeof *j);
    int64_t off = 0;
    bool bad_offset = offset && !parse_offset(offset, &off);
    bool open = tci_conv_is_open(a) && tci_conv_is_open(b);
    if (!j || bad_offset || !open) {
        free(j);
        tc_conv_free(a);
        tc_conv_free(b);
        tci_conv_call_begin(c);
        if (!j)
            return tci_conv_call_end(c, TC_ERR_NOMEM);
        tci_diag *d = tci_conv_error_slot(c);
        if (bad_offset)
            return tci_conv_call_end(c, tci_error(d, TC_ERR_USAGE, "options", UINT64_MAX,
                                                  "--offset '%s': expected a signed time with its unit: -1.5s, "
                                                  "250ms, 40us, 1000ns", offset));
        return tci_conv_call_end(c, tci_error(d, TC_ERR_STATE, "api", UINT64_MAX,
                                              "tc_conv_open_merge: both inputs must be open (tc_conv_open)"));
    }
    bool swap = !is_system(b) && is_system(a); /* the system trace: the one a system reader reads */
    j->in[SYS] = swap ? a : b;
    j->in[METH] = swap ? b : a;
    j->offset = off;
    j->offset_given = offset != NULL;
    const tci_trace *m = tci_conv_trace_of(j->in[METH]), *s = tci_conv_trace_of(j->in[SYS]);
    char name[512];
    snprintf(name, sizeof name, "%s+%s", m->input_path ? m->input_path : "?", s->input_path ? s->input_path : "?");
    return tci_conv_open_reader(c, name, &join_reader, j);
}
