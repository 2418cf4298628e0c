/* atrace.c - the payload of an atrace `tracing_mark_write`, one grammar for
 * every reader that sees one (systrace text, RheaTrace dumps).
 *
 *   B|pid|name          slice begin; name = everything after `B|pid|` (it may
 *                       hold `|`); an empty name is "[empty slice name]"
 *   E  E|  E|pid[|...]  end of the thread's innermost slice; the rest is ignored
 *   C|pid|name|value[|category]   counter: value is an int64 or a plain
 *                       decimal (`12.5`, no exponent; its integer part fits
 *                       an int64); the category (Chrome's) is everything after
 *   S|pid|name|cookie   async begin (process-scoped); F|... its end
 *   I|pid|name          instant
 *   N|pid|track|name    instant on a named track
 *   G|pid|track|name|cookie         async begin on a named track
 *   H|pid|track|cookie, H|pid|track|name|cookie   its end (the cookie is
 *                       field 4 when that is not empty, else field 3)
 * pid: 1-10 decimal digits that fit a uint32 (E may omit it). cookie: int64.
 * Fields after the last one a form uses are ignored. Trailing NULs, CRs and
 * LFs are not part of the payload (writers append them); a NUL anywhere else
 * is an ordinary byte of a name, so nothing here stops at one. Anything whose
 * first byte is not one of BECSFINGH followed by `|` (or a bare `E`) is not an
 * atrace payload (clock sync, free text). Rules are Perfetto's
 * (systrace_parser.h: ParseSystraceTracePoint), except that counters also
 * take decimals, an E's pid must be a number when given, and names keep NULs.
 * One left-to-right pass: linear in the payload's length whatever it holds.
 */
#include "tc_atrace.h"
#include "tc_reader.h"
#include "text.h"

#define EMPTY_SLICE "[empty slice name]"

/* The field starting at *at, up to the next `|` or the end; *at moves past the `|`. */
static bool next_field(const char *p, size_t n, size_t *at, const char **f, size_t *fn)
{
    if (*at > n)
        return false; /* the previous field ended the payload */
    const char *bar = memchr(p + *at, '|', n - *at);
    size_t end = bar ? (size_t)(bar - p) : n;
    *f = p + *at;
    *fn = end - *at;
    *at = end + 1;
    return true;
}

/* A counter value: int64, or `[sign]digits.digits` whose integer part is an int64. */
static bool parse_value(const char *p, size_t n, double *out)
{
    int64_t i;
    if (tci_parse_i64(p, n, &i)) {
        *out = (double)i;
        return true;
    }
    const char *dot = memchr(p, '.', n);
    if (!dot)
        return false;
    size_t ni = (size_t)(dot - p), nf = n - ni - 1;
    bool neg = ni > 0 && p[0] == '-';
    size_t s = ni > 0 && (p[0] == '-' || p[0] == '+');
    if (ni - s == 0 && nf == 0)
        return false; /* "." or "-." */
    if (ni - s > 0 && !tci_parse_i64(p + s, ni - s, &i))
        return false;
    if (ni - s == 0)
        i = 0;
    uint64_t frac = 0, scale = 1;
    for (size_t k = 0; k < nf; k++) {
        if (!tci_is_digit(dot[1 + k]))
            return false;
        if (scale < 1000000000000000000ull) { /* further digits are below a double's precision */
            frac = frac * 10 + (uint64_t)(dot[1 + k] - '0');
            scale *= 10;
        }
    }
    double v = (double)i + (double)frac / (double)scale;
    *out = neg ? -v : v;
    return true;
}

static int bad(tci_atrace *a, const char *why)
{
    a->why = why;
    return TCI_ATRACE_BAD;
}

static int parse_pid(tci_atrace *a, const char *f, size_t fn)
{
    uint64_t v;
    if (!tci_parse_u64(f, fn, UINT32_MAX, &v))
        return bad(a, fn ? "its pid is not a number (a uint32)" : "it has no pid");
    a->has_pid = true;
    a->pid = (uint32_t)v;
    return TCI_ATRACE_OK;
}

static int parse_cookie(tci_atrace *a, const char *f, size_t fn)
{
    if (!tci_parse_i64(f, fn, &a->cookie))
        return bad(a, fn ? "its cookie is not a number (an int64)" : "it has no cookie");
    return TCI_ATRACE_OK;
}

/* Fields after the pid, by kind; at is just after `kind|pid|`. */
static int parse_rest(tci_atrace *a, const char *p, size_t n, size_t at)
{
    const char *f = p + n, *g;
    size_t fn = 0, gn;
    switch (a->kind) {
    case 'B':
        a->name = at <= n ? p + at : p + n;
        a->name_len = at <= n ? n - at : 0;
        if (!a->name_len) {
            a->name = EMPTY_SLICE;
            a->name_len = sizeof EMPTY_SLICE - 1;
        }
        a->action = TCI_ACT_ENTER;
        return TCI_ATRACE_OK;
    case 'I':
        if (!next_field(p, n, &at, &a->name, &a->name_len) || !a->name_len)
            return bad(a, "it has no name");
        a->action = TCI_ACT_INSTANT;
        return TCI_ATRACE_OK;
    case 'C':
        if (!next_field(p, n, &at, &a->name, &a->name_len) || !a->name_len)
            return bad(a, "it has no name");
        if (!next_field(p, n, &at, &f, &fn) || !parse_value(f, fn, &a->value))
            return bad(a, "its counter value is not a number (an int64 or a decimal)");
        if (at <= n) {
            a->category = p + at;
            a->category_len = n - at;
        }
        a->action = TCI_ACT_COUNTER;
        return TCI_ATRACE_OK;
    case 'S':
    case 'F':
        if (!next_field(p, n, &at, &a->name, &a->name_len) || !a->name_len)
            return bad(a, "it has no name");
        if (!next_field(p, n, &at, &f, &fn))
            f = p + n, fn = 0;
        a->action = a->kind == 'S' ? TCI_ACT_ASYNC_BEGIN : TCI_ACT_ASYNC_END;
        return parse_cookie(a, f, fn);
    case 'N':
        if (!next_field(p, n, &at, &a->track, &a->track_len) || !a->track_len)
            return bad(a, "it has no track name");
        if (!next_field(p, n, &at, &a->name, &a->name_len) || !a->name_len)
            return bad(a, "it has no name");
        a->action = TCI_ACT_INSTANT;
        return TCI_ATRACE_OK;
    case 'G':
        if (!next_field(p, n, &at, &a->track, &a->track_len) || !a->track_len)
            return bad(a, "it has no track name");
        if (!next_field(p, n, &at, &a->name, &a->name_len) || !a->name_len)
            return bad(a, "it has no name");
        if (!next_field(p, n, &at, &f, &fn))
            f = p + n, fn = 0;
        a->action = TCI_ACT_ASYNC_BEGIN;
        return parse_cookie(a, f, fn);
    default: /* 'H' */
        if (!next_field(p, n, &at, &a->track, &a->track_len) || !a->track_len)
            return bad(a, "it has no track name");
        if (!next_field(p, n, &at, &f, &fn))
            f = p + n, fn = 0;
        if (next_field(p, n, &at, &g, &gn) && gn) { /* H|pid|track|name|cookie */
            a->name = f;
            a->name_len = fn;
            f = g;
            fn = gn;
        }
        a->action = TCI_ACT_ASYNC_END;
        return parse_cookie(a, f, fn);
    }
}

int tci_atrace_parse(const char *p, size_t n, tci_atrace *a)
{
    memset(a, 0, sizeof *a);
    while (n && (p[n - 1] == '\0' || p[n - 1] == '\r' || p[n - 1] == '\n'))
        n--;
    if (n == 0 || !memchr("BECSFINGH", p[0], 9) || (n > 1 && p[1] != '|'))
        return TCI_ATRACE_NONE;
    a->kind = p[0];
    size_t at = 2;
    const char *f;
    size_t fn;
    if (a->kind == 'E') {
        a->action = TCI_ACT_EXIT;
        if (!next_field(p, n, &at, &f, &fn) || !fn)
            return TCI_ATRACE_OK; /* `E` or `E|` */
        int rc = parse_pid(a, f, fn);
        if (rc == TCI_ATRACE_OK && at <= n) {
            a->name = p + at; /* what vendors write after the pid; ends are not matched by name */
            a->name_len = n - at;
        }
        return rc;
    }
    if (!next_field(p, n, &at, &f, &fn))
        return bad(a, "it has no pid");
    int rc = parse_pid(a, f, fn);
    return rc == TCI_ATRACE_OK ? parse_rest(a, p, n, at) : rc;
}

const char *tci_atrace_record_name(const tci_atrace *a, size_t *len)
{
    /* async slices are matched by name and cookie: both ends of G/H take the track's name */
    bool track = a->kind == 'G' || a->kind == 'H';
    *len = track ? a->track_len : a->name_len;
    return track ? a->track : a->name;
}
