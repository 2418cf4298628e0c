/*
 * tc_sink.h - the output sink (sink.c): a buffer of bytes to a FILE or a caller's function,
 * gzipped or not, that stops at a write error, at max-output or when the conversion is
 * canceled. The inline fast paths that fill it and the text written into it are tc_writer.h's
 * (they call tci_sink_flush_buf when the buffer is full; sink.c does not include them).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_SINK_H
#define TC_TC_SINK_H

#include "tc_cancel.h"
#include "tc_base.h"

/* ---- output sink -------------------------------------------------------- */

typedef struct tci_sink {
    FILE *fp;              /* the output: a FILE, or */
    tc_write_fn fn;        /* a caller's function (fp NULL) */
    void *fn_user;
    struct z_stream_s *z;  /* non-NULL: gzip the output */
    uint8_t *zbuf;
    size_t len;
    int err;               /* set once a write failed: nothing more is written */
    int errnum;            /* the errno of that failure, for the message */
    int status;            /* what failed it: TC_ERR_IO (errnum), TC_ERR_LIMIT (limit), TC_ERR_CANCELED */
    uint64_t written;
    uint64_t emitted;      /* bytes handed to the FILE or function (compressed for gzip) */
    uint64_t limit;        /* emitted may not pass it (max-output): the output fails with TC_ERR_LIMIT */
    tci_cancel *cancel;    /* asked at flushes (NULL: none) */
    bool script_data;      /* inside a <script> that readers take raw: escape.h's rule at flush */
    tci_esc_script script_st; /* escape.h's state of the rule between flushes (the bytes it holds) */
    bool script_at_start;  /* script_data as it was for buf[0] */
    uint8_t n_switches;    /* offsets in buf where script_data flips, not yet flushed: */
    uint32_t switch_at[8]; /* a switch does not flush, so nothing leaves before it must */
    uint8_t buf[1 << 16];
} tci_sink;

int tci_sink_open(tci_sink *s, FILE *fp, bool gzip);
int tci_sink_open_fn(tci_sink *s, tc_write_fn fn, void *user, bool gzip);
int tci_sink_flush_buf(tci_sink *s);
int tci_sink_close(tci_sink *s); /* finish gzip, flush; returns error status */
/* Drop what is buffered and release the sink without writing more (a canceled conversion). */
void tci_sink_discard(tci_sink *s);
/* Mark the sink failed with errnum (the first failure is kept). */
void tci_sink_fail(tci_sink *s, int errnum);
/* Mark it failed for another cause (TC_ERR_LIMIT, TC_ERR_CANCELED); the first is kept. */
void tci_sink_stop(tci_sink *s, int status);
/* Whether the output has failed (a write error, max-output, cancel): nothing more reaches it,
 * so a writer's long loop stops here instead of computing bytes nobody will see. */
static inline bool tci_sink_failed(const tci_sink *s) { return s->err != 0; }
/* From here on (on) or no longer (off), the bytes written are the contents of a <script>
 * element read raw (systrace's trace-data): escape.h's script-data rule is applied to them as
 * they leave the sink, so it holds for the final bytes whatever wrote them. The switch is
 * noted at its offset in the buffer, not flushed: nothing is written earlier than without it
 * (a conversion canceled before its first 64 KiB writes nothing). */
void tci_sink_script_data(tci_sink *s, bool on);

#endif /* TC_TC_SINK_H */
