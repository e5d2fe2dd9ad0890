import Foundation
import TestSupport
import XCTest

/// The consumers in `Examples/` (Python with Gio.DBusProxy, C with sd-bus, shell with busctl)
/// against the real daemon on a private bus, in a test namespace: each prints the status and,
/// where it follows, the change a default route brings.
final class ExampleConsumersTests: DaemonTestCase {
    private var examples: String { "\(TestPaths.repositoryRoot)/Examples" }

    /// Starts `arguments` (a consumer following one change), waits for its first line, adds a
    /// default route and returns everything it printed.
    private func follow(_ executable: String, _ arguments: [String], name: String) throws -> String {
        let directory = try XCTUnwrap(directory)
        let output = directory.file("\(name).out")
        let consumer = try ChildProcess(executable, arguments, environment: try controlEnvironment(),
                                        standardOutput: output, standardError: directory.file("\(name).err"))
        let printed = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        try Poll.until("\(name)'s first line", observe: printed) { $0.hasPrefix("Status: ") }
        try addIPv4DefaultRoute()
        XCTAssertEqual(consumer.wait(timeout: .seconds(10)), .exited(0),
                       (try? String(contentsOfFile: directory.file("\(name).err"), encoding: .utf8)) ?? "")
        try netns.ip("route", "del", "default")
        return printed()
    }

    func testThePythonExampleFollowsStatusChanged() throws {
        try startDaemon()
        try configureIPv4Link()
        let printed = try follow(FaultInjection.python, ["\(examples)/python/reachability-monitor.py", "--changes", "1"], name: "python")
        XCTAssertEqual(printed.split(separator: "\n").prefix(2), ["Status: not-reachable via -, connectivity none", "StatusChanged: reachable-via-ethernet"])
    }

    func testTheCExampleBuildsAndFollowsStatusChanged() throws {
        // Given the example built as its comment says
        try startDaemon()
        try configureIPv4Link()
        let binary = try XCTUnwrap(directory).file("reachability-status")
        let flags = try Command.run("pkg-config", ["--cflags", "--libs", "libsystemd"]).check().standardOutput
            .split(whereSeparator: \.isWhitespace).map(String.init)
        try Command.run("cc", ["-Wall", "-Wextra", "-Werror", "\(examples)/c/reachability-status.c"] + flags + ["-o", binary], timeout: .seconds(60)).check()

        // Then it prints the status, then the change
        let printed = try follow(binary, ["--changes", "1"], name: "c")
        XCTAssertEqual(printed, "Status: not-reachable via -\nStatusChanged: reachable-via-ethernet\n")
    }

    func testTheShellExampleTellsTheStatusByItsExitStatus() throws {
        let script = "\(examples)/shell/reachability-status.sh"
        // Without the daemon: 69
        XCTAssertEqual(try Command.run("/bin/sh", [script], environment: try controlEnvironment()).termination, .exited(69))
        try startDaemon()
        try configureIPv4Link()
        let unreachable = try Command.run("/bin/sh", [script], environment: try controlEnvironment())
        XCTAssertEqual(unreachable.termination, .exited(1))
        XCTAssertEqual(unreachable.standardOutput, "not-reachable\n")
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let reachable = try Command.run("/bin/sh", [script], environment: try controlEnvironment())
        XCTAssertEqual(reachable.termination, .exited(0))
        XCTAssertEqual(reachable.standardOutput, "reachable-via-ethernet\n")
    }
}
