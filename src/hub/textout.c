/*
 * textout.c - names as the table writers print them (the report's text and
 * CSV, the diff's text and CSV), so that a name reads the same in every one
 * of them and one fix reaches them all.
 *
 * Text: printable UTF-8 as it is; control bytes, backslashes and bytes that
 * are not UTF-8 as escapes (\n, \r, \t, \\, \xHH), so no name can break a
 * line. CSV: a field is quoted when it must be (RFC 4180), bytes that are
 * not UTF-8 become U+FFFD. Markup and Graphviz labels: escape.h's rules, into
 * a sink.
 */
#include "tc_trace.h"
#include "tc_writer.h"

void tci_put_escaped_with(tci_sink *o, const char *s, size_t max, void (*escape_byte)(tci_sink *o, uint8_t c))
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        if (i >= max) {
            TCI_PUT_LIT(o, "...");
            return;
        }
        uint8_t c = p[i];
        size_t k = c >= 0x80 ? tci_utf8_len(p + i, n - i) : 1;
        if (c >= 0x80 && k) {
            tci_sink_write(o, p + i, k);
            i += k;
            continue;
        }
        escape_byte(o, c);
        i++;
    }
}

static void text_byte(tci_sink *o, uint8_t c)
{
    if (c == '\\')
        TCI_PUT_LIT(o, "\\\\");
    else if (c == '\n')
        TCI_PUT_LIT(o, "\\n");
    else if (c == '\r')
        TCI_PUT_LIT(o, "\\r");
    else if (c == '\t')
        TCI_PUT_LIT(o, "\\t");
    else if (c < 0x20 || c >= 0x7f)
        tci_sink_printf(o, "\\x%02X", c);
    else
        tci_sink_putc(o, (char)c);
}

void tci_put_escaped_text(tci_sink *o, const char *s) { tci_put_escaped_with(o, s, SIZE_MAX, text_byte); }

bool tci_csv_needs_quotes(const char *s) { return s && s[strcspn(s, ",\"\r\n")]; }

void tci_put_csv_text(tci_sink *o, const char *s, bool quoted)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = p[i] >= 0x80 ? tci_utf8_len(p + i, n - i) : 1;
        if (!k) {
            TCI_PUT_LIT(o, "\xEF\xBF\xBD");
            i++;
            continue;
        }
        if (quoted && p[i] == '"')
            tci_sink_putc(o, '"');
        tci_sink_write(o, p + i, k);
        i += k;
    }
}

void tci_put_csv_field(tci_sink *o, const char *s)
{
    bool quoted = tci_csv_needs_quotes(s);
    if (quoted)
        tci_sink_putc(o, '"');
    tci_put_csv_text(o, s, quoted);
    if (quoted)
        tci_sink_putc(o, '"');
}

void tci_put_method_name(tci_sink *o, const tci_method *m, void (*put)(tci_sink *, const char *))
{
    if (m->plain_name) {
        put(o, m->name);
    } else if (!m->defined) {
        put(o, m->short_name); /* "unknown.0x1c": the name trace.c gives it, as every other writer shows it */
    } else {
        put(o, m->cls);
        tci_sink_putc(o, '.');
        put(o, m->name);
        if (m->sig && m->sig[0]) {
            tci_sink_putc(o, ' ');
            put(o, m->sig);
        }
    }
}

/* escape.h's writer: the bytes into the sink */
static void sink_put(void *sink, const char *p, size_t n) { tci_sink_write(sink, p, n); }

void tci_put_markup(tci_sink *o, const char *s, enum tci_esc_shown shown)
{
    tci_esc_markup(sink_put, o, s, strlen(s), shown);
}

void tci_put_markup_cp(tci_sink *o, const uint32_t *cp, size_t n) { tci_esc_markup_cp(sink_put, o, cp, n); }

void tci_put_js_visible(tci_sink *o, const char *s) { tci_esc_js_visible(sink_put, o, s, strlen(s)); }

void tci_put_dot_label(tci_sink *o, const char *s, size_t max) { tci_esc_dot_label(sink_put, o, s, strlen(s), max); }
