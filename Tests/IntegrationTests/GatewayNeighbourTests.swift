import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// Passive connectivity evidence: a default gateway that does not answer address resolution
/// makes the family `limited`, with no packet of the daemon's; all traffic stays in the test's
/// namespace (the gateway 10.77.0.1 is an address nothing holds on ra0's network).
final class GatewayNeighbourTests: DaemonTestCase {
    func testASilentGatewayIsLimitedUntilItAnswersAgain() throws {
        // Given a default route via 10.77.0.1, which nothing answers for, and fast ARP retries
        try startReachableWithNoEvidence()

        // When another neighbour of the LAN fails to resolve, the kernel's filter keeps it from
        // the daemon (no batch read at all), and nothing changes
        let batchesBefore = try batchesRead()
        try resolveNeighbour(toward: "10.77.0.9", until: "FAILED")
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.unknown.rawValue)
        XCTAssertEqual(try batchesRead(), batchesBefore, "the daemon read netlink messages for another neighbour")

        // When an application's traffic goes out through the gateway, and its resolution fails
        try resolveNeighbour(toward: "203.0.113.7", neighbour: "10.77.0.1", until: "FAILED")

        // Then IPv4 is limited by that evidence alone, one signal, and Explain says why
        let limited = try waitForProperties("connectivity limited") { $0.string(.connectivity) == Connectivity.limited.rawValue }
        XCTAssertEqual(limited.string(.ipv4Connectivity), Connectivity.limited.rawValue)
        XCTAssertEqual(limited.status, ReachabilityStatus.reachableViaEthernet.rawValue, "Status stays what the route says")
        XCTAssertTrue(try busctl.explain().contains("gateway 10.77.0.1 neighbour entry: address resolution failed"))

        // When the gateway answers again
        try netns.ip("neigh", "replace", "10.77.0.1", "lladdr", "02:00:00:00:77:01", "dev", "ra0", "nud", "reachable")

        // Then back to unknown, with one signal per change
        try waitForProperties("connectivity unknown again") { $0.string(.connectivity) == Connectivity.unknown.rawValue }
        XCTAssertEqual(try signals.waitForConnectivityChanged(count: 3), [Connectivity.unknown.rawValue, Connectivity.limited.rawValue, Connectivity.unknown.rawValue])
    }

    func testAFailureSeenWithoutCarrierIsForgottenWhenTheCableComesBack() throws {
        // Given a working default route via 10.77.0.1
        try startReachableWithNoEvidence()

        // When ra0 loses carrier and a packet goes toward the gateway meanwhile: its resolution
        // fails, and the daemon reads that entry
        try netns.ip("link", "set", "ra1", "down")
        try waitForStatus(.notReachable)
        let batchesBefore = try batchesRead()
        try resolveNeighbour(toward: "203.0.113.7", neighbour: "10.77.0.1", until: "FAILED")
        try Poll.until("the daemon read the gateway's failed entry", observe: { try self.batchesRead() }) { $0 > batchesBefore }

        // When the carrier comes back and nothing is sent to the gateway
        try netns.ip("link", "set", "ra1", "up")
        let back = try waitForStatus(.reachableViaEthernet)

        // Then nothing says limited: that failure told nothing of the network that came back
        XCTAssertEqual(back.string(.connectivity), Connectivity.unknown.rawValue)
        try waitUntilRoutingIsSettled()
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.unknown.rawValue)
        let explain = try busctl.explain()
        XCTAssertFalse(explain.contains("address resolution failed"), explain)
    }

    /// Starts the daemon with a default route via 10.77.0.1 over ra0 and waits until it is
    /// reachable with connectivity unknown (no evidence either way).
    private func startReachableWithNoEvidence() throws {
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForProperties("reachable, connectivity unknown") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == Connectivity.unknown.rawValue
        }
    }

    /// How many batches of netlink messages the daemon has read (its debug log, one line each).
    private func batchesRead() throws -> Int {
        try XCTUnwrap(daemon).log.components(separatedBy: "rtnetlink message(s)").count - 1
    }

    func testAGatewayFailedBeforeTheDaemonStartedIsLimitedAtOnce() throws {
        // Given a gateway whose resolution already failed
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try resolveNeighbour(toward: "203.0.113.7", neighbour: "10.77.0.1", until: "FAILED")

        // When the daemon starts
        try startDaemon()

        // Then its first answer already says limited
        let first = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(first.string(.connectivity), Connectivity.limited.rawValue)
    }
}
