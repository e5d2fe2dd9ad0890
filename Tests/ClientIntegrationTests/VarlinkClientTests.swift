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
        let noBus = "unix:path=\(try XCTUnwrap(directory).file("no_bus_socket"))"
        let previousAddress = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", noBus, 1)
        setenv("REACHABILITYD_SOCKET", socket, 1)
        defer {
            if let previousAddress { setenv("DBUS_SYSTEM_BUS_ADDRESS", previousAddress, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
            unsetenv("REACHABILITYD_SOCKET")
        }

        // When an application makes its manager as it does anywhere
        let manager = ReachabilityManager()
        let delivered = Collected<ReachabilityStatus>()
        manager.setStatusChangeHandler(queue: DispatchQueue(label: "VarlinkClientTests.delivery")) { delivered.append($0) }
        manager.startMonitoring()
        defer { manager.stopMonitoring() }

        // Then it has the daemon's state (the namespace's, not this process's), from the daemon
        try waitForDeliveries(delivered, [.notReachable])
        XCTAssertTrue(manager.isDaemonAvailable)

        // And it follows a route change
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForDeliveries(delivered, [.notReachable, .reachableViaEthernet])
        XCTAssertEqual(manager.interfaceName, "ra0")

        // And the automatic source (through reachabilityctl, which links the in-process engine)
        // asks the daemon through the socket too, rather than run the engine in this namespace
        let control = try TestPaths.builtExecutable("reachabilityctl", overriddenBy: "REACHABILITYCTL_PATH")
        let automatic = try Command.run(control, ["status", "--json", "--source", "automatic"],
                                        environment: ["DBUS_SYSTEM_BUS_ADDRESS": noBus, "REACHABILITYD_SOCKET": socket, "LANG": "C"])
        let record = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(automatic.standardOutput.utf8)) as? [String: Any],
                                   automatic.standardOutput + automatic.standardError)
        XCTAssertEqual(record["daemonAvailable"] as? Bool, true)
        XCTAssertEqual(record["interface"] as? String, "ra0")
    }
}
