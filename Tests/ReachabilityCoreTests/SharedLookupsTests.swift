import ReachabilityCore
import XCTest

/// Name lookups shared by their waiters and bounded in number, whatever the waiters do.
final class SharedLookupsTests: XCTestCase {
    /// One step of a scenario and what it must give.
    private enum Step {
        /// A waiter comes for a key; whether its lookup starts now.
        case wait(Int, for: String, starts: Bool)
        /// A waiter leaves.
        case leave(Int)
        /// A key's lookup ends; who gets its answer, which key starts next.
        case finished(String, waiters: [Int], next: String?)
    }

    func testThatWaitersShareOneLookupPerKeyAndQueueBeyondTheCapacity() {
        let rows: [(capacity: Int, steps: [Step], line: UInt)] = [
            // A second waiter joins the running lookup; both get its answer.
            (4, [.wait(1, for: "a", starts: true), .wait(2, for: "a", starts: false), .finished("a", waiters: [1, 2], next: nil)], #line),
            // A lookup whose waiters all left runs on, and the next waiter joins it.
            (4, [.wait(1, for: "a", starts: true), .leave(1), .wait(2, for: "a", starts: false), .finished("a", waiters: [2], next: nil)], #line),
            // Its answer goes to no one when no one came back.
            (4, [.wait(1, for: "a", starts: true), .leave(1), .finished("a", waiters: [], next: nil)], #line),
            // After the end, a new waiter starts a new lookup.
            (4, [.wait(1, for: "a", starts: true), .finished("a", waiters: [1], next: nil), .wait(2, for: "a", starts: true)], #line),
            // Different keys run side by side up to the capacity; beyond it they queue, first
            // come first served, each with all its waiters.
            (2, [
                .wait(1, for: "a", starts: true), .wait(2, for: "b", starts: true), .wait(3, for: "c", starts: false),
                .wait(4, for: "d", starts: false), .wait(5, for: "c", starts: false),
                .finished("a", waiters: [1], next: "c"), .finished("b", waiters: [2], next: "d"), .finished("c", waiters: [3, 5], next: nil),
            ], #line),
            // A queued key whose waiters all left is dropped; a running one keeps its place.
            (1, [
                .wait(1, for: "a", starts: true), .wait(2, for: "b", starts: false), .leave(2), .leave(1), .wait(3, for: "c", starts: false),
                .finished("a", waiters: [], next: "c"),
            ], #line),
            // The end of a lookup that is not running changes nothing.
            (1, [.wait(1, for: "a", starts: true), .finished("z", waiters: [], next: nil), .wait(2, for: "b", starts: false)], #line),
        ]
        for row in rows {
            // Given
            var lookups = SharedLookups<String, Int>(capacity: row.capacity)
            for (number, step) in row.steps.enumerated() {
                // When, Then
                switch step {
                case .wait(let waiter, let key, let starts):
                    XCTAssertEqual(lookups.wait(waiter, for: key), starts, "step \(number + 1)", line: row.line)
                case .leave(let waiter):
                    lookups.leave(waiter)
                case .finished(let key, let waiters, let next):
                    let ended = lookups.finished(key)
                    XCTAssertEqual(ended.waiters, waiters, "step \(number + 1)", line: row.line)
                    XCTAssertEqual(ended.next, next, "step \(number + 1)", line: row.line)
                }
                XCTAssertLessThanOrEqual(lookups.runningCount, row.capacity, "step \(number + 1)", line: row.line)
            }
        }
    }

    func testThatWaitersComingAndLeavingWithoutEndHoldOneLookupPerKey() {
        // Given a lookup that never ends (a silent nameserver)
        var lookups = SharedLookups<String, Int>(capacity: 4)

        // When a thousand checks of two names start and are given up on (route flaps)
        var started = 0
        for waiter in 0..<1000 {
            if lookups.wait(waiter, for: waiter % 2 == 0 ? "check.example" : "api.example") { started += 1 }
            lookups.leave(waiter)
        }

        // Then two lookups ever started
        XCTAssertEqual(started, 2)
        XCTAssertEqual(lookups.runningCount, 2)
    }
}
