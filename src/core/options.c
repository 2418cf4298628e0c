/*
 * options.c - which options a conversion was given, and whether the chosen
 * reader and writer use them.
 *
 * Some options belong to one format: the rhea reader's mapping, the folded
 * writer's weight and no-thread, pprof's merge-threads, systrace's text. Each
 * reader and writer lists the keys it reads in its descriptor (`options`).
 * A key that no descriptor lists is read by the core for every conversion
 * (process-name, strict, max-depth, the limits) and is always used. A key
 * that some format lists but neither the chosen reader nor the chosen writer
 * (nor any writer of a call with several outputs) reads would be ignored
 * without a word (`--weight cpu -o pprof` looks as if it worked): it is the
 * counted warning unused-option, an error under strict.
 */
#include "tc_internal.h"

#include <stdio.h>

static const tci_reader *const every_reader[] = {
#define TCI_READER(sym) &sym,
#define TCI_WRITER(sym)
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
};

static const tci_writer *const every_writer[] = {
#define TCI_READER(sym)
#define TCI_WRITER(sym) &sym,
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the space-separated list `words` (NULL: none) holds the key of length n. */
static bool lists(const char *words, const char *key, size_t n)
{
    for (const char *p = words; p && *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && !memcmp(p, key, n))
            return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

void tci_options_given(tci_options *o, const char *key)
{
    size_t n = strlen(key), used = strlen(o->given);
    if (lists(o->given, key, n))
        return;
    /* every valid key fits (the buffer holds them all); a longer one is not a format's option */
    if (used + n + 2 <= sizeof o->given)
        snprintf(o->given + used, sizeof o->given - used, "%s%s", used ? " " : "", key);
}

static bool some_reader_uses(const char *key, size_t n)
{
    for (size_t i = 0; i < COUNT(every_reader); i++)
        if (lists(every_reader[i]->options, key, n))
            return true;
    return false;
}

static bool some_writer_uses(const char *key, size_t n)
{
    if (lists(tci_diff_options, key, n)) /* the diff command: a format of its own (diff.c) */
        return true;
    for (size_t i = 0; i < COUNT(every_writer); i++)
        if (lists(every_writer[i]->options, key, n))
            return true;
    return false;
}

/* Whether any writer of the call reads the key. */
static bool any_writer_lists(const tci_writer *const *ws, size_t n_ws, const char *key, size_t n)
{
    for (size_t i = 0; i < n_ws; i++)
        if (lists(ws[i]->options, key, n))
            return true;
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
static bool warn_if_unused(const char *key, size_t n, const tci_reader *rd, const tci_writer *const *ws,
                           size_t n_ws, tci_diag *d, char *msg, size_t msglen)
{
    if (lists(rd->options, key, n) || any_writer_lists(ws, n_ws, key, n))
        return false;
    bool of_reader = some_reader_uses(key, n), of_writer = some_writer_uses(key, n);
    char writers[96];
    name_writers(ws, n_ws, writers, sizeof writers);
    if (of_reader && of_writer)
        snprintf(msg, msglen, "option --%.*s is used by neither the %s reader nor %s", (int)n, key, rd->name,
                 writers);
    else if (of_reader)
        snprintf(msg, msglen, "option --%.*s is not used by the %s reader", (int)n, key, rd->name);
    else if (of_writer)
        snprintf(msg, msglen, "option --%.*s is not used by %s", (int)n, key, writers);
    else
        return false; /* a core option: every conversion uses it */
    tci_warn(d, TCI_FIG_UNUSED_OPTION, "options", UINT64_MAX, "%s", msg);
    return true;
}

int tci_options_check_used(const tci_options *o, const tci_reader *rd, const tci_writer *const *ws, size_t n_ws,
                           tci_diag *d)
{
    char first[160] = "";
    for (const char *p = o->given; *p;) {
        size_t n = strcspn(p, " ");
        char msg[160];
        if (warn_if_unused(p, n, rd, ws, n_ws, d, msg, sizeof msg) && !first[0])
            memcpy(first, msg, sizeof first);
        p += n;
        p += strspn(p, " ");
    }
    if (first[0] && d->strict)
        return tci_error(d, TC_ERR_STRICT, "options", UINT64_MAX, "%s (an error under --strict)", first);
    return TC_OK;
}
