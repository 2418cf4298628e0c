/*
 * codegroup.c - whose code a frame is (tc_codegroup.h has the rules): the
 * app's, the Android framework's, the Java/Kotlin runtime's or a third-party
 * library's, from the frame's name alone, so that every reader's names
 * (ART's methods, Rhea's and JSON's slices named after methods) are grouped
 * alike; the app's package (given, the process name, or inferred from the
 * method table); and whether the names look minified (the summary's hint,
 * engine/conv.c's tc_conv_hint_at). Everything here reads the tables once: nothing per event.
 */
#include "tc_base.h"
#include "tc_codegroup.h"
#include "tc_options.h"
#include "tc_trace.h"

#include <limits.h>
#include <stdio.h>
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

/* The framework: the packages of the Android platform and its Jetpack libraries, known by
 * name, so that an app whose package merely starts with "android." (android.example.camera)
 * is not taken for it. The android.* list is the SDK's top-level packages and the hidden ones
 * that real traces show (android.ddm, android.internal, android.sysprop, android.icu). */
static const char *const FRAMEWORK[] = {
    "androidx", "android.support", "com.android.internal", "com.android.server", "com.android.org",
    "com.android.okhttp", "com.android.i18n", "com.android.icu", "com.android.art", "com.android.dex",
    "com.android.conscrypt", "com.android.layoutlib", "com.android.providers.settings",
    "android.accessibilityservice", "android.accounts", "android.adservices", "android.animation",
    "android.annotation", "android.app", "android.appwidget", "android.bluetooth", "android.companion",
    "android.content", "android.credentials", "android.database", "android.ddm", "android.drm",
    "android.gesture", "android.graphics", "android.hardware", "android.health", "android.icu",
    "android.inputmethodservice", "android.internal", "android.location", "android.media", "android.mtp",
    "android.net", "android.nfc", "android.opengl", "android.os", "android.permission", "android.print",
    "android.printservice", "android.provider", "android.renderscript", "android.sax", "android.se",
    "android.security", "android.service", "android.speech", "android.sysprop", "android.system",
    "android.telecom", "android.telephony", "android.test", "android.text", "android.tracing",
    "android.transition", "android.util", "android.view", "android.webkit", "android.widget",
    "android.window", "android.preference", "android.ranging", "android.uwb", NULL};
static const char *const RUNTIME[] = {"java", "javax", "kotlin", "dalvik", "libcore", "sun", "jdk", NULL};
/* Code that is neither the app nor the platform but ships inside apps (bundled libraries) or
 * on the device (OEM frameworks): never the app by time alone (real traces: an image pipeline
 * or an HTTP client outweighed the app's own code). Lifecycle evidence and the process name
 * still find an app among them (com.facebook.katana launches its own Activity). */
static const char *const KNOWN_LIBRARIES[] = {
    "com.facebook", "com.google.android.material", "com.google.android.gms", "com.google.android.exoplayer2",
    "com.google.android.datatransport", "com.google.android.play", "com.google.android.libraries", "com.google.firebase", "com.google.common",
    "com.google.gson", "com.google.protobuf", "com.google.errorprone", "com.google.crypto", "com.google.zxing",
    "com.google.thirdparty", "org.apache", "org.json", "org.chromium", "org.conscrypt", "org.xmlpull",
    "org.kxml2", "org.ccil", "org.jetbrains", "org.intellij", "org.reactivestreams", "org.greenrobot",
    "org.webrtc", "okhttp3", "okio", "retrofit2", "com.squareup", "io.reactivex", "io.grpc", "io.flutter",
    "io.realm", "io.sentry", "kotlinx", "dagger", "timber", "coil", "com.bumptech", "com.airbnb",
    "com.jakewharton", "com.fasterxml", "com.crashlytics", "com.appsflyer", "com.adjust", "com.braze",
    "com.unity3d", "com.tencent.mars", "com.tencent.mmkv", "leakcanary", "shark", "javassist",
    /* OEM code in the app's process */
    "com.samsung", "com.sec", "com.huawei", "com.hihonor", "com.miui", "com.xiaomi", "com.oplus",
    "com.coloros", "com.oppo", "com.vivo", "com.motorola", "com.qualcomm", "com.qti", "com.mediatek",
    "com.lge", "com.sonymobile", "com.asus", "com.oneplus", "com.transsion", "vendor", NULL};

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

/* ---- the app's package ------------------------------------------------------------------ */

/* The length of the first `segments` segments of the package of a method name
 * "a.b.c.Class.method" (the package: all but the last two segments; segments UINT_MAX: all of
 * it); 0: no package. */
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

/* Code the app's own may be: a Java method outside the platform and the runtime. With
 * known_libraries, also outside the libraries and OEM code that ship in apps. */
static bool app_like(const char *s, size_t n, bool known_libraries)
{
    return tci_code_group(s, n, NULL) == TCI_CODE_LIBRARY && !(known_libraries && under_any(s, n, KNOWN_LIBRARIES));
}

/* -- distinct prefixes, interned */

typedef struct prefix_count {
    const char *s;
    size_t len;
    uint64_t count;      /* methods under it (no call tree) */
    int64_t time;        /* inclusive ns under it, each stretch once (call tree) */
    uint32_t open;       /* frames under it on the walk's current path */
    bool known;          /* a known library (not the app by time alone) */
} prefix_count;

typedef struct prefix_tally {
    tci_idmap ids; /* hash of the text -> index */
    prefix_count *v;
    uint32_t n, cap;
} prefix_tally;

/* The index of text s[0..n) in t, added if new; TCI_NONE: no memory. */
static uint32_t tally_id(prefix_tally *t, const char *s, size_t n)
{
    for (uint64_t seed = 0;; seed++) { /* a collision of two texts: try the next hash */
        uint64_t h = tci_text_hash(s, n, seed);
        uint32_t i = tci_idmap_get(&t->ids, h);
        if (i == TCI_NONE) {
            if (tci_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v) != 0 || tci_idmap_put(&t->ids, h, t->n) != 0)
                return TCI_NONE;
            t->v[t->n] = (prefix_count){.s = s, .len = n};
            return t->n++;
        }
        if (t->v[i].len == n && !memcmp(t->v[i].s, s, n))
            return i;
    }
}

static void tally_free(prefix_tally *t)
{
    tci_idmap_free(&t->ids);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static bool two_segments(const prefix_count *c)
{
    const char *dot = memchr(c->s, '.', c->len);
    return dot && !memchr(dot + 1, '.', c->len - (size_t)(dot + 1 - c->s));
}

static uint64_t weight_of(const prefix_count *c, bool by_time)
{
    return by_time ? (uint64_t)(c->time > 0 ? c->time : 0) : c->count;
}

/* The most timed (or counted) two-segment prefix, a known library only when nothing else has
 * any; ties go to the first in table order. NULL: none. */
static const prefix_count *tally_best(const prefix_tally *t, bool by_time)
{
    const prefix_count *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++) /* pass 0 without the known libraries */
        for (uint32_t i = 0; i < t->n; i++) {
            const prefix_count *c = &t->v[i];
            if (!weight_of(c, by_time) || (pass == 0 && c->known) || !two_segments(c))
                continue;
            if (!best || weight_of(c, by_time) > weight_of(best, by_time))
                best = c;
        }
    return best;
}

/* -- per method: its two- and three-segment package prefixes (TCI_NONE: not app-like) */

typedef struct method_prefixes {
    prefix_tally tally;
    uint32_t *two, *three;
} method_prefixes;

static void prefixes_free(method_prefixes *mp)
{
    tally_free(&mp->tally);
    free(mp->two);
    free(mp->three);
}

static int prefixes_of(const tci_trace *t, method_prefixes *mp)
{
    memset(mp, 0, sizeof *mp);
    size_t n = t->n_methods ? t->n_methods : 1;
    if (!(mp->two = tci_malloc(n * sizeof *mp->two)) || !(mp->three = tci_malloc(n * sizeof *mp->three)))
        return TC_ERR_NOMEM;
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *s = t->methods[i].short_name;
        size_t len = s ? strlen(s) : 0, k2 = 0, k3 = 0;
        mp->two[i] = mp->three[i] = TCI_NONE;
        if (!len || !app_like(s, len, false) || !(k2 = package_prefix(s, len, 2)))
            continue;
        k3 = package_prefix(s, len, 3);
        bool known = under_any(s, len, KNOWN_LIBRARIES);
        if ((mp->two[i] = tally_id(&mp->tally, s, k2)) == TCI_NONE)
            return TC_ERR_NOMEM;
        mp->tally.v[mp->two[i]].count++;
        mp->tally.v[mp->two[i]].known = known;
        if (k3 == k2) /* a two-segment package: no narrower prefix */
            continue;
        if ((mp->three[i] = tally_id(&mp->tally, s, k3)) == TCI_NONE)
            return TC_ERR_NOMEM;
        mp->tally.v[mp->three[i]].count++;
        mp->tally.v[mp->three[i]].known = known;
    }
    return TC_OK;
}

/* -- inclusive time per prefix: a walk over the call tree that adds a frame's inclusive time
 * to its prefix when no frame under the same prefix is open above it (the app's code called
 * back from the framework is not counted twice) */

typedef struct time_walk {
    const tci_calltree *ct;
    method_prefixes *mp;
    bool cpu;
} time_walk;

static void time_prefix(time_walk *tw, uint32_t id, int64_t ns, int step)
{
    if (id == TCI_NONE)
        return;
    prefix_count *c = &tw->mp->tally.v[id];
    if (step > 0 && c->open++ == 0)
        c->time = tci_sum_add(c->time, ns);
    else if (step < 0)
        c->open--;
}

static void time_step(time_walk *tw, uint32_t node, int step)
{
    const tci_ctnode *nd = &tw->ct->nodes[node];
    if (nd->method == TCI_NONE || nd->method >= tw->ct->trace->n_methods)
        return;
    int64_t ns = tw->cpu ? nd->cpu_total : nd->wall_total;
    time_prefix(tw, tw->mp->two[nd->method], ns, step);
    time_prefix(tw, tw->mp->three[nd->method], ns, step);
}

static int time_enter(void *user, uint32_t node, uint32_t depth)
{
    (void)depth;
    time_step(user, node, +1);
    return TC_OK;
}

static void time_leave(void *user, uint32_t node, uint32_t depth)
{
    (void)depth;
    time_step(user, node, -1);
}

/* Every root's total: what the shares are of. */
static int64_t tree_total(const tci_calltree *ct, bool cpu)
{
    int64_t total = 0;
    for (uint32_t r = 0; r < ct->n_roots; r++) {
        const tci_ctnode *nd = &ct->nodes[ct->roots[r]];
        int64_t ns = cpu ? nd->cpu_total : nd->wall_total;
        total = tci_sum_add(total, ns);
    }
    return total;
}

static int prefixes_timed(const tci_calltree *ct, method_prefixes *mp, bool *cpu)
{
    *cpu = tree_total(ct, false) <= 0 && tree_total(ct, true) > 0; /* a thread-CPU-only tree */
    time_walk tw = {ct, mp, *cpu};
    tci_ctvisit v = {time_enter, time_leave, &tw};
    for (uint32_t r = 0; r < ct->n_roots; r++) {
        int rc = tci_calltree_walk(ct, ct->roots[r], &v);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* -- lifecycle evidence: the framework calls an app component's lifecycle method */

/* Framework methods that call into an app's Application, Activity, Service, provider or
 * fragment: class, then method names (a trailing '*': a prefix). The app's frame lies
 * directly under one of them. */
typedef struct fw_caller {
    const char *cls;
    const char *methods[12];
} fw_caller;
static const fw_caller FW_CALLERS[] = {
    {"android.app.Instrumentation", {"callActivityOn*", "callApplicationOnCreate", "newActivity", "newApplication"}},
    {"android.app.ActivityThread",
     {"handleBindApplication", "performLaunchActivity", "handleLaunchActivity", "handleCreateService",
      "handleResumeActivity", "performResumeActivity", "handleStartActivity", "handleBindService",
      "handleServiceArgs", "handleReceiver", "installProvider", "handleStopService"}},
    {"android.app.Activity", {"perform*", "attach"}},
    {"android.app.Application", {"attach"}},
    {"android.app.LoadedApk", {"makeApplication*"}},
    {"android.app.Service", {"attach"}},
    {"android.content.ContentProvider", {"attachInfo"}},
    {"android.content.ContextWrapper", {"attachBaseContext"}},
    {"android.app.Fragment", {"perform*"}},
    {"androidx.fragment.app.Fragment", {"perform*"}},
    {"androidx.fragment.app.FragmentStateManager", {"create*", "activityCreated", "start", "resume"}},
};

/* The lifecycle methods the framework calls on an app's components. */
static const char *const LIFECYCLE[] = {
    "onCreate", "onStart", "onResume", "onRestart", "onPause", "onStop", "onDestroy", "onPostCreate",
    "onPostResume", "onNewIntent", "attachBaseContext", "onCreateView", "onViewCreated", "onAttach",
    "onActivityCreated", "onStartCommand", "onBind", "onReceive", "onConfigurationChanged", NULL};

/* The last segment of a name and the rest: "a.b.C.m" -> class "a.b.C", method "m". */
static bool split_method(const char *s, size_t n, size_t *class_len)
{
    const char *dot = NULL;
    for (size_t i = n; i-- > 0 && !dot;)
        if (s[i] == '.')
            dot = s + i;
    if (!dot)
        return false;
    *class_len = (size_t)(dot - s);
    return true;
}

static bool name_is(const char *s, size_t n, const char *want)
{
    size_t k = strlen(want);
    if (k && want[k - 1] == '*')
        return n >= k - 1 && !memcmp(s, want, k - 1);
    return n == k && !memcmp(s, want, k);
}

/* Whether short name s is a framework method that calls into app components. */
static bool framework_caller(const char *s, size_t n)
{
    size_t cls;
    if (!split_method(s, n, &cls))
        return false;
    for (size_t i = 0; i < sizeof FW_CALLERS / sizeof *FW_CALLERS; i++) {
        const fw_caller *f = &FW_CALLERS[i];
        if (strlen(f->cls) != cls || memcmp(s, f->cls, cls))
            continue;
        for (size_t k = 0; k < sizeof f->methods / sizeof *f->methods && f->methods[k]; k++)
            if (name_is(s + cls + 1, n - cls - 1, f->methods[k]))
                return true;
    }
    return false;
}

static bool lifecycle_method(const char *s, size_t n)
{
    size_t cls;
    if (!split_method(s, n, &cls))
        return false;
    for (const char *const *l = LIFECYCLE; *l; l++)
        if (name_is(s + cls + 1, n - cls - 1, *l))
            return true;
    return false;
}

/* Application before the other components: the process exists for it (an Activity may be a
 * library's). */
static int caller_rank(const char *s, size_t n)
{
    static const char *const app_callers[] = {"android.app.Instrumentation.callApplicationOnCreate",
                                              "android.app.ActivityThread.handleBindApplication",
                                              "android.app.Application.attach", "android.app.LoadedApk.makeApplication",
                                              "android.app.Instrumentation.newApplication", NULL};
    for (const char *const *a = app_callers; *a; a++)
        if (name_is(s, n, *a) || (strlen(*a) <= n && !memcmp(s, *a, strlen(*a))))
            return 2;
    return 1;
}

typedef struct lifecycle_hit {
    uint32_t node;  /* the app's frame (TCI_NONE: none) */
    int rank;
    int64_t time;
} lifecycle_hit;

static const char *method_short(const tci_trace *t, uint32_t m)
{
    return m < t->n_methods && t->methods[m].short_name ? t->methods[m].short_name : "";
}

/* Per method, what the lifecycle evidence asks of it, worked out once (a tree has millions of
 * nodes, a trace thousands of methods). */
enum {
    LC_APP = 1,        /* a lifecycle method of a class in a package outside the platform and the runtime */
    LC_KNOWN = 2,      /* ... of a known bundled library's or OEM class */
    LC_CALLER = 4,     /* a framework method that calls app components */
    LC_APP_CALLER = 8  /* ... the Application's (its process exists for it) */
};

static uint8_t *lifecycle_kinds(const tci_trace *t)
{
    uint8_t *kind = tci_calloc(t->n_methods ? t->n_methods : 1, 1);
    for (uint32_t m = 0; kind && m < t->n_methods; m++) {
        const char *s = method_short(t, m);
        size_t n = strlen(s);
        if (lifecycle_method(s, n) && app_like(s, n, false) && package_prefix(s, n, UINT_MAX))
            kind[m] |= LC_APP | (under_any(s, n, KNOWN_LIBRARIES) ? LC_KNOWN : 0);
        if (framework_caller(s, n))
            kind[m] |= LC_CALLER | (caller_rank(s, n) == 2 ? LC_APP_CALLER : 0);
    }
    return kind;
}

/* The lifecycle frame of node i, or false: an app component's method directly under a framework caller. */
static bool lifecycle_node(const tci_calltree *ct, const uint8_t *kind, uint32_t i, uint8_t *caller)
{
    const tci_ctnode *nd = &ct->nodes[i];
    if (nd->method == TCI_NONE || nd->parent == TCI_NONE || nd->method >= ct->trace->n_methods)
        return false;
    uint32_t pm = ct->nodes[nd->parent].method;
    if (pm == TCI_NONE || pm >= ct->trace->n_methods || !(kind[nd->method] & LC_APP) || !(kind[pm] & LC_CALLER))
        return false;
    *caller = kind[pm];
    return true;
}

/* The app frame with the strongest evidence: its caller's rank, then its inclusive time. */
static lifecycle_hit lifecycle_best(const tci_calltree *ct, const uint8_t *kind)
{
    lifecycle_hit best = {TCI_NONE, 0, 0};
    uint8_t caller;
    for (uint32_t i = 0; i < ct->n_nodes; i++) {
        if (!lifecycle_node(ct, kind, i, &caller))
            continue;
        const tci_ctnode *nd = &ct->nodes[i];
        lifecycle_hit h = {i, (caller & LC_APP_CALLER ? 2 : 1) - (kind[nd->method] & LC_KNOWN ? 2 : 0), nd->wall_total};
        if (best.node == TCI_NONE || h.rank > best.rank || (h.rank == best.rank && h.time > best.time))
            best = h;
    }
    return best;
}

/* The segments that a and b (packages) share, as a length of a; 0 below two segments. */
static size_t common_package(const char *a, size_t an, const char *b, size_t bn)
{
    size_t common = 0, segments = 0;
    for (size_t i = 0; i <= an && i <= bn; i++) {
        bool end_a = i == an || a[i] == '.', end_b = i == bn || b[i] == '.';
        if (end_a != end_b)
            break;
        if (end_a) {
            segments++;
            common = i;
            if (i == an || i == bn)
                break;
        } else if (a[i] != b[i])
            break;
    }
    return segments >= 2 ? common : 0;
}

/* The app's package from the winning frame: its class's package, widened to what the other
 * lifecycle frames (not a known library's) share with it, two segments at least (ShopApp in
 * com.example.shop and MainActivity in com.example.shop.ui: com.example.shop). */
static size_t lifecycle_package(const tci_calltree *ct, const uint8_t *kind, const char *s, size_t k)
{
    uint8_t caller;
    for (uint32_t i = 0; i < ct->n_nodes; i++) {
        if (!lifecycle_node(ct, kind, i, &caller) || (kind[ct->nodes[i].method] & LC_KNOWN))
            continue;
        const char *o = method_short(ct->trace, ct->nodes[i].method);
        size_t c = common_package(s, k, o, package_prefix(o, strlen(o), UINT_MAX));
        if (c && c < k)
            k = c;
    }
    return k;
}

/* The number of segments of package s[0..k). */
static size_t segments_of(const char *s, size_t k)
{
    size_t n = k ? 1 : 0;
    for (size_t i = 0; i < k; i++)
        n += s[i] == '.';
    return n;
}

/* The app's package widened over the packages beside it: a lifecycle class in a subpackage
 * (com.example.android.displayingbitmaps.ui.ImageDetailActivity, the only lifecycle frame of
 * a real trace) belongs to an app whose other code lies next to it (...displayingbitmaps.util,
 * most of its time), which must not be painted as a library. One segment up at a time while
 * the parent has three segments at least (com.example is a company's, not an app's), holds
 * code outside the current package, and all of it is app-like: no platform, runtime or known
 * library under it (com.google.android holds gms). */
static size_t widen_to_siblings(const tci_trace *t, const char *s, size_t k)
{
    for (;;) {
        size_t parent = k;
        while (parent > 0 && s[parent - 1] != '.')
            parent--;
        if (parent-- == 0 || segments_of(s, parent) < 3)
            return k;
        bool beside = false;
        for (uint32_t i = 0; i < t->n_methods; i++) {
            const char *m = t->methods[i].short_name;
            size_t n = m ? strlen(m) : 0;
            if (!n || !under(m, n, s, parent) || under(m, n, s, k))
                continue;
            if (!app_like(m, n, true))
                return k; /* someone else's code under the parent: the app stops here */
            beside = true;
        }
        if (!beside)
            return k;
        k = parent;
    }
}

/* "MainActivity.onCreate": a name without its package. */
static const char *without_package(const char *s)
{
    size_t n = strlen(s), k = package_prefix(s, n, UINT_MAX);
    return k ? s + k + 1 : s;
}

static int app_from_lifecycle(const tci_calltree *ct, tci_arena *a, tci_app_package *out)
{
    uint8_t *kind = lifecycle_kinds(ct->trace);
    if (!kind)
        return TC_ERR_NOMEM;
    lifecycle_hit h = lifecycle_best(ct, kind);
    int rc = TC_OK;
    if (h.node != TCI_NONE) {
        const tci_trace *t = ct->trace;
        const char *s = method_short(t, ct->nodes[h.node].method);
        const char *p = method_short(t, ct->nodes[ct->nodes[h.node].parent].method);
        size_t k = lifecycle_package(ct, kind, s, package_prefix(s, strlen(s), UINT_MAX));
        k = widen_to_siblings(t, s, k);
        out->name = tci_arena_strndup(a, s, k);
        out->evidence = tci_arena_printf(a, "%s called by %s", without_package(s), without_package(p));
        out->source = TCI_APP_LIFECYCLE;
        rc = out->name && out->evidence ? TC_OK : TC_ERR_NOMEM;
    }
    free(kind);
    return rc;
}

/* -- the process name */

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

static int app_from_process(const tci_trace *t, tci_arena *a, tci_app_package *out)
{
    if (!t->process_named || !t->process_name)
        return TC_OK;
    const char *p = t->process_name, *colon = strchr(p, ':'); /* "com.example:sync", a service's process */
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    /* and some method is under it: not a name cut to the kernel's 15 bytes
     * ("ndroid.systemui") or a process whose code the trace does not show */
    if (!dotted_name(p, n, false) || !has_code_under(t, p, n))
        return TC_OK;
    if (!(out->name = tci_arena_strndup(a, p, n)))
        return TC_ERR_NOMEM;
    out->source = TCI_APP_PROCESS;
    out->evidence = "process name";
    return TC_OK;
}

/* -- inferred: the two-segment prefix with the most time (a tree) or methods (none), narrowed
 * to its three-segment prefix with three quarters of that at least */

static int64_t share_pct(int64_t part, int64_t total)
{
    return total > 0 ? (int64_t)((double)part * 100.0 / (double)total + 0.5) : 0;
}

static int app_inferred(const tci_calltree *ct, method_prefixes *mp, tci_arena *a, tci_app_package *out)
{
    bool by_time = ct != NULL, cpu = false;
    int rc = by_time ? prefixes_timed(ct, mp, &cpu) : TC_OK;
    if (rc != TC_OK)
        return rc;
    const prefix_count *two = tally_best(&mp->tally, by_time), *pick = two;
    if (!two)
        return TC_OK;
    /* narrowed among prefixes one segment longer */
    const prefix_count *three = NULL;
    for (uint32_t i = 0; i < mp->tally.n; i++) {
        const prefix_count *c = &mp->tally.v[i];
        if (c == two || !under(c->s, c->len, two->s, two->len) || memchr(c->s + two->len + 1, '.', c->len - two->len - 1))
            continue;
        if (!three || weight_of(c, by_time) > weight_of(three, by_time))
            three = c;
    }
    /* narrowed only when one subpackage is nearly all of it (com.example -> com.example.shop):
     * a company's code spread over several (com.yy.base 7%, com.yy.appbase 9%, com.yy.hiyo 1% of
     * a real trace) is all the app's, and half of it painted as a library misleads */
    if (three && weight_of(three, by_time) * 4 >= weight_of(two, by_time) * 3)
        pick = three;
    if (!(out->name = tci_arena_strndup(a, pick->s, pick->len)))
        return TC_ERR_NOMEM;
    out->source = by_time ? TCI_APP_TIME : TCI_APP_INFERRED;
    long long pct = by_time ? (long long)share_pct(pick->time, tree_total(ct, cpu)) : 0;
    out->evidence = !by_time  ? "inferred"
                    : ct->count ? tci_arena_printf(a, "inferred: %lld%% of the %s counts", pct, ct->count)
                                : tci_arena_printf(a, "inferred: %lld%% of the %s time", pct, cpu ? "thread CPU" : "wall");
    return out->evidence ? TC_OK : TC_ERR_NOMEM;
}

/* -- a given package that matches no method: the packages the trace does have */

static bool matches_some_method(const tci_trace *t, const char *p)
{
    size_t n = strlen(p);
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *s = t->methods[i].short_name;
        if (s && under(s, strlen(s), p, n))
            return true;
    }
    return false;
}

/* "com.example.shop (MainActivity.onCreate called by ...), com.facebook.imagepipeline 41%, ..." */
static void warn_unmatched(const tci_trace *t, const tci_calltree *ct, const char *given, tci_arena *a, tci_diag *d)
{
    char list[480] = "";
    size_t len = 0;
    tci_app_package lc = {0};
    if (ct && app_from_lifecycle(ct, a, &lc) == TC_OK && lc.name)
        len += (size_t)snprintf(list, sizeof list, "%s (%s)", lc.name, lc.evidence);
    method_prefixes mp;
    bool cpu = false;
    if (prefixes_of(t, &mp) == TC_OK && (!ct || prefixes_timed(ct, &mp, &cpu) == TC_OK)) {
        int64_t total = ct ? tree_total(ct, cpu) : 0;
        for (int k = 0; k < 4 && len < sizeof list - 64; k++) { /* the top four two-segment prefixes */
            prefix_count *best = NULL;
            for (uint32_t i = 0; i < mp.tally.n; i++) {
                prefix_count *c = &mp.tally.v[i];
                if (c->open != UINT32_MAX && two_segments(c) && c->len <= 200 &&
                    (!best || weight_of(c, ct) > weight_of(best, ct)))
                    best = c;
            }
            if (!best || !weight_of(best, ct))
                break;
            best->open = UINT32_MAX; /* listed (the walk left every count at 0) */
            if (ct)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%.*s %lld%%", len ? ", " : "",
                                        (int)best->len, best->s, (long long)share_pct(best->time, total));
            else
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%.*s (%llu methods)", len ? ", " : "",
                                        (int)best->len, best->s, (unsigned long long)best->count);
        }
    }
    prefixes_free(&mp);
    tci_warn(d, TCI_FIG_UNUSED_OPTION, "options", UINT64_MAX,
             "option --app-package '%s' matches no method of the trace; its packages: %s", given,
             list[0] ? list : "none outside the framework and the runtime");
}

int tci_app_find(const tci_trace *t, const tci_calltree *ct, const tci_options *o, tci_arena *a, tci_diag *d,
                 tci_app_package *out)
{
    *out = (tci_app_package){NULL, TCI_APP_NONE, "none found"};
    if (o->app_package && o->app_package[0]) {
        *out = (tci_app_package){o->app_package, TCI_APP_GIVEN, "given"};
        if (d && t->n_methods && !matches_some_method(t, o->app_package))
            warn_unmatched(t, ct, o->app_package, a, d);
        return TC_OK;
    }
    int rc = ct ? app_from_lifecycle(ct, a, out) : TC_OK;
    if (rc == TC_OK && !out->name)
        rc = app_from_process(t, a, out);
    if (rc != TC_OK || out->name)
        return rc;
    method_prefixes mp;
    if ((rc = prefixes_of(t, &mp)) == TC_OK)
        rc = app_inferred(ct, &mp, a, out);
    prefixes_free(&mp);
    return rc;
}

const char *tci_app_text(const tci_app_package *app, tci_arena *a)
{
    if (!app || !app->name)
        return NULL;
    return tci_arena_printf(a, "%s (%s)", app->name, app->evidence ? app->evidence : "?");
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

/* A two-segment name "x.y" has no package: a class of R8's default package ("a.b", its method
 * renamed too) or a system trace's slice named with a dot ("v8.compile", "v8.run": Chrome's
 * and WebView's sections in every atrace capture of an app with a WebView). Only the first is
 * evidence: its method part must look renamed as well (one or two lowercase letters). */
static bool unpackaged_minified(const char *s, size_t n)
{
    const char *dot = memchr(s, '.', n);
    size_t method = n - (size_t)(dot + 1 - s);
    return minified_class(s, n) && method >= 1 && method <= 2 && is_lower((unsigned char)dot[1]) &&
           (method == 1 || is_lower((unsigned char)dot[2]));
}

bool tci_names_minified(const tci_trace *t)
{
    uint64_t renamable = 0, minified = 0;
    for (uint32_t i = 0; i < t->n_methods; i++) {
        const char *s = t->methods[i].short_name;
        size_t n = s ? strlen(s) : 0;
        if (!n || tci_code_group(s, n, NULL) != TCI_CODE_LIBRARY)
            continue;
        if (!package_prefix(s, n, 1)) { /* "x.y": evidence only when both parts look renamed */
            if (unpackaged_minified(s, n)) {
                renamable++;
                minified++;
            }
            continue;
        }
        renamable++;
        minified += minified_class(s, n);
    }
    return minified * 2 > renamable;
}
