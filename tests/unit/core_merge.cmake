tc_unit_test(core_merge INTERNAL SOURCES unit/core_merge.c)
