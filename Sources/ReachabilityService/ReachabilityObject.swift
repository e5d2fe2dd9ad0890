#if canImport(Glibc)
import Glibc
#endif
import CBusShims
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// The answer the daemon gives to `CheckAddress`.
public enum AddressCheckAnswer: Sendable, Equatable {
    /// The address's status and the interface that would carry traffic to it ("" when none).
    case answer(status: ReachabilityStatus, interface: String)
    /// The input is not a literal address; `message` says why (sent as `InvalidAddress`).
    case invalidAddress(message: String)
}

/// What the exported object's methods do; each runs on the connection's queue.
public struct ReachabilityMethods {
    /// Answers `CheckAddress(s)`: the address, and whose share the caller draws on.
    public var checkAddress: (String, CallerShare) -> AddressCheckAnswer
    /// Answers `Explain()`.
    public var explain: () -> String
    /// Answers `Metrics()`.
    public var metrics: () -> String

    /// Creates the method table.
    public init(checkAddress: @escaping (String, CallerShare) -> AddressCheckAnswer, explain: @escaping () -> String, metrics: @escaping () -> String) {
        self.checkAddress = checkAddress
        self.explain = explain
        self.metrics = metrics
    }
}

/// The exported object `/org/reachabilityd/Reachability1`: serves the properties and
/// `CheckAddress`, and announces changes with `PropertiesChanged` and `StatusChanged`. Method
/// calls are admitted by fair shares (``CallAdmission``) and answered in their turn.
///
/// Confined to the connection's queue.
public final class ReachabilityObject: @unchecked Sendable {
    private let connection: BusConnection
    private let methods: ReachabilityMethods
    /// The published state: what the properties answer.
    public private(set) var snapshot: ReachabilitySnapshot
    /// `Generation`: one more at every published change.
    public private(set) var generation: UInt64
    private let handlers: UnsafeMutablePointer<CReach_BusHandlers>
    private var slot: BusSlot?
    private lazy var admission = CallAdmission(connection: connection) { [weak self] call, share in self?.answer(call, share: share) }

    /// Exports the object with the static vtable from `CBusShims`.
    ///
    /// - Parameters:
    ///   - connection: the bus connection (its queue is this object's queue).
    ///   - snapshot: the first evaluation.
    ///   - methods: answers the method calls, on the queue.
    ///   - generation: the first `Generation` (a restarted daemon goes on from its predecessor's).
    public init(connection: BusConnection, snapshot: ReachabilitySnapshot, methods: ReachabilityMethods, generation: UInt64 = 0) throws(SystemError) {
        self.connection = connection
        self.snapshot = snapshot
        self.generation = generation
        self.methods = methods
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: CReach_BusHandlers(context: nil, get_property: { context, property, reply, _ in
            guard let context, let property, let reply else { return -EINVAL }
            return Unmanaged<ReachabilityObject>.fromOpaque(context).takeUnretainedValue()
                .appendProperty(named: String(cString: property), to: BusMessage(borrowing: reply))
        }, call_method: { context, _, message, _ in
            guard let context, let message else { return -EINVAL }
            Unmanaged<ReachabilityObject>.fromOpaque(context).takeUnretainedValue().admission.take(BusMethodCall(referencing: message))
            return 1  // handled: the reply comes when its turn does
        }))
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        // Every stored property is set: if this throws, deinit runs and frees the handlers.
        slot = try connection.exportObject(
            path: BusContract.objectPath, interface: BusContract.interface, vtable: CReach_reachability_vtable(), userdata: handlers
        )
    }

    deinit {
        slot = nil
        handlers.deallocate()
    }

    /// Publishes `next`: `StatusChanged` if `Status` changed, then one `PropertiesChanged` naming
    /// exactly the properties that changed (and `Generation`). Nothing when nothing changed.
    public func publish(_ next: ReachabilitySnapshot) {
        let changed = next.changedProperties(since: snapshot)
        guard !changed.isEmpty else { return }
        let statusChanged = next.status != snapshot.status
        let connectivityChanged = next.connectivity != snapshot.connectivity
        snapshot = next
        generation += 1
        let names = (changed + [.generation]).map(\.rawValue)
        do throws(SystemError) {
            // StatusChanged first: it is what most subscribers wait for.
            if statusChanged { try emitSignal(BusContract.statusChangedSignal, carrying: [.string(next.status.rawValue)]) }
            if connectivityChanged { try emitSignal(BusContract.connectivityChangedSignal, carrying: [.string(next.connectivity.rawValue)]) }
            try connection.emitPropertiesChanged(path: BusContract.objectPath, interface: BusContract.interface, names: names)
        } catch {
            Log.error("\(error)")
        }
        connection.rearm()
    }

    /// Emits `RoutesChanged` (no arguments). The caller limits the rate.
    public func emitRoutesChanged() {
        do throws(SystemError) {
            try emitSignal(BusContract.routesChangedSignal, carrying: [])
        } catch {
            Log.error("\(error)")
        }
        connection.rearm()
    }

    /// Sends signal `name` of the interface.
    private func emitSignal(_ name: String, carrying arguments: [PropertyValue]) throws(SystemError) {
        try connection.emitSignal(path: BusContract.objectPath, interface: BusContract.interface, member: name, arguments: arguments)
    }

    private func appendProperty(named name: String, to reply: BusMessage) -> Int32 {
        guard let property = ReachabilityProperty(rawValue: name) else { return -ENOENT }
        do throws(SystemError) {
            try reply.append(snapshot.value(of: property, generation: generation))
            return 0
        } catch {
            return -error.errno
        }
    }

    /// Forgets a caller that left the bus and the calls it left waiting (never answered: nobody
    /// is there to read them); a root caller's budget goes with it, a user's stays with the user.
    ///
    /// - Returns: its share when that was the share's last connection (what it watched can go).
    @discardableResult
    public func forgetCaller(_ name: String) -> CallerShare? {
        admission.forgetCaller(name)
    }

    /// Answers one admitted call, drawing on `share`: its return, or its error.
    private func answer(_ call: BusMethodCall, share: CallerShare) {
        do throws(SystemError) {
            switch call.member {
            case BusContract.checkAddressMethod:
                guard let text = try? call.arguments.readString() else { return try call.reply(errno: EINVAL) }
                switch methods.checkAddress(text, share) {
                case .invalidAddress(let explanation):
                    try call.reply(error: BusError(name: BusContract.invalidAddressError, message: explanation))
                case .answer(let status, let interface):
                    try call.reply([.string(status.rawValue), .string(interface)])
                }
            case BusContract.explainMethod:
                try call.reply([.string(methods.explain())])
            case BusContract.metricsMethod:
                try call.reply([.string(methods.metrics())])
            default:
                try call.reply(errno: EOPNOTSUPP)
            }
        } catch {
            Log.debug("\(error)")
        }
    }
}
