import NetworkTypes

/// An address prefix, `network/length`: what the route filter lists. A host's prefix (the
/// family's full length) stands for one address; a shorter one for every address it contains,
/// when more addresses are followed than a filter has room for (``aggregating(_:into:)``).
public struct IPPrefix: Sendable, Hashable, CustomStringConvertible {
    /// The prefix's network address: the lowest address it contains (bits past ``length`` clear).
    public let network: IPAddress
    /// The number of leading bits that are the prefix: 0 through the family's bits.
    public let length: Int

    /// The prefix of `length` bits that contains `address`.
    public init(_ address: IPAddress, length: Int) {
        let width = address.family.addressLength
        precondition((0...(width * 8)).contains(length), "a prefix of \(length) bits for \(address)")
        network = IPAddress(family: address.family, bytes: IPAddressBytes.masked(address.bytes, length: UInt8(length), width: width))!
        self.length = length
    }

    /// The prefix that is `address` alone.
    public init(host address: IPAddress) {
        self.init(address, length: address.family.addressLength * 8)
    }

    /// Whether the prefix stands for one address only.
    public var isHost: Bool { length == network.family.addressLength * 8 }

    /// Whether the prefix contains `address` (of its family).
    public func contains(_ address: IPAddress) -> Bool {
        address.family == network.family && IPAddressBytes.prefix(network.bytes, length: UInt8(length), contains: address.bytes)
    }

    /// "10.9.0.0/16".
    public var description: String { "\(network)/\(length)" }

    /// The longest prefix that contains both `first` and `second` (of one family).
    public static func covering(_ first: IPAddress, _ second: IPAddress) -> IPPrefix {
        var length = 0
        for (a, b) in zip(first.bytes, second.bytes) {
            guard a == b else {
                length += (a ^ b).leadingZeroBitCount
                break
            }
            length += 8
        }
        return IPPrefix(first, length: length)
    }

    /// At most `count` prefixes that together contain every one of `addresses` (of one family,
    /// sorted by their bytes, each once), as long as can be: each address its own host prefix
    /// while they fit; beyond that the addresses are cut into `count` runs where neighbours
    /// differ earliest (the widest gaps), and each run becomes the longest prefix covering its
    /// first and last address (which covers everything between them).
    ///
    /// - Parameters:
    ///   - addresses: sorted, distinct addresses of one family.
    ///   - count: the most prefixes wanted, at least 1.
    public static func aggregating(_ addresses: [IPAddress], into count: Int) -> [IPPrefix] {
        precondition(count > 0, "no room for a prefix")
        guard addresses.count > count else { return addresses.map(IPPrefix.init(host:)) }
        // The gap after each address but the last: how many leading bits it shares with the next.
        let gaps = addresses.indices.dropLast().map { (index: $0, shared: covering(addresses[$0], addresses[$0 + 1]).length) }
        let cuts = gaps.sorted { ($0.shared, $0.index) < ($1.shared, $1.index) }.prefix(count - 1).map(\.index).sorted()
        var start = 0
        return (cuts + [addresses.count - 1]).map { end in
            defer { start = end + 1 }
            return covering(addresses[start], addresses[end])
        }
    }
}
