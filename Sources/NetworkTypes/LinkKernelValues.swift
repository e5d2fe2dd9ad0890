/// A link's hardware type (`ifi_type`, an `ARPHRD_*` value of <linux/if_arp.h>), as netlink
/// reports it and classification reads it. CNetlinkShims' `_Static_assert`s check the named
/// values against the kernel's headers.
public struct HardwareType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The kernel's number.
    public let rawValue: UInt16

    /// The hardware type the kernel numbers `rawValue`.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The number, as `ip -d link` and the classification's reasons show it.
    public var description: String { String(rawValue) }

    /// `ARPHRD_ETHER`.
    public static let ethernet = HardwareType(rawValue: 1)
    /// `ARPHRD_PPP`.
    public static let ppp = HardwareType(rawValue: 512)
    /// `ARPHRD_RAWIP` (many WWAN modems).
    public static let rawIP = HardwareType(rawValue: 519)
    /// `ARPHRD_TUNNEL` (IP-in-IP).
    public static let ipip = HardwareType(rawValue: 768)
    /// `ARPHRD_TUNNEL6`.
    public static let ip6ip6 = HardwareType(rawValue: 769)
    /// `ARPHRD_LOOPBACK`.
    public static let loopback = HardwareType(rawValue: 772)
    /// `ARPHRD_SIT`.
    public static let sit = HardwareType(rawValue: 776)
    /// `ARPHRD_IPGRE`.
    public static let gre = HardwareType(rawValue: 778)
    /// `ARPHRD_IEEE80211`.
    public static let ieee80211 = HardwareType(rawValue: 801)
    /// `ARPHRD_IEEE80211_RADIOTAP`.
    public static let ieee80211Radiotap = HardwareType(rawValue: 803)
    /// `ARPHRD_NONE` (tun, WireGuard).
    public static let none = HardwareType(rawValue: 65534)
}

/// A link's device flags (`ifi_flags`, `IFF_*`): the ones the rule reads are named (and checked
/// against the kernel's headers like ``HardwareType``'s); the others are kept as the kernel sent them.
public struct LinkFlags: OptionSet, Sendable, Hashable {
    /// The kernel's bits.
    public let rawValue: UInt32

    /// Flags from the kernel's bits.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// `IFF_UP`: administratively up.
    public static let up = LinkFlags(rawValue: 0x1)
    /// `IFF_LOOPBACK`.
    public static let loopback = LinkFlags(rawValue: 0x8)
    /// `IFF_LOWER_UP`: the driver reports carrier.
    public static let lowerUp = LinkFlags(rawValue: 0x10000)
}
