/*
 * tc_trace.h - the IR: the tables every reader fills and the events normalize gives the writers.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_TRACE_H
#define TC_TC_TRACE_H

#include "tc_diag.h"
#include "tc_options.h"
#include "tc_base.h"

/* ---- the trace: tables every reader fills ------------------------------ */

enum tci_clock { TCI_CLOCK_UNKNOWN = 0, TCI_CLOCK_WALL, TCI_CLOCK_THREAD_CPU, TCI_CLOCK_DUAL };
const char *tci_clock_name(enum tci_clock c);

typedef struct tci_method {
    uint64_t raw_id;
    const char *cls;   /* dotted class name; NULL for an unknown id */
    const char *name;  /* method name */
    const char *sig;   /* dex signature "(I)V" or "" */
    const char *file;  /* source file or NULL */
    int32_t line;      /* -1 unknown */
    const char *full_name;  /* "pkg.Class.method: (I)V" - timelines (set before finalize: deobfuscation's, kept) */
    const char *short_name; /* "pkg.Class.method" - flame graphs, pprof */
    bool defined;
    bool plain_name;        /* a name from tci_trace_name, not a method: shown as it is */
    bool called;            /* entered (a call, a slice) or in a sampled stack: a frame of some call
                             * path, which a method pattern can mean (set in pass 1 and finalize);
                             * not an instant's, counter's or kernel event's name only */
    uint32_t short_len;     /* plain names: length of the short form (0: all of it) */
} tci_method;

typedef struct tci_thread {
    uint64_t tid;       /* full id as the input lists it */
    const char *name;   /* never NULL after tci_trace_finalize */
    uint8_t name_rank;  /* a name of higher or equal rank replaces the current one */
    uint32_t process;   /* index into the trace's processes (0: the input's own process) */
    uint64_t records;   /* input records of this thread (pass 1) */
    bool process_given; /* the input said which process it is in (a system trace's TGID column, a
                         * process listing), rather than the reader making it a process of its own */
} tci_thread;

/* A process: method traces have one (index 0, the traced app); system
 * traces (atrace/systrace) have many. */
typedef struct tci_process {
    int64_t pid;        /* -1 unknown: process 0 gets the trace's pid at finalize */
    int64_t ppid;       /* its parent's pid (a process listing's PPID); -1 unknown */
    const char *name;   /* NULL: process 0 takes the trace's process name, others "process <pid>" */
    uint8_t name_rank;
    /* After finalize: its first thread with records (TCI_NONE: none), so that
     * writers skip empty processes without scanning the threads per process. */
    uint32_t first_thread;
} tci_process;

/* A node of a sampled stack: frames are interned, so a stack is one id. */
typedef struct tci_stack {
    uint32_t parent;   /* TCI_NONE for an outermost frame */
    uint32_t method;
} tci_stack;

typedef struct tci_meta {
    const char *key, *value;
} tci_meta;

typedef struct tci_trace {
    tci_arena arena;
    const char *input_path;   /* as given */
    const char *input_name;   /* base name */
    const char *reader;       /* "art" */
    const char *format_name;  /* what the input is called when not its reader's name: "dalvik" (an
                               * ART-format file Dalvik wrote); set by the reader, NULL: none */
    char detail[96];          /* "v3 non-streaming" */
    enum tci_clock clock;
    bool has_wall, has_cpu;   /* which timestamps events carry */
    const char *vm;           /* "art", "dalvik" or NULL */
    int64_t pid;              /* -1 unknown */
    const char *process_name; /* never NULL after finalize */
    bool process_named;       /* after finalize: process_name is the input's or --process-name, not the file stem */
    /* Readers set start_ns to the origin of their raw wall times, and
     * start_given when the input says when tracing began (a header start).
     * Otherwise normalize moves start_ns to the first event's time after
     * pass 1 (events keep their absolute times): from then on start_ns is
     * the trace start every writer measures from. */
    int64_t start_ns;
    bool start_given;
    int64_t end_ns;           /* largest timestamp (after pass 1), or start + elapsed */
    int64_t elapsed_ns;       /* from the input's metadata; -1 unknown */
    int64_t time_unit_ns;     /* raw time unit of the reader (1000 for ART µs) */
    int wrap_bits;            /* raw times wrap at 2^wrap_bits units (32 for ART); 0 never */

    tci_method *methods;
    uint32_t n_methods, cap_methods;
    tci_idmap method_ids;     /* raw id -> index */

    tci_thread *threads;
    uint32_t n_threads, cap_threads;

    tci_process *processes;   /* [0] always exists; after finalize it is the main (or first)
                               * real process, with a pid that is never 0 when any thread has one */
    uint32_t n_processes, cap_processes;

    tci_stack *stacks;        /* sampled stacks (tci_trace_stack) */
    uint32_t n_stacks, cap_stacks;
    tci_idmap stack_ids;      /* (parent, method) -> stack */

    tci_meta *meta;
    uint32_t n_meta, cap_meta;
    tci_idmap meta_ids;       /* hash of a key's text -> meta index */
    tci_idmap process_ids;    /* pid -> process index */

    uint64_t elapsed_offset;  /* where the input gave elapsed_ns (messages); UINT64_MAX unknown */

    /* The input says which process threads are in, those without events too (systrace's
     * PROCESS DUMP, its TGID column): outputs that can list them do (perfetto's ProcessTree). */
    bool process_listing;

    /* The text TCI_EV_FTRACE events point into (the input, or the text the reader decoded
     * from it), set by the reader at open; valid until the conversion is closed. */
    const char *sys_text;
    size_t sys_text_len;
    bool sys_text_mapped;     /* it is a file the conversion mapped: its pages may be given back */

    /* After pass 1 the writers size their arrays from the counts above, so
     * normalize freezes the tables (tci_trace_freeze): from then on a call
     * that would create or change an entry fails, lookups keep working. */
    bool frozen;

    /* limits (from the options) and why the last table operation failed */
    uint32_t max_string, max_threads, max_methods;
    int fail_status;          /* TC_ERR_LIMIT or TC_ERR_FORMAT (frozen) when limit_msg is set */
    char limit_msg[192];
} tci_trace;

int tci_trace_init(tci_trace *t);
void tci_trace_free(tci_trace *t);
/*
 * Text given to the tables is measured by its length, never by a NUL: a NUL
 * byte inside a name is stored as U+FFFD (EF BF BD), so every writer can use
 * the stored names as C strings, and the same input text always finds the
 * same entry (in pass 1 and in pass 2). Every function below that can create
 * or change an entry fails once the tables are frozen (tci_trace_fail says
 * why); the lookups of existing entries keep working.
 */
/* Index of the method with raw id, creating an undefined entry if needed (TCI_NONE: no memory). */
uint32_t tci_trace_method(tci_trace *t, uint64_t raw_id);
/* Define (or redefine) a method. Strings are copied. cls may be slash-separated. */
int tci_trace_define_method(tci_trace *t, uint64_t raw_id, const char *cls, size_t cls_len,
                            const char *name, size_t name_len, const char *sig, size_t sig_len,
                            const char *file, size_t file_len, int32_t line);
/* A new method entry that no raw id finds (raw_id is only shown): for a reader whose methods
 * take more than 64 bits to tell apart (pftrace: a process and its 64-bit ArtMethod*), which
 * keeps its own map of them. TCI_NONE: no memory or a limit. */
uint32_t tci_trace_add_method(tci_trace *t, uint64_t raw_id);
/* Define (or redefine) method i, as tci_trace_define_method does. */
int tci_trace_define_method_at(tci_trace *t, uint32_t i, const char *cls, size_t cls_len, const char *name,
                               size_t name_len, const char *sig, size_t sig_len, const char *file, size_t file_len,
                               int32_t line);
/* Add a thread (of process 0); returns its index (TCI_NONE: no memory or a limit). */
uint32_t tci_trace_add_thread(tci_trace *t, uint64_t tid);
/* The process with this pid, created if new (TCI_NONE: no memory or a limit). */
uint32_t tci_trace_process(tci_trace *t, int64_t pid);
int tci_trace_name_process(tci_trace *t, uint32_t process, const char *name, size_t len, uint8_t rank);
/* A slice, instant, counter or async name that is not a method: an entry of
 * the method table (no class), the same entry for the same text. */
uint32_t tci_trace_name(tci_trace *t, const char *name, size_t len);
/* The stack `parent` + `method` (parent TCI_NONE: an outermost frame), interned. */
uint32_t tci_trace_stack(tci_trace *t, uint32_t parent, uint32_t method);
/* The same, where the first short_len bytes are the short form ("pkg.C.m" of
 * "pkg.C.m: (I)V") that flame graphs and pprof show. */
uint32_t tci_trace_name_split(tci_trace *t, const char *name, size_t len, size_t short_len);
/* A name read back from a timeline (JSON, systrace): a Java method written as
 * "pkg.Class.method: (sig)ret" keeps "pkg.Class.method" as its short form. */
uint32_t tci_trace_timeline_name(tci_trace *t, const char *name, size_t len);
int tci_trace_name_thread(tci_trace *t, uint32_t thread, const char *name, size_t len, uint8_t rank);
/* After a table function failed (TCI_NONE or an error code): report why, at offset, as module. */
int tci_trace_fail(const tci_trace *t, tci_diag *d, const char *module, uint64_t offset);
/* A metadata value (a later one of the same key replaces it). Keys named by the input are kept
 * up to TCI_META_MAX: a reader that keeps its input's lines as metadata asks tci_trace_meta_full
 * first and counts a line past them as not converted; the keys readers and the core name
 * themselves (not-converted, merge-offset-ns...) have room after them. Past that a new key is
 * not kept (TC_OK). */
#define TCI_META_MAX 4096
#define TCI_META_OWN 64 /* the room after them for the keys readers and the core name themselves */
int tci_trace_add_meta(tci_trace *t, const char *key, size_t klen, const char *val, size_t vlen);
bool tci_trace_meta_full(const tci_trace *t, const char *key, size_t klen);
const char *tci_trace_meta(const tci_trace *t, const char *key);
/* Give every method and thread its display names; called once after pass 1. */
int tci_trace_finalize(tci_trace *t, tci_diag *d, const tci_options *o);
/* Each process's first thread with records again, after records changed (the selection drops threads). */
void tci_trace_index_processes(tci_trace *t);
/* End of pass 1 (normalize, before the writers' begin()): no entry is created or changed after this. */
void tci_trace_freeze(tci_trace *t);
/* What the input is, as the CLI summary and every output's metadata call it: the reader's name,
 * or the one the reader gave (format_name: "dalvik" for an ART-format file that Dalvik wrote);
 * and that name with the reader's detail ("dalvik v1 non-streaming") in buf
 * (TCI_FORMAT_TEXT_MAX bytes), returned. */
#define TCI_FORMAT_TEXT_MAX 128
const char *tci_trace_format_name(const tci_trace *t);
const char *tci_trace_format(const tci_trace *t, char *buf, size_t size);

/* ---- events: what normalize gives the writers --------------------------- */

enum tci_event_kind {
    TCI_EV_ENTER = 1,       /* a slice begins on the thread (method: its name) */
    TCI_EV_EXIT = 2,        /* the innermost open slice of the thread ends */
    TCI_EV_INSTANT = 3,     /* a point event on the thread */
    TCI_EV_COUNTER = 4,     /* value of the counter `method` of the thread's process */
    TCI_EV_ASYNC_BEGIN = 5, /* an async slice `method` with cookie `id`, process-scoped */
    TCI_EV_ASYNC_END = 6,
    TCI_EV_SAMPLE = 7,      /* a sampled stack: `id` is its stack, `value` its weight in ns */
    /* System events (systrace's scheduler data): the kernel's view, not the
     * thread's call stack. normalize passes them through in input order (no
     * pairing, no per-thread clamp) and they count in no thread's `records`,
     * so they never make a thread appear in method-level outputs; the hub
     * gives them only to writers with TCI_WF_SYSTEM (the others say how many
     * they leave out). Fields, by the accessors below:
     *   thread   the task the event is about: sched_switch's prev task, else
     *            the task of the ftrace line (the waker, the CPU's current task)
     *   id       tci_sys_cpu: the CPU of the ftrace line (< TCI_SYS_MAX_CPUS);
     *            tci_sys_other: a second thread index (switch: next task;
     *            wakeups, exit, rename: the task named by pid=), or for
     *            CPU_FREQUENCY/CPU_IDLE the cpu_id field;
     *            tci_sys_prev_state: switch's prev_state as the kernel's bits
     *            (the 4.4-era layout Perfetto's importer decodes by default)
     *   cpu_ns   tci_sys_prio_a / _b: switch's prev_prio / next_prio; a
     *            wakeup's prio / target_cpu; exit's prio
     *   value    CPU_FREQUENCY / CPU_IDLE: state
     *   method   TCI_NONE (names are the threads': their final names)       */
    TCI_EV_SCHED_SWITCH = 8,
    TCI_EV_SCHED_WAKING = 9,
    TCI_EV_SCHED_WAKEUP = 10,
    TCI_EV_SCHED_WAKEUP_NEW = 11,
    TCI_EV_CPU_FREQUENCY = 12,
    TCI_EV_CPU_IDLE = 13,
    TCI_EV_TASK_EXIT = 14,  /* sched_process_exit */
    TCI_EV_TASK_RENAME = 15,
    /* Any other kernel event of a system trace (binder_transaction, irq_handler_entry,
     * a print that is not atrace's, ...), as its text: method is its event name (a plain
     * name), id tci_sys_pack_text(cpu, offset of its details in the trace's sys_text),
     * cpu_ns the details' length in bytes. The shared ftrace parser (tc_ftrace.h) reads
     * its fields from that text, where a writer needs them. */
    TCI_EV_FTRACE = 16
};
#define TCI_EV_SYS_FIRST TCI_EV_SCHED_SWITCH
#define TCI_EV_SYS_LAST TCI_EV_FTRACE
#define TCI_EV_SYS_KINDS (TCI_EV_SYS_LAST - TCI_EV_SYS_FIRST + 1)
#define TCI_SYS_MAX_CPUS 1024u /* Perfetto refuses a bundle of CPU 1024 or above as corrupt */
/* The ftrace event name of a system kind ("sched_switch"). */
const char *tci_sys_kind_name(int kind);
enum tci_event_flags {
    TCI_EVF_SYNTHETIC = 1, /* made by a conversion rule (reconstructed, closed at end) */
    TCI_EVF_UNWIND = 2,    /* exit caused by an exception */
    TCI_EVF_FORCED = 4     /* exit forced by an exit of a deeper frame */
};

typedef struct tci_event {
    int64_t ts_ns;   /* timeline time: absolute ns */
    int64_t cpu_ns;  /* thread CPU time since the thread's clock base, or TCI_NO_TIME */
    double value;    /* COUNTER: the value */
    uint64_t id;     /* ASYNC_*: the cookie */
    uint32_t thread, method;
    uint32_t depth;  /* ENTER/EXIT: 0 = outermost frame of the thread */
    uint8_t kind, flags;
} tci_event;

/* ---- system events: the packing of `id` and `cpu_ns` (reader and writer use these only) ---- */

static inline bool tci_event_is_system(uint8_t kind) { return kind >= TCI_EV_SYS_FIRST && kind <= TCI_EV_SYS_LAST; }
static inline uint64_t tci_sys_pack_id(uint32_t cpu, uint32_t other, uint16_t prev_state)
{
    return (uint64_t)other | (uint64_t)prev_state << 32 | (uint64_t)(cpu & 0xFFFu) << 48;
}
static inline int64_t tci_sys_pack_prios(int32_t a, int32_t b)
{
    return (int64_t)((uint64_t)(uint32_t)a | (uint64_t)(uint32_t)b << 32);
}
/* TCI_EV_FTRACE: the CPU and where its details start in sys_text (offsets below 2^48). */
#define TCI_SYS_TEXT_MAX ((uint64_t)1 << 48)
static inline uint64_t tci_sys_pack_text(uint32_t cpu, uint64_t offset)
{
    return (offset & (TCI_SYS_TEXT_MAX - 1)) | (uint64_t)(cpu & 0xFFFu) << 48;
}
/* The details of a TCI_EV_FTRACE event ("transaction=12 dest_node=0 ..."), *len bytes; NULL
 * when they do not lie in t's text (an event made by hand). */
static inline const char *tci_sys_details(const tci_trace *t, const tci_event *ev, size_t *len)
{
    uint64_t at = ev->id & (TCI_SYS_TEXT_MAX - 1), n = (uint64_t)ev->cpu_ns;
    if (!t->sys_text || ev->cpu_ns < 0 || at > t->sys_text_len || n > t->sys_text_len - at)
        return NULL;
    *len = (size_t)n;
    return t->sys_text + at;
}
/* A writer that read the details of kernel events up to offset upto of sys_text gives back the
 * pages before it (source.c; *released is the writer's own mark, from 0): the reading thread
 * gave them back already, and a writer that reads them after it (a thread of its own, behind)
 * would map them again for the rest of the conversion. Nothing when the text is not a mapping. */
void tci_sys_text_release(const tci_trace *t, uint64_t upto, uint64_t *released);

/* Whether a system kind names a second thread (tci_sys_other): the scheduler's do. */
static inline bool tci_sys_has_other(uint8_t kind)
{
    return kind != TCI_EV_CPU_FREQUENCY && kind != TCI_EV_CPU_IDLE && kind != TCI_EV_FTRACE;
}
static inline uint32_t tci_sys_cpu(uint64_t id) { return (uint32_t)(id >> 48) & 0xFFFu; }
static inline uint32_t tci_sys_other(uint64_t id) { return (uint32_t)id; }
static inline uint16_t tci_sys_prev_state(uint64_t id) { return (uint16_t)(id >> 32); }
static inline int32_t tci_sys_prio_a(int64_t packed) { return (int32_t)(uint32_t)(uint64_t)packed; }
static inline int32_t tci_sys_prio_b(int64_t packed) { return (int32_t)(uint32_t)((uint64_t)packed >> 32); }

#endif /* TC_TC_TRACE_H */
