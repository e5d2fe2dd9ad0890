#!/usr/bin/env bash
# Installs the Debian packages reachabilityd needs to build, run and test. Idempotent: does
# nothing when everything is present. Needs root (or sudo) to install.
set -euo pipefail

packages=(
  libsystemd-dev pkg-config   # sd-bus and sd-daemon headers, found through pkg-config
  dbus-daemon dbus-bin        # the bus the daemon serves (tests start a private one)
  systemd                     # busctl
  iproute2                    # ip netns / veth for the integration tests
)

missing=()
for package in "${packages[@]}"; do
  [[ "$package" == \#* ]] && continue
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
  if "${as_root[@]}" apt-get update -qq && "${as_root[@]}" apt-get install -y -qq "${missing[@]}"; then
    exit 0
  fi
  echo "install-deps: apt-get failed (attempt $attempt), retrying" >&2
  sleep 5
done
echo "install-deps: could not install ${missing[*]}" >&2
exit 1
