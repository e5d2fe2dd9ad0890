#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import Dispatch
import SystemSupport

// The client side of a `BusConnection`: signal matches (`BusSignalMatch`) and asynchronous
// method calls whose replies are typed values (`BusReplyValue`), for the client library, the
// CLI and the daemon's own calls. Everything here runs on the connection's queue, like the rest of
// `BusConnection`; replies and signals arrive there from `sd_bus_process`.

/// A registration on the bus that lasts as long as this object: a signal match, an exported object.
///
/// Release it on the connection's queue (sd-bus is single-threaded per connection).
/// The corresponding C type is `sd_bus_slot`.
public final class BusSlot: @unchecked Sendable {
    private let slot: OpaquePointer

    init(_ slot: OpaquePointer) {
        self.slot = slot
    }

    deinit {
        sd_bus_slot_unref(slot)
    }
}

/// A D-Bus error reply: its name (`org.freedesktop.DBus.Error.ServiceUnknown`) and message.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error's name.
    public var name: String
    /// The human message, possibly empty.
    public var message: String

    /// Creates an error.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// "org.example.Error: message".
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}

/// A method call's argument: the basic types the daemon's calls send.
public enum BusArgument: Sendable, Equatable {
    /// Signature `s`.
    case string(String)
    /// Signature `i`.
    case int32(Int32)
    /// Signature `t`.
    case uint64(UInt64)
}

/// A message received in a callback, valid only during that callback: the typed reads the
/// client needs. Reads advance through the message's body.
public struct BusMessage {
    /// The underlying `sd_bus_message *`, borrowed.
    let message: OpaquePointer

    init(_ message: OpaquePointer) {
        self.message = message
    }

    /// The unique name of the sending connection (":1.42"), if the message has one.
    /// The corresponding C function is `sd_bus_message_get_sender`.
    public var sender: String? {
        sd_bus_message_get_sender(message).map { String(cString: $0) }
    }

    /// The object path the message concerns, if it has one.
    /// The corresponding C function is `sd_bus_message_get_path`.
    public var path: String? {
        sd_bus_message_get_path(message).map { String(cString: $0) }
    }

    /// The error when the message is an error reply, else nil.
    /// The corresponding C function is `sd_bus_message_get_error`.
    public var error: BusError? {
        guard sd_bus_message_is_method_error(message, nil) > 0, let error = sd_bus_message_get_error(message) else {
            return nil
        }
        return BusError(
            name: error.pointee.name.map { String(cString: $0) } ?? BusDriver.failedError,
            message: error.pointee.message.map { String(cString: $0) } ?? ""
        )
    }

    /// Reads one string (`s`, or `o`/`g` given their type character).
    /// The corresponding C function is `sd_bus_message_read_basic`.
    public func readString(type: Character = "s") throws(SystemError) -> String {
        var text: UnsafePointer<CChar>?
        let read = try sdCall("read a string from a bus message") {
            sd_bus_message_read_basic(message, Self.character(type), &text)
        }
        guard read > 0, let text else { throw SystemError(action: "read a string from a bus message", errno: EBADMSG) }
        return String(cString: text)
    }

    /// Reads one unsigned 32-bit integer (`u`).
    /// The corresponding C function is `sd_bus_message_read_basic`.
    public func readUInt32() throws(SystemError) -> UInt32 {
        var number: UInt32 = 0
        let read = try sdCall("read an unsigned integer from a bus message") {
            sd_bus_message_read_basic(message, Self.character("u"), &number)
        }
        guard read > 0 else { throw SystemError(action: "read an unsigned integer from a bus message", errno: EBADMSG) }
        return number
    }

    /// Reads one boolean (`b`).
    /// The corresponding C function is `sd_bus_message_read_basic`.
    public func readBoolean() throws(SystemError) -> Bool {
        var flag: Int32 = 0
        let read = try sdCall("read a boolean from a bus message") {
            sd_bus_message_read_basic(message, Self.character("b"), &flag)
        }
        guard read > 0 else { throw SystemError(action: "read a boolean from a bus message", errno: EBADMSG) }
        return flag != 0
    }

    /// Reads an array of strings (`as`, or `ao`/`ag` given their type character).
    /// The corresponding C functions are `sd_bus_message_enter_container` and `sd_bus_message_read_basic`.
    public func readStringArray(type: Character = "s") throws(SystemError) -> [String] {
        let action = "read an array of strings from a bus message"
        try sdCall(action) { sd_bus_message_enter_container(message, Self.character("a"), String(type)) }
        var strings: [String] = []
        while true {
            var text: UnsafePointer<CChar>?
            guard try sdCall(action, { sd_bus_message_read_basic(message, Self.character(type), &text) }) > 0, let text else { break }
            strings.append(String(cString: text))
        }
        try sdCall(action) { sd_bus_message_exit_container(message) }
        return strings
    }

    /// Enters a variant (`v`) holding `signature`, so the next reads read its contents; fails
    /// with `ENXIO` when the variant holds another type.
    /// The corresponding C function is `sd_bus_message_enter_container`.
    public func enterVariant(holding signature: String) throws(SystemError) {
        try sdCall("enter a variant of type \(signature) in a bus message") {
            sd_bus_message_enter_container(message, Self.character("v"), signature)
        }
    }

    /// Reads a dictionary of properties (`a{sv}`) whose values are strings (`s`, or object paths
    /// `o` as their text), booleans, unsigned 32- and 64-bit integers, arrays of strings, dictionaries
    /// of properties or arrays of them (`as`, `a{sv}`, `aa{sv}`); values of other types are skipped.
    public func readPropertyDictionary() throws(SystemError) -> [String: BusValue] {
        guard let dictionary = try readPropertyDictionaryElement() else {
            throw SystemError(action: "read a property dictionary from a bus message", errno: EBADMSG)
        }
        return dictionary
    }

    /// Reads the next dictionary of properties (`a{sv}`) of the enclosing container, nil at its end.
    /// The corresponding C functions are `sd_bus_message_enter_container` and `sd_bus_message_peek_type`.
    private func readPropertyDictionaryElement() throws(SystemError) -> [String: BusValue]? {
        let action = "read a property dictionary from a bus message"
        guard try sdCall(action, { sd_bus_message_enter_container(message, Self.character("a"), "{sv}") }) > 0 else { return nil }
        var values: [String: BusValue] = [:]
        while try sdCall(action, { sd_bus_message_enter_container(message, Self.character("e"), "sv") }) > 0 {
            let name = try readString()
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            try sdCall(action) { sd_bus_message_peek_type(message, &type, &contents) }
            guard let contents else { throw SystemError(action: action, errno: EBADMSG) }
            try sdCall(action) { sd_bus_message_enter_container(message, Self.character("v"), contents) }
            if let value = try readValue(signature: String(cString: contents)) {
                values[name] = value
            } else {
                try sdCall(action) { sd_bus_message_skip(message, contents) }
            }
            try sdCall(action) { sd_bus_message_exit_container(message) }  // the variant
            try sdCall(action) { sd_bus_message_exit_container(message) }  // the dictionary entry
        }
        try sdCall(action) { sd_bus_message_exit_container(message) }  // the array
        return values
    }

    /// Reads one value of `signature` as a ``BusValue`` (an object path `o` as its text);
    /// nil, having read nothing, for a type it does not represent.
    /// The corresponding C functions are `sd_bus_message_read_basic` and `sd_bus_message_enter_container`.
    private func readValue(signature: String) throws(SystemError) -> BusValue? {
        let action = "read a value from a bus message"
        switch signature {
        case "s", "o":
            return .string(try readString(type: Character(signature)))
        case "b":
            return .boolean(try readBoolean())
        case "u":
            var number: UInt32 = 0
            try sdCall(action) { sd_bus_message_read_basic(message, Self.character("u"), &number) }
            return .unsigned32(number)
        case "t":
            var number: UInt64 = 0
            try sdCall(action) { sd_bus_message_read_basic(message, Self.character("t"), &number) }
            return .unsignedInteger(number)
        case "as":
            return .strings(try readStringArray())
        case "a{sv}":
            return .dictionary(try readPropertyDictionary())
        case "aa{sv}":
            try sdCall(action) { sd_bus_message_enter_container(message, Self.character("a"), "a{sv}") }
            var dictionaries: [[String: BusValue]] = []
            while let dictionary = try readPropertyDictionaryElement() { dictionaries.append(dictionary) }
            try sdCall(action) { sd_bus_message_exit_container(message) }
            return .dictionaries(dictionaries)
        default:
            return nil
        }
    }

    /// Reads an array of `(i link, i family, ay address)` structures (`a(iiay)`, the shape of
    /// systemd-resolved's `DNS` property), inside a variant when the reply is a property's.
    /// The corresponding C functions are `sd_bus_message_enter_container`,
    /// `sd_bus_message_read_basic` and `sd_bus_message_read_array`.
    public func readLinkAddresses() throws(SystemError) -> [(link: Int32, family: Int32, address: [UInt8])] {
        let action = "read an array of link addresses from a bus message"
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        try sdCall(action) { sd_bus_message_peek_type(message, &type, &contents) }
        let inVariant = type == Self.character("v")
        if inVariant { try enterVariant(holding: "a(iiay)") }
        try sdCall(action) { sd_bus_message_enter_container(message, Self.character("a"), "(iiay)") }
        var entries: [(link: Int32, family: Int32, address: [UInt8])] = []
        while try sdCall(action, { sd_bus_message_enter_container(message, Self.character("r"), "iiay") }) > 0 {
            var link: Int32 = 0
            var family: Int32 = 0
            try sdCall(action) { sd_bus_message_read_basic(message, Self.character("i"), &link) }
            try sdCall(action) { sd_bus_message_read_basic(message, Self.character("i"), &family) }
            var bytes: UnsafeRawPointer?
            var count = 0
            try sdCall(action) { sd_bus_message_read_array(message, Self.character("y"), &bytes, &count) }
            entries.append((link, family, bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []))
            try sdCall(action) { sd_bus_message_exit_container(message) }
        }
        try sdCall(action) { sd_bus_message_exit_container(message) }
        if inVariant { try sdCall(action) { sd_bus_message_exit_container(message) } }
        return entries
    }

    static func character(_ type: Character) -> CChar {
        CChar(bitPattern: type.asciiValue ?? 0)
    }
}

/// What a method returns, read from its reply's body: the typed side of a reply, so that a
/// caller gets a value or a ``BusError``, never a message to read in order.
public protocol BusReplyValue {
    /// Reads the value from the body of `reply` (not an error reply).
    init(reading reply: BusMessage) throws(SystemError)
}

extension String: BusReplyValue {
    /// Reads one string (`s`).
    public init(reading reply: BusMessage) throws(SystemError) {
        self = try reply.readString()
    }
}

extension UInt32: BusReplyValue {
    /// Reads one unsigned 32-bit integer (`u`).
    public init(reading reply: BusMessage) throws(SystemError) {
        self = try reply.readUInt32()
    }
}

extension Array: BusReplyValue where Element == String {
    /// Reads an array of strings or object paths (`as`, `ao`).
    /// The corresponding C function is `sd_bus_message_peek_type`.
    public init(reading reply: BusMessage) throws(SystemError) {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        try sdCall("read an array from a bus message") { sd_bus_message_peek_type(reply.message, &type, &contents) }
        guard let contents, let element = String(cString: contents).first else {
            throw SystemError(action: "read an array from a bus message", errno: EBADMSG)
        }
        self = try reply.readStringArray(type: element)
    }
}

extension Dictionary: BusReplyValue where Key == String, Value == BusValue {
    /// Reads a dictionary of properties (`a{sv}`), as ``BusMessage/readPropertyDictionary()`` does.
    public init(reading reply: BusMessage) throws(SystemError) {
        self = try reply.readPropertyDictionary()
    }
}

extension BusMessage {
    /// The reply as a value of type `Reply`, or its error: the error of an error reply, or
    /// `InconsistentMessage` when the body is not a `Reply`.
    public func result<Reply: BusReplyValue>(as type: Reply.Type = Reply.self) -> Result<Reply, BusError> {
        if let error { return .failure(error) }
        do throws(SystemError) {
            return .success(try Reply(reading: self))
        } catch {
            return .failure(BusError(name: BusError.inconsistentMessage, message: "The reply could not be read: \(error.errnoDescription)"))
        }
    }
}

extension BusError {
    /// A message whose body is not what it should be (`InconsistentMessage`).
    public static let inconsistentMessage = "org.freedesktop.DBus.Error.InconsistentMessage"
}

/// A match rule for signals (`type='signal',…`), built from its parts: the one way the daemon
/// and the clients spell a match.
public struct BusSignalMatch: Sendable, Equatable, CustomStringConvertible {
    /// The sending connection (a unique or well-known name); a well-known name does not make
    /// sure of the sender (see ``NameOwnerWatch/isFromOwner(_:)``).
    public var sender: String?
    /// The object path the signal comes from.
    public var path: String?
    /// A path prefix: the signal's path is this one or below it.
    public var pathNamespace: String?
    /// The signal's interface.
    public var interface: String?
    /// The signal's name.
    public var member: String?
    /// The string arguments the signal must carry, by position (`arg0='…'`).
    public var arguments: [Int: String]

    /// Creates a rule; each part left nil matches anything.
    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil, member: String? = nil,
        arguments: [Int: String] = [:]
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// `PropertiesChanged` of the properties of `interface` (its first argument), from `sender`
    /// at `path` or under `pathNamespace`.
    public static func propertiesChanged(
        of interface: String, sender: String? = nil, path: String? = nil, pathNamespace: String? = nil
    ) -> BusSignalMatch {
        BusSignalMatch(
            sender: sender, path: path, pathNamespace: pathNamespace, interface: BusDriver.propertiesInterface,
            member: "PropertiesChanged", arguments: [0: interface]
        )
    }

    /// The rule's text, e.g. `type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='…'`.
    public var description: String {
        let parts: [(String, String?)] = [
            ("sender", sender), ("path", path), ("path_namespace", pathNamespace), ("interface", interface), ("member", member),
        ] + arguments.sorted { $0.key < $1.key }.map { ("arg\($0.key)", $0.value) }
        return (["type='signal'"] + parts.compactMap { key, value in value.map { "\(key)=\(Self.quoted($0))" } }).joined(separator: ",")
    }

    /// A value in single quotes; an apostrophe inside ends the quotes, is escaped, and reopens them.
    private static func quoted(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

/// The Swift closure behind a C callback's `userdata`, released by the slot's destroy callback.
private final class MessageHandlerBox {
    let handler: (BusMessage) -> Void

    init(_ handler: @escaping (BusMessage) -> Void) {
        self.handler = handler
    }

    /// The `sd_bus_message_handler_t` that calls the box in `userdata`.
    static let callback: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        Unmanaged<MessageHandlerBox>.fromOpaque(userdata).takeUnretainedValue().handler(BusMessage(message))
        return 0
    }

    /// The `sd_bus_destroy_t` that releases the box when its slot goes away.
    static let destroy: sd_bus_destroy_t = { userdata in
        guard let userdata else { return }
        Unmanaged<MessageHandlerBox>.fromOpaque(userdata).release()
    }
}

extension BusConnection {
    /// Calls `handler` on the queue for every message matching `rule`, while the returned slot lives.
    ///
    /// The match is installed asynchronously (`AddMatch` is sent before any later call on this
    /// connection, so the bus applies it before it answers those calls).
    ///
    /// - Parameters:
    ///   - match: the signals to receive.
    ///   - handler: called with each matching message.
    /// - Returns: the registration; the match is removed when it is released.
    /// The corresponding C function is `sd_bus_add_match_async`.
    public func addMatch(_ match: BusSignalMatch, handler: @escaping (BusMessage) -> Void) throws(SystemError) -> BusSlot {
        let rule = match.description
        let box = Unmanaged.passRetained(MessageHandlerBox(handler))
        var slot: OpaquePointer?
        do throws(SystemError) {
            try sdCall("add bus match \(rule)") {
                sd_bus_add_match_async(bus, &slot, rule, MessageHandlerBox.callback, nil, box.toOpaque())
            }
        } catch {
            box.release()
            throw error
        }
        sd_bus_slot_set_destroy_callback(slot, MessageHandlerBox.destroy)
        rearm()
        return BusSlot(slot!)
    }

    /// Asks for the well-known `name` without waiting for the bus's answer, so that a broker
    /// that accepted the connection but never answers stalls nothing on the queue.
    ///
    /// - Parameters:
    ///   - name: the well-known name.
    ///   - answered: called once on the queue: nil when the name is this connection's, else why
    ///     not (another owner, policy, no answer).
    /// The corresponding C function is `sd_bus_request_name_async`.
    public func requestName(_ name: String, answered: @escaping (BusError?) -> Void) throws(SystemError) {
        let box = Unmanaged.passRetained(MessageHandlerBox { reply in
            switch reply.result(as: UInt32.self) {
            case .failure(let error): answered(error)
            // DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER, _ALREADY_OWNER
            case .success(1), .success(4): answered(nil)
            case .success(let code): answered(BusError(name: "org.freedesktop.DBus.Error.AddressInUse", message: "\(name) has another owner (RequestName answered \(code))"))
            }
        })
        var slot: OpaquePointer?
        do throws(SystemError) {
            try sdCall("acquire bus name \(name)") { sd_bus_request_name_async(bus, &slot, name, 0, MessageHandlerBox.callback, box.toOpaque()) }
        } catch {
            box.release()
            throw error
        }
        sd_bus_slot_set_destroy_callback(slot, MessageHandlerBox.destroy)
        // The bus owns the pending call from here, as for call(…).
        sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
        rearm()
    }

    /// Calls a method; `reply` gets the method's return or error on the
    /// queue (a synthesized error when the call times out or the connection drops while it is
    /// processed).
    ///
    /// - Parameters:
    ///   - destination: the bus name to call.
    ///   - path: the object path.
    ///   - interface: the interface.
    ///   - member: the method.
    ///   - arguments: the arguments, in order.
    ///   - timeoutMicroseconds: how long to wait for the reply; 0 is sd-bus's default (25 s).
    ///   - startsService: whether the bus may start (activate) `destination` for the call; when
    ///     false, a service that is not running answers `ServiceUnknown` at once.
    ///   - reply: called once with the reply.
    /// The corresponding C functions are `sd_bus_message_new_method_call`,
    /// `sd_bus_message_set_auto_start` and `sd_bus_call_async`.
    package func call(
        destination: String, path: String, interface: String, member: String, arguments: [BusArgument] = [],
        timeoutMicroseconds: UInt64 = 0, startsService: Bool = true, reply: @escaping (BusMessage) -> Void
    ) throws(SystemError) {
        let slot = try sendCall(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeoutMicroseconds: timeoutMicroseconds, startsService: startsService, reply: reply
        )
        // The bus owns the pending call from here; the box goes when the call completes or the
        // connection is freed.
        sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    /// Calls a method as ``call(destination:path:interface:member:arguments:timeoutMicroseconds:startsService:reply:)``
    /// does, for a caller that must know every call it made ends: the call is pending while the
    /// returned slot lives, and releasing the slot cancels it (`reply` is then never called).
    /// A connection closed with calls pending does not answer them: their holder does.
    ///
    /// - Returns: the pending call.
    /// The corresponding C function is `sd_bus_call_async`.
    package func heldCall(
        destination: String, path: String, interface: String, member: String, arguments: [String] = [],
        timeoutMicroseconds: UInt64 = 0, reply: @escaping (BusMessage) -> Void
    ) throws(SystemError) -> BusSlot {
        BusSlot(try sendCall(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments.map(BusArgument.string),
            timeoutMicroseconds: timeoutMicroseconds, startsService: true, reply: reply
        ))
    }

    /// Sends the call and returns its slot, which the caller owns (one reference).
    private func sendCall(
        destination: String, path: String, interface: String, member: String, arguments: [BusArgument],
        timeoutMicroseconds: UInt64, startsService: Bool, reply: @escaping (BusMessage) -> Void
    ) throws(SystemError) -> OpaquePointer {
        let action = "call \(interface).\(member)"
        var message: OpaquePointer?
        try sdCall(action) { sd_bus_message_new_method_call(bus, &message, destination, path, interface, member) }
        defer { sd_bus_message_unref(message) }
        if !startsService { try sdCall(action) { sd_bus_message_set_auto_start(message, 0) } }
        for argument in arguments {
            try sdCall(action) {
                switch argument {
                case .string(let string):
                    string.withCString { sd_bus_message_append_basic(message, BusMessage.character("s"), $0) }
                case .int32(var number):
                    sd_bus_message_append_basic(message, BusMessage.character("i"), &number)
                case .uint64(var number):
                    sd_bus_message_append_basic(message, BusMessage.character("t"), &number)
                }
            }
        }
        let box = Unmanaged.passRetained(MessageHandlerBox(reply))
        var slot: OpaquePointer?
        do throws(SystemError) {
            try sdCall(action) {
                sd_bus_call_async(bus, &slot, message, MessageHandlerBox.callback, box.toOpaque(), timeoutMicroseconds)
            }
        } catch {
            box.release()
            throw error
        }
        // The box goes with the slot.
        sd_bus_slot_set_destroy_callback(slot, MessageHandlerBox.destroy)
        rearm()
        return slot!
    }
}

extension BusConnection {
    /// Calls a method with string arguments; `reply` gets, on the queue, what it returns as a
    /// `Reply` or the error: its error reply, a synthesized one when the call times out or the
    /// connection drops, `InconsistentMessage` when the answer is not a `Reply`.
    ///
    /// - Parameters:
    ///   - destination: the bus name to call.
    ///   - path: the object path.
    ///   - interface: the interface.
    ///   - member: the method.
    ///   - arguments: string arguments, in order.
    ///   - type: what the method returns.
    ///   - timeoutMicroseconds: how long to wait for the reply; 0 is sd-bus's default (25 s).
    ///   - startsService: whether the bus may start (activate) `destination` for the call.
    ///   - reply: called once with the outcome.
    public func call<Reply: BusReplyValue>(
        destination: String, path: String, interface: String, member: String, arguments: [BusArgument], returning type: Reply.Type,
        timeoutMicroseconds: UInt64 = 0, startsService: Bool = true, reply: @escaping (Result<Reply, BusError>) -> Void
    ) throws(SystemError) {
        try call(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeoutMicroseconds: timeoutMicroseconds, startsService: startsService
        ) { message in reply(message.result(as: type)) }
    }

    /// Calls a method with string arguments, as ``call(destination:path:interface:member:arguments:returning:timeoutMicroseconds:startsService:reply:)``
    /// does with typed ones.
    public func call<Reply: BusReplyValue>(
        destination: String, path: String, interface: String, member: String, arguments: [String] = [], returning type: Reply.Type,
        timeoutMicroseconds: UInt64 = 0, startsService: Bool = true, reply: @escaping (Result<Reply, BusError>) -> Void
    ) throws(SystemError) {
        try call(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments.map(BusArgument.string), returning: type,
            timeoutMicroseconds: timeoutMicroseconds, startsService: startsService, reply: reply
        )
    }
}

extension BusConnection {
    /// Connects to the bus at `address` (`unix:path=…`) as a client, as `system(queue:)` does
    /// for the system bus.
    ///
    /// - Parameters:
    ///   - address: a D-Bus address.
    ///   - queue: the connection's serial queue.
    /// The corresponding C functions are `sd_bus_new`, `sd_bus_set_address` and `sd_bus_start`.
    public static func open(address: String, queue: DispatchQueue) throws(SystemError) -> BusConnection {
        var bus: OpaquePointer?
        try sdCall("create a bus connection") { sd_bus_new(&bus) }
        do throws(SystemError) {
            try sdCall("set the bus address \(address)") { sd_bus_set_address(bus, address) }
            try sdCall("make the connection a bus client") { sd_bus_set_bus_client(bus, 1) }
            try sdCall("connect to \(address)") { sd_bus_start(bus) }
        } catch {
            sd_bus_unref(bus)
            throw error
        }
        return BusConnection(adopting: bus!, queue: queue)
    }
}
