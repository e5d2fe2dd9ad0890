#if canImport(Glibc)
import Glibc
#endif

/// The raw address bytes netlink carries: their lengths and prefixes. They stay in this module:
/// its messages give NetworkTypes' `IPAddress` to the layers above.
enum IPAddressBytes {
    /// `AF_INET` as netlink's one-byte family field.
    static let ipv4Family = UInt8(AF_INET)
    /// `AF_INET6` as netlink's one-byte family field.
    static let ipv6Family = UInt8(AF_INET6)

    /// The address length of `family`: 4, 16, or nil for other families.
    static func length(family: UInt8) -> Int? {
        switch family {
        case ipv4Family: 4
        case ipv6Family: 16
        default: nil
        }
    }

    /// Whether the prefix `prefix`/`length` contains `address` (both of one family; a nil prefix
    /// is the default route, which contains every address). A length past the address's bits
    /// compares every bit.
    static func prefix(_ prefix: [UInt8]?, length: UInt8, contains address: [UInt8]) -> Bool {
        guard let prefix, length > 0 else { return true }
        guard prefix.count == address.count else { return false }
        var remaining = Int(length)
        for (prefixByte, addressByte) in zip(prefix, address) where remaining > 0 {
            let mask = remaining >= 8 ? UInt8.max : ~(UInt8.max >> remaining)
            guard prefixByte & mask == addressByte & mask else { return false }
            remaining -= 8
        }
        return true
    }

    /// The network address of `prefix`/`length`: the prefix's bits past `length` cleared (the
    /// lowest address it contains), `width` bytes long.
    static func masked(_ prefix: [UInt8], length: UInt8, width: Int) -> [UInt8] {
        var remaining = Int(length)
        return (0..<width).map { index in
            defer { remaining -= 8 }
            let byte = index < prefix.count ? prefix[index] : 0
            return remaining >= 8 ? byte : remaining <= 0 ? 0 : byte & ~(UInt8.max >> remaining)
        }
    }
}
