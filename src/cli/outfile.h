/* outfile.h - the output files of every command, in one place (zstd's programs/fileio.c
 * is the model): the default names, a registry that keeps the names of one run apart, the
 * overwrite rules, the temporary file beside the target, the atomic rename, and the
 * removal of temporary files on error and on signals. A conversion (main.c: one input or
 * several, several formats, diff), batch (batch.c) and serve's store (serve_store.c: the
 * files of a result, the API's unlinked outputs) go through it; the library never sees
 * an output's name.
 *
 * The rules, the same for every command:
 *   - a default name is the input's stem and the output variant's extension (the library's
 *     tc_variant_info: report-html's ".report.html", so that no two outputs of one input
 *     share a name), and never names the input: "cap.txt" with -o report is
 *     cap.report.txt, "x.html" with -o systrace is x.systrace.html (of_output_name);
 *   - no two outputs of one run get one name: batch picks the first free stem, "x",
 *     "x-1", "x-2", for all of a member's outputs at once (of_plan_stem); a conversion of
 *     several inputs refuses an output an earlier input of the command was given;
 *   - traceconv's own output of the same variant (its mark, tc_variant_info.mark, in its
 *     first or last 8 KiB, or the extended attribute user.traceconv.output naming the
 *     variant and the file's size and mtime when written, which every output gets where the
 *     file system keeps one: a variant without a mark in its bytes, folded or pprof, is
 *     known by it, and a file changed since is not) is replaced without -f:
 *     re-running a conversion is the common case; any other existing file is replaced
 *     only with -f, never when it is one of the inputs or an original trace (one a reader
 *     recognizes, not written by traceconv), never a directory; a symbolic link at the
 *     target, dangling or not, is not replaced without -f, and with -f the link itself is
 *     replaced (its target is never written);
 *     a FIFO or device is written into (conversions only);
 *   - the output is written to a temporary file beside the target, of a fixed short name
 *     (".tc-XXXXXX", so a legal 255-byte name works), and renamed over it when complete;
 *     a failed output removes it, and so do SIGINT, SIGTERM, SIGHUP and SIGPIPE;
 *   - SIGXFSZ is ignored: a write past `ulimit -f` fails with EFBIG, which is said as
 *     "file size limit exceeded", instead of killing the process and leaving the
 *     temporary file behind.
 */
#ifndef TRACECONV_CLI_OUTFILE_H
#define TRACECONV_CLI_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* ---- the process ---- */

/* Once, first thing: reads the umask (outputs get 0666 & ~umask, as any file a program
 * creates) and ignores SIGXFSZ. */
void of_init(void);
/* The outputs of this process are private (serve's store: uploads and results are the
 * uploader's): the umask becomes 077, and output files get 0600. After of_init. */
void of_private_outputs(void);
/* A single-threaded command: SIGINT, SIGTERM, SIGHUP and SIGPIPE remove every temporary
 * file, then the process dies of the signal. */
void of_remove_temps_on_signals(void);
/* A multi-threaded command's signal thread (batch): removes every temporary file and keeps
 * the registry locked, so that no new one appears before the process dies. */
void of_remove_temps_and_hold(void);
/* An unlinked temporary file in the directory dirfd (O_TMPFILE; else a name made and
 * removed under the registry's lock, so that no signal leaves it behind): the fd, read and
 * write, or -1 (errno). of_scratch: in the directory dir. */
int of_scratch_at(int dirfd);
int of_scratch(const char *dir);
/* strerror(err), but EFBIG (a write past `ulimit -f`, or past the file system's largest
 * file) is "file size limit exceeded". */
const char *of_strerror(int err);

/* ---- names ---- */

/* The length of path without the extension of its last component: "d/x.trace" -> "d/x",
 * "x.trace.gz" -> "x" (a compressed input's own extension goes too); a leading dot is
 * part of the name (".hidden" stays). */
size_t of_stem_len(const char *path);
/* The output name stem[0, stem_len) + "." + ext; when that is the input's own name (its
 * last component, compared without case), stem + "." + writer + "." + ext instead:
 * cap.txt -> cap.report.txt, x.html -> x.systrace.html. input may be NULL (stdin).
 * malloc'd, NULL when out of memory. */
char *of_output_name(const char *stem, size_t stem_len, const char *input, const char *writer, const char *ext);

/* A set of names taken in one run. Names are kept as 64-bit hashes of their bytes with
 * ASCII case folded unless exact (so two names that a case-insensitive file system would
 * merge count as one): 16 bytes a name at most, whatever its length. A hash collision (odds of 1 in
 * 10^8 over a billion names) can only make a name look taken: it is then not given, which
 * loses nothing. */
typedef struct of_names {
    uint64_t *slots;
    size_t cap, count;
    int exact; /* 1: compare names with their case (names of the files of a conversion, which exist) */
} of_names;
/* 1: name was free and is now taken; 0: it was taken already; -1: out of memory. */
int of_names_take(of_names *s, const char *name);
int of_names_has(const of_names *s, const char *name);
/* The directory dir holds outputs: no output file may take its name (of_plan_stem) and it
 * may not be a file's (check of_names_has(dir) first). 0, or -1: out of memory. */
int of_names_take_dir(of_names *s, const char *dir);
void of_names_free(of_names *s);
/* The first of want, want-1, want-2, ... whose outputs for the n writers (of_output_name
 * with input and exts[i]) are all free (neither an output's nor a directory's name), all of
 * them taken; malloc'd, NULL when out of memory. */
char *of_plan_stem(of_names *s, const char *want, const char *input, const char *const *writers,
                   const char *const *exts, size_t n);

/* ---- the overwrite rules ---- */

enum { OF_REFUSED = -1, OF_ABSENT = 0, OF_REPLACE, OF_INTO, OF_OWN };
typedef struct of_rules {
    int force;             /* -f */
    const char *variant;   /* the output variant to be written ("report-html"): its own earlier
                              output is replaced without -f (NULL: none is known) */
    const char *mark;      /* that variant's mark (tc_variant_info.mark; NULL: none) */
    int allow_special;     /* a FIFO or a device (or a link to one, as /dev/stdout) is written into */
    const struct stat *inputs; /* the command's inputs of this output: never replaced */
    size_t n_inputs;
} of_rules;
/* What may be done at leaf in dirfd (shown is the name to probe it by and to show):
 * OF_ABSENT nothing is there, OF_REPLACE an existing file (or link) that may be replaced,
 * OF_OWN an earlier output of the same variant, replaced (without -f), OF_INTO a FIFO or
 * device to write into; or OF_REFUSED with why (without the name): "exists and traceconv
 * did not write it; use -f to overwrite", "is a trace (the art reader recognizes it); not
 * overwriting it, even with -f", ... */
int of_check(int dirfd, const char *leaf, const char *shown, const of_rules *r, char *why, size_t whylen);

/* Whether the file at leaf (a path under dirfd) is traceconv's own output of variant, with
 * the variant's mark (NULL: none), as of_check tells it: unchanged since it was written. */
int of_own_output(int dirfd, const char *leaf, const char *variant, const char *mark);

/* ---- an output file ---- */

typedef struct of_file {
    int dirfd;        /* the target's directory (the caller's: of_file never closes it) */
    const char *leaf; /* the target's name in it */
    int how;          /* of_check's answer: OF_ABSENT, OF_REPLACE or OF_INTO */
    int slot;         /* the registered temporary file, or -1 */
    const char *variant; /* of_begin_output's: marked on commit */
    FILE *fp;
} of_file;

/* The directory of path, opened to create files in (O_PATH), and its last component;
 * -1 (errno) when it cannot be opened. */
int of_open_dir(const char *path, const char **leaf);
/* The stream to write: a new temporary file beside the target (mode 0666 & ~umask), or the
 * FIFO or device itself for OF_INTO. 0, or -1 with errno; nothing is left on failure. */
int of_begin(of_file *f, int dirfd, const char *leaf, int how);
/* The same for an output of variant ("json"): the file is marked as traceconv's own output
 * of it (the extended attribute user.traceconv.output, where the file system keeps one), so
 * that a run again replaces it without -f. */
int of_begin_output(of_file *f, int dirfd, const char *leaf, int how, const char *variant);
/* Close the stream (every byte written, or the error) and rename the temporary file over
 * the target: atomically replacing it (OF_REPLACE) or only if nothing appeared there in the
 * meantime (OF_ABSENT). 0, or -1 with errno; the temporary file is then removed. */
int of_commit(of_file *f);
/* Close and remove what of_begin made (after a failure); safe to call twice. */
void of_abandon(of_file *f);
/* Take back a committed output that was new (OF_ABSENT): one of several that must appear
 * together, when a later one failed. A file it replaced cannot come back: nothing is done. */
void of_withdraw(of_file *f);

#endif
