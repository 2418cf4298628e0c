/*
 * readers_threads.c - distinct tc_conv objects in different threads at once
 * (DESIGN.md §5b) for the readers that sort: Chrome JSON (X events out of
 * order) and Rhea 2.x binary dumps. Each thread converts its own inputs many
 * times; every output must equal the one made alone, before the threads ran.
 * (The JSON reader once sorted through a global qsort context.)
 */
#include "traceconv.h"
#include "unit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define ROUNDS 30

typedef struct input {
    char *data;
    size_t size;
    const char *format;
    char *want;   /* folded output made alone */
    int mismatches;
} input;

static char *convert(const input *in)
{
    tc_conv *c = tc_conv_new();
    FILE *out = tmpfile();
    char *text = NULL;
    if (c && out && tc_conv_open_memory(c, in->data, in->size, NULL, in->format) == TC_OK &&
        tc_conv_write(c, "folded", out) == TC_OK) {
        long len = ftell(out);
        if (len >= 0 && (text = calloc(1, (size_t)len + 1)) != NULL) {
            rewind(out);
            if (fread(text, 1, (size_t)len, out) != (size_t)len)
                text[0] = 0;
        }
    }
    if (out)
        fclose(out);
    tc_conv_free(c);
    return text;
}

/* X events on several threads in reverse time order, nested: the reader must sort them. */
static void make_json(input *in, int n, int threads)
{
    size_t cap = (size_t)n * 96 + 64, k = 0;
    in->data = malloc(cap);
    k += (size_t)snprintf(in->data + k, cap - k, "{\"traceEvents\":[");
    for (int i = n; i-- > 0;) {
        int t = i % threads, g = i / threads;
        k += (size_t)snprintf(in->data + k, cap - k,
                              "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":%d,\"name\":\"f%d\"}",
                              i == n - 1 ? "" : ",", t + 1, g * 10 + (g % 3), 9 - (g % 3) * 2, g % 5);
    }
    k += (size_t)snprintf(in->data + k, cap - k, "]}");
    in->size = k;
    in->format = "json";
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A Rhea 2.x binary dump: groups of a parent and two children, children written first. */
static void make_rhea(input *in, int groups)
{
    const uint64_t pid = 4000, mono = 232073280000000ull;
    in->size = 32 + (size_t)groups * 3 * 16;
    uint8_t *d = calloc(1, in->size);
    put_le(d, 5, 4);
    put_le(d + 4, pid, 4);
    put_le(d + 8, 948220911000000ull, 8);
    put_le(d + 16, mono, 8);
    put_le(d + 24, mono, 8);
    size_t off = 32;
    for (int g = 0; g < groups; g++) {
        uint64_t tid = g % 2 ? pid + 1 : pid, base = (uint64_t)g * 10000;
        uint64_t rec[3][3] = {{base + 1000, 2000, 2}, {base + 5000, 3000, 3}, {base, 9000, 1}};
        for (int r = 0; r < 3; r++, off += 16) {
            put_le(d + off, rec[r][0] << 19 | rec[r][1] >> 26, 8);
            put_le(d + off + 8, (rec[r][1] & 0x3FFFFFF) << 38 | (tid & 0x7FFF) << 23 | rec[r][2], 8);
        }
    }
    in->data = (char *)d;
    in->format = "rhea";
}

static input inputs[4];

static void *worker(void *arg)
{
    int first = *(int *)arg; /* thread 0 converts inputs 0 and 2, thread 1 inputs 1 and 3 */
    for (int round = 0; round < ROUNDS; round++)
        for (int i = first; i < 4; i += 2) {
            char *got = convert(&inputs[i]);
            if (!got || strcmp(got, inputs[i].want))
                inputs[i].mismatches++;
            free(got);
        }
    return NULL;
}

static void test_two_threads_equal_serial(void)
{
    make_json(&inputs[0], 3000, 3);
    make_json(&inputs[1], 700, 2);
    make_rhea(&inputs[2], 2000);
    make_rhea(&inputs[3], 300);
    for (int i = 0; i < 4; i++) {
        inputs[i].want = convert(&inputs[i]);
        CHECK(inputs[i].want != NULL && inputs[i].want[0]);
    }
    pthread_t th[2];
    int first[2] = {0, 1};
    for (int t = 0; t < 2; t++)
        CHECK(pthread_create(&th[t], NULL, worker, &first[t]) == 0);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < 4; i++) {
        if (inputs[i].mismatches)
            fprintf(stderr, "input %d (%s): %d of %d outputs differ from the serial one\n", i, inputs[i].format,
                    inputs[i].mismatches, ROUNDS);
        CHECK_EQ_INT(inputs[i].mismatches, 0);
        free(inputs[i].data);
        free(inputs[i].want);
    }
}

int main(void)
{
    UNIT_RUN(test_two_threads_equal_serial);
    return UNIT_DONE();
}
