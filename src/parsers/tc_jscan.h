/*
 * tc_jscan.h - JSON read without a tree, for the readers of JSON input.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_JSCAN_H
#define TC_TC_JSCAN_H

#include "tc_base.h"

/* ---- jscan.c: JSON read without a tree (readers of JSON input) -------------- */

/* A scanner over s[0, n): pos is the next byte; after a failure, where it went wrong.
 * src (or NULL): the mapped input s lies in, whose pages are given back as the
 * scanner moves on, also inside one large value. */
/* As deep as cJSON goes (CJSON_NESTING_LIMIT): what one accepts, the other does. */
#define TCI_JSCAN_MAX_DEPTH 1000

typedef struct tci_jscan {
    const char *s;
    size_t n, pos;
    struct tci_source *src;
    size_t release_at;
    bool too_deep; /* the failure: a value nested deeper than the scanner goes (JSON_MAX_DEPTH) */
} tci_jscan;
/* A raw value in the text (a string with its quotes); p NULL: absent. */
typedef struct tci_jspan {
    const char *p;
    size_t n;
} tci_jspan;
void tci_jscan_ws(tci_jscan *sc);
/* Skip the value at pos, validated as cJSON would (nesting depth 1000), without allocating. */
bool tci_jscan_value(tci_jscan *sc);
/* An object's "key" and its colon; key, len: the raw bytes between the quotes. */
bool tci_jscan_key(tci_jscan *sc, const char **key, size_t *len);
/* The object at pos, validated and skipped; vals[i]: the first member named keys[i] (short keys). */
bool tci_jscan_object(tci_jscan *sc, const char *const *keys, size_t n_keys, tci_jspan *vals);
/* The keys of tci_jscan_members, measured and hashed once for all the objects a reader
 * scans with them (at most TCI_JKEYS_MAX; more are never found). */
#define TCI_JKEYS_MAX 32
typedef struct tci_jkeys {
    const char *const *keys;
    size_t n;
    uint64_t word[TCI_JKEYS_MAX]; /* the first 8 bytes of each (fewer: zeros after) */
    uint8_t len[TCI_JKEYS_MAX];
    uint8_t slot[64];             /* open addressing by word and length: key index + 1, 0 empty */
} tci_jkeys;
void tci_jkeys_init(tci_jkeys *k, const char *const *keys, size_t n_keys);
/* tci_jscan_object with prepared keys. */
bool tci_jscan_members(tci_jscan *sc, const tci_jkeys *k, tci_jspan *vals);
/* tci_jscan_members, and the numbers found read at once rather than skipped and read
 * again: bit i of *numbered says num[i] holds vals[i]'s value, exactly as
 * tci_jspan_number reads it (the common forms; any other is left to it). */
bool tci_jscan_members_num(tci_jscan *sc, const tci_jkeys *k, tci_jspan *vals, double *num, uint32_t *numbered);
/* The string literal raw[0, n) (between its quotes, validated) decoded into out[0, cap):
 * returns the decoded length (bytes past cap are counted, not written). A \u escape
 * of half a surrogate pair becomes U+FFFD and is counted in *lone. */
size_t tci_json_unescape(const char *raw, size_t n, char *out, size_t cap, uint64_t *lone);
bool tci_jspan_is_string(tci_jspan v);
/* A number, or a string that holds exactly one (as some writers quote them); finite only. */
bool tci_jspan_number(tci_jspan v, double *out);

#endif /* TC_TC_JSCAN_H */
