@testable import ReachabilityCore
import XCTest

/// The metrics' counters: transitions into each state, seconds not reachable, the last change,
/// and how they resume after a restart within the boot (the runtime file's text).
final class MetricsCountersTests: XCTestCase {
    private let reachable = ReachabilitySnapshot(
        status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: false, interface: "eth0", transport: .ethernet,
        isMetered: false, reason: "default route via 10.0.0.1 on eth0"
    )
    private let none = ReachabilitySnapshot(
        status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false, interface: "", transport: nil, isMetered: false, reason: "no route"
    )

    private enum Step {
        /// A published snapshot at a monotonic time (Unix time: 1,000,000 later).
        case publish(ReachabilitySnapshot, at: Double)
        /// The daemon restarts: the counters go through the runtime file's text.
        case restart
    }

    func testCountersFollowOutagesAndResumeAcrossRestarts() {
        let rows: [(given: [Step], notReachableAt100: Double, intoNotReachable: UInt64, intoEthernet: UInt64, lastChange: Double?, line: UInt)] = [
            ([], 0, 0, 0, nil, #line),
            // The first count of the boot is a transition (from unknown)
            ([.publish(none, at: 10)], 90, 1, 0, 1_000_010, #line),
            ([.publish(reachable, at: 10)], 0, 0, 1, 1_000_010, #line),
            // An outage from 20 to 50
            ([.publish(reachable, at: 10), .publish(none, at: 20), .publish(reachable, at: 50)], 30, 1, 2, 1_000_050, #line),
            // Another property changing (the reason) is no transition and no state change
            ([.publish(reachable, at: 10), .publish({ var s = reachable; s.reason = "other"; return s }(), at: 30)], 0, 0, 1, 1_000_010, #line),
            // A restart in the same state: nothing counted, the last change stays
            ([.publish(reachable, at: 10), .restart, .publish(reachable, at: 40)], 0, 0, 1, 1_000_010, #line),
            // A restart during an outage: the outage goes on counting from its start
            ([.publish(reachable, at: 10), .publish(none, at: 20), .restart, .publish(none, at: 40)], 80, 1, 1, 1_000_020, #line),
            // An outage that ended while the daemon was down: its downtime counts in the state it left
            ([.publish(reachable, at: 10), .publish(none, at: 20), .restart, .publish(reachable, at: 60)], 40, 1, 2, 1_000_060, #line),
            // Past outages survive the restart
            ([.publish(none, at: 0), .publish(reachable, at: 5), .restart, .publish(none, at: 90)], 15, 2, 1, 1_000_090, #line),
        ]
        for row in rows {
            // Given
            var counters = MetricsCounters()
            // When
            for step in row.given {
                switch step {
                case let .publish(snapshot, at: time): counters.count(snapshot, at: MetricsTime(realtime: 1_000_000 + time, monotonic: time))
                case .restart: counters = MetricsCounters(encoded: counters.encoded)
                }
            }
            // Then
            XCTAssertEqual(counters.notReachableSeconds(at: 100), row.notReachableAt100, line: row.line)
            XCTAssertEqual(counters.transitions[.status]?["not-reachable"] ?? 0, row.intoNotReachable, line: row.line)
            XCTAssertEqual(counters.transitions[.status]?["reachable-via-ethernet"] ?? 0, row.intoEthernet, line: row.line)
            XCTAssertEqual(counters.lastChangeSeconds, row.lastChange, line: row.line)
        }
    }

    func testTheRuntimeFileRoundTripsAndSkipsWhatItCannotRead() {
        // Given counters with every field set
        var counters = MetricsCounters()
        counters.count(reachable, at: MetricsTime(realtime: 1_795_550_000.125, monotonic: 12.5))
        counters.count(none, at: MetricsTime(realtime: 1_795_550_001, monotonic: 13.25))

        // When they go through the file's text, or a damaged copy of it
        let damaged = "transitions status not-reachable many\nstate status sideways\nsomething new 1 2 3\n" + counters.encoded
            .replacingOccurrences(of: "transitions status reachable-via-ethernet 1", with: "transitions status reachable-via-ethernet x")

        // Then the text gives the same counters, and a damaged line restarts only its counter
        XCTAssertEqual(MetricsCounters(encoded: counters.encoded), counters)
        let read = MetricsCounters(encoded: damaged)
        XCTAssertEqual(read.transitions[.status]?["reachable-via-ethernet"], nil)
        XCTAssertEqual(read.transitions[.status]?["not-reachable"], 1)
        XCTAssertEqual(read.states, counters.states)
        XCTAssertEqual(read.notReachableSince, 13.25)
        XCTAssertEqual(MetricsCounters(encoded: ""), MetricsCounters())
    }
}
