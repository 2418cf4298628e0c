/*
 * text.h - the helpers of the text parsers: the readers of line-based text
 * (art's key section, ir, rhea's dumps and method mappings, systrace, the
 * atrace payload grammar) and the deobfuscation mapping's parser. One rule
 * each, stated here once:
 *
 *  - Lines: a line ends at LF or at the end of the text; the CRs just before
 *    its end are not part of it (CRLF, and CRLF made twice: CR CR LF).
 *  - Whitespace: blanks (space, tab) separate the fields of a line; spaces
 *    (blanks, CR, FF, VT: what isspace() takes but the LF) are what trimming
 *    takes off a field's ends.
 *  - Numbers: the whole of a span, decimal digits (at least one; leading
 *    zeros allowed), at most the caller's max: a value past it is refused,
 *    never wrapped or cut. A sign, where one is allowed, is '-' or '+'.
 *
 * Self-contained (no other traceconv header); only parsers include it.
 */
#ifndef TC_TEXT_H
#define TC_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bytes of a text (not NUL-terminated). */
typedef struct tci_span {
    const char *p;
    size_t n;
} tci_span;

/* A line of a text, without its end (LF and the CRs before it), and its offset. */
typedef struct tci_line {
    const char *p;
    size_t n;
    uint64_t off;
} tci_line;

static inline bool tci_is_digit(char c) { return c >= '0' && c <= '9'; }
static inline bool tci_is_blank(char c) { return c == ' ' || c == '\t'; }
static inline bool tci_is_space(char c) { return tci_is_blank(c) || c == '\r' || c == '\f' || c == '\v'; }

static inline bool tci_span_eq(tci_span a, tci_span b) { return a.n == b.n && (!a.n || !memcmp(a.p, b.p, a.n)); }
static inline bool tci_span_is(tci_span s, const char *lit) { return tci_span_eq(s, (tci_span){lit, strlen(lit)}); }
/* s without the spaces (tci_is_space) at its ends. */
tci_span tci_span_trim(tci_span s);

/* The line at *pos of text[0, end), *pos moved past it; false at the end. */
bool tci_next_line(const char *text, size_t end, size_t *pos, tci_line *line);

/* p[0, n) as a decimal number at most max. */
bool tci_parse_u64(const char *p, size_t n, uint64_t max, uint64_t *out);
/* p[0, n) as a hexadecimal number (digits in either case, an optional 0x or 0X first). */
bool tci_parse_hex_u64(const char *p, size_t n, uint64_t *out);
/* p[0, n) as an optional sign and a decimal number in int64's range. */
bool tci_parse_i64(const char *p, size_t n, int64_t *out);

#endif
