/*
 * perfetto.c - Perfetto protobuf trace (shared/docs/outputs/PERFETTO-PROTO.md),
 * the format ui.perfetto.dev and trace processor read natively.
 *
 * A file is a bare sequence of TracePackets, each framed as field 1 of Trace
 * (0x0A, varint length, bytes). We stream: every packet is packed with
 * protobuf-c into one reusable buffer and written at once, so memory grows
 * with the interning tables (methods used per thread), never with events.
 *
 * Layout and the importer quirks it answers:
 *  - sequence 1 holds the process track (pid, process name) and, written at
 *    finish(), one TYPE_INSTANT event "traceconv: <input>" on the process
 *    track at the trace start whose debug annotations carry the trace-level
 *    facts: input file, format and version, clock, vm, start time, timeline
 *    note for thread-CPU-only inputs, and every non-zero warning/repair count
 *    (args "debug.*" in the UI's slice details).
 *  - every thread gets its own packet sequence (2 + thread index). Its first
 *    packet describes the thread track (no parent_uuid: TP wants root thread
 *    tracks), clears incremental state, interns category "art" (iid 1) and sets
 *    TrackEventDefaults {track_uuid, extra_counter_track_uuids}, so each event
 *    only carries type, category iid, name iid and its thread CPU value.
 *  - thread CPU time (dual-clock input): a COUNTER_THREAD_TIME_NS child track
 *    per thread fed by extra_counter_values on every BEGIN and END; TP then
 *    fills thread_ts/thread_dur. Perfetto's own ART importer drops it.
 *  - names are interned per sequence the first time a method appears on that
 *    thread (iid = method index + 1), with a source location (file, line)
 *    when the input has one; later events carry only the iid.
 *  - timestamps are absolute ns without timestamp_clock_id: TP takes them as
 *    its default clock and needs no ClockSnapshot.
 *  - TP keeps 512 nesting levels and then ends outer slices too early, so we
 *    drop every event at depth >= 500 (the stream is well nested per thread,
 *    so what remains still balances) and report the count.
 *  - frames made by the conversion rules carry a "synthetic" annotation.
 */
#include "tc_internal.h"

#include "perfetto_trace_subset.pb-c.h"

#include <stdio.h>
#include <stdlib.h>

#define PF_MAX_DEPTH 500     /* TP's limit is 512; keep a margin */
#define PF_SEQ_PROCESS 1u
#define PF_CATEGORY_IID 1u
#define PF_UUID_PROCESS 1u
#define PF_FLAG_CLEARED 1u   /* SEQ_INCREMENTAL_STATE_CLEARED */
#define PF_FLAG_NEEDS 2u     /* SEQ_NEEDS_INCREMENTAL_STATE */
/* An event packet without strings packs to well under this many bytes. */
#define PF_SMALL_PACKET 128u
#define PF_BITS_MAX (16u << 20)

typedef Perfetto__Protos__TracePacket pf_packet;

typedef struct pf_w {
    uint8_t *buf;          /* the reusable pack buffer */
    size_t cap;
    /* "named on this thread's sequence yet?": a bit per (thread, method) when
     * that fits PF_BITS_MAX bytes (the hot path is one load), else a hash set. */
    uint8_t **seen;        /* per thread: n_methods bits, NULL if the thread has no events */
    tci_idmap interned;    /* fallback: (thread << 32 | method) -> 1 */
    uint64_t dropped;      /* events deeper than PF_MAX_DEPTH */
} pf_w;

/* Track uuids: thread i -> 2i+2, its CPU-time counter -> 2i+3; 1 is the process. */
static uint64_t thread_uuid(uint32_t thread) { return 2 * (uint64_t)thread + 2; }
static uint64_t counter_uuid(uint32_t thread) { return 2 * (uint64_t)thread + 3; }
static uint32_t thread_seq(uint32_t thread) { return thread + 2; }

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

/* Frame one packet as Trace.packet (field 1, LEN) and write it. small: the
 * caller knows it packs within PF_SMALL_PACKET bytes, so the size pass of
 * protobuf-c (a second walk over the message) is skipped on the hot path. */
static int put_packet(tci_wctx *w, const pf_packet *pk, bool small)
{
    pf_w *p = w->priv;
    size_t need = small ? PF_SMALL_PACKET : protobuf_c_message_get_packed_size(&pk->base);
    if (ensure_buf(p, need) != TC_OK)
        return TC_ERR_NOMEM;
    size_t len = protobuf_c_message_pack(&pk->base, p->buf);
    uint8_t hdr[11];
    size_t h = 0;
    hdr[h++] = 0x0A;
    for (uint64_t v = len; ; v >>= 7) {
        hdr[h++] = (uint8_t)(v < 0x80 ? v : (v & 0x7F) | 0x80);
        if (v < 0x80)
            break;
    }
    tci_sink_write(w->out, hdr, h);
    tci_sink_write(w->out, p->buf, len);
    return w->out->err ? TC_ERR_IO : TC_OK;
}

static int32_t pid32(const tci_trace *t)
{
    return t->pid >= 0 && t->pid <= INT32_MAX ? (int32_t)t->pid : 0;
}

static int write_process(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    Perfetto__Protos__ProcessDescriptor proc = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    proc.has_pid = 1;
    proc.pid = pid32(t);
    proc.process_name = (char *)t->process_name;
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    td.has_uuid = 1;
    td.uuid = PF_UUID_PROCESS;
    td.process = &proc;
    pf_packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pk.has_timestamp = 1;
    pk.timestamp = clamp_ts(t->start_ns);
    pk.has_trusted_packet_sequence_id = 1;
    pk.trusted_packet_sequence_id = PF_SEQ_PROCESS;
    pk.has_sequence_flags = 1;
    pk.sequence_flags = PF_FLAG_CLEARED;
    pk.has_first_packet_on_sequence = 1;
    pk.first_packet_on_sequence = 1;
    pk.track_descriptor = &td;
    return put_packet(w, &pk, false);
}

/* First packet of a thread's sequence: its track, cleared state, the category
 * and the defaults that keep every later event packet small. */
static int write_thread(tci_wctx *w, uint32_t i)
{
    const tci_trace *t = w->trace;
    Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    th.has_pid = 1;
    th.pid = pid32(t);
    th.has_tid = 1;
    th.tid = (int64_t)t->threads[i].tid;
    th.thread_name = (char *)t->threads[i].name;
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    td.has_uuid = 1;
    td.uuid = thread_uuid(i);
    td.thread = &th;

    Perfetto__Protos__EventCategory cat = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
    cat.has_iid = 1;
    cat.iid = PF_CATEGORY_IID;
    cat.name = "art";
    Perfetto__Protos__EventCategory *cats[1] = {&cat};
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    in.n_event_categories = 1;
    in.event_categories = cats;

    uint64_t cu = counter_uuid(i);
    Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
    ted.has_track_uuid = 1;
    ted.track_uuid = thread_uuid(i);
    if (t->has_cpu) {
        ted.n_extra_counter_track_uuids = 1;
        ted.extra_counter_track_uuids = &cu;
    }
    Perfetto__Protos__TracePacketDefaults def = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
    def.track_event_defaults = &ted;

    pf_packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pk.has_timestamp = 1;
    pk.timestamp = clamp_ts(t->start_ns);
    pk.has_trusted_packet_sequence_id = 1;
    pk.trusted_packet_sequence_id = thread_seq(i);
    pk.has_sequence_flags = 1;
    pk.sequence_flags = PF_FLAG_CLEARED | PF_FLAG_NEEDS;
    pk.has_first_packet_on_sequence = 1;
    pk.first_packet_on_sequence = 1;
    pk.track_descriptor = &td;
    pk.interned_data = &in;
    pk.trace_packet_defaults = &def;
    int rc = put_packet(w, &pk, false);
    if (rc != TC_OK || !t->has_cpu)
        return rc;

    /* The thread-time counter is a child of the thread track (parent_uuid is
     * right here: only process and thread tracks must be roots). */
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    cd.has_type = 1;
    cd.type = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS;
    Perfetto__Protos__TrackDescriptor ctd = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    ctd.has_uuid = 1;
    ctd.uuid = cu;
    ctd.has_parent_uuid = 1;
    ctd.parent_uuid = thread_uuid(i);
    ctd.counter = &cd;
    pf_packet cp = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    cp.has_timestamp = 1;
    cp.timestamp = clamp_ts(t->start_ns);
    cp.has_trusted_packet_sequence_id = 1;
    cp.trusted_packet_sequence_id = thread_seq(i);
    cp.has_sequence_flags = 1;
    cp.sequence_flags = PF_FLAG_NEEDS;
    cp.track_descriptor = &ctd;
    return put_packet(w, &cp, false);
}

static int alloc_seen(pf_w *p, const tci_trace *t)
{
    uint64_t active = 0, row = ((uint64_t)t->n_methods + 7) / 8;
    for (uint32_t i = 0; i < t->n_threads; i++)
        active += t->threads[i].records != 0;
    if (active * row > PF_BITS_MAX)
        return TC_OK; /* the hash set takes over */
    if (!(p->seen = tci_calloc(t->n_threads ? t->n_threads : 1, sizeof *p->seen)))
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        if (t->threads[i].records && !(p->seen[i] = tci_calloc(row ? row : 1, 1)))
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

/* True the first time a method is named on a thread's sequence. */
static int first_use(pf_w *p, uint32_t thread, uint32_t method)
{
    if (p->seen && p->seen[thread]) {
        uint8_t *b = &p->seen[thread][method >> 3], bit = (uint8_t)(1u << (method & 7));
        if (*b & bit)
            return 0;
        *b |= bit;
        return 1;
    }
    uint64_t key = (uint64_t)thread << 32 | method;
    if (tci_idmap_get(&p->interned, key) != TCI_NONE)
        return 0;
    return tci_idmap_put(&p->interned, key, 1) != 0 ? -1 : 1;
}

static int pf_begin(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    int rc = alloc_seen(w->priv, t);
    if (rc == TC_OK)
        rc = write_process(w);
    for (uint32_t i = 0; rc == TC_OK && i < t->n_threads; i++) {
        if (t->threads[i].records)
            rc = write_thread(w, i);
    }
    return rc;
}

/* Why a frame's begin or end is not a plain enter/exit of the input. */
static const char *event_note(const tci_event *ev, const char **key)
{
    *key = "synthetic";
    if (ev->flags & TCI_EVF_SYNTHETIC)
        return ev->kind == TCI_EV_ENTER ? "open when tracing began" : "open when tracing ended";
    *key = "exit";
    if (ev->flags & TCI_EVF_UNWIND)
        return "exception unwind";
    if (ev->flags & TCI_EVF_FORCED)
        return "closed by the exit of a caller";
    return NULL;
}

/* The rare packet that carries strings: a name interned on first use and/or
 * a note on how the conversion made the frame. Kept out of pf_event so the
 * common packet builds only two small messages. */
static int put_event_extras(tci_wctx *w, const tci_event *ev, pf_packet *pk, bool intern)
{
    const tci_method *m = &w->trace->methods[ev->method];
    uint64_t iid = (uint64_t)ev->method + 1;
    Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventName *ens[1] = {&en};
    Perfetto__Protos__SourceLocation sl = PERFETTO__PROTOS__SOURCE_LOCATION__INIT;
    Perfetto__Protos__SourceLocation *sls[1] = {&sl};
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    if (intern) {
        en.has_iid = 1;
        en.iid = iid;
        en.name = (char *)m->full_name;
        in.n_event_names = 1;
        in.event_names = ens;
        if (m->file) {
            sl.has_iid = 1;
            sl.iid = iid;
            sl.file_name = (char *)m->file;
            sl.function_name = (char *)m->full_name;
            if (m->line >= 0) {
                sl.has_line_number = 1;
                sl.line_number = (uint32_t)m->line;
            }
            in.n_source_locations = 1;
            in.source_locations = sls;
        }
        pk->interned_data = &in;
    }
    Perfetto__Protos__DebugAnnotation da = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
    Perfetto__Protos__DebugAnnotation *das[1] = {&da};
    const char *key;
    const char *note = ev->flags ? event_note(ev, &key) : NULL;
    if (note) {
        da.name = (char *)key;
        da.string_value = (char *)note;
        pk->track_event->n_debug_annotations = 1;
        pk->track_event->debug_annotations = das;
    }
    return put_packet(w, pk, false);
}

static int pf_event(tci_wctx *w, const tci_event *ev)
{
    pf_w *p = w->priv;
    const tci_trace *t = w->trace;
    if (ev->depth >= PF_MAX_DEPTH) {
        p->dropped++;
        return TC_OK;
    }
    static uint64_t cat_iids[1] = {PF_CATEGORY_IID};
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    te.has_type = 1;
    te.type = ev->kind == TCI_EV_ENTER ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
                                       : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    te.n_category_iids = 1;
    te.category_iids = cat_iids;
    int64_t cpu = ev->cpu_ns;
    if (t->has_cpu && cpu != TCI_NO_TIME) {
        te.n_extra_counter_values = 1;
        te.extra_counter_values = &cpu;
    }
    pf_packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pk.has_timestamp = 1;
    pk.timestamp = clamp_ts(ev->ts_ns);
    pk.has_trusted_packet_sequence_id = 1;
    pk.trusted_packet_sequence_id = thread_seq(ev->thread);
    pk.has_sequence_flags = 1;
    pk.sequence_flags = PF_FLAG_NEEDS;
    pk.track_event = &te;

    /* END needs no name (TP pops the top slice); BEGIN names the slice by iid. */
    int intern = 0;
    if (ev->kind == TCI_EV_ENTER) {
        te.has_name_iid = 1;
        te.name_iid = (uint64_t)ev->method + 1;
        if (t->methods[ev->method].file) {
            te.has_source_location_iid = 1;
            te.source_location_iid = te.name_iid;
        }
        if ((intern = first_use(p, ev->thread, ev->method)) < 0)
            return TC_ERR_NOMEM;
    }
    if (TCI_UNLIKELY(intern || ev->flags))
        return put_event_extras(w, ev, &pk, intern);
    return put_packet(w, &pk, true);
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
    static const char *fig_names[] = {
#define FIG(id, name, kind) name,
        TCI_FIGURES(FIG)
#undef FIG
    };
    const char *input = t->input_name ? t->input_name : "-";
    char title[256], format[160];
    snprintf(title, sizeof title, "traceconv: %s", input);
    snprintf(format, sizeof format, "%s %s", t->reader ? t->reader : "?", t->detail);
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
    for (int i = 0; i < TCI_FIG__COUNT; i++) {
        if (w->diag->fig[i] && i != TCI_FIG_EVENTS)
            fact_int(&f, fig_names[i], (int64_t)w->diag->fig[i]);
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
    pf_packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pk.has_timestamp = 1;
    pk.timestamp = clamp_ts(t->start_ns);
    pk.has_trusted_packet_sequence_id = 1;
    pk.trusted_packet_sequence_id = PF_SEQ_PROCESS;
    pk.track_event = &te;
    return put_packet(w, &pk, false);
}

static int pf_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    pf_w *p = w->priv;
    if (p->dropped) {
        /* diag is muted in pass 2, so the count is set here, not through tci_warn */
        w->diag->fig[TCI_FIG_WRITER_DROPPED] += p->dropped;
        bool muted = w->diag->muted;
        w->diag->muted = false;
        tci_warn(w->diag, TCI_FIG_WRITER_DROPPED, "perfetto", UINT64_MAX,
                 "%llu events deeper than %d levels dropped (Perfetto keeps 512)",
                 (unsigned long long)p->dropped, PF_MAX_DEPTH);
        w->diag->fig[TCI_FIG_WRITER_DROPPED] -= 1; /* tci_warn counted one more */
        w->diag->muted = muted;
    }
    return write_facts(w);
}

static void pf_close(tci_wctx *w)
{
    pf_w *p = w->priv;
    if (!p)
        return;
    free(p->buf);
    if (p->seen) {
        for (uint32_t i = 0; i < w->trace->n_threads; i++)
            free(p->seen[i]);
        free(p->seen);
    }
    tci_idmap_free(&p->interned);
}

const tci_writer tci_writer_perfetto = {
    .name = "perfetto",
    .description = "Perfetto protobuf trace (ui.perfetto.dev, trace processor)",
    .extensions = "pftrace",
    .priv_size = sizeof(pf_w),
    .begin = pf_begin,
    .event = pf_event,
    .finish = pf_finish,
    .close = pf_close,
};
