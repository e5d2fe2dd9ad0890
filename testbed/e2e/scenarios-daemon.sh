# shellcheck shell=bash
# The e2e's scenarios of the installed daemon: the unit, the bus policy, live updates, the journal,
# the GIO module, reload, restarts, the watchdog, activation, reinstall and upgrade. Sourced by
# run.sh, in order; see run.sh for the variables it sets.


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

# --- The Varlink socket (issue 40) ----------------------------------------------------------------
# dh_installsystemd enabled and started reachabilityd.socket beside the service, and the daemon
# serves the socket systemd listens on (the service's Sockets=): one listening socket on the
# path, held by both (a daemon binding it itself would leave the socket unit failed).
varlink_socket=/run/reachabilityd/org.reachabilityd.Reachability
socket_enabled_and_listening() {
    expect_eq "$(in_container systemctl is-enabled reachabilityd.socket) $(in_container systemctl is-active reachabilityd.socket)" "enabled active"
}
check "reachabilityd.socket is enabled and active (the package's postinst)" socket_enabled_and_listening
socket_passed_to_daemon() {
    local listening
    listening=$(in_container ss -xlpn | grep -F " $varlink_socket ")
    [ "$(grep -c . <<<"$listening")" = 1 ] && grep -q '"systemd",pid=1,' <<<"$listening" && grep -q '"reachabilityd",' <<<"$listening" ||
        { echo "listening: $listening"; return 1; }
}
check "one listening socket on $varlink_socket, systemd's, passed to the daemon (Sockets=)" socket_passed_to_daemon
check "the socket is mode 0666 (srw-rw-rw-)" expect_eq "$(in_container stat -c %A "$varlink_socket" 2>&1)" srw-rw-rw-
# Stops the service and leaves its socket listening: systemctl's warning that the socket can
# start it again is what the activation checks below rely on, not news.
stop_service() { in_container systemctl stop reachabilityd.service 2>/dev/null; }

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
# systemd's varlinkctl (Debian 13's systemd 257; Debian 12's 252 has none), unprivileged: its IDL
# parser reads the daemon's interface, and a Subscribe call with more follows the change below.
varlinkctl_version=$(in_container sh -c 'command -v varlinkctl >/dev/null && systemctl --version | sed -n "1s/^systemd \([0-9]*\).*/\1/p"')
varlink_subscriber=
if [ -n "$varlinkctl_version" ]; then
    introspected() { as_nobody varlinkctl introspect "$varlink_socket" org.reachabilityd.Reachability | grep -q '^method Subscribe() -> ($'; }
    check "varlinkctl introspect (systemd $varlinkctl_version) parses the interface and shows Subscribe" introspected
    varlink_subscriber=$(in_container sh -c "setpriv --reuid=nobody --regid=nogroup --clear-groups varlinkctl call --more --timeout=infinity --json=short \
        $varlink_socket org.reachabilityd.Reachability.Subscribe '{}' > /run/e2e-varlink.log 2>&1 & echo \$!")
    varlink_saw() { in_container grep -q "$1" /run/e2e-varlink.log; }
    check "varlinkctl call --more Subscribe: the current state at once (not-reachable)" eventually 10 varlink_saw '"status":"not-reachable"'
else
    log "no varlinkctl in $suite's systemd (Debian 12's 252): its checks are the trixie variants'"
fi
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
if [ -n "$varlink_subscriber" ]; then
    varlink_saw_change() { in_container grep '"status":"reachable-via-ethernet"' /run/e2e-varlink.log | grep -q '"interface":"e2e0"'; }
    check "varlinkctl call --more Subscribe: the route change as a reply (reachable-via-ethernet, e2e0)" \
        eventually 5 varlink_saw_change
    log "varlinkctl call --more Subscribe: $(in_container grep -c . /run/e2e-varlink.log) replies so far"
    in_container kill "$varlink_subscriber"
fi
explain() { as_nobody busctl call "$bus_name" "$object" "$bus_name" Explain | grep -q e2e0; }
check "an unprivileged user calls Explain (it names e2e0)" explain
ctl_status() { as_nobody reachabilityctl status | grep -q reachable-via-ethernet; }
ctl_status_json() { in_container reachabilityctl status --json | grep -q '"reachable-via-ethernet"'; }
check "reachabilityctl status (unprivileged) says reachable-via-ethernet" ctl_status
check "reachabilityctl status --json has the status" ctl_status_json
ctl_status_varlink() { as_nobody reachabilityctl status --json --varlink | grep -q '"reachable-via-ethernet"'; }
check "reachabilityctl status --json --varlink (unprivileged, through the socket) has the status" ctl_status_varlink
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
    stop_service
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
stop_service
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
    # The postinst restarts the socket and the service in one call: one listening socket again.
    check "after upgrade: one listening socket, systemd's, passed to the daemon" socket_passed_to_daemon
    check "after upgrade: the socket answers" ctl_status_varlink
else
    fail "repack the package with a bumped version"
fi
