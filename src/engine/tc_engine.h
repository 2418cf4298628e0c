/*
 * tc_engine.h - the engine: the layer that assembles a conversion from the parts below it (the
 * hub's stages, the readers, the analyses, the transforms, the writers) and implements the
 * public API (traceconv.h): conv.c (tc_conv), join.c (traceconv merge), diffconv.c (traceconv
 * diff), registry.c (the formats that readers/ and writers/ list, found by name, and their
 * options by key).
 * Nothing below the engine includes this header or calls what it declares.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_ENGINE_H
#define TC_TC_ENGINE_H

#include "tc_conv.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_diff.h"
#include "tc_trace.h"
#include "tc_writer.h"
#include "tc_base.h"

/* ---- conv internals: what the engine's other files (join.c, diffconv.c) ask the conversion ---- */

struct tci_writer;
int tci_conv_aggregate(tc_conv *c, const struct tci_writer *w, void *priv, const char *function);
const tci_options *tci_conv_options(const tc_conv *c);
const tci_trace *tci_conv_trace_of(const tc_conv *c);
uint64_t tci_conv_input_size(const tc_conv *c); /* bytes read (gzip inflated) */
/* max-output in bytes for an output of input_size bytes of input (UINT64_MAX: none), and
 * the one message of an output that reached it (TC_ERR_LIMIT, in d). */
uint64_t tci_output_limit(const tci_options *opt, uint64_t input_size);
int tci_output_limit_error(tci_diag *d, const tci_options *opt, const char *module, uint64_t limit);
const tci_diag *tci_conv_diag(const tc_conv *c);
bool tci_conv_is_open(const tc_conv *c);
void tci_conv_consume(tc_conv *c); /* OPEN -> WRITTEN without reading (the other input of a diff failed) */
void tci_conv_call_begin(tc_conv *c);
int tci_conv_call_end(tc_conv *c, int rc);
tci_diag *tci_conv_error_slot(tc_conv *c); /* where a call's message goes (diag.error) */
/* join.c: an input normalized into another reader (consumed), and the conversion opened on that reader. */
int tci_conv_normalize(tc_conv *c, int (*ready)(void *user), int (*emit)(void *user, const tci_event *ev), void *user);
int tci_conv_open_reader(tc_conv *c, const char *name, const tci_reader *rd, void *priv);

/* ---- the formats (registry.c: tc_readers.h's and tc_writers.h's lists) ---- */

const tci_reader *tci_find_reader(const char *name); /* in any case */
const tci_writer *tci_find_writer(const char *name);
/* The writer of an output name in any case: a writer's ("report"; *variant -1: the one its
 * options select) or one of its variants' ("report-html"; *variant its index). NULL: none. */
const tci_writer *tci_find_output(const char *name, int *variant);
const tci_diff_format *tci_find_diff_format(const char *name); /* in any case */
/* A failed write's cause for a message: strerror, but EFBIG is "file size limit exceeded" (conv.c). */
void tci_write_error_text(int errnum, char *why, size_t len);
size_t tci_reader_count(void);
const tci_reader *tci_reader_at(size_t i);
size_t tci_writer_count(void);
const tci_writer *tci_writer_at(size_t i);
size_t tci_diff_format_count(void);
const tci_diff_format *tci_diff_format_at(size_t i);
/* tc_output_variant's answer for options o (NULL: a writer's first variant); conv.c's. */
const tc_variant_info *tci_output_variant(const tci_options *o, const char *writer);
/* "text, csv or flamegraph": the diff formats' names, for messages. */
const char *tci_diff_format_names(void);

/* ---- every format's options by key (registry.c; each row parsed by hub/options.c) ----
 *
 * The key's row is the first of the core's table, then the readers', writers' and diff
 * formats' tables in registry order (the rows of one key agree). */
const tci_option_def *tci_option_find(const char *key);
/* How many distinct keys the tables hold (more than TCI_MAX_OPTION_KEYS: some are lost). */
size_t tci_option_key_count(void);
/* Parse value for key into o (strings: a copy in strings[], indexed by the key, which the
 * caller frees with tci_option_strings_free): TC_OK, else TC_ERR_USAGE (an unknown key,
 * listing the keys; a bad value, saying what it takes; two options that choose two variants
 * of one writer) or TC_ERR_NOMEM, with the message in d. The key is noted as given. */
int tci_option_set(tci_options *o, char **strings, const char *key, const char *value, tci_diag *d);
/* Whether key was set explicitly (to any value). */
bool tci_option_given(const tci_options *o, const char *key);
/* o for one output of w's variant v given by name: its option set, its siblings' cleared. */
void tci_variant_force(tci_options *o, const tci_writer *w, int v);
/* At write time, warn about each given key that is a format's option (in some reader's,
 * writer's, variant's or diff format's table) but read by neither rd nor any of the n_ws
 * writers ws (their tables, and the table of the variant each writes: variants[i], or with
 * variants NULL or -1 the one o selects): counted unused-option warnings, TC_ERR_STRICT under
 * strict. */
int tci_options_check_used(const tci_options *o, const tci_reader *rd, const tci_writer *const *ws,
                           const int *variants, size_t n_ws, tci_diag *d);
/* Whether an output of w with options o (its variant forced) reads key. */
bool tci_output_reads(const tci_writer *w, const tci_options *o, const char *key);

#endif /* TC_TC_ENGINE_H */
