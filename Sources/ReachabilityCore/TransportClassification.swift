/// Raw facts about a link that decide its ``Transport``: from netlink and from sysfs.
public struct LinkClassificationFacts: Sendable, Hashable {
    /// The rtnetlink link kind (`IFLA_INFO_KIND`): "veth", "wireguard", "tun", "bridge"...
    public var kind: String?
    /// The hardware type (`ifi_type`, an `ARPHRD_*` value).
    public var hardwareType: UInt16
    /// `DEVTYPE=` from `/sys/class/net/IF/uevent`: "wlan", "wwan", "bridge", "vlan"...
    public var deviceType: String?
    /// `/sys/class/net/IF/wireless` or `/sys/class/net/IF/phy80211` exists.
    public var hasWirelessDirectory: Bool

    /// Creates classification facts.
    public init(kind: String? = nil, hardwareType: UInt16, deviceType: String? = nil, hasWirelessDirectory: Bool = false) {
        self.kind = kind
        self.hardwareType = hardwareType
        self.deviceType = deviceType
        self.hasWirelessDirectory = hasWirelessDirectory
    }
}

/// The `ARPHRD_*` hardware types the classification looks at (<linux/if_arp.h>).
public enum HardwareType {
    /// `ARPHRD_ETHER`.
    public static let ethernet: UInt16 = 1
    /// `ARPHRD_PPP`.
    public static let ppp: UInt16 = 512
    /// `ARPHRD_TUNNEL` (IP-in-IP).
    public static let ipip: UInt16 = 768
    /// `ARPHRD_TUNNEL6`.
    public static let ip6ip6: UInt16 = 769
    /// `ARPHRD_LOOPBACK`.
    public static let loopback: UInt16 = 772
    /// `ARPHRD_SIT`.
    public static let sit: UInt16 = 776
    /// `ARPHRD_IPGRE`.
    public static let gre: UInt16 = 778
    /// `ARPHRD_NONE` (tun, WireGuard).
    public static let none: UInt16 = 65534
}

/// Classifies a link's medium.
///
/// In order: WiFi when sysfs has `wireless`/`phy80211` or `DEVTYPE=wlan`; WWAN for
/// `DEVTYPE=wwan`; VPN for tunnel kinds (wireguard, tun, tap, ppp, ipip, sit, gre...) and tunnel
/// hardware types; Ethernet for `ARPHRD_ETHER` without a `DEVTYPE` (veth included); else other.
public enum TransportClassifier {
    /// Link kinds that are tunnels.
    public static let tunnelKinds: Set<String> = [
        "wireguard", "tun", "tap", "ppp", "ipip", "sit", "gre", "gretap", "ip6gre", "ip6gretap",
        "ip6tnl", "vti", "vti6", "openvpn",
    ]

    /// Tunnel hardware types.
    public static let tunnelHardwareTypes: Set<UInt16> = [
        HardwareType.ppp, HardwareType.ipip, HardwareType.ip6ip6, HardwareType.sit, HardwareType.gre,
    ]

    /// Returns the transport of a link described by `facts`.
    public static func classify(_ facts: LinkClassificationFacts) -> Transport {
        if facts.hasWirelessDirectory || facts.deviceType == "wlan" { return .wifi }
        if facts.deviceType == "wwan" { return .wwan }
        if let kind = facts.kind, tunnelKinds.contains(kind) { return .vpn }
        if tunnelHardwareTypes.contains(facts.hardwareType) { return .vpn }
        if facts.hardwareType == HardwareType.ethernet && facts.deviceType == nil { return .ethernet }
        return .other
    }
}
