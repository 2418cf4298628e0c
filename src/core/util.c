/* util.c - allocation helpers, the string arena, the u64->u32 id map and
 * diagnostics (one error slot, counted warnings). */
#include "tc_internal.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

void *tci_malloc(size_t n) { return malloc(n ? n : 1); }
void *tci_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }

void *tci_realloc_array(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return realloc(p, n * size != 0 ? n * size : 1);
}

int tci_grow_n(void **arr, size_t *cap, size_t need, size_t esz)
{
    if (need < *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap <= need) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    void *p = tci_realloc_array(*arr, ncap, esz);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

int tci_grow(void **arr, uint32_t *cap, uint32_t need, size_t esz)
{
    if (need < *cap)
        return 0;
    size_t c = *cap;
    if (need == UINT32_MAX || tci_grow_n(arr, &c, need, esz) != 0)
        return -1;
    *cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c; /* tables are indexed by uint32_t */
    return 0;
}

/* ---- temporary files ---- */

int tci_temp_fd(const char *purpose)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traceconv-%s-XXXXXX", dir && *dir ? dir : "/tmp", purpose);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

int tci_write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = ENOSPC;
            return -1;
        }
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---- arena: strings and tables live until the trace is freed ---- */

struct tci_arena_block {
    struct tci_arena_block *next;
    size_t used, cap;
    max_align_t data[];
};

/* n bytes at a multiple of align (1 for text: a name costs its length, not a 16-byte multiple). */
static void *arena_take(tci_arena *a, size_t n, size_t align)
{
    struct tci_arena_block *b = a->head;
    size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;
    if (!b || at > b->cap || b->cap - at < n) {
        size_t cap = n > 60000 ? n : 60000;
        if (cap > SIZE_MAX - sizeof *b)
            return NULL;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
        at = 0;
    }
    b->used = at + n;
    return (char *)b->data + at;
}

void *tci_arena_alloc(tci_arena *a, size_t n) { return arena_take(a, n, 16); }

void tci_arena_trim(tci_arena *a, void *p, size_t n)
{
    struct tci_arena_block *b = a->head;
    size_t at = b ? (size_t)((char *)p - (char *)b->data) : 0;
    if (b && (char *)p >= (char *)b->data && at <= b->used && b->used - at >= n)
        b->used = at + n; /* p was the last allocation: the rest of it is free again */
}

char *tci_arena_strndup(tci_arena *a, const char *s, size_t n)
{
    char *p = n < SIZE_MAX ? arena_take(a, n + 1, 1) : NULL;
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

char *tci_arena_printf(tci_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = arena_take(a, (size_t)n + 1, 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void tci_arena_free(tci_arena *a)
{
    struct tci_arena_block *b = a->head;
    while (b) {
        struct tci_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}

/* ---- id map: open addressing, key 0 stored like any other (a used flag is the value) ---- */

static inline uint32_t idmap_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

uint32_t tci_idmap_get(const tci_idmap *m, uint64_t key)
{
    if (!m->cap)
        return TCI_NONE;
    uint32_t mask = m->cap - 1, i = idmap_hash(key) & mask;
    for (;;) {
        if (m->vals[i] == TCI_NONE)
            return TCI_NONE;
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & mask;
    }
}

static int idmap_resize(tci_idmap *m, uint32_t ncap)
{
    uint64_t *keys = tci_realloc_array(NULL, ncap, sizeof *keys);
    uint32_t *vals = tci_realloc_array(NULL, ncap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    memset(vals, 0xff, (size_t)ncap * sizeof *vals);
    for (uint32_t j = 0; j < m->cap; j++) {
        if (m->vals[j] == TCI_NONE)
            continue;
        uint32_t i = idmap_hash(m->keys[j]) & (ncap - 1);
        while (vals[i] != TCI_NONE)
            i = (i + 1) & (ncap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = ncap;
    return 0;
}

int tci_idmap_put(tci_idmap *m, uint64_t key, uint32_t val)
{
    if ((uint64_t)(m->count + 1) * 4 > (uint64_t)m->cap * 3) {
        if (m->cap >= (1u << 30) || idmap_resize(m, m->cap ? m->cap * 2 : 64) != 0)
            return -1;
    }
    uint32_t mask = m->cap - 1, i = idmap_hash(key) & mask;
    while (m->vals[i] != TCI_NONE) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
        i = (i + 1) & mask;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}

void tci_idmap_free(tci_idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- diagnostics ---- */

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

void tci_warn(tci_diag *d, enum tci_figure_id kind, const char *module, uint64_t offset,
              const char *fmt, ...)
{
    if (d->muted)
        return;
    d->fig[kind]++;
    if (d->n_kept >= TCI_MAX_KEPT_WARNINGS)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    diag_format(buf, sizeof buf, d->input, module, offset, fmt, ap);
    va_end(ap);
    d->kept[d->n_kept] = strdup(buf);
    if (d->kept[d->n_kept])
        d->n_kept++;
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
