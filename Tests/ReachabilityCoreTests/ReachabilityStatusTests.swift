import ReachabilityCore
import XCTest

/// The status wire strings and the transport names, shared by daemon, client library and CLI.
final class ReachabilityStatusTests: XCTestCase {
    static let wireStrings: [(ReachabilityStatus, String)] = [
        (.unknown, "unknown"),
        (.notReachable, "not-reachable"),
        (.reachableViaWWAN, "reachable-via-wwan"),
        (.reachableViaWiFi, "reachable-via-wifi"),
        (.reachableViaEthernet, "reachable-via-ethernet"),
        (.reachableViaOther, "reachable-via-other"),
    ]

    func testThatStatusRawValuesAreTheWireStrings() {
        // Given
        let expected = Self.wireStrings

        // When
        let actual = ReachabilityStatus.allCases.map { ($0, $0.rawValue) }

        // Then
        XCTAssertEqual(actual.map(\.0), expected.map(\.0))
        XCTAssertEqual(actual.map(\.1), expected.map(\.1))
    }

    func testThatStatusRoundTripsThroughItsWireString() {
        for (status, wire) in Self.wireStrings {
            // Given, When
            let decoded = ReachabilityStatus(rawValue: wire)

            // Then
            XCTAssertEqual(decoded, status, wire)
            XCTAssertEqual(ReachabilityStatus(rawValue: status.rawValue), status, wire)
        }
    }

    func testThatUnknownWireStringsDoNotDecode() {
        for wire in ["", "reachable", "notReachable", "Reachable-Via-WiFi", "reachable-via-vpn", " unknown"] {
            // Given, When
            let decoded = ReachabilityStatus(rawValue: wire)

            // Then
            XCTAssertNil(decoded, wire)
        }
    }

    func testThatOnlyReachableViaStatusesAreReachable() {
        // Given
        let expected: [ReachabilityStatus: Bool] = [
            .unknown: false,
            .notReachable: false,
            .reachableViaWWAN: true,
            .reachableViaWiFi: true,
            .reachableViaEthernet: true,
            .reachableViaOther: true,
        ]

        for status in ReachabilityStatus.allCases {
            // When
            let isReachable = status.isReachable

            // Then
            XCTAssertEqual(isReachable, expected[status], status.rawValue)
        }
    }

    func testThatReachableStatusFollowsTheTransport() {
        // Given
        let expected: [(Transport, ReachabilityStatus)] = [
            (.wifi, .reachableViaWiFi),
            (.wwan, .reachableViaWWAN),
            (.ethernet, .reachableViaEthernet),
            (.vpn, .reachableViaOther),
            (.other, .reachableViaOther),
        ]

        for (transport, status) in expected {
            // When
            let actual = ReachabilityStatus(reachableVia: transport)

            // Then
            XCTAssertEqual(actual, status, transport.rawValue)
        }
    }

    func testThatTransportRawValuesAreTheWireStrings() {
        // Given, When
        let wire = Transport.allCases.map(\.rawValue)

        // Then
        XCTAssertEqual(wire, ["wifi", "wwan", "ethernet", "vpn", "other"])
    }

    func testThatOnlyWWANIsMeteredByDefault() {
        for transport in Transport.allCases {
            // Given, When
            let isMetered = transport.isMeteredByDefault

            // Then
            XCTAssertEqual(isMetered, transport == .wwan, transport.rawValue)
        }
    }

    func testThatAddressFamilyDisplayNamesAreForSentences() {
        // Given, When
        let names = AddressFamily.allCases.map(\.displayName)

        // Then
        XCTAssertEqual(names, ["IPv4", "IPv6"])
    }
}
