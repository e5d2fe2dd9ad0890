#if canImport(Glibc)
import Glibc
#endif
import NetworkTypes

/// Where the kernel's numbers stop: netlink's one-byte family field and address bytes become
/// the ``AddressFamily`` and ``IPAddress`` values the layers above speak.
extension AddressFamily {
    /// The family netlink's one-byte family field names (`AF_INET`, `AF_INET6`); nil for other
    /// families (bridge, MPLS...).
    init?(netlinkFamily: UInt8) {
        switch netlinkFamily {
        case IPAddressBytes.ipv4Family: self = .ipv4
        case IPAddressBytes.ipv6Family: self = .ipv6
        default: return nil
        }
    }

    /// `AF_INET` or `AF_INET6` as netlink's one-byte family field.
    var netlinkFamily: UInt8 { self == .ipv4 ? IPAddressBytes.ipv4Family : IPAddressBytes.ipv6Family }
}

extension AddressMessage {
    /// The address's family; nil for a family other than IPv4 and IPv6.
    package var addressFamily: AddressFamily? { AddressFamily(netlinkFamily: family) }
}

extension RouteMessage {
    /// The route's family; nil for a family other than IPv4 and IPv6.
    package var addressFamily: AddressFamily? { AddressFamily(netlinkFamily: family) }
}

extension NeighbourMessage {
    /// The entry's family; nil for a family other than IPv4 and IPv6 (a bridge's entries).
    package var addressFamily: AddressFamily? { AddressFamily(netlinkFamily: family) }
}

extension AddressMessage {
    /// The address (``address``) as a value; nil without one or for another family.
    package var ipAddress: IPAddress? { addressFamily.flatMap { family in address.flatMap { IPAddress(family: family, bytes: $0) } } }
}

extension RouteMessage {
    /// The gateway (``gateway``) as a value; nil without one or for another family.
    package var gatewayAddress: IPAddress? { addressFamily.flatMap { family in gateway.flatMap { IPAddress(family: family, bytes: $0) } } }
    /// The preferred source (``preferredSource``) as a value; nil without one or for another family.
    package var preferredSourceAddress: IPAddress? {
        addressFamily.flatMap { family in preferredSource.flatMap { IPAddress(family: family, bytes: $0) } }
    }
    /// The destination prefix's address (``destination``) as a value; nil for a default route
    /// (no `RTA_DST`) or another family.
    package var destinationAddress: IPAddress? { addressFamily.flatMap { family in destination.flatMap { IPAddress(family: family, bytes: $0) } } }

    /// The prefix's network address (the destination with the bits past
    /// ``destinationLength`` cleared); nil for a default route or another family.
    package var network: IPAddress? {
        guard let destination, destinationLength > 0, let family = addressFamily else { return nil }
        return IPAddress(family: family, bytes: IPAddressBytes.masked(destination, length: destinationLength, width: family.addressLength))
    }

    /// Whether the route's prefix contains `address`: a default route contains every address,
    /// a prefix of the other family none.
    package func prefixContains(_ address: IPAddress) -> Bool {
        IPAddressBytes.prefix(destination, length: destinationLength, contains: address.bytes)
    }
}

extension NeighbourMessage {
    /// The neighbour's address (``destination``) as a value; nil without one or for another family.
    package var destinationAddress: IPAddress? { addressFamily.flatMap { family in destination.flatMap { IPAddress(family: family, bytes: $0) } } }
}
