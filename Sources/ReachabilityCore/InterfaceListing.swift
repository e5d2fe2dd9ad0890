// The `Interfaces` property: every link the daemon knows (loopback left out), as NWPath's
// `availableInterfaces` and NetworkManager's `Devices` list theirs. The engine supplies the facts
// (classified links, which families have a usable global address where, the default routes);
// ``InterfaceListing/entries(links:usableFamilies:defaultRoutes:)`` is the rule, and
// ``NetworkInterface`` the entry (its `aa{sv}` form, read back by the client, is in ReachabilityProperties).

/// Whether a link can pass packets, in the words of the `operational` key of `Interfaces`
/// (networkctl's words for the same states).
public enum OperationalState: String, Sendable, CaseIterable, Hashable {
    /// Administratively up with carrier (`IFF_UP` and `IFF_LOWER_UP`).
    case up
    /// Administratively up without carrier: no cable, not associated.
    case noCarrier = "no-carrier"
    /// Administratively down.
    case down
}

/// One link as the daemon's `Interfaces` property publishes it.
public struct NetworkInterface: Sendable, Hashable {
    /// The interface name, e.g. "eth0".
    public var name: String
    /// The kernel's interface index.
    public var index: InterfaceIndex
    /// The link's own medium (`vpn` for a tunnel), as the `Transport` property names it.
    public var transport: Transport
    /// Whether the link can pass packets.
    public var operational: OperationalState
    /// Whether the link holds a usable global IPv4 address.
    public var hasIPv4: Bool
    /// Whether the link holds a usable global IPv6 address (DAD passed, or optimistic).
    public var hasIPv6: Bool
    /// The next hops of the default routes through the link, as the kernel reports them (IPv4
    /// first, then by metric; an IPv6 link-local gateway without its zone, which is this link).
    public var gateways: [IPAddress]
    /// Whether traffic over the link is metered.
    public var isMetered: Bool
    /// "" when the link counts for reachability, else one sentence why it does not ("container
    /// interface (veth*)", "no carrier"…).
    public var ignoreReason: String
    /// The nameservers configured for the link, where known: systemd-resolved's servers of the
    /// link, a link-local server whose zone is the link (``NameServer/link``).
    public var nameServers: [IPAddress]
    /// The link's MTU in bytes; 0 when not known.
    public var mtu: UInt32
    /// The opaque id of the network the link's default route leads into (``NetworkIdentity``),
    /// "" when it has none or its gateway's link-layer address is not known.
    public var networkID: String

    /// Creates an entry.
    public init(
        name: String, index: InterfaceIndex, transport: Transport, operational: OperationalState, hasIPv4: Bool = false, hasIPv6: Bool = false,
        gateways: [IPAddress] = [], isMetered: Bool = false, ignoreReason: String = "", nameServers: [IPAddress] = [], mtu: UInt32 = 0,
        networkID: String = ""
    ) {
        self.name = name
        self.index = index
        self.transport = transport
        self.operational = operational
        self.hasIPv4 = hasIPv4
        self.hasIPv6 = hasIPv6
        self.gateways = gateways
        self.isMetered = isMetered
        self.ignoreReason = ignoreReason
        self.nameServers = nameServers
        self.mtu = mtu
        self.networkID = networkID
    }

    /// Whether the link counts for reachability (``ignoreReason`` is "").
    public var counts: Bool { ignoreReason.isEmpty }

    /// The keys of an entry's dictionary on the bus, spelled once.
    public enum Key: String, CaseIterable, Sendable {
        /// `name` (s).
        case name
        /// `index` (u).
        case index
        /// `transport` (s).
        case transport
        /// `operational` (s).
        case operational
        /// `ipv4` (b).
        case ipv4
        /// `ipv6` (b).
        case ipv6
        /// `gateways` (as).
        case gateways
        /// `metered` (b).
        case metered
        /// `ignored` (s).
        case ignored
        /// `dns` (as).
        case dns
        /// `mtu` (u).
        case mtu
        /// `network-id` (s).
        case networkID = "network-id"
    }
}

/// A default route (prefix length 0) as the kernel reports it, in any routing table: where
/// ``NetworkInterface/gateways`` come from.
public struct DefaultRoute: Sendable, Hashable {
    /// The route's family.
    public var family: AddressFamily
    /// The output link (`RTA_OIF`).
    public var outputInterfaceIndex: InterfaceIndex
    /// The next hop (`RTA_GATEWAY`); nil for a route straight onto the link (`default dev wg0`).
    public var gateway: IPAddress?
    /// The routing table.
    public var table: RouteTable
    /// The metric (`RTA_PRIORITY`); 0 when the kernel gives none.
    public var metric: UInt32

    /// Creates a default route.
    public init(family: AddressFamily, outputInterfaceIndex: InterfaceIndex, gateway: IPAddress?, table: RouteTable = .main, metric: UInt32 = 0) {
        self.family = family
        self.outputInterfaceIndex = outputInterfaceIndex
        self.gateway = gateway
        self.table = table
        self.metric = metric
    }
}

/// The rule of the `Interfaces` property: one entry per link, loopback left out, in index order.
///
/// - transport, metered and the configuration's or a container's reason to ignore a link are the
///   link's classified facts (as `Explain()` shows them);
/// - `operational` is `down` without `IFF_UP`, `no-carrier` without `IFF_LOWER_UP`, else `up`;
/// - `ignored` is the classification's reason when there is one, else "link is down" or "no
///   carrier" for a link that cannot pass packets, else "": the link counts;
/// - `ipv4`/`ipv6`: the link holds a usable global address of the family;
/// - `gateways`: the distinct next hops of the default routes through the link, in every table,
///   IPv4 first, then by metric, table and address.
public enum InterfaceListing {
    /// The entries for `links`.
    ///
    /// - Parameters:
    ///   - links: every link's classified facts, in any order.
    ///   - usableFamilies: per link, the families of its usable global addresses.
    ///   - defaultRoutes: the kernel's default routes, in any order.
    public static func entries(links: [LinkFacts], usableFamilies: [InterfaceIndex: Set<AddressFamily>], defaultRoutes: [DefaultRoute]) -> [NetworkInterface] {
        let routesByLink = Dictionary(grouping: defaultRoutes.filter { $0.gateway != nil }, by: \.outputInterfaceIndex)
        // (Index and position sorted, not the facts: a host with thousands of links would copy them at every move.)
        let order = links.enumerated().compactMap { $0.element.isLoopback ? nil : ($0.element.index, $0.offset) }.sorted { $0.0 < $1.0 }
        return order.map { _, position in
            let link = links[position]
            let operational: OperationalState = !link.isUp ? .down : (link.hasCarrier ? .up : .noCarrier)
            let families = usableFamilies[link.index] ?? []
            return NetworkInterface(
                name: link.name,
                index: link.index,
                transport: link.transport,
                operational: operational,
                hasIPv4: families.contains(.ipv4),
                hasIPv6: families.contains(.ipv6),
                gateways: gateways(of: routesByLink[link.index] ?? []),
                isMetered: link.isMetered,
                ignoreReason: link.ignoreReason ?? notCountingReason(operational) ?? "",
                mtu: link.mtu
            )
        }
    }

    /// Why a link in state `operational` cannot carry traffic, nil when it can.
    private static func notCountingReason(_ operational: OperationalState) -> String? {
        switch operational {
        case .up: nil
        case .noCarrier: "no carrier"
        case .down: "link is down"
        }
    }

    /// The distinct gateways of `routes`, in the listing's order.
    private static func gateways(of routes: [DefaultRoute]) -> [IPAddress] {
        let order = { (route: DefaultRoute) in (route.family == .ipv4 ? 0 : 1, route.metric, route.table.rawValue, route.gateway?.description ?? "") }
        var seen: Set<IPAddress> = []
        return routes.sorted { order($0) < order($1) }.compactMap { route in route.gateway.flatMap { seen.insert($0).inserted ? $0 : nil } }
    }
}
