import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// A default route that only a routing-policy rule makes the kernel use, and rules on the
/// flow's protocol and port: the daemon answers for an application's TCP connection to port 443
/// (issue 25, D2), and `ip route get … ipproto tcp dport 443` is the kernel's word on it.
final class PolicyRoutingTests: DaemonTestCase {
    func testDefaultRouteInTableSelectedByEarlierRuleIsReachable() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()

        // When the rule comes before the route
        try netns.ip("rule", "add", "lookup", "100", "priority", "100")
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "table", "100")

        // Then
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.bool(.ipv4Reachable), true)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertTrue(properties.string(.reason)?.contains("ra0") == true, "Reason: \(properties.string(.reason) ?? "nil")")
    }

    func testDefaultRouteInTableSelectedByLaterRuleIsReachable() throws {
        // Given a default route only in table 100, which no rule consults: IPv4 is not reachable
        try startDaemon()
        try configureIPv4Link()
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "table", "100")
        // IPv6 as a fence: once the daemon reports it, it has processed the IPv4 route too.
        try configureIPv6Default()
        let beforeRule = try waitForProperties("IPv6Reachable true") { $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(beforeRule.bool(.ipv4Reachable), false, "a default route in an unconsulted table must not count")

        // When the rule arrives after the route
        try netns.ip("rule", "add", "lookup", "100", "priority", "100")

        // Then
        let properties = try waitForProperties("IPv4Reachable true") { $0.bool(.ipv4Reachable) == true }
        XCTAssertEqual(properties.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertTrue(
            try signals.propertiesChanges.contains { $0.propertyNames.contains(ReachabilityProperty.ipv4Reachable.rawValue) },
            "IPv4Reachable changed without a PropertiesChanged signal"
        )
    }

    func testARuleBlockingQUICLeavesTheTCPWebFlowReachable() throws {
        // Given ra0 with a default route
        try startDaemonReachableOverRa0()

        // When rules prohibit UDP to port 443 in both families (QUIC blocked), and IPv6 comes up
        // after them (a fence: once IPv6 is reported, the IPv4 rule has been seen too)
        try netns.ip("rule", "add", "ipproto", "udp", "dport", "443", "prohibit", "priority", "100")
        try netns.ip("-6", "rule", "add", "ipproto", "udp", "dport", "443", "prohibit", "priority", "100")
        try configureIPv6Default()

        // Then a TCP connection to port 443 still gets its route, and the daemon says so
        let properties = try waitForProperties("IPv6Reachable true") { $0.bool(.ipv6Reachable) == true }
        for (family, destination) in [("-4", "8.8.8.8"), ("-6", "2001:4860:4860::8888")] {
            let kernel = try netns.ip(family, "route", "get", destination, "ipproto", "tcp", "dport", "443")
            XCTAssertTrue(kernel.contains("dev ra0"), kernel)
            XCTAssertThrowsError(try netns.ip(family, "route", "get", destination, "ipproto", "udp", "dport", "443"), "QUIC is prohibited")
        }
        XCTAssertEqual(properties.bool(.ipv4Reachable), true)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertEqual(properties.string(.reason), "default route via 10.77.0.1 on ra0 (ethernet), table main")
    }

    func testAPortRuleGivesInterfaceAndSourceFromTheSameTable() throws {
        // Given ra0 with the main table's default route, and tun0 (10.99.0.2/24) with the only
        // route of table 100
        try startDaemonReachableOverRa0()
        _ = try attachedTun()
        try netns.ip("route", "add", "default", "dev", "tun0", "table", "100")

        // When a rule sends connections to port 443 (TCP and UDP) to table 100
        try netns.ip("rule", "add", "dport", "443", "lookup", "100", "priority", "100")

        // Then interface and source both come from table 100, as the kernel answers for a TCP
        // connection to port 443 (not ra0 from tun0's address, which no application gets)
        let properties = try waitForProperties("Reason naming tun0") { $0.string(.reason)?.contains("tun0") == true }
        let kernel = try netns.ip("route", "get", "8.8.8.8", "ipproto", "tcp", "dport", "443")
        XCTAssertTrue(kernel.contains("dev tun0") && kernel.contains("src 10.99.0.2") && kernel.contains("table 100"), kernel)
        // (the main table's default route through ra0 carries the tunnel: its underlying link)
        XCTAssertEqual(properties.string(.reason), "default route on tun0 (vpn over ra0, ethernet), table 100")
        XCTAssertEqual(properties.string(.interface), "tun0")
        XCTAssertEqual(properties.string(.transport), Transport.vpn.rawValue)

        // When the rule takes TCP only: the UDP probe keeps ra0's source, TCP's lookup selects tun0's
        try netns.ip("rule", "del", "priority", "100")
        _ = try waitForProperties("Interface ra0") { $0.string(.interface) == "ra0" }
        try netns.ip("rule", "add", "ipproto", "tcp", "dport", "443", "lookup", "100", "priority", "100")

        // Then the source is TCP's, not the probe's (not "from 10.77.0.2 on ra0")
        let tcpOnly = try waitForProperties("Reason naming tun0") { $0.string(.reason)?.contains("tun0") == true }
        let tcpKernel = try netns.ip("route", "get", "8.8.8.8", "ipproto", "tcp", "dport", "443")
        XCTAssertTrue(tcpKernel.contains("dev tun0") && tcpKernel.contains("src 10.99.0.2"), tcpKernel)
        XCTAssertEqual(tcpOnly.string(.reason), "default route on tun0 (vpn over ra0, ethernet), table 100")
    }

    func testARuleBlockingTCPToPort443IsNotReachable() throws {
        // Given ra0 with a default route
        try startDaemonReachableOverRa0()

        // When a rule prohibits TCP to port 443 (HTTPS blocked; QUIC still allowed)
        try netns.ip("rule", "add", "ipproto", "tcp", "dport", "443", "prohibit", "priority", "100")

        // Then the flow most applications open fails: not reachable, whatever UDP would get
        let properties = try waitForStatus(.notReachable)
        XCTAssertThrowsError(try netns.ip("route", "get", "8.8.8.8", "ipproto", "tcp", "dport", "443"), "HTTPS over TCP is prohibited")
        XCTAssertTrue(try netns.ip("route", "get", "8.8.8.8", "ipproto", "udp", "dport", "443").contains("dev ra0"))
        XCTAssertEqual(properties.string(.reason), "default route is prohibit")
        XCTAssertEqual(properties.bool(.ipv4Reachable), false)
    }

    func testABurstOfRuleChangesReadsNoRuleDumpAndANewSelectingRuleStillCounts() throws {
        // Given ra0 with a default route, the daemon logging its rule dumps (issue 38 item 17:
        // each rule message cost a dump of every rule)
        try startDaemonReachableOverRa0(arguments: ["--log-level", "debug"])
        let daemon = try XCTUnwrap(daemon)
        func dumps() -> Int { FaultInjection.occurrences(of: "Read the policy rules (dump", in: daemon.log) }
        let dumpsBefore = dumps()

        // When 20 rules are added and deleted one by one, then a rule prohibits TCP to port 443
        for number in 0..<20 {
            try netns.ip("rule", "add", "from", "10.1.\(number).0/24", "lookup", "100", "priority", "\(2000 + number)")
        }
        for number in 0..<20 { try netns.ip("rule", "del", "priority", "\(2000 + number)") }
        try netns.ip("rule", "add", "ipproto", "tcp", "dport", "443", "prohibit", "priority", "100")

        // Then the prohibiting rule counts (its selectors came with its message, before the walk
        // that needed them), and no rule message cost a dump
        XCTAssertEqual(try waitForStatus(.notReachable).string(.reason), "default route is prohibit")
        XCTAssertEqual(dumps(), dumpsBefore, "rule dumps during the burst")

        // When the selecting rule goes (another might select the same): one dump, and reachable again
        try netns.ip("rule", "del", "priority", "100")
        _ = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(dumps(), dumpsBefore + 1, "rule dumps after a selecting rule's deletion")
    }

    /// Starts the daemon with ra0's address and `default via 10.77.0.1 dev ra0`, and waits
    /// until it says so.
    private func startDaemonReachableOverRa0(arguments: [String] = []) throws {
        try startDaemon(arguments: arguments)
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        _ = try waitForStatus(.reachableViaEthernet)
    }
}
