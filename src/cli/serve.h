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

enum { SRV_ID_HEX = 32, SRV_MAX_SETTINGS = 24, SRV_ERROR_MAX = 1024, SRV_NAME_MAX = 128 };

/* What the library this binary runs with can do (probed at start, see serve.c). */
typedef struct srv_caps {
    int report_html; /* the report writer takes option "html" */
    int deobfuscate; /* open-time option "deobfuscate" (a ProGuard/R8 mapping) exists */
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
    int done;
} srv_job;

typedef struct srv_store srv_store;

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
/* A new private file in the store's tmp directory: its fd (0600), its path in path. */
int srv_store_temp(srv_store *s, const char *suffix, char *path, size_t pathlen);
/* Whether the result id (32 lower-case hex) exists; its directory in dir. */
int srv_store_result_dir(srv_store *s, const char *id, char *dir, size_t dirlen);
void srv_store_expire(srv_store *s);
/* 128 random bits as 32 lower-case hex digits; 0 or -1. */
int srv_random_id(char out[SRV_ID_HEX + 1]);

typedef void (*srv_done_fn)(srv_job *job, void *user);
typedef struct srv_pool srv_pool;
srv_pool *srv_pool_start(srv_store *store, const srv_caps *caps, unsigned workers, unsigned queue_max,
                         srv_done_fn done, void *user);
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
/* An error page (status 4xx/5xx) with one line. Malloc'd. */
char *srv_error_page(int status, const char *line);
/* The result page, into fp; facts from the converted tc_conv and the text report. */
struct tc_conv;
typedef struct srv_result_facts {
    const char *id, *display;
    const char *summary;                 /* tc_conv_input_summary */
    const char *figures;                 /* "6 threads, 97 methods, ...; repaired: ..." */
    const char *const *warnings;         /* NULL-ended */
    const char *report_text_path;        /* the text report, excerpts shown */
    int have_report_html;
    const char *flames[4];               /* file names of the flame graphs or NULL (wall, cpu, wall merged, cpu merged) */
    const char *flame_why[4];            /* why one is missing */
    const char *const *downloads;        /* file names present, NULL-ended */
} srv_result_facts;
int srv_result_page(FILE *fp, const srv_result_facts *f);
/* s as HTML text or attribute value into fp: escape.h's markup rule (controls, noncharacters and
 * invalid UTF-8 as U+FFFD). */
void srv_html_escape(FILE *fp, const char *s);

/* The file names a result directory may hold, and what they are (a fixed grammar:
 * nothing the client sends becomes a path). */
typedef struct srv_output {
    const char *file;   /* in the result directory */
    const char *writer; /* library writer */
    const char *label;  /* on the page */
    const char *type;   /* Content-Type */
    const char *ext;    /* the download's extension after the upload's stem */
} srv_output;
const srv_output *srv_output_at(size_t i);
const srv_output *srv_output_find(const char *file);

#endif
