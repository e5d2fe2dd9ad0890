/// Work waiting its turn, per caller, served one item per caller in turn: a caller with a
/// hundred calls waiting delays another caller's one call by one of its own, not by a hundred.
/// Pure; the daemon keeps its deferred method calls in one.
package struct FairQueue<Element> {
    private var waiting: [String: [Element]] = [:]
    /// The callers with waiting items, the next to be served first.
    private var turns: [String] = []

    /// An empty queue.
    package init() {}

    /// Whether nothing waits.
    package var isEmpty: Bool { turns.isEmpty }

    /// How many of `caller`'s items wait.
    package func count(of caller: String) -> Int {
        waiting[caller]?.count ?? 0
    }

    /// Queues `element` behind `caller`'s other items.
    package mutating func append(_ element: Element, from caller: String) {
        if waiting[caller] == nil { turns.append(caller) }
        waiting[caller, default: []].append(element)
    }

    /// Takes the next caller's oldest item; that caller, if it has more, goes to the back.
    package mutating func next() -> (caller: String, element: Element)? {
        guard !turns.isEmpty else { return nil }
        let caller = turns.removeFirst()
        var items = waiting[caller] ?? []
        let element = items.removeFirst()
        if items.isEmpty {
            waiting[caller] = nil
        } else {
            waiting[caller] = items
            turns.append(caller)
        }
        return (caller, element)
    }

    /// Takes the items of `caller` that `shouldBeRemoved` picks (all by default: the caller
    /// left), oldest first; the others keep their places.
    package mutating func removeAll(from caller: String, where shouldBeRemoved: (Element) -> Bool = { _ in true }) -> [Element] {
        guard let items = waiting[caller] else { return [] }
        let removed = items.filter(shouldBeRemoved)
        let kept = items.filter { !shouldBeRemoved($0) }
        waiting[caller] = kept.isEmpty ? nil : kept
        if kept.isEmpty { turns.removeAll { $0 == caller } }
        return removed
    }
}
