/*
 * main.c - the traceconv command: a thin client of traceconv.h.
 *
 *   traceconv [-i FORMAT] -o FORMAT [options] INPUT [OUTPUT]
 *   traceconv [-i FORMAT] -o FORMAT [options] INPUT INPUT...   (each beside itself)
 *   traceconv [-i FORMAT] -o FORMAT,FORMAT... [options] INPUT...  (one read, an output per format)
 *
 * Exit codes: 0 success, 1 conversion failed, 2 usage error. Output files, their
 * default names and the overwrite rules are outfile.c's (the same for batch): output is
 * written to a temporary file beside OUTPUT and renamed on success, so a failed or
 * interrupted conversion leaves nothing behind; an original trace (a file a reader
 * recognizes that traceconv did not write) is never overwritten, even with -f (a glob
 * such as *.trace must not turn one input into the output of another); -f replaces
 * traceconv's own outputs.
 *
 * Several formats (-o json,perfetto) read and normalize each input once
 * (tc_conv_write_many) and write one output per format beside it, under its
 * default name. Every output of an input is checked against the overwrite
 * rules before anything is converted: one refused output means none is
 * written. Each output has its own temporary file; one that fails while
 * converting (a full disk) is removed and the others are kept.
 *
 * Every message goes through cli_say: names in it are escaped for the terminal.
 */
#include "traceconv.h"
#include "cli_util.h"
#include "outfile.h"
#include "../util/tc_compat.h" /* compiled in (CMakeLists.txt) */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_CONVERT = 1, EXIT_USAGE = 2 };

/* The optional parts (CMakeLists.txt, TC_WITH_LIBARCHIVE and TC_WITH_MICROHTTPD): each built
 * when its library was found. --help and --version say which are; `traceconv serve` says it
 * was not built. */
#if TC_WITH_SERVE
#define SERVE_BUILT ""
#else
#define SERVE_BUILT " (not in this build:\n                  built without libmicrohttpd)"
#endif
#define NO_SERVE "traceconv serve: not built: this traceconv was built without libmicrohttpd (install it, then configure and build again)"

static const char usage_head[] =
    "usage: traceconv -o FORMAT[,FORMAT...] [options] INPUT... | INPUT OUTPUT\n"
    "       traceconv merge|diff|batch|serve ...   (see traceconv SUBCOMMAND --help)\n"
    "\n"
    "Convert an Android method trace (and other traces) to another format.\n"
    "\n"
    "Examples:\n"
    "  traceconv -o perfetto app.trace        app.pftrace, for ui.perfetto.dev\n"
    "  traceconv -o html app.trace            app.report.html: the profile report, flame graphs\n"
    "  traceconv -o svg --thread main app.trace\n"
    "                                         app.svg: the main thread's flame graph\n"
    "  traceconv -o report --thread main --since 1.2s --until 1.5s app.trace -\n"
    "                                         a window of the main thread, as text on stdout\n"
    "  traceconv -o json -o pprof app.trace   app.json and app.pb.gz from one read\n"
    "  traceconv merge app.trace atrace.txt   the method trace on the atrace's timeline:\n"
    "                                         app.merged.pftrace\n"
    "  traceconv diff before.trace after.trace\n"
    "                                         the change per method\n"
    "  traceconv batch -o json -O out/ traces.zip\n"
    "\n"
    "  -i, --input-format FORMAT  input format (default: detected from content)\n"
    "  -o, --output-format FORMAT output format: json, perfetto, flamegraph (svg), report,\n"
    "                             report-html (html), ... (--list-formats shows every name\n"
    "                             and its other names; any case); several: json,perfetto or\n"
    "                             -o json -o perfetto\n"
    "  -f, --force                overwrite an existing OUTPUT that traceconv did not write\n"
    "                             (its own outputs are replaced without it; never an\n"
    "                             original trace; a symbolic link is replaced itself)\n"
    "  -q, --quiet                print nothing but errors\n"
    "  -j, --jobs N, --threads N  threads for each INPUT: 2 reads on one and writes on\n"
    "                             the other, the same bytes as 1 (default: 2 when the\n"
    "                             machine has 2 CPUs or more, else 1; 1 for a file under\n"
    "                             4 MiB)\n"
    "      --probe INPUT          print every reader's score for INPUT\n"
    "      --list-formats         list readers and writers (with --json: also their options\n"
    "                             and output variants, as JSON)\n"
    "  -h, --help                 this text\n"
    "  -V, --version              version\n";

static const char usage_tail[] =
    "\n"
    "Operands:\n"
    "  traceconv [-i FORMAT] -o FORMAT [options] INPUT [OUTPUT]\n"
    "  traceconv [-i FORMAT] -o FORMAT [options] INPUT INPUT...\n"
    "  traceconv [-i FORMAT] -o FORMAT,FORMAT... [options] INPUT...\n"
    "  traceconv -o FORMAT [options] NAME.key NAME.data [OUTPUT]   (a legacy split trace)\n"
    "  traceconv --probe INPUT | --list-formats | --help | --version\n"
    "INPUT or OUTPUT '-' means stdin/stdout; gzip input is read transparently.\n"
    "OUTPUT defaults to INPUT with the output format's extension.\n"
    "Two operands are INPUT OUTPUT only when the second is '-', does not exist, is a\n"
    "FIFO or device, or ends in an extension of the output format (.json for -o json),\n"
    "or, with -f, is an existing file that is not an input (no reader recognizes it, and\n"
    "its extension is neither the first operand's nor an input format's); otherwise every\n"
    "operand is an INPUT, converted beside itself (a.trace -> a.json). A default name\n"
    "never names the INPUT: cap.txt -> cap.report.txt for -o report.\n"
    "Several formats (-o json,perfetto) read each INPUT once and write one output per\n"
    "format under its default name (a.trace -> a.json and a.pftrace); they take no\n"
    "OUTPUT operand and no stdin. If any of an INPUT's outputs may not be written\n"
    "(see -f), none is.\n"
    "An original trace (not written by traceconv) is never overwritten, even with -f.\n"
    "\n"
    "Subcommands:\n"
    "  traceconv merge [-o FORMAT[,FORMAT...]] [--offset TIME] [options] TRACE SYSTRACE [OUTPUT]\n"
    "                  a method trace on the system trace's timeline\n"
    "  traceconv diff [-o text|csv|flamegraph] [options] BASE NEW [OUTPUT]\n"
    "  traceconv batch -o FORMAT[,FORMAT...] -O OUTDIR [options] INPUT...\n"
    "  traceconv serve [--listen ADDR:PORT] [-j N] [--max-upload SIZE] [--store DIR] [--keep N|AGE]\n"
    "                  an upload page and a conversion API over HTTP" SERVE_BUILT "\n"
    "\n"
    "Exit status: 0 success, 1 conversion failed, 2 usage error; with several\n"
    "INPUTs, 1 if any failed (the others are still converted).\n";

/* ---- atomic output: the temporary file is removed on error and on signals ---- */

#define MAX_OUTPUTS 16 /* formats in one -o list: more than there are writers */

/* ---- progress on a terminal ---- */

static int progress_shown;
static unsigned progress_pct; /* the figure on the line (the library's never goes back) */

/* One figure for the whole conversion, redrawn when it changes (the library asks this callback
 * thousands of times while the outputs are written, to let it cancel). */
static int show_progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    if (!total)
        return 0;
    unsigned pct = (unsigned)(done >= total ? 100 : done * 100 / total);
    if (progress_shown && pct == progress_pct)
        return 0;
    cli_progress_line("traceconv: %3u%% of %.0f MB", pct, total / 1e6);
    progress_shown = 1;
    progress_pct = pct;
    return 0; /* never cancels */
}

static void end_progress(void)
{
    if (progress_shown)
        cli_progress_clear();
    progress_shown = 0;
    progress_pct = 0;
}

/* ---- commands ---- */

/* " [svg, flame]": the other names of a format or variant, as --list-formats shows them. */
static void print_aliases(const char *aliases)
{
    if (!aliases)
        return;
    printf(" [");
    for (const char *a = aliases; *a; a++)
        *a == ',' ? fputs(", ", stdout) : putchar(*a);
    printf("]");
}

/* --list-formats: one line per format; a writer's variants (-o report-html) on its line. */
static int list_formats(int json)
{
    if (json) {
        cli_formats_json(stdout, NULL);
        return 0;
    }
    const tc_format_info *f;
    printf("readers (-i NAME, or another name in [...]):\n");
    for (size_t i = 0; (f = tc_format_at(i)); i++) {
        if (!f->is_reader)
            continue;
        printf("  %-10s %s (.%s)", f->name, f->description, f->extensions);
        print_aliases(f->aliases);
        printf("\n");
    }
    printf("writers (-o NAME, or another name in [...]):\n");
    for (size_t i = 0; (f = tc_format_at(i)); i++) {
        if (f->is_reader)
            continue;
        const tc_variant_info *v = tc_variant_at(f, 0);
        printf("  %-10s %s (.%s)", f->name, f->description, f->extensions);
        print_aliases(v->aliases);
        for (size_t k = 1; (v = tc_variant_at(f, k)); k++) {
            printf("%s%s (.%s)", k == 1 ? "; also -o " : ", ", v->name, v->extension);
            print_aliases(v->aliases);
        }
        printf("\n");
    }
    return 0; /* the diff's formats: traceconv diff --help, and --json */
}

static int probe(const char *path)
{
    tc_probe_score scores[64];
    char err[1024] = "";
    int n = tc_probe_file(path, scores, 64, err, sizeof err);
    if (n < 0) {
        cli_say("traceconv: %s", err);
        return EXIT_CONVERT;
    }
    for (int i = 0; i < n; i++)
        printf("%-10s %3d\n", scores[i].reader, scores[i].score);
    return 0;
}

/* out and writer: the outputs written and their formats, ", " and "," separated. The
 * line is built whole, then said (escaped) at once. */
static void print_summary(tc_conv *c, const char *in, const char *out, const char *writer)
{
    tc_figure fig[64];
    size_t n = tc_conv_figures(c, fig, 64);
    const char *w;
    for (size_t i = 0; (w = tc_conv_warning_at(c, i)); i++)
        cli_say("traceconv: warning: %s", w);
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    if (!m)
        return;
    fprintf(m, "traceconv: %s -> %s (%s -> %s):", in, out, tc_conv_input_summary(c), writer);
    const char *names[] = {"threads", "methods", "records", "events", "samples"};
    for (size_t k = 0; k < 5; k++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(fig[i].name, names[k]) && (k < 4 || fig[i].value))
                fprintf(m, "%s %llu %s", k ? "," : "", (unsigned long long)fig[i].value, fig[i].name);
    /* --deobfuscate: what the mapping renamed (counts, so not among the warnings below);
     * nothing without a mapping, where every count is 0 */
    const char *deobf[] = {"deobf-methods", "deobf-classes", "deobf-unmapped"};
    int first_deobf = 1;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(fig[i].name, deobf[k]) && fig[i].value) {
                fprintf(m, "%s %llu %s", first_deobf ? "; deobfuscated:" : ",", (unsigned long long)fig[i].value,
                        fig[i].name);
                first_deobf = 0;
            }
    static const char *const heading[] = {[TC_FIG_REPAIR] = "; repaired:", [TC_FIG_WARNING] = "; warnings:",
                                          [TC_FIG_NOTE] = "; notes:"};
    for (int kind = TC_FIG_REPAIR; kind <= TC_FIG_NOTE; kind++) {
        int first = 1;
        for (size_t i = 0; i < n; i++) {
            if (fig[i].kind != kind || !fig[i].value)
                continue;
            fprintf(m, "%s %llu %s", first ? heading[kind] : ",", (unsigned long long)fig[i].value, fig[i].name);
            first = 0;
        }
    }
    char left[1024];
    cli_not_converted_text(c, left, sizeof left);
    if (left[0])
        fprintf(m, "; not converted: %s", left);
    if (tc_conv_selection_text(c, left, sizeof left)) /* what the outputs were made of, as they record it */
        fprintf(m, "; selection: %s", left);
    if ((w = tc_conv_app(c))) /* which package the palette calls the app, and the evidence */
        fprintf(m, "; app: %s", w);
    for (size_t i = 0; (w = tc_conv_hint_at(c, i)); i++) /* advice, not a fact of the input: last */
        fprintf(m, "; hint: %s", w);
    if (fclose(m) == 0)
        cli_say("%s", line);
    free(line);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && !strcmp(s + n - k, tail);
}

/* Both halves of a legacy split trace, in either order (the library reads either order
 * too): 1 for name.key then an existing name.data, 2 for name.data then an existing
 * name.key, 0 when the operands are not such a pair. */
static int is_pair(const char *first, const char *second)
{
    struct stat st;
    if (ends_with(first, ".key") && ends_with(second, ".data"))
        return stat(second, &st) == 0 && S_ISREG(st.st_mode) ? 1 : 0;
    if (ends_with(first, ".data") && ends_with(second, ".key"))
        return stat(second, &st) == 0 && S_ISREG(st.st_mode) && stat(first, &st) == 0 && S_ISREG(st.st_mode) ? 2 : 0;
    return 0;
}

static const tc_format_info *format_info(const char *name, int reader)
{
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (!f->is_reader == !reader && !strcmp(f->name, name))
            return f;
    return NULL;
}

/* Whether the last component of path ends in ".EXT" for one of the comma-separated exts. */
static int ends_in_one_of(const char *path, const char *exts)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    for (const char *e = exts; *e;) {
        size_t n = strcspn(e, ",");
        if (n && blen > n + 1 && base[blen - n - 1] == '.' && !strncasecmp(base + blen - n, e, n))
            return 1;
        e += n + (e[n] == ',');
    }
    return 0;
}

/* Whether path ends in ".EXT" for one of the writer's extensions (".pb.gz" for pprof), or
 * the variant's (".systrace.txt" for -o systrace-text). */
static int has_writer_extension(const char *path, const char *writer)
{
    const tc_variant_info *v = tc_output_variant(NULL, writer);
    const tc_format_info *f = v ? format_info(v->format, 0) : NULL;
    return f && (ends_in_one_of(path, f->extensions) || ends_in_one_of(path, v->extension));
}

/* An existing file that -f may take as the OUTPUT operand: nothing says it is an input.
 * A reader recognizes it, or its extension is the first operand's (a glob: *.trace with
 * a damaged b.trace), a compressed input's or any reader's: then it is an input. */
static int plainly_not_an_input(const char *path, const char *first)
{
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (f->is_reader && ends_in_one_of(path, f->extensions))
            return 0;
    if (ends_in_one_of(path, "gz,key,data"))
        return 0;
    size_t stem = of_stem_len(first);
    const char *ext = first[stem] == '.' ? first + stem + 1 : NULL;
    if (ext && !strchr(first + stem, '/') && ends_in_one_of(path, ext))
        return 0;
    tc_probe_score scores[64];
    char err[1024];
    int n = tc_probe_file(path, scores, 64, err, sizeof err);
    for (int i = 0; i < n; i++)
        if (scores[i].score > 0)
            return 0;
    return n >= 0;
}

/* OUTPUT "-", or a name of the command's own standard output (/dev/stdout, /dev/fd/1 or the
 * file stdout is redirected to): written to stdout, as it is. Replacing the name instead
 * would replace a link in /dev, or a file the shell holds open. */
static int is_stdout(const char *path)
{
    struct stat a, b;
    return !strcmp(path, "-") || (stat(path, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
                                  a.st_ino == b.st_ino && !S_ISDIR(a.st_mode));
}

/* The second of two operands is the OUTPUT, not an input, when it is '-' (or names
 * stdout), does not exist, is something to write into (a FIFO or a device: never a trace a
 * glob expanded to), or ends in the writer's extension; with -f, also an existing
 * file that is plainly not an input (the user said "overwrite it"). Anything else is a
 * second input: `traceconv -o json *.trace` must not write into b.trace. */
static int names_output(const char *path, const char *writer, int force, const char *first)
{
    struct stat st;
    if (is_stdout(path) || has_writer_extension(path, writer))
        return 1;
    if (stat(path, &st) != 0)
        return errno == ENOENT;
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
        return 1;
    return force && S_ISREG(st.st_mode) && plainly_not_an_input(path, first);
}

static int writer_is_binary(const char *name)
{
    const tc_variant_info *v = tc_output_variant(NULL, name);
    return v && v->is_binary;
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
    const char *formats[MAX_OUTPUTS]; /* -o, split at commas, the registry's names (a writer or a variant) */
    const tc_variant_info *variants[MAX_OUTPUTS]; /* what each writes with the options (report + --html: report-html) */
    size_t n_formats;
    int force, quiet;
    int threads_given; /* -j, --jobs or --threads: else each conversion gets default_threads() */
    const char *side_mapping[2]; /* diff: --base-deobfuscate, --new-deobfuscate (one input's build) */
    setting settings[64];
    size_t n_settings;
    of_names written; /* outputs this command wrote (directory and name): never overwritten by a later input */
} cli;

/* One output of an input: a format and where it goes. */
typedef struct target {
    const char *format;
    const tc_variant_info *variant; /* what it writes: its own earlier output is replaced without -f */
    const char *path;
    char *owned;      /* path, when it is the default name */
    int to_stdout;
    int dirfd;        /* the directory of path, -1 until checked */
    const char *leaf; /* path's name in it */
    int how;          /* of_check's answer */
    of_file file;
    FILE *fp;         /* stdout or file.fp */
} target;

/* The key of an output in the command's registry: its directory (device and inode) and name. */
static char *written_key(const target *t)
{
    struct stat st;
    char *key = NULL;
    if (fstat(t->dirfd, &st) != 0 || tci_asprintf(&key, "%llu:%llu/%s", (unsigned long long)st.st_dev,
                                              (unsigned long long)st.st_ino, t->leaf) < 0)
        return NULL;
    return key;
}

static void note_written(cli *a, const target *t)
{
    char *key = written_key(t);
    if (key)
        of_names_take(&a->written, key);
    free(key);
}

/* The inputs of the job, as files, for the rule "the output is never an input". */
static size_t job_inputs(const job *jb, struct stat *st)
{
    const char *inputs[2] = {jb->input, jb->data_half};
    size_t n = 0;
    for (int i = 0; i < 2; i++)
        if (inputs[i] && strcmp(inputs[i], "-") && !stat(inputs[i], &st[n]))
            n++;
    return n;
}

/* The overwrite rules (outfile.c) for one output path, and the command's own outputs.
 * 0, or an exit status after the message. */
static int check_target(cli *a, const job *jb, target *t)
{
    t->dirfd = of_open_dir(t->path, &t->leaf);
    if (t->dirfd < 0) {
        cli_say("traceconv: %s: cannot create the output: %s", t->path, strerror(errno));
        return EXIT_CONVERT;
    }
    if (!*t->leaf) { /* "dir/" */
        cli_say("traceconv: %s: is a directory", t->path);
        return EXIT_USAGE;
    }
    char *key = written_key(t);
    int again = key && of_names_has(&a->written, key);
    free(key);
    if (again) {
        cli_say("traceconv: %s: already written by this command (from an earlier INPUT); not overwriting it", t->path);
        return EXIT_USAGE;
    }
    struct stat inputs[2];
    of_rules rules = {.force = a->force, .allow_special = 1, .inputs = inputs, .n_inputs = job_inputs(jb, inputs),
                      .variant = t->variant ? t->variant->name : NULL, .mark = t->variant ? t->variant->mark : NULL};
    char why[1200];
    t->how = of_check(t->dirfd, t->leaf, t->path, &rules, why, sizeof why);
    if (t->how == OF_REFUSED) {
        cli_say("traceconv: %s: %s", t->path, why);
        return EXIT_USAGE;
    }
    return 0;
}

/* Where each format of the command goes for this job: OUTPUT, stdout for stdin, or the
 * default name, which never names the input. */
static int plan_targets(const cli *a, const job *jb, target *t)
{
    for (size_t i = 0; i < a->n_formats; i++) {
        t[i] = (target){.format = a->formats[i], .variant = a->variants[i], .dirfd = -1};
        if (jb->output)
            t[i].path = jb->output; /* one format only (plan_jobs) */
        else if (!strcmp(jb->input, "-"))
            t[i].path = "-";
        else if (!(t[i].path = t[i].owned = of_output_name(jb->input, of_stem_len(jb->input), jb->input,
                                                            a->variants[i]->format, a->variants[i]->extension))) {
            cli_say("traceconv: %s: out of memory", jb->input);
            return EXIT_CONVERT;
        }
        t[i].to_stdout = is_stdout(t[i].path);
    }
    return 0;
}

/* The overwrite rules for every output before anything is converted: one refused, none written. */
static int check_targets(cli *a, const job *jb, target *t)
{
    int rc = 0;
    for (size_t i = 0; i < a->n_formats; i++) {
        int r = 0;
        if (!t[i].to_stdout)
            r = check_target(a, jb, &t[i]);
        else if (!a->force && isatty(STDOUT_FILENO) && writer_is_binary(t[i].format)) {
            cli_say("traceconv: %s output is binary: not writing it to a terminal (redirect it, or use -f)",
                    t[i].format);
            r = EXIT_USAGE;
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
        if (t[i].to_stdout) {
            t[i].fp = stdout;
            continue;
        }
        if (of_begin_output(&t[i].file, t[i].dirfd, t[i].leaf, t[i].how, t[i].variant->name) != 0) {
            cli_say("traceconv: %s: cannot create the output: %s", t[i].path, of_strerror(errno));
            return EXIT_CONVERT;
        }
        t[i].fp = t[i].file.fp;
    }
    return 0;
}

/* A converted output into place: flushed, closed and renamed over its target. */
static int commit_target(target *t)
{
    t->fp = NULL;
    int rc = t->to_stdout ? fflush(stdout) | ferror(stdout) : of_commit(&t->file);
    if (rc != 0) {
        cli_say("traceconv: %s: cannot write the output: %s", t->path, of_strerror(errno));
        return EXIT_CONVERT;
    }
    return 0;
}

/* A failed or never-written output leaves nothing behind. */
static void abandon_target(target *t)
{
    if (!t->to_stdout)
        of_abandon(&t->file);
    t->fp = NULL;
}

static void release_target(target *t)
{
    abandon_target(t); /* what open_targets made before it failed */
    if (t->dirfd >= 0)
        close(t->dirfd);
    t->dirfd = -1;
    free(t->owned);
    t->owned = NULL;
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
            abandon_target(&t[i]);
            const char *why = outs[i].error && outs[i].error[0] ? outs[i].error : tc_conv_error(conv);
            if (why[0])
                cli_say("traceconv: %s", why);
            r = outs[i].status == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        } else {
            r = commit_target(&t[i]);
        }
        if (r == 0 && !t[i].to_stdout)
            note_written(a, &t[i]);
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
    for (size_t i = 0; i < MAX_OUTPUTS; i++)
        t[i].dirfd = -1;
    int rc = plan_targets(a, jb, t);
    if (rc == 0)
        rc = check_targets(a, jb, t);
    if (rc == 0) {
        int orc = jb->data_half ? tc_conv_open_pair(conv, jb->input, jb->data_half)
                                : tc_conv_open(conv, jb->input, a->in_format);
        if (orc != TC_OK) {
            cli_say("traceconv: %s", tc_conv_error(conv)[0] ? tc_conv_error(conv) : "cannot open the input");
            rc = orc == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        }
    }
    if (rc == 0)
        rc = write_targets(a, jb, conv, t);
    for (size_t i = 0; i < a->n_formats; i++)
        release_target(&t[i]);
    return rc;
}

/* One file on both cores where there are two (the library's default is one thread, so
 * that embedders are unchanged): the reading and the writing of a conversion overlap.
 * Not for a file under 4 MiB: starting the threads and meeting at each batch cost about
 * 3.5 ms a conversion, 40% more CPU for a small trace (200 conversions of a 64 KB trace:
 * 2.33 s against 1.64 s), more than the overlap gives back. Streams: two threads. */
#define THREADS_FROM_BYTES ((off_t)4 << 20)
static const char *default_threads(const char *input)
{
    struct stat st;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return "1";
    if (input && strcmp(input, "-") && stat(input, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < THREADS_FROM_BYTES)
        return "1";
    return "2";
}

/* Each input gets a tc_conv of its own with every option given. */
static int run_job(cli *a, const job *jb)
{
    tc_conv *conv = tc_conv_new();
    if (!conv) {
        cli_say("traceconv: %s: out of memory", jb->input);
        return EXIT_CONVERT;
    }
    for (size_t i = 0; i < a->n_settings; i++) {
        if (tc_conv_set_option(conv, a->settings[i].key, a->settings[i].value) != TC_OK) {
            cli_say("traceconv: %s", tc_conv_error(conv));
            tc_conv_free(conv);
            return EXIT_USAGE;
        }
    }
    if (!a->quiet && isatty(STDERR_FILENO))
        tc_conv_set_progress(conv, show_progress, NULL);
    if (!a->threads_given)
        tc_conv_set_option(conv, "threads", default_threads(jb->input));
    int rc = convert(a, jb, conv);
    tc_conv_free(conv);
    return rc;
}

/* Check an option at once (usage errors before any conversion) and keep it for every input. */
static int set(cli *a, tc_conv *check, const char *key, const char *value)
{
    if (a->n_settings == sizeof a->settings / sizeof *a->settings) {
        cli_say("traceconv: too many options");
        return -1;
    }
    if (tc_conv_set_option(check, key, value) != TC_OK) {
        cli_say("traceconv: %s", tc_conv_error(check));
        return -1;
    }
    a->settings[a->n_settings++] = (setting){key, value};
    return 0;
}

/* Whether path would be the OUTPUT operand of one of the formats. */
static int names_some_output(const cli *a, const char *path, const char *first)
{
    for (size_t i = 0; i < a->n_formats; i++)
        if (names_output(path, a->formats[i], a->force, first))
            return 1;
    return 0;
}

/* Several formats go beside each INPUT under their default names: no OUTPUT, no stdin or stdout. */
static int several_formats_refuse(const cli *a, char **ops, int n, int pair)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(ops[i], "-")) {
            cli_say("traceconv: several output formats (-o %s,...) cannot read stdin or write stdout ('-')",
                    a->formats[0]);
            return -1;
        }
    }
    if (pair ? n == 3 : n == 2 && names_some_output(a, ops[1], ops[0])) {
        cli_say("traceconv: %s: several output formats are written beside the INPUT under their default names; "
                "an OUTPUT operand cannot be given",
                ops[n - 1]);
        return -1;
    }
    return 0;
}

/* Operands -> jobs: INPUT [OUTPUT], a legacy pair, or several inputs each beside itself. 0: a usage error (told). */
static size_t plan_jobs(const cli *a, char **ops, int n, job *jobs)
{
    int pair = n >= 2 ? is_pair(ops[0], ops[1]) : 0;
    if (!n || (pair && n > 3)) {
        cli_say(n ? "traceconv: expected NAME.key NAME.data [OUTPUT]" : "traceconv: expected INPUT [OUTPUT]");
        return 0;
    }
    if (a->n_formats > 1 && several_formats_refuse(a, ops, n, pair))
        return 0;
    if (pair) { /* traceconv -o json a.key b.data [OUTPUT], or b.data a.key: named after the key half */
        int key = pair == 1 ? 0 : 1;
        jobs[0] = (job){ops[key], ops[1 - key], n == 3 ? ops[2] : NULL};
        return 1;
    }
    if (n == 2 && names_output(ops[1], a->formats[0], a->force, ops[0])) {
        jobs[0] = (job){ops[0], NULL, ops[1]};
        return 1;
    }
    for (int i = 0; i < n; i++)
        jobs[i] = (job){ops[i], NULL, NULL};
    return (size_t)n;
}

/* -o FORMAT[,FORMAT...]: each a known writer or variant in any case (kept under its registry
 * name), none twice, and what each writes with the options (report with --html: report-html).
 * 0, or -1 after the message. */
static int parse_formats(cli *a, const char *arg, const tc_conv *check)
{
    static char text[1024];
    if (strlen(arg) >= sizeof text) {
        cli_say("traceconv: -o: too long");
        return -1;
    }
    strcpy(text, arg);
    a->n_formats = 0;
    for (char *p = text, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = 0;
        if (!*p) {
            cli_say("traceconv: -o %s: an empty format in the list", arg);
            return -1;
        }
        const tc_variant_info *v = tc_output_variant(check, p); /* a name or an alias (svg) */
        if (!v) {
            cli_unknown_format("traceconv", p, CLI_WRITER);
            return -1;
        }
        for (size_t i = 0; i < a->n_formats; i++) {
            if (a->variants[i] == v) {
                cli_say("traceconv: -o %s: output format '%s' is given twice", arg, v->name);
                return -1;
            }
        }
        if (a->n_formats == MAX_OUTPUTS) {
            cli_say("traceconv: -o %s: more than %d formats", arg, MAX_OUTPUTS);
            return -1;
        }
        a->variants[a->n_formats] = v;
        a->formats[a->n_formats++] = tc_output_variant(NULL, p)->name; /* as given: report, report-html */
    }
    return 0;
}

/* -i FORMAT: a known reader in any case, under its registry name. 0, or -1 after the message. */
static int parse_reader(cli *a, const char *arg)
{
    if (!(a->in_format = cli_format_name(arg, 1))) { /* a name or an alias (atrace) */
        cli_unknown_format("traceconv", arg, CLI_READER);
        return -1;
    }
    return 0;
}

/* ---- traceconv diff BASE NEW [OUTPUT] ---- */

static const char diff_usage_head[] =
    "\n"
    "Compare two inputs per method: calls, inclusive and exclusive wall time (and\n"
    "thread-CPU time when both have it) in BASE and NEW, the signed change and the\n"
    "change in % of BASE, sorted by the largest change of inclusive time. BASE and\n"
    "NEW may be of different formats; methods are matched by name (doc/diff-and-reports.md).\n"
    "\n";

static const char diff_usage_options[] =
    "  -i FORMAT      input format of both inputs (default: detected for each)\n"
    "  -f, --force    overwrite an existing OUTPUT (never an input or an original trace)\n"
    "  -q, --quiet    print nothing but errors\n"
    "      --base-deobfuscate MAPPING, --new-deobfuscate MAPPING\n"
    "                 one input's own ProGuard/R8 mapping.txt (two release builds: two\n"
    "                 mappings; --deobfuscate gives both inputs one)\n";

static const char diff_usage_tail[] =
    "\n"
    "Exit status: 0 success, 1 an input could not be read or the output written,\n"
    "2 usage error.\n";

/* Whether a diff format goes to a file by default: what a browser shows (the graph) does,
 * a table goes to stdout. */
static int diff_to_file(const tc_format_info *f) { return tc_variant_at(f, 0)->inline_view; }

static void diff_usage(void)
{
    const tc_format_info *f;
    printf("usage: traceconv diff [-o ");
    for (size_t i = 0; (f = tc_diff_format_at(i)); i++)
        printf("%s%s", i ? "|" : "", f->name);
    printf("] [options] BASE NEW [OUTPUT]\n%s", diff_usage_head);
    for (size_t i = 0; (f = tc_diff_format_at(i)); i++) {
        const tc_variant_info *v = tc_variant_at(f, 0);
        char left[64], text[512], also[96] = "";
        snprintf(left, sizeof left, "  -o %s", f->name);
        if (v->aliases)
            snprintf(also, sizeof also, " (also -o %s)", v->aliases);
        if (diff_to_file(f))
            snprintf(text, sizeof text, "%s%s%s; OUTPUT defaults to NEW's name with .%s", f->description,
                     i ? "" : " (the default)", also, v->extension);
        else
            snprintf(text, sizeof text, "%s%s%s; to stdout unless OUTPUT is given", f->description,
                     i ? "" : " (the default)", also);
        cli_help_entry(stdout, left, text, 17);
    }
    fputs(diff_usage_options, stdout);
    cli_print_options(stdout, CLI_CORE | CLI_DIFF);
    fputs(diff_usage_tail, stdout);
}

static void usage(void)
{
    fputs(usage_head, stdout);
    cli_print_options(stdout, CLI_CONVERT | CLI_NO_THREADS); /* -j above is --threads */
    fputs(usage_tail, stdout);
}

/* A diff format's default output: stdout for the tables, NEW-stem.diff.svg for the graph. */
static char *diff_default_output(const tc_format_info *format, const char *next)
{
    if (!diff_to_file(format) || !strcmp(next, "-"))
        return strdup("-");
    return of_output_name(next, of_stem_len(next), next, "diff", tc_variant_at(format, 0)->extension);
}

/* side: 0 BASE, 1 NEW. Two release builds have two mappings: --base-deobfuscate and
 * --new-deobfuscate give each input its own (after --deobfuscate, which gives both one). */
static int diff_open(cli *a, tc_conv *c, const char *path, int side)
{
    const char *label = side ? "NEW" : "BASE";
    for (size_t i = 0; i < a->n_settings; i++) {
        if (tc_conv_set_option(c, a->settings[i].key, a->settings[i].value) != TC_OK) {
            cli_say("traceconv: %s", tc_conv_error(c));
            return EXIT_USAGE;
        }
    }
    if (a->side_mapping[side] && tc_conv_set_option(c, "deobfuscate", a->side_mapping[side]) != TC_OK) {
        cli_say("traceconv: %s", tc_conv_error(c));
        return EXIT_USAGE;
    }
    int rc = tc_conv_open(c, path, a->in_format);
    if (rc != TC_OK) {
        cli_say("traceconv: %s: %s", label, tc_conv_error(c));
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
            cli_say("traceconv: warning: %s: %s", label[k], w);
    }
    cli_say("traceconv: diff %s (%s) -> %s (%s) -> %s (%s)", b, tc_conv_input_summary(base), n,
            tc_conv_input_summary(next), strcmp(out, "-") ? out : "stdout", format);
}

static int run_diff(cli *a, const char *given, char **ops, int n)
{
    const tc_format_info *f = cli_diff_format(given); /* a name or an alias (svg) */
    if (!f && strchr(given, ',')) {
        cli_say("traceconv: diff: one output format at a time (-o %s)", cli_diff_format_list());
        cli_say("Try 'traceconv diff --help'.");
        return EXIT_USAGE;
    }
    if (!f) {
        cli_unknown_format("traceconv diff", given, CLI_DIFF_FORMAT);
        cli_say("Try 'traceconv diff --help'.");
        return EXIT_USAGE;
    }
    if (n < 2 || n > 3) {
        cli_say("traceconv: diff: expected BASE NEW [OUTPUT]");
        cli_say("Try 'traceconv diff --help'.");
        return EXIT_USAGE;
    }
    if (!strcmp(ops[0], "-") && !strcmp(ops[1], "-")) {
        cli_say("traceconv: diff: BASE and NEW cannot both be stdin");
        return EXIT_USAGE;
    }
    const char *format = f->name;
    job jb = {ops[0], ops[1], NULL}; /* both inputs: the output must be neither */
    target t = {.format = format, .variant = tc_variant_at(f, 0), .dirfd = -1};
    t.path = t.owned = n == 3 ? strdup(ops[2]) : diff_default_output(f, ops[1]);
    if (!t.path) {
        cli_say("traceconv: out of memory");
        return EXIT_CONVERT;
    }
    t.to_stdout = is_stdout(t.path);
    int rc = t.to_stdout ? 0 : check_target(a, &jb, &t);
    tc_conv *base = rc ? NULL : tc_conv_new(), *next = rc ? NULL : tc_conv_new();
    if (!rc && (!base || !next)) {
        cli_say("traceconv: out of memory");
        rc = EXIT_CONVERT;
    }
    if (!rc)
        rc = diff_open(a, base, ops[0], 0);
    if (!rc)
        rc = diff_open(a, next, ops[1], 1);
    if (!rc) {
        if (t.to_stdout) {
            t.fp = stdout;
        } else if (of_begin_output(&t.file, t.dirfd, t.leaf, t.how, t.variant->name) == 0) {
            t.fp = t.file.fp;
        } else {
            cli_say("traceconv: %s: cannot create the output: %s", t.path, of_strerror(errno));
            rc = EXIT_CONVERT;
        }
    }
    if (!rc) {
        int st = tc_diff_write(base, next, format, t.fp);
        if (st != TC_OK) {
            cli_say("traceconv: %s", tc_conv_error(next));
            rc = st == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        } else {
            rc = commit_target(&t);
        }
        if (!rc && !a->quiet)
            diff_summary(base, next, ops[0], ops[1], t.path, format);
    }
    release_target(&t);
    tc_conv_free(base);
    tc_conv_free(next);
    return rc;
}

/* ---- traceconv merge METHOD-TRACE SYSTEM-TRACE [OUTPUT] (doc/merge.md) ---- */

static const char merge_usage_text[] =
    "usage: traceconv merge [-o FORMAT[,FORMAT...]] [--offset TIME] [--output-file FILE] [options]\n"
    "                       TRACE SYSTRACE [OUTPUT]\n"
    "\n"
    "Example (corpus/merge: a method trace and the atrace capture of one app start):\n"
    "  traceconv merge app.trace app.atrace.txt    app.merged.pftrace, for ui.perfetto.dev\n"
    "\n"
    "Put a method trace (ART/Dalvik .trace, Rhea, ...) and the system trace of the same run\n"
    "(atrace/systrace text or HTML, Chrome JSON) on one timeline, in the system trace's clock:\n"
    "each method-trace thread shares the track of its system-trace thread (matched by tid,\n"
    "else by name), so method slices nest inside and around the atrace slices. The inputs\n"
    "may come in either order (the systrace or JSON one is the system trace).\n"
    "\n"
    "  -o FORMAT      any output format (default perfetto); the timelines (perfetto, json,\n"
    "                 systrace) are the point, the aggregating ones (flamegraph, pprof, ...) see\n"
    "                 atrace slices as frames\n"
    "  --offset TIME  the method trace's clock offset, signed: -1.5s, 250ms, 40us, 1000ns\n"
    "                 (default: from the system trace's trace_event_clock_sync markers:\n"
    "                 parent_ts for ART, realtime_ts for Dalvik; needed for ART 14 and JSON)\n"
    "  --output-file FILE, or OUTPUT\n"
    "                 where one output goes (default: TRACE's name with .merged.EXT;\n"
    "                 SYSTRACE's when TRACE is '-')\n"
    "  -f, --force    overwrite an existing OUTPUT (never an input or an original trace);\n"
    "                 merge two inputs whose spans do not overlap once aligned\n"
    "  -q, --quiet    print nothing but errors\n"
    "\n"
    "The conversion options (traceconv --help) apply as for one input.\n"
    "The two must share the app's process (its pid, or its threads' tids); a pair that\n"
    "shares none is refused unless --offset places the method trace.\n"
    "Exit status: 0 success, 1 an input could not be read, the pair shares no process,\n"
    "their spans do not overlap (without -f), or the output could not be written;\n"
    "2 usage error (also: no clock-sync marker and no --offset).\n";

/* TRACE's stem with .merged.EXT, the name of a merge's output. */
static char *merge_default_output(const char *trace, const tc_variant_info *v)
{
    char *name = NULL;
    if (tci_asprintf(&name, "%.*s.merged.%s", (int)of_stem_len(trace), trace, v->extension) < 0)
        return NULL;
    return name;
}

static int merge_open(cli *a, tc_conv *c, const char *path)
{
    for (size_t i = 0; i < a->n_settings; i++) {
        if (tc_conv_set_option(c, a->settings[i].key, a->settings[i].value) != TC_OK) {
            cli_say("traceconv: %s", tc_conv_error(c));
            return EXIT_USAGE;
        }
    }
    if (!path)
        return 0;
    int rc = tc_conv_open(c, path, NULL);
    if (rc != TC_OK) {
        cli_say("traceconv: %s", tc_conv_error(c));
        return rc == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
    }
    return 0;
}

/* Two inputs whose spans do not overlap once aligned (the library's warning merge-disjoint,
 * which names both) merge into two timelines side by side, which is never what was meant
 * (an --offset years off, a capture of another run): an error, unless -f. 0, or the status. */
static int merge_refuse_disjoint(const tc_conv *conv)
{
    tc_figure fig[64];
    size_t n = tc_conv_figures(conv, fig, 64);
    int disjoint = 0;
    for (size_t i = 0; i < n; i++)
        disjoint |= !strcmp(fig[i].name, "merge-disjoint") && fig[i].value;
    if (!disjoint)
        return 0;
    const char *w, *said = "the two inputs do not overlap";
    for (size_t i = 0; (w = tc_conv_warning_at(conv, i)); i++)
        if (strstr(w, "do not overlap"))
            said = w;
    cli_say("traceconv: %s: nothing would nest; --force merges them anyway", said);
    return EXIT_CONVERT;
}

static int run_merge(cli *a, const char *offset, const char *output_file, char **ops, int n)
{
    if (n < 2 || n > 3 || (n == 3 && output_file)) {
        cli_say("traceconv: merge: expected TRACE SYSTRACE [OUTPUT] (or --output-file FILE)");
        cli_say("Try 'traceconv merge --help'.");
        return EXIT_USAGE;
    }
    if (!strcmp(ops[0], "-") && !strcmp(ops[1], "-")) {
        cli_say("traceconv: merge: TRACE and SYSTRACE cannot both be stdin");
        return EXIT_USAGE;
    }
    const char *out = n == 3 ? ops[2] : output_file;
    if (a->n_formats > 1 && out) {
        cli_say("traceconv: merge: several output formats are written under their default names; no OUTPUT");
        return EXIT_USAGE;
    }
    job jb = {ops[0], ops[1], out}; /* both inputs: an output is neither */
    target t[MAX_OUTPUTS];
    memset(t, 0, sizeof t);
    int rc = 0;
    for (size_t i = 0; i < a->n_formats; i++) {
        t[i] = (target){.format = a->formats[i], .variant = a->variants[i], .dirfd = -1};
        /* named after TRACE, or after SYSTRACE when TRACE is stdin: never "-.merged.json" */
        const char *named = strcmp(ops[0], "-") ? ops[0] : ops[1];
        t[i].path = out ? out : (t[i].owned = merge_default_output(named, a->variants[i]));
        if (!t[i].path) {
            cli_say("traceconv: out of memory");
            rc = EXIT_CONVERT;
        }
        t[i].to_stdout = t[i].path && is_stdout(t[i].path);
    }
    if (rc == 0)
        rc = check_targets(a, &jb, t);
    tc_conv *in[2] = {NULL, NULL}, *conv = NULL;
    if (rc == 0 && (!(in[0] = tc_conv_new()) || !(in[1] = tc_conv_new()) || !(conv = tc_conv_new()))) {
        cli_say("traceconv: out of memory");
        rc = EXIT_CONVERT;
    }
    for (int k = 0; k < 2 && rc == 0; k++)
        rc = merge_open(a, in[k], ops[k]);
    if (rc == 0 && (rc = merge_open(a, conv, NULL)) == 0) {
        int st = tc_conv_open_merge(conv, in[0], in[1], offset);
        in[0] = in[1] = NULL; /* conv has them */
        if (st != TC_OK) {
            cli_say("traceconv: %s", tc_conv_error(conv));
            rc = st == TC_ERR_USAGE ? EXIT_USAGE : EXIT_CONVERT;
        }
    }
    if (rc == 0 && !a->force)
        rc = merge_refuse_disjoint(conv);
    if (rc == 0) {
        char both[PATH_MAX * 2 + 8];
        snprintf(both, sizeof both, "%s + %s", ops[0], ops[1]);
        job shown = {both, NULL, NULL};
        rc = write_targets(a, &shown, conv, t);
    }
    for (size_t i = 0; i < a->n_formats; i++)
        release_target(&t[i]);
    tc_conv_free(in[0]);
    tc_conv_free(in[1]);
    tc_conv_free(conv);
    return rc;
}

static int is_subcommand(const char *word)
{
    return !strcmp(word, "diff") || !strcmp(word, "merge") || !strcmp(word, "batch") || !strcmp(word, "serve");
}

/* `traceconv SUB ARGS...` is the program traceconv-SUB run with ARGS (subcommand.c says
 * why it is a program of its own): beside this one (a build tree), else where `make
 * install` puts it (LIBEXECDIR/traceconv, TC_BIN_TO_LIBEXEC from the bin directory).
 * Returns only when it could not be run. */
static int run_subcommand(const char *sub, char **argv)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = tci_self_exe(dir, sizeof dir - 1);
    if (n <= 0) { /* not known: the name it was started by, when it has a directory */
        const char *slash = strrchr(argv[0], '/');
        n = slash ? (ssize_t)(slash - argv[0]) + 1 : 0;
        if (n >= (ssize_t)sizeof dir)
            n = 0;
        memcpy(dir, argv[0], (size_t)n);
    }
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = 0;
    const char *const places[] = {"", TC_BIN_TO_LIBEXEC "/"};
    int err = ENOENT;
    for (size_t i = 0; i < sizeof places / sizeof *places && err == ENOENT; i++) {
        snprintf(path, sizeof path, "%s%straceconv-%s", dir, places[i], sub);
        execv(path, argv + 1);
        err = errno; /* not there: the next place; there but not runnable: that is the answer */
    }
    cli_say("traceconv: %s: cannot run %s: %s (is traceconv installed whole?)", sub, path, strerror(err));
    return EXIT_CONVERT;
}

static int run(int argc, char **argv)
{
    int diff_mode = argc > 1 && !strcmp(argv[1], "diff");
    int merge_mode = argc > 1 && !strcmp(argv[1], "merge");
    if (diff_mode || merge_mode) { /* the same options as a conversion, read for both inputs */
        argc--;
        argv++;
    }
    /* A subcommand is the first argument only: after diff or merge (or after an option), a
     * word is an operand, so `traceconv diff batch a.trace` compares the file batch. */
    int plain = !diff_mode && !merge_mode;
    if (plain && argc > 1 && !TC_WITH_SERVE && !strcmp(argv[1], "serve")) {
        cli_say(NO_SERVE);
        return EXIT_USAGE;
    }
    if (plain && argc > 1 && (!strcmp(argv[1], "batch") || !strcmp(argv[1], "serve")))
        return run_subcommand(argv[1], argv);
    /* the command's own options, then every option of the library's tables (cli_util.c) */
    enum { O_PROBE = 256, O_LIST, O_JSON, O_BASE_DEOBF, O_NEW_DEOBF, O_OFFSET, O_OUTPUT_FILE, O_LIBRARY };
    static struct option longopts[192] = {
        {"input-format", required_argument, 0, 'i'}, {"output-format", required_argument, 0, 'o'},
        {"force", no_argument, 0, 'f'},              {"quiet", no_argument, 0, 'q'},
        {"probe", required_argument, 0, O_PROBE},    {"list-formats", no_argument, 0, O_LIST},
        {"json", no_argument, 0, O_JSON},            {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},            {"base-deobfuscate", required_argument, 0, O_BASE_DEOBF},
        {"new-deobfuscate", required_argument, 0, O_NEW_DEOBF}, {"offset", required_argument, 0, O_OFFSET},
        {"output-file", required_argument, 0, O_OUTPUT_FILE}, {"jobs", required_argument, 0, 'j'}};
    size_t n_longopts = 14;
    const tc_option_info *keys[128]; /* a conversion takes the diff's options too (unused: a warning) */
    size_t n_keys = cli_option_keys(CLI_CONVERT | CLI_DIFF, keys, 128);
    if (cli_longopts(longopts, &n_longopts, sizeof longopts / sizeof *longopts, keys, n_keys, O_LIBRARY) != 0) {
        cli_say("traceconv: too many options");
        return EXIT_CONVERT;
    }
    static cli a = {.written = {.exact = 1}};
    tc_conv *check = tc_conv_new(); /* options are validated here, then applied to each input's own */
    if (!check)
        return EXIT_CONVERT;
    const char *prog = diff_mode ? "traceconv diff" : merge_mode ? "traceconv merge" : "traceconv";
    const char *merge_offset = NULL, *merge_output = NULL;
    int opt, status = 0, list = 0, json = 0;
    int li = 0, before = optind;
    const char *out_list = NULL;
    opterr = 0; /* our messages (cli_option_error), not getopt's: escaped, without the binary's path */
    while (status == 0 && (opt = getopt_long(argc, argv, ":i:o:j:fqhV", longopts, &li)) != -1) {
        switch (opt) {
        case 'i': status = parse_reader(&a, optarg); break;
        case 'o': status = cli_add_formats(&out_list, optarg) ? (cli_say("traceconv: -o: too long"), -1) : 0; break;
        case 'f': a.force = 1; break;
        case 'q': a.quiet = 1; break;
        case 'j':
            status = set(&a, check, "threads", optarg);
            a.threads_given = 1;
            break;
        case O_BASE_DEOBF:
        case O_NEW_DEOBF:
            if (!diff_mode) {
                cli_say("traceconv: --%s is an option of traceconv diff", longopts[li].name);
                status = -1;
            } else {
                a.side_mapping[opt == O_NEW_DEOBF] = optarg;
            }
            break;
        case O_OFFSET:
        case O_OUTPUT_FILE:
            if (!merge_mode) {
                cli_say("traceconv: --%s is an option of traceconv merge", longopts[li].name);
                status = -1;
            } else {
                *(opt == O_OFFSET ? &merge_offset : &merge_output) = optarg;
            }
            break;
        case O_PROBE: tc_conv_free(check); return probe(optarg);
        case O_LIST: list = 1; break;
        case O_JSON: json = 1; break;
        case 'h':
            if (merge_mode)
                fputs(merge_usage_text, stdout);
            else
                diff_mode ? diff_usage() : usage();
            tc_conv_free(check);
            return 0;
        case 'V': /* the version alone on the first line (scripts read its last word) */
            printf("traceconv %s\nbatch archives: %s\nserve: %s\n", TC_VERSION_STRING,
                   TC_WITH_LIBARCHIVE ? "yes (libarchive)" : "no (built without libarchive)",
                   TC_WITH_SERVE ? "yes (libmicrohttpd)" : "no (built without libmicrohttpd)");
            tc_conv_free(check);
            return 0;
        default:
            if (opt >= O_LIBRARY && opt < O_LIBRARY + (int)n_keys) { /* a flag's NULL value reads as true */
                status = set(&a, check, keys[opt - O_LIBRARY]->name, optarg);
                a.threads_given |= !strcmp(keys[opt - O_LIBRARY]->name, "threads");
            }
            else {
                cli_option_error(prog, opt, before, argv, longopts);
                status = -1;
            }
        }
        before = optind;
    }
    if (status == 0 && (list || json)) {
        tc_conv_free(check);
        if (list)
            return list_formats(json);
        cli_say("traceconv: --json goes with --list-formats");
        cli_say("Try 'traceconv --help'.");
        return EXIT_USAGE;
    }
    int nargs = argc - optind;
    if (diff_mode) {
        tc_conv_free(check);
        if (status != 0) {
            cli_say("Try 'traceconv diff --help'.");
            return EXIT_USAGE;
        }
        of_remove_temps_on_signals();
        return run_diff(&a, out_list ? out_list : tc_diff_format_at(0)->name, argv + optind, nargs);
    }
    if (merge_mode) {
        if (status == 0 && a.in_format) { /* the two inputs are of two formats: each is detected */
            cli_say("traceconv: merge: -i is not taken (each input's format is detected from its content)");
            status = -1;
        } else if (status == 0 && parse_formats(&a, out_list ? out_list : "perfetto", check) != 0) {
            /* one timeline is what merge is for: Perfetto's, when no -o says otherwise */
            status = -1;
        }
        tc_conv_free(check);
        if (status != 0) {
            cli_say("Try 'traceconv merge --help'.");
            return EXIT_USAGE;
        }
        of_remove_temps_on_signals();
        return run_merge(&a, merge_offset, merge_output, argv + optind, nargs);
    }
    job *jobs = nargs > 0 ? calloc((size_t)nargs, sizeof *jobs) : NULL;
    size_t n_jobs = 0;
    if (status == 0 && !out_list && nargs > 0 && is_subcommand(argv[optind])) {
        cli_say("traceconv: '%s' is a subcommand only as the first argument: traceconv %s [options] ...",
                argv[optind], argv[optind]);
        status = -1;
    } else if (status == 0 && !out_list) {
        cli_say("traceconv: missing -o FORMAT");
        status = -1;
    } else if (status == 0 && parse_formats(&a, out_list, check) != 0) {
        status = -1;
    } else if (status == 0 && nargs > 0 && !jobs) {
        cli_say("traceconv: out of memory");
        tc_conv_free(check);
        return EXIT_CONVERT;
    } else if (status == 0 && !(n_jobs = plan_jobs(&a, argv + optind, nargs, jobs))) {
        status = -1;
    }
    tc_conv_free(check);
    if (status != 0) {
        cli_say("Try 'traceconv --help'.");
        free(jobs);
        return EXIT_USAGE;
    }
    of_remove_temps_on_signals();
    int rc = 0, failed = 0;
    for (size_t i = 0; i < n_jobs; i++) {
        rc = run_job(&a, &jobs[i]);
        failed += rc != 0;
    }
    free(jobs);
    of_names_free(&a.written);
    if (n_jobs == 1)
        return rc;
    return failed ? EXIT_CONVERT : 0;
}

int main(int argc, char **argv)
{
    of_init();
    cli_stdout_checked("traceconv"); /* --help > /dev/full: exit 1, saying so (cli_util.h) */
    return cli_finish(run(argc, argv));
}
