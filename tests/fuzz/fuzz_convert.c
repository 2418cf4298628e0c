/* fuzz_convert.c - what the command does: probe the format from content,
 * then convert with the writer and options the control block chooses
 * (fuzz_target.h). */
#include "fuzz_target.h"

#include <stddef.h>

const char *const fuzz_reader = NULL;
