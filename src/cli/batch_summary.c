/*
 * batch_summary.c - `traceconv batch --merge-summaries [--summary FILE] SUMMARY...`
 *
 * The summaries of the N shards of one run (`--shard I/N`, run anywhere: GNU parallel,
 * a Slurm array, a Kubernetes Indexed Job) become the summary one unsharded run would
 * have written: the same schema, the members in the unsharded run's order, the totals
 * combined. A shard's summary gives each member its place in that order ("index", the
 * count of members every shard finds before it, batch.c), and lists its members in
 * that order; the merge is an N-way merge by index, so it holds one entry at a time
 * (and a few numbers per summary) whatever the number of members.
 *
 * The files are read twice, as streams: the first pass checks everything (JSON, the
 * schema, that the shards are those of one run: one version, one list of formats, each
 * shard of N once; members in order, totals that match them), so that a bad summary
 * fails before anything is written; the second merges. Each value is read into a buffer
 * of bounded size and parsed alone with cJSON, so a summary of any length is read in
 * bounded memory, and a hostile one (an endless string, deep nesting) fails with the
 * file, the byte offset and what was wrong.
 *
 * The member every shard lists itself (an INPUT that cannot be opened: each shard's
 * run fails) has the same index and the same entry in every summary: it is kept once
 * and counted once. Any other index met twice, even with the same entry, means the
 * shards did not partition one run: an error, as is a shard missing or given twice. Each
 * summary's totals must be what its members add up to, so the merged totals are too.
 */
#include "batch.h"
#include "cli_util.h"
#include "outfile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* What one value may hold: a member's entry, and anything else at the top (formats, totals). */
enum { MAX_ENTRY = 16 << 20, MAX_HEADER = 64 << 10, MAX_DEPTH = 64 };
#define MAX_EXACT 9007199254740992.0 /* 2^53: every count and size is exact below it */

static const char *const total_keys[] = {"members", "ok", "failed", "skipped", "existing", "bytes_in", "bytes_out"};
enum { T_MEMBERS, T_OK, T_FAILED, T_SKIPPED, T_EXISTING, T_BYTES_IN, T_BYTES_OUT, N_TOTALS };

/* One summary, read as a stream. */
typedef struct summary {
    const char *path;
    FILE *f;
    uint64_t pos;      /* bytes consumed: where an error is */
    char *buf;         /* the last value's text */
    size_t len, cap;
    cJSON *generator, *formats; /* pass 1 */
    cJSON *options;             /* the run's conversion options (batch.c: options_json); NULL: none given */
    long shard, shards;         /* -1: an unsharded run's summary */
    uint64_t totals[N_TOTALS];  /* as the summary says */
    uint64_t counted[N_TOTALS]; /* as its members count (pass 1): they must be equal */
    double seconds;
    int interrupted;
    uint64_t members_at; /* just after the '[' of "members" */
    size_t n_members;
    dev_t dev; /* the file: --summary FILE may not be one of them */
    ino_t ino;
    /* pass 2: the entry at the head of this summary */
    uint64_t head_index, head_off;
    size_t head_len, left;
} summary;

static char *scratch; /* an entry read again to be written (one at a time) */
static size_t scratch_cap;

static int fail(const summary *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line: the file, the byte offset, what was wrong. Returns -1. */
static int fail(const summary *s, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cli_say("traceconv batch: %s: byte %llu: not a batch summary to merge: %s", s->path,
            (unsigned long long)s->pos, what);
    return -1;
}

static int next_byte(summary *s)
{
    int c = getc_unlocked(s->f);
    if (c != EOF)
        s->pos++;
    return c;
}

static void unread_byte(summary *s, int c)
{
    if (c != EOF) {
        ungetc(c, s->f);
        s->pos--;
    }
}

/* The next byte that is not JSON whitespace (consumed), or EOF. */
static int next_token(summary *s)
{
    int c;
    while ((c = next_byte(s)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        ;
    return c;
}

static int expect(summary *s, int want, const char *where)
{
    int c = next_token(s);
    if (c == want)
        return 0;
    unread_byte(s, c);
    return fail(s, "expected '%c' %s", want, where);
}

static int keep_byte(summary *s, int c, size_t limit)
{
    if (s->len + 2 > s->cap) {
        if (s->len + 2 > limit)
            return fail(s, "a value longer than %zu bytes", limit);
        size_t cap = s->cap ? s->cap * 2 : 4096;
        char *grown = realloc(s->buf, cap < limit ? cap : limit);
        if (!grown)
            return fail(s, "out of memory");
        s->buf = grown;
        s->cap = cap < limit ? cap : limit;
    }
    s->buf[s->len++] = (char)c;
    return 0;
}

/* The raw text of the next value into s->buf (at most limit bytes), then parsed whole by
 * cJSON (which checks it); NULL after the message. The scan only finds where the value
 * ends: outside strings, brackets open and close, and a scalar ends at a delimiter. */
static cJSON *read_value(summary *s, size_t limit)
{
    int c = next_token(s), depth = 0, in_string = 0, escaped = 0;
    uint64_t start = s->pos;
    s->len = 0;
    if (c == EOF || strchr(",]}:", c)) { /* no value here: nothing to scan (s->buf may be unallocated) */
        unread_byte(s, c);
        fail(s, c == EOF ? "cut short" : "expected a value");
        return NULL;
    }
    for (; c != EOF; c = next_byte(s)) {
        /* the end: a string or a container closed before c, or a scalar's delimiter */
        int scalar = s->len && s->buf[0] != '"' && s->buf[0] != '{' && s->buf[0] != '[';
        if (s->len && !in_string && depth == 0 && (!scalar || strchr(",]}: \t\r\n", c))) {
            unread_byte(s, c);
            break;
        }
        if (keep_byte(s, c, limit) != 0)
            return NULL;
        if (in_string) {
            if (escaped)
                escaped = 0;
            else if (c == '\\')
                escaped = 1;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH) {
                fail(s, "nested more than %d deep", MAX_DEPTH);
                return NULL;
            }
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    s->buf[s->len] = 0;
    cJSON *v = s->len && !in_string && depth == 0 ? cJSON_ParseWithLength(s->buf, s->len) : NULL;
    if (!v) {
        uint64_t at = s->pos;
        s->pos = start ? start - 1 : 0;
        fail(s, c == EOF && (in_string || depth) ? "cut short" : "not JSON (the value starting here, %zu bytes)", s->len);
        s->pos = at;
    }
    return v;
}

static const char *string_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* A whole number from 0 to 2^53; -1 when v is not one. */
static double count_of(const cJSON *v)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    return d >= 0 && d <= MAX_EXACT && d == floor(d) ? d : -1;
}

/* ---- what a summary is (batch.c asks it too, before it replaces a file) ---- */

/* Is the file at leaf a batch summary (of this or an earlier run, or shards merged by jq)?
 * An empty file counts too: nothing would be lost. */
int batch_is_summary(int dirfd, const char *leaf)
{
    char head[4097];
    int fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    close(fd);
    if (n < 0)
        return 0;
    head[n] = 0;
    size_t lead = strspn(head, " \t\r\n");
    return n == 0 || (head[lead] == '{' && strstr(head, "\"members\"") && strstr(head, "\"formats\""));
}

/* ---- pass 1: one summary checked, its header kept ---- */

static int take_totals(summary *s, const cJSON *t)
{
    if (!cJSON_IsObject(t))
        return fail(s, "\"totals\" is not an object");
    for (int i = 0; i < N_TOTALS; i++) {
        double d = count_of(cJSON_GetObjectItemCaseSensitive(t, total_keys[i]));
        if (d < 0)
            return fail(s, "totals.%s is not a count", total_keys[i]);
        s->totals[i] = (uint64_t)d;
    }
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(t, "seconds");
    if (!cJSON_IsNumber(sec) || !(sec->valuedouble >= 0) || !isfinite(sec->valuedouble))
        return fail(s, "totals.seconds is not a duration");
    s->seconds = sec->valuedouble;
    return 0;
}

static int take_header_value(summary *s, const char *key, cJSON *v)
{
    if (!strcmp(key, "generator")) {
        if (!cJSON_IsString(v) || s->generator)
            return fail(s, "\"generator\" is not one string");
        s->generator = cJSON_Duplicate(v, 1);
    } else if (!strcmp(key, "formats")) {
        const cJSON *f;
        int n = 0;
        cJSON_ArrayForEach(f, v) n += cJSON_IsString(f) ? 1 : -1000;
        if (!cJSON_IsArray(v) || n < 1 || s->formats)
            return fail(s, "\"formats\" is not one list of format names");
        s->formats = cJSON_Duplicate(v, 1);
    } else if (!strcmp(key, "options")) {
        if (!cJSON_IsString(v) || s->options)
            return fail(s, "\"options\" is not one string");
        s->options = cJSON_Duplicate(v, 1);
    } else if (!strcmp(key, "shard") || !strcmp(key, "shards")) {
        double d = count_of(v);
        if (d < 0 || d > 1e9)
            return fail(s, "\"%s\" is not a shard number", key);
        *(key[5] ? &s->shards : &s->shard) = (long)d;
    } else if (!strcmp(key, "totals")) {
        return take_totals(s, v);
    } else if (!strcmp(key, "interrupted")) {
        if (!cJSON_IsBool(v))
            return fail(s, "\"interrupted\" is not true or false");
        s->interrupted = cJSON_IsTrue(v);
    } else {
        return fail(s, "unexpected \"%.100s\"", key);
    }
    return 0;
}

/* The first key of object o that it holds twice, or NULL. cJSON finds a key's first value,
 * most JSON readers (Python's, jq) its last: an entry read one way here and another way by
 * the reader of the merged summary would make its totals look wrong there. */
static const char *key_twice(const cJSON *o)
{
    for (const cJSON *a = o ? o->child : NULL; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next)
            if (a->string && b->string && !strcmp(a->string, b->string))
                return a->string;
    return NULL;
}

/* What a member's entry adds to the totals (batch.c, finish_member and convert_member):
 * one member, one of ok/failed/skipped, existing when its outputs were kept from the
 * previous run; its size to bytes_in; the sizes of its outputs to bytes_out, but for a kept
 * member's (written by an earlier run). -1 after the message: not a count, or a sum that
 * overflows. */
static int count_entry(summary *s, const cJSON *e, size_t nth, const char *status, uint64_t *counted)
{
    const cJSON *existing = cJSON_GetObjectItemCaseSensitive(e, "existing");
    const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(e, "outputs"), *o;
    double size = count_of(cJSON_GetObjectItemCaseSensitive(e, "size"));
    const char *twice = key_twice(e);
    if (twice)
        return fail(s, "member %zu: \"%.100s\" twice", nth, twice);
    if (size < 0)
        return fail(s, "member %zu: \"size\" is not a count", nth);
    if (existing && !cJSON_IsBool(existing))
        return fail(s, "member %zu: \"existing\" is not true or false", nth);
    if (outputs && !cJSON_IsArray(outputs))
        return fail(s, "member %zu: \"outputs\" is not a list", nth);
    uint64_t add[N_TOTALS] = {[T_MEMBERS] = 1, [T_BYTES_IN] = (uint64_t)size};
    add[!strcmp(status, "ok") ? T_OK : !strcmp(status, "failed") ? T_FAILED : T_SKIPPED] = 1;
    add[T_EXISTING] = cJSON_IsTrue(existing);
    cJSON_ArrayForEach(o, outputs) {
        const cJSON *osize = cJSON_GetObjectItemCaseSensitive(o, "size");
        double d = count_of(osize);
        /* a size batch could not learn (ftell's -1) adds nothing, as in batch.c */
        if (!cJSON_IsObject(o) || !cJSON_IsNumber(osize) || (d < 0 && !(osize->valuedouble < 0)))
            return fail(s, "member %zu: an output without a size", nth);
        if ((twice = key_twice(o)) != NULL)
            return fail(s, "member %zu: an output with \"%.100s\" twice", nth, twice);
        if (d > 0 && !add[T_EXISTING]) {
            if (add[T_BYTES_OUT] > UINT64_MAX - (uint64_t)d)
                return fail(s, "member %zu: the sizes of its outputs overflow", nth);
            add[T_BYTES_OUT] += (uint64_t)d;
        }
    }
    for (int k = 0; k < N_TOTALS; k++) {
        if (counted[k] > UINT64_MAX - add[k])
            return fail(s, "member %zu: the sum of %s overflows", nth, total_keys[k]);
        counted[k] += add[k];
    }
    return 0;
}

/* A member's entry: an object naming a source and a member, with a status; in a shard's
 * summary its index, after the previous one's. *index: the entry's place. counted (pass
 * 1; NULL in pass 2): the totals, to which the entry is added. */
static int check_entry(summary *s, const cJSON *e, size_t nth, uint64_t *index, uint64_t *counted)
{
    const char *status = cJSON_IsObject(e) ? string_of(e, "status") : NULL;
    if (!status || !string_of(e, "source") || !string_of(e, "member") ||
        (strcmp(status, "ok") && strcmp(status, "failed") && strcmp(status, "skipped")))
        return fail(s, "member %zu is not a member's entry (source, member, status ok/failed/skipped)", nth);
    if (counted && count_entry(s, e, nth, status, counted) != 0)
        return -1;
    if (s->shards < 0) {
        *index = nth;
        return 0;
    }
    double d = count_of(cJSON_GetObjectItemCaseSensitive(e, "index"));
    if (d < 0)
        return fail(s, "member %zu has no \"index\" (a summary of an older traceconv?)", nth);
    if (nth && (uint64_t)d <= *index)
        return fail(s, "member %zu is out of order (index %.0f after %llu)", nth, d, (unsigned long long)*index);
    *index = (uint64_t)d;
    return 0;
}

static int check_members(summary *s)
{
    s->members_at = s->pos;
    uint64_t index = 0;
    int c = next_token(s);
    if (c == ']')
        return 0;
    unread_byte(s, c);
    for (;;) {
        cJSON *e = read_value(s, MAX_ENTRY);
        int rc = e ? check_entry(s, e, s->n_members, &index, s->counted) : -1;
        cJSON_Delete(e);
        if (rc != 0)
            return -1;
        s->n_members++;
        c = next_token(s);
        if (c == ']')
            return 0;
        if (c != ',') {
            unread_byte(s, c);
            return fail(s, "expected ',' or ']' in \"members\"");
        }
    }
}

/* The whole file: one object of the summary's keys, nothing after it. */
static int check_summary(summary *s)
{
    s->shard = s->shards = -1;
    if (expect(s, '{', "at the start") != 0)
        return -1;
    int seen_members = 0, seen_totals = 0;
    for (;;) {
        cJSON *key = read_value(s, MAX_HEADER);
        if (!key)
            return -1;
        if (!cJSON_IsString(key)) {
            cJSON_Delete(key);
            return fail(s, "expected a key");
        }
        char name[32];
        snprintf(name, sizeof name, "%s", key->valuestring);
        cJSON_Delete(key);
        if (expect(s, ':', "after a key") != 0)
            return -1;
        if (!strcmp(name, "members")) {
            if (seen_members++ || expect(s, '[', "(\"members\" is a list)") != 0 || check_members(s) != 0)
                return seen_members > 1 ? fail(s, "\"members\" twice") : -1;
        } else {
            cJSON *v = read_value(s, MAX_HEADER);
            int rc = v ? take_header_value(s, name, v) : -1;
            seen_totals += !strcmp(name, "totals");
            cJSON_Delete(v);
            if (rc != 0)
                return -1;
        }
        int c = next_token(s);
        if (c == '}')
            break;
        if (c != ',') {
            unread_byte(s, c);
            return fail(s, "expected ',' or '}'");
        }
    }
    if (next_token(s) != EOF)
        return fail(s, "more after the summary's end");
    if (!s->generator || !s->formats || !seen_members || seen_totals != 1)
        return fail(s, "\"%s\" is missing", !s->generator ? "generator" : !s->formats ? "formats"
                                                 : !seen_members ? "members" : "totals");
    if ((s->shard < 0) != (s->shards < 0) || (s->shards >= 0 && (s->shards < 2 || s->shard >= s->shards)))
        return fail(s, "\"shard\" %ld of \"shards\" %ld is not a shard of a run", s->shard, s->shards);
    /* every total is what its members add up to (count_entry) */
    static const char *const counted_as[N_TOTALS][2] = {
        {"it lists ", " members"}, {"", " of its members are ok"}, {"", " of its members failed"},
        {"", " of its members are skipped"}, {"", " of its members are existing"},
        {"its members' sizes add up to ", ""}, {"the sizes of its members' outputs add up to ", ""}};
    for (int k = 0; k < N_TOTALS; k++)
        if (s->totals[k] != s->counted[k])
            return fail(s, "totals.%s is %llu, but %s%llu%s", total_keys[k], (unsigned long long)s->totals[k],
                        counted_as[k][0], (unsigned long long)s->counted[k], counted_as[k][1]);
    return 0;
}

/* ---- the shards are those of one run ---- */

static int same_json(const cJSON *a, const cJSON *b)
{
    return cJSON_Compare(a, b, 1);
}

static int check_run(summary *s, size_t n)
{
    long shards = s[0].shards;
    for (size_t i = 0; i < n; i++) {
        const char *what = NULL;
        if (s[i].shards < 0 && n > 1)
            what = "is not a shard's summary (no \"shard\"): merge the summaries of the shards of one run";
        else if (!same_json(s[i].generator, s[0].generator))
            what = "was written by another version of traceconv than the first summary";
        else if (!same_json(s[i].formats, s[0].formats))
            what = "lists other formats than the first summary";
        else if (!!s[i].options != !!s[0].options || (s[i].options && !same_json(s[i].options, s[0].options)))
            what = "was made with other options than the first summary";
        else if (s[i].shards != shards)
            what = "is a shard of another number of shards than the first summary";
        if (what) {
            cli_say("traceconv batch: %s %s (%s)", s[i].path, what, s[0].path);
            return -1;
        }
    }
    if (shards < 0)
        return 0;
    if ((size_t)shards > n) {
        cli_say("traceconv batch: %s: %zu summaries for %ld shards: the summaries of all the shards are needed", s[0].path,
                n, shards);
        return -1;
    }
    /* each shard once: has[k] - 1 is the summary of shard k */
    size_t *has = calloc((size_t)shards, sizeof *has);
    int rc = has ? 0 : -1;
    for (size_t i = 0; has && rc == 0 && i < n; i++) {
        if (has[s[i].shard]) {
            cli_say("traceconv batch: shard %ld/%ld is given twice: %s and %s", s[i].shard, shards,
                    s[has[s[i].shard] - 1].path, s[i].path);
            rc = -1;
        }
        has[s[i].shard] = i + 1;
    }
    for (long k = 0; rc == 0 && k < shards; k++)
        if (!has[k]) {
            cli_say("traceconv batch: %s: shard %ld/%ld is missing", s[0].path, k, shards);
            rc = -1;
        }
    free(has);
    return rc;
}

/* ---- pass 2: the N-way merge by index ---- */

/* The next entry of s (its index and where its text is): 1, 0 at the end, -1 after the message. */
static int advance(summary *s)
{
    if (!s->left)
        return 0;
    if (s->left < s->n_members) {
        int c = next_token(s);
        if (c != ',') {
            unread_byte(s, c);
            return fail(s, "changed while it was merged");
        }
    }
    cJSON *e = read_value(s, MAX_ENTRY);
    size_t nth = s->n_members - s->left;
    uint64_t index = s->head_index;
    int rc = e ? check_entry(s, e, nth, &index, NULL) : -1;
    cJSON_Delete(e);
    if (rc != 0)
        return -1;
    s->head_index = index;
    s->head_off = s->pos - s->len;
    s->head_len = s->len;
    s->left--;
    return 1;
}

/* The head entry of s as the unsharded run writes it (without its index); malloc'd, or NULL. */
static char *head_text(summary *s, cJSON **entry)
{
    if (s->head_len + 1 > scratch_cap) {
        free(scratch);
        scratch_cap = s->head_len + 1;
        if (!(scratch = malloc(scratch_cap)))
            return scratch_cap = 0, NULL;
    }
    if (pread(fileno(s->f), scratch, s->head_len, (off_t)s->head_off) != (ssize_t)s->head_len)
        return NULL;
    cJSON *e = cJSON_ParseWithLength(scratch, s->head_len);
    if (!cJSON_IsObject(e) || !string_of(e, "status") || !string_of(e, "source") || !string_of(e, "member")) {
        /* not what pass 1 read: the file changed */
        cJSON_Delete(e);
        return NULL;
    }
    if (s->shards >= 0)
        cJSON_DeleteItemFromObjectCaseSensitive(e, "index");
    char *text = cJSON_PrintUnformatted(e);
    *entry = e;
    return text;
}

/* The one entry every shard lists (batch.c, an INPUT that stat cannot find: each shard's run
 * failed): no member path, failed, no outputs. Any other entry is one shard's. */
static int every_shards(const cJSON *e)
{
    const char *member = string_of(e, "member"), *status = string_of(e, "status");
    return member && !*member && status && !strcmp(status, "failed") &&
           !cJSON_GetObjectItemCaseSensitive(e, "outputs") && !cJSON_GetObjectItemCaseSensitive(e, "existing");
}

/* Such an entry listed by several shards is counted once: what its duplicate added goes
 * (each shard's totals counted it: pass 1 checked them, so nothing wraps). */
static void uncount(uint64_t *totals, const cJSON *e)
{
    double size = count_of(cJSON_GetObjectItemCaseSensitive(e, "size"));
    totals[T_MEMBERS]--;
    totals[T_FAILED]--;
    totals[T_BYTES_IN] -= size > 0 ? (uint64_t)size : 0;
}

/* A min-heap of summaries by their head entry's index. */
static void sift_down(summary **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l]->head_index < h[m]->head_index)
            m = l;
        if (r < n && h[r]->head_index < h[m]->head_index)
            m = r;
        if (m == i)
            return;
        summary *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The heap's first summary moves to its next entry (or leaves the heap). 0 or -1. */
static int pop_advance(summary **heap, size_t *live)
{
    int r = advance(heap[0]);
    if (r < 0)
        return -1;
    if (r == 0)
        heap[0] = heap[--*live];
    sift_down(heap, *live, 0);
    return 0;
}

/* The same index in another summary: the entry every shard lists (an INPUT that could not
 * be opened) is kept and counted once; any other is an error, the same entry too (a member
 * is converted by one shard: two shards listing it did not partition one run). */
static int drop_duplicate(summary *first, summary *again, const char *text, uint64_t *totals)
{
    cJSON *dup = NULL;
    char *other = head_text(again, &dup);
    int same = other && !strcmp(other, text), ok = same && every_shards(dup);
    if (ok)
        uncount(totals, dup);
    else if (same)
        cli_say("traceconv batch: %s and %s both list the member at index %llu (%.200s: %.200s): a member is one "
                "shard's; the shards did not partition one run",
                first->path, again->path, (unsigned long long)first->head_index, string_of(dup, "source"),
                string_of(dup, "member"));
    else
        cli_say("traceconv batch: %s and %s list different members at index %llu: the shards did not read the same "
                "inputs",
                first->path, again->path, (unsigned long long)first->head_index);
    free(other);
    cJSON_Delete(dup);
    return ok ? 0 : -1;
}

/* The members of every summary in index order, one a line, into out; totals adjusted
 * for the members listed twice. */
static int merge_members(summary *s, size_t n, FILE *out, uint64_t *totals)
{
    summary **heap = calloc(n, sizeof *heap);
    size_t live = 0;
    int rc = heap ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        clearerr(s[i].f);
        if (fseeko(s[i].f, (off_t)s[i].members_at, SEEK_SET) != 0)
            rc = fail(&s[i], "cannot read it again: %s", strerror(errno));
        s[i].pos = s[i].members_at;
        s[i].left = s[i].n_members;
        int r = rc == 0 ? advance(&s[i]) : -1;
        if (r > 0)
            heap[live++] = &s[i];
        rc = r < 0 ? -1 : rc;
    }
    for (size_t i = live; i-- > 0;)
        sift_down(heap, live, i);
    size_t written = 0;
    while (rc == 0 && live) {
        summary *top = heap[0];
        uint64_t index = top->head_index;
        cJSON *entry = NULL;
        char *text = head_text(top, &entry);
        if (!text)
            rc = fail(top, "changed while it was merged");
        else if (fprintf(out, "%s%s", written++ ? ",\n" : "", text) < 0)
            rc = -1;
        summary first = *top; /* its path and index, for a message */
        if (rc == 0)
            rc = pop_advance(heap, &live);
        while (rc == 0 && live && heap[0]->head_index == index)
            if ((rc = drop_duplicate(&first, heap[0], text, totals)) == 0)
                rc = pop_advance(heap, &live);
        free(text);
        cJSON_Delete(entry);
    }
    if (rc == 0 && written && fputs("\n", out) < 0)
        rc = -1;
    free(heap);
    return rc;
}

/* ---- the merged summary ---- */

static int write_merged(summary *s, size_t n, FILE *out)
{
    uint64_t totals[N_TOTALS] = {0};
    double seconds = 0; /* the shards run at once: the run took as long as its slowest shard */
    int interrupted = 0;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < N_TOTALS; k++) {
            if (totals[k] > UINT64_MAX - s[i].totals[k]) {
                cli_say("traceconv batch: %s: totals.%s: the sum overflows", s[i].path, total_keys[k]);
                return -1;
            }
            totals[k] += s[i].totals[k];
        }
        seconds = s[i].seconds > seconds ? s[i].seconds : seconds;
        interrupted |= s[i].interrupted;
    }
    char *generator = cJSON_PrintUnformatted(s[0].generator), *formats = cJSON_PrintUnformatted(s[0].formats);
    char *options = s[0].options ? cJSON_PrintUnformatted(s[0].options) : NULL;
    int rc = generator && formats && (options || !s[0].options) ? 0 : -1;
    if (rc == 0)
        fprintf(out, "{\"generator\":%s,\"formats\":%s,%s%s%s\n\"members\":[\n", generator, formats,
                options ? "\"options\":" : "", options ? options : "", options ? "," : "");
    free(generator);
    free(formats);
    free(options);
    if (rc == 0)
        rc = merge_members(s, n, out, totals);
    if (rc == 0)
        fprintf(out,
                "],\n\"totals\":{\"members\":%llu,\"ok\":%llu,\"failed\":%llu,\"skipped\":%llu,\"existing\":%llu,"
                "\"bytes_in\":%llu,\"bytes_out\":%llu,\"seconds\":%.6f}%s}\n",
                (unsigned long long)totals[T_MEMBERS], (unsigned long long)totals[T_OK],
                (unsigned long long)totals[T_FAILED], (unsigned long long)totals[T_SKIPPED],
                (unsigned long long)totals[T_EXISTING], (unsigned long long)totals[T_BYTES_IN],
                (unsigned long long)totals[T_BYTES_OUT], seconds, interrupted ? ",\"interrupted\":true" : "");
    return rc;
}

/* The merged summary into FILE (replacing only a summary, atomically) or onto stdout
 * (written when all of it is there: nothing partial after an error). */
static int emit(summary *s, size_t n, const char *path)
{
    if (!path) {
        FILE *tmp = tmpfile();
        int rc = tmp ? write_merged(s, n, tmp) : -1;
        if (rc == 0 && fflush(tmp) == 0) {
            rewind(tmp);
            char buf[1 << 16];
            size_t got;
            while ((got = fread(buf, 1, sizeof buf, tmp)) > 0 && fwrite(buf, 1, got, stdout) == got)
                ;
            rc = ferror(tmp) || fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
            if (rc != 0)
                cli_say("traceconv batch: cannot write the merged summary: %s", strerror(errno));
        } else if (!tmp) {
            cli_say("traceconv batch: cannot write the merged summary: %s", strerror(errno));
        }
        if (tmp)
            fclose(tmp);
        return rc;
    }
    const char *leaf;
    int dirfd = of_open_dir(path, &leaf);
    struct stat st;
    const char *why = dirfd < 0 ? strerror(errno) : !*leaf ? "not a file name" : NULL;
    if (!why && fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (!S_ISREG(st.st_mode) || !batch_is_summary(dirfd, leaf)))
        why = "exists and is not a traceconv batch summary; not replacing it";
    of_file f;
    if (!why && of_begin(&f, dirfd, leaf, OF_REPLACE) != 0)
        why = of_strerror(errno);
    int rc = why ? -1 : write_merged(s, n, f.fp);
    if (!why && rc == 0 && of_commit(&f) != 0) {
        why = of_strerror(errno);
        rc = -1;
    } else if (!why && rc != 0) {
        of_abandon(&f);
    }
    if (why)
        cli_say("traceconv batch: %s: cannot write the merged summary: %s", path, why);
    if (dirfd >= 0)
        close(dirfd);
    return rc;
}

static const char merge_usage[] =
    "usage: traceconv batch --merge-summaries [--summary FILE] SUMMARY...\n"
    "\n"
    "Merge the summaries of the shards of one run (--shard I/N, every I of N once) into\n"
    "the summary one unsharded run writes: its members in that run's order, the totals\n"
    "summed (seconds: the slowest shard's). On stdout, or into FILE (replacing only a\n"
    "summary). Shards of another version, other formats or another N are refused.\n";

int batch_merge_main(int argc, char **argv)
{
    enum { O_MERGE = 256, O_SUMMARY };
    static const struct option longopts[] = {{"merge-summaries", no_argument, 0, O_MERGE},
                                             {"summary", required_argument, 0, O_SUMMARY},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *out = NULL;
    int opt;
    struct rlimit fds; /* every summary stays open for the merge: a run of many shards needs many */
    if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
        fds.rlim_cur = fds.rlim_max;
        setrlimit(RLIMIT_NOFILE, &fds);
    }
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (opt == 'h') {
            fputs(merge_usage, stdout);
            return 0;
        }
        if (opt == O_SUMMARY) {
            out = optarg;
        } else if (opt != O_MERGE) {
            cli_say("traceconv batch: --merge-summaries takes --summary FILE and the summaries, not '%s'",
                    argv[optind - 1]);
            cli_say("Try 'traceconv batch --help'.");
            return EXIT_USAGE;
        }
    }
    size_t n = (size_t)(argc - optind);
    if (!n) {
        cli_say("traceconv batch: --merge-summaries: expected at least one SUMMARY");
        return EXIT_USAGE;
    }
    summary *s = calloc(n, sizeof *s);
    int rc = s ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        s[i].path = argv[optind + (int)i];
        struct stat st;
        s[i].f = fopen(s[i].path, "rb");
        if (!s[i].f || fstat(fileno(s[i].f), &st) != 0 || !S_ISREG(st.st_mode)) {
            cli_say("traceconv batch: %s: cannot read the summary: %s", s[i].path,
                    s[i].f ? "not a regular file" : strerror(errno));
            rc = -1;
        } else {
            s[i].dev = st.st_dev;
            s[i].ino = st.st_ino;
        }
    }
    /* FILE is never one of the summaries: the file itself (a symbolic link to it, a hard
     * link, another spelling of its path), which the merge would replace while it reads it */
    struct stat ost;
    if (rc == 0 && out && stat(out, &ost) == 0)
        for (size_t i = 0; rc == 0 && i < n; i++)
            if (ost.st_dev == s[i].dev && ost.st_ino == s[i].ino) {
                cli_say("traceconv batch: %s: cannot write the merged summary: it is %s, one of the summaries merged; "
                        "not replacing it",
                        out, s[i].path);
                rc = -1;
            }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = check_summary(&s[i]);
    if (rc == 0)
        rc = check_run(s, n);
    if (rc == 0)
        rc = emit(s, n, out);
    for (size_t i = 0; s && i < n; i++) {
        if (s[i].f)
            fclose(s[i].f);
        free(s[i].buf);
        cJSON_Delete(s[i].generator);
        cJSON_Delete(s[i].formats);
        cJSON_Delete(s[i].options);
    }
    free(s);
    free(scratch);
    scratch = NULL; /* the merge may run again in this process (tests/fuzz/fuzz_merge.c) */
    scratch_cap = 0;
    return rc == 0 ? 0 : EXIT_FAILED;
}
