#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ReachabilityCore
import XCTest

/// The decision rule, one destination at a time: facts in, verdict out.
final class ReachabilityRuleEvaluateTests: XCTestCase {
    /// One row of the table: a destination's facts and the verdict the rule must reach.
    struct Row {
        var name: String
        var facts: DestinationFacts
        var status: ReachabilityStatus
        var reason: String
        var line: UInt

        init(_ name: String, _ facts: DestinationFacts, _ status: ReachabilityStatus, _ reason: String, line: UInt = #line) {
            self.name = name
            self.facts = facts
            self.status = status
            self.reason = reason
            self.line = line
        }
    }

    static let notReachableRows: [Row] = {
        let eth0 = Fixture.eth0
        return [
            // The kernel's lookup failed.
            Row("IPv4 lookup failed with ENETUNREACH", Fixture.failed(.ipv4, errno: ENETUNREACH), .notReachable, "no default route"),
            Row("IPv6 lookup failed with ENETUNREACH", Fixture.failed(.ipv6, errno: ENETUNREACH), .notReachable, "no default route"),
            Row("lookup failed with EACCES", Fixture.failed(.ipv4, errno: EACCES), .notReachable, "default route is prohibit"),
            Row("lookup failed with EINVAL", Fixture.failed(.ipv4, errno: EINVAL), .notReachable, "default route is blackhole"),
            Row("lookup failed with EHOSTUNREACH (unreachable route)", Fixture.failed(.ipv4, errno: EHOSTUNREACH), .notReachable, "default route is unreachable"),
            Row("lookup failed with EAGAIN (throw past the last table)", Fixture.failed(.ipv4, errno: EAGAIN), .notReachable, "no default route"),
            Row("lookup failed with EIO", Fixture.failed(.ipv4, errno: EIO), .notReachable, "route lookup failed with errno \(EIO)"),

            // The lookup resolved to a route that carries no traffic out.
            Row("route type unreachable", Fixture.routed(.ipv4, via: eth0, type: .unreachable), .notReachable, "default route is unreachable"),
            Row("route type blackhole", Fixture.routed(.ipv4, via: eth0, type: .blackhole), .notReachable, "default route is blackhole"),
            Row("route type prohibit", Fixture.routed(.ipv6, via: eth0, type: .prohibit), .notReachable, "default route is prohibit"),
            Row("route type throw", Fixture.routed(.ipv4, via: eth0, type: .throw), .notReachable, "default route is throw"),
            Row("route type local", Fixture.routed(.ipv4, via: eth0, type: .local), .notReachable, "route leads to this host only"),
            Row(
                "a probe on a route to this host (local default dev lo, a transparent proxy's)",
                Fixture.thisHost(.ipv4, source: Fixture.globalIPv4, purpose: .internetProbe),
                .notReachable, "route leads to this host only"
            ),
            Row(
                "an address of this host a caller asks about, loopback down",
                Fixture.thisHost(.ipv4, via: Fixture.link(Fixture.lo, isUp: false, hasCarrier: false)),
                .notReachable, "lo is down"
            ),
            Row(
                "an address of this host a caller asks about, over an ignored link",
                Fixture.thisHost(.ipv6, via: LinkFacts(index: 1, name: "lo", isUp: true, hasCarrier: true, isLoopback: true, transport: .other,
                                                       ignoreReason: "IgnoreInterfaces=lo")),
                .notReachable, "default route on lo, which is ignored (IgnoreInterfaces=lo)"
            ),
            Row("route type broadcast", Fixture.routed(.ipv4, via: eth0, type: RouteType(rawValue: 3)), .notReachable, "default route is type 3"),

            // A unicast route whose output link is missing or unknown.
            Row(
                "unicast route without output interface",
                DestinationFacts(
                    family: .ipv4,
                    lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: nil, gateway: IPAddress("10.0.0.1"))),
                    outputLink: eth0,
                    source: .selected(Fixture.globalIPv4)
                ),
                .notReachable, "default route has no output interface"
            ),
            Row(
                "output interface the daemon does not know",
                DestinationFacts(
                    family: .ipv4,
                    lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: 2, gateway: IPAddress("10.0.0.1"))),
                    outputLink: nil,
                    source: .selected(Fixture.globalIPv4)
                ),
                .notReachable, "default route uses unknown interface 2"
            ),
            Row(
                "output link facts of another interface",
                DestinationFacts(
                    family: .ipv4,
                    lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: 7, gateway: IPAddress("10.0.0.1"))),
                    outputLink: eth0,
                    source: .selected(Fixture.globalIPv4)
                ),
                .notReachable, "default route uses unknown interface 7"
            ),

            // The output link cannot carry traffic.
            Row("loopback link", Fixture.routed(.ipv4, via: Fixture.lo), .notReachable, "default route leads to loopback lo only"),
            Row("link down", Fixture.routed(.ipv4, via: Fixture.link(eth0, isUp: false)), .notReachable, "eth0 is down"),
            Row(
                "link down without carrier reports down",
                Fixture.routed(.ipv4, via: Fixture.link(eth0, isUp: false, hasCarrier: false)),
                .notReachable, "eth0 is down"
            ),
            Row("no carrier", Fixture.routed(.ipv4, via: Fixture.link(eth0, hasCarrier: false)), .notReachable, "eth0 has no carrier"),
            Row("route flagged linkdown", Fixture.routed(.ipv6, via: eth0, isLinkDown: true), .notReachable, "eth0 has no carrier"),

            // The kernel selects no usable source address.
            Row("no IPv4 address anywhere", Fixture.routed(.ipv4, via: eth0, source: .selected(Fixture.noIPv4)), .notReachable, "eth0 has no usable global IPv4 address"),
            Row(
                "no IPv6 source address (EADDRNOTAVAIL)",
                Fixture.routed(.ipv6, via: eth0, source: .failed(errno: Errno(EADDRNOTAVAIL))),
                .notReachable, "eth0 has no usable global IPv6 address"
            ),
            Row(
                "connect fails otherwise",
                Fixture.routed(.ipv6, via: eth0, source: .failed(errno: Errno(EPERM))),
                .notReachable, "a connection over eth0 fails with errno \(EPERM)"
            ),
            Row(
                "only a link-scope IPv4 address",
                Fixture.routed(.ipv4, via: eth0, source: .selected(Fixture.linkScopeIPv4)),
                .notReachable, "eth0 has no usable global IPv4 address; the kernel would send from 10.0.0.2"
            ),
            Row(
                "only a link-local IPv6 address",
                Fixture.routed(.ipv6, via: eth0, source: .selected(Fixture.linkLocalIPv6)),
                .notReachable, "eth0 has no usable global IPv6 address; the kernel would send from fe80::2"
            ),
            Row(
                "only the loopback IPv6 address",
                Fixture.routed(.ipv6, via: eth0, source: .selected(Fixture.loopbackIPv6)),
                .notReachable, "eth0 has no usable global IPv6 address; the kernel would send from ::1"
            ),
            Row(
                "a tentative IPv6 address (selected while DAD ran)",
                Fixture.routed(.ipv6, via: eth0, source: .selected(Fixture.tentativeIPv6)),
                .notReachable, "eth0 has no usable global IPv6 address; the kernel would send from 2001:db8::10"
            ),
            Row(
                "a route's src that no link holds any more (IPv6 keeps it after the address goes)",
                Fixture.routed(.ipv6, via: eth0, source: .selected(SourceAddress(address: IPAddress("2001:db8:79::2")!, scope: .global, isHeld: false))),
                .notReachable, "the kernel would send from 2001:db8:79::2, which no link holds (a route's src whose address is gone)"
            ),
            Row(
                "a link-local destination without a zone (connect gives EINVAL)",
                Fixture.toward(.link, Fixture.routed(.ipv6, via: eth0, source: .failed(errno: Errno(EINVAL)))),
                .notReachable, "a link-local destination needs its link as a zone, e.g. fe80::1%eth0"
            ),
            Row(
                "a link-local destination whose zone names no interface",
                DestinationFacts(family: .ipv6, lookup: .failed(errno: Errno(ENODEV)), source: .failed(errno: Errno(ENODEV)), destinationScope: .link),
                .notReachable, "its zone names no interface of this host"
            ),
            Row(
                "a link-local destination, only the loopback address to send from",
                Fixture.toward(.link, Fixture.routed(.ipv6, via: eth0, source: .selected(Fixture.loopbackIPv6))),
                .notReachable, "eth0 has no usable link-local or global IPv6 address; the kernel would send from ::1"
            ),
        ]
    }()

    static let reachableRows: [Row] = {
        let eth0 = Fixture.eth0
        return [
            Row("Ethernet with gateway", Fixture.routed(.ipv4, via: eth0), .reachableViaEthernet, "default route via 10.0.0.1 on eth0 (ethernet), table main"),
            Row("IPv6 Ethernet with gateway", Fixture.routed(.ipv6, via: eth0), .reachableViaEthernet, "default route via fe80::1 on eth0 (ethernet), table main"),
            Row(
                "Ethernet without gateway",
                DestinationFacts(
                    family: .ipv4,
                    lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: eth0.index, gateway: nil)),
                    outputLink: eth0,
                    source: .selected(Fixture.globalIPv4)
                ),
                .reachableViaEthernet, "default route on eth0 (ethernet), table main"
            ),
            Row(
                "route from a table other than main",
                Fixture.routed(.ipv4, via: eth0, table: 100),
                .reachableViaEthernet, "default route via 10.0.0.1 on eth0 (ethernet), table 100"
            ),
            Row(
                "source on another link (a /32 on lo, unnumbered)",
                Fixture.routed(.ipv4, via: eth0, source: .selected(SourceAddress(address: IPAddress("192.0.2.10")!, scope: .global, linkName: "lo"))),
                .reachableViaEthernet, "default route via 10.0.0.1 on eth0 (ethernet), table main, from 192.0.2.10 on lo"
            ),
            Row(
                "source the daemon has not seen yet",
                Fixture.routed(.ipv6, via: eth0, source: .selected(SourceAddress(address: IPAddress("2001:db8::99")!, scope: .global))),
                .reachableViaEthernet, "default route via fe80::1 on eth0 (ethernet), table main"
            ),
            Row(
                "PPP link holding its own address, nothing beneath known",
                Fixture.routed(.ipv4, via: Fixture.ppp0, source: .selected(SourceAddress(address: IPAddress("198.51.100.7")!, scope: .global, linkName: "ppp0"))),
                .reachableViaOther, "default route via 10.0.0.1 on ppp0 (vpn), table main"
            ),
            Row("WiFi", Fixture.routed(.ipv4, via: Fixture.wlan0), .reachableViaWiFi, "default route via 10.0.0.1 on wlan0 (wifi), table main"),
            Row("WWAN", Fixture.routed(.ipv4, via: Fixture.wwan0), .reachableViaWWAN, "default route via 10.0.0.1 on wwan0 (wwan), table main"),
            Row("VPN", Fixture.routed(.ipv6, via: Fixture.wg0), .reachableViaOther, "default route via fe80::1 on wg0 (vpn), table main"),
            Row("other transport", Fixture.routed(.ipv4, via: Fixture.br0), .reachableViaOther, "default route via 10.0.0.1 on br0 (other), table main"),
            Row("127.0.0.1, asked by a caller", Fixture.thisHost(.ipv4), .reachableViaOther, "local route to this host on lo, table local"),
            Row("::1, asked by a caller", Fixture.thisHost(.ipv6), .reachableViaOther, "local route to this host on lo, table local"),
            Row(
                "an address eth0 holds, asked by a caller: over lo, from itself",
                Fixture.thisHost(.ipv4, source: Fixture.globalIPv4),
                .reachableViaOther, "local route to this host on lo, table local"
            ),
            Row(
                "a link-local address eth0 holds, asked by a caller with its zone",
                Fixture.toward(.link, Fixture.thisHost(.ipv6, source: Fixture.linkLocalIPv6)),
                .reachableViaOther, "local route to this host on lo, table local"
            ),
            Row(
                "a link-local destination from a link-local address",
                Fixture.toward(.link, Fixture.routed(.ipv6, via: eth0, source: .selected(Fixture.linkLocalIPv6))),
                .reachableViaEthernet, "default route via fe80::1 on eth0 (ethernet), table main"
            ),
        ]
    }()

    func testThatEvaluateReturnsNotReachableVerdictsWithReasons() {
        for row in Self.notReachableRows {
            // Given
            let facts = row.facts

            // When
            let verdict = ReachabilityRule.evaluate(facts)

            // Then
            XCTAssertEqual(verdict.status, row.status, row.name, line: row.line)
            XCTAssertEqual(verdict.reason, row.reason, row.name, line: row.line)
            XCTAssertFalse(verdict.isReachable, row.name, line: row.line)
            XCTAssertNil(verdict.link, row.name, line: row.line)
            XCTAssertEqual(verdict.family, facts.family, row.name, line: row.line)
        }
    }

    func testThatEvaluateReturnsReachableVerdictsWithTheOutputLink() {
        for row in Self.reachableRows {
            // Given
            let facts = row.facts

            // When
            let verdict = ReachabilityRule.evaluate(facts)

            // Then
            XCTAssertEqual(verdict.status, row.status, row.name, line: row.line)
            XCTAssertEqual(verdict.reason, row.reason, row.name, line: row.line)
            XCTAssertTrue(verdict.isReachable, row.name, line: row.line)
            XCTAssertEqual(verdict.link, facts.outputLink, row.name, line: row.line)
            XCTAssertEqual(verdict.family, facts.family, row.name, line: row.line)
        }
    }
}

/// The decision rule for the machine: both families' facts in, the published snapshot out.
final class ReachabilityRuleDecideTests: XCTestCase {
    /// One row of the table: both destinations' facts and the snapshot the rule must publish.
    struct Row {
        var name: String
        var ipv4: DestinationFacts
        var ipv6: DestinationFacts
        var snapshot: ReachabilitySnapshot
        var line: UInt

        init(_ name: String, ipv4: DestinationFacts, ipv6: DestinationFacts, _ snapshot: ReachabilitySnapshot, line: UInt = #line) {
            self.name = name
            self.ipv4 = ipv4
            self.ipv6 = ipv6
            self.snapshot = snapshot
            // (No row configures or hints: the link type decides Metered wherever there is a route.)
            self.snapshot.meteredReason = snapshot.interface.isEmpty ? .noRoute : .transport
            self.line = line
        }
    }

    static let rows: [Row] = {
        let noIPv4Route = Fixture.failed(.ipv4, errno: ENETUNREACH)
        let noIPv6Route = Fixture.failed(.ipv6, errno: ENETUNREACH)
        let eth0Down = Fixture.link(Fixture.eth0, isUp: false)
        return [
            Row(
                "both reachable: the IPv4 link wins",
                ipv4: Fixture.routed(.ipv4, via: Fixture.eth0),
                ipv6: Fixture.routed(.ipv6, via: Fixture.wlan0),
                ReachabilitySnapshot(
                    status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: true,
                    interface: "eth0", transport: .ethernet, isMetered: false,
                    reason: "default route via 10.0.0.1 on eth0 (ethernet), table main",
                    ipv4Link: ("eth0", .ethernet), ipv6Link: ("wlan0", .wifi)
                )
            ),
            Row(
                "both reachable: the IPv4 WWAN link wins and is metered",
                ipv4: Fixture.routed(.ipv4, via: Fixture.wwan0),
                ipv6: Fixture.routed(.ipv6, via: Fixture.eth0),
                ReachabilitySnapshot(
                    status: .reachableViaWWAN, isIPv4Reachable: true, isIPv6Reachable: true,
                    interface: "wwan0", transport: .wwan, isMetered: true,
                    reason: "default route via 10.0.0.1 on wwan0 (wwan), table main",
                    ipv4Link: ("wwan0", .wwan), ipv6Link: ("eth0", .ethernet)
                )
            ),
            Row(
                "IPv4 only",
                ipv4: Fixture.routed(.ipv4, via: Fixture.wlan0),
                ipv6: noIPv6Route,
                ReachabilitySnapshot(
                    status: .reachableViaWiFi, isIPv4Reachable: true, isIPv6Reachable: false,
                    interface: "wlan0", transport: .wifi, isMetered: false,
                    reason: "default route via 10.0.0.1 on wlan0 (wifi), table main"
                )
            ),
            Row(
                "IPv6 only",
                ipv4: noIPv4Route,
                ipv6: Fixture.routed(.ipv6, via: Fixture.eth0),
                ReachabilitySnapshot(
                    status: .reachableViaEthernet, isIPv4Reachable: false, isIPv6Reachable: true,
                    interface: "eth0", transport: .ethernet, isMetered: false,
                    reason: "IPv6 default route via fe80::1 on eth0 (ethernet), table main"
                )
            ),
            Row(
                "IPv6 only, over WWAN",
                ipv4: Fixture.routed(.ipv4, via: Fixture.wwan0, source: .selected(Fixture.noIPv4)),
                ipv6: Fixture.routed(.ipv6, via: Fixture.wwan0),
                ReachabilitySnapshot(
                    status: .reachableViaWWAN, isIPv4Reachable: false, isIPv6Reachable: true,
                    interface: "wwan0", transport: .wwan, isMetered: true,
                    reason: "IPv6 default route via fe80::1 on wwan0 (wwan), table main"
                )
            ),
            Row(
                "IPv6 only, over a VPN",
                ipv4: noIPv4Route,
                ipv6: Fixture.routed(.ipv6, via: Fixture.wg0),
                ReachabilitySnapshot(
                    status: .reachableViaOther, isIPv4Reachable: false, isIPv6Reachable: true,
                    interface: "wg0", transport: .vpn, isMetered: false,
                    reason: "IPv6 default route via fe80::1 on wg0 (vpn), table main"
                )
            ),
            Row(
                "neither, for the same reason",
                ipv4: noIPv4Route,
                ipv6: noIPv6Route,
                ReachabilitySnapshot(
                    status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                    interface: "", transport: nil, isMetered: false,
                    reason: "no default route"
                )
            ),
            Row(
                "neither, because the one link is down",
                ipv4: Fixture.routed(.ipv4, via: eth0Down),
                ipv6: Fixture.routed(.ipv6, via: eth0Down),
                ReachabilitySnapshot(
                    status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                    interface: "", transport: nil, isMetered: false,
                    reason: "eth0 is down"
                )
            ),
            Row(
                "neither, one family without any route: the other family's reason is more specific",
                ipv4: noIPv4Route,
                ipv6: Fixture.routed(.ipv6, via: Fixture.eth0, source: .failed(errno: Errno(EADDRNOTAVAIL))),
                ReachabilitySnapshot(
                    status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                    interface: "", transport: nil, isMetered: false,
                    reason: "eth0 has no usable global IPv6 address"
                )
            ),
            Row(
                "neither, for two specific and different reasons",
                ipv4: Fixture.routed(.ipv4, via: eth0Down),
                ipv6: Fixture.routed(.ipv6, via: Fixture.eth0, source: .failed(errno: Errno(EADDRNOTAVAIL))),
                ReachabilitySnapshot(
                    status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                    interface: "", transport: nil, isMetered: false,
                    reason: "IPv4: eth0 is down; IPv6: eth0 has no usable global IPv6 address"
                )
            ),
            Row(
                "neither, on a WWAN link without carrier: not metered",
                ipv4: Fixture.routed(.ipv4, via: Fixture.link(Fixture.wwan0, hasCarrier: false)),
                ipv6: noIPv6Route,
                ReachabilitySnapshot(
                    status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                    interface: "", transport: nil, isMetered: false,
                    reason: "wwan0 has no carrier"
                )
            ),
        ]
    }()

    func testThatDecidePublishesTheSnapshotTheTableSays() {
        for row in Self.rows {
            // Given
            let ipv4 = row.ipv4
            let ipv6 = row.ipv6

            // When
            let snapshot = ReachabilityRule.decide(ipv4: ipv4, ipv6: ipv6)

            // Then
            XCTAssertEqual(snapshot, row.snapshot, row.name, line: row.line)
            XCTAssertEqual(snapshot.isReachable, row.snapshot.status.isReachable, row.name, line: row.line)
        }
    }

    func testThatIPv6OnlyReasonStartsWithIPv6() {
        // Given
        let ipv4 = Fixture.failed(.ipv4, errno: ENETUNREACH)
        let ipv6 = Fixture.routed(.ipv6, via: Fixture.wlan0)

        // When
        let snapshot = ReachabilityRule.decide(ipv4: ipv4, ipv6: ipv6)

        // Then
        XCTAssertTrue(snapshot.reason.hasPrefix("IPv6 "), snapshot.reason)
        XCTAssertFalse(snapshot.isIPv4Reachable)
        XCTAssertTrue(snapshot.isIPv6Reachable)
        XCTAssertEqual(snapshot.status, .reachableViaWiFi)
    }

    func testThatNotReachableSnapshotHasNoInterfaceTransportOrMetering() {
        for row in ReachabilityRuleEvaluateTests.notReachableRows {
            // Given: the row's destination, and no route at all for the other family
            let ipv4 = row.facts.family == .ipv4 ? row.facts : Fixture.failed(.ipv4, errno: ENETUNREACH)
            let ipv6 = row.facts.family == .ipv6 ? row.facts : Fixture.failed(.ipv6, errno: ENETUNREACH)

            // When
            let snapshot = ReachabilityRule.decide(ipv4: ipv4, ipv6: ipv6)

            // Then
            XCTAssertEqual(snapshot.status, .notReachable, row.name, line: row.line)
            XCTAssertFalse(snapshot.isReachable, row.name, line: row.line)
            XCTAssertFalse(snapshot.isIPv4Reachable, row.name, line: row.line)
            XCTAssertFalse(snapshot.isIPv6Reachable, row.name, line: row.line)
            XCTAssertEqual(snapshot.interface, "", row.name, line: row.line)
            XCTAssertNil(snapshot.transport, row.name, line: row.line)
            XCTAssertFalse(snapshot.isMetered, row.name, line: row.line)
        }
    }

    func testThatOnlyWWANIsMeteredWhenReachable() {
        for row in ReachabilityRuleEvaluateTests.reachableRows {
            // Given
            let ipv4 = row.facts.family == .ipv4 ? row.facts : Fixture.failed(.ipv4, errno: ENETUNREACH)
            let ipv6 = row.facts.family == .ipv6 ? row.facts : Fixture.failed(.ipv6, errno: ENETUNREACH)

            // When
            let snapshot = ReachabilityRule.decide(ipv4: ipv4, ipv6: ipv6)

            // Then
            XCTAssertEqual(snapshot.status, row.status, row.name, line: row.line)
            XCTAssertEqual(snapshot.transport, row.facts.outputLink?.transport, row.name, line: row.line)
            XCTAssertEqual(snapshot.interface, row.facts.outputLink?.name, row.name, line: row.line)
            XCTAssertEqual(snapshot.isMetered, row.status == .reachableViaWWAN, row.name, line: row.line)
        }
    }
}
