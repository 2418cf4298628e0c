tc_unit_test(text INTERNAL SOURCES unit/text.c)
