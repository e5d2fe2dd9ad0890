#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// What a manager reports on.
enum MonitoredTarget: Sendable, Equatable {
    /// The machine: the daemon's own properties.
    case machine
    /// One literal address, checked with `CheckAddress`.
    case address(String)
    /// A host name with its resolution, resolved here and each address checked with `CheckAddress`.
    case domain(HostLookup)
}

/// Follows reachabilityd for one manager through the bus's shared ``BusHub`` and reports snapshots.
///
/// Confined to the hub's queue. The machine's snapshot is the daemon's properties; an address or
/// a domain is checked with `CheckAddress` whenever the daemon publishes a new state or announces
/// `RoutesChanged`. A stopped daemon reports `.unknown` at once, and so does one that owns its
/// name but does not answer.
final class DaemonSource: BusHubListener, @unchecked Sendable {
    /// How long a `CheckAddress` call may take.
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
    /// Asks again after an unanswered check: after 0.25 s, doubling up to 8 s; starts over after
    /// a check answered in full.
    private lazy var unansweredRetry = RetryBackoff(queue: queue, delays: .unansweredDaemon)
    /// Checks an address or domain with `CheckAddress`; cancelled when a run ends or the daemon goes.
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
    init(hub: BusHub, target: MonitoredTarget, report: @escaping SnapshotReport) {
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
    func start(session: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.session = session
        guard !running else { return }
        running = true
        checker.cancel()
        hub.attach(self, wantsRoutesChanged: target != .machine)
    }

    /// Stops following the daemon. Call on the queue.
    func stop() {
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
    }

    // MARK: - Addresses and domains

    /// Asks the daemon's `CheckAddress` for each address at once; `answered` gets them in order
    /// when the last reply (or timeout) is in. An address the daemon did not answer — too busy
    /// (`org.reachabilityd.Error.Busy`, the bus's `LimitsExceeded`) or too slow (`NoReply`) —
    /// keeps its last answer, and the check runs again later.
    private func askDaemon(_ addresses: [String], answered: @escaping ([AddressAnswer]) -> Void) {
        var answers: [AddressAnswer?] = Array(repeating: nil, count: addresses.count)
        var outstanding = addresses.count
        var unanswered = false
        for (index, address) in addresses.enumerated() {
            hub.callDaemon(
                member: BusContract.checkAddressMethod, arguments: [address], returning: AddressCheckReply.self,
                timeoutMicroseconds: Self.checkTimeoutMicroseconds
            ) { [weak self] reply in
                guard let self else { return }
                if let answer = Self.answer(reply, address: address) {
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

    /// The daemon's answer for `address`; nil when it gave none (no reply, busy, timed out).
    private static func answer(_ reply: Result<AddressCheckReply, BusError>?, address: String) -> AddressAnswer? {
        switch reply {
        case nil:
            return nil
        case .success(let answer)?:
            return AddressAnswer(address: address, status: ReachabilityStatus(rawValue: answer.status) ?? .unknown, interface: answer.interface)
        case .failure(let error)? where unansweredErrors.contains(error.name):
            return nil
        case .failure(let error)?:
            // A rejected address is not reachable; any other error (an unreadable answer too)
            // leaves it unknown.
            let status: ReachabilityStatus = error.name == BusContract.invalidAddressError ? .notReachable : .unknown
            return AddressAnswer(address: address, status: status, interface: "")
        }
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
