/* memory.c - allocation helpers, temporary files, the string arena and the u64->u32 id map. */
#include "tc_base.h"

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
        const tci_idslot *s = &m->slots[i];
        if (s->val == TCI_NONE)
            return TCI_NONE;
        if (s->key == key)
            return s->val;
        i = (i + 1) & mask;
    }
}

static int idmap_resize(tci_idmap *m, uint32_t ncap)
{
    tci_idslot *slots = tci_realloc_array(NULL, ncap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < ncap; i++)
        slots[i] = (tci_idslot){0, TCI_NONE};
    for (uint32_t j = 0; j < m->cap; j++) {
        if (m->slots[j].val == TCI_NONE)
            continue;
        uint32_t i = idmap_hash(m->slots[j].key) & (ncap - 1);
        while (slots[i].val != TCI_NONE)
            i = (i + 1) & (ncap - 1);
        slots[i] = m->slots[j];
    }
    free(m->slots);
    m->slots = slots;
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
    while (m->slots[i].val != TCI_NONE) {
        if (m->slots[i].key == key) {
            m->slots[i].val = val;
            return 0;
        }
        i = (i + 1) & mask;
    }
    m->slots[i] = (tci_idslot){key, val};
    m->count++;
    return 0;
}

void tci_idmap_free(tci_idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}
