/*
 * options.c - every option of every format, parsed from its row.
 *
 * An option is a row of a table (tci_option_def): the core's table below holds what
 * every conversion reads (limits, strict, process-name, the selection, ...), each reader's
 * and writer's descriptor the options it reads (in its own file), diff.c the diff's. One
 * parser reads them all by type (bool, int, size, enum, string, path; a small hook for the
 * few with a form of their own), with one message for a bad value (saying what the option
 * takes). The command's long options, --help, serve's API and `--list-formats --json` are
 * made from the same rows (traceconv.h: tc_option_at).
 *
 * Which keys there are, the message for an unknown one and the unused-option warning (a
 * key that some format lists but no chosen reader or writer reads) need every format's
 * table: they are the engine's (engine/registry.c), which hands each row to this file. */
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

const char *const tci_weight_choices[] = {"wall", "cpu", NULL};
const char *const tci_sort_choices[] = {[TCI_SORT_INCL] = "incl", [TCI_SORT_EXCL] = "excl",
                                        [TCI_SORT_CALLS] = "calls", [TCI_SORT_NAME] = "name", NULL};

/* ---- the forms of the values ---- */

int tci_option_parse_bool(const char *v, bool *out)
{
    if (!v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
        *out = true;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
        *out = false;
    else
        return -1;
    return 0;
}

/* A positive count, with an optional K, M or G suffix (powers of 1024). */
static int parse_size(const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!v || *v < '0' || *v > '9')
        return -1;
    unsigned long long x = strtoull(v, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    else if (*end == 'M' || *end == 'm') shift = 20;
    else if (*end == 'G' || *end == 'g') shift = 30;
    if (shift)
        end++;
    if (*end || errno || x == 0 || x > (max >> shift))
        return -1;
    *out = (uint64_t)x << shift;
    return 0;
}

/* max-output: a size (K/M/G), or "Nx": N times the input's size (after gzip is inflated). */
static int parse_max_output(tci_options *o, const char *v)
{
    size_t n = v ? strlen(v) : 0;
    if (n > 1 && n < 12 && (v[n - 1] == 'x' || v[n - 1] == 'X')) {
        char digits[12];
        uint64_t ratio;
        memcpy(digits, v, n - 1);
        digits[n - 1] = 0;
        if (parse_size(digits, 1000000, &ratio) || strpbrk(digits, "KkMmGg"))
            return -1;
        o->max_output = 0;
        o->max_output_ratio = (uint32_t)ratio;
        return 0;
    }
    if (parse_size(v, UINT64_MAX, &o->max_output))
        return -1;
    o->max_output_ratio = 0;
    return 0;
}

/* A time after the trace's start, exactly in ns: a decimal number and its unit, s, ms, us or
 * ns ("1.5s", "250ms", "40us"; "0" alone needs none). No rounding: a fraction finer than
 * 1 ns is refused, so that adjacent windows meet at exactly the same nanosecond. */
static int parse_duration(const char *v, int64_t *out)
{
    static const struct { const char *unit; int64_t ns; int places; } units[] = {
        {"s", 1000000000, 9}, {"ms", 1000000, 6}, {"us", 1000, 3}, {"ns", 1, 0}};
    uint64_t whole = 0, frac = 0;
    int digits = 0, places = -1;
    if (!v)
        return -1;
    for (; *v >= '0' && *v <= '9'; v++, digits++)
        if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, (uint64_t)(*v - '0'), &whole))
            return -1;
    if (*v == '.')
        for (v++, places = 0; *v >= '0' && *v <= '9'; v++, places++, digits++)
            if (places > 9 || __builtin_mul_overflow(frac, 10, &frac) || __builtin_add_overflow(frac, (uint64_t)(*v - '0'), &frac))
                return -1;
    if (!digits)
        return -1;
    if (!*v && whole == 0 && frac == 0) {
        *out = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(v, units[i].unit))
            continue;
        if (places > units[i].places)
            return -1;
        for (int p = places < 0 ? 0 : places; p < units[i].places; p++)
            frac *= 10;
        uint64_t ns;
        if (__builtin_mul_overflow(whole, (uint64_t)units[i].ns, &ns) || __builtin_add_overflow(ns, frac, &ns) ||
            ns > (uint64_t)INT64_MAX / 2)
            return -1;
        *out = (int64_t)ns;
        return 0;
    }
    return -1;
}

int tci_parse_duration(const char *v, int64_t *out) { return parse_duration(v, out); }

void tci_duration_text(int64_t ns, char *out, size_t len)
{
    static const struct { const char *unit; int64_t ns; int places; } units[] = {
        {"s", 1000000000, 9}, {"ms", 1000000, 6}, {"us", 1000, 3}};
    uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    const char *sign = ns < 0 ? "-" : "";
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        uint64_t unit = (uint64_t)units[i].ns;
        if (v < unit)
            continue; /* "250ms", not "0.25s" */
        char frac[16];
        int places = units[i].places;
        snprintf(frac, sizeof frac, "%0*llu", places, (unsigned long long)(v % unit));
        while (places > 0 && frac[places - 1] == '0') /* exact and shortest: 1.200000000 -> 1.2 */
            frac[--places] = 0;
        snprintf(out, len, "%s%llu%s%s%s", sign, (unsigned long long)(v / unit), places ? "." : "", frac,
                 units[i].unit);
        return;
    }
    snprintf(out, len, v ? "%s%lluns" : "0", sign, (unsigned long long)v);
}

static int parse_since(tci_options *o, const char *v)
{
    if (parse_duration(v, &o->since_ns))
        return -1;
    o->since_given = true;
    return 0;
}

static int parse_until(tci_options *o, const char *v)
{
    if (parse_duration(v, &o->until_ns))
        return -1;
    o->until_given = true;
    return 0;
}

#define TCI_DURATION_EXPECTS "a time after the trace's start with its unit: 1.5s, 250ms, 40us, 1000ns"

/* ---- the core's options ---- */

const tci_option_def tci_core_options[] = {
    {.key = "process-name", .type = TCI_OPT_STRING, .arg = "NAME",
     .help = "process name shown in timelines (default: the input file's stem)", TCI_OPT_FIELD(process_name)},
    {.key = "strict", .type = TCI_OPT_BOOL,
     .help = "treat warnings about the input, and options the chosen reader or writer does not use, as errors",
     TCI_OPT_FIELD(strict)},
    {.key = "max-depth", .type = TCI_OPT_INT, .min = 1, .max = 1000000, .def = "10000", .arg = "N",
     .help = "drop frames deeper than N", TCI_OPT_FIELD(max_depth)},
    {.key = "thread", .type = TCI_OPT_STRING, .flags = TCI_OPTF_REPEATABLE | TCI_OPTF_NEEDS_VALUE | TCI_OPTF_SELECTION,
     .arg = "SPEC",
     .help = "keep only the threads named SPEC (a glob), with tid SPEC, or the main thread (main); repeatable",
     .expects = "a thread name (glob), a tid or main", TCI_OPT_FIELD(thread)},
    {.key = "since", .type = TCI_OPT_DURATION, .flags = TCI_OPTF_SELECTION, .arg = "TIME",
     .help = "keep the timeline from TIME after the trace's start (frames open then are clipped, not dropped)",
     .expects = TCI_DURATION_EXPECTS, TCI_OPT_FIELD(since_ns), .parse = parse_since},
    {.key = "until", .type = TCI_OPT_DURATION, .flags = TCI_OPTF_SELECTION, .arg = "TIME",
     .help = "keep the timeline before TIME after the trace's start (frames open then end there)",
     .expects = TCI_DURATION_EXPECTS, TCI_OPT_FIELD(until_ns), .parse = parse_until},
    {.key = "focus", .type = TCI_OPT_STRING, .flags = TCI_OPTF_REPEATABLE | TCI_OPTF_NEEDS_VALUE | TCI_OPTF_SELECTION,
     .arg = "METHOD",
     .help = "keep only the call paths through METHOD (onCreate, Object.wait, or a glob on pkg.Class.method), "
             "from its outermost frame; repeatable",
     .expects = "a method's name, Class.method or a glob on pkg.Class.method", TCI_OPT_FIELD(focus)},
    {.key = "ignore", .type = TCI_OPT_STRING, .flags = TCI_OPTF_REPEATABLE | TCI_OPTF_NEEDS_VALUE | TCI_OPTF_SELECTION,
     .arg = "METHOD",
     .help = "leave out the call paths through METHOD (as --focus names it) and their time; repeatable",
     .expects = "a method's name, Class.method or a glob on pkg.Class.method", TCI_OPT_FIELD(ignore)},
    {.key = "ignore-idle", .type = TCI_OPT_BOOL, .flags = TCI_OPTF_SELECTION,
     .help = "leave out the idle waits of Android and Java (MessageQueue.nativePollOnce, Object.wait, park, "
             "BlockingQueue.take, ...: doc/cli.md, Selection)",
     TCI_OPT_FIELD(ignore_idle)},
    {.key = "deobfuscate", .type = TCI_OPT_PATH, .flags = TCI_OPTF_OPEN | TCI_OPTF_NEEDS_VALUE, .arg = "MAPPING",
     .help = "rename methods back to source names with a ProGuard/R8 mapping.txt (any reader; "
             "doc/deobfuscation.md)",
     .expects = "the path of a mapping.txt", TCI_OPT_FIELD(deobfuscate)},
    {.key = "max-input", .type = TCI_OPT_SIZE, .flags = TCI_OPTF_OPEN | TCI_OPTF_LIMIT, .def = "64G", .arg = "BYTES",
     .help = "input size after decompression; gzip expanding more than 200:1 beyond 256M is refused",
     TCI_OPT_FIELD(max_input)},
    {.key = "max-string", .type = TCI_OPT_SIZE, .flags = TCI_OPTF_OPEN | TCI_OPTF_LIMIT, .def = "64K",
     .arg = "BYTES", .help = "one name or metadata value", TCI_OPT_FIELD(max_string)},
    {.key = "max-threads", .type = TCI_OPT_INT, .flags = TCI_OPTF_OPEN | TCI_OPTF_LIMIT, .def = "1000000",
     .arg = "N", .help = "threads", TCI_OPT_FIELD(max_threads)},
    {.key = "max-methods", .type = TCI_OPT_INT, .flags = TCI_OPTF_OPEN | TCI_OPTF_LIMIT, .def = "50000000",
     .arg = "N", .help = "methods", TCI_OPT_FIELD(max_methods)},
    {.key = "max-events", .type = TCI_OPT_INT, .flags = TCI_OPTF_OPEN | TCI_OPTF_LIMIT, .arg = "N",
     .help = "input records (default: no limit)", TCI_OPT_FIELD(max_events)},
    {.key = "max-json", .type = TCI_OPT_SIZE, .flags = TCI_OPTF_OPEN | TCI_OPTF_LIMIT, .def = "256M",
     .arg = "BYTES", .help = "one JSON event", TCI_OPT_FIELD(max_json)},
    {.key = "max-output", .type = TCI_OPT_SIZE, .flags = TCI_OPTF_LIMIT, .arg = "BYTES|Nx",
     .help = "each output at most BYTES, or N times the input's size (at least 4M); larger fails, nothing left "
             "(default: none)",
     .expects = "bytes from 1 to 18446744073709551615, K/M/G suffixes allowed, or N times the input's size "
                "(Nx, N from 1 to 1000000)",
     TCI_OPT_FIELD(max_output),
     .parse = parse_max_output},
    {.key = "read-chunk", .type = TCI_OPT_SIZE, .flags = TCI_OPTF_OPEN | TCI_OPTF_HIDDEN, .min = 1, .max = 1 << 24,
     .arg = "BYTES", .help = "bytes per read when spooling a stream (for tests)", TCI_OPT_FIELD(read_chunk)},
    {.key = "threads", .type = TCI_OPT_INT, .min = 1, .max = 256, .arg = "N",
     .help = "threads for one conversion, the same output: 2 or more read on one and write on another "
             "(the library's default: 1; the command's: -j)",
     TCI_OPT_FIELD(threads)},
    {0},
};

/* ---- parsing ---- */

static void *field(tci_options *o, const tci_option_def *d) { return (char *)o + d->offset; }

static void store_uint(void *p, size_t size, uint64_t v)
{
    if (size == 1) {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
    } else if (size == 4) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

/* The largest value the field holds (int, size). */
static uint64_t field_max(const tci_option_def *d) { return d->size >= 8 ? UINT64_MAX : (1ull << (8 * d->size)) - 1; }

static int choice_index(const tci_option_def *d, const char *v)
{
    for (int i = 0; v && d->choices[i]; i++)
        if (!strcmp(v, d->choices[i]))
            return i;
    return -1;
}

/* A size as the options take it: "16M" when it is a whole number of K/M/G, else its bytes
 * ("1000"); approximate: "3.1G" rather than every byte, and "1000 bytes" below 1K. */
void tci_size_text(uint64_t n, bool approximate, char *out, size_t len)
{
    static const char units[] = "KMG";
    for (int k = 2; k >= 0; k--) {
        uint64_t unit = (uint64_t)1 << (10 * (k + 1));
        if (n >= unit && n % unit == 0) {
            snprintf(out, len, "%llu%c", (unsigned long long)(n / unit), units[k]);
            return;
        }
    }
    for (int k = 2; approximate && k >= 0; k--) {
        uint64_t unit = (uint64_t)1 << (10 * (k + 1));
        if (n >= unit) {
            snprintf(out, len, "%.1f%c", (double)n / (double)unit, units[k]);
            return;
        }
    }
    snprintf(out, len, "%llu%s", (unsigned long long)n, approximate ? " bytes" : "");
}

/* What an option takes, for the message that refuses a bad value. */
void tci_option_expects(const tci_option_def *d, char *out, size_t len)
{
    char lo[24], hi[24];
    size_t n = 0;
    if (d->expects) {
        snprintf(out, len, "%s", d->expects);
    } else if (d->type == TCI_OPT_BOOL) {
        snprintf(out, len, "one of: 1, 0, true, false, yes, no");
    } else if (d->type == TCI_OPT_ENUM) {
        n = (size_t)snprintf(out, len, "one of: ");
        for (size_t i = 0; d->choices[i] && n < len; i++)
            n += (size_t)snprintf(out + n, len - n, "%s%s", i ? ", " : "", d->choices[i]);
    } else if ((d->type == TCI_OPT_INT || d->type == TCI_OPT_SIZE) && d->max) {
        tci_size_text(d->min, false, lo, sizeof lo);
        tci_size_text(d->max, false, hi, sizeof hi);
        if (d->type == TCI_OPT_INT)
            snprintf(out, len, "a count from %llu to %llu", (unsigned long long)d->min, (unsigned long long)d->max);
        else
            snprintf(out, len, "bytes, %s to %s", lo, hi);
    } else if (d->type == TCI_OPT_INT || d->type == TCI_OPT_SIZE) { /* the field's own range */
        snprintf(out, len, "%s from 1 to %llu, K/M/G suffixes allowed", d->type == TCI_OPT_INT ? "a count" : "bytes",
                 (unsigned long long)field_max(d));
    } else {
        snprintf(out, len, "see the option's documentation");
    }
}

/* A string option's value: a copy kept in strings[index] (NULL: unset). 0, -1 bad, or TC_ERR_NOMEM. */
static int store_string(tci_options *o, char **strings, int index, const tci_option_def *d, const char *v)
{
    if (!v && (d->flags & TCI_OPTF_NEEDS_VALUE))
        return -1;
    if (v && (d->flags & TCI_OPTF_REPEATABLE) && (!*v || strchr(v, '\n')))
        return -1; /* an empty spec would match nothing, or everything; '\n' separates the values */
    char *copy = NULL;
    if (v && (d->flags & TCI_OPTF_REPEATABLE) && strings[index]) { /* one more value: after the others */
        size_t have = strlen(strings[index]), add = strlen(v);
        if ((copy = malloc(have + add + 2)) != NULL) {
            memcpy(copy, strings[index], have);
            copy[have] = '\n';
            memcpy(copy + have + 1, v, add + 1);
        }
    } else if (v) {
        copy = strdup(v);
    }
    if (v && !copy)
        return TC_ERR_NOMEM;
    free(strings[index]);
    strings[index] = copy;
    *(const char **)field(o, d) = copy;
    return 0;
}

/* Parse and store by the row: 0, -1 for a bad value, or TC_ERR_NOMEM. */
int tci_option_parse_row(tci_options *o, char **strings, int index, const tci_option_def *d, const char *v)
{
    uint64_t n;
    bool on;
    if (d->parse)
        return d->parse(o, v);
    switch (d->type) {
    case TCI_OPT_BOOL:
        if (tci_option_parse_bool(v, &on))
            return -1;
        *(bool *)field(o, d) = on;
        return 0;
    case TCI_OPT_INT:
    case TCI_OPT_SIZE:
        if (parse_size(v, d->max ? d->max : field_max(d), &n) || n < d->min)
            return -1;
        store_uint(field(o, d), d->size, n);
        return 0;
    case TCI_OPT_ENUM:
        if (choice_index(d, v) < 0)
            return -1;
        store_uint(field(o, d), d->size, (uint64_t)choice_index(d, v));
        return 0;
    case TCI_OPT_STRING:
    case TCI_OPT_PATH:
        return store_string(o, strings, index, d, v);
    default:
        return -1; /* a float or duration row without its hook: a unit test fails */
    }
}

void tci_option_strings_free(char **strings)
{
    for (size_t i = 0; i < TCI_MAX_OPTION_KEYS; i++) {
        free(strings[i]);
        strings[i] = NULL;
    }
}

/* ---- the selection, written down ---- */

/* One value of a selection row as the option takes it ("main", "1.2s", "cpu"); NULL: a bool
 * that is on (its name alone says it) or off (nothing). */
static const char *value_text(const tci_options *o, const tci_option_def *d, char *buf, size_t len, bool *shown)
{
    const void *p = (const char *)o + d->offset;
    uint64_t v = 0;
    *shown = true;
    switch (d->type) {
    case TCI_OPT_BOOL:
        *shown = *(const bool *)p;
        return NULL;
    case TCI_OPT_DURATION:
        tci_duration_text(*(const int64_t *)p, buf, len);
        return buf;
    case TCI_OPT_ENUM:
    case TCI_OPT_INT:
    case TCI_OPT_SIZE:
        memcpy(&v, p, d->size < sizeof v ? d->size : sizeof v); /* little-endian: the low bytes */
        if (d->type == TCI_OPT_ENUM) {
            size_t n = 0;
            while (d->choices[n])
                n++;
            return v < n ? d->choices[v] : "?";
        }
        snprintf(buf, len, "%llu", (unsigned long long)v);
        return buf;
    case TCI_OPT_STRING:
    case TCI_OPT_PATH:
        *shown = *(const char *const *)p != NULL;
        return *(const char *const *)p;
    default: /* a float: its own parse hook knows its form; none is a selection row */
        *shown = false;
        return NULL;
    }
}

/* "key value" (each value of a repeatable row: "thread a, thread b"), after ", " unless first. */
static size_t put_selection_row(const tci_options *o, const tci_option_def *d, char *out, size_t len, size_t n)
{
    char buf[64];
    bool shown;
    const char *v = value_text(o, d, buf, sizeof buf, &shown);
    if (!shown || (v && d->def && !strcmp(v, d->def))) /* --weight wall: the same output as without it */
        return n;
    if (!v || !(d->flags & TCI_OPTF_REPEATABLE)) {
        if (n < len)
            n += (size_t)snprintf(out + n, len - n, "%s%s%s%s", n ? ", " : "", d->key, v ? " " : "", v ? v : "");
        return n;
    }
    for (const char *p = v; n < len;) { /* '\n' joins the values given */
        size_t k = strcspn(p, "\n");
        n += (size_t)snprintf(out + n, len - n, "%s%s %.*s", n ? ", " : "", d->key, (int)k, p);
        if (!p[k])
            break;
        p += k + 1;
    }
    return n;
}

/* Whether table has a row for key. */
static bool lists(const tci_option_def *table, const char *key)
{
    for (const tci_option_def *d = table; d && d->key; d++)
        if (!strcmp(d->key, key))
            return true;
    return false;
}

/* all: every selection row given, else the core's and those reads lists. */
static size_t selection_text(const tci_options *o, const tci_option_def *reads, bool all, char *out, size_t len)
{
    size_t n = 0;
    if (!len)
        return 0;
    out[0] = 0;
    for (size_t k = 0; o->keys && o->keys[k]; k++) { /* the tables' order, not the order given: one selection, one text */
        const tci_option_def *d = o->keys[k];
        bool given = false;
        for (size_t i = 0; i < o->n_given && !given; i++)
            given = o->given[i] == k;
        if (given && (d->flags & TCI_OPTF_SELECTION) && (all || lists(tci_core_options, d->key) || lists(reads, d->key)))
            n = put_selection_row(o, d, out, len, n);
    }
    if (n >= len) { /* cut: said so, on a whole UTF-8 character */
        n = len - 1;
        if (len > 4) {
            n = len - 4;
            while (n && ((unsigned char)out[n] & 0xC0) == 0x80)
                n--;
            memcpy(out + n, "...", 4);
            n += 3;
        }
        out[n] = 0;
    }
    return n;
}

size_t tci_selection_text(const tci_options *o, const tci_option_def *reads, char *out, size_t len)
{
    return selection_text(o, reads, false, out, len);
}

size_t tci_selection_text_all(const tci_options *o, char *out, size_t len) { return selection_text(o, NULL, true, out, len); }

void tci_selection_window(const tci_trace *t, const tci_options *o, int64_t *from, int64_t *to)
{
    *from = t->start_ns;
    *to = t->end_ns;
    if (o->since_given && t->start_ns + o->since_ns > *from)
        *from = t->start_ns + o->since_ns;
    if (o->until_given && t->start_ns + o->until_ns < *to)
        *to = t->start_ns + o->until_ns;
    if (*to < *from)
        *to = *from;
}

uint32_t tci_selection_threads(const tci_trace *t)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->n_threads; i++)
        n += t->threads[i].records > 0;
    return n;
}
