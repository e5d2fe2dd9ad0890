#if canImport(Glibc)
import Glibc
#endif
import CurlTransport
import Dispatch
@_exported import ReachabilityClient
import ReachabilityCore
import ReachabilityEngine
import ReachabilityService
import SystemSupport

extension ReachabilityManager.Source {
    /// From the daemon's engine run inside this process (rtnetlink and the same decision rule),
    /// for machines without reachabilityd. ``ReachabilityManager/isDaemonAvailable`` stays false.
    public static let inProcess = Self(name: "in-process") { target, _, report in
        let queue = DispatchQueue(label: "org.reachabilityd.client.in-process")
        return (queue, InProcessSource(queue: queue, target: target, report: report))
    }

    /// From the daemon while its bus name has an owner, else in-process; from the daemon's
    /// Varlink socket where the system bus is not but the socket is (see
    /// ``ReachabilityManager/Source``).
    public static let automatic = Self(name: "automatic") { target, endpoint, report in
        if let socket = varlinkInsteadOfBus(on: endpoint) { return socket.make(target, endpoint, report) }
        let hub = BusHub.hub(for: endpoint)
        return (hub.queue, AutomaticSource(hub: hub, target: target, report: report))
    }
}

/// Runs the daemon's own engine (rtnetlink and the decision rule) inside this process, for
/// machines without reachabilityd. Confined to `queue`.
///
/// The engine reads the daemon's configuration (``ConfigurationFiles``: the file named by
/// `$REACHABILITYD_CONFIG`, else `/etc/reachabilityd/reachabilityd.conf`, and its drop-ins) and
/// publishes through the same stage, so it gives the daemon's statuses, `DownDelaySec=` included.
///
/// The machine's snapshot comes from the engine's evaluation; an address or domain is checked
/// with the engine's route lookup after every batch of kernel routing events.
final class InProcessSource: SnapshotSource, @unchecked Sendable {
    private let queue: DispatchQueue
    private let target: MonitoredTarget
    private let reportSnapshot: SnapshotReport
    private var engine: ReachabilityEngine?
    /// The nameservers (resolv.conf's, or the file systemd-resolved writes its own to), for `DNS`.
    private var nameServers: NameServerSources?
    private var session: UInt64 = 0
    /// The engine's last snapshot of the machine: an address's or a domain's snapshot takes its
    /// evidence beyond the route (``EvidenceRule/destination(_:machine:)``).
    private var machine = ReachabilitySnapshot.unknown
    /// Checks an address or domain with the engine's route lookups; cancelled when a run ends.
    private lazy var checker = DestinationChecker(
        queue: queue, target: target,
        ask: { [weak self] addresses, answered in answered(self?.answers(addresses) ?? []) },
        finished: { [weak self] snapshot in self?.destinationChecked(snapshot) }
    )

    /// Creates a stopped source.
    init(queue: DispatchQueue, target: MonitoredTarget, report: @escaping SnapshotReport) {
        self.queue = queue
        self.target = target
        reportSnapshot = report
    }

    /// Opens the netlink sockets, evaluates and reports, then follows the kernel's events.
    func start(session: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.session = session
        guard engine == nil else { return }
        checker.cancel()
        let engine = ReachabilityEngine(queue: queue, configuration: EngineConfiguration(receiveBufferBytes: 1024 * 1024, networkIDKey: MachineNetworkKey.read()))
        // The daemon's active check, with the same configuration (off without a CheckURL=).
        engine.checkClient = CurlCheckClient(queue: queue)
        if let configuration = ConfigurationFiles.clientFiles.load() { engine.apply(configuration) }
        if target != .machine {
            engine.onRoutingEvents = { [weak self] in self?.checkDestination() }
        }
        let nameServers = NameServerSources(resolvConfPath: "/etc/resolv.conf", queue: queue) { servers in engine.setNameServers(servers) }
        nameServers.start()
        self.nameServers = nameServers
        do throws(SystemError) {
            let first = try engine.start { [weak self] snapshot in self?.engineChanged(snapshot) }
            self.engine = engine
            engineChanged(first)
        } catch {
            stop()
            report(.busUnavailable("cannot follow the kernel's routing state: \(error)"))
        }
    }

    /// Closes the netlink sockets.
    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        nameServers?.stop()
        nameServers = nil
        engine?.stop()
        engine = nil
        checker.cancel()
    }

    private func report(_ snapshot: ReachabilitySnapshot) {
        reportSnapshot(snapshot, false, session)
    }

    private func destinationChecked(_ snapshot: ReachabilitySnapshot) {
        report(EvidenceRule.destination(snapshot, machine: machine))
    }

    private func engineChanged(_ snapshot: ReachabilitySnapshot) {
        machine = snapshot
        if target == .machine {
            report(snapshot)
        } else {
            checkDestination()
        }
    }

    /// Checks the destination with the engine, unless the run has ended.
    private func checkDestination() {
        guard engine != nil else { return }
        checker.check()
    }

    /// The engine's answer for each address.
    private func answers(_ addresses: [String]) -> [AddressAnswer] {
        guard let engine else { return [] }
        return addresses.map { address -> AddressAnswer in
            do throws(InvalidAddressError) {
                let answer = try engine.checkDestination(address)
                return AddressAnswer(
                    address: address, status: answer.verdict.status, interface: answer.verdict.link?.name ?? "", path: answer.path,
                    connectAddress: answer.address
                )
            } catch {
                return AddressAnswer(address: address, status: .notReachable, interface: "")
            }
        }
    }
}

/// Uses the daemon while its bus name has an owner, and the in-process engine while it has not
/// (or while there is no bus). Confined to `queue`.
final class AutomaticSource: SnapshotSource, @unchecked Sendable {
    private let queue: DispatchQueue
    private var daemon: DaemonSource!
    private var inProcess: InProcessSource!
    private let reportSnapshot: SnapshotReport
    private var usingInProcess = false
    private var session: UInt64 = 0

    /// Creates a stopped source on the hub's queue.
    init(hub: BusHub, target: MonitoredTarget, report: @escaping SnapshotReport) {
        queue = hub.queue
        reportSnapshot = report
        let box = WeakAutomaticSource()
        daemon = DaemonSource(hub: hub, target: target) { snapshot, available, session in
            box.source?.daemonReported(snapshot, daemonAvailable: available, session: session)
        }
        inProcess = InProcessSource(queue: queue, target: target) { snapshot, _, session in
            if let snapshot { box.source?.inProcessReported(snapshot, session: session) }
        }
        box.source = self
    }

    func start(session: UInt64) {
        self.session = session
        daemon.start(session: session)
    }

    func stop() {
        daemon.stop()
        inProcess.stop()
        usingInProcess = false
    }

    private func daemonReported(_ snapshot: ReachabilitySnapshot?, daemonAvailable: Bool, session: UInt64) {
        if daemonAvailable {
            if usingInProcess {
                inProcess.stop()
                usingInProcess = false
            }
            reportSnapshot(snapshot, true, session)
        } else if !usingInProcess {
            usingInProcess = true
            inProcess.start(session: session)
        }
    }

    private func inProcessReported(_ snapshot: ReachabilitySnapshot, session: UInt64) {
        guard usingInProcess else { return }
        reportSnapshot(snapshot, false, session)
    }
}

/// A weak reference the inner sources' callbacks hold.
private final class WeakAutomaticSource: @unchecked Sendable {
    weak var source: AutomaticSource?
}
