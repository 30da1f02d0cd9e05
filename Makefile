# The two set-up commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test clean format check-layers check-function-length thread-safety bench

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

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h')

# Side-by-side benchmark against restic and borg (bench/README.md): builds Release into
# build-release/, makes its datasets under bench/work/ (or $HAVEN_BENCH_DIR), appends to
# bench/RESULTS.md. Heavy (GBs of data, tens of minutes); not part of `make test`.
BENCH_ARGS ?= --rounds 3
bench: deps
	bench/compare $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)
