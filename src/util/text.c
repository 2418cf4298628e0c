/* text.c - the text parsers' helpers, one rule each (text.h). */
#include "text.h"

tci_span tci_span_trim(tci_span s)
{
    while (s.n && tci_is_space(*s.p))
        s.p++, s.n--;
    while (s.n && tci_is_space(s.p[s.n - 1]))
        s.n--;
    return s;
}

bool tci_next_line(const char *text, size_t end, size_t *pos, tci_line *line)
{
    if (*pos >= end)
        return false;
    const char *s = text + *pos;
    const char *lf = memchr(s, '\n', end - *pos);
    size_t n = lf ? (size_t)(lf - s) : end - *pos;
    line->p = s;
    line->off = *pos;
    *pos += n + (lf != NULL);
    while (n && s[n - 1] == '\r')
        n--;
    line->n = n;
    return true;
}

/* The digits of p[0, n) in base (10 or 16), the value at most max. */
static bool parse_digits(const char *p, size_t n, unsigned base, uint64_t max, uint64_t *out)
{
    if (!n)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        unsigned d;
        if (tci_is_digit(c)) d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return false;
        if (d > max || v > (max - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

bool tci_parse_u64(const char *p, size_t n, uint64_t max, uint64_t *out) { return parse_digits(p, n, 10, max, out); }

bool tci_parse_hex_u64(const char *p, size_t n, uint64_t *out)
{
    size_t skip = n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 2 : 0;
    return parse_digits(p + skip, n - skip, 16, UINT64_MAX, out);
}

bool tci_parse_i64(const char *p, size_t n, int64_t *out)
{
    bool neg = n && p[0] == '-';
    size_t sign = n && (p[0] == '-' || p[0] == '+');
    uint64_t v;
    if (!tci_parse_u64(p + sign, n - sign, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v))
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}
