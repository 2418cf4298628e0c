/*
 * api_pipe.c - issue 26 goal 2: option threads (one conversion on two threads, the
 * reading and the writing overlapped) gives what one thread gives. The oracle is the
 * one-thread path (threads 1, the library's default: no thread is started there), so
 * every check is a comparison of the two runs of one conversion: status, each output's
 * status, message and bytes, the figures and the kept warnings. Public API only.
 *  - inputs of several readers (corpus/, tests/json) through every writer, alone and
 *    several in one pass, with selection options;
 *  - generated ART traces of 60k and 800k records (many hand-overs: the batches are 1024
 *    events), with frames open at the start and at the end;
 *  - failures: an output's write failing after N bytes (one of two outputs, and every
 *    output: the stop that must read as one thread's, figures included), max-output,
 *    a cancel from the progress callback, the input shrinking during the second pass.
 * Built with ThreadSanitizer by `make test-tsan`, which then reports any data race
 * between the reading and the writing thread.
 */
#include <traceconv.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#define N_PAIRS 400000 /* 800k records: several progress calls per pass (one per 256k records) */
#define MAX_OUTS 6

static char dir[] = "/tmp/tc-pipe-XXXXXX";
static char big[96], mid[96];

/* A v3 ART trace: three threads; thread 2 starts inside two frames (exits without enter)
 * and leaves one open at the end; the others nest three deep. */
static void write_trace(const char *path, uint32_t n_pairs)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("*version\n3\ndata-file-overflow=false\nclock=dual\nvm=art\npid=7\n*threads\n1\tmain\n2\tworker\n"
          "3\tbinder\n*methods\n0x4\tcom.example.A\trun\t()V\tA.java\n0x8\tcom.example.B\tstep\t(I)V\tB.java\n"
          "0xc\tcom.example.C\tleaf\t()I\tC.java\n0x10\tcom.example.D\tidle\t()V\tD.java\n*end\n", f);
    unsigned char head[32] = {'S', 'L', 'O', 'W', 3, 0, 32, 0, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0, 14, 0};
    fwrite(head, 1, sizeof head, f);
    uint32_t t = 0;
    unsigned char rec[14];
#define REC(tid, m, a)                                                                  \
    do {                                                                                \
        uint32_t method_ = (m) | (a), time_ = t++;                                      \
        rec[0] = (unsigned char)(tid), rec[1] = 0;                                      \
        memcpy(rec + 2, &method_, 4);                                                   \
        memcpy(rec + 6, &time_, 4);                                                     \
        memcpy(rec + 10, &time_, 4);                                                    \
        fwrite(rec, 1, sizeof rec, f);                                                  \
    } while (0)
    REC(2, 0xc, 1); /* exits of frames open before tracing began */
    REC(2, 0x8, 1);
    REC(2, 0x10, 0); /* open at the end */
    for (uint32_t i = 0; 6 * i < 2 * n_pairs; i++) {
        uint32_t tid = 1 + i % 3, m = i % 5 == 0 ? 0x8 : 0x4;
        REC(tid, m, 0);
        REC(tid, 0xc, 0);
        REC(tid, 0xc, 1);
        REC(tid, m, 1);
        REC(tid, 0x10, 0);
        REC(tid, 0x10, 1);
    }
#undef REC
    CHECK(fclose(f) == 0);
}

/* A copy of the trace at src with records after its cut (pass 1's split, option threads 2)
 * that the second half cannot take alone: a thread not in the thread list, an exit that
 * does not close the top frame, a method id not in the table. Each is read again on the
 * first half's thread, so the conversion equals the one-thread one. */
static void write_trace_with_tail(const char *path, const char *src)
{
    FILE *in = fopen(src, "rb"), *out = fopen(path, "wb");
    CHECK(in != NULL && out != NULL);
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK(fwrite(buf, 1, n, out) == n);
    fclose(in);
    static const unsigned char tail[][14] = {
        {9, 0, 0x04, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f},  /* tid 9: unlisted */
        {1, 0, 0x05, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f},  /* an exit of A: not on the stack */
        {2, 0, 0x41, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f},  /* method 0x40: not in the table */
    };
    CHECK(fwrite(tail, 1, sizeof tail, out) == sizeof tail);
    CHECK(fclose(out) == 0);
}

typedef struct outbuf {
    unsigned char *p;
    size_t n, cap;
    size_t fail_after; /* a write that would pass this many bytes fails (0: none) */
} outbuf;

static int collect(void *user, const void *p, size_t n)
{
    outbuf *b = user;
    if (b->fail_after && b->n + n > b->fail_after)
        return -1;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        unsigned char *q = realloc(b->p, b->cap);
        if (!q)
            return -1;
        b->p = q;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

typedef struct run {
    int rc;
    char error[1024];
    size_t n_out;
    int status[MAX_OUTS];
    char out_error[MAX_OUTS][512];
    outbuf out[MAX_OUTS];
    tc_figure fig[64];
    size_t n_fig;
    char *warnings; /* the kept warnings, '\n'-joined */
} run;

typedef struct setup {
    const char *path;
    const char *writers[MAX_OUTS];
    const char *options[8][2]; /* key, value; NULL key ends */
    size_t fail_after[MAX_OUTS];
    tc_progress_fn progress;
    void *progress_user;
} setup;

static void run_free(run *r)
{
    for (size_t i = 0; i < r->n_out; i++)
        free(r->out[i].p);
    free(r->warnings);
}

static void convert(const setup *s, const char *threads, run *r)
{
    memset(r, 0, sizeof *r);
    tc_conv *c = tc_conv_new();
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_EQ_INT(tc_conv_set_option(c, "threads", threads), TC_OK);
    for (size_t i = 0; i < 8 && s->options[i][0]; i++)
        CHECK_EQ_INT(tc_conv_set_option(c, s->options[i][0], s->options[i][1]), TC_OK);
    if (s->progress)
        tc_conv_set_progress(c, s->progress, s->progress_user);
    tc_output outs[MAX_OUTS];
    while (r->n_out < MAX_OUTS && s->writers[r->n_out]) {
        size_t i = r->n_out++;
        r->out[i].fail_after = s->fail_after[i];
        outs[i] = (tc_output){.writer = s->writers[i], .fn = collect, .user = &r->out[i]};
    }
    r->rc = tc_conv_open(c, s->path, NULL);
    if (r->rc == TC_OK)
        r->rc = tc_conv_write_many(c, outs, r->n_out);
    snprintf(r->error, sizeof r->error, "%s", tc_conv_error(c));
    for (size_t i = 0; i < r->n_out; i++) {
        r->status[i] = outs[i].status;
        snprintf(r->out_error[i], sizeof r->out_error[i], "%s", outs[i].error ? outs[i].error : "");
    }
    r->n_fig = tc_conv_figures(c, r->fig, 64);
    size_t len = 0;
    FILE *m = open_memstream(&r->warnings, &len);
    for (size_t i = 0; m && tc_conv_warning_at(c, i); i++)
        fprintf(m, "%s\n", tc_conv_warning_at(c, i));
    if (m)
        fclose(m);
    tc_conv_free(c);
}

/* The threads option compared with 1 ("2": a reading thread and, with several outputs
 * of different groups, two writing threads; more: up to one writing thread per output). */
static const char *threads = "2";

/* The conversion on several threads equals it on one; what differs is printed. */
static void same(const setup *s, const char *what)
{
    run one, two;
    convert(s, "1", &one);
    convert(s, threads, &two);
    bool ok = one.rc == two.rc && !strcmp(one.error, two.error) && one.n_fig == two.n_fig &&
              !strcmp(one.warnings ? one.warnings : "", two.warnings ? two.warnings : "");
    for (size_t i = 0; ok && i < one.n_fig; i++)
        ok = one.fig[i].value == two.fig[i].value;
    for (size_t i = 0; ok && i < one.n_out; i++)
        ok = one.status[i] == two.status[i] && !strcmp(one.out_error[i], two.out_error[i]) &&
             one.out[i].n == two.out[i].n && (!one.out[i].n || !memcmp(one.out[i].p, two.out[i].p, one.out[i].n));
    if (!ok) {
        fprintf(stderr, "%s: %s (%s...): threads 1 and %s differ: rc %d/%d, '%s' / '%s'\n", what, s->path,
                s->writers[0], threads, one.rc, two.rc, one.error, two.error);
        for (size_t i = 0; i < one.n_fig; i++)
            if (one.fig[i].value != two.fig[i].value)
                fprintf(stderr, "  figure %s: %llu / %llu\n", one.fig[i].name, (unsigned long long)one.fig[i].value,
                        (unsigned long long)two.fig[i].value);
        for (size_t i = 0; i < one.n_out; i++)
            fprintf(stderr, "  output %zu: status %d/%d, %zu/%zu bytes, '%s' / '%s'\n", i, one.status[i],
                    two.status[i], one.out[i].n, two.out[i].n, one.out_error[i], two.out_error[i]);
    }
    CHECK(ok);
    run_free(&one);
    run_free(&two);
}

static const char *const writers[] = {"json", "folded", "pprof", "perfetto", "systrace", "ir",
                                      "flamegraph", "report", "dot", "speedscope", NULL};

static void test_every_writer(void)
{
    static const char *const inputs[] = {"corpus/app-startup.trace", "corpus/open-at-end.trace",
                                         "corpus/mismatched-exit-and-action3.trace", "corpus/systrace/capture.txt",
                                         "tests/json/exits-without-enter.json", "tests/json/system.json", NULL};
    char path[512];
    for (size_t i = 0; inputs[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", TC_SOURCE_DIR, inputs[i]);
        for (size_t w = 0; writers[w]; w++)
            same(&(setup){.path = path, .writers = {writers[w]}}, "one writer");
        same(&(setup){.path = path, .writers = {"perfetto", "json", "pprof", "folded", "report"}}, "five at once");
        same(&(setup){.path = path, .writers = {"json", "folded"}, .options = {{"thread", "main"}}}, "--thread");
        same(&(setup){.path = path, .writers = {"perfetto", "folded"}, .options = {{"since", "1us"}, {"until", "3ms"}}},
             "--since/--until");
        same(&(setup){.path = path, .writers = {"folded", "report"}, .options = {{"reverse", "1"}, {"strict", "1"}}},
             "--reverse --strict");
    }
}

static void test_generated(void)
{
    for (size_t w = 0; writers[w]; w++)
        same(&(setup){.path = mid, .writers = {writers[w]}}, "60k records");
    same(&(setup){.path = big, .writers = {"perfetto", "json", "pprof"}}, "800k records, three at once");
    same(&(setup){.path = mid, .writers = {"folded", "json"}, .options = {{"ignore", "*idle*"}}}, "--ignore");
    same(&(setup){.path = mid, .writers = {"systrace"}, .options = {{"max-depth", "1"}}}, "--max-depth");
    /* pass 1 on two threads falls back to one: the second half's records need the first half's tables */
    char tail[112];
    snprintf(tail, sizeof tail, "%s/tail.trace", dir);
    write_trace_with_tail(tail, mid);
    same(&(setup){.path = tail, .writers = {"perfetto", "folded", "report"}}, "records the second half cannot take");
    same(&(setup){.path = tail, .writers = {"json"}, .options = {{"max-events", "60000"}}}, "max-events after the cut");
    unlink(tail);
}

/* Outputs that fail mid-way: the figures of a conversion whose every output failed are
 * those at the event that failed the last (the reading thread ran further). */
static void test_outputs_fail(void)
{
    same(&(setup){.path = big, .writers = {"json", "folded"}, .fail_after = {100000}}, "one output of two fails");
    same(&(setup){.path = big, .writers = {"json"}, .fail_after = {100000}}, "the only output fails");
    same(&(setup){.path = big, .writers = {"json", "perfetto"}, .fail_after = {200000, 300000}},
         "both outputs fail");
    same(&(setup){.path = big, .writers = {"pprof", "perfetto"}, .options = {{"max-output", "64K"}}}, "max-output");
    same(&(setup){.path = big, .writers = {"folded"}, .options = {{"thread", "main"}}, .fail_after = {1}},
         "a selection, the only output fails at once");
    /* the events left out change the figures between two events handed over: the marks'
     * changes within a batch (handoff.c) must give the stopping event's */
    same(&(setup){.path = big, .writers = {"json"}, .options = {{"thread", "main"}}, .fail_after = {150000}},
         "a selection leaves out events, the only output fails mid-way");
    same(&(setup){.path = big, .writers = {"folded", "json"}, .options = {{"thread", "worker"}},
                  .fail_after = {0, 250000}},
         "a selection, the direct output fails mid-way");
}

/* Several writing threads (the outputs split by groups: the call tree's writers on one,
 * the merge's on one, each direct writer on one, as many as the option allows): every
 * output the same, and the read stops where one thread stops, at the event that failed
 * the last output whichever thread had it and whichever thread failed first. */
static void test_writing_threads(void)
{
    static const char *const several[] = {"2", "4", NULL};
    char path[512];
    snprintf(path, sizeof path, "%s/corpus/systrace/capture.txt", TC_SOURCE_DIR);
    for (size_t t = 0; several[t]; t++) {
        threads = several[t];
        same(&(setup){.path = mid, .writers = {"json", "perfetto", "pprof", "folded", "systrace", "speedscope"}},
             "six at once");
        same(&(setup){.path = path, .writers = {"perfetto", "json", "systrace", "report"}}, "system events, four at once");
        same(&(setup){.path = mid, .writers = {"json", "perfetto", "folded"}, .fail_after = {200000, 0, 0}},
             "the first thread's output fails, the others go on");
        same(&(setup){.path = mid, .writers = {"json", "perfetto", "ir"}, .fail_after = {200000, 300000, 400000}},
             "every output fails, the last on another thread");
        same(&(setup){.path = mid, .writers = {"json", "perfetto", "ir"}, .fail_after = {900000, 300000, 100000}},
             "every output fails, the last on the first thread");
        same(&(setup){.path = mid, .writers = {"perfetto", "json", "ir"}, .fail_after = {1, 1, 1}},
             "every output fails at once");
        same(&(setup){.path = mid, .writers = {"json", "perfetto", "pprof"}, .options = {{"max-output", "64K"}}},
             "max-output on every thread");
        same(&(setup){.path = mid, .writers = {"json", "folded", "perfetto"}, .options = {{"thread", "main"}},
                      .fail_after = {300000, 0, 200000}},
             "a selection, the direct outputs fail");
    }
    threads = "2";
}

/* Cancel at the n-th progress call: the second pass is under way (n = 4 on 800k records). */
static int cancel_at(void *user, uint64_t done, uint64_t total)
{
    (void)done, (void)total;
    int *left = user;
    return --*left <= 0;
}

static void test_cancel(void)
{
    for (int n = 1; n <= 5; n += 2) {
        /* each run counts down its own copy: the calls differ between the runs (the writing
         * thread's sinks ask too), the outcome does not */
        run one, two;
        int left1 = n, left2 = n;
        setup s = {.path = big, .writers = {"json", "perfetto"}, .progress = cancel_at, .progress_user = &left1};
        convert(&s, "1", &one);
        s.progress_user = &left2;
        convert(&s, "2", &two);
        CHECK_EQ_INT(one.rc, TC_ERR_CANCELED);
        CHECK_EQ_INT(two.rc, TC_ERR_CANCELED);
        CHECK(!strcmp(one.error, two.error));
        for (size_t i = 0; i < 2; i++)
            CHECK_EQ_INT(two.status[i], TC_ERR_CANCELED);
        run_free(&one);
        run_free(&two);
    }
}

/* The input shrinks once the second pass began: the guard's fault is noticed on two threads too. */
static int cut_in_pass_2(void *user, uint64_t done, uint64_t total)
{
    const char *path = user;
    if (done > total / 2 && done < total) { /* normalize's calls in pass 2 (the sinks ask with done = total) */
        if (truncate(path, 1 << 16) != 0)
            return 1;
    }
    return 0;
}

static void test_input_shrinks(void)
{
    char copy[128];
    snprintf(copy, sizeof copy, "%s/shrinks.trace", dir);
    for (int threads = 1; threads <= 2; threads++) {
        write_trace(copy, N_PAIRS);
        run r;
        setup s = {.path = copy, .writers = {"perfetto", "folded"}, .progress = cut_in_pass_2, .progress_user = copy};
        convert(&s, threads == 1 ? "1" : "2", &r);
        CHECK_EQ_INT(r.rc, TC_ERR_IO);
        CHECK(strstr(r.error, "input changed while reading") != NULL);
        for (size_t i = 0; i < 2; i++)
            CHECK_EQ_INT(r.status[i], TC_ERR_IO);
        run_free(&r);
    }
    unlink(copy);
}

/* argv[1] "1" or "2": one half of the tests (ctest runs the halves side by side: under
 * TSan the whole took a minute alone); none: all of them. */
int main(int argc, char **argv)
{
    int part = argc > 1 ? atoi(argv[1]) : 0;
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(big, sizeof big, "%s/big.trace", dir);
    write_trace(big, N_PAIRS);
    snprintf(mid, sizeof mid, "%s/mid.trace", dir);
    write_trace(mid, 30000);
    if (part != 2) {
        UNIT_RUN(test_every_writer);
        UNIT_RUN(test_generated);
    }
    if (part != 1) {
        UNIT_RUN(test_outputs_fail);
        UNIT_RUN(test_writing_threads);
        UNIT_RUN(test_cancel);
        UNIT_RUN(test_input_shrinks);
    }
    unlink(big);
    unlink(mid);
    rmdir(dir);
    return UNIT_DONE();
}
