import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The GIO module (`gio/`, issue 24) as GLib applications get it: Python `gi` consumers in the
/// test namespace, on the private bus, with the module built from the tree into the test's
/// directory (`GIO_MODULE_DIR`), asking `g_network_monitor_get_default()` with
/// `GIO_USE_NETWORK_MONITOR=reachabilityd` (the module) or `netlink` (GLib's own monitor). Where
/// the two disagree the test prints both answers (`GIO:` lines) and requires the module's to be
/// the daemon's.
final class GioModuleTests: DaemonTestCase {
    private enum Monitor: String {
        case module = "reachabilityd"
        case glib = "netlink"
    }

    /// The `state` answers of a routed, unmetered network without evidence against it, and of none.
    private static let online = "available=1 metered=0 connectivity=full", offline = "available=0 metered=0 connectivity=local"

    private var gio: String { "\(TestPaths.repositoryRoot)/gio" }
    private var builtModules: String?

    /// The module built from the source into the test's directory (the make rule `make build` uses).
    private func modules() throws -> String {
        if let builtModules { return builtModules }
        let built = try XCTUnwrap(directory).file("gio-modules")
        try Command.run("make", ["-s", "-C", gio, "BUILDDIR=\(built)"], timeout: .seconds(120)).check()
        builtModules = built
        return built
    }

    private func environment(_ monitor: Monitor) throws -> [String: String] {
        var environment = try controlEnvironment()
        environment["GIO_MODULE_DIR"] = try modules()
        environment["GIO_USE_NETWORK_MONITOR"] = monitor.rawValue
        // A GLib critical (a failed g_return_if_fail in the module's calls) aborts the consumer.
        environment["G_DEBUG"] = "fatal-criticals"
        return environment
    }

    /// Runs `gio/monitor-query.py ARGUMENTS` in the namespace and returns its line.
    private func query(_ monitor: Monitor, _ arguments: [String]) throws -> String {
        try Command.run("ip", ["netns", "exec", try netns.name, FaultInjection.python, "\(gio)/monitor-query.py"] + arguments,
                        environment: try environment(monitor), timeout: .seconds(20))
            .check().standardOutput.trimmingCharacters(in: .newlines)
    }

    /// Both monitors' answers to `arguments`, printed side by side.
    private func sideBySide(_ scenario: String, _ arguments: String...) throws -> (module: String, glib: String) {
        let answers = (module: try query(.module, arguments), glib: try query(.glib, arguments))
        print("GIO: \(scenario)\n  reachabilityd module: \(answers.module)\n  GLib netlink monitor: \(answers.glib)")
        return answers
    }

    /// Asserts both monitors' `state` answers (`<type> available=… metered=… connectivity=…`).
    private func assertStates(_ scenario: String, module: String, glib: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let answers = try sideBySide(scenario, "state")
        XCTAssertEqual(answers.module, "ReachabilitydNetworkMonitor \(module)", file: file, line: line)
        XCTAssertEqual(answers.glib, "GNetworkMonitorNetlink \(glib)", file: file, line: line)
    }

    /// Starts `Benchmarks/glib-monitor.py` (one line per `network-changed`) with `monitor`.
    private func follower(_ monitor: Monitor) throws -> (process: ChildProcess, lines: () -> [String]) {
        let output = try XCTUnwrap(directory).file("follow-\(monitor.rawValue).out")
        let process = try ChildProcess("ip", ["netns", "exec", try netns.name, FaultInjection.python,
                                              "\(TestPaths.repositoryRoot)/Benchmarks/glib-monitor.py"],
                                       environment: try environment(monitor), standardOutput: output,
                                       standardError: try XCTUnwrap(directory).file("follow-\(monitor.rawValue).err"))
        let lines = { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        try Poll.until("glib-monitor.py (\(monitor.rawValue)) ready", observe: lines) { $0.first?.hasPrefix("ready ") == true }
        return (process, lines)
    }

    /// The `available` values of the `network-changed` lines after `ready`.
    private func changes(_ lines: [String]) -> [String] {
        lines.dropFirst().compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    func testTheModuleGivesTheDaemonsAnswerWhereGLibsNetlinkMonitorDoesNot() throws {
        // Given a routed link: both agree
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        try assertStates("default route via ra0", module: Self.online, glib: Self.online)

        // When the gateway fails address resolution for an application's traffic
        try resolveNeighbour(toward: "203.0.113.7", neighbour: "10.77.0.1", until: "FAILED")
        try waitForProperties("connectivity limited") { $0.string(.connectivity) == Connectivity.limited.rawValue }
        try assertStates("the gateway fails address resolution", module: "available=1 metered=0 connectivity=limited", glib: Self.online)
        try netns.ip("neigh", "replace", "10.77.0.1", "lladdr", "02:00:00:00:77:01", "dev", "ra0", "nud", "reachable")
        try waitForProperties("connectivity unknown again") { $0.string(.connectivity) == Connectivity.unknown.rawValue }

        // When the link loses carrier (the kernel keeps the route, flagged linkdown)
        try netns.ip("link", "set", "ra1", "down")
        try waitForStatus(.notReachable)
        try assertStates("ra0 lost carrier, its default route kept", module: Self.offline, glib: Self.online)

        // When the only default route leaves through a link without any address
        try netns.ip("link", "set", "ra1", "up")
        try waitForStatus(.reachableViaEthernet)
        try netns.ip("route", "del", "default")
        try netns.ip("addr", "flush", "dev", "ra0")
        try netns.ip("route", "add", "default", "dev", "ra0")
        try waitForProperties("not reachable, dev-only default route") { $0.status == ReachabilityStatus.notReachable.rawValue }
        try assertStates("default dev ra0, no source address", module: Self.offline, glib: Self.online)
    }

    func testAMeteredLinkIsMeteredForGLibApplications() throws {
        // Given ra0 declared cellular (metered by default)
        try writeConfiguration("[Reachability]\nTransport=ra0:wwan\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaWWAN)

        // Then
        try assertStates("default route over a metered (wwan) link", module: "available=1 metered=1 connectivity=full", glib: Self.online)
    }

    func testTheCaptivePortalReachesGLibApplications() throws {
        // Given a daemon checking against the router's server, which answers 204
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=1\n")
        try waitForProperties("connectivity full") { $0.string(.connectivity) == Connectivity.full.rawValue }
        XCTAssertEqual(try query(.module, ["state"]), "ReachabilitydNetworkMonitor \(Self.online)")

        // When the network starts redirecting to its portal
        try router.setMode("redirect")
        try waitForProperties("connectivity portal") { $0.string(.connectivity) == Connectivity.portal.rawValue }

        // Then GLib applications see the portal through the module only
        try assertStates("captive portal", module: "available=1 metered=0 connectivity=portal", glib: Self.online)
    }

    func testCanReachARoutedAnUnroutedAndAnUnparsableDestination() throws {
        // Given names resolved from the namespace's hosts file, no DNS server (nothing leaves
        // the machine), a default route and an unreachable route for 192.0.2.0/24
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n198.51.100.7 routed.example\n192.0.2.7 blocked.example\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 127.0.0.1\n")
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("route", "add", "unreachable", "192.0.2.0/24")
        try waitForStatus(.reachableViaEthernet)

        // Then the routed name is reachable for both
        XCTAssertEqual(try sideBySide("routed name", "can-reach", "routed.example", "443").module, "reachable")
        XCTAssertEqual(try query(.module, ["can-reach", "198.51.100.7", "443"]), "reachable")
        // and the destination under the unreachable route is unreachable for the module only
        let blocked = try sideBySide("destination under an unreachable route", "can-reach", "blocked.example", "443")
        XCTAssertTrue(blocked.module.hasPrefix("error g-io-error-quark host-unreachable "), blocked.module)
        // and a name that is neither an address nor resolvable gets GResolver's error
        let unparsable = try sideBySide("unparsable destination", "can-reach", "not a host name", "443")
        XCTAssertTrue(unparsable.module.hasPrefix("error g-resolver-error-quark "), unparsable.module)

        // When there is no route at all: the network is unreachable
        try netns.ip("route", "del", "default")
        try waitForStatus(.notReachable)
        let unrouted = try sideBySide("no default route", "can-reach", "routed.example", "443")
        XCTAssertTrue(unrouted.module.hasPrefix("error g-io-error-quark network-unreachable "), unrouted.module)
    }

    func testCanReachThisHostsOwnAddresses() throws {
        // Given a default route, ra0 holding 10.77.0.2 and fd00::2, and localhost in the hosts file
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n::1 localhost\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 127.0.0.1\n")
        try startDaemon()
        try configureIPv4Link()
        try bringUpIPv6VethPair()
        try netns.ip("-6", "addr", "add", "fd00::2/64", "dev", "ra0", "nodad")
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // Then each is reachable for the module, as for GLib's monitor (and a connection to it works)
        for host in ["127.0.0.1", "::1", "localhost", "10.77.0.2", "fd00::2"] {
            XCTAssertEqual(try sideBySide("this host's own \(host)", "can-reach", host, "443").module, "reachable", host)
        }
    }

    func testTheCConsumersAsynchronousCallAndItsCancellation() throws {
        // Given the C consumer, built as its comment says, and a routed namespace
        let binary = try XCTUnwrap(directory).file("can-reach")
        let flags = try Command.run("pkg-config", ["--cflags", "--libs", "gio-2.0"]).check().standardOutput
            .split(whereSeparator: \.isWhitespace).map(String.init)
        try Command.run("cc", ["-Wall", "-Wextra", "-Werror", "\(gio)/tests/can-reach.c"] + flags + ["-o", binary], timeout: .seconds(60)).check()
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("route", "add", "unreachable", "192.0.2.0/24")
        try waitForStatus(.reachableViaEthernet)
        let canReach = { (arguments: [String]) in
            try Command.run("ip", ["netns", "exec", try self.netns.name, binary] + arguments, environment: try self.environment(.module))
                .check().standardOutput
        }

        // Then can_reach_async answers as the synchronous call does
        XCTAssertEqual(try canReach(["198.51.100.7", "443"]), "ReachabilitydNetworkMonitor\nreachable\n")
        let blocked = try canReach(["192.0.2.7", "443"])
        XCTAssertTrue(blocked.hasPrefix("ReachabilitydNetworkMonitor\nerror g-io-error-quark host-unreachable "), blocked)
        // and a cancelled call ends with G_IO_ERROR_CANCELLED
        let cancelled = try canReach(["198.51.100.7", "443", "--cancel"])
        XCTAssertTrue(cancelled.hasPrefix("ReachabilitydNetworkMonitor\nerror g-io-error-quark cancelled "), cancelled)
    }

    func testNetworkChangedOncePerStatusChangedOverTwentyRouteToggles() throws {
        // Given both monitors following, in their own processes
        try startDaemon()
        try configureIPv4Link()
        let module = try follower(.module)
        let glib = try follower(.glib)
        defer {
            _ = module.process.terminate()
            _ = glib.process.terminate()
        }

        // When the default route is added and removed 10 times, each change awaited
        for _ in 0..<10 {
            try addIPv4DefaultRoute()
            try waitForStatus(.reachableViaEthernet)
            try netns.ip("route", "del", "default")
            try waitForStatus(.notReachable)
        }

        // Then the module emitted network-changed once per StatusChanged, with the right value
        try signals.waitForStatusChanged(count: 20)
        try Poll.until("20 network-changed from the module", observe: { self.changes(module.lines()) }) { $0.count >= 20 }
        Thread.sleep(forTimeInterval: 0.5) // room for a duplicate to show
        let statusChanges = try signals.waitForStatusChanged(count: 20)
        let emitted = changes(module.lines())
        print("GIO: 20 route toggles: StatusChanged \(statusChanges.count), module network-changed \(emitted.count), GLib netlink network-changed \(changes(glib.lines()).count)")
        XCTAssertEqual(emitted.count, statusChanges.count)
        XCTAssertEqual(emitted, Array(repeating: ["1", "0"], count: 10).flatMap { $0 })
    }

    func testFallbackWithoutTheDaemonAndFollowingARestartedOne() throws {
        // Given no daemon: a fresh process falls back to GLib's monitor at once, even when told
        // to use the module
        let started = ContinuousClock.now
        let absent = try query(.module, ["state"])
        let elapsed = ContinuousClock.now - started
        print("GIO: no daemon: GIO_USE_NETWORK_MONITOR=reachabilityd gives \(absent) in \(elapsed)")
        XCTAssertTrue(absent.hasPrefix("GNetworkMonitorNetlink "), absent)
        XCTAssertLessThan(elapsed, .seconds(5))

        // Given a running daemon and a process following the module
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let module = try follower(.module)
        defer { _ = module.process.terminate() }
        XCTAssertTrue(module.lines().first?.hasSuffix(" ReachabilitydNetworkMonitor") == true, module.lines().first ?? "")

        // When the daemon stops, the route goes, and a new daemon starts
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        XCTAssertTrue(try query(.module, ["state"]).hasPrefix("GNetworkMonitorNetlink "))
        try netns.ip("route", "del", "default")
        try startDaemon()
        try waitForStatus(.notReachable)

        // Then the running process follows the new daemon: one network-changed, to unavailable
        try Poll.until("network-changed after the restart", observe: { self.changes(module.lines()) }) { $0 == ["0"] }
        // and the next change too
        try addIPv4DefaultRoute()
        try Poll.until("network-changed after the next route", observe: { self.changes(module.lines()) }) { $0 == ["0", "1"] }
    }
}
