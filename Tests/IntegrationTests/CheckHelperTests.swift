import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The connectivity check's process boundary, against the router namespace's check server:
/// with checks on, libcurl and its TLS library map only into the check helper (the daemon's
/// child, without the bus socket or an environment, under its own seccomp filter); a helper that dies, or hangs,
/// is replaced and the checks go on. Nothing leaves the two namespaces.
final class CheckHelperTests: DaemonTestCase {
    func testWithChecksOnLibcurlMapsOnlyIntoASandboxedHelperWithoutTheBusSocket() throws {
        // Given a check answering 204, and its verdict published
        let router = try startDaemonBehindRouter(configuration: checkConfiguration())
        defer { withExtendedLifetime(router) {} }
        try waitForConnectivity(.full)

        // Then the daemon has neither libcurl nor a TLS library mapped
        let daemonPID = try XCTUnwrap(daemon).pid
        let daemonMaps = try Command.run("cat", ["/proc/\(daemonPID)/maps"]).check().standardOutput
        for library in ["libcurl", "libssl", "libcrypto", "libgnutls"] {
            XCTAssertFalse(daemonMaps.contains(library), "\(library) is mapped in the daemon")
        }

        // and its one child, the helper, has them, with no descriptor of the daemon's (no bus, no
        // journal: /dev/null, its own epoll, timers and sockets, one SOCK_SEQPACKET socket to the
        // daemon), no new privileges and a seccomp filter
        let helper = try XCTUnwrap(try helperPID(of: daemonPID), "no check helper runs")
        // (cat: Foundation reads a /proc file of size 0 only partly.)
        let helperMaps = try Command.run("cat", ["/proc/\(helper)/maps"]).check().standardOutput
        XCTAssertTrue(helperMaps.contains("libcurl"), "libcurl is not mapped in the helper")
        let helperSockets = try sockets(of: helper, otherwise: { name, target in
            XCTAssertTrue(target == "/dev/null" || target.hasPrefix("anon_inode:"), "the helper's descriptor \(name): \(target)")
        })
        XCTAssertEqual(helperSockets.intersection(try sockets(of: daemonPID)), [], "sockets the helper shares with the daemon")
        let unixSockets = try String(contentsOfFile: "/proc/\(helper)/net/unix", encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        let types = unixSockets.filter { $0.count >= 7 && helperSockets.contains(String($0[6])) }.map { String($0[4]) }
        XCTAssertEqual(types.filter { $0 == "0005" }.count, 1, "the helper's Unix sockets by type: \(types)")
        let status = try String(contentsOfFile: "/proc/\(helper)/status", encoding: .utf8)
        XCTAssertTrue(status.contains("NoNewPrivs:\t1"), status)
        XCTAssertTrue(status.contains("Seccomp:\t2"), status)

        // and an empty environment (the daemon's holds NOTIFY_SOCKET, JOURNAL_STREAM, its
        // configuration's path...)
        let environment = try Command.run("cat", ["/proc/\(helper)/environ"]).check().standardOutput
        XCTAssertEqual(environment.split(separator: "\0"), [], "the helper's environment")

        // and, between checks a second apart, it waits rather than spins (a call its filter
        // refused once made dispatchMain's wait a busy loop)
        let cpuBefore = try XCTUnwrap(FaultInjection.cpuTime(of: helper))
        Thread.sleep(forTimeInterval: 1)  // an observation window: one or two checks
        let cpuUsed = try XCTUnwrap(FaultInjection.cpuTime(of: helper)) - cpuBefore
        XCTAssertLessThan(cpuUsed, .milliseconds(300), "the helper's CPU time over 1 s")
    }

    func testTurningChecksOffEndsTheHelper() throws {
        // Given checks on, from a helper
        let router = try startDaemonBehindRouter(configuration: checkConfiguration())
        defer { withExtendedLifetime(router) {} }
        try waitForConnectivity(.full)
        let daemonPID = try XCTUnwrap(daemon).pid
        XCTAssertNotNil(try helperPID(of: daemonPID))

        // When the configuration turns them off and the daemon reloads
        try writeConfiguration("")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the helper is gone (and reaped), and Connectivity unknown
        try Poll.until("no check helper", observe: { FaultInjection.children(of: daemonPID) }) { $0.isEmpty }
        try waitForConnectivity(.unknown)
    }

    func testTheHelperIsKeptBetweenChecksAMinuteApart() throws {
        // Given checks a minute apart, the first one full
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        defer { withExtendedLifetime(router) {} }
        try waitForConnectivity(.full)
        let daemonPID = try XCTUnwrap(daemon).pid
        let helper = try XCTUnwrap(try helperPID(of: daemonPID))

        // When the daemon idles longer than libdispatch keeps an idle worker thread (5 s: the
        // thread that started the helper may exit, and a parent-death signal would follow it)
        Thread.sleep(forTimeInterval: 8)  // an observation window

        // Then the same helper still runs, and nothing was logged about it ending
        XCTAssertEqual(try helperPID(of: daemonPID), helper)
        let log = try XCTUnwrap(daemon).log
        XCTAssertFalse(log.contains("the check helper (pid"), log)
    }

    func testAHelperThatDiesIsStartedAgainAndTheChecksGoOn() throws {
        // Given checks every second, full, from a helper
        let router = try startDaemonBehindRouter(configuration: checkConfiguration())
        try waitForConnectivity(.full)
        let daemonPID = try XCTUnwrap(daemon).pid
        let first = try XCTUnwrap(try helperPID(of: daemonPID))

        // When the helper is killed
        XCTAssertEqual(kill(first, SIGKILL), 0)

        // Then a new helper runs the next checks, and they still say full
        let second = try Poll.until("a new check helper", observe: { try self.helperPID(of: daemonPID) }) { $0 != nil && $0 != first }
        let requests = router.requests.count
        try Poll.until("a check by the new helper", observe: { router.requests.count }) { $0 > requests }
        try waitForConnectivity(.full)
        XCTAssertEqual(try helperPID(of: daemonPID), second)
    }

    func testAHungHelperIsKilledWithoutHoldingTheDaemonUp() throws {
        // Given checks every second, 1 s each, full
        let router = try startDaemonBehindRouter(configuration: checkConfiguration())
        defer { withExtendedLifetime(router) {} }
        try waitForConnectivity(.full)
        let daemonPID = try XCTUnwrap(daemon).pid
        let hung = try XCTUnwrap(try helperPID(of: daemonPID))

        // When the helper stops answering (stopped: it reads nothing, exits at nothing)
        XCTAssertEqual(kill(hung, SIGSTOP), 0)

        // Then the daemon answers calls meanwhile, kills it after a check's time and its grace,
        // and a new helper's checks say full again
        let stopped = ContinuousClock.now
        while ContinuousClock.now - stopped < .seconds(2) {
            let asked = ContinuousClock.now
            XCTAssertEqual(try busctl.properties().status, ReachabilityStatus.reachableViaEthernet.rawValue)
            XCTAssertLessThan(ContinuousClock.now - asked, .seconds(1), "Get(Status) while the helper hangs")
        }
        try Poll.until("the hung helper killed", observe: { FileManager.default.fileExists(atPath: "/proc/\(hung)") }) { !$0 }
        try Poll.until("a new check helper", observe: { try self.helperPID(of: daemonPID) }) { $0 != nil && $0 != hung }
        try waitForConnectivity(.full)
        XCTAssertTrue(try XCTUnwrap(daemon).log.contains("did not answer in time"))
    }

    /// The inodes of `pid`'s sockets; `otherwise` gets each other descriptor and what it is.
    private func sockets(of pid: pid_t, otherwise: (String, String) -> Void = { _, _ in }) throws -> Set<String> {
        var sockets: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") {
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)")
            if target.hasPrefix("socket:[") { sockets.insert(String(target.dropFirst(8).dropLast())) } else { otherwise(name, target) }
        }
        return sockets
    }

    /// The daemon's check helper: its child started with the helper's argument; nil without one.
    private func helperPID(of daemonPID: pid_t) throws -> pid_t? {
        let children = try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap { pid_t($0) }.filter { pid in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            return status.split(separator: "\n").contains("PPid:\t\(daemonPID)")
        }
        let helpers = children.filter { pid in
            let commandLine = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
            return commandLine.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.last == "--connectivity-check-helper"
        }
        XCTAssertLessThanOrEqual(helpers.count, 1, "check helpers: \(helpers)")
        return helpers.first
    }
}
