import Dispatch
import ReachabilityCore

extension RetryDelays {
    /// After a call the daemon did not answer (a check, a read of its properties): 0.25 s,
    /// doubling up to 8 s.
    static let unansweredDaemon = RetryDelays(first: .milliseconds(250), longest: .seconds(8))
}

/// One retry due at a time on a queue, until it runs or is cancelled. Confined to `queue`.
final class RetryTimer: @unchecked Sendable {
    private let queue: DispatchQueue
    /// Counts cancellations: a retry scheduled before the last one does not run.
    private var generation = 0
    /// Whether a retry is due.
    private(set) var isScheduled = false

    /// - Parameter queue: where retries run.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Runs `retry` on the queue after `delay`, unless a retry is already due.
    func schedule(after delay: Duration, _ retry: @escaping @Sendable () -> Void) {
        guard !isScheduled else { return }
        isScheduled = true
        let scheduled = generation
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(max(delay, .zero) / .nanoseconds(1)))) { [weak self] in
            guard let self, generation == scheduled else { return }
            isScheduled = false
            retry()
        }
    }

    /// Drops the retry that is due, if any: it will not run.
    func cancel() {
        generation += 1
        isScheduled = false
    }
}

/// Asks again later after failures, one retry due at a time, each wait from ``delays`` (longer
/// after each failure in a row), until ``reset()`` after a success. Confined to `queue`.
final class RetryBackoff: @unchecked Sendable {
    /// The waits.
    let delays: RetryDelays
    private let timer: RetryTimer
    /// Retries scheduled since the last reset.
    private var failures = 0

    /// - Parameters:
    ///   - queue: where retries run.
    ///   - delays: the waits.
    init(queue: DispatchQueue, delays: RetryDelays) {
        self.delays = delays
        timer = RetryTimer(queue: queue)
    }

    /// Whether a retry is due.
    var isScheduled: Bool { timer.isScheduled }

    /// Runs `retry` on the queue after the current wait, unless a retry is already due; the
    /// wait after it is longer.
    func schedule(_ retry: @escaping @Sendable () -> Void) {
        guard !timer.isScheduled else { return }
        failures += 1
        timer.schedule(after: delays.delay(afterFailures: failures), retry)
    }

    /// Starts over from the first wait (after an answer). A retry already due still runs.
    func reset() {
        failures = 0
    }

    /// Drops the retry that is due, if any: it will not run. The failures counted so far stay:
    /// the next wait is longer, as if it had run (``reset()`` starts over).
    func cancel() {
        timer.cancel()
    }
}
