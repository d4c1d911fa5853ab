# Inkling: build, test, package and benchmark.
#   make install   build, package, install and enable Inkling (the one command for users)
#   make test      install build dependencies, build, run every test (what CI runs)
#   make check     the fast tier without root: debug build, unit tests, lint
#   make lint      swift-format, flake8 and shellcheck (scripts/lint.sh)

SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift
RELEASE_FLAGS := -c release --static-swift-stdlib
BENCH := $(abspath ../shared/bench)
DATA_CACHE ?= .cache/data
PREPARED ?= .cache/prepared/en

.PHONY: all deps build-deps build test check lint data-test unit-test integration-test pack bench clean fuzz-long fuzz-packs-long

all: build

# Everything building and testing need (make test).
deps:
	sh scripts/install-deps.sh

# Only what building, packaging and running need (make build, make install).
build-deps:
	sh scripts/install-build-deps.sh

build: build-deps
	$(SWIFT) build $(RELEASE_FLAGS)

unit-test: deps
	$(SWIFT) test

integration-test: deps build
	Tests/Integration/run.sh

# Style and static checks (.swift-format, .flake8, shellcheck); needs no root once `make deps` ran.
lint:
	bash scripts/lint.sh

# Unit tests of the data pipeline (scripts/prepare): readers, cleaners, a golden hash.
PYTEST := /usr/bin/python3 -m pytest -p no:cacheprovider -q
data-test:
	$(PYTEST) Tests/DataPipeline

# The fast tier, without root and without `deps`: debug build, unit tests, lint.
check:
	$(SWIFT) build
	$(SWIFT) test
	$(PYTEST) Tests/DataPipeline
	$(PYTEST) Tests/Translations
	bash scripts/lint.sh

# Unit tests, then the real processes: engine under a private ibus-daemon, GTK apps under Xvfb,
# the cloud helper against a loopback server, the .deb (contents, lintian, settings), the .deb
# installed into a clean Debian 12 root, and real applications (the desktop suite, below).
test: deps
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) test
	$(PYTEST) Tests/DataPipeline
	$(PYTEST) Tests/Translations
	Tests/Integration/run.sh
	bash Tests/Cloud/run.sh
	bash Tests/Dictate/run.sh
	bash Tests/Account/run.sh
	bash Tests/Server/run.sh
	bash Tests/Packs/run.sh
	bash Tests/Learning/run.sh
	bash Tests/Setup/run.sh
	bash Tests/Packaging/test_packaging.sh
	$(MAKE) cleanroom-test
	sh scripts/install-desktop-deps.sh
	bash Tests/Desktop/run.sh

# The settings app (inkling-setup) under Xvfb through AT-SPI, with a real engine; screenshots of
# every page go to SCREENSHOTS (default: kept nowhere).
.PHONY: setup-test
setup-test: deps build
	INKLING_SCREENSHOT_DIR=$(SCREENSHOTS) bash Tests/Setup/run.sh

# Real applications typed into, each with a control run without IBus: Writer, KWrite, Firefox
# and Chromium under Xvfb; GTK 4, GTK 3 and Firefox on a headless GNOME Shell (Wayland); prints
# the compatibility table. 11-15 min on a 2-core machine (plus installing the apps the first
# time); `make test` runs it last (Tests/Desktop/compatibility.md, "CI: seventh session").
.PHONY: desktop-test
desktop-test: build
	sh scripts/install-desktop-deps.sh
	bash Tests/Desktop/run.sh

# The session fuzzer at length (10^7 events, release build); `swift test` runs 10^5 of them.
# FUZZ_SEED=<n> replays a printed seed; the default draws a fresh one (printed either way).
# Its own build folder keeps the release binaries (static stdlib, no testability) untouched.
FUZZ_EVENTS ?= 10000000
FUZZ_SEED ?= random
fuzz-long:
	INKLING_FUZZ_SEED=$(FUZZ_SEED) INKLING_FUZZ_EVENTS=$(FUZZ_EVENTS) \
		$(SWIFT) test -c release -Xswiftc -enable-testing --scratch-path .build/fuzz --filter SessionFuzzTests

# The pack fuzzer at length (10^6 mutations of a valid pack, release build); `swift test` runs 10^4.
PACK_FUZZ_MUTATIONS ?= 1000000
PACK_FUZZ_SEED ?= 2718281828
fuzz-packs-long:
	INKLING_PACK_FUZZ_SEED=$(PACK_FUZZ_SEED) INKLING_PACK_FUZZ_MUTATIONS=$(PACK_FUZZ_MUTATIONS) \
		$(SWIFT) test -c release -Xswiftc -enable-testing --scratch-path .build/fuzz --filter PackFuzzTests

# Rebuild the English pack from the whitelisted sources (see data/ATTRIBUTION.md), with its
# neural re-ranker (issue 17): scripts/neural/train_pack.sh trains the word GRU and the window
# network on the prepared corpus (CPU, deterministic; about an hour on 2 cores) and checks them
# against scripts/neural/golden-en.json. `make pack PACK_NEURAL=0` builds the pack without them.
PACK_NEURAL ?= 1
NEURAL_WORK = .cache/nn/pack
pack: build
	bash scripts/fetch-data.sh $(DATA_CACHE)
	/usr/bin/python3 scripts/prepare_data.py --cache $(DATA_CACHE) --out $(PREPARED)
ifeq ($(PACK_NEURAL),1)
	NEURAL_GRU_PUNCTUATION=1 NEURAL_GRU_PUNCTUATION_LOSS=0 bash scripts/neural/train_pack.sh $(PREPARED) $(NEURAL_WORK) $(wildcard scripts/neural/golden-en.json)
	.build/release/inkling pack build --prepared $(PREPARED) -o data/packs/en.inkpack \
		--word-model $(NEURAL_WORK)/wordlm.ngru --reranker-network $(NEURAL_WORK)/reranker.nrrk
else
	.build/release/inkling pack build --prepared $(PREPARED) -o data/packs/en.inkpack
endif

# Prediction benchmark on the public dev text (K = 3): without and with the re-ranker, and learning on.
bench: build
	bash scripts/bench-predict.sh $(BENCH)

# Offline headroom of a neural re-ranker on text held out from the corpus (issue 17; needs make pack's
# prepared inputs; installs pinned PyTorch CPU into .cache/torch-venv). Not the dev text.
.PHONY: neural-measure
neural-measure: build
	bash scripts/neural/measure.sh

# Learning-to-rank re-ranker of the predictor's window on the same held-out text (after neural-measure).
.PHONY: neural-rerank
neural-rerank: build
	bash scripts/neural/measure_reranker.sh

# The translations (po/): the POT against the sources, German complete, placeholders kept.
.PHONY: po po-test
po-test:
	$(PYTEST) Tests/Translations

# Regenerate po/inkling.pot from the sources' tr("…") and merge it into po/*.po.
po:
	bash po/update.sh

clean:
	rm -rf .build build

# --- Packaging (packaging/README.md) ---------------------------------------------------------
.PHONY: deb install uninstall cleanroom-test

# build/ibus-inkling_<version>_amd64.deb from the release build (static Swift stdlib, stripped).
deb: build
	bash scripts/deb-build.sh

# build/inkling-server_<version>_amd64.deb: the Inkling Server, its systemd unit and config.
.PHONY: deb-server bench-server
deb-server: build
	bash scripts/deb-build-server.sh

# Load benchmark of inkling-server on loopback (bench/server_load.py; README figures).
bench-server: build
	/usr/bin/python3 bench/server_load.py

# Dictation through the real daemon: end of speech -> commit latency in parts (audio wait, helper
# lag, engine), CPU per audio second, RSS (bench/dictation_latency.py; run on a quiet machine).
.PHONY: bench-dictation
bench-dictation: build
	/usr/bin/python3 bench/dictation_latency.py

# Install the .deb with apt, restart IBus and add Inkling to the desktop user's input sources
# (skipped with a message when there is no desktop session, e.g. headless or in a container).
install: build-deps deb
	bash scripts/enable-inkling.sh install

# Remove the input source and the package (user data in the home folder is kept).
uninstall:
	bash scripts/enable-inkling.sh uninstall

# Install the .deb into a minimal Debian 12 (debootstrap, cached in .cache/cleanroom) and type
# through a real IBus there. Needs root.
cleanroom-test: deb
	bash scripts/cleanroom-test.sh

# --- Downloadable language packs (data/languages.json; see data/ATTRIBUTION.md) ---------------
# build/packs/{de,fr,es,ru,uk,pl}.inkpack and build/packs/manifest.json (urls: PACK_URL_BASE/<file>),
# and build/packs/debs/inkling-lang-<lang>_<version>_all.deb (the same packs for apt).
# scripts/bench-languages.sh then measures them on each language's held-out dev.txt.
# Languages with "neuralDim" in data/languages.json (de fr es ru pl) get the neural re-ranker,
# trained first (German and Russian about an hour each, measured side by side on 2 cores;
# French, Spanish and Polish train far fewer steps);
# `make packs PACK_NEURAL=0` skips it.
PACK_URL_BASE ?=
.PHONY: packs
packs: build
	DATA_CACHE=$(DATA_CACHE) INKLING=.build/release/inkling PACK_NEURAL=$(PACK_NEURAL) bash scripts/build-packs.sh --url-base "$(PACK_URL_BASE)"
	bash scripts/deb-build-packs.sh build/packs
