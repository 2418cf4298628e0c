/*
 * utf8.h - the one UTF-8 decoder (and encoder) of traceconv. Every place that
 * reads a name as characters (the escaping of every output context, the JSON
 * string of the sink, the table writers' text and CSV, the library's messages,
 * the command's terminal escapes) decodes it here, with one rule: Unicode's
 * well-formed byte sequences (The Unicode Standard, table 3-7). An overlong
 * form (C0 80, E0 80 80), a surrogate encoded in UTF-8 (ED A0 80), a code point
 * above U+10FFFF (F4 90 80 80, F5..FF), a stray continuation byte and a
 * sequence cut short are not characters. How such bytes are shown (one U+FFFD
 * per maximal subpart, one per byte, \xHH) is the caller's choice.
 *
 * Self-contained (no other traceconv header, no allocation), so the command's
 * programs, which see only the public API, compile it in too (CMakeLists.txt).
 */
#ifndef TC_UTF8_H
#define TC_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The code point tci_utf8_next gives for bytes that are not a character. */
#define TCI_UTF8_INVALID UINT32_MAX

/* The character at p[0, n) (n >= 1): its length and, in *cp, its code point; for bytes
 * that are not UTF-8, the length of the maximal subpart of the ill-formed sequence (>= 1:
 * the bytes Python's and the browsers' decoders replace with one U+FFFD) and
 * TCI_UTF8_INVALID. */
size_t tci_utf8_next(const uint8_t *p, size_t n, uint32_t *cp);
/* The length of the well-formed sequence at p[0, n), or 0 when the bytes there are not
 * one (or n is 0): for callers that replace or escape byte by byte. */
size_t tci_utf8_len(const uint8_t *p, size_t n);
/* The UTF-8 of a character (cp <= U+10FFFF, not a surrogate) in out: its length, 1 to 4. */
size_t tci_utf8_encode(uint32_t cp, char out[4]);

#endif
