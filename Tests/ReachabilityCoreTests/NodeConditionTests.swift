import ReachabilityCore
import XCTest

/// node-problem-detector's custom-plugin answers: exit 0 OK, 1 problem, 2 unknown, one line of
/// at most 80 bytes, per condition and published state.
final class NodeConditionTests: XCTestCase {
    private static let reachable = ReachabilitySnapshot(
        status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: false, interface: "eth0", transport: .ethernet,
        isMetered: false, reason: "default route via 10.0.0.1 on eth0"
    )

    private static func snapshot(_ change: (inout ReachabilitySnapshot) -> Void) -> ReachabilitySnapshot {
        var snapshot = reachable
        change(&snapshot)
        return snapshot
    }

    func testEachConditionAnswersByTheContract() {
        let notReachable = Self.snapshot {
            $0.status = .notReachable
            $0.isIPv4Reachable = false
            $0.interface = ""
            $0.reason = "no default route"
        }
        let rows: [(condition: NodeCondition, snapshot: ReachabilitySnapshot?, outcome: NodeCondition.Verdict.Outcome, message: String, line: UInt)] = [
            (.network, nil, .unknown, "reachabilityd is not running or the system bus does not answer", #line),
            (.network, Self.snapshot { $0.status = .unknown }, .unknown, "reachabilityd has not evaluated the network yet", #line),
            (.network, notReachable, .problem, "Not reachable: no default route", #line),
            (.network, Self.snapshot { $0.ipv4Evidence = .limited }, .problem, "Route via eth0 but traffic does not get out (connectivity limited)", #line),
            (.network, Self.reachable, .ok, "Reachable via eth0, connectivity unknown", #line),
            (.network, Self.snapshot { $0.ipv4Evidence = .portal }, .ok, "Reachable via eth0, connectivity portal", #line),
            (.dns, Self.snapshot { $0.dns = .unknown }, .unknown, "DNS not evaluated yet", #line),
            (.dns, Self.snapshot { $0.dns = .none }, .problem, "DNS none: no nameserver takes public names", #line),
            (.dns, Self.snapshot { $0.dns = .unreachable }, .problem, "DNS unreachable: no nameserver is routed", #line),
            (.dns, Self.snapshot { $0.dns = .failing }, .problem, "DNS failing: the connectivity check's lookups get no answer", #line),
            (.dns, Self.snapshot { $0.dns = .reachable }, .ok, "DNS reachable: a nameserver is routed", #line),
            (.dns, Self.snapshot { $0.dns = .answering }, .ok, "DNS answering", #line),
            (.portal, Self.snapshot { $0.ipv4Evidence = .portal; $0.captivePortal = "https://portal.example/" }, .problem,
             "Captive portal via eth0: https://portal.example/", #line),
            (.portal, Self.snapshot { $0.ipv4Evidence = .portal }, .problem, "Captive portal via eth0", #line),
            (.portal, Self.reachable, .unknown, "Connectivity unknown: no check ([Connectivity] CheckURL=) or not yet", #line),
            (.portal, Self.snapshot { $0.ipv4Evidence = .full }, .ok, "No captive portal (connectivity full)", #line),
            (.portal, notReachable, .ok, "No captive portal (connectivity none)", #line),
        ]
        for row in rows {
            // Given a published state, When NPD asks about a condition
            let verdict = row.condition.verdict(for: row.snapshot)
            // Then
            XCTAssertEqual(verdict.outcome, row.outcome, line: row.line)
            XCTAssertEqual(verdict.message, row.message, line: row.line)
            XCTAssertLessThanOrEqual(verdict.message.utf8.count, 80, line: row.line)
        }
        XCTAssertEqual(NodeCondition.allCases.map(\.conditionType), ["NetworkUnreachable", "DNSUnavailable", "CaptivePortal"])
    }

    func testALongOrMultiLineMessageIsCutToOneLineOf80Bytes() {
        let long = NodeCondition.network.verdict(for: Self.snapshot {
            $0.status = .notReachable
            $0.reason = "default route via fe80::1 on wlan0 ignored:\nits link is down " + String(repeating: "é", count: 60)
        })
        XCTAssertEqual(long.outcome, .problem)
        XCTAssertFalse(long.message.contains("\n"))
        XCTAssertLessThanOrEqual(long.message.utf8.count, 80)
        XCTAssertTrue(long.message.hasPrefix("Not reachable: default route via fe80::1 on wlan0 ignored: its link is down é"), long.message)
    }
}
