/*
 * tc_codegroup.h - whose code a frame is: the app's, the Android framework's, the Java/Kotlin
 * runtime's or a library's (the flame graph's android palette; the report and serve's page
 * can use the same rules). Prefix tci_. Not installed; CONTRIBUTING.md, Layers.
 */
#ifndef TC_TC_CODEGROUP_H
#define TC_TC_CODEGROUP_H

#include "tc_calltree.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "tc_writer.h"
#include "tc_base.h"

enum tci_code_group {
    TCI_CODE_OTHER = 0, /* not a Java method: thread frames, slice names, unknown.0x... */
    TCI_CODE_APP,       /* the app's own package */
    TCI_CODE_FRAMEWORK, /* the Android platform's known packages: android.app, androidx.*, com.android.internal, ... */
    TCI_CODE_RUNTIME,   /* java.*, javax.*, jdk.*, kotlin.*, dalvik.*, libcore.*, sun.* */
    TCI_CODE_LIBRARY,   /* every other package: third-party libraries */
    TCI_CODE__COUNT
};

/*
 * The group of a frame's name, "pkg.Class.method" (a method's short name, or a slice named
 * so). The rules, in order:
 * - a name is a Java method's when it is two or more segments joined by '.', each made of
 *   letters, digits, '_', '$', '-' and non-ASCII bytes and not starting with a digit, the
 *   last one possibly <init> or <clinit>; any other name (a space, '#', ':', '(' or '/' in
 *   it, unknown.0x1f, "main") is TCI_CODE_OTHER;
 * - a name under app_package (its text, then '.') is the app's, before the rules below (an
 *   app called com.android.foo is the app);
 * - under a known package of the Android platform (android.app, android.os, android.view, ...
 *   the SDK's android.* packages, androidx, android.support, com.android.internal,
 *   com.android.server, ...: codegroup.c's list): the framework; a bare "android." is not enough
 *   (an app's android.example.camera is a library until it is found as the app);
 * - its first segment java, javax, jdk, kotlin, dalvik, libcore or sun: the runtime;
 * - else a library. app_package NULL or "": no app group.
 */
enum tci_code_group tci_code_group(const char *name, size_t len, const char *app_package);
/* "app", "Android framework", ...: the legend's words. */
const char *tci_code_group_label(enum tci_code_group g);

/* The app's package and its evidence: tci_app_package, tc_writer.h's (what every writer is told). */

/*
 * The app's package for t, in a's memory, from the strongest evidence first:
 * - option app-package when given; one that matches no method's name is warned about (the
 *   figure unused-option, in d when not NULL) with the trace's candidate packages;
 * - with a call tree: a lifecycle method (onCreate, onResume, attachBaseContext, onCreateView,
 *   ...) of a class outside the framework and the runtime, directly under a framework method
 *   that calls app components (Instrumentation.callActivityOnCreate, callApplicationOnCreate,
 *   ActivityThread.handleBindApplication, performLaunchActivity, handleCreateService,
 *   Activity.performCreate, ...): the Application's first, then the frame with the most time,
 *   its class's package widened to what the other such classes share (two segments at least);
 * - the trace's process name when the input names its process (not the file stem) and that
 *   name, without a ":service" suffix, is a package with some Java method under it (a
 *   systrace's comm cut to 15 bytes is not);
 * - inferred, outside the framework, the runtime and (while another prefix has any) the known
 *   bundled libraries and OEM packages: the first two package segments with the most inclusive
 *   time (a frame counted when no frame of the same prefix is open above it; wall, or thread
 *   CPU on a CPU-only tree), or without a tree the most methods, narrowed to its first three
 *   when those hold more than half of it.
 * ct may be NULL. TC_OK or TC_ERR_NOMEM.
 */
int tci_app_find(const tci_trace *t, const tci_calltree *ct, const tci_options *o, tci_arena *a, tci_diag *d,
                 tci_app_package *out);
/* "com.example.shop (MainActivity.onCreate called by Instrumentation.callActivityOnCreate)", in
 * a's memory; NULL: no app (or no memory). */
const char *tci_app_text(const tci_app_package *app, tci_arena *a);

/*
 * Whether most class names look minified by R8/ProGuard: more than half of the table's
 * methods that are neither framework nor runtime (the code R8 renames) have a class whose
 * own name (after its package), in each '$'-separated part that is not a number, is one to
 * three lowercase letters or digits starting with a letter ("a.b.c", "a0.d.e", "b.a$c.d").
 * A name without a package ("x.y") counts only when its method looks renamed too ("a.b",
 * R8's default package): system traces' slices named with a dot ("v8.compile") are no
 * evidence either way. One pass over the method table.
 */
bool tci_names_minified(const tci_trace *t);

#endif /* TC_TC_CODEGROUP_H */
