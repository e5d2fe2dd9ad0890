/// Blocking lookups (a host name's addresses) shared by everyone waiting for the same answer,
/// and bounded in number: at most one lookup per key at a time, whose answer goes to every
/// waiter that came for it while it ran; at most ``capacity`` lookups running at once, further
/// keys waiting their turn, first come first served.
///
/// A running lookup cannot be called off (`getaddrinfo` has no cancellation): when all its
/// waiters leave it runs on, holding its place, and a waiter that comes for its key before it
/// ends joins it rather than starting another. So however often waiters come and leave (a
/// check started and given up on at every route change), no more than ``capacity`` lookups are
/// ever out. A key still waiting for its turn is dropped when its last waiter leaves. Pure:
/// the daemon's check client runs the lookups it says to start.
package struct SharedLookups<Key: Hashable, Waiter: Hashable> {
    /// The most lookups running at once.
    package let capacity: Int
    /// The running lookups and who waits for each (possibly no one).
    private var running: [Key: [Waiter]] = [:]
    /// The keys waiting for a free place, the first to start first, and their waiters (never none).
    private var queued: [(key: Key, waiters: [Waiter])] = []

    /// No lookups, at most `capacity` (at least 1) running at once.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many lookups are running (the threads they hold).
    package var runningCount: Int { running.count }

    /// Adds `waiter` to the lookup of `key`: it joins the one running or queued, or starts one
    /// if there is room, or queues one.
    ///
    /// - Returns: whether the lookup of `key` is to start now.
    package mutating func wait(_ waiter: Waiter, for key: Key) -> Bool {
        if running[key] != nil {
            running[key]?.append(waiter)
            return false
        }
        if let place = queued.firstIndex(where: { $0.key == key }) {
            queued[place].waiters.append(waiter)
            return false
        }
        guard running.count < capacity else {
            queued.append((key, [waiter]))
            return false
        }
        running[key] = [waiter]
        return true
    }

    /// Removes `waiter` (given up on, or cancelled) wherever it waits. A running lookup stays;
    /// a queued key left without waiters is dropped.
    package mutating func leave(_ waiter: Waiter) {
        for key in running.keys {
            running[key]?.removeAll { $0 == waiter }
        }
        for place in queued.indices {
            queued[place].waiters.removeAll { $0 == waiter }
        }
        queued.removeAll { $0.waiters.isEmpty }
    }

    /// The lookup of `key` ended: its place goes to the first queued key.
    ///
    /// - Returns: the waiters its answer goes to, and the key whose lookup is to start now, if any.
    package mutating func finished(_ key: Key) -> (waiters: [Waiter], next: Key?) {
        guard let waiters = running.removeValue(forKey: key) else { return ([], nil) }
        guard !queued.isEmpty else { return (waiters, nil) }
        let next = queued.removeFirst()
        running[next.key] = next.waiters
        return (waiters, next.key)
    }
}

extension SharedLookups: Sendable where Key: Sendable, Waiter: Sendable {}
