# src/util/compat.c twice: with this system's own calls, and with every portable fallback
# (TCI_PORTABLE: what macOS and the BSDs run where Linux has its own call), the same checks.
foreach(variant compat compat_portable)
  tc_unit_test(${variant} INTERNAL SOURCES unit/compat.c ${PROJECT_SOURCE_DIR}/src/util/compat.c)
  target_link_libraries(${variant} PRIVATE Threads::Threads)
endforeach()
target_compile_definitions(compat_portable PRIVATE TCI_PORTABLE)
