/*
 * extsort.c - sorting more records than memory should hold, for readers that
 * must reorder their input (Rhea binary slices, Chrome JSON records).
 *
 * Records are collected in one buffer of at most max_bytes. When it is full
 * it is sorted and appended to an unlinked temporary file as one run; at the
 * end the runs are merged with a binary heap, each run read through a small
 * buffer. Input that fits in one buffer never touches the disk.
 *
 * Memory: the run buffer (max_bytes) while adding; while reading, per run a
 * read buffer (their sum stays near max_bytes, at least one record each) and
 * 24 bytes - not per record. Disk: elem_size per record.
 *
 * cmp must be a total order (records carry their own tie-break, e.g. file
 * order): the merge does not keep insertion order of equal records.
 */
#include "tc_base.h"
#include "tc_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define XS_DEFAULT_BYTES ((size_t)8 << 20)
#define XS_READ_MAX ((size_t)64 << 10) /* read buffer per run, at most */

typedef struct xs_run {
    uint64_t off, count;   /* in the file: first byte, records */
    uint64_t next;         /* records of the run taken into its buffer so far */
    size_t len, pos;       /* records in the buffer, the head's index */
} xs_run;

struct tci_extsort {
    size_t esz, max_elems;
    tci_sort_cmp cmp;
    tci_sort_run sort;     /* NULL: qsort with cmp */
    void *scratch;         /* the sort's, for scratch_n records of scratch_esz bytes */
    size_t scratch_esz, scratch_n;
    uint8_t *buf;          /* adding: the run being filled; reading: the runs' read buffers */
    size_t n, cap;         /* records in buf, capacity (adding) */
    uint64_t total;
    int fd;                /* -1 until the first run spills */
    xs_run *runs;
    uint32_t n_runs, cap_runs;
    size_t per_run;        /* records per read buffer */
    uint32_t *heap;        /* run indexes, min-heap by head record */
    uint32_t n_heap;
    size_t pos;            /* in-memory mode: next record */
};

tci_extsort *tci_extsort_new(size_t elem_size, tci_sort_cmp cmp, size_t max_bytes)
{
    tci_extsort *s = tci_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->esz = elem_size;
    s->cmp = cmp;
    s->max_elems = (max_bytes ? max_bytes : XS_DEFAULT_BYTES) / elem_size;
    if (s->max_elems < 2)
        s->max_elems = 2;
    s->fd = -1;
    return s;
}

void tci_extsort_set_sort(tci_extsort *s, tci_sort_run sort, size_t scratch_per_elem)
{
    s->sort = sort;
    s->scratch_esz = scratch_per_elem;
    /* the run and its scratch together within half of max_bytes: the peak RSS for 4x the
     * slices stays within test_json_reader's bound (with all of max_bytes it grew 5 MB) */
    s->max_elems = s->max_elems * s->esz / (s->esz + scratch_per_elem) / 2;
    if (s->max_elems < 2)
        s->max_elems = 2;
}

/* The run in cmp's order: by the caller's sort with its scratch (kept from run to run,
 * gone once reading starts), or by qsort (also when there is no memory for scratch). */
static void sort_buffer(tci_extsort *s)
{
    if (s->sort && s->n > s->scratch_n) {
        free(s->scratch);
        s->scratch = tci_realloc_array(NULL, s->n, s->scratch_esz);
        s->scratch_n = s->scratch ? s->n : 0;
    }
    if (s->sort && s->scratch)
        s->sort(s->buf, s->n, s->scratch);
    else
        qsort(s->buf, s->n, s->esz, s->cmp);
}

static void drop_scratch(tci_extsort *s)
{
    free(s->scratch);
    s->scratch = NULL;
    s->scratch_n = 0;
}

/* Sort the buffer and append it to the file as one run. */
static int spill(tci_extsort *s)
{
    if (!s->n)
        return 0;
    sort_buffer(s);
    if (s->fd < 0 && (s->fd = tci_temp_fd("sort")) < 0)
        return -1;
    if (tci_grow((void **)&s->runs, &s->cap_runs, s->n_runs, sizeof *s->runs) != 0) {
        errno = ENOMEM;
        return -1;
    }
    uint64_t off = s->n_runs ? s->runs[s->n_runs - 1].off + s->runs[s->n_runs - 1].count * s->esz : 0;
    if (tci_write_all(s->fd, s->buf, s->n * s->esz) != 0)
        return -1;
    s->runs[s->n_runs++] = (xs_run){.off = off, .count = s->n};
    s->n = 0;
    return 0;
}

int tci_extsort_add(tci_extsort *s, const void *elem)
{
    if (s->n == s->max_elems && spill(s) != 0)
        return -1;
    if (s->n == s->cap) { /* double, but never past one run: small sorts stay small */
        size_t cap = s->cap ? s->cap * 2 : 64;
        if (cap > s->max_elems)
            cap = s->max_elems;
        uint8_t *p = tci_realloc_array(s->buf, cap, s->esz);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        s->buf = p;
        s->cap = cap;
    }
    memcpy(s->buf + s->n * s->esz, elem, s->esz);
    s->n++;
    s->total++;
    return 0;
}

uint64_t tci_extsort_count(const tci_extsort *s) { return s->total; }

static uint8_t *run_head(const tci_extsort *s, uint32_t r)
{
    return s->buf + ((size_t)r * s->per_run + s->runs[r].pos) * s->esz;
}

/* Fill run r's buffer from the file: 1 records there, 0 the run is done, -1 error. */
static int refill(tci_extsort *s, uint32_t r)
{
    xs_run *u = &s->runs[r];
    uint64_t left = u->count - u->next;
    if (!left)
        return 0;
    size_t k = left < s->per_run ? (size_t)left : s->per_run;
    uint8_t *dst = s->buf + (size_t)r * s->per_run * s->esz;
    size_t want = k * s->esz, got = 0;
    off_t at = (off_t)(u->off + u->next * s->esz);
    while (got < want) {
        ssize_t n = pread(s->fd, dst + got, want - got, at + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO; /* the file is shorter than what was written to it */
            return -1;
        }
        got += (size_t)n;
    }
    u->next += k;
    u->len = k;
    u->pos = 0;
    return 1;
}

static bool heap_less(const tci_extsort *s, uint32_t a, uint32_t b)
{
    return s->cmp(run_head(s, a), run_head(s, b)) < 0;
}

static void sift_down(tci_extsort *s, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->n_heap && heap_less(s, s->heap[l], s->heap[m]))
            m = l;
        if (r < s->n_heap && heap_less(s, s->heap[r], s->heap[m]))
            m = r;
        if (m == i)
            return;
        uint32_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

int tci_extsort_rewind(tci_extsort *s)
{
    s->pos = 0;
    if (!s->n_runs)
        return 0;
    s->n_heap = 0;
    for (uint32_t r = 0; r < s->n_runs; r++) {
        s->runs[r].next = 0;
        int k = refill(s, r);
        if (k < 0)
            return -1;
        if (k)
            s->heap[s->n_heap++] = r;
    }
    for (uint32_t i = s->n_heap / 2; i-- > 0;)
        sift_down(s, i);
    return 0;
}

int tci_extsort_done(tci_extsort *s)
{
    if (!s->n_runs) { /* it all fits: sort in place, no file */
        if (s->n)
            sort_buffer(s);
        drop_scratch(s);
        return 0;
    }
    int rc = spill(s);
    drop_scratch(s);
    if (rc != 0)
        return -1;
    free(s->buf);
    size_t per = s->max_elems / s->n_runs, most = XS_READ_MAX / s->esz;
    s->per_run = per < 1 ? 1 : per > most && most ? most : per;
    s->buf = tci_realloc_array(NULL, (size_t)s->n_runs * s->per_run, s->esz);
    s->heap = tci_realloc_array(NULL, s->n_runs, sizeof *s->heap);
    if (!s->buf || !s->heap) {
        errno = ENOMEM;
        return -1;
    }
    return tci_extsort_rewind(s);
}

int tci_extsort_next(tci_extsort *s, void *out)
{
    if (!s->n_runs) {
        if (s->pos >= s->n)
            return 0;
        memcpy(out, s->buf + s->pos++ * s->esz, s->esz);
        return 1;
    }
    if (!s->n_heap)
        return 0;
    uint32_t r = s->heap[0];
    memcpy(out, run_head(s, r), s->esz);
    xs_run *u = &s->runs[r];
    if (++u->pos == u->len) {
        int k = refill(s, r);
        if (k < 0)
            return -1;
        if (!k)
            s->heap[0] = s->heap[--s->n_heap];
    }
    if (s->n_heap)
        sift_down(s, 0);
    return 1;
}

void tci_extsort_free(tci_extsort *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->runs);
    free(s->heap);
    free(s->scratch);
    free(s);
}
