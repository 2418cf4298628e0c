/*
 * perfetto.c - Perfetto protobuf trace (shared/docs/outputs/PERFETTO-PROTO.md),
 * the format ui.perfetto.dev and trace processor read natively.
 *
 * A file is a bare sequence of TracePackets, each framed as field 1 of Trace
 * (0x0A, varint length, bytes). We stream, so memory grows with the
 * interning tables (methods used per thread), never with events. Rare
 * packets (descriptors, interning, notes) are packed with protobuf-c into
 * one reusable buffer; the common one, a slice begin or end without strings,
 * is a dozen bytes written straight into the sink with the field numbers of
 * proto/perfetto_trace_subset.proto (tests decode it with the upstream schema).
 *
 * Layout and the importer quirks it answers:
 *  - sequence 1 holds the process track (pid, process name) and, written at
 *    finish(), one TYPE_INSTANT event "traceconv: <input>" on the process
 *    track at the trace start whose debug annotations carry the trace-level
 *    facts: input file, format and version, clock, vm, start time, timeline
 *    note for thread-CPU-only inputs, and every non-zero warning/repair count
 *    (args "debug.*" in the UI's slice details). Its timestamps are absolute
 *    ns of the default clock (BOOTTIME).
 *  - sequence 2 is shared: it starts with the clock snapshot below, every
 *    thread's track (and its thread-time counter) and the defaults of its
 *    busiest thread. Every thread starts there; the others' events carry
 *    track_uuid and extra_counter_track_uuids (TP takes them from the event
 *    before the defaults: TrackEventTokenizer, TrackEventEventImporter). A
 *    thread moves to a sequence of its own (3 + thread index) when that costs
 *    less (charge_shared: what the shared sequence costs it in uuids and
 *    absolute times against the names other threads interned for it), so
 *    threads that call what others call share their names, and busy threads
 *    with names of their own pay for no track ids. Slice stacks are per track
 *    in TP, so a slice may begin on one sequence and end on the other.
 *  - every sequence but the process's is timed as Perfetto's SDK times its
 *    own: the first packet clears incremental state
 *    and holds a ClockSnapshot giving one instant, the trace start, on
 *    BOOTTIME (6, ns) and on a sequence-scoped clock (id 64) that is
 *    is_incremental with unit_multiplier_ns 1000 when the input has µs
 *    resolution (ART), else 1. The next packet interns category "art" (iid 1)
 *    and sets TracePacketDefaults {timestamp_clock_id 64, track_uuid,
 *    extra_counter_track_uuids} (on the shared sequence it also describes the
 *    busiest thread's track; thread tracks have no parent_uuid: TP wants root
 *    thread tracks). From then on every packet's timestamp is the
 *    delta, in clock units, from the previous packet of the sequence (TP adds
 *    it to the clock, starting from the snapshot): one or two bytes instead of
 *    six to nine. An event that cannot be such a delta (earlier than the last
 *    one, or not a whole unit) carries absolute ns and timestamp_clock_id 6,
 *    and leaves the clock where it was, as the SDK does.
 *  - a slice BEGIN carries type, category iid, name iid and its thread CPU
 *    value; an END only type and the CPU value (TP pops the innermost slice of
 *    the default track and needs neither name nor category). Plain slice
 *    packets carry no sequence_flags: TP reads that flag only to skip packets
 *    after data loss, which a converted file never has, and 2 bytes an event
 *    is what keeps the output within the size of the input. Nor do packets
 *    whose interned data names their event: TP parses interned data whatever
 *    the flags (ProtoTraceReader::ParseInternedData checks only that the
 *    state is valid). For the same
 *    reason begins carry no source_location_iid (3 bytes a begin, which TP
 *    only copies into per-slice args; the class in the name says the file).
 *  - thread CPU time (dual-clock input): a COUNTER_THREAD_TIME_NS child track
 *    per thread fed by extra_counter_values on every BEGIN and END; TP then
 *    fills thread_ts/thread_dur. Perfetto's own ART importer drops it. The
 *    counter is incremental (deltas) in the input's unit (unit_multiplier
 *    1000 for ART's µs), so a value costs one or two bytes, not six.
 *  - names are interned per sequence the first time a method appears on it
 *    (iids count up from 1 per sequence, so common ones take one varint
 *    byte); later events carry only the iid. The notes of frames the
 *    conversion made are debug annotations whose name and string value are
 *    interned per sequence too (name_iid, string_value_iid).
 *  - TP keeps 512 nesting levels and then ends outer slices too early, so we
 *    drop every event at depth >= 500 (the stream is well nested per thread,
 *    so what remains still balances) and report the count.
 *  - frames made by the conversion rules carry a "synthetic" annotation.
 *  - instants (system traces) are TYPE_INSTANT events on the thread track,
 *    named by iid like slices.
 *  - counters are process-scoped (like atrace's C|pid|name|value and JSON's
 *    "C"): one counter track per (process, counter name), a named child of
 *    the process track, fed with TYPE_COUNTER events carrying
 *    double_counter_value; NaN and infinities are skipped and counted.
 *  - async slices: one track per (process, name, cookie), a named child of
 *    the process track (TP wants parent_uuid on child tracks, never on
 *    process/thread tracks), fed with TYPE_SLICE_BEGIN/END. An end whose
 *    (process, name, cookie) never began is skipped and counted.
 *  - those tracks are described on the process sequence just before their
 *    first event (TP registers descriptors in file order); their events go on
 *    the sequence of the thread that emitted them with an explicit
 *    track_uuid, names interned on that sequence as for slices.
 *  - sampled stacks have no timeline form here: counted as not written.
 *  - system events (systrace's scheduler data) are ftrace events, as
 *    Perfetto's own recorder writes them: FtraceEventBundle packets (field
 *    ftrace_events) per CPU on the process sequence, each a full FtraceEvent
 *    (timestamp: absolute ns of the ftrace clock, which TP takes as BOOTTIME
 *    when the bundle names none: the same timeline as the slices; pid: the
 *    task). TP's importer then fills the sched, thread_state and counter
 *    tables as its systrace import of the text does (both end in the same
 *    FtraceSchedEventTracker calls). compact_sched is not used: TP skips the
 *    first switch of every CPU in that form and takes the previous task from
 *    the previous switch, not from the event, so it would not show what the
 *    text shows. Comms are the threads' final names. A CPU's events wait in
 *    its buffer until PF_BUNDLE_MAX bytes (memory: CPUs x that, CPUs < 1024).
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include "perfetto_ftrace.h"
#include "perfetto_trace_subset.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PF_MAX_DEPTH 500     /* TP's limit is 512; keep a margin */
#define PF_SEQ_PROCESS 1u
#define PF_CATEGORY_IID 1u
#define PF_UUID_PROCESS 1u
#define PF_FLAG_CLEARED 1u   /* SEQ_INCREMENTAL_STATE_CLEARED */
#define PF_FLAG_NEEDS 2u     /* SEQ_NEEDS_INCREMENTAL_STATE */
#define PF_CLOCK_BOOTTIME 6u /* TP's default trace clock */
#define PF_CLOCK_SEQ 64u     /* ids 64..127 are sequence-scoped clocks */
#define PF_IID_TABLE_MAX (16u << 20)
#define PF_BUNDLE_MAX (16u << 10) /* bytes of ftrace events a CPU's bundle collects before it is written */

/* Field tags (number << 3 | wire type) of the hand-written slice packet; the
 * numbers are those of proto/perfetto_trace_subset.proto (upstream's). */
enum {
    PF_TAG_PACKET = 1 << 3 | 2,        /* Trace.packet */
    PF_TAG_TIMESTAMP = 8 << 3,         /* TracePacket.timestamp */
    PF_TAG_SEQ_ID = 10 << 3,           /* TracePacket.trusted_packet_sequence_id */
    PF_TAG_TRACK_EVENT = 11 << 3 | 2,  /* TracePacket.track_event */
    PF_TAG_CLOCK_ID = 58 << 3,         /* TracePacket.timestamp_clock_id (a two-byte tag) */
    PF_TAG_CATEGORY_IIDS = 3 << 3,     /* TrackEvent.category_iids */
    PF_TAG_TYPE = 9 << 3,              /* TrackEvent.type */
    PF_TAG_NAME_IID = 10 << 3,         /* TrackEvent.name_iid */
    PF_TAG_COUNTER_VALUE = 12 << 3,    /* TrackEvent.extra_counter_values */
    PF_TAG_TRACK_UUID = 11 << 3,       /* TrackEvent.track_uuid */
    PF_TAG_COUNTER_UUIDS = 31 << 3,    /* TrackEvent.extra_counter_track_uuids (a two-byte tag) */
};
/* The longest hand-written slice packet (every varint at its widest), so both
 * lengths in it fit one varint byte. */
#define PF_SLICE_MAX 96u

/* The debug annotations of frames the conversion made, interned per sequence
 * on first use: names are iids 1-2, values 1-4 (bits of pf_w.notes). */
enum { PF_NOTE_NAMES = 2, PF_NOTE_VALUES = 4 };

/* What a thread on the shared sequence pays there and saves, in bytes, to
 * decide whether its own sequence would be cheaper (promote_thread). */
struct pf_share {
    uint64_t events;     /* its slice events so far */
    uint64_t rent;       /* explicit track and counter uuids, absolute times */
    uint64_t saved;      /* names it found interned by other threads */
    uint64_t names;      /* all the names it used: what its own sequence would intern again */
    uint64_t next_check; /* the event count of the next decision */
    struct {
        uint64_t events, rent, saved;
    } at;                /* the figures at the last decision */
};
/* What a sequence of its own costs before its names: a clock snapshot and a
 * packet of defaults. */
#define PF_OWN_SEQ_BYTES 64u
/* The first decision after 32 events, then every quarter more (at least 32 more). */
#define PF_FIRST_CHECK 32u

typedef Perfetto__Protos__TracePacket pf_packet;

typedef struct pf_w {
    uint8_t *buf;          /* the reusable pack buffer */
    size_t cap;
    /* Sequences: index 0 is the shared one (id PF_SEQ_SHARED), index i + 1
     * thread i's own (promote_thread). Per sequence, iids count up from 1 in
     * order of first use, so the common ones fit one varint byte. A table per
     * (sequence, method) when that fits PF_IID_TABLE_MAX bytes (the hot path
     * is one load), else a hash map. */
    uint32_t **iid;        /* per sequence: method -> iid (0 = not yet interned) */
    uint32_t *next_iid;    /* per sequence */
    bool iid_tables;       /* own sequences get a table too (else the hash map) */
    tci_idmap interned;    /* fallback: (sequence << 32 | method) -> iid */
    uint8_t *notes;        /* per sequence: PF_NOTE_* bits of the annotation strings interned */
    uint32_t *seq_of;      /* per thread: its sequence index (0 shared) */
    uint32_t shared_default; /* the thread whose track is the shared sequence's default */
    struct pf_share *share;  /* per thread: what staying on the shared sequence costs */
    uint64_t *seen;        /* per thread on the shared sequence: bitset of the methods it used */
    uint32_t seen_words;   /* 64-bit words per thread in seen (0: the hash map instead) */
    tci_idmap seen_map;    /* fallback: (thread << 32 | method) */
    int64_t *last_cpu;     /* per thread: the last CPU value sent (the counter is incremental) */
    int64_t cpu_unit;      /* ns per counter unit: the input's resolution */
    /* The incremental clock of every sequence but the process's: it starts at
     * ts_base (the snapshot) and each packet's timestamp moves it on by a delta. */
    uint64_t *last_ts;     /* per sequence: where the clock stands, ns */
    bool last_absolute;    /* the last seq_time could not be a delta (*absolute) */
    uint64_t ts_unit;      /* ns per clock unit: 1000 for µs inputs, else 1 */
    uint64_t ts_base;      /* the trace start, in whole units (ns) */
    uint64_t dropped;      /* events deeper than PF_MAX_DEPTH */
    /* Sampled stacks: PerfSample packets on a sequence of their own, their callstacks interned
     * there on first use (bits per stack and per method: the frames and names defined). */
    uint32_t sample_seq;   /* its id; 0 until the first sample */
    bool samples_begun;    /* its first packet (incremental state cleared) is written */
    uint64_t *stack_done, *frame_done;
    uint32_t *path;        /* scratch: a stack's frames, leaf first */
    uint32_t cap_path;
    uint64_t bad_counters; /* NaN or infinite counter values */
    uint64_t lone_async_ends;
    /* Process-scoped tracks, described on first use. */
    tci_idmap counter_tracks; /* (process << 32 | counter name) -> index */
    uint32_t n_counter_tracks;
    struct pf_async {      /* open addressing by (process, name, cookie) */
        uint64_t cookie;
        uint32_t process, method;
        uint32_t index1;   /* track index + 1; 0 = empty slot */
    } *async;
    uint32_t async_cap, n_async;
    /* System events: per CPU, the encoded events of its next FtraceEventBundle. */
    struct pf_bundle {
        uint8_t *buf;
        size_t len, cap;
    } *bundles;
    uint32_t n_bundles;
    tci_pf_ftrace *ft;     /* kernel events' messages (perfetto_ftrace.c), from the first one on */
    uint64_t text_released; /* the kernel events' text given back before this offset */
} pf_w;

/* Track uuids: thread i -> 2i+2, its CPU-time counter -> 2i+3; 1 is the process. */
static uint64_t thread_uuid(uint32_t thread) { return 2 * (uint64_t)thread + 2; }
static uint64_t counter_uuid(uint32_t thread) { return 2 * (uint64_t)thread + 3; }
/* Sequence ids: 1 the process's, 2 the shared one, 3 + i thread i's own. */
#define PF_SEQ_SHARED 2u
static uint32_t seq_id(uint32_t seq) { return PF_SEQ_SHARED + seq; }
/* Counter and async tracks of processes: above every thread's and process's uuid. */
#define PF_UUID_COUNTERS ((uint64_t)2 << 40)
#define PF_UUID_ASYNC ((uint64_t)3 << 40)

static uint64_t clamp_ts(int64_t ts) { return ts < 0 ? 0 : (uint64_t)ts; }

static int ensure_buf(pf_w *p, size_t need)
{
    if (need <= p->cap)
        return TC_OK;
    size_t cap = p->cap ? p->cap : 4096;
    while (cap < need)
        cap *= 2;
    uint8_t *b = realloc(p->buf, cap);
    if (!b)
        return TC_ERR_NOMEM;
    p->buf = b;
    p->cap = cap;
    return TC_OK;
}

static uint8_t *put_varint(uint8_t *q, uint64_t v)
{
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}

static uint8_t *put_tag(uint8_t *q, uint32_t field, uint32_t wire) { return put_varint(q, (uint64_t)field << 3 | wire); }

/* Frame one packet as Trace.packet (field 1, LEN) and write it. */
static int put_packet(tci_wctx *w, const ProtobufCMessage *pk)
{
    pf_w *p = w->priv;
    tci_sink *o = w->out;
    size_t need = protobuf_c_message_get_packed_size(pk);
    if (ensure_buf(p, need) != TC_OK)
        return TC_ERR_NOMEM;
    size_t len = protobuf_c_message_pack(pk, p->buf);
    uint8_t hdr[11] = {PF_TAG_PACKET};
    tci_sink_write(o, hdr, (size_t)(put_varint(hdr + 1, len) - hdr));
    tci_sink_write(o, p->buf, len);
    return o->err ? TC_ERR_IO : TC_OK;
}

/* Every packet: when, on which sequence, with which flags. ts is absolute ns
 * of the default clock (the process sequence has no clock of its own). */
static void packet_header(pf_packet *pk, int64_t ts, uint32_t seq, uint32_t flags)
{
    *pk = (pf_packet)PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pk->has_timestamp = 1;
    pk->timestamp = clamp_ts(ts);
    pk->has_trusted_packet_sequence_id = 1;
    pk->trusted_packet_sequence_id = seq;
    pk->has_sequence_flags = flags != 0;
    pk->sequence_flags = flags;
}

/* The timestamp of the next packet on a sequence: the delta in clock units
 * from the sequence's previous packet, which moves the clock on. When ts is
 * earlier than the clock or not a whole unit, *absolute is set and the result
 * is absolute ns, to be sent with timestamp_clock_id BOOTTIME (the clock then
 * stays where it was, as TP keeps it). */
static uint64_t seq_time(pf_w *p, uint32_t seq, int64_t ts, bool *absolute)
{
    uint64_t t = clamp_ts(ts), last = p->last_ts[seq];
    *absolute = false;
    p->last_absolute = false;
    if (TCI_LIKELY(t >= last)) {
        uint64_t d = t - last;
        /* a constant divisor compiles to a multiply: ART's µs is the common case */
        if (p->ts_unit == 1000 && d % 1000 == 0) {
            p->last_ts[seq] = t;
            return d / 1000;
        }
        if (p->ts_unit == 1) {
            p->last_ts[seq] = t;
            return d;
        }
    }
    *absolute = true;
    p->last_absolute = true;
    return t;
}

/* packet_header for a packet on a sequence with a clock: timed by it. */
static void seq_packet_header(pf_w *p, pf_packet *pk, uint32_t seq, int64_t ts, uint32_t flags)
{
    bool absolute;
    packet_header(pk, 0, seq_id(seq), flags);
    pk->timestamp = seq_time(p, seq, ts, &absolute);
    pk->has_timestamp_clock_id = absolute;
    pk->timestamp_clock_id = PF_CLOCK_BOOTTIME;
}

/* ... on the sequence the thread's events go to now. */
static void thread_packet_header(pf_w *p, pf_packet *pk, uint32_t thread, int64_t ts, uint32_t flags)
{
    seq_packet_header(p, pk, p->seq_of[thread], ts, flags);
}

/* Whether the thread's events name their tracks: on the shared sequence all
 * but its default thread's do (TP takes track_uuid and
 * extra_counter_track_uuids from the event before the defaults). */
static bool explicit_track(const pf_w *p, uint32_t thread)
{
    return p->seq_of[thread] == 0 && thread != p->shared_default;
}

static int32_t pid32(const tci_trace *t, uint32_t process)
{
    int64_t pid = t->processes[process].pid;
    return pid >= 0 && pid <= INT32_MAX ? (int32_t)pid : 0;
}

/* Process 0 (the input's own) is track 1; other processes of system traces
 * get uuids above every thread's. */
static uint64_t process_uuid(uint32_t process)
{
    return process ? ((uint64_t)1 << 40) + process : PF_UUID_PROCESS;
}

static bool process_used(const tci_trace *t, uint32_t process)
{
    if (process == 0)
        return true; /* it carries the trace-level facts */
    return t->processes[process].first_thread != TCI_NONE;
}

/* One descriptor per process, all on the process sequence. */
static int write_processes(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    int rc = TC_OK;
    for (uint32_t p = 0; p < t->n_processes && rc == TC_OK; p++) {
        if (!process_used(t, p))
            continue;
        Perfetto__Protos__ProcessDescriptor proc = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
        proc.has_pid = 1;
        proc.pid = pid32(t, p);
        proc.process_name = (char *)t->processes[p].name;
        Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        td.has_uuid = 1;
        td.uuid = process_uuid(p);
        td.process = &proc;
        pf_packet pk;
        packet_header(&pk, t->start_ns, PF_SEQ_PROCESS, p == 0 ? PF_FLAG_CLEARED : 0);
        pk.has_first_packet_on_sequence = p == 0;
        pk.first_packet_on_sequence = p == 0;
        pk.track_descriptor = &td;
        rc = put_packet(w, &pk.base);
    }
    return rc;
}

/* A process listing (systrace's PROCESS DUMP) as Perfetto's own recorder writes one
 * (linux.process_stats): ProcessTree packets of the process sequence listing every process
 * (pid, ppid, its name as cmdline) and every thread (tid, tgid, name), those without events
 * too, in packets of about 32 KiB. TP then knows each of them, as its import of the capture does. */
#define PF_TREE_PACKET (32u << 10)

static int flush_tree(tci_wctx *w, const uint8_t *body, size_t len)
{
    if (!len)
        return TC_OK;
    const tci_trace *t = w->trace;
    uint8_t head[48], *q = head + 12, *start = q;
    q = put_varint(put_tag(q, 8, 0), clamp_ts(t->start_ns));  /* TracePacket.timestamp */
    q = put_varint(put_tag(q, 10, 0), PF_SEQ_PROCESS);        /* trusted_packet_sequence_id */
    q = put_varint(put_tag(q, 2, 2), len);                    /* TracePacket.process_tree */
    size_t inner = (size_t)(q - start) + len;
    uint8_t frame[12], *f = frame;
    *f++ = PF_TAG_PACKET;
    f = put_varint(f, inner);
    tci_sink_write(w->out, frame, (size_t)(f - frame));
    tci_sink_write(w->out, start, (size_t)(q - start));
    tci_sink_write(w->out, body, len);
    return w->out->err ? TC_ERR_IO : TC_OK;
}

/* One Process or Thread entry of a ProcessTree into buf at *len (room checked by the caller). */
static size_t tree_entry(uint8_t *buf, uint32_t field, int64_t a, int64_t b, uint32_t b_field, const char *name,
                         uint32_t name_field)
{
    uint8_t body[32], *q = body;
    q = put_varint(put_tag(q, 1, 0), (uint64_t)a);                /* pid / tid */
    if (b >= 0)
        q = put_varint(put_tag(q, b_field, 0), (uint64_t)b);      /* ppid / tgid */
    size_t nl = name ? strlen(name) : 0;
    uint8_t nh[16], *nq = nl ? put_varint(put_tag(nh, name_field, 2), nl) : nh; /* cmdline / name */
    size_t inner = (size_t)(q - body) + (size_t)(nq - nh) + nl;
    uint8_t *o = put_varint(put_tag(buf, field, 2), inner);
    memcpy(o, body, (size_t)(q - body));
    o += q - body;
    memcpy(o, nh, (size_t)(nq - nh));
    o += nq - nh;
    memcpy(o, name, nl);
    return (size_t)(o + nl - buf);
}

/* A process the input named (a listing, a thread's TGID), not one the reader made for a thread
 * whose process it does not know: only those are told to TP, as its import of the text knows them. */
static bool process_named(const tci_trace *t, uint32_t process, const uint8_t *has_given)
{
    return t->processes[process].ppid >= 0 || t->processes[process].name_rank >= 2 || has_given[process];
}

static int write_process_tree(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    pf_w *p = w->priv;
    if (!t->process_listing)
        return TC_OK;
    uint8_t *has_given = tci_calloc(t->n_processes, 1); /* a thread the input put in it */
    if (!has_given)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_threads; i++)
        has_given[t->threads[i].process] |= t->threads[i].process_given;
    size_t len = 0;
    int rc = TC_OK;
    for (uint32_t i = 0; i < t->n_processes + t->n_threads && rc == TC_OK; i++) {
        bool proc = i < t->n_processes;
        const tci_process *pr = proc ? &t->processes[i] : NULL;
        const tci_thread *th = proc ? NULL : &t->threads[i - t->n_processes];
        int64_t id = proc ? pr->pid : (int64_t)th->tid;
        if (id <= 0 || id > INT32_MAX || (proc ? !process_named(t, i, has_given) : !th->process_given))
            continue; /* no pid of its own (a method trace's process 0 before it had one), the idle task,
                       * a process only the reader made, or a thread whose process the input does not
                       * say (TP puts a Thread without tgid in process 0) */
        const char *name = proc ? pr->name : th->name;
        size_t need = 64 + (name ? strlen(name) : 0);
        if (ensure_buf(p, len + need) != TC_OK) {
            free(has_given);
            return TC_ERR_NOMEM;
        }
        if (proc)
            len += tree_entry(p->buf + len, 1, id, pr->ppid, 2, name, 3);
        else
            len += tree_entry(p->buf + len, 2, id, pid32(t, th->process), 3, name, 2);
        if (len >= PF_TREE_PACKET) {
            rc = flush_tree(w, p->buf, len);
            len = 0;
        }
    }
    free(has_given);
    return rc == TC_OK ? flush_tree(w, p->buf, len) : rc;
}

/* First packet of a sequence with a clock: cleared state and the instant its
 * incremental clock starts from, on that clock and on BOOTTIME (TP converts
 * through this pair; the custom clock's timestamp is in its own units). */
static int write_clock_snapshot(tci_wctx *w, uint32_t seq)
{
    pf_w *p = w->priv;
    Perfetto__Protos__ClockSnapshot__Clock boot = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
    boot.has_clock_id = 1;
    boot.clock_id = PF_CLOCK_BOOTTIME;
    boot.has_timestamp = 1;
    boot.timestamp = p->ts_base;
    Perfetto__Protos__ClockSnapshot__Clock clock = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
    clock.has_clock_id = 1;
    clock.clock_id = PF_CLOCK_SEQ;
    clock.has_timestamp = 1;
    clock.timestamp = p->ts_base / p->ts_unit;
    clock.has_is_incremental = 1;
    clock.is_incremental = 1;
    clock.has_unit_multiplier_ns = 1;
    clock.unit_multiplier_ns = p->ts_unit;
    Perfetto__Protos__ClockSnapshot__Clock *clocks[2] = {&boot, &clock};
    Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
    cs.n_clocks = 2;
    cs.clocks = clocks;
    pf_packet pk;
    packet_header(&pk, (int64_t)p->ts_base, seq_id(seq), PF_FLAG_CLEARED);
    pk.has_timestamp_clock_id = 1; /* this packet's own time: BOOTTIME, whatever defaults say */
    pk.timestamp_clock_id = PF_CLOCK_BOOTTIME;
    pk.has_first_packet_on_sequence = 1;
    pk.first_packet_on_sequence = 1;
    pk.clock_snapshot = &cs;
    p->last_ts[seq] = p->ts_base;
    return put_packet(w, &pk.base);
}

/* The thread track of thread i (no parent_uuid: TP wants root thread tracks). */
static void thread_descriptor(const tci_trace *t, uint32_t i, Perfetto__Protos__TrackDescriptor *td,
                              Perfetto__Protos__ThreadDescriptor *th)
{
    *th = (Perfetto__Protos__ThreadDescriptor)PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    th->has_pid = 1;
    th->pid = pid32(t, t->threads[i].process);
    th->has_tid = 1;
    th->tid = (int64_t)t->threads[i].tid;
    th->thread_name = (char *)t->threads[i].name;
    *td = (Perfetto__Protos__TrackDescriptor)PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    td->has_uuid = 1;
    td->uuid = thread_uuid(i);
    td->thread = th;
}

/* The second packet of a sequence: the category "art" (iid 1) and the
 * defaults that keep every later event packet small: its clock, and thread's
 * track and thread-time counter (the shared sequence's: its busiest thread's).
 * td: a descriptor that goes in the same packet, or NULL. */
static int write_defaults(tci_wctx *w, uint32_t seq, uint32_t thread, Perfetto__Protos__TrackDescriptor *td)
{
    const tci_trace *t = w->trace;
    pf_w *p = w->priv;
    Perfetto__Protos__EventCategory cat = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
    cat.has_iid = 1;
    cat.iid = PF_CATEGORY_IID;
    cat.name = (char *)(t->reader ? t->reader : "trace"); /* "art" for method traces */
    Perfetto__Protos__EventCategory *cats[1] = {&cat};
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    in.n_event_categories = 1;
    in.event_categories = cats;

    uint64_t cu = counter_uuid(thread);
    Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
    ted.has_track_uuid = 1;
    ted.track_uuid = thread_uuid(thread);
    if (t->has_cpu) {
        ted.n_extra_counter_track_uuids = 1;
        ted.extra_counter_track_uuids = &cu;
    }
    Perfetto__Protos__TracePacketDefaults def = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
    def.has_timestamp_clock_id = 1;
    def.timestamp_clock_id = PF_CLOCK_SEQ;
    def.track_event_defaults = &ted;

    /* TP applies the defaults before the timestamp: this packet is already on the clock */
    pf_packet pk;
    seq_packet_header(p, &pk, seq, (int64_t)p->ts_base, PF_FLAG_NEEDS);
    pk.track_descriptor = td;
    pk.interned_data = &in;
    pk.trace_packet_defaults = &def;
    return put_packet(w, &pk.base);
}

/* The thread-time counter of thread i, a child of its thread track
 * (parent_uuid is right here: only process and thread tracks must be roots). */
static int write_cpu_counter(tci_wctx *w, uint32_t i)
{
    pf_w *p = w->priv;
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    cd.has_type = 1;
    cd.type = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS;
    /* Deltas in the input's unit (µs for ART): one or two varint bytes per
     * event instead of five or six for absolute ns. TP multiplies by
     * unit_multiplier and sums the deltas per (sequence, counter):
     * TrackEventSequenceState::IncrementAndGetCounterValue, so a thread that
     * moves to its own sequence starts its counter from 0 there. */
    cd.has_is_incremental = 1;
    cd.is_incremental = 1;
    if (p->cpu_unit != 1) {
        cd.has_unit_multiplier = 1;
        cd.unit_multiplier = p->cpu_unit;
    }
    Perfetto__Protos__TrackDescriptor ctd = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    ctd.has_uuid = 1;
    ctd.uuid = counter_uuid(i);
    ctd.has_parent_uuid = 1;
    ctd.parent_uuid = thread_uuid(i);
    ctd.counter = &cd;
    pf_packet cp;
    seq_packet_header(p, &cp, 0, (int64_t)p->ts_base, PF_FLAG_NEEDS);
    cp.track_descriptor = &ctd;
    return put_packet(w, &cp.base);
}

/* Every thread's tracks, on the shared sequence, which starts with them: the
 * busiest thread's descriptor rides in the packet of defaults. */
static int write_threads(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    pf_w *p = w->priv;
    if (p->shared_default == TCI_NONE)
        return TC_OK; /* no thread has records */
    int rc = write_clock_snapshot(w, 0);
    Perfetto__Protos__TrackDescriptor td;
    Perfetto__Protos__ThreadDescriptor th;
    thread_descriptor(t, p->shared_default, &td, &th);
    if (rc == TC_OK)
        rc = write_defaults(w, 0, p->shared_default, &td);
    if (rc == TC_OK && t->has_cpu)
        rc = write_cpu_counter(w, p->shared_default);
    for (uint32_t i = 0; rc == TC_OK && i < t->n_threads; i++) {
        if (!t->threads[i].records || i == p->shared_default)
            continue;
        thread_descriptor(t, i, &td, &th);
        pf_packet pk;
        seq_packet_header(p, &pk, 0, (int64_t)p->ts_base, PF_FLAG_NEEDS);
        pk.track_descriptor = &td;
        rc = put_packet(w, &pk.base);
        if (rc == TC_OK && t->has_cpu)
            rc = write_cpu_counter(w, i);
    }
    return rc;
}

/* The busiest thread: the shared sequence's default track, so that a trace
 * of one thread, or of one that does most of the work, names no track. */
static uint32_t busiest_thread(const tci_trace *t)
{
    uint32_t best = TCI_NONE;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        if (t->threads[i].records && (best == TCI_NONE || t->threads[i].records > t->threads[best].records))
            best = i;
    }
    return best;
}

static uint32_t *new_iid_table(const tci_trace *t)
{
    return tci_calloc(t->n_methods ? t->n_methods : 1, sizeof(uint32_t));
}

static int alloc_state(pf_w *p, const tci_trace *t)
{
    uint32_t n = t->n_threads ? t->n_threads : 1;
    p->next_iid = tci_calloc(n + 1, sizeof *p->next_iid);
    p->notes = tci_calloc(n + 1, sizeof *p->notes);
    p->last_ts = tci_calloc(n + 1, sizeof *p->last_ts);
    p->iid = tci_calloc(n + 1, sizeof *p->iid);
    p->seq_of = tci_calloc(n, sizeof *p->seq_of);
    p->share = tci_calloc(n, sizeof *p->share);
    p->last_cpu = tci_calloc(n, sizeof *p->last_cpu);
    if (!p->next_iid || !p->notes || !p->last_ts || !p->iid || !p->seq_of || !p->share || !p->last_cpu)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i <= n; i++)
        p->next_iid[i] = 1;
    for (uint32_t i = 0; i < n; i++)
        p->share[i].next_check = PF_FIRST_CHECK;
    p->shared_default = busiest_thread(t);
    /* CPU values are whole multiples of the reader's unit (µs for ART) */
    p->cpu_unit = t->time_unit_ns > 0 ? t->time_unit_ns : 1;
    /* Timestamps too, when the start is (ART: the header's µs); an event that
     * is not takes the absolute path of seq_time. */
    p->ts_unit = t->time_unit_ns == 1000 && t->start_ns % 1000 == 0 ? 1000 : 1;
    p->ts_base = clamp_ts(t->start_ns) / p->ts_unit * p->ts_unit;
    uint64_t active = 0;
    for (uint32_t i = 0; i < t->n_threads; i++)
        active += t->threads[i].records != 0;
    uint64_t table = (uint64_t)t->n_methods * sizeof(uint32_t);
    /* tables for the shared sequence and every thread's own, else the hash map */
    p->iid_tables = (active + 1) * table <= PF_IID_TABLE_MAX;
    if (table <= PF_IID_TABLE_MAX && !(p->iid[0] = new_iid_table(t)))
        return TC_ERR_NOMEM;
    uint64_t words = ((uint64_t)t->n_methods + 63) / 64;
    if (n * words * sizeof(uint64_t) <= PF_IID_TABLE_MAX) {
        p->seen_words = (uint32_t)words;
        if (words && !(p->seen = tci_calloc((size_t)n * words, sizeof *p->seen)))
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

/* The iid of a method on a sequence; *fresh is set when it must be interned now. */
static uint32_t method_iid(pf_w *p, uint32_t seq, uint32_t method, bool *fresh)
{
    *fresh = false;
    if (p->iid[seq]) {
        uint32_t *slot = &p->iid[seq][method];
        if (!*slot) {
            *slot = p->next_iid[seq]++;
            *fresh = true;
        }
        return *slot;
    }
    uint64_t key = (uint64_t)seq << 32 | method;
    uint32_t iid = tci_idmap_get(&p->interned, key);
    if (iid != TCI_NONE)
        return iid;
    iid = p->next_iid[seq]++;
    *fresh = true;
    return tci_idmap_put(&p->interned, key, iid) != 0 ? 0 : iid;
}

/* Whether the thread uses the method for the first time (marks it); -1: no memory. */
static int first_use(pf_w *p, uint32_t thread, uint32_t method)
{
    if (p->seen_words) {
        uint64_t *word = &p->seen[(size_t)thread * p->seen_words + method / 64], bit = (uint64_t)1 << (method % 64);
        int first = !(*word & bit);
        *word |= bit;
        return first;
    }
    uint64_t key = (uint64_t)thread << 32 | method;
    if (tci_idmap_get(&p->seen_map, key) != TCI_NONE)
        return 0;
    return tci_idmap_put(&p->seen_map, key, 1) != 0 ? -1 : 1;
}

/* The iid of a method named by a thread on the shared sequence, counting what
 * the thread's own sequence would have paid for the name and what sharing
 * saved it (a name another thread had interned). 0: no memory. */
static uint32_t shared_iid(pf_w *p, const tci_trace *t, uint32_t thread, uint32_t method, bool *fresh)
{
    uint32_t iid = method_iid(p, 0, method, fresh);
    int first = first_use(p, thread, method);
    if (first < 0)
        return 0;
    if (first) {
        /* an EventName: the name and about 8 bytes of tags, lengths, iid and packet */
        uint64_t cost = strlen(t->methods[method].full_name) + 8;
        p->share[thread].names += cost;
        if (!*fresh)
            p->share[thread].saved += cost;
    }
    return iid;
}

/* Thread i leaves the shared sequence for its own (3 + i): a clock snapshot
 * and the defaults (its track was described on the shared sequence). Its
 * names are interned again there as they are used, its thread-time counter
 * starts again from 0 (TP sums incremental values per sequence). TP's slice
 * stacks are per track, so a slice begun on one sequence ends on the other. */
static int promote_thread(tci_wctx *w, uint32_t thread)
{
    pf_w *p = w->priv;
    uint32_t seq = thread + 1;
    if (p->iid_tables && !(p->iid[seq] = new_iid_table(w->trace)))
        return TC_ERR_NOMEM;
    p->seq_of[thread] = seq;
    p->last_cpu[thread] = 0;
    int rc = write_clock_snapshot(w, seq);
    return rc == TC_OK ? write_defaults(w, seq, thread, NULL) : rc;
}

/* After a slice event of a thread on the shared sequence: the bytes it paid
 * there (rent), and at each decision point whether the rest of its events
 * (pass 1 counted them) would cost more there than its own sequence would:
 * the net rent per event of the last interval (rent less the names sharing
 * saved it) times the events to come, against interning again the names it
 * used so far (half of them: those it calls again; half measured best on
 * the real traces, doc/performance.md, "Perfetto output size"). Threads that share their
 * names (repeated threads, small threads calling what the main thread calls)
 * stay; busy threads with names of their own leave early. */
static int charge_shared(tci_wctx *w, uint32_t thread, uint64_t rent)
{
    pf_w *p = w->priv;
    struct pf_share *sh = &p->share[thread];
    sh->rent += rent;
    if (TCI_LIKELY(++sh->events < sh->next_check))
        return TC_OK;
    /* the rates of the last interval: names saturate, rent does not */
    uint64_t events = sh->events - sh->at.events, net = sh->rent - sh->at.rent, saved = sh->saved - sh->at.saved;
    sh->at.events = sh->events;
    sh->at.rent = sh->rent;
    sh->at.saved = sh->saved;
    sh->next_check += sh->next_check / 4 > PF_FIRST_CHECK ? sh->next_check / 4 : PF_FIRST_CHECK;
    uint64_t records = w->trace->threads[thread].records;
    if (net <= saved || records <= sh->events)
        return TC_OK;
    double to_come = (double)(net - saved) / (double)events * (double)(records - sh->events);
    return to_come > (double)(sh->names / 2 + PF_OWN_SEQ_BYTES) ? promote_thread(w, thread) : TC_OK;
}

/* The iid of a method on the thread's sequence now; 0: no memory. */
static uint32_t thread_iid(tci_wctx *w, uint32_t thread, uint32_t method, bool *fresh)
{
    pf_w *p = w->priv;
    uint32_t seq = p->seq_of[thread];
    return seq ? method_iid(p, seq, method, fresh) : shared_iid(p, w->trace, thread, method, fresh);
}

static int pf_begin(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    int rc = alloc_state(w->priv, t);
    if (rc == TC_OK)
        rc = write_processes(w);
    if (rc == TC_OK)
        rc = write_process_tree(w);
    return rc == TC_OK ? write_threads(w) : rc;
}

/* The annotation strings of frames the conversion made, each interned once
 * per sequence: names take iids 1.., values 1.. (InternedData
 * debug_annotation_names, debug_annotation_string_values). */
static const char *const note_names[PF_NOTE_NAMES] = {"synthetic", "exit"};
static const char *const note_values[PF_NOTE_VALUES] = {
    "open when tracing began", "open when tracing ended", "exception unwind", "closed by the exit of a caller",
};

/* Why a frame's begin or end is not a plain enter/exit of the input: the
 * indexes of its annotation's name and value; false when it is. */
static bool event_note(const tci_event *ev, unsigned *key, unsigned *value)
{
    *key = 0; /* synthetic */
    if (ev->flags & TCI_EVF_SYNTHETIC) {
        *value = ev->kind == TCI_EV_ENTER ? 0 : 1;
        return true;
    }
    *key = 1; /* exit */
    *value = ev->flags & TCI_EVF_UNWIND ? 2 : 3;
    return ev->flags & (TCI_EVF_UNWIND | TCI_EVF_FORCED);
}

/* A packet that carries strings: a name interned on first use and/or a note
 * on how the conversion made the frame, as a debug annotation whose name and
 * value are iids (about 6 bytes instead of 30; TP looks both up in the
 * sequence's interned data: ProtoToArgsParser::ParseDebugAnnotation). pk
 * holds the event, timed; name_iid is the event's iid when intern is set. */
static int put_event_extras(tci_wctx *w, const tci_event *ev, pf_packet *pk, bool intern)
{
    pf_w *p = w->priv;
    const tci_method *m = &w->trace->methods[ev->method];
    uint8_t *notes = &p->notes[p->seq_of[ev->thread]];
    Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventName *ens[1] = {&en};
    Perfetto__Protos__DebugAnnotationName dn = PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
    Perfetto__Protos__DebugAnnotationName *dns[1] = {&dn};
    Perfetto__Protos__InternedString dv = PERFETTO__PROTOS__INTERNED_STRING__INIT;
    Perfetto__Protos__InternedString *dvs[1] = {&dv};
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    if (intern) {
        en.has_iid = 1;
        en.iid = pk->track_event->name_iid;
        en.name = (char *)m->full_name;
        in.n_event_names = 1;
        in.event_names = ens;
    }
    Perfetto__Protos__DebugAnnotation da = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
    Perfetto__Protos__DebugAnnotation *das[1] = {&da};
    unsigned key, value;
    if (ev->flags && event_note(ev, &key, &value)) {
        uint8_t key_bit = (uint8_t)(1u << key), value_bit = (uint8_t)(1u << (PF_NOTE_NAMES + value));
        da.has_name_iid = 1;
        da.name_iid = key + 1;
        da.has_string_value_iid = 1;
        da.string_value_iid = value + 1;
        if (!(*notes & key_bit)) {
            dn.has_iid = 1;
            dn.iid = key + 1;
            dn.name = (char *)note_names[key];
            in.n_debug_annotation_names = 1;
            in.debug_annotation_names = dns;
        }
        if (!(*notes & value_bit)) {
            dv.has_iid = 1;
            dv.iid = value + 1;
            dv.has_str = 1;
            dv.str.data = (uint8_t *)note_values[value];
            dv.str.len = strlen(note_values[value]);
            in.n_debug_annotation_string_values = 1;
            in.debug_annotation_string_values = dvs;
        }
        *notes |= key_bit | value_bit;
        pk->track_event->n_debug_annotations = 1;
        pk->track_event->debug_annotations = das;
    }
    if (in.n_event_names || in.n_debug_annotation_names || in.n_debug_annotation_string_values)
        pk->interned_data = &in;
    return put_packet(w, &pk->base);
}

/* The common packet, written by hand: a slice begin (name_iid != 0) or end
 * with no strings; on the shared sequence with the thread's track and
 * thread-time counter unless they are the defaults. */
static int put_slice(tci_wctx *w, const tci_event *ev, uint32_t name_iid, bool has_cpu, uint64_t cpu_delta)
{
    pf_w *p = w->priv;
    tci_sink *o = w->out;
    if (TCI_UNLIKELY(sizeof o->buf - o->len < PF_SLICE_MAX) && tci_sink_flush_buf(o) != 0)
        return TC_ERR_IO;
    uint8_t *start = o->buf + o->len, *q = start + 2;
    uint32_t seq = p->seq_of[ev->thread];
    bool absolute;
    uint64_t ts = seq_time(p, seq, ev->ts_ns, &absolute);
    *q++ = PF_TAG_TIMESTAMP;
    q = put_varint(q, ts);
    if (TCI_UNLIKELY(absolute)) {
        q = put_varint(q, PF_TAG_CLOCK_ID);
        *q++ = PF_CLOCK_BOOTTIME;
    }
    *q++ = PF_TAG_SEQ_ID;
    q = put_varint(q, seq_id(seq));
    *q++ = PF_TAG_TRACK_EVENT;
    uint8_t *te_len = q++, *te = q;
    if (name_iid) {
        *q++ = PF_TAG_CATEGORY_IIDS;
        *q++ = PF_CATEGORY_IID;
        *q++ = PF_TAG_TYPE;
        *q++ = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
        *q++ = PF_TAG_NAME_IID;
        q = put_varint(q, name_iid);
    } else {
        *q++ = PF_TAG_TYPE;
        *q++ = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    }
    bool named_track = explicit_track(p, ev->thread);
    if (named_track) {
        *q++ = PF_TAG_TRACK_UUID;
        q = put_varint(q, thread_uuid(ev->thread));
    }
    if (has_cpu) {
        *q++ = PF_TAG_COUNTER_VALUE;
        q = put_varint(q, cpu_delta);
        if (named_track) {
            q = put_varint(q, PF_TAG_COUNTER_UUIDS);
            q = put_varint(q, counter_uuid(ev->thread));
        }
    }
    *te_len = (uint8_t)(q - te);
    start[0] = PF_TAG_PACKET;
    start[1] = (uint8_t)(q - start - 2);
    o->len += (size_t)(q - start);
    return TC_OK;
}

/* ---- instants, counters, async slices ---------------------------------------- */

/* A named child of a process track: a counter track or an async track. */
static int write_child_track(tci_wctx *w, uint64_t uuid, uint32_t process, uint32_t method, bool counter,
                             int64_t ts)
{
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    td.has_uuid = 1;
    td.uuid = uuid;
    td.has_parent_uuid = 1;
    td.parent_uuid = process_uuid(process);
    td.name = (char *)w->trace->methods[method].full_name;
    if (counter)
        td.counter = &cd; /* an empty CounterDescriptor: a plain counter track */
    pf_packet pk;
    packet_header(&pk, ts, PF_SEQ_PROCESS, 0);
    pk.track_descriptor = &td;
    return put_packet(w, &pk.base);
}

/* The counter track of (process, name), described now if new; 0: no memory or I/O error in *rc. */
static uint64_t counter_track(tci_wctx *w, uint32_t process, uint32_t method, int64_t ts, int *rc)
{
    pf_w *p = w->priv;
    uint64_t key = (uint64_t)process << 32 | method;
    uint32_t k = tci_idmap_get(&p->counter_tracks, key);
    if (k != TCI_NONE)
        return PF_UUID_COUNTERS + k;
    k = p->n_counter_tracks++;
    if (tci_idmap_put(&p->counter_tracks, key, k) != 0) {
        *rc = TC_ERR_NOMEM;
        return 0;
    }
    *rc = write_child_track(w, PF_UUID_COUNTERS + k, process, method, true, ts);
    return *rc == TC_OK ? PF_UUID_COUNTERS + k : 0;
}

static uint32_t async_slot(const struct pf_async *tab, uint32_t cap, uint32_t process, uint32_t method,
                           uint64_t cookie)
{
    uint64_t h = (cookie ^ ((uint64_t)process << 32 | method) * 0xC2B2AE3D27D4EB4Full) * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & (cap - 1);
    while (tab[i].index1 && !(tab[i].cookie == cookie && tab[i].process == process && tab[i].method == method))
        i = (i + 1) & (cap - 1);
    return i;
}

/* The async track of (process, name, cookie): created and described on a
 * begin; on an end 0 when it never began (*rc stays TC_OK). */
static uint64_t async_track(tci_wctx *w, uint32_t process, const tci_event *ev, int *rc)
{
    pf_w *p = w->priv;
    if (p->async_cap) {
        const struct pf_async *e = &p->async[async_slot(p->async, p->async_cap, process, ev->method, ev->id)];
        if (e->index1)
            return PF_UUID_ASYNC + e->index1 - 1;
    }
    if (ev->kind != TCI_EV_ASYNC_BEGIN)
        return 0;
    if (2 * (p->n_async + 1) > p->async_cap) { /* keep the load at most one half */
        uint32_t cap = p->async_cap ? 2 * p->async_cap : 64;
        struct pf_async *tab = cap > p->async_cap ? tci_calloc(cap, sizeof *tab) : NULL;
        if (!tab) {
            *rc = TC_ERR_NOMEM;
            return 0;
        }
        for (uint32_t i = 0; i < p->async_cap; i++) {
            const struct pf_async *e = &p->async[i];
            if (e->index1)
                tab[async_slot(tab, cap, e->process, e->method, e->cookie)] = *e;
        }
        free(p->async);
        p->async = tab;
        p->async_cap = cap;
    }
    uint32_t k = p->n_async++;
    p->async[async_slot(p->async, p->async_cap, process, ev->method, ev->id)] =
        (struct pf_async){ev->id, process, ev->method, k + 1};
    *rc = write_child_track(w, PF_UUID_ASYNC + k, process, ev->method, false, ev->ts_ns);
    return *rc == TC_OK ? PF_UUID_ASYNC + k : 0;
}

static int pf_event(tci_wctx *w, const tci_event *ev);

/* ---- system events: ftrace bundles --------------------------------------------- */

/* FtraceEvent field numbers of the events we write (upstream's ftrace_event.proto). */
static uint32_t ftrace_field(uint8_t kind)
{
    static const uint16_t fields[TCI_EV_SYS_KINDS] = {
        4,   /* sched_switch */
        20,  /* sched_waking */
        17,  /* sched_wakeup */
        114, /* sched_wakeup_new */
        11,  /* cpu_frequency */
        13,  /* cpu_idle */
        238, /* sched_process_exit */
        236, /* task_rename */
        0,   /* ftrace: the member perfetto_ftrace.c chooses */
    };
    return fields[kind - TCI_EV_SYS_FIRST];
}

static uint8_t *put_int(uint8_t *q, uint32_t field, int64_t v) /* int32/int64: negatives as 10 bytes, as protobuf */
{
    return put_varint(put_tag(q, field, 0), (uint64_t)v);
}
static uint8_t *put_str(uint8_t *q, uint32_t field, const char *s, size_t n)
{
    q = put_varint(put_tag(q, field, 2), n);
    memcpy(q, s, n);
    return q + n;
}

/* A task's comm: its thread's final name; tid 0, the idle task, is the kernel's swapper/CPU. */
static uint8_t *put_comm(uint8_t *q, uint32_t field, const tci_thread *th, uint32_t cpu)
{
    char idle[24];
    if (th->tid == 0) {
        int n = snprintf(idle, sizeof idle, "swapper/%u", cpu);
        return put_str(q, field, idle, (size_t)n);
    }
    return put_str(q, field, th->name, strlen(th->name));
}

/* The kind's message (SchedSwitchFtraceEvent, ...) into q; its length. */
static size_t encode_system(const tci_trace *t, const tci_event *ev, uint8_t *q0)
{
    uint8_t *q = q0;
    uint32_t cpu = tci_sys_cpu(ev->id);
    uint32_t other = tci_sys_other(ev->id);
    const tci_thread *a = &t->threads[ev->thread];
    const tci_thread *b = ev->kind == TCI_EV_CPU_FREQUENCY || ev->kind == TCI_EV_CPU_IDLE ? NULL : &t->threads[other];
    int32_t prio_a = tci_sys_prio_a(ev->cpu_ns), prio_b = tci_sys_prio_b(ev->cpu_ns);
    switch (ev->kind) {
    case TCI_EV_SCHED_SWITCH:
        q = put_comm(q, 1, a, cpu);
        q = put_int(q, 2, (int64_t)a->tid);
        q = put_int(q, 3, prio_a);
        q = put_int(q, 4, tci_sys_prev_state(ev->id));
        q = put_comm(q, 5, b, cpu);
        q = put_int(q, 6, (int64_t)b->tid);
        q = put_int(q, 7, prio_b);
        break;
    case TCI_EV_SCHED_WAKING:
    case TCI_EV_SCHED_WAKEUP:
    case TCI_EV_SCHED_WAKEUP_NEW:
        q = put_comm(q, 1, b, cpu);
        q = put_int(q, 2, (int64_t)b->tid);
        q = put_int(q, 3, prio_a);
        if (prio_b >= 0) /* target_cpu: older kernels did not write it */
            q = put_int(q, 5, prio_b);
        break;
    case TCI_EV_CPU_FREQUENCY:
    case TCI_EV_CPU_IDLE:
        q = put_int(q, 1, (int64_t)(uint32_t)ev->value);
        q = put_int(q, 2, other);
        break;
    case TCI_EV_TASK_EXIT:
        q = put_comm(q, 1, b, cpu);
        q = put_int(q, 2, (int64_t)b->tid);
        q = put_int(q, 3, pid32(t, b->process));
        q = put_int(q, 4, prio_a);
        break;
    default: /* TCI_EV_TASK_RENAME: the name the thread ends with */
        q = put_int(q, 1, (int64_t)b->tid);
        q = put_str(q, 3, b->name, strlen(b->name));
        break;
    }
    return (size_t)(q - q0);
}

/* One CPU's bundle as a packet of the process sequence (no timestamp of its own: TP times
 * ftrace events by theirs). */
static int flush_bundle(tci_wctx *w, uint32_t cpu)
{
    pf_w *p = w->priv;
    struct pf_bundle *b = &p->bundles[cpu];
    if (!b->len)
        return TC_OK;
    uint8_t head[40], *q = head;
    uint8_t bundle_head[8], *bq = put_varint(put_tag(bundle_head, 1, 0), cpu); /* FtraceEventBundle.cpu */
    size_t bundle_len = (size_t)(bq - bundle_head) + b->len;
    uint8_t seq[8], *sq = put_varint(put_tag(seq, 10, 0), PF_SEQ_PROCESS); /* trusted_packet_sequence_id */
    size_t packet_len = (size_t)(sq - seq);
    uint8_t fhead[16], *fq = put_varint(put_tag(fhead, 1, 2), bundle_len); /* TracePacket.ftrace_events */
    packet_len += (size_t)(fq - fhead) + bundle_len;
    *q++ = PF_TAG_PACKET;
    q = put_varint(q, packet_len);
    tci_sink *o = w->out;
    tci_sink_write(o, head, (size_t)(q - head));
    tci_sink_write(o, fhead, (size_t)(fq - fhead));
    tci_sink_write(o, bundle_head, (size_t)(bq - bundle_head));
    tci_sink_write(o, b->buf, b->len);
    tci_sink_write(o, seq, (size_t)(sq - seq));
    b->len = 0;
    return o->err ? TC_ERR_IO : TC_OK;
}

static int flush_bundles(tci_wctx *w)
{
    pf_w *p = w->priv;
    int rc = TC_OK;
    for (uint32_t c = 0; c < p->n_bundles && rc == TC_OK; c++)
        rc = flush_bundle(w, c);
    return rc;
}

/* An FtraceEvent {timestamp, pid, member} appended to the bundle of the event's CPU; member is
 * its oneof's field (tag, length, message). */
static int bundle_event(tci_wctx *w, const tci_event *ev, const uint8_t *member, size_t member_len)
{
    pf_w *p = w->priv;
    uint32_t cpu = tci_sys_cpu(ev->id);
    if (cpu >= p->n_bundles) {
        uint32_t n = cpu + 1;
        struct pf_bundle *nb = realloc(p->bundles, n * sizeof *nb);
        if (!nb)
            return TC_ERR_NOMEM;
        memset(nb + p->n_bundles, 0, (n - p->n_bundles) * sizeof *nb);
        p->bundles = nb;
        p->n_bundles = n;
    }
    uint8_t head[32], *q = head, ev_head[16], *e;
    q = put_varint(put_tag(q, 1, 0), clamp_ts(ev->ts_ns));                 /* FtraceEvent.timestamp */
    q = put_varint(put_tag(q, 2, 0), w->trace->threads[ev->thread].tid);  /* FtraceEvent.pid */
    size_t hn = (size_t)(q - head);
    e = put_varint(put_tag(ev_head, 2, 2), hn + member_len);              /* FtraceEventBundle.event */
    struct pf_bundle *b = &p->bundles[cpu];
    size_t need = b->len + (size_t)(e - ev_head) + hn + member_len;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < need)
            cap *= 2;
        uint8_t *nb = realloc(b->buf, cap);
        if (!nb)
            return TC_ERR_NOMEM;
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, ev_head, (size_t)(e - ev_head));
    b->len += (size_t)(e - ev_head);
    memcpy(b->buf + b->len, head, hn);
    b->len += hn;
    memcpy(b->buf + b->len, member, member_len);
    b->len += member_len;
    return b->len >= PF_BUNDLE_MAX ? flush_bundle(w, cpu) : TC_OK;
}

/* A scheduler event: its kind's message (SchedSwitchFtraceEvent, ...) in its CPU's bundle. */
static int pf_system_event(tci_wctx *w, const tci_event *ev)
{
    pf_w *p = w->priv;
    const tci_trace *t = w->trace;
    /* the kind's message: three names at most, ints of 10 bytes */
    size_t names = strlen(t->threads[ev->thread].name) + strlen(t->threads[tci_sys_other(ev->id) < t->n_threads ?
                                                                           tci_sys_other(ev->id) : ev->thread].name);
    if (ensure_buf(p, 2 * names + 160) != TC_OK)
        return TC_ERR_NOMEM;
    size_t body = encode_system(t, ev, p->buf + 80);
    uint8_t head[16], *h = put_varint(put_tag(head, ftrace_field(ev->kind), 2), body);
    size_t hn = (size_t)(h - head);
    memcpy(p->buf + 80 - hn, head, hn);
    return bundle_event(w, ev, p->buf + 80 - hn, hn + body);
}

/* A kernel symbol's definition, before the first event that names it: a packet of the process
 * sequence with InternedData.kernel_symbols {iid, str} (TP resolves the iid of
 * sched_blocked_reason's caller and workqueue's function there). */
static int write_symbol(void *user, uint64_t iid, const char *text, size_t len)
{
    tci_wctx *w = user;
    uint8_t head[48], *q;
    uint8_t sym[24], *sq = put_varint(put_tag(sym, 1, 0), iid);        /* InternedString.iid */
    uint8_t *sl = put_varint(put_tag(sq, 2, 2), len);                   /* InternedString.str */
    size_t sym_len = (size_t)(sl - sym) + len;
    uint8_t in[16], *iq = put_varint(put_tag(in, 26, 2), sym_len);      /* InternedData.kernel_symbols */
    size_t in_len = (size_t)(iq - in) + sym_len;
    uint8_t seq[8], *qq = put_varint(put_tag(seq, 10, 0), PF_SEQ_PROCESS); /* trusted_packet_sequence_id */
    uint8_t pin[16], *pq = put_varint(put_tag(pin, 12, 2), in_len);     /* TracePacket.interned_data */
    size_t packet_len = (size_t)(qq - seq) + (size_t)(pq - pin) + in_len;
    q = head;
    *q++ = PF_TAG_PACKET;
    q = put_varint(q, packet_len);
    tci_sink *o = w->out;
    tci_sink_write(o, head, (size_t)(q - head));
    tci_sink_write(o, seq, (size_t)(qq - seq));
    tci_sink_write(o, pin, (size_t)(pq - pin));
    tci_sink_write(o, in, (size_t)(iq - in));
    tci_sink_write(o, sym, (size_t)(sl - sym));
    tci_sink_write(o, text, len);
    return o->err ? TC_ERR_IO : TC_OK;
}

/* Any other kernel event: the message upstream has for it, or a generic one (perfetto_ftrace.c). */
static int pf_kernel_event(tci_wctx *w, const tci_event *ev)
{
    pf_w *p = w->priv;
    if (!p->ft && !(p->ft = tci_pf_ftrace_new(w->trace, write_symbol, w)))
        return TC_ERR_NOMEM;
    size_t len;
    int rc;
    const uint8_t *member = tci_pf_ftrace_event(p->ft, ev, &len, &rc);
    if (!member)
        return rc;
    tci_sys_text_release(w->trace, ev->id & (TCI_SYS_TEXT_MAX - 1), &p->text_released);
    return bundle_event(w, ev, member, len);
}

/* ---- sampled stacks ------------------------------------------------------------- */

/* A sampled stack (a CPU profile's, perf's) as Perfetto's profilers write one: a PerfSample
 * {cpu, pid, tid, callstack_iid} packet of the samples' own sequence, at the sample's time; the
 * callstack (its frames root first), its frames and their names are interned on that sequence
 * the first time a sample names them, in the sample's packet (InternedData callstacks, frames,
 * function_names; frames with no mapping, which TP gives its dummy mapping). TP shows them as
 * the thread's samples, with a flame graph of any selection of them. */
static bool bit(const uint64_t *set, uint32_t i) { return set[i / 64] >> (i % 64) & 1; }
static void set_bit(uint64_t *set, uint32_t i) { set[i / 64] |= (uint64_t)1 << (i % 64); }

static int sample_state(tci_wctx *w)
{
    pf_w *p = w->priv;
    const tci_trace *t = w->trace;
    if (p->sample_seq)
        return TC_OK;
    p->stack_done = tci_calloc((t->n_stacks + 63) / 64 + 1, sizeof *p->stack_done);
    p->frame_done = tci_calloc((t->n_methods + 63) / 64 + 1, sizeof *p->frame_done);
    if (!p->stack_done || !p->frame_done)
        return TC_ERR_NOMEM;
    p->sample_seq = PF_SEQ_SHARED + t->n_threads + 1; /* past every thread's own (3 + i) */
    return TC_OK;
}

/* InternedData's member `field` {iid, str} (an InternedString) at q. */
static uint8_t *put_interned_string(uint8_t *q, uint32_t field, uint64_t iid, const char *s, size_t n)
{
    uint8_t body[16], *b = put_varint(put_tag(body, 1, 0), iid);
    b = put_varint(put_tag(b, 2, 2), n);
    q = put_varint(put_tag(q, field, 2), (size_t)(b - body) + n);
    memcpy(q, body, (size_t)(b - body));
    q += b - body;
    memcpy(q, s, n);
    return q + n;
}

static int pf_sample(tci_wctx *w, const tci_event *ev)
{
    pf_w *p = w->priv;
    const tci_trace *t = w->trace;
    if (ev->id >= t->n_stacks)
        return TC_OK; /* normalize lets no such sample through */
    int rc = sample_state(w);
    if (rc != TC_OK)
        return rc;
    uint32_t stack = (uint32_t)ev->id, depth = 0;
    size_t names = 0;
    bool first = !bit(p->stack_done, stack);
    if (first) { /* its frames, leaf first, and the room their names take */
        for (uint32_t s = stack; s != TCI_NONE; s = t->stacks[s].parent) {
            if (depth >= p->cap_path && tci_grow((void **)&p->path, &p->cap_path, depth, sizeof *p->path) != 0)
                return TC_ERR_NOMEM;
            p->path[depth++] = t->stacks[s].method;
            if (!bit(p->frame_done, t->stacks[s].method))
                names += strlen(t->methods[t->stacks[s].method].full_name) + 48;
        }
    }
    if (ensure_buf(p, 128 + names + (size_t)depth * 16) != TC_OK)
        return TC_ERR_NOMEM;
    uint8_t *q = p->buf + 16, *in_start;
    const tci_thread *th = &t->threads[ev->thread];
    q = put_varint(put_tag(q, 8, 0), clamp_ts(ev->ts_ns));                       /* timestamp */
    q = put_varint(put_tag(q, 10, 0), p->sample_seq);                             /* trusted_packet_sequence_id */
    q = put_varint(put_tag(q, 13, 0), p->samples_begun ? PF_FLAG_NEEDS : PF_FLAG_CLEARED); /* sequence_flags */
    p->samples_begun = true;
    uint8_t sample[48], *sq = sample;
    sq = put_varint(put_tag(sq, 1, 0), 0);                                        /* cpu: not in the input */
    sq = put_varint(put_tag(sq, 2, 0), (uint64_t)(uint32_t)pid32(t, th->process)); /* pid */
    sq = put_varint(put_tag(sq, 3, 0), th->tid);                                  /* tid */
    sq = put_varint(put_tag(sq, 4, 0), (uint64_t)stack + 1);                      /* callstack_iid */
    q = put_varint(put_tag(q, 66, 2), (size_t)(sq - sample));                    /* TracePacket.perf_sample */
    memcpy(q, sample, (size_t)(sq - sample));
    q += sq - sample;
    if (first) { /* InternedData: the new names and frames, then the callstack, root first */
        uint8_t *len_at = put_tag(q, 12, 2);                                      /* TracePacket.interned_data */
        in_start = q = len_at + 5;
        for (uint32_t k = depth; k-- > 0;) {
            uint32_t m = p->path[k];
            if (bit(p->frame_done, m))
                continue;
            set_bit(p->frame_done, m);
            const char *name = t->methods[m].full_name; /* as the timeline's slices name it */
            q = put_interned_string(q, 5, (uint64_t)m + 1, name, strlen(name)); /* function_names */
            uint8_t fr[24], *fq = put_varint(put_tag(fr, 1, 0), (uint64_t)m + 1); /* Frame.iid */
            fq = put_varint(put_tag(fq, 2, 0), (uint64_t)m + 1);                 /* Frame.function_name_id */
            q = put_varint(put_tag(q, 6, 2), (size_t)(fq - fr));                  /* InternedData.frames */
            memcpy(q, fr, (size_t)(fq - fr));
            q += fq - fr;
        }
        uint8_t *cs_len = put_tag(q, 7, 2), *cs = cs_len + 5, *c = cs;           /* InternedData.callstacks */
        c = put_varint(put_tag(c, 1, 0), (uint64_t)stack + 1);                    /* Callstack.iid */
        for (uint32_t k = depth; k-- > 0;)
            c = put_varint(put_tag(c, 2, 0), (uint64_t)p->path[k] + 1);           /* frame_ids, root first */
        size_t cn = (size_t)(c - cs);
        uint8_t *e = put_varint(cs_len, cn);
        memmove(e, cs, cn);
        q = e + cn;
        size_t in_len = (size_t)(q - in_start);
        e = put_varint(len_at, in_len);
        memmove(e, in_start, in_len);
        q = e + in_len;
        set_bit(p->stack_done, stack);
    }
    size_t len = (size_t)(q - (p->buf + 16));
    uint8_t head[12], *h = head;
    *h++ = PF_TAG_PACKET;
    h = put_varint(h, len);
    tci_sink_write(w->out, head, (size_t)(h - head));
    tci_sink_write(w->out, p->buf + 16, len);
    return w->out->err ? TC_ERR_IO : TC_OK;
}

/* Everything but slice begin/end: rare, so built from scratch, off the hot path. */
static int pf_point_event(tci_wctx *w, const tci_event *ev)
{
    pf_w *p = w->priv;
    uint32_t process = w->trace->threads[ev->thread].process;
    static uint64_t cat_iids[1] = {PF_CATEGORY_IID};
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    te.has_type = 1;
    te.n_category_iids = 1;
    te.category_iids = cat_iids;
    int rc = TC_OK;
    bool named = false;
    switch (ev->kind) {
    case TCI_EV_INSTANT: /* on the thread track: the sequence's default, else named */
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
        named = true;
        te.has_track_uuid = explicit_track(p, ev->thread);
        te.track_uuid = thread_uuid(ev->thread);
        break;
    case TCI_EV_COUNTER:
        if (!isfinite(ev->value)) {
            p->bad_counters++;
            return TC_OK;
        }
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
        te.has_double_counter_value = 1;
        te.double_counter_value = ev->value;
        if (!(te.track_uuid = counter_track(w, process, ev->method, ev->ts_ns, &rc)))
            return rc;
        te.has_track_uuid = 1;
        break;
    case TCI_EV_ASYNC_BEGIN:
    case TCI_EV_ASYNC_END:
        if (!(te.track_uuid = async_track(w, process, ev, &rc))) {
            p->lone_async_ends += rc == TC_OK;
            return rc;
        }
        te.has_track_uuid = 1;
        named = ev->kind == TCI_EV_ASYNC_BEGIN;
        te.type = named ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
                        : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
        te.n_category_iids = named; /* an end needs no category, as for slices */
        break;
    default:
        return pf_sample(w, ev);
    }
    bool intern = false;
    if (named) {
        te.has_name_iid = 1;
        if (!(te.name_iid = thread_iid(w, ev->thread, ev->method, &intern)))
            return TC_ERR_NOMEM;
    }
    pf_packet pk;
    thread_packet_header(p, &pk, ev->thread, ev->ts_ns, PF_FLAG_NEEDS);
    pk.track_event = &te;
    return put_event_extras(w, ev, &pk, intern);
}

/* A slice begin or end whose packet carries strings: built with protobuf-c. */
static int put_slice_extras(tci_wctx *w, const tci_event *ev, uint32_t name_iid, bool intern, bool has_cpu,
                            int64_t cpu_delta)
{
    static uint64_t cat_iids[1] = {PF_CATEGORY_IID};
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    te.has_type = 1;
    te.type = name_iid ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
                       : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    if (name_iid) {
        te.n_category_iids = 1;
        te.category_iids = cat_iids;
        te.has_name_iid = 1;
        te.name_iid = name_iid;
    }
    te.n_extra_counter_values = has_cpu;
    te.extra_counter_values = &cpu_delta;
    uint64_t cu = counter_uuid(ev->thread);
    if (explicit_track(w->priv, ev->thread)) {
        te.has_track_uuid = 1;
        te.track_uuid = thread_uuid(ev->thread);
        te.n_extra_counter_track_uuids = has_cpu;
        te.extra_counter_track_uuids = &cu;
    }
    pf_packet pk;
    thread_packet_header(w->priv, &pk, ev->thread, ev->ts_ns, 0);
    pk.track_event = &te;
    return put_event_extras(w, ev, &pk, intern);
}

static unsigned varint_len(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* What a slice event of a thread on the shared sequence pays for being there:
 * its track and counter uuids, and a time that could not be a delta because
 * another thread's event moved the clock past it (about 10 bytes more). */
static uint64_t shared_rent(const pf_w *p, uint32_t thread, bool has_cpu)
{
    uint64_t rent = p->last_absolute ? 10 : 0;
    if (explicit_track(p, thread)) {
        rent += 1 + varint_len(thread_uuid(thread));
        if (has_cpu)
            rent += 2 + varint_len(counter_uuid(thread));
    }
    return rent;
}

static int pf_event(tci_wctx *w, const tci_event *ev)
{
    pf_w *p = w->priv;
    const tci_trace *t = w->trace;
    if (ev->kind != TCI_EV_ENTER && ev->kind != TCI_EV_EXIT)
        return TCI_UNLIKELY(tci_event_is_system(ev->kind))
                   ? (ev->kind == TCI_EV_FTRACE ? pf_kernel_event(w, ev) : pf_system_event(w, ev))
                   : pf_point_event(w, ev);
    if (ev->depth >= PF_MAX_DEPTH) {
        p->dropped++;
        return TC_OK;
    }
    bool has_cpu = t->has_cpu && ev->cpu_ns != TCI_NO_TIME;
    int64_t cpu_delta = 0;
    if (has_cpu) {
        /* a constant divisor compiles to a multiply: ART's µs is the common case */
        int64_t now = p->cpu_unit == 1000 ? ev->cpu_ns / 1000 : ev->cpu_ns / p->cpu_unit;
        cpu_delta = now - p->last_cpu[ev->thread]; /* never negative: normalize keeps CPU monotonic */
        p->last_cpu[ev->thread] = now;
    }
    /* END needs no name (TP pops the top slice); BEGIN names the slice by iid. */
    bool intern = false;
    uint32_t name_iid = 0;
    if (ev->kind == TCI_EV_ENTER && !(name_iid = thread_iid(w, ev->thread, ev->method, &intern)))
        return TC_ERR_NOMEM;
    int rc = TCI_UNLIKELY(intern || ev->flags) ? put_slice_extras(w, ev, name_iid, intern, has_cpu, cpu_delta)
                                               : put_slice(w, ev, name_iid, has_cpu, (uint64_t)cpu_delta);
    if (rc != TC_OK || p->seq_of[ev->thread])
        return rc;
    return charge_shared(w, ev->thread, shared_rent(p, ev->thread, has_cpu));
}

/* ---- trace-level facts -------------------------------------------------- */

#define PF_MAX_FACTS (8 + TCI_FIG__COUNT)

typedef struct pf_facts {
    Perfetto__Protos__DebugAnnotation a[PF_MAX_FACTS];
    Perfetto__Protos__DebugAnnotation *ptr[PF_MAX_FACTS];
    size_t n;
} pf_facts;

static Perfetto__Protos__DebugAnnotation *fact(pf_facts *f, const char *name)
{
    Perfetto__Protos__DebugAnnotation init = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
    Perfetto__Protos__DebugAnnotation *a = &f->a[f->n];
    *a = init;
    a->name = (char *)name;
    f->ptr[f->n++] = a;
    return a;
}

static void fact_str(pf_facts *f, const char *name, const char *value)
{
    fact(f, name)->string_value = (char *)value;
}

static void fact_int(pf_facts *f, const char *name, int64_t v)
{
    Perfetto__Protos__DebugAnnotation *a = fact(f, name);
    a->has_int_value = 1;
    a->int_value = v;
}

/* One instant on the process track at the trace start whose args are the
 * facts a user needs to trust the view: where it came from, which clock, and
 * what the conversion had to repair or drop. */
static int write_facts(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    const char *input = t->input_name ? t->input_name : "-";
    char title[256], format[TCI_FORMAT_TEXT_MAX];
    snprintf(title, sizeof title, "traceconv: %s", input);
    tci_trace_format(t, format, sizeof format);
    pf_facts f = {.n = 0};
    fact_str(&f, "generator", "traceconv " TC_VERSION_STRING);
    fact_str(&f, "input", input);
    fact_str(&f, "format", format);
    fact_str(&f, "clock", tci_clock_name(t->clock));
    if (t->vm)
        fact_str(&f, "vm", t->vm);
    fact_int(&f, "start_time_ns", t->start_ns);
    if (!t->has_wall)
        fact_str(&f, "timeline", "thread CPU time (the input has no wall clock)");
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection it was made with, named as the options are */
    if (tci_selection_text(w->opt, NULL, sel, sizeof sel))
        fact_str(&f, "selection", sel);
    for (int i = 0; i < TCI_FIG__COUNT; i++) {
        if (w->diag->fig[i] && i != TCI_FIG_EVENTS)
            fact_int(&f, tci_figure_name(i), (int64_t)w->diag->fig[i]);
    }
    static char *cats[1] = {"traceconv"};
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    te.has_type = 1;
    te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
    te.has_track_uuid = 1;
    te.track_uuid = PF_UUID_PROCESS;
    te.n_categories = 1;
    te.categories = cats;
    te.name = title;
    te.n_debug_annotations = f.n;
    te.debug_annotations = f.ptr;
    pf_packet pk;
    packet_header(&pk, t->start_ns, PF_SEQ_PROCESS, 0);
    pk.track_event = &te;
    return put_packet(w, &pk.base);
}

static int pf_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    pf_w *p = w->priv;
    tci_writer_dropped(w, p->dropped, "events deeper than 500 levels dropped (Perfetto keeps 512)");
    tci_writer_dropped(w, p->bad_counters, "counter values that are not finite numbers not written");
    tci_writer_dropped(w, p->lone_async_ends, "async slice ends without a begin not written");
    tci_pf_ftrace_report(p->ft, w);
    int rc = flush_bundles(w);
    return rc == TC_OK ? write_facts(w) : rc;
}

static void pf_close(tci_wctx *w)
{
    pf_w *p = w->priv;
    if (!p)
        return;
    free(p->buf);
    if (p->iid) {
        for (uint32_t i = 0; i <= w->trace->n_threads; i++) /* the shared sequence and one per thread */
            free(p->iid[i]);
        free(p->iid);
    }
    free(p->next_iid);
    free(p->notes);
    free(p->seq_of);
    free(p->share);
    free(p->seen);
    tci_idmap_free(&p->seen_map);
    free(p->last_cpu);
    free(p->last_ts);
    tci_idmap_free(&p->interned);
    tci_idmap_free(&p->counter_tracks);
    free(p->async);
    for (uint32_t c = 0; c < p->n_bundles; c++)
        free(p->bundles[c].buf);
    free(p->bundles);
    tci_pf_ftrace_free(p->ft);
    free(p->stack_done);
    free(p->frame_done);
    free(p->path);
}

const tci_writer tci_writer_perfetto = {
    .name = "perfetto",
    .description = "Perfetto protobuf trace (ui.perfetto.dev, trace processor)",
    .extensions = "pftrace",
    .variants = (const tci_variant[]){{.name = "perfetto", .extension = "pftrace",
                                       .mime = "application/octet-stream", .aliases = "pftrace,perfetto-trace"}, {0}},
    .priv_size = sizeof(pf_w),
    .flags = TCI_WF_BINARY | TCI_WF_SYSTEM,
    .begin = pf_begin,
    .event = pf_event,
    .finish = pf_finish,
    .close = pf_close,
};
