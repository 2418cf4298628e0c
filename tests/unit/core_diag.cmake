tc_unit_test(core_diag INTERNAL SOURCES unit/core_diag.c)
