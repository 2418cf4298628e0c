/* cli_util.h - what the command's subcommands (conversions, diff, batch, serve) share:
 * sizes, messages on stderr, format names and option errors. */
#ifndef TRACECONV_CLI_UTIL_H
#define TRACECONV_CLI_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* A size in bytes with an optional K, M, G or T suffix (powers of 1024, either case).
 * 0, or -1 when s is not such a size or it overflows 64 bits. */
int cli_parse_size(const char *s, uint64_t *out);

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

/* ---- format names ---- */

/* The registry's name of the reader (reader=1) or writer called name in any case
 * ("JSON" -> "json"), or NULL. */
const char *cli_format_name(const char *name, int reader);
/* "json, folded, perfetto, ...": every reader's or writer's name, for messages. */
const char *cli_format_list(int reader);

/* ---- option errors ----
 * The commands parse with opterr = 0 and an optstring that starts with ':', so that
 * getopt prints nothing (it would echo the option's raw bytes, after the binary's full
 * path): ret is getopt_long's '?' or ':', before the optind before that call. Says,
 * escaped, "PROG: unrecognized option '--x'", "option '-o' requires an argument", ... */
void cli_option_error(const char *prog, int ret, int before, char **argv);

#endif
