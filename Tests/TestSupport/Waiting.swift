import Foundation

/// Waiting for a condition by polling it with a deadline: the only way this suite waits.
///
/// A fixed sleep appears only as the poll interval, never as synchronisation.
package enum Poll {
    /// The time between two observations.
    package static let interval: Duration = .milliseconds(20)
    /// The default deadline.
    package static let defaultTimeout: Duration = .seconds(5)

    /// Observes a value until `accept` holds for it.
    ///
    /// - Parameters:
    ///   - what: what is awaited, for the failure message.
    ///   - timeout: the deadline.
    ///   - observe: reads the current value; an error it throws ends the wait at once.
    ///   - accept: decides whether the value is the awaited one.
    /// - Returns: the first accepted value.
    /// - Throws: `HarnessError` naming `what` and the last value observed, on timeout.
    @discardableResult
    package static func until<Value>(
        _ what: @autoclosure () -> String,
        timeout: Duration = Poll.defaultTimeout,
        observe: () throws -> Value,
        accept: (Value) throws -> Bool
    ) throws -> Value {
        let deadline = ContinuousClock.now + timeout
        while true {
            let value = try observe()
            if try accept(value) { return value }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("Timed out after \(timeout) waiting for \(what()); last observed: \(value)")
            }
            Thread.sleep(forTimeInterval: interval.timeInterval)
        }
    }

    /// Polls `condition` until it returns true.
    ///
    /// - Parameters:
    ///   - what: what is awaited, for the failure message.
    ///   - timeout: the deadline.
    ///   - condition: the condition; an error it throws ends the wait at once.
    /// - Throws: `HarnessError` naming `what`, on timeout.
    package static func until(
        _ what: @autoclosure () -> String,
        timeout: Duration = Poll.defaultTimeout,
        _ condition: () throws -> Bool
    ) throws {
        try until(what(), timeout: timeout, observe: condition, accept: { $0 })
    }
}

extension Duration {
    /// The duration in seconds, for Foundation APIs.
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension Thread {
    /// Sleeps until `instant` (at once when it has passed): for tests about time, which cause
    /// outages or pace changes on purpose.
    package static func sleep(until instant: ContinuousClock.Instant) {
        let remaining = instant - ContinuousClock.now
        if remaining > .zero { sleep(forTimeInterval: remaining.timeInterval) }
    }
}

/// `CLOCK_MONOTONIC`, the clock Python's `time.monotonic()` reads too: times taken by the test
/// and by its helper processes compare.
package enum Monotonic {
    /// Now, in seconds.
    package static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
