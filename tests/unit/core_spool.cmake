tc_unit_test(core_spool INTERNAL SOURCES unit/core_spool.c)
