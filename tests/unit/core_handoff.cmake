# Also under ThreadSanitizer (make test-tsan).
tc_unit_test(core_handoff INTERNAL SOURCES unit/core_handoff.c)
