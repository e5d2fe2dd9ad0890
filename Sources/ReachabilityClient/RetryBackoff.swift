import Dispatch

/// Asks again later, one retry due at a time: the first after ``initialSeconds``, each next one
/// twice as late, up to ``maximumSeconds``, until ``reset()`` after a success. Confined to `queue`.
final class RetryBackoff: @unchecked Sendable {
    /// The first wait, in seconds.
    let initialSeconds: Double
    /// The longest wait, in seconds.
    let maximumSeconds: Double
    private let queue: DispatchQueue
    /// The next wait; nil until a retry was scheduled since the last reset.
    private var nextDelay: Double?
    private var scheduled = false

    /// - Parameters:
    ///   - queue: where retries run.
    ///   - initialSeconds: the first wait.
    ///   - maximumSeconds: the longest wait.
    init(queue: DispatchQueue, initialSeconds: Double, maximumSeconds: Double) {
        self.queue = queue
        self.initialSeconds = initialSeconds
        self.maximumSeconds = maximumSeconds
    }

    /// Runs `retry` on the queue after the current wait, unless a retry is already due; the
    /// wait after it doubles.
    func schedule(_ retry: @escaping @Sendable () -> Void) {
        guard !scheduled else { return }
        scheduled = true
        let delay = nextDelay ?? initialSeconds
        nextDelay = min(delay * 2, maximumSeconds)
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            scheduled = false
            retry()
        }
    }

    /// Starts over from ``initialSeconds`` (after an answer). A retry already due still runs.
    func reset() {
        nextDelay = nil
    }
}
