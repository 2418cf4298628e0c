/* option_tables.c - the formats' tables through the public iterators (tc_option_at,
 * tc_variant_at, tc_output_variant) and what tc_conv_set_option does with each row: every
 * option accepted with a valid value of its type (every choice of an enum), refused with a
 * bad one saying what it takes, open-time ones refused after an open; an unknown key's
 * message lists the keys. And the rules the tables themselves must keep, which no other
 * program would notice broken: one meaning per key, every variant selected by a bool option
 * of its own writer, distinct extensions, the palettes the flame graph engine knows, a
 * parse hook for every row whose type has no generic parser, room for every key. */
#include "tc_diff.h"
#include "tc_flame.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_engine.h"
#include "tc_writer.h"
#include "unit.h"

#include <stdlib.h>
#include <strings.h>

static const char ir_trace[] =
    "traceconv-ir 1\n"
    "trace clock=wall has_wall=1 has_cpu=0 pid=5 start_ns=0\n"
    "process \"p\"\n"
    "thread 0 tid=5 records=0 name=\"main\"\n"
    "method 0 id=0 name=\"main\"\n"
    "stack 0 parent=- m=0\n"
    "P t=0 m=- ts=1000 id=0 value=5000\n";

/* Every format handle: the readers and writers, then the diff's formats; NULL-ended. */
static size_t every_format(const tc_format_info **out, size_t max)
{
    const tc_format_info *f;
    size_t n = 0;
    for (size_t i = 0; (f = tc_format_at(i)) && n + 1 < max; i++)
        out[n++] = f;
    for (size_t i = 0; (f = tc_diff_format_at(i)) && n + 1 < max; i++)
        out[n++] = f;
    out[n] = NULL;
    return n;
}

static size_t count_options(const tc_format_info *f)
{
    size_t n = 0;
    while (tc_option_at(f, n))
        n++;
    return n;
}

static size_t count_rows(const tci_option_def *rows)
{
    size_t n = 0;
    while (rows && rows[n].key)
        n++;
    return n;
}

static void test_iterators(void)
{
    CHECK(tc_option_at(NULL, 0) != NULL);
    CHECK_EQ_INT(count_options(NULL), count_rows(tci_core_options));
    for (size_t i = 0; tc_option_at(NULL, i); i++)
        CHECK_EQ_STR(tc_option_at(NULL, i)->name, tci_core_options[i].key);
    size_t readers = 0, writers = 0;
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++) {
        if (f->is_reader) {
            const tci_reader *r = tci_find_reader(f->name);
            CHECK(r && r == tci_reader_at(readers++));
            CHECK_EQ_INT(count_options(f), count_rows(r ? r->options : NULL));
            CHECK(tc_variant_at(f, 0) == NULL); /* a reader makes no output */
        } else {
            const tci_writer *w = tci_writer_at(writers++);
            CHECK(w && !strcmp(w->name, f->name));
            CHECK_EQ_INT(count_options(f), count_rows(w ? w->options : NULL));
            for (size_t k = 0; w && tc_option_at(f, k); k++)
                CHECK_EQ_STR(tc_option_at(f, k)->name, w->options[k].key);
            const tc_variant_info *v0 = tc_variant_at(f, 0);
            CHECK(v0 && !strcmp(v0->name, f->name) && !strcmp(v0->format, f->name) && !v0->option);
            CHECK(v0 && v0->is_binary == f->is_binary);
        }
    }
    CHECK_EQ_INT(readers, tci_reader_count());
    CHECK_EQ_INT(writers, tci_writer_count());
    size_t diffs = 0;
    for (; (f = tc_diff_format_at(diffs)); diffs++) {
        CHECK(!f->is_reader && tci_find_diff_format(f->name) == tci_diff_format_at(diffs));
        CHECK_EQ_INT(count_options(f), count_rows(tci_diff_options));
        CHECK(tc_variant_at(f, 0) && !tc_variant_at(f, 1));
    }
    CHECK_EQ_INT(diffs, tci_diff_format_count());
    CHECK(tc_format_at(readers + writers) == NULL); /* the diff's formats are not tc_format_at's */
    tc_format_info fake = *tc_format_at(0);
    CHECK(tc_option_at(&fake, 0) == NULL && tc_variant_at(&fake, 0) == NULL); /* only the table's handles */
    CHECK(tc_option_at(NULL, count_options(NULL)) == NULL);
}

static void test_output_variants(void)
{
    const tc_variant_info *v = tc_output_variant(NULL, "REPORT-HTML");
    CHECK(v && !strcmp(v->name, "report-html") && !strcmp(v->format, "report") && !strcmp(v->option, "html"));
    CHECK(v && v->inline_view && !strcmp(v->extension, "report.html"));
    CHECK_EQ_STR(tc_output_variant(NULL, "report")->name, "report");
    CHECK(tc_output_variant(NULL, "nosuch") == NULL && tc_output_variant(NULL, NULL) == NULL);
    CHECK(tc_output_variant(NULL, "table") == NULL); /* a diff format's alias is not a writer's */
    /* the names people type (the variants' aliases), in any case: the variant they mean */
    CHECK_EQ_STR(tc_output_variant(NULL, "SVG")->name, "flamegraph");
    CHECK_EQ_STR(tc_output_variant(NULL, "html")->name, "report-html");
    CHECK_EQ_STR(tc_output_variant(NULL, "csv")->name, "report-csv");
    CHECK_EQ_STR(tc_output_variant(NULL, "chrome")->name, "json");
    CHECK_EQ_STR(tc_output_variant(NULL, "atrace")->name, "systrace-text");
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "html", "1"), TC_OK);
    CHECK_EQ_STR(tc_output_variant(c, "report")->name, "report-html");
    CHECK_EQ_STR(tc_output_variant(c, "report-csv")->name, "report-csv"); /* a variant's name is itself */
    CHECK_EQ_STR(tc_output_variant(c, "systrace")->name, "systrace");
    CHECK_EQ_INT(tc_conv_set_option(c, "html", "no"), TC_OK);
    CHECK_EQ_STR(tc_output_variant(c, "report")->name, "report");
    CHECK_EQ_INT(tc_conv_set_option(c, "text", "yes"), TC_OK);
    CHECK_EQ_STR(tc_output_variant(c, "systrace")->name, "systrace-text");
    tc_conv_free(c);
    CHECK_EQ_STR(tc_writer_extension("report-html"), "report.html");
    CHECK_EQ_STR(tc_writer_extension("systrace-text"), "systrace.txt");
}

/* Every writer's variants: the first its own, the others selected by a bool option of its own
 * table; extensions distinct among all of them (so one input's outputs never share a name),
 * the first its first listed extension (tc_writer_extension's, as before the variants). */
static void test_variant_rules(void)
{
    const char *exts[64];
    size_t n_exts = 0;
    for (size_t i = 0; i < tci_writer_count(); i++) {
        const tci_writer *w = tci_writer_at(i);
        CHECK(w->variants && w->variants[0].name && !strcmp(w->variants[0].name, w->name) && !w->variants[0].option);
        size_t first = strcspn(w->extensions, ",");
        CHECK(strlen(w->variants[0].extension) == first && !strncmp(w->variants[0].extension, w->extensions, first));
        for (int k = 0; w->variants[k].name; k++) {
            const tci_variant *v = &w->variants[k];
            CHECK(v->extension && v->mime);
            if (k > 0) {
                const tci_option_def *d = NULL;
                for (const tci_option_def *o = w->options; o && o->key; o++)
                    if (v->option && !strcmp(o->key, v->option))
                        d = o;
                CHECK(d && d->type == TCI_OPT_BOOL); /* its writer's own flag */
            }
            for (size_t e = 0; e < n_exts; e++)
                CHECK(strcmp(exts[e], v->extension) != 0);
            if (n_exts < 64)
                exts[n_exts++] = v->extension;
        }
    }
}

/* One meaning per key, room for every key, and a parser for every row. */
static void test_row_rules(void)
{
    CHECK(tci_option_key_count() <= TCI_MAX_OPTION_KEYS);
    const tc_format_info *formats[64];
    every_format(formats, 64);
    for (size_t k = 0; k == 0 || formats[k - 1]; k++) {
        const tc_format_info *f = k == 0 ? NULL : formats[k - 1];
        const tc_option_info *o;
        for (size_t i = 0; (o = tc_option_at(f, i)); i++) {
            const tci_option_def *d = tci_option_find(o->name);
            CHECK(d != NULL);
            if (!d)
                continue;
            CHECK_EQ_INT(o->type, d->type);
            CHECK(o->choices == d->choices || (o->choices && d->choices && !strcmp(o->choices[0], d->choices[0])));
            CHECK(o->min == d->min && o->max == d->max);
            CHECK_EQ_INT(o->open_time, (d->flags & TCI_OPTF_OPEN) != 0);
            CHECK_EQ_INT(o->limit, (d->flags & TCI_OPTF_LIMIT) != 0);
            if (d->type == TCI_OPT_FLOAT || d->type == TCI_OPT_DURATION)
                CHECK(d->parse != NULL); /* no generic parser for these types */
            CHECK(strcmp(o->type_name, "") != 0 && o->help && o->help[0]);
        }
    }
    for (const tci_option_def *d = tci_core_options; d->key; d++) /* the core's are the first rows of their keys */
        CHECK(tci_option_find(d->key) == d);
}

/* The palettes --colors lists are the flame graph engine's, every one of them. */
static void test_palettes(void)
{
    size_t n = 0;
    for (; tci_palette_choices[n]; n++)
        CHECK(tci_flame_palette(tci_palette_choices[n]) >= 0);
    CHECK_EQ_INT(n, TCI_PAL_ANDROID + 1);
    CHECK_EQ_INT(tci_flame_palette(tci_palette_choices[0]), TCI_PAL_ANDROID); /* listed first: the default */
}

/* A valid value of the row's type, from the row alone. */
static const char *valid_value(const tc_option_info *o, char *buf, size_t len)
{
    switch (o->type) {
    case TC_OPT_BOOL: return "yes";
    case TC_OPT_ENUM: return o->choices[0];
    case TC_OPT_INT:
    case TC_OPT_SIZE: snprintf(buf, len, "%llu", (unsigned long long)(o->max ? o->max : 4096)); return buf;
    case TC_OPT_FLOAT: return "0.5";
    case TC_OPT_DURATION: return "1.5ms";
    case TC_OPT_PATH: return "/nonexistent/file";
    default: return "text";
    }
}

static void check_row(const tc_option_info *o)
{
    char buf[64], msg[512];
    tc_conv *c = tc_conv_new();
    const char *v = valid_value(o, buf, sizeof buf);
    int rc = tc_conv_set_option(c, o->name, v);
    if (rc != TC_OK)
        fprintf(stderr, "  --%s %s: %s\n", o->name, v, tc_conv_error(c));
    CHECK_EQ_INT(rc, TC_OK);
    for (size_t i = 0; o->choices && o->choices[i]; i++)
        CHECK_EQ_INT(tc_conv_set_option(c, o->name, o->choices[i]), TC_OK);
    const char *bad = o->type == TC_OPT_BOOL ? "maybe" : o->type == TC_OPT_ENUM ? "nosuch" : "x1";
    if (o->type != TC_OPT_STRING && o->type != TC_OPT_PATH) {
        CHECK_EQ_INT(tc_conv_set_option(c, o->name, bad), TC_ERR_USAGE);
        snprintf(msg, sizeof msg, "bad value '%s' for option '%s' (", bad, o->name);
        CHECK(strstr(tc_conv_error(c), msg) != NULL);
        if (o->type == TC_OPT_BOOL)
            CHECK(strstr(tc_conv_error(c), "(one of: 1, 0, true, false, yes, no)") != NULL);
        if (o->type == TC_OPT_ENUM) {
            size_t n = (size_t)snprintf(msg, sizeof msg, "(one of: ");
            for (size_t i = 0; o->choices[i] && n < sizeof msg; i++)
                n += (size_t)snprintf(msg + n, sizeof msg - n, "%s%s", i ? ", " : "", o->choices[i]);
            CHECK(strstr(tc_conv_error(c), msg) != NULL);
        }
        if (o->max) { /* past its range */
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->max + 1);
            CHECK_EQ_INT(tc_conv_set_option(c, o->name, buf), TC_ERR_USAGE);
        }
    }
    tc_conv_free(c);
    c = tc_conv_new(); /* once an input is open, an option the open reads is refused as such */
    CHECK_EQ_INT(tc_conv_open_memory(c, ir_trace, sizeof ir_trace - 1, "t.ir.txt", "ir"), TC_OK);
    v = valid_value(o, buf, sizeof buf); /* buf held the bad value since */
    CHECK_EQ_INT(tc_conv_set_option(c, o->name, v), o->open_time ? TC_ERR_STATE : TC_OK);
    tc_conv_free(c);
}

static void test_every_row_parses(void)
{
    const tc_format_info *formats[64];
    every_format(formats, 64);
    for (size_t k = 0; k == 0 || formats[k - 1]; k++)
        for (size_t i = 0; tc_option_at(k ? formats[k - 1] : NULL, i); i++)
            check_row(tc_option_at(k ? formats[k - 1] : NULL, i));
}

/* Whether the ", "-separated list holds the word. */
static int listed(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",)");
        if (k == n && !strncmp(p, word, n))
            return 1;
        p += k;
        p += strspn(p, ", ");
        if (*p == ')')
            break;
    }
    return 0;
}

/* An unknown key names every key but the hidden ones. */
static void test_unknown_key(void)
{
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "nosuch", "1"), TC_ERR_USAGE);
    const char *msg = tc_conv_error(c), *list = strstr(msg, "unknown option 'nosuch' (options: ");
    CHECK(list != NULL);
    list = list ? list + strlen("unknown option 'nosuch' (options: ") : "";
    const tc_format_info *formats[64];
    every_format(formats, 64);
    for (size_t k = 0; k == 0 || formats[k - 1]; k++) {
        const tc_option_info *o;
        for (size_t i = 0; (o = tc_option_at(k ? formats[k - 1] : NULL, i)); i++)
            CHECK_EQ_INT(listed(list, o->name), !o->hidden);
    }
    tc_conv_free(c);
}

/* An output named by a variant writes what the writer with the variant's option does, in one
 * read beside the writer's own output. */
static void test_variant_outputs(void)
{
    char *buf[3] = {0};
    size_t len[3] = {0};
    FILE *fp[3];
    for (int i = 0; i < 3; i++)
        fp[i] = open_memstream(&buf[i], &len[i]);
    tc_conv *c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_open_memory(c, ir_trace, sizeof ir_trace - 1, "t.ir.txt", "ir"), TC_OK);
    tc_output outs[] = {{.writer = "report", .fp = fp[0]}, {.writer = "report-csv", .fp = fp[1]}};
    CHECK_EQ_INT(tc_conv_write_many(c, outs, 2), TC_OK);
    tc_conv_free(c);
    c = tc_conv_new();
    CHECK_EQ_INT(tc_conv_set_option(c, "csv", "1"), TC_OK);
    CHECK_EQ_INT(tc_conv_open_memory(c, ir_trace, sizeof ir_trace - 1, "t.ir.txt", "ir"), TC_OK);
    CHECK_EQ_INT(tc_conv_write(c, "report", fp[2]), TC_OK);
    tc_conv_free(c);
    for (int i = 0; i < 3; i++)
        fclose(fp[i]);
    CHECK(len[1] > 0 && len[1] == len[2] && !memcmp(buf[1], buf[2], len[1]));
    CHECK(len[0] > 0 && !strncmp(buf[0], "# traceconv ", 12)); /* the text report, beside it */
    CHECK(!strncmp(buf[1], "thread,tid,method,calls,", 24));
    for (int i = 0; i < 3; i++)
        free(buf[i]);
}

/* Each of a list's comma-separated names into names[] (at most max in all). */
static size_t split_names(const char *list, const char **names, size_t n, size_t max, char store[][32])
{
    for (const char *a = list; a && *a && n < max;) {
        size_t k = strcspn(a, ",");
        CHECK(k > 0 && k < 32);
        snprintf(store[n], 32, "%.*s", (int)k, a);
        names[n] = store[n];
        n++;
        a += k + (a[k] == ',');
    }
    return n;
}

/* No name twice (any case): a name or alias means one format, so the aliases are
 * unambiguous within each namespace (readers; the writers' outputs; the diff's formats). */
static void check_unique(const char **names, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++)
            if (!strcasecmp(names[i], names[k])) {
                fprintf(stderr, "%s: '%s' names two formats\n", what, names[i]);
                CHECK(strcasecmp(names[i], names[k]) != 0);
            }
}

static void test_aliases(void)
{
    static char store[256][32];
    const char *names[256];
    const tc_format_info *f;
    const tc_variant_info *v;
    size_t n = 0;
    for (size_t i = 0; (f = tc_format_at(i)); i++) { /* readers: names and aliases, each finds its reader */
        if (!f->is_reader)
            continue;
        names[n++] = f->name;
        size_t first = n;
        n = split_names(f->aliases, names, n, 256, store);
        for (size_t k = first; k < n; k++)
            CHECK(tci_find_reader(names[k]) == tci_find_reader(f->name));
    }
    check_unique(names, n, "readers");
    n = 0;
    for (size_t i = 0; (f = tc_format_at(i)); i++) { /* writers: every variant's name and alias */
        for (size_t k = 0; !f->is_reader && (v = tc_variant_at(f, k)); k++) {
            if (k == 0)
                names[n++] = f->name;
            else
                names[n++] = v->name;
            size_t first = n;
            n = split_names(v->aliases, names, n, 256, store);
            for (size_t j = first; j < n; j++)
                CHECK(tc_output_variant(NULL, names[j]) == v);
        }
    }
    check_unique(names, n, "writers");
    n = 0;
    for (size_t i = 0; (f = tc_diff_format_at(i)); i++) {
        names[n++] = f->name;
        size_t first = n;
        n = split_names(tc_variant_at(f, 0)->aliases, names, n, 256, store);
        for (size_t j = first; j < n; j++)
            CHECK(tci_find_diff_format(names[j]) == tci_find_diff_format(f->name));
    }
    check_unique(names, n, "diff formats");
    CHECK(tci_find_reader("ATRACE") == tci_find_reader("systrace")); /* any case */
}

/* A time as the selection's text says it: exact and shortest, parsed back to the same ns. */
static void test_duration_text(void)
{
    static const struct { int64_t ns; const char *text; } cases[] = {
        {1200000000, "1.2s"}, {250000000, "250ms"}, {40000, "40us"}, {7, "7ns"}, {0, "0"},
        {1000000001, "1.000000001s"}, {1500000, "1.5ms"}, {3600000000000, "3600s"}, {999, "999ns"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[40];
        int64_t back = -1;
        tci_duration_text(cases[i].ns, text, sizeof text);
        CHECK_EQ_STR(text, cases[i].text);
        CHECK(tci_parse_duration(text, &back) == 0 && back == cases[i].ns);
    }
}

int main(void)
{
    UNIT_RUN(test_iterators);
    UNIT_RUN(test_output_variants);
    UNIT_RUN(test_variant_rules);
    UNIT_RUN(test_row_rules);
    UNIT_RUN(test_palettes);
    UNIT_RUN(test_every_row_parses);
    UNIT_RUN(test_unknown_key);
    UNIT_RUN(test_variant_outputs);
    UNIT_RUN(test_aliases);
    UNIT_RUN(test_duration_text);
    return UNIT_DONE();
}
