tc_unit_test(nearmiss INTERNAL SOURCES unit/nearmiss.c)
