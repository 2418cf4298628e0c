tc_unit_test(core_tables INTERNAL SOURCES unit/core_tables.c)
