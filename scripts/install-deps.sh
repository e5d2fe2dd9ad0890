#!/usr/bin/env bash
# Installs the Debian packages reachabilityd needs that are missing, without their recommended
# packages. Idempotent: does nothing when everything is present. Needs root (or sudo) to install;
# retries apt-get three times.
#   scripts/install-deps.sh --run      what building and running need (make run)
#   scripts/install-deps.sh            that and the tests' tools (make deps, make test)
#   scripts/install-deps.sh PACKAGE... those packages (the package build, the e2e test, the benchmark)
#   scripts/install-deps.sh --list-test-tools   prints the tests' tools, one a line; installs nothing
# INSTALL_DEPS_REPORT=FILE (make run-check) also appends to FILE, one a line, every package that
# apt would install for the packages asked for on a machine that has none of them.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

# Building and running: make run builds the release products and serves on a private bus.
run_packages=(
  libsystemd-dev pkg-config   # sd-bus and sd-daemon headers, found through pkg-config
  libcurl4-openssl-dev        # libcurl's headers (the connectivity check loads libcurl.so.4 when configured)
  dbus-daemon dbus-bin        # make run's private system bus (the tests start one too)
  systemd                     # busctl: make run's printed queries
  make                        # the Makefile's commands (and gio/'s, for make build)
)
# Only the tests (and make build, for the GIO module) use these.
test_packages=(
  iproute2                    # ip netns / veth for the integration tests
  python3 openssl             # the connectivity tests' HTTP/HTTPS servers and their test CA
  python3-dbus python3-gi gir1.2-glib-2.0  # the tests' D-Bus clients and the Python example
  python3-venv                # the Varlink tests' venv for the varlink package from PyPI (below)
  gcc libc6-dev               # the C example and the GIO module's test programs, built by the tests
  libtsan2                    # ThreadSanitizer's runtime: the GIO module's race test (-fsanitize=thread)
  libglib2.0-dev              # the GIO module (gio/, pkg-config gio-2.0), built by make build and the tests
  curl                        # the metrics test scrapes node_exporter
  dnsmasq-base                # a real DNS server in the DNS tests' router namespace (no service: the -base package)
  libglib2.0-tests            # GLib's own network-monitor tests, run against the GIO module (postinst: byte-compiles only)
)
# The metrics test runs Debian's real node_exporter, unpacked from its .deb into the build
# directory, not installed: installing prometheus-node-exporter enables and starts a service
# listening on port 9100 (its postinst), and pulls in IPMI tools through its recommendations.
node_exporter_package=prometheus-node-exporter
# The NAT64 tests run Debian's real tayga the same way: its postinst starts the service, which
# would configure a nat64 tun, routes and NAT44 on the host.
tayga_package=tayga
# The alert rules' tests run Debian's real promtool and Prometheus (one package) the same way: its
# postinst enables and starts a Prometheus service listening on port 9090.
prometheus_package=prometheus
# The GIO module's tests run Debian's real xdg-desktop-portal (NetworkMonitor, as Flatpak apps
# ask it) the same way, with the two libraries it needs that GLib's packages do not bring: its
# postinst enables a user unit in every login session, and its dependencies' run modprobe and
# update-initramfs (fuse3) and sysctl --system (bubblewrap). A library is checked by its
# copyright file, which has no architecture triplet in its path.
unpacked_tools=("$node_exporter_package:usr/bin/prometheus-node-exporter" "$tayga_package:usr/sbin/tayga"
                "$prometheus_package:usr/bin/promtool"
                "xdg-desktop-portal:usr/libexec/xdg-desktop-portal"
                "libjson-glib-1.0-0:usr/share/doc/libjson-glib-1.0-0/copyright"
                "libpipewire-0.3-0:usr/share/doc/libpipewire-0.3-0/copyright")

tests=yes
case ${1:-} in
  --list-test-tools) printf '%s\n' "${test_packages[@]}" "${unpacked_tools[@]%%:*}"; exit 0 ;;
  --run) packages=("${run_packages[@]}"); tests=no ;;
  "") packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  -*) echo "install-deps: unknown option $1" >&2; exit 64 ;;
  *) packages=("$@"); tests=no ;;
esac

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  as_root=(sudo)
fi

# apt-get update, then "$@"; three attempts.
apt_get_with_retries() {
  local attempt
  for attempt in 1 2 3; do
    if "${as_root[@]}" apt-get update -qq >&2 && "$@" >&2; then
      return 0
    fi
    echo "install-deps: apt-get failed (attempt $attempt), retrying" >&2
    sleep 5
  done
  return 1
}

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ ${#as_root[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt_get_with_retries "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    { echo "install-deps: could not install ${missing[*]}" >&2; exit 1; }
fi

for tool in "${unpacked_tools[@]}"; do
  package=${tool%%:*}
  root=$repo/.build/test-tools/$package
  [ $tests = yes ] && [ ! -e "$root/${tool#*:}" ] || continue
  echo "install-deps: unpacking $package into $root (not installed)" >&2
  download=$(mktemp -d /tmp/reachabilityd-deps.XXXXXX)
  trap 'rm -rf "$download"' EXIT
  # As root, apt downloads as its sandbox user _apt, which must be able to write there.
  [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1 && chown _apt "$download"
  (cd "$download" && apt_get_with_retries apt-get download -qq "$package") ||
    { echo "install-deps: could not download $package" >&2; exit 1; }
  rm -rf "$root"
  mkdir -p "$root"
  dpkg-deb -x "$download"/"$package"_*.deb "$root"
  rm -rf "$download"
done

# The Varlink tests' client: the Python varlink package from PyPI, in a venv in the build directory
# (not installed on the host: no system package has it).
venv=$repo/.build/test-tools/varlink-venv
if [ $tests = yes ] && ! "$venv/bin/python" -c 'import varlink' 2>/dev/null; then
  echo "install-deps: installing the Python varlink package into $venv" >&2
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q varlink ||
    { echo "install-deps: could not install the Python varlink package" >&2; exit 1; }
fi

if [ -n "${INSTALL_DEPS_REPORT:-}" ]; then
  # Simulated against an empty package database: the whole closure, as on a bare machine.
  empty_status=$(mktemp /tmp/reachabilityd-deps-status.XXXXXX)
  simulated=$(apt-get install -s --no-install-recommends -o Dir::State::status="$empty_status" "${packages[@]}") ||
    { rm -f "$empty_status"; echo "install-deps: apt-get install -s failed for ${packages[*]}" >&2; exit 1; }
  rm -f "$empty_status"
  sed -n 's/^Inst \([^ ]*\) .*/\1/p' <<<"$simulated" >> "$INSTALL_DEPS_REPORT"
fi
