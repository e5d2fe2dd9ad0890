import ReachabilityCore
import XCTest

/// `CheckConnectivity()`'s rule: a call while a check runs shares it; otherwise each caller (a
/// uid) starts at most one check per window, and a call inside it gets the last result.
final class OnDemandCheckGateTests: XCTestCase {
    func testEachUserStartsOneCheckPerWindowAndSharesTheOneInFlight() {
        // Given a gate with a 10 s window; callers: root on two connections, user 1000 on two,
        // one connection whose user the bus could not tell
        let root1 = CallerShare(connection: ":1.1", uid: 0)
        let root2 = CallerShare(connection: ":1.2", uid: 0)
        let user = CallerShare(user: 1000)
        let unknown = CallerShare(connection: ":1.9")
        var gate = OnDemandCheckGate(windowSeconds: 10)
        let rows: [(now: Double, caller: CallerShare, inFlight: Bool, decision: OnDemandCheckGate.Decision, line: UInt)] = [
            (0, root1, false, .startCheck, #line),
            (0.5, root2, true, .shareCheckInFlight, #line),  // while it runs: shared, whoever asks
            (0.5, user, true, .shareCheckInFlight, #line),  // sharing opens no window
            (2, root2, false, .lastResult, #line),  // root's window, whichever connection
            (3, user, false, .startCheck, #line),  // another uid starts one of its own
            (4, user, false, .lastResult, #line),
            (4, unknown, false, .startCheck, #line),  // no uid: the connection is the caller
            (5, unknown, false, .lastResult, #line),
            (9.9, root1, false, .lastResult, #line),
            (9.9, root1, true, .shareCheckInFlight, #line),  // inside the window, a check in flight: shared
            (10, root1, false, .startCheck, #line),  // the window ended
            (12.9, user, false, .lastResult, #line),
            (13, user, false, .startCheck, #line),
        ]

        for row in rows {
            // When the caller asks
            let decision = gate.decide(for: row.caller, checkInFlight: row.inFlight, now: row.now)

            // Then the row's decision
            XCTAssertEqual(decision, row.decision, "\(row)", line: row.line)
        }
    }

    func testACallerWithTooManyCallsWaitingIsAnsweredBusyUntilOneStopsWaiting() {
        // Given a check in flight, and user 1000 with every call it may have waiting
        let user = CallerShare(user: 1000), other = CallerShare(user: 1001)
        var gate = OnDemandCheckGate(windowSeconds: 10)
        XCTAssertEqual(gate.decide(for: user, checkInFlight: false, now: 0), .startCheck)
        for _ in 1..<OnDemandCheckGate.waitingCallsPerCaller {
            XCTAssertEqual(gate.decide(for: user, checkInFlight: true, now: 1), .shareCheckInFlight)
        }
        XCTAssertEqual(gate.waitingCalls(of: user), OnDemandCheckGate.waitingCallsPerCaller)

        // When it asks again, and another user asks
        // Then the one is busy (and kept no call), the other shares the check
        XCTAssertEqual(gate.decide(for: user, checkInFlight: true, now: 1), .busy)
        XCTAssertEqual(gate.waitingCalls(of: user), OnDemandCheckGate.waitingCallsPerCaller)
        XCTAssertEqual(gate.decide(for: other, checkInFlight: true, now: 1), .shareCheckInFlight)

        // When one of its calls stops waiting (answered, or its connection left)
        gate.stoppedWaiting(user)

        // Then it may wait again; and once all stopped, it has none waiting
        XCTAssertEqual(gate.decide(for: user, checkInFlight: true, now: 2), .shareCheckInFlight)
        for _ in 0..<OnDemandCheckGate.waitingCallsPerCaller { gate.stoppedWaiting(user) }
        XCTAssertEqual(gate.waitingCalls(of: user), 0)
        gate.stoppedWaiting(user)
        XCTAssertEqual(gate.waitingCalls(of: user), 0)
    }

    func testThatTheRememberedCallersStayBounded() {
        // Given more callers than the limit, each starting a check 1 s after the last
        var gate = OnDemandCheckGate(windowSeconds: 10)
        for uid in 0..<UInt32(OnDemandCheckGate.callerLimit * 3) {
            _ = gate.decide(for: CallerShare(user: uid), checkInFlight: false, now: Double(uid))
        }

        // Then those whose window ended were forgotten
        XCTAssertLessThanOrEqual(gate.callerCount, OnDemandCheckGate.callerLimit + 1)
    }
}
