import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The sysfs and naming evidence of the classification, one row each: what a link carrying the
/// default route is reported as when sysfs (a fake tree) or its name says what it is.
final class SysfsClassificationTests: DaemonTestCase {
    func testDevtypeWlanIsWiFi() throws {
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.setDeviceType("wlan", of: "ra0")
        try assertDefaultRouteOnRa0(sysfs: sysfs, gives: .reachableViaWiFi, transport: .wifi, metered: false, reasonMentions: "DEVTYPE=wlan")
    }

    func testDevtypeWwanIsWWANAndMetered() throws {
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.setDeviceType("wwan", of: "ra0")
        try assertDefaultRouteOnRa0(sysfs: sysfs, gives: .reachableViaWWAN, transport: .wwan, metered: true, reasonMentions: "DEVTYPE=wwan")
    }

    func testWWANDriverIsWWAN() throws {
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.setDriver("qmi_wwan", of: "ra0")
        try assertDefaultRouteOnRa0(sysfs: sysfs, gives: .reachableViaWWAN, transport: .wwan, metered: true, reasonMentions: "qmi_wwan")
    }

    func testDevtypeGadgetIsOther() throws {
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.setDeviceType("gadget", of: "ra0")
        try assertDefaultRouteOnRa0(sysfs: sysfs, gives: .reachableViaOther, transport: .other, metered: false, reasonMentions: "gadget")
    }

    func testWirelessDirectoryWinsOverAnEthernetDriver() throws {
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.setDriver("e1000e", of: "ra0")
        try sysfs.markWireless("ra0")
        try assertDefaultRouteOnRa0(sysfs: sysfs, gives: .reachableViaWiFi, transport: .wifi, metered: false, reasonMentions: "wireless")
    }

    func testVethWithRealSysfsIsEthernet() throws {
        // `ip netns exec` mounts the namespace's own sysfs, so the daemon reads ra0's real
        // attributes: a veth, ARPHRD_ETHER
        try assertDefaultRouteOnRa0(sysfs: nil, gives: .reachableViaEthernet, transport: .ethernet, metered: false, reasonMentions: "ARPHRD_ETHER")
    }

    func testWWANInterfaceNameIsWWAN() throws {
        // Given a veth named like a modem, with no sysfs evidence
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try netns.addQuietVethPair("wwan0", peer: "wwan0p")
        try startDaemon(sysfsRoot: sysfs.root)

        // When
        try netns.ip("addr", "add", "10.79.0.2/24", "dev", "wwan0")
        try netns.ip("link", "set", "wwan0p", "up")
        try netns.ip("link", "set", "wwan0", "up")
        try netns.ip("route", "add", "default", "via", "10.79.0.1", "dev", "wwan0")

        // Then
        let properties = try waitForStatus(.reachableViaWWAN)
        XCTAssertEqual(properties.string(.interface), "wwan0")
        XCTAssertEqual(properties.string(.transport), Transport.wwan.rawValue)
        XCTAssertEqual(properties.bool(.metered), true)
    }

    func testRenamedLinkIsClassifiedUnderItsNewName() throws {
        // Given a fake tree in which only the name wl0 is WiFi
        let sysfs = try FakeSysfs(in: try XCTUnwrap(directory))
        try sysfs.markWireless("wl0")
        try startDaemon(sysfsRoot: sysfs.root)
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When ra0 is renamed wl0 (a rename needs the link down, which takes its routes)
        try netns.ip("link", "set", "ra0", "down")
        try netns.ip("link", "set", "ra0", "name", "wl0")
        try netns.ip("link", "set", "wl0", "up")
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "wl0")

        // Then
        let properties = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(properties.string(.interface), "wl0")
        try assertStatusChanges([.reachableViaEthernet, .notReachable, .reachableViaWiFi])
    }

    // MARK: Helpers

    /// Starts the daemon on `sysfs`, gives ra0 the default route, and checks what is published.
    private func assertDefaultRouteOnRa0(
        sysfs: FakeSysfs?,
        gives status: ReachabilityStatus,
        transport: Transport,
        metered: Bool,
        reasonMentions evidence: String,
        file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        // Given
        try startDaemon(sysfsRoot: sysfs?.root)

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let properties = try waitForStatus(status)
        XCTAssertEqual(properties.string(.interface), "ra0", file: file, line: line)
        XCTAssertEqual(properties.string(.transport), transport.rawValue, file: file, line: line)
        XCTAssertEqual(properties.bool(.metered), metered, file: file, line: line)
        try assertStatusChanges([status], file: file, line: line)
        // Explain gives the evidence
        let report = try busctl.explain()
        let ra0 = report.split(separator: "\n").first { $0.hasPrefix("  ra0 (index ") } ?? ""
        XCTAssertTrue(ra0.contains("transport \(transport.rawValue)") && ra0.contains(evidence), "Explain's line for ra0: \(ra0)", file: file, line: line)
    }
}
