/*
 * main.c - the traceconv command: a thin client of traceconv.h.
 *
 *   traceconv [-i FORMAT] -o FORMAT [options] INPUT [OUTPUT]
 *
 * Exit codes: 0 success, 1 conversion failed, 2 usage error. Output is
 * written to a temporary file beside OUTPUT and renamed on success, so a
 * failed or interrupted conversion leaves nothing behind.
 */
#define _GNU_SOURCE
#include "traceconv.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_CONVERT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: traceconv [-i FORMAT] -o FORMAT [options] INPUT [OUTPUT]\n"
    "       traceconv -o FORMAT [options] NAME.key NAME.data [OUTPUT]   (a legacy split trace)\n"
    "       traceconv --probe INPUT | --list-formats | --help | --version\n"
    "\n"
    "Convert an Android method trace (and other traces) to another format.\n"
    "INPUT or OUTPUT '-' means stdin/stdout; gzip input is read transparently.\n"
    "OUTPUT defaults to INPUT with the output format's extension.\n"
    "\n"
    "  -i, --input-format FORMAT  input format (default: detected from content)\n"
    "  -o, --output-format FORMAT output format: json, folded, ... (see --list-formats)\n"
    "  -f, --force                overwrite an existing OUTPUT\n"
    "      --strict               treat warnings about the input as errors\n"
    "  -q, --quiet                print nothing but errors\n"
    "      --process-name NAME    process name shown in timelines (default: input file stem)\n"
    "      --no-thread            folded: merge all threads (no thread frame)\n"
    "      --merge-threads        pprof: merge all threads (no thread labels)\n"
    "      --text                 systrace: plain ftrace text instead of HTML\n"
    "      --weight wall|cpu      folded: weigh stacks by wall or thread-CPU time (default wall)\n"
    "      --max-depth N          drop frames deeper than N (default 10000)\n"
    "      --mapping FILE         rhea: method mapping (methodMapping.txt, sampling-mapping;\n"
    "                             default: looked for beside INPUT)\n"
    "Limits (an input beyond one is refused with a clear error; K/M/G suffixes):\n"
    "      --max-input BYTES      input size after decompression (default 64G; gzip\n"
    "                             expanding more than 200:1 beyond 256M is refused)\n"
    "      --max-string BYTES     one name or metadata value (default 64K)\n"
    "      --max-threads N        threads (default 1000000)\n"
    "      --max-methods N        methods (default 50000000)\n"
    "      --max-events N         input records (default: no limit)\n"
    "      --max-json BYTES       JSON input, which is parsed in memory (default 256M)\n"
    "      --probe INPUT          print every reader's score for INPUT\n"
    "      --list-formats         list readers and writers\n"
    "  -h, --help                 this text\n"
    "  -V, --version              version\n"
    "\n"
    "Exit status: 0 success, 1 conversion failed, 2 usage error.\n";

/* ---- atomic output: the temporary file is removed on error and on signals ---- */

static volatile sig_atomic_t have_temp;
static char temp_path[PATH_MAX];

static void on_signal(int sig)
{
    if (have_temp)
        unlink(temp_path);
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

static FILE *open_temp_beside(const char *target)
{
    const char *slash = strrchr(target, '/');
    int dirlen = slash ? (int)(slash - target + 1) : 0;
    int n = snprintf(temp_path, sizeof temp_path, "%.*s.%s.tmp-XXXXXX", dirlen, target,
                     slash ? slash + 1 : target);
    if (n < 0 || (size_t)n >= sizeof temp_path)
        return NULL;
    /* no signal between creating the file and noting it, or it would stay behind */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGPIPE);
    sigprocmask(SIG_BLOCK, &block, &old);
    int fd = mkstemp(temp_path);
    have_temp = fd >= 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0)
        return NULL;
    fchmod(fd, 0666 & ~umask(umask(0)));
    return fdopen(fd, "wb");
}

static void drop_temp(void)
{
    if (have_temp) {
        unlink(temp_path);
        have_temp = 0;
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

static char *default_output(const char *input, const char *writer)
{
    const char *ext = tc_writer_extension(writer);
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
    for (int kind = TC_FIG_REPAIR; kind <= TC_FIG_WARNING; kind++) {
        int first = 1;
        for (size_t i = 0; i < n; i++) {
            if (fig[i].kind != kind || !fig[i].value)
                continue;
            fprintf(stderr, "%s %llu %s", first ? (kind == TC_FIG_REPAIR ? "; repaired:" : "; warnings:") : ",",
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

static int writer_is_binary(const char *name)
{
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (!f->is_reader && !strcmp(f->name, name))
            return f->is_binary;
    return 0;
}

typedef struct cli {
    const char *in_format, *out_format, *input, *output;
    const char *data_half; /* a legacy pair given as both halves: INPUT.key DATA.data */
    int force, quiet;
    tc_conv *conv;
} cli;

static int convert(cli *a)
{
    int to_stdout = 0;
    char *owned_out = NULL;
    const char *output = a->output;
    if (!output) {
        if (!strcmp(a->input, "-"))
            output = "-";
        else if (!(output = owned_out = default_output(a->input, a->out_format)))
            return EXIT_CONVERT;
    }
    to_stdout = !strcmp(output, "-");
    if (to_stdout && !a->force && isatty(STDOUT_FILENO) && writer_is_binary(a->out_format)) {
        fprintf(stderr, "traceconv: %s output is binary: not writing it to a terminal (redirect it, or use -f)\n",
                a->out_format);
        free(owned_out);
        return EXIT_USAGE;
    }
    struct stat st_in, st_out;
    int special = 0; /* a FIFO or device: write into it; renaming over it would replace it */
    if (!to_stdout && !stat(output, &st_out)) {
        special = !S_ISREG(st_out.st_mode);
        if (S_ISDIR(st_out.st_mode)) {
            fprintf(stderr, "traceconv: %s: is a directory\n", output);
            free(owned_out);
            return EXIT_USAGE;
        }
        if (strcmp(a->input, "-") && !stat(a->input, &st_in) && st_in.st_dev == st_out.st_dev &&
            st_in.st_ino == st_out.st_ino) {
            fprintf(stderr, "traceconv: %s: output would overwrite the input\n", output);
            free(owned_out);
            return EXIT_USAGE;
        }
        if (!a->force && S_ISREG(st_out.st_mode)) {
            fprintf(stderr, "traceconv: %s: exists; use -f to overwrite\n", output);
            free(owned_out);
            return EXIT_USAGE;
        }
    }
    int rc = a->data_half ? tc_conv_open_pair(a->conv, a->input, a->data_half)
                          : tc_conv_open(a->conv, a->input, a->in_format);
    FILE *fp = NULL;
    if (rc == TC_OK) {
        fp = to_stdout ? stdout : special ? fopen(output, "wb") : open_temp_beside(output);
        if (!fp) {
            fprintf(stderr, "traceconv: %s: cannot create the output: %s\n", output, strerror(errno));
            drop_temp();
            free(owned_out);
            return EXIT_CONVERT;
        }
        rc = tc_conv_write(a->conv, a->out_format, fp);
        end_progress();
        if (!to_stdout && fclose(fp) != 0 && rc == TC_OK) {
            fprintf(stderr, "traceconv: %s: cannot write the output: %s\n", output, strerror(errno));
            rc = TC_ERR_IO;
        }
        if (rc == TC_OK && !to_stdout && !special && rename(temp_path, output) != 0) {
            fprintf(stderr, "traceconv: %s: cannot rename the output into place: %s\n", output, strerror(errno));
            rc = TC_ERR_IO;
        } else if (rc == TC_OK) {
            have_temp = 0;
        }
    }
    if (rc != TC_OK) {
        drop_temp();
        if (tc_conv_error(a->conv)[0])
            fprintf(stderr, "traceconv: %s\n", tc_conv_error(a->conv));
        free(owned_out);
        return rc == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
    }
    if (!a->quiet)
        print_summary(a->conv, a->input, output, a->out_format);
    free(owned_out);
    return 0;
}

static int set(cli *a, const char *key, const char *value)
{
    if (tc_conv_set_option(a->conv, key, value) != TC_OK) {
        fprintf(stderr, "traceconv: %s\n", tc_conv_error(a->conv));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    enum { O_STRICT = 256, O_PROCESS, O_NOTHREAD, O_WEIGHT, O_DEPTH, O_CHUNK, O_PROBE, O_LIST, O_MERGE, O_LIMIT, O_TEXT };
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
        {"text", no_argument, 0, O_TEXT},
        {0, 0, 0, 0}};
    cli a;
    memset(&a, 0, sizeof a);
    a.conv = tc_conv_new();
    if (!a.conv)
        return EXIT_CONVERT;
    int opt, status = 0;
    int li = 0;
    while (status == 0 && (opt = getopt_long(argc, argv, "i:o:fqhV", longopts, &li)) != -1) {
        switch (opt) {
        case 'i': a.in_format = optarg; break;
        case 'o': a.out_format = optarg; break;
        case 'f': a.force = 1; break;
        case 'q': a.quiet = 1; break;
        case O_STRICT: status = set(&a, "strict", "1"); break;
        case O_PROCESS: status = set(&a, "process-name", optarg); break;
        case O_NOTHREAD: status = set(&a, "no-thread", "1"); break;
        case O_WEIGHT: status = set(&a, "weight", optarg); break;
        case O_MERGE: status = set(&a, "merge-threads", "1"); break;
        case O_TEXT: status = set(&a, "text", "1"); break;
        case O_DEPTH: status = set(&a, "max-depth", optarg); break;
        case O_CHUNK: status = set(&a, "read-chunk", optarg); break;
        case O_LIMIT: status = set(&a, longopts[li].name, optarg); break; /* the option is the library key */
        case O_PROBE: tc_conv_free(a.conv); return probe(optarg);
        case O_LIST: tc_conv_free(a.conv); return list_formats();
        case 'h': fputs(usage_text, stdout); tc_conv_free(a.conv); return 0;
        case 'V': printf("traceconv %s\n", TC_VERSION_STRING); tc_conv_free(a.conv); return 0;
        default: status = -1;
        }
    }
    int nargs = argc - optind;
    if (status == 0 && nargs >= 2 && is_pair(argv[optind], argv[optind + 1])) {
        a.data_half = argv[optind + 1]; /* traceconv -o json a.key b.data [OUTPUT] */
        memmove(&argv[optind + 1], &argv[optind + 2], (size_t)(nargs - 2) * sizeof *argv);
        nargs--;
    }
    if (status == 0 && (!a.out_format || nargs < 1 || nargs > 2)) {
        fputs(!a.out_format ? "traceconv: missing -o FORMAT\n" : "traceconv: expected INPUT [OUTPUT]\n", stderr);
        status = -1;
    }
    if (status == 0 && !tc_writer_extension(a.out_format)) {
        fprintf(stderr, "traceconv: unknown output format '%s' (see --list-formats)\n", a.out_format);
        status = -1;
    }
    if (status != 0) {
        fputs("Try 'traceconv --help'.\n", stderr);
        tc_conv_free(a.conv);
        return EXIT_USAGE;
    }
    a.input = argv[optind];
    a.output = nargs == 2 ? argv[optind + 1] : NULL;
    install_signal_cleanup();
    if (!a.quiet && isatty(STDERR_FILENO))
        tc_conv_set_progress(a.conv, show_progress, NULL);
    int rc = convert(&a);
    tc_conv_free(a.conv);
    return rc;
}
