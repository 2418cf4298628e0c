/* fuzz_convert.c - what the command does: probe the format from content,
 * then convert with every writer (each in its own conversion). */
#include "traceconv.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        return 0;
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++) {
        if (f->is_reader)
            continue;
        tc_conv *c = tc_conv_new();
        if (!c)
            return 0;
        tc_conv_set_option(c, "max-input", "64M");
        int rc = tc_conv_open_memory(c, data, size, "fuzz.input", NULL);
        if (rc == TC_OK)
            tc_conv_write(c, f->name, sink);
        tc_conv_free(c);
        if (rc != TC_OK) /* the input is refused the same way by every writer */
            break;
    }
    return 0;
}
