tc_unit_test(option_tables INTERNAL SOURCES unit/option_tables.c)
