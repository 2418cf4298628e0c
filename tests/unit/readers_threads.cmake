tc_unit_test(readers_threads SOURCES unit/readers_threads.c)
