tc_unit_test(api_threads SOURCES unit/api_threads.c)
target_compile_definitions(api_threads PRIVATE TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(api_threads PRIVATE Threads::Threads)
