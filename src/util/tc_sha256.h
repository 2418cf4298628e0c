/*
 * tc_sha256.h - SHA-256, for a page's Content-Security-Policy hashes.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_SHA256_H
#define TC_TC_SHA256_H

#include "tc_base.h"

/* ---- SHA-256 (sha256.c): a page's Content-Security-Policy hashes ---------- */

typedef struct tci_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t n;
} tci_sha256;
void tci_sha256_init(tci_sha256 *s);
void tci_sha256_update(tci_sha256 *s, const void *data, size_t len);
void tci_sha256_final(tci_sha256 *s, uint8_t out[32]);
/* The digest in base64 (44 characters and a NUL), as CSP's 'sha256-...' writes it. */
void tci_sha256_base64(const uint8_t digest[32], char out[45]);

#endif /* TC_TC_SHA256_H */
