import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `reachabilityctl node-problem` against the real daemon, by node-problem-detector's
/// custom-plugin contract (exit 0 OK, 1 problem, 2 unknown; one line of at most 80 bytes), and
/// the example NPD configuration that runs it.
final class NodeProblemTests: DaemonTestCase {
    func testEachConditionAnswersByThePluginContract() throws {
        // Given a daemon with no default route
        try startDaemon()
        try configureIPv4Link()

        // When / Then: the network is a problem, and so is DNS (nothing routes its nameserver
        // from a usable source); a portal is not
        try assertAnswer(.network, exit: 1, prefix: "Not reachable: ")
        try assertAnswer(.dns, exit: 1, prefix: "DNS unreachable")
        try assertAnswer(.portal, exit: 0, prefix: "No captive portal (connectivity none)")

        // When a default route appears
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // Then the network is fine, and a portal is still unknown (no CheckURL=)
        try assertAnswer(.network, exit: 0, prefix: "Reachable via ra0")
        try assertAnswer(.dns, exit: 0, prefix: "DNS reachable")
        try assertAnswer(.portal, exit: 2, prefix: "Connectivity unknown")

        // When the daemon is gone, nothing can be told (2, never 69)
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        for condition in NodeCondition.allCases { try assertAnswer(condition, exit: 2, prefix: "reachabilityd is not running") }
    }

    func testTheExampleConfigurationRunsEveryConditionThroughTheCommand() throws {
        // Given the example NPD custom-plugin configuration
        let path = "\(TestPaths.repositoryRoot)/Examples/node-problem-detector/reachabilityd-plugin-monitor.json"
        let configuration = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])

        // Then it is a custom plugin cutting output at 80 bytes, whose conditions are the
        // command's, each with a permanent rule running it
        XCTAssertEqual(configuration["plugin"] as? String, "custom")
        let plugin = try XCTUnwrap(configuration["pluginConfig"] as? [String: Any])
        XCTAssertEqual(plugin["max_output_length"] as? Int, NodeCondition.Verdict.maximumLength)
        let conditions = try XCTUnwrap(configuration["conditions"] as? [[String: Any]]).compactMap { $0["type"] as? String }
        XCTAssertEqual(conditions, NodeCondition.allCases.map(\.conditionType))
        let rules = try XCTUnwrap(configuration["rules"] as? [[String: Any]])
        for condition in NodeCondition.allCases {
            let rule = try XCTUnwrap(rules.first { $0["condition"] as? String == condition.conditionType }, condition.conditionType)
            XCTAssertEqual(rule["type"] as? String, "permanent")
            XCTAssertEqual(rule["path"] as? String, "/usr/bin/reachabilityctl")
            XCTAssertEqual(rule["args"] as? [String], ["node-problem", condition.rawValue])
        }
    }

    private func assertAnswer(_ condition: NodeCondition, exit: Int32, prefix: String, line: UInt = #line) throws {
        let result = try reachabilityctl(["node-problem", condition.rawValue, "--answer-timeout", "3"])
        XCTAssertEqual(result.termination, .exited(exit), "\(condition): \(result.standardOutput)\(result.standardError)", line: line)
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, "one line: \(result.standardOutput)", line: line)
        XCTAssertLessThanOrEqual(lines[0].utf8.count, 80, line: line)
        XCTAssertTrue(lines[0].hasPrefix(prefix), "\(condition): \(lines[0])", line: line)
    }
}
