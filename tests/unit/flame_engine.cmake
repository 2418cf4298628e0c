tc_unit_test(flame_engine INTERNAL SOURCES unit/flame_engine.c)

# flame_render: the engine on a folded file in any mode, for test_flamegraph.py (differential
# graphs against flamegraph.pl) and test_flamegraph_browser.py (graphs embedded in a page).
add_executable(flame_render unit/flame_render.c)
target_compile_definitions(flame_render PRIVATE TC_BUILDING_LIBRARY)
target_include_directories(flame_render PRIVATE ${TC_INTERNAL_INCLUDE_DIRS})
target_link_libraries(flame_render PRIVATE traceconv_internal)
set_target_properties(flame_render PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
