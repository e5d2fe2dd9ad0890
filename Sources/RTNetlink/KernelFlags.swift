import CNetlinkShims

/// Interface flags (`ifi_flags`) the rule reads.
public enum LinkFlag {
    /// `IFF_UP`: administratively up.
    public static let up = CReach_IFF_UP
    /// `IFF_LOWER_UP`: the driver reports carrier.
    public static let lowerUp = CReach_IFF_LOWER_UP
    /// `IFF_LOOPBACK`.
    public static let loopback = CReach_IFF_LOOPBACK
    /// `ARPHRD_LOOPBACK`: the loopback device's hardware type (`ifi_type`).
    public static let loopbackHardwareType: UInt16 = 772
}

/// Address flags (`IFA_F_*`) the rule reads.
public enum AddressFlag {
    /// `IFA_F_TENTATIVE`: IPv6 duplicate address detection still running.
    public static let tentative = UInt32(IFA_F_TENTATIVE)
    /// `IFA_F_OPTIMISTIC`: optimistic DAD; the address is usable while tentative.
    public static let optimistic = UInt32(IFA_F_OPTIMISTIC)
    /// `IFA_F_DADFAILED`: duplicate address detection failed.
    public static let duplicateAddressDetectionFailed = UInt32(IFA_F_DADFAILED)
}

/// Route types (`rtm_type`, `RTN_*`).
public enum RouteTypeNumber {
    /// `RTN_UNICAST`.
    public static let unicast = UInt8(RTN_UNICAST)
    /// `RTN_LOCAL`.
    public static let local = UInt8(RTN_LOCAL)
    /// `RTN_BLACKHOLE`.
    public static let blackhole = UInt8(RTN_BLACKHOLE)
    /// `RTN_UNREACHABLE`.
    public static let unreachable = UInt8(RTN_UNREACHABLE)
    /// `RTN_PROHIBIT`.
    public static let prohibit = UInt8(RTN_PROHIBIT)
    /// `RTN_THROW`.
    public static let `throw` = UInt8(RTN_THROW)
}

/// Route flags (`rtm_flags`).
public enum RouteFlag {
    /// `RTNH_F_LINKDOWN`: the next hop's link has no carrier.
    public static let linkDown = UInt32(RTNH_F_LINKDOWN)
}

/// Scopes (`RT_SCOPE_*`).
public enum Scope {
    /// `RT_SCOPE_UNIVERSE`: global.
    public static let universe = UInt8(RT_SCOPE_UNIVERSE.rawValue)
}

// The flag tests the layers above need, here where the kernel's numbers live.

extension LinkMessage {
    /// `IFF_UP`: administratively up.
    public var isUp: Bool { flags & LinkFlag.up != 0 }
    /// `IFF_LOWER_UP`: the driver reports carrier.
    public var hasCarrier: Bool { flags & LinkFlag.lowerUp != 0 }
    /// `IFF_LOOPBACK`, or the loopback hardware type.
    public var isLoopback: Bool { flags & LinkFlag.loopback != 0 || hardwareType == LinkFlag.loopbackHardwareType }
}

extension AddressMessage {
    /// Scope `RT_SCOPE_UNIVERSE`: global.
    public var isGlobalScope: Bool { scope == Scope.universe }
    /// `IFA_F_TENTATIVE`: IPv6 duplicate address detection still running.
    public var isTentative: Bool { flags & AddressFlag.tentative != 0 }
    /// `IFA_F_DADFAILED`: duplicate address detection failed.
    public var isDuplicateAddressDetectionFailed: Bool { flags & AddressFlag.duplicateAddressDetectionFailed != 0 }
    /// `IFA_F_OPTIMISTIC`: usable while tentative.
    public var isOptimistic: Bool { flags & AddressFlag.optimistic != 0 }
}

extension RouteMessage {
    /// `RTNH_F_LINKDOWN`: the next hop's link has no carrier.
    public var isLinkDown: Bool { flags & RouteFlag.linkDown != 0 }
}
