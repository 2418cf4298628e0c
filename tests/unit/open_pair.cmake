tc_unit_test(open_pair SOURCES unit/open_pair.c)
target_compile_definitions(open_pair PRIVATE TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
