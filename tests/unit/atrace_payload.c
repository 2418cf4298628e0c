/*
 * atrace_payload.c - the core's atrace payload grammar (src/parsers/atrace.c),
 * which the systrace and Rhea readers share. Expected values come from the
 * grammar as libcutils writes it and Perfetto reads it (SYSTRACE.md §3.3).
 */
#include "tc_atrace.h"
#include "tc_reader.h"
#include "unit.h"

#include <stdlib.h>
#include <time.h>

/* Parse a string literal (its length from sizeof, so embedded NULs count). */
#define PARSE(lit, a) tci_atrace_parse((lit), sizeof(lit) - 1, (a))

static bool field_is(const char *p, size_t n, const char *want, size_t want_len)
{
    return p && n == want_len && !memcmp(p, want, n);
}
#define NAME_IS(a, lit) field_is((a).name, (a).name_len, (lit), sizeof(lit) - 1)
#define TRACK_IS(a, lit) field_is((a).track, (a).track_len, (lit), sizeof(lit) - 1)
#define CAT_IS(a, lit) field_is((a).category, (a).category_len, (lit), sizeof(lit) - 1)

static bool record_name_is(const tci_atrace *a, const char *want)
{
    size_t len;
    const char *p = tci_atrace_record_name(a, &len);
    return field_is(p, len, want, strlen(want));
}

static void test_begin(void)
{
    tci_atrace a;
    CHECK_EQ_INT(PARSE("B|1234|Choreographer#doFrame", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.kind, 'B');
    CHECK_EQ_INT(a.action, TCI_ACT_ENTER);
    CHECK(a.has_pid);
    CHECK_EQ_INT(a.pid, 1234);
    CHECK(NAME_IS(a, "Choreographer#doFrame"));
    /* the name is everything after B|pid| (Perfetto), bars included */
    CHECK_EQ_INT(PARSE("B|7|a|b|c", &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "a|b|c"));
    /* trailing NUL and newline are the writer's, not the name's */
    CHECK_EQ_INT(PARSE("B|7|name\n\0", &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "name"));
    /* an empty name is Perfetto's placeholder, so the slice still pairs with its E */
    CHECK_EQ_INT(PARSE("B|7|", &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "[empty slice name]"));
    CHECK_EQ_INT(PARSE("B|7", &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "[empty slice name]"));
}

static void test_nul_inside_a_name(void)
{
    tci_atrace a;
    CHECK_EQ_INT(PARSE("B|42|a\0b", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.name_len, 3);
    CHECK(NAME_IS(a, "a\0b"));
    CHECK_EQ_INT(PARSE("C|42|q\0q|9", &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "q\0q"));
    CHECK(a.value == 9.0);
    CHECK_EQ_INT(PARSE("S|42|\0x|3", &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "\0x"));
    CHECK_EQ_INT(a.cookie, 3);
    /* a NUL is not a field separator: the pid field "4\0" is not a number */
    CHECK_EQ_INT(PARSE("B|4\0|x", &a), TCI_ATRACE_BAD);
}

static void test_end(void)
{
    tci_atrace a;
    CHECK_EQ_INT(PARSE("E", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_EXIT);
    CHECK(!a.has_pid);
    CHECK_EQ_INT(PARSE("E|", &a), TCI_ATRACE_OK);
    CHECK(!a.has_pid);
    CHECK_EQ_INT(PARSE("E|1234", &a), TCI_ATRACE_OK);
    CHECK(a.has_pid);
    CHECK_EQ_INT(a.pid, 1234);
    /* MTK, Rockchip and RheaTrace 1.x write E|pid|name: the name is kept, never matched */
    CHECK_EQ_INT(PARSE("E|1234|Class:method", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_EXIT);
    CHECK(NAME_IS(a, "Class:method"));
    CHECK_EQ_INT(PARSE("E|x", &a), TCI_ATRACE_BAD);
    CHECK(a.why != NULL);
}

static void test_counter(void)
{
    tci_atrace a;
    /* the case the two readers disagreed on: value 5, category gfx */
    CHECK_EQ_INT(PARSE("C|42|queue|5|gfx", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_COUNTER);
    CHECK_EQ_INT(a.pid, 42);
    CHECK(NAME_IS(a, "queue"));
    CHECK(a.value == 5.0);
    CHECK(CAT_IS(a, "gfx"));
    CHECK_EQ_INT(PARSE("C|42|queue|-17", &a), TCI_ATRACE_OK);
    CHECK(a.value == -17.0);
    CHECK_EQ_INT(a.category_len, 0);
    CHECK_EQ_INT(PARSE("C|42|q|9223372036854775807", &a), TCI_ATRACE_OK);
    CHECK(a.value == 9223372036854775807.0);
    CHECK_EQ_INT(PARSE("C|42|q|-9223372036854775808", &a), TCI_ATRACE_OK);
    CHECK(a.value == -9223372036854775808.0);
    CHECK_EQ_INT(PARSE("C|42|q|2.5", &a), TCI_ATRACE_OK);
    CHECK(a.value == 2.5);
    CHECK_EQ_INT(PARSE("C|42|q|-0.25|cat", &a), TCI_ATRACE_OK);
    CHECK(a.value == -0.25);
    CHECK(CAT_IS(a, "cat"));
    /* malformed: overflow, not a number, exponent, missing fields, empty name */
    CHECK_EQ_INT(PARSE("C|42|q|9223372036854775808", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|-9223372036854775809", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|99999999999999999999999", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|99999999999999999999.5", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|five", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|1e5", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|nan", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|0x10", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q|.", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42|q", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42||5", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|42", &a), TCI_ATRACE_BAD);
    CHECK(a.why != NULL);
}

static void test_async_and_instants(void)
{
    tci_atrace a;
    CHECK_EQ_INT(PARSE("S|1636|frame_capture|123", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_ASYNC_BEGIN);
    CHECK(NAME_IS(a, "frame_capture"));
    CHECK_EQ_INT(a.cookie, 123);
    CHECK_EQ_INT(PARSE("F|1636|frame_capture|-456", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_ASYNC_END);
    CHECK_EQ_INT(a.cookie, -456);
    CHECK_EQ_INT(PARSE("S|1636|n|", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("S|1636|n", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("S|1636||5", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("F|1636|n|9223372036854775808", &a), TCI_ATRACE_BAD);

    CHECK_EQ_INT(PARSE("I|4820|instant", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_INSTANT);
    CHECK(NAME_IS(a, "instant"));
    CHECK_EQ_INT(PARSE("I|4820|", &a), TCI_ATRACE_BAD);

    CHECK_EQ_INT(PARSE("N|1938|track_name|instant_name", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_INSTANT);
    CHECK(TRACK_IS(a, "track_name"));
    CHECK(NAME_IS(a, "instant_name"));
    CHECK(record_name_is(&a, "instant_name"));
    CHECK_EQ_INT(PARSE("N|1938|track_name|", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("N|1938||name", &a), TCI_ATRACE_BAD);

    /* G/H: async on a named track; both ends are named by the track */
    CHECK_EQ_INT(PARSE("G|1339|track_name|slice_name|789", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_ASYNC_BEGIN);
    CHECK(TRACK_IS(a, "track_name"));
    CHECK(NAME_IS(a, "slice_name"));
    CHECK_EQ_INT(a.cookie, 789);
    CHECK(record_name_is(&a, "track_name"));
    CHECK_EQ_INT(PARSE("H|6890|track_name|slice_name|135", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.action, TCI_ACT_ASYNC_END);
    CHECK_EQ_INT(a.cookie, 135);
    CHECK(record_name_is(&a, "track_name"));
    CHECK_EQ_INT(PARSE("H|6890|track_name|135", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.cookie, 135);
    CHECK_EQ_INT(PARSE("G|1339|track_name|slice_name|", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("G|1339||slice_name|1", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("H|6890|track_name|", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("H|6890||135", &a), TCI_ATRACE_BAD);
}

static void test_pid(void)
{
    tci_atrace a;
    CHECK_EQ_INT(PARSE("B|4294967295|x", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.pid, 4294967295u);
    CHECK_EQ_INT(PARSE("B|4294967296|x", &a), TCI_ATRACE_BAD); /* beyond a uint32 */
    CHECK_EQ_INT(PARSE("B|-1|x", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("B|12a|x", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("B||x", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("I", &a), TCI_ATRACE_BAD);
    CHECK_EQ_INT(PARSE("C|", &a), TCI_ATRACE_BAD);
    CHECK(a.why != NULL);
}

static void test_not_a_payload(void)
{
    tci_atrace a;
    CHECK_EQ_INT(PARSE("trace_event_clock_sync: parent_ts=1.0", &a), TCI_ATRACE_NONE);
    CHECK_EQ_INT(PARSE("Begin something", &a), TCI_ATRACE_NONE);
    CHECK_EQ_INT(PARSE("X|1|name", &a), TCI_ATRACE_NONE);
    CHECK_EQ_INT(PARSE("", &a), TCI_ATRACE_NONE);
    CHECK_EQ_INT(PARSE("\0", &a), TCI_ATRACE_NONE);
    CHECK_EQ_INT(tci_atrace_parse("B|1|x", 0, &a), TCI_ATRACE_NONE);
    /* only n bytes are read: "B|1|xyz" cut after the bar is an empty name */
    CHECK_EQ_INT(tci_atrace_parse("B|1|xyz", 4, &a), TCI_ATRACE_OK);
    CHECK(NAME_IS(a, "[empty slice name]"));
}

/* A payload with n bars, in the heap so ASan sees any read past its end. */
static char *bars(const char *head, size_t n_bars, const char *tail, size_t *len)
{
    size_t hl = strlen(head), tl = strlen(tail);
    *len = hl + n_bars + tl;
    char *p = malloc(*len);
    memcpy(p, head, hl);
    memset(p + hl, '|', n_bars);
    memcpy(p + hl + n_bars, tail, tl);
    return p;
}

static double parse_seconds(const char *p, size_t n, int *rc)
{
    tci_atrace a;
    clock_t t0 = clock();
    *rc = tci_atrace_parse(p, n, &a);
    return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

static void test_many_bars(void)
{
    static const char *const heads[] = {"B|1|x", "E|1|x", "C|1|x", "S|1|x", "F|1|x", "I|1|x",
                                        "N|1|t", "G|1|t", "H|1|t"};
    for (size_t k = 0; k < sizeof heads / sizeof *heads; k++) {
        size_t len, len4;
        char *p = bars(heads[k], 40000, "7", &len), *p4 = bars(heads[k], 160000, "7", &len4);
        tci_atrace a;
        int rc = tci_atrace_parse(p, len, &a), rc4;
        CHECK(rc == TCI_ATRACE_OK || rc == TCI_ATRACE_BAD);
        if (heads[k][0] == 'B') {
            CHECK_EQ_INT(rc, TCI_ATRACE_OK);
            CHECK_EQ_INT(a.name_len, 40002); /* "x", the bars, "7" */
        }
        /* linear: well under a millisecond; the old H path took 9 s for 40,000 bars
         * (one field search from the start per field), so 160,000 would take minutes */
        double t4 = parse_seconds(p4, len4, &rc4);
        CHECK_EQ_INT(rc4, rc);
        if (t4 >= 0.25)
            fprintf(stderr, "%s: %.3f s to parse 160,000 bars\n", heads[k], t4);
        CHECK(t4 < 0.25);
        free(p);
        free(p4);
    }
    /* H takes its cookie from field 4, else field 3, wherever the bars run */
    tci_atrace a;
    CHECK_EQ_INT(PARSE("H|1|t|n|5|||||||", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.cookie, 5);
    CHECK_EQ_INT(PARSE("H|1|t|5|||||||", &a), TCI_ATRACE_OK);
    CHECK_EQ_INT(a.cookie, 5);
}

int main(void)
{
    UNIT_RUN(test_begin);
    UNIT_RUN(test_nul_inside_a_name);
    UNIT_RUN(test_end);
    UNIT_RUN(test_counter);
    UNIT_RUN(test_async_and_instants);
    UNIT_RUN(test_pid);
    UNIT_RUN(test_not_a_payload);
    UNIT_RUN(test_many_bars);
    return UNIT_DONE();
}
