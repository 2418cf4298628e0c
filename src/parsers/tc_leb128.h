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

/* The same without bounds checks: the caller knows TCI_LEB_MAX bytes are there. */
static inline int tci_uleb_fast(const uint8_t **pp, uint64_t *v)
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

static inline int tci_sleb_fast(const uint8_t **pp, uint64_t *v)
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

#endif /* TC_TC_LEB128_H */
