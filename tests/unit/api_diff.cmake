tc_unit_test(api_diff SOURCES unit/api_diff.c)
target_compile_definitions(api_diff PRIVATE TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
