# shellcheck shell=bash
# The e2e's last scenario: purge. Sourced by run.sh, in order; see run.sh for the variables it sets.

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
