tc_unit_test(perfetto_clock INTERNAL SOURCES unit/perfetto_clock.c)
