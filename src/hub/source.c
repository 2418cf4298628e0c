/* source.c - input bytes for the readers.
 *
 * Readers see the whole input as one byte array, so that a second pass is
 * free and memory does not grow with the number of records:
 *   - a regular file is mmapped;
 *   - stdin, pipes and gzip input are spooled into an unlinked temporary file
 *     (decompressed on the way) which is then mmapped.
 * A zlib stream inside an input (atrace -z) goes the same way on a reader's
 * request (tci_source_inflate): gzip and zlib share one guarded inflate, so
 * compressed input converts in bounded memory and a bomb is refused early.
 * The option read-chunk forces the spool path with reads of that many bytes,
 * so tests can prove that results do not depend on how input arrives. */
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const uint8_t empty_input[1];

/* guard: the file is the user's and may shrink under the mapping (guard.c);
 * our own unlinked spool files cannot. */
static int map_fd(tci_source *s, int fd, uint64_t size, bool guard, tci_diag *d)
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
    tci_advise(p, (size_t)size, TCI_ADVISE_SEQUENTIAL);
    s->data = p;
    s->size = (size_t)size;
    s->mapped = true;
    if (guard) {
        s->guard = tci_guard_add(p, (size_t)size, true) + 1;
        s->guard_owned = s->guard > 0;
    }
    return TC_OK;
}

/* What is inflated, for the one guarded inflate below: gzip input (the
 * whole file, concatenated members allowed) or a zlib stream that a reader
 * found inside its input (`TRACE:` + zlib, atrace -z). */
typedef struct inflate_kind {
    const char *module; /* of the messages */
    const char *what;   /* "gzip data" */
    int window_bits;    /* zlib's: 15 + 32 detects gzip (and zlib) headers */
    bool members;       /* another stream may follow the end of one */
} inflate_kind;

static const inflate_kind gzip_kind = {"gzip", "gzip data", 15 + 32, true};

/* Spool state: plain copy or inflate into the temporary file. */
typedef struct spool_state {
    int out;
    int mode; /* 0 undecided, 1 plain, 2 inside a stream, 3 between members, 4 after the one stream,
               * 5 zero padding after the last member */
    const inflate_kind *kind;
    uint64_t base;          /* input offset of the compressed bytes, for messages */
    z_stream z;
    uint8_t *zout;
    uint64_t total;         /* bytes written to the spool */
    uint8_t head[2];
    size_t nhead;
    uint64_t in_total;      /* compressed bytes given to feed() so far */
    uint64_t max_total;     /* option max-input */
    uint64_t padding;       /* zero bytes after the last member */
    uint64_t trailing_at;   /* FEED_TRAILING: input offset of the first byte that is not */
} spool_state;

enum { FEED_OK = 0, FEED_WRITE_ERROR = -1, FEED_GZIP_ERROR = -2, FEED_TOO_BIG = -3, FEED_BOMB = -4, FEED_TRAILING = -5 };

/* Compressed data that expands more than this beyond TCI_BOMB_FLOOR bytes is
 * refused: real traces compress 5-20x, zlib's ceiling is ~1000x. */
#define TCI_BOMB_RATIO 200
#define TCI_BOMB_FLOOR ((uint64_t)256 << 20)
/* The guard's messages, the same for every decompression (tc_check_expansion too). */
#define TCI_BOMB_MESSAGE "%s expands more than %d:1 (%llu bytes from %llu): refused as a decompression bomb"
#define TCI_EXPANDS_MESSAGE "%s expands beyond max-input (%llu bytes); raise it with --max-input"

/* Compressed bytes inflate has taken (it may hold back part of the last chunk). */
static uint64_t consumed(const spool_state *st)
{
    return st->in_total - (st->mode >= 2 ? st->z.avail_in : 0);
}

static int check_growth(const spool_state *st)
{
    if (st->max_total && st->total > st->max_total)
        return FEED_TOO_BIG;
    if (st->mode >= 2 && st->total > TCI_BOMB_FLOOR && st->total / TCI_BOMB_RATIO > consumed(st))
        return FEED_BOMB;
    return FEED_OK;
}

static int start_inflate(spool_state *st)
{
    if (inflateInit2(&st->z, st->kind->window_bits) != Z_OK)
        return FEED_GZIP_ERROR;
    st->mode = 2;
    return FEED_OK;
}

/* After a gzip member: another one (1f 8b, as `gzip -c a b` makes), or zero bytes to
 * the end (tape and block devices pad a file to their block size; gzip -d accepts
 * them), or trailing garbage: refused, it is not what was compressed. A member's
 * second byte may come in the next read: inflate then checks it. */
static int after_member(spool_state *st)
{
    const uint8_t *p = st->z.next_in;
    size_t n = st->z.avail_in;
    uint64_t at = st->in_total - n; /* the input offset of p[0] */
    if (st->mode == 3 && p[0] == 0x1f && (n == 1 || p[1] == 0x8b)) {
        if (inflateReset(&st->z) != Z_OK)
            return FEED_GZIP_ERROR;
        st->mode = 2;
        return FEED_OK;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            st->trailing_at = at + i;
            return FEED_TRAILING;
        }
    }
    st->mode = 5;
    st->padding += n;
    st->z.avail_in = 0;
    return FEED_OK;
}

/* The one guarded inflate: n compressed bytes into the spool, refusing
 * output beyond max-input and bombs as it goes (never after the fact). */
static int feed_inflate(spool_state *st, const uint8_t *p, size_t n)
{
    st->z.next_in = (Bytef *)(uintptr_t)p;
    st->z.avail_in = (uInt)n;
    while (st->z.avail_in && st->mode != 4) {
        if (st->mode == 3 || st->mode == 5) {
            int rc = after_member(st);
            if (rc != FEED_OK || st->mode == 5)
                return rc;
        }
        st->z.next_out = st->zout;
        st->z.avail_out = 1 << 16;
        int zr = inflate(&st->z, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
            return FEED_GZIP_ERROR;
        size_t have = (1 << 16) - st->z.avail_out;
        st->total += have;
        int grow = check_growth(st);
        if (grow != FEED_OK)
            return grow;
        if (have && tci_write_all(st->out, st->zout, have) != 0)
            return FEED_WRITE_ERROR;
        if (zr == Z_STREAM_END)
            st->mode = st->kind->members ? 3 : 4; /* a zlib stream's trailing bytes are ignored */
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
            if (start_inflate(st) != FEED_OK)
                return FEED_GZIP_ERROR;
        } else {
            st->mode = 1;
        }
        int rc = feed(st, st->head, 2);
        if (rc != FEED_OK)
            return rc;
    }
    if (st->mode == 1) {
        st->total += n;
        if (check_growth(st) != FEED_OK)
            return FEED_TOO_BIG;
        if (tci_write_all(st->out, p, n) != 0)
            return FEED_WRITE_ERROR;
        return FEED_OK;
    }
    return feed_inflate(st, p, n);
}

/* Where spooled bytes come from: a file descriptor or a memory buffer. */
typedef struct spool_input {
    int fd;
    const uint8_t *mem;
    size_t mem_left;
} spool_input;

static ssize_t spool_read(spool_input *in, uint8_t *buf, size_t n)
{
    if (!in->mem) {
        ssize_t k;
        do
            k = read(in->fd, buf, n);
        while (k < 0 && errno == EINTR);
        return k;
    }
    size_t k = n < in->mem_left ? n : in->mem_left;
    memcpy(buf, in->mem, k);
    in->mem += k;
    in->mem_left -= k;
    return (ssize_t)k;
}

static int spool_error(spool_state *st, int fr, tci_diag *d)
{
    const char *mod = st->kind->module, *what = st->kind->what;
    uint64_t at = st->base + consumed(st);
    switch (fr) {
    case FEED_WRITE_ERROR:
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot write the temporary spool file: %s", strerror(errno));
    case FEED_GZIP_ERROR:
        return tci_error(d, TC_ERR_FORMAT, mod, at, "corrupt %s: %s", what, st->z.msg ? st->z.msg : "inflate failed");
    case FEED_TRAILING:
        return tci_error(d, TC_ERR_FORMAT, mod, st->trailing_at,
                         "trailing garbage: the %s ends before here, and what follows is neither another gzip member "
                         "nor zero padding", what);
    case FEED_TOO_BIG:
        if (st->mode < 2)
            return tci_error(d, TC_ERR_LIMIT, "input", st->in_total,
                             "input is larger than max-input (%llu bytes); raise it with --max-input",
                             (unsigned long long)st->max_total);
        return tci_error(d, TC_ERR_LIMIT, mod, at, TCI_EXPANDS_MESSAGE, what, (unsigned long long)st->max_total);
    default:
        return tci_error(d, TC_ERR_LIMIT, mod, at, TCI_BOMB_MESSAGE, what, TCI_BOMB_RATIO, (unsigned long long)st->total,
                         (unsigned long long)consumed(st));
    }
}

/* After the last input byte: the spool is complete unless a stream is cut. */
static int spool_finish(tci_source *s, spool_state *st, int fr, tci_diag *d)
{
    if (fr != FEED_OK)
        return spool_error(st, fr, d);
    if (st->mode == 2)
        return tci_error(d, TC_ERR_FORMAT, st->kind->module, st->base + st->in_total,
                         "%s ends early: the compressed stream is cut (truncated file?)", st->kind->what);
    if (st->padding) /* a note, not a defect: gzip -d accepts it too */
        tci_count(d, TCI_FIG_GZIP_PADDING, 1);
    return map_fd(s, st->out, st->total, false, d);
}

/* Copy (and inflate if gzip) everything from the inputs, one after the
 * other, into a spool file, then map it. */
static int spool_all(tci_source *s, spool_input *ins, size_t n_in, size_t chunk, const tci_options *o, tci_diag *d)
{
    spool_state st;
    memset(&st, 0, sizeof st);
    st.kind = &gzip_kind;
    st.max_total = o->max_input;
    st.out = tci_temp_fd("spool");
    if (st.out < 0)
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot create a temporary file: %s", strerror(errno));
    uint8_t *buf = malloc(chunk);
    st.zout = malloc(1 << 16);
    int rc = TC_OK, fr = FEED_OK;
    if (!buf || !st.zout) {
        rc = tci_error(d, TC_ERR_NOMEM, "input", UINT64_MAX, "out of memory");
        goto done;
    }
    for (size_t which = 0; which < n_in;) {
        ssize_t k = spool_read(&ins[which], buf, chunk);
        if (k < 0) {
            rc = tci_error(d, TC_ERR_IO, "input", st.in_total, "read failed: %s", strerror(errno));
            goto done;
        }
        if (k == 0) {
            which++;
            continue;
        }
        st.in_total += (uint64_t)k;
        if ((fr = feed(&st, buf, (size_t)k)) != FEED_OK)
            break;
    }
    if (fr == FEED_OK && st.mode == 0 && st.nhead) { /* a one-byte input */
        st.mode = 1;
        fr = feed(&st, st.head, st.nhead);
    }
    rc = spool_finish(s, &st, fr, d);
    s->gzipped = st.mode >= 2;
done:
    if (st.mode >= 2)
        inflateEnd(&st.z);
    free(buf);
    free(st.zout);
    close(st.out);
    return rc;
}

static int spool(tci_source *s, spool_input *in, size_t chunk, const tci_options *o, tci_diag *d)
{
    return spool_all(s, in, 1, chunk, o, d);
}

int tci_source_inflate(tci_source *s, const uint8_t *data, size_t len, const char *module, uint64_t base,
                       const tci_options *o, tci_diag *d)
{
    const inflate_kind zlib_kind = {module, "compressed atrace data (zlib)", 15, false};
    memset(s, 0, sizeof *s);
    spool_state st;
    memset(&st, 0, sizeof st);
    st.kind = &zlib_kind;
    st.base = base;
    st.max_total = o->max_input;
    st.out = tci_temp_fd("inflate");
    if (st.out < 0)
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot create a temporary file: %s", strerror(errno));
    int rc, fr = FEED_OK;
    if (!(st.zout = malloc(1 << 16))) {
        rc = tci_error(d, TC_ERR_NOMEM, module, base, "out of memory");
        goto done;
    }
    if (start_inflate(&st) != FEED_OK) {
        rc = tci_error(d, TC_ERR_NOMEM, module, base, "cannot start zlib");
        goto done;
    }
    for (size_t at = 0; at < len && fr == FEED_OK && st.mode != 4;) {
        size_t k = len - at < (1u << 20) ? len - at : (1u << 20);
        st.in_total += k;
        fr = feed(&st, data + at, k);
        at += k;
    }
    rc = spool_finish(s, &st, fr, d);
    inflateEnd(&st.z);
done:
    free(st.zout);
    close(st.out);
    return rc;
}

#define TEXTSPOOL_BUF (1u << 16)

int tci_textspool_open(tci_textspool *w, const char *module, const tci_options *o, tci_diag *d)
{
    memset(w, 0, sizeof *w);
    w->module = module;
    w->diag = d;
    w->max = o->max_input;
    w->fd = tci_temp_fd("text");
    if (w->fd < 0)
        return tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot create a temporary file: %s", strerror(errno));
    if (!(w->buf = malloc(TEXTSPOOL_BUF))) {
        tci_textspool_close(w);
        return tci_error(d, TC_ERR_NOMEM, module, UINT64_MAX, "out of memory");
    }
    return TC_OK;
}

static int textspool_flush(tci_textspool *w)
{
    if (w->len && tci_write_all(w->fd, w->buf, w->len) != 0)
        return tci_error(w->diag, TC_ERR_IO, "input", UINT64_MAX, "cannot write the temporary spool file: %s",
                         strerror(errno));
    w->len = 0;
    return TC_OK;
}

int tci_textspool_put(tci_textspool *w, const void *p, size_t n)
{
    w->total += n;
    if (w->max && w->total > w->max)
        return tci_error(w->diag, TC_ERR_LIMIT, w->module, UINT64_MAX,
                         "the decoded text is larger than max-input (%llu bytes); raise it with --max-input",
                         (unsigned long long)w->max);
    const uint8_t *b = p;
    while (n) {
        if (w->len == TEXTSPOOL_BUF && textspool_flush(w) != TC_OK)
            return TC_ERR_IO;
        size_t k = TEXTSPOOL_BUF - w->len < n ? TEXTSPOOL_BUF - w->len : n;
        memcpy(w->buf + w->len, b, k);
        w->len += k;
        b += k;
        n -= k;
    }
    return TC_OK;
}

int tci_textspool_map(tci_textspool *w, tci_source *s)
{
    memset(s, 0, sizeof *s);
    int rc = textspool_flush(w);
    if (rc == TC_OK)
        rc = map_fd(s, w->fd, w->total, false, w->diag);
    tci_textspool_close(w);
    return rc;
}

void tci_textspool_close(tci_textspool *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    free(w->buf);
    w->buf = NULL;
}

int tci_source_open_concat(tci_source *s, const char *first, const char *second, const tci_options *o,
                           tci_diag *d)
{
    memset(s, 0, sizeof *s);
    spool_input in[2] = {{.fd = -1}, {.fd = -1}};
    const char *paths[2] = {first, second};
    int rc = TC_OK;
    for (int i = 0; i < 2 && rc == TC_OK; i++)
        if ((in[i].fd = open(paths[i], O_RDONLY | O_CLOEXEC)) < 0)
            rc = tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot open %s: %s", paths[i], strerror(errno));
    if (rc == TC_OK)
        rc = spool_all(s, in, 2, 1 << 16, o, d);
    for (int i = 0; i < 2; i++)
        if (in[i].fd >= 0)
            close(in[i].fd);
    return rc;
}

int tci_source_open_memory(tci_source *s, const uint8_t *data, size_t size, const tci_options *o, tci_diag *d)
{
    memset(s, 0, sizeof *s);
    if (o->max_input && size > o->max_input)
        return tci_error(d, TC_ERR_LIMIT, "input", UINT64_MAX, "input is larger than max-input (%llu bytes)",
                         (unsigned long long)o->max_input);
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        spool_input in = {.fd = -1, .mem = data, .mem_left = size};
        return spool(s, &in, 1 << 16, o, d);
    }
    s->data = size ? data : empty_input; /* borrowed: the caller keeps it alive */
    s->size = size;
    s->guard = size ? tci_guard_find(data, size) + 1 : 0; /* a mapping the caller guards (tc_guard_mapping) */
    return TC_OK;
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
        if (o->max_input && (uint64_t)st.st_size > o->max_input)
            rc = tci_error(d, TC_ERR_LIMIT, "input", UINT64_MAX,
                           "input is larger than max-input (%llu bytes); raise it with --max-input",
                           (unsigned long long)o->max_input);
        else
            rc = map_fd(s, fd, (uint64_t)st.st_size, true, d);
        if (rc == TC_OK && s->size >= 2 && s->data[0] == 0x1f && s->data[1] == 0x8b) {
            tci_source_close(s); /* gzip: inflate into a spool file, then map that */
            if (lseek(fd, 0, SEEK_SET) != 0)
                rc = tci_error(d, TC_ERR_IO, "input", UINT64_MAX, "cannot rewind: %s", strerror(errno));
            else {
                spool_input in = {.fd = fd};
                rc = spool(s, &in, 1 << 16, o, d);
            }
        }
    } else {
        spool_input in = {.fd = fd};
        rc = spool(s, &in, o->read_chunk ? o->read_chunk : 1 << 16, o, d);
    }
    if (!is_stdin)
        close(fd);
    return rc;
}

/* The pages of a mapping before upto, less the last few, given back; *released: how far it
 * was done (the caller's). Readers may look back a little (keep). A call per 4 MiB, not per MiB:
 * each call flushes the TLB, on the other core too (an IPI) when the process ran there lately,
 * which cost about as much as zapping the pages; 4 MiB more pages mapped at most stays within
 * test_reader_memory's flatness bound. */
static void release_upto(const uint8_t *data, uint64_t *released, uint64_t upto)
{
    const uint64_t keep = 4u << 20, step = 4u << 20;
    if (upto <= keep)
        return;
    uint64_t end = upto - keep;
    if (end + (8u << 20) < *released)
        *released = 0; /* read again from the front (the next pass): its pages go back again */
    if (end < *released + step)
        return; /* cheap enough to be asked after every batch of records */
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    end = end / page * page;
    tci_advise((uint8_t *)data + *released, (size_t)(end - *released), TCI_ADVISE_DONTNEED);
    *released = end;
}

void tci_source_release(tci_source *s, uint64_t upto)
{
    if (s && s->mapped)
        release_upto(s->data, &s->released, upto);
}

void tci_sys_text_release(const tci_trace *t, uint64_t upto, uint64_t *released)
{
    if (t->sys_text_mapped && upto <= t->sys_text_len)
        release_upto((const uint8_t *)t->sys_text, released, upto);
}

void tci_source_drop(tci_source *s, uint64_t from, uint64_t to)
{
    if (!s || !s->mapped || to > s->size)
        return;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), a = (from + page - 1) / page * page, b = to / page * page;
    if (a < b)
        tci_advise((uint8_t *)s->data + a, (size_t)(b - a), TCI_ADVISE_DONTNEED);
}

uint64_t tci_source_changed(const tci_source *s)
{
    return s && s->guard ? tci_guard_fault(s->guard - 1, s->data) : 0;
}

void tci_source_close(tci_source *s)
{
    if (s->guard_owned)
        tci_guard_remove(s->guard - 1); /* before the munmap: the address may be reused at once */
    if (s->mapped)
        munmap((void *)s->data, s->size);
    free(s->owned);
    memset(s, 0, sizeof *s);
}

/* The guard above for a decompression the library does not make itself (an application's
 * archive members): one rule and one message for every decompression. */
int tc_check_expansion(uint64_t expanded, uint64_t consumed_bytes, uint64_t max_input, const char *what, char *err,
                       size_t errlen)
{
    spool_state st;
    memset(&st, 0, sizeof st);
    st.mode = consumed_bytes < expanded ? 2 : 1; /* 2: inside a compressed stream */
    st.total = expanded;
    st.in_total = consumed_bytes;
    st.max_total = max_input ? max_input : TCI_DEFAULT_MAX_INPUT;
    if (!what)
        what = "the input";
    switch (check_growth(&st)) {
    case FEED_OK:
        return TC_OK;
    case FEED_TOO_BIG:
        if (st.mode < 2)
            snprintf(err, errlen, "%s is larger than max-input (%llu bytes); raise it with --max-input", what,
                     (unsigned long long)st.max_total);
        else
            snprintf(err, errlen, TCI_EXPANDS_MESSAGE, what, (unsigned long long)st.max_total);
        return TC_ERR_LIMIT;
    default:
        snprintf(err, errlen, TCI_BOMB_MESSAGE, what, TCI_BOMB_RATIO, (unsigned long long)st.total,
                 (unsigned long long)consumed(&st));
        return TC_ERR_LIMIT;
    }
}
