// How this host reaches IPv4 destinations: natively, through a CLAT (464XLAT, RFC 6877), only
// through NAT64 by an application that synthesizes the address (RFC 6052), or not at all.
//
// The rule, in order:
// 1. IPv4's probe has a route the rule calls reachable: `clat` when that route is a CLAT's,
//    else `native`.
// 2. Otherwise `nat64` when a NAT64 prefix is known and the probe's address embedded in it
//    (RFC 6052 §2.2) is reachable over IPv6: an IPv4 literal works once synthesized.
// 3. Otherwise `none`.
//
// A route is a CLAT's when the IPv4 source address the kernel selects for it is in 192.0.0.0/29,
// the range RFC 7335 reserves for 464XLAT's CLAT (clatd's default 192.0.0.1, Android's
// 192.0.0.4, NetworkManager's CLAT); or when it leaves through a tun device (clatd's, tayga's)
// while a NAT64 prefix is known and no other link holds a usable global IPv4 address (a tun
// VPN carrying IPv4 needs an IPv4 uplink; a CLAT translates onto an IPv6-only one).

/// How IPv4 destinations are reached (`IPv4Access`), in the interface's words.
public enum IPv4Access: String, Sendable, CaseIterable, Hashable {
    /// No IPv4 route, and no NAT64.
    case none
    /// An IPv4 route that is not a CLAT's.
    case native
    /// The IPv4 route leaves through a CLAT, which translates onto IPv6.
    case clat
    /// No IPv4 route, but IPv4 addresses are reachable once synthesized with the NAT64 prefix.
    case nat64
}

/// What ``IPv4AccessRule/decide(_:)`` decides from.
public struct IPv4AccessFacts: Sendable, Hashable {
    /// IPv4's probe has a route the rule calls reachable.
    public var isIPv4Reachable: Bool
    /// The source address the kernel selects for IPv4's probe, when it selects one.
    public var ipv4Source: IPAddress?
    /// IPv4's route leaves through a tun device (`IFLA_INFO_KIND` "tun").
    public var isIPv4RouteOverTun: Bool
    /// A link other than the one of IPv4's route holds a usable global IPv4 address.
    public var hasGlobalIPv4ElsewhereThanTheRoute: Bool
    /// A NAT64 prefix is known.
    public var isNAT64PrefixKnown: Bool
    /// IPv4's probe, synthesized with the NAT64 prefix, is reachable over IPv6.
    public var isSynthesizedProbeReachable: Bool

    /// Creates the facts.
    public init(
        isIPv4Reachable: Bool, ipv4Source: IPAddress? = nil, isIPv4RouteOverTun: Bool = false, hasGlobalIPv4ElsewhereThanTheRoute: Bool = false,
        isNAT64PrefixKnown: Bool = false, isSynthesizedProbeReachable: Bool = false
    ) {
        self.isIPv4Reachable = isIPv4Reachable
        self.ipv4Source = ipv4Source
        self.isIPv4RouteOverTun = isIPv4RouteOverTun
        self.hasGlobalIPv4ElsewhereThanTheRoute = hasGlobalIPv4ElsewhereThanTheRoute
        self.isNAT64PrefixKnown = isNAT64PrefixKnown
        self.isSynthesizedProbeReachable = isSynthesizedProbeReachable
    }
}

/// The rule at the top of this file.
public enum IPv4AccessRule {
    /// How IPv4 destinations are reached.
    public static func decide(_ facts: IPv4AccessFacts) -> IPv4Access {
        if facts.isIPv4Reachable { return isCLAT(facts) ? .clat : .native }
        return facts.isNAT64PrefixKnown && facts.isSynthesizedProbeReachable ? .nat64 : .none
    }

    /// Whether `address` is in RFC 7335's IPv4 Service Continuity Prefix, 192.0.0.0/29: the
    /// addresses a CLAT gives itself.
    public static func isCLATAddress(_ address: IPAddress) -> Bool {
        address.family == .ipv4 && address.bytes[0...2] == [192, 0, 0] && address.bytes[3] < 8
    }

    /// Whether IPv4's route is a CLAT's (the rule's last paragraph).
    public static func isCLAT(_ facts: IPv4AccessFacts) -> Bool {
        if let source = facts.ipv4Source, isCLATAddress(source) { return true }
        return facts.isIPv4RouteOverTun && facts.isNAT64PrefixKnown && !facts.hasGlobalIPv4ElsewhereThanTheRoute
    }
}

/// RFC 6052 §2.2: an IPv4 address embedded in a NAT64 prefix.
public enum NAT64Synthesis {
    /// The prefix lengths RFC 6052 allows.
    public static let prefixLengths: Set<Int> = [32, 40, 48, 56, 64, 96]

    /// The IPv6 address that reaches `ipv4` through the NAT64 of the prefix whose network is
    /// `prefix` (16 bytes) and whose length is `length`: the prefix, then the IPv4 address's
    /// bytes, skipping bits 64 to 71 (the "u" octet, zero), then zeros. Nil for another length or
    /// an address of the wrong family.
    public static func address(embedding ipv4: IPAddress, in prefix: IPAddress, length: Int) -> IPAddress? {
        guard prefixLengths.contains(length), ipv4.family == .ipv4, prefix.family == .ipv6 else { return nil }
        var bytes = Array(prefix.bytes.prefix(length / 8)) + [UInt8](repeating: 0, count: 16 - length / 8)
        var position = length / 8
        for byte in ipv4.bytes {
            if position == 8 { position += 1 }
            bytes[position] = byte
            position += 1
        }
        return IPAddress(family: .ipv6, bytes: bytes)
    }
}

extension ReachabilitySnapshot {
    /// The snapshot as an application sees it through a CLAT: with ``ipv4Access`` `clat` and
    /// IPv4 reachable, IPv4's traffic leaves translated on `uplink` (the link of IPv6's route),
    /// so `Status`, `Interface`, `Transport` and `Metered` (the status's family is IPv4's) and
    /// IPv4's interface and transport describe the uplink, not the CLAT's tun; `Reason` ends in
    /// "via CLAT" (and the link it translates onto). Otherwise the snapshot unchanged.
    ///
    /// - Parameter uplink: the link of IPv6's route, nil when IPv6 has none.
    public func describingCLAT(uplink: LinkFacts?) -> ReachabilitySnapshot {
        guard ipv4Access == .clat, isIPv4Reachable else { return self }
        var described = self
        guard let uplink, uplink.name != ipv4Interface else {
            described.reason += "; via CLAT"
            return described
        }
        described.reason += "; via CLAT on \(ipv4Interface) onto \(uplink.name) (\(uplink.effectiveTransport.rawValue))"
        described.status = ReachabilityStatus(reachableVia: uplink.effectiveTransport)
        described.interface = uplink.name
        described.transport = uplink.transport
        described.isMetered = uplink.isMetered
        described.ipv4Interface = uplink.name
        described.ipv4Transport = uplink.transport
        return described
    }
}
