import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The Reason names the routing table the kernel's lookup used, not always `main`.
final class RoutingTableReasonTests: DaemonTestCase {
    func testIPv4ReasonNamesThePolicyRoutingTable() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()

        // When only a rule makes the kernel use table 100's default route
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0", "table", "100")
        try netns.ip("rule", "add", "lookup", "100", "priority", "100")

        // Then (`ip route get 8.8.8.8` says "table 100" too)
        let properties = try waitForStatus(.reachableViaEthernet)
        let reason = try XCTUnwrap(properties.string(.reason))
        XCTAssertTrue(reason.contains("on ra0 (ethernet), table 100"), "Reason: \(reason)")
        let explained = try busctl.explain().split(separator: "\n").first { $0.hasPrefix("IPv4") } ?? ""
        XCTAssertTrue(explained.contains("table 100"), "Explain: \(explained)")
    }

    func testIPv6ReasonNamesThePolicyRoutingTable() throws {
        // Given
        try startDaemon()
        try bringUpIPv6VethPair()
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")

        // When only a rule makes the kernel use table 100's default route
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:77::1", "dev", "ra0", "table", "100")
        try netns.ip("-6", "rule", "add", "lookup", "100", "priority", "100")

        // Then
        let properties = try waitForStatus(.reachableViaEthernet)
        let reason = try XCTUnwrap(properties.string(.reason))
        XCTAssertTrue(reason.contains("on ra0 (ethernet), table 100"), "Reason: \(reason)")
    }
}
