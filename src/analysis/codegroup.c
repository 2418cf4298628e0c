/*
 * codegroup.c - whose code a frame is (tc_codegroup.h has the rules): the
 * app's, the Android framework's, the Java/Kotlin runtime's or a third-party
 * library's, from the frame's name alone, so that every reader's names
 * (ART's methods, Rhea's and JSON's slices named after methods) are grouped
 * alike; the app's package (given, the process name, or inferred from the
 * method table); and whether the names look minified (the summary's hint,
 * tc_conv_hint_at). Everything here reads the tables once: nothing per event.
 */
#include "tc_base.h"
#include "tc_codegroup.h"
#include "tc_conv.h"
#include "tc_options.h"
#include "tc_trace.h"

#include <stdlib.h>

/* ---- names ----------------------------------------------------------------------------- */

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }

/* A byte of a Java (or Kotlin, or R8 synthetic: "-$$Lambda$", "get-impl") identifier. */
static bool ident_byte(unsigned char c)
{
    return is_lower(c) || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '$' || c == '-' || c >= 0x80;
}

static bool is_identifier(const char *s, size_t n)
{
    if (!n || is_digit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!ident_byte((unsigned char)s[i]))
            return false;
    return true;
}

/* SEG(.SEG)+ of identifiers; with method, the last may be <init> or <clinit>. */
static bool dotted_name(const char *s, size_t n, bool method)
{
    size_t segments = 0;
    for (size_t start = 0;; segments++) {
        const char *dot = memchr(s + start, '.', n - start);
        size_t end = dot ? (size_t)(dot - s) : n, len = end - start;
        bool ctor = method && !dot &&
                    ((len == 6 && !memcmp(s + start, "<init>", 6)) || (len == 8 && !memcmp(s + start, "<clinit>", 8)));
        if (!ctor && !is_identifier(s + start, len))
            return false;
        if (!dot)
            return segments + 1 >= 2;
        start = end + 1;
    }
}

/* The name starts with the segment(s) prefix, then a '.'. */
static bool under(const char *s, size_t n, const char *prefix, size_t k)
{
    return k && n > k && !memcmp(s, prefix, k) && s[k] == '.';
}

static bool under_any(const char *s, size_t n, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (under(s, n, *prefixes, strlen(*prefixes)))
            return true;
    return false;
}

static const char *const FRAMEWORK[] = {"android", "androidx", "com.android", NULL};
static const char *const RUNTIME[] = {"java", "javax", "kotlin", "dalvik", "libcore", "sun", NULL};

enum tci_code_group tci_code_group(const char *name, size_t len, const char *app_package)
{
    if (!dotted_name(name, len, true))
        return TCI_CODE_OTHER;
    if (app_package && under(name, len, app_package, strlen(app_package)))
        return TCI_CODE_APP;
    if (under_any(name, len, FRAMEWORK))
        return TCI_CODE_FRAMEWORK;
    if (under_any(name, len, RUNTIME))
        return TCI_CODE_RUNTIME;
    return TCI_CODE_LIBRARY;
}

const char *tci_code_group_label(enum tci_code_group g)
{
    static const char *const label[TCI_CODE__COUNT] = {
        [TCI_CODE_OTHER] = "not a Java method", [TCI_CODE_APP] = "app", [TCI_CODE_FRAMEWORK] = "Android framework",
        [TCI_CODE_RUNTIME] = "Java/Kotlin runtime", [TCI_CODE_LIBRARY] = "libraries"};
    return g < TCI_CODE__COUNT ? label[g] : "?";
}

const char *tci_app_source_label(enum tci_app_source s)
{
    switch (s) {
    case TCI_APP_GIVEN: return "given";
    case TCI_APP_PROCESS: return "process name";
    case TCI_APP_INFERRED: return "inferred";
    case TCI_APP_NONE: break;
    }
    return "none";
}

/* ---- the app's package ------------------------------------------------------------------ */

/* The length of the first `segments` segments of the package of a method name
 * "a.b.c.Class.method" (the package: all but the last two segments); 0: no package. */
static size_t package_prefix(const char *s, size_t n, unsigned segments)
{
    size_t dots = 0;
    for (size_t i = 0; i < n; i++)
        dots += s[i] == '.';
    if (dots < 2)
        return 0; /* "Class.method": the default package */
    size_t package_segments = dots - 1, want = package_segments < segments ? package_segments : segments, seen = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' && ++seen == want)
            return i;
    return 0;
}

typedef struct prefix_count {
    const char *s;
    size_t len;
    uint64_t count;
} prefix_count;

typedef struct prefix_tally {
    tci_idmap ids; /* hash of the text -> index */
    prefix_count *v;
    uint32_t n, cap;
} prefix_tally;


static int tally_add(prefix_tally *t, const char *s, size_t n)
{
    for (uint64_t seed = 0;; seed++) { /* a collision of two texts: try the next hash */
        uint64_t h = tci_text_hash(s, n, seed);
        uint32_t i = tci_idmap_get(&t->ids, h);
        if (i == TCI_NONE) {
            if (tci_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v) != 0 || tci_idmap_put(&t->ids, h, t->n) != 0)
                return TC_ERR_NOMEM;
            t->v[t->n++] = (prefix_count){s, n, 1};
            return TC_OK;
        }
        if (t->v[i].len == n && !memcmp(t->v[i].s, s, n)) {
            t->v[i].count++;
            return TC_OK;
        }
    }
}

/* The most common prefix of `segments` package segments among the library methods under
 * within (NULL: all); ties go to the first in table order. best->count 0: none. */
static int most_common(const tci_trace *t, unsigned segments, const prefix_count *within, prefix_count *best)
{
    prefix_tally tally = {0};
    int rc = TC_OK;
    *best = (prefix_count){NULL, 0, 0};
    for (uint32_t i = 0; i < t->n_methods && rc == TC_OK; i++) {
        const char *s = t->methods[i].short_name;
        size_t n = strlen(s);
        if (tci_code_group(s, n, NULL) != TCI_CODE_LIBRARY || (within && !under(s, n, within->s, within->len)))
            continue;
        size_t k = package_prefix(s, n, segments);
        if (k)
            rc = tally_add(&tally, s, k);
    }
    for (uint32_t i = 0; i < tally.n; i++)
        if (tally.v[i].count > best->count)
            *best = tally.v[i];
    tci_idmap_free(&tally.ids);
    free(tally.v);
    return rc;
}

static int infer_package(const tci_trace *t, tci_arena *a, tci_app_package *out)
{
    prefix_count two, three;
    int rc = most_common(t, 2, NULL, &two);
    if (rc != TC_OK || !two.count)
        return rc;
    if ((rc = most_common(t, 3, &two, &three)) != TC_OK)
        return rc;
    const prefix_count *pick = three.count * 2 > two.count ? &three : &two;
    if (!(out->name = tci_arena_strndup(a, pick->s, pick->len)))
        return TC_ERR_NOMEM;
    out->source = TCI_APP_INFERRED;
    return TC_OK;
}

/* Some Java method of the table lies under package p (its first n bytes). */
static bool has_code_under(const tci_trace *t, const char *p, size_t n)
{
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *s = t->methods[i].short_name;
        size_t k = s ? strlen(s) : 0;
        if (k && under(s, k, p, n) && tci_code_group(s, k, NULL) != TCI_CODE_OTHER)
            return true;
    }
    return false;
}

int tci_app_package_of(const tci_trace *t, const tci_options *o, tci_arena *a, tci_app_package *out)
{
    *out = (tci_app_package){NULL, TCI_APP_NONE};
    if (o->app_package && o->app_package[0]) {
        *out = (tci_app_package){o->app_package, TCI_APP_GIVEN};
        return TC_OK;
    }
    if (t->process_named && t->process_name) {
        const char *p = t->process_name, *colon = strchr(p, ':'); /* "com.example:sync", a service's process */
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        /* and some method is under it: not a name cut to the kernel's 15 bytes
         * ("ndroid.systemui") or a process whose code the trace does not show */
        if (dotted_name(p, n, false) && has_code_under(t, p, n)) {
            if (!(out->name = tci_arena_strndup(a, p, n)))
                return TC_ERR_NOMEM;
            out->source = TCI_APP_PROCESS;
            return TC_OK;
        }
    }
    return infer_package(t, a, out);
}

/* ---- minified names ------------------------------------------------------------------------ */

/* R8's and ProGuard's class names: one to three lowercase letters or digits, a letter first. */
static bool minified_part(const char *s, size_t n)
{
    if (n < 1 || n > 3 || !is_lower((unsigned char)s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!is_lower((unsigned char)s[i]) && !is_digit((unsigned char)s[i]))
            return false;
    return true;
}

/* The class's own name of "pkg.Class.method" ("a$b" of "x.a$b.c"): each '$' part that is not
 * empty or a number (an anonymous class) is minified, and there is one. */
static bool minified_class(const char *s, size_t n)
{
    const char *method_dot = NULL, *class_dot = NULL;
    for (size_t i = n; i-- > 0;)
        if (s[i] == '.') {
            if (!method_dot)
                method_dot = s + i;
            else {
                class_dot = s + i;
                break;
            }
        }
    if (!method_dot)
        return false;
    const char *c = class_dot ? class_dot + 1 : s, *end = method_dot;
    bool any = false;
    while (c <= end) {
        const char *dollar = memchr(c, '$', (size_t)(end - c));
        const char *part_end = dollar ? dollar : end;
        size_t len = (size_t)(part_end - c), digits = 0;
        while (digits < len && is_digit((unsigned char)c[digits]))
            digits++;
        if (len && digits < len) {
            if (!minified_part(c, len))
                return false;
            any = true;
        }
        c = part_end + 1;
    }
    return any;
}

bool tci_names_minified(const tci_trace *t)
{
    uint64_t renamable = 0, minified = 0;
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *s = t->methods[i].short_name;
        size_t n = s ? strlen(s) : 0;
        if (!n || tci_code_group(s, n, NULL) != TCI_CODE_LIBRARY)
            continue;
        renamable++;
        minified += minified_class(s, n);
    }
    return minified * 2 > renamable;
}

/* ---- the library's hints (traceconv.h) ------------------------------------------------------ */

const char *tc_conv_hint_at(const tc_conv *c, size_t index)
{
    if (!c || index > 0)
        return NULL;
    const tci_trace *t = tci_conv_trace_of(c);
    const tci_options *o = tci_conv_options(c);
    if (o->deobfuscate || !t->n_methods || !tci_names_minified(t))
        return NULL;
    return "most class names look minified (R8/ProGuard): --deobfuscate mapping.txt restores their source names";
}
