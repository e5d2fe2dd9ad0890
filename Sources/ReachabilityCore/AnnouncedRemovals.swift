// Whether the kernel's answer for a probe can still show a removal the events already announced.
//
// Linux announces some removals before their effect on routing lands, and its route lookups do
// not wait for the change under way (they read the tables under RCU; the change holds RTNL):
// - `fib_table_delete` (net/ipv4/fib_trie.c) sends `RTM_DELROUTE`, then unlinks the route;
// - a link taken down is announced (`RTM_NEWLINK` without `IFF_UP`) before the routes through it
//   are flushed, and IPv4 flushes them without a message of its own;
// - a deleted address is announced (`RTM_DELADDR`) before the routes with that source hint go,
//   and, for a link's last IPv4 address, every IPv4 route through the link, also without a word.
// So an answer asked at once on such a message can show the state from before it; when no later
// message concerns that family, nothing would correct it (issue 38: the soak kept "reachable on
// ra0" through a default route whose deletion it had read). The engine asks again while the
// answer still shows an announced removal.

/// The removals the events announced for one family since its last answer that showed none of
/// them: what a later answer must no longer show.
package struct AnnouncedRemovals: Sendable, Equatable {
    /// A route an `RTM_DELROUTE` announced gone, as a lookup's matched entry shows it.
    package struct Route: Sendable, Hashable {
        /// The destination prefix as text ("8.8.8.0/24"); nil for a default route.
        package var prefix: String?
        /// The route's table.
        package var table: RouteTable
        /// The route's metric (0 when the message had none).
        package var metric: UInt32
        /// The output link; nil for a route without one (a nexthop object's, multipath).
        package var outputLink: InterfaceIndex?
        /// The gateway; nil for none.
        package var gateway: IPAddress?
        /// The route's type: a `unicast` one answers a lookup with itself; an `unreachable`,
        /// `prohibit`, `blackhole` or `throw` one with an error, which names no route.
        package var type: RouteType

        /// A removed route.
        package init(prefix: String?, table: RouteTable, metric: UInt32, outputLink: InterfaceIndex?, gateway: IPAddress?, type: RouteType) {
            self.prefix = prefix
            self.table = table
            self.metric = metric
            self.outputLink = outputLink
            self.gateway = gateway
            self.type = type
        }

        /// Whether the lookup's answer `route` is this route's (what the message does not say,
        /// such as the link of a nexthop object's route, is not compared).
        func isShown(by route: RouteFacts) -> Bool {
            route.type == type && route.matchedPrefix == prefix && route.table == table && (route.metric ?? 0) == metric
                && (outputLink == nil || route.outputInterfaceIndex == outputLink) && (gateway == nil || route.gateway == gateway)
        }

        /// Whether a lookup failing with `errno` may come from this route: the error the kernel
        /// gives for its type (`fib_props`); any error for `throw`, after which the lookup goes
        /// on in the next tables.
        func mayAnswer(_ errno: Errno) -> Bool {
            switch type {
            case .unreachable: errno == .noRouteToHost
            case .prohibit: errno == .permissionDenied
            case .blackhole: errno == .invalidArgument
            case .throw: true
            default: false
            }
        }
    }

    /// An address an `RTM_DELADDR` announced gone from a link.
    package struct Address: Sendable, Hashable {
        /// The address.
        package var address: IPAddress
        /// The link it was on.
        package var link: InterfaceIndex

        /// A removed address.
        package init(address: IPAddress, link: InterfaceIndex) {
            self.address = address
            self.link = link
        }
    }

    /// What the mirror says of the answer's output link.
    package struct OutputLink: Sendable, Equatable {
        /// Whether the mirror holds the link and it is up.
        package var isUp: Bool
        /// Whether the link holds an address of the answer's family.
        package var holdsAddressOfFamily: Bool

        /// The mirror's view of a link.
        package init(isUp: Bool, holdsAddressOfFamily: Bool) {
            self.isUp = isUp
            self.holdsAddressOfFamily = holdsAddressOfFamily
        }
    }

    /// The routes announced deleted, not added again since.
    package private(set) var routes: Set<Route> = []
    /// The addresses announced deleted, not added again since.
    package private(set) var addresses: Set<Address> = []

    /// None.
    package init() {}

    /// Whether none is held.
    package var isEmpty: Bool { routes.isEmpty && addresses.isEmpty }

    /// An `RTM_DELROUTE` concerning the probe.
    package mutating func routeDeleted(_ route: Route) { routes.insert(route) }

    /// An `RTM_NEWROUTE` concerning the probe: the same route back is no removal.
    package mutating func routeAdded(_ route: Route) { routes.remove(route) }

    /// An `RTM_DELADDR` of this family.
    package mutating func addressDeleted(_ address: Address) { addresses.insert(address) }

    /// An `RTM_NEWADDR` of this family: the same address back is no removal.
    package mutating func addressAdded(_ address: Address) { addresses.remove(address) }

    /// Whether an answer may predate a removal, so that the kernel must be asked again: its route
    /// goes out of a link the mirror has down or lacks (the kernel flushes the routes of a link
    /// taken down or deleted); it is a route announced deleted; it is the error a route announced
    /// deleted gives (an `unreachable` one's `EHOSTUNREACH`...); its
    /// source is an address announced deleted; or, for IPv4, its route goes out of a link that
    /// lost an address and holds none of the family any more (the kernel flushes that link's routes).
    ///
    /// - Parameters:
    ///   - lookup: the kernel's answer.
    ///   - source: the source the kernel selected; nil for none.
    ///   - family: the answer's family.
    ///   - outputLink: the mirror's view of the route's output link; nil when the mirror lacks
    ///     it (or the answer names none).
    /// - Returns: true when the answer may still show a removal.
    package func mayPredateRemoval(lookup: RouteLookup, source: IPAddress?, family: AddressFamily, outputLink: OutputLink?) -> Bool {
        if let source, addresses.contains(where: { $0.address == source }) { return true }
        switch lookup {
        case .failed(let errno):
            return routes.contains { $0.mayAnswer(errno) }
        case .route(let route):
            guard let link = route.outputInterfaceIndex else { return routes.contains { $0.isShown(by: route) } }
            guard let outputLink, outputLink.isUp else { return true }
            if routes.contains(where: { $0.isShown(by: route) }) { return true }
            return family == .ipv4 && !outputLink.holdsAddressOfFamily && addresses.contains { $0.link == link }
        }
    }
}
