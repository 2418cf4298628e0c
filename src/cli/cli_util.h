/* cli_util.h - what the command's subcommands (conversions, diff, batch, serve) share:
 * sizes, messages on stderr, format names and option errors. */
#ifndef TRACECONV_CLI_UTIL_H
#define TRACECONV_CLI_UTIL_H

#include "traceconv.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- numbers: every integer option of the programs' own is read here ----
 *
 * A count is decimal digits only: no sign, space, fraction, exponent or other trailing
 * character, not empty, and within [min, max] (no wrap: 4294967297 is not 1). 0, or -1.
 * (The library's options are read by their rows, hub/options.c, with the same rules.) */
int cli_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* The same, saying on failure "PROG: OPTION VALUE: expected a whole number from MIN to MAX"
 * (then what, when not NULL: "seconds"). 0, or -1 after the message: a usage error. */
int cli_count_option(const char *prog, const char *option, const char *value, uint64_t min, uint64_t max,
                     const char *what, uint64_t *out);
/* A size in bytes: a count with an optional K, M, G or T suffix (powers of 1024, either
 * case), at most 2^64 - 1. 0, or -1 when s is not such a size or it overflows 64 bits. */
int cli_parse_size(const char *s, uint64_t *out);
#define CLI_SIZE_RANGE "from 0 to 18446744073709551615 bytes (16E - 1), K/M/G/T suffixes allowed"

/* ---- standard output, checked as it is closed ----
 *
 * Whatever a command prints on stdout (--help, --version, --list-formats, --probe, a
 * conversion to '-', a merged summary) is only written when the stream is flushed: a full
 * disk or a closed pipe shows only then. Every program checks it in one place, as it
 * ends: cli_finish at the end of main (and an atexit handler, cli_stdout_checked, for the
 * paths that call exit()). A failure is one line, "PROG: standard output: <why>", and exit
 * status 1 when the command had succeeded; a command that already failed (and said why,
 * a conversion to '-' that could not be written) keeps its own message and status. */
void cli_stdout_checked(const char *prog);
int cli_finish(int status);

/* ---- messages: names are hostile, so every message is escaped for the terminal ----
 *
 * A message names files, archive members, methods (in the library's warnings): any of
 * them can hold an escape sequence that retitles or clears the user's terminal. Every
 * line the command prints on stderr goes through cli_say, which shows each control
 * byte (C0 with newline and tab, DEL, the C1 controls U+0080..U+009F, the bidi
 * overrides U+202A..U+202E and U+2066..U+2069) and each byte that is not UTF-8 as a
 * visible escape (\n, \t, \x1b, \u009b): the escaping is the last step, on the whole
 * formatted line. */

/* One line on stderr: the formatted text, escaped, then a newline (one write). */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_vsay(const char *fmt, va_list ap);
/* The progress line: "\r" + the escaped text + "clear to the end of the line", no newline. */
void cli_progress_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clear a progress line drawn before. */
void cli_progress_clear(void);
/* s escaped as cli_say escapes (NUL-terminated, truncated to fit out; cap >= 1). */
void cli_escape(const char *s, char *out, size_t cap);

/* What the input held that was not converted, as the summaries say it: "O 1, ( 2, ) 1",
 * with "N of other kinds" for those the library did not name; "" when nothing. Into out. */
void cli_not_converted_text(const tc_conv *c, char *out, size_t cap);

/* ---- format names ---- */

/* The registry's name of the reader (reader=1) called name or one of its aliases in any case
 * ("JSON" -> "json", "atrace" -> "systrace"), or of the writer's output variant so called
 * ("svg" -> "flamegraph", "html" -> "report-html"); NULL: none. */
const char *cli_format_name(const char *name, int reader);
/* diff's -o: the diff format called name or one of its aliases, in any case; NULL: none. */
const tc_format_info *cli_diff_format(const char *name);
/* "json, folded, perfetto, ...": every reader's or writer's name (a writer's variants too,
 * report-html), for messages. */
const char *cli_format_list(int reader);
/* -o LIST once more: LIST added to *list after a comma (-o json -o perfetto is -o
 * json,perfetto: a second -o replacing the first would lose an output in silence); *list
 * then points at a static buffer. 0, or -1 when the whole is too long. */
int cli_add_formats(const char **list, const char *arg);
/* "text, csv or flamegraph": the diff's formats. */
const char *cli_diff_format_list(void);
enum { CLI_WRITER = 0, CLI_READER = 1, CLI_DIFF_FORMAT = 2 };
/* The name meant by a near miss (perfeto -> perfetto) among the kind's names and aliases, or NULL. */
const char *cli_format_suggest(const char *typed, int kind);
/* "PROG: unknown output format 'perfeto'; did you mean 'perfetto'? (writers: ...)". */
void cli_unknown_format(const char *prog, const char *typed, int kind);

/* A near miss among candidates (edit distance, or a prefix): begin, offer each candidate
 * with the name it stands for, then the result (NULL: none close, or a tie). */
typedef struct cli_suggestion {
    const char *typed, *best; /* best: the target of the closest candidate (a tie: two targets) */
    char said[64];            /* that candidate, as the suggestion says it ("atrace") */
    size_t distance;
    int tie;
} cli_suggestion;
void cli_suggest_begin(cli_suggestion *s, const char *typed);
void cli_suggest_offer(cli_suggestion *s, const char *candidate, const char *target);
const char *cli_suggest_result(const cli_suggestion *s);

/* ---- the library's options, as the commands take them ----
 *
 * Every option of the library's tables (tc_option_at) is a long option of the commands
 * (--weight cpu; a bool is a flag, --strict), described in their --help by its row: the
 * commands list none by hand. Which tables a command takes: */
enum { CLI_CORE = 1, CLI_READERS = 2, CLI_WRITERS = 4, CLI_DIFF = 8, CLI_CONVERT = CLI_CORE | CLI_READERS | CLI_WRITERS,
       CLI_NO_THREADS = 16 /* cli_print_options: the command's own -j entry says --threads */ };
/* Each key once (its first row), in the tables' order: the core's, the readers', the
 * writers', the diff formats'. Returns how many went into out (at most max). */
size_t cli_option_keys(int tables, const tc_option_info **out, size_t max);
/* The keys as getopt long options appended to longopts at *n (max entries in all, the
 * terminating zero entry included): has_arg from the type, val = first_val + the key's
 * index in keys. 0, or -1 when they do not fit. */
struct option;
int cli_longopts(struct option *longopts, size_t *n, size_t max, const tc_option_info *const *keys, size_t n_keys,
                 int first_val);
/* The options part of --help for those tables: the core's, its limits, then each
 * reader's, writer's or (CLI_DIFF) the diff's, each row one entry with its default. */
void cli_print_options(FILE *fp, int tables);
/* One entry of a --help: left, then text from column on, its words wrapped at 90 columns
 * (on the next line when left reaches column). */
void cli_help_entry(FILE *fp, const char *left, const char *text, int column);
/* Whether `traceconv serve`'s API takes the key in its query: a writer's option, or the
 * core's that is neither read by the open, a limit nor hidden (the server sets those). */
int cli_api_option(const char *key);
/* msg as serve's API says it: each option of the API that the library's messages name as the
 * command's flag ("no thread matches --thread 'x'", "--since 2.5 s is at or after",
 * "--until must be after --since", "option 'since'") named as the query's field
 * ("thread='x'", "since=2.5 s", "until= must be after since=", "field since="), into out. */
void cli_query_field_text(const char *msg, char *out, size_t cap);
/* `traceconv --list-formats --json`: the formats, their variants and options, the core's
 * options. serve_member, when not NULL, is added as the member "serve" (GET /api/formats). */
void cli_formats_json(FILE *fp, const char *serve_member);

/* ---- option errors ----
 * The commands parse with opterr = 0 and an optstring that starts with ':', so that
 * getopt prints nothing (it would echo the option's raw bytes, after the binary's full
 * path): ret is getopt_long's '?' or ':', before the optind before that call. Says,
 * escaped, "PROG: unrecognized option '--x'", "option '-o' requires an argument", ...;
 * an unknown long option near one of longopts (NULL: none) gets "; did you mean --colors?". */
void cli_option_error(const char *prog, int ret, int before, char **argv, const struct option *longopts);

#endif
