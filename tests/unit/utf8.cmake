# The one UTF-8 decoder, and every caller's rule: the command's terminal escapes are compiled in.
tc_unit_test(utf8 INTERNAL SOURCES unit/utf8.c ${PROJECT_SOURCE_DIR}/src/cli/cli_util.c)
