/*
 * perfetto_ftrace.h - kernel events (TCI_EV_FTRACE) as the perfetto writer writes them: each as
 * the message upstream's ftrace_event.proto has for it, with every field the text gives a place
 * in it, else as a GenericFtraceEvent with all of them. Used by perfetto.c only.
 */
#ifndef TC_PERFETTO_FTRACE_H
#define TC_PERFETTO_FTRACE_H

#include "tc_base.h"
#include "tc_trace.h"
#include "tc_writer.h"

typedef struct tci_pf_ftrace tci_pf_ftrace;

/* Writes the definition of a kernel symbol (InternedData.kernel_symbols: iid, text) before the
 * first event that names it by iid. */
typedef int (*tci_pf_symbol_fn)(void *user, uint64_t iid, const char *text, size_t len);

tci_pf_ftrace *tci_pf_ftrace_new(const tci_trace *t, tci_pf_symbol_fn symbol, void *user); /* NULL: no memory */
/* The member of FtraceEvent's oneof for ev (its tag, length and message), valid until the next
 * call; *len its bytes. NULL with *rc set on failure (no memory, or what symbol returned). */
const uint8_t *tci_pf_ftrace_event(tci_pf_ftrace *f, const tci_event *ev, size_t *len, int *rc);
/* At finish: the fields that had no place in their event's message, one note. */
void tci_pf_ftrace_report(tci_pf_ftrace *f, tci_wctx *w);
void tci_pf_ftrace_free(tci_pf_ftrace *f);

#endif /* TC_PERFETTO_FTRACE_H */
