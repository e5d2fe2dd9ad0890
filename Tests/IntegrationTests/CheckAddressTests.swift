import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `CheckAddress`: the reachability of one literal address, from the kernel's route lookup.
final class CheckAddressTests: DaemonTestCase {
    func testRoutedAddressIsReachableThroughItsLink() throws {
        // Given ra0 with 10.77.0.2/24 up: 10.77.0.0/24 is on-link, there is no default route
        try startDaemon()
        try configureIPv4Link()

        // When / Then
        let expected = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0")
        try Poll.until("CheckAddress(10.77.0.9) to answer \(expected)", observe: { try busctl.checkAddress("10.77.0.9") }) {
            $0 == expected
        }
    }

    func testAnIPv4MappedAddressIsAnsweredAsIPv4() throws {
        // Given ra0 with 10.77.0.2/24 up and no IPv6 at all
        try startDaemon()
        try configureIPv4Link()
        let expected = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0")
        try Poll.until("10.77.0.9 on-link", observe: { try busctl.checkAddress("10.77.0.9") }) { $0 == expected }

        // When / Then: a dual-stack socket sends to ::ffff:10.77.0.9 over IPv4, and so answers the daemon
        XCTAssertEqual(try busctl.checkAddress("::ffff:10.77.0.9"), expected)
    }

    func testALinkLocalAddressIsAnsweredOnTheLinkItsZoneNames() throws {
        // Given link-local networks on both ra0 and ra1 (fe80::/64 on each), nothing global
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()
        let viaRa1 = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra1")
        let index = try XCTUnwrap(try netns.ip("-o", "link", "show", "ra1").split(separator: ":").first.map(String.init))

        // When / Then: the zone picks the link, by name or by index, as for an application's socket
        try Poll.until("fe80::99%ra1 through ra1", observe: { try busctl.checkAddress("fe80::99%ra1") }) { $0 == viaRa1 }
        XCTAssertEqual(try busctl.checkAddress("fe80::99%ra0"), .reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0"))
        XCTAssertEqual(try busctl.checkAddress("fe80::99%\(index)"), viaRa1)
        // and without a zone, or with one naming no link, no connection can be made
        let notReachable = CheckAddressReply.reply(status: ReachabilityStatus.notReachable.rawValue, interface: "")
        XCTAssertEqual(try busctl.checkAddress("fe80::99"), notReachable)
        XCTAssertEqual(try busctl.checkAddress("fe80::99%nosuch0"), notReachable)
    }

    func testAZoneThatCannotNameALinkIsAnInvalidAddressError() throws {
        // Given
        try startDaemon()

        // When
        let reply = try busctl.checkAddress("fe80::1%eth/0")

        // Then
        guard case .error(let name, _) = reply else {
            return XCTFail("CheckAddress(\"fe80::1%eth/0\") answered \(reply)")
        }
        XCTAssertEqual(name, BusContract.invalidAddressError)
    }

    func testUnroutedAddressIsNotReachable() throws {
        // Given an on-link network and no default route
        try startDaemon()
        try configureIPv4Link()
        try Poll.until("the on-link address to be reachable", observe: { try busctl.checkAddress("10.77.0.9") }) {
            $0 == .reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0")
        }

        // When / Then
        XCTAssertEqual(
            try busctl.checkAddress("198.51.100.7"),
            .reply(status: ReachabilityStatus.notReachable.rawValue, interface: "")
        )
    }

    func testIPv6AddressThroughDefaultRouteIsReachable() throws {
        // Given
        try startDaemon()
        try configureIPv6Default()

        // When / Then
        let expected = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0")
        try Poll.until("CheckAddress(2001:db8:1::9) to answer \(expected)", observe: { try busctl.checkAddress("2001:db8:1::9") }) {
            $0 == expected
        }
    }

    func testThisHostsOwnAddressesAreReachableOverLoopbackWhileItIsUp() throws {
        // Given a default route, and ra0 holding 10.77.0.2 and fd00::2
        try startReachableWithOwnAddressesOnRa0()
        let ownAddresses = ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.77.0.2", "fd00::2"]

        // When / Then: the kernel routes them to this host over lo (`local … dev lo`), and a
        // connection to them works
        let overLoopback = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaOther.rawValue, interface: "lo")
        for address in ownAddresses {
            XCTAssertEqual(try busctl.checkAddress(address), overLoopback, address)
        }

        // When lo goes down, connections to them time out: not reachable
        try netns.ip("link", "set", "lo", "down")
        let notReachable = CheckAddressReply.reply(status: ReachabilityStatus.notReachable.rawValue, interface: "")
        try Poll.until("CheckAddress(10.77.0.2) with lo down", observe: { try busctl.checkAddress("10.77.0.2") }) { $0 == notReachable }
        for address in ownAddresses {
            XCTAssertEqual(try busctl.checkAddress(address), notReachable, address)
        }
        // and the machine stays reachable through ra0
        XCTAssertEqual(try busctl.properties().status, ReachabilityStatus.reachableViaEthernet.rawValue)
    }

    func testALocalRouteForEverythingDoesNotMakeTheInternetReachable() throws {
        // Given a transparent proxy's routes: everything to this host (`local default dev lo`,
        // table 100, through a policy rule), no other route out
        try startDaemon()
        try configureIPv4Link()
        try netns.ip("route", "add", "local", "default", "dev", "lo", "table", "100")
        try netns.ip("rule", "add", "pref", "100", "lookup", "100")

        // Then the Internet is not reachable (a route to this host does not reach it)
        let properties = try waitForProperties("the probes meet the local route") { $0.string(.reason) == "route leads to this host only" }
        XCTAssertEqual(properties.status, ReachabilityStatus.notReachable.rawValue)
        // while an application's connection to any address stays on this host, as CheckAddress says
        XCTAssertEqual(try busctl.checkAddress("198.51.100.7"), .reply(status: ReachabilityStatus.reachableViaOther.rawValue, interface: "lo"))
    }

    func testMalformedAddressIsAnInvalidAddressError() throws {
        // Given
        try startDaemon()

        // When
        let reply = try busctl.checkAddress("not-an-address")

        // Then
        guard case .error(let name, _) = reply else {
            return XCTFail("CheckAddress(\"not-an-address\") answered \(reply)")
        }
        XCTAssertEqual(name, BusContract.invalidAddressError)
        XCTAssertNil(try XCTUnwrap(daemon).termination, "the daemon must keep running")
        XCTAssertEqual(
            try busctl.checkAddress("198.51.100.7"),
            .reply(status: ReachabilityStatus.notReachable.rawValue, interface: "")
        )
        XCTAssertEqual(try busctl.properties().status, ReachabilityStatus.notReachable.rawValue)
    }
}
