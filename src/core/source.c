/* source.c - input bytes for the readers.
 *
 * Readers see the whole input as one byte array, so that a second pass is
 * free and memory does not grow with the number of records:
 *   - a regular file is mmapped;
 *   - stdin, pipes and gzip input are spooled into an unlinked temporary file
 *     (decompressed on the way) which is then mmapped.
 * The option read-chunk forces the spool path with reads of that many bytes,
 * so tests can prove that results do not depend on how input arrives. */
#define _GNU_SOURCE
#include "tc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const uint8_t empty_input[1];

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int make_spool(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traceconv-spool-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path); /* gone when closed, even on a crash */
    return fd;
}

static int map_fd(tci_source *s, int fd, uint64_t size, tci_diag *d)
{
    if (size == 0) {
        s->data = empty_input;
        s->size = 0;
        return TC_OK;
    }
    if (size > SIZE_MAX)
        return tci_error(d, TC_ERR_LIMIT, "input", UINT64_MAX, "input too large for this machine");
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot map input: %s", strerror(errno));
#ifdef MADV_SEQUENTIAL
    madvise(p, (size_t)size, MADV_SEQUENTIAL);
#endif
    s->data = p;
    s->size = (size_t)size;
    s->mapped = true;
    return TC_OK;
}

/* Spool state: plain copy or gzip inflate into the temporary file. */
typedef struct spool_state {
    int out;
    int mode; /* 0 undecided, 1 plain, 2 inside a gzip member, 3 between members */
    z_stream z;
    uint8_t *zout;
    uint64_t total;
    uint8_t head[2];
    size_t nhead;
} spool_state;

enum { FEED_OK = 0, FEED_WRITE_ERROR = -1, FEED_GZIP_ERROR = -2 };

static int feed_gzip(spool_state *st, const uint8_t *p, size_t n)
{
    st->z.next_in = (Bytef *)p;
    st->z.avail_in = (uInt)n;
    while (st->z.avail_in) {
        if (st->mode == 3) { /* concatenated members, as `gzip -c a b` makes */
            if (inflateReset(&st->z) != Z_OK)
                return FEED_GZIP_ERROR;
            st->mode = 2;
        }
        st->z.next_out = st->zout;
        st->z.avail_out = 1 << 16;
        int zr = inflate(&st->z, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
            return FEED_GZIP_ERROR;
        size_t have = (1 << 16) - st->z.avail_out;
        if (have && write_all(st->out, st->zout, have) != 0)
            return FEED_WRITE_ERROR;
        st->total += have;
        if (zr == Z_STREAM_END)
            st->mode = 3;
        else if (zr == Z_BUF_ERROR && !have)
            break;
    }
    return FEED_OK;
}

static int feed(spool_state *st, const uint8_t *p, size_t n)
{
    if (st->mode == 0) { /* decide on the first two bytes, which may arrive one at a time */
        while (st->nhead < 2 && n) {
            st->head[st->nhead++] = *p++;
            n--;
        }
        if (st->nhead < 2)
            return FEED_OK;
        if (st->head[0] == 0x1f && st->head[1] == 0x8b) {
            if (inflateInit2(&st->z, 15 + 32) != Z_OK)
                return FEED_GZIP_ERROR;
            st->mode = 2;
        } else {
            st->mode = 1;
        }
        int rc = feed(st, st->head, 2);
        if (rc != FEED_OK)
            return rc;
    }
    if (st->mode == 1) {
        if (write_all(st->out, p, n) != 0)
            return FEED_WRITE_ERROR;
        st->total += n;
        return FEED_OK;
    }
    return feed_gzip(st, p, n);
}

/* Copy (and inflate if gzip) everything from in_fd into a spool file, then map it. */
static int spool(tci_source *s, int in_fd, size_t chunk, tci_diag *d)
{
    spool_state st;
    memset(&st, 0, sizeof st);
    st.out = make_spool();
    if (st.out < 0)
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot create a temporary file: %s", strerror(errno));
    uint8_t *buf = malloc(chunk);
    st.zout = malloc(1 << 16);
    uint64_t in_total = 0;
    int rc = TC_OK, fr = FEED_OK;
    if (!buf || !st.zout) {
        rc = tci_error(d, TC_ERR_NOMEM, "input", UINT64_MAX, "out of memory");
        goto done;
    }
    for (;;) {
        ssize_t k = read(in_fd, buf, chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = tci_error(d, TC_ERR_IO, "input", in_total, "read failed: %s", strerror(errno));
            goto done;
        }
        if (k == 0)
            break;
        in_total += (uint64_t)k;
        if ((fr = feed(&st, buf, (size_t)k)) != FEED_OK)
            break;
    }
    if (fr == FEED_OK && st.mode == 0 && st.nhead) { /* a one-byte input */
        st.mode = 1;
        fr = feed(&st, st.head, st.nhead);
    }
    if (fr == FEED_WRITE_ERROR)
        rc = tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot write the temporary spool file: %s", strerror(errno));
    else if (fr == FEED_GZIP_ERROR)
        rc = tci_error(d, TC_ERR_FORMAT, "gzip", in_total, "corrupt gzip data: %s", st.z.msg ? st.z.msg : "inflate failed");
    else if (st.mode == 2)
        rc = tci_error(d, TC_ERR_FORMAT, "gzip", in_total, "compressed input ends early (truncated gzip stream)");
    else
        rc = map_fd(s, st.out, st.total, d);
    s->gzipped = st.mode >= 2;
done:
    if (st.mode >= 2)
        inflateEnd(&st.z);
    free(buf);
    free(st.zout);
    close(st.out);
    return rc;
}

int tci_source_open(tci_source *s, const char *path, const tci_options *o, tci_diag *d)
{
    memset(s, 0, sizeof *s);
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot open: %s", strerror(errno));
    struct stat st;
    int rc;
    if (fstat(fd, &st) != 0) {
        rc = tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot stat: %s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        rc = tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "is a directory");
    } else if (S_ISREG(st.st_mode) && !o->read_chunk) {
        rc = map_fd(s, fd, (uint64_t)st.st_size, d);
        if (rc == TC_OK && s->size >= 2 && s->data[0] == 0x1f && s->data[1] == 0x8b) {
            tci_source_close(s); /* gzip: inflate into a spool file, then map that */
            if (lseek(fd, 0, SEEK_SET) != 0)
                rc = tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot rewind: %s", strerror(errno));
            else
                rc = spool(s, fd, 1 << 16, d);
        }
    } else {
        rc = spool(s, fd, o->read_chunk ? o->read_chunk : 1 << 16, d);
    }
    if (!is_stdin)
        close(fd);
    return rc;
}

void tci_source_release(tci_source *s, uint64_t upto)
{
    const uint64_t keep = 4u << 20; /* readers may look back a little */
    if (!s || !s->mapped || upto <= keep)
        return;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t end = (upto - keep) / page * page;
    if (end > s->released) {
        madvise((uint8_t *)s->data + s->released, (size_t)(end - s->released), MADV_DONTNEED);
        s->released = end;
    }
}

void tci_source_close(tci_source *s)
{
    if (s->mapped)
        munmap((void *)s->data, s->size);
    free(s->owned);
    memset(s, 0, sizeof *s);
}
