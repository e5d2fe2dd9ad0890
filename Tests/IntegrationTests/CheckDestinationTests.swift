import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `CheckDestination`: `CheckAddress`'s answer with how to get there, on a host with IPv4.
final class CheckDestinationTests: DaemonTestCase {
    func testWithANativeIPv4RouteTheAddressIsReachedDirectlyThroughItsGateway() throws {
        // Given ra0 with 10.77.0.2/24 and IPv4's default route via 10.77.0.1
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForProperties("IPv4 reachable") { $0.bool(.ipv4Reachable) == true }

        // When
        let destination = try busctl.checkDestination("192.0.2.80")

        // Then: the literal itself, over ra0 from 10.77.0.2 via 10.77.0.1
        XCTAssertEqual(destination, [
            "status": "reachable-via-ethernet", "interface": "ra0", "transport": "ethernet", "source": "10.77.0.2", "gateway": "10.77.0.1",
            "via": "direct", "address": "192.0.2.80", "reason": try XCTUnwrap(destination["reason"]),
        ])
        XCTAssertTrue(destination["reason"]?.contains("via 10.77.0.1 on ra0") == true, "\(destination)")
    }

    func testMalformedInputIsAnInvalidAddressError() throws {
        // Given
        try startDaemon()
        // When
        let result = try busctl.run(["call", BusContract.busName, BusContract.objectPath, BusContract.interface, BusContract.checkDestinationMethod, "s", "10.0.0"])
        // Then
        XCTAssertFalse(result.succeeded)
        XCTAssertTrue(result.standardError.contains("10.0.0"), result.standardError)
    }
}
