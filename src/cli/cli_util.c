/* cli_util.c - what the command's subcommands (conversions, diff, batch, serve) share. */
#define _GNU_SOURCE
#include "cli_util.h"
#include "traceconv.h"
#include "../core/utf8.h" /* the library's UTF-8 decoder, compiled in (CMakeLists.txt) */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    unsigned shift = 0;
    if (*end) {
        const char *units = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u || end[1])
            return -1;
        shift = 10 * (unsigned)(u - units + 1);
    }
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* ---- escaping for the terminal ---- */

/* Code points a terminal acts on rather than shows: C1 controls (U+009B is CSI) and
 * the bidi overrides and isolates, which reorder what follows them on the line. */
static int is_invisible_control(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

typedef struct outbuf {
    char *p;
    size_t len, cap; /* cap counts the NUL */
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->len + n >= o->cap)
        n = o->len + 1 < o->cap ? o->cap - o->len - 1 : 0;
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = 0;
}

static void escape_into(outbuf *o, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    char esc[16];
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = tci_utf8_next(s + i, n - i, &cp);
        if (cp == TCI_UTF8_INVALID)
            len = 0; /* not UTF-8: shown byte by byte */
        if (len == 1 && cp >= 0x20 && cp != 0x7F) {
            put(o, (const char *)s + i, 1);
        } else if (len > 1 && !is_invisible_control(cp)) {
            put(o, (const char *)s + i, len);
        } else if (len == 1 && (cp == '\n' || cp == '\t' || cp == '\r')) {
            esc[0] = '\\';
            esc[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
            put(o, esc, 2);
        } else if (len > 1) {
            put(o, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", cp));
        } else { /* a C0 control, DEL, or a byte that is not UTF-8 */
            put(o, esc, (size_t)snprintf(esc, sizeof esc, "\\x%02x", s[i]));
            len = 1;
        }
        i += len;
    }
}

void cli_escape(const char *s, char *out, size_t cap)
{
    outbuf o = {out, 0, cap};
    out[0] = 0;
    escape_into(&o, s, strlen(s));
}

/* fmt formatted, escaped, between a raw prefix and suffix, in one write to stderr: lines of
 * batch's threads never interleave within a line. */
static void say(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
    char small[2048], *text = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)))
        vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    if (n < 0 || !text) {
        text = small; /* out of memory: the message cut short, never lost */
        n = (int)strlen(small);
    }
    size_t cap = strlen(prefix) + strlen(suffix) + (size_t)n * 6 + 1; /* \u00XX at worst per byte */
    char line_small[8192];
    outbuf o = {cap <= sizeof line_small ? line_small : malloc(cap), 0, cap};
    if (!o.p) {
        o.p = line_small;
        o.cap = sizeof line_small;
    }
    o.p[0] = 0;
    put(&o, prefix, strlen(prefix));
    escape_into(&o, text, (size_t)n);
    put(&o, suffix, strlen(suffix));
    fwrite(o.p, 1, o.len, stderr);
    fflush(stderr);
    if (o.p != line_small)
        free(o.p);
    if (text != small)
        free(text);
}

void cli_vsay(const char *fmt, va_list ap) { say("", "\n", fmt, ap); }

void cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("", "\n", fmt, ap);
    va_end(ap);
}

void cli_progress_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("\r", "\033[K", fmt, ap);
    va_end(ap);
}

void cli_progress_clear(void)
{
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* ---- format names ---- */

const char *cli_format_name(const char *name, int reader)
{
    const tc_format_info *f;
    for (size_t i = 0; name && (f = tc_format_at(i)); i++)
        if (!f->is_reader == !reader && !strcasecmp(f->name, name))
            return f->name;
    return NULL;
}

const char *cli_format_list(int reader)
{
    static char list[2][512];
    char *out = list[!!reader];
    if (!out[0]) {
        const tc_format_info *f;
        size_t len = 0;
        for (size_t i = 0; (f = tc_format_at(i)) && len < sizeof list[0]; i++)
            if (!f->is_reader == !reader)
                len += (size_t)snprintf(out + len, sizeof list[0] - len, "%s%s", len ? ", " : "", f->name);
    }
    return out;
}

/* ---- option errors ---- */

void cli_option_error(const char *prog, int ret, int before, char **argv)
{
    /* A long option is always its whole argument, and getopt has moved past it; a short one
     * may sit inside a cluster ("-qz"), where optind has not moved yet: optopt names it. */
    const char *arg = optind > before ? argv[optind - 1] : NULL;
    if (arg && arg[0] == '-' && arg[1] == '-') {
        size_t name = strcspn(arg, "=");
        if (ret == ':')
            cli_say("%s: option '%.*s' requires an argument", prog, (int)name, arg);
        else if (optopt) /* a known option given a value it does not take */
            cli_say("%s: option '%.*s' takes no value", prog, (int)name, arg);
        else
            cli_say("%s: unrecognized (or ambiguous) option '%s'", prog, arg);
    } else if (ret == ':') {
        cli_say("%s: option '-%c' requires an argument", prog, optopt);
    } else {
        cli_say("%s: invalid option '-%c'", prog, optopt);
    }
}
