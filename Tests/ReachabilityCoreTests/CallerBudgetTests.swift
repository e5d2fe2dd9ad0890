import ReachabilityCore
import XCTest

/// Each caller's share of the daemon's time.
final class CallerBudgetTests: XCTestCase {
    func testThatACallerOverItsShareWaitsForTheRefillAndOthersDoNot() {
        // Given a budget of 0.4 s per second, bursts of 0.2 s; rows: time, caller, cost, admitted
        var budget = CallerBudget(refillPerSecond: 0.4, capacitySeconds: 0.2)
        let rows: [(now: Double, caller: String, cost: Double, admitted: Bool, line: UInt)] = [
            (0.0, ":1.1", 0.15, true, #line),
            (0.0, ":1.1", 0.10, true, #line),  // 0.05 left: admitted, then 0.05 in debt
            (0.0, ":1.1", 0.01, false, #line),
            (0.0, ":1.2", 0.01, true, #line),  // another caller is not held back
            (0.1, ":1.1", 0.01, false, #line),  // -0.05 + 0.04 = -0.01
            (0.2, ":1.1", 0.01, true, #line),  // -0.05 + 0.08 = 0.03
            (10.0, ":1.1", 0.2, true, #line),  // refilled to the cap, not beyond
            (10.0, ":1.1", 0.0, false, #line),
        ]
        for row in rows {
            let admitted = budget.admits(row.caller, now: row.now)
            XCTAssertEqual(admitted, row.admitted, "\(row)", line: row.line)
            if admitted { budget.charge(row.caller, seconds: row.cost, now: row.now) }
        }
        budget.forget(":1.1")
        XCTAssertTrue(budget.admits(":1.1", now: 10.0), "a caller that left starts afresh")
    }

    func testThatTheRememberedCallersStayBounded() {
        // Given a budget remembering 16 callers (the daemon's default is larger: the same rule,
        // and past the limit every charge sorts all of them, too slow for a unit test)
        var budget = CallerBudget(callerLimit: 16)

        // When three times as many callers each spend more than their burst
        for caller in 0..<(budget.callerLimit * 3) {
            budget.charge(":1.\(caller)", seconds: 0.3, now: 0)
        }

        // Then no more than the limit are remembered
        XCTAssertLessThanOrEqual(budget.callerCount, budget.callerLimit + 1)
    }
}
