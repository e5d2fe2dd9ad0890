/// The two clocks the metrics read, in seconds: Unix time for timestamps, and a monotonic clock
/// (`CLOCK_MONOTONIC`: one per boot, shared by every process, stopped in suspend) for durations,
/// which a clock step must not stretch and a restart within the boot must not break.
package struct MetricsTime: Sendable, Hashable {
    /// Unix time (`CLOCK_REALTIME`).
    package var realtime: Double
    /// Seconds since boot, suspend not included (`CLOCK_MONOTONIC`).
    package var monotonic: Double

    /// A reading of both clocks.
    package init(realtime: Double, monotonic: Double) {
        self.realtime = realtime
        self.monotonic = monotonic
    }
}

/// What the metrics count beside the published snapshot: transitions into each value of each
/// ``MetricsStateSet``, seconds spent `not-reachable`, and when a state last changed.
///
/// Kept for the boot across restarts, as `Generation` is: the daemon stores ``encoded`` in its
/// runtime directory (on /run) after each change and resumes from it, so a restart neither
/// resets the counters nor counts (or timestamps) a change the network did not make, and all
/// the counters of the metrics reset together, at boot. The daemon's own downtime counts in the
/// state it left, up to the first evaluation after the restart.
package struct MetricsCounters: Sendable, Hashable {
    /// The value of each state set last counted (empty before the first count of the boot).
    package private(set) var states: [MetricsStateSet: String] = [:]
    /// Transitions into each value of each state set; the first count of the boot is one
    /// (from `unknown`, before the first evaluation).
    package private(set) var transitions: [MetricsStateSet: [String: UInt64]] = [:]
    /// Seconds spent `not-reachable` before ``notReachableSince``, or in all when it is nil.
    package private(set) var notReachableSeconds: Double = 0
    /// When (monotonic) the current `not-reachable` stretch began; nil while reachable.
    package private(set) var notReachableSince: Double?
    /// When (Unix time) a state set last changed; nil before the first count of the boot.
    package private(set) var lastChangeSeconds: Double?

    /// Nothing counted yet.
    package init() {}

    /// Counts the publication of `snapshot` at `time`: a transition for each state set whose
    /// value differs from the last counted one, and the start or end of a `not-reachable` stretch.
    package mutating func count(_ snapshot: ReachabilitySnapshot, at time: MetricsTime) {
        var changed = false
        for set in MetricsStateSet.allCases {
            let value = set.value(in: snapshot)
            guard states[set] != value else { continue }
            states[set] = value
            transitions[set, default: [:]][value, default: 0] += 1
            changed = true
        }
        if changed { lastChangeSeconds = time.realtime }
        switch (snapshot.status == .notReachable, notReachableSince) {
        case (true, nil):
            notReachableSince = time.monotonic
        case (false, let since?):
            notReachableSeconds += max(0, time.monotonic - since)
            notReachableSince = nil
        default:
            break
        }
    }

    /// The seconds spent `not-reachable` up to `monotonic` (the current stretch included).
    package func notReachableSeconds(at monotonic: Double) -> Double {
        notReachableSeconds + (notReachableSince.map { max(0, monotonic - $0) } ?? 0)
    }

    /// The counters as text for the runtime file: one `key value…` line each.
    package var encoded: String {
        var lines: [String] = []
        for set in MetricsStateSet.allCases {
            if let state = states[set] { lines.append("state \(set.rawValue) \(state)") }
            for value in set.values {
                if let count = transitions[set]?[value] { lines.append("transitions \(set.rawValue) \(value) \(count)") }
            }
        }
        lines.append("not-reachable-seconds \(notReachableSeconds)")
        if let notReachableSince { lines.append("not-reachable-since \(notReachableSince)") }
        if let lastChangeSeconds { lines.append("last-change \(lastChangeSeconds)") }
        return lines.map { $0 + "\n" }.joined()
    }

    /// The counters ``encoded`` wrote; a line it cannot read (another version's, or damaged) is
    /// skipped, so the worst a bad file does is restart a counter.
    package init(encoded text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            switch (fields.first, fields.count) {
            case ("state", 3):
                guard let set = MetricsStateSet(rawValue: fields[1]), set.values.contains(fields[2]) else { continue }
                states[set] = fields[2]
            case ("transitions", 4):
                guard let set = MetricsStateSet(rawValue: fields[1]), set.values.contains(fields[2]), let count = UInt64(fields[3]) else { continue }
                transitions[set, default: [:]][fields[2]] = count
            case ("not-reachable-seconds", 2):
                notReachableSeconds = Double(fields[1]).map { max(0, $0) } ?? 0
            case ("not-reachable-since", 2):
                notReachableSince = Double(fields[1])
            case ("last-change", 2):
                lastChangeSeconds = Double(fields[1])
            default:
                continue
            }
        }
    }
}
