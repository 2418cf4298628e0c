/*
 * open_pair.c - issue 22 item 14: tc_conv_open_pair with the halves given the
 * other way round (data first) said legacy pairs were "not supported". The
 * half that begins with the key section is now read first, whichever order
 * they come in: both orders convert to the bytes of the whole file (the
 * corpus trace, split here at the end of its key section). A data half alone
 * (in memory, so no key half is looked for) says what is missing, not "not
 * supported". Public API only.
 */
#include <traceconv.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

typedef struct outbuf {
    char *p;
    size_t n, cap;
} outbuf;

static int collect(void *user, const void *p, size_t n)
{
    outbuf *b = user;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            return -1;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc(*n);
    if (p && fread(p, 1, *n, f) != *n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

static void spit(const char *path, const char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f)
        fclose(f);
}

/* folded output of the pair (first, second), or of one file (second NULL); rc in *rc. */
static outbuf convert(const char *first, const char *second, int *rc, char *err, size_t errlen)
{
    outbuf b = {0};
    tc_conv *c = tc_conv_new();
    *rc = second ? tc_conv_open_pair(c, first, second) : tc_conv_open(c, first, "art");
    if (*rc == TC_OK)
        *rc = tc_conv_write_to(c, "folded", collect, &b);
    snprintf(err, errlen, "%s", tc_conv_error(c));
    tc_conv_free(c);
    return b;
}

static void test_either_order(void)
{
    size_t n;
    char *all = slurp(TC_SOURCE_DIR "/corpus/app-startup.trace", &n);
    CHECK(all != NULL);
    if (!all)
        return;
    size_t key_len = (size_t)(strstr(all, "\n*end\n") - all) + 6;
    char dir[] = "/tmp/tc-pair-XXXXXX", key[64], data[64], whole[64], err[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(key, sizeof key, "%s/x.key", dir);
    snprintf(data, sizeof data, "%s/y.data", dir); /* not beside each other by name: only the pair call finds them */
    snprintf(whole, sizeof whole, "%s/whole.trace", dir);
    spit(key, all, key_len);
    spit(data, all + key_len, n - key_len);
    spit(whole, all, n);
    int rc;
    outbuf want = convert(whole, NULL, &rc, err, sizeof err);
    CHECK_EQ_INT(rc, TC_OK);
    outbuf in_order = convert(key, data, &rc, err, sizeof err);
    CHECK_EQ_INT(rc, TC_OK);
    outbuf swapped = convert(data, key, &rc, err, sizeof err);
    CHECK_EQ_INT(rc, TC_OK);
    CHECK(strstr(err, "not supported") == NULL);
    CHECK(want.n > 0 && in_order.n == want.n && !memcmp(in_order.p, want.p, want.n));
    CHECK(swapped.n == want.n && !memcmp(swapped.p, want.p, want.n));
    tc_conv *c = tc_conv_new(); /* the data half alone, where no key half can be looked for */
    CHECK_EQ_INT(tc_conv_open_memory(c, all + key_len, n - key_len, "y.data", "art"), TC_ERR_FORMAT);
    CHECK(strstr(tc_conv_error(c), "without its key section") != NULL && strstr(tc_conv_error(c), "not supported") == NULL);
    tc_conv_free(c);
    free(want.p);
    free(in_order.p);
    free(swapped.p);
    free(all);
    unlink(key);
    unlink(data);
    unlink(whole);
    rmdir(dir);
}

int main(void)
{
    UNIT_RUN(test_either_order);
    return UNIT_DONE();
}
