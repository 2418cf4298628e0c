/*
 * ftrace.c - the fields of a kernel event, read from the text ftrace prints for it (the
 * details after "event: "), for every writer that shows TCI_EV_FTRACE events.
 *
 * Most events print `key=value` words, the key being the name of the member the event's
 * format prints there (kernel/trace: TP_printk). That is the general rule: a word with '='
 * is a field; words without '=' before the first field are one field "name" (clock_set_rate's
 * "bimc_clk state=..."; Perfetto's systrace parser names them so too); words without '='
 * after a field are part of that field's value when its key ends in "comm" (task names hold
 * spaces), else of the field itself too (the text shows what it could not name); a value's
 * trailing ',' (ion's "heap_name=system,") and the brackets around a word ("[action=TIMER]")
 * are the format's, not the value's; details with no '=' at all are one field "text".
 *
 * Where the text differs from the members, a rule says how (the table below, from the events'
 * print formats): a key printed under another name (binder's "transaction=" is debug_id), a
 * value printed as a symbol (irq_handler_exit's ret "handled" is 1, rss_stat's type
 * MM_ANONPAGES is member 1), in hex without 0x (task_newtask's clone_flags), with a unit
 * (rss_stat's size "123B"), a kernel function (sched_blocked_reason's caller), a member the
 * kernel derives from another (softirq's action: its vec, left out), or a text that is no
 * key=value at all (workqueue's "work struct ff..: function foo", suspend_resume's
 * "sync_filesystems[0] begin"), read by a template tried in order: literal text, one blank
 * for any run of blanks, and {member:how} for a value up to the next literal character.
 * A template that does not match falls back to the general rule, so a kernel that prints an
 * event another way still gives its fields.
 */
#include "tc_base.h"
#include "tc_ftrace.h"
#include "text.h"

/* How a value reads: the general number-or-text, or what a rule says. */
enum how {
    H_AUTO = 0,
    H_HEX,    /* hex digits, 0x or not */
    H_SYMBOL, /* a kernel function */
    H_TEXT,   /* text whatever it looks like */
    H_BYTES,  /* "0c-00": hex pairs */
    H_ENUM,   /* a symbol of syms, else a number */
    H_UNIT_B, /* a number with a trailing 'B' */
    H_DEVT,   /* a device "major:minor", as the kernel's dev_t (major << 20 | minor) */
    H_DROP    /* derived from another member: not a field */
};

typedef struct ft_key {
    const char *key;   /* as printed; "" the words without '=' */
    const char *field; /* the member (NULL: key itself; for "", "name") */
    uint8_t how;
    const char *syms;  /* H_ENUM: "handled=1,unhandled=0" */
} ft_key;

struct tci_ftrace_rule {
    const char *event;
    ft_key keys[6];          /* the keyed rules (key NULL ends them) */
    const char *templ[3];    /* or templates, tried in order (NULL ends them) */
};

#define DROP_BARE {"", "", H_DROP, NULL}
#define WQ_WORK {"work struct {work:x}: function {function:s}", "work struct {work:x} function={function:s}", \
                 "work struct {work:x}"}

static const struct tci_ftrace_rule rules[] = {
    {"binder_command", .keys = {DROP_BARE}},
    {"binder_return", .keys = {DROP_BARE}},
    {"binder_set_priority", .keys = {{"old", "old_prio", H_AUTO, NULL}, {"new", "new_prio", H_AUTO, NULL},
                                     {"desired", "desired_prio", H_AUTO, NULL}, DROP_BARE}},
    {"binder_transaction", .keys = {{"transaction", "debug_id", H_AUTO, NULL}, {"dest_node", "target_node", H_AUTO, NULL},
                                    {"dest_proc", "to_proc", H_AUTO, NULL}, {"dest_thread", "to_thread", H_AUTO, NULL}}},
    {"binder_transaction_alloc_buf", .keys = {{"transaction", "debug_id", H_AUTO, NULL}}},
    {"binder_transaction_received", .keys = {{"transaction", "debug_id", H_AUTO, NULL}}},
    {"bputs", .templ = {"{ip:x}: {str:t}", "{:-}: {str:t}", "{str:t}"}},
    {"clk_set_rate", .templ = {"{name:t} {rate}"}},
    {"cpu_frequency_limits", .keys = {{"min", "min_freq", H_AUTO, NULL}, {"max", "max_freq", H_AUTO, NULL}}},
    {"cpuhp_enter", .templ = {"cpu: {cpu} target: {target} step: {idx} ({fun:s})"}},
    {"cpuhp_exit", .templ = {"cpu: {cpu} state: {state} step: {idx} ret: {ret}"}},
    {"cpuhp_multi_enter", .templ = {"cpu: {cpu} target: {target} step: {idx} ({fun:s})"}},
    {"dmabuf_rss_stat", .keys = {{"delta", "rss_delta", H_AUTO, NULL}}},
    {"i2c_read", .templ = {"i2c-{adapter_nr} #{msg_nr} a={addr:x} f={flags:x} l={len}"}},
    {"i2c_reply", .templ = {"i2c-{adapter_nr} #{msg_nr} a={addr:x} f={flags:x} l={len} [{buf:b}]"}},
    {"i2c_result", .templ = {"i2c-{adapter_nr} n={nr_msgs} ret={ret}"}},
    {"i2c_write", .templ = {"i2c-{adapter_nr} #{msg_nr} a={addr:x} f={flags:x} l={len} [{buf:b}]"}},
    {"ipi_entry", .templ = {"({reason:t})"}},
    {"ipi_exit", .templ = {"({reason:t})"}},
    {"ipi_raise", .templ = {"target_mask={target_cpus:x} ({reason:t})"}},
    {"irq_handler_exit", .keys = {{"ret", NULL, H_ENUM, "handled=1,unhandled=0"}}},
    {"mm_filemap_add_to_page_cache", .templ = {"dev {s_dev:d} ino {i_ino:x} page={page:x} pfn={pfn} ofs={ofs}"}},
    {"mm_filemap_delete_from_page_cache", .templ = {"dev {s_dev:d} ino {i_ino:x} page={page:x} pfn={pfn} ofs={ofs}"}},
    {"print", .templ = {"{ip:x}: {buf:t}", "{:-}: {buf:t}", "{buf:t}"}},
    {"regulator_set_voltage", .templ = {"name={name:t} ({min}-{max})"}},
    {"rss_stat", .keys = {{"type", "member", H_ENUM, "MM_FILEPAGES=0,MM_ANONPAGES=1,MM_SWAPENTS=2,MM_SHMEMPAGES=3"},
                          {"size", NULL, H_UNIT_B, NULL}}},
    {"sched_blocked_reason", .keys = {{"iowait", "io_wait", H_AUTO, NULL}, {"caller", NULL, H_SYMBOL, NULL}}},
    {"sched_cpu_hotplug", .templ = {"cpu {affected_cpu} {status:e:online=1,offline=0} error={error}"}},
    {"sched_process_fork", .keys = {{"comm", "parent_comm", H_TEXT, NULL}, {"pid", "parent_pid", H_AUTO, NULL}}},
    {"signal_generate", .keys = {{"grp", "group", H_AUTO, NULL}, {"res", "result", H_AUTO, NULL}}},
    {"softirq_entry", .keys = {{"action", "", H_DROP, NULL}}},
    {"softirq_exit", .keys = {{"action", "", H_DROP, NULL}}},
    {"softirq_raise", .keys = {{"action", "", H_DROP, NULL}}},
    {"suspend_resume", .templ = {"{action:t}[{val}] {start:e:begin=1,end=0}"}},
    {"task_newtask", .keys = {{"clone_flags", NULL, H_HEX, NULL}}},
    {"tracing_mark_write", .templ = {"{buf:t}"}}, /* the event name is the print's ip symbol */
    {"0", .templ = {"{buf:t}"}},                  /* ... on a kernel without kallsyms */
    {"workqueue_activate_work", .templ = WQ_WORK},
    {"workqueue_execute_end", .templ = WQ_WORK},
    {"workqueue_execute_start", .templ = WQ_WORK},
    {"workqueue_queue_work", .templ = {"work struct={work:x} function={function:s} workqueue={workqueue:t} "
                                       "req_cpu={req_cpu} cpu={cpu}"}},
};

const tci_ftrace_rule *tci_ftrace_rule_of(const char *event, size_t len)
{
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (strlen(rules[i].event) == len && !memcmp(rules[i].event, event, len))
            return &rules[i];
    return NULL;
}

/* ---- values ----------------------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool parse_hex(const char *p, size_t n, uint64_t *out)
{
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2, n -= 2;
    if (n == 0 || n > 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hexval(p[i]);
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

/* A decimal ([-]digits) or 0x-hex number, as the general rule reads it. */
static bool read_number(tci_ftrace_field *f, const char *p, size_t n)
{
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        if (!parse_hex(p, n, &f->u))
            return false;
        f->type = TCI_FTV_UINT;
        f->i = (int64_t)f->u;
        return true;
    }
    bool neg = n && p[0] == '-';
    uint64_t v;
    if (!tci_parse_u64(p + neg, n - neg, UINT64_MAX, &v))
        return false;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        f->i = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
        f->u = (uint64_t)f->i;
        f->type = TCI_FTV_INT;
    } else {
        f->u = v;
        f->i = (int64_t)v;
        f->type = v > INT64_MAX ? TCI_FTV_UINT : TCI_FTV_INT;
    }
    return true;
}

/* "handled=1,unhandled=0": the number of the symbol [p, p+n), if listed. */
static bool enum_value(const char *syms, const char *p, size_t n, int64_t *out)
{
    while (syms && *syms) {
        const char *eq = strchr(syms, '='), *end = strchr(syms, ',');
        if (!eq)
            return false;
        if ((size_t)(eq - syms) == n && !memcmp(syms, p, n)) {
            uint64_t v;
            size_t vn = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
            if (!tci_parse_u64(eq + 1, vn, INT64_MAX, &v))
                return false;
            *out = (int64_t)v;
            return true;
        }
        syms = end ? end + 1 : NULL;
    }
    return false;
}

/* The value [p, p+n) read as how says: the field's type and numbers. */
static void set_value(tci_ftrace_field *f, const char *p, size_t n, uint8_t how, const char *syms)
{
    f->text = p;
    f->text_len = n;
    f->i = 0;
    f->u = 0;
    f->type = TCI_FTV_TEXT;
    switch (how) {
    case H_HEX:
        if (parse_hex(p, n, &f->u)) {
            f->type = TCI_FTV_UINT;
            f->i = (int64_t)f->u;
        }
        return;
    case H_SYMBOL:
        f->type = TCI_FTV_SYMBOL;
        return;
    case H_TEXT:
        return;
    case H_BYTES:
        f->type = TCI_FTV_BYTES;
        return;
    case H_ENUM:
        if (enum_value(syms, p, n, &f->i)) {
            f->u = (uint64_t)f->i;
            f->type = TCI_FTV_INT;
            return;
        }
        break;
    case H_UNIT_B:
        if (n > 1 && p[n - 1] == 'B' && read_number(f, p, n - 1))
            return;
        break;
    case H_DEVT: {
        const char *colon = memchr(p, ':', n);
        uint64_t major, minor;
        if (colon && tci_parse_u64(p, (size_t)(colon - p), 0xFFF, &major) &&
            tci_parse_u64(colon + 1, n - (size_t)(colon - p) - 1, 0xFFFFF, &minor)) {
            f->u = major << 20 | minor;
            f->i = (int64_t)f->u;
            f->type = TCI_FTV_UINT;
            return;
        }
        break;
    }
    default:
        break;
    }
    if (!read_number(f, p, n)) {
        f->type = TCI_FTV_TEXT;
        f->i = 0;
        f->u = 0;
    }
}

/* ---- the general rule: key=value words ------------------------------------------------ */

typedef struct sink {
    tci_ftrace_field *out;
    int max, n;
} sink;

static void put(sink *s, const char *name, size_t name_len, const char *v, size_t vn, uint8_t how, const char *syms)
{
    if (how == H_DROP)
        return;
    if (s->n < s->max) {
        tci_ftrace_field *f = &s->out[s->n];
        f->name = name;
        f->name_len = name_len;
        set_value(f, v, vn, how, syms);
    }
    s->n++;
}

static bool is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* The key of a word "key=value" (its '=' at *eq), or false. */
static bool keyed_word(const char *w, size_t wn, size_t *eq)
{
    size_t i = 0;
    while (i < wn && is_key_char(w[i]))
        i++;
    if (i == 0 || i >= wn || w[i] != '=')
        return false;
    *eq = i;
    return true;
}

static const ft_key *key_rule(const tci_ftrace_rule *r, const char *k, size_t kn)
{
    for (int i = 0; r && i < 6 && r->keys[i].key; i++)
        if (strlen(r->keys[i].key) == kn && !memcmp(r->keys[i].key, k, kn))
            return &r->keys[i];
    return NULL;
}

/* A field as a rule names it: its member's name and how its value reads. A trailing ',' is
 * the format's ("heap_name=%s, len=%zu"). */
static void put_keyed(sink *s, const tci_ftrace_rule *r, const char *k, size_t kn, const char *v, size_t vn)
{
    while (vn && v[vn - 1] == ',')
        vn--;
    const ft_key *kr = key_rule(r, k, kn);
    if (kr && kr->field)
        put(s, kr->field, strlen(kr->field), v, vn, kr->how, kr->syms);
    else
        put(s, k, kn, v, vn, kr ? kr->how : H_AUTO, kr ? kr->syms : NULL);
}

static void trim(const char **p, size_t *n)
{
    while (*n && tci_is_blank(**p))
        (*p)++, (*n)--;
    while (*n && tci_is_blank((*p)[*n - 1]))
        (*n)--;
}

static void general(const tci_ftrace_rule *r, const char *p, size_t n, sink *s)
{
    const char *key = NULL, *val = NULL, *bare = NULL;
    size_t kn = 0, vn = 0, bn = 0;
    bool any_keyed = false;
    for (size_t i = 0; i < n;) {
        while (i < n && tci_is_blank(p[i]))
            i++;
        if (i >= n)
            break;
        size_t ws = i;
        while (i < n && !tci_is_blank(p[i]))
            i++;
        const char *w = p + ws;
        size_t wn = i - ws, eq;
        bool bracketed = wn > 1 && w[0] == '[' && w[wn - 1] == ']';
        if (bracketed) /* "[action=TIMER]", or a unit: "runtime=%Lu [ns]" */
            w++, wn -= 2;
        if (keyed_word(w, wn, &eq)) {
            if (key)
                put_keyed(s, r, key, kn, val, vn);
            else if (bare)
                put(s, "name", 4, bare, bn, key_rule(r, "", 0) ? H_DROP : H_TEXT, NULL);
            bare = NULL;
            key = w;
            kn = eq;
            val = w + eq + 1;
            vn = wn - eq - 1;
            any_keyed = true;
        } else if (bracketed && key) {
            continue; /* the value's unit */
        } else if (key) { /* more of the value: "comm=Binder thread", "cmd=0x3 BC_REPLY" */
            const ft_key *kr = key_rule(r, "", 0);
            bool comm = kn >= 4 && !memcmp(key + kn - 4, "comm", 4);
            if (kr && kr->how == H_DROP && !comm)
                continue;
            vn = (size_t)(w + wn - val);
        } else { /* the leading words */
            if (!bare)
                bare = w;
            bn = (size_t)(w + wn - bare);
        }
    }
    if (key)
        put_keyed(s, r, key, kn, val, vn);
    if (!any_keyed && bare)
        put(s, "text", 4, bare, bn, H_TEXT, NULL);
}

/* ---- templates ------------------------------------------------------------------------ */

/* Where the literal text that starts template t (up to its next '{' or end; a blank in it is
 * any run of blanks) first occurs in p from i: a value of a template runs to there ("function
 * {function:s} workqueue=" takes "hdd_bus_bw_work_handler [wlan]"). n when it does not. */
static size_t literal_at(const char *p, size_t i, size_t n, const char *t)
{
    size_t tn = 0;
    while (t[tn] && t[tn] != '{')
        tn++;
    if (!tn)
        return n;
    for (size_t from = i; i < n; i++) {
        if (t[0] == ' ' && i > from && tci_is_blank(p[i - 1]))
            continue; /* a run of blanks is tried once, from its start: linear in n */
        size_t j = i, k = 0;
        while (k < tn && j < n) {
            if (t[k] == ' ') {
                if (!tci_is_blank(p[j]))
                    break;
                while (j < n && tci_is_blank(p[j]))
                    j++;
            } else if (p[j++] != t[k]) {
                break;
            }
            k++;
        }
        if (k == tn || (k == tn - 1 && t[k] == ' ' && j == n))
            return i;
    }
    return n;
}

/* Match [p, p+n) against template t: true with the fields put, false with nothing put. */
static bool match_template(const char *t, const char *p, size_t n, sink *s)
{
    sink probe = *s; /* fields go to out only if the whole template matches */
    tci_ftrace_field tmp[8];
    probe.out = tmp;
    probe.max = 8;
    probe.n = 0;
    size_t i = 0;
    while (*t) {
        if (*t == ' ') {
            if (i >= n || !tci_is_blank(p[i]))
                return false;
            while (i < n && tci_is_blank(p[i]))
                i++;
            t++;
        } else if (*t == '{') {
            const char *close = strchr(t, '}'), *colon = memchr(t, ':', (size_t)(close - t));
            const char *name = t + 1;
            size_t name_len = (size_t)((colon ? colon : close) - name);
            uint8_t how = H_AUTO;
            const char *syms = NULL;
            if (colon) {
                switch (colon[1]) {
                case 'x': how = H_HEX; break;
                case 's': how = H_SYMBOL; break;
                case 't': how = H_TEXT; break;
                case 'b': how = H_BYTES; break;
                case 'd': how = H_DEVT; break;
                case '-': how = H_DROP; break;
                case 'e': how = H_ENUM; syms = colon + 3; break;
                default: break;
                }
            }
            t = close + 1;
            size_t b = i;
            i = literal_at(p, i, n, t); /* the value runs to the literal text after it, or to the end */
            if (i == b || (*t && i >= n))
                return false;
            if (probe.n >= probe.max)
                return false;
            if (how == H_ENUM) { /* the symbols run to the '}' */
                char list[64];
                size_t ln = (size_t)(close - syms);
                if (ln >= sizeof list)
                    return false;
                memcpy(list, syms, ln);
                list[ln] = 0;
                int64_t v;
                if (!enum_value(list, p + b, i - b, &v))
                    return false;
                tmp[probe.n] = (tci_ftrace_field){.name = name, .name_len = name_len, .text = p + b, .text_len = i - b,
                                                  .type = TCI_FTV_INT, .i = v, .u = (uint64_t)v};
                probe.n++;
                continue;
            }
            put(&probe, name, name_len, p + b, i - b, how, syms);
            if (how == H_HEX && probe.n && tmp[probe.n - 1].type != TCI_FTV_UINT)
                return false; /* not this template's hex: the next one may fit */
        } else {
            if (i >= n || p[i] != *t)
                return false;
            i++;
            t++;
        }
    }
    if (i != n)
        return false;
    for (int k = 0; k < probe.n; k++, s->n++)
        if (s->n < s->max)
            s->out[s->n] = tmp[k];
    return true;
}

int tci_ftrace_fields(const tci_ftrace_rule *rule, const char *p, size_t n, tci_ftrace_field *out, int max)
{
    trim(&p, &n);
    sink s = {out, max, 0};
    for (int k = 0; rule && k < 3 && rule->templ[k]; k++)
        if (match_template(rule->templ[k], p, n, &s))
            return s.n;
    general(rule, p, n, &s);
    return s.n;
}
