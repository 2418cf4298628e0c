/*
 * tc_atrace.h - the atrace payload grammar (B|pid|name, C|..., S|/F|...), for the readers of text that carries it.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_ATRACE_H
#define TC_TC_ATRACE_H

#include "tc_base.h"

/* ---- atrace payloads (atrace.c; the grammar is at the top of that file) ---- */

enum { TCI_ATRACE_OK = 0, TCI_ATRACE_NONE = 1, TCI_ATRACE_BAD = 2 };

/* One `tracing_mark_write` payload. Strings point into the payload (or to a
 * literal) and are not NUL-terminated: they may hold NUL bytes. */
typedef struct tci_atrace {
    char kind;                  /* B E C S F I N G H */
    uint8_t action;             /* the record it makes: TCI_ACT_* */
    bool has_pid;               /* only E may lack one */
    uint32_t pid;
    const char *name;           /* B I C S F N G, H's optional name, E's ignored tail */
    const char *track;          /* N G H */
    const char *category;       /* C: what follows the value */
    size_t name_len, track_len, category_len;
    double value;               /* C */
    int64_t cookie;             /* S F G H */
    const char *why;            /* TCI_ATRACE_BAD: what is wrong, "its pid is not a number ..." */
} tci_atrace;

/* Parse [p, p+n): TCI_ATRACE_OK, TCI_ATRACE_NONE (not a payload: clock sync,
 * free text) or TCI_ATRACE_BAD (a payload that breaks the grammar; a->why).
 * Never reads past n; linear in n. */
int tci_atrace_parse(const char *p, size_t n, tci_atrace *a);
/* The name the record takes: the event's name, or the track for G and H. */
const char *tci_atrace_record_name(const tci_atrace *a, size_t *len);

#endif /* TC_TC_ATRACE_H */
