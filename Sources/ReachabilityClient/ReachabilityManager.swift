// Over 300 lines on purpose: this is the client library's public surface, the
// AFNetworkReachabilityManager API made Swift, one type whose members users read together; a
// third of it is their doc comments. The machinery lives elsewhere (BusHub, DaemonSource,
// InProcessSource, DestinationChecker).
import Dispatch
import ReachabilityCore
import Synchronization

/// Follows the network reachability that `reachabilityd` publishes on the system bus: the
/// machine's, or that of one address or host name. The Linux counterpart of AFNetworking's
/// `AFNetworkReachabilityManager`.
///
/// ```swift
/// let manager = ReachabilityManager.shared
/// manager.setStatusChangeHandler(queue: .main) { status in
///     print(status.localizedDescription)
/// }
/// manager.startMonitoring()
/// ```
///
/// Nothing is known before ``startMonitoring()``: ``status`` is `.unknown` until the first
/// answer from the daemon arrives, and again after ``stopMonitoring()``. While no process owns
/// the daemon's bus name the status is `.unknown`; when the daemon (re)appears the manager reads
/// its state again. So it is while the owner does not answer that read (stopped, hung): the
/// manager reads again after a back-off, or as soon as the daemon publishes a change, until it
/// answers. No method blocks the caller: the bus is driven on a private serial queue.
///
/// Every observer (the handler, each ``statusUpdates`` sequence) gets the current status first,
/// then only real changes, never the same status twice in a row. All members are thread-safe.
public final class ReachabilityManager: Sendable {
    /// A process-wide observer of every manager's changes: the manager, the previous snapshot
    /// and the new one.
    public typealias ChangeObserver = @Sendable (_ manager: ReachabilityManager, _ previous: ReachabilitySnapshot, _ next: ReachabilitySnapshot) -> Void

    private static let changeObservers = Mutex<[ChangeObserver]>([])

    /// Calls `observer` with every change any monitoring manager of the process publishes
    /// (after its first answer), on that manager's private queue, for as long as the process
    /// runs. The hook of overlays such as `ReachabilityNotifications`, which posts the
    /// AFNetworking-style notifications; most code wants a handler or a stream instead.
    public static func observeAllChanges(_ observer: @escaping ChangeObserver) {
        changeObservers.withLock { $0.append(observer) }
    }

    /// The manager for the machine's reachability, shared by the whole process.
    public static let shared = ReachabilityManager()

    /// Where a manager gets its answers: ``daemon``; with `import ReachabilityInProcess` also
    /// `.inProcess` (the daemon's engine run inside this process, for machines without
    /// reachabilityd) and `.automatic` (the daemon while its bus name has an owner, else
    /// in-process), so that a program that follows only the daemon links no engine.
    ///
    /// Where the system bus's socket is missing (`$DBUS_SYSTEM_BUS_ADDRESS`'s path, else
    /// `/run/dbus/system_bus_socket`) but the daemon's Varlink socket is there
    /// (``varlinkSocketPath``), ``daemon`` and `.automatic` ask that socket instead, as ``varlink(path:)`` does: an application in a container with
    /// `/run/reachabilityd` bind-mounted works unchanged. Which it is is decided when the
    /// manager is made.
    public struct Source: Sendable, Equatable {
        /// A manager's queue and its source, made for `target` on the bus at `endpoint`.
        package typealias Make = @Sendable (_ target: MonitoredTarget, _ endpoint: BusEndpoint, _ report: @escaping SnapshotReport) -> (DispatchQueue, any SnapshotSource)

        /// The source's name, as `reachabilityctl --source` spells it.
        package let name: String
        /// Makes a manager's queue and source.
        package let make: Make

        /// A source called `name`, made by `make`.
        package init(name: String, make: @escaping Make) {
            self.name = name
            self.make = make
        }

        /// From reachabilityd over the system bus; `.unknown` while the daemon is not running.
        public static let daemon = Source(name: "daemon") { target, endpoint, report in
            // No bus would answer any target there: the socket's answer says why at least.
            if let socket = varlinkInsteadOfBus(on: endpoint) { return socket.make(target, endpoint, report) }
            let hub = BusHub.hub(for: endpoint)
            return (hub.queue, DaemonSource(hub: hub, target: target, report: report))
        }

        /// From reachabilityd's Varlink socket at `path` (`Subscribe`), for a process without a
        /// system bus, e.g. a container with `/run/reachabilityd` bind-mounted; `.unknown` while
        /// the socket does not answer. An address's or a host name's manager resolves the name
        /// here and asks `CheckDestination` for each address, on every published change.
        public static func varlink(path: String) -> Source {
            Source(name: "varlink:\(path)") { target, _, report in
                let queue = DispatchQueue(label: "org.reachabilityd.client.varlink")
                return (queue, VarlinkSource(queue: queue, path: path, target: target, report: report))
            }
        }

        /// The socket ``varlink(path:)`` usually names: `$REACHABILITYD_SOCKET`, else
        /// `/run/reachabilityd/org.reachabilityd.Reachability`.
        public static var varlinkSocketPath: String { VarlinkSource.defaultPath }

        /// The daemon's Varlink socket as a source, where a source of the system bus at
        /// `endpoint` would find no bus but that socket is there (``Source``); nil otherwise,
        /// and always for a bus at an explicit address.
        package static func varlinkInsteadOfBus(on endpoint: BusEndpoint) -> Source? {
            guard endpoint == .system else { return nil }
            return VarlinkSource.insteadOfSystemBus.map { varlink(path: $0) }
        }

        /// Two sources are equal when they are the same kind (and socket).
        public static func == (lhs: Source, rhs: Source) -> Bool {
            lhs.name == rhs.name
        }
    }

    private let queue: DispatchQueue
    private let source: any SnapshotSource
    /// The host name's resolution, for a manager of a host name.
    private let hostLookup: HostLookup?
    private let state = Mutex(State())

    /// A manager for the machine's reachability: the daemon's `Status` and properties.
    public convenience init() {
        self.init(target: .machine, endpoint: .system)
    }

    /// A manager for the machine's reachability, answered by `source`.
    ///
    /// - Parameter source: the daemon, the engine in this process, or whichever is available.
    public convenience init(source: Source) {
        self.init(target: .machine, endpoint: .system, source: source)
    }

    /// A manager for one literal address (see ``init(address:)``), answered by `source`.
    ///
    /// - Parameters:
    ///   - address: the literal address.
    ///   - source: the daemon, the engine in this process, or whichever is available.
    public convenience init(address: String, source: Source) {
        self.init(target: .address(address), endpoint: .system, source: source)
    }

    /// A manager for a host name (see ``init(domain:)``), answered by `source`.
    ///
    /// - Parameters:
    ///   - domain: a host name.
    ///   - source: the daemon, the engine in this process, or whichever is available.
    public convenience init(domain: String, source: Source) {
        self.init(target: .domain(HostLookup(domain)), endpoint: .system, source: source)
    }

    /// A manager for one literal IPv4 or IPv6 address (`"192.0.2.7"`, `"2001:db8::1"`): the
    /// reachability the kernel's route lookup gives for it, asked of the daemon with
    /// `CheckAddress`, and asked again whenever the daemon announces a routing change
    /// (`RoutesChanged`). An address the daemon rejects as malformed is `.notReachable`.
    ///
    /// - Parameter address: the literal address.
    public convenience init(address: String) {
        self.init(target: .address(address), endpoint: .system)
    }

    /// A manager for a host name: resolved in this process with the system resolver, each
    /// address checked with the daemon's `CheckAddress`; the best answer wins (reachable beats
    /// not reachable; among equals, the resolver's preferred address). A name that does not
    /// resolve is `.notReachable`, and is looked up again by itself after 1 s, then 2 s, 4 s…
    /// up to 30 s, until it resolves. The addresses are checked again whenever the daemon announces
    /// a routing change (`RoutesChanged`) or publishes a new state; a successful resolution is
    /// reused for 30 s, and a failure until the name's next lookup, so route churn does not become
    /// DNS traffic.
    ///
    /// - Parameter domain: a host name, e.g. `"example.org"`.
    public convenience init(domain: String) {
        self.init(target: .domain(HostLookup(domain)), endpoint: .system)
    }

    /// A manager for `target` on `endpoint` answered by `source`; tests use it with a private bus.
    ///
    /// Managers that use the daemon share the bus's one connection and its queue (see
    /// ``BusHub``); an in-process manager has a queue of its own.
    init(target: MonitoredTarget, endpoint: BusEndpoint, source kind: Source = .daemon) {
        // The source reports to a weak box: the manager owns the source, not the other way round.
        if case .domain(let lookup) = target { hostLookup = lookup } else { hostLookup = nil }
        let box = WeakManager()
        let report: SnapshotReport = { snapshot, daemonAvailable, session in
            box.manager?.receive(snapshot, daemonAvailable: daemonAvailable, session: session)
        }
        (queue, source) = kind.make(target, endpoint, report)
        box.manager = self
    }

    deinit {
        let source = source
        queue.async { source.stop() }
    }

    // MARK: - The current state

    /// The current status; `.unknown` before the first answer and while not monitoring.
    public var status: ReachabilityStatus {
        state.withLock { $0.snapshot.status }
    }

    /// Everything known about the current state: status, interface, transport, per-family
    /// reachability, metering, and the daemon's reason.
    public var snapshot: ReachabilitySnapshot {
        state.withLock { $0.snapshot }
    }

    /// Whether reachabilityd answered the last time this manager looked: false before monitoring
    /// has an answer, while the daemon's bus name has no owner or its owner does not answer, and
    /// while the bus is unreachable.
    /// For an address or a host name, true as soon as the daemon answers, while the first check
    /// (the resolution of the name, then `CheckAddress`) may still be running.
    public var isDaemonAvailable: Bool {
        state.withLock { $0.isDaemonAvailable }
    }

    /// Where the system resolver stands on the host name of a manager made with
    /// ``init(domain:)``; nil for the machine's manager and an address's. While it is
    /// ``HostResolution/waiting(since:)`` no answer can come: the daemon is asked about the
    /// addresses only once the name has them — what a program waiting for the first answer
    /// reads to tell a silent resolver from a daemon that does not answer. The name is resolved
    /// once at a time whatever the checks do, and the last answer is kept after
    /// ``stopMonitoring()``.
    public var hostResolution: HostResolution? {
        hostLookup?.resolution
    }

    /// Whether the status is one of the reachable ones.
    public var isReachable: Bool { status.isReachable }

    /// Whether the status is `.reachableViaWWAN`.
    public var isReachableViaWWAN: Bool { status == .reachableViaWWAN }

    /// Whether the status is `.reachableViaWiFi`.
    public var isReachableViaWiFi: Bool { status == .reachableViaWiFi }

    /// Whether the status is `.reachableViaEthernet`.
    public var isReachableViaEthernet: Bool { status == .reachableViaEthernet }

    /// The interface that carries the traffic ("eth0"), or nil when not reachable.
    public var interfaceName: String? {
        let name = snapshot.interface
        return name.isEmpty ? nil : name
    }

    /// The interface that carries `family`'s traffic, or nil when that family is not reachable
    /// (with both reachable, ``interfaceName`` is IPv4's).
    public func interfaceName(for family: AddressFamily) -> String? {
        let snapshot = snapshot
        let name = family == .ipv4 ? snapshot.ipv4Interface : snapshot.ipv6Interface
        return name.isEmpty ? nil : name
    }

    /// The transport of ``interfaceName(for:)``, or nil when that family is not reachable.
    public func transport(for family: AddressFamily) -> Transport? {
        let snapshot = snapshot
        return family == .ipv4 ? snapshot.ipv4Transport : snapshot.ipv6Transport
    }

    /// Whether the traffic is metered (the daemon's `Metered`: a `Metered=` line, else
    /// NetworkManager's verdict, else DHCP's ANDROID_METERED, else a cellular link), as Android's
    /// `NET_CAPABILITY_NOT_METERED` missing and Apple's `isExpensive` say. For an address or a
    /// host name: whether its route's link is cellular.
    public var isMetered: Bool { snapshot.isMetered }

    /// Which rule decided ``isMetered`` (the daemon's `MeteredReason`); `.noRoute` without a route.
    public var meteredReason: MeteredReason { snapshot.meteredReason }

    /// An opaque id of the network the route leads into (the daemon's `NetworkID`), to keep
    /// per-network state: the same for the same network on this machine across reboots, another
    /// on another machine; nil without a route or while the daemon does not know the gateway's
    /// link-layer address, and for an address's or a host name's manager.
    public var networkID: String? {
        let id = snapshot.networkID
        return id.isEmpty ? nil : id
    }

    /// Every network link the daemon knows, loopback left out, in index order (the daemon's
    /// `Interfaces` property, NWPath's `availableInterfaces`): each one's name, transport,
    /// state, usable address families, default gateways, metering, and why it does not count.
    /// It comes with the other properties, in the same snapshot as the status it explains; a
    /// change of it alone is delivered to ``snapshotUpdates``. Empty before the first answer,
    /// while not monitoring, and for an address's or a host name's manager.
    public var interfaces: [NetworkInterface] { snapshot.interfaces }

    /// Whether traffic gets out beyond the route (the better family's): `.none` without a
    /// route, `.unknown` with one and no evidence either way, `.limited` when the evidence says
    /// packets do not get out (the gateway failed address resolution, or the daemon's opt-in
    /// check got no answer), `.portal` (a captive portal), `.full` (the check's expected answer).
    /// For an address or a host name: the daemon's evidence for each family whose route to it
    /// leaves through the daemon's interface for that family, else `.unknown`.
    public var connectivity: Connectivity { snapshot.connectivity }

    /// Whether public names will resolve (the daemon's `DNS`): `.none` (no nameserver for them),
    /// `.unreachable` (none routed), `.reachable` (one is routed), and with the daemon's check on
    /// `.failing` or `.answering` (its last lookup); `.unknown` before the first answer. For an
    /// address or a host name: the machine's.
    public var dns: DNSReadiness { snapshot.dns }

    /// The NAT64 prefix in use (the daemon's `NAT64Prefix`: learned from router advertisements),
    /// nil when none is known. An IPv4 address is reached through the NAT64 at the prefix with
    /// the address embedded (RFC 6052, ``NAT64Prefix/synthesizing(_:)``). For an address or a
    /// host name: the machine's.
    public var nat64Prefix: NAT64Prefix? { NAT64Prefix(snapshot.nat64Prefix) }

    /// How IPv4 destinations are reached (the daemon's `IPv4Access`): `.native`, `.clat` (through
    /// a CLAT: an IPv4 literal works), `.nat64` (only at an address synthesized with
    /// ``nat64Prefix``) or `.none`. For an address or a host name: the machine's.
    public var ipv4Access: IPv4Access { snapshot.ipv4Access }

    /// The session the network's captive-portal API describes (the daemon's
    /// `CaptivePortalSession`, RFC 8908; Android's `CaptivePortalData`): the time and bytes left
    /// before the network holds this host behind its portal again, the venue's page, whether the
    /// session can be extended; each nil when the API did not say (``CaptivePortalSession/isEmpty``:
    /// no API, checks off, or no connectivity). `secondsRemaining` is as of the snapshot's
    /// delivery: the daemon announces it again as it counts down (each minute in its last 16
    /// minutes, each eighth above). For an address or a host name: the machine's, while its
    /// connectivity is `.full` or `.portal`.
    public var captivePortalSession: CaptivePortalSession { snapshot.captivePortalSession }

    /// For an address's or a host name's manager: how a connection gets to the address the
    /// status is about (the daemon's `CheckDestination`): `.direct`, `.clat` or `.nat64`; nil
    /// for the machine's manager, before the first answer, and with a daemon that predates
    /// `CheckDestination` (then the status is `CheckAddress`'s).
    public var destinationPath: DestinationPath? { snapshot.destinationPath }

    /// For an address's or a host name's manager: where to connect — with
    /// ``destinationPath`` `.nat64` the IPv6 address that reaches the IPv4 one through NAT64,
    /// else the address itself; nil when not known (as for ``destinationPath``).
    public var destinationAddress: String? {
        let address = snapshot.destinationAddress
        return address.isEmpty ? nil : address
    }

    /// The captive portal's user-facing URL, when one is known.
    public var captivePortalURL: String? {
        let url = snapshot.captivePortal
        return url.isEmpty ? nil : url
    }

    // MARK: - Monitoring

    /// Starts following the daemon. Returns at once; observers get the first status when the
    /// daemon has answered (or is found absent). Calling it again while monitoring does nothing.
    public func startMonitoring() {
        let session = state.withLock { state -> UInt64? in
            guard !state.isMonitoring else { return nil }
            state.isMonitoring = true
            state.session += 1
            return state.session
        }
        guard let session else { return }
        let source = source
        queue.async { source.start(session: session) }
    }

    /// Stops following the daemon. The status reads `.unknown` until monitoring starts again;
    /// observers are kept and hear nothing until then.
    public func stopMonitoring() {
        state.withLock { state in
            state.isMonitoring = false
            state.isResolved = false
            state.isDaemonAvailable = false
            state.snapshot = .unknown
        }
        let source = source
        queue.async { source.stop() }
    }

    /// Sets the closure called with the status: the current status first (as soon as it is
    /// known while monitoring), then each change. Replaces any previous handler; nil removes it.
    ///
    /// The default queue, `.main`, runs only while the program runs a main loop (`dispatchMain()`,
    /// `RunLoop.main.run()`, or an async `main`); a daemon without one passes its own queue.
    ///
    /// - Parameters:
    ///   - queue: the queue the handler runs on; a serial one keeps the deliveries in order.
    ///   - handler: the closure, or nil.
    public func setStatusChangeHandler(queue: DispatchQueue = .main, _ handler: (@Sendable (ReachabilityStatus) -> Void)?) {
        guard let handler else { return setHandler(id: State.handlerID, observing: .status, deliver: nil) }
        setHandler(id: State.handlerID, observing: .status) { snapshot in queue.async { handler(snapshot.status) } }
    }

    /// Sets the closure called with the connectivity: the current value first (as soon as it is
    /// known while monitoring), then each change. Replaces any previous one; nil removes it.
    ///
    /// - Parameters:
    ///   - queue: the queue the handler runs on (see ``setStatusChangeHandler(queue:_:)``).
    ///   - handler: the closure, or nil.
    public func setConnectivityChangeHandler(queue: DispatchQueue = .main, _ handler: (@Sendable (Connectivity) -> Void)?) {
        guard let handler else { return setHandler(id: State.connectivityHandlerID, observing: .connectivity, deliver: nil) }
        setHandler(id: State.connectivityHandlerID, observing: .connectivity) { snapshot in queue.async { handler(snapshot.connectivity) } }
    }

    /// Installs (or with nil removes) the handler subscriber `id`, told the current state first.
    private func setHandler(id: UInt64, observing change: ObservedChange, deliver: (@Sendable (ReachabilitySnapshot) -> Void)?) {
        state.withLock { state in
            guard let deliver else {
                state.subscribers[id] = nil
                return
            }
            var subscriber = Subscriber(observing: change, deliver: deliver)
            if state.isResolved { subscriber.offer(state.snapshot) }
            state.subscribers[id] = subscriber
        }
    }

    /// The statuses as an asynchronous sequence: the current status first (as soon as it is
    /// known while monitoring), then each change. Each access makes a new sequence; it ends
    /// when the task iterating it is cancelled.
    public var statusUpdates: AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReachabilityStatus.self)
        subscribe(observing: .status, continuation: continuation) { continuation.yield($0.status) }
        return stream
    }

    /// The connectivity as an asynchronous sequence: the current value first (as soon as it is
    /// known while monitoring), then each change. Each access makes a new sequence; it ends
    /// when the task iterating it is cancelled.
    public var connectivityUpdates: AsyncStream<Connectivity> {
        let (stream, continuation) = AsyncStream.makeStream(of: Connectivity.self)
        subscribe(observing: .connectivity, continuation: continuation) { continuation.yield($0.connectivity) }
        return stream
    }

    /// The snapshots as an asynchronous sequence: the current snapshot first, then each one
    /// that differs from the last in any published value (interface, transport, reason…).
    public var snapshotUpdates: AsyncStream<ReachabilitySnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReachabilitySnapshot.self)
        subscribe(observing: .anything, continuation: continuation) { continuation.yield($0) }
        return stream
    }

    private func subscribe<Element>(
        observing change: ObservedChange, continuation: AsyncStream<Element>.Continuation,
        deliver: @escaping @Sendable (ReachabilitySnapshot) -> Void
    ) {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            var subscriber = Subscriber(observing: change, deliver: deliver)
            if state.isResolved { subscriber.offer(state.snapshot) }
            state.subscribers[state.nextID] = subscriber
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.subscribers[id] = nil }
        }
    }

    /// Takes a snapshot from the source (on the queue) and tells every observer that needs it;
    /// a nil snapshot updates only ``isDaemonAvailable``.
    private func receive(_ snapshot: ReachabilitySnapshot?, daemonAvailable: Bool, session: UInt64) {
        let previous = state.withLock { state -> ReachabilitySnapshot? in
            // A report of an earlier run (stop and start in quick succession) is stale.
            guard state.isMonitoring, session == state.session else { return nil }
            state.isDaemonAvailable = daemonAvailable
            guard let snapshot else { return nil }
            let previous = state.snapshot
            state.snapshot = snapshot
            state.isResolved = true
            // Deliveries are enqueued under the lock, so they keep the order of the snapshots.
            for id in state.subscribers.keys { state.subscribers[id]!.offer(snapshot) }
            return previous
        }
        guard let previous, let snapshot, previous != snapshot else { return }
        for observer in Self.changeObservers.withLock({ $0 }) { observer(self, previous, snapshot) }
    }
}

/// The manager's mutable state, behind its lock.
private struct State: Sendable {
    /// The subscriber id of the status change handler.
    static let handlerID: UInt64 = 0
    /// The subscriber id of the connectivity change handler (stream ids count up from 1).
    static let connectivityHandlerID = UInt64.max

    var snapshot = ReachabilitySnapshot.unknown
    var isMonitoring = false
    /// Counts the runs of ``ReachabilityManager/startMonitoring()``.
    var session: UInt64 = 0
    var isDaemonAvailable = false
    /// The first answer since monitoring started has arrived.
    var isResolved = false
    var subscribers: [UInt64: Subscriber] = [:]
    var nextID: UInt64 = 0
}

/// What an observer is told about: changes of the status, of the connectivity, or of anything.
private enum ObservedChange: Sendable {
    case status, connectivity, anything

    /// Whether `next` tells the observer nothing new after `last`.
    func isSame(_ next: ReachabilitySnapshot, as last: ReachabilitySnapshot) -> Bool {
        switch self {
        case .status: next.status == last.status
        case .connectivity: next.connectivity == last.connectivity
        case .anything: next == last
        }
    }
}

/// One observer and what it was last told.
private struct Subscriber: Sendable {
    /// What the observer is told about.
    let change: ObservedChange
    /// Hands a snapshot to the observer without blocking.
    let deliver: @Sendable (ReachabilitySnapshot) -> Void
    private var last: ReachabilitySnapshot?

    init(observing change: ObservedChange, deliver: @escaping @Sendable (ReachabilitySnapshot) -> Void) {
        self.change = change
        self.deliver = deliver
    }

    /// Delivers `snapshot` unless the observer was last told the same thing.
    mutating func offer(_ snapshot: ReachabilitySnapshot) {
        if let last, change.isSame(snapshot, as: last) { return }
        last = snapshot
        deliver(snapshot)
    }
}

/// A weak reference the source's callback holds.
private final class WeakManager: @unchecked Sendable {
    weak var manager: ReachabilityManager?
}
