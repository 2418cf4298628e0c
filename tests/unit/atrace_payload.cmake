tc_unit_test(atrace_payload INTERNAL SOURCES unit/atrace_payload.c)
