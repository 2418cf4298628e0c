tc_unit_test(escape INTERNAL SOURCES unit/escape.c)
