/*
 * spool.c - per-stream byte sequences in bounded memory.
 *
 * A writer whose output must hold each thread's events together (speedscope:
 * one profile per thread) receives them interleaved by thread (record order
 * is only per thread). It encodes each event into its thread's stream here;
 * a stream's buffer that fills is appended as one block to an unlinked
 * temporary file (created on the first spill, so small traces never touch
 * the disk), and the blocks are read back stream by stream, in order, as
 * often as the writer needs.
 *
 * A record (what one tci_spool_room call reserved) never crosses a chunk
 * handed back by tci_spool_next, so the reader decodes whole records.
 *
 * Memory: one buffer per stream that received bytes (their sum is capped
 * near SP_BUDGET; each between SP_BLOCK_MIN and SP_BLOCK_MAX bytes), one read
 * buffer, and 16 bytes per spilled block (one per ~64 KiB) - not per record.
 * The unwritten tail of each stream stays in memory and is read from there.
 */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define SP_BLOCK_MAX (64u << 10)
#define SP_BLOCK_MIN (1u << 10)
#define SP_BUDGET (16u << 20)

struct tci_spool_block {
    uint64_t off;
    uint32_t len;
};

int tci_spool_init(tci_spool *s, uint32_t n_streams, uint64_t active, const char *module, tci_diag *d)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->diag = d;
    s->module = module;
    uint64_t block = SP_BUDGET / (active ? active : 1);
    s->block = (uint32_t)(block > SP_BLOCK_MAX ? SP_BLOCK_MAX : block < SP_BLOCK_MIN ? SP_BLOCK_MIN : block);
    if (n_streams && !(s->streams = tci_calloc(n_streams, sizeof *s->streams)))
        return TC_ERR_NOMEM;
    s->n_streams = n_streams;
    return TC_OK;
}

void tci_spool_free(tci_spool *s)
{
    for (uint32_t i = 0; i < s->n_streams && s->streams; i++) {
        free(s->streams[i].buf);
        free(s->streams[i].blocks);
    }
    free(s->streams);
    free(s->rbuf);
    if (s->fd >= 0)
        close(s->fd);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* The first failure is kept: every later call returns it. */
static int spool_fail(tci_spool *s, int status, const char *what)
{
    if (s->status == TC_OK)
        s->status = status == TC_ERR_NOMEM
                        ? TC_ERR_NOMEM
                        : tci_error(s->diag, status, s->module, UINT64_MAX, "%s: %s", what, strerror(errno));
    return s->status;
}

/* The stream's filled buffer becomes a block at the end of the temporary file. */
static int spill(tci_spool *s, tci_spool_stream *st)
{
    if (s->fd < 0 && (s->fd = tci_temp_fd("spool")) < 0)
        return spool_fail(s, TC_ERR_IO, "cannot create a temporary file");
    if (tci_grow((void **)&st->blocks, &st->cap_blocks, st->n_blocks, sizeof *st->blocks) != 0)
        return spool_fail(s, TC_ERR_NOMEM, NULL);
    uint32_t len = (uint32_t)(st->pos - st->buf);
    if (tci_write_all(s->fd, st->buf, len) != 0)
        return spool_fail(s, TC_ERR_IO, "cannot write the temporary file");
    st->blocks[st->n_blocks++] = (struct tci_spool_block){s->size, len};
    s->size += len;
    st->pos = st->buf;
    return TC_OK;
}

uint8_t *tci_spool_room_slow(tci_spool *s, uint32_t stream, uint32_t n)
{
    if (s->status != TC_OK)
        return NULL;
    if (stream >= s->n_streams || n > s->block) {
        errno = EINVAL;
        spool_fail(s, TC_ERR_FORMAT, "a record does not fit the spool");
        return NULL;
    }
    tci_spool_stream *st = &s->streams[stream];
    if (!st->buf) {
        if (!(st->buf = tci_malloc(s->block))) {
            spool_fail(s, TC_ERR_NOMEM, NULL);
            return NULL;
        }
        st->pos = st->buf;
        st->end = st->buf + s->block;
    }
    if ((size_t)(st->end - st->pos) < n && spill(s, st) != TC_OK)
        return NULL;
    return st->pos;
}

void tci_spool_rewind(tci_spool_cursor *c, uint32_t stream)
{
    c->stream = stream;
    c->next_block = 0;
    c->tail_done = false;
}

int tci_spool_next(tci_spool *s, tci_spool_cursor *c, const uint8_t **p, size_t *n)
{
    if (s->status != TC_OK)
        return s->status;
    if (c->stream >= s->n_streams)
        return 0;
    const tci_spool_stream *st = &s->streams[c->stream];
    if (c->next_block < st->n_blocks) {
        struct tci_spool_block b = st->blocks[c->next_block++];
        if (!s->rbuf && !(s->rbuf = tci_malloc(s->block)))
            return spool_fail(s, TC_ERR_NOMEM, NULL);
        for (uint32_t got = 0; got < b.len;) {
            ssize_t k = pread(s->fd, s->rbuf + got, b.len - got, (off_t)(b.off + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                if (k == 0)
                    errno = EIO; /* the file is shorter than what was written to it */
                return spool_fail(s, TC_ERR_IO, "cannot read back the temporary file");
            }
            got += (uint32_t)k;
        }
        *p = s->rbuf;
        *n = b.len;
        return 1;
    }
    if (c->tail_done || st->pos == st->buf)
        return 0;
    c->tail_done = true;
    *p = st->buf;
    *n = (size_t)(st->pos - st->buf);
    return 1;
}
