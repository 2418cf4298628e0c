/* cli_util.h - what the command's subcommands (batch, serve) share. */
#ifndef TRACECONV_CLI_UTIL_H
#define TRACECONV_CLI_UTIL_H

#include <stdint.h>

/* A size in bytes with an optional K, M, G or T suffix (powers of 1024, either case).
 * 0, or -1 when s is not such a size or it overflows 64 bits. */
int cli_parse_size(const char *s, uint64_t *out);

#endif
