/*
 * tc_artlr.h - ART's long-running-method dump (ART.md §6, §11): one decoder of
 * its chunks, thread, method and summary packets, for the readers of the dump
 * as a file (art_longrun.c) and inside Perfetto traces (pftrace.c).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_ARTLR_H
#define TC_TC_ARTLR_H

#include "tc_base.h"
#include "tc_diag.h"
#include "tc_reader.h"
#include "tc_trace.h"

#define TCI_ARTLR_VERSION 0xF6u /* kVersionLongRunningV2 (6) with the streaming bit */

/* A dump in memory: its bytes, where they are in the input, and the read cursor. */
typedef struct tci_artlr {
    const uint8_t *p;
    size_t n;
    uint64_t base;       /* input offset of p[0]: messages name input offsets */
    const char *note;    /* appended to messages ("" or where a decoded dump came from) */
    const char *module;  /* the reader that names itself in messages */
    tci_diag *diag;
    bool slow;           /* the SLOW 0xF6 form (else headerless) */
    int64_t header_start; /* SLOW: the producer's monotonic ns at session start */
    bool has_summary;     /* SLOW: the 17-byte 0x03 summary record after the header */
    size_t body;          /* the first chunk or packet (or the summary record after the header) */
    /* cursor */
    size_t pos, chunk_end;
    uint32_t left, tid;   /* records left in the current chunk, its thread */
    uint64_t acc_time, acc_method; /* the chunk's accumulators (start at 0 per chunk) */
} tci_artlr;

/* What the decoder found at the cursor. */
enum tci_artlr_kind { TCI_ARTLR_RECORD, TCI_ARTLR_THREAD, TCI_ARTLR_METHOD, TCI_ARTLR_SUMMARY };
typedef struct tci_artlr_item {
    enum tci_artlr_kind kind;
    uint64_t offset;      /* input offset (base + dump offset) */
    uint32_t tid;         /* RECORD, THREAD */
    int64_t ts;           /* RECORD: absolute monotonic ns */
    bool is_exit;         /* RECORD */
    uint64_t method;      /* RECORD (entries), METHOD: the ArtMethod* */
    const char *text;     /* THREAD: the name; METHOD: "class\tname\tsig\tsource\n" */
    size_t len;
    uint64_t summary[2];  /* SUMMARY: its two u64 */
} tci_artlr_item;

/* Does [p, p+n) begin like a dump (header or first packet, and a little decoded)? Pure, cheap:
 * looks at no more than the first few KiB. */
bool tci_artlr_plausible(const uint8_t *p, size_t n);
/* The header; the cursor after it (a summary record there is the first item). TC_OK or an error reported in d. */
int tci_artlr_open(tci_artlr *lr, const uint8_t *p, size_t n, uint64_t base, const char *note, const char *module,
                   tci_diag *d);
void tci_artlr_rewind(tci_artlr *lr);
/* The next item: TC_OK, TC_EOF at the dump's end, or an error (reported: offset, what was wrong). */
int tci_artlr_next(tci_artlr *lr, tci_artlr_item *it);
/* The earliest record time of the dump (each chunk's first record: times grow within a chunk),
 * from the chunk headers alone; INT64_MAX when it holds no record. */
int64_t tci_artlr_earliest(const tci_artlr *lr);

/* ---- feeding a dump into the trace: the part both readers share ---- */

/* Where a dump's threads and methods go: process, and the keys that keep two processes apart. */
typedef struct tci_artlr_sink {
    uint32_t process;     /* index into the trace's processes */
    tci_idmap *methods;   /* ArtMethod* -> method index of this process, owned by the reader (NULL:
                           * one process, the trace's own method ids are the pointers) */
    uint64_t tid_key;     /* ORed into tids for the thread map: process << 32 (both 32 bits) */
    tci_idmap *threads;   /* (tid_key | tid) -> thread index, owned by the reader */
    int64_t origin;       /* the trace's start_ns: raw wall times are measured from it */
} tci_artlr_sink;

/* Up to max records of lr into ev (pass 1 also names threads, defines methods and keeps each summary
 * record's two values as the metadata summary-timestamps): TC_OK with
 * *n > 0, TC_EOF (*n == 0) at the dump's end, or an error. */
int tci_artlr_read(tci_rctx *r, tci_artlr *lr, const tci_artlr_sink *s, tci_raw *ev, size_t max, size_t *n);
/* Set what every long-running input shares: ns times, wall clock only, no wrap. */
void tci_artlr_trace_setup(tci_trace *t);

#endif /* TC_TC_ARTLR_H */
