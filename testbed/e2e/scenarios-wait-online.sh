# shellcheck shell=bash
# The e2e's scenarios of the wait-online units at boot (system and user manager). Sourced by run.sh,
# in order; see run.sh for the variables it sets.

# --- Waiting for the network at boot: reachabilityd-wait-online.service --------------------------
# The unit as the package installs it, then connectivity mode with the check's servers above, then
# three boots of the same container with it enabled: early boot without a bus (dbus masked) and
# the network configured 3 s late by a plain unit (not networkd), two links (one without carrier)
# beside systemd-networkd-wait-online, and no default route at all. E2E_NETWORKD_FULL=1 waits out
# networkd-wait-online's own 120 s timeout. The unit asks through the Varlink socket (--varlink),
# and so do the drop-ins below.
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
# What a unit ordered after network-online.target found (reachabilityctl: through the bus, or
# through the Varlink socket when there is no bus).
probe_unit() {
    put_unit e2e-probe.service "[Unit]" "Wants=network-online.target" "After=network-online.target" "[Service]" \
        "Type=oneshot" "RemainAfterExit=yes" \
        "ExecStart=/bin/sh -c 'reachabilityctl status --json > /run/e2e-probe.status'" \
        "[Install]" "WantedBy=multi-user.target"
}
# The bus masked: neither dbus-daemon nor dbus-broker can start, and no bus socket exists (as in
# early boot and the initrd). unmask_bus restores the variant's bus.
bus_units=(dbus.socket dbus.service dbus-broker.service)
mask_bus() {
    local unit
    for unit in "${bus_units[@]}"; do ln -sfn /dev/null "$rootfs/etc/systemd/system/$unit" || return 1; done
}
unmask_bus() {
    local unit
    for unit in "${bus_units[@]}"; do rm -f "$rootfs/etc/systemd/system/$unit"; done
    [ "$bus_implementation" != dbus-broker ] || systemctl --root="$rootfs" --quiet enable dbus-broker.service
}
no_bus_ran() {
    in_container sh -c '! ps -e -o comm= | grep -xE "dbus-daemon|dbus-broker" && test ! -e /run/dbus/system_bus_socket'
}
probe_found_reachable() { in_container cat /run/e2e-probe.status | grep -q '"status" *: *"reachable-via-ethernet"'; }
enable_wait_online() {
    unmask_bus && systemctl --root="$rootfs" --quiet enable $wait_online &&
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
        printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/reachabilityctl wait --timeout 60 --verbose --varlink --connectivity full\\n' > /run/systemd/system/$wait_online.d/e2e.conf &&
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

# Enabled, dbus masked (early boot: no bus broker at all); a unit (not networkd) adds the address
# and the default route 3 s after the wait starts (3.2 s after systemd marks it activating:
# reachabilityctl's own clock starts a little later). The probe's reachabilityctl finds no bus
# socket and asks the Varlink socket by itself.
late_network_files() {
    enable_wait_online && mask_bus && probe_unit &&
        put_unit e2e-late-network.service "[Service]" "Type=oneshot" "RemainAfterExit=yes" \
            "ExecStart=/bin/sh -c 'until [ \"\$\$(systemctl show -P ActiveState $wait_online)\" = activating ]; do sleep 0.05; done; sleep 3.2; ip link add e2ew0 type veth peer name e2ew1 && ip link set e2ew1 up && ip link set e2ew0 up && ip addr add 192.0.2.2/24 dev e2ew0 && ip route add default via 192.0.2.1'" \
            "[Install]" "WantedBy=multi-user.target"
}
wait_online_late_network() {
    require "boot with $wait_online enabled, dbus masked, the network configured 3 s late by a unit" reboot_with late_network_files
    check "late network: the boot settles" eventually 30 unit_state_is e2e-probe.service active
    check "late network, dbus masked: no bus broker ran, no bus socket" no_bus_ran
    check "late network, dbus masked: a unit after network-online.target found the daemon reachable (reachabilityctl status --json, through the socket)" \
        probe_found_reachable
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
        printf '[Service]\nExecStart=\nExecStart=/usr/bin/reachabilityctl wait --timeout 3 --verbose --varlink\n' > "$rootfs/etc/systemd/system/$wait_online.d/e2e.conf"
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
    in_container sh -c "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/reachabilityctl wait --timeout 0 --varlink\\nTimeoutStartSec=2\\n' > /etc/systemd/system/$wait_online.d/e2e.conf &&
        systemctl daemon-reload && systemctl reset-failed $wait_online; systemctl start $wait_online" 2>/dev/null
    check "no route: stopped by TimeoutStartSec=2, it says where it stood" eventually 5 said_matches '^reachabilityctl: Stopped (SIGTERM) after [0-9.]* s: not-reachable (.*)\.$'
    # The early give-up: the container has no link but loopback.
    in_container sh -c "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/reachabilityctl wait --timeout 0 --carrier-timeout 1 --varlink\\n' > /etc/systemd/system/$wait_online.d/e2e.conf &&
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
        printf '[Service]\nExecStart=\nExecStart=/usr/bin/reachabilityctl wait --timeout 60 --verbose --varlink --dns\n' > "$rootfs/etc/systemd/system/$wait_online.d/e2e.conf" &&
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
