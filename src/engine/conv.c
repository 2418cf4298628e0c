/* conv.c - the public conversion object: source -> probe -> reader -> normalize -> writer ->
 * sink. The engine's (tc_engine.h): it assembles the hub's stages, the readers and writers of
 * the registry, the analyses every output is told (the app, the threads' order) and the
 * transforms (deobfuscate); nothing below calls it. */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_cancel.h"
#include "tc_codegroup.h"
#include "tc_engine.h"
#include "tc_deobf.h"
#include "tc_diag.h"
#include "tc_handoff.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_threadrank.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <errno.h>
#include <pthread.h>
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
    char *strings[TCI_MAX_OPTION_KEYS]; /* the string options' values (tci_option_set) */
    tci_deobf *deobf;   /* option deobfuscate's index, from the open */
    char summary[192];
    tc_progress_fn progress;
    void *progress_user;
    pthread_mutex_t *progress_lock; /* while two threads write (option threads): one progress call at a time */
    uint64_t progress_done; /* the last figure given to the callback: the next is never below it */
    char last_error[1024]; /* the message of the latest failed call (diag.error is per call) */
    char *out_errors;      /* the messages of a write's outputs (tc_output.error point here) */
    /* What the call tree tells every output, found once after pass 2 (views_of_tree): the
     * app (tc_codegroup.h), the views' order of threads and whether idle waits are most of the
     * time (tc_threadrank.h); none without a tree. */
    tci_arena views_arena;
    tci_app_package app;
    bool app_ok;           /* app was looked for and found (or found to be none) */
    const char *app_text;  /* tc_conv_app */
    uint32_t *thread_order; /* NULL: the tables' order */
    bool mostly_idle;
};

/* The mapping applied by normalize's transform hook between its passes. */
static int apply_deobf(void *mapping, tci_trace *t, tci_diag *d) { return tci_deobf_apply(mapping, t, d); }

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
    case TC_ERR_NO_TRACE: return "no trace in the input";
    case TC_ERR_EMPTY_SELECTION: return "the selection names nothing in the input";
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
    tci_deobf_free(c->deobf);
    c->deobf = NULL;
    tci_source_close(&c->src);
    tci_trace_free(&c->trace);
    c->trace_ok = tci_trace_init(&c->trace) == TC_OK;
    for (size_t i = 0; i < c->diag.n_kept; i++)
        free(c->diag.kept[i]);
    memset(c->diag.fig, 0, sizeof c->diag.fig);
    memset(c->diag.left, 0, sizeof c->diag.left);
    c->diag.left_module = NULL;
    c->diag.n_kept = 0;
    memset(c->diag.kept_of, 0, sizeof c->diag.kept_of);
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
    tci_deobf_free(c->deobf);
    tci_source_close(&c->src);
    tci_trace_free(&c->trace);
    for (size_t i = 0; i < c->diag.n_kept; i++)
        free(c->diag.kept[i]);
    free(c->path);
    tci_option_strings_free(c->strings);
    free(c->out_errors);
    free(c->thread_order);
    tci_arena_free(&c->views_arena);
    free(c);
}

/* The checks of the object's state, then the option's row (options.c). */
static int set_option(tc_conv *c, const char *key, const char *value)
{
    if (!key)
        return null_argument(c, "tc_conv_set_option");
    const tci_option_def *def = tci_option_find(key);
    if (c->state == ST_WRITTEN)
        return state_error(c, "option '%s' is set after the conversion; a tc_conv converts once", key);
    if (c->state == ST_OPEN && def && (def->flags & TCI_OPTF_OPEN))
        return state_error(c, "option '%s' is read when the input is opened; set it before tc_conv_open", key);
    int rc = tci_option_set(&c->opt, c->strings, key, value, &c->diag);
    c->diag.strict = c->opt.strict;
    return rc;
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
    if (format && !(c->reader = tci_find_reader(format))) {
        char names[256];
        size_t len = 0;
        names[0] = 0;
        for (size_t i = 0; i < tci_reader_count() && len < sizeof names; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", tci_reader_at(i)->name);
        return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX, "unknown input format '%s' (readers: %s)",
                         format, names);
    }
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
    /* the mapping is indexed with the input, so that a bad one fails the open (no output is begun) */
    if (rc == TC_OK && c->opt.deobfuscate && (rc = tci_deobf_open(&c->deobf, c->opt.deobfuscate, &c->opt, &c->diag)) == TC_OK)
        c->rctx.transform = (tci_transform){apply_deobf, c->deobf};
    return rc;
}

/* An input kept in two files (tci_reader.pair_parts: ART's legacy pairs), when path names
 * a part of one: the named reader's, else any reader's that has such inputs. The parts are
 * opened as one source; TCI_NOT_A_PAIR when path is an input of its own. */
static int open_parts(tc_conv *c, const char *path)
{
    size_t n = c->reader ? 1 : tci_reader_count();
    for (size_t i = 0; i < n; i++) {
        const tci_reader *rd = c->reader ? c->reader : tci_reader_at(i);
        char *parts[2];
        int rc = rd->pair_parts ? rd->pair_parts(path, NULL, parts, &c->diag) : TCI_NOT_A_PAIR;
        if (rc == TCI_NOT_A_PAIR)
            continue;
        if (rc == TC_OK) {
            rc = tci_source_open_concat(&c->src, parts[0], parts[1], &c->opt, &c->diag);
            free(parts[0]);
            free(parts[1]);
        }
        return rc;
    }
    return TCI_NOT_A_PAIR;
}

/* A mapped input that shrank while it was read (guard.c): whatever the reader
 * made of the zero pages that replaced it, the call fails with this. */
static int check_unchanged(tci_source *src, tci_diag *d, int rc)
{
    uint64_t fault = tci_source_changed(src);
    return fault ? tci_guard_error(d, fault - 1) : rc;
}

/* The end of every open: OPEN on success; a failure forgets the input (NEW). */
static int open_finish(tc_conv *c, int rc)
{
    rc = check_unchanged(&c->src, &c->diag, rc);
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
    if (rc == TC_OK && (rc = open_parts(c, path)) == TCI_NOT_A_PAIR)
        rc = tci_source_open(&c->src, path, &c->opt, &c->diag);
    return open_finish(c, rc == TC_OK ? open_reader(c, path) : rc);
}

/* The reader of inputs kept in two files (tci_reader.pair_parts). */
static const tci_reader *pair_reader(void)
{
    for (size_t i = 0; i < tci_reader_count(); i++)
        if (tci_reader_at(i)->pair_parts)
            return tci_reader_at(i);
    return NULL;
}

int tc_conv_open_pair(tc_conv *c, const char *key_path, const char *data_path)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    if (!key_path || !data_path)
        return call_end(c, null_argument(c, "tc_conv_open_pair"));
    const tci_reader *rd = pair_reader();
    char *parts[2] = {NULL, NULL}; /* in their order, whichever order they were given in */
    int rc = rd ? rd->pair_parts(key_path, data_path, parts, &c->diag) : TC_ERR_USAGE;
    if (rc == TC_OK)
        rc = open_prepare(c, parts[0], rd->name);
    if (rc == TC_OK)
        rc = tci_source_open_concat(&c->src, parts[0], parts[1], &c->opt, &c->diag);
    rc = rc == TC_OK ? open_reader(c, parts[0]) : rc;
    free(parts[0]);
    free(parts[1]);
    return open_finish(c, rc);
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

/*
 * One read of the input feeds every output of a write: normalize's events go
 * to the call tree (built once when an aggregating writer is among the
 * outputs), to the global-order merge (once, when a GLOBAL_ORDER writer is)
 * and straight to the other writers. Each output has its own sink, writer
 * state and diag: the diag starts as a copy of the conversion's figures, so a
 * writer sees exactly what it would see converting alone, and what it adds
 * (frames it dropped, its error) stays its own until the write ends, when its
 * figures and warnings are added to the conversion's.
 */
typedef struct output {
    tc_output *pub;
    const tci_writer *w;
    tci_options opt;                /* the conversion's, with the variant an output's name gives (report-html) */
    tci_wctx wctx;
    tci_diag diag;
    uint64_t given[TCI_FIG__COUNT]; /* figures handed to the writer so far: it added diag.fig - given */
    int status;                     /* TC_OK while the output is alive */
    bool direct;                    /* events go straight to the writer (not through the merge) */
    int group;                      /* its writing thread while several run (pass 2), else -1 */
    struct output *next_direct;     /* ... and the next direct output of that thread, in order */
    uint64_t sys_left[TCI_EV_SYS_KINDS]; /* system events this writer cannot show, per kind */
    uint64_t *kernel_left;          /* ... and the other kernel events (TCI_EV_FTRACE), per event name
                                     * (a method): allocated at the first one; NULL when it failed */
    bool kernel_left_failed;
    tci_sink sink;
} output;

typedef struct pipeline {
    tc_conv *c;
    const tci_writer *internal; /* tci_conv_aggregate: the one output's writer (not registered) */
    void *internal_priv;        /* ... and its state, owned by the caller */
    output *outs;
    size_t n, alive;
    tci_calltree tree;
    bool has_tree, tree_ok;
    tci_diag tree_diag;  /* what building the shared tree reports: given to each of its writers */
    tci_merge *merge;    /* GLOBAL_ORDER: events wait here, then arrive in time order */
    bool merge_ok;
    tci_diag merge_diag; /* the merge's error, given to each of its writers */
    tci_cancel cancel;   /* the progress callback, asked while the outputs are written */
    uint64_t limit;      /* max-output in bytes for each output (UINT64_MAX: none) */
    tci_select *select;  /* the part of the trace the writers are given (NULL: all of it) */
    bool threaded;       /* option threads > 1: pass 2's events go to a writing thread (handoff.c) */
    tci_handoff *handoff; /* ... once the writers have begun (NULL: on this thread) */
    pthread_mutex_t progress_lock;
    /* several writing threads (pass 2): each one's outputs (output.group), how many of them
     * are alive, its cancel budget, and which one builds the tree and runs the merge */
    size_t n_groups; /* 0: the outputs are not split (one thread, or one writing thread) */
    int tree_group, merge_group;
    size_t alive_in[TCI_HANDOFF_CONSUMERS];
    tci_cancel cancel_in[TCI_HANDOFF_CONSUMERS];
    /* What a writing thread reads at every event, a line of its own: its direct outputs
     * are listed so that it never reads another thread's (each output's status and group
     * lie beside its sink, which its thread writes at every event: -o json,perfetto,pprof
     * spent 5% of its samples dispatching events, twice -j 1's) */
    struct group_ref {
        _Alignas(64) struct pipeline *p;
        int g;
        bool tree, merge;     /* it builds the call tree, it feeds the merge */
        struct output *direct; /* its first direct output (then each one's next_direct) */
    } ref[TCI_HANDOFF_CONSUMERS];
} pipeline;

static bool wants(const output *o, unsigned flag) { return (o->w->flags & flag) != 0; }

int tci_output_limit_error(tci_diag *d, const tci_options *opt, const char *module, uint64_t limit)
{
    char size[32];
    tci_size_text(limit, true, size, sizeof size);
    d->error[0] = 0;
    if (opt->max_output_ratio)
        return tci_error(d, TC_ERR_LIMIT, module, UINT64_MAX, "output larger than --max-output (%ux the input: %s)",
                         (unsigned)opt->max_output_ratio, size);
    return tci_error(d, TC_ERR_LIMIT, module, UINT64_MAX, "output larger than --max-output (%s)", size);
}

/* max-output was reached: the option as given, and what it came to for an Nx. */
static int describe_limit(output *o, tci_diag *d)
{
    return tci_output_limit_error(d, o->wctx.opt, o->w->name, o->sink.limit);
}

void tci_write_error_text(int errnum, char *why, size_t len)
{
    if (errnum == EFBIG) /* past `ulimit -f` (SIGXFSZ ignored) or the file system's largest file */
        snprintf(why, len, "file size limit exceeded");
    else if (strerror_r(errnum, why, len) != 0)
        snprintf(why, len, "error %d", errnum);
}

/* The one error message of a failed output: its cause, whichever step saw it. */
static int describe_failure(output *o, int rc)
{
    tci_diag *d = &o->diag;
    const char *name = o->w->name;
    if (rc == TC_ERR_CANCELED) {
        d->error[0] = 0;
        return tci_error(d, rc, name, UINT64_MAX, "canceled");
    }
    if (o->sink.err && o->sink.status == TC_ERR_LIMIT)
        return describe_limit(o, d);
    if (o->sink.err && o->sink.status == TC_ERR_CANCELED) {
        d->error[0] = 0;
        return tci_error(d, TC_ERR_CANCELED, name, UINT64_MAX, "canceled");
    }
    if (o->sink.err) { /* writers return a bare TC_ERR_IO (or worse) after the sink failed: say why */
        char why[256];
        tci_write_error_text(o->sink.errnum, why, sizeof why);
        d->error[0] = 0;
        return tci_error(d, TC_ERR_IO, name, UINT64_MAX, "cannot write the output: %s", why);
    }
    if (rc == TC_ERR_NOMEM)
        tci_error(d, rc, name, UINT64_MAX, "out of memory");
    else if (!d->error[0])
        tci_error(d, rc, name, UINT64_MAX, "conversion failed");
    return rc;
}

/* Stop one output (the others go on); message: a cause seen outside the writer, or NULL. */
static void output_fail(pipeline *p, output *o, int rc, const char *message)
{
    if (o->status != TC_OK)
        return;
    if (message && message[0])
        snprintf(o->diag.error, sizeof o->diag.error, "%s", message);
    o->status = describe_failure(o, rc == TC_OK ? TC_ERR_IO : rc);
    if (p->n_groups) /* its writing thread's count: the others run meanwhile */
        p->alive_in[o->group]--;
    else
        p->alive--;
}

/* Every live output whose writer has flag (0: all of them) fails with rc. */
static void fail_group(pipeline *p, unsigned flag, int rc, const char *message)
{
    for (size_t i = 0; i < p->n; i++)
        if (!flag || wants(&p->outs[i], flag))
            output_fail(p, &p->outs[i], rc, message);
}

static bool group_alive(const pipeline *p, unsigned flag)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->outs[i].status == TC_OK && wants(&p->outs[i], flag))
            return true;
    return false;
}

/* normalize (and the merge) stop when no output is left; the outputs hold why. */
static int keep_going(const pipeline *p) { return p->alive ? TC_OK : TC_ERR_IO; }

/* The same for the outputs of writing thread g (-1: all of them, on one thread). */
static int keep_going_in(const pipeline *p, int g) { return g < 0 ? keep_going(p) : p->alive_in[g] ? TC_OK : TC_ERR_IO; }

/* Output o is handled by writing thread g (-1: every output, on one thread). */
static inline bool mine(const output *o, int g) { return g < 0 || o->group == g; }

/* The writer is handed the conversion's figures as they are now, plus the shared tree's for its users. */
static void hand_figures(pipeline *p, output *o)
{
    bool tree = wants(o, TCI_WF_AGGREGATE);
    for (int k = 0; k < TCI_FIG__COUNT; k++) {
        uint64_t now = p->c->diag.fig[k] + (tree ? p->tree_diag.fig[k] : 0);
        o->diag.fig[k] += now - o->given[k];
        o->given[k] = now;
    }
}

static void start_writing_thread(pipeline *p);

static int pipeline_ready(void *user)
{
    pipeline *p = user;
    tc_conv *c = p->c;
    if (group_alive(p, TCI_WF_AGGREGATE)) {
        p->has_tree = true;
        if (tci_calltree_init(&p->tree, &c->trace, c->trace.n_threads) == TC_OK) {
            p->tree.diag = &p->tree_diag; /* saturated sums are reported */
            p->tree.cancel = c->progress ? &p->cancel : NULL;
            p->tree_ok = true;
        } else {
            fail_group(p, TCI_WF_AGGREGATE, TC_ERR_NOMEM, NULL);
        }
    }
    if (group_alive(p, TCI_WF_GLOBAL_ORDER)) {
        int rc = tci_merge_open(&p->merge, &c->trace, &p->merge_diag);
        if (rc == TC_OK)
            p->merge_ok = true;
        else
            fail_group(p, TCI_WF_GLOBAL_ORDER, rc, p->merge_diag.error);
    }
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        if (o->status != TC_OK)
            continue;
        hand_figures(p, o);
        int rc = o->w->begin ? o->w->begin(&o->wctx) : TC_OK;
        if (rc != TC_OK || o->sink.err)
            output_fail(p, o, rc, NULL);
        o->diag.muted = true; /* as c->diag during pass 2: anomalies are not counted twice */
    }
    if (p->threaded && p->alive)
        start_writing_thread(p);
    return keep_going(p);
}

/* The call tree's share of an event (the aggregating writers read the tree at finish). */
static inline void tree_event(pipeline *p, const tci_event *ev)
{
    if (p->tree_ok && TCI_UNLIKELY(tci_calltree_event(&p->tree, ev) != TC_OK)) {
        p->tree_ok = false;
        fail_group(p, TCI_WF_AGGREGATE, TC_ERR_NOMEM, NULL);
    }
}

static int pipeline_tree_event(void *user, const tci_event *ev)
{
    pipeline *p = user;
    tree_event(p, ev);
    return keep_going(p);
}

/* The merge's share of an event: it waits there to come out in time order. Only the
 * merge's thread reads merge_ok. */
static inline void merge_part(pipeline *p, const tci_event *ev)
{
    if (!p->merge_ok)
        return;
    int rc = tci_merge_add(p->merge, ev);
    if (TCI_UNLIKELY(rc != TC_OK)) {
        p->merge_ok = false;
        fail_group(p, TCI_WF_GLOBAL_ORDER, rc, p->merge_diag.error);
    }
}

/* A direct writer's share of an event, as it comes. */
static inline void direct_part(pipeline *p, output *o, const tci_event *ev)
{
    if (o->status != TC_OK)
        return;
    int rc = o->w->event(&o->wctx, ev);
    if (TCI_UNLIKELY(rc != TC_OK || o->sink.err))
        output_fail(p, o, rc, NULL);
}

/* Every writer's share but the tree's, on one thread. */
static int pipeline_timeline_event(void *user, const tci_event *ev)
{
    pipeline *p = user;
    merge_part(p, ev);
    for (size_t i = 0; i < p->n; i++)
        if (p->outs[i].direct)
            direct_part(p, &p->outs[i], ev);
    return keep_going(p);
}

/* A kernel event this output cannot show, counted by its name. */
static void note_kernel_left(const pipeline *p, output *o, uint32_t method)
{
    const tci_trace *t = &p->c->trace;
    if (!o->kernel_left && !o->kernel_left_failed &&
        !(o->kernel_left = tci_calloc(t->n_methods ? t->n_methods : 1, sizeof *o->kernel_left)))
        o->kernel_left_failed = true; /* the count by kind is still said */
    if (o->kernel_left && method < t->n_methods)
        o->kernel_left[method]++;
}

/* A system event (scheduler data): only writers that show them get it (never the call
 * tree nor the merge); the others count it, and say so at their finish. */
static __attribute__((noinline)) int system_event(pipeline *p, int g, const tci_event *ev)
{
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        if (!mine(o, g) || o->status != TC_OK)
            continue;
        if (!o->direct || !wants(o, TCI_WF_SYSTEM) || !o->w->event) {
            o->sys_left[ev->kind - TCI_EV_SYS_FIRST]++;
            if (ev->kind == TCI_EV_FTRACE)
                note_kernel_left(p, o, ev->method);
            continue;
        }
        int rc = o->w->event(&o->wctx, ev);
        if (TCI_UNLIKELY(rc != TC_OK || o->sink.err))
            output_fail(p, o, rc, NULL);
    }
    return keep_going_in(p, g);
}

/* The kernel events of output o's list by name, most first: up to 6 after n bytes of list. */
static size_t list_kernel_left(const tci_trace *t, const output *o, char *list, size_t size, size_t n)
{
    uint64_t shown = 0, last_count = UINT64_MAX;
    uint32_t last = TCI_NONE;
    for (int k = 0; k < 6 && o->kernel_left; k++) { /* the next largest after (last_count, last): 6 passes */
        uint32_t best = TCI_NONE;
        for (uint32_t m = 0; m < t->n_methods; m++) {
            uint64_t c = o->kernel_left[m];
            bool after = c < last_count || (c == last_count && last != TCI_NONE && m > last);
            if (c && after && (best == TCI_NONE || c > o->kernel_left[best]))
                best = m;
        }
        if (best == TCI_NONE)
            break;
        n += (size_t)snprintf(list + n, n < size ? size - n : 0, "%s%s %llu", n ? ", " : "",
                              t->methods[best].full_name, (unsigned long long)o->kernel_left[best]);
        shown += o->kernel_left[best];
        last = best;
        last_count = o->kernel_left[best];
    }
    uint64_t all = o->sys_left[TCI_EV_FTRACE - TCI_EV_SYS_FIRST];
    if (shown < all && n < size)
        n += (size_t)snprintf(list + n, size - n, "%s%llu other kernel events", n ? ", " : "",
                              (unsigned long long)(all - shown));
    return n < size ? n : size - 1;
}

/* "kernel events not shown in folded: 120 (sched_switch 80, binder_transaction 40)": a note of the output. */
static void note_system_left(const pipeline *p, output *o)
{
    uint64_t total = 0;
    char list[512];
    size_t n = 0;
    for (int k = 0; k < TCI_EV_SYS_KINDS; k++) {
        if (!o->sys_left[k])
            continue;
        total += o->sys_left[k];
        if (TCI_EV_SYS_FIRST + k == TCI_EV_FTRACE)
            continue; /* by name, after the scheduler's */
        n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s %llu", n ? ", " : "",
                              tci_sys_kind_name(TCI_EV_SYS_FIRST + k), (unsigned long long)o->sys_left[k]);
    }
    if (!total)
        return;
    if (n >= sizeof list)
        n = sizeof list - 1;
    if (o->sys_left[TCI_EV_FTRACE - TCI_EV_SYS_FIRST])
        list_kernel_left(&p->c->trace, o, list, sizeof list, n);
    bool muted = o->diag.muted;
    o->diag.muted = false;
    tci_warn(&o->diag, TCI_FIG_SYSTEM_NOT_SHOWN, o->w->name, UINT64_MAX,
             "kernel events not shown in %s: %llu (%s); the perfetto output shows them", o->w->name,
             (unsigned long long)total, list);
    o->diag.fig[TCI_FIG_SYSTEM_NOT_SHOWN] += total - 1;
    o->diag.muted = muted;
    free(o->kernel_left);
    o->kernel_left = NULL;
}

static int pipeline_event(void *user, const tci_event *ev)
{
    if (TCI_UNLIKELY(tci_event_is_system(ev->kind)))
        return system_event(user, -1, ev);
    tree_event(user, ev);
    return pipeline_timeline_event(user, ev);
}

/* ---- several writing threads: each one's share of an event (user: its group_ref) ---- */

/* Every writer's share but the tree's, for one writing thread: its own outputs only. */
static inline void group_timeline_part(const struct group_ref *r, const tci_event *ev)
{
    if (r->merge)
        merge_part(r->p, ev);
    for (output *o = r->direct; o; o = o->next_direct)
        direct_part(r->p, o, ev);
}

static int group_event(void *user, const tci_event *ev)
{
    const struct group_ref *r = user;
    if (TCI_UNLIKELY(tci_event_is_system(ev->kind)))
        return system_event(r->p, r->g, ev);
    if (r->tree)
        tree_event(r->p, ev);
    group_timeline_part(r, ev);
    return keep_going_in(r->p, r->g);
}

static int group_timeline_event(void *user, const tci_event *ev)
{
    const struct group_ref *r = user;
    group_timeline_part(r, ev);
    return keep_going_in(r->p, r->g);
}

static int group_tree_event(void *user, const tci_event *ev) /* only the tree's thread is given these */
{
    struct group_ref *r = user;
    tree_event(r->p, ev);
    return keep_going_in(r->p, r->g);
}

/* ---- two threads (option threads): pass 2's events handed to a writing thread ---- */

/* The consumers an event is handed to, by the route it is pushed with. */
enum { ROUTE_BOTH, ROUTE_TIMELINE, ROUTE_TREE, ROUTE__COUNT };
static const tci_event_fn consumers[ROUTE__COUNT] = {[ROUTE_BOTH] = pipeline_event,
                                                     [ROUTE_TIMELINE] = pipeline_timeline_event,
                                                     [ROUTE_TREE] = pipeline_tree_event};

/* The writing threads are over (or never started): one count of the live outputs, one
 * cancel budget, as on one thread. */
static void unsplit(pipeline *p)
{
    if (!p->n_groups)
        return;
    p->alive = 0;
    for (size_t g = 0; g < p->n_groups; g++)
        p->alive += p->alive_in[g];
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        o->group = -1;
        if (o->sink.cancel)
            o->sink.cancel = &p->cancel;
    }
    if (p->tree.cancel)
        p->tree.cancel = &p->cancel;
    p->n_groups = 0;
}

/* A unit's pass-2 work on its writing thread, in CPU time, not instructions: the call tree
 * waits on memory (its nodes are spread over hundreds of MB of paths) where the direct
 * writers stream. perf, -j 2, each alone on the 134 MB ART bench file (bench-v2-128mb; ms
 * of the writing thread, two runs): the call tree 550 (folded, pprof), ir 510, systrace
 * (the merge) 430, perfetto 360, json 300; in 50 ms. The aggregating writers' own work is
 * at finish, after the join; the merge's writers' too (after pass 2). */
static unsigned unit_cost(const output *o)
{
    if (wants(o, TCI_WF_AGGREGATE))
        return 11; /* the tree's, counted once for all its writers */
    if (wants(o, TCI_WF_GLOBAL_ORDER))
        return 8; /* the merge's spill, counted once */
    const char *name = o->w->name;
    return !strcmp(name, "ir") ? 10 : !strcmp(name, "json") ? 6 : !strcmp(name, "perfetto") ? 7 : 8;
}

/* The live outputs split in units (the tree's writers, the merge's, each direct writer),
 * the dearest unit first, each to a thread of its own while there are fewer than option
 * threads (at most TCI_HANDOFF_CONSUMERS), then to the least loaded: given in order
 * json,perfetto,pprof, the tree went with json and left perfetto's thread idle half the
 * time. Gives how many threads. */
static int split_outputs(pipeline *p)
{
    unsigned load[TCI_HANDOFF_CONSUMERS] = {0};
    size_t most = (size_t)p->c->opt.threads;
    if (most > TCI_HANDOFF_CONSUMERS)
        most = TCI_HANDOFF_CONSUMERS;
    size_t n = 0;
    p->tree_group = p->merge_group = -1;
    for (size_t i = 0; i < p->n; i++)
        p->outs[i].group = -1;
    for (;;) {
        output *next = NULL; /* the dearest unit not placed yet (the first given among equals) */
        for (size_t i = 0; i < p->n; i++) {
            output *o = &p->outs[i];
            bool placed = o->group >= 0 || (wants(o, TCI_WF_AGGREGATE) && p->tree_group >= 0) ||
                          (wants(o, TCI_WF_GLOBAL_ORDER) && p->merge_group >= 0);
            if (o->status == TC_OK && !placed && (!next || unit_cost(o) > unit_cost(next)))
                next = o;
        }
        if (!next)
            break;
        int g = 0;
        if (n < most)
            g = (int)n++;
        else
            for (size_t k = 1; k < n; k++)
                if (load[k] < load[g])
                    g = (int)k;
        load[g] += unit_cost(next);
        next->group = g;
        if (wants(next, TCI_WF_AGGREGATE))
            p->tree_group = g;
        else if (wants(next, TCI_WF_GLOBAL_ORDER))
            p->merge_group = g;
    }
    for (size_t i = 0; i < p->n; i++) { /* the other writers of the tree's and the merge's units */
        output *o = &p->outs[i];
        if (o->status == TC_OK && o->group < 0)
            o->group = wants(o, TCI_WF_AGGREGATE) ? p->tree_group : wants(o, TCI_WF_GLOBAL_ORDER) ? p->merge_group : -1;
    }
    return (int)n;
}

/* Once the writers have begun: from here every consumer of the events (tree, writers,
 * merge, sinks) runs on the writing thread, the reader, normalize and the selection on
 * this one. The figures these update (c->diag's events, samples, left out) are noted with
 * each event so that a stop of the writing side reads as it would on one thread. Without
 * a thread to be had the conversion goes on here: the same calls, the same bytes. */
static void start_writing_thread(pipeline *p)
{
    uint64_t *fig = p->c->diag.fig;
    uint64_t *const marks[] = {&fig[TCI_FIG_EVENTS], &fig[TCI_FIG_SAMPLES], &fig[TCI_FIG_EVENTS_LEFT_OUT]};
    size_t n_marks = sizeof marks / sizeof *marks;
    int n = split_outputs(p);
    if (n < 2) { /* one writing thread runs every consumer, as one thread would */
        for (size_t i = 0; i < p->n; i++)
            p->outs[i].group = -1;
        tci_handoff_consumer one = {.route = {consumers[0], consumers[1], consumers[2]}, .user = p};
        tci_handoff_start(&p->handoff, &one, 1, marks, n_marks);
        return;
    }
    tci_handoff_consumer cons[TCI_HANDOFF_CONSUMERS];
    for (int g = 0; g < n; g++) {
        p->ref[g] = (struct group_ref){.p = p, .g = g, .tree = g == p->tree_group, .merge = g == p->merge_group};
        p->alive_in[g] = 0;
        p->cancel_in[g] = p->cancel; /* a cancel budget each: the threads' sinks count at once */
        cons[g] = (tci_handoff_consumer){.route = {[ROUTE_BOTH] = group_event,
                                                   [ROUTE_TIMELINE] = group_timeline_event,
                                                   [ROUTE_TREE] = g == p->tree_group ? group_tree_event : NULL},
                                         .user = &p->ref[g]};
    }
    output **tail[TCI_HANDOFF_CONSUMERS];
    for (int g = 0; g < n; g++)
        tail[g] = &p->ref[g].direct;
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        if (o->group < 0)
            continue;
        p->alive_in[o->group]++;
        o->next_direct = NULL;
        if (o->direct) { /* in the order given, as one thread calls them */
            *tail[o->group] = o;
            tail[o->group] = &o->next_direct;
        }
        if (o->sink.cancel)
            o->sink.cancel = &p->cancel_in[o->group];
    }
    if (p->tree.cancel && p->tree_group >= 0)
        p->tree.cancel = &p->cancel_in[p->tree_group];
    p->n_groups = (size_t)n;
    if (tci_handoff_start(&p->handoff, cons, (size_t)n, marks, n_marks) != TC_OK)
        unsplit(p); /* no threads to be had: everything on this one */
}

static inline int hand_event(pipeline *p, unsigned route, const tci_event *ev)
{
    return p->handoff ? tci_handoff_push(p->handoff, route, ev) : consumers[route](p, ev);
}

static int handed_event(void *user, const tci_event *ev) { return hand_event(user, ROUTE_BOTH, ev); }
static int handed_timeline_event(void *user, const tci_event *ev) { return hand_event(user, ROUTE_TIMELINE, ev); }
static int handed_tree_event(void *user, const tci_event *ev) { return hand_event(user, ROUTE_TREE, ev); }

/* Pass 2 is over (or failed): the writing thread handles what it was given and ends. */
static int join_writing_thread(pipeline *p)
{
    int rc = tci_handoff_finish(p->handoff);
    p->handoff = NULL;
    unsplit(p);
    return rc;
}

/* normalize's select hook: the selection opens once the names are final. */
static int open_selection(void *user, tci_trace *t, tci_diag *d)
{
    pipeline *p = user;
    bool timeline = false; /* an output that is not read from the call tree alone */
    for (size_t i = 0; i < p->n; i++)
        timeline |= p->outs[i].status == TC_OK && !wants(&p->outs[i], TCI_WF_AGGREGATE);
    tci_select_out out = {.both = p->threaded ? handed_event : pipeline_event,
                          .timeline = !timeline ? NULL : p->threaded ? handed_timeline_event : pipeline_timeline_event,
                          .tree = !group_alive(p, TCI_WF_AGGREGATE) ? NULL
                                  : p->threaded                     ? handed_tree_event
                                                                    : pipeline_tree_event,
                          .user = p};
    return tci_select_open(&p->select, t, &p->c->opt, &out, d);
}

/* The outputs' failures reach normalize through the events delivered (pipeline_event's answer). */
static int selected_event(void *user, const tci_event *ev) { return tci_select_event(((pipeline *)user)->select, ev); }

static int merged_event(void *user, const tci_event *ev)
{
    pipeline *p = user;
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        if (o->status != TC_OK || !wants(o, TCI_WF_GLOBAL_ORDER) || !o->w->event)
            continue;
        int rc = o->w->event(&o->wctx, ev);
        if (TCI_UNLIKELY(rc != TC_OK || o->sink.err))
            output_fail(p, o, rc, NULL);
    }
    return group_alive(p, TCI_WF_GLOBAL_ORDER) ? TC_OK : TC_ERR_IO;
}

/* After pass 2: the spilled events reach the GLOBAL_ORDER writers in global time order. */
static void pipeline_merge(pipeline *p)
{
    if (!p->merge_ok || !group_alive(p, TCI_WF_GLOBAL_ORDER))
        return;
    int rc = tci_merge_run(p->merge, merged_event, p);
    if (rc != TC_OK) /* the merge's own failure; a writer's was recorded on its output */
        fail_group(p, TCI_WF_GLOBAL_ORDER, rc, p->merge_diag.error);
}

/* Whether some live output reads option key (its writer's table, or its variant's). */
static bool some_output_reads(const pipeline *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->outs[i].status == TC_OK && tci_output_reads(p->outs[i].w, &p->outs[i].opt, key))
            return true;
    return false;
}

/* What the finished tree tells every output: the app, from the strongest evidence (a
 * mistyped app-package is warned about once, when an output reads it), and the views' order
 * of threads with their time outside idle waits. A failure (memory, a cancel) leaves the
 * outputs to find the app themselves and the threads in the tables' order. */
static void views_of_tree(pipeline *p)
{
    tc_conv *c = p->c;
    const tci_calltree *ct = &p->tree;
    bool warn = some_output_reads(p, "app-package");
    uint64_t unused = p->tree_diag.fig[TCI_FIG_UNUSED_OPTION];
    c->app_ok = tci_app_find(&c->trace, ct, &c->opt, &c->views_arena, warn ? &p->tree_diag : NULL, &c->app) == TC_OK;
    if (c->diag.strict && p->tree_diag.fig[TCI_FIG_UNUSED_OPTION] > unused) { /* a mistyped app-package */
        char msg[sizeof c->diag.error];
        snprintf(msg, sizeof msg, "%s (an error under --strict)",
                 p->tree_diag.n_kept ? p->tree_diag.kept[p->tree_diag.n_kept - 1] : "option --app-package matches no method");
        for (size_t i = 0; i < p->n; i++)
            if (tci_output_reads(p->outs[i].w, &p->outs[i].opt, "app-package"))
                output_fail(p, &p->outs[i], TC_ERR_STRICT, msg);
    }
    if (c->app_ok && warn) /* the summary names the app where an output paints it */
        c->app_text = tci_app_text(&c->app, &c->views_arena);
    uint32_t n = c->trace.n_threads;
    uint8_t *idle_method = tci_idle_methods(&c->trace);
    int64_t *busy = tci_calloc(n ? 2 * (size_t)n : 1, sizeof *busy);
    free(c->thread_order);
    c->thread_order = tci_malloc((n ? n : 1) * sizeof *c->thread_order);
    if (idle_method && busy && c->thread_order && ct->n_roots == n &&
        tci_thread_busy_of_tree(ct, idle_method, busy, busy + n) == TC_OK) {
        tci_thread_rank(&c->trace, busy, c->thread_order);
        c->mostly_idle = tci_mostly_idle(&c->trace, busy, busy + n);
    } else {
        free(c->thread_order);
        c->thread_order = NULL;
    }
    free(idle_method);
    free(busy);
}

/* The end of the input: the shared tree is summed once, then every live writer finishes. */
static void pipeline_finish(pipeline *p)
{
    bool tree_made = p->tree_ok && group_alive(p, TCI_WF_AGGREGATE);
    if (tree_made) {
        tci_calltree_finish(&p->tree);
        views_of_tree(p);
    }
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        if (o->status != TC_OK)
            continue;
        if (p->c->canceled) /* a walk or a sink was told to stop: no other writer begins its finish */
            break;
        bool tree = wants(o, TCI_WF_AGGREGATE);
        hand_figures(p, o);
        note_system_left(p, o);
        o->diag.muted = false;
        if (tree) {
            p->tree.diag = &o->diag; /* a tree the writer derives (pprof's merged threads) reports to it */
            o->wctx.app = p->c->app_ok ? &p->c->app : NULL;
            o->wctx.thread_order = p->c->thread_order;
        }
        int rc = o->w->finish ? o->w->finish(&o->wctx, tree ? &p->tree : NULL) : TC_OK;
        if (rc != TC_OK || o->sink.err)
            output_fail(p, o, rc, NULL);
    }
}

/* A kept warning moves to the conversion's list (freed when the list is full). */
static void keep_warnings(tci_diag *to, tci_diag *from)
{
    for (size_t i = 0; i < from->n_kept; i++) {
        if (to->n_kept < TCI_MAX_KEPT_WARNINGS)
            to->kept[to->n_kept++] = from->kept[i];
        else
            free(from->kept[i]);
    }
    from->n_kept = 0;
}

/* The write is over: what the tree and each writer added becomes the conversion's. */
static void collect_diagnostics(pipeline *p)
{
    tc_conv *c = p->c;
    uint64_t added[TCI_FIG__COUNT];
    for (int k = 0; k < TCI_FIG__COUNT; k++)
        added[k] = p->tree_diag.fig[k] + p->merge_diag.fig[k];
    keep_warnings(&c->diag, &p->tree_diag);
    keep_warnings(&c->diag, &p->merge_diag);
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        for (int k = 0; k < TCI_FIG__COUNT; k++)
            added[k] += o->diag.fig[k] - o->given[k];
        keep_warnings(&c->diag, &o->diag);
    }
    for (int k = 0; k < TCI_FIG__COUNT; k++)
        c->diag.fig[k] += added[k];
}

/* Sinks are closed (a failed or canceled output's discarded) and writers released, whatever
 * happened. A failed output gets nothing more: neither what its sink still holds nor, for
 * gzip, the stream's header and trailer, so that one that failed before its first 64 KiB
 * (an input that fails in the first pass) was handed no byte at all: `-o pprof` to standard
 * output wrote an empty gzip stream there. */
static void pipeline_close(pipeline *p)
{
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        if (o->status != TC_OK)
            tci_sink_discard(&o->sink); /* nothing more reaches the output */
        else if (tci_sink_close(&o->sink) != TC_OK)
            output_fail(p, o, TC_ERR_IO, NULL);
        if (o->w->close)
            o->w->close(&o->wctx);
        if (!p->internal)
            free(o->wctx.priv);
        free(o->kernel_left);
        o->kernel_left = NULL;
    }
    tci_merge_free(p->merge);
    if (p->has_tree)
        tci_calltree_free(&p->tree);
}

/* normalize calls this; a non-zero answer of the caller's callback stops the conversion. */
static int conv_progress(void *user, uint64_t done, uint64_t total)
{
    tc_conv *c = user;
    if (c->progress_lock) /* two threads ask (normalize here, the sinks and walks there): one at a time */
        pthread_mutex_lock(c->progress_lock);
    if (done < c->progress_done) /* one figure that only grows, whoever asks */
        done = c->progress_done;
    c->progress_done = done;
    if (!c->canceled && c->progress(c->progress_user, done, total))
        c->canceled = true;
    int canceled = c->canceled;
    if (c->progress_lock)
        pthread_mutex_unlock(c->progress_lock);
    return canceled;
}

/* While the outputs are written (the sinks, the walks of the call tree): asked to let the
 * caller cancel, with the figure the reading reached (not 100%: a writing thread's sink asks
 * while pass 2 still reads, and -o json,perfetto's line went back and forth between 50% and
 * 100%). */
static int ask_while_writing(void *user)
{
    tc_conv *c = user;
    return conv_progress(c, c->progress_done, c->src.size);
}

uint64_t tci_output_limit(const tci_options *opt, uint64_t input_size)
{
    if (opt->max_output)
        return opt->max_output;
    if (!opt->max_output_ratio)
        return UINT64_MAX;
    uint64_t n;
    if (__builtin_mul_overflow(input_size, (uint64_t)opt->max_output_ratio, &n))
        return UINT64_MAX;
    return n < TCI_MIN_RATIO_OUTPUT ? TCI_MIN_RATIO_OUTPUT : n;
}

uint64_t tci_conv_input_size(const tc_conv *c) { return c->src.size; }

/* max-output for each output of this input, in bytes (UINT64_MAX: none). */
static uint64_t output_limit(const tc_conv *c) { return tci_output_limit(&c->opt, c->src.size); }

/* Each output's sink and writer state; a failure here is that output's alone. */
static void outputs_open(pipeline *p, tc_output *pub)
{
    tc_conv *c = p->c;
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        o->pub = &pub[i];
        int variant = -1;
        o->w = p->internal ? p->internal : tci_find_output(pub[i].writer, &variant);
        o->opt = c->opt;
        if (variant >= 0)
            tci_variant_force(&o->opt, o->w, variant);
        o->direct = !wants(o, TCI_WF_GLOBAL_ORDER) && o->w->event;
        o->group = -1;
        o->diag.input = c->diag.input;
        o->diag.strict = c->diag.strict;
        o->wctx = (tci_wctx){.writer_name = o->w->name, .out = &o->sink, .trace = &c->trace, .opt = &o->opt,
                             .diag = &o->diag};
        bool gzip = wants(o, TCI_WF_GZIP);
        int rc = pub[i].fn ? tci_sink_open_fn(&o->sink, pub[i].fn, pub[i].user, gzip)
                           : tci_sink_open(&o->sink, pub[i].fp, gzip);
        o->sink.limit = p->limit;
        o->sink.cancel = c->progress ? &p->cancel : NULL;
        if (p->internal)
            o->wctx.priv = p->internal_priv;
        else if (rc == TC_OK && o->w->priv_size && !(o->wctx.priv = tci_calloc(1, o->w->priv_size)))
            rc = TC_ERR_NOMEM;
        p->alive++;
        if (rc != TC_OK)
            output_fail(p, o, rc, NULL);
    }
}

/* Statuses and messages back to the caller; the first failure (in the caller's order) is the call's. */
static int report_outputs(pipeline *p)
{
    tc_conv *c = p->c;
    int first = TC_OK;
    free(c->out_errors);
    c->out_errors = tci_calloc(p->n, sizeof p->outs[0].diag.error);
    for (size_t i = 0; i < p->n; i++) {
        output *o = &p->outs[i];
        char *slot = c->out_errors ? c->out_errors + i * sizeof o->diag.error : NULL;
        if (slot && o->status != TC_OK)
            memcpy(slot, o->diag.error, sizeof o->diag.error);
        o->pub->status = o->status;
        o->pub->error = slot ? slot : "";
        if (o->status != TC_OK && first == TC_OK) {
            first = o->status;
            memcpy(c->diag.error, o->diag.error, sizeof c->diag.error);
        }
    }
    return first;
}

static void set_statuses(tc_output *outs, size_t n, int rc)
{
    for (size_t i = 0; outs && i < n; i++) {
        outs[i].status = rc;
        outs[i].error = "";
    }
}

/* The conversion proper: one read of the input into every output (internal: the
 * one output's writer and its state, for tci_conv_aggregate; else NULL). */
static int run_pipeline(tc_conv *c, tc_output *pub, size_t n, const tci_writer *internal, void *internal_priv)
{
    pipeline p = {.c = c, .n = n, .internal = internal, .internal_priv = internal_priv};
    c->progress_done = 0;
    p.tree_diag.input = p.merge_diag.input = c->diag.input;
    p.cancel = (tci_cancel){.ask = ask_while_writing, .user = c, .budget = TCI_CANCEL_BUDGET};
    p.limit = output_limit(c);
    if (!(p.outs = tci_calloc(n, sizeof *p.outs))) {
        set_statuses(pub, n, TC_ERR_NOMEM);
        return tci_error(&c->diag, TC_ERR_NOMEM, "api", UINT64_MAX, "out of memory");
    }
    outputs_open(&p, pub);
    int rc = TC_OK;
    bool select = tci_select_wanted(&c->opt);
    c->rctx.select = select ? (tci_transform){open_selection, &p} : (tci_transform){0};
    p.threaded = c->opt.threads > 1; /* 1 (the default): no thread, today's path exactly */
    if (p.threaded && c->progress) {
        pthread_mutex_init(&p.progress_lock, NULL);
        c->progress_lock = &p.progress_lock;
    }
    tci_event_fn first = select ? selected_event : p.threaded ? handed_event : pipeline_event;
    if (p.alive)
        rc = tci_normalize_run(&c->rctx, c->reader, pipeline_ready, first, &p, c->progress ? conv_progress : NULL, c);
    int stopped = join_writing_thread(&p); /* before anything reads what the writers did */
    if (stopped != TC_OK) /* every output failed: one thread would have stopped normalize with this */
        rc = stopped;
    if (c->progress_lock) {
        c->progress_lock = NULL;
        pthread_mutex_destroy(&p.progress_lock);
    }
    c->rctx.select = (tci_transform){0};
    if (c->canceled) /* also when the last progress call (after pass 2) asked to stop */
        rc = TC_ERR_CANCELED;
    rc = check_unchanged(&c->src, &c->diag, rc);
    if (rc != TC_OK) {
        fail_group(&p, 0, rc, c->diag.error); /* the input failed (or was canceled): every output with it */
    } else {
        pipeline_merge(&p);
        if (!c->canceled)
            pipeline_finish(&p);
        if (c->canceled) /* told to stop while writing: no output is complete, as when reading */
            fail_group(&p, 0, TC_ERR_CANCELED, NULL);
    }
    pipeline_close(&p);
    tci_select_free(p.select);
    collect_diagnostics(&p);
    rc = report_outputs(&p);
    free(p.outs);
    return rc;
}

/* Everything a write can be refused for before it starts (the object stays OPEN). */
static int check_write(tc_conv *c, const tc_output *outs, size_t n, const char *function)
{
    if (!outs || !n)
        return null_argument(c, function);
    for (size_t i = 0; i < n; i++)
        if (!outs[i].writer || (!outs[i].fp && !outs[i].fn))
            return null_argument(c, function);
    if (c->state == ST_NEW)
        return state_error(c, "%s before an input was opened (call tc_conv_open first)", function);
    if (c->state == ST_WRITTEN)
        return state_error(c, "%s: the input was already converted; open it again with a new tc_conv", c->path);
    for (size_t i = 0; i < n; i++) {
        if (outs[i].fp && outs[i].fn)
            return tci_error(&c->diag, TC_ERR_USAGE, "api", UINT64_MAX,
                             "%s: output %zu has both a FILE and a write function; give one", function, i);
        int variant;
        if (!tci_find_output(outs[i].writer, &variant))
            return tci_error(&c->diag, TC_ERR_USAGE, "options", UINT64_MAX,
                             "unknown output format '%s' (see --list-formats)", outs[i].writer);
    }
    return TC_OK;
}

/* The unused-option check of a call: an option is used when the reader or any of its writers reads it. */
static int check_options(tc_conv *c, const tc_output *outs, size_t n)
{
    const tci_writer *ws[16] = {0};
    int vs[16] = {0};
    const tci_writer **list = n <= 16 ? ws : tci_malloc(n * sizeof *list);
    int *variants = n <= 16 ? vs : tci_malloc(n * sizeof *variants);
    int rc = TC_OK;
    if (!list || !variants)
        rc = tci_error(&c->diag, TC_ERR_NOMEM, "api", UINT64_MAX, "out of memory");
    for (size_t i = 0; rc == TC_OK && i < n; i++)
        list[i] = tci_find_output(outs[i].writer, &variants[i]); /* -o report-html: its variant's options */
    if (rc == TC_OK)
        rc = tci_options_check_used(&c->opt, c->reader, list, variants, n, &c->diag);
    if (list != ws)
        free(list);
    if (variants != vs)
        free(variants);
    return rc;
}

static int conv_write_many(tc_conv *c, tc_output *outs, size_t n, const char *function)
{
    int rc = check_write(c, outs, n, function);
    if (rc != TC_OK) {
        set_statuses(outs, n, rc);
        return rc;
    }
    c->state = ST_WRITTEN; /* from here the conversion consumes the input, success or not */
    c->canceled = false;
    if ((rc = check_options(c, outs, n)) != TC_OK) {
        set_statuses(outs, n, rc); /* an option no writer uses, under strict */
        return rc;
    }
    return run_pipeline(c, outs, n, NULL, NULL);
}

int tc_conv_write_many(tc_conv *c, tc_output *outs, size_t n)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    return call_end(c, conv_write_many(c, outs, n, "tc_conv_write_many"));
}

int tc_conv_write(tc_conv *c, const char *writer, FILE *out)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    tc_output one = {.writer = writer, .fp = out};
    return call_end(c, conv_write_many(c, &one, 1, "tc_conv_write"));
}

int tc_conv_write_to(tc_conv *c, const char *writer, tc_write_fn fn, void *user)
{
    if (!c)
        return TC_ERR_USAGE;
    call_begin(c);
    tc_output one = {.writer = writer, .fn = fn, .user = user};
    return call_end(c, conv_write_many(c, &one, 1, "tc_conv_write_to"));
}

/* ---- for commands of the core that read a conv as a whole (diff.c) ---------- */

static int discard_output(void *user, const void *buf, size_t len)
{
    (void)user, (void)buf, (void)len;
    return 0;
}

int tci_conv_aggregate(tc_conv *c, const tci_writer *w, void *priv, const char *function)
{
    if (c->state == ST_NEW)
        return state_error(c, "%s before an input was opened (call tc_conv_open first)", function);
    if (c->state == ST_WRITTEN)
        return state_error(c, "%s: the input was already converted; open it again with a new tc_conv", c->path);
    c->state = ST_WRITTEN;
    c->canceled = false;
    int rc = tci_options_check_used(&c->opt, c->reader, &w, NULL, 1, &c->diag);
    if (rc != TC_OK)
        return rc;
    tc_output one = {.writer = w->name, .fn = discard_output};
    return run_pipeline(c, &one, 1, w, priv);
}

/* An OPEN conversion read by normalize alone, without writers: its tables and events are
 * another reader's input (join.c). It is consumed (WRITTEN), success or not. */
int tci_conv_normalize(tc_conv *c, tci_ready_fn ready, tci_event_fn emit, void *user)
{
    if (c->state != ST_OPEN)
        return state_error(c, "%s: the input is not open, or was already converted", c->path ? c->path : "?");
    c->state = ST_WRITTEN;
    int rc = tci_normalize_run(&c->rctx, c->reader, ready, emit, user, NULL, NULL);
    return check_unchanged(&c->src, &c->diag, rc);
}

/* Open c on a reader of the core that reads no bytes of its own (join.c's, whose priv it
 * made): name is what messages and the process name call the input. priv is the reader's
 * from here on, freed with c (also when the open fails). */
int tci_conv_open_reader(tc_conv *c, const char *name, const tci_reader *rd, void *priv)
{
    call_begin(c);
    int rc = open_prepare(c, name, NULL);
    if (rc != TC_OK) {
        if (rd->close) {
            tci_rctx tmp = {.priv = priv, .trace = &c->trace, .diag = &c->diag, .opt = &c->opt};
            rd->close(&tmp);
        }
        free(priv);
        return open_finish(c, rc);
    }
    c->reader = rd;
    c->trace.reader = rd->name;
    c->rctx = (tci_rctx){.priv = priv, .trace = &c->trace, .diag = &c->diag, .opt = &c->opt, .source = &c->src};
    rc = rd->open(&c->rctx);
    if (rc != TC_OK && !c->diag.error[0])
        tci_error(&c->diag, rc, rd->name, UINT64_MAX, "cannot read the input");
    return open_finish(c, rc);
}

/* ---- what the registry answers for this conversion's options (traceconv.h) ---- */

const tc_variant_info *tc_output_variant(const tc_conv *c, const char *writer)
{
    return tci_output_variant(c ? &c->opt : NULL, writer);
}

/* ---- the public view of the tables (traceconv.h: tc_conv_thread_at, tc_conv_duration_ns) ---- */

int tc_conv_thread_at(const tc_conv *c, size_t index, tc_thread_info *out)
{
    const tci_trace *t = c ? &c->trace : NULL;
    if (!t || !out || index >= t->n_threads || !t->processes)
        return 0;
    const tci_thread *th = &t->threads[index];
    *out = (tc_thread_info){.tid = th->tid,
                            .pid = th->process < t->n_processes ? t->processes[th->process].pid : -1,
                            .name = th->name ? th->name : "",
                            .records = th->records};
    return 1;
}

int64_t tc_conv_duration_ns(const tc_conv *c)
{
    const tci_trace *t = c ? &c->trace : NULL;
    return t && t->n_threads && t->end_ns > t->start_ns ? t->end_ns - t->start_ns : 0;
}

/* ---- the library's hints (traceconv.h) ------------------------------------------------------ */

/* The hints in order: each is advice the summary ends with, given only where it applies. */
const char *tc_conv_hint_at(const tc_conv *c, size_t index)
{
    if (!c)
        return NULL;
    const tci_trace *t = &c->trace;
    const tci_options *o = &c->opt;
    const char *hints[2];
    size_t n = 0;
    if (!o->deobfuscate && t->n_methods && tci_names_minified(t))
        hints[n++] = "most class names look minified (R8/ProGuard): --deobfuscate mapping.txt restores their source names";
    if (!o->ignore_idle && c->mostly_idle) /* the views weigh waiting, not work */
        hints[n++] = "idle waits (Looper, park, take, wait, sleep) are most of the threads' time: --ignore-idle "
                     "leaves them out of the aggregates";
    return index < n ? hints[index] : NULL;
}

const tci_options *tci_conv_options(const tc_conv *c) { return &c->opt; }
const tci_trace *tci_conv_trace_of(const tc_conv *c) { return &c->trace; }


const char *tc_conv_app(const tc_conv *c) { return c ? c->app_text : NULL; }

int tc_conv_thread_order_at(const tc_conv *c, size_t rank, size_t *index)
{
    if (!c || !index || rank >= c->trace.n_threads)
        return 0;
    *index = c->thread_order ? c->thread_order[rank] : rank;
    return 1;
}
const tci_diag *tci_conv_diag(const tc_conv *c) { return &c->diag; }
bool tci_conv_is_open(const tc_conv *c) { return c->state == ST_OPEN; }
void tci_conv_consume(tc_conv *c)
{
    if (c->state == ST_OPEN)
        c->state = ST_WRITTEN;
}

void tci_conv_call_begin(tc_conv *c) { call_begin(c); }
int tci_conv_call_end(tc_conv *c, int rc) { return call_end(c, rc); }
tci_diag *tci_conv_error_slot(tc_conv *c) { return &c->diag; }

size_t tc_conv_figures(const tc_conv *c, tc_figure *out, size_t max)
{
    size_t n = 0;
    if (!c || !out)
        return 0;
    for (int i = 0; i < TCI_FIG__COUNT && n < max; i++)
        out[n++] = (tc_figure){tci_figure_name(i), c->diag.fig[i], tci_figure_kind(i)};
    return n;
}

size_t tc_conv_not_converted(const tc_conv *c, tc_kind_count *out, size_t max)
{
    size_t n = 0;
    for (int k = 0; c && k < TCI_LEFT_KINDS && c->diag.left[k].count; k++, n++)
        if (out && n < max)
            out[n] = (tc_kind_count){c->diag.left[k].name, c->diag.left[k].count};
    return n;
}

const char *tc_conv_warning_at(const tc_conv *c, size_t index)
{
    return c && index < c->diag.n_kept ? c->diag.kept[index] : NULL;
}

size_t tc_conv_selection_text(const tc_conv *c, char *out, size_t len)
{
    if (!out || !len)
        return 0;
    out[0] = 0;
    return c ? tci_selection_text_all(&c->opt, out, len) : 0;
}

const char *tc_conv_input_summary(const tc_conv *c)
{
    if (!c)
        return "";
    tc_conv *m = (tc_conv *)c;
    char format[TCI_FORMAT_TEXT_MAX]; /* the same words as every output's metadata */
    snprintf(m->summary, sizeof m->summary, "%s, clock %s%s", tci_trace_format(&c->trace, format, sizeof format),
             tci_clock_name(c->trace.clock), c->src.gzipped ? ", gzip" : "");
    return m->summary;
}

/* Every reader's score for an opened source; how many were filled. */
static int probe_source(const tci_source *src, const char *name, tc_probe_score *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < tci_reader_count() && n < max; i++) {
        const tci_reader *rd = tci_reader_at(i);
        out[n++] = (tc_probe_score){rd->name, rd->probe(src->data, src->size, name)};
    }
    return (int)n;
}

/* Probing a gzip bomb is refused like converting one: the default --max-input. */
static void probe_setup(tci_options *opt, tci_diag *diag, const char *input)
{
    memset(opt, 0, sizeof *opt);
    memset(diag, 0, sizeof *diag);
    opt->max_input = TCI_DEFAULT_MAX_INPUT;
    diag->input = input;
}

static int probe_failed(const tci_diag *diag, int rc, char *err, size_t errlen)
{
    if (errlen)
        snprintf(err, errlen, "%s", diag->error);
    return rc;
}

/* The probe of a source once opened (opened: its open's result), the source closed after. */
static int probe_opened(tci_source *src, tci_diag *diag, int opened, const char *name, tc_probe_score *out,
                        size_t max, char *err, size_t errlen)
{
    if (opened != TC_OK)
        return probe_failed(diag, opened, err, errlen);
    int n = probe_source(src, name, out, max);
    int rc = check_unchanged(src, diag, TC_OK);
    tci_source_close(src);
    return rc == TC_OK ? n : probe_failed(diag, rc, err, errlen);
}

int tc_probe_file(const char *path, tc_probe_score *out, size_t max, char *err, size_t errlen)
{
    tci_options opt;
    tci_diag diag;
    tci_source src;
    if (!path || (!out && max) || (!err && errlen))
        return TC_ERR_USAGE;
    probe_setup(&opt, &diag, path);
    return probe_opened(&src, &diag, tci_source_open(&src, path, &opt, &diag), path, out, max, err, errlen);
}

int tc_probe_memory(const void *data, size_t size, const char *name, tc_probe_score *out, size_t max, char *err,
                    size_t errlen)
{
    tci_options opt;
    tci_diag diag;
    tci_source src;
    if ((!data && size) || (!out && max) || (!err && errlen))
        return TC_ERR_USAGE;
    probe_setup(&opt, &diag, name ? name : "(memory)");
    return probe_opened(&src, &diag, tci_source_open_memory(&src, data ? data : (const void *)"", size, &opt, &diag),
                        name, out, max, err, errlen);
}
