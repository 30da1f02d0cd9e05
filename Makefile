# The two set-up commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test clean format check-layers bench

all: build

deps:
	@scripts/install-deps

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@scripts/demo $(BUILD)

test: build check-layers
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check-layers:
	@scripts/check-layers

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h')

clean:
	rm -rf $(BUILD)
