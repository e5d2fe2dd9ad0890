import Dispatch
import ReachabilityBus
import ReachabilityCore
import Synchronization
import SystemSupport

/// One bus connection per bus, shared by every manager of the process that talks to it.
///
/// Confined to `queue`, which the managers of that bus share. While at least one listener is
/// attached the hub keeps a connection with a ``NameOwnerWatch`` on the daemon's name
/// (so a stopped daemon reads `.absent` at once and a restarted one is re-read),
/// `PropertiesChanged` on the daemon's object and, once a listener asks, `RoutesChanged`;
/// signals are believed only from the name's current owner. An owner that does not answer the
/// read of its properties (`GetAll`: stopped, hung) reads `.notAnswering` and is read again
/// after a back-off, or at once when it signals a change, until it answers. A bus that cannot
/// be reached is tried again with a bounded exponential backoff (``reconnectDelays``). Every
/// (re)connection starts a new epoch; replies from an older one are dropped.
/// The last listener to detach closes the connection.
package final class BusHub: @unchecked Sendable {
    /// The waits before attempts to reconnect to a bus that went away (or could not be reached
    /// at all): 0.1 s before the first, doubling after each failure, at most 5 s.
    static let reconnectDelays = RetryDelays(first: .milliseconds(100), longest: .seconds(5))

    /// How the daemon's properties are read.
    struct PropertiesReading {
        /// How long a `GetAll` may take.
        var timeout: Duration
        /// The waits before reading again after a `GetAll` the owner did not answer.
        var retryDelays: RetryDelays

        /// sd-bus's default timeout (25 s), and the waits after a call the daemon did not answer.
        static let standard = PropertiesReading(timeout: .seconds(25), retryDelays: .unansweredDaemon)
    }

    private static let hubs = Mutex<[BusEndpoint: BusHub]>([:])

    /// The hub of `endpoint`, made on first use and kept for the life of the process.
    package static func hub(for endpoint: BusEndpoint) -> BusHub {
        hubs.withLock { hubs in
            if let hub = hubs[endpoint] { return hub }
            let hub = BusHub(endpoint: endpoint)
            hubs[endpoint] = hub
            return hub
        }
    }

    /// The queue the hub, its listeners and their managers run on.
    package let queue = DispatchQueue(label: "org.reachabilityd.client.bus")
    private let endpoint: BusEndpoint
    private var listeners: [ObjectIdentifier: WeakListener] = [:]
    private var routesListeners: Set<ObjectIdentifier> = []

    private var epoch = 0
    private var connection: BusConnection?
    private var matches: [BusSlot] = []
    /// Who owns the daemon's name.
    private var nameOwner: NameOwnerWatch?
    private var routesMatch: BusSlot?
    /// Reconnects after the connection was lost or refused; reset once the bus answers.
    private lazy var reconnection = RetryBackoff(queue: queue, delays: Self.reconnectDelays)
    /// What is known; nil until the first answer after (re)connecting.
    private(set) var state: DaemonState?
    /// How the daemon's properties are read: ``PropertiesReading/standard``; a test shortens
    /// the timeout so that a daemon stalled for a moment takes the path of one stalled for 25 s.
    var propertiesReading = PropertiesReading.standard {
        didSet { propertiesRetry = RetryBackoff(queue: queue, delays: propertiesReading.retryDelays) }
    }
    /// Reads the owner's properties again after a `GetAll` it did not answer.
    private lazy var propertiesRetry = RetryBackoff(queue: queue, delays: propertiesReading.retryDelays)

    private init(endpoint: BusEndpoint) {
        self.endpoint = endpoint
    }

    // MARK: - Listeners

    /// Adds `listener`; connects when it is the first. A known state is told at once.
    ///
    /// - Parameters:
    ///   - listener: the listener, held weakly.
    ///   - wantsRoutesChanged: whether it needs `RoutesChanged`.
    func attach(_ listener: BusHubListener, wantsRoutesChanged: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        let id = ObjectIdentifier(listener)
        listeners[id] = WeakListener(listener)
        if wantsRoutesChanged {
            routesListeners.insert(id)
            addRoutesMatchIfNeeded()
        }
        if connection == nil && !reconnection.isScheduled {
            connect()
        } else if let state {
            listener.hub(self, daemonState: state)
        }
    }

    /// Removes `listener`; the last one out closes the connection.
    func detach(_ listener: BusHubListener) {
        dispatchPrecondition(condition: .onQueue(queue))
        let id = ObjectIdentifier(listener)
        listeners[id] = nil
        routesListeners.remove(id)
        listeners = listeners.filter { $0.value.listener != nil }
        guard listeners.isEmpty else { return }
        tearDown()
        reconnection.cancel()
        reconnection.reset()
    }

    private func tell(_ body: (BusHubListener) -> Void) {
        for entry in listeners.values {
            if let listener = entry.listener { body(listener) }
        }
    }

    private func setState(_ next: DaemonState) {
        state = next
        tell { $0.hub(self, daemonState: next) }
    }

    // MARK: - Calls

    /// A call waiting for a place among the calls in flight.
    private struct WaitingCall {
        var member: String
        var arguments: [String]
        var timeoutMicroseconds: UInt64
        /// Called once: with the reply or an error, or nil when the connection went.
        var reply: (Result<BusMessage, BusError>?) -> Void
    }

    /// A call sent on the current connection, until it is answered.
    private struct SentCall {
        var call: WaitingCall
        /// The pending call in sd-bus; released, it cancels sd-bus's callback.
        var pending: BusSlot
        /// The hub's own deadline, the call's timeout: sd-bus's timeout needs the connection to
        /// be processed, which a connection in trouble may no longer be.
        var deadline: DispatchSourceTimer
    }

    private var calls = CallsInFlight<WaitingCall>()
    /// The calls sent on the current connection and not answered yet, by ``nextCallNumber``.
    private var sent: [Int: SentCall] = [:]
    private var nextCallNumber = 0

    /// Calls a method of the daemon's object with string arguments: the client's one way to
    /// call the daemon. `reply` gets, exactly once, what it returns as a `Reply`, or its error
    /// (`NoReply` once `timeoutMicroseconds`, more than 0, have passed); nil when the connection
    /// goes (or went) away before the answer. Beyond ``CallsInFlight/limit`` calls in flight the
    /// call waits its turn.
    func callDaemon<Reply: BusReplyValue>(
        member: String, arguments: [String] = [], returning type: Reply.Type, timeoutMicroseconds: UInt64,
        reply: @escaping (Result<Reply, BusError>?) -> Void
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard connection != nil else { return reply(nil) }
        let call = WaitingCall(member: member, arguments: arguments, timeoutMicroseconds: timeoutMicroseconds) { outcome in
            reply(outcome.map { $0.flatMap { $0.result(as: type) } })
        }
        if let call = calls.start(call) { send(call) }
    }

    /// Calls a method of the daemon as ``callDaemon(member:arguments:returning:timeoutMicroseconds:reply:)``
    /// does, for a caller that does not follow the daemon: the hub holds a connection for the
    /// call (the one its listeners keep, or one of its own until the answer).
    func callDaemonOnce<Reply: BusReplyValue>(
        member: String, arguments: [String] = [], returning type: Reply.Type, timeoutMicroseconds: UInt64,
        reply: @escaping (Result<Reply, BusError>?) -> Void
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        let caller = OneCallListener()
        attach(caller, wantsRoutesChanged: false)
        callDaemon(member: member, arguments: arguments, returning: type, timeoutMicroseconds: timeoutMicroseconds) { [self] result in
            reply(result)
            // Not from inside the connection's own processing: detach (and maybe close) on the next turn.
            queue.async { [self] in detach(caller) }
        }
    }

    /// Sends a call that has its place in flight; it stays in ``sent`` until its reply, its
    /// deadline or the connection's end answers it.
    private func send(_ call: WaitingCall) {
        guard let connection else { return call.reply(nil) }
        let number = nextCallNumber
        nextCallNumber += 1
        do throws(SystemError) {
            let pending = try connection.heldCall(
                destination: BusContract.busName, path: BusContract.objectPath, interface: BusContract.interface,
                member: call.member, arguments: call.arguments, timeoutMicroseconds: call.timeoutMicroseconds
            ) { [weak self] message in
                self?.answer(number, with: .success(message))
            }
            let deadline = DispatchSource.makeTimerSource(queue: queue)
            deadline.setEventHandler { [weak self] in
                self?.answer(number, with: .failure(BusError(name: BusError.noReply, message: "Method call timed out")))
            }
            deadline.schedule(deadline: .now() + .microseconds(Int(clamping: call.timeoutMicroseconds)))
            deadline.activate()
            sent[number] = SentCall(call: call, pending: pending, deadline: deadline)
        } catch {
            callFinished()
            call.reply(nil)
        }
    }

    /// Answers sent call `number` with `outcome` (nothing when it was answered already), frees
    /// its place in flight and sends the next waiting call.
    private func answer(_ number: Int, with outcome: Result<BusMessage, BusError>) {
        guard let answered = sent.removeValue(forKey: number) else { return }
        answered.deadline.cancel()
        callFinished()
        answered.call.reply(outcome)
    }

    /// Frees a place in flight and sends the next waiting call.
    private func callFinished() {
        if let next = calls.finish() { send(next) }
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
            matches.append(try connection.addMatch(Self.propertiesChanged) { [weak self] message in
                self?.propertiesChanged(message, epoch: current)
            })
            addRoutesMatchIfNeeded()
            nameOwner = try NameOwnerWatch(of: BusContract.busName, on: connection) { [weak self] event in
                self?.nameOwnerEvent(event, epoch: current)
            }
            try connection.startProcessing { [weak self] error in
                // Not from inside the connection's own processing: tear down on the next turn.
                guard let self else { return }
                self.queue.async { self.connectionLost(error, epoch: current) }
            }
        } catch {
            connectionLost(error, epoch: current)
        }
    }

    private func addRoutesMatchIfNeeded() {
        guard routesMatch == nil, !routesListeners.isEmpty, let connection else { return }
        let current = epoch
        do throws(SystemError) {
            routesMatch = try connection.addMatch(Self.routesChanged) { [weak self] message in
                self?.routesChanged(message, epoch: current)
            }
        } catch {
            Log.debug("\(error), ignoring.")
        }
    }

    private func connectionLost(_ error: SystemError, epoch lostEpoch: Int) {
        guard lostEpoch == epoch, !listeners.isEmpty else { return }
        tearDown()
        setState(.busUnavailable("no system bus (\(error.errnoDescription))"))
        reconnection.schedule { [weak self] in
            guard let self, !listeners.isEmpty else { return }
            connect()
        }
    }

    /// Forgets the connection and everything learnt through it; starts a new epoch. Every call
    /// sent or waiting is answered nil (the connection went): sd-bus answers the calls pending
    /// on a connection it closes only while it is still processed, and this one no longer is.
    private func tearDown() {
        epoch += 1
        // The sent calls' slots go before the connection closes (each holds it); their callers
        // are told below, with the waiting ones'.
        let lost = sent.sorted { $0.key < $1.key }.map(\.value.call) + calls.abandon()
        for call in sent.values { call.deadline.cancel() }
        sent = [:]
        state = nil
        pendingOwner = nil
        propertiesRetry.cancel()
        routesMatch = nil
        matches = []  // removes the matches while the connection can still send RemoveMatch
        nameOwner = nil
        connection?.close()
        connection = nil
        // Told once the hub holds no connection: a caller that calls again is answered at once.
        for call in lost { call.reply(nil) }
    }

    // MARK: - The daemon's name and properties

    private var owner: String? {
        if case .running(let owner, _)? = state { return owner }
        return nil
    }

    /// Who owns the daemon's name, as the bus driver last said; nil when nobody does.
    private var nameOwnerUnique: String? { nameOwner?.owner }
    /// The owner whose `GetAll` is outstanding.
    private var pendingOwner: String?

    private func nameOwnerEvent(_ event: NameOwnerEvent, epoch eventEpoch: Int) {
        guard eventEpoch == epoch else { return }
        // The bus driver answered (not sd-bus failing the call as the connection dropped): the
        // bus works, and the next loss starts the backoff afresh.
        if case .initialOwner = event { reconnection.reset() }
        // A new owner (or none): what was read or retried of the last one is void.
        pendingOwner = nil
        propertiesRetry.cancel()
        propertiesRetry.reset()
        // No owner: not running now; NameOwnerChanged tells when it starts.
        guard let owner = event.owner else { return setState(.absent) }
        // Until the answer the state is unknown (nil).
        state = nil
        readProperties(of: owner)
    }

    /// Reads every property of `owner` (`GetAll`), unless a read is outstanding.
    private func readProperties(of owner: String) {
        guard pendingOwner == nil, let connection else { return }
        pendingOwner = owner
        let current = epoch
        do throws(SystemError) {
            try connection.call(
                destination: BusContract.busName, path: BusContract.objectPath, interface: BusDriver.propertiesInterface,
                member: "GetAll", arguments: [BusContract.interface], returning: [String: BusValue].self,
                timeoutMicroseconds: UInt64(propertiesReading.timeout / .microseconds(1))
            ) { [weak self] reply in
                self?.allProperties(reply, owner: owner, epoch: current)
            }
        } catch {
            pendingOwner = nil
            propertiesUnread(owner, why: "\(error)")
        }
    }

    private func allProperties(_ reply: Result<[String: BusValue], BusError>, owner replyOwner: String, epoch replyEpoch: Int) {
        guard replyEpoch == epoch, replyOwner == pendingOwner else { return }
        pendingOwner = nil
        let values: [String: BusValue]
        switch reply {
        case .success(let properties):
            values = properties
        case .failure(let error):
            // The owner left between the two calls; NameOwnerChanged follows.
            if error.name == BusError.serviceUnknown || error.name == BusError.nameHasNoOwner { return setState(.absent) }
            return propertiesUnread(replyOwner, why: error.message.isEmpty ? error.name : error.message)
        }
        propertiesRetry.reset()
        setState(.running(owner: replyOwner, properties: values))
    }

    /// The owner did not answer `GetAll` (timed out, busy…): the listeners hear so, and it is
    /// read again after the back-off while it owns the name (or sooner: see
    /// ``propertiesChanged(_:epoch:)``).
    private func propertiesUnread(_ owner: String, why: String) {
        guard owner == nameOwnerUnique else { return }
        Log.debug("reachabilityd (\(owner)) did not answer GetAll: \(why)")
        setState(.notAnswering(why))
        propertiesRetry.schedule { [weak self] in
            guard let self, owner == nameOwnerUnique, self.owner == nil else { return }
            readProperties(of: owner)
        }
    }

    private func propertiesChanged(_ message: BusMessage, epoch signalEpoch: Int) {
        guard signalEpoch == epoch, let sender = message.sender, sender == nameOwnerUnique,
              (try? message.readString()) == BusContract.interface
        else { return }
        guard case .running(let owner, var known)? = state else {
            // The owner answers again after a read it did not answer: read every property now
            // (the signal carries only what changed). A signal that arrives while a read is
            // outstanding is older than its answer: that read covers it.
            if pendingOwner == nil {
                propertiesRetry.cancel()
                readProperties(of: sender)
            }
            return
        }
        guard let changed = try? message.readPropertyDictionary() else { return }
        known.merge(changed) { _, new in new }
        setState(.running(owner: owner, properties: known))
    }

    private func routesChanged(_ message: BusMessage, epoch signalEpoch: Int) {
        guard signalEpoch == epoch, let owner, message.sender == owner else { return }
        for id in routesListeners {
            if let listener = listeners[id]?.listener { listener.hubRoutesChanged(self) }
        }
    }

    // MARK: - Names

    /// The daemon's announcements that routing changed; the sender is checked against the owner.
    static let routesChanged = BusSignalMatch(path: BusContract.objectPath, interface: BusContract.interface, member: BusContract.routesChangedSignal)

    /// Property changes of the daemon's object; the sender is checked against the current owner.
    static let propertiesChanged = BusSignalMatch.propertiesChanged(of: BusContract.interface, path: BusContract.objectPath)
}

/// The listener that holds a hub's connection for one ``BusHub/callDaemonOnce(member:arguments:returning:timeoutMicroseconds:reply:)``;
/// it follows nothing.
private final class OneCallListener: BusHubListener, Sendable {
    func hub(_ hub: BusHub, daemonState: DaemonState) {}
    func hubRoutesChanged(_ hub: BusHub) {}
}
