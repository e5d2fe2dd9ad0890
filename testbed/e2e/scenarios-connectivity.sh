# shellcheck shell=bash
# The e2e's scenarios of the connectivity check behind a DHCP router (and DNS). Sourced by run.sh,
# in order; see run.sh for the variables it sets.

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
