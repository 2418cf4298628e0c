tc_unit_test(core_calltree INTERNAL SOURCES unit/core_calltree.c)
