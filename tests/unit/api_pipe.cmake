tc_unit_test(api_pipe SOURCES unit/api_pipe.c)
target_compile_definitions(api_pipe PRIVATE TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
