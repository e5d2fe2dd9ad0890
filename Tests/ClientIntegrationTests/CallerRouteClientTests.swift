import Foundation
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The client library's per-address and per-domain managers ask `CheckAddress`, so they get the
/// route of the user they run as (a `uidrange` rule's table), and follow that table's changes
/// (issue 31, item 3).
final class CallerRouteClientTests: DaemonTestCase {
    func testAnUnprivilegedUsersWaitForAnAddressFollowsItsOwnTable() throws {
        // Given user nobody's traffic sent to table 100, whose default is unreachable
        try startWithNobodysTrafficInAnUnreachableTable()

        // When root and nobody wait for 10.9.1.1 with `reachabilityctl wait --host`
        let wait = [try ClientTestPaths.controlBinary(), "wait", "--timeout", "30", "--host", "10.9.1.1"]
        let nobody = try startWaiting(as: "nobody", wait)
        defer { _ = nobody.terminate() }

        // Then root's returns at once (main's route), nobody's waits and follows table 100
        XCTAssertEqual(try reachabilityctl(Array(wait.dropFirst())).termination, .exited(0))
        try assertWaitEndsOnlyWhenTable100GetsARoute(nobody)
    }

    func testAnUnprivilegedUsersWaitForANameFollowsItsOwnTable() throws {
        // Given user nobody's traffic sent to table 100, whose default is unreachable, and a
        // name for 10.9.1.1 in the /etc/hosts of a mount namespace of nobody's reachabilityctl
        try startWithNobodysTrafficInAnUnreachableTable()
        let hosts = try XCTUnwrap(directory).file("hosts")
        try "10.9.1.1 uid-route.test\n".write(toFile: hosts, atomically: true, encoding: .utf8)

        // When nobody waits for the name (resolved in its process, then CheckAddress)
        let wait = [try ClientTestPaths.controlBinary(), "wait", "--timeout", "30", "--host", "uid-route.test"]
        let nobody = try startWaiting(as: "nobody", wait, wrappedIn: ["unshare", "--mount", "sh", "-c", #"mount --bind "$0" /etc/hosts && exec "$@""#, hosts])
        defer { _ = nobody.terminate() }

        // Then it waits and follows table 100
        try assertWaitEndsOnlyWhenTable100GetsARoute(nobody)
    }

    /// Starts `command` as `user` (through `setpriv`, run by `wrapper` when given) on the
    /// test's bus; its stderr goes to `<user>.err` in the test directory.
    private func startWaiting(as user: String, _ command: [String], wrappedIn wrapper: [String] = []) throws -> ChildProcess {
        let directory = try XCTUnwrap(directory)
        // (the user reaches the bus socket in the test directory)
        XCTAssertEqual(chmod(directory.path, 0o755), 0)
        let line = wrapper + ["setpriv"] + (try Self.setprivArguments(user: user)) + command
        return try ChildProcess(
            line[0], Array(line.dropFirst()), environment: try controlEnvironment(),
            standardOutput: directory.file("\(user).out"), standardError: directory.file("\(user).err")
        )
    }

    /// `wait` blocks while table 100 is unreachable and exits 0 once table 100 routes
    /// 10.9.0.0/16 over ra1: its manager asked `CheckAddress` again after `RoutesChanged`.
    private func assertWaitEndsOnlyWhenTable100GetsARoute(_ wait: ChildProcess) throws {
        let errors = { (try? String(contentsOfFile: try XCTUnwrap(self.directory).file("nobody.err"), encoding: .utf8)) ?? "" }
        XCTAssertNil(wait.wait(timeout: .seconds(1)), "the wait must block while table 100 is unreachable: \(errors())")

        // When table 100 gets a route for 10.9.0.0/16 over ra1
        try netns.ip("route", "add", "10.9.0.0/16", "via", "10.78.0.1", "dev", "ra1", "table", "100")

        // Then the wait ends
        XCTAssertEqual(wait.wait(timeout: .seconds(10)), .exited(0), errors())
    }
}
