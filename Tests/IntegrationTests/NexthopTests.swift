import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// Routes through nexthop objects (`ip nexthop`, as FRR installs them) change with the object,
/// without a route message of their own (issue 11.2).
final class NexthopTests: DaemonTestCase {
    func testDeletingTheNexthopOfTheDefaultRouteIsNotReachable() throws {
        // Given the IPv4 default route through nexthop object 1
        try startDaemon()
        try configureIPv4Link()
        try netns.ip("nexthop", "add", "id", "1", "via", "10.77.0.1", "dev", "ra0")
        try netns.ip("route", "add", "default", "nhid", "1")
        try waitForStatus(.reachableViaEthernet)

        // When the object goes (the kernel removes the route and sends only RTM_DELNEXTHOP)
        try netns.ip("nexthop", "del", "id", "1")

        // Then
        let properties = try waitForStatus(.notReachable)
        XCTAssertEqual(properties.string(.reason), "no default route")
    }

    func testReplacingTheNexthopMovesTheDefaultRouteWithoutCompatibilityMessages() throws {
        // Given FRR's setting (no route messages for nexthop changes), two links, and the
        // default route through nexthop object 1 on ra0
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try netns.sysctl("net.ipv4.nexthop_compat_mode", "0")
        try startDaemon()
        try configureIPv4Link()
        try configureSecondIPv4Link()
        try netns.ip("nexthop", "add", "id", "1", "via", "10.77.0.1", "dev", "ra0")
        try netns.ip("route", "add", "default", "nhid", "1")
        try waitForProperties("Interface ra0") { $0.string(.interface) == "ra0" }

        // When the object is replaced by one on rb0
        try netns.ip("nexthop", "replace", "id", "1", "via", "10.78.0.1", "dev", "rb0")

        // Then
        let properties = try waitForProperties("Interface rb0") { $0.string(.interface) == "rb0" }
        XCTAssertEqual(properties.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertEqual(properties.string(.reason), "default route via 10.78.0.1 on rb0 (ethernet), table main")
    }

    func testGroupsAndBlackholeNexthops() throws {
        // Given two links and a group of one nexthop on each, carrying the default route
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon()
        try configureIPv4Link()
        try configureSecondIPv4Link()
        try netns.ip("nexthop", "add", "id", "1", "via", "10.77.0.1", "dev", "ra0")
        try netns.ip("nexthop", "add", "id", "2", "via", "10.78.0.1", "dev", "rb0")
        try netns.ip("nexthop", "add", "id", "3", "group", "1/2")
        try netns.ip("route", "add", "default", "nhid", "3")
        let first = try waitForStatus(.reachableViaEthernet)
        let chosen = try XCTUnwrap(first.string(.interface))
        XCTAssertTrue(["ra0", "rb0"].contains(chosen), "Interface \(chosen)")

        // When the chosen member leaves the group
        let other = chosen == "ra0" ? "rb0" : "ra0"
        try netns.ip("nexthop", "replace", "id", "3", "group", chosen == "ra0" ? "2" : "1")

        // Then the other member carries the route
        try waitForProperties("Interface \(other)") { $0.string(.interface) == other }

        // When the group is replaced by a blackhole nexthop... (a group cannot become one:
        // the route moves to a blackhole object instead)
        try netns.ip("nexthop", "add", "id", "4", "blackhole")
        try netns.ip("route", "replace", "default", "nhid", "4")

        // Then
        let blackholed = try waitForStatus(.notReachable)
        XCTAssertEqual(blackholed.string(.reason), "default route is blackhole")
    }

    func testIPv6NexthopObjects() throws {
        // Given IPv6 on ra0 and its default route through an IPv6 nexthop object
        try startDaemon()
        try bringUpIPv6VethPair()
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")
        try netns.ip("-6", "nexthop", "add", "id", "11", "via", "2001:db8:77::1", "dev", "ra0")
        try netns.ip("-6", "route", "add", "default", "nhid", "11")
        let reachable = try waitForProperties("IPv6 reachable") { $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(reachable.string(.reason), "IPv6 default route via 2001:db8:77::1 on ra0 (ethernet), table main, metric 1024")

        // When the object goes
        try netns.ip("-6", "nexthop", "del", "id", "11")

        // Then
        try waitForStatus(.notReachable)
    }
}
