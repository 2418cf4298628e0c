/*
 * serve.c - `traceconv serve`: the upload page and the conversion API over HTTP
 * (libmicrohttpd), a thin client of traceconv.h like the rest of the command.
 *
 * Thread model: MHD's one internal polling thread (epoll/poll) parses requests,
 * streams uploads to private files in the store (never into memory: multipart
 * through MHD's post processor, a raw body written as it comes) and sends files
 * and pages through content readers, which tell serve_guard.c how fast each
 * answer is read (a slow reader is bounded as a slow sender is). A finished
 * upload becomes a job for the worker pool
 * (serve_store.c) and its connection is suspended until a worker is done with
 * it, so a conversion never runs on the event thread and a slow conversion
 * blocks no other client. The main thread waits for SIGINT/SIGTERM/SIGHUP and
 * expires old results meanwhile.
 *
 * URLs follow a fixed grammar; nothing the client sends becomes a path:
 *   GET  /                      the upload page
 *   GET  /static/serve.css|js   the page's assets
 *   GET  /api/formats           readers and writers, JSON
 *   POST /upload                multipart: trace, optional mapping and deobfuscate
 *   POST /api/convert?to=W...   the converted file, or 422 and the CLI's line
 *   GET  /r/<32 hex>            a result page
 *   GET  /r/<32 hex>/<file>     one of srv_output_at's fixed names (?download=1: attachment)
 * Anything else is 404; methods other than GET, HEAD and POST are 405.
 */
#include "serve.h"
#include "cli_util.h"
#include "outfile.h"
#include "../util/escape.h" /* the library's escaping rules, compiled in (CMakeLists.txt) */
#include "traceconv.h"
#include "../util/tc_compat.h" /* compiled in (CMakeLists.txt) */

#include <microhttpd.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_FAIL = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: traceconv serve [--listen ADDR:PORT] [-j N] [--max-upload SIZE] [--store DIR]\n"
    "                       [--keep N|AGE]... [--keep-size SIZE] [--queue N] [--max-output SIZE|Nx]\n"
    "                       [--allow-host NAME]... [--header-timeout SECONDS] [--min-rate SIZE]\n"
    "\n"
    "An HTTP server: an upload page (flame graph, report, every download) and a\n"
    "conversion API (POST /api/convert?to=FORMAT, GET /api/formats).\n"
    "\n"
    "      --listen ADDR:PORT  where to listen (default 127.0.0.1:8080; [::1]:8080 for\n"
    "                          IPv6; port 0 picks a free one). The URL is printed on stderr.\n"
    "  -j, --jobs N            conversions at once (default: the number of CPUs)\n"
    "      --queue N           uploads waiting for a worker at most; more are refused\n"
    "                          with 503 (default 64)\n"
    "      --max-upload SIZE   largest upload, K/M/G suffixes (default 512M); larger ones\n"
    "                          are refused with 413 while they stream\n"
    "      --store DIR         keep results in DIR (mode 0700; default: a private\n"
    "                          directory under $TMPDIR, removed at exit)\n"
    "      --keep N            keep at most N results (default 100)\n"
    "      --keep AGE          drop results older than AGE: 90s, 30m, 1h, 2d (default 1d)\n"
    "      --keep-size SIZE    keep at most SIZE of results in all (default 2G); the page\n"
    "                          refuses a trace whose result would not fit (\"too large\")\n"
    "      --max-output SIZE|Nx  each conversion's output at most SIZE, or N times the\n"
    "                          trace's size (at least 4M); larger is refused with 422\n"
    "                          (default 64x)\n"
    "      --allow-host NAME   also answer requests for Host NAME (behind a proxy, or a\n"
    "                          name of this machine); others are refused (403)\n"
    "      --header-timeout S  a request's headers must arrive within S seconds, and a body\n"
    "      --min-rate SIZE     (or an answer, read) must average SIZE bytes a second after\n"
    "                          that (default 10, 16K); slower connections are closed\n"
    "  -h, --help              this text\n"
    "\n"
    "SIGINT or SIGTERM stops the server: running conversions are canceled, temporary\n"
    "files (and the default store) removed; the exit status is then 0.\n";

/* The options the API takes in its query are the library's of the same name that a client
 * may choose (cli_api_option: not the limits, which the server sets, nor what the open
 * reads); flags may come without a value (&merge-threads). "weight, ...": for messages. */
static const char *api_option_list(void)
{
    static char list[1024];
    if (!list[0]) {
        const tc_option_info *keys[128];
        size_t n = cli_option_keys(CLI_CORE | CLI_WRITERS, keys, 128), len = 0;
        for (size_t i = 0; i < n && len < sizeof list; i++)
            if (cli_api_option(keys[i]->name))
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", keys[i]->name);
    }
    return list;
}

typedef struct server {
    struct MHD_Daemon *daemon;
    srv_store *store;
    srv_pool *pool;
    srv_guard *guard;
    srv_caps caps;
    uint64_t max_upload;
    char *index_html;
    pthread_mutex_t done_lock; /* job->done between a worker and the event thread */
} server;

enum { REQ_UPLOAD = 1, REQ_API = 2, REQ_DOWNLOAD = 3 };
enum { F_TRACE, F_RHEA, F_DEOBF, N_FIELDS };

typedef struct request {
    int kind;
    int want_json; /* /upload from the page's script */
    int multipart;
    struct MHD_PostProcessor *pp;
    int fd[N_FIELDS];
    char path[N_FIELDS][PATH_MAX];
    uint64_t got[N_FIELDS];  /* bytes of each field: a second part of one is refused */
    uint64_t received;
    const srv_output *output; /* REQ_DOWNLOAD: the output converted on demand */
    int inline_view;         /* REQ_DOWNLOAD: no ?download: shown in the page's frame when what is written is
                                a page or an image (a flame graph with a selection), else an attachment */
    int fail;                /* an HTTP status to answer with once the body is consumed */
    char fail_msg[SRV_ERROR_MAX];
    srv_job *job;
    int submitted;
    server *srv;
} request;

/* ---- responses ---- */

static const char csp_page[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "frame-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
                               "frame-ancestors 'none'";
/* a flame graph or HTML report shown in the page's sandboxed iframe: its own inline script only */
static const char csp_document[] = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                                   "img-src data:; frame-ancestors 'self'; sandbox allow-scripts";
static const char csp_data[] = "default-src 'none'; frame-ancestors 'none'; sandbox";

static void secure_headers(struct MHD_Response *r, const char *csp)
{
    MHD_add_response_header(r, "Content-Security-Policy", csp);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Cache-Control", "no-store");
}

/* An answer's body, handed to libmicrohttpd by a content reader rather than sent by it from
 * the buffer or the file (sendfile): the reader tells the guard how much of it was taken, so
 * that a client reading it slowly is bounded by --min-rate as one sending slowly is
 * (serve_guard.c). The connection is only used while libmicrohttpd reads its answer. */
typedef struct answer {
    struct MHD_Connection *conn;
    int fd;            /* a file the answer owns, or -1 and */
    const char *mem;   /* a buffer of len bytes, */
    size_t len;
    int free_mem;      /* freed with the answer */
} answer;

enum { ANSWER_BLOCK = 32 * 1024 };

static ssize_t read_answer(void *cls, uint64_t pos, char *buf, size_t max)
{
    answer *a = cls;
    ssize_t n;
    if (a->fd >= 0) {
        do
            n = pread(a->fd, buf, max, (off_t)pos);
        while (n < 0 && errno == EINTR);
        if (n <= 0) /* the size was announced: a file that ends early cannot end the answer well */
            return MHD_CONTENT_READER_END_WITH_ERROR;
    } else {
        if (pos >= a->len)
            return MHD_CONTENT_READER_END_OF_STREAM;
        n = (ssize_t)(a->len - pos < max ? a->len - pos : max);
        memcpy(buf, a->mem + pos, (size_t)n);
    }
    srv_guard_answer_bytes(a->conn, (size_t)n);
    return n;
}

static void free_answer(void *cls)
{
    answer *a = cls;
    if (a->fd >= 0)
        close(a->fd);
    if (a->free_mem)
        free((void *)a->mem);
    free(a);
}

/* A response of size bytes from fd (which it owns from here, also on failure) or mem. */
static struct MHD_Response *answer_response(struct MHD_Connection *conn, uint64_t size, int fd, const char *mem,
                                            int free_mem)
{
    answer *a = calloc(1, sizeof *a);
    struct MHD_Response *r = NULL;
    if (a) {
        *a = (answer){.conn = conn, .fd = fd, .mem = mem, .len = (size_t)size, .free_mem = free_mem};
        r = MHD_create_response_from_callback(size, ANSWER_BLOCK, read_answer, a, free_answer);
        if (!r)
            free_answer(a);
    } else {
        if (fd >= 0)
            close(fd);
        if (free_mem)
            free((void *)mem);
    }
    return r;
}

/* Queued, and timed by the guard from now (its client must read it at --min-rate). */
static enum MHD_Result queue_answer(struct MHD_Connection *conn, unsigned status, struct MHD_Response *r)
{
    srv_guard_answer(conn);
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_buffer(struct MHD_Connection *conn, unsigned status, const char *type, const char *csp,
                                   const char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = answer_response(conn, len, -1, body, mode == MHD_RESPMEM_MUST_FREE);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    secure_headers(r, csp);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD, POST");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, "Retry-After", "5");
    return queue_answer(conn, status, r);
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *line)
{
    char *body;
    if (tci_asprintf(&body, "%s\n", line) < 0)
        return MHD_NO;
    return send_buffer(conn, status, "text/plain; charset=utf-8", csp_data, body, strlen(body),
                       MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result send_html(struct MHD_Connection *conn, unsigned status, char *page)
{
    if (!page)
        return MHD_NO;
    return send_buffer(conn, status, "text/html; charset=utf-8", csp_page, page, strlen(page), MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result send_error_page(struct MHD_Connection *conn, unsigned status, const char *line)
{
    return send_html(conn, status, srv_error_page((int)status, line));
}

static void put_file(void *fp, const char *p, size_t n) { fwrite(p, 1, n, fp); }

/* escape.h's JS/JSON string rule: never markup, wherever the JSON ends up */
static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    tci_esc_js_string(put_file, fp, s, strlen(s));
    fputc('"', fp);
}

static enum MHD_Result send_json_fields(struct MHD_Connection *conn, unsigned status, const char *key,
                                        const char *value)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp)
        return MHD_NO;
    fprintf(fp, "{\"%s\":", key);
    json_string(fp, value);
    fputs("}\n", fp);
    if (fclose(fp) != 0) {
        free(buf);
        return MHD_NO;
    }
    return send_buffer(conn, status, "application/json", csp_data, buf, len, MHD_RESPMEM_MUST_FREE);
}

/* A file from the store (or an API output): sent from its descriptor, which the response owns. */
static enum MHD_Result send_fd(struct MHD_Connection *conn, int fd, uint64_t size, const char *type, const char *csp,
                               const char *download_name)
{
    struct MHD_Response *r = answer_response(conn, size, fd, NULL, 0);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    secure_headers(r, csp);
    if (download_name) {
        char cd[SRV_NAME_MAX + 64];
        snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", download_name);
        MHD_add_response_header(r, "Content-Disposition", cd);
    }
    return queue_answer(conn, MHD_HTTP_OK, r);
}

/* ---- names ---- */

/* A client's file name, for messages and the page: its last component, one line, at most
 * SRV_NAME_MAX - 1 bytes (cut at a character boundary); "trace" when nothing is left. */
static void clean_display(const char *raw, char *out, size_t len)
{
    const char *base = raw ? raw : "";
    for (const char *p = base; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)base; *p && o + 1 < len; p++)
        out[o++] = *p < 0x20 || *p == 0x7f ? '_' : (char)*p;
    while (o > 0 && o + 1 >= len && ((unsigned char)out[o - 1] & 0xC0) == 0x80)
        o--; /* the cut must not leave half a character: drop its continuation bytes ... */
    if (o > 0 && o + 1 >= len && ((unsigned char)out[o - 1] & 0xC0) == 0xC0)
        o--; /* ... and its lead byte */
    out[o] = 0;
    if (!o || !strcmp(out, ".") || !strcmp(out, ".."))
        snprintf(out, len, "trace");
}

/* The download's name: the upload's stem and the output's extension, in plain ASCII
 * (a header value: no quote, backslash, control or non-ASCII byte). */
static void download_name(const char *display, const char *ext, char *out, size_t len)
{
    char stem[SRV_NAME_MAX];
    snprintf(stem, sizeof stem, "%s", display);
    char *dot = strrchr(stem, '.');
    if (dot && !strcmp(dot, ".gz")) {
        *dot = 0;
        dot = strrchr(stem, '.');
    }
    if (dot && dot != stem)
        *dot = 0;
    size_t o = 0;
    for (const char *p = stem; *p && o + 1 < len; p++)
        out[o++] = isalnum((unsigned char)*p) || strchr("._-+", *p) ? *p : '_';
    out[o] = 0;
    snprintf(out + o, len - o, ".%s", ext);
}

/* ---- GET ---- */

/* `traceconv --list-formats --json`, and what only the server has: the options its API
 * takes and the fields of an upload. */
static enum MHD_Result send_formats(struct MHD_Connection *conn, const server *srv)
{
    char *buf = NULL, member[2048];
    size_t len = 0, m = (size_t)snprintf(member, sizeof member, "{\"options\":[");
    for (const char *p = api_option_list(); *p && m < sizeof member;) {
        size_t k = strcspn(p, ",");
        m += (size_t)snprintf(member + m, sizeof member - m, "%s\"%.*s\"", m > 12 ? "," : "", (int)k, p);
        p += k;
        p += strspn(p, ", ");
    }
    if (m < sizeof member)
        snprintf(member + m, sizeof member - m, "],\"fields\":[\"trace\",\"mapping\"%s]}",
                 srv->caps.deobfuscate ? ",\"deobfuscate\"" : "");
    FILE *fp = open_memstream(&buf, &len);
    if (!fp)
        return MHD_NO;
    cli_formats_json(fp, member);
    if (fclose(fp) != 0) {
        free(buf);
        return MHD_NO;
    }
    return send_buffer(conn, MHD_HTTP_OK, "application/json", csp_data, buf, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result not_found(struct MHD_Connection *conn)
{
    return send_text(conn, MHD_HTTP_NOT_FOUND, "not found");
}

/* The display name of a result, as its page's <h2> holds it: read back from the page's
 * data-title attribute would be parsing HTML; the page was written with it, so the
 * result directory keeps it in its own file instead. */
static void result_display(const char *dir, char *out, size_t len)
{
    char path[PATH_MAX + 16];
    (void)srv_path(path, sizeof path, dir, "name");
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(out, 1, len - 1, fp) : 0;
    if (fp)
        fclose(fp);
    out[n] = 0;
    if (!n)
        snprintf(out, len, "trace");
}

static enum MHD_Result start_download(struct MHD_Connection *conn, server *srv, const char *dir,
                                      const srv_output *o, void **con_cls);

static enum MHD_Result count_option_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    (void)value;
    *(int *)cls += strcmp(key, "download") != 0;
    return MHD_YES;
}

/* Whether an output is asked for with options (a selection: thread, since, ...): then it is
 * converted from the result's upload with them, never served from what the result keeps. */
static int has_options(struct MHD_Connection *conn)
{
    int n = 0;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, count_option_arg, &n);
    return n > 0;
}

/* /r/<id> or /r/<id>/<file>: rest is what follows "/r/". */
static enum MHD_Result send_result(struct MHD_Connection *conn, server *srv, const char *rest, void **con_cls)
{
    char id[SRV_ID_HEX + 1], dir[PATH_MAX];
    if (strlen(rest) < SRV_ID_HEX)
        return not_found(conn);
    memcpy(id, rest, SRV_ID_HEX);
    id[SRV_ID_HEX] = 0;
    const char *file = rest + SRV_ID_HEX;
    if (*file && *file++ != '/')
        return not_found(conn);
    if (!srv_store_result_dir(srv->store, id, dir, sizeof dir))
        return not_found(conn);
    const srv_output *o = NULL;
    int info = !strcmp(file, SRV_INFO_FILE);
    if (*file && !info && !(o = srv_output_find(file)))
        return not_found(conn);
    char path[PATH_MAX];
    (void)srv_path(path, sizeof path, dir, o ? o->file : info ? SRV_INFO_FILE : "index.html");
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        if (o && o->on_demand) /* not kept (a result of a --store from before keeps them): converted now */
            return start_download(conn, srv, dir, o, con_cls);
        return not_found(conn); /* an output this trace has not (a CPU flame graph without a CPU clock) */
    }
    if (!o)
        return send_fd(conn, fd, (uint64_t)st.st_size, info ? "application/json" : "text/html; charset=utf-8",
                       info ? csp_data : csp_page, NULL);
    if (has_options(conn)) { /* the page's selection: converted now, from the kept upload */
        close(fd);
        return start_download(conn, srv, dir, o, con_cls);
    }
    const char *dl = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "download");
    const tc_variant_info *v = tc_output_variant(NULL, o->output);
    if (v->inline_view && !dl) /* a flame graph, the HTML report: shown in the page's sandboxed frame */
        return send_fd(conn, fd, (uint64_t)st.st_size, v->mime, csp_document, NULL);
    char display[SRV_NAME_MAX], name[SRV_NAME_MAX + 32];
    result_display(dir, display, sizeof display);
    download_name(display, o->ext, name, sizeof name);
    return send_fd(conn, fd, (uint64_t)st.st_size, v->mime, csp_data, name);
}

static enum MHD_Result handle_get(struct MHD_Connection *conn, server *srv, const char *url, void **con_cls)
{
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return send_buffer(conn, MHD_HTTP_OK, "text/html; charset=utf-8", csp_page, srv->index_html,
                           strlen(srv->index_html), MHD_RESPMEM_PERSISTENT);
    const srv_asset *a = srv_asset_find(url);
    if (a)
        return send_buffer(conn, MHD_HTTP_OK, a->type, csp_data, a->body, strlen(a->body), MHD_RESPMEM_PERSISTENT);
    if (!strcmp(url, "/api/formats"))
        return send_formats(conn, srv);
    if (!strncmp(url, "/r/", 3))
        return send_result(conn, srv, url + 3, con_cls);
    if (!strcmp(url, "/upload") || !strcmp(url, "/api/convert"))
        return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "POST only");
    return not_found(conn);
}

/* libmicrohttpd 0.9.75 treats an answer queued in the first call of a request (its headers
 * just parsed) as "early": it drops the rest of the connection's input and closes it after
 * the answer, so requests pipelined behind it were never answered. A GET is answered in the
 * second call (the end of its empty body) instead, which keeps the connection alive. */
static char answer_next_call;

/* ---- POST: the upload ---- */

static void fail_request(request *rq, int status, const char *msg)
{
    if (!rq->fail) {
        rq->fail = status;
        snprintf(rq->fail_msg, sizeof rq->fail_msg, "%s", msg);
    }
}

static int field_of(const char *key)
{
    if (!strcmp(key, "trace"))
        return F_TRACE;
    if (!strcmp(key, "mapping"))
        return F_RHEA;
    if (!strcmp(key, "deobfuscate"))
        return F_DEOBF;
    return -1;
}

static int open_field(request *rq, int field)
{
    static const char *const suffix[N_FIELDS] = {".upload", ".mapping", ".deobf"};
    if (rq->fd[field] >= 0)
        return 0;
    if (rq->path[field][0]) { /* a second part of the same name */
        fail_request(rq, MHD_HTTP_BAD_REQUEST, "a field is given twice");
        return -1;
    }
    rq->fd[field] = srv_store_temp(rq->srv->store, suffix[field], rq->path[field], sizeof rq->path[field]);
    if (rq->fd[field] < 0) {
        rq->path[field][0] = 0;
        fail_request(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot store the upload");
        return -1;
    }
    return 0;
}

static int write_all(int fd, const char *data, size_t size)
{
    while (size) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        size -= (size_t)w;
    }
    return 0;
}

static void field_data(request *rq, int field, const char *data, size_t size)
{
    if (rq->fail || open_field(rq, field) != 0)
        return;
    if (size && write_all(rq->fd[field], data, size) != 0)
        fail_request(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot store the upload (disk full?)");
}

static void close_fields(request *rq)
{
    for (int i = 0; i < N_FIELDS; i++) {
        if (rq->fd[i] >= 0)
            close(rq->fd[i]);
        rq->fd[i] = -1;
    }
}

static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                               const char *content_type, const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    (void)kind;
    (void)content_type;
    (void)transfer_encoding;
    request *rq = cls;
    int field = key ? field_of(key) : -1;
    if (field < 0)
        return MHD_YES; /* an unknown part: ignored (its bytes count towards the limit) */
    if (field == F_DEOBF && !rq->srv->caps.deobfuscate) {
        if (size)
            fail_request(rq, MHD_HTTP_BAD_REQUEST, "this traceconv cannot deobfuscate (no library option deobfuscate)");
        return MHD_YES;
    }
    if (off == 0 && rq->got[field]) { /* a part starts at offset 0: this field had one already */
        char msg[128];
        snprintf(msg, sizeof msg, "the upload has two '%s' parts: send one", key);
        fail_request(rq, MHD_HTTP_BAD_REQUEST, msg);
        return MHD_YES;
    }
    rq->got[field] += size;
    if (field == F_TRACE && off == 0 && rq->job && !rq->job->display[0])
        clean_display(filename, rq->job->display, sizeof rq->job->display);
    if (field != F_TRACE && !size && rq->fd[field] < 0)
        return MHD_YES; /* an empty optional file input: no mapping */
    field_data(rq, field, data, size);
    return MHD_YES;
}

static void free_request(request *rq)
{
    if (!rq)
        return;
    if (rq->pp)
        MHD_destroy_post_processor(rq->pp);
    close_fields(rq);
    if (!rq->submitted) /* otherwise the worker removed them */
        for (int i = 0; i < N_FIELDS; i++)
            if (rq->path[i][0])
                unlink(rq->path[i]);
    if (rq->job && rq->job->out_fd >= 0)
        close(rq->job->out_fd);
    free(rq->job);
    free(rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    server *srv = cls;
    (void)toe;
    if (*con_cls != &answer_next_call)
        free_request(*con_cls);
    *con_cls = NULL;
    srv_guard_request_done(srv->guard, conn);
}

/* The API's query: known keys only, each option checked by the library at once (a bad
 * value is a 400 before any byte of the upload is read). */
typedef struct query_check {
    request *rq;
    server *srv;
    tc_conv *check;
} query_check;

static int is_reader(const char *name)
{
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (f->is_reader && !strcmp(f->name, name))
            return 1;
    return 0;
}

static enum MHD_Result take_option(query_check *q, const char *key, const char *value);

static enum MHD_Result on_query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    query_check *q = cls;
    request *rq = q->rq;
    srv_job *job = rq->job;
    if (!strcmp(key, "to") || !strcmp(key, "from")) {
        if (!value || strlen(value) >= sizeof job->to) {
            fail_request(rq, MHD_HTTP_BAD_REQUEST, "to= and from= take a format name");
            return MHD_NO;
        }
        const char *known = cli_format_name(value, !strcmp(key, "from")); /* any case, as -o and -i */
        snprintf(!strcmp(key, "to") ? job->to : job->from, sizeof job->to, "%s", known ? known : value);
        return MHD_YES;
    }
    if (!strcmp(key, "name")) {
        clean_display(value, job->display, sizeof job->display);
        return MHD_YES;
    }
    return take_option(q, key, value);
}

/* Whether key is a bool option (a flag may come without a value: &merge-threads). */
static int is_flag(const char *key)
{
    const tc_option_info *keys[128];
    size_t n = cli_option_keys(CLI_CORE | CLI_WRITERS, keys, 128);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i]->name, key))
            return keys[i]->type == TC_OPT_BOOL;
    return 0;
}

/* One option of a query (the API's, or a result's output with a selection): a key of the
 * allow-list, its value checked by the library now; a repeatable one (thread=a&thread=b)
 * is kept once per value, in order, so the library gets each as the command's repeated
 * flags give them. */
static enum MHD_Result take_option(query_check *q, const char *key, const char *value)
{
    request *rq = q->rq;
    srv_job *job = rq->job;
    char msg[512];
    if (!cli_api_option(key)) {
        snprintf(msg, sizeof msg, "unknown option '%.100s' (options: %.380s)", key, api_option_list());
        fail_request(rq, MHD_HTTP_BAD_REQUEST, msg);
        return MHD_NO;
    }
    const char *v = value && *value ? value : is_flag(key) ? "1" : ""; /* &merge-threads; thread= is refused */
    if (job->n_settings == SRV_MAX_SETTINGS || strlen(v) >= sizeof job->settings[0].value) {
        fail_request(rq, MHD_HTTP_BAD_REQUEST, "too many or too long options");
        return MHD_NO;
    }
    if (tc_conv_set_option(q->check, key, v) != TC_OK) {
        char fields[448];
        cli_query_field_text(tc_conv_error(q->check), fields, sizeof fields); /* thread=, not --thread */
        snprintf(msg, sizeof msg, "traceconv: %s", fields);
        fail_request(rq, MHD_HTTP_BAD_REQUEST, msg);
        return MHD_NO;
    }
    srv_setting *s = &job->settings[job->n_settings++];
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->value, sizeof s->value, "%s", v);
    return MHD_YES;
}

static void check_api_query(struct MHD_Connection *conn, server *srv, request *rq)
{
    query_check q = {rq, srv, tc_conv_new()};
    if (!q.check) {
        fail_request(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        return;
    }
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_query_arg, &q);
    tc_conv_free(q.check);
    char msg[256];
    if (rq->fail)
        return;
    if (!rq->job->to[0])
        fail_request(rq, MHD_HTTP_BAD_REQUEST, "missing to=FORMAT (see /api/formats)");
    else if (!tc_writer_extension(rq->job->to)) {
        snprintf(msg, sizeof msg, "unknown output format '%.64s' (see /api/formats)", rq->job->to);
        fail_request(rq, MHD_HTTP_BAD_REQUEST, msg);
    } else if (rq->job->from[0] && !is_reader(rq->job->from)) {
        snprintf(msg, sizeof msg, "unknown input format '%.64s' (see /api/formats)", rq->job->from);
        fail_request(rq, MHD_HTTP_BAD_REQUEST, msg);
    }
}

static uint64_t content_length(struct MHD_Connection *conn, int *known)
{
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    char *end;
    *known = cl && *cl;
    unsigned long long v = *known ? strtoull(cl, &end, 10) : 0;
    return (uint64_t)v;
}

static request *new_request(struct MHD_Connection *conn, server *srv, int kind)
{
    request *rq = calloc(1, sizeof *rq);
    srv_job *job = calloc(1, sizeof *job);
    if (!rq || !job) {
        free(rq);
        free(job);
        return NULL;
    }
    rq->kind = kind;
    rq->srv = srv;
    rq->job = job;
    job->out_fd = -1;
    job->api = kind == REQ_API;
    for (int i = 0; i < N_FIELDS; i++)
        rq->fd[i] = -1;
    const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    rq->want_json = kind == REQ_UPLOAD && accept && strstr(accept, "application/json");
    const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    rq->multipart = type && !strncasecmp(type, "multipart/form-data", 19);
    if (kind == REQ_API)
        check_api_query(conn, srv, rq);
    if (rq->multipart && !rq->fail) {
        rq->pp = MHD_create_post_processor(conn, 64 * 1024, on_part, rq);
        if (!rq->pp)
            fail_request(rq, MHD_HTTP_BAD_REQUEST, "a multipart body without its boundary");
    } else if (!rq->multipart && kind == REQ_UPLOAD && !rq->fail) {
        fail_request(rq, MHD_HTTP_BAD_REQUEST, "the upload form sends multipart/form-data");
    }
    int known;
    uint64_t len = content_length(conn, &known);
    if (!rq->fail && known && len > srv->max_upload)
        fail_request(rq, MHD_HTTP_CONTENT_TOO_LARGE, "the upload is larger than --max-upload");
    if (!rq->fail && known && kind == REQ_UPLOAD && len > srv_store_keep_bytes(srv->store)) {
        char a[32], b[32], msg[SRV_ERROR_MAX];
        srv_human_size(len, a, sizeof a);
        srv_human_size(srv_store_keep_bytes(srv->store), b, sizeof b);
        snprintf(msg, sizeof msg,
                 "too large for this server's page: the upload is %s and the store keeps %s in all (--keep-size); "
                 "the API (POST /api/convert) converts it without keeping it", a, b);
        fail_request(rq, MHD_HTTP_CONTENT_TOO_LARGE, msg);
    }
    if (!rq->fail && srv_pool_full(srv->pool))
        fail_request(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "too many conversions are waiting: try again later");
    return rq;
}

static enum MHD_Result answer_failure(struct MHD_Connection *conn, request *rq, unsigned status, const char *msg)
{
    if (rq->kind == REQ_API)
        return send_text(conn, status, msg);
    if (rq->want_json)
        return send_json_fields(conn, status, "error", msg);
    return send_error_page(conn, status, msg);
}

/* What the job wrote: its writer's variant with the job's options (report with html=1:
 * report-html), whose type and extension the response has. */
static const tc_variant_info *api_variant(const srv_job *job)
{
    tc_conv *c = tc_conv_new();
    for (size_t i = 0; c && i < job->n_settings; i++)
        tc_conv_set_option(c, job->settings[i].key, job->settings[i].value); /* checked with the query */
    const tc_variant_info *v = tc_output_variant(c, job->to);
    tc_conv_free(c);
    return v;
}

static enum MHD_Result answer_job(struct MHD_Connection *conn, request *rq)
{
    srv_job *job = rq->job;
    if (job->status != 200)
        return answer_failure(conn, rq, (unsigned)job->status, job->error);
    if (rq->kind == REQ_API || rq->kind == REQ_DOWNLOAD) {
        char name[SRV_NAME_MAX + 32];
        /* the name, the type and whether it is shown follow what was written: a download's
         * query may pick another variant of its writer (report.txt?html is the HTML report,
         * trace.systrace.html?text the ftrace text), which then has its own extension; the
         * output's own ("wall.svg") is kept when its variant is the one written */
        const tc_variant_info *v = api_variant(job);
        const tc_variant_info *own = rq->output ? tc_output_variant(NULL, rq->output->output) : NULL;
        const char *ext = own && v && !strcmp(own->name, v->name) ? rq->output->ext : v ? v->extension : NULL;
        download_name(job->display, ext ? ext : "out", name, sizeof name);
        int fd = job->out_fd;
        job->out_fd = -1; /* the response owns it now */
        if (rq->inline_view && v && v->inline_view) /* a flame graph or HTML report with a selection: the frame's */
            return send_fd(conn, fd, job->out_size, v->mime, csp_document, NULL);
        return send_fd(conn, fd, job->out_size, v ? v->mime : "application/octet-stream", csp_data, name);
    }
    char where[8 + SRV_ID_HEX];
    snprintf(where, sizeof where, "/r/%s", job->id);
    if (rq->want_json)
        return send_json_fields(conn, MHD_HTTP_OK, "result", where);
    struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Location", where);
    secure_headers(r, csp_data);
    return queue_answer(conn, MHD_HTTP_SEE_OTHER, r);
}

/* A worker is done: wake the connection (MHD calls the handler again). */
static void on_job_done(srv_job *job, void *user)
{
    server *srv = user;
    pthread_mutex_lock(&srv->done_lock);
    job->done = 1;
    pthread_mutex_unlock(&srv->done_lock);
    MHD_resume_connection(job->conn);
}

static int job_done(server *srv, srv_job *job)
{
    pthread_mutex_lock(&srv->done_lock);
    int d = job->done;
    pthread_mutex_unlock(&srv->done_lock);
    return d;
}

/* The body has arrived: hand the job to the pool; the connection sleeps until it is done. */
static enum MHD_Result submit(struct MHD_Connection *conn, server *srv, request *rq)
{
    srv_job *job = rq->job;
    close_fields(rq);
    if (!rq->path[F_TRACE][0])
        return answer_failure(conn, rq, MHD_HTTP_BAD_REQUEST,
                              rq->multipart ? "no trace: the multipart field 'trace' is missing" : "no trace");
    if (!job->display[0])
        snprintf(job->display, sizeof job->display, "trace");
    memcpy(job->trace_path, rq->path[F_TRACE], sizeof job->trace_path);
    memcpy(job->rhea_path, rq->path[F_RHEA], sizeof job->rhea_path);
    memcpy(job->deobf_path, rq->path[F_DEOBF], sizeof job->deobf_path);
    job->conn = conn;
    job->client_fd = srv_guard_fd(conn); /* a job whose client leaves is canceled */
    MHD_suspend_connection(conn); /* before the worker can resume it */
    if (srv_pool_submit(srv->pool, job) != 0) {
        MHD_resume_connection(conn);
        fail_request(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "too many conversions are waiting: try again later");
        return MHD_YES;
    }
    rq->submitted = 1;
    return MHD_YES;
}

static enum MHD_Result handle_body(struct MHD_Connection *conn, server *srv, request *rq, const char *data,
                                   size_t *size)
{
    if (*size) {
        size_t n = *size;
        *size = 0;
        srv_guard_body(srv->guard, conn, n);
        if (rq->fail != MHD_HTTP_CONTENT_TOO_LARGE && rq->received + n > srv->max_upload) {
            rq->fail = 0; /* this failure is the one to tell: the connection closes on it */
            fail_request(rq, MHD_HTTP_CONTENT_TOO_LARGE, "the upload is larger than --max-upload");
        }
        rq->received += n;
        if (rq->fail == MHD_HTTP_CONTENT_TOO_LARGE) {
            /* a declared Content-Length over the limit was answered (413) before the body;
             * here the running size of a chunked body passed it. libmicrohttpd documents
             * that "the response cannot be queued when this callback is called to process
             * the client upload data", and 0.9.75 refuses one on a connection suspended
             * mid-body too (MHD_queue_response gives MHD_NO); answering at the body's end
             * would mean draining a body of unbounded size. So the connection is closed at
             * once, and nothing of the upload is kept. */
            close_fields(rq);
            for (int i = 0; i < N_FIELDS; i++)
                if (rq->path[i][0])
                    unlink(rq->path[i]);
            if (answer_failure(conn, rq, (unsigned)rq->fail, rq->fail_msg) == MHD_YES)
                return MHD_YES;
            return MHD_NO; /* MHD would not take a response now: close the connection */
        }
        if (rq->fail) {
            /* a bad body (two parts of one field, a damaged multipart, a full disk): the rest,
             * bounded by --max-upload, is read and dropped, so that the answer is a clear
             * status line rather than a closed connection */
            close_fields(rq);
            return MHD_YES;
        }
        if (rq->pp) {
            if (MHD_post_process(rq->pp, data, n) != MHD_YES)
                fail_request(rq, MHD_HTTP_BAD_REQUEST, "a malformed multipart body");
        } else {
            field_data(rq, F_TRACE, data, n);
        }
        return MHD_YES;
    }
    if (!rq->submitted)
        srv_guard_body_done(srv->guard, conn);
    if (rq->fail) {
        for (int i = 0; i < N_FIELDS; i++)
            if (rq->path[i][0] && !rq->submitted)
                unlink(rq->path[i]);
        return answer_failure(conn, rq, (unsigned)rq->fail, rq->fail_msg);
    }
    if (!rq->submitted)
        return submit(conn, srv, rq);
    if (job_done(srv, rq->job))
        return answer_job(conn, rq);
    return MHD_YES; /* not done: resumed too early cannot happen, but wait anyway */
}

static enum MHD_Result on_download_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    return strcmp(key, "download") ? take_option(cls, key, value) : MHD_YES;
}

/* A download's options: the query's (the page's selection, checked as the API checks its
 * query: a bad one is 400 with the library's line), then the output's own, which win (the
 * CPU flame graph stays the CPU one). 0, or -1 with rq->fail set. */
static int download_options(struct MHD_Connection *conn, server *srv, request *rq, const srv_output *o)
{
    query_check q = {rq, srv, tc_conv_new()};
    if (!q.check) {
        fail_request(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        return -1;
    }
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_download_arg, &q);
    for (size_t i = 0; !rq->fail && o->options && o->options[i]; i += 2)
        take_option(&q, o->options[i], o->options[i + 1]);
    tc_conv_free(q.check);
    return rq->fail ? -1 : 0;
}

/* GET of an output converted on demand: a job like the API's, from the result's kept upload. */
static enum MHD_Result start_download(struct MHD_Connection *conn, server *srv, const char *dir,
                                      const srv_output *o, void **con_cls)
{
    if (srv_pool_full(srv->pool))
        return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many conversions are waiting: try again later");
    request *rq = calloc(1, sizeof *rq);
    srv_job *job = calloc(1, sizeof *job);
    if (!rq || !job) {
        free(rq);
        free(job);
        return MHD_NO;
    }
    rq->kind = REQ_DOWNLOAD;
    rq->srv = srv;
    rq->job = job;
    rq->output = o;
    for (int i = 0; i < N_FIELDS; i++)
        rq->fd[i] = -1;
    job->out_fd = -1;
    job->api = 1;
    snprintf(job->to, sizeof job->to, "%s", o->output);
    if (download_options(conn, srv, rq, o) != 0) {
        enum MHD_Result r = send_text(conn, (unsigned)rq->fail, rq->fail_msg);
        free_request(rq);
        return r;
    }
    rq->inline_view = !MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "download"); /* if it is a view */
    result_display(dir, job->display, sizeof job->display);
    if (srv_store_link_inputs(srv->store, dir, job) != 0) {
        free_request(rq);
        return not_found(conn); /* expired meanwhile */
    }
    memcpy(rq->path[F_TRACE], job->trace_path, sizeof rq->path[F_TRACE]);
    memcpy(rq->path[F_RHEA], job->rhea_path, sizeof rq->path[F_RHEA]);
    memcpy(rq->path[F_DEOBF], job->deobf_path, sizeof rq->path[F_DEOBF]);
    *con_cls = rq;
    return submit(conn, srv, rq);
}


/* Every Host and Origin header of the request, in any case: libmicrohttpd's lookup gives
 * the first one only, and a second one (that a proxy or the browser may read instead) must
 * not pass unseen. */
static enum MHD_Result note_origin_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    srv_origin *who = cls;
    if (!strcasecmp(key, MHD_HTTP_HEADER_HOST) && who->n_host++ == 0)
        who->host = value;
    else if (!strcasecmp(key, MHD_HTTP_HEADER_ORIGIN) && who->n_origin++ == 0)
        who->origin = value;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    server *srv = cls;
    int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    if (*con_cls == &answer_next_call) {
        if (*size) { /* a GET with a body: read and dropped, at --min-rate as any body */
            srv_guard_body(srv->guard, conn, *size);
            *size = 0;
            return MHD_YES;
        }
        srv_guard_body_done(srv->guard, conn);
        *con_cls = NULL;
        return handle_get(conn, srv, url, con_cls);
    }
    request *rq = *con_cls;
    if (rq)
        return handle_body(conn, srv, rq, data, size);
    char why[SRV_ERROR_MAX];
    srv_origin who = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, note_origin_header, &who);
    int refused = srv_guard_check_request(srv->guard, &who, why, sizeof why);
    if (refused) { /* before the body, whatever the method */
        srv_guard_request(srv->guard, conn, 0);
        return send_text(conn, (unsigned)refused, why);
    }
    if (!get && strcmp(method, MHD_HTTP_METHOD_POST)) {
        srv_guard_request(srv->guard, conn, 0);
        return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET, HEAD and POST");
    }
    if (get) {
        /* a body, if it has one, is waited for at --min-rate: it was not timed at all (G_OTHER),
         * so a GET trickling a declared body a byte a second held its connection */
        srv_guard_request(srv->guard, conn, 1);
        *con_cls = &answer_next_call;
        return MHD_YES;
    }
    int kind = !strcmp(url, "/upload") ? REQ_UPLOAD : !strcmp(url, "/api/convert") ? REQ_API : 0;
    if (!kind) {
        srv_guard_request(srv->guard, conn, 0);
        int known = !strcmp(url, "/") || !strcmp(url, "/api/formats") || srv_asset_find(url);
        return known ? send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only") : not_found(conn);
    }
    rq = new_request(conn, srv, kind);
    if (!rq)
        return MHD_NO;
    *con_cls = rq;
    int early = rq->fail == MHD_HTTP_CONTENT_TOO_LARGE || rq->fail == MHD_HTTP_SERVICE_UNAVAILABLE ||
                rq->fail == MHD_HTTP_BAD_REQUEST; /* before any byte of the body (no 100 Continue) */
    srv_guard_request(srv->guard, conn, !early); /* the body is waited for at --min-rate */
    if (early)
        return answer_failure(conn, rq, (unsigned)rq->fail, rq->fail_msg);
    return MHD_YES;
}

/* ---- the command ---- */

/* --keep N (a count) or AGE (90s, 30m, 1h, 2d): digits, then a unit or none (cli_parse_count). */
#define KEEP_MAX_COUNT 1000000
#define KEEP_MAX_DAYS 100000ull
static int parse_keep(const char *s, srv_limits *lim)
{
    static const char units[] = "smhd";
    static const uint64_t secs[] = {1, 60, 3600, 86400};
    uint64_t v;
    if (cli_parse_count(s, 1, KEEP_MAX_COUNT, &v) == 0) { /* 0 would drop every result as it is published */
        lim->keep_count = (unsigned)v;
        return 0;
    }
    size_t n = strlen(s);
    const char *u = n > 1 ? strchr(units, s[n - 1]) : NULL;
    char digits[24];
    if (!u || !*u || n - 1 >= sizeof digits)
        return -1;
    memcpy(digits, s, n - 1);
    digits[n - 1] = 0;
    if (cli_parse_count(digits, 1, KEEP_MAX_DAYS * 86400 / secs[u - units], &v) != 0)
        return -1;
    lim->keep_age = v * secs[u - units];
    return 0;
}

enum { MAX_ALLOWED_HOSTS = 16 };

typedef struct serve_args {
    char host[256], port[16];
    unsigned jobs, queue;
    uint64_t max_upload;
    const char *store;
    srv_limits lim;
    const char *max_output;                    /* the library's max-output: SIZE or Nx */
    const char *allow[MAX_ALLOWED_HOSTS];      /* --allow-host */
    size_t n_allow;
    srv_guard_conf guard;
} serve_args;

/* --max-output: what the library takes (it says why not). */
static int check_max_output(const char *v)
{
    tc_conv *c = tc_conv_new();
    int ok = c && tc_conv_set_option(c, "max-output", v) == TC_OK;
    if (c && !ok)
        cli_say("traceconv serve: --max-output %s: expected a size (K/M/G suffixes) or a ratio (64x)", v);
    tc_conv_free(c);
    return ok ? 0 : -1;
}

static int parse_listen(const char *s, serve_args *a)
{
    const char *colon;
    size_t hlen;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return -1;
        hlen = (size_t)(close - s - 1);
        s++;
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return -1;
        hlen = (size_t)(colon - s);
    }
    if (!hlen || hlen >= sizeof a->host || strlen(colon + 1) >= sizeof a->port || !colon[1])
        return -1;
    uint64_t port;
    if (cli_parse_count(colon + 1, 0, 65535, &port) != 0)
        return -1;
    memcpy(a->host, s, hlen);
    a->host[hlen] = 0;
    snprintf(a->port, sizeof a->port, "%s", colon + 1);
    return 0;
}

static int parse_serve_args(int argc, char **argv, serve_args *a)
{
    static const struct option longopts[] = {
        {"listen", required_argument, 0, 'l'},    {"jobs", required_argument, 0, 'j'},
        {"max-upload", required_argument, 0, 'm'}, {"store", required_argument, 0, 's'},
        {"keep", required_argument, 0, 'k'},      {"keep-size", required_argument, 0, 'K'},
        {"queue", required_argument, 0, 'Q'},     {"help", no_argument, 0, 'h'},
        {"max-output", required_argument, 0, 'O'}, {"allow-host", required_argument, 0, 'A'},
        {"header-timeout", required_argument, 0, 'T'}, {"min-rate", required_argument, 0, 'R'},
        {0, 0, 0, 0}};
    snprintf(a->host, sizeof a->host, "127.0.0.1");
    snprintf(a->port, sizeof a->port, "8080");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    a->jobs = cpus > 0 ? (unsigned)cpus : 1;
    a->queue = 64;
    a->max_upload = 512ull << 20;
    a->lim = (srv_limits){.keep_count = 100, .keep_age = 86400, .keep_bytes = 2ull << 30};
    a->max_output = "64x"; /* json is about 11x an ART trace: 64x leaves room, and bounds a hostile one */
    a->guard = (srv_guard_conf){.header_timeout = 10, .min_rate = 16 << 10, .max_conns = 256, .max_per_addr = 64};
    int opt, before = 1;
    optind = 1;
    opterr = 0; /* our messages (cli_option_error): escaped, and naming "traceconv serve" */
    while ((opt = getopt_long(argc, argv, ":j:h", longopts, NULL)) != -1) {
        uint64_t v;
        switch (opt) {
        case 'l':
            if (parse_listen(optarg, a) != 0) {
                cli_say("traceconv serve: --listen %s: expected ADDR:PORT, PORT a whole number from 0 to 65535 "
                        "([::1]:8080 for IPv6)", optarg);
                return -1;
            }
            break;
        case 'j':
        case 'Q':
            if (cli_count_option("traceconv serve", opt == 'j' ? "-j" : "--queue", optarg, 1,
                                 opt == 'j' ? 256 : 100000, NULL, &v) != 0)
                return -1;
            *(opt == 'j' ? &a->jobs : &a->queue) = (unsigned)v;
            break;
        case 'm':
        case 'K':
            if (cli_parse_size(optarg, opt == 'm' ? &a->max_upload : &a->lim.keep_bytes) != 0) {
                cli_say("traceconv serve: %s %s: expected a size " CLI_SIZE_RANGE,
                        opt == 'm' ? "--max-upload" : "--keep-size", optarg);
                return -1;
            }
            break;
        case 's': a->store = optarg; break;
        case 'O':
            if (check_max_output(optarg) != 0)
                return -1;
            a->max_output = optarg;
            break;
        case 'A':
            if (a->n_allow == MAX_ALLOWED_HOSTS || !*optarg || strlen(optarg) > 253 || strpbrk(optarg, ":/[] ")) {
                cli_say("traceconv serve: --allow-host %s: a host name (at most %d of them)", optarg,
                        MAX_ALLOWED_HOSTS);
                return -1;
            }
            a->allow[a->n_allow++] = optarg;
            break;
        case 'T':
            if (cli_count_option("traceconv serve", "--header-timeout", optarg, 1, 3600, "(seconds)", &v) != 0)
                return -1;
            a->guard.header_timeout = (unsigned)v;
            break;
        case 'R':
            if (cli_parse_size(optarg, &a->guard.min_rate) != 0) {
                cli_say("traceconv serve: --min-rate %s: expected bytes a second " CLI_SIZE_RANGE, optarg);
                return -1;
            }
            break;
        case 'k':
            if (parse_keep(optarg, &a->lim) != 0) {
                cli_say("traceconv serve: --keep %s: expected a count, a whole number from 1 to %d (100), or an "
                        "age from 1 to %llu days with its unit (90s, 30m, 1h, 2d)", optarg, KEEP_MAX_COUNT, KEEP_MAX_DAYS);
                return -1;
            }
            break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: cli_option_error("traceconv serve", opt, before, argv, longopts); return -1;
        }
        before = optind;
    }
    if (optind < argc) {
        cli_say("traceconv serve: unexpected operand '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

/* What the library can do: whether every conversion takes the option key. */
static int library_knows(const char *key)
{
    const tc_option_info *o;
    for (size_t i = 0; (o = tc_option_at(NULL, i)); i++)
        if (!strcmp(o->name, key))
            return 1;
    return 0;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    return srv_guard_accept(cls, addr, (unsigned)len) ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    srv_guard_notify(cls, conn, socket_context, code == MHD_CONNECTION_NOTIFY_STARTED);
}

/* The listening socket, bound here so that the guard knows the address (and the port
 * that port 0 chose) before the first connection is accepted. */
static int listen_socket(const serve_args *a, struct sockaddr_storage *ss, socklen_t *sl)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int gai = getaddrinfo(a->host, a->port, &hints, &ai);
    if (gai != 0) {
        cli_say("traceconv serve: --listen %s: %s", a->host, gai_strerror(gai));
        return -1;
    }
    int fd = tci_socket(ai->ai_family, SOCK_STREAM), on = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    }
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)ss, sl) != 0) {
        cli_say("traceconv serve: cannot listen on %s:%s: %s", a->host, a->port, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

static struct MHD_Daemon *start_daemon(server *srv, const serve_args *a, char *url, size_t urllen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = listen_socket(a, &ss, &sl);
    if (fd < 0)
        return NULL;
    char host[TCI_MAXHOST], port[TCI_MAXSERV], text[TCI_MAXHOST + TCI_MAXSERV + 4];
    if (urllen < sizeof text + 8)
        return NULL;
    if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV)) {
        cli_say("traceconv serve: cannot read the listening address");
        close(fd);
        return NULL;
    }
    snprintf(text, sizeof text, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
    snprintf(url, urllen, "http://%s/", text);
    int loopback = srv_guard_listen(srv->guard, (struct sockaddr *)&ss, text, a->allow, a->n_allow);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* libmicrohttpd's own limits are above the guard's: it refuses before asking the guard,
     * and the guard makes room by closing a slow connection instead */
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, on_accept, srv->guard, on_request, srv, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv->guard, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)60, MHD_OPTION_CONNECTION_LIMIT, (unsigned)(2 * a->guard.max_conns + 16),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024), MHD_OPTION_END);
    if (!d) {
        cli_say("traceconv serve: cannot listen on %s: %s", text, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!loopback)
        cli_say("traceconv serve: warning: %s is not a loopback address: anyone who can reach it can upload "
                "traces and read the results",
                text);
    return d;
}

int serve_main(int argc, char **argv)
{
    serve_args a;
    memset(&a, 0, sizeof a);
    int pr = parse_serve_args(argc, argv, &a);
    if (pr != 0) {
        if (pr < 0)
            fputs("Try 'traceconv serve --help'.\n", stderr);
        return pr < 0 ? EXIT_USAGE : 0;
    }
    /* the signals are taken by the main thread only (sigwait), in every thread started from here */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    of_private_outputs(); /* uploads and results are the uploader's: nobody else on the machine reads them */

    static server srv;
    pthread_mutex_init(&srv.done_lock, NULL);
    srv.max_upload = a.max_upload;
    srv.guard = srv_guard_new(&a.guard);
    if (!srv.guard) {
        cli_say("traceconv serve: out of memory");
        return EXIT_FAIL;
    }
    srv.caps.deobfuscate = library_knows("deobfuscate");
    srv.caps.max_upload = a.max_upload;
    srv.caps.keep_bytes = a.lim.keep_bytes;
    char err[PATH_MAX + 128];
    srv.store = srv_store_open(a.store, &a.lim, err, sizeof err);
    if (!srv.store) {
        cli_say("traceconv serve: %s", err);
        return EXIT_FAIL;
    }
    srv.index_html = srv_index_page(&srv.caps);
    srv.pool = srv.index_html ? srv_pool_start(srv.store, &srv.caps, a.jobs, a.queue, a.max_output, on_job_done, &srv)
                              : NULL;
    char url[TCI_MAXHOST + TCI_MAXSERV + 16];
    srv.daemon = srv.pool ? start_daemon(&srv, &a, url, sizeof url) : NULL;
    if (!srv.daemon) {
        if (!srv.pool)
            cli_say("traceconv serve: cannot start the workers");
        srv_pool_free(srv.pool);
        srv_store_close(srv.store);
        srv_guard_free(srv.guard);
        free(srv.index_html);
        return EXIT_FAIL;
    }
    if (a.lim.keep_bytes < a.max_upload)
        cli_say("traceconv serve: note: the page refuses traces larger than --keep-size (the API takes "
                "them up to --max-upload)");
    cli_say("traceconv serve: listening on %s", url);
    fflush(stderr);

    /* results also leave the disk by age while nobody asks for them (a request for one
     * past its age is answered 404 at once: srv_store_result_dir) */
    time_t sweep = a.lim.keep_age && a.lim.keep_age < 30 ? (time_t)a.lim.keep_age : 30, waited = 0;
    for (;;) {
        struct timespec tick = {1, 0}; /* slow connections are closed within a second of their time */
        int sig = tci_sigwait_for(&stop, &tick);
        if (sig > 0)
            break;
        srv_guard_sweep(srv.guard);
        if (++waited >= sweep) {
            waited = 0;
            srv_store_expire(srv.store);
        }
    }
    /* stop accepting, cancel the conversions (their clients get 503), then close the rest */
    MHD_socket lfd = MHD_quiesce_daemon(srv.daemon);
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    srv_pool_stop(srv.pool);
    MHD_stop_daemon(srv.daemon);
    srv_pool_free(srv.pool);
    srv_store_close(srv.store);
    srv_guard_free(srv.guard);
    free(srv.index_html);
    pthread_mutex_destroy(&srv.done_lock);
    cli_say("traceconv serve: stopped");
    return 0;
}
