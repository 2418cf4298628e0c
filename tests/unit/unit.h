/*
 * unit.h - the smallest test harness that says where it failed.
 *
 * A unit test program is a list of `static void test_x(void)` functions run
 * from main() with UNIT_RUN(test_x); each CHECK that fails prints file:line and
 * the expression, and the program exits 1 at the end. UNIT_DONE() prints the
 * plain closing line "N passed, N failed" that CI reads.
 *
 * Programs that test internals define TC_BUILDING_LIBRARY and include
 * the tc_*.h headers of src/ (tests/CMakeLists.txt: tc_unit_test(... INTERNAL)).
 */
#ifndef TC_UNIT_H
#define TC_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failed_checks, unit_passed, unit_failed;
static const char *unit_current;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__,         \
                    unit_current, #cond);                                                \
            unit_failed_checks++;                                                        \
        }                                                                                \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                               \
    do {                                                                                 \
        long long unit_a_ = (long long)(a), unit_b_ = (long long)(b);                    \
        if (unit_a_ != unit_b_) {                                                        \
            fprintf(stderr, "%s:%d: %s: %s == %lld, expected %s == %lld\n", __FILE__,    \
                    __LINE__, unit_current, #a, unit_a_, #b, unit_b_);                   \
            unit_failed_checks++;                                                        \
        }                                                                                \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                               \
    do {                                                                                 \
        const char *unit_a_ = (a), *unit_b_ = (b);                                       \
        if (!unit_a_ || !unit_b_ || strcmp(unit_a_, unit_b_)) {                          \
            fprintf(stderr, "%s:%d: %s: %s == \"%s\", expected \"%s\"\n", __FILE__,      \
                    __LINE__, unit_current, #a, unit_a_ ? unit_a_ : "(null)",            \
                    unit_b_ ? unit_b_ : "(null)");                                       \
            unit_failed_checks++;                                                        \
        }                                                                                \
    } while (0)

#define UNIT_RUN(fn)                                                                     \
    do {                                                                                 \
        int unit_before_ = unit_failed_checks;                                           \
        unit_current = #fn;                                                              \
        fn();                                                                            \
        if (unit_failed_checks == unit_before_)                                          \
            unit_passed++;                                                               \
        else                                                                             \
            unit_failed++;                                                               \
    } while (0)

#define UNIT_DONE()                                                                      \
    (printf("%d passed, %d failed\n", unit_passed, unit_failed), unit_failed ? 1 : 0)

/* A growing, NUL-terminated buffer that a sink writes into (tci_sink_open_fn's callback).
 * It doubles: a realloc per write copied the whole buffer each time under ASan (minutes for
 * the 4 MB of sink_numbers). */
typedef struct unit_buf {
    char *p;
    size_t len, cap;
} unit_buf;

static inline int unit_to_buf(void *user, const void *p, size_t n)
{
    unit_buf *b = user;
    if (!b->p || b->len + n + 1 > b->cap) {
        size_t cap = b->cap > 64 ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            abort();
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

#endif
