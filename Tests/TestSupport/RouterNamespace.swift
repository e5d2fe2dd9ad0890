import Foundation
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// A router for the connectivity tests: its own network namespace holding the test namespace's
/// `ra1` (10.77.0.1/24, the default gateway the tests route through) and running
/// `testbed/servers/connectivity-server.py`: HTTP on port 8080 whose `/check` answers as
/// ``setMode(_:)`` says, and HTTPS on 8443 with a test CA (``caFile``) serving a captive-portal
/// API. Every packet stays between the two namespaces.
package final class RouterNamespace {
    /// The router's namespace.
    package let namespace: TestNamespace
    /// The servers' state directory (mode, request log, certificates).
    package let state: TemporaryDirectory
    private let server: ChildProcess
    /// The resolvers that never answer, once ``startSilentResolver(at:)`` started them.
    private var silentResolvers: [StubResolver] = []
    /// The DNS servers ``startNameServer(at:answering:)`` started, by address.
    private var nameServers: [String: ChildProcess] = [:]

    /// The check URL the servers answer on.
    package static let checkURL = "http://10.77.0.1:8080/check"
    /// ra1's link-local address, which its router advertisements come from when a test names it
    /// (the kernel's choice may differ while ra1's own EUI-64 address finishes DAD).
    package static let linkLocalAddress = "fe80::1"
    /// The captive-portal API saying the network is captive.
    package static let captiveAPI = "https://10.77.0.1:8443/captive"
    /// The captive-portal API saying it is not.
    package static let openAPI = "https://10.77.0.1:8443/open"
    /// The captive-portal API of a session that lasts ``setSessionSeconds(_:)`` from its first
    /// request (RFC 8908's `seconds-remaining`, `bytes-remaining`, `venue-info-url`,
    /// `can-extend-session`), then says captive; `/check` follows it in mode `session`.
    package static let sessionAPI = "https://10.77.0.1:8443/session"

    /// Moves `ra1` out of `host` into a new namespace, gives it 10.77.0.1/24 (and, with IPv6
    /// enabled, fd00::1/64), brings both ends up and starts the servers.
    ///
    /// - Throws: `HarnessError` when a command fails or the servers do not start.
    package init(linkedTo host: TestNamespace) throws {
        namespace = try TestNamespace(withVethPair: false)
        state = try TemporaryDirectory(prefix: "rrouter")
        try host.ip("link", "set", "ra1", "netns", namespace.name)
        try namespace.ip("addr", "add", "10.77.0.1/24", "dev", "ra1")
        try namespace.setIPv6(enabled: true, on: "ra1")
        try namespace.ip("addr", "add", "\(Self.linkLocalAddress)/64", "dev", "ra1", "nodad")
        try namespace.ip("addr", "add", "fd00::1/64", "dev", "ra1", "nodad")
        try namespace.ip("link", "set", "ra1", "up")
        try host.ip("link", "set", "ra0", "up")
        server = try ChildProcess(
            "ip", ["netns", "exec", namespace.name, FaultInjection.python, TestPaths.connectivityServer, state.path],
            standardOutput: state.file("server.log"), standardError: state.file("server.log")
        )
        let ready = state.file("ready")
        try Poll.until("the connectivity test servers start", timeout: .seconds(30)) {
            if let ended = server.poll() { throw HarnessError("connectivity-server.py exited (\(ended)): \(self.serverLog)") }
            return FileManager.default.fileExists(atPath: ready)
        }
    }

    deinit {
        stop()
    }

    /// Whether ``stop()`` ran.
    private var stopped = false

    /// Ends the servers and deletes the namespace and the files, once; deinit does it too. For a
    /// router a teardown block keeps: XCTest keeps its test cases, and with them their teardown
    /// blocks, until the whole run ends, so deinit would come only after the process is gone
    /// and the servers would outlive the run.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        silentResolvers = []
        for server in nameServers.values { _ = server.terminate() }
        _ = server.terminate()
        namespace.delete()
        state.remove()
    }

    /// Gives `ra1` each of `addresses` (IPv4, on 10.77.0.0/24) and a DNS server on each that
    /// reads every query and answers none: a DNS outage as a client sees it.
    ///
    /// - Throws: `HarnessError` when a command fails or a socket cannot be bound.
    package func startSilentResolver(at addresses: [String]) throws {
        for address in addresses {
            if address != "10.77.0.1" { try namespace.ip("addr", "add", "\(address)/24", "dev", "ra1") }
            silentResolvers.append(try StubResolver(.silent, address: address, in: namespace))
        }
    }

    /// Gives `ra1` `address` (IPv4, on 10.77.0.0/24, unless it has it) and a real DNS server on
    /// it (dnsmasq, reading no file of the machine's) answering each name of `names` with
    /// 10.77.0.1 and every other name with "no such name".
    ///
    /// - Throws: `HarnessError` when a command fails or the server does not answer.
    package func startNameServer(at address: String, answering names: [String]) throws {
        if !(try namespace.ip("-4", "addr", "show", "dev", "ra1")).contains(" \(address)/") {
            try namespace.ip("addr", "add", "\(address)/24", "dev", "ra1")
        }
        let log = state.file("dnsmasq-\(address).log")
        nameServers[address] = try ChildProcess("ip", [
            "netns", "exec", namespace.name, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--bind-interfaces", "--listen-address=\(address)", "--except-interface=lo", "--user=root", "--pid-file=", "--log-facility=-", "--log-queries",
        ] + names.map { "--address=/\($0)/10.77.0.1" }, standardOutput: log, standardError: log)
        try Poll.until("dnsmasq listens on \(address)", timeout: .seconds(10)) {
            if let ended = self.nameServers[address]?.poll() { throw HarnessError("dnsmasq exited (\(ended)): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")") }
            return ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("started")
        }
    }

    /// Gives `ra1` `address` (IPv6, /64) and a real DNS server on it (dnsmasq, reading no file
    /// of the machine's, logging each query) that answers the AAAA question for `ipv4only.arpa`
    /// with `synthesized`, as a network's DNS64 does (RFC 7050), each name of `names` with
    /// `address` itself, and every other name with "no such name".
    ///
    /// - Throws: `HarnessError` when a command fails or the server does not start.
    package func startDNS64NameServer(at address: String, synthesized: String, answering names: [String] = []) throws {
        try namespace.ip("addr", "add", "\(address)/64", "dev", "ra1", "nodad")
        let log = state.file("dnsmasq-\(address).log")
        nameServers[address] = try ChildProcess("ip", [
            "netns", "exec", namespace.name, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--bind-interfaces", "--listen-address=\(address)", "--except-interface=lo", "--user=root", "--pid-file=", "--log-facility=-", "--log-queries",
            "--address=/ipv4only.arpa/\(synthesized)",
        ] + names.map { "--address=/\($0)/\(address)" }, standardOutput: log, standardError: log)
        try Poll.until("dnsmasq listens on \(address)", timeout: .seconds(10)) {
            if let ended = self.nameServers[address]?.poll() { throw HarnessError("dnsmasq exited (\(ended)): \(self.nameServerLog(at: address))") }
            return self.nameServerLog(at: address).contains("started")
        }
    }

    /// What the DNS server on `address` logged (with `--log-queries`: each query).
    package func nameServerLog(at address: String) -> String {
        (try? String(contentsOfFile: state.file("dnsmasq-\(address).log"), encoding: .utf8)) ?? ""
    }

    /// Stops the DNS server on `address` (``startNameServer(at:answering:)``): its queries go
    /// unanswered (the port is closed: each gets an ICMP error, which the resolver takes for no
    /// answer, as from a server that is down).
    package func stopNameServer(at address: String) {
        _ = nameServers.removeValue(forKey: address)?.terminate()
    }

    /// The test CA's certificate (PEM), for `CaptivePortalAPICAFile=`.
    package var caFile: String { state.file("ca.pem") }

    /// What the servers logged.
    package var serverLog: String { (try? String(contentsOfFile: state.file("server.log"), encoding: .utf8)) ?? "" }

    /// How `/check` answers from now on: 204, redirect, html, body, hang, reset, reset-once
    /// (one reset, then `next`) or session (204 while ``sessionAPI``'s session lasts, then a
    /// redirection).
    package func setMode(_ mode: String, next: String = "204") throws {
        try "\(next)\n".write(toFile: state.file("next-mode"), atomically: true, encoding: .utf8)
        try "\(mode)\n".write(toFile: state.file("mode"), atomically: true, encoding: .utf8)
    }

    /// How long ``sessionAPI``'s session lasts from its first request.
    package func setSessionSeconds(_ seconds: Int) throws {
        try "\(seconds)\n".write(toFile: state.file("session-seconds"), atomically: true, encoding: .utf8)
    }

    /// The requests served so far, one "GET PATH ACCEPT CLIENT-ADDRESS" line each (an IPv4
    /// client as `::ffff:10.77.0.2`).
    package var requests: [String] {
        ((try? String(contentsOfFile: state.file("requests"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}

extension DaemonTestCase {
    /// A `[Connectivity]` section checking the router's URL every second, each check given 1 s,
    /// with `extra`'s lines.
    package func checkConfiguration(_ extra: String = "") -> String {
        "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=1\nCheckTimeoutSec=1\n\(extra)"
    }

    /// Waits until `Connectivity` is `connectivity` (and `CaptivePortal` is `portal`, when given).
    @discardableResult
    package func waitForConnectivity(_ connectivity: Connectivity, portal: String? = nil) throws -> PublishedProperties {
        try waitForProperties("connectivity \(connectivity.rawValue)" + (portal.map { " with portal \($0)" } ?? "")) {
            $0.string(.connectivity) == connectivity.rawValue && (portal == nil || $0.string(.captivePortal) == portal)
        }
    }

    /// Starts a router whose `/check` answers 204 while ``RouterNamespace/sessionAPI``'s session
    /// of `sessionSeconds` lasts, and the daemon checking it every hour with the router's API
    /// trusted through the test CA, IPv6 on ra0 for the router advertisement (the API is not
    /// advertised yet); waits for `full`.
    ///
    /// - Returns: the router; keep it for the test's length.
    /// - Throws: `HarnessError` when a step fails.
    package func startDaemonBehindSessionRouter(sessionSeconds: Int) throws -> RouterNamespace {
        let router = try startDaemonBehindRouter(configuration: "", mode: "session")
        try router.setSessionSeconds(sessionSeconds)
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        try writeConfiguration(
            "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=3600\nCheckTimeoutSec=2\nCaptivePortalAPICAFile=\(router.caFile)\n"
        )
        guard let daemon else { throw HarnessError("no daemon: set-up did not finish") }
        daemon.send(SIGHUP)
        try waitForConnectivity(.full)
        return router
    }

    /// Starts a router (see ``RouterNamespace``), gives ra0 10.77.0.2/24, starts the daemon
    /// with the configuration file `configuration` (a `[Connectivity]` section, or nothing),
    /// then routes the default via 10.77.0.1.
    ///
    /// - Parameters:
    ///   - configuration: the configuration file's text.
    ///   - mode: how the check server answers at first.
    ///   - environment: added to the daemon's environment (`WATCHDOG_USEC`…).
    ///   - hiding: files the daemon must find unusable (see ``DaemonProcess``).
    /// - Returns: the router; keep it for the test's length.
    /// - Throws: `HarnessError` when a step fails.
    package func startDaemonBehindRouter(
        configuration: String, mode: String = "204", environment: [String: String] = [:], hiding: [String] = []
    ) throws -> RouterNamespace {
        let router = try RouterNamespace(linkedTo: try netns)
        try router.setMode(mode)
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try writeConfiguration(configuration)
        try startDaemon(arguments: ["--config", try configurationPath], environment: environment, hiding: hiding)
        try addIPv4DefaultRoute()
        return router
    }
}
