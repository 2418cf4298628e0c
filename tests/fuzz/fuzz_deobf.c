/* fuzz_deobf.c - the mapping of --deobfuscate (ProGuard/R8 mapping.txt) as
 * the untrusted input. After the control block (fuzz_target.h) the input is
 * the mapping; the trace is made from it, an ART trace whose methods are the
 * mapping's obfuscated classes and new names (with the residual signatures
 * the mapping names, and a few plain descriptors), so that the lazily parsed
 * member lines of the classes a trace uses are reached, not only the class
 * index. The mapping goes to the library through a memfd's /proc path: the
 * option is a path, as for an embedder.
 *
 * Fuzzers run one input at a time: the buffers below are the harness's, not
 * the library's (which has no global state). */
#if defined(__linux__)
#define _GNU_SOURCE /* memfd_create */
#endif
#include "fuzz_target.h"

#include "traceconv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *const fuzz_reader = "art";

#define MAX_METHODS 128
#define MAX_NAME 200

static char trace_buf[MAX_METHODS * (3 * MAX_NAME + 40) + 8192];
static int map_fd = -1;

typedef struct {
    const char *p;
    size_t n;
} text;

static text trim(const char *p, size_t n)
{
    while (n && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    return (text){p, n};
}

/* Appends s to the key section as one column: no tab, newline or NUL in it (the ART key's separators). */
static size_t put_column(char *out, size_t at, text s)
{
    size_t n = s.n < MAX_NAME ? s.n : MAX_NAME;
    for (size_t i = 0; i < n; i++) {
        char ch = s.p[i];
        out[at + i] = ch == '\t' || ch == '\n' || ch == '\0' ? '_' : ch;
    }
    return at + n;
}

static const char *last_arrow(const char *p, size_t n)
{
    for (size_t i = n; i >= 2; i--)
        if (p[i - 2] == '-' && p[i - 1] == '>')
            return p + i - 2;
    return NULL;
}

/* One *methods line: "0xID\tclass\tname\tdescriptor\tSourceFile". */
static size_t method_line(size_t at, unsigned id, text cls, text name, text desc)
{
    at += (size_t)snprintf(trace_buf + at, 16, "0x%x\t", id << 2);
    at = put_column(trace_buf, at, cls);
    trace_buf[at++] = '\t';
    at = put_column(trace_buf, at, name);
    trace_buf[at++] = '\t';
    at = put_column(trace_buf, at, desc);
    memcpy(trace_buf + at, "\tSourceFile\n", 12);
    return at + 12;
}

/* The ART v3 trace whose methods the mapping names; its size. */
static size_t make_trace(const char *map, size_t size)
{
    static const char head[] = "*version\n3\ndata-file-overflow=false\nclock=dual\nelapsed-time-usec=100\n"
                               "vm=art\npid=1\n*threads\n1\tmain\n*methods\n";
    static const char *const plain[] = {"()V", "(I)V", "(La/a;I)La/b;"};
    size_t at = sizeof head - 1;
    memcpy(trace_buf, head, at);
    unsigned n = 0;
    text cls = {"a.a", 3};
    for (size_t pos = 0; pos < size && n < MAX_METHODS;) {
        const char *p = map + pos, *nl = memchr(p, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - p) : size - pos;
        pos += len + 1;
        if (!len || *p == '#')
            continue;
        const char *arrow = last_arrow(p, len);
        if (!arrow)
            continue;
        text right = trim(arrow + 2, (size_t)(p + len - arrow - 2));
        if (*p != ' ' && *p != '\t') { /* a class line: "orig -> obf:" */
            const char *colon = memchr(right.p, ':', right.n);
            cls = trim(right.p, colon ? (size_t)(colon - right.p) : right.n);
            continue;
        }
        text name = right, sig = {NULL, 0};
        const char *rs = nl ? memmem(nl, size - pos + 1 > 400 ? 400 : size - pos + 1, "signature", 9) : NULL;
        if (rs) { /* the residual signature on the next line, between the quotes after its key */
            const char *q = memchr(rs + 9, ':', (size_t)(map + size - rs - 9) < 8 ? (size_t)(map + size - rs - 9) : 8);
            const char *s = q ? q + 1 : NULL;
            while (s && s < map + size && (*s == ' ' || *s == '"' || *s == '\''))
                s++;
            const char *e = s;
            while (e && e < map + size && *e != '"' && *e != '\'' && *e != '}' && *e != '\n')
                e++;
            if (s && e > s)
                sig = (text){s, (size_t)(e - s)};
        }
        if (!cls.n || !name.n)
            continue;
        n++;
        at = method_line(at, n, cls, name, sig.n ? sig : (text){plain[n % 3], strlen(plain[n % 3])});
        if (n < MAX_METHODS) {
            n++;
            at = method_line(at, n, cls, name, (text){plain[n % 3], strlen(plain[n % 3])});
        }
    }
    memcpy(trace_buf + at, "*end\nSLOW\x03\x00\x20\x00", 13);
    at += 13;
    memset(trace_buf + at, 0, 24); /* start time, record size 14, the rest of the 32-byte header */
    trace_buf[at + 8] = 14;
    at += 24;
    for (unsigned i = 1; i <= n; i++) /* each method entered and left on thread 1 */
        for (unsigned action = 0; action < 2; action++) {
            unsigned char *r = (unsigned char *)trace_buf + at;
            uint32_t m = i << 2 | action, t = i * 10 + action * 5;
            r[0] = 1, r[1] = 0;
            for (int k = 0; k < 4; k++)
                r[2 + k] = (unsigned char)(m >> (8 * k)), r[6 + k] = (unsigned char)(t >> (8 * k)),
                r[10 + k] = (unsigned char)(t >> (8 * k));
            at += 14;
        }
    return at;
}

int fuzz_prepare(tc_conv *c, const uint8_t **trace, size_t *size)
{
#if defined(__linux__)
    if (map_fd < 0 && (map_fd = memfd_create("mapping", 0)) < 0)
        abort();
#else /* macOS: an unlinked temporary file */
    if (map_fd < 0) {
        char name[] = "/tmp/tc-fuzz-deobf-XXXXXX";
        if ((map_fd = mkstemp(name)) < 0)
            abort();
        unlink(name);
    }
#endif
    if (ftruncate(map_fd, 0) != 0 || (*size && pwrite(map_fd, *trace, *size, 0) != (ssize_t)*size))
        abort();
    char path[64];
#if defined(__linux__)
    snprintf(path, sizeof path, "/proc/self/fd/%d", map_fd);
#else
    snprintf(path, sizeof path, "/dev/fd/%d", map_fd);
#endif
    if (tc_conv_set_option(c, "deobfuscate", path) != TC_OK)
        abort();
    size_t n = make_trace((const char *)*trace, *size);
    *trace = (const uint8_t *)trace_buf;
    *size = n;
    return 0;
}
