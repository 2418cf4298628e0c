/*
 * escape.h - the one escaping rule of each output context that can hold a
 * name (a method, class, thread, process or file name, a --title, a
 * message): HTML and XML/SVG markup, the raw text inside a <script>, a
 * JavaScript/JSON string literal, and a Graphviz label. Every writer and
 * every page of `traceconv serve` escapes through these functions, as the
 * last step before the bytes are written (escape.c states each rule).
 *
 * Self-contained (no traceconv header but utf8.h, no allocation): the library's
 * writers use it through the sink adapters of tc_writer.h (textout.c),
 * and the command's serve pages, which see only the public API, compile it
 * in as well. Names are read as characters by utf8.h's decoder, and the
 * bytes of one ill-formed subpart are one U+FFFD in every context.
 */
#ifndef TC_ESCAPE_H
#define TC_ESCAPE_H

#include "utf8.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where escaped bytes go: called once per run of bytes (never with n == 0). */
typedef void (*tci_esc_put)(void *to, const char *p, size_t n);

/* How a character that a name may hold but the output may not show as itself (a
 * control character) is shown. Bytes that are not UTF-8 and noncharacters (U+FDD0..U+FDEF,
 * U+xFFFE, U+xFFFF: not XML characters, or not allowed in HTML) are U+FFFD in both. */
enum tci_esc_shown {
    TCI_ESC_REPLACE, /* as U+FFFD */
    TCI_ESC_VISIBLE  /* as the text report's escapes: \n \r \t, \xHH (other C0, DEL), \u0085 (C1),
                      * and a backslash as \\ so that an escape is unambiguous */
};

/* Whether a code point is never shown as itself in markup: C0 (TAB, LF and CR too: a name
 * is one line), DEL, C1, and the noncharacters. */
bool tci_esc_unsafe(uint32_t cp);

/* HTML text, an HTML attribute value in quotes, XML/SVG text and attribute values. */
void tci_esc_markup(tci_esc_put put, void *to, const char *s, size_t n, enum tci_esc_shown shown);
/* The same for text already decoded to code points (unsafe ones are written as U+FFFD). */
void tci_esc_markup_cp(tci_esc_put put, void *to, const uint32_t *cp, size_t n);
/* The contents of a JavaScript or JSON string literal (without its quotes), also safe
 * inside an HTML <script> or attribute. */
void tci_esc_js_string(tci_esc_put put, void *to, const char *s, size_t n);
/* The same literal holding the name as tci_esc_markup shows it with TCI_ESC_VISIBLE (control
 * characters as visible escapes, a backslash as \\, noncharacters as U+FFFD), for a page whose
 * script sets it as text: it reads the characters its markup would show. */
void tci_esc_js_visible(tci_esc_put put, void *to, const char *s, size_t n);
/* The contents of a Graphviz "quoted string" label (without its quotes), shown as the HTML
 * report shows names (TCI_ESC_VISIBLE); what `dot -Tsvg` makes of it is well-formed XML.
 * After max bytes of s, "..." and the rest left out (cut between characters). */
void tci_esc_dot_label(tci_esc_put put, void *to, const char *s, size_t n, size_t max);
/* Plain text a person reads with cat, a pager or a spreadsheet: the text report, the diff's
 * text, the CSV rows, folded stacks. Printable UTF-8 as itself; a control character (C0, DEL,
 * C1) and a backslash as TCI_ESC_VISIBLE's escapes (\n, \x1B, \u009B, \\), so no name can
 * drive a terminal or break a line, and an escape is unambiguous. The bytes of an ill-formed
 * UTF-8 subpart: with hex_bytes each as \xHH (the text tables), else one U+FFFD (CSV and
 * folded stacks, as the HTML report, speedscope and the flame graphs show them). */
void tci_esc_text(tci_esc_put put, void *to, const char *s, size_t n, bool hex_bytes);
/* Bytes inside a <script> element (systrace's trace-data blocks), whose readers take them
 * as they are: a backslash is put after a '<' followed by '/', '!' or "script" in any case
 * (`<\/`, `<\!`, `<\script`), so no "</script", "<!--" or "<script" is left. The state
 * carries the bytes of a "<script" that a call's end may cut (held back until the next call
 * tells), so the rule holds for the bytes as finally written however they are split into
 * calls: start a block with it zeroed, end it with tci_esc_script_end. */
typedef struct tci_esc_script {
    uint8_t n;     /* bytes held: '<' and what followed it of "script" */
    char held[7];
} tci_esc_script;
void tci_esc_script_data(tci_esc_put put, void *to, const char *s, size_t n, tci_esc_script *st);
/* The block ends: the bytes held (a '<' and part of "script" that no more bytes follow) as they are. */
void tci_esc_script_end(tci_esc_put put, void *to, tci_esc_script *st);

#endif
