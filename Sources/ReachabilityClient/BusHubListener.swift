import ReachabilityBus
import ReachabilityCore

/// Which bus a manager talks to.
package enum BusEndpoint: Sendable, Hashable {
    /// The system bus (`$DBUS_SYSTEM_BUS_ADDRESS` when set).
    case system
    /// A bus at an explicit address, e.g. a test's private bus.
    case address(String)
}

/// What a hub knows about the daemon, as it tells its listeners.
enum DaemonState: Sendable, Equatable {
    /// The bus cannot be reached; the text says why.
    case busUnavailable(String)
    /// Nobody owns the daemon's name.
    case absent
    /// The daemon owns its name but did not answer the read of its properties (stopped, hung,
    /// or too busy); the text says how the read failed. It is read again until it answers.
    case notAnswering(String)
    /// The daemon runs as `owner` and publishes `properties` (as read with `GetAll` and
    /// updated by `PropertiesChanged`).
    case running(owner: String, properties: [String: BusValue])
}

/// Something following the daemon through a hub. Called on the hub's queue.
protocol BusHubListener: AnyObject {
    /// The daemon's state changed (or the listener just attached and the state is known).
    func hub(_ hub: BusHub, daemonState: DaemonState)
    /// The daemon announced `RoutesChanged`.
    func hubRoutesChanged(_ hub: BusHub)
}

/// A weak reference to a listener.
struct WeakListener {
    weak var listener: BusHubListener?

    init(_ listener: BusHubListener) {
        self.listener = listener
    }
}
