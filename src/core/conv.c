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
    bool opened, written;
    char *path;
    char *process_name;
    char *mapping;
    char summary[192];
    tc_progress_fn progress;
    void *progress_user;
};

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
    return c;
}

void tc_conv_free(tc_conv *c)
{
    if (!c)
        return;
    if (c->reader && c->reader->close)
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

int tc_conv_set_option(tc_conv *c, const char *key, const char *value)
{
    uint64_t n;
    int bad = 0;
    if (!strcmp(key, "process-name")) {
        free(c->process_name);
        c->process_name = value ? strdup(value) : NULL;
        c->opt.process_name = c->process_name;
    } else if (!strcmp(key, "mapping")) {
        free(c->mapping);
        c->mapping = value ? strdup(value) : NULL;
        c->opt.mapping = c->mapping;
    } else if (!strcmp(key, "strict")) {
        bad = parse_bool(value, &c->opt.strict);
        c->diag.strict = c->opt.strict;
    } else if (!strcmp(key, "no-thread")) {
        bad = parse_bool(value, &c->opt.no_thread);
    } else if (!strcmp(key, "merge-threads")) {
        bad = parse_bool(value, &c->opt.merge_threads);
    } else if (!strcmp(key, "text")) {
        bad = parse_bool(value, &c->opt.text);
    } else if (!strcmp(key, "weight")) {
        if (value && !strcmp(value, "wall"))
            c->opt.weight_cpu = false;
        else if (value && !strcmp(value, "cpu"))
            c->opt.weight_cpu = true;
        else
            bad = 1;
    } else if (!strcmp(key, "max-depth")) {
        bad = parse_size(value, 1000000, &n);
        if (!bad)
            c->opt.max_depth = (uint32_t)n;
    } else if (!strcmp(key, "max-input")) {
        bad = parse_size(value, UINT64_MAX, &c->opt.max_input);
    } else if (!strcmp(key, "max-string") || !strcmp(key, "max-threads") || !strcmp(key, "max-methods")) {
        bad = parse_size(value, UINT32_MAX, &n);
        if (!bad)
            *(key[4] == 's' ? &c->opt.max_string : key[4] == 't' ? &c->opt.max_threads : &c->opt.max_methods) =
                (uint32_t)n;
    } else if (!strcmp(key, "max-json")) {
        bad = parse_size(value, UINT64_MAX, &c->opt.max_json);
    } else if (!strcmp(key, "max-events")) {
        bad = parse_size(value, UINT64_MAX, &c->opt.max_events);
    } else if (!strcmp(key, "read-chunk")) {
        bad = parse_size(value, 1 << 24, &n);
        if (!bad)
            c->opt.read_chunk = (size_t)n;
    } else {
        c->diag.error[0] = 0;
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX, "unknown option '%s'", key);
    }
    if (bad) {
        c->diag.error[0] = 0;
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX, "bad value '%s' for option '%s'",
                         value ? value : "", key);
    }
    return TC_OK;
}

void tc_conv_set_progress(tc_conv *c, tc_progress_fn fn, void *user)
{
    c->progress = fn;
    c->progress_user = user;
}

const char *tc_conv_error(const tc_conv *c) { return c->diag.error; }
const char *tc_conv_reader_name(const tc_conv *c) { return c->reader ? c->reader->name : NULL; }

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
    if (c->opened)
        return tci_error(&c->diag, TC_ERR_USAGE, "api", UINT64_MAX, "an input is already open");
    c->opened = true;
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
                         .diag = &c->diag, .opt = &c->opt, .source = &c->src};
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

int tc_conv_open(tc_conv *c, const char *path, const char *format)
{
    int rc = open_prepare(c, path, format);
    char *sibling = rc == TC_OK && (!format || !strcmp(format, "art")) ? legacy_sibling(path) : NULL;
    if (rc == TC_OK)
        rc = sibling ? open_legacy_pair(c, path, sibling) : tci_source_open(&c->src, path, &c->opt, &c->diag);
    free(sibling);
    return rc == TC_OK ? open_reader(c, path) : rc;
}

int tc_conv_open_pair(tc_conv *c, const char *key_path, const char *data_path)
{
    int rc = open_prepare(c, key_path, "art");
    if (rc == TC_OK)
        rc = tci_source_open_concat(&c->src, key_path, data_path, &c->opt, &c->diag);
    return rc == TC_OK ? open_reader(c, key_path) : rc;
}

int tc_conv_open_memory(tc_conv *c, const void *data, size_t size, const char *name, const char *format)
{
    if (!name)
        name = "(memory)";
    int rc = open_prepare(c, name, format);
    if (rc == TC_OK)
        rc = tci_source_open_memory(&c->src, data, size, &c->opt, &c->diag);
    return rc == TC_OK ? open_reader(c, name) : rc;
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

int tc_conv_write(tc_conv *c, const char *writer, FILE *out)
{
    const tci_writer *w = tci_find_writer(writer);
    if (!w)
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX,
                         "unknown output format '%s' (see --list-formats)", writer);
    if (!c->opened || !c->reader || c->diag.error[0])
        return tci_error(&c->diag, TC_ERR_USAGE, "api", UINT64_MAX, "no input is open");
    if (c->written)
        return tci_error(&c->diag, TC_ERR_USAGE, "api", UINT64_MAX, "an input converts once; open it again");
    c->written = true;

    tci_sink sink;
    pipeline p = {.c = c, .w = w};
    p.wctx = (tci_wctx){.writer_name = w->name, .out = &sink, .trace = &c->trace, .opt = &c->opt, .diag = &c->diag};
    int rc = tci_sink_open(&sink, out, w->flags & TCI_WF_GZIP);
    if (rc == TC_OK && w->priv_size && !(p.wctx.priv = tci_calloc(1, w->priv_size)))
        rc = TC_ERR_NOMEM;
    if (rc == TC_OK)
        rc = tci_normalize_run(&c->rctx, c->reader, pipeline_ready, pipeline_event, &p, c->progress,
                               c->progress_user);
    if (rc == TC_OK && p.merge)
        rc = pipeline_merge(&p);
    if (rc == TC_OK && p.has_tree)
        tci_calltree_finish(&p.tree);
    if (rc == TC_OK && w->finish)
        rc = w->finish(&p.wctx, p.has_tree ? &p.tree : NULL);
    int src = tci_sink_close(&sink);
    if (rc == TC_OK && (src != TC_OK || sink.err))
        rc = tci_error(&c->diag, TC_ERR_IO, w->name, UINT64_MAX, "cannot write the output: %s", strerror(errno));
    if (w->close)
        w->close(&p.wctx);
    free(p.wctx.priv);
    tci_merge_free(p.merge);
    if (p.has_tree)
        tci_calltree_free(&p.tree);
    if (rc == TC_ERR_NOMEM)
        tci_error(&c->diag, rc, w->name, UINT64_MAX, "out of memory");
    else if (rc != TC_OK && !c->diag.error[0])
        tci_error(&c->diag, rc, w->name, UINT64_MAX, "conversion failed");
    return rc;
}

size_t tc_conv_figures(const tc_conv *c, tc_figure *out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < TCI_FIG__COUNT && n < max; i++)
        out[n++] = (tc_figure){tci_figure_name(i), c->diag.fig[i], tci_figure_kind(i)};
    return n;
}

const char *tc_conv_warning_at(const tc_conv *c, size_t index)
{
    return index < c->diag.n_kept ? c->diag.kept[index] : NULL;
}

const char *tc_conv_input_summary(const tc_conv *c)
{
    tc_conv *m = (tc_conv *)c;
    snprintf(m->summary, sizeof m->summary, "%s %s, clock %s%s", c->reader ? c->reader->name : "?",
             c->trace.detail, tci_clock_name(c->trace.clock), c->src.gzipped ? ", gzip" : "");
    return m->summary;
}

int tc_probe_file(const char *path, tc_probe_score *out, size_t max, char *err, size_t errlen)
{
    tci_options opt;
    tci_diag diag;
    tci_source src;
    memset(&opt, 0, sizeof opt);
    memset(&diag, 0, sizeof diag);
    opt.max_input = TCI_DEFAULT_MAX_INPUT; /* probing a gzip bomb is refused like converting one */
    diag.input = path;
    int rc = tci_source_open(&src, path, &opt, &diag);
    if (rc != TC_OK) {
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
