/*
 * perfetto_clock.c - the Perfetto writer's timestamps when an event cannot be
 * a delta of its sequence's incremental clock.
 *
 * normalize never hands a writer such an event from a real input (times only
 * go forward per thread, ART's are whole µs), so test_perfetto.py cannot
 * reach this path; here the writer gets events by hand: one 500 ns off the µs
 * grid and one earlier than the clock. Each must go out as absolute BOOTTIME
 * ns (timestamp_clock_id 6) and leave the clock where it was, so the deltas
 * after it still land on the right times. The output is decoded by a small
 * reader written from the wire format (not from the writer's encoder) and
 * every time resolved as trace processor's ClockTracker does.
 */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"
#include "unit.h"

#include <stdlib.h>

typedef struct {
    uint8_t *p;
    size_t n, cap;
} buf;

static int collect(void *user, const void *data, size_t len)
{
    buf *b = user;
    if (b->n + len > b->cap) {
        b->cap = (b->n + len) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            return -1;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return 0;
}

/* ---- a protobuf reader: varint, tag, LEN -------------------------------- */

typedef struct {
    const uint8_t *p, *end;
} rd;

static uint64_t varint(rd *r)
{
    uint64_t v = 0;
    for (int s = 0; r->p < r->end && s < 64; s += 7) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7F) << s;
        if (b < 0x80)
            break;
    }
    return v;
}

/* Next field: its number, its varint value or (LEN) its bytes in *sub. 0 at the end. */
static uint32_t field(rd *r, uint64_t *v, rd *sub)
{
    if (r->p >= r->end)
        return 0;
    uint64_t tag = varint(r);
    switch (tag & 7) {
    case 0:
        *v = varint(r);
        break;
    case 2: {
        uint64_t len = varint(r);
        sub->p = r->p;
        sub->end = r->p + len;
        r->p += len;
        break;
    }
    case 1:
        r->p += 8;
        break;
    case 5:
        r->p += 4;
        break;
    default:
        r->p = r->end;
        return 0;
    }
    return (uint32_t)(tag >> 3);
}

/* ---- times as TP resolves them on one thread sequence -------------------- */

typedef struct {
    int64_t when[16]; /* resolved ns of each track event on the thread sequence */
    bool absolute[16];
    int n;
    uint64_t unit;
    bool snapshot;
} timeline;

static void resolve(const buf *out, uint32_t seq, timeline *tl)
{
    memset(tl, 0, sizeof *tl);
    uint32_t default_clock = 0;
    int64_t clock_ns = 0, snap_ns = 0, boot_ns = 0;
    rd file = {out->p, out->p + out->n}, pk, sub;
    uint64_t v;
    while (field(&file, &v, &pk) == 1) {
        uint64_t ts = 0, seq_id = 0, clock_id = 0;
        bool has_ts = false, event = false, snapshot = false;
        rd snap = {0}, defaults = {0};
        while (1) {
            uint32_t f = field(&pk, &v, &sub);
            if (!f)
                break;
            if (f == 8)
                ts = v, has_ts = true;
            else if (f == 10)
                seq_id = v;
            else if (f == 58)
                clock_id = v;
            else if (f == 11)
                event = true;
            else if (f == 6)
                snap = sub, snapshot = true;
            else if (f == 59)
                defaults = sub;
        }
        if (seq_id != seq)
            continue;
        if (defaults.p) { /* TP applies them before it reads this packet's timestamp */
            uint32_t g;
            while ((g = field(&defaults, &v, &sub)))
                if (g == 58) /* TracePacketDefaults.timestamp_clock_id */
                    default_clock = (uint32_t)v;
        }
        if (snapshot) { /* clocks (1): {clock_id 1, timestamp 2, is_incremental 3, unit 4} */
            rd c;
            while (field(&snap, &v, &c) == 1) {
                uint64_t id = 0, t = 0, unit = 1, inc = 0, x;
                rd none;
                uint32_t g;
                while ((g = field(&c, &x, &none))) {
                    if (g == 1) id = x;
                    if (g == 2) t = x;
                    if (g == 3) inc = x;
                    if (g == 4) unit = x;
                }
                if (id == 6)
                    boot_ns = (int64_t)t;
                if (id == 64) {
                    CHECK(inc == 1);
                    tl->unit = unit;
                    clock_ns = snap_ns = (int64_t)(t * unit);
                }
            }
            tl->snapshot = true;
            continue; /* TP reads nothing else in a snapshot packet */
        }
        if (!has_ts)
            continue;
        uint64_t id = clock_id ? clock_id : default_clock;
        int64_t when;
        if (id == 64) {
            clock_ns += (int64_t)(ts * tl->unit);
            when = clock_ns - snap_ns + boot_ns;
        } else {
            when = (int64_t)ts;
        }
        if (event && tl->n < 16) {
            tl->absolute[tl->n] = id != 64;
            tl->when[tl->n++] = when;
        }
    }
}

/* ---- the writer, fed by hand ----------------------------------------------- */

static void write_events(int64_t start_ns, const int64_t *ts, const uint8_t *kind, int n, buf *out)
{
    tci_trace t;
    CHECK(tci_trace_init(&t) == TC_OK);
    t.reader = "art";
    t.clock = TCI_CLOCK_WALL;
    t.has_wall = true;
    t.time_unit_ns = 1000;
    t.start_ns = start_ns;
    uint32_t th = tci_trace_add_thread(&t, 42);
    CHECK(tci_trace_define_method(&t, 4, "C", 1, "m", 1, "()V", 3, NULL, 0, -1) == TC_OK);
    t.threads[th].records = (uint64_t)n;
    tci_diag diag;
    memset(&diag, 0, sizeof diag);
    tci_options opt;
    memset(&opt, 0, sizeof opt);
    opt.process_name = "app";
    CHECK(tci_trace_finalize(&t, &diag, &opt) == TC_OK);

    tci_sink *sink = calloc(1, sizeof *sink);
    CHECK(sink && tci_sink_open_fn(sink, collect, out, false) == 0);
    void *priv = calloc(1, tci_writer_perfetto.priv_size);
    tci_wctx w = {.writer_name = "perfetto", .priv = priv, .out = sink, .trace = &t, .opt = &opt, .diag = &diag};
    CHECK(tci_writer_perfetto.begin(&w) == TC_OK);
    uint32_t depth = 0;
    for (int i = 0; i < n; i++) {
        tci_event ev = {.ts_ns = ts[i], .cpu_ns = TCI_NO_TIME, .thread = th, .method = 0, .kind = kind[i]};
        ev.depth = kind[i] == TCI_EV_ENTER ? depth++ : --depth;
        CHECK(tci_writer_perfetto.event(&w, &ev) == TC_OK);
    }
    CHECK(tci_writer_perfetto.finish(&w, NULL) == TC_OK);
    tci_writer_perfetto.close(&w);
    CHECK(tci_sink_close(sink) == 0);
    free(sink);
    free(priv);
    tci_trace_free(&t);
}

static void test_off_grid_and_backwards(void)
{
    const int64_t s = 5000000000; /* whole µs: the clock counts µs */
    const int64_t ts[] = {s + 1000, s + 2500, s + 3000, s + 2000, s + 4000, s + 9000};
    const uint8_t kind[] = {TCI_EV_ENTER, TCI_EV_ENTER, TCI_EV_EXIT, TCI_EV_ENTER, TCI_EV_EXIT, TCI_EV_EXIT};
    const bool absolute[] = {false, true, false, true, false, false};
    buf out = {0};
    write_events(s, ts, kind, 6, &out);
    timeline tl;
    resolve(&out, 2, &tl); /* thread 0's sequence */
    CHECK(tl.snapshot);
    CHECK_EQ_INT(tl.unit, 1000);
    CHECK_EQ_INT(tl.n, 6);
    for (int i = 0; i < tl.n && i < 6; i++) {
        CHECK_EQ_INT(tl.when[i], ts[i]);
        CHECK_EQ_INT(tl.absolute[i], absolute[i]);
    }
    free(out.p);
}

static void test_start_off_grid_counts_ns(void)
{
    const int64_t s = 5000000300; /* not whole µs: the clock counts ns */
    const int64_t ts[] = {s + 700, s + 1234};
    const uint8_t kind[] = {TCI_EV_ENTER, TCI_EV_EXIT};
    buf out = {0};
    write_events(s, ts, kind, 2, &out);
    timeline tl;
    resolve(&out, 2, &tl);
    CHECK_EQ_INT(tl.unit, 1);
    CHECK_EQ_INT(tl.n, 2);
    for (int i = 0; i < tl.n && i < 2; i++) {
        CHECK_EQ_INT(tl.when[i], ts[i]);
        CHECK_EQ_INT(tl.absolute[i], 0);
    }
    free(out.p);
}

int main(void)
{
    UNIT_RUN(test_off_grid_and_backwards);
    UNIT_RUN(test_start_off_grid_counts_ns);
    return UNIT_DONE();
}
