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

    /// How the module and the C consumers are built: as shipped, or with ThreadSanitizer.
    private enum Build: String {
        case plain
        case threadSanitizer = "tsan"

        /// The compiler flags of this build on top of the warnings.
        var flags: [String] { self == .plain ? [] : ["-O1", "-g", "-fsanitize=thread"] }
    }

    /// ThreadSanitizer's suppressions for GLib, which is not built with it: its locks are futexes
    /// ThreadSanitizer cannot see, so its allocator and message queues handing memory between
    /// threads read as races (16 such reports in a 2 s run). What GLib's code does is not checked;
    /// every access the module and the application make is.
    private static let glibSuppressions = """
        called_from_lib:libglib-2.0.so.0
        called_from_lib:libgobject-2.0.so.0
        called_from_lib:libgio-2.0.so.0

        """

    private var gio: String { "\(TestPaths.repositoryRoot)/gio" }
    private var builtModules: [Build: String] = [:]
    /// A bus started by a test in place of the set-up's (killed) one, stopped after the daemon.
    private var replacementBus: PrivateBus?

    override func tearDownWithError() throws {
        try super.tearDownWithError()
        replacementBus?.stop()
        replacementBus = nil
    }

    /// The module built from the source into the test's directory (the make rule `make build`
    /// uses; `CFLAGS` as the package build passes its own).
    private func modules(_ build: Build = .plain) throws -> String {
        if let built = builtModules[build] { return built }
        let built = try XCTUnwrap(directory).file("gio-modules-\(build.rawValue)")
        var arguments = ["-s", "-C", gio, "BUILDDIR=\(built)"]
        if build != .plain { arguments.append("CFLAGS=\(build.flags.joined(separator: " "))") }
        try Command.run("make", arguments, timeout: .seconds(120)).check()
        builtModules[build] = built
        return built
    }

    /// The C consumer `gio/tests/NAME.c`, built into the test's directory as its comment says.
    private func consumer(_ name: String, _ build: Build = .plain) throws -> String {
        let binary = try XCTUnwrap(directory).file("\(name)-\(build.rawValue)")
        let flags = try Command.run("pkg-config", ["--cflags", "--libs", "gio-2.0"]).check().standardOutput
            .split(whereSeparator: \.isWhitespace).map(String.init)
        try Command.run("cc", ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror"] + build.flags + ["\(gio)/tests/\(name).c"] + flags + ["-o", binary],
                        timeout: .seconds(60)).check()
        return binary
    }

    private func environment(_ monitor: Monitor, _ build: Build = .plain) throws -> [String: String] {
        var environment = try controlEnvironment()
        environment["GIO_MODULE_DIR"] = try modules(build)
        environment["GIO_USE_NETWORK_MONITOR"] = monitor.rawValue
        // A GLib critical (a failed g_return_if_fail in the module's calls) aborts the consumer.
        environment["G_DEBUG"] = "fatal-criticals"
        if build == .threadSanitizer {
            let suppressions = try XCTUnwrap(directory).file("tsan.supp")
            try Self.glibSuppressions.write(toFile: suppressions, atomically: true, encoding: .utf8)
            environment["TSAN_OPTIONS"] = "suppressions=\(suppressions)"
        }
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
        try startReachableWithOwnAddressesOnRa0()

        // Then each is reachable for the module, as for GLib's monitor (and a connection to it
        // works), the unspecified addresses too: a connection to them goes to loopback
        for host in ["127.0.0.1", "::1", "localhost", "10.77.0.2", "fd00::2", "0.0.0.0", "::"] {
            XCTAssertEqual(try sideBySide("this host's own \(host)", "can-reach", host, "443").module, "reachable", host)
        }
    }

    /// What an application gets from `can_reach(HOST:PORT)` and from connecting there with
    /// `GSocketClient`, printed beside GLib's monitor's answer.
    private func reachAndConnect(_ scenario: String, _ host: String, _ port: String) throws -> (reach: String, connect: String) {
        let reach = try sideBySide(scenario, "can-reach", host, port).module
        let connect = try query(.module, ["connect", host, port])
        print("  GSocketClient connect: \(connect)")
        return (reach, connect)
    }

    func testOnAnIPv6OnlyHostBehindNAT64CanReachAnswersWhatTheConnectionGets() throws {
        // Given an IPv6-only host behind tayga, which the router advertises, and the IPv4-only
        // server's name answered as a DNS64 synthesizes it (its address inside the prefix)
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }
        let synthesized = "2001:db8:64::a63:1"
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n\(synthesized) ipv4-only.example\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 127.0.0.1\n")
        try router.namespace.advertiseNAT64Prefix(NAT64Testbed.prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("IPv4Access nat64") { $0.string(.ipv4Access) == "nat64" }
        XCTAssertEqual(try busctl.checkDestination("\(NAT64Testbed.server)")["address"], synthesized)

        // When / Then: the literal is not reachable for GLib, which connects it over an IPv4
        // socket (only the synthesized address goes through NAT64): can_reach says what the
        // connection gets
        let literal = try reachAndConnect("IPv4 literal behind NAT64, no CLAT", "\(NAT64Testbed.server)", "8081")
        XCTAssertTrue(literal.connect.hasPrefix("error "), literal.connect)
        XCTAssertTrue(literal.reach.hasPrefix("error g-io-error-quark host-unreachable "), literal.reach)
        // and the name whose AAAA the DNS64 synthesized is reachable, as its connection is
        let name = try reachAndConnect("a name with a DNS64 AAAA", "ipv4-only.example", "8081")
        XCTAssertEqual(name.connect, "connected")
        XCTAssertEqual(name.reach, "reachable")

        // When the host runs a CLAT: the application's IPv4 socket gets through it
        let clat = try startCLAT()
        defer { _ = clat.terminate() }
        try waitForProperties("IPv4Access clat") { $0.string(.ipv4Access) == "clat" }

        // Then the literal is reachable, as its connection is
        let throughCLAT = try reachAndConnect("IPv4 literal through the CLAT", "\(NAT64Testbed.server)", "8081")
        XCTAssertEqual(throughCLAT.connect, "connected")
        XCTAssertEqual(throughCLAT.reach, "reachable")
    }

    func testCanReachAsksCheckAddressWhenTheBusPolicyPredatesCheckDestination() throws {
        // Given a routed network and the bus policy of an older daemon
        try reloadBusPolicyWithoutCheckDestination()
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("route", "add", "unreachable", "192.0.2.0/24")
        try waitForStatus(.reachableViaEthernet)

        // When / Then: the answers are CheckAddress's, not the bus's AccessDenied
        XCTAssertEqual(try query(.module, ["can-reach", "198.51.100.7", "443"]), "reachable")
        let blocked = try query(.module, ["can-reach", "192.0.2.7", "443"])
        XCTAssertTrue(blocked.hasPrefix("error g-io-error-quark host-unreachable "), blocked)
    }

    func testTheCConsumersAsynchronousCallAndItsCancellation() throws {
        // Given the C consumer, built as its comment says, and a routed namespace
        let binary = try consumer("can-reach")
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

    /// Starts dbus-monitor recording the `GetAll` calls on the bus, once it monitors; returns it
    /// and the calls recorded so far.
    private func recordGetAllCalls() throws -> (monitor: ChildProcess, calls: () -> [Substring]) {
        let directory = try XCTUnwrap(directory)
        let recorded = directory.file("getall-calls.out")
        let monitor = try ChildProcess("dbus-monitor", ["--address", try XCTUnwrap(bus).address,
                                                        "type='method_call',interface='org.freedesktop.DBus.Properties',member='GetAll'"],
                                       standardOutput: recorded, standardError: directory.file("getall-calls.err"))
        let calls = { ((try? String(contentsOfFile: recorded, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains("member=GetAll") } }
        // (a monitor's connection loses its unique name once it monitors)
        try Poll.until("dbus-monitor monitoring", observe: { (try? String(contentsOfFile: recorded, encoding: .utf8)) ?? "" }) {
            if let ended = monitor.poll() { throw HarnessError("dbus-monitor ended (\(ended))") }
            return $0.contains("member=NameLost")
        }
        return (monitor, calls)
    }

    func testAnApplicationReadsTheDaemonsPropertiesOnceAtStart() throws {
        // Given a running daemon and dbus-monitor recording the GetAll calls on the bus
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let (monitor, calls) = try recordGetAllCalls()
        defer { _ = monitor.terminate() }

        // When a GLib application starts with the module and follows the next change (by then
        // its name watch has answered, so a second read would have been asked)
        let module = try follower(.module)
        defer { _ = module.process.terminate() }
        try netns.ip("route", "del", "default")
        try Poll.until("network-changed to unavailable", observe: { self.changes(module.lines()) }) { $0 == ["0"] }

        // Then it asked GetAll once
        let getAll = try Poll.until("the module's GetAll recorded", observe: calls) { !$0.isEmpty }
        print("FIGURE: GIO module: GetAll calls at an application's start: \(getAll.count)")
        XCTAssertEqual(getAll.count, 1, getAll.joined(separator: "\n"))
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

    // MARK: A running application across the daemon's and the bus's absences

    /// The `state` of the wwan-declared link (`Transport=ra0:wwan`) as the daemon gives it: only
    /// the daemon says metered, so a running application that says so follows the daemon.
    private static let onlineThroughTheDaemon = "available=1 metered=1 connectivity=full"
    /// GLib's netlink monitor's answers: the default route, or none.
    private static let onlineThroughGLib = "available=1 metered=0 connectivity=full", offlineThroughGLib = offline

    /// Starts the daemon with ra0 declared wwan and a default route over it.
    private func startDaemonOverWWAN() throws {
        try writeConfiguration("[Reachability]\nTransport=ra0:wwan\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaWWAN)
    }

    /// Starts `gio/tests/follow.c` following the module (`arguments` after `follow`) and waits
    /// for its `ready` line; returns both, and how long the process took to print it.
    private func startApplication(_ arguments: [String] = [], build: Build = .plain) throws -> (RunningApplication, ready: String, took: Duration) {
        let binary = try consumer("follow", build)
        let started = ContinuousClock.now
        let application = try RunningApplication(
            namespace: try netns.name, binary: binary, arguments: arguments,
            environment: try environment(.module, build), directory: try XCTUnwrap(directory)
        )
        let ready = try application.waitForLine("ready", timeout: .seconds(15)) { $0.hasPrefix("ready ") }
        return (application, ready, ContinuousClock.now - started)
    }

    /// Starts the daemon with ra0 declared wwan, a default route over it, and `gio/tests/follow.c`
    /// following the module (`arguments` after `follow`), and waits for its `ready` line.
    private func startFollowingTheDaemon(_ arguments: [String] = [], build: Build = .plain) throws -> RunningApplication {
        try startDaemonOverWWAN()
        let (application, ready, _) = try startApplication(arguments, build: build)
        XCTAssertEqual(ready, "ready ReachabilitydNetworkMonitor \(Self.onlineThroughTheDaemon)")
        return application
    }

    func testAStalledDaemonCostsANewApplicationNoWaitAndItFollowsTheDaemonOnceItAnswers() throws {
        // Given a daemon stopped (SIGSTOP) while it owns its name
        try startDaemonOverWWAN()
        let daemon = try XCTUnwrap(daemon)
        daemon.send(SIGSTOP)
        defer { daemon.send(SIGCONT) }

        // When a GLib application starts
        let (application, ready, waited) = try startApplication()
        defer { _ = application.process.terminate() }

        // Then its monitor is the module's, answering as GLib's meanwhile, without waiting out
        // the call's 5 s timeout
        print("FIGURE: GIO module, daemon stopped: a new application ready after \(waited): \(ready)")
        XCTAssertEqual(ready, "ready ReachabilitydNetworkMonitor \(Self.onlineThroughGLib)")
        XCTAssertLessThan(waited, .seconds(5))

        // When the daemon resumes
        daemon.send(SIGCONT)

        // Then the application takes the daemon's answer (only the daemon says metered)
        try application.waitForChanges("the daemon's answer once it resumed", timeout: .seconds(20)) { $0.last == Self.onlineThroughTheDaemon }
        // and follows it, not GLib's monitor: a lost carrier (GLib keeps the route) is offline
        try netns.ip("link", "set", "ra1", "down")
        try waitForStatus(.notReachable)
        try application.waitForChanges("the daemon's answer to the lost carrier") { $0.last == Self.offline }
    }

    func testARunningApplicationOutlivesTheBusFallsBackAndFollowsTheBusBack() throws {
        // Given a GLib application following the daemon
        let application = try startFollowingTheDaemon()
        defer { _ = application.process.terminate() }

        // When the bus dies (the daemon exits with it), and the default route goes meanwhile
        let oldBus = try XCTUnwrap(bus)
        kill(oldBus.pid, SIGKILL)
        let busDied = ContinuousClock.now
        try Poll.until("the daemon to exit with the bus") { try XCTUnwrap(daemon).termination != nil }
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(1))
        try netns.ip("route", "del", "default")

        // Then the application lives on, and answers as GLib's netlink monitor would
        try application.waitForChanges("the fallback's answer without the bus", timeout: .seconds(15)) { $0.last == Self.offlineThroughGLib }
        let fellBack = ContinuousClock.now - busDied
        try addIPv4DefaultRoute()
        try application.waitForChanges("the fallback's answer to the route") { $0.last == Self.onlineThroughGLib }

        // When a bus comes back on the same socket, and the daemon with it
        replacementBus = try PrivateBus(in: try XCTUnwrap(directory))
        try startDaemon(arguments: ["--config", try configurationPath])
        let busBack = ContinuousClock.now

        // Then the application follows the daemon again
        try application.waitForChanges("the daemon's answer again", timeout: .seconds(15)) { $0.last == Self.onlineThroughTheDaemon }
        let followed = ContinuousClock.now - busBack
        print("FIGURE: GIO module, bus killed: GLib's answer after \(fellBack), the daemon's again \(followed) after the bus and the daemon came back; changes \(application.changes)")
    }

    func testARunningApplicationFallsBackWhenTheDaemonStaysAwayAndCanReachGivesGLibsAnswer() throws {
        // Given a GLib application following the daemon, asking for 198.51.100.7 on SIGUSR1
        let application = try startFollowingTheDaemon(["198.51.100.7", "443"])
        defer { _ = application.process.terminate() }
        XCTAssertEqual(try application.canReach(), "reach reachable")

        // When the daemon stops: can_reach gives GLib's answer, not a D-Bus error
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        let stopped = ContinuousClock.now
        XCTAssertEqual(try application.canReach(), "reach reachable")

        // When the default route goes and the link loses carrier
        try netns.ip("route", "del", "default")
        try netns.ip("link", "set", "ra1", "down")

        // Then, the daemon still away, the application says what GLib's monitor says
        try application.waitForChanges("the fallback's answer", timeout: .seconds(15)) { $0.last == Self.offlineThroughGLib }
        let fellBack = ContinuousClock.now - stopped
        let unreachable = try application.canReach()
        print("FIGURE: GIO module, daemon stopped: GLib's answer after \(fellBack); can_reach then: \(unreachable)")
        XCTAssertTrue(unreachable.hasPrefix("reach error g-io-error-quark "), unreachable)
    }

    /// A stand-in for the daemon that stalls after taking its name, as one stopped (SIGSTOP) right
    /// after `RequestName` would: `stalled-daemon.py ADDRESS SECONDS` owns the name, prints
    /// `owned`, and answers `GetAll` only SECONDS after that, with a state no network gives here
    /// (not reachable, while the namespace has its default route); `CheckAddress` with the
    /// daemon's `Busy` error.
    private static let stalledDaemon = #"""
    import sys
    import time

    import dbus
    import dbus.service
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib

    INTERFACE = "org.reachabilityd.Reachability1"
    STATE = {"Status": dbus.String("not-reachable"), "Reachable": dbus.Boolean(False),
             "Metered": dbus.Boolean(False), "Connectivity": dbus.String("none")}


    class StalledDaemon(dbus.service.Object):
        @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}",
                             async_callbacks=("reply", "error"))
        def GetAll(self, interface, reply, error):
            def answer():
                reply(STATE if interface == INTERFACE else {})
                return False
            GLib.timeout_add(int(max(0.0, answering_from - time.monotonic()) * 1000), answer)

        @dbus.service.method(INTERFACE, in_signature="s", out_signature="ss")
        def CheckAddress(self, address):
            raise dbus.exceptions.DBusException("256 calls waiting", name="org.reachabilityd.Error.Busy")


    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    daemon = StalledDaemon(bus, "/org/reachabilityd/Reachability1")
    name = dbus.service.BusName(INTERFACE, bus)
    answering_from = time.monotonic() + float(sys.argv[2])
    print("owned", flush=True)
    GLib.MainLoop().run()
    """#

    func testANewOwnerThatStallsPastTheCallTimeoutIsReadAgainAndItsErrorsAreGIOErrors() throws {
        // Given a GLib application following the daemon
        let application = try startFollowingTheDaemon(["198.51.100.7", "443"])
        defer { _ = application.process.terminate() }

        // When the daemon is replaced by one that stalls 6 s after taking the name (the module's
        // GetAll gives up after 5 s)
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        let directory = try XCTUnwrap(directory)
        let script = try FaultInjection.install(Self.stalledDaemon, as: "stalled-daemon.py", in: directory)
        let output = directory.file("stalled-daemon.out")
        let stalled = try ChildProcess(FaultInjection.python, [script, try XCTUnwrap(bus).address, "6"],
                                       standardOutput: output, standardError: directory.file("stalled-daemon.err"))
        defer { _ = stalled.terminate() }
        try Poll.until("the stalled daemon to own the name", observe: { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }) {
            if let ended = stalled.poll() { throw HarnessError("stalled-daemon.py ended (\(ended))") }
            return $0.hasPrefix("owned")
        }
        let owned = ContinuousClock.now

        // Then the application reads it again and takes its state
        try application.waitForChanges("the stalled owner's state", timeout: .seconds(20)) { $0.last == Self.offline }
        print("FIGURE: GIO module, a new owner stalled 6 s: its state read after \(ContinuousClock.now - owned); changes \(application.changes)")
        // and its errors come as GIO's
        let busy = try application.canReach()
        XCTAssertTrue(busy.hasPrefix("reach error g-io-error-quark busy "), busy)
    }

    /// A stand-in for the daemon that sends its signals one step at a time, as the test asks:
    /// `stepped-daemon.py ADDRESS` owns the name, prints `owned`, answers `GetAll` with a state
    /// neither the daemon nor GLib gives here (metered Wi-Fi behind a portal; printing `read`); at
    /// SIGUSR1 it sends `StatusChanged` to not-reachable and nothing else; at SIGUSR2 the
    /// `PropertiesChanged` of that change, then a whole change back (`StatusChanged`,
    /// `PropertiesChanged`).
    private static let steppedDaemon = #"""
    import signal
    import sys

    import dbus
    import dbus.service
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib

    INTERFACE = "org.reachabilityd.Reachability1"
    ONLINE = {"Status": dbus.String("reachable-via-wifi"), "Reachable": dbus.Boolean(True),
              "Metered": dbus.Boolean(True), "Connectivity": dbus.String("portal")}
    OFFLINE = {"Status": dbus.String("not-reachable"), "Reachable": dbus.Boolean(False),
               "Metered": dbus.Boolean(False), "Connectivity": dbus.String("none")}


    class SteppedDaemon(dbus.service.Object):
        @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
        def GetAll(self, interface):
            print("read", flush=True)
            return ONLINE if interface == INTERFACE else {}

        @dbus.service.signal(INTERFACE, signature="s")
        def StatusChanged(self, status):
            pass

        @dbus.service.signal("org.freedesktop.DBus.Properties", signature="sa{sv}as")
        def PropertiesChanged(self, interface, changed, invalidated):
            pass


    def status_only():
        daemon.StatusChanged("not-reachable")
        return True


    def the_rest():
        daemon.PropertiesChanged(INTERFACE, OFFLINE, dbus.Array([], signature="s"))
        daemon.StatusChanged("reachable-via-wifi")
        daemon.PropertiesChanged(INTERFACE, ONLINE, dbus.Array([], signature="s"))
        return True


    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    daemon = SteppedDaemon(bus, "/org/reachabilityd/Reachability1")
    name = dbus.service.BusName(INTERFACE, bus)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, status_only)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, the_rest)
    print("owned", flush=True)
    GLib.MainLoop().run()
    """#

    func testALostRouteReachesGLibApplicationsWithStatusChangedAndItsPropertiesChangedEmitsNothingMore() throws {
        // Given a GLib application following a stand-in for the daemon, whose state it has read
        let application = try startFollowingTheDaemon()
        defer { _ = application.process.terminate() }
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        let directory = try XCTUnwrap(directory)
        let script = try FaultInjection.install(Self.steppedDaemon, as: "stepped-daemon.py", in: directory)
        let output = directory.file("stepped-daemon.out")
        let stepped = try ChildProcess(FaultInjection.python, [script, try XCTUnwrap(bus).address],
                                       standardOutput: output, standardError: directory.file("stepped-daemon.err"))
        defer { _ = stepped.terminate() }
        try Poll.until("the stand-in's GetAll answered", observe: { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }) {
            if let ended = stepped.poll() { throw HarnessError("stepped-daemon.py ended (\(ended))") }
            return $0.contains("read")
        }
        let wifi = "available=1 metered=1 connectivity=portal"
        try application.waitForChanges("the stand-in's state") { $0.last == wifi }
        let before = application.changes.count

        // When it sends StatusChanged(not-reachable), its PropertiesChanged held back
        stepped.send(SIGUSR1)

        // Then the application hears of the lost route at once, with the state it implies
        try application.waitForChanges("network-changed on StatusChanged alone") { $0.count > before }
        XCTAssertEqual(Array(application.changes.dropFirst(before)), [Self.offline])
        // and that change's PropertiesChanged emits nothing more: the next change is the next line
        stepped.send(SIGUSR2)
        try application.waitForChanges("network-changed back to Wi-Fi") { $0.last == wifi && $0.count > before + 1 }
        XCTAssertEqual(Array(application.changes.dropFirst(before)), [Self.offline, wifi])
    }

    func testPropertiesReadFromWorkerThreadsWhileTheDaemonChangesRaceWithNothing() throws {
        // Given the module and the application built with ThreadSanitizer, two threads of it
        // reading the properties in a loop (as Evolution's do)
        let application = try startFollowingTheDaemon(["--readers", "2"], build: .threadSanitizer)
        defer { _ = application.process.terminate() }

        // When the default route comes and goes 10 times
        for _ in 0..<10 {
            try netns.ip("route", "del", "default")
            try waitForStatus(.notReachable)
            try addIPv4DefaultRoute()
            try waitForStatus(.reachableViaWWAN)
        }
        try application.waitForChanges("20 network-changed", timeout: .seconds(15)) { $0.count >= 20 }

        // Then ThreadSanitizer saw no race
        XCTAssertEqual(application.process.terminate(grace: .seconds(10)), .exited(0), application.errors)
        let reports = application.errors.components(separatedBy: "WARNING: ThreadSanitizer").count - 1
        print("FIGURE: GIO module under ThreadSanitizer: 20 changes, \(application.lines.last ?? "") property reads by 2 threads, \(reports) race reports")
        XCTAssertEqual(reports, 0, application.errors)
    }

    // MARK: GLib's own tests and xdg-desktop-portal, as real applications

    /// Runs GLib's installed test `name` (TAP) in the namespace with the module, within
    /// `timeout`; requires it to pass, and returns how long it took.
    @discardableResult
    private func runGLibInstalledTest(_ name: String, timeout: Duration) throws -> Duration {
        let started = ContinuousClock.now
        let result = try Command.run("ip", ["netns", "exec", try netns.name, "\(TestPaths.glibInstalledTests)/\(name)"],
                                     environment: try environment(.module), timeout: timeout)
        let took = ContinuousClock.now - started
        let output = result.standardOutput + result.standardError
        XCTAssertTrue(result.succeeded, "\(name): \(output)")
        XCTAssertFalse(output.contains("not ok"), "\(name): \(output)")
        XCTAssertTrue(output.contains("\nok "), "\(name): \(output)")
        return took
    }

    func testGLibsInstalledNetworkMonitorTestsPassWithTheModuleAlsoWithAStalledDaemon() throws {
        // Given GLib's own tests (libglib2.0-tests), a running daemon, and its GetAll calls recorded
        try TestPaths.requireTestTool("\(TestPaths.glibInstalledTests)/network-monitor")
        try startDaemonOverWWAN()
        let (monitor, calls) = try recordGetAllCalls()
        defer { _ = monitor.terminate() }

        // When / Then: they pass with the module as the default monitor, which reads the daemon
        for test in ["network-monitor", "network-monitor-race"] {
            let took = try runGLibInstalledTest(test, timeout: .seconds(60))
            print("FIGURE: GLib's installed \(test) with the module: passed in \(took)")
        }
        try Poll.until("the tests' monitors read the daemon", observe: calls) { $0.count >= 2 }

        // When the daemon is stopped (SIGSTOP), still owning its name
        let daemon = try XCTUnwrap(daemon)
        daemon.send(SIGSTOP)
        defer { daemon.send(SIGCONT) }

        // Then the race test still passes, without waiting out the call timeout in each of its
        // 20 processes (102 s then; the bound here is the command's timeout)
        let took = try runGLibInstalledTest("network-monitor-race", timeout: .seconds(60))
        print("FIGURE: GLib's installed network-monitor-race with the daemon stopped: passed in \(took)")
    }

    /// `org.freedesktop.portal.NetworkMonitor.GetStatus` as a Flatpak app asks it on the session
    /// bus at `address`: "available=0|1 metered=0|1 connectivity=N" (1 local … 4 full), nil
    /// while the portal does not answer.
    private func portalStatus(_ address: String) throws -> String? {
        struct Reply: Decodable { var data: [[String: BusctlValue]] }
        let result = try Busctl(address: address).run(["--json=short", "call", "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                       "org.freedesktop.portal.NetworkMonitor", "GetStatus"])
        guard result.succeeded, let status = try JSONDecoder().decode(Reply.self, from: Data(result.standardOutput.utf8)).data.first else { return nil }
        let flag = { (key: String) in status[key]?.value == .boolean(true) ? "1" : "0" }
        guard case .unsigned32(let connectivity) = status["connectivity"]?.value else { return "unexpected: \(status)" }
        return "available=\(flag("available")) metered=\(flag("metered")) connectivity=\(connectivity)"
    }

    /// The portal's `CanReach(HOST, PORT)`: its boolean, or the error busctl prints.
    private func portalCanReach(_ address: String, _ host: String, _ port: String) throws -> String {
        let result = try Busctl(address: address).run(["call", "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                       "org.freedesktop.portal.NetworkMonitor", "CanReach", "su", host, port])
        return (result.succeeded ? result.standardOutput : "error \(result.standardError)").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testXdgDesktopPortalsNetworkMonitorGivesFlatpakAppsTheDaemonsStateEvenWhenItStartedWhileTheDaemonStalled() throws {
        // Given the daemon stopped (SIGSTOP) when xdg-desktop-portal starts on a session bus, in
        // the namespace, with the module (the portal asks the host's default monitor once, at
        // its start, for the whole session)
        try TestPaths.requireTestTool(TestPaths.xdgDesktopPortal)
        try startDaemonOverWWAN()
        try netns.ip("route", "add", "unreachable", "192.0.2.0/24")
        let daemon = try XCTUnwrap(daemon)
        daemon.send(SIGSTOP)
        var resumed = false
        defer { if !resumed { daemon.send(SIGCONT) } }
        let sessionDirectory = try TemporaryDirectory(prefix: "rtest-session")
        let session = try PrivateBus.permissive(in: sessionDirectory)
        defer { session.stop() }
        var environment = try environment(.module)
        environment["DBUS_SESSION_BUS_ADDRESS"] = session.address
        environment["LD_LIBRARY_PATH"] = TestPaths.xdgDesktopPortalLibraryPath
        let portal = try ChildProcess("ip", ["netns", "exec", try netns.name, TestPaths.xdgDesktopPortal, "--verbose"], environment: environment,
                                      standardOutput: sessionDirectory.file("portal.log"), standardError: sessionDirectory.file("portal.log"))
        defer { _ = portal.terminate() }
        let portalLog = { (try? String(contentsOfFile: sessionDirectory.file("portal.log"), encoding: .utf8)) ?? "" }
        let started = ContinuousClock.now
        let meanwhile = try Poll.until("the portal answers GetStatus", timeout: .seconds(20), observe: {
            if let ended = portal.poll() { throw HarnessError("xdg-desktop-portal ended (\(ended)): \(portalLog())") }
            return try self.portalStatus(session.address)
        }) { $0 != nil }
        print("FIGURE: xdg-desktop-portal started while the daemon was stopped: answered after \(ContinuousClock.now - started): \(meanwhile ?? "")")

        // When the daemon resumes
        daemon.send(SIGCONT)
        resumed = true

        // Then Flatpak apps get the daemon's state (only the daemon says metered), as it publishes it
        let online = "available=1 metered=1 connectivity=4"
        try Poll.until("the portal's GetStatus to be the daemon's", timeout: .seconds(20), observe: { try self.portalStatus(session.address) }) { $0 == online }
        XCTAssertEqual(try busctl.properties()[.metered], .boolean(true))
        XCTAssertEqual(try portalCanReach(session.address, "198.51.100.7", "443"), "b true")
        XCTAssertEqual(try portalCanReach(session.address, "192.0.2.7", "443"), "b false")

        // When the link loses carrier (the kernel keeps the route: GLib's monitor would say online)
        try netns.ip("link", "set", "ra1", "down")
        try waitForStatus(.notReachable)

        // Then the portal follows the daemon
        try Poll.until("the portal's GetStatus to follow the daemon", observe: { try self.portalStatus(session.address) }) { $0 == "available=0 metered=0 connectivity=1" }
        XCTAssertEqual(try portalCanReach(session.address, "198.51.100.7", "443"), "b false")
    }
}

/// A running GLib application: `gio/tests/follow.c` in the test namespace, its lines in a file.
private final class RunningApplication {
    /// The process (`ip netns exec` becomes the application).
    let process: ChildProcess
    private let outputPath: String
    private let errorPath: String

    init(namespace: String, binary: String, arguments: [String], environment: [String: String], directory: TemporaryDirectory) throws {
        outputPath = directory.file("follow.out")
        errorPath = directory.file("follow.err")
        process = try ChildProcess("ip", ["netns", "exec", namespace, binary] + arguments, environment: environment,
                                   standardOutput: outputPath, standardError: errorPath)
    }

    /// The lines printed so far.
    var lines: [String] {
        ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// What it wrote to stderr so far.
    var errors: String {
        (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    }

    /// The states of the `changed` lines so far (`network-changed`).
    var changes: [String] {
        lines.filter { $0.hasPrefix("changed ") }.map { String($0.dropFirst("changed ".count)) }
    }

    /// Waits for the first line satisfying `accept`; fails at once when the application ends.
    @discardableResult
    func waitForLine(_ what: String, timeout: Duration = Poll.defaultTimeout, _ accept: (String) -> Bool) throws -> String {
        let lines = try Poll.until(what, timeout: timeout, observe: observing { self.lines }) { $0.contains(where: accept) }
        return lines.first(where: accept)!
    }

    /// Waits until the `changed` states satisfy `accept`; fails at once when the application ends.
    func waitForChanges(_ what: String, timeout: Duration = Poll.defaultTimeout, _ accept: ([String]) -> Bool) throws {
        try Poll.until(what, timeout: timeout, observe: observing { self.changes }, accept: accept)
    }

    /// Asks can_reach (SIGUSR1) and returns its `reach` line.
    func canReach() throws -> String {
        let asked = lines.filter { $0.hasPrefix("reach ") }.count
        process.send(SIGUSR1)
        let answers = try Poll.until("a can_reach answer", observe: observing { self.lines.filter { $0.hasPrefix("reach ") } }) { $0.count > asked }
        return answers[asked]
    }

    /// `read`, failing once the application has ended (with its stderr).
    private func observing<Value>(_ read: @escaping () -> Value) -> () throws -> Value {
        {
            if let ended = self.process.poll() { throw HarnessError("the application ended (\(ended)): \(self.errors)") }
            return read()
        }
    }
}
