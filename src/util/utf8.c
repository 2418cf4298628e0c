/*
 * utf8.c - the one UTF-8 decoder (utf8.h). The second byte of a sequence
 * carries every restriction of table 3-7 (after E0 only A0..BF: no overlong;
 * after ED only 80..9F: no surrogate; after F0 only 90..BF; after F4 only
 * 80..8F: nothing above U+10FFFF), so checking each byte against its range as
 * it comes finds both the validity and the maximal subpart of an ill-formed
 * sequence (the bytes before the first one out of range) in one pass.
 */
#include "utf8.h"

size_t tci_utf8_next(const uint8_t *p, size_t n, uint32_t *cp)
{
    uint8_t c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    *cp = TCI_UTF8_INVALID;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF; /* the second byte's range */
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; v = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; v = c & 0x0F; lo = c == 0xE0 ? 0xA0 : 0x80; hi = c == 0xED ? 0x9F : 0xBF; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; v = c & 0x07; lo = c == 0xF0 ? 0x90 : 0x80; hi = c == 0xF4 ? 0x8F : 0xBF; }
    else return 1; /* a continuation byte, C0, C1, F5..FF: never a lead byte */
    size_t i = 1;
    for (; i < len && i < n; i++) {
        uint8_t b = p[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
            return i; /* the maximal subpart ends before b */
        v = v << 6 | (b & 0x3F);
    }
    if (i < len)
        return i; /* cut short by the end */
    *cp = v;
    return len;
}

size_t tci_utf8_len(const uint8_t *p, size_t n)
{
    uint32_t cp;
    if (!n)
        return 0;
    size_t k = tci_utf8_next(p, n, &cp);
    return cp == TCI_UTF8_INVALID ? 0 : k;
}

size_t tci_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
