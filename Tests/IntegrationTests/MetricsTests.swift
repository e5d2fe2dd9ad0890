import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The metrics for Prometheus, through Debian's real node_exporter: the daemon keeps
/// `reachabilityd.prom` in the textfile-collector directory; node_exporter, run in the test's
/// namespace on its loopback, serves it; a route change shows in the next scrape.
final class MetricsTests: DaemonTestCase {
    private static let exporter = TestPaths.nodeExporter

    func testNodeExporterServesTheMetricsAndFollowsARouteChange() throws {
        try TestPaths.requireTestTool(Self.exporter)
        // Given the daemon keeping its metrics in a textfile directory, and node_exporter
        // reading that directory (its other collectors off), listening on the namespace's loopback
        let directory = try XCTUnwrap(self.directory)
        let textfiles = directory.file("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        try writeConfiguration("[Metrics]\nTextfileDirectory=\(textfiles)\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try configureIPv4Link()
        let address = "127.0.0.1:9187"
        let exporter = try ChildProcess("ip", ["netns", "exec", try netns.name, Self.exporter, "--collector.disable-defaults",
                                               "--collector.textfile", "--collector.textfile.directory=\(textfiles)",
                                               "--web.listen-address=\(address)"],
                                        standardOutput: directory.file("exporter.log"), standardError: directory.file("exporter.log"))
        defer { _ = exporter.terminate() }
        func scrape() throws -> [String] {
            let result = try Command.run("ip", ["netns", "exec", try netns.name, "curl", "-sf", "http://\(address)/metrics"])
            guard result.succeeded else { return [] }
            return result.standardOutput.split(separator: "\n").map(String.init).filter { $0.hasPrefix("reachabilityd_") }
        }
        // (node_exporter orders a sample's labels by name)
        let notReachable = #"reachabilityd_status_info{interface="",status="not-reachable",transport=""} 1"#
        try Poll.until("reachabilityd's metrics in a scrape", timeout: .seconds(15), observe: scrape) { $0.contains(notReachable) }

        // When a default route appears
        try addIPv4DefaultRoute()

        // Then the next scrapes follow it
        let reachable = try Poll.until("the route change in a scrape", observe: scrape) {
            $0.contains(#"reachabilityd_status_info{interface="ra0",status="reachable-via-ethernet",transport="ethernet"} 1"#)
        }
        XCTAssertTrue(reachable.contains(#"reachabilityd_reachable{family="ipv4"} 1"#), "\(reachable)")
        XCTAssertTrue(reachable.contains("reachabilityd_status_changes_total 1"), "\(reachable)")
        XCTAssertTrue(reachable.contains { $0.hasPrefix("reachabilityd_last_change_timestamp_seconds ") }, "\(reachable)")
        // and the file is the text Metrics() returns (what reachabilityctl metrics prints)
        let file = try String(contentsOfFile: "\(textfiles)/\(PrometheusMetrics.fileName)", encoding: .utf8)
        XCTAssertEqual(file, try busctl.metrics())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: textfiles), [PrometheusMetrics.fileName], "no temporary file left")

        // When the daemon stops, it takes its figures with it
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: textfiles), [])
    }
}
