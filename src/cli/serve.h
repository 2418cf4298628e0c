/* serve.h - `traceconv serve`: the pieces shared by serve.c (HTTP), serve_store.c
 * (the result store and the worker pool) and serve_page.c (the pages and assets). */
#ifndef TRACECONV_CLI_SERVE_H
#define TRACECONV_CLI_SERVE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* argv[0] is "serve"; returns the exit status (0 after SIGINT/SIGTERM, 1 failure, 2 usage). */
int serve_main(int argc, char **argv);

/* SRV_MAX_SETTINGS: options of one request, a repeated one (thread=) once per value */
enum { SRV_ID_HEX = 32, SRV_MAX_SETTINGS = 64, SRV_ERROR_MAX = 1024, SRV_NAME_MAX = 128 };

/* A result's facts for its page's controls, JSON: the trace's duration and threads (name,
 * tid, pid, records), from the library (tc_conv_thread_at, tc_conv_duration_ns). */
#define SRV_INFO_FILE "info.json"

/* What the library this binary runs with can do (probed at start, see serve.c). */
typedef struct srv_caps {
    int deobfuscate; /* open-time option "deobfuscate" (a ProGuard/R8 mapping) exists */
    uint64_t max_upload; /* --max-upload: the page checks a file before sending it */
    uint64_t keep_bytes; /* --keep-size: a larger trace cannot be kept for its page */
} srv_caps;

/* One option as a library key/value, from the API's query string. */
typedef struct srv_setting {
    char key[32];
    char value[256];
} srv_setting;

/* A conversion handed from the HTTP thread to a worker. Every path is in the store's
 * private tmp directory and named by the store (random), never by the client. */
typedef struct srv_job {
    struct srv_job *next;
    int api;                                /* 1: one writer, output to out_fd; 0: a result page */
    char trace_path[PATH_MAX];              /* the upload */
    char rhea_path[PATH_MAX];               /* "" or the Rhea method mapping upload */
    char deobf_path[PATH_MAX];              /* "" or the ProGuard/R8 mapping upload */
    char display[SRV_NAME_MAX];             /* the upload's file name, cleaned: messages, downloads */
    const void *trace_data;                 /* worker: the upload mapped (tc_conv_open_memory) */
    size_t trace_size;
    char to[32], from[32];                  /* api: writer; reader or "" */
    srv_setting settings[SRV_MAX_SETTINGS]; /* api: library options from the query */
    size_t n_settings;
    /* results, written by the worker before it sets done */
    int status;               /* HTTP status: 200, 422, 500, 503 */
    char error[SRV_ERROR_MAX]; /* one line, the CLI's */
    char id[SRV_ID_HEX + 1];   /* page: the result's id */
    int out_fd;                /* api: the converted file (unlinked), or -1 */
    uint64_t out_size;
    void *conn;                /* the suspended MHD connection to resume */
    int client_fd;             /* its socket: a client that left cancels the job (-1: not watched) */
    const void *stopping;      /* worker: the pool's stop flag (atomic_int) */
    int done;
} srv_job;

typedef struct srv_store srv_store;

/* ---- serve_guard.c: Host/Origin checks, slow clients, connection limits ---- */
typedef struct srv_guard_conf {
    unsigned header_timeout; /* seconds for a request's headers (10) */
    uint64_t min_rate;       /* a body's, and an answer's, average bytes a second after header_timeout (16K) */
    unsigned max_conns;      /* connections at most (256) */
    unsigned max_per_addr;   /* from one client address (64) */
} srv_guard_conf;
typedef struct srv_guard srv_guard;
struct sockaddr;
struct MHD_Connection;
srv_guard *srv_guard_new(const srv_guard_conf *conf);
void srv_guard_free(srv_guard *g);
/* The listening address (text: "127.0.0.1:8080") and the names allowed besides it;
 * returns whether it is a loopback address. */
int srv_guard_listen(srv_guard *g, const struct sockaddr *sa, const char *text, const char *const *names,
                     size_t n_names);
/* A request's Host and Origin headers: the first of each (NULL: absent) and how many came. */
typedef struct srv_origin {
    const char *host, *origin;
    unsigned n_host, n_origin;
} srv_origin;
/* 0, or the HTTP status (400, 403) refusing a request with these Host and Origin headers:
 * 400 without a Host, or with two Host or two Origin headers (whichever one a reader takes). */
int srv_guard_check_request(const srv_guard *g, const srv_origin *who, char *why, size_t len);
/* libmicrohttpd's accept policy (1 accept, 0 refuse) and connection notifications. */
int srv_guard_accept(void *cls, const struct sockaddr *sa, unsigned len);
void srv_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context, int started);
/* A request's life: its headers are in (body: a body follows), body bytes, the body's end,
 * the request answered (the next one's headers are waited for). */
void srv_guard_request(srv_guard *g, struct MHD_Connection *conn, int body);
void srv_guard_body(srv_guard *g, struct MHD_Connection *conn, size_t n);
void srv_guard_body_done(srv_guard *g, struct MHD_Connection *conn);
/* An answer is queued on conn (its reading is timed from now), and n more bytes of it were
 * handed to libmicrohttpd (serve.c's content readers). */
void srv_guard_answer(struct MHD_Connection *conn);
void srv_guard_answer_bytes(struct MHD_Connection *conn, size_t n);
void srv_guard_request_done(srv_guard *g, struct MHD_Connection *conn);
int srv_guard_fd(struct MHD_Connection *conn);
/* Close the connections past their time (the main thread, every second). */
void srv_guard_sweep(srv_guard *g);
/* Whether the client of this socket has closed its end (a job's connection, suspended). */
int srv_client_gone(int fd);

typedef struct srv_limits {
    unsigned keep_count;  /* results kept at most */
    uint64_t keep_age;    /* seconds */
    uint64_t keep_bytes;  /* total size of the results */
} srv_limits;

/* dir/name into out; -1 when it does not fit (then out must not be used). */
int srv_path(char *out, size_t len, const char *dir, const char *name);

/* ---- serve_store.c ---- */
/* dir NULL: a fresh private directory under $TMPDIR, removed by srv_store_close. */
srv_store *srv_store_open(const char *dir, const srv_limits *lim, char *err, size_t errlen);
void srv_store_close(srv_store *s);
const char *srv_store_root(const srv_store *s);
/* A new private file in the store's tmp directory (an upload): its fd (0600), its path in path. */
int srv_store_temp(srv_store *s, const char *suffix, char *path, size_t pathlen);
/* An unlinked private file in the store's tmp directory (an API output): its fd, or -1 (errno). */
int srv_store_scratch(srv_store *s);
/* Whether the result id (32 lower-case hex) exists; its directory in dir. */
int srv_store_result_dir(srv_store *s, const char *id, char *dir, size_t dirlen);
void srv_store_expire(srv_store *s);
/* --keep-size: the most a result may hold (a larger one is refused, never published). */
uint64_t srv_store_keep_bytes(const srv_store *s);
/* A download converted on demand: the result's upload (and mappings) linked into tmp/ as
 * the job's inputs, its display name; -1 when the result is gone (404). */
int srv_store_link_inputs(srv_store *s, const char *dir, srv_job *job);
/* 128 random bits as 32 lower-case hex digits; 0 or -1. */
int srv_random_id(char out[SRV_ID_HEX + 1]);

typedef void (*srv_done_fn)(srv_job *job, void *user);
typedef struct srv_pool srv_pool;
/* max_output: the library's max-output for every conversion ("64x", "1G"). */
srv_pool *srv_pool_start(srv_store *store, const srv_caps *caps, unsigned workers, unsigned queue_max,
                         const char *max_output, srv_done_fn done, void *user);
/* 0 queued; -1 the queue is full (503). */
int srv_pool_submit(srv_pool *p, srv_job *job);
/* Whether another job would be refused now (checked before an upload starts). */
int srv_pool_full(srv_pool *p);
/* Cancel what runs, fail what waits (each still reported done), join the workers;
 * later submits are refused. srv_pool_free then frees it (after the HTTP side is gone). */
void srv_pool_stop(srv_pool *p);
void srv_pool_free(srv_pool *p);

/* ---- serve_page.c ---- */
typedef struct srv_asset {
    const char *name; /* URL path */
    const char *type;
    const char *body;
} srv_asset;
const srv_asset *srv_asset_find(const char *path);
/* The upload page, told what the library can do. Malloc'd. */
char *srv_index_page(const srv_caps *caps);
/* "1.5G", "300M", "12K" or "512 bytes": a size in a message (a page's, the store's, serve.c's). */
void srv_human_size(uint64_t n, char *out, size_t len);
/* An error page (status 4xx/5xx) with one line. Malloc'd. */
char *srv_error_page(int status, const char *line);
/* The result page, into fp; facts from the converted tc_conv and the text report. */
struct tc_conv;
typedef struct srv_result_facts {
    const char *id, *display;
    const char *summary;                 /* tc_conv_input_summary */
    const char *figures;                 /* "6 threads, 97 methods, ...; repaired: ..." */
    const char *const *warnings;         /* NULL-ended */
    const char *const *hints;            /* tc_conv_hint_at, NULL-ended (NULL: none) */
    const char *report_text_path;        /* the text report, excerpts shown */
    int have_report_html;
    const char *flames[4];               /* file names of the flame graphs or NULL (wall, cpu, wall merged, cpu merged) */
    const char *flame_why[4];            /* why one is missing */
    const struct srv_output *const *downloads; /* the outputs present (serve_store.c's grammar), NULL-ended */
    const char *activity;                /* file name of the activity histogram (the time bar's), or NULL */
} srv_result_facts;
int srv_result_page(FILE *fp, const srv_result_facts *f);
/* s as HTML text or attribute value into fp: escape.h's markup rule (controls, noncharacters and
 * invalid UTF-8 as U+FFFD). */
void srv_html_escape(FILE *fp, const char *s);

/* The file names a result directory may hold, and what they are (a fixed grammar:
 * nothing the client sends becomes a path). */
typedef struct srv_output {
    const char *file;     /* in the result directory */
    const char *output;   /* the library's writer or variant ("report-html"): its Content-Type,
                             and whether a browser shows it in the page (tc_variant_info) */
    const char *label;    /* on the page */
    const char *ext;      /* the download's extension after the upload's stem */
    int on_demand;        /* converted when downloaded (from the result's upload), not kept */
    const char *const *options; /* key, value, ..., NULL: the library options it is converted with */
} srv_output;
const srv_output *srv_output_at(size_t i);
const srv_output *srv_output_find(const char *file);

#endif
