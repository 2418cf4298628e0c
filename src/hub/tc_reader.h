/*
 * tc_reader.h - what a reader is and what it reads from: the reader descriptor, the input source, the
 * SIGBUS guard, the external sort and the spool.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_READER_H
#define TC_TC_READER_H

#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "tc_base.h"

/* ---- readers ------------------------------------------------------------ */

enum tci_action {
    TCI_ACT_ENTER = 0, TCI_ACT_EXIT = 1, TCI_ACT_UNWIND = 2, TCI_ACT_INVALID = 3, /* ART's action bits */
    TCI_ACT_INSTANT = 4, TCI_ACT_COUNTER = 5, TCI_ACT_ASYNC_BEGIN = 6, TCI_ACT_ASYNC_END = 7,
    TCI_ACT_SAMPLE = 8, /* id: a stack (tci_trace_stack), value: weight in ns */
    /* A system event (tc_trace.h: TCI_EV_SCHED_SWITCH...): action TCI_ACT_SYS + (kind -
     * TCI_EV_SYS_FIRST); id, cpu (the packed prios) and value as the event's id, cpu_ns
     * and value; method TCI_NONE. */
    TCI_ACT_SYS = 9
};
#define TCI_ACT_SYS_LAST (TCI_ACT_SYS + TCI_EV_SYS_KINDS - 1)

/* One input record as a reader sees it: raw times in the reader's unit.
 * An EXIT or UNWIND with method TCI_NONE closes the innermost open frame
 * (systrace's bare "E"). */
typedef struct tci_raw {
    int64_t wall;    /* TCI_NO_TIME when the input has none */
    int64_t cpu;     /* TCI_NO_TIME when the input has none */
    uint64_t offset; /* byte offset of the record, for messages */
    double value;    /* COUNTER */
    uint64_t id;     /* ASYNC_*: the cookie */
    uint32_t thread, method;
    uint8_t action;
} tci_raw;

/* Records per read() call: big enough to amortize the call, small enough for L1. */
#define TCI_RAW_BATCH 256

/* ---- readers: the descriptor and its context ---- */

/* A transform of the tables between normalize's passes (deobfuscation, src/transform/): the
 * method table is complete and no name has been shown yet. The hub knows only this hook. */
typedef struct tci_transform {
    int (*apply)(void *state, tci_trace *t, tci_diag *d); /* NULL: none */
    void *state;
} tci_transform;

typedef struct tci_rctx {
    void *priv;
    const uint8_t *data; /* the whole input (mmapped or spooled) */
    size_t size;
    tci_trace *trace;
    tci_diag *diag;
    const tci_options *opt;
    int pass;            /* 1: first pass (tables may grow), 2: events */
    uint64_t pos;        /* byte offset reached, for progress and messages */
    struct tci_source *source; /* lets normalize release pages already read */
    /* The input's path when it is a real file opened by path; NULL for memory
     * and stdin. Side files (mappings) are looked for beside it only. */
    const char *input_file;
    tci_transform transform;   /* applied by normalize after pass 1 (option deobfuscate) */
    tci_transform select;      /* applied after the names are final, before the tables freeze (select.c) */
} tci_rctx;

typedef struct tci_reader {
    const char *name, *description, *extensions;
    /* Other names -i takes for it, comma-separated, in any case ("atrace,ftrace"): the
     * names people type. Unique among every reader's names and aliases (test_format_names). */
    const char *aliases;
    const tci_option_def *options; /* the options it reads (NULL-key terminated); NULL: none */
    size_t priv_size;
    /* 0..100 from the first bytes (len may be short) and the file name; pure. */
    int (*probe)(const uint8_t *buf, size_t len, const char *filename);
    int (*open)(tci_rctx *r);                /* header and tables */
    /* Up to max records into ev, count in *n: TC_OK (n > 0), TC_EOF (n == 0) or < 0. */
    int (*read)(tci_rctx *r, tci_raw *ev, size_t max, size_t *n);
    int (*rewind)(tci_rctx *r);              /* back to the first record for pass 2 */
    void (*close)(tci_rctx *r);              /* always called; tolerates a partial open */
    /* An input kept in two files, read as one source: parts[0], then parts[1] (ART's legacy
     * pairs: name.key, then name.data). Given one path (other NULL: tc_conv_open), the other
     * part is found beside it, never elsewhere (DESIGN.md §5b); given both
     * (tc_conv_open_pair), they are put in order. TC_OK with parts[] malloc'd; an error,
     * reported in d; or TCI_NOT_A_PAIR (other NULL only): path is an input of its own.
     * NULL: the format has no such inputs. */
    int (*pair_parts)(const char *path, const char *other, char *parts[2], tci_diag *d);
    /* Optional: pass 1 on two threads (option threads; normalize.c, split_pass). Before pass 1,
     * cut the records at a record boundary near their middle, where a read of TCI_RAW_BATCH
     * records ends on one thread too (every read before the cut returns the same records as
     * without it: the messages of a batch, the reader's then normalize's, keep their order
     * when the rest is read again after a failed stitch): r reads [start, cut) from now on,
     * and *child (a copy of r; the hook sets its priv) reads [cut, end) from another thread
     * without touching anything r owns or shares: the tables are read-only to it, and a record
     * that would grow one or warn is an error (in child->diag, a private one). TC_OK, or
     * TCI_NO_SPLIT when this input cannot be cut so (nothing changed). join(r, child), called
     * once the child thread has stopped, frees the child and gives r the records after the cut
     * back (r goes on from where it stopped). NULL: the format cannot be cut. */
    int (*split)(tci_rctx *r, tci_rctx *child);
    void (*join)(tci_rctx *r, tci_rctx *child);
} tci_reader;
#define TCI_NOT_A_PAIR 1
#define TCI_NO_SPLIT 1

/* ---- input source -------------------------------------------------------- */

typedef struct tci_source {
    const uint8_t *data;
    size_t size;
    bool mapped;      /* data is an mmap to unmap */
    bool gzipped;     /* the input was gzip-compressed */
    void *owned;      /* heap copy when mmap is impossible */
    uint64_t released; /* pages before this offset were given back (tci_source_release) */
    int guard;        /* 1 + the guard.c slot watching the mapping (ours or the caller's); 0 none */
    bool guard_owned; /* the slot is ours: released by tci_source_close */
} tci_source;

/* Open path ("-" = stdin): mmap regular files, spool streams and gzip to a temp file. */
int tci_source_open(tci_source *s, const char *path, const tci_options *o, tci_diag *d);
/* Two files read as one (a legacy .key + .data pair), through a spool file. */
int tci_source_open_concat(tci_source *s, const char *first, const char *second, const tci_options *o,
                           tci_diag *d);
/* The same over a caller's buffer (borrowed; gzip is inflated into a spool file). */
int tci_source_open_memory(tci_source *s, const uint8_t *data, size_t size, const tci_options *o, tci_diag *d);
/* The zlib stream data[0, len) that a reader found in its input (at input
 * offset base; messages name module) inflated into an unlinked temporary file
 * and mapped as s, with gzip input's guard: at most max-input bytes, and more
 * than 200:1 beyond 256 MiB refused as a bomb. Bytes after the stream's end
 * are ignored. The reader owns s: it releases pages as it reads
 * (tci_source_release) and closes it. */
int tci_source_inflate(tci_source *s, const uint8_t *data, size_t len, const char *module, uint64_t base,
                       const tci_options *o, tci_diag *d);
/* A text a reader makes from its input (legacy systrace's JavaScript string, decoded), kept
 * as the input is: written into an unlinked temporary file, then mapped as a source, so that
 * memory stays flat whatever its size. At most max-input bytes. */
typedef struct tci_textspool {
    int fd;
    uint64_t total, max;
    uint8_t *buf;   /* what is not written yet */
    size_t len;
    const char *module;
    tci_diag *diag;
} tci_textspool;
int tci_textspool_open(tci_textspool *w, const char *module, const tci_options *o, tci_diag *d);
int tci_textspool_put(tci_textspool *w, const void *p, size_t n);
/* The text written, mapped as s (the writer is closed, whatever the result). */
int tci_textspool_map(tci_textspool *w, tci_source *s);
void tci_textspool_close(tci_textspool *w); /* after a failure: nothing is mapped */
void tci_source_close(tci_source *s);
/* Readers move forward: drop mapped pages before `upto` so peak memory stays flat on huge inputs.
 * A reader that starts again from the front (pass 2) is noticed: its pages go back again. */
void tci_source_release(tci_source *s, uint64_t upto);
/* Give back the whole pages of [from, to) now (a reader that scanned them out of order). */
void tci_source_drop(tci_source *s, uint64_t from, uint64_t to);
/* 0 while the mapped input is intact; else 1 + the offset at which its bytes
 * were found gone (the file shrank under the mapping: guard.c). */
uint64_t tci_source_changed(const tci_source *s);

/* ---- guard.c: a mapped input that shrinks while it is read (SIGBUS) ---------- */

/* Watch [addr, addr+len) of a file mapping: a SIGBUS there maps zero pages
 * over the rest of it and marks it changed (the process-wide handler is
 * installed on the first call). The slot, or -1 (table full, no handler: the
 * mapping is then read unguarded). owned: the library's own mapping, which
 * tc_unguard_mapping must not release. Remove the slot before the munmap. */
int tci_guard_add(const void *addr, size_t len, bool owned);
void tci_guard_remove(int slot);
/* The slot watching all of [addr, addr+len) (a caller's mapping), or -1. */
int tci_guard_find(const void *addr, size_t len);
/* 0 while the slot's mapping is intact; else 1 + the offset, counted from data, of the first fault. */
uint64_t tci_guard_fault(int slot, const void *data);
/* The error of a conversion whose input changed under it ("input changed while
 * reading", TC_ERR_IO), replacing whatever the reader said about the zeros. */
int tci_guard_error(tci_diag *d, uint64_t offset);

/* ---- external sort: readers that reorder more records than memory should hold (extsort.c) ---- */

/* A total order on records (they carry their own tie-break); no context, so no global state. */
typedef int (*tci_sort_cmp)(const void *a, const void *b);
typedef struct tci_extsort tci_extsort;
/* Sorted runs of at most max_bytes (0: 8 MiB) spill to an unlinked temporary
 * file and are merged: memory stays near max_bytes whatever the count. */
tci_extsort *tci_extsort_new(size_t elem_size, tci_sort_cmp cmp, size_t max_bytes); /* NULL: no memory */
int tci_extsort_add(tci_extsort *s, const void *elem); /* 0, or -1 with errno */
int tci_extsort_done(tci_extsort *s);                  /* no more adds; reading starts (0 / -1 errno) */
int tci_extsort_next(tci_extsort *s, void *out);       /* 1 a record, 0 the end, -1 errno */
int tci_extsort_rewind(tci_extsort *s);                /* read from the first record again */
uint64_t tci_extsort_count(const tci_extsort *s);
void tci_extsort_free(tci_extsort *s);
/* A run's sort in place, into cmp's order, where the caller knows a faster way than
 * qsort (cmp still merges the runs); scratch: scratch_per_elem * n bytes of its own,
 * counted in max_bytes with the run. Set before the first add. */
typedef void (*tci_sort_run)(void *base, size_t n, void *scratch);
void tci_extsort_set_sort(tci_extsort *s, tci_sort_run sort, size_t scratch_per_elem);

/* ---- spool: per-stream byte sequences in bounded memory (spool.c) ------------ */

/* A caller appends encoded records to numbered streams (a writer: one per
 * thread) in any interleaving; full buffers spill as blocks to one unlinked
 * temporary file; each stream is read back in order, as many times as
 * needed. Memory: one buffer per stream used (their sum capped near 16 MiB),
 * not per record. */
typedef struct tci_spool_stream {
    uint8_t *buf;                    /* the block being filled; NULL until the first record */
    uint8_t *pos, *end;              /* where the next record goes; the end of buf (NULL: none) */
    struct tci_spool_block *blocks;  /* spilled, in order */
    uint32_t n_blocks, cap_blocks;
} tci_spool_stream;
typedef struct tci_spool {
    tci_spool_stream *streams;
    uint32_t n_streams;
    uint32_t block;      /* bytes per buffer: the largest record that fits */
    int fd;              /* the temporary file; -1 until the first spill */
    uint64_t size;
    uint8_t *rbuf;       /* reading: one spilled block */
    int status;          /* the first failure, kept: every later call fails with it */
    const char *module;  /* names the user in messages */
    tci_diag *diag;
} tci_spool;
typedef struct tci_spool_cursor {
    uint32_t stream, next_block;
    bool tail_done;
} tci_spool_cursor;

/* active: how many streams will receive records (sizes the buffers). */
int tci_spool_init(tci_spool *s, uint32_t n_streams, uint64_t active, const char *module, tci_diag *d);
void tci_spool_free(tci_spool *s);
uint8_t *tci_spool_room_slow(tci_spool *s, uint32_t stream, uint32_t n);
/* Where the next record of stream goes, with room for n bytes (n <= s->block);
 * NULL on failure (s->status). Write it, then tci_spool_wrote its end. */
static inline uint8_t *tci_spool_room(tci_spool *s, uint32_t stream, uint32_t n)
{
    if (TCI_LIKELY(stream < s->n_streams)) {
        tci_spool_stream *st = &s->streams[stream];
        if (TCI_LIKELY((size_t)(st->end - st->pos) >= n))
            return st->pos;
    }
    return tci_spool_room_slow(s, stream, n);
}
static inline void tci_spool_wrote(tci_spool *s, uint32_t stream, uint8_t *end)
{
    s->streams[stream].pos = end;
}
/* Reading: rewind a cursor to a stream, then each call hands back the next
 * chunk of whole records (valid until the next call): 1 a chunk, 0 the
 * stream's end, < 0 an error (also kept in s->status). */
void tci_spool_rewind(tci_spool_cursor *c, uint32_t stream);
int tci_spool_next(tci_spool *s, tci_spool_cursor *c, const uint8_t **p, size_t *n);

#endif /* TC_TC_READER_H */
