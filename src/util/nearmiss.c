/* nearmiss.c - the edit distance of every "did you mean" (nearmiss.h). */
#include "nearmiss.h"

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static uint16_t least(uint16_t x, uint16_t y) { return x < y ? x : y; }

uint32_t tci_edit_distance(const char *a, size_t n, const char *b, size_t m, uint32_t limit)
{
    /* three rows of the table: the one before the previous is the swap's */
    uint16_t rows[3][128], *before = rows[0], *prev = rows[1], *row = rows[2];
    if (n >= 128 || m >= 128 || (n > m ? n - m : m - n) > limit)
        return limit + 1;
    for (size_t j = 0; j <= m; j++)
        prev[j] = (uint16_t)j;
    for (size_t i = 1; i <= n; i++) {
        row[0] = (uint16_t)i;
        uint16_t best = row[0];
        for (size_t j = 1; j <= m; j++) {
            uint16_t d = least((uint16_t)(prev[j - 1] + (lower(a[i - 1]) != lower(b[j - 1]))),
                               least((uint16_t)(prev[j] + 1), (uint16_t)(row[j - 1] + 1)));
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
                d = least(d, (uint16_t)(before[j - 2] + 1));
            row[j] = d;
            best = least(best, d);
        }
        if (best > limit) /* every alignment is past it already */
            return limit + 1;
        uint16_t *spare = before;
        before = prev;
        prev = row;
        row = spare;
    }
    return prev[m] > limit ? limit + 1 : prev[m];
}
