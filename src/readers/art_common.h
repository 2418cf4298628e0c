/*
 * art_common.h - what the two ART readers share, owned by art.c: the rules of
 * the key / summary text (ART.md §3.1) and of tab-separated method lines.
 * art_v2.c (the V2 family) uses them so that a key means the same in both.
 * Prefix tci_art_. Not installed.
 */
#ifndef TC_ART_COMMON_H
#define TC_ART_COMMON_H

#include "tc_reader.h"
#include "text.h"

/* Split at tabs into at most max fields; the last field keeps any further tabs. */
size_t tci_art_split_tabs(tci_span line, tci_span *f, size_t max);
/* One "key=value" line of a key section or summary at file offset off: kept as
 * metadata, and clock, pid, vm, elapsed-time-usec, data-file-overflow applied
 * to the trace; num-method-calls goes to *declared (its line's offset to *declared_at). */
int tci_art_key_value(tci_rctx *r, tci_span line, uint64_t off, uint64_t *declared, uint64_t *declared_at);

#endif /* TC_ART_COMMON_H */
