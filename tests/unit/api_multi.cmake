tc_unit_test(api_multi SOURCES unit/api_multi.c)
target_compile_definitions(api_multi PRIVATE TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
