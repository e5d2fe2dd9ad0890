import ReachabilityCore

/// Links, addresses and routes the rule tests are built from.
///
/// Every fixture is healthy on its own; a case spells out only the one fact it breaks.
enum Fixture {
    // MARK: Links

    static let eth0 = LinkFacts(index: 2, name: "eth0", isUp: true, hasCarrier: true, transport: .ethernet)
    static let wlan0 = LinkFacts(index: 3, name: "wlan0", isUp: true, hasCarrier: true, transport: .wifi)
    static let wwan0 = LinkFacts(index: 4, name: "wwan0", isUp: true, hasCarrier: true, transport: .wwan)
    static let wg0 = LinkFacts(index: 5, name: "wg0", isUp: true, hasCarrier: true, transport: .vpn)
    static let br0 = LinkFacts(index: 6, name: "br0", isUp: true, hasCarrier: true, transport: .other)
    static let lo = LinkFacts(index: 1, name: "lo", isUp: true, hasCarrier: true, isLoopback: true, transport: .other)

    /// `link` with some of its facts replaced.
    static func link(
        _ link: LinkFacts, index: Int32? = nil, isUp: Bool? = nil, hasCarrier: Bool? = nil
    ) -> LinkFacts {
        var link = link
        if let index { link.index = index }
        if let isUp { link.isUp = isUp }
        if let hasCarrier { link.hasCarrier = hasCarrier }
        return link
    }

    // MARK: Addresses

    static let globalIPv4 = AddressFacts(family: .ipv4, isGlobalScope: true)
    static let linkScopeIPv4 = AddressFacts(family: .ipv4, isGlobalScope: false)
    static let globalIPv6 = AddressFacts(family: .ipv6, isGlobalScope: true)
    static let linkScopeIPv6 = AddressFacts(family: .ipv6, isGlobalScope: false)
    static let tentativeIPv6 = AddressFacts(family: .ipv6, isGlobalScope: true, isTentative: true)
    static let dadFailedIPv6 = AddressFacts(family: .ipv6, isGlobalScope: true, isDuplicateAddressDetectionFailed: true)

    /// The usable global address of `family`.
    static func globalAddress(_ family: AddressFamily) -> AddressFacts {
        family == .ipv4 ? globalIPv4 : globalIPv6
    }

    /// The default gateway of `family`, as the kernel's lookup reports it.
    static func gateway(_ family: AddressFamily) -> String {
        family == .ipv4 ? "10.0.0.1" : "fe80::1"
    }

    // MARK: Destinations

    /// Facts for a destination of `family` whose lookup is a route out of `link` (unicast, main
    /// table, via the family's gateway unless told otherwise) and whose link has `addresses`.
    static func routed(
        _ family: AddressFamily,
        via link: LinkFacts,
        type: RouteType = .unicast,
        table: UInt32 = RouteFacts.mainTable,
        isLinkDown: Bool = false,
        addresses: [AddressFacts]? = nil
    ) -> DestinationFacts {
        let route = RouteFacts(
            type: type, outputInterfaceIndex: link.index, gateway: gateway(family), table: table, isLinkDown: isLinkDown
        )
        return DestinationFacts(
            family: family, lookup: .route(route), outputLink: link,
            outputLinkAddresses: addresses ?? [globalAddress(family)]
        )
    }

    /// Facts for a destination of `family` whose lookup the kernel answered with `code`.
    static func failed(_ family: AddressFamily, errno code: Int32) -> DestinationFacts {
        DestinationFacts(family: family, lookup: .failed(errno: code))
    }
}
