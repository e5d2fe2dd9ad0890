#if canImport(Glibc)
import Glibc
#endif
import CProcessShims
import Dispatch
import ReachabilityCore
import ReachabilityService
import SystemSupport

/// Serves `org.reachabilityd.Reachability` and `org.varlink.service` on the Varlink socket, on
/// the daemon's queue, with the bus's fairness: callers are told apart by the socket's
/// credentials (`SO_PEERCRED`) into the shares the bus side uses (``CallerShare``: all the
/// connections of one unprivileged uid together, each of root's on its own); each share's calls
/// wait their turn within its part of the queue's time (``FairTurns``), and a
/// uid has at most ``connectionsPerUser`` connections open. The engine's questions are asked
/// through the same ``ReachabilityMethods`` as the bus object's.
///
/// Confined to the daemon's queue.
final class VarlinkServer: @unchecked Sendable {
    /// The most connections one unprivileged uid may have open; more are answered `Busy` and
    /// closed (each holds a descriptor and up to a call's bytes).
    static let connectionsPerUser = 128
    /// The most connections open in all: what the daemon's descriptors allow beside its own.
    static let connectionLimit = 4096
    /// The most connections accepted per turn of the queue, so that a flood of connections
    /// takes its turns with everything else.
    static let acceptsPerTurn = 32

    private let queue: DispatchQueue
    private let listening: DescriptorReadSource
    private let listeningDescriptor: Int32
    private let methods: ReachabilityMethods
    /// The published state, `generation` included: what `GetState` and a new subscription answer.
    private let state: () -> JSONValue
    /// Told when a connection closed: its name, and its share when that was the share's last
    /// connection (what the share watched can go).
    private let departed: (String, CallerShare?) -> Void
    private var connections: [String: VarlinkConnection] = [:]
    /// How many connections each share has open.
    private var openConnections: [String: Int] = [:]
    private var connectionsMade = 0
    /// Calls waiting their turn, as the bus object's wait theirs.
    private lazy var turns = FairTurns<WaitingCall>(queue: queue) { [weak self] call in self?.serve(call.request, for: call.connection) }

    /// A call waiting its turn.
    private struct WaitingCall {
        let connection: VarlinkConnection
        let request: VarlinkRequest
    }

    /// Starts accepting on `listeningDescriptor` (a non-blocking listening socket, closed when
    /// the server stops).
    init(listeningDescriptor: Int32, queue: DispatchQueue, methods: ReachabilityMethods, state: @escaping () -> JSONValue,
         departed: @escaping (String, CallerShare?) -> Void) {
        self.queue = queue
        self.listeningDescriptor = listeningDescriptor
        self.methods = methods
        self.state = state
        self.departed = departed
        listening = DescriptorReadSource(descriptor: listeningDescriptor, queue: queue) { close(listeningDescriptor) }
        listening.start { [weak self] in self?.acceptWaiting() }
    }

    /// Sends every subscriber the state of a published change: encoded once, the same bytes for
    /// all of them (a change costs one encoding and a `send` per subscriber).
    func publish(_ state: JSONValue) {
        let subscribers = connections.values.filter(\.isSubscribed)
        guard !subscribers.isEmpty else { return }
        let reply = VarlinkReply.encoded(["state": state], continues: true)
        for connection in subscribers { connection.sendState(reply) }
    }

    /// Accepts up to ``acceptsPerTurn`` waiting connections; the listening source calls again
    /// for the rest after the queue's other work.
    /// The corresponding C function is `accept4` (through the process shim).
    private func acceptWaiting() {
        for _ in 0..<Self.acceptsPerTurn {
            let descriptor = CReachProcess_acceptConnection(listeningDescriptor)
            guard descriptor >= 0 else {
                if errno != EAGAIN && errno != EINTR && errno != ECONNABORTED {
                    Log.warning("Failed to accept a Varlink connection: \(SystemError.describe(errno: errno)), ignoring.")
                }
                return
            }
            admit(descriptor)
        }
    }

    /// Admits an accepted connection under its peer's share, or answers `Busy` and closes it.
    private func admit(_ descriptor: Int32) {
        var user: uid_t = 0
        guard CReachProcess_peerUser(descriptor, &user) == 0 else {
            close(descriptor)
            return
        }
        connectionsMade += 1
        let name = "varlink:\(connectionsMade)"
        let share = CallerShare(connection: name, busUser: user)
        let open = openConnections[share.name, default: 0]
        guard connections.count < Self.connectionLimit, open < Self.connectionsPerUser else {
            let refusal = VarlinkError.busy("uid \(user) has \(open) connections open (at most \(Self.connectionsPerUser)); close some").encoded
            _ = refusal.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            close(descriptor)
            return
        }
        openConnections[share.name] = open + 1
        connections[name] = VarlinkConnection(
            descriptor: descriptor, name: name, share: share, queue: queue,
            takeCall: { [weak self] connection, call in self?.take(call, from: connection) },
            closed: { [weak self] connection in self?.forget(connection) }
        )
    }

    /// Takes a call: answered at once when it asks for nothing the interface has, else queued
    /// in its share's turn, or answered `Busy` when the share used its part of the queue's time.
    private func take(_ call: VarlinkCall, from connection: VarlinkConnection) {
        let request: VarlinkRequest
        do throws(VarlinkError) {
            request = try VarlinkRequest(call)
        } catch {
            return connection.fail(error)
        }
        let share = connection.share.name
        guard turns.admits(share) else {
            return connection.fail(.busy("\(share) used its share of reachabilityd's time (\(Int(turns.budget.refillPerSecond * 1000)) ms per second); try again shortly"))
        }
        turns.append(WaitingCall(connection: connection, request: request), from: share)
    }

    /// Answers `request` on `connection`: the engine's questions through the bus object's methods.
    private func serve(_ request: VarlinkRequest, for connection: VarlinkConnection) {
        switch request {
        case .getInfo:
            connection.answer([
                "vendor": .string("reachabilityd"), "product": .string("reachabilityd"), "version": .string(ReleaseVersion.current), "url": .string(""),
                "interfaces": .array(VarlinkRequest.descriptions.keys.sorted().map(JSONValue.string)),
            ])
        case .getInterfaceDescription(let interface):
            connection.answer(["description": .string(VarlinkRequest.descriptions[interface] ?? "")])
        case .getState:
            connection.answer(["state": state()])
        case .subscribe:
            connection.subscribe()
            connection.answer(["state": state()], continues: true)
        case .checkAddress(let text):
            switch methods.checkAddress(text, connection.share) {
            case .answer(let status, let interface): connection.answer(["status": .string(status.rawValue), "interface": .string(interface)])
            case .invalidAddress(let message): connection.fail(.invalidAddress(address: text, message: message))
            }
        case .checkDestination(let text):
            switch methods.checkDestination(text, connection.share) {
            case .answer(let answer): connection.answer(["destination": .object(answer.dictionary.mapValues(\.json))])
            case .invalidAddress(let message): connection.fail(.invalidAddress(address: text, message: message))
            }
        case .checkConnectivity:
            let admitted = methods.checkConnectivity(connection.share, connection.name) { [weak connection] connectivity in
                connection?.answer(["connectivity": .string(connectivity.rawValue)])
            }
            if !admitted {
                connection.fail(.busy("\(connection.share.name) has \(OnDemandCheckGate.waitingCallsPerCaller) CheckConnectivity calls waiting for the check in flight; try again when it ends"))
            }
        case .explain:
            connection.answer(["report": .string(methods.explain())])
        case .metrics:
            connection.answer(["metrics": .string(methods.metrics())])
        }
    }

    /// Forgets a closed connection and its calls still waiting.
    private func forget(_ connection: VarlinkConnection) {
        guard connections.removeValue(forKey: connection.name) != nil else { return }
        let share = connection.share
        turns.removeAll(from: share.name) { $0.connection === connection }
        let left = openConnections[share.name, default: 1] - 1
        openConnections[share.name] = left > 0 ? left : nil
        if !share.isUser { turns.forget(share.name) }
        departed(connection.name, left > 0 ? nil : share)
    }
}
