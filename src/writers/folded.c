/*
 * folded.c - folded (collapsed) stacks for flamegraph.pl, inferno and
 * speedscope (shared/docs/outputs/FOLDED.md): "root;...;leaf count\n".
 *
 * Built from the shared call tree. Counts are integer µs of self time (wall
 * by default, thread CPU with weight=cpu). Each thread's counts are rounded
 * cumulatively, so they add up to that thread's rounded total. The first frame
 * is the thread ("name-tid") unless no-thread merges threads. Names are made
 * safe for every parser: ';' becomes ':', CR/LF/TAB become spaces, empty
 * names become "[unknown]", and a name ending in whitespace+digits gets '_'
 * for that whitespace (else parsers read it as a count).
 */
#define _GNU_SOURCE /* memrchr */
#include "tc_internal.h"

#include <stdlib.h>

typedef struct folded_w {
    tci_arena arena;
    const char **method_name; /* sanitized short names */
    const char **thread_name; /* sanitized "name-tid" */
    char *path;               /* the current path, frames joined by ';' */
    size_t path_len, path_cap;
} folded_w;

static const char *sanitize(tci_arena *a, const char *in)
{
    size_t n = strlen(in);
    char *s = tci_arena_strndup(a, in, n);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ';') s[i] = ':';
        else if (s[i] == '\r' || s[i] == '\n' || s[i] == '\t') s[i] = ' ';
    }
    while (n && s[n - 1] == ' ')
        s[--n] = 0;
    char *b = s;
    while (*b == ' ')
        b++, n--;
    if (!n)
        return "[unknown]";
    size_t d = n;
    while (d && b[d - 1] >= '0' && b[d - 1] <= '9')
        d--;
    if (d < n && d > 0 && b[d - 1] == ' ') /* "foo 12" would read as a count */
        for (size_t k = d; k > 0 && b[k - 1] == ' '; k--)
            b[k - 1] = '_';
    return b;
}

static int folded_begin(tci_wctx *w)
{
    folded_w *f = w->priv;
    const tci_trace *t = w->trace;
    if (w->opt->weight_cpu && !t->has_cpu)
        return tci_error(w->diag, TC_ERR_UNSUPPORTED, "folded", UINT64_MAX,
                         "the input has no thread-CPU clock (clock=%s); use --weight wall", tci_clock_name(t->clock));
    f->method_name = tci_calloc(t->n_methods, sizeof *f->method_name);
    f->thread_name = tci_calloc(t->n_threads, sizeof *f->thread_name);
    if (!f->method_name || !f->thread_name)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (!(f->method_name[i] = sanitize(&f->arena, t->methods[i].short_name)))
            return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_threads; i++) {
        char *n = tci_arena_printf(&f->arena, "%s-%llu", t->threads[i].name, (unsigned long long)t->threads[i].tid);
        if (!n || !(f->thread_name[i] = sanitize(&f->arena, n)))
            return TC_ERR_NOMEM;
    }
    return TC_OK;
}

static int path_push(folded_w *f, const char *name)
{
    size_t n = strlen(name), need = f->path_len + n + 2;
    if (need > f->path_cap) {
        size_t cap = f->path_cap ? f->path_cap : 4096;
        while (cap < need)
            cap *= 2;
        char *p = realloc(f->path, cap);
        if (!p)
            return TC_ERR_NOMEM;
        f->path = p;
        f->path_cap = cap;
    }
    if (f->path_len)
        f->path[f->path_len++] = ';';
    memcpy(f->path + f->path_len, name, n);
    f->path_len += n;
    return TC_OK;
}

/* Rounds cumulatively: the counts of a group add up to its rounded total. */
typedef struct rounding {
    int64_t cum_ns;
    int64_t emitted_us;
} rounding;

static void emit_line(tci_sink *o, const folded_w *f, rounding *r, int64_t self_ns)
{
    if (self_ns <= 0)
        return;
    r->cum_ns += self_ns;
    int64_t us = (r->cum_ns + 500) / 1000 - r->emitted_us;
    if (us <= 0)
        return;
    r->emitted_us += us;
    tci_sink_write(o, f->path, f->path_len);
    tci_sink_putc(o, ' ');
    tci_sink_i64(o, us);
    tci_sink_putc(o, '\n');
}

/* Depth-first over one subtree without recursion (stacks can be 10000 deep). */
static int walk(tci_wctx *w, const tci_calltree *ct, uint32_t root, size_t base_len, rounding *r)
{
    folded_w *f = w->priv;
    bool cpu = w->opt->weight_cpu;
    uint32_t node = ct->nodes[root].first_child;
    while (node != TCI_NONE) {
        const tci_ctnode *n = &ct->nodes[node];
        if (path_push(f, f->method_name[n->method]) != TC_OK)
            return TC_ERR_NOMEM;
        emit_line(w->out, f, r, cpu ? n->cpu_self : n->wall_self);
        if (n->first_child != TCI_NONE) {
            node = n->first_child;
            continue;
        }
        /* go up until a sibling exists */
        while (node != root) {
            const tci_ctnode *m = &ct->nodes[node];
            char *semi = memrchr(f->path + base_len, ';', f->path_len - base_len);
            f->path_len = semi ? (size_t)(semi - f->path) : base_len;
            if (m->next_sibling != TCI_NONE) {
                node = m->next_sibling;
                break;
            }
            node = m->parent;
        }
        if (node == root)
            break;
    }
    return TC_OK;
}

static int folded_finish(tci_wctx *w, const tci_calltree *ct)
{
    folded_w *f = w->priv;
    if (w->opt->no_thread) {
        tci_calltree merged;
        rounding r = {0, 0};
        int rc = tci_calltree_merge_threads(ct, &merged);
        f->path_len = 0;
        if (rc == TC_OK)
            rc = walk(w, &merged, merged.roots[0], 0, &r);
        tci_calltree_free(&merged);
        return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
    }
    for (uint32_t t = 0; t < ct->n_roots; t++) {
        if (!w->trace->threads[t].records)
            continue;
        rounding r = {0, 0};
        f->path_len = 0;
        if (path_push(f, f->thread_name[t]) != TC_OK)
            return TC_ERR_NOMEM;
        int rc = walk(w, ct, ct->roots[t], f->path_len, &r);
        if (rc != TC_OK)
            return rc;
    }
    return w->out->err ? TC_ERR_IO : TC_OK;
}

static void folded_close(tci_wctx *w)
{
    folded_w *f = w->priv;
    if (!f)
        return;
    free(f->method_name);
    free(f->thread_name);
    free(f->path);
    tci_arena_free(&f->arena);
}

const tci_writer tci_writer_folded = {
    .name = "folded",
    .description = "folded stacks (flamegraph.pl, inferno, speedscope)",
    .extensions = "folded",
    .options = "weight no-thread",
    .priv_size = sizeof(folded_w),
    .flags = TCI_WF_AGGREGATE,
    .begin = folded_begin,
    .finish = folded_finish,
    .close = folded_close,
};
