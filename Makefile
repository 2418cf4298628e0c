# traceconv: the two commands of the quick start are `make demo` and `make test`.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_GEN   = cmake -S . -B

.PHONY: all build demo test test-asan bench fuzz install clean corpus

all: build

build:
	@scripts/setup.sh build
	@$(CMAKE_GEN) $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

# The whole suite, warnings as errors, then once more under ASan+UBSan.
test:
	@scripts/setup.sh test
	@$(CMAKE_GEN) $(BUILD) -DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
	@$(MAKE) --no-print-directory test-asan

test-asan:
	@$(CMAKE_GEN) $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTC_WERROR=ON -DTC_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ctest --output-on-failure -j$(JOBS)

bench:
	@scripts/setup.sh bench
	@$(MAKE) --no-print-directory build
	@bench/run.sh $(BUILD)

# libFuzzer targets (clang), each for FUZZ_SECONDS (default 600); crashes go to tests/fuzz/regressions/.
fuzz:
	@scripts/setup.sh fuzz
	@CC=clang $(CMAKE_GEN) build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_BUILD_FUZZERS=ON -DTC_SANITIZE=ON \
		-DTC_BUILD_TESTS=OFF >/dev/null
	@cmake --build build-fuzz -j$(JOBS)
	@scripts/fuzz.sh build-fuzz

install: build
	@cmake --install $(BUILD)

corpus:
	@corpus/regen.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
