tc_unit_test(deobfuscate INTERNAL SOURCES unit/deobfuscate.c)
