/*
 * select.c - the selection: which part of the trace the writers are given
 * (options thread, since, until, focus, ignore, ignore-idle).
 *
 * One stage between normalize and the writers, so every writer, diff, batch and
 * serve get the same selection from the same options. Normalize's stream is
 * well nested per thread (every frame entered is exited, each thread's events
 * in its own time order); the stage keeps it so, in three steps per thread:
 *
 *   window  [since, until): events outside are dropped. A frame open across a
 *           boundary is clipped, not dropped: entered again at `since` and
 *           exited at `until` (synthetic), with the thread CPU time of the
 *           thread's last event before that boundary. Both windows that meet
 *           at a boundary use the same time and CPU time there, so the folded
 *           weights of [a,b) and [b,c) add up to those of [a,c) exactly.
 *   ignore  a frame whose method matches is left out with everything under it;
 *           the call tree (the aggregating writers: folded, flame graphs,
 *           pprof, report, dot, diff) also loses its time: the thread's later
 *           times are moved back by what was left out, so its callers'
 *           totals shrink as in pprof's -ignore. Timelines keep their times
 *           (a gap where the frame was).
 *   focus   only the frames at or under the outermost frame of a matching
 *           method, depths counted from it (Studio's "focus on method").
 *
 * Methods are named by patterns as people type them (tc_select.h: `onCreate`,
 * `Object.wait`, a glob on pkg.Class.method, a signature or not), read here for
 * every option that names methods (focus, ignore; the writers' callers; serve's
 * query fields and diff take the same options). A pattern that matches no method
 * is a usage error naming the closest method names (tci_nearest, which --thread's
 * error shares).
 *
 * Threads not kept are dropped before all that, and their record counts are
 * set to 0 when the stage opens, so that every writer leaves them out as it
 * leaves out a thread without records. Sampled stacks follow the same rules:
 * a sample through an ignored method is dropped, one through a focused method
 * keeps the part of its stack from that method (stacks interned here, before
 * the tables freeze).
 *
 * Memory: per thread the window's open frames (bounded by max-depth, as in
 * normalize) and a few numbers; per method a mark; per sampled stack a map.
 * Nothing per event.
 */
#include "tc_base.h"
#include "tc_conv.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_select.h"
#include "tc_trace.h"
#include "nearmiss.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>

/* The idle waits of --ignore-idle: where Android and Java threads wait for work,
 * for a lock or for time to pass. Wall time in them is waiting, not work (47.6%
 * of one real trace was PriorityBlockingQueue.take). doc/cli.md, "Selection" lists them. */
static const char *const idle_waits[] = {
    "android.os.MessageQueue.nativePollOnce",         /* a Looper with no message due */
    "java.lang.Object.wait",                          /* wait(), join() */
    "java.lang.Thread.sleep",
    "android.os.SystemClock.sleep",
    "java.lang.VMThread.sleep",                       /* Dalvik's sleep */
    "sun.misc.Unsafe.park",                           /* every j.u.c lock and queue ends here */
    "jdk.internal.misc.Unsafe.park",
    "java.util.concurrent.locks.LockSupport.park*",
    "java.util.concurrent.*BlockingQueue.take",       /* thread pools waiting for a task */
    "java.util.concurrent.*BlockingDeque.take*",
    "java.util.concurrent.SynchronousQueue.take",
    "java.util.concurrent.DelayQueue.take",
    "java.lang.Thread.parkFor$",                      /* LockSupport.park on Android 5-7 */
    /* Not dalvik.system.VMRuntime.runHeapTasks (28-51% of three real traces' wall time): the
     * HeapTaskDaemon waits there, but also runs the concurrent GC there, which is work. */
    NULL,
};

enum { MARK_FOCUS = 1, MARK_IGNORE = 2 };
enum { BEFORE = 0, INSIDE = 1, AFTER = 2 }; /* a thread's place relative to the window */

typedef struct sthread {
    bool keep;
    uint8_t phase;
    uint32_t *open;          /* window: the methods of the open frames, outermost first */
    uint32_t depth, cap;
    int64_t last_cpu;        /* window: CPU time of the thread's last event before the next boundary */
    uint32_t ignored;        /* depth + 1 of the ignored frame the thread is in (0: none) */
    int64_t ignored_ts, ignored_cpu;
    int64_t hidden_ts, hidden_cpu; /* time left out by ignored frames so far (the call tree's) */
    uint32_t focus;          /* depth + 1 of the focused frame the thread is in (0: none) */
} sthread;

struct tci_select {
    const tci_trace *t;
    tci_diag *d;             /* the notes threads-left-out and events-left-out: an output is not the whole trace */
    tci_select_out out;
    sthread *th;
    uint32_t n_th;
    uint8_t *mark;           /* per method: MARK_* */
    uint32_t *focus_stack;   /* per sampled stack: its part from the outermost focused frame (TCI_NONE: none) */
    uint8_t *ignored_stack;  /* per sampled stack: 1 when it passes through an ignored method */
    uint32_t n_stacks;       /* the stacks the maps cover (those of the input) */
    bool window, has_focus, has_ignore;
    bool patterns_may_miss;  /* diff: a pattern may match in the other input only (diff.c checks both) */
    int64_t since, until;    /* absolute ns */
};

bool tci_select_wanted(const tci_options *o)
{
    return o->thread || o->since_given || o->until_given || o->focus || o->ignore || o->ignore_idle;
}

/* ---- the values of the repeatable options ('\n'-joined) ---- */

typedef struct spec_iter {
    const char *next;
    char buf[4096];
} spec_iter;

/* The next value of a '\n'-joined list into it->buf, or NULL at the end (longer values are cut). */
static const char *next_spec(spec_iter *it)
{
    if (!it->next || !*it->next)
        return NULL;
    const char *end = strchr(it->next, '\n');
    size_t n = end ? (size_t)(end - it->next) : strlen(it->next);
    if (n >= sizeof it->buf)
        n = sizeof it->buf - 1;
    memcpy(it->buf, it->next, n);
    it->buf[n] = 0;
    it->next = end ? end + 1 : NULL;
    return it->buf;
}

/* ---- threads ---- */

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* main: the thread whose tid is its process's pid (Linux's main thread), or one named "main" (ART's). */
static bool is_main_thread(const tci_trace *t, const tci_thread *th)
{
    int64_t pid = th->process < t->n_processes ? t->processes[th->process].pid : -1;
    return (pid > 0 && th->tid == (uint64_t)pid) || !strcmp(th->name, "main");
}

static bool thread_matches(const tci_trace *t, const tci_thread *th, const char *spec)
{
    if (!strcmp(spec, "main") && is_main_thread(t, th))
        return true;
    if (all_digits(spec) && strtoull(spec, NULL, 10) == th->tid)
        return true;
    return fnmatch(spec, th->name, 0) == 0;
}

/* "main (1234), RenderThread (1240), ... and 15 more": what a spec could have named, the
 * names closest to it first (tci_nearest), then the others in the trace's order. */
static void list_threads(const tci_trace *t, const char *spec, char *out, size_t len)
{
    tci_nearest nn;
    tci_nearest_init(&nn, spec, strlen(spec), false);
    for (uint32_t i = 0; i < t->n_threads; i++)
        if (t->threads[i].records)
            tci_nearest_offer(&nn, t->threads[i].name);
    size_t n = 0, shown = 0, total = 0;
    out[0] = 0;
    /* rank 0..nn.n-1: the closest names in nn's order (the threads of one name together);
     * rank nn.n: the rest, in the trace's order */
    for (size_t rank = 0; rank <= nn.n; rank++)
        for (uint32_t i = 0; i < t->n_threads; i++) {
            if (!t->threads[i].records)
                continue;
            size_t of = 0;
            while (of < nn.n && strcmp(nn.name[of], t->threads[i].name))
                of++;
            if (of != rank)
                continue;
            total++;
            if (shown < 8 && n < len) {
                char name[48];
                snprintf(name, sizeof name, "%s", t->threads[i].name);
                n += (size_t)snprintf(out + n, len - n, "%s%s (%llu)", shown ? ", " : "", name,
                                      (unsigned long long)t->threads[i].tid);
                shown++;
            }
        }
    if (total > shown && n < len)
        snprintf(out + n, len - n, " and %zu more", total - shown);
}

static int select_threads(tci_select *s, tci_trace *t, const tci_options *o, tci_diag *d)
{
    for (uint32_t i = 0; i < t->n_threads; i++)
        s->th[i].keep = !o->thread;
    if (!o->thread)
        return TC_OK;
    spec_iter it = {.next = o->thread};
    for (const char *spec; (spec = next_spec(&it));) {
        bool any = false;
        for (uint32_t i = 0; i < t->n_threads; i++) {
            if (t->threads[i].records && thread_matches(t, &t->threads[i], spec)) {
                s->th[i].keep = true;
                any = true;
            }
        }
        if (!any) {
            char names[512];
            list_threads(t, spec, names, sizeof names);
            return tci_error(d, TC_ERR_EMPTY_SELECTION, "select", UINT64_MAX,
                             "no thread matches --thread '%s' (a glob on the name, a tid, or main); the "
                             "trace's threads: %s", spec, names);
        }
    }
    for (uint32_t i = 0; i < t->n_threads; i++)
        if (!s->th[i].keep && t->threads[i].records) {
            t->threads[i].records = 0; /* every writer leaves out a thread without records */
            tci_count(d, TCI_FIG_THREADS_LEFT_OUT, 1);
        }
    tci_trace_index_processes(t);
    return TC_OK;
}

/* ---- methods ---- */

/* A pattern as matched: the glob (a signature written without ": " gets it, as full names
 * write it), whether its name part has a '.', and whether it gives a signature. */
typedef struct pattern {
    char glob[1024];   /* longer patterns are cut (a method name is shorter) */
    bool dot, sig;
} pattern;

static void pattern_read(pattern *p, const char *text, size_t len)
{
    const char *paren = memchr(text, '(', len);
    size_t name_len = paren ? (size_t)(paren - text) : len;
    const char *colon = memchr(text, ':', name_len);
    if (colon)
        name_len = (size_t)(colon - text);
    while (name_len && text[name_len - 1] == ' ')
        name_len--;
    p->dot = memchr(text, '.', name_len) != NULL;
    p->sig = paren != NULL;
    if (len > sizeof p->glob - 3)
        len = sizeof p->glob - 3;
    if (paren && !colon && (size_t)(paren - text) < len) { /* "onCreate(I)V": "onCreate: (I)V" */
        memcpy(p->glob, text, name_len);
        memcpy(p->glob + name_len, ": ", 2);
        size_t rest = len - (size_t)(paren - text);
        memcpy(p->glob + name_len + 2, paren, rest);
        p->glob[name_len + 2 + rest] = 0;
    } else {
        memcpy(p->glob, text, len);
        p->glob[len] = 0;
    }
}

static bool glob_matches(const char *glob, const char *s)
{
    char c = glob[0]; /* a literal first character rules out most names without fnmatch's cost */
    if (!s || (c != '*' && c != '?' && c != '[' && c != '\\' && c != *s))
        return false;
    return fnmatch(glob, s, 0) == 0;
}

/* The rules of tc_select.h: the whole name, else (no dot) the method's own name, else a
 * part of the name that starts at a package boundary; each with or without the signature. */
static bool pattern_matches(const pattern *p, const tci_method *m)
{
    const char *s = m->short_name, *full = m->full_name;
    if ((!p->sig && glob_matches(p->glob, s)) || glob_matches(p->glob, full))
        return true;
    if (!s || p->glob[0] == '*') /* "*x" matches a name when it matches a part at its end: tried above */
        return false;
    size_t n = strlen(s);
    bool full_follows = full && !strncmp(full, s, n); /* "pkg.Class.method: (sig)ret" */
    for (size_t k = n; k-- > 0;) {
        if (s[k] != '.')
            continue;
        if ((!p->sig && glob_matches(p->glob, s + k + 1)) || (full_follows && glob_matches(p->glob, full + k + 1)))
            return true;
        if (!p->dot) /* the method's own name only: after the last '.' */
            return false;
    }
    return false;
}

bool tci_pattern_matches(const tci_method *m, const char *text)
{
    pattern p;
    pattern_read(&p, text, strlen(text));
    return pattern_matches(&p, m);
}

uint32_t tci_pattern_mark(const tci_trace *t, const char *patterns, uint8_t *mark, uint8_t bit,
                          const char **unmatched, size_t *unmatched_len)
{
    pattern p;
    uint32_t marked = 0;
    if (unmatched)
        *unmatched = NULL;
    for (const char *at = patterns; at && *at;) {
        const char *end = strchr(at, '\n');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        pattern_read(&p, at, len);
        /* whether this pattern matches anything is wanted until one that does not is found */
        bool any = false, asked = unmatched && !*unmatched;
        for (uint32_t i = 0; i < t->n_methods; i++) {
            if ((mark[i] & bit) && (any || !asked))
                continue; /* marked already, and nothing left to learn from it */
            if (!t->methods[i].called || !pattern_matches(&p, &t->methods[i]))
                continue; /* a kernel event's or counter's name is on no call path: not what a pattern means */
            any = true;
            if (!(mark[i] & bit)) {
                mark[i] |= bit;
                marked++;
            }
        }
        if (!any && asked) {
            *unmatched = at;
            *unmatched_len = len;
        }
        at = end ? end + 1 : NULL;
    }
    return marked;
}

/* Mark the methods that one of the NULL-terminated globs matches as a whole name: --ignore-idle's
 * list names the waits by their full names (not a part of another package's name), and its 13
 * globs against a table of 300k methods cost 0.1 s so, 0.4 s by the rules for what people type. */
static uint32_t mark_listed(tci_select *s, const char *const *list, uint8_t bit)
{
    uint32_t marked = 0;
    for (; *list; list++)
        for (uint32_t i = 0; i < s->t->n_methods; i++) {
            const tci_method *m = &s->t->methods[i];
            if (!(s->mark[i] & bit) && (glob_matches(*list, m->short_name) || glob_matches(*list, m->full_name))) {
                s->mark[i] |= bit;
                marked++;
            }
        }
    return marked;
}

/* ---- the names closest to what was typed ---- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

void tci_nearest_init(tci_nearest *nn, const char *typed, size_t len, bool dots)
{
    memset(nn, 0, sizeof *nn);
    nn->dots = dots;
    size_t n = 0;
    for (size_t i = 0; i < len && n < sizeof nn->typed - 1; i++) {
        char c = typed[i];
        if (c == ':' || c == '(') /* the signature: names are compared */
            break;
        if (c == '[') { /* a bracket expression: it stands for one character, which is not known */
            const char *close = memchr(typed + i + 1, ']', len - i - 1);
            i = close ? (size_t)(close - typed) : len;
            continue;
        }
        if (c == '*' || c == '?' || c == '\\')
            continue;
        nn->typed[n++] = lower(c);
        nn->typed_dots += c == '.';
    }
    while (n && nn->typed[n - 1] == ' ')
        n--;
    nn->typed[n] = 0;
    nn->typed_len = n;
}

/* Whether a (n bytes) holds the typed text, case ignored. */
static bool holds(const char *a, size_t n, const char *typed, size_t tn)
{
    for (size_t i = 0; i + tn <= n; i++) {
        size_t k = 0;
        while (k < tn && lower(a[i + k]) == typed[k])
            k++;
        if (k == tn)
            return true;
    }
    return false;
}

/* How close name is (lower: closer), UINT32_MAX: not close. A name that holds what was typed
 * comes first, the shorter the better; then one within a few edits of it. */
static uint32_t closeness(const tci_nearest *nn, const char *name)
{
    size_t n = strlen(name);
    const char *part = name; /* methods: the name's last parts, as many as were typed */
    if (nn->dots) {
        size_t dots = 0;
        for (size_t k = n; k-- > 0;)
            if (name[k] == '.' && dots++ == nn->typed_dots) {
                part = name + k + 1;
                break;
            }
    }
    size_t pn = n - (size_t)(part - name);
    if (holds(part, pn, nn->typed, nn->typed_len))
        return (uint32_t)(pn - nn->typed_len < 999 ? pn - nn->typed_len : 999);
    if (holds(name, n, nn->typed, nn->typed_len))
        return 1000 + (uint32_t)(n < 999 ? n : 999);
    uint32_t limit = nn->typed_len < 6 ? 1 : (uint32_t)(nn->typed_len / 3);
    uint32_t d = tci_edit_distance(part, pn, nn->typed, nn->typed_len, limit);
    return d <= limit ? 2000 + 1000 * d + (uint32_t)(pn < 999 ? pn : 999) : UINT32_MAX;
}

void tci_nearest_offer(tci_nearest *nn, const char *name)
{
    if (!nn->typed_len || !name)
        return;
    uint32_t score = closeness(nn, name);
    if (score == UINT32_MAX || (nn->n == TCI_NEAREST_MAX && score >= nn->score[nn->n - 1]))
        return;
    for (size_t k = 0; k < nn->n; k++)
        if (!strcmp(nn->name[k], name))
            return; /* one name once (overloads, threads of one name) */
    size_t at = nn->n < TCI_NEAREST_MAX ? nn->n++ : nn->n - 1;
    while (at > 0 && nn->score[at - 1] > score) { /* stable: among equals, the first offered first */
        nn->name[at] = nn->name[at - 1];
        nn->score[at] = nn->score[at - 1];
        at--;
    }
    nn->name[at] = name;
    nn->score[at] = score;
}

int tci_pattern_unmatched(tci_diag *d, const char *field, const char *pattern, size_t len,
                          const tci_trace *const *traces, size_t n_traces)
{
    tci_nearest nn;
    tci_nearest_init(&nn, pattern, len, true);
    uint64_t methods = 0; /* those of call paths: not the names of kernel events, counters, instants */
    for (size_t k = 0; k < n_traces; k++)
        for (uint32_t i = 0; i < traces[k]->n_methods; i++)
            if (traces[k]->methods[i].called) {
                methods++;
                tci_nearest_offer(&nn, traces[k]->methods[i].short_name);
            }
    char close[768];
    size_t n = 0;
    close[0] = 0;
    for (size_t k = 0; k < nn.n && n < sizeof close; k++)
        n += (size_t)snprintf(close + n, sizeof close - n, "%s%.200s", k ? ", " : "", nn.name[k]);
    int cut = len > 200 ? 200 : (int)len;
    const char *whose = n_traces > 1 ? " of either input" : ""; /* diff: it may name a method of one */
    if (!methods) /* kernel events or counters only: no name could have been typed right; the input's fact */
        return tci_error(d, TC_ERR_EMPTY_SELECTION, "select", UINT64_MAX,
                         "%s'%.*s' names a method, and the input%s no call, slice or sampled frame", field, cut,
                         pattern, n_traces > 1 ? "s have" : " has");
    if (!nn.n)
        return tci_error(d, TC_ERR_USAGE, "select", UINT64_MAX,
                         "no method%s matches %s'%.*s' (a method's name, Class.method or a glob on pkg.Class.method, "
                         "signature optional); none of the %llu methods is close (-o report lists them)",
                         whose, field, cut, pattern, (unsigned long long)methods);
    return tci_error(d, TC_ERR_USAGE, "select", UINT64_MAX,
                     "no method%s matches %s'%.*s' (a method's name, Class.method or a glob on pkg.Class.method, "
                     "signature optional); closest: %s", whose, field, cut, pattern, close);
}

/* Mark the methods of the '\n'-joined patterns of one option; one that matches nothing is a
 * usage error (a typo would leave every output empty, or remove nothing in silence). */
static int mark_option(tci_select *s, const char *patterns, const char *field, uint8_t bit, uint32_t *marked,
                       tci_diag *d)
{
    const char *miss;
    size_t miss_len;
    uint32_t n = tci_pattern_mark(s->t, patterns, s->mark, bit, &miss, &miss_len);
    if (marked)
        *marked = n;
    if (!miss || s->patterns_may_miss)
        return TC_OK;
    return tci_pattern_unmatched(d, field, miss, miss_len, &s->t, 1);
}

int tci_callers_marks(const tci_trace *t, const tci_options *o, tci_diag *d, uint8_t **marks)
{
    *marks = NULL;
    if (!o->callers)
        return TC_OK;
    if (o->reverse)
        return tci_error(d, TC_ERR_USAGE, "select", UINT64_MAX,
                         "--callers is already a bottom-up view (each call of the method, its callers beneath); "
                         "not with --reverse");
    if (!(*marks = tci_calloc(t->n_methods ? t->n_methods : 1, 1)))
        return TC_ERR_NOMEM;
    const char *miss;
    size_t miss_len;
    tci_pattern_mark(t, o->callers, *marks, 1, &miss, &miss_len);
    if (!miss || o->patterns_may_miss)
        return TC_OK;
    return tci_pattern_unmatched(d, "--callers ", miss, miss_len, &t, 1);
}

/* Sampled stacks: which pass through an ignored method, and the part of each from its
 * outermost focused frame (interned now: parents come before their children). */
static int map_stacks(tci_select *s, tci_trace *t, tci_diag *d)
{
    s->n_stacks = t->n_stacks;
    if (!s->n_stacks || (!s->has_focus && !s->has_ignore))
        return TC_OK;
    s->focus_stack = tci_calloc(s->n_stacks, sizeof *s->focus_stack);
    s->ignored_stack = tci_calloc(s->n_stacks, sizeof *s->ignored_stack);
    if (!s->focus_stack || !s->ignored_stack)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < s->n_stacks; i++) {
        uint32_t parent = t->stacks[i].parent, method = t->stacks[i].method;
        uint8_t mark = s->mark[method];
        bool from_parent = parent != TCI_NONE && parent < i;
        s->ignored_stack[i] = (from_parent && s->ignored_stack[parent]) || (mark & MARK_IGNORE);
        uint32_t above = from_parent ? s->focus_stack[parent] : TCI_NONE;
        s->focus_stack[i] = TCI_NONE;
        if (above != TCI_NONE || (mark & MARK_FOCUS)) {
            uint32_t part = tci_trace_stack(t, above, method);
            if (part == TCI_NONE)
                return tci_trace_fail(t, d, "select", UINT64_MAX);
            s->focus_stack[i] = part;
        }
    }
    return TC_OK;
}

/* ---- the window ---- */

static int window(tci_select *s, const tci_trace *t, const tci_options *o, tci_diag *d)
{
    s->window = o->since_given || o->until_given;
    if (!s->window)
        return TC_OK;
    int64_t length = t->end_ns - t->start_ns;
    if (o->since_given && o->since_ns >= length && o->since_ns > 0)
        return tci_error(d, TC_ERR_EMPTY_SELECTION, "select", UINT64_MAX,
                         "--since %.9g s is at or after the trace's end (it lasts %.9g s)", (double)o->since_ns / 1e9,
                         (double)length / 1e9);
    if (o->until_given && o->until_ns <= (o->since_given ? o->since_ns : 0))
        return tci_error(d, TC_ERR_USAGE, "select", UINT64_MAX, "--until must be after --since (an empty window)");
    s->since = t->start_ns + (o->since_given ? o->since_ns : 0);
    s->until = o->until_given ? t->start_ns + o->until_ns : INT64_MAX;
    if (!o->since_given || o->since_ns == 0) /* nothing before the start: every thread begins inside */
        for (uint32_t i = 0; i < s->n_th; i++)
            s->th[i].phase = INSIDE;
    return TC_OK;
}

int tci_select_open(tci_select **out, tci_trace *t, const tci_options *o, const tci_select_out *sinks, tci_diag *d)
{
    *out = NULL;
    tci_select *s = tci_calloc(1, sizeof *s);
    if (!s)
        return TC_ERR_NOMEM;
    s->t = t;
    s->d = d;
    s->out = *sinks;
    s->patterns_may_miss = o->patterns_may_miss;
    s->n_th = t->n_threads;
    s->th = tci_calloc(s->n_th ? s->n_th : 1, sizeof *s->th);
    s->mark = tci_calloc(t->n_methods ? t->n_methods : 1, sizeof *s->mark);
    int rc = TC_ERR_NOMEM;
    if (!s->th || !s->mark)
        goto fail;
    for (uint32_t i = 0; i < s->n_th; i++)
        s->th[i].last_cpu = TCI_NO_TIME;
    if ((rc = select_threads(s, t, o, d)) != TC_OK || (rc = window(s, t, o, d)) != TC_OK)
        goto fail;
    uint32_t ignored = 0;
    if ((o->focus && (rc = mark_option(s, o->focus, "--focus ", MARK_FOCUS, NULL, d)) != TC_OK) ||
        (o->ignore && (rc = mark_option(s, o->ignore, "--ignore ", MARK_IGNORE, &ignored, d)) != TC_OK))
        goto fail;
    /* a focus that matches nothing here (diff: in this input only) keeps nothing, not everything */
    s->has_focus = o->focus != NULL;
    if (o->ignore_idle) /* both lists are marked: the idle waits as well as the ones given */
        ignored += mark_listed(s, idle_waits, MARK_IGNORE);
    s->has_ignore = ignored != 0;
    if ((rc = map_stacks(s, t, d)) != TC_OK)
        goto fail;
    *out = s;
    return TC_OK;
fail:
    tci_select_free(s);
    return rc;
}

void tci_select_free(tci_select *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n_th; i++)
        free(s->th[i].open);
    free(s->th);
    free(s->mark);
    free(s->focus_stack);
    free(s->ignored_stack);
    free(s);
}

/* ---- the events ---- */

/* An event of normalize's no writer is given (the synthetic ones of the window are not counted). */
static inline int left_out(tci_select *s)
{
    s->d->fig[TCI_FIG_EVENTS_LEFT_OUT]++;
    return TC_OK;
}

static bool is_frame(const tci_event *ev) { return ev->kind == TCI_EV_ENTER || ev->kind == TCI_EV_EXIT; }

/* Out of the stage: the timeline as it is, the call tree without the ignored time. */
static int deliver(tci_select *s, sthread *th, const tci_event *ev)
{
    if (TCI_LIKELY(!th->hidden_ts && !th->hidden_cpu))
        return s->out.both(s->out.user, ev);
    int rc = s->out.timeline ? s->out.timeline(s->out.user, ev) : TC_OK;
    if (rc != TC_OK || !s->out.tree)
        return rc;
    tci_event moved = *ev;
    moved.ts_ns -= th->hidden_ts;
    if (moved.cpu_ns != TCI_NO_TIME)
        moved.cpu_ns -= th->hidden_cpu;
    return s->out.tree(s->out.user, &moved);
}

/* focus: frames under the outermost focused one, depths from it; samples cut to it. */
static int focus_step(tci_select *s, sthread *th, const tci_event *ev)
{
    if (!s->has_focus)
        return deliver(s, th, ev);
    if (ev->kind == TCI_EV_SAMPLE) {
        if (th->focus)
            return deliver(s, th, ev);
        uint32_t part = ev->id < s->n_stacks ? s->focus_stack[ev->id] : TCI_NONE;
        if (part == TCI_NONE)
            return left_out(s);
        tci_event cut = *ev;
        cut.id = part;
        return deliver(s, th, &cut);
    }
    if (!is_frame(ev))
        return deliver(s, th, ev);
    if (!th->focus) {
        if (ev->kind != TCI_EV_ENTER || !(s->mark[ev->method] & MARK_FOCUS))
            return left_out(s);
        th->focus = ev->depth + 1;
    }
    uint32_t base = th->focus - 1;
    if (ev->kind == TCI_EV_EXIT && ev->depth == base)
        th->focus = 0;
    if (!base) /* an outermost frame focused: depths stay as they are */
        return deliver(s, th, ev);
    tci_event rebased = *ev;
    rebased.depth = ev->depth - base;
    return deliver(s, th, &rebased);
}

/* ignore: a matching frame and what is under it are left out; the call tree loses their time. */
static int ignore_step(tci_select *s, sthread *th, const tci_event *ev)
{
    if (!s->has_ignore)
        return focus_step(s, th, ev);
    if (th->ignored) {
        if (ev->kind == TCI_EV_SAMPLE)
            return left_out(s);
        if (!is_frame(ev))
            return focus_step(s, th, ev); /* instants, counters and async slices are not calls */
        if (ev->kind == TCI_EV_EXIT && ev->depth == th->ignored - 1) {
            th->ignored = 0;
            th->hidden_ts += ev->ts_ns - th->ignored_ts;
            if (ev->cpu_ns != TCI_NO_TIME && th->ignored_cpu != TCI_NO_TIME)
                th->hidden_cpu += ev->cpu_ns - th->ignored_cpu;
        }
        return left_out(s);
    }
    if (ev->kind == TCI_EV_SAMPLE && ev->id < s->n_stacks && s->ignored_stack[ev->id])
        return left_out(s);
    if (ev->kind == TCI_EV_ENTER && (s->mark[ev->method] & MARK_IGNORE)) {
        th->ignored = ev->depth + 1;
        th->ignored_ts = ev->ts_ns;
        th->ignored_cpu = ev->cpu_ns;
        return left_out(s);
    }
    return focus_step(s, th, ev);
}

static int track_open(sthread *th, const tci_event *ev)
{
    if (ev->kind == TCI_EV_ENTER) {
        if (TCI_UNLIKELY(th->depth >= th->cap) &&
            tci_grow((void **)&th->open, &th->cap, th->depth, sizeof *th->open) != 0)
            return TC_ERR_NOMEM;
        th->open[th->depth++] = ev->method;
    } else if (ev->kind == TCI_EV_EXIT && th->depth) {
        th->depth--;
    }
    return TC_OK;
}

/* The frames open at `since` begin again there (outermost first); at `until` they end (innermost first). */
static int cross(tci_select *s, uint32_t thread, sthread *th, bool entering, int64_t ts)
{
    tci_event ev = {.ts_ns = ts, .cpu_ns = th->last_cpu, .thread = thread, .flags = TCI_EVF_SYNTHETIC};
    ev.kind = entering ? TCI_EV_ENTER : TCI_EV_EXIT;
    for (uint32_t k = 0; k < th->depth; k++) {
        uint32_t i = entering ? k : th->depth - 1 - k;
        ev.method = th->open[i];
        ev.depth = i;
        int rc = ignore_step(s, th, &ev);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static int window_step(tci_select *s, sthread *th, const tci_event *ev)
{
    /* inside with no `until` ahead: nothing left to clip, so no frame to follow (the common case) */
    if (!s->window || (th->phase == INSIDE && s->until == INT64_MAX))
        return ignore_step(s, th, ev);
    if (th->phase == AFTER)
        return left_out(s);
    int rc;
    if (th->phase == BEFORE && ev->ts_ns >= s->since) {
        th->phase = INSIDE;
        if ((rc = cross(s, ev->thread, th, true, s->since)) != TC_OK)
            return rc;
    }
    if (th->phase == INSIDE && ev->ts_ns >= s->until) {
        th->phase = AFTER;
        if ((rc = cross(s, ev->thread, th, false, s->until)) != TC_OK)
            return rc;
    }
    if (th->phase != INSIDE) {
        rc = is_frame(ev) ? track_open(th, ev) : TC_OK;
        left_out(s);
    } else if ((rc = is_frame(ev) ? track_open(th, ev) : TC_OK) == TC_OK)
        rc = ignore_step(s, th, ev);
    if (th->phase != AFTER && ev->cpu_ns != TCI_NO_TIME)
        th->last_cpu = ev->cpu_ns; /* the CPU time at the next boundary, whichever window it closes */
    return rc;
}

/* Whether the event goes on exactly as it is, with no step having anything to do: the thread
 * is inside the window for good, in no ignored frame and with no time hidden, the event enters
 * no ignored method, and it is under an outermost focused frame (or there is no focus) and does
 * not end it. Most events of a selection that keeps most of the trace: one test, no copy. */
static inline bool passes_through(const tci_select *s, const sthread *th, const tci_event *ev)
{
    if (s->window && !(th->phase == INSIDE && s->until == INT64_MAX))
        return false;
    if (th->ignored || th->hidden_ts || th->hidden_cpu)
        return false;
    if (s->has_ignore && (ev->kind == TCI_EV_SAMPLE || (ev->kind == TCI_EV_ENTER && (s->mark[ev->method] & MARK_IGNORE))))
        return false;
    return !s->has_focus || (th->focus == 1 && !(ev->kind == TCI_EV_EXIT && ev->depth == 0));
}

/* Every step, for the events that pass_through does not let by: out of line, so that the
 * function every event calls stays small (no registers saved, no copy of an event). */
static __attribute__((noinline)) int each_step(tci_select *s, sthread *th, const tci_event *ev)
{
    return th->keep ? window_step(s, th, ev) : left_out(s);
}

/* A system event (scheduler data) is the kernel's, not a frame: kept when it is in the
 * window [since, until) and, under --thread, when the thread it is about or its second
 * thread (switch's next task, the woken or renamed one) is selected; --focus and --ignore
 * name methods, so they leave it be. */
static __attribute__((noinline)) int system_event(tci_select *s, const tci_event *ev)
{
    if (s->window && (ev->ts_ns < s->since || ev->ts_ns >= s->until))
        return left_out(s);
    uint32_t other = tci_sys_other(ev->id);
    bool has_other = tci_sys_has_other(ev->kind);
    bool kept = s->th[ev->thread].keep || (has_other && other < s->n_th && s->th[other].keep);
    return kept ? s->out.both(s->out.user, ev) : left_out(s);
}

int tci_select_event(tci_select *s, const tci_event *ev)
{
    if (TCI_UNLIKELY(tci_event_is_system(ev->kind)) && ev->thread < s->n_th)
        return system_event(s, ev);
    if (TCI_UNLIKELY(ev->thread >= s->n_th))
        return left_out(s);
    sthread *th = &s->th[ev->thread];
    if (TCI_LIKELY(th->keep && passes_through(s, th, ev)))
        return s->out.both(s->out.user, ev);
    return each_step(s, th, ev);
}

/* The idle waits' globs, for the views' thread order and the summary's idle hint (analysis/threadrank.c). */
const char *const *tci_idle_wait_globs(void) { return idle_waits; }
