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

/// Which bus a manager talks to.
enum BusEndpoint: Sendable, Equatable {
    /// The system bus (`$DBUS_SYSTEM_BUS_ADDRESS` when set).
    case system
    /// A bus at an explicit address, e.g. a test's private bus.
    case address(String)
}

/// Follows reachabilityd over D-Bus for one manager and reports snapshots.
///
/// Confined to `queue`. While running it keeps a connection with matches for `NameOwnerChanged`
/// of the daemon's name (so a stopped daemon reads `.unknown` at once and a restarted one is
/// re-read), `PropertiesChanged` on the daemon's object and, for an address or a domain,
/// `RoutesChanged` (which trigger a new `CheckAddress`); signals are believed only from the
/// name's current owner. A lost bus connection is retried every second. Every (re)connection starts a
/// new epoch; replies from an older epoch are dropped.
final class DaemonSource: @unchecked Sendable {
    /// How long to wait before reconnecting to a bus that went away.
    static let reconnectDelay: DispatchTimeInterval = .seconds(1)
    /// How long a `CheckAddress` call may take.
    static let checkTimeoutMicroseconds: UInt64 = 5_000_000

    private let queue: DispatchQueue
    private let target: MonitoredTarget
    private let endpoint: BusEndpoint
    private let reportObservation: @Sendable (ReachabilitySnapshot, _ daemonAvailable: Bool, _ session: UInt64) -> Void
    /// The caller's token for the current run, passed back with every report.
    private var session: UInt64 = 0

    private var running = false
    private var epoch = 0
    private var connection: BusConnection?
    private var matches: [BusSlot] = []
    private var reconnectTimer: DispatchSourceTimer?
    /// The daemon's unique name while it owns the well-known name.
    private var owner: String?
    /// The daemon's properties, once read with `GetAll`.
    private var properties: [String: PropertyValue]?
    private var checkInFlight = false
    private var checkPending = false
    /// The domain's addresses, reused for a while across re-checks.
    private var resolved = ResolvedAddresses()

    /// Creates a stopped source.
    ///
    /// - Parameters:
    ///   - queue: the serial queue everything runs on.
    ///   - target: what to report on.
    ///   - endpoint: the bus.
    ///   - report: called on the queue with every snapshot (possibly repeated), whether the
    ///     daemon answered, and the session given to ``start(session:)``.
    init(
        queue: DispatchQueue, target: MonitoredTarget, endpoint: BusEndpoint,
        report: @escaping @Sendable (ReachabilitySnapshot, _ daemonAvailable: Bool, _ session: UInt64) -> Void
    ) {
        self.queue = queue
        self.target = target
        self.endpoint = endpoint
        reportObservation = report
    }

    /// Reports a snapshot; it comes from the daemon exactly when the daemon's name has an owner.
    private func report(_ snapshot: ReachabilitySnapshot) {
        reportObservation(snapshot, owner != nil, session)
    }

    /// Connects and starts following the daemon. Call on the queue.
    ///
    /// - Parameter session: a token passed back with every report of this run.
    func start(session: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.session = session
        guard !running else { return }
        running = true
        connect()
    }

    /// Stops following the daemon and closes the connection. Call on the queue.
    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        running = false
        tearDown()
        reconnectTimer?.cancel()
        reconnectTimer = nil
    }

    // MARK: - Connection

    private func connect() {
        tearDown()
        let current = epoch
        do throws(SystemError) {
            let connection = switch endpoint {
            case .system: try BusConnection.system(queue: queue)
            case .address(let address): try BusConnection.open(address: address, queue: queue)
            }
            self.connection = connection
            matches.append(try connection.addMatch(Self.nameOwnerChangedRule) { [weak self] message in
                self?.nameOwnerChanged(message, epoch: current)
            })
            matches.append(try connection.addMatch(Self.propertiesChangedRule) { [weak self] message in
                self?.propertiesChanged(message, epoch: current)
            })
            if target != .machine {
                matches.append(try connection.addMatch(Self.routesChangedRule) { [weak self] message in
                    self?.routesChanged(message, epoch: current)
                })
            }
            try connection.startProcessing { [weak self] error in
                // Not from inside the connection's own processing: tear down on the next turn.
                guard let self else { return }
                self.queue.async { self.connectionLost(error, epoch: current) }
            }
            try connection.call(
                destination: Self.busDriver, path: Self.busDriverPath, interface: Self.busDriver, member: "GetNameOwner",
                arguments: [BusContract.busName]
            ) { [weak self] reply in
                self?.nameOwnerReply(reply, epoch: current)
            }
        } catch {
            connectionLost(error, epoch: current)
        }
    }

    private func connectionLost(_ error: SystemError, epoch lostEpoch: Int) {
        guard running, lostEpoch == epoch else { return }
        tearDown()
        report(.busUnavailable("no system bus (\(error.errnoDescription))"))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.reconnectDelay)
        timer.setEventHandler { [weak self] in
            guard let self, self.running else { return }
            self.reconnectTimer = nil
            self.connect()
        }
        reconnectTimer?.cancel()
        reconnectTimer = timer
        timer.activate()
    }

    /// Forgets the connection and everything learnt through it; starts a new epoch.
    private func tearDown() {
        epoch += 1
        owner = nil
        properties = nil
        checkInFlight = false
        checkPending = false
        matches = []  // removes the matches while the connection can still send RemoveMatch
        connection?.close()
        connection = nil
    }

    // MARK: - The daemon's name and properties

    private func nameOwnerReply(_ reply: BusMessage, epoch replyEpoch: Int) {
        guard running, replyEpoch == epoch else { return }
        if reply.error != nil {
            // NameHasNoOwner: not running now; NameOwnerChanged tells when it starts.
            daemonAbsent()
            return
        }
        guard let unique = try? reply.readString() else { return daemonAbsent() }
        daemonAppeared(unique)
    }

    private func nameOwnerChanged(_ message: BusMessage, epoch signalEpoch: Int) {
        guard running, signalEpoch == epoch, message.sender == Self.busDriver || message.sender == nil,
              let name = try? message.readString(), name == BusContract.busName,
              (try? message.readString()) != nil, let newOwner = try? message.readString()
        else { return }
        if newOwner.isEmpty {
            daemonAbsent()
        } else {
            daemonAppeared(newOwner)
        }
    }

    private func daemonAbsent() {
        owner = nil
        properties = nil
        report(.daemonAbsent)
    }

    private func daemonAppeared(_ unique: String) {
        owner = unique
        properties = nil
        let current = epoch
        do throws(SystemError) {
            try connection?.call(
                destination: BusContract.busName, path: BusContract.objectPath, interface: Self.propertiesInterface,
                member: "GetAll", arguments: [BusContract.interface]
            ) { [weak self] reply in
                self?.allProperties(reply, owner: unique, epoch: current)
            }
        } catch {
            Log.debug("\(error)")
        }
    }

    private func allProperties(_ reply: BusMessage, owner replyOwner: String, epoch replyEpoch: Int) {
        guard running, replyEpoch == epoch, replyOwner == owner else { return }
        guard reply.error == nil, let values = try? reply.readPropertyDictionary() else {
            // The daemon went away between the two calls; NameOwnerChanged follows.
            return daemonAbsent()
        }
        properties = values
        daemonChanged()
    }

    private func propertiesChanged(_ message: BusMessage, epoch signalEpoch: Int) {
        // Signals that arrive before the GetAll reply are older than it: ignore them.
        guard running, signalEpoch == epoch, let owner, message.sender == owner, var known = properties,
              (try? message.readString()) == BusContract.interface,
              let changed = try? message.readPropertyDictionary()
        else { return }
        known.merge(changed) { _, new in new }
        properties = known
        daemonChanged()
    }

    /// Routing changed somewhere: a monitored destination is checked again (the machine's
    /// status arrives with `PropertiesChanged`).
    private func routesChanged(_ message: BusMessage, epoch signalEpoch: Int) {
        guard running, signalEpoch == epoch, let owner, message.sender == owner, properties != nil else { return }
        checkDestination()
    }

    /// The daemon published something new: report it, or re-check the monitored destination.
    private func daemonChanged() {
        guard let properties else { return }
        switch target {
        case .machine:
            report(ReachabilitySnapshot(busProperties: properties))
        case .address, .domain:
            checkDestination()
        }
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
        guard let connection, !addresses.isEmpty else {
            return checkFinished(AddressAnswer.snapshot(destination: destination, answers: []))
        }
        var answers: [AddressAnswer?] = Array(repeating: nil, count: addresses.count)
        var outstanding = addresses.count
        for (index, address) in addresses.enumerated() {
            do throws(SystemError) {
                try connection.call(
                    destination: BusContract.busName, path: BusContract.objectPath, interface: BusContract.interface,
                    member: BusContract.checkAddressMethod, arguments: [address],
                    timeoutMicroseconds: Self.checkTimeoutMicroseconds
                ) { [weak self] reply in
                    guard let self, self.running, checkEpoch == self.epoch else { return }
                    answers[index] = Self.answer(reply, address: address)
                    outstanding -= 1
                    if outstanding == 0 {
                        self.checkFinished(AddressAnswer.snapshot(destination: destination, answers: answers.compactMap { $0 }))
                    }
                }
            } catch {
                answers[index] = AddressAnswer(address: address, status: .unknown, interface: "")
                outstanding -= 1
            }
        }
        if outstanding == 0 {
            checkFinished(AddressAnswer.snapshot(destination: destination, answers: answers.compactMap { $0 }))
        }
    }

    private static func answer(_ reply: BusMessage, address: String) -> AddressAnswer {
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
        if owner != nil { report(snapshot) }
        if checkPending {
            checkPending = false
            checkDestination()
        }
    }

    // MARK: - Names

    static let busDriver = "org.freedesktop.DBus"
    static let busDriverPath = "/org/freedesktop/DBus"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// The bus driver's announcements of the daemon's name changing hands.
    static let nameOwnerChangedRule =
        "type='signal',sender='\(busDriver)',path='\(busDriverPath)',interface='\(busDriver)',member='NameOwnerChanged',arg0='\(BusContract.busName)'"

    /// The daemon's announcements that routing changed; the sender is checked against the owner.
    static let routesChangedRule =
        "type='signal',path='\(BusContract.objectPath)',interface='\(BusContract.interface)',member='\(BusContract.routesChangedSignal)'"

    /// Property changes of the daemon's object; the sender is checked against the current owner.
    static let propertiesChangedRule =
        "type='signal',path='\(BusContract.objectPath)',interface='\(propertiesInterface)',member='PropertiesChanged',arg0='\(BusContract.interface)'"
}
