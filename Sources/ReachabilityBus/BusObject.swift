#if canImport(Glibc)
import Glibc
#endif
import CBusShims
import CSystemd
import Dispatch
import SystemSupport

// The serving side of a `BusConnection`, for the daemon: an object exported with a vtable
// assembled at run time from its interface's rows (properties, methods with their handlers,
// signals) through the generic entries of CBusShims, the property reads and the signals it
// sends. The C trampolines, the unmanaged references and the errno returns of sd-bus stop here.
// Everything here runs on the connection's queue, and says so: replies and emits check it.

/// An interface an exported object serves, declared as rows: its properties (name and
/// signature, each read through the object's `properties`), its methods (with their handlers)
/// and its signals, each in the order introspection lists them.
public struct BusInterface {
    /// The interface's name.
    public let name: String
    /// The read-only properties, each emitting `PropertiesChanged` with its value.
    public let properties: [(name: String, signature: String)]
    /// The methods, each with its handler.
    public let methods: [BusMethod]
    /// The signals.
    public let signals: [BusSignal]

    /// An interface of `properties`, `methods` and `signals`, in order.
    public init(name: String, properties: [(name: String, signature: String)], methods: [BusMethod] = [], signals: [BusSignal] = []) {
        self.name = name
        self.properties = properties
        self.methods = methods
        self.signals = signals
    }
}

/// What a method answers.
public enum BusReply: Sendable, Equatable {
    /// A method return carrying `values`, in order (of the method's output signature).
    case values([BusValue])
    /// An error reply.
    case error(BusError)
    /// The call's arguments are not those the method takes (`InvalidArgs`).
    case invalidArguments
}

/// One method of an interface: its name, its arguments (name and signature, in order) each
/// way, and its handler, which runs on the connection's queue and answers now or later.
public struct BusMethod {
    /// The method's name.
    public let name: String
    /// The arguments it takes.
    public let input: [(name: String, signature: String)]
    /// The arguments it returns.
    public let output: [(name: String, signature: String)]
    /// Answers `call`, now or later.
    let handle: (BusMethodCall) -> Void

    /// A method answered at once with what `answer` returns.
    public static func replying(
        _ name: String, takes input: [(name: String, signature: String)] = [], returns output: [(name: String, signature: String)] = [],
        _ answer: @escaping (BusMethodCall) -> BusReply
    ) -> BusMethod {
        BusMethod(name: name, input: input, output: output) { call in call.reply(answer(call)) }
    }

    /// A method answered later: `start` gets the call and the ``BusReplyOnQueue`` to answer it
    /// with, once, on the connection's queue, when the answer is ready.
    public static func replyingLater(
        _ name: String, takes input: [(name: String, signature: String)] = [], returns output: [(name: String, signature: String)] = [],
        _ start: @escaping (BusMethodCall, BusReplyOnQueue) -> Void
    ) -> BusMethod {
        BusMethod(name: name, input: input, output: output) { call in start(call, BusReplyOnQueue(call: call)) }
    }
}

/// One signal of an interface: its name and its arguments (name and signature, in order).
public struct BusSignal: Sendable {
    /// The signal's name.
    public let name: String
    /// The arguments it carries.
    public let arguments: [(name: String, signature: String)]

    /// A signal carrying `arguments`.
    public init(_ name: String, _ arguments: [(name: String, signature: String)] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// The answer to one method call, given later: it may travel anywhere (it is `Sendable`), but
/// is given on the connection's queue, which it checks; only the first answer is sent.
public struct BusReplyOnQueue: Sendable {
    fileprivate let call: BusMethodCall

    /// Sends `answer` (on the connection's queue).
    public func callAsFunction(_ answer: BusReply) {
        call.reply(answer)
    }
}

/// The signature of `arguments`, in order.
private func signature(of arguments: [(name: String, signature: String)]) -> String {
    arguments.map(\.signature).joined()
}

/// An interface's sd-bus vtable and the C strings its entries point to, freed together when the
/// export that uses them is gone.
private final class VTable {
    let entries: UnsafeMutablePointer<sd_bus_vtable>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(_ interface: BusInterface) {
        var entries = [CReach_vtable_start()]
        for property in interface.properties {
            entries.append(CReach_vtable_property(Self.keep(property.name, in: &strings), Self.keep(property.signature, in: &strings)))
        }
        for method in interface.methods {
            entries.append(CReach_vtable_method(
                Self.keep(method.name, in: &strings), Self.keep(signature(of: method.input), in: &strings),
                Self.keep(signature(of: method.output), in: &strings), Self.keep(names: method.input + method.output, in: &strings)
            ))
        }
        for signal in interface.signals {
            entries.append(CReach_vtable_signal(
                Self.keep(signal.name, in: &strings), Self.keep(signature(of: signal.arguments), in: &strings),
                Self.keep(names: signal.arguments, in: &strings)
            ))
        }
        entries.append(CReach_vtable_end())
        self.entries = .allocate(capacity: entries.count)
        self.entries.initialize(from: entries, count: entries.count)
    }

    deinit {
        entries.deallocate()
        strings.forEach { $0.deallocate() }
    }

    /// A C copy of `text`, kept in `strings`.
    private static func keep(_ text: String, in strings: inout [UnsafeMutablePointer<CChar>]) -> UnsafePointer<CChar> {
        keep(bytes: Array(text.utf8), in: &strings)
    }

    /// The arguments' names as sd-bus reads them: each followed by a NUL, in one C string.
    private static func keep(names arguments: [(name: String, signature: String)], in strings: inout [UnsafeMutablePointer<CChar>]) -> UnsafePointer<CChar> {
        keep(bytes: arguments.flatMap { Array($0.name.utf8) + [0] }, in: &strings)
    }

    /// A C copy of `bytes` and a terminating NUL, kept in `strings`.
    private static func keep(bytes: [UInt8], in strings: inout [UnsafeMutablePointer<CChar>]) -> UnsafePointer<CChar> {
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
        copy[bytes.count] = 0
        strings.append(copy)
        return UnsafePointer(copy)
    }
}

/// A method call the exported object took, kept until it is answered (later, in its turn, or
/// never when its caller left). Confined to the connection's queue.
/// The corresponding C type is a referenced `sd_bus_message`.
public final class BusMethodCall: @unchecked Sendable {
    private let message: OpaquePointer
    private let connection: BusConnection
    private let method: BusMethod
    private var answered = false

    /// Takes a reference to a call of `method` handed to the vtable's method trampoline.
    init(referencing message: OpaquePointer, connection: BusConnection, method: BusMethod) {
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

    /// Runs the method's handler, which answers now or later.
    public func serve() {
        method.handle(self)
    }

    /// Sends `answer`, once (a second answer is dropped), on the connection's queue (checked),
    /// then matches the connection's sources to what sd-bus waits for. A failure to send is only
    /// debug-logged: the caller gets `NoReply`.
    public func reply(_ answer: BusReply) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        guard !answered else { return }
        answered = true
        do throws(SystemError) {
            switch answer {
            case .values(let values):
                assert(signature(of: method.output) == values.map(\.signature).joined(), "\(member) answered other types than it declares")
                try send(values)
            case .error(let error): try send(error)
            case .invalidArguments: reply(errno: EINVAL)
            }
        } catch {
            Log.debug("\(error)")
        }
        connection.rearm()
    }

    /// The corresponding C functions are `sd_bus_message_new_method_return` and `sd_bus_send`.
    private func send(_ values: [BusValue]) throws(SystemError) {
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
/// as this object; confined to the connection's queue (its emits check it).
public final class BusObject: @unchecked Sendable {
    /// The object's path.
    public let path: String
    private let interfaceName: String
    private let connection: BusConnection
    private let properties: (String) -> BusValue?
    private let methods: [String: BusMethod]
    private let admit: (BusMethodCall) -> Void
    /// The vtable's userdata: the trampolines' way back to this object.
    private let handlers: UnsafeMutablePointer<CReach_BusHandlers>
    /// The vtable, kept until the export is gone.
    private let vtable: VTable
    private var slot: BusSlot?

    /// Exports an object at `path` serving `interface`.
    ///
    /// - Parameters:
    ///   - connection: the connection (its queue is this object's queue).
    ///   - path: the object path.
    ///   - interface: the interface: its properties, its methods with their handlers, its signals.
    ///   - properties: the value of a property by name; nil for a name it does not have.
    ///   - admit: where each incoming call goes, to be served (``BusMethodCall/serve()``) in
    ///     its turn; by default it is served at once.
    /// The corresponding C function is `sd_bus_add_object_vtable`.
    public init(
        on connection: BusConnection, path: String, interface: BusInterface, properties: @escaping (String) -> BusValue?,
        admit: @escaping (BusMethodCall) -> Void = { $0.serve() }
    ) throws(SystemError) {
        self.path = path
        interfaceName = interface.name
        self.connection = connection
        self.properties = properties
        methods = Dictionary(interface.methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.admit = admit
        vtable = VTable(interface)
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: CReach_BusHandlers(context: nil, get_property: { context, property, reply, _ in
            guard let context, let property, let reply else { return -EINVAL }
            return Unmanaged<BusObject>.fromOpaque(context).takeUnretainedValue().append(property: String(cString: property), to: BusMessage(reply))
        }, call_method: { context, _, message, _ in
            guard let context, let message else { return -EINVAL }
            // 1: handled, the reply comes when the method answers; sd-bus answers an error.
            return Unmanaged<BusObject>.fromOpaque(context).takeUnretainedValue().take(message)
        }))
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        // Every stored property is set: if this throws, deinit runs and frees the handlers.
        var slot: OpaquePointer?
        try sdCall("export \(path)") { sd_bus_add_object_vtable(connection.bus, &slot, path, interface.name, vtable.entries, handlers) }
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

    /// Admits a call of one of the interface's methods; -EOPNOTSUPP for a member it lacks (the
    /// vtable has none: sd-bus never asks).
    private func take(_ message: OpaquePointer) -> Int32 {
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        guard let method = methods[member] else { return -EOPNOTSUPP }
        admit(BusMethodCall(referencing: message, connection: connection, method: method))
        return 1
    }

    /// Sends `signal` of the interface, carrying `arguments` (of its declared types), then
    /// matches the connection's sources to what sd-bus waits for.
    /// The corresponding C functions are `sd_bus_message_new_signal` and `sd_bus_send`.
    public func emit(_ signal: BusSignal, _ arguments: [BusValue] = []) throws(SystemError) {
        assert(signature(of: signal.arguments) == arguments.map(\.signature).joined(), "\(signal.name) carries other types than it declares")
        try send(signal.name, interface: interfaceName) { message throws(SystemError) in
            for argument in arguments { try message.append(argument) }
        }
    }

    /// Emits `PropertiesChanged` carrying `changes` (each property's name and new value, in
    /// order; none invalidated), then matches the connection's sources to what sd-bus waits for.
    /// The message is the one `sd_bus_emit_properties_changed_strv` sends, built from the values
    /// at hand instead of sd-bus looking each property up and calling its getter.
    /// The corresponding C functions are `sd_bus_message_new_signal` and `sd_bus_send`.
    public func emitPropertiesChanged(_ changes: [(name: String, value: BusValue)]) throws(SystemError) {
        try send("PropertiesChanged", interface: BusDriver.propertiesInterface) { message throws(SystemError) in
            try message.append(.string(interfaceName))
            try message.appendDictionary(changes)
            try message.append(.strings([]))
        }
    }

    /// Sends the signal `member` of `interface` from this object's path, its arguments appended
    /// by `body`, on the connection's queue (checked); then matches the connection's sources to
    /// what sd-bus waits for.
    private func send(_ member: String, interface: String, body: (BusMessage) throws(SystemError) -> Void) throws(SystemError) {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        defer { connection.rearm() }
        var message: OpaquePointer?
        try sdCall("create \(member) signal") { sd_bus_message_new_signal(connection.bus, &message, path, interface, member) }
        defer { sd_bus_message_unref(message) }
        do throws(SystemError) {
            try body(BusMessage(message!))
        } catch {
            throw SystemError(action: "append to \(member) signal", errno: error.errno)
        }
        try sdCall("send \(member) signal") { sd_bus_send(connection.bus, message, nil) }
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
    public func append(_ value: BusValue) throws(SystemError) {
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
            // (The keys sorted alone: sorting the entries would copy each value at every move.)
            try appendDictionary(dictionary.keys.sorted().lazy.map { ($0, dictionary[$0]!) })
        case .dictionaries(let dictionaries):
            try inContainer(TypeCode.array, "a{sv}") { () throws(SystemError) in
                for dictionary in dictionaries { try append(.dictionary(dictionary)) }
            }
        }
    }

    /// Appends a dictionary of properties (`a{sv}`) of `entries`, in their order.
    func appendDictionary(_ entries: some Sequence<(String, BusValue)>) throws(SystemError) {
        try inContainer(TypeCode.array, "{sv}") { () throws(SystemError) in
            for (key, value) in entries {
                try inContainer(TypeCode.dictionaryEntry, "sv") { () throws(SystemError) in
                    try append(.string(key))
                    try inContainer(TypeCode.variant, value.staticSignature) { () throws(SystemError) in try append(value) }
                }
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
