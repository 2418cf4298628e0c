tc_unit_test(jscan_numbers INTERNAL SOURCES unit/jscan_numbers.c)
