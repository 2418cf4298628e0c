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
#include "tc_registry.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <math.h>
#include <stdlib.h>

typedef struct json_w {
    tci_arena arena;
    char **name;       /* per method: the escaped "name" value */
    size_t *name_len;
    char **prefix;     /* per thread: "pid":P,"tid":T, */
    size_t *prefix_len;
    char *cat;         /* ,"cat":"<reader>" */
    size_t cat_len;
    uint64_t samples;  /* not shown on a timeline */
} json_w;

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
        tci_sink_puts(o, ",\n{\"ph\":\"M\",");
        tci_sink_write(o, j->prefix[i], j->prefix_len[i]);
        tci_sink_puts(o, "\"name\":\"thread_name\",\"args\":{\"name\":");
        tci_sink_json_string(o, t->threads[i].name);
        tci_sink_puts(o, "}},\n{\"ph\":\"M\",");
        tci_sink_write(o, j->prefix[i], j->prefix_len[i]);
        tci_sink_printf(o, "\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}", sort++);
    }
}

static int json_begin(tci_wctx *w)
{
    json_w *j = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    j->name = tci_calloc(t->n_methods, sizeof *j->name);
    j->name_len = tci_calloc(t->n_methods, sizeof *j->name_len);
    j->prefix = tci_calloc(t->n_threads, sizeof *j->prefix);
    j->prefix_len = tci_calloc(t->n_threads, sizeof *j->prefix_len);
    if (!j->name || !j->name_len || !j->prefix || !j->prefix_len)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++) {
        if (!(j->name[i] = tci_json_quote(&j->arena, t->methods[i].full_name, &j->name_len[i])))
            return TC_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < t->n_threads; i++) {
        j->prefix[i] = tci_arena_printf(&j->arena, "\"pid\":%lld,\"tid\":%llu,",
                                        (long long)t->processes[t->threads[i].process].pid,
                                        (unsigned long long)t->threads[i].tid);
        if (!j->prefix[i])
            return TC_ERR_NOMEM;
        j->prefix_len[i] = strlen(j->prefix[i]);
    }
    /* the category names the input's format: "art" for method traces */
    if (!(j->cat = tci_arena_printf(&j->arena, ",\"cat\":\"%s\"", t->reader ? t->reader : "trace")))
        return TC_ERR_NOMEM;
    j->cat_len = strlen(j->cat);
    tci_sink_puts(o, "{\"traceEvents\":[\n");
    write_metadata(o, t, j);
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
    tci_sink_write(o, j->prefix[ev->thread], j->prefix_len[ev->thread]);
    TCI_PUT_LIT(o, "\"ts\":");
    tci_sink_milli(o, ev->ts_ns - w->trace->start_ns);
    TCI_PUT_LIT(o, ",\"name\":");
    tci_sink_write(o, j->name[ev->method], j->name_len[ev->method]);
    tci_sink_write(o, j->cat, j->cat_len);
    if (ev->kind == TCI_EV_COUNTER)
        tci_sink_printf(o, ",\"args\":{\"value\":%.17g}", ev->value);
    else if (ev->kind != TCI_EV_INSTANT) /* process-scoped: a plain "id" is global to Chrome and Perfetto */
        tci_sink_printf(o, ",\"id2\":{\"local\":\"0x%llx\"}", (unsigned long long)ev->id);
    tci_sink_putc(o, '}');
    return o->err ? TC_ERR_IO : TC_OK;
}

static int json_event(tci_wctx *w, const tci_event *ev)
{
    json_w *j = w->priv;
    tci_sink *o = w->out;
    switch (ev->kind) {
    case TCI_EV_ENTER: TCI_PUT_LIT(o, ",\n{\"ph\":\"B\","); break;
    case TCI_EV_EXIT: TCI_PUT_LIT(o, ",\n{\"ph\":\"E\","); break;
    default: return json_point_event(w, ev);
    }
    tci_sink_write(o, j->prefix[ev->thread], j->prefix_len[ev->thread]);
    TCI_PUT_LIT(o, "\"ts\":");
    tci_sink_milli(o, ev->ts_ns - w->trace->start_ns);
    if (ev->cpu_ns != TCI_NO_TIME) {
        TCI_PUT_LIT(o, ",\"tts\":");
        tci_sink_milli(o, ev->cpu_ns);
    }
    TCI_PUT_LIT(o, ",\"name\":");
    tci_sink_write(o, j->name[ev->method], j->name_len[ev->method]);
    tci_sink_write(o, j->cat, j->cat_len);
    if (ev->flags & TCI_EVF_SYNTHETIC)
        tci_sink_puts(o, ev->kind == TCI_EV_ENTER ? ",\"args\":{\"synthetic\":\"open when tracing began\"}"
                                                  : ",\"args\":{\"synthetic\":\"open when tracing ended\"}");
    else if (ev->flags & TCI_EVF_UNWIND)
        tci_sink_puts(o, ",\"args\":{\"exit\":\"exception unwind\"}");
    else if (ev->flags & TCI_EVF_FORCED)
        tci_sink_puts(o, ",\"args\":{\"exit\":\"closed by the exit of a caller\"}");
    tci_sink_putc(o, '}');
    return o->err ? TC_ERR_IO : TC_OK;
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
    free(j->name);
    free(j->name_len);
    free(j->prefix);
    free(j->prefix_len);
    tci_arena_free(&j->arena);
}

const tci_writer tci_writer_json = {
    .name = "json",
    .description = "Chrome trace JSON (chrome://tracing, ui.perfetto.dev, speedscope)",
    .extensions = "json",
    .variants = (const tci_variant[]){{.name = "json", .extension = "json", .mime = "application/json",
                                       .mark = "\"generator\":\"traceconv "}, {0}},
    .priv_size = sizeof(json_w),
    .begin = json_begin,
    .event = json_event,
    .finish = json_finish,
    .close = json_close,
};
