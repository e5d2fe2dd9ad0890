# shellcheck shell=bash
# The e2e's set-up: host packages, the package, the cached root filesystem, the booted container,
# the install. Sourced by run.sh, in order; see run.sh for the variables it sets.

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
nobus_network=re2enb-$$   # the network of the daemon a container without a bus follows, made last
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
    local namespace
    for namespace in "$router" "$nobus_network"; do
        ip netns list | grep -q "^$namespace\b" || continue
        for pid in $(ip netns pids "$namespace" 2>/dev/null); do kill "$pid" 2>/dev/null; done
        ip netns delete "$namespace"
    done
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

# --- Install ---------------------------------------------------------------------------------
install_package() {
    in_container sh -c "cd /srv/e2e && apt-get install -y ./$(basename "$deb")" > "$work/install.log" 2>&1 ||
        { tail -20 "$work/install.log"; return 1; }
}
require "apt install ./$(basename "$deb") (offline, in the container)" install_package
