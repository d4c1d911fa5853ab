# Inkling: build, test, package and benchmark.
#   make install   build, package, install and enable Inkling (the one command for users)
#   make test      install build dependencies, build, run every test (what CI runs)

SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift
RELEASE_FLAGS := -c release --static-swift-stdlib
BENCH := $(abspath ../shared/bench)
DATA_CACHE ?= .cache/data
PREPARED ?= .cache/prepared/en

.PHONY: all deps build debug-build test unit-test integration-test pack bench bench-predict clean

all: build

deps:
	sh scripts/install-deps.sh

build: deps
	$(SWIFT) build $(RELEASE_FLAGS)

unit-test: deps
	$(SWIFT) test

integration-test: build
	@if [ -x Tests/Integration/run.sh ]; then Tests/Integration/run.sh; else echo "no integration tests yet"; fi

test: deps
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) test
	@if [ -x Tests/Integration/run.sh ]; then Tests/Integration/run.sh; fi

# Rebuild the English pack from the whitelisted sources (see data/ATTRIBUTION.md).
pack: build
	bash scripts/fetch-data.sh $(DATA_CACHE)
	/usr/bin/python3 scripts/prepare_data.py --cache $(DATA_CACHE) --out $(PREPARED)
	.build/release/inkling pack build --prepared $(PREPARED) -o data/packs/en.inkpack

# Prediction benchmark on the public dev text (K = 3), with and without the re-ranker.
bench: build
	bash scripts/bench-predict.sh $(BENCH)

clean:
	rm -rf .build build
