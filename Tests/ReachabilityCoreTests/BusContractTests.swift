import Foundation
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
            "IPv4Interface", "IPv6Interface", "IPv4Transport", "IPv6Transport",
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

    /// The GIO module is C: its copy of the names (`gio/reachabilityd-contract.h`, one
    /// `#define NAME "value"` per line) must be these, every one of them checked.
    func testThatTheGIOModulesHeaderHasTheContractsStrings() throws {
        // Given
        let expected: [String: String] = [
            "REACHABILITYD_BUS_NAME": BusContract.busName,
            "REACHABILITYD_OBJECT_PATH": BusContract.objectPath,
            "REACHABILITYD_INTERFACE": BusContract.interface,
            "REACHABILITYD_PROPERTY_STATUS": ReachabilityProperty.status.rawValue,
            "REACHABILITYD_PROPERTY_REACHABLE": ReachabilityProperty.reachable.rawValue,
            "REACHABILITYD_PROPERTY_METERED": ReachabilityProperty.metered.rawValue,
            "REACHABILITYD_PROPERTY_CONNECTIVITY": ReachabilityProperty.connectivity.rawValue,
            "REACHABILITYD_METHOD_CHECK_ADDRESS": BusContract.checkAddressMethod,
            "REACHABILITYD_ERROR_INVALID_ADDRESS": BusContract.invalidAddressError,
            "REACHABILITYD_ERROR_BUSY": BusContract.busyError,
            "REACHABILITYD_STATUS_UNKNOWN": ReachabilityStatus.unknown.rawValue,
            "REACHABILITYD_STATUS_NOT_REACHABLE": ReachabilityStatus.notReachable.rawValue,
            "REACHABILITYD_CONNECTIVITY_NONE": Connectivity.none.rawValue,
            "REACHABILITYD_CONNECTIVITY_UNKNOWN": Connectivity.unknown.rawValue,
            "REACHABILITYD_CONNECTIVITY_LIMITED": Connectivity.limited.rawValue,
            "REACHABILITYD_CONNECTIVITY_PORTAL": Connectivity.portal.rawValue,
            "REACHABILITYD_CONNECTIVITY_FULL": Connectivity.full.rawValue,
        ]
        let header = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("gio/reachabilityd-contract.h").path

        // When
        var defined: [String: String] = [:]
        for line in try String(contentsOfFile: header, encoding: .utf8).split(separator: "\n") where line.hasPrefix("#define ") {
            let words = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard words.count == 3, words[2].hasPrefix("\""), words[2].hasSuffix("\"") else { continue }
            defined[words[1]] = String(words[2].dropFirst().dropLast())
        }

        // Then: the same names, the same values; and the module's rule "reachable unless
        // unknown or not-reachable" is the core's
        XCTAssertEqual(defined, expected)
        XCTAssertEqual(ReachabilityStatus.allCases.filter { !$0.isReachable }, [.unknown, .notReachable])
    }
}
