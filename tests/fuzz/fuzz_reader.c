/* fuzz_reader.c - one reader, then any writer with any options (chosen by
 * the input's control block, fuzz_target.h); built once per reader with
 * -DFUZZ_READER="name" (CMake: TC_FUZZ_READERS). */
#include "fuzz_target.h"

#ifndef FUZZ_READER
#error "build with -DFUZZ_READER=\"<reader name>\""
#endif

const char *const fuzz_reader = FUZZ_READER;
