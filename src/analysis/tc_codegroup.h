/*
 * tc_codegroup.h - whose code a frame is: the app's, the Android framework's, the Java/Kotlin
 * runtime's or a library's (the flame graph's android palette; the report and serve's page
 * can use the same rules). Prefix tci_. Not installed; README.md, Layout.
 */
#ifndef TC_TC_CODEGROUP_H
#define TC_TC_CODEGROUP_H

#include "tc_options.h"
#include "tc_trace.h"
#include "tc_base.h"

enum tci_code_group {
    TCI_CODE_OTHER = 0, /* not a Java method: thread frames, slice names, unknown.0x... */
    TCI_CODE_APP,       /* the app's own package */
    TCI_CODE_FRAMEWORK, /* android.*, androidx.*, com.android.* */
    TCI_CODE_RUNTIME,   /* java.*, javax.*, kotlin.*, dalvik.*, libcore.*, sun.* */
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
 * - its first segment android or androidx, or first two com.android: the framework;
 * - its first segment java, javax, kotlin, dalvik, libcore or sun: the runtime;
 * - else a library. app_package NULL or "": no app group.
 */
enum tci_code_group tci_code_group(const char *name, size_t len, const char *app_package);
/* "app", "Android framework", ...: the legend's words. */
const char *tci_code_group_label(enum tci_code_group g);

/* Where the app's package came from. */
enum tci_app_source { TCI_APP_NONE, TCI_APP_GIVEN, TCI_APP_PROCESS, TCI_APP_INFERRED };
const char *tci_app_source_label(enum tci_app_source s); /* "given", "process name", "inferred", "none" */

typedef struct tci_app_package {
    const char *name; /* NULL: none (source TCI_APP_NONE) */
    enum tci_app_source source;
} tci_app_package;

/*
 * The app's package for t, in a's memory: option app-package when given; else the trace's
 * process name when the input names its process (not the file stem) and that name, without
 * a ":service" suffix, is a package (two or more identifier segments) with some Java method
 * of the table under it (a systrace's comm cut to 15 bytes is not); else inferred: among
 * the methods of the table that are libraries by the rules above (no app), the most common
 * first two package segments (each method counted once), narrowed to its most common first
 * three when those hold more than half of its methods. TC_OK or TC_ERR_NOMEM.
 */
int tci_app_package_of(const tci_trace *t, const tci_options *o, tci_arena *a, tci_app_package *out);

/*
 * Whether most class names look minified by R8/ProGuard: more than half of the table's
 * methods that are neither framework nor runtime (the code R8 renames) have a class whose
 * own name (after its package), in each '$'-separated part that is not a number, is one to
 * three lowercase letters or digits starting with a letter ("a.b.c", "a0.d", "b.a$c").
 * One pass over the method table.
 */
bool tci_names_minified(const tci_trace *t);

#endif /* TC_TC_CODEGROUP_H */
