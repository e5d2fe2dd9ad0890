import Foundation
import ReachabilityCore
import ReachabilityNotifications
@testable import ReachabilityClient
import TestSupport
import XCTest

/// `ReachabilityManager` against the real daemon on a private bus, in a test namespace.
///
/// The scenario of the delivery tests: the daemon starts with no route (`not-reachable`); the
/// link gets an address; a default route appears (`reachable-via-ethernet`); it moves to another
/// gateway (the reason changes, the status does not); it goes away (`not-reachable`); it comes
/// back and goes again (the fence proving nothing was delivered twice).
final class ReachabilityManagerTests: DaemonTestCase {
    private let deliveryQueue = DispatchQueue(label: "ReachabilityManagerTests.delivery")

    /// Runs the scenario, checking `collected` after each step.
    private func runScenario(_ collected: Collected<ReachabilityStatus>, expectingFirst first: [ReachabilityStatus] = [.notReachable]) throws {
        try waitForDeliveries(collected, first)
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForDeliveries(collected, first + [.reachableViaEthernet])
        // Another gateway: the daemon publishes a new Reason, the status stays.
        try netns.ip("route", "replace", "default", "via", "10.77.0.254", "dev", "ra0")
        try waitForProperties("Reason naming the new gateway") { $0.string(.reason)?.contains("10.77.0.254") == true }
        try netns.ip("route", "del", "default")
        try waitForDeliveries(collected, first + [.reachableViaEthernet, .notReachable])
        // Each delivery matches one StatusChanged of the daemon, and nothing more arrives.
        // (awaited: busctl monitor may print a signal after the manager delivered it)
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
        // Real changes as the fence (there and back, so the scenario still ends not-reachable):
        // anything delivered twice would arrive before them.
        try addIPv4DefaultRoute()
        try waitForDeliveries(collected, first + [.reachableViaEthernet, .notReachable, .reachableViaEthernet])
        try netns.ip("route", "del", "default")
        try waitForDeliveries(collected, first + [.reachableViaEthernet, .notReachable, .reachableViaEthernet, .notReachable])
    }

    func testHandlerGetsCurrentStatusFirstThenEachChangeOnce() throws {
        // Given
        try startDaemon()
        let manager = try makeManager()
        let delivered = Collected<ReachabilityStatus>()
        let queue = deliveryQueue
        manager.setStatusChangeHandler(queue: queue) { status in
            dispatchPrecondition(condition: .onQueue(queue))
            delivered.append(status)
        }

        // When
        manager.startMonitoring()

        // Then
        try runScenario(delivered)
        XCTAssertEqual(manager.status, .notReachable)
        manager.stopMonitoring()
        XCTAssertEqual(manager.status, .unknown, "a stopped manager must not report a stale status")
    }

    func testFlappingRouteGivesTheDaemonsSequenceWithoutRepeats() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        let manager = try makeManager()
        let delivered = Collected<ReachabilityStatus>()
        manager.setStatusChangeHandler(queue: deliveryQueue) { delivered.append($0) }
        manager.startMonitoring()
        try waitForDeliveries(delivered, [.notReachable])

        // When the default route comes and goes 30 times as fast as ip can do it
        for _ in 0..<30 {
            try addIPv4DefaultRoute()
            try netns.ip("route", "del", "default")
            // The harness reads the daemon's sd_notify socket only when asked; undrained, its
            // queue (net.unix.max_dgram_qlen, 10 here) fills with STATUS= and sd_notify blocks
            // the daemon, as a stalled service manager would.
            _ = daemon?.notifications
        }
        try addIPv4DefaultRoute()

        // Then the handler saw exactly the daemon's StatusChanged sequence, never a status twice
        try waitForManager(manager, status: .reachableViaEthernet)
        try waitForStatus(.reachableViaEthernet)
        let daemonSequence = try Poll.until("the last StatusChanged", observe: { try signals.statusChanges }) {
            $0.last == ReachabilityStatus.reachableViaEthernet.rawValue
        }
        try waitForDeliveries(delivered, [.notReachable] + daemonSequence.compactMap(ReachabilityStatus.init(rawValue:)))
        let all = delivered.all
        XCTAssertFalse(zip(all, all.dropFirst()).contains { $0 == $1 }, "a status delivered twice in a row: \(all)")
        print("\(all.count) deliveries for 61 route changes")
    }

    func testManagersOfOneProcessShareOneBusConnection() throws {
        // Given
        try startDaemon()
        func connections() throws -> Int {
            try busctl.run(["list", "--unique", "--no-legend"]).check().standardOutput.split(separator: "\n").count
        }
        let before = try connections()

        // When 20 managers monitor (machine and addresses)
        let managers = try (0..<20).map { try makeManager($0 % 2 == 0 ? .machine : .address("10.77.0.\($0)")) }
        managers.forEach { $0.startMonitoring() }
        for manager in managers { try waitForManager(manager, status: .notReachable) }

        // Then one connection serves them all, and it closes when the last one stops
        XCTAssertEqual(try connections(), before + 1)
        managers.forEach { $0.stopMonitoring() }
        try Poll.until("the shared connection to close") { try connections() == before }
    }

    func testHandlerSetAfterStartGetsCurrentStatusOnce() throws {
        // Given a manager that already knows the status
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let manager = try makeManager()
        manager.startMonitoring()
        try waitForManager(manager, status: .reachableViaEthernet)
        XCTAssertTrue(manager.isReachable)
        XCTAssertTrue(manager.isReachableViaEthernet)
        XCTAssertFalse(manager.isReachableViaWiFi)
        XCTAssertFalse(manager.isReachableViaWWAN)
        XCTAssertEqual(manager.interfaceName, "ra0")
        XCTAssertFalse(manager.isMetered)
        XCTAssertEqual(manager.meteredReason, .transport)
        XCTAssertNil(manager.networkID, "10.77.0.1 never resolves: no MAC, no id")

        // When
        let delivered = Collected<ReachabilityStatus>()
        manager.setStatusChangeHandler(queue: deliveryQueue) { delivered.append($0) }

        // Then
        try waitForDeliveries(delivered, [.reachableViaEthernet])
        // A real change as the fence: a repeated current status would arrive before it.
        try netns.ip("route", "del", "default")
        try waitForDeliveries(delivered, [.reachableViaEthernet, .notReachable])
    }

    func testStatusUpdatesYieldTheSameSequence() throws {
        // Given
        try startDaemon()
        let manager = try makeManager()
        let delivered = Collected<ReachabilityStatus>()
        let updates = manager.statusUpdates
        let consumer = Task {
            for await status in updates { delivered.append(status) }
        }
        defer { consumer.cancel() }

        // When
        manager.startMonitoring()

        // Then
        try runScenario(delivered)
    }

    func testInterfacesComeInTheSameSnapshotAsTheStatusTheyExplainAndAGatewayAloneIsDelivered() throws {
        // Given a manager following a daemon with no route
        try startDaemon()
        let manager = try makeManager()
        let delivered = Collected<ReachabilitySnapshot>()
        let updates = manager.snapshotUpdates
        let consumer = Task {
            for await snapshot in updates { delivered.append(snapshot) }
        }
        defer { consumer.cancel() }
        manager.startMonitoring()
        try waitForManager(manager, status: .notReachable)

        // When a default route through ra0 appears
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then the snapshot that brings the status lists ra0 with that gateway
        let gateway = IPAddress("10.77.0.1")!
        XCTAssertTrue(delivered.wait(timeout: .seconds(5)) { $0.contains { $0.status == .reachableViaEthernet } }, "\(delivered.all.map(\.status))")
        let reachable = try XCTUnwrap(delivered.all.first { $0.status == .reachableViaEthernet })
        XCTAssertEqual(reachable.interfaces.first { $0.name == "ra0" }?.gateways, [gateway])
        XCTAssertEqual(reachable.interfaces.first { $0.name == "ra0" }?.operational, .up)
        XCTAssertFalse(reachable.interfaces.contains { $0.name == "lo" })

        // When only a gateway is added (in another table: the status and the reason stay)
        try netns.ip("route", "add", "default", "via", "10.77.0.254", "dev", "ra0", "table", "100")

        // Then a snapshot carrying it alone is delivered, and the manager's interfaces are the daemon's
        let second = IPAddress("10.77.0.254")!
        XCTAssertTrue(delivered.wait(timeout: .seconds(5)) { $0.last?.interfaces.first { $0.name == "ra0" }?.gateways == [second, gateway] })
        XCTAssertEqual(delivered.all.last?.status, .reachableViaEthernet)
        XCTAssertEqual(manager.interfaces, try busctl.properties().interfaces)
    }

    func testNotificationIsPostedOnEveryChange() throws {
        // Given
        try startDaemon()
        let manager = try makeManager()
        let posted = Collected<ReachabilityStatus>()
        let observer = NotificationCenter.default.addObserver(
            forName: ReachabilityManager.didChangeNotification, object: manager, queue: nil
        ) { notification in
            if let status = notification.userInfo?[ReachabilityManager.statusUserInfoKey] as? ReachabilityStatus {
                posted.append(status)
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        // When
        manager.startMonitoring()

        // Then: the first answer is a change from `.unknown`
        try runScenario(posted)
    }

    func testStoppedDaemonIsUnknownWithinOneSecondAndRestartedDaemonIsReadAgain() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let manager = try makeManager()
        let delivered = Collected<ReachabilityStatus>()
        manager.setStatusChangeHandler(queue: deliveryQueue) { delivered.append($0) }
        manager.startMonitoring()
        try waitForManager(manager, status: .reachableViaEthernet)
        XCTAssertTrue(manager.isDaemonAvailable)

        // When the daemon stops
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))

        // Then
        let took = try waitForManager(manager, status: .unknown, timeout: .seconds(1))
        print("status unknown \(took) after the daemon exited")
        XCTAssertFalse(manager.isDaemonAvailable)
        XCTAssertNil(manager.interfaceName)

        // When it starts again
        try startDaemon()

        // Then
        try waitForManager(manager, status: .reachableViaEthernet)
        XCTAssertTrue(manager.isDaemonAvailable)
        try waitForDeliveries(delivered, [.reachableViaEthernet, .unknown, .reachableViaEthernet])
    }

    func testNoDaemonIsUnknown() throws {
        // Given a bus without the daemon
        let manager = try makeManager()
        let delivered = Collected<ReachabilityStatus>()
        manager.setStatusChangeHandler(queue: deliveryQueue) { delivered.append($0) }

        // When
        manager.startMonitoring()

        // Then
        try waitForDeliveries(delivered, [.unknown])
        XCTAssertFalse(manager.isDaemonAvailable)

        // And when the daemon starts, its status arrives
        try startDaemon()
        try waitForDeliveries(delivered, [.unknown, .notReachable])
    }

    func testAddressManagerFollowsTheRouteToItsAddress() throws {
        // Given an on-link network and no default route: the machine is not reachable
        try startDaemon()
        let global = try makeManager()
        let onLink = try makeManager(.address("10.77.0.9"))
        let elsewhere = try makeManager(.address("198.51.100.7"))
        let malformed = try makeManager(.address("not-an-address"))
        for manager in [global, onLink, elsewhere, malformed] { manager.startMonitoring() }
        try configureIPv4Link()

        // Then the on-link address is reachable through ra0, the rest is not
        try waitForManager(onLink, status: .reachableViaEthernet)
        XCTAssertEqual(onLink.interfaceName, "ra0")
        try waitForManager(global, status: .notReachable)
        try waitForManager(elsewhere, status: .notReachable)
        try waitForManager(malformed, status: .notReachable)

        // When a default route appears, the other address follows
        try addIPv4DefaultRoute()
        try waitForManager(elsewhere, status: .reachableViaEthernet)
        try waitForManager(global, status: .reachableViaEthernet)
    }

    func testAddressManagerIsToldOfARouteAddedForItsAddressAlone() throws {
        // Given a manager following 10.9.1.1 through the default route over ra0, and ra1 with
        // an address of its own
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "ra1")
        let manager = try makeManager(.address("10.9.1.1"))
        manager.startMonitoring()
        try waitForManager(manager, status: .reachableViaEthernet)
        try Poll.until("manager interface ra0", observe: { manager.interfaceName }) { $0 == "ra0" }

        // When only a route for 10.9.0.0/16 appears (no link or address change beside it)
        try netns.ip("route", "add", "10.9.0.0/16", "via", "10.78.0.1", "dev", "ra1")

        // Then the manager hears of it (RoutesChanged) and checks again
        try Poll.until("manager interface ra1", observe: { manager.interfaceName }) { $0 == "ra1" }

        // When it becomes unreachable, the manager says so
        try netns.ip("route", "replace", "unreachable", "10.9.0.0/16")
        try waitForManager(manager, status: .notReachable)
    }

    func testDomainManagerChecksTheResolvedAddresses() throws {
        // Given (the resolver runs in the test's own namespace: a literal resolves to itself,
        // "localhost" to loopback, which the rule counts as reachable over lo, as a connect() is)
        try startDaemon()
        try configureIPv4Link()
        let literal = try makeManager(.domain(HostLookup("10.77.0.9")))
        let loopback = try makeManager(.domain(HostLookup("localhost")))
        let unresolvable = try makeManager(.domain(HostLookup("no-such-host.invalid")))
        for manager in [literal, loopback, unresolvable] { manager.startMonitoring() }

        // Then
        try waitForManager(literal, status: .reachableViaEthernet)
        XCTAssertEqual(literal.interfaceName, "ra0")
        try waitForManager(loopback, status: .reachableViaOther)
        XCTAssertEqual(loopback.interfaceName, "lo")
        try waitForManager(unresolvable, status: .notReachable)
        XCTAssertTrue(unresolvable.snapshot.reason.contains("could not resolve"), unresolvable.snapshot.reason)
    }
    func testSixHundredAddressManagersOfOneProcessAreAllAnsweredWithoutUnknown() throws {
        // Given 600 address managers in one process (one bus connection, one caller to the
        // daemon), all reachable: a route change makes every one ask at once, more than the
        // bus lets a connection have pending (128 on dbus-daemon's system bus) and more than the
        // daemon lets one caller have waiting; the process keeps 64 in flight and queues the rest
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let count = 600
        let delivered = (0..<count).map { _ in Collected<ReachabilityStatus>() }
        let managers = try (0..<count).map { try makeManager(.address("10.9.\($0 / 200).\($0 % 200 + 1)")) }
        for (manager, collected) in zip(managers, delivered) {
            manager.setStatusChangeHandler(queue: deliveryQueue) { collected.append($0) }
            manager.startMonitoring()
        }
        try Poll.until("every manager reachable", timeout: .seconds(30), observe: {
            delivered.filter { $0.all.last != .reachableViaEthernet }.count
        }) { $0 == 0 }

        // When the default route goes
        let start = ContinuousClock.now
        try netns.ip("route", "del", "default")

        // Then every manager goes from reachable straight to not-reachable, never unknown
        try Poll.until("every manager not-reachable", timeout: .seconds(30), observe: {
            delivered.filter { $0.all.last != .notReachable }.count
        }) { $0 == 0 }
        print("FIGURE: 600 address managers in one process: all told not-reachable \(start.duration(to: .now)) after the route went")
        for (index, collected) in delivered.enumerated() {
            let afterFirstAnswer = collected.all.drop { $0 != .reachableViaEthernet }
            XCTAssertEqual(Array(afterFirstAnswer), [.reachableViaEthernet, .notReachable], "manager \(index)")
        }
        managers.forEach { $0.stopMonitoring() }
    }
}
