import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// A DNS outage while the connectivity check is on: the check's host name goes to nameservers
/// that never answer (glibc's defaults: 5 s a try, two tries each, three servers, so up to 30 s
/// per lookup), the check gives up after `CheckTimeoutSec=` and is retried every second — and
/// the event loop, which must never wait on the network, answers the bus, follows routes and
/// pings the watchdog as if nothing happened.
final class DNSOutageTests: DaemonTestCase {
    func testSilentNameserversNeverHoldUpTheEventLoopOrTheWatchdog() throws {
        // Given three silent nameservers, a check of a name only they could resolve, and a
        // watchdog of 2 s (a ping every second)
        let watchdogSeconds = 2.0
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 10.77.0.1\nnameserver 10.77.0.3\nnameserver 10.77.0.4\n")
        let router = try startDaemonBehindRouter(
            configuration: "[Connectivity]\nCheckURL=http://check.example.test:8080/check\nCheckTimeoutSec=2\nCheckIntervalSec=1\n",
            environment: ["WATCHDOG_USEC": String(Int(watchdogSeconds * 1_000_000))]
        )
        try router.startSilentResolver(at: ["10.77.0.1", "10.77.0.3", "10.77.0.4"])
        let daemon = try XCTUnwrap(daemon)
        daemon.drainNotificationsInBackground()
        try waitForProperties("reachable, connectivity limited (no check resolves)") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == Connectivity.limited.rawValue
        }

        // When the default route goes and comes back every 1.5 s for 18 s, while checks start,
        // wait for the resolver and time out, each change read back with Get(Status)
        let start = Monotonic.seconds()
        let residentBefore = try XCTUnwrap(FaultInjection.residentKiB(of: daemon.pid))
        var answers: [Double] = []
        var threads: [Int] = []
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
        // and the lookups given up on (each left to finish in its own thread) stayed few
        let peakThreads = threads.max() ?? 0
        XCTAssertLessThan(peakThreads, 64, "the daemon's threads at each change: \(threads)")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("Resolving timed out") || explain.contains("Could not resolve host"), explain)
        print("FIGURE: DNS outage (3 silent nameservers, checks every 1 s timing out after 2 s): 12 route changes read back "
            + "with Get(Status) in at most \(String(format: "%.0f", slowest * 1000)) ms; longest WATCHDOG=1 gap "
            + "\(String(format: "%.0f", longestGap * 1000)) ms (pinged every \(String(format: "%.0f", watchdogSeconds * 500)) ms); "
            + "threads at most \(peakThreads); RSS \(residentBefore) -> \(residentAfter) KiB")
    }
}
