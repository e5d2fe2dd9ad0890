# shellcheck shell=bash
# The e2e's last scenario: a container with no bus at all follows a daemon through the Varlink
# socket, bind-mounted read-only as the README's recipe says. Sourced by run.sh, in order; see
# run.sh for the variables it sets.

# --- A container without a bus (issue 40) -------------------------------------------------------
# The simplest honest arrangement on a host without systemd: the package's daemon runs on the
# e2e's host in a network namespace of its own ($nobus_network, veth nb0/nb1 inside it), binding
# its socket in a temporary runtime directory (no socket activation, no bus: its bus address
# names a path that never exists). The container is the booted one's root filesystem, powered
# off, with every dbus package purged, started again by systemd-nspawn without --boot and with a
# private network (its own network has only lo: what it sees is the daemon's). It gets that
# runtime directory at /run/reachabilityd read-only and the package's reachabilityctl (the Swift
# standard library linked in) at /usr/local/bin, and runs, as nobody, plain `reachabilityctl
# status --json` and `reachabilityctl wait` (no --varlink: no bus socket, so the socket is asked)
# while the host adds the namespace's default route and removes it again.
nobus=$work/nobus
nobus_socket_dir=$nobus/run
nobus_out=$nobus/out
nobus_rootfs_ready() {
    local packages
    packages=$(in_container dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'dbus*' | awk '$1 == "ii" { print $2 }')
    [ -z "$packages" ] || in_container dpkg --purge --force-depends $packages > "$work/nobus-purge.log" 2>&1 ||
        { tail -5 "$work/nobus-purge.log"; return 1; }
    power_off
    mkdir -p "$nobus_socket_dir" "$nobus_out" && chmod 0777 "$nobus_out" && dpkg-deb -x "$deb" "$nobus/deb"
}
nobus_daemon_serves() {
    ip netns add "$nobus_network" &&
        ip -n "$nobus_network" link add nb0 type veth peer name nb1 && ip -n "$nobus_network" link set nb1 up &&
        ip -n "$nobus_network" link set nb0 up && ip -n "$nobus_network" addr add 192.0.2.2/24 dev nb0 || return 1
    : > "$nobus/reachabilityd.conf"
    ip netns exec "$nobus_network" env -i RUNTIME_DIRECTORY="$nobus_socket_dir" DBUS_SYSTEM_BUS_ADDRESS="unix:path=$nobus/no-bus" \
        "$nobus/deb/usr/sbin/reachabilityd" --config "$nobus/reachabilityd.conf" > "$nobus/daemon.log" 2>&1 &
    eventually 10 test -S "$nobus_socket_dir/org.reachabilityd.Reachability" || { tail -5 "$nobus/daemon.log"; return 1; }
}
# What the container runs; it leaves its findings in /e2e (the host's $nobus_out).
nobus_script='cd /e2e
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
{ command -v dbus-daemon dbus-broker busctl; ls /run/dbus; } > bus.txt 2>&1
as_nobody reachabilityctl status --json > before.json 2>&1
: > waiting
as_nobody reachabilityctl wait --timeout 30 --verbose > wait.log 2>&1; echo $? > wait.rc
as_nobody reachabilityctl status --json > after.json 2>&1
: > online
for _ in $(seq 100); do as_nobody reachabilityctl status --json > gone.json 2>&1 && grep -q "\"not-reachable\"" gone.json && break; sleep 0.1; done'
nobus_container_started() {
    SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --register=no --keep-unit --private-network --pipe \
        --directory="$rootfs" --bind-ro="$nobus_socket_dir:/run/reachabilityd" \
        --bind-ro="$nobus/deb/usr/bin/reachabilityctl:/usr/local/bin/reachabilityctl" --bind="$nobus_out:/e2e" \
        /bin/sh -c "$nobus_script" < /dev/null > "$nobus/container.log" 2>&1 &
    nobus_container=$!
    eventually 30 test -e "$nobus_out/waiting" || { tail -5 "$nobus/container.log"; return 1; }
}
nobus_said() { grep "$2" "$nobus_out/$1" >/dev/null 2>&1; }
nobus_section() {
    require "a root filesystem with no dbus package (purged), powered off, the package unpacked on the host" nobus_rootfs_ready
    require "the package's daemon on the host in namespace $nobus_network, its socket in a temporary directory, no bus" nobus_daemon_serves
    require "a container without --boot, with a private network, $nobus_socket_dir at /run/reachabilityd read-only" nobus_container_started
    check "no bus: no dbus-daemon, dbus-broker or busctl, no /run/dbus in the container" \
        expect_eq "$(grep -vc 'No such file' "$nobus_out/bus.txt")" 0
    check "no bus: reachabilityctl status --json (as nobody) says not-reachable" nobus_said before.json '"not-reachable"'
    sleep 1   # the container's wait is waiting
    ip -n "$nobus_network" route add default via 192.0.2.1
    check "no bus: the default route added on the host ends the container's reachabilityctl wait" eventually 15 test -e "$nobus_out/online"
    check "no bus: wait exited 0" expect_eq "$(cat "$nobus_out/wait.rc" 2>&1)" 0
    log "no bus: $(cat "$nobus_out/wait.log")"
    check "no bus: wait --verbose says it waited for nb0" nobus_said wait.log '^Online after [0-9.]* s via nb0 '
    check "no bus: status --json then says reachable-via-ethernet" nobus_said after.json '"reachable-via-ethernet"'
    ip -n "$nobus_network" route del default
    wait "$nobus_container"
    check "no bus: the route removed on the host, status --json says not-reachable" nobus_said gone.json '"not-reachable"'
    log "no bus: the daemon said: $(tr '\n' ' ' < "$nobus/daemon.log")"
}
nobus_section
