import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ReachabilityCore
import ReachabilityProperties
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
            (BusContract.checkConnectivityMethod, "CheckConnectivity", "method"),
            (BusContract.invalidAddressError, "org.reachabilityd.Error.InvalidAddress", "error"),
        ]

        // Then
        for (actual, expected, what) in names {
            XCTAssertEqual(actual, expected, what)
        }
    }

    /// The property table is the XML's properties: the same names, in the same order, with the
    /// same signatures, every one read-only and announced with its value in `PropertiesChanged`
    /// (the vtable registers them so).
    func testThatThePropertyTableIsTheInterfaceFilesProperties() throws {
        // Given
        let xml = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("dbus/org.reachabilityd.Reachability1.xml")
        let document = try XMLDocument(contentsOf: xml, options: [])
        let properties = try document.nodes(forXPath: "/node/interface[@name='\(BusContract.interface)']/property").compactMap { $0 as? XMLElement }

        // When
        let declared = properties.map { element in
            [
                element.attribute(forName: "name")?.stringValue ?? "", element.attribute(forName: "type")?.stringValue ?? "",
                element.attribute(forName: "access")?.stringValue ?? "",
                element.elements(forName: "annotation").first { $0.attribute(forName: "name")?.stringValue == "org.freedesktop.DBus.Property.EmitsChangedSignal" }?
                    .attribute(forName: "value")?.stringValue ?? "",
            ].joined(separator: " ")
        }
        let table = ReachabilityProperty.allCases.map { "\($0.rawValue) \($0.definition.signature) read true" }

        // Then
        XCTAssertFalse(declared.isEmpty)
        XCTAssertEqual(table, declared)
    }

    /// Each JSON key is used once, and only `Generation` stays out of the `--json` records.
    func testThatJSONKeysAreDistinct() {
        // Given, When
        let keys = ReachabilityProperty.allCases.compactMap(\.definition.jsonKey)

        // Then
        XCTAssertEqual(Set(keys).count, keys.count, "\(keys)")
        XCTAssertEqual(ReachabilityProperty.allCases.filter { $0.definition.jsonKey == nil }, [.generation])
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
            "REACHABILITYD_SIGNAL_STATUS_CHANGED": BusContract.statusChangedSignal,
            "REACHABILITYD_METHOD_CHECK_ADDRESS": BusContract.checkAddressMethod,
            "REACHABILITYD_METHOD_CHECK_DESTINATION": BusContract.checkDestinationMethod,
            "REACHABILITYD_DESTINATION_STATUS": DestinationAnswer.statusKey,
            "REACHABILITYD_DESTINATION_VIA": DestinationAnswer.viaKey,
            "REACHABILITYD_VIA_NAT64": DestinationPath.nat64.rawValue,
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

    func testTheSystemBusSocketPathComesFromTheAddress() {
        let rows: [(address: String?, path: String?, line: UInt)] = [
            (nil, "/run/dbus/system_bus_socket", #line),
            ("", "/run/dbus/system_bus_socket", #line),
            ("unix:path=/tmp/bus", "/tmp/bus", #line),
            ("unix:path=/tmp/bus,guid=0123;unix:path=/other", "/tmp/bus", #line),
            ("unix:abstract=/tmp/dbus-x", nil, #line),
            ("tcp:host=localhost,port=1", nil, #line),
        ]
        for row in rows {
            XCTAssertEqual(BusContract.systemBusSocketPath(address: row.address), row.path, line: row.line)
        }
    }
}
