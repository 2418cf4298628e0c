# Two halves side by side (api_pipe, api_pipe_2): under TSan the whole took 55 s, the rest of
# that stage's tests a few seconds.
tc_unit_test(api_pipe SOURCES unit/api_pipe.c ARGS 1)
target_compile_definitions(api_pipe PRIVATE TC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
tc_unit_run(api_pipe_2 api_pipe 2)
