/* cli_util.c - what the command's subcommands (conversions, diff, batch, serve) share. */
#include "cli_util.h"
#include "traceconv.h"
#include "../util/nearmiss.h" /* the library's edit distance, compiled in (CMakeLists.txt) */
#include "../util/utf8.h" /* the library's UTF-8 decoder, compiled in (CMakeLists.txt) */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Leading decimal digits of s into *v: the number of digits (0: none), or -1 past 2^64 - 1. */
static int digits(const char *s, uint64_t *v)
{
    int n = 0;
    *v = 0;
    for (; s[n] >= '0' && s[n] <= '9'; n++)
        if (__builtin_mul_overflow(*v, 10, v) || __builtin_add_overflow(*v, (uint64_t)(s[n] - '0'), v))
            return -1;
    return n;
}

int cli_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    int n = s ? digits(s, &v) : 0;
    if (n <= 0 || s[n] || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_count_option(const char *prog, const char *option, const char *value, uint64_t min, uint64_t max,
                     const char *what, uint64_t *out)
{
    if (cli_parse_count(value, min, max, out) == 0)
        return 0;
    cli_say("%s: %s %s: expected a whole number from %llu to %llu%s%s", prog, option, value, (unsigned long long)min,
            (unsigned long long)max, what ? " " : "", what ? what : "");
    return -1;
}

int cli_parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    int n = s ? digits(s, &v) : 0;
    if (n <= 0)
        return -1;
    const char *end = s + n;
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
    *out = v << shift;
    return 0;
}

/* ---- standard output, checked as it is closed ---- */

static const char *stdout_prog = "traceconv";
static int stdout_done;

/* Flush and close stdout once: 0, or -1 after the line saying why when say is set. */
static int close_stdout(int say)
{
    if (stdout_done)
        return 0;
    stdout_done = 1;
    /* A write that failed earlier (a --help longer than the buffer) left the error flag and,
     * as nothing since had a reason to fail, its errno; a failing flush says its own. */
    int err = errno, bad = 0;
    errno = 0;
    if (fflush(stdout) != 0) {
        bad = 1;
        err = errno;
    } else if (ferror(stdout)) {
        bad = 1;
    }
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad && say)
        cli_say("%s: standard output: %s", stdout_prog, strerror(err ? err : EIO));
    return bad ? -1 : 0;
}

static void stdout_at_exit(void)
{
    if (close_stdout(1) != 0)
        _exit(1); /* exit() called by the command: its status was for what it did, not for this */
}

void cli_stdout_checked(const char *prog)
{
    stdout_prog = prog;
    atexit(stdout_at_exit);
}

int cli_finish(int status)
{
    int bad = close_stdout(status == 0); /* a command that failed has said why, and keeps its status */
    return status == 0 && bad ? 1 : status;
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

void cli_not_converted_text(const tc_conv *c, char *out, size_t cap)
{
    tc_kind_count k[32];
    size_t n = tc_conv_not_converted(c, k, 32), o = 0;
    uint64_t named = 0, total = 0;
    tc_figure fig[64];
    size_t nf = tc_conv_figures(c, fig, 64);
    for (size_t i = 0; i < nf; i++)
        if (!strcmp(fig[i].name, "not-converted"))
            total = fig[i].value;
    out[0] = 0;
    for (size_t i = 0; i < n && i < 32 && o < cap; i++) {
        o += (size_t)snprintf(out + o, cap - o, "%s%s %llu", o ? ", " : "", k[i].kind, (unsigned long long)k[i].count);
        named += k[i].count;
    }
    if (total > named && o < cap)
        snprintf(out + o, cap - o, "%s%llu of other kinds", o ? ", " : "", (unsigned long long)(total - named));
}

/* ---- format names ----
 *
 * A format is named by its registry name or one of its aliases (the descriptors' aliases:
 * "svg" for the flame graph, "atrace" for the systrace reader), in any case. */

/* Whether name is one of the comma-separated names (any case). */
static int in_list(const char *name, const char *commas)
{
    size_t n = strlen(name);
    for (const char *a = commas; a && *a;) {
        size_t k = strcspn(a, ",");
        if (k == n && !strncasecmp(a, name, n))
            return 1;
        a += k + (a[k] == ',');
    }
    return 0;
}

const char *cli_format_name(const char *name, int reader)
{
    const tc_format_info *f;
    if (!name)
        return NULL;
    if (!reader) { /* a writer's or variant's name or alias: the variant's registry name */
        const tc_variant_info *v = tc_output_variant(NULL, name);
        return v ? v->name : NULL;
    }
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (f->is_reader && !strcasecmp(f->name, name))
            return f->name;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (f->is_reader && in_list(name, f->aliases))
            return f->name;
    return NULL;
}

const tc_format_info *cli_diff_format(const char *name)
{
    const tc_format_info *f;
    for (size_t i = 0; name && (f = tc_diff_format_at(i)); i++)
        if (!strcasecmp(f->name, name))
            return f;
    for (size_t i = 0; name && (f = tc_diff_format_at(i)); i++)
        if (in_list(name, tc_variant_at(f, 0)->aliases))
            return f;
    return NULL;
}

const char *cli_format_list(int reader)
{
    static char list[2][768];
    char *out = list[!!reader];
    if (!out[0]) {
        const tc_format_info *f;
        const tc_variant_info *v;
        size_t len = 0, cap = sizeof list[0];
        for (size_t i = 0; (f = tc_format_at(i)) && len < cap; i++) {
            if (!f->is_reader != !reader)
                continue;
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", f->name);
            for (size_t k = 1; !reader && (v = tc_variant_at(f, k)) && len < cap; k++) /* report-html, ... */
                len += (size_t)snprintf(out + len, cap - len, ", %s", v->name);
        }
        if (len < cap)
            snprintf(out + len, cap - len, "; other names: traceconv --list-formats");
    }
    return out;
}

int cli_add_formats(const char **list, const char *arg)
{
    static char joined[1024]; /* one command's -o lists: the program parses its options once */
    size_t have = *list ? strlen(*list) : 0;
    if (have + 1 + strlen(arg) >= sizeof joined)
        return -1;
    if (*list && *list != joined)
        memmove(joined, *list, have + 1);
    snprintf(joined + have, sizeof joined - have, "%s%s", have ? "," : "", arg);
    *list = joined;
    return 0;
}

/* ---- near misses: "did you mean" ---- */

void cli_suggest_begin(cli_suggestion *s, const char *typed)
{
    *s = (cli_suggestion){.typed = typed, .distance = SIZE_MAX};
}

/* A near miss is one or two edits away (one for a name of four letters or fewer, where two
 * would change half of it), or the start of a name (three letters at least, "speed"). The
 * closest wins; a tie between two targets is no suggestion (a guess either way). */
void cli_suggest_offer(cli_suggestion *s, const char *candidate, const char *target)
{
    size_t len = strlen(s->typed), limit = len <= 4 ? 1 : 2;
    size_t d = tci_edit_distance(s->typed, len, candidate, strlen(candidate), (uint32_t)limit);
    if (d > limit && len >= 3 && strlen(candidate) > len && !strncasecmp(candidate, s->typed, len))
        d = limit; /* a prefix: as far as the farthest near miss */
    if (d > limit || d == 0)
        return;
    if (d < s->distance) {
        s->distance = d;
        s->best = target;
        snprintf(s->said, sizeof s->said, "%s", candidate);
        s->tie = 0;
    } else if (d == s->distance && strcmp(s->best, target)) {
        s->tie = 1;
    }
}

const char *cli_suggest_result(const cli_suggestion *s) { return s->best && !s->tie ? s->said : NULL; }

/* Each name and alias of a comma-separated list, for target. */
static void offer_list(cli_suggestion *s, const char *commas, const char *target)
{
    char one[64];
    for (const char *a = commas; a && *a;) {
        size_t k = strcspn(a, ",");
        if (k < sizeof one) {
            memcpy(one, a, k);
            one[k] = 0;
            cli_suggest_offer(s, one, target);
        }
        a += k + (a[k] == ',');
    }
}

const char *cli_format_suggest(const char *typed, int kind)
{
    static cli_suggestion s; /* the answer is its text: the command asks once, on its way out */
    const tc_format_info *f;
    const tc_variant_info *v;
    cli_suggest_begin(&s, typed);
    for (size_t i = 0; kind != CLI_DIFF_FORMAT && (f = tc_format_at(i)); i++) {
        if (!f->is_reader != (kind == CLI_WRITER))
            continue;
        cli_suggest_offer(&s, f->name, f->name);
        offer_list(&s, f->aliases, f->name);
        for (size_t k = 0; kind == CLI_WRITER && (v = tc_variant_at(f, k)); k++) {
            cli_suggest_offer(&s, v->name, v->name);
            offer_list(&s, v->aliases, v->name);
        }
    }
    for (size_t i = 0; kind == CLI_DIFF_FORMAT && (f = tc_diff_format_at(i)); i++) {
        cli_suggest_offer(&s, f->name, f->name);
        offer_list(&s, tc_variant_at(f, 0)->aliases, f->name);
    }
    return cli_suggest_result(&s);
}

void cli_unknown_format(const char *prog, const char *typed, int kind)
{
    static const char *const what[] = {[CLI_WRITER] = "output", [CLI_READER] = "input", [CLI_DIFF_FORMAT] = "output"};
    const char *near = cli_format_suggest(typed, kind), *list = kind == CLI_DIFF_FORMAT ? NULL : cli_format_list(kind == CLI_READER);
    char mean[96] = "";
    if (near)
        snprintf(mean, sizeof mean, "; did you mean '%s'?", near);
    if (list)
        cli_say("%s: unknown %s format '%s'%s (%s: %s)", prog, what[kind], typed, mean,
                kind == CLI_READER ? "readers" : "writers", list);
    else
        cli_say("%s: unknown output format '%s'%s (%s)", prog, typed, mean, cli_diff_format_list());
}

const char *cli_diff_format_list(void)
{
    static char list[256];
    const tc_format_info *f;
    size_t len = 0, n = 0;
    if (list[0])
        return list;
    while (tc_diff_format_at(n))
        n++;
    for (size_t i = 0; (f = tc_diff_format_at(i)) && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                                f->name);
    return list;
}

/* ---- the library's options ---- */

/* The format handles whose tables a command takes, in order: readers, writers, diff formats. */
static size_t table_formats(int tables, const tc_format_info **out, size_t max)
{
    const tc_format_info *f;
    size_t n = 0;
    for (size_t i = 0; (f = tc_format_at(i)) && n < max; i++)
        if (tables & (f->is_reader ? CLI_READERS : CLI_WRITERS))
            out[n++] = f;
    for (size_t i = 0; (tables & CLI_DIFF) && (f = tc_diff_format_at(i)) && n < max; i++)
        out[n++] = f;
    return n;
}

static int has_key(const tc_option_info *const *keys, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i]->name, name))
            return 1;
    return 0;
}

size_t cli_option_keys(int tables, const tc_option_info **out, size_t max)
{
    const tc_format_info *formats[64];
    size_t n_formats = table_formats(tables, formats, 64), n = 0;
    const tc_option_info *o;
    for (size_t i = 0; (tables & CLI_CORE) && (o = tc_option_at(NULL, i)) && n < max; i++)
        out[n++] = o;
    for (size_t k = 0; k < n_formats; k++)
        for (size_t i = 0; (o = tc_option_at(formats[k], i)) && n < max; i++)
            if (!has_key(out, n, o->name))
                out[n++] = o;
    return n;
}

int cli_longopts(struct option *longopts, size_t *n, size_t max, const tc_option_info *const *keys, size_t n_keys,
                 int first_val)
{
    if (*n + n_keys + 1 > max)
        return -1;
    for (size_t i = 0; i < n_keys; i++)
        longopts[(*n)++] = (struct option){keys[i]->name, keys[i]->type == TC_OPT_BOOL ? no_argument : required_argument,
                                           NULL, first_val + (int)i};
    longopts[*n] = (struct option){0, 0, 0, 0};
    return 0;
}

enum { HELP_COLUMN = 29, HELP_WIDTH = 90 };

void cli_help_entry(FILE *fp, const char *left, const char *text, int column)
{
    int col = fprintf(fp, "%s", left);
    if (col >= column) {
        fputc('\n', fp);
        col = 0;
    }
    fprintf(fp, "%*s", column - col, "");
    col = column;
    for (const char *p = text; *p;) {
        int word = (int)strcspn(p, " ");
        if (col > column && col + 1 + word > HELP_WIDTH) {
            fprintf(fp, "\n%*s", column, "");
            col = column;
        } else if (col > column) {
            fputc(' ', fp);
            col++;
        }
        fwrite(p, 1, (size_t)word, fp);
        col += word;
        p += word;
        p += strspn(p, " ");
    }
    fputc('\n', fp);
}

/* "      --weight wall|cpu      weigh stacks by ... (default wall)" */
static void put_option(FILE *fp, const tc_option_info *o)
{
    char left[128], text[512];
    const char *q = o->type == TC_OPT_STRING ? "\"" : "";
    snprintf(left, sizeof left, "      --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    if (o->default_value)
        snprintf(text, sizeof text, "%s (default %s%s%s)", o->help, q, o->default_value, q);
    else
        snprintf(text, sizeof text, "%s", o->help);
    cli_help_entry(fp, left, text, HELP_COLUMN);
}

/* The rows of one table that are (limit 1) or are not (limit 0) limits, without the hidden ones. */
static void put_rows(FILE *fp, const tc_format_info *f, int limit, const tc_option_info *const *skip, size_t n_skip)
{
    const tc_option_info *o;
    for (size_t i = 0; (o = tc_option_at(f, i)); i++)
        if (!o->hidden && o->limit == limit && !has_key(skip, n_skip, o->name))
            put_option(fp, o);
}

void cli_print_options(FILE *fp, int tables)
{
    if (tables & CLI_CORE) {
        const tc_option_info *threads = NULL, *o;
        for (size_t i = 0; (tables & CLI_NO_THREADS) && (o = tc_option_at(NULL, i)); i++)
            if (!strcmp(o->name, "threads"))
                threads = o;
        fputs("Options of every conversion:\n", fp);
        put_rows(fp, NULL, 0, &threads, threads ? 1 : 0);
        fputs("Limits (an input beyond one is refused with a clear error; K/M/G suffixes):\n", fp);
        put_rows(fp, NULL, 1, NULL, 0);
    }
    const tc_format_info *formats[64];
    size_t n = table_formats(tables & (CLI_READERS | CLI_WRITERS), formats, 64);
    if (n)
        fputs("Options of one reader or writer (given with others, a warning: unused-option):\n", fp);
    for (size_t k = 0; k < n; k++) {
        if (!tc_option_at(formats[k], 0))
            continue;
        fprintf(fp, "  %s %s:\n", formats[k]->name, formats[k]->is_reader ? "reader" : "writer");
        put_rows(fp, formats[k], 0, NULL, 0);
    }
    const tc_option_info *seen[64];
    size_t n_seen = 0;
    n = table_formats(tables & CLI_DIFF, formats, 64);
    if (n)
        fputs("Options of the diff (for any -o):\n", fp);
    for (size_t k = 0; k < n; k++) { /* the formats share their rows: each once */
        put_rows(fp, formats[k], 0, seen, n_seen);
        const tc_option_info *o;
        for (size_t i = 0; (o = tc_option_at(formats[k], i)) && n_seen < 64; i++)
            if (!has_key(seen, n_seen, o->name))
                seen[n_seen++] = o;
    }
}

int cli_api_option(const char *key)
{
    const tc_option_info *keys[128];
    size_t n = cli_option_keys(CLI_WRITERS, keys, 128);
    if (has_key(keys, n, key))
        return 1;
    const tc_option_info *o;
    for (size_t i = 0; (o = tc_option_at(NULL, i)); i++)
        if (!strcmp(o->name, key)) /* threads: serve converts on one thread each (its workers are its parallelism) */
            return !o->open_time && !o->limit && !o->hidden && strcmp(key, "threads") != 0;
    return 0;
}

/* The query field (an option of serve's API) that s (after "--") starts with as a whole word,
 * or NULL: a limit the server sets (--max-output) is the server's flag, not a field. */
static const char *option_at(const char *s)
{
    const tc_option_info *keys[160];
    size_t n = cli_option_keys(CLI_CONVERT | CLI_DIFF, keys, 160), best = 0;
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(keys[i]->name);
        int c = (unsigned char)s[k];
        if (k > best && !strncmp(s, keys[i]->name, k) && !isalnum(c) && c != '-' && c != '_' &&
            cli_api_option(keys[i]->name)) {
            found = keys[i]->name; /* the longest: --ignore-idle, not --ignore */
            best = k;
        }
    }
    return found;
}

void cli_query_field_text(const char *msg, char *out, size_t cap)
{
    outbuf o = {out, 0, cap};
    out[0] = 0;
    for (const char *p = msg; *p;) {
        const char *key = p[0] == '-' && p[1] == '-' && (p == msg || !isalnum((unsigned char)p[-1])) ? option_at(p + 2)
                                                                                                        : NULL;
        const char *quoted = !key && !strncmp(p, "option '", 8) ? option_at(p + 8) : NULL;
        if (quoted && p[8 + strlen(quoted)] == '\'') { /* bad value 'x' for option 'since': for field since= */
            put(&o, "field ", 6);
            put(&o, quoted, strlen(quoted));
            put(&o, "=", 1);
            p += 8 + strlen(quoted) + 1;
            continue;
        }
        if (!key) {
            put(&o, p++, 1);
            continue;
        }
        put(&o, key, strlen(key));
        put(&o, "=", 1);
        p += 2 + strlen(key);
        if (p[0] == ' ' && (p[1] == '\'' || p[1] == '"' || (p[1] >= '0' && p[1] <= '9'))) /* thread='x', since=2.5 s */
            p++;
    }
}

/* ---- --list-formats --json ---- */

static void json_string(FILE *fp, const char *s)
{
    if (!s) {
        fputs("null", fp);
        return;
    }
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

/* ["a","b"] from "a,b". */
static void json_list(FILE *fp, const char *commas)
{
    fputc('[', fp);
    for (const char *e = commas; *e;) {
        size_t k = strcspn(e, ",");
        fprintf(fp, "%s\"%.*s\"", e == commas ? "" : ",", (int)k, e);
        e += k + (e[k] == ',');
    }
    fputc(']', fp);
}

static void json_options(FILE *fp, const tc_format_info *f)
{
    const tc_option_info *o;
    fputs("\"options\":[", fp);
    for (size_t i = 0; (o = tc_option_at(f, i)); i++) {
        fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", fp);
        json_string(fp, o->name);
        fputs(",\"type\":", fp);
        json_string(fp, o->type_name);
        fputs(",\"default\":", fp);
        json_string(fp, o->default_value);
        if (o->choices) {
            fputs(",\"choices\":[", fp);
            for (size_t k = 0; o->choices[k]; k++) {
                fputs(k ? "," : "", fp);
                json_string(fp, o->choices[k]);
            }
            fputc(']', fp);
        }
        if (o->max)
            fprintf(fp, ",\"min\":%llu,\"max\":%llu", (unsigned long long)o->min, (unsigned long long)o->max);
        fputs(",\"arg\":", fp);
        json_string(fp, o->arg);
        fputs(",\"help\":", fp);
        json_string(fp, o->help);
        const struct { int on; const char *name; } flags[] = {
            {o->open_time, "open_time"}, {o->limit, "limit"}, {o->repeatable, "repeatable"}, {o->hidden, "hidden"},
            {o->selection, "selection"}};
        for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
            if (flags[k].on)
                fprintf(fp, ",\"%s\":true", flags[k].name);
        fputc('}', fp);
    }
    fputc(']', fp);
}

static void json_variant(FILE *fp, const tc_variant_info *v)
{
    fputs("{\"name\":", fp);
    json_string(fp, v->name);
    fputs(",\"extension\":", fp);
    json_string(fp, v->extension);
    fputs(",\"mime\":", fp);
    json_string(fp, v->mime);
    fputs(",\"option\":", fp);
    json_string(fp, v->option);
    fputs(",\"aliases\":", fp);
    json_list(fp, v->aliases ? v->aliases : "");
    fprintf(fp, ",\"inline\":%s,\"binary\":%s}", v->inline_view ? "true" : "false", v->is_binary ? "true" : "false");
}

static void json_format(FILE *fp, const tc_format_info *f)
{
    fputs("{\"name\":", fp);
    json_string(fp, f->name);
    fputs(",\"description\":", fp);
    json_string(fp, f->description);
    fputs(",\"extensions\":", fp);
    json_list(fp, f->extensions);
    if (f->is_reader) {
        fputs(",\"aliases\":", fp);
        json_list(fp, f->aliases ? f->aliases : "");
    }
    const tc_variant_info *v = tc_variant_at(f, 0);
    if (v) {
        fputs(",\"mime\":", fp);
        json_string(fp, v->mime);
        fprintf(fp, ",\"binary\":%s,\"variants\":[", f->is_binary ? "true" : "false");
        for (size_t i = 0; (v = tc_variant_at(f, i)); i++) {
            fputs(i ? "," : "", fp);
            json_variant(fp, v);
        }
        fputc(']', fp);
    }
    fputc(',', fp);
    json_options(fp, f);
    fputc('}', fp);
}

void cli_formats_json(FILE *fp, const char *serve_member)
{
    const tc_format_info *f;
    fputs("{\"version\":", fp);
    json_string(fp, tc_version_string());
    for (int readers = 1; readers >= 0; readers--) {
        fprintf(fp, ",\n\"%s\":[", readers ? "readers" : "writers");
        int n = 0;
        for (size_t i = 0; (f = tc_format_at(i)); i++)
            if (f->is_reader == readers) {
                fputs(n++ ? ",\n" : "\n", fp);
                json_format(fp, f);
            }
        fputc(']', fp);
    }
    fputs(",\n\"diff\":[", fp);
    for (size_t i = 0; (f = tc_diff_format_at(i)); i++) {
        fputs(i ? ",\n" : "\n", fp);
        json_format(fp, f);
    }
    fputs("],\n", fp);
    json_options(fp, NULL);
    if (serve_member)
        fprintf(fp, ",\n\"serve\":%s", serve_member);
    fputs("}\n", fp);
}

/* ---- option errors ---- */

/* "; did you mean --colors?" for a long option near one of longopts, into out ("" if none). */
static void suggest_option(const char *arg, const struct option *longopts, char *out, size_t cap)
{
    char typed[64];
    size_t name = strcspn(arg + 2, "=");
    out[0] = 0;
    if (!longopts || name >= sizeof typed)
        return;
    memcpy(typed, arg + 2, name);
    typed[name] = 0;
    cli_suggestion s;
    cli_suggest_begin(&s, typed);
    for (const struct option *o = longopts; o->name; o++)
        cli_suggest_offer(&s, o->name, o->name);
    if (cli_suggest_result(&s))
        snprintf(out, cap, "; did you mean --%s?", cli_suggest_result(&s));
}

void cli_option_error(const char *prog, int ret, int before, char **argv, const struct option *longopts)
{
    /* A long option is always its whole argument, and getopt has moved past it; a short one
     * may sit inside a cluster ("-qz"), where optind has not moved yet: optopt names it. */
    const char *arg = optind > before ? argv[optind - 1] : NULL;
    if (arg && arg[0] == '-' && arg[1] == '-') {
        size_t name = strcspn(arg, "=");
        char mean[96];
        if (ret == ':') {
            cli_say("%s: option '%.*s' requires an argument", prog, (int)name, arg);
        } else if (optopt) { /* a known option given a value it does not take */
            cli_say("%s: option '%.*s' takes no value", prog, (int)name, arg);
        } else {
            suggest_option(arg, longopts, mean, sizeof mean);
            cli_say("%s: unrecognized (or ambiguous) option '%s'%s", prog, arg, mean);
        }
    } else if (ret == ':') {
        cli_say("%s: option '-%c' requires an argument", prog, optopt);
    } else {
        cli_say("%s: invalid option '-%c'", prog, optopt);
    }
}
