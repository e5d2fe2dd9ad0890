import Dispatch
import ReachabilityCore

/// Resolves and checks one monitored address or domain, one check at a time, for both sources:
/// the daemon's (each address asked with `CheckAddress`) and the in-process engine's (each
/// address asked of the engine). A check requested while one runs runs once after it; a domain's
/// addresses come from its ``HostLookup`` (one resolution at a time, away from the queue, each
/// answer reused for a while). A name that does not resolve is looked up again by itself when
/// its failure stops being reused (1 s after the first failure in a row, doubling up to 30 s),
/// so that a resolver that comes back (DNS at boot, a VPN's) is noticed without waiting for a
/// routing change; the checks before then, whatever prompts them, reuse the failure. Confined
/// to `queue`.
package final class DestinationChecker: @unchecked Sendable {
    /// Asks for the answers of `addresses` and calls `answered` on the queue with them, in order.
    package typealias AskAddresses = (_ addresses: [String], _ answered: @escaping ([AddressAnswer]) -> Void) -> Void

    private let queue: DispatchQueue
    private let target: MonitoredTarget
    private let ask: AskAddresses
    private let finished: (ReachabilitySnapshot) -> Void
    /// Counts cancellations: answers and resolutions of an older check are dropped.
    private var epoch = 0
    private var inFlight = false
    private var pending = false
    /// Checks again when a name's failure stops being reused; cancelled with the checks.
    private lazy var resolutionRetry = RetryTimer(queue: queue)

    /// Creates a checker of `target` (an address or a domain).
    ///
    /// - Parameters:
    ///   - queue: the source's queue.
    ///   - target: what is checked; `.machine` is never checked.
    ///   - ask: how the addresses are answered.
    ///   - finished: called on the queue with each check's snapshot.
    package init(queue: DispatchQueue, target: MonitoredTarget, ask: @escaping AskAddresses, finished: @escaping (ReachabilitySnapshot) -> Void) {
        self.queue = queue
        self.target = target
        self.ask = ask
        self.finished = finished
    }

    /// Whether a check is running.
    var isChecking: Bool { inFlight }

    /// Checks the destination; during a check, once after it.
    package func check() {
        guard !inFlight else {
            pending = true
            return
        }
        let current = epoch
        switch target {
        case .machine:
            return
        case .address(let address):
            inFlight = true
            checkAddresses([address], destination: address, epoch: current)
        case .domain(let lookup):
            inFlight = true
            lookup.resolve(on: queue) { [weak self] answer in
                guard let self, current == epoch else { return }
                switch answer.outcome {
                case .addresses(let addresses):
                    checkAddresses(addresses, destination: lookup.host, epoch: current)
                case .failed(let why):
                    if let retryAt = answer.retryAt {
                        resolutionRetry.schedule(after: retryAt - .now) { [weak self] in self?.check() }
                    }
                    checkFinished(ReachabilitySnapshot(
                        status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                        interface: "", transport: nil, isMetered: false, reason: "could not resolve \(lookup.host): \(why)"
                    ))
                }
            }
        }
    }

    /// Drops the check in flight, any pending one and a name's retry that is due; their answers
    /// will not be reported. The next ``check()`` reuses the name's failure while it is reused
    /// and schedules the retry again.
    package func cancel() {
        epoch += 1
        inFlight = false
        pending = false
        resolutionRetry.cancel()
    }

    private func checkAddresses(_ addresses: [String], destination: String, epoch checkEpoch: Int) {
        guard !addresses.isEmpty else {
            return checkFinished(AddressAnswer.snapshot(destination: destination, answers: []))
        }
        ask(addresses) { [weak self] answers in
            guard let self, checkEpoch == self.epoch else { return }
            self.checkFinished(AddressAnswer.snapshot(destination: destination, answers: answers))
        }
    }

    private func checkFinished(_ snapshot: ReachabilitySnapshot) {
        inFlight = false
        finished(snapshot)
        if pending {
            pending = false
            check()
        }
    }
}
