/*
 * systrace.c - Android systrace / atrace input: ftrace text (`cat trace`,
 * `atrace`), the same behind `TRACE:\n` (adb atrace output), `TRACE:\n` + a
 * zlib stream (`atrace -z`, "ctrace"), and systrace HTML (every
 * `<script class="trace-data" type="application/text">` block).
 * Spec: shared/docs/formats/SYSTRACE.md; Perfetto's reading of it:
 * shared/docs/outputs/PERFETTO-IMPORT.md §4.
 *
 * A line is `TASK-TID [(TGID|-----)] [CPU] [FLAGS] SECS.FRAC: EVENT: DETAILS`.
 * The task name may hold spaces and dashes, so (as Perfetto does) the line is
 * split at the leftmost `-<digits> ` after which the rest of the prefix
 * matches; flags are optional (4 or 5 chars), the TGID column too. Only the
 * atrace print events (`tracing_mark_write`, `0`, `print`) become records;
 * their payload (B|pid|name, E, C|pid|name|value[|cat], S/F, I, N, G/H) is
 * read by the core's one atrace parser (atrace.c, which states the grammar),
 * the same as the Rhea reader's.
 * The scheduler's events (sched_switch, sched_waking, sched_wakeup[_new],
 * cpu_frequency, cpu_idle, sched_process_exit, task_rename) become system
 * records (tc_trace.h: kind, CPU, the threads they name, prev_state as the
 * kernel's bits, prios, state), one per line, nothing buffered; a thread only
 * they name gets a thread entry without records. Other ftrace events name
 * threads (their task column) and give them their process (TGID column) but
 * make no records: they are counted (ftrace-events-ignored, a warning that
 * names the commonest kinds, also in the trace metadata). Lines that do not
 * parse, and scheduler lines missing a field they need (or with a CPU above
 * 1023, Perfetto's limit, a pid above 2^31-1, a state beyond 32 bits), are
 * skipped with a bad-line warning.
 *
 * Quirks:
 * - Timestamps are fixed-point `secs.frac` (6 digits native, up to 9 kept,
 *   more truncated) read as integers into ns: never through a double.
 * - Threads are keyed by tid (Linux tids are system-wide). A thread's process
 *   is the first numeric TGID column or payload pid seen for it; a thread
 *   that never shows one becomes its own process (pid = tid).
 * - `<...>` (and Perfetto's `<unknown>`) carry no name. Thread names, as
 *   Perfetto gives them: the latest of the task column and of the scheduler
 *   events that name a tid (sched_switch prev_/next_comm, sched_waking/
 *   wakeup[_new] comm, task_newtask comm, task_rename newcomm), except that a
 *   14/15-byte kernel comm never replaces the longer name it was cut from; a
 *   thread still unnamed, or named by such a cut, takes its PROCESS DUMP
 *   name (catapult's rule). Process names: PROCESS DUMP (`ps` NAME column,
 *   first snapshot wins), else the name of the thread whose tid is the pid
 *   (also when that thread has no line of its own).
 * - An async end (F, H) whose (process, name, cookie) has no open begin (S,
 *   G) is dropped and counted (unmatched-async-end), here rather than in each
 *   writer, so that every output shows the same async slices. The process is
 *   the thread's, as the writers key async slices, once a line gave it.
 * - PROCESS DUMP blocks are read wherever they are in the HTML (Perfetto
 *   needs them before the ftrace block); every ftrace block is read, in file
 *   order (Perfetto stops after the first). CGROUP DUMP and the controller
 *   JSON block are skipped.
 * - A trace-data block without its `</script>` (a cut file) is read to the
 *   end of the input, with a truncated-input warning.
 * - The legacy HTML (`var linuxPerfData = "...\n\`, before 2015) and
 *   trace2html's `viewer-data` HTML are refused with one clear error; a bare
 *   linuxPerfData body (lines ending in a literal `\n\`) is read as text.
 * - zlib data is inflated by the source layer into an unlinked temporary
 *   file that is mapped and released as it is read (memory stays flat),
 *   with gzip input's guard (--max-input after decompression; more than
 *   200:1 beyond 256 MiB refused as a bomb); messages then give offsets in
 *   the decompressed text, and say so. CRLF-mangled zlib is not repaired.
 *   systrace HTML never holds zlib (catapult inflates before writing).
 * - Record order is the file's: atrace output is time-ordered; normalize
 *   clamps a thread whose time goes backwards (e.g. several HTML blocks).
 */
#include "tc_base.h"
#include "tc_atrace.h"
#include "tc_diag.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>

#define MOD "systrace"
#define TRACE_MARK "TRACE:"
#define PID_UNSET UINT64_MAX
#define PID_AT_END (UINT64_MAX - 1)
#define NAME_SLOTS 64
#define PROBE_HTML_MAX ((size_t)16 << 20)

typedef struct range {
    size_t start, end; /* byte offsets into the text */
} range;

typedef struct dump_proc {
    int64_t pid, ppid;
    const char *name;
    size_t len;
} dump_proc;

typedef struct dump_thread {
    int64_t pid, tid;
    const char *name;
    size_t len;
} dump_thread;

/* A thread's latest name from the task column or a scheduler event (pass 1). */
typedef struct seen_name {
    char *s;
    uint32_t len, cap;
    uint64_t offset; /* of the line that gave it, for a limit's message */
} seen_name;

/* An async slice key (owner, name, cookie) and how many of its begins are not ended. */
typedef struct async_key {
    uint64_t owner;     /* async_owner() */
    uint32_t name;      /* method index */
    int64_t cookie;
    uint32_t open;
    bool used;          /* false: an empty slot */
} async_key;

/* A process listing being read (listing_line): its table's form, and old `ps -t`'s last process. */
enum listing_mode { LIST_NONE, LIST_LONG, LIST_SHORT, LIST_OLD };
typedef struct listing {
    enum listing_mode mode;
    int64_t pid, vsize, rss;
} listing;

typedef struct systrace {
    const char *text;      /* what lines are read from: the input, or the text made from it */
    size_t len;
    bool spooled;          /* text is spool's: the inflated zlib data, or the decoded linuxPerfData string */
    const char *offset_note; /* what messages' offsets count: "" the input's bytes, else which text's */
    tci_source spool;      /* the text made from the input, mapped from a temporary file */
    bool html;
    range *blocks;         /* ftrace text ranges, in file order */
    uint32_t n_blocks, cap_blocks;
    uint32_t block;        /* read cursor */
    size_t pos;
    tci_idmap tid_thread;  /* tid -> thread index */
    tci_idmap pid_process; /* pid -> process index */
    uint64_t *pid_at;      /* per thread: offset of the line that gave its process (PID_UNSET: none yet,
                              PID_AT_END: given at the end of pass 1) */
    uint32_t cap_pid_at;
    dump_proc *procs;
    uint32_t n_procs, cap_procs;
    dump_thread *dthreads;
    uint32_t n_dthreads, cap_dthreads;
    tci_idmap tid_name;    /* tid -> its latest name in names[] (pass 1) */
    seen_name *names;
    uint32_t n_names, cap_names;
    async_key *async;      /* open-addressed set of (pid, name, cookie) with open async slices */
    uint32_t cap_async, n_async;
    uint64_t lines_ok, lines_bad;
    bool tables_done;      /* end of pass 1 seen */
    struct listing text_listing; /* a process listing in the text (old systrace's `ps -t`), as read so far */
    struct name_slot {     /* event_name's cache: an event's name and its method */
        char text[40];
        uint8_t len;       /* 0: empty */
        uint32_t method;
    } names_cache[NAME_SLOTS];
    struct sched_tid {     /* tids only scheduler events named so far (pass 1), in order */
        uint64_t tid, offset;
    } *sched_tids;
    uint32_t n_sched_tids, cap_sched_tids;
    tci_idmap sched_tid_seen;
} systrace;

/* ---- small parsers (pure) ------------------------------------------------------ */

/* `secs.frac` -> ns, fixed point: frac digits beyond 9 are truncated. */
static bool parse_ts(const char *p, size_t n, int64_t *out)
{
    const char *dot = memchr(p, '.', n);
    if (!dot)
        return false;
    size_t ns_ = (size_t)(dot - p), nf = n - ns_ - 1;
    uint64_t secs;
    if (!tci_parse_u64(p, ns_, 9000000000ull, &secs) || nf == 0)
        return false;
    int64_t frac = 0;
    for (size_t i = 0; i < nf; i++) {
        if (!tci_is_digit(dot[1 + i]))
            return false;
        if (i < 9)
            frac = frac * 10 + (dot[1 + i] - '0');
    }
    for (size_t i = nf; i < 9; i++)
        frac *= 10;
    *out = (int64_t)secs * 1000000000 + frac;
    return true;
}

typedef struct fline {
    const char *task;
    size_t task_len;
    uint64_t tid;
    uint64_t cpu;       /* the [CPU] column */
    int64_t tgid;       /* -1: none or dashes */
    bool tgid_column;
    int64_t ts;
    const char *event, *details;
    size_t event_len, details_len;
} fline;

/* The rest of the prefix from a '-' at p[at]: `-TID (TGID) [CPU] FLAGS TS: EVENT: `. */
static bool prefix_at(const char *p, size_t n, size_t at, fline *f)
{
    size_t i = at + 1, d = i;
    while (i < n && tci_is_digit(p[i]))
        i++;
    if (!tci_parse_u64(p + d, i - d, UINT64_MAX, &f->tid) || i >= n || !tci_is_blank(p[i]))
        return false;
    while (i < n && tci_is_blank(p[i]))
        i++;
    f->tgid = -1;
    f->tgid_column = false;
    if (i < n && p[i] == '(') {
        i++;
        while (i < n && tci_is_blank(p[i]))
            i++;
        d = i;
        if (i < n && p[i] == '-') {
            while (i < n && p[i] == '-')
                i++;
        } else {
            uint64_t g;
            while (i < n && tci_is_digit(p[i]))
                i++;
            if (!tci_parse_u64(p + d, i - d, INT64_MAX, &g))
                return false;
            f->tgid = (int64_t)g;
        }
        while (i < n && tci_is_blank(p[i]))
            i++;
        if (i >= n || p[i] != ')')
            return false;
        i++;
        f->tgid_column = true;
        while (i < n && tci_is_blank(p[i]))
            i++;
    }
    if (i >= n || p[i] != '[')
        return false;
    d = ++i;
    while (i < n && tci_is_digit(p[i]))
        i++;
    if (i == d || i - d > 6 || i >= n || p[i] != ']' || !tci_parse_u64(p + d, i - d, 999999, &f->cpu))
        return false;
    i++;
    for (int tok = 0; tok < 2; tok++) { /* [flags] timestamp: */
        while (i < n && tci_is_blank(p[i]))
            i++;
        size_t s = i;
        while (i < n && !tci_is_blank(p[i]))
            i++;
        if (i - s >= 2 && p[i - 1] == ':' && parse_ts(p + s, i - s - 1, &f->ts))
            break;
        if (tok == 1 || i - s < 3 || i - s > 6)
            return false;
        for (size_t k = s; k < i; k++) /* irq flags: "d..2", "dNs1.", ... */
            if (!(p[k] == '.' || tci_is_digit(p[k]) || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z')))
                return false;
    }
    if (i >= n || !tci_is_blank(p[i]))
        return false;
    while (i < n && tci_is_blank(p[i]))
        i++;
    size_t s = i;
    while (i < n && !tci_is_blank(p[i]))
        i++;
    if (i - s < 2 || p[i - 1] != ':')
        return false;
    f->event = p + s;
    f->event_len = i - s - 1;
    while (i < n && tci_is_blank(p[i]))
        i++; /* the space after "event:" (trace-cmd pads the names to a column) */
    f->details = p + i;
    f->details_len = n - i;
    size_t t0 = 0;
    while (t0 < at && tci_is_blank(p[t0]))
        t0++;
    f->task = p + t0;
    f->task_len = at - t0;
    return true;
}

static bool parse_line(const char *p, size_t n, fline *f)
{
    for (const char *q = p; (q = memchr(q, '-', n - (size_t)(q - p))) != NULL; q++)
        if (prefix_at(p, n, (size_t)(q - p), f))
            return true;
    return false;
}

/* A line without the literal `\n\` that ends lines of a legacy linuxPerfData JS string. */
static size_t without_js_newline(const char *p, size_t n)
{
    if (n >= 3 && p[n - 3] == '\\' && p[n - 2] == 'n' && p[n - 1] == '\\')
        n -= 3;
    return n;
}

/* `CPU 3 is empty` (trace-cmd report's preamble). */
static bool empty_cpu_line(const char *p, size_t n)
{
    static const char head[] = "CPU ", tail[] = " is empty";
    size_t h = sizeof head - 1, t = sizeof tail - 1, i = h;
    if (n <= h + t || memcmp(p, head, h) || memcmp(p + n - t, tail, t))
        return false;
    while (i < n - t && tci_is_digit(p[i]))
        i++;
    return i == n - t && i > h;
}

/* Blank, a `#` comment, or trace-cmd report's preamble (`version = 6`, `CPU 3 is empty`,
 * `cpus=8`): not an event line. */
static bool skip_line(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && tci_is_blank(p[i]))
        i++;
    return i == n || p[i] == '#' || (n - i >= 5 && !memcmp(p + i, "cpus=", 5)) ||
           (n - i == 6 && !memcmp(p + i, TRACE_MARK, 6)) || (n - i > 10 && !memcmp(p + i, "version = ", 10)) ||
           empty_cpu_line(p + i, n - i);
}

/* The line at *pos (text.h: lines end at LF, the CRs before it are not theirs). */
static bool next_line(const char *text, size_t end, size_t *pos, const char **l, size_t *n, size_t *at)
{
    tci_line line;
    if (!tci_next_line(text, end, pos, &line))
        return false;
    *l = line.p;
    *at = line.off;
    *n = without_js_newline(line.p, line.n);
    return true;
}

static const char *find(const char *h, size_t hn, const char *needle)
{
    size_t nn = strlen(needle);
    if (nn > hn)
        return NULL;
    for (const char *p = h; (p = memchr(p, needle[0], hn - nn + 1 - (size_t)(p - h))) != NULL; p++)
        if (!memcmp(p, needle, nn))
            return p;
    return NULL;
}

static bool starts_ci(const uint8_t *p, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n < k)
        return false;
    for (size_t i = 0; i < k; i++) {
        char c = (char)p[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return false;
    }
    return true;
}

/* Offset just after a `TRACE:` line near the start (adb atrace output), or 0. */
static size_t after_trace_mark(const uint8_t *buf, size_t len)
{
    size_t look = len < 4096 ? len : 4096;
    const char *p = (const char *)buf;
    for (const char *q = p; (q = find(q, look - (size_t)(q - p), TRACE_MARK)) != NULL; q++) {
        size_t i = (size_t)(q - p);
        if (i && p[i - 1] != '\n')
            continue;
        i += 6;
        if (i < len && p[i] == '\r')
            i++;
        if (i < len && p[i] == '\n')
            return i + 1;
    }
    return 0;
}

static size_t skip_bom_space(const uint8_t *buf, size_t len)
{
    size_t i = len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF ? 3 : 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
        i++;
    return i;
}

static bool is_zlib(const uint8_t *p, size_t n)
{
    return n >= 2 && (p[0] & 0x0F) == 8 && (p[0] >> 4) <= 7 && ((p[0] << 8) | p[1]) % 31 == 0;
}

/* `<!DOCTYPE html>`, `<!-- ...`, `<html>`, `<head>`; not `<...>-123` or `<idle>-0`. */
static bool looks_html(const uint8_t *p, size_t n)
{
    return starts_ci(p, n, "<!") || starts_ci(p, n, "<html") || starts_ci(p, n, "<head");
}

/* ---- probe ------------------------------------------------------------------------ */

static int systrace_probe(const uint8_t *buf, size_t len, const char *filename)
{
    size_t i = skip_bom_space(buf, len);
    size_t fl = filename ? strlen(filename) : 0;
    int hint = 0;
    if (fl > 9 && !strcmp(filename + fl - 9, ".systrace"))
        hint = 10;
    else if (fl > 5 && (!strcmp(filename + fl - 5, ".html") || !strcmp(filename + fl - 4, ".txt") ||
                        !strcmp(filename + fl - 4, ".htm")))
        hint = 5;
    if (i < len && (buf[i] == '{' || buf[i] == '[' || buf[i] == '*'))
        return 0; /* JSON, ART's *version */
    if (len >= 4 && tci_le32(buf) == 0x574F4C53)
        return 0; /* ART's SLOW */
    if (looks_html(buf + i, len - i)) {
        /* the data follows the viewer (a few MB of JavaScript): look in the first 16 MiB, not
         * in a whole page of hundreds, whose pages a search would map all at once */
        const char *p = (const char *)buf;
        size_t look_html = len < PROBE_HTML_MAX ? len : PROBE_HTML_MAX;
        if (find(p, look_html, "class=\"trace-data\"") || find(p, look_html, "linuxPerfData"))
            return 90;
        return 10 + hint; /* some HTML: ours to say clearly that it holds no trace (or read it, with -i) */
    }
    size_t look = len < 128 ? len : 128;
    if (find((const char *)buf, look, "# tracer") || after_trace_mark(buf, len))
        return 95;
    /* ftrace-looking lines among the first few */
    size_t pos = i, end = len < 8192 ? len : 8192, at, n;
    const char *l;
    fline f;
    for (int k = 0; k < 16 && next_line((const char *)buf, end, &pos, &l, &n, &at);) {
        if (skip_line(l, n))
            continue;
        if (parse_line(l, n, &f))
            return 85;
        k++;
    }
    return hint;
}

/* ---- open: where the text is ---------------------------------------------------------- */

static int add_block(tci_rctx *r, systrace *s, size_t start, size_t end)
{
    if (tci_grow((void **)&s->blocks, &s->cap_blocks, s->n_blocks, sizeof *s->blocks) != 0)
        return tci_error(r->diag, TC_ERR_NOMEM, MOD, UINT64_MAX, "out of memory");
    s->blocks[s->n_blocks++] = (range){start, end};
    return TC_OK;
}

static int inflate_text(tci_rctx *r, systrace *s, size_t at)
{
    int rc = tci_source_inflate(&s->spool, r->data + at, r->size - at, MOD, at, r->opt, r->diag);
    if (rc != TC_OK)
        return rc;
    s->spooled = true;
    s->offset_note = " (offset in the decompressed text)";
    s->text = (const char *)s->spool.data;
    s->len = s->spool.size;
    /* inflated text may itself start with TRACE: or have it absent */
    size_t t = after_trace_mark(s->spool.data, s->spool.size);
    return add_block(r, s, t, s->len);
}

/* A process listing: systrace's PROCESS DUMP, `ps -A -o USER,PID,PPID,VSZ,RSS,WCHAN,ADDR=PC,S,
 * NAME,COMM` (PPID = token 2, NAME = token 8) and `ps -AT -o USER,PID,TID,CMD` (the thread's
 * name = the rest of the line), each taken at the start and at the stop; or old systrace's
 * `ps -t` (header `USER PID PPID VSIZE RSS WCHAN PC NAME`, appended to the ftrace text), which
 * lists each process then its threads in one table: a row whose PPID is the process row just
 * above and whose VSIZE and RSS are that process's is its thread, any other row a process. */

static int add_dump_proc(tci_rctx *r, systrace *s, dump_proc d, uint64_t at)
{
    if (tci_grow((void **)&s->procs, &s->cap_procs, s->n_procs, sizeof *s->procs) != 0)
        return tci_error(r->diag, TC_ERR_NOMEM, MOD, at, "out of memory");
    s->procs[s->n_procs++] = d;
    return TC_OK;
}

static int add_dump_thread(tci_rctx *r, systrace *s, dump_thread d, uint64_t at)
{
    if (tci_grow((void **)&s->dthreads, &s->cap_dthreads, s->n_dthreads, sizeof *s->dthreads) != 0)
        return tci_error(r->diag, TC_ERR_NOMEM, MOD, at, "out of memory");
    s->dthreads[s->n_dthreads++] = d;
    return TC_OK;
}

static bool valid_id(int64_t id) { return id > 0 && id <= INT32_MAX; }

/* One line of a listing: TC_OK when it is a header or a row (*row set for a row), TCI_NO_ROW when
 * it is neither, or an error. */
#define TCI_NO_ROW 1
static int listing_line(tci_rctx *r, systrace *s, listing *ls, const char *l, size_t n, uint64_t at, bool keep)
{
    const char *tok[10];
    size_t tlen[10], nt = 0, i = 0;
    while (nt < 10) {
        while (i < n && tci_is_blank(l[i]))
            i++;
        if (i == n)
            break;
        tok[nt] = l + i;
        while (i < n && !tci_is_blank(l[i]))
            i++;
        tlen[nt] = (size_t)(l + i - tok[nt]);
        nt++;
    }
    if (nt == 0 || (nt == 2 && tlen[0] == 7 && !memcmp(tok[0], "PROCESS", 7)))
        return TC_OK;
    if (nt >= 3 && tlen[0] == 4 && !memcmp(tok[0], "USER", 4) && tlen[1] == 3 && !memcmp(tok[1], "PID", 3)) {
        ls->mode = tlen[2] == 3 && !memcmp(tok[2], "TID", 3)                  ? LIST_SHORT
                   : nt >= 4 && tlen[3] == 5 && !memcmp(tok[3], "VSIZE", 5) ? LIST_OLD
                                                                          : LIST_LONG;
        ls->pid = -1;
        return TC_OK;
    }
    int64_t pid, ppid, tid, vsize, rss;
    if ((ls->mode == LIST_LONG || ls->mode == LIST_OLD) && nt >= 9 && tci_parse_i64(tok[1], tlen[1], &pid) &&
        tci_parse_i64(tok[2], tlen[2], &ppid) && valid_id(pid)) {
        if (ls->mode == LIST_OLD && tci_parse_i64(tok[3], tlen[3], &vsize) && tci_parse_i64(tok[4], tlen[4], &rss)) {
            if (ppid == ls->pid && vsize == ls->vsize && rss == ls->rss) /* a thread of the process above */
                return keep ? add_dump_thread(r, s, (dump_thread){ls->pid, pid, tok[8], tlen[8]}, at) : TC_OK;
            ls->pid = pid;
            ls->vsize = vsize;
            ls->rss = rss;
            int rc = keep ? add_dump_thread(r, s, (dump_thread){pid, pid, tok[8], tlen[8]}, at) : TC_OK;
            if (rc != TC_OK)
                return rc;
        }
        return keep ? add_dump_proc(r, s, (dump_proc){pid, ppid >= 0 && ppid <= INT32_MAX ? ppid : -1, tok[8], tlen[8]}, at) : TC_OK;
    }
    if (ls->mode == LIST_SHORT && nt >= 4 && tci_parse_i64(tok[1], tlen[1], &pid) &&
        tci_parse_i64(tok[2], tlen[2], &tid) && valid_id(pid) && valid_id(tid)) {
        size_t len = (size_t)(l + n - tok[3]);
        while (len && tci_is_blank(tok[3][len - 1]))
            len--;
        return keep ? add_dump_thread(r, s, (dump_thread){pid, tid, tok[3], len}, at) : TC_OK;
    }
    return TCI_NO_ROW;
}

/* Where a listing starts in text: `PROCESS DUMP`, or a `USER PID ...` header. */
static bool starts_listing(const char *l, size_t n)
{
    while (n && tci_is_blank(*l))
        l++, n--;
    return (n >= 12 && !memcmp(l, "PROCESS DUMP", 12)) || (n > 9 && !memcmp(l, "USER", 4) && tci_is_blank(l[4]));
}

/* A PROCESS DUMP block of an HTML page; a row of no form is a bad line. */
static int read_dump(tci_rctx *r, systrace *s, size_t start, size_t end)
{
    listing ls = {LIST_NONE, -1, 0, 0};
    size_t pos = start, n, at;
    const char *l;
    while (next_line(s->text, end, &pos, &l, &n, &at)) {
        int rc = listing_line(r, s, &ls, l, n, at, true);
        if (rc == TCI_NO_ROW) /* read once, at open */
            tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, at, "PROCESS DUMP: neither a process (USER PID PPID ... NAME) "
                     "nor a thread (USER PID TID CMD) of positive ids (\"%.*s%s\"); skipped", (int)(n > 40 ? 40 : n), l,
                     n > 40 ? "..." : "");
        else if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* First non-blank line of [start, end), or NULL. */
static const char *first_line(const systrace *s, size_t start, size_t end, size_t *n)
{
    size_t pos = start, at;
    const char *l;
    while (next_line(s->text, end, &pos, &l, n, &at)) {
        size_t i = 0;
        while (i < *n && tci_is_blank(l[i]))
            i++;
        if (i < *n) {
            *n -= i;
            return l + i;
        }
    }
    return NULL;
}

/* ---- open: the page's trace-data elements, or its linuxPerfData string ---------------- */

static bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$'; }

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* [p, p+n) starts with lit (lower case), in any case. */
static bool at_ci(const char *p, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n < k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (lower(p[i]) != lit[i])
            return false;
    return true;
}

static bool ends_tag_name(const char *p, const char *end) { return p == end || *p == '>' || *p == '/' || tci_is_blank(*p); }

/* The elements whose content is text to an HTML parser, never markup: a `<` inside them starts
 * no tag (the viewer's JavaScript holds `<script class="trace-data"` in a regular expression). */
static const char *raw_text_element(const char *q, const char *end)
{
    static const char *const names[] = {"script", "style", "title", "textarea", "xmp"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        size_t n = strlen(names[k]);
        if ((size_t)(end - q) > n + 1 && at_ci(q + 1, (size_t)(end - q - 1), names[k]) && ends_tag_name(q + 1 + n, end))
            return names[k];
    }
    return NULL;
}

/* The '>' that ends the tag starting at q (quoted attribute values may hold one), or NULL. */
static const char *tag_end(const char *q, const char *end)
{
    char quote = 0;
    for (const char *c = q + 1; c < end; c++) {
        if (quote)
            quote = *c == quote ? 0 : quote;
        else if (*c == '"' || *c == '\'')
            quote = *c;
        else if (*c == '>')
            return c;
    }
    return NULL;
}

/* Whether the tag [q, gt) has trace-data among the words of its class attribute. */
static bool trace_data_class(const char *q, const char *gt)
{
    const char *c = q + 1;
    while (c < gt && !tci_is_blank(*c) && *c != '/')
        c++; /* the tag's name */
    while (c < gt) {
        while (c < gt && (tci_is_blank(*c) || *c == '/'))
            c++;
        const char *name = c;
        while (c < gt && *c != '=' && !tci_is_blank(*c) && *c != '/')
            c++;
        size_t name_len = (size_t)(c - name);
        while (c < gt && tci_is_blank(*c))
            c++;
        const char *v = c, *ve = c;
        if (c < gt && *c == '=') {
            c++;
            while (c < gt && tci_is_blank(*c))
                c++;
            if (c < gt && (*c == '"' || *c == '\'')) {
                char quote = *c++;
                v = c;
                while (c < gt && *c != quote)
                    c++;
                ve = c;
                c += c < gt;
            } else {
                v = c;
                while (c < gt && !tci_is_blank(*c))
                    c++;
                ve = c;
            }
        }
        if (name_len == 5 && at_ci(name, 5, "class")) {
            for (const char *w = v; w < ve;) {
                while (w < ve && tci_is_blank(*w))
                    w++;
                const char *we = w;
                while (we < ve && !tci_is_blank(*we))
                    we++;
                if (we - w == 10 && !memcmp(w, "trace-data", 10))
                    return true;
                w = we;
            }
        }
        if (name_len == 0)
            c++;
    }
    return false;
}

/* The first byte c at or after from, or NULL: looked for a MiB at a time, the pages looked at
 * given back as it goes (a page is mapped: a data block of 100 MB holds no '<', and one memchr
 * over it kept it all in memory). */
static const char *find_byte(tci_rctx *r, const systrace *s, size_t from, char c)
{
    const size_t win = (size_t)1 << 20;
    for (size_t at = from; at < s->len; at += win) {
        size_t n = s->len - at < win ? s->len - at : win;
        const char *q = memchr(s->text + at, c, n);
        tci_source_release(r->source, q ? (size_t)(q - s->text) : at + n); /* cheap: it acts once per 4 MiB */
        if (q)
            return q;
    }
    return NULL;
}

/* The first needle in [from, to), or NULL: looked for a MiB at a time, as find_byte does. */
static const char *find_text(tci_rctx *r, const systrace *s, size_t from, size_t to, const char *needle)
{
    size_t nn = strlen(needle);
    const size_t win = (size_t)1 << 20;
    for (size_t at = from; at < to && to - at >= nn;) {
        size_t end = to - at > win + nn ? at + win + nn : to;
        const char *q = find(s->text + at, end - at, needle);
        tci_source_release(r->source, q ? (size_t)(q - s->text) : end);
        if (q || end == to)
            return q;
        at = end - nn + 1; /* a match across the window's end is still found */
    }
    return NULL;
}

/* The `</name` (any case) that ends a raw text element whose content starts at from, or NULL
 * (the viewer is megabytes of JavaScript, a data block hundreds). */
static const char *close_tag(tci_rctx *r, const systrace *s, size_t from, const char *name)
{
    const char *p = s->text, *end = p + s->len;
    size_t n = strlen(name);
    for (const char *q = p + from; (q = find_byte(r, s, (size_t)(q - p), '<')) != NULL; q++)
        if ((size_t)(end - q) > n + 2 && q[1] == '/' && at_ci(q + 2, (size_t)(end - q - 2), name) &&
            ends_tag_name(q + 2 + n, end))
            return q;
    return NULL;
}

/* The first `-->` at or after from, or NULL (a comment may be long too). */
static const char *comment_end(tci_rctx *r, const systrace *s, size_t from)
{
    for (const char *q = s->text + from; (q = find_byte(r, s, (size_t)(q - s->text), '-')) != NULL; q++)
        if (s->len - (size_t)(q - s->text) >= 3 && q[1] == '-' && q[2] == '>')
            return q;
    return NULL;
}

/* Whether the text at `at` (in a script whose content starts at from) begins a statement,
 * after an optional var/let/const: not a part of an expression, a string or a regular expression
 * (the 2013 viewer matches `/^  var linuxPerfData = "\\$/` in other pages). */
static bool statement_start(const systrace *s, size_t from, size_t at)
{
    const char *t = s->text;
    size_t i = at;
    while (i > from && (tci_is_blank(t[i - 1]) || t[i - 1] == '\n' || t[i - 1] == '\r'))
        i--;
    static const char *const decl[] = {"var", "let", "const"};
    for (size_t k = 0; k < 3; k++) {
        size_t n = strlen(decl[k]);
        if (i >= from + n && !memcmp(t + i - n, decl[k], n) && i < at && (i - n == from || !is_word(t[i - n - 1]))) {
            i -= n;
            while (i > from && (tci_is_blank(t[i - 1]) || t[i - 1] == '\n' || t[i - 1] == '\r'))
                i--;
            break;
        }
    }
    return i == from || t[i - 1] == ';' || t[i - 1] == '{' || t[i - 1] == '}' || t[i - 1] == '\n';
}

/* Where the string assigned to linuxPerfData starts in [from, to) (its opening quote), or 0. */
static size_t legacy_string(tci_rctx *r, const systrace *s, size_t from, size_t to)
{
    static const char var[] = "linuxPerfData";
    for (const char *q = s->text + from; (q = find_text(r, s, (size_t)(q - s->text), to, var)) != NULL; q++) {
        size_t i = (size_t)(q - s->text) + sizeof var - 1;
        while (i < to && tci_is_blank(s->text[i]))
            i++;
        if (i >= to || s->text[i] != '=')
            continue; /* a use of it (the viewer's `if (linuxPerfData)`), not the assignment */
        i++;
        while (i < to && (tci_is_blank(s->text[i]) || s->text[i] == '\n' || s->text[i] == '\r'))
            i++;
        if (i < to && (s->text[i] == '"' || s->text[i] == '\'') && statement_start(s, from, (size_t)(q - s->text)))
            return i;
    }
    return 0;
}

static int read_trace_data(tci_rctx *r, systrace *s, size_t start, size_t end)
{
    size_t fn;
    const char *first = first_line(s, start, end, &fn);
    if (!first || (fn >= 11 && !memcmp(first, "CGROUP DUMP", 11)) || *first == '{' || *first == '[')
        return TC_OK; /* empty, cgroups, the controller's JSON */
    if (fn >= 12 && !memcmp(first, "PROCESS DUMP", 12))
        return read_dump(r, s, start, end);
    return add_block(r, s, start, end);
}

/* The data blocks of a systrace page, found as an HTML parser finds elements: every `<script>`
 * whose class is trace-data, outside comments and outside the content of other scripts and
 * raw text elements (a script's content ends at the first `</script`, whatever it holds). A
 * page without one may hold the pre-2015 form: the ftrace text as the JavaScript string
 * assigned to linuxPerfData (*legacy: where it starts). */
static int scan_html(tci_rctx *r, systrace *s, bool legacy_only, size_t *legacy, uint32_t *n_found)
{
    const char *p = s->text, *end = p + s->len;
    size_t at = 0;
    *legacy = 0;
    *n_found = 0;
    const char *q;
    while (at < s->len && (q = find_byte(r, s, at, '<')) != NULL) {
        size_t qo = (size_t)(q - p);
        if (end - q >= 4 && !memcmp(q, "<!--", 4)) {
            const char *e = comment_end(r, s, qo + 4);
            at = e ? (size_t)(e - p) + 3 : s->len;
            continue;
        }
        const char *raw = raw_text_element(q, end);
        const char *gt = raw ? tag_end(q, end) : NULL;
        if (!gt) {
            at = qo + 1;
            continue;
        }
        size_t start = (size_t)(gt - p) + 1;
        const char *close = close_tag(r, s, start, raw);
        size_t stop = close ? (size_t)(close - p) : s->len;
        at = close ? stop + 2 + strlen(raw) : s->len;
        if (strcmp(raw, "script"))
            continue;
        if (legacy_only) { /* a second walk, in a page without a trace-data element */
            if ((*legacy = legacy_string(r, s, start, stop)) != 0)
                return TC_OK;
        } else if (trace_data_class(q, gt)) {
            (*n_found)++;
            if (!close)
                tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, qo,
                         "a trace-data block has no closing </script> (the file is cut?); read to the end of the file");
            int rc = read_trace_data(r, s, start, stop);
            if (rc != TC_OK)
                return rc;
        }
    }
    return TC_OK;
}

/* ---- the pre-2015 page: linuxPerfData's JavaScript string --------------------------------- */

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* n hex digits at p (false: fewer). */
static bool hex_n(const char *p, const char *end, int n, uint32_t *v)
{
    *v = 0;
    for (int k = 0; k < n; k++) {
        int d = p + k < end ? hex_digit(p[k]) : -1;
        if (d < 0)
            return false;
        *v = *v << 4 | (uint32_t)d;
    }
    return true;
}

static size_t utf8_of(uint32_t cp, char *o)
{
    if (cp >= 0xD800 && cp <= 0xDFFF)
        cp = 0xFFFD; /* half a surrogate pair */
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The escape at *c (just after its backslash), decoded into o: its length (0: a line
 * continuation, which stands for nothing). *c moves past it. */
static size_t js_escape(const char **c, const char *end, char *o)
{
    char e = *(*c)++;
    uint32_t v, lo;
    switch (e) {
    case 'n': o[0] = '\n'; return 1;
    case 't': o[0] = '\t'; return 1;
    case 'r': o[0] = '\r'; return 1;
    case 'b': o[0] = '\b'; return 1;
    case 'f': o[0] = '\f'; return 1;
    case 'v': o[0] = '\v'; return 1;
    case '0': o[0] = 0; return 1;
    case '\r':
        if (*c < end && **c == '\n')
            (*c)++;
        return 0;
    case '\n':
        return 0;
    case 'x':
        if (!hex_n(*c, end, 2, &v))
            break;
        *c += 2;
        return utf8_of(v, o);
    case 'u':
        if (*c < end && **c == '{') { /* \u{1F600} */
            const char *d = *c + 1;
            v = 0;
            while (d < end && hex_digit(*d) >= 0 && v <= 0x10FFFF)
                v = v << 4 | (uint32_t)hex_digit(*d++);
            if (d >= end || *d != '}' || d == *c + 1 || v > 0x10FFFF)
                break;
            *c = d + 1;
            return utf8_of(v, o);
        }
        if (!hex_n(*c, end, 4, &v))
            break;
        *c += 4;
        if (v >= 0xD800 && v <= 0xDBFF && end - *c >= 6 && (*c)[0] == '\\' && (*c)[1] == 'u' &&
            hex_n(*c + 2, end, 4, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
            *c += 6;
            v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
        }
        return utf8_of(v, o);
    default:
        break;
    }
    o[0] = e; /* \" \' \\ \/ and any other character: itself */
    return 1;
}

/* The string expression at p[at] (one literal or several joined by `+`) decoded into w: the
 * text the page's viewer gave its importer. A literal left open at the end of the script (a cut
 * file, or a stub that broke the continuations) is read to there, with a warning. */
static int decode_js_strings(tci_rctx *r, const systrace *s, size_t at, size_t stop, tci_textspool *w)
{
    const char *c = s->text + at, *end = s->text + stop;
    for (int literal = 0;; literal++) {
        while (c < end && (tci_is_blank(*c) || *c == '\n' || *c == '\r'))
            c++;
        if (literal) {
            if (c >= end || *c != '+')
                return TC_OK;
            c++;
            while (c < end && (tci_is_blank(*c) || *c == '\n' || *c == '\r'))
                c++;
        }
        if (c >= end || (*c != '"' && *c != '\''))
            return literal ? TC_OK
                           : tci_error(r->diag, TC_ERR_FORMAT, MOD, (uint64_t)(c - s->text),
                                       "linuxPerfData is not given a string");
        char quote = *c++;
        for (;;) {
            const char *run = c;
            while (c < end && *c != quote && *c != '\\')
                c++;
            tci_source_release(r->source, (uint64_t)(c - s->text)); /* the page's text is read once */
            if (c > run && tci_textspool_put(w, run, (size_t)(c - run)) != TC_OK)
                return TC_ERR_IO;
            if (c >= end) {
                tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, at, "the linuxPerfData string does not end before its "
                         "script does (the file is cut?); read to there");
                return TC_OK;
            }
            if (*c++ == quote)
                break;
            char o[4];
            size_t k = c < end ? js_escape(&c, end, o) : 0;
            if (k && tci_textspool_put(w, o, k) != TC_OK)
                return TC_ERR_IO;
        }
    }
}

/* The legacy page's text, decoded into a temporary file that is then read as atrace text is. */
static int read_legacy(tci_rctx *r, systrace *s, size_t at)
{
    const char *end_script = (const char *)close_tag(r, s, at, "script");
    size_t stop = end_script ? (size_t)(end_script - s->text) : s->len;
    tci_textspool w;
    int rc = tci_textspool_open(&w, MOD, r->opt, r->diag);
    if (rc != TC_OK)
        return rc;
    if ((rc = decode_js_strings(r, s, at, stop, &w)) != TC_OK) {
        tci_textspool_close(&w);
        return rc;
    }
    tci_source_drop(r->source, 0, s->len); /* the page is read: its pages go back */
    if ((rc = tci_textspool_map(&w, &s->spool)) != TC_OK)
        return rc;
    s->spooled = true;
    s->offset_note = " (offset in the text decoded from the page's linuxPerfData string)";
    s->text = (const char *)s->spool.data;
    s->len = s->spool.size;
    return add_block(r, s, after_trace_mark(s->spool.data, s->spool.size), s->len);
}

/* A systrace page: its trace-data blocks, or its linuxPerfData string. */
static int read_html(tci_rctx *r, systrace *s, const char **kind)
{
    size_t legacy;
    uint32_t n_found;
    int rc = scan_html(r, s, false, &legacy, &n_found);
    if (rc == TC_OK && n_found == 0) /* the pre-2015 page? (looked for only now: a page with data
                                       * elements would have its viewer's pages read twice) */
        rc = scan_html(r, s, true, &legacy, &n_found);
    if (rc != TC_OK)
        return rc;
    if (n_found == 0 && legacy) {
        *kind = "legacy HTML (var linuxPerfData)";
        return read_legacy(r, s, legacy);
    }
    if (n_found == 0) {
        const char *q = find_text(r, s, 0, s->len, "id=\"viewer-data\"");
        if (q)
            return tci_error(r->diag, TC_ERR_UNSUPPORTED, MOD, (uint64_t)(q - s->text),
                             "trace2html HTML (viewer-data, gzip+base64) is not supported; "
                             "convert the original trace instead");
        return tci_error(r->diag, TC_ERR_FORMAT, MOD, 0,
                         "HTML without a <script class=\"trace-data\"> element or a linuxPerfData string: "
                         "not a systrace HTML file");
    }
    if (s->n_blocks == 0)
        return tci_error(r->diag, TC_ERR_FORMAT, MOD, UINT64_MAX,
                         "systrace HTML without ftrace data (its trace-data blocks hold only dumps)");
    return TC_OK;
}

static int systrace_open(tci_rctx *r)
{
    systrace *s = r->priv;
    tci_trace *t = r->trace;
    s->text = (const char *)r->data;
    s->len = r->size;
    s->offset_note = "";
    size_t i = skip_bom_space(r->data, r->size);
    int rc;
    const char *kind;
    if (looks_html(r->data + i, r->size - i)) {
        s->html = true;
        kind = "HTML";
        rc = read_html(r, s, &kind);
    } else {
        size_t at = after_trace_mark(r->data, r->size);
        if (at && !(r->size - at >= 8 && !memcmp(r->data + at, "# tracer", 8)) && is_zlib(r->data + at, r->size - at)) {
            kind = "atrace text, zlib-compressed";
            rc = inflate_text(r, s, at);
        } else {
            kind = "atrace text";
            rc = add_block(r, s, at ? at : i, r->size);
        }
    }
    if (rc != TC_OK)
        return rc;
    /* the first event line says which column layout this is */
    const char *layout = "";
    fline f;
    for (uint32_t b = 0; b < s->n_blocks && !*layout; b++) {
        size_t pos = s->blocks[b].start, n, at;
        const char *l;
        for (int k = 0; k < 1000 && next_line(s->text, s->blocks[b].end, &pos, &l, &n, &at); k++)
            if (!skip_line(l, n) && parse_line(l, n, &f)) {
                layout = f.tgid_column ? ", TGID column" : ", no TGID column";
                break;
            }
    }
    if (s->html && !s->spooled)
        snprintf(t->detail, sizeof t->detail, "%s, %u ftrace block%s%s", kind, s->n_blocks, s->n_blocks == 1 ? "" : "s",
                 layout);
    else
        snprintf(t->detail, sizeof t->detail, "%s%s", kind, layout);
    t->sys_text = s->text; /* kernel events' records point into it */
    t->sys_text_len = s->len;
    t->sys_text_mapped = s->spooled ? s->spool.mapped : r->source && r->source->mapped;
    t->start_ns = 0; /* raw times are absolute ns (the kernel's trace clock) */
    t->time_unit_ns = 1;
    t->wrap_bits = 0;
    t->has_wall = true;
    t->has_cpu = false;
    t->clock = TCI_CLOCK_WALL;
    s->block = 0;
    s->pos = s->blocks[0].start;
    return TC_OK;
}

/* ---- thread names: the task column and scheduler events -------------------------- */

static bool same_comm_chars(const char *comm, const char *full, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (comm[i] != full[i] && !(comm[i] == '_' && full[i] == '-'))
            return false;
    return true;
}

/* Is comm the ftrace task field of the thread named full? The kernel keeps 15
 * bytes: the head of a name, or for Java threads with dots its tail (ART's
 * SetThreadName); writers such as Perfetto's traceconv turn '-' into '_'. */
static bool comm_of(const char *comm, size_t n, const char *full, size_t full_len)
{
    if (n > full_len || (n == full_len && !memcmp(comm, full, n)))
        return false; /* longer, or already the same */
    return same_comm_chars(comm, full, n) || same_comm_chars(comm, full + full_len - n, n);
}

/* A kernel comm cut from the longer name full: 15 bytes (16 with the NUL), or
 * 14 where ART copies with strlcpy(buf, s, sizeof buf - 1) (SYSTRACE.md §3.2). */
static bool cut_from(const char *comm, size_t n, const char *full, size_t full_len)
{
    return (n == 15 || n == 14) && n < full_len && comm_of(comm, n, full, full_len);
}

/* Pass 1: tid is called name from this line on. The latest name wins (as in
 * Perfetto), except that a kernel comm never replaces the longer name it was
 * cut from. Names are applied to threads at the end of pass 1, so a name
 * seen before the thread's first line counts too. */
static int note_name(tci_rctx *r, systrace *s, uint64_t tid, const char *name, size_t len, uint64_t off)
{
    if (r->pass != 1 || len == 0)
        return TC_OK;
    uint32_t i = tci_idmap_get(&s->tid_name, tid);
    if (i == TCI_NONE) {
        if (tci_grow((void **)&s->names, &s->cap_names, s->n_names, sizeof *s->names) != 0 ||
            tci_idmap_put(&s->tid_name, tid, s->n_names) != 0)
            return tci_error(r->diag, TC_ERR_NOMEM, MOD, off, "out of memory");
        i = s->n_names++;
        s->names[i] = (seen_name){0};
    }
    seen_name *e = &s->names[i];
    if ((e->len == len && !memcmp(e->s, name, len)) || cut_from(name, len, e->s, e->len))
        return TC_OK;
    if (len >= UINT32_MAX)
        len = UINT32_MAX - 1; /* far above any --max-string: finish_tables refuses it */
    if (len + 1 > e->cap) {
        char *p = realloc(e->s, len + 1);
        if (!p)
            return tci_error(r->diag, TC_ERR_NOMEM, MOD, off, "out of memory");
        e->s = p;
        e->cap = (uint32_t)(len + 1);
    }
    memcpy(e->s, name, len);
    e->s[len] = 0;
    e->len = (uint32_t)len;
    e->offset = off;
    return TC_OK;
}

/* The value of `key` in ftrace event details: from after `key` (at the start
 * or after a space) up to `until` (comms may hold spaces), or to the next
 * space when until is NULL. */
static bool field(const char *p, size_t n, const char *key, const char *until, const char **v, size_t *vn)
{
    size_t kn = strlen(key);
    for (size_t i = 0; i + kn <= n; i++) {
        if ((i && p[i - 1] != ' ') || memcmp(p + i, key, kn))
            continue;
        size_t b = i + kn, e = b;
        if (until) {
            const char *u = find(p + b, n - b, until);
            if (!u)
                return false;
            e = (size_t)(u - p);
        } else {
            while (e < n && !tci_is_blank(p[e]))
                e++;
        }
        *v = p + b;
        *vn = e - b;
        return true;
    }
    return false;
}

static bool field_u64(const char *p, size_t n, const char *key, uint64_t *out)
{
    const char *v;
    size_t vn;
    return field(p, n, key, NULL, &v, &vn) && tci_parse_u64(v, vn, UINT64_MAX, out);
}

/* Names given by one scheduler event: (tid, comm) pairs, tid 0 (the idle
 * task, "swapper/N" per CPU) left out. */
static int sched_names(tci_rctx *r, systrace *s, const fline *f, uint64_t off)
{
    static const struct {
        const char *event, *tid_key, *comm_key, *comm_end;
    } rules[] = {
        {"sched_switch", "prev_pid=", "prev_comm=", " prev_pid="},
        {"sched_switch", "next_pid=", "next_comm=", " next_pid="},
        {"sched_waking", "pid=", "comm=", " pid="},
        {"sched_wakeup", "pid=", "comm=", " pid="},
        {"sched_wakeup_new", "pid=", "comm=", " pid="},
        {"task_newtask", "pid=", "comm=", " clone_flags="},
        {"task_rename", "pid=", "newcomm=", " oom_score_adj="},
    };
    for (size_t k = 0; k < sizeof rules / sizeof *rules; k++) {
        if (strlen(rules[k].event) != f->event_len || memcmp(f->event, rules[k].event, f->event_len))
            continue;
        const char *comm;
        size_t n;
        uint64_t tid;
        if (!field(f->details, f->details_len, rules[k].comm_key, rules[k].comm_end, &comm, &n) ||
            !field_u64(f->details, f->details_len, rules[k].tid_key, &tid) || tid == 0)
            continue;
        int rc = note_name(r, s, tid, comm, n, off);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* ---- scheduler data: records of system events (tc_trace.h) ------------------------- */

#define SCHED_OTHER_KIND 2 /* sched_record: an ftrace event that is not one of ours */

/* prev_state text -> the kernel's bits, as Perfetto's systrace import reads it
 * (TaskState::FromSystrace, then ToRawStateOnlyForSystraceConversions: the
 * pre-4.14 layout, which its importer decodes by default), so that our
 * sched_switch events end threads in the same states as its import of the
 * text: "R" 0, "R+" 0x800 (preempted), S 1, D 2, T 4, t 8, X 0x10, Z 0x20,
 * x 0x40, K 0x80, W 0x100, P 0x200, N 0x400, I 0x402; '|' separates; any
 * other text (or none) is invalid: 0xffff. */
static uint16_t prev_state_bits(const char *p, size_t n)
{
    if (n == 0)
        return 0xffff;
    if (p[0] == 'R')
        return n == 2 && p[1] == '+' ? 0x800 : 0;
    static const struct { char c; uint16_t bits; } flags[] = {
        {'S', 0x1}, {'D', 0x2}, {'T', 0x4}, {'t', 0x8}, {'X', 0x10}, {'Z', 0x20}, {'x', 0x40},
        {'K', 0x80}, {'W', 0x100}, {'P', 0x200}, {'N', 0x400}, {'I', 0x402}};
    uint16_t bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '|')
            continue;
        size_t k = 0;
        while (k < sizeof flags / sizeof *flags && flags[k].c != p[i])
            k++;
        if (k == sizeof flags / sizeof *flags)
            return 0xffff; /* 'R' or '+' after the first byte, or an unknown letter */
        bits |= flags[k].bits;
    }
    return bits;
}

static bool field_i32(const char *p, size_t n, const char *key, int32_t *out)
{
    const char *v;
    size_t vn;
    int64_t x;
    if (!field(p, n, key, NULL, &v, &vn) || !tci_parse_i64(v, vn, &x) || x < INT32_MIN || x > INT32_MAX)
        return false;
    *out = (int32_t)x;
    return true;
}

/* A pid field that names a thread: at most INT32_MAX (Perfetto's pid fields are int32). */
static bool field_tid(const char *p, size_t n, const char *key, uint64_t *out)
{
    return field_u64(p, n, key, out) && *out <= INT32_MAX;
}

/* The thread of a tid a scheduler event names. A tid that no line's task column
 * shows gets its thread at the end of pass 1 (sched_threads), after every task's:
 * the threads keep the order of their first lines, as before scheduler data was
 * read. In pass 1 the record only counts, so it names the line's thread
 * meanwhile. Such a thread has no records: it stays out of the method-level
 * outputs, and the perfetto writer names it in its events. */
static uint32_t sched_thread(tci_rctx *r, systrace *s, uint64_t tid, uint32_t line_th, uint64_t off, int *rc)
{
    uint32_t th = tci_idmap_get(&s->tid_thread, tid);
    *rc = TC_OK;
    if (th != TCI_NONE)
        return th;
    if (r->pass != 1) {
        *rc = tci_error(r->diag, TC_ERR_FORMAT, MOD, off, "thread %llu appeared only in the second pass",
                        (unsigned long long)tid);
        return TCI_NONE;
    }
    if (tci_idmap_get(&s->sched_tid_seen, tid) == TCI_NONE) {
        if (tci_idmap_put(&s->sched_tid_seen, tid, s->n_sched_tids) != 0 ||
            tci_grow((void **)&s->sched_tids, &s->cap_sched_tids, s->n_sched_tids, sizeof *s->sched_tids) != 0) {
            *rc = tci_error(r->diag, TC_ERR_NOMEM, MOD, off, "out of memory");
            return TCI_NONE;
        }
        s->sched_tids[s->n_sched_tids++] = (struct sched_tid){tid, off};
    }
    return line_th;
}

/* End of pass 1: a thread for every tid only scheduler events named, in the order they did. */
static int sched_threads(tci_rctx *r, systrace *s)
{
    for (uint32_t i = 0; i < s->n_sched_tids; i++) {
        uint64_t tid = s->sched_tids[i].tid;
        if (tci_idmap_get(&s->tid_thread, tid) != TCI_NONE)
            continue; /* a task column showed it after all */
        uint32_t th = tci_trace_add_thread(r->trace, tid);
        if (th == TCI_NONE || tci_idmap_put(&s->tid_thread, tid, th) != 0 ||
            tci_grow((void **)&s->pid_at, &s->cap_pid_at, th, sizeof *s->pid_at) != 0)
            return tci_trace_fail(r->trace, r->diag, MOD, s->sched_tids[i].offset);
        s->pid_at[th] = PID_UNSET;
    }
    return TC_OK;
}

/* The scheduler's kind of an event line, or 0 (every other kernel event). */
static int sched_kind(const fline *f)
{
#define KIND(lit, k) {lit, sizeof(lit) - 1, k}
    static const struct {
        const char *name;
        uint8_t len, kind;
    } kinds[] = {KIND("sched_switch", TCI_EV_SCHED_SWITCH), KIND("sched_waking", TCI_EV_SCHED_WAKING),
                 KIND("sched_wakeup", TCI_EV_SCHED_WAKEUP), KIND("sched_wakeup_new", TCI_EV_SCHED_WAKEUP_NEW),
                 KIND("cpu_frequency", TCI_EV_CPU_FREQUENCY), KIND("cpu_idle", TCI_EV_CPU_IDLE),
                 KIND("sched_process_exit", TCI_EV_TASK_EXIT), KIND("task_rename", TCI_EV_TASK_RENAME)};
#undef KIND
    if (f->event_len < 8 || (f->event[0] != 's' && f->event[0] != 'c' && f->event[0] != 't'))
        return 0; /* most kernel events: one test */
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        if (kinds[k].len == f->event_len && !memcmp(kinds[k].name, f->event, f->event_len))
            return kinds[k].kind;
    return 0;
}

/* The fields of one scheduler event: false when one it needs is missing or out of range. */
static bool sched_fields(const fline *f, int kind, uint64_t *tid, uint64_t *other, uint16_t *state, int32_t *a,
                         int32_t *b, double *value)
{
    const char *p = f->details, *v = NULL;
    size_t n = f->details_len, vn = 0;
    uint64_t x;
    *state = 0;
    *a = *b = 0;
    *value = 0;
    *tid = f->tid;
    if (f->tid > INT32_MAX)
        return false; /* the task's pid goes into int32 fields too */
    switch (kind) {
    case TCI_EV_SCHED_SWITCH:
        if (!field(p, n, "prev_state=", NULL, &v, &vn))
            vn = 0;
        *state = prev_state_bits(v, vn);
        return field_tid(p, n, "prev_pid=", tid) && field_i32(p, n, "prev_prio=", a) &&
               field_tid(p, n, "next_pid=", other) && field_i32(p, n, "next_prio=", b);
    case TCI_EV_SCHED_WAKING:
    case TCI_EV_SCHED_WAKEUP:
    case TCI_EV_SCHED_WAKEUP_NEW:
        if (!field_i32(p, n, "target_cpu=", b))
            *b = -1; /* older kernels wrote success= instead */
        return field_tid(p, n, "pid=", other) && (field_i32(p, n, "prio=", a) || !field(p, n, "prio=", NULL, &v, &vn));
    case TCI_EV_CPU_FREQUENCY:
    case TCI_EV_CPU_IDLE: /* the event's cpu_id, and a state the u32 of the ftrace event holds */
        if (!field_u64(p, n, "cpu_id=", other) || *other >= TCI_SYS_MAX_CPUS ||
            !field_u64(p, n, "state=", &x) || x > UINT32_MAX)
            return false;
        *value = (double)x;
        return true;
    case TCI_EV_TASK_EXIT:
        return field_tid(p, n, "pid=", other) && (field_i32(p, n, "prio=", a) || !field(p, n, "prio=", NULL, &v, &vn));
    default: /* TCI_EV_TASK_RENAME */
        return field_tid(p, n, "pid=", other);
    }
}

/* A scheduler event as a record: 1 (in *ev), 0 (a bad one, skipped with a warning),
 * SCHED_OTHER_KIND (not one of ours: counted as not converted), or an error. */
static int sched_record(tci_rctx *r, systrace *s, const fline *f, uint32_t line_th, uint64_t off, tci_raw *ev)
{
    int kind = sched_kind(f), rc;
    if (!kind)
        return SCHED_OTHER_KIND;
    uint64_t tid, other = 0;
    uint16_t state;
    int32_t a, b;
    double value;
    if (f->cpu >= TCI_SYS_MAX_CPUS || !sched_fields(f, kind, &tid, &other, &state, &a, &b, &value)) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, off, "%.*s: %s; line skipped%s", (int)f->event_len, f->event,
                 f->cpu >= TCI_SYS_MAX_CPUS ? "CPU number above 1023 (Perfetto's limit)" : "a field is missing or out of range",
                 s->offset_note);
        return 0;
    }
    uint32_t th = tid == f->tid ? line_th : sched_thread(r, s, tid, line_th, off, &rc);
    if (th == TCI_NONE)
        return rc;
    bool cpu_counter = kind == TCI_EV_CPU_FREQUENCY || kind == TCI_EV_CPU_IDLE;
    uint32_t th2 = cpu_counter ? (uint32_t)other : other == f->tid ? line_th : sched_thread(r, s, other, line_th, off, &rc);
    if (th2 == TCI_NONE)
        return rc;
    *ev = (tci_raw){.wall = f->ts, .cpu = tci_sys_pack_prios(a, b), .offset = off, .value = value,
                    .id = tci_sys_pack_id((uint32_t)f->cpu, th2, state), .thread = th, .method = TCI_NONE,
                    .action = (uint8_t)(TCI_ACT_SYS + kind - TCI_EV_SYS_FIRST)};
    return 1;
}

/* ---- threads and processes --------------------------------------------------------- */

static uint32_t process_of(tci_rctx *r, systrace *s, int64_t pid)
{
    uint32_t p = tci_idmap_get(&s->pid_process, (uint64_t)pid);
    if (p != TCI_NONE)
        return p;
    if ((p = tci_trace_process(r->trace, pid)) == TCI_NONE || tci_idmap_put(&s->pid_process, (uint64_t)pid, p) != 0)
        return TCI_NONE;
    return p;
}

/* Pass 1: the thread of tid becomes part of pid's process, unless it already has one. */
static int set_pid(tci_rctx *r, systrace *s, uint32_t th, int64_t pid, uint64_t off)
{
    if (r->pass != 1 || s->pid_at[th] != PID_UNSET)
        return TC_OK;
    uint32_t p = process_of(r, s, pid);
    if (p == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, MOD, off);
    r->trace->threads[th].process = p;
    s->pid_at[th] = off == UINT64_MAX ? PID_AT_END : off;
    return TC_OK;
}

static uint32_t thread_of(tci_rctx *r, systrace *s, const fline *f, uint64_t off, int *rc)
{
    tci_trace *t = r->trace;
    uint32_t th = tci_idmap_get(&s->tid_thread, f->tid);
    *rc = TC_OK;
    if (th == TCI_NONE) {
        if (r->pass != 1) {
            *rc = tci_error(r->diag, TC_ERR_FORMAT, MOD, off, "thread %llu appeared only in the second pass",
                            (unsigned long long)f->tid);
            return TCI_NONE;
        }
        if ((th = tci_trace_add_thread(t, f->tid)) == TCI_NONE ||
            tci_idmap_put(&s->tid_thread, f->tid, th) != 0 ||
            tci_grow((void **)&s->pid_at, &s->cap_pid_at, th, sizeof *s->pid_at) != 0) {
            *rc = tci_trace_fail(t, r->diag, MOD, off);
            return TCI_NONE;
        }
        s->pid_at[th] = PID_UNSET;
    }
    if (r->pass != 1)
        return th;
    bool anon = (f->task_len == 5 && !memcmp(f->task, "<...>", 5)) ||
                (f->task_len == 9 && !memcmp(f->task, "<unknown>", 9)) || f->task_len == 0;
    if (!anon && (*rc = note_name(r, s, f->tid, f->task, f->task_len, off)) != TC_OK)
        return TCI_NONE;
    if (f->tgid >= 0 && (*rc = set_pid(r, s, th, f->tgid, off)) != TC_OK)
        return TCI_NONE;
    return th;
}

/* The thread of a tid only a PROCESS DUMP lists: an entry without records. */
static uint32_t dump_thread_of(tci_rctx *r, systrace *s, uint64_t tid)
{
    uint32_t th = tci_idmap_get(&s->tid_thread, tid);
    if (th != TCI_NONE)
        return th;
    if ((th = tci_trace_add_thread(r->trace, tid)) == TCI_NONE || tci_idmap_put(&s->tid_thread, tid, th) != 0 ||
        tci_grow((void **)&s->pid_at, &s->cap_pid_at, th, sizeof *s->pid_at) != 0)
        return TCI_NONE;
    s->pid_at[th] = PID_UNSET;
    return th;
}

/* Every process and thread of the PROCESS DUMPs, as Perfetto's import of the capture has
 * them: a process (pid, parent, name) for each process row, a thread (tid, process, name)
 * for each thread row, those no ftrace line shows included. Where the lines gave a thread
 * another process (its TGID column or an atrace pid), the lines win: said in one warning. */
static int dump_tables(tci_rctx *r, systrace *s)
{
    tci_trace *t = r->trace;
    t->process_listing = s->n_procs || s->n_dthreads;
    for (uint32_t i = 0; i < s->n_procs; i++) {
        uint32_t p = process_of(r, s, s->procs[i].pid);
        if (p == TCI_NONE)
            return tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
        if (t->processes[p].ppid < 0)
            t->processes[p].ppid = s->procs[i].ppid;
    }
    uint64_t disagree = 0; /* threads, not rows: each snapshot lists them */
    tci_idmap said = {0};
    const dump_thread *first = NULL;
    int64_t lines_pid = 0;
    for (uint32_t i = 0; i < s->n_dthreads; i++) {
        const dump_thread *d = &s->dthreads[i];
        uint32_t th = dump_thread_of(r, s, (uint64_t)d->tid);
        if (th == TCI_NONE) {
            tci_idmap_free(&said);
            return tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
        }
        /* the dump's CMD is the full name; ftrace's task field is the kernel comm,
         * cut to 15 bytes: a name that is a prefix of the dump's gives way to it */
        const char *cur = t->threads[th].name;
        bool fuller = cur && comm_of(cur, strlen(cur), d->name, d->len);
        if ((!cur || fuller) && d->len && tci_trace_name_thread(t, th, d->name, d->len, 2) != TC_OK) {
            tci_idmap_free(&said);
            return tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
        }
        if (s->pid_at[th] != PID_UNSET && s->pid_at[th] != PID_AT_END) {
            int64_t had = t->processes[t->threads[th].process].pid;
            if (had == d->pid || tci_idmap_get(&said, (uint64_t)d->tid) != TCI_NONE)
                continue;
            if (tci_idmap_put(&said, (uint64_t)d->tid, 1) != 0) {
                tci_idmap_free(&said);
                return tci_error(r->diag, TC_ERR_NOMEM, MOD, UINT64_MAX, "out of memory");
            }
            if (!disagree++) {
                first = d;
                lines_pid = had;
            }
            continue;
        }
        int rc = set_pid(r, s, th, d->pid, UINT64_MAX);
        if (rc != TC_OK) {
            tci_idmap_free(&said);
            return rc;
        }
    }
    tci_idmap_free(&said);
    if (disagree) {
        tci_warn(r->diag, TCI_FIG_PROCESS_DISAGREES, MOD, UINT64_MAX,
                 "%llu thread%s of the PROCESS DUMP belong%s to another process in the ftrace lines (thread %lld: "
                 "process %lld in the lines, %lld in the dump); the lines win", (unsigned long long)disagree,
                 disagree == 1 ? "" : "s", disagree == 1 ? "s" : "", (long long)first->tid, (long long)lines_pid,
                 (long long)first->pid);
        tci_count(r->diag, TCI_FIG_PROCESS_DISAGREES, disagree - 1);
    }
    return TC_OK;
}

/* End of pass 1: the dumps' names, and a process for every thread. */
static int finish_tables(tci_rctx *r, systrace *s)
{
    tci_trace *t = r->trace;
    int src = sched_threads(r, s);
    if (src != TC_OK)
        return src;
    for (uint32_t th = 0; th < t->n_threads; th++) { /* the latest name of the task column or the scheduler */
        uint32_t i = tci_idmap_get(&s->tid_name, t->threads[th].tid);
        if (i != TCI_NONE && tci_trace_name_thread(t, th, s->names[i].s, s->names[i].len, 1) != TC_OK)
            return tci_trace_fail(t, r->diag, MOD, s->names[i].offset);
    }
    int drc = dump_tables(r, s);
    if (drc != TC_OK)
        return drc;
    for (uint32_t th = 0; th < t->n_threads; th++) { /* the input named its process, else it is its own */
        t->threads[th].process_given = s->pid_at[th] != PID_UNSET;
        t->process_listing |= t->threads[th].process_given;
        int rc = s->pid_at[th] != PID_UNSET ? TC_OK : set_pid(r, s, th, (int64_t)t->threads[th].tid, UINT64_MAX);
        if (rc != TC_OK)
            return rc;
    }
    for (uint32_t i = 0; i < s->n_procs; i++) { /* the first snapshot's name wins */
        uint32_t p = tci_idmap_get(&s->pid_process, (uint64_t)s->procs[i].pid);
        if (p != TCI_NONE && t->processes[p].name_rank < 2 &&
            tci_trace_name_process(t, p, s->procs[i].name, s->procs[i].len, 2) != TC_OK)
            return tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
    }
    for (uint32_t th = 0; th < t->n_threads; th++) { /* else the main thread's name */
        tci_thread *x = &t->threads[th];
        tci_process *p = &t->processes[x->process];
        if (x->name && !p->name && p->pid == (int64_t)x->tid &&
            tci_trace_name_process(t, x->process, x->name, strlen(x->name), 0) != TC_OK)
            return tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
    }
    for (uint32_t p = 0; p < t->n_processes; p++) { /* a main thread without lines, named by the scheduler */
        int64_t pid = t->processes[p].pid;
        uint32_t i = pid > 0 && !t->processes[p].name ? tci_idmap_get(&s->tid_name, (uint64_t)pid) : TCI_NONE;
        if (i != TCI_NONE && tci_trace_name_process(t, p, s->names[i].s, s->names[i].len, 0) != TC_OK)
            return tci_trace_fail(t, r->diag, MOD, s->names[i].offset);
    }
    if (s->lines_ok == 0 && s->lines_bad > 0)
        return tci_error(r->diag, TC_ERR_FORMAT, MOD, UINT64_MAX,
                         "no line is an ftrace event line (%llu lines tried): not systrace text",
                         (unsigned long long)s->lines_bad);
    return TC_OK;
}

/* ---- records ------------------------------------------------------------------------ */

/* The method an event line's name is (interned in pass 1), through a small cache: a capture
 * has a few dozen event names, and hashing the name at every line was a tenth of its cost. */
static uint32_t event_name(tci_rctx *r, systrace *s, const fline *f)
{
    size_t n = f->event_len;
    struct name_slot *slot = NULL;
    if (n <= sizeof slot->text) {
        uint32_t h = (uint32_t)n * 31u + (uint8_t)f->event[0] * 7u + (uint8_t)f->event[n - 1] + (uint8_t)f->event[n / 2] * 13u;
        slot = &s->names_cache[h % NAME_SLOTS];
        if (slot->len == n && !memcmp(slot->text, f->event, n))
            return slot->method;
    }
    uint32_t m = tci_trace_name(r->trace, f->event, n);
    if (slot && m != TCI_NONE) {
        memcpy(slot->text, f->event, n);
        slot->len = (uint8_t)n;
        slot->method = m;
    }
    return m;
}

/* Any other kernel event, and a print that is not atrace's (free text, clock-sync markers): a
 * record of its text (TCI_EV_FTRACE), named by its event. 1 (in *ev), 0 (a CPU beyond
 * Perfetto's limit: skipped with a warning) or an error. */
static int kernel_record(tci_rctx *r, systrace *s, const fline *f, uint32_t th, uint64_t off, tci_raw *ev)
{
    if (f->cpu >= TCI_SYS_MAX_CPUS) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, off, "%.*s: CPU number above 1023 (Perfetto's limit); line skipped%s",
                 (int)f->event_len, f->event, s->offset_note);
        return 0;
    }
    uint32_t name = event_name(r, s, f);
    if (name == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, MOD, off);
    *ev = (tci_raw){.wall = f->ts, .cpu = (int64_t)f->details_len, .offset = off, .thread = th, .method = name,
                    .id = tci_sys_pack_text((uint32_t)f->cpu, (uint64_t)(f->details - s->text)),
                    .action = (uint8_t)(TCI_ACT_SYS + TCI_EV_FTRACE - TCI_EV_SYS_FIRST)};
    return 1;
}

static uint32_t async_hash(uint64_t owner, uint32_t name, int64_t cookie)
{
    uint64_t h = (uint64_t)cookie ^ (owner * 0x9E3779B97F4A7C15ull + name) * 0xC2B2AE3D27D4EB4Full;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull; /* splitmix64's finalizer: every bit moves the low ones */
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)(h ^ (h >> 31));
}

/* The slot of an async key: its entry, or the empty slot where it goes. */
static async_key *async_slot(systrace *s, uint64_t owner, uint32_t name, int64_t cookie)
{
    for (uint32_t i = async_hash(owner, name, cookie) & (s->cap_async - 1);; i = (i + 1) & (s->cap_async - 1)) {
        async_key *k = &s->async[i];
        if (!k->used || (k->owner == owner && k->name == name && k->cookie == cookie))
            return k;
    }
}

/* Whose async slice this is: the thread's process, as the writers key async
 * slices, when this line or an earlier one gave it (the same in both passes:
 * a process, once given, never changes); else the payload's pid. The two never
 * meet: a process index (32 bits) tagged with bit 32, a pid of 32 bits untagged. */
static uint64_t async_owner(const tci_rctx *r, const systrace *s, uint32_t th, const tci_atrace *a, uint64_t off)
{
    if (s->pid_at[th] <= off)
        return (uint64_t)1 << 32 | r->trace->threads[th].process;
    return a->has_pid ? a->pid : 0;
}

/* A key whose last slice ended leaves the set (linear probing: the entries after
 * it that would not be found past the hole move back), so the set holds the
 * slices open at a time, not every cookie ever used (one per line in a capture
 * that numbers its slices). */
static void async_remove(systrace *s, async_key *k)
{
    uint32_t mask = s->cap_async - 1, hole = (uint32_t)(k - s->async);
    for (uint32_t j = (hole + 1) & mask; s->async[j].used; j = (j + 1) & mask) {
        uint32_t home = async_hash(s->async[j].owner, s->async[j].name, s->async[j].cookie) & mask;
        bool stays = hole <= j ? home > hole && home <= j : home > hole || home <= j; /* home in (hole, j] */
        if (!stays) {
            s->async[hole] = s->async[j];
            hole = j;
        }
    }
    s->async[hole].used = false;
    s->n_async--;
}

/* An async begin (S, G) opens its (owner, name, cookie); an end (F, H) closes
 * one: false when none is open. Both passes replay the same lines from an
 * empty set, so they drop the same ends. */
static int async_track(tci_rctx *r, systrace *s, uint64_t owner, const tci_raw *ev, bool *matched)
{
    if (s->n_async + 1 > s->cap_async / 2) { /* keep it at most half full */
        uint32_t cap = s->cap_async ? s->cap_async * 2 : 64;
        async_key *old = s->async;
        uint32_t old_cap = s->cap_async;
        if (cap < old_cap || !(s->async = tci_calloc(cap, sizeof *s->async))) {
            s->async = old;
            return tci_error(r->diag, TC_ERR_NOMEM, MOD, ev->offset, "out of memory");
        }
        s->cap_async = cap;
        for (uint32_t i = 0; i < old_cap; i++)
            if (old[i].used)
                *async_slot(s, old[i].owner, old[i].name, old[i].cookie) = old[i];
        free(old);
    }
    async_key *k = async_slot(s, owner, ev->method, (int64_t)ev->id);
    if (!k->used) {
        *k = (async_key){owner, ev->method, (int64_t)ev->id, 0, true};
        s->n_async++;
    }
    *matched = true;
    if (ev->action == TCI_ACT_ASYNC_BEGIN)
        k->open++;
    else if (k->open)
        k->open--;
    else
        *matched = false;
    if (!k->open)
        async_remove(s, k);
    return TC_OK;
}

/*
 * atrace's clock-sync markers (SYSTRACE.md): `trace_event_clock_sync: parent_ts=S.US` gives
 * CLOCK_MONOTONIC and `trace_event_clock_sync: realtime_ts=MS` the wall clock at the marker,
 * whose own timestamp is in the trace clock. They become no record but the metadata
 * `clock-sync-parent-ts` / `clock-sync-realtime-ts` = "MARKER_NS CLOCK_NS" (both in ns; the
 * first marker of each kind), which `traceconv merge` (join.c) reads to put a method trace
 * on this trace's clock. A marker with an unreadable value is a bad line. Returns 0 (no
 * record) or an error.
 */
static int note_clock_sync(tci_rctx *r, const char *p, size_t n, int64_t marker_ns, uint64_t off)
{
    static const char sync[] = "trace_event_clock_sync: ";
    size_t k = sizeof sync - 1;
    if (n < k || memcmp(p, sync, k))
        return 0;
    p += k, n -= k;
    const char *key;
    int64_t clock_ns;
    uint64_t ms;
    if (n >= 10 && !memcmp(p, "parent_ts=", 10)) {
        key = "clock-sync-parent-ts";
        bool whole = n > 10 && !memchr(p + 10, '.', n - 10) && tci_parse_u64(p + 10, n - 10, 9000000000ull, &ms);
        if (whole)
            clock_ns = (int64_t)ms * 1000000000;
        else if (!parse_ts(p + 10, n - 10, &clock_ns))
            key = NULL;
    } else if (n >= 12 && !memcmp(p, "realtime_ts=", 12)) {
        key = "clock-sync-realtime-ts";
        if (tci_parse_u64(p + 12, n - 12, (uint64_t)INT64_MAX / 1000000, &ms))
            clock_ns = (int64_t)ms * 1000000;
        else
            key = NULL;
    } else {
        return 0; /* name=ID (Chrome's agents) and other sync texts: nothing to place a trace by */
    }
    if (!key) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, off, "clock-sync marker with an unreadable value (\"%.*s\"); ignored",
                 (int)(n > 40 ? 40 : n), p);
        return 0;
    }
    if (tci_trace_meta(r->trace, key))
        return 0;
    char val[48];
    int len = snprintf(val, sizeof val, "%lld %lld", (long long)marker_ns, (long long)clock_ns);
    return tci_trace_add_meta(r->trace, key, strlen(key), val, (size_t)len) == TC_OK ? 0
           : tci_trace_fail(r->trace, r->diag, MOD, off);
}

/* The atrace payload of a print event: 0 (no record), 1 (a record in *ev), or an error. */
static int payload(tci_rctx *r, systrace *s, const fline *f, uint32_t th, uint64_t off, tci_raw *ev)
{
    const char *p = f->details;
    size_t n = f->details_len;
    if (f->event_len == 5 && !memcmp(f->event, "print", 5)) { /* trace-cmd: "print: tracing_mark_write: B|..." */
        if (n >= 20 && !memcmp(p, "tracing_mark_write: ", 20))
            p += 20, n -= 20;
        else if (n >= 3 && !memcmp(p, "0: ", 3))
            p += 3, n -= 3;
    }
    tci_atrace a;
    int pr = tci_atrace_parse(p, n, &a);
    if (pr == TCI_ATRACE_NONE) { /* clock sync and free text: the print event they are */
        int rc = r->pass == 1 ? note_clock_sync(r, p, n, f->ts, off) : 0;
        return rc < 0 ? rc : kernel_record(r, s, f, th, off, ev);
    }
    if (pr != TCI_ATRACE_OK) {
        tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, off, "atrace %c event: %s; line skipped", a.kind, a.why);
        return 0;
    }
    int rc = TC_OK;
    if (a.has_pid && a.pid > 0 && (rc = set_pid(r, s, th, (int64_t)a.pid, off)) != TC_OK)
        return rc;
    *ev = (tci_raw){.wall = f->ts, .cpu = TCI_NO_TIME, .offset = off, .thread = th, .method = TCI_NONE,
                    .action = a.action, .value = a.value, .id = (uint64_t)a.cookie};
    if (a.action == TCI_ACT_EXIT)
        return 1;
    size_t len;
    const char *name = tci_atrace_record_name(&a, &len);
    /* pass 1 makes the tables; ours write Java methods as "pkg.Class.method: (sig)ret" */
    if ((ev->method = tci_trace_timeline_name(r->trace, name, len)) == TCI_NONE)
        return tci_trace_fail(r->trace, r->diag, MOD, off);
    if (a.action == TCI_ACT_ASYNC_BEGIN || a.action == TCI_ACT_ASYNC_END) {
        bool matched = false;
        if ((rc = async_track(r, s, async_owner(r, s, th, &a, off), ev, &matched)) != TC_OK)
            return rc;
        if (!matched) { /* no writer can show an end without its begin: one rule for all of them */
            tci_warn(r->diag, TCI_FIG_UNMATCHED_ASYNC_END, MOD, off,
                     "async end %c|%u|%.*s|%lld without an open begin; dropped", a.kind, a.pid, (int)(len > 80 ? 80 : len),
                     name, (long long)a.cookie);
            return 0;
        }
    }
    return 1;
}

static bool is_print(const fline *f)
{
    return (f->event_len == 18 && !memcmp(f->event, "tracing_mark_write", 18)) ||
           (f->event_len == 1 && f->event[0] == '0') || (f->event_len == 5 && !memcmp(f->event, "print", 5));
}

static int systrace_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    systrace *s = r->priv;
    size_t k = 0;
    int rc = TC_OK;
    while (k < max && s->block < s->n_blocks) {
        const char *l;
        size_t n, at;
        if (!next_line(s->text, s->blocks[s->block].end, &s->pos, &l, &n, &at)) {
            if (++s->block < s->n_blocks)
                s->pos = s->blocks[s->block].start;
            continue;
        }
        if (skip_line(l, n))
            continue;
        fline f;
        uint64_t off = (uint64_t)at;
        if (TCI_UNLIKELY(s->text_listing.mode != LIST_NONE || starts_listing(l, n)) && !parse_line(l, n, &f)) {
            /* a process listing in the text (old systrace appended `ps -t`): its rows are kept in pass 1 */
            int lrc = listing_line(r, s, &s->text_listing, l, n, off, r->pass == 1);
            if (lrc == TC_OK)
                continue;
            if (lrc != TCI_NO_ROW)
                return lrc;
        }
        if (!parse_line(l, n, &f)) {
            if (r->pass == 1)
                s->lines_bad++;
            tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, off, "not an ftrace event line%s (\"%.*s%s\"); skipped",
                     s->offset_note, (int)(n > 40 ? 40 : n), l,
                     n > 40 ? "..." : "");
            continue;
        }
        if (r->pass == 1)
            s->lines_ok++;
        uint32_t th = thread_of(r, s, &f, off, &rc);
        if (rc != TC_OK)
            return rc;
        if (!is_print(&f)) {
            if (r->pass == 1 && (rc = sched_names(r, s, &f, off)) != TC_OK)
                return rc;
            int got1 = sched_record(r, s, &f, th, off, &ev[k]);
            if (got1 < 0)
                return got1;
            if (got1 == SCHED_OTHER_KIND && (got1 = kernel_record(r, s, &f, th, off, &ev[k])) < 0)
                return got1;
            k += got1 == 1;
            continue;
        }
        int got1 = payload(r, s, &f, th, off, &ev[k]);
        if (got1 < 0)
            return got1;
        k += (size_t)got1;
    }
    /* progress and page release are in input bytes; the inflated text's pages go as they are read */
    r->pos = s->spooled ? (s->len ? (uint64_t)((double)s->pos / (double)s->len * (double)r->size) : 0) : s->pos;
    if (s->spooled)
        tci_source_release(&s->spool, s->pos);
    if (k == 0 && r->pass == 1 && !s->tables_done) {
        s->tables_done = true;
        if ((rc = finish_tables(r, s)) != TC_OK)
            return rc;
    }
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int systrace_rewind(tci_rctx *r)
{
    systrace *s = r->priv;
    s->block = 0;
    s->pos = s->n_blocks ? s->blocks[0].start : 0;
    s->text_listing = (listing){LIST_NONE, -1, 0, 0};
    s->spool.released = 0; /* pages come back as pass 2 touches them */
    for (uint32_t i = 0; i < s->cap_async; i++) /* pass 2 replays the async matching from an empty set */
        s->async[i].used = false;
    s->n_async = 0;
    return TC_OK;
}

static void systrace_close(tci_rctx *r)
{
    systrace *s = r->priv;
    if (!s)
        return;
    tci_source_close(&s->spool);
    free(s->blocks);
    free(s->pid_at);
    free(s->procs);
    free(s->dthreads);
    for (uint32_t i = 0; i < s->n_names; i++)
        free(s->names[i].s);
    free(s->names);
    free(s->async);
    free(s->sched_tids);
    tci_idmap_free(&s->sched_tid_seen);
    tci_idmap_free(&s->tid_name);
    tci_idmap_free(&s->tid_thread);
    tci_idmap_free(&s->pid_process);
}

const tci_reader tci_reader_systrace = {
    .name = "systrace",
    .description = "Android systrace/atrace: ftrace text, TRACE: + zlib, systrace HTML",
    .extensions = "html,systrace,txt",
    .aliases = "atrace,ftrace,ctrace",
    .priv_size = sizeof(systrace),
    .probe = systrace_probe,
    .open = systrace_open,
    .read = systrace_read,
    .rewind = systrace_rewind,
    .close = systrace_close,
};
