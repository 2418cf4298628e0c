/* fuzz_merge.c - `traceconv batch --merge-summaries` with untrusted summaries (issue 38).
 *
 * The input is one to four shard summaries separated by FUZZ_MERGE_SEP (a line "%%"); each
 * is written to a file of its own and the merge runs in this process
 * (batch_merge_main of src/cli/batch_summary.c, compiled in) with --summary OUT. With an
 * odd size, OUT exists first and holds the last summary's bytes (the "replaces only a
 * summary" path, batch_is_summary reading fuzzed bytes). What must hold, besides what the
 * sanitizers see: the exit status is 0 or 1; on 1 OUT is as it was (absent, or the bytes put
 * there); on 0 OUT is JSON whose totals count its members (members, ok, failed, skipped).
 * A violation aborts, so libFuzzer keeps the input.
 *
 * Built as fuzz_merge (libFuzzer, TC_BUILD_FUZZERS) and as replay_merge (any compiler),
 * whose main below runs files and directories of inputs (tests/fuzz/regressions) each in a
 * child process, like replay.c, and accepts replay.c's --seeds/--fuzz (every file is an input).
 * The merge's messages go to stderr: scripts/fuzz.sh runs this target with -close_fd_mask=2.
 */
#include "batch.h"
#include "outfile.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FUZZ_MERGE_SEP "\n%%\n"
#define FUZZ_MERGE_MAX_FILES 4

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096];

/* The next separator in p..end, or NULL (memmem is not POSIX). */
static const uint8_t *find_sep(const uint8_t *p, const uint8_t *end)
{
    size_t sep = sizeof FUZZ_MERGE_SEP - 1;
    for (; (size_t)(end - p) >= sep; p++)
        if (!memcmp(p, FUZZ_MERGE_SEP, sep))
            return p;
    return NULL;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_merge: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    of_init();
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fuzz_merge.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        die("cannot make a temporary directory", dir);
    return 0;
}

static void put(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        die("cannot write", path);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += got) == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    fclose(f);
    if (!buf)
        die("out of memory reading", path);
    buf[len] = 0;
    *n = len;
    return buf;
}

/* The merged summary's totals are what its members count. */
static void check_merged(const char *text, size_t len)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(root, "members"), *m;
    const cJSON *totals = cJSON_GetObjectItemCaseSensitive(root, "totals");
    if (!cJSON_IsArray(members) || !cJSON_IsObject(totals))
        die("exit 0, but the merged summary has no members or totals", text);
    double n[4] = {0};
    static const char *const keys[4] = {"members", "ok", "failed", "skipped"};
    cJSON_ArrayForEach(m, members) {
        const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "status"));
        n[0]++;
        n[1] += status && !strcmp(status, "ok");
        n[2] += status && !strcmp(status, "failed");
        n[3] += status && !strcmp(status, "skipped");
    }
    for (int k = 0; k < 4; k++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(totals, keys[k]);
        if (!cJSON_IsNumber(t) || t->valuedouble != n[k]) {
            char what[128];
            snprintf(what, sizeof what, "exit 0, but totals.%s is not %.0f, the members counted", keys[k], n[k]);
            die(what, text);
        }
    }
    cJSON_Delete(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char paths[FUZZ_MERGE_MAX_FILES][4200], out[4200];
    char *argv[5 + FUZZ_MERGE_MAX_FILES] = {"batch", "--merge-summaries", "--summary", out};
    int argc = 4;
    const uint8_t *p = data, *end = data + size, *last = data;
    size_t last_len = 0, sep = sizeof FUZZ_MERGE_SEP - 1;
    for (int k = 0; k < FUZZ_MERGE_MAX_FILES; k++) {
        const uint8_t *cut = k + 1 < FUZZ_MERGE_MAX_FILES ? find_sep(p, end) : NULL;
        size_t n = cut ? (size_t)(cut - p) : (size_t)(end - p);
        snprintf(paths[k], sizeof paths[k], "%s/s%d.json", dir, k);
        put(paths[k], p, n);
        argv[argc++] = paths[k];
        last = p, last_len = n;
        if (!cut)
            break;
        p = cut + sep;
    }
    snprintf(out, sizeof out, "%s/out.json", dir);
    unlink(out);
    int existed = size & 1;
    if (existed)
        put(out, last, last_len);
    argv[argc] = NULL;
    int rc = batch_merge_main(argc, argv);
    size_t len = 0;
    char *text = slurp(out, &len);
    if (rc == 0) {
        if (!text)
            die("exit 0, but no merged summary", out);
        check_merged(text, len);
    } else if (rc == 1) {
        if (!existed && text)
            die("exit 1, but the merged summary was written", out);
        if (existed && (!text || len != last_len || memcmp(text, last, len)))
            die("exit 1, but the summary there was replaced", out);
    } else {
        die("an exit status other than 0 or 1", NULL);
    }
    free(text);
    for (int k = 4; k < argc; k++)
        unlink(argv[k]);
    unlink(out);
    return 0;
}

#ifdef FUZZ_MERGE_REPLAY
/* replay_merge [--seeds|--fuzz] FILE|DIR...: each file as one input, in a child process. */
static int failures, runs;

static void replay_file(const char *path)
{
    size_t n = 0;
    char *data = slurp(path, &n);
    if (!data) {
        fprintf(stderr, "replay: FAILED %s: cannot read it\n", path);
        failures++;
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        LLVMFuzzerTestOneInput((const uint8_t *)data, n);
        _exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "replay: FAILED %s: %s %d\n", path, WIFSIGNALED(st) ? "signal" : "exit",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        failures++;
    }
    runs++;
    free(data);
}

static void replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: FAILED %s: no such file\n", path);
        failures++;
    } else if (S_ISDIR(st.st_mode)) {
        struct dirent **names;
        int n = scandir(path, &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
            if (names[i]->d_name[0] != '.') {
                char sub[4200];
                snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
                replay_path(sub);
            }
            free(names[i]);
        }
        free(n >= 0 ? names : NULL);
    } else {
        replay_file(path);
    }
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--", 2))
            replay_path(argv[i]);
    rmdir(dir);
    printf("%d inputs run, %d failed\n", runs, failures);
    return failures ? 1 : 0;
}
#endif
