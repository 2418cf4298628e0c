/*
 * diffconv.c - traceconv diff's call (tc_diff_write; doc/diff-and-reports.md, "Diff"): two inputs, each read by
 * its own tc_conv exactly as for a conversion (tci_conv_aggregate runs conv.c's pipeline into
 * analysis/diff.c's capture writer, which is not registered), then compared (tci_diff_compare)
 * and rendered by the diff format asked for (writers/diff_*.c, found in the registry).
 * The engine's: it drives conversions; what it compares is analysis/tc_diff.h's.
 */
#include "tc_base.h"
#include "tc_diag.h"
#include "tc_diff.h"
#include "tc_engine.h"
#include "tc_flame.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "tc_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const side_label[2] = {"BASE", "NEW"};

typedef int (*render_fn)(const tci_diff *d, tci_sink *o);

/* "BASE: a.trace: art: offset 0x10: truncated record" into NEW's message slot. */
static int side_failed(tc_conv *next, int side, const char *why, int rc)
{
    tci_diag *d = tci_conv_error_slot(next);
    char copy[sizeof d->error];
    snprintf(copy, sizeof copy, "%s", why[0] ? why : tc_status_string(rc));
    int n = snprintf(d->error, sizeof d->error, "%s: ", side_label[side]);
    snprintf(d->error + n, sizeof d->error - (size_t)n, "%.*s", (int)(sizeof d->error - (size_t)n - 1), copy);
    return rc;
}

/* Read one input into its side of d. */
static int read_side(tci_diff *d, tc_conv *c, int side, tc_conv *next)
{
    tci_diff_capture cp = {.d = d, .side = side};
    if (c != next)
        tci_conv_call_begin(c);
    int rc = tci_conv_aggregate(c, &tci_diff_capture_writer, &cp, "tc_diff_write");
    if (c != next)
        tci_conv_call_end(c, rc);
    if (rc != TC_OK)
        return side_failed(next, side, tci_conv_diag(c)->error, rc);
    d->side[side].trace = tci_conv_trace_of(c);
    d->side[side].diag = tci_conv_diag(c);
    d->side[side].summary = tc_conv_input_summary(c);
    return TC_OK;
}

/* A method pattern (focus, ignore) may name a method of one input only (one a change added or
 * removed): each input's selection takes it so (tci_options.patterns_may_miss); one that
 * matches no method of either input is the usage error a conversion gives, with the closest
 * names of both. */
static void patterns_may_miss(tc_conv *c)
{
    /* the conv's own options, which a diff's inputs are handed to it to set (tc_diff_write) */
    ((tci_options *)tci_conv_options(c))->patterns_may_miss = true;
}

static int diff_run(tc_conv *base, tc_conv *next, render_fn render, tci_diff *d, tci_sink *out)
{
    patterns_may_miss(base);
    patterns_may_miss(next);
    for (int side = 0; side < 2; side++) {
        tc_conv *c = side == TCI_DIFF_BASE ? base : next;
        int rc = read_side(d, c, side, next);
        if (rc != TC_OK) {
            tci_conv_consume(next); /* a diff consumes both inputs, success or not */
            return rc;
        }
    }
    int rc = tci_diff_compare(d, tci_conv_error_slot(next));
    if (rc == TC_OK)
        rc = render(d, out);
    if (rc == TC_ERR_NOMEM)
        tci_error(tci_conv_error_slot(next), rc, "diff", UINT64_MAX, "out of memory");
    return rc;
}

/* Refusals before anything is read: both convs stay OPEN. */
static int check_call(tc_conv *base, tc_conv *next, const char *format, const tci_diff_format **which)
{
    tci_diag *e = tci_conv_error_slot(next);
    const char *input = e->input;
    e->input = NULL; /* about the call, not an input */
    int rc = TC_OK;
    *which = tci_find_diff_format(format); /* format names in any case, as the registry's */
    if (base == next)
        rc = tci_error(e, TC_ERR_USAGE, "api", UINT64_MAX, "tc_diff_write: BASE and NEW are one tc_conv; open each input in its own");
    else if (!*which)
        rc = tci_error(e, TC_ERR_USAGE, "options", UINT64_MAX, "unknown diff format '%s' (%s)", format ? format : "",
                       tci_diff_format_names());
    else if (!tci_conv_is_open(base) || !tci_conv_is_open(next))
        rc = tci_error(e, TC_ERR_STATE, "api", UINT64_MAX,
                       "tc_diff_write: %s is not an opened, unconverted input (open each with tc_conv_open first)",
                       tci_conv_is_open(base) ? "NEW" : "BASE");
    e->input = input;
    return rc;
}

static int diff_call(tc_conv *base, tc_conv *next, const char *format, tci_sink *out)
{
    const tci_diff_format *which;
    int rc = check_call(base, next, format, &which);
    if (rc != TC_OK)
        return rc;
    tci_diff d = {.opt = tci_conv_options(next)};
    d.merge_threads = true; /* runs of an app have other tids: towers per "name-tid" would never match */
    if (!d.opt->merge_threads && tci_option_given(d.opt, "merge-threads")) /* merge-threads=0 given: per thread */
        d.merge_threads = false;
    if (which->flame && !(d.flame = tci_flame_new(true)))
        rc = tci_error(tci_conv_error_slot(next), TC_ERR_NOMEM, "diff", UINT64_MAX, "out of memory");
    if (rc == TC_OK)
        rc = diff_run(base, next, which->render, &d, out);
    tci_diff_free(&d);
    return rc;
}

/* max-output, as NEW's output options give it (Nx: of both inputs' bytes). The sizes are
 * known once both are open, which a diff that starts requires; before that, no bound. */
static void bound_output(tc_conv *base, tc_conv *next, tci_sink *out)
{
    if (base != next && tci_conv_is_open(base) && tci_conv_is_open(next))
        out->limit = tci_output_limit(tci_conv_options(next), tci_conv_input_size(base) + tci_conv_input_size(next));
}

/* The sink is closed whatever happened; a write error is the call's when nothing else failed. */
static int finish_sink(tc_conv *next, tci_sink *out, int rc)
{
    int closed = tci_sink_close(out);
    if (out->err && out->status == TC_ERR_LIMIT && (rc == TC_OK || rc == TC_ERR_IO))
        return tci_output_limit_error(tci_conv_error_slot(next), tci_conv_options(next), "diff", out->limit);
    if (rc == TC_OK && (closed != TC_OK || out->err)) {
        tci_diag *e = tci_conv_error_slot(next);
        e->error[0] = 0;
        char why[256];
        tci_write_error_text(out->errnum ? out->errnum : EIO, why, sizeof why);
        rc = tci_error(e, TC_ERR_IO, "diff", UINT64_MAX, "cannot write the output: %s", why);
    }
    return rc;
}

/* A required argument of the named call is NULL: a usage error said without the input's name. */
static int null_argument(tc_conv *next, const char *call)
{
    tci_diag *e = tci_conv_error_slot(next);
    const char *input = e->input;
    e->input = NULL;
    tci_error(e, TC_ERR_USAGE, "api", UINT64_MAX, "%s: a required argument is NULL", call);
    e->input = input;
    return tci_conv_call_end(next, TC_ERR_USAGE);
}

/* The diff into out, once opened (opened: its tci_sink_open's result); the call ended. */
static int diff_into(tc_conv *base, tc_conv *next, const char *format, tci_sink *out, int opened)
{
    if (opened != TC_OK)
        return tci_conv_call_end(next, opened);
    bound_output(base, next, out);
    int rc = diff_call(base, next, format, out);
    return tci_conv_call_end(next, finish_sink(next, out, rc));
}

int tc_diff_write_to(tc_conv *base, tc_conv *next, const char *format, tc_write_fn fn, void *user)
{
    if (!next)
        return TC_ERR_USAGE;
    tci_conv_call_begin(next);
    if (!base || !fn)
        return null_argument(next, "tc_diff_write_to");
    tci_sink out;
    return diff_into(base, next, format, &out, tci_sink_open_fn(&out, fn, user, false));
}

int tc_diff_write(tc_conv *base, tc_conv *next, const char *format, FILE *fp)
{
    if (!next)
        return TC_ERR_USAGE;
    tci_conv_call_begin(next);
    if (!base || !fp)
        return null_argument(next, "tc_diff_write");
    tci_sink out;
    return diff_into(base, next, format, &out, tci_sink_open(&out, fp, false));
}
