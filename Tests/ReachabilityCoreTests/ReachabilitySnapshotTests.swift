import ReachabilityBus
import ReachabilityCore
import ReachabilityProperties
import XCTest

/// The published snapshot: property values and what changed between two snapshots.
final class ReachabilitySnapshotTests: XCTestCase {
    static let ethernet = ReachabilitySnapshot(
        status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: false,
        interface: "eth0", transport: .ethernet, isMetered: false,
        reason: "default route via 10.0.0.1 on eth0"
    )
    static let wwan = ReachabilitySnapshot(
        status: .reachableViaWWAN, isIPv4Reachable: true, isIPv6Reachable: true,
        interface: "wwan0", transport: .wwan, isMetered: true,
        reason: "default route via 10.0.0.1 on wwan0"
    )
    static let noRoute = ReachabilitySnapshot(
        status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
        interface: "", transport: nil, isMetered: false,
        reason: "no default route"
    )

    /// One row of the table: two snapshots and the properties that changed between them.
    struct Row {
        var name: String
        var previous: ReachabilitySnapshot
        var current: ReachabilitySnapshot
        var changed: [ReachabilityProperty]
        var line: UInt

        init(
            _ name: String, from previous: ReachabilitySnapshot, to current: ReachabilitySnapshot,
            _ changed: [ReachabilityProperty], line: UInt = #line
        ) {
            self.name = name
            self.previous = previous
            self.current = current
            self.changed = changed
            self.line = line
        }
    }

    static let rows: [Row] = {
        var ethernetOtherGateway = ethernet
        ethernetOtherGateway.reason = "default route via 10.0.0.254 on eth0"
        var ethernetDualStack = ethernet
        ethernetDualStack.isIPv6Reachable = true
        ethernetDualStack.ipv6Interface = "eth0"
        ethernetDualStack.ipv6Transport = .ethernet
        var ipv6OverWiFi = ethernetDualStack
        ipv6OverWiFi.ipv6Interface = "wlan0"
        ipv6OverWiFi.ipv6Transport = .wifi
        var ethernetOverOther = ethernet
        ethernetOverOther.transport = .other
        ethernetOverOther.ipv4Transport = .other
        var unknownWithOtherReason = ReachabilitySnapshot.unknown
        unknownWithOtherReason.reason = "daemon not running"
        return [
            Row("no change", from: ethernet, to: ethernet, []),
            Row("no change from unknown", from: .unknown, to: .unknown, []),
            Row("only the reason", from: ethernet, to: ethernetOtherGateway, [.reason]),
            Row("only the reason, while unknown", from: .unknown, to: unknownWithOtherReason, [.reason]),
            Row("IPv6 comes up too", from: ethernet, to: ethernetDualStack, [.ipv6Reachable, .ipv6Connectivity, .ipv6Interface, .ipv6Transport]),
            Row("only IPv6 moves to another link", from: ethernetDualStack, to: ipv6OverWiFi, [.ipv6Interface, .ipv6Transport]),
            Row("transport reclassified", from: ethernet, to: ethernetOverOther, [.transport, .ipv4Transport]),
            Row(
                "unknown to reachable",
                from: .unknown, to: ethernet,
                [.status, .reachable, .ipv4Reachable, .interface, .transport, .reason, .ipv6Connectivity, .ipv4Interface, .ipv4Transport]
            ),
            Row("unknown to not reachable", from: .unknown, to: noRoute, [.status, .reason, .connectivity, .ipv4Connectivity, .ipv6Connectivity]),
            Row(
                "reachable to not reachable",
                from: ethernet, to: noRoute,
                [.status, .reachable, .ipv4Reachable, .interface, .transport, .reason, .connectivity, .ipv4Connectivity, .ipv4Interface, .ipv4Transport]
            ),
            Row(
                "Ethernet to WWAN",
                from: ethernet, to: wwan,
                [.status, .ipv6Reachable, .interface, .transport, .metered, .reason, .ipv6Connectivity,
                 .ipv4Interface, .ipv6Interface, .ipv4Transport, .ipv6Transport]
            ),
            Row(
                "unknown to everything different",
                from: .unknown, to: wwan,
                [.status, .reachable, .ipv4Reachable, .ipv6Reachable, .interface, .transport, .metered, .reason,
                 .ipv4Interface, .ipv6Interface, .ipv4Transport, .ipv6Transport]
            ),
        ]
    }()

    func testThatChangedPropertiesListsWhatDiffersInDeclarationOrder() {
        for row in Self.rows {
            // Given
            let previous = row.previous
            let current = row.current

            // When
            let changed = current.changedProperties(since: previous)

            // Then
            XCTAssertEqual(changed, row.changed, row.name, line: row.line)
        }
    }

    func testThatChangedPropertiesNeverIncludesGeneration() {
        // Given
        let snapshots = [ReachabilitySnapshot.unknown, Self.ethernet, Self.wwan, Self.noRoute]

        for previous in snapshots {
            for current in snapshots {
                // When
                let changed = current.changedProperties(since: previous)

                // Then
                XCTAssertFalse(changed.contains(.generation), "\(previous.status) -> \(current.status)")
                XCTAssertEqual(changed.isEmpty, previous == current, "\(previous.status) -> \(current.status)")
            }
        }
    }

    func testThatValueOfEachPropertyHasTheInterfaceType() {
        // Given
        let snapshot = Self.wwan
        let expected: [ReachabilityProperty: BusValue] = [
            .status: .string("reachable-via-wwan"),
            .reachable: .boolean(true),
            .ipv4Reachable: .boolean(true),
            .ipv6Reachable: .boolean(true),
            .interface: .string("wwan0"),
            .transport: .string("wwan"),
            .metered: .boolean(true),
            .reason: .string("default route via 10.0.0.1 on wwan0"),
            .generation: .unsignedInteger(42),
            .connectivity: .string("unknown"),
            .ipv4Connectivity: .string("unknown"),
            .ipv6Connectivity: .string("unknown"),
            .captivePortal: .string(""),
            .ipv4Interface: .string("wwan0"),
            .ipv6Interface: .string("wwan0"),
            .ipv4Transport: .string("wwan"),
            .ipv6Transport: .string("wwan"),
            .interfaces: .dictionaries([]),
            .dns: .string("unknown"),
            .nat64Prefix: .string(""),
            .ipv4Access: .string("none"),
            .meteredReason: .string(""),
            .networkID: .string(""),
            .captivePortalSession: .dictionary([:]),
        ]

        for property in ReachabilityProperty.allCases {
            // When
            let value = snapshot.value(of: property, generation: 42)

            // Then: the value, of the signature the property table declares (the vtable's)
            XCTAssertEqual(value, expected[property], property.rawValue)
            XCTAssertEqual(value.signature, property.definition.signature, property.rawValue)
        }
    }

    func testThatValueOfNotReachableSnapshotIsEmptyStringsAndFalse() {
        // Given
        let snapshot = Self.noRoute
        let expected: [ReachabilityProperty: BusValue] = [
            .status: .string("not-reachable"),
            .reachable: .boolean(false),
            .ipv4Reachable: .boolean(false),
            .ipv6Reachable: .boolean(false),
            .interface: .string(""),
            .transport: .string(""),
            .metered: .boolean(false),
            .reason: .string("no default route"),
            .generation: .unsignedInteger(UInt64.max),
            .connectivity: .string("none"),
            .ipv4Connectivity: .string("none"),
            .ipv6Connectivity: .string("none"),
            .captivePortal: .string(""),
            .ipv4Interface: .string(""),
            .ipv6Interface: .string(""),
            .ipv4Transport: .string(""),
            .ipv6Transport: .string(""),
            .interfaces: .dictionaries([]),
            .dns: .string("unknown"),
            .nat64Prefix: .string(""),
            .ipv4Access: .string("none"),
            .meteredReason: .string(""),
            .networkID: .string(""),
            .captivePortalSession: .dictionary([:]),
        ]

        for property in ReachabilityProperty.allCases {
            // When
            let value = snapshot.value(of: property, generation: UInt64.max)

            // Then
            XCTAssertEqual(value, expected[property], property.rawValue)
        }
    }

    func testThatUnknownSnapshotIsUnevaluatedAndNotReachable() {
        // Given, When
        let snapshot = ReachabilitySnapshot.unknown

        // Then
        XCTAssertEqual(snapshot.status, .unknown)
        XCTAssertFalse(snapshot.isReachable)
        XCTAssertFalse(snapshot.isIPv4Reachable)
        XCTAssertFalse(snapshot.isIPv6Reachable)
        XCTAssertEqual(snapshot.interface, "")
        XCTAssertNil(snapshot.transport)
        XCTAssertFalse(snapshot.isMetered)
        XCTAssertEqual(snapshot.reason, "not evaluated yet")
    }

    func testThatConnectivityIsNoneWithoutARouteAndTheBetterFamilysWithOne() {
        func snapshot(_ status: ReachabilityStatus, ipv4: Bool, ipv6: Bool, _ ipv4Evidence: Connectivity? = nil, _ ipv6Evidence: Connectivity? = nil) -> ReachabilitySnapshot {
            ReachabilitySnapshot(status: status, isIPv4Reachable: ipv4, isIPv6Reachable: ipv6, interface: "", transport: nil, isMetered: false, reason: "",
                                 ipv4Evidence: ipv4Evidence, ipv6Evidence: ipv6Evidence)
        }
        let rows: [(name: String, snapshot: ReachabilitySnapshot, ipv4: Connectivity, ipv6: Connectivity, best: Connectivity, line: UInt)] = [
            ("not evaluated", .unknown, .unknown, .unknown, .unknown, #line),
            ("no route", snapshot(.notReachable, ipv4: false, ipv6: false), .none, .none, .none, #line),
            ("a route, no evidence", snapshot(.reachableViaEthernet, ipv4: true, ipv6: false), .unknown, .none, .unknown, #line),
            ("evidence without a route is ignored", snapshot(.notReachable, ipv4: false, ipv6: false, .full), .none, .none, .none, #line),
            ("limited IPv4, full IPv6", snapshot(.reachableViaWiFi, ipv4: true, ipv6: true, .limited, .full), .limited, .full, .full, #line),
            ("portal beats limited", snapshot(.reachableViaWiFi, ipv4: true, ipv6: true, .portal, .limited), .portal, .limited, .portal, #line),
            ("limited beats unknown", snapshot(.reachableViaWiFi, ipv4: true, ipv6: true, .limited, nil), .limited, .unknown, .limited, #line),
        ]
        for row in rows {
            XCTAssertEqual(row.snapshot.ipv4Connectivity, row.ipv4, row.name, line: row.line)
            XCTAssertEqual(row.snapshot.ipv6Connectivity, row.ipv6, row.name, line: row.line)
            XCTAssertEqual(row.snapshot.connectivity, row.best, row.name, line: row.line)
        }
    }
}
