/*
 * api_threads.c - "distinct tc_conv objects may be used from different
 * threads at once" (traceconv.h), checked: several threads convert different
 * inputs of every reader through every writer at the same time, and each
 * result (status, message, output bytes) equals the one of a serial run.
 * Public API only. Built with ThreadSanitizer by `make test-tsan`, which then
 * also reports any data race inside the library.
 *
 * Inputs: corpus/ *.trace (art), corpus/systrace and corpus/rhea (every file
 * but their generator and facts: traces, side files and non-traces), tests/json
 * (json), tests/ir (ir).
 */
#include <traceconv.h>

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#define N_THREADS 4

static const char *const writers[] = {"json", "folded", "pprof", "perfetto", "systrace", "ir",
                                      "flamegraph", "report", "dot", "speedscope"};
#define N_WRITERS (sizeof writers / sizeof *writers)

typedef struct result {
    int rc;
    char *error;
    unsigned char *out;
    size_t len, cap;
} result;

typedef struct job {
    const char *path;
    const char *writer;
    result serial, parallel;
} job;

static char **paths;
static size_t n_paths;
static job *jobs;
static size_t n_jobs;
static atomic_size_t next_job;
/* The threads start together: a count under a mutex (pthread_barrier_t is not in macOS). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int start_waiting;

static void start_together(void)
{
    pthread_mutex_lock(&start_lock);
    if (++start_waiting == N_THREADS)
        pthread_cond_broadcast(&start_cond);
    while (start_waiting < N_THREADS)
        pthread_cond_wait(&start_cond, &start_lock);
    pthread_mutex_unlock(&start_lock);
}

static int collect(void *user, const void *p, size_t n)
{
    result *r = user;
    if (r->len + n > r->cap) {
        size_t cap = (r->len + n) * 2;
        unsigned char *q = realloc(r->out, cap);
        if (!q)
            return -1;
        r->out = q;
        r->cap = cap;
    }
    memcpy(r->out + r->len, p, n);
    r->len += n;
    return 0;
}

static void convert(const job *j, result *r)
{
    memset(r, 0, sizeof *r);
    tc_conv *c = tc_conv_new();
    r->rc = tc_conv_open(c, j->path, NULL);
    if (r->rc == TC_OK)
        r->rc = tc_conv_write_to(c, j->writer, collect, r);
    r->error = strdup(tc_conv_error(c));
    /* the other per-object answers are read concurrently too */
    tc_figure fig[64];
    (void)tc_conv_figures(c, fig, 64);
    (void)tc_conv_input_summary(c);
    (void)tc_writer_extension(j->writer);
    (void)tc_format_at(0);
    tc_conv_free(c);
}

static size_t gcd(size_t a, size_t b) { return b ? gcd(b, a % b) : a; }

static void *worker(void *arg)
{
    (void)arg;
    /* a stride through the list, so that threads convert different readers at once; prime to
     * the number of jobs (a multiple of the number of writers), so that every job is visited */
    size_t stride = 7;
    while (n_jobs && gcd(stride, n_jobs) != 1)
        stride += 2;
    start_together();
    for (;;) {
        size_t i = atomic_fetch_add(&next_job, 1);
        if (i >= n_jobs)
            return NULL;
        size_t k = (i * stride) % n_jobs;
        convert(&jobs[k], &jobs[k].parallel);
    }
}

static int skip_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] == '.' || !strncmp(name, "LICENSE", 7) || (n > 3 && !strcmp(name + n - 3, ".py")) ||
           (n > 3 && !strcmp(name + n - 3, ".md")) || !strcmp(name, "facts.json");
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every file of dir (ending in suffix, if given); returns how many. */
static size_t add_dir(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t before = n_paths;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (skip_name(e->d_name) || (suffix && (n < strlen(suffix) || strcmp(e->d_name + n - strlen(suffix), suffix))))
            continue;
        paths = realloc(paths, (n_paths + 1) * sizeof *paths);
        size_t len = strlen(dir) + n + 2;
        paths[n_paths] = malloc(len);
        snprintf(paths[n_paths], len, "%s/%s", dir, e->d_name);
        n_paths++;
    }
    closedir(d);
    qsort(paths + before, n_paths - before, sizeof *paths, by_name);
    return n_paths - before;
}

static int same(const result *a, const result *b)
{
    return a->rc == b->rc && !strcmp(a->error, b->error) && a->len == b->len &&
           (a->len == 0 || !memcmp(a->out, b->out, a->len));
}

static void test_parallel_equals_serial(void)
{
    size_t ok = 0;
    for (size_t i = 0; i < n_jobs; i++)
        convert(&jobs[i], &jobs[i].serial);
    for (size_t i = 0; i < n_jobs; i++)
        ok += jobs[i].serial.rc == TC_OK;
    CHECK(ok > n_jobs / 2); /* most inputs convert: the comparison is not of failures only */

    pthread_t th[N_THREADS];
    atomic_store(&next_job, 0);
    start_waiting = 0;
    for (int t = 0; t < N_THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, worker, NULL) == 0);
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(th[t], NULL);

    for (size_t i = 0; i < n_jobs; i++) {
        if (!same(&jobs[i].serial, &jobs[i].parallel)) {
            fprintf(stderr, "  %s -> %s: parallel differs from serial (rc %d/%d, %zu/%zu bytes, '%s' / '%s')\n",
                    jobs[i].path, jobs[i].writer, jobs[i].serial.rc, jobs[i].parallel.rc, jobs[i].serial.len,
                    jobs[i].parallel.len, jobs[i].serial.error, jobs[i].parallel.error);
            CHECK(!"parallel conversion equals the serial one");
        }
    }
    printf("%zu conversions (%zu inputs x %zu writers, %zu succeed) on %d threads\n", n_jobs, n_paths,
           (size_t)N_WRITERS, ok, N_THREADS);
}

/* A Chrome JSON trace of n complete ("X") slices, nested three deep, in a
 * shuffled order the reader must sort: big enough that conversions overlap. */
static void generate_json(const char *path, unsigned n, unsigned seed)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "{\"traceEvents\":[\n");
    for (unsigned i = 0; i < n; i++) {
        unsigned k = (i * 7919u + seed) % n; /* a permutation when n is not a multiple of 7919 */
        unsigned outer = k / 3, level = k % 3;
        fprintf(f, "{\"ph\":\"X\",\"name\":\"s%u_%u\",\"pid\":1,\"tid\":%u,\"ts\":%u,\"dur\":%u}%s\n",
                seed, level, 1 + outer % 4, outer * 100 + level * 10, 100 - level * 20, i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    fclose(f);
    paths = realloc(paths, (n_paths + 1) * sizeof *paths);
    paths[n_paths++] = strdup(path);
}

int main(void)
{
    add_dir(TC_SOURCE_DIR "/corpus", ".trace");
    add_dir(TC_SOURCE_DIR "/tests/json", NULL);
    add_dir(TC_SOURCE_DIR "/tests/ir", NULL);
    generate_json("api_threads_1.json", 6000, 1);
    generate_json("api_threads_2.json", 6000, 2);
    CHECK(add_dir(TC_SOURCE_DIR "/corpus/systrace", NULL) > 0);
    CHECK(add_dir(TC_SOURCE_DIR "/corpus/rhea", NULL) > 0);
    n_jobs = n_paths * N_WRITERS;
    jobs = calloc(n_jobs, sizeof *jobs);
    for (size_t i = 0; i < n_paths; i++)
        for (size_t w = 0; w < N_WRITERS; w++)
            jobs[i * N_WRITERS + w] = (job){.path = paths[i], .writer = writers[w]};
    UNIT_RUN(test_parallel_equals_serial);
    for (size_t i = 0; i < n_jobs; i++) {
        free(jobs[i].serial.out);
        free(jobs[i].serial.error);
        free(jobs[i].parallel.out);
        free(jobs[i].parallel.error);
    }
    for (size_t i = 0; i < n_paths; i++)
        free(paths[i]);
    free(paths);
    free(jobs);
    return UNIT_DONE();
}
