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
    static let ppp0 = LinkFacts(index: 7, name: "ppp0", isUp: true, hasCarrier: true, transport: .vpn)
    static let br0 = LinkFacts(index: 6, name: "br0", isUp: true, hasCarrier: true, transport: .other)
    static let lo = LinkFacts(index: 1, name: "lo", isUp: true, hasCarrier: true, isLoopback: true, transport: .other)

    /// `link` with some of its facts replaced.
    static func link(
        _ link: LinkFacts, index: InterfaceIndex? = nil, isUp: Bool? = nil, hasCarrier: Bool? = nil
    ) -> LinkFacts {
        var link = link
        if let index { link.index = index }
        if let isUp { link.isUp = isUp }
        if let hasCarrier { link.hasCarrier = hasCarrier }
        return link
    }

    // MARK: Source addresses

    static let globalIPv4 = SourceAddress(address: IPAddress("192.0.2.10")!, scope: .global, linkName: "eth0")
    static let globalIPv6 = SourceAddress(address: IPAddress("2001:db8::10")!, scope: .global, linkName: "eth0")
    static let noIPv4 = SourceAddress(address: IPAddress("0.0.0.0")!, scope: .unspecified)
    static let linkScopeIPv4 = SourceAddress(address: IPAddress("10.0.0.2")!, scope: .link, linkName: "eth0")
    static let linkLocalIPv6 = SourceAddress(address: IPAddress("fe80::2")!, scope: .link, linkName: "eth0")
    static let loopbackIPv4 = SourceAddress(address: IPAddress("127.0.0.1")!, scope: .host, linkName: "lo")
    static let loopbackIPv6 = SourceAddress(address: IPAddress("::1")!, scope: .host, linkName: "lo")
    static let tentativeIPv6 = SourceAddress(address: IPAddress("2001:db8::10")!, scope: .global, linkName: "eth0", isVerified: false)

    /// The usable global source address of `family`, on `link`.
    static func globalAddress(_ family: AddressFamily, on link: LinkFacts) -> SourceAddress {
        var address = family == .ipv4 ? globalIPv4 : globalIPv6
        address.linkName = link.name
        return address
    }

    /// The default gateway of `family`, as the kernel's lookup reports it.
    static func gateway(_ family: AddressFamily) -> IPAddress {
        IPAddress(family == .ipv4 ? "10.0.0.1" : "fe80::1")!
    }

    // MARK: Destinations

    /// Facts for a destination of `family` whose lookup is a route out of `link` (unicast, main
    /// table, via the family's gateway unless told otherwise) and whose connection gets `source`
    /// (the family's global address on `link` unless told otherwise).
    static func routed(
        _ family: AddressFamily,
        via link: LinkFacts,
        type: RouteType = .unicast,
        table: RouteTable = .main,
        isLinkDown: Bool = false,
        source: SourceSelection? = nil
    ) -> DestinationFacts {
        let route = RouteFacts(
            type: type, outputInterfaceIndex: link.index, gateway: gateway(family), table: table, isLinkDown: isLinkDown
        )
        return DestinationFacts(family: family, lookup: .route(route), outputLink: link, source: source ?? .selected(globalAddress(family, on: link)))
    }

    /// Facts for an address of this host of `family` (127.0.0.1 or ::1 unless `source` says
    /// otherwise), as the kernel answers for it: a `local` route in table local out of `link`
    /// (`local 127.0.0.1 dev lo`), the address itself as the source; asked about for `purpose`.
    static func thisHost(
        _ family: AddressFamily, via link: LinkFacts = lo, source: SourceAddress? = nil, purpose: DestinationPurpose = .callerAddress
    ) -> DestinationFacts {
        let route = RouteFacts(type: .local, outputInterfaceIndex: link.index, table: 255)
        let address = source ?? (family == .ipv4 ? loopbackIPv4 : loopbackIPv6)
        return DestinationFacts(family: family, lookup: .route(route), outputLink: link, source: .selected(address), purpose: purpose)
    }

    /// `facts` for a destination of `scope` (a link-local one: `fe80::1%eth0`).
    static func toward(_ scope: AddressScope, _ facts: DestinationFacts) -> DestinationFacts {
        var facts = facts
        facts.destinationScope = scope
        return facts
    }

    /// Facts for a destination of `family` whose lookup the kernel answered with `code` (and
    /// whose `connect` failed with it).
    static func failed(_ family: AddressFamily, errno code: Int32) -> DestinationFacts {
        DestinationFacts(family: family, lookup: .failed(errno: Errno(code)), source: .failed(errno: Errno(code)))
    }
}
