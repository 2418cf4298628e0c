/*
 * leb128.c - tc_leb128.h against an encoder written here from the definition (DWARF 5
 * §7.6): every length from 1 to 10 bytes, both signs, the boundaries of each length, and
 * random values; the word-at-a-time readings (_fast) and the bounded ones must give the
 * value encoded and stop right after it, with bytes of the next value behind it.
 */
#define TC_BUILDING_LIBRARY 1
#include "tc_leb128.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t encode(uint8_t *out, uint64_t v, int is_signed)
{
    size_t n = 0;
    for (;;) {
        uint8_t byte = v & 0x7F;
        uint64_t rest = is_signed ? (uint64_t)((int64_t)v >> 7) : v >> 7; /* arithmetic on gcc/clang */
        int done = is_signed ? ((rest == 0 && !(byte & 0x40)) || (rest == UINT64_MAX && (byte & 0x40))) : rest == 0;
        out[n++] = done ? byte : (uint8_t)(byte | 0x80);
        if (done)
            return n;
        v = rest;
    }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

static void check_value(uint64_t v, int is_signed)
{
    uint8_t buf[32];
    memset(buf, 0xFF, sizeof buf); /* continuation bits behind the value: it must stop at its end */
    size_t n = encode(buf, v, is_signed);
    buf[n] = 0x05; /* the next value starts here */
    const uint8_t *p = buf, *q = buf;
    uint64_t got = 0, got_bounded = 0;
    int rc = is_signed ? tci_sleb_fast(&p, &got) : tci_uleb_fast(&p, &got);
    int rc_bounded = is_signed ? tci_sleb(&q, buf + n, &got_bounded) : tci_uleb(&q, buf + n, &got_bounded);
    CHECK_EQ_INT(rc, TCI_LEB_OK);
    CHECK_EQ_INT(rc_bounded, TCI_LEB_OK);
    CHECK(got == v);
    CHECK(got_bounded == v);
    CHECK_EQ_INT(p - buf, (long long)n);
    CHECK_EQ_INT(q - buf, (long long)n);
    if (got != v || got_bounded != v)
        fprintf(stderr, "  %s value 0x%llx (%zu bytes): fast 0x%llx, bounded 0x%llx\n", is_signed ? "signed" : "unsigned",
                (unsigned long long)v, n, (unsigned long long)got, (unsigned long long)got_bounded);
}

static void every_length(void)
{
    for (unsigned bits = 0; bits <= 64; bits++) {
        uint64_t top = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        check_value(top, 0), check_value(top + 1, 0), check_value(top >> 1, 0);
        check_value(top, 1), check_value(~top, 1), check_value(~top + 1, 1), check_value(top >> 1, 1);
    }
    check_value((uint64_t)INT64_MIN, 1);
    check_value((uint64_t)INT64_MAX, 1);
}

static void random_values(void)
{
    for (int i = 0; i < 200000; i++) {
        uint64_t v = next_random() >> (next_random() % 64);
        check_value(v, 0);
        check_value(i & 1 ? v : 0 - v, 1);
    }
}

/* tci_leb_triple: a signed value then two unsigned ones, read from one word when all three
 * end in its 8 bytes (0 otherwise), as the one-by-one readings read them. */
static void triples(void)
{
    int fitted = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t v[3];
        for (int k = 0; k < 3; k++)
            v[k] = next_random() >> (next_random() % 64 < 40 ? 50 + next_random() % 14 : next_random() % 64);
        v[0] = i & 1 ? 0 - v[0] : v[0];
        uint8_t buf[48];
        memset(buf, 0xFF, sizeof buf);
        size_t n = encode(buf, v[0], 1);
        n += encode(buf + n, v[1], 0);
        n += encode(buf + n, v[2], 0);
        uint64_t a = 1, b = 1, c = 1;
        unsigned len = tci_leb_triple(buf, &a, &b, &c);
        if (n <= 8) {
            fitted++;
            CHECK_EQ_INT(len, (long long)n);
            CHECK(a == v[0] && b == v[1] && c == v[2]);
        } else {
            CHECK_EQ_INT(len, 0);
        }
    }
    CHECK(fitted > 1000); /* the draw reaches the word's case */
}

/* tci_leb_word_at: the word at every offset of 16 bytes, from their two halves. */
static void words_at(void)
{
    uint8_t buf[24];
    for (int i = 0; i < 24; i++)
        buf[i] = (uint8_t)next_random();
    for (unsigned off = 0; off <= 8; off++)
        CHECK(tci_leb_word_at(tci_le64(buf), tci_le64(buf + 8), off) == tci_le64(buf + off));
}

static void overlong_and_short(void)
{
    uint8_t buf[16];
    memset(buf, 0x80, sizeof buf); /* eleven continuation bytes: more than 64 bits */
    const uint8_t *p = buf;
    uint64_t v;
    CHECK_EQ_INT(tci_uleb_fast(&p, &v), TCI_LEB_OVERLONG);
    p = buf;
    CHECK_EQ_INT(tci_sleb_fast(&p, &v), TCI_LEB_OVERLONG);
    p = buf;
    CHECK_EQ_INT(tci_uleb(&p, buf + 3, &v), TCI_LEB_END); /* runs past its end */
    CHECK(p == buf);
}

int main(void)
{
    UNIT_RUN(every_length);
    UNIT_RUN(random_values);
    UNIT_RUN(triples);
    UNIT_RUN(words_at);
    UNIT_RUN(overlong_and_short);
    return UNIT_DONE();
}
