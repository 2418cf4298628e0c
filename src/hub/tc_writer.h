/*
 * tc_writer.h - what a writer is and what it writes to: the writer descriptor, the sink's fast
 * paths (the sink itself: tc_sink.h), the text-out helpers (textout.c).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_WRITER_H
#define TC_TC_WRITER_H

#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_sink.h"
#include "tc_trace.h"
#include "tc_base.h"

/* ---- output sink: the fast paths into tc_sink.h's buffer ---------------- */

static inline void tci_sink_write(tci_sink *s, const void *p, size_t n)
{
    if (TCI_LIKELY(s->len + n <= sizeof s->buf)) {
        memcpy(s->buf + s->len, p, n);
        s->len += n;
        return;
    }
    const uint8_t *b = p;
    while (n) {
        if (s->len == sizeof s->buf && tci_sink_flush_buf(s) != 0)
            return;
        size_t room = sizeof s->buf - s->len, k = n < room ? n : room;
        memcpy(s->buf + s->len, b, k);
        s->len += k;
        b += k;
        n -= k;
    }
}
/* A string literal: its length is known at compile time. */
#define TCI_PUT_LIT(sink, lit) tci_sink_write((sink), "" lit, sizeof(lit) - 1)
static inline void tci_sink_puts(tci_sink *s, const char *str) { tci_sink_write(s, str, strlen(str)); }
static inline void tci_sink_putc(tci_sink *s, char c)
{
    if (TCI_UNLIKELY(s->len == sizeof s->buf) && tci_sink_flush_buf(s) != 0)
        return;
    s->buf[s->len++] = (uint8_t)c;
}
void tci_sink_u64(tci_sink *s, uint64_t v);
void tci_sink_i64(tci_sink *s, int64_t v);
/* v / 1000 with exactly three decimals, e.g. 1234567 -> "1234.567" (µs from ns). */
void tci_sink_milli(tci_sink *s, int64_t v);
/* The same text at dst, which has TCI_MILLI_ROOM bytes of room (any int64 fits); returns its
 * length. For a writer that checks the sink's room once for a whole line. */
#define TCI_MILLI_ROOM 32
size_t tci_fmt_milli(char *dst, int64_t v);
/* The same again for a series of close values (one thread's timestamps): the text of all but
 * the last seven digits of v is kept from the call before when they are the same, so most calls
 * only place eight characters. A memo starts zeroed; TCI_MILLI_ROOM bytes of room at dst. */
typedef struct tci_milli_memo {
    uint64_t hi;   /* v / 10^7 whose text is kept; 0: none (never kept: no leading digits) */
    uint32_t len;  /* its length */
    char text[20];
} tci_milli_memo;
size_t tci_fmt_milli_memo(char *dst, int64_t v, tci_milli_memo *m);
void tci_sink_printf(tci_sink *s, const char *fmt, ...) TCI_PRINTF(2, 3);
/* A JSON string literal with quotes; invalid UTF-8 bytes become U+FFFD. */
void tci_sink_json_string(tci_sink *s, const char *str);
/* The same literal in the arena, for writers that repeat names (len set, not NUL-terminated). */
char *tci_json_quote(tci_arena *a, const char *str, size_t *len);
/* The same literal at dst, which has room for 6n+2 bytes; returns its length. */
size_t tci_json_quote_to(char *dst, const char *str, size_t n);

/* ---- text out (textout.c): names and numbers as the table writers print them ---- */

/* ns to µs, to the nearest, halves away from zero (|ns| <= TCI_SUM_MAX: no overflow). Every
 * writer that prints µs (report, dot, diff) rounds each figure once, this way. */
static inline int64_t tci_us_of(int64_t ns) { return ns >= 0 ? (ns + 500) / 1000 : -((-ns + 500) / 1000); }
/* A call count as a signed figure (saturated), so that two can be subtracted. */
static inline int64_t tci_clamp_calls(uint64_t c) { return c > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)c; }
/* Text (escape.h's text rule): printable UTF-8 as it is; control characters, backslashes and
 * bytes that are not UTF-8 as escapes (\n, \\, \x1B, \u009B, \xFF). */
void tci_put_escaped_text(tci_sink *o, const char *s);
/* Whether a CSV field must be quoted (a ',', '"', CR or LF in it; NULL: no). */
bool tci_csv_needs_quotes(const char *s);
/* The text of a CSV field as tci_put_escaped_text writes it, but bytes that are not UTF-8 as
 * U+FFFD, quotes doubled when quoted. */
void tci_put_csv_text(tci_sink *o, const char *s, bool quoted);
/* One whole CSV field: quoted only when it must be. */
void tci_put_csv_field(tci_sink *o, const char *s);
/* Names in markup, Graphviz labels (escape.h's rules) into a sink. */
void tci_put_markup(tci_sink *o, const char *s, enum tci_esc_shown shown);
void tci_put_markup_cp(tci_sink *o, const uint32_t *cp, size_t n);
void tci_put_dot_label(tci_sink *o, const char *s, size_t max);
/* A JS/JSON string literal's contents: the name as tci_put_markup(TCI_ESC_VISIBLE) shows it. */
void tci_put_js_visible(tci_sink *o, const char *s);
/* A method as the reports name it: "pkg.Class.method (sig)ret", a plain name (a systrace slice)
 * as it is, an unknown id as every writer names it ("unknown.0x1c"); put writes each part in the
 * output's escaping. */
void tci_put_method_name(tci_sink *o, const tci_method *m, void (*put)(tci_sink *, const char *));
/* Numbers as printf writes them, for the table writers' millions of cells: "%llu" and "%lld"
 * into b (at least 21 bytes), "%.1f" (b at least TCI_FMT_FIXED1_MAX bytes; the same text for
 * every double, rounding included); each NUL-terminated, the length returned. */
size_t tci_fmt_u64(char *b, uint64_t v);
size_t tci_fmt_i64(char *b, int64_t v);
#define TCI_FMT_FIXED1_MAX 320
size_t tci_fmt_fixed1(char *b, double x);
/* The tenths "%.1f" shows of |x| (its sign: signbit(x)), or false when printf must say it
 * (|x| >= 2^50, infinities, NaN): for cells written in place (report.c). */
bool tci_fixed1_tenths(double x, uint64_t *tenths);
/* text padded with blanks to width as printf's "%*s": right-aligned, or left-aligned ("%-*s")
 * when width is negative. */
void tci_put_aligned(tci_sink *o, const char *text, size_t len, int width);

/* ---- writers ------------------------------------------------------------ */

enum tci_writer_flags {
    TCI_WF_AGGREGATE = 1,    /* finish() receives the call tree */
    TCI_WF_GLOBAL_ORDER = 2, /* events must arrive in global time order */
    TCI_WF_GZIP = 4,         /* the sink gzips the output */
    TCI_WF_BINARY = 8,       /* output is not text */
    TCI_WF_SYSTEM = 16       /* event() takes system events (scheduler data); the others are not given
                              * them and say how many they leave out (conv.c) */
};

/* The app's package, as the conversion found it (analysis/tc_codegroup.h's tci_app_find: its
 * rules) and every writer is told it. */
/* The evidence the app's package was found by, strongest first. */
enum tci_app_source {
    TCI_APP_NONE,
    TCI_APP_GIVEN,     /* option app-package */
    TCI_APP_LIFECYCLE, /* the framework calls a lifecycle method of the app's component */
    TCI_APP_PROCESS,   /* the input's process name */
    TCI_APP_TIME,      /* the package prefix with the most inclusive time (a call tree) */
    TCI_APP_INFERRED   /* the package prefix with the most methods (no call tree) */
};

typedef struct tci_app_package {
    const char *name;     /* NULL: none (source TCI_APP_NONE) */
    enum tci_app_source source;
    const char *evidence; /* the legend's and the summary's words: "given", "MainActivity.onCreate
                           * called by Instrumentation.callActivityOnCreate", "process name",
                           * "inferred: 38% of the wall time", "inferred", "none found" */
} tci_app_package;

typedef struct tci_wctx {
    const char *writer_name;
    void *priv;
    tci_sink *out;
    const tci_trace *trace;
    const tci_options *opt;
    tci_diag *diag;
    /* Set before finish() when the conversion built the call tree: the app, found once for
     * every output; NULL: none was looked for. */
    const tci_app_package *app;
    /* ... and the views' order of threads (main first; the engine ranks them), n_threads
     * indexes; NULL: the tables' order. */
    const uint32_t *thread_order;
} tci_wctx;

/*
 * What a writer (or a diff format) makes: its first variant is its default output, named
 * after it; an option of its own may select another (report's html: report-html), and the
 * other's name selects it for one output (-o report-html). The command names outputs,
 * serves them and tells its own outputs from original traces by these rows.
 */
typedef struct tci_variant {
    const char *name;      /* what -o and tc_conv_write take; the first is the format's own name */
    const char *extension; /* of a default output name ("report.html"); unique among all variants */
    const char *mime;      /* its media type ("text/html; charset=utf-8") */
    const char *mark;      /* text in the first or last 8 KiB of every such output (NULL: none) */
    const char *option;    /* the bool option that selects it (NULL: the first, the default) */
    bool inline_view;      /* a browser shows it as a page or an image (not a download) */
    const tci_option_def *options; /* options this variant reads besides its writer's
                                           * (report-html's flame graphs: app-package); NULL-key
                                           * terminated, or NULL */
    /* Other names -o takes for it, comma-separated, in any case ("svg"): the names people
     * type for this output. Unique among every variant's names and aliases of the writers
     * (and, apart, of the diff formats); test_format_names checks. */
    const char *aliases;
} tci_variant;

typedef struct tci_writer {
    const char *name, *description, *extensions;
    const tci_option_def *options; /* the options it reads (NULL-key terminated); NULL: none */
    const tci_variant *variants;   /* at least one (NULL-name terminated) */
    size_t priv_size;
    unsigned flags;
    int (*begin)(tci_wctx *w);                          /* tables are final here */
    int (*event)(tci_wctx *w, const tci_event *ev);     /* may be NULL */
    int (*finish)(tci_wctx *w, const tci_calltree *ct); /* ct NULL unless TCI_WF_AGGREGATE */
    void (*close)(tci_wctx *w);                         /* always called */
} tci_writer;


/* ---- writers: what finish() may say ---- */

/* For finish(): n events this writer could not show, counted with one kept
 * message (the diagnostics are muted while events flow). */
void tci_writer_dropped(tci_wctx *w, uint64_t n, const char *what);

#endif /* TC_TC_WRITER_H */
