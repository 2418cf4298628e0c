/*
 * tc_ftrace.h - the fields of a kernel event as ftrace prints it: what a TCI_EV_FTRACE event's
 * details say ("transaction=12 dest_node=0 ...", "work struct ff..: function foo").
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_FTRACE_H
#define TC_TC_FTRACE_H

#include "tc_base.h"

/* How a field's value reads. */
enum tci_ftrace_value {
    TCI_FTV_INT = 0, /* a number: i (and u when i >= 0) */
    TCI_FTV_UINT,    /* a number printed in hex, or too large for i: u */
    TCI_FTV_TEXT,    /* text, as printed */
    TCI_FTV_SYMBOL,  /* a kernel function ("worker_thread+0x368/0x458"): text */
    TCI_FTV_BYTES    /* bytes printed as hex pairs ("0c-00"): text, the pairs */
};

/* One field: the kernel's name for it (the name the event's format gives its member: debug_id
 * for binder_transaction's "transaction="), and its value. Strings point into the details or
 * to literals, and are not NUL-terminated. */
typedef struct tci_ftrace_field {
    const char *name, *text;
    size_t name_len, text_len;
    uint8_t type; /* enum tci_ftrace_value */
    int64_t i;
    uint64_t u;
} tci_ftrace_field;

#define TCI_FTRACE_MAX_FIELDS 32

/* What is known of an event's text (NULL: nothing; its fields are read the general way). */
typedef struct tci_ftrace_rule tci_ftrace_rule;
const tci_ftrace_rule *tci_ftrace_rule_of(const char *event, size_t len);

/* The fields of [p, p+n), an event's details, by its rule (NULL: key=value words, the leading
 * words without '=' as "name", an event with no key=value at all as one field "text"). At most
 * max are stored; returns how many the details hold (more than max: the rest were not stored).
 * A field the kernel derives from another (softirq's action from its vec) is not returned.
 * Never reads past n; linear in n. */
int tci_ftrace_fields(const tci_ftrace_rule *rule, const char *p, size_t n, tci_ftrace_field *out, int max);

#endif /* TC_TC_FTRACE_H */
