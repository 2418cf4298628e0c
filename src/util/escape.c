/*
 * escape.c - one escaping rule per output context (escape.h). A name is
 * hostile in every output it reaches: it may hold any byte but NUL. Each
 * rule below is applied by the writer as the last step, to the bytes it
 * writes, so that no rewrite after it (a separator replaced, a column put
 * beside it) can form what the rule took out.
 *
 * Characters. Every context reads a name as UTF-8 the way Python and the
 * browsers do: a byte sequence that is not UTF-8 (a surrogate encoded in
 * UTF-8 such as ED A0 80, an overlong form, a stray continuation byte) is
 * U+FFFD once per maximal invalid subpart. Characters that must not appear
 * as themselves in markup (tci_esc_unsafe: C0 controls, DEL, C1 controls,
 * the noncharacters including U+FFFE and U+FFFF; XML 1.0's Char production
 * excludes C0 and U+FFFE/U+FFFF, HTML forbids controls and noncharacters)
 * are shown as U+FFFD or as a visible escape (enum tci_esc_shown).
 *
 * Contexts:
 *  - markup (HTML text and quoted attribute values, XML/SVG text and
 *    attributes): & < > " ' as &amp; &lt; &gt; &quot; &#39; (XML's own
 *    entities and a numeric one: the output stays XML), the characters
 *    above as said. CSS never holds a name: the only variable part of our
 *    styles is a flame graph's id prefix, checked as [A-Za-z][A-Za-z0-9_-]*.
 *  - script data (the bytes of a <script> element that readers take raw,
 *    systrace's trace-data blocks: nothing in them is decoded, so no
 *    entity can be used): '<' followed by '/', '!' or "script" (in any
 *    case) gets a backslash after it. So no "</script" can end the element,
 *    no "<!--" can enter HTML's "script data escaped" states, and no
 *    "<script" is there for them to mean anything; Perfetto's parser,
 *    which ends a block at a line holding "</script>", sees none. A reader
 *    of the text sees the backslash: the one substitution in names.
 *    It works on the bytes as finally written, whatever their split.
 *  - JavaScript / JSON string literal: " and \ as \" and \\, control
 *    characters, < > & ' and U+2028/U+2029 (line terminators in older
 *    JavaScript) as \uXXXX, so the literal is JSON and can stand inside a
 *    <script> or an HTML attribute too; not UTF-8 as \ufffd.
 *    Its visible form (tci_esc_js_visible): the characters of the name as
 *    the markup shows them with TCI_ESC_VISIBLE, in such a literal (the
 *    HTML report's call-tree data, which its script sets as text).
 *  - plain text (tci_esc_text: what a person reads with cat, a pager or a
 *    spreadsheet): control characters and a backslash as TCI_ESC_VISIBLE's
 *    escapes, printable characters as themselves; bytes that are not UTF-8
 *    as \xHH each (the text tables) or as U+FFFD (CSV, folded stacks).
 *  - Graphviz label ("quoted string"): the name as the HTML report shows it
 *    (TCI_ESC_VISIBLE), then dot's syntax: '"' as \", every backslash
 *    doubled (dot reads \n, \l, \N ... in labels), '&' as &amp; (dot reads
 *    entities in labels and copies them to its SVG, where a bare '&' or an
 *    entity that is not XML's would break it). dot escapes < > itself; as
 *    every character that reaches it is an XML character, `dot -Tsvg`
 *    writes well-formed XML.
 */
#include "escape.h"

#include <stdio.h>
#include <string.h>

#define REPLACEMENT "\xEF\xBF\xBD"

/* ---- characters --------------------------------------------------------------------- */

/* The next character of p[0, n) (n >= 1): its length and code point, U+FFFD for the
 * maximal subpart of an ill-formed sequence (one U+FFFD per subpart, as Python's and the
 * browsers' decoders count them). */
static size_t next_char(const uint8_t *p, size_t n, uint32_t *cp)
{
    size_t k = tci_utf8_next(p, n, cp);
    if (*cp == TCI_UTF8_INVALID)
        *cp = 0xFFFD;
    return k;
}

static bool noncharacter(uint32_t cp) { return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE; }

bool tci_esc_unsafe(uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || noncharacter(cp); }

/* ---- output: runs of bytes gathered into few calls ---------------------------------------- */

typedef struct esc_out {
    tci_esc_put put;
    void *to;
    size_t len;
    char buf[256];
} esc_out;

static void out_flush(esc_out *o)
{
    if (o->len)
        o->put(o->to, o->buf, o->len);
    o->len = 0;
}

static void out_write(esc_out *o, const char *p, size_t n)
{
    if (n > sizeof o->buf - o->len) {
        out_flush(o);
        if (n > sizeof o->buf) {
            o->put(o->to, p, n);
            return;
        }
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void out_str(esc_out *o, const char *s) { out_write(o, s, strlen(s)); }

/* ---- the contexts' replacements ------------------------------------------------------------ */

/* A context: what it writes instead of a code point, or NULL when the character stands as
 * itself. tmp (16 bytes) holds a replacement made on the spot. */
typedef const char *(*esc_rule)(uint32_t cp, char *tmp);

/* TCI_ESC_VISIBLE's text for a control character or a backslash, or NULL (enum tci_esc_shown). */
static const char *visible(uint32_t cp, char *tmp)
{
    switch (cp) {
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
    }
    if (cp < 0x20 || cp == 0x7F)
        snprintf(tmp, 16, "\\x%02X", (unsigned)cp);
    else if (cp >= 0x80 && cp <= 0x9F)
        snprintf(tmp, 16, "\\u%04X", (unsigned)cp);
    else
        return NULL;
    return tmp;
}

static const char *markup_entity(uint32_t cp)
{
    switch (cp) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return NULL;
    }
}

static const char *markup_replace(uint32_t cp, char *tmp)
{
    (void)tmp;
    if (cp == 0xFFFD || tci_esc_unsafe(cp))
        return REPLACEMENT; /* also a U+FFFD of the input: the same bytes */
    return markup_entity(cp);
}

static const char *markup_visible(uint32_t cp, char *tmp)
{
    if (cp == 0xFFFD || noncharacter(cp))
        return REPLACEMENT;
    const char *v = visible(cp, tmp);
    return v ? v : markup_entity(cp);
}

static const char *js_rule(uint32_t cp, char *tmp)
{
    if (cp == '"')
        return "\\\"";
    if (cp == '\\')
        return "\\\\";
    if (tci_esc_unsafe(cp) || cp == 0xFFFD || cp == 0x2028 || cp == 0x2029 || cp == '<' || cp == '>' || cp == '&' ||
        cp == '\'') {
        if (cp > 0xFFFF) /* a noncharacter past the BMP (U+1FFFF): \\u takes 4 digits, so a surrogate pair */
            snprintf(tmp, 16, "\\u%04x\\u%04x", 0xD800u + ((cp - 0x10000) >> 10), 0xDC00u + ((cp - 0x10000) & 0x3FF));
        else
            snprintf(tmp, 16, "\\u%04x", (unsigned)cp);
        return tmp;
    }
    return NULL;
}

/* cp's visible escape (escape.h: "\\n", "\\xHH", "\\u0085") in tmp with each backslash doubled, for a
 * literal that reads backslashes itself (a JavaScript string, a Graphviz label); NULL when cp
 * shows as itself. At most 6 bytes shown ("\\u0085"), 7 with its backslash doubled. */
static const char *visible_doubled(uint32_t cp, char *tmp)
{
    char shown[16];
    const char *v = visible(cp, shown);
    if (!v)
        return NULL;
    size_t o = 0;
    for (; *v; v++) {
        if (*v == '\\')
            tmp[o++] = '\\';
        tmp[o++] = *v;
    }
    tmp[o] = 0;
    return tmp;
}

/* A JavaScript / JSON literal of the name as the markup shows it with TCI_ESC_VISIBLE (so a page
 * that sets it as text shows the same characters as its markup does): a noncharacter as U+FFFD,
 * a control character or a backslash as its visible escape with each backslash doubled for the
 * literal, then js_rule for the rest. */
static const char *js_visible_rule(uint32_t cp, char *tmp)
{
    if (noncharacter(cp))
        return "\\ufffd";
    const char *v = visible_doubled(cp, tmp);
    return v ? v : js_rule(cp, tmp);
}

static const char *dot_rule(uint32_t cp, char *tmp)
{
    if (cp == '"')
        return "\\\"";
    if (cp == '&')
        return "&amp;";
    if (cp == 0xFFFD || noncharacter(cp))
        return REPLACEMENT;
    return visible_doubled(cp, tmp);
}

/* The walk of every context: bytes that stand as themselves gathered into runs. */
static void walk(tci_esc_put put, void *to, const char *s, size_t n, size_t max, esc_rule rule)
{
    esc_out o = {.put = put, .to = to};
    const uint8_t *p = (const uint8_t *)s;
    size_t run = 0;
    char tmp[16];
    for (size_t i = 0; i < n;) {
        if (i >= max) {
            out_write(&o, s + run, i - run);
            out_str(&o, "...");
            out_flush(&o);
            return;
        }
        uint32_t cp;
        size_t k = next_char(p + i, n - i, &cp);
        const char *r = rule(cp, tmp);
        if (r) {
            out_write(&o, s + run, i - run);
            out_str(&o, r);
            run = i + k;
        }
        i += k;
    }
    out_write(&o, s + run, n - run);
    out_flush(&o);
}

/* ---- the contexts ------------------------------------------------------------------------ */

void tci_esc_markup(tci_esc_put put, void *to, const char *s, size_t n, enum tci_esc_shown shown)
{
    walk(put, to, s, n, SIZE_MAX, shown == TCI_ESC_VISIBLE ? markup_visible : markup_replace);
}

void tci_esc_markup_cp(tci_esc_put put, void *to, const uint32_t *cp, size_t n)
{
    esc_out o = {.put = put, .to = to};
    char tmp[16];
    for (size_t i = 0; i < n; i++) {
        uint32_t c = cp[i] > 0x10FFFF || (cp[i] >= 0xD800 && cp[i] <= 0xDFFF) ? 0xFFFD : cp[i];
        const char *r = markup_replace(c, tmp);
        char u[4];
        if (r) {
            out_str(&o, r);
            continue;
        }
        size_t k = tci_utf8_encode(c, u);
        out_write(&o, u, k);
    }
    out_flush(&o);
}

void tci_esc_js_string(tci_esc_put put, void *to, const char *s, size_t n) { walk(put, to, s, n, SIZE_MAX, js_rule); }

void tci_esc_js_visible(tci_esc_put put, void *to, const char *s, size_t n)
{
    walk(put, to, s, n, SIZE_MAX, js_visible_rule);
}

void tci_esc_dot_label(tci_esc_put put, void *to, const char *s, size_t n, size_t max)
{
    walk(put, to, s, n, max, dot_rule);
}

void tci_esc_text(tci_esc_put put, void *to, const char *s, size_t n, bool hex_bytes)
{
    esc_out o = {.put = put, .to = to};
    const uint8_t *p = (const uint8_t *)s;
    size_t run = 0;
    char tmp[16];
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = tci_utf8_next(p + i, n - i, &cp);
        const char *r = cp == TCI_UTF8_INVALID ? NULL : visible(cp, tmp);
        if (r || cp == TCI_UTF8_INVALID) {
            out_write(&o, s + run, i - run);
            if (r)
                out_str(&o, r);
            else if (!hex_bytes)
                out_str(&o, REPLACEMENT);
            for (size_t j = 0; !r && hex_bytes && j < k; j++) { /* each byte of the ill-formed subpart */
                snprintf(tmp, sizeof tmp, "\\x%02X", p[i + j]);
                out_str(&o, tmp);
            }
            run = i + k;
        }
        i += k;
    }
    out_write(&o, s + run, n - run);
    out_flush(&o);
}

void tci_esc_script_data(tci_esc_put put, void *to, const char *s, size_t n, tci_esc_script *st)
{
    static const char word[] = "script";
    size_t i = 0, run = 0; /* s[run, i) is to be put as it is */
    while (i < n) {
        if (!st->n) { /* nothing held: on to the next '<' */
            const char *q = memchr(s + i, '<', n - i);
            if (!q)
                break;
            i = (size_t)(q - s);
            if (i > run)
                put(to, s + run, i - run);
            st->held[0] = '<';
            st->n = 1;
            run = ++i;
            continue;
        }
        char c = s[i];
        if (st->n == 1 && (c == '/' || c == '!')) { /* "</", "<!": c goes out with the next run */
            put(to, "<\\", 2);
            st->n = 0;
            run = i++;
            continue;
        }
        if ((c | 0x20) == word[st->n - 1]) { /* one more byte of "<script", in any case */
            st->held[st->n++] = c;
            run = ++i;
            if (st->n == 7) {
                put(to, "<\\", 2);
                put(to, st->held + 1, 6);
                st->n = 0;
            }
            continue;
        }
        put(to, st->held, st->n); /* not "<script": what is held as it is, and c looked at again */
        st->n = 0;
        run = i;
    }
    if (!st->n && n > run)
        put(to, s + run, n - run);
}

void tci_esc_script_end(tci_esc_put put, void *to, tci_esc_script *st)
{
    if (st->n)
        put(to, st->held, st->n);
    st->n = 0;
}
