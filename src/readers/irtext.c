/*
 * irtext.c - reads the IR dump that the `ir` writer prints, so that a trace
 * can be written by hand (tests: one event of every kind through every
 * writer) and so that `-o ir` round-trips.
 *
 *   traceconv-ir 1
 *   trace ... clock=dual has_wall=1 has_cpu=1 pid=42 start_ns=1000 ...
 *   process 1 pid=7 name="system_server"        (processes other than 0)
 *   thread 0 tid=42 records=3 [process=1] name="main"
 *   method 0 id=0x4 ... name="com.example.A.run: ()V"
 *   B t=0 m=0 d=0 ts=100 cpu=5 [S]      begin (times relative to start_ns)
 *   E t=0 m=0 ...                       end; m=- ends the innermost frame
 *   stack 0 parent=- m=3                sampled stacks (parent: an earlier stack)
 *   I/C/S/F t= m= ts= cpu= [value=]/[id=]  instant, counter, async begin/end
 *   P t= m=- ts= id=<stack> value=<ns>  a sample
 *   meta "<key>" "<value>"              the trace's metadata
 *   figure ...                          the dumping conversion's figures: computed again
 *
 * Every line is one of these, read (table and meta lines before the first event, events
 * after it), or a bad-line warning: nothing is skipped unsaid. The figure lines and the meta
 * not-converted are the accounting of the conversion that wrote the dump, which this one
 * makes again from what it reads; they are not records of the trace.
 *
 * Quirks: names are JSON string literals (read by the core's scanner, jscan.c); method lines
 * become plain names (their text is shown as is, nothing is re-split);
 * depth and S/U/F flags are ignored, since normalize derives them again.
 */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_jscan.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"
#include "text.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>

#define IR_MAGIC "traceconv-ir 1\n"

typedef struct irtext {
    size_t first_event; /* offset of the first event line */
    size_t pos;
    uint32_t *method;   /* dump index -> method table index (equal names share an entry) */
    uint32_t n_method, cap_method;
} irtext;

/* ---- one line (text.h: lines end at LF, CRs before it are not theirs) ------------ */

static bool next_line(const tci_rctx *r, size_t *pos, tci_line *l)
{
    return tci_next_line((const char *)r->data, r->size, pos, l);
}

/* The value after " key=" in the line (to the next space), or NULL. */
static const char *field(const tci_line *l, const char *key, size_t *len)
{
    size_t k = strlen(key);
    for (size_t i = 0; i + k + 1 <= l->n; i++) {
        if ((i == 0 || l->p[i - 1] == ' ') && memcmp(l->p + i, key, k) == 0 && l->p[i + k] == '=') {
            const char *v = l->p + i + k + 1;
            const char *end = memchr(v, ' ', (size_t)(l->p + l->n - v));
            *len = end ? (size_t)(end - v) : (size_t)(l->p + l->n - v);
            return v;
        }
    }
    return NULL;
}

static bool field_i64(const tci_line *l, const char *key, int64_t *out)
{
    size_t n;
    const char *v = field(l, key, &n);
    char buf[32];
    if (!v || !n || n >= sizeof buf)
        return false;
    memcpy(buf, v, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 0);
    if (*end || errno == ERANGE) /* a value past the int64 range is bad input, not its limit */
        return false;
    *out = x;
    return true;
}

/* A JSON string literal at p (what follows it on the line is ignored), decoded into
 * a new string *out: TC_OK, or an error naming what is wrong at offset `at`. */
static int string_literal(tci_rctx *r, const char *p, size_t n, uint64_t at, const char *what, char **out)
{
    tci_jscan sc = {p, n, 0, NULL, 0, false};
    if (!n || p[0] != '"' || !tci_jscan_value(&sc))
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", at, "%s is not a JSON string literal", what);
    uint64_t lone = 0;
    size_t len = tci_json_unescape(p + 1, sc.pos - 2, NULL, 0, &lone);
    if (!(*out = malloc(len + 1)))
        return tci_error(r->diag, TC_ERR_NOMEM, "ir", at, "out of memory");
    tci_json_unescape(p + 1, sc.pos - 2, *out, len, &lone);
    (*out)[len] = 0; /* a \u0000 ends the name, as it did when cJSON read it */
    return TC_OK;
}

/* name="..." is the rest of the line: a JSON string literal. */
static int field_name(tci_rctx *r, const tci_line *l, char **out)
{
    size_t n;
    const char *v = field(l, "name", &n);
    if (!v)
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "line has no name=\"...\"");
    return string_literal(r, v, (size_t)(l->p + l->n - v), l->off + (size_t)(v - l->p), "name", out);
}

/* The event letters, in the order of event_actions; -1 for anything else
 * (memchr, not strchr: strchr also "finds" a NUL byte at the end). */
static const char event_letters[] = {'B', 'E', 'I', 'C', 'S', 'F', 'P'};

static int event_kind(const tci_line *l)
{
    if (l->n < 2 || l->p[1] != ' ')
        return -1;
    const char *k = memchr(event_letters, l->p[0], sizeof event_letters);
    return k ? (int)(k - event_letters) : -1;
}

/* ---- the tables -------------------------------------------------------------- */

static int header_line(tci_rctx *r, const tci_line *l)
{
    tci_trace *t = r->trace;
    int64_t v;
    size_t n;
    const char *clock = field(l, "clock", &n);
    if (clock && n == 4 && !memcmp(clock, "dual", 4)) t->clock = TCI_CLOCK_DUAL;
    else if (clock && n == 4 && !memcmp(clock, "wall", 4)) t->clock = TCI_CLOCK_WALL;
    else if (clock && n == 10 && !memcmp(clock, "thread-cpu", 10)) t->clock = TCI_CLOCK_THREAD_CPU;
    t->has_wall = !field_i64(l, "has_wall", &v) || v;
    t->has_cpu = field_i64(l, "has_cpu", &v) && v;
    if (field_i64(l, "pid", &v))
        t->pid = v;
    if (field_i64(l, "start_ns", &v)) {
        t->start_ns = v;
        t->start_given = true; /* else the first event's time, as for every input without a start */
    }
    if (field_i64(l, "elapsed_ns", &v)) {
        t->elapsed_ns = v; /* normalize checks it against the start time */
        t->elapsed_offset = l->off + (size_t)(field(l, "elapsed_ns", &n) - l->p);
    }
    return TC_OK;
}

static int table_line(tci_rctx *r, const tci_line *l)
{
    tci_trace *t = r->trace;
    int64_t v, tid, pid;
    char *name = NULL;
    int rc = field_name(r, l, &name);
    if (rc != TC_OK)
        return rc;
    if (l->n > 8 && !memcmp(l->p, "process ", 8)) {
        uint32_t p;
        if (!field_i64(l, "pid", &pid))
            rc = tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "process line without pid=");
        else if ((p = tci_trace_process(t, pid)) == TCI_NONE ||
                 tci_trace_name_process(t, p, name, strlen(name), 1) != TC_OK)
            rc = tci_trace_fail(t, r->diag, "ir", l->off);
    } else if (l->n > 7 && !memcmp(l->p, "thread ", 7)) {
        uint32_t th;
        if (!field_i64(l, "tid", &tid))
            rc = tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "thread line without tid=");
        else if (tid < 0) /* thread ids are unsigned in the tables: it would wrap */
            rc = tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "thread tid=%lld is negative: a thread id never is",
                           (long long)tid);
        else if ((th = tci_trace_add_thread(t, (uint64_t)tid)) == TCI_NONE ||
                 tci_trace_name_thread(t, th, name, strlen(name), 1) != TC_OK)
            rc = tci_trace_fail(t, r->diag, "ir", l->off);
        else if (field_i64(l, "process", &v) && (v < 0 || v >= t->n_processes))
            rc = tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "thread of process %lld, which is not listed", (long long)v);
        else if (field_i64(l, "process", &v))
            t->threads[th].process = (uint32_t)v;
    } else { /* a method: the dump numbers them in line order */
        irtext *x = r->priv;
        uint32_t m = tci_trace_name(t, name, strlen(name));
        if (m == TCI_NONE)
            rc = tci_trace_fail(t, r->diag, "ir", l->off);
        else if (tci_grow((void **)&x->method, &x->cap_method, x->n_method, sizeof *x->method) != 0)
            rc = tci_error(r->diag, TC_ERR_NOMEM, "ir", l->off, "out of memory");
        else
            x->method[x->n_method++] = m;
    }
    free(name);
    return rc;
}

/* stack <i> parent=<j>|- m=<method>: stacks are listed in order, parents first */
static int stack_line(tci_rctx *r, const tci_line *l)
{
    const irtext *x = r->priv;
    int64_t parent = -1, m;
    size_t n;
    const char *pv = field(l, "parent", &n);
    bool root = pv && n == 1 && *pv == '-';
    if ((!root && !field_i64(l, "parent", &parent)) || !field_i64(l, "m", &m) || m < 0 || m >= x->n_method ||
        (!root && (parent < 0 || parent >= r->trace->n_stacks)))
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "stack line needs parent=<earlier stack>|- m=<method>");
    if (tci_trace_stack(r->trace, root ? TCI_NONE : (uint32_t)parent, x->method[m]) == TCI_NONE)
        return tci_error(r->diag, TC_ERR_NOMEM, "ir", l->off, "out of memory");
    return TC_OK;
}

/* meta "<key>" "<value>": two JSON string literals */
static int meta_line(tci_rctx *r, const tci_line *l)
{
    tci_jscan sc = {l->p + 5, l->n - 5, 0, NULL, 0, false};
    if (!tci_jscan_value(&sc) || sc.pos + 1 >= l->n - 5 || l->p[5 + sc.pos] != ' ')
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "meta line is not meta \"<key>\" \"<value>\"");
    size_t vat = 5 + sc.pos + 1;
    char *key = NULL, *value = NULL;
    int rc = string_literal(r, l->p + 5, sc.pos, l->off + 5, "meta key", &key);
    if (rc == TC_OK)
        rc = string_literal(r, l->p + vat, l->n - vat, l->off + vat, "meta value", &value);
    if (rc == TC_OK && !strcmp(key, "not-converted")) /* the dumping conversion's: made again */
        ;
    else if (rc == TC_OK && tci_trace_meta_full(r->trace, key, strlen(key)))
        tci_not_converted(r->diag, "ir", l->off, "meta past 4096 keys", 19);
    else if (rc == TC_OK && tci_trace_add_meta(r->trace, key, strlen(key), value, strlen(value)) != TC_OK)
        rc = tci_trace_fail(r->trace, r->diag, "ir", l->off);
    free(key);
    free(value);
    return rc;
}

static bool is_figure(const tci_line *l) { return l->n > 7 && !memcmp(l->p, "figure ", 7); }

/* A line that is no line of the dump (or a table line after the events began): a bad line. */
static void bad_line(tci_rctx *r, const tci_line *l, const char *why)
{
    tci_warn(r->diag, TCI_FIG_BAD_LINE, "ir", l->off, "line skipped: %s: %.*s", why, (int)(l->n > 40 ? 40 : l->n), l->p);
}

/* process "<name>": the input's own process (index 0) */
static int process0_line(tci_rctx *r, const tci_line *l)
{
    char *name = NULL;
    int rc = string_literal(r, l->p + 8, l->n - 8, l->off + 8, "process name", &name);
    if (rc == TC_OK && tci_trace_name_process(r->trace, 0, name, strlen(name), 1) != TC_OK)
        rc = tci_trace_fail(r->trace, r->diag, "ir", l->off);
    free(name);
    return rc;
}

static int ir_open(tci_rctx *r)
{
    irtext *x = r->priv;
    tci_trace *t = r->trace;
    size_t pos = 0;
    tci_line l;
    if (r->size < strlen(IR_MAGIC) || memcmp(r->data, IR_MAGIC, strlen(IR_MAGIC)) != 0)
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", 0, "does not start with \"traceconv-ir 1\"");
    next_line(r, &pos, &l);
    t->time_unit_ns = 1;
    t->has_wall = true;
    while (true) {
        size_t at = pos;
        if (!next_line(r, &pos, &l) || event_kind(&l) >= 0) {
            x->first_event = at;
            break;
        }
        int rc = TC_OK;
        if (l.n > 6 && !memcmp(l.p, "trace ", 6))
            rc = header_line(r, &l);
        else if (l.n > 9 && !memcmp(l.p, "process \"", 9))
            rc = process0_line(r, &l);
        else if (l.n > 6 && !memcmp(l.p, "stack ", 6))
            rc = stack_line(r, &l);
        else if ((l.n > 8 && !memcmp(l.p, "process ", 8) && l.p[8] != '"') || (l.n > 7 && !memcmp(l.p, "thread ", 7)) ||
                 (l.n > 7 && !memcmp(l.p, "method ", 7)))
            rc = table_line(r, &l);
        else if (l.n > 5 && !memcmp(l.p, "meta ", 5))
            rc = meta_line(r, &l);
        else if (l.n && !is_figure(&l))
            bad_line(r, &l, "not a line of the IR dump");
        if (rc != TC_OK)
            return rc;
    }
    if (t->clock == TCI_CLOCK_UNKNOWN)
        t->clock = t->has_cpu ? TCI_CLOCK_DUAL : TCI_CLOCK_WALL;
    snprintf(t->detail, sizeof t->detail, "text dump");
    x->pos = x->first_event;
    return TC_OK;
}

/* ---- events ------------------------------------------------------------------ */

static int event_line(tci_rctx *r, const tci_line *l, tci_raw *ev)
{
    static const uint8_t actions[] = {TCI_ACT_ENTER, TCI_ACT_EXIT, TCI_ACT_INSTANT, TCI_ACT_COUNTER,
                                      TCI_ACT_ASYNC_BEGIN, TCI_ACT_ASYNC_END, TCI_ACT_SAMPLE};
    int kind = event_kind(l);
    const tci_trace *t = r->trace;
    int64_t th, m = 0, ts, cpu, id = 0;
    size_t n;
    const char *mv = field(l, "m", &n);
    bool no_method = mv && n == 1 && *mv == '-';
    if (!field_i64(l, "t", &th) || th < 0 || th >= t->n_threads || (!no_method && !field_i64(l, "m", &m)) ||
        !field_i64(l, "ts", &ts))
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "event needs t=<thread> m=<method> ts=<ns>");
    const irtext *x = r->priv;
    if (no_method ? (l->p[0] != 'E' && l->p[0] != 'P') : (m < 0 || m >= x->n_method))
        return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "event names an unknown method");
    ev->action = actions[kind];
    ev->thread = (uint32_t)th;
    ev->method = no_method ? TCI_NONE : x->method[m];
    ev->wall = ts;
    ev->cpu = field_i64(l, "cpu", &cpu) ? cpu : TCI_NO_TIME;
    ev->offset = l->off;
    ev->value = 0;
    ev->id = field_i64(l, "id", &id) ? (uint64_t)id : 0;
    const char *val = field(l, "value", &n);
    if (val) {
        char buf[64];
        if (n >= sizeof buf)
            return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "value too long");
        memcpy(buf, val, n);
        buf[n] = 0;
        ev->value = strtod(buf, NULL);
    }
    if (!t->has_cpu)
        ev->cpu = TCI_NO_TIME;
    if (ev->action == TCI_ACT_SAMPLE) { /* named by its leaf frame */
        if (ev->id >= t->n_stacks)
            return tci_error(r->diag, TC_ERR_FORMAT, "ir", l->off, "sample of a stack that is not listed");
        ev->method = t->stacks[ev->id].method;
    }
    return TC_OK;
}

static int ir_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    irtext *x = r->priv;
    size_t k = 0;
    tci_line l;
    while (k < max && next_line(r, &x->pos, &l)) {
        if (event_kind(&l) < 0) { /* figure lines, blank lines; anything else is said */
            if (l.n && !is_figure(&l))
                bad_line(r, &l, "not an event line (the tables come before the first event)");
            continue;
        }
        int rc = event_line(r, &l, &ev[k]);
        if (rc != TC_OK)
            return rc;
        k++;
    }
    r->pos = x->pos;
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int ir_rewind(tci_rctx *r)
{
    irtext *x = r->priv;
    x->pos = x->first_event;
    return TC_OK;
}

static void ir_close(tci_rctx *r)
{
    irtext *x = r->priv;
    if (x)
        free(x->method);
}

static int ir_probe(const uint8_t *buf, size_t len, const char *filename)
{
    (void)filename;
    return len >= strlen(IR_MAGIC) && memcmp(buf, IR_MAGIC, strlen(IR_MAGIC)) == 0 ? 100 : 0;
}

const tci_reader tci_reader_ir = {
    .name = "ir",
    .description = "traceconv's own IR text dump (-o ir), for tests and hand-made traces",
    .extensions = "ir.txt",
    .priv_size = sizeof(irtext),
    .probe = ir_probe,
    .open = ir_open,
    .read = ir_read,
    .rewind = ir_rewind,
    .close = ir_close,
};
