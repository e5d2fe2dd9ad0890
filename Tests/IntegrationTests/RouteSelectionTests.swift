import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// Which route the status follows when there are several, and when an IPv6 address is usable.
final class RouteSelectionTests: DaemonTestCase {
    func testLowerMetricDefaultRouteWins() throws {
        // Given two links: ra0 (Ethernet) and rb0 (fake WiFi), each with an address
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("rb0")
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon(sysfsRoot: sysfs.root)
        try configureIPv4Link()
        try configureSecondIPv4Link()

        // When both carry a default route, rb0's with the lower metric (added first, so that
        // any switch to ra0 would show up as a StatusChanged)
        try netns.ip("route", "add", "default", "via", "10.78.0.1", "dev", "rb0", "metric", "100")
        try waitForStatus(.reachableViaWiFi)
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "metric", "200")

        // Then rb0 stays the interface (checked below: no StatusChanged until rb0's route goes)
        let first = try busctl.properties()
        XCTAssertEqual(first.status, ReachabilityStatus.reachableViaWiFi.rawValue)
        XCTAssertEqual(first.string(.interface), "rb0")
        XCTAssertTrue(first.string(.reason)?.contains("on rb0 (wifi), table main, metric 100") == true, "Reason: \(first.string(.reason) ?? "nil")")

        // When rb0's route goes, ra0's is the best
        try netns.ip("route", "del", "default", "via", "10.78.0.1", "dev", "rb0", "metric", "100")

        // Then
        let second = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(second.string(.interface), "ra0")

        // When rb0 gets a default route with a higher metric than ra0's, nothing changes; when
        // ra0's goes too, rb0's is the only one left
        try netns.ip("route", "add", "default", "via", "10.78.0.1", "dev", "rb0", "metric", "300")
        try netns.ip("route", "del", "default", "via", "10.77.0.1", "dev", "ra0", "metric", "200")

        // Then
        let third = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(third.string(.interface), "rb0")
        try assertStatusChanges([.reachableViaWiFi, .reachableViaEthernet, .reachableViaWiFi])
    }

    func testDefaultRouteViaLoopbackIsNotReachable() throws {
        // Given lo with a global address as well (so only being loopback is against it)
        try startDaemon()
        try netns.ip("addr", "add", "192.0.2.9/32", "dev", "lo")

        // When
        try netns.ip("route", "add", "default", "dev", "lo")

        // Then
        let properties = try waitForProperties("Reason naming loopback") { $0.string(.reason)?.contains("loopback") == true }
        XCTAssertEqual(properties.status, ReachabilityStatus.notReachable.rawValue)
        XCTAssertEqual(try signals.statusChanges, [])
    }

    func testMultipathDefaultRouteFallsBackToTheLiveNextHop() throws {
        // Given two Ethernet links with addresses
        try netns.addQuietVethPair("rb0", peer: "rb1")
        try startDaemon()
        try configureIPv4Link()
        try configureSecondIPv4Link()

        // When one default route has a next hop on each
        try netns.ip("route", "add", "default", "nexthop", "via", "10.77.0.1", "dev", "ra0", "nexthop", "via", "10.78.0.1", "dev", "rb0")

        // Then the kernel's pick for the probe destination is published
        let properties = try waitForStatus(.reachableViaEthernet)
        let first = try XCTUnwrap(properties.string(.interface))
        XCTAssertTrue(["ra0", "rb0"].contains(first), "Interface \(first)")

        // When the picked next hop's link goes down (the kernel marks that next hop dead)
        let other = first == "ra0" ? "rb0" : "ra0"
        try netns.ip("link", "set", first, "down")

        // Then the other next hop carries the traffic, and the host stays reachable
        let after = try waitForProperties("Interface \(other)") { $0.string(.interface) == other }
        XCTAssertEqual(after.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        try assertStatusChanges([.reachableViaEthernet])
    }

    func testIPv6TentativeAddressIsNotReachableUntilDADCompletes() throws {
        // Given IPv6 on both veth ends, with duplicate address detection on ra0
        try startDaemon()
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.setIPv6(enabled: true, on: "ra1")
        try netns.sysctl("net.ipv6.conf.ra0.accept_dad", "1")
        try netns.sysctl("net.ipv6.conf.ra0.dad_transmits", "1")
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
        try netns.waitForCarrier("ra0")

        // When ra0 gets its only global address (tentative while DAD runs, one to two seconds)
        // and a default route
        try netns.ip("-6", "addr", "add", "2001:db8:77::2/64", "dev", "ra0")
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:77::1", "dev", "ra0")

        // Then while the address is tentative the host is not reachable, for that reason
        let tentative = try waitForProperties("Reason naming the unusable IPv6 address") {
            $0.string(.reason)?.contains("ra0 has no usable global IPv6 address") == true
        }
        XCTAssertEqual(tentative.status, ReachabilityStatus.notReachable.rawValue)
        XCTAssertEqual(tentative.bool(.ipv6Reachable), false)

        // And once DAD completes, it is
        let reachable = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(reachable.bool(.ipv6Reachable), true)
        XCTAssertEqual(reachable.string(.interface), "ra0")
        let addresses = try netns.ipv6AddressLines("ra0")
        XCTAssertFalse(addresses.contains { $0.contains("tentative") }, "DAD has not completed: \(addresses)")
        try assertStatusChanges([.reachableViaEthernet])
    }

    func testIPv6AddressThatFailedDADIsNotUsable() throws {
        // Given ra0's peer, moved to a namespace of its own (the daemon's host must not hold
        // the address itself: the kernel would send from that copy), already owns 2001:db8:77::2
        let peer = try TestNamespace()
        try startDaemon()
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.sysctl("net.ipv6.conf.ra0.accept_dad", "1")
        try netns.ip("link", "set", "ra1", "name", "rpeer", "netns", peer.name)
        try peer.setIPv6(enabled: true, on: "rpeer")
        try peer.ip("link", "set", "rpeer", "up")
        try netns.ip("link", "set", "ra0", "up")
        try netns.waitForCarrier("ra0")
        try peer.ip("-6", "addr", "add", "2001:db8:77::2/64", "dev", "rpeer", "nodad")

        // When ra0 claims the same address: the peer answers its DAD probe
        try netns.ip("-6", "addr", "add", "2001:db8:77::2/64", "dev", "ra0")
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:77::1", "dev", "ra0")
        try Poll.until("the kernel to mark 2001:db8:77::2 on ra0 dadfailed", timeout: .seconds(5), observe: {
            try netns.ipv6AddressLines("ra0")
        }) { $0.contains { $0.contains("2001:db8:77::2/64") && $0.contains("dadfailed") } }

        // and a second address without DAD makes ra0 usable (a fence: the daemon has seen the
        // DAD failure by the time it reports this) and then goes again
        try netns.ip("-6", "addr", "add", "2001:db8:77::3/64", "dev", "ra0", "nodad")
        try waitForStatus(.reachableViaEthernet)
        try netns.ip("-6", "addr", "del", "2001:db8:77::3/64", "dev", "ra0")

        // Then the address that failed DAD does not count
        let properties = try waitForStatus(.notReachable)
        XCTAssertEqual(properties.bool(.ipv6Reachable), false)
        XCTAssertTrue(
            properties.string(.reason)?.contains("ra0 has no usable global IPv6 address") == true,
            "Reason: \(properties.string(.reason) ?? "nil")"
        )
    }
}
