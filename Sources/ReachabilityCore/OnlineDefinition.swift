/// What "online" means to `reachabilityctl wait` and `reachabilityd-wait-online.service`.
///
/// Online is the daemon's answer, not a per-link checklist: the machine is reachable (the
/// kernel would route an application's packets to the Internet from a usable source), and,
/// when asked for, over a family, a transport, one of a set of interfaces, with at least a
/// connectivity. A link without carrier, a container bridge or an ignored interface never
/// delays it: it only counts when the kernel's route goes through it.
///
/// The transport, the interfaces and the connectivity are those of each required family's
/// route (`--ipv6`: IPv6's link, `--ipv4 --ipv6`: each family's own); with no family required,
/// those of the route the status names (IPv4's when both are reachable). A family's transport
/// is the medium its traffic leaves on: the status's when its link is the one the status names
/// (for a tunnel, the medium beneath when the daemon knows it), else its link's own transport.
public struct OnlineDefinition: Sendable, Hashable {
    /// Which families must be reachable.
    public enum Family: String, Sendable, CaseIterable {
        /// Either family (the status is reachable).
        case any
        /// IPv4 must be reachable.
        case ipv4
        /// IPv6 must be reachable.
        case ipv6
        /// IPv4 and IPv6 must both be reachable.
        case both
    }

    /// Which families must be reachable.
    public var family: Family
    /// The transport the route must go over (`reachable-via-<transport>`); nil for any.
    public var transport: Transport?
    /// Globs of interface names (`eth0`, `en*`) one of which the route must go through;
    /// empty for any.
    public var interfaces: [String]
    /// The least connectivity (full > portal > limited > unknown); nil when not asked.
    public var connectivity: Connectivity?

    /// A definition; the defaults mean "reachable".
    public init(family: Family = .any, transport: Transport? = nil, interfaces: [String] = [], connectivity: Connectivity? = nil) {
        self.family = family
        self.transport = transport
        self.interfaces = interfaces
        self.connectivity = connectivity
    }

    /// One route the requirements apply to: its interface, the status of the traffic it carries
    /// (`reachable-via-<medium>`), and its connectivity.
    private struct Route {
        var interface: String
        var status: ReachabilityStatus?
        var connectivity: Connectivity
    }

    /// Whether `snapshot` is online under this definition.
    public func isOnline(_ snapshot: ReachabilitySnapshot) -> Bool {
        guard snapshot.status.isReachable else { return false }
        if family == .ipv4 || family == .both, !snapshot.isIPv4Reachable { return false }
        if family == .ipv6 || family == .both, !snapshot.isIPv6Reachable { return false }
        return routes(of: snapshot).allSatisfy { route in
            if let transport, route.status != ReachabilityStatus(reachableVia: transport) { return false }
            if !interfaces.isEmpty, !interfaces.contains(where: { Glob.matches($0, route.interface) }) { return false }
            if let connectivity, route.connectivity.rank < connectivity.rank { return false }
            return true
        }
    }

    /// The routes the requirements apply to in `snapshot`: each required family's, or the
    /// status's (with the better family's connectivity) when none is required.
    private func routes(of snapshot: ReachabilitySnapshot) -> [Route] {
        func route(_ interface: String, _ transport: Transport?, _ connectivity: Connectivity) -> Route {
            let status = interface == snapshot.interface ? snapshot.status : transport.map(ReachabilityStatus.init(reachableVia:))
            return Route(interface: interface, status: status, connectivity: connectivity)
        }
        let ipv4 = route(snapshot.ipv4Interface, snapshot.ipv4Transport, snapshot.ipv4Connectivity)
        let ipv6 = route(snapshot.ipv6Interface, snapshot.ipv6Transport, snapshot.ipv6Connectivity)
        return switch family {
        case .any: [Route(interface: snapshot.interface, status: snapshot.status, connectivity: snapshot.connectivity)]
        case .ipv4: [ipv4]
        case .ipv6: [ipv6]
        case .both: [ipv4, ipv6]
        }
    }
}

/// The early give-up of a wait for the network: when no link but loopback has had carrier for
/// `seconds` (a server booted without cables), waiting longer cannot help.
///
/// Fed with observations in time order; the clock starts with the wait, so a wait that starts
/// without any carrier gives up `seconds` later, and a carrier seen at any moment restarts it.
public struct NoCarrierGiveUp: Sendable, Hashable {
    /// How long without carrier on any link but loopback before giving up.
    public let seconds: Double
    /// When a link last had carrier, or when the wait started.
    public private(set) var lastCarrier: Double

    /// Starts the clock at `start` (seconds on a monotonic clock).
    public init(seconds: Double, start: Double) {
        self.seconds = seconds
        lastCarrier = start
    }

    /// Records what was seen at `now` and says whether to give up.
    ///
    /// - Parameters:
    ///   - anyCarrier: whether any link other than loopback has carrier now.
    ///   - now: seconds on the same clock as `start`.
    /// - Returns: true when no link but loopback has had carrier for `seconds`.
    public mutating func observe(anyCarrier: Bool, at now: Double) -> Bool {
        if anyCarrier { lastCarrier = max(lastCarrier, now) }
        return !anyCarrier && now - lastCarrier >= seconds
    }
}
