/*
 * batch.c - `traceconv batch -o FORMAT[,FORMAT...] -O OUTDIR [options] INPUT...`
 *
 * One reader thread (the main one) walks the inputs in order: plain files,
 * directories (recursively, sorted), and tar/zip archives read with libarchive
 * member by member. A member of an uncompressed tar in a regular file is
 * handed over in place (the archive's file and the member's offset in it: the
 * worker maps those bytes); any other member is spooled to an unlinked
 * temporary file (never a name on disk, bounded by --max-input and by the
 * library's decompression guard, tc_check_expansion). Either goes through a
 * bounded queue to one of N worker threads, each converting with tc_conv objects
 * of its own; memory therefore stays about N conversions whatever the number or
 * size of the members.
 *
 * Every output lands under OUTDIR, whatever the member names say: names are
 * normalized component by component (no absolute path, no "..", no drive
 * letter), directories are created and entered with O_NOFOLLOW (a symlink in
 * the way is refused), and only regular members are converted. Output names,
 * the overwrite rules (-f), temporary files and their removal on signals are
 * outfile.c's, the same as a single conversion's: names are unique by
 * construction (a registry of every name given, the summary's among them), and
 * an existing file is replaced only with -f, never an original trace.
 *
 * Every input named or found is in the summary with a status (an archive with
 * no member is listed itself). A member's summary entry is written to an
 * unlinked file beside the summary as soon as it is finished, and the member
 * forgotten: what the run holds per member is its place in that file (16
 * bytes) and its output names in the registry (16 bytes each), so memory does
 * not grow with the members' paths, figures or warnings.
 */
#include "batch.h"
#include "cli_util.h"
#include "outfile.h"
#include "traceconv.h"
#include "../util/tc_compat.h" /* compiled in (CMakeLists.txt) */

#if TC_WITH_LIBARCHIVE /* CMakeLists.txt: without it, batch reads directories and files only */
#include <archive.h>
#include <archive_entry.h>
#endif
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
enum { ST_PENDING = 0, ST_OK, ST_FAILED, ST_SKIPPED };
static const char *const status_name[] = {"pending", "ok", "failed", "skipped"};

#if TC_WITH_LIBARCHIVE
#define NO_ARCHIVES_HELP ""
#else /* CMakeLists.txt, TC_WITH_LIBARCHIVE */
#define NO_ARCHIVES_HELP "; archives are not read by this build: it was built\nwithout libarchive, and an archive is a failed input"
#endif

static const char usage_text[] =
    "usage: traceconv batch -o FORMAT[,FORMAT...] -O OUTDIR [options] INPUT...\n"
    "\n"
    "Convert every trace found in the INPUTs: files, directories (walked recursively)\n"
    "and archives (.zip, .tar, .tar.gz/.tgz, .tar.zst, .tar.xz, .tar.bz2; '-' reads an\n"
    "archive from stdin)" NO_ARCHIVES_HELP ". Members are chosen by content; the others are listed as skipped.\n"
    "Outputs: OUTDIR/<archive or directory name>/<member path without extension>.<ext>.\n"
    "Run again into the same OUTDIR with the same options, the members whose outputs are\n"
    "up to date (same size and mtime, or same content in an archive) are kept and counted\n"
    "as up to date; the others are converted again over their own earlier outputs. Any\n"
    "other existing file is not overwritten without -f (that member fails, saying so),\n"
    "and an original trace never is.\n"
    "\n"
    "  -o, --output-format LIST  writers or their variants (report-html), comma separated\n"
    "                            (see traceconv --list-formats)\n"
    "  -O, --output-dir DIR      where the outputs go (created if missing)\n"
    "  -f, --force               convert every member again, and replace existing files\n"
    "                            traceconv did not write (never an original trace; a\n"
    "                            symbolic link is replaced itself, not followed)\n"
    "  -j, --jobs N              conversions at once (default: the number of CPUs)\n"
    "      --include GLOB        only members whose path matches (repeatable)\n"
    "      --exclude GLOB        not members whose path matches (repeatable)\n"
    "      --fail-fast           stop at the first failed member\n"
    "      --summary FILE        the JSON summary (default OUTDIR/traceconv-batch.json)\n"
    "      --shard I/N           convert only the members of shard I (0..N-1) of N\n"
    "      --progress            show progress even when stderr is not a terminal\n"
    "      --skip-existing       keep what the previous run (its summary) converted from the\n"
    "                            same member: same size and mtime, or same content in an\n"
    "                            archive; a member converted again replaces its own outputs\n"
    "  -q, --quiet               no progress, no per-member messages\n"
    "  -h, --help                this text\n"
    "\n"
    "traceconv batch --merge-summaries [--summary FILE] SUMMARY...\n"
    "      --merge-summaries     merge the summaries of the shards of one run (each I of N\n"
    "                            once) into the summary of one unsharded run: on stdout, or\n"
    "                            into --summary FILE\n";

static const char usage_tail[] =
    "\n"
    "Exit status: 0 every member converted (or skipped), 1 some failed, 2 usage error.\n";

static void usage(void)
{
    fputs(usage_text, stdout);
    cli_print_options(stdout, CLI_CONVERT);
    fputs(usage_tail, stdout);
}

/* On a termination signal the run winds down: no new member, conversions
 * under way are canceled (their progress callback says so), the summary of
 * what was done is written, and the main thread dies of the signal. A second
 * signal, or 5 seconds without the end (a reader blocked on stdin), cuts it
 * short: every temporary file is removed (the registry kept locked, so that no
 * new one appears meanwhile) and the process dies of the signal at once. */
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
        if (tci_sigwait_for(set, &tick) > 0)
            break;
    if (atomic_load(&wound_up))
        return NULL;
    of_remove_temps_and_hold();
    signal(sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* ---- the run ---- */

typedef struct member {
    size_t index;   /* in the order members were found: their place in the summary */
    size_t found;   /* its place among the members every shard finds: the unsharded run's index */
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
    int own_outputs; /* --skip-existing: the previous run wrote this member's outputs; they may be redone */
    const char *unnamed; /* why a regular member has no output name (out_rel NULL) */
    int unnamed_status;  /* and what it is then: skipped (no name left) or failed (a trace may be lost) */
    int status;
    char *reason;   /* why failed or skipped */
    cJSON *detail;  /* reader, input, outputs, figures, warnings (set by the worker) */
} member;

typedef struct setting {
    const char *key, *value;
} setting;

/* Where a finished member's summary entry lies in the entries file. */
typedef struct entry_ref {
    uint64_t off;
    uint32_t len;
} entry_ref;

typedef struct batch batch;

/* A worker: the input bytes its member has been read so far, for the progress line. */
enum { SMALL_MEMBER = 64 << 10 }; /* read, not mapped: unmapping costs every CPU a TLB flush */

typedef struct worker_slot {
    batch *b;
    _Atomic uint64_t done;
    uint64_t size; /* the member's: done never passes it (a gzip member counts inflated bytes) */
    uint8_t *small; /* SMALL_MEMBER bytes, for small members */
} worker_slot;

struct batch {
    const char *formats[MAX_FORMATS]; /* the registry's names, as given: a writer or a variant (report-html) */
    const char *writers[MAX_FORMATS]; /* each one's writer */
    const char *exts[MAX_FORMATS];    /* the extension of what each writes with the options (report --html: report.html) */
    const tc_variant_info *variants[MAX_FORMATS]; /* what each writes with the options: its own earlier
                                                     outputs (its mark) are replaced without -f */
    size_t n_formats;
    const char *outdir, *summary_path;
    int outdir_fd;
    struct stat outdir_st;
    int jobs, fail_fast, quiet, progress, force;
    unsigned shard_i, shard_n;
    const char *include[MAX_GLOBS], *exclude[MAX_GLOBS];
    size_t n_include, n_exclude;
    setting settings[MAX_SETTINGS];
    size_t n_settings;
    uint64_t max_input;
    of_names used;   /* every output name given (the reader thread's) */
    size_t n_found;  /* members found so far, in every shard (the reader thread's) */
    int summary_dirfd;
    const char *summary_leaf;
    worker_slot slots[MAX_WORKERS];

    pthread_mutex_t lock; /* everything below */
    pthread_cond_t can_take, can_put;
    entry_ref *entries;   /* by member index */
    size_t n_members, cap_entries;
    FILE *entries_file;   /* unlinked, beside the summary */
    uint64_t entries_size;
    int entries_error;    /* errno of a failed write to it, or 0 */
    member *queue[MAX_WORKERS];
    size_t q_head, q_count, q_cap;
    int closed, scanning;
    atomic_int stop;
    size_t done, n_ok, n_failed, n_skipped, n_reused, queued;
    int skip_existing;
    char *options_json; /* the conversion options as a JSON string (batch_options_text) */
    uint64_t bytes_done, bytes_queued, bytes_out;
    /* the inputs' own bytes, for the ETA of compressed archives: their total size (0:
     * unknown, with a directory or stdin among them) and how far the reader is through them */
    uint64_t raw_total, raw_before;
    _Atomic uint64_t raw_pos;
    double t0, last_draw;
    int drawn;
};

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
        cli_say("traceconv: out of memory");
        exit(EXIT_SOME_FAILED);
    }
    return d;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        cli_say("traceconv: out of memory");
        exit(EXIT_SOME_FAILED);
    }
    return p;
}

/* ---- progress: one line on stderr, redrawn at most ten times a second ---- */

/* Input bytes converted: the finished members' and those read so far of the members under way. */
static uint64_t bytes_converted(const batch *b)
{
    uint64_t n = b->bytes_done;
    for (int i = 0; i < b->jobs; i++)
        n += atomic_load(&b->slots[i].done);
    return n;
}

/* "12s", or "?" while nothing says how much is left. While the reader is still in the
 * inputs, the part of their own bytes it has been through (compressed bytes, for a
 * .tar.gz) scales what it has found so far to an estimate of the whole. */
static void format_eta(const batch *b, uint64_t converted, double rate, char *eta, size_t len)
{
    snprintf(eta, len, "?");
    double total = (double)b->bytes_queued;
    if (b->scanning) {
        uint64_t pos = b->raw_before + atomic_load(&b->raw_pos);
        if (!b->raw_total || !pos || !b->bytes_queued)
            return;
        total = (double)b->bytes_queued * ((double)b->raw_total / (double)(pos < b->raw_total ? pos : b->raw_total));
    }
    if (rate > 0 && total >= (double)converted)
        snprintf(eta, len, "%.0fs", (total - (double)converted) / rate);
}

/* Under b->lock. */
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
            cli_progress_clear();
        return;
    }
    uint64_t converted = bytes_converted(b);
    double el = t - b->t0, rate = el > 0 ? converted / el : 0;
    char eta[32];
    format_eta(b, converted, rate, eta, sizeof eta);
    cli_progress_line("traceconv batch: %zu/%zu%s files, %.1f MB, %.1f MB/s, ETA %s, %zu failed%s", b->done,
                      b->queued, b->scanning ? "+" : "", converted / 1e6, rate / 1e6, eta, b->n_failed,
                      atomic_load(&interrupted) ? ", interrupted: finishing" : "");
    b->drawn = 1;
}

/* ---- recording members ---- */

static member *new_member(batch *b, const char *source, const char *path)
{
    member *m = calloc(1, sizeof *m);
    if (!m) {
        cli_say("traceconv: out of memory");
        exit(EXIT_SOME_FAILED);
    }
    m->source = xstrdup(source);
    m->path = xstrdup(path);
    m->data_fd = -1;
    m->mtime = -1;
    pthread_mutex_lock(&b->lock);
    if (b->n_members == b->cap_entries) {
        size_t cap = b->cap_entries ? b->cap_entries * 2 : 1024;
        entry_ref *grown = realloc(b->entries, cap * sizeof *grown);
        if (!grown) {
            cli_say("traceconv: out of memory");
            exit(EXIT_SOME_FAILED);
        }
        b->entries = grown;
        b->cap_entries = cap;
    }
    m->index = b->n_members++;
    b->entries[m->index] = (entry_ref){0, 0};
    pthread_mutex_unlock(&b->lock);
    return m;
}

static void free_member(member *m)
{
    free(m->source), free(m->path), free(m->out_rel), free(m->clean), free(m->file), free(m->reason);
    cJSON_Delete(m->detail);
    free(m);
}

static cJSON *member_json(const batch *b, member *m)
{
    cJSON *o = cJSON_CreateObject();
    if (b->shard_n > 1) /* where it goes among the other shards' members (--merge-summaries) */
        cJSON_AddNumberToObject(o, "index", (double)m->found);
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

/* The member's summary entry, one line of JSON, into the entries file (under b->lock). */
static void spool_entry_text(batch *b, const member *m, const char *text)
{
    size_t len = text ? strlen(text) : 0;
    if (!text || len > UINT32_MAX) {
        b->entries_error = b->entries_error ? b->entries_error : ENOMEM;
        return;
    }
    if (fwrite(text, 1, len, b->entries_file) != len) {
        b->entries_error = b->entries_error ? b->entries_error : errno ? errno : EIO;
        return;
    }
    b->entries[m->index] = (entry_ref){b->entries_size, (uint32_t)len};
    b->entries_size += len;
}

/* A member's final status; the counters, the message on stderr, --fail-fast; its summary
 * entry written, and the member freed. */
static void finish_member(batch *b, member *m, int status, const char *reason)
{
    if (m->data_fd >= 0) {
        close(m->data_fd);
        m->data_fd = -1;
    }
    m->status = status;
    if (reason)
        m->reason = xstrdup(reason);
    cJSON *json = member_json(b, m);
    char *text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    pthread_mutex_lock(&b->lock);
    spool_entry_text(b, m, text);
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
                cli_progress_clear();
            /* a file given as an INPUT is its own member: named once */
            const char *base = strrchr(m->source, '/') ? strrchr(m->source, '/') + 1 : m->source;
            int own = !*m->path || !strcmp(m->path, base);
            cli_say("traceconv: %s%s%s: %s", m->source, own ? "" : ": ", own ? "" : m->path, reason ? reason : "failed");
        }
    }
    draw_progress(b, 0);
    pthread_mutex_unlock(&b->lock);
    free(text);
    free_member(m);
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

/* The directories of the stem (under OUTDIR) hold outputs: taken in the registry, so that no
 * output file gets one of their names; 0, or -1 when one is already an output file's name
 * (an earlier member's "x/a.json" against this member's "x/a.json/b"). */
static int take_directories(batch *b, const char *stem)
{
    char *dir = xstrdup(stem);
    int rc = 0;
    for (char *slash = strchr(dir, '/'); slash && rc == 0; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        if (of_names_has(&b->used, dir))
            rc = -1;
        else if (of_names_take_dir(&b->used, dir) != 0) {
            cli_say("traceconv: out of memory");
            exit(EXIT_SOME_FAILED);
        }
        *slash = '/';
    }
    free(dir);
    return rc;
}

/* The output stem a member asks for: prefix + its sanitized path without extension. */
static char *wanted_stem(const char *prefix, const char *clean)
{
    size_t n = strlen(prefix) + strlen(clean) + 1;
    char *want = xmalloc(n);
    snprintf(want, n, "%s%s", prefix, clean);
    want[of_stem_len(want)] = 0;
    return want;
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

/* The shard of a member: a hash of its path under OUTDIR (prefix + sanitized path), the same
 * in every shard whatever names the others took. */
static int in_shard(const batch *b, const char *key)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *s = key; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return b->shard_n <= 1 || h % b->shard_n == b->shard_i;
}

/* A member that is not recorded: no place in the summary, no counters (another shard's). */
static member *unlisted_member(const char *source, const char *listed)
{
    member *m = calloc(1, sizeof *m);
    if (!m) {
        cli_say("traceconv: out of memory");
        exit(EXIT_SOME_FAILED);
    }
    m->source = xstrdup(source);
    m->path = xstrdup(listed);
    m->data_fd = -1;
    m->mtime = -1;
    return m;
}

/* A member found by the reader: filtered by --include/--exclude, counted and
 * named (the names are taken even when another shard converts it, so that every
 * shard names alike), then kept when it is in our shard. prefix is the output
 * directory of its archive or directory ("" or "name/"). NULL: not ours; then,
 * when foreign is given, a named member of another shard is returned there
 * (unlisted: it may be an archive whose members are shared out too). */
static member *admit_shown(batch *b, const char *source, const char *shown, const char *path, const char *prefix,
                           int regular, member **foreign)
{
    char *clean = sanitize_path(path);
    if (!clean) {
        cli_say("traceconv: out of memory");
        exit(EXIT_SOME_FAILED);
    }
    if (!glob_selects(b, clean)) {
        free(clean);
        return NULL;
    }
    char *rel = NULL;
    const char *unnamed = "nothing is left of the name once sanitized";
    int unnamed_status = ST_SKIPPED;
    if (*clean && regular) {
        char *want = wanted_stem(prefix, clean);
        if (take_directories(b, want) != 0) {
            unnamed = "not converted: its output directory would have the name of an earlier member's output file";
            unnamed_status = ST_FAILED;
        } else if (!(rel = of_plan_stem(&b->used, want, clean, b->writers, b->exts, b->n_formats))) {
            cli_say("traceconv: out of memory");
            exit(EXIT_SOME_FAILED);
        }
        free(want);
    }
    size_t found = b->n_found++;
    size_t n = strlen(prefix) + strlen(*clean ? clean : path) + 1;
    char *key = xmalloc(n);
    snprintf(key, n, "%s%s", prefix, *clean ? clean : path);
    int ours = in_shard(b, key);
    free(key);
    if (!ours && !(foreign && rel)) {
        free(rel);
        free(clean);
        return NULL;
    }
    n = strlen(shown) + strlen(path) + 1;
    char *listed = xmalloc(n);
    snprintf(listed, n, "%s%s", shown, path);
    member *m = ours ? new_member(b, source, listed) : unlisted_member(source, listed);
    free(listed);
    m->found = found;
    m->out_rel = rel;
    m->clean = clean;
    m->unnamed = rel ? NULL : unnamed;
    m->unnamed_status = unnamed_status;
    if (ours)
        return m;
    *foreign = m;
    return NULL;
}

static member *admit(batch *b, const char *source, const char *path, const char *prefix, int regular)
{
    return admit_shown(b, source, "", path, prefix, regular, NULL);
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

/* The conversion's progress: bytes of its member read so far (the progress line moves during a
 * large member), and a cancel when the run is interrupted. */
static int member_progress(void *user, uint64_t done, uint64_t total)
{
    (void)total;
    worker_slot *w = user;
    atomic_store(&w->done, done < w->size ? done : w->size);
    if (w->b->progress && pthread_mutex_trylock(&w->b->lock) == 0) {
        draw_progress(w->b, 0);
        pthread_mutex_unlock(&w->b->lock);
    }
    return atomic_load(&interrupted) != 0;
}

static tc_conv *new_conv(const batch *b, worker_slot *w)
{
    tc_conv *c = tc_conv_new();
    if (c)
        tc_conv_set_progress(c, member_progress, w);
    for (size_t i = 0; c && i < b->n_settings; i++)
        tc_conv_set_option(c, b->settings[i].key, b->settings[i].value); /* checked at start */
    if (c) /* one thread per member: batch's -j is how many members at once */
        tc_conv_set_option(c, "threads", "1");
    return c;
}

static void describe_conversion(tc_conv *c, cJSON *detail)
{
    char sel[1024]; /* the selection it was made with, as every output records it (absent: none) */
    if (tc_conv_selection_text(c, sel, sizeof sel))
        cJSON_AddStringToObject(detail, "selection", sel);
    tc_figure fig[64];
    size_t n = tc_conv_figures(c, fig, 64);
    cJSON *figs = cJSON_AddObjectToObject(detail, "figures");
    for (size_t i = 0; i < n && i < 64; i++)
        if (fig[i].value || fig[i].kind == TC_FIG_COUNT)
            cJSON_AddNumberToObject(figs, fig[i].name, (double)fig[i].value);
    tc_kind_count left[32];
    size_t nl = tc_conv_not_converted(c, left, 32);
    if (nl) { /* by kind, as the warning names them: absent when the reader converted everything */
        cJSON *kinds = cJSON_AddObjectToObject(detail, "not_converted");
        for (size_t i = 0; i < nl && i < 32; i++)
            cJSON_AddNumberToObject(kinds, left[i].kind, (double)left[i].count);
    }
    cJSON *warn = cJSON_AddArrayToObject(detail, "warnings");
    const char *w;
    for (size_t i = 0; (w = tc_conv_warning_at(c, i)); i++)
        cJSON_AddItemToArray(warn, cJSON_CreateString(w));
    if (tc_conv_hint_at(c, 0)) { /* advice (minified names: --deobfuscate); absent when there is none */
        cJSON *hints = cJSON_AddArrayToObject(detail, "hints");
        for (size_t i = 0; (w = tc_conv_hint_at(c, i)); i++)
            cJSON_AddItemToArray(hints, cJSON_CreateString(w));
    }
}

/* A library message for the member: without the input's name the library starts it with
 * (the summary and the line on stderr name the source and the member themselves). */
static void member_error(const char *msg, const input_ref *in, char *err, size_t errlen)
{
    const char *name = in->path ? in->path : in->name;
    size_t n = name ? strlen(name) : 0;
    if (n && !strncmp(msg, name, n) && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2;
    snprintf(err, errlen, "%s", msg);
}

/* The member's output names (leaf names in its directory), one per format. */
typedef struct member_outputs {
    char *names[MAX_FORMATS];
    int how[MAX_FORMATS];
    of_file files[MAX_FORMATS];
    size_t begun;
} member_outputs;

static void free_outputs(member_outputs *o, size_t n)
{
    for (size_t i = 0; i < o->begun; i++)
        of_abandon(&o->files[i]);
    for (size_t i = 0; i < n; i++)
        free(o->names[i]);
}

/* The overwrite rules for each output of the member, before anything is read: one refused,
 * the member fails and none is written. 0, or -1 with err. */
static int check_outputs(batch *b, const member *m, int dirfd, const char *stem, member_outputs *o, char *err,
                         size_t errlen)
{
    struct stat input;
    of_rules rules = {.force = b->force || m->own_outputs, .inputs = &input};
    rules.n_inputs = m->file && stat(m->file, &input) == 0;
    size_t dir_len = (size_t)(strrchr(m->out_rel, '/') ? strrchr(m->out_rel, '/') - m->out_rel + 1 : 0);
    for (size_t i = 0; i < b->n_formats; i++) {
        rules.variant = b->variants[i]->name;
        rules.mark = b->variants[i]->mark;
        o->names[i] = of_output_name(stem, strlen(stem), m->clean, b->writers[i], b->exts[i]);
        if (!o->names[i]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        char shown[PATH_MAX + NAME_MAX + 2], why[800];
        snprintf(shown, sizeof shown, "%s/%.*s%s", b->outdir, (int)dir_len, m->out_rel, o->names[i]);
        o->how[i] = of_check(dirfd, o->names[i], shown, &rules, why, sizeof why);
        if (o->how[i] == OF_REFUSED) {
            snprintf(err, errlen, "%.*s%s: %s", (int)dir_len, m->out_rel, o->names[i], why);
            return -1;
        }
    }
    return 0;
}

/* Every output into place, or none: a rename that fails takes back the new ones before it. */
static int commit_outputs(const batch *b, member_outputs *o, char *err, size_t errlen)
{
    for (size_t i = 0; i < b->n_formats; i++) {
        if (of_commit(&o->files[i]) != 0) {
            snprintf(err, errlen, "cannot write the output %.255s: %.200s", o->names[i], of_strerror(errno));
            for (size_t k = 0; k < i; k++)
                of_withdraw(&o->files[k]);
            return -1;
        }
    }
    o->begun = 0;
    return 0;
}

/* Every format of one member in one read (tc_conv_write_many), each into a
 * temporary file; all of them are renamed into place, or none. 0; -1 (failed) or
 * -2 (no trace: skipped) with err. */
static int convert_formats(batch *b, const member *m, worker_slot *w, const input_ref *in, cJSON *detail, char *err,
                           size_t errlen)
{
    const char *stem;
    int dirfd = open_output_dir(b, m->out_rel, &stem, err, errlen);
    if (dirfd < 0)
        return -1;
    member_outputs o;
    memset(&o, 0, sizeof o);
    if (check_outputs(b, m, dirfd, stem, &o, err, errlen) != 0) {
        free_outputs(&o, b->n_formats);
        close(dirfd);
        return -1;
    }
    tc_conv *c = new_conv(b, w);
    int rc = c ? TC_OK : TC_ERR_NOMEM;
    if (!c)
        snprintf(err, errlen, "out of memory");
    else
        rc = in->path ? tc_conv_open(c, in->path, NULL) : tc_conv_open_memory(c, in->data, in->size, in->name, NULL);
    if (c && tc_conv_reader_name(c))
        cJSON_AddStringToObject(detail, "reader", tc_conv_reader_name(c));
    if (c && rc != TC_OK)
        member_error(tc_conv_error(c), in, err, errlen);
    tc_output outs[MAX_FORMATS];
    for (; rc == TC_OK && o.begun < b->n_formats; o.begun++) {
        if (of_begin_output(&o.files[o.begun], dirfd, o.names[o.begun], o.how[o.begun], b->variants[o.begun]->name) !=
            0) {
            snprintf(err, errlen, "cannot create the output %.255s: %.200s", o.names[o.begun], of_strerror(errno));
            rc = TC_ERR_IO;
            break;
        }
        outs[o.begun] = (tc_output){.writer = b->formats[o.begun], .fp = o.files[o.begun].fp};
    }
    size_t made = o.begun; /* outputs begun: the input was converted (or tried) */
    if (rc == TC_OK && (rc = tc_conv_write_many(c, outs, b->n_formats)) != TC_OK)
        member_error(tc_conv_error(c), in, err, errlen);
    cJSON *outputs = cJSON_AddArrayToObject(detail, "outputs");
    for (size_t i = 0; rc == TC_OK && i < b->n_formats; i++) {
        long size = ftell(o.files[i].fp);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "format", b->formats[i]);
        cJSON_AddStringToObject(e, "name", o.names[i]);
        cJSON_AddNumberToObject(e, "size", (double)size);
        cJSON_AddItemToArray(outputs, e);
        if (size > 0) {
            pthread_mutex_lock(&b->lock);
            b->bytes_out += (uint64_t)size;
            pthread_mutex_unlock(&b->lock);
        }
    }
    /* all of a member's outputs or none: a failed or interrupted member leaves no part of them */
    if (rc == TC_OK && commit_outputs(b, &o, err, errlen) != 0)
        rc = TC_ERR_IO;
    if (c && tc_conv_input_summary(c) && *tc_conv_input_summary(c))
        cJSON_AddStringToObject(detail, "input", tc_conv_input_summary(c));
    if (made && rc != TC_ERR_USAGE)
        describe_conversion(c, detail);
    free_outputs(&o, b->n_formats);
    tc_conv_free(c);
    close(dirfd);
    return rc == TC_OK ? 0 : rc == TC_ERR_NO_TRACE ? -2 : -1;
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

/* A small member's bytes, read into the worker's buffer (mapping and unmapping each of
 * 100,000 tiny members took most of a run: an unmap flushes the TLB of every CPU the process
 * runs on). NULL (errno; 0 when the file is shorter than it was) when they cannot be read. */
static const uint8_t *read_small(const member *m, worker_slot *w)
{
    if (!w->small && !(w->small = malloc(SMALL_MEMBER)))
        return NULL;
    for (size_t got = 0; got < m->size;) {
        ssize_t n = pread(m->data_fd, w->small + got, (size_t)m->size - got, (off_t)(m->data_off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0; /* the file is shorter than it was */
            return NULL;
        }
        got += (size_t)n;
    }
    return w->small;
}

/* msg without a leading "name: " (the name the library was given for the bytes). */
static void strip_name(char *msg, const char *name)
{
    size_t n = strlen(name);
    if (!strncmp(msg, name, n) && msg[n] == ':' && msg[n + 1] == ' ')
        memmove(msg, msg + n + 2, strlen(msg + n + 2) + 1);
}

/* Every reader's score for the member's content; the best one's index, -1 when
 * none recognizes it, -2 (with err) when it cannot be probed. Probed by content
 * alone: a plain file through a descriptor's name, so that its own name never
 * counts (and never that name in a message: the summary names the member). */
static int probe_member(const member *m, const uint8_t *data, char *err, size_t errlen)
{
    tc_probe_score scores[64];
    int n;
    if (data) {
        n = tc_probe_memory(data, (size_t)m->size, NULL, scores, 64, err, errlen);
        if (n < 0)
            strip_name(err, "(memory)");
    } else {
        char probe_path[64];
        int fd = open(m->file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            snprintf(err, errlen, "cannot open: %s", strerror(errno));
            return -2;
        }
        tci_fd_path(fd, probe_path, sizeof probe_path);
        n = tc_probe_file(probe_path, scores, 64, err, errlen);
        close(fd);
        if (n < 0)
            strip_name(err, probe_path);
    }
    if (n < 0)
        return -2;
    int best = 0;
    for (int i = 1; i < n; i++)
        if (scores[i].score > scores[best].score)
            best = i;
    return n == 0 || scores[best].score <= 0 ? -1 : best;
}

static void process_member(batch *b, member *m, worker_slot *w)
{
    char err[1200] = "";
    if (m->size == 0) {
        finish_member(b, m, ST_SKIPPED, "empty");
        return;
    }
    void *map = NULL;
    size_t map_len = 0;
    const uint8_t *data = NULL;
    if (m->data_fd >= 0 && !(data = m->size <= SMALL_MEMBER ? read_small(m, w) : map_content(m, &map, &map_len))) {
        if (errno) /* as the library says of a mapped input that shrank */
            snprintf(err, sizeof err, "cannot read the member: %s", strerror(errno));
        else
            snprintf(err, sizeof err, "input changed while reading: the file is shorter than the member");
        finish_member(b, m, ST_FAILED, err);
        return;
    }
    if (data && !m->hashed) { /* in place: the reader never read it, so the hash is the worker's */
        m->hash = XXH3_64bits(data, (size_t)m->size);
        m->hashed = 1;
        if ((!map || tc_mapping_changed(map) != 1) && reuse_previous(b, m)) {
            if (map)
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
    w->size = m->size;
    int rc = convert_formats(b, m, w, &in, m->detail, err, sizeof err);
    if (map)
        unmap_content(map, map_len);
    atomic_store(&w->done, 0); /* its bytes count as done from here */
    if (rc == -1 && atomic_load(&interrupted)) {
        rc = -2;
        snprintf(err, sizeof err, "not converted: interrupted");
    }
    if (rc == -2) { /* skipped: nothing was converted, nothing to describe */
        cJSON_Delete(m->detail);
        m->detail = NULL;
    }
    finish_member(b, m, rc == 0 ? ST_OK : rc == -2 ? ST_SKIPPED : ST_FAILED, rc == 0 ? NULL : err);
}

/* ---- --skip-existing: the previous summary ----
 *
 * Its members are indexed, not kept: a hash of (source, member) and where the entry's text
 * lies in the file (24 bytes a member); an entry is read and parsed again when a member of
 * this run asks for it. A summary written by this version holds one entry a line; one
 * written otherwise (an earlier version, jq's merge of shards) is parsed whole once, and
 * its entries are copied, one a line, to an unlinked temporary file. */

typedef struct previous {
    uint64_t key; /* XXH3 of source NUL member */
    uint64_t off;
    uint32_t len;
} previous;

static previous *prev;
static size_t n_prev, cap_prev;
static FILE *prev_file;
/* The previous run was this command: the same traceconv and the same conversion options
 * (batch_options_text), so an unchanged member's outputs are up to date. */
static int prev_same_command;

static uint64_t prev_key(const char *source, const char *member)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return 0;
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, source, strlen(source) + 1);
    XXH3_64bits_update(st, member, strlen(member));
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

static int compare_prev(const void *x, const void *y)
{
    const previous *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

static const char *string_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Index the entry e (its text at off, len bytes) when it is a converted member. */
static void index_previous(const cJSON *e, uint64_t off, size_t len)
{
    const char *src = string_of(e, "source"), *mem = string_of(e, "member"), *st = string_of(e, "status");
    if (!src || !mem || !st || strcmp(st, "ok") || len > UINT32_MAX)
        return;
    if (n_prev == cap_prev) {
        size_t cap = cap_prev ? cap_prev * 2 : 1024;
        previous *grown = realloc(prev, cap * sizeof *grown);
        if (!grown)
            return;
        prev = grown;
        cap_prev = cap;
    }
    prev[n_prev++] = (previous){prev_key(src, mem), off, (uint32_t)len};
}

/* One entry a line: index the lines that are member objects. How many lines were objects. */
static size_t index_lines(FILE *f)
{
    char *line = NULL;
    size_t cap = 0, objects = 0;
    uint64_t off = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)got;
        while (len && (line[len - 1] == '\n' || line[len - 1] == ',' || line[len - 1] == '\r'))
            len--;
        if (len && line[0] == '{' && line[len - 1] == '}') {
            cJSON *e = cJSON_ParseWithLength(line, len);
            if (cJSON_IsObject(e) && string_of(e, "member")) {
                objects++;
                index_previous(e, off, len);
            }
            cJSON_Delete(e);
        }
        off += (uint64_t)got;
    }
    free(line);
    return objects;
}

/* options: the run's, as a JSON string (options_json). */
static int same_command(FILE *f, const cJSON *root, const char *options);

/* Another layout: parsed whole, its converted members copied one a line to a temporary file. */
static FILE *copy_members(FILE *f, const char *options)
{
    fseeko(f, 0, SEEK_END);
    off_t size = ftello(f);
    rewind(f);
    char *text = size > 0 && size < (1LL << 31) ? malloc((size_t)size + 1) : NULL;
    cJSON *root = NULL;
    if (text && fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = 0;
        root = cJSON_Parse(text);
    }
    free(text);
    prev_same_command = root && same_command(f, root, options);
    FILE *copy = root ? tmpfile() : NULL;
    cJSON *e;
    cJSON *members = copy ? cJSON_GetObjectItemCaseSensitive(root, "members") : NULL;
    cJSON_ArrayForEach(e, members) {
        char *one = cJSON_PrintUnformatted(e);
        if (one)
            fprintf(copy, "%s\n", one);
        free(one);
    }
    cJSON_Delete(root);
    if (copy && fflush(copy) != 0) {
        fclose(copy);
        copy = NULL;
    }
    return copy;
}

/* Whether the previous summary was written by this traceconv with these options: its
 * generator and options members, in its first line (one written by this version), or in the
 * whole document (another layout, root). */
static int same_command(FILE *f, const cJSON *root, const char *options)
{
    char *line = NULL;
    size_t cap = 0;
    cJSON *head = NULL;
    if (!root) { /* {"generator":...,"formats":[...],"options":"...", then the members */
        rewind(f);
        ssize_t got = getline(&line, &cap, f);
        size_t len = got > 0 ? (size_t)got : 0;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (len > 1 && line[0] == '{' && line[len - 1] == ',') {
            line[len - 1] = '}';
            root = head = cJSON_ParseWithLength(line, len);
        }
        rewind(f);
    }
    const char *gen = string_of(root, "generator");
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(root, "options");
    char *opts = cJSON_IsString(given) ? cJSON_PrintUnformatted(given) : NULL; /* as options: JSON */
    char want[64];
    snprintf(want, sizeof want, "traceconv %s", TC_VERSION_STRING);
    int same = gen && opts && !strcmp(gen, want) && !strcmp(opts, options);
    free(opts);
    cJSON_Delete(head);
    free(line);
    return same;
}

/* Read the previous summary, if any (a damaged one is ignored: everything is redone). */
static void load_previous(const char *path, const char *options)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    prev_same_command = same_command(f, NULL, options);
    if (!index_lines(f) && (prev_file = copy_members(f, options))) {
        fclose(f);
        rewind(prev_file);
        index_lines(prev_file);
    } else {
        prev_file = f;
    }
    if (n_prev)
        qsort(prev, n_prev, sizeof *prev, compare_prev);
}

/* The previous entry of this member that gave it the same output name, parsed; NULL if none. */
static cJSON *find_previous(const member *m)
{
    previous key = {.key = prev_key(m->source, m->path)};
    size_t lo = 0, hi = n_prev;
    while (lo < hi) { /* the first entry with the key: duplicate members share it */
        size_t mid = lo + (hi - lo) / 2;
        if (prev[mid].key < key.key)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n_prev && prev[lo].key == key.key; lo++) {
        char *text = malloc((size_t)prev[lo].len + 1);
        if (!text || pread(fileno(prev_file), text, prev[lo].len, (off_t)prev[lo].off) != (ssize_t)prev[lo].len) {
            free(text);
            continue;
        }
        cJSON *e = cJSON_ParseWithLength(text, prev[lo].len);
        free(text);
        const char *src = string_of(e, "source"), *mem = string_of(e, "member"), *out = string_of(e, "output");
        if (src && mem && out && !strcmp(src, m->source) && !strcmp(mem, m->path) && !strcmp(out, m->out_rel))
            return e;
        cJSON_Delete(e);
    }
    return NULL;
}

static void free_previous(void)
{
    free(prev);
    if (prev_file)
        fclose(prev_file);
}

static double number_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Are the previous run's outputs for this member all there, as it recorded them? */
static int outputs_still_there(const batch *b, const member *m, const cJSON *e)
{
    const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(e, "outputs");
    for (size_t i = 0; i < b->n_formats; i++) {
        const cJSON *o, *found = NULL;
        cJSON_ArrayForEach(o, outputs) {
            const char *f = string_of(o, "format");
            if (f && !strcmp(f, b->formats[i]))
                found = o;
        }
        char *path = of_output_name(m->out_rel, strlen(m->out_rel), m->clean, b->writers[i], b->exts[i]);
        struct stat st;
        int there = found && path && fstatat(b->outdir_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode) && (double)st.st_size == number_of(found, "size") &&
                    of_own_output(b->outdir_fd, path, b->variants[i]->name, b->variants[i]->mark);
        free(path);
        if (!there)
            return 0;
    }
    return 1;
}

/* The previous run converted this very member (same size, and same mtime for a
 * file or same content hash for an archive member) into every format asked
 * for, and those outputs are there with their recorded sizes: its summary
 * entry is taken over (the caller records it as ok). A member it converted that
 * has changed is converted again, over its own previous outputs. */
static int reuse_previous(batch *b, member *m)
{
    if (!n_prev || !m->out_rel || (!m->file && !m->hashed) || (!b->skip_existing && !prev_same_command))
        return 0;
    cJSON *e = find_previous(m);
    if (!e)
        return 0;
    m->own_outputs = 1;
    const char *hash = string_of(e, "xxh3");
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)m->hash);
    if (number_of(e, "size") != (double)m->size ||
        (m->file ? number_of(e, "mtime") != (double)m->mtime : !hash || strcmp(hash, hex)) ||
        !outputs_still_there(b, m, e)) {
        cJSON_Delete(e);
        return 0;
    }
    m->detail = cJSON_CreateObject();
    static const char *const kept[] = {"outputs", "reader", "input", "figures", "not_converted", "warnings", "hints"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, kept[i]);
        if (v)
            cJSON_AddItemToObject(m->detail, kept[i], cJSON_Duplicate(v, 1));
    }
    cJSON_AddBoolToObject(m->detail, "existing", 1);
    cJSON_Delete(e);
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
    worker_slot *w = arg;
    batch *b = w->b;
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
            process_member(b, m, w);
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

#if TC_WITH_LIBARCHIVE
/* An unlinked temporary file nobody else can see, in $TMPDIR. */
static int spool_file(void)
{
    const char *dir = getenv("TMPDIR");
    return of_scratch(dir && *dir ? dir : "/tmp");
}

/* An archive in a regular file, or in a region of one (an archive that is itself
 * a member). libarchive reads it through these callbacks (pread at the region's
 * offset, skips and seeks that only move the position), so that a member stored
 * as it is (in an uncompressed tar) can be handed to its worker as the file and
 * an offset: the one reading thread no longer copies and hashes every byte. */
typedef struct file_region {
    int fd;
    uint64_t base, size; /* where the archive lies in the file */
    uint64_t pos;        /* libarchive's position in the archive */
    uint64_t read_total; /* bytes read (not skipped): what a member's decompression consumed */
    _Atomic uint64_t *progress; /* an INPUT's own archive: where the reader is in it, for the ETA */
    uint8_t buf[1 << 16];
} file_region;

static void region_moved(file_region *r)
{
    if (r->progress)
        atomic_store(r->progress, r->pos);
}

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
    r->read_total += (uint64_t)got;
    region_moved(r);
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
    region_moved(r);
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
    region_moved(r);
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

/* The archive's own bytes libarchive has read so far (compressed bytes: what a member's
 * decompression consumes). */
static uint64_t raw_consumed(struct archive *ar, const file_region *r)
{
    la_int64_t n = r ? (la_int64_t)r->read_total : archive_filter_bytes(ar, -1);
    return n > 0 ? (uint64_t)n : 0;
}

/* Copy the current entry into a spool file, under the library's decompression guard (the
 * same rule and message as for gzip input: tc_check_expansion) and --max-input; 0, -2 when
 * the run stops, or -1 with err (*fatal: the archive cannot go on). head: its first
 * head_len bytes, already read from the archive (or NULL). */
static int spool_entry(batch *b, struct archive *ar, const file_region *region, member *m, const uint8_t *head,
                       size_t head_len, char *err, size_t errlen, int *fatal)
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
    uint64_t total = 0, raw_start = raw_consumed(ar, region);
    for (;;) {
        la_ssize_t got = head ? (la_ssize_t)head_len : archive_read_data(ar, buf, sizeof buf);
        if (head) {
            memcpy(buf, head, head_len); /* head_len <= sizeof buf */
            head = NULL;
        }
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
        if (tc_check_expansion(total, raw_consumed(ar, region) - raw_start, b->max_input, "the archive member", err,
                               errlen) != TC_OK) {
            close(fd);
            return -1;
        }
        for (la_ssize_t off = 0; off < got;) {
            ssize_t w = write(fd, buf + off, (size_t)(got - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                snprintf(err, errlen, "cannot spool the member: %s", of_strerror(errno));
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
    if (tc_check_expansion(size, size, b->max_input, "the archive member", err, errlen) != TC_OK)
        return -1;
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

/* Why an archive is listed itself: it has members (listed after it), or none. */
static void archive_reason(struct archive *ar, size_t entries, char *why, size_t len)
{
    if (entries)
        snprintf(why, len, "an archive: its members are listed after it");
    else if ((archive_format(ar) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR)
        snprintf(why, len, "an empty tar archive: no member (a file of zero bytes reads as one)");
    else
        snprintf(why, len, "an empty archive (%s): no member", archive_format_name(ar) ? archive_format_name(ar) : "?");
}

static int expand_nested(batch *b, member *m, const char *source, const char *prefix, char *why, size_t whylen);
static int expand_foreign(batch *b, struct archive *ar, struct archive_entry *e, const file_region *region, member *m,
                          const char *source, const char *prefix);

/* The members of one archive; shown prefixes the member paths listed (a nested
 * archive's path); region: the file region it is read from, or NULL (stdin).
 * Returns how many entries it had, directories aside. */
static size_t read_entries(batch *b, struct archive *ar, const char *source, const char *prefix, const char *shown,
                           int depth, const file_region *region)
{
    struct archive_entry *e;
    size_t entries = 0;
    for (;;) {
        if (atomic_load(&b->stop))
            return entries + 1; /* cut short: not "empty" */
        int r = archive_read_next_header(ar, &e);
        if (r == ARCHIVE_EOF)
            return entries;
        entries++;
        if (r < ARCHIVE_WARN) {
            member *m = admit_shown(b, source, shown, "", prefix, 0, NULL);
            if (m) {
                char err[1200];
                snprintf(err, sizeof err, "archive: %s",
                         archive_error_string(ar) ? archive_error_string(ar) : "cannot read the next member");
                record_now(b, m, ST_FAILED, err);
            }
            if (r == ARCHIVE_FATAL)
                return entries;
            continue;
        }
        const char *name = archive_entry_pathname(e);
        if (!name)
            name = "";
        if (archive_entry_filetype(e) == AE_IFDIR) {
            entries--;
            continue; /* directories come with their members */
        }
        int regular = archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e);
        member *foreign = NULL;
        member *m = admit_shown(b, source, shown, name, prefix, regular,
                                depth == 0 && regular && b->shard_n > 1 ? &foreign : NULL);
        if (foreign && expand_foreign(b, ar, e, region, foreign, source, prefix))
            return entries;
        if (!m)
            continue;
        if (!regular) {
            record_now(b, m, ST_SKIPPED, entry_kind(e));
            continue;
        }
        if (!m->out_rel) {
            m->size = archive_entry_size_is_set(e) ? (uint64_t)archive_entry_size(e) : 0;
            record_now(b, m, m->unnamed_status, m->unnamed);
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
                                                           : spool_entry(b, ar, region, m, NULL, 0, err, sizeof err,
                                                                         &fatal);
        if (spooled == -2) {
            record_now(b, m, ST_SKIPPED, stop_reason());
            return entries;
        }
        if (spooled != 0) {
            record_now(b, m, ST_FAILED, err);
            if (fatal)
                return entries;
            continue;
        }
        if (depth == 0 && expand_nested(b, m, source, prefix, err, sizeof err)) {
            m->hashed = 0; /* nothing is judged by a container's hash (its members have theirs) */
            record_now(b, m, ST_SKIPPED, err);
        } else if (reuse_previous(b, m)) {
            record_now(b, m, ST_OK, NULL);
        } else {
            enqueue(b, m);
        }
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
static int region_is_archive(file_region *r, const char *name)
{
    (void)name; /* judged by libarchive on the bytes */
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

/* Whether the first bytes of a member (up to SHARD_PROBE of them) start an archive:
 * how the shards a spooled member does not belong to decide to read it all. */
enum { SHARD_PROBE = 1 << 16 };

static int head_is_archive(const uint8_t *head, size_t len)
{
    struct archive *ar = new_archive_reader();
    struct archive_entry *e;
    int is_archive = ar && archive_read_open_memory(ar, head, len) == ARCHIVE_OK;
    if (is_archive) {
        (void)archive_read_next_header(ar, &e);
        is_archive = archive_format(ar) != 0;
    }
    archive_read_free(ar);
    return is_archive;
}

/* In a sharded run a spooled member is taken for an archive only when its head says so,
 * as the other shards see it (expand_foreign): every shard then finds the same members. */
static int spooled_head_is_archive(const batch *b, const member *m)
{
    static uint8_t head[SHARD_PROBE]; /* the reader thread only */
    if (b->shard_n <= 1 || m->data_off)
        return 1; /* unsharded, or in place: judged on the whole region, by every shard alike */
    ssize_t got = pread(m->data_fd, head, sizeof head, 0);
    return got > 0 && head_is_archive(head, (size_t)got);
}

/* A member that is itself a tar or zip archive: its members are read from where
 * the member's bytes are (one level: an archive in it is a member like any other).
 * 1 (why says what the container is listed as) or 0: not an archive. */
static int expand_nested(batch *b, member *m, const char *source, const char *prefix, char *why, size_t whylen)
{
    file_region *r = spooled_head_is_archive(b, m) ? malloc(sizeof *r) : NULL;
    if (!r)
        return 0;
    *r = (file_region){.fd = m->data_fd, .base = m->data_off, .size = m->size};
    struct archive *ar = region_is_archive(r, m->clean) ? new_archive_reader() : NULL;
    if (!ar || open_region(ar, r) != ARCHIVE_OK) {
        archive_read_free(ar);
        free(r);
        return 0;
    }
    char *stem = archive_stem(m->clean);
    size_t n = strlen(prefix) + strlen(stem) + 2, k = strlen(m->path) + 2;
    char *sub = xmalloc(n), *inner_shown = xmalloc(k);
    snprintf(sub, n, "%s%s/", prefix, stem);
    snprintf(inner_shown, k, "%s/", m->path); /* m->path already holds the outer shown prefix */
    archive_reason(ar, read_entries(b, ar, source, sub, inner_shown, 1, r), why, whylen);
    archive_read_free(ar);
    free(sub);
    free(inner_shown);
    free(stem);
    free(r);
    return 1;
}

/* The first bytes of the current entry (up to cap): their count, or an ARCHIVE_ error. */
static la_ssize_t read_head(struct archive *ar, uint8_t *head, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        la_ssize_t got = archive_read_data(ar, head + n, cap - n);
        if (got < 0)
            return got;
        if (got == 0)
            break;
        n += (size_t)got;
    }
    return (la_ssize_t)n;
}

/* A member of another shard, named and regular, at the top of an archive: when it is an
 * archive itself its members are shared out like any others, so every shard reads it
 * (the shard it belongs to lists the container). It is expanded exactly when its owner
 * would expand it (not encrypted, within --max-input, an archive); a spooled one is
 * first judged by its head, so that the other shards' traces are not copied. The member
 * is freed. 1 when the archive cannot go on (its owner stops there too). */
static int expand_foreign(batch *b, struct archive *ar, struct archive_entry *e, const file_region *region, member *m,
                          const char *source, const char *prefix)
{
    static uint8_t head[SHARD_PROBE]; /* the reader thread only */
    char err[1200];
    int stop = 0, fatal = 0;
    uint64_t at;
    if (archive_entry_is_encrypted(e)) {
        /* its owner skips it */
    } else if (content_in_place(ar, e, region, &at)) {
        if (take_in_place(b, e, region, at, m, err, sizeof err) == 0)
            expand_nested(b, m, source, prefix, err, sizeof err);
    } else {
        la_ssize_t got = read_head(ar, head, sizeof head);
        if (got < 0) {
            stop = got == ARCHIVE_FATAL;
        } else if (head_is_archive(head, (size_t)got)) {
            int rc = spool_entry(b, ar, region, m, head, (size_t)got, err, sizeof err, &fatal);
            if (rc == 0)
                expand_nested(b, m, source, prefix, err, sizeof err);
            stop = rc == -2 || fatal;
        }
    }
    if (m->data_fd >= 0)
        close(m->data_fd);
    free_member(m);
    return stop;
}

/* The members of the archive in path, under prefix+stem/; an archive without any is listed itself. */
static void take_archive(batch *b, const char *source, const char *rel, const char *prefix, file_region *r)
{
    struct archive *ar = new_archive_reader();
    char *clean = sanitize_path(rel);
    char *stem = archive_stem(*clean ? clean : "archive");
    size_t n = strlen(prefix) + strlen(stem) + 2;
    char *sub = xmalloc(n);
    snprintf(sub, n, "%s%s/", prefix, stem);
    if (ar && open_region(ar, r) == ARCHIVE_OK) {
        size_t entries = read_entries(b, ar, source, sub, "", 0, r);
        member *m = entries ? NULL : admit(b, source, rel, prefix, 0);
        if (m) {
            char why[256];
            archive_reason(ar, 0, why, sizeof why);
            record_now(b, m, ST_SKIPPED, why);
        }
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

#else /* built without libarchive (CMakeLists.txt, TC_WITH_LIBARCHIVE) */

typedef struct file_region {
    int fd;
    uint64_t size;
    _Atomic uint64_t *progress;
} file_region;

#define NO_ARCHIVES "archives need libarchive, which this traceconv was built without (install it, then configure and build again)"

/* Whether the file looks like an archive libarchive would have read: a zip or a tar by
 * their own bytes, or a compressed file whose name says it holds a tar (a compressed
 * trace, app.trace.gz, is a member: the library reads gzip). */
static int region_is_archive(file_region *r, const char *name)
{
    static const char *const tars[] = {".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.xz", ".txz", ".tar.bz2", ".tbz2"};
    uint8_t head[512];
    ssize_t got = pread(r->fd, head, sizeof head, 0);
    if (got >= 4 && head[0] == 'P' && head[1] == 'K' && ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6)))
        return 1;
    if (got >= 262 && !memcmp(head + 257, "ustar", 5))
        return 1;
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof tars / sizeof *tars; i++) {
        size_t k = strlen(tars[i]);
        if (n > k && !strcasecmp(name + n - k, tars[i]))
            return 1;
    }
    return 0;
}

/* An archive is listed, failed, with why: what cannot be read, counted as such. */
static void take_archive(batch *b, const char *source, const char *rel, const char *prefix, file_region *r)
{
    (void)r;
    member *m = admit(b, source, rel, prefix, 0);
    if (m)
        record_now(b, m, ST_FAILED, "an archive: " NO_ARCHIVES);
}
#endif

/* A file: an archive (its members under prefix+stem/) or a member itself. The
 * archive is read through one descriptor, the one its in-place members map.
 * progress: where to say how far the reader is in it (an INPUT's own file), or NULL. */
static void take_file(batch *b, const char *source, const char *path, const char *rel, const char *prefix,
                      const struct stat *st, _Atomic uint64_t *progress)
{
    int fd = st->st_size > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat fst;
    file_region *r = fd >= 0 && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) ? malloc(sizeof *r) : NULL;
    int is_archive = 0;
    if (r) {
        *r = (file_region){.fd = fd, .size = (uint64_t)fst.st_size};
        if ((is_archive = region_is_archive(r, rel))) {
            r->progress = progress;
            take_archive(b, source, rel, prefix, r);
        }
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
        record_now(b, m, m->unnamed_status, m->unnamed);
    else if (reuse_previous(b, m))
        record_now(b, m, ST_OK, NULL);
    else
        enqueue(b, m);
}

static int compare_names(const struct dirent **x, const struct dirent **y)
{
    return strcmp((*x)->d_name, (*y)->d_name);
}

/* An entry of a directory that is not converted, listed with why. */
static void list_entry(batch *b, const char *source, const char *sub, const char *prefix, int status, const char *why)
{
    member *m = admit(b, source, sub, prefix, 0);
    if (m)
        record_now(b, m, status, why);
}

static void walk_dir(batch *b, const char *source, const char *dir, const char *rel, const char *prefix, int depth)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, compare_names);
    if (n < 0) {
        char err[PATH_MAX + 64];
        snprintf(err, sizeof err, "cannot read the directory: %s", strerror(errno));
        list_entry(b, source, rel, prefix, ST_FAILED, err);
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *d = names[i]->d_name;
        if (!strcmp(d, ".") || !strcmp(d, "..") || atomic_load(&b->stop)) {
            free(names[i]);
            continue;
        }
        char path[PATH_MAX], sub[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, d);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", d);
        struct stat st;
        if (lstat(path, &st) != 0) {
            char err[PATH_MAX + 64];
            snprintf(err, sizeof err, "cannot read: %s", strerror(errno));
            list_entry(b, source, sub, prefix, ST_FAILED, err);
        } else if (S_ISDIR(st.st_mode)) {
            if (st.st_dev == b->outdir_st.st_dev && st.st_ino == b->outdir_st.st_ino)
                list_entry(b, source, sub, prefix, ST_SKIPPED, "the output directory (OUTDIR): not read");
            else if (depth >= 64)
                list_entry(b, source, sub, prefix, ST_SKIPPED, "a directory more than 64 levels deep: not read");
            else
                walk_dir(b, source, path, sub, prefix, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            take_file(b, source, path, sub, prefix, &st, NULL);
        } else {
            list_entry(b, source, sub, prefix, ST_SKIPPED,
                       S_ISLNK(st.st_mode) ? "symbolic link (not followed)" : "not a regular file");
        }
        free(names[i]);
    }
    free(names);
}

static void take_input(batch *b, const char *input)
{
    if (!strcmp(input, "-")) {
#if TC_WITH_LIBARCHIVE
        struct archive *ar = new_archive_reader();
        if (ar && archive_read_open_fd(ar, STDIN_FILENO, 1 << 16) == ARCHIVE_OK) {
            member *m = read_entries(b, ar, "-", "stdin/", "", 0, NULL) ? NULL : admit(b, "-", "", "stdin/", 0);
            char why[256];
            archive_reason(ar, 0, why, sizeof why);
            if (m)
                record_now(b, m, ST_SKIPPED, why);
        } else {
            member *m = admit(b, "-", "", "stdin/", 0);
            if (m)
                record_now(b, m, ST_FAILED, ar && archive_error_string(ar) ? archive_error_string(ar) : "cannot read");
        }
        archive_read_free(ar);
#else
        member *m = admit(b, "-", "", "stdin/", 0);
        if (m)
            record_now(b, m, ST_FAILED, "an archive from stdin: " NO_ARCHIVES);
#endif
        return;
    }
    struct stat st;
    if (stat(input, &st) != 0) {
        member *m = new_member(b, input, ""); /* listed by every shard: each one's run failed */
        m->found = b->n_found++;
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
        take_file(b, input, input, base, "", &st, &b->raw_pos);
    }
}

/* ---- the summary ---- */

/* The summary's name is taken in the registry when it lies in OUTDIR: no member gets it. */
static void reserve_summary_name(batch *b)
{
    char out[PATH_MAX], dir[PATH_MAX], *slash = strrchr(b->summary_path, '/');
    size_t n = slash ? (size_t)(slash - b->summary_path) : 0;
    char *d = n ? strndup(b->summary_path, n) : strdup(slash ? "/" : ".");
    int known = d && realpath(b->outdir, out) && realpath(d, dir);
    free(d);
    size_t k = known ? strlen(out) : 0;
    if (!known || strncmp(dir, out, k) || (dir[k] && dir[k] != '/'))
        return; /* elsewhere */
    char rel[PATH_MAX * 2];
    snprintf(rel, sizeof rel, "%s%s%s", dir[k] ? dir + k + 1 : "", dir[k] ? "/" : "", b->summary_leaf);
    of_names_take(&b->used, rel);
}

/* Before anything is converted: where the summary goes, that it replaces nothing but a
 * summary, and the file its entries wait in. 0, or -1 after the message. */
static int open_summary(batch *b)
{
    b->summary_dirfd = of_open_dir(b->summary_path, &b->summary_leaf);
    struct stat st;
    const char *why = NULL;
    if (b->summary_dirfd < 0 || !*b->summary_leaf)
        why = b->summary_dirfd < 0 ? strerror(errno) : "not a file name";
    else if (fstatat(b->summary_dirfd, b->summary_leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             (!S_ISREG(st.st_mode) || !batch_is_summary(b->summary_dirfd, b->summary_leaf)))
        why = "exists and is not a traceconv batch summary; not replacing it";
    int fd = why ? -1 : of_scratch_at(b->summary_dirfd);
    if (!why && (fd < 0 || !(b->entries_file = fdopen(fd, "w+b")))) {
        why = strerror(errno);
        if (fd >= 0)
            close(fd);
    }
    if (why) {
        cli_say("traceconv batch: %s: cannot write the summary there: %s", b->summary_path, why);
        return -1;
    }
    reserve_summary_name(b);
    return 0;
}

/* Every member's entry, in the order they were found, one a line. */
static int copy_entries(batch *b, FILE *out)
{
    if (fflush(b->entries_file) != 0 && !b->entries_error)
        b->entries_error = errno;
    char *buf = NULL;
    size_t cap = 0;
    int rc = b->entries_error ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < b->n_members; i++) {
        entry_ref e = b->entries[i];
        if (e.len + 1 > cap) {
            free(buf);
            cap = (size_t)e.len + 1;
            buf = malloc(cap);
        }
        if (!buf || pread(fileno(b->entries_file), buf, e.len, (off_t)e.off) != (ssize_t)e.len) {
            b->entries_error = buf ? errno ? errno : EIO : ENOMEM;
            rc = -1;
        } else if (fwrite(buf, 1, e.len, out) != e.len || fputs(i + 1 < b->n_members ? ",\n" : "\n", out) < 0) {
            rc = -1;
        }
    }
    free(buf);
    return rc;
}

static int write_summary(batch *b, double seconds)
{
    of_file f;
    int rc = of_begin(&f, b->summary_dirfd, b->summary_leaf, OF_REPLACE);
    if (rc == 0) {
        FILE *out = f.fp;
        fprintf(out, "{\"generator\":\"traceconv %s\",\"formats\":[", TC_VERSION_STRING);
        for (size_t i = 0; i < b->n_formats; i++)
            fprintf(out, "%s\"%s\"", i ? "," : "", b->formats[i]);
        fputs("],\"options\":", out);
        fputs(b->options_json, out);
        fputc(',', out);
        if (b->shard_n > 1)
            fprintf(out, "\"shard\":%u,\"shards\":%u,", b->shard_i, b->shard_n);
        fputs("\n\"members\":[\n", out);
        rc = copy_entries(b, out);
        fprintf(out,
                "],\n\"totals\":{\"members\":%zu,\"ok\":%zu,\"failed\":%zu,\"skipped\":%zu,\"existing\":%zu,"
                "\"bytes_in\":%llu,\"bytes_out\":%llu,\"seconds\":%.6f}%s}\n",
                b->n_members, b->n_ok, b->n_failed, b->n_skipped, b->n_reused, (unsigned long long)b->bytes_done,
                (unsigned long long)b->bytes_out, seconds, atomic_load(&interrupted) ? ",\"interrupted\":true" : "");
        if (rc == 0)
            rc = of_commit(&f);
        else
            of_abandon(&f);
    }
    if (rc != 0)
        cli_say("traceconv batch: %s: cannot write the summary: %s", b->summary_path,
                of_strerror(b->entries_error ? b->entries_error : errno));
    return rc;
}

/* ---- options ---- */

/* -o LIST: writers or variants in any case, each once (a name given twice, or two that write
 * one variant with the options, count once), and what each writes. */
static int parse_formats(batch *b, char *list, const tc_conv *check)
{
    const tc_variant_info *variants[MAX_FORMATS];
    for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        const tc_variant_info *v = tc_output_variant(check, f);
        if (!v) {
            cli_unknown_format("traceconv batch", f, CLI_WRITER);
            return -1;
        }
        for (size_t i = 0; i < b->n_formats; i++)
            if (variants[i] == v)
                goto next;
        if (b->n_formats == MAX_FORMATS) {
            cli_say("traceconv batch: too many output formats");
            return -1;
        }
        variants[b->n_formats] = v;
        b->variants[b->n_formats] = v;
        b->formats[b->n_formats] = tc_output_variant(NULL, f)->name;
        b->writers[b->n_formats] = v->format;
        b->exts[b->n_formats++] = v->extension;
    next:;
    }
    return 0;
}

static int add_setting(batch *b, tc_conv *check, const char *key, const char *value)
{
    if (b->n_settings == MAX_SETTINGS || tc_conv_set_option(check, key, value) != TC_OK) {
        cli_say("traceconv batch: %s", b->n_settings == MAX_SETTINGS ? "too many options" : tc_conv_error(check));
        return -1;
    }
    b->settings[b->n_settings++] = (setting){key, value};
    if (!strcmp(key, "max-input") && cli_parse_size(value, &b->max_input) != 0)
        return -1;
    return 0;
}

static int parse_args(batch *b, int argc, char **argv)
{
    /* batch's own options, then every option of a conversion (the library's tables, cli_util.c) */
    enum { O_INCLUDE = 256, O_EXCLUDE, O_FAILFAST, O_SUMMARY, O_SHARD, O_PROGRESS, O_SKIP, O_LIBRARY };
    static struct option longopts[160] = {
        {"output-format", required_argument, 0, 'o'}, {"output-dir", required_argument, 0, 'O'},
        {"jobs", required_argument, 0, 'j'},          {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},                {"include", required_argument, 0, O_INCLUDE},
        {"exclude", required_argument, 0, O_EXCLUDE}, {"fail-fast", no_argument, 0, O_FAILFAST},
        {"summary", required_argument, 0, O_SUMMARY}, {"shard", required_argument, 0, O_SHARD},
        {"progress", no_argument, 0, O_PROGRESS},     {"skip-existing", no_argument, 0, O_SKIP},
        {"force", no_argument, 0, 'f'}};
    size_t n_longopts = 13;
    const tc_option_info *keys[128];
    size_t n_keys = cli_option_keys(CLI_CONVERT, keys, 128);
    if (cli_longopts(longopts, &n_longopts, sizeof longopts / sizeof *longopts, keys, n_keys, O_LIBRARY) != 0) {
        cli_say("traceconv batch: too many options");
        return -1;
    }
    tc_conv *check = tc_conv_new();
    if (!check)
        return -1;
    int opt, li = 0, rc = 0, force_progress = 0, before = optind;
    const char *formats = NULL;
    long n;
    char *end;
    opterr = 0; /* our messages (cli_option_error): escaped, and naming "traceconv batch" */
    while (rc == 0 && (opt = getopt_long(argc, argv, ":o:O:j:qhf", longopts, &li)) != -1) {
        switch (opt) {
        case 'o':
            if (cli_add_formats(&formats, optarg)) {
                cli_say("traceconv batch: -o: too long");
                rc = -1;
            }
            break;
        case 'O': b->outdir = optarg; break;
        case 'f': b->force = 1; break;
        case 'j':
            n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > MAX_WORKERS) {
                cli_say("traceconv batch: -j wants a number of workers from 1 to %d", MAX_WORKERS);
                rc = -1;
            }
            b->jobs = (int)n;
            break;
        case 'q': b->quiet = 1; break;
        case 'h': usage(); tc_conv_free(check); exit(0);
        case O_INCLUDE:
        case O_EXCLUDE:
            if ((opt == O_INCLUDE ? b->n_include : b->n_exclude) == MAX_GLOBS) {
                cli_say("traceconv batch: too many patterns");
                rc = -1;
            } else if (opt == O_INCLUDE) {
                b->include[b->n_include++] = optarg;
            } else {
                b->exclude[b->n_exclude++] = optarg;
            }
            break;
        case O_FAILFAST: b->fail_fast = 1; break;
        case O_SUMMARY: b->summary_path = optarg; break;
        case O_SHARD: { /* I/N: each a count (cli_parse_count: 0/4294967297 is no 0/1) */
            char i_part[48];
            const char *slash = strchr(optarg, '/');
            uint64_t si = 0, sn = 0;
            int ok = slash && (size_t)(slash - optarg) < sizeof i_part;
            if (ok) {
                memcpy(i_part, optarg, (size_t)(slash - optarg));
                i_part[slash - optarg] = 0;
                ok = cli_parse_count(slash + 1, 1, UINT_MAX, &sn) == 0 && cli_parse_count(i_part, 0, sn - 1, &si) == 0;
            }
            if (!ok) {
                cli_say("traceconv batch: --shard %s: expected I/N, N a whole number from 1 to %u and I from 0 "
                        "to N - 1", optarg, UINT_MAX);
                rc = -1;
            }
            b->shard_i = (unsigned)si;
            b->shard_n = (unsigned)sn;
            break;
        }
        case O_PROGRESS: force_progress = 1; break;
        case O_SKIP: b->skip_existing = 1; break;
        default:
            if (opt >= O_LIBRARY && opt < O_LIBRARY + (int)n_keys) { /* a flag's NULL value reads as true */
                rc = add_setting(b, check, keys[opt - O_LIBRARY]->name, optarg);
            } else {
                cli_option_error("traceconv batch", opt, before, argv, longopts);
                rc = -1;
            }
        }
        before = optind;
    }
    if (rc == 0 && (!formats || parse_formats(b, (char *)formats, check) != 0 || !b->n_formats)) { /* cli_add_formats's copy */
        if (!formats)
            cli_say("traceconv batch: missing -o FORMAT[,FORMAT...]");
        rc = -1;
    }
    tc_conv_free(check);
    if (rc == 0 && !b->outdir) {
        cli_say("traceconv batch: missing -O OUTDIR");
        rc = -1;
    }
    if (rc == 0 && optind >= argc) {
        cli_say("traceconv batch: expected at least one INPUT");
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

/* The INPUTs' own size, for the ETA: 0 (unknown) when one is a directory or stdin. */
static uint64_t inputs_size(char **inputs, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (!strcmp(inputs[i], "-") || stat(inputs[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

/* The options of every conversion of the run, "--thread main --colors hot" in the order given
 * (but -j's threads: the same bytes either way), as a JSON string for the summary: a run
 * again with the same options finds its members' outputs up to date. NULL: out of memory. */
static char *options_json(const batch *b)
{
    char *text = NULL, *json = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    int n = 0;
    for (size_t i = 0; i < b->n_settings; i++)
        if (strcmp(b->settings[i].key, "threads"))
            fprintf(m, "%s--%s%s%s", n++ ? " " : "", b->settings[i].key, b->settings[i].value ? " " : "",
                    b->settings[i].value ? b->settings[i].value : "");
    if (fclose(m) != 0)
        return NULL;
    cJSON *s = cJSON_CreateString(text);
    if (s)
        json = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    free(text);
    return json;
}

/* The line that ends the run (unless -q). */
static void say_totals(const batch *b, double seconds)
{
    int sig = atomic_load(&interrupted);
    const char *name = sig ? tci_signal_abbrev(sig) : NULL;
    cli_say("traceconv batch: %s%s%s%s%zu members: %zu ok (%zu up to date), %zu failed, %zu skipped; %.1f MB in, "
            "%.1f MB out, %.1fs; summary %s",
            sig ? "interrupted by " : "", name ? "SIG" : "", sig ? name ? name : "a signal" : "",
            sig ? " (the members not converted are listed as skipped): " : "", b->n_members, b->n_ok, b->n_reused,
            b->n_failed, b->n_skipped, b->bytes_done / 1e6, b->bytes_out / 1e6, seconds, b->summary_path);
}

int batch_main(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--merge-summaries"))
            return batch_merge_main(argc, argv); /* batch_summary.c */
    static batch b;
    b.max_input = 64ULL << 30;
    b.used.exact = 0; /* names that differ only in case are one name on some file systems */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    b.jobs = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (int)cpus;
    if (parse_args(&b, argc, argv) != 0) {
        cli_say("Try 'traceconv batch --help'.");
        return EXIT_USAGE;
    }
    if (make_outdir(b.outdir) != 0 ||
        (b.outdir_fd = open(b.outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(b.outdir_fd, &b.outdir_st)) {
        cli_say("traceconv batch: %s: cannot use as the output directory: %s", b.outdir, strerror(errno));
        return EXIT_USAGE;
    }
    char summary_default[PATH_MAX];
    if (!b.summary_path) {
        snprintf(summary_default, sizeof summary_default, "%s/traceconv-batch.json", b.outdir);
        b.summary_path = summary_default;
    }
    if (open_summary(&b) != 0)
        return EXIT_USAGE;
    if (!(b.options_json = options_json(&b))) {
        cli_say("traceconv batch: out of memory");
        return EXIT_USAGE;
    }
    /* a run again into OUTDIR: the members whose outputs are up to date are kept (not with
     * -f, which converts again; --skip-existing keeps them whatever the options) */
    if (b.skip_existing || !b.force)
        load_previous(b.summary_path, b.options_json);
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
    b.raw_total = inputs_size(argv + optind, argc - optind);
    b.t0 = now_seconds();
    int started = 0;
    for (int i = 0; i < b.jobs; i++) {
        b.slots[started].b = &b;
        started += pthread_create(&tids[started], NULL, worker, &b.slots[started]) == 0;
    }
    if (!started) {
        cli_say("traceconv batch: cannot start a worker thread");
        return EXIT_SOME_FAILED;
    }
    b.jobs = started;
    for (int i = optind; i < argc && !atomic_load(&b.stop); i++) {
        take_input(&b, argv[i]);
        struct stat st;
        pthread_mutex_lock(&b.lock);
        if (b.raw_total && !stat(argv[i], &st))
            b.raw_before += (uint64_t)st.st_size;
        atomic_store(&b.raw_pos, 0);
        pthread_mutex_unlock(&b.lock);
    }
    pthread_mutex_lock(&b.lock);
    b.closed = 1;
    b.scanning = 0;
    pthread_cond_broadcast(&b.can_take);
    pthread_mutex_unlock(&b.lock);
    for (int i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
        free(b.slots[i].small);
    }
    double seconds = now_seconds() - b.t0;
    draw_progress(&b, 1);
    int summary_rc = write_summary(&b, seconds);
    if (!b.quiet)
        say_totals(&b, seconds);
    atomic_store(&wound_up, 1);
    int sig = atomic_load(&interrupted);
    if (sig) { /* the summary tells what was done; now die of the signal, as the caller expects */
        signal(sig, SIG_DFL);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    }
    free(b.entries);
    fclose(b.entries_file);
    close(b.summary_dirfd);
    of_names_free(&b.used);
    free_previous();
    free(b.options_json);
    close(b.outdir_fd);
    return b.n_failed || summary_rc ? EXIT_SOME_FAILED : 0;
}
