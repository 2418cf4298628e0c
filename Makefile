# traceconv: the two commands of the quick start are `make demo` and `make test`;
# `make check` is the quick loop while working (build, unit tests, the fast tests).
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# the CPUs: getconf on Linux and macOS alike (nproc is GNU coreutils')
JOBS       ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 2)
# Mutants in the sanitizer pass (the normal pass runs 3000 trace and 600 mapping mutants
# with another seed): an ASan conversion is about 5x slower, and make test must stay under
# 12 minutes on 2 cores. test_fuzz_replay runs every seed through every writer there too,
# with the defaults and ASAN_REPLAY_SETS of the other option sets (rotating, seeded).
ASAN_MUTATIONS ?= 500
ASAN_DEOBF_MUTATIONS ?= 200
ASAN_REPLAY_SETS ?= 3
# The layers (tests/<layer>/, ctest labels) the sanitizer pass runs: those whose inputs reach
# the corners where memory errors live (see test: below).
SANITIZE_LAYERS ?= unit|cli|stress
CMAKE_GEN   = cmake -S . -B
# $(call configure,DIR,FLAGS): cmake, its output kept in DIR/configure.log. It finds every
# dependency and installs none (scripts/setup.sh does): a missing one stops it with one line
# naming the package to install (cmake/deps.cmake), shown alone; another failure shows the
# log's end and where it is. On success, the optional parts left out are said (one line each).
configure = mkdir -p $(1) && if $(CMAKE_GEN) $(1) $(2) > $(1)/configure.log 2>&1; then \
	  sed -n -e 's/^-- \(traceconv: batch without.*\)/\1/p' \
	         -e 's/^-- \(traceconv: no serve.*\)/\1/p' $(1)/configure.log; \
	elif grep -q '^ *traceconv: ' $(1)/configure.log; then \
	  sed -n 's/^ *\(traceconv: .*\)/\1/p' $(1)/configure.log >&2; exit 1; \
	else \
	  tail -n 20 $(1)/configure.log >&2; echo "make: cmake failed (its log: $(1)/configure.log)" >&2; exit 1; \
	fi

.PHONY: all build demo check test test-asan test-tsan bench fuzz install clean corpus

all: build

# make, make build and make install install nothing: a missing dependency is named, with
# the command that installs it (or run scripts/setup.sh build, which does).
build:
	@$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=Release)
	@cmake --build $(BUILD) -j$(JOBS)

# The demo says one line per step (setup, build, conversions, screenshots) and its results;
# the steps' own output goes to $(BUILD)/demo.log, whose end is shown when one fails.
demo:
	@scripts/demo.sh $(BUILD) $(JOBS)

# The quick loop (under a minute on 2 cores once built): the normal build and the tests
# labelled `quick`: the unit, golden and cli layers but their slowest tests (tests/CMakeLists.txt,
# TC_SLOW_TESTS). The C unit tests convert every reader's inputs through every writer; the
# goldens say what each reader understands. No sanitizer, no oracle, no browser: make test.
check:
	@scripts/setup.sh test
	@$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON)
	@cmake --build $(BUILD) -j$(JOBS)
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L quick

# The whole suite, warnings as errors; then the layers that find memory errors
# (SANITIZE_LAYERS: unit, cli, stress) once more under ASan+UBSan; then the threaded
# API tests under ThreadSanitizer. The sanitizer pass runs the code where memory
# errors are found: mutants, fuzz seeds and every past crash through every writer
# with every option set, bad, odd and hostile inputs, the library's API (unit) and
# the commands' edges (cli; but test_install and test_standalone, whose checks do
# not depend on the build: tests/CMakeLists.txt, TC_NOT_SANITIZED). The oracle,
# golden and browser layers are not run again: they judge the bytes and the IR of
# well-formed inputs that the normal pass already judged, made by the same code
# (the oracle layer took 29% of the sanitizer pass's CPU time, the golden layer
# 13%); their inputs are fuzz seeds (test_fuzz_replay: the corpus, tests/json,
# tests/ir and every reader golden's input, through every writer with every seed
# option set) and the mutants start from them. The two passes
# share one oracle cache, emptied here: a third-party reader given the very bytes
# it already read in this run is not started again (tests/lib/tclib.py,
# Ctx.oracle). The sanitizer pass also computes its expected outputs (the
# single-file conversions batch is compared with) with the normal build's
# traceconv, TC_REFERENCE_TRACECONV: the same bytes at a fraction of the cost;
# the commands under test still run sanitized.
ORACLE_CACHE = $(abspath $(BUILD))/oracle-cache
test:
	@scripts/setup.sh test
	@$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON)
	@cmake --build $(BUILD) -j$(JOBS)
	@rm -rf $(ORACLE_CACHE) && mkdir -p $(ORACLE_CACHE)
	@cd $(BUILD) && TC_ORACLE_CACHE=$(ORACLE_CACHE) ctest --output-on-failure -j$(JOBS)
	@$(MAKE) --no-print-directory test-asan TC_ORACLE_CACHE=$(ORACLE_CACHE) \
		TC_REFERENCE_TRACECONV=$(abspath $(BUILD))/traceconv
	@$(MAKE) --no-print-directory test-tsan

test-asan:
	@$(call configure,$(ASAN_BUILD),-DCMAKE_BUILD_TYPE=Debug -DTC_WERROR=ON -DTC_SANITIZE=ON)
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		TC_ORACLE_CACHE=$(TC_ORACLE_CACHE) TC_REFERENCE_TRACECONV=$(TC_REFERENCE_TRACECONV) TC_MUTATIONS=$(ASAN_MUTATIONS) TC_DEOBF_MUTATIONS=$(ASAN_DEOBF_MUTATIONS) TC_REPLAY_SETS=$(ASAN_REPLAY_SETS) ctest --output-on-failure -j$(JOBS) \
		-L '^($(SANITIZE_LAYERS))$$'

# Only what the stage needs: the library, tests/unit/api_threads.c, readers_threads.c and api_pipe.c.
test-tsan:
	@$(call configure,$(TSAN_BUILD),-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_WERROR=ON -DTC_TSAN=ON)
	@cmake --build $(TSAN_BUILD) -j$(JOBS) --target api_threads readers_threads api_pipe core_handoff
	@cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --output-on-failure -j$(JOBS) -R '^(api_threads|readers_threads|api_pipe|api_pipe_2|core_handoff)$$'

bench:
	@scripts/setup.sh bench
	@$(MAKE) --no-print-directory build
	@bench/run.sh $(BUILD)

# libFuzzer targets (clang), each for FUZZ_SECONDS (default 600); crashes go to tests/fuzz/regressions/.
fuzz:
	@scripts/setup.sh fuzz
	@export CC=clang && $(call configure,build-fuzz,-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_BUILD_FUZZERS=ON \
		-DTC_SANITIZE=ON -DTC_BUILD_TESTS=OFF)
	@cmake --build build-fuzz -j$(JOBS)
	@scripts/fuzz.sh build-fuzz

install: build
	@cmake --install $(BUILD)

corpus:
	@corpus/regen.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) build-fuzz
