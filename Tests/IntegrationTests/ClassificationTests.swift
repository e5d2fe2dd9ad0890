import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The transport of the link carrying the default route, through stacked links, bridges,
/// container interfaces and tunnels.
final class ClassificationTests: DaemonTestCase {
    // MARK: Stacked on a parent (IFLA_LINK)

    func testVLANOverVethIsEthernet() throws {
        // Given a kernel that can make VLANs
        if let problem = try netns.linkKindUnavailable(["link", "ra0", "name", "probe0", "type", "vlan", "id", "4000"]) {
            throw XCTSkip("this kernel cannot make vlan links (`ip link add … type vlan`: \(problem)); the macvlan test covers IFLA_LINK stacking")
        }
        try startDaemon()
        try netns.ip("link", "add", "link", "ra0", "name", "ra0.10", "type", "vlan", "id", "10")
        try netns.setIPv6(enabled: false, on: "ra0.10")

        // When the VLAN carries the default route
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
        try netns.ip("link", "set", "ra0.10", "up")
        try netns.ip("addr", "add", "10.77.10.2/24", "dev", "ra0.10")
        try netns.ip("route", "add", "default", "via", "10.77.10.1", "dev", "ra0.10")

        // Then
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.interface), "ra0.10")
        XCTAssertEqual(properties.string(.transport), Transport.ethernet.rawValue)
    }

    func testMacvlanOverFakeWiFiIsWiFi() throws {
        // Given ra0 looks like WiFi, and mv0 is a macvlan stacked on it (IFLA_LINK = ra0)
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("ra0")
        try netns.ip("link", "add", "mv0", "link", "ra0", "type", "macvlan", "mode", "bridge")
        try netns.setIPv6(enabled: false, on: "mv0")
        try startDaemon(sysfsRoot: sysfs.root)

        // When the macvlan, not ra0, carries the default route
        try routeDefault(overStackedLink: "mv0", address: "10.77.0.5/24")

        // Then the medium beneath decides
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.interface), "mv0")
        XCTAssertEqual(properties.string(.transport), Transport.wifi.rawValue)
        try assertStatusChanges([.reachableViaWiFi])
    }

    // MARK: Bridges (IFLA_MASTER on the ports)

    func testDockerBridgeWithOnlyContainerVethsIsIgnored() throws {
        try assertContainerBridgeIsIgnored(named: "docker0")
    }

    func testDockerNetworkBridgeIsIgnored() throws {
        try assertContainerBridgeIsIgnored(named: "br-5f2a9c0e71d4")
    }

    func testABridgeWithOnlyVethPortsIsAContainerBridgeWhateverItsName() throws {
        try assertContainerBridgeIsIgnored(named: "lan0")
    }

    func testAnUplinkBridgeNamedLikeADockerNetworkCounts() throws {
        // Given br-ex (OpenStack's name, in the built-in container list) with a port that has
        // hardware of its own (a driver in sysfs), as an uplink bridge's physical NIC does
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.setDriver("e1000e", of: "rb0")
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon(sysfsRoot: sysfs.root)
        try addBridge("br-ex", port: "rb0", peer: "rb1")

        // When the bridge carries the default route
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "br-ex")
        try netns.ip("route", "add", "default", "via", "10.78.0.1", "dev", "br-ex")

        // Then its port decides: an uplink, not a container network
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.interface), "br-ex")
        try assertStatusChanges([.reachableViaEthernet])
    }

    func testBridgeWithFakeWiFiPortIsWiFi() throws {
        // Given ra0 looks like WiFi and is the only port of br0
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("ra0")
        try startDaemon(sysfsRoot: sysfs.root)
        try netns.ip("link", "add", "br0", "type", "bridge")
        try netns.setIPv6(enabled: false, on: "br0")
        try netns.ip("link", "set", "ra0", "master", "br0")

        // When the bridge carries the default route
        try routeDefault(overStackedLink: "br0", address: "10.77.0.2/24")

        // Then
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.interface), "br0")
        XCTAssertEqual(properties.string(.transport), Transport.wifi.rawValue)
        XCTAssertEqual(properties.bool(.metered), false)
        let reason = try XCTUnwrap(properties.string(.reason))
        XCTAssertTrue(reason.contains("on br0 (wifi)"), "Reason: \(reason)")
        try assertStatusChanges([.reachableViaWiFi])
    }

    func testBridgePrefersAnEthernetPortAndSkipsContainerPorts() throws {
        // Given br0 with two ports that have carrier: ra0 (fake WiFi) and a container veth
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("ra0")
        try netns.addQuietVethPair("vethc0a1b2", peer: "ceth0")
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon(sysfsRoot: sysfs.root)
        try netns.ip("link", "add", "br0", "type", "bridge")
        try netns.setIPv6(enabled: false, on: "br0")
        for port in ["ra0", "vethc0a1b2"] { try netns.ip("link", "set", port, "master", "br0") }
        for link in ["ra1", "ra0", "ceth0", "vethc0a1b2", "br0"] { try netns.ip("link", "set", link, "up") }
        try netns.waitForCarrier("br0")
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "br0")
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "br0")

        // Then the container veth (an Ethernet device too) does not count
        let wifi = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(wifi.string(.interface), "br0")

        // When an Ethernet port joins
        try netns.ip("link", "set", "rb0", "master", "br0")
        try netns.ip("link", "set", "rb1", "up")
        try netns.ip("link", "set", "rb0", "up")

        // Then it is preferred
        let ethernet = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(ethernet.string(.interface), "br0")
        XCTAssertEqual(ethernet.string(.transport), Transport.ethernet.rawValue)
    }

    // MARK: Tunnels

    func testVXLANCarryingTheDefaultRouteReportsTheWiFiBeneath() throws {
        // Given ra0, a fake WiFi link, and vx0, a VXLAN over it
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("ra0")
        if let problem = try netns.linkKindUnavailable(["probe0", "type", "vxlan", "id", "4000", "dstport", "4789"]) {
            throw XCTSkip("this kernel cannot make vxlan links: \(problem)")
        }
        try startDaemon(sysfsRoot: sysfs.root)
        try configureIPv4Link()
        try netns.ip("link", "add", "vx0", "type", "vxlan", "id", "42", "dstport", "4789", "remote", "10.77.0.1", "dev", "ra0")
        try netns.setIPv6(enabled: false, on: "vx0")

        // When it carries the default route
        try routeDefault(overStackedLink: "vx0", address: "10.98.0.2/24", gateway: "10.98.0.1")

        // Then
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.interface), "vx0")
        XCTAssertEqual(properties.string(.transport), Transport.vpn.rawValue)
        let reason = try XCTUnwrap(properties.string(.reason))
        XCTAssertTrue(reason.contains("on vx0 (vpn over ra0, wifi)"), "Reason: \(reason)")
    }

    func testTunCarryingTheDefaultRouteReportsTheWiFiBeneath() throws {
        // Given ra0, a fake WiFi link with the only other global address, and tun0, a tun device
        // this test attaches to (a tun has carrier only while a process holds it open)
        try startDaemonOverFakeWiFi()
        let tun = try attachedTun()

        // When the tunnel's endpoint is routed over ra0 and the default route over the tunnel
        try netns.ip("route", "add", "203.0.113.7", "via", "10.77.0.1", "dev", "ra0")
        try netns.ip("route", "add", "default", "dev", "tun0")

        // Then Status names the medium beneath, Transport the tunnel
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.interface), "tun0")
        XCTAssertEqual(properties.string(.transport), Transport.vpn.rawValue)
        XCTAssertEqual(properties.bool(.metered), false)
        let reason = try XCTUnwrap(properties.string(.reason))
        XCTAssertTrue(reason.contains("on tun0 (vpn over ra0, wifi)"), "Reason: \(reason)")

        // When the VPN client lets go of the tunnel, it loses carrier
        tun.close()

        // Then
        let detached = try waitForStatus(.notReachable)
        XCTAssertTrue(detached.string(.reason)?.contains("tun0 has no carrier") == true, "Reason: \(detached.string(.reason) ?? "nil")")
        try assertStatusChanges([.reachableViaWiFi, .notReachable])
    }

    func testWireGuardStylePolicyRoutingOverTunReportsTheWiFiBeneath() throws {
        // Given ra0 (fake WiFi) with the main table's default route, and tun0 standing in for a
        // WireGuard link (this kernel has no wireguard kind) with a default route in table 51820
        try startDaemonOverFakeWiFi()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaWiFi)
        let tun = try attachedTun()
        try netns.ip("route", "add", "default", "dev", "tun0", "table", "51820")

        // When the rules wg-quick adds send everything unmarked through table 51820
        try netns.ip("rule", "add", "not", "fwmark", "51820", "table", "51820")
        try netns.ip("rule", "add", "table", "main", "suppress_prefixlength", "0")

        // Then the tunnel carries the traffic, over the WiFi beneath
        let tunnelled = try waitForProperties("Interface tun0") { $0.string(.interface) == "tun0" }
        XCTAssertEqual(tunnelled.status, ReachabilityStatus.reachableViaWiFi.rawValue)
        XCTAssertEqual(tunnelled.string(.transport), Transport.vpn.rawValue)
        let reason = try XCTUnwrap(tunnelled.string(.reason))
        XCTAssertTrue(reason.contains("on tun0 (vpn over ra0, wifi)"), "Reason: \(reason)")

        // When the tunnel is taken down the way wg-quick does (rules first)
        try netns.ip("rule", "del", "table", "main", "suppress_prefixlength", "0")
        try netns.ip("rule", "del", "not", "fwmark", "51820", "table", "51820")

        // Then ra0 itself carries it, and the status never changed
        let direct = try waitForProperties("Interface ra0") { $0.string(.interface) == "ra0" }
        XCTAssertEqual(direct.string(.transport), Transport.wifi.rawValue)
        try assertStatusChanges([.reachableViaWiFi])
        tun.close()
    }

    func testOpenVPNStyleHalfDefaultRoutesOverTunReportTheWiFiBeneath() throws {
        // Given ra0 (fake WiFi) with the main default route
        try startDaemonOverFakeWiFi()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaWiFi)
        let tun = try attachedTun()

        // When the tunnel takes the traffic the way OpenVPN's redirect-gateway def1 does: two
        // half-default routes, more specific than the default route, which stays
        try netns.ip("route", "add", "0.0.0.0/1", "dev", "tun0")
        try netns.ip("route", "add", "128.0.0.0/1", "dev", "tun0")

        // Then
        let tunnelled = try waitForProperties("Interface tun0") { $0.string(.interface) == "tun0" }
        XCTAssertEqual(tunnelled.status, ReachabilityStatus.reachableViaWiFi.rawValue)
        XCTAssertEqual(tunnelled.string(.transport), Transport.vpn.rawValue)
        let reason = try XCTUnwrap(tunnelled.string(.reason))
        XCTAssertTrue(reason.contains("/1") && reason.contains("on tun0 (vpn over ra0, wifi)"), "Reason: \(reason)")
        try assertStatusChanges([.reachableViaWiFi])
        tun.close()
    }

    func testTunWithTwoPossibleMediaIsReachableViaOther() throws {
        // Given two physical links with global addresses: ra0 (fake WiFi) and rb0 (Ethernet)
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("ra0")
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon(sysfsRoot: sysfs.root)
        try configureIPv4Link()
        try configureSecondIPv4Link()

        // When a tunnel not bound to either carries the default route
        let tun = try attachedTun()
        try netns.ip("route", "add", "default", "dev", "tun0")

        // Then the medium beneath cannot be told: reachable-via-other, Transport vpn
        let properties = try waitForStatus(.reachableViaOther)
        XCTAssertEqual(properties.string(.interface), "tun0")
        XCTAssertEqual(properties.string(.transport), Transport.vpn.rawValue)
        tun.close()
    }

    func testTunnelMediumIsNotAContainerBridge() throws {
        // Given ra0 (fake WiFi) and docker0, a container bridge with an address and carrier
        try startDaemonOverFakeWiFi()
        try netns.addQuietVethPair("vethc0a1b2", peer: "ceth0")
        try netns.ip("link", "add", "docker0", "type", "bridge")
        try netns.setIPv6(enabled: false, on: "docker0")
        try netns.ip("link", "set", "vethc0a1b2", "master", "docker0")
        try netns.ip("link", "set", "ceth0", "up")
        try netns.ip("link", "set", "vethc0a1b2", "up")
        try netns.ip("link", "set", "docker0", "up")
        try netns.waitForCarrier("docker0")
        try netns.ip("addr", "add", "172.17.0.1/16", "dev", "docker0")

        // When a tunnel carries the default route
        let tun = try attachedTun()
        try netns.ip("route", "add", "default", "dev", "tun0")

        // Then ra0 is the only candidate medium
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.interface), "tun0")
        XCTAssertEqual(properties.string(.transport), Transport.vpn.rawValue)
        tun.close()
    }

    // MARK: Messages of other families, links of other namespaces

    func testAPortLeavingItsBridgeKeepsItsAddresses() throws {
        // Given ra0 with its address carries the default route
        try startDaemon()
        try configureIPv4Link()
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "metric", "100")
        try waitForStatus(.reachableViaEthernet)
        try netns.ip("link", "add", "lan0", "type", "bridge")
        try netns.setIPv6(enabled: false, on: "lan0")

        // When ra0 joins a bridge and leaves it (the bridge family's RTM_DELLINK: not a deletion)
        try netns.ip("link", "set", "ra0", "master", "lan0")
        try netns.ip("link", "set", "ra0", "nomaster")
        // and a second default route, a fence the daemon reads after those messages, takes over
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "metric", "50")

        // Then ra0 still has its address and the status never wavered
        let properties = try waitForProperties("Reason naming metric 50") { $0.string(.reason)?.contains("metric 50") == true }
        XCTAssertEqual(properties.status, ReachabilityStatus.reachableViaEthernet.rawValue, properties.string(.reason) ?? "")
        XCTAssertEqual(properties.string(.interface), "ra0")
        try assertStatusChanges([.reachableViaEthernet])
        XCTAssertTrue(try busctl.explain().contains("10.77.0.2/24"), "Explain still lists ra0's address")
    }

    func testAMacvlanWhoseParentIsInAnotherNamespaceIsNotClassifiedFromALocalLink() throws {
        // Given a macvlan made in another namespace on its link pv0, moved here (as a container
        // gets one): IFLA_LINK is pv0's index there. The local link with that index looks like WiFi.
        let host = try TestNamespace()
        try host.ip("link", "add", "pv0", "type", "veth", "peer", "name", "pv1")
        try host.ip("link", "set", "pv1", "up")
        try host.ip("link", "set", "pv0", "up")
        let parentIndex = try XCTUnwrap(try host.ip("-o", "link", "show", "pv0").split(separator: ":").first.map(String.init))
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        let sameIndex = try netns.ip("-o", "link", "show").split(separator: "\n")
            .first { $0.split(separator: ":").first.map(String.init) == parentIndex }
            .flatMap { $0.split(separator: ":").dropFirst().first?.trimmingCharacters(in: .whitespaces).split(separator: "@").first.map(String.init) }
        if let sameIndex { try sysfs.markWireless(sameIndex) }
        try host.ip("link", "add", "mv0", "link", "pv0", "type", "macvlan", "mode", "bridge")
        try host.ip("link", "set", "mv0", "netns", netns.name)
        try netns.setIPv6(enabled: false, on: "mv0")
        try startDaemon(sysfsRoot: sysfs.root)

        // When the macvlan carries the default route
        try routeDefault(overStackedLink: "mv0", address: "10.79.0.2/24", gateway: "10.79.0.1")

        // Then it is judged by its own evidence, not by local link \(parentIndex)
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.interface), "mv0")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("macvlan whose parent is in another network namespace"), "local link with the parent's index: \(sameIndex ?? "none")\n\(explain)")
    }

    // MARK: Helpers

    /// A bridge named like a container network, whose only port is a container veth, carrying
    /// the default route: the host is not reachable, and the reason says the bridge is ignored.
    private func assertContainerBridgeIsIgnored(named bridge: String, line: UInt = #line) throws {
        // Given, with carrier, so that being ignored is the only thing against it
        try startDaemon()
        try addBridgeWithContainerVeth(bridge)

        // When the bridge carries the default route
        try netns.ip("addr", "add", "172.17.0.1/16", "dev", bridge)
        try netns.ip("route", "add", "default", "via", "172.17.0.254", "dev", bridge)

        // Then
        let properties = try waitForProperties("Reason saying \(bridge) is ignored") {
            $0.string(.reason)?.contains("on \(bridge), which is ignored") == true
        }
        XCTAssertEqual(properties.status, ReachabilityStatus.notReachable.rawValue, line: line)
        XCTAssertEqual(properties.bool(.reachable), false, line: line)
        XCTAssertEqual(properties.string(.interface), "", line: line)
        XCTAssertEqual(try signals.statusChanges, [], "the status never left not-reachable", line: line)
    }
}
