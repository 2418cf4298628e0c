/*
 * nearmiss.c - the edit distance of every "did you mean" (src/util/nearmiss.c), against
 * distances worked out by hand: one edit each of an insertion, a deletion, a substitution
 * and a swap of neighbours (optimal string alignment: "ca" to "abc" is 3, not Damerau's 2),
 * ASCII case ignored, and the limit: past it, limit + 1, as for texts of 128 bytes or more.
 */
#include "nearmiss.h"
#include "unit.h"

static uint32_t dist(const char *a, const char *b, uint32_t limit)
{
    return tci_edit_distance(a, strlen(a), b, strlen(b), limit);
}

static void test_one_edit(void)
{
    CHECK_EQ_INT(dist("main", "main", 2), 0);
    CHECK_EQ_INT(dist("mian", "main", 2), 1);           /* a swap of neighbours */
    CHECK_EQ_INT(dist("josn", "json", 2), 1);
    CHECK_EQ_INT(dist("perfeto", "perfetto", 2), 1);    /* an insertion */
    CHECK_EQ_INT(dist("foldedd", "folded", 2), 1);      /* a deletion */
    CHECK_EQ_INT(dist("colour", "colors", 2), 2);       /* a deletion and a substitution */
    CHECK_EQ_INT(dist("ONCREATE", "onCreate", 2), 0);   /* case is no edit */
    CHECK_EQ_INT(dist("", "abc", 5), 3);
    CHECK_EQ_INT(dist("ca", "abc", 5), 3);              /* OSA: a swapped pair is not edited again */
    CHECK_EQ_INT(dist("kitten", "sitting", 5), 3);
}

static void test_limit(void)
{
    CHECK_EQ_INT(dist("kitten", "sitting", 2), 3);      /* past the limit: limit + 1 */
    CHECK_EQ_INT(dist("a", "abcdefgh", 2), 3);          /* the lengths alone are past it */
    CHECK_EQ_INT(dist("abcdef", "uvwxyz", 1), 2);
    char long_name[200];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK_EQ_INT(dist(long_name, long_name, 4), 5);     /* 128 bytes or more: never near */
    long_name[127] = 0;
    CHECK_EQ_INT(dist(long_name, long_name, 4), 0);     /* 127: compared */
}

int main(void)
{
    UNIT_RUN(test_one_edit);
    UNIT_RUN(test_limit);
    return UNIT_DONE();
}
