/* sink.c - buffered output with optional gzip: the bytes a writer hands over, to a FILE or a
 * function (tc_sink.h). The text written into a sink, numbers and strings formatted without
 * printf in hot paths, is textout.c's; the inline fast paths that fill the buffer are
 * tc_writer.h's, and call tci_sink_flush_buf here when it is full. */
#include "tc_base.h"
#include "tc_cancel.h"
#include "tc_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include <errno.h>

void tci_sink_fail(tci_sink *s, int errnum)
{
    if (!s->err) {
        s->errnum = errnum ? errnum : EIO;
        s->status = TC_ERR_IO;
    }
    s->err = 1;
}

void tci_sink_stop(tci_sink *s, int status)
{
    if (!s->err) {
        s->errnum = 0;
        s->status = status;
    }
    s->err = 1;
}

static int sink_init(tci_sink *s, bool gzip)
{
    s->len = 0;
    s->err = 0;
    s->errnum = 0;
    s->status = TC_OK;
    s->written = 0;
    s->emitted = 0;
    s->limit = UINT64_MAX;
    s->cancel = NULL;
    s->script_data = s->script_at_start = false;
    s->script_st = (tci_esc_script){0};
    s->n_switches = 0;
    s->z = NULL;
    s->zbuf = NULL;
    if (!gzip)
        return TC_OK;
    s->z = calloc(1, sizeof *s->z);
    s->zbuf = malloc(sizeof s->buf);
    if (!s->z || !s->zbuf)
        return TC_ERR_NOMEM;
    /* windowBits 15 + 16: a gzip wrapper, which is what pprof and zcat expect */
    if (deflateInit2(s->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(s->z);
        s->z = NULL;
        return TC_ERR_NOMEM;
    }
    return TC_OK;
}

int tci_sink_open(tci_sink *s, FILE *fp, bool gzip)
{
    s->fp = fp;
    s->fn = NULL;
    s->fn_user = NULL;
    return sink_init(s, gzip);
}

int tci_sink_open_fn(tci_sink *s, tc_write_fn fn, void *user, bool gzip)
{
    s->fp = NULL;
    s->fn = fn;
    s->fn_user = user;
    return sink_init(s, gzip);
}

/* The one place bytes leave the sink: a failure keeps its errno; past the limit
 * (max-output) nothing more leaves, and the output fails with TC_ERR_LIMIT. */
static int emit(tci_sink *s, const void *p, size_t n)
{
    if (TCI_UNLIKELY(n > s->limit - s->emitted)) {
        tci_sink_stop(s, TC_ERR_LIMIT);
        return -1;
    }
    s->emitted += n;
    errno = 0;
    int bad = s->fn ? s->fn(s->fn_user, p, n) != 0 : fwrite(p, 1, n, s->fp) != n;
    if (bad)
        tci_sink_fail(s, errno);
    return bad ? -1 : 0;
}

static int deflate_out(tci_sink *s, const uint8_t *p, size_t n, int flush)
{
    s->z->next_in = (Bytef *)p;
    s->z->avail_in = (uInt)n;
    int rc;
    do {
        s->z->next_out = s->zbuf;
        s->z->avail_out = sizeof s->buf;
        rc = deflate(s->z, flush);
        if (rc == Z_STREAM_ERROR) {
            tci_sink_fail(s, EIO);
            return -1;
        }
        size_t have = sizeof s->buf - s->z->avail_out;
        if (have && emit(s, s->zbuf, have) != 0)
            return -1;
    } while (s->z->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}

static int out(tci_sink *s, const void *p, size_t n)
{
    return s->z ? deflate_out(s, p, n, Z_NO_FLUSH) : emit(s, p, n);
}

/* escape.h's writer for the script-data rule: stops at the first failure */
static void out_script(void *sink, const char *p, size_t n)
{
    tci_sink *s = sink;
    if (!s->err)
        (void)out(s, p, n);
}

/* n buffered bytes out, under the script-data rule or as they are */
static int out_segment(tci_sink *s, const uint8_t *p, size_t n, bool script)
{
    if (!n)
        return 0;
    if (!script)
        return out(s, p, n);
    tci_esc_script_data(out_script, s, (const char *)p, n, &s->script_st);
    return s->err ? -1 : 0;
}

/* A block ends: the bytes the rule holds go out as they are. */
static int end_script(tci_sink *s)
{
    tci_esc_script_end(out_script, s, &s->script_st);
    return s->err ? -1 : 0;
}

int tci_sink_flush_buf(tci_sink *s)
{
    if (s->err)
        return -1;
    if (tci_cancel_step(s->cancel, (int64_t)s->len + 1)) {
        tci_sink_stop(s, TC_ERR_CANCELED);
        return -1;
    }
    int bad = 0;
    if (s->len) {
        bool script = s->script_at_start;
        size_t from = 0;
        for (unsigned k = 0; k < s->n_switches && !bad; k++) {
            bad = out_segment(s, s->buf + from, s->switch_at[k] - from, script);
            if (!bad && script) /* a block's "<scr" does not pair with what follows it */
                bad = end_script(s);
            from = s->switch_at[k];
            script = !script;
        }
        if (!bad)
            bad = out_segment(s, s->buf + from, s->len - from, script);
        s->written += s->len;
        s->len = 0;
    }
    s->n_switches = 0;
    s->script_at_start = s->script_data;
    return bad ? -1 : 0;
}

void tci_sink_script_data(tci_sink *s, bool on)
{
    if (on == s->script_data)
        return;
    if (s->n_switches == sizeof s->switch_at / sizeof *s->switch_at)
        (void)tci_sink_flush_buf(s); /* more blocks than noted in one buffer: rare, write them */
    if (s->len == 0) {
        if (!on)
            (void)end_script(s); /* the block's last bytes, held at the last flush */
        s->script_at_start = on;
    } else {
        s->switch_at[s->n_switches++] = (uint32_t)s->len;
    }
    s->script_data = on;
}

static void release_gzip(tci_sink *s)
{
    if (s->z) {
        deflateEnd(s->z);
        free(s->z);
        s->z = NULL;
    }
    free(s->zbuf);
    s->zbuf = NULL;
}

int tci_sink_close(tci_sink *s)
{
    int bad = tci_sink_flush_buf(s) != 0;
    if (!bad && s->script_st.n) /* a block left open: what the rule holds of it */
        bad = end_script(s) != 0;
    if (s->z && !bad && deflate_out(s, NULL, 0, Z_FINISH) != 0)
        bad = 1;
    release_gzip(s);
    if (!bad && s->fp) {
        errno = 0;
        if (fflush(s->fp) != 0) {
            tci_sink_fail(s, errno);
            bad = 1;
        }
    }
    return bad || s->err ? TC_ERR_IO : TC_OK;
}

void tci_sink_discard(tci_sink *s)
{
    s->len = 0;
    release_gzip(s);
}
