/*
 * core_spool.c - the per-stream spool (spool.c) that writers regrouping
 * events by thread use: records appended to streams in an arbitrary
 * interleaving come back per stream, in order, byte for byte, in chunks of
 * whole records, through many spilled blocks, as many times as asked; a
 * small spool never creates its file; a record too big or a stream out of
 * range fails cleanly. The expected sequences are kept here, independently.
 */
#include "tc_diag.h"
#include "tc_reader.h"
#include "unit.h"

#include <stdlib.h>

#define N_STREAMS 7
#define N_RECORDS 400000 /* ~8 MB: many blocks per stream */

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A record: its length (5..40), its stream, its sequence number in the
 * stream (4 bytes), then bytes derived from all three. */
static size_t make_record(uint8_t *p, uint32_t stream, uint32_t seq)
{
    size_t len = 5 + (size_t)((seq * 2654435761u + stream) % 36);
    p[0] = (uint8_t)len;
    p[1] = (uint8_t)stream;
    memcpy(p + 2, &seq, 3);
    for (size_t i = 5; i < len; i++)
        p[i] = (uint8_t)(seq * 31 + i * 7 + stream);
    return len;
}

/* Reads stream back: each chunk holds whole records, in sequence: the count, or -1. */
static long read_stream(tci_spool *s, uint32_t stream)
{
    tci_spool_cursor c;
    tci_spool_rewind(&c, stream);
    const uint8_t *p;
    size_t n;
    uint32_t seq = 0;
    int rc;
    uint8_t want[64];
    while ((rc = tci_spool_next(s, &c, &p, &n)) == 1) {
        size_t at = 0;
        while (at < n) {
            size_t len = make_record(want, stream, seq);
            if (at + len > n || memcmp(p + at, want, len) != 0) /* a record across chunks, or wrong bytes */
                return -1;
            at += len;
            seq++;
        }
    }
    return rc == 0 ? (long)seq : -1;
}

static void test_many_blocks_in_order(void)
{
    tci_spool s;
    tci_diag d = {0};
    CHECK_EQ_INT(tci_spool_init(&s, N_STREAMS, N_STREAMS, "test", &d), TC_OK);
    uint32_t count[N_STREAMS] = {0};
    uint8_t rec[64];
    for (size_t i = 0; i < N_RECORDS; i++) {
        uint32_t st = (uint32_t)(next_rand() % (N_STREAMS - 1)); /* the last stream stays empty */
        if (st == 2 && (next_rand() & 7)) /* one stream much smaller than the others */
            continue;
        size_t len = make_record(rec, st, count[st]);
        uint8_t *p = tci_spool_room(&s, st, (uint32_t)len);
        CHECK(p != NULL);
        if (!p)
            break;
        memcpy(p, rec, len);
        tci_spool_wrote(&s, st, p + len);
        count[st]++;
    }
    CHECK(s.fd >= 0);
    CHECK(s.size > (4u << 20)); /* most of it went to the file, not to memory */
    for (int pass = 0; pass < 2; pass++) /* read twice: the same sequences */
        for (uint32_t st = 0; st < N_STREAMS; st++)
            CHECK_EQ_INT(read_stream(&s, st), count[st]);
    CHECK_EQ_INT(count[N_STREAMS - 1], 0);
    /* interleaved cursors do not disturb each other */
    tci_spool_cursor a, b;
    tci_spool_rewind(&a, 0);
    tci_spool_rewind(&b, 1);
    const uint8_t *p;
    size_t n;
    CHECK_EQ_INT(tci_spool_next(&s, &a, &p, &n), 1);
    CHECK_EQ_INT(p[1], 0);
    CHECK_EQ_INT(tci_spool_next(&s, &b, &p, &n), 1);
    CHECK_EQ_INT(p[1], 1);
    CHECK_EQ_INT(tci_spool_next(&s, &a, &p, &n), 1);
    CHECK_EQ_INT(p[1], 0);
    tci_spool_free(&s);
}

static void test_small_stays_in_memory(void)
{
    tci_spool s;
    tci_diag d = {0};
    CHECK_EQ_INT(tci_spool_init(&s, 3, 3, "test", &d), TC_OK);
    uint8_t rec[64];
    for (uint32_t seq = 0; seq < 20; seq++) {
        size_t len = make_record(rec, 1, seq);
        uint8_t *p = tci_spool_room(&s, 1, (uint32_t)len);
        CHECK(p != NULL);
        memcpy(p, rec, len);
        tci_spool_wrote(&s, 1, p + len);
    }
    CHECK_EQ_INT(s.fd, -1);
    CHECK_EQ_INT(read_stream(&s, 1), 20);
    CHECK_EQ_INT(read_stream(&s, 0), 0);
    CHECK_EQ_INT(read_stream(&s, 7), 0); /* a stream out of range reads as empty */
    tci_spool_free(&s);
}

static void test_bounded_buffers(void)
{
    tci_spool s;
    tci_diag d = {0};
    CHECK_EQ_INT(tci_spool_init(&s, 100000, 100000, "test", &d), TC_OK);
    CHECK_EQ_INT(s.block, 1024); /* many streams: small buffers, their sum near the budget */
    tci_spool_free(&s);
    CHECK_EQ_INT(tci_spool_init(&s, 2, 2, "test", &d), TC_OK);
    CHECK_EQ_INT(s.block, 65536);
    tci_spool_free(&s);
}

static void test_refusals(void)
{
    tci_spool s;
    tci_diag d = {0};
    CHECK_EQ_INT(tci_spool_init(&s, 2, 100000, "test", &d), TC_OK);
    CHECK(tci_spool_room(&s, 0, s.block + 1) == NULL);
    CHECK(s.status != TC_OK);
    CHECK(strstr(d.error, "test") != NULL);
    CHECK(tci_spool_room(&s, 0, 4) == NULL); /* the failure is kept */
    tci_spool_free(&s);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(tci_spool_init(&s, 2, 2, "test", &d), TC_OK);
    CHECK(tci_spool_room(&s, 2, 4) == NULL); /* no such stream */
    tci_spool_free(&s);
}

int main(void)
{
    UNIT_RUN(test_many_blocks_in_order);
    UNIT_RUN(test_small_stays_in_memory);
    UNIT_RUN(test_bounded_buffers);
    UNIT_RUN(test_refusals);
    return UNIT_DONE();
}
