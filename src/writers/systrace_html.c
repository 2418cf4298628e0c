/*
 * systrace_html.c - Android systrace HTML (shared/docs/formats/SYSTRACE.md),
 * the container ui.perfetto.dev, trace processor and chrome://tracing read,
 * or with the option "text" the plain ftrace text (atrace's format).
 *
 * Layout (SYSTRACE.md §5, catapult's GenerateHTMLOutput without the viewer):
 *   <!DOCTYPE html> as the very first bytes (Perfetto sniffs the first 128
 *   bytes; a BOM or blank line before it defeats detection), a head with a
 *   title, then two `  <script class="trace-data" type="application/text">`
 *   blocks between <!-- BEGIN TRACE --> and <!-- END TRACE -->:
 *   1. PROCESS DUMP: a `ps` listing (long header: token 8 is the process
 *      name) then a `ps -T` listing (USER PID TID CMD: the rest of the line
 *      is the thread name). It must come before the ftrace block: Perfetto
 *      stops at the first </script> after ftrace text, and this is the only
 *      way to name processes in systrace input.
 *   2. ftrace text: `# tracer: nop` first (catapult imports the block whose
 *      first line starts with it), a `# ... TASK-PID ...` header line
 *      (Perfetto starts parsing there), then one tracing_mark_write line per
 *      event in the TGID format with 4-char irq flags:
 *      `%16s-%-5d (%5d) [000] ...1 %5d.%06d: tracing_mark_write: <payload>`.
 *   Payloads (atrace's libcutils): B|pid|name, E|pid, C|pid|name|int,
 *   S|pid|name|cookie and F|pid|name|cookie (async, process scoped),
 *   I|pid|name (instant; Perfetto reads it, catapult ignores it).
 *
 * Quirks we write for:
 *  - lines are in GLOBAL time order (the writer is TCI_WF_GLOBAL_ORDER: the
 *    core merges the per-thread streams, see merge.c); catapult warns and
 *    drops B's whose time goes backwards.
 *  - time is µs since the trace start with 6 decimals (the native format;
 *    9 digits parse as a double in Perfetto and can be off by 1 ns), like the
 *    json writer's ts. ns are truncated, which keeps the order.
 *  - the task field is the thread's whole name, not a 15-byte kernel comm:
 *    readers (Perfetto's tokenizer regex, ours) take everything before the
 *    leftmost `-<tid> (<tgid>) [<cpu>]`, so names keep their '-' and spaces
 *    (Perfetto shows them whole). Only a '-' that would itself look like that
 *    split point (`-<digits> ... [`) becomes '_'; "<...>" when empty. A line
 *    that starts with '#' (after blanks) is a comment to every reader, and
 *    one with `cpus=` a trace-cmd header to ours: a name's leading '#', or
 *    the '=' of a leading `cpus=`, becomes '_' so its events are read.
 *  - names: control characters (C0: newlines end a line; DEL, C1: the
 *    text is read with cat too) become ' '; '|' (a field
 *    separator for catapult) becomes '/' in payloads only; the ps NAME column
 *    is one token, so its spaces become '_'. Nothing inside <script> is
 *    decoded: '<', '>' and '&' stay raw (`<init>`), and the sink applies the
 *    script-data rule (escape.h) to each block's bytes as they are finally
 *    written, after every rewrite above and across the columns: `</` is
 *    written `<\/`, `<!` `<\!` and `<script` (any case) `<\script` (what
 *    could end or confuse a script element), also where a name ending in
 *    `<` or `<!-` meets what follows.
 *    The title is HTML text (escape.h's markup rule).
 *  - counters: atrace values are int64 (Perfetto rejects a decimal point):
 *    rounded; NaN/infinite values are skipped and counted.
 *  - a process without a pid (or pid 0, which systrace reads as idle) takes
 *    the tid of its first thread.
 *  - sampled stacks have no systrace form: counted as not written.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_options.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <math.h>
#include <stdlib.h>

typedef struct st_name {
    const char *s;
    uint32_t len;
} st_name;

typedef struct st_w {
    tci_arena arena;
    st_name *name;      /* per method: the payload-safe name */
    st_name *prefix;    /* per thread: "  comm-tid (  pid) [000] ...1 " */
    st_name *pid;       /* per thread: "|<pid>" */
    uint64_t samples, bad_counters;
} st_w;

/* ---- names ------------------------------------------------------------------ */

/* Where a name goes: what each place cannot hold differs (file comment). */
enum st_place {
    ST_PAYLOAD, /* a tracing_mark_write field: '|' separates fields */
    ST_TOKEN,   /* the ps NAME column: one whitespace-separated token */
    ST_LINE,    /* the rest of a line: ps CMD, a comment */
    ST_TASK     /* the task column: a line is split at its leftmost "-<tid> (<tgid>) [<cpu>]" */
};

/* Would a '-' at s[0] look like the "-<tid> (<tgid>) [<cpu>]" that readers
 * (Perfetto's regex, ours) split a line at, the leftmost match first? Checked
 * loosely: digits, blanks, then only "( ) - digits blanks" before a '['. */
static bool looks_like_tid(const char *s)
{
    size_t i = 1;
    while (s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == 1 || (s[i] != ' ' && s[i] != '\t'))
        return false;
    while (s[i] && strchr(" \t()-0123456789", s[i]))
        i++;
    return s[i] == '[';
}

/* Where a task column holding s would make its line a comment or a header to readers (after
 * the blanks they skip: the column's padding, a name's spaces and control bytes), the byte
 * that becomes '_'; or the length of s. */
static size_t comment_at(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && ((unsigned char)s[i] <= 0x20 || s[i] == 0x7F))
        i++;
    if (i < n && s[i] == '#')
        return i;
    return n - i >= 5 && !memcmp(s + i, "cpus=", 5) ? i + 4 : n;
}

/* A name safe in its place (rules in the file comment; the sink makes it safe inside <script>). */
static char *safe_text(tci_arena *a, const char *s, enum st_place place, uint32_t *len)
{
    size_t n = strlen(s);
    char *out = tci_arena_alloc(a, n + 1), *o = out;
    if (!out)
        return NULL;
    bool spaces_ok = place != ST_TOKEN;
    size_t comment = place == ST_TASK ? comment_at(s, n) : n;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == comment)
            *o++ = '_';
        else if (c == '|' && place == ST_PAYLOAD)
            *o++ = '/';
        else if (c == '-' && place == ST_TASK && looks_like_tid(s + i))
            *o++ = '_';
        else if (c < 0x20 || c == 0x7F || (!spaces_ok && c == ' '))
            *o++ = spaces_ok ? ' ' : '_';
        else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] <= 0x9F && (unsigned char)s[i + 1] >= 0x80)
            *o++ = spaces_ok ? ' ' : '_', i++; /* a C1 control (U+0080..U+009F), as the C0 ones */
        else
            *o++ = (char)c;
    }
    *o = 0;
    *len = (uint32_t)(o - out);
    return out;
}

/* The pid systrace shows for a process (file comment). */
static long long shown_pid(const tci_trace *t, uint32_t process)
{
    int64_t pid = t->processes[process].pid;
    if (pid > 0)
        return (long long)pid;
    uint32_t first = t->processes[process].first_thread;
    return first != TCI_NONE ? (long long)t->threads[first].tid : 0;
}

static bool process_used(const tci_trace *t, uint32_t process)
{
    return t->processes[process].first_thread != TCI_NONE;
}

/* ---- output ----------------------------------------------------------------- */

#define ST_SCRIPT "  <script class=\"trace-data\" type=\"application/text\">\n"
#define ST_SCRIPT_END "  </script>\n"

/* The opening tag of a trace-data block; from here on the sink keeps the script-data rule. */
static void open_block(tci_sink *o)
{
    TCI_PUT_LIT(o, ST_SCRIPT);
    tci_sink_script_data(o, true);
}

static void close_block(tci_sink *o)
{
    tci_sink_script_data(o, false);
    TCI_PUT_LIT(o, ST_SCRIPT_END);
}

static int write_process_dump(tci_wctx *w)
{
    st_w *s = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    uint32_t len;
    open_block(o);
    TCI_PUT_LIT(o, "PROCESS DUMP\n"
                   "USER           PID  PPID     VSZ    RSS WCHAN  PC S NAME                        COMM\n");
    for (uint32_t p = 0; p < t->n_processes; p++) {
        if (!process_used(t, p))
            continue;
        const char *name = safe_text(&s->arena, t->processes[p].name, ST_TOKEN, &len);
        if (!name)
            return TC_ERR_NOMEM;
        /* NAME and COMM both get the full name: readers differ on which token names the process */
        tci_sink_printf(o, "user     %10lld     0       0      0 0       0 S %-27s %s\n", shown_pid(t, p), name, name);
    }
    TCI_PUT_LIT(o, "USER           PID   TID CMD\n");
    for (uint32_t i = 0; i < t->n_threads; i++) {
        if (!t->threads[i].records)
            continue;
        const char *name = safe_text(&s->arena, t->threads[i].name, ST_LINE, &len);
        if (!name)
            return TC_ERR_NOMEM;
        tci_sink_printf(o, "user     %10lld %5llu %s\n", shown_pid(t, t->threads[i].process),
                        (unsigned long long)t->threads[i].tid, name);
    }
    close_block(o);
    return TC_OK;
}

static int write_ftrace_header(tci_wctx *w)
{
    st_w *s = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    uint32_t len;
    const char *input = safe_text(&s->arena, t->input_name ? t->input_name : "-", ST_LINE, &len);
    if (!input)
        return TC_ERR_NOMEM;
    TCI_PUT_LIT(o, "# tracer: nop\n#\n");
    char format[TCI_FORMAT_TEXT_MAX];
    tci_sink_printf(o, "# traceconv " TC_VERSION_STRING ": input %s, format %s, clock %s%s\n", input,
                    tci_trace_format(t, format, sizeof format), tci_clock_name(t->clock),
                    t->has_wall ? "" : " (timeline: thread CPU time, the input has no wall clock)");
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection it was made with, named as the options are */
    if (tci_selection_text(w->opt, NULL, sel, sizeof sel)) {
        const char *shown = safe_text(&s->arena, sel, ST_LINE, &len);
        if (!shown)
            return TC_ERR_NOMEM;
        tci_sink_printf(o, "# selection: %s\n", shown);
    }
    TCI_PUT_LIT(o, "#\n");
    TCI_PUT_LIT(o, "#                                      _-----=> irqs-off\n"
                   "#                                     / _----=> need-resched\n"
                   "#                                    | / _---=> hardirq/softirq\n"
                   "#                                    || / _--=> preempt-depth\n"
                   "#                                    ||| /     delay\n"
                   "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
                   "#              | |        |      |   ||||       |         |\n");
    return TC_OK;
}

static int st_begin(tci_wctx *w)
{
    st_w *s = w->priv;
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    s->name = tci_calloc(t->n_methods ? t->n_methods : 1, sizeof *s->name);
    s->prefix = tci_calloc(t->n_threads ? t->n_threads : 1, sizeof *s->prefix);
    s->pid = tci_calloc(t->n_threads ? t->n_threads : 1, sizeof *s->pid);
    if (!s->name || !s->prefix || !s->pid)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++) {
        if (!(s->name[i].s = safe_text(&s->arena, t->methods[i].full_name, ST_PAYLOAD, &s->name[i].len)))
            return TC_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < t->n_threads; i++) {
        uint32_t len;
        const char *task = safe_text(&s->arena, t->threads[i].name, ST_TASK, &len);
        if (!task)
            return TC_ERR_NOMEM;
        long long pid = shown_pid(t, t->threads[i].process);
        char *pre = tci_arena_printf(&s->arena, "%16s-%-5llu (%5lld) [000] ...1 ", len ? task : "<...>",
                                     (unsigned long long)t->threads[i].tid, pid);
        char *ps = tci_arena_printf(&s->arena, "|%lld", pid);
        if (!pre || !ps)
            return TC_ERR_NOMEM;
        s->prefix[i] = (st_name){pre, (uint32_t)strlen(pre)};
        s->pid[i] = (st_name){ps, (uint32_t)strlen(ps)};
    }
    if (!w->opt->text) {
        TCI_PUT_LIT(o, "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"/><title>");
        tci_put_markup(o, t->process_name ? t->process_name : "trace", TCI_ESC_REPLACE);
        TCI_PUT_LIT(o, " (traceconv)</title></head>\n<body>\n<!-- BEGIN TRACE -->\n");
        int rc = write_process_dump(w);
        if (rc != TC_OK)
            return rc;
        open_block(o);
    }
    return write_ftrace_header(w);
}

/* µs since the trace start as "%5llu.%06llu" (ns truncated; before the start: 0). */
static void put_time(tci_sink *o, int64_t rel_ns)
{
    uint64_t us = rel_ns > 0 ? (uint64_t)rel_ns / 1000 : 0, sec = us / 1000000, frac = us % 1000000;
    char b[40], *e = b + sizeof b, *p = e;
    for (int i = 0; i < 6; i++, frac /= 10)
        *--p = (char)('0' + frac % 10);
    *--p = '.';
    do
        *--p = (char)('0' + sec % 10);
    while (sec /= 10);
    while (e - p < 12)
        *--p = ' ';
    tci_sink_write(o, p, (size_t)(e - p));
}

static int st_event(tci_wctx *w, const tci_event *ev)
{
    st_w *s = w->priv;
    tci_sink *o = w->out;
    static const char tag[] = {[TCI_EV_ENTER] = 'B', [TCI_EV_EXIT] = 'E', [TCI_EV_INSTANT] = 'I',
                               [TCI_EV_COUNTER] = 'C', [TCI_EV_ASYNC_BEGIN] = 'S', [TCI_EV_ASYNC_END] = 'F'};
    if (ev->kind == TCI_EV_SAMPLE || ev->kind >= sizeof tag || !tag[ev->kind]) {
        s->samples++;
        return TC_OK;
    }
    if (ev->kind == TCI_EV_COUNTER && !isfinite(ev->value)) {
        s->bad_counters++;
        return TC_OK;
    }
    tci_sink_write(o, s->prefix[ev->thread].s, s->prefix[ev->thread].len);
    put_time(o, ev->ts_ns - w->trace->start_ns);
    TCI_PUT_LIT(o, ": tracing_mark_write: ");
    tci_sink_putc(o, tag[ev->kind]);
    tci_sink_write(o, s->pid[ev->thread].s, s->pid[ev->thread].len);
    if (ev->kind != TCI_EV_EXIT) {
        tci_sink_putc(o, '|');
        tci_sink_write(o, s->name[ev->method].s, s->name[ev->method].len);
    }
    if (ev->kind == TCI_EV_COUNTER) {
        double v = round(ev->value);
        tci_sink_putc(o, '|');
        tci_sink_i64(o, v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
    } else if (ev->kind == TCI_EV_ASYNC_BEGIN || ev->kind == TCI_EV_ASYNC_END) {
        tci_sink_putc(o, '|');
        tci_sink_i64(o, (int64_t)ev->id);
    }
    tci_sink_putc(o, '\n');
    return o->err ? TC_ERR_IO : TC_OK;
}

static int st_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    st_w *s = w->priv;
    tci_sink *o = w->out;
    tci_writer_dropped(w, s->samples, "sampled stacks not shown in systrace (see pprof or folded)");
    tci_writer_dropped(w, s->bad_counters, "counter values that are not finite numbers not written");
    if (!w->opt->text) {
        close_block(o);
        TCI_PUT_LIT(o, "<!-- END TRACE -->\n</body>\n</html>\n");
    }
    return o->err ? TC_ERR_IO : TC_OK;
}

static void st_close(tci_wctx *w)
{
    st_w *s = w->priv;
    if (!s)
        return;
    free(s->name);
    free(s->prefix);
    free(s->pid);
    tci_arena_free(&s->arena);
}

const tci_writer tci_writer_systrace = {
    .name = "systrace",
    .description = "Android systrace HTML (ui.perfetto.dev, chrome://tracing); --text: ftrace text",
    .extensions = "html",
    .options = (const tci_option_def[]){{.key = "text", .type = TCI_OPT_BOOL,
                                         .help = "plain ftrace text instead of HTML (-o systrace-text)",
                                         TCI_OPT_FIELD(text)},
                                        {0}},
    .variants = (const tci_variant[]){{.name = "systrace", .extension = "html", .mime = "text/html; charset=utf-8",
                                       .mark = " (traceconv)</title>", .aliases = "systrace-html"},
                                      {.name = "systrace-text", .extension = "systrace.txt",
                                       .mime = "text/plain; charset=utf-8", .mark = "# traceconv ", .option = "text",
                                       .aliases = "atrace,ftrace,systrace-txt"},
                                      {0}},
    .priv_size = sizeof(st_w),
    .flags = TCI_WF_GLOBAL_ORDER,
    .begin = st_begin,
    .event = st_event,
    .finish = st_finish,
    .close = st_close,
};
