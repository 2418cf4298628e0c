/*
 * tc_deobf.h - a ProGuard/R8 mapping applied to the method table.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_DEOBF_H
#define TC_TC_DEOBF_H

#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "tc_base.h"

/* ---- deobfuscation: a ProGuard/R8 mapping (deobfuscate.c) ---------------- */

/* The mapping, indexed (class lines only; the file stays mapped, its pages
 * given back). Errors name the mapping's file, offset and line. */
typedef struct tci_deobf tci_deobf;
int tci_deobf_open(tci_deobf **out, const char *path, const tci_options *o, tci_diag *d);
/* The same over a buffer (borrowed until tci_deobf_free; gzip is inflated), name in messages. */
int tci_deobf_open_memory(tci_deobf **out, const void *data, size_t size, const char *name, const tci_options *o,
                          tci_diag *d);
/* Rename the methods of t (tables complete, display names not made yet):
 * ART methods get their original class, name, descriptor and source file;
 * qualified text names (timelines, slices, Rhea) their shown names. Figures
 * deobf-*; a malformed member line of a class the trace uses is an error. */
int tci_deobf_apply(tci_deobf *m, tci_trace *t, tci_diag *d);
void tci_deobf_free(tci_deobf *m);

#endif /* TC_TC_DEOBF_H */
