/*
 * irdump.c - a line-per-fact text dump of the normalized IR: trace facts,
 * threads, methods, then every event. Used for reader goldens and for
 * debugging ("what did traceconv understand?"), not as a user format.
 * Times are ns relative to the trace start; flags: S synthetic, U unwind,
 * F forced by the exit of a caller.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

static int ir_begin(tci_wctx *w)
{
    const tci_trace *t = w->trace;
    tci_sink *o = w->out;
    tci_sink_printf(o, "traceconv-ir 1\ntrace reader=%s detail=\"%s\" clock=%s has_wall=%d has_cpu=%d pid=%lld start_ns=%lld end_ns=%lld elapsed_ns=%lld\n",
                    t->reader, t->detail, tci_clock_name(t->clock), t->has_wall, t->has_cpu, (long long)t->pid,
                    (long long)t->start_ns, (long long)t->end_ns, (long long)t->elapsed_ns);
    tci_sink_puts(o, "process ");
    tci_sink_json_string(o, t->process_name);
    tci_sink_putc(o, '\n');
    for (uint32_t i = 0; i < t->n_meta; i++) {
        tci_sink_puts(o, "meta ");
        tci_sink_json_string(o, t->meta[i].key);
        tci_sink_putc(o, ' ');
        tci_sink_json_string(o, t->meta[i].value);
        tci_sink_putc(o, '\n');
    }
    for (uint32_t i = 1; i < t->n_processes; i++) { /* process 0 is the "trace" line */
        tci_sink_printf(o, "process %u pid=%lld name=", i, (long long)t->processes[i].pid);
        tci_sink_json_string(o, t->processes[i].name);
        tci_sink_putc(o, '\n');
    }
    for (uint32_t i = 0; i < t->n_threads; i++) {
        tci_sink_printf(o, "thread %u tid=%llu records=%llu", i, (unsigned long long)t->threads[i].tid,
                        (unsigned long long)t->threads[i].records);
        if (t->threads[i].process)
            tci_sink_printf(o, " process=%u", t->threads[i].process);
        tci_sink_puts(o, " name=");
        tci_sink_json_string(o, t->threads[i].name);
        tci_sink_putc(o, '\n');
    }
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const tci_method *m = &t->methods[i];
        tci_sink_printf(o, "method %u id=0x%llx defined=%d line=%d file=", i, (unsigned long long)m->raw_id,
                        m->defined, m->line);
        tci_sink_json_string(o, m->file ? m->file : "");
        tci_sink_puts(o, " name=");
        tci_sink_json_string(o, m->full_name);
        tci_sink_putc(o, '\n');
    }
    for (uint32_t i = 0; i < t->n_stacks; i++) {
        if (t->stacks[i].parent == TCI_NONE)
            tci_sink_printf(o, "stack %u parent=- m=%u\n", i, t->stacks[i].method);
        else
            tci_sink_printf(o, "stack %u parent=%u m=%u\n", i, t->stacks[i].parent, t->stacks[i].method);
    }
    return o->err ? TC_ERR_IO : TC_OK;
}

static int ir_event(tci_wctx *w, const tci_event *ev)
{
    tci_sink *o = w->out;
    static const char *const tags[] = {[TCI_EV_ENTER] = "B t=", [TCI_EV_EXIT] = "E t=", [TCI_EV_INSTANT] = "I t=",
                                       [TCI_EV_COUNTER] = "C t=", [TCI_EV_ASYNC_BEGIN] = "S t=",
                                       [TCI_EV_ASYNC_END] = "F t=", [TCI_EV_SAMPLE] = "P t="};
    tci_sink_puts(o, tags[ev->kind]);
    tci_sink_u64(o, ev->thread);
    tci_sink_puts(o, " m=");
    tci_sink_u64(o, ev->method);
    tci_sink_puts(o, " d=");
    tci_sink_u64(o, ev->depth);
    tci_sink_puts(o, " ts=");
    tci_sink_i64(o, ev->ts_ns - w->trace->start_ns);
    tci_sink_puts(o, " cpu=");
    if (ev->cpu_ns == TCI_NO_TIME)
        tci_sink_putc(o, '-');
    else
        tci_sink_i64(o, ev->cpu_ns);
    if (ev->kind == TCI_EV_COUNTER)
        tci_sink_printf(o, " value=%.17g", ev->value);
    else if (ev->kind == TCI_EV_SAMPLE)
        tci_sink_printf(o, " id=%llu value=%.17g", (unsigned long long)ev->id, ev->value);
    else if (ev->kind == TCI_EV_ASYNC_BEGIN || ev->kind == TCI_EV_ASYNC_END)
        tci_sink_printf(o, " id=%llu", (unsigned long long)ev->id);
    if (ev->flags) {
        tci_sink_putc(o, ' ');
        if (ev->flags & TCI_EVF_SYNTHETIC) tci_sink_putc(o, 'S');
        if (ev->flags & TCI_EVF_UNWIND) tci_sink_putc(o, 'U');
        if (ev->flags & TCI_EVF_FORCED) tci_sink_putc(o, 'F');
    }
    tci_sink_putc(o, '\n');
    return o->err ? TC_ERR_IO : TC_OK;
}

static int ir_finish(tci_wctx *w, const tci_calltree *ct)
{
    (void)ct;
    for (int i = 0; i < TCI_FIG__COUNT; i++)
        if (w->diag->fig[i])
            tci_sink_printf(w->out, "figure %s=%llu\n", tci_figure_name(i), (unsigned long long)w->diag->fig[i]);
    return w->out->err ? TC_ERR_IO : TC_OK;
}

const tci_writer tci_writer_ir = {
    .name = "ir",
    .description = "text dump of the normalized events (for tests and debugging)",
    .extensions = "ir.txt",
    .variants = (const tci_variant[]){{.name = "ir", .extension = "ir.txt", .mime = "text/plain; charset=utf-8",
                                       .mark = "traceconv-ir "}, {0}},
    .begin = ir_begin,
    .event = ir_event,
    .finish = ir_finish,
};
