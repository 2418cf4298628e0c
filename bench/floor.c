/*
 * floor.c - the parse floor of `make bench` (issue 26, goal 5): the least work any
 * converter must do on an ART method trace, timed so that each writer's MB/s can be
 * given as a share of it.
 *
 *   parse_floor FILE   prints "SECONDS RECORDS DEPTHSUM CHECKSUM" on one line
 *
 * The scan decodes every record of the data section (thread id, method word, action,
 * times) and keeps a per-thread call depth: an enter pushes, an exit or unwind pops (never
 * below 0). Nothing else: no tables, no clock unwrap, no events. SECONDS is the scan's
 * own time (the file is mapped and its pages faulted in before the clock starts, so
 * it measures decoding, not the page cache); DEPTHSUM is the sum of the threads' depths
 * at the end and CHECKSUM a sum of the time fields, printed so that no part of the decode
 * can be optimized away (and so that a test can check the scan against another reader).
 *
 * Written from shared/docs/formats/ART.md (§3: "*version" key text up to "*end\n", the
 * 32-byte "SLOW" header with the data offset at +6 and the record size at +16 from
 * version 3, records of u16 tid | u32 method word | u32 time [| u32 time]; §4: streaming
 * 0xF1..0xF3, where tid 0 escapes a method, thread or summary item), independently of
 * src/readers/art.c: it shares no code with the library, so the floor does not move when
 * the reader does. A file it cannot read is one line on stderr and exit 1.
 */
#define _GNU_SOURCE /* memmem (macOS: _DARWIN_C_SOURCE, CMakeLists.txt), MAP_POPULATE (Linux) */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* little-endian hosts only, as the bench runs on */
    return v;
}

typedef struct layout {
    size_t data;      /* first record */
    size_t rec_size;  /* bytes per record, tid included */
    size_t tid_size;  /* 1 (v1) or 2 */
    size_t ntimes;    /* time fields after the method word: 1 or 2 */
    int streaming;
} layout;

static int fail(const char *path, const char *why)
{
    fprintf(stderr, "parse_floor: %s: %s\n", path, why);
    return 1;
}

/* The SLOW header at h (after the key text, or at 0 for a stream). */
static const char *read_header(const uint8_t *base, size_t size, size_t h, layout *l)
{
    if (size - h < 18 || le32(base + h) != 0x574F4C53u)
        return "no SLOW header";
    uint32_t version = le16(base + h + 4);
    size_t off = le16(base + h + 6);
    l->streaming = (version & 0xF0) == 0xF0;
    version &= 0x0F;
    if (version < 1 || version > 3)
        return "not a v1-v3 trace";
    l->tid_size = version == 1 ? 1 : 2;
    l->rec_size = version == 1 ? 9 : 10;
    if (version == 3 || l->streaming)
        l->rec_size = le16(base + h + 16);
    if (l->rec_size < l->tid_size + 8 || off < 16 || off > size - h)
        return "implausible header";
    l->ntimes = l->rec_size >= l->tid_size + 12 ? 2 : 1;
    l->data = h + off;
    return NULL;
}

typedef struct totals {
    uint64_t records, checksum;
    uint32_t depth[65536];
} totals;

/* One record at p: the depth of its thread moves, its times go into the checksum. Inlined
 * into each loop, so the fixed v3 loop below gets its layout as constants. */
static inline __attribute__((always_inline)) void scan_record(totals *t, const layout *l, const uint8_t *p)
{
    uint32_t tid = l->tid_size == 1 ? p[0] : le16(p);
    uint32_t word = le32(p + l->tid_size);
    uint32_t d = t->depth[tid];
    t->depth[tid] = (word & 3) == 0 ? d + 1 : d - (d > 0);
    t->checksum += le32(p + l->tid_size + 4);
    if (l->ntimes == 2)
        t->checksum += le32(p + l->tid_size + 8);
    t->records++;
}

/* Non-streaming: records to the end of the file; the fixed v3 layout gets its own loop. */
static void scan_records(totals *t, const layout *l, const uint8_t *p, const uint8_t *end)
{
    if (l->tid_size == 2 && l->rec_size == 14) {
        static const layout v3 = {0, 14, 2, 2, 0};
        for (; end - p >= 14; p += 14)
            scan_record(t, &v3, p);
        return;
    }
    for (; (size_t)(end - p) >= l->rec_size; p += l->rec_size)
        scan_record(t, l, p);
}

/* Streaming: tid 0 escapes an item (ART.md §4.1), which is skipped. */
static const char *scan_stream(totals *t, const layout *l, const uint8_t *p, const uint8_t *end)
{
    while (end - p >= 2) {
        if (le16(p)) {
            if ((size_t)(end - p) < l->rec_size)
                break;
            scan_record(t, l, p);
            p += l->rec_size;
            continue;
        }
        if (end - p < 3)
            break;
        size_t skip;
        switch (p[2]) {
        case 1: skip = end - p < 5 ? SIZE_MAX : 5 + le16(p + 3); break;
        case 2: skip = end - p < 7 ? SIZE_MAX : 7 + le16(p + 5); break;
        case 3: skip = end - p < 7 ? SIZE_MAX : 7 + (size_t)le32(p + 3); break;
        default: return "unknown stream item";
        }
        if (skip > (size_t)(end - p))
            break; /* cut inside an item: what came before counts */
        p += skip;
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: parse_floor FILE.trace\n");
        return 2;
    }
    const char *path = argv[1];
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 18)
        return fail(path, "cannot read it, or too short");
    size_t size = (size_t)st.st_size;
#if !defined(MAP_POPULATE)
#define MAP_POPULATE 0 /* not Linux: the pages come in as the scan reads them */
#endif
    const uint8_t *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return fail(path, "cannot map it");
    size_t h = 0;
    if (memcmp(base, "*version\n", 9) == 0) {
        const uint8_t *e = memmem(base, size, "\n*end\n", 6);
        if (!e)
            return fail(path, "key text without *end");
        h = (size_t)(e - base) + 6;
    }
    layout l;
    const char *why = read_header(base, size, h, &l);
    if (why)
        return fail(path, why);
    if (!h && !l.streaming)
        return fail(path, "a data file without its key text");
    totals *t = calloc(1, sizeof *t);
    if (!t)
        return fail(path, "out of memory");
    double t0 = now();
    if (l.streaming)
        why = scan_stream(t, &l, base + l.data, base + size);
    else
        scan_records(t, &l, base + l.data, base + size);
    double secs = now() - t0;
    if (why)
        return fail(path, why);
    uint64_t depth_sum = 0;
    for (size_t i = 0; i < 65536; i++)
        depth_sum += t->depth[i];
    printf("%.6f %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", secs, t->records, depth_sum, t->checksum);
    free(t);
    return 0;
}
