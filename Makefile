# reachabilityd — the two commands a new user needs:
#   make run    install what building and running need, build (release) and run the daemon, on a
#               private bus unless BUS=system
#   make test   install that and the tests' tools, run make run as a newcomer would (make run-check),
#               build, run every test (unit + integration), build the Examples/ package, then
#               the end-to-end tests (make e2e-matrix), the benchmark's smoke run
#               (make bench-smoke) and a 5-minute soak (make soak SOAK_SECONDS=300: CI's
#               30 minutes on 2 cores hold that, not the full 10-minute one)
# and for developers (none of these installs anything; make deps does, once):
#   make build  debug build of the Swift products and of the GIO module (gio/, .build/gio)
#   make unit   the innermost loop: build, then the unit tests only (no root, no namespace, no
#               daemon; a private dbus-daemon for the bus core) — seconds once built
#   make reference  docs/api-reference.md and reachabilityd(8)'s API sections from dbus/'s doc
#               comments (make unit and make check fail while they differ)
#   make check  before a commit: build (with the GIO module), unit and integration tests (root
#               for the latter), the Examples/ package, the public API against docs/public-api.md —
#               no containers, no soak, no benchmark (a few minutes)
#   make soak   100 link flaps, then SOAK_SECONDS (default 600) of random route/address/link
#               churn checked against an oracle every second (root, network namespaces, ~10 min)
#   make deb    build the Debian package into out/ and check it with lintian
#   make e2e    build the package and test it in a booted systemd container (root, 1-3 min)
#   make e2e-matrix  the same package in Debian 12 and 13 containers, and 13 with dbus-broker
# and the benchmark (docs/benchmarks.md; root, network namespaces):
#   make bench        full run: the daemon beside the netlink floor and GLib's GNetworkMonitor
#   make bench-smoke  the same with small N and short windows (CI, through make test)
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
RELEASE_FLAGS := -c release --static-swift-stdlib
BUS ?= private
SOAK_SECONDS ?= 600

.PHONY: all deps run-deps build gio release run run-check test unit check reference reference-check soak deb e2e e2e-matrix bench bench-smoke clean

all: build

# What building and running need, and the tests' tools (scripts/install-deps.sh says which).
deps:
	scripts/install-deps.sh

# Only what building and running need: make run installs no test tool (make run-check checks).
run-deps:
	scripts/install-deps.sh --run

build: gio
	$(SWIFT) build

# The GIO module (gio/): C against GLib, built with pkg-config gio-2.0 into .build/gio.
gio:
	$(MAKE) -C gio

# The products by name: building the whole package would take in Tests/TestSupport, which imports
# XCTest, and XCTest does not exist for the static standard library.
release: run-deps
	$(SWIFT) build $(RELEASE_FLAGS) --product reachabilityd
	$(SWIFT) build $(RELEASE_FLAGS) --product reachabilityctl

run: release
	BUS=$(BUS) scripts/run-daemon.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/reachabilityd"

# make run as a newcomer runs it (scripts/run-check.sh): from its own process group, query the
# printed busctl and reachabilityctl lines, Ctrl-C, then nothing may be left behind; what its
# install step would install on a bare machine includes none of the tests' tools.
run-check:
	MAKE="$(MAKE)" scripts/run-check.sh

# The e2e matrix (containers booting and idling, mostly) and a 5-minute soak run side by side,
# the soak being one more loaded run; the benchmarks' smoke run runs alone before them.
test: deps
	$(MAKE) unit
	$(MAKE) run-check
	$(MAKE) check
	$(MAKE) bench-smoke
	MAKE="$(MAKE)" scripts/side-by-side.sh e2e-matrix "soak SOAK_SECONDS=300"

# The unit tier: the package without its integration suites (Package.swift reads
# REACHABILITYD_TESTS), and of it only the test bundle (SwiftPM names it after the package) and
# what that links, not reachabilityctl; docs/testing.md lists what each tier holds.
unit: reference-check
	REACHABILITYD_TESTS=unit $(SWIFT) build --product reachabilitydPackageTests
	REACHABILITYD_TESTS=unit $(SWIFT) test --skip-build

# The integration test targets, as swift test --filter takes them.
INTEGRATION_TESTS := IntegrationTests|ClientIntegrationTests

check: gio unit
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter '^($(INTEGRATION_TESTS))\.' --skip SoakTests
	$(SWIFT) build --package-path Examples
	SWIFT=$(SWIFT) scripts/public-api.sh

# The interface files' doc comments are each member's one description (scripts/api-reference.py):
# reference writes the reference from them, reference-check fails when a written file differs or
# README's API table names a member or signature they do not declare.
reference:
	scripts/api-reference.py

reference-check:
	scripts/api-reference.py --check

# REACHABILITYD_SOAK_SEED=N in the environment replays the churn of a run that printed seed N.
soak:
	$(SWIFT) build --build-tests
	REACHABILITYD_SOAK_SECONDS=$(SOAK_SECONDS) $(SWIFT) test --skip-build --filter SoakTests

deb:
	SWIFT=$(SWIFT) scripts/build-deb.sh out

e2e:
	SWIFT=$(SWIFT) testbed/e2e/run.sh

# The package is built once (bookworm), then installed in each container. The journal check's
# idle minute runs in full once; the trixie variants idle 20 s (past the watchdog's 15 s ping).
e2e-matrix:
	rm -rf out/e2e-deb
	SWIFT=$(SWIFT) E2E_KEEP_DEB=out/e2e-deb testbed/e2e/run.sh
	E2E_DEB="$$(ls out/e2e-deb/reachabilityd_*.deb)" E2E_SUITE=trixie E2E_IDLE_SECONDS=20 testbed/e2e/run.sh
	E2E_DEB="$$(ls out/e2e-deb/reachabilityd_*.deb)" E2E_SUITE=trixie E2E_BUS=dbus-broker E2E_IDLE_SECONDS=20 testbed/e2e/run.sh

bench:
	SWIFT=$(SWIFT) Benchmarks/run.sh

bench-smoke:
	SWIFT=$(SWIFT) Benchmarks/run.sh --smoke

clean:
	rm -rf .build Examples/.build out
