import RTNetlink
import ReachabilityCore

/// The destinations clients recently asked about with `CheckAddress`, whose route changes the
/// monitor socket's filter lets through so that `RoutesChanged` reaches those clients.
///
/// At most ``capacity`` addresses per family: asking about a new one when its family is full
/// forgets the least recently asked one. Asking again about a watched address makes it the most
/// recently asked without changing the set, so the filter is rebuilt only for a new address.
/// A caller asking about endless distinct addresses only churns the set: its size, and so the
/// filter's, never grows past the cap.
public struct WatchedDestinations: Sendable, Equatable {
    /// The cap per family in the daemon. The kernel charges a socket filter to the socket's
    /// option memory (`net.core.optmem_max`: 20 KiB by default before Linux 6.9, so on Debian
    /// 12), and while one program replaces another both are charged. Measured with 20 KiB:
    /// replacing failed (`ENOMEM`) from 41 watched destinations, half of each family; 16 per
    /// family leaves room (`BusFaultTests` runs the daemon with that setting).
    public static let defaultCapacity = 16

    /// The most addresses kept per family.
    public let capacity: Int
    /// IPv4 addresses (4 bytes each), least recently asked first.
    public private(set) var ipv4: [[UInt8]] = []
    /// IPv6 addresses (16 bytes each), least recently asked first.
    public private(set) var ipv6: [[UInt8]] = []

    /// An empty set keeping at most `capacity` addresses per family.
    public init(capacity: Int = defaultCapacity) {
        precondition(capacity > 0, "a watch set needs room for one address")
        self.capacity = capacity
    }

    /// Records a question about `address` (4 bytes for IPv4, 16 for IPv6).
    ///
    /// - Returns: true when `address` was not watched (the set's members changed), false when it
    ///   only became the most recently asked.
    public mutating func ask(about address: [UInt8]) -> Bool {
        precondition(address.count == 4 || address.count == 16, "an address is 4 or 16 bytes")
        return address.count == 4 ? Self.ask(about: address, in: &ipv4, capacity: capacity) : Self.ask(about: address, in: &ipv6, capacity: capacity)
    }

    /// Whether a route to `prefix`/`length` can change the route to a watched address of its
    /// family (its prefix contains one; a default route contains them all).
    public func isAffected(byRouteTo prefix: [UInt8]?, length: UInt8, family: AddressFamily) -> Bool {
        (family == .ipv4 ? ipv4 : ipv6).contains { IPAddressBytes.prefix(prefix, length: length, contains: $0) }
    }

    private static func ask(about address: [UInt8], in addresses: inout [[UInt8]], capacity: Int) -> Bool {
        if let index = addresses.firstIndex(of: address) {
            addresses.append(addresses.remove(at: index))
            return false
        }
        if addresses.count == capacity { addresses.removeFirst() }
        addresses.append(address)
        return true
    }
}
