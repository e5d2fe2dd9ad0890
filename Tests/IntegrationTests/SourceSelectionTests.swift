import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The answer is what an application gets: the source address the kernel selects for a
/// connection (wherever it lives), then the route for that source (issue 11, items 3 and 4).
final class SourceSelectionTests: DaemonTestCase {
    func testPointToPointLinkHoldingItsOwnAddressIsReachable() throws {
        // Given ra0 up with carrier but no address (the Ethernet under a PPPoE session has none)
        // and tun0, the PPP stand-in, holding its own address
        try startDaemon()
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
        _ = try attachedTun()

        // When the default route goes through tun0
        try netns.ip("route", "add", "default", "dev", "tun0")

        // Then the host is reachable through tun0: nothing beneath is known, which is no veto
        let properties = try waitForStatus(.reachableViaOther)
        XCTAssertEqual(properties.string(.interface), "tun0")
        XCTAssertEqual(properties.string(.transport), Transport.vpn.rawValue)
        XCTAssertEqual(properties.string(.reason), "default route on tun0 (vpn), table main")
    }

    func testSourceAddressOnLoopbackWithUnnumberedDefaultRoutes() throws {
        // Given ra0 without any global address, and a /32 and a /128 on lo (BGP unnumbered,
        // RFC 5549 style)
        try startDaemon()
        try bringUpIPv6VethPair()
        try netns.waitForCarrier("ra0")
        try netns.ip("addr", "add", "192.0.2.10/32", "dev", "lo")
        try netns.ip("addr", "add", "2001:db8:1::10/128", "dev", "lo")

        // When both families' default routes leave through ra0 via on-link gateways
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "onlink")
        try netns.ip("-6", "route", "add", "default", "via", "fe80::1", "dev", "ra0")

        // Then both are reachable over ra0, from the addresses on lo
        let properties = try waitForProperties("both families reachable") { $0.bool(.ipv4Reachable) == true && $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(properties.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertEqual(properties.string(.reason), "default route via 10.77.0.1 on ra0 (ethernet), table main, from 192.0.2.10 on lo")
    }

    func testRouteSourceHintIsTheSourceApplicationsGet() throws {
        // Given ra0 with only a link-scope address, and 192.0.2.10 on lo
        try startDaemon()
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0", "scope", "link")
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
        try netns.ip("addr", "add", "192.0.2.10/32", "dev", "lo")

        // When the default route names 192.0.2.10 as its source
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "src", "192.0.2.10")

        // Then
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.reason), "default route via 10.77.0.1 on ra0 (ethernet), table main, from 192.0.2.10 on lo")

        // When the hint goes, the kernel still prefers the global address on lo to ra0's
        // link-scope one
        try netns.ip("route", "replace", "default", "via", "10.77.0.1", "dev", "ra0")
        XCTAssertEqual(try busctl.properties().string(.reason), "default route via 10.77.0.1 on ra0 (ethernet), table main, from 192.0.2.10 on lo")

        // When lo's address goes too, nothing global is left: not reachable
        try netns.ip("addr", "del", "192.0.2.10/32", "dev", "lo")
        let after = try waitForStatus(.notReachable)
        XCTAssertTrue(after.string(.reason)?.hasPrefix("ra0 has no usable global IPv4 address") == true, "Reason: \(after.string(.reason) ?? "nil")")
    }

    func testIPv6SourceSpecificDefaultRouteIsReachable() throws {
        // Given ra0 with 2001:db8:1::2/64 and no plain default route
        try startDaemon()
        try configureIPv6Link(address: "2001:db8:1::2/64")

        // When the only default route is for sources in 2001:db8:1::/48 (as odhcp6c installs)
        try netns.ip("-6", "route", "add", "default", "from", "2001:db8:1::/48", "via", "2001:db8:1::1", "dev", "ra0")

        // Then an application's connection gets that source and that route
        let properties = try waitForProperties("IPv6 reachable") { $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(properties.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertEqual(properties.string(.interface), "ra0")
    }

    func testIPv6SourceRuleSelectsTheTable() throws {
        // Given ra0 with 2001:db8:1::2/64 and a rule sending its source's lookups to table 100
        try startDaemon()
        try configureIPv6Link(address: "2001:db8:1::2/64")
        try netns.ip("-6", "rule", "add", "from", "2001:db8:1::/48", "lookup", "100")

        // When table 100 has the only default route
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "ra0", "table", "100")

        // Then
        let properties = try waitForProperties("IPv6 reachable") { $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(properties.string(.reason), "IPv6 default route via 2001:db8:1::1 on ra0 (ethernet), table 100, metric 1024")
    }

    func testAnIPv6RouteSrcWhoseAddressIsGoneIsNotReachable() throws {
        // Given ra0 with 2001:db8:77::2/64, rb0 with 2001:db8:79::2/64, and the default route via
        // ra0 with src 2001:db8:79::2 (rb0's address)
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon()
        try configureIPv6Link(address: "2001:db8:77::2/64")
        for link in ["rb0", "rb1"] { try netns.setIPv6(enabled: true, on: link) }
        for link in ["rb1", "rb0"] { try netns.ip("link", "set", link, "up") }
        try netns.ip("addr", "add", "2001:db8:79::2/64", "dev", "rb0", "nodad")
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:77::1", "dev", "ra0", "src", "2001:db8:79::2")
        let reachable = try waitForProperties("IPv6 reachable") { $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(reachable.string(.reason), "IPv6 default route via 2001:db8:77::1 on ra0 (ethernet), table main, metric 1024, from 2001:db8:79::2 on rb0")

        // When rb0 goes: the kernel keeps the route's src (it clears it only for the route's own
        // link) and connect() still selects 2001:db8:79::2, which no link holds
        try netns.ip("link", "del", "rb0")

        // Then replies could not arrive: not reachable, and the reason says why
        let gone = try waitForStatus(.notReachable)
        XCTAssertEqual(gone.string(.reason), "the kernel would send from 2001:db8:79::2, which no link holds (a route's src whose address is gone)")
    }

    func testIPv6WithOnlyLinkLocalSourceIsNotReachable() throws {
        // Given ra0 with IPv6 and only its link-local address
        try startDaemon()
        try bringUpIPv6VethPair()
        try netns.ip("addr", "add", "fe80::77:2/64", "dev", "ra0", "nodad")

        // When a default route leaves through ra0
        try netns.ip("-6", "route", "add", "default", "via", "fe80::1", "dev", "ra0")

        // Then the kernel would send from a link-local or loopback address: not reachable
        let properties = try waitForProperties("Reason naming the fallback source") {
            $0.string(.reason)?.hasPrefix("ra0 has no usable global IPv6 address; the kernel would send from ") == true
        }
        XCTAssertEqual(properties.status, ReachabilityStatus.notReachable.rawValue)
    }

    /// Enables IPv6 on both veth ends, brings them up and gives ra0 `address` without DAD.
    private func configureIPv6Link(address: String) throws {
        try bringUpIPv6VethPair()
        try netns.ip("addr", "add", address, "dev", "ra0", "nodad")
    }
}
