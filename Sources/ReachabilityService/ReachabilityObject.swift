#if canImport(Glibc)
import Glibc
#endif
import CBusShims
import CSystemd
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
/// `CheckAddress`, and announces changes with `PropertiesChanged` and `StatusChanged`.
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
    private var slot: OpaquePointer?
    /// Each share's part of the queue's time for method calls.
    private var budget = CallerBudget()
    /// Method calls waiting their turn (referenced `sd_bus_message *`), one per share in turn.
    private var waiting = FairQueue<OpaquePointer>()
    /// Whose share each caller (unique name) draws on, once the bus told its user.
    private var shareOfCaller: [String: CallerShare] = [:]
    /// The calls of callers whose user the bus is being asked (`GetConnectionUnixUser`), in order.
    private var awaitingUser: [String: [OpaquePointer]] = [:]
    private var serviceQueued = false
    /// The most calls one caller may have waiting; more get `Busy`. (dbus-daemon's system bus
    /// lets a connection have 128 calls pending, so this guards other bus configurations.)
    public static let waitingCallsPerCaller = 256
    /// The most waiting calls served per turn of the queue.
    static let callsPerTurn = 16

    /// Exports the object with the static vtable from `CBusShims`.
    ///
    /// - Parameters:
    ///   - connection: the bus connection (its queue is this object's queue).
    ///   - snapshot: the first evaluation.
    ///   - methods: answers the method calls, on the queue.
    ///   - generation: the first `Generation` (a restarted daemon goes on from its predecessor's).
    /// The corresponding C function is `sd_bus_add_object_vtable`.
    public init(connection: BusConnection, snapshot: ReachabilitySnapshot, methods: ReachabilityMethods, generation: UInt64 = 0) throws(SystemError) {
        self.connection = connection
        self.snapshot = snapshot
        self.generation = generation
        self.methods = methods
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: CReach_BusHandlers(context: nil, get_property: { context, property, reply, _ in
            guard let context, let property, let reply else { return -EINVAL }
            return Unmanaged<ReachabilityObject>.fromOpaque(context).takeUnretainedValue()
                .appendProperty(named: String(cString: property), to: reply)
        }, call_method: { context, member, message, error in
            guard let context, let member, let message else { return -EINVAL }
            return Unmanaged<ReachabilityObject>.fromOpaque(context).takeUnretainedValue()
                .callMethod(String(cString: member), message: message, error: error)
        }))
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        do throws(SystemError) {
            try sdCall("export \(BusContract.objectPath)") {
                sd_bus_add_object_vtable(connection.bus, &slot, BusContract.objectPath, BusContract.interface,
                                         CReach_reachability_vtable(), handlers)
            }
        } catch {
            handlers.deallocate()
            throw error
        }
    }

    deinit {
        sd_bus_slot_unref(slot)
        handlers.deallocate()
        while let (_, message) = waiting.next() { sd_bus_message_unref(message) }
        for message in awaitingUser.values.joined() { sd_bus_message_unref(message) }
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
            if statusChanged { try emitSignal(BusContract.statusChangedSignal, carrying: next.status.rawValue) }
            if connectivityChanged { try emitSignal(BusContract.connectivityChangedSignal, carrying: next.connectivity.rawValue) }
            try emitPropertiesChanged(names)
        } catch {
            Log.error("\(error)")
        }
        connection.rearm()
    }

    /// Emits `RoutesChanged` (no arguments). The caller limits the rate.
    public func emitRoutesChanged() {
        var message: OpaquePointer?
        do throws(SystemError) {
            try sdCall("create RoutesChanged signal") {
                sd_bus_message_new_signal(connection.bus, &message, BusContract.objectPath, BusContract.interface, BusContract.routesChangedSignal)
            }
            defer { sd_bus_message_unref(message) }
            try sdCall("send RoutesChanged signal") { sd_bus_send(connection.bus, message, nil) }
        } catch {
            Log.error("\(error)")
        }
        connection.rearm()
    }

    private func emitPropertiesChanged(_ names: [String]) throws(SystemError) {
        var strings: [UnsafeMutablePointer<CChar>?] = names.map { strdup($0) } + [nil]
        defer { strings.forEach { free($0) } }
        try sdCall("emit PropertiesChanged") {
            sd_bus_emit_properties_changed_strv(connection.bus, BusContract.objectPath, BusContract.interface, &strings)
        }
    }

    /// Sends signal `name` of the interface with one string argument.
    private func emitSignal(_ name: String, carrying argument: String) throws(SystemError) {
        var message: OpaquePointer?
        try sdCall("create \(name) signal") {
            sd_bus_message_new_signal(connection.bus, &message, BusContract.objectPath, BusContract.interface, name)
        }
        defer { sd_bus_message_unref(message) }
        try sdCall("append to \(name) signal") { Self.append(.string(argument), to: message!) }
        try sdCall("send \(name) signal") { sd_bus_send(connection.bus, message, nil) }
    }

    private func appendProperty(named name: String, to reply: OpaquePointer) -> Int32 {
        guard let property = ReachabilityProperty(rawValue: name) else { return -ENOENT }
        return Self.append(snapshot.value(of: property, generation: generation), to: reply)
    }

    /// Forgets a caller that left the bus and the calls it left waiting (never answered: nobody
    /// is there to read them); a root caller's budget goes with it, a user's stays with the user.
    ///
    /// - Returns: its share when that was the share's last connection (what it watched can go).
    @discardableResult
    public func forgetCaller(_ name: String) -> CallerShare? {
        for message in awaitingUser.removeValue(forKey: name) ?? [] { sd_bus_message_unref(message) }
        let share = shareOfCaller.removeValue(forKey: name)
        if share?.isUser == false { budget.forget(name) }
        for message in waiting.removeAll(from: share?.name ?? name, where: { Self.sender(of: $0) == name }) { sd_bus_message_unref(message) }
        guard let share, !shareOfCaller.values.contains(share) else { return nil }
        return share
    }

    /// Takes a method call. A caller's first calls wait until the bus says whose share they
    /// draw on; then, over that share's budget (``CallerBudget``) or waiting-call limit,
    /// `org.reachabilityd.Error.Busy` at once; otherwise the call waits its turn
    /// (``FairQueue``) and is answered from ``serveWaitingCalls()``, so that callers are served
    /// in turn and a flood from one delays another's call by one call, not by the flood.
    private func callMethod(_ member: String, message: OpaquePointer, error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let sender = Self.sender(of: message)
        if let share = shareOfCaller[sender] {
            guard admit(message, share: share.name) else { return sd_bus_error_set(error, BusContract.busyError, busyMessage(share.name)) }
            return 1  // handled: the reply comes when its turn does
        }
        let parked = awaitingUser[sender, default: []]
        guard parked.count < Self.waitingCallsPerCaller else { return sd_bus_error_set(error, BusContract.busyError, busyMessage(sender)) }
        awaitingUser[sender] = parked + [sd_bus_message_ref(message)]
        if parked.isEmpty { askUser(of: sender) }
        return 1
    }

    /// Asks the bus which user `caller` runs as, then admits its parked calls under its share
    /// (its own unique name when it is root or the bus cannot tell).
    /// The bus method is `org.freedesktop.DBus.GetConnectionUnixUser`.
    private func askUser(of caller: String) {
        let admitParked: (CallerShare) -> Void = { [weak self] share in
            guard let self, let parked = awaitingUser.removeValue(forKey: caller) else { return }
            shareOfCaller[caller] = share
            for message in parked {
                if !admit(message, share: share.name) {
                    var busy = sd_bus_error()
                    sd_bus_error_set(&busy, BusContract.busyError, busyMessage(share.name))
                    let replied = sd_bus_reply_method_error(message, &busy)
                    sd_bus_error_free(&busy)
                    if replied < 0 { Log.debug("Failed to answer Busy: \(SystemError.describe(errno: -replied))") }
                }
                sd_bus_message_unref(message)
            }
            connection.rearm()
        }
        do throws(SystemError) {
            try connection.askUnixUser(of: caller) { user in
                admitParked(user.map { $0 == 0 ? CallerShare(connection: caller) : CallerShare(user: $0) } ?? CallerShare(connection: caller))
            }
        } catch {
            Log.debug("\(error); \(caller) gets a share of its own.")
            admitParked(CallerShare(connection: caller))
        }
    }

    /// Queues a call under `share` unless the share is over its budget or waiting-call limit.
    ///
    /// - Returns: whether it was queued (it holds a reference of its own then).
    private func admit(_ message: OpaquePointer, share: String) -> Bool {
        guard budget.admits(share, now: clockSeconds(CLOCK_MONOTONIC)), waiting.count(of: share) < Self.waitingCallsPerCaller else {
            return false
        }
        waiting.append(sd_bus_message_ref(message), from: share)
        if !serviceQueued {
            serviceQueued = true
            connection.queue.async { [weak self] in self?.serveWaitingCalls() }
        }
        return true
    }

    private func busyMessage(_ share: String) -> String {
        "\(share) used its share of reachabilityd's time (\(Int(budget.refillPerSecond * 1000)) ms per second, "
            + "\(Self.waitingCallsPerCaller) calls waiting); try again shortly"
    }

    /// The unique name of a message's sender ("" when it has none).
    private static func sender(of message: OpaquePointer) -> String {
        sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
    }

    /// Answers up to ``callsPerTurn`` waiting calls, one per caller in turn, charging each
    /// caller's budget with the CPU time its call took; queues another turn for the rest.
    private func serveWaitingCalls() {
        serviceQueued = false
        for _ in 0..<Self.callsPerTurn {
            guard let (caller, message) = waiting.next() else { break }
            let started = clockSeconds(CLOCK_MONOTONIC)
            let cpuBefore = clockSeconds(CLOCK_THREAD_CPUTIME_ID)
            answer(message)
            budget.charge(caller, seconds: clockSeconds(CLOCK_THREAD_CPUTIME_ID) - cpuBefore, now: started)
            sd_bus_message_unref(message)
        }
        connection.rearm()
        if !waiting.isEmpty, !serviceQueued {
            serviceQueued = true
            connection.queue.async { [weak self] in self?.serveWaitingCalls() }
        }
    }

    /// Answers one deferred call: its return, or its error.
    /// The corresponding C functions are `sd_bus_reply_method_error` and `sd_bus_reply_method_errno`.
    private func answer(_ message: OpaquePointer) {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        let result = serve(member, message: message, error: &error)
        guard result < 0 || sd_bus_error_is_set(&error) != 0 else { return }
        let replied = sd_bus_error_is_set(&error) != 0 ? sd_bus_reply_method_error(message, &error) : sd_bus_reply_method_errno(message, result, nil)
        if replied < 0 { Log.debug("Failed to answer \(member): \(SystemError.describe(errno: -replied))") }
    }

    /// Serves a call: sends its return and gives 0 or more, or fills `error` (or gives a
    /// negative errno) for the caller to answer with.
    private func serve(_ member: String, message: OpaquePointer, error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        switch member {
        case BusContract.checkAddressMethod:
            var text: UnsafePointer<CChar>?
            let read = sd_bus_message_read_basic(message, Self.signature("s"), &text)
            guard read > 0, let text else { return read < 0 ? read : -EINVAL }
            let sender = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
            switch methods.checkAddress(String(cString: text), shareOfCaller[sender] ?? CallerShare(connection: sender)) {
            case .invalidAddress(let explanation):
                return sd_bus_error_set(error, BusContract.invalidAddressError, explanation)
            case .answer(let status, let interface):
                return reply(to: message, with: [.string(status.rawValue), .string(interface)])
            }
        case BusContract.explainMethod:
            return reply(to: message, with: [.string(methods.explain())])
        case BusContract.metricsMethod:
            return reply(to: message, with: [.string(methods.metrics())])
        default:
            return -EOPNOTSUPP
        }
    }

    /// Sends a method return carrying `values`.
    /// The corresponding C functions are `sd_bus_message_new_method_return` and `sd_bus_send`.
    private func reply(to message: OpaquePointer, with values: [PropertyValue]) -> Int32 {
        var reply: OpaquePointer?
        var result = sd_bus_message_new_method_return(message, &reply)
        guard result >= 0, let reply else { return result }
        defer { sd_bus_message_unref(reply) }
        for value in values where result >= 0 {
            result = Self.append(value, to: reply)
        }
        return result < 0 ? result : sd_bus_send(nil, reply, nil)
    }

    /// Appends one basic value. A D-Bus boolean is a C `int`.
    /// The corresponding C function is `sd_bus_message_append_basic`.
    private static func append(_ value: PropertyValue, to message: OpaquePointer) -> Int32 {
        switch value {
        case .string(let string):
            return string.withCString { sd_bus_message_append_basic(message, signature("s"), $0) }
        case .boolean(let boolean):
            var integer: Int32 = boolean ? 1 : 0
            return sd_bus_message_append_basic(message, signature("b"), &integer)
        case .unsignedInteger(let number):
            var integer = number
            return sd_bus_message_append_basic(message, signature("t"), &integer)
        }
    }

    private static func signature(_ character: Unicode.Scalar) -> CChar {
        CChar(UInt8(ascii: character))
    }
}
