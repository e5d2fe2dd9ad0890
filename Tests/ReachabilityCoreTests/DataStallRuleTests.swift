import ReachabilityCore
import XCTest

/// The data-stall rule: the uplink's counters and TCP's retransmissions over time in, whether
/// traffic leaves and nothing comes back out; and the evidence rule's use of a stall.
final class DataStallRuleTests: XCTestCase {
    /// One row: counters read once a second (sent, received, retransmitted: the growth in each
    /// second after the first sample), and the verdict on them.
    struct Row {
        var name: String
        var perSecond: [(sent: UInt64, received: UInt64, retransmitted: UInt64)]
        var then: DataStallRule.Verdict
        var line: UInt

        init(_ name: String, _ perSecond: [(UInt64, UInt64, UInt64)], _ then: DataStallRule.Verdict, line: UInt = #line) {
            self.name = name
            self.perSecond = perSecond.map { (sent: $0.0, received: $0.1, retransmitted: $0.2) }
            self.then = then
            self.line = line
        }

        /// The samples: a first one at zero, then one per second with the growth added.
        var samples: [TrafficSample] {
            var counters = TrafficCounters(sentPackets: 1_000, receivedPackets: 2_000, tcpRetransmissions: 30)
            var samples = [TrafficSample(nanoseconds: 7_000_000_000, counters: counters)]
            for (second, growth) in perSecond.enumerated() {
                counters.sentPackets += growth.sent
                counters.receivedPackets += growth.received
                counters.tcpRetransmissions += growth.retransmitted
                samples.append(TrafficSample(nanoseconds: 7_000_000_000 + UInt64(second + 1) * 1_000_000_000, counters: counters))
            }
            return samples
        }
    }

    static func repeated(_ growth: (UInt64, UInt64, UInt64), _ seconds: Int) -> [(UInt64, UInt64, UInt64)] {
        Array(repeating: growth, count: seconds)
    }

    static let rows: [Row] = [
        Row("fewer samples than a window: too early to tell", repeated((10, 0, 2), 4), .gathering),
        Row("an idle host: nothing leaves", repeated((0, 0, 0), 5), .quiet),
        Row("an idle host with a neighbour's answer now and then", repeated((0, 0, 0), 4) + [(1, 1, 0)], .quiet),
        Row("a UDP stream to nowhere: much leaves, nothing comes back, TCP waits for nothing", repeated((100, 0, 0), 5), .oneWay),
        Row("syslog over UDP to a dead collector", repeated((2, 0, 0), 5), .oneWay),
        Row("a TCP client tries through a dead upstream", repeated((4, 0, 2), 5), .stalled(sentPackets: 20, tcpRetransmissions: 10)),
        Row(
            "a dead upstream while the gateway still answers its neighbour probes",
            [(4, 0, 2), (4, 1, 2), (4, 0, 2), (4, 1, 2), (4, 0, 2)], .stalled(sentPackets: 20, tcpRetransmissions: 10)
        ),
        Row("one dead server while others answer", repeated((6, 3, 2), 5), .flowing),
        Row("one dead server while one other answers once a second", repeated((4, 1, 2), 4) + [(4, 1, 2)], .flowing),
        Row("a healthy download", repeated((50, 100, 0), 5), .flowing),
        Row("a few retransmissions on a lossy but answering path", repeated((50, 60, 1), 5), .flowing),
        Row("the stall is judged on the last window only: answers before it do not count", [(5, 50, 0)] + repeated((4, 0, 2), 5), .stalled(sentPackets: 20, tcpRetransmissions: 10)),
        Row("recovery: answers in the last second end it", repeated((4, 0, 2), 4) + [(6, 5, 0)], .flowing),
        Row("a single connection attempt is too little to judge", [(1, 0, 0), (1, 0, 1), (0, 0, 0), (1, 0, 1), (0, 0, 0)], .quiet),
        Row("two retransmissions are too few", repeated((2, 0, 0), 3) + [(2, 0, 1), (2, 0, 1)], .oneWay),
    ]

    func testDataStallRuleTable() {
        for row in Self.rows {
            // Given counters read once a second
            let samples = row.samples
            // When the rule judges them
            let verdict = DataStallRule.decide(samples)
            // Then
            XCTAssertEqual(verdict, row.then, row.name, line: row.line)
        }
    }

    func testCountersThatGoBackAreANewLinkNotAStall() {
        // Given a link recreated under the same name: its counters start again
        let before = TrafficSample(nanoseconds: 0, counters: TrafficCounters(sentPackets: 500, receivedPackets: 900, tcpRetransmissions: 10))
        let after = TrafficSample(nanoseconds: 6_000_000_000, counters: TrafficCounters(sentPackets: 30, receivedPackets: 0, tcpRetransmissions: 20))
        // When / Then
        XCTAssertEqual(DataStallRule.decide([before, after]), .gathering)
    }

    func testSamplingStopsAfterAWindowWithNothingSent() {
        func sample(_ second: UInt64, sent: UInt64) -> TrafficSample {
            TrafficSample(nanoseconds: second * 1_000_000_000, counters: TrafficCounters(sentPackets: sent, receivedPackets: 0, tcpRetransmissions: 0))
        }
        let soon = DataStallRule.flowingIntervalNanoseconds
        let rows: [(name: String, samples: [TrafficSample], isStalled: Bool, then: UInt64?, line: UInt)] = [
            ("the first sample: soon, to see whether traffic flows", [sample(0, sent: 5)], false, soon, #line),
            ("nothing sent, but less than a window seen: soon", [sample(0, sent: 5), sample(4, sent: 5)], false, soon, #line),
            ("nothing sent for a window: stop (an idle host is not woken)", [sample(0, sent: 5), sample(5, sent: 5)], false, nil, #line),
            ("something sent in the window: soon", [sample(0, sent: 5), sample(5, sent: 6)], false, soon, #line),
            ("a stall holds: soon, to see it end", [sample(0, sent: 5), sample(5, sent: 5)], true, soon, #line),
        ]
        for row in rows {
            XCTAssertEqual(DataStallRule.nextIntervalNanoseconds(row.samples, isStalled: row.isStalled), row.then, row.name, line: row.line)
        }
    }

    func testTrimmingKeepsOneWindow() {
        // Given eight samples a second apart
        let samples = (0..<8).map { TrafficSample(nanoseconds: UInt64($0) * 1_000_000_000, counters: TrafficCounters(sentPackets: UInt64($0), receivedPackets: 0, tcpRetransmissions: 0)) }
        // When trimmed
        let kept = DataStallRule.trimmed(samples)
        // Then the window's first sample (5 s before the last) and those after it remain, and the verdict is the same
        XCTAssertEqual(kept.map(\.nanoseconds), [2, 3, 4, 5, 6, 7].map { UInt64($0) * 1_000_000_000 })
        XCTAssertEqual(DataStallRule.decide(kept), DataStallRule.decide(samples))
    }

    func testTheEvidenceRuleTakesAStallUntilACheckAfterItSpeaks() {
        let routes = EvidenceRuleTests.both
        let stall = DataStall(linkName: "eth0", onsetNanoseconds: 100, sentPackets: 20, tcpRetransmissions: 10)
        let rows: [(name: String, ipv4: FamilyEvidence, then: Connectivity?, saysStall: Bool, line: UInt)] = [
            ("a stall alone: limited", FamilyEvidence(stall: stall), .limited, true, #line),
            ("a stall beats an older check's full", FamilyEvidence(stall: stall, check: .full, checkFinishedNanoseconds: 50), .limited, true, #line),
            ("a check after the stall clears it", FamilyEvidence(stall: stall, check: .full, checkFinishedNanoseconds: 150), .full, false, #line),
            ("a check after the stall confirms it", FamilyEvidence(stall: stall, check: .limited, checkFinishedNanoseconds: 150), .limited, false, #line),
            ("a failed gateway beats a stall", FamilyEvidence(gateway: .limited, stall: stall), .limited, false, #line),
            ("no stall: the check's", FamilyEvidence(check: .full, checkFinishedNanoseconds: 50), .full, false, #line),
        ]
        for row in rows {
            // Given IPv4's evidence, IPv6's none
            // When
            let next = EvidenceRule.decide(routes, ipv4: row.ipv4, ipv6: FamilyEvidence())
            // Then
            XCTAssertEqual(next.ipv4Evidence, row.then, row.name, line: row.line)
            XCTAssertNil(next.ipv6Evidence, row.name, line: row.line)
            XCTAssertEqual(next.reason, routes.reason + (row.saysStall ? "; IPv4: " + stall.reason : ""), row.name, line: row.line)
        }
        XCTAssertEqual(
            stall.reason, "traffic leaves eth0 and nothing comes back (20 packets sent, 10 TCP retransmissions, no answer in 5 s): data stall"
        )
    }
}
