tc_unit_test(rhea_side_files SOURCES unit/rhea_side_files.c)
