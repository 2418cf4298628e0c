/* registry.c - the list of formats, generated from formats.def. */
#include "tc_internal.h"

#include <pthread.h>
#include <strings.h>

static const tci_reader *const readers[] = {
#define TCI_READER(sym) &sym,
#define TCI_WRITER(sym)
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
};

static const tci_writer *const writers[] = {
#define TCI_READER(sym)
#define TCI_WRITER(sym) &sym,
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

size_t tci_reader_count(void) { return COUNT(readers); }
const tci_reader *tci_reader_at(size_t i) { return i < COUNT(readers) ? readers[i] : NULL; }

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
