/* registry.c - the list of formats (readers/tc_readers.h, writers/tc_writers.h), and every format's options by
 * key: which keys there are (the core's table, then the readers', writers' and diff formats' in
 * this order), setting one by its row (hub/options.c parses a value), and which given option no
 * chosen format reads. */
#include "tc_engine.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_readers.h"
#include "tc_writers.h"
#include "tc_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <strings.h>

#define ADDRESS(sym) &sym,
static const tci_reader *const readers[] = {TCI_READERS(ADDRESS)};
static const tci_writer *const writers[] = {TCI_WRITERS(ADDRESS)};
static const tci_diff_format *const diff_formats[] = {TCI_DIFF_FORMATS(ADDRESS)};
#undef ADDRESS

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The value of a bool option (false for a key that is not one). */
static bool tci_option_bool(const tci_options *o, const char *key);
/* The variant of writer w that o selects: the first whose option is set, else 0. */
static int tci_variant_selected(const tci_options *o, const tci_writer *w);

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

const tc_variant_info *tci_output_variant(const tci_options *o, const char *writer)
{
    int v;
    const tci_writer *w = tci_find_output(writer, &v);
    if (!w)
        return NULL;
    if (v < 0)
        v = o ? tci_variant_selected(o, w) : 0;
    for (size_t i = 0; i < N_WRITERS; i++)
        if (writers[i] == w)
            return tc_variant_at(&table.infos[N_READERS + i], (size_t)v);
    return NULL;
}

const char *tc_writer_extension(const char *name)
{
    const tc_variant_info *v = tci_output_variant(NULL, name);
    return v ? v->extension : NULL;
}

/* ---- every key, once: the first row of each (core, readers, writers, diff formats) ---- */

static struct {
    const tci_option_def *row[TCI_MAX_OPTION_KEYS + 1]; /* NULL-ended: tci_options.keys */
    size_t n;
    bool overflow; /* more keys than the given list can hold: the last ones are unknown (a unit test fails) */
} keys;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void add_keys(const tci_option_def *table)
{
    for (const tci_option_def *d = table; d && d->key; d++) {
        size_t i = 0;
        while (i < keys.n && strcmp(keys.row[i]->key, d->key))
            i++;
        if (i < keys.n)
            continue;
        if (keys.n == TCI_MAX_OPTION_KEYS)
            keys.overflow = true;
        else
            keys.row[keys.n++] = d;
    }
}

static void build_keys(void)
{
    add_keys(tci_core_options);
    for (size_t i = 0; i < tci_reader_count(); i++)
        add_keys(tci_reader_at(i)->options);
    for (size_t i = 0; i < tci_writer_count(); i++)
        add_keys(tci_writer_at(i)->options);
    for (size_t i = 0; i < tci_diff_format_count(); i++)
        add_keys(tci_diff_format_at(i)->options);
}

/* The key's index among every key, or -1. */
static int key_index(const char *key)
{
    pthread_once(&keys_once, build_keys);
    for (size_t i = 0; key && i < keys.n; i++)
        if (!strcmp(keys.row[i]->key, key))
            return (int)i;
    return -1;
}

const tci_option_def *tci_option_find(const char *key)
{
    int i = key_index(key);
    return i < 0 ? NULL : keys.row[i];
}

size_t tci_option_key_count(void)
{
    pthread_once(&keys_once, build_keys);
    return keys.overflow ? TCI_MAX_OPTION_KEYS + 1 : keys.n;
}

/* "process-name, strict, ...": every key but the hidden ones. */
static void list_keys(char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < keys.n && n < len; i++)
        if (!(keys.row[i]->flags & TCI_OPTF_HIDDEN))
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", keys.row[i]->key);
}

/* A bool option turned on that selects a variant of some writer, while another option selects
 * another variant of it: the other's key (the writer and the variants' names in w, a, b), or NULL. */
static const char *variant_conflict(const tci_options *o, const char *key, const tci_writer **w, int *a, int *b)
{
    for (size_t i = 0; i < tci_writer_count(); i++) {
        const tci_variant *vs = tci_writer_at(i)->variants;
        for (int k = 1; vs[k].name; k++) {
            if (!vs[k].option || strcmp(vs[k].option, key))
                continue;
            for (int j = 1; vs[j].name; j++) {
                if (j != k && vs[j].option && strcmp(vs[j].option, key) && tci_option_bool(o, vs[j].option)) {
                    *w = tci_writer_at(i);
                    *a = j < k ? j : k;
                    *b = j < k ? k : j;
                    return vs[j].option;
                }
            }
        }
    }
    return NULL;
}

static void note_given(tci_options *o, int index)
{
    for (size_t i = 0; i < o->n_given; i++)
        if (o->given[i] == index)
            return;
    if (o->n_given < TCI_MAX_OPTION_KEYS)
        o->given[o->n_given++] = (uint8_t)index;
}

int tci_option_set(tci_options *o, char **strings, const char *key, const char *value, tci_diag *d)
{
    char text[768];
    int index = key_index(key);
    if (index < 0) {
        list_keys(text, sizeof text);
        return tci_error(d, TC_ERR_USAGE, "options", UINT64_MAX, "unknown option '%s' (options: %s)", key, text);
    }
    const tci_option_def *def = keys.row[index];
    const tci_writer *w;
    int a, b;
    bool on;
    const char *other;
    if (def->type == TCI_OPT_BOOL && !tci_option_parse_bool(value, &on) && on && (other = variant_conflict(o, key, &w, &a, &b)))
        return tci_error(d, TC_ERR_USAGE, "options", UINT64_MAX,
                         "options '%s' and '%s' cannot be used together: each picks a form of the %s writer's "
                         "output (for both: -o %s,%s)",
                         w->variants[a].option, w->variants[b].option, w->name, w->variants[a].name,
                         w->variants[b].name);
    o->keys = keys.row; /* the order of given[]'s indexes, for the hub's selection text */
    int rc = tci_option_parse_row(o, strings, index, def, value);
    if (rc == TC_ERR_NOMEM)
        return tci_error(d, TC_ERR_NOMEM, "options", UINT64_MAX, "out of memory");
    if (rc != 0) {
        tci_option_expects(def, text, sizeof text);
        return tci_error(d, TC_ERR_USAGE, "options", UINT64_MAX, "bad value '%s' for option '%s' (%s)",
                         value ? value : "", key, text);
    }
    note_given(o, index);
    return TC_OK;
}

bool tci_option_given(const tci_options *o, const char *key)
{
    int index = key_index(key);
    for (size_t i = 0; index >= 0 && i < o->n_given; i++)
        if (o->given[i] == index)
            return true;
    return false;
}

static bool tci_option_bool(const tci_options *o, const char *key)
{
    const tci_option_def *d = tci_option_find(key);
    return d && d->type == TCI_OPT_BOOL && *(const bool *)((const char *)o + d->offset);
}

/* ---- variants ---- */

static int tci_variant_selected(const tci_options *o, const tci_writer *w)
{
    for (int k = 1; w->variants[k].name; k++)
        if (tci_option_bool(o, w->variants[k].option))
            return k;
    return 0;
}

void tci_variant_force(tci_options *o, const tci_writer *w, int v)
{
    for (int k = 1; w->variants[k].name; k++) {
        const tci_option_def *d = tci_option_find(w->variants[k].option);
        if (d && d->type == TCI_OPT_BOOL)
            *(bool *)((char *)o + d->offset) = k == v;
    }
}

/* ---- options no chosen format reads ---- */

static bool lists(const tci_option_def *table, const char *key)
{
    for (const tci_option_def *d = table; d && d->key; d++)
        if (!strcmp(d->key, key))
            return true;
    return false;
}

static bool some_reader_uses(const char *key)
{
    for (size_t i = 0; i < tci_reader_count(); i++)
        if (lists(tci_reader_at(i)->options, key))
            return true;
    return false;
}

static bool some_writer_uses(const char *key)
{
    for (size_t i = 0; i < tci_diff_format_count(); i++) /* the diff: a format of its own (diff.c) */
        if (lists(tci_diff_format_at(i)->options, key))
            return true;
    for (size_t i = 0; i < tci_writer_count(); i++) {
        const tci_writer *w = tci_writer_at(i);
        if (lists(w->options, key))
            return true;
        for (const tci_variant *v = w->variants; v->name; v++)
            if (lists(v->options, key))
                return true;
    }
    return false;
}

bool tci_output_reads(const tci_writer *w, const tci_options *o, const char *key)
{
    return lists(w->options, key) || (w->variants && lists(w->variants[tci_variant_selected(o, w)].options, key));
}

/* Whether any writer of the call reads the key: its table, or the table of the variant it
 * writes (variants[i], or with variants NULL or -1 the one o selects). */
static bool any_writer_lists(const tci_options *o, const tci_writer *const *ws, const int *variants, size_t n_ws,
                             const char *key)
{
    for (size_t i = 0; i < n_ws; i++) {
        if (lists(ws[i]->options, key))
            return true;
        if (!ws[i]->variants) /* a writer of the core's own (tci_conv_aggregate) */
            continue;
        int v = variants && variants[i] >= 0 ? variants[i] : tci_variant_selected(o, ws[i]);
        if (lists(ws[i]->variants[v].options, key))
            return true;
    }
    return false;
}

/* "the json writer", or "any of the json, perfetto writers" when a call has several. */
static void name_writers(const tci_writer *const *ws, size_t n_ws, char *out, size_t outlen)
{
    size_t len = (size_t)snprintf(out, outlen, "%s", n_ws > 1 ? "any of the " : "the ");
    for (size_t i = 0; i < n_ws && len < outlen; i++)
        len += (size_t)snprintf(out + len, outlen - len, "%s%s", i ? ", " : "", ws[i]->name);
    if (len < outlen)
        snprintf(out + len, outlen - len, " writer%s", n_ws > 1 ? "s" : "");
}

/* One given key: a warning when it is a format's option that rd and every writer of the call ignore. */
static bool warn_if_unused(const tci_options *o, const char *key, const tci_reader *rd, const tci_writer *const *ws,
                           const int *variants, size_t n_ws, tci_diag *d, char *msg, size_t msglen)
{
    if (lists(rd->options, key) || any_writer_lists(o, ws, variants, n_ws, key))
        return false;
    bool of_reader = some_reader_uses(key), of_writer = some_writer_uses(key);
    char writers[96];
    name_writers(ws, n_ws, writers, sizeof writers);
    if (of_reader && of_writer)
        snprintf(msg, msglen, "option --%s is used by neither the %s reader nor %s", key, rd->name, writers);
    else if (of_reader)
        snprintf(msg, msglen, "option --%s is not used by the %s reader", key, rd->name);
    else if (of_writer)
        snprintf(msg, msglen, "option --%s is not used by %s", key, writers);
    else
        return false; /* a core option: every conversion uses it */
    tci_warn(d, TCI_FIG_UNUSED_OPTION, "options", UINT64_MAX, "%s", msg);
    return true;
}

int tci_options_check_used(const tci_options *o, const tci_reader *rd, const tci_writer *const *ws,
                           const int *variants, size_t n_ws, tci_diag *d)
{
    char first[160] = "";
    pthread_once(&keys_once, build_keys);
    for (size_t i = 0; i < o->n_given; i++) {
        char msg[160];
        if (warn_if_unused(o, keys.row[o->given[i]]->key, rd, ws, variants, n_ws, d, msg, sizeof msg) && !first[0])
            memcpy(first, msg, sizeof first);
    }
    if (first[0] && d->strict)
        return tci_error(d, TC_ERR_STRICT, "options", UINT64_MAX, "%s (an error under --strict)", first);
    return TC_OK;
}
