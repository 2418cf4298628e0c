/*
 * rhea.c - RheaTrace / btrace (github.com/bytedance/btrace) app dumps,
 * ../shared/docs/formats/RHEA.md. One reader for every variant:
 *
 * 1. Text dumps "rhea-atrace" (1.x and 2.x; gzip is inflated by the core):
 *      <id>|TRACE_START|<boottime ns>|<pid>|2147483647|2|18316
 *      <sec>.<frac> <tid>: <atrace payload>     all threads
 *      <sec>.<frac>: <atrace payload>           main thread only (tid = pid)
 *      <id>|TRACE_END|...                       absent: the dump was cut (warning)
 *    1.x: 6 decimals, CLOCK_BOOTTIME; 2.x: 9 decimals, CLOCK_MONOTONIC. Times
 *    are parsed as fixed-point integers into ns (never through a double).
 *    Payloads: B|pid|name, E, E|pid, E|pid|name (all close the innermost
 *    slice), and, should a merged dump carry them, the other atrace forms
 *    (C, S/F, I, N, G/H), read by the core's atrace parser (atrace.c) as the
 *    systrace reader reads them. A line whose timestamp or payload does not
 *    parse is skipped with a bad-line warning.
 *    1.x method markers are all *begin* events: B|pid|B:x = enter x,
 *    B|pid|E:x = exit x, B|pid|T:x = exit x by an explicit throw. Repair (the
 *    rules of RHEA.md §4.2, not the Python script's by-name pairing):
 *    - an exit of x below the top of the thread's stack closes the frames
 *      above it at that time (the method whose exception propagated: the
 *      script's "CrashTag"); normalize does it, marked forced;
 *    - T:x that is followed, while x is still the innermost marker frame, by
 *      E:x (or another T:x) was a throw caught inside x: dropped. Any other
 *      T:x ends x (an exception exit, marked unwind). Decided by a scan of
 *      the whole dump in open(), so that both passes agree;
 *    - the thread key is the tid column, never a split on spaces, so names
 *      with spaces ("setupViews[1, true]") pair (the script's bug);
 *    - "B|pid|monotonic_time: <s>" is not a slice: it gives the offset of
 *      CLOCK_MONOTONIC from CLOCK_BOOTTIME, kept as the metadata
 *      "monotonic-minus-boottime-ns" (timestamps stay on the boot clock);
 *    - numeric names (traceWithMethodID) are resolved through a mapping
 *      file when one is given or found; "<rhea-draft>" prefixes are removed.
 *    The time origin is TRACE_START (1.x; its clock is the lines' clock) or
 *    the first line (2.x: TRACE_START is boottime, the lines monotonic);
 *    1.x TRACE_END gives the trace's length.
 *
 * 2. 2.x binary method trace (rhea-atrace.bin / appTrace.bin): a 32-byte
 *    header (u32 version 5, u32 pid, u64 boottime, u64 monotonic base, u64
 *    trace start) and 16-byte records written when a method returns:
 *      w0 = start_rel << 19 | dur >> 26; w1 = (dur & 0x3FFFFFF) << 38 | tid << 23 | mid
 *    w1 == 0 is unused space (the mmapped file's zero tail). Records are
 *    complete slices, inner first; per thread they are sorted by (start,
 *    longer first, file order) and replayed through a stack (a child is
 *    clamped to its parent's end). The sort spills to a temporary file
 *    (tci_extsort) and the replay streams: memory does not grow with records. Starts before the trace start are clamped
 *    to it, as upstream does. A file that ends inside a record is a warning.
 *    Method ids are named from methodMapping.txt ("#uuid" line, then
 *    "id,flags,class method desc"): option mapping, else methodMapping.txt
 *    beside the input (or <prefix>methodMapping.txt for <prefix>appTrace*).
 *    Ids without a name become "method#<id>" (one warning with the count).
 *    tids are 15 bits: the pid's low bits mean the main thread.
 *
 * 3. 3.x sampling dump ("sampling"): u32 magic 0x01020304, u32 type, u32
 *    version, u64 dump time (ms), u32 count, i32 extraLen + JSON
 *    ({"processId":N}); records {u16 type, u16 tid, u32 msg, u64 begin ns,
 *    u64 end ns, u64 cpu0, u64 cpu1, [v>=4: u64 x2], [v>=5: u32 x3], u32
 *    saved, u32 actual, u64 x saved ArtMethod* leaf first}. The writer never
 *    writes the type-15 "arg" word the Java reader expects: we follow the
 *    writer. Records with saved != actual or no frames are skipped (counted
 *    as bad lines). The mapping ("sampling-mapping": u64 0, u32 version, u32
 *    count, count x {u64 ptr, u16 len, name}, then {i16 tid, u8 len, name}
 *    thread names to EOF) comes from option mapping, else <stem>-mapping<ext>
 *    or sampling-mapping[.bin] beside the input; unmapped pointers are
 *    "method#0x<ptr>". Every frame is kept (upstream hides a few roots).
 *    Each record is a sample of its stack at its begin time, weighted:
 *    end - begin when the record has a duration, else the gap to the
 *    thread's next sample (upstream ends frames there too), else the
 *    thread's previous gap, else 1 ms (btrace's nominal interval).
 */
#include "tc_base.h"
#include "tc_atrace.h"
#include "tc_diag.h"
#include "tc_jscan.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define MOD "rhea"
#define MAX_MAPPED_ID 999999999999ull /* methodMapping.txt ids, and slice names read as one: 12 digits */
#define BIN2_HDR 32
#define BIN2_REC 16
#define SAMP_MAGIC 0x01020304u
#define SAMP_HDR 28
#define DEFAULT_SAMPLE_NS 1000000

enum { K_TEXT = 1, K_BIN2, K_SAMPLING };

/* A slice of the 2.x binary dump, sorted by (thread, start, longer first, file order). */
typedef struct bslice {
    int64_t start, end;
    uint64_t offset;          /* of its record: file order, and the tie-break */
    uint32_t thread, method;
} bslice;

/* A sample of the 3.x dump, sorted by (thread, time, file order). */
typedef struct ssample {
    int64_t ts;
    double weight;            /* < 0: none recorded, the gap to the next sample decides */
    uint64_t offset;
    uint32_t thread, method, stack;
} ssample;

typedef struct rhea {
    int kind;
    /* text */
    int version;
    bool main_only, has_end;
    size_t body, pos;        /* first line after TRACE_START; read position */
    int64_t pid;
    tci_idmap threads;       /* tid -> thread */
    tci_extsort *drop_t;     /* offsets of T: lines that are dropped, read back in file order */
    uint64_t next_drop;      /* the next of them ahead of the read position */
    bool drop_ahead;         /* next_drop is valid */
    /* mapping: id (2.x, 1.x numeric names) or pointer (3.x) -> method */
    tci_idmap map;
    bool have_map;
    /* binary variants: records sorted on disk (memory does not grow with them), read back in order */
    tci_extsort *sorted;
    uint64_t taken;          /* records taken from `sorted` in this pass */
    bool ahead, sorted_end;  /* a record waits in bnext / snext; `sorted` is exhausted */
    bslice bnext;
    bslice *stack;           /* 2.x replay: the current thread's open slices */
    size_t depth, stack_cap;
    uint32_t deep_warned;    /* 2.x replay: the thread last warned about max-depth */
    ssample snext;           /* 3.x: the next sample (look-ahead for weights) */
    uint32_t last_thread;    /* 3.x: thread of the sample read last */
    int64_t prev_gap;
} rhea;

/* ---- small helpers -------------------------------------------------------------- */

static int nomem(tci_rctx *r) { return tci_error(r->diag, TC_ERR_NOMEM, MOD, UINT64_MAX, "out of memory"); }

/* ---- records sorted on disk (binary variants; the text's dropped throws) ---------------- */

/* Records arrive in file order but are read per thread in time order: they go
 * through an external sort (tci_extsort), so memory does not grow with them. */
static int sort_error(tci_rctx *r, const char *what)
{
    return tci_error(r->diag, errno == ENOMEM ? TC_ERR_NOMEM : TC_ERR_IO, MOD, UINT64_MAX,
                     "cannot %s the records' sort spool: %s", what, strerror(errno));
}

static int sorted_open(tci_rctx *r, rhea *x, size_t elem_size, tci_sort_cmp cmp)
{
    x->sorted = tci_extsort_new(elem_size, cmp, 0);
    return x->sorted ? TC_OK : nomem(r);
}

static int sorted_add(tci_rctx *r, rhea *x, const void *rec)
{
    return tci_extsort_add(x->sorted, rec) == 0 ? TC_OK : sort_error(r, "write");
}

/* The next sorted record into out: 1, 0 at the end, or an error code (< 0). */
static int sorted_next(tci_rctx *r, rhea *x, void *out)
{
    if (x->sorted_end)
        return 0;
    int k = tci_extsort_next(x->sorted, out);
    if (k < 0)
        return sort_error(r, "read back");
    if (k == 0)
        x->sorted_end = true;
    else
        x->taken++;
    return k;
}

/* Progress: the share of records taken, as a byte offset into the input. */
static void sorted_progress(tci_rctx *r, const rhea *x, size_t header)
{
    uint64_t n = tci_extsort_count(x->sorted);
    r->pos = n && !x->sorted_end ? header + (uint64_t)((double)(r->size - header) * (double)x->taken / (double)n)
                                 : r->size;
    if (r->pos > r->size)
        r->pos = r->size;
}

static uint32_t thread_of(tci_rctx *r, rhea *x, uint64_t tid)
{
    tci_trace *t = r->trace;
    uint32_t th = tci_idmap_get(&x->threads, tid);
    if (th != TCI_NONE)
        return th;
    if ((th = tci_trace_add_thread(t, tid)) == TCI_NONE || tci_idmap_put(&x->threads, tid, th) != 0)
        return TCI_NONE;
    if ((int64_t)tid == x->pid && tci_trace_name_thread(t, th, "main", 4, 0) != TC_OK)
        return TCI_NONE;
    return th; /* of process 0, the app */
}

/* The app's pid: process 0's. */
static void set_pid(tci_trace *t, rhea *x, int64_t pid)
{
    x->pid = t->pid = pid;
    t->processes[0].pid = pid;
}

/* A whole side file (the mapping), bounded by max-input. */
static int slurp(tci_rctx *r, const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tci_error(r->diag, TC_ERR_IO, MOD, UINT64_MAX, "cannot open the mapping file %s: %s", path,
                         strerror(errno));
    uint64_t max = r->opt->max_input ? r->opt->max_input : TCI_DEFAULT_MAX_INPUT;
    size_t cap = 1 << 16, n = 0;
    char *buf = tci_malloc(cap + 1);
    int rc = TC_OK;
    while (buf) {
        if (n == cap) {
            char *p = tci_realloc_array(buf, cap * 2 + 1, 1);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (n > max) {
            rc = tci_error(r->diag, TC_ERR_LIMIT, MOD, UINT64_MAX,
                           "the mapping file %s is larger than %llu bytes (option --max-input)", path,
                           (unsigned long long)max);
            break;
        }
        if (k == 0) {
            if (ferror(f))
                rc = tci_error(r->diag, TC_ERR_IO, MOD, UINT64_MAX, "cannot read the mapping file %s", path);
            break;
        }
    }
    fclose(f);
    if (!buf)
        return nomem(r);
    if (rc != TC_OK) {
        free(buf);
        return rc;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return TC_OK;
}

/* The mapping to read: the first candidate beside the input that exists. Only
 * beside a real input file: a buffer's name or stdin says nothing about a
 * directory, and the current directory is never searched (DESIGN.md §5b). */
static char *find_mapping(tci_rctx *r, const char *const *names, size_t n_names)
{
    const char *in = r->input_file;
    if (!in)
        return NULL;
    const char *slash = strrchr(in, '/');
    size_t dir = slash ? (size_t)(slash - in + 1) : 0;
    for (size_t i = 0; i < n_names; i++) {
        if (!names[i])
            continue;
        size_t len = dir + strlen(names[i]) + 1;
        char *p = tci_malloc(len);
        if (!p)
            return NULL;
        memcpy(p, in, dir);
        strcpy(p + dir, names[i]);
        FILE *f = fopen(p, "rb");
        if (f) {
            fclose(f);
            return p;
        }
        free(p);
    }
    return NULL;
}

/* methodMapping.txt: "id,accessFlag,pkg.Class method desc" lines; '#' lines and
 * "ignore methods:" are skipped. Names "pkg.Class.method: desc" (short "pkg.Class.method"). */
static int parse_text_mapping(tci_rctx *r, rhea *x, const char *path, const char *s, size_t len)
{
    tci_trace *t = r->trace;
    size_t bad = 0, line_no = 0;
    char *name = NULL;
    size_t name_cap = 0;
    tci_line l;
    for (size_t pos = 0; tci_next_line(s, len, &pos, &l);) {
        line_no++;
        tci_span line = tci_span_trim((tci_span){l.p, l.n});
        const char *p = line.p;
        size_t n = line.n;
        if (!n || p[0] == '#' || (n >= 15 && !memcmp(p, "ignore methods:", 15)))
            continue;
        const char *c1 = memchr(p, ',', n), *c2 = c1 ? memchr(c1 + 1, ',', n - (size_t)(c1 + 1 - p)) : NULL;
        uint64_t id = 0;
        bool ok = c1 && c2 && tci_parse_u64(p, (size_t)(c1 - p), MAX_MAPPED_ID, &id);
        const char *rest = c2 ? c2 + 1 : NULL, *end = p + n;
        const char *sp1 = ok ? memchr(rest, ' ', (size_t)(end - rest)) : NULL;
        if (!ok || !sp1 || sp1 == rest) {
            if (!bad++)
                tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, UINT64_MAX,
                         "%s line %zu is not \"id,flags,class method desc\"; skipped", path, line_no);
            continue;
        }
        const char *meth = sp1 + 1, *sp2 = memchr(meth, ' ', (size_t)(end - meth));
        size_t cls_len = (size_t)(sp1 - rest), meth_len = (size_t)((sp2 ? sp2 : end) - meth);
        const char *desc = sp2 ? sp2 + 1 : end;
        size_t desc_len = (size_t)(end - desc);
        size_t need = cls_len + 1 + meth_len + 2 + desc_len + 1;
        if (need > name_cap) {
            char *q = realloc(name, need);
            if (!q) {
                free(name);
                return nomem(r);
            }
            name = q;
            name_cap = need;
        }
        size_t k = 0;
        memcpy(name + k, rest, cls_len), k += cls_len;
        name[k++] = '.';
        memcpy(name + k, meth, meth_len), k += meth_len;
        size_t short_len = k;
        if (desc_len) {
            memcpy(name + k, ": ", 2), k += 2;
            memcpy(name + k, desc, desc_len), k += desc_len;
        }
        uint32_t m = tci_trace_name_split(t, name, k, short_len);
        if (m == TCI_NONE || tci_idmap_put(&x->map, id, m) != 0) {
            free(name);
            return m == TCI_NONE ? tci_trace_fail(t, r->diag, MOD, UINT64_MAX) : nomem(r);
        }
    }
    free(name);
    if (bad > 1)
        tci_count(r->diag, TCI_FIG_BAD_LINE, bad - 1);
    x->have_map = true;
    return TC_OK;
}

/* Loads the mapping: the option (an error when unreadable), else one found beside the input. */
/* Ids a dump uses that its mapping does not name: each is named once
 * ("method#<id>", or "method#0x<ptr>" for pointers) and counted. */
typedef struct unnamed_ids {
    tci_idmap seen;
    uint64_t count;
} unnamed_ids;

static uint32_t name_of_id(tci_rctx *r, const rhea *x, unnamed_ids *u, uint64_t id, bool pointer, int *rc)
{
    uint32_t m = x->have_map ? tci_idmap_get(&x->map, id) : TCI_NONE;
    if (m != TCI_NONE)
        return m;
    char nm[48];
    int k = pointer ? snprintf(nm, sizeof nm, "method#0x%llx", (unsigned long long)id)
                    : snprintf(nm, sizeof nm, "method#%llu", (unsigned long long)id);
    if ((m = tci_trace_name(r->trace, nm, (size_t)k)) == TCI_NONE)
        return TCI_NONE; /* the caller reports it with tci_trace_fail */
    if (tci_idmap_get(&u->seen, id) == TCI_NONE) {
        u->count++;
        if (tci_idmap_put(&u->seen, id, 1) != 0)
            *rc = nomem(r);
    }
    return m;
}

/* One warning for all the ids without a name, counted as unknown methods. */
static void report_unnamed(tci_rctx *r, unnamed_ids *u, const char *what, const char *why, const char *named)
{
    tci_idmap_free(&u->seen);
    if (!u->count)
        return;
    tci_warn(r->diag, TCI_FIG_UNKNOWN_METHOD, MOD, UINT64_MAX, "%llu %s have no name (%s); named %s",
             (unsigned long long)u->count, what, why, named);
    if (u->count > 1)
        tci_count(r->diag, TCI_FIG_UNKNOWN_METHOD, u->count - 1);
}

static int load_mapping(tci_rctx *r, rhea *x, const char *const *names, size_t n_names, bool binary)
{
    char *found = r->opt->mapping ? NULL : find_mapping(r, names, n_names);
    const char *path = r->opt->mapping ? r->opt->mapping : found;
    if (!path)
        return TC_OK;
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp(r, path, &buf, &len);
    if (rc == TC_OK && !binary) {
        rc = parse_text_mapping(r, x, path, buf, len);
    } else if (rc == TC_OK) { /* sampling-mapping */
        tci_trace *t = r->trace;
        const uint8_t *b = (const uint8_t *)buf;
        if (len < 16 || tci_le64(b) != 0) {
            rc = tci_error(r->diag, TC_ERR_FORMAT, MOD, UINT64_MAX,
                           "%s is not a btrace sampling-mapping (no u64 0 magic)", path);
        } else {
            uint32_t count = tci_le32(b + 12);
            size_t off = 16;
            for (uint32_t i = 0; i < count && rc == TC_OK; i++) {
                if (len - off < 10 || len - off - 10 < tci_le16(b + off + 8)) {
                    tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, UINT64_MAX,
                             "%s ends inside method %u of %u", path, i, count);
                    off = len;
                    break;
                }
                uint64_t ptr = tci_le64(b + off);
                uint16_t n = tci_le16(b + off + 8);
                const char *s = buf + off + 10;
                off += 10 + (size_t)n;
                /* PrettyMethod: "<ret> <pkg.Class.method>(<params>)" -> "pkg.Class.method: (params)ret" */
                const char *sp = memchr(s, ' ', n), *par = memchr(s, '(', n);
                char tmp[1024];
                size_t k, short_len;
                if (sp && par && sp < par && (size_t)n + 4 < sizeof tmp) {
                    size_t ret = (size_t)(sp - s), qual = (size_t)(par - sp - 1), args = (size_t)(s + n - par);
                    memcpy(tmp, sp + 1, qual);
                    memcpy(tmp + qual, ": ", 2);
                    memcpy(tmp + qual + 2, par, args);
                    memcpy(tmp + qual + 2 + args, s, ret);
                    k = qual + 2 + args + ret;
                    short_len = qual;
                } else {
                    k = n < sizeof tmp ? n : sizeof tmp - 1;
                    memcpy(tmp, s, k);
                    short_len = k;
                }
                uint32_t m = tci_trace_name_split(t, tmp, k, short_len);
                if (m == TCI_NONE)
                    rc = tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
                else if (tci_idmap_put(&x->map, ptr, m) != 0)
                    rc = nomem(r);
            }
            while (rc == TC_OK && len - off >= 3) { /* thread names to the end */
                uint16_t tid = tci_le16(b + off);
                uint8_t n = b[off + 2];
                if (len - off - 3 < n) {
                    tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, UINT64_MAX, "%s ends inside a thread name", path);
                    break;
                }
                const char *s = buf + off + 3;
                off += 3 + (size_t)n;
                while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
                    n--;
                uint64_t full = x->pid >= 0 && (uint64_t)(x->pid & 0xFFFF) == tid ? (uint64_t)x->pid : tid;
                uint32_t th = thread_of(r, x, full);
                if (th == TCI_NONE || tci_trace_name_thread(t, th, s, n, 2) != TC_OK)
                    rc = tci_trace_fail(t, r->diag, MOD, UINT64_MAX);
            }
            x->have_map = true;
        }
    }
    free(buf);
    free(found);
    return rc;
}

/* ---- text dumps ------------------------------------------------------------------- */

/* A line of the dump (text.h: lines end at LF, the CRs before it are not theirs). */
static bool next_line(const uint8_t *data, size_t size, size_t *pos, tci_line *l)
{
    return tci_next_line((const char *)data, size, pos, l);
}

/* "<digits>|TRACE_START|" etc.: which profilo standard entry, or 0. */
static int header_kind(const tci_line *l)
{
    size_t i = 0;
    while (i < l->n && tci_is_digit(l->p[i]))
        i++;
    if (!i || i >= l->n || l->p[i] != '|')
        return 0;
    if (l->n - i > 13 && !memcmp(l->p + i, "|TRACE_START|", 13))
        return 'S';
    if (l->n - i > 11 && !memcmp(l->p + i, "|TRACE_END|", 11))
        return 'E';
    return 'O';
}

/* Field k (0-based) of a '|'-separated header line as an integer. */
static bool header_field(const tci_line *l, int k, int64_t *out)
{
    size_t i = 0;
    for (int f = 0; f < k; f++) {
        const char *bar = memchr(l->p + i, '|', l->n - i);
        if (!bar)
            return false;
        i = (size_t)(bar - l->p) + 1;
    }
    const char *bar = memchr(l->p + i, '|', l->n - i);
    size_t end = bar ? (size_t)(bar - l->p) : l->n;
    uint64_t v;
    if (!tci_parse_u64(l->p + i, end - i, INT64_MAX, &v))
        return false;
    *out = (int64_t)v;
    return true;
}

/* "<sec>.<frac>" as ns, fixed point; returns characters used or 0. */
static size_t parse_time(const char *p, size_t n, int64_t *ns, int *frac_digits)
{
    size_t i = 0;
    int64_t sec = 0, frac = 0;
    while (i < n && tci_is_digit(p[i]) && i < 9)
        sec = sec * 10 + (p[i++] - '0');
    if (!i || i >= n || p[i] != '.')
        return 0;
    size_t f0 = ++i;
    while (i < n && tci_is_digit(p[i]) && i - f0 < 9)
        frac = frac * 10 + (p[i++] - '0');
    int d = (int)(i - f0);
    if (!d || (i < n && tci_is_digit(p[i])))
        return 0;
    for (int k = d; k < 9; k++)
        frac *= 10;
    *ns = sec * 1000000000 + frac;
    *frac_digits = d;
    return i;
}

typedef struct body {
    int64_t ts;
    int frac_digits;
    bool has_tid;
    uint64_t tid;
    char kind;              /* B E C S F I N G H */
    int64_t pid;            /* -1 none */
    const char *name;       /* the record's name (tci_atrace_record_name) */
    size_t name_len;
    tci_atrace at;          /* the payload, by the core's atrace parser */
} body;

/* A body line. 0 ok, 1 bad timestamp, 2 bad prefix, 3 bad payload. */
static int parse_body(const tci_line *l, body *b)
{
    const char *p = l->p;
    size_t n = l->n, i = parse_time(p, n, &b->ts, &b->frac_digits);
    if (!i)
        return 1;
    b->has_tid = false;
    if (i < n && p[i] == ' ') {
        while (i < n && p[i] == ' ')
            i++;
        size_t d = i;
        b->tid = 0;
        while (i < n && tci_is_digit(p[i]) && i - d < 10)
            b->tid = b->tid * 10 + (uint64_t)(p[i++] - '0');
        if (i == d)
            return 2;
        b->has_tid = true;
    }
    if (i >= n || p[i] != ':')
        return 2;
    i++;
    while (i < n && p[i] == ' ')
        i++;
    if (tci_atrace_parse(p + i, n - i, &b->at) != TCI_ATRACE_OK)
        return 3;
    b->kind = b->at.kind;
    b->pid = b->at.has_pid ? (int64_t)b->at.pid : -1;
    b->name = tci_atrace_record_name(&b->at, &b->name_len);
    return 0;
}

/* Marker of a 1.x method event ("B:", "E:", "T:" in a B name), or 0. */
static char marker_of(const body *b)
{
    if (b->kind != 'B' || b->name_len < 3 || b->name[1] != ':' || !b->name[0] || !strchr("BET", b->name[0]))
        return 0;
    return b->name[0];
}

static bool is_monotonic_line(const body *b)
{
    return b->kind == 'B' && b->name_len > 15 && !memcmp(b->name, "monotonic_time:", 15);
}

/* The value of a monotonic_time line (seconds), or false when it is none (a bad line). */
static bool monotonic_value(const body *b, int64_t *mono)
{
    const char *s = b->name + 15;
    size_t k = b->name_len - 15;
    int fd;
    while (k && *s == ' ')
        s++, k--;
    return parse_time(s, k, mono, &fd) == k;
}

/* The record's thread: the tid column, or the pid (main-thread mode). */
static uint64_t tid_of(const rhea *x, const body *b)
{
    return b->has_tid ? b->tid : b->pid >= 0 ? (uint64_t)b->pid : (uint64_t)(x->pid >= 0 ? x->pid : 0);
}

/* The T: scan of open(): every thread's stack of marker frames. Names are
 * interned to small ids first, so that an end finds its frame through a map
 * (thread, name) -> topmost frame of that name, never by walking the stack:
 * deep stacks with many ends of methods not on them stay linear. */
typedef struct sname {
    const char *p; /* into the input */
    size_t n;
} sname;

typedef struct sframe {
    uint32_t name;
    uint32_t below;  /* 1 + index of the next frame of the same name below it; 0 none */
    uint64_t t_off;  /* UINT64_MAX: no pending throw */
} sframe;

typedef struct sstack {
    sframe *f;
    uint32_t n, cap;
    uint64_t deeper; /* B: markers past max-depth, not kept: the next ends close them first */
} sstack;

/* Frames deeper than this are dropped (option max-depth), as normalize drops them; the
 * reader's own stacks stop there too, so that a dump of opens never closed does not grow them. */
static uint32_t max_depth(const tci_rctx *r) { return r->opt->max_depth ? r->opt->max_depth : 10000; }

typedef struct sscan {
    tci_idmap name_ids;   /* hash(name, seed) -> index into names */
    sname *names;
    uint32_t n_names, cap_names;
    tci_idmap top;        /* thread << 32 | name -> 1 + index of the topmost such frame; 0 none */
    sstack *stacks;       /* per thread */
    uint32_t n_stacks;    /* slots (empty ones included) */
} sscan;


/* The id of a marker name, compared by length and bytes (a NUL is a byte like any other). */
static uint32_t scan_name(sscan *sc, const char *p, size_t n)
{
    for (uint64_t seed = 0;; seed++) { /* two names with one hash: try the next seed */
        uint64_t h = tci_text_hash(p, n, seed);
        uint32_t i = tci_idmap_get(&sc->name_ids, h);
        if (i == TCI_NONE) {
            if (sc->n_names == UINT32_MAX - 1 ||
                tci_grow((void **)&sc->names, &sc->cap_names, sc->n_names, sizeof *sc->names) != 0 ||
                tci_idmap_put(&sc->name_ids, h, sc->n_names) != 0)
                return TCI_NONE;
            sc->names[sc->n_names] = (sname){p, n};
            return sc->n_names++;
        }
        if (sc->names[i].n == n && !memcmp(sc->names[i].p, p, n))
            return i;
    }
}

static void scan_free(sscan *sc)
{
    for (uint32_t i = 0; i < sc->n_stacks; i++)
        free(sc->stacks[i].f);
    free(sc->stacks);
    free(sc->names);
    tci_idmap_free(&sc->name_ids);
    tci_idmap_free(&sc->top);
}

static uint64_t top_key(uint32_t thread, uint32_t name) { return (uint64_t)thread << 32 | name; }

/* T:x decision, per thread: a pending throw of x is dropped when x then ends by E:x (or throws again). */
static int scan_marker(tci_rctx *r, rhea *x, sscan *sc, uint32_t th, char mk, const char *p, size_t len, uint64_t off)
{
    uint32_t had = sc->n_stacks; /* the array doubles, new slots empty */
    if (th >= had) {
        if (tci_grow((void **)&sc->stacks, &sc->n_stacks, th, sizeof *sc->stacks) != 0)
            return nomem(r);
        memset(sc->stacks + had, 0, (size_t)(sc->n_stacks - had) * sizeof *sc->stacks);
    }
    sstack *st = &sc->stacks[th];
    uint32_t name = scan_name(sc, p, len);
    if (name == TCI_NONE)
        return nomem(r);
    uint32_t at = tci_idmap_get(&sc->top, top_key(th, name));
    if (mk == 'B' && st->n >= max_depth(r)) {
        st->deeper++;
        return TC_OK;
    }
    if (mk != 'B' && st->deeper) { /* the end of one not kept, as normalize pops its dropped frames first */
        st->deeper--;
        return TC_OK;
    }
    if (mk == 'B') {
        if (st->n == UINT32_MAX - 1 || tci_grow((void **)&st->f, &st->cap, st->n, sizeof *st->f) != 0 ||
            tci_idmap_put(&sc->top, top_key(th, name), st->n + 1) != 0)
            return nomem(r);
        st->f[st->n++] = (sframe){name, at == TCI_NONE ? 0 : at, UINT64_MAX};
        return TC_OK;
    }
    if (at == TCI_NONE || at == 0)
        return TC_OK; /* not on the stack: normalize decides */
    uint32_t i = at - 1;
    sframe *f = &st->f[i];
    if (f->t_off != UINT64_MAX && i + 1 == st->n) { /* the earlier throw was caught inside x */
        if (tci_extsort_add(x->drop_t, &f->t_off) != 0)
            return sort_error(r, "write");
        f->t_off = UINT64_MAX;
    }
    if (mk == 'T' && i + 1 == st->n) { /* pending: x may catch it */
        f->t_off = off;
        return TC_OK;
    }
    while (st->n > i) { /* frames above keep their throws as ends; each frame is popped once */
        const sframe *g = &st->f[--st->n];
        if (tci_idmap_put(&sc->top, top_key(th, g->name), g->below) != 0)
            return nomem(r);
    }
    return TC_OK;
}

static int cmp_offset(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int text_open(tci_rctx *r, rhea *x)
{
    tci_trace *t = r->trace;
    size_t pos = 0;
    tci_line l;
    int64_t start_hdr = TCI_NO_TIME, end_hdr = TCI_NO_TIME, first_ts = TCI_NO_TIME, v;
    l = (tci_line){NULL, 0, 0}; /* stays empty when the input has no line at all */
    while (next_line(r->data, r->size, &pos, &l) && !l.n)
        ;
    if (header_kind(&l) == 'S') {
        if (header_field(&l, 2, &v))
            start_hdr = v;
        if (header_field(&l, 3, &v))
            set_pid(t, x, v);
        x->body = pos;
    } else {
        x->body = l.off;
        tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, 0, "no TRACE_START line: the dump's beginning may be missing");
    }
    sscan sc;
    memset(&sc, 0, sizeof sc);
    int rc = (x->drop_t = tci_extsort_new(sizeof(uint64_t), cmp_offset, 0)) ? TC_OK : nomem(r);
    uint64_t lines = 0, bodies = 0;
    pos = x->body;
    while (rc == TC_OK && next_line(r->data, r->size, &pos, &l)) {
        int hk = header_kind(&l);
        if (hk == 'E') {
            x->has_end = true;
            if (header_field(&l, 2, &v))
                end_hdr = v;
        }
        body b;
        lines += l.n && !hk;
        if (!l.n || hk || parse_body(&l, &b) != 0)
            continue;
        bodies++;
        if ((bodies & 0xFFFF) == 0)
            tci_source_release(r->source, l.off); /* read once here, front to back */
        if (!x->version) {
            x->version = b.frac_digits <= 6 ? 1 : 2;
            x->main_only = !b.has_tid;
        }
        if (x->pid < 0 && b.pid >= 0)
            set_pid(t, x, b.pid);
        if (first_ts == TCI_NO_TIME || b.ts < first_ts)
            first_ts = b.ts;
        uint32_t th = thread_of(r, x, tid_of(x, &b));
        if (th == TCI_NONE) {
            rc = tci_trace_fail(t, r->diag, MOD, l.off);
            break;
        }
        if (is_monotonic_line(&b)) {
            int64_t mono;
            if (monotonic_value(&b, &mono)) {
                char val[32];
                int vn = snprintf(val, sizeof val, "%lld", (long long)(mono - b.ts));
                if (tci_trace_add_meta(t, "monotonic-minus-boottime-ns", 27, val, (size_t)vn) != TC_OK)
                    rc = tci_trace_fail(t, r->diag, MOD, l.off);
            }
            continue;
        }
        char mk = marker_of(&b);
        if (!mk)
            continue;
        rc = scan_marker(r, x, &sc, th, mk, b.name + 2, b.name_len - 2, l.off);
    }
    scan_free(&sc);
    if (rc == TC_OK && tci_extsort_done(x->drop_t) != 0)
        rc = sort_error(r, "sort");
    if (rc != TC_OK)
        return rc;
    if (!bodies && lines) /* -i rhea on any text: refused, not an empty trace */
        return tci_error(r->diag, TC_ERR_NO_TRACE, MOD, x->body,
                         "no trace events found: none of the %llu lines is a RheaTrace line "
                         "(\"<seconds>.<fraction>[ <tid>]: <atrace payload>\")", (unsigned long long)lines);
    if (!bodies)
        return tci_error(r->diag, TC_ERR_NO_TRACE, MOD, x->body, "no trace events found: no line after the header");
    if (!x->version)
        x->version = 1;
    if (!x->has_end)
        tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, r->size, "no TRACE_END line: the dump was cut");
    /* 1.x: TRACE_START/END are on the lines' (boot) clock; 2.x lines are monotonic */
    bool hdr_clock = x->version == 1 && start_hdr != TCI_NO_TIME && (first_ts == TCI_NO_TIME || start_hdr <= first_ts);
    t->start_ns = hdr_clock ? start_hdr : first_ts != TCI_NO_TIME ? first_ts : 0;
    t->start_given = hdr_clock;
    if (hdr_clock && end_hdr != TCI_NO_TIME && end_hdr >= start_hdr)
        t->elapsed_ns = end_hdr - start_hdr;
    if (x->version == 1) { /* numeric names (traceWithMethodID) only with a mapping */
        static const char *const names[] = {"methodMapping.txt"};
        if ((rc = load_mapping(r, x, names, 1, false)) != TC_OK)
            return rc;
    }
    snprintf(t->detail, sizeof t->detail, "RheaTrace %d.x text (%s)", x->version,
             x->main_only ? "main thread only" : "all threads");
    x->pos = x->body;
    return TC_OK;
}

/* The name of a slice: numeric ids through the mapping, "<rhea-draft>" removed,
 * "name[params]" keeps "name" as its short form. */
static uint32_t slice_name(tci_rctx *r, rhea *x, const char *s, size_t n)
{
    if (n > 12 && !memcmp(s, "<rhea-draft>", 12))
        s += 12, n -= 12;
    uint64_t id;
    if (x->have_map && tci_parse_u64(s, n, MAX_MAPPED_ID, &id)) {
        uint32_t m = tci_idmap_get(&x->map, id);
        if (m != TCI_NONE)
            return m;
    }
    size_t short_len = n;
    if (n > 2 && s[n - 1] == ']') {
        const char *br = memchr(s, '[', n);
        if (br && br > s)
            short_len = (size_t)(br - s);
    }
    return tci_trace_name_split(r->trace, n ? s : "[unnamed]", n ? n : 9, n ? short_len : 9);
}

/* Is the T: line at off a throw caught inside its method? Lines are read in
 * file order and the dropped offsets come back sorted: one cursor. 1, 0, or < 0. */
static int throw_dropped(tci_rctx *r, rhea *x, uint64_t off)
{
    for (;;) {
        if (!x->drop_ahead) {
            int n = tci_extsort_next(x->drop_t, &x->next_drop);
            if (n < 0)
                return sort_error(r, "read back");
            if (n == 0)
                return 0;
            x->drop_ahead = true;
        }
        if (x->next_drop > off)
            return 0;
        x->drop_ahead = false;
        if (x->next_drop == off)
            return 1;
    }
}

/* A profilo entry line after the header ("<id>|TRACE_START|...", "<id>|<other>|..."): TRACE_END
 * lines are read by open() (the last one's time: the dump's end); any other (a TRACE_START
 * that is not the first line, an entry RheaTrace does not write) is counted by its name. */
static void header_line(tci_rctx *r, const tci_line *l, int kind)
{
    if (kind == 'E' || r->pass != 1)
        return;
    const char *name = memchr(l->p, '|', l->n) + 1, *bar = memchr(name, '|', l->n - (size_t)(name - l->p));
    size_t len = bar ? (size_t)(bar - name) : l->n - (size_t)(name - l->p);
    if (!len)
        name = "unnamed profilo entry", len = 21;
    tci_not_converted(r->diag, MOD, l->off, name, len);
}

static int text_read(tci_rctx *r, rhea *x, tci_raw *ev, size_t max, size_t *got)
{
    size_t k = 0;
    tci_line l;
    static const char *const what[] = {"", "its timestamp is not <seconds>.<fraction>",
                                       "no \"<tid>:\" or \":\" after the timestamp", "not an atrace payload"};
    while (k < max && next_line(r->data, r->size, &x->pos, &l)) {
        body b;
        int bad, hk;
        if (!l.n)
            continue;
        if ((hk = header_kind(&l)) != 0) {
            header_line(r, &l, hk);
            continue;
        }
        if ((bad = parse_body(&l, &b)) != 0) {
            if (bad == 3 && b.at.why)
                tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, l.off, "line skipped: atrace %c event: %s", b.at.kind, b.at.why);
            else
                tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, l.off, "line skipped: %s", what[bad]);
            continue;
        }
        int64_t mono;
        if (is_monotonic_line(&b)) { /* kept as metadata by open() */
            if (!monotonic_value(&b, &mono))
                tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, l.off, "line skipped: monotonic_time is not <seconds>.<fraction>");
            continue;
        }
        uint32_t th = tci_idmap_get(&x->threads, tid_of(x, &b));
        if (th == TCI_NONE)
            continue; /* not seen by open(): cannot happen on the same bytes */
        tci_raw *e = &ev[k];
        *e = (tci_raw){.wall = b.ts - r->trace->start_ns, .cpu = TCI_NO_TIME, .offset = l.off, .thread = th, .method = TCI_NONE};
        char mk = marker_of(&b);
        const char *name = mk ? b.name + 2 : b.name;
        size_t name_len = mk ? b.name_len - 2 : b.name_len;
        if (mk == 'T') {
            int drop = throw_dropped(r, x, l.off);
            if (drop < 0)
                return drop;
            if (drop) { /* a throw caught inside the method: no slice ends, nothing else shows it */
                tci_not_converted(r->diag, MOD, l.off, "T: throw caught in its method", 29);
                continue;
            }
        }
        switch (mk) {
        case 'B': e->action = TCI_ACT_ENTER; break;
        case 'E': e->action = TCI_ACT_EXIT; break;
        case 'T': e->action = TCI_ACT_UNWIND; break;
        default: e->action = b.at.action; break; /* the payload's own record */
        }
        e->value = b.at.value;
        e->id = (uint64_t)b.at.cookie;
        if (b.kind == 'E')
            name_len = 0; /* atrace ends close the innermost slice, whatever they say */
        if ((b.kind != 'E' || mk) && (e->method = slice_name(r, x, name, name_len)) == TCI_NONE)
            return tci_trace_fail(r->trace, r->diag, MOD, l.off);
        k++;
    }
    r->pos = x->pos;
    *got = k;
    return k ? TC_OK : TC_EOF;
}

/* ---- 2.x binary --------------------------------------------------------------------- */

static int cmp_bslice(const void *a, const void *b)
{
    const bslice *s = a, *u = b;
    if (s->thread != u->thread) return s->thread < u->thread ? -1 : 1;
    if (s->start != u->start) return s->start < u->start ? -1 : 1;
    if (s->end != u->end) return s->end > u->end ? -1 : 1;
    return s->offset < u->offset ? -1 : s->offset > u->offset;
}

/* Does the open slice `top` still contain the next slice s (same thread, not ended before it)? */
static bool contains(const bslice *top, const bslice *s)
{
    return s && s->thread == top->thread &&
           (top->end > s->start || (top->end == s->start && top->start == s->start));
}

/* Each thread's sorted slices through a stack: enters and exits, properly
 * nested; a child is clamped to its parent's end. Streams: the stack holds
 * one thread's open slices, nothing else is kept. */
static int bin2_read(tci_rctx *r, rhea *x, tci_raw *ev, size_t max, size_t *got)
{
    size_t k = 0;
    int64_t origin = r->trace->start_ns;
    while (k < max) {
        if (!x->ahead) {
            int n = sorted_next(r, x, &x->bnext);
            if (n < 0)
                return n;
            x->ahead = n == 1;
        }
        const bslice *s = x->ahead ? &x->bnext : NULL;
        if (x->depth && !contains(&x->stack[x->depth - 1], s)) {
            const bslice *top = &x->stack[--x->depth];
            ev[k++] = (tci_raw){.wall = top->end - origin, .cpu = TCI_NO_TIME, .offset = top->offset,
                                .thread = top->thread, .method = top->method, .action = TCI_ACT_EXIT};
            continue;
        }
        if (!s)
            break;
        if (x->depth >= max_depth(r)) { /* inside max-depth open slices: dropped, and all that nests in it */
            if (r->pass == 1 && x->deep_warned != s->thread)
                tci_warn(r->diag, TCI_FIG_DEPTH_LIMIT, MOD, s->offset,
                         "thread %llu: slices nested deeper than %u; the deeper ones are dropped (option max-depth)",
                         (unsigned long long)r->trace->threads[s->thread].tid, max_depth(r));
            x->deep_warned = s->thread;
            x->ahead = false;
            continue;
        }
        if (tci_grow_n((void **)&x->stack, &x->stack_cap, x->depth, sizeof *x->stack) != 0)
            return nomem(r);
        bslice *in = &x->stack[x->depth++];
        *in = *s;
        if (x->depth > 1 && in->end > in[-1].end)
            in->end = in[-1].end; /* a child ends with its parent */
        x->ahead = false;
        ev[k++] = (tci_raw){.wall = in->start - origin, .cpu = TCI_NO_TIME, .offset = in->offset,
                            .thread = in->thread, .method = in->method, .action = TCI_ACT_ENTER};
    }
    sorted_progress(r, x, BIN2_HDR);
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int bin2_open(tci_rctx *r, rhea *x)
{
    tci_trace *t = r->trace;
    const uint8_t *d = r->data;
    if (r->size < BIN2_HDR)
        return tci_error(r->diag, TC_ERR_FORMAT, MOD, r->size, "the 32-byte header of a RheaTrace binary dump is cut");
    set_pid(t, x, tci_le32(d + 4));
    uint64_t boot = tci_le64(d + 8), mono = tci_le64(d + 16), begin = tci_le64(d + 24);
    if (boot > (uint64_t)INT64_MAX / 2 || mono > (uint64_t)INT64_MAX / 2 || begin > (uint64_t)INT64_MAX / 2)
        return tci_error(r->diag, TC_ERR_FORMAT, MOD, boot > (uint64_t)INT64_MAX / 2 ? 8 : 16,
                         "clock values out of range");
    if (begin < mono)
        begin = mono;
    t->start_ns = (int64_t)begin;
    t->start_given = true;
    char val[32];
    int vn = snprintf(val, sizeof val, "%lld", (long long)((int64_t)mono - (int64_t)boot));
    if (tci_trace_add_meta(t, "monotonic-minus-boottime-ns", 27, val, (size_t)vn) != TC_OK)
        return tci_trace_fail(t, r->diag, MOD, 8);
    /* the mapping: the option, methodMapping.txt, or <prefix>methodMapping.txt for <prefix>appTrace* */
    const char *base = t->input_name ? t->input_name : "";
    const char *stem = strstr(base, "appTrace");
    if (!stem)
        stem = strstr(base, "rhea-atrace");
    char alt[256] = "";
    if (stem && (size_t)(stem - base) + 18 < sizeof alt)
        snprintf(alt, sizeof alt, "%.*smethodMapping.txt", (int)(stem - base), base);
    const char *names[] = {"methodMapping.txt", alt[0] ? alt : NULL};
    int rc = load_mapping(r, x, names, 2, false);
    if (rc == TC_OK)
        rc = sorted_open(r, x, sizeof(bslice), cmp_bslice);
    if (rc != TC_OK)
        return rc;

    size_t n_rec = (r->size - BIN2_HDR) / BIN2_REC, tail = (r->size - BIN2_HDR) % BIN2_REC;
    if (tail)
        tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, r->size - tail,
                 "the dump ends inside a record (%zu of %d bytes); the complete records are read", tail, BIN2_REC);
    unnamed_ids unnamed = {0};
    for (size_t i = 0; i < n_rec && rc == TC_OK; i++) {
        size_t off = BIN2_HDR + i * BIN2_REC;
        uint64_t w0 = tci_le64(d + off), w1 = tci_le64(d + off + 8);
        if (w1 == 0)
            continue;
        uint64_t start = (w0 >> 19) + mono; /* relative to the monotonic base */
        uint64_t dur = ((w0 & 0x7FFFF) << 26) | ((w1 >> 38) & 0x3FFFFFF);
        uint64_t tid = (w1 >> 23) & 0x7FFF, mid = w1 & 0x7FFFFF;
        if (tid == ((uint64_t)x->pid & 0x7FFF))
            tid = (uint64_t)x->pid;
        uint32_t th = thread_of(r, x, tid), m = th == TCI_NONE ? TCI_NONE : name_of_id(r, x, &unnamed, mid, false, &rc);
        if (th == TCI_NONE || m == TCI_NONE) {
            rc = tci_trace_fail(t, r->diag, MOD, off);
            break;
        }
        int64_t s0 = (int64_t)start < (int64_t)begin ? (int64_t)begin : (int64_t)start;
        int64_t e0 = (int64_t)(start + dur) < s0 ? s0 : (int64_t)(start + dur);
        bslice sl = {s0, e0, off, th, m};
        rc = sorted_add(r, x, &sl);
        if ((i & 0xFFFF) == 0xFFFF)
            tci_source_release(r->source, off); /* read once, front to back */
    }
    if (rc == TC_OK)
        report_unnamed(r, &unnamed, "method ids",
                       x->have_map ? "not in the mapping" : "no methodMapping.txt: give one with --mapping",
                       "method#<id>");
    else
        tci_idmap_free(&unnamed.seen);
    if (rc == TC_OK && tci_extsort_done(x->sorted) != 0)
        rc = sort_error(r, "sort");
    if (rc != TC_OK)
        return rc;
    snprintf(t->detail, sizeof t->detail, "RheaTrace 2.x binary method trace (v%u)", tci_le32(d));
    return TC_OK;
}

/* ---- 3.x sampling --------------------------------------------------------------------- */

static int cmp_sample(const void *a, const void *b)
{
    const ssample *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Samples per thread in time order, weighted: the record's duration, else the
 * gap to the thread's next sample, else the thread's previous gap, else 1 ms.
 * One sample of look-ahead is all that is kept. */
static int sampling_read(tci_rctx *r, rhea *x, tci_raw *ev, size_t max, size_t *got)
{
    size_t k = 0;
    while (k < max) {
        int n = x->ahead ? 1 : sorted_next(r, x, &x->snext);
        if (n <= 0) {
            if (n < 0)
                return n;
            break;
        }
        ssample q = x->snext;
        if ((n = sorted_next(r, x, &x->snext)) < 0)
            return n;
        x->ahead = n == 1;
        if (q.thread != x->last_thread)
            x->prev_gap = DEFAULT_SAMPLE_NS;
        x->last_thread = q.thread;
        if (q.weight < 0) {
            if (x->ahead && x->snext.thread == q.thread)
                x->prev_gap = x->snext.ts - q.ts;
            q.weight = (double)x->prev_gap;
        }
        ev[k++] = (tci_raw){.wall = q.ts - r->trace->start_ns, .cpu = TCI_NO_TIME, .offset = q.offset,
                            .value = q.weight, .id = q.stack, .thread = q.thread, .method = q.method,
                            .action = TCI_ACT_SAMPLE};
    }
    sorted_progress(r, x, SAMP_HDR);
    *got = k;
    return k ? TC_OK : TC_EOF;
}

static int sampling_open(tci_rctx *r, rhea *x)
{
    tci_trace *t = r->trace;
    const uint8_t *d = r->data;
    size_t size = r->size;
    if (size < SAMP_HDR)
        return tci_error(r->diag, TC_ERR_FORMAT, MOD, size, "the 28-byte header of a btrace sampling dump is cut");
    uint32_t version = tci_le32(d + 8);
    int32_t extra = (int32_t)tci_le32(d + 24);
    size_t off = SAMP_HDR;
    if (extra > 0) {
        if ((size_t)extra > size - off)
            return tci_error(r->diag, TC_ERR_FORMAT, MOD, 24, "extra header of %d bytes past the end", extra);
        /* {"processId": N, ...}: read where it lies (a tree of a 2 GB header would not fit) */
        static const char *const keys[] = {"processId"};
        tci_jspan pid;
        double v;
        tci_jscan sc = {(const char *)d + off, (size_t)extra, 0, r->source, 0, false};
        if (tci_jscan_object(&sc, keys, 1, &pid) && pid.p && pid.p[0] != '"' && tci_jspan_number(pid, &v) &&
            v >= 0 && v < 4294967296.0)
            set_pid(t, x, (int64_t)v);
        off += (size_t)extra;
    }
    /* the mapping: the option, <stem>-mapping<ext>, sampling-mapping[.bin] */
    const char *base = t->input_name ? t->input_name : "";
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char alt[512] = "";
    if (strlen(base) + 9 < sizeof alt)
        snprintf(alt, sizeof alt, "%.*s-mapping%s", (int)stem, base, base + stem);
    const char *names[] = {alt[0] ? alt : NULL, "sampling-mapping", "sampling-mapping.bin"};
    int rc = load_mapping(r, x, names, 3, true);
    if (rc == TC_OK)
        rc = sorted_open(r, x, sizeof(ssample), cmp_sample);
    if (rc != TC_OK)
        return rc;

    size_t fixed = 40 + (version >= 4 ? 16 : 0) + (version >= 5 ? 12 : 0);
    uint64_t skipped = 0;
    unnamed_ids unnamed = {0};
    int64_t first = TCI_NO_TIME;
    while (off < size && rc == TC_OK) {
        if (size - off < fixed + 8) {
            tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, off, "the dump ends inside a record; the complete records are read");
            break;
        }
        const uint8_t *p = d + off;
        uint16_t tid16 = tci_le16(p + 2);
        uint64_t begin = tci_le64(p + 8), end = tci_le64(p + 16);
        uint32_t saved = tci_le32(p + fixed), actual = tci_le32(p + fixed + 4);
        if (saved > 4096 || (size_t)saved * 8 > size - off - fixed - 8) {
            tci_warn(r->diag, TCI_FIG_TRUNCATED, MOD, off,
                     "a record of %u frames does not fit in the dump; the records before it are read", saved);
            break;
        }
        uint64_t rec_off = off;
        const uint8_t *frames = p + fixed + 8;
        off += fixed + 8 + (size_t)saved * 8;
        if (saved != actual || saved == 0 || begin > (uint64_t)INT64_MAX / 2 || end > (uint64_t)INT64_MAX / 2) {
            skipped++;
            continue;
        }
        uint64_t tid = x->pid >= 0 && (uint64_t)(x->pid & 0xFFFF) == tid16 ? (uint64_t)x->pid : tid16;
        uint32_t th = thread_of(r, x, tid), stack = TCI_NONE, leaf = TCI_NONE;
        if (th == TCI_NONE) {
            rc = tci_trace_fail(t, r->diag, MOD, rec_off);
            break;
        }
        for (uint32_t i = saved; i-- > 0 && rc == TC_OK;) { /* leaf first in the file: build from the root */
            uint64_t ptr = tci_le64(frames + (size_t)i * 8);
            uint32_t m = name_of_id(r, x, &unnamed, ptr, true, &rc);
            if (m == TCI_NONE) {
                rc = tci_trace_fail(t, r->diag, MOD, rec_off);
                break;
            }
            if ((stack = tci_trace_stack(t, stack, m)) == TCI_NONE)
                rc = tci_trace_fail(t, r->diag, MOD, rec_off);
            leaf = m;
        }
        if (rc != TC_OK)
            break;
        ssample q = {.ts = (int64_t)begin, .weight = end > begin ? (double)(end - begin) : -1.0,
                     .offset = rec_off, .thread = th, .method = leaf, .stack = stack};
        rc = sorted_add(r, x, &q);
        if (first == TCI_NO_TIME || (int64_t)begin < first)
            first = (int64_t)begin;
    }
    if (rc != TC_OK) {
        tci_idmap_free(&unnamed.seen);
        return rc;
    }
    if (skipped) { /* one message, each record counted */
        tci_warn(r->diag, TCI_FIG_BAD_LINE, MOD, UINT64_MAX,
                 "%llu sample records without a valid stack (saved depth != actual depth, or 0); skipped",
                 (unsigned long long)skipped);
        tci_count(r->diag, TCI_FIG_BAD_LINE, skipped - 1);
    }
    report_unnamed(r, &unnamed, "frames",
                   x->have_map ? "not in the mapping" : "no sampling-mapping file: give one with --mapping",
                   "method#0x<ptr>");
    if (tci_extsort_done(x->sorted) != 0)
        return sort_error(r, "sort");
    t->start_ns = first != TCI_NO_TIME ? first : 0;
    snprintf(t->detail, sizeof t->detail, "btrace 3.x sampling (v%u)", version);
    return TC_OK;
}

/* ---- the reader ------------------------------------------------------------------------ */

static bool text_start(const uint8_t *buf, size_t len)
{
    size_t i = 0;
    while (i < len && tci_is_digit((char)buf[i]))
        i++;
    return i > 0 && len - i >= 13 && !memcmp(buf + i, "|TRACE_START|", 13) && len - i > 13 &&
           tci_is_digit((char)buf[i + 13]);
}

/* A first line in the body grammar: "<s>.<frac>[ <tid>]: B|" or "E". */
static bool text_body(const uint8_t *buf, size_t len)
{
    size_t pos = 0;
    tci_line l;
    body b;
    return next_line(buf, len, &pos, &l) && parse_body(&l, &b) == 0;
}

static bool bin2_header(const uint8_t *buf, size_t len)
{
    if (len < BIN2_HDR || tci_le32(buf) != 5)
        return false;
    uint32_t pid = tci_le32(buf + 4);
    uint64_t boot = tci_le64(buf + 8), mono = tci_le64(buf + 16), begin = tci_le64(buf + 24);
    return pid > 0 && pid < (1u << 22) && boot && mono && begin >= mono && begin - mono < ((uint64_t)1 << 45) &&
           boot < ((uint64_t)1 << 62) && mono < ((uint64_t)1 << 62);
}

static int rhea_probe(const uint8_t *buf, size_t len, const char *filename)
{
    if (len >= 12 && tci_le32(buf) == SAMP_MAGIC && tci_le32(buf + 4) == 0 && tci_le32(buf + 8) >= 3 &&
        tci_le32(buf + 8) <= 5)
        return 90;
    if (text_start(buf, len))
        return 90;
    if (bin2_header(buf, len)) {
        size_t fl = filename ? strlen(filename) : 0;
        return fl > 4 && !strcmp(filename + fl - 4, ".bin") ? 75 : 60;
    }
    if (len && tci_is_digit((char)buf[0]) && text_body(buf, len))
        return 50;
    return 0;
}

static int rhea_open(tci_rctx *r)
{
    rhea *x = r->priv;
    tci_trace *t = r->trace;
    x->pid = -1;
    x->last_thread = x->deep_warned = TCI_NONE;
    t->time_unit_ns = 1;
    t->wrap_bits = 0;
    t->has_wall = true;
    t->has_cpu = false;
    t->clock = TCI_CLOCK_WALL;
    t->elapsed_ns = -1;
    const uint8_t *d = r->data;
    if (r->size >= 12 && tci_le32(d) == SAMP_MAGIC) {
        x->kind = K_SAMPLING;
        return sampling_open(r, x);
    }
    if (bin2_header(d, r->size) || (r->size >= 4 && tci_le32(d) == 5)) {
        x->kind = K_BIN2;
        return bin2_open(r, x);
    }
    x->kind = K_TEXT;
    return text_open(r, x);
}

static int rhea_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *got)
{
    rhea *x = r->priv;
    return x->kind == K_TEXT ? text_read(r, x, ev, max, got)
           : x->kind == K_BIN2 ? bin2_read(r, x, ev, max, got)
                               : sampling_read(r, x, ev, max, got);
}

static int rhea_rewind(tci_rctx *r)
{
    rhea *x = r->priv;
    x->pos = x->body;
    x->taken = 0;
    x->ahead = x->sorted_end = false;
    x->depth = 0;
    x->last_thread = TCI_NONE;
    x->drop_ahead = false;
    if ((x->sorted && tci_extsort_rewind(x->sorted) != 0) || (x->drop_t && tci_extsort_rewind(x->drop_t) != 0))
        return sort_error(r, "read back");
    return TC_OK;
}

static void rhea_close(tci_rctx *r)
{
    rhea *x = r->priv;
    if (!x)
        return;
    tci_idmap_free(&x->threads);
    tci_extsort_free(x->drop_t);
    tci_idmap_free(&x->map);
    tci_extsort_free(x->sorted);
    free(x->stack);
}

const tci_reader tci_reader_rhea = {
    .name = "rhea",
    .description = "RheaTrace/btrace app dumps: 1.x/2.x atrace text, 2.x binary method trace, 3.x sampling",
    .extensions = "rhea-atrace",
    .aliases = "rheatrace,btrace",
    .options = (const tci_option_def[]){{.key = "mapping", .type = TCI_OPT_PATH, .flags = TCI_OPTF_OPEN,
                                         .arg = "FILE",
                                         .help = "method mapping (methodMapping.txt, sampling-mapping; default: "
                                                 "looked for beside INPUT)",
                                         TCI_OPT_FIELD(mapping)},
                                        {0}},
    .priv_size = sizeof(rhea),
    .probe = rhea_probe,
    .open = rhea_open,
    .read = rhea_read,
    .rewind = rhea_rewind,
    .close = rhea_close,
};
