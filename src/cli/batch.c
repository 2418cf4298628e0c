/*
 * batch.c - `traceconv batch -o FORMAT[,FORMAT...] -O OUTDIR [options] INPUT...`
 *
 * One reader thread (the main one) walks the inputs in order: plain files,
 * directories (recursively, sorted), and tar/zip archives read with libarchive
 * member by member. A member of an uncompressed tar in a regular file is
 * handed over in place (the archive's file and the member's offset in it: the
 * worker maps those bytes); any other member is spooled to an unlinked
 * temporary file (never a name on disk, bounded by --max-input). Either goes
 * through a bounded queue to one of N worker threads, each converting with
 * tc_conv objects of its own; memory therefore stays about N conversions
 * whatever the number or size of the members.
 *
 * Every output lands under OUTDIR, whatever the member names say: names are
 * normalized component by component (no absolute path, no "..", no drive
 * letter), directories are created and entered with O_NOFOLLOW (a symlink in
 * the way is refused), and only regular members are converted. Outputs are
 * written to a temporary file in their directory and renamed into place; a
 * dedicated signal thread removes any temporary file left on SIGINT/SIGTERM/
 * SIGHUP before the process dies of the signal.
 */
#define _GNU_SOURCE
#include "batch.h"
#include "cli_util.h"
#include "traceconv.h"

#include <archive.h>
#include <archive_entry.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

enum { EXIT_SOME_FAILED = 1, EXIT_USAGE = 2 };
enum { MAX_WORKERS = 256, MAX_FORMATS = 16, MAX_GLOBS = 64, MAX_SETTINGS = 64 };
enum { MAX_TEMPS = MAX_WORKERS * MAX_FORMATS + 1 }; /* a member's outputs are renamed together; + the summary */
enum { ST_PENDING = 0, ST_OK, ST_FAILED, ST_SKIPPED };
static const char *const status_name[] = {"pending", "ok", "failed", "skipped"};

static const char usage_text[] =
    "usage: traceconv batch -o FORMAT[,FORMAT...] -O OUTDIR [options] INPUT...\n"
    "\n"
    "Convert every trace found in the INPUTs: files, directories (walked recursively)\n"
    "and archives (.zip, .tar, .tar.gz/.tgz, .tar.zst, .tar.xz, .tar.bz2; '-' reads an\n"
    "archive from stdin). Members are chosen by content; the others are listed as skipped.\n"
    "Outputs: OUTDIR/<archive or directory name>/<member path without extension>.<ext>.\n"
    "\n"
    "  -o, --output-format LIST  writers, comma separated (see traceconv --list-formats)\n"
    "  -O, --output-dir DIR      where the outputs go (created if missing)\n"
    "  -j, --jobs N              conversions at once (default: the number of CPUs)\n"
    "      --include GLOB        only members whose path matches (repeatable)\n"
    "      --exclude GLOB        not members whose path matches (repeatable)\n"
    "      --fail-fast           stop at the first failed member\n"
    "      --summary FILE        the JSON summary (default OUTDIR/traceconv-batch.json)\n"
    "      --shard I/N           convert only the members of shard I (0..N-1) of N\n"
    "      --progress            show progress even when stderr is not a terminal\n"
    "      --skip-existing       keep what the previous run (its summary) converted from the\n"
    "                            same member: same size and mtime, or same content in an archive\n"
    "  -q, --quiet               no progress, no per-member messages\n"
    "      --strict, --weight, --no-thread, --merge-threads, --text, --max-depth,\n"
    "      --title, --width, --minwidth, --inverted, --colors, --hash,\n"
    "      --sort, --csv, --html, --threshold,\n"
    "      --max-input, --max-string, --max-threads, --max-methods, --max-events,\n"
    "      --max-json, --deobfuscate MAPPING\n"
    "                            as for a single conversion (traceconv --help)\n"
    "\n"
    "Exit status: 0 every member converted (or skipped), 1 some failed, 2 usage error.\n";

/* ---- temporary files: registered so that the signal thread can remove them ---- */

typedef struct temp_slot {
    int used, dirfd;
    char name[NAME_MAX + 1];
} temp_slot;

static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;
static temp_slot temps[MAX_TEMPS];
static atomic_ulong temp_counter;
static mode_t output_mode = 0666;

/* Create dirfd/.NAME.tmp-PID-N exclusively and note it; returns the fd and the slot, or -1. */
static int temp_create(int dirfd, const char *leaf, int *slot_out)
{
    char name[NAME_MAX + 1];
    int n = snprintf(name, sizeof name, ".%s.tmp-%ld-%lu", leaf, (long)getpid(),
                     (unsigned long)atomic_fetch_add(&temp_counter, 1));
    if (n < 0 || (size_t)n >= sizeof name) {
        errno = ENAMETOOLONG;
        return -1;
    }
    pthread_mutex_lock(&temp_lock);
    int slot = -1;
    for (int i = 0; i < MAX_TEMPS && slot < 0; i++)
        if (!temps[i].used)
            slot = i;
    int fd = slot < 0 ? -1 : openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        temps[slot].used = 1;
        temps[slot].dirfd = dirfd;
        strcpy(temps[slot].name, name);
    } else if (slot < 0) {
        errno = EMFILE;
    }
    pthread_mutex_unlock(&temp_lock);
    if (fd >= 0)
        (void)fchmod(fd, output_mode); /* as a single conversion makes it */
    *slot_out = slot;
    return fd;
}

/* Rename the temporary file onto final (keep=1) or remove it (keep=0). */
static int temp_finish(int slot, const char *final, int keep)
{
    pthread_mutex_lock(&temp_lock);
    temp_slot *t = &temps[slot];
    int rc = keep ? renameat(t->dirfd, t->name, t->dirfd, final) : 0;
    int err = errno;
    if (!keep || rc != 0)
        unlinkat(t->dirfd, t->name, 0);
    t->used = 0;
    pthread_mutex_unlock(&temp_lock);
    errno = err;
    return rc;
}

/* On a termination signal the run winds down: no new member, conversions
 * under way are canceled (their progress callback says so), the summary of
 * what was done is written, and the main thread dies of the signal. A second
 * signal, or 5 seconds without the end (a reader blocked on stdin), cuts it
 * short: every temporary file is removed (keeping temp_lock, so that no new
 * one appears meanwhile) and the process dies of the signal at once. */
static atomic_int interrupted, wound_up;
static atomic_int *stop_flag;

static void *signal_thread(void *arg)
{
    sigset_t *set = arg;
    int sig = 0;
    if (sigwait(set, &sig) != 0)
        return NULL;
    atomic_store(&interrupted, sig);
    atomic_store(stop_flag, 1);
    struct timespec tick = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 100 && !atomic_load(&wound_up); i++)
        if (sigtimedwait(set, NULL, &tick) > 0)
            break;
    if (atomic_load(&wound_up))
        return NULL;
    pthread_mutex_lock(&temp_lock);
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temps[i].used)
            unlinkat(temps[i].dirfd, temps[i].name, 0);
    signal(sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* ---- a set of strings (output names already given) ---- */

typedef struct nameset {
    char **slots;
    size_t cap, count;
} nameset;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int nameset_has(const nameset *s, const char *name)
{
    if (!s->cap)
        return 0;
    for (size_t i = fnv1a(name) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i])
            return 0;
        if (!strcmp(s->slots[i], name))
            return 1;
    }
}

/* Takes ownership of name; -1 when out of memory. */
static int nameset_add(nameset *s, char *name)
{
    if ((s->count + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        char **slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i])
                continue;
            size_t j = fnv1a(s->slots[i]) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t j = fnv1a(name) & (s->cap - 1);
    while (s->slots[j])
        j = (j + 1) & (s->cap - 1);
    s->slots[j] = name;
    s->count++;
    return 0;
}

static void nameset_free(nameset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);
}

/* ---- the run ---- */

typedef struct member {
    char *source;   /* the INPUT operand */
    char *path;     /* member path in the archive or directory (as given) */
    char *clean;    /* path sanitized (sanitize_path) */
    char *out_rel;  /* output path relative to OUTDIR, without extension; NULL: none */
    char *file;     /* a plain file converted from its path, or NULL */
    int data_fd;    /* an archive member's bytes are in this file from data_off: a spool file
                       of its own, or (in place) the archive's; -1 for a plain file */
    uint64_t data_off;
    uint64_t size;
    int64_t mtime;  /* plain files; -1 for archive members */
    uint64_t hash;  /* archive members: XXH3-64 of the content, for --skip-existing */
    int hashed;     /* hash is known: spooled members by the reader, in-place ones by their worker */
    int status;
    char *reason;   /* why failed or skipped */
    cJSON *detail;  /* reader, input, outputs, figures, warnings (set by the worker) */
} member;

typedef struct setting {
    const char *key, *value;
} setting;

typedef struct batch {
    const char *formats[MAX_FORMATS];
    size_t n_formats;
    const char *outdir, *summary_path;
    int outdir_fd;
    struct stat outdir_st;
    int jobs, fail_fast, quiet, progress;
    unsigned shard_i, shard_n;
    const char *include[MAX_GLOBS], *exclude[MAX_GLOBS];
    size_t n_include, n_exclude;
    setting settings[MAX_SETTINGS];
    size_t n_settings;
    uint64_t max_input;
    int report_html; /* --html: the report's outputs end in .report.html */
    nameset used;

    pthread_mutex_t lock; /* everything below */
    pthread_cond_t can_take, can_put;
    member **members;
    size_t n_members, cap_members;
    member *queue[MAX_WORKERS];
    size_t q_head, q_count, q_cap;
    int closed, scanning;
    atomic_int stop;
    size_t done, n_ok, n_failed, n_skipped, n_reused, queued;
    int skip_existing;
    uint64_t bytes_done, bytes_queued, bytes_out;
    double t0, last_draw;
    int drawn;
} batch;

/* An output's extension: the writer's, but .report.html for report --html (as a single conversion). */
static const char *output_extension(const batch *b, const char *writer)
{
    return b->report_html && !strcmp(writer, "report") ? "report.html" : tc_writer_extension(writer);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) {
        fputs("traceconv: out of memory\n", stderr);
        exit(EXIT_SOME_FAILED);
    }
    return d;
}

/* ---- progress: one line on stderr, redrawn at most ten times a second ---- */

static void draw_progress(batch *b, int final)
{
    if (!b->progress)
        return;
    double t = now_seconds();
    if (!final && t - b->last_draw < 0.1)
        return;
    b->last_draw = t;
    if (final) {
        if (b->drawn)
            fputs("\r\033[K", stderr);
        return;
    }
    double el = t - b->t0, rate = el > 0 ? b->bytes_done / el : 0;
    char eta[32] = "?";
    if (!b->scanning && rate > 0)
        snprintf(eta, sizeof eta, "%.0fs", (double)(b->bytes_queued - b->bytes_done) / rate);
    fprintf(stderr, "\rtraceconv batch: %zu/%zu%s files, %.1f MB, %.1f MB/s, ETA %s, %zu failed\033[K", b->done,
            b->queued, b->scanning ? "+" : "", b->bytes_done / 1e6, rate / 1e6, eta, b->n_failed);
    b->drawn = 1;
}

/* ---- recording members ---- */

static member *new_member(batch *b, const char *source, const char *path)
{
    member *m = calloc(1, sizeof *m);
    if (!m) {
        fputs("traceconv: out of memory\n", stderr);
        exit(EXIT_SOME_FAILED);
    }
    m->source = xstrdup(source);
    m->path = xstrdup(path);
    m->data_fd = -1;
    m->mtime = -1;
    pthread_mutex_lock(&b->lock);
    if (b->n_members == b->cap_members) {
        size_t cap = b->cap_members ? b->cap_members * 2 : 256;
        member **grown = realloc(b->members, cap * sizeof *grown);
        if (!grown) {
            fputs("traceconv: out of memory\n", stderr);
            exit(EXIT_SOME_FAILED);
        }
        b->members = grown;
        b->cap_members = cap;
    }
    b->members[b->n_members++] = m;
    pthread_mutex_unlock(&b->lock);
    return m;
}

/* A member's final status; the counters, the message on stderr, --fail-fast. */
static void finish_member(batch *b, member *m, int status, const char *reason)
{
    if (m->data_fd >= 0) {
        close(m->data_fd);
        m->data_fd = -1;
    }
    m->status = status;
    if (reason)
        m->reason = xstrdup(reason);
    pthread_mutex_lock(&b->lock);
    b->done++;
    b->bytes_done += m->size;
    if (status == ST_OK)
        b->n_ok++;
    else if (status == ST_FAILED)
        b->n_failed++;
    else
        b->n_skipped++;
    if (status == ST_FAILED) {
        if (b->fail_fast)
            atomic_store(&b->stop, 1);
        if (!b->quiet) {
            if (b->drawn)
                fputs("\r\033[K", stderr);
            fprintf(stderr, "traceconv: %s%s%s: %s\n", m->source, *m->path ? ": " : "", m->path,
                    reason ? reason : "failed");
        }
    }
    draw_progress(b, 0);
    pthread_mutex_unlock(&b->lock);
}

/* ---- member names -> output paths ---- */

/* The member path normalized component by component: '/' and '\' separate,
 * empty and "." components go, ".." removes the previous one (never above
 * the top), a drive letter ("C:") at the start goes, control characters
 * become '_'. Returns a malloc'd relative path ("" when nothing is left). */
static char *sanitize_path(const char *raw)
{
    size_t n = strlen(raw);
    char *out = malloc(n + 1);
    size_t len = 0, comp_starts[PATH_MAX / 2], depth = 0;
    if (!out)
        return NULL;
    const char *p = raw;
    int first = 1;
    while (*p) {
        size_t c = strcspn(p, "/\\");
        const char *comp = p;
        p += c;
        if (*p)
            p++;
        if (first && c == 2 && ((comp[0] | 0x20) >= 'a' && (comp[0] | 0x20) <= 'z') && comp[1] == ':') {
            first = 0;
            continue; /* a drive letter */
        }
        first = 0;
        if (c == 0 || (c == 1 && comp[0] == '.'))
            continue;
        if (c == 2 && comp[0] == '.' && comp[1] == '.') {
            if (depth > 0)
                len = comp_starts[--depth];
            continue;
        }
        if (depth == sizeof comp_starts / sizeof *comp_starts)
            break;
        size_t start = len ? len + 1 : 0;
        comp_starts[depth++] = len;
        if (len)
            out[len] = '/';
        for (size_t i = 0; i < c; i++)
            out[start + i] = (unsigned char)comp[i] < 0x20 || comp[i] == 0x7f ? '_' : comp[i];
        len = start + c;
    }
    out[len] = 0;
    return out;
}

/* The path without its extension (x.trace -> x; x.trace.gz -> x; .hidden stays). */
static void strip_extension(char *path)
{
    char *slash = strrchr(path, '/');
    char *base = slash ? slash + 1 : path;
    char *dot = strrchr(base, '.');
    if (dot && dot != base && !strcmp(dot, ".gz")) {
        *dot = 0;
        char *d2 = strrchr(base, '.');
        if (d2 && d2 != base)
            dot = d2;
        else
            *dot = '.';
    }
    if (dot && dot != base)
        *dot = 0;
}

/* A name no earlier member has: "x", else "x-1", "x-2", ... (stable by member order). */
static char *unique_name(batch *b, const char *want)
{
    size_t n = strlen(want);
    char *name = malloc(n + 24);
    if (!name)
        return NULL;
    strcpy(name, want);
    for (unsigned long k = 1; nameset_has(&b->used, name); k++)
        snprintf(name + n, 24, "-%lu", k);
    char *kept = strdup(name);
    if (!kept || nameset_add(&b->used, kept) != 0) {
        free(kept);
        free(name);
        return NULL;
    }
    return name;
}

static int glob_selects(const batch *b, const char *path)
{
    for (size_t i = 0; i < b->n_exclude; i++)
        if (!fnmatch(b->exclude[i], path, 0))
            return 0;
    if (!b->n_include)
        return 1;
    for (size_t i = 0; i < b->n_include; i++)
        if (!fnmatch(b->include[i], path, 0))
            return 1;
    return 0;
}

static int in_shard(const batch *b, const char *key)
{
    return b->shard_n <= 1 || fnv1a(key) % b->shard_n == b->shard_i;
}

/* A member found by the reader: filtered by --include/--exclude, named (the
 * name is taken even when another shard converts it, so that every shard
 * names alike), then kept when it is in our shard. prefix is the output
 * directory of its archive or directory ("" or "name/"). NULL: not ours. */
static member *admit_shown(batch *b, const char *source, const char *shown, const char *path, const char *prefix,
                           int regular)
{
    char *clean = sanitize_path(path);
    if (!clean) {
        fputs("traceconv: out of memory\n", stderr);
        exit(EXIT_SOME_FAILED);
    }
    if (!glob_selects(b, clean)) {
        free(clean);
        return NULL;
    }
    char *rel = NULL;
    if (*clean && regular) {
        size_t n = strlen(prefix) + strlen(clean) + 1;
        char *want = malloc(n);
        if (!want)
            exit(EXIT_SOME_FAILED);
        snprintf(want, n, "%s%s", prefix, clean);
        strip_extension(want);
        rel = unique_name(b, want);
        free(want);
        if (!rel)
            exit(EXIT_SOME_FAILED);
    }
    char key[PATH_MAX * 2];
    snprintf(key, sizeof key, "%s%s", prefix, *clean ? clean : path);
    if (!in_shard(b, rel ? rel : key)) {
        free(rel);
        free(clean);
        return NULL;
    }
    size_t n = strlen(shown) + strlen(path) + 1;
    char *listed = malloc(n);
    if (!listed)
        exit(EXIT_SOME_FAILED);
    snprintf(listed, n, "%s%s", shown, path);
    member *m = new_member(b, source, listed);
    free(listed);
    m->out_rel = rel;
    m->clean = clean;
    return m;
}

static member *admit(batch *b, const char *source, const char *path, const char *prefix, int regular)
{
    return admit_shown(b, source, "", path, prefix, regular);
}

/* Open (creating) the directories of rel under OUTDIR without following any
 * symlink; returns the fd of the last one and sets *leaf to the file name. */
static int open_output_dir(batch *b, const char *rel, const char **leaf, char *err, size_t errlen)
{
    int fd = dup(b->outdir_fd);
    const char *p = rel;
    for (;;) {
        const char *slash = strchr(p, '/');
        if (!slash)
            break;
        char comp[NAME_MAX + 1];
        size_t c = (size_t)(slash - p);
        if (c > NAME_MAX) {
            snprintf(err, errlen, "output directory name too long");
            close(fd);
            return -1;
        }
        memcpy(comp, p, c);
        comp[c] = 0;
        if (mkdirat(fd, comp, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create the directory %.*s: %s", (int)(slash - rel), rel, strerror(errno));
            close(fd);
            return -1;
        }
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            snprintf(err, errlen, "%.*s: %s", (int)(slash - rel), rel,
                     errno == ELOOP || errno == ENOTDIR ? "is a symlink or not a directory; refusing to write through it"
                                                        : strerror(errno));
            close(fd);
            return -1;
        }
        close(fd);
        fd = next;
        p = slash + 1;
    }
    *leaf = p;
    return fd;
}

/* ---- converting one member: one read for all its formats ---- */

typedef struct input_ref {
    const char *path;   /* a plain file, or NULL */
    const void *data;   /* a spooled member, mapped */
    size_t size;
    const char *name;   /* for messages and the default process name */
} input_ref;

static const char *stop_reason(void)
{
    return atomic_load(&interrupted) ? "not converted: interrupted" : "not converted: --fail-fast stopped the run";
}

static int cancel_when_interrupted(void *user, uint64_t done, uint64_t total)
{
    (void)user, (void)done, (void)total;
    return atomic_load(&interrupted) != 0;
}

static tc_conv *new_conv(const batch *b)
{
    tc_conv *c = tc_conv_new();
    if (c)
        tc_conv_set_progress(c, cancel_when_interrupted, NULL);
    for (size_t i = 0; c && i < b->n_settings; i++)
        tc_conv_set_option(c, b->settings[i].key, b->settings[i].value); /* checked at start */
    return c;
}

static void describe_conversion(tc_conv *c, cJSON *detail)
{
    tc_figure fig[64];
    size_t n = tc_conv_figures(c, fig, 64);
    cJSON *figs = cJSON_AddObjectToObject(detail, "figures");
    for (size_t i = 0; i < n && i < 64; i++)
        if (fig[i].value || fig[i].kind == TC_FIG_COUNT)
            cJSON_AddNumberToObject(figs, fig[i].name, (double)fig[i].value);
    cJSON *warn = cJSON_AddArrayToObject(detail, "warnings");
    const char *w;
    for (size_t i = 0; (w = tc_conv_warning_at(c, i)); i++)
        cJSON_AddItemToArray(warn, cJSON_CreateString(w));
}

/* Every format of one member in one read (tc_conv_write_many), each into a
 * temporary file; all of them are renamed into place, or none. 0, or -1 with err. */
static int convert_formats(batch *b, const input_ref *in, const char *rel, cJSON *detail, char *err, size_t errlen)
{
    const char *leaf;
    int dirfd = open_output_dir(b, rel, &leaf, err, errlen);
    if (dirfd < 0)
        return -1;
    tc_conv *c = new_conv(b);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        close(dirfd);
        return -1;
    }
    int rc = in->path ? tc_conv_open(c, in->path, NULL) : tc_conv_open_memory(c, in->data, in->size, in->name, NULL);
    if (tc_conv_reader_name(c))
        cJSON_AddStringToObject(detail, "reader", tc_conv_reader_name(c));
    if (rc != TC_OK)
        snprintf(err, errlen, "%s", tc_conv_error(c));
    int slots[MAX_FORMATS];
    char finals[MAX_FORMATS][NAME_MAX + 1];
    tc_output outs[MAX_FORMATS];
    size_t made = 0;
    for (; rc == TC_OK && made < b->n_formats; made++) {
        const char *fmt = b->formats[made];
        int n = snprintf(finals[made], NAME_MAX + 1, "%s.%s", leaf, output_extension(b, fmt)), fd = -1;
        FILE *fp = NULL;
        if (n < 0 || n >= NAME_MAX + 1) {
            snprintf(err, errlen, "output name too long");
            rc = TC_ERR_IO;
        } else if ((fd = temp_create(dirfd, finals[made], &slots[made])) < 0 || !(fp = fdopen(fd, "wb"))) {
            snprintf(err, errlen, "cannot create the output %.255s: %.200s", finals[made], strerror(errno));
            if (fd >= 0) {
                close(fd);
                temp_finish(slots[made], finals[made], 0);
            }
            rc = TC_ERR_IO;
        }
        if (rc != TC_OK)
            break;
        outs[made] = (tc_output){.writer = fmt, .fp = fp};
    }
    if (rc == TC_OK) {
        rc = tc_conv_write_many(c, outs, made);
        if (rc != TC_OK)
            snprintf(err, errlen, "%s", tc_conv_error(c));
    }
    cJSON *outputs = cJSON_AddArrayToObject(detail, "outputs");
    for (size_t i = 0; i < made; i++) {
        long size = ftell(outs[i].fp);
        if (fclose(outs[i].fp) != 0 && rc == TC_OK) {
            snprintf(err, errlen, "cannot write the output %.255s: %.200s", finals[i], strerror(errno));
            rc = TC_ERR_IO;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "format", outs[i].writer);
        cJSON_AddStringToObject(o, "name", finals[i]);
        cJSON_AddNumberToObject(o, "size", (double)size);
        cJSON_AddItemToArray(outputs, o);
        if (size > 0) {
            pthread_mutex_lock(&b->lock);
            b->bytes_out += (uint64_t)size;
            pthread_mutex_unlock(&b->lock);
        }
    }
    /* all of a member's outputs or none: a failed or interrupted member leaves no part of them */
    for (size_t i = 0; i < made; i++) {
        if (temp_finish(slots[i], finals[i], rc == TC_OK) != 0 && rc == TC_OK) {
            snprintf(err, errlen, "cannot rename the output %.255s into place: %.200s", finals[i], strerror(errno));
            rc = TC_ERR_IO;
        }
    }
    if (tc_conv_input_summary(c) && *tc_conv_input_summary(c))
        cJSON_AddStringToObject(detail, "input", tc_conv_input_summary(c));
    if (made && rc != TC_ERR_USAGE)
        describe_conversion(c, detail);
    tc_conv_free(c);
    close(dirfd);
    return rc == TC_OK ? 0 : -1;
}

static int reuse_previous(batch *b, member *m);

/* An archive member's bytes, mapped read-only; *base and *len are what to unmap.
 * The offset of an in-place member is anywhere in its archive, so the mapping
 * starts at the page that holds it. NULL (errno) when it cannot be mapped. */
static const uint8_t *map_content(const member *m, void **base, size_t *len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = m->data_off / page * page;
    size_t lead = (size_t)(m->data_off - start);
    *len = lead + (size_t)m->size;
    *base = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, m->data_fd, (off_t)start);
    if (*base == MAP_FAILED)
        return NULL;
    tc_guard_mapping(*base, *len); /* an archive cut under us: "input changed while reading", not SIGBUS */
    return (const uint8_t *)*base + lead;
}

static void unmap_content(void *base, size_t len)
{
    tc_unguard_mapping(base); /* before the munmap: the address may be reused at once */
    munmap(base, len);
}

/* Every reader's score for the member's content; the best one's index, -1 when
 * none recognizes it, -2 (with err) when it cannot be probed. Probed by content
 * alone: a plain file through a descriptor's name, so that its own name never counts. */
static int probe_member(const member *m, const uint8_t *data, char *err, size_t errlen)
{
    tc_probe_score scores[64];
    int n;
    if (data) {
        n = tc_probe_memory(data, (size_t)m->size, NULL, scores, 64, err, errlen);
    } else {
        char probe_path[64];
        int fd = open(m->file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            snprintf(err, errlen, "cannot open: %s", strerror(errno));
            return -2;
        }
        snprintf(probe_path, sizeof probe_path, "/proc/self/fd/%d", fd);
        n = tc_probe_file(probe_path, scores, 64, err, errlen);
        close(fd);
    }
    if (n < 0)
        return -2;
    int best = 0;
    for (int i = 1; i < n; i++)
        if (scores[i].score > scores[best].score)
            best = i;
    return n == 0 || scores[best].score <= 0 ? -1 : best;
}

static void process_member(batch *b, member *m)
{
    char err[1200] = "";
    if (m->size == 0) {
        finish_member(b, m, ST_SKIPPED, "empty");
        return;
    }
    void *map = NULL;
    size_t map_len = 0;
    const uint8_t *data = NULL;
    if (m->data_fd >= 0 && !(data = map_content(m, &map, &map_len))) {
        snprintf(err, sizeof err, "cannot map the member: %s", strerror(errno));
        finish_member(b, m, ST_FAILED, err);
        return;
    }
    if (data && !m->hashed) { /* in place: the reader never read it, so the hash is the worker's */
        m->hash = XXH3_64bits(data, (size_t)m->size);
        m->hashed = 1;
        if (tc_mapping_changed(map) != 1 && reuse_previous(b, m)) {
            unmap_content(map, map_len);
            finish_member(b, m, ST_OK, NULL);
            return;
        }
    }
    int best = probe_member(m, data, err, sizeof err);
    if (best < 0) {
        if (map)
            unmap_content(map, map_len);
        finish_member(b, m, best == -1 ? ST_SKIPPED : ST_FAILED, best == -1 ? "no reader recognizes the content" : err);
        return;
    }
    input_ref in = {.path = m->file, .name = m->out_rel};
    if (data) {
        in.data = data;
        in.size = (size_t)m->size;
        in.name = m->clean; /* its stem is the default process name, as for the extracted file */
    }
    m->detail = cJSON_CreateObject();
    int rc = convert_formats(b, &in, m->out_rel, m->detail, err, sizeof err);
    if (map)
        unmap_content(map, map_len);
    if (rc != 0 && atomic_load(&interrupted)) {
        cJSON_Delete(m->detail);
        m->detail = NULL;
        finish_member(b, m, ST_SKIPPED, "not converted: interrupted");
        return;
    }
    finish_member(b, m, rc == 0 ? ST_OK : ST_FAILED, rc == 0 ? NULL : err);
}

static void record_now(batch *b, member *m, int status, const char *reason);

/* ---- --skip-existing: the previous summary ---- */

typedef struct previous {
    char *key; /* source NUL member */
    size_t keylen;
    cJSON *entry;
} previous;

static previous *prev;
static size_t n_prev;
static cJSON *prev_root;

static int compare_prev(const void *x, const void *y)
{
    const previous *a = x, *b = y;
    size_t n = a->keylen < b->keylen ? a->keylen : b->keylen;
    int c = memcmp(a->key, b->key, n);
    return c ? c : (a->keylen > b->keylen) - (a->keylen < b->keylen);
}

static char *prev_key(const char *source, const char *member, size_t *len)
{
    size_t a = strlen(source), n = a + strlen(member) + 1;
    char *k = malloc(n + 1);
    if (k) {
        memcpy(k, source, a + 1);
        strcpy(k + a + 1, member);
    }
    *len = n;
    return k;
}

/* Read the previous summary, if any (a damaged one is ignored: everything is redone). */
static void load_previous(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    fseeko(f, 0, SEEK_END);
    off_t size = ftello(f);
    rewind(f);
    char *text = size > 0 && size < (1LL << 31) ? malloc((size_t)size + 1) : NULL;
    if (text && fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = 0;
        prev_root = cJSON_Parse(text);
    }
    free(text);
    fclose(f);
    cJSON *members = cJSON_GetObjectItemCaseSensitive(prev_root, "members");
    int n = cJSON_GetArraySize(members);
    prev = n > 0 ? calloc((size_t)n, sizeof *prev) : NULL;
    cJSON *e;
    cJSON_ArrayForEach(e, members) {
        const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "source"));
        const char *mem = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "member"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "status"));
        if (!prev || !src || !mem || !st || strcmp(st, "ok"))
            continue;
        previous *p = &prev[n_prev];
        if ((p->key = prev_key(src, mem, &p->keylen))) {
            p->entry = e;
            n_prev++;
        }
    }
    if (n_prev)
        qsort(prev, n_prev, sizeof *prev, compare_prev);
}

static double number_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The previous run converted this very member (same size, and same mtime for a
 * file or same content hash for an archive member) into every format asked
 * for, and those outputs are there with their recorded sizes: its summary
 * entry is taken over (the caller records it as ok). */
static int reuse_previous(batch *b, member *m)
{
    if (!n_prev || !m->out_rel || (!m->file && !m->hashed))
        return 0;
    previous key = {0};
    key.key = prev_key(m->source, m->path, &key.keylen);
    previous *p = key.key ? bsearch(&key, prev, n_prev, sizeof *prev, compare_prev) : NULL;
    free(key.key);
    if (!p)
        return 0;
    const cJSON *e = p->entry;
    const char *out = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "output"));
    const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "xxh3"));
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)m->hash);
    if (!out || strcmp(out, m->out_rel) || number_of(e, "size") != (double)m->size ||
        (m->file ? number_of(e, "mtime") != (double)m->mtime : !hash || strcmp(hash, hex)))
        return 0;
    const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(e, "outputs");
    for (size_t i = 0; i < b->n_formats; i++) {
        const cJSON *o, *found = NULL;
        cJSON_ArrayForEach(o, outputs) {
            const char *f = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "format"));
            if (f && !strcmp(f, b->formats[i]))
                found = o;
        }
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s.%s", m->out_rel, output_extension(b, b->formats[i]));
        if (!found || fstatat(b->outdir_fd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            (double)st.st_size != number_of(found, "size"))
            return 0;
    }
    m->detail = cJSON_CreateObject();
    static const char *const kept[] = {"outputs", "reader", "input", "figures", "warnings"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, kept[i]);
        if (v)
            cJSON_AddItemToObject(m->detail, kept[i], cJSON_Duplicate(v, 1));
    }
    cJSON_AddBoolToObject(m->detail, "existing", 1);
    pthread_mutex_lock(&b->lock);
    b->n_reused++;
    pthread_mutex_unlock(&b->lock);
    return 1;
}

/* ---- the queue between the reader and the workers ---- */

static void enqueue(batch *b, member *m)
{
    pthread_mutex_lock(&b->lock);
    while (b->q_count == b->q_cap)
        pthread_cond_wait(&b->can_put, &b->lock);
    b->queue[(b->q_head + b->q_count++) % b->q_cap] = m;
    b->queued++;
    b->bytes_queued += m->size;
    pthread_cond_signal(&b->can_take);
    pthread_mutex_unlock(&b->lock);
}

static void *worker(void *arg)
{
    batch *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        while (!b->q_count && !b->closed)
            pthread_cond_wait(&b->can_take, &b->lock);
        if (!b->q_count) {
            pthread_mutex_unlock(&b->lock);
            return NULL;
        }
        member *m = b->queue[b->q_head];
        b->q_head = (b->q_head + 1) % b->q_cap;
        b->q_count--;
        pthread_cond_signal(&b->can_put);
        pthread_mutex_unlock(&b->lock);
        if (atomic_load(&b->stop))
            finish_member(b, m, ST_SKIPPED, stop_reason());
        else
            process_member(b, m);
    }
}

/* A member that needs no conversion (skipped or failed by the reader). */
static void record_now(batch *b, member *m, int status, const char *reason)
{
    pthread_mutex_lock(&b->lock);
    b->queued++;
    pthread_mutex_unlock(&b->lock);
    finish_member(b, m, status, reason);
}

/* ---- reading archives ---- */

/* An unlinked temporary file nobody else can see (O_TMPFILE, else mkstemp + unlink). */
static int spool_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/traceconv-spool-XXXXXX", dir);
    pthread_mutex_lock(&temp_lock); /* the signal thread cannot strike between the two calls */
    fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    pthread_mutex_unlock(&temp_lock);
    return fd;
}

/* Copy the current entry into a spool file; 0, -2 when the run stops, or -1 with err
 * (*fatal: the archive cannot go on). */
static int spool_entry(batch *b, struct archive *ar, member *m, char *err, size_t errlen, int *fatal)
{
    int fd = spool_file();
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a spool file: %s", strerror(errno));
        return -1;
    }
    static char buf[1 << 16]; /* the reader thread only */
    /* XXH3: the copy stays at the speed of memcpy (FNV-1a, byte by byte, took an eighth
     * of a whole batch run's CPU) */
    static XXH3_state_t *hash;
    if ((!hash && !(hash = XXH3_createState())) || XXH3_64bits_reset(hash) != XXH_OK) {
        snprintf(err, errlen, "cannot hash the member: out of memory");
        close(fd);
        return -1;
    }
    uint64_t total = 0;
    for (;;) {
        la_ssize_t got = archive_read_data(ar, buf, sizeof buf);
        if (got == 0)
            break;
        if (got < 0) {
            snprintf(err, errlen, "archive: %s", archive_error_string(ar) ? archive_error_string(ar) : "read error");
            *fatal = got == ARCHIVE_FATAL;
            close(fd);
            return -1;
        }
        total += (uint64_t)got;
        XXH3_64bits_update(hash, buf, (size_t)got);
        if (atomic_load(&b->stop)) {
            close(fd);
            return -2;
        }
        if (total > b->max_input) {
            snprintf(err, errlen, "member larger than --max-input (%llu bytes)", (unsigned long long)b->max_input);
            close(fd);
            return -1;
        }
        for (la_ssize_t off = 0; off < got;) {
            ssize_t w = write(fd, buf + off, (size_t)(got - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                snprintf(err, errlen, "cannot spool the member: %s", strerror(errno));
                close(fd);
                return -1;
            }
            off += w;
        }
    }
    m->data_fd = fd;
    m->size = total;
    m->hash = XXH3_64bits_digest(hash);
    m->hashed = 1;
    return 0;
}

/* ---- archives in a file: members in place ---- */

/* An archive in a regular file, or in a region of one (an archive that is itself
 * a member). libarchive reads it through these callbacks (pread at the region's
 * offset, skips and seeks that only move the position), so that a member stored
 * as it is (in an uncompressed tar) can be handed to its worker as the file and
 * an offset: the one reading thread no longer copies and hashes every byte. */
typedef struct file_region {
    int fd;
    uint64_t base, size; /* where the archive lies in the file */
    uint64_t pos;        /* libarchive's position in the archive */
    uint8_t buf[1 << 16];
} file_region;

static la_ssize_t region_read(struct archive *ar, void *user, const void **out)
{
    file_region *r = user;
    size_t want = r->size - r->pos < sizeof r->buf ? (size_t)(r->size - r->pos) : sizeof r->buf;
    ssize_t got = 0;
    while (want && (got = pread(r->fd, r->buf, want, (off_t)(r->base + r->pos))) < 0 && errno == EINTR)
        ;
    if (got < 0) {
        archive_set_error(ar, errno, "read error: %s", strerror(errno));
        return -1;
    }
    r->pos += (uint64_t)got;
    *out = r->buf;
    return got;
}

/* Never past the end: libarchive then reads, finds nothing, and reports the archive cut short. */
static la_int64_t region_skip(struct archive *ar, void *user, la_int64_t request)
{
    (void)ar;
    file_region *r = user;
    uint64_t n = request > 0 ? (uint64_t)request : 0;
    if (n > r->size - r->pos)
        n = r->size - r->pos;
    r->pos += n;
    return (la_int64_t)n;
}

/* zip reads its central directory, at the end, first */
static la_int64_t region_seek(struct archive *ar, void *user, la_int64_t offset, int whence)
{
    file_region *r = user;
    int64_t from = whence == SEEK_CUR ? (int64_t)r->pos : whence == SEEK_END ? (int64_t)r->size : 0;
    if ((offset < 0 && -offset > from) || (offset > 0 && (uint64_t)offset > r->size - (uint64_t)from)) {
        archive_set_error(ar, EINVAL, "seek outside the archive");
        return ARCHIVE_FATAL;
    }
    r->pos = (uint64_t)(from + offset);
    return (la_int64_t)r->pos;
}

/* A reader of r from its start (ar from new_archive_reader); ARCHIVE_OK or an error on ar. */
static int open_region(struct archive *ar, file_region *r)
{
    r->pos = 0;
    if (archive_read_set_callback_data(ar, r) != ARCHIVE_OK || archive_read_set_read_callback(ar, region_read) ||
        archive_read_set_skip_callback(ar, region_skip) || archive_read_set_seek_callback(ar, region_seek))
        return ARCHIVE_FATAL;
    return archive_read_open1(ar);
}

/* Where the current entry's content lies in the region's file, when it is stored
 * there as it is: a tar entry, no compression filter, not sparse, and wholly
 * inside the archive with the padding to its 512-byte block (one cut short is
 * copied: libarchive then fails it and says where, as for any other archive).
 * libarchive has consumed exactly the entry's headers when next_header returns,
 * so its position is the first byte of the content. */
static int content_in_place(struct archive *ar, struct archive_entry *e, const file_region *r, uint64_t *at)
{
    if (!r || archive_filter_count(ar) != 1 || archive_filter_code(ar, 0) != ARCHIVE_FILTER_NONE ||
        (archive_format(ar) & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_TAR || archive_entry_sparse_count(e) != 0 ||
        !archive_entry_size_is_set(e))
        return 0;
    la_int64_t pos = archive_filter_bytes(ar, 0), size = archive_entry_size(e);
    if (pos < 0 || size < 0 || (uint64_t)pos > r->size || (uint64_t)size > r->size - (uint64_t)pos ||
        ((uint64_t)size + 511) / 512 * 512 > r->size - (uint64_t)pos)
        return 0;
    *at = r->base + (uint64_t)pos;
    return 1;
}

/* Hand the member over in place: its own descriptor of the archive's file (the
 * archive may be closed before a worker takes it). 0, or -1 with err. */
static int take_in_place(batch *b, struct archive_entry *e, const file_region *r, uint64_t at, member *m, char *err,
                         size_t errlen)
{
    uint64_t size = (uint64_t)archive_entry_size(e);
    if (size > b->max_input) {
        snprintf(err, errlen, "member larger than --max-input (%llu bytes)", (unsigned long long)b->max_input);
        return -1;
    }
    if ((m->data_fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        snprintf(err, errlen, "cannot keep the archive open: %s", strerror(errno));
        return -1;
    }
    m->data_off = at;
    m->size = size;
    if (size == 0) { /* nothing for the worker to map: hashed here, as a spooled empty member is */
        m->hash = XXH3_64bits("", 0);
        m->hashed = 1;
    }
    return 0;
}

static const char *entry_kind(struct archive_entry *e)
{
    if (archive_entry_hardlink(e))
        return "hard link (not followed)";
    switch (archive_entry_filetype(e)) {
    case AE_IFLNK: return "symbolic link (not followed)";
    case AE_IFCHR: return "character device";
    case AE_IFBLK: return "block device";
    case AE_IFIFO: return "FIFO";
    case AE_IFSOCK: return "socket";
    default: return "not a regular file";
    }
}

static int expand_nested(batch *b, member *m, const char *source, const char *prefix);

/* The members of one archive; shown prefixes the member paths listed (a nested
 * archive's path); region: the file region it is read from, or NULL (stdin). */
static void read_entries(batch *b, struct archive *ar, const char *source, const char *prefix, const char *shown,
                         int depth, const file_region *region)
{
    struct archive_entry *e;
    for (;;) {
        if (atomic_load(&b->stop))
            return;
        int r = archive_read_next_header(ar, &e);
        if (r == ARCHIVE_EOF)
            return;
        if (r < ARCHIVE_WARN) {
            member *m = admit_shown(b, source, shown, "", prefix, 0);
            if (m) {
                char err[1200];
                snprintf(err, sizeof err, "archive: %s",
                         archive_error_string(ar) ? archive_error_string(ar) : "cannot read the next member");
                record_now(b, m, ST_FAILED, err);
            }
            if (r == ARCHIVE_FATAL)
                return;
            continue;
        }
        const char *name = archive_entry_pathname(e);
        if (!name)
            name = "";
        if (archive_entry_filetype(e) == AE_IFDIR)
            continue; /* directories come with their members */
        int regular = archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e);
        member *m = admit_shown(b, source, shown, name, prefix, regular);
        if (!m)
            continue;
        if (!regular) {
            record_now(b, m, ST_SKIPPED, entry_kind(e));
            continue;
        }
        if (!m->out_rel) {
            record_now(b, m, ST_SKIPPED, "nothing is left of the name once sanitized");
            continue;
        }
        if (archive_entry_is_encrypted(e)) {
            record_now(b, m, ST_SKIPPED, "encrypted member");
            continue;
        }
        char err[1200];
        int fatal = 0;
        uint64_t at;
        int spooled = content_in_place(ar, e, region, &at) ? take_in_place(b, e, region, at, m, err, sizeof err)
                                                           : spool_entry(b, ar, m, err, sizeof err, &fatal);
        if (spooled == -2) {
            record_now(b, m, ST_SKIPPED, stop_reason());
            return;
        }
        if (spooled != 0) {
            record_now(b, m, ST_FAILED, err);
            if (fatal)
                return;
            continue;
        }
        if (depth == 0 && expand_nested(b, m, source, prefix)) {
            m->hashed = 0; /* nothing is judged by a container's hash (its members have theirs) */
            record_now(b, m, ST_SKIPPED, "an archive: its members are listed after it");
        }
        else if (reuse_previous(b, m))
            record_now(b, m, ST_OK, NULL);
        else
            enqueue(b, m);
    }
}

static struct archive *new_archive_reader(void)
{
    struct archive *ar = archive_read_new();
    if (ar) {
        archive_read_support_filter_all(ar);
        archive_read_support_format_tar(ar);
        archive_read_support_format_gnutar(ar);
        archive_read_support_format_zip(ar);
    }
    return ar;
}

/* "x.tar.gz" -> "x" for the output directory of an archive. */
static char *archive_stem(const char *base)
{
    static const char *const suffixes[] = {".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".tgz", ".tar",
                                           ".zip",    ".tzst",    ".txz",    ".tbz2"};
    char *s = xstrdup(base);
    size_t n = strlen(s);
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && !strcasecmp(s + n - k, suffixes[i])) {
            s[n - k] = 0;
            break;
        }
    }
    return s;
}

/* Whether the region holds a tar or zip archive (the format is known once the first header was tried). */
static int region_is_archive(file_region *r)
{
    struct archive *ar = new_archive_reader();
    struct archive_entry *e;
    int is_archive = ar && open_region(ar, r) == ARCHIVE_OK;
    if (is_archive) {
        (void)archive_read_next_header(ar, &e);
        is_archive = archive_format(ar) != 0;
    }
    archive_read_free(ar);
    return is_archive;
}

/* A member that is itself a tar or zip archive: its members are read from where
 * the member's bytes are (one level: an archive in it is a member like any other). */
static int expand_nested(batch *b, member *m, const char *source, const char *prefix)
{
    file_region *r = malloc(sizeof *r);
    if (!r)
        return 0;
    *r = (file_region){.fd = m->data_fd, .base = m->data_off, .size = m->size};
    struct archive *ar = region_is_archive(r) ? new_archive_reader() : NULL;
    if (!ar || open_region(ar, r) != ARCHIVE_OK) {
        archive_read_free(ar);
        free(r);
        return 0;
    }
    char *stem = archive_stem(m->clean);
    size_t n = strlen(prefix) + strlen(stem) + 2, k = strlen(m->path) + 2;
    char *sub = malloc(n), *inner_shown = malloc(k);
    if (!sub || !inner_shown)
        exit(EXIT_SOME_FAILED);
    snprintf(sub, n, "%s%s/", prefix, stem);
    snprintf(inner_shown, k, "%s/", m->path); /* m->path already holds the outer shown prefix */
    read_entries(b, ar, source, sub, inner_shown, 1, r);
    archive_read_free(ar);
    free(sub);
    free(inner_shown);
    free(stem);
    free(r);
    return 1;
}

/* The members of the archive in path, under prefix+stem/. */
static void take_archive(batch *b, const char *source, const char *rel, const char *prefix, file_region *r)
{
    struct archive *ar = new_archive_reader();
    char *clean = sanitize_path(rel);
    char *stem = archive_stem(*clean ? clean : "archive");
    size_t n = strlen(prefix) + strlen(stem) + 2;
    char *sub = malloc(n);
    if (!sub)
        exit(EXIT_SOME_FAILED);
    snprintf(sub, n, "%s%s/", prefix, stem);
    if (ar && open_region(ar, r) == ARCHIVE_OK) {
        read_entries(b, ar, source, sub, "", 0, r);
    } else {
        member *m = admit(b, source, rel, prefix, 0);
        if (m)
            record_now(b, m, ST_FAILED, ar && archive_error_string(ar) ? archive_error_string(ar) : "out of memory");
    }
    free(sub);
    free(stem);
    free(clean);
    archive_read_free(ar);
}

/* A file: an archive (its members under prefix+stem/) or a member itself. The
 * archive is read through one descriptor, the one its in-place members map. */
static void take_file(batch *b, const char *source, const char *path, const char *rel, const char *prefix,
                      const struct stat *st)
{
    int fd = st->st_size > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat fst;
    file_region *r = fd >= 0 && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) ? malloc(sizeof *r) : NULL;
    int is_archive = 0;
    if (r) {
        *r = (file_region){.fd = fd, .size = (uint64_t)fst.st_size};
        if ((is_archive = region_is_archive(r)))
            take_archive(b, source, rel, prefix, r);
    }
    free(r);
    if (fd >= 0)
        close(fd);
    if (is_archive)
        return;
    member *m = admit(b, source, rel, prefix, 1);
    if (!m)
        return;
    m->file = xstrdup(path);
    m->size = (uint64_t)st->st_size;
    m->mtime = (int64_t)st->st_mtime;
    if (!m->out_rel)
        record_now(b, m, ST_SKIPPED, "nothing is left of the name once sanitized");
    else if (reuse_previous(b, m))
        record_now(b, m, ST_OK, NULL);
    else
        enqueue(b, m);
}

static int compare_names(const struct dirent **x, const struct dirent **y)
{
    return strcmp((*x)->d_name, (*y)->d_name);
}

static void walk_dir(batch *b, const char *source, const char *dir, const char *rel, const char *prefix, int depth)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, compare_names);
    if (n < 0) {
        member *m = admit(b, source, rel, prefix, 0);
        char err[PATH_MAX + 64];
        snprintf(err, sizeof err, "cannot read the directory: %s", strerror(errno));
        if (m)
            record_now(b, m, ST_FAILED, err);
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *d = names[i]->d_name;
        if (!strcmp(d, ".") || !strcmp(d, "..") || atomic_load(&b->stop) || depth > 64) {
            free(names[i]);
            continue;
        }
        char path[PATH_MAX], sub[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, d);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", d);
        struct stat st;
        if (lstat(path, &st) != 0) {
            free(names[i]);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (!(st.st_dev == b->outdir_st.st_dev && st.st_ino == b->outdir_st.st_ino)) /* not our own outputs */
                walk_dir(b, source, path, sub, prefix, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            take_file(b, source, path, sub, prefix, &st);
        } else {
            member *m = admit(b, source, sub, prefix, 0);
            if (m)
                record_now(b, m, ST_SKIPPED, S_ISLNK(st.st_mode) ? "symbolic link (not followed)" : "not a regular file");
        }
        free(names[i]);
    }
    free(names);
}

static void take_input(batch *b, const char *input)
{
    if (!strcmp(input, "-")) {
        struct archive *ar = new_archive_reader();
        if (ar && archive_read_open_fd(ar, STDIN_FILENO, 1 << 16) == ARCHIVE_OK) {
            read_entries(b, ar, "-", "stdin/", "", 0, NULL);
        } else {
            member *m = admit(b, "-", "", "stdin/", 0);
            if (m)
                record_now(b, m, ST_FAILED, ar && archive_error_string(ar) ? archive_error_string(ar) : "cannot read");
        }
        archive_read_free(ar);
        return;
    }
    struct stat st;
    if (stat(input, &st) != 0) {
        member *m = new_member(b, input, "");
        char err[64 + PATH_MAX];
        snprintf(err, sizeof err, "cannot open: %s", strerror(errno));
        record_now(b, m, ST_FAILED, err);
        return;
    }
    const char *slash = strrchr(input, '/');
    while (slash && slash[1] == 0 && slash > input) { /* "dir/" */
        const char *s = slash - 1;
        while (s > input && *s != '/')
            s--;
        slash = *s == '/' ? s : NULL;
    }
    char base[NAME_MAX + 1];
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : input);
    base[strcspn(base, "/")] = 0;
    if (S_ISDIR(st.st_mode)) {
        char prefix[NAME_MAX + 2];
        char *clean = sanitize_path(base);
        if (!*clean) { /* "." or "..": the directory's own name */
            char real[PATH_MAX];
            const char *r = realpath(input, real) ? strrchr(real, '/') : NULL;
            free(clean);
            clean = sanitize_path(r && r[1] ? r + 1 : "root");
        }
        snprintf(prefix, sizeof prefix, "%s/", clean);
        free(clean);
        walk_dir(b, input, input, "", prefix, 0);
    } else {
        take_file(b, input, input, base, "", &st);
    }
}

/* ---- the summary ---- */

static cJSON *member_json(const member *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", m->source);
    cJSON_AddStringToObject(o, "member", m->path);
    cJSON_AddNumberToObject(o, "size", (double)m->size);
    if (m->mtime >= 0)
        cJSON_AddNumberToObject(o, "mtime", (double)m->mtime);
    if (m->hashed) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)m->hash);
        cJSON_AddStringToObject(o, "xxh3", hex);
    }
    if (m->out_rel && m->status != ST_SKIPPED)
        cJSON_AddStringToObject(o, "output", m->out_rel);
    cJSON_AddStringToObject(o, "status", status_name[m->status]);
    if (m->reason)
        cJSON_AddStringToObject(o, m->status == ST_FAILED ? "error" : "reason", m->reason);
    if (m->detail) {
        cJSON *item = m->detail->child;
        while (item) {
            cJSON *next = item->next;
            cJSON_AddItemToObject(o, item->string, cJSON_DetachItemViaPointer(m->detail, item));
            item = next;
        }
    }
    return o;
}

static int write_summary(batch *b, double seconds)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "generator", "traceconv " TC_VERSION_STRING);
    cJSON *fmts = cJSON_AddArrayToObject(root, "formats");
    for (size_t i = 0; i < b->n_formats; i++)
        cJSON_AddItemToArray(fmts, cJSON_CreateString(b->formats[i]));
    if (b->shard_n > 1) {
        cJSON_AddNumberToObject(root, "shard", b->shard_i);
        cJSON_AddNumberToObject(root, "shards", b->shard_n);
    }
    cJSON *arr = cJSON_AddArrayToObject(root, "members");
    for (size_t i = 0; i < b->n_members; i++)
        cJSON_AddItemToArray(arr, member_json(b->members[i]));
    cJSON *t = cJSON_AddObjectToObject(root, "totals");
    cJSON_AddNumberToObject(t, "members", (double)b->n_members);
    cJSON_AddNumberToObject(t, "ok", (double)b->n_ok);
    cJSON_AddNumberToObject(t, "failed", (double)b->n_failed);
    cJSON_AddNumberToObject(t, "skipped", (double)b->n_skipped);
    cJSON_AddNumberToObject(t, "existing", (double)b->n_reused);
    if (atomic_load(&interrupted))
        cJSON_AddBoolToObject(root, "interrupted", 1);
    cJSON_AddNumberToObject(t, "bytes_in", (double)b->bytes_done);
    cJSON_AddNumberToObject(t, "bytes_out", (double)b->bytes_out);
    cJSON_AddNumberToObject(t, "seconds", seconds);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return -1;
    /* atomically: a temporary file beside it, renamed over it */
    const char *slash = strrchr(b->summary_path, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - b->summary_path + 1) : 1, slash ? b->summary_path : ".");
    const char *leaf = slash ? slash + 1 : b->summary_path;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int slot = -1, fd = dirfd < 0 ? -1 : temp_create(dirfd, leaf, &slot);
    int rc = -1;
    if (fd >= 0) {
        size_t len = strlen(text), off = 0;
        while (off < len) {
            ssize_t w = write(fd, text + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                break;
            off += (size_t)w;
        }
        int ok = off == len && write(fd, "\n", 1) == 1;
        ok = close(fd) == 0 && ok;
        rc = temp_finish(slot, leaf, ok) == 0 && ok ? 0 : -1;
    }
    if (rc != 0)
        fprintf(stderr, "traceconv: %s: cannot write the summary: %s\n", b->summary_path, strerror(errno));
    if (dirfd >= 0)
        close(dirfd);
    free(text);
    return rc;
}

/* ---- options ---- */

static int parse_formats(batch *b, char *list)
{
    for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        if (!tc_writer_extension(f)) {
            fprintf(stderr, "traceconv: unknown output format '%s' (see --list-formats)\n", f);
            return -1;
        }
        for (size_t i = 0; i < b->n_formats; i++)
            if (!strcmp(b->formats[i], f))
                goto next;
        if (b->n_formats == MAX_FORMATS) {
            fputs("traceconv: too many output formats\n", stderr);
            return -1;
        }
        b->formats[b->n_formats++] = f;
    next:;
    }
    return 0;
}

static int add_setting(batch *b, tc_conv *check, const char *key, const char *value)
{
    if (b->n_settings == MAX_SETTINGS || tc_conv_set_option(check, key, value) != TC_OK) {
        fprintf(stderr, "traceconv: %s\n", b->n_settings == MAX_SETTINGS ? "too many options" : tc_conv_error(check));
        return -1;
    }
    b->settings[b->n_settings++] = (setting){key, value};
    if (!strcmp(key, "max-input") && cli_parse_size(value, &b->max_input) != 0)
        return -1;
    if (!strcmp(key, "html"))
        b->report_html = 1;
    return 0;
}

static int parse_args(batch *b, int argc, char **argv)
{
    enum { O_INCLUDE = 256, O_EXCLUDE, O_FAILFAST, O_SUMMARY, O_SHARD, O_PROGRESS, O_FLAG, O_VALUE, O_SKIP };
    static const struct option longopts[] = {
        {"output-format", required_argument, 0, 'o'}, {"output-dir", required_argument, 0, 'O'},
        {"jobs", required_argument, 0, 'j'},          {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},                {"include", required_argument, 0, O_INCLUDE},
        {"exclude", required_argument, 0, O_EXCLUDE}, {"fail-fast", no_argument, 0, O_FAILFAST},
        {"summary", required_argument, 0, O_SUMMARY}, {"shard", required_argument, 0, O_SHARD},
        {"progress", no_argument, 0, O_PROGRESS},     {"strict", no_argument, 0, O_FLAG},
        {"no-thread", no_argument, 0, O_FLAG},        {"merge-threads", no_argument, 0, O_FLAG},
        {"text", no_argument, 0, O_FLAG},             {"weight", required_argument, 0, O_VALUE},
        {"max-depth", required_argument, 0, O_VALUE}, {"max-input", required_argument, 0, O_VALUE},
        {"max-string", required_argument, 0, O_VALUE}, {"max-threads", required_argument, 0, O_VALUE},
        {"max-methods", required_argument, 0, O_VALUE}, {"max-events", required_argument, 0, O_VALUE},
        {"max-json", required_argument, 0, O_VALUE},  {"skip-existing", no_argument, 0, O_SKIP},
        {"title", required_argument, 0, O_VALUE},     {"width", required_argument, 0, O_VALUE},
        {"minwidth", required_argument, 0, O_VALUE},  {"colors", required_argument, 0, O_VALUE},
        {"inverted", no_argument, 0, O_FLAG},         {"hash", no_argument, 0, O_FLAG},
        {"deobfuscate", required_argument, 0, O_VALUE},
        {"sort", required_argument, 0, O_VALUE},      {"threshold", required_argument, 0, O_VALUE},
        {"csv", no_argument, 0, O_FLAG},
        {"html", no_argument, 0, O_FLAG},
        {0, 0, 0, 0}};
    tc_conv *check = tc_conv_new();
    if (!check)
        return -1;
    int opt, li = 0, rc = 0, force_progress = 0;
    char *formats = NULL;
    long n;
    char *end;
    while (rc == 0 && (opt = getopt_long(argc, argv, "o:O:j:qh", longopts, &li)) != -1) {
        switch (opt) {
        case 'o': formats = optarg; break;
        case 'O': b->outdir = optarg; break;
        case 'j':
            n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > MAX_WORKERS) {
                fprintf(stderr, "traceconv: -j wants a number of workers from 1 to %d\n", MAX_WORKERS);
                rc = -1;
            }
            b->jobs = (int)n;
            break;
        case 'q': b->quiet = 1; break;
        case 'h': fputs(usage_text, stdout); tc_conv_free(check); exit(0);
        case O_INCLUDE:
        case O_EXCLUDE:
            if ((opt == O_INCLUDE ? b->n_include : b->n_exclude) == MAX_GLOBS) {
                fputs("traceconv: too many patterns\n", stderr);
                rc = -1;
            } else if (opt == O_INCLUDE) {
                b->include[b->n_include++] = optarg;
            } else {
                b->exclude[b->n_exclude++] = optarg;
            }
            break;
        case O_FAILFAST: b->fail_fast = 1; break;
        case O_SUMMARY: b->summary_path = optarg; break;
        case O_SHARD:
            if (sscanf(optarg, "%u/%u%n", &b->shard_i, &b->shard_n, &li) != 2 || optarg[li] || !b->shard_n ||
                b->shard_i >= b->shard_n) {
                fprintf(stderr, "traceconv: --shard wants I/N with 0 <= I < N, not '%s'\n", optarg);
                rc = -1;
            }
            break;
        case O_PROGRESS: force_progress = 1; break;
        case O_SKIP: b->skip_existing = 1; break;
        case O_FLAG: rc = add_setting(b, check, longopts[li].name, "1"); break;
        case O_VALUE: rc = add_setting(b, check, longopts[li].name, optarg); break;
        default: rc = -1;
        }
    }
    tc_conv_free(check);
    if (rc == 0 && (!formats || parse_formats(b, formats) != 0 || !b->n_formats)) {
        if (!formats)
            fputs("traceconv: missing -o FORMAT[,FORMAT...]\n", stderr);
        rc = -1;
    }
    if (rc == 0 && !b->outdir) {
        fputs("traceconv: missing -O OUTDIR\n", stderr);
        rc = -1;
    }
    if (rc == 0 && optind >= argc) {
        fputs("traceconv: expected at least one INPUT\n", stderr);
        rc = -1;
    }
    b->progress = !b->quiet && (force_progress || isatty(STDERR_FILENO));
    return rc;
}

/* mkdir -p for OUTDIR (the user's own path: symlinks in it are theirs). */
static int make_outdir(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -1;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

int batch_main(int argc, char **argv)
{
    static batch b;
    b.max_input = 64ULL << 30;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    b.jobs = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (int)cpus;
    if (parse_args(&b, argc, argv) != 0) {
        fputs("Try 'traceconv batch --help'.\n", stderr);
        return EXIT_USAGE;
    }
    mode_t mask = umask(0);
    umask(mask);
    output_mode = 0666 & ~mask;
    if (make_outdir(b.outdir) != 0 ||
        (b.outdir_fd = open(b.outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(b.outdir_fd, &b.outdir_st)) {
        fprintf(stderr, "traceconv: %s: cannot use as the output directory: %s\n", b.outdir, strerror(errno));
        return EXIT_USAGE;
    }
    char summary_default[PATH_MAX];
    if (!b.summary_path) {
        snprintf(summary_default, sizeof summary_default, "%s/traceconv-batch.json", b.outdir);
        b.summary_path = summary_default;
    }

    if (b.skip_existing)
        load_previous(b.summary_path);
    stop_flag = &b.stop;
    /* every thread inherits the blocked set; only the signal thread takes them */
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_t sig_tid, tids[MAX_WORKERS];
    pthread_create(&sig_tid, NULL, signal_thread, &set);
    pthread_detach(sig_tid);

    pthread_mutex_init(&b.lock, NULL);
    pthread_cond_init(&b.can_take, NULL);
    pthread_cond_init(&b.can_put, NULL);
    b.q_cap = (size_t)b.jobs;
    b.scanning = 1;
    b.t0 = now_seconds();
    int started = 0;
    for (int i = 0; i < b.jobs; i++)
        started += pthread_create(&tids[started], NULL, worker, &b) == 0;
    if (!started) {
        fputs("traceconv: cannot start a worker thread\n", stderr);
        return EXIT_SOME_FAILED;
    }
    for (int i = optind; i < argc && !atomic_load(&b.stop); i++)
        take_input(&b, argv[i]);
    pthread_mutex_lock(&b.lock);
    b.closed = 1;
    b.scanning = 0;
    pthread_cond_broadcast(&b.can_take);
    pthread_mutex_unlock(&b.lock);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    double seconds = now_seconds() - b.t0;
    draw_progress(&b, 1);
    int summary_rc = write_summary(&b, seconds);
    if (!b.quiet)
        fprintf(stderr, "traceconv batch: %zu members: %zu ok (%zu existing), %zu failed, %zu skipped; %.1f MB in, %.1f MB out, %.1fs; "
                        "summary %s\n",
                b.n_members, b.n_ok, b.n_reused, b.n_failed, b.n_skipped, b.bytes_done / 1e6, b.bytes_out / 1e6, seconds,
                b.summary_path);
    atomic_store(&wound_up, 1);
    int sig = atomic_load(&interrupted);
    if (sig) { /* the summary tells what was done; now die of the signal, as the caller expects */
        signal(sig, SIG_DFL);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    }
    for (size_t i = 0; i < b.n_members; i++) {
        member *m = b.members[i];
        free(m->source), free(m->path), free(m->out_rel), free(m->clean), free(m->file), free(m->reason);
        cJSON_Delete(m->detail);
        free(m);
    }
    free(b.members);
    nameset_free(&b.used);
    for (size_t i = 0; i < n_prev; i++)
        free(prev[i].key);
    free(prev);
    cJSON_Delete(prev_root);
    close(b.outdir_fd);
    return b.n_failed || summary_rc ? EXIT_SOME_FAILED : 0;
}
