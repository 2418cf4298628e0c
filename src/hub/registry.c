/* registry.c - the list of formats, generated from formats.def. */
#include "tc_conv.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_registry.h"
#include "tc_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <strings.h>

static const tci_reader *const readers[] = {
#define TCI_READER(sym) &sym,
#define TCI_WRITER(sym)
#define TCI_DIFF(sym)
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
#undef TCI_DIFF
};

static const tci_writer *const writers[] = {
#define TCI_READER(sym)
#define TCI_WRITER(sym) &sym,
#define TCI_DIFF(sym)
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
#undef TCI_DIFF
};

static const tci_diff_format *const diff_formats[] = {
#define TCI_READER(sym)
#define TCI_WRITER(sym)
#define TCI_DIFF(sym) &sym,
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
#undef TCI_DIFF
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

size_t tci_reader_count(void) { return COUNT(readers); }
const tci_reader *tci_reader_at(size_t i) { return i < COUNT(readers) ? readers[i] : NULL; }
size_t tci_writer_count(void) { return COUNT(writers); }
const tci_writer *tci_writer_at(size_t i) { return i < COUNT(writers) ? writers[i] : NULL; }
size_t tci_diff_format_count(void) { return COUNT(diff_formats); }
const tci_diff_format *tci_diff_format_at(size_t i) { return i < COUNT(diff_formats) ? diff_formats[i] : NULL; }

/* Format names are matched in any case ("JSON"): users type them. */
static bool is_name(const char *name, const char *canonical) { return canonical && !strcasecmp(canonical, name); }

/* Whether name is one of the comma-separated aliases (any case). */
static bool is_alias(const char *name, const char *aliases)
{
    size_t n = strlen(name);
    for (const char *a = aliases; a && *a;) {
        size_t k = strcspn(a, ",");
        if (k == n && !strncasecmp(a, name, n))
            return true;
        a += k + (a[k] == ',');
    }
    return false;
}

const tci_reader *tci_find_reader(const char *name)
{
    for (size_t i = 0; name && i < COUNT(readers); i++)
        if (is_name(name, readers[i]->name))
            return readers[i];
    for (size_t i = 0; name && i < COUNT(readers); i++) /* a name before any alias, always */
        if (is_alias(name, readers[i]->aliases))
            return readers[i];
    return NULL;
}

const tci_writer *tci_find_writer(const char *name)
{
    for (size_t i = 0; name && i < COUNT(writers); i++)
        if (is_name(name, writers[i]->name))
            return writers[i];
    return NULL;
}

/* The variant of a writer called name (its own name, else an alias), its index in *variant. */
static const tci_writer *find_variant(const char *name, bool alias, int *variant)
{
    for (size_t i = 0; i < COUNT(writers); i++)
        for (int k = 0; writers[i]->variants[k].name; k++)
            if (alias ? is_alias(name, writers[i]->variants[k].aliases) : is_name(name, writers[i]->variants[k].name)) {
                *variant = k;
                return writers[i];
            }
    return NULL;
}

const tci_writer *tci_find_output(const char *name, int *variant)
{
    *variant = -1;
    if (!name)
        return NULL;
    const tci_writer *w = tci_find_writer(name); /* the writer's own name: the variant its options select */
    if (!w && (w = find_variant(name, false, variant)) == NULL)
        w = find_variant(name, true, variant);
    return w;
}

const tci_diff_format *tci_find_diff_format(const char *name)
{
    for (size_t i = 0; name && i < COUNT(diff_formats); i++)
        if (is_name(name, diff_formats[i]->name))
            return diff_formats[i];
    for (size_t i = 0; name && i < COUNT(diff_formats); i++)
        if (is_alias(name, diff_formats[i]->variants[0].aliases))
            return diff_formats[i];
    return NULL;
}

/* Built once (pthread_once), read-only after: any thread may ask. */
static char diff_names[128];
static pthread_once_t diff_names_once = PTHREAD_ONCE_INIT;

static void build_diff_names(void)
{
    size_t len = 0, n = COUNT(diff_formats);
    for (size_t i = 0; i < n && len < sizeof diff_names; i++)
        len += (size_t)snprintf(diff_names + len, sizeof diff_names - len, "%s%s",
                                i == 0 ? "" : i + 1 == n ? " or " : ", ", diff_formats[i]->name);
}

const char *tci_diff_format_names(void)
{
    pthread_once(&diff_names_once, build_diff_names);
    return diff_names;
}

/* ---- the public view of the registry -------------------------------------------
 *
 * Built once (pthread_once), read-only after, so that any thread may ask: the formats
 * (readers, writers, then the diff's), every format's options and variants, converted from
 * the descriptors' rows. A tc_format_info pointer is the handle of its format. */

enum { N_READERS = COUNT(readers), N_WRITERS = COUNT(writers), N_FORMATS = N_READERS + N_WRITERS + COUNT(diff_formats) };
enum { MAX_OPTION_ROWS = 192, MAX_VARIANTS = 48 }; /* every table's rows together (option_tables checks) */

static struct {
    tc_format_info infos[N_FORMATS];
    tc_option_info options[MAX_OPTION_ROWS];
    size_t option_first[N_FORMATS + 2]; /* slot 0: the core's; slot 1 + k: format k's */
    tc_variant_info variants[MAX_VARIANTS];
    size_t variant_first[N_FORMATS + 1]; /* per format (a reader's: none) */
    char args[2048];                     /* the enums' "a|b|c" */
    size_t args_used;
} table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static const char *const type_names[] = {[TCI_OPT_BOOL] = "bool",     [TCI_OPT_INT] = "int",
                                         [TCI_OPT_FLOAT] = "float",   [TCI_OPT_SIZE] = "size",
                                         [TCI_OPT_DURATION] = "duration", [TCI_OPT_ENUM] = "enum",
                                         [TCI_OPT_STRING] = "string", [TCI_OPT_PATH] = "path"};

/* How --help names a value the row does not name: "wall|cpu" for an enum, else by type. */
static const char *default_arg(const tci_option_def *d)
{
    static const char *const by_type[] = {[TCI_OPT_BOOL] = NULL,        [TCI_OPT_INT] = "N",
                                          [TCI_OPT_FLOAT] = "N",        [TCI_OPT_SIZE] = "BYTES",
                                          [TCI_OPT_DURATION] = "TIME",  [TCI_OPT_ENUM] = NULL,
                                          [TCI_OPT_STRING] = "TEXT",    [TCI_OPT_PATH] = "FILE"};
    if (d->type != TCI_OPT_ENUM)
        return by_type[d->type];
    char *out = table.args + table.args_used;
    size_t room = sizeof table.args - table.args_used, n = 0;
    for (size_t i = 0; d->choices[i] && n < room; i++)
        n += (size_t)snprintf(out + n, room - n, "%s%s", i ? "|" : "", d->choices[i]);
    if (n >= room)
        return NULL;
    table.args_used += n + 1;
    return out;
}

static void add_options(const tci_option_def *rows, size_t slot)
{
    size_t n = table.option_first[slot]; /* the end of the slot before */
    for (const tci_option_def *d = rows; d && d->key && n < MAX_OPTION_ROWS; d++, n++)
        table.options[n] = (tc_option_info){
            .name = d->key, .type = d->type, .type_name = type_names[d->type], .choices = d->choices,
            .min = d->min, .max = d->max,
            .default_value = d->def, .arg = d->arg ? d->arg : default_arg(d), .help = d->help,
            .open_time = (d->flags & TCI_OPTF_OPEN) != 0, .limit = (d->flags & TCI_OPTF_LIMIT) != 0,
            .repeatable = (d->flags & TCI_OPTF_REPEATABLE) != 0, .hidden = (d->flags & TCI_OPTF_HIDDEN) != 0,
            .selection = (d->flags & TCI_OPTF_SELECTION) != 0};
    table.option_first[slot + 1] = n;
}

static void add_variants(const tci_variant *vs, size_t k, const char *format, int binary)
{
    size_t n = table.variant_first[k];
    for (; vs && vs->name && n < MAX_VARIANTS; vs++, n++)
        table.variants[n] = (tc_variant_info){.name = vs->name, .format = format, .extension = vs->extension,
                                              .mime = vs->mime, .mark = vs->mark, .option = vs->option,
                                              .inline_view = vs->inline_view, .is_binary = binary,
                                              .aliases = vs->aliases};
    table.variant_first[k + 1] = n;
}

static void build_table(void)
{
    add_options(tci_core_options, 0);
    for (size_t i = 0; i < N_READERS; i++) {
        const tci_reader *r = readers[i];
        table.infos[i] = (tc_format_info){r->name, r->description, r->extensions, 1, 0, r->aliases};
        add_options(r->options, 1 + i);
        table.variant_first[i + 1] = table.variant_first[i];
    }
    for (size_t i = 0; i < N_WRITERS; i++) {
        const tci_writer *w = writers[i];
        size_t k = N_READERS + i;
        int binary = (w->flags & (TCI_WF_BINARY | TCI_WF_GZIP)) != 0;
        table.infos[k] = (tc_format_info){w->name, w->description, w->extensions, 0, binary, NULL};
        add_options(w->options, 1 + k);
        add_variants(w->variants, k, w->name, binary);
    }
    for (size_t i = 0; i < COUNT(diff_formats); i++) {
        const tci_diff_format *f = diff_formats[i];
        size_t k = N_READERS + N_WRITERS + i;
        table.infos[k] = (tc_format_info){f->name, f->description, f->extensions, 0, 0, NULL};
        add_options(f->options, 1 + k);
        add_variants(f->variants, k, f->name, 0);
    }
}

/* A format's index in the table, or -1 for a pointer that is none of its formats. */
static long format_index(const tc_format_info *f)
{
    pthread_once(&table_once, build_table);
    for (size_t k = 0; f && k < N_FORMATS; k++) /* compared one by one: no pointer arithmetic across objects */
        if (f == &table.infos[k])
            return (long)k;
    return -1;
}

const tc_format_info *tc_format_at(size_t index)
{
    if (index >= N_READERS + N_WRITERS)
        return NULL;
    pthread_once(&table_once, build_table);
    return &table.infos[index];
}

const tc_format_info *tc_diff_format_at(size_t index)
{
    if (index >= COUNT(diff_formats))
        return NULL;
    pthread_once(&table_once, build_table);
    return &table.infos[N_READERS + N_WRITERS + index];
}

const tc_option_info *tc_option_at(const tc_format_info *format, size_t index)
{
    long k = format_index(format);
    if (format && k < 0)
        return NULL;
    size_t slot = format ? (size_t)k + 1 : 0;
    size_t at = table.option_first[slot] + index;
    return at < table.option_first[slot + 1] ? &table.options[at] : NULL;
}

const tc_variant_info *tc_variant_at(const tc_format_info *format, size_t index)
{
    long k = format_index(format);
    if (k < 0)
        return NULL;
    size_t at = table.variant_first[k] + index;
    return at < table.variant_first[k + 1] ? &table.variants[at] : NULL;
}

const tc_variant_info *tc_output_variant(const tc_conv *c, const char *writer)
{
    int v;
    const tci_writer *w = tci_find_output(writer, &v);
    if (!w)
        return NULL;
    if (v < 0)
        v = c ? tci_variant_selected(tci_conv_options(c), w) : 0;
    for (size_t i = 0; i < N_WRITERS; i++)
        if (writers[i] == w)
            return tc_variant_at(&table.infos[N_READERS + i], (size_t)v);
    return NULL;
}

const char *tc_writer_extension(const char *name)
{
    const tc_variant_info *v = tc_output_variant(NULL, name);
    return v ? v->extension : NULL;
}
