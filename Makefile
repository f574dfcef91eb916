# The front door. Every target installs what is missing first.
#   make demo    build and run the carom program on its default scene
#   make test    build with ASan+UBSan (gcc), and warnings-only with clang; run every test
#   make bench   build optimised and run every benchmark (JSON lines)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all demo test bench deps data clean

all: demo

deps:
	@bash scripts/install-deps.sh build

data:
	@bash scripts/fetch-data.sh $(CURDIR)/$(BUILD)/data

# One recipe, in order: install, configure (once), build, run.
demo:
	@bash scripts/install-deps.sh build
	@[ -f $(BUILD)/release/Makefile ] || cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release \
		-DCAROM_DATA_DIR=$(CURDIR)/$(BUILD)/data >/dev/null
	@cmake --build $(BUILD)/release -j $(JOBS) --target carom_tool -- --no-print-directory
	@$(BUILD)/release/tools/carom

test:
	@bash scripts/install-deps.sh build test
	@bash scripts/fetch-data.sh $(CURDIR)/$(BUILD)/data
	@bash scripts/test.sh $(BUILD) $(JOBS)

bench:
	@bash scripts/install-deps.sh build bench
	@bash scripts/fetch-data.sh $(CURDIR)/$(BUILD)/data
	@bash scripts/bench.sh $(BUILD) $(JOBS)

clean:
	rm -rf $(BUILD)
