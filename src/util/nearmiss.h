/*
 * nearmiss.h - the one edit distance of traceconv's "did you mean": the names of threads
 * and methods the selection suggests (select.c) and the formats and options the command
 * suggests (cli_util.c) are near misses by the same measure.
 *
 * Self-contained (no other traceconv header, no allocation), so the command's programs,
 * which see only the public API, compile it in too (CMakeLists.txt), as utf8.c.
 */
#ifndef TC_NEARMISS_H
#define TC_NEARMISS_H

#include <stddef.h>
#include <stdint.h>

/* The optimal string alignment distance of a (n bytes) and b (m bytes), ASCII case ignored:
 * an insertion, a deletion, a substitution or a swap of two neighbours ("mian", "josn") is
 * one edit. Past limit, or for a text of 128 bytes or more, limit + 1: the work stops as
 * soon as every alignment is beyond it. */
uint32_t tci_edit_distance(const char *a, size_t n, const char *b, size_t m, uint32_t limit);

#endif /* TC_NEARMISS_H */
