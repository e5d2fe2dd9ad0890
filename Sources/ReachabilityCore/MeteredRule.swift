// Whether traffic over a link is metered, decided as NetworkManager decides it
// (`nm_device_update_metered`): the configuration's `Metered=` first; then what NetworkManager
// itself says of the device where it manages the link (its own rule: the connection's
// `connection.metered`, else its guess from the device type and DHCP's ANDROID_METERED); then
// DHCP's ANDROID_METERED vendor option where networkd holds the lease; then the link's type.
// `MeteredReason` names the step that decided.

/// Which step of ``MeteredRule`` decided `Metered`, in the words of the `MeteredReason` property.
public enum MeteredReason: String, Sendable, CaseIterable, Hashable {
    /// A `Metered=` line of the configuration (an interface glob or a transport).
    case configuration
    /// NetworkManager's own `Metered` of the device (`org.freedesktop.NetworkManager.Device.Metered`).
    case networkManager = "networkmanager"
    /// DHCPv4's vendor-specific option (43) of the link's lease holds `ANDROID_METERED`, what
    /// Android's hotspots send.
    case dhcp
    /// The link's type: WWAN is metered, any other is not.
    case transport
    /// No route: nothing to decide about.
    case noRoute = ""
}

/// NetworkManager's `NMMetered`: the values of a device's `Metered` property (`u`).
public enum NetworkManagerMetered: UInt32, Sendable, CaseIterable, Hashable {
    /// `NM_METERED_UNKNOWN`: NetworkManager does not know (a device it does not manage says this).
    case unknown = 0
    /// `NM_METERED_YES`: the connection is set metered.
    case yes = 1
    /// `NM_METERED_NO`: the connection is set unmetered.
    case no = 2
    /// `NM_METERED_GUESS_YES`: NetworkManager guesses metered (a modem, ANDROID_METERED).
    case guessYes = 3
    /// `NM_METERED_GUESS_NO`: NetworkManager guesses unmetered.
    case guessNo = 4

    /// Whether the value says metered; nil for ``unknown``, which says nothing.
    public var isMetered: Bool? {
        switch self {
        case .unknown: nil
        case .yes, .guessYes: true
        case .no, .guessNo: false
        }
    }
}

/// What the daemon learnt about a link's meteredness from outside the kernel: NetworkManager's
/// device and networkd's DHCP lease. Both absent when neither manages the link.
package struct MeteredHints: Sendable, Hashable {
    /// NetworkManager's `Metered` of the device that is the link; nil when NetworkManager has
    /// no such device (or does not run).
    package var networkManager: NetworkManagerMetered?
    /// Whether the link's DHCPv4 lease (networkd's) carries ANDROID_METERED in option 43; false
    /// without a lease.
    package var isDHCPAndroidMetered: Bool

    /// Creates hints; the defaults say nothing.
    package init(networkManager: NetworkManagerMetered? = nil, isDHCPAndroidMetered: Bool = false) {
        self.networkManager = networkManager
        self.isDHCPAndroidMetered = isDHCPAndroidMetered
    }

    /// Hints that say nothing.
    package static let none = MeteredHints()
}

/// Whether a link is metered, and why.
public struct MeteredVerdict: Sendable, Hashable {
    /// Whether traffic over the link is metered.
    public var isMetered: Bool
    /// Which step decided.
    public var reason: MeteredReason

    /// Creates a verdict.
    public init(isMetered: Bool, reason: MeteredReason) {
        self.isMetered = isMetered
        self.reason = reason
    }
}

/// The rule of `Metered` and `MeteredReason` for one link, first answer wins:
///
/// 1. `configuration`: a `Metered=` line matches the link (its name, else its transport);
/// 2. `networkmanager`: NetworkManager manages the link and its `Metered` is not unknown
///    (yes and guess-yes are metered, no and guess-no are not);
/// 3. `dhcp`: the link's DHCPv4 lease carries ANDROID_METERED: metered (its absence says nothing);
/// 4. `transport`: metered when the medium traffic leaves on is WWAN.
package enum MeteredRule {
    /// The verdict for a link.
    ///
    /// - Parameters:
    ///   - configured: what a `Metered=` line says of the link (``DaemonConfiguration/meteredSetting(interface:transport:)``), nil when none matches.
    ///   - hints: what NetworkManager and networkd say of it.
    ///   - transport: the medium traffic leaves on (a tunnel's underlying link's, when known).
    package static func decide(configured: Bool?, hints: MeteredHints, transport: Transport) -> MeteredVerdict {
        if let configured { return MeteredVerdict(isMetered: configured, reason: .configuration) }
        if let metered = hints.networkManager?.isMetered { return MeteredVerdict(isMetered: metered, reason: .networkManager) }
        if hints.isDHCPAndroidMetered { return MeteredVerdict(isMetered: true, reason: .dhcp) }
        return MeteredVerdict(isMetered: transport.isMeteredByDefault, reason: .transport)
    }
}

/// systemd-networkd's DHCPv4 lease file (`/run/systemd/netif/leases/IFINDEX`): `KEY=value` lines
/// (networkd's `dhcp_lease_save`), the vendor-specific option 43 as `VENDOR_SPECIFIC=` followed by
/// its bytes in hexadecimal.
package enum NetworkdLease {
    /// What Android's hotspots put in option 43 to say the network is metered (NetworkManager and
    /// Android look for it anywhere in the option's bytes).
    package static let androidMetered = Array("ANDROID_METERED".utf8)

    /// Whether the lease file's text carries ANDROID_METERED in its vendor-specific option; false
    /// without the option or when its value is no hexadecimal.
    package static func isAndroidMetered(leaseFile text: String) -> Bool {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("VENDOR_SPECIFIC=") {
            guard let bytes = bytes(hex: line.dropFirst("VENDOR_SPECIFIC=".count)) else { return false }
            return contains(bytes, androidMetered)
        }
        return false
    }

    /// The bytes of an even-length hexadecimal string, nil when it is not one.
    private static func bytes(hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for pair in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[pair]), let low = nibble(digits[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in bytes[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
