/// The names of the D-Bus API, v1 (the source of truth is `dbus/org.reachabilityd.Reachability1.xml`).
public enum BusContract {
    /// The well-known bus name on the system bus.
    public static let busName = "org.reachabilityd.Reachability1"
    /// The object path.
    public static let objectPath = "/org/reachabilityd/Reachability1"
    /// The interface name.
    public static let interface = "org.reachabilityd.Reachability1"
    /// The signal emitted once per change of `Status`.
    public static let statusChangedSignal = "StatusChanged"
    /// The signal emitted once per change of `Connectivity`.
    public static let connectivityChangedSignal = "ConnectivityChanged"
    /// The signal emitted (without arguments, at most once per ``routesChangedIntervalMilliseconds``) after
    /// kernel link, address, route or rule events: clients re-check the destinations they follow.
    public static let routesChangedSignal = "RoutesChanged"
    /// The shortest time between two `RoutesChanged` signals, in milliseconds: a burst of route
    /// changes costs each client at most one re-check per interval.
    public static let routesChangedIntervalMilliseconds = 100
    /// The shortest time between two listings of `Interfaces` while links, addresses or default
    /// routes keep changing, in milliseconds: a change is listed at once when the last listing is
    /// older, else once at the end of the interval (``CoalescingWindow``), so a burst of link
    /// changes costs at most one `PropertiesChanged` of `Interfaces` (and one `Generation`) per
    /// interval, and its last state is always announced. A change of `Status` (or of any other
    /// property) is never delayed: it comes at once, with `Interfaces` listed anew when they changed.
    public static let interfacesIntervalMilliseconds = 250
    /// The method checking one literal address.
    public static let checkAddressMethod = "CheckAddress"
    /// The method checking one literal address, with how to get there (`via`, `address`).
    public static let checkDestinationMethod = "CheckDestination"
    /// The method returning the multi-line explanation report.
    public static let explainMethod = "Explain"
    /// The method returning the metrics in Prometheus' text format.
    public static let metricsMethod = "Metrics"
    /// The method running the connectivity check now and returning `Connectivity` after it.
    public static let checkConnectivityMethod = "CheckConnectivity"
    /// The error returned for a malformed address.
    public static let invalidAddressError = "org.reachabilityd.Error.InvalidAddress"
    /// The path of the system bus's socket for a `DBUS_SYSTEM_BUS_ADDRESS` (nil: unset): its
    /// `unix:path=`, else the standard one `dbus.socket` listens on; nil for an address of
    /// another kind (an abstract socket, TCP), which has no path to look at.
    public static func systemBusSocketPath(address: String?) -> String? {
        guard let address, !address.isEmpty else { return "/run/dbus/system_bus_socket" }
        guard address.hasPrefix("unix:path=") else { return nil }
        return String(address.dropFirst("unix:path=".count).prefix { $0 != "," && $0 != ";" })
    }
    /// The error a caller over its share of the daemon's time gets (``CallerBudget``).
    public static let busyError = "org.reachabilityd.Error.Busy"
}
