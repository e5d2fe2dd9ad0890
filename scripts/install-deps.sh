#!/usr/bin/env bash
# Installs Debian packages that are missing: with no arguments, what reachabilityd needs to
# build, run and test; with arguments, those packages (the package build, the end-to-end test
# and the benchmark name theirs). Idempotent: does nothing when everything is present. Needs
# root (or sudo) to install; retries apt-get three times.
#   scripts/install-deps.sh [PACKAGE...]
set -euo pipefail

packages=(
  libsystemd-dev pkg-config   # sd-bus and sd-daemon headers, found through pkg-config
  dbus-daemon dbus-bin        # the bus the daemon serves (tests start a private one)
  systemd                     # busctl
  iproute2                    # ip netns / veth for the integration tests
  libcurl4-openssl-dev        # libcurl's headers (the connectivity check loads libcurl.so.4 when configured)
  python3 openssl             # the connectivity tests' HTTP/HTTPS servers and their test CA
  python3-dbus python3-gi gir1.2-glib-2.0  # the tests' D-Bus clients and the Python example
  gcc libc6-dev               # the C example, built by the tests
  libglib2.0-dev make         # the GIO module (gio/, pkg-config gio-2.0), built by make build and the tests
  prometheus-node-exporter curl  # the metrics test scrapes the real node_exporter
)
[ $# -gt 0 ] && packages=("$@")

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3; do
  if "${as_root[@]}" apt-get update -qq >&2 && "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >&2; then
    exit 0
  fi
  echo "install-deps: apt-get failed (attempt $attempt), retrying" >&2
  sleep 5
done
echo "install-deps: could not install ${missing[*]}" >&2
exit 1
