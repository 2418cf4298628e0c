/*
 * extsort.c - the core's external sort (src/hub/extsort.c): records come
 * back in the comparator's order whether they fit in one run or spill to many,
 * a rewind reads the same sequence again, and an empty sort reads nothing.
 * The expected order is an independent model: a counting pass over the keys.
 */
#include "tc_reader.h"
#include "unit.h"

#include <stdlib.h>

typedef struct rec {
    uint32_t key;
    uint32_t pad;
    uint64_t order; /* insertion order: the tie-break */
} rec;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* n records with keys from a small LCG, sorted with runs of max_bytes; checked twice (rewind). */
static void sort_and_check(size_t n, size_t max_bytes)
{
    enum { KEYS = 97 };
    tci_extsort *s = tci_extsort_new(sizeof(rec), cmp_rec, max_bytes);
    CHECK(s != NULL);
    if (!s)
        return;
    uint64_t count[KEYS] = {0};
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        rec r = {(x >> 8) % KEYS, 0, i};
        count[r.key]++;
        CHECK(tci_extsort_add(s, &r) == 0);
    }
    CHECK(tci_extsort_done(s) == 0);
    CHECK_EQ_INT(tci_extsort_count(s), n);
    for (int pass = 0; pass < 2; pass++) {
        uint64_t seen[KEYS] = {0}, got = 0;
        rec prev = {0, 0, 0}, r;
        bool ordered = true;
        int k;
        while ((k = tci_extsort_next(s, &r)) == 1) {
            if (got && cmp_rec(&prev, &r) >= 0)
                ordered = false;
            if (r.key < KEYS)
                seen[r.key]++;
            prev = r;
            got++;
        }
        CHECK_EQ_INT(k, 0);
        CHECK(ordered);
        CHECK_EQ_INT(got, n);
        CHECK(memcmp(seen, count, sizeof seen) == 0);
        CHECK(tci_extsort_rewind(s) == 0);
    }
    tci_extsort_free(s);
}

static void test_empty(void) { sort_and_check(0, 0); }
static void test_one_run_in_memory(void) { sort_and_check(1000, 0); }
static void test_many_runs_on_disk(void) { sort_and_check(100000, 4096); }      /* 391 runs of 256 */
static void test_runs_of_two_records(void) { sort_and_check(5000, 1); }         /* 2500 runs, 1-record buffers */
static void test_uneven_last_run(void) { sort_and_check(1001, 16 * 100); }

int main(void)
{
    UNIT_RUN(test_empty);
    UNIT_RUN(test_one_run_in_memory);
    UNIT_RUN(test_many_runs_on_disk);
    UNIT_RUN(test_runs_of_two_records);
    UNIT_RUN(test_uneven_last_run);
    return UNIT_DONE();
}
