/// The waits before asking again after failures in a row: ``first`` after the first failure,
/// twice as long after each next one, at most ``longest``. The one back-off of the Swift code:
/// the client's retries and host lookups, and the active check's schedule
/// (``ConnectivityCheckSchedule``). Pure.
package struct RetryDelays: Sendable, Equatable {
    /// The wait after the first failure.
    package let first: Duration
    /// The longest wait.
    package let longest: Duration

    /// - Parameters:
    ///   - first: the wait after the first failure.
    ///   - longest: the longest wait.
    package init(first: Duration, longest: Duration) {
        self.first = first
        self.longest = longest
    }

    /// The wait after `failures` failures in a row.
    ///
    /// - Parameter failures: 1 after the first failure, 2 after the second…; less counts as 1.
    package func delay(afterFailures failures: Int) -> Duration {
        var delay = first
        var doublings = max(failures, 1) - 1
        while doublings > 0 && delay > .zero && delay < longest {
            delay *= 2
            doublings -= 1
        }
        return min(delay, longest)
    }
}
