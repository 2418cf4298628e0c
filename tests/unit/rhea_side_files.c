/*
 * rhea_side_files.c - side files come only from beside a real input file
 * (DESIGN.md §5b): a Rhea 2.x binary dump given to tc_conv_open_memory is
 * never named through a methodMapping.txt of the current directory, whatever
 * the buffer is called; the same bytes opened as a file beside that mapping
 * are. Through the public API only.
 */
#include "traceconv.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define PID 4000u
#define MONO 232073280000000ull

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* RHEA.md §2.2: a 32-byte header, then one 16-byte record: method id 2 on
 * the main thread, [1 ms, 4 ms) after the trace start. */
static size_t make_dump(uint8_t *buf)
{
    memset(buf, 0, 48);
    put_le(buf, 5, 4);
    put_le(buf + 4, PID, 4);
    put_le(buf + 8, 948220911000000ull, 8);
    put_le(buf + 16, MONO, 8);
    put_le(buf + 24, MONO, 8);
    uint64_t start = 1000000, dur = 3000000, tid = PID & 0x7FFF, mid = 2;
    put_le(buf + 32, start << 19 | dur >> 26, 8);
    put_le(buf + 40, (dur & 0x3FFFFFF) << 38 | tid << 23 | mid, 8);
    return 48;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(p, 1, n, f) == n);
        fclose(f);
    }
}

/* Folded output of one conversion (memory when path is NULL), or "" on failure. */
static char *convert(const uint8_t *dump, size_t n, const char *path, const char *name)
{
    static char empty[] = "";
    tc_conv *c = tc_conv_new();
    FILE *out = tmpfile();
    char *text = NULL;
    CHECK(c && out);
    if (!c || !out)
        return empty;
    int rc = path ? tc_conv_open(c, path, NULL) : tc_conv_open_memory(c, dump, n, name, NULL);
    if (rc == TC_OK)
        rc = tc_conv_write(c, "folded", out);
    if (rc != TC_OK)
        fprintf(stderr, "conversion: %s\n", tc_conv_error(c));
    CHECK_EQ_INT(rc, TC_OK);
    long len = ftell(out);
    if (len >= 0 && (text = calloc(1, (size_t)len + 1)) != NULL) {
        rewind(out);
        if (fread(text, 1, (size_t)len, out) != (size_t)len)
            text[0] = 0;
    }
    fclose(out);
    tc_conv_free(c);
    return text ? text : empty;
}

static uint8_t dump[64];
static size_t dump_len;

static void test_memory_ignores_the_current_directory(void)
{
    const char *names[] = {NULL, "appTrace.bin", "./appTrace.bin", "methodMapping.txt"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *folded = convert(dump, dump_len, NULL, names[i]);
        if (!strstr(folded, "method#2"))
            fprintf(stderr, "buffer named %s: %s\n", names[i] ? names[i] : "(NULL)", folded);
        CHECK(strstr(folded, "method#2") != NULL);
        CHECK(strstr(folded, "com.example.Mapped") == NULL);
        if (*folded)
            free(folded);
    }
}

/* A failed open by path, then the bytes from memory on the same tc_conv: the
 * failed path leaves nothing behind to look beside. */
static void test_memory_after_a_failed_open(void)
{
    tc_conv *c = tc_conv_new();
    FILE *out = tmpfile();
    CHECK(c && out);
    if (!c || !out)
        return;
    CHECK(tc_conv_open(c, "appTrace.bin.missing", NULL) != TC_OK);
    int rc = tc_conv_open_memory(c, dump, dump_len, "appTrace.bin", NULL);
    if (rc == TC_OK)
        rc = tc_conv_write(c, "folded", out);
    CHECK_EQ_INT(rc, TC_OK);
    char text[256] = "";
    rewind(out);
    size_t n = fread(text, 1, sizeof text - 1, out);
    text[n] = 0;
    if (!strstr(text, "method#2"))
        fprintf(stderr, "memory after a failed open: %s\n", text);
    CHECK(strstr(text, "method#2") != NULL);
    fclose(out);
    tc_conv_free(c);
}

static void test_file_beside_the_mapping_uses_it(void)
{
    write_file("appTrace.bin", dump, dump_len);
    char *folded = convert(NULL, 0, "appTrace.bin", NULL);
    if (!strstr(folded, "com.example.Mapped.run"))
        fprintf(stderr, "file beside the mapping: %s\n", folded);
    CHECK(strstr(folded, "com.example.Mapped.run") != NULL);
    CHECK(strstr(folded, "method#2") == NULL);
    if (*folded)
        free(folded);
}

int main(void)
{
    /* a directory of our own, made the current one, with a mapping in it */
    mkdir("rhea_side_files.d", 0777);
    if (chdir("rhea_side_files.d") != 0) {
        perror("rhea_side_files.d");
        return 1;
    }
    const char *mapping = "#uuid-0\n2,1,com.example.Mapped run ()V\n";
    write_file("methodMapping.txt", mapping, strlen(mapping));
    dump_len = make_dump(dump);
    UNIT_RUN(test_memory_ignores_the_current_directory);
    UNIT_RUN(test_memory_after_a_failed_open);
    UNIT_RUN(test_file_beside_the_mapping_uses_it);
    return UNIT_DONE();
}
