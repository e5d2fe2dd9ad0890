import Foundation
import ReachabilityCore
import XCTest

/// The base of the daemon tests: each test gets its own private bus, network namespace and,
/// once it calls `startDaemon`, daemon and signal recorder.
///
/// Tear-down stops the daemon with SIGTERM and asserts it exits 0 within 1 s, prints the
/// daemon's and the bus's logs when the test failed, then the test's failure messages again
/// (CI shows a failed run's tail), then deletes the namespace and the files.
open class DaemonTestCase: XCTestCase {
    /// The test's scratch directory: bus socket, logs, fake sysfs.
    package private(set) var directory: TemporaryDirectory?
    /// The test's bus.
    package private(set) var bus: PrivateBus?
    /// The test's namespace; `ra0`/`ra1` live in it.
    package private(set) var namespace: TestNamespace?
    /// The daemon, once started.
    package private(set) var daemon: DaemonProcess?
    /// The daemon's signals since it became ready, once started.
    package private(set) var recorder: SignalRecorder?

    /// `<policy>` elements the test's bus adds to the project's (e.g. letting a stand-in for
    /// another service own its name); nil: none.
    open var extraBusPolicy: String? { nil }

    /// This test's failure messages, repeated after the logs at tear-down: CI shows a failed
    /// run's last lines, and the logs would push them out of view.
    private var failureMessages: [String] = []

    open override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        failureMessages.append("\((filePath as NSString).lastPathComponent):\(lineNumber): \(description)")
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    open override func setUpWithError() throws {
        try super.setUpWithError()
        try PrivilegeGate.requireRoot()
        let directory = try TemporaryDirectory(prefix: "rtest")
        self.directory = directory
        bus = try PrivateBus(in: directory, extraPolicy: extraBusPolicy)
        namespace = try TestNamespace()
    }

    open override func tearDownWithError() throws {
        recorder?.stop()
        if let daemon, !daemon.wasStopped {
            if let ended = daemon.termination {
                XCTFail("reachabilityd exited during the test (\(ended))")
                _ = daemon.stop()
            } else {
                switch daemon.stop(grace: .seconds(1)) {
                case .exited(0)?: break
                case let ended?: XCTFail("reachabilityd must exit 0 on SIGTERM, but ended with \(ended)")
                case nil: XCTFail("reachabilityd did not exit within 1 s of SIGTERM; killed it")
                }
            }
        }
        if (testRun?.totalFailureCount ?? 1) > 0 {
            if let daemon {
                print("--- reachabilityd log (\(name)) ---\n\(daemon.log)--- end ---")
                print("--- sd_notify messages ---\n\(daemon.notifications.joined(separator: "\n---\n"))\n--- end ---")
            }
            if let recorder { print("--- busctl monitor ---\n\(recorder.diagnostics)--- end ---") }
            if let bus { print("--- dbus-daemon log ---\n\(bus.log)--- end ---") }
        }
        if !failureMessages.isEmpty {
            let shortened = failureMessages.map { $0.count <= 3000 ? $0 : "\($0.prefix(1500)) […] \($0.suffix(1500))" }
            print("--- failures of \(name), repeated ---\n\(shortened.joined(separator: "\n"))\n--- end ---")
        }
        failureMessages = []
        recorder = nil
        daemon = nil
        namespace?.delete()
        namespace = nil
        bus?.stop()
        bus = nil
        directory?.remove()
        directory = nil
        try super.tearDownWithError()
    }

    /// A client of the test's bus.
    package var busctl: Busctl {
        get throws { Busctl(address: try unwrap(bus).address) }
    }

    /// The test's namespace.
    package var netns: TestNamespace {
        get throws { try unwrap(namespace) }
    }

    /// The daemon's signal recorder.
    package var signals: SignalRecorder {
        get throws { try unwrap(recorder, "call startDaemon() first") }
    }

    /// Starts the daemon in the namespace, waits for `READY=1`, checks it then owns its bus name,
    /// and starts recording signals.
    ///
    /// - Parameters:
    ///   - sysfsRoot: a fake sysfs tree for `--sysfs-root`, or nil for the real one.
    ///   - arguments: further daemon arguments, e.g. `["--config", PATH]`.
    ///   - environment: further environment variables, e.g. `WATCHDOG_USEC`.
    ///   - hiding: files the daemon must find unusable (see ``DaemonProcess``).
    /// - Throws: `HarnessError` when the daemon does not become ready.
    package func startDaemon(sysfsRoot: String? = nil, arguments: [String] = [], environment: [String: String] = [:], hiding: [String] = []) throws {
        let daemon = try DaemonProcess(
            binary: try TestPaths.daemonBinary(), namespace: try netns, busAddress: try unwrap(bus).address,
            directory: try unwrap(directory), sysfsRoot: sysfsRoot, arguments: arguments, environment: environment, hiding: hiding
        )
        self.daemon = daemon
        try daemon.waitUntilReady()
        XCTAssertNotNil(try busctl.daemonNameOwner(), "READY=1 came before the daemon owned \(BusContract.busName)")
        recorder = try SignalRecorder(busctl: try busctl, directory: try unwrap(directory))
    }

    /// Waits until the published properties satisfy `condition`.
    ///
    /// - Parameters:
    ///   - what: what is awaited, for the failure message.
    ///   - timeout: the deadline.
    ///   - condition: a predicate over one `GetAll` snapshot.
    /// - Returns: the first snapshot satisfying it.
    /// - Throws: `HarnessError` with the last snapshot, on timeout.
    @discardableResult
    package func waitForProperties(
        _ what: @autoclosure () -> String,
        timeout: Duration = Poll.defaultTimeout,
        where condition: (PublishedProperties) -> Bool
    ) throws -> PublishedProperties {
        let busctl = try busctl
        let read = try Poll.until(what(), timeout: timeout, observe: { Result { try busctl.properties() } }) { read in
            (try? read.get()).map(condition) ?? false
        }
        return try read.get()
    }

    /// Waits until `Status` is `status`.
    ///
    /// - Parameter status: the awaited status.
    /// - Returns: the first snapshot with that status.
    /// - Throws: `HarnessError` with the last snapshot, on timeout.
    @discardableResult
    package func waitForStatus(_ status: ReachabilityStatus) throws -> PublishedProperties {
        try waitForProperties("Status \(status.rawValue)") { $0.status == status.rawValue }
    }

    /// Gives `ra0` the IPv4 address 10.77.0.2/24 and brings both veth ends up: on-link, no default.
    ///
    /// - Throws: `HarnessError` when an `ip` command fails.
    package func configureIPv4Link() throws {
        let netns = try netns
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
    }

    /// Brings the veth pair and the stacked `link` (a bridge, macvlan or tunnel over ra0) up,
    /// waits for its carrier, gives it `address` and routes `default via GATEWAY` through it.
    ///
    /// - Parameters:
    ///   - link: the stacked link.
    ///   - address: its address with prefix length.
    ///   - gateway: the default route's gateway, on `address`'s subnet.
    /// - Throws: `HarnessError` when a command fails or the carrier never comes.
    package func routeDefault(overStackedLink link: String, address: String, gateway: String = "10.77.0.1") throws {
        let netns = try netns
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
        try netns.ip("link", "set", link, "up")
        try netns.waitForCarrier(link)
        try netns.ip("addr", "add", address, "dev", link)
        try netns.ip("route", "add", "default", "via", gateway, "dev", link)
    }

    /// Waits for `expected.count` `StatusChanged` signals and asserts they carried `expected`.
    ///
    /// - Parameter expected: the statuses, in order, since the recorder started.
    /// - Throws: `HarnessError` when fewer arrive in time.
    package func assertStatusChanges(_ expected: [ReachabilityStatus], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try signals.waitForStatusChanged(count: expected.count), expected.map(\.rawValue), file: file, line: line)
    }

    /// Waits until the daemon's routing announcements are settled (its `Explain()` shows neither a
    /// `RoutesChanged` nor an `Interfaces` listing due, nor a route-filter rebuild pending): the
    /// rest of an earlier burst is announced, the filter is the one for the watched destinations,
    /// and a count taken now is not moved by any of them.
    ///
    /// - Throws: `HarnessError` when they are not settled by the deadline.
    package func waitUntilRoutingIsSettled() throws {
        try Poll.until("no RoutesChanged or Interfaces listing due, no filter rebuild pending", observe: { try busctl.explain() }) {
            !$0.contains("RoutesChanged: one is due") && !$0.contains("Route filter: keeping every route") && !$0.contains("Interfaces: a listing is due")
        }
    }

    /// The published properties once the daemon's announcements are settled
    /// (``waitUntilRoutingIsSettled()``): what a test compares `Generation` with, or counts
    /// signals from, after its set-up, so that the set-up's own `Interfaces` listing (announced
    /// at the end of its window, after the status it brought) is not taken for the change under test.
    ///
    /// - Throws: `HarnessError` when they are not settled by the deadline, or `busctl` fails.
    package func settledProperties() throws -> PublishedProperties {
        try waitUntilRoutingIsSettled()
        return try busctl.properties()
    }

    /// Starts the daemon with the configuration file `configuration`, makes ra0 carry the default
    /// route and waits for the one `StatusChanged` to reachable-via-ethernet.
    ///
    /// - Parameter configuration: the file's text.
    /// - Returns: the file's path.
    /// - Throws: `HarnessError` when a command fails or the status never comes.
    @discardableResult
    package func startReachableDaemon(configuration: String) throws -> String {
        try writeConfiguration(configuration)
        let path = try configurationPath
        try startDaemon(arguments: ["--config", path])
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        try assertStatusChanges([.reachableViaEthernet])
        return path
    }

    /// Starts the daemon with a default route over ra0 in main, ra1 with an address of its own
    /// (10.78.0.2), and user nobody's (65534) traffic sent to table 100, whose default is
    /// unreachable; waits until it publishes reachable-via-ethernet.
    ///
    /// - Throws: `HarnessError` when a command fails or the status never comes.
    package func startWithNobodysTrafficInAnUnreachableTable() throws {
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "ra1")
        try netns.ip("rule", "add", "uidrange", "65534-65534", "lookup", "100")
        try netns.ip("route", "add", "unreachable", "default", "table", "100")
        try waitForStatus(.reachableViaEthernet)
    }

    /// Starts the daemon with ra0 holding 10.77.0.2 and fd00::2 (this host's own addresses) and
    /// an IPv4 default route over it, and waits until it publishes reachable-via-ethernet.
    ///
    /// - Throws: `HarnessError` when a command fails or the status never comes.
    package func startReachableWithOwnAddressesOnRa0() throws {
        try startDaemon()
        try configureIPv4Link()
        try bringUpIPv6VethPair()
        try netns.ip("-6", "addr", "add", "fd00::2/64", "dev", "ra0", "nodad")
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
    }

    /// Asks `CheckAddress` about each of `destinations` from a connection that stays open (the
    /// daemon forgets a caller's watched destinations when its last connection closes, so a
    /// `busctl call` watches nothing after it returns).
    ///
    /// - Parameters:
    ///   - destinations: the addresses, asked in order.
    ///   - user: the unprivileged user to call as (through the bus policy, e.g. `nobody`), nil for root.
    ///   - method: `CheckAddress` or `CheckDestination`.
    /// - Returns: the caller's process (its watches last until it is terminated) and its replies,
    ///   one line each.
    /// - Throws: `HarnessError` when the caller does not answer.
    package func holdCheckAddress(
        _ destinations: [String], as user: String? = nil, method: String = BusContract.checkAddressMethod
    ) throws -> (caller: ChildProcess, reply: String) {
        let directory = try unwrap(directory)
        let script = try FaultInjection.install(FaultScripts.busClient, as: "bus_client.py", in: directory)
        let output = directory.file("hold-\(destinations.joined(separator: ",")).out")
        let mode = method == BusContract.checkDestinationMethod ? "hold-destination" : "hold"
        let command = [FaultInjection.python, script, mode, try unwrap(bus).address] + destinations
        if user != nil, chmod(directory.path, 0o755) != 0 { throw HarnessError.lastError("chmod \(directory.path)") }
        let caller = try user.map { user in
            try ChildProcess("setpriv", try Self.setprivArguments(user: user) + command, standardOutput: output)
        } ?? ChildProcess(command[0], Array(command.dropFirst()), standardOutput: output)
        let reply = try Poll.until("the holding caller's replies", observe: { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }) {
            if let ended = caller.poll() { throw HarnessError("bus_client.py hold ended (\(ended))") }
            return $0.filter { $0 == "\n" }.count == destinations.count
        }
        return (caller, reply)
    }

    /// `setpriv`'s arguments that run a command as `user`, with its primary group and no other.
    ///
    /// - Throws: `HarnessError` when the system has no such user.
    package static func setprivArguments(user: String) throws -> [String] {
        guard let entry = getpwnam(user) else { throw HarnessError("no user \(user)") }
        return ["--reuid=\(entry.pointee.pw_uid)", "--regid=\(entry.pointee.pw_gid)", "--clear-groups"]
    }

    /// The test's configuration file, `reachabilityd.conf` in its directory.
    package var configurationPath: String {
        get throws { try unwrap(directory).file("reachabilityd.conf") }
    }

    /// Writes the test's configuration file; SIGHUP makes a daemon started with it read it again.
    ///
    /// - Throws: when the file cannot be written.
    package func writeConfiguration(_ text: String) throws {
        try text.write(toFile: try configurationPath, atomically: true, encoding: .utf8)
    }

    /// Makes bridge `bridge` whose one port is a container's veth end (vethc0a1b2, peer ceth0),
    /// all up, and waits for the bridge's carrier.
    ///
    /// - Parameter bridge: the bridge's name.
    /// - Throws: `HarnessError` when a command fails or the carrier never comes.
    package func addBridgeWithContainerVeth(_ bridge: String) throws {
        try netns.addQuietVethPair("vethc0a1b2", peer: "ceth0")
        try addBridge(bridge, port: "vethc0a1b2", peer: "ceth0")
    }

    /// Makes bridge `bridge` (IPv6 off) with one port, `port`, a veth end whose other end is
    /// `peer`; brings all three up and waits for the bridge's carrier.
    ///
    /// - Parameters:
    ///   - bridge: the bridge's name.
    ///   - port: the veth end that becomes its port.
    ///   - peer: the other end of `port`'s pair.
    /// - Throws: `HarnessError` when a command fails or the carrier never comes.
    package func addBridge(_ bridge: String, port: String, peer: String) throws {
        let netns = try netns
        try netns.ip("link", "add", bridge, "type", "bridge")
        try netns.setIPv6(enabled: false, on: bridge)
        try netns.ip("link", "set", port, "master", bridge)
        for link in [peer, port, bridge] { try netns.ip("link", "set", link, "up") }
        try netns.waitForCarrier(bridge)
    }

    /// Enables IPv6 on both veth ends, ra0 and ra1, and brings them up; no address.
    ///
    /// - Throws: `HarnessError` when a command fails.
    package func bringUpIPv6VethPair() throws {
        let netns = try netns
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.setIPv6(enabled: true, on: "ra1")
        try netns.ip("link", "set", "ra1", "up")
        try netns.ip("link", "set", "ra0", "up")
    }

    /// Brings ra0 and ra1 up with IPv6 and a link-local address each (fe80::2 and fe80::3, DAD
    /// skipped), so that fe80::/64 is on both links and nothing is global.
    ///
    /// - Throws: `HarnessError` when a command fails.
    package func bringUpLinkLocalOnBothLinks() throws {
        let netns = try netns
        try bringUpIPv6VethPair()
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        try netns.ip("addr", "add", "fe80::3/64", "dev", "ra1", "nodad")
    }

    /// Makes ra0's ARP retries fast (100 ms), sends one UDP datagram toward `destination` from
    /// the namespace (nothing listens; the packet never leaves the namespace) and waits until the
    /// kernel's entry for `neighbour` (the destination itself when on-link) is `state` ("FAILED").
    ///
    /// - Throws: `HarnessError` when a command fails or the state does not come.
    package func resolveNeighbour(toward destination: String, neighbour: String? = nil, until state: String) throws {
        let netns = try netns
        try netns.sysctl("net.ipv4.neigh.ra0.retrans_time_ms", "100")
        try Command.run("ip", ["netns", "exec", netns.name, "python3", "-c",
                               "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('\(destination)', 9))"]).check()
        try Poll.until("\(neighbour ?? destination) \(state)", observe: { try netns.ip("neigh", "show", neighbour ?? destination, "dev", "ra0") }) {
            $0.contains(state)
        }
    }

    /// Configures the second physical link rb0/rb1 (created with `addQuietVethPair`): both ends
    /// up, 10.78.0.2/24 on rb0.
    ///
    /// - Throws: `HarnessError` when a command fails.
    package func configureSecondIPv4Link() throws {
        let netns = try netns
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "rb0")
        try netns.ip("link", "set", "rb1", "up")
        try netns.ip("link", "set", "rb0", "up")
    }

    /// Adds `default via 10.77.0.1 dev ra0` to the main table.
    ///
    /// - Throws: `HarnessError` when `ip` fails.
    package func addIPv4DefaultRoute() throws {
        try netns.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0")
    }

    /// Enables IPv6 on both veth ends, gives `ra0` 2001:db8:77::2/64 (no DAD), brings both ends
    /// up, and adds `default via 2001:db8:77::1 dev ra0`.
    ///
    /// - Throws: `HarnessError` when a command fails.
    package func configureIPv6Default() throws {
        let netns = try netns
        try bringUpIPv6VethPair()
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:77::1", "dev", "ra0")
    }

    /// The route messages the daemon has read so far, from its debug log lines
    /// "Read N rtnetlink message(s), M of them route(s)."
    package func routeMessagesRead() -> Int {
        (daemon?.log ?? "").split(separator: "\n").reduce(0) { total, line in
            guard let range = line.range(of: #", (\d+) of them route"#, options: .regularExpression) else { return total }
            let digits = line[range].filter(\.isNumber)
            return total + (Int(digits) ?? 0)
        }
    }

    /// Returns a value the set-up made, or throws `HarnessError`.
    private func unwrap<T>(_ value: T?, _ hint: String = "set-up did not finish") throws -> T {
        guard let value else { throw HarnessError("\(T.self) missing: \(hint)") }
        return value
    }
}
