# vrlog build. `make test` is the one command that runs every test (CI runs exactly it).
GO       ?= go
BIN      := bin
PYTHON   ?= python3

# Packages that must build without cgo or Rust (go install ./cmd/analyze).
PURE_PKGS := ./keyexpr/... ./textfit/... ./internal/ui/... ./codec/... ./schema/... ./logfmt/... ./sampler/... ./hostclock/... ./analyzer/... ./dataset/... ./internal/command/analyze/... ./cmd/analyze/...

.PHONY: all build test test-pure test-go test-race test-python test-spark demo sample fuzz bench clean

all: build

# Go's build cache does not see inside the static library that cgo links, so
# a rebuilt library would not be relinked: its hash in the link flags makes
# every binary and test binary relink when the library changes.
NATIVE_LDFLAGS = -ldflags=-X=main.nativeLib=$(shell sha256sum native/target/release/libvrlog_native.a 2>/dev/null | cut -c1-16)

## build: the native transport library and every binary into ./bin
build: native
	$(GO) build -buildvcs=auto $(NATIVE_LDFLAGS) -o $(BIN)/ ./cmd/...

## test: every test: pure packages without cgo, everything with the real transports, the race detector, the Python reader
test: test-pure test-go test-race test-python test-spark

# Without cgo the whole tree must build (transports report ErrUnavailable),
# and the pure packages must pass their tests.
test-pure:
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 $(GO) vet $(PURE_PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 $(PURE_PKGS)

# The transport packages run first and on their own: their leak tests count
# the machine's iceoryx2 shared-memory files, which the end-to-end and replay
# tests would change if they ran at the same time. The end-to-end tests run
# last and on their own too: they measure what real processes lose at
# kill -9 behind a backlog (TestKill9UnderBackPressureKeepsStates), which
# the other packages' tests, run beside them on two cores, made lose states
# 2-3 s old (13 and 245 in two runs; 0 alone, 3 of 3).
# The pure packages' tests ran in test-pure: their code is the same with
# cgo (they import no transport), so they are not run twice.
test-go: native peers foxglove-client
	$(GO) test $(NATIVE_LDFLAGS) -count=1 ./transport/...
	$(GO) test $(NATIVE_LDFLAGS) -count=1 $$($(GO) list ./... | grep -v -e /transport/ -e /e2e$$ | grep -vxF "$$($(GO) list $(PURE_PKGS))")
	$(GO) test $(NATIVE_LDFLAGS) -count=1 -timeout 40m -skip '^TestRelease$$' ./e2e/

# The concurrent pieces under the race detector (-short thins logfmt's
# every-byte corruption loops).
test-race: native
	$(GO) test $(NATIVE_LDFLAGS) -count=1 -race -short ./logfmt/ ./player/ ./sampler/ ./recorder/... ./recctl/

## fuzz: each fuzz target for FUZZTIME (default 30s); each new input is minimized for at most FUZZMINIMIZE
## (Go's default, 60s, spends a short budget minimizing instead of fuzzing)
FUZZTIME ?= 30s
FUZZMINIMIZE ?= 2s
FUZZ_PKGS ?= ./keyexpr/ ./codec/ ./logfmt/ ./schema/ ./foxws/ ./dataset/ ./parquetexport/
fuzz:
	@for p in $(FUZZ_PKGS); do for t in $$($(GO) test -list 'Fuzz.*' $$p | grep ^Fuzz); do \
		echo "== $$p $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) -parallel 1 $$p || exit 1; done; done

## crafted-memory: every verb's peak memory and exit code on logfmt's crafted damaged files (fails over 300 MiB, on a hang or a crash)
.PHONY: crafted-memory
crafted-memory: build
	./bench/crafted-memory.sh

## bench: the Go benchmarks whose figures are in docs/BENCHMARKS.md
BENCH_PKGS ?= ./codec/ ./logfmt/ ./sampler/ ./analyzer/
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_PKGS)

## bench-targets: the logfmt and analyze targets, each pair interleaved, with medians and ratios
.PHONY: bench-targets
bench-targets:
	./bench/targets.sh

## bench-read: reading payloads, vrlog's reader vs MCAP's Go reader, one core and two, 4 MiB and 110 KiB chunks
.PHONY: bench-read
bench-read:
	./bench/read.sh

## demo: the main job end to end: simulate, record ~10 s, analyze, replay
demo: build
	./scripts/demo.sh

## sample: re-record the bundled sample log from the simulator (with injected faults), its truth file and golden report
sample: build
	./scripts/mksample.sh

clean:
	rm -rf $(BIN)

# ---- native transport library (Rust, over the official zenoh and iceoryx2 crates) ----
.PHONY: native
CARGO ?= cargo
# cargo's jobs: one per core this process may run on (make CARGO_JOBS=1 for a
# machine short of memory: the clean build peaks at 1.2 GB on 2 jobs).
CARGO_JOBS ?= $(shell nproc)
# Always ask cargo: it knows best whether the library is fresh (~0.3 s when it is).
native:
	cd native && $(CARGO) build --release --locked -j$(CARGO_JOBS)

## bench-transport: transport benchmarks (figures in docs/transports.md)
.PHONY: bench-transport
bench-transport: native peers
	cd native && $(CARGO) build --release --locked -j$(CARGO_JOBS) --example zbench
	$(GO) test -run '^$$' -bench . -benchtime=1x ./transport/zenoh/
	$(GO) test -run '^$$' -bench . -benchtime=2s ./transport/iceoryx2/

# The Python reader's own tests (pytest); python/*_test.go, in test-go,
# compare it with the Go reader and check the CSV exports in pandas.
test-python: peers
	$(VENV)/bin/python -m pytest -q python/tests

# ---- Node: the official Foxglove WebSocket client for vrlog view's tests ----
# tools/foxglove-client: @foxglove/ws-protocol and what decodes its messages,
# pinned by package-lock.json (node_modules is not committed).
.PHONY: foxglove-client
foxglove-client: tools/foxglove-client/node_modules/.stamp
tools/foxglove-client/node_modules/.stamp: tools/foxglove-client/package-lock.json
	cd tools/foxglove-client && npm ci --no-audit --no-fund
	@touch $@

# ---- Python: interop peers (official eclipse-zenoh and iceoryx2 wheels), the reader ----
.PHONY: peers
VENV := .venv
peers: $(VENV)/.peers-stamp
$(VENV)/.peers-stamp: peers/requirements.txt tools/mcapcheck/requirements.txt tools/parquetcheck/requirements.txt python/pyproject.toml $(wildcard python/vrlog/*.py)
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -r peers/requirements.txt
	$(VENV)/bin/pip install -q -r tools/mcapcheck/requirements.txt
	$(VENV)/bin/pip install -q -r tools/parquetcheck/requirements.txt
	$(VENV)/bin/pip install -q './python[test]'
	@touch $@

# ---- release artifacts: make dist (docs/release.md) ----
# dist/ gets what a release ships for linux/amd64, each file named with the
# version the binaries' --version reports: the vrlog tarball and .deb (the
# binary, its man page, bash/zsh/fish completions), the static analyze, the
# Python reader's wheel and SHA256SUMS. Go refreshes an up-to-date output's
# mtime, so the binaries are built in $(DISTB)/new and copied on only when
# they changed; everything after them is a file rule: a second make dist
# with nothing changed rebuilds nothing. -buildvcs=true: the version comes
# from git (this machine's GOFLAGS say -buildvcs=false).
.PHONY: dist dist-files
DIST  := dist
DISTB := $(DIST)/.build
DIST_GOFLAGS = -buildvcs=true -trimpath '-ldflags=-s -w $(patsubst -ldflags=%,%,$(NATIVE_LDFLAGS))'
dist: native
	$(GO) build $(DIST_GOFLAGS) -o $(DISTB)/new/vrlog ./cmd/vrlog
	CGO_ENABLED=0 $(GO) build $(DIST_GOFLAGS) -o $(DISTB)/new/analyze ./cmd/analyze
	scripts/dist.sh stage
	@$(MAKE) --no-print-directory dist-files DIST_VERSION=$$(cat $(DISTB)/version)

# The release test runs last and alone (make test's last step): it builds
# dist/ (its -trimpath build compiles the tree again) and, as root,
# installs the .deb for real until it ends; its own timeout, so that the
# e2e package's stays for the other end-to-end tests.
.PHONY: test-release
test: test-release
test-release: native
	$(GO) test $(NATIVE_LDFLAGS) -count=1 -timeout 30m -run '^TestRelease$$' ./e2e/

.PHONY: clean-dist
clean: clean-dist
clean-dist:
	rm -rf $(DIST)

ifdef DIST_VERSION
DIST_TAR   := $(DIST)/vrlog_$(DIST_VERSION)_linux_amd64.tar.gz
DIST_DEB   := $(DIST)/vrlog_$(DIST_VERSION)_amd64.deb
DIST_STATIC := $(DIST)/analyze_$(DIST_VERSION)_linux_amd64
DIST_WHEEL := $(DIST)/vrlog-$(DIST_VERSION)-py3-none-any.whl
DIST_SUMS  := $(DIST)/vrlog_$(DIST_VERSION)_SHA256SUMS
dist-files: $(DIST_SUMS)
$(DIST_SUMS): $(DIST_TAR) $(DIST_DEB) $(DIST_STATIC) $(DIST_WHEEL)
	scripts/dist.sh sums $@ $^
$(DIST_TAR): $(DISTB)/vrlog scripts/dist.sh LICENSE
	scripts/dist.sh tarball $@
$(DIST_DEB): $(DISTB)/vrlog scripts/dist.sh LICENSE
	scripts/dist.sh deb $@
$(DIST_STATIC): $(DISTB)/analyze scripts/dist.sh
	scripts/dist.sh static $@
$(DIST_WHEEL): python/pyproject.toml python/README.md $(wildcard python/vrlog/*.py) scripts/dist.sh
	scripts/dist.sh wheel $@
endif

# ---- Spark: the analyze dataset read by pyspark (local[2], Java 17+) ----
# A target of its own: one Spark session costs 30-60 s of JVM start and
# the wheel ~400 MB; `make test` runs it (python/spark_test.go, -tags spark).
.PHONY: spark
spark: $(VENV)/.spark-stamp
$(VENV)/.spark-stamp: $(VENV)/.peers-stamp tools/parquetcheck/requirements-spark.txt
	@command -v java >/dev/null || { echo "test-spark: needs Java 17+ (apt-get install openjdk-17-jre-headless)"; exit 1; }
	$(VENV)/bin/pip install -q -r tools/parquetcheck/requirements-spark.txt
	@touch $@

## test-spark: Spark reads the analyze dataset and answers a group-by as DuckDB does
test-spark: spark
	$(GO) test -tags spark -count=1 -run 'Spark' ./python/
