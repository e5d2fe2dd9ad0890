import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The metrics for Prometheus, through Debian's real node_exporter and promtool: the daemon keeps
/// `reachabilityd.prom` in the textfile-collector directory; node_exporter, run in the test's
/// namespace on its loopback, serves it; a route change shows in the next scrape; the counters
/// survive a restart; the file goes with the daemon however it ends.
final class MetricsTests: DaemonTestCase {
    private static let exporter = TestPaths.nodeExporter

    func testNodeExporterServesTheMetricsAndFollowsARouteChange() throws {
        try TestPaths.requireTestTool(Self.exporter)
        try TestPaths.requireTestTool(TestPaths.promtool)
        // Given the daemon keeping its metrics in a textfile directory, and node_exporter
        // reading that directory (its other collectors off), listening on the namespace's loopback
        let textfiles = try startDaemonWithTextfileDirectory()
        try configureIPv4Link()
        let address = "127.0.0.1:9187"
        let exporter = try ChildProcess("ip", ["netns", "exec", try netns.name, Self.exporter, "--collector.disable-defaults",
                                               "--collector.textfile", "--collector.textfile.directory=\(textfiles)",
                                               "--web.listen-address=\(address)"],
                                        standardOutput: try XCTUnwrap(directory).file("exporter.log"),
                                        standardError: try XCTUnwrap(directory).file("exporter.log"))
        defer { _ = exporter.terminate() }
        func scrape() throws -> [String] {
            let result = try Command.run("ip", ["netns", "exec", try netns.name, "curl", "-sf", "http://\(address)/metrics"])
            guard result.succeeded else { return [] }
            return result.standardOutput.split(separator: "\n").map(String.init).filter { $0.hasPrefix("reachabilityd_") }
        }
        let notReachable = #"reachabilityd_status{status="not-reachable"} 1"#
        let before = try Poll.until("reachabilityd's metrics in a scrape", timeout: .seconds(15), observe: scrape) { $0.contains(notReachable) }
        let version = try Command.run(try TestPaths.daemonBinary(), ["--version"]).check().standardOutput.filter { $0 != "\n" }
        XCTAssertTrue(before.contains(#"reachabilityd_build_info{version="\#(version)"} 1"#), "\(before)")

        // When a default route appears
        try addIPv4DefaultRoute()

        // Then the next scrapes follow it: the state set's other series go to 0, the counters count
        let reachable = try Poll.until("the route change in a scrape", observe: scrape) {
            $0.contains(#"reachabilityd_status{status="reachable-via-ethernet"} 1"#)
        }
        // (node_exporter orders a sample's labels by name)
        for line in [
            notReachable.replacingOccurrences(of: "} 1", with: "} 0"),
            #"reachabilityd_interface_info{interface="ra0",transport="ethernet"} 1"#,
            #"reachabilityd_reachable{family="ipv4"} 1"#,
            #"reachabilityd_status_transitions_total{status="not-reachable"} 1"#,
            #"reachabilityd_status_transitions_total{status="reachable-via-ethernet"} 1"#,
        ] {
            XCTAssertTrue(reachable.contains(line), "\(line) in \(reachable)")
        }
        XCTAssertFalse(reachable.contains { $0.contains(#"family="any""#) }, "\(reachable)")
        let outage = try XCTUnwrap(Self.value(of: "reachabilityd_not_reachable_seconds_total", in: reachable))
        XCTAssertGreaterThan(outage, 0)
        // and the file is the text Metrics() returns (what reachabilityctl metrics prints), up to
        // the seconds of the outage, and promtool finds nothing to lint in it
        let path = "\(textfiles)/\(PrometheusMetrics.fileName)"
        XCTAssertEqual(Self.withoutClockedLines(try String(contentsOfFile: path, encoding: .utf8)), Self.withoutClockedLines(try busctl.metrics()))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: textfiles), [PrometheusMetrics.fileName], "no temporary file left")
        let lint = try Command.run("sh", ["-c", "\"$0\" check metrics < \"$1\"", TestPaths.promtool, path])
        XCTAssertTrue(lint.succeeded, "promtool check metrics: \(lint.standardOutput)\(lint.standardError)")

        // When the daemon stops, it takes its figures with it
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: textfiles), [])
    }

    func testTheCountersAndTheLastChangeSurviveARestartWithinTheBoot() throws {
        // Given a daemon that counted an outage and a return
        let textfiles = try startDaemonWithTextfileDirectory()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        _ = try waitForStatus(.reachableViaEthernet)
        let path = "\(textfiles)/\(PrometheusMetrics.fileName)"
        let before = try Poll.until("the return in the file", observe: { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }) {
            $0.contains(#"reachabilityd_status{status="reachable-via-ethernet"} 1"#)
        }.split(separator: "\n").map(String.init)

        // When it is stopped and started again in the same network (its runtime directory kept)
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        try startDaemon(arguments: ["--config", try configurationPath])
        let after = try busctl.metrics().split(separator: "\n").map(String.init)

        // Then nothing is counted twice, the last change did not move, the outage is still there
        for prefix in ["reachabilityd_status_transitions_total", "reachabilityd_last_change_timestamp_seconds", "reachabilityd_not_reachable_seconds_total"] {
            XCTAssertEqual(after.filter { $0.hasPrefix(prefix) }, before.filter { $0.hasPrefix(prefix) }, prefix)
        }
        XCTAssertNotEqual(after.first { $0.hasPrefix("reachabilityd_start_time_seconds ") }, before.first { $0.hasPrefix("reachabilityd_start_time_seconds ") })
    }

    func testTheUnitsStopCommandRemovesTheFileAfterSIGKILL() throws {
        // Given a daemon that wrote its file
        let textfiles = try startDaemonWithTextfileDirectory()
        try Poll.until("the file", observe: { try FileManager.default.contentsOfDirectory(atPath: textfiles) }) { $0 == [PrometheusMetrics.fileName] }

        // When it is killed, the file stays; then the unit's ExecStopPost= command runs
        XCTAssertEqual(try XCTUnwrap(daemon).stop(signal: SIGKILL), .signalled(SIGKILL))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: textfiles), [PrometheusMetrics.fileName])
        let unit = try String(contentsOfFile: "\(TestPaths.repositoryRoot)/systemd/reachabilityd.service", encoding: .utf8)
        XCTAssertTrue(unit.contains("\nExecStopPost=/usr/sbin/reachabilityd --remove-metrics-textfile\n"))
        try Command.run(try TestPaths.daemonBinary(), ["--remove-metrics-textfile", "--config", try configurationPath]).check()

        // Then the file is gone, and a second run finds nothing to do
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: textfiles), [])
        try Command.run(try TestPaths.daemonBinary(), ["--remove-metrics-textfile", "--config", try configurationPath]).check()
    }

    /// Starts the daemon with `[Metrics] TextfileDirectory=` set to a new directory; returns it.
    private func startDaemonWithTextfileDirectory() throws -> String {
        let textfiles = try XCTUnwrap(directory).file("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        try writeConfiguration("[Metrics]\nTextfileDirectory=\(textfiles)\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        return textfiles
    }

    /// The value of the sample `name` (no labels) among `lines`.
    private static func value(of name: String, in lines: [String]) -> Double? {
        lines.first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    /// `text` without the lines that depend on when it was rendered.
    private static func withoutClockedLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.hasPrefix("reachabilityd_not_reachable_seconds_total ") }
    }
}
