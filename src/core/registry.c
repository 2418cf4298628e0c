/* registry.c - the list of formats, generated from formats.def. */
#include "tc_internal.h"

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
const tci_reader *tci_find_reader(const char *name)
{
    for (size_t i = 0; i < COUNT(readers); i++)
        if (strcasecmp(readers[i]->name, name) == 0)
            return readers[i];
    return NULL;
}

const tci_writer *tci_find_writer(const char *name)
{
    for (size_t i = 0; i < COUNT(writers); i++)
        if (strcasecmp(writers[i]->name, name) == 0)
            return writers[i];
    return NULL;
}

const tci_writer *tci_find_output(const char *name, int *variant)
{
    *variant = -1;
    const tci_writer *w = name ? tci_find_writer(name) : NULL;
    for (size_t i = 0; name && !w && i < COUNT(writers); i++)
        for (int k = 1; writers[i]->variants[k].name; k++)
            if (strcasecmp(writers[i]->variants[k].name, name) == 0) {
                *variant = k;
                return writers[i];
            }
    return w;
}

const tci_diff_format *tci_find_diff_format(const char *name)
{
    for (size_t i = 0; name && i < COUNT(diff_formats); i++)
        if (strcasecmp(diff_formats[i]->name, name) == 0)
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

/* The public view of the registry: built once (pthread_once), read-only after,
 * so that any thread may call tc_format_at and tc_writer_extension. */
static struct {
    tc_format_info infos[COUNT(readers) + COUNT(writers)];
    char writer_ext[COUNT(writers)][32]; /* each writer's default extension */
} table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
    for (size_t i = 0; i < COUNT(readers); i++)
        table.infos[i] = (tc_format_info){readers[i]->name, readers[i]->description, readers[i]->extensions, 1, 0};
    for (size_t i = 0; i < COUNT(writers); i++) {
        const tci_writer *w = writers[i];
        table.infos[COUNT(readers) + i] =
            (tc_format_info){w->name, w->description, w->extensions, 0, (w->flags & (TCI_WF_BINARY | TCI_WF_GZIP)) != 0};
        size_t n = strcspn(w->extensions, ",");
        if (n >= sizeof table.writer_ext[i])
            n = sizeof table.writer_ext[i] - 1;
        memcpy(table.writer_ext[i], w->extensions, n);
        table.writer_ext[i][n] = 0;
    }
}

const tc_format_info *tc_format_at(size_t index)
{
    if (index >= COUNT(table.infos))
        return NULL;
    pthread_once(&table_once, build_table);
    return &table.infos[index];
}

const char *tc_writer_extension(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < COUNT(writers); i++) {
        if (strcasecmp(writers[i]->name, name) == 0) {
            pthread_once(&table_once, build_table);
            return table.writer_ext[i];
        }
    }
    return NULL;
}
