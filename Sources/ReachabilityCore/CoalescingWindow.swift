/// When work asked for by a burst of changes runs: at once when it last ran at least one
/// interval ago, else once at the end of that interval, however many changes come meanwhile —
/// at most once per interval, and the last change is always covered. The daemon spaces its
/// `RoutesChanged` signals and its `Interfaces` listings with it.
///
/// Times are nanoseconds of a monotonic clock the caller reads (tests give their own).
package struct CoalescingWindow: Sendable, Equatable {
    /// What to do about a change.
    package enum Decision: Sendable, Equatable {
        /// Run now (then ``ran(at:)``).
        case runNow
        /// Run at this time (then ``ran(at:)``); nothing runs before unless asked otherwise.
        case runAt(UInt64)
        /// A run is already scheduled; it covers this change.
        case alreadyScheduled
    }

    /// The shortest time between two runs.
    package let intervalNanoseconds: UInt64
    /// When the work last ran; nil: never.
    package private(set) var lastRun: UInt64?
    /// When the scheduled run is due; nil: none is scheduled.
    package private(set) var scheduledRun: UInt64?

    /// A window that has not run yet.
    package init(intervalNanoseconds: UInt64) {
        self.intervalNanoseconds = intervalNanoseconds
    }

    /// A change at `now`: run now, at the end of the interval of the last run, or not at all
    /// (one is scheduled).
    package mutating func changed(at now: UInt64) -> Decision {
        if scheduledRun != nil { return .alreadyScheduled }
        guard let lastRun, now < lastRun &+ intervalNanoseconds else { return .runNow }
        let due = lastRun &+ intervalNanoseconds
        scheduledRun = due
        return .runAt(due)
    }

    /// The work ran at `now` (for a change, at its scheduled time, or because something else
    /// needed it): the next interval starts, and nothing is scheduled any more.
    package mutating func ran(at now: UInt64) {
        lastRun = now
        scheduledRun = nil
    }
}
