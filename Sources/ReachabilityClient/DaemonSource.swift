#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// What a manager reports on.
package enum MonitoredTarget: Sendable, Equatable {
    /// The machine: the daemon's own properties.
    case machine
    /// One literal address, checked with `CheckDestination` (`CheckAddress` with an older daemon).
    case address(String)
    /// A host name with its resolution, resolved here and each address checked likewise.
    case domain(HostLookup)
}

/// Follows reachabilityd for one manager through the bus's shared ``BusHub`` and reports snapshots.
///
/// Confined to the hub's queue. The machine's snapshot is the daemon's properties; an address or
/// a domain is checked with `CheckDestination` (`CheckAddress` with a daemon that predates it) whenever the daemon publishes a new state or announces
/// `RoutesChanged`. A stopped daemon reports `.unknown` at once, and so does one that owns its
/// name but does not answer.
package final class DaemonSource: BusHubListener, @unchecked Sendable {
    /// How long a `CheckDestination` or `CheckAddress` call may take.
    static let checkTimeoutMicroseconds: UInt64 = 5_000_000

    private let hub: BusHub
    private let queue: DispatchQueue
    private let target: MonitoredTarget
    private let reportObservation: SnapshotReport
    /// The caller's token for the current run, passed back with every report.
    private var session: UInt64 = 0

    private var running = false
    private var daemonRunning = false
    /// The machine's snapshot as the daemon last published it: an address's or a domain's
    /// snapshot takes its evidence beyond the route (``EvidenceRule/destination(_:machine:)``).
    private var machine = ReachabilitySnapshot.unknown
    /// Each address's last answer from the daemon, kept while the daemon does not answer.
    private var lastAnswers: [String: AddressAnswer] = [:]
    /// Whether the daemon answers `CheckDestination`: false once it refused the method (a daemon,
    /// or a bus policy, older than it), until the daemon goes.
    private var daemonHasCheckDestination = true
    /// Asks again after an unanswered check: after 0.25 s, doubling up to 8 s; starts over after
    /// a check answered in full.
    private lazy var unansweredRetry = RetryBackoff(queue: queue, delays: .unansweredDaemon)
    /// Checks an address or domain with the daemon; cancelled when a run ends or the daemon goes.
    private lazy var checker = DestinationChecker(
        queue: queue, target: target,
        ask: { [weak self] addresses, answered in self?.askDaemon(addresses, answered: answered) },
        finished: { [weak self] snapshot in self?.checkFinished(snapshot) }
    )

    /// Creates a stopped source.
    ///
    /// - Parameters:
    ///   - hub: the hub of the bus; its queue is the source's.
    ///   - target: what to report on.
    ///   - report: called on the queue with every snapshot (possibly repeated), whether the
    ///     daemon answered, and the session given to ``start(session:)``.
    package init(hub: BusHub, target: MonitoredTarget, report: @escaping SnapshotReport) {
        self.hub = hub
        queue = hub.queue
        self.target = target
        reportObservation = report
    }

    /// Reports a snapshot; it comes from the daemon exactly when the daemon runs.
    private func report(_ snapshot: ReachabilitySnapshot) {
        reportObservation(snapshot, daemonRunning, session)
    }

    /// Starts following the daemon. Call on the queue.
    ///
    /// - Parameter session: a token passed back with every report of this run.
    package func start(session: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.session = session
        guard !running else { return }
        running = true
        checker.cancel()
        hub.attach(self, wantsRoutesChanged: target != .machine)
    }

    /// Stops following the daemon. Call on the queue.
    package func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard running else { return }
        running = false
        daemonRunning = false
        checker.cancel()
        hub.detach(self)
    }

    // MARK: - BusHubListener

    func hub(_ hub: BusHub, daemonState state: DaemonState) {
        guard running else { return }
        switch state {
        case .busUnavailable(let why):
            daemonGone()
            report(.busUnavailable(why))
        case .absent:
            daemonGone()
            report(.daemonAbsent)
        case .notAnswering(let why):
            daemonGone()
            report(.daemonNotAnswering(why))
        case .running(_, let properties):
            daemonRunning = true
            machine = ReachabilitySnapshot(busProperties: properties)
            switch target {
            case .machine: report(machine)
            case .address, .domain:
                // The daemon answers; the destination's snapshot comes when its check ends.
                reportObservation(nil, true, session)
                checker.check()
            }
        }
    }

    func hubRoutesChanged(_ hub: BusHub) {
        guard running, daemonRunning else { return }
        checker.check()
    }

    /// The daemon (or the bus) went away, or does not answer: checks in flight and their
    /// retries are void, and so are its answers.
    private func daemonGone() {
        daemonRunning = false
        checker.cancel()
        unansweredRetry.cancel()
        lastAnswers = [:]
        daemonHasCheckDestination = true
    }

    // MARK: - Addresses and domains

    /// Asks the daemon's `CheckDestination` for each address at once (`CheckAddress` when the
    /// daemon predates it: the whole batch is asked again with it); `answered` gets them in order
    /// when the last reply (or timeout) is in. An address the daemon did not answer — too busy
    /// (`org.reachabilityd.Error.Busy`, the bus's `LimitsExceeded`) or too slow (`NoReply`) —
    /// keeps its last answer, and the check runs again later.
    private func askDaemon(_ addresses: [String], answered: @escaping ([AddressAnswer]) -> Void) {
        var answers: [AddressAnswer?] = Array(repeating: nil, count: addresses.count)
        var outstanding = addresses.count
        var unanswered = false
        var askedAgain = false
        let took = { [weak self] (answer: AddressAnswer?, index: Int) in
            guard let self else { return }
            let address = addresses[index]
            if let answer {
                answers[index] = answer
            } else {
                unanswered = true
                answers[index] = lastAnswers[address] ?? AddressAnswer(address: address, status: .unknown, interface: "")
            }
            outstanding -= 1
            guard outstanding == 0 else { return }
            let complete = answers.compactMap { $0 }
            lastAnswers = Dictionary(complete.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
            unanswered ? retryUnanswered() : unansweredRetry.reset()
            answered(complete)
        }
        let asksDestination = daemonHasCheckDestination
        for (index, address) in addresses.enumerated() {
            if asksDestination {
                hub.callDaemon(
                    member: BusContract.checkDestinationMethod, arguments: [address], returning: [String: BusValue].self,
                    timeoutMicroseconds: Self.checkTimeoutMicroseconds
                ) { [weak self] reply in
                    guard let self, !askedAgain else { return }
                    if case .failure(let error)? = reply, Self.olderDaemonErrors.contains(error.name) {
                        askedAgain = true
                        daemonHasCheckDestination = false
                        return askDaemon(addresses, answered: answered)
                    }
                    took(Self.answer(reply, address: address) { Self.answer(destination: $0, address: address) }, index)
                }
            } else {
                hub.callDaemon(
                    member: BusContract.checkAddressMethod, arguments: [address], returning: AddressCheckReply.self,
                    timeoutMicroseconds: Self.checkTimeoutMicroseconds
                ) { reply in
                    let answer = Self.answer(reply, address: address) { checked in
                        AddressAnswer(address: address, status: ReachabilityStatus(rawValue: checked.status) ?? .unknown, interface: checked.interface)
                    }
                    took(answer, index)
                }
            }
        }
    }

    /// Checks again after the current back-off; one retry is due at a time.
    private func retryUnanswered() {
        unansweredRetry.schedule { [weak self] in
            guard let self, running, daemonRunning else { return }
            checker.check()
        }
    }

    /// Errors that mean the daemon did not get to answer (busy, or the bus refused the call).
    private static let unansweredErrors: Set<String> = [
        BusContract.busyError, BusError.limitsExceeded, BusError.noReply,
    ]

    /// Errors that mean the daemon (or the bus's policy for it) predates `CheckDestination`.
    private static let olderDaemonErrors: Set<String> = [BusError.unknownMethod, BusError.accessDenied]

    /// The daemon's answer for `address`, read from its reply by `reading`; nil when it gave
    /// none (no reply, busy, timed out).
    private static func answer<Reply>(_ reply: Result<Reply, BusError>?, address: String, reading: (Reply) -> AddressAnswer) -> AddressAnswer? {
        switch reply {
        case nil:
            return nil
        case .success(let answer)?:
            return reading(answer)
        case .failure(let error)? where unansweredErrors.contains(error.name):
            return nil
        case .failure(let error)?:
            // A rejected address is not reachable; any other error (an unreadable answer too)
            // leaves it unknown.
            let status: ReachabilityStatus = error.name == BusContract.invalidAddressError ? .notReachable : .unknown
            return AddressAnswer(address: address, status: status, interface: "")
        }
    }

    /// The answer `CheckDestination` gave for `address` (a key missing reads as "").
    private static func answer(destination: [String: BusValue], address: String) -> AddressAnswer {
        AddressAnswer(address: address, checkedDestination: { destination[$0]?.string ?? "" })
    }

    private func checkFinished(_ snapshot: ReachabilitySnapshot) {
        // A daemon that went away meanwhile has already reported `.unknown`.
        if running, daemonRunning { report(EvidenceRule.destination(snapshot, machine: machine)) }
    }
}

/// What `CheckAddress(s)` returns: `(ss)` status and interface.
private struct AddressCheckReply: BusReplyValue {
    /// The address's status, as the daemon spells it.
    let status: String
    /// The interface that would carry traffic to it ("" when none).
    let interface: String

    init(reading reply: BusMessage) throws(SystemError) {
        status = try reply.readString()
        interface = try reply.readString()
    }
}
