import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// The published status for the basic network configurations, and the signals announcing it.
final class StatusTests: DaemonTestCase {
    func testNoAddressOrRouteIsNotReachable() throws {
        // Given a namespace with only lo up and ra0/ra1 down
        // When the daemon has started
        try startDaemon()

        // Then
        let properties = try busctl.properties()
        XCTAssertEqual(properties.status, ReachabilityStatus.notReachable.rawValue)
        XCTAssertEqual(properties.bool(.reachable), false)
        XCTAssertEqual(properties.bool(.ipv4Reachable), false)
        XCTAssertEqual(properties.bool(.ipv6Reachable), false)
        XCTAssertEqual(properties.string(.interface), "")
        XCTAssertEqual(properties.string(.transport), "")
        XCTAssertEqual(properties.bool(.metered), false)
        XCTAssertEqual(try busctl.property(.status), .string(ReachabilityStatus.notReachable.rawValue))
    }

    func testIPv4DefaultRouteOverEthernetIsReachable() throws {
        // Given
        try startDaemon()
        let before = try busctl.properties()

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let after = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(after.bool(.reachable), true)
        XCTAssertEqual(after.bool(.ipv4Reachable), true)
        XCTAssertEqual(after.string(.interface), "ra0")
        XCTAssertEqual(after.string(.transport), Transport.ethernet.rawValue)
        XCTAssertEqual(after.bool(.metered), false)
        XCTAssertTrue(after.string(.reason)?.contains("ra0") == true, "Reason: \(after.string(.reason) ?? "nil")")
        XCTAssertGreaterThan(after.generation ?? 0, before.generation ?? .max, "Generation must increase")

        try assertStatusChanges([.reachableViaEthernet])
        let changed = Set(ReachabilityProperty.allCases.filter { before[$0] != after[$0] }.map(\.rawValue))
        let announced = try signals.waitForPropertiesChanged("PropertiesChanged naming \(changed.sorted())") { received in
            changed.isSubset(of: received.reduce(into: Set<String>()) { $0.formUnion($1.propertyNames) })
        }
        XCTAssertEqual(Set(announced.map(\.interface)), [BusContract.interface])
        XCTAssertEqual(
            announced.last { $0.changed["Status"] != nil }?.changed["Status"]?.value,
            .string(ReachabilityStatus.reachableViaEthernet.rawValue)
        )

        // A real change as a fence: no other StatusChanged came in between.
        try netns.ip("route", "del", "default")
        try waitForStatus(.notReachable)
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
    }

    func testIPv6OnlyDefaultRouteIsReachable() throws {
        // Given
        try startDaemon()

        // When
        try configureIPv6Default()

        // Then
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.bool(.reachable), true)
        XCTAssertEqual(properties.bool(.ipv6Reachable), true)
        XCTAssertEqual(properties.bool(.ipv4Reachable), false)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertEqual(properties.string(.transport), Transport.ethernet.rawValue)
        try assertStatusChanges([.reachableViaEthernet])
    }

    func testCarrierLossIsNotReachable() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When the peer goes down, ra0 loses carrier (the kernel keeps its routes, flagged linkdown)
        try netns.ip("link", "set", "ra1", "down")

        // Then
        let properties = try waitForStatus(.notReachable)
        XCTAssertEqual(properties.bool(.reachable), false)
        XCTAssertEqual(properties.string(.interface), "")
        XCTAssertEqual(properties.string(.transport), "")

        // When the carrier returns, the kept default route works again
        try netns.ip("link", "set", "ra1", "up")
        try waitForStatus(.reachableViaEthernet)
        try assertStatusChanges([.reachableViaEthernet, .notReachable, .reachableViaEthernet])
    }

    func testLinkDownIsNotReachable() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When
        try netns.ip("link", "set", "ra0", "down")

        // Then
        let properties = try waitForStatus(.notReachable)
        XCTAssertEqual(properties.bool(.reachable), false)
        XCTAssertEqual(properties.bool(.ipv4Reachable), false)
        XCTAssertEqual(properties.string(.interface), "")
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
    }

    func testUnreachableDefaultRouteIsNotReachable() throws {
        // Given an up link with an address and no other default route
        try startDaemon()
        try configureIPv4Link()

        // When
        try netns.ip("route", "add", "unreachable", "default")
        // IPv6 as a fence: once the daemon reports it, it has processed the IPv4 route too.
        try configureIPv6Default()

        // Then
        let properties = try waitForProperties("IPv6Reachable true") { $0.bool(.ipv6Reachable) == true }
        XCTAssertEqual(properties.bool(.ipv4Reachable), false, "an unreachable default route must not count")

        // And without the IPv6 route, nothing is reachable
        try netns.ip("-6", "route", "del", "default")
        let withoutIPv6 = try waitForStatus(.notReachable)
        XCTAssertEqual(withoutIPv6.bool(.ipv4Reachable), false)
        XCTAssertEqual(withoutIPv6.string(.interface), "")
    }

    func testReplacingTheDefaultRouteWithUnreachableIsNotReachable() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When the only default route becomes an unreachable one
        try netns.ip("route", "replace", "unreachable", "default")

        // Then
        let properties = try waitForStatus(.notReachable)
        XCTAssertEqual(properties.bool(.ipv4Reachable), false)
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
    }

    func testFakeWirelessLinkIsReachableViaWiFi() throws {
        // Given a sysfs tree in which ra0 has a wireless directory
        let sysfs = try XCTUnwrap(directory).file("sysfs")
        try FileManager.default.createDirectory(atPath: "\(sysfs)/class/net/ra0/wireless", withIntermediateDirectories: true)
        try startDaemon(sysfsRoot: sysfs)

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.transport), Transport.wifi.rawValue)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertEqual(properties.bool(.metered), false)
        try assertStatusChanges([.reachableViaWiFi])
    }

    func testChangesKeepingTheStatusEmitNoStatusChanged() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        try assertStatusChanges([.reachableViaEthernet])

        // When several changes keep the status reachable-via-ethernet
        try netns.ip("addr", "add", "10.77.0.3/24", "dev", "ra0")
        try netns.ip("link", "set", "ra0", "mtu", "1400")
        try netns.ip("route", "add", "192.0.2.0/24", "via", "10.77.0.1", "dev", "ra0")
        try configureIPv6Default()
        try waitForProperties("IPv6Reachable true") { $0.bool(.ipv6Reachable) == true }
        // and then a real change as a fence: the peer goes down, so ra0 loses carrier
        try netns.ip("link", "set", "ra1", "down")

        // Then only the fence's StatusChanged follows the first one
        try waitForStatus(.notReachable)
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
        XCTAssertTrue(
            try signals.propertiesChanges.contains { $0.propertyNames.contains(ReachabilityProperty.ipv6Reachable.rawValue) },
            "IPv6Reachable changed without a PropertiesChanged signal"
        )
    }

    func testEachFamilysLinkIsPublishedAndAMoveOfIPv6AloneIsOneChange() throws {
        // Given IPv4 and IPv6 by default via ra0, and a second link rb0 with an IPv6 address
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try configureIPv6Default()
        let netns = try netns
        try netns.addQuietVethPair("rb0", peer: "rb1")
        for link in ["rb0", "rb1"] { try netns.setIPv6(enabled: true, on: link) }
        for link in ["rb1", "rb0"] { try netns.ip("link", "set", link, "up") }
        try netns.ip("addr", "add", "2001:db8:78::2/64", "dev", "rb0", "nodad")
        let ready = try waitForProperties("IPv4 and IPv6 via ra0, rb0 up") {
            $0.string(.ipv4Interface) == "ra0" && $0.string(.ipv6Interface) == "ra0" && $0.string(.ipv6Transport) == "ethernet"
        }
        XCTAssertEqual(ready.string(.ipv4Transport), "ethernet")
        // (rb0's links and address may still be listed in Interfaces at the end of their window)
        let before = try settledProperties()
        let announcedBefore = try signals.propertiesChangedCount

        // When IPv6's default moves to rb0, IPv4's staying on ra0
        try netns.ip("-6", "route", "replace", "default", "via", "2001:db8:78::1", "dev", "rb0")

        // Then IPv6Interface says so, and nothing else changed but the gateway moving from ra0's
        // entry of Interfaces to rb0's: one PropertiesChanged, Generation +1
        let after = try waitForProperties("IPv6Interface rb0") { $0.string(.ipv6Interface) == "rb0" }
        XCTAssertEqual(after.string(.interface), "ra0")
        XCTAssertEqual(after.string(.ipv4Interface), "ra0")
        XCTAssertEqual(after.generation, before.generation.map { $0 + 1 }, "\(before) -> \(after)")
        // (a real change as a fence: rb0 loses carrier, so IPv6 is not reachable)
        try netns.ip("link", "set", "rb1", "down")
        try waitForProperties("IPv6Reachable false") { $0.bool(.ipv6Reachable) == false && $0.string(.ipv6Interface) == "" }
        let announced = try signals.waitForPropertiesChanged("the fence's PropertiesChanged") { received in
            received.dropFirst(announcedBefore).contains { $0.propertyNames.contains(ReachabilityProperty.ipv6Reachable.rawValue) }
        }.dropFirst(announcedBefore)
        XCTAssertEqual(announced.first?.propertyNames, ["IPv6Interface", "Interfaces", "Generation"], "\(Array(announced))")
        // (the kernel may announce rb1 down before rb0's carrier loss: an Interfaces change alone)
        XCTAssertEqual(announced.filter { !$0.propertyNames.isSubset(of: ["Interfaces", "Generation"]) }.count, 2, "\(Array(announced))")
        XCTAssertLessThanOrEqual(announced.count, 3, "\(Array(announced))")
    }

    func testConnectivityIsNoneWithoutARouteAndUnknownWithOneWhileNothingIsChecked() throws {
        // Given a daemon with no route (it sends nothing to find out more: no check is configured)
        try startDaemon()
        let none = try waitForStatus(.notReachable)
        XCTAssertEqual(none.string(.connectivity), Connectivity.none.rawValue)
        XCTAssertEqual(none.string(.captivePortal), "")

        // When a default route appears, and goes
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let routed = try waitForStatus(.reachableViaEthernet)
        try netns.ip("route", "del", "default")
        try waitForStatus(.notReachable)

        // Then: unknown (a route, no evidence either way) for IPv4 only, and one signal per change
        XCTAssertEqual(routed.string(.connectivity), Connectivity.unknown.rawValue)
        XCTAssertEqual(routed.string(.ipv4Connectivity), Connectivity.unknown.rawValue)
        XCTAssertEqual(routed.string(.ipv6Connectivity), Connectivity.none.rawValue)
        XCTAssertEqual(try signals.waitForConnectivityChanged(count: 2), [Connectivity.unknown.rawValue, Connectivity.none.rawValue])
    }
}
