#if canImport(Glibc)
import Glibc
#endif
import NetworkTypes

/// Where the kernel's family numbers stop: netlink's one-byte family field and the
/// ``AddressFamily`` the layers above speak.
extension AddressFamily {
    /// The family netlink's one-byte family field names (`AF_INET`, `AF_INET6`); nil for other
    /// families (bridge, MPLS...).
    public init?(netlinkFamily: UInt8) {
        switch netlinkFamily {
        case IPAddressBytes.ipv4Family: self = .ipv4
        case IPAddressBytes.ipv6Family: self = .ipv6
        default: return nil
        }
    }

    /// `AF_INET` or `AF_INET6` as netlink's one-byte family field.
    public var netlinkFamily: UInt8 { self == .ipv4 ? IPAddressBytes.ipv4Family : IPAddressBytes.ipv6Family }
}

extension AddressMessage {
    /// The address's family; nil for a family other than IPv4 and IPv6.
    public var addressFamily: AddressFamily? { AddressFamily(netlinkFamily: family) }
}

extension RouteMessage {
    /// The route's family; nil for a family other than IPv4 and IPv6.
    public var addressFamily: AddressFamily? { AddressFamily(netlinkFamily: family) }
}

extension NeighbourMessage {
    /// The entry's family; nil for a family other than IPv4 and IPv6 (a bridge's entries).
    public var addressFamily: AddressFamily? { AddressFamily(netlinkFamily: family) }
}
