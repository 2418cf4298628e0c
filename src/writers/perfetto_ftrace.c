/*
 * perfetto_ftrace.c - kernel events (TCI_EV_FTRACE: binder_transaction, irq_handler_entry, a
 * print that is not atrace's, ...) as FtraceEvent members, the way Perfetto's own recorder
 * writes them, so that trace processor imports them as it imports its own captures: binder
 * transactions become slices with flows, cpu_frequency_limits counters, irqs slices on their
 * CPU, sched_blocked_reason the blocked function of a thread state.
 *
 * An event whose name FtraceEvent has a message for (perfetto_ftrace_schema.h, generated from
 * the upstream schema) becomes that message: each field the text gives (hub/ftrace.c reads
 * them, under the kernel's names) goes to the message's field of that name, as its type wants
 * it; a kernel function (sched_blocked_reason's caller, workqueue's function) is interned as a
 * kernel symbol (InternedData.kernel_symbols) and given by iid, as Perfetto's recorder does
 * once it has symbolized the address. A field with no place in the message (a symbolic
 * gfp_flags for a uint32) is left out and counted, said once at the finish. An event the
 * schema has no message for, or whose text gives fields none of which the message has, is a
 * GenericFtraceEvent: its name and every field, numbers as numbers, the rest as text.
 *
 * Memory: per method (event names are methods of the trace) where its event lies in the
 * schema, the kernel symbols met (at most PF_MAX_SYMBOLS; past that a symbol's field is left
 * out and counted), and one buffer for the member being written. Nothing per event.
 */
#include "perfetto_ftrace.h"

#include "tc_ftrace.h"
#include "perfetto_ftrace_schema.h"

#include <stdio.h>
#include <stdlib.h>

#define PF_GENERIC_FIELD 327u      /* FtraceEvent.generic: GenericFtraceEvent */
#define PF_NOT_TYPED UINT32_MAX    /* event_of: no message in the schema */
#define PF_MAX_SYMBOLS (1u << 16)  /* kernel symbols interned, at most */
#define PF_MAX_SYMBOL_BYTES (8u << 20)
#define PF_LEFT_NAMED 8

struct tci_pf_ftrace {
    const tci_trace *t;
    tci_pf_symbol_fn symbol;
    void *user;
    uint32_t *event_of;                /* per method: 0 not looked up, 1 + index in pft_events, PF_NOT_TYPED */
    const tci_ftrace_rule **rule_of;   /* per method, once looked up */
    uint8_t *buf;                      /* the member being written */
    size_t cap;
    tci_idmap sym_ids;                 /* a symbol's text hash -> 1-based iid */
    char **syms;                       /* iid - 1 -> its text (NUL-terminated) */
    uint32_t n_syms, cap_syms;
    uint64_t sym_bytes;
    struct {
        char name[64];                 /* "event.field" */
        uint64_t count;
    } left[PF_LEFT_NAMED];
    uint64_t left_total;
};

tci_pf_ftrace *tci_pf_ftrace_new(const tci_trace *t, tci_pf_symbol_fn symbol, void *user)
{
    tci_pf_ftrace *f = tci_calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->t = t;
    f->symbol = symbol;
    f->user = user;
    return f;
}

void tci_pf_ftrace_free(tci_pf_ftrace *f)
{
    if (!f)
        return;
    free(f->event_of);
    free(f->rule_of);
    free(f->buf);
    for (uint32_t i = 0; i < f->n_syms; i++)
        free(f->syms[i]);
    free(f->syms);
    tci_idmap_free(&f->sym_ids);
    free(f);
}

/* ---- the schema ------------------------------------------------------------------------ */

static int by_name(const void *key, const void *elem)
{
    const tci_method *m = key;
    return strcmp(m->full_name, ((const pft_event *)elem)->name);
}

/* The method's event in the schema (NULL: none), looked up once per method. */
static const pft_event *event_of(tci_pf_ftrace *f, uint32_t method, const tci_ftrace_rule **rule, int *rc)
{
    const tci_trace *t = f->t;
    if (!f->event_of) {
        f->event_of = tci_calloc(t->n_methods ? t->n_methods : 1, sizeof *f->event_of);
        f->rule_of = tci_calloc(t->n_methods ? t->n_methods : 1, sizeof *f->rule_of);
        if (!f->event_of || !f->rule_of) {
            *rc = TC_ERR_NOMEM;
            return NULL;
        }
    }
    if (!f->event_of[method]) {
        const tci_method *m = &t->methods[method];
        /* a print line names the print event's ip symbol: tracing_mark_write, or 0 without kallsyms */
        static const tci_method print = {.full_name = "print"};
        bool is_print = !strcmp(m->full_name, "tracing_mark_write") || !strcmp(m->full_name, "0");
        const pft_event *e = bsearch(is_print ? &print : m, pft_events, sizeof pft_events / sizeof *pft_events,
                                     sizeof *pft_events, by_name);
        f->event_of[method] = e ? (uint32_t)(e - pft_events) + 1 : PF_NOT_TYPED;
        f->rule_of[method] = tci_ftrace_rule_of(m->full_name, strlen(m->full_name));
    }
    *rule = f->rule_of[method];
    return f->event_of[method] == PF_NOT_TYPED ? NULL : &pft_events[f->event_of[method] - 1];
}

static const pft_field *field_of(const pft_event *e, const tci_ftrace_field *x)
{
    for (uint16_t i = 0; i < e->n_fields; i++) {
        const pft_field *pf = &pft_fields[e->first + i];
        if (strlen(pf->name) == x->name_len && !memcmp(pf->name, x->name, x->name_len))
            return pf;
    }
    return NULL;
}

/* ---- protobuf by hand -------------------------------------------------------------------- */

static uint8_t *varint(uint8_t *q, uint64_t v)
{
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}
static uint8_t *tag(uint8_t *q, uint32_t field, uint32_t wire) { return varint(q, (uint64_t)field << 3 | wire); }
static uint8_t *bytes(uint8_t *q, uint32_t field, const void *p, size_t n)
{
    q = varint(tag(q, field, 2), n);
    memcpy(q, p, n);
    return q + n;
}

/* "0c-00" (ftrace's %*phD) as its bytes at q; their count, or SIZE_MAX when it is not that. */
static size_t hex_pairs(const char *p, size_t n, uint8_t *q)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int hi = -1, lo = -1;
        char a = p[i], b = i + 1 < n ? p[i + 1] : 0;
        hi = a >= '0' && a <= '9' ? a - '0' : a >= 'a' && a <= 'f' ? a - 'a' + 10 : a >= 'A' && a <= 'F' ? a - 'A' + 10 : -1;
        lo = b >= '0' && b <= '9' ? b - '0' : b >= 'a' && b <= 'f' ? b - 'a' + 10 : b >= 'A' && b <= 'F' ? b - 'A' + 10 : -1;
        if (hi < 0 || lo < 0)
            return SIZE_MAX;
        q[k++] = (uint8_t)(hi << 4 | lo);
        i += 2;
        if (i < n && (p[i] == '-' || p[i] == ' '))
            i++;
    }
    return k;
}

/* ---- kernel symbols ------------------------------------------------------------------------ */

/* The iid of a kernel function's text, written (symbol) on first use; 0: not kept (the table is
 * full), or an error in *rc. */
static uint64_t symbol_iid(tci_pf_ftrace *f, const char *p, size_t n, int *rc)
{
    for (uint64_t seed = 0;; seed++) {
        uint32_t i = tci_idmap_get(&f->sym_ids, tci_text_hash(p, n, seed));
        if (i == TCI_NONE)
            break;
        if (strlen(f->syms[i - 1]) == n && !memcmp(f->syms[i - 1], p, n))
            return i;
    }
    if (f->n_syms >= PF_MAX_SYMBOLS || f->sym_bytes + n > PF_MAX_SYMBOL_BYTES || memchr(p, 0, n))
        return 0;
    char *s = malloc(n + 1);
    if (!s || tci_grow((void **)&f->syms, &f->cap_syms, f->n_syms, sizeof *f->syms) != 0) {
        free(s);
        *rc = TC_ERR_NOMEM;
        return 0;
    }
    memcpy(s, p, n);
    s[n] = 0;
    uint64_t seed = 0;
    while (tci_idmap_get(&f->sym_ids, tci_text_hash(p, n, seed)) != TCI_NONE)
        seed++; /* another text has this hash: the next seed's */
    if (tci_idmap_put(&f->sym_ids, tci_text_hash(p, n, seed), f->n_syms + 1) != 0) {
        free(s);
        *rc = TC_ERR_NOMEM;
        return 0;
    }
    f->syms[f->n_syms++] = s;
    f->sym_bytes += n;
    if ((*rc = f->symbol(f->user, f->n_syms, s, n)) != TC_OK)
        return 0;
    return f->n_syms;
}

/* ---- the fields left out ------------------------------------------------------------------ */

static void left_out(tci_pf_ftrace *f, const char *event, const tci_ftrace_field *x)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%.*s", event, (int)(x->name_len > 40 ? 40 : x->name_len), x->name);
    f->left_total++;
    for (int k = 0; k < PF_LEFT_NAMED; k++) {
        if (!f->left[k].count)
            snprintf(f->left[k].name, sizeof f->left[k].name, "%s", name);
        else if (strcmp(f->left[k].name, name))
            continue;
        f->left[k].count++;
        return;
    }
}

void tci_pf_ftrace_report(tci_pf_ftrace *f, tci_wctx *w)
{
    if (!f || !f->left_total)
        return;
    char what[640];
    size_t n = (size_t)snprintf(what, sizeof what, "kernel event fields with no place in Perfetto's message for "
                                                   "their event not written (");
    uint64_t named = 0;
    for (int k = 0; k < PF_LEFT_NAMED && f->left[k].count && n < sizeof what - 80; k++) {
        n += (size_t)snprintf(what + n, sizeof what - n, "%s%s %llu", k ? ", " : "", f->left[k].name,
                              (unsigned long long)f->left[k].count);
        named += f->left[k].count;
    }
    if (named < f->left_total && n < sizeof what - 40)
        n += (size_t)snprintf(what + n, sizeof what - n, ", %llu others", (unsigned long long)(f->left_total - named));
    if (n < sizeof what - 2)
        snprintf(what + n, sizeof what - n, ")");
    tci_writer_dropped(w, f->left_total, what);
}

/* ---- the member ------------------------------------------------------------------------ */

/* One field into the typed message at *q as the schema's type wants it: false when it cannot. */
static bool put_typed(tci_pf_ftrace *f, const pft_field *pf, const tci_ftrace_field *x, uint8_t **q, int *rc)
{
    bool number = x->type == TCI_FTV_INT || x->type == TCI_FTV_UINT;
    bool neg = x->type == TCI_FTV_INT && x->i < 0;
    /* A 32-bit member printed with the other signedness ("cpu=%u" of an int32 member:
     * 4294967295) holds the same 32 bits: Perfetto's recorder copies the bits, so do we. */
    bool bits32 = number && (x->type == TCI_FTV_UINT ? x->u <= UINT32_MAX : x->i >= INT32_MIN && x->i <= (int64_t)UINT32_MAX);
    switch (pf->type) {
    case PFT_INT32:
        if (!bits32)
            return false;
        *q = varint(tag(*q, pf->number, 0), (uint64_t)(int64_t)(int32_t)(uint32_t)x->u); /* negatives: ten bytes */
        return true;
    case PFT_INT64:
        if (!number || (x->type == TCI_FTV_UINT && x->u > INT64_MAX))
            return false;
        *q = varint(tag(*q, pf->number, 0), (uint64_t)x->i);
        return true;
    case PFT_UINT32:
    case PFT_UINT64: {
        uint64_t v;
        if (x->type == TCI_FTV_SYMBOL && pf->type == PFT_UINT64) {
            if (!(v = symbol_iid(f, x->text, x->text_len, rc)))
                return false;
        } else if (pf->type == PFT_UINT32 ? !bits32 : !number || neg) {
            return false;
        } else {
            v = pf->type == PFT_UINT32 ? (uint32_t)x->u : x->u;
        }
        *q = varint(tag(*q, pf->number, 0), v);
        return true;
    }
    case PFT_STRING:
        *q = bytes(*q, pf->number, x->text, x->text_len);
        return true;
    default: { /* PFT_BYTES: hex pairs as their bytes, else the text */
        uint8_t *len_at = tag(*q, pf->number, 2), *body = len_at + 5;
        size_t k = x->type == TCI_FTV_BYTES ? hex_pairs(x->text, x->text_len, body) : SIZE_MAX;
        if (k == SIZE_MAX)
            *q = bytes(*q, pf->number, x->text, x->text_len);
        else {
            uint8_t *e = varint(len_at, k);
            memmove(e, body, k);
            *q = e + k;
        }
        return true;
    }
    }
}

/* The fields as a GenericFtraceEvent: its name and each field, numbers as numbers. */
static uint8_t *put_generic(uint8_t *q, const char *event, const tci_ftrace_field *x, int n)
{
    q = bytes(q, 1, event, strlen(event));
    for (int i = 0; i < n; i++) {
        uint8_t *len_at = tag(q, 2, 2), *body = len_at + 5, *b = body;
        b = bytes(b, 1, x[i].name, x[i].name_len);
        if (x[i].type == TCI_FTV_INT)
            b = varint(tag(b, 4, 0), (uint64_t)x[i].i);
        else if (x[i].type == TCI_FTV_UINT)
            b = varint(tag(b, 5, 0), x[i].u);
        else
            b = bytes(b, 3, x[i].text, x[i].text_len);
        size_t k = (size_t)(b - body);
        uint8_t *e = varint(len_at, k);
        memmove(e, body, k);
        q = e + k;
    }
    return q;
}

const uint8_t *tci_pf_ftrace_event(tci_pf_ftrace *f, const tci_event *ev, size_t *len, int *rc)
{
    *rc = TC_OK;
    const tci_trace *t = f->t;
    size_t dn = 0;
    const char *details = tci_sys_details(t, ev, &dn);
    if (!details)
        details = "", dn = 0;
    const tci_ftrace_rule *rule;
    const pft_event *e = event_of(f, ev->method, &rule, rc);
    if (*rc != TC_OK)
        return NULL;
    tci_ftrace_field x[TCI_FTRACE_MAX_FIELDS];
    int n = tci_ftrace_fields(rule, details, dn, x, TCI_FTRACE_MAX_FIELDS);
    if (n > TCI_FTRACE_MAX_FIELDS)
        n = TCI_FTRACE_MAX_FIELDS; /* at most 32 of a line's fields (none of upstream's events has more) */
    const char *name = t->methods[ev->method].full_name;
    /* room: the header, the name, each field's name, text and 24 bytes of tags and numbers */
    size_t need = 32 + strlen(name) + 2 * dn + (size_t)n * 48;
    for (int i = 0; i < n; i++)
        need += x[i].name_len;
    if (need > f->cap) {
        uint8_t *b = realloc(f->buf, need);
        if (!b) {
            *rc = TC_ERR_NOMEM;
            return NULL;
        }
        f->buf = b;
        f->cap = need;
    }
    uint8_t *body = f->buf + 16, *q = body;
    uint32_t member = PF_GENERIC_FIELD;
    if (e) {
        int placed = 0, n_left = 0, left[TCI_FTRACE_MAX_FIELDS];
        for (int i = 0; i < n; i++) {
            const pft_field *pf = field_of(e, &x[i]);
            if (pf && put_typed(f, pf, &x[i], &q, rc))
                placed++;
            else if (*rc != TC_OK)
                return NULL;
            else
                left[n_left++] = i;
        }
        if (placed || !n) {
            member = e->number;
            for (int k = 0; k < n_left; k++)
                left_out(f, name, &x[left[k]]);
        } else {
            q = body; /* nothing of it fits the message: every field in a generic event instead */
        }
    }
    if (member == PF_GENERIC_FIELD)
        q = put_generic(q, name, x, n);
    size_t body_len = (size_t)(q - body);
    uint8_t head[16], *h = varint(tag(head, member, 2), body_len);
    size_t hn = (size_t)(h - head);
    memcpy(body - hn, head, hn);
    *len = hn + body_len;
    return body - hn;
}
