/* fuzz_reader.c - one reader and the normalize stage, on any bytes; built once
 * per reader with -DFUZZ_READER="name" (CMake: TC_FUZZ_READERS). Output goes to
 * the IR dump writer, so every event reaches a writer. */
#include "traceconv.h"

#include <stdint.h>
#include <stdio.h>

#ifndef FUZZ_READER
#error "build with -DFUZZ_READER=\"<reader name>\""
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        return 0;
    tc_conv *c = tc_conv_new();
    if (!c)
        return 0;
    tc_conv_set_option(c, "max-input", "64M"); /* keep one input fast: a bomb is still refused */
    if (tc_conv_open_memory(c, data, size, "fuzz.input", FUZZ_READER) == TC_OK)
        tc_conv_write(c, "ir", sink);
    tc_conv_free(c);
    return 0;
}
