/* batch.h - `traceconv batch`: many inputs (files, directories, archives) in one run. */
#ifndef TRACECONV_CLI_BATCH_H
#define TRACECONV_CLI_BATCH_H

/* argv[0] is "batch"; returns the exit status (0 all converted, 1 some failed, 2 usage). */
int batch_main(int argc, char **argv);

#endif
