import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The shipped alert rules in a real Prometheus (Debian's, unpacked by `make deps`) scraping a
/// fleet of three simulated hosts: each a network namespace with its own bus, daemon and
/// node_exporter (textfile collector only), reached from Prometheus' namespace over a veth of
/// its own. A default route deleted on one host makes exactly that host's
/// `ReachabilityNotReachable` fire, and it clears when the route returns; the other hosts stay
/// quiet throughout. Scrapes and evaluations every second, and the rule's `for:` shortened from
/// 5 minutes to 5 seconds in the test's copy of the rules (the one test-only change), so that
/// the test takes seconds. Prints the time from the outage to the firing alert.
final class FleetAlertTests: XCTestCase {
    /// The test's copy of the rules waits this long instead of the shipped 5 minutes.
    private static let notReachableFor = 5
    private var directory: TemporaryDirectory?
    private var prometheusNamespace: TestNamespace?
    private var hosts: [SimulatedHost] = []
    private var prometheus: ChildProcess?

    override func setUpWithError() throws {
        try super.setUpWithError()
        try PrivilegeGate.requireRoot()
        for tool in [TestPaths.prometheus, TestPaths.nodeExporter] { try TestPaths.requireTestTool(tool) }
        directory = try TemporaryDirectory(prefix: "rtest-fleet")
        prometheusNamespace = try TestNamespace(withVethPair: false)
    }

    override func tearDownWithError() throws {
        if let prometheus {
            _ = prometheus.terminate()
            if (testRun?.totalFailureCount ?? 1) > 0, let directory {
                print("--- prometheus log ---\n\((try? String(contentsOfFile: directory.file("prometheus.log"), encoding: .utf8)) ?? "")--- end ---")
            }
        }
        for host in hosts { host.stop(printingLogs: (testRun?.totalFailureCount ?? 1) > 0) }
        hosts = []
        prometheusNamespace?.delete()
        directory?.remove()
        try super.tearDownWithError()
    }

    func testARouteLostOnOneHostFiresExactlyItsAlertAndClearsWhenItReturns() throws {
        // Given three reachable hosts scraped every second by Prometheus with the shipped rules
        let directory = try XCTUnwrap(directory)
        let monitor = try XCTUnwrap(prometheusNamespace)
        for number in 1...3 {
            hosts.append(try SimulatedHost(number: number, prometheusNamespace: monitor))
        }
        let rules = try String(contentsOfFile: TestPaths.alertRules, encoding: .utf8)
        let shortened = rules.replacingOccurrences(of: "expr: reachabilityd_status{status=\"not-reachable\"} == 1\n        for: 5m\n",
                                                   with: "expr: reachabilityd_status{status=\"not-reachable\"} == 1\n        for: \(Self.notReachableFor)s\n")
        XCTAssertNotEqual(shortened, rules, "the test shortens ReachabilityNotReachable's for:")
        try shortened.write(toFile: directory.file("rules.yml"), atomically: true, encoding: .utf8)
        let targets = hosts.map { "'\($0.exporterAddress)'" }.joined(separator: ", ")
        try """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files: [rules.yml]
            scrape_configs:
              - job_name: node
                static_configs:
                  - targets: [\(targets)]

            """.write(toFile: directory.file("prometheus.yml"), atomically: true, encoding: .utf8)
        prometheus = try ChildProcess("ip", ["netns", "exec", monitor.name, TestPaths.prometheus,
                                             "--config.file=\(directory.file("prometheus.yml"))",
                                             "--storage.tsdb.path=\(directory.file("data"))",
                                             "--web.listen-address=127.0.0.1:9090"],
                                      standardOutput: directory.file("prometheus.log"), standardError: directory.file("prometheus.log"))
        let api = PrometheusAPI(namespace: monitor.name)
        // (curl fails until Prometheus listens)
        try Poll.until("Prometheus scraping the three hosts' reachabilityd_status", timeout: .seconds(60), observe: {
            (try? api.query(#"reachabilityd_status{status="reachable-via-ethernet"} == 1"#)) ?? []
        }) { $0.count == 3 }
        // (the staleness rule's selector matches node_exporter's file label)
        XCTAssertEqual(try api.query(#"node_textfile_mtime_seconds{file=~"(.*/)?reachabilityd\\.prom"}"#).count, 3)
        XCTAssertEqual(try api.alerts(), [], "no alert before the outage")

        // When host 2 loses its default route
        let lost = hosts[1]
        let outage = Date()
        try lost.namespace.ip("route", "del", "default")

        // Then its ReachabilityNotReachable fires, and no other alert does
        var others: [PrometheusAPI.Alert] = []
        let firing = try Poll.until("host 2's ReachabilityNotReachable firing", timeout: .seconds(60), observe: { () throws -> [PrometheusAPI.Alert] in
            let alerts = try api.alerts()
            others += alerts.filter { $0.instance != lost.exporterAddress || $0.name != "ReachabilityNotReachable" }
            return alerts
        }) { $0.contains { $0.state == "firing" } }
        let firedAfter = Date().timeIntervalSince(outage)
        XCTAssertEqual(firing.map(\.name), ["ReachabilityNotReachable"])
        XCTAssertEqual(firing.map(\.instance), [lost.exporterAddress])
        print("FleetAlertTests: outage to firing alert \(String(format: "%.1f", firedAfter)) s (for: \(Self.notReachableFor) s, scrape and evaluation every 1 s)")

        // When the route returns, the alert clears, and the others stayed quiet all along
        try lost.addDefaultRoute()
        try Poll.until("the alert cleared", timeout: .seconds(30), observe: { () throws -> [PrometheusAPI.Alert] in
            let alerts = try api.alerts()
            others += alerts.filter { $0.instance != lost.exporterAddress || $0.name != "ReachabilityNotReachable" }
            return alerts
        }) { $0.isEmpty }
        XCTAssertEqual(others, [], "alerts other than host 2's ReachabilityNotReachable")
    }
}

/// One simulated host of the fleet: a namespace whose `ra0` has a default route, its own bus and
/// daemon writing `reachabilityd.prom`, and node_exporter serving it on a veth to Prometheus'
/// namespace (10.99.N.2:9100; Prometheus' end is 10.99.N.1).
private final class SimulatedHost {
    let namespace: TestNamespace
    let exporterAddress: String
    private let directory: TemporaryDirectory
    private let bus: PrivateBus
    private let daemon: DaemonProcess
    private let exporter: ChildProcess

    init(number: Int, prometheusNamespace: TestNamespace) throws {
        directory = try TemporaryDirectory(prefix: "rtest-host\(number)")
        bus = try PrivateBus(in: directory)
        namespace = try TestNamespace()
        // The link to Prometheus: its own subnet, no default route, no IPv6 (quiet)
        try prometheusNamespace.ip("link", "add", "host\(number)", "type", "veth", "peer", "name", "scrape", "netns", namespace.name)
        for (side, name, address) in [(prometheusNamespace, "host\(number)", "10.99.\(number).1/30"), (namespace, "scrape", "10.99.\(number).2/30")] {
            try side.ip("link", "set", name, "addrgenmode", "none")
            try side.setIPv6(enabled: false, on: name)
            try side.ip("addr", "add", address, "dev", name)
            try side.ip("link", "set", name, "up")
        }
        exporterAddress = "10.99.\(number).2:9100"
        try namespace.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try namespace.ip("link", "set", "ra1", "up")
        try namespace.ip("link", "set", "ra0", "up")
        try namespace.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0")
        let textfiles = directory.file("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        try "[Metrics]\nTextfileDirectory=\(textfiles)\n".write(toFile: directory.file("reachabilityd.conf"), atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(binary: try TestPaths.daemonBinary(), namespace: namespace, busAddress: bus.address, directory: directory,
                                   arguments: ["--config", directory.file("reachabilityd.conf")])
        try daemon.waitUntilReady()
        exporter = try ChildProcess("ip", ["netns", "exec", namespace.name, TestPaths.nodeExporter, "--collector.disable-defaults",
                                           "--collector.textfile", "--collector.textfile.directory=\(textfiles)",
                                           "--web.listen-address=\(exporterAddress)"],
                                    standardOutput: directory.file("exporter.log"), standardError: directory.file("exporter.log"))
    }

    /// Puts the default route back.
    func addDefaultRoute() throws {
        try namespace.ip("route", "add", "default", "via", "10.77.0.1", "dev", "ra0")
    }

    /// Stops node_exporter and the daemon, then removes the namespace, the bus and the files.
    func stop(printingLogs: Bool) {
        _ = exporter.terminate()
        let ended = daemon.stop()
        if printingLogs { print("--- \(namespace.name): reachabilityd (\(ended.map { "\($0)" } ?? "killed")) ---\n\(daemon.log)--- end ---") }
        namespace.delete()
        bus.stop()
        directory.remove()
    }
}

/// Prometheus' HTTP API, asked with curl inside Prometheus' namespace.
private struct PrometheusAPI {
    /// An active (pending or firing) alert.
    struct Alert: Equatable, CustomStringConvertible {
        var name: String
        var instance: String
        var state: String
        var description: String { "\(name)@\(instance) \(state)" }
    }

    let namespace: String

    /// The series of an instant query (their labels).
    func query(_ expression: String) throws -> [[String: String]] {
        let data = try get("/api/v1/query", ["query": expression])
        let result = (data["result"] as? [[String: Any]]) ?? []
        return result.map { ($0["metric"] as? [String: String]) ?? [:] }
    }

    /// The active alerts.
    func alerts() throws -> [Alert] {
        let data = try get("/api/v1/alerts", [:])
        return ((data["alerts"] as? [[String: Any]]) ?? []).map { alert in
            let labels = (alert["labels"] as? [String: String]) ?? [:]
            return Alert(name: labels["alertname"] ?? "", instance: labels["instance"] ?? "", state: alert["state"] as? String ?? "")
        }
    }

    /// The `data` of a successful answer; throws on any other.
    private func get(_ path: String, _ parameters: [String: String]) throws -> [String: Any] {
        let arguments = parameters.flatMap { ["--data-urlencode", "\($0.key)=\($0.value)"] }
        let result = try Command.run("ip", ["netns", "exec", namespace, "curl", "-sfG", "http://127.0.0.1:9090\(path)"] + arguments)
        guard result.succeeded else { throw HarnessError("Prometheus \(path): \(result.termination) \(result.standardError)") }
        guard let answer = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
              answer["status"] as? String == "success", let data = answer["data"] as? [String: Any]
        else { throw HarnessError("Prometheus \(path): \(result.standardOutput)") }
        return data
    }
}
