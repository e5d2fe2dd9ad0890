import Foundation
@testable import ReachabilityClient
import ReachabilityCore
import TestSupport
import XCTest

/// An address's manager asks `CheckDestination`, and `CheckAddress` of a daemon that predates it.
final class CheckDestinationClientTests: DaemonTestCase {
    func testAnAddressesManagerSaysTheAddressIsReachedDirectly() throws {
        // Given IPv4's default route over ra0
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // When
        let manager = try makeManager(.address("192.0.2.80"))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }

        // Then
        try Poll.until("the manager's answer", observe: { manager.snapshot }) { $0.status == .reachableViaEthernet }
        XCTAssertEqual(manager.destinationPath, .direct)
        XCTAssertEqual(manager.destinationAddress, "192.0.2.80")
    }

    func testWithABusPolicyThatPredatesCheckDestinationTheManagerAsksCheckAddress() throws {
        // Given the bus's policy of an older daemon: no CheckDestination allowed
        try reloadBusPolicyWithoutCheckDestination()
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        XCTAssertThrowsError(try busctl.checkDestination("192.0.2.80"), "the bus must refuse CheckDestination now")

        // When
        let manager = try makeManager(.address("192.0.2.80"))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }

        // Then the answer is CheckAddress's, without the path
        try Poll.until("the manager's answer", observe: { manager.snapshot }) { $0.status == .reachableViaEthernet }
        XCTAssertNil(manager.destinationPath)
        XCTAssertNil(manager.destinationAddress)
    }
}
