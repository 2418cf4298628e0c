tc_unit_test(sink_numbers INTERNAL SOURCES unit/sink_numbers.c)
