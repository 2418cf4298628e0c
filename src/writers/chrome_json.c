/*
 * chrome_json.c - Chrome Trace Event Format, object form
 * (shared/docs/outputs/CHROME_JSON.md).
 *
 * Streamed: one B or E line per event, as events arrive; nothing per event is
 * kept. Quirks we write for: E carries the same name and cat as its B
 * (speedscope matches by name, Perfetto by name and cat); ts is µs relative
 * to the trace start with exactly three decimals (absolute epoch µs would lose
 * the ns part in a double); thread CPU time goes in tts; frames made by the
 * conversion rules say so in args (merged by viewers into the slice's args);
 * any byte sequence in a name is escaped (invalid UTF-8 becomes U+FFFD);
 * async slices (b/e) carry their cookie as "id2":{"local":...}: ours are
 * scoped to their process (systrace's S/F), and a plain "id" is global to
 * Chrome and Perfetto, which would merge two processes' slices of one name
 * and cookie into one track.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <math.h>
#include <stdlib.h>

/* A B or E line is three pieces: the thread's head (up to "ts":), the numbers, and the
 * method's tail (from ,"name": to the closing brace), each head and tail made once. */
typedef struct json_w {
    tci_arena arena;
    char **tail;       /* per method: ,"name":"<escaped name>","cat":"<reader>"} */
    size_t *tail_len;
    char **head;       /* per thread, B then E: ,\n{"ph":"B","pid":P,"tid":T,"ts": */
    size_t *head_len;
    tci_milli_memo *memo; /* per thread, ts then tts: their leading digits kept line to line */
    uint64_t samples;  /* not shown on a timeline */
} json_w;

enum { HEAD_PH = 12 /* ,\n{"ph":"B", */, HEAD_TS = 5 /* "ts": */, TAIL_NAME = 8 /* ,"name": */ };

/* "pid":P,"tid":T, of thread i, as the metadata and the point events write it after their ph. */
static const char *thread_prefix(const json_w *j, uint32_t i, size_t *len)
{
    *len = j->head_len[2 * i] - HEAD_PH - HEAD_TS;
    return j->head[2 * i] + HEAD_PH;
}

/* The process names first (one per process with events), then the threads. */
static void write_metadata(tci_sink *o, const tci_trace *t, const json_w *j)
{
    bool first = true;
    for (uint32_t p = 0; p < t->n_processes; p++) {
        bool used = t->processes[p].first_thread != TCI_NONE;
        if (!used && !(first && p + 1 == t->n_processes)) /* the array never starts with a comma */
            continue;
        long long pid = (long long)t->processes[p].pid;
        tci_sink_printf(o, "%s{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"process_name\",\"args\":{\"name\":",
                        first ? "" : ",\n", pid, pid);
        tci_sink_json_string(o, t->processes[p].name);
        tci_sink_puts(o, "}}");
        first = false;
    }
    for (uint32_t i = 0, sort = 0; i < t->n_threads; i++) {
        if (!t->threads[i].records)
            continue;
        size_t prefix_len;
        const char *prefix = thread_prefix(j, i, &prefix_len);
        tci_sink_puts(o, ",\n{\"ph\":\"M\",");
        tci_sink_write(o, prefix, prefix_len);
        tci_sink_puts(o, "\"name\":\"thread_name\",\"args\":{\"name\":");
        tci_sink_json_string(o, t->threads[i].name);
        tci_sink_puts(o, "}},\n{\"ph\":\"M\",");
        tci_sink_write(o, prefix, prefix_len);
        tci_sink_printf(o, "\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}", sort++);
    }
}

/* Each method's tail: its escaped name, the category, the closing brace. */
static int make_tails(json_w *j, const tci_trace *t)
{
    /* the category names the input's format: "art" for method traces */
    char *cat = tci_arena_printf(&j->arena, ",\"cat\":\"%s\"}", t->reader ? t->reader : "trace");
    j->tail = tci_calloc(t->n_methods, sizeof *j->tail);
    j->tail_len = tci_calloc(t->n_methods, sizeof *j->tail_len);
    if (!cat || !j->tail || !j->tail_len)
        return TC_ERR_NOMEM;
    size_t cat_len = strlen(cat);
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *name = t->methods[i].full_name;
        size_t n = strlen(name);
        char *tail = n <= (SIZE_MAX - TAIL_NAME - cat_len - 2) / 6 ? tci_arena_alloc(&j->arena, TAIL_NAME + 6 * n + 2 + cat_len) : NULL;
        if (!tail)
            return TC_ERR_NOMEM;
        memcpy(tail, ",\"name\":", TAIL_NAME);
        size_t len = TAIL_NAME + tci_json_quote_to(tail + TAIL_NAME, name, n);
        memcpy(tail + len, cat, cat_len);
        len += cat_len;
        tci_arena_trim(&j->arena, tail, len); /* the room for escapes that were not needed */
        j->tail[i] = tail;
        j->tail_len[i] = len;
    }
    return TC_OK;
}

/* Each thread's heads, B and E. */
static int make_heads(json_w *j, const tci_trace *t)
{
    j->head = tci_calloc(2 * (size_t)t->n_threads, sizeof *j->head);
    j->head_len = tci_calloc(2 * (size_t)t->n_threads, sizeof *j->head_len);
    j->memo = tci_calloc(2 * (size_t)t->n_threads, sizeof *j->memo);
    if (!j->head || !j->head_len || !j->memo)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        for (int e = 0; e < 2; e++) {
            char *h = tci_arena_printf(&j->arena, ",\n{\"ph\":\"%c\",\"pid\":%lld,\"tid\":%llu,\"ts\":", e ? 'E' : 'B',
                                       (long long)t->processes[t->threads[i].process].pid,
                                       (unsigned long long)t->threads[i].tid);
            if (!h)
                return TC_ERR_NOMEM;
            j->head[2 * i + e] = h;
            j->head_len[2 * i + e] = strlen(h);
        }
    }
    return TC_OK;
}

static int json_begin(tci_wctx *w)
{
    json_w *j = w->priv;
    const tci_trace *t = w->trace;
    int rc = make_tails(j, t);
    if (rc == TC_OK)
        rc = make_heads(j, t);
    if (rc != TC_OK)
        return rc;
    tci_sink_puts(w->out, "{\"traceEvents\":[\n");
    write_metadata(w->out, t, j);
    return TC_OK;
}

/* Instants, counters and async slices: "i" (thread scope), "C", "b"/"e". */
static int json_point_event(tci_wctx *w, const tci_event *ev)
{
    json_w *j = w->priv;
    tci_sink *o = w->out;
    if (ev->kind == TCI_EV_SAMPLE) {
        j->samples++; /* sampled stacks go to pprof and folded */
        return TC_OK;
    }
    if (ev->kind == TCI_EV_COUNTER && !isfinite(ev->value))
        return TC_OK; /* JSON has no NaN or infinity; such a sample says nothing */
    static const char *const ph[] = {[TCI_EV_INSTANT] = ",\n{\"ph\":\"i\",\"s\":\"t\",",
                                     [TCI_EV_COUNTER] = ",\n{\"ph\":\"C\",",
                                     [TCI_EV_ASYNC_BEGIN] = ",\n{\"ph\":\"b\",",
                                     [TCI_EV_ASYNC_END] = ",\n{\"ph\":\"e\","};
    tci_sink_puts(o, ph[ev->kind]);
    const char *head = j->head[2 * ev->thread];
    tci_sink_write(o, head + HEAD_PH, j->head_len[2 * ev->thread] - HEAD_PH); /* "pid":P,"tid":T,"ts": */
    tci_sink_milli(o, ev->ts_ns - w->trace->start_ns);
    tci_sink_write(o, j->tail[ev->method], j->tail_len[ev->method] - 1); /* its brace after the args */
    if (ev->kind == TCI_EV_COUNTER)
        tci_sink_printf(o, ",\"args\":{\"value\":%.17g}", ev->value);
    else if (ev->kind != TCI_EV_INSTANT) /* process-scoped: a plain "id" is global to Chrome and Perfetto */
        tci_sink_printf(o, ",\"id2\":{\"local\":\"0x%llx\"}", (unsigned long long)ev->id);
    tci_sink_putc(o, '}');
    return o->err ? TC_ERR_IO : TC_OK;
}

/* The flags a frame's line notes in its args (how the conversion made it). */
#define NOTE_FLAGS (TCI_EVF_SYNTHETIC | TCI_EVF_UNWIND | TCI_EVF_FORCED)

/* The longest line a B or E event writes besides its head and tail: two numbers and ,"tts":. */
#define NUMBERS_ROOM (2 * TCI_MILLI_ROOM + 7)

/* A B or E line written piece by piece: near the end of the sink's buffer, or with args. */
static int slice_line(tci_wctx *w, const tci_event *ev)
{
    json_w *j = w->priv;
    tci_sink *o = w->out;
    size_t h = 2 * (size_t)ev->thread + (ev->kind == TCI_EV_EXIT);
    tci_sink_write(o, j->head[h], j->head_len[h]);
    tci_sink_milli(o, ev->ts_ns - w->trace->start_ns);
    if (ev->cpu_ns != TCI_NO_TIME) {
        TCI_PUT_LIT(o, ",\"tts\":");
        tci_sink_milli(o, ev->cpu_ns);
    }
    uint16_t args = ev->flags & NOTE_FLAGS;
    tci_sink_write(o, j->tail[ev->method], j->tail_len[ev->method] - (args ? 1 : 0));
    if (ev->flags & TCI_EVF_SYNTHETIC)
        tci_sink_puts(o, ev->kind == TCI_EV_ENTER ? ",\"args\":{\"synthetic\":\"open when tracing began\"}}"
                                                  : ",\"args\":{\"synthetic\":\"open when tracing ended\"}}");
    else if (ev->flags & TCI_EVF_UNWIND)
        tci_sink_puts(o, ",\"args\":{\"exit\":\"exception unwind\"}}");
    else if (ev->flags & TCI_EVF_FORCED)
        tci_sink_puts(o, ",\"args\":{\"exit\":\"closed by the exit of a caller\"}}");
    return o->err ? TC_ERR_IO : TC_OK;
}

/* A B or E line: head, ts, tts, tail. The common line is placed straight into the sink's
 * buffer after one check of its room, rather than through seven writes each checking it. */
static int json_event(tci_wctx *w, const tci_event *ev)
{
    json_w *j = w->priv;
    tci_sink *o = w->out;
    if (TCI_UNLIKELY(ev->kind != TCI_EV_ENTER && ev->kind != TCI_EV_EXIT))
        return json_point_event(w, ev);
    size_t h = 2 * (size_t)ev->thread + (ev->kind == TCI_EV_EXIT), tail_len = j->tail_len[ev->method];
    size_t head_len = j->head_len[h];
    if (TCI_UNLIKELY(o->len + head_len + NUMBERS_ROOM + tail_len > sizeof o->buf ||
                     (ev->flags & NOTE_FLAGS)))
        return slice_line(w, ev);
    char *q = (char *)o->buf + o->len;
    memcpy(q, j->head[h], head_len);
    q += head_len;
    tci_milli_memo *memo = &j->memo[2 * (size_t)ev->thread];
    q += tci_fmt_milli_memo(q, ev->ts_ns - w->trace->start_ns, &memo[0]);
    if (ev->cpu_ns != TCI_NO_TIME) {
        memcpy(q, ",\"tts\":", 7);
        q += 7;
        q += tci_fmt_milli_memo(q, ev->cpu_ns, &memo[1]);
    }
    memcpy(q, j->tail[ev->method], tail_len);
    o->len = (size_t)(q + tail_len - (char *)o->buf);
    return TC_OK;
}

static int json_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    tci_writer_dropped(w, ((json_w *)w->priv)->samples, "sampled stacks not shown on the timeline (see pprof or folded)");
    tci_sink_puts(o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"traceconv " TC_VERSION_STRING "\",\"input\":");
    tci_sink_json_string(o, t->input_name ? t->input_name : "-");
    char format[TCI_FORMAT_TEXT_MAX];
    tci_sink_puts(o, ",\"format\":");
    tci_sink_json_string(o, tci_trace_format(t, format, sizeof format));
    tci_sink_printf(o, ",\"clock\":\"%s\"", tci_clock_name(t->clock));
    if (t->vm) {
        tci_sink_puts(o, ",\"vm\":");
        tci_sink_json_string(o, t->vm);
    }
    tci_sink_puts(o, ",\"start_time_ns\":");
    tci_sink_i64(o, t->start_ns);
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection it was made with, named as the options are */
    if (tci_selection_text(w->opt, NULL, sel, sizeof sel)) {
        tci_sink_puts(o, ",\"selection\":");
        tci_sink_json_string(o, sel);
    }
    if (!t->has_wall)
        tci_sink_puts(o, ",\"timeline\":\"thread CPU time (the input has no wall clock)\"");
    tci_sink_puts(o, ",\"figures\":{");
    for (int i = 0, first = 1; i < TCI_FIG__COUNT; i++) {
        if (!w->diag->fig[i] || i == TCI_FIG_EVENTS)
            continue;
        tci_sink_printf(o, "%s\"%s\":%llu", first ? "" : ",", tci_figure_name(i), (unsigned long long)w->diag->fig[i]);
        first = 0;
    }
    tci_sink_puts(o, "}}}\n");
    return o->err ? TC_ERR_IO : TC_OK;
}

static void json_close(tci_wctx *w)
{
    json_w *j = w->priv;
    if (!j)
        return;
    free(j->tail);
    free(j->tail_len);
    free(j->head);
    free(j->head_len);
    free(j->memo);
    tci_arena_free(&j->arena);
}

const tci_writer tci_writer_json = {
    .name = "json",
    .description = "Chrome trace JSON (chrome://tracing, ui.perfetto.dev, speedscope)",
    .extensions = "json",
    .variants = (const tci_variant[]){{.name = "json", .extension = "json", .mime = "application/json",
                                       .mark = "\"generator\":\"traceconv ",
                                       .aliases = "chrome,chrome-json,trace-event,catapult"}, {0}},
    .priv_size = sizeof(json_w),
    .begin = json_begin,
    .event = json_event,
    .finish = json_finish,
    .close = json_close,
};
