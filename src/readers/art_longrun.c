/*
 * art_longrun.c - ART's long-running-method dump as a file (ART.md §6, §11):
 * the headerless form (Android 16: packets from the first byte, no magic),
 * the SLOW form (version 0xF6, with or without the 17-byte summary record),
 * and either one as base64 text, alone or inside a bug report or ANR trace
 * (ART's TraceProfiler::GetLongRunningMethodsString feeds the SIGQUIT dump).
 * The dump itself is decoded by src/parsers/artlr.c, shared with pftrace.c.
 *
 * Where the base64 block is, in this order:
 *  1. after a marker line naming long-running methods ("long running
 *     method", "long-running method", "LongRunningMethods", any case of the
 *     first letter): from the next non-empty line, every line up to the
 *     first empty line or line with a space in it;
 *  2. the whole file, when every non-empty line of it is one word (a plain
 *     base64 file, wrapped or not);
 *  3. else the longest run of lines made only of base64 characters (at
 *     least 16 of them), kept only when it decodes to a plausible dump.
 * Assumed, not seen: the ART source we could read (trace_profile.cc) builds
 * the string but its SIGQUIT caller was not found, so the marker text is a
 * guess; base64 lines prefixed per line (logcat's "I art : ...") are not read.
 * A byte inside the block that is not base64 is an error naming its offset.
 * The block is decoded into one buffer of at most 3/4 of its size (bounded by
 * the block, never by the whole file); the rest of the file is not copied.
 */
#include "tc_artlr.h"
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE "art-longrun"
#define MIN_B64_RUN 16
/* Probing a text for a base64 dump reads at most this much of it (a systrace of 300 MB took
 * 0.7 s more to probe when all of it was searched); a longer report with the dump further in
 * is read with -i art-longrun, which searches all of it. */
#define PROBE_TEXT ((size_t)16 << 20)

typedef struct lrfile {
    tci_artlr lr;
    uint8_t *decoded;      /* the base64 block decoded (NULL: the input is the dump) */
    char note[96];
    tci_idmap threads;
    tci_artlr_sink sink;
    uint64_t records;      /* pass 1 */
} lrfile;

/* ---- base64 ---- */

static int b64_value(uint8_t c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* [start, end) of the line holding pos, without its '\n' and surrounding blanks. */
static void line_at(const uint8_t *p, size_t n, size_t pos, size_t *start, size_t *end, size_t *next)
{
    const uint8_t *nl = memchr(p + pos, '\n', n - pos);
    size_t e = nl ? (size_t)(nl - p) : n;
    *next = nl ? e + 1 : n;
    size_t s = pos;
    while (s < e && is_space(p[s]))
        s++;
    while (e > s && is_space(p[e - 1]))
        e--;
    *start = s, *end = e;
}

static bool has_space(const uint8_t *p, size_t s, size_t e)
{
    for (size_t i = s; i < e; i++)
        if (p[i] == ' ' || p[i] == '\t')
            return true;
    return false;
}

static bool all_base64(const uint8_t *p, size_t s, size_t e)
{
    for (size_t i = s; i < e; i++)
        if (b64_value(p[i]) < 0 && p[i] != '=')
            return false;
    return e > s;
}

/* Decode base64 in [s, e), skipping blanks and line ends, into out (room for 3/4 of the span);
 * the byte count, or SIZE_MAX with *bad at the first byte that is not base64 (strict) or after a
 * padding '=' that is followed by more data. Not strict: other bytes are skipped (probing). */
static size_t b64_decode(const uint8_t *p, size_t s, size_t e, uint8_t *out, size_t room, bool strict, size_t *bad)
{
    uint32_t acc = 0;
    unsigned have = 0;
    size_t k = 0;
    bool ended = false;
    for (size_t i = s; i < e && k + 3 <= room; i++) {
        int v = b64_value(p[i]);
        if (v < 0) {
            if (p[i] == '=') {
                ended = true;
                continue;
            }
            if (is_space(p[i]) || !strict)
                continue;
            *bad = i;
            return SIZE_MAX;
        }
        if (ended) {
            *bad = i;
            return SIZE_MAX;
        }
        acc = acc << 6 | (uint32_t)v;
        if (++have == 4) {
            out[k++] = (uint8_t)(acc >> 16), out[k++] = (uint8_t)(acc >> 8), out[k++] = (uint8_t)acc;
            acc = 0, have = 0;
        }
    }
    if (have == 2)
        out[k++] = (uint8_t)(acc >> 4);
    else if (have == 3)
        out[k++] = (uint8_t)(acc >> 10), out[k++] = (uint8_t)(acc >> 2);
    return k;
}

/* A marker line that names the long-running methods' dump: the offset just past its line, or SIZE_MAX.
 * Searched for by what the spellings share after their first word ("unning method",
 * "unningMethod"): rare in other text, so each hit is checked, not each "running". */
static size_t find_marker(const uint8_t *p, size_t n)
{
    static const char *const tails[] = {"unning method", "unningMethod"};
    static const char *const heads[] = {"long r", "Long r", "long-r", "Long-r", "longR", "LongR"};
    size_t best = SIZE_MAX;
    for (size_t t = 0; t < 2; t++) {
        size_t tl = strlen(tails[t]);
        for (const uint8_t *m = p; (m = tci_memmem(m, n - (size_t)(m - p), tails[t], tl)); m += tl) {
            size_t at = (size_t)(m - p);
            bool hit = false;
            for (size_t i = 0; i < sizeof heads / sizeof *heads && !hit; i++) {
                size_t k = strlen(heads[i]); /* what comes before the tail: "long r" of "long running" */
                hit = at >= k && !memcmp(m - k, heads[i], k);
            }
            if (hit) {
                if (at < best)
                    best = at;
                break;
            }
        }
    }
    if (best == SIZE_MAX)
        return SIZE_MAX;
    const uint8_t *nl = memchr(p + best, '\n', n - best);
    return nl ? (size_t)(nl - p) + 1 : n;
}

/* The block of rule 1 or 2 from pos: lines with no blank inside, up to an empty or spaced line. */
static bool block_from(const uint8_t *p, size_t n, size_t pos, size_t *bs, size_t *be)
{
    size_t s, e, next;
    for (;;) { /* the first non-empty line */
        if (pos >= n)
            return false;
        line_at(p, n, pos, &s, &e, &next);
        if (e > s)
            break;
        pos = next;
    }
    *bs = s;
    *be = s;
    while (e > s && !has_space(p, s, e)) {
        *be = e;
        if (next >= n)
            break;
        line_at(p, n, next, &s, &e, &next);
    }
    return *be > *bs;
}

/* Rule 3: the longest run of all-base64 lines. */
static bool longest_run(const uint8_t *p, size_t n, size_t *bs, size_t *be)
{
    size_t best = 0, run_s = 0, run_chars = 0, pos = 0, s, e, next;
    bool in_run = false;
    while (pos < n) {
        line_at(p, n, pos, &s, &e, &next);
        if (all_base64(p, s, e)) {
            if (!in_run)
                run_s = s, run_chars = 0, in_run = true;
            run_chars += e - s;
            if (run_chars > best && run_chars >= MIN_B64_RUN)
                best = run_chars, *bs = run_s, *be = e;
        } else {
            in_run = false;
        }
        pos = next;
    }
    return best > 0;
}

static bool text_head(const uint8_t *p, size_t n)
{
    size_t k = n < 4096 ? n : 4096;
    if (!k || (n >= 8 && !memcmp(p, "*version", 8)))
        return false;
    for (size_t i = 0; i < k; i++)
        if (p[i] < 0x20 && !is_space(p[i]))
            return false;
    return true;
}

/* Does the block decode to the start of a plausible dump? */
static bool block_plausible(const uint8_t *p, size_t bs, size_t be)
{
    uint8_t head[768];
    size_t bad, e = be - bs > 1024 ? bs + 1024 : be;
    size_t k = b64_decode(p, bs, e, head, sizeof head, false, &bad);
    return k != SIZE_MAX && tci_artlr_plausible(head, k);
}

enum { FOUND_NONE, FOUND_MARKER, FOUND_WHOLE, FOUND_RUN };

/* Where the base64 block is (the rules at the top); FOUND_NONE when there is none that decodes to a dump. */
static int find_block(const uint8_t *p, size_t n, size_t *bs, size_t *be)
{
    if (!text_head(p, n))
        return FOUND_NONE;
    size_t after = find_marker(p, n);
    if (after != SIZE_MAX && block_from(p, n, after, bs, be) && block_plausible(p, *bs, *be))
        return FOUND_MARKER;
    if (block_from(p, n, 0, bs, be)) {
        size_t s, e, next;
        line_at(p, n, *be, &s, &e, &next);
        bool rest_empty = true;
        for (size_t i = *be; i < n && rest_empty; i++)
            rest_empty = is_space(p[i]);
        if (rest_empty && block_plausible(p, *bs, *be))
            return FOUND_WHOLE;
    }
    if (longest_run(p, n, bs, be) && block_plausible(p, *bs, *be))
        return FOUND_RUN;
    return FOUND_NONE;
}

/* ---- the reader ---- */

static int lrfile_probe(const uint8_t *buf, size_t len, const char *filename)
{
    (void)filename;
    if (len >= 6 && tci_le32(buf) == 0x574F4C53u)
        return tci_le16(buf + 4) == TCI_ARTLR_VERSION ? 100 : 0;
    if (len && buf[0] <= 2)
        return tci_artlr_plausible(buf, len) ? 60 : 0;
    size_t bs, be; /* text: the base64 block is looked for in the first PROBE_TEXT bytes only */
    switch (find_block(buf, len < PROBE_TEXT ? len : PROBE_TEXT, &bs, &be)) {
    case FOUND_MARKER: return 70;
    case FOUND_WHOLE: return 70;
    case FOUND_RUN: return 40;
    default: return 0;
    }
}

/* The base64 block decoded into lf->decoded (strict: a byte that is not base64 is an error). */
static int decode_block(tci_rctx *r, lrfile *lf, size_t *n)
{
    size_t bs, be, bad = 0;
    if (find_block(r->data, r->size, &bs, &be) == FOUND_NONE)
        return tci_error(r->diag, TC_ERR_FORMAT, MODULE, 0,
                         "not a long-running method dump: no dump packet at the start and no base64 block that "
                         "decodes to one");
    size_t room = (be - bs) / 4 * 3 + 3;
    if (!(lf->decoded = malloc(room)))
        return tci_error(r->diag, TC_ERR_NOMEM, MODULE, bs, "out of memory for the decoded base64 block");
    *n = b64_decode(r->data, bs, be, lf->decoded, room, true, &bad);
    if (*n == SIZE_MAX)
        return b64_value(r->data[bad]) >= 0
                   ? tci_error(r->diag, TC_ERR_FORMAT, MODULE, bad,
                               "base64 data after the '=' padding (the block starts at offset %zu)", bs)
                   : tci_error(r->diag, TC_ERR_FORMAT, MODULE, bad,
                               "byte 0x%02x in the base64 block (which starts at offset %zu) is not base64",
                               r->data[bad], bs);
    snprintf(lf->note, sizeof lf->note, " (offset in the dump decoded from the base64 text at input offset %zu)", bs);
    return TC_OK;
}

static int lrfile_open(tci_rctx *r)
{
    lrfile *lf = r->priv;
    tci_trace *t = r->trace;
    const uint8_t *dump = r->data;
    size_t n = r->size;
    int rc;
    bool b64 = !(n && (dump[0] <= 2 || (n >= 4 && tci_le32(dump) == 0x574F4C53u)));
    if (b64) {
        if ((rc = decode_block(r, lf, &n)) != TC_OK)
            return rc;
        dump = lf->decoded;
    }
    if ((rc = tci_artlr_open(&lf->lr, dump, n, 0, lf->note, MODULE, r->diag)) != TC_OK)
        return rc;
    tci_artlr_trace_setup(t);
    /* the session start is the trace start when no record comes before it */
    int64_t earliest = tci_artlr_earliest(&lf->lr);
    if (lf->lr.slow && lf->lr.header_start <= earliest) {
        t->start_ns = lf->lr.header_start;
        t->start_given = true;
    }
    lf->sink = (tci_artlr_sink){.process = 0, .threads = &lf->threads, .origin = t->start_ns};
    snprintf(t->detail, sizeof t->detail, "%s%s%s", b64 ? "base64 " : "",
             lf->lr.slow ? "SLOW 0xF6" : "headerless", lf->lr.has_summary ? " with summary" : "");
    if (lf->lr.slow) {
        char v[64];
        int k = snprintf(v, sizeof v, "%lld", (long long)lf->lr.header_start);
        if (tci_trace_add_meta(t, "session-start-ns", 16, v, (size_t)k) != TC_OK)
            return tci_trace_fail(t, r->diag, MODULE, 6);
    }
    return TC_OK;
}

static int lrfile_read(tci_rctx *r, tci_raw *ev, size_t max, size_t *n)
{
    lrfile *lf = r->priv;
    int rc = tci_artlr_read(r, &lf->lr, &lf->sink, ev, max, n);
    r->pos = lf->decoded ? 0 : lf->lr.pos;
    if (r->pass == 1) {
        lf->records += *n;
        if (rc == TC_EOF && !lf->records)
            return tci_error(r->diag, TC_ERR_NO_TRACE, MODULE, lf->lr.base + lf->lr.n,
                             "no trace events found: the dump holds no record%s", lf->lr.note);
    }
    return rc;
}

static int lrfile_rewind(tci_rctx *r)
{
    tci_artlr_rewind(&((lrfile *)r->priv)->lr);
    return TC_OK;
}

static void lrfile_close(tci_rctx *r)
{
    lrfile *lf = r->priv;
    if (lf) {
        free(lf->decoded);
        tci_idmap_free(&lf->threads);
    }
}

const tci_reader tci_reader_art_longrun = {
    .name = "art-longrun",
    .description = "ART long-running method dump (Android 16+: headerless, SLOW 0xF6, or base64 in a report)",
    .extensions = "trace,txt",
    .aliases = "longrun,long-running",
    .priv_size = sizeof(lrfile),
    .probe = lrfile_probe,
    .open = lrfile_open,
    .read = lrfile_read,
    .rewind = lrfile_rewind,
    .close = lrfile_close,
};
