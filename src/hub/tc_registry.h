/*
 * tc_registry.h - the formats (formats.def): finding them by name, and their options parsed from the
 * descriptors' rows.
 * Prefix tci_. Not installed; README.md, Layout: the layers and who includes what.
 */
#ifndef TC_TC_REGISTRY_H
#define TC_TC_REGISTRY_H

#include "tc_diag.h"
#include "tc_options.h"
#include "tc_reader.h"
#include "tc_writer.h"
#include "tc_base.h"

/* ---- registry ------------------------------------------------------------ */

#define TCI_READER(sym) extern const tci_reader sym;
#define TCI_WRITER(sym) extern const tci_writer sym;
#define TCI_DIFF(sym) extern const tci_diff_format sym;
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
#undef TCI_DIFF

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
/* "text, csv or flamegraph": the diff formats' names, for messages. */
const char *tci_diff_format_names(void);

/* ---- options.c: every option parsed from its row ---------------------------
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
void tci_option_strings_free(char **strings);
/* A size as the options take it ("64M"); approximate: "3.1G", or "1000 bytes" below 1K. */
void tci_size_text(uint64_t n, bool approximate, char *out, size_t len);
/* Whether key was set explicitly (to any value). */
bool tci_option_given(const tci_options *o, const char *key);
/* The value of a bool option (false for a key that is not one). */
bool tci_option_bool(const tci_options *o, const char *key);
/* The variant of writer w that o selects: the first whose option is set, else 0. */
int tci_variant_selected(const tci_options *o, const tci_writer *w);
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

#endif /* TC_TC_REGISTRY_H */
