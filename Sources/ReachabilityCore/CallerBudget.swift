/// Each bus caller's share of the daemon's time, as token buckets of CPU seconds: a call is
/// admitted while its caller's bucket holds time, and what it cost is taken out afterwards;
/// buckets refill at ``refillPerSecond`` up to ``capacitySeconds``. A caller over its share
/// gets `org.reachabilityd.Error.Busy` at once (an answer that costs next to nothing) while
/// everyone else is served as before. The share is generous: callers that together saturate
/// the daemon's one queue each get only their turn of it and never run dry; only a caller that
/// would take more than that share of a core alone is held back. Pure: the caller supplies the
/// clock and the costs.
package struct CallerBudget: Sendable {
    /// CPU seconds a caller may spend per second, on average.
    package let refillPerSecond: Double
    /// The most a caller may spend at once (a burst).
    package let capacitySeconds: Double
    /// The most callers remembered; beyond it, full buckets (those that equal a new one) go.
    package let callerLimit: Int

    private var buckets: [String: (seconds: Double, updated: Double)] = [:]

    /// A budget of `refillPerSecond` CPU seconds per second, bursts up to `capacitySeconds`,
    /// remembering at most `callerLimit` callers.
    package init(refillPerSecond: Double = 0.4, capacitySeconds: Double = 0.2, callerLimit: Int = 1024) {
        self.refillPerSecond = refillPerSecond
        self.capacitySeconds = capacitySeconds
        self.callerLimit = callerLimit
    }

    /// Whether `caller` may be served at `now` (seconds on a monotonic clock).
    package mutating func admits(_ caller: String, now: Double) -> Bool {
        refill(caller, now: now) > 0
    }

    /// Takes `seconds` of CPU that serving `caller` cost.
    package mutating func charge(_ caller: String, seconds: Double, now: Double) {
        let left = refill(caller, now: now) - seconds
        buckets[caller] = (left, now)
        if buckets.count > callerLimit { pruneFullBuckets(now: now) }
    }

    /// Forgets `caller` (its connection closed).
    package mutating func forget(_ caller: String) {
        buckets[caller] = nil
    }

    /// How many callers are remembered.
    package var callerCount: Int { buckets.count }

    private func refill(_ caller: String, now: Double) -> Double {
        guard let bucket = buckets[caller] else { return capacitySeconds }
        return min(capacitySeconds, bucket.seconds + max(0, now - bucket.updated) * refillPerSecond)
    }

    /// Drops the buckets that refilled (they equal a new one); if that is not enough, those
    /// with the most left, down to the limit.
    private mutating func pruneFullBuckets(now: Double) {
        buckets = buckets.filter { refill($0.key, now: now) < capacitySeconds }
        guard buckets.count > callerLimit else { return }
        let kept = buckets.sorted { refill($0.key, now: now) < refill($1.key, now: now) }.prefix(callerLimit)
        buckets = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }
}
