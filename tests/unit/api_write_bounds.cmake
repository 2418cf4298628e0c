tc_unit_test(api_write_bounds SOURCES unit/api_write_bounds.c)
