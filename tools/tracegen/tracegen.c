/*
 * tracegen.c - writes Android ART/Dalvik method traces (the V1 family:
 * versions 1/2/3, non-streaming and streaming 0xF2/0xF3) from a compact text
 * scenario, plus a "facts" file with the truth computed from the scenario.
 * The facts are the independent oracle the tests compare traceconv against;
 * they are computed from the generator's own model of the scenario (64-bit
 * times, full tids), never by decoding the written bytes.
 *
 * One standalone C11 file, libc only.
 *
 *   tracegen SCENARIO.scn OUT.trace [--facts OUT.facts.json]
 *            [--obfuscate MAPPING.txt [--map-seed N] [--r8-map-id] [--residual all|needed]]
 *            [--v2 a16-ns|a16-us|a15|perfetto [--v2-split N]]
 *   tracegen --bench SIZE_MB OUT.trace [--v2 a16-ns]
 *   tracegen --bench-wide SIZE_MB OUT.trace   (98 threads a copy, copies on fresh threads)
 *   tracegen SCENARIO.scn OUT --longrun raw|slow|slow-summary|pftrace [--base64 plain|anr] ...
 *            (ART's long-running-method dump of the scenario: see run_longrun)
 *
 * Exit 0 on success, 2 on a bad scenario or usage ("tracegen: FILE:LINE: msg"),
 * 1 on an I/O error.
 *
 * ---------------------------------------------------------------------------
 * Scenario language (line based; '#' starts a comment at a token start;
 * tokens are words or "quoted strings" with escapes \\ \" \r \n \t \xHH;
 * '{' and '}' are tokens of their own). Durations are integers or decimals
 * with an optional unit: 15, 15us, 2.5ms, 3s, 80min. Numbers may be 0x hex.
 *
 * Header options (one per line, all optional):
 *   version 1|2|3             record layout (v3 = dual clock, 14 bytes) [3]
 *   streaming yes|no          0xF0 bit; ART >= 6 streaming layout      [no]
 *   clock dual|wall|thread-cpu|global  (v3 needs dual, v1/v2 a single clock)
 *   vm art|dalvik             vm= key; dalvik also defaults ids/fields [art]
 *   pid N                     pid= key (omitted when not given)
 *   app PKG                   the app's package (nothing in the trace): written to the
 *                             facts as "app", the truth the app's detection is tested on
 *   start N                   header start time, µs                    [1000000]
 *   data-offset N             header length / offset to data (16 = createtesttrace) [32]
 *   ids art8|art6|dalvik      method id style: "0","0x4".. | "0x0","0x4".. |
 *                             "0x%08x" pointers                        [art8]
 *   method-fields 5|6         6 adds Dalvik's line number              [5]
 *   overhead N                clock-call-overhead-nsec                 [250]
 *   overflow true|false       data-file-overflow=                      [false]
 *   elapsed DUR               elapsed-time-usec [the true elapsed: the end of
 *                             the last thread's scenario]
 *   key TEXT                  an extra (unknown) key line, written verbatim
 *   tids full|synthetic       full: the *threads list has the full tid, records
 *                             carry tid & 0xFFFF (ART <= 13; v1: u8);
 *                             synthetic: Android 14 ids 1,2,3.. in order of
 *                             first flush, only threads with events listed [full]
 *   order global|chunked N    global: records sorted by wall time (ties: thread
 *                             declaration order); chunked: per-thread chunks of
 *                             N records in flush order (Android 14)  [global]
 *   summary yes|no            streaming: write the summary item at the end [yes]
 *   summary-threads all|none  streaming summary *threads (ART 8-13: all; 14: none)
 *   summary-methods none|all  streaming summary *methods (ART 8-13: none; 14: all)
 *   stop-after N              only the first N records are written (overflow)
 *   truncate K                the last written record is cut to K bytes
 *
 * Methods:
 *   method ALIAS CLASS NAME SIG SOURCE [LINE] [id=ID] [unknown]
 *     CLASS as written to the file (dotted or slash form); SOURCE null prints
 *     "(null)"; LINE is written only with method-fields 6 [-1]; id= is the
 *     raw (already shifted) id [art: index<<2 in declaration order; dalvik:
 *     0x41a0c120 + index*0x38]; unknown = never written to any method table.
 *
 * Threads and their call trees:
 *   thread TID NAME [cpu=P%] [cpu0=N] [at=DUR] [unlisted] [{ BODY }]
 *     TID the full tid (>= 65536 allowed); cpu= the default CPU/wall ratio of
 *     its frames [90%]; cpu0 the thread-CPU value of its first record [0]
 *     (Dalvik: a few µs); at= when its body starts [0]; unlisted = not in
 *     *threads nor announced (shown as Thread-<tid>). No body = listed, no events.
 *   BODY statements (one per line, or closed by '}'):
 *     call M [DUR] [cpu=P%|cpu=N] [pre] [open] [unroll] [{ BODY }]
 *         a frame of method alias M lasting DUR µs wall (inclusive; default:
 *         the length of its body). Children run back to back from its start;
 *         the rest of DUR is self time at the end. cpu=P% ratio for this frame
 *         and (inherited) its children; cpu=N (leaf only) exactly N µs CPU.
 *         pre: it was on the stack when tracing began (its enter is not
 *         written); must be the first statement of the thread or of a pre frame.
 *         open: still running at the end (its exit is not written); must be
 *         the last statement of the thread or of an open frame.
 *         unroll: its exit is written with action 2 (exception).
 *     gap DUR        time passes: self time of the enclosing frame, or idle
 *                    (no CPU) between outermost frames
 *     repeat N { BODY }
 *     nest N M [self=DUR] [cpu=..] [pre] [open] [{ BODY }]
 *                    N frames of M nested in each other (recursion); BODY runs
 *                    in the innermost; each level has self=DUR after its child
 *     raw enter|exit|unroll|invalid M
 *                    one bare record (action 0/1/2/3) at the current time,
 *                    outside the structure (for mismatched exits, action 3)
 *
 * Time model: each thread has a wall cursor (µs since trace start, 64-bit)
 * and a CPU clock that advances by ratio*elapsed wall inside frames (0 when
 * idle at depth 0). Written times are the low 32 bits (ART's u32 wrap); the
 * CPU value is relative to the thread's first record plus cpu0.
 *
 * --v2 writes the same scenario as ART format V2 (ART.md §5) instead: version
 * 5 (dual) or 4 (one clock), |0xF0 when streaming; real u32 tids; method ids
 * are pointer-like (V2_METHOD_BASE + 4 * the scenario's id); records are
 * written per thread in flushes of `order chunked N` records [512], each one
 * block; a streaming file announces threads and methods before their first
 * block, a non-streaming one lists them all first; the summary ends the file
 * (`summary no`: none). Variants: a16-ns (Android 16 since 2025-03: times in
 * ns, the scenario's µs x 1000), a16-us (Android 16 before), a15 (Android 15:
 * the first record in a 21/25-byte block header, u16 counts written cut),
 * perfetto (the layout Perfetto's importer reads, §5.4, with a 1 GHz TSC
 * frequency in the header). --v2-split N reproduces the writer bug of
 * FlushEntriesFormatV2: a flush of more than N records goes out as blocks of
 * N whose accumulators are not reset and whose counts are cumulative. The
 * facts are those of the scenario, as for V1. `truncate` is V1 only.
 *
 * Facts (--facts, one JSON object; every key is documented in
 * corpus/README.md): record/action counts, exits without enter, frames open
 * at the end, unknown ids, mismatched exits, trace start/end, per-thread
 * records and wall/CPU totals under the rules of DESIGN.md §4, the
 * folded self-time map, and the per-method profile (calls, recursive calls,
 * inclusive time of outermost activations, exclusive time, caller/callee
 * edges: doc/diff-and-reports.md, "Profile accounting"). They are computed by replaying the
 * records as they are handed to the file (same order, full 64-bit times)
 * through a small stack machine that knows which frames were on the stack
 * before tracing; each frame, when it closes, looks down its own stack to
 * tell outermost activations from nested ones.
 * ---------------------------------------------------------------------------
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* errors and memory                                                         */

static const char *g_scn = "?";
static const char *g_out_path, *g_facts_path;
static FILE *g_out_fp, *g_facts_fp, *g_tmp_fp;

static void cleanup_outputs(void)
{
    if (g_out_fp) { fclose(g_out_fp); g_out_fp = NULL; if (g_out_path) remove(g_out_path); }
    if (g_facts_fp) { fclose(g_facts_fp); g_facts_fp = NULL; if (g_facts_path) remove(g_facts_path); }
    if (g_tmp_fp) { fclose(g_tmp_fp); g_tmp_fp = NULL; }
}

static void die_line(int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tracegen: %s:%d: ", g_scn, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cleanup_outputs();
    exit(2);
}

static void die_io(const char *what)
{
    fprintf(stderr, "tracegen: %s: %s\n", what, strerror(errno));
    cleanup_outputs();
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) { errno = ENOMEM; die_io("out of memory"); }
    return q;
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) { errno = ENOMEM; die_io("out of memory"); }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xrealloc(NULL, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

#define GROW(arr, n, cap)                                                 \
    do {                                                                  \
        if ((n) >= (cap)) {                                               \
            (cap) = (cap) ? (cap) * 2 : 16;                               \
            (arr) = xrealloc((arr), (size_t)(cap) * sizeof(*(arr)));      \
        }                                                                 \
    } while (0)

/* growable byte buffer */
typedef struct { char *p; size_t n, cap; } Buf;

static void buf_put(Buf *b, const void *d, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1) c *= 2;
        b->p = xrealloc(b->p, c);
        b->cap = c;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void buf_str(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }
static void buf_printf(Buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { buf_put(b, tmp, (size_t)n); return; }
    char *big = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_put(b, big, (size_t)n);
    free(big);
}

static void put16(uint8_t *b, uint32_t v) { b[0] = (uint8_t)v; b[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v; b[1] = (uint8_t)(v >> 8); b[2] = (uint8_t)(v >> 16); b[3] = (uint8_t)(v >> 24);
}
static void put64(uint8_t *b, uint64_t v) { put32(b, (uint32_t)v); put32(b + 4, (uint32_t)(v >> 32)); }

/* buffered binary output to a FILE */
typedef struct { FILE *f; const char *what; uint8_t *buf; size_t n, cap; uint64_t total; } Out;

static void out_flush(Out *o)
{
    if (o->n && fwrite(o->buf, 1, o->n, o->f) != o->n) die_io(o->what);
    o->n = 0;
}
static void out_put(Out *o, const void *d, size_t n)
{
    if (o->n + n > o->cap) out_flush(o);
    if (n > o->cap) {
        if (fwrite(d, 1, n, o->f) != n) die_io(o->what);
    } else {
        memcpy(o->buf + o->n, d, n);
        o->n += n;
    }
    o->total += n;
}

/* ------------------------------------------------------------------------ */
/* tokens                                                                    */

enum { TK_WORD, TK_STR, TK_LB, TK_RB, TK_NL, TK_EOF };
typedef struct { int type, line; char *s; size_t len; } Tok;
typedef struct { Tok *t; size_t n, cap, i; } Toks;

static int utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t k;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) k = 1;
        else if ((c & 0xF0) == 0xE0) k = 2;
        else if (c >= 0xF0 && c <= 0xF4) k = 3;
        else return 0;
        if (k > n - i - 1) return 0;
        for (size_t j = 1; j <= k; j++)
            if ((p[i + j] & 0xC0) != 0x80) return 0;
        i += k + 1;
    }
    return 1;
}

static void tokenize(const char *src, size_t len, Toks *tk)
{
    int line = 1;
    size_t i = 0;
    while (i < len) {
        char c = src[i];
        if (c == '\n') {
            GROW(tk->t, tk->n, tk->cap);
            tk->t[tk->n++] = (Tok){TK_NL, line, NULL, 0};
            line++; i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') { i++; continue; }
        if (c == '#') { while (i < len && src[i] != '\n') i++; continue; }
        GROW(tk->t, tk->n, tk->cap);
        if (c == '{' || c == '}') {
            tk->t[tk->n++] = (Tok){c == '{' ? TK_LB : TK_RB, line, NULL, 0};
            i++;
            continue;
        }
        if (c == '"') {
            Buf b = {0};
            i++;
            for (;;) {
                if (i >= len || src[i] == '\n') die_line(line, "unterminated string");
                char d = src[i++];
                if (d == '"') break;
                if (d == '\\') {
                    if (i >= len) die_line(line, "unterminated string");
                    char e = src[i++];
                    char o;
                    switch (e) {
                    case '\\': o = '\\'; break;
                    case '"': o = '"'; break;
                    case 'n': o = '\n'; break;
                    case 'r': o = '\r'; break;
                    case 't': o = '\t'; break;
                    case 'x': {
                        if (i + 2 > len || !isxdigit((unsigned char)src[i]) || !isxdigit((unsigned char)src[i + 1]))
                            die_line(line, "bad \\x escape");
                        char hx[3] = {src[i], src[i + 1], 0};
                        o = (char)strtol(hx, NULL, 16);
                        i += 2;
                        break;
                    }
                    default: die_line(line, "unknown escape \\%c", e); return;
                    }
                    buf_put(&b, &o, 1);
                } else {
                    buf_put(&b, &d, 1);
                }
            }
            if (!b.p) buf_put(&b, "", 0);
            if (!utf8_valid(b.p, b.n)) die_line(line, "string is not valid UTF-8");
            tk->t[tk->n++] = (Tok){TK_STR, line, b.p, b.n};
            continue;
        }
        size_t s = i;
        while (i < len && !strchr(" \t\r\n{}\"", src[i])) i++;
        if (!utf8_valid(src + s, i - s)) die_line(line, "word is not valid UTF-8");
        tk->t[tk->n++] = (Tok){TK_WORD, line, xstrndup(src + s, i - s), i - s};
    }
    GROW(tk->t, tk->n, tk->cap);
    tk->t[tk->n++] = (Tok){TK_EOF, line, NULL, 0};
}

/* ------------------------------------------------------------------------ */
/* scenario model                                                            */

enum { CLK_DUAL, CLK_WALL, CLK_THREADCPU, CLK_GLOBAL };
static const char *const clock_names[] = {"dual", "wall", "thread-cpu", "global"};
enum { IDS_ART8, IDS_ART6, IDS_DALVIK };
enum { N_CALL, N_GAP, N_REPEAT, N_NEST, N_RAW };
enum { F_PRE = 1, F_OPEN = 2, F_UNROLL = 4 };

typedef struct Node {
    int kind, line;
    int method;
    int64_t dur;     /* call: -1 = length of body; gap: µs; nest: self per level */
    int pct;         /* -1 inherit */
    int64_t cpu_abs; /* -1 none */
    unsigned flags;
    int64_t count;   /* repeat / nest */
    int action;      /* raw */
    struct Node *child, *next;
} Node;

typedef struct {
    char *alias, *cls, *name, *sig, *src;
    long line;
    uint64_t id;
    int has_id, unknown, line_no;
    /* run time */
    int defined;   /* streaming: defined inline already */
    int used;      /* used by a written record (unknown-id count) */
    char *short_name; /* sanitized folded frame */
} Method;

typedef struct { int kind, pct, ipct, phase; const Node *n; const Node *cur; int64_t start, cnt; } WF;
/* profile facts of one method (one thread's or all threads'), µs */
typedef struct { int64_t calls, rec, incl_w, incl_c, excl_w, excl_c, oexcl_w, oexcl_c; } PM;
/* one caller -> callee edge: [all, caller outermost, callee outermost, once][calls, wall, cpu] */
enum { PE_ALL, PE_CALLER_OUTER, PE_CALLEE_OUTER, PE_ONCE };
typedef struct { int64_t v[4][3]; int used; } PE;
typedef struct { int action, method; int64_t wall, cpu; } Ev;
typedef struct { int node, method, recon; int64_t w0, c0, wchild, cchild; } EFrame;

typedef struct {
    uint64_t tid;
    char *name;
    int pct, unlisted, line;
    int64_t cpu0, at;
    Node *body;
    int has_body;
    /* walker */
    WF *ws; int wn, wcap;
    int64_t wall, cpu100, cpu_base;
    int has_base;
    Ev pend; int has_pend;
    /* output */
    uint32_t rec_tid;
    int rid_assigned, announced;
    Ev *chunk; int nchunk;
    /* facts */
    EFrame *es; int en, ecap, nwritten;
    int seen, root_node, maxdepth, folded_frame_done;
    int64_t first_t, first_c, last_t, last_c;
    uint64_t records;
    int64_t wall_total, cpu_total;
    char *frame_name;
    PM *pm;                      /* per method of the scenario */
    int has_pre, open_end;
    int64_t first_rec_t, first_rec_c;
} Thread;

typedef struct { int parent, method, child, sib; int64_t self; } TNode;

typedef struct {
    /* config */
    int version, streaming, clock, vm, has_pid, ids, fields, overflow, has_elapsed, synth;
    int chunk, summary, summary_threads, summary_methods, truncate;
    int v2, v2_split;            /* --v2 variant (0: V1 output), --v2-split */
    int set_ids, set_fields, data_offset;
    int ln_version, ln_clock, ln_streaming, ln_offset, ln_truncate; /* where options were set */
    int64_t pid, overhead, stop_after;
    char *app;                   /* option app: the facts' "app" (NULL: none) */
    uint64_t start, elapsed;
    char **keys; int nkeys, ckeys;
    Method *m; int nm, cm;
    Thread *th; int nth, cth;
    /* run */
    Out out;
    uint64_t written;      /* records handed to the file (incl. a truncated last one) */
    uint64_t next_synth;
    int held; Thread *held_t; Ev held_ev; uint8_t held_b[16]; size_t held_n;
    int64_t elapsed_true;
    /* facts */
    uint64_t f_records, f_enter, f_exit, f_unroll, f_ewe, f_open, f_unknown, f_mismatch, f_invalid;
    uint64_t f_threads;
    int64_t f_max_wall; int f_have_wall;
    const char *folded_off;
    TNode *tn; int ntn, ctn;
    PM *pm_all;                  /* per method, all threads */
    PE *pe;                      /* (caller + 1) * nm + callee; caller -1 = the thread root */
    const char *profile_off;
} G;

static int rec_size(const G *g) { return g->version == 1 ? 9 : g->version == 2 ? 10 : 14; }
static int clock_has_cpu(int c) { return c == CLK_DUAL || c == CLK_THREADCPU; }

/* ------------------------------------------------------------------------ */
/* parsing                                                                   */

static Tok *tk_peek(Toks *t) { return &t->t[t->i]; }
static Tok *tk_next(Toks *t) { Tok *k = &t->t[t->i]; if (k->type != TK_EOF) t->i++; return k; }
static int tk_is_arg(const Tok *k) { return k->type == TK_WORD || k->type == TK_STR; }

static int64_t parse_int(const Tok *k, const char *what)
{
    if (!tk_is_arg(k)) die_line(k->line, "expected %s", what);
    char *e;
    errno = 0;
    long long v = strtoll(k->s, &e, 0);
    if (errno || *e || e == k->s) die_line(k->line, "bad %s '%s'", what, k->s);
    return v;
}

static uint64_t parse_u64(const char *s, int line, const char *what)
{
    char *e;
    errno = 0;
    if (*s == '-') die_line(line, "bad %s '%s'", what, s);
    unsigned long long v = strtoull(s, &e, 0);
    if (errno || *e || e == s) die_line(line, "bad %s '%s'", what, s);
    return v;
}

/* "15", "15us", "2.5ms", "3s", "80min" -> µs */
static int64_t parse_dur_s(const char *s, int line)
{
    const char *p = s;
    uint64_t ip = 0, frac = 0, fscale = 1;
    int digits = 0;
    while (isdigit((unsigned char)*p)) { ip = ip * 10 + (uint64_t)(*p - '0'); p++; digits++; if (ip > 1000000000000000ull) die_line(line, "duration too large '%s'", s); }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            if (fscale < 1000000000000ull) { frac = frac * 10 + (uint64_t)(*p - '0'); fscale *= 10; }
            else if (*p != '0') die_line(line, "too many decimals in '%s'", s);
            p++; digits++;
        }
    }
    if (!digits) die_line(line, "bad duration '%s'", s);
    uint64_t unit;
    if (!*p || !strcmp(p, "us")) unit = 1;
    else if (!strcmp(p, "ms")) unit = 1000;
    else if (!strcmp(p, "s")) unit = 1000000;
    else if (!strcmp(p, "min")) unit = 60000000;
    else { die_line(line, "bad duration unit in '%s' (us, ms, s, min)", s); return 0; }
    if ((frac * unit) % fscale) die_line(line, "duration '%s' is not a whole number of µs", s);
    return (int64_t)(ip * unit + frac * unit / fscale);
}

static int64_t parse_dur(const Tok *k)
{
    if (!tk_is_arg(k)) die_line(k->line, "expected a duration");
    return parse_dur_s(k->s, k->line);
}

static int parse_pct_s(const char *s, int line)
{
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != '%') die_line(line, "expected a percentage like 80%%, got '%s'", s);
    char *e;
    long v = strtol(s, &e, 10);
    if (e != s + n - 1 || v < 0 || v > 100) die_line(line, "bad percentage '%s' (0%%..100%%)", s);
    return (int)v;
}

static void expect_eol(Toks *t)
{
    Tok *k = tk_peek(t);
    if (k->type == TK_NL) { tk_next(t); return; }
    if (k->type == TK_EOF || k->type == TK_RB) return;
    die_line(k->line, "unexpected '%s'", k->s ? k->s : (k->type == TK_LB ? "{" : "?"));
}

static int find_method(G *g, const Tok *k)
{
    if (!tk_is_arg(k)) die_line(k->line, "expected a method alias");
    for (int i = 0; i < g->nm; i++)
        if (!strcmp(g->m[i].alias, k->s)) return i;
    die_line(k->line, "unknown method alias '%s' (declare it with 'method' first)", k->s);
    return -1;
}

static int is_word(const Tok *k, const char *w) { return k->type == TK_WORD && !strcmp(k->s, w); }

static Node *parse_block(G *g, Toks *t);

static void parse_cpu_opt(const char *v, int line, Node *n)
{
    if (strchr(v, '%')) n->pct = parse_pct_s(v, line);
    else n->cpu_abs = parse_dur_s(v, line);
}

static Node *parse_stmt(G *g, Toks *t)
{
    Tok *k = tk_next(t);
    if (k->type != TK_WORD) die_line(k->line, "expected a statement (call, gap, repeat, nest, raw)");
    Node *n = xcalloc(1, sizeof *n);
    n->line = k->line;
    n->dur = -1;
    n->pct = -1;
    n->cpu_abs = -1;
    n->method = -1;
    if (!strcmp(k->s, "call") || !strcmp(k->s, "nest")) {
        int nest = k->s[0] == 'n';
        n->kind = nest ? N_NEST : N_CALL;
        if (nest) {
            n->count = parse_int(tk_next(t), "nest depth");
            if (n->count < 1 || n->count > 10000000) die_line(n->line, "nest depth out of range");
            n->dur = 0;
        }
        n->method = find_method(g, tk_next(t));
        while (tk_is_arg(tk_peek(t))) {
            Tok *a = tk_next(t);
            if (!strcmp(a->s, "pre")) n->flags |= F_PRE;
            else if (!strcmp(a->s, "open")) n->flags |= F_OPEN;
            else if (!strcmp(a->s, "unroll")) n->flags |= F_UNROLL;
            else if (!strncmp(a->s, "cpu=", 4)) parse_cpu_opt(a->s + 4, a->line, n);
            else if (nest && !strncmp(a->s, "self=", 5)) n->dur = parse_dur_s(a->s + 5, a->line);
            else if (!nest && n->dur < 0 && (isdigit((unsigned char)a->s[0]) || a->s[0] == '.')) n->dur = parse_dur(a);
            else die_line(a->line, "unexpected '%s' in %s", a->s, nest ? "nest" : "call");
        }
        if ((n->flags & F_PRE) && (n->flags & F_OPEN))
            die_line(n->line, "a frame cannot be both 'pre' and 'open' (it would not appear in the trace)");
        if ((n->flags & F_OPEN) && (n->flags & F_UNROLL)) die_line(n->line, "an 'open' frame has no exit to unroll");
        if (nest && n->cpu_abs >= 0) die_line(n->line, "nest takes cpu=P%% only");
        if (tk_peek(t)->type == TK_LB) {
            tk_next(t);
            n->child = parse_block(g, t);
            if (n->cpu_abs >= 0 && n->child) die_line(n->line, "cpu=N (absolute) is for leaf calls only; use cpu=P%%");
        }
    } else if (!strcmp(k->s, "gap")) {
        n->kind = N_GAP;
        n->dur = parse_dur(tk_next(t));
    } else if (!strcmp(k->s, "repeat")) {
        n->kind = N_REPEAT;
        n->count = parse_int(tk_next(t), "repeat count");
        if (n->count < 0) die_line(n->line, "negative repeat count");
        if (tk_peek(t)->type != TK_LB) die_line(n->line, "repeat needs a { block }");
        tk_next(t);
        n->child = parse_block(g, t);
    } else if (!strcmp(k->s, "raw")) {
        n->kind = N_RAW;
        Tok *a = tk_next(t);
        if (is_word(a, "enter")) n->action = 0;
        else if (is_word(a, "exit")) n->action = 1;
        else if (is_word(a, "unroll")) n->action = 2;
        else if (is_word(a, "invalid")) n->action = 3;
        else die_line(a->line, "raw needs enter|exit|unroll|invalid");
        n->method = find_method(g, tk_next(t));
    } else {
        die_line(k->line, "unknown statement '%s'", k->s);
    }
    expect_eol(t);
    return n;
}

/* pre frames first, open frames last (see the comment at the top) */
static void check_block(const Node *first, int owner_root, unsigned owner_flags, int owner_repeat)
{
    int idx = 0;
    for (const Node *s = first; s; s = s->next, idx++) {
        if ((s->flags & F_PRE) &&
            (owner_repeat || idx != 0 || !(owner_root || (owner_flags & F_PRE))))
            die_line(s->line, "a 'pre' frame must be the first statement of its thread or of another 'pre' frame");
        if ((s->flags & F_OPEN) && (owner_repeat || s->next || !(owner_root || (owner_flags & F_OPEN))))
            die_line(s->line, "an 'open' frame must be the last statement of its thread or of another 'open' frame");
        if (s->kind == N_CALL || s->kind == N_NEST) check_block(s->child, 0, s->flags, 0);
        if (s->kind == N_REPEAT) check_block(s->child, 0, 0, 1);
    }
}

static Node *parse_block(G *g, Toks *t)
{
    Node *head = NULL, **tail = &head;
    for (;;) {
        Tok *k = tk_peek(t);
        if (k->type == TK_NL) { tk_next(t); continue; }
        if (k->type == TK_RB) { tk_next(t); break; }
        if (k->type == TK_EOF) die_line(k->line, "missing '}'");
        Node *n = parse_stmt(g, t);
        *tail = n;
        tail = &n->next;
    }
    return head;
}

static int parse_bool(const Tok *k)
{
    if (is_word(k, "yes") || is_word(k, "true") || is_word(k, "1")) return 1;
    if (is_word(k, "no") || is_word(k, "false") || is_word(k, "0")) return 0;
    die_line(k->line, "expected yes/no");
    return 0;
}

static char *tok_str(const Tok *k, const char *what)
{
    if (!tk_is_arg(k)) die_line(k->line, "expected %s", what);
    return xstrndup(k->s, k->len);
}

static void check_field(const char *s, int line, const char *what)
{
    if (strchr(s, '\t') || strchr(s, '\n')) die_line(line, "%s must not contain a tab or newline", what);
}

static void parse_method(G *g, Toks *t, int line)
{
    GROW(g->m, g->nm, g->cm);
    Method *m = &g->m[g->nm];
    memset(m, 0, sizeof *m);
    Tok *a = tk_next(t);
    m->alias = tok_str(a, "a method alias");
    for (int i = 0; i < g->nm; i++)
        if (!strcmp(g->m[i].alias, m->alias)) die_line(line, "method alias '%s' declared twice", m->alias);
    m->cls = tok_str(tk_next(t), "a class name");
    m->name = tok_str(tk_next(t), "a method name");
    m->sig = tok_str(tk_next(t), "a signature");
    Tok *s = tk_next(t);
    if (is_word(s, "null")) m->src = xstrndup("(null)", 6);
    else m->src = tok_str(s, "a source file (or null)");
    check_field(m->cls, line, "class");
    check_field(m->name, line, "method name");
    check_field(m->sig, line, "signature");
    check_field(m->src, line, "source file");
    m->line = -1;
    m->line_no = line;
    while (tk_is_arg(tk_peek(t))) {
        Tok *o = tk_next(t);
        if (!strncmp(o->s, "id=", 3)) {
            m->id = parse_u64(o->s + 3, o->line, "method id");
            if (m->id & 3) die_line(o->line, "method ids have the low 2 bits zero (they are already shifted)");
            if (m->id > 0xFFFFFFFCull) die_line(o->line, "method id does not fit in 32 bits");
            m->has_id = 1;
        } else if (!strcmp(o->s, "unknown")) {
            m->unknown = 1;
        } else if (isdigit((unsigned char)o->s[0]) || o->s[0] == '-') {
            m->line = (long)parse_int(o, "line number");
        } else {
            die_line(o->line, "unexpected '%s' in method", o->s);
        }
    }
    g->nm++;
    expect_eol(t);
}

static void parse_thread(G *g, Toks *t, int line)
{
    GROW(g->th, g->nth, g->cth);
    Thread *th = &g->th[g->nth];
    memset(th, 0, sizeof *th);
    th->line = line;
    Tok *a = tk_next(t);
    if (!tk_is_arg(a)) die_line(line, "expected a thread id");
    th->tid = parse_u64(a->s, line, "thread id");
    if (th->tid > 0xFFFFFFFFull) die_line(line, "thread id too large");
    th->name = tok_str(tk_next(t), "a thread name");
    check_field(th->name, line, "thread name");
    th->pct = 90;
    while (tk_is_arg(tk_peek(t))) {
        Tok *o = tk_next(t);
        if (!strncmp(o->s, "cpu=", 4)) th->pct = parse_pct_s(o->s + 4, o->line);
        else if (!strncmp(o->s, "cpu0=", 5)) th->cpu0 = parse_dur_s(o->s + 5, o->line);
        else if (!strncmp(o->s, "at=", 3)) th->at = parse_dur_s(o->s + 3, o->line);
        else if (!strcmp(o->s, "unlisted")) th->unlisted = 1;
        else die_line(o->line, "unexpected '%s' in thread", o->s);
    }
    for (int i = 0; i < g->nth; i++)
        if (g->th[i].tid == th->tid) die_line(line, "thread id %" PRIu64 " declared twice", th->tid);
    if (tk_peek(t)->type == TK_LB) {
        tk_next(t);
        th->body = parse_block(g, t);
        th->has_body = 1;
        check_block(th->body, 1, 0, 0);
    }
    expect_eol(t);
    g->nth++;
}

static void parse_scenario(G *g, Toks *t)
{
    for (;;) {
        Tok *k = tk_next(t);
        if (k->type == TK_EOF) break;
        if (k->type == TK_NL) continue;
        if (k->type != TK_WORD) die_line(k->line, "expected an option, 'method' or 'thread'");
        int line = k->line;
        const char *o = k->s;
        if (!strcmp(o, "method")) { parse_method(g, t, line); continue; }
        if (!strcmp(o, "thread")) { parse_thread(g, t, line); continue; }
        Tok *v = tk_next(t);
        if (!tk_is_arg(v)) die_line(line, "option '%s' needs a value", o);
        if (!strcmp(o, "version")) g->ln_version = line;
        else if (!strcmp(o, "clock")) g->ln_clock = line;
        else if (!strcmp(o, "streaming")) g->ln_streaming = line;
        else if (!strcmp(o, "data-offset")) g->ln_offset = line;
        else if (!strcmp(o, "truncate")) g->ln_truncate = line;
        if (!strcmp(o, "version")) {
            g->version = (int)parse_int(v, "version");
            if (g->version < 1 || g->version > 3) die_line(line, "version must be 1, 2 or 3");
        } else if (!strcmp(o, "streaming")) g->streaming = parse_bool(v);
        else if (!strcmp(o, "clock")) {
            int c;
            for (c = 0; c < 4; c++) if (!strcmp(v->s, clock_names[c])) break;
            if (c == 4) die_line(line, "clock must be dual, wall, thread-cpu or global");
            g->clock = c;
        } else if (!strcmp(o, "vm")) {
            if (is_word(v, "art")) g->vm = 0;
            else if (is_word(v, "dalvik")) g->vm = 1;
            else die_line(line, "vm must be art or dalvik");
        } else if (!strcmp(o, "pid")) { g->pid = parse_int(v, "pid"); g->has_pid = 1; }
        else if (!strcmp(o, "app")) g->app = tok_str(v, "app");
        else if (!strcmp(o, "start")) g->start = parse_u64(v->s, line, "start time");
        else if (!strcmp(o, "data-offset")) g->data_offset = (int)parse_int(v, "data offset");
        else if (!strcmp(o, "ids")) {
            if (is_word(v, "art8")) g->ids = IDS_ART8;
            else if (is_word(v, "art6")) g->ids = IDS_ART6;
            else if (is_word(v, "dalvik")) g->ids = IDS_DALVIK;
            else die_line(line, "ids must be art8, art6 or dalvik");
            g->set_ids = 1;
        } else if (!strcmp(o, "method-fields")) {
            g->fields = (int)parse_int(v, "method-fields");
            if (g->fields != 5 && g->fields != 6) die_line(line, "method-fields must be 5 or 6");
            g->set_fields = 1;
        } else if (!strcmp(o, "overhead")) g->overhead = parse_int(v, "overhead");
        else if (!strcmp(o, "overflow")) g->overflow = parse_bool(v);
        else if (!strcmp(o, "elapsed")) { g->elapsed = (uint64_t)parse_dur(v); g->has_elapsed = 1; }
        else if (!strcmp(o, "key")) {
            if (!strchr(v->s, '=')) die_line(line, "key needs NAME=VALUE");
            check_field(v->s, line, "key");
            GROW(g->keys, g->nkeys, g->ckeys);
            g->keys[g->nkeys++] = tok_str(v, "key");
        } else if (!strcmp(o, "tids")) {
            if (is_word(v, "full")) g->synth = 0;
            else if (is_word(v, "synthetic")) g->synth = 1;
            else die_line(line, "tids must be full or synthetic");
        } else if (!strcmp(o, "order")) {
            if (is_word(v, "global")) g->chunk = 0;
            else if (is_word(v, "chunked")) {
                g->chunk = (int)parse_int(tk_next(t), "chunk size (records)");
                if (g->chunk < 1 || g->chunk > 1 << 20) die_line(line, "chunk size out of range");
            } else die_line(line, "order must be global or chunked N");
        } else if (!strcmp(o, "summary")) g->summary = parse_bool(v);
        else if (!strcmp(o, "summary-threads")) {
            if (is_word(v, "all")) g->summary_threads = 1;
            else if (is_word(v, "none")) g->summary_threads = 0;
            else die_line(line, "summary-threads must be all or none");
        } else if (!strcmp(o, "summary-methods")) {
            if (is_word(v, "all")) g->summary_methods = 1;
            else if (is_word(v, "none")) g->summary_methods = 0;
            else die_line(line, "summary-methods must be all or none");
        } else if (!strcmp(o, "stop-after")) {
            g->stop_after = parse_int(v, "record count");
            if (g->stop_after < 0) die_line(line, "negative stop-after");
        } else if (!strcmp(o, "truncate")) {
            g->truncate = (int)parse_int(v, "byte count");
        } else {
            die_line(line, "unknown option '%s'", o);
        }
        expect_eol(t);
    }
}

static int first_line(int a, int b) { return a ? a : b ? b : 1; }

static void validate(G *g)
{
    int lv = first_line(g->ln_version, g->ln_clock), lc = first_line(g->ln_clock, g->ln_version);
    int ls = first_line(g->ln_streaming, 0), lo = first_line(g->ln_offset, 0), lt = first_line(g->ln_truncate, 0);
    if (g->version == 3 && g->clock != CLK_DUAL) die_line(lc, "version 3 needs clock dual");
    if (g->version != 3 && g->clock == CLK_DUAL) die_line(lv, "clock dual needs version 3 (set clock for version %d)", g->version);
    if (g->clock == CLK_GLOBAL && g->version != 1) die_line(lc, "clock global exists only with version 1");
    if (g->streaming && g->version == 1) die_line(ls, "streaming traces are version 2 or 3 (u16 thread ids)");
    if (g->streaming && g->data_offset != 32) die_line(lo, "streaming traces have a 32-byte header");
    if (g->data_offset < 16 || g->data_offset > 4096) die_line(lo, "data-offset must be 16..4096");
    if (g->version == 3 && g->data_offset < 18)
        die_line(lo, "version 3 stores the record size at offset 16: data-offset must be >= 18");
    if (g->truncate < 0 || g->truncate >= rec_size(g))
        die_line(lt, "truncate must be 0..%d (bytes kept of the last record)", rec_size(g) - 1);
    if (g->truncate && g->streaming && g->summary) die_line(lt, "a truncated stream has no summary: add 'summary no'");
    if (g->vm == 1 && !g->set_ids) g->ids = IDS_DALVIK;
    if (g->vm == 1 && !g->set_fields) g->fields = 6;
    /* method ids */
    for (int i = 0; i < g->nm; i++) {
        Method *m = &g->m[i];
        if (!m->has_id)
            m->id = g->ids == IDS_DALVIK ? 0x41a0c120ull + (uint64_t)i * 0x38 : (uint64_t)i << 2;
        if (m->id > 0xFFFFFFFCull) die_line(m->line_no, "method id of '%s' does not fit in 32 bits", m->alias);
        for (int j = 0; j < i; j++)
            if (g->m[j].id == m->id) die_line(m->line_no, "methods '%s' and '%s' have the same id", g->m[j].alias, m->alias);
    }
    /* thread ids */
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        if (g->synth) continue;
        if (g->v2) { /* real u32 tids */
            if (t->tid > 0xFFFFFFFFull || !t->tid) die_line(t->line, "V2 thread ids are u32, not 0");
            t->rec_tid = (uint32_t)t->tid;
            t->rid_assigned = 1;
            continue;
        }
        uint32_t r = g->version == 1 ? (uint32_t)t->tid : (uint32_t)(t->tid & 0xFFFF);
        if (g->version == 1 && t->tid > 255) die_line(t->line, "version 1 records carry a u8 thread id: tid must be < 256");
        if (r == 0) die_line(t->line, "thread id %" PRIu64 " is written as 0 in records (reserved)", t->tid);
        for (int j = 0; j < i; j++)
            if (g->th[j].rec_tid == r) die_line(t->line, "threads %" PRIu64 " and %" PRIu64 " collide in 16-bit record ids", g->th[j].tid, t->tid);
        t->rec_tid = r;
        t->rid_assigned = 1;
    }
}

/* ------------------------------------------------------------------------ */
/* names                                                                     */

static void method_id_str(const G *g, uint64_t id, char *buf, size_t n)
{
    if (g->ids == IDS_DALVIK) snprintf(buf, n, "0x%08" PRIx64, id);
    else if (g->ids == IDS_ART8 && id == 0) snprintf(buf, n, "0");
    else snprintf(buf, n, "0x%" PRIx64, id);
}

static void method_line(const G *g, const Method *m, Buf *b)
{
    char id[32];
    method_id_str(g, m->id, id, sizeof id);
    buf_printf(b, "%s\t%s\t%s\t%s\t%s", id, m->cls, m->name, m->sig, m->src);
    if (g->fields == 6) buf_printf(b, "\t%ld", m->line);
    buf_str(b, "\n");
}

/* FOLDED.md sanitizing of one frame */
static char *sanitize(const char *in)
{
    size_t n = strlen(in);
    char *s = xstrndup(in, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ';') s[i] = ':';
        else if (s[i] == '\r' || s[i] == '\n' || s[i] == '\t') s[i] = ' ';
    }
    size_t a = 0, e = n;
    while (a < e && isspace((unsigned char)s[a])) a++;
    while (e > a && isspace((unsigned char)s[e - 1])) e--;
    if (a == e) { free(s); return xstrndup("[unknown]", 9); }
    memmove(s, s + a, e - a);
    s[e - a] = 0;
    n = e - a;
    size_t d = n;
    while (d > 0 && isdigit((unsigned char)s[d - 1])) d--;
    if (d < n && d > 0 && isspace((unsigned char)s[d - 1])) {
        size_t w = d;
        while (w > 0 && isspace((unsigned char)s[w - 1])) w--;
        s[w] = '_';
        memmove(s + w + 1, s + d, n - d + 1);
    }
    return s;
}

static void make_names(G *g)
{
    for (int i = 0; i < g->nm; i++) {
        Method *m = &g->m[i];
        Buf b = {0};
        if (m->unknown) {
            buf_printf(&b, "unknown.0x%" PRIx64, m->id);
        } else {
            for (const char *p = m->cls; *p; p++) buf_put(&b, *p == '/' ? "." : p, 1);
            buf_str(&b, ".");
            buf_str(&b, m->name);
        }
        m->short_name = sanitize(b.p);
        free(b.p);
    }
}

/* ------------------------------------------------------------------------ */
/* facts engine: DESIGN.md §4 applied to the records as they are written     */

static int trie_new(G *g, int parent, int method)
{
    if (g->ntn >= 2000000) { g->folded_off = "more than 2000000 call paths"; return 0; }
    GROW(g->tn, g->ntn, g->ctn);
    TNode *n = &g->tn[g->ntn];
    n->parent = parent; n->method = method; n->child = 0; n->sib = 0; n->self = 0;
    if (parent >= 0) { n->sib = g->tn[parent].child; g->tn[parent].child = g->ntn; }
    return g->ntn++;
}

static int trie_child(G *g, int parent, int method)
{
    if (g->folded_off) return 0;
    for (int c = g->tn[parent].child; c; c = g->tn[c].sib)
        if (g->tn[c].method == method) return c;
    return trie_new(g, parent, method);
}

static void facts_push(G *g, Thread *t, int method, int recon, int64_t w0, int64_t c0)
{
    GROW(t->es, t->en, t->ecap);
    int parent = t->en ? t->es[t->en - 1].node : t->root_node;
    EFrame *f = &t->es[t->en++];
    f->node = trie_child(g, parent, method);
    f->method = method; f->recon = recon;
    f->w0 = w0; f->c0 = c0; f->wchild = 0; f->cchild = 0;
    if (!recon) t->nwritten++;
    if (t->en > t->maxdepth) t->maxdepth = t->en;
}

/* Whether method m is among frames [0, n) of the thread's stack. */
static int on_stack(const Thread *t, int n, int m)
{
    for (int k = 0; k < n; k++)
        if (t->es[k].method == m) return 1;
    return 0;
}

static void pe_add(PE *e, int split, int64_t dw, int64_t dc)
{
    e->v[split][0]++;
    e->v[split][1] += dw;
    e->v[split][2] += dc;
}

/* The frame f just closed (inclusive dw/dc, self sw/sc); t->es[0, t->en) are its callers. */
static void facts_profile(G *g, Thread *t, const EFrame *f, int64_t dw, int64_t dc, int64_t sw, int64_t sc)
{
    if (g->profile_off) return;
    int n = t->en, m = f->method;
    int outer = !on_stack(t, n, m);                  /* an outermost activation of m */
    int caller = n ? t->es[n - 1].method : -1;       /* -1: the thread root, "(toplevel)" */
    int caller_outer = n == 0 || !on_stack(t, n - 1, caller);
    int once = 1;                                    /* no call caller -> m further down this stack */
    for (int k = 0; k < n && once; k++)
        if (t->es[k].method == m && (k ? t->es[k - 1].method : -1) == caller) once = 0;
    PM *rows[2] = {&t->pm[m], &g->pm_all[m]};
    for (int i = 0; i < 2; i++) {
        PM *r = rows[i];
        if (outer) {
            r->calls++;
            r->incl_w += dw; r->incl_c += dc;
            r->oexcl_w += sw; r->oexcl_c += sc;
        } else {
            r->rec++;
        }
        r->excl_w += sw; r->excl_c += sc;
    }
    PE *e = &g->pe[(size_t)(caller + 1) * (size_t)g->nm + (size_t)m];
    e->used = 1;
    pe_add(e, PE_ALL, dw, dc);
    if (caller_outer) pe_add(e, PE_CALLER_OUTER, dw, dc);
    if (outer) pe_add(e, PE_CALLEE_OUTER, dw, dc);
    if (once) pe_add(e, PE_ONCE, dw, dc);
}

static void facts_close_top(G *g, Thread *t, int64_t tw, int64_t tc)
{
    EFrame f = t->es[--t->en];
    int64_t dw = tw - f.w0, dc = tc - f.c0;
    facts_profile(g, t, &f, dw, dc, dw - f.wchild, dc - f.cchild);
    if (!g->folded_off) g->tn[f.node].self += dw - f.wchild;
    if (!f.recon) t->nwritten--;
    if (t->en) { t->es[t->en - 1].wchild += dw; t->es[t->en - 1].cchild += dc; }
    else { t->wall_total += dw; t->cpu_total += dc; }
}

static void facts_feed(G *g, Thread *t, const Ev *ev)
{
    int64_t tw = g->clock == CLK_THREADCPU ? ev->cpu : ev->wall;
    int64_t tc = ev->cpu;
    if (!t->seen) {
        t->seen = 1;
        /* frames open when tracing began ('pre') begin at the trace start:
         * wall 0 (the header start) and thread CPU 0 (doc/formats.md, Conversion rules) */
        t->first_t = 0; t->first_c = 0;
        t->first_rec_t = tw; t->first_rec_c = tc;
        for (int i = 0; i < t->en; i++) { t->es[i].w0 = 0; t->es[i].c0 = 0; }
        g->f_threads++;
    } else {
        if (tw - t->last_t >= ((int64_t)1 << 31) || (clock_has_cpu(g->clock) && tc - t->last_c >= ((int64_t)1 << 31)))
            die_line(t->line, "thread %" PRIu64 ": two consecutive records are >= 2^31 µs apart; "
                     "the u32 wrap could not be undone (add calls in between)", t->tid);
    }
    t->last_t = tw; t->last_c = tc;
    if (g->clock != CLK_THREADCPU && (!g->f_have_wall || ev->wall > g->f_max_wall)) { g->f_max_wall = ev->wall; g->f_have_wall = 1; }
    t->records++;
    g->f_records++;
    Method *m = &g->m[ev->method];
    if (m->unknown && !m->used) g->f_unknown++;
    m->used = 1;
    if (ev->action == 3) { g->f_invalid++; return; }
    if (ev->action == 0) { g->f_enter++; facts_push(g, t, ev->method, 0, tw, tc); return; }
    if (ev->action == 1) g->f_exit++; else g->f_unroll++;
    if (t->en == 0) {
        /* an exit on an empty stack that the scenario did not declare 'pre':
         * the reconstructed outermost frame spans everything so far */
        g->f_ewe++;
        t->wall_total = tw - t->first_t;
        t->cpu_total = tc - t->first_c;
        if (!g->folded_off) g->folded_off = "an exit on an empty stack without a 'pre' frame";
        if (!g->profile_off) g->profile_off = "an exit on an empty stack without a 'pre' frame";
        return;
    }
    if (t->nwritten == 0) g->f_ewe++;
    if (t->es[t->en - 1].method == ev->method) { facts_close_top(g, t, tw, tc); return; }
    g->f_mismatch++;
    int k;
    for (k = t->en - 1; k >= 0; k--) if (t->es[k].method == ev->method) break;
    if (k < 0) return; /* not on the stack: ignored */
    while (t->en > k) facts_close_top(g, t, tw, tc);
}

static void facts_thread_init(G *g, Thread *t, int ti)
{
    t->root_node = g->folded_off ? 0 : trie_new(g, -1, -1 - ti);
    /* the chain of leading 'pre' frames: on the stack when tracing began */
    const Node *s = t->body;
    while (s && (s->flags & F_PRE)) {
        int64_t c = s->kind == N_NEST ? s->count : 1;
        for (int64_t i = 0; i < c; i++) facts_push(g, t, s->method, 1, 0, 0);
        t->has_pre = 1;
        s = s->child;
    }
    t->pm = xcalloc((size_t)g->nm, sizeof *t->pm);
}

/* ------------------------------------------------------------------------ */
/* the walker: turns one thread's call tree into its events, in order         */

enum { W_ROOT, W_CALL, W_REPEAT, W_NEST };

static WF *w_push(Thread *t, int kind, const Node *n, int pct, int ipct)
{
    GROW(t->ws, t->wn, t->wcap);
    WF *f = &t->ws[t->wn++];
    memset(f, 0, sizeof *f);
    f->kind = kind; f->n = n; f->pct = pct; f->ipct = ipct;
    f->cur = n ? n->child : NULL;
    return f;
}

static void advance(Thread *t, int64_t dt, int pct)
{
    t->wall += dt;
    t->cpu100 += dt * pct;
}

static void mk_ev(Thread *t, Ev *ev, int action, int method)
{
    int64_t c = t->cpu100 / 100;
    if (!t->has_base) { t->has_base = 1; t->cpu_base = c; }
    ev->action = action; ev->method = method;
    ev->wall = t->wall;
    ev->cpu = t->cpu0 + c - t->cpu_base;
}

static void walk_init(Thread *t)
{
    t->wall = t->at;
    w_push(t, W_ROOT, NULL, 0, t->pct);
    t->ws[0].cur = t->body;
}

/* runs statement f->cur; returns 1 when it produced an event */
static int w_exec(Thread *t, int fi, Ev *ev)
{
    WF *f = &t->ws[fi];
    const Node *s = f->cur;
    f->cur = s->next;
    int pct = f->pct, ipct = f->ipct;
    switch (s->kind) {
    case N_GAP:
        advance(t, s->dur, pct);
        return 0;
    case N_RAW:
        mk_ev(t, ev, s->action, s->method);
        return 1;
    case N_REPEAT: {
        if (s->count == 0) return 0;
        WF *r = w_push(t, W_REPEAT, s, pct, ipct);
        r->cnt = s->count;
        return 0;
    }
    case N_CALL: {
        int p = s->pct >= 0 ? s->pct : ipct;
        WF *c = w_push(t, W_CALL, s, s->cpu_abs >= 0 ? 0 : p, p);
        c->start = t->wall;
        if (s->flags & F_PRE) return 0;
        mk_ev(t, ev, 0, s->method);
        return 1;
    }
    case N_NEST: {
        int p = s->pct >= 0 ? s->pct : ipct;
        w_push(t, W_NEST, s, p, p);
        return 0;
    }
    }
    return 0;
}

static int walk_next(Thread *t, Ev *ev)
{
    while (t->wn > 0) {
        int fi = t->wn - 1;
        WF *f = &t->ws[fi];
        switch (f->kind) {
        case W_ROOT:
            if (f->cur) { if (w_exec(t, fi, ev)) return 1; continue; }
            t->wn--;
            continue;
        case W_REPEAT:
            if (f->cur) { if (w_exec(t, fi, ev)) return 1; continue; }
            if (--f->cnt > 0) { f->cur = f->n->child; continue; }
            t->wn--;
            continue;
        case W_CALL: {
            if (f->cur) { if (w_exec(t, fi, ev)) return 1; continue; }
            const Node *n = f->n;
            if (n->dur >= 0) {
                int64_t end = f->start + n->dur;
                if (t->wall > end)
                    die_line(n->line, "the body of this call takes %" PRId64 " µs, longer than its %" PRId64 " µs",
                             t->wall - f->start, n->dur);
                advance(t, end - t->wall, f->pct);
            }
            if (n->cpu_abs >= 0) t->cpu100 += n->cpu_abs * 100;
            t->wn--;
            if (n->flags & F_OPEN) continue;
            mk_ev(t, ev, (n->flags & F_UNROLL) ? 2 : 1, n->method);
            return 1;
        }
        case W_NEST: {
            const Node *n = f->n;
            if (f->phase == 0) {
                if (f->cnt < n->count) {
                    f->cnt++;
                    if (n->flags & F_PRE) continue;
                    mk_ev(t, ev, 0, n->method);
                    return 1;
                }
                f->phase = 1;
                f->cur = n->child;
                continue;
            }
            if (f->phase == 1) {
                if (f->cur) { if (w_exec(t, fi, ev)) return 1; continue; }
                f->phase = 2;
                continue;
            }
            if (f->cnt > 0) {
                f->cnt--;
                advance(t, n->dur, f->pct);
                if (n->flags & F_OPEN) continue;
                mk_ev(t, ev, (n->flags & F_UNROLL) ? 2 : 1, n->method);
                return 1;
            }
            t->wn--;
            continue;
        }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* writing                                                                   */

static size_t enc_rec(const G *g, uint8_t *b, uint32_t rtid, const Ev *ev)
{
    uint32_t mv = (uint32_t)(g->m[ev->method].id | (uint64_t)ev->action);
    size_t o;
    if (g->version == 1) { b[0] = (uint8_t)rtid; o = 1; }
    else { put16(b, rtid); o = 2; }
    put32(b + o, mv); o += 4;
    if (g->version == 3) {
        put32(b + o, (uint32_t)ev->cpu); o += 4;
        put32(b + o, (uint32_t)ev->wall); o += 4;
    } else {
        put32(b + o, (uint32_t)(g->clock == CLK_THREADCPU ? ev->cpu : ev->wall)); o += 4;
    }
    return o;
}

static void flush_held(G *g)
{
    if (!g->held) return;
    out_put(&g->out, g->held_b, g->held_n);
    facts_feed(g, g->held_t, &g->held_ev);
    g->held = 0;
}

static void assign_rid(G *g, Thread *t)
{
    if (t->rid_assigned) return;
    t->rec_tid = (uint32_t)++g->next_synth;
    if (t->rec_tid > 0xFFFF) die_line(t->line, "more than 65535 synthetic thread ids");
    t->rid_assigned = 1;
}

static void announce_thread(G *g, Thread *t)
{
    assign_rid(g, t);
    if (!g->streaming || t->announced) return;
    t->announced = 1;
    if (t->unlisted) return;
    flush_held(g);
    size_t n = strlen(t->name);
    if (n > 0xFFFF) die_line(t->line, "thread name too long");
    uint8_t h[7] = {0, 0, 2};
    put16(h + 3, t->rec_tid);
    put16(h + 5, (uint32_t)n);
    out_put(&g->out, h, 7);
    out_put(&g->out, t->name, n);
}

static void define_method(G *g, int mi)
{
    Method *m = &g->m[mi];
    if (!g->streaming || m->unknown || m->defined) return;
    m->defined = 1;
    flush_held(g);
    Buf b = {0};
    method_line(g, m, &b);
    if (b.n > 0xFFFF) die_line(m->line_no, "method line of '%s' too long", m->alias);
    uint8_t h[5] = {0, 0, 1};
    put16(h + 3, (uint32_t)b.n);
    out_put(&g->out, h, 5);
    out_put(&g->out, b.p, b.n);
    free(b.p);
}

static void write_rec(G *g, Thread *t, const Ev *ev)
{
    if (g->stop_after >= 0 && g->written >= (uint64_t)g->stop_after) return;
    announce_thread(g, t);
    define_method(g, ev->method);
    flush_held(g);
    g->held = 1;
    g->held_t = t;
    g->held_ev = *ev;
    g->held_n = enc_rec(g, g->held_b, t->rec_tid, ev);
    g->written++;
}

static void v2_emit(G *g, Thread *t, const Ev *ev);
static void v2_flush(G *g, Thread *t);

static void flush_chunk(G *g, Thread *t)
{
    if (g->v2) { v2_flush(g, t); return; }
    if (!t->nchunk) return;
    if (g->stop_after < 0 || g->written < (uint64_t)g->stop_after) {
        announce_thread(g, t);
        for (int i = 0; i < t->nchunk; i++) define_method(g, t->chunk[i].method);
    }
    for (int i = 0; i < t->nchunk; i++) write_rec(g, t, &t->chunk[i]);
    t->nchunk = 0;
}

static void emit(G *g, Thread *t, const Ev *ev)
{
    if (g->v2) { v2_emit(g, t, ev); return; }
    if (!g->chunk) { write_rec(g, t, ev); return; }
    if (!t->chunk) t->chunk = xcalloc((size_t)g->chunk, sizeof *t->chunk);
    t->chunk[t->nchunk++] = *ev;
    if (t->nchunk == g->chunk) flush_chunk(g, t);
}

static void key_text(G *g, Buf *b, int summary)
{
    buf_printf(b, "*version\n%d\n", g->version);
    buf_printf(b, "data-file-overflow=%s\n", g->overflow ? "true" : "false");
    buf_printf(b, "clock=%s\n", clock_names[g->clock]);
    buf_printf(b, "elapsed-time-usec=%" PRIu64 "\n", g->elapsed);
    if (!summary) buf_printf(b, "num-method-calls=%" PRIu64 "\n", g->written);
    buf_printf(b, "clock-call-overhead-nsec=%" PRId64 "\n", g->overhead);
    buf_printf(b, "vm=%s\n", g->vm ? "dalvik" : "art");
    if (g->has_pid) buf_printf(b, "pid=%" PRId64 "\n", g->pid);
    for (int i = 0; i < g->nkeys; i++) buf_printf(b, "%s\n", g->keys[i]);
    buf_str(b, "*threads\n");
    if (!summary || g->summary_threads) {
        for (int i = 0; i < g->nth; i++) {
            Thread *t = &g->th[i];
            if (t->unlisted) continue;
            if (g->synth) {
                if (!t->rid_assigned) continue; /* ART 14: only threads with events */
                buf_printf(b, "%u\t%s\n", (unsigned)t->rec_tid, t->name);
            } else {
                buf_printf(b, "%" PRIu64 "\t%s\n", t->tid, t->name);
            }
        }
    }
    buf_str(b, "*methods\n");
    if (!summary || g->summary_methods)
        for (int i = 0; i < g->nm; i++)
            if (!g->m[i].unknown) method_line(g, &g->m[i], b);
    buf_str(b, "*end\n");
}

static void bin_header(const G *g, uint8_t *h)
{
    memset(h, 0, (size_t)g->data_offset);
    put32(h, 0x574F4C53u);
    put16(h + 4, (uint32_t)g->version | (g->streaming ? 0xF0u : 0));
    put16(h + 6, (uint32_t)g->data_offset);
    put64(h + 8, g->start);
    if (g->version >= 3 || g->streaming) put16(h + 16, (uint32_t)rec_size(g));
}

/* ------------------------------------------------------------------------ */
/* facts output                                                              */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') { fputc('\\', f); fputc(*p, f); }
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\r') fputs("\\r", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

typedef struct { char *path; int64_t self; } FPath;
static int fpath_cmp(const void *a, const void *b) { return strcmp(((const FPath *)a)->path, ((const FPath *)b)->path); }


static uint64_t facts_tid(const G *g, const Thread *t) { return g->synth ? t->rec_tid : t->tid; }

static char *thread_frame(const G *g, const Thread *t)
{
    char buf[64];
    Buf b = {0};
    if (t->unlisted) {
        snprintf(buf, sizeof buf, "Thread-%" PRIu64, facts_tid(g, t));
        buf_str(&b, buf);
    } else {
        buf_str(&b, t->name);
    }
    snprintf(buf, sizeof buf, "-%" PRIu64, facts_tid(g, t));
    buf_str(&b, buf);
    char *s = sanitize(b.p);
    free(b.p);
    return s;
}

/* elapsed-time-usec is in the file unless it is a stream without summary */
static int file_has_elapsed(const G *g) { return !g->streaming || g->summary; }

static int64_t trace_end_rel(const G *g)
{
    int64_t e = file_has_elapsed(g) ? (int64_t)g->elapsed : 0;
    if (g->clock != CLK_THREADCPU && g->f_have_wall && g->f_max_wall > e) e = g->f_max_wall;
    return e;
}

static void facts_finish(G *g)
{
    int64_t end = trace_end_rel(g);
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        if (!t->en) continue;
        if (!t->seen) die_line(t->line, "thread %" PRIu64 " has 'pre' frames but no record was written", t->tid);
        int64_t te = g->clock == CLK_THREADCPU ? t->last_t : end;
        t->open_end = 1;
        while (t->en) {
            if (t->es[t->en - 1].recon)
                die_line(t->line, "thread %" PRIu64 ": the exit of a 'pre' frame was not written "
                         "(cut by stop-after/truncate); the frame would be invisible", t->tid);
            g->f_open++;
            facts_close_top(g, t, te, t->last_c);
        }
    }
}

static void write_folded(G *g, FILE *f)
{
    if (!g->folded_off && g->f_mismatch) g->folded_off = "mismatched exits make the truth ambiguous";
    if (!g->folded_off && g->f_invalid) g->folded_off = "invalid action records make the truth ambiguous";
    FPath *ps = NULL;
    int np = 0, cp = 0;
    if (!g->folded_off) {
        char **tframes = xcalloc((size_t)g->nth, sizeof *tframes);
        int *chain = NULL, nchain = 0, cchain = 0;
        for (int i = 0; i < g->ntn && !g->folded_off; i++) {
            TNode *n = &g->tn[i];
            if (n->method < 0) continue;
            if (n->self < 0) die_line(1, "internal error: negative self time");
            if (n->self == 0) continue;
            nchain = 0;
            for (int c = i;; c = g->tn[c].parent) {
                GROW(chain, nchain, cchain);
                chain[nchain++] = c;
                if (g->tn[c].method < 0) break; /* the thread's root */
            }
            Buf b = {0};
            for (int k = nchain - 1; k >= 0; k--) {
                int m = g->tn[chain[k]].method;
                if (m < 0) {
                    int ti = -1 - m;
                    if (!tframes[ti]) tframes[ti] = thread_frame(g, &g->th[ti]);
                    buf_str(&b, tframes[ti]);
                } else {
                    buf_str(&b, ";");
                    buf_str(&b, g->m[m].short_name);
                }
            }
            GROW(ps, np, cp);
            ps[np].path = b.p;
            ps[np].self = n->self;
            np++;
        }
        free(chain);
        for (int i = 0; i < g->nth; i++) free(tframes[i]);
        free(tframes);
        if (np) qsort(ps, (size_t)np, sizeof *ps, fpath_cmp);
        int w = 0;
        for (int i = 0; i < np; i++) {
            if (w && !strcmp(ps[w - 1].path, ps[i].path)) { ps[w - 1].self += ps[i].self; free(ps[i].path); }
            else ps[w++] = ps[i];
        }
        np = w;
        if (np > 5000) g->folded_off = "more than 5000 call paths";
    }
    if (g->folded_off) {
        fputs(",\n \"folded_omitted\": ", f);
        json_str(f, g->folded_off);
    } else {
        int64_t total = 0;
        fputs(",\n \"folded\": {", f);
        for (int i = 0; i < np; i++) {
            fputs(i ? ",\n  " : "\n  ", f);
            json_str(f, ps[i].path);
            fprintf(f, ": %" PRId64, ps[i].self);
            total += ps[i].self;
        }
        fputs(np ? "\n }" : "}", f);
        fprintf(f, ",\n \"folded_paths\": %d,\n \"folded_total_us\": %" PRId64, np, total);
    }
    for (int i = 0; i < np; i++) free(ps[i].path);
    free(ps);
}

/* A thread's span as traceconv measures it: from its first event (the trace
 * start when frames were open before tracing) to its last (the trace end
 * when frames are still open at the end). Not for thread-cpu clocks. */
static int64_t span_wall(const G *g, const Thread *t)
{
    int64_t from = t->has_pre ? 0 : t->first_rec_t;
    int64_t to = t->open_end ? trace_end_rel(g) : t->last_t;
    return to - from;
}

static void write_pm(const G *g, FILE *f, const PM *pm, const char *indent)
{
    int has_cpu = clock_has_cpu(g->clock), has_wall = g->clock != CLK_THREADCPU, first = 1;
    fputs("[", f);
    for (int i = 0; i < g->nm; i++) {
        const PM *r = &pm[i];
        if (!r->calls && !r->rec) continue;
        fprintf(f, "%s%s{\"method\": %d, \"calls\": %" PRId64 ", \"recursive_calls\": %" PRId64, first ? "\n" : ",\n",
                indent, i, r->calls, r->rec);
        if (has_wall)
            fprintf(f, ", \"incl_wall_us\": %" PRId64 ", \"excl_wall_us\": %" PRId64 ", \"outer_excl_wall_us\": %" PRId64,
                    r->incl_w, r->excl_w, r->oexcl_w);
        else
            fputs(", \"incl_wall_us\": null, \"excl_wall_us\": null, \"outer_excl_wall_us\": null", f);
        if (has_cpu)
            fprintf(f, ", \"incl_cpu_us\": %" PRId64 ", \"excl_cpu_us\": %" PRId64 ", \"outer_excl_cpu_us\": %" PRId64 "}",
                    r->incl_c, r->excl_c, r->oexcl_c);
        else
            fputs(", \"incl_cpu_us\": null, \"excl_cpu_us\": null, \"outer_excl_cpu_us\": null}", f);
        first = 0;
    }
    fputs("]", f);
}

static void put_class_dotted(FILE *f, const char *cls)
{
    Buf b = {0};
    for (const char *p = cls; *p; p++) buf_put(&b, *p == '/' ? "." : p, 1);
    json_str(f, b.p ? b.p : "");
    free(b.p);
}

/* "profile": the per-method facts (doc/diff-and-reports.md, "Profile accounting"; corpus/README.md). */
static void write_profile(G *g, FILE *f)
{
    if (g->profile_off) {
        fputs(",\n \"profile_omitted\": ", f);
        json_str(f, g->profile_off);
        return;
    }
    int has_cpu = clock_has_cpu(g->clock), has_wall = g->clock != CLK_THREADCPU;
    fputs(",\n \"profile\": {\n  \"methods\": [", f);
    for (int i = 0; i < g->nm; i++) {
        const Method *m = &g->m[i];
        char id[32];
        snprintf(id, sizeof id, "0x%" PRIx64, m->id);
        fprintf(f, "%s\n   {\"id\": \"%s\", \"class\": ", i ? "," : "", id);
        put_class_dotted(f, m->cls);
        fputs(", \"name\": ", f);
        json_str(f, m->name);
        fputs(", \"sig\": ", f);
        json_str(f, m->sig);
        fputs(", \"source\": ", f);
        json_str(f, m->src);
        fprintf(f, ", \"line\": %ld, \"unknown\": %s}", g->fields == 6 ? m->line : -1L, m->unknown ? "true" : "false");
    }
    fputs("],\n  \"all\": ", f);
    write_pm(g, f, g->pm_all, "   ");
    fputs(",\n  \"threads\": [", f);
    int first = 1;
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        if (!t->records) continue;
        fprintf(f, "%s\n   {\"tid\": %" PRIu64 ", \"methods\": ", first ? "" : ",", facts_tid(g, t));
        write_pm(g, f, t->pm, "    ");
        fputs("}", f);
        first = 0;
    }
    fputs("],\n  \"edges\": [", f);
    first = 1;
    for (int c = -1; c < g->nm; c++) {
        for (int m = 0; m < g->nm; m++) {
            const PE *e = &g->pe[(size_t)(c + 1) * (size_t)g->nm + (size_t)m];
            if (!e->used) continue;
            fprintf(f, "%s\n   {\"caller\": ", first ? "" : ",");
            if (c < 0) fputs("null", f);
            else fprintf(f, "%d", c);
            fprintf(f, ", \"callee\": %d", m);
            static const char *const split[4] = {"all", "caller_outer", "callee_outer", "once"};
            for (int k = 0; k < 4; k++) {
                fprintf(f, ", \"%s\": [%" PRId64 ", ", split[k], e->v[k][0]);
                if (has_wall) fprintf(f, "%" PRId64 ", ", e->v[k][1]);
                else fputs("null, ", f);
                if (has_cpu) fprintf(f, "%" PRId64 "]", e->v[k][2]);
                else fputs("null]", f);
            }
            fputs("}", f);
            first = 0;
        }
    }
    fputs("]\n }", f);
}

static void write_facts(G *g, FILE *f, const char *scn)
{
    const char *base = strrchr(scn, '/');
    base = base ? base + 1 : scn;
    int has_cpu = clock_has_cpu(g->clock);
    int nknown = 0;
    for (int i = 0; i < g->nm; i++) {
        const Method *m = &g->m[i];
        if (m->unknown) continue;
        /* streams define only the methods they use, unless the summary lists all */
        if (!g->streaming || m->defined || (g->summary && g->summary_methods)) nknown++;
    }
    fputs("{\n \"generator\": \"tracegen\",\n \"scenario\": ", f);
    json_str(f, base);
    fprintf(f, ",\n \"version\": %d,\n \"streaming\": %s", g->version, g->streaming ? "true" : "false");
    if (g->streaming) fprintf(f, ",\n \"summary\": %s", g->summary ? "true" : "false");
    fprintf(f, ",\n \"clock\": \"%s\",\n \"vm\": \"%s\"", clock_names[g->clock], g->vm ? "dalvik" : "art");
    if (g->has_pid) fprintf(f, ",\n \"pid\": %" PRId64, g->pid);
    else fputs(",\n \"pid\": null", f);
    if (g->app) { /* the scenario's author says which package is the app: the truth by construction */
        fputs(",\n \"app\": ", f);
        json_str(f, g->app);
    }
    fprintf(f, ",\n \"tids\": \"%s\",\n \"order\": \"%s\"", g->synth ? "synthetic" : "full", g->chunk ? "chunked" : "global");
    fprintf(f, ",\n \"data_file_overflow\": %s", g->overflow ? "true" : "false");
    fprintf(f, ",\n \"truncated_bytes\": %d", g->truncate);
    fprintf(f, ",\n \"methods_in_table\": %d", nknown);
    if (file_has_elapsed(g)) fprintf(f, ",\n \"elapsed_time_usec\": %" PRIu64, g->elapsed);
    else fputs(",\n \"elapsed_time_usec\": null", f);
    fprintf(f, ",\n \"trace_start_us\": %" PRIu64, g->start);
    fprintf(f, ",\n \"trace_end_us\": %" PRIu64, g->start + (uint64_t)trace_end_rel(g));
    fprintf(f, ",\n \"records\": %" PRIu64, g->f_records);
    fprintf(f, ",\n \"threads_with_events\": %" PRIu64, g->f_threads);
    fprintf(f, ",\n \"enter\": %" PRIu64 ",\n \"exit\": %" PRIu64 ",\n \"unroll\": %" PRIu64,
            g->f_enter, g->f_exit, g->f_unroll);
    fprintf(f, ",\n \"exit_without_enter\": %" PRIu64 ",\n \"open_at_end\": %" PRIu64, g->f_ewe, g->f_open);
    fprintf(f, ",\n \"unknown_method_ids\": %" PRIu64 ",\n \"mismatched_exits\": %" PRIu64
               ",\n \"invalid_actions\": %" PRIu64, g->f_unknown, g->f_mismatch, g->f_invalid);
    fputs(",\n \"threads\": [", f);
    int first = 1;
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        if (!t->records) continue;
        char nb[64];
        fputs(first ? "\n  {" : ",\n  {", f);
        first = 0;
        fprintf(f, "\"tid\": %" PRIu64 ", \"record_tid\": %u, \"name\": ", facts_tid(g, t), (unsigned)t->rec_tid);
        if (t->unlisted) { snprintf(nb, sizeof nb, "Thread-%" PRIu64, facts_tid(g, t)); json_str(f, nb); }
        else json_str(f, t->name);
        fprintf(f, ", \"records\": %" PRIu64 ", \"max_depth\": %d, \"wall_total_us\": %" PRId64 ", \"cpu_total_us\": ",
                t->records, t->maxdepth, t->wall_total);
        if (has_cpu) fprintf(f, "%" PRId64, t->cpu_total);
        else fputs("null", f);
        fputs(", \"span_wall_us\": ", f);
        if (g->clock != CLK_THREADCPU) fprintf(f, "%" PRId64, span_wall(g, t));
        else fputs("null", f);
        fputs(", \"span_cpu_us\": ", f);
        if (has_cpu) fprintf(f, "%" PRId64 "}", t->last_c - (t->has_pre ? 0 : t->first_rec_c));
        else fputs("null}", f);
    }
    fputs(first ? "]" : "\n ]", f);
    write_folded(g, f);
    write_profile(g, f);
    fputs("\n}\n", f);
}

/* ------------------------------------------------------------------------ */
/* --obfuscate: the trace an R8-minified build writes, and its mapping.txt    */
/*
 * The scenario's names are the truth (the facts keep them); the trace gets
 * the names R8 would give (../shared/docs/formats/DEOBFUSCATION.md §2-§5):
 *  - app classes (every class outside the platform's packages, and app
 *    types of descriptors) are renamed: each package to one short segment,
 *    each class to a short name in it ("a.b"), a nested class to its outer
 *    class's name plus "$<short>" (Outer$Inner stays nested);
 *  - methods of app classes get the first short name ("a", "b", ...) whose
 *    residual descriptor is still free in their class, so overloads and
 *    unrelated methods share names (what -overloadaggressively does), and
 *    every class starts again at "a"; <init>, <clinit> and run keep theirs;
 *  - descriptors name the renamed types (La/b;);
 *  - one method becomes an inline group (a qualified callee inlined at its
 *    first line: the trace shows the outer method), one loses its last
 *    parameter (only its residualsignature finds it), and one void method
 *    becomes the body of a synthesized lambda class
 *    Outer$$ExternalSyntheticLambda0 whose run() frame R8 stripped (§4);
 *  - app methods' source file is "SourceFile" (or r8-map-id-<pg_map_id>
 *    with --r8-map-id); a class whose file retrace would not infer gets
 *    sourceFile information.
 * The mapping has R8's preamble (compiler, version JSON 2.2, pg_map_id = the
 * first 7 hex digits of the SHA-256 of the body, pg_map_hash), classes sorted
 * by original name, fields, line ranges that never collide within one new
 * name, residualsignature lines where the residual types differ from the
 * original ones (--residual needed: only where renaming the original types
 * would not give it), a class of the inlined callee and an
 * R8$$REMOVED$$CLASS$$ entry. --map-seed N shifts every short name: the
 * mapping of "another build" of the same app.
 */

typedef struct {
    const char *map_path;
    int seed;
    int r8_map_id;         /* source files r8-map-id-<id> instead of SourceFile */
    int residual_needed;   /* residualsignature only where it is needed */
} ObfOpts;

typedef struct {
    char *orig, *obf;      /* dotted */
    char *src;             /* source file of its first method, or NULL */
    int app, synth, pkg, nested_count;
    Buf members;           /* its member lines */
    Buf used;              /* "\n<new name> <residual>\n" of its methods, to keep them distinct */
    Buf ranges;            /* "\n<new name> <next line>\n" */
} OCls;

typedef struct {
    OCls *c; int n, cap;
    char **pkgs; int *pkg_classes; int npk, cpk;
    int seed;
} Obf;

static const char *const platform_prefixes[] = {"android.", "java.", "javax.", "dalvik.", "libcore.", "sun.",
                                                "com.android.", "org.json.", "org.xml.", "org.w3c.", "org.apache.http."};

/* a..z, aa..zz, ... (k from 0) */
static void short_name(char *buf, unsigned k)
{
    char tmp[16];
    int n = 0;
    k++;
    while (k && n < 15) { k--; tmp[n++] = (char)('a' + k % 26); k /= 26; }
    for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
}

static char *dotted_dup(const char *s)
{
    char *d = xstrndup(s, strlen(s));
    for (char *p = d; *p; p++) if (*p == '/') *p = '.';
    return d;
}

static OCls *obf_find(Obf *o, const char *orig)
{
    for (int i = 0; i < o->n; i++) if (!strcmp(o->c[i].orig, orig)) return &o->c[i];
    return NULL;
}

static int is_platform(const char *cls)
{
    for (size_t i = 0; i < sizeof platform_prefixes / sizeof *platform_prefixes; i++)
        if (!strncmp(cls, platform_prefixes[i], strlen(platform_prefixes[i]))) return 1;
    return 0;
}

static int obf_pkg(Obf *o, const char *pkg, size_t n)
{
    for (int i = 0; i < o->npk; i++) if (strlen(o->pkgs[i]) == n && !strncmp(o->pkgs[i], pkg, n)) return i;
    if (o->npk >= o->cpk) {
        o->cpk = o->cpk ? o->cpk * 2 : 16;
        o->pkgs = xrealloc(o->pkgs, (size_t)o->cpk * sizeof *o->pkgs);
        o->pkg_classes = xrealloc(o->pkg_classes, (size_t)o->cpk * sizeof *o->pkg_classes);
    }
    o->pkgs[o->npk] = xstrndup(pkg, n);
    o->pkg_classes[o->npk] = 0;
    return o->npk++;
}

static OCls *add_ocls(Obf *o, const char *orig, char *obf, int app, int pkg)
{
    if (o->n >= o->cap) {
        o->cap = o->cap ? o->cap * 2 : 32;
        o->c = xrealloc(o->c, (size_t)o->cap * sizeof *o->c);
    }
    OCls *c = &o->c[o->n++];
    memset(c, 0, sizeof *c);
    c->orig = xstrndup(orig, strlen(orig));
    c->obf = obf;
    c->app = app;
    c->pkg = pkg;
    return c;
}

/* A new class of the package of orig (its name up to the last dot): "<pkg>.<short>". */
static OCls *obf_top(Obf *o, const char *orig, const char *pkg_of)
{
    char name[64], pk[64];
    const char *dot = strrchr(pkg_of, '.');
    int pkg = obf_pkg(o, pkg_of, dot ? (size_t)(dot - pkg_of) : 0);
    short_name(name, (unsigned)(o->pkg_classes[pkg]++ + o->seed * 3));
    Buf b = {0};
    if (dot) {
        short_name(pk, (unsigned)(pkg + o->seed * 5));
        buf_printf(&b, "%s.%s", pk, name);
    } else {
        buf_str(&b, name); /* the default package */
    }
    return add_ocls(o, orig, b.p, 1, pkg);
}

/* The class (dotted original name), given its obfuscated name when new. */
static OCls *obf_class(Obf *o, const char *orig)
{
    OCls *c = obf_find(o, orig);
    if (c) return c;
    if (is_platform(orig)) return add_ocls(o, orig, xstrndup(orig, strlen(orig)), 0, -1);
    const char *dot = strrchr(orig, '.'), *simple = dot ? dot + 1 : orig, *dollar = strrchr(simple, '$');
    if (!dollar || dollar == simple || !dollar[1] || dollar[-1] == '$') return obf_top(o, orig, orig);
    /* nested: the outer class's obfuscated name + $<short> */
    char *outer = xstrndup(orig, (size_t)(dollar - orig)), name[64];
    OCls *oc = obf_class(o, outer);
    free(outer);
    short_name(name, (unsigned)(oc->nested_count++ + o->seed * 3));
    Buf b = {0};
    buf_printf(&b, "%s$%s", oc->obf, name);
    return add_ocls(o, orig, b.p, 1, oc->pkg);
}

static void free_types(char **types, int n)
{
    for (int i = 0; i < n; i++) free(types[i]);
    free(types);
}

/* A dex descriptor's types as Java names ("int", "a.b.C[]"); the last is the return type. 0: not a descriptor. */
static int desc_types(const char *sig, char ***types, int *ntypes)
{
    *types = NULL; *ntypes = 0;
    if (sig[0] != '(') return 0;
    const char *p = sig + 1;
    int ret = 0, cap = 0;
    for (;;) {
        if (*p == ')') { if (ret) return 0; ret = 1; p++; continue; }
        int dims = 0;
        while (*p == '[') { dims++; p++; }
        Buf b = {0};
        static const char prim[] = "ZBCSIJFDV";
        static const char *const pnames[] = {"boolean", "byte", "char", "short", "int", "long", "float", "double", "void"};
        const char *k = *p ? strchr(prim, *p) : NULL;
        if (k && (*p != 'V' || (ret && !dims))) { buf_str(&b, pnames[k - prim]); p++; }
        else if (*p == 'L') {
            const char *semi = strchr(p, ';');
            if (!semi || semi == p + 1) { free(b.p); goto bad; }
            for (const char *q = p + 1; q < semi; q++) buf_put(&b, *q == '/' ? "." : q, 1);
            p = semi + 1;
        } else { free(b.p); goto bad; }
        for (int i = 0; i < dims; i++) buf_str(&b, "[]");
        GROW(*types, *ntypes, cap);
        (*types)[(*ntypes)++] = b.p;
        if (ret) {
            if (!*p) return 1;
            goto bad;
        }
    }
bad:
    free_types(*types, *ntypes);
    *types = NULL; *ntypes = 0;
    return 0;
}

/* Java type -> descriptor, app classes through their obfuscated names when rename. */
static void java_desc(Obf *o, Buf *b, const char *t, int rename)
{
    size_t n = strlen(t);
    while (n >= 2 && t[n - 2] == '[' && t[n - 1] == ']') { buf_str(b, "["); n -= 2; }
    static const char *const pnames[] = {"boolean", "byte", "char", "short", "int", "long", "float", "double", "void"};
    static const char prim[] = "ZBCSIJFDV";
    for (int i = 0; i < 9; i++)
        if (strlen(pnames[i]) == n && !strncmp(t, pnames[i], n)) { buf_put(b, &prim[i], 1); return; }
    char *base = xstrndup(t, n);
    const char *name = base;
    if (rename) name = obf_class(o, base)->obf;
    buf_str(b, "L");
    for (const char *q = name; *q; q++) buf_put(b, *q == '.' ? "/" : q, 1);
    buf_str(b, ";");
    free(base);
}

/* "(args)ret" of types[0..n-1) (the last the return), renamed or not, dropping `drop` last parameters. */
static char *types_desc(Obf *o, char **types, int n, int rename, int drop)
{
    Buf b = {0};
    buf_str(&b, "(");
    for (int i = 0; i < n - 1 - drop; i++) java_desc(o, &b, types[i], rename);
    buf_str(&b, ")");
    java_desc(o, &b, types[n - 1], rename);
    return b.p;
}

/* "ret name(a,b)" as a member line writes it (qual: "pkg.Class." or ""). */
static void member_sig(Buf *b, char **types, int n, const char *qual, const char *name)
{
    buf_printf(b, "%s %s%s(", types[n - 1], qual, name);
    for (int i = 0; i < n - 1; i++) buf_printf(b, "%s%s", i ? "," : "", types[i]);
    buf_str(b, ")");
}

/* The first minified line free for a new name of the class, taking count lines. */
static int take_lines(OCls *c, const char *newname, int count)
{
    char key[160];
    snprintf(key, sizeof key, "\n%s ", newname);
    char *at = c->ranges.p ? strstr(c->ranges.p, key) : NULL;
    int line = 1;
    if (at) {
        line = atoi(at + strlen(key));
        char *num = at + strlen(key);
        char buf[24];
        int len = snprintf(buf, sizeof buf, "%08d", line + count);
        memcpy(num, buf, (size_t)len); /* fixed width: rewritten in place */
    } else {
        buf_printf(&c->ranges, "\n%s %08d\n", newname, 1 + count);
    }
    return line;
}

/* retrace's inference of a class's source file (DEOBFUSCATION.md §7.7) */
static void inferred_file(const char *cls, char *out, size_t n)
{
    const char *dot = strrchr(cls, '.'), *s = dot ? dot + 1 : cls;
    size_t len = strcspn(s, "$");
    if (len > 2 && s[len - 2] == 'K' && s[len - 1] == 't') snprintf(out, n, "%.*s.kt", (int)len - 2, s);
    else snprintf(out, n, "%.*s.java", (int)len, s);
}

typedef struct { int inline_m, removed_m, lambda_m; } Roles;

static int method_ok(const Method *m, char **types, int n)
{
    (void)types;
    return !m->unknown && n && strcmp(m->name, "<init>") && strcmp(m->name, "<clinit>") && strcmp(m->name, "run");
}

/* ---- SHA-256 (FIPS 180-4), for pg_map_id and pg_map_hash ---- */
static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static void sha_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], a[8];
    for (int i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(a, h, sizeof a);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = a[7] + (ROR(a[4], 6) ^ ROR(a[4], 11) ^ ROR(a[4], 25)) + ((a[4] & a[5]) ^ (~a[4] & a[6])) + sha_k[i] + w[i];
        uint32_t t2 = (ROR(a[0], 2) ^ ROR(a[0], 13) ^ ROR(a[0], 22)) + ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
        memmove(a + 1, a, 7 * sizeof *a);
        a[4] += t1;
        a[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) h[i] += a[i];
}
static void sha256_hex(const char *data, size_t n, char out[65])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint8_t blk[64];
    size_t i = 0;
    for (; i + 64 <= n; i += 64) sha_block(h, (const uint8_t *)data + i);
    size_t r = n - i;
    memset(blk, 0, sizeof blk);
    memcpy(blk, data + i, r);
    blk[r] = 0x80;
    if (r >= 56) { sha_block(h, blk); memset(blk, 0, sizeof blk); }
    uint64_t bits = (uint64_t)n * 8;
    for (int k = 0; k < 8; k++) blk[63 - k] = (uint8_t)(bits >> (8 * k));
    sha_block(h, blk);
    for (int k = 0; k < 8; k++) snprintf(out + 8 * k, 9, "%08x", h[k]);
}

static int ocls_cmp(const void *a, const void *b) { return strcmp(((const OCls *)a)->orig, ((const OCls *)b)->orig); }

/* Writes one method's member lines into its class (ranges, inline group, residual signature). */
static void write_member(Obf *o, const ObfOpts *op, OCls *c, int idx, const Method *m, char **types, int n,
                         const char *newname, const char *residual, int role_inline, int role_removed)
{
    Buf sigtext = {0};
    member_sig(&sigtext, types, n, "", m->name);
    char *orig_renamed = types_desc(o, types, n, 1, 0); /* what renaming the original types gives */
    int need = role_removed || strcmp(residual, orig_renamed) != 0;
    char *plain = types_desc(o, types, n, 0, 0);
    int differ = role_removed || strcmp(residual, plain) != 0; /* R8 2.2: residual types differ as strings */
    int json = op->residual_needed ? need : differ;
    int base = 10 + idx * 12;
    Buf *b = &c->members;
    if (role_inline) {
        /* the method's only range is the group: only its outermost line names the method */
        int L = take_lines(c, newname, 1);
        buf_printf(b, "    %d:%d:void com.example.util.Checks.notNull(java.lang.Object):8:8 -> %s\n", L, L, newname);
        buf_printf(b, "    %d:%d:%s:%d -> %s\n", L, L, sigtext.p, base, newname);
        if (json) buf_printf(b, "      # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"%s\"}\n", residual);
    } else if (idx % 5 == 4) {
        buf_printf(b, "    %s -> %s\n", sigtext.p, newname);
        if (json) buf_printf(b, "      # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"%s\"}\n", residual);
    } else {
        int two = idx % 3 == 1, L = take_lines(c, newname, two ? 6 : 3);
        buf_printf(b, "    %d:%d:%s:%d:%d -> %s\n", L, L + 2, sigtext.p, base, base + 2, newname);
        if (json) buf_printf(b, "      # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"%s\"}\n", residual);
        if (two) buf_printf(b, "    %d:%d:%s:%d:%d -> %s\n", L + 3, L + 5, sigtext.p, base + 5, base + 7, newname);
    }
    free(sigtext.p);
    free(orig_renamed);
    free(plain);
}


static int is_primitive(const char *t)
{
    static const char *const p[] = {"boolean", "byte", "char", "short", "int", "long", "float", "double", "void"};
    for (int i = 0; i < 9; i++) if (!strcmp(t, p[i])) return 1;
    return 0;
}

/* The class of a Java type ("a.B[][]" -> "a.B"), or NULL for a primitive. */
static char *type_class(const char *t)
{
    size_t n = strlen(t);
    while (n >= 2 && t[n - 2] == '[' && t[n - 1] == ']') n -= 2;
    char *c = xstrndup(t, n);
    if (is_primitive(c)) { free(c); return NULL; }
    return c;
}

/* A name as the trace writes it: with slashes when the scenario's class had them (Dalvik). */
static char *styled(const char *dotted_name, const char *like)
{
    char *s = xstrndup(dotted_name, strlen(dotted_name));
    if (strchr(like, '/'))
        for (char *p = s; *p; p++) if (*p == '.') *p = '/';
    return s;
}

static void set_str(char **slot, char *value)
{
    free(*slot);
    *slot = value;
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) die_io(path);
    if (fwrite(data, 1, n, f) != n) { fclose(f); die_io(path); }
    if (fclose(f)) die_io(path);
}

/* The scenario's methods renamed in place (the facts were made from the original names) and the mapping written. */
static void obfuscate(G *g, const ObfOpts *op)
{
    Obf o = {0};
    o.seed = op->seed;
    int nm = g->nm;
    char ***types = xcalloc((size_t)nm, sizeof *types), **dcls = xcalloc((size_t)nm, sizeof *dcls);
    int *ntypes = xcalloc((size_t)nm, sizeof *ntypes), *dup_of = xcalloc((size_t)nm, sizeof *dup_of);
    Roles r = {-1, -1, -1};
    for (int i = 0; i < nm; i++) { /* the same method declared twice gets the same names (before any renaming) */
        dup_of[i] = -1;
        for (int j = 0; j < i && dup_of[i] < 0 && !g->m[i].unknown; j++)
            if (!g->m[j].unknown && !strcmp(g->m[j].cls, g->m[i].cls) && !strcmp(g->m[j].name, g->m[i].name) &&
                !strcmp(g->m[j].sig, g->m[i].sig))
                dup_of[i] = j;
    }
    for (int i = 0; i < nm; i++) {
        const Method *m = &g->m[i];
        if (m->unknown) continue;
        dcls[i] = dotted_dup(m->cls);
        obf_class(&o, dcls[i]);
        desc_types(m->sig, &types[i], &ntypes[i]);
    }
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < ntypes[i]; k++) {
            char *c = type_class(types[i][k]);
            if (c) obf_class(&o, c);
            free(c);
        }
    for (int i = 0; i < nm; i++) { /* the methods that show R8's inline groups, removed parameters and lambdas */
        const Method *m = &g->m[i];
        if (!dcls[i] || !obf_find(&o, dcls[i])->app || !method_ok(m, types[i], ntypes[i])) continue;
        if (r.inline_m < 0) r.inline_m = i;
        else if (r.removed_m < 0 && ntypes[i] >= 2) r.removed_m = i;
        else if (r.lambda_m < 0 && !strcmp(types[i][ntypes[i] - 1], "void")) r.lambda_m = i;
    }
    for (int i = 0; i < nm; i++) {
        Method *m = &g->m[i];
        if (m->unknown) continue;
        int dup = dup_of[i];
        OCls *c = obf_class(&o, dcls[i]);
        if (c->app && !c->src && strcmp(m->src, "(null)")) c->src = xstrndup(m->src, strlen(m->src));
        if (dup >= 0) { /* the same method declared twice: the same names */
            Method *d = &g->m[dup];
            set_str(&m->cls, xstrndup(d->cls, strlen(d->cls)));
            set_str(&m->name, xstrndup(d->name, strlen(d->name)));
            set_str(&m->sig, xstrndup(d->sig, strlen(d->sig)));
            set_str(&m->src, xstrndup(d->src, strlen(d->src)));
            continue;
        }
        char *residual = ntypes[i] ? types_desc(&o, types[i], ntypes[i], 1, i == r.removed_m) : xstrndup(m->sig, strlen(m->sig));
        if (!c->app) {
            set_str(&m->sig, residual);
            continue;
        }
        char newname[64];
        if (i == r.lambda_m) { /* R8 stripped the synthetic run() frame: the lambda body is the line (§4, §11 ex. 3) */
            Buf on = {0};
            buf_printf(&on, "%s$$ExternalSyntheticLambda0", dcls[i]);
            char *outer_src = c->src ? xstrndup(c->src, strlen(c->src)) : NULL;
            OCls *lc = obf_top(&o, on.p, dcls[i]); /* c is stale from here (the table grew) */
            free(on.p);
            lc->synth = 1;
            lc->src = outer_src;
            Buf q = {0};
            buf_printf(&q, "%s.", dcls[i]);
            buf_str(&lc->members, "    1:1:");
            member_sig(&lc->members, types[i], ntypes[i], q.p, m->name);
            buf_str(&lc->members, ":22:22 -> run\n      # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"()V\"}\n");
            free(q.p);
            free(residual);
            set_str(&m->cls, styled(lc->obf, m->cls));
            set_str(&m->name, xstrndup("run", 3));
            set_str(&m->sig, xstrndup("()V", 3));
            set_str(&m->src, xstrndup("SourceFile", 10));
            continue;
        }
        if (!ntypes[i] || !strcmp(m->name, "<init>") || !strcmp(m->name, "<clinit>") || !strcmp(m->name, "run")) {
            snprintf(newname, sizeof newname, "%s", m->name);
        } else {
            for (unsigned k = 0;; k++) { /* the first short name whose residual descriptor is free in the class */
                short_name(newname, k);
                Buf key = {0};
                buf_printf(&key, "\n%s %s\n", newname, residual);
                int taken = c->used.p && strstr(c->used.p, key.p);
                free(key.p);
                if (!taken) break;
            }
        }
        buf_printf(&c->used, "\n%s %s\n", newname, residual);
        if (ntypes[i])
            write_member(&o, op, c, i, m, types[i], ntypes[i], newname, residual, i == r.inline_m, i == r.removed_m);
        set_str(&m->cls, styled(c->obf, m->cls));
        set_str(&m->name, xstrndup(newname, strlen(newname)));
        set_str(&m->sig, residual);
        set_str(&m->src, xstrndup("SourceFile", 10));
    }
    { /* the inlined callee's own class, and a class R8 removed after inlining it (also a trace without app classes has a mapping) */
        OCls *ck = obf_class(&o, "com.example.util.Checks");
        buf_str(&ck->members, "    void notNull(java.lang.Object) -> a\n");
        OCls *gone = add_ocls(&o, "com.example.util.Preconditions", xstrndup("R8$$REMOVED$$CLASS$$0", 21), 1, -1);
        gone->src = xstrndup("Preconditions.kt", 16);
    }
    qsort(o.c, (size_t)o.n, sizeof *o.c, ocls_cmp);
    Buf body = {0};
    for (int i = 0, k = 0; i < o.n; i++) {
        OCls *c = &o.c[i];
        if (!c->app) continue;
        char inferred[512];
        inferred_file(c->orig, inferred, sizeof inferred);
        buf_printf(&body, "%s -> %s:\n", c->orig, c->obf);
        if (c->src && strcmp(c->src, inferred)) buf_printf(&body, "# {\"id\":\"sourceFile\",\"fileName\":\"%s\"}\n", c->src);
        if (c->synth) buf_str(&body, "# {\"id\":\"com.android.tools.r8.synthesized\"}\n");
        if (k++ % 3 == 0) buf_str(&body, "    java.lang.String TAG -> a\n    int count -> b\n");
        if (c->members.p) buf_str(&body, c->members.p);
    }
    char hash[65];
    sha256_hex(body.p ? body.p : "", body.n, hash);
    Buf map = {0};
    buf_printf(&map, "# compiler: R8\n# compiler_version: 8.9.32\n# min_api: 24\n# common_typos_disable\n"
                     "# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n# pg_map_id: %.7s\n"
                     "# pg_map_hash: SHA-256 %s\n", hash, hash);
    if (body.p) buf_str(&map, body.p);
    write_file(op->map_path, map.p, map.n);
    char src[32];
    snprintf(src, sizeof src, "r8-map-id-%.7s", hash);
    for (int i = 0; i < nm && op->r8_map_id; i++)
        if (!g->m[i].unknown && !strcmp(g->m[i].src, "SourceFile")) set_str(&g->m[i].src, xstrndup(src, strlen(src)));
    for (int i = 0; i < nm; i++) { free(dcls[i]); free_types(types[i], ntypes[i]); }
    for (int i = 0; i < o.n; i++) {
        OCls *c = &o.c[i];
        free(c->orig); free(c->obf); free(c->src); free(c->members.p); free(c->used.p); free(c->ranges.p);
    }
    for (int i = 0; i < o.npk; i++) free(o.pkgs[i]);
    free(o.c); free(o.pkgs); free(o.pkg_classes); free(types); free(ntypes); free(dcls); free(dup_of);
    free(body.p); free(map.p);
}

/* ------------------------------------------------------------------------ */
/* scenario -> trace                                                         */

static void free_nodes(Node *n)
{
    while (n) {
        Node *next = n->next;
        free_nodes(n->child);
        free(n);
        n = next;
    }
}

/* Everything the scenario allocated: a one-shot program, but LeakSanitizer
 * runs over it in make test, and a clean report keeps real leaks visible. */
static void free_scenario(G *g, Toks *tk, Buf *src)
{
    for (size_t i = 0; i < tk->n; i++)
        free(tk->t[i].s);
    free(tk->t);
    free(src->p);
    for (int i = 0; i < g->nkeys; i++)
        free(g->keys[i]);
    free(g->keys);
    for (int i = 0; i < g->nm; i++) {
        Method *m = &g->m[i];
        free(m->alias); free(m->cls); free(m->name); free(m->sig); free(m->src); free(m->short_name);
    }
    free(g->m);
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        free(t->name); free_nodes(t->body); free(t->ws); free(t->chunk); free(t->es); free(t->frame_name); free(t->pm);
    }
    free(g->th);
    free(g->tn);
    free(g->pm_all);
    free(g->pe);
    free(g->out.buf);
    free(g);
}

static void v2_check(G *g);
static void v2_header(const G *g, uint8_t *h);
static void v2_finish(G *g, const char *outp);

/* The scenario file read, parsed and checked, with the defaults of an ART v3 dual-clock
 * trace; one reading for every output (run_scenario's and run_longrun's). */
static G *load_scenario(const char *scn, Buf *src, Toks *tk, int v2, int v2_split)
{
    g_scn = scn;
    FILE *in = fopen(scn, "rb");
    if (!in) die_io(scn);
    char rb[65536];
    size_t r;
    while ((r = fread(rb, 1, sizeof rb, in)) > 0) buf_put(src, rb, r);
    if (ferror(in)) die_io(scn);
    fclose(in);
    tokenize(src->p ? src->p : "", src->n, tk);
    G *g = xcalloc(1, sizeof *g);
    g->version = 3; g->clock = CLK_DUAL; g->start = 1000000; g->data_offset = 32;
    g->ids = IDS_ART8; g->fields = 5; g->overhead = 250; g->summary = 1; g->summary_threads = 1;
    g->stop_after = -1;
    g->v2 = v2;
    g->v2_split = v2_split;
    parse_scenario(g, tk);
    validate(g);
    return g;
}

static void run_scenario(const char *scn, const char *outp, const char *factsp, const ObfOpts *ob, int v2, int v2_split)
{
    Buf src = {0};
    Toks tk = {0};
    G *g = load_scenario(scn, &src, &tk, v2, v2_split);
    if (g->v2) v2_check(g);
    make_names(g);
    if (ob->map_path)
        obfuscate(g, ob); /* after make_names: the facts keep the scenario's names */

    g_out_path = outp;
    g_out_fp = fopen(outp, "wb");
    if (!g_out_fp) die_io(outp);
    g->out.cap = 1 << 20;
    g->out.buf = xrealloc(NULL, g->out.cap);
    uint8_t hdr[4096];
    if (g->v2 && g->streaming) {
        g->out.f = g_out_fp;
        g->out.what = outp;
        v2_header(g, hdr);
        out_put(&g->out, hdr, 32);
    } else if (g->streaming) {
        g->out.f = g_out_fp;
        g->out.what = outp;
        bin_header(g, hdr);
        out_put(&g->out, hdr, (size_t)g->data_offset);
    } else {
        g_tmp_fp = tmpfile();
        if (!g_tmp_fp) die_io("tmpfile");
        g->out.f = g_tmp_fp;
        g->out.what = "temporary file";
    }

    g->pm_all = xcalloc((size_t)g->nm, sizeof *g->pm_all);
    if ((size_t)(g->nm + 1) * (size_t)g->nm > 4000000u)
        g->profile_off = "more than 2000 methods";
    else
        g->pe = xcalloc((size_t)(g->nm + 1) * (size_t)g->nm, sizeof *g->pe);
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        facts_thread_init(g, t, i);
        if (t->has_body) {
            walk_init(t);
            t->has_pend = walk_next(t, &t->pend);
        }
    }
    for (;;) {
        int best = -1;
        for (int i = 0; i < g->nth; i++)
            if (g->th[i].has_pend && (best < 0 || g->th[i].pend.wall < g->th[best].pend.wall)) best = i;
        if (best < 0) break;
        Thread *t = &g->th[best];
        emit(g, t, &t->pend);
        t->has_pend = walk_next(t, &t->pend);
    }
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        flush_chunk(g, t);
        if (t->has_body && t->wall > g->elapsed_true) g->elapsed_true = t->wall;
    }
    if (g->held && g->truncate) {
        out_put(&g->out, g->held_b, (size_t)g->truncate);
        g->held = 0;
    }
    flush_held(g);
    if (!g->has_elapsed) g->elapsed = (uint64_t)g->elapsed_true;
    facts_finish(g);

    if (g->v2) {
        v2_finish(g, outp);
    } else if (g->streaming) {
        if (g->summary) {
            Buf s = {0};
            key_text(g, &s, 1);
            uint8_t h[7] = {0, 0, 3};
            put32(h + 3, (uint32_t)s.n);
            out_put(&g->out, h, 7);
            out_put(&g->out, s.p, s.n);
            free(s.p);
        }
        out_flush(&g->out);
    } else {
        out_flush(&g->out);
        Buf k = {0};
        key_text(g, &k, 0);
        if (fwrite(k.p, 1, k.n, g_out_fp) != k.n) die_io(outp);
        bin_header(g, hdr);
        if (fwrite(hdr, 1, (size_t)g->data_offset, g_out_fp) != (size_t)g->data_offset) die_io(outp);
        if (fseek(g_tmp_fp, 0, SEEK_SET)) die_io("temporary file");
        size_t r;
        while ((r = fread(g->out.buf, 1, g->out.cap, g_tmp_fp)) > 0)
            if (fwrite(g->out.buf, 1, r, g_out_fp) != r) die_io(outp);
        if (ferror(g_tmp_fp)) die_io("temporary file");
        fclose(g_tmp_fp);
        g_tmp_fp = NULL;
        free(k.p);
    }
    if (fclose(g_out_fp)) { g_out_fp = NULL; die_io(outp); }
    g_out_fp = NULL;

    if (factsp) {
        g_facts_path = factsp;
        g_facts_fp = fopen(factsp, "wb");
        if (!g_facts_fp) die_io(factsp);
        write_facts(g, g_facts_fp, scn);
        if (fclose(g_facts_fp)) { g_facts_fp = NULL; die_io(factsp); }
        g_facts_fp = NULL;
    }
    free_scenario(g, &tk, &src);
}

/* ------------------------------------------------------------------------ */
/* --bench: a large realistic v3 dual non-streaming trace, written fast       */
/*
 * 8 threads, 2000 methods, call depth wandering between 10 and 40 (each
 * thread climbs from 0 at its start), globally ordered: record i has wall
 * time i + i/4 µs (one record per 1.25 µs over all threads), so a 1 GB trace
 * (~77 M records) spans ~96 s; the u32 wall time wraps (written as the low
 * 32 bits, like ART) only past 71.6 min, i.e. for traces above ~48 GB.
 * Thread CPU advances 3/4 of the wall time since the thread's previous record.
 * Frames still open at the end stay open (as in every real trace). Memory is
 * one 8 MiB output buffer plus the method table.
 */

static const char *const bench_classes[40] = {
    "android.app.ActivityThread", "android.app.Instrumentation", "android.os.Handler", "android.os.Looper",
    "android.os.MessageQueue", "android.view.Choreographer", "android.view.ViewRootImpl", "android.view.View",
    "android.view.ViewGroup", "android.view.LayoutInflater", "android.widget.TextView", "android.widget.FrameLayout",
    "android.widget.LinearLayout", "android.graphics.Canvas", "android.graphics.Paint", "android.text.StaticLayout",
    "androidx.recyclerview.widget.RecyclerView", "androidx.recyclerview.widget.LinearLayoutManager",
    "androidx.constraintlayout.widget.ConstraintLayout", "androidx.fragment.app.FragmentManager",
    "androidx.lifecycle.LiveData", "okhttp3.internal.http.RealInterceptorChain", "okhttp3.internal.connection.RealCall",
    "okhttp3.internal.http2.Http2Stream", "okio.RealBufferedSource", "retrofit2.OkHttpCall",
    "com.squareup.moshi.internal.NullSafeJsonAdapter", "com.google.gson.Gson",
    "com.google.gson.internal.bind.ReflectiveTypeAdapterFactory$Adapter", "dagger.internal.DoubleCheck",
    "kotlinx.coroutines.DispatchedTask", "kotlinx.coroutines.scheduling.CoroutineScheduler$Worker",
    "java.util.HashMap", "java.util.ArrayList", "java.lang.String", "java.lang.reflect.Method",
    "com.example.shop.ui.ProductAdapter", "com.example.shop.data.ProductRepository",
    "com.example.shop.data.CartDao_Impl", "com.bumptech.glide.load.engine.DecodeJob"};
static const char *const bench_names[50] = {
    "onCreate", "onResume", "dispatchMessage", "handleMessage", "loop", "next", "doFrame", "doCallbacks",
    "performTraversals", "measure", "onMeasure", "layout", "onLayout", "draw", "onDraw", "dispatchDraw",
    "inflate", "createViewFromTag", "setText", "requestLayout", "invalidate", "onBindViewHolder",
    "onCreateViewHolder", "fill", "layoutChunk", "proceed", "intercept", "execute", "enqueue", "read",
    "write", "fromJson", "toJson", "get", "put", "invoke", "run", "resumeWith", "getValue", "setValue",
    "apply", "build", "parse", "decode", "load", "query", "insert", "notifyDataSetChanged", "onChanged",
    "dispatchTouchEvent"};
static const char *const bench_sigs[10] = {
    "()V", "(Landroid/os/Message;)V", "(I)V", "(II)V", "()Ljava/lang/Object;",
    "(Ljava/lang/Object;)Ljava/lang/Object;", "(Ljava/lang/String;)Ljava/lang/String;", "(J)V",
    "(Landroid/graphics/Canvas;)V", "(Z)Z"};

#define BENCH_METHODS 2000
#define BENCH_THREADS 8

/* One step of the bench's random walk on a thread's stack (both bench files, v3 and V2,
 * hold the same records): an enter (1) of *method, or the exit (0) of the popped *method. */
static int bench_step(uint32_t *stack, int *depth, int ti, uint64_t x, uint32_t *method)
{
    int enter = *depth < 10 ? 1 : *depth >= 40 ? 0 : ((x >> 8) & 255) < 128;
    if (!enter) {
        *method = stack[--*depth];
        return 0;
    }
    uint32_t m;
    if (*depth == 0) m = (uint32_t)(ti * 37 + 4);
    else {
        /* A real app has a bounded call graph: callers branch near the root
         * (4 ways for 5 levels) and in the middle of the stack (2 ways at
         * depths 10-20, where the walk spends its time: the depth never
         * falls below 10 once there, so branching near the root alone gave
         * one prefix per thread and only 320 distinct paths), deeper code
         * paths repeat. About 140k distinct paths at 64 MB, 260k at
         * 256 MB, ~300k at 1 GB, like a busy app; memory of aggregating
         * writers grows with those, not with records. */
        uint32_t k = *depth < 5 ? (uint32_t)((x >> 20) & 3)
                     : *depth >= 10 && *depth <= 20 ? (uint32_t)((x >> 20) & 1) : 0;
        m = (stack[*depth - 1] * 7u + 1u + k * 13u) % BENCH_METHODS;
    }
    stack[(*depth)++] = m;
    *method = m;
    return 1;
}

/* The bench files' *methods section and *end (n methods, ids 4 apart): the texts repeat
 * every 2000, so past that an inner class ("$1") keeps every name distinct. */
static void bench_methods(Buf *k, int n)
{
    buf_str(k, "*methods\n");
    for (int i = 0; i < n; i++) {
        const char *cls = bench_classes[i % 40];
        const char *simple = strrchr(cls, '.') + 1;
        int inner = i / 2000;
        char src[96], cname[160];
        snprintf(cname, sizeof cname, inner ? "%s$%d" : "%s", cls, inner);
        if (i % 17 == 5) snprintf(src, sizeof src, "(null)");
        else snprintf(src, sizeof src, "%.*s.java", (int)strcspn(simple, "$"), simple);
        if (i) buf_printf(k, "0x%x", (unsigned)i << 2);
        else buf_str(k, "0");
        buf_printf(k, "\t%s\t%s\t%s\t%s\n", cname, bench_names[(i / 40) % 50],
                   bench_sigs[(i * 7 + i / 40) % 10], src);
    }
    buf_str(k, "*end\n");
}

/* The bench files' v3 header: 32 bytes, dual-clock 14-byte records. */
static void bench_v3_header(uint8_t hdr[32])
{
    memset(hdr, 0, 32);
    put32(hdr, 0x574F4C53u);
    put16(hdr + 4, 3);
    put16(hdr + 6, 32);
    put64(hdr + 8, 5123456789ull);
    put16(hdr + 16, 14);
}

static void run_bench(const char *size_s, const char *outp)
{
    char *e;
    errno = 0;
    unsigned long long mb = strtoull(size_s, &e, 10);
    if (errno || *e || !mb || mb > 1000000) {
        fprintf(stderr, "tracegen: --bench: bad size '%s' (megabytes, 1..1000000)\n", size_s);
        exit(2);
    }
    uint64_t n = (mb * 1048576ull + 13) / 14; /* records; the key text and header come on top */
    static const struct { uint32_t tid; const char *name; } th[BENCH_THREADS] = {
        {4321, "main"}, {4350, "RenderThread"}, {4388, "OkHttp Dispatcher"}, {4390, "pool-2-thread-1"},
        {4391, "pool-2-thread-2"}, {4402, "DefaultDispatcher-worker-1"}, {4333, "Binder:4321_2"},
        {4329, "FinalizerDaemon"}};
    /* which thread records next, indexed by 4 random bits: main is busiest */
    static const uint8_t pick[16] = {0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 5, 6, 7};
    uint64_t elapsed = n ? (n - 1) + (n - 1) / 4 + 1 : 0;

    Buf k = {0};
    buf_printf(&k, "*version\n3\ndata-file-overflow=false\nclock=dual\nelapsed-time-usec=%" PRIu64
                   "\nnum-method-calls=%" PRIu64 "\nclock-call-overhead-nsec=250\nvm=art\npid=4321\n*threads\n",
               elapsed, n);
    for (int i = 0; i < BENCH_THREADS; i++) buf_printf(&k, "%u\t%s\n", (unsigned)th[i].tid, th[i].name);
    bench_methods(&k, BENCH_METHODS);

    FILE *f = fopen(outp, "wb");
    if (!f) die_io(outp);
    g_out_fp = f;
    g_out_path = outp;
    if (fwrite(k.p, 1, k.n, f) != k.n) die_io(outp);
    uint8_t hdr[32];
    bench_v3_header(hdr);
    if (fwrite(hdr, 1, 32, f) != 32) die_io(outp);

    struct BT { uint32_t stack[48]; int depth; uint32_t last_wall, cpu; int started; } bt[BENCH_THREADS];
    memset(bt, 0, sizeof bt);
    const size_t cap = (size_t)14 * 600000; /* ~8 MiB */
    uint8_t *buf = xrealloc(NULL, cap);
    size_t bn = 0;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        int ti = pick[x & 15];
        struct BT *b = &bt[ti];
        uint32_t wall = (uint32_t)(i + i / 4);
        if (!b->started) { b->started = 1; b->last_wall = wall; }
        b->cpu += ((wall - b->last_wall) * 3) >> 2;
        b->last_wall = wall;
        uint32_t m;
        int enter = bench_step(b->stack, &b->depth, ti, x, &m);
        uint32_t mv = enter ? m << 2 : (m << 2) | 1u;
        uint8_t *p = buf + bn;
        put16(p, th[ti].tid & 0xFFFF);
        put32(p + 2, mv);
        put32(p + 6, b->cpu);
        put32(p + 10, wall);
        bn += 14;
        if (bn == cap) {
            if (fwrite(buf, 1, bn, f) != bn) die_io(outp);
            bn = 0;
        }
    }
    if (bn && fwrite(buf, 1, bn, f) != bn) die_io(outp);
    if (fclose(f)) { g_out_fp = NULL; die_io(outp); }
    g_out_fp = NULL;
    free(buf);
    free(k.p);
}

/* ------------------------------------------------------------------------ */
/* --v2: the same scenario as ART format V2 (ART.md §5)                       */

enum { V2_A16NS = 1, V2_A16US, V2_A15, V2_PERFETTO };
#define V2_METHOD_BASE 0x7100000000ull /* method ids look like ArtMethod* (64-bit, above 4 GiB) */
#define V2_FLUSH 512                   /* records per flush when the scenario sets no chunk */
#define V2_TSC_HZ 1000000000ull        /* perfetto: the header's TSC frequency (exact for µs times) */

static int v2_variant(const char *s)
{
    return !strcmp(s, "a16-ns") ? V2_A16NS : !strcmp(s, "a16-us") ? V2_A16US : !strcmp(s, "a15") ? V2_A15
         : !strcmp(s, "perfetto") ? V2_PERFETTO : 0;
}

static void v2_check(G *g)
{
    if (g->truncate) die_line(g->ln_truncate, "truncate is V1 only (cut a V2 file yourself)");
    if (g->v2_split && g->v2 != V2_A16NS && g->v2 != V2_A16US)
        die_line(1, "--v2-split reproduces an Android 16 writer bug: use it with a16-ns or a16-us");
    if (g->clock == CLK_GLOBAL) die_line(g->ln_clock, "V2 has no global clock");
}

static int v2_ns(const G *g) { return g->v2 == V2_A16NS || g->v2 == V2_PERFETTO; }
static int v2_wall(const G *g) { return g->clock != CLK_THREADCPU; }
static int v2_cpu(const G *g) { return g->clock == CLK_DUAL || g->clock == CLK_THREADCPU; }
static uint64_t v2_time(const G *g, int64_t us) { return (uint64_t)us * (v2_ns(g) ? 1000u : 1u); }
static uint64_t v2_mid(const G *g, int mi) { return V2_METHOD_BASE + g->m[mi].id * 4; }

static void put_uleb(Buf *b, uint64_t v)
{
    uint8_t x[10];
    size_t n = 0;
    do {
        x[n] = (uint8_t)(v & 0x7F);
        v >>= 7;
        if (v) x[n] |= 0x80;
        n++;
    } while (v);
    buf_put(b, x, n);
}

static void put_sleb(Buf *b, int64_t v)
{
    uint8_t x[10];
    size_t n = 0;
    for (;;) {
        uint8_t byte = (uint8_t)(v & 0x7F);
        v >>= 7; /* arithmetic on every compiler we build with */
        if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) { x[n++] = byte; break; }
        x[n++] = byte | 0x80;
    }
    buf_put(b, x, n);
}

static void v2_header(const G *g, uint8_t *h)
{
    memset(h, 0, 32);
    put32(h, 0x574F4C53u);
    put16(h + 4, (g->clock == CLK_DUAL ? 5u : 4u) | (g->streaming ? 0xF0u : 0));
    put64(h + 6, g->v2 == V2_A16NS || g->v2 == V2_PERFETTO ? g->start * 1000 : g->start);
    if (g->v2 == V2_PERFETTO) { /* §5.4: start_tsc, tsc_frequency */
        put64(h + 14, g->start * 1000);
        put64(h + 22, V2_TSC_HZ);
    }
}

static void v2_thread_packet(G *g, Out *o, const Thread *t)
{
    size_t n = strlen(t->name);
    if (n > 0xFFFF) die_line(t->line, "thread name too long");
    uint8_t h[7] = {0};
    put32(h + 1, (uint32_t)t->tid);
    put16(h + 5, (uint32_t)n);
    out_put(o, h, 7);
    out_put(o, t->name, n);
    (void)g;
}

static void v2_method_packet(G *g, Out *o, int mi)
{
    const Method *m = &g->m[mi];
    Buf b = {0};
    /* ART writes "" for a class without a source file since fc87179fb4 (A16); A15 printed it as is */
    const char *src = !strcmp(m->src, "(null)") && g->v2 != V2_A15 ? "" : m->src;
    buf_printf(&b, "%s\t%s\t%s\t%s", m->cls, m->name, m->sig, src);
    if (g->v2 == V2_PERFETTO && g->fields == 6) buf_printf(&b, "\t%ld", m->line);
    buf_str(&b, "\n");
    if (b.n > 0xFFFF) die_line(m->line_no, "method line of '%s' too long", m->alias);
    uint8_t h[11] = {1};
    put64(h + 1, v2_mid(g, mi));
    put16(h + 9, (uint32_t)b.n);
    out_put(o, h, 11);
    out_put(o, b.p, b.n);
    free(b.p);
}

typedef struct { uint64_t m, w, c; } V2Acc;

/* One record into a block's payload, §5.2 (A16) or §5.3 (A15: u32 µs). */
static void v2_delta(const G *g, Buf *p, V2Acc *a, const Ev *e)
{
    uint64_t mv = v2_mid(g, e->method) | (uint64_t)e->action, w = v2_time(g, e->wall), c = v2_time(g, e->cpu);
    if (g->v2 == V2_A15) w &= 0xFFFFFFFFu, c &= 0xFFFFFFFFu;
    put_sleb(p, (int64_t)(mv - a->m));
    if (v2_wall(g)) put_uleb(p, g->v2 == V2_A15 ? (uint32_t)(w - a->w) : w - a->w);
    if (v2_cpu(g)) put_uleb(p, g->v2 == V2_A15 ? (uint32_t)(c - a->c) : c - a->c);
    a->m = mv, a->w = w, a->c = c;
}

/* One §5.4 record: Δ(ts << 2 | action), Δcpu (dual), Δmethod on an entry only. */
static void v2_perfetto(const G *g, Buf *p, V2Acc *a, uint64_t *tsa, const Ev *e)
{
    uint64_t t = (v2_wall(g) ? v2_time(g, e->wall) : v2_time(g, e->cpu)) << 2 | (uint64_t)e->action;
    put_sleb(p, (int64_t)(t - *tsa));
    *tsa = t;
    if (g->clock == CLK_DUAL) {
        put_sleb(p, (int64_t)(v2_time(g, e->cpu) - a->c));
        a->c = v2_time(g, e->cpu);
    }
    if (e->action == 0) {
        put_sleb(p, (int64_t)(v2_mid(g, e->method) - a->m));
        a->m = v2_mid(g, e->method);
    }
}

static void v2_block(G *g, const Thread *t, const Ev *e, int n, V2Acc *a, uint64_t declared)
{
    Buf p = {0};
    uint8_t h[32] = {2};
    size_t hn;
    put32(h + 1, (uint32_t)t->tid);
    if (g->v2 == V2_A15) {
        uint64_t mv = v2_mid(g, e[0].method) | (uint64_t)e[0].action;
        put64(h + 5, mv);
        hn = 13;
        if (v2_cpu(g)) { put32(h + hn, (uint32_t)e[0].cpu); hn += 4; }
        if (v2_wall(g)) { put32(h + hn, (uint32_t)e[0].wall); hn += 4; }
        a->m = mv, a->w = (uint32_t)e[0].wall, a->c = (uint32_t)e[0].cpu;
        for (int i = 1; i < n; i++) v2_delta(g, &p, a, &e[i]);
        put16(h + hn, (uint32_t)(n - 1)); /* u16: cut, as Android 15 writes it */
        put16(h + hn + 2, (uint32_t)p.n);
        hn += 4;
    } else {
        uint64_t tsa = 0;
        for (int i = 0; i < n; i++) {
            if (g->v2 == V2_PERFETTO) v2_perfetto(g, &p, a, &tsa, &e[i]);
            else v2_delta(g, &p, a, &e[i]);
        }
        if (declared > 0xFFFFFF) die_line(t->line, "a V2 block holds at most 2^24-1 records");
        h[5] = (uint8_t)declared; h[6] = (uint8_t)(declared >> 8); h[7] = (uint8_t)(declared >> 16);
        put32(h + 8, (uint32_t)p.n);
        hn = 12;
    }
    out_put(&g->out, h, hn);
    out_put(&g->out, p.p, p.n);
    free(p.p);
}

/* One flush of a thread: announced first when streaming; one block, or with
 * --v2-split the writer bug's blocks (accumulators kept, counts cumulative). */
static void v2_flush(G *g, Thread *t)
{
    if (!t->nchunk) return;
    if (g->streaming) {
        if (!t->announced && !t->unlisted) v2_thread_packet(g, &g->out, t);
        t->announced = 1;
        for (int i = 0; i < t->nchunk; i++) {
            Method *m = &g->m[t->chunk[i].method];
            if (!m->unknown && !m->defined) {
                m->defined = 1;
                v2_method_packet(g, &g->out, t->chunk[i].method);
            }
        }
    }
    V2Acc a = {0, 0, 0};
    int step = g->v2_split && t->nchunk > g->v2_split ? g->v2_split : t->nchunk;
    for (int i = 0; i < t->nchunk; i += step) {
        int n = t->nchunk - i < step ? t->nchunk - i : step;
        if (step == t->nchunk || !g->v2_split) memset(&a, 0, sizeof a);
        v2_block(g, t, t->chunk + i, n, &a, step == t->nchunk ? (uint64_t)n : (uint64_t)(i + n));
    }
    t->nchunk = 0;
}

static void v2_emit(G *g, Thread *t, const Ev *ev)
{
    if (g->stop_after >= 0 && g->written >= (uint64_t)g->stop_after) return;
    int cap = g->chunk ? g->chunk : V2_FLUSH;
    if (!t->chunk) t->chunk = xcalloc((size_t)cap, sizeof *t->chunk);
    t->chunk[t->nchunk++] = *ev;
    facts_feed(g, t, ev);
    g->written++;
    if (t->nchunk == cap) v2_flush(g, t);
}

static void v2_finish(G *g, const char *outp)
{
    Out o = {g_out_fp, outp, NULL, 0, 0, 0};
    if (!g->streaming) { /* header, every method and thread, then the blocks kept in the temporary file */
        out_flush(&g->out);
        o.cap = 1 << 16;
        o.buf = xrealloc(NULL, o.cap);
        uint8_t h[32];
        v2_header(g, h);
        out_put(&o, h, 32);
        for (int i = 0; i < g->nm; i++)
            if (!g->m[i].unknown) v2_method_packet(g, &o, i);
        for (int i = 0; i < g->nth; i++)
            if (!g->th[i].unlisted) v2_thread_packet(g, &o, &g->th[i]);
        out_flush(&o);
        if (fseek(g_tmp_fp, 0, SEEK_SET)) die_io("temporary file");
        size_t r;
        while ((r = fread(g->out.buf, 1, g->out.cap, g_tmp_fp)) > 0)
            if (fwrite(g->out.buf, 1, r, g_out_fp) != r) die_io(outp);
        if (ferror(g_tmp_fp)) die_io("temporary file");
        fclose(g_tmp_fp);
        g_tmp_fp = NULL;
        g->out.f = g_out_fp;
        g->out.what = outp;
    }
    if (g->summary) {
        Buf s = {0};
        buf_printf(&s, "*version\n%d\n", g->clock == CLK_DUAL ? 5 : 4);
        buf_printf(&s, "data-file-overflow=%s\n", g->overflow ? "true" : "false");
        buf_printf(&s, "clock=%s\n", clock_names[g->clock]);
        if (v2_ns(g)) buf_printf(&s, "elapsed-time-nsec=%" PRIu64 "\n", g->elapsed * 1000);
        else buf_printf(&s, "elapsed-time-usec=%" PRIu64 "\n", g->elapsed);
        if (!g->streaming) buf_printf(&s, "num-method-calls=%" PRIu64 "\n", g->written);
        buf_printf(&s, "clock-call-overhead-nsec=%" PRId64 "\n", g->overhead);
        buf_printf(&s, "vm=art\n");
        if (g->has_pid) buf_printf(&s, "pid=%" PRId64 "\n", g->pid);
        for (int i = 0; i < g->nkeys; i++) buf_printf(&s, "%s\n", g->keys[i]);
        buf_str(&s, "*end\n");
        uint8_t h[3] = {3};
        put16(h + 1, (uint32_t)s.n);
        out_put(&g->out, h, 3);
        out_put(&g->out, s.p, s.n);
        free(s.p);
    }
    out_flush(&g->out);
    free(o.buf);
}

/* --bench SIZE --v2 a16-ns: the records of `--bench SIZE` (the same model, 8
 * threads, 2000 methods, depth 10..40, one record per 1.25 µs, the same count:
 * so the two readers compare per record) as a dual-clock streaming Android 16
 * ns file, about 40% of the size: blocks of 4096 records per thread, every
 * method announced first, the summary last. */
static void run_bench_v2(const char *size_s, const char *outp)
{
    char *e;
    errno = 0;
    unsigned long long mb = strtoull(size_s, &e, 10);
    if (errno || *e || !mb || mb > 1000000) {
        fprintf(stderr, "tracegen: --bench: bad size '%s' (megabytes, 1..1000000)\n", size_s);
        exit(2);
    }
    static const uint32_t tids[BENCH_THREADS] = {4321, 4350, 4388, 4390, 4391, 4402, 4333, 4329};
    static const char *const names[BENCH_THREADS] = {"main", "RenderThread", "OkHttp Dispatcher", "pool-2-thread-1",
                                                     "pool-2-thread-2", "DefaultDispatcher-worker-1",
                                                     "Binder:4321_2", "FinalizerDaemon"};
    static const uint8_t pick[16] = {0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 5, 6, 7};
    FILE *f = fopen(outp, "wb");
    if (!f) die_io(outp);
    g_out_fp = f;
    g_out_path = outp;
    Out o = {f, outp, xrealloc(NULL, 1 << 20), 0, 1 << 20, 0};
    uint8_t h[32] = {0};
    put32(h, 0x574F4C53u);
    put16(h + 4, 0xF5);
    put64(h + 6, 5123456789000ull);
    out_put(&o, h, 32);
    for (int i = 0; i < BENCH_THREADS; i++) {
        uint8_t t[7] = {0};
        put32(t + 1, tids[i]);
        put16(t + 5, (uint32_t)strlen(names[i]));
        out_put(&o, t, 7);
        out_put(&o, names[i], strlen(names[i]));
    }
    for (int i = 0; i < BENCH_METHODS; i++) {
        const char *cls = bench_classes[i % 40], *simple = strrchr(cls, '.') + 1;
        char line[256], src[96] = "";
        if (i % 17 != 5) snprintf(src, sizeof src, "%.*s.java", (int)strcspn(simple, "$"), simple);
        int n = snprintf(line, sizeof line, "%s\t%s\t%s\t%s\n", cls, bench_names[(i / 40) % 50],
                         bench_sigs[(i * 7 + i / 40) % 10], src);
        uint8_t m[11] = {1};
        put64(m + 1, V2_METHOD_BASE + (uint64_t)i * 16);
        put16(m + 9, (uint32_t)n);
        out_put(&o, m, 11);
        out_put(&o, line, (size_t)n);
    }
    struct BT { uint32_t stack[48]; int depth; uint64_t last_wall, cpu; int started; Buf p; uint32_t n; V2Acc a; } bt[BENCH_THREADS];
    memset(bt, 0, sizeof bt);
    uint64_t x = 0x9E3779B97F4A7C15ull, n = (mb * 1048576ull + 13) / 14, bench_elapsed = 0;
    for (uint64_t i = 0; i < n; i++) {
        bench_elapsed = i + i / 4 + 1;
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        int ti = pick[x & 15];
        struct BT *b = &bt[ti];
        uint64_t wall = i + i / 4;
        if (!b->started) { b->started = 1; b->last_wall = wall; }
        b->cpu += ((wall - b->last_wall) * 3) >> 2;
        b->last_wall = wall;
        uint32_t m;
        int enter = bench_step(b->stack, &b->depth, ti, x, &m);
        uint64_t mv = (V2_METHOD_BASE + (uint64_t)m * 16) | (enter ? 0u : 1u);
        put_sleb(&b->p, (int64_t)(mv - b->a.m));
        put_uleb(&b->p, wall * 1000 - b->a.w);
        put_uleb(&b->p, b->cpu * 1000 - b->a.c);
        b->a.m = mv, b->a.w = wall * 1000, b->a.c = b->cpu * 1000;
        if (++b->n == 4096) {
            uint8_t bh[12] = {2};
            put32(bh + 1, tids[ti]);
            bh[5] = (uint8_t)b->n; bh[6] = (uint8_t)(b->n >> 8); bh[7] = 0;
            put32(bh + 8, (uint32_t)b->p.n);
            out_put(&o, bh, 12);
            out_put(&o, b->p.p, b->p.n);
            b->p.n = 0;
            b->n = 0;
            memset(&b->a, 0, sizeof b->a);
        }
    }
    for (int ti = 0; ti < BENCH_THREADS; ti++) {
        struct BT *b = &bt[ti];
        if (b->n) {
            uint8_t bh[12] = {2};
            put32(bh + 1, tids[ti]);
            bh[5] = (uint8_t)b->n; bh[6] = (uint8_t)(b->n >> 8); bh[7] = 0;
            put32(bh + 8, (uint32_t)b->p.n);
            out_put(&o, bh, 12);
            out_put(&o, b->p.p, b->p.n);
        }
        free(b->p.p);
    }
    Buf sum = {0};
    buf_printf(&sum, "*version\n5\ndata-file-overflow=false\nclock=dual\nelapsed-time-nsec=%" PRIu64
                     "\nclock-call-overhead-nsec=250\nvm=art\npid=4321\n*end\n", bench_elapsed * 1000);
    uint8_t sh[3] = {3};
    put16(sh + 1, (uint32_t)sum.n);
    out_put(&o, sh, 3);
    out_put(&o, sum.p, sum.n);
    free(sum.p);
    out_flush(&o);
    if (fclose(f)) { g_out_fp = NULL; die_io(outp); }
    g_out_fp = NULL;
    free(o.buf);
}

/* ------------------------------------------------------------------------ */
/* --bench-wide: the issue-26 shape, many threads with many call paths each    */
/*
 * A v3 dual non-streaming trace shaped like a real device trace repeated on
 * fresh threads: each copy is 98 threads (main busiest: thread k records with
 * weight 1/(k+1)) and 186,000 records over 6000 methods, the copies one after
 * another in time, each on its own thread ids (names repeat, as they would).
 * Every copy is the same walk (a repeated trace): depth 3..48, the callee of
 * a frame one of 2 near the root and fixed deeper (code paths repeat), about
 * 4,200 distinct call paths a copy (43 a thread), so 35 copies (88 MB, 6.5 M
 * records) have the issue's ~141k. The bench's report-vs-folded line
 * reads it: per-thread sections and per-thread sorting cost what a real
 * trace's do, which the 8-thread --bench file cannot show. Records: one per
 * µs of wall time; thread CPU 3/4 of the wall time since the thread's
 * previous record.
 */
#define WIDE_THREADS 98
#define WIDE_METHODS 6000
#define WIDE_COPY_RECORDS 186000u
#define WIDE_TID_BASE 1000u
#define WIDE_MAX_DEPTH 48

/* The thread of a random draw r (0..2^32): weights 1/(k+1), found in the cumulative table. */
static int wide_pick(const uint32_t *cum, uint32_t r)
{
    int lo = 0, hi = WIDE_THREADS - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cum[mid] > r) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* One step of thread ti's walk: enter (1) of *method or exit (0) of the popped one. */
static int wide_step(uint32_t *stack, int *depth, int ti, uint64_t x, uint32_t *method)
{
    int enter = *depth < 3 ? 1 : *depth >= WIDE_MAX_DEPTH ? 0 : ((x >> 8) & 255) < 124;
    if (!enter) {
        *method = stack[--*depth];
        return 0;
    }
    uint32_t ways = *depth < 3 ? 2u : 1u;
    uint32_t k = (uint32_t)((x >> 20) & 0xFFFF) % ways;
    uint32_t m = *depth == 0 ? (uint32_t)(ti * 61 + 7) % WIDE_METHODS
                             : (stack[*depth - 1] * 7u + 1u + k * 131u + (uint32_t)*depth * 17u) % WIDE_METHODS;
    stack[(*depth)++] = m;
    *method = m;
    return 1;
}

static void run_bench_wide(const char *size_s, const char *outp)
{
    char *e;
    errno = 0;
    unsigned long long mb = strtoull(size_s, &e, 10);
    uint64_t n = mb ? (mb * 1048576ull + 13) / 14 : 0;
    uint64_t copies = (n + WIDE_COPY_RECORDS - 1) / WIDE_COPY_RECORDS;
    if (errno || *e || !mb || WIDE_TID_BASE + copies * WIDE_THREADS > 0xFFFF) {
        fprintf(stderr, "tracegen: --bench-wide: bad size '%s' (megabytes, 1..%u: thread ids are 16 bits)\n", size_s,
                (unsigned)((0xFFFF - WIDE_TID_BASE) / WIDE_THREADS * WIDE_COPY_RECORDS * 14ull / 1048576));
        exit(2);
    }
    n = copies * WIDE_COPY_RECORDS;
    static const char *const kinds[8] = {"Binder:4321_", "pool-2-thread-", "DefaultDispatcher-worker-",
                                         "OkHttp Dispatcher ", "glide-source-thread-", "AsyncTask #",
                                         "Jit thread pool worker thread ", "HeapTaskDaemon "};
    Buf k = {0};
    buf_printf(&k, "*version\n3\ndata-file-overflow=false\nclock=dual\nelapsed-time-usec=%" PRIu64
                   "\nnum-method-calls=%" PRIu64 "\nclock-call-overhead-nsec=250\nvm=art\npid=4321\n*threads\n",
               n, n);
    for (uint64_t c = 0; c < copies; c++)
        for (int i = 0; i < WIDE_THREADS; i++) {
            unsigned tid = (unsigned)(WIDE_TID_BASE + c * WIDE_THREADS + (uint64_t)i);
            if (i == 0) buf_printf(&k, "%u\tmain\n", tid);
            else if (i == 1) buf_printf(&k, "%u\tRenderThread\n", tid);
            else buf_printf(&k, "%u\t%s%d\n", tid, kinds[i % 8], i / 8 + 1);
        }
    bench_methods(&k, WIDE_METHODS);

    FILE *f = fopen(outp, "wb");
    if (!f) die_io(outp);
    g_out_fp = f;
    g_out_path = outp;
    Out o = {f, outp, xrealloc(NULL, 1 << 20), 0, 1 << 20, 0};
    out_put(&o, k.p, k.n);
    uint8_t hdr[32];
    bench_v3_header(hdr);
    out_put(&o, hdr, 32);

    uint32_t cum[WIDE_THREADS];
    double wsum = 0, acc = 0;
    for (int i = 0; i < WIDE_THREADS; i++) wsum += 1.0 / (i + 1);
    for (int i = 0; i < WIDE_THREADS; i++) {
        acc += 1.0 / (i + 1);
        cum[i] = i == WIDE_THREADS - 1 ? UINT32_MAX : (uint32_t)(acc / wsum * 4294967295.0);
    }
    struct WT { uint32_t stack[WIDE_MAX_DEPTH]; int depth; uint32_t last_wall, cpu; int started; } *wt =
        xcalloc(WIDE_THREADS, sizeof *wt);
    uint32_t wall = 0;
    for (uint64_t c = 0; c < copies; c++) {
        memset(wt, 0, WIDE_THREADS * sizeof *wt);
        uint64_t x = 0x9E3779B97F4A7C15ull; /* every copy the same walk: a repeated trace */
        for (uint32_t i = 0; i < WIDE_COPY_RECORDS; i++, wall++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            int ti = wide_pick(cum, (uint32_t)(x >> 32));
            struct WT *b = &wt[ti];
            if (!b->started) { b->started = 1; b->last_wall = wall; }
            b->cpu += ((wall - b->last_wall) * 3) >> 2;
            b->last_wall = wall;
            uint32_t m;
            int enter = wide_step(b->stack, &b->depth, ti, x, &m);
            uint8_t r[14];
            put16(r, (uint32_t)(WIDE_TID_BASE + c * WIDE_THREADS + (uint64_t)ti));
            put32(r + 2, enter ? m << 2 : (m << 2) | 1u);
            put32(r + 6, b->cpu);
            put32(r + 10, wall);
            out_put(&o, r, 14);
        }
    }
    out_flush(&o);
    if (fclose(f)) { g_out_fp = NULL; die_io(outp); }
    g_out_fp = NULL;
    free(wt);
    free(o.buf);
    free(k.p);
}

/* ------------------------------------------------------------------------ */
/* --longrun: ART's long-running-method dump (ART.md §6, §11) of a scenario  */
/*
 * The same scenario walked per thread; each thread's events are written in
 * chunks of --chunk-records records (0x02, u32 tid, u24 records, u32 size;
 * records sleb128 delta of (time_ns << 1 | is_exit), then on an entry the
 * sleb128 delta of the method pointer; both from 0 in each chunk), chunks in
 * the order of their first event, then a thread packet per thread with events
 * and a method packet per method used ("class\tname\tsig\tsource\n"; the class
 * as a JVM descriptor "Lcom/x/Y;" in the SLOW forms, dotted otherwise).
 * Times: (start + wall) µs as ns. Unroll exits are exits (the dump has no
 * unroll), invalid records are left out (it has none either), pre frames'
 * enters are not written (so their exits are unmatched, as ART's are).
 *   raw           headerless, from the first byte
 *   slow          SLOW, u16 0xF6, u64 session start ns, zeros to 32
 *   slow-summary  slow + the 17-byte record 0x03, u64 start ns, u64 end ns
 *   pftrace       a Perfetto Trace: one unrelated packet, then --pf-packets
 *                 TracePackets (threads dealt round-robin), each with
 *                 timestamp (8), trusted_pid (79) and field F, a message of
 *                 payload (field P, the slow-summary dump of its threads) and
 *                 process_name (field Q): --pf-fields F,P,Q [1001,1,2], placeholders,
 *                 since the real numbers are not published (see pftrace.c)
 * --base64 plain|anr: the dump (raw, slow or slow-summary) as base64 text,
 * wrapped at 76 columns (plain) or on one line after a marker line inside a
 * few lines of an ANR report (anr).
 */
static void usage(void);
enum { LR_NONE, LR_RAW, LR_SLOW, LR_SLOW_SUMMARY, LR_PFTRACE };
typedef struct {
    int form, b64; /* b64: 0 none, 1 plain, 2 anr */
    int chunk;
    uint32_t pf_field, pf_payload, pf_name;
    int pf_packets;
    const char *process;
} LrOpts;
typedef struct { Ev *ev; int n, cap; } LrEvs;
typedef struct { int thread, first; int64_t t0; } LrChunk;

static void lr_sleb(Buf *b, int64_t v)
{
    for (;;) {
        uint8_t byte = (uint8_t)(v & 0x7F);
        v >>= 7; /* arithmetic on every compiler we build with */
        int done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        if (!done) byte |= 0x80;
        buf_put(b, &byte, 1);
        if (done) return;
    }
}

static void lr_varint(Buf *b, uint64_t v)
{
    do {
        uint8_t byte = (uint8_t)(v & 0x7F);
        v >>= 7;
        if (v) byte |= 0x80;
        buf_put(b, &byte, 1);
    } while (v);
}

static uint64_t lr_method_ptr(int mi) { return 0x6f1c2a40ull + (uint64_t)mi * 0x38; }
static int64_t lr_ns(const G *g, int64_t wall_us) { return ((int64_t)g->start + wall_us) * 1000; }

static void lr_class(Buf *b, const char *cls, int descriptor)
{
    if (descriptor) buf_str(b, "L");
    for (const char *c = cls; *c; c++) {
        char ch = *c == '/' || *c == '.' ? (descriptor ? '/' : '.') : *c;
        buf_put(b, &ch, 1);
    }
    if (descriptor) buf_str(b, ";");
}

/* The dump of the threads t with t % every == which. */
static void lr_dump(G *g, LrEvs *evs, const LrOpts *o, int slow, int summary, int every, int which, Buf *out)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    LrChunk *ch = NULL;
    int nch = 0, cch = 0;
    for (int i = 0; i < g->nth; i++) {
        if (i % every != which) continue;
        for (int k = 0; k < evs[i].n; k += o->chunk) {
            GROW(ch, nch, cch);
            ch[nch++] = (LrChunk){i, k, evs[i].ev[k].wall};
        }
        if (evs[i].n) {
            if (evs[i].ev[0].wall < first) first = evs[i].ev[0].wall;
            if (evs[i].ev[evs[i].n - 1].wall > last) last = evs[i].ev[evs[i].n - 1].wall;
        }
    }
    for (int a = 1; a < nch; a++) /* stable: by first event, ties in thread order */
        for (int b = a; b > 0 && ch[b - 1].t0 > ch[b].t0; b--) {
            LrChunk x = ch[b]; ch[b] = ch[b - 1]; ch[b - 1] = x;
        }
    if (slow) {
        uint8_t h[32] = {0};
        put32(h, 0x574F4C53u);
        put16(h + 4, 0xF6);
        put64(h + 6, (uint64_t)lr_ns(g, 0));
        buf_put(out, h, 32);
        if (summary) {
            uint8_t s[17] = {3};
            put64(s + 1, (uint64_t)lr_ns(g, first == INT64_MAX ? 0 : first));
            put64(s + 9, (uint64_t)lr_ns(g, last == INT64_MIN ? 0 : last));
            buf_put(out, s, 17);
        }
    }
    int *used = xcalloc((size_t)g->nm, sizeof *used);
    for (int c = 0; c < nch; c++) {
        LrEvs *e = &evs[ch[c].thread];
        int end = ch[c].first + o->chunk < e->n ? ch[c].first + o->chunk : e->n;
        Buf pay = {0};
        uint64_t prev_t = 0, prev_m = 0;
        for (int k = ch[c].first; k < end; k++) {
            const Ev *ev = &e->ev[k];
            int exit = ev->action != 0;
            uint64_t enc = ((uint64_t)lr_ns(g, ev->wall) << 1) | (uint64_t)exit;
            lr_sleb(&pay, (int64_t)(enc - prev_t));
            prev_t = enc;
            if (!exit) {
                uint64_t mp = lr_method_ptr(ev->method);
                lr_sleb(&pay, (int64_t)(mp - prev_m));
                prev_m = mp;
                used[ev->method] = 1;
            }
        }
        uint8_t h[12] = {2};
        put32(h + 1, (uint32_t)g->th[ch[c].thread].tid);
        h[5] = (uint8_t)(end - ch[c].first); h[6] = (uint8_t)((end - ch[c].first) >> 8); h[7] = (uint8_t)((end - ch[c].first) >> 16);
        put32(h + 8, (uint32_t)pay.n);
        buf_put(out, h, 12);
        buf_put(out, pay.p, pay.n);
        free(pay.p);
    }
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        if (i % every != which || !evs[i].n || t->unlisted) continue;
        size_t n = strlen(t->name);
        uint8_t h[7] = {0};
        put32(h + 1, (uint32_t)t->tid);
        put16(h + 5, (uint32_t)n);
        buf_put(out, h, 7);
        buf_put(out, t->name, n);
    }
    for (int mi = 0; mi < g->nm; mi++) {
        Method *m = &g->m[mi];
        if (!used[mi] || m->unknown) continue;
        Buf line = {0};
        lr_class(&line, m->cls, slow);
        buf_printf(&line, "\t%s\t%s\t%s\n", m->name, m->sig, strcmp(m->src, "(null)") ? m->src : "");
        uint8_t h[11] = {1};
        put64(h + 1, lr_method_ptr(mi));
        put16(h + 9, (uint32_t)line.n);
        buf_put(out, h, 11);
        buf_put(out, line.p, line.n);
        free(line.p);
    }
    free(used);
    free(ch);
}

static void lr_base64(Buf *out, const uint8_t *p, size_t n, int wrap)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t col = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {al[v >> 18], al[(v >> 12) & 63], i + 1 < n ? al[(v >> 6) & 63] : '=', i + 2 < n ? al[v & 63] : '='};
        buf_put(out, q, 4);
        if (wrap && (col += 4) >= 76 && i + 3 < n) { buf_str(out, "\n"); col = 0; }
    }
    buf_str(out, "\n");
}

static void lr_field_len(Buf *b, uint32_t field, const void *p, size_t n)
{
    lr_varint(b, (uint64_t)field << 3 | 2);
    lr_varint(b, n);
    buf_put(b, p, n);
}

static void lr_pftrace(G *g, LrEvs *evs, const LrOpts *o, Buf *out)
{
    Buf pk = {0};
    /* an unrelated packet first: a timestamp and a string field the reader must pass over */
    lr_varint(&pk, 8 << 3 | 0);
    lr_varint(&pk, (uint64_t)lr_ns(g, 0));
    lr_field_len(&pk, 36, "\x0a\x04" "boot", 6);
    lr_field_len(out, 1, pk.p, pk.n);
    free(pk.p);
    int64_t pid = g->has_pid ? g->pid : 1234;
    for (int k = 0; k < o->pf_packets; k++) {
        Buf dump = {0}, msg = {0};
        lr_dump(g, evs, o, 1, 1, o->pf_packets, k, &dump);
        lr_field_len(&msg, o->pf_payload, dump.p, dump.n);
        lr_field_len(&msg, o->pf_name, o->process, strlen(o->process));
        pk = (Buf){0};
        lr_varint(&pk, 8 << 3 | 0);
        lr_varint(&pk, (uint64_t)lr_ns(g, 0));
        lr_varint(&pk, 79 << 3 | 0);
        lr_varint(&pk, (uint64_t)pid);
        lr_field_len(&pk, o->pf_field, msg.p, msg.n);
        lr_field_len(out, 1, pk.p, pk.n);
        free(pk.p); free(msg.p); free(dump.p);
    }
}

static void run_longrun(const char *scn, const char *outp, const LrOpts *o)
{
    Buf src = {0};
    Toks tk = {0};
    G *g = load_scenario(scn, &src, &tk, 0, 0);
    make_names(g);
    LrEvs *evs = xcalloc((size_t)g->nth, sizeof *evs);
    for (int i = 0; i < g->nth; i++) {
        Thread *t = &g->th[i];
        if (!t->has_body) continue;
        walk_init(t);
        Ev ev;
        while (walk_next(t, &ev)) {
            if (ev.action == 3) continue;
            GROW(evs[i].ev, evs[i].n, evs[i].cap);
            evs[i].ev[evs[i].n++] = ev;
        }
    }
    Buf dump = {0}, text = {0};
    if (o->form == LR_PFTRACE) lr_pftrace(g, evs, o, &dump);
    else lr_dump(g, evs, o, o->form != LR_RAW, o->form == LR_SLOW_SUMMARY, 1, 0, &dump);
    const Buf *w = &dump;
    if (o->b64 == 1) {
        lr_base64(&text, (const uint8_t *)dump.p, dump.n, 1);
        w = &text;
    } else if (o->b64 == 2) {
        int64_t pid = g->has_pid ? g->pid : 1234;
        buf_printf(&text, "\n----- pid %" PRId64 " at 2026-11-26 04:17:21.123456789+0000 -----\n"
                          "Cmd line: %s\nBuild fingerprint: 'google/tracegen/generic:16/BP2A/1:user/release-keys'\n"
                          "ABI: 'arm64'\n\nLong running methods (base64):\n", pid, o->process);
        lr_base64(&text, (const uint8_t *)dump.p, dump.n, 0);
        buf_printf(&text, "\nDALVIK THREADS (2):\n\"main\" prio=5 tid=1 Native\n\n----- end %" PRId64 " -----\n", pid);
        w = &text;
    }
    g_out_path = outp;
    write_file(outp, w->p ? w->p : "", w->n);
    free(dump.p);
    free(text.p);
    for (int i = 0; i < g->nth; i++) free(evs[i].ev);
    free(evs);
    free_scenario(g, &tk, &src);
}

static int lr_main(int argc, char **argv)
{
    LrOpts o = {.chunk = 64, .pf_field = 1001, .pf_payload = 1, .pf_name = 2, .pf_packets = 2,
                .process = "com.example.app"};
    const char *scn = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--longrun") && v) {
            o.form = !strcmp(v, "raw") ? LR_RAW : !strcmp(v, "slow") ? LR_SLOW
                   : !strcmp(v, "slow-summary") ? LR_SLOW_SUMMARY : !strcmp(v, "pftrace") ? LR_PFTRACE : -1;
            i++;
        } else if (!strcmp(a, "--base64") && v) {
            o.b64 = !strcmp(v, "plain") ? 1 : !strcmp(v, "anr") ? 2 : -1;
            i++;
        } else if (!strcmp(a, "--chunk-records") && v) {
            o.chunk = atoi(v);
            i++;
        } else if (!strcmp(a, "--pf-packets") && v) {
            o.pf_packets = atoi(v);
            i++;
        } else if (!strcmp(a, "--pf-process") && v) {
            o.process = v;
            i++;
        } else if (!strcmp(a, "--pf-fields") && v) {
            unsigned f, p, q;
            if (sscanf(v, "%u,%u,%u", &f, &p, &q) != 3 || !f || !p || !q || p == q || f > 536870911u ||
                p > 536870911u || q > 536870911u)
                usage();
            o.pf_field = f, o.pf_payload = p, o.pf_name = q;
            i++;
        } else if (a[0] == '-' && a[1]) {
            usage();
        } else if (!scn) scn = a;
        else if (!out) out = a;
        else usage();
    }
    if (!scn || !out || o.form <= 0 || o.b64 < 0 || o.chunk < 1 || o.chunk > 0xFFFFFF || o.pf_packets < 1 ||
        (o.b64 && o.form == LR_PFTRACE))
        usage();
    run_longrun(scn, out, &o);
    return 0;
}

/* ------------------------------------------------------------------------ */

static void usage(void)
{
    fputs("usage: tracegen SCENARIO.scn OUT.trace [--facts OUT.facts.json]\n"
          "                [--obfuscate MAPPING.txt [--map-seed N] [--r8-map-id] [--residual all|needed]]\n"
          "                [--v2 a16-ns|a16-us|a15|perfetto [--v2-split N]]\n"
          "       tracegen --bench SIZE_MB OUT.trace [--v2 a16-ns]\n"
          "       tracegen --bench-wide SIZE_MB OUT.trace\n"
          "       tracegen SCENARIO.scn OUT --longrun raw|slow|slow-summary|pftrace [--base64 plain|anr]\n"
          "                [--chunk-records N] [--pf-packets K] [--pf-fields F,P,Q] [--pf-process NAME]\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--bench")) {
        if (argc == 6 && !strcmp(argv[4], "--v2") && !strcmp(argv[5], "a16-ns")) {
            run_bench_v2(argv[2], argv[3]);
            return 0;
        }
        if (argc != 4) usage();
        run_bench(argv[2], argv[3]);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "--bench-wide")) {
        run_bench_wide(argv[2], argv[3]);
        return 0;
    }
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--longrun"))
            return lr_main(argc, argv);
    const char *scn = NULL, *out = NULL, *facts = NULL;
    int v2 = 0, v2_split = 0;
    ObfOpts ob = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--facts")) {
            if (++i >= argc) usage();
            facts = argv[i];
        } else if (!strcmp(argv[i], "--obfuscate")) {
            if (++i >= argc) usage();
            ob.map_path = argv[i];
        } else if (!strcmp(argv[i], "--map-seed")) {
            if (++i >= argc) usage();
            ob.seed = atoi(argv[i]);
            if (ob.seed < 0 || ob.seed > 1000) usage();
        } else if (!strcmp(argv[i], "--v2")) {
            if (++i >= argc || !(v2 = v2_variant(argv[i]))) usage();
        } else if (!strcmp(argv[i], "--v2-split")) {
            if (++i >= argc || (v2_split = atoi(argv[i])) < 1) usage();
        } else if (!strcmp(argv[i], "--r8-map-id")) {
            ob.r8_map_id = 1;
        } else if (!strcmp(argv[i], "--residual")) {
            if (++i >= argc || (strcmp(argv[i], "needed") && strcmp(argv[i], "all"))) usage();
            ob.residual_needed = !strcmp(argv[i], "needed");
        } else if (argv[i][0] == '-' && argv[i][1]) {
            usage();
        } else if (!scn) scn = argv[i];
        else if (!out) out = argv[i];
        else usage();
    }
    if (!scn || !out) usage();
    if ((ob.seed || ob.r8_map_id || ob.residual_needed) && !ob.map_path) usage();
    if (v2_split && !v2) usage();
    run_scenario(scn, out, facts, &ob, v2, v2_split);
    return 0;
}
