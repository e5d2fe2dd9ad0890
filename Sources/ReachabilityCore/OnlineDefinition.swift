/// What "online" means to `reachabilityctl wait` and `reachabilityd-wait-online.service`.
///
/// Online is the daemon's answer, not a per-link checklist: the machine is reachable (the
/// kernel would route an application's packets to the Internet from a usable source), and,
/// when asked for, over a family, a transport, one of a set of interfaces, with at least a
/// connectivity, unmetered. A link without carrier, a container bridge or an ignored interface never
/// delays it: it only counts when the kernel's route goes through it.
///
/// The transport, the interfaces and the connectivity are those of each required family's
/// route (`--ipv6`: IPv6's link, `--ipv4 --ipv6`: each family's own); with no family required,
/// those of the route the status names (IPv4's when both are reachable). A family's transport
/// is the medium its traffic leaves on: the status's when its link is the one the status names
/// (for a tunnel, the medium beneath when the daemon knows it), else its link's own transport.
package struct OnlineDefinition: Sendable, Hashable {
    /// Which families must be reachable.
    package enum Family: String, Sendable, CaseIterable {
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
    package var family: Family
    /// The transport the route must go over (`reachable-via-<transport>`); nil for any.
    package var transport: Transport?
    /// Globs of interface names (`eth0`, `en*`) one of which the route must go through;
    /// empty for any.
    package var interfaces: [String]
    /// The least connectivity (full > portal > limited > unknown); nil when not asked.
    package var connectivity: Connectivity?
    /// The least DNS readiness (``DNSReadiness/rank``: answering > reachable > failing); nil
    /// when names need not resolve.
    package var dns: DNSReadiness?
    /// Whether traffic must not be metered (`Metered` false: ``MeteredRule`` for the route the
    /// status names).
    package var isUnmeteredRequired: Bool

    /// A definition; the defaults mean "reachable".
    package init(
        family: Family = .any, transport: Transport? = nil, interfaces: [String] = [], connectivity: Connectivity? = nil, dns: DNSReadiness? = nil,
        isUnmeteredRequired: Bool = false
    ) {
        self.family = family
        self.transport = transport
        self.interfaces = interfaces
        self.connectivity = connectivity
        self.dns = dns
        self.isUnmeteredRequired = isUnmeteredRequired
    }

    /// One route the requirements apply to: its interface, the status of the traffic it carries
    /// (`reachable-via-<medium>`), and its connectivity.
    private struct Route {
        var interface: String
        var status: ReachabilityStatus?
        var connectivity: Connectivity
    }

    /// Whether `snapshot` is online under this definition.
    package func isOnline(_ snapshot: ReachabilitySnapshot) -> Bool {
        guard snapshot.status.isReachable else { return false }
        if let dns, snapshot.dns.rank < dns.rank { return false }
        if isUnmeteredRequired, snapshot.isMetered { return false }
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

/// The early give-up of a wait for the network: when no link that could lead out of this
/// machine has had carrier for `seconds` (a server booted without cables), waiting longer
/// cannot help. Which links could: ``countsCarrier(of:in:configuration:)``.
///
/// Fed with observations in time order; the clock starts with the wait, so a wait that starts
/// without any carrier gives up `seconds` later, and a carrier seen at any moment restarts it.
package struct NoCarrierGiveUp: Sendable, Hashable {
    /// How long without carrier on a link that could lead out before giving up.
    package let seconds: Double
    /// When a link last had carrier, or when the wait started.
    package private(set) var lastCarrier: Double

    /// Starts the clock at `start` (seconds on a monotonic clock).
    package init(seconds: Double, start: Double) {
        self.seconds = seconds
        lastCarrier = start
    }

    /// Records what was seen at `now` and says whether to give up.
    ///
    /// - Parameters:
    ///   - anyCarrier: whether any link that could lead out has carrier now.
    ///   - now: seconds on the same clock as `start`.
    /// - Returns: true when no such link has had carrier for `seconds`.
    package mutating func observe(anyCarrier: Bool, at now: Double) -> Bool {
        if anyCarrier { lastCarrier = max(lastCarrier, now) }
        return !anyCarrier && now - lastCarrier >= seconds
    }

    /// Whether `link`'s carrier says the machine may get a way out: it is up with carrier, and
    /// it could carry the daemon's answer itself, its packets not handed to another link of this
    /// network namespace (which counts on its own) nor dropped. So it does not count when it is
    ///
    /// - loopback, or ignored by the daemon (`IgnoreInterfaces=`, `ContainerInterfaces=`, a
    ///   bridge of containers' ends: ``TransportClassifier/ignoreReason(for:in:configuration:)``);
    /// - a port of a bridge or bond: its master carries the traffic, and counts in its stead;
    /// - a veth whose peer is in this namespace: what it sends comes back here;
    /// - a dummy: what it sends is dropped;
    /// - a tunnel (WireGuard, GRE, IP-in-IP, VXLAN, tun/tap…) whose underlay is in this
    ///   namespace: up with carrier from its creation, it only wraps packets for another link.
    ///   PPP counts: a modem's PPP link is the way out itself.
    ///
    /// A veth or tunnel whose other end is in another namespace (a container's own link) counts,
    /// like any link with a medium.
    ///
    /// - Parameters:
    ///   - link: the link.
    ///   - links: every link of the namespace, for the daemon's ignore rules.
    ///   - configuration: the daemon's configuration.
    package static func countsCarrier(of link: LinkDescription, in links: [InterfaceIndex: LinkDescription], configuration: DaemonConfiguration) -> Bool {
        guard link.isUp, link.hasCarrier, !link.isLoopback, link.masterIndex == nil,
              TransportClassifier.ignoreReason(for: link, in: links, configuration: configuration) == nil else { return false }
        switch link.kind {
        case "dummy"?: return false
        case "veth"?: return link.lowerIndex == nil
        case let kind? where kind != "ppp" && TransportClassifier.tunnelKinds.contains(kind): return link.isLowerInOtherNamespace
        default: return true
        }
    }

    /// Whether any of `links` has carrier that counts (``countsCarrier(of:in:configuration:)``).
    package static func anyCarrier(in links: [InterfaceIndex: LinkDescription], configuration: DaemonConfiguration) -> Bool {
        links.values.contains { countsCarrier(of: $0, in: links, configuration: configuration) }
    }
}
