tc_unit_test(core_profile INTERNAL SOURCES unit/core_profile.c)
