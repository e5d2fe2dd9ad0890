#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// Method calls waiting their turn on the daemon's queue: one per share in turn (``FairQueue``),
/// at most ``callsPerTurn`` per turn of the queue, each share charged with the CPU time its calls
/// took (``CallerBudget``). The bus object's calls (``CallAdmission``) and the Varlink socket's
/// are served so. Confined to `queue`.
package final class FairTurns<Call>: @unchecked Sendable {
    /// The most waiting calls served per turn of the queue.
    package let callsPerTurn = 16
    /// Each share's part of the queue's time.
    package private(set) var budget = CallerBudget()
    private let queue: DispatchQueue
    private let serve: (Call) -> Void
    private var waiting = FairQueue<Call>()
    private var turnQueued = false

    /// Calls that `serve` answers on `queue`.
    package init(queue: DispatchQueue, serve: @escaping (Call) -> Void) {
        self.queue = queue
        self.serve = serve
    }

    /// Whether `share`'s budget holds time now.
    package func admits(_ share: String) -> Bool {
        budget.admits(share, now: clockSeconds(CLOCK_MONOTONIC))
    }

    /// How many of `share`'s calls wait.
    package func count(of share: String) -> Int {
        waiting.count(of: share)
    }

    /// Queues `call` behind `share`'s others; a turn of the queue serves it.
    package func append(_ call: Call, from share: String) {
        waiting.append(call, from: share)
        queueTurn()
    }

    /// Takes out `share`'s waiting calls that `shouldBeRemoved` picks (their caller left).
    @discardableResult
    package func removeAll(from share: String, where shouldBeRemoved: (Call) -> Bool) -> [Call] {
        waiting.removeAll(from: share, where: shouldBeRemoved)
    }

    /// Forgets `share`'s budget (a connection's own share, closed).
    package func forget(_ share: String) {
        budget.forget(share)
    }

    private func queueTurn() {
        guard !turnQueued else { return }
        turnQueued = true
        queue.async { [weak self] in self?.serveTurn() }
    }

    /// Serves up to ``callsPerTurn`` waiting calls, one per share in turn, charging each
    /// share's budget with the CPU time its call took; queues another turn for the rest.
    private func serveTurn() {
        turnQueued = false
        for _ in 0..<callsPerTurn {
            guard let (share, call) = waiting.next() else { break }
            let started = clockSeconds(CLOCK_MONOTONIC)
            let cpuBefore = clockSeconds(CLOCK_THREAD_CPUTIME_ID)
            serve(call)
            budget.charge(share, seconds: clockSeconds(CLOCK_THREAD_CPUTIME_ID) - cpuBefore, now: started)
        }
        if !waiting.isEmpty { queueTurn() }
    }
}
