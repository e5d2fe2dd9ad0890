import Foundation
@testable import ReachabilityClient
import ReachabilityCore
import XCTest

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
        try waitForManager(manager, status: .reachableViaEthernet, timeout: BusHub.longestReconnectDelay + .seconds(2))
        XCTAssertTrue(manager.isDaemonAvailable)
        manager.stopMonitoring()
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
        Thread.sleep(forTimeInterval: 0.3)
        let before = count()

        // When 2000 routes come and go in a burst. They cover the probe destination (8.8.8.8), in
        // tables no rule uses: the daemon's kernel filter keeps them, but they change no property.
        let batch = directory.file("routes.batch")
        let lines = (0..<1000).map { "route add 8.8.8.0/24 via 10.77.0.1 dev ra0 table \(1000 + $0)" }
            + (0..<1000).map { "route del 8.8.8.0/24 via 10.77.0.1 dev ra0 table \(1000 + $0)" }
        try lines.joined(separator: "\n").appending("\n").write(toFile: batch, atomically: true, encoding: .utf8)
        let start = ContinuousClock.now
        try netns.ip("-batch", batch)
        let elapsed = ContinuousClock.now - start
        Thread.sleep(forTimeInterval: 0.5)  // the trailing signal of the last interval

        // Then at least one signal, and no more than one per 100 ms of churn (plus the trailing one)
        let during = count() - before
        let allowed = Int(elapsed / .milliseconds(BusContract.routesChangedIntervalMilliseconds)) + 2
        print("\(during) RoutesChanged for 2000 route changes in \(elapsed)")
        XCTAssertGreaterThanOrEqual(during, 1)
        XCTAssertLessThanOrEqual(during, allowed)
    }
}
