/*
 * jscan.c - JSON read without building a tree, for the readers that take JSON
 * input (json, the IR's name literals, a btrace sampling dump's header).
 *
 * A validating scanner finds the extent of one value (accepting what cJSON
 * accepts, to the same nesting depth, iteratively: no recursion), and the
 * members a reader uses are decoded where they lie: strings into the
 * caller's buffer, numbers through strtod (the common ones read here, to
 * the same double). Nothing is allocated per value, so
 * memory does not depend on how large a value is (a cJSON tree took 40 times
 * the text of a 60 MB event), and an allocation failure can never be
 * mistaken for bad JSON.
 */
#include "tc_jscan.h"
#include "tc_reader.h"

#include <math.h>
#include <stdlib.h>

#define JSON_MAX_DEPTH TCI_JSCAN_MAX_DEPTH

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
    if (TCI_LIKELY(sc->pos < sc->n && (unsigned char)sc->s[sc->pos] > ' '))
        return; /* the usual case between two tokens: none */
    for (;;) {
        size_t end = sc->n - sc->pos < CHUNK ? sc->n : sc->pos + CHUNK;
        while (sc->pos < end && (unsigned char)sc->s[sc->pos] <= ' ')
            sc->pos++;
        if (sc->pos < end || end == sc->n)
            return;
        moved_to(sc, sc->pos);
    }
}

/* tci_jscan_ws where the next byte is usually a token: that byte is looked at here. */
static inline void ws(tci_jscan *sc)
{
    if (sc->pos >= sc->n || (unsigned char)sc->s[sc->pos] <= ' ')
        tci_jscan_ws(sc);
}

static bool is_hex(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

/* The first '"' or '\\' in s[i, end), or end: eight bytes a step (the bytes equal to
 * either become zero, found as in "Bit Twiddling Hacks"; only the lowest hit is
 * exact, which is the one used). Most strings are keys and names of a few dozen
 * bytes, for which two memchr calls cost more than the whole scan. */
static inline size_t quote_or_escape(const char *s, size_t i, size_t end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (; end - i >= 8; i += 8) {
        uint64_t w, q, b;
        memcpy(&w, s + i, 8);
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        uint64_t hit = ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
        if (hit)
            return i + (size_t)__builtin_ctzll(hit) / 8;
    }
#endif
    while (i < end && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

/* A string at pos (on its opening quote); escapes checked as cJSON does. Linear: each
 * byte is searched once for the closing quote (a MiB at a time, so that the pages
 * of a long string go back as it is read) and once for a backslash. */
static bool skip_long_string(tci_jscan *sc)
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

/* A string at pos; *plain: it has no escape. A short one without escapes is found at
 * once, the others as skip_long_string reads them. */
static inline bool scan_string(tci_jscan *sc, bool *plain)
{
    size_t i = sc->pos + 1, end = sc->n - i < 256 ? sc->n : i + 256;
    size_t at = quote_or_escape(sc->s, i, end);
    *plain = at < end && sc->s[at] == '"';
    if (*plain) {
        sc->pos = at + 1;
        return true;
    }
    return skip_long_string(sc);
}

static bool skip_string(tci_jscan *sc)
{
    bool plain;
    return scan_string(sc, &plain);
}

static bool skip_literal(tci_jscan *sc, const char *word)
{
    size_t len = strlen(word);
    if (sc->n - sc->pos < len || memcmp(sc->s + sc->pos, word, len))
        return false;
    sc->pos += len;
    return true;
}

static bool in_number_run(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

/* The run of [0-9+-.eE] at p (at most n bytes, fewer than 1024) as a C string in
 * num: its length, or 0 (none, or too long to be a number anyone writes). */
static size_t number_run(const char *p, size_t n, char num[1024])
{
    size_t k = 0;
    while (k < n && in_number_run(p[k]))
        if (++k == 1024)
            return 0;
    memcpy(num, p, k);
    num[k] = 0;
    return k;
}

/* The powers of ten a double holds exactly. */
static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common number, -?digits(.digits)? (timestamps, ids) whose run of [0-9+-.eE] ends
 * there, with its digits an integer m of at most 2^53 and k of them after the point:
 * *out is m / 10^k, which is exactly what strtod returns, since m and 10^k are both
 * exact doubles and one IEEE division rounds correctly (Clinger's fast path). strtod
 * cost a tenth of the whole conversion of a trace of mostly numbers. Returns the bytes
 * taken, 0 for any other form (left to strtod). */
/* 10^k for the eight-digit steps of take_digits. */
static const uint64_t pow10_u64[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* The digits at p[*i, n) appended to *m, *count the digits taken in all: false past 19
 * (m could overflow: rare, and strtod's). Eight at a time where eight bytes are left:
 * a byte is a digit when it differs from '0' in the low four bits only and by less
 * than 10 (the lowest byte that is none is found exactly: a carry comes only out of
 * a byte that is none), and the digits are combined in three multiplications, as in
 * Lemire's "Fast float parsing". The digits of timestamps were a third of the scan. */
static inline bool take_digits(const char *p, size_t *i, size_t n, uint64_t *m, unsigned *count)
{
    size_t k = *i;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (n - k >= 8) {
        uint64_t w, x, none;
        memcpy(&w, p + k, 8);
        x = w ^ 0x3030303030303030ull; /* a digit's value in its byte, else 10 or more */
        none = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
        unsigned c = none ? (unsigned)__builtin_ctzll(none) / 8 : 8;
        if (*count + c > 19)
            return false;
        if (c) {
            uint64_t v = x << (8 * (8 - c)); /* the c digits last, zeros before them */
            v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFull;
            v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFull;
            v = (v * 10000 + (v >> 32)) & 0xFFFFFFFFull;
            *m = *m * pow10_u64[c] + v;
        }
        *count += c;
        k += c;
        if (c < 8) {
            *i = k;
            return true;
        }
    }
#endif
    for (; k < n && (unsigned)(p[k] - '0') < 10; k++) {
        if (*count == 19)
            return false;
        *m = *m * 10 + (unsigned)(p[k] - '0');
        ++*count;
    }
    *i = k;
    return true;
}

static size_t fast_number(const char *p, size_t n, double *out)
{
    size_t i = n && p[0] == '-';
    uint64_t m = 0;
    unsigned digits = 0, all;
    if (!take_digits(p, &i, n, &m, &digits) || !digits)
        return 0;
    all = digits;
    if (i < n && p[i] == '.') {
        i++;
        if (!take_digits(p, &i, n, &m, &all) || all == digits)
            return 0;
    }
    if (m > (uint64_t)1 << 53 || (i < n && in_number_run(p[i])))
        return 0; /* not exact, or the run goes on ("1e3", "1.5.2"): strtod decides */
    double d = (double)m / exact_pow10[all - digits];
    *out = p[0] == '-' ? -d : d;
    return i;
}

/* The length of the run -?digits(.digits)? at p when the run of [0-9+-.eE] ends
 * there (strtod takes all of it), else 0: a number skipped without reading its value. */
static size_t plain_number(const char *p, size_t n)
{
    size_t first = n && p[0] == '-', i = first;
    while (i < n && (unsigned)(p[i] - '0') < 10)
        i++;
    if (i == first)
        return 0;
    if (i < n && p[i] == '.') {
        size_t frac = ++i;
        while (i < n && (unsigned)(p[i] - '0') < 10)
            i++;
        if (i == frac)
            return 0;
    }
    return i < 1024 && !(i < n && in_number_run(p[i])) ? i : 0;
}

/* A number as cJSON reads one: of the run of [0-9+-.eE], what strtod takes. */
static bool skip_number(tci_jscan *sc)
{
    char num[1024], *end;
    size_t plain = plain_number(sc->s + sc->pos, sc->n - sc->pos);
    if (plain) {
        sc->pos += plain;
        return true;
    }
    if (!number_run(sc->s + sc->pos, sc->n - sc->pos, num))
        return false;
    (void)strtod(num, &end);
    sc->pos += (size_t)(end - num);
    return end > num;
}

/* An object's key and its colon; *plain: the key has no escape. */
static bool scan_key(tci_jscan *sc, const char **key, size_t *len, bool *plain)
{
    ws(sc);
    size_t start = sc->pos + 1;
    if (sc->pos >= sc->n || sc->s[sc->pos] != '"')
        return false;
    /* keys are a few bytes: looked at one by one before the word-wise search */
    size_t i = start, end = sc->n - start < 16 ? sc->n : start + 16;
    while (i < end && sc->s[i] != '"' && sc->s[i] != '\\')
        i++;
    if (i < end && sc->s[i] == '"') {
        *plain = true;
        sc->pos = i + 1;
    } else if (!scan_string(sc, plain)) {
        return false;
    }
    *key = sc->s + start;
    *len = sc->pos - 1 - start;
    ws(sc);
    if (sc->pos >= sc->n || sc->s[sc->pos] != ':')
        return false;
    sc->pos++;
    return true;
}

bool tci_jscan_key(tci_jscan *sc, const char **key, size_t *len)
{
    bool plain;
    return scan_key(sc, key, len, &plain);
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
        ws(sc);
        if (sc->pos >= sc->n)
            return false;
        char c = sc->s[sc->pos];
        bool scalar = true;
        if (c == '{' || c == '[') {
            if (depth == JSON_MAX_DEPTH) {
                sc->too_deep = true;
                return false;
            }
            open[depth++] = c;
            sc->pos++;
            ws(sc);
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
            ws(sc);
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

static inline bool quick_key(tci_jscan *sc, const char **key, size_t *len, uint64_t *word);

/* A flat object at pos in the common form (quick_key's names, each followed by a string
 * or a number in plain_number's form and a ',' or the '}', no whitespace), as most
 * events' args are: skipped here without the container walk's setup. false: another
 * form, pos unchanged (the walk reads it, and reads this form the same way). */
static bool skip_flat_object(tci_jscan *sc)
{
    size_t at = sc->pos + 1;
    if (at < sc->n && sc->s[at] == '}') {
        sc->pos = at + 1;
        return true;
    }
    tci_jscan t = *sc;
    t.pos = at;
    for (;;) {
        const char *key;
        size_t len, k;
        uint64_t word;
        bool plain;
        if (!quick_key(&t, &key, &len, &word) || t.pos >= t.n)
            return false;
        char c = t.s[t.pos];
        if (c == '"') {
            if (!scan_string(&t, &plain))
                return false;
        } else if ((k = plain_number(t.s + t.pos, t.n - t.pos)) != 0) {
            t.pos += k;
        } else {
            return false;
        }
        if (t.pos >= t.n || (t.s[t.pos] != ',' && t.s[t.pos] != '}'))
            return false;
        if (t.s[t.pos++] == '}') {
            sc->pos = t.pos;
            return true;
        }
    }
}

/* A member's value: strings and numbers directly (most are), the rest through the
 * container walk, which costs a kilobyte of stack state to enter. */
static bool skip_member_value(tci_jscan *sc)
{
    if (sc->pos < sc->n) {
        char c = sc->s[sc->pos];
        if (c == '"')
            return skip_string(sc);
        if (c == '-' || (c >= '0' && c <= '9'))
            return skip_number(sc);
        if (c == '{' && skip_flat_object(sc))
            return true;
    }
    return tci_jscan_value(sc);
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

/* The first min(len, 8) bytes of a key at p as one word, the others zero: a member name
 * is told from the keys asked for by comparing words, not bytes. avail: the bytes
 * readable at p (8 or more: one load). */
static inline uint64_t key_word(const char *p, size_t len, size_t avail)
{
    uint64_t w = 0;
    size_t k = len < 8 ? len : 8;
    if (avail >= 8) {
        memcpy(&w, p, 8);
        if (k < 8) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            w &= ~(~0ull >> (8 * k));
#else
            w &= (1ull << (8 * k)) - 1;
#endif
        }
    } else {
        memcpy(&w, p, k);
    }
    return w;
}

static unsigned word_slot(uint64_t word, size_t len) { return (unsigned)(((word ^ len) * 0x9e3779b97f4a7c15ull) >> 58); }

/* The keys longer than a member name is ever compared (32 bytes) are left out: never found. */
void tci_jkeys_init(tci_jkeys *k, const char *const *keys, size_t n_keys)
{
    memset(k, 0, sizeof *k);
    k->keys = keys;
    k->n = n_keys < TCI_JKEYS_MAX ? n_keys : TCI_JKEYS_MAX;
    for (size_t i = 0; i < k->n; i++) {
        size_t len = strlen(keys[i]);
        if (len > 32)
            continue;
        k->len[i] = (uint8_t)len;
        k->word[i] = key_word(keys[i], len, 0);
        unsigned at = word_slot(k->word[i], len);
        while (k->slot[at])
            at = (at + 1) & 63;
        k->slot[at] = (uint8_t)(i + 1);
    }
}

/* The keys asked for that text[0, len) names (word: its first bytes, as key_word reads
 * them) and that have no value yet: bit i for keys[i] (a name may be asked for twice;
 * the first member named so counts). Usually one probe: a few keys in 64 slots. */
static inline uint32_t claim_key(const tci_jkeys *k, uint64_t word, const char *text, size_t len,
                                 const tci_jspan *vals)
{
    uint32_t mask = 0;
    for (unsigned at = word_slot(word, len); k->slot[at]; at = (at + 1) & 63) {
        unsigned i = k->slot[at] - 1u;
        bool same = k->word[i] == word && k->len[i] == len &&
                    (len <= 8 || !memcmp(k->keys[i] + 8, text + 8, len - 8));
        if (same && !vals[i].p)
            mask |= (uint32_t)1 << i;
    }
    return mask;
}

bool tci_jscan_object(tci_jscan *sc, const char *const *keys, size_t n_keys, tci_jspan *vals)
{
    tci_jkeys k;
    tci_jkeys_init(&k, keys, n_keys);
    for (size_t i = k.n; i < n_keys; i++)
        vals[i] = (tci_jspan){NULL, 0};
    return tci_jscan_members(sc, &k, vals);
}

/* A member name in the common form at sc->pos, "key": (no escape, no whitespace, at most
 * 15 bytes), found with two word-wise looks rather than scan_key's walk byte by byte;
 * *word: its first bytes as key_word reads them. false: another form, or too near the
 * end; scan_key reads it from the same place (and reads this form the same way). */
static inline bool quick_key(tci_jscan *sc, const char **key, size_t *len, uint64_t *word)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const char *s = sc->s;
    size_t p = sc->pos;
    if (p > sc->n || sc->n - p < 18 || s[p] != '"')
        return false;
    for (size_t half = 0; half < 2; half++) {
        uint64_t w, q, b;
        memcpy(&w, s + p + 1 + 8 * half, 8);
        if (!half)
            *word = w;
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        uint64_t hit = ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
        if (!hit)
            continue;
        size_t k = 8 * half + (size_t)__builtin_ctzll(hit) / 8; /* the first quote or backslash */
        if (s[p + 1 + k] != '"' || s[p + 2 + k] != ':')
            return false;
        if (k < 8)
            *word &= ((uint64_t)1 << (8 * k)) - 1;
        *key = s + p + 1;
        *len = k;
        sc->pos = p + k + 3;
        return true;
    }
#else
    (void)sc, (void)key, (void)len, (void)word;
#endif
    return false;
}

/* The next member's name (past its colon) and the keys asked for it claims (claim_key). */
static inline bool member_name(tci_jscan *sc, const tci_jkeys *kt, const tci_jspan *vals, uint32_t *claimed)
{
    const char *key;
    size_t len;
    uint64_t word;
    if (quick_key(sc, &key, &len, &word)) {
        *claimed = claim_key(kt, word, key, len, vals);
        return true;
    }
    bool plain;
    if (!scan_key(sc, &key, &len, &plain))
        return false;
    char name[32] = {0}; /* the keys asked for are short: a longer one is none of them */
    const char *text = key;
    size_t k = len;
    if (!plain) { /* escaped: compared decoded */
        uint64_t lone = 0;
        k = len < 6 * sizeof name ? tci_json_unescape(key, len, name, sizeof name, &lone) : sizeof name + 1;
        text = name;
    }
    *claimed = 0;
    if (k <= sizeof name)
        *claimed = claim_key(kt, key_word(text, k, plain ? sc->n - (size_t)(key - sc->s) : sizeof name), text, k, vals);
    return true;
}

bool tci_jscan_members(tci_jscan *sc, const tci_jkeys *kt, tci_jspan *vals)
{
    return tci_jscan_members_num(sc, kt, vals, NULL, NULL);
}

bool tci_jscan_members_num(tci_jscan *sc, const tci_jkeys *kt, tci_jspan *vals, double *num, uint32_t *numbered)
{
    for (size_t i = 0; i < kt->n; i++)
        vals[i] = (tci_jspan){NULL, 0};
    if (numbered)
        *numbered = 0;
    ws(sc);
    if (sc->pos >= sc->n || sc->s[sc->pos] != '{')
        return false;
    sc->pos++;
    ws(sc);
    if (sc->pos < sc->n && sc->s[sc->pos] == '}') {
        sc->pos++;
        return true;
    }
    for (;;) {
        uint32_t claimed;
        if (!member_name(sc, kt, vals, &claimed))
            return false;
        ws(sc);
        size_t start = sc->pos, taken = 0;
        double d = 0;
        /* a number asked for in its common form: read here, not skipped and read again */
        if (claimed && num && sc->pos < sc->n && (sc->s[sc->pos] == '-' || (unsigned)(sc->s[sc->pos] - '0') < 10))
            taken = fast_number(sc->s + sc->pos, sc->n - sc->pos, &d);
        if (taken)
            sc->pos += taken; /* what skip_number takes of it too */
        else if (!skip_member_value(sc))
            return false;
        for (uint32_t c = claimed; c; c &= c - 1) {
            unsigned i = (unsigned)__builtin_ctz(c);
            vals[i] = (tci_jspan){sc->s + start, sc->pos - start};
            if (taken) {
                num[i] = d;
                *numbered |= (uint32_t)1 << i;
            }
        }
        ws(sc);
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
        if (fast_number(v.p + 1, v.n - 2, out) == v.n - 2)
            return true; /* the whole string, as strtod would take it */
        memcpy(num, v.p + 1, v.n - 2);
        num[v.n - 2] = 0;
        *out = strtod(num, &end);
        return !*end && isfinite(*out);
    }
    if (fast_number(v.p, v.n, out))
        return true;
    if (!strchr("-0123456789", v.p[0]) || !number_run(v.p, v.n, num))
        return false;
    *out = strtod(num, &end);
    return end > num && isfinite(*out);
}
