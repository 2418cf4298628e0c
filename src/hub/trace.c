/* trace.c - the tables every reader fills: methods, threads, metadata.
 * Names are made once here (finalize) so that every writer shows the same. */
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"

#include <stdio.h>
#include <stdlib.h>

const char *tci_clock_name(enum tci_clock c)
{
    switch (c) {
    case TCI_CLOCK_WALL: return "wall";
    case TCI_CLOCK_THREAD_CPU: return "thread-cpu";
    case TCI_CLOCK_DUAL: return "dual";
    default: return "unknown";
    }
}

const char *tci_sys_kind_name(int kind)
{
    static const char *const names[TCI_EV_SYS_KINDS] = {
        "sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
        "cpu_frequency", "cpu_idle", "sched_process_exit", "task_rename", "ftrace"};
    return tci_event_is_system((uint8_t)kind) ? names[kind - TCI_EV_SYS_FIRST] : "?";
}

/* Note why a table operation is refused; returns TC_ERR_LIMIT. */
static int limit(tci_trace *t, const char *what, uint64_t got, uint64_t max, const char *option)
{
    snprintf(t->limit_msg, sizeof t->limit_msg, "%s (%llu) is above the limit of %llu (option --%s)", what,
             (unsigned long long)got, (unsigned long long)max, option);
    t->fail_status = TC_ERR_LIMIT;
    return TC_ERR_LIMIT;
}

/* The tables are frozen (pass 2): the writers sized their arrays from them.
 * A reader that meets in pass 2 what pass 1 did not see gets this error
 * rather than an entry that no writer has room for. */
static bool refused_frozen(tci_trace *t, const char *what)
{
    if (TCI_LIKELY(!t->frozen))
        return false;
    snprintf(t->limit_msg, sizeof t->limit_msg,
             "%s that the first pass did not see (the tables are frozen after the first pass)", what);
    t->fail_status = TC_ERR_FORMAT;
    return true;
}

static int table_status(const tci_trace *t)
{
    return t->limit_msg[0] ? t->fail_status : TC_ERR_NOMEM;
}

/* ---- text: by length, NUL bytes stored as U+FFFD ------------------------------ */

static const char REPLACEMENT[3] = {'\xEF', '\xBF', '\xBD'}; /* U+FFFD */

/* The input text s[0..len) as the tables store it: a C string without NUL bytes. */
static char *store_text(tci_trace *t, const char *s, size_t len)
{
    const char *nul = memchr(s, 0, len);
    if (TCI_LIKELY(!nul))
        return tci_arena_strndup(&t->arena, s, len);
    size_t nuls = 0;
    for (const char *p = nul; p; p = memchr(p + 1, 0, len - (size_t)(p + 1 - s)))
        nuls++;
    if (nuls > (SIZE_MAX - len - 1) / 2)
        return NULL;
    char *out = tci_arena_alloc(&t->arena, len + 2 * nuls + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i]) {
            *o++ = s[i];
        } else {
            memcpy(o, REPLACEMENT, 3);
            o += 3;
        }
    }
    *o = 0;
    return out;
}

/* Does the stored C string equal the input text s[0..len) once stored? */
static bool stored_equals(const char *stored, const char *s, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i]) {
            if (stored[j] != s[i])
                return false; /* also at stored's end: its NUL differs from s[i] */
            j++;
            continue;
        }
        for (int k = 0; k < 3; k++, j++)
            if (stored[j] != REPLACEMENT[k])
                return false;
    }
    return stored[j] == 0;
}

/* Bytes of the stored form of s[0..len). */
static size_t stored_len(const char *s, size_t len)
{
    size_t n = len;
    for (const char *p = memchr(s, 0, len); p; p = memchr(p + 1, 0, len - (size_t)(p + 1 - s)))
        n += 2;
    return n;
}

/* FNV-1a over the stored form, so text with a NUL and its stored form hash alike. */
static uint64_t text_hash(const char *s, size_t n, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        if (TCI_LIKELY(s[i])) {
            h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
            continue;
        }
        for (int k = 0; k < 3; k++)
            h = (h ^ (uint8_t)REPLACEMENT[k]) * 0x100000001b3ull;
    }
    return h;
}

static bool too_long(tci_trace *t, size_t len, const char *what)
{
    if (len <= t->max_string)
        return false;
    limit(t, what, len, t->max_string, "max-string");
    return true;
}

int tci_trace_fail(const tci_trace *t, tci_diag *d, const char *module, uint64_t offset)
{
    if (t->limit_msg[0])
        return tci_error(d, t->fail_status, module, offset, "%s", t->limit_msg);
    return tci_error(d, TC_ERR_NOMEM, module, offset, "out of memory");
}

int tci_trace_init(tci_trace *t)
{
    memset(t, 0, sizeof *t);
    t->max_string = TCI_DEFAULT_MAX_STRING;
    t->max_threads = TCI_DEFAULT_MAX_THREADS;
    t->max_methods = TCI_DEFAULT_MAX_METHODS;
    t->processes = tci_calloc(4, sizeof *t->processes); /* process 0: the input's own */
    if (!t->processes)
        return TC_ERR_NOMEM;
    t->cap_processes = 4;
    t->n_processes = 1;
    t->processes[0].pid = -1;
    t->processes[0].ppid = -1;
    t->pid = -1;
    t->elapsed_ns = -1;
    t->elapsed_offset = UINT64_MAX;
    t->time_unit_ns = 1;
    t->fail_status = TC_ERR_NOMEM;
    return TC_OK;
}

void tci_trace_free(tci_trace *t)
{
    tci_idmap_free(&t->meta_ids);
    tci_idmap_free(&t->process_ids);
    free(t->methods);
    free(t->threads);
    free(t->processes);
    free(t->stacks);
    tci_idmap_free(&t->stack_ids);
    free(t->meta);
    tci_idmap_free(&t->method_ids);
    tci_arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}

uint32_t tci_trace_method(tci_trace *t, uint64_t raw_id)
{
    uint32_t i = tci_idmap_get(&t->method_ids, raw_id);
    if (i != TCI_NONE)
        return i;
    if ((i = tci_trace_add_method(t, raw_id)) == TCI_NONE)
        return TCI_NONE;
    if (tci_idmap_put(&t->method_ids, raw_id, i) != 0) {
        t->n_methods--; /* the entry just added, which nothing names yet */
        return TCI_NONE;
    }
    return i;
}

uint32_t tci_trace_add_method(tci_trace *t, uint64_t raw_id)
{
    if (refused_frozen(t, "a method id"))
        return TCI_NONE;
    if (t->n_methods >= t->max_methods) {
        limit(t, "number of methods", (uint64_t)t->n_methods + 1, t->max_methods, "max-methods");
        return TCI_NONE;
    }
    if (tci_grow((void **)&t->methods, &t->cap_methods, t->n_methods, sizeof *t->methods) != 0)
        return TCI_NONE;
    uint32_t i = t->n_methods++;
    memset(&t->methods[i], 0, sizeof t->methods[i]);
    t->methods[i].raw_id = raw_id;
    t->methods[i].line = -1;
    return i;
}

int tci_trace_define_method(tci_trace *t, uint64_t raw_id, const char *cls, size_t cls_len,
                            const char *name, size_t name_len, const char *sig, size_t sig_len,
                            const char *file, size_t file_len, int32_t line)
{
    if (refused_frozen(t, "a method definition"))
        return TC_ERR_FORMAT;
    if (too_long(t, cls_len, "class name length") || too_long(t, name_len, "method name length") ||
        too_long(t, sig ? sig_len : 0, "signature length") || too_long(t, file ? file_len : 0, "source file name length"))
        return TC_ERR_LIMIT;
    uint32_t i = tci_trace_method(t, raw_id);
    if (i == TCI_NONE)
        return table_status(t);
    return tci_trace_define_method_at(t, i, cls, cls_len, name, name_len, sig, sig_len, file, file_len, line);
}

int tci_trace_define_method_at(tci_trace *t, uint32_t i, const char *cls, size_t cls_len, const char *name,
                               size_t name_len, const char *sig, size_t sig_len, const char *file, size_t file_len,
                               int32_t line)
{
    if (refused_frozen(t, "a method definition"))
        return TC_ERR_FORMAT;
    if (too_long(t, cls_len, "class name length") || too_long(t, name_len, "method name length") ||
        too_long(t, sig ? sig_len : 0, "signature length") || too_long(t, file ? file_len : 0, "source file name length"))
        return TC_ERR_LIMIT;
    tci_method *m = &t->methods[i];
    char *c = store_text(t, cls, cls_len);
    m->name = store_text(t, name, name_len);
    m->sig = store_text(t, sig ? sig : "", sig ? sig_len : 0);
    m->file = file ? store_text(t, file, file_len) : NULL;
    if (!c || !m->name || !m->sig || (file && !m->file))
        return TC_ERR_NOMEM;
    for (char *p = c; *p; p++) /* Dalvik writes a/b/C: show it dotted */
        if (*p == '/')
            *p = '.';
    m->cls = c;
    m->line = line;
    m->defined = true;
    return TC_OK;
}

uint32_t tci_trace_add_thread(tci_trace *t, uint64_t tid)
{
    if (refused_frozen(t, "a thread"))
        return TCI_NONE;
    if (t->n_threads >= t->max_threads) {
        limit(t, "number of threads", (uint64_t)t->n_threads + 1, t->max_threads, "max-threads");
        return TCI_NONE;
    }
    if (tci_grow((void **)&t->threads, &t->cap_threads, t->n_threads, sizeof *t->threads) != 0)
        return TCI_NONE;
    tci_thread *th = &t->threads[t->n_threads];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    return t->n_threads++;
}

/* Process 0 is looked up by its pid like the others once it has one: it is
 * the only entry whose pid changes (at finalize), so it is not in the map. */
uint32_t tci_trace_process(tci_trace *t, int64_t pid)
{
    if (t->processes[0].pid == pid)
        return 0;
    uint32_t i = tci_idmap_get(&t->process_ids, (uint64_t)pid);
    if (i != TCI_NONE)
        return i;
    if (refused_frozen(t, "a process"))
        return TCI_NONE;
    if (t->n_processes >= t->max_threads) { /* a process has at least one thread */
        limit(t, "number of processes", (uint64_t)t->n_processes + 1, t->max_threads, "max-threads");
        return TCI_NONE;
    }
    if (tci_grow((void **)&t->processes, &t->cap_processes, t->n_processes, sizeof *t->processes) != 0)
        return TCI_NONE;
    if (tci_idmap_put(&t->process_ids, (uint64_t)pid, t->n_processes) != 0)
        return TCI_NONE;
    tci_process *p = &t->processes[t->n_processes];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->ppid = -1;
    return t->n_processes++;
}

int tci_trace_name_process(tci_trace *t, uint32_t process, const char *name, size_t len, uint8_t rank)
{
    tci_process *p = &t->processes[process];
    if (refused_frozen(t, "a process name"))
        return TC_ERR_FORMAT;
    if (too_long(t, len, "process name length"))
        return TC_ERR_LIMIT;
    if (p->name && rank < p->name_rank)
        return TC_OK;
    if (p->name && stored_equals(p->name, name, len)) {
        p->name_rank = rank;
        return TC_OK; /* the same name again: do not grow the arena */
    }
    char *n = store_text(t, name, len);
    if (!n)
        return TC_ERR_NOMEM;
    p->name = n;
    p->name_rank = rank;
    return TC_OK;
}

/* Names share the method table; their ids are hashes of the text with the top
 * bit set (method ids from inputs are pointers or index << 2, far below). */
static uint64_t name_id(const char *s, size_t n, uint64_t seed)
{
    return text_hash(s, n, seed) | (uint64_t)1 << 63;
}

uint32_t tci_trace_name(tci_trace *t, const char *name, size_t len)
{
    return tci_trace_name_split(t, name, len, len);
}

uint32_t tci_trace_timeline_name(tci_trace *t, const char *name, size_t len)
{
    const char *sig = tci_memmem(name, len, ": (", 3);
    return tci_trace_name_split(t, name, len, sig ? (size_t)(sig - name) : len);
}

uint32_t tci_trace_name_split(tci_trace *t, const char *name, size_t len, size_t short_len)
{
    if (too_long(t, len, "name length"))
        return TCI_NONE;
    for (uint64_t seed = 0;; seed++) { /* a collision of two texts: try the next hash */
        uint64_t id = name_id(name, len, seed);
        uint32_t i = tci_idmap_get(&t->method_ids, id);
        if (i == TCI_NONE) {
            if (refused_frozen(t, "a name") || (i = tci_trace_method(t, id)) == TCI_NONE)
                return TCI_NONE;
            tci_method *m = &t->methods[i];
            m->name = store_text(t, name, len);
            if (!m->name)
                return TCI_NONE;
            m->sig = "";
            m->defined = m->plain_name = true;
            /* the short form's length in the stored text (a NUL before it grew by two bytes) */
            m->short_len = short_len < len ? (uint32_t)stored_len(name, short_len) : 0;
            return i;
        }
        const tci_method *m = &t->methods[i];
        if (m->plain_name && stored_equals(m->name, name, len))
            return i;
    }
}

uint32_t tci_trace_stack(tci_trace *t, uint32_t parent, uint32_t method)
{
    uint64_t key = (uint64_t)parent << 32 | method;
    uint32_t i = tci_idmap_get(&t->stack_ids, key);
    if (i != TCI_NONE)
        return i;
    if (refused_frozen(t, "a sampled stack"))
        return TCI_NONE;
    if (tci_grow((void **)&t->stacks, &t->cap_stacks, t->n_stacks, sizeof *t->stacks) != 0 ||
        tci_idmap_put(&t->stack_ids, key, t->n_stacks) != 0)
        return TCI_NONE;
    t->stacks[t->n_stacks] = (tci_stack){parent, method};
    return t->n_stacks++;
}

int tci_trace_name_thread(tci_trace *t, uint32_t thread, const char *name, size_t len, uint8_t rank)
{
    tci_thread *th = &t->threads[thread];
    if (refused_frozen(t, "a thread name"))
        return TC_ERR_FORMAT;
    if (too_long(t, len, "thread name length"))
        return TC_ERR_LIMIT;
    if (th->name && rank < th->name_rank)
        return TC_OK;
    if (th->name && stored_equals(th->name, name, len)) {
        th->name_rank = rank;
        return TC_OK; /* the same name again: do not grow the arena */
    }
    char *n = store_text(t, name, len);
    if (!n)
        return TC_ERR_NOMEM;
    th->name = n;
    th->name_rank = rank;
    return TC_OK;
}

/* The meta entry of key (by hash, then by text), or TCI_NONE with *slot the
 * hash under which a new entry goes. */
static uint32_t find_meta(const tci_trace *t, const char *key, size_t klen, uint64_t *slot)
{
    for (uint64_t seed = 0;; seed++) {
        uint64_t h = text_hash(key, klen, seed);
        uint32_t i = tci_idmap_get(&t->meta_ids, h);
        if (i == TCI_NONE) {
            *slot = h;
            return TCI_NONE;
        }
        if (stored_equals(t->meta[i].key, key, klen))
            return i;
    }
}

int tci_trace_add_meta(tci_trace *t, const char *key, size_t klen, const char *val, size_t vlen)
{
    if (refused_frozen(t, "a metadata value"))
        return TC_ERR_FORMAT;
    if (too_long(t, klen, "metadata key length") || too_long(t, vlen, "metadata value length"))
        return TC_ERR_LIMIT;
    uint64_t slot;
    uint32_t i = find_meta(t, key, klen, &slot);
    if (i != TCI_NONE) { /* a later value wins (summary after header) */
        if (stored_equals(t->meta[i].value, val, vlen))
            return TC_OK; /* the same line again: do not grow the arena */
        t->meta[i].value = store_text(t, val, vlen);
        return t->meta[i].value ? TC_OK : TC_ERR_NOMEM;
    }
    if (t->n_meta >= TCI_META_MAX + TCI_META_OWN) /* metadata is small in every real trace; do not let input grow it */
        return TC_OK;
    if (tci_grow((void **)&t->meta, &t->cap_meta, t->n_meta, sizeof *t->meta) != 0)
        return TC_ERR_NOMEM;
    tci_meta *m = &t->meta[t->n_meta];
    m->key = store_text(t, key, klen);
    m->value = store_text(t, val, vlen);
    if (!m->key || !m->value || tci_idmap_put(&t->meta_ids, slot, t->n_meta) != 0)
        return TC_ERR_NOMEM;
    t->n_meta++;
    return TC_OK;
}

bool tci_trace_meta_full(const tci_trace *t, const char *key, size_t klen)
{
    uint64_t slot;
    return t->n_meta >= TCI_META_MAX && find_meta(t, key, klen, &slot) == TCI_NONE;
}

const char *tci_trace_meta(const tci_trace *t, const char *key)
{
    uint64_t slot;
    uint32_t i = find_meta(t, key, strlen(key), &slot);
    return i == TCI_NONE ? NULL : t->meta[i].value;
}

void tci_trace_freeze(tci_trace *t)
{
    t->frozen = true;
}

static int name_method(tci_trace *t, tci_method *m)
{
    if (m->full_name)
        return TC_OK; /* named by deobfuscation (a text name, or alternatives "a | b") */
    if (m->plain_name) {
        m->full_name = m->name;
        m->short_name = m->short_len ? tci_arena_strndup(&t->arena, m->name, m->short_len) : m->name;
        return m->short_name ? TC_OK : TC_ERR_NOMEM;
    }
    if (!m->defined) {
        m->short_name = tci_arena_printf(&t->arena, "unknown.0x%llx", (unsigned long long)m->raw_id);
        m->full_name = m->short_name;
        m->name = m->short_name;
        m->sig = "";
        return m->short_name ? TC_OK : TC_ERR_NOMEM;
    }
    m->short_name = tci_arena_printf(&t->arena, "%s.%s", m->cls, m->name);
    if (m->sig[0])
        m->full_name = tci_arena_printf(&t->arena, "%s.%s: %s", m->cls, m->name, m->sig);
    else
        m->full_name = m->short_name;
    return m->short_name && m->full_name ? TC_OK : TC_ERR_NOMEM;
}

static const char *file_stem(tci_trace *t, const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return "stdin";
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return tci_arena_strndup(&t->arena, base, n);
}

/*
 * Process 0 is the input's own. A system trace (systrace, foreign JSON) puts
 * every thread in a process of its own pid and leaves process 0 empty: that
 * made-up process would be written as pid 0, which is the idle task to
 * Perfetto and systrace. So the empty process 0 is removed and the first
 * process with records (else the first one) takes its place: it carries the
 * trace-level facts. The others keep their order.
 */
static int main_process_first(tci_trace *t, bool *relocated)
{
    *relocated = false;
    if (t->n_processes < 2)
        return TC_OK;
    uint32_t main = TCI_NONE; /* one pass over the threads: linear in a hostile capture too */
    for (uint32_t i = 0; i < t->n_threads; i++) {
        uint32_t p = t->threads[i].process;
        if (p == 0)
            return TC_OK; /* the input's own process has threads: a method trace */
        if (t->threads[i].records && p < main)
            main = p;
    }
    if (main == TCI_NONE)
        main = 1;
    *relocated = true;
    uint32_t *to = tci_calloc(t->n_processes, sizeof *to); /* old index -> new */
    if (!to)
        return TC_ERR_NOMEM;
    to[main] = 0;
    for (uint32_t p = 1, next = 1; p < t->n_processes; p++)
        if (p != main)
            to[p] = next++;
    tci_process moved = t->processes[main];
    for (uint32_t p = main + 1; p < t->n_processes; p++) /* one slot down, upwards: read before overwritten */
        t->processes[to[p]] = t->processes[p];
    t->processes[0] = moved;
    t->n_processes--;
    for (uint32_t i = 0; i < t->n_threads; i++)
        t->threads[i].process = to[t->threads[i].process];
    free(to);
    tci_idmap_free(&t->process_ids); /* process 0 is found by its pid, not through the map */
    for (uint32_t p = 1; p < t->n_processes; p++)
        if (tci_idmap_put(&t->process_ids, (uint64_t)t->processes[p].pid, p) != 0)
            return TC_ERR_NOMEM;
    return TC_OK;
}

/* The pid of the input's own process when no pid= key gave one: on Android
 * the main thread's tid is the pid, whether or not that thread has records;
 * else the first thread's tid. Never 0 (the idle task): -1 when no thread has
 * another tid, and writers then leave the pid out or show 0 as their format
 * demands. */
static int64_t own_pid(const tci_trace *t)
{
    for (uint32_t i = 0; i < t->n_threads; i++)
        if (t->threads[i].process == 0 && t->threads[i].tid > 0 && t->threads[i].tid <= INT32_MAX &&
            t->threads[i].name && strcmp(t->threads[i].name, "main") == 0)
            return (int64_t)t->threads[i].tid;
    for (uint32_t i = 0; i < t->n_threads; i++)
        if (t->threads[i].process == 0 && t->threads[i].tid > 0 && t->threads[i].tid <= INT32_MAX)
            return (int64_t)t->threads[i].tid;
    return -1;
}

/* Each process's first thread with records, in one pass over the threads
 * (processes in their final order): writers ask per process, and a scan of
 * every thread per process is quadratic on a capture with 100k processes. */
void tci_trace_index_processes(tci_trace *t)
{
    for (uint32_t p = 0; p < t->n_processes; p++)
        t->processes[p].first_thread = TCI_NONE;
    for (uint32_t i = t->n_threads; i-- > 0;)
        if (t->threads[i].records)
            t->processes[t->threads[i].process].first_thread = i;
}

int tci_trace_finalize(tci_trace *t, tci_diag *d, const tci_options *o)
{
    (void)d;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (name_method(t, &t->methods[i]) != TC_OK)
            return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_stacks; i++) /* a sampled frame is a call too (pass 1 marked the entered) */
        if (t->stacks[i].method < t->n_methods)
            t->methods[t->stacks[i].method].called = true;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        tci_thread *th = &t->threads[i];
        if (!th->name || !th->name[0])
            th->name = tci_arena_printf(&t->arena, "Thread-%llu", (unsigned long long)th->tid);
        if (!th->name)
            return TC_ERR_NOMEM;
    }
    bool system = false; /* process 0 is a real process of a system trace, not the input's own */
    if (main_process_first(t, &system) != TC_OK)
        return TC_ERR_NOMEM;
    if (system)
        t->pid = t->processes[0].pid;
    else if (t->processes[0].pid > 0)
        t->pid = t->processes[0].pid; /* the reader knew it (Rhea's header) */
    else if (t->pid <= 0)
        t->pid = own_pid(t);
    if (t->processes[0].pid <= 0)
        t->processes[0].pid = t->pid;
    /* the input's own process: --process-name, else a name the input gives,
     * else the input file's stem; a system trace's first process keeps its own */
    t->process_named = system ? t->processes[0].name != NULL : o->process_name || t->processes[0].name;
    if (system)
        t->process_name = t->processes[0].name ? t->processes[0].name
                          : tci_arena_printf(&t->arena, "process %lld", (long long)t->processes[0].pid);
    else
        t->process_name = o->process_name ? o->process_name
                          : t->processes[0].name ? t->processes[0].name : file_stem(t, t->input_path);
    if (!t->process_name)
        return TC_ERR_NOMEM;
    /* others are named by their input or by pid */
    t->processes[0].name = t->process_name;
    for (uint32_t i = 1; i < t->n_processes; i++)
        if (!t->processes[i].name &&
            !(t->processes[i].name = tci_arena_printf(&t->arena, "process %lld", (long long)t->processes[i].pid)))
            return TC_ERR_NOMEM;
    tci_trace_index_processes(t);
    return TC_OK;
}

const char *tci_trace_format_name(const tci_trace *t)
{
    return t->format_name ? t->format_name : t->reader ? t->reader : "?";
}

const char *tci_trace_format(const tci_trace *t, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s", tci_trace_format_name(t), t->detail);
    return buf;
}
