/*
 * main.c - the traceconv command: a thin client of traceconv.h.
 *
 *   traceconv [-i FORMAT] -o FORMAT [options] INPUT [OUTPUT]
 *   traceconv [-i FORMAT] -o FORMAT [options] INPUT INPUT...   (each beside itself)
 *   traceconv [-i FORMAT] -o FORMAT,FORMAT... [options] INPUT...  (one read, an output per format)
 *
 * Exit codes: 0 success, 1 conversion failed, 2 usage error. Output is
 * written to a temporary file beside OUTPUT and renamed on success, so a
 * failed or interrupted conversion leaves nothing behind; an original trace
 * (a file a reader recognizes that traceconv did not write) is never
 * overwritten, even with -f (a glob such as *.trace must not turn one input
 * into the output of another); -f replaces traceconv's own outputs.
 *
 * Several formats (-o json,perfetto) read and normalize each input once
 * (tc_conv_write_many) and write one output per format beside it, under its
 * default name. Every output of an input is checked against the overwrite
 * rules before anything is converted: one refused output means none is
 * written. Each output has its own temporary file; one that fails while
 * converting (a full disk) is removed and the others are kept.
 */
#define _GNU_SOURCE
#include "traceconv.h"
#include "batch.h"
#include "serve.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_CONVERT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: traceconv [-i FORMAT] -o FORMAT [options] INPUT [OUTPUT]\n"
    "       traceconv [-i FORMAT] -o FORMAT [options] INPUT INPUT...\n"
    "       traceconv [-i FORMAT] -o FORMAT,FORMAT... [options] INPUT...\n"
    "       traceconv -o FORMAT [options] NAME.key NAME.data [OUTPUT]   (a legacy split trace)\n"
    "       traceconv batch -o FORMAT[,FORMAT...] -O OUTDIR [options] INPUT...  (see batch --help)\n"
    "       traceconv diff [-o text|csv|flamegraph] [options] BASE NEW [OUTPUT]  (see diff --help)\n"
    "       traceconv serve [--listen ADDR:PORT] [-j N] [--max-upload SIZE] [--store DIR] [--keep N|AGE]\n"
    "                       (an upload page and a conversion API over HTTP; see serve --help)\n"
    "       traceconv --probe INPUT | --list-formats | --help | --version\n"
    "\n"
    "Convert an Android method trace (and other traces) to another format.\n"
    "INPUT or OUTPUT '-' means stdin/stdout; gzip input is read transparently.\n"
    "OUTPUT defaults to INPUT with the output format's extension.\n"
    "Two operands are INPUT OUTPUT only when the second is '-', does not exist, is a\n"
    "FIFO or device, or ends in an extension of the output format (.json for -o json);\n"
    "otherwise every operand is an INPUT, converted beside itself (a.trace -> a.json).\n"
    "Several formats (-o json,perfetto) read each INPUT once and write one output per\n"
    "format under its default name (a.trace -> a.json and a.pftrace); they take no\n"
    "OUTPUT operand and no stdin. If any of an INPUT's outputs may not be written\n"
    "(see -f), none is.\n"
    "An original trace (not written by traceconv) is never overwritten, even with -f.\n"
    "\n"
    "  -i, --input-format FORMAT  input format (default: detected from content)\n"
    "  -o, --output-format FORMAT output format: json, folded, ... (see --list-formats);\n"
    "                             several, comma-separated: json,perfetto,pprof\n"
    "  -f, --force                overwrite an existing OUTPUT (never an original trace)\n"
    "      --strict               treat warnings about the input, and options the\n"
    "                             chosen reader or writer does not use, as errors\n"
    "  -q, --quiet                print nothing but errors\n"
    "      --process-name NAME    process name shown in timelines (default: input file stem)\n"
    "      --no-thread            folded: merge all threads (no thread frame)\n"
    "      --merge-threads        pprof, flamegraph: merge all threads (no thread labels/frames)\n"
    "      --text                 systrace: plain ftrace text instead of HTML\n"
    "      --weight wall|cpu      folded, flamegraph: weigh stacks by wall or thread-CPU time\n"
    "                             (default wall); report, dot: the clock of the order,\n"
    "                             percentages and threshold; speedscope: timelines on the\n"
    "                             wall or each thread's CPU clock\n"
    "      --title TEXT           flamegraph: the title (default \"Flame Graph\")\n"
    "      --width PX             flamegraph: image width (default 1200)\n"
    "      --minwidth PX|N%       flamegraph: omit frames narrower than PX pixels or N% of\n"
    "                             the total (default 0.1)\n"
    "      --inverted             flamegraph: icicle graph (root at the top)\n"
    "      --colors PALETTE       flamegraph: java (default), hot, mem, io, red, green, blue,\n"
    "                             yellow, purple, aqua, orange\n"
    "      --hash                 flamegraph: colours from a hash of the name\n"
    "      --sort incl|excl|calls|name  report: the order of the methods (default incl)\n"
    "      --csv                  report: CSV rows instead of the text report\n"
    "      --html                 report: a self-contained HTML page (sortable tables, flame\n"
    "                             graph); default OUTPUT INPUT-stem.report.html\n"
    "      --threshold PCT        dot: hide edges below PCT % of the total time (default 1)\n"
    "      --max-depth N          drop frames deeper than N (default 10000)\n"
    "      --mapping FILE         rhea: method mapping (methodMapping.txt, sampling-mapping;\n"
    "                             default: looked for beside INPUT)\n"
    "      --deobfuscate MAPPING  rename methods back to source names with a ProGuard/R8\n"
    "                             mapping.txt (any reader; see README \"Deobfuscation\")\n"
    "Limits (an input beyond one is refused with a clear error; K/M/G suffixes):\n"
    "      --max-input BYTES      input size after decompression (default 64G; gzip\n"
    "                             expanding more than 200:1 beyond 256M is refused)\n"
    "      --max-string BYTES     one name or metadata value (default 64K)\n"
    "      --max-threads N        threads (default 1000000)\n"
    "      --max-methods N        methods (default 50000000)\n"
    "      --max-events N         input records (default: no limit)\n"
    "      --max-json BYTES       one JSON event (default 256M)\n"
    "      --probe INPUT          print every reader's score for INPUT\n"
    "      --list-formats         list readers and writers\n"
    "  -h, --help                 this text\n"
    "  -V, --version              version\n"
    "\n"
    "Exit status: 0 success, 1 conversion failed, 2 usage error; with several\n"
    "INPUTs, 1 if any failed (the others are still converted).\n";

/* ---- atomic output: the temporary file is removed on error and on signals ---- */

#define MAX_OUTPUTS 16 /* formats in one -o list: more than there are writers */

/* one temporary file per output of the input being converted */
static volatile sig_atomic_t have_temp[MAX_OUTPUTS];
static char temp_path[MAX_OUTPUTS][PATH_MAX];
/* 0666 & ~umask, read once at start: umask() can only be read by setting it */
static mode_t output_mode = 0666;

static void read_umask(void)
{
    mode_t mask = umask(0);
    umask(mask);
    output_mode = 0666 & ~mask;
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_OUTPUTS; i++)
        if (have_temp[i])
            unlink(temp_path[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signal_cleanup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
}

static FILE *open_temp_beside(int slot, const char *target)
{
    const char *slash = strrchr(target, '/');
    int dirlen = slash ? (int)(slash - target + 1) : 0;
    int n = snprintf(temp_path[slot], sizeof temp_path[slot], "%.*s.%s.tmp-XXXXXX", dirlen, target,
                     slash ? slash + 1 : target);
    if (n < 0 || (size_t)n >= sizeof temp_path[slot]) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    /* no signal between creating the file and noting it, or it would stay behind */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGPIPE);
    sigprocmask(SIG_BLOCK, &block, &old);
    int fd = mkstemp(temp_path[slot]);
    have_temp[slot] = fd >= 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0)
        return NULL;
    /* mkstemp made it 0600; a file system that refuses fchmod leaves it so, the safe side */
    (void)fchmod(fd, output_mode);
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        int err = errno;
        close(fd);
        errno = err;
    }
    return fp;
}

static void drop_temp(int slot)
{
    if (have_temp[slot]) {
        unlink(temp_path[slot]);
        have_temp[slot] = 0;
    }
}

/* ---- progress on a terminal ---- */

static int progress_shown;

static int show_progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    if (!total)
        return 0;
    fprintf(stderr, "\rtraceconv: %3u%% of %.0f MB", (unsigned)(done * 100 / total), total / 1e6);
    progress_shown = 1;
    return 0; /* never cancels */
}

static void end_progress(void)
{
    if (progress_shown)
        fprintf(stderr, "\r\033[K");
    progress_shown = 0;
}

/* ---- commands ---- */

static int list_formats(void)
{
    const tc_format_info *f;
    printf("readers (-i):\n");
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (f->is_reader)
            printf("  %-10s %s (.%s)\n", f->name, f->description, f->extensions);
    printf("writers (-o):\n");
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (!f->is_reader)
            printf("  %-10s %s (.%s)\n", f->name, f->description, f->extensions);
    return 0;
}

static int probe(const char *path)
{
    tc_probe_score scores[64];
    char err[1024] = "";
    int n = tc_probe_file(path, scores, 64, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "traceconv: %s\n", err);
        return EXIT_CONVERT;
    }
    for (int i = 0; i < n; i++)
        printf("%-10s %3d\n", scores[i].reader, scores[i].score);
    return 0;
}

static char *default_output(const char *input, const char *ext)
{
    const char *slash = strrchr(input, '/');
    const char *base = slash ? slash + 1 : input;
    const char *dot = strrchr(base, '.');
    if (dot && strcmp(dot, ".gz") == 0) { /* in.trace.gz -> in.json */
        const char *d2 = dot;
        while (d2 > base && *--d2 != '.')
            ;
        if (*d2 == '.' && d2 != base)
            dot = d2;
    }
    size_t stem = dot && dot != base ? (size_t)(dot - input) : strlen(input);
    char *out = malloc(stem + strlen(ext) + 2);
    if (out)
        sprintf(out, "%.*s.%s", (int)stem, input, ext);
    return out;
}

/* out and writer: the outputs written and their formats, ", " and "," separated. */
static void print_summary(tc_conv *c, const char *in, const char *out, const char *writer)
{
    tc_figure fig[64];
    size_t n = tc_conv_figures(c, fig, 64);
    const char *w;
    for (size_t i = 0; (w = tc_conv_warning_at(c, i)); i++)
        fprintf(stderr, "traceconv: warning: %s\n", w);
    fprintf(stderr, "traceconv: %s -> %s (%s -> %s):", in, out, tc_conv_input_summary(c), writer);
    const char *names[] = {"threads", "methods", "records", "events", "samples"};
    for (size_t k = 0; k < 5; k++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(fig[i].name, names[k]) && (k < 4 || fig[i].value))
                fprintf(stderr, "%s %llu %s", k ? "," : "", (unsigned long long)fig[i].value, fig[i].name);
    /* --deobfuscate: what the mapping renamed (counts, so not among the warnings below);
     * nothing without a mapping, where every count is 0 */
    const char *deobf[] = {"deobf-methods", "deobf-classes", "deobf-unmapped"};
    int first_deobf = 1;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(fig[i].name, deobf[k]) && fig[i].value) {
                fprintf(stderr, "%s %llu %s", first_deobf ? "; deobfuscated:" : ",",
                        (unsigned long long)fig[i].value, fig[i].name);
                first_deobf = 0;
            }
    static const char *const heading[] = {[TC_FIG_REPAIR] = "; repaired:", [TC_FIG_WARNING] = "; warnings:",
                                          [TC_FIG_NOTE] = "; notes:"};
    for (int kind = TC_FIG_REPAIR; kind <= TC_FIG_NOTE; kind++) {
        int first = 1;
        for (size_t i = 0; i < n; i++) {
            if (fig[i].kind != kind || !fig[i].value)
                continue;
            fprintf(stderr, "%s %llu %s", first ? heading[kind] : ",",
                    (unsigned long long)fig[i].value, fig[i].name);
            first = 0;
        }
    }
    fputc('\n', stderr);
}

/* Both halves of a legacy split trace: name.key, then an existing name.data. */
static int is_pair(const char *first, const char *second)
{
    size_t a = strlen(first), b = strlen(second);
    struct stat st;
    return a > 4 && !strcmp(first + a - 4, ".key") && b > 5 && !strcmp(second + b - 5, ".data") &&
           stat(second, &st) == 0 && S_ISREG(st.st_mode);
}

static const tc_format_info *writer_info(const char *name)
{
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (!f->is_reader && !strcmp(f->name, name))
            return f;
    return NULL;
}

/* Whether path ends in ".EXT" for one of the writer's extensions (".pb.gz" for pprof). */
static int has_writer_extension(const char *path, const char *writer)
{
    const tc_format_info *f = writer_info(writer);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    for (const char *e = f ? f->extensions : ""; *e;) {
        size_t n = strcspn(e, ",");
        if (n && blen > n + 1 && base[blen - n - 1] == '.' && !strncasecmp(base + blen - n, e, n))
            return 1;
        e += n + (e[n] == ',');
    }
    return 0;
}

/* The second of two operands is the OUTPUT, not an input, when it is '-', does
 * not exist, is something to write into (a FIFO or a device: never a trace a
 * glob expanded to), or ends in the writer's extension. Anything else is a
 * second input: `traceconv -o json *.trace` must not write into b.trace. */
static int names_output(const char *path, const char *writer)
{
    struct stat st;
    if (!strcmp(path, "-") || has_writer_extension(path, writer))
        return 1;
    if (stat(path, &st) != 0)
        return errno == ENOENT;
    return S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode);
}

static int writer_is_binary(const char *name)
{
    const tc_format_info *f = writer_info(name);
    return f && f->is_binary;
}

/* An option as given, applied again to each input's tc_conv. */
typedef struct setting {
    const char *key, *value;
} setting;

/* One conversion: an input (or a legacy pair) and its output (NULL: beside the input). */
typedef struct job {
    const char *input, *data_half, *output;
} job;

typedef struct cli {
    const char *in_format;
    const char *formats[MAX_OUTPUTS]; /* -o, split at commas */
    size_t n_formats;
    int force, quiet;
    int report_html; /* --html: the report's default name ends in .report.html */
    const char *side_mapping[2]; /* diff: --base-deobfuscate, --new-deobfuscate (one input's build) */
    setting settings[64];
    size_t n_settings;
    struct stat written[64]; /* outputs this command wrote: never overwritten by a later input */
    size_t n_written;
} cli;

/* The existing file at output must not be replaced: it is the input, a trace,
 * or (without -f) any file. A message and an exit code, or 0. */
/* Did traceconv write this file? Its text outputs carry a mark near the start
 * (ir, systrace, speedscope's exporter) or in the trailing otherData object (json). */
static int written_by_traceconv(const char *path)
{
    static const char *const marks[] = {"\"generator\":\"traceconv ", "traceconv-ir ", "# traceconv ",
                                        " (traceconv)</title>",
                                        "thread,tid,method,calls,incl_wall_us,", /* report --csv: its exact header */
                                        "\"exporter\":\"traceconv@", /* speedscope */
                                        "method,status,calls_base,calls_new,"}; /* diff -o csv: its exact header */
    char buf[2][8192 + 1];
    size_t got[2] = {0, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    got[0] = fread(buf[0], 1, sizeof buf[0] - 1, f);
    if (fseeko(f, -(off_t)(sizeof buf[1] - 1), SEEK_END) == 0)
        got[1] = fread(buf[1], 1, sizeof buf[1] - 1, f);
    fclose(f);
    for (int part = 0; part < 2; part++) {
        for (size_t i = 0; i < got[part]; i++)
            if (!buf[part][i])
                buf[part][i] = ' '; /* a binary byte must not end the search */
        buf[part][got[part]] = 0;
        for (size_t m = 0; m < sizeof marks / sizeof *marks; m++)
            if (strstr(buf[part], marks[m]))
                return 1;
    }
    return 0;
}

static int refuse_existing(cli *a, const job *jb, const char *output, const struct stat *st_out)
{
    struct stat st_in;
    const char *inputs[2] = {jb->input, jb->data_half};
    for (int i = 0; i < 2; i++) {
        if (inputs[i] && strcmp(inputs[i], "-") && !stat(inputs[i], &st_in) && st_in.st_dev == st_out->st_dev &&
            st_in.st_ino == st_out->st_ino) {
            fprintf(stderr, "traceconv: %s: output would overwrite the input\n", output);
            return EXIT_USAGE;
        }
    }
    if (S_ISDIR(st_out->st_mode)) {
        fprintf(stderr, "traceconv: %s: is a directory\n", output);
        return EXIT_USAGE;
    }
    if (!S_ISREG(st_out->st_mode))
        return 0; /* a FIFO or device is written into, never replaced; reading it to probe would consume it */
    for (size_t i = 0; i < a->n_written; i++) {
        if (a->written[i].st_dev == st_out->st_dev && a->written[i].st_ino == st_out->st_ino) {
            fprintf(stderr,
                    "traceconv: %s: already written by this command (from an earlier INPUT); not overwriting it\n",
                    output);
            return EXIT_USAGE;
        }
    }
    tc_probe_score scores[64];
    char err[1024] = "";
    int n = tc_probe_file(output, scores, 64, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "traceconv: %s: exists and cannot be checked for a trace, so it is kept (%s)\n", output, err);
        return EXIT_USAGE;
    }
    int best = 0;
    for (int i = 1; i < n; i++)
        if (scores[i].score > scores[best].score)
            best = i;
    /* What detection would accept as input is a trace: an original one is never
     * replaced; one that traceconv wrote can be made again, so -f may replace it
     * (re-running a conversion is the common case). */
    if (n > 0 && scores[best].score > 0 && !written_by_traceconv(output)) {
        fprintf(stderr, "traceconv: %s: is a trace (the %s reader recognizes it); not overwriting it, even with -f\n",
                output, scores[best].reader);
        return EXIT_USAGE;
    }
    if (!a->force) {
        fprintf(stderr, "traceconv: %s: exists; use -f to overwrite\n", output);
        return EXIT_USAGE;
    }
    return 0;
}

/* One output of an input: a format and where it goes. */
typedef struct target {
    const char *format;
    const char *path;
    char *owned;  /* path, when it is the default name */
    int special;  /* a FIFO or device: written into; renaming over it would replace it */
    int to_stdout;
    FILE *fp;
} target;

/* The default output's extension: the writer's, but .report.html for report --html (never
 * systrace's .html beside it in -o systrace,report). */
static const char *output_extension(const cli *a, const char *writer)
{
    return a->report_html && !strcmp(writer, "report") ? "report.html" : tc_writer_extension(writer);
}

/* Where each format of the command goes for this job: OUTPUT, stdout for stdin, or the default name. */
static int plan_targets(const cli *a, const job *jb, target *t)
{
    for (size_t i = 0; i < a->n_formats; i++) {
        t[i] = (target){.format = a->formats[i]};
        if (jb->output)
            t[i].path = jb->output; /* one format only (plan_jobs) */
        else if (!strcmp(jb->input, "-"))
            t[i].path = "-";
        else if (!(t[i].path = t[i].owned = default_output(jb->input, output_extension(a, a->formats[i])))) {
            fprintf(stderr, "traceconv: %s: out of memory\n", jb->input);
            return EXIT_CONVERT;
        }
        t[i].to_stdout = !strcmp(t[i].path, "-");
    }
    return 0;
}

/* The overwrite rules for every output before anything is converted: one refused, none written. */
static int check_targets(cli *a, const job *jb, target *t)
{
    int rc = 0;
    for (size_t i = 0; i < a->n_formats; i++) {
        struct stat st_out;
        int r = 0;
        if (t[i].to_stdout) {
            if (!a->force && isatty(STDOUT_FILENO) && writer_is_binary(t[i].format)) {
                fprintf(stderr,
                        "traceconv: %s output is binary: not writing it to a terminal (redirect it, or use -f)\n",
                        t[i].format);
                r = EXIT_USAGE;
            }
        } else if (!stat(t[i].path, &st_out)) {
            t[i].special = !S_ISREG(st_out.st_mode);
            r = refuse_existing(a, jb, t[i].path, &st_out);
        }
        if (r && !rc)
            rc = r; /* every refusal is told, the first decides the exit status */
    }
    return rc;
}

/* Each output's stream: stdout, the FIFO or device itself, or a temporary file beside the target. */
static int open_targets(cli *a, target *t)
{
    for (size_t i = 0; i < a->n_formats; i++) {
        t[i].fp = t[i].to_stdout ? stdout : t[i].special ? fopen(t[i].path, "wb") : open_temp_beside((int)i, t[i].path);
        if (!t[i].fp) {
            fprintf(stderr, "traceconv: %s: cannot create the output: %s\n", t[i].path, strerror(errno));
            return EXIT_CONVERT;
        }
    }
    return 0;
}

/* A converted output into place: flushed, closed and renamed over its target. */
static int commit_target(target *t, int slot)
{
    FILE *fp = t->fp;
    t->fp = NULL;
    if (t->to_stdout ? fflush(stdout) != 0 : fclose(fp) != 0) {
        fprintf(stderr, "traceconv: %s: cannot write the output: %s\n", t->path, strerror(errno));
        drop_temp(slot);
        return EXIT_CONVERT;
    }
    if (!t->to_stdout && !t->special) {
        if (rename(temp_path[slot], t->path) != 0) {
            fprintf(stderr, "traceconv: %s: cannot rename the output into place: %s\n", t->path, strerror(errno));
            drop_temp(slot);
            return EXIT_CONVERT;
        }
        have_temp[slot] = 0;
    }
    return 0;
}

/* A failed or never-written output leaves nothing behind. */
static void abandon_target(target *t, int slot)
{
    if (t->fp && !t->to_stdout)
        fclose(t->fp);
    t->fp = NULL;
    drop_temp(slot);
}

/* The outputs written, for the summary line: "a.json, a.pftrace" and "json,perfetto". */
static void describe_written(const cli *a, const target *t, const int *ok, char *outs, size_t olen, char *fmts,
                             size_t flen)
{
    size_t o = 0, f = 0;
    outs[0] = fmts[0] = 0;
    for (size_t i = 0; i < a->n_formats; i++) {
        if (!ok[i])
            continue;
        if (o < olen)
            o += (size_t)snprintf(outs + o, olen - o, "%s%s", o ? ", " : "", t[i].path);
        if (f < flen)
            f += (size_t)snprintf(fmts + f, flen - f, "%s%s", f ? "," : "", t[i].format);
    }
}

/* Convert the opened input into every target at once (one read); outputs that fail are removed. */
static int write_targets(cli *a, const job *jb, tc_conv *conv, target *t)
{
    tc_output outs[MAX_OUTPUTS];
    int ok[MAX_OUTPUTS] = {0}, rc = open_targets(a, t);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < a->n_formats; i++)
        outs[i] = (tc_output){.writer = t[i].format, .fp = t[i].fp};
    tc_conv_write_many(conv, outs, a->n_formats);
    end_progress();
    size_t n_ok = 0;
    for (size_t i = 0; i < a->n_formats; i++) {
        int r = 0;
        if (outs[i].status != TC_OK) {
            abandon_target(&t[i], (int)i);
            const char *why = outs[i].error && outs[i].error[0] ? outs[i].error : tc_conv_error(conv);
            if (why[0])
                fprintf(stderr, "traceconv: %s\n", why);
            r = outs[i].status == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        } else {
            r = commit_target(&t[i], (int)i);
        }
        struct stat st_out;
        if (r == 0 && !t[i].to_stdout && !stat(t[i].path, &st_out) && a->n_written < 64)
            a->written[a->n_written++] = st_out;
        ok[i] = r == 0;
        n_ok += r == 0;
        if (r && !rc)
            rc = r;
    }
    if (n_ok && !a->quiet) {
        char names[4096], fmts[256];
        describe_written(a, t, ok, names, sizeof names, fmts, sizeof fmts);
        print_summary(conv, jb->input, names, fmts);
    }
    return rc;
}

static int convert(cli *a, const job *jb, tc_conv *conv)
{
    target t[MAX_OUTPUTS];
    memset(t, 0, sizeof t);
    int rc = plan_targets(a, jb, t);
    if (rc == 0)
        rc = check_targets(a, jb, t);
    if (rc == 0) {
        int orc = jb->data_half ? tc_conv_open_pair(conv, jb->input, jb->data_half)
                                : tc_conv_open(conv, jb->input, a->in_format);
        if (orc != TC_OK) {
            fprintf(stderr, "traceconv: %s\n", tc_conv_error(conv)[0] ? tc_conv_error(conv) : "cannot open the input");
            rc = orc == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        }
    }
    if (rc == 0)
        rc = write_targets(a, jb, conv, t);
    for (size_t i = 0; i < a->n_formats; i++) {
        abandon_target(&t[i], (int)i); /* what open_targets made before it failed */
        free(t[i].owned);
    }
    return rc;
}

/* Each input gets a tc_conv of its own with every option given. */
static int run_job(cli *a, const job *jb)
{
    tc_conv *conv = tc_conv_new();
    if (!conv) {
        fprintf(stderr, "traceconv: %s: out of memory\n", jb->input);
        return EXIT_CONVERT;
    }
    for (size_t i = 0; i < a->n_settings; i++) {
        if (tc_conv_set_option(conv, a->settings[i].key, a->settings[i].value) != TC_OK) {
            fprintf(stderr, "traceconv: %s\n", tc_conv_error(conv));
            tc_conv_free(conv);
            return EXIT_USAGE;
        }
    }
    if (!a->quiet && isatty(STDERR_FILENO))
        tc_conv_set_progress(conv, show_progress, NULL);
    int rc = convert(a, jb, conv);
    tc_conv_free(conv);
    return rc;
}

/* Check an option at once (usage errors before any conversion) and keep it for every input. */
static int set(cli *a, tc_conv *check, const char *key, const char *value)
{
    if (a->n_settings == sizeof a->settings / sizeof *a->settings) {
        fprintf(stderr, "traceconv: too many options\n");
        return -1;
    }
    if (tc_conv_set_option(check, key, value) != TC_OK) {
        fprintf(stderr, "traceconv: %s\n", tc_conv_error(check));
        return -1;
    }
    a->settings[a->n_settings++] = (setting){key, value};
    return 0;
}

/* Whether path would be the OUTPUT operand of one of the formats. */
static int names_some_output(const cli *a, const char *path)
{
    for (size_t i = 0; i < a->n_formats; i++)
        if (names_output(path, a->formats[i]))
            return 1;
    return 0;
}

/* Several formats go beside each INPUT under their default names: no OUTPUT, no stdin or stdout. */
static int several_formats_refuse(const cli *a, char **ops, int n, int pair)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(ops[i], "-")) {
            fprintf(stderr, "traceconv: several output formats (-o %s,...) cannot read stdin or write stdout ('-')\n",
                    a->formats[0]);
            return -1;
        }
    }
    if (pair ? n == 3 : n == 2 && names_some_output(a, ops[1])) {
        fprintf(stderr,
                "traceconv: %s: several output formats are written beside the INPUT under their default names; "
                "an OUTPUT operand cannot be given\n",
                ops[n - 1]);
        return -1;
    }
    return 0;
}

/* Operands -> jobs: INPUT [OUTPUT], a legacy pair, or several inputs each beside itself. 0: a usage error (told). */
static size_t plan_jobs(const cli *a, char **ops, int n, job *jobs)
{
    int pair = n >= 2 && is_pair(ops[0], ops[1]);
    if (!n || (pair && n > 3)) {
        fputs(n ? "traceconv: expected NAME.key NAME.data [OUTPUT]\n" : "traceconv: expected INPUT [OUTPUT]\n", stderr);
        return 0;
    }
    if (a->n_formats > 1 && several_formats_refuse(a, ops, n, pair))
        return 0;
    if (pair) { /* traceconv -o json a.key b.data [OUTPUT] */
        jobs[0] = (job){ops[0], ops[1], n == 3 ? ops[2] : NULL};
        return 1;
    }
    if (n == 2 && names_output(ops[1], a->formats[0])) {
        jobs[0] = (job){ops[0], NULL, ops[1]};
        return 1;
    }
    for (int i = 0; i < n; i++)
        jobs[i] = (job){ops[i], NULL, NULL};
    return (size_t)n;
}

/* -o FORMAT[,FORMAT...]: each a known writer, none twice. 0, or -1 after the message. */
static int parse_formats(cli *a, const char *arg)
{
    static char text[1024];
    if (strlen(arg) >= sizeof text) {
        fprintf(stderr, "traceconv: -o: too long\n");
        return -1;
    }
    strcpy(text, arg);
    a->n_formats = 0;
    for (char *p = text, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = 0;
        if (!*p) {
            fprintf(stderr, "traceconv: -o %s: an empty format in the list\n", arg);
            return -1;
        }
        if (!tc_writer_extension(p)) {
            fprintf(stderr, "traceconv: unknown output format '%s' (see --list-formats)\n", p);
            return -1;
        }
        for (size_t i = 0; i < a->n_formats; i++) {
            if (!strcmp(a->formats[i], p)) {
                fprintf(stderr, "traceconv: -o %s: output format '%s' is given twice\n", arg, p);
                return -1;
            }
        }
        if (a->n_formats == MAX_OUTPUTS) {
            fprintf(stderr, "traceconv: -o %s: more than %d formats\n", arg, MAX_OUTPUTS);
            return -1;
        }
        a->formats[a->n_formats++] = p;
    }
    return 0;
}

/* ---- traceconv diff BASE NEW [OUTPUT] ---- */

static const char diff_usage_text[] =
    "usage: traceconv diff [-o text|csv|flamegraph] [options] BASE NEW [OUTPUT]\n"
    "\n"
    "Compare two inputs per method: calls, inclusive and exclusive wall time (and\n"
    "thread-CPU time when both have it) in BASE and NEW, the signed change and the\n"
    "change in % of BASE, sorted by the largest change of inclusive time. BASE and\n"
    "NEW may be of different formats; methods are matched by name (README \"Diff\").\n"
    "\n"
    "  -o text        the table (default), written to stdout unless OUTPUT is given\n"
    "  -o csv         the table as CSV rows, to stdout unless OUTPUT is given\n"
    "  -o flamegraph  a differential flame graph SVG: widths from NEW, red where NEW\n"
    "                 is slower, blue where faster; OUTPUT defaults to NEW's name\n"
    "                 with .diff.svg (b.trace -> b.diff.svg)\n"
    "  -i FORMAT      input format of both inputs (default: detected for each)\n"
    "  -f, --force    overwrite an existing OUTPUT (never an input or an original trace)\n"
    "  -q, --quiet    print nothing but errors\n"
    "      --strict   warnings about either input, and unused options, are errors\n"
    "      --weight wall|cpu        the clock of the order (and of the flame graph)\n"
    "      --sort incl|excl|calls|name  order by |change| of inclusive (default) or\n"
    "                 exclusive time, of calls, or by name\n"
    "      --negate   flamegraph: swap red and blue (see README for the negated pair)\n"
    "      --title, --width, --minwidth, --inverted, --colors, --hash: as for -o flamegraph\n"
    "      --deobfuscate MAPPING    a ProGuard/R8 mapping.txt for both inputs\n"
    "      --base-deobfuscate MAPPING, --new-deobfuscate MAPPING\n"
    "                 one input's own mapping (two release builds: two mappings)\n"
    "      --max-depth N, --max-input ... and the other limits: as for a conversion\n"
    "\n"
    "Exit status: 0 success, 1 an input could not be read or the output written,\n"
    "2 usage error.\n";

/* A diff format's default output: stdout for the tables, NEW-stem.diff.svg for the graph. */
static char *diff_default_output(const char *format, const char *next)
{
    if (strcmp(format, "flamegraph") || !strcmp(next, "-"))
        return strdup("-");
    return default_output(next, "diff.svg"); /* b.trace -> b.diff.svg */
}

/* side: 0 BASE, 1 NEW. Two release builds have two mappings: --base-deobfuscate and
 * --new-deobfuscate give each input its own (after --deobfuscate, which gives both one). */
static int diff_open(cli *a, tc_conv *c, const char *path, int side)
{
    const char *label = side ? "NEW" : "BASE";
    for (size_t i = 0; i < a->n_settings; i++) {
        if (tc_conv_set_option(c, a->settings[i].key, a->settings[i].value) != TC_OK) {
            fprintf(stderr, "traceconv: %s\n", tc_conv_error(c));
            return EXIT_USAGE;
        }
    }
    if (a->side_mapping[side] && tc_conv_set_option(c, "deobfuscate", a->side_mapping[side]) != TC_OK) {
        fprintf(stderr, "traceconv: %s\n", tc_conv_error(c));
        return EXIT_USAGE;
    }
    int rc = tc_conv_open(c, path, a->in_format);
    if (rc != TC_OK) {
        fprintf(stderr, "traceconv: %s: %s\n", label, tc_conv_error(c));
        return rc == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
    }
    return 0;
}

static void diff_summary(tc_conv *base, tc_conv *next, const char *b, const char *n, const char *out,
                         const char *format)
{
    tc_conv *convs[2] = {base, next};
    static const char *const label[2] = {"BASE", "NEW"};
    for (int k = 0; k < 2; k++) {
        const char *w;
        for (size_t i = 0; (w = tc_conv_warning_at(convs[k], i)); i++)
            fprintf(stderr, "traceconv: warning: %s: %s\n", label[k], w);
    }
    fprintf(stderr, "traceconv: diff %s (%s) -> %s (%s) -> %s (%s)\n", b, tc_conv_input_summary(base), n,
            tc_conv_input_summary(next), strcmp(out, "-") ? out : "stdout", format);
}

static int run_diff(cli *a, const char *format, char **ops, int n)
{
    if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "flamegraph")) {
        fprintf(stderr, "traceconv: diff: unknown output format '%s' (text, csv or flamegraph)\nTry 'traceconv diff --help'.\n", format);
        return EXIT_USAGE;
    }
    if (n < 2 || n > 3) {
        fputs("traceconv: diff: expected BASE NEW [OUTPUT]\nTry 'traceconv diff --help'.\n", stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(ops[0], "-") && !strcmp(ops[1], "-")) {
        fputs("traceconv: diff: BASE and NEW cannot both be stdin\n", stderr);
        return EXIT_USAGE;
    }
    job jb = {ops[0], ops[1], NULL}; /* both inputs: the output must be neither */
    target t = {.format = format};
    t.path = t.owned = n == 3 ? strdup(ops[2]) : diff_default_output(format, ops[1]);
    if (!t.path) {
        fprintf(stderr, "traceconv: out of memory\n");
        return EXIT_CONVERT;
    }
    t.to_stdout = !strcmp(t.path, "-");
    struct stat st_out;
    int rc = 0;
    if (!t.to_stdout && !stat(t.path, &st_out)) {
        t.special = !S_ISREG(st_out.st_mode);
        rc = refuse_existing(a, &jb, t.path, &st_out);
    }
    tc_conv *base = rc ? NULL : tc_conv_new(), *next = rc ? NULL : tc_conv_new();
    if (!rc && (!base || !next)) {
        fprintf(stderr, "traceconv: out of memory\n");
        rc = EXIT_CONVERT;
    }
    if (!rc)
        rc = diff_open(a, base, ops[0], 0);
    if (!rc)
        rc = diff_open(a, next, ops[1], 1);
    if (!rc && !(t.fp = t.to_stdout ? stdout : t.special ? fopen(t.path, "wb") : open_temp_beside(0, t.path))) {
        fprintf(stderr, "traceconv: %s: cannot create the output: %s\n", t.path, strerror(errno));
        rc = EXIT_CONVERT;
    }
    if (!rc) {
        int st = tc_diff_write(base, next, format, t.fp);
        if (st != TC_OK) {
            fprintf(stderr, "traceconv: %s\n", tc_conv_error(next));
            rc = st == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        } else {
            rc = commit_target(&t, 0);
        }
        if (!rc && !a->quiet)
            diff_summary(base, next, ops[0], ops[1], t.path, format);
    }
    abandon_target(&t, 0);
    free(t.owned);
    tc_conv_free(base);
    tc_conv_free(next);
    return rc;
}

int main(int argc, char **argv)
{
    int diff_mode = argc > 1 && !strcmp(argv[1], "diff");
    if (diff_mode) { /* the same options as a conversion, read for both inputs */
        argc--;
        argv++;
    }
    if (argc > 1 && !strcmp(argv[1], "batch"))
        return batch_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "serve"))
        return serve_main(argc - 1, argv + 1);
    enum { O_STRICT = 256, O_PROCESS, O_NOTHREAD, O_WEIGHT, O_DEPTH, O_CHUNK, O_PROBE, O_LIST, O_MERGE, O_LIMIT, O_TEXT,
           O_FLAG, O_HTML, O_BASE_DEOBF, O_NEW_DEOBF };
    static const struct option longopts[] = {
        {"input-format", required_argument, 0, 'i'}, {"output-format", required_argument, 0, 'o'},
        {"force", no_argument, 0, 'f'},              {"quiet", no_argument, 0, 'q'},
        {"strict", no_argument, 0, O_STRICT},        {"process-name", required_argument, 0, O_PROCESS},
        {"no-thread", no_argument, 0, O_NOTHREAD},   {"weight", required_argument, 0, O_WEIGHT},
        {"max-depth", required_argument, 0, O_DEPTH}, {"read-chunk", required_argument, 0, O_CHUNK},
        {"max-input", required_argument, 0, O_LIMIT}, {"max-string", required_argument, 0, O_LIMIT},
        {"max-threads", required_argument, 0, O_LIMIT}, {"max-methods", required_argument, 0, O_LIMIT},
        {"max-events", required_argument, 0, O_LIMIT}, {"max-json", required_argument, 0, O_LIMIT},
        {"probe", required_argument, 0, O_PROBE},    {"list-formats", no_argument, 0, O_LIST},
        {"help", no_argument, 0, 'h'},               {"version", no_argument, 0, 'V'},
        {"merge-threads", no_argument, 0, O_MERGE},  {"mapping", required_argument, 0, O_LIMIT},
        {"text", no_argument, 0, O_TEXT},           {"deobfuscate", required_argument, 0, O_LIMIT},
        {"title", required_argument, 0, O_LIMIT},     {"width", required_argument, 0, O_LIMIT},
        {"minwidth", required_argument, 0, O_LIMIT},  {"colors", required_argument, 0, O_LIMIT},
        {"inverted", no_argument, 0, O_FLAG},         {"hash", no_argument, 0, O_FLAG},
        {"sort", required_argument, 0, O_LIMIT},    {"threshold", required_argument, 0, O_LIMIT},
        {"csv", no_argument, 0, O_LIMIT}, /* a flag: its NULL value reads as true */
        {"html", no_argument, 0, O_HTML},
        {"negate", no_argument, 0, O_FLAG},
        {"base-deobfuscate", required_argument, 0, O_BASE_DEOBF},
        {"new-deobfuscate", required_argument, 0, O_NEW_DEOBF},
        {0, 0, 0, 0}};
    static cli a;
    read_umask();
    tc_conv *check = tc_conv_new(); /* options are validated here, then applied to each input's own */
    if (!check)
        return EXIT_CONVERT;
    int opt, status = 0;
    int li = 0;
    const char *out_list = NULL;
    while (status == 0 && (opt = getopt_long(argc, argv, "i:o:fqhV", longopts, &li)) != -1) {
        switch (opt) {
        case 'i': a.in_format = optarg; break;
        case 'o': out_list = optarg; break;
        case 'f': a.force = 1; break;
        case 'q': a.quiet = 1; break;
        case O_STRICT: status = set(&a, check, "strict", "1"); break;
        case O_PROCESS: status = set(&a, check, "process-name", optarg); break;
        case O_NOTHREAD: status = set(&a, check, "no-thread", "1"); break;
        case O_WEIGHT: status = set(&a, check, "weight", optarg); break;
        case O_MERGE: status = set(&a, check, "merge-threads", "1"); break;
        case O_TEXT: status = set(&a, check, "text", "1"); break;
        case O_DEPTH: status = set(&a, check, "max-depth", optarg); break;
        case O_CHUNK: status = set(&a, check, "read-chunk", optarg); break;
        case O_LIMIT: status = set(&a, check, longopts[li].name, optarg); break; /* the option is the library key */
        case O_FLAG: status = set(&a, check, longopts[li].name, "1"); break;
        case O_HTML: status = set(&a, check, "html", "1"); a.report_html = 1; break;
        case O_BASE_DEOBF:
        case O_NEW_DEOBF:
            if (!diff_mode) {
                fprintf(stderr, "traceconv: --%s is an option of traceconv diff\n", longopts[li].name);
                status = -1;
            } else {
                a.side_mapping[opt == O_NEW_DEOBF] = optarg;
            }
            break;
        case O_PROBE: tc_conv_free(check); return probe(optarg);
        case O_LIST: tc_conv_free(check); return list_formats();
        case 'h': fputs(diff_mode ? diff_usage_text : usage_text, stdout); tc_conv_free(check); return 0;
        case 'V': printf("traceconv %s\n", TC_VERSION_STRING); tc_conv_free(check); return 0;
        default: status = -1;
        }
    }
    tc_conv_free(check);
    int nargs = argc - optind;
    if (diff_mode) {
        if (status != 0) {
            fputs("Try 'traceconv diff --help'.\n", stderr);
            return EXIT_USAGE;
        }
        install_signal_cleanup();
        return run_diff(&a, out_list ? out_list : "text", argv + optind, nargs);
    }
    job *jobs = nargs > 0 ? calloc((size_t)nargs, sizeof *jobs) : NULL;
    size_t n_jobs = 0;
    if (status == 0 && !out_list) {
        fputs("traceconv: missing -o FORMAT\n", stderr);
        status = -1;
    } else if (status == 0 && parse_formats(&a, out_list) != 0) {
        status = -1;
    } else if (status == 0 && nargs > 0 && !jobs) {
        fputs("traceconv: out of memory\n", stderr);
        return EXIT_CONVERT;
    } else if (status == 0 && !(n_jobs = plan_jobs(&a, argv + optind, nargs, jobs))) {
        status = -1;
    }
    if (status != 0) {
        fputs("Try 'traceconv --help'.\n", stderr);
        free(jobs);
        return EXIT_USAGE;
    }
    install_signal_cleanup();
    int rc = 0, failed = 0;
    for (size_t i = 0; i < n_jobs; i++) {
        rc = run_job(&a, &jobs[i]);
        failed += rc != 0;
    }
    free(jobs);
    if (n_jobs == 1)
        return rc;
    return failed ? EXIT_CONVERT : 0;
}
