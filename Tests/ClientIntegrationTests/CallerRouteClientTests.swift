import Foundation
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The client library's per-address manager asks `CheckAddress`, so it gets the route of the
/// user it runs as (a `uidrange` rule's table), and follows that table's changes (issue 31,
/// item 3). A per-domain manager checks each resolved address the same way.
final class CallerRouteClientTests: DaemonTestCase {
    func testAnUnprivilegedUsersWaitForAnAddressFollowsItsOwnTable() throws {
        // Given a default route over ra0 in main, ra1 with an address of its own, and user
        // nobody's traffic sent to table 100, whose default is unreachable
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "ra1")
        try netns.ip("rule", "add", "uidrange", "65534-65534", "lookup", "100")
        try netns.ip("route", "add", "unreachable", "default", "table", "100")
        try waitForStatus(.reachableViaEthernet)

        // When root and nobody wait for 10.9.1.1 with `reachabilityctl wait --host`
        let directory = try XCTUnwrap(directory)
        // (nobody reaches the bus socket in the test directory)
        XCTAssertEqual(chmod(directory.path, 0o755), 0)
        let arguments = [try ClientTestPaths.controlBinary(), "wait", "--timeout", "30", "--host", "10.9.1.1"]
        let nobody = try ChildProcess(
            "setpriv", try Self.setprivArguments(user: "nobody") + arguments, environment: try controlEnvironment(),
            standardOutput: directory.file("nobody.out"), standardError: directory.file("nobody.err")
        )
        defer { _ = nobody.terminate() }

        // Then root's returns at once, nobody's waits (its table has no route)
        XCTAssertEqual(try reachabilityctl(Array(arguments.dropFirst())).termination, .exited(0))
        XCTAssertNil(nobody.wait(timeout: .seconds(1)), "nobody's wait must block while its table 100 is unreachable")

        // When table 100 gets a route for 10.9.0.0/16 over ra1
        try netns.ip("route", "add", "10.9.0.0/16", "via", "10.78.0.1", "dev", "ra1", "table", "100")

        // Then nobody's wait ends: its manager asked CheckAddress again after RoutesChanged
        let ended = nobody.wait(timeout: .seconds(10))
        XCTAssertEqual(ended, .exited(0), (try? String(contentsOfFile: directory.file("nobody.err"), encoding: .utf8)) ?? "")
    }
}
