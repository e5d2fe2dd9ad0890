import CNetlinkShims

/// An address's flags (`IFA_F_*`), as ``LinkFlags`` are a link's: the ones the rule reads are
/// named; the others are kept as the kernel sent them.
struct AddressFlags: OptionSet, Sendable, Hashable {
    /// The kernel's bits.
    let rawValue: UInt32

    /// `IFA_F_TENTATIVE`: IPv6 duplicate address detection still running.
    static let tentative = AddressFlags(rawValue: UInt32(IFA_F_TENTATIVE))
    /// `IFA_F_OPTIMISTIC`: optimistic DAD; the address is usable while tentative.
    static let optimistic = AddressFlags(rawValue: UInt32(IFA_F_OPTIMISTIC))
    /// `IFA_F_DADFAILED`: duplicate address detection failed.
    static let duplicateAddressDetectionFailed = AddressFlags(rawValue: UInt32(IFA_F_DADFAILED))
}

/// A route's flags (`rtm_flags`: `RTM_F_*`, `RTNH_F_*`): the ones the rule reads are named; the
/// others are kept as the kernel sent them.
struct RouteFlags: OptionSet, Sendable, Hashable {
    /// The kernel's bits.
    let rawValue: UInt32

    /// `RTNH_F_LINKDOWN`: the next hop's link has no carrier.
    static let linkDown = RouteFlags(rawValue: UInt32(RTNH_F_LINKDOWN))
}

/// Scopes (`RT_SCOPE_*`).
enum Scope {
    /// `RT_SCOPE_UNIVERSE`: global.
    static let universe = UInt8(RT_SCOPE_UNIVERSE.rawValue)
}

// The flag tests the layers above need, here where the kernel's numbers live.

extension LinkMessage {
    /// `IFF_UP`: administratively up.
    package var isUp: Bool { flags.contains(.up) }
    /// `IFF_LOWER_UP`: the driver reports carrier.
    package var hasCarrier: Bool { flags.contains(.lowerUp) }
    /// `IFF_LOOPBACK`, or the loopback hardware type.
    package var isLoopback: Bool { flags.contains(.loopback) || hardwareType == .loopback }
}

extension AddressMessage {
    /// Scope `RT_SCOPE_UNIVERSE`: global.
    package var isGlobalScope: Bool { scope == Scope.universe }
    /// `IFA_F_TENTATIVE`: IPv6 duplicate address detection still running.
    package var isTentative: Bool { flags.contains(.tentative) }
    /// `IFA_F_DADFAILED`: duplicate address detection failed.
    package var isDuplicateAddressDetectionFailed: Bool { flags.contains(.duplicateAddressDetectionFailed) }
    /// `IFA_F_OPTIMISTIC`: usable while tentative.
    package var isOptimistic: Bool { flags.contains(.optimistic) }
}

extension RouteMessage {
    /// `RTNH_F_LINKDOWN`: the next hop's link has no carrier.
    package var isLinkDown: Bool { flags.contains(.linkDown) }
}

extension NetlinkHeader {
    /// `NLM_F_REPLACE` on a new object's notification: it replaced an existing one (`ip route
    /// replace`), whose deletion is not announced.
    package var isReplacement: Bool { flags.contains(.replace) }
}
