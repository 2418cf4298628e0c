tc_unit_test(textout_numbers INTERNAL SOURCES unit/textout_numbers.c)
target_link_libraries(textout_numbers PRIVATE m)
