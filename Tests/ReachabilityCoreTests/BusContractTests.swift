import ReachabilityCore
import XCTest

/// The D-Bus names of API v1, exactly as `dbus/org.reachabilityd.Reachability1.xml` spells them.
final class BusContractTests: XCTestCase {
    func testThatBusNamesAreTheContract() {
        // Given, When
        let names: [(String, String, String)] = [
            (BusContract.busName, "org.reachabilityd.Reachability1", "bus name"),
            (BusContract.objectPath, "/org/reachabilityd/Reachability1", "object path"),
            (BusContract.interface, "org.reachabilityd.Reachability1", "interface"),
            (BusContract.statusChangedSignal, "StatusChanged", "signal"),
            (BusContract.checkAddressMethod, "CheckAddress", "method"),
            (BusContract.invalidAddressError, "org.reachabilityd.Error.InvalidAddress", "error"),
        ]

        // Then
        for (actual, expected, what) in names {
            XCTAssertEqual(actual, expected, what)
        }
    }

    func testThatPropertyRawValuesAreTheDBusNamesInOrder() {
        // Given
        let expected = [
            "Status", "Reachable", "IPv4Reachable", "IPv6Reachable", "Interface", "Transport", "Metered", "Reason", "Generation",
            "Connectivity", "IPv4Connectivity", "IPv6Connectivity", "CaptivePortal",
        ]

        // When
        let names = ReachabilityProperty.allCases.map(\.rawValue)

        // Then
        XCTAssertEqual(names, expected)
    }

    func testThatPropertiesRoundTripThroughTheirDBusNames() {
        for property in ReachabilityProperty.allCases {
            // Given, When
            let decoded = ReachabilityProperty(rawValue: property.rawValue)

            // Then
            XCTAssertEqual(decoded, property, property.rawValue)
        }
        XCTAssertNil(ReachabilityProperty(rawValue: "status"))
    }
}
