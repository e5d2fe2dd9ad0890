import Foundation
@testable import ReachabilityClient
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The clients across restarts and stalls of the daemon.
///
/// 1,000 restarts (issue 6): a `ReachabilityManager` in the test process and a `reachabilityctl
/// monitor --json` subprocess follow the daemon while it is stopped with SIGTERM and started
/// again, and every other time the default route is added or removed while it is down, so that a
/// client still showing the status from before the restart is seen. Prints `FIGURE:` lines for
/// docs/reliability.md. Then a host name's retry across one restart, and a client that starts
/// while the daemon is stopped with SIGSTOP (issue 29).
final class DaemonRestartTests: DaemonTestCase {
    /// How many times the daemon restarts.
    private static let restarts = 1_000
    /// How long a client may take to report the daemon gone, or the true status after a restart.
    private static let deadline: Duration = .seconds(2)
    /// After this many missed deadlines the test stops restarting: the figures are void anyway.
    private static let tolerableMisses = 10

    /// One client's reports and what the test found in them.
    private final class FollowedClient {
        let name: String
        let reports: Collected<StatusReport>
        /// The first report not yet examined.
        var nextIndex = 0
        /// Known statuses other than the truth (an old status after a restart, or a new one before).
        var staleStatuses: [String] = []
        /// Deadlines passed without the awaited status.
        var misses: [String] = []
        /// From SIGTERM to the client's `unknown`.
        var goneLatencies: [Duration] = []
        /// From starting the daemon to the client's report of the true status.
        var reconnectLatencies: [Duration] = []

        init(_ name: String, _ reports: Collected<StatusReport>) {
            self.name = name
            self.reports = reports
        }

        /// Waits for a report of `status` from `nextIndex` on and moves past it; the reports before
        /// it may only be `allowed` ones, the rest count as stale.
        ///
        /// - Returns: how long after `since` the client reported `status`, or nil on a missed deadline.
        func awaitStatus(_ status: String, allowing allowed: String, since: ContinuousClock.Instant, restart: Int) -> Duration? {
            let start = nextIndex
            let arrived = reports.wait(timeout: DaemonRestartTests.deadline) { reports in
                reports.dropFirst(start).contains { $0.status == status }
            }
            let seen = Array(reports.all.dropFirst(start))
            let index = seen.firstIndex { $0.status == status }
            for report in seen[..<(index ?? seen.count)] where report.status != allowed {
                staleStatuses.append("restart \(restart): \(report.status) while awaiting \(status)")
            }
            guard arrived, let index else {
                misses.append("restart \(restart): no \(status) within \(DaemonRestartTests.deadline.components.seconds) s, saw \(seen.map(\.status))")
                nextIndex = start + seen.count
                return nil
            }
            nextIndex = start + index + 1
            return seen[index].time - since
        }
    }

    func testClientsFollowAThousandRestartsWithoutAStaleStatus() throws {
        // Given a default route, the daemon, and both clients reporting it
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        var routed = true
        var truth = ReachabilityStatus.reachableViaEthernet.rawValue
        var daemon = try launchDaemon()
        defer { _ = daemon.stop() }
        let manager = try makeManager()
        let libraryReports = Collected<StatusReport>()
        manager.setStatusChangeHandler(queue: DispatchQueue(label: "DaemonRestartTests.library")) { status in
            libraryReports.append(StatusReport(time: .now, status: status.rawValue))
        }
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        let monitor = try MonitorSubprocess(environment: try controlEnvironment(), directory: try XCTUnwrap(directory))
        let clients = [FollowedClient("library", libraryReports), FollowedClient("monitor", monitor.reports)]
        for client in clients {
            // The first reports: `unknown` until the first answer (the monitor prints it).
            XCTAssertNotNil(client.awaitStatus(truth, allowing: "unknown", since: .now, restart: 0), client.misses.joined())
        }

        // When the daemon restarts 1,000 times, the default route toggled while it is down every
        // other time
        var unexpectedExits: [String] = []
        var monitorEnded: Termination?
        let started = ContinuousClock.now
        var restart = 0
        while restart < Self.restarts, clients.map(\.misses.count).reduce(0, +) < Self.tolerableMisses {
            restart += 1
            let stopping = ContinuousClock.now
            let ended = daemon.stop()
            if ended != .exited(0) {
                unexpectedExits.append("restart \(restart): \(ended.map { "\($0)" } ?? "killed after 1 s")")
            }
            for client in clients {
                if let latency = client.awaitStatus("unknown", allowing: truth, since: stopping, restart: restart) {
                    client.goneLatencies.append(latency)
                }
            }
            if restart.isMultiple(of: 2) {
                if routed {
                    try netns.ip("route", "del", "default")
                } else {
                    try addIPv4DefaultRoute()
                }
                routed.toggle()
                truth = (routed ? ReachabilityStatus.reachableViaEthernet : .notReachable).rawValue
            }
            let starting = ContinuousClock.now
            daemon = try launchDaemon()
            for client in clients {
                if let latency = client.awaitStatus(truth, allowing: "unknown", since: starting, restart: restart) {
                    client.reconnectLatencies.append(latency)
                }
            }
            if let ended = monitor.process.poll() {
                monitorEnded = ended
                break
            }
        }
        let elapsed = ContinuousClock.now - started

        // Then no client crashed, none reported a stale status or missed a deadline
        for client in clients {
            print("FIGURE: \(restart) daemon restarts (\(restart / 2) with the default route toggled while down) in \(String(format: "%.1f", elapsed.timeInterval)) s: \(client.name): \(client.staleStatuses.count) stale statuses, \(client.misses.count) missed \(Self.deadline.components.seconds) s deadlines; unknown after SIGTERM p50 \(Self.milliseconds(client.goneLatencies, 0.5)) ms, max \(Self.milliseconds(client.goneLatencies, 1)) ms; true status after the restart p50 \(Self.milliseconds(client.reconnectLatencies, 0.5)) ms, p99 \(Self.milliseconds(client.reconnectLatencies, 0.99)) ms, max \(Self.milliseconds(client.reconnectLatencies, 1)) ms")
        }
        print("FIGURE: \(restart) daemon restarts: reachabilityctl monitor \(monitorEnded.map { "ended: \($0)" } ?? "still running (0 crashes)"); library still answering (0 crashes); daemon exits other than 0: \(unexpectedExits.count)")
        XCTAssertEqual(restart, Self.restarts, "stopped early")
        XCTAssertNil(monitorEnded, "reachabilityctl monitor ended: \((try? String(contentsOfFile: try XCTUnwrap(directory).file("monitor.err"), encoding: .utf8)) ?? "")")
        XCTAssertEqual(unexpectedExits, [])
        for client in clients {
            XCTAssertEqual(client.staleStatuses, [], client.name)
            XCTAssertEqual(client.misses, [], client.name)
        }
        XCTAssertTrue(manager.isDaemonAvailable)
        XCTAssertEqual(manager.status.rawValue, truth)
    }

    func testAHostNameRetryDueWhenTheDaemonRestartsStillRuns() throws {
        // Given a reachable network, and a manager of a name that does not resolve yet, looked
        // up at 0, 1 and 3 s (its back-off: the next lookup is due 4 s after the third)
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let resolver = ScriptedResolver(address: "10.77.0.9")
        let manager = try makeManager(.domain(HostLookup("late-host.invalid", resolver: resolver.resolve)))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        let calls = try Poll.until("the lookup 3 s after the first", observe: { resolver.calls }) { calls in
            calls.count > 1 && calls.last! - calls.first! >= .milliseconds(2500)
        }
        let retryDue = calls.last! + .seconds(4)
        try waitForManager(manager, status: .notReachable)

        // When the daemon restarts before that lookup is due, and the name resolves once the
        // manager has checked it again with the restarted daemon
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        try waitForManager(manager, status: .unknown, timeout: .seconds(1))
        try startDaemon()
        try waitForManager(manager, status: .notReachable)
        XCTAssertLessThan(ContinuousClock.now, retryDue - .milliseconds(500), "the restart took too long for the test to tell anything")
        resolver.startResolving()

        // Then the lookup that was due still comes, finds the name, and the manager reports it
        try waitForManager(manager, status: .reachableViaEthernet, timeout: retryDue - ContinuousClock.now + .seconds(3))
        let lookupsAfterTheRestart = resolver.calls.dropFirst(calls.count)
        XCTAssertEqual(lookupsAfterTheRestart.count, 1, "the restart's check reuses the failure until its retry")
        XCTAssertGreaterThanOrEqual(lookupsAfterTheRestart.first ?? .now, retryDue - .milliseconds(100))
    }

    /// Makes the managers of the test's bus give up on `GetAll` after 1 s instead of sd-bus's
    /// 25 s (the same code path, sooner), and ask again after `retryDelays`.
    private func shortenPropertiesReading(retryDelays: RetryDelays = BusHub.PropertiesReading.standard.retryDelays) throws {
        let hub = BusHub.hub(for: .address(try XCTUnwrap(bus).address))
        hub.queue.sync { hub.propertiesReading = BusHub.PropertiesReading(timeout: .seconds(1), retryDelays: retryDelays) }
    }

    /// Stops the daemon with SIGSTOP, starts `manager` and waits until its read of the daemon's
    /// properties has given up: the manager's first answer. The caller resumes the daemon.
    private func startWhileTheDaemonIsStalled(_ manager: ReachabilityManager) throws {
        kill(try XCTUnwrap(daemon).pid, SIGSTOP)
        let hub = BusHub.hub(for: .address(try XCTUnwrap(bus).address))
        manager.startMonitoring()
        try Poll.until("the manager's read of the stalled daemon's properties to give up", observe: { hub.queue.sync { hub.state } }) { $0 != nil }
    }

    func testAClientStartedWhileTheDaemonIsStalledReadsItOnceItAnswersAgain() throws {
        // Given a daemon stalled while a manager starts, whose read of the properties gave up
        try startDaemon()
        try configureIPv4Link()
        try waitForStatus(.notReachable)
        try shortenPropertiesReading()
        let manager = try makeManager()
        defer { manager.stopMonitoring() }
        let daemonPID = try XCTUnwrap(daemon).pid
        defer { kill(daemonPID, SIGCONT) }  // also when the test fails while it is stalled
        try startWhileTheDaemonIsStalled(manager)
        XCTAssertEqual(manager.status, .unknown)
        XCTAssertFalse(manager.isDaemonAvailable)
        XCTAssertTrue(manager.snapshot.reason.hasPrefix("reachabilityd does not answer"), manager.snapshot.reason)

        // When the daemon answers again, with no change to publish
        kill(daemonPID, SIGCONT)

        // Then the manager reads it again by itself (its retry), and follows its changes
        let read = try waitForManager(manager, status: .notReachable)
        print("FIGURE: a client that gave up reading a stalled daemon read it again \(read) after SIGCONT (its retry)")
        XCTAssertTrue(manager.isDaemonAvailable)
        try addIPv4DefaultRoute()
        try waitForManager(manager, status: .reachableViaEthernet)
    }

    func testAClientThatGaveUpOnAStalledDaemonReadsItAgainWhenItPublishesAChange() throws {
        // Given a daemon stalled while a manager starts, whose read of the properties gave up,
        // and the retry an hour away
        try startDaemon()
        try configureIPv4Link()
        try waitForStatus(.notReachable)
        try shortenPropertiesReading(retryDelays: RetryDelays(first: .seconds(3600), longest: .seconds(3600)))
        let manager = try makeManager()
        defer { manager.stopMonitoring() }
        let daemonPID = try XCTUnwrap(daemon).pid
        defer { kill(daemonPID, SIGCONT) }  // also when the test fails while it is stalled
        try startWhileTheDaemonIsStalled(manager)
        XCTAssertFalse(manager.isDaemonAvailable)

        // When the daemon answers again and publishes two changes
        kill(daemonPID, SIGCONT)
        let changed = ContinuousClock.now
        try addIPv4DefaultRoute()

        // Then its PropertiesChanged (not the whole state) makes the manager read every property
        try waitForManager(manager, status: .reachableViaEthernet)
        print("FIGURE: a client that gave up reading a stalled daemon read it again \(ContinuousClock.now - changed) after SIGCONT and a new default route (its PropertiesChanged)")
        XCTAssertTrue(manager.isDaemonAvailable)
        try netns.ip("route", "del", "default")
        try waitForManager(manager, status: .notReachable)
    }

    /// Starts the daemon without waiting for `READY=1` and without a signal recorder: the
    /// clients' reports are what the test waits for.
    private func launchDaemon() throws -> DaemonProcess {
        try DaemonProcess(
            binary: try TestPaths.daemonBinary(), namespace: try netns, busAddress: try XCTUnwrap(bus).address,
            directory: try XCTUnwrap(directory)
        )
    }

    /// The `fraction` quantile of `durations` in milliseconds, with one decimal ("-" when empty).
    private static func milliseconds(_ durations: [Duration], _ fraction: Double) -> String {
        let sorted = durations.sorted()
        guard !sorted.isEmpty else { return "-" }
        let index = min(sorted.count - 1, Int(Double(sorted.count) * fraction))
        return String(format: "%.1f", sorted[index].timeInterval * 1000)
    }
}
