import CNetlinkShims

/// Address flags (`IFA_F_*`) the rule reads.
enum AddressFlag {
    /// `IFA_F_TENTATIVE`: IPv6 duplicate address detection still running.
    static let tentative = UInt32(IFA_F_TENTATIVE)
    /// `IFA_F_OPTIMISTIC`: optimistic DAD; the address is usable while tentative.
    static let optimistic = UInt32(IFA_F_OPTIMISTIC)
    /// `IFA_F_DADFAILED`: duplicate address detection failed.
    static let duplicateAddressDetectionFailed = UInt32(IFA_F_DADFAILED)
}

/// Route flags (`rtm_flags`).
enum RouteFlag {
    /// `RTNH_F_LINKDOWN`: the next hop's link has no carrier.
    static let linkDown = UInt32(RTNH_F_LINKDOWN)
}

/// Scopes (`RT_SCOPE_*`).
enum Scope {
    /// `RT_SCOPE_UNIVERSE`: global.
    static let universe = UInt8(RT_SCOPE_UNIVERSE.rawValue)
}

// The flag tests the layers above need, here where the kernel's numbers live.

extension LinkMessage {
    /// `IFF_UP`: administratively up.
    public var isUp: Bool { flags.contains(.up) }
    /// `IFF_LOWER_UP`: the driver reports carrier.
    public var hasCarrier: Bool { flags.contains(.lowerUp) }
    /// `IFF_LOOPBACK`, or the loopback hardware type.
    public var isLoopback: Bool { flags.contains(.loopback) || hardwareType == .loopback }
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

extension NetlinkHeader {
    /// `NLM_F_REPLACE` on a new object's notification: it replaced an existing one (`ip route
    /// replace`), whose deletion is not announced.
    public var isReplacement: Bool { flags & LinuxNetlink.replace != 0 }
}
