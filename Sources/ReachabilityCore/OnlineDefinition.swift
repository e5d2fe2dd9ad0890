/// What "online" means to `reachabilityctl wait` and `reachabilityd-wait-online.service`.
///
/// Online is the daemon's answer, not a per-link checklist: the machine is reachable (the
/// kernel would route an application's packets to the Internet from a usable source), and,
/// when asked for, over a family, a transport, one of a set of interfaces, with at least a
/// connectivity. A link without carrier, a container bridge or an ignored interface never
/// delays it: it only counts when the kernel's route goes through it.
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
    /// The transport the status must name (`reachable-via-<transport>`); nil for any.
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

    /// Whether `snapshot` is online under this definition.
    public func isOnline(_ snapshot: ReachabilitySnapshot) -> Bool {
        guard snapshot.status.isReachable else { return false }
        if let transport, snapshot.status != ReachabilityStatus(reachableVia: transport) { return false }
        if family == .ipv4 || family == .both, !snapshot.isIPv4Reachable { return false }
        if family == .ipv6 || family == .both, !snapshot.isIPv6Reachable { return false }
        if !interfaces.isEmpty, !interfaces.contains(where: { Glob.matches($0, snapshot.interface) }) { return false }
        if let connectivity, snapshot.connectivity.rank < connectivity.rank { return false }
        return true
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
