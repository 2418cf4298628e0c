tc_unit_test(input_shrinks SOURCES unit/input_shrinks.c)
target_link_libraries(input_shrinks PRIVATE Threads::Threads)
