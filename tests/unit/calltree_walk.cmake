tc_unit_test(calltree_walk INTERNAL SOURCES unit/calltree_walk.c)
