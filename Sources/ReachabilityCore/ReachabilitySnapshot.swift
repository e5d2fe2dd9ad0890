/// Everything the daemon publishes about the machine's reachability, at one moment.
public struct ReachabilitySnapshot: Sendable, Hashable {
    /// The status.
    public var status: ReachabilityStatus
    /// IPv4 global destinations are reachable.
    public var isIPv4Reachable: Bool
    /// IPv6 global destinations are reachable.
    public var isIPv6Reachable: Bool
    /// The interface carrying the chosen route, "" when none.
    public var interface: String
    /// The transport of that interface, nil when none.
    public var transport: Transport?
    /// Traffic is metered (``MeteredRule``: the configuration, NetworkManager, DHCP's
    /// ANDROID_METERED, WWAN).
    public var isMetered: Bool
    /// Which step of ``MeteredRule`` decided ``isMetered`` for ``interface``; `noRoute` ("") without one.
    public var meteredReason = MeteredReason.noRoute
    /// One human sentence explaining the status.
    public var reason: String
    /// What evidence beyond the route says of IPv4 (`limited`, `portal`, `full`); nil when
    /// there is none, and ignored while IPv4 has no route.
    public var ipv4Evidence: Connectivity?
    /// The same for IPv6.
    public var ipv6Evidence: Connectivity?
    /// The captive portal's user-facing URL when one is known, else "".
    public var captivePortal: String
    /// The interface carrying IPv4's route, "" when IPv4 is not reachable. ``interface`` is
    /// this one or ``ipv6Interface``: the link of the family the status names.
    public var ipv4Interface: String
    /// The interface carrying IPv6's route, "" when IPv6 is not reachable.
    public var ipv6Interface: String
    /// The transport of ``ipv4Interface`` (as ``transport`` is of ``interface``), nil when none.
    public var ipv4Transport: Transport?
    /// The transport of ``ipv6Interface``, nil when none.
    public var ipv6Transport: Transport?
    /// Every link but loopback, in index order (the `Interfaces` property); empty before the
    /// first evaluation and for one destination's snapshot.
    public var interfaces: [NetworkInterface]
    /// Whether names will resolve (``DNSRule``); `unknown` until the nameservers are known.
    public var dns: DNSReadiness = .unknown
    /// The NAT64 prefix in use (RFC 6052 form, "64:ff9b::/96"), "" when none is known.
    public var nat64Prefix = ""
    /// How IPv4 destinations are reached (``IPv4AccessRule``).
    public var ipv4Access = IPv4Access.none
    /// The opaque id of the network ``interface``'s route leads into (``NetworkIdentity``),
    /// "" without a route or when its gateway's link-layer address is not known.
    public var networkID = ""
    /// The session the network's captive-portal API (RFC 8908) describes, `seconds-remaining`
    /// counted down since it was read (``CaptivePortalSessionReading``); empty when no API
    /// answered with one.
    public var captivePortalSession = CaptivePortalSession()
    /// For one destination's snapshot: how a connection gets to the address the status is
    /// about (`CheckDestination`'s `via`); nil for the machine's, and when the daemon has no
    /// `CheckDestination` (an older one). Not a property.
    public var destinationPath: DestinationPath?
    /// For one destination's snapshot: where to connect (`CheckDestination`'s `address`: the
    /// synthesized IPv6 address through NAT64, else the address itself); "" when not known.
    /// Not a property.
    public var destinationAddress = ""

    /// Creates a snapshot; without per-family links, a reachable family's are `interface` and `transport`.
    public init(status: ReachabilityStatus, isIPv4Reachable: Bool, isIPv6Reachable: Bool, interface: String, transport: Transport?, isMetered: Bool, reason: String,
                ipv4Evidence: Connectivity? = nil, ipv6Evidence: Connectivity? = nil, captivePortal: String = "",
                ipv4Link: (interface: String, transport: Transport?)? = nil, ipv6Link: (interface: String, transport: Transport?)? = nil,
                interfaces: [NetworkInterface] = []) {
        self.status = status
        self.isIPv4Reachable = isIPv4Reachable
        self.isIPv6Reachable = isIPv6Reachable
        self.interface = interface
        self.transport = transport
        self.isMetered = isMetered
        self.reason = reason
        self.ipv4Evidence = ipv4Evidence
        self.ipv6Evidence = ipv6Evidence
        self.captivePortal = captivePortal
        let ipv4 = ipv4Link ?? (isIPv4Reachable ? (interface, transport) : ("", nil))
        let ipv6 = ipv6Link ?? (isIPv6Reachable ? (interface, transport) : ("", nil))
        ipv4Interface = ipv4.interface
        ipv4Transport = ipv4.transport
        ipv6Interface = ipv6.interface
        ipv6Transport = ipv6.transport
        self.interfaces = interfaces
    }

    /// Whether IPv4 traffic gets out: `none` without a route, else the evidence, else `unknown`.
    public var ipv4Connectivity: Connectivity { connectivity(isReachable: isIPv4Reachable, evidence: ipv4Evidence) }
    /// Whether IPv6 traffic gets out, likewise.
    public var ipv6Connectivity: Connectivity { connectivity(isReachable: isIPv6Reachable, evidence: ipv6Evidence) }

    /// The better of the two families' connectivity (full > portal > limited > unknown > none).
    public var connectivity: Connectivity {
        ipv4Connectivity.rank >= ipv6Connectivity.rank ? ipv4Connectivity : ipv6Connectivity
    }

    private func connectivity(isReachable: Bool, evidence: Connectivity?) -> Connectivity {
        guard status != .unknown else { return .unknown }
        guard isReachable else { return .none }
        return evidence ?? .unknown
    }

    /// The state before the first evaluation.
    public static let unknown = ReachabilitySnapshot(
        status: .unknown, isIPv4Reachable: false, isIPv6Reachable: false,
        interface: "", transport: nil, isMetered: false, reason: "not evaluated yet"
    )

    /// Either family is reachable.
    public var isReachable: Bool { status.isReachable }
}
