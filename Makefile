# Clubroom: two commands on a fresh Debian machine.
#   make demo   installs what is missing, builds, and runs the demo room
#   make test   installs what the tests need, builds, and runs every test
# `make lint` fails on compiler warnings in our code, on `swift format lint` findings, and when Package.swift's
# dependencies differ from what the code imports.
# `make fuzz` runs every fuzz target for FUZZ_SECONDS each (docs/fuzzing.md).

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Libraries the build links against.
BUILD_PACKAGES := pkg-config libncursesw5-dev libopus-dev libasound2-dev libssl-dev libsqlite3-dev libspeexdsp-dev \
  libsrtp2-dev libhiredis-dev libopusfile-dev libopusenc-dev \
  libshout3-dev libavformat-dev libavcodec-dev libavutil-dev
# Programs the tests drive: tmux for the UI, sox and espeak-ng for audio, alsa-utils for ALSA, openssl to make
# test certificates, PulseAudio with the ALSA pulse plugin for devices paced in real time, and tshark to check
# the RTP the server sends, redis-server for the cluster's tests (each starts its own on a free port),
# iproute2 with nftables for the network partitions between cluster nodes, and nginx for the reverse proxy's tests
# (each runs its own on a free port, as an unprivileged configuration; the package's own service is not used),
# opus-tools (opusenc) to make the Ogg Opus files that are played into a room, and for the live streams' tests
# icecast2, nginx's RTMP module and ffmpeg (the real servers, and the real reader that checks what they carry).
TEST_PACKAGES := tmux sox espeak-ng alsa-utils pulseaudio libasound2-plugins openssl tshark redis-server iproute2 \
  nftables nginx opus-tools icecast2 libnginx-mod-rtmp ffmpeg
# Python modules the interoperability tests use, from PyPI, as import-name=package-name.
PYTHON ?= python3
TEST_PYTHON_MODULES := websockets=websockets jwt=pyjwt

.PHONY: all build release deps test-deps test demo lint check-dependencies format bench quality clean fuzz fuzz-ci

all: build

# Installs only the Debian packages that are missing; apt-get runs through sudo when not root.
deps:
	@missing=""; for p in $(BUILD_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

test-deps: deps
	@missing=""; for p in $(TEST_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@for m in $(TEST_PYTHON_MODULES); do \
	  module=$${m%%=*}; package=$${m#*=}; \
	  $(PYTHON) -c "import $$module" 2>/dev/null || $(PYTHON) -m pip install -q $$package; \
	done

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# How many tests run at the same time. Tests that wait on processes, sockets or the clock run on threads of their own
# (RoomTesting's `.ownThread`), so nothing else caps them: on a machine with few cores, dozens of servers, terminals
# and recorders at once would crowd each other out of their time limits.
TEST_WIDTH ?= 8

test: test-deps check-dependencies
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --experimental-maximum-parallelization-width $(TEST_WIDTH)
	$(MAKE) fuzz-ci

# Fuzzing with libFuzzer and AddressSanitizer. fuzz/build compiles only the modules the targets need, outside
# SwiftPM; fuzz/run runs each target on its own, from the checked-in corpus and regression inputs, and fails on
# any finding. `make fuzz` runs the optimised build for FUZZ_SECONDS per target; CI (`make test`) runs the
# unoptimised one, quicker to build, for FUZZ_CI_SECONDS per target, two targets at a time.
FUZZ_SECONDS ?= 180
FUZZ_CI_SECONDS ?= 2

fuzz: deps
	fuzz/build release
	fuzz/run release $(FUZZ_SECONDS)

fuzz-ci: deps
	fuzz/build debug
	FUZZ_JOBS=2 fuzz/run debug $(FUZZ_CI_SECONDS)

demo: deps release
	$$($(SWIFT) build -c release --show-bin-path)/clubroom demo

# PESQ wideband of speech through the audio path, beside libopus alone (needs pesq and numpy from PyPI).
quality: test-deps release
	@$(PYTHON) -c "import pesq, numpy" 2>/dev/null || $(PYTHON) -m pip install -q pesq numpy
	$(PYTHON) bench/quality --clubroom "$$($(SWIFT) build -c release --show-bin-path)/clubroom"

bench: release
	$$($(SWIFT) build -c release --show-bin-path)/clubroom bench store

# Each target's declared dependencies must equal the package modules it imports, and no product target may
# depend on a benchmark target (Sources/Benchmarks/); the script names the target and the difference.
check-dependencies:
	@$(PYTHON) scripts/check-dependencies

# Warnings in our own code fail the lint; so does anything swift-format would change. Every Swift file in the
# package is ours, so the build treats warnings as errors: a module with a warning never counts as built, and the
# next run reports it again (grepping build output would miss warnings in files an incremental build skips).
# Tests are built too. A scratch path of its own keeps these flags from invalidating the everyday build.
lint: deps check-dependencies
	@$(SWIFT) build --build-tests --scratch-path .build/lint -Xswiftc -warnings-as-errors \
	  || { echo "lint: the build failed (compiler warnings count as errors here)"; exit 1; }
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Resources

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Resources

clean:
	$(SWIFT) package clean
