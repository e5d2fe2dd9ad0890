import ReachabilityBus
import SystemSupport

/// Calls `appeared` whenever another service on the bus has a new owner: once at start-up if
/// it runs already (`GetNameOwner`), and on each `NameOwnerChanged` that gives it an owner (a
/// start or a restart). A service that stops is not reported: what it said stays true until it
/// says otherwise. Confined to the connection's queue; the watch lasts as long as this object.
final class BusServiceAppearance {
    private var slot: BusSlot?

    /// Starts watching `name`.
    ///
    /// - Parameters:
    ///   - name: the well-known name, e.g. `org.freedesktop.network1`.
    ///   - description: the service's name for the debug log ("systemd-networkd").
    ///   - connection: the daemon's bus connection.
    ///   - appeared: called on the queue when the service (re)appears.
    init(of name: String, description: String, on connection: BusConnection, appeared: @escaping () -> Void) throws(SystemError) {
        slot = try connection.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
        ) { message in
            // NameOwnerChanged(name, old owner, new owner): only a new owner has anything to tell.
            guard (try? message.readString()) != nil, (try? message.readString()) != nil,
                  let owner = try? message.readString(), !owner.isEmpty
            else { return }
            appeared()
        }
        try connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner",
            arguments: [name]
        ) { reply in
            guard reply.error == nil else { return Log.debug("\(description) is not running.") }
            appeared()
        }
    }
}
