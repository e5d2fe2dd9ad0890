# reachabilityd — the two commands a new user needs:
#   make run    build (release) and run the daemon, on a private bus unless BUS=system
#   make test   install what the tests need, build, run every test (unit + integration)
# and the benchmark (README "Benchmarks"; root, network namespaces):
#   make bench        full run: the daemon beside the netlink floor and GLib's GNetworkMonitor
#   make bench-smoke  the same with small N and short windows (CI)
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
RELEASE_FLAGS := -c release --static-swift-stdlib
BUS ?= private

.PHONY: all deps build release run test bench bench-smoke clean

all: build

deps:
	scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

run: release
	BUS=$(BUS) scripts/run-daemon.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/reachabilityd"

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench:
	SWIFT=$(SWIFT) Benchmarks/run.sh

bench-smoke:
	SWIFT=$(SWIFT) Benchmarks/run.sh --smoke

clean:
	rm -rf .build
