import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The configuration file (`--config PATH`, drop-ins in `PATH.d/*.conf`), SIGHUP reloads and
/// broken lines.
final class ConfigurationTests: DaemonTestCase {
    func testIgnoreInterfacesMakesTheLinkNotReachable() throws {
        // Given
        try startDaemon(configuration: "[Reachability]\nIgnoreInterfaces=ra0\n")

        // When ra0 carries the default route
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let properties = try waitForProperties("Reason saying ra0 is ignored") {
            $0.string(.reason)?.contains("on ra0, which is ignored") == true
        }
        XCTAssertEqual(properties.status, ReachabilityStatus.notReachable.rawValue)
        XCTAssertEqual(properties.string(.interface), "")
        XCTAssertTrue(properties.string(.reason)?.contains("IgnoreInterfaces=ra0") == true, "Reason: \(properties.string(.reason) ?? "nil")")
        XCTAssertEqual(try signals.statusChanges, [], "the status never left not-reachable")
    }

    func testTransportMakesAContainerBridgeCountAndIgnoreInterfacesStillWins() throws {
        // Given docker0, a container bridge by its ports and by its name, named by Transport=;
        // and br-x, named by both Transport= and IgnoreInterfaces=
        try startDaemon(configuration: "[Reachability]\nTransport=docker0:ethernet br-x:ethernet\nIgnoreInterfaces=br-x\n")
        try addBridgeWithContainerVeth("docker0")

        // When docker0 carries the default route
        try netns.ip("addr", "add", "172.17.0.1/16", "dev", "docker0")
        try netns.ip("route", "add", "default", "via", "172.17.0.254", "dev", "docker0")

        // Then the configuration overrides the evidence
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.interface), "docker0")

        // When br-x takes the default route
        try addBridge("br-x", port: "ra0", peer: "ra1")
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "br-x")
        try netns.ip("route", "replace", "default", "via", "10.77.0.1", "dev", "br-x")

        // Then IgnoreInterfaces= wins
        let ignored = try waitForProperties("Reason saying br-x is ignored") { $0.string(.reason)?.contains("IgnoreInterfaces=br-x") == true }
        XCTAssertEqual(ignored.status, ReachabilityStatus.notReachable.rawValue)
    }

    func testAnEmptyContainerInterfacesCountsLinksNamedLikeContainers() throws {
        // Given the built-in name list cleared
        try startDaemon(configuration: "[Reachability]\nContainerInterfaces=\n")
        try netns.ip("link", "set", "ra0", "name", "veth0")
        try netns.ip("link", "set", "ra1", "name", "veth1")

        // When veth0 (a container's end by the built-in list) carries the default route
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "veth0")
        for link in ["veth1", "veth0"] { try netns.ip("link", "set", link, "up") }
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "veth0")

        // Then it counts
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.interface), "veth0")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "ContainerInterfaces=" }, "Explain shows the setting:\n\(explain)")
    }

    func testTransportOverrideMakesTheLinkWWANAndMetered() throws {
        // Given
        try startDaemon(configuration: "[Reachability]\nTransport=ra0:wwan\n")

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let properties = try waitForStatus(.reachableViaWWAN)
        XCTAssertEqual(properties.string(.interface), "ra0")
        XCTAssertEqual(properties.string(.transport), Transport.wwan.rawValue)
        XCTAssertEqual(properties.bool(.metered), true, "WWAN is metered by default")
        try assertStatusChanges([.reachableViaWWAN])
    }

    func testMeteredByTransport() throws {
        // Given
        try startDaemon(configuration: "[Reachability]\nMetered=ethernet:yes\n")

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.bool(.metered), true)
    }

    func testDropInOverridesTheMainFile() throws {
        // Given the main file makes ra0 WWAN and a drop-in makes it unmetered
        let path = try configurationPath
        try FileManager.default.createDirectory(atPath: path + ".d", withIntermediateDirectories: true)
        try "[Reachability]\nMetered=ra0:no\n".write(toFile: path + ".d/50-unmetered.conf", atomically: true, encoding: .utf8)
        try "[Reachability]\nMetered=ra0:yes\n".write(toFile: path + ".d/10-metered.conf", atomically: true, encoding: .utf8)
        try "[Reachability]\nMetered=ra0:yes\n".write(toFile: path + ".d/90-not-a-conf-file.txt", atomically: true, encoding: .utf8)
        try startDaemon(configuration: "[Reachability]\nTransport=ra0:wwan\n")

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then the later drop-in wins, and files not ending in .conf are not read
        let properties = try waitForStatus(.reachableViaWWAN)
        XCTAssertEqual(properties.bool(.metered), false)
    }

    func testSIGHUPReloadsTheEditedFile() throws {
        // Given
        try startDaemon(configuration: "[Reachability]\nTransport=ra0:wwan\n")
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaWWAN)

        // When the file is edited and the daemon told
        try writeConfiguration("[Reachability]\nTransport=ra0:wifi\n")
        try reload()

        // Then
        let wifi = try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(wifi.string(.transport), Transport.wifi.rawValue)
        XCTAssertEqual(wifi.bool(.metered), false)

        // When the setting is removed again
        try writeConfiguration("[Reachability]\n# nothing\n")
        try reload()

        // Then the classification is the built-in one
        try waitForStatus(.reachableViaEthernet)
        try assertStatusChanges([.reachableViaWWAN, .reachableViaWiFi, .reachableViaEthernet])
    }

    func testBrokenLineOnReloadKeepsThePreviousConfiguration() throws {
        // Given
        try startDaemon(configuration: "[Reachability]\nTransport=ra0:wwan\n")
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaWWAN)

        // When the edited file has a valid line and a broken one (line 3)
        try writeConfiguration("[Reachability]\nIgnoreInterfaces=ra0\nTransport=ra0:satellite\n")
        try reload()

        // Then the daemon names file and line, keeps running, and applies none of the file
        let log = try waitForLog(containing: "Keeping the previous configuration")
        let path = try configurationPath
        XCTAssertTrue(log.contains("<3>\(path):3: "), "no `<3>\(path):3: …` line in the log:\n\(log)")
        XCTAssertFalse(log.contains("<3>\(path):2:"), "line 2 is valid:\n\(log)")
        XCTAssertNil(try XCTUnwrap(daemon).termination, "the daemon must survive a broken configuration")
        let kept = try busctl.properties()
        XCTAssertEqual(kept.status, ReachabilityStatus.reachableViaWWAN.rawValue)
        XCTAssertEqual(kept.string(.interface), "ra0")

        // And a fixed file is applied on the next reload
        try writeConfiguration("[Reachability]\nTransport=ra0:wifi\n")
        try reload()
        try waitForStatus(.reachableViaWiFi)
        XCTAssertEqual(
            try signals.waitForStatusChanged(count: 2),
            [ReachabilityStatus.reachableViaWWAN.rawValue, ReachabilityStatus.reachableViaWiFi.rawValue],
            "the broken file's IgnoreInterfaces=ra0 must not have been applied"
        )
    }

    func testBrokenDropInAtStartUpUsesTheBuiltInDefaults() throws {
        // Given a valid main file and a drop-in with a broken line 2
        let path = try configurationPath
        try FileManager.default.createDirectory(atPath: path + ".d", withIntermediateDirectories: true)
        let dropIn = path + ".d/20-broken.conf"
        try "[Reachability]\nDownDelaySec=soon\n".write(toFile: dropIn, atomically: true, encoding: .utf8)

        // When the daemon starts
        try startDaemon(configuration: "[Reachability]\nTransport=ra0:wwan\n")
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then it logs the problem, serves, and uses no part of the configuration
        let log = try XCTUnwrap(daemon).log
        XCTAssertTrue(log.contains("<3>\(dropIn):2: "), "no `<3>\(dropIn):2: …` line in the log:\n\(log)")
        let properties = try waitForStatus(.reachableViaEthernet)
        XCTAssertEqual(properties.string(.transport), Transport.ethernet.rawValue)
    }

    // MARK: Helpers

    /// The test's configuration file, passed as `--config`.
    /// Writes the configuration file and starts the daemon with `--config` pointing at it.
    private func startDaemon(configuration text: String) throws {
        try writeConfiguration(text)
        try startDaemon(arguments: ["--config", try configurationPath])
    }

    /// Sends SIGHUP and waits until the daemon has read the files again (`RELOADING=1` then
    /// `READY=1` on the notification socket, as `systemctl reload` expects).
    private func reload() throws {
        let daemon = try XCTUnwrap(daemon)
        let before = daemon.notifications.count
        daemon.send(SIGHUP)
        try Poll.until("RELOADING=1 and READY=1 after SIGHUP", observe: { Array(daemon.notifications.dropFirst(before)) }) {
            guard let reloading = $0.firstIndex(where: { $0.contains("RELOADING=1") }) else { return false }
            return $0[reloading...].contains { $0.contains("READY=1") }
        }
    }
}
