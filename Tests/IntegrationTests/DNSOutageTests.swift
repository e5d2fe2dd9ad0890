import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// A DNS outage while the connectivity check is on: the check's host name goes to nameservers
/// that never answer (glibc's defaults: 5 s a try, two tries each, three servers, so up to 30 s
/// per lookup), the check gives up after `CheckTimeoutSec=` and is retried every second — and
/// the event loop, which must never wait on the network, answers the bus, follows routes and
/// pings the watchdog as if nothing happened, while the lookups still out stay few however
/// often the route changes.
final class DNSOutageTests: DaemonTestCase {
    func testSilentNameserversNeverHoldUpTheEventLoopOrTheWatchdog() throws {
        // Given three silent nameservers, a check of a name only they could resolve, and a
        // watchdog of 2 s (a ping every second)
        let watchdogSeconds = 2.0
        let router = try startBehindSilentNameservers(watchdogSeconds: watchdogSeconds)
        let daemon = try XCTUnwrap(daemon)

        // When the default route goes and comes back every 1.5 s for 18 s, while checks start,
        // wait for the resolver and time out, each change read back with Get(Status)
        let start = Monotonic.seconds()
        let residentBefore = try XCTUnwrap(FaultInjection.residentKiB(of: daemon.pid))
        var answers: [Double] = []
        var threads: [Int] = []
        var helperThreads: [Int] = []
        for change in 0..<12 {
            Thread.sleep(forTimeInterval: 1.5)
            let removed = change % 2 == 0
            if removed { try netns.ip("route", "del", "default") } else { try addIPv4DefaultRoute() }
            let expected = removed ? ReachabilityStatus.notReachable : ReachabilityStatus.reachableViaEthernet
            let changed = Monotonic.seconds()
            var status = ""
            repeat {
                if case .string(let value) = try busctl.property(.status) { status = value }
            } while status != expected.rawValue && Monotonic.seconds() - changed < 30
            answers.append(Monotonic.seconds() - changed)
            threads.append(try XCTUnwrap(FaultInjection.threadCount(of: daemon.pid)))
            helperThreads.append(Self.helperThreads(of: daemon.pid))
            XCTAssertEqual(status, expected.rawValue, "change \(change + 1)")
        }
        let end = Monotonic.seconds()
        let residentAfter = try XCTUnwrap(FaultInjection.residentKiB(of: daemon.pid))

        // Then every change could be read within a second, the watchdog was pinged within every
        // interval, and the checks were still failing on the name (no answer reached the server)
        let slowest = answers.max() ?? .infinity
        XCTAssertLessThan(slowest, 1.0, "seconds from each route change to Get(Status) giving it: \(answers)")
        let pings = daemon.notificationArrivals(of: "WATCHDOG=1").filter { $0 >= start && $0 <= end }
        let longestGap = zip(pings.dropFirst(), pings).map { $0 - $1 }.max() ?? .infinity
        XCTAssertLessThan(longestGap, watchdogSeconds, "WATCHDOG=1 arrivals: \(pings)")
        XCTAssertEqual(router.requests, [], "a check got through: the name resolved")
        // and the checks given up on left no lookup each behind: they shared the one still out
        let peakThreads = threads.max() ?? 0
        XCTAssertLessThanOrEqual(peakThreads, Self.threadBound, "the daemon's threads at each change: \(threads)")
        XCTAssertLessThanOrEqual(helperThreads.max() ?? 0, Self.threadBound, "the check helper's threads at each change: \(helperThreads)")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("Resolving timed out") || explain.contains("Could not resolve host"), explain)
        print("FIGURE: DNS outage (3 silent nameservers, checks every 1 s timing out after 2 s): 12 route changes read back "
            + "with Get(Status) in at most \(String(format: "%.0f", slowest * 1000)) ms; longest WATCHDOG=1 gap "
            + "\(String(format: "%.0f", longestGap * 1000)) ms (pinged every \(String(format: "%.0f", watchdogSeconds * 500)) ms); "
            + "threads at most \(peakThreads) (its check helper's \(helperThreads.max() ?? 0)); RSS \(residentBefore) -> \(residentAfter) KiB")
    }

    func testRouteChurnDuringTheOutageLeavesNoPileOfResolverThreads() throws {
        // Given the same outage, a check timing out on the name every second
        let router = try startBehindSilentNameservers(watchdogSeconds: 2)
        let daemon = try XCTUnwrap(daemon)
        let residentBefore = try XCTUnwrap(FaultInjection.residentKiB(of: daemon.pid))

        // When the default route goes and comes back as fast as `ip` can change it for 10 s
        // (each return a new path: its check starts at once and asks for the name)
        let start = Monotonic.seconds()
        var pathChanges = 0
        var threads: [Int] = []
        var helperThreads: [Int] = []
        while Monotonic.seconds() - start < 10 {
            try netns.ip("route", "del", "default")
            try addIPv4DefaultRoute()
            pathChanges += 2
            threads.append(try XCTUnwrap(FaultInjection.threadCount(of: daemon.pid)))
            helperThreads.append(Self.helperThreads(of: daemon.pid))
        }
        try waitForStatus(.reachableViaEthernet)
        let residentAfter = try XCTUnwrap(FaultInjection.residentKiB(of: daemon.pid))

        // Then the lookups given up on are not each left in a thread of their own: the daemon
        // keeps a few threads however many checks the churn started, and none got through
        let peakThreads = threads.max() ?? 0
        XCTAssertLessThanOrEqual(peakThreads, Self.threadBound, "the daemon's threads during \(pathChanges) path changes: \(threads)")
        XCTAssertLessThanOrEqual(helperThreads.max() ?? 0, Self.threadBound, "the check helper's threads during \(pathChanges) path changes: \(helperThreads)")
        XCTAssertEqual(router.requests, [], "a check got through: the name resolved")
        print("FIGURE: DNS outage with route churn: \(pathChanges) path changes in 10 s, threads at most \(peakThreads) "
            + "(its check helper's \(helperThreads.max() ?? 0)) "
            + "(\(threads.first ?? 0) at the start); RSS \(residentBefore) -> \(residentAfter) KiB")
    }

    /// The most threads the daemon, and its check helper, may have during the outage: the main
    /// thread and Dispatch's (manager, workers: 4 measured), and (the helper) the one name lookup
    /// out (one name, one family), which every check joins; with a margin for Dispatch workers
    /// on a loaded machine. Without a bound on lookups a churn of 1,790 path changes left 896.
    private static let threadBound = 8

    /// The threads of the daemon's check helper, where the lookups run (0 when none runs).
    private static func helperThreads(of daemon: pid_t) -> Int {
        FaultInjection.children(of: daemon).compactMap { FaultInjection.threadCount(of: $0) }.reduce(0, +)
    }

    /// Starts the daemon behind the router namespace, whose three nameservers never answer,
    /// with a check every second of a name only they could resolve (given up after 2 s) and a
    /// watchdog of `watchdogSeconds`; returns once `Connectivity` says `limited`, with the
    /// daemon's notifications read in the background.
    private func startBehindSilentNameservers(watchdogSeconds: Double) throws -> RouterNamespace {
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 10.77.0.1\nnameserver 10.77.0.3\nnameserver 10.77.0.4\n")
        let router = try startDaemonBehindRouter(
            configuration: "[Connectivity]\nCheckURL=http://check.example.test:8080/check\nCheckTimeoutSec=2\nCheckIntervalSec=1\n",
            environment: ["WATCHDOG_USEC": String(Int(watchdogSeconds * 1_000_000))]
        )
        try router.startSilentResolver(at: ["10.77.0.1", "10.77.0.3", "10.77.0.4"])
        try XCTUnwrap(daemon).drainNotificationsInBackground()
        try waitForProperties("reachable, connectivity limited (no check resolves)") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == Connectivity.limited.rawValue
        }
        return router
    }
}
