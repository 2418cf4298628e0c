/*
 * activity.c - where each thread is busy over time, for choosing --since and --until:
 * per thread, how many calls began and samples were taken in each of ACTIVITY_BINS
 * equal bins of the trace (JSON). `traceconv serve` draws it in its time-range bar.
 *
 *   {"traceconv_activity":1,"start_ns":S,"end_ns":E,"bins":200,"bin_ns":B,
 *    "unit":"calls and samples","threads":[{"tid":1234,"name":"main","total":N,
 *    "counts":[0,12,...]}, ...]}
 *
 * Bin k holds the events whose time t (the trace's timeline: wall, or thread CPU on a
 * CPU-only trace) has floor((t - S) * bins / (E - S)) == k, the end itself in the last
 * bin: exact integers (the test computes the same). The axis is the whole trace, S to E,
 * whatever the selection keeps, so a bin lines up with the --since/--until it would be.
 *
 * What counts: a call that began (an enter the input recorded; not the enters the
 * conversion rules made up for frames open before tracing, which all sit at the start)
 * and a sample (one, whatever its weight). A thread waiting in one long call counts one,
 * so an idle stretch is flat even when the thread is inside Looper.loop all along, and a
 * thread making many calls stands out: activity, not time in methods.
 *
 * Threads in the order of the trace's table, those with at least one count only. Memory:
 * bins per thread (the tables' size), never per event.
 */
#include "tc_base.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <stdlib.h>

#define ACTIVITY_BINS 200u /* the time bar's resolution: a few pixels a bin on a page */

typedef struct activity_w {
    uint64_t *counts; /* n_threads x ACTIVITY_BINS */
    int64_t start, span;
} activity_w;

static int activity_begin(tci_wctx *w)
{
    activity_w *a = w->priv;
    const tci_trace *t = w->trace;
    a->start = t->start_ns;
    a->span = t->end_ns > t->start_ns ? t->end_ns - t->start_ns : 0;
    a->counts = tci_calloc((size_t)(t->n_threads ? t->n_threads : 1) * ACTIVITY_BINS, sizeof *a->counts);
    return a->counts ? TC_OK : TC_ERR_NOMEM;
}

/* The bin of time ts: exact ((ts - start) * bins / span in 128 bits), clamped to the axis. */
static uint32_t bin_of(const activity_w *a, int64_t ts)
{
    if (a->span <= 0 || ts <= a->start)
        return 0;
    __int128 k = (__int128)(ts - a->start) * ACTIVITY_BINS / a->span;
    return k >= ACTIVITY_BINS ? ACTIVITY_BINS - 1 : (uint32_t)k;
}

static int activity_event(tci_wctx *w, const tci_event *ev)
{
    activity_w *a = w->priv;
    bool counts = (ev->kind == TCI_EV_ENTER && !(ev->flags & TCI_EVF_SYNTHETIC)) || ev->kind == TCI_EV_SAMPLE;
    if (counts && ev->thread < w->trace->n_threads)
        a->counts[(size_t)ev->thread * ACTIVITY_BINS + bin_of(a, ev->ts_ns)]++;
    return TC_OK;
}

static int activity_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    activity_w *a = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    tci_sink_printf(o, "{\"traceconv_activity\":1,\"start_ns\":%lld,\"end_ns\":%lld,\"bins\":%u,\"bin_ns\":",
                    (long long)a->start, (long long)(a->start + a->span), ACTIVITY_BINS);
    if (a->span <= INT64_MAX / 1000)
        tci_sink_milli(o, a->span * 1000 / ACTIVITY_BINS); /* ns with three decimals: a bin need not be whole ns */
    else
        tci_sink_i64(o, a->span / ACTIVITY_BINS);
    TCI_PUT_LIT(o, ",\"unit\":\"calls and samples\",\"threads\":[");
    bool first = true;
    for (uint32_t th = 0; th < t->n_threads; th++) {
        const uint64_t *c = a->counts + (size_t)th * ACTIVITY_BINS;
        uint64_t total = 0;
        for (uint32_t k = 0; k < ACTIVITY_BINS; k++)
            total += c[k];
        if (!total)
            continue;
        tci_sink_puts(o, first ? "\n{\"tid\":" : ",\n{\"tid\":");
        first = false;
        tci_sink_u64(o, t->threads[th].tid);
        TCI_PUT_LIT(o, ",\"name\":");
        tci_sink_json_string(o, t->threads[th].name);
        TCI_PUT_LIT(o, ",\"total\":");
        tci_sink_u64(o, total);
        TCI_PUT_LIT(o, ",\"counts\":[");
        for (uint32_t k = 0; k < ACTIVITY_BINS; k++) {
            if (k)
                tci_sink_putc(o, ',');
            tci_sink_u64(o, c[k]);
        }
        TCI_PUT_LIT(o, "]}");
    }
    TCI_PUT_LIT(o, "]}\n");
    return o->err ? TC_ERR_IO : TC_OK;
}

static void activity_close(tci_wctx *w)
{
    activity_w *a = w->priv;
    if (a)
        free(a->counts);
}

const tci_writer tci_writer_activity = {
    .name = "activity",
    .description = "activity over time (JSON): per thread, the calls begun and samples taken in each of 200 equal "
                   "bins of the trace; where a thread is busy, to choose --since and --until",
    .extensions = "activity.json",
    .variants = (const tci_variant[]){{.name = "activity", .extension = "activity.json", .mime = "application/json",
                                       .mark = "{\"traceconv_activity\":"},
                                      {0}},
    .priv_size = sizeof(activity_w),
    .begin = activity_begin,
    .event = activity_event,
    .finish = activity_finish,
    .close = activity_close,
};
