tc_unit_test(core_normalize INTERNAL SOURCES unit/core_normalize.c)
