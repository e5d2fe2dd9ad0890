import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// A default route that only a routing-policy rule makes the kernel use.
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
}
