/*
 * tc_leb128.h - LEB128 (DWARF's variable-length integers), as ART's V2 method traces and its
 * long-running-method dumps write them: the one reading both the art-v2 reader and the
 * long-running decoder (artlr.c) use. Prefix tci_. Not installed.
 */
#ifndef TC_TC_LEB128_H
#define TC_TC_LEB128_H

#include "tc_base.h"

#define TCI_LEB_MAX 10 /* bytes of a 64-bit LEB128; an 11th is an overlong value */

enum { TCI_LEB_OK = 0, TCI_LEB_END = 1, TCI_LEB_OVERLONG = 2 };

/* An unsigned LEB128 at *pp before end; *pp moved past it (not moved on an error). */
static inline int tci_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (unsigned shift = 0, i = 0; i < TCI_LEB_MAX; i++, shift += 7) {
        if (TCI_UNLIKELY(p == end))
            return TCI_LEB_END;
        uint8_t x = *p++;
        r |= (uint64_t)(x & 0x7F) << shift;
        if (!(x & 0x80)) {
            *v = r;
            *pp = p;
            return TCI_LEB_OK;
        }
    }
    return TCI_LEB_OVERLONG;
}

/* A signed one, sign-extended to 64 bits (two's complement: added to an accumulator, a
 * negative delta subtracts). */
static inline int tci_sleb(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (unsigned shift = 0, i = 0; i < TCI_LEB_MAX; i++) {
        if (TCI_UNLIKELY(p == end))
            return TCI_LEB_END;
        uint8_t x = *p++;
        r |= (uint64_t)(x & 0x7F) << shift;
        shift += 7;
        if (!(x & 0x80)) {
            if (shift < 64 && (x & 0x40))
                r |= ~(uint64_t)0 << shift;
            *v = r; /* two's complement: added to an accumulator, it subtracts */
            *pp = p;
            return TCI_LEB_OK;
        }
    }
    return TCI_LEB_OVERLONG;
}

/* The same without bounds checks: the caller knows TCI_LEB_MAX bytes are there. Byte by byte:
 * for values of 9 and 10 bytes, which the word-at-a-time reading below leaves to them. */
static inline int tci_uleb_long(const uint8_t **pp, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t r = p[0] & 0x7F;
    if (!(p[0] & 0x80)) { /* most deltas fit in a byte or two */
        *v = r, *pp = p + 1;
        return TCI_LEB_OK;
    }
    r |= (uint64_t)(p[1] & 0x7F) << 7;
    if (!(p[1] & 0x80)) {
        *v = r, *pp = p + 2;
        return TCI_LEB_OK;
    }
    p += 2;
    for (unsigned shift = 14; shift < 7 * TCI_LEB_MAX; shift += 7) {
        uint8_t x = *p++;
        r |= (uint64_t)(x & 0x7F) << shift;
        if (!(x & 0x80)) {
            *v = r, *pp = p;
            return TCI_LEB_OK;
        }
    }
    return TCI_LEB_OVERLONG;
}

static inline int tci_sleb_long(const uint8_t **pp, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (!(p[0] & 0x80)) { /* a method delta of a few slots: one byte */
        *v = (uint64_t)((int64_t)(p[0] & 0x3F) - (p[0] & 0x40 ? 64 : 0));
        *pp = p + 1;
        return TCI_LEB_OK;
    }
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 7 * TCI_LEB_MAX;) {
        uint8_t x = *p++;
        r |= (uint64_t)(x & 0x7F) << shift;
        shift += 7;
        if (!(x & 0x80)) {
            if (shift < 64 && (x & 0x40))
                r |= ~(uint64_t)0 << shift;
            *v = r, *pp = p;
            return TCI_LEB_OK;
        }
    }
    return TCI_LEB_OVERLONG;
}


/*
 * Word at a time (the caller knows TCI_LEB_MAX bytes are there): the first 8 bytes read as
 * one little-endian word, the value's length from its first byte without the high bit, the
 * 7-bit groups gathered with shifts and masks. No branch depends on the length, which varies
 * from record to record (a byte-by-byte loop mispredicts there): the V2 reader's record
 * decoding was 4 times art.c's fixed-width one before this.
 */
static inline uint64_t tci_leb_gather(uint64_t x, unsigned len)
{
    x &= ~(uint64_t)0 >> (64 - 8 * len); /* the value's bytes only (len 1..8) */
    return (x & 0x7Fu) | (x >> 1 & 0x3F80u) | (x >> 2 & 0x1FC000u) | (x >> 3 & 0xFE00000u) |
           (x >> 4 & 0x7F0000000ull) | (x >> 5 & 0x3F800000000ull) | (x >> 6 & 0x1FC0000000000ull) |
           (x >> 7 & 0xFE000000000000ull);
}

static inline int tci_uleb_fast(const uint8_t **pp, uint64_t *v)
{
    uint64_t x = tci_le64(*pp), stop = ~x & 0x8080808080808080ull;
    if (TCI_UNLIKELY(!stop))
        return tci_uleb_long(pp, v);
    unsigned len = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
    *v = tci_leb_gather(x, len);
    *pp += len;
    return TCI_LEB_OK;
}

static inline int tci_sleb_fast(const uint8_t **pp, uint64_t *v)
{
    uint64_t x = tci_le64(*pp), stop = ~x & 0x8080808080808080ull;
    if (TCI_UNLIKELY(!stop))
        return tci_sleb_long(pp, v);
    unsigned len = ((unsigned)__builtin_ctzll(stop) >> 3) + 1, bits = 7 * len; /* at most 56 */
    uint64_t r = tci_leb_gather(x, len);
    *v = r | (0 - (r >> (bits - 1) & 1)) << bits; /* sign-extended from its top bit */
    *pp += len;
    return TCI_LEB_OK;
}

/*
 * Three values that end within the 8 bytes at p (the caller knows TCI_LEB_MAX bytes are
 * there): a signed one, then two unsigned ones, as an Android 16 V2 dual-clock record
 * writes them (Δmethod, Δwall, Δcpu; 6 bytes on average). Their ends come from one word,
 * so no value waits for the previous one's length. Returns the bytes they take, or 0 when
 * they do not all end in the 8 bytes (the caller reads them one by one then).
 */
static inline unsigned tci_leb_triple_word(uint64_t x, uint64_t *sa, uint64_t *ub, uint64_t *uc)
{
    uint64_t stop1 = ~x & 0x8080808080808080ull;
    uint64_t stop2 = stop1 & (stop1 - 1), stop3 = stop2 & (stop2 - 1);
    if (TCI_UNLIKELY(!stop3))
        return 0;
    unsigned e1 = ((unsigned)__builtin_ctzll(stop1) >> 3) + 1, e2 = ((unsigned)__builtin_ctzll(stop2) >> 3) + 1,
             e3 = ((unsigned)__builtin_ctzll(stop3) >> 3) + 1; /* e1 < e2 < e3 <= 8 */
    uint64_t a = tci_leb_gather(x, e1), bits = 7 * e1;
    *sa = a | (0 - (a >> (bits - 1) & 1)) << bits;
    *ub = tci_leb_gather(x >> (8 * e1), e2 - e1);
    *uc = tci_leb_gather(x >> (8 * e2), e3 - e2);
    return e3;
}

static inline unsigned tci_leb_triple(const uint8_t *p, uint64_t *sa, uint64_t *ub, uint64_t *uc)
{
    return tci_leb_triple_word(tci_le64(p), sa, ub, uc);
}

/* The 8 bytes at byte off (0..8) of the 16 whose halves are lo and hi: the next record's
 * word without a load that waits for this record's length. */
static inline uint64_t tci_leb_word_at(uint64_t lo, uint64_t hi, unsigned off)
{
    return (lo >> (4 * off) >> (4 * off)) | (hi << (32 - 4 * off) << (32 - 4 * off));
}

#endif /* TC_TC_LEB128_H */
