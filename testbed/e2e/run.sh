#!/usr/bin/env bash
# End-to-end test of the Debian package in a booted systemd: builds the .deb, boots a minimal
# Debian 12 in systemd-nspawn (private network), installs the package with apt as the README
# says, and checks the unit, the bus policy, live updates, restarts, the watchdog, D-Bus
# activation, reinstall/upgrade, the wait-online units (system, and a lingering user's manager)
# and purge. Prints "N passed, M failed" last; exits non-zero on any failure. Needs root. Two and a half to four and a half minutes with a cached root
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
log() { printf 'e2e %s/%s [%3ds] %s\n' "$suite" "$bus_implementation" "$(($(date +%s) - started))" "$*"; }
pass() { passed=$((passed + 1)); log "PASS $1"; }
failures=()   # the failed checks' lines, said again last (CI shows an output's tail)
fail() { local line; line=$(log "FAIL $1${2:+: $2}"); echo "$line"; failed=$((failed + 1)); failures+=("$line"); }
finishing=
finish() {
    finishing=1
    if [ "$failed" -gt 0 ] && [ -n "$leader" ]; then
        log "the container's journal for reachabilityd and dbus:"
        in_container journalctl --no-pager -o short-monotonic 2>&1 | grep -E "Activat|activat" | tail -20
        in_container journalctl --no-pager -o short-monotonic 2>&1 | grep -E "reachabilityd|dbus" | tail -40
    fi
    log "took $(($(date +%s) - started)) s"
    [ "$failed" -gt 0 ] && printf '%s\n' "${failures[@]}"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit
}
# A step the rest depends on: on failure, count it and stop.
require() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; finish; fi; }
# Polls "$@" until it succeeds, for up to $timeout seconds.
eventually() {
    local timeout=$1; shift
    local deadline=$((SECONDS + timeout))
    until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.2; done
}

[ "$(id -u)" -eq 0 ] || { fail "needs root (debootstrap, systemd-nspawn)"; finish; }

# --- Host packages ---------------------------------------------------------------------------
host_packages=(
    debhelper devscripts lintian dh-exec fakeroot build-essential  # building and checking the .deb
    libsystemd-dev libcurl4-openssl-dev pkg-config                 # build dependencies
    libglib2.0-dev                                                 # the GIO module and its C consumer
    systemd-container debootstrap zstd                             # the container
    dnsmasq-base python3 openssl                                   # the router of the connectivity check
)
install_host_packages() { "$repo/scripts/install-deps.sh" "${host_packages[@]}" >&2; }
require "host packages installed" install_host_packages

# One container at a time: without systemd on the host, containers share one cgroup.
mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9

# --- The package -------------------------------------------------------------------------------
work=$(mktemp -d /var/tmp/reachabilityd-e2e.XXXXXX)
router=re2e-$$   # the connectivity check's router namespace, made late
# Powers the container off (for good, or to boot it again).
power_off() {
    if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
        kill -TERM "$nspawn_pid" 2>/dev/null   # nspawn asks the container's systemd to power off
        for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$nspawn_pid" 2>/dev/null
        wait "$nspawn_pid" 2>/dev/null
    fi
    leader=
}
cleanup() {
    if ip netns list | grep -q "^$router\b"; then
        for pid in $(ip netns pids "$router" 2>/dev/null); do kill "$pid" 2>/dev/null; done
        ip netns delete "$router"
    fi
    power_off
    if [ -n "${E2E_KEEP_ROOTFS:-}" ]; then
        log "kept $work"
    else
        rm -rf --one-file-system "$work"
    fi
}
trap cleanup EXIT
trap '[ -n "$finishing" ] || { fail "interrupted"; finish; }' INT TERM

build_deb() {
    "$repo/scripts/build-deb.sh" "$work/out" > "$work/deb-path" 2> "$work/build.log" ||
        { tail -30 "$work/build.log"; return 1; }
    deb=$(cat "$work/deb-path")
    log "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
    if [ -n "${E2E_KEEP_DEB:-}" ]; then mkdir -p "$E2E_KEEP_DEB" && cp "$deb" "$work"/out/reachabilityd-gio-module_*.deb "$E2E_KEEP_DEB/"; fi
}
# E2E_DEB's directory holds the GIO module's package too (build-deb.sh builds both).
given_deb() {
    mkdir -p "$work/out" && cp "$E2E_DEB" "$(dirname "$E2E_DEB")"/reachabilityd-gio-module_*.deb "$work/out/" &&
        deb=$work/out/$(basename "$E2E_DEB")
}
if [ -n "${E2E_DEB:-}" ]; then
    require "the package to test: $E2E_DEB" given_deb
else
    require "package builds and is lintian-clean (--fail-on error,warning)" build_deb
fi

# --- The container's root filesystem (debootstrapped once, cached) ----------------------------
mirror() {
    sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 |
        grep . || sed -n 's/^deb \(\[[^]]*\] \)\?\(http[^ ]*\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1 |
        grep . || echo http://deb.debian.org/debian
}
make_rootfs_tarball() {
    [ -s "$tarball" ] && return 0
    local root=$work/debootstrap
    log "debootstrapping $suite from $(mirror) (once; cached in $tarball)"
    debootstrap --variant=minbase --include="$include" \
        "$suite" "$root" "$(mirror)" > "$work/debootstrap.log" 2>&1 ||
        { tail -20 "$work/debootstrap.log"; return 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb
    rm -f "$cache/$suite"-minbase*.tar.zst   # caches of other package lists
    tar -C "$root" --numeric-owner -cf - . | zstd -q -T0 -o "$tarball.tmp" && mv "$tarball.tmp" "$tarball"
    rm -rf --one-file-system "$root"
}
require "cached $suite root filesystem" make_rootfs_tarball

rootfs=$work/rootfs
unpack_rootfs() {
    mkdir "$rootfs" && zstd -q -d -c "$tarball" | tar -C "$rootfs" --numeric-owner -xf - || return 1
    echo reachabilityd-e2e > "$rootfs/etc/hostname"
    # The machine id is created at first boot; an empty file keeps it from being committed.
    : > "$rootfs/etc/machine-id"
    # dbus-broker's unit is an alias of dbus.service once enabled (dbus.socket starts it).
    if [ "$bus_implementation" = dbus-broker ]; then
        systemctl --root="$rootfs" --quiet enable dbus-broker.service || return 1
    else
        systemctl --root="$rootfs" --quiet disable dbus-broker.service 2>/dev/null
    fi
    # NetworkManager would take the test's links at boot; it is started in its own section.
    systemctl --root="$rootfs" --quiet disable NetworkManager.service NetworkManager-wait-online.service 2>/dev/null
    return 0
}
require "root filesystem unpacked" unpack_rootfs

# --- Boot ------------------------------------------------------------------------------------
# Starts the container until its manager answers (boot then waits for the boot to settle).
launch() {
    local machine=reachabilityd-e2e-$$
    # The unified cgroup hierarchy even on a host whose own is hybrid: systemd >= 256 (trixie)
    # boots only on it, and the unit's IPAddressDeny= needs it (BPF programs on cgroup v2).
    SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --boot --register=no --keep-unit --private-network --system-call-filter=bpf \
        --machine="$machine" --directory="$rootfs" --bind-ro="$work/out:/srv/e2e" \
        --console=pipe < /dev/null > "$work/console.log" 2>&1 &
    nspawn_pid=$!
    # The container's PID 1 is the descendant of nspawn whose command is systemd.
    local deadline=$((SECONDS + 30)) pid
    while [ $SECONDS -lt $deadline ] && [ -z "$leader" ]; do
        for pid in $(descendants "$nspawn_pid"); do
            [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ] && { leader=$pid; break; }
        done
        [ -z "$leader" ] && sleep 0.2
    done
    [ -n "$leader" ] || { tail -20 "$work/console.log"; return 1; }
    # "degraded" is fine: some units of a full boot do not apply to a container.
    # systemctl needs the manager's socket: before it exists it answers nothing at all.
    eventually 30 in_container test -S /run/systemd/private || { tail -20 "$work/console.log"; return 1; }
}
boot() {
    launch || return 1
    local state
    state=$(in_container timeout 60 systemctl is-system-running --wait 2>/dev/null)
    log "container PID 1 is $leader, system $state"
    case $state in running | degraded) return 0 ;; *) tail -20 "$work/console.log"; return 1 ;; esac
}
descendants() {
    local child
    for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$child"; descendants "$child"; done
}
in_container() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
# As an unprivileged user inside the container.
as_nobody() { in_container setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
require "container boots (systemd-nspawn --boot --private-network)" boot
bus_is() {
    local process
    case $bus_implementation in dbus-broker) process=dbus-broker ;; *) process=dbus-daemon ;; esac
    in_container sh -c "ps -e -o comm= | grep -qx $process"
}
require "the system bus is $bus_implementation" eventually 10 bus_is

# --- Helpers for the checks ------------------------------------------------------------------
status() { "$@" busctl get-property "$bus_name" "$object" "$bus_name" Status 2>&1; }
main_pid() { in_container systemctl show -p MainPID --value reachabilityd.service; }
is_active() { [ "$(in_container systemctl is-active reachabilityd.service)" = active ]; }
answers() { status in_container | grep -q '^s "'; }
# Active again under a main PID other than $1.
replaced() { local pid; pid=$(main_pid); [ "$pid" != "$1" ] && [ "$pid" != 0 ] && is_active; }
check() {
    local name=$1; shift
    local output
    if output=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(tail -5 <<<"$output" | tr '\n' ' ')"; fi
}
expect_eq() { [ "$1" = "$2" ] || { echo "expected '$2', got '$1'"; return 1; }; }
status_is() { [ "$(status in_container)" = "s \"$1\"" ]; }

# --- Install ---------------------------------------------------------------------------------
install_package() {
    in_container sh -c "cd /srv/e2e && apt-get install -y ./$(basename "$deb")" > "$work/install.log" 2>&1 ||
        { tail -20 "$work/install.log"; return 1; }
}
require "apt install ./$(basename "$deb") (offline, in the container)" install_package

check "systemctl is-enabled reachabilityd: enabled" \
    expect_eq "$(in_container systemctl is-enabled reachabilityd.service)" enabled
check "systemctl is-active reachabilityd: active" is_active
check "first start got the bus name (no restart, no denial)" \
    expect_eq "$(in_container systemctl show -p NRestarts --value reachabilityd.service)" 0
check "systemd-analyze verify reachabilityd.service: no output" \
    expect_eq "$(in_container systemd-analyze verify reachabilityd.service 2>&1)" ""
security=$(in_container systemd-analyze security reachabilityd.service 2>/dev/null | sed -n 's/.*Overall exposure level for reachabilityd.service: \([0-9.]*\).*/\1/p')
# 1.1: no PrivateUsers= (0.2), so that CheckAddress can ask the kernel with any caller's uid.
check "systemd-analyze security: exposure $security <= 1.1" awk -v s="${security:-99}" 'BEGIN { exit !(s <= 1.1) }'
check "the D-Bus alias dbus-org.reachabilityd.Reachability1.service is enabled" \
    test -L "$rootfs/etc/systemd/system/dbus-org.reachabilityd.Reachability1.service"
check "the daemon runs as user reachabilityd" \
    expect_eq "$(in_container stat -c %U "/proc/$(main_pid)" 2>&1)" reachabilityd

# --- Reading the status ------------------------------------------------------------------------
check "root reads Status: not-reachable (only lo)" expect_eq "$(status in_container)" 's "not-reachable"'
check "an unprivileged user reads Status" expect_eq "$(status as_nobody)" 's "not-reachable"'
check "an unprivileged user calls CheckAddress" \
    expect_eq "$(as_nobody busctl call "$bus_name" "$object" "$bus_name" CheckAddress s 192.0.2.7 2>&1)" \
    'ss "not-reachable" ""'
expect_contains() { [[ $1 == *"$2"* ]] || { echo "expected '$2' in '$1'"; return 1; }; }
check "an unprivileged user calls CheckDestination" \
    expect_contains "$(as_nobody busctl call "$bus_name" "$object" "$bus_name" CheckDestination s 192.0.2.7 2>&1)" \
    '"status" s "not-reachable"'
check "an unprivileged user calls CheckConnectivity (no CheckURL=: the current Connectivity)" \
    expect_eq "$(as_nobody busctl call "$bus_name" "$object" "$bus_name" CheckConnectivity 2>&1)" 's "none"'
denied() { local out; out=$("$@" 2>&1) && { echo "allowed: $out"; return 1; }; grep -q 'Access denied' <<<"$out" || { echo "$out"; return 1; }; }
check "an unprivileged user cannot own the name" \
    denied as_nobody busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su "$bus_name" 0
check "an unprivileged user cannot call anything else (Properties.Set)" \
    denied as_nobody busctl set-property "$bus_name" "$object" "$bus_name" Status s reachable-via-wifi
check "root cannot own the name either" \
    denied in_container busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su "$bus_name" 0

# --- A route change reaches a listener ----------------------------------------------------------
monitor_pid=$(in_container sh -c "busctl monitor --match \"type='signal',sender='$bus_name'\" > /run/e2e-monitor.log 2>&1 & echo \$!")
monitor_saw() { in_container grep -q "$1" /run/e2e-monitor.log; }
eventually 10 monitor_saw 'Monitoring bus message stream' || log "busctl monitor did not say it started"
in_container sh -c 'ip link add e2e0 type veth peer name e2e1 && ip link set e2e1 up &&
    ip link set e2e0 up && ip addr add 192.0.2.2/24 dev e2e0 && ip route add default via 192.0.2.1'
check "a default route reaches a busctl monitor listener as StatusChanged" \
    eventually 10 monitor_saw 'Member=StatusChanged'
check "the listener saw PropertiesChanged" eventually 5 monitor_saw 'Member=PropertiesChanged'
check "the listener saw reachable-via-ethernet" eventually 5 monitor_saw '"reachable-via-ethernet"'
check "Status is now reachable-via-ethernet" expect_eq "$(status in_container)" 's "reachable-via-ethernet"'
journal_has_status_entry() {
    in_container journalctl --no-pager -o json MESSAGE_ID=4afbbecd892743e583b58432607723ed |
        grep '"REACHABILITY_STATUS":"reachable-via-ethernet"' | grep '"REACHABILITY_INTERFACE":"e2e0"' >/dev/null
}
check "the journal has a status-changed entry with its fields (MESSAGE_ID, REACHABILITY_*)" \
    eventually 5 journal_has_status_entry
journal_explains_it() {
    in_container journalctl --no-pager -x MESSAGE_ID=4afbbecd892743e583b58432607723ed | grep 'Network reachability changed to' >/dev/null
}
check "journalctl -x explains the entry from the catalog" journal_explains_it
in_container kill "$monitor_pid"
explain() { as_nobody busctl call "$bus_name" "$object" "$bus_name" Explain | grep -q e2e0; }
check "an unprivileged user calls Explain (it names e2e0)" explain
ctl_status() { as_nobody reachabilityctl status | grep -q reachable-via-ethernet; }
ctl_status_json() { in_container reachabilityctl status --json | grep -q '"reachable-via-ethernet"'; }
check "reachabilityctl status (unprivileged) says reachable-via-ethernet" ctl_status
check "reachabilityctl status --json has the status" ctl_status_json
check "reachabilityctl wait --timeout 5 returns 0" in_container reachabilityctl wait --timeout 5
example_unit_runs() {
    cp "$repo/Examples/shell/reachability-example.service" "$rootfs/etc/systemd/system/" &&
        in_container systemctl daemon-reload && in_container systemctl start reachability-example.service &&
        eventually 5 in_container sh -c 'journalctl -u reachability-example.service | grep -q "The network is reachable."'
}
check "Examples/shell/reachability-example.service (ExecStartPre=reachabilityctl wait) runs" example_unit_runs
check "reachabilityctl(1) and reachabilityd(8) are installed" \
    test -f "$rootfs/usr/share/man/man1/reachabilityctl.1.gz" -a -f "$rootfs/usr/share/man/man8/reachabilityd.8.gz"
check "the Prometheus alert rules and their tests are installed" \
    test -f "$rootfs/usr/share/reachabilityd/prometheus/reachabilityd-alerts.yml" -a -f "$rootfs/usr/share/reachabilityd/prometheus/reachabilityd-alerts.test.yml"

# --- The journal carries only the daemon's own lines ---------------------------------------------
# A few route changes, then an idle minute (E2E_IDLE_SECONDS) (the watchdog ping and timers start worker threads:
# libdispatch's "Failed to set thread priority for worker thread: ... errno=1" came from the
# unit's system call filter, several a minute). Nothing the unit wrote may be a library's
# stderr noise.
toggle_default_route() {
    local round
    for round in 1 2 3; do
        in_container ip route del default dev e2e0 && eventually 5 status_is not-reachable &&
            in_container ip route add default via 192.0.2.1 && eventually 5 status_is reachable-via-ethernet ||
            return 1
        sleep 1
    done
}
check "the default route removed and added again, 3 times: Status follows" toggle_default_route
sleep "${E2E_IDLE_SECONDS:-60}"
unit_journal=$(in_container journalctl --no-pager -o short-monotonic -u reachabilityd.service)
log "the unit's journal: $(grep -vc '^-- ' <<<"$unit_journal") lines since the package was installed"
# Sets library_noise to JOURNAL's lines with errno= or Failed to.
find_library_noise() { library_noise=$(grep -E 'errno=|Failed to' <<<"$1"); }
journal_has_no_library_noise() {
    [ -z "$library_noise" ] && return 0
    head -4 <<<"$library_noise"
    echo "$(wc -l <<<"$library_noise") line(s) with errno= or Failed to"
    return 1
}
find_library_noise "$unit_journal"
check "after the route changes and an idle minute, no line of the unit's journal has errno= or Failed to" \
    journal_has_no_library_noise
# The same binaries run by hand, outside any unit: what reachabilityctl wrote to the journal through
# syslog(3) as the unprivileged user of the status checks above (libdispatch's log goes there).
find_library_noise "$(in_container journalctl --no-pager -o cat _UID=65534 SYSLOG_IDENTIFIER=reachabilityctl)"
check "reachabilityctl run by an unprivileged user wrote no line with errno= or Failed to to the journal" \
    journal_has_no_library_noise

# --- The GIO module (issue 24) ----------------------------------------------------------------
# reachabilityd-gio-module installed beside the daemon: GLib's default network monitor in a fresh
# process is the module's type (gio/tests/can-reach.c, built on the host: the container has
# GLib, NetworkManager's dependency, but no compiler or Python), GLib's trigger listed it in
# giomodule.cache, and it answers can_reach through CheckAddress. After the daemon's purge
# (gio_module_after_purge) the module stays and GLib falls back to its own monitor.
gio_module_consumer() { in_container setpriv --reuid=nobody --regid=nogroup --clear-groups /srv/e2e/can-reach "$@" 2>&1; }
gio_module_checks() {
    local module_deb consumer_flags
    module_deb=$(cd "$work/out" && ls reachabilityd-gio-module_*.deb) || { fail "the GIO module's .deb beside $(basename "$deb")"; return; }
    consumer_flags=$(pkg-config --cflags --libs gio-2.0) &&
        cc -Wall -Wextra -Werror "$repo/gio/tests/can-reach.c" $consumer_flags -o "$work/out/can-reach" ||
        { fail "gio/tests/can-reach.c builds on the host"; return; }
    check "apt install ./$module_deb (offline, in the container)" \
        in_container sh -c "cd /srv/e2e && apt-get install -y ./$module_deb >/dev/null 2>&1"
    check "GLib's trigger ran gio-querymodules: giomodule.cache lists libgioreachabilityd.so" \
        in_container sh -c 'grep -q "^libgioreachabilityd.so: gio-network-monitor" /usr/lib/*/gio/modules/giomodule.cache'
    check "Gio.NetworkMonitor.get_default() is ReachabilitydNetworkMonitor and can_reach(192.0.2.7) says reachable" \
        expect_eq "$(gio_module_consumer 192.0.2.7 443)" "$(printf 'ReachabilitydNetworkMonitor\nreachable')"
    in_container ip route add unreachable 198.18.0.0/15
    check "can_reach(198.18.0.1) under an unreachable route: G_IO_ERROR_HOST_UNREACHABLE" eventually 5 gio_module_answer_is \
        "$(printf 'ReachabilitydNetworkMonitor\nerror g-io-error-quark host-unreachable ')" 198.18.0.1 443
    in_container ip route del unreachable 198.18.0.0/15
    in_container systemctl stop reachabilityd.service
    check "with reachabilityd stopped but activatable, the module starts it (D-Bus activation) and answers" \
        expect_eq "$(gio_module_consumer 192.0.2.7 443)" "$(printf 'ReachabilitydNetworkMonitor\nreachable')"
}
gio_module_answer_is() { local expected=$1; shift; [[ "$(gio_module_consumer "$@")" == "$expected"* ]]; }
gio_module_after_purge() {
    check "after purging reachabilityd, the GIO module falls back to GLib's own monitor" \
        gio_module_answer_is GNetworkMonitor 192.0.2.7 443
    purge_log=$(in_container apt-get purge -y reachabilityd-gio-module 2>&1) || fail "apt-get purge reachabilityd-gio-module" "$purge_log"
    check "purge of the GIO module: giomodule.cache no longer lists it" \
        in_container sh -c '! grep -q "^libgioreachabilityd.so" /usr/lib/*/gio/modules/giomodule.cache'
}
gio_module_checks

# --- Configuration and reload --------------------------------------------------------------------
check "the example configuration is installed" test -f "$rootfs/etc/reachabilityd/reachabilityd.conf"
in_container sh -c 'mkdir -p /etc/reachabilityd/reachabilityd.conf.d &&
    printf "[Reachability]\nIgnoreInterfaces=e2e0\n" > /etc/reachabilityd/reachabilityd.conf.d/e2e.conf'
check "systemctl reload succeeds" in_container systemctl reload reachabilityd.service
check "after reload a drop-in ignoring e2e0 makes it not-reachable" eventually 5 status_is not-reachable
in_container rm -r /etc/reachabilityd/reachabilityd.conf.d
in_container systemctl reload reachabilityd.service
check "after removing the drop-in and reloading: reachable-via-ethernet" eventually 5 status_is reachable-via-ethernet

# --- Restart and the watchdog ------------------------------------------------------------------
before=$(main_pid)
in_container systemctl restart reachabilityd.service
check "systemctl restart: active with a new PID" replaced "$before"
check "systemctl restart: keeps answering" expect_eq "$(status in_container)" 's "reachable-via-ethernet"'

# Unit's WatchdogSec=30s made shorter for the test only, through a runtime drop-in.
in_container sh -c 'mkdir -p /run/systemd/system/reachabilityd.service.d &&
    printf "[Service]\nWatchdogSec=2s\nRestartSec=100ms\n" > /run/systemd/system/reachabilityd.service.d/e2e.conf &&
    systemctl daemon-reload && systemctl restart reachabilityd.service'
frozen=$(main_pid)
in_container kill -STOP "$frozen"
watchdog_fired() { in_container journalctl -q -u reachabilityd.service --grep 'Watchdog timeout'; }
check "the watchdog restarts a frozen (SIGSTOP) daemon" eventually 15 replaced "$frozen"
check "the journal says the watchdog fired" watchdog_fired
check "after the watchdog restart it answers" eventually 5 answers
in_container sh -c 'rm -r /run/systemd/system/reachabilityd.service.d && systemctl daemon-reload &&
    systemctl restart reachabilityd.service'

# --- D-Bus activation --------------------------------------------------------------------------
# The sections above start the unit more than StartLimitBurst=5 times in 10 s (a fast container
# does that): forget those starts, or the activation below hits the start limit (systemd 257 then
# leaves dbus-daemon waiting for its 25 s timeout).
in_container systemctl reset-failed reachabilityd.service
in_container systemctl stop reachabilityd.service
check "systemctl stop: inactive" expect_eq "$(in_container systemctl is-active reachabilityd.service)" inactive
check "D-Bus activation: an unprivileged get-property starts the service and answers" \
    expect_eq "$(status as_nobody)" 's "reachable-via-ethernet"'
check "D-Bus activation: the service is active again" is_active

# --- Reinstall and upgrade -------------------------------------------------------------------
reinstall() { in_container dpkg -i "/srv/e2e/$1" > "$work/reinstall.log" 2>&1 || { tail -10 "$work/reinstall.log"; return 1; }; }
check "dpkg -i the same .deb again" reinstall "$(basename "$deb")"
check "after reinstall: active and answering" eventually 10 answers
# An upgrade: the same package repacked with a higher version.
bump_version() {
    local tree=$work/bumped version
    dpkg-deb -R "$deb" "$tree" &&
        version=$(sed -n 's/^Version: //p' "$tree/DEBIAN/control") &&
        sed -i "s/^Version: .*/Version: $version+e2e1/" "$tree/DEBIAN/control" &&
        dpkg-deb -b "$tree" "$work/out/reachabilityd_${version}+e2e1_upgrade.deb" >/dev/null && rm -rf "$tree"
}
if bump_version; then
    before=$(main_pid)
    check "upgrade to a bumped version" reinstall "$(cd "$work/out" && ls reachabilityd_*+e2e1_upgrade.deb)"
    check "after upgrade: restarted" replaced "$before"
    check "after upgrade: answering" expect_eq "$(status in_container)" 's "reachable-via-ethernet"'
else
    fail "repack the package with a bumped version"
fi

# --- The connectivity check behind a DHCP router ---------------------------------------------------
# A router namespace on the host ($router) whose veth peer goes into the container: dnsmasq leases
# 10.99.0.0/24 with DHCP option 114 (the captive-portal API, RFC 8910) and itself as the DNS server
# (answering e2e-served.test only; it follows its link when a reboot makes a new one), and the
# connectivity tests' servers answer the check (HTTP 204) and the API (HTTPS with a test CA:
# "captive": true). In the container systemd-networkd takes the lease. Nothing else on any network
# is contacted.
router_state=$work/router
start_router() {
    ip netns add "$router" && mkdir -p "$router_state" &&
        ip -n "$router" link add e2ecp0 type veth peer name e2ecp1 &&
        ip -n "$router" link set e2ecp0 netns "$leader" &&
        ip -n "$router" addr add 10.99.0.1/24 dev e2ecp1 && ip -n "$router" link set e2ecp1 up && ip -n "$router" link set lo up ||
        return 1
    ip netns exec "$router" python3 "$repo/testbed/servers/connectivity-server.py" "$router_state" > "$work/router.log" 2>&1 &
    ip netns exec "$router" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --user=root --group=root \
        --address=/e2e-served.test/10.99.0.1 --interface=e2ecp1 --bind-dynamic --dhcp-range=10.99.0.50,10.99.0.99,1h \
        --dhcp-option=114,"https://10.99.0.1:8443/captive" --dhcp-leasefile="$router_state/leases" --pid-file= \
        > "$work/dnsmasq.log" 2>&1 &
    eventually 30 test -e "$router_state/ready" || { cat "$work/router.log"; return 1; }
    cp "$router_state/ca.pem" "$work/out/ca.pem"
}
require "a router namespace with dnsmasq (option 114) and the check's servers" start_router
take_lease() {
    in_container sh -c 'ip route del default dev e2e0 && mkdir -p /etc/systemd/network &&
        printf "[Match]\nName=e2ecp0\n\n[Network]\nDHCP=ipv4\nLinkLocalAddressing=no\n" > /etc/systemd/network/50-e2e.network &&
        systemctl start systemd-networkd.service'
}
property() { in_container busctl get-property "$bus_name" "$object" "$bus_name" "$1" 2>&1; }
property_is() { [ "$(property "$1")" = "s \"$2\"" ]; }
explain_has() {
    local report
    report=$(in_container busctl call "$bus_name" "$object" "$bus_name" Explain)
    grep -qF "$1" <<<"$report" || { grep -E "check|API" <<<"$report" | sed 's/\\n/\n/g' | grep -E "check|API"; return 1; }
}
check "systemd-networkd takes a DHCP lease" take_lease
check "the route goes over the lease's link (Interface e2ecp0)" eventually 30 property_is Interface e2ecp0

# DNS: systemd-resolved (/etc/resolv.conf its stub) has the lease's server (dnsmasq) as its
# upstream server on e2ecp0. Then resolv.conf is re-pointed and replaced by rename, as the tools
# do, and the route toward its server taken away.
reason_has() { property Reason | grep -qF "$1"; }
replace_resolv_conf() { in_container sh -c "$1 /etc/resolv.conf.e2e && mv -T /etc/resolv.conf.e2e /etc/resolv.conf"; }
dns_section() {
    check "systemd-resolved runs, /etc/resolv.conf names its stub" in_container sh -c \
        'systemctl is-active --quiet systemd-resolved.service && grep -q "^nameserver 127.0.0.53" /etc/resolv.conf'
    check "DNS reachable: the lease's server, resolved's on e2ecp0, is routed" eventually 20 property_is DNS reachable
    check "Explain names it and where it came from" explain_has "nameserver 10.99.0.1 from systemd-resolved (link "
    check "a lookup through resolved gets dnsmasq's answer" in_container getent hosts e2e-served.test
    replace_resolv_conf 'ln -s /run/systemd/resolve/resolv.conf'
    check "resolv.conf re-pointed at resolved's upstream file: the server read from it" \
        eventually 10 explain_has "nameserver 10.99.0.1 from /etc/resolv.conf"
    in_container ip route add unreachable 198.51.100.53
    replace_resolv_conf 'printf "nameserver 198.51.100.53\\n" >'
    check "resolv.conf replaced by rename, its server not routed: DNS unreachable" eventually 10 property_is DNS unreachable
    check "Reason says no nameserver is routed" reason_has "but no nameserver is routed (198.51.100.53: "
    replace_resolv_conf 'printf "search example.org\\n" >'
    check "resolv.conf naming no server: glibc's default, 127.0.0.1, DNS reachable" eventually 10 property_is DNS reachable
    # (busctl escapes the apostrophe of "glibc's default": the check stops before it)
    check "Explain says where 127.0.0.1 came from" explain_has "nameserver 127.0.0.1 from glibc"
    replace_resolv_conf 'ln -s ../run/systemd/resolve/stub-resolv.conf'
    check "back to resolved's stub: DNS reachable" eventually 10 property_is DNS reachable
    in_container ip route del unreachable 198.51.100.53
}
dns_section
in_container sh -c 'mkdir -p /etc/reachabilityd/reachabilityd.conf.d && printf "[Connectivity]\nCheckURL=http://10.99.0.1:8080/check\nCheckIntervalSec=2\nCaptivePortalAPICAFile=/srv/e2e/ca.pem\n" > /etc/reachabilityd/reachabilityd.conf.d/check.conf && systemctl reload reachabilityd.service'
if in_container journalctl -b --no-pager | grep "BPF firewalling not supported" >/dev/null; then
    log "SKIP IPAddressDeny=any blocking the check: this container's systemd has no BPF firewall (its journal says so)"
else
    check "with checks on and the unit's IPAddressDeny=any: Connectivity limited" eventually 20 property_is Connectivity limited
    check "Explain says the packets were dropped and names IPAddressAllow=" explain_has "IPAddressAllow="
fi
in_container sh -c 'mkdir -p /etc/systemd/system/reachabilityd.service.d &&
    printf "[Service]\nIPAddressAllow=10.99.0.0/24\n" > /etc/systemd/system/reachabilityd.service.d/check.conf &&
    systemctl daemon-reload && systemctl restart reachabilityd.service'
checking_pid=$(main_pid)
networkd_version=$(in_container networkctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
if [ "${networkd_version:-0}" -ge 254 ]; then
    # networkd records option 114 (systemd >= 254): the API says captive.
    check "with IPAddressAllow= for the router: Connectivity portal (the API from DHCP says captive)" \
        eventually 20 property_is Connectivity portal
    check "CaptivePortal is the API's user-portal-url" property_is CaptivePortal "https://10.99.0.1:8443/portal"
    check "Explain shows the API from DHCPv4 (systemd-networkd $networkd_version)" explain_has "(RFC 8910, DHCPv4, from systemd-networkd)"
else
    # networkd $networkd_version does not record option 114: the check alone decides.
    check "with IPAddressAllow= for the router: Connectivity full (networkd $networkd_version has no option 114)" \
        eventually 20 property_is Connectivity full
fi
if [ "${networkd_version:-0}" -ge 255 ]; then
    # networkd >= 255 handling the link's router advertisements itself (UsePREF64=yes): the kernel
    # hands the PREF64 option to nobody, and the daemon reads networkd's record (NDisc.PREF64).
    advertise_pref64() {
        in_container sh -c 'mkdir -p /etc/systemd/network/50-e2e.network.d &&
            printf "[Network]\nLinkLocalAddressing=ipv6\nIPv6AcceptRA=yes\n\n[IPv6AcceptRA]\nUsePREF64=yes\n" > /etc/systemd/network/50-e2e.network.d/pref64.conf &&
            networkctl reload && networkctl reconfigure e2ecp0' || return 1
        ip netns exec "$router" python3 "$repo/testbed/servers/pref64-advertiser.py" e2ecp1 64:ff9b::/96 1800 > "$work/pref64.log" 2>&1 &
        advertiser_pid=$!
    }
    networkd_records_pref64() { in_container networkctl status e2ecp0 --json=short | grep -q '"PREF64"'; }
    check "systemd-networkd $networkd_version takes router advertisements with PREF64 (UsePREF64=yes)" advertise_pref64
    check "networkd records the prefix (NDisc.PREF64)" eventually 30 networkd_records_pref64
    check "NAT64Prefix is networkd's prefix" eventually 20 property_is NAT64Prefix 64:ff9b::/96
    check "Explain says it came from systemd-networkd" explain_has "64:ff9b::/96 from systemd-networkd (RFC 8781) by fe80::"
    # The later boots take the router's link again: no advertisements there.
    [ -n "${advertiser_pid:-}" ] && kill "$advertiser_pid"
fi
check "the daemon's check helper loaded libcurl under the unit's hardening and the daemon still runs (same PID)" expect_eq "$(main_pid)" "$checking_pid"
check_helper_sandboxed() {
    # libcurl only in the daemon's child (the check helper), which runs under its own seccomp filter.
    local helper
    in_container grep libcurl "/proc/$checking_pid/maps" > /dev/null && { echo "libcurl is mapped in the daemon"; return 1; }
    helper=$(in_container pgrep -P "$checking_pid" -f -- --connectivity-check-helper) || { echo "no check helper"; return 1; }
    in_container grep libcurl "/proc/$helper/maps" > /dev/null || { echo "libcurl is not mapped in the helper"; return 1; }
    in_container grep '^Seccomp:[[:space:]]*2' "/proc/$helper/status" > /dev/null || { echo "the helper has no seccomp filter"; return 1; }
}
check "libcurl is mapped in the check helper (seccomp-filtered), not in the daemon" check_helper_sandboxed
connectivity_now=$(property Connectivity | sed 's/^s "\(.*\)"$/\1/')
journal_has_connectivity_entry() {
    in_container journalctl --no-pager -o json MESSAGE_ID=199e5802915c48d9b0b8fd390df39f19 |
        grep "\"REACHABILITY_CONNECTIVITY\":\"$connectivity_now\"" | grep '"REACHABILITY_INTERFACE":"e2ecp0"' >/dev/null
}
journal_explains_connectivity() {
    # (grep reads it all: grep -q would end the pipe early, and journalctl's SIGPIPE fail it.)
    in_container journalctl --no-pager -x MESSAGE_ID=199e5802915c48d9b0b8fd390df39f19 | grep "Internet connectivity changed to $connectivity_now" > /dev/null
}
check "the journal has a connectivity-changed entry (REACHABILITY_CONNECTIVITY=$connectivity_now)" eventually 5 journal_has_connectivity_entry
check "journalctl -x explains it from the catalog" journal_explains_connectivity

# The same lease taken by NetworkManager instead: its own DHCP client drops option 114; dhclient
# and dhcpcd keep it when configured to ask for it.
take_lease_with_networkmanager() {
    local ask_for_option
    case $dhcp_client in
        dhclient) ask_for_option='echo "also request default-url;" >> /etc/dhcp/dhclient.conf' ;;
        dhcpcd) ask_for_option='echo "option captive_portal_uri" >> /etc/dhcpcd.conf' ;;
    esac
    in_container sh -c "systemctl stop systemd-networkd.service systemd-networkd.socket && ip addr flush dev e2ecp0 &&
        mkdir -p /etc/NetworkManager/conf.d &&
        printf '[main]\\ndhcp=$dhcp_client\\nno-auto-default=*\\n\\n[keyfile]\\nunmanaged-devices=except:interface-name:e2ecp0\\n' > /etc/NetworkManager/conf.d/e2e.conf &&
        $ask_for_option && systemctl start NetworkManager.service" || return 1
    eventually 20 in_container nmcli general status || return 1
    in_container nmcli connection add type ethernet ifname e2ecp0 con-name e2e autoconnect no ipv4.method auto ipv6.method disabled > "$work/nmcli.log" 2>&1 &&
        in_container nmcli --wait 30 connection up e2e >> "$work/nmcli.log" 2>&1 || { cat "$work/nmcli.log"; return 1; }
}
networkmanager_has_option() {
    in_container nmcli -f DHCP4 device show e2ecp0 | grep -qE "(default_url|captive_portal_uri) += https://10.99.0.1:8443/captive" ||
        { in_container nmcli -f DHCP4 device show e2ecp0; return 1; }
}
check "NetworkManager (dhcp=$dhcp_client) takes the DHCP lease" take_lease_with_networkmanager
check "NetworkManager records option 114 from $dhcp_client" eventually 10 networkmanager_has_option
networkmanager_has_option > /dev/null || in_container nmcli -f DHCP4 device show e2ecp0 | sed 's/^/    /'
check "Explain shows the API from DHCPv4 (NetworkManager)" eventually 10 explain_has "(RFC 8910, DHCPv4, from NetworkManager)"
check "with the lease from NetworkManager: Connectivity portal" eventually 20 property_is Connectivity portal
in_container sh -c 'rm -r /etc/reachabilityd/reachabilityd.conf.d /etc/systemd/system/reachabilityd.service.d && systemctl daemon-reload'

# --- Waiting for the network at boot: reachabilityd-wait-online.service --------------------------
# The unit as the package installs it, then connectivity mode with the check's servers above, then
# three boots of the same container with it enabled: the network configured 3 s late by a plain
# unit (not networkd), two links (one without carrier) beside systemd-networkd-wait-online, and no
# default route at all. E2E_NETWORKD_FULL=1 waits out networkd-wait-online's own 120 s timeout.
wait_online=reachabilityd-wait-online.service
wait_online_section() {
    check "$wait_online is installed, not enabled" expect_eq "$(in_container systemctl is-enabled $wait_online)" disabled
    check "systemd-analyze verify $wait_online: no output" expect_eq "$(in_container systemd-analyze verify $wait_online 2>&1)" ""
    local exposure
    exposure=$(in_container systemd-analyze security $wait_online 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    check "systemd-analyze security $wait_online: exposure $exposure <= the daemon's $security" \
        awk -v w="${exposure:-99}" -v d="${security:-0}" 'BEGIN { exit !(w <= d) }'
    wait_online_connectivity
    wait_online_late_network
    wait_online_beside_networkd
    wait_online_no_default_route
    in_container sh -c "systemctl disable --quiet $wait_online systemd-networkd.service systemd-networkd-wait-online.service 2>/dev/null;
        rm -rf /etc/systemd/system/e2e-*.service /etc/systemd/system/multi-user.target.wants/e2e-*.service \
            /etc/systemd/system/$wait_online.d /etc/systemd/network/*e2e*; systemctl daemon-reload"
}
unit_state() { in_container systemctl show -P ActiveState "$1"; }
unit_state_is() { [ "$(unit_state "$1")" = "$2" ]; }
# The unit's journal lines of this boot from reachabilityctl.
wait_online_said() { in_container journalctl -b --no-pager -o cat _SYSTEMD_UNIT=$wait_online SYSLOG_IDENTIFIER=reachabilityctl; }
# (grep reads all the journal's lines: one that quit at the first match would make journalctl's
# SIGPIPE fail the pipeline under pipefail.)
said_matches() { wait_online_said | grep "$1" >/dev/null; }
not_activating() { ! unit_state_is "$1" activating; }
no_ordering_cycle() { ! in_container journalctl -b --no-pager | grep -i "ordering cycle"; }
# A unit file in the container's /etc/systemd/system, enabled for multi-user.target.
put_unit() {
    local name=$1; shift
    printf '%s\n' "$@" > "$rootfs/etc/systemd/system/$name" &&
        mkdir -p "$rootfs/etc/systemd/system/multi-user.target.wants" &&
        ln -sf "../$name" "$rootfs/etc/systemd/system/multi-user.target.wants/$name"
}
# Powers the container off, lets "$@" change its files, boots it again until its manager answers.
reboot_with() {
    power_off
    "$@" && launch
}
# What a unit ordered after network-online.target found.
probe_unit() {
    put_unit e2e-probe.service "[Unit]" "Wants=network-online.target" "After=network-online.target" "[Service]" \
        "Type=oneshot" "RemainAfterExit=yes" \
        "ExecStart=/bin/sh -c 'busctl get-property $bus_name $object $bus_name Status > /run/e2e-probe.status'" \
        "[Install]" "WantedBy=multi-user.target"
}
enable_wait_online() {
    systemctl --root="$rootfs" --quiet enable $wait_online &&
        systemctl --root="$rootfs" --quiet disable systemd-networkd.service systemd-networkd-wait-online.service 2>/dev/null
    rm -rf "$rootfs/etc/systemd/system/e2e-"*.service "$rootfs/etc/systemd/system/multi-user.target.wants/e2e-"*.service \
        "$rootfs/etc/systemd/network/"*e2e* "$rootfs/etc/systemd/system/$wait_online.d"
    return 0
}
# Seconds from the container's userspace start to a unit's monotonic timestamp PROPERTY.
since_boot() {
    local at start
    at=$(in_container systemctl show -P "$2" "$1") && start=$(in_container systemctl show -P UserspaceTimestampMonotonic) &&
        awk -v a="$at" -v s="$start" 'BEGIN { if (a == 0) print "-"; else printf "%.1f", (a - s) / 1e6 }'
}

# Connectivity mode: the check's server redirects (portal), then answers 204 (full). e2ecp0 gets a
# static address (NetworkManager stopped: its lease's captive-portal API would say portal forever).
wait_online_connectivity() {
    in_container sh -c "systemctl stop NetworkManager.service && ip addr flush dev e2ecp0 && ip addr add 10.99.0.2/24 dev e2ecp0 &&
        ip route replace default via 10.99.0.1 dev e2ecp0 && mkdir -p /run/systemd/system/reachabilityd.service.d /run/systemd/system/$wait_online.d /etc/reachabilityd/reachabilityd.conf.d &&
        printf '[Service]\\nIPAddressAllow=10.99.0.0/24\\n' > /run/systemd/system/reachabilityd.service.d/e2e.conf &&
        printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/reachabilityctl wait --timeout 60 --verbose --connectivity full\\n' > /run/systemd/system/$wait_online.d/e2e.conf &&
        printf '[Connectivity]\\nCheckURL=http://10.99.0.1:8080/check\\nCheckIntervalSec=1\\n' > /etc/reachabilityd/reachabilityd.conf.d/check.conf &&
        systemctl daemon-reload && systemctl restart reachabilityd.service"
    echo redirect > "$router_state/mode"
    check "connectivity mode: Connectivity is portal (the check is redirected)" eventually 20 property_is Connectivity portal
    in_container systemctl start --no-block $wait_online
    sleep 3
    check "connectivity mode: --connectivity full still waits behind the portal" unit_state_is $wait_online activating
    echo 204 > "$router_state/mode"
    check "connectivity mode: done once the check says full" eventually 20 unit_state_is $wait_online active
    check "connectivity mode: the journal says how long it waited" eventually 5 said_matches '^Online after [0-9.]* s via e2ecp0 '
    in_container sh -c "systemctl stop $wait_online; rm -r /run/systemd/system/reachabilityd.service.d /run/systemd/system/$wait_online.d /etc/reachabilityd/reachabilityd.conf.d &&
        systemctl daemon-reload && systemctl restart reachabilityd.service"
}

# Enabled; a unit (not networkd) adds the address and the default route 3 s after the wait starts
# (3.2 s after systemd marks it activating: reachabilityctl's own clock starts a little later).
late_network_files() {
    enable_wait_online && probe_unit &&
        put_unit e2e-late-network.service "[Service]" "Type=oneshot" "RemainAfterExit=yes" \
            "ExecStart=/bin/sh -c 'until [ \"\$\$(systemctl show -P ActiveState $wait_online)\" = activating ]; do sleep 0.05; done; sleep 3.2; ip link add e2ew0 type veth peer name e2ew1 && ip link set e2ew1 up && ip link set e2ew0 up && ip addr add 192.0.2.2/24 dev e2ew0 && ip route add default via 192.0.2.1'" \
            "[Install]" "WantedBy=multi-user.target"
}
wait_online_late_network() {
    require "boot with $wait_online enabled and the network configured 3 s late by a unit" reboot_with late_network_files
    check "late network: the boot settles" eventually 30 unit_state_is e2e-probe.service active
    check "late network: a unit after network-online.target found the daemon reachable" \
        expect_eq "$(in_container cat /run/e2e-probe.status 2>&1)" 's "reachable-via-ethernet"'
    local said waited
    eventually 10 said_matches '^Online after ' || true  # (journald may store it after the unit is done)
    said=$(wait_online_said)
    waited=$(sed -n 's/^Online after \([0-9.]*\) s via e2ew0 .*/\1/p' <<<"$said")
    log "late network: $(grep '^Online after' <<<"$said")"
    check "late network: the wait took >= 3 s (${waited:-?} s) and says through e2ew0" awk -v w="${waited:-0}" 'BEGIN { exit !(w >= 3) }'
    check "late network: no ordering cycle in the boot's journal" no_ordering_cycle
}

# Two links, e2ec0 without carrier; networkd configures both, ours and networkd-wait-online race.
beside_networkd_files() {
    enable_wait_online &&
        systemctl --root="$rootfs" --quiet enable systemd-networkd.service systemd-networkd-wait-online.service &&
        put_unit e2e-pull.service "[Unit]" "Wants=network-online.target" "[Service]" "Type=oneshot" "ExecStart=/bin/true" \
            "[Install]" "WantedBy=multi-user.target" &&  # pulls network-online.target in, orders nothing after it
        mkdir -p "$rootfs/etc/systemd/network" &&
        printf '[Match]\nName=e2en0\n\n[Network]\nAddress=192.0.2.2/24\nGateway=192.0.2.1\nLinkLocalAddressing=no\n' > "$rootfs/etc/systemd/network/40-e2e-up.network" &&
        printf '[Match]\nName=e2ec0\n\n[Network]\nAddress=198.51.100.2/24\nLinkLocalAddressing=no\n' > "$rootfs/etc/systemd/network/40-e2e-nocarrier.network" &&
        put_unit e2e-links.service "[Unit]" "DefaultDependencies=no" "Before=systemd-networkd.service" "[Service]" "Type=oneshot" \
            "ExecStart=/bin/sh -c 'ip link add e2en0 type veth peer name e2en1 && ip link set e2en1 up && ip link add e2ec0 type veth peer name e2ec1'" \
            "[Install]" "WantedBy=multi-user.target"
}
wait_online_beside_networkd() {
    require "boot with $wait_online and systemd-networkd-wait-online enabled, e2ec0 without carrier" reboot_with beside_networkd_files
    check "beside networkd: ours is done" eventually 30 unit_state_is $wait_online active
    local ours theirs limit=10
    ours=$(since_boot $wait_online ActiveEnterTimestampMonotonic)
    [ -n "${E2E_NETWORKD_FULL:-}" ] && limit=150
    eventually "$limit" not_activating systemd-networkd-wait-online.service
    theirs=$(since_boot systemd-networkd-wait-online.service ActiveEnterTimestampMonotonic)
    [ "$theirs" = - ] && theirs=$(since_boot systemd-networkd-wait-online.service InactiveEnterTimestampMonotonic)
    [ "$theirs" = - ] && theirs="> $(awk -v o="$ours" -v l="$limit" 'BEGIN { printf "%.1f", o + l }') (still waiting)"
    log "side by side, same boot: $wait_online done at $ours s; systemd-networkd-wait-online (default options): $theirs s ($(unit_state systemd-networkd-wait-online.service)); ours said: $(wait_online_said | grep '^Online after')"
    check "beside networkd: ours within 10 s of boot ($ours s), through e2en0" \
        awk -v o="$ours" 'BEGIN { exit !(o != "-" && o + 0 < 10) }'
    check "beside networkd: the journal says e2en0" said_matches '^Online after [0-9.]* s via e2en0 '
    check "beside networkd: no ordering cycle in the boot's journal" no_ordering_cycle
}

# No default route: the unit fails after its (shortened) timeout, saying why; the boot goes on.
no_route_files() {
    enable_wait_online && probe_unit && mkdir -p "$rootfs/etc/systemd/system/$wait_online.d" &&
        printf '[Service]\nExecStart=\nExecStart=/usr/bin/reachabilityctl wait --timeout 3 --verbose\n' > "$rootfs/etc/systemd/system/$wait_online.d/e2e.conf"
}
wait_online_no_default_route() {
    require "boot with $wait_online enabled (--timeout 3) and no default route" reboot_with no_route_files
    local state
    state=$(in_container timeout 60 systemctl is-system-running --wait 2>/dev/null)
    check "no route: the boot is done and degraded, not stuck ($state)" expect_eq "$state" degraded
    check "no route: multi-user.target reached" expect_eq "$(unit_state multi-user.target)" active
    check "no route: $wait_online failed" expect_eq "$(unit_state $wait_online)" failed
    log "no route: $(wait_online_said | grep 'Timed out')"
    check "no route: one journal line with the daemon's reason" eventually 5 said_matches '^reachabilityctl: Timed out after 3.0 s: not-reachable (.*)\.$'
    # Stopped by systemd instead: a TimeoutStartSec= shorter than the wait.
    in_container sh -c "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/reachabilityctl wait --timeout 0\\nTimeoutStartSec=2\\n' > /etc/systemd/system/$wait_online.d/e2e.conf &&
        systemctl daemon-reload && systemctl reset-failed $wait_online; systemctl start $wait_online" 2>/dev/null
    check "no route: stopped by TimeoutStartSec=2, it says where it stood" eventually 5 said_matches '^reachabilityctl: Stopped (SIGTERM) after [0-9.]* s: not-reachable (.*)\.$'
    # The early give-up: the container has no link but loopback.
    in_container sh -c "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/reachabilityctl wait --timeout 0 --carrier-timeout 1\\n' > /etc/systemd/system/$wait_online.d/e2e.conf &&
        systemctl daemon-reload && systemctl reset-failed $wait_online; systemctl start $wait_online" 2>/dev/null
    check "no route: --carrier-timeout 1 gives up without carrier, under the unit's sandbox" \
        eventually 5 said_matches '^reachabilityctl: Gave up after [0-9.]* s: no link that could lead out has had carrier for 1.0 s; not-reachable (.*)\.$'
    check "no route: no ordering cycle in the boot's journal" no_ordering_cycle
}
wait_online_section
# What reachabilityctl wrote under the unit over every boot and start above: only its own lines.
find_library_noise "$(in_container journalctl --no-pager -o cat _SYSTEMD_UNIT=$wait_online)"
check "$wait_online: over its boots and starts, no line it wrote has errno= or Failed to" journal_has_no_library_noise

# --- Waiting for the network in a user manager: reachabilityd-wait-online.service (user) ---------
# A lingering user (its manager started at boot by logind, no login) whose unit in default.target
# Wants= and After= the user unit; a system unit adds the address and the default route 3 s
# after that user's reachabilityctl started waiting (3.2 s after its process appeared:
# reachabilityctl's own clock starts a little later). The user's unit must start after the route
# appeared and see the daemon say reachable; the user manager itself must not wait for it. Then
# with the daemon masked (neither running nor activatable) the user unit fails at once, saying so.
user_wait_online=/usr/lib/systemd/user/$wait_online
user=e2euser
# As the lingering user, with its manager's runtime directory (systemctl --user reaches it there).
as_user() { in_container setpriv --reuid="$user" --regid="$user" --init-groups env XDG_RUNTIME_DIR="/run/user/$user_uid" "$@"; }
user_unit_state() { as_user systemctl --user show -P ActiveState "$1"; }
user_unit_state_is() { [ "$(user_unit_state "$1")" = "$2" ]; }
# The user unit's journal lines of this boot from reachabilityctl. By the user's uid, not
# _SYSTEMD_USER_UNIT: a line a short-lived reachabilityctl wrote just before exiting was seen
# stored without the user unit's name (1 run in 3 with dbus-broker); the uid comes from the
# stream's socket. No other reachabilityctl runs as this user.
user_wait_online_said() { in_container journalctl -b --no-pager -o cat _UID="$user_uid" SYSLOG_IDENTIFIER=reachabilityctl; }
user_said_matches() { user_wait_online_said | grep "$1" >/dev/null; }
# The section above left no e2e unit enabled (wait_online_section's cleanup).
user_files() {
    mkdir -p "$rootfs/var/lib/systemd/linger" "$rootfs/etc/systemd/user/default.target.wants" &&
        : > "$rootfs/var/lib/systemd/linger/$user" &&
        printf '%s\n' "[Unit]" "Wants=$wait_online" "After=$wait_online" "[Service]" "Type=oneshot" "RemainAfterExit=yes" \
            "ExecStart=/bin/sh -c 'read -r up _ < /proc/uptime; echo \"\$\$up \$\$(busctl get-property $bus_name $object $bus_name Status)\" > %t/e2e-user-probe'" \
            "[Install]" "WantedBy=default.target" > "$rootfs/etc/systemd/user/e2e-user-probe.service" &&
        ln -sf ../e2e-user-probe.service "$rootfs/etc/systemd/user/default.target.wants/e2e-user-probe.service" &&
        put_unit e2e-late-network.service "[Service]" "Type=oneshot" "RemainAfterExit=yes" \
            "ExecStart=/bin/sh -c 'for i in \$\$(seq 600); do pgrep -u $user -x reachabilityctl >/dev/null && break; sleep 0.05; done; sleep 3.2; read -r up _ < /proc/uptime; echo \$\$up > /run/e2e-route-added; ip link add e2ew0 type veth peer name e2ew1 && ip link set e2ew1 up && ip link set e2ew0 up && ip addr add 192.0.2.2/24 dev e2ew0 && ip route add default via 192.0.2.1'" \
            "[Install]" "WantedBy=multi-user.target"
}
user_wait_online_section() {
    check "the package installs the user unit $user_wait_online" test -f "$rootfs$user_wait_online"
    in_container useradd --create-home "$user" && user_uid=$(in_container id -u "$user") || { fail "useradd $user"; return; }
    require "boot with a lingering user whose unit orders after $wait_online, the network 3 s late" reboot_with user_files
    check "the lingering user's manager runs (user@$user_uid.service)" eventually 30 unit_state_is "user@$user_uid.service" active
    check "user manager: systemd-analyze --user verify $wait_online: no output" \
        expect_eq "$(as_user systemd-analyze --user verify "$user_wait_online" 2>&1)" ""
    log "user manager: $(as_user systemd-analyze --user security --offline=true "$user_wait_online" 2>/dev/null | grep 'Overall exposure') (no User=, namespaces or BPF firewall in a user manager)"
    check "user manager: the user's unit after $wait_online is done" eventually 30 user_unit_state_is e2e-user-probe.service active
    local probe route_added probe_started probe_status waited
    probe=$(as_user cat "/run/user/$user_uid/e2e-user-probe" 2>&1)
    route_added=$(in_container cat /run/e2e-route-added 2>&1)
    probe_started=${probe%% *}
    probe_status=${probe#* }
    log "user manager: default route added at ${route_added:-?} s (uptime), the user's unit started at ${probe_started:-?} s and read $probe_status"
    check "user manager: the user's unit found the daemon reachable" expect_eq "$probe_status" 's "reachable-via-ethernet"'
    check "user manager: the user's unit started after the default route was added" \
        awk -v p="${probe_started:-0}" -v r="${route_added:-x}" 'BEGIN { exit !(r + 0 > 0 && p + 0 >= r + 0) }'
    # (The unit is done before journald has necessarily stored its last line.)
    eventually 10 user_said_matches '^Online after ' || true
    waited=$(user_wait_online_said | sed -n 's/^Online after \([0-9.]*\) s via e2ew0 .*/\1/p')
    log "user manager: $(user_wait_online_said | grep '^Online after')"
    check "user manager: the wait took >= 3 s (${waited:-?} s) and says through e2ew0" awk -v w="${waited:-0}" 'BEGIN { exit !(w >= 3) }'
    local ready done_at
    ready=$(in_container systemctl show -P ActiveEnterTimestampMonotonic "user@$user_uid.service")
    done_at=$(as_user systemctl --user show -P ActiveEnterTimestampMonotonic $wait_online)
    check "user manager: user@$user_uid.service was ready before the wait ended (the wait does not delay it)" \
        awk -v r="${ready:-0}" -v d="${done_at:-0}" 'BEGIN { exit !(r > 0 && d > 0 && r < d) }'
    # Neither running nor activatable: the user unit fails at once and says so.
    in_container sh -c "systemctl mask --runtime --quiet reachabilityd.service && systemctl stop reachabilityd.service"
    as_user systemctl --user restart $wait_online 2>/dev/null
    check "no daemon (masked): the user unit fails" eventually 10 user_unit_state_is $wait_online failed
    check "no daemon (masked): with exit status 69" expect_eq "$(as_user systemctl --user show -P ExecMainStatus $wait_online)" 69
    check "no daemon (masked): one journal line says reachabilityd is not running" \
        eventually 5 user_said_matches '^reachabilityctl: reachabilityd is not running'
    log "no daemon (masked): $(user_wait_online_said | grep 'not running')"
    find_library_noise "$(in_container journalctl --no-pager -o cat _UID="$user_uid" SYSLOG_IDENTIFIER=reachabilityctl)"
    check "user manager: no line the user unit wrote has errno= or Failed to" journal_has_no_library_noise
    in_container sh -c "systemctl unmask --runtime --quiet reachabilityd.service && systemctl start reachabilityd.service;
        rm -f /var/lib/systemd/linger/$user && systemctl stop user@$user_uid.service;
        rm -rf /etc/systemd/user/e2e-* /etc/systemd/user/default.target.wants/e2e-* /etc/systemd/system/e2e-*.service \
            /etc/systemd/system/multi-user.target.wants/e2e-*.service; systemctl daemon-reload"
}
user_wait_online_section

# --- Waiting for names at boot: the wait-online unit with --dns ----------------------------------
# The route comes first (a unit configures the router's link as soon as it appears: the host moves
# a new veth end into the container after boot), the nameserver 3 s later (resolvectl dns, by that
# unit; resolved has no fallback servers). With the --dns drop-in, a unit ordered after
# network-online.target starts after the nameserver came, and its first lookup, of a name only the
# router's dnsmasq serves, succeeds.
dns_boot_files() {
    enable_wait_online && mkdir -p "$rootfs/etc/systemd/system/$wait_online.d" "$rootfs/etc/systemd/resolved.conf.d" &&
        printf '[Service]\nExecStart=\nExecStart=/usr/bin/reachabilityctl wait --timeout 60 --verbose --dns\n' > "$rootfs/etc/systemd/system/$wait_online.d/e2e.conf" &&
        printf '[Resolve]\nFallbackDNS=\n' > "$rootfs/etc/systemd/resolved.conf.d/e2e.conf" &&
        put_unit e2e-dns-probe.service "[Unit]" "Wants=network-online.target" "After=network-online.target" "[Service]" \
            "Type=oneshot" "RemainAfterExit=yes" \
            "ExecStart=/bin/sh -c 'read -r up _ < /proc/uptime; getent hosts e2e-served.test > /run/e2e-dns-probe.out; echo \"\$\$up \$\$?\" > /run/e2e-dns-probe'" \
            "[Install]" "WantedBy=multi-user.target" &&
        put_unit e2e-late-dns.service "[Service]" "Type=oneshot" "RemainAfterExit=yes" \
            "ExecStart=/bin/sh -c 'until ip link show e2ecp0 >/dev/null 2>&1; do sleep 0.05; done; ip link set e2ecp0 up && ip addr add 10.99.0.2/24 dev e2ecp0 && ip route add default via 10.99.0.1 && read -r up _ < /proc/uptime && echo \$\$up > /run/e2e-route-added && sleep 3 && read -r up _ < /proc/uptime && echo \$\$up > /run/e2e-dns-added && resolvectl dns e2ecp0 10.99.0.1'" \
            "[Install]" "WantedBy=multi-user.target"
}
attach_router_link() {
    ip -n "$router" link add e2ecp0 type veth peer name e2ecp1 && ip -n "$router" link set e2ecp0 netns "$leader" &&
        ip -n "$router" addr add 10.99.0.1/24 dev e2ecp1 && ip -n "$router" link set e2ecp1 up
}
dns_boot_section() {
    require "boot with $wait_online --dns, the route first, the nameserver 3 s later" reboot_with dns_boot_files
    check "dns boot: the router's link moved into the container" attach_router_link
    check "dns boot: the unit after network-online.target is done" eventually 60 unit_state_is e2e-dns-probe.service active
    local probe route_added dns_added
    probe=$(in_container cat /run/e2e-dns-probe 2>&1)
    route_added=$(in_container cat /run/e2e-route-added 2>&1)
    dns_added=$(in_container cat /run/e2e-dns-added 2>&1)
    log "dns boot: route at ${route_added:-?} s, nameserver at ${dns_added:-?} s, the unit started at ${probe%% *} s (getent exit ${probe#* }); $(wait_online_said | grep '^Online after')"
    check "dns boot: the unit started after the nameserver was configured" \
        awk -v p="${probe%% *}" -v d="${dns_added:-x}" -v r="${route_added:-x}" 'BEGIN { exit !(r + 0 > 0 && d + 0 >= r + 2.5 && p + 0 >= d + 0) }'
    check "dns boot: its first lookup got dnsmasq's answer" expect_eq "${probe#* } $(in_container cat /run/e2e-dns-probe.out 2>&1 | awk '{print $1}')" "0 10.99.0.1"
    in_container sh -c "systemctl disable --quiet $wait_online 2>/dev/null; rm -rf /etc/systemd/system/e2e-*.service \
        /etc/systemd/system/multi-user.target.wants/e2e-*.service /etc/systemd/system/$wait_online.d /etc/systemd/resolved.conf.d/e2e.conf;
        systemctl daemon-reload"
}
dns_boot_section

# --- Purge ---------------------------------------------------------------------------------------
purge_log=$(in_container apt-get purge -y reachabilityd 2>&1) || fail "apt-get purge" "$purge_log"
not_running() { ! is_active && ! in_container busctl status "$bus_name" >/dev/null 2>&1; }
check "purge: service stopped, name gone from the bus" not_running
leftovers() {
    local path found=0
    for path in /etc/reachabilityd /lib/systemd/system/reachabilityd.service /usr/lib/sysusers.d/reachabilityd.conf \
        /etc/systemd/system/multi-user.target.wants/reachabilityd.service $user_wait_online \
        /etc/systemd/system/dbus-org.reachabilityd.Reachability1.service \
        /usr/share/dbus-1/system.d/org.reachabilityd.Reachability1.conf \
        /usr/share/dbus-1/system-services/org.reachabilityd.Reachability1.service /usr/sbin/reachabilityd \
        /usr/bin/reachabilityctl; do
        if [ -e "$rootfs$path" ] || [ -L "$rootfs$path" ]; then echo "left: $path"; found=1; fi
    done
    return $found
}
check "purge: configuration, unit, enablement symlinks, sysusers file, policy and binary removed" leftovers
not_activatable() { local names; names=$(in_container busctl list --activatable --no-legend) && ! grep -q "^$bus_name " <<<"$names"; }
check "purge: the name is no longer activatable" not_activatable
gio_module_after_purge

finish
