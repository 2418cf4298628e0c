/*
 * core_tables.c - the contracts of the trace's tables (DESIGN.md §5b):
 * frozen after pass 1 (creation fails, lookups work), names compared by
 * length with NUL bytes stored as U+FFFD, linear lookups of processes and
 * metadata. Expected values follow from how each table was filled here.
 */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

#define FFFD "\xEF\xBF\xBD"

static void fresh(tci_trace *t)
{
    CHECK_EQ_INT(tci_trace_init(t), TC_OK);
}

/* The message and status a reader would report for the last refused call. */
static int fail_of(const tci_trace *t, tci_diag *d)
{
    memset(d, 0, sizeof *d);
    d->input = "unit";
    return tci_trace_fail(t, d, "unit", 7);
}

static void test_create_after_freeze_fails(void)
{
    tci_trace t;
    fresh(&t);
    uint32_t th = tci_trace_add_thread(&t, 42);
    uint32_t name = tci_trace_name(&t, "draw", 4);
    uint32_t m = tci_trace_method(&t, 0x10);
    uint32_t p = tci_trace_process(&t, 7);
    uint32_t st = tci_trace_stack(&t, TCI_NONE, name);
    CHECK(th != TCI_NONE && name != TCI_NONE && m != TCI_NONE && p != TCI_NONE && st != TCI_NONE);
    CHECK_EQ_INT(tci_trace_add_meta(&t, "vm", 2, "art", 3), TC_OK);
    uint32_t n_threads = t.n_threads, n_methods = t.n_methods, n_processes = t.n_processes,
             n_stacks = t.n_stacks;

    tci_trace_freeze(&t);

    /* lookups of what exists keep working */
    CHECK_EQ_INT(tci_trace_name(&t, "draw", 4), name);
    CHECK_EQ_INT(tci_trace_method(&t, 0x10), m);
    CHECK_EQ_INT(tci_trace_process(&t, 7), p);
    CHECK_EQ_INT(tci_trace_stack(&t, TCI_NONE, name), st);
    CHECK_EQ_STR(tci_trace_meta(&t, "vm"), "art");

    /* every creation fails, with a clear reason */
    tci_diag d;
    CHECK_EQ_INT(tci_trace_name(&t, "other", 5), TCI_NONE);
    CHECK_EQ_INT(fail_of(&t, &d), TC_ERR_FORMAT);
    CHECK(strstr(d.error, "frozen") != NULL);
    CHECK(strstr(d.error, "offset 0x7") != NULL);
    CHECK_EQ_INT(tci_trace_timeline_name(&t, "a.B.c: (I)V", 11), TCI_NONE);
    CHECK_EQ_INT(tci_trace_name_split(&t, "drawx", 5, 4), TCI_NONE);
    CHECK_EQ_INT(tci_trace_method(&t, 0x20), TCI_NONE);
    CHECK_EQ_INT(tci_trace_add_thread(&t, 43), TCI_NONE);
    CHECK_EQ_INT(tci_trace_process(&t, 8), TCI_NONE);
    CHECK_EQ_INT(tci_trace_stack(&t, st, name), TCI_NONE);
    CHECK_EQ_INT(fail_of(&t, &d), TC_ERR_FORMAT);
    CHECK(strstr(d.error, "frozen") != NULL);
    /* and so does every change of what the writers were given */
    CHECK(tci_trace_define_method(&t, 0x10, "a/B", 3, "c", 1, "()V", 3, NULL, 0, -1) != TC_OK);
    CHECK(tci_trace_name_thread(&t, th, "renamed", 7, 9) != TC_OK);
    CHECK(tci_trace_name_process(&t, p, "renamed", 7, 9) != TC_OK);
    CHECK(tci_trace_add_meta(&t, "k", 1, "v", 1) != TC_OK);

    CHECK_EQ_INT(t.n_threads, n_threads);
    CHECK_EQ_INT(t.n_methods, n_methods);
    CHECK_EQ_INT(t.n_processes, n_processes);
    CHECK_EQ_INT(t.n_stacks, n_stacks);
    CHECK_EQ_INT(t.n_meta, 1);
    tci_trace_free(&t);
}

static void test_names_by_length_with_nul(void)
{
    tci_trace t;
    fresh(&t);
    uint32_t ab = tci_trace_name(&t, "a\0b", 3);
    uint32_t ac = tci_trace_name(&t, "a\0c", 3);
    uint32_t a = tci_trace_name(&t, "a", 1);
    CHECK(ab != TCI_NONE && ac != TCI_NONE && a != TCI_NONE);
    CHECK(ab != ac); /* they differ only after the NUL */
    CHECK(ab != a && ac != a);
    CHECK_EQ_INT(t.n_methods, 3);
    CHECK_EQ_STR(t.methods[ab].name, "a" FFFD "b");
    CHECK_EQ_STR(t.methods[ac].name, "a" FFFD "c");
    /* the same text finds the same entry, again and again (no new entry, no quadratic chain) */
    for (int i = 0; i < 10000; i++)
        if (tci_trace_name(&t, "a\0b", 3) != ab)
            CHECK(!"a\\0b found again");
    CHECK_EQ_INT(t.n_methods, 3);
    /* the stored form is the same name: one entry for what every writer shows alike */
    CHECK_EQ_INT(tci_trace_name(&t, "a" FFFD "b", 5), ab);
    /* a NUL at either end, and only NULs */
    uint32_t z = tci_trace_name(&t, "\0", 1), zz = tci_trace_name(&t, "\0\0", 2), e = tci_trace_name(&t, "", 0);
    CHECK(z != zz && z != e && zz != e);
    CHECK_EQ_STR(t.methods[z].name, FFFD);
    CHECK_EQ_STR(t.methods[zz].name, FFFD FFFD);
    CHECK_EQ_STR(t.methods[e].name, "");
    /* the short form of a timeline name keeps its bytes after the replacement */
    uint32_t j = tci_trace_timeline_name(&t, "p\0q.m: (I)V", 11);
    CHECK(j != TCI_NONE);
    uint32_t th = tci_trace_add_thread(&t, 5);
    CHECK_EQ_INT(tci_trace_name_thread(&t, th, "ui\0x", 4, 1), TC_OK);
    CHECK_EQ_INT(tci_trace_name_process(&t, 0, "app\0", 4, 1), TC_OK);
    CHECK_EQ_INT(tci_trace_add_meta(&t, "k\0", 2, "v\0w", 3), TC_OK);

    tci_options o;
    memset(&o, 0, sizeof o);
    tci_diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tci_trace_finalize(&t, &d, &o), TC_OK);
    tci_trace_freeze(&t);
    CHECK_EQ_STR(t.methods[j].full_name, "p" FFFD "q.m: (I)V");
    CHECK_EQ_STR(t.methods[j].short_name, "p" FFFD "q.m");
    CHECK_EQ_STR(t.threads[th].name, "ui" FFFD "x");
    CHECK_EQ_STR(t.process_name, "app" FFFD);
    CHECK_EQ_STR(tci_trace_meta(&t, "k" FFFD), "v" FFFD "w");
    /* pass 2 looks the same texts up in the frozen tables */
    CHECK_EQ_INT(tci_trace_name(&t, "a\0b", 3), ab);
    CHECK_EQ_INT(tci_trace_name(&t, "a\0c", 3), ac);
    CHECK_EQ_INT(tci_trace_timeline_name(&t, "p\0q.m: (I)V", 11), j);
    CHECK_EQ_INT(tci_trace_name(&t, "\0", 1), z);
    CHECK_EQ_INT(tci_trace_name(&t, "a\0d", 3), TCI_NONE);
    tci_trace_free(&t);
}

static void test_method_definitions_store_no_nul(void)
{
    tci_trace t;
    fresh(&t);
    CHECK_EQ_INT(tci_trace_define_method(&t, 4, "a/B\0", 4, "r\0n", 3, "(\0)V", 4, "F\0.java", 7, 3), TC_OK);
    tci_options o;
    memset(&o, 0, sizeof o);
    tci_diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tci_trace_finalize(&t, &d, &o), TC_OK);
    uint32_t m = tci_trace_method(&t, 4);
    CHECK_EQ_STR(t.methods[m].cls, "a.B" FFFD);
    CHECK_EQ_STR(t.methods[m].file, "F" FFFD ".java");
    CHECK_EQ_STR(t.methods[m].full_name, "a.B" FFFD ".r" FFFD "n: (" FFFD ")V");
    tci_trace_free(&t);
}

/* Thread renames compare by length too: the same name again is not stored again. */
static void test_thread_name_same_text(void)
{
    tci_trace t;
    fresh(&t);
    uint32_t th = tci_trace_add_thread(&t, 1);
    CHECK_EQ_INT(tci_trace_name_thread(&t, th, "w\0", 2, 1), TC_OK);
    const char *first = t.threads[th].name;
    CHECK_EQ_INT(tci_trace_name_thread(&t, th, "w\0", 2, 1), TC_OK);
    CHECK(t.threads[th].name == first);
    CHECK_EQ_INT(tci_trace_name_thread(&t, th, "w", 1, 1), TC_OK); /* a different name */
    CHECK_EQ_STR(t.threads[th].name, "w");
    tci_trace_free(&t);
}

/* Many processes and metadata keys: each lookup finds its own entry (hashed, not scanned). */
static void test_many_processes_and_keys(void)
{
    tci_trace t;
    fresh(&t);
    enum { N = 50000 };
    for (int64_t pid = 1; pid <= N; pid++)
        if (tci_trace_process(&t, pid) != (uint32_t)pid)
            CHECK(!"process index follows creation order");
    CHECK_EQ_INT(t.n_processes, N + 1);
    CHECK_EQ_INT(tci_trace_process(&t, 777), 777);
    CHECK_EQ_INT(tci_trace_process(&t, -1), 0); /* process 0 before it has a pid */
    char k[32], v[32];
    for (int i = 0; i < 5000; i++) {
        int kn = snprintf(k, sizeof k, "key%d", i), vn = snprintf(v, sizeof v, "v%d", i);
        /* the input's keys stop at TCI_META_MAX: a reader asks first (and counts the rest) */
        CHECK_EQ_INT(tci_trace_meta_full(&t, k, (size_t)kn), i >= TCI_META_MAX);
        CHECK_EQ_INT(tci_trace_add_meta(&t, k, (size_t)kn, v, (size_t)vn), TC_OK);
    }
    CHECK_EQ_INT(t.n_meta, TCI_META_MAX + TCI_META_OWN); /* the documented cap */
    CHECK_EQ_STR(tci_trace_meta(&t, "key4159"), "v4159");
    CHECK(tci_trace_meta(&t, "key4160") == NULL);
    CHECK(!tci_trace_meta_full(&t, "key7", 4)); /* a key already there is no new key */
    CHECK_EQ_INT(tci_trace_add_meta(&t, "key7", 4, "later", 5), TC_OK); /* a later value wins */
    CHECK_EQ_STR(tci_trace_meta(&t, "key7"), "later");
    tci_trace_free(&t);
}

/* A system trace: every thread in a process of its own pid, process 0 empty.
 * finalize removes process 0 (it would be written as pid 0) and puts the
 * first process with records in its place; the others keep their order,
 * their threads follow them, and lookups by pid still find each one. */
static void test_system_trace_has_no_pid0_process(void)
{
    tci_trace t;
    fresh(&t);
    t.input_path = "capture.systrace";
    uint32_t idle = tci_trace_process(&t, 50), app = tci_trace_process(&t, 600), sys = tci_trace_process(&t, 700);
    uint32_t a = tci_trace_add_thread(&t, 51), b = tci_trace_add_thread(&t, 601), c = tci_trace_add_thread(&t, 701);
    CHECK(idle == 1 && app == 2 && sys == 3);
    t.threads[a].process = idle;
    t.threads[b].process = app;
    t.threads[c].process = sys;
    t.threads[b].records = t.threads[c].records = 1; /* 50 has no records: 600 is the first real process */
    CHECK_EQ_INT(tci_trace_name_process(&t, sys, "system_server", 13, 1), TC_OK);
    tci_diag d;
    memset(&d, 0, sizeof d);
    tci_options o;
    memset(&o, 0, sizeof o);
    CHECK_EQ_INT(tci_trace_finalize(&t, &d, &o), TC_OK);
    CHECK_EQ_INT(t.n_processes, 3);
    CHECK_EQ_INT(t.processes[0].pid, 600);
    CHECK_EQ_INT(t.processes[1].pid, 50);
    CHECK_EQ_INT(t.processes[2].pid, 700);
    CHECK_EQ_INT(t.pid, 600);
    CHECK_EQ_STR(t.process_name, "process 600"); /* not the file's stem: a real process keeps its own */
    CHECK_EQ_STR(t.processes[2].name, "system_server");
    CHECK_EQ_INT(t.threads[a].process, 1);
    CHECK_EQ_INT(t.threads[b].process, 0);
    CHECK_EQ_INT(t.threads[c].process, 2);
    tci_trace_freeze(&t);
    CHECK_EQ_INT(tci_trace_process(&t, 600), 0);
    CHECK_EQ_INT(tci_trace_process(&t, 50), 1);
    CHECK_EQ_INT(tci_trace_process(&t, 700), 2);
    tci_trace_free(&t);
}

/* A method trace without pid=: the tid of `main` even when main has no
 * records (Dalvik lists `1 main`), else the first thread's; never 0. */
static void test_pid_of_main_without_records(void)
{
    tci_diag d;
    tci_options o;
    memset(&d, 0, sizeof d);
    memset(&o, 0, sizeof o);
    tci_trace t;
    fresh(&t);
    uint32_t w = tci_trace_add_thread(&t, 12), m = tci_trace_add_thread(&t, 1);
    CHECK_EQ_INT(tci_trace_name_thread(&t, w, "worker", 6, 1), TC_OK);
    CHECK_EQ_INT(tci_trace_name_thread(&t, m, "main", 4, 1), TC_OK);
    t.threads[w].records = 2;
    CHECK_EQ_INT(tci_trace_finalize(&t, &d, &o), TC_OK);
    CHECK_EQ_INT(t.pid, 1);
    CHECK_EQ_INT(t.processes[0].pid, 1);
    tci_trace_free(&t);

    fresh(&t); /* no main: the first thread with a tid other than 0 */
    tci_trace_add_thread(&t, 0);
    tci_trace_add_thread(&t, 33);
    CHECK_EQ_INT(tci_trace_finalize(&t, &d, &o), TC_OK);
    CHECK_EQ_INT(t.pid, 33);
    CHECK_EQ_INT(t.processes[0].pid, 33);
    tci_trace_free(&t);
}

int main(void)
{
    UNIT_RUN(test_create_after_freeze_fails);
    UNIT_RUN(test_names_by_length_with_nul);
    UNIT_RUN(test_method_definitions_store_no_nul);
    UNIT_RUN(test_thread_name_same_text);
    UNIT_RUN(test_many_processes_and_keys);
    UNIT_RUN(test_system_trace_has_no_pid0_process);
    UNIT_RUN(test_pid_of_main_without_records);
    return UNIT_DONE();
}
