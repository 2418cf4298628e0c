/*
 * core_normalize.c - normalize's contracts, through a scripted reader:
 * the tables are frozen before the writers' ready(); a pass-2 record that
 * names an entry beyond the frozen counts is an error naming its offset; a
 * reader that tries to intern a new name in pass 2 fails cleanly; exits of
 * frames not on the stack are ignored and exits below the top close the
 * frames above (the result a plain stack model gives); a huge elapsed time
 * is a warning, never an overflow.
 */
#include "tc_base.h"
#include "tc_conv.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

#define MAX_REC 4096

/* A reader that replays a script: records per pass, and a hook run at pass 2's first read. */
typedef struct script {
    tci_raw rec[2][MAX_REC];
    size_t n[2], pos;
    void (*pass2_hook)(tci_rctx *r);
    bool hook_done;
    int hook_rc;
} script;

static int sc_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    script *s = r->priv;
    int p = r->pass - 1;
    if (r->pass == 2 && s->pass2_hook && !s->hook_done) {
        s->hook_done = true;
        s->pass2_hook(r);
        if (s->hook_rc != TC_OK)
            return s->hook_rc;
    }
    size_t k = 0;
    while (k < max && s->pos < s->n[p])
        ev[k++] = s->rec[p][s->pos++];
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int sc_rewind(tci_rctx *r)
{
    ((script *)r->priv)->pos = 0;
    return TC_OK;
}

static const tci_reader script_reader = {.name = "script", .read = sc_read, .rewind = sc_rewind};

/* What the writer side sees. */
typedef struct seen {
    uint32_t threads_at_ready, methods_at_ready;
    bool frozen_at_ready;
    tci_event ev[3 * MAX_REC];
    size_t n;
} seen;

static int on_ready(void *user)
{
    seen *w = user;
    (void)w;
    return TC_OK;
}

typedef struct run {
    tci_trace t;
    tci_diag d;
    tci_options o;
    tci_rctx r;
    script *s;
    seen *w;
} run;

static seen *g_seen;
static tci_trace *g_trace;

static int ready_capture(void *user)
{
    seen *w = user;
    w->threads_at_ready = g_trace->n_threads;
    w->methods_at_ready = g_trace->n_methods;
    w->frozen_at_ready = g_trace->frozen;
    return on_ready(user);
}

static int emit_capture(void *user, const tci_event *ev)
{
    seen *w = user;
    if (ev->thread >= g_trace->n_threads || (ev->method != TCI_NONE && ev->method >= g_trace->n_methods))
        CHECK(!"an event beyond the tables reached the writer");
    if (w->n < sizeof w->ev / sizeof w->ev[0])
        w->ev[w->n++] = *ev;
    return TC_OK;
}

static void setup(run *x)
{
    memset(x, 0, sizeof *x);
    CHECK_EQ_INT(tci_trace_init(&x->t), TC_OK);
    x->t.has_wall = true;
    x->t.clock = TCI_CLOCK_WALL;
    x->d.input = "unit";
    x->s = calloc(1, sizeof *x->s);
    x->w = calloc(1, sizeof *x->w);
    x->r = (tci_rctx){.priv = x->s, .data = (const uint8_t *)"", .size = 0, .trace = &x->t, .diag = &x->d,
                      .opt = &x->o};
    g_seen = x->w;
    g_trace = &x->t;
}

static void teardown(run *x)
{
    for (size_t i = 0; i < x->d.n_kept; i++)
        free(x->d.kept[i]);
    tci_trace_free(&x->t);
    free(x->s);
    free(x->w);
}

/* The same record in both passes (what a real reader does). */
static void both(run *x, uint8_t action, uint32_t thread, uint32_t method, int64_t wall)
{
    for (int p = 0; p < 2; p++) {
        size_t i = x->s->n[p]++;
        x->s->rec[p][i] = (tci_raw){.wall = wall, .cpu = TCI_NO_TIME, .offset = 100 + i, .thread = thread,
                                    .method = method, .action = action};
    }
}

static int go(run *x)
{
    return tci_normalize_run(&x->r, &script_reader, ready_capture, emit_capture, x->w, NULL, NULL);
}

static void test_frozen_before_ready(void)
{
    run x;
    setup(&x);
    uint32_t th = tci_trace_add_thread(&x.t, 1), m = tci_trace_name(&x.t, "m", 1);
    both(&x, TCI_ACT_ENTER, th, m, 1);
    both(&x, TCI_ACT_EXIT, th, m, 2);
    CHECK_EQ_INT(go(&x), TC_OK);
    CHECK(x.w->frozen_at_ready);
    CHECK_EQ_INT(x.w->threads_at_ready, x.t.n_threads);
    CHECK_EQ_INT(x.w->methods_at_ready, x.t.n_methods);
    CHECK_EQ_INT(x.w->n, 2);
    teardown(&x);
}

/* A pass-2 record beyond the frozen counts: an error naming its offset, before any writer sees it. */
static void out_of_range(uint32_t thread, uint32_t method, uint8_t action, uint64_t id, const char *word)
{
    run x;
    setup(&x);
    uint32_t th = tci_trace_add_thread(&x.t, 1), m = tci_trace_name(&x.t, "m", 1);
    both(&x, TCI_ACT_ENTER, th, m, 1);
    both(&x, TCI_ACT_EXIT, th, m, 2);
    size_t i = x.s->n[1]++;
    x.s->rec[1][i] = (tci_raw){.wall = 3, .cpu = TCI_NO_TIME, .offset = 0x1234, .thread = thread,
                               .method = method, .action = action, .id = id};
    CHECK_EQ_INT(go(&x), TC_ERR_FORMAT);
    CHECK(strstr(x.d.error, "offset 0x1234") != NULL);
    CHECK(strstr(x.d.error, word) != NULL);
    CHECK(strstr(x.d.error, "frozen") != NULL);
    if (!strstr(x.d.error, word))
        fprintf(stderr, "  message: %s\n", x.d.error);
    CHECK_EQ_INT(x.w->n, 2); /* the bad record never reached the writer */
    teardown(&x);
}

static void test_pass2_record_out_of_range(void)
{
    out_of_range(1, 0, TCI_ACT_ENTER, 0, "thread 1");        /* one thread: index 1 is past it */
    out_of_range(0, 1, TCI_ACT_INSTANT, 0, "method 1");      /* one method */
    out_of_range(0, TCI_NONE, TCI_ACT_ENTER, 0, "method");   /* only exits may name no method */
    out_of_range(0, 0, TCI_ACT_SAMPLE, 0, "stack 0");        /* no stacks at all */
    char past[32];
    snprintf(past, sizeof past, "action %d", TCI_ACT_SYS_LAST + 1);
    out_of_range(0, 0, TCI_ACT_SYS_LAST + 1, 0, past); /* past the system events' actions */
    /* a system event's second thread (sched_switch's next task) is checked as its first */
    out_of_range(0, TCI_NONE, TCI_ACT_SYS, tci_sys_pack_id(0, 1, 0), "thread 1");
    /* a kernel event's name is a method: checked as one; its id is text, not a thread */
    out_of_range(0, 1, TCI_ACT_SYS + TCI_EV_FTRACE - TCI_EV_SYS_FIRST, tci_sys_pack_text(0, 0), "method 1");
}

/* A reader that meets a new name in pass 2 (the NUL-name bug's shape) gets a clean error. */
static void intern_in_pass2(tci_rctx *r)
{
    script *s = r->priv;
    uint32_t m = tci_trace_name(r->trace, "new in pass 2", 13);
    CHECK_EQ_INT(m, TCI_NONE);
    s->hook_rc = tci_trace_fail(r->trace, r->diag, "script", 0x99);
}

static void test_pass2_intern_fails(void)
{
    run x;
    setup(&x);
    uint32_t th = tci_trace_add_thread(&x.t, 1), m = tci_trace_name(&x.t, "m", 1);
    both(&x, TCI_ACT_ENTER, th, m, 1);
    both(&x, TCI_ACT_EXIT, th, m, 2);
    uint32_t methods = x.t.n_methods;
    x.s->pass2_hook = intern_in_pass2;
    CHECK_EQ_INT(go(&x), TC_ERR_FORMAT);
    CHECK(strstr(x.d.error, "offset 0x99") != NULL);
    CHECK(strstr(x.d.error, "frozen") != NULL);
    CHECK_EQ_INT(x.t.n_methods, methods);
    teardown(&x);
}

/* ---- exits against a plain stack model ------------------------------------- */

typedef struct model {
    uint32_t stack[MAX_REC];
    uint32_t depth;
    tci_event ev[3 * MAX_REC];
    size_t n;
    uint64_t ignored, mismatched;
} model;

static void model_exit(model *mo, uint32_t method, int64_t ts)
{
    uint32_t i = mo->depth;
    while (i > 0 && mo->stack[i - 1] != method)
        i--;
    if (i == 0) {
        mo->ignored++;
        return;
    }
    if (i != mo->depth)
        mo->mismatched++;
    while (mo->depth >= i) {
        mo->depth--;
        mo->ev[mo->n++] = (tci_event){.ts_ns = ts, .method = mo->stack[mo->depth], .depth = mo->depth,
                                      .kind = TCI_EV_EXIT};
    }
}

/* A pseudo-random mix of enters, exits of the top, exits below the top and
 * exits of methods not on the stack: normalize agrees with the model. */
static void test_exits_match_stack_model(void)
{
    run x;
    setup(&x);
    uint32_t th = tci_trace_add_thread(&x.t, 1);
    uint32_t m[12];
    char nm[8];
    for (int i = 0; i < 12; i++)
        m[i] = tci_trace_name(&x.t, nm, (size_t)snprintf(nm, sizeof nm, "m%d", i));
    model *mo = calloc(1, sizeof *mo);
    both(&x, TCI_ACT_ENTER, th, m[0], 0); /* a bottom frame that stays: no frames reconstructed */
    mo->stack[mo->depth++] = m[0];
    mo->ev[mo->n++] = (tci_event){.ts_ns = 0, .method = m[0], .depth = 0, .kind = TCI_EV_ENTER};
    uint32_t seed = 12345;
    for (int64_t ts = 1; ts < 3000; ts++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t r = (seed >> 16) % 100, which = 1 + (seed >> 8) % 11;
        if (r < 50 || mo->depth < 2) {
            both(&x, TCI_ACT_ENTER, th, m[which], ts);
            mo->ev[mo->n++] = (tci_event){.ts_ns = ts, .method = m[which], .depth = mo->depth, .kind = TCI_EV_ENTER};
            mo->stack[mo->depth++] = m[which];
        } else if (r < 75) {
            both(&x, TCI_ACT_EXIT, th, mo->stack[mo->depth - 1], ts);
            model_exit(mo, mo->stack[mo->depth - 1], ts);
        } else {
            if (which == 0)
                continue;
            both(&x, TCI_ACT_EXIT, th, m[which], ts); /* below the top, or not on the stack */
            model_exit(mo, m[which], ts);
        }
    }
    CHECK(mo->ignored > 10 && mo->mismatched > 10); /* the script reaches both cases */
    CHECK_EQ_INT(go(&x), TC_OK);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_IGNORED_EXIT], mo->ignored);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_MISMATCHED_EXIT], mo->mismatched);
    /* every model event, in order, then the frames still open closed at the end */
    CHECK(x.w->n >= mo->n);
    size_t bad = 0;
    for (size_t i = 0; i < mo->n && i < x.w->n; i++) {
        const tci_event *a = &x.w->ev[i], *b = &mo->ev[i];
        if (a->kind != b->kind || a->method != b->method || a->depth != b->depth || a->ts_ns != b->ts_ns)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(x.w->n - mo->n, mo->depth);
    free(mo);
    teardown(&x);
}

/* Deep stack, then many exits of a method not on it: all ignored, the stack untouched. */
static void test_stray_exits_under_deep_stack(void)
{
    run x;
    setup(&x);
    x.o.max_depth = 100000;
    uint32_t th = tci_trace_add_thread(&x.t, 1), deep = tci_trace_name(&x.t, "deep", 4),
             stray = tci_trace_name(&x.t, "stray", 5);
    for (int i = 0; i < 1500; i++)
        both(&x, TCI_ACT_ENTER, th, deep, i);
    for (int i = 0; i < 2500; i++)
        both(&x, TCI_ACT_EXIT, th, stray, 1500 + i);
    both(&x, TCI_ACT_EXIT, th, deep, 5000); /* closes the top frame only */
    CHECK_EQ_INT(go(&x), TC_OK);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_IGNORED_EXIT], 2500);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_MISMATCHED_EXIT], 0);
    CHECK_EQ_INT(x.w->n, 1500 + 1 + 1499); /* enters, one exit, the rest closed at the end */
    CHECK_EQ_INT(x.w->ev[1500].kind, TCI_EV_EXIT);
    CHECK_EQ_INT(x.w->ev[1500].depth, 1499);
    CHECK_EQ_INT(x.w->ev[1500].flags, 0);
    CHECK_EQ_INT(x.w->ev[1501].flags, TCI_EVF_SYNTHETIC);
    teardown(&x);
}

/* The counts of open frames are dropped when the stack empties and rebuilt by
 * the next exit below the top: the same answers before and after. */
static void test_counts_rebuilt_after_empty_stack(void)
{
    run x;
    setup(&x);
    uint32_t th = tci_trace_add_thread(&x.t, 1), a = tci_trace_name(&x.t, "a", 1), b = tci_trace_name(&x.t, "b", 1),
             c = tci_trace_name(&x.t, "c", 1);
    int64_t ts = 0;
    for (int round = 0; round < 3; round++) {
        both(&x, TCI_ACT_ENTER, th, a, ts++);
        both(&x, TCI_ACT_ENTER, th, b, ts++);
        both(&x, TCI_ACT_EXIT, th, c, ts++); /* not on the stack: ignored (counting starts) */
        both(&x, TCI_ACT_ENTER, th, c, ts++);
        both(&x, TCI_ACT_EXIT, th, a, ts++); /* below the top: closes c and b, then a; the stack is empty */
    }
    CHECK_EQ_INT(go(&x), TC_OK);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_IGNORED_EXIT], 3);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_MISMATCHED_EXIT], 3);
    CHECK_EQ_INT(x.w->n, 18); /* per round: 3 enters, 3 exits */
    for (int round = 0; round < 3; round++) {
        const tci_event *e = &x.w->ev[6 * round];
        CHECK(e[0].kind == TCI_EV_ENTER && e[0].method == a && e[0].depth == 0);
        CHECK(e[2].kind == TCI_EV_ENTER && e[2].method == c && e[2].depth == 2);
        CHECK(e[3].kind == TCI_EV_EXIT && e[3].method == c && e[3].flags == TCI_EVF_FORCED);
        CHECK(e[4].kind == TCI_EV_EXIT && e[4].method == b && e[4].flags == TCI_EVF_FORCED);
        CHECK(e[5].kind == TCI_EV_EXIT && e[5].method == a && e[5].flags == 0 && e[5].depth == 0);
    }
    teardown(&x);
}

/* start + elapsed beyond int64: a warning that names where the elapsed time was, no overflow. */
static void test_elapsed_overflow(void)
{
    run x;
    setup(&x);
    x.t.start_ns = INT64_MAX - 1000;
    x.t.start_given = true; /* a header start, as ART gives */
    x.t.elapsed_ns = INT64_MAX - 10;
    x.t.elapsed_offset = 0x42;
    uint32_t th = tci_trace_add_thread(&x.t, 1), m = tci_trace_name(&x.t, "m", 1);
    both(&x, TCI_ACT_ENTER, th, m, 1);
    both(&x, TCI_ACT_EXIT, th, m, 2);
    CHECK_EQ_INT(go(&x), TC_OK);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_BAD_LINE], 1);
    CHECK(x.d.n_kept == 1 && strstr(x.d.kept[0], "offset 0x42") && strstr(x.d.kept[0], "elapsed"));
    CHECK_EQ_INT(x.t.end_ns, INT64_MAX - 1000 + 2);
    teardown(&x);

    /* within range: the elapsed time sets the end */
    setup(&x);
    x.t.start_ns = 1000;
    x.t.start_given = true;
    x.t.elapsed_ns = 50;
    th = tci_trace_add_thread(&x.t, 1);
    m = tci_trace_name(&x.t, "m", 1);
    both(&x, TCI_ACT_ENTER, th, m, 1);
    both(&x, TCI_ACT_EXIT, th, m, 2);
    CHECK_EQ_INT(go(&x), TC_OK);
    CHECK_EQ_INT(x.d.fig[TCI_FIG_BAD_LINE], 0);
    CHECK_EQ_INT(x.t.end_ns, 1050);
    teardown(&x);
}

int main(void)
{
    UNIT_RUN(test_frozen_before_ready);
    UNIT_RUN(test_pass2_record_out_of_range);
    UNIT_RUN(test_pass2_intern_fails);
    UNIT_RUN(test_exits_match_stack_model);
    UNIT_RUN(test_stray_exits_under_deep_stack);
    UNIT_RUN(test_counts_rebuilt_after_empty_stack);
    UNIT_RUN(test_elapsed_overflow);
    return UNIT_DONE();
}
