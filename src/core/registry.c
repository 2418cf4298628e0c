/* registry.c - the list of formats, generated from formats.def. */
#include "tc_internal.h"

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

const tci_reader *tci_find_reader(const char *name)
{
    for (size_t i = 0; i < COUNT(readers); i++)
        if (strcmp(readers[i]->name, name) == 0)
            return readers[i];
    return NULL;
}

const tci_writer *tci_find_writer(const char *name)
{
    for (size_t i = 0; i < COUNT(writers); i++)
        if (strcmp(writers[i]->name, name) == 0)
            return writers[i];
    return NULL;
}

const tc_format_info *tc_format_at(size_t index)
{
    static tc_format_info infos[COUNT(readers) + COUNT(writers)];
    if (index >= COUNT(infos))
        return NULL;
    tc_format_info *f = &infos[index];
    if (index < COUNT(readers))
        *f = (tc_format_info){readers[index]->name, readers[index]->description, readers[index]->extensions, 1, 0};
    else {
        const tci_writer *w = writers[index - COUNT(readers)];
        *f = (tc_format_info){w->name, w->description, w->extensions, 0,
                              (w->flags & (TCI_WF_BINARY | TCI_WF_GZIP)) != 0};
    }
    return f;
}

const char *tc_writer_extension(const char *name)
{
    const tci_writer *w = tci_find_writer(name);
    static char ext[32];
    if (!w)
        return NULL;
    size_t n = strcspn(w->extensions, ",");
    if (n >= sizeof ext)
        n = sizeof ext - 1;
    memcpy(ext, w->extensions, n);
    ext[n] = 0;
    return ext;
}
