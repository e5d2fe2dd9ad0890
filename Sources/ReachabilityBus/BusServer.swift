#if canImport(Glibc)
import Glibc
#endif
import CBusShims
import CSystemd
import ReachabilityCore
import SystemSupport

// The serving side of a `BusConnection`, for the daemon: an object exported with a vtable
// assembled from its property table and a C shim's methods and signals, one handler per method (answered now or later), the property reads and the
// signals it sends. The C trampolines, the unmanaged references and the errno returns of
// sd-bus stop here. Everything here runs on the connection's queue.

/// An interface an exported object serves: its vtable, assembled at run time from its
/// properties (name and signature, each read through the object's `properties`) and the methods
/// and signals a C shim declares. Built once and kept for the life of the process.
public struct BusInterface: @unchecked Sendable {
    /// The interface's name.
    public let name: String
    /// The vtable; its property getters and methods call the trampolines of `CBusShims`.
    let vtable: UnsafePointer<sd_bus_vtable>

    /// An interface with `properties`, in order, followed by `members` (methods and signals
    /// from `CBusShims`). The names and the vtable are never freed: an interface lives as long
    /// as the process.
    init(name: String, properties: [(name: String, signature: String)], members: UnsafeBufferPointer<sd_bus_vtable>) {
        self.name = name
        let entries = [CReach_vtable_start()]
            + properties.map { CReach_vtable_property(strdup($0.name), strdup($0.signature)) }
            + members
            + [CReach_vtable_end()]
        let vtable = UnsafeMutablePointer<sd_bus_vtable>.allocate(capacity: entries.count)
        vtable.initialize(from: entries, count: entries.count)
        self.vtable = UnsafePointer(vtable)
    }

    /// An interface of read-only properties only (`name`, `signature`), in order.
    public init(name: String, properties: [(name: String, signature: String)]) {
        self.init(name: name, properties: properties, members: .init(start: nil, count: 0))
    }

    /// `org.reachabilityd.Reachability1`: the properties of ReachabilityCore's property table
    /// (``ReachabilityProperty``), then the methods and signals of `CBusShims`, as
    /// dbus/org.reachabilityd.Reachability1.xml declares them.
    public static let reachability: BusInterface = {
        var count = 0
        let members = CReach_reachability_members(&count)
        return BusInterface(
            name: BusContract.interface,
            properties: ReachabilityProperty.allCases.map { ($0.rawValue, $0.definition.signature) },
            members: UnsafeBufferPointer(start: members, count: count)
        )
    }()
}

/// What a method answers.
public enum BusReply: Sendable, Equatable {
    /// A method return carrying `values`, in order.
    case values([PropertyValue])
    /// An error reply.
    case error(BusError)
    /// The call's arguments are not those the method takes (`InvalidArgs`).
    case invalidArguments
}

/// The handler of one method of an exported object; it runs on the connection's queue.
public struct BusMethod {
    /// The method's name, as the interface's vtable spells it.
    public let name: String
    /// Answers `call`, now or later.
    let handle: (BusMethodCall) -> Void

    /// A method answered at once with what `answer` returns.
    public static func replying(_ name: String, _ answer: @escaping (BusMethodCall) -> BusReply) -> BusMethod {
        BusMethod(name: name) { call in call.reply(answer(call)) }
    }

    /// A method answered later: `start` gets the call and a `reply` to call once, on the
    /// connection's queue, when the answer is ready (a second answer is ignored).
    public static func replyingLater(_ name: String, _ start: @escaping (BusMethodCall, _ reply: @escaping @Sendable (BusReply) -> Void) -> Void) -> BusMethod {
        BusMethod(name: name) { call in start(call) { answer in call.reply(answer) } }
    }
}

/// A method call the exported object took, kept until it is answered (later, in its turn, or
/// never when its caller left). Confined to the connection's queue.
/// The corresponding C type is a referenced `sd_bus_message`.
public final class BusMethodCall: @unchecked Sendable {
    private let message: OpaquePointer
    private let connection: BusConnection
    private let method: BusMethod?
    private var answered = false

    /// Takes a reference to a method call handed to the vtable's method trampoline.
    init(referencing message: OpaquePointer, connection: BusConnection, method: BusMethod?) {
        self.message = sd_bus_message_ref(message)
        self.connection = connection
        self.method = method
    }

    deinit {
        sd_bus_message_unref(message)
    }

    /// The unique name of the calling connection ("" when the message has none).
    public var sender: String { BusMessage(message).sender ?? "" }

    /// The method's name.
    /// The corresponding C function is `sd_bus_message_get_member`.
    public var member: String {
        sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
    }

    /// The call's arguments, read in order; valid while the call is kept.
    public var arguments: BusMessage { BusMessage(message) }

    /// Runs the method's handler, which answers now or later; a method without a handler is
    /// answered `NotSupported`.
    public func serve() {
        guard let method else { return reply(errno: EOPNOTSUPP) }
        method.handle(self)
    }

    /// Sends `answer`, once (a second answer is dropped), then matches the connection's
    /// sources to what sd-bus waits for. A failure to send is only debug-logged: the caller
    /// gets `NoReply`.
    public func reply(_ answer: BusReply) {
        guard !answered else { return }
        answered = true
        do throws(SystemError) {
            switch answer {
            case .values(let values): try send(values)
            case .error(let error): try send(error)
            case .invalidArguments: reply(errno: EINVAL)
            }
        } catch {
            Log.debug("\(error)")
        }
        connection.rearm()
    }

    /// The corresponding C functions are `sd_bus_message_new_method_return` and `sd_bus_send`.
    private func send(_ values: [PropertyValue]) throws(SystemError) {
        let action = "answer \(member)"
        var reply: OpaquePointer?
        try sdCall(action) { sd_bus_message_new_method_return(message, &reply) }
        defer { sd_bus_message_unref(reply) }
        for value in values { try BusMessage(reply!).append(value) }
        try sdCall(action) { sd_bus_send(nil, reply, nil) }
    }

    /// The corresponding C functions are `sd_bus_error_set` and `sd_bus_reply_method_error`.
    private func send(_ error: BusError) throws(SystemError) {
        var busError = sd_bus_error()
        defer { sd_bus_error_free(&busError) }
        sd_bus_error_set(&busError, error.name, error.message)
        try sdCall("answer \(member) with \(error.name)") { sd_bus_reply_method_error(message, &busError) }
    }

    /// Answers with the error sd-bus names for `errno` (e.g. `InvalidArgs` for `EINVAL`).
    /// The corresponding C function is `sd_bus_reply_method_errno`.
    private func reply(errno value: Int32) {
        answered = true
        do throws(SystemError) {
            try sdCall("answer \(member) with \(SystemError.describe(errno: value))") { sd_bus_reply_method_errno(message, value, nil) }
        } catch {
            Log.debug("\(error)")
        }
        connection.rearm()
    }
}

/// An object exported on a connection: its properties read through `properties`, its method
/// calls answered by their ``BusMethod``, and the signals it sends. The export lasts as long
/// as this object; confined to the connection's queue.
public final class BusObject: @unchecked Sendable {
    /// The object's path.
    public let path: String
    private let interface: BusInterface
    private let connection: BusConnection
    private let properties: (String) -> PropertyValue?
    private let methods: [String: BusMethod]
    private let admit: (BusMethodCall) -> Void
    /// The vtable's userdata: the trampolines' way back to this object.
    private let handlers: UnsafeMutablePointer<CReach_BusHandlers>
    private var slot: BusSlot?

    /// Exports an object at `path` serving `interface`.
    ///
    /// - Parameters:
    ///   - connection: the connection (its queue is this object's queue).
    ///   - path: the object path.
    ///   - interface: the interface, with its vtable.
    ///   - properties: the value of a property by name; nil for a name it does not have.
    ///   - methods: one handler per method of the interface.
    ///   - admit: where each incoming call goes, to be served (``BusMethodCall/serve()``) in
    ///     its turn; by default it is served at once.
    /// The corresponding C function is `sd_bus_add_object_vtable`.
    public init(
        on connection: BusConnection, path: String, interface: BusInterface, properties: @escaping (String) -> PropertyValue?,
        methods: [BusMethod], admit: @escaping (BusMethodCall) -> Void = { $0.serve() }
    ) throws(SystemError) {
        self.path = path
        self.interface = interface
        self.connection = connection
        self.properties = properties
        self.methods = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.admit = admit
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: CReach_BusHandlers(context: nil, get_property: { context, property, reply, _ in
            guard let context, let property, let reply else { return -EINVAL }
            return Unmanaged<BusObject>.fromOpaque(context).takeUnretainedValue().append(property: String(cString: property), to: BusMessage(reply))
        }, call_method: { context, _, message, _ in
            guard let context, let message else { return -EINVAL }
            Unmanaged<BusObject>.fromOpaque(context).takeUnretainedValue().take(message)
            return 1  // handled: the reply comes when the method answers
        }))
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        // Every stored property is set: if this throws, deinit runs and frees the handlers.
        var slot: OpaquePointer?
        try sdCall("export \(path)") { sd_bus_add_object_vtable(connection.bus, &slot, path, interface.name, interface.vtable, handlers) }
        self.slot = BusSlot(slot!)
    }

    deinit {
        slot = nil
        handlers.deallocate()
    }

    private func append(property name: String, to reply: BusMessage) -> Int32 {
        guard let value = properties(name) else { return -ENOENT }
        do throws(SystemError) {
            try reply.append(value)
            return 0
        } catch {
            return -error.errno
        }
    }

    private func take(_ message: OpaquePointer) {
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        admit(BusMethodCall(referencing: message, connection: connection, method: methods[member]))
    }

    /// Sends the signal `member` of the interface, carrying `arguments`, then matches the
    /// connection's sources to what sd-bus waits for.
    /// The corresponding C functions are `sd_bus_message_new_signal` and `sd_bus_send`.
    public func emit(_ member: String, _ arguments: [PropertyValue] = []) throws(SystemError) {
        defer { connection.rearm() }
        var message: OpaquePointer?
        try sdCall("create \(member) signal") { sd_bus_message_new_signal(connection.bus, &message, path, interface.name, member) }
        defer { sd_bus_message_unref(message) }
        do throws(SystemError) {
            for argument in arguments { try BusMessage(message!).append(argument) }
        } catch {
            throw SystemError(action: "append to \(member) signal", errno: error.errno)
        }
        try sdCall("send \(member) signal") { sd_bus_send(connection.bus, message, nil) }
    }

    /// Emits `PropertiesChanged` for `names`, whose new values sd-bus reads through
    /// `properties`, then matches the connection's sources to what sd-bus waits for.
    /// The corresponding C function is `sd_bus_emit_properties_changed_strv`.
    public func emitPropertiesChanged(_ names: [String]) throws(SystemError) {
        defer { connection.rearm() }
        var strings: [UnsafeMutablePointer<CChar>?] = names.map { strdup($0) } + [nil]
        defer { strings.forEach { free($0) } }
        try sdCall("emit PropertiesChanged") { sd_bus_emit_properties_changed_strv(connection.bus, path, interface.name, &strings) }
    }
}

extension BusMessage {
    /// Appends one value: a basic one (`s`, `b`, `u`, `t`; a D-Bus boolean is a C `int`) or a
    /// container (`as`, `a{sv}` with its entries sorted by name, `aa{sv}`).
    /// The corresponding C functions are `sd_bus_message_append_basic`,
    /// `sd_bus_message_open_container` and `sd_bus_message_close_container`.
    ///
    /// Type codes and signatures are static C strings: an `Interfaces` of a thousand links is
    /// some 60,000 calls, and a Swift string or character converted at each would be most of them.
    public func append(_ value: PropertyValue) throws(SystemError) {
        let action = "append to a bus message"
        switch value {
        case .string(let string):
            try sdCall(action) { string.withCString { sd_bus_message_append_basic(message, TypeCode.string, $0) } }
        case .boolean(let boolean):
            var integer: Int32 = boolean ? 1 : 0
            try sdCall(action) { sd_bus_message_append_basic(message, TypeCode.boolean, &integer) }
        case .unsigned32(let number):
            var integer = number
            try sdCall(action) { sd_bus_message_append_basic(message, TypeCode.unsigned32, &integer) }
        case .unsignedInteger(let number):
            var integer = number
            try sdCall(action) { sd_bus_message_append_basic(message, TypeCode.unsigned64, &integer) }
        case .strings(let strings):
            try inContainer(TypeCode.array, "s") { () throws(SystemError) in
                for string in strings { try append(.string(string)) }
            }
        case .dictionary(let dictionary):
            try inContainer(TypeCode.array, "{sv}") { () throws(SystemError) in
                // (The keys sorted alone: sorting the entries would copy each value at every move.)
                for key in dictionary.keys.sorted() {
                    let element = dictionary[key]!
                    try inContainer(TypeCode.dictionaryEntry, "sv") { () throws(SystemError) in
                        try append(.string(key))
                        try inContainer(TypeCode.variant, element.staticSignature) { () throws(SystemError) in try append(element) }
                    }
                }
            }
        case .dictionaries(let dictionaries):
            try inContainer(TypeCode.array, "a{sv}") { () throws(SystemError) in
                for dictionary in dictionaries { try append(.dictionary(dictionary)) }
            }
        }
    }

    /// The D-Bus type codes ``append(_:)`` uses.
    private enum TypeCode {
        static let string = CChar(UInt8(ascii: "s"))
        static let boolean = CChar(UInt8(ascii: "b"))
        static let unsigned32 = CChar(UInt8(ascii: "u"))
        static let unsigned64 = CChar(UInt8(ascii: "t"))
        static let array = CChar(UInt8(ascii: "a"))
        static let dictionaryEntry = CChar(UInt8(ascii: "e"))
        static let variant = CChar(UInt8(ascii: "v"))
    }

    /// Opens a container of `type` holding `contents`, runs `body`, closes it.
    private func inContainer(_ type: CChar, _ contents: StaticString, _ body: () throws(SystemError) -> Void) throws(SystemError) {
        let action = "append to a bus message"
        try sdCall(action) {
            contents.withUTF8Buffer { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { sd_bus_message_open_container(message, type, $0.baseAddress) }
            }
        }
        try body()
        try sdCall(action) { sd_bus_message_close_container(message) }
    }
}
