/*
 * deobfuscate.c - a ProGuard/R8 mapping.txt applied to the method table, so
 * that every writer shows source names (../shared/docs/formats/DEOBFUSCATION.md;
 * the § numbers below are that file's).
 *
 * The core calls this once, between pass 1 and the display names
 * (tci_trace_finalize): every reader's methods are complete then, and no
 * writer has seen a name yet. ART methods (class, name, descriptor, source
 * file) get their original class, name and descriptor; names that are text
 * (Chrome JSON, systrace, Rhea) are renamed when they are a qualified
 * "pkg.Class.method", optionally followed by ": (descriptor)" as our
 * timelines write it or ": (java.Type, int)void" as Rhea's sampling mapping
 * does. Plain names keep their text as the table's key (pass 2 finds them
 * by it): only what they show (full_name, short_name) changes.
 *
 * Resolution (§7): a trace method's class is looked up by its obfuscated
 * name; the member lines of that class with the method's name are its
 * candidates: each inline group (lines with one minified range, innermost
 * first) stands for its outermost line, and groups with the same outermost
 * original signature are one candidate. Each candidate's residual
 * descriptor is its residualsignature (map >= 2.2) or its original
 * signature with every class renamed through the class lines; the one
 * equal to the trace's descriptor wins. Otherwise (§7.5) the candidates
 * with as many parameters, else all, are kept: one original name among
 * them is used (counted deobf-fallback), several are shown "a | b"
 * (counted deobf-ambiguous).
 *
 * Speed and memory (§9): the mapping is mmapped (gzip is inflated into an
 * unlinked temporary file and mapped) and read in two steps:
 *   index (tci_deobf_open): one memchr walk over the lines; only class lines
 *     are parsed, into hash tables of offsets (obfuscated -> class, original
 *     -> class), never copied strings; pages are given back behind the walk;
 *   apply: the trace's methods are grouped by class; the member lines of a
 *     class the trace uses are parsed once, its candidates sorted by (new
 *     name, residual descriptor) and each method found by binary search.
 *     Pages touched are given back every few MB, so a 300 MB mapping adds
 *     its index, not itself, to the peak RSS.
 * Memory: about 50 bytes a class of the mapping plus the members of one
 * class at a time; nothing per line.
 *
 * Malformed mappings: what breaks the structure is an error with the
 * mapping's file, offset and line number (a class line without "->" or
 * ':', a member line before the first class, a line longer than
 * max-string, a NUL byte, an empty mapping; in the block of a class the
 * trace uses: a member line without "->", a parameter list that is not
 * closed, a bad line range). What R8 would refuse but changes no name is a
 * counted warning, deobf-bad-line, and ignored (text after the new name, a
 * duplicate obfuscated class, an invalid residual signature, a map version
 * newer than 2.2). Comments and JSON that is not mapping information are
 * skipped, as R8 does.
 */
#include "tc_base.h"
#include "tc_compat.h"
#include "tc_deobf.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_trace.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOD "deobfuscate"
#define MAX_LINE_NUMBER 9999999999ull     /* ten digits: R8 writes ints; more is not a line number */
#define RELEASE_EVERY ((uint64_t)8 << 20) /* bytes touched before the mapping's pages are given back */
#define MAX_SHOWN 8                        /* alternatives of an ambiguous name that are listed */
#define REMOVED_PREFIX "R8$$REMOVED$$CLASS$$"

enum map_version { MAPV_NONE = 0, MAPV_1_0 = 10, MAPV_2_0 = 20, MAPV_2_1 = 21, MAPV_2_2 = 22, MAPV_EXPERIMENTAL = 99 };

/* A class line. Its original name starts the line (class lines never start with whitespace). */
typedef struct dclass {
    uint64_t at;        /* offset of the class line */
    uint64_t end;       /* end of its block: the next class line, or the end of the text */
    uint64_t body;      /* offset of the line after it: the block's first */
    uint64_t line;      /* its line number, from 1 */
    uint32_t orig_len;
    uint32_t obf, obf_len; /* the obfuscated name at at + obf */
    uint8_t version;    /* map version in effect (enum map_version) */
    bool removed;       /* an R8$$REMOVED$$CLASS$$ entry: found by its original name only */
} dclass;

struct tci_deobf {
    tci_source src;
    const char *text;
    size_t size;
    char *path;            /* for messages */
    dclass *classes;
    uint32_t n_classes, cap_classes;
    tci_idmap by_obf, by_orig; /* hash of a dotted name (seeded: collisions try the next seed) -> class */
    tci_span map_id;           /* "# pg_map_id: <id>" */
    uint32_t max_line;     /* option max-string */
    uint64_t touched;      /* bytes read since the pages were last given back */
};

/* ---- small text helpers (and text.h's: lines, spaces, numbers) ---------------- */

static int span_cmp(tci_span a, tci_span b)
{
    size_t n = a.n < b.n ? a.n : b.n;
    int c = n ? memcmp(a.p, b.p, n) : 0;
    return c ? c : (a.n > b.n) - (a.n < b.n);
}

/* The last occurrence of "->" in s, or NULL. */
static const char *last_arrow(tci_span s)
{
    for (size_t i = s.n; i >= 2; i--)
        if (s.p[i - 2] == '-' && s.p[i - 1] == '>')
            return s.p + i - 2;
    return NULL;
}

/* A growable text buffer; a failed allocation is remembered (oom) and checked once. */
typedef struct dbuf {
    char *p;
    size_t n, cap;
    bool oom;
} dbuf;

static void put(dbuf *b, const char *s, size_t n)
{
    if (b->oom || !n)
        return;
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n < n) {
            if (cap > SIZE_MAX / 2) {
                b->oom = true;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void put_span(dbuf *b, tci_span s) { put(b, s.p, s.n); }
static void put_ch(dbuf *b, char c) { put(b, &c, 1); }
static void put_lit(dbuf *b, const char *s) { put(b, s, strlen(s)); }

/* ---- diagnostics about the mapping: its own file name, offset and line ---------- */

static int map_error(const tci_deobf *m, tci_diag *d, uint64_t at, uint64_t line, tci_span text, const char *fmt, ...)
    TCI_PRINTF(6, 7);
static int map_error(const tci_deobf *m, tci_diag *d, uint64_t at, uint64_t line, tci_span text, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *input = d->input;
    d->input = m->path;
    if (text.p)
        tci_error(d, TC_ERR_FORMAT, MOD, at, "line %llu: %s: \"%.*s%s\"", (unsigned long long)line, why,
                  (int)(text.n < 80 ? text.n : 80), text.p, text.n > 80 ? "..." : "");
    else if (line)
        tci_error(d, TC_ERR_FORMAT, MOD, at, "line %llu: %s", (unsigned long long)line, why);
    else /* the whole mapping (empty) */
        tci_error(d, TC_ERR_FORMAT, MOD, at, "%s", why);
    d->input = input;
    return TC_ERR_FORMAT;
}

static void map_warn(const tci_deobf *m, tci_diag *d, uint64_t at, uint64_t line, const char *fmt, ...)
    TCI_PRINTF(5, 6);
static void map_warn(const tci_deobf *m, tci_diag *d, uint64_t at, uint64_t line, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *input = d->input;
    d->input = m->path;
    tci_warn(d, TCI_FIG_DEOBF_BAD_LINE, MOD, at, "line %llu: %s", (unsigned long long)line, why);
    d->input = input;
}

static int nomem(tci_diag *d) { return tci_error(d, TC_ERR_NOMEM, MOD, UINT64_MAX, "out of memory"); }

/* ---- pages: a 300 MB mapping must not stay in memory ----------------------------- */

static void release_all(tci_deobf *m)
{
    m->touched = 0;
    if (m->src.mapped)
        tci_advise((void *)m->text, m->size, TCI_ADVISE_DONTNEED); /* a private, unwritten file map: pages come back on use */
}

/* Some bytes of the mapping were read at random: give the pages back now and then. */
static void touch(tci_deobf *m, uint64_t bytes)
{
    m->touched += bytes;
    if (m->touched > RELEASE_EVERY)
        release_all(m);
}

/* ---- the class index ---------------------------------------------------------- */

/* FNV-1a of a class name with '/' read as '.', so a descriptor's L<a/b/c>; finds a.b.c. */
static uint64_t name_hash(const char *s, size_t n, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (seed * 0x9E3779B97F4A7C15ull);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)(s[i] == '/' ? '.' : s[i])) * 0x100000001b3ull;
    return h;
}

static bool dotted_eq(tci_span map_name, const char *s, size_t n)
{
    if (map_name.n != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char a = map_name.p[i] == '/' ? '.' : map_name.p[i], b = s[i] == '/' ? '.' : s[i];
        if (a != b)
            return false;
    }
    return true;
}

static tci_span orig_name(const tci_deobf *m, uint32_t i)
{
    return (tci_span){m->text + m->classes[i].at, m->classes[i].orig_len};
}

static tci_span obf_name(const tci_deobf *m, uint32_t i)
{
    return (tci_span){m->text + m->classes[i].at + m->classes[i].obf, m->classes[i].obf_len};
}

/* The class whose (original or obfuscated) name is s, or TCI_NONE with *free_key
 * the key under which it would go. */
static uint32_t find_in(tci_deobf *m, const tci_idmap *map, bool orig, const char *s, size_t n, uint64_t *free_key)
{
    for (uint64_t seed = 0;; seed++) {
        uint64_t key = name_hash(s, n, seed);
        uint32_t i = tci_idmap_get(map, key);
        if (i == TCI_NONE) {
            if (free_key)
                *free_key = key;
            return TCI_NONE;
        }
        touch(m, 4096);
        if (dotted_eq(orig ? orig_name(m, i) : obf_name(m, i), s, n))
            return i;
    }
}

static uint32_t find_obf(tci_deobf *m, tci_span s) { return find_in(m, &m->by_obf, false, s.p, s.n, NULL); }
static uint32_t find_orig(tci_deobf *m, tci_span s) { return find_in(m, &m->by_orig, true, s.p, s.n, NULL); }

/* Map version of a version line's value; unknown newer versions read as 2.2 (with a warning). */
static uint8_t parse_version(tci_span v, bool *newer)
{
    *newer = false;
    if (tci_span_is(v, "experimental"))
        return MAPV_EXPERIMENTAL;
    unsigned major = 0, minor = 0;
    size_t i = 0;
    while (i < v.n && tci_is_digit(v.p[i]) && major < 1000)
        major = major * 10 + (unsigned)(v.p[i++] - '0');
    if (i < v.n && v.p[i] == '.')
        for (i++; i < v.n && tci_is_digit(v.p[i]) && minor < 1000; i++)
            minor = minor * 10 + (unsigned)(v.p[i] - '0');
    unsigned x = major * 10 + (minor < 10 ? minor : 9);
    if (!i || i < v.n)
        return MAPV_NONE;
    if (x > MAPV_2_2) {
        *newer = true;
        return MAPV_2_2;
    }
    return x >= MAPV_2_1 ? (uint8_t)x : x >= MAPV_2_0 ? MAPV_2_0 : x >= MAPV_1_0 ? MAPV_1_0 : MAPV_NONE;
}

/* ---- lenient JSON of mapping information (§5): "…", '…' or bare keys ------------ */

typedef struct jinfo {
    tci_span id, version, file, signature;
} jinfo;

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (tci_is_space(*p) || *p == '\n'))
        p++;
    return p;
}

/* A string ('…' or "…") or a bare token at p: its text (escapes kept) and the end. NULL if malformed. */
static const char *json_atom(const char *p, const char *e, tci_span *out)
{
    if (p < e && (*p == '"' || *p == '\'')) {
        char q = *p++;
        const char *s = p;
        while (p < e && *p != q)
            p += *p == '\\' && p + 1 < e ? 2 : 1;
        if (p >= e)
            return NULL;
        *out = (tci_span){s, (size_t)(p - s)};
        return p + 1;
    }
    const char *s = p;
    while (p < e && !tci_is_space(*p) && *p != ',' && *p != ':' && *p != '}' && *p != ']' && *p != '{' && *p != '[')
        p++;
    *out = (tci_span){s, (size_t)(p - s)};
    return p > s ? p : NULL;
}

/* An array or object value: skipped, strings respected. */
static const char *json_skip_nested(const char *p, const char *e)
{
    int depth = 0;
    while (p < e) {
        char c = *p;
        if (c == '"' || c == '\'') {
            tci_span s;
            if (!(p = json_atom(p, e, &s)))
                return NULL;
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0)
            return p + 1;
        p++;
    }
    return NULL;
}

/* The object in [p, e): the keys traceconv reads. false when it is not JSON (a comment, as in R8). */
static bool json_info(const char *p, const char *e, jinfo *j)
{
    memset(j, 0, sizeof *j);
    p = skip_ws(p, e);
    if (p >= e || *p++ != '{')
        return false;
    for (;;) {
        p = skip_ws(p, e);
        if (p < e && *p == '}')
            return true;
        tci_span key, val = {NULL, 0};
        if (!(p = json_atom(p, e, &key)))
            return false;
        p = skip_ws(p, e);
        if (p >= e || *p++ != ':')
            return false;
        p = skip_ws(p, e);
        if (p < e && (*p == '{' || *p == '['))
            p = json_skip_nested(p, e);
        else
            p = json_atom(p, e, &val);
        if (!p)
            return false;
        if (tci_span_is(key, "id"))
            j->id = val;
        else if (tci_span_is(key, "version"))
            j->version = val;
        else if (tci_span_is(key, "fileName"))
            j->file = val;
        else if (tci_span_is(key, "signature"))
            j->signature = val;
        p = skip_ws(p, e);
        if (p < e && *p == ',')
            p++;
        else if (p >= e || *p != '}')
            return false;
    }
}

/* A comment line "# {…}" (any indentation): its mapping information, or false. */
static bool info_line(tci_span line, jinfo *j)
{
    tci_span s = tci_span_trim(line);
    if (!s.n || s.p[0] != '#')
        return false;
    s.p++, s.n--;
    s = tci_span_trim(s);
    return s.n && s.p[0] == '{' && json_info(s.p, s.p + s.n, j);
}

/* ---- pass 1: the index of class lines ------------------------------------------- */

static int add_class(tci_deobf *m, tci_diag *d, uint64_t at, tci_span orig, tci_span obf, uint64_t line, uint64_t body,
                     uint8_t version)
{
    if (tci_grow((void **)&m->classes, &m->cap_classes, m->n_classes, sizeof *m->classes) != 0)
        return nomem(d);
    uint32_t i = m->n_classes;
    dclass *c = &m->classes[i];
    memset(c, 0, sizeof *c);
    c->at = at;
    c->end = m->size;
    c->line = line;
    c->orig_len = (uint32_t)orig.n;
    c->obf = (uint32_t)(obf.p - orig.p);
    c->obf_len = (uint32_t)obf.n;
    c->body = body;
    c->version = version;
    c->removed = obf.n >= sizeof REMOVED_PREFIX - 1 && !memcmp(obf.p, REMOVED_PREFIX, sizeof REMOVED_PREFIX - 1);
    if (i)
        m->classes[i - 1].end = at;
    m->n_classes++;
    uint64_t key;
    if (!c->removed) {
        if (find_in(m, &m->by_obf, false, obf.p, obf.n, &key) != TCI_NONE)
            map_warn(m, d, at, line, "obfuscated class %.*s is mapped twice; the first mapping is kept",
                     (int)(obf.n < 100 ? obf.n : 100), obf.p);
        else if (tci_idmap_put(&m->by_obf, key, i) != 0)
            return nomem(d);
    }
    if (find_in(m, &m->by_orig, true, orig.p, orig.n, &key) == TCI_NONE && tci_idmap_put(&m->by_orig, key, i) != 0)
        return nomem(d);
    return TC_OK;
}

/* "original -> obfuscated:" (§3.1): split at the first "->", the trailing ':' required. */
static int class_line(tci_deobf *m, tci_diag *d, tci_span line, uint64_t at, uint64_t body, uint64_t no,
                      uint8_t version)
{
    if (memchr(line.p, 0, line.n))
        return map_error(m, d, at, no, (tci_span){NULL, 0}, "a NUL byte in a class line");
    const char *arrow = tci_memmem(line.p, line.n, "->", 2);
    if (!arrow)
        return map_error(m, d, at, no, line, "a class line must be 'original -> obfuscated:' (no '->')");
    tci_span orig = tci_span_trim((tci_span){line.p, (size_t)(arrow - line.p)});
    tci_span right = tci_span_trim((tci_span){arrow + 2, (size_t)(line.p + line.n - arrow - 2)});
    const char *colon = memchr(right.p, ':', right.n);
    if (!colon)
        return map_error(m, d, at, no, line, "a class line must end in ':' after the obfuscated name");
    tci_span obf = tci_span_trim((tci_span){right.p, (size_t)(colon - right.p)});
    if (!orig.n || !obf.n)
        return map_error(m, d, at, no, line, "an empty class name");
    tci_span junk = tci_span_trim((tci_span){colon + 1, (size_t)(right.p + right.n - colon - 1)});
    if (junk.n)
        map_warn(m, d, at, no, "text after the class line's ':' is ignored");
    return add_class(m, d, at, orig, obf, no, body, version);
}

/* A comment at the start of a line: the map version, pg_map_id. */
static void global_comment(tci_deobf *m, tci_diag *d, tci_span line, uint64_t at, uint64_t no, uint8_t *version)
{
    static const char id_key[] = "# pg_map_id:";
    if (line.n > sizeof id_key - 1 && !memcmp(line.p, id_key, sizeof id_key - 1)) {
        m->map_id = tci_span_trim((tci_span){line.p + sizeof id_key - 1, line.n - (sizeof id_key - 1)});
        return;
    }
    jinfo j;
    if (!tci_memmem(line.p, line.n, "tools.r8.mapping", 16) || !info_line(line, &j) ||
        !tci_span_is(j.id, "com.android.tools.r8.mapping"))
        return;
    bool newer;
    *version = parse_version(j.version, &newer);
    if (newer)
        map_warn(m, d, at, no, "map version %.*s is newer than 2.2, the newest traceconv reads; read as 2.2",
                 (int)(j.version.n < 20 ? j.version.n : 20), j.version.p);
}

/* One walk over the lines: class lines indexed, version lines followed, the rest skipped. */
static int index_lines(tci_deobf *m, tci_diag *d)
{
    const char *t = m->text;
    size_t pos = 0;
    uint64_t no = 0;
    uint8_t version = MAPV_NONE;
    if (m->size >= 3 && !memcmp(t, "\xEF\xBB\xBF", 3)) /* a byte-order mark some editors write */
        pos = 3;
    while (pos < m->size) {
        /* the line is looked for in max_line + 1 bytes only: a binary file is refused without
         * reading it all */
        size_t room = m->size - pos, lim = room <= m->max_line ? room : (size_t)m->max_line + 1, next = pos;
        tci_line l;
        tci_next_line(t, pos + lim, &next, &l);
        no++;
        if (room > m->max_line && t[next - 1] != '\n')
            return map_error(m, d, pos, no, (tci_span){NULL, 0},
                             "a line longer than %u bytes (option --max-string): not a mapping", m->max_line);
        tci_span line = {l.p, l.n};
        while (line.n && tci_is_space(line.p[line.n - 1]))
            line.n--;
        if (!line.n) {
            /* blank */
        } else if (tci_is_space(line.p[0])) {
            tci_span s = tci_span_trim(line);
            if (!m->n_classes && s.p[0] != '#')
                return map_error(m, d, pos, no, line, "a member line before the first class line");
        } else if (line.p[0] == '#') {
            global_comment(m, d, line, pos, no, &version);
        } else {
            int rc = class_line(m, d, line, pos, next, no, version);
            if (rc != TC_OK)
                return rc;
        }
        if ((no & 0x3FFF) == 0)
            tci_source_release(&m->src, next); /* pages behind the walk go back */
        pos = next;
    }
    if (!m->n_classes)
        return map_error(m, d, 0, m->size ? no : 0, (tci_span){NULL, 0},
                         m->size ? "no class line ('original -> obfuscated:'): not a ProGuard/R8 mapping"
                                 : "the mapping is empty");
    return TC_OK;
}

static int open_source(tci_deobf *m, const char *path, const tci_options *o, tci_diag *d)
{
    /* clear messages for the common failures first; the source then maps (or inflates) the file */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return tci_error(d, TC_ERR_IO, MOD, UINT64_MAX, "cannot open the mapping: %s", strerror(errno));
    bool dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    close(fd);
    if (dir)
        return tci_error(d, TC_ERR_IO, MOD, UINT64_MAX, "the mapping is a directory");
    tci_diag local;
    memset(&local, 0, sizeof local);
    tci_options so = *o;
    so.read_chunk = 0;
    int rc = tci_source_open(&m->src, path, &so, &local);
    if (rc != TC_OK)
        return tci_error(d, rc, MOD, UINT64_MAX, "cannot read the mapping: %s", local.error);
    return TC_OK;
}

/* The mapping file shrank under its mapping (guard.c): what was read from the zeros is not its. */
static int check_unchanged(const tci_deobf *m, tci_diag *d, int rc)
{
    uint64_t fault = tci_source_changed(&m->src);
    if (!fault)
        return rc;
    const char *input = d->input;
    d->input = m->path;
    d->error[0] = 0;
    tci_error(d, TC_ERR_IO, MOD, fault - 1, "the mapping changed while reading (the file shrank or was rewritten)");
    d->input = input;
    return TC_ERR_IO;
}

static int deobf_index(tci_deobf **out, tci_deobf *m, const tci_options *o, tci_diag *d)
{
    const char *input = d->input;
    d->input = m->path;
    m->text = (const char *)m->src.data;
    m->size = m->src.size;
    m->max_line = o->max_string ? o->max_string : TCI_DEFAULT_MAX_STRING;
    int rc = index_lines(m, d);
    d->input = input;
    rc = check_unchanged(m, d, rc);
    if (rc != TC_OK) {
        tci_deobf_free(m);
        return rc;
    }
    if (m->src.mapped) /* from here on the text is read where classes are */
        tci_advise((void *)m->text, m->size, TCI_ADVISE_RANDOM);
    release_all(m);
    *out = m;
    return TC_OK;
}

int tci_deobf_open(tci_deobf **out, const char *path, const tci_options *o, tci_diag *d)
{
    *out = NULL;
    tci_deobf *m = tci_calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return nomem(d);
    }
    const char *input = d->input;
    d->input = m->path;
    int rc = open_source(m, path, o, d);
    d->input = input;
    if (rc != TC_OK) {
        tci_deobf_free(m);
        return rc;
    }
    return deobf_index(out, m, o, d);
}

int tci_deobf_open_memory(tci_deobf **out, const void *data, size_t size, const char *name, const tci_options *o,
                          tci_diag *d)
{
    *out = NULL;
    tci_deobf *m = tci_calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(name ? name : "(mapping)"))) {
        free(m);
        return nomem(d);
    }
    int rc = tci_source_open_memory(&m->src, data, size, o, d);
    if (rc != TC_OK) {
        tci_deobf_free(m);
        return rc;
    }
    return deobf_index(out, m, o, d);
}

void tci_deobf_free(tci_deobf *m)
{
    if (!m)
        return;
    tci_source_close(&m->src);
    tci_idmap_free(&m->by_obf);
    tci_idmap_free(&m->by_orig);
    free(m->classes);
    free(m->path);
    free(m);
}

/* ---- descriptors ------------------------------------------------------------- */

/* Length of the type descriptor at p ("[I", "La/b;", "V" for a return), 0 if none. */
static size_t type_len(const char *p, size_t n, bool ret)
{
    size_t i = 0;
    while (i < n && p[i] == '[')
        i++;
    if (i == n)
        return 0;
    char c = p[i];
    if (c == 'L') {
        const char *semi = memchr(p + i, ';', n - i);
        return semi && semi > p + i + 1 ? (size_t)(semi - p) + 1 : 0;
    }
    if (c == 'Z' || c == 'B' || c == 'C' || c == 'S' || c == 'I' || c == 'J' || c == 'F' || c == 'D')
        return i + 1;
    return c == 'V' && ret && i == 0 ? 1 : 0;
}

/* Whether d is a method descriptor "(types)ret"; its parameter count. */
static bool desc_valid(tci_span d, uint32_t *params)
{
    if (d.n < 3 || d.p[0] != '(')
        return false;
    size_t i = 1;
    uint32_t k = 0;
    while (i < d.n && d.p[i] != ')') {
        size_t l = type_len(d.p + i, d.n - i, false);
        if (!l)
            return false;
        i += l;
        k++;
    }
    if (i >= d.n)
        return false;
    i++;
    size_t l = type_len(d.p + i, d.n - i, true);
    if (!l || i + l != d.n)
        return false;
    if (params)
        *params = k;
    return true;
}

/* ---- a class's block: its member lines (§3.3), parsed only for classes the trace uses ---- */

typedef struct dmember {
    tci_span ret, qual, name, args, newname, residual;
    int64_t min_a, min_b;   /* minified range (when has_min) */
    bool has_min, synthesized, outline;
} dmember;

typedef struct dblock {
    dmember *mem;
    uint32_t n, cap;
    tci_span file;              /* the class's sourceFile information */
    bool synthesized;
} dblock;

/* A decimal line number. */
static bool line_number(tci_span s, int64_t *out)
{
    uint64_t v;
    if (!tci_parse_u64(s.p, s.n, MAX_LINE_NUMBER, &v))
        return false;
    *out = (int64_t)v;
    return true;
}

/* "a:b" or "a" (single allowed: original ranges), descending bounds fixed as R8 does (§3.3). */
static bool line_range(tci_span s, bool single_ok, int64_t *a, int64_t *b)
{
    const char *colon = memchr(s.p, ':', s.n);
    if (!colon) {
        if (!single_ok || !line_number(s, a))
            return false;
        *b = *a;
        return true;
    }
    if (!line_number((tci_span){s.p, (size_t)(colon - s.p)}, a) ||
        !line_number((tci_span){colon + 1, (size_t)(s.p + s.n - colon - 1)}, b))
        return false;
    if (*a > *b) { /* R8 ed98ca17: to 0 means the singleton from, else the bounds are swapped */
        int64_t lo = *b ? *b : *a;
        *b = *a;
        *a = lo;
    }
    return true;
}

/* Java type names of a parameter list, "int,java.lang.String[]" or "int, int" (§3.3: spaces allowed). */
static bool args_valid(tci_span args)
{
    tci_span s = tci_span_trim(args);
    if (!s.n)
        return true;
    for (const char *p = s.p, *e = s.p + s.n; p <= e;) {
        const char *comma = memchr(p, ',', (size_t)(e - p));
        const char *end = comma ? comma : e;
        if (!tci_span_trim((tci_span){p, (size_t)(end - p)}).n)
            return false;
        p = end + 1;
    }
    return true;
}

/*
 * One member line (whitespace trimmed): a field (*method false, skipped) or
 * a method:
 *   [a:b:]ret [qualifier.]name(args)[:u[:v]] -> newname
 * split from the right: the last "->", then the first '(' (§3.3).
 */
static int member_line(tci_deobf *m, tci_diag *d, tci_span s, uint64_t at, uint64_t no, dmember *out, bool *method)
{
    *method = false;
    if (memchr(s.p, 0, s.n))
        return map_error(m, d, at, no, (tci_span){NULL, 0}, "a NUL byte in a member line");
    const char *arrow = last_arrow(s);
    if (!arrow)
        return map_error(m, d, at, no, s, "a member line must be '... -> new-name' (no '->')");
    tci_span right = tci_span_trim((tci_span){arrow + 2, (size_t)(s.p + s.n - arrow - 2)});
    size_t k = 0;
    while (k < right.n && !tci_is_space(right.p[k]))
        k++;
    tci_span newname = {right.p, k};
    if (!newname.n)
        return map_error(m, d, at, no, s, "no new name after '->'");
    if (tci_span_trim((tci_span){right.p + k, right.n - k}).n)
        map_warn(m, d, at, no, "text after the new name is ignored");
    tci_span left = tci_span_trim((tci_span){s.p, (size_t)(arrow - s.p)});
    if (!left.n)
        return map_error(m, d, at, no, s, "nothing before '->'");
    const char *paren = memchr(left.p, '(', left.n);
    if (!paren)
        return TC_OK; /* a field: not in method traces */
    memset(out, 0, sizeof *out);
    out->newname = newname;
    const char *p = left.p, *e = paren;
    if (tci_is_digit(*p)) { /* the minified range "a:b:" */
        const char *c1 = memchr(p, ':', (size_t)(e - p));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
        if (!c2 || !line_range((tci_span){p, (size_t)(c2 - p)}, false, &out->min_a, &out->min_b))
            return map_error(m, d, at, no, s, "a minified line range must be 'a:b:'");
        out->has_min = true;
        p = c2 + 1;
    }
    const char *sp = p;
    while (sp < e && !tci_is_space(*sp))
        sp++;
    if (sp == p || sp == e)
        return map_error(m, d, at, no, s, "a method line needs 'return-type name(...)'");
    out->ret = (tci_span){p, (size_t)(sp - p)};
    tci_span full = tci_span_trim((tci_span){sp, (size_t)(e - sp)});
    if (!full.n)
        return map_error(m, d, at, no, s, "a method without a name");
    const char *dot = tci_memrchr(full.p, '.', full.n);
    out->qual = dot ? (tci_span){full.p, (size_t)(dot - full.p)} : (tci_span){NULL, 0};
    out->name = dot ? (tci_span){dot + 1, (size_t)(full.p + full.n - dot - 1)} : full;
    if (!out->name.n || (dot && !out->qual.n))
        return map_error(m, d, at, no, s, "a method without a name");
    const char *close = memchr(paren, ')', (size_t)(left.p + left.n - paren));
    if (!close)
        return map_error(m, d, at, no, s, "the parameter list is not closed");
    out->args = (tci_span){paren + 1, (size_t)(close - paren - 1)};
    if (!args_valid(out->args))
        return map_error(m, d, at, no, s, "an empty parameter type");
    tci_span tail = {close + 1, (size_t)(left.p + left.n - close - 1)};
    int64_t u, v;
    if (tail.n && (tail.p[0] != ':' || !line_range((tci_span){tail.p + 1, tail.n - 1}, true, &u, &v)))
        return map_error(m, d, at, no, s, "after the parameter list only ':line' or ':a:b' may follow");
    *method = true;
    return TC_OK;
}

/* Member-level or class-level information of a comment line. */
static void block_info(tci_deobf *m, tci_diag *d, const dclass *c, dblock *b, int64_t last, const jinfo *j,
                       uint64_t at, uint64_t no)
{
    if (tci_span_is(j->id, "sourceFile")) {
        if (!b->n && last < 0)
            b->file = j->file;
        return;
    }
    dmember *mb = last >= 0 ? &b->mem[last] : NULL;
    if (tci_span_is(j->id, "com.android.tools.r8.synthesized") && c->version >= MAPV_1_0) {
        if (mb)
            mb->synthesized = true;
        else if (!b->n)
            b->synthesized = true;
    } else if (tci_span_is(j->id, "com.android.tools.r8.outline") && c->version >= MAPV_2_0 && mb) {
        mb->outline = true;
    } else if (tci_span_is(j->id, "com.android.tools.r8.residualsignature") && c->version >= MAPV_2_2 && mb) {
        if (desc_valid(j->signature, NULL)) /* R8 ignores an invalid one with a warning (§5.7) */
            mb->residual = j->signature;
        else
            map_warn(m, d, at, no, "the residual signature '%.*s' is not a method descriptor; ignored",
                     (int)(j->signature.n < 60 ? j->signature.n : 60), j->signature.p);
    }
}

/* The member lines of class c, in file order. */
static int parse_block(tci_deobf *m, tci_diag *d, uint32_t ci, dblock *b)
{
    const dclass *c = &m->classes[ci];
    b->n = 0;
    b->file = (tci_span){NULL, 0};
    b->synthesized = false;
    size_t pos = c->body;
    uint64_t no = c->line;
    touch(m, c->end - pos + 4096);
    int64_t last = -1; /* the member line directly above (member-level information) */
    tci_line line;
    while (tci_next_line(m->text, c->end, &pos, &line)) {
        uint64_t at = line.off;
        no++;
        tci_span s = tci_span_trim((tci_span){line.p, line.n});
        if (!s.n)
            continue;
        jinfo j;
        if (s.p[0] == '#') {
            if (info_line(s, &j))
                block_info(m, d, c, b, last, &j, at, no);
            continue;
        }
        dmember mb;
        bool method;
        int rc = member_line(m, d, s, at, no, &mb, &method);
        if (rc != TC_OK)
            return rc;
        if (!method) {
            last = -1;
            continue;
        }
        if (tci_grow((void **)&b->mem, &b->cap, b->n, sizeof *b->mem) != 0)
            return nomem(d);
        b->mem[b->n] = mb;
        last = b->n++;
    }
    return TC_OK;
}

/* Where the sourceFile of another class (an inlined method's) is: its block's first comment lines. */
static tci_span class_file(tci_deobf *m, uint32_t ci)
{
    const dclass *c = &m->classes[ci];
    touch(m, 4096);
    tci_line line;
    for (size_t pos = c->body; tci_next_line(m->text, c->end, &pos, &line);) {
        tci_span s = tci_span_trim((tci_span){line.p, line.n});
        jinfo j;
        if (!s.n)
            continue;
        if (s.p[0] != '#')
            break; /* class-level information comes before the members */
        if (info_line(s, &j) && tci_span_is(j.id, "sourceFile"))
            return j.file;
    }
    return (tci_span){NULL, 0};
}

static const struct {
    const char *java;
    char code;
} primitives[] = {{"boolean", 'Z'}, {"byte", 'B'}, {"char", 'C'}, {"short", 'S'}, {"int", 'I'},
                  {"long", 'J'},    {"float", 'F'}, {"double", 'D'}, {"void", 'V'}};

/* Java type -> descriptor into b; rename: class names through original -> obfuscated (§7.4 rule 2). */
static void java_to_desc(tci_deobf *m, dbuf *b, tci_span type, bool rename)
{
    tci_span t = tci_span_trim(type);
    while (t.n >= 2 && t.p[t.n - 2] == '[' && t.p[t.n - 1] == ']') {
        put_ch(b, '[');
        t.n -= 2;
        t = tci_span_trim(t);
    }
    for (size_t i = 0; i < sizeof primitives / sizeof *primitives; i++)
        if (tci_span_is(t, primitives[i].java)) {
            put_ch(b, primitives[i].code);
            return;
        }
    if (rename) {
        uint32_t ci = find_orig(m, t);
        if (ci != TCI_NONE && !m->classes[ci].removed)
            t = obf_name(m, ci);
    }
    put_ch(b, 'L');
    for (size_t i = 0; i < t.n; i++)
        put_ch(b, t.p[i] == '.' ? '/' : t.p[i]);
    put_ch(b, ';');
}

/* Each type of a Java parameter list, in turn. */
static bool next_arg(tci_span *rest, tci_span *arg)
{
    tci_span s = tci_span_trim(*rest);
    if (!s.n)
        return false;
    const char *comma = memchr(s.p, ',', s.n);
    *arg = tci_span_trim((tci_span){s.p, comma ? (size_t)(comma - s.p) : s.n});
    *rest = comma ? (tci_span){comma + 1, (size_t)(s.p + s.n - comma - 1)} : (tci_span){NULL, 0};
    return true;
}

/* "(args)ret" as a descriptor. */
static void sig_to_desc(tci_deobf *m, dbuf *b, tci_span ret, tci_span args, bool rename)
{
    put_ch(b, '(');
    tci_span a, rest = args;
    while (next_arg(&rest, &a))
        java_to_desc(m, b, a, rename);
    put_ch(b, ')');
    java_to_desc(m, b, ret, rename);
}

/* A trace descriptor with each obfuscated class renamed (§7.6); '.' in L…; read as '/'.
 * One that is not a descriptor (a trace can name anything) is kept as it is. */
static void rename_desc(tci_deobf *m, dbuf *b, tci_span d)
{
    if (!desc_valid(d, NULL)) {
        put_span(b, d);
        return;
    }
    for (size_t i = 0; i < d.n;) {
        if (d.p[i] != 'L') {
            put_ch(b, d.p[i++]);
            continue;
        }
        const char *semi = memchr(d.p + i, ';', d.n - i);
        tci_span name = {d.p + i + 1, (size_t)(semi - d.p - i - 1)};
        uint32_t ci = find_obf(m, name);
        tci_span to = ci != TCI_NONE ? orig_name(m, ci) : name;
        put_ch(b, 'L');
        for (size_t k = 0; k < to.n; k++)
            put_ch(b, to.p[k] == '.' ? '/' : to.p[k]);
        put_ch(b, ';');
        i = (size_t)(semi - d.p) + 1;
    }
}

/* A Java type name with an obfuscated class renamed ("a.b[]" -> "com.x.User[]"). */
static void rename_java(tci_deobf *m, dbuf *b, tci_span type)
{
    tci_span t = tci_span_trim(type), base = t;
    while (base.n >= 2 && base.p[base.n - 2] == '[' && base.p[base.n - 1] == ']')
        base.n -= 2;
    base = tci_span_trim(base);
    uint32_t ci = find_obf(m, base);
    put_span(b, ci != TCI_NONE ? orig_name(m, ci) : base);
    put(b, base.p + base.n, (size_t)(t.p + t.n - base.p - base.n));
}

/* ---- the trace's side: which methods can be renamed ------------------------------ */

enum form {
    FORM_ART,   /* a method of the table: class, name, descriptor, file */
    FORM_DEX,   /* a name "pkg.C.m: (La/b;)V" (our timelines, Rhea's methodMapping.txt) */
    FORM_JAVA,  /* a name "pkg.C.m: (a.b, int)void" (Rhea's sampling mapping) */
    FORM_BARE   /* a name "pkg.C.m" (systrace, Chrome JSON slices) */
};

typedef struct item {
    uint32_t method;   /* index in the trace's table */
    uint32_t cls;      /* class of the mapping, TCI_NONE: not in it */
    uint8_t form;
    tci_span c, n, s;      /* class, method name, signature ("" when none) */
} item;

/* A Java identifier path segment (R8 names, Kotlin's mangled '-', '$'; UTF-8 letters). */
static bool segment_ok(tci_span s)
{
    if (!s.n || tci_is_digit(s.p[0]))
        return false;
    if (tci_span_is(s, "<init>") || tci_span_is(s, "<clinit>"))
        return true;
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (!(c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || tci_is_digit((char)c) || c == '_' ||
              c == '$' || c == '-'))
            return false;
    }
    return true;
}

/* "a.b.C.m": class "a.b.C", method "m"; every segment a Java name. */
static bool qualified(tci_span s, tci_span *cls, tci_span *name)
{
    const char *dot = s.n ? tci_memrchr(s.p, '.', s.n) : NULL;
    if (!dot)
        return false;
    *cls = (tci_span){s.p, (size_t)(dot - s.p)};
    *name = (tci_span){dot + 1, (size_t)(s.p + s.n - dot - 1)};
    if (!segment_ok(*name))
        return false;
    for (const char *p = cls->p, *e = cls->p + cls->n; p <= e;) {
        const char *d2 = memchr(p, '.', (size_t)(e - p));
        const char *end = d2 ? d2 : e;
        tci_span seg = {p, (size_t)(end - p)};
        if (!segment_ok(seg) || tci_span_is(seg, "<init>") || tci_span_is(seg, "<clinit>"))
            return false;
        p = end + 1;
    }
    return true;
}

/* A Java type name ("int", "a.b.C$D[][]"). */
static bool java_type_ok(tci_span t)
{
    t = tci_span_trim(t);
    while (t.n >= 2 && t.p[t.n - 2] == '[' && t.p[t.n - 1] == ']')
        t.n -= 2;
    tci_span c, n;
    return segment_ok(t) || qualified(t, &c, &n);
}

/* "(a.b, int)void" as Rhea's sampling mapping writes PrettyMethod. */
static bool java_sig_ok(tci_span s)
{
    if (s.n < 3 || s.p[0] != '(')
        return false;
    const char *close = memchr(s.p, ')', s.n);
    if (!close || !java_type_ok((tci_span){close + 1, (size_t)(s.p + s.n - close - 1)}))
        return false;
    tci_span a, rest = {s.p + 1, (size_t)(close - s.p - 1)};
    while (next_arg(&rest, &a))
        if (!java_type_ok(a))
            return false;
    return true;
}

/* Whether a descriptor of a Rhea mapping ("(Landroid.os.Message;)V") is one, '.' read as '/'. */
static bool dex_sig_ok(tci_span s, uint32_t *params) { return desc_valid(s, params); }

/* The item of method i, or false when it is no method name. */
static bool make_item(const tci_trace *t, uint32_t i, item *it)
{
    const tci_method *me = &t->methods[i];
    memset(it, 0, sizeof *it);
    it->method = i;
    it->cls = TCI_NONE;
    if (!me->defined)
        return false;
    if (!me->plain_name) {
        if (!me->cls || !me->name)
            return false;
        it->form = FORM_ART;
        it->c = (tci_span){me->cls, strlen(me->cls)};
        it->n = (tci_span){me->name, strlen(me->name)};
        it->s = (tci_span){me->sig ? me->sig : "", me->sig ? strlen(me->sig) : 0};
        return true;
    }
    tci_span all = {me->name, strlen(me->name)};
    const char *sig = tci_memmem(all.p, all.n, ": (", 3);
    tci_span head = sig ? (tci_span){all.p, (size_t)(sig - all.p)} : all;
    if (!qualified(head, &it->c, &it->n))
        return false;
    if (!sig) {
        it->form = FORM_BARE;
        return true;
    }
    it->s = (tci_span){sig + 2, (size_t)(all.p + all.n - sig - 2)};
    if (dex_sig_ok(it->s, NULL))
        it->form = FORM_DEX;
    else if (java_sig_ok(it->s))
        it->form = FORM_JAVA;
    else
        return false;
    return true;
}

/* ---- candidates of one class (§7.3-7.5) ----------------------------------------- */

typedef struct dcand {
    tci_span newname;
    tci_span cls, name;         /* the original method: class (qualifier or the block's) and name */
    const dmember *outer;   /* its outermost line */
    const char *res;        /* residual descriptor (in the apply's scratch) */
    size_t res_off, res_len;
    uint32_t params;
} dcand;

/* Candidates in order of (new name, original signature): equal ones are one member (§3.4). */
static int cand_sig_cmp(const void *pa, const void *pb)
{
    const dcand *a = pa, *b = pb;
    int c;
    if ((c = span_cmp(a->newname, b->newname)) || (c = span_cmp(a->cls, b->cls)) ||
        (c = span_cmp(a->name, b->name)) || (c = span_cmp(a->outer->ret, b->outer->ret)))
        return c;
    /* parameter lists compare without their spaces ("int, int" is "int,int") */
    tci_span x = a->outer->args, y = b->outer->args;
    size_t i = 0, j = 0;
    for (;;) {
        while (i < x.n && tci_is_space(x.p[i]))
            i++;
        while (j < y.n && tci_is_space(y.p[j]))
            j++;
        if (i == x.n || j == y.n)
            return (i < x.n) - (j < y.n);
        if (x.p[i] != y.p[j])
            return (unsigned char)x.p[i] < (unsigned char)y.p[j] ? -1 : 1;
        i++, j++;
    }
}

static int cand_res_cmp(const void *pa, const void *pb)
{
    const dcand *a = pa, *b = pb;
    int c = span_cmp(a->newname, b->newname);
    return c ? c : span_cmp((tci_span){a->res, a->res_len}, (tci_span){b->res, b->res_len});
}

/* A resolved original ("a | b" alternatives are pairs of these). */
typedef struct alt {
    tci_span cls, name;
} alt;

static int alt_cmp(const void *pa, const void *pb)
{
    const alt *a = pa, *b = pb;
    int c = span_cmp(a->cls, b->cls);
    return c ? c : span_cmp(a->name, b->name);
}

/* The state of one apply: scratch buffers reused from class to class. */
typedef struct applier {
    tci_deobf *m;
    tci_trace *t;
    tci_diag *d;
    dblock blk;
    dcand *cands;
    uint32_t n_cands, cap_cands;
    dbuf res;               /* residual descriptors of the class's candidates */
    dbuf out, tmp;          /* names being built */
    alt *alts;
    size_t cap_alts;
    tci_idmap memo;         /* (first candidate << 32 | parameter count) -> memo entry: fallbacks are decided once */
    struct memo { uint32_t pick; size_t amb_off, amb_len; } *memos;
    uint32_t n_memos, cap_memos;
    dbuf amb;               /* ambiguous texts of the memo */
    uint64_t classes, mapped, unmapped, fallback, ambiguous;
    char first_fallback[160], first_ambiguous[200];
} applier;

static int build_candidates(applier *a, uint32_t ci)
{
    tci_deobf *m = a->m;
    dblock *b = &a->blk;
    tci_span own = orig_name(m, ci);
    a->n_cands = 0;
    for (uint32_t i = 0; i < b->n;) {
        uint32_t j = i; /* an inline group: one minified range, one new name (§3.4) */
        while (j + 1 < b->n && b->mem[i].has_min && b->mem[j + 1].has_min && b->mem[j + 1].min_a == b->mem[i].min_a &&
               b->mem[j + 1].min_b == b->mem[i].min_b && tci_span_eq(b->mem[j + 1].newname, b->mem[i].newname))
            j++;
        const dmember *o = &b->mem[j]; /* the outermost line names the residual method */
        if (tci_grow((void **)&a->cands, &a->cap_cands, a->n_cands, sizeof *a->cands) != 0)
            return nomem(a->d);
        a->cands[a->n_cands++] = (dcand){.newname = o->newname, .cls = o->qual.n ? o->qual : own, .name = o->name,
                                         .outer = o};
        i = j + 1;
    }
    if (a->n_cands > 1)
        qsort(a->cands, a->n_cands, sizeof *a->cands, cand_sig_cmp);
    uint32_t w = 0; /* groups with one outermost signature are one member; its residual signature is the first given */
    for (uint32_t i = 0; i < a->n_cands; i++) {
        if (w && !cand_sig_cmp(&a->cands[w - 1], &a->cands[i])) {
            if (!a->cands[w - 1].outer->residual.n && a->cands[i].outer->residual.n)
                a->cands[w - 1].outer = a->cands[i].outer;
            continue;
        }
        a->cands[w++] = a->cands[i];
    }
    a->n_cands = w;
    a->res.n = 0;
    for (uint32_t i = 0; i < a->n_cands; i++) {
        dcand *c = &a->cands[i];
        c->res_off = a->res.n;
        tci_span r = c->outer->residual;
        uint32_t params;
        if (r.n && desc_valid(r, &params)) {
            put_span(&a->res, r);
        } else {
            sig_to_desc(m, &a->res, c->outer->ret, c->outer->args, true);
            tci_span made = {a->res.p ? a->res.p + c->res_off : "", a->res.n - c->res_off};
            if (!desc_valid(made, &params))
                params = UINT32_MAX; /* a type the descriptor grammar cannot hold: never equal to a trace's */
        }
        c->res_len = a->res.n - c->res_off;
        c->params = params;
    }
    if (a->res.oom)
        return nomem(a->d);
    for (uint32_t i = 0; i < a->n_cands; i++)
        a->cands[i].res = a->res.p ? a->res.p + a->cands[i].res_off : "";
    if (a->n_cands > 1)
        qsort(a->cands, a->n_cands, sizeof *a->cands, cand_res_cmp);
    tci_idmap_free(&a->memo);
    a->n_memos = 0;
    a->amb.n = 0;
    return TC_OK;
}

/* The candidates named newname: [*lo, *hi). */
static void name_range(const applier *a, tci_span newname, uint32_t *lo, uint32_t *hi)
{
    uint32_t l = 0, h = a->n_cands;
    while (l < h) {
        uint32_t mid = l + (h - l) / 2;
        if (span_cmp(a->cands[mid].newname, newname) < 0)
            l = mid + 1;
        else
            h = mid;
    }
    *lo = l;
    h = a->n_cands;
    while (l < h) {
        uint32_t mid = l + (h - l) / 2;
        if (span_cmp(a->cands[mid].newname, newname) <= 0)
            l = mid + 1;
        else
            h = mid;
    }
    *hi = l;
}

/* Within [lo, hi), the candidates whose residual descriptor is d. */
static void desc_range(const applier *a, tci_span d, uint32_t lo, uint32_t hi, uint32_t *first, uint32_t *end)
{
    uint32_t l = lo, h = hi;
    while (l < h) {
        uint32_t mid = l + (h - l) / 2;
        if (span_cmp((tci_span){a->cands[mid].res, a->cands[mid].res_len}, d) < 0)
            l = mid + 1;
        else
            h = mid;
    }
    *first = l;
    h = hi;
    while (l < h) {
        uint32_t mid = l + (h - l) / 2;
        if (span_cmp((tci_span){a->cands[mid].res, a->cands[mid].res_len}, d) <= 0)
            l = mid + 1;
        else
            h = mid;
    }
    *end = l;
}

/*
 * The candidates of [lo, hi) that survive (parameter count params, or all
 * when none has it; UINT32_MAX: all): one original name -> its candidate in
 * *pick; several -> "a.B.x | a.B.y" (sorted, at most MAX_SHOWN) in the memo.
 * Decided once per (range, params): a trace with many methods of one name
 * costs one pass over their candidates.
 */
static int decide(applier *a, uint32_t lo, uint32_t hi, uint32_t params, bool exact, const struct memo **out)
{
    uint64_t key = (uint64_t)lo << 32 | (exact ? 0x80000000u : 0) | (params > 0xFFFF ? 0xFFFF : params);
    uint32_t mi = tci_idmap_get(&a->memo, key);
    if (mi != TCI_NONE) {
        *out = &a->memos[mi];
        return TC_OK;
    }
    bool tier = false;
    if (params != UINT32_MAX)
        for (uint32_t i = lo; i < hi && !tier; i++)
            tier = a->cands[i].params == params;
    size_t n = 0;
    if (hi - lo > a->cap_alts) {
        alt *p = tci_realloc_array(a->alts, hi - lo, sizeof *p);
        if (!p)
            return nomem(a->d);
        a->alts = p;
        a->cap_alts = hi - lo;
    }
    for (uint32_t i = lo; i < hi; i++)
        if (!tier || a->cands[i].params == params)
            a->alts[n++] = (alt){a->cands[i].cls, a->cands[i].name};
    qsort(a->alts, n, sizeof *a->alts, alt_cmp);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || alt_cmp(&a->alts[i - 1], &a->alts[i]))
            a->alts[distinct++] = a->alts[i];
    if (tci_grow((void **)&a->memos, &a->cap_memos, a->n_memos, sizeof *a->memos) != 0 ||
        tci_idmap_put(&a->memo, key, a->n_memos) != 0)
        return nomem(a->d);
    struct memo *me = &a->memos[a->n_memos++];
    me->pick = TCI_NONE;
    me->amb_off = a->amb.n;
    if (distinct == 1) {
        for (uint32_t i = lo; i < hi && me->pick == TCI_NONE; i++)
            if (tci_span_eq(a->cands[i].cls, a->alts[0].cls) && tci_span_eq(a->cands[i].name, a->alts[0].name))
                me->pick = i;
    } else {
        for (size_t i = 0; i < distinct && i < MAX_SHOWN; i++) {
            if (i)
                put_lit(&a->amb, " | ");
            put_span(&a->amb, a->alts[i].cls);
            put_ch(&a->amb, '.');
            put_span(&a->amb, a->alts[i].name);
        }
        if (distinct > MAX_SHOWN) {
            char more[48];
            put(&a->amb, more, (size_t)snprintf(more, sizeof more, " | (%zu more)", distinct - MAX_SHOWN));
        }
    }
    me->amb_len = a->amb.n - me->amb_off;
    if (a->amb.oom)
        return nomem(a->d);
    *out = me;
    return TC_OK;
}

/* ---- results into the trace ------------------------------------------------------ */

static const char *keep(applier *a, const dbuf *b)
{
    return tci_arena_strndup(&a->t->arena, b->p ? b->p : "", b->n);
}

/* §7.7: the result class's sourceFile, else retrace's inference from its outermost class name. */
static const char *result_file(applier *a, tci_span cls, uint32_t block_ci, const char *trace_file)
{
    tci_deobf *m = a->m;
    if (trace_file && !strcmp(trace_file, "Native Method"))
        return trace_file;
    tci_span f = {NULL, 0};
    if (tci_span_eq(cls, orig_name(m, block_ci))) {
        f = a->blk.file;
    } else {
        uint32_t ci = find_orig(m, cls);
        if (ci != TCI_NONE)
            f = class_file(m, ci);
    }
    a->tmp.n = 0;
    if (f.n) {
        put_span(&a->tmp, f);
    } else {
        const char *dot = cls.n ? tci_memrchr(cls.p, '.', cls.n) : NULL;
        tci_span simple = dot ? (tci_span){dot + 1, (size_t)(cls.p + cls.n - dot - 1)} : cls;
        const char *dollar = memchr(simple.p, '$', simple.n);
        if (dollar && dollar > simple.p)
            simple.n = (size_t)(dollar - simple.p);
        size_t tl = trace_file ? strlen(trace_file) : 0;
        bool kt = simple.n > 2 && simple.p[simple.n - 2] == 'K' && simple.p[simple.n - 1] == 't';
        put(&a->tmp, simple.p, simple.n - (kt ? 2 : 0));
        put_lit(&a->tmp, kt || (tl > 3 && !strcmp(trace_file + tl - 3, ".kt")) ? ".kt" : ".java");
    }
    return keep(a, &a->tmp);
}

/* What one trace method resolves to. */
typedef struct result {
    const dcand *cand;      /* a single original (exact, or the fallback's one name) */
    bool exact;             /* cand's original descriptor is the method's */
    tci_span amb;               /* several originals: "a.B.x | a.B.y" */
} result;

/* Writes the original descriptor (exact) or the trace's renamed (else) as the form shows it. */
static void put_sig(applier *a, dbuf *b, const item *it, const result *r)
{
    if (!it->s.n)
        return;
    if (it->form == FORM_JAVA) { /* PrettyMethod's "(a.b.C, int)void" */
        const char *close = memchr(it->s.p, ')', it->s.n);
        tci_span rest = r->exact ? r->cand->outer->args : (tci_span){it->s.p + 1, (size_t)(close - it->s.p - 1)}, x;
        put_ch(b, '(');
        for (bool first = true; next_arg(&rest, &x); first = false) {
            if (!first)
                put_lit(b, ", ");
            if (r->exact)
                put_span(b, x);
            else
                rename_java(a->m, b, x);
        }
        put_ch(b, ')');
        if (r->exact)
            put_span(b, tci_span_trim(r->cand->outer->ret));
        else
            rename_java(a->m, b, (tci_span){close + 1, (size_t)(it->s.p + it->s.n - close - 1)});
        return;
    }
    if (r->exact)
        sig_to_desc(a->m, b, r->cand->outer->ret, r->cand->outer->args, false);
    else
        rename_desc(a->m, b, it->s);
}

/* The renamed method into the trace: an ART method's fields, or the shown names of a text name. */
static int write_result(applier *a, const item *it, uint32_t ci, const result *r)
{
    tci_method *me = &a->t->methods[it->method];
    tci_span cls = r->cand ? r->cand->cls : ci != TCI_NONE ? orig_name(a->m, ci) : it->c;
    tci_span name = r->cand ? r->cand->name : it->n;
    dbuf *b = &a->out;
    if (it->form == FORM_ART && !r->amb.p) {
        const char *file = ci == TCI_NONE ? me->file : result_file(a, cls, ci, me->file);
        b->n = 0;
        put_sig(a, b, it, r);
        const char *sig = keep(a, b);
        char *c = tci_arena_strndup(&a->t->arena, cls.p, cls.n), *n = tci_arena_strndup(&a->t->arena, name.p, name.n);
        if (!sig || !c || !n || (ci != TCI_NONE && !file) || b->oom)
            return nomem(a->d);
        for (char *p = c; *p; p++) /* the table's classes are dotted */
            if (*p == '/')
                *p = '.';
        me->cls = c, me->name = n, me->sig = sig, me->file = file;
        return TC_OK;
    }
    b->n = 0; /* a text: "cls.name[: sig]" shown; an ambiguous method likewise */
    if (r->amb.p) {
        put_span(b, r->amb);
    } else {
        put_span(b, cls);
        put_ch(b, '.');
        put_span(b, name);
    }
    size_t short_len = b->n;
    if (it->s.n) {
        put_lit(b, ": ");
        put_sig(a, b, it, r);
    }
    if (b->oom)
        return nomem(a->d);
    char *full = tci_arena_strndup(&a->t->arena, b->p, b->n), *shrt = full ? tci_arena_strndup(&a->t->arena, b->p, short_len) : NULL;
    if (!shrt)
        return nomem(a->d);
    me->full_name = full;
    me->short_name = shrt;
    if (it->form == FORM_ART && ci != TCI_NONE && !(me->file = result_file(a, cls, ci, me->file)))
        return nomem(a->d);
    return TC_OK;
}

static void note(char *slot, size_t len, const item *it)
{
    if (!slot[0])
        snprintf(slot, len, "%.*s.%.*s%s%.*s", (int)(it->c.n < 80 ? it->c.n : 80), it->c.p,
                 (int)(it->n.n < 40 ? it->n.n : 40), it->n.p, it->s.n ? " " : "", (int)(it->s.n < 40 ? it->s.n : 40),
                 it->s.p);
}

/* The trace's descriptor of an item, as a descriptor over obfuscated names (Java forms converted). */
static bool item_desc(applier *a, const item *it, tci_span *d, uint32_t *params)
{
    if (!it->s.n)
        return false;
    a->tmp.n = 0;
    if (it->form == FORM_JAVA) {
        const char *close = memchr(it->s.p, ')', it->s.n);
        sig_to_desc(a->m, &a->tmp, (tci_span){close + 1, (size_t)(it->s.p + it->s.n - close - 1)},
                    (tci_span){it->s.p + 1, (size_t)(close - it->s.p - 1)}, false);
    } else {
        for (size_t i = 0; i < it->s.n; i++) /* Rhea writes L…; with dots */
            put_ch(&a->tmp, it->s.p[i] == '.' ? '/' : it->s.p[i]);
    }
    *d = (tci_span){a->tmp.p ? a->tmp.p : "", a->tmp.n};
    return !a->tmp.oom && desc_valid(*d, params);
}

/* One method of a mapped class (its block parsed, candidates built). */
static int resolve(applier *a, const item *it, uint32_t ci)
{
    uint32_t lo, hi;
    name_range(a, it->n, &lo, &hi);
    result r = {NULL, false, {NULL, 0}};
    a->mapped++;
    if (lo == hi) /* not renamed: only the class (§7.3) */
        return write_result(a, it, ci, &r);
    tci_span d;
    uint32_t params = UINT32_MAX;
    bool has_desc = item_desc(a, it, &d, &params);
    const struct memo *mo = NULL;
    int rc;
    if (has_desc) {
        uint32_t first, end;
        desc_range(a, d, lo, hi, &first, &end);
        if (end - first == 1) {
            r.cand = &a->cands[first];
            r.exact = true;
            return write_result(a, it, ci, &r);
        }
        if (end - first > 1) { /* a valid map never has two: shown as alternatives */
            if ((rc = decide(a, first, end, UINT32_MAX, true, &mo)) != TC_OK)
                return rc;
            a->ambiguous++;
            note(a->first_ambiguous, sizeof a->first_ambiguous, it);
            a->mapped--;
            if (mo->pick != TCI_NONE) {
                r.cand = &a->cands[mo->pick];
                r.exact = true;
            } else {
                r.amb = (tci_span){a->amb.p + mo->amb_off, mo->amb_len};
            }
            return write_result(a, it, ci, &r);
        }
    }
    /* §7.5 fallback: the same parameter count, else all; one name is enough */
    if ((rc = decide(a, lo, hi, has_desc ? params : UINT32_MAX, false, &mo)) != TC_OK)
        return rc;
    if (mo->pick != TCI_NONE) {
        r.cand = &a->cands[mo->pick];
        if (has_desc || it->s.n) {
            a->fallback++;
            note(a->first_fallback, sizeof a->first_fallback, it);
        }
    } else {
        r.amb = (tci_span){a->amb.p + mo->amb_off, mo->amb_len};
        a->ambiguous++;
        a->mapped--;
        note(a->first_ambiguous, sizeof a->first_ambiguous, it);
    }
    return write_result(a, it, ci, &r);
}

/* ---- apply -------------------------------------------------------------------- */

/* Items of one class together; a class's methods in table order. */
static int item_cmp(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    int c = a->cls == TCI_NONE ? span_cmp(a->c, b->c) : 0;
    return c ? c : (a->method > b->method) - (a->method < b->method);
}

/* A class name as R8 writes them: short segments ("a.b.c", "b.c$a", "A"). */
static bool looks_obfuscated(tci_span c)
{
    size_t seg = 0;
    for (size_t i = 0; i <= c.n; i++) {
        if (i == c.n || c.p[i] == '.' || c.p[i] == '$') {
            if (!seg || seg > 3)
                return false;
            seg = 0;
        } else {
            seg++;
        }
    }
    return true;
}

/* §7.10: a trace built with another mapping (r8-map-id-<X> source files, or few classes found). */
static void check_match(applier *a, const item *items, size_t n)
{
    tci_deobf *m = a->m;
    for (size_t i = 0; i < n && m->map_id.n; i++) {
        const char *f = items[i].form == FORM_ART ? a->t->methods[items[i].method].file : NULL;
        static const char pre[] = "r8-map-id-";
        if (!f || strncmp(f, pre, sizeof pre - 1))
            continue;
        const char *id = f + sizeof pre - 1;
        size_t k = strlen(id) < m->map_id.n ? strlen(id) : m->map_id.n;
        if (k && !memcmp(id, m->map_id.p, k))
            continue;
        tci_warn(a->d, TCI_FIG_DEOBF_MISMATCH, MOD, UINT64_MAX,
                 "the trace was built with the mapping %s (source file %s) but the mapping is %.*s: it belongs to "
                 "another build",
                 id, f, (int)(m->map_id.n < 80 ? m->map_id.n : 80), m->map_id.p);
        break;
    }
    uint64_t looking = 0, found = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && items[i].cls == items[i - 1].cls &&
            (items[i].cls != TCI_NONE || tci_span_eq(items[i].c, items[i - 1].c)))
            continue; /* one class once */
        if (!looks_obfuscated(items[i].c))
            continue;
        looking++;
        found += items[i].cls != TCI_NONE;
    }
    if (looking && found * 2 < looking)
        tci_warn(a->d, TCI_FIG_DEOBF_MISMATCH, MOD, UINT64_MAX,
                 "only %llu of the %llu obfuscated-looking classes of the trace are in the mapping %s: it does "
                 "not match the trace (another build?)",
                 (unsigned long long)found, (unsigned long long)looking, m->path);
}

static void report(applier *a)
{
    tci_diag *d = a->d;
    d->fig[TCI_FIG_DEOBF_CLASSES] += a->classes;
    d->fig[TCI_FIG_DEOBF_METHODS] += a->mapped;
    d->fig[TCI_FIG_DEOBF_UNMAPPED] += a->unmapped;
    if (a->ambiguous) {
        tci_warn(d, TCI_FIG_DEOBF_AMBIGUOUS, MOD, UINT64_MAX,
                 "%llu methods match several original methods of the mapping; shown as 'a | b' (the first: %s)",
                 (unsigned long long)a->ambiguous, a->first_ambiguous);
        tci_count(d, TCI_FIG_DEOBF_AMBIGUOUS, a->ambiguous - 1);
    }
    if (a->fallback) {
        tci_warn(d, TCI_FIG_DEOBF_FALLBACK, MOD, UINT64_MAX,
                 "%llu methods have no candidate with their descriptor in the mapping; named by their one "
                 "candidate name (the first: %s)",
                 (unsigned long long)a->fallback, a->first_fallback);
        tci_count(d, TCI_FIG_DEOBF_FALLBACK, a->fallback - 1);
    }
}

static void applier_free(applier *a)
{
    free(a->blk.mem);
    free(a->cands);
    free(a->res.p);
    free(a->out.p);
    free(a->tmp.p);
    free(a->amb.p);
    free(a->alts);
    free(a->memos);
    tci_idmap_free(&a->memo);
}

/* Every method of one mapped class: its block parsed once. */
static int apply_class(applier *a, const item *items, size_t n, uint32_t ci)
{
    const char *input = a->d->input;
    a->d->input = a->m->path; /* a bad member line is the mapping's */
    int rc = parse_block(a->m, a->d, ci, &a->blk);
    a->d->input = input;
    if (rc != TC_OK || (rc = build_candidates(a, ci)) != TC_OK)
        return rc;
    a->classes++;
    for (size_t i = 0; i < n && rc == TC_OK; i++)
        rc = resolve(a, &items[i], ci);
    return rc;
}

int tci_deobf_apply(tci_deobf *m, tci_trace *t, tci_diag *d)
{
    item *items = tci_calloc(t->n_methods, sizeof *items);
    if (!items)
        return nomem(d);
    size_t n = 0;
    for (uint32_t i = 0; i < t->n_methods; i++)
        if (make_item(t, i, &items[n]))
            n++;
    for (size_t i = 0; i < n; i++)
        items[i].cls = find_obf(m, items[i].c);
    qsort(items, n, sizeof *items, item_cmp);
    applier a = {.m = m, .t = t, .d = d};
    int rc = TC_OK;
    for (size_t i = 0, j; i < n && rc == TC_OK; i = j) {
        for (j = i + 1; j < n && items[j].cls == items[i].cls && items[i].cls != TCI_NONE; j++)
            ;
        if (items[i].cls != TCI_NONE) {
            rc = apply_class(&a, items + i, j - i, items[i].cls);
            continue;
        }
        /* not in the mapping: kept, the descriptor's classes renamed (§7.2) */
        a.unmapped++;
        result r = {NULL, false, {NULL, 0}};
        if (items[i].s.n) /* only the descriptor can change */
            rc = write_result(&a, &items[i], TCI_NONE, &r);
    }
    if (rc == TC_OK) {
        check_match(&a, items, n);
        report(&a);
    }
    rc = check_unchanged(m, d, rc);
    applier_free(&a);
    free(items);
    release_all(m);
    return rc;
}
