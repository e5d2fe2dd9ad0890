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
// A route is a CLAT's when its output link holds an address from RFC 7335's 192.0.0.0/29
// (``CLATPath``: known, not guessed; a tun with another address is a VPN).

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
    /// IPv4's route leaves through a CLAT (``CLATPath``).
    public var isIPv4RouteThroughCLAT: Bool
    /// A NAT64 prefix is known.
    public var isNAT64PrefixKnown: Bool
    /// IPv4's probe, synthesized with the NAT64 prefix, is reachable over IPv6.
    public var isSynthesizedProbeReachable: Bool

    /// Creates the facts.
    public init(isIPv4Reachable: Bool, isIPv4RouteThroughCLAT: Bool = false, isNAT64PrefixKnown: Bool = false, isSynthesizedProbeReachable: Bool = false) {
        self.isIPv4Reachable = isIPv4Reachable
        self.isIPv4RouteThroughCLAT = isIPv4RouteThroughCLAT
        self.isNAT64PrefixKnown = isNAT64PrefixKnown
        self.isSynthesizedProbeReachable = isSynthesizedProbeReachable
    }
}

/// The rule at the top of this file.
public enum IPv4AccessRule {
    /// How IPv4 destinations are reached.
    public static func decide(_ facts: IPv4AccessFacts) -> IPv4Access {
        if facts.isIPv4Reachable { return facts.isIPv4RouteThroughCLAT ? .clat : .native }
        return facts.isNAT64PrefixKnown && facts.isSynthesizedProbeReachable ? .nat64 : .none
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
        for (position, byte) in zip(ipv4BytePositions(length: length), ipv4.bytes) { bytes[position] = byte }
        return IPAddress(family: .ipv6, bytes: bytes)
    }

    /// The IPv4 address `ipv6` embeds behind a prefix of `length` (the reverse of
    /// ``address(embedding:in:length:)``, RFC 6052 §2.2); nil for another length or family.
    public static func ipv4(embeddedIn ipv6: IPAddress, length: Int) -> IPAddress? {
        guard prefixLengths.contains(length), ipv6.family == .ipv6 else { return nil }
        return IPAddress(family: .ipv4, bytes: ipv4BytePositions(length: length).map { ipv6.bytes[$0] })
    }

    /// Where the IPv4 address's four bytes sit behind a prefix of `length`: right after it,
    /// skipping byte 8 (bits 64 to 71, the "u" octet).
    private static func ipv4BytePositions(length: Int) -> [Int] {
        var positions: [Int] = []
        var position = length / 8
        while positions.count < 4 {
            if position != 8 { positions.append(position) }
            position += 1
        }
        return positions
    }
}
