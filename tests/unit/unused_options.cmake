tc_unit_test(unused_options SOURCES unit/unused_options.c)
