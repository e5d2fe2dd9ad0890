import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// Data-stall detection from the host's own traffic, with real parts: a router namespace (ra1,
/// 10.77.0.1) whose "upstream" addresses sit on its loopback, a blackhole route standing for an
/// upstream that silently passes nothing (the router still answers ARP: the gateway's entry
/// stays fine), and client programs in the test namespace. No `CheckURL=`: the daemon sends
/// nothing, and Connectivity moves between `unknown` and `limited` on the stall alone.
final class DataStallTests: DaemonTestCase {
    /// An upstream server: the router's, reached through the default route.
    static let liveServer = "198.51.100.1"
    /// Another upstream server, which the router blackholes.
    static let deadServer = "198.51.100.2"

    /// A client that keeps trying TCP connections (a new one every 0.25 s, each given 3 s, so
    /// that its SYNs are retransmitted while the path passes nothing), or a UDP stream
    /// (`udp`: a datagram every 50 ms, expecting no answer).
    static let client = """
        import socket, sys, time
        mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
        if mode == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            while True:
                s.sendto(b"<13>reachabilityd data-stall test", (host, port))
                time.sleep(0.05)
        pending = []
        while True:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex((host, port))
            pending.append((time.monotonic(), s))
            while pending and time.monotonic() - pending[0][0] > 3:
                pending.pop(0)[1].close()
            time.sleep(0.25)
        """

    func testAnUpstreamThatPassesNothingIsLimitedUntilItPassesAgain() throws {
        // Given a reachable host behind the router and a client connecting to an upstream server
        let router = try startBehindRouter()
        let client = try startClient("tcp", Self.liveServer, 8080)
        defer { _ = client.terminate() }

        // When the router silently stops passing the upstream's traffic
        try blackhole(Self.liveServer, in: router)
        let stopped = ContinuousClock.now

        // Then IPv4 is limited within 15 s, and Reason says traffic leaves and nothing comes back
        let limited = try waitForProperties("limited by a data stall", timeout: .seconds(30)) { $0.string(.connectivity) == Connectivity.limited.rawValue }
        let noticed = ContinuousClock.now - stopped
        XCTAssertEqual(limited.string(.ipv4Connectivity), Connectivity.limited.rawValue)
        XCTAssertEqual(limited.status, ReachabilityStatus.reachableViaEthernet.rawValue, "Status stays what the route says")
        let reason = try XCTUnwrap(limited.string(.reason))
        XCTAssertTrue(reason.contains("IPv4: traffic leaves ra0 and nothing comes back"), reason)
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("  data stall: traffic leaves ra0 and nothing comes back"), explain)

        // When it passes traffic again
        try router.namespace.ip("route", "del", "blackhole", "\(Self.liveServer)/32")
        try router.namespace.ip("addr", "add", "\(Self.liveServer)/32", "dev", "lo")
        let resumed = ContinuousClock.now

        // Then the stall clears within 5 s: connectivity unknown again (no check to say more)
        let cleared = try waitForProperties("the stall cleared") { $0.string(.connectivity) == Connectivity.unknown.rawValue }
        let clearedAfter = ContinuousClock.now - resumed
        XCTAssertFalse(cleared.string(.reason)?.contains("data stall") ?? true)
        print("Data stall noticed after \(noticed), cleared \(clearedAfter) after recovery.")
        // The bounds (the rule's window plus a sampling interval or two: see docs/reliability.md).
        XCTAssertLessThan(noticed, .seconds(15))
        XCTAssertLessThan(clearedAfter, .seconds(5))
    }

    func testAStallIsCheckedAtOnceAndTheChecksVerdictStands() throws {
        // Given checks every 300 s that answer 204 (the router's own server is not blackholed)
        let router = try startBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckTimeoutSec=1\n", connectivity: .full)
        let checksBefore = router.requests.count
        let client = try startClient("tcp", Self.liveServer, 8080)
        defer { _ = client.terminate() }

        // When the upstream the client talks to passes nothing
        try blackhole(Self.liveServer, in: router)

        // Then limited on the stall, and a check runs at once (not 300 s later), which clears
        // it: full again while the client's server stays dead
        try Poll.until("a check after the stall", timeout: .seconds(30)) { router.requests.count > checksBefore }
        try waitForConnectivity(.full)
        XCTAssertEqual(
            try signals.waitForConnectivityChanged(count: 4), [Connectivity.unknown, .full, .limited, .full].map(\.rawValue)
        )
        XCTAssertTrue(try XCTUnwrap(daemon).log.contains("Data stall on ra0"))

        // When the check server stops answering too and another stall begins after the upstream's recovery
        try router.namespace.ip("route", "del", "blackhole", "\(Self.liveServer)/32")
        try router.namespace.ip("addr", "add", "\(Self.liveServer)/32", "dev", "lo")
        try Poll.until("the stall ended", timeout: .seconds(30)) { try XCTUnwrap(self.daemon).log.contains("Data stall on ra0 ended") }
        try router.setMode("hang")
        try blackhole(Self.liveServer, in: router)

        // Then the check at once confirms it: limited
        try waitForProperties("limited, confirmed", timeout: .seconds(30)) { $0.string(.connectivity) == Connectivity.limited.rawValue }
        XCTAssertEqual(try signals.waitForConnectivityChanged(count: 5).last, Connectivity.limited.rawValue)
    }

    func testNoFalseAlarmWhenIdleOnAOneWayStreamOrWithOneDeadServerAmongLiveOnes() throws {
        // Given a reachable host behind the router, the dead server blackholed
        let router = try startBehindRouter()
        try blackhole(Self.deadServer, in: router)

        // When the host is idle, then sends a UDP stream nobody answers (syslog to a dead
        // collector), then keeps trying the dead server while the live one answers
        observeWithoutAStall("an idle host")
        XCTAssertTrue(try XCTUnwrap(daemon).log.contains("Data-stall sampling stops: nothing sent for a window."), "an idle host is sampled")
        let stream = try startClient("udp", Self.deadServer, 514)
        observeWithoutAStall("a one-way UDP stream")
        XCTAssertTrue(try XCTUnwrap(daemon).log.contains("Data-stall verdict on ra0: one-way."), "the stream was judged one-way")
        _ = stream.terminate()
        let dead = try startClient("tcp", Self.deadServer, 8080)
        defer { _ = dead.terminate() }
        let live = try startClient("tcp", Self.liveServer, 8080)
        defer { _ = live.terminate() }
        observeWithoutAStall("one dead server while another answers")
        XCTAssertTrue(try XCTUnwrap(daemon).log.contains("Data-stall verdict on ra0: flowing."), "the live server's answers were seen")

        // Then connectivity never left unknown: one ConnectivityChanged (the first), none since
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.unknown.rawValue)
        XCTAssertFalse(try XCTUnwrap(daemon).log.contains("Data stall on"), "the daemon logged a data stall")
    }

    func testWithDetectionOffNoStallIsLookedFor() throws {
        // Given detection turned off
        let router = try startBehindRouter(configuration: "[Connectivity]\nDataStallDetection=no\n")
        let client = try startClient("tcp", Self.liveServer, 8080)
        defer { _ = client.terminate() }

        // When the upstream passes nothing
        try blackhole(Self.liveServer, in: router)

        // Then nothing changes
        observeWithoutAStall("a stall with detection off")
        XCTAssertTrue(try busctl.explain().contains("DataStallDetection=no"))
    }

    /// Starts the daemon behind a router whose loopback holds the live server's address, and
    /// waits until it is reachable with `connectivity`.
    private func startBehindRouter(configuration: String = "", connectivity: Connectivity = .unknown) throws -> RouterNamespace {
        let router = try startDaemonBehindRouter(configuration: configuration)
        try router.namespace.ip("addr", "add", "\(Self.liveServer)/32", "dev", "lo")
        try waitForProperties("reachable, connectivity \(connectivity.rawValue)") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == connectivity.rawValue
        }
        return router
    }

    /// Makes the router drop everything toward `address` without a word (a blackhole route
    /// sends no ICMP error), taking it off its loopback first.
    private func blackhole(_ address: String, in router: RouterNamespace) throws {
        _ = try? router.namespace.ip("addr", "del", "\(address)/32", "dev", "lo")
        try router.namespace.ip("route", "add", "blackhole", "\(address)/32")
    }

    /// Starts ``client`` in the test namespace.
    private func startClient(_ mode: String, _ host: String, _ port: Int) throws -> ChildProcess {
        try ChildProcess("ip", ["netns", "exec", try netns.name, FaultInjection.python, "-c", Self.client, mode, host, String(port)])
    }

    /// Watches Connectivity for as long as a stall takes to show at most (an idle interval for
    /// the traffic to be noticed, a window, two sampling intervals: an observation window) and
    /// fails if it left `unknown`.
    private func observeWithoutAStall(_ what: String) {
        let longest = DataStallRule.idleIntervalNanoseconds + DataStallRule.windowNanoseconds + 2 * DataStallRule.flowingIntervalNanoseconds
        let end = ContinuousClock.now + .nanoseconds(Int64(longest))
        while ContinuousClock.now < end {
            XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.unknown.rawValue, what)
            Thread.sleep(forTimeInterval: 0.5)
        }
    }
}

/// The false-alarm cases of ``DataStallTests`` for a fifth of a soak's length (`make soak` runs
/// it after the soak, a fifth of `REACHABILITYD_SOAK_SECONDS`, at least 30 s: its loads repeat
/// within a minute, and CI's time budget holds one soak, not two): loads that are no stall — idle, a UDP stream
/// to a blackholed address, a dead server with a live one, the live one alone, the stream with
/// the live one — in a random order (`REACHABILITYD_SOAK_SEED` replays one), each for 3 to 8 s,
/// while Connectivity must stay `unknown` and the daemon log no stall.
final class DataStallSoakTests: DaemonTestCase {
    func testLoadsThatAreNoStallNeverLookLikeOne() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = max(30, (environment["REACHABILITYD_SOAK_SECONDS"].flatMap(Int.init) ?? 0) / 5)
        let seed = environment["REACHABILITYD_SOAK_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: .min ... .max)
        print("DataStallSoakTests seed \(seed) (REACHABILITYD_SOAK_SEED=\(seed) replays it), \(seconds) s")
        var random = SplitMix64(seed: seed)

        // Given a reachable host behind the router, one upstream live and one blackholed
        let router = try startDaemonBehindRouter(configuration: "")
        try router.namespace.ip("addr", "add", "\(DataStallTests.liveServer)/32", "dev", "lo")
        try router.namespace.ip("route", "add", "blackhole", "\(DataStallTests.deadServer)/32")
        try waitForProperties("reachable, connectivity unknown") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == Connectivity.unknown.rawValue
        }
        let loads: [(name: String, clients: [(mode: String, host: String, port: Int)])] = [
            ("idle", []),
            ("a UDP stream nobody answers", [("udp", DataStallTests.deadServer, 514)]),
            ("a dead server and a live one", [("tcp", DataStallTests.deadServer, 8080), ("tcp", DataStallTests.liveServer, 8080)]),
            ("a live server", [("tcp", DataStallTests.liveServer, 8080)]),
            ("a UDP stream and a live server", [("udp", DataStallTests.deadServer, 514), ("tcp", DataStallTests.liveServer, 8080)]),
        ]

        // When the loads follow each other for the soak's length
        let end = ContinuousClock.now + .seconds(seconds)
        var phases: [String] = []
        while ContinuousClock.now < end {
            let load = loads[Int(random.next() % UInt64(loads.count))]
            phases.append(load.name)
            // The live server's client starts first and stops last: no moment has the dead one alone.
            let clients = try load.clients.sorted { $0.host == DataStallTests.liveServer && $1.host != DataStallTests.liveServer }.map { client in
                try ChildProcess("ip", ["netns", "exec", try netns.name, FaultInjection.python, "-c", DataStallTests.client, client.mode, client.host, String(client.port)])
            }
            let phaseEnd = ContinuousClock.now + .milliseconds(3000 + Int(random.next() % 5000))
            while ContinuousClock.now < phaseEnd {
                // Then connectivity never leaves unknown
                XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.unknown.rawValue, "\(load.name), after \(phases)")
                Thread.sleep(forTimeInterval: 0.5)
            }
            for client in clients.reversed() { _ = client.terminate() }
        }
        XCTAssertFalse(try XCTUnwrap(daemon).log.contains("Data stall on"), "the daemon logged a data stall over \(phases)")
    }
}
