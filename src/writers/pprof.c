/*
 * pprof.c - gzip-compressed pprof Profile (profile.proto, package
 * perftools.profiles) for `go tool pprof`, speedscope and friends
 * (shared/docs/outputs/PPROF.md).
 *
 * Built from the shared call tree: one Sample per distinct (thread, call
 * path) whose self time is not zero, values [self wall ns, self cpu ns]
 * (cpu left out, with a comment saying so, when the input has no thread-CPU
 * clock; wall left out when it has only that clock, whose timeline is CPU
 * time); location ids leaf first. An input whose sampled stacks weigh counts
 * (the trace's metadata sample-unit "count": perf's samples, whose weights are
 * cycles for "cycles:HG") has one value type instead, named by its
 * sample-type ("cycles:HG", unit "count"), whose values are the counts the
 * samples of each path weigh (the IR carries a count as 1000 ns: the node's
 * sampled weight / 1000); its slices, which weigh time, are not in it; a string label "thread" and a numeric
 * label "tid" unless merge-threads folds all threads into one tree. One
 * Function and one Location per method that some sample uses (ids 1..N, the
 * same id for both), one synthetic Mapping (id 1) so that pprof does not try
 * to symbolize.
 *
 * Quirks pprof imposes: string_table[0] must be "" and every string must be
 * interned before the table is written; ids are nonzero and unique;
 * time_nanos may appear only once (twice reads as concatenated profiles);
 * without default_sample_type consumers pick the last type, so it names
 * "wall".
 *
 * Memory: a protobuf message is a sequence of fields, and a repeated
 * message field may be written one element at a time. So the Profile header
 * (sample types, mapping, strings, comments, times) is packed by protobuf-c
 * as one Profile message, and then each Location, Function and Sample is
 * packed on its own and appended as one more field of the same Profile.
 * Memory stays bounded by the tree and the method table, never by the
 * events, and no array of all samples exists at any time.
 *
 * Speed: the elements are packed by hand (pb_* below), with the bytes
 * protobuf-c gives them: protobuf-c's descriptor-driven size pass, pack pass
 * and one append call per field cost about as much as the deflate of the
 * result (~250M of 1.4G instructions on the 16 MB bench trace).
 */
#include "tc_base.h"
#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_writers.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include "profile_subset.pb-c.h"

#include <stdlib.h>

/* Profile field numbers used when appending elements (profile.proto). */
enum { F_SAMPLE = 2, F_LOCATION = 4, F_FUNCTION = 5 };

typedef struct pprof_w {
    tci_arena arena;
    /* string table: entries point into the trace or the arena */
    const char **str;
    uint32_t n_str, cap_str;
    uint32_t *hash; /* open addressing: string index + 1, 0 = empty */
    uint32_t hash_cap;
    /* per method: location/function id, 0 = not used by any sample */
    uint64_t *loc_id;
    uint32_t n_used;
    /* per method: string indices of name, system name and file */
    int64_t *s_name, *s_sys, *s_file;
    int64_t s_wall, s_cpu, s_ns, s_thread, s_tid, s_process;
    int64_t *s_thread_name; /* per thread */
    bool has_lines;
    /* sampled stacks that weigh counts (metadata sample-type, sample-unit): their one value type */
    const char *count_type, *count_unit;
    int64_t s_count_type, s_count_unit;
} pprof_w;

/* A count in the IR: TCI_COUNT_NS ns a unit (the json reader's sampled stacks), as pprof gets it. */
static int64_t count_of(int64_t sampled) { return tci_count_of(sampled); }

/* A node's value or values in this profile: its sampled counts, or self times. */
static bool has_value(const pprof_w *p, const tci_ctnode *n)
{
    return p->count_type ? count_of(n->sampled) != 0 : n->wall_self || n->cpu_self;
}

/* ---- string table ------------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: short keys, no dependency */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int hash_grow(pprof_w *p)
{
    uint32_t cap = p->hash_cap ? p->hash_cap * 2 : 1024;
    uint32_t *h = tci_calloc(cap, sizeof *h);
    if (!h)
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < p->n_str; i++) {
        uint32_t k = (uint32_t)str_hash(p->str[i]) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = i + 1;
    }
    free(p->hash);
    p->hash = h;
    p->hash_cap = cap;
    return TC_OK;
}

/* Index of s in the string table, adding it once; -1 when out of memory. */
static int64_t intern(pprof_w *p, const char *s)
{
    if (!s)
        s = "";
    if ((uint64_t)(p->n_str + 1) * 2 > p->hash_cap && hash_grow(p) != TC_OK)
        return -1;
    uint32_t k = (uint32_t)str_hash(s) & (p->hash_cap - 1);
    for (; p->hash[k]; k = (k + 1) & (p->hash_cap - 1))
        if (!strcmp(p->str[p->hash[k] - 1], s))
            return p->hash[k] - 1;
    if (tci_grow((void **)&p->str, &p->cap_str, p->n_str, sizeof *p->str) != 0)
        return -1;
    p->str[p->n_str] = s;
    p->hash[k] = p->n_str + 1;
    return p->n_str++;
}

/* ---- output: the header through protobuf-c, the elements by hand --------- */

typedef struct sink_buffer {
    ProtobufCBuffer base;
    tci_sink *out;
} sink_buffer;

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    tci_sink_write(((sink_buffer *)b)->out, data, len);
}

/* The elements' fields are proto3 (profile.proto): packed as protobuf-c packs
 * them, in field number order, a scalar left out when it is zero, a repeated
 * number packed (tag, byte length, varints) and left out when there are none,
 * an int64 as the varint of its two's complement (ten bytes when negative).
 * Every field number here is below 16, so each tag is one byte. */
enum { PB_VARINT = 0, PB_LEN = 2, PB_VARINT_MAX = 10 };

static inline uint8_t *pb_varint(uint8_t *q, uint64_t v)
{
    while (v > 0x7f) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}

static inline uint8_t *pb_tag(uint8_t *q, uint32_t field, uint32_t wire)
{
    *q++ = (uint8_t)(field << 3 | wire);
    return q;
}

/* A proto3 scalar (uint64, or int64 as its two's complement): nothing when zero. */
static inline uint8_t *pb_scalar(uint8_t *q, uint32_t field, uint64_t v)
{
    return v ? pb_varint(pb_tag(q, field, PB_VARINT), v) : q;
}

/* A length-delimited field into a buffer: tag, length, then the n bytes of body. */
static inline uint8_t *pb_bytes(uint8_t *q, uint32_t field, const uint8_t *body, size_t n)
{
    q = pb_varint(pb_tag(q, field, PB_LEN), n);
    memcpy(q, body, n);
    return q + n;
}

/* One element of a repeated message field of Profile: tag, length, then the n bytes of body. */
static void pb_append(tci_sink *o, uint32_t field, const uint8_t *body, size_t n)
{
    uint8_t head[1 + PB_VARINT_MAX];
    tci_sink_write(o, head, (size_t)(pb_varint(pb_tag(head, field, PB_LEN), n) - head));
    tci_sink_write(o, body, n);
}

/* ---- which nodes and methods the samples use ---------------------------- */

/* live[i]: node i or a descendant has self time (its counts). Children have larger
 * indices than their parents (nodes are made on first entry), so one
 * backwards sweep suffices. */
static uint8_t *live_nodes(const pprof_w *p, const tci_calltree *ct)
{
    uint8_t *live = tci_calloc(ct->n_nodes ? ct->n_nodes : 1, 1);
    if (!live)
        return NULL;
    for (uint32_t i = ct->n_nodes; i-- > 0;) {
        const tci_ctnode *n = &ct->nodes[i];
        if (n->method != TCI_NONE && has_value(p, n))
            live[i] = 1;
        if (live[i] && n->parent != TCI_NONE)
            live[n->parent] = 1;
    }
    return live;
}

/* Gives every method on a live node its id and interns its strings. */
static int use_methods(pprof_w *p, const tci_trace *t, const tci_calltree *ct, const uint8_t *live)
{
    for (uint32_t i = 0; i < ct->n_nodes; i++) {
        uint32_t m = ct->nodes[i].method;
        if (live[i] && m != TCI_NONE && !p->loc_id[m])
            p->loc_id[m] = 1; /* mark; ids follow method order below */
    }
    for (uint32_t m = 0; m < t->n_methods; m++) {
        if (!p->loc_id[m])
            continue;
        const tci_method *me = &t->methods[m];
        p->loc_id[m] = ++p->n_used;
        if ((p->s_name[m] = intern(p, me->short_name)) < 0 || (p->s_sys[m] = intern(p, me->full_name)) < 0 ||
            (p->s_file[m] = intern(p, me->file)) < 0)
            return TC_ERR_NOMEM;
        if (me->line > 0)
            p->has_lines = true;
    }
    return TC_OK;
}

/* ---- header -------------------------------------------------------------- */

/* Values per sample: [wall, cpu], [wall] without a CPU clock, [cpu] without a wall clock;
 * [count] when the samples weigh counts. */
static size_t sample_values(const pprof_w *p, const tci_trace *t)
{
    return !p->count_type && t->has_wall && t->has_cpu ? 2 : 1;
}

#define PPROF_MAX_COMMENTS 9

/* Comments pprof prints above its reports: what was converted and how, and the
 * figures grouped by kind under the CLI summary's headings. */
static int make_comments(pprof_w *p, const tci_wctx *w, int64_t *c, size_t *n)
{
    const tci_trace *t = w->trace;
    const char *s[PPROF_MAX_COMMENTS];
    size_t k = 0;
    char text[TCI_FIGURES_TEXT_MAX > TCI_FORMAT_TEXT_MAX ? TCI_FIGURES_TEXT_MAX : TCI_FORMAT_TEXT_MAX];
    s[k++] = tci_arena_printf(&p->arena, "converted by traceconv from %s", t->input_name ? t->input_name : "-");
    s[k++] = tci_arena_printf(&p->arena, "format: %s", tci_trace_format(t, text, sizeof text));
    s[k++] = tci_arena_printf(&p->arena, "clock: %s", tci_clock_name(t->clock));
    if (p->count_type)
        s[k++] = tci_arena_printf(&p->arena, "values: the %s counts of the sampled stacks (%s); the time of the "
                                  "input's slices is not in this profile", p->count_type, p->count_unit);
    else if (!t->has_cpu)
        s[k++] = "no thread-CPU clock in the input: the cpu sample type is omitted";
    else if (!t->has_wall)
        s[k++] = "no wall clock in the input (clock=thread-cpu): the wall sample type is omitted";
    char sel[TCI_SELECTION_TEXT_MAX]; /* the selection it was made with, named as the options are */
    if (tci_selection_text(w->opt, tci_writer_pprof.options, sel, sizeof sel))
        s[k++] = tci_arena_printf(&p->arena, "selection: %s", sel);
    static const int kinds[] = {TC_FIG_REPAIR, TC_FIG_WARNING, TC_FIG_NOTE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        s[k++] = tci_arena_printf(&p->arena, "%s: %s", tci_figure_heading(kinds[i]),
                                  tci_figures_text(w->diag, kinds[i], text, sizeof text));
    for (size_t i = 0; i < k; i++)
        if (!s[i] || (c[i] = intern(p, s[i])) < 0)
            return TC_ERR_NOMEM;
    *n = k;
    return TC_OK;
}

static int write_header(pprof_w *p, const tci_wctx *w)
{
    const tci_trace *t = w->trace;
    int64_t comments[PPROF_MAX_COMMENTS];
    size_t n_comments = 0;
    int rc = make_comments(p, w, comments, &n_comments);
    if (rc != TC_OK)
        return rc;
    Perftools__Profiles__ValueType wall = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    Perftools__Profiles__ValueType cpu = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    Perftools__Profiles__ValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    wall.type = p->s_wall, wall.unit = p->s_ns;
    cpu.type = p->s_cpu, cpu.unit = p->s_ns;
    if (p->count_type) /* its one type: the samples' event, in their unit */
        wall.type = p->s_count_type, wall.unit = p->s_count_unit;
    /* a thread-CPU-only input has no wall time to show: its one type is cpu */
    Perftools__Profiles__ValueType *types[2] = {&wall, &cpu}, **first = t->has_wall || p->count_type ? types : types + 1;
    period = **first;

    Perftools__Profiles__Mapping map = PERFTOOLS__PROFILES__MAPPING__INIT;
    Perftools__Profiles__Mapping *maps[1] = {&map};
    map.id = 1;
    map.filename = p->s_process;
    map.has_functions = map.has_filenames = true;
    map.has_line_numbers = p->has_lines;

    Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
    prof.n_sample_type = sample_values(p, t);
    prof.sample_type = first;
    prof.n_mapping = 1;
    prof.mapping = maps;
    prof.n_string_table = p->n_str;
    prof.string_table = (char **)p->str; /* protobuf-c only reads them */
    /* time_nanos is epoch time: only Dalvik's header start is the epoch (its
     * gettimeofday); ART's is CLOCK_MONOTONIC, and pprof would print 1970. */
    if (t->vm && !strcmp(t->vm, "dalvik"))
        prof.time_nanos = t->start_ns;
    /* the wall time between start and end; a thread-CPU timeline's end is the
     * largest CPU time, so there only the header's elapsed time is a duration */
    if (t->has_wall)
        prof.duration_nanos = t->end_ns > t->start_ns ? t->end_ns - t->start_ns : 0;
    else
        prof.duration_nanos = t->elapsed_ns > 0 ? t->elapsed_ns : 0;
    prof.period_type = &period;
    prof.period = 1;
    prof.n_comment = n_comments;
    prof.comment = comments;
    prof.default_sample_type = (*first)->type;
    sink_buffer sb = {{sink_append}, w->out};
    protobuf_c_message_pack_to_buffer(&prof.base, &sb.base);
    return TC_OK;
}

/* Location{id, mapping_id 1, line {function_id, line}}: the same id for both. */
static void append_location(tci_sink *o, uint64_t id, int64_t line)
{
    uint8_t ln[2 * (1 + PB_VARINT_MAX)], body[3 * (1 + PB_VARINT_MAX) + sizeof ln], *q;
    size_t ln_len = (size_t)(pb_scalar(pb_scalar(ln, 1, id), 2, (uint64_t)line) - ln);
    q = pb_scalar(pb_scalar(body, 1, id), 2, 1);
    q = pb_bytes(q, 4, ln, ln_len); /* a repeated message: even an empty one is there */
    pb_append(o, F_LOCATION, body, (size_t)(q - body));
}

/* Function{id, name, system_name, filename, start_line}. */
static void append_function(const pprof_w *p, tci_sink *o, uint32_t m, int64_t line)
{
    uint8_t body[5 * (1 + PB_VARINT_MAX)], *q = body;
    q = pb_scalar(q, 1, p->loc_id[m]);
    q = pb_scalar(q, 2, (uint64_t)p->s_name[m]);
    q = pb_scalar(q, 3, (uint64_t)p->s_sys[m]);
    q = pb_scalar(q, 4, (uint64_t)p->s_file[m]);
    q = pb_scalar(q, 5, (uint64_t)line);
    pb_append(o, F_FUNCTION, body, (size_t)(q - body));
}

/* One Location and one Function per used method, appended in id order. */
static void write_symbols(const pprof_w *p, const tci_wctx *w)
{
    const tci_trace *t = w->trace;
    for (uint32_t m = 0; m < t->n_methods; m++) {
        if (!p->loc_id[m])
            continue;
        int64_t line = t->methods[m].line > 0 ? t->methods[m].line : 0;
        append_location(w->out, p->loc_id[m], line);
        append_function(p, w->out, m, line);
    }
}

/* ---- samples ------------------------------------------------------------- */

/* The labels of every sample of a thread (two Label messages), packed once per thread. */
#define LABELS_MAX (2 * (2 + 4 * (1 + PB_VARINT_MAX)))

typedef struct walk_state {
    uint64_t *path; /* location ids root first */
    uint8_t *packed; /* a sample's packed location ids: PB_VARINT_MAX bytes per frame */
    uint32_t depth, cap;
    uint8_t labels[LABELS_MAX];
    size_t labels_len;
} walk_state;

static int path_push(walk_state *s, uint64_t id)
{
    if (s->depth == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 256;
        uint64_t *a = tci_realloc_array(s->path, cap, sizeof *a);
        if (!a)
            return TC_ERR_NOMEM;
        s->path = a;
        uint8_t *b = tci_realloc_array(s->packed, cap, PB_VARINT_MAX);
        if (!b)
            return TC_ERR_NOMEM;
        s->packed = b;
        s->cap = cap;
    }
    s->path[s->depth++] = id;
    return TC_OK;
}

/* Label{key, str, num} for one thread: its name and its tid. */
static void pack_thread_labels(walk_state *s, const pprof_w *p, int64_t name, int64_t tid)
{
    uint8_t body[4 * (1 + PB_VARINT_MAX)], *q = s->labels;
    size_t n = (size_t)(pb_scalar(pb_scalar(body, 1, (uint64_t)p->s_thread), 2, (uint64_t)name) - body);
    q = pb_bytes(q, 3, body, n);
    n = (size_t)(pb_scalar(pb_scalar(body, 1, (uint64_t)p->s_tid), 3, (uint64_t)tid) - body);
    q = pb_bytes(q, 3, body, n);
    s->labels_len = (size_t)(q - s->labels);
}

/* Sample{location_id leaf first, value, label}: the ids are packed first (their length
 * leads them), then the element's head and the rest of its body around them. */
static void emit_sample(const tci_wctx *w, walk_state *s, const tci_ctnode *n)
{
    uint8_t *q = s->packed;
    for (uint32_t i = s->depth; i-- > 0;) /* pprof wants the leaf first */
        q = pb_varint(q, s->path[i]);
    size_t ids_len = (size_t)(q - s->packed);

    const pprof_w *p = w->priv;
    uint8_t vals[2 * PB_VARINT_MAX], *v = vals; /* [wall, cpu], [wall], [cpu] or [count]: sample_values */
    if (p->count_type)
        v = pb_varint(v, (uint64_t)count_of(n->sampled));
    else if (w->trace->has_wall)
        v = pb_varint(v, (uint64_t)n->wall_self);
    if (!p->count_type && (w->trace->has_cpu || !w->trace->has_wall))
        v = pb_varint(v, (uint64_t)n->cpu_self);
    uint8_t tail[1 + PB_VARINT_MAX + sizeof vals + LABELS_MAX], *r = tail;
    r = pb_bytes(r, 2, vals, (size_t)(v - vals));
    memcpy(r, s->labels, s->labels_len);
    r += s->labels_len;

    uint8_t ids_head[1 + PB_VARINT_MAX], *ih = ids_head;
    if (ids_len) /* an empty repeated field is left out */
        ih = pb_varint(pb_tag(ih, 1, PB_LEN), ids_len);
    size_t body_len = (size_t)(ih - ids_head) + ids_len + (size_t)(r - tail);
    uint8_t head[1 + PB_VARINT_MAX + sizeof ids_head], *h = pb_varint(pb_tag(head, F_SAMPLE, PB_LEN), body_len);
    memcpy(h, ids_head, (size_t)(ih - ids_head));
    h += ih - ids_head;
    tci_sink_write(w->out, head, (size_t)(h - head));
    tci_sink_write(w->out, s->packed, ids_len);
    tci_sink_write(w->out, tail, (size_t)(r - tail));
}

/* The walk over one tree (tci_calltree_walk): each live node's location pushed on the
 * path, a sample where it has self time; dead subtrees (no self time anywhere) are left out. */
typedef struct sample_walk {
    const tci_wctx *w;
    const tci_calltree *ct;
    const uint8_t *live;
    walk_state *s;
} sample_walk;

static int sample_enter(void *user, uint32_t node, uint32_t depth)
{
    (void)depth;
    sample_walk *sw = user;
    const pprof_w *p = sw->w->priv;
    const tci_ctnode *n = &sw->ct->nodes[node];
    if (tci_sink_failed(sw->w->out)) /* a sample's location list costs its depth */
        return TC_ERR_IO;
    if (!sw->live[node])
        return TCI_WALK_PRUNE;
    if (path_push(sw->s, p->loc_id[n->method]) != TC_OK)
        return TC_ERR_NOMEM;
    if (has_value(p, n))
        emit_sample(sw->w, sw->s, n);
    return TC_OK;
}

static void sample_leave(void *user, uint32_t node, uint32_t depth)
{
    (void)node, (void)depth;
    sample_walk *sw = user;
    sw->s->depth--;
}

static int walk(const tci_wctx *w, const tci_calltree *ct, uint32_t root, const uint8_t *live, walk_state *s)
{
    s->depth = 0;
    sample_walk sw = {w, ct, live, s};
    int rc = tci_calltree_walk(ct, root, &(tci_ctvisit){sample_enter, sample_leave, &sw});
    return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
}

static int write_samples(const tci_wctx *w, const tci_calltree *ct, const uint8_t *live, bool merged)
{
    const pprof_w *p = w->priv;
    walk_state s = {0};
    int rc = TC_OK;
    if (merged) {
        rc = walk(w, ct, ct->roots[0], live, &s);
    } else {
        for (uint32_t t = 0; t < ct->n_roots && rc == TC_OK; t++) {
            if (!live[ct->roots[t]])
                continue;
            pack_thread_labels(&s, p, p->s_thread_name[t], (int64_t)w->trace->threads[t].tid);
            rc = walk(w, ct, ct->roots[t], live, &s);
        }
    }
    free(s.path);
    free(s.packed);
    return rc;
}

/* ---- writer -------------------------------------------------------------- */

static int intern_fixed(pprof_w *p, const tci_wctx *w, bool merged)
{
    const tci_trace *t = w->trace;
    if (intern(p, "") != 0) /* index 0 must be "" */
        return TC_ERR_NOMEM;
    p->s_wall = intern(p, "wall");
    p->s_cpu = intern(p, "cpu");
    p->s_ns = intern(p, "nanoseconds");
    p->s_thread = intern(p, "thread");
    p->s_tid = intern(p, "tid");
    p->s_process = intern(p, t->process_name);
    if (p->s_wall < 0 || p->s_cpu < 0 || p->s_ns < 0 || p->s_thread < 0 || p->s_tid < 0 || p->s_process < 0)
        return TC_ERR_NOMEM;
    if (p->count_type &&
        ((p->s_count_type = intern(p, p->count_type)) < 0 || (p->s_count_unit = intern(p, p->count_unit)) < 0))
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; !merged && i < t->n_threads; i++)
        if ((p->s_thread_name[i] = intern(p, t->threads[i].name)) < 0)
            return TC_ERR_NOMEM;
    return TC_OK;
}

static int pprof_begin(tci_wctx *w)
{
    pprof_w *p = w->priv;
    const tci_trace *t = w->trace;
    size_t nm = t->n_methods ? t->n_methods : 1, nt = t->n_threads ? t->n_threads : 1;
    p->loc_id = tci_calloc(nm, sizeof *p->loc_id);
    p->s_name = tci_calloc(nm, sizeof *p->s_name);
    p->s_sys = tci_calloc(nm, sizeof *p->s_sys);
    p->s_file = tci_calloc(nm, sizeof *p->s_file);
    p->s_thread_name = tci_calloc(nt, sizeof *p->s_thread_name);
    if (!p->loc_id || !p->s_name || !p->s_sys || !p->s_file || !p->s_thread_name)
        return TC_ERR_NOMEM;
    /* sampled stacks weighing counts (a json reader's perf samples): named by their event */
    if ((p->count_type = tci_trace_count_name(t)))
        p->count_unit = "count";
    return TC_OK;
}

static int write_profile(tci_wctx *w, const tci_calltree *ct, bool merged)
{
    pprof_w *p = w->priv;
    uint8_t *live = live_nodes(p, ct);
    if (!live)
        return TC_ERR_NOMEM;
    int rc = intern_fixed(p, w, merged);
    if (rc == TC_OK)
        rc = use_methods(p, w->trace, ct, live);
    if (rc == TC_OK)
        rc = write_header(p, w); /* every string is interned by now */
    if (rc == TC_OK) {
        write_symbols(p, w);
        rc = write_samples(w, ct, live, merged);
    }
    free(live);
    return rc != TC_OK ? rc : w->out->err ? TC_ERR_IO : TC_OK;
}

static int pprof_finish(tci_wctx *w, const tci_calltree *ct)
{
    if (!w->opt->merge_threads)
        return write_profile(w, ct, false);
    tci_calltree merged;
    int rc = tci_calltree_merge_threads(ct, &merged);
    if (rc == TC_OK)
        rc = write_profile(w, &merged, true);
    tci_calltree_free(&merged);
    return rc;
}

static void pprof_close(tci_wctx *w)
{
    pprof_w *p = w->priv;
    if (!p)
        return;
    free(p->str);
    free(p->hash);
    free(p->loc_id);
    free(p->s_name);
    free(p->s_sys);
    free(p->s_file);
    free(p->s_thread_name);
    tci_arena_free(&p->arena);
}

const tci_writer tci_writer_pprof = {
    .name = "pprof",
    .description = "pprof profile, gzipped protobuf (go tool pprof)",
    .extensions = "pb.gz",
    .options = (const tci_option_def[]){TCI_OPTION_MERGE_THREADS("merge all threads (no thread labels)", NULL), {0}},
    .variants = (const tci_variant[]){{.name = "pprof", .extension = "pb.gz", .mime = "application/gzip",
                                       .aliases = "pb,pb.gz,go-pprof"}, {0}},
    .priv_size = sizeof(pprof_w),
    .flags = TCI_WF_AGGREGATE | TCI_WF_GZIP,
    .begin = pprof_begin,
    .finish = pprof_finish,
    .close = pprof_close,
};
