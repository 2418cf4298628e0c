/* conv.c - the public conversion object: source -> probe -> reader ->
 * normalize -> writer -> sink. */
#include "tc_internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>

struct tc_conv {
    tci_options opt;
    tci_diag diag;
    tci_source src;
    tci_trace trace;
    const tci_reader *reader;
    tci_rctx rctx;
    enum { ST_NEW, ST_OPEN, ST_WRITTEN } state; /* traceconv.h: the life of a tc_conv */
    bool trace_ok;      /* the trace tables are initialized (a reset can fail for memory) */
    bool canceled;      /* the progress callback asked to stop */
    char *path;
    const char *input_file; /* path when the input is a real file (side files beside it), else NULL */
    char *process_name;
    char *mapping;
    char summary[192];
    tc_progress_fn progress;
    void *progress_user;
    char last_error[1024]; /* the message of the latest failed call (diag.error is per call) */
};

/* ---- every public call: a fresh error slot in, the latest failure kept out ---- */

static void call_begin(tc_conv *c) { c->diag.error[0] = 0; }

static int call_end(tc_conv *c, int rc)
{
    if (rc < 0) {
        if (!c->diag.error[0])
            tci_error(&c->diag, rc, "api", UINT64_MAX, "%s", tc_status_string(rc));
        memcpy(c->last_error, c->diag.error, sizeof c->last_error);
    }
    return rc;
}

static int state_error(tc_conv *c, const char *fmt, const char *arg)
{
    const char *input = c->diag.input;
    c->diag.input = NULL; /* misuse is about the call, not the input */
    tci_error(&c->diag, TC_ERR_STATE, "api", UINT64_MAX, fmt, arg);
    c->diag.input = input;
    return TC_ERR_STATE;
}

static int null_argument(tc_conv *c, const char *function)
{
    const char *input = c->diag.input;
    c->diag.input = NULL;
    tci_error(&c->diag, TC_ERR_USAGE, "api", UINT64_MAX, "%s: a required argument is NULL", function);
    c->diag.input = input;
    return TC_ERR_USAGE;
}

const char *tc_status_string(int status)
{
    switch (status) {
    case TC_OK: return "success";
    case TC_EOF: return "end of stream";
    case TC_ERR_IO: return "input/output error";
    case TC_ERR_FORMAT: return "malformed input";
    case TC_ERR_NOMEM: return "out of memory";
    case TC_ERR_USAGE: return "invalid argument or option";
    case TC_ERR_LIMIT: return "a resource limit was hit";
    case TC_ERR_UNSUPPORTED: return "the writer cannot express the input";
    case TC_ERR_STRICT: return "a warning under strict";
    case TC_ERR_STATE: return "call not allowed in this state";
    case TC_ERR_CANCELED: return "canceled";
    default: return "unknown status";
    }
}

int tc_version_number(void) { return TC_VERSION_NUMBER; }
const char *tc_version_string(void) { return TC_VERSION_STRING; }

tc_conv *tc_conv_new(void)
{
    tc_conv *c = tci_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (tci_trace_init(&c->trace) != TC_OK) {
        free(c);
        return NULL;
    }
    c->opt.max_input = TCI_DEFAULT_MAX_INPUT;
    c->opt.max_string = c->trace.max_string;
    c->opt.max_threads = c->trace.max_threads;
    c->opt.max_methods = c->trace.max_methods;
    c->trace_ok = true;
    return c;
}

/* Forget the input (a failed open): back to NEW with the options kept. */
static void reset_input(tc_conv *c)
{
    if (c->reader && c->reader->close && c->rctx.trace)
        c->reader->close(&c->rctx);
    free(c->rctx.priv);
    memset(&c->rctx, 0, sizeof c->rctx);
    c->reader = NULL;
    tci_source_close(&c->src);
    tci_trace_free(&c->trace);
    c->trace_ok = tci_trace_init(&c->trace) == TC_OK;
    for (size_t i = 0; i < c->diag.n_kept; i++)
        free(c->diag.kept[i]);
    memset(c->diag.fig, 0, sizeof c->diag.fig);
    c->diag.n_kept = 0;
    c->diag.muted = false;
    c->diag.input = NULL;
    free(c->path);
    c->path = NULL;
    c->input_file = NULL; /* pointed into path */
    c->state = ST_NEW;
}

void tc_conv_free(tc_conv *c)
{
    if (!c)
        return;
    if (c->reader && c->reader->close && c->rctx.trace)
        c->reader->close(&c->rctx);
    free(c->rctx.priv);
    tci_source_close(&c->src);
    tci_trace_free(&c->trace);
    for (size_t i = 0; i < c->diag.n_kept; i++)
        free(c->diag.kept[i]);
    free(c->path);
    free(c->process_name);
    free(c->mapping);
    free(c);
}

static int parse_bool(const char *v, bool *out)
{
    if (!v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
        *out = true;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
        *out = false;
    else
        return -1;
    return 0;
}

/* A positive count, with an optional K, M or G suffix (powers of 1024). */
static int parse_size(const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!v || *v < '0' || *v > '9')
        return -1;
    unsigned long long x = strtoull(v, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    else if (*end == 'M' || *end == 'm') shift = 20;
    else if (*end == 'G' || *end == 'g') shift = 30;
    if (shift)
        end++;
    if (*end || errno || x == 0 || x > (max >> shift))
        return -1;
    *out = (uint64_t)x << shift;
    return 0;
}

/* Options read when the input is opened (source, readers' open, table limits):
 * after an open they could not take effect. The rest are read by the write. */
static const char *const open_time_options[] = {"mapping", "max-input", "max-string", "max-threads",
                                                 "max-methods", "max-json", "max-events", "read-chunk"};

static bool is_open_time(const char *key)
{
    for (size_t i = 0; i < sizeof open_time_options / sizeof *open_time_options; i++)
        if (!strcmp(key, open_time_options[i]))
            return true;
    return false;
}

static int replace_string(char **slot, const char **opt, const char *value)
{
    char *copy = value ? strdup(value) : NULL;
    if (value && !copy)
        return TC_ERR_NOMEM;
    free(*slot);
    *slot = copy;
    *opt = copy;
    return TC_OK;
}

/* Parse and store one known option: TC_OK, -1 for a bad value, or an error status. */
static int apply_option(tc_conv *c, const char *key, const char *value)
{
    uint64_t n;
    if (!strcmp(key, "process-name"))
        return replace_string(&c->process_name, &c->opt.process_name, value);
    if (!strcmp(key, "mapping"))
        return replace_string(&c->mapping, &c->opt.mapping, value);
    if (!strcmp(key, "strict")) {
        int bad = parse_bool(value, &c->opt.strict);
        c->diag.strict = c->opt.strict;
        return bad;
    }
    if (!strcmp(key, "no-thread"))
        return parse_bool(value, &c->opt.no_thread);
    if (!strcmp(key, "merge-threads"))
        return parse_bool(value, &c->opt.merge_threads);
    if (!strcmp(key, "text"))
        return parse_bool(value, &c->opt.text);
    if (!strcmp(key, "weight")) {
        if (value && (!strcmp(value, "wall") || !strcmp(value, "cpu"))) {
            c->opt.weight_cpu = !strcmp(value, "cpu");
            return TC_OK;
        }
        return -1;
    }
    if (!strcmp(key, "max-depth")) {
        if (parse_size(value, 1000000, &n))
            return -1;
        c->opt.max_depth = (uint32_t)n;
        return TC_OK;
    }
    if (!strcmp(key, "max-input"))
        return parse_size(value, UINT64_MAX, &c->opt.max_input);
    if (!strcmp(key, "max-string") || !strcmp(key, "max-threads") || !strcmp(key, "max-methods")) {
        if (parse_size(value, UINT32_MAX, &n))
            return -1;
        *(key[4] == 's' ? &c->opt.max_string : key[4] == 't' ? &c->opt.max_threads : &c->opt.max_methods) =
            (uint32_t)n;
        return TC_OK;
    }
    if (!strcmp(key, "max-json"))
        return parse_size(value, UINT64_MAX, &c->opt.max_json);
    if (!strcmp(key, "max-events"))
        return parse_size(value, UINT64_MAX, &c->opt.max_events);
    if (!strcmp(key, "read-chunk")) {
        if (parse_size(value, 1 << 24, &n))
            return -1;
        c->opt.read_chunk = (size_t)n;
        return TC_OK;
    }
    return TC_ERR_USAGE;
}

static int set_option(tc_conv *c, const char *key, const char *value)
{
    if (!key)
        return null_argument(c, "tc_conv_set_option");
    bool open_time = is_open_time(key);
    if (c->state == ST_WRITTEN)
        return state_error(c, "option '%s' is set after the conversion; a tc_conv converts once", key);
    if (c->state == ST_OPEN && open_time)
        return state_error(c, "option '%s' is read when the input is opened; set it before tc_conv_open", key);
    int rc = apply_option(c, key, value);
    if (rc == TC_ERR_USAGE)
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX, "unknown option '%s'", key);
    if (rc == TC_ERR_NOMEM)
        return tci_error(&c->diag, TC_ERR_NOMEM, "options", UINT64_MAX, "out of memory");
    if (rc != TC_OK)
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX, "bad value '%s' for option '%s'",
                         value ? value : "", key);
    tci_options_given(&c->opt, key);
    return TC_OK;
}

int tc_conv_set_option(tc_conv *c, const char *key, const char *value)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    const char *input = c->diag.input;
    c->diag.input = NULL; /* "options: ...", not "in.trace: options: ..." */
    int rc = set_option(c, key, value);
    c->diag.input = input;
    return call_end(c, rc);
}

void tc_conv_set_progress(tc_conv *c, tc_progress_fn fn, void *user)
{
    if (!c)
        return;
    c->progress = fn;
    c->progress_user = user;
}

const char *tc_conv_error(const tc_conv *c) { return c ? c->last_error : "no tc_conv (NULL)"; }
const char *tc_conv_reader_name(const tc_conv *c) { return c && c->reader ? c->reader->name : NULL; }

/* The best-scoring reader; a tie at the top is an error that asks for -i. */
static int choose_reader(tc_conv *c, const char *path)
{
    int best = 0, second = 0;
    const tci_reader *winner = NULL, *runner = NULL;
    for (size_t i = 0; i < tci_reader_count(); i++) {
        const tci_reader *rd = tci_reader_at(i);
        int s = rd->probe(c->src.data, c->src.size, path);
        if (s > best) {
            second = best;
            runner = winner;
            best = s;
            winner = rd;
        } else if (s > second) {
            second = s;
            runner = rd;
        }
    }
    if (!winner)
        return tci_error(&c->diag, TC_ERR_FORMAT, "probe", UINT64_MAX,
                         "unknown input format (no reader recognizes it); name one with -i (see --list-formats)");
    if (best == second)
        return tci_error(&c->diag, TC_ERR_USAGE, "probe", UINT64_MAX,
                         "input format is ambiguous (%s and %s both score %d); choose one with -i",
                         winner->name, runner->name, best);
    c->reader = winner;
    return TC_OK;
}

/* Name the input and resolve -i; the first half of every open. */
static int open_prepare(tc_conv *c, const char *name, const char *format)
{
    if (c->state == ST_OPEN)
        return state_error(c, "%s: an input is already open; one tc_conv converts one input", c->path);
    if (c->state == ST_WRITTEN)
        return state_error(c, "%s: the input was already converted; one tc_conv converts one input", c->path);
    if (!c->trace_ok)
        return TC_ERR_NOMEM;
    c->path = strdup(name);
    if (!c->path)
        return TC_ERR_NOMEM;
    c->diag.input = c->path;
    c->trace.input_path = c->path;
    const char *slash = strrchr(c->path, '/');
    c->trace.input_name = slash ? slash + 1 : c->path;
    c->trace.max_string = c->opt.max_string;
    c->trace.max_threads = c->opt.max_threads;
    c->trace.max_methods = c->opt.max_methods;
    if (format && !(c->reader = tci_find_reader(format)))
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX,
                         "unknown input format '%s' (see --list-formats)", format);
    return TC_OK;
}

/* The source is ready: choose the reader and read the header and tables. */
static int open_reader(tc_conv *c, const char *name)
{
    int rc;
    if (c->src.size == 0) /* no format has an empty valid file, whichever reader is named */
        return tci_error(&c->diag, TC_ERR_FORMAT, "input", 0, "the input is empty");
    if (!c->reader && (rc = choose_reader(c, name)) != TC_OK)
        return rc;
    c->trace.reader = c->reader->name;
    c->rctx = (tci_rctx){.data = c->src.data, .size = c->src.size, .trace = &c->trace,
                         .diag = &c->diag, .opt = &c->opt, .source = &c->src, .input_file = c->input_file};
    if (c->reader->priv_size && !(c->rctx.priv = tci_calloc(1, c->reader->priv_size)))
        return tci_error(&c->diag, TC_ERR_NOMEM, c->reader->name, UINT64_MAX, "out of memory");
    rc = c->reader->open(&c->rctx);
    if (rc != TC_OK && !c->diag.error[0])
        tci_error(&c->diag, rc, c->reader->name, UINT64_MAX, "cannot read the input");
    return rc;
}

/* name.key or name.data of a legacy split pair (pre-1.0 SDK, ART.md §7): the
 * sibling's path, or NULL when path is not one of them. */
static char *legacy_sibling(const char *path)
{
    size_t n = strlen(path);
    const char *ext = n > 5 && !strcmp(path + n - 5, ".data") ? ".key"
                      : n > 4 && !strcmp(path + n - 4, ".key") ? ".data" : NULL;
    if (!ext)
        return NULL;
    size_t stem = n - (ext[1] == 'k' ? 5 : 4);
    char *s = malloc(stem + strlen(ext) + 1);
    if (s) {
        memcpy(s, path, stem);
        strcpy(s + stem, ext);
    }
    return s;
}

/* A legacy pair is its key section followed by its data: read them as one file. */
static int open_legacy_pair(tc_conv *c, const char *path, const char *sibling)
{
    struct stat st;
    if (stat(sibling, &st) != 0)
        return tci_error(&c->diag, TC_ERR_IO, "art", UINT64_MAX,
                         "a legacy split trace needs both halves: %s is missing", sibling);
    bool is_key = strcmp(path + strlen(path) - 4, ".key") == 0;
    return tci_source_open_concat(&c->src, is_key ? path : sibling, is_key ? sibling : path, &c->opt, &c->diag);
}

/* The end of every open: OPEN on success; a failure forgets the input (NEW). */
static int open_finish(tc_conv *c, int rc)
{
    if (rc == TC_OK)
        c->state = ST_OPEN;
    call_end(c, rc);
    if (rc != TC_OK && c->state == ST_NEW)
        reset_input(c);
    return rc;
}

int tc_conv_open(tc_conv *c, const char *path, const char *format)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    if (!path)
        return call_end(c, null_argument(c, "tc_conv_open"));
    int rc = open_prepare(c, path, format);
    c->input_file = rc == TC_OK && strcmp(path, "-") ? c->path : NULL;
    char *sibling = rc == TC_OK && (!format || !strcmp(format, "art")) ? legacy_sibling(path) : NULL;
    if (rc == TC_OK)
        rc = sibling ? open_legacy_pair(c, path, sibling) : tci_source_open(&c->src, path, &c->opt, &c->diag);
    free(sibling);
    return open_finish(c, rc == TC_OK ? open_reader(c, path) : rc);
}

int tc_conv_open_pair(tc_conv *c, const char *key_path, const char *data_path)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    if (!key_path || !data_path)
        return call_end(c, null_argument(c, "tc_conv_open_pair"));
    int rc = open_prepare(c, key_path, "art");
    if (rc == TC_OK)
        rc = tci_source_open_concat(&c->src, key_path, data_path, &c->opt, &c->diag);
    return open_finish(c, rc == TC_OK ? open_reader(c, key_path) : rc);
}

int tc_conv_open_memory(tc_conv *c, const void *data, size_t size, const char *name, const char *format)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    if (!data && size)
        return call_end(c, null_argument(c, "tc_conv_open_memory"));
    if (!name)
        name = "(memory)";
    int rc = open_prepare(c, name, format);
    if (rc == TC_OK)
        rc = tci_source_open_memory(&c->src, data ? data : (const void *)"", size, &c->opt, &c->diag);
    return open_finish(c, rc == TC_OK ? open_reader(c, name) : rc);
}

/* ---- the write pipeline --------------------------------------------------- */

typedef struct pipeline {
    tc_conv *c;
    const tci_writer *w;
    tci_wctx wctx;
    tci_calltree tree;
    bool has_tree;
    tci_merge *merge; /* TCI_WF_GLOBAL_ORDER: events wait here, then arrive in time order */
} pipeline;

static int pipeline_ready(void *user)
{
    pipeline *p = user;
    if (p->w->flags & TCI_WF_AGGREGATE) {
        if (tci_calltree_init(&p->tree, &p->c->trace, p->c->trace.n_threads) != TC_OK)
            return TC_ERR_NOMEM;
        p->tree.diag = &p->c->diag; /* saturated sums are reported */
        p->has_tree = true;
    }
    if (p->w->flags & TCI_WF_GLOBAL_ORDER) {
        int rc = tci_merge_open(&p->merge, &p->c->trace, &p->c->diag);
        if (rc != TC_OK)
            return rc;
    }
    return p->w->begin ? p->w->begin(&p->wctx) : TC_OK;
}

static int pipeline_event(void *user, const tci_event *ev)
{
    pipeline *p = user;
    if (p->has_tree && tci_calltree_event(&p->tree, ev) != TC_OK)
        return TC_ERR_NOMEM;
    if (p->merge)
        return tci_merge_add(p->merge, ev);
    return p->w->event ? p->w->event(&p->wctx, ev) : TC_OK;
}

static int pipeline_writer_event(void *user, const tci_event *ev)
{
    pipeline *p = user;
    return p->w->event ? p->w->event(&p->wctx, ev) : TC_OK;
}

/* After pass 2: the spilled events reach the writer in global time order. */
static int pipeline_merge(pipeline *p)
{
    p->c->diag.muted = true; /* as during pass 2: writers do not count input anomalies twice */
    int rc = tci_merge_run(p->merge, pipeline_writer_event, p);
    p->c->diag.muted = false;
    return rc;
}

/* normalize calls this; a non-zero answer of the caller's callback stops the conversion. */
static int conv_progress(void *user, uint64_t done, uint64_t total)
{
    tc_conv *c = user;
    if (!c->canceled && c->progress(c->progress_user, done, total))
        c->canceled = true;
    return c->canceled;
}

/* The one error message of a failed write: its cause, whichever step saw it. */
static int write_failed(tc_conv *c, const tci_writer *w, const tci_sink *sink, int rc)
{
    if (rc == TC_ERR_CANCELED) {
        c->diag.error[0] = 0;
        return tci_error(&c->diag, rc, w->name, UINT64_MAX, "canceled");
    }
    if (sink->err) { /* writers return a bare TC_ERR_IO (or worse) after the sink failed: say why */
        char why[256];
        if (strerror_r(sink->errnum, why, sizeof why) != 0)
            snprintf(why, sizeof why, "error %d", sink->errnum);
        c->diag.error[0] = 0;
        return tci_error(&c->diag, TC_ERR_IO, w->name, UINT64_MAX, "cannot write the output: %s", why);
    }
    if (rc == TC_ERR_NOMEM)
        tci_error(&c->diag, rc, w->name, UINT64_MAX, "out of memory");
    else if (!c->diag.error[0])
        tci_error(&c->diag, rc, w->name, UINT64_MAX, "conversion failed");
    return rc;
}

/* The conversion proper, into an open sink; the sink is closed (or discarded) here. */
static int run_pipeline(tc_conv *c, const tci_writer *w, tci_sink *sink, int rc)
{
    pipeline p = {.c = c, .w = w};
    p.wctx = (tci_wctx){.writer_name = w->name, .out = sink, .trace = &c->trace, .opt = &c->opt, .diag = &c->diag};
    if (rc == TC_OK && w->priv_size && !(p.wctx.priv = tci_calloc(1, w->priv_size)))
        rc = TC_ERR_NOMEM;
    if (rc == TC_OK)
        rc = tci_normalize_run(&c->rctx, c->reader, pipeline_ready, pipeline_event, &p,
                               c->progress ? conv_progress : NULL, c);
    if (c->canceled) /* also when the last progress call (after pass 2) asked to stop */
        rc = TC_ERR_CANCELED;
    if (rc == TC_OK && p.merge)
        rc = pipeline_merge(&p);
    if (rc == TC_OK && p.has_tree)
        tci_calltree_finish(&p.tree);
    if (rc == TC_OK && w->finish)
        rc = w->finish(&p.wctx, p.has_tree ? &p.tree : NULL);
    if (rc == TC_ERR_CANCELED)
        tci_sink_discard(sink); /* nothing more reaches the output */
    else if (tci_sink_close(sink) != TC_OK && rc == TC_OK)
        rc = TC_ERR_IO;
    if (w->close)
        w->close(&p.wctx);
    free(p.wctx.priv);
    tci_merge_free(p.merge);
    if (p.has_tree)
        tci_calltree_free(&p.tree);
    return rc == TC_OK && !sink->err ? TC_OK : write_failed(c, w, sink, rc == TC_OK ? TC_ERR_IO : rc);
}

static int conv_write(tc_conv *c, const char *writer, FILE *out, tc_write_fn fn, void *user)
{
    if (!writer || (!out && !fn))
        return null_argument(c, fn ? "tc_conv_write_to" : "tc_conv_write");
    if (c->state == ST_NEW)
        return state_error(c, "tc_conv_write before an input was opened%s", " (call tc_conv_open first)");
    if (c->state == ST_WRITTEN)
        return state_error(c, "%s: the input was already converted; open it again with a new tc_conv", c->path);
    const tci_writer *w = tci_find_writer(writer);
    if (!w)
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX,
                         "unknown output format '%s' (see --list-formats)", writer);
    c->state = ST_WRITTEN; /* from here the conversion consumes the input, success or not */
    c->canceled = false;
    if (tci_options_check_used(&c->opt, c->reader, w, &c->diag) != TC_OK)
        return TC_ERR_STRICT; /* an option neither the reader nor the writer uses, under strict */
    tci_sink sink;
    bool gzip = (w->flags & TCI_WF_GZIP) != 0;
    int rc = fn ? tci_sink_open_fn(&sink, fn, user, gzip) : tci_sink_open(&sink, out, gzip);
    return run_pipeline(c, w, &sink, rc);
}

int tc_conv_write(tc_conv *c, const char *writer, FILE *out)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    return call_end(c, conv_write(c, writer, out, NULL, NULL));
}

int tc_conv_write_to(tc_conv *c, const char *writer, tc_write_fn fn, void *user)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    return call_end(c, conv_write(c, writer, NULL, fn, user));
}

size_t tc_conv_figures(const tc_conv *c, tc_figure *out, size_t max)
{
    size_t n = 0;
    if (!c || !out)
        return 0;
    for (int i = 0; i < TCI_FIG__COUNT && n < max; i++)
        out[n++] = (tc_figure){tci_figure_name(i), c->diag.fig[i], tci_figure_kind(i)};
    return n;
}

const char *tc_conv_warning_at(const tc_conv *c, size_t index)
{
    return c && index < c->diag.n_kept ? c->diag.kept[index] : NULL;
}

const char *tc_conv_input_summary(const tc_conv *c)
{
    if (!c)
        return "";
    tc_conv *m = (tc_conv *)c;
    /* an ART-format file written by Dalvik (vm=dalvik) is called what it is */
    bool dalvik = c->trace.vm && !strcmp(c->trace.vm, "dalvik");
    snprintf(m->summary, sizeof m->summary, "%s %s, clock %s%s", dalvik ? "dalvik" : c->reader ? c->reader->name : "?",
             c->trace.detail, tci_clock_name(c->trace.clock), c->src.gzipped ? ", gzip" : "");
    return m->summary;
}

int tc_probe_file(const char *path, tc_probe_score *out, size_t max, char *err, size_t errlen)
{
    tci_options opt;
    tci_diag diag;
    tci_source src;
    if (!path || (!out && max) || (!err && errlen))
        return TC_ERR_USAGE;
    memset(&opt, 0, sizeof opt);
    memset(&diag, 0, sizeof diag);
    opt.max_input = TCI_DEFAULT_MAX_INPUT; /* probing a gzip bomb is refused like converting one */
    diag.input = path;
    int rc = tci_source_open(&src, path, &opt, &diag);
    if (rc != TC_OK) {
        if (errlen)
            snprintf(err, errlen, "%s", diag.error);
        return rc;
    }
    size_t n = 0;
    for (size_t i = 0; i < tci_reader_count() && n < max; i++) {
        const tci_reader *rd = tci_reader_at(i);
        out[n++] = (tc_probe_score){rd->name, rd->probe(src.data, src.size, path)};
    }
    tci_source_close(&src);
    return (int)n;
}
