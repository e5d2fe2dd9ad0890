import ReachabilityCore
import XCTest

/// The window that spaces `Interfaces` listings and `RoutesChanged`: at once after a quiet
/// interval, else once at the interval's end, whatever comes meanwhile.
final class CoalescingWindowTests: XCTestCase {
    private let interval: UInt64 = 250

    func testDecisionsOverABurstWithAnInjectedClock() {
        // Given a window of 250 (ns) that has not run, and events at these times; "ran" marks
        // when the caller ran the work (at once, or at the time it was given)
        enum Step { case change(UInt64, CoalescingWindow.Decision), ran(UInt64) }
        let steps: [Step] = [
            .change(1_000, .runNow), .ran(1_000),                    // the first change: at once
            .change(1_010, .runAt(1_250)),                           // within the interval: at its end
            .change(1_100, .alreadyScheduled), .change(1_249, .alreadyScheduled), // covered by it
            .ran(1_250),                                             // the scheduled run
            .change(1_300, .runAt(1_500)),                           // still within the new interval
            .ran(1_500),
            .change(1_750, .runNow),                                 // a quiet interval later: at once
            .ran(1_750),
            .change(2_000, .runNow),                                 // exactly one interval later: at once
        ]
        var window = CoalescingWindow(intervalNanoseconds: interval)

        // When / Then
        for (position, step) in steps.enumerated() {
            switch step {
            case .change(let now, let expected): XCTAssertEqual(window.changed(at: now), expected, "step \(position), at \(now)")
            case .ran(let now): window.ran(at: now)
            }
        }
    }

    func testARunForAnotherReasonCoversTheScheduledOne() {
        // Given a run scheduled at the end of the interval
        var window = CoalescingWindow(intervalNanoseconds: interval)
        window.ran(at: 0)
        XCTAssertEqual(window.changed(at: 10), .runAt(250))

        // When the work runs before (a status change listed the interfaces with it)
        window.ran(at: 100)

        // Then nothing is scheduled any more, and the next change waits for the new interval
        XCTAssertNil(window.scheduledRun)
        XCTAssertEqual(window.changed(at: 120), .runAt(350))
    }
}
