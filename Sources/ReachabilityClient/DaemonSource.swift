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
    /// A host name, resolved here and each address checked with `CheckAddress`.
    case domain(String)
}

/// Follows reachabilityd for one manager through the bus's shared ``BusHub`` and reports snapshots.
///
/// Confined to the hub's queue. The machine's snapshot is the daemon's properties; an address or
/// a domain is checked with `CheckAddress` whenever the daemon publishes a new state or announces
/// `RoutesChanged`. A stopped daemon reports `.unknown` at once.
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
    /// Counts runs and daemon (re)appearances: answers to checks of an older one are dropped.
    private var epoch = 0
    private var daemonRunning = false
    private var checkInFlight = false
    private var checkPending = false
    /// The domain's addresses, reused for a while across re-checks.
    private var resolved = ResolvedAddresses()

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
        epoch += 1
        hub.attach(self, wantsRoutesChanged: target != .machine)
    }

    /// Stops following the daemon. Call on the queue.
    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard running else { return }
        running = false
        epoch += 1
        daemonRunning = false
        checkInFlight = false
        checkPending = false
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
        case .running(_, let properties):
            daemonRunning = true
            switch target {
            case .machine: report(ReachabilitySnapshot(busProperties: properties))
            case .address, .domain: checkDestination()
            }
        }
    }

    func hubRoutesChanged(_ hub: BusHub) {
        guard running, daemonRunning else { return }
        checkDestination()
    }

    /// The daemon (or the bus) went away: checks in flight are void.
    private func daemonGone() {
        if daemonRunning || checkInFlight { epoch += 1 }
        daemonRunning = false
        checkInFlight = false
        checkPending = false
    }

    // MARK: - Addresses and domains

    /// Checks the monitored destination's addresses; a request during a check runs once after it.
    private func checkDestination() {
        guard !checkInFlight else {
            checkPending = true
            return
        }
        checkInFlight = true
        let current = epoch
        switch target {
        case .machine:
            return
        case .address(let address):
            checkAddresses([address], destination: address, epoch: current)
        case .domain(let host):
            if let addresses = resolved.fresh() {
                return checkAddresses(addresses, destination: host, epoch: current)
            }
            // getaddrinfo blocks: resolve away from the bus queue, continue there.
            DispatchQueue.global().async { [weak self] in
                let outcome = HostResolver.resolve(host)
                guard let self else { return }
                self.queue.async {
                    guard self.running, current == self.epoch else { return }
                    self.resolved.remember(outcome)
                    switch outcome {
                    case .addresses(let addresses):
                        self.checkAddresses(addresses, destination: host, epoch: current)
                    case .failed(let why):
                        self.checkFinished(ReachabilitySnapshot(
                            status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
                            interface: "", transport: nil, isMetered: false, reason: "cannot resolve \(host): \(why)"
                        ))
                    }
                }
            }
        }
    }

    private func checkAddresses(_ addresses: [String], destination: String, epoch checkEpoch: Int) {
        guard !addresses.isEmpty else {
            return checkFinished(AddressAnswer.snapshot(destination: destination, answers: []))
        }
        var answers: [AddressAnswer?] = Array(repeating: nil, count: addresses.count)
        var outstanding = addresses.count
        for (index, address) in addresses.enumerated() {
            hub.callDaemon(
                member: BusContract.checkAddressMethod, arguments: [address], timeoutMicroseconds: Self.checkTimeoutMicroseconds
            ) { [weak self] reply in
                guard let self, self.running, checkEpoch == self.epoch else { return }
                answers[index] = Self.answer(reply, address: address)
                outstanding -= 1
                if outstanding == 0 {
                    self.checkFinished(AddressAnswer.snapshot(destination: destination, answers: answers.compactMap { $0 }))
                }
            }
        }
    }

    private static func answer(_ reply: BusMessage?, address: String) -> AddressAnswer {
        guard let reply else { return AddressAnswer(address: address, status: .unknown, interface: "") }
        if let error = reply.error {
            // A rejected address is not reachable; a daemon that did not answer leaves it unknown.
            let status: ReachabilityStatus = error.name == BusContract.invalidAddressError ? .notReachable : .unknown
            return AddressAnswer(address: address, status: status, interface: "")
        }
        guard let status = try? reply.readString(), let interface = try? reply.readString() else {
            return AddressAnswer(address: address, status: .unknown, interface: "")
        }
        return AddressAnswer(address: address, status: ReachabilityStatus(rawValue: status) ?? .unknown, interface: interface)
    }

    private func checkFinished(_ snapshot: ReachabilitySnapshot) {
        checkInFlight = false
        // A daemon that went away meanwhile has already reported `.unknown`.
        if daemonRunning { report(snapshot) }
        if checkPending {
            checkPending = false
            checkDestination()
        }
    }
}
