#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import ReachabilityCore
import SystemSupport

// The serving side of a `BusConnection`, for the daemon: an object exported with a C shim's
// static vtable, the method calls it takes (answered now or later), the values it writes and
// the signals it sends. Everything here runs on the connection's queue.

/// A method call the exported object took, kept until it is answered (later, in its turn, or
/// never when its caller left). Answer it on the connection's queue.
/// The corresponding C type is a referenced `sd_bus_message`.
public final class BusMethodCall: @unchecked Sendable {
    private let message: OpaquePointer

    /// Takes a reference to a method call handed to a vtable's method handler.
    package init(referencing message: OpaquePointer) {
        self.message = sd_bus_message_ref(message)
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

    /// Answers with a method return carrying `values`.
    /// The corresponding C functions are `sd_bus_message_new_method_return` and `sd_bus_send`.
    public func reply(_ values: [PropertyValue]) throws(SystemError) {
        let action = "answer \(member)"
        var reply: OpaquePointer?
        try sdCall(action) { sd_bus_message_new_method_return(message, &reply) }
        defer { sd_bus_message_unref(reply) }
        for value in values { try BusMessage(reply!).append(value) }
        try sdCall(action) { sd_bus_send(nil, reply, nil) }
    }

    /// Answers with the error `error`.
    /// The corresponding C functions are `sd_bus_error_set` and `sd_bus_reply_method_error`.
    public func reply(error: BusError) throws(SystemError) {
        var busError = sd_bus_error()
        defer { sd_bus_error_free(&busError) }
        sd_bus_error_set(&busError, error.name, error.message)
        try sdCall("answer \(member) with \(error.name)") { sd_bus_reply_method_error(message, &busError) }
    }

    /// Answers with the error sd-bus names for `errno` (e.g. `InvalidArgs` for `EINVAL`).
    /// The corresponding C function is `sd_bus_reply_method_errno`.
    public func reply(errno value: Int32) throws(SystemError) {
        try sdCall("answer \(member) with \(SystemError.describe(errno: value))") { sd_bus_reply_method_errno(message, value, nil) }
    }
}

extension BusMessage {
    /// Takes a message handed to a vtable's property getter, to append the value to.
    package init(borrowing message: OpaquePointer) {
        self.init(message)
    }

    /// Appends one basic value (`s`, `b` or `t`). A D-Bus boolean is a C `int`.
    /// The corresponding C function is `sd_bus_message_append_basic`.
    public func append(_ value: PropertyValue) throws(SystemError) {
        let action = "append to a bus message"
        switch value {
        case .string(let string):
            try sdCall(action) { string.withCString { sd_bus_message_append_basic(message, Self.character("s"), $0) } }
        case .boolean(let boolean):
            var integer: Int32 = boolean ? 1 : 0
            try sdCall(action) { sd_bus_message_append_basic(message, Self.character("b"), &integer) }
        case .unsignedInteger(let number):
            var integer = number
            try sdCall(action) { sd_bus_message_append_basic(message, Self.character("t"), &integer) }
        }
    }
}

extension BusConnection {
    /// Exports an object at `path` whose `interface` a C shim's static `vtable` describes;
    /// its handlers get `userdata`, which must outlive the returned slot.
    ///
    /// - Returns: the registration; the object goes from the bus when it is released.
    /// The corresponding C function is `sd_bus_add_object_vtable`.
    public func exportObject(
        path: String, interface: String, vtable: UnsafePointer<sd_bus_vtable>, userdata: UnsafeMutableRawPointer
    ) throws(SystemError) -> BusSlot {
        var slot: OpaquePointer?
        try sdCall("export \(path)") { sd_bus_add_object_vtable(bus, &slot, path, interface, vtable, userdata) }
        return BusSlot(slot!)
    }

    /// Sends the signal `member` of `interface` from `path`, carrying `arguments`.
    /// The corresponding C functions are `sd_bus_message_new_signal` and `sd_bus_send`.
    public func emitSignal(path: String, interface: String, member: String, arguments: [PropertyValue] = []) throws(SystemError) {
        var message: OpaquePointer?
        try sdCall("create \(member) signal") { sd_bus_message_new_signal(bus, &message, path, interface, member) }
        defer { sd_bus_message_unref(message) }
        do throws(SystemError) {
            for argument in arguments { try BusMessage(message!).append(argument) }
        } catch {
            throw SystemError(action: "append to \(member) signal", errno: error.errno)
        }
        try sdCall("send \(member) signal") { sd_bus_send(bus, message, nil) }
    }

    /// Emits `PropertiesChanged` for `names` of `interface` at `path`; sd-bus reads their new
    /// values through the exported object's getters.
    /// The corresponding C function is `sd_bus_emit_properties_changed_strv`.
    public func emitPropertiesChanged(path: String, interface: String, names: [String]) throws(SystemError) {
        var strings: [UnsafeMutablePointer<CChar>?] = names.map { strdup($0) } + [nil]
        defer { strings.forEach { free($0) } }
        try sdCall("emit PropertiesChanged") { sd_bus_emit_properties_changed_strv(bus, path, interface, &strings) }
    }
}
