import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `CheckDestination`: `CheckAddress`'s answer with how to get there, on a host with IPv4.
final class CheckDestinationTests: DaemonTestCase {
    func testWithANativeIPv4RouteTheAddressIsReachedDirectlyThroughItsGateway() throws {
        // Given ra0 with 10.77.0.2/24 and IPv4's default route via 10.77.0.1
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForProperties("IPv4 reachable") { $0.bool(.ipv4Reachable) == true }

        // When
        let destination = try busctl.checkDestination("192.0.2.80")

        // Then: the literal itself, over ra0 from 10.77.0.2 via 10.77.0.1
        XCTAssertEqual(destination, [
            "status": "reachable-via-ethernet", "interface": "ra0", "transport": "ethernet", "source": "10.77.0.2", "gateway": "10.77.0.1",
            "via": "direct", "address": "192.0.2.80", "reason": try XCTUnwrap(destination["reason"]),
        ])
        XCTAssertTrue(destination["reason"]?.contains("via 10.77.0.1 on ra0") == true, "\(destination)")
    }

    func testTheAddressAskedAboutIsWatchedAsCheckAddressWatchesIt() throws {
        // Given a default route over ra0, ra1 with an address of its own, and a caller that
        // asked CheckDestination about 10.9.1.1 and stays connected
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "ra1")
        try waitForProperties("Interface ra0") { $0.string(.interface) == "ra0" }
        let (watcher, reply) = try holdCheckAddress(["10.9.1.1"], method: BusContract.checkDestinationMethod)
        defer { _ = watcher.terminate() }
        XCTAssertTrue(reply.contains("via") && reply.contains("direct"), reply)
        try waitUntilRoutingIsSettled()
        let routesChangedBefore = try signals.routesChangedCount

        // When only a route for the prefix containing it comes (no link, address or probe change)
        try netns.ip("route", "add", "10.9.0.0/16", "via", "10.78.0.1", "dev", "ra1")

        // Then RoutesChanged comes, and the answer follows the route
        try signals.waitForRoutesChanged(count: routesChangedBefore + 1)
        let destination = try busctl.checkDestination("10.9.1.1")
        XCTAssertEqual(destination["interface"], "ra1", "\(destination)")
        XCTAssertEqual(destination["gateway"], "10.78.0.1")
    }

    func testEachCallerGetsTheRouteOfItsOwnUidAsWithCheckAddress() throws {
        // Given a default route over ra0 in main, and user nobody's traffic sent to table 100,
        // whose default is unreachable
        try startWithNobodysTrafficInAnUnreachableTable()

        // When root and nobody ask about 10.9.1.1
        let rootAnswer = try busctl.checkDestination("10.9.1.1")
        let (watcher, nobodyReply) = try holdCheckAddress(["10.9.1.1"], as: "nobody", method: BusContract.checkDestinationMethod)
        defer { _ = watcher.terminate() }

        // Then root's route is main's, nobody's is table 100's unreachable default
        XCTAssertEqual(rootAnswer["status"], "reachable-via-ethernet", "\(rootAnswer)")
        XCTAssertEqual(rootAnswer["interface"], "ra0")
        XCTAssertTrue(nobodyReply.contains("'status'): dbus.String('not-reachable'"), nobodyReply)
    }

    func testTheUnspecifiedAddressIsAnsweredAsTheLoopbackAddressAConnectionToItReaches() throws {
        // Given a reachable host whose lo is up, with a listener on 127.0.0.1 and one on ::1
        try startReachableWithOwnAddressesOnRa0()
        let listeners = try ChildProcess("ip", ["netns", "exec", try netns.name, FaultInjection.python, "-c", """
            import socket, time
            for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
                listener = socket.socket(family)
                listener.bind((host, 8082))
                listener.listen()
                globals()[host] = listener
            time.sleep(3600)
            """])
        defer { _ = listeners.terminate() }

        for (unspecified, loopback) in [("0.0.0.0", "127.0.0.1"), ("::", "::1")] {
            // When an application connects to the unspecified address, Linux sends it to loopback
            let connected = try Command.run("ip", ["netns", "exec", try netns.name, "python3", "-c", """
                import socket
                for attempt in range(100):
                    try:
                        connection = socket.create_connection(("\(unspecified)", 8082), timeout=5)
                        break
                    except ConnectionRefusedError:
                        import time; time.sleep(0.1)
                print(connection.getpeername()[0])
                """])
            XCTAssertEqual(connected.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines), loopback, connected.standardError)

            // Then CheckDestination answers what that connection gets: the loopback's answer, and
            // the reason says why
            let destination = try busctl.checkDestination(unspecified)
            let loopbackAnswer = try busctl.checkDestination(loopback)
            XCTAssertEqual(destination["status"], loopbackAnswer["status"], "\(destination)")
            XCTAssertEqual(destination["status"], ReachabilityStatus.reachableViaOther.rawValue, "\(destination)")
            XCTAssertEqual(destination["interface"], "lo")
            XCTAssertEqual(destination["address"], unspecified)
            XCTAssertTrue(destination["reason"]?.hasPrefix("a connection to \(unspecified) goes to \(loopback) (Linux sends the unspecified address to loopback): ") == true,
                          "\(destination)")
            XCTAssertEqual(try busctl.checkAddress(unspecified), .reply(status: ReachabilityStatus.reachableViaOther.rawValue, interface: "lo"))
        }
    }

    func testMalformedInputIsAnInvalidAddressError() throws {
        // Given
        try startDaemon()
        // When
        let result = try busctl.run(["call", BusContract.busName, BusContract.objectPath, BusContract.interface, BusContract.checkDestinationMethod, "s", "10.0.0"])
        // Then
        XCTAssertFalse(result.succeeded)
        XCTAssertTrue(result.standardError.contains("10.0.0"), result.standardError)
    }
}
