/// The machine's (or one destination's) reachability, as published on D-Bus.
///
/// The raw values are the wire strings of the `Status` property and the `StatusChanged`
/// signal; daemon, client library and CLI all use this one table.
public enum ReachabilityStatus: String, Sendable, CaseIterable, Hashable {
    /// Not evaluated yet (only before the daemon's first evaluation, or with no daemon).
    case unknown = "unknown"
    /// No usable route to a global destination.
    case notReachable = "not-reachable"
    /// Reachable through a cellular (WWAN) link.
    case reachableViaWWAN = "reachable-via-wwan"
    /// Reachable through a WiFi link.
    case reachableViaWiFi = "reachable-via-wifi"
    /// Reachable through an Ethernet link.
    case reachableViaEthernet = "reachable-via-ethernet"
    /// Reachable through another kind of link (a tunnel, a bridge, ...).
    case reachableViaOther = "reachable-via-other"

    /// Whether the status is one of the `reachable-via-*` values.
    public var isReachable: Bool {
        switch self {
        case .unknown, .notReachable: false
        case .reachableViaWWAN, .reachableViaWiFi, .reachableViaEthernet, .reachableViaOther: true
        }
    }

    /// The reachable status for traffic leaving on `transport`. A VPN whose underlying link is
    /// unknown reports `reachable-via-other`.
    public init(reachableVia transport: Transport) {
        switch transport {
        case .wifi: self = .reachableViaWiFi
        case .wwan: self = .reachableViaWWAN
        case .ethernet: self = .reachableViaEthernet
        case .vpn, .other: self = .reachableViaOther
        }
    }
}

/// The medium of a network link, as published in the `Transport` property.
public enum Transport: String, Sendable, CaseIterable, Hashable {
    /// IEEE 802.11.
    case wifi
    /// Cellular modems.
    case wwan
    /// Ethernet, including virtual Ethernet (veth).
    case ethernet
    /// Tunnels: WireGuard, tun/tap, PPP, IP-in-IP, SIT, GRE.
    case vpn
    /// Anything else.
    case other

    /// Whether traffic over this transport is metered by default (cellular).
    package var isMeteredByDefault: Bool { self == .wwan }
}

