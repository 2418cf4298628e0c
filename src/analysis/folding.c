/*
 * folding.c - the stacks of the folded writer, shared with the flame graph
 * writer so that both show the same frames with the same counts
 * (shared/docs/outputs/FOLDED.md; the flame graph's oracle is flamegraph.pl
 * drawing our folded output).
 *
 * Names are made safe for every folded parser: ';' becomes ':', CR/LF/TAB
 * become spaces, the name is trimmed, an empty name becomes "[unknown]", and
 * a name ending in whitespace+digits gets '_' for that whitespace (else
 * parsers read it as a count); then escape.h's text rule (the text report's):
 * other control characters and a backslash as printable escapes (\x1B,
 * \u009B, \\), bytes that are not UTF-8 as U+FFFD, so `cat app.folded`
 * cannot drive a terminal. Threads are "name-tid".
 *
 * Identical stacks are one path: overloads that differ only in their
 * signature (`a.B.m: (I)V`, `a.B.m: (J)V`) are different call tree nodes with
 * the same short name, hence the same text. A tree is mapped onto interned
 * paths (parent path, name) - equal text, equal path - whose self times are
 * summed, then rounded to µs cumulatively in order of first appearance, so
 * the counts of a tree add up to its rounded total. Memory grows with the
 * distinct paths of one tree, not with the output's text.
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_codegroup.h"
#include "tc_flame.h"
#include "tc_folding.h"
#include "tc_select.h"
#include "tc_trace.h"

#include <stdlib.h>

/* Would sanitize() leave the name as it is? Then it is not copied: most names are
 * plain, and a copy of each cost every trace ~20 bytes a method. */
static bool plain(const char *in, size_t n)
{
    if (!n || in[0] == ' ' || in[n - 1] == ' ')
        return false;
    const uint8_t *p = (const uint8_t *)in;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) { /* ';' or what the text rule escapes (control bytes, a backslash) */
            if (p[i] < 0x20 || p[i] == 0x7F || p[i] == ';' || p[i] == '\\')
                return false;
            i++;
            continue;
        }
        uint32_t cp;
        i += tci_utf8_next(p + i, n - i, &cp);
        if (cp == TCI_UTF8_INVALID || (cp >= 0x80 && cp <= 0x9F))
            return false;
    }
    size_t d = n;
    while (d && in[d - 1] >= '0' && in[d - 1] <= '9')
        d--;
    return !(d < n && d > 0 && in[d - 1] == ' ');
}

/* A growing buffer for escape.h's writer. */
typedef struct textbuf {
    char *p;
    size_t n, cap;
    bool failed;
} textbuf;

static void textbuf_put(void *to, const char *p, size_t n)
{
    textbuf *b = to;
    if (b->failed)
        return;
    if (tci_grow_n((void **)&b->p, &b->cap, b->n + n, 1) != 0) {
        b->failed = true;
        return;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static const char *sanitize(tci_arena *a, const char *in)
{
    size_t n = strlen(in);
    if (plain(in, n))
        return in; /* the trace's own string outlives the folding */
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
    /* the text rule last: each escape begins with a backslash, so it makes no ';', no space and
     * no " digits" end */
    textbuf e = {0};
    tci_esc_text(textbuf_put, &e, b, n, false);
    char *out = e.failed ? NULL : tci_arena_strndup(a, e.p ? e.p : "", e.n);
    free(e.p);
    return out;
}

static uint64_t text_hash(const char *s, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* same_name[]: methods whose sanitized short names are the same text share one index. */
static int intern_names(tci_folding *f, uint32_t n_methods)
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

int tci_folding_begin(tci_folding *f, const tci_trace *t, bool cpu)
{
    memset(f, 0, sizeof *f);
    f->cpu = cpu;
    f->method_name = tci_calloc(t->n_methods, sizeof *f->method_name);
    f->same_name = tci_calloc(t->n_methods, sizeof *f->same_name);
    f->thread_name = tci_calloc(t->n_threads, sizeof *f->thread_name);
    if ((t->n_methods && (!f->method_name || !f->same_name)) || (t->n_threads && !f->thread_name))
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

/* A fresh path table for one tree: path 0 is its root. */
static int paths_reset(tci_folding *f)
{
    tci_idmap_free(&f->path_ids);
    memset(&f->path_ids, 0, sizeof f->path_ids);
    if (tci_grow((void **)&f->paths, &f->cap_paths, 0, sizeof *f->paths) != 0)
        return TC_ERR_NOMEM;
    f->paths[0] = (tci_fpath){TCI_NONE, TCI_NONE, 0, 0};
    f->n_paths = 1;
    return TC_OK;
}

/* The path `parent` + the frame named like method, made if new (TCI_NONE: no memory). */
static uint32_t path_child(tci_folding *f, uint32_t parent, uint32_t method)
{
    uint32_t name = f->same_name[method];
    uint64_t key = (uint64_t)parent << 32 | name;
    uint32_t p = tci_idmap_get(&f->path_ids, key);
    if (p != TCI_NONE)
        return p;
    if (f->n_paths == UINT32_MAX || tci_grow((void **)&f->paths, &f->cap_paths, f->n_paths, sizeof *f->paths) != 0 ||
        tci_idmap_put(&f->path_ids, key, f->n_paths) != 0)
        return TCI_NONE;
    f->paths[f->n_paths] = (tci_fpath){parent, name, 0, 0};
    return f->n_paths++;
}

/* The walk over one tree (tci_calltree_walk): each node's self time added to its path,
 * the path of the node being visited kept in path. */
typedef struct fold_walk {
    tci_folding *f;
    const tci_calltree *ct;
    uint32_t path;
} fold_walk;

static int fold_enter(void *user, uint32_t node, uint32_t depth)
{
    (void)depth;
    fold_walk *fw = user;
    const tci_ctnode *n = &fw->ct->nodes[node];
    if ((fw->path = path_child(fw->f, fw->path, n->method)) == TCI_NONE)
        return TC_ERR_NOMEM;
    fw->f->paths[fw->path].self_ns += fw->f->cpu ? n->cpu_self : n->wall_self;
    return TC_OK;
}

static void fold_leave(void *user, uint32_t node, uint32_t depth)
{
    (void)node, (void)depth;
    fold_walk *fw = user;
    fw->path = fw->f->paths[fw->path].parent;
}

static int walk(tci_folding *f, const tci_calltree *ct, uint32_t root)
{
    fold_walk fw = {f, ct, 0};
    return tci_calltree_walk(ct, root, &(tci_ctvisit){fold_enter, fold_leave, &fw});
}

/* Rounds cumulatively in path order: the counts of the tree add up to its rounded total. */
static void round_paths(tci_folding *f)
{
    int64_t cum_ns = 0, emitted_us = 0;
    for (uint32_t p = 1; p < f->n_paths; p++) {
        int64_t self_ns = f->paths[p].self_ns;
        f->paths[p].self_us = 0;
        if (self_ns <= 0)
            continue;
        cum_ns += self_ns;
        int64_t us = (cum_ns + 500) / 1000 - emitted_us;
        if (us <= 0)
            continue;
        emitted_us += us;
        f->paths[p].self_us = us;
    }
}

int tci_folding_tree(tci_folding *f, const tci_calltree *ct, uint32_t root)
{
    int rc = paths_reset(f);
    if (rc == TC_OK)
        rc = walk(f, ct, root);
    if (rc == TC_OK)
        round_paths(f);
    return rc;
}

void tci_folding_free(tci_folding *f)
{
    free(f->method_name);
    free(f->same_name);
    free(f->thread_name);
    free(f->paths);
    tci_idmap_free(&f->path_ids);
    tci_arena_free(&f->arena);
    memset(f, 0, sizeof *f);
}

/* ---- folded stacks into a flame tree ---------------------------------------- */

int tci_foldflame_begin(tci_foldflame *ff, const tci_trace *t, bool cpu)
{
    memset(ff, 0, sizeof *ff);
    int rc = tci_folding_begin(&ff->fold, t, cpu);
    if (rc != TC_OK)
        return rc;
    ff->name_of = tci_malloc((t->n_methods ? t->n_methods : 1) * sizeof *ff->name_of);
    if (!ff->name_of)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++)
        ff->name_of[i] = TCI_NONE;
    return TC_OK;
}

/* The flame name of a method's folded text, interned once per same_name class. */
static uint32_t flame_name_of(tci_foldflame *ff, tci_flame *flame, uint32_t method)
{
    uint32_t m = ff->fold.same_name[method];
    if (ff->name_of[m] == TCI_NONE) {
        const char *s = ff->fold.method_name[m];
        ff->name_of[m] = tci_flame_name(flame, s, strlen(s));
        if (ff->code_groups && ff->name_of[m] != TCI_NONE) /* once per name, never per event */
            tci_flame_set_group(flame, ff->name_of[m], tci_code_group(s, strlen(s), ff->app_package));
    }
    return ff->name_of[m];
}

/* The frame a path's count goes to: the path's own, or (a bottom-up tree's thread frame
 * last) its child named last. */
static uint32_t count_frame(tci_flame *flame, uint32_t frame, uint32_t last)
{
    return last == TCI_NONE ? frame : tci_flame_child(flame, frame, last);
}

/* The paths of one tree (a thread's, or the merged one) hung under frame top, each path's
 * count on its frame, or with last (a flame name) on a frame of that name below it. */
static int add_tree(tci_foldflame *ff, tci_flame *flame, const tci_calltree *ct, uint32_t root, uint32_t top,
                    uint32_t last, bool before)
{
    tci_folding *f = &ff->fold;
    int rc = tci_folding_tree(f, ct, root);
    if (rc != TC_OK)
        return rc;
    if (tci_grow((void **)&ff->frame_of, &ff->cap_frame_of, f->n_paths, sizeof *ff->frame_of) != 0)
        return TC_ERR_NOMEM;
    ff->frame_of[0] = top;
    /* Under a frame with no children yet, every path is a new frame (paths are distinct
     * (parent, text) pairs): no lookup, and no index of the frames, which would cost as
     * much memory as the call tree's own index (issue 12: 64 MB). */
    bool fresh = last == TCI_NONE && !tci_flame_has_children(flame, top); /* last may be named as a method */
    for (uint32_t p = 1; p < f->n_paths; p++) { /* parents come before children */
        const tci_fpath *fp = &f->paths[p];
        uint32_t name = flame_name_of(ff, flame, fp->name), parent = ff->frame_of[fp->parent];
        uint32_t frame = name == TCI_NONE ? TCI_NONE
                         : fresh          ? tci_flame_new_child(flame, parent, name)
                                          : tci_flame_child(flame, parent, name);
        if (frame == TCI_NONE)
            return TC_ERR_NOMEM;
        ff->frame_of[p] = frame;
        if (fp->self_us > 0 && (frame = count_frame(flame, frame, last)) == TCI_NONE)
            return TC_ERR_NOMEM;
        tci_flame_add(flame, frame, before ? 0 : fp->self_us, before ? fp->self_us : 0);
        ff->total = ff->total > INT64_MAX - fp->self_us ? INT64_MAX : ff->total + fp->self_us;
    }
    return TC_OK;
}

int tci_foldflame_colors(tci_foldflame *ff, const tci_trace *t, const tci_calltree *ct, const tci_options *opt,
                         const tci_app_package *app, tci_flame_opts *fo)
{
    if (fo->palette != TCI_PAL_ANDROID)
        return TC_OK;
    tci_app_package found;
    if (!app) { /* a caller without the conversion's (a diff's graph): found here, silently */
        if (tci_app_find(t, ct, opt, &ff->fold.arena, NULL, &found) != TC_OK)
            return TC_ERR_NOMEM;
        app = &found;
    }
    ff->code_groups = true;
    ff->app_package = app->name;
    fo->app_package = app->name;
    fo->app_source = app->evidence;
    return TC_OK;
}

/* One tower per thread (forward), or (reverse, callers) every thread's stacks under "all" from
 * the leaf (the called method), the thread frame last. */
static int add_threads(tci_foldflame *ff, tci_flame *flame, const tci_calltree *ct, bool before)
{
    const tci_trace *t = ct->trace;
    bool ordered = ff->thread_order && !ff->reverse && ct->n_roots == t->n_threads;
    if (ordered) /* main's tower leftmost, then the busiest: towers in the order they are made */
        tci_flame_keep_root_order(flame);
    for (uint32_t k = 0; k < ct->n_roots; k++) {
        uint32_t th = ordered ? ff->thread_order[k] : k;
        if (!t->threads[th].records) /* as the folded writer: no line for a thread without records */
            continue;
        const char *tn = ff->fold.thread_name[th];
        uint32_t name = tci_flame_name(flame, tn, strlen(tn));
        bool up = ff->reverse || ff->callers; /* bottom-up: the thread frame last */
        uint32_t top = name == TCI_NONE || up ? TCI_FLAME_ROOT : tci_flame_child(flame, TCI_FLAME_ROOT, name);
        if (name == TCI_NONE || top == TCI_NONE)
            return TC_ERR_NOMEM;
        int rc = add_tree(ff, flame, ct, ct->roots[th], top, up ? name : TCI_NONE, before);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

int tci_foldflame_add(tci_foldflame *ff, tci_flame *flame, const tci_calltree *ct, bool merge_threads, bool before)
{
    tci_calltree merged = {0}, reversed = {0};
    int rc = TC_OK;
    if (merge_threads && (rc = tci_calltree_merge_threads(ct, &merged)) == TC_OK)
        ct = &merged;
    if (rc == TC_OK && ff->callers && (rc = tci_calltree_callers(ct, NULL, ff->callers, ff->callers_of, &reversed)) == TC_OK)
        ct = &reversed;
    else if (rc == TC_OK && ff->reverse && (rc = tci_calltree_reverse(ct, NULL, &reversed)) == TC_OK)
        ct = &reversed;
    if (rc == TC_OK)
        rc = merge_threads ? add_tree(ff, flame, ct, ct->roots[0], TCI_FLAME_ROOT, TCI_NONE, before)
                           : add_threads(ff, flame, ct, before);
    tci_calltree_free(&reversed);
    tci_calltree_free(&merged);
    return rc;
}

int tci_foldflame_callers(tci_foldflame *ff, const tci_trace *t, const tci_options *opt, tci_diag *d)
{
    ff->callers_of = opt->callers;
    return tci_callers_marks(t, opt, d, &ff->callers);
}

void tci_foldflame_free(tci_foldflame *ff)
{
    free(ff->callers);
    tci_folding_free(&ff->fold);
    free(ff->name_of);
    free(ff->frame_of);
    memset(ff, 0, sizeof *ff);
}
