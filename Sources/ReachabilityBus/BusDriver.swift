import SystemSupport

/// The bus driver (`org.freedesktop.DBus`, the bus itself): its names, and the calls and the
/// signal of it that the daemon and the clients use. The one place these names are spelled.
public enum BusDriver {
    /// The driver's bus name (also its interface's name).
    public static let name = "org.freedesktop.DBus"
    /// The driver's object path.
    public static let path = "/org/freedesktop/DBus"
    /// The driver's interface.
    public static let interface = "org.freedesktop.DBus"
    /// The standard interface of properties (`Get`, `GetAll`, `PropertiesChanged`).
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    /// The error of a failed call that says nothing more.
    static let failedError = "org.freedesktop.DBus.Error.Failed"

    /// The driver's announcements that a name changes hands, `NameOwnerChanged(name, old
    /// owner, new owner)`, narrowed by `arguments` (e.g. `[0: "org.example"]`).
    static func nameOwnerChanged(_ arguments: [Int: String]) -> BusSignalMatch {
        BusSignalMatch(sender: name, path: path, interface: interface, member: "NameOwnerChanged", arguments: arguments)
    }

    /// Whether `message` comes from the bus driver itself. A match rule's `sender=` does not
    /// make sure of it: the bus delivers a unicast signal to its destination whatever the
    /// rules, and sd-bus cannot compare a well-known name with the unique name a message
    /// carries, so any connection may send a signal that looks like the driver's. The sender
    /// field the bus fills in cannot be forged.
    static func sent(_ message: BusMessage) -> Bool {
        message.sender == name
    }
}

extension BusError {
    /// The bus has no owner for the destination (`NameHasNoOwner`).
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// The destination name is not known to the bus (`ServiceUnknown`).
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The bus refused the call: the caller has too many calls pending (`LimitsExceeded`).
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    /// No reply came in time (`NoReply`).
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    /// The object has no such method (`UnknownMethod`).
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    /// The bus's policy does not let the caller call it (`AccessDenied`).
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
}

extension BusConnection {
    /// Asks the bus which user `connection` (a unique name) runs as; `reply` gets the user ID
    /// on the queue, nil when the bus cannot tell.
    /// The bus method is `org.freedesktop.DBus.GetConnectionUnixUser`.
    public func askUnixUser(of connection: String, reply: @escaping (UInt32?) -> Void) throws(SystemError) {
        try call(
            destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface,
            member: "GetConnectionUnixUser", arguments: [connection], returning: UInt32.self
        ) { result in
            reply(try? result.get())
        }
    }
}

/// What a ``NameOwnerWatch`` tells.
public enum NameOwnerEvent: Sendable, Equatable {
    /// The bus answered the first lookup: the name's owner, nil when it has none (`NameHasNoOwner`).
    case initialOwner(String?)
    /// The first lookup failed otherwise (e.g. the connection dropped before the answer).
    case lookupFailed(BusError)
    /// The name changed hands: its new owner, nil when it was released.
    case ownerChanged(String?)

    /// The owner the event reports, if any.
    public var owner: String? {
        switch self {
        case .initialOwner(let owner), .ownerChanged(let owner): owner
        case .lookupFailed: nil
        }
    }
}

/// Follows who owns a bus name: the owner at the start (`GetNameOwner`), then every change
/// (`NameOwnerChanged`, believed only from the bus driver); or, with
/// ``departures(on:left:)``, every connection that leaves the bus. The one name-owner watcher
/// of the daemon and the clients. Confined to the connection's queue; the watch lasts as
/// long as this object.
public final class NameOwnerWatch {
    private var slot: BusSlot?
    /// The unique name that owns the watched name, as last told; nil while it has none or
    /// before the first answer (always nil for ``departures(on:left:)``).
    public private(set) var owner: String?

    /// Starts watching `name`: the match first, then the lookup, so no change falls between.
    ///
    /// - Parameters:
    ///   - name: the well-known name, e.g. `org.freedesktop.network1`.
    ///   - connection: the connection to watch on.
    ///   - handler: called on the queue with the first owner, then with each change.
    public init(of name: String, on connection: BusConnection, handler: @escaping (NameOwnerEvent) -> Void) throws(SystemError) {
        let tell: (NameOwnerEvent) -> Void = { [weak self] event in
            self?.owner = event.owner
            handler(event)
        }
        slot = try connection.addMatch(BusDriver.nameOwnerChanged([0: name])) { message in
            guard BusDriver.sent(message),
                  (try? message.readString()) == name, (try? message.readString()) != nil,
                  let owner = try? message.readString()
            else { return }
            tell(.ownerChanged(owner.isEmpty ? nil : owner))
        }
        try connection.call(
            destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface, member: "GetNameOwner", arguments: [name],
            returning: String.self
        ) { result in
            switch result {
            case .success(let owner): tell(.initialOwner(owner))
            case .failure(let error): tell(error.name == BusError.nameHasNoOwner ? .initialOwner(nil) : .lookupFailed(error))
            }
        }
    }

    private init(slot: BusSlot) {
        self.slot = slot
    }

    /// Whether `message` was sent by the watched name's current owner: what a signal matched
    /// by `sender='NAME'` must be checked with, since the bus delivers a unicast signal to its
    /// destination whatever the match rules say (see ``BusDriver``).
    public func isFromOwner(_ message: BusMessage) -> Bool {
        owner != nil && message.sender == owner
    }

    /// Calls `appeared` whenever the service `name` gets an owner: once at the start if it
    /// runs already, and at each start or restart; and `departed`, when given, whenever it
    /// stops (its name loses its owner).
    ///
    /// - Parameters:
    ///   - name: the service's well-known name.
    ///   - description: the service's name for the debug log ("systemd-networkd").
    ///   - connection: the connection to watch on.
    ///   - appeared: called on the queue when the service (re)appears.
    ///   - departed: called on the queue when the service stops.
    public static func appearances(
        of name: String, description: String, on connection: BusConnection, appeared: @escaping () -> Void, departed: (() -> Void)? = nil
    ) throws(SystemError) -> NameOwnerWatch {
        try NameOwnerWatch(of: name, on: connection) { event in
            if event.owner != nil {
                appeared()
            } else if case .ownerChanged = event {
                Log.debug("\(description) stopped.")
                departed?()
            } else {
                Log.debug("\(description) is not running.")
            }
        }
    }

    /// Calls `left` with the unique name of every connection that leaves the bus.
    ///
    /// - Parameters:
    ///   - connection: the connection to watch on.
    ///   - left: called on the queue with the departed connection's unique name (":1.42").
    public static func departures(on connection: BusConnection, left: @escaping (String) -> Void) throws(SystemError) -> NameOwnerWatch {
        NameOwnerWatch(slot: try connection.addMatch(BusDriver.nameOwnerChanged([2: ""])) { message in
            guard BusDriver.sent(message), let name = try? message.readString(), name.hasPrefix(":") else { return }
            left(name)
        })
    }
}
