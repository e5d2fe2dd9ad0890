import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// `DownDelaySec=`: a loss of reachability is published only once it has lasted that long.
///
/// These tests are about time, so they cause outages of a set length with sleeps; everything
/// else is synchronised by polling.
final class FlapDampingTests: DaemonTestCase {
    /// The configured delay.
    private let downDelay: Duration = .seconds(2)

    func testOutageShorterThanDownDelayEmitsNoStatusChanged() throws {
        // Given
        try startReachableDaemon(configuration: "[Reachability]\nDownDelaySec=2\n")

        let announcedBefore = try signals.propertiesChangedCount

        // When ra0 loses carrier for 500 ms
        try netns.ip("link", "set", "ra1", "down")
        let held = ContinuousClock.now
        try waitForLog(containing: "Holding not-reachable")
        Thread.sleep(forTimeInterval: 0.5)  // the outage, on purpose: shorter than DownDelaySec
        try netns.ip("link", "set", "ra1", "up")
        try netns.waitForCarrier("ra0")

        // Then nothing is published, even after the delay would have run out
        Thread.sleep(until: held + downDelay + .milliseconds(500))  // past the held loss's deadline, on purpose
        let properties = try busctl.properties()
        XCTAssertEqual(properties.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        try assertStatusChanges([.reachableViaEthernet])
        let announced = try signals.propertiesChanges
        XCTAssertFalse(
            announced.dropFirst(announcedBefore).contains { $0.changed["Status"] != nil },
            "Status changed on the bus during a damped outage: \(announced)"
        )
        XCTAssertNil(try XCTUnwrap(daemon).termination)
    }

    func testOutageLongerThanDownDelayEmitsTwoStatusChanged() throws {
        // Given
        try startReachableDaemon(configuration: "[Reachability]\nDownDelaySec=2\n")

        // When ra0 loses carrier for 3 s
        let outageStart = ContinuousClock.now
        try netns.ip("link", "set", "ra1", "down")
        try waitForLog(containing: "Holding not-reachable")

        // Then the loss is published once it has lasted DownDelaySec, not before
        try waitForStatus(.notReachable)
        let published = ContinuousClock.now - outageStart
        XCTAssertGreaterThanOrEqual(published, downDelay - .milliseconds(50), "not-reachable published after \(published)")

        // When the carrier returns, 3 s after it went
        Thread.sleep(until: outageStart + .seconds(3))  // the outage's length, on purpose
        try netns.ip("link", "set", "ra1", "up")

        // Then it is published at once
        try waitForStatus(.reachableViaEthernet)
        try assertStatusChanges([.reachableViaEthernet, .notReachable, .reachableViaEthernet])

        // And a change that is not a loss, as a fence: no further StatusChanged came before it
        try configureIPv6Default()
        try signals.waitForPropertiesChanged("IPv6Reachable in PropertiesChanged") { received in
            received.contains { $0.changed[ReachabilityProperty.ipv6Reachable.rawValue]?.value == .boolean(true) }
        }
        let statusChanges = try signals.statusChanges
        XCTAssertEqual(statusChanges.count, 3, "exactly two StatusChanged for one outage: \(statusChanges)")
    }
}
