/*
 * input_shrinks.c - issue 22 item 9: a mapped input that shrinks while it
 * is read (SIGBUS) fails that conversion with "input changed while reading",
 * deterministically: the progress callback truncates the file in the middle
 * of the first pass. Public API only (traceconv.h, "mapped input that
 * changes while it is read"):
 *  - a file opened by path: the write fails with TC_ERR_IO and the message,
 *    and a conversion of an intact file in another thread at the same time
 *    succeeds with the bytes a serial conversion gives;
 *  - a caller's own mapping guarded with tc_guard_mapping: probe and
 *    conversion fail the same way, tc_mapping_changed / tc_unguard_mapping
 *    say 1, and an unregistered address is TC_ERR_USAGE;
 *  - a SIGBUS outside every watched mapping reaches the handler the
 *    application installed before the library (chained, with its siginfo).
 */
#include <traceconv.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"

#define N_PAIRS 400000 /* 800k records: the progress callback runs every 256k */

static char dir[] = "/tmp/tc-shrink-XXXXXX";

/* A v3 non-streaming ART trace: one thread entering and leaving one method. */
static void write_trace(const char *path)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("*version\n3\ndata-file-overflow=false\nclock=dual\nvm=art\npid=7\n*threads\n7\tmain\n"
          "*methods\n0x4\tcom.example.A\trun\t()V\tA.java\n*end\n", f);
    unsigned char head[32] = {'S', 'L', 'O', 'W', 3, 0, 32, 0, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0, 14, 0};
    fwrite(head, 1, sizeof head, f);
    for (uint32_t i = 0; i < N_PAIRS; i++) {
        for (uint32_t action = 0; action < 2; action++) {
            uint32_t method = 4 | action, t = 2 * i + action;
            unsigned char rec[14] = {7, 0};
            memcpy(rec + 2, &method, 4);
            memcpy(rec + 6, &t, 4);
            memcpy(rec + 10, &t, 4);
            fwrite(rec, 1, sizeof rec, f);
        }
    }
    CHECK(fclose(f) == 0);
}

/* Progress: the first call cuts the file to 64 KiB, in the middle of pass 1. */
static int cut_at_first_call(void *user, uint64_t done, uint64_t total)
{
    (void)done, (void)total;
    const char *path = user;
    static _Thread_local int calls;
    if (calls++ == 0)
        CHECK(truncate(path, 1 << 16) == 0);
    return 0;
}

typedef struct outbuf {
    unsigned char *p;
    size_t n, cap;
} outbuf;

static int collect(void *user, const void *p, size_t n)
{
    outbuf *b = user;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            return -1;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

typedef struct job {
    char path[64];
    bool cut;
    int rc;
    char error[512];
    outbuf out;
} job;

static void *convert(void *arg)
{
    job *j = arg;
    tc_conv *c = tc_conv_new();
    j->rc = tc_conv_open(c, j->path, NULL);
    if (j->rc == TC_OK) {
        if (j->cut)
            tc_conv_set_progress(c, cut_at_first_call, j->path);
        j->rc = tc_conv_write_to(c, "folded", collect, &j->out);
    }
    snprintf(j->error, sizeof j->error, "%s", tc_conv_error(c));
    tc_conv_free(c);
    return NULL;
}

static void test_file_cut_while_converting(void)
{
    job intact = {.cut = false}, cut = {.cut = true}, serial = {.cut = false};
    snprintf(intact.path, sizeof intact.path, "%s/intact.trace", dir);
    snprintf(cut.path, sizeof cut.path, "%s/cut.trace", dir);
    snprintf(serial.path, sizeof serial.path, "%s", intact.path);
    write_trace(intact.path);
    write_trace(cut.path);
    convert(&serial);
    CHECK_EQ_INT(serial.rc, TC_OK);
    pthread_t a, b;
    pthread_create(&a, NULL, convert, &intact);
    pthread_create(&b, NULL, convert, &cut);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    CHECK_EQ_INT(cut.rc, TC_ERR_IO);
    CHECK(strstr(cut.error, "cut.trace: input: offset 0x") != NULL);
    CHECK(strstr(cut.error, "input changed while reading") != NULL);
    CHECK_EQ_INT(intact.rc, TC_OK);
    CHECK(intact.out.n == serial.out.n && intact.out.n > 0 && !memcmp(intact.out.p, serial.out.p, serial.out.n));
    free(intact.out.p);
    free(cut.out.p);
    free(serial.out.p);
    unlink(intact.path);
    unlink(cut.path);
}

static void test_caller_mapping(void)
{
    char path[64];
    snprintf(path, sizeof path, "%s/mapped.trace", dir);
    write_trace(path);
    int fd = open(path, O_RDONLY);
    off_t size = lseek(fd, 0, SEEK_END);
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    CHECK(p != MAP_FAILED);
    CHECK_EQ_INT(tc_mapping_changed(p), TC_ERR_USAGE); /* not registered yet */
    CHECK_EQ_INT(tc_guard_mapping(p, (size_t)size), TC_OK);
    CHECK_EQ_INT(tc_mapping_changed(p), 0);
    tc_probe_score scores[16];
    char err[512] = "";
    CHECK(tc_probe_memory(p, (size_t)size, "mapped.trace", scores, 16, err, sizeof err) > 0);
    CHECK_EQ_INT(truncate(path, 0), 0);
    CHECK_EQ_INT(tc_probe_memory(p, (size_t)size, "mapped.trace", scores, 16, err, sizeof err), TC_ERR_IO);
    CHECK(strstr(err, "mapped.trace: input: offset 0x0: input changed while reading") != NULL);
    CHECK_EQ_INT(tc_mapping_changed(p), 1);
    tc_conv *c = tc_conv_new();
    int rc = tc_conv_open_memory(c, (const unsigned char *)p + 100, (size_t)size - 100, "inside.trace", "art");
    CHECK_EQ_INT(rc, TC_ERR_IO); /* a pointer into the watched mapping is watched too */
    CHECK(strstr(tc_conv_error(c), "inside.trace: input: offset 0x0: input changed while reading") != NULL);
    tc_conv_free(c);
    CHECK_EQ_INT(tc_unguard_mapping(p), 1);
    CHECK_EQ_INT(tc_unguard_mapping(p), TC_ERR_USAGE);
    munmap(p, (size_t)size);
    unlink(path);
}

/* The application's own SIGBUS handler, installed before the library's. */
static sigjmp_buf back;
static volatile sig_atomic_t app_handler_calls;
static volatile void *app_fault_addr;

static void app_sigbus(int sig, siginfo_t *info, void *uctx)
{
    (void)sig, (void)uctx;
    app_handler_calls++;
    app_fault_addr = info->si_addr;
    siglongjmp(back, 1);
}

static void test_foreign_fault_is_chained(void)
{
    char path[64];
    snprintf(path, sizeof path, "%s/foreign.bin", dir);
    FILE *f = fopen(path, "wb");
    static char page[1 << 16];
    fwrite(page, 1, sizeof page, f);
    fclose(f);
    int fd = open(path, O_RDONLY);
    volatile unsigned char *p = mmap(NULL, sizeof page, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    CHECK(truncate(path, 0) == 0);
    int seen = -1;
    if (sigsetjmp(back, 1) == 0)
        seen = p[sizeof page - 1]; /* not watched by the library: the application's handler gets it */
    CHECK_EQ_INT(seen, -1);
    CHECK_EQ_INT(app_handler_calls, 1);
    CHECK(app_fault_addr == (void *)(p + sizeof page - 1));
    munmap((void *)p, sizeof page);
    unlink(path);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = app_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL); /* before the library installs its own on the first open */
    UNIT_RUN(test_file_cut_while_converting);
    UNIT_RUN(test_caller_mapping);
    UNIT_RUN(test_foreign_fault_is_chained);
    rmdir(dir);
    return UNIT_DONE();
}
