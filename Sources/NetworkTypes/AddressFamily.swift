/// An IP address family: IPv4 or IPv6 (the kernel's `AF_INET`/`AF_INET6` numbers are
/// RTNetlink's business, see its `AddressFamily(netlinkFamily:)`).
public enum AddressFamily: String, Sendable, CaseIterable, Hashable {
    /// IPv4.
    case ipv4
    /// IPv6.
    case ipv6

    /// "IPv4" or "IPv6", for human sentences.
    public var displayName: String { self == .ipv4 ? "IPv4" : "IPv6" }
}

/// The scope of an address, as the kernel's source selection and the rule judge it.
public enum AddressScope: Sendable, Hashable {
    /// Usable for traffic beyond the local networks.
    case global
    /// IPv4 `scope link` (or 169.254/16), IPv6 link-local (`fe80::/10`).
    case link
    /// This host only: IPv4 `scope host` or 127/8, IPv6 `::1`.
    case host
    /// No address at all (`0.0.0.0`, `::`): the kernel found none to use.
    case unspecified
}
