tc_unit_test(extsort INTERNAL SOURCES unit/extsort.c)
