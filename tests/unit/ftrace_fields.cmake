tc_unit_test(ftrace_fields INTERNAL SOURCES unit/ftrace_fields.c)
