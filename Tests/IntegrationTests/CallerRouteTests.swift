import Foundation
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `CheckAddress` answers for the calling user: the kernel's route lookups carry the uid the bus
/// reports for the caller (`RTA_UID`), so a `uidrange` rule (one user's VPN, a split tunnel)
/// routes the question as it routes that user's connections; the published `Status` stays the
/// system's (issue 31, item 3).
final class CallerRouteTests: DaemonTestCase {
    private static let viaRa0 = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0")
    private static let viaRa1 = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra1")
    private static let notReachable = CheckAddressReply.reply(status: ReachabilityStatus.notReachable.rawValue, interface: "")

    func testEachCallerGetsTheRouteOfItsOwnUidAndFollowsItsOwnTable() throws {
        // Given a default route over ra0 in main, ra1 with an address of its own, and user
        // nobody's (65534) traffic sent to table 100, whose default is unreachable
        try startWithNobodysTrafficInAnUnreachableTable()

        // When root and nobody ask about 10.9.1.1 (nobody from a connection that stays: its watch)
        let rootAnswer = try busctl.checkAddress("10.9.1.1")
        let (watcher, nobodyReply) = try holdCheckAddress(["10.9.1.1"], as: "nobody")
        defer { _ = watcher.terminate() }

        // Then root's route is main's, nobody's is table 100's unreachable default; Status is the system's
        XCTAssertEqual(rootAnswer, Self.viaRa0)
        let nobodyAnswer = try JSONSerialization.jsonObject(with: Data(nobodyReply.utf8)) as? [String: Any]
        XCTAssertEqual(nobodyAnswer?["reply"] as? [String], [ReachabilityStatus.notReachable.rawValue, ""], nobodyReply)
        XCTAssertEqual(try busctl.properties().status, ReachabilityStatus.reachableViaEthernet.rawValue)

        // When table 100 gets a route for 10.9.0.0/16 over ra1 (only nobody's watch lets it
        // through the daemon's route filter: it contains no probe)
        try waitUntilRoutingIsSettled()
        let routesChangedBefore = try signals.routesChangedCount
        try netns.ip("route", "add", "10.9.0.0/16", "via", "10.78.0.1", "dev", "ra1", "table", "100")

        // Then RoutesChanged comes, nobody's answer follows its table, root's stays main's
        // (the hold opened the test directory, and so the bus socket, to nobody)
        try signals.waitForRoutesChanged(count: routesChangedBefore + 1)
        XCTAssertEqual(try busctl.checkAddress("10.9.1.1", as: "nobody"), Self.viaRa1)
        XCTAssertEqual(try busctl.checkAddress("10.9.1.1"), Self.viaRa0)

        // When main loses its default route
        try netns.ip("route", "del", "default", "table", "main")
        try waitForStatus(.notReachable)

        // Then root's answer follows main, nobody's stays table 100's
        XCTAssertEqual(try busctl.checkAddress("10.9.1.1"), Self.notReachable)
        XCTAssertEqual(try busctl.checkAddress("10.9.1.1", as: "nobody"), Self.viaRa1)
    }

    func testAnIPv6UidRuleDecidesTheCallersAnswerToo() throws {
        // Given an IPv6 default route over ra0 in main, and user nobody's IPv6 traffic sent to
        // table 100, whose default is unreachable
        try startDaemon()
        try configureIPv6Default()
        try netns.ip("-6", "rule", "add", "uidrange", "65534-65534", "lookup", "100")
        try netns.ip("-6", "route", "add", "unreachable", "default", "table", "100")
        try waitForProperties("IPv6 reachable") { $0.bool(.ipv6Reachable) == true }

        // When root and nobody ask about 2001:db8:99::1
        let rootAnswer = try busctl.checkAddress("2001:db8:99::1")
        // (nobody reaches the bus socket in the test directory)
        XCTAssertEqual(chmod(try XCTUnwrap(directory).path, 0o755), 0)
        let nobodyAnswer = try busctl.checkAddress("2001:db8:99::1", as: "nobody")

        // Then
        XCTAssertEqual(rootAnswer, Self.viaRa0)
        XCTAssertEqual(nobodyAnswer, Self.notReachable)
    }
}
