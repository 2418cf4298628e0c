/* replay.c - runs a fuzz target over files and directories without libFuzzer,
 * so any compiler and CI can replay them (under ASan+UBSan in make test):
 *
 *   replay_art [--seeds|--seeds-default] TRACE|DIR... [--fuzz] INPUT|DIR...
 *
 * --fuzz (the default) takes what libFuzzer writes (past crashes in
 * tests/fuzz/regressions): a control block, then the trace (fuzz_target.h).
 * Each is replayed exactly as the fuzzer ran it, and its trace once more
 * through every writer with every seed option set, so a regression keeps
 * testing all writers when the registry changes.
 * --seeds takes plain traces: each goes through every writer with each option
 * set of FUZZ_SEED_OPTION_SETS. --seeds-default: every writer with the default
 * options only (replay_convert: the readers' own replays give the seeds every
 * option set; what it adds is the probe, which options do not reach).
 * REPLAY_SETS=K (the ASan run of make test): each seed goes through every writer
 * with the defaults and K of the other sets, which set rotating with the file,
 * the writer and REPLAY_SEED (printed; default: the time), so one run covers
 * every writer with every set over the files and runs differ; a failure is
 * replayed with the printed seed.
 *
 * --check-options: every option of the library's tables (tc_option_at) is
 * set by some choice of the control block (or is said why not): exit 1 with
 * the ones that are not, so a new option cannot go unfuzzed.
 *
 * Each file runs in a child process, so a crash or a hang is reported with
 * its file, writer and options, and the files after it still run. Exit 1 when
 * any failed; every failure is listed at the end. REPLAY_TIMEOUT (seconds,
 * default 120) bounds one file. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (glibc) */
#include "fuzz_target.h"
#include "traceconv.h"

#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the child is doing, in memory the parent still reads after a crash. */
struct progress {
    char what[512];
    unsigned long conversions;
};
static struct progress *shared;

static const unsigned seed_option_sets[] = FUZZ_SEED_OPTION_SETS;

static bool convert(const uint8_t *trace, size_t size, size_t writer, unsigned options, const char *how)
{
    char desc[256];
    fuzz_describe(desc, sizeof desc, writer, options);
    snprintf(shared->what, sizeof shared->what, "%s, %s", how, desc);
    bool opened = fuzz_convert_one(trace, size, writer, options);
    shared->conversions++;
    return opened;
}

enum seed_mode { NOT_SEEDS, SEEDS, SEEDS_DEFAULT };

/* REPLAY_SETS and REPLAY_SEED (see the top): 0 sampled sets means all of them. */
static size_t sampled_sets;
static unsigned long sample_seed;

/* Whether seed option set o (> 0) runs for writer w of the file-th file: K consecutive
 * sets of the rotation, starting where the seed, the file and the writer put it. */
static bool set_sampled(size_t o, size_t w, unsigned file, size_t all_sets)
{
    if (!sampled_sets || sampled_sets >= all_sets - 1)
        return true;
    size_t others = all_sets - 1, start = (size_t)((sample_seed + (unsigned long)file * 7u + w * 3u) % others);
    return (o - 1 + others - start) % others < sampled_sets;
}

/* Each writer with each seed option set (only the first, the defaults, when sets is 1;
 * sample_file non-NULL: the sets REPLAY_SETS samples for that file).
 * A trace the reader refuses with the defaults (a seed of another format) is refused
 * the same way whatever the writer and the options: once is enough (under ASan, the
 * 80 refusals of each foreign seed in each replay took most of the replay's time). */
static void every_writer(const uint8_t *trace, size_t size, const char *how, size_t sets, const unsigned *sample_file)
{
    for (size_t o = 0; o < sets; o++)
        for (size_t w = 0; w < fuzz_writer_count(); w++) {
            if (o > 0 && sample_file && !set_sampled(o, w, *sample_file, sets))
                continue;
            if (!convert(trace, size, w, seed_option_sets[o], how) && o == 0 && w == 0)
                return;
        }
}

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, k;
    uint8_t *buf = malloc(cap);
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

/* The child's work on one file; exits 0, or dies in a way the parent reports. */
static void run_file(const char *path, int seeds, unsigned file)
{
    size_t n;
    uint8_t *data = read_all(path, &n);
    if (!data) {
        snprintf(shared->what, sizeof shared->what, "cannot read the file");
        exit(3);
    }
    const size_t all_sets = sizeof seed_option_sets / sizeof *seed_option_sets;
    if (seeds != NOT_SEEDS) {
        every_writer(data, n, "as a seed", seeds == SEEDS ? all_sets : 1, &file);
    } else if (n >= FUZZ_CONTROL_SIZE) {
        convert(data + FUZZ_CONTROL_SIZE, n - FUZZ_CONTROL_SIZE, data[0], data[1], "as fuzzed");
        every_writer(data + FUZZ_CONTROL_SIZE, n - FUZZ_CONTROL_SIZE, "its trace", all_sets, NULL); /* every set: past crashes are few */
    }
    free(data);
    exit(0); /* not _exit: LeakSanitizer checks at exit */
}

struct tally {
    unsigned files, failed;
    unsigned long conversions;
    unsigned timeout;
};

static void replay_file(const char *path, int seeds, struct tally *t)
{
    t->files++;
    snprintf(shared->what, sizeof shared->what, "starting");
    shared->conversions = 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("replay: fork");
        exit(2);
    }
    if (pid == 0) {
        alarm(t->timeout);
        run_file(path, seeds, t->files);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ;
    t->conversions += shared->conversions;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return;
    t->failed++;
    char why[64];
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
        snprintf(why, sizeof why, "hang (over %u s)", t->timeout);
    else if (WIFSIGNALED(st))
        snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(why, sizeof why, "exit %d", WEXITSTATUS(st));
    /* the sanitizer's report is on stderr above; this line says which input it was */
    fprintf(stderr, "replay: FAILED %s: %s during %s\n", path, why, shared->what);
    fflush(stderr);
}

static int skip_entry(const struct dirent *e) { return e->d_name[0] != '.'; }

static int replay(const char *path, int seeds, struct tally *t)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        replay_file(path, seeds, t);
        return 0;
    }
    struct dirent **names;
    int n = scandir(path, &names, skip_entry, alphasort); /* sorted: the same order on every machine */
    if (n < 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
        if (replay(sub, seeds, t) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

/* Each option of a table the fuzzers reach; 1 when one is not. */
static int unreached(const tc_format_info *f)
{
    const tc_option_info *o;
    int bad = 0;
    for (size_t i = 0; (o = tc_option_at(f, i)); i++)
        if (!fuzz_option_reached(o->name)) {
            fprintf(stderr, "replay: option --%s (%s) is set by no choice of the control block "
                            "(tests/fuzz/fuzz_target.c)\n", o->name, f ? f->name : "every conversion");
            bad = 1;
        }
    return bad;
}

static int check_options(void)
{
    const tc_format_info *f;
    int bad = unreached(NULL);
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        bad |= unreached(f);
    for (size_t i = 0; (f = tc_diff_format_at(i)); i++)
        bad |= unreached(f);
    printf("replay: %s\n", bad ? "options unreached" : "every option of the tables is reached");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--check-options"))
        return check_options();
#if !defined(MAP_ANONYMOUS)
#define MAP_ANONYMOUS MAP_ANON /* older macOS headers */
#endif
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("replay: mmap");
        return 2;
    }
    const char *tmo = getenv("REPLAY_TIMEOUT");
    struct tally t = {0, 0, 0, tmo && atoi(tmo) > 0 ? (unsigned)atoi(tmo) : 120};
    const char *k = getenv("REPLAY_SETS"), *seed = getenv("REPLAY_SEED");
    sampled_sets = k && atoi(k) > 0 ? (size_t)atoi(k) : 0;
    sample_seed = seed && *seed ? strtoul(seed, NULL, 10) : (unsigned long)time(NULL);
    if (sampled_sets)
        printf("replay: %zu sampled option sets per seed and writer, REPLAY_SEED=%lu\n", sampled_sets, sample_seed);
    int seeds = NOT_SEEDS, rc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds")) {
            seeds = SEEDS;
        } else if (!strcmp(argv[i], "--seeds-default")) {
            seeds = SEEDS_DEFAULT;
        } else if (!strcmp(argv[i], "--fuzz")) {
            seeds = NOT_SEEDS;
        } else if (replay(argv[i], seeds, &t) != 0) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            rc = 1;
        }
    }
    printf("replayed %u inputs, %lu conversions over %zu writers, %u failed\n", t.files, t.conversions,
           fuzz_writer_count(), t.failed);
    return rc || t.failed ? 1 : 0;
}
