/*
 * serve_store.c - the result store and the worker pool of `traceconv serve`.
 *
 * The store is one private directory (0700): tmp/ holds the uploads being
 * received (files named by random ids, 0600, removed as soon as they are
 * done with) and the API's outputs (unlinked), and each result is a directory
 * named by its 128-bit random id holding a fixed set of file names
 * (srv_output_at). A result is converted in tmp/<id>.part and renamed into
 * place whole, so a result that exists is complete. Every output file, the
 * files of a result and the API's, is written by the command's one module
 * for output files (outfile.c: a temporary file renamed when complete, or an
 * unlinked one; removed on failure). Results expire by count, age and total
 * size, oldest first.
 *
 * A page upload is converted at once into what the result page shows (the
 * text report it quotes, the flame graphs, the HTML report and the activity its
 * time bar draws), and kept: the
 * other outputs (JSON, Perfetto, pprof, ...: up to 11 times the trace's size
 * together, 26 times with the rest) are converted from it when downloaded, as
 * the API converts, into an unlinked temporary file. So a result holds about
 * its upload, and a result that the store cannot keep (more than --keep-size)
 * is refused before it is published, with a line that says so: it is never
 * published and evicted at once, nor does it evict the others first. The page
 * still says which flame graph variants exist (a trace without a CPU clock has
 * no CPU flame graph) instead of failing on a click.
 *
 * Workers are plain threads taking jobs from a bounded queue; a conversion
 * never runs on MHD's event thread. Stopping cancels the running conversions
 * through the library's progress callback.
 */
#include "serve.h"
#include "cli_util.h"
#include "outfile.h"
#include "../util/escape.h" /* the library's escaping rules, compiled in (CMakeLists.txt) */
#include "traceconv.h"
#include "../util/tc_compat.h" /* compiled in (CMakeLists.txt) */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the outputs of a result (a fixed grammar of file names) ---- */

/* What a result holds (kept, converted at upload) or converts when downloaded (on demand):
 * each a library writer or variant, and the options its flame graph variants take. The page
 * finds its parts here by their output, never by their place: the text report it quotes
 * ("report"), the HTML report ("report-html"), its flame graph tabs (every "flamegraph", in
 * this order: serve_page.c's tabs). */
static const char *const flame_cpu[] = {"weight", "cpu", "title", "Flame Graph (CPU time)", NULL};
static const char *const flame_merged[] = {"merge-threads", "1", "title", "Flame Graph (threads merged)", NULL};
static const char *const flame_cpu_merged[] = {"weight", "cpu", "merge-threads", "1",
                                               "title", "Flame Graph (CPU time, threads merged)", NULL};
static const srv_output outputs[] = {
    {"trace.pftrace", "perfetto", "Perfetto trace", "pftrace", 1, NULL},
    {"trace.json", "json", "Chrome trace JSON", "json", 1, NULL},
    {"trace.pb.gz", "pprof", "pprof profile", "pb.gz", 1, NULL},
    {"trace.folded", "folded", "folded stacks", "folded", 1, NULL},
    {"trace.systrace.html", "systrace", "systrace HTML", "systrace.html", 1, NULL},
    {"trace.speedscope.json", "speedscope", "speedscope JSON", "speedscope.json", 1, NULL},
    {"report.txt", "report", "report (text)", "report.txt", 0, NULL},
    {"report.html", "report-html", "report (HTML)", "report.html", 0, NULL},
    {"trace.dot", "dot", "call graph (Graphviz dot)", "dot", 1, NULL},
    {"activity.json", "activity", "activity over time (JSON: the time bar's)", "activity.json", 0, NULL},
    {"flame-wall.svg", "flamegraph", "flame graph, wall time", "wall.svg", 0, NULL},
    {"flame-cpu.svg", "flamegraph", "flame graph, CPU time", "cpu.svg", 0, flame_cpu},
    {"flame-wall-merged.svg", "flamegraph", "flame graph, wall time, threads merged", "wall-merged.svg", 0,
     flame_merged},
    {"flame-cpu-merged.svg", "flamegraph", "flame graph, CPU time, threads merged", "cpu-merged.svg", 0,
     flame_cpu_merged},
};
enum { N_OUTPUTS = sizeof outputs / sizeof *outputs };

/* The inputs a result keeps for its downloads (not in the URL grammar: never served). */
static const char *const kept_input[] = {"upload", "rhea-mapping", "deobf-mapping"};

const srv_output *srv_output_at(size_t i)
{
    return i < N_OUTPUTS ? &outputs[i] : NULL;
}

const srv_output *srv_output_find(const char *file)
{
    for (size_t i = 0; i < N_OUTPUTS; i++)
        if (!strcmp(outputs[i].file, file))
            return &outputs[i];
    return NULL;
}

int srv_path(char *out, size_t len, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + 1 + b + 1 > len) {
        if (len)
            out[0] = 0;
        return -1;
    }
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
    return 0;
}

/* ---- the store ---- */

typedef struct result_entry {
    char id[SRV_ID_HEX + 1];
    time_t created;
    uint64_t bytes;
} result_entry;

struct srv_store {
    char root[PATH_MAX];
    char tmp[PATH_MAX];
    int tmpfd; /* tmp, opened (O_PATH): the API's outputs are unlinked files in it */
    int owned; /* made by us: removed whole at close */
    srv_limits lim;
    pthread_mutex_t lock;
    result_entry *results; /* oldest first */
    size_t n, cap;
    uint64_t total;
    atomic_ulong counter;
};

int srv_random_id(char out[SRV_ID_HEX + 1])
{
    unsigned char raw[16];
    if (tci_random_bytes(raw, sizeof raw, true) != 0)
        return -1;
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[SRV_ID_HEX] = 0;
    return 0;
}

static int is_result_id(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == SRV_ID_HEX;
}

/* A directory of plain files (a result, the tmp dir's parts): its files, then itself. */
static uint64_t remove_flat_dir(const char *dir)
{
    uint64_t bytes = 0;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            (void)srv_path(path, sizeof path, dir, e->d_name);
            struct stat st;
            if (!lstat(path, &st) && S_ISDIR(st.st_mode))
                bytes += remove_flat_dir(path);
            else if (!unlink(path))
                bytes += (uint64_t)st.st_size;
        }
        closedir(d);
    }
    rmdir(dir);
    return bytes;
}

static uint64_t dir_bytes(const char *dir)
{
    uint64_t bytes = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d))) {
        struct stat st;
        (void)srv_path(path, sizeof path, dir, e->d_name);
        if (!lstat(path, &st) && S_ISREG(st.st_mode))
            bytes += (uint64_t)st.st_size;
    }
    closedir(d);
    return bytes;
}

static int add_result(srv_store *s, const char *id, time_t created, uint64_t bytes)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        result_entry *r = realloc(s->results, cap * sizeof *r);
        if (!r)
            return -1;
        s->results = r;
        s->cap = cap;
    }
    size_t at = s->n; /* kept sorted by age: results found at start come in any order */
    while (at > 0 && s->results[at - 1].created > created)
        at--;
    memmove(&s->results[at + 1], &s->results[at], (s->n - at) * sizeof *s->results);
    result_entry *e = &s->results[at];
    memcpy(e->id, id, sizeof e->id);
    e->created = created;
    e->bytes = bytes;
    s->n++;
    s->total += bytes;
    return 0;
}

static int compare_by_time(const void *a, const void *b)
{
    const result_entry *x = a, *y = b;
    return (x->created > y->created) - (x->created < y->created);
}

/* --store DIR of an earlier run: its results are kept (and expire as usual); its tmp/ is emptied. */
static void load_existing(srv_store *s)
{
    DIR *d = opendir(s->root);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d))) {
        struct stat st;
        (void)srv_path(path, sizeof path, s->root, e->d_name);
        if (is_result_id(e->d_name) && !lstat(path, &st) && S_ISDIR(st.st_mode))
            add_result(s, e->d_name, st.st_mtime, dir_bytes(path));
    }
    closedir(d);
    if (s->n)
        qsort(s->results, s->n, sizeof *s->results, compare_by_time);
}

srv_store *srv_store_open(const char *dir, const srv_limits *lim, char *err, size_t errlen)
{
    srv_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->lim = *lim;
    pthread_mutex_init(&s->lock, NULL);
    if (dir) {
        if (strlen(dir) > PATH_MAX - 64) {
            snprintf(err, errlen, "--store %s: path too long", dir);
            goto fail;
        }
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "--store %s: %s", dir, strerror(errno));
            goto fail;
        }
        struct stat st;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "--store %s: not a directory", dir);
            goto fail;
        }
        if (st.st_uid != geteuid() || (st.st_mode & 077)) {
            snprintf(err, errlen, "--store %s: must be a directory of ours that others cannot read (mode 0700)",
                     dir);
            goto fail;
        }
        snprintf(s->root, sizeof s->root, "%s", dir);
    } else {
        const char *t = getenv("TMPDIR");
        snprintf(s->root, sizeof s->root, "%s/traceconv-serve-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(s->root)) { /* 0700 */
            snprintf(err, errlen, "cannot create the store under %s: %s", t && *t ? t : "/tmp", strerror(errno));
            goto fail;
        }
        s->owned = 1;
    }
    (void)srv_path(s->tmp, sizeof s->tmp, s->root, "tmp");
    remove_flat_dir(s->tmp); /* an earlier run's leftovers, if it was killed */
    if (mkdir(s->tmp, 0700) != 0 || (s->tmpfd = tci_open_dir(AT_FDCWD, s->tmp)) < 0) {
        snprintf(err, errlen, "%s: %s", s->tmp, strerror(errno));
        goto fail;
    }
    if (!s->owned)
        load_existing(s);
    srv_store_expire(s);
    return s;
fail:
    pthread_mutex_destroy(&s->lock);
    free(s);
    return NULL;
}

void srv_store_close(srv_store *s)
{
    if (!s)
        return;
    close(s->tmpfd);
    remove_flat_dir(s->tmp);
    if (s->owned) {
        for (size_t i = 0; i < s->n; i++) {
            char path[PATH_MAX];
            (void)srv_path(path, sizeof path, s->root, s->results[i].id);
            remove_flat_dir(path);
        }
        rmdir(s->root);
    }
    pthread_mutex_destroy(&s->lock);
    free(s->results);
    free(s);
}

const char *srv_store_root(const srv_store *s)
{
    return s->root;
}

int srv_store_temp(srv_store *s, const char *suffix, char *path, size_t pathlen)
{
    char id[SRV_ID_HEX + 1];
    if (srv_random_id(id) != 0)
        return -1;
    int n = snprintf(path, pathlen, "%s/%s%s", s->tmp, id, suffix);
    if (n < 0 || (size_t)n >= pathlen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

int srv_store_scratch(srv_store *s)
{
    return of_scratch_at(s->tmpfd);
}

static void evict_locked(srv_store *s, time_t now, int adding, uint64_t extra);

uint64_t srv_store_keep_bytes(const srv_store *s)
{
    return s->lim.keep_bytes;
}

/* One kept input (kept_input[i]) of a result linked into tmp/ for a job; "" when the result has none. */
static int link_input(srv_store *s, const char *dir, size_t i, char *path, size_t len)
{
    static const char *const suffix[] = {".upload", ".mapping", ".deobf"};
    char from[PATH_MAX], id[SRV_ID_HEX + 1];
    path[0] = 0;
    if (srv_path(from, sizeof from, dir, kept_input[i]) != 0 || srv_random_id(id) != 0)
        return -1;
    if (snprintf(path, len, "%s/%s%s", s->tmp, id, suffix[i]) >= (int)len)
        return -1;
    if (link(from, path) == 0)
        return 0;
    path[0] = 0;
    return i > 0 && errno == ENOENT ? 0 : -1; /* the mappings are optional; the upload is not */
}

int srv_store_link_inputs(srv_store *s, const char *dir, srv_job *job)
{
    char *paths[] = {job->trace_path, job->rhea_path, job->deobf_path};
    for (size_t i = 0; i < 3; i++) {
        if (link_input(s, dir, i, paths[i], PATH_MAX) != 0) {
            for (size_t k = 0; k < i; k++)
                if (paths[k][0])
                    unlink(paths[k]);
            return -1; /* evicted meanwhile */
        }
    }
    return 0;
}

int srv_store_result_dir(srv_store *s, const char *id, char *dir, size_t dirlen)
{
    if (!is_result_id(id))
        return 0;
    pthread_mutex_lock(&s->lock);
    evict_locked(s, time(NULL), 0, 0); /* a result past --keep AGE is gone now, not at the next sweep */
    int found = 0;
    for (size_t i = 0; i < s->n && !found; i++)
        found = !strcmp(s->results[i].id, id);
    pthread_mutex_unlock(&s->lock);
    if (found)
        snprintf(dir, dirlen, "%s/%s", s->root, id);
    return found;
}

/* Over the limits once one more result of extra bytes is added (extra = 0: none is). */
static int over_limits(const srv_store *s, time_t now, int adding, uint64_t extra)
{
    if (!s->n)
        return 0;
    return s->n + (adding ? 1 : 0) > s->lim.keep_count || s->total + extra > s->lim.keep_bytes ||
           (s->lim.keep_age && (uint64_t)(now - s->results[0].created) > s->lim.keep_age);
}

static void evict_locked(srv_store *s, time_t now, int adding, uint64_t extra)
{
    while (over_limits(s, now, adding, extra)) {
        char path[PATH_MAX];
        (void)srv_path(path, sizeof path, s->root, s->results[0].id);
        remove_flat_dir(path); /* a download already open keeps its file until it ends */
        s->total -= s->results[0].bytes;
        memmove(&s->results[0], &s->results[1], (s->n - 1) * sizeof *s->results);
        s->n--;
    }
}

void srv_store_expire(srv_store *s)
{
    pthread_mutex_lock(&s->lock);
    evict_locked(s, time(NULL), 0, 0);
    pthread_mutex_unlock(&s->lock);
}

/* Room made first (the store never holds more than its limits, not even for a moment),
 * then the finished result directory renamed into place. A result larger than the
 * store's size limit is not published (PUBLISH_TOO_LARGE, *bytes its size), and
 * nothing is evicted for it: it could not stay, and would be gone at its first look-up. */
enum { PUBLISH_TOO_LARGE = -2 };
static int publish_result(srv_store *s, const char *part, const char *id, uint64_t *size)
{
    char final[PATH_MAX];
    (void)srv_path(final, sizeof final, s->root, id);
    uint64_t bytes = dir_bytes(part);
    *size = bytes;
    if (bytes > s->lim.keep_bytes)
        return PUBLISH_TOO_LARGE;
    pthread_mutex_lock(&s->lock);
    evict_locked(s, time(NULL), 1, bytes);
    int rc = rename(part, final) == 0 ? add_result(s, id, time(NULL), bytes) : -1;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0)
        remove_flat_dir(final);
    return rc;
}

/* ---- conversions ---- */

struct srv_pool {
    srv_store *store;
    srv_caps caps;
    char max_output[32];
    srv_done_fn done;
    void *user;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    srv_job *head, *tail;
    unsigned queued, running, queue_max, n_threads;
    atomic_int stopping;
    pthread_t threads[256];
};

/* The library asks while it reads and writes: the server stops, or the job's client has
 * closed its connection (nobody would get the result: the work and the disk are spared). */
static int cancel_when_stopping(void *user, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    const srv_job *job = user;
    return atomic_load((const atomic_int *)job->stopping) || srv_client_gone(job->client_fd);
}

/* The library's message as the CLI's one line, options named as query fields. The input is
 * opened from memory under the upload's own name (map_upload), so the message names the
 * user's file already. */
static void set_error(srv_job *job, int status, const char *msg)
{
    char fields[sizeof job->error];
    cli_query_field_text(msg, fields, sizeof fields); /* the API's words: thread=, not --thread */
    int n = snprintf(job->error, sizeof job->error, "traceconv: %s", fields);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof job->error ? (size_t)n : sizeof job->error - 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)job->error[i] < 0x20) /* one line, always */
            job->error[i] = ' ';
    job->status = status;
}

static int http_status_of(int tc)
{
    return tc == TC_ERR_USAGE ? 400 : tc == TC_ERR_NOMEM ? 500 : tc == TC_ERR_CANCELED ? 503 : 422;
}

/* A tc_conv with the job's inputs and options, opened. NULL after set_error. */
static tc_conv *open_job(srv_pool *p, srv_job *job, const char *const *extra)
{
    tc_conv *c = tc_conv_new();
    if (!c) {
        set_error(job, 500, "out of memory");
        return NULL;
    }
    tc_conv_set_progress(c, cancel_when_stopping, job);
    int rc = tc_conv_set_option(c, "max-output", p->max_output);
    if (rc == TC_OK && job->rhea_path[0]) /* given explicitly: from memory, the library looks beside nothing */
        rc = tc_conv_set_option(c, "mapping", job->rhea_path);
    if (rc == TC_OK && job->deobf_path[0])
        rc = tc_conv_set_option(c, "deobfuscate", job->deobf_path);
    for (size_t i = 0; rc == TC_OK && i < job->n_settings; i++)
        rc = tc_conv_set_option(c, job->settings[i].key, job->settings[i].value);
    for (size_t i = 0; rc == TC_OK && extra && extra[i]; i += 2)
        rc = tc_conv_set_option(c, extra[i], extra[i + 1]);
    if (rc == TC_OK)
        rc = tc_conv_open_memory(c, job->trace_data, job->trace_size, job->display, job->from[0] ? job->from : NULL);
    if (rc != TC_OK) {
        set_error(job, http_status_of(rc), tc_conv_error(c));
        tc_conv_free(c);
        return NULL;
    }
    return c;
}

static void run_api_job(srv_pool *p, srv_job *job)
{
    int fd = srv_store_scratch(p->store); /* lives as long as the response reading it */
    if (fd < 0) {
        set_error(job, 500, of_strerror(errno));
        return;
    }
    FILE *fp = fdopen(dup(fd), "wb");
    tc_conv *c = fp ? open_job(p, job, NULL) : NULL;
    int rc = c ? tc_conv_write(c, job->to, fp) : TC_ERR_NOMEM;
    if (c && rc != TC_OK)
        set_error(job, http_status_of(rc), tc_conv_error(c));
    else if (!fp)
        set_error(job, 500, "out of memory");
    if (fp && fclose(fp) != 0 && rc == TC_OK) {
        set_error(job, 500, of_strerror(errno));
        rc = TC_ERR_IO;
    }
    tc_conv_free(c);
    struct stat st;
    if (rc == TC_OK && !fstat(fd, &st)) {
        job->out_fd = fd;
        job->out_size = (uint64_t)st.st_size;
        job->status = 200;
    } else {
        close(fd);
    }
}

/* Each output of a result as the page job wrote it (planned[i] is outputs[i]'s): complete or
 * not there (outfile.c). */
typedef struct planned {
    of_file file;
    int ok;
    char why[256];
} planned;

/* One read of the input written into the part directory (dirfd) by the outputs at[0..n). */
static void write_planned(tc_conv *c, int dirfd, planned *pl, const size_t *at, size_t n)
{
    tc_output outs[N_OUTPUTS];
    size_t k = 0, map[N_OUTPUTS];
    for (size_t i = 0; i < n; i++) {
        planned *q = &pl[at[i]];
        if (of_begin(&q->file, dirfd, outputs[at[i]].file, OF_ABSENT) != 0) {
            snprintf(q->why, sizeof q->why, "%s", of_strerror(errno));
            continue;
        }
        map[k] = at[i];
        outs[k++] = (tc_output){.writer = outputs[at[i]].output, .fp = q->file.fp};
    }
    if (k)
        tc_conv_write_many(c, outs, k);
    for (size_t j = 0; j < k; j++) {
        planned *q = &pl[map[j]];
        if (outs[j].status != TC_OK) {
            of_abandon(&q->file);
            snprintf(q->why, sizeof q->why, "%s", outs[j].error && *outs[j].error ? outs[j].error : "write failed");
        } else if (of_commit(&q->file) != 0) {
            snprintf(q->why, sizeof q->why, "%s", of_strerror(errno));
        } else {
            q->ok = 1;
        }
    }
}

/* "6 threads, 97 methods, ...; repaired: 13 open-at-end": the CLI's summary figures. */
static void describe_figures(tc_conv *c, char *out, size_t len)
{
    tc_figure fig[64];
    size_t n = tc_conv_figures(c, fig, 64), o = 0;
    out[0] = 0;
    const char *names[] = {"threads", "methods", "records", "events", "samples"};
    for (size_t k = 0; k < 5; k++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(fig[i].name, names[k]) && (k < 4 || fig[i].value) && o < len)
                o += (size_t)snprintf(out + o, len - o, "%s%llu %s", o ? ", " : "",
                                      (unsigned long long)fig[i].value, fig[i].name);
    static const char *const heading[] = {[TC_FIG_REPAIR] = "; repaired:", [TC_FIG_WARNING] = "; warnings:",
                                          [TC_FIG_NOTE] = "; notes:"};
    for (int kind = TC_FIG_REPAIR; kind <= TC_FIG_NOTE; kind++) {
        int first = 1;
        for (size_t i = 0; i < n && o < len; i++) {
            if (fig[i].kind != kind || !fig[i].value)
                continue;
            o += (size_t)snprintf(out + o, len - o, "%s %llu %s", first ? heading[kind] : ",",
                                  (unsigned long long)fig[i].value, fig[i].name);
            first = 0;
        }
    }
    char left[1024];
    cli_not_converted_text(c, left, sizeof left);
    if (left[0] && o < len)
        snprintf(out + o, len - o, "; not converted: %s", left);
}

/* An output with options of its own (the other flame graphs): a read of its own. */
static void write_variant(srv_pool *p, srv_job *job, int dirfd, planned *pl, size_t at)
{
    srv_job scratch = *job; /* an error here is this variant's, not the job's */
    tc_conv *c = open_job(p, &scratch, outputs[at].options);
    if (!c) {
        snprintf(pl[at].why, sizeof pl[at].why, "%.200s", scratch.error);
        return;
    }
    write_planned(c, dirfd, pl, &at, 1);
    tc_conv_free(c);
}

/* The page's parts from what was written: the reports and the flame graph tabs. */
static void page_parts(const planned *pl, const char *dir, char *report, size_t len, srv_result_facts *f)
{
    size_t n_flames = 0;
    for (size_t i = 0; i < N_OUTPUTS; i++) {
        if (outputs[i].on_demand)
            continue;
        if (!strcmp(outputs[i].output, "report") && pl[i].ok && srv_path(report, len, dir, outputs[i].file) == 0)
            f->report_text_path = report;
        else if (!strcmp(outputs[i].output, "report-html"))
            f->have_report_html = pl[i].ok;
        else if (!strcmp(outputs[i].output, "activity"))
            f->activity = pl[i].ok ? outputs[i].file : NULL;
        else if (!strcmp(outputs[i].output, "flamegraph") && n_flames < sizeof f->flames / sizeof *f->flames) {
            f->flames[n_flames] = pl[i].ok ? outputs[i].file : NULL;
            f->flame_why[n_flames++] = pl[i].why;
        }
    }
}

/* The job's inputs linked into the part directory: the result keeps them for its downloads. */
static int keep_inputs(const srv_job *job, const char *dir)
{
    const char *from[] = {job->trace_path, job->rhea_path, job->deobf_path};
    for (size_t i = 0; i < 3; i++) {
        char to[PATH_MAX];
        if (from[i][0] && (srv_path(to, sizeof to, dir, kept_input[i]) != 0 || link(from[i], to) != 0))
            return -1;
    }
    return 0;
}

/* "too large": the one line of a result the store cannot keep. */
static void too_large(srv_pool *p, srv_job *job, uint64_t need)
{
    char a[32], b[32], line[SRV_ERROR_MAX];
    srv_human_size(need, a, sizeof a);
    srv_human_size(srv_store_keep_bytes(p->store), b, sizeof b);
    snprintf(line, sizeof line,
             "%s: too large for this server's page: its result needs %s and the store keeps %s in all "
             "(--keep-size); the API (POST /api/convert) converts it without keeping it",
             job->display, a, b);
    set_error(job, 413, line);
}

/* A part directory given up: what is in it, then it. */
static void discard_part(const char *dir, int dirfd)
{
    if (dirfd >= 0)
        close(dirfd);
    remove_flat_dir(dir);
}

/* A small file of the result (its page, the upload's name), complete or not there. */
static int write_file(int dirfd, const char *leaf, int (*put)(FILE *fp, const void *arg), const void *arg)
{
    of_file f;
    if (of_begin(&f, dirfd, leaf, OF_ABSENT) != 0)
        return -1;
    if (put(f.fp, arg) != 0) {
        of_abandon(&f);
        return -1;
    }
    return of_commit(&f);
}

static int put_name(FILE *fp, const void *display) { return fputs(display, fp) >= 0 ? 0 : -1; }

static void put_bytes(void *fp, const char *p, size_t n) { fwrite(p, 1, n, fp); }

/* escape.h's JS/JSON string rule: never markup, wherever the page puts it */
static void put_json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    tci_esc_js_string(put_bytes, fp, s, strlen(s));
    fputc('"', fp);
}

/* SRV_INFO_FILE: what the page's controls offer (the threads to pick, in the views' order,
 * main marked; the time range's bounds), from the library's view of the input as read. */
static int put_info(FILE *fp, const void *conv)
{
    const tc_conv *c = conv;
    tc_thread_info t;
    uint64_t records = 0;
    for (size_t i = 0; tc_conv_thread_at(c, i, &t); i++)
        records += t.records;
    fprintf(fp, "{\"duration_ns\":%lld,\"records\":%llu,\"threads\":[", (long long)tc_conv_duration_ns(c),
            (unsigned long long)records);
    size_t i;
    for (size_t rank = 0; tc_conv_thread_order_at(c, rank, &i) && tc_conv_thread_at(c, i, &t); rank++) {
        /* in the views' order: main first, then by time outside idle waits (the picker's order) */
        fprintf(fp, "%s\n{\"tid\":%llu,\"pid\":%lld,\"records\":%llu,\"main\":%s,\"name\":", rank ? "," : "",
                (unsigned long long)t.tid, (long long)t.pid, (unsigned long long)t.records,
                rank == 0 && t.records ? "true" : "false");
        put_json_string(fp, t.name);
        fputc('}', fp);
    }
    fputs("]}\n", fp);
    return ferror(fp) ? -1 : 0;
}
static int put_page(FILE *fp, const void *facts) { return srv_result_page(fp, facts); }

static void run_page_job(srv_pool *p, srv_job *job)
{
    char id[SRV_ID_HEX + 1], dir[PATH_MAX];
    if (job->trace_size > srv_store_keep_bytes(p->store)) { /* the upload alone: refused before any work */
        too_large(p, job, job->trace_size);
        return;
    }
    if (srv_random_id(id) != 0) {
        set_error(job, 500, "no random numbers");
        return;
    }
    char leaf[SRV_ID_HEX + 16];
    snprintf(leaf, sizeof leaf, "tmp/%s.part", id);
    (void)srv_path(dir, sizeof dir, srv_store_root(p->store), leaf);
    if (mkdir(dir, 0700) != 0) {
        set_error(job, 500, strerror(errno));
        return;
    }
    int dirfd = tci_open_dir(AT_FDCWD, dir);
    if (dirfd < 0 || keep_inputs(job, dir) != 0) {
        set_error(job, 500, "cannot keep the upload");
        discard_part(dir, dirfd);
        return;
    }
    tc_conv *c = open_job(p, job, NULL);
    if (!c) {
        discard_part(dir, dirfd);
        return;
    }
    /* what the page shows, in one read: the kept outputs without options of their own (the
     * text report it quotes, the HTML report, the wall flame graph per thread, the activity); the other
     * flame graphs each in a read with its options; the rest when they are downloaded */
    planned pl[N_OUTPUTS];
    memset(pl, 0, sizeof pl);
    size_t first[N_OUTPUTS], n_first = 0, n_ok = 0;
    for (size_t i = 0; i < N_OUTPUTS; i++)
        if (!outputs[i].on_demand && !outputs[i].options)
            first[n_first++] = i;
    write_planned(c, dirfd, pl, first, n_first);
    for (size_t i = 0; i < n_first; i++)
        n_ok += pl[first[i]].ok;
    if (!n_ok) { /* the input itself failed: the CLI's line */
        set_error(job, http_status_of(TC_ERR_FORMAT), tc_conv_error(c));
        tc_conv_free(c);
        discard_part(dir, dirfd);
        return;
    }
    for (size_t i = 0; i < N_OUTPUTS; i++)
        if (!outputs[i].on_demand && outputs[i].options)
            write_variant(p, job, dirfd, pl, i);

    char figures[2048], report[PATH_MAX];
    describe_figures(c, figures, sizeof figures);
    const char *warnings[33];
    size_t nw = 0;
    for (const char *w; nw < 32 && (w = tc_conv_warning_at(c, nw));)
        warnings[nw++] = w;
    warnings[nw] = NULL;
    const char *hints[5];
    size_t nh = 0;
    for (const char *h; nh < 4 && (h = tc_conv_hint_at(c, nh));)
        hints[nh++] = h;
    hints[nh] = NULL;
    const srv_output *downloads[N_OUTPUTS + 1];
    size_t nd = 0;
    for (size_t i = 0; i < N_OUTPUTS; i++) /* the page's order: the converted-on-demand ones, then what it holds */
        if (outputs[i].on_demand || pl[i].ok)
            downloads[nd++] = &outputs[i];
    downloads[nd] = NULL;
    srv_result_facts f = {.id = id, .display = job->display, .summary = tc_conv_input_summary(c), .figures = figures,
                          .warnings = warnings, .hints = hints, .downloads = downloads};
    page_parts(pl, dir, report, sizeof report, &f);
    int page_ok = write_file(dirfd, "name", put_name, job->display) == 0 && /* the downloads' names */
                  write_file(dirfd, SRV_INFO_FILE, put_info, c) == 0 && /* the page's controls */
                  write_file(dirfd, "index.html", put_page, &f) == 0;
    tc_conv_free(c);
    close(dirfd);
    if (atomic_load(&p->stopping) || srv_client_gone(job->client_fd)) {
        set_error(job, 503, "the server is stopping, or the client left");
        remove_flat_dir(dir);
        return;
    }
    uint64_t size = 0;
    int rc = page_ok ? publish_result(p->store, dir, id, &size) : -1;
    if (rc == PUBLISH_TOO_LARGE)
        too_large(p, job, size);
    else if (rc != 0)
        set_error(job, 500, "cannot write the result");
    if (rc != 0) {
        remove_flat_dir(dir);
        return;
    }
    memcpy(job->id, id, sizeof job->id);
    job->status = 200;
}

/* The upload, mapped read-only for tc_conv_open_memory under the upload's own name (as
 * batch.c opens a spooled archive member): every message and output (the flame graph's
 * subtitle, pprof's comments, the JSON's otherData, the report's header) names the user's
 * file, never the store's temporary one; the process is named by its stem as the CLI
 * names it; a gzip upload is inflated by the library as from a file; and no side file is
 * looked for beside a temporary name (the Rhea mapping comes as the explicit option). */
static int map_upload(srv_job *job)
{
    int fd = open(job->trace_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        set_error(job, 500, "cannot open the upload");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    job->trace_size = (size_t)st.st_size;
    job->trace_data = NULL;
    if (job->trace_size) { /* an empty upload: the library's own "the input is empty" */
        void *map = mmap(NULL, job->trace_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            set_error(job, 500, "cannot map the upload");
            close(fd);
            return -1;
        }
        job->trace_data = map;
        tc_guard_mapping(map, job->trace_size); /* cut under us: a 422 "input changed while reading", not SIGBUS */
    }
    close(fd);
    return 0;
}

static void unmap_upload(srv_job *job)
{
    if (job->trace_data) {
        tc_unguard_mapping(job->trace_data); /* before the munmap: the address may be reused at once */
        munmap((void *)job->trace_data, job->trace_size);
    }
    job->trace_data = NULL;
}

static void run_job(srv_pool *p, srv_job *job)
{
    job->out_fd = -1;
    job->stopping = &p->stopping;
    if (atomic_load(&p->stopping))
        set_error(job, 503, "the server is stopping");
    else if (srv_client_gone(job->client_fd)) /* waited in the queue, and its client left meanwhile */
        set_error(job, 503, "the client closed the connection");
    else if (map_upload(job) == 0) /* else the error is set */
        (job->api ? run_api_job : run_page_job)(p, job);
    unmap_upload(job);
    /* the uploads are not kept: the result (or the error) is all that is left */
    unlink(job->trace_path);
    if (job->rhea_path[0])
        unlink(job->rhea_path);
    if (job->deobf_path[0])
        unlink(job->deobf_path);
}

static void *worker(void *arg)
{
    srv_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !atomic_load(&p->stopping))
            pthread_cond_wait(&p->wake, &p->lock);
        srv_job *job = p->head;
        if (!job)
            break; /* stopping and nothing left */
        p->head = job->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        p->running++;
        pthread_mutex_unlock(&p->lock);
        run_job(p, job);
        pthread_mutex_lock(&p->lock);
        p->running--;
        pthread_mutex_unlock(&p->lock);
        p->done(job, p->user); /* outside the lock: it resumes the connection */
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

srv_pool *srv_pool_start(srv_store *store, const srv_caps *caps, unsigned workers, unsigned queue_max,
                         const char *max_output, srv_done_fn done, void *user)
{
    srv_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->max_output, sizeof p->max_output, "%s", max_output);
    p->store = store;
    p->caps = *caps;
    p->done = done;
    p->user = user;
    p->queue_max = queue_max;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (workers > sizeof p->threads / sizeof *p->threads)
        workers = sizeof p->threads / sizeof *p->threads;
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        p->n_threads++;
    }
    if (!p->n_threads) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->wake);
        free(p);
        return NULL;
    }
    return p;
}

int srv_pool_full(srv_pool *p)
{
    pthread_mutex_lock(&p->lock);
    int full = p->queued >= p->queue_max || atomic_load(&p->stopping);
    pthread_mutex_unlock(&p->lock);
    return full;
}

int srv_pool_submit(srv_pool *p, srv_job *job)
{
    pthread_mutex_lock(&p->lock);
    if (p->queued >= p->queue_max || atomic_load(&p->stopping)) {
        pthread_mutex_unlock(&p->lock);
        return -1;
    }
    job->next = NULL;
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    p->queued++;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

void srv_pool_stop(srv_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stopping, 1); /* running conversions cancel; queued ones fail at once */
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    p->n_threads = 0;
}

void srv_pool_free(srv_pool *p)
{
    if (!p)
        return;
    srv_pool_stop(p);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p);
}
