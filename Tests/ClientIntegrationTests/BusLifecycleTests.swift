import Foundation
@testable import ReachabilityClient
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The client across a restart of the bus itself, and the daemon's `RoutesChanged` rate limit.
final class BusLifecycleTests: DaemonTestCase {
    /// A bus started by a test in place of the set-up's, stopped after the daemon.
    private var replacementBus: PrivateBus?

    override func tearDownWithError() throws {
        try super.tearDownWithError()
        replacementBus?.stop()
        replacementBus = nil
    }

    func testManagerReconnectsAfterTheBusRestarts() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let manager = try makeManager()
        manager.startMonitoring()
        try waitForManager(manager, status: .reachableViaEthernet)

        // When the bus goes away (the daemon exits with it)
        let oldBus = try XCTUnwrap(bus)
        oldBus.stop()

        // Then
        try waitForManager(manager, status: .unknown, timeout: .seconds(1))
        XCTAssertFalse(manager.isDaemonAvailable)
        try Poll.until("the daemon to exit with the bus") { try XCTUnwrap(daemon).termination != nil }
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(1), "the daemon exits 1 when it loses the bus")

        // When a bus comes back on the same socket with the daemon
        let newBus = try PrivateBus(in: try XCTUnwrap(directory))
        replacementBus = newBus
        XCTAssertEqual(newBus.address, oldBus.address)
        try startDaemon()

        // Then the manager reconnects (at its next attempt: see BusHub.reconnectDelay) and reads
        // the daemon again
        try waitForManager(manager, status: .reachableViaEthernet, timeout: BusHub.reconnectDelays.longest + .seconds(2))
        XCTAssertTrue(manager.isDaemonAvailable)
        manager.stopMonitoring()
    }

    /// The `--answer-timeout` of the calls that must end before it, by the loss of the bus.
    private static let longAnswerTimeout = 60

    func testEveryCallInFlightEndsWithAnErrorWhenTheBusGoes() throws {
        // Given a daemon that owns its name and does not answer (stopped); calls to it from
        // reachabilityctl, each on a connection of its own, and from the library on the
        // connection its manager keeps, all sent and waiting for the answer
        try startDaemon()
        let address = try XCTUnwrap(bus).address
        let daemonPID = try XCTUnwrap(daemon).pid
        kill(daemonPID, SIGSTOP)
        defer { kill(daemonPID, SIGCONT) }  // also when the test fails while it is stalled
        let directory = try XCTUnwrap(directory)
        let commands = [["metrics"], ["explain"], ["check-connectivity"], ["explain", "--json"]]
        let clients = try commands.enumerated().map { index, command in
            try ChildProcess(
                try ClientTestPaths.controlBinary(), command + ["--answer-timeout", "\(Self.longAnswerTimeout)"],
                environment: try controlEnvironment(), standardError: directory.file("client-\(index).err")
            )
        }
        defer { for client in clients where client.poll() == nil { _ = client.terminate() } }
        let hub = BusHub.hub(for: .address(address))
        hub.queue.sync { hub.propertiesReading = BusHub.PropertiesReading(timeout: .seconds(1), retryDelays: .unansweredDaemon) }
        let manager = try makeManager()
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        try Poll.until("the manager's read of the stalled daemon's properties to give up", observe: { hub.queue.sync { hub.state } }) { $0 != nil }
        // Each reply as its description, "nil" when the connection went
        let replies = Collected<String>()
        for member in [BusContract.metricsMethod, BusContract.explainMethod, BusContract.checkConnectivityMethod] {
            hub.queue.sync {
                hub.callDaemon(member: member, returning: String.self, timeoutMicroseconds: UInt64(Self.longAnswerTimeout) * 1_000_000) { replies.append($0.map { "\($0)" } ?? "nil") }
            }
        }
        try Poll.until("every reachabilityctl on the bus", observe: {
            try Command.run("busctl", ["--address=\(address)", "list", "--unique", "--no-legend"]).check().standardOutput
        }) { $0.components(separatedBy: "reachabilityctl").count - 1 == commands.count }

        // When the bus dies
        kill(try XCTUnwrap(bus).pid, SIGKILL)

        // Then every call ends at once with an error, long before its timeout: the library's
        // callers are answered, and each reachabilityctl exits 69 without a leaked continuation
        XCTAssertTrue(replies.wait(timeout: Poll.defaultTimeout) { $0.count == 3 }, "answered: \(replies.all)")
        XCTAssertFalse(replies.all.contains { $0.hasPrefix("success") }, "\(replies.all)")
        for (index, client) in clients.enumerated() {
            let ended = client.wait(timeout: Poll.defaultTimeout)
            let standardError = (try? String(contentsOfFile: directory.file("client-\(index).err"), encoding: .utf8)) ?? ""
            XCTAssertEqual(ended, .exited(Exit.daemonAbsent), "\(client.commandLine): \(standardError)")
            XCTAssertFalse(standardError.contains("leaked its continuation"), "\(client.commandLine): \(standardError)")
        }
        // (and the daemon, resumed, exits 1 as it does when it loses the bus)
        kill(daemonPID, SIGCONT)
        try Poll.until("the daemon to exit with the bus") { try XCTUnwrap(daemon).termination != nil }
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(1))
    }

    /// How long each idle CPU measurement lasts.
    private static let idleWindow: Duration = .seconds(10)

    func testClientsIdleBelowOnePercentCPUWhileTheServiceOrTheBusIsGoneAndResumeWithTheTruth() throws {
        // Given a library manager and a `reachabilityctl monitor` following a reachable network
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let manager = try makeManager()
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        let monitor = try MonitorSubprocess(environment: try controlEnvironment(), directory: try XCTUnwrap(directory))
        try waitForManager(manager, status: .reachableViaEthernet)
        try monitor.waitForLastLine("reachable-via-ethernet") { $0.status == "reachable-via-ethernet" }

        // When the service stops (the bus stays)
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))

        // Then both report unknown, and idle while it is gone
        try waitForManager(manager, status: .unknown, timeout: .seconds(1))
        try monitor.waitForLastLine("unknown") { $0.status == "unknown" }
        let serviceGone = try idleCPUPercent(monitor: monitor.process.pid)

        // When the bus dies too, and the default route goes while it is gone
        let oldBus = try XCTUnwrap(bus)
        kill(oldBus.pid, SIGKILL)
        try Poll.until("the manager to lose the bus", observe: { manager.snapshot.reason }) { $0.hasPrefix("no system bus") }
        try monitor.waitForLastLine("no system bus") { $0.status == "unknown" && $0.reason.hasPrefix("no system bus") }
        let busGone = try idleCPUPercent(monitor: monitor.process.pid)
        try netns.ip("route", "del", "default")

        // When a bus comes back on the same socket, and the service with it
        replacementBus = try PrivateBus(in: try XCTUnwrap(directory))
        try startDaemon()
        let restarted = ContinuousClock.now

        // Then both resume with the true status, at their next reconnection attempt
        let resumeDeadline = BusHub.reconnectDelays.longest + .seconds(2)
        let libraryResumed = try waitForManager(manager, status: .notReachable, timeout: resumeDeadline)
        try monitor.waitForLastLine("not-reachable", timeout: resumeDeadline) { $0.status == "not-reachable" }
        let monitorResumed = ContinuousClock.now - restarted
        XCTAssertTrue(manager.isDaemonAvailable)
        XCTAssertNil(monitor.process.poll(), "reachabilityctl monitor ended")
        let percent = { (value: Double) in String(format: "%.2f %%", value) }
        print("FIGURE: idle clients, service stopped (bus alive), \(Self.idleWindow.components.seconds) s: reachabilityctl monitor \(percent(serviceGone.monitor)) CPU, library (whole test process) \(percent(serviceGone.library))")
        print("FIGURE: idle clients, bus killed (SIGKILL), \(Self.idleWindow.components.seconds) s: reachabilityctl monitor \(percent(busGone.monitor)) CPU, library (whole test process) \(percent(busGone.library))")
        print("FIGURE: bus and service back after \(Self.idleWindow.components.seconds) s without a bus: true status (route removed meanwhile) in the library after \(String(format: "%.2f", libraryResumed.timeInterval)) s, in the monitor after \(String(format: "%.2f", monitorResumed.timeInterval)) s")
        for (what, measured) in [("service gone", serviceGone), ("bus gone", busGone)] {
            XCTAssertLessThan(measured.monitor, 1, "reachabilityctl monitor, \(what)")
            XCTAssertLessThan(measured.library, 1, "library, \(what)")
        }
    }

    /// Measures, over `idleWindow` in which the test does nothing, the CPU used by the monitor
    /// process and by this process (the library's managers and its bus hub).
    ///
    /// - Parameter monitor: the monitor's pid.
    /// - Returns: each one's CPU time as a percentage of the window.
    private func idleCPUPercent(monitor: pid_t) throws -> (monitor: Double, library: Double) {
        let before = (try XCTUnwrap(FaultInjection.cpuTime(of: monitor)), try XCTUnwrap(FaultInjection.cpuTime(of: getpid())))
        let start = ContinuousClock.now
        Thread.sleep(forTimeInterval: Self.idleWindow.timeInterval)  // the measurement window, not a wait for anything
        let elapsed = ContinuousClock.now - start
        let after = (try XCTUnwrap(FaultInjection.cpuTime(of: monitor)), try XCTUnwrap(FaultInjection.cpuTime(of: getpid())))
        return ((after.0 - before.0) / elapsed * 100, (after.1 - before.1) / elapsed * 100)
    }

    func testRoutesChangedIsRateLimitedUnderRouteChurn() throws {
        // Given a monitor of RoutesChanged, and the daemon's first one seen
        try startDaemon()
        try configureIPv4Link()
        let directory = try XCTUnwrap(directory)
        let outputPath = directory.file("routes-changed.jsonl")
        let monitor = try ChildProcess(
            "busctl", [
                "--address=\(try XCTUnwrap(bus).address)", "monitor", "--json=short",
                "--match", "type='signal',interface='\(BusContract.interface)',member='\(BusContract.routesChangedSignal)'",
            ],
            standardOutput: outputPath, standardError: directory.file("routes-changed.err")
        )
        defer { monitor.terminate() }
        func count() -> Int {
            ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
                .split(separator: "\n").filter { $0.contains(BusContract.routesChangedSignal) }.count
        }
        var probe = 0
        try Poll.until("a first RoutesChanged") {
            probe += 1
            try netns.ip("route", "add", "8.8.8.0/24", "via", "10.77.0.1", "dev", "ra0", "table", "\(2000 + probe)")
            return count() > 0
        }
        try waitUntilRoutingIsSettled()
        let before = count()
        let recordedBefore = try signals.routesChangedCount

        // When 2000 routes come and go in a burst. They cover the probe destination (8.8.8.8), in
        // tables no rule uses: the daemon's kernel filter keeps them, but they change no property.
        let batch = directory.file("routes.batch")
        let lines = (0..<1000).map { "route add 8.8.8.0/24 via 10.77.0.1 dev ra0 table \(1000 + $0)" }
            + (0..<1000).map { "route del 8.8.8.0/24 via 10.77.0.1 dev ra0 table \(1000 + $0)" }
        try lines.joined(separator: "\n").appending("\n").write(toFile: batch, atomically: true, encoding: .utf8)
        let start = ContinuousClock.now
        try netns.ip("-batch", batch)
        let elapsed = ContinuousClock.now - start
        // The burst's last announcement, once the daemon has sent it and busctl has written it
        try waitUntilRoutingIsSettled()
        try Poll.until("busctl monitor caught up", observe: { (count(), try signals.routesChangedCount) }) { $0.0 > before && $0.0 - before == $0.1 - recordedBefore }

        // Then at least one signal, and no more than one per 100 ms of churn (plus the trailing one)
        let during = count() - before
        let allowed = Int(elapsed / .milliseconds(BusContract.routesChangedIntervalMilliseconds)) + 2
        print("\(during) RoutesChanged for 2000 route changes in \(elapsed)")
        XCTAssertGreaterThanOrEqual(during, 1)
        XCTAssertLessThanOrEqual(during, allowed)
    }
}
