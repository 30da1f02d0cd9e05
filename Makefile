# The two set-up commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test clean format check-layers check-function-length thread-safety \
        asan tsan tsan-unit bench

all: build

deps:
	@scripts/install-deps

# The project's own builds treat warnings as errors (a packager's build does not: HAVEN_WERROR
# is off for an explicit build type other than Debug).
$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DHAVEN_WERROR=ON

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The demo needs the haven binary only, not the unit tests, benchmarks and fuzz replays.
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target haven
	@scripts/demo $(BUILD)
	@scripts/demo-next $(BUILD)

test: build check-layers check-function-length thread-safety
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check-layers:
	@scripts/check-layers

# No non-test function over 150 lines, except those in scripts/function-length-allow.
check-function-length:
	@scripts/check-function-length

# clang's -Wthread-safety -Werror over every non-test source (flags from the build's
# compile_commands.json), plus a file that must fail it (tests/thread_safety/).
thread-safety: deps $(BUILD)/build.ninja
	@scripts/check-thread-safety $(BUILD)

# Sanitizer builds (docs/testing.md): everything at -O1 -g with -fsanitize=..., in its own
# build folder, then the unit, integration and fuzz-replay tests under it. A finding fails
# its test. CTEST_ARGS narrows the run (e.g. CTEST_ARGS='-R Index').
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
CTEST_ARGS ?=
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TSAN_ENV = TSAN_OPTIONS='halt_on_error=1 second_deadlock_stack=1 history_size=4'

$(ASAN_BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DHAVEN_WERROR=OFF -DHAVEN_SANITIZE=address,undefined

$(TSAN_BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DHAVEN_WERROR=OFF -DHAVEN_SANITIZE=thread

# AddressSanitizer + UndefinedBehaviorSanitizer (leaks included).
asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# ThreadSanitizer: unit and integration tests (no fuzz replays: single-threaded parsers).
tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# ThreadSanitizer over the unit tests only (builds only haven_unit_tests).
tsan-unit: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target haven_unit_tests
	cd $(TSAN_BUILD) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) \
	  -E '^(integration\.|haven_s3_tests_NOT_BUILT$$)' -LE s3 $(CTEST_ARGS)

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h')

# Side-by-side benchmark against restic and borg (bench/README.md): builds Release into
# build-release/, makes its datasets under bench/work/ (or $HAVEN_BENCH_DIR), appends to
# bench/RESULTS.md. Heavy (GBs of data, tens of minutes); not part of `make test`.
BENCH_ARGS ?= --rounds 3
bench: deps
	bench/compare $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
