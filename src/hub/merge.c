/*
 * merge.c - global time order for writers flagged TCI_WF_GLOBAL_ORDER.
 *
 * normalize emits events in input order, which is ordered per thread but not
 * globally (Android 14+ ART writes per-thread chunks). Writers such as
 * systrace need one timeline in time order. Holding every event would make
 * memory grow with the trace, so pass 2 spills instead:
 *
 *   spill: each thread's events (already in that thread's time order) are
 *          encoded compactly into a per-thread buffer; a full buffer is
 *          appended as one block to an unlinked temporary file (TMPDIR, else
 *          /tmp) and its (offset, length) remembered. A thread's blocks in
 *          file order are its run.
 *   merge: a k-way merge over the runs with a binary heap keyed by
 *          (timestamp, thread index); each run keeps one block in memory.
 *          Equal timestamps of one thread keep that thread's own order (a run
 *          is read front to back), equal timestamps of different threads go
 *          by thread index (join.c asks for an exit first among them: one
 *          slice ending as another begins on a shared track).
 *   The merge is pushed (tci_merge_run) or pulled (tci_merge_start and
 *   tci_merge_next, join.c's reader); a pull can start again and read the
 *   spilled runs once more (normalize's second pass).
 *
 * Memory: one buffer per active thread (their sum is capped near
 * MG_BUDGET; each is between MG_BLOCK_MIN and MG_BLOCK_MAX bytes) plus 16
 * bytes per spilled block (one per ~64 KiB of encoded events) - not per
 * event. Disk: ~5-10 bytes per event.
 *
 * Encoding of one event (the thread is implied by the run):
 *   byte    kind (bits 0-2) | flags (bits 3-5) | has_cpu (0x40) | has_extra (0x80)
 *   [byte   kind]  when the kind is above 7 (the system events): bits 0-2 are then 0,
 *                  which no kind is
 *   varint  zigzag(ts - previous ts of the run), modular (lossless for any int64)
 *   [varint zigzag(cpu - previous cpu of the run)]  when has_cpu
 *   varint  method, varint depth
 *   [8 bytes value (the double's bits), varint id]  when has_extra (value or id non-zero)
 * At most MG_REC_MAX bytes.
 */
#include "tc_base.h"
#include "tc_conv.h"
#include "tc_diag.h"
#include "tc_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MG_BLOCK_MAX (64u << 10)
#define MG_BLOCK_MIN (1u << 10)
#define MG_BUDGET (16u << 20)
#define MG_REC_MAX 64u /* 2 + 10 + 10 + 5 + 5 + 8 + 10 = 50 */

typedef struct mg_block {
    uint64_t off;
    uint32_t len;
} mg_block;

typedef struct mg_run {
    uint8_t *buf;        /* spill: bytes not yet written; merge: the block being read */
    uint32_t len, pos;
    mg_block *blocks;
    uint32_t n_blocks, cap_blocks, next_block;
    int64_t prev_ts, prev_cpu; /* delta bases (spill and merge walk the same sequence) */
    tci_event head;      /* merge: the run's next event */
} mg_run;

struct tci_merge {
    int fd;
    uint64_t size;       /* bytes in the temporary file */
    mg_run *runs;
    uint32_t n_runs;
    uint32_t block;      /* buffer size per thread */
    uint32_t *heap;      /* run indexes, min-heap by (head.ts_ns, run) */
    uint32_t n_heap;
    tci_diag *diag;
    bool spilled;        /* every run is in the file: a restart reads it again */
    bool exits_first;    /* equal times of different runs: an exit before the rest (join.c) */
};

int tci_merge_open(tci_merge **out, const tci_trace *t, tci_diag *d)
{
    uint64_t active = 0;
    for (uint32_t i = 0; i < t->n_threads; i++)
        active += t->threads[i].records != 0;
    return tci_merge_open_runs(out, t->n_threads, active, d);
}

int tci_merge_open_runs(tci_merge **out, uint32_t n_runs, uint64_t active, tci_diag *d)
{
    *out = NULL;
    tci_merge *m = tci_calloc(1, sizeof *m);
    if (!m)
        return TC_ERR_NOMEM;
    m->fd = -1;
    m->diag = d;
    m->n_runs = n_runs;
    uint64_t block = MG_BUDGET / (active ? active : 1);
    m->block = (uint32_t)(block > MG_BLOCK_MAX ? MG_BLOCK_MAX : block < MG_BLOCK_MIN ? MG_BLOCK_MIN : block);
    if (m->n_runs && (!(m->runs = tci_calloc(m->n_runs, sizeof *m->runs)) ||
                      !(m->heap = tci_calloc(m->n_runs, sizeof *m->heap)))) {
        tci_merge_free(m);
        return TC_ERR_NOMEM;
    }
    if ((m->fd = tci_temp_fd("merge")) < 0) {
        int rc = tci_error(d, TC_ERR_IO, "merge", UINT64_MAX, "cannot create a temporary file: %s", strerror(errno));
        tci_merge_free(m);
        return rc;
    }
    *out = m;
    return TC_OK;
}

void tci_merge_exits_first(tci_merge *m) { m->exits_first = true; }

void tci_merge_free(tci_merge *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->n_runs && m->runs; i++) {
        free(m->runs[i].buf);
        free(m->runs[i].blocks);
    }
    free(m->runs);
    free(m->heap);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
}

/* ---- encoding ------------------------------------------------------------- */

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t zigzag(uint64_t delta) { return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63); }
static inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/* Bytes come from our own file, but a short or damaged read must not run off the block. */
static inline int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *v = x;
            return 0;
        }
    }
    return -1;
}

static int write_all(tci_merge *m, const uint8_t *p, size_t n)
{
    if (tci_write_all(m->fd, p, n) == 0)
        return TC_OK;
    return tci_error(m->diag, TC_ERR_IO, "merge", UINT64_MAX,
                     "cannot write the temporary file of the global-order merge: %s", strerror(errno));
}

static int flush_run(tci_merge *m, mg_run *r)
{
    if (!r->len)
        return TC_OK;
    if (tci_grow((void **)&r->blocks, &r->cap_blocks, r->n_blocks, sizeof *r->blocks) != 0)
        return TC_ERR_NOMEM;
    int rc = write_all(m, r->buf, r->len);
    if (rc != TC_OK)
        return rc;
    r->blocks[r->n_blocks++] = (mg_block){m->size, r->len};
    m->size += r->len;
    r->len = 0;
    return TC_OK;
}

int tci_merge_add(tci_merge *m, const tci_event *ev)
{
    if (TCI_UNLIKELY(ev->thread >= m->n_runs))
        return tci_error(m->diag, TC_ERR_FORMAT, "merge", UINT64_MAX, "event of an unknown thread %u", ev->thread);
    mg_run *r = &m->runs[ev->thread];
    if (TCI_UNLIKELY(!r->buf) && !(r->buf = tci_malloc(m->block)))
        return TC_ERR_NOMEM;
    if (r->len + MG_REC_MAX > m->block) {
        int rc = flush_run(m, r);
        if (rc != TC_OK)
            return rc;
    }
    uint8_t *p = r->buf + r->len;
    bool has_cpu = ev->cpu_ns != TCI_NO_TIME, extra = ev->value != 0 || ev->id != 0;
    bool wide_kind = ev->kind > 7;
    *p++ = (uint8_t)((wide_kind ? 0 : ev->kind) | (ev->flags & 7) << 3 | (has_cpu ? 0x40 : 0) | (extra ? 0x80 : 0));
    if (wide_kind)
        *p++ = ev->kind;
    p = put_varint(p, zigzag((uint64_t)ev->ts_ns - (uint64_t)r->prev_ts));
    r->prev_ts = ev->ts_ns;
    if (has_cpu) {
        p = put_varint(p, zigzag((uint64_t)ev->cpu_ns - (uint64_t)r->prev_cpu));
        r->prev_cpu = ev->cpu_ns;
    }
    p = put_varint(p, ev->method);
    p = put_varint(p, ev->depth);
    if (extra) {
        memcpy(p, &ev->value, 8);
        p = put_varint(p + 8, ev->id);
    }
    r->len = (uint32_t)(p - r->buf);
    return TC_OK;
}

/* ---- merging --------------------------------------------------------------- */

/* The run's next event into head: 1 one, 0 the run is done, < 0 error. */
static int next_event(tci_merge *m, uint32_t run)
{
    mg_run *r = &m->runs[run];
    if (r->pos == r->len) {
        if (r->next_block == r->n_blocks)
            return 0;
        mg_block b = r->blocks[r->next_block++];
        for (uint32_t got = 0; got < b.len;) {
            ssize_t k = pread(m->fd, r->buf + got, b.len - got, (off_t)(b.off + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return tci_error(m->diag, TC_ERR_IO, "merge", UINT64_MAX,
                                 "cannot read back the temporary file of the global-order merge: %s",
                                 k < 0 ? strerror(errno) : "short file");
            got += (uint32_t)k;
        }
        r->len = b.len;
        r->pos = 0;
    }
    const uint8_t *p = r->buf + r->pos, *end = r->buf + r->len;
    tci_event *ev = &r->head;
    uint64_t v, method, depth;
    uint8_t tag = *p++, kind = tag & 7;
    if (kind == 0) { /* a system event: its kind follows */
        if (p == end)
            goto bad;
        kind = *p++;
    }
    if (get_varint(&p, end, &v) != 0)
        goto bad;
    ev->ts_ns = r->prev_ts = (int64_t)((uint64_t)r->prev_ts + unzigzag(v));
    ev->cpu_ns = TCI_NO_TIME;
    if (tag & 0x40) {
        if (get_varint(&p, end, &v) != 0)
            goto bad;
        ev->cpu_ns = r->prev_cpu = (int64_t)((uint64_t)r->prev_cpu + unzigzag(v));
    }
    if (get_varint(&p, end, &method) != 0 || get_varint(&p, end, &depth) != 0)
        goto bad;
    ev->value = 0;
    ev->id = 0;
    if (tag & 0x80) {
        if (end - p < 8)
            goto bad;
        memcpy(&ev->value, p, 8);
        p += 8;
        if (get_varint(&p, end, &ev->id) != 0)
            goto bad;
    }
    ev->thread = run;
    ev->method = (uint32_t)method;
    ev->depth = (uint32_t)depth;
    ev->kind = kind;
    ev->flags = (tag >> 3) & 7;
    r->pos = (uint32_t)(p - r->buf);
    return 1;
bad:
    return tci_error(m->diag, TC_ERR_IO, "merge", UINT64_MAX, "the temporary file of the global-order merge is damaged");
}

static inline bool before(const tci_merge *m, uint32_t a, uint32_t b)
{
    const tci_event *ea = &m->runs[a].head, *eb = &m->runs[b].head;
    if (ea->ts_ns != eb->ts_ns)
        return ea->ts_ns < eb->ts_ns;
    if (m->exits_first) { /* a slice that ends when another begins does not hold it */
        bool xa = ea->kind == TCI_EV_EXIT, xb = eb->kind == TCI_EV_EXIT;
        if (xa != xb)
            return xa;
    }
    return a < b;
}

static void sift_down(tci_merge *m, uint32_t i)
{
    uint32_t *h = m->heap, n = m->n_heap, x = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(m, h[c + 1], h[c]))
            c++;
        if (!before(m, h[c], x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* Every run into the file (once), then each run from its first block again: its
 * buffer becomes its read buffer. */
int tci_merge_start(tci_merge *m)
{
    int rc;
    m->n_heap = 0;
    for (uint32_t i = 0; i < m->n_runs; i++) {
        mg_run *r = &m->runs[i];
        if (!m->spilled && (rc = flush_run(m, r)) != TC_OK)
            return rc;
        r->len = r->pos = 0;
        r->next_block = 0;
        r->prev_ts = r->prev_cpu = 0;
        if (r->n_blocks && !r->buf && !(r->buf = tci_malloc(m->block)))
            return TC_ERR_NOMEM;
        if ((rc = next_event(m, i)) < 0)
            return rc;
        if (rc == 1)
            m->heap[m->n_heap++] = i;
    }
    m->spilled = true;
    for (uint32_t i = m->n_heap / 2; i-- > 0;)
        sift_down(m, i);
    return TC_OK;
}

int tci_merge_next(tci_merge *m, tci_event *ev)
{
    if (!m->n_heap)
        return 0;
    uint32_t run = m->heap[0];
    *ev = m->runs[run].head;
    int rc = next_event(m, run);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        m->heap[0] = m->heap[--m->n_heap];
        free(m->runs[run].buf); /* done with this run */
        m->runs[run].buf = NULL;
    }
    if (m->n_heap)
        sift_down(m, 0);
    return 1;
}

int tci_merge_run(tci_merge *m, tci_event_fn fn, void *user)
{
    int rc = tci_merge_start(m), more;
    tci_event ev;
    while (rc == TC_OK && (more = tci_merge_next(m, &ev)) != 0)
        rc = more < 0 ? more : fn(user, &ev);
    return rc;
}
