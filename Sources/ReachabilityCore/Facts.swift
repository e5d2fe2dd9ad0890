/// What the rule needs to know about one network link, already classified.
public struct LinkFacts: Sendable, Hashable {
    /// The kernel's interface index.
    public var index: InterfaceIndex
    /// The interface name, e.g. "eth0".
    public var name: String
    /// Administratively up (`IFF_UP`).
    public var isUp: Bool
    /// Has carrier (`IFF_LOWER_UP`).
    public var hasCarrier: Bool
    /// A loopback device (`IFF_LOOPBACK` or `ARPHRD_LOOPBACK`).
    public var isLoopback: Bool
    /// The link's medium.
    public var transport: Transport
    /// Why the link has that transport ("DEVTYPE=wlan").
    public var transportReason: String
    /// Why the link is ignored (configuration or a container interface), nil when it is not.
    public var ignoreReason: String?
    /// For a tunnel or a CLAT's tun: the physical link beneath it and that link's transport, when known.
    public var underlying: UnderlyingLink?
    /// Whether traffic over the link is metered.
    public var isMetered: Bool
    /// Which step of ``MeteredRule`` decided ``isMetered``.
    public var meteredReason: MeteredReason
    /// The address from RFC 7335's 192.0.0.0/29 the link holds: the link is a CLAT's
    /// (``CLATPath``); nil for any other link.
    public var clatAddress: IPAddress?
    /// The link's MTU in bytes; 0 when not known.
    public var mtu: UInt32

    /// Creates link facts; `metered` defaults to ``MeteredRule``'s verdict from the effective
    /// transport alone.
    public init(index: InterfaceIndex, name: String, isUp: Bool, hasCarrier: Bool, isLoopback: Bool = false, transport: Transport,
                transportReason: String = "", ignoreReason: String? = nil, underlying: UnderlyingLink? = nil,
                metered: MeteredVerdict? = nil, clatAddress: IPAddress? = nil, mtu: UInt32 = 0) {
        self.index = index
        self.name = name
        self.isUp = isUp
        self.hasCarrier = hasCarrier
        self.isLoopback = isLoopback
        self.transport = transport
        self.transportReason = transportReason
        self.ignoreReason = ignoreReason
        self.underlying = underlying
        let metered = metered ?? MeteredRule.decide(configured: nil, hints: .none, transport: underlying?.transport ?? transport)
        isMetered = metered.isMetered
        meteredReason = metered.reason
        self.clatAddress = clatAddress
        self.mtu = mtu
    }

    /// The medium traffic finally leaves on: the underlying link's for a tunnel, when known.
    public var effectiveTransport: Transport { underlying?.transport ?? transport }
}

/// The physical link beneath a tunnel.
public struct UnderlyingLink: Sendable, Hashable {
    /// Its name.
    public var name: String
    /// Its transport.
    public var transport: Transport

    /// Creates an underlying-link description.
    public init(name: String, transport: Transport) {
        self.name = name
        self.transport = transport
    }
}

/// What the rule needs to know about one address configured on a link.
package struct AddressFacts: Sendable, Hashable {
    /// The address's family.
    package var family: AddressFamily
    /// Global scope (`RT_SCOPE_UNIVERSE`), as opposed to link, host or site scope.
    package var isGlobalScope: Bool
    /// IPv6 duplicate address detection still running (`IFA_F_TENTATIVE`).
    package var isTentative: Bool
    /// IPv6 duplicate address detection failed (`IFA_F_DADFAILED`).
    package var isDuplicateAddressDetectionFailed: Bool
    /// IPv6 optimistic DAD (`IFA_F_OPTIMISTIC`, RFC 4429): usable while still tentative.
    package var isOptimistic: Bool

    /// Creates address facts.
    package init(family: AddressFamily, isGlobalScope: Bool, isTentative: Bool = false, isDuplicateAddressDetectionFailed: Bool = false, isOptimistic: Bool = false) {
        self.family = family
        self.isGlobalScope = isGlobalScope
        self.isTentative = isTentative
        self.isDuplicateAddressDetectionFailed = isDuplicateAddressDetectionFailed
        self.isOptimistic = isOptimistic
    }

    /// Usable as a source for global traffic: global scope and, for IPv6, DAD passed (or still
    /// running optimistically, which the kernel already uses as a source).
    package var isUsableGlobal: Bool { isGlobalScope && (!isTentative || isOptimistic) && !isDuplicateAddressDetectionFailed }
}

/// The route the kernel picked for a destination (the answer to `RTM_GETROUTE`).
public struct RouteFacts: Sendable, Hashable {
    /// The route type.
    public var type: RouteType
    /// The output interface index (`RTA_OIF`), if any.
    public var outputInterfaceIndex: InterfaceIndex?
    /// The gateway (`RTA_GATEWAY`), if any.
    public var gateway: IPAddress?
    /// The routing table the route came from (`RTA_TABLE`).
    public var table: RouteTable
    /// The kernel flagged the next hop `linkdown` (`RTNH_F_LINKDOWN`).
    public var isLinkDown: Bool
    /// The matched entry's destination prefix as text ("0.0.0.0/1"); nil for a default route
    /// or when unknown.
    public var matchedPrefix: String?
    /// The matched entry's metric (`RTA_PRIORITY`), when known.
    public var metric: UInt32?

    /// Creates route facts.
    public init(type: RouteType, outputInterfaceIndex: InterfaceIndex?, gateway: IPAddress? = nil, table: RouteTable = .main,
                isLinkDown: Bool = false, matchedPrefix: String? = nil, metric: UInt32? = nil) {
        self.type = type
        self.outputInterfaceIndex = outputInterfaceIndex
        self.gateway = gateway
        self.table = table
        self.isLinkDown = isLinkDown
        self.matchedPrefix = matchedPrefix
        self.metric = metric
    }
}

/// The outcome of asking the kernel for the route to a destination.
public enum RouteLookup: Sendable, Hashable {
    /// The kernel answered with a route.
    case route(RouteFacts)
    /// The kernel answered with an error, e.g. `ENETUNREACH` when there is no route.
    case failed(errno: Errno)
}

extension RouteLookup {
    /// The route's output link, nil without a route or without one link.
    public var outputInterfaceIndex: InterfaceIndex? {
        guard case .route(let route) = self else { return nil }
        return route.outputInterfaceIndex
    }
}

/// The source address the kernel selects for an application's connection to a destination.
public struct SourceAddress: Sendable, Hashable {
    /// The address, e.g. 192.0.2.10.
    public var address: IPAddress
    /// Its scope.
    public var scope: AddressScope
    /// The link it is configured on ("lo" for a /32 on the loopback), nil when unknown.
    public var linkName: String?
    /// Whether DAD lets the kernel use it (not tentative unless optimistic, not DAD-failed).
    public var isVerified: Bool
    /// Whether a link of this host holds it. The kernel can select one no link holds: an IPv6
    /// route's `src` whose address was deleted from another link stays on the route, and
    /// `connect` takes it; replies to it cannot arrive.
    public var isHeld: Bool

    /// Creates a source address description.
    public init(address: IPAddress, scope: AddressScope, linkName: String? = nil, isVerified: Bool = true, isHeld: Bool = true) {
        self.address = address
        self.scope = scope
        self.linkName = linkName
        self.isVerified = isVerified
        self.isHeld = isHeld
    }

    /// A global address the kernel can send from.
    public var isUsableGlobal: Bool { scope == .global && isVerified }

    /// Whether the kernel can send from it to a destination of `destinationScope`: a global
    /// destination needs a global source; a link-local one also takes a link-local source.
    public func isUsable(toward destinationScope: AddressScope) -> Bool {
        isUsableGlobal || (destinationScope == .link && scope == .link && isVerified)
    }
}

/// The outcome of asking the kernel which source address a connection would get.
public enum SourceSelection: Sendable, Hashable {
    /// The kernel selected this address (possibly one that is not usable: `0.0.0.0`, `::1`).
    case selected(SourceAddress)
    /// The kernel refused the connection with this error: `EADDRNOTAVAIL` when IPv6 has no
    /// source address, or the route's own error.
    case failed(errno: Errno)
}

/// Why the rule is asked about a destination, which decides what a route to this host means.
public enum DestinationPurpose: Sendable, Hashable {
    /// One of the daemon's own probe destinations, standing for the Internet: a route that
    /// delivers it to this host (`local default dev lo`, as transparent proxies set up) does
    /// not reach the Internet.
    case internetProbe
    /// An address a caller asks about (`CheckAddress`): a route that delivers it to this host
    /// (127.0.0.1, ::1, the host's own addresses) is one its connections take, over loopback.
    case callerAddress
}

/// Everything the rule looks at for one destination of one family.
public struct DestinationFacts: Sendable, Hashable {
    /// The destination's family.
    public var family: AddressFamily
    /// The kernel's route lookup for the destination (for the source the kernel selected).
    public var lookup: RouteLookup
    /// The route's output link, if the lookup named one the daemon knows.
    public var outputLink: LinkFacts?
    /// The source address an application's connection to the destination gets.
    public var source: SourceSelection
    /// The destination's scope: link for a link-local destination (`CheckAddress("fe80::1%eth1")`),
    /// which a link-local source reaches; global for the probes.
    public var destinationScope: AddressScope
    /// Whether the destination is a probe of the daemon's or an address a caller asked about.
    public var purpose: DestinationPurpose

    /// Creates destination facts.
    public init(
        family: AddressFamily, lookup: RouteLookup, outputLink: LinkFacts? = nil, source: SourceSelection,
        destinationScope: AddressScope = .global, purpose: DestinationPurpose = .internetProbe
    ) {
        self.family = family
        self.lookup = lookup
        self.outputLink = outputLink
        self.source = source
        self.destinationScope = destinationScope
        self.purpose = purpose
    }
}
