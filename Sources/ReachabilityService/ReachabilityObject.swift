import ReachabilityBus
import ReachabilityCore
import ReachabilityProperties
import SystemSupport

/// The answer the daemon gives to `CheckAddress`.
public enum AddressCheckAnswer: Sendable, Equatable {
    /// The address's status and the interface that would carry traffic to it ("" when none).
    case answer(status: ReachabilityStatus, interface: String)
    /// The input is not a literal address; `message` says why (sent as `InvalidAddress`).
    case invalidAddress(message: String)
}

/// The answer the daemon gives to `CheckDestination`.
public enum DestinationCheckAnswer: Sendable, Equatable {
    /// The address's answer, with how to get there.
    case answer(DestinationAnswer)
    /// The input is not a literal address; `message` says why (sent as `InvalidAddress`).
    case invalidAddress(message: String)
}

/// What the exported object's methods do; each runs on the connection's queue and answers at
/// once, except `CheckConnectivity()`, which may answer later.
public struct ReachabilityMethods {
    /// Answers `CheckAddress(s)`: the address, and whose share the caller draws on.
    public var checkAddress: (String, CallerShare) -> AddressCheckAnswer
    /// Answers `CheckDestination(s)`: the address, and whose share the caller draws on.
    public var checkDestination: (String, CallerShare) -> DestinationCheckAnswer
    /// Answers `Explain()`.
    public var explain: () -> String
    /// Answers `Metrics()`.
    public var metrics: () -> String
    /// Answers `CheckConnectivity()` for whose share the caller draws on and its connection,
    /// through the reply it is given (once, on the queue, now or when the check finished);
    /// false when the share has too many calls waiting (the call is answered `Busy`, the reply
    /// never called).
    public var checkConnectivity: (CallerShare, _ connection: String, _ reply: @escaping (Connectivity) -> Void) -> Bool

    /// Creates the method table.
    public init(
        checkAddress: @escaping (String, CallerShare) -> AddressCheckAnswer,
        checkDestination: @escaping (String, CallerShare) -> DestinationCheckAnswer, explain: @escaping () -> String,
        metrics: @escaping () -> String, checkConnectivity: @escaping (CallerShare, _ connection: String, _ reply: @escaping (Connectivity) -> Void) -> Bool
    ) {
        self.checkAddress = checkAddress
        self.checkDestination = checkDestination
        self.explain = explain
        self.metrics = metrics
        self.checkConnectivity = checkConnectivity
    }
}

/// The exported object `/org/reachabilityd/Reachability1`: serves the properties and the
/// methods, and announces changes with `PropertiesChanged`, `StatusChanged`,
/// `ConnectivityChanged` and `RoutesChanged`. Method calls are admitted by fair shares
/// (``CallAdmission``) and answered in their turn.
///
/// Confined to the connection's queue.
public final class ReachabilityObject: @unchecked Sendable {
    private let methods: ReachabilityMethods
    /// The published state: what the properties answer.
    public private(set) var snapshot: ReachabilitySnapshot
    /// `Generation`: one more at every published change.
    public private(set) var generation: UInt64
    private let admission: CallAdmission
    private var object: BusObject?

    /// Exports the object.
    ///
    /// - Parameters:
    ///   - connection: the bus connection (its queue is this object's queue).
    ///   - snapshot: the first evaluation.
    ///   - methods: answers the method calls, on the queue.
    ///   - generation: the first `Generation` (a restarted daemon goes on from its predecessor's).
    public init(connection: BusConnection, snapshot: ReachabilitySnapshot, methods: ReachabilityMethods, generation: UInt64 = 0) throws(SystemError) {
        self.snapshot = snapshot
        self.generation = generation
        self.methods = methods
        admission = CallAdmission(connection: connection)
        object = try BusObject(
            on: connection, path: BusContract.objectPath, interface: interface(methods),
            properties: { [weak self] name in self?.value(ofProperty: name) },
            admit: { [admission] call in admission.take(call) }
        )
    }

    /// `org.reachabilityd.Reachability1` as dbus/org.reachabilityd.Reachability1.xml declares it,
    /// in its order (ReachabilityServiceTests compares): the property table's properties, the
    /// methods with their handlers, and the signals. Each method is admitted by
    /// ``CallAdmission`` (see dbus/org.reachabilityd.Reachability1.conf for who may call it).
    private func interface(_ methods: ReachabilityMethods) -> BusInterface {
        BusInterface(
            name: BusContract.interface,
            properties: ReachabilityProperty.allCases.map { ($0.rawValue, $0.definition.signature) },
            methods: [
                .replying(BusContract.checkAddressMethod, takes: [("address", "s")], returns: [("status", "s"), ("interface", "s")]) { [weak self] call in
                    self?.checkAddress(call) ?? .invalidArguments
                },
                .replying(BusContract.checkDestinationMethod, takes: [("address", "s")], returns: [("destination", "a{sv}")]) { [weak self] call in
                    self?.checkDestination(call) ?? .invalidArguments
                },
                .replying(BusContract.explainMethod, returns: [("report", "s")]) { _ in .values([.string(methods.explain())]) },
                .replying(BusContract.metricsMethod, returns: [("metrics", "s")]) { _ in .values([.string(methods.metrics())]) },
                .replyingLater(BusContract.checkConnectivityMethod, returns: [("connectivity", "s")]) { [admission] call, reply in
                    let share = admission.share(of: call.sender)
                    guard methods.checkConnectivity(share, call.sender, { reply(.values([.string($0.rawValue)])) }) else {
                        let message = "\(share.name) has \(OnDemandCheckGate.waitingCallsPerCaller) CheckConnectivity() calls waiting for the check in flight; "
                            + "try again when it ends"
                        return reply(.error(BusError(name: BusContract.busyError, message: message)))
                    }
                },
            ],
            signals: [Self.statusChanged, Self.connectivityChanged, Self.routesChanged]
        )
    }

    /// `StatusChanged(s status)`.
    private static let statusChanged = BusSignal(BusContract.statusChangedSignal, [("status", "s")])
    /// `ConnectivityChanged(s connectivity)`.
    private static let connectivityChanged = BusSignal(BusContract.connectivityChangedSignal, [("connectivity", "s")])
    /// `RoutesChanged()`.
    private static let routesChanged = BusSignal(BusContract.routesChangedSignal)

    /// Publishes `next`: `StatusChanged` if `Status` changed, then one `PropertiesChanged`
    /// carrying exactly the properties that changed (and `Generation`), read from `next` once
    /// each. Nothing when nothing changed.
    ///
    /// - Parameter beforeProperties: runs when something changed, once the short signals are
    ///   sent and before the larger `PropertiesChanged` is built: the daemon's other subscribers
    ///   (Varlink's) hear of the change as soon as the bus's first ones do.
    public func publish(_ next: ReachabilitySnapshot, beforeProperties: () -> Void = {}) {
        let changed = next.changedProperties(since: snapshot)
        guard !changed.isEmpty else { return }
        StageTimes.recorder?.mark(.publishing)
        let statusChanged = next.status != snapshot.status
        let connectivityChanged = next.connectivity != snapshot.connectivity
        snapshot = next
        generation += 1
        do throws(SystemError) {
            // StatusChanged first: it is what most subscribers wait for (the changed values are
            // read after it).
            if statusChanged {
                try object?.emit(Self.statusChanged, [.string(next.status.rawValue)])
                StageTimes.recorder?.mark(.sent)
            }
            if connectivityChanged { try object?.emit(Self.connectivityChanged, [.string(next.connectivity.rawValue)]) }
        } catch {
            Log.error("\(error)")
        }
        beforeProperties()
        do throws(SystemError) {
            try object?.emitPropertiesChanged((changed + [.generation]).map { (name: $0.rawValue, value: next.value(of: $0, generation: generation)) })
        } catch {
            Log.error("\(error)")
        }
    }

    /// Emits `RoutesChanged` (no arguments). The caller limits the rate.
    public func emitRoutesChanged() {
        do throws(SystemError) {
            try object?.emit(Self.routesChanged)
        } catch {
            Log.error("\(error)")
        }
    }

    private func value(ofProperty name: String) -> BusValue? {
        ReachabilityProperty(rawValue: name).map { snapshot.value(of: $0, generation: generation) }
    }

    /// Forgets a caller that left the bus and the calls it left waiting (never answered: nobody
    /// is there to read them); a root caller's budget goes with it, a user's stays with the user.
    ///
    /// - Returns: its share when that was the share's last connection (what it watched can go).
    @discardableResult
    public func forgetCaller(_ name: String) -> CallerShare? {
        admission.forgetCaller(name)
    }

    /// Answers `CheckAddress(s)`, drawing on the caller's share.
    private func checkAddress(_ call: BusMethodCall) -> BusReply {
        guard let text = try? call.arguments.readString() else { return .invalidArguments }
        switch methods.checkAddress(text, admission.share(of: call.sender)) {
        case .invalidAddress(let explanation):
            return .error(BusError(name: BusContract.invalidAddressError, message: explanation))
        case .answer(let status, let interface):
            return .values([.string(status.rawValue), .string(interface)])
        }
    }

    /// Answers `CheckDestination(s)`, drawing on the caller's share.
    private func checkDestination(_ call: BusMethodCall) -> BusReply {
        guard let text = try? call.arguments.readString() else { return .invalidArguments }
        switch methods.checkDestination(text, admission.share(of: call.sender)) {
        case .invalidAddress(let explanation):
            return .error(BusError(name: BusContract.invalidAddressError, message: explanation))
        case .answer(let answer):
            return .values([.dictionary(answer.dictionary)])
        }
    }
}
