import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `Metered` with `MeteredReason` (the configuration, networkd's lease, the link type),
/// `NetworkID` with each entry's `network-id`, and each entry's `mtu`, as the daemon publishes
/// them for real links in a namespace.
final class MeteredAndNetworkIDTests: DaemonTestCase {
    /// The bytes of `text` in hexadecimal, as networkd saves option 43 (`VENDOR_SPECIFIC=`).
    private static func hex(_ text: String) -> String {
        text.utf8.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Writes `ra0`'s lease as networkd's `dhcp_lease_save` does (a temporary file renamed in place).
    private func writeLease(_ lines: [String]) throws {
        let directory = try XCTUnwrap(directory).file(DaemonProcess.networkdLeaseDirectory)
        let index = try XCTUnwrap(try busctl.properties().interfaces.first { $0.name == "ra0" }?.index)
        let temporary = "\(directory)/.#\(index.rawValue)"
        try ("# This is private data. Do not parse.\n" + lines.joined(separator: "\n") + "\n").write(toFile: temporary, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(temporary, "\(directory)/\(index.rawValue)"), 0)
    }

    func testTheLinkTypeDecidesUnlessALeaseSaysAndroidMeteredAndTheConfigurationWinsOverBoth() throws {
        // Given ra0, Ethernet, carrying the default route
        try startReachableDaemon(configuration: "[Reachability]\n")
        var published = try busctl.properties()
        XCTAssertEqual(published.bool(.metered), false)
        XCTAssertEqual(published.string(.meteredReason), "transport")

        // When networkd's lease of ra0 carries ANDROID_METERED in option 43
        try writeLease(["ADDRESS=10.77.0.2", "ROUTER=10.77.0.1", "VENDOR_SPECIFIC=\(Self.hex("ANDROID_METERED"))"])

        // Then the route is metered, by DHCP, and so is ra0's entry
        published = try waitForProperties("metered by the lease") { $0.string(.meteredReason) == "dhcp" }
        XCTAssertEqual(published.bool(.metered), true)
        XCTAssertEqual(published.interfaces.first { $0.name == "ra0" }?.isMetered, true)

        // When the configuration says ra0 is not metered, and the daemon reloads it
        try writeConfiguration("[Reachability]\nMetered=ra0:no\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the configuration wins
        published = try waitForProperties("unmetered by the configuration") { $0.string(.meteredReason) == "configuration" }
        XCTAssertEqual(published.bool(.metered), false)

        // When the configuration says nothing again and the next lease has no ANDROID_METERED
        try writeConfiguration("[Reachability]\n")
        try XCTUnwrap(daemon).send(SIGHUP)
        try writeLease(["ADDRESS=10.77.0.2", "ROUTER=10.77.0.1", "VENDOR_SPECIFIC=\(Self.hex("MSFT 5.0"))"])

        // Then the link type decides again
        published = try waitForProperties("the link type again") { $0.string(.meteredReason) == "transport" }
        XCTAssertEqual(published.bool(.metered), false)
    }

    func testARealDHCPServerSendingAndroidMeteredToNetworkdMetersTheLink() throws {
        // Given a router namespace holding ra1 whose dnsmasq sends option 43 "ANDROID_METERED"
        // to every client, as Android's hotspots do (forced: networkd does not ask for option 43)
        guard FileManager.default.isExecutableFile(atPath: NetworkdInNamespace.binary) else {
            throw XCTSkip("\(NetworkdInNamespace.binary) is not installed")
        }
        let directory = try XCTUnwrap(directory)
        let router = try TestNamespace(withVethPair: false)
        defer { router.delete() }
        try netns.ip("link", "set", "ra1", "netns", router.name)
        _ = try router.ip("addr", "add", "10.77.0.1/24", "dev", "ra1")
        _ = try router.ip("link", "set", "ra1", "up")
        let dnsmasqLog = directory.file("dnsmasq-dhcp.log")
        let dnsmasq = try ChildProcess("ip", [
            "netns", "exec", router.name, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--port=0",
            "--interface=ra1", "--bind-interfaces", "--dhcp-range=10.77.0.50,10.77.0.60,1h", "--dhcp-option=3,10.77.0.1",
            "--dhcp-option-force=43,ANDROID_METERED", "--dhcp-leasefile=\(directory.file("dnsmasq.leases"))", "--log-dhcp",
        ], standardOutput: dnsmasqLog, standardError: dnsmasqLog)
        defer { _ = dnsmasq.terminate() }
        // and the daemon reading the leases of systemd-networkd, the DHCP client of ra0
        let networkd = try NetworkdInNamespace(
            namespace: try netns, bus: try XCTUnwrap(bus), directory: directory, network: "[Match]\nName=ra0\n[Network]\nDHCP=ipv4\n"
        )
        defer { networkd.stop() }
        try startDaemon(arguments: ["--networkd-leases", networkd.leaseDirectory])

        // When networkd takes the lease (and routes through its router)
        let published = try waitForProperties("metered by DHCP", timeout: .seconds(60)) { $0.string(.meteredReason) == "dhcp" }

        // Then the route is metered, by DHCP, as NetworkManager would say of the same network
        XCTAssertEqual(published.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertEqual(published.bool(.metered), true)
        XCTAssertEqual(published.interfaces.first { $0.name == "ra0" }?.isMetered, true)
        let lease = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: networkd.leaseDirectory).first { Int($0) != nil })
        let saved = try String(contentsOfFile: "\(networkd.leaseDirectory)/\(lease)", encoding: .utf8)
        XCTAssertTrue(saved.contains("VENDOR_SPECIFIC=\(Self.hex("ANDROID_METERED"))"), saved)
        // and Explain() says why of the link
        let report = try busctl.explain()
        XCTAssertTrue(report.split(separator: "\n").contains { $0.hasPrefix("  ra0 ") && $0.contains("; metered (dhcp)") }, report)
    }

    func testNetworkManagersMeteredWinsOverTheLeaseWhereItManagesTheLink() throws {
        // Given ra0 carrying the default route with a lease that says ANDROID_METERED, and
        // NetworkManager managing ra0 without knowing whether it is metered (NM_METERED_UNKNOWN)
        try startReachableDaemon(configuration: "[Reachability]\n")
        try writeLease(["ADDRESS=10.77.0.2", "VENDOR_SPECIFIC=\(Self.hex("ANDROID_METERED"))"])
        try waitForProperties("metered by the lease") { $0.string(.meteredReason) == "dhcp" }
        let networkManager = try StandInNetworkManager(bus: try XCTUnwrap(bus), directory: try XCTUnwrap(directory), devices: ["ra0": 0])
        defer { networkManager.stop() }

        // When NetworkManager guesses ra0 unmetered (NM_METERED_GUESS_NO)
        try networkManager.setMetered(4, of: "ra0")

        // Then NetworkManager's word wins over the lease
        var published = try waitForProperties("unmetered by NetworkManager") { $0.string(.meteredReason) == "networkmanager" }
        XCTAssertEqual(published.bool(.metered), false)

        // When its connection is set metered (NM_METERED_YES)
        try networkManager.setMetered(1, of: "ra0")

        // Then
        published = try waitForProperties("metered by NetworkManager") { $0.bool(.metered) == true }
        XCTAssertEqual(published.string(.meteredReason), "networkmanager")
    }

    func testWithoutARouteMeteredReasonAndNetworkIDAreEmpty() throws {
        // Given ra0 up without a default route
        try startDaemon()
        try configureIPv4Link()

        // Then
        let published = try waitForStatus(.notReachable)
        XCTAssertEqual(published.string(.meteredReason), "")
        XCTAssertEqual(published.string(.networkID), "")
    }

    func testTheSameGatewayMACGivesTheSameNetworkIDAcrossRestartsAndAnotherMACAnother() throws {
        // Given the gateway 10.77.0.1 resolved to one MAC, and the default route through it
        try configureIPv4Link()
        try netns.ip("neigh", "replace", "10.77.0.1", "lladdr", "02:00:5e:77:00:01", "dev", "ra0", "nud", "permanent")
        try addIPv4DefaultRoute()
        try startDaemon()

        // Then NetworkID is an opaque id of 32 hex digits, and ra0's entry has the same
        let first = try waitForProperties("a NetworkID") { !($0.string(.networkID) ?? "").isEmpty }
        let id = try XCTUnwrap(first.string(.networkID))
        XCTAssertEqual(id.count, 32, id)
        XCTAssertTrue(id.allSatisfy(\.isHexDigit), id)
        XCTAssertEqual(first.interfaces.first { $0.name == "ra0" }?.networkID, id)
        XCTAssertEqual(first.interfaces.first { $0.name == "ra1" }?.networkID, "", "no route through ra1")

        // When the daemon restarts on the same network
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        try startDaemon()

        // Then the same id
        try waitForProperties("the same NetworkID after a restart") { $0.string(.networkID) == id }

        // When the gateway's address is answered by another router (another MAC)
        try netns.ip("neigh", "replace", "10.77.0.1", "lladdr", "02:00:5e:77:00:02", "dev", "ra0", "nud", "permanent")

        // Then another id
        let other = try waitForProperties("another NetworkID") { ($0.string(.networkID) ?? "") != id && !($0.string(.networkID) ?? "").isEmpty }
        XCTAssertEqual(other.interfaces.first { $0.name == "ra0" }?.networkID, other.string(.networkID))

        // When the route goes
        try netns.ip("route", "del", "default")

        // Then ""
        let gone = try waitForStatus(.notReachable)
        XCTAssertEqual(gone.string(.networkID), "")
        XCTAssertEqual(gone.interfaces.first { $0.name == "ra0" }?.networkID, "")
    }

    func testAnEntrysMTUFollowsIpLinkSetMTU() throws {
        // Given ra0 with the veth default MTU
        try startDaemon()
        try configureIPv4Link()
        try waitForProperties("ra0 at 1500") { $0.interfaces.first { $0.name == "ra0" }?.mtu == 1500 }

        // When
        try netns.ip("link", "set", "ra0", "mtu", "1400")

        // Then
        try waitForProperties("ra0 at 1400") { $0.interfaces.first { $0.name == "ra0" }?.mtu == 1400 }
    }
}
