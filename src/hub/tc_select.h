/*
 * tc_select.h - method patterns and the nearest names (select.c): the one reading of
 * --focus, --ignore and --callers (the command's, serve's query fields, diff's), and the
 * names an unmatched pattern or thread spec is told about.
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_SELECT_H
#define TC_TC_SELECT_H

#include "tc_diag.h"
#include "tc_trace.h"
#include "tc_base.h"

/*
 * A method pattern, as people type them (doc/cli.md, "Selection"), is a glob (fnmatch: *, ?,
 * [...]) that matches a method when it matches
 *   - its short name "pkg.Class.method" or its full name "pkg.Class.method: (sig)ret"
 *     (a full glob, `*.take`, `java.lang.Object.wait`);
 *   - without a '.' in its name part (what comes before ": (" or "("): the method's own
 *     name, with or without its signature (`onCreate`, `on*`, `onCreate: (*)V`);
 *   - with a '.': the short or full name from a package boundary, after a '.'
 *     (`Object.wait` matches java.lang.Object.wait, `bject.wait` does not).
 * The signature is optional: a pattern with one (": (sig)ret" as the full name writes it)
 * matches the full name only, one without it matches both.
 */
bool tci_pattern_matches(const tci_method *m, const char *pattern);

/* Each pattern of the '\n'-joined list sets bit in mark[] (one byte per method of t) for
 * the methods it matches; the number of methods newly marked. The first pattern that
 * matches no method is put in *unmatched (a pointer into patterns, its length in
 * *unmatched_len; NULL: each matched); unmatched may be NULL. Only the methods of call
 * paths (tci_method.called) match: a kernel event's, counter's or instant's name alone is
 * no method a pattern means. */
uint32_t tci_pattern_mark(const tci_trace *t, const char *patterns, uint8_t *mark, uint8_t bit,
                          const char **unmatched, size_t *unmatched_len);

/* The error of a pattern (len bytes) that matches no method of the traces: one line, with
 * the closest method names of them (tci_nearest), TC_ERR_USAGE (a usage error: exit 2).
 * field: how the option is named where it was given ("--focus", or serve's "focus="). */
int tci_pattern_unmatched(tci_diag *d, const char *field, const char *pattern, size_t len,
                          const tci_trace *const *traces, size_t n_traces);

/* The methods of the option callers (o->callers; NULL when not given): *marks, one byte per
 * method of t, 1 for each that the pattern matches (freed by the caller). A pattern that
 * matches nothing is a usage error naming the closest names, as for focus; callers with
 * reverse too (two views of the callers: choose one). */
struct tci_options;
int tci_callers_marks(const tci_trace *t, const struct tci_options *o, tci_diag *d, uint8_t **marks);

/* The names closest to what was typed (--thread's, a pattern's): a handful, best first.
 * A name is close when what was typed (glob characters left out, case ignored) is a
 * substring of it, or within a small edit distance of it (or, with dots set, of its part
 * with as many '.'-separated parts as what was typed: `Objet.wait` ~ java.lang.Object.wait). */
#define TCI_NEAREST_MAX 6
typedef struct tci_nearest {
    char typed[128];
    size_t typed_len, typed_dots;
    bool dots;                           /* compare with the name's last parts (methods) */
    const char *name[TCI_NEAREST_MAX];  /* best first; pointers into the caller's strings */
    uint32_t score[TCI_NEAREST_MAX];
    size_t n;
} tci_nearest;
void tci_nearest_init(tci_nearest *nn, const char *typed, size_t len, bool dots);
void tci_nearest_offer(tci_nearest *nn, const char *name);

#endif /* TC_TC_SELECT_H */
