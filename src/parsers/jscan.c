/*
 * jscan.c - JSON read without building a tree, for the readers that take JSON
 * input (json, the IR's name literals, a btrace sampling dump's header).
 *
 * A validating scanner finds the extent of one value (accepting what cJSON
 * accepts, to the same nesting depth, iteratively: no recursion), and the
 * members a reader uses are decoded where they lie: strings into the
 * caller's buffer, numbers through strtod. Nothing is allocated per value, so
 * memory does not depend on how large a value is (a cJSON tree took 40 times
 * the text of a 60 MB event), and an allocation failure can never be
 * mistaken for bad JSON.
 */
#include "tc_jscan.h"
#include "tc_reader.h"

#include <math.h>
#include <stdlib.h>

/* As deep as cJSON goes (CJSON_NESTING_LIMIT): what one accepts, the other does. */
#define JSON_MAX_DEPTH 1000

/* Bytes scanned between two looks at giving pages back. */
#define CHUNK ((size_t)1 << 20)

/* Pages behind the scanner go back (tci_source_release keeps a few MiB behind it). */
static void moved_to(tci_jscan *sc, size_t at)
{
    if (sc->src && at >= sc->release_at) {
        tci_source_release(sc->src, (uint64_t)(sc->s + at - (const char *)sc->src->data));
        sc->release_at = at + CHUNK;
    }
}

/* Whitespace as cJSON has it (any byte up to ' '). */
void tci_jscan_ws(tci_jscan *sc)
{
    for (;;) {
        size_t end = sc->n - sc->pos < CHUNK ? sc->n : sc->pos + CHUNK;
        while (sc->pos < end && (unsigned char)sc->s[sc->pos] <= ' ')
            sc->pos++;
        if (sc->pos < end || end == sc->n)
            return;
        moved_to(sc, sc->pos);
    }
}

static bool is_hex(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

/* A string at pos (on its opening quote); escapes checked as cJSON does. Linear: each
 * byte is searched once for the closing quote (a MiB at a time, so that the pages
 * of a long string go back as it is read) and once for a backslash. */
static bool skip_string(tci_jscan *sc)
{
    const char *s = sc->s, *q = NULL; /* q: the next quote, when q >= s + i */
    size_t i = sc->pos + 1, clear = 0; /* else: no quote in [i, clear) */
    for (;;) {
        bool have_q = q && q >= s + i;
        if (!have_q && clear <= i) {
            if (i >= sc->n) {
                sc->pos = sc->n;
                return false;
            }
            size_t end = sc->n - i < CHUNK ? sc->n : i + CHUNK;
            q = memchr(s + i, '"', end - i);
            have_q = q != NULL;
            clear = have_q ? (size_t)(q - s) : end;
        }
        size_t lim = have_q ? (size_t)(q - s) : clear;
        const char *b = memchr(s + i, '\\', lim - i);
        if (!b) {
            if (have_q) { /* no escape before the closing quote */
                sc->pos = (size_t)(q - s) + 1;
                return true;
            }
            i = clear;
            moved_to(sc, i);
            continue;
        }
        i = (size_t)(b - s) + 1; /* the escaped character */
        if (i >= sc->n || !s[i] || !strchr("\"\\/bfnrtu", s[i])) {
            sc->pos = i;
            return false;
        }
        if (s[i] == 'u') {
            for (int k = 1; k <= 4; k++)
                if (i + k >= sc->n || !is_hex(s[i + k])) {
                    sc->pos = i;
                    return false;
                }
            i += 4;
        }
        i++;
    }
}

static bool skip_literal(tci_jscan *sc, const char *word)
{
    size_t len = strlen(word);
    if (sc->n - sc->pos < len || memcmp(sc->s + sc->pos, word, len))
        return false;
    sc->pos += len;
    return true;
}

/* The run of [0-9+-.eE] at p (at most n bytes, fewer than 1024) as a C string in
 * num: its length, or 0 (none, or too long to be a number anyone writes). */
static size_t number_run(const char *p, size_t n, char num[1024])
{
    size_t k = 0;
    while (k < n && p[k] && strchr("0123456789+-.eE", p[k]))
        if (++k == 1024)
            return 0;
    memcpy(num, p, k);
    num[k] = 0;
    return k;
}

/* A number as cJSON reads one: of the run of [0-9+-.eE], what strtod takes. */
static bool skip_number(tci_jscan *sc)
{
    char num[1024], *end;
    if (!number_run(sc->s + sc->pos, sc->n - sc->pos, num))
        return false;
    (void)strtod(num, &end);
    sc->pos += (size_t)(end - num);
    return end > num;
}

bool tci_jscan_key(tci_jscan *sc, const char **key, size_t *len)
{
    tci_jscan_ws(sc);
    size_t start = sc->pos + 1;
    if (sc->pos >= sc->n || sc->s[sc->pos] != '"' || !skip_string(sc))
        return false;
    *key = sc->s + start;
    *len = sc->pos - 1 - start;
    tci_jscan_ws(sc);
    if (sc->pos >= sc->n || sc->s[sc->pos] != ':')
        return false;
    sc->pos++;
    return true;
}

static bool skip_key(tci_jscan *sc)
{
    const char *key;
    size_t len;
    return tci_jscan_key(sc, &key, &len);
}

/* One value (objects and arrays iteratively: depth is bounded, the stack is not used). */
bool tci_jscan_value(tci_jscan *sc)
{
    char open[JSON_MAX_DEPTH]; /* the containers we are in: '{' or '[' */
    int depth = 0;
    for (;;) {
        moved_to(sc, sc->pos);
        tci_jscan_ws(sc);
        if (sc->pos >= sc->n)
            return false;
        char c = sc->s[sc->pos];
        bool scalar = true;
        if (c == '{' || c == '[') {
            if (depth == JSON_MAX_DEPTH)
                return false;
            open[depth++] = c;
            sc->pos++;
            tci_jscan_ws(sc);
            if (sc->pos < sc->n && sc->s[sc->pos] == (c == '{' ? '}' : ']')) {
                sc->pos++;
                depth--;
            } else {
                scalar = false;
            }
        } else if (c == '"') {
            if (!skip_string(sc))
                return false;
        } else if (c == 't' || c == 'f' || c == 'n') {
            if (!skip_literal(sc, c == 't' ? "true" : c == 'f' ? "false" : "null"))
                return false;
        } else if (!skip_number(sc)) {
            return false;
        }
        if (!scalar) { /* the first member of a container: an object's starts with its key */
            if (open[depth - 1] == '{' && !skip_key(sc))
                return false;
            continue;
        }
        /* after a value: a comma and the next member, or the end of containers */
        for (;;) {
            if (!depth)
                return true;
            tci_jscan_ws(sc);
            if (sc->pos >= sc->n)
                return false;
            char d = sc->s[sc->pos];
            if (d == ',') {
                sc->pos++;
                if (open[depth - 1] == '{' && !skip_key(sc))
                    return false;
                break;
            }
            if (d != (open[depth - 1] == '{' ? '}' : ']'))
                return false;
            sc->pos++;
            depth--;
        }
    }
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* Append the UTF-8 of code point cp (at most 4 bytes) at out + o if it fits in cap. */
static size_t put_utf8(char *out, size_t cap, size_t o, unsigned cp)
{
    char b[4];
    size_t k = tci_utf8_encode(cp, b);
    for (size_t i = 0; i < k; i++)
        if (o + i < cap)
            out[o + i] = b[i];
    return o + k;
}

size_t tci_json_unescape(const char *raw, size_t n, char *out, size_t cap, uint64_t *lone)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        const char *b = memchr(raw + i, '\\', n - i);
        size_t plain = b ? (size_t)(b - (raw + i)) : n - i;
        if (o < cap)
            memcpy(out + o, raw + i, plain < cap - o ? plain : cap - o);
        o += plain;
        i += plain;
        if (!b || i + 1 >= n)
            break;
        char c = raw[i + 1];
        i += 2;
        if (c != 'u') {
            char v = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
            if (o < cap)
                out[o] = v;
            o++;
            continue;
        }
        if (i + 4 > n)
            break; /* the scanner validated the literal: not reached */
        unsigned cp = hex4(raw + i);
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && raw[i] == '\\' && raw[i + 1] == 'u') {
            unsigned low = hex4(raw + i + 2);
            if (low >= 0xDC00 && low <= 0xDFFF) { /* a pair: one code point above the BMP */
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                i += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) { /* half a pair: not a character; U+FFFD, and counted */
            cp = 0xFFFD;
            (*lone)++;
        }
        o = put_utf8(out, cap, o, cp);
    }
    return o;
}

bool tci_jscan_object(tci_jscan *sc, const char *const *keys, size_t n_keys, tci_jspan *vals)
{
    for (size_t i = 0; i < n_keys; i++)
        vals[i] = (tci_jspan){NULL, 0};
    tci_jscan_ws(sc);
    if (sc->pos >= sc->n || sc->s[sc->pos] != '{')
        return false;
    sc->pos++;
    tci_jscan_ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == '}') {
        sc->pos++;
        return true;
    }
    for (;;) {
        const char *key;
        size_t len;
        if (!tci_jscan_key(sc, &key, &len))
            return false;
        char name[32]; /* the keys asked for are short: a longer one is none of them */
        uint64_t lone = 0;
        size_t k = len < 6 * sizeof name ? tci_json_unescape(key, len, name, sizeof name, &lone) : sizeof name + 1;
        tci_jscan_ws(sc);
        size_t start = sc->pos;
        if (!tci_jscan_value(sc))
            return false;
        for (size_t i = 0; i < n_keys && k <= sizeof name; i++)
            if (!vals[i].p && strlen(keys[i]) == k && !memcmp(keys[i], name, k)) /* the first one counts */
                vals[i] = (tci_jspan){sc->s + start, sc->pos - start};
        tci_jscan_ws(sc);
        if (sc->pos < sc->n && sc->s[sc->pos] == ',') {
            sc->pos++;
            continue;
        }
        if (sc->pos < sc->n && sc->s[sc->pos] == '}') {
            sc->pos++;
            return true;
        }
        return false;
    }
}

bool tci_jspan_is_string(tci_jspan v) { return v.p && v.n >= 2 && v.p[0] == '"'; }

bool tci_jspan_number(tci_jspan v, double *out)
{
    char num[1024], *end;
    if (!v.p || !v.n)
        return false;
    if (v.p[0] == '"') { /* some writers quote numbers: the whole string must be one */
        if (v.n - 2 >= sizeof num || v.n == 2 || memchr(v.p + 1, '\\', v.n - 2))
            return false;
        memcpy(num, v.p + 1, v.n - 2);
        num[v.n - 2] = 0;
        *out = strtod(num, &end);
        return !*end && isfinite(*out);
    }
    if (!strchr("-0123456789", v.p[0]) || !number_run(v.p, v.n, num))
        return false;
    *out = strtod(num, &end);
    return end > num && isfinite(*out);
}
