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
 *
 * Identical stacks are one line: overloads that differ only in their
 * signature (`a.B.m: (I)V`, `a.B.m: (J)V`) are different call tree nodes
 * with the same short name, hence the same text. Each thread's tree is mapped
 * onto interned paths (parent path, name) - equal text, equal path - whose
 * self times are summed and printed in order of first appearance, so memory
 * grows with the distinct paths of one thread, not with the output's text.
 */
#include "tc_internal.h"

#include <stdlib.h>

/* A distinct folded stack of the current thread: its last frame and the rest. */
typedef struct fpath {
    uint32_t parent; /* TCI_NONE: the thread's root (no frame) */
    uint32_t name;   /* index of the first method with this sanitized name */
    int64_t self_ns;
} fpath;

typedef struct folded_w {
    tci_arena arena;
    const char **method_name; /* sanitized short names */
    uint32_t *same_name;      /* per method: the first method whose sanitized name is the same text */
    const char **thread_name; /* sanitized "name-tid" */
    fpath *paths;             /* the current thread's distinct stacks; [0] is the root */
    uint32_t n_paths, cap_paths;
    tci_idmap path_ids;       /* (parent path << 32 | name) -> path */
    uint32_t *chain;          /* scratch: one path's frames, leaf first */
    uint32_t cap_chain;
    char *path;               /* the line being printed, frames joined by ';' */
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

static uint64_t text_hash(const char *s, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* same_name[]: methods whose sanitized short names are the same text share one index. */
static int intern_names(folded_w *f, uint32_t n_methods)
{
    tci_idmap seen = {0};
    int rc = TC_OK;
    for (uint32_t i = 0; i < n_methods && rc == TC_OK; i++) {
        for (uint64_t seed = 0;; seed++) { /* a collision of two texts: try the next hash */
            uint64_t h = text_hash(f->method_name[i], seed);
            uint32_t j = tci_idmap_get(&seen, h);
            if (j == TCI_NONE) {
                f->same_name[i] = i;
                rc = tci_idmap_put(&seen, h, i) != 0 ? TC_ERR_NOMEM : TC_OK;
                break;
            }
            if (!strcmp(f->method_name[j], f->method_name[i])) {
                f->same_name[i] = j;
                break;
            }
        }
    }
    tci_idmap_free(&seen);
    return rc;
}

static int folded_begin(tci_wctx *w)
{
    folded_w *f = w->priv;
    const tci_trace *t = w->trace;
    if (w->opt->weight_cpu && !t->has_cpu)
        return tci_error(w->diag, TC_ERR_UNSUPPORTED, "folded", UINT64_MAX,
                         "the input has no thread-CPU clock (clock=%s); use --weight wall", tci_clock_name(t->clock));
    f->method_name = tci_calloc(t->n_methods, sizeof *f->method_name);
    f->same_name = tci_calloc(t->n_methods, sizeof *f->same_name);
    f->thread_name = tci_calloc(t->n_threads, sizeof *f->thread_name);
    if (!f->method_name || !f->same_name || !f->thread_name)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (!(f->method_name[i] = sanitize(&f->arena, t->methods[i].short_name)))
            return TC_ERR_NOMEM;
    if (intern_names(f, t->n_methods) != TC_OK)
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

/* A fresh path table for one tree: path 0 is its root. */
static int paths_reset(folded_w *f)
{
    tci_idmap_free(&f->path_ids);
    memset(&f->path_ids, 0, sizeof f->path_ids);
    if (tci_grow((void **)&f->paths, &f->cap_paths, 0, sizeof *f->paths) != 0)
        return TC_ERR_NOMEM;
    f->paths[0] = (fpath){TCI_NONE, TCI_NONE, 0};
    f->n_paths = 1;
    return TC_OK;
}

/* The path `parent` + the frame named like method, made if new (TCI_NONE: no memory). */
static uint32_t path_child(folded_w *f, uint32_t parent, uint32_t method)
{
    uint32_t name = f->same_name[method];
    uint64_t key = (uint64_t)parent << 32 | name;
    uint32_t p = tci_idmap_get(&f->path_ids, key);
    if (p != TCI_NONE)
        return p;
    if (f->n_paths == UINT32_MAX || tci_grow((void **)&f->paths, &f->cap_paths, f->n_paths, sizeof *f->paths) != 0 ||
        tci_idmap_put(&f->path_ids, key, f->n_paths) != 0)
        return TCI_NONE;
    f->paths[f->n_paths] = (fpath){parent, name, 0};
    return f->n_paths++;
}

/* Depth-first over one tree without recursion (stacks can be 10000 deep),
 * adding each node's self time to its path. */
static int walk(tci_wctx *w, const tci_calltree *ct, uint32_t root)
{
    folded_w *f = w->priv;
    bool cpu = w->opt->weight_cpu;
    uint32_t node = ct->nodes[root].first_child, path = 0;
    while (node != TCI_NONE) {
        const tci_ctnode *n = &ct->nodes[node];
        if ((path = path_child(f, path, n->method)) == TCI_NONE)
            return TC_ERR_NOMEM;
        f->paths[path].self_ns += cpu ? n->cpu_self : n->wall_self;
        if (n->first_child != TCI_NONE) {
            node = n->first_child;
            continue;
        }
        /* go up until a sibling exists */
        while (node != root) {
            const tci_ctnode *m = &ct->nodes[node];
            path = f->paths[path].parent;
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

/* Rounds cumulatively: the counts of a group add up to its rounded total. */
typedef struct rounding {
    int64_t cum_ns;
    int64_t emitted_us;
} rounding;

/* The text of path p after `first` (the thread frame, or NULL) into f->path. */
static int path_text(folded_w *f, const char *first, uint32_t p)
{
    uint32_t depth = 0;
    for (uint32_t q = p; q != 0; q = f->paths[q].parent) {
        if (tci_grow((void **)&f->chain, &f->cap_chain, depth, sizeof *f->chain) != 0)
            return TC_ERR_NOMEM;
        f->chain[depth++] = q;
    }
    f->path_len = 0;
    if (first && path_push(f, first) != TC_OK)
        return TC_ERR_NOMEM;
    while (depth)
        if (path_push(f, f->method_name[f->paths[f->chain[--depth]].name]) != TC_OK)
            return TC_ERR_NOMEM;
    return TC_OK;
}

/* One line per path with self time, in order of first appearance. */
static int emit_paths(tci_wctx *w, const char *first)
{
    folded_w *f = w->priv;
    tci_sink *o = w->out;
    rounding r = {0, 0};
    for (uint32_t p = 1; p < f->n_paths; p++) {
        int64_t self_ns = f->paths[p].self_ns;
        if (self_ns <= 0)
            continue;
        r.cum_ns += self_ns;
        int64_t us = (r.cum_ns + 500) / 1000 - r.emitted_us;
        if (us <= 0)
            continue;
        r.emitted_us += us;
        if (path_text(f, first, p) != TC_OK)
            return TC_ERR_NOMEM;
        tci_sink_write(o, f->path, f->path_len);
        tci_sink_putc(o, ' ');
        tci_sink_i64(o, us);
        tci_sink_putc(o, '\n');
    }
    return TC_OK;
}

/* The folded lines of one tree (a thread's, or all threads merged). */
static int fold_tree(tci_wctx *w, const tci_calltree *ct, uint32_t root, const char *first)
{
    int rc = paths_reset(w->priv);
    if (rc == TC_OK)
        rc = walk(w, ct, root);
    if (rc == TC_OK)
        rc = emit_paths(w, first);
    return rc;
}

static int folded_finish(tci_wctx *w, const tci_calltree *ct)
{
    folded_w *f = w->priv;
    if (w->opt->no_thread) {
        tci_calltree merged;
        int rc = tci_calltree_merge_threads(ct, &merged);
        if (rc == TC_OK)
            rc = fold_tree(w, &merged, merged.roots[0], NULL);
        tci_calltree_free(&merged);
        return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
    }
    for (uint32_t t = 0; t < ct->n_roots; t++) {
        if (!w->trace->threads[t].records)
            continue;
        int rc = fold_tree(w, ct, ct->roots[t], f->thread_name[t]);
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
    free(f->same_name);
    free(f->thread_name);
    free(f->paths);
    free(f->chain);
    free(f->path);
    tci_idmap_free(&f->path_ids);
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
