import ReachabilityCore

/// How the engine reads the kernel.
public struct EngineConfiguration: Sendable {
    /// The sysfs mount point used to classify links ("/sys"; tests inject a fake tree).
    public var sysfsRoot: String
    /// The netlink receive buffer to request, in bytes.
    public var receiveBufferBytes: Int32
    /// Whether ``ReachabilityEngine/start(onChange:)`` returns before the default routes (the
    /// `Interfaces` gateways) are read: they are read when
    /// ``ReachabilityEngine/readDeferredDefaultRoutes()`` asks (the daemon: once `READY=1` is
    /// sent), a second after start at the latest, and a changed `Interfaces` is published then.
    /// Their dump reads every route, so with a large table the first status, the bus name's
    /// reply and `READY=1` come that much sooner; false: the first snapshot has them.
    public var readsDefaultRoutesAfterStart: Bool
    /// The machine's key of ``NetworkIdentity`` (`MachineNetworkKey`); empty: `NetworkID` is "".
    public var networkIDKey: [UInt8]

    /// The global IPv4 destination whose route decides IPv4 reachability. Only the kernel's
    /// route lookup is done for it; no packet is ever sent.
    public static let ipv4ProbeDestination = "8.8.8.8"
    /// The global IPv6 destination whose route decides IPv6 reachability.
    public static let ipv6ProbeDestination = "2001:4860:4860::8888"

    /// Creates a configuration; the defaults are the production values.
    public init(
        sysfsRoot: String = "/sys", receiveBufferBytes: Int32 = 8 * 1024 * 1024, readsDefaultRoutesAfterStart: Bool = false, networkIDKey: [UInt8] = []
    ) {
        self.sysfsRoot = sysfsRoot
        self.receiveBufferBytes = receiveBufferBytes
        self.readsDefaultRoutesAfterStart = readsDefaultRoutesAfterStart
        self.networkIDKey = networkIDKey
    }
}

/// A destination that is not a literal IPv4 or IPv6 address.
public struct InvalidAddressError: Error, Sendable, CustomStringConvertible {
    /// The rejected text.
    public var address: String

    /// "'foo' is not a literal IPv4 or IPv6 address"; long input is cut (the length is given),
    /// so a hostile caller cannot make the daemon echo megabytes.
    public var description: String {
        let shown = address.unicodeScalars.count > 64 ? String(address.unicodeScalars.prefix(64)) + "…' (\(address.utf8.count) bytes)" : address + "'"
        return "'\(shown) is not a literal IPv4 or IPv6 address"
    }
}

/// The probe destinations, as addresses.
enum Probes {
    /// The IPv4 probe (``EngineConfiguration/ipv4ProbeDestination``).
    static let ipv4 = IPAddress(EngineConfiguration.ipv4ProbeDestination)!
    /// The IPv6 probe (``EngineConfiguration/ipv6ProbeDestination``).
    static let ipv6 = IPAddress(EngineConfiguration.ipv6ProbeDestination)!
    /// Both, IPv4 first.
    static let all = [ipv4, ipv6]

    /// The probe of `family`.
    static func address(of family: AddressFamily) -> IPAddress {
        family == .ipv4 ? ipv4 : ipv6
    }
}
