/*
 * pftrace.c - a Perfetto trace that carries ART method data (ART.md §11): the
 * TracePacket `art_method_trace_long_running` that newer ART writes when it
 * traces through Perfetto (art/perfetto_method_trace/), a message with
 * `payload` (bytes: a long-running dump in the SLOW 0xF6 form, decoded by
 * src/parsers/artlr.c) and `process_name` (string); the process is the
 * packet's `trusted_pid` (TracePacket field 79, int32: perfetto
 * protos/perfetto/trace/trace_packet.proto).
 *
 * The field numbers of art_method_trace_long_running in TracePacket, and of
 * payload and process_name inside it, are not in the Perfetto sources we have
 * (snapshot of 2026-08-22), so such a packet is found by its content: a
 * length-delimited field of the TracePacket that parses as a message holding a
 * bytes field that starts with "SLOW" + u16 0x00F6 (the payload); a string
 * field beside it, the first that is not the payload, is the process name.
 * No field number is assumed (tracegen writes them under placeholder numbers,
 * and the tests use two different ones).
 *
 * Only a trace holding at least one such packet is this reader's input: the
 * probe walks the top-level packets by their lengths (a Trace is `repeated
 * TracePacket packet = 1`), so traceconv's own .pftrace (no such packet) is
 * never claimed and stays replaceable. Each payload becomes threads of the
 * process trusted_pid; each process has its own map of method pointers, since
 * two processes' ArtMethod* values may coincide (and a pointer uses all 64
 * bits: no key packs a process index with it).
 *
 * Every other packet is read and converts to nothing: each is counted as not converted (pass
 * 1), by the name of its data field (track_event, ftrace_events, ...: packet_kinds), else by
 * what it holds ("TracePacket field 1001", interned_data, "packet without data"); so are a
 * top-level field that is no packet ("Trace field N") and a second dump in one packet.
 */
#include "tc_artlr.h"
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE "pftrace"
#define TRACE_PACKET 1   /* Trace.packet */
#define TRUSTED_PID 79   /* TracePacket.trusted_pid */
enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* TracePacket's `oneof data` (third_party/perfetto/perfetto_trace.proto), by field number: a
 * packet that carries no dump is counted as not converted under the name of its data field
 * (test_accounting.py checks this table against the schema). */
static const struct packet_kind {
    uint16_t field;
    const char *name;
} packet_kinds[] = {
    {1, "ftrace_events"}, {2, "process_tree"}, {4, "inode_file_map"}, {5, "chrome_events"},
    {6, "clock_snapshot"}, {7, "sys_stats"}, {9, "process_stats"}, {11, "track_event"}, {33, "trace_config"},
    {34, "ftrace_stats"}, {35, "trace_stats"}, {36, "synchronization_marker"}, {37, "profile_packet"},
    {38, "battery"}, {39, "android_log"}, {40, "power_rails"}, {43, "process_descriptor"},
    {44, "thread_descriptor"}, {45, "system_info"}, {46, "trigger"}, {47, "packages_list"},
    {48, "chrome_benchmark_metadata"}, {49, "perfetto_metatrace"}, {50, "compressed_packets"},
    {51, "chrome_metadata"}, {52, "gpu_counter_event"}, {53, "gpu_render_stage_event"},
    {54, "streaming_profile_packet"}, {57, "graphics_frame_event"}, {60, "track_descriptor"},
    {61, "module_symbols"}, {62, "vulkan_memory_event"}, {63, "gpu_log"}, {64, "deobfuscation_mapping"},
    {65, "vulkan_api_event"}, {66, "perf_sample"}, {67, "cpu_info"}, {68, "smaps_packet"},
    {69, "service_event"}, {70, "initial_display_state"}, {71, "gpu_mem_total_event"},
    {72, "extension_descriptor"}, {73, "memory_tracker_snapshot"}, {74, "streaming_allocation"},
    {75, "streaming_free"}, {77, "android_energy_estimation_breakdown"}, {78, "ui_state"},
    {82, "translation_table"}, {83, "android_game_intervention_list"}, {84, "statsd_atom"},
    {86, "android_system_property"}, {89, "trace_uuid"}, {90, "track_event_range_of_interest"},
    {91, "entity_state_residency"}, {95, "etw_events"}, {99, "v8_js_code"}, {100, "v8_internal_code"},
    {101, "v8_wasm_code"}, {102, "v8_reg_exp_code"}, {103, "v8_code_move"}, {107, "remote_clock_sync"},
    {109, "chrome_trigger"}, {110, "pixel_modem_events"}, {111, "pixel_modem_token_database"},
    {113, "clone_snapshot_trigger"}, {115, "kernel_wakelock_data"}, {117, "generic_kernel_task_state_event"},
    {118, "generic_kernel_cpu_freq_event"}, {119, "cpu_per_uid_data"},
    {120, "generic_kernel_task_rename_event"}, {122, "generic_kernel_process_tree"}, {123, "user_list"},
    {124, "trace_provenance"}, {125, "protovms"}, {126, "trace_attributes"}, {127, "android_aflags"},
    {128, "gpu_info"}, {129, "generic_gpu_frequency_event"}, {130, "interrupt_info"},
    {131, "art_process_metadata"}, {132, "journald_event"}, {133, "zstd_compressed_packets"},
    {134, "concurrent_session_event"}, {135, "stack_sample"}, {900, "for_testing"}
};
/* TracePacket's fields beside its data: they say when and whose a packet is, not what. */
static bool packet_context(uint32_t f)
{
    return f == 3 || f == 8 || f == 10 || f == 12 || f == 13 || f == 41 || f == 42 || f == 58 || f == 59 || f == 79 ||
           f == 87 || f == 98;
}

static const char *packet_kind(uint32_t f)
{
    size_t lo = 0, hi = sizeof packet_kinds / sizeof *packet_kinds;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (packet_kinds[mid].field == f)
            return packet_kinds[mid].name;
        if (packet_kinds[mid].field < f)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

typedef struct pbfield {
    uint32_t field;
    uint8_t wire;
    size_t at, start, len; /* the key's offset; LEN: the bytes' start and length */
    uint64_t value;        /* VARINT */
} pbfield;

typedef struct lrpacket {
    size_t payload, payload_len;   /* offsets in the input */
    const uint8_t *name;
    size_t name_len;
    int64_t pid;                   /* -1: no trusted_pid */
} lrpacket;

typedef struct pftrace {
    size_t pos;                    /* the next top-level packet */
    bool in_dump;
    tci_artlr lr;
    tci_artlr_sink sink;
    tci_idmap threads;
    tci_idmap *methods;            /* per process index: ArtMethod* -> method index */
    uint32_t n_methods, cap_methods;
    int64_t origin;                /* the start_ns raw times are measured from (normalize moves start_ns after pass 1) */
    uint64_t packets, records;     /* pass 1 */
} pftrace;

/* ---- protobuf wire format ---- */

static bool varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= end)
            return false;
        uint8_t b = p[(*pos)++];
        if (shift < 64)
            x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* The field at *pos of a message ending at end: 1 a field, 0 the end, -1 malformed (*pos at the fault). */
static int pb_next(const uint8_t *p, size_t end, size_t *pos, pbfield *f)
{
    if (*pos >= end)
        return 0;
    f->at = *pos;
    uint64_t key, v;
    if (!varint(p, end, pos, &key) || key >> 3 == 0 || key >> 3 > 0x1FFFFFFF)
        return *pos = f->at, -1;
    f->field = (uint32_t)(key >> 3);
    f->wire = key & 7;
    switch (f->wire) {
    case WIRE_VARINT:
        if (!varint(p, end, pos, &f->value))
            return *pos = f->at, -1;
        return 1;
    case WIRE_I64:
    case WIRE_I32: {
        size_t k = f->wire == WIRE_I64 ? 8 : 4;
        if (end - *pos < k)
            return *pos = f->at, -1;
        *pos += k;
        return 1;
    }
    case WIRE_LEN:
        if (!varint(p, end, pos, &v) || v > end - *pos)
            return *pos = f->at, -1;
        f->start = *pos;
        f->len = (size_t)v;
        *pos += f->len;
        return 1;
    default: /* groups (3, 4) are not written by Perfetto */
        return *pos = f->at, -1;
    }
}

static bool is_payload(const uint8_t *p, size_t len)
{
    return len >= 6 && !memcmp(p, "SLOW", 4) && tci_le16(p + 4) == TCI_ARTLR_VERSION;
}

/* A process name: no control bytes (its bytes are escaped where shown, as every name's). */
static bool is_text(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x20 || p[i] == 0x7F)
            return false;
    return true;
}

/* Is the message [start, start+len) an art_method_trace_long_running? Its payload and name into pk. */
static bool lr_message(const uint8_t *p, size_t start, size_t len, lrpacket *pk)
{
    size_t pos = start, end = start + len, text = SIZE_MAX, text_len = 0;
    pbfield f = {0};
    int rc;
    bool found = false;
    while ((rc = pb_next(p, end, &pos, &f)) == 1) {
        if (f.wire != WIRE_LEN)
            continue;
        if (!found && is_payload(p + f.start, f.len)) {
            pk->payload = f.start, pk->payload_len = f.len;
            found = true;
        } else if (text == SIZE_MAX && is_text(p + f.start, f.len)) {
            text = f.start, text_len = f.len;
        }
    }
    if (rc < 0 || !found)
        return false;
    pk->name = text == SIZE_MAX ? NULL : p + text;
    pk->name_len = text_len;
    return true;
}

/* What a packet that carries no dump is, for the count of what is not converted (pass 1). */
typedef struct pkind {
    const char *data;     /* the name of its data field (packet_kinds) */
    uint32_t unknown;     /* the first field that is neither data nor context (0: none) */
    bool interned, defaults;
    uint32_t more_dumps;  /* dumps after the first in one packet (read: the first only) */
} pkind;

static void classify(pkind *k, uint32_t field)
{
    const char *name = k->data ? NULL : packet_kind(field);
    if (name)
        k->data = name;
    else if (field == 12)
        k->interned = true;
    else if (field == 59)
        k->defaults = true;
    else if (!k->unknown && !packet_context(field) && !packet_kind(field))
        k->unknown = field;
}

/* The packet [start, start+len): 1 and pk when it carries a dump, 0 when not, -1 malformed (*bad).
 * With k (counting), what it is, and whether it carries more than one dump. */
static int scan_packet(const uint8_t *p, size_t start, size_t len, lrpacket *pk, size_t *bad, pkind *k)
{
    size_t pos = start, end = start + len;
    pbfield f = {0};
    int rc;
    bool found = false;
    lrpacket other;
    pk->pid = -1;
    while ((rc = pb_next(p, end, &pos, &f)) == 1) {
        if (f.field == TRUSTED_PID && f.wire == WIRE_VARINT)
            pk->pid = (int32_t)(uint32_t)f.value; /* int32 on the wire: a negative one is sign-extended */
        else if (f.wire == WIRE_LEN && (!found || k) && f.len >= 8 && lr_message(p, f.start, f.len, found ? &other : pk)) {
            if (found)
                k->more_dumps++;
            found = true;
        }
        if (k)
            classify(k, f.field);
    }
    if (rc < 0) {
        *bad = pos;
        return -1;
    }
    return found;
}

/* Pass 1: a top-level field that is no TracePacket, or a packet that carries no dump (or a
 * second dump in one packet), counted as not converted by what it is. */
static void count_other(tci_diag *d, uint64_t at, const pbfield *f, const pkind *k, bool dump)
{
    char name[48];
    const char *kind = name;
    if (f->field != TRACE_PACKET || f->wire != WIRE_LEN)
        snprintf(name, sizeof name, "Trace field %u", f->field);
    else if (dump)
        kind = NULL;
    else if (k->data)
        kind = k->data;
    else if (k->unknown)
        snprintf(name, sizeof name, "TracePacket field %u", k->unknown);
    else
        kind = k->interned ? "interned_data" : k->defaults ? "trace_packet_defaults" : "packet without data";
    if (kind)
        tci_not_converted(d, MODULE, at, kind, strlen(kind));
    for (uint32_t i = 0; dump && i < k->more_dumps; i++)
        tci_not_converted(d, MODULE, at, "second ART dump in one packet", 29);
}

/* The next top-level packet from *pos that carries a dump: 1 (pk), 0 the end, -1 malformed (*bad, *why).
 * With count (pass 1), what it passes over is counted as not converted. */
static int next_lr_packet(const uint8_t *p, size_t n, size_t *pos, lrpacket *pk, size_t *bad, const char **why,
                          tci_diag *count)
{
    pbfield f = {0};
    int rc;
    while ((rc = pb_next(p, n, pos, &f)) == 1) {
        pkind k = {0};
        if (f.field != TRACE_PACKET || f.wire != WIRE_LEN) {
            if (count)
                count_other(count, f.at, &f, &k, false);
            continue;
        }
        if ((rc = scan_packet(p, f.start, f.len, pk, bad, count ? &k : NULL)) < 0) {
            *why = "a malformed field inside a TracePacket";
            return -1;
        }
        if (count)
            count_other(count, f.at, &f, &k, rc == 1);
        if (rc)
            return 1;
    }
    if (rc < 0) {
        *bad = *pos;
        *why = "a top-level field (a TracePacket) that is cut short or malformed";
        return -1;
    }
    return 0;
}

/* ---- the reader ---- */

static int pftrace_probe(const uint8_t *buf, size_t len, const char *filename)
{
    (void)filename;
    /* a Trace begins with a packet (field 1, LEN); the payload's magic must be somewhere */
    if (len < 16 || buf[0] != 0x0A || !tci_memmem(buf, len, "SLOW\xF6", 5))
        return 0;
    size_t pos = 0, bad;
    const char *why;
    lrpacket pk;
    return next_lr_packet(buf, len, &pos, &pk, &bad, &why, NULL) == 1 ? 100 : 0;
}

static int packet_error(tci_rctx *r, size_t bad, const char *why)
{
    return tci_error(r->diag, TC_ERR_FORMAT, MODULE, bad, "%s", why);
}

/* Enter the dump of pk: its process (by trusted_pid) and the decoder. */
static int enter_dump(tci_rctx *r, pftrace *pf, const lrpacket *pk)
{
    tci_trace *t = r->trace;
    int rc = tci_artlr_open(&pf->lr, r->data + pk->payload, pk->payload_len, pk->payload, "", MODULE, r->diag);
    if (rc != TC_OK)
        return rc;
    uint32_t proc = 0;
    if (pk->pid >= 0) {
        if (t->processes[0].pid < 0 && r->pass == 1) {
            t->processes[0].pid = pk->pid;
            t->pid = pk->pid;
        }
        if ((proc = tci_trace_process(t, pk->pid)) == TCI_NONE)
            return tci_trace_fail(t, r->diag, MODULE, pk->payload);
    }
    if (r->pass == 1 && pk->name && tci_trace_name_process(t, proc, (const char *)pk->name, pk->name_len, 2) != TC_OK)
        return tci_trace_fail(t, r->diag, MODULE, (uint64_t)(pk->name - r->data));
    for (; pf->n_methods <= proc; pf->n_methods++) {
        if (tci_grow((void **)&pf->methods, &pf->cap_methods, pf->n_methods, sizeof *pf->methods) != 0)
            return tci_error(r->diag, TC_ERR_NOMEM, MODULE, pk->payload, "out of memory");
        pf->methods[pf->n_methods] = (tci_idmap){0};
    }
    pf->sink = (tci_artlr_sink){.process = proc, .methods = &pf->methods[proc],
                                .tid_key = (uint64_t)proc << 32, .threads = &pf->threads, .origin = pf->origin};
    pf->in_dump = true;
    return TC_OK;
}

/* The session start of the earliest dump, when no record of any dump comes before it: the trace start. */
static int find_start(tci_rctx *r)
{
    size_t pos = 0, bad;
    const char *why;
    lrpacket pk;
    int rc;
    int64_t start = INT64_MAX, earliest = INT64_MAX;
    tci_artlr lr;
    while ((rc = next_lr_packet(r->data, r->size, &pos, &pk, &bad, &why, NULL)) == 1) {
        if ((rc = tci_artlr_open(&lr, r->data + pk.payload, pk.payload_len, pk.payload, "", MODULE, r->diag)) != TC_OK)
            return rc;
        int64_t e = tci_artlr_earliest(&lr);
        if (lr.header_start < start)
            start = lr.header_start;
        if (e < earliest)
            earliest = e;
    }
    if (rc < 0)
        return packet_error(r, bad, why);
    if (start != INT64_MAX && start <= earliest) {
        r->trace->start_ns = start;
        r->trace->start_given = true;
    }
    return TC_OK;
}

static int pftrace_open(tci_rctx *r)
{
    tci_trace *t = r->trace;
    tci_artlr_trace_setup(t);
    snprintf(t->detail, sizeof t->detail, "art_method_trace_long_running packets");
    int rc = find_start(r);
    ((pftrace *)r->priv)->origin = t->start_ns;
    return rc;
}

static int pftrace_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *n)
{
    pftrace *pf = r->priv;
    *n = 0;
    for (;;) {
        if (pf->in_dump) {
            int rc = tci_artlr_read(r, &pf->lr, &pf->sink, ev, max, n);
            if (rc != TC_EOF) {
                if (r->pass == 1)
                    pf->records += *n;
                r->pos = pf->lr.base + pf->lr.pos;
                return rc;
            }
            pf->in_dump = false;
        }
        lrpacket pk;
        size_t bad;
        const char *why;
        int rc = next_lr_packet(r->data, r->size, &pf->pos, &pk, &bad, &why, r->pass == 1 ? r->diag : NULL);
        if (rc < 0)
            return packet_error(r, bad, why);
        if (rc == 0)
            break;
        if (r->pass == 1)
            pf->packets++;
        if ((rc = enter_dump(r, pf, &pk)) != TC_OK)
            return rc;
    }
    r->pos = r->size;
    if (r->pass == 1 && !pf->records)
        return tci_error(r->diag, TC_ERR_NO_TRACE, MODULE, r->size,
                         "no trace events found: %llu art_method_trace_long_running packets hold no record",
                         (unsigned long long)pf->packets);
    return TC_EOF;
}

static int pftrace_rewind(tci_rctx *r)
{
    pftrace *pf = r->priv;
    pf->pos = 0;
    pf->in_dump = false;
    return TC_OK;
}

static void pftrace_close(tci_rctx *r)
{
    pftrace *pf = r->priv;
    if (!pf)
        return;
    tci_idmap_free(&pf->threads);
    for (uint32_t i = 0; i < pf->n_methods; i++)
        tci_idmap_free(&pf->methods[i]);
    free(pf->methods);
}

const tci_reader tci_reader_pftrace = {
    .name = "pftrace",
    .description = "Perfetto trace carrying ART method data (art_method_trace_long_running packets)",
    .extensions = "pftrace,perfetto-trace",
    .aliases = "perfetto,perfetto-trace",
    .priv_size = sizeof(pftrace),
    .probe = pftrace_probe,
    .open = pftrace_open,
    .read = pftrace_read,
    .rewind = pftrace_rewind,
    .close = pftrace_close,
};
