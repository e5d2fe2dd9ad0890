import RTNetlink
import ReachabilityCore

/// The status reducer: the engine's evaluation without its sockets. Parsed rtnetlink messages
/// (dumps and events) keep a ``LinkTable``; the kernel's answers to the route lookups for the
/// probe destinations, with that table, give the snapshot through ``ReachabilityRule``.
///
/// Pure: no sockets, and sysfs is read only through the table's inspector (when a link appears
/// or is renamed). The engine does the I/O around it; the fuzzer and the tests call it directly.
enum StatusReducer {
    /// The snapshot the engine publishes for `table` and the lookups of the two probe destinations.
    static func snapshot(of table: LinkTable, ipv4: RouteLookup, ipv6: RouteLookup, configuration: DaemonConfiguration) -> ReachabilitySnapshot {
        ReachabilityRule.decide(
            ipv4: destinationFacts(in: table, family: .ipv4, lookup: ipv4, configuration: configuration),
            ipv6: destinationFacts(in: table, family: .ipv6, lookup: ipv6, configuration: configuration)
        )
    }

    /// What the rule needs for one destination: the lookup, and the output link's facts and
    /// addresses from `table` when the lookup names a link.
    static func destinationFacts(in table: LinkTable, family: AddressFamily, lookup: RouteLookup, configuration: DaemonConfiguration) -> DestinationFacts {
        guard case .route(let route) = lookup, let index = route.outputInterfaceIndex else {
            return DestinationFacts(family: family, lookup: lookup)
        }
        return DestinationFacts(
            family: family,
            lookup: lookup,
            outputLink: table.facts(forLink: index, configuration: configuration),
            outputLinkAddresses: table.addresses(onLink: index)
        )
    }

    /// The kernel's answers to the two lookups for one destination, as the rule sees them.
    ///
    /// - Parameters:
    ///   - answer: the plain lookup's answer: the resolved next hop.
    ///   - matchedEntry: the `RTM_F_FIB_MATCH` lookup's answer (prefix and metric of the entry
    ///     that matched); asked only when `answer` is a route, ignored otherwise.
    ///   - family: the destination's netlink family (`AF_INET`, `AF_INET6`), for the gateway's text.
    static func routeLookup(answer: NetlinkQueryClient.RouteAnswer, matchedEntry: NetlinkQueryClient.RouteAnswer?, family: UInt8) -> RouteLookup {
        let route: RouteMessage
        switch answer {
        case .error(let code): return .failed(errno: code)
        case .route(let resolved): route = resolved
        }
        var matched: RouteMessage?
        if case .route(let entry) = matchedEntry { matched = entry }
        return .route(RouteFacts(
            type: routeType(route.type),
            outputInterfaceIndex: route.outputInterface,
            gateway: route.gateway.map { IPAddressBytes.format($0, family: family) },
            table: route.table,
            isLinkDown: route.flags & RouteFlag.linkDown != 0,
            matchedPrefix: matched.flatMap { entry in
                guard entry.destinationLength > 0, let prefix = entry.destination else { return nil }
                return "\(IPAddressBytes.format(prefix, family: family))/\(entry.destinationLength)"
            },
            metric: matched?.priority
        ))
    }

    private static func routeType(_ number: UInt8) -> RouteType {
        switch number {
        case RouteTypeNumber.unicast: .unicast
        case RouteTypeNumber.local: .local
        case RouteTypeNumber.unreachable: .unreachable
        case RouteTypeNumber.blackhole: .blackhole
        case RouteTypeNumber.prohibit: .prohibit
        case RouteTypeNumber.throw: .throw
        default: .other(number)
        }
    }
}
