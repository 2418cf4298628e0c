/* batch.h - `traceconv batch`: many inputs (files, directories, archives) in one run. */
#ifndef TRACECONV_CLI_BATCH_H
#define TRACECONV_CLI_BATCH_H

/* argv[0] is "batch"; returns the exit status (0 all converted, 1 some failed, 2 usage). */
int batch_main(int argc, char **argv);

/* `traceconv batch --merge-summaries [--summary FILE] SUMMARY...` (batch_summary.c): the
 * shards' summaries merged into one unsharded run's; 0, 1 (an error, said) or 2 (usage). */
int batch_merge_main(int argc, char **argv);

/* Whether the file leaf in dirfd is a batch summary (or empty): one that may be replaced
 * (batch_summary.c, which knows what a summary is; batch.c calls it, never the other way). */
int batch_is_summary(int dirfd, const char *leaf);

#endif
