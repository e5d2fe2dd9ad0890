#!/usr/bin/env bash
# End-to-end test of the Debian package in a booted systemd: builds the .deb, boots a minimal
# Debian 12 in systemd-nspawn (private network), installs the package with apt as the README
# says, and checks the unit, the bus policy, live updates, restarts, the watchdog, D-Bus
# activation, the Varlink socket (systemd's varlinkctl on Debian 13), reinstall/upgrade, the
# wait-online units (system, at a boot with dbus masked too, and a lingering user's manager),
# purge, and last a container with no bus following a daemon through its socket. Prints "N passed, M failed" last; exits non-zero on any failure. Needs root. Two and a half to four and a half minutes with a cached root
# filesystem (the wait-online boots and the idle minute take most), about four more without.
#
#   testbed/e2e/run.sh            (or: make e2e; make e2e-matrix runs the three variants)
#   E2E_SUITE=bookworm|trixie     the container's Debian release (default bookworm)
#   E2E_BUS=dbus-daemon|dbus-broker  the container's bus (default dbus-daemon)
#   E2E_DEB=PATH                  test this .deb instead of building one
#   E2E_KEEP_DEB=DIR              copy the built .deb there (for the next variants)
#   E2E_CACHE=DIR                 where the debootstrapped rootfs is cached (zstd tar)
#   E2E_IDLE_SECONDS=N            how long the journal check lets the daemon idle (default 60)
#   E2E_KEEP_ROOTFS=1             keep the container's root directory for a post-mortem
#
# This file holds the configuration; checks.sh (the checks library), setup.sh (host packages,
# the .deb, the root filesystem, boot, install) and the scenarios-*.sh files run in one shell, in
# the order the loop at the end sources them.
#
# Works on hosts without systemd as PID 1 (nspawn runs with --register=no --keep-unit; the
# container is reached with nsenter through its PID 1). See ../../../shared/PLATFORM-NOTES.md.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${E2E_CACHE:-/var/cache/reachabilityd-e2e}
suite=${E2E_SUITE:-bookworm}
bus_implementation=${E2E_BUS:-dbus-daemon}
# systemd, dbus, iproute2: what is tested; dbus-broker: the other bus (enabled only with
# E2E_BUS=dbus-broker, in the same cached rootfs). libstdc++6, libgcc-s1: the package's
# dependencies (the container has no network, so apt can install the .deb only when they are
# present). man-db: `systemd-analyze verify` checks Documentation=man:reachabilityd(8) with man.
# procps: kill. libcurl4 (libcurl4t64 since trixie): the package's Recommends (loaded only for
# the opt-in connectivity check). network-manager and its DHCP client: the other network
# manager whose DHCPv4 option 114 the daemon reads (disabled until its section).
# NetworkManager's DHCP client that keeps option 114: dhclient in Debian 12 (NetworkManager 1.42
# has no dhcpcd support), dhcpcd in Debian 13 (1.52 has no dhclient support). Debian 12's polkitd
# needs a logind, which debootstrap does not choose by itself: libpam-systemd. systemd-resolved:
# the DNS section's resolver (/etc/resolv.conf its stub, as on a default desktop or cloud image). Debian 13's user
# manager (the lingering user's, for the user wait-online unit) needs pam_systemd too: without
# it `systemd --user` has no $XDG_RUNTIME_DIR and exits.
case $suite in
    bookworm) curl_package=libcurl4 dhcp_client=dhclient network_manager_packages=network-manager,isc-dhcp-client,libpam-systemd ;;
    trixie) curl_package=libcurl4t64 dhcp_client=dhcpcd network_manager_packages=network-manager,dhcpcd-base,libpam-systemd ;;
    *) echo "E2E_SUITE must be bookworm or trixie, not $suite" >&2; exit 2 ;;
esac
case $bus_implementation in
    dbus-daemon | dbus-broker) ;;
    *) echo "E2E_BUS must be dbus-daemon or dbus-broker, not $bus_implementation" >&2; exit 2 ;;
esac
include=systemd,systemd-resolved,dbus,dbus-broker,iproute2,libstdc++6,libgcc-s1,man-db,procps,$curl_package,$network_manager_packages
tarball=$cache/$suite-minbase-$(echo "$include" | sha1sum | cut -c1-8).tar.zst
bus_name=org.reachabilityd.Reachability1
object=/org/reachabilityd/Reachability1
started=$(date +%s)

passed=0
failed=0
nspawn_pid=
leader=   # the container's PID 1, once booted

# The checks library, the set-up and the scenarios, in order (one shell: they share its variables).
for part in checks setup scenarios-daemon scenarios-connectivity scenarios-wait-online scenarios-purge scenarios-nobus; do
    # shellcheck source=/dev/null
    source "$repo/testbed/e2e/$part.sh"
done

finish
