tc_unit_test(leb128 INTERNAL SOURCES unit/leb128.c)
