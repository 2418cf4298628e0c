tc_unit_test(api_contract SOURCES unit/api_contract.c)
target_compile_definitions(api_contract PRIVATE TC_CMAKE_PROJECT_VERSION="${PROJECT_VERSION}" TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
