/* diag.c - diagnostics: one error slot with file, format and offset, counted warnings and
 * figures by kind, and what a writer could not show. */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_writer.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const struct {
    const char *name;
    int kind;
} figure_info[TCI_FIG__COUNT] = {
#define TCI_FIG_INFO(id, name, kind) {name, kind},
    TCI_FIGURES(TCI_FIG_INFO)
#undef TCI_FIG_INFO
};

const char *tci_figure_name(enum tci_figure_id id) { return figure_info[id].name; }
int tci_figure_kind(enum tci_figure_id id) { return figure_info[id].kind; }

const char *tci_figure_heading(int kind)
{
    switch (kind) {
    case TC_FIG_REPAIR: return "repaired";
    case TC_FIG_WARNING: return "warnings";
    case TC_FIG_NOTE: return "notes";
    default: return "counts";
    }
}

const char *tci_figures_text(const tci_diag *d, int kind, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < TCI_FIG__COUNT; i++) {
        if (tci_figure_kind(i) != kind || !d->fig[i])
            continue;
        int k = snprintf(buf + len, size - len, "%s%llu %s", len ? ", " : "", (unsigned long long)d->fig[i],
                         tci_figure_name(i));
        if (k < 0 || (size_t)k >= size - len) { /* cannot happen at TCI_FIGURES_TEXT_MAX: keep whole names */
            buf[len] = 0;
            break;
        }
        len += (size_t)k;
    }
    if (!len)
        snprintf(buf, size, "none");
    return buf;
}

/* A message is one line on a terminal: input bytes quoted in it (a bad line,
 * a name) must not bring control characters or broken UTF-8 along, so they
 * are shown as \xNN. Copies src into out (outlen > 0), cutting whole escapes. */
static void copy_printable(char *out, size_t outlen, const char *src)
{
    const unsigned char *p = (const unsigned char *)src;
    size_t n = strlen(src), o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = tci_utf8_len(p + i, n - i); /* 0: not UTF-8, one byte escaped */
        bool plain = len > 1 || (len == 1 && p[i] >= 0x20 && p[i] != 0x7F);
        size_t need = plain ? len : 4;
        if (o + need >= outlen)
            break;
        if (plain)
            memcpy(out + o, p + i, len);
        else
            snprintf(out + o, 5, "\\x%02x", p[i]);
        o += need;
        i += plain ? len : 1;
    }
    out[o] = 0;
}

static void diag_format(char *out, size_t outlen, const char *input, const char *module,
                        uint64_t offset, const char *fmt, va_list ap)
{
    char raw[1024];
    int n = input ? snprintf(raw, sizeof raw, "%s: ", input) : 0; /* options have no file yet */
    if (n >= 0 && (size_t)n < sizeof raw) {
        int k;
        if (offset != UINT64_MAX)
            k = snprintf(raw + n, sizeof raw - (size_t)n, "%s: offset 0x%llx: ", module, (unsigned long long)offset);
        else
            k = snprintf(raw + n, sizeof raw - (size_t)n, "%s: ", module);
        if (k >= 0 && (size_t)(n + k) < sizeof raw)
            vsnprintf(raw + n + k, sizeof raw - (size_t)(n + k), fmt, ap);
    } else {
        raw[sizeof raw - 1] = 0;
    }
    copy_printable(out, outlen, raw);
}

int tci_error(tci_diag *d, int code, const char *module, uint64_t offset, const char *fmt, ...)
{
    if (d->error[0]) /* keep the first, innermost message */
        return code;
    va_list ap;
    va_start(ap, fmt);
    diag_format(d->error, sizeof d->error, d->input, module, offset, fmt, ap);
    va_end(ap);
    return code;
}

/* Keep a warning's message if it is among the first few, and the first few of its kind
 * (counting is the caller's). */
static void keep_message(tci_diag *d, enum tci_figure_id kind, const char *module, uint64_t offset, const char *fmt,
                         va_list ap)
{
    if (d->n_kept >= TCI_MAX_KEPT_WARNINGS || d->kept_of[kind] >= TCI_KEPT_PER_KIND)
        return;
    d->kept_of[kind]++;
    char buf[512];
    diag_format(buf, sizeof buf, d->input, module, offset, fmt, ap);
    d->kept[d->n_kept] = strdup(buf);
    if (d->kept[d->n_kept])
        d->n_kept++;
}

void tci_warn(tci_diag *d, enum tci_figure_id kind, const char *module, uint64_t offset,
              const char *fmt, ...)
{
    if (d->muted)
        return;
    d->fig[kind]++;
    va_list ap;
    va_start(ap, fmt);
    keep_message(d, kind, module, offset, fmt, ap);
    va_end(ap);
}

static TCI_PRINTF(5, 6) void keep_warning(tci_diag *d, enum tci_figure_id kind, const char *module, uint64_t offset,
                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    keep_message(d, kind, module, offset, fmt, ap);
    va_end(ap);
}

void tci_not_converted(tci_diag *d, const char *module, uint64_t offset, const char *kind, size_t len)
{
    if (d->muted)
        return;
    if (!d->fig[TCI_FIG_NOT_CONVERTED]++) {
        d->left_module = module;
        d->left_offset = offset;
    }
    if (len >= TCI_LEFT_NAME_MAX)
        len = TCI_LEFT_NAME_MAX - 1;
    for (int k = 0; k < TCI_LEFT_KINDS; k++) {
        tci_left_kind *e = &d->left[k];
        if (!e->count) {
            memcpy(e->name, kind, len);
            e->name[len] = 0;
        } else if (strlen(e->name) != len || memcmp(e->name, kind, len)) {
            continue;
        }
        e->count++;
        return;
    }
}

const char *tci_not_converted_text(const tci_diag *d, char *buf, size_t size)
{
    size_t n = 0;
    uint64_t named = 0;
    buf[0] = 0;
    for (int k = 0; k < TCI_LEFT_KINDS && d->left[k].count; k++) {
        char name[4 * TCI_LEFT_NAME_MAX];
        copy_printable(name, sizeof name, d->left[k].name);
        int w = snprintf(buf + n, size - n, "%s%s %llu", n ? ", " : "", name, (unsigned long long)d->left[k].count);
        if (w < 0 || (size_t)w >= size - n - 32) { /* room for the count of the rest */
            buf[n] = 0;
            break;
        }
        n += (size_t)w;
        named += d->left[k].count;
    }
    uint64_t total = d->fig[TCI_FIG_NOT_CONVERTED];
    if (named < total)
        snprintf(buf + n, size - n, "%s%llu of other kinds", n ? ", " : "", (unsigned long long)(total - named));
    return buf;
}

void tci_report_not_converted(tci_diag *d)
{
    uint64_t total = d->fig[TCI_FIG_NOT_CONVERTED];
    if (!total || d->muted)
        return;
    char list[512];
    keep_warning(d, TCI_FIG_NOT_CONVERTED, d->left_module ? d->left_module : "input", d->left_offset,
                 "%llu input record%s not converted (%s)", (unsigned long long)total, total == 1 ? "" : "s",
                 tci_not_converted_text(d, list, sizeof list));
}

void tci_writer_dropped(tci_wctx *w, uint64_t n, const char *what)
{
    if (!n)
        return;
    bool muted = w->diag->muted;
    w->diag->muted = false;
    tci_warn(w->diag, TCI_FIG_WRITER_DROPPED, w->writer_name, UINT64_MAX, "%llu %s", (unsigned long long)n, what);
    w->diag->fig[TCI_FIG_WRITER_DROPPED] += n - 1; /* tci_warn counted one */
    w->diag->muted = muted;
}
