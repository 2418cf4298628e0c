/*
 * tc_base.h - what every file of the library uses: integer reads from input bytes, arenas and id maps, the
 * compiler hints.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_BASE_H
#define TC_TC_BASE_H

#ifndef TC_BUILDING_LIBRARY
#error "the tc_*.h headers are private to libtraceconv; include traceconv.h instead"
#endif

#include "traceconv.h"
#include "escape.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TCI_NO_TIME INT64_MIN
#define TCI_NONE UINT32_MAX

#if defined(__GNUC__)
#define TCI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TCI_LIKELY(x) __builtin_expect(!!(x), 1)
#define TCI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TCI_PRINTF(a, b)
#define TCI_LIKELY(x) (x)
#define TCI_UNLIKELY(x) (x)
#endif

/* ---- little-endian input helpers (never cast structs onto input) -------- */

static inline uint16_t tci_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t tci_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}
static inline uint64_t tci_le64(const uint8_t *p) { return (uint64_t)tci_le32(p) | ((uint64_t)tci_le32(p + 4) << 32); }

/* ---- memory ------------------------------------------------------------- */

/* Allocation failure is fatal only through these: they return NULL and callers report TC_ERR_NOMEM. */
void *tci_malloc(size_t n);
void *tci_calloc(size_t n, size_t size);
void *tci_realloc_array(void *p, size_t n, size_t size); /* checks n*size overflow */
/* Grow *arr (element size esz) so that index `need` fits; doubles capacity. 0 ok, -1 no memory. */
int tci_grow(void **arr, uint32_t *cap, uint32_t need, size_t esz);
/* The same for arrays counted in size_t (per-record arrays of in-memory readers). */
int tci_grow_n(void **arr, size_t *cap, size_t need, size_t esz);

/* Temporary files (spooled input, the global-order merge): unlinked at once,
 * so they are gone when closed, even after a crash. In TMPDIR, else /tmp. */
int tci_temp_fd(const char *purpose); /* fd, or -1 with errno */
/* Write all of p (retrying EINTR and short writes): 0, or -1 with errno (ENOSPC for a 0-byte write). */
int tci_write_all(int fd, const void *p, size_t n);

typedef struct tci_arena {
    struct tci_arena_block *head;
} tci_arena;
void *tci_arena_alloc(tci_arena *a, size_t n);
/* p, the latest allocation, keeps only its first n bytes: a worst-case reservation given back. */
void tci_arena_trim(tci_arena *a, void *p, size_t n);
char *tci_arena_strndup(tci_arena *a, const char *s, size_t n);
char *tci_arena_printf(tci_arena *a, const char *fmt, ...) TCI_PRINTF(2, 3);
void tci_arena_free(tci_arena *a);

/* FNV-1a of n bytes, seeded: a text's key in a tci_idmap. Two texts may share a hash, so the
 * maps that key texts by it compare the text and try the next seed on a collision. */
static inline uint64_t tci_text_hash(const char *s, size_t n, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (seed * 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* u64 -> u32 hash map (open addressing); grows with entries, not with lookups. */
/* A slot holds its key and value together: a lookup in a large map (the call tree's
 * children, millions of paths) is one cache miss, where keys and values apart made it two. */
typedef struct tci_idslot {
    uint64_t key;
    uint32_t val; /* TCI_NONE: the slot is free */
} tci_idslot;
typedef struct tci_idmap {
    tci_idslot *slots;
    uint32_t cap, count; /* cap is a power of two or 0 */
} tci_idmap;
uint32_t tci_idmap_get(const tci_idmap *m, uint64_t key); /* TCI_NONE if absent */
int tci_idmap_put(tci_idmap *m, uint64_t key, uint32_t val);
void tci_idmap_free(tci_idmap *m);

#endif /* TC_TC_BASE_H */
