import Foundation
import ReachabilityClient
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The library in a process with no system bus but the daemon's Varlink socket (a container
/// with `/run/reachabilityd` bind-mounted): the default sources ask the socket, unchanged code.
final class VarlinkClientTests: DaemonTestCase {
    func testWithNoBusTheDefaultSourcesFollowTheDaemonThroughTheSocket() throws {
        // Given the daemon, and this process with no bus it can reach but the socket at
        // $REACHABILITYD_SOCKET
        try startDaemon()
        let socket = VarlinkPeer.socketPath(in: try XCTUnwrap(directory))
        let previousAddress = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(try XCTUnwrap(directory).file("no_bus_socket"))", 1)
        setenv("REACHABILITYD_SOCKET", socket, 1)
        defer {
            if let previousAddress { setenv("DBUS_SYSTEM_BUS_ADDRESS", previousAddress, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
            unsetenv("REACHABILITYD_SOCKET")
        }

        // When an application makes its managers as it does anywhere
        let managers = [ReachabilityManager(source: .daemon), ReachabilityManager(source: .automatic)]
        let delivered = managers.map { manager in
            let collected = Collected<ReachabilityStatus>()
            manager.setStatusChangeHandler(queue: DispatchQueue(label: "VarlinkClientTests.delivery")) { collected.append($0) }
            manager.startMonitoring()
            return collected
        }
        defer { managers.forEach { $0.stopMonitoring() } }

        // Then both have the daemon's state (the namespace's, not this process's), from the daemon
        for (manager, collected) in zip(managers, delivered) {
            try waitForDeliveries(collected, [.notReachable])
            XCTAssertTrue(manager.isDaemonAvailable)
        }

        // And both follow a route change
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        for (manager, collected) in zip(managers, delivered) {
            try waitForDeliveries(collected, [.notReachable, .reachableViaEthernet])
            XCTAssertEqual(manager.interfaceName, "ra0")
        }
    }
}
