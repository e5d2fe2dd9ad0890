#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address parsed from its literal text: the one parser of address literals for
/// the daemon (`CheckAddress`), the client library and the CLI. Kernel numbers (`AF_INET`'s
/// byte) stay below, in RTNetlink; this is the value the layers above it exchange.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// IPv4 or IPv6.
    public let family: AddressFamily
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses a literal IPv4 or IPv6 address: no host names, no zone suffix, no prefix length,
    /// no brackets or whitespace. The corresponding C function is `inet_pton`.
    ///
    /// - Parameter text: e.g. "192.0.2.7" or "2001:db8::1".
    public init?(_ text: String) {
        // inet_pton would stop at an embedded NUL and accept "192.0.2.1\0anything".
        guard !text.utf8.contains(0) else { return nil }
        for family in AddressFamily.allCases {
            var bytes = [UInt8](repeating: 0, count: family.addressLength)
            if bytes.withUnsafeMutableBytes({ inet_pton(family.socketFamily, text, $0.baseAddress) }) == 1 {
                self.init(family: family, bytes: bytes)
                return
            }
        }
        return nil
    }

    /// An address from its bytes; nil when their count is not the family's address length.
    public init?(family: AddressFamily, bytes: [UInt8]) {
        guard bytes.count == family.addressLength else { return nil }
        self.family = family
        self.bytes = bytes
    }

    /// The canonical text ("10.0.0.1", "2001:db8::1"). The corresponding C function is `inet_ntop`.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { inet_ntop(family.socketFamily, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return Self.dotted(bytes) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The text of address `bytes` of `family` as a kernel message carried them: the canonical
    /// text, or the bytes dotted when their count is not the family's (a malformed attribute
    /// still shows something in a log line or a report).
    public static func text(of bytes: [UInt8], family: AddressFamily) -> String {
        IPAddress(family: family, bytes: bytes)?.description ?? dotted(bytes)
    }

    private static func dotted(_ bytes: [UInt8]) -> String {
        bytes.map { String($0) }.joined(separator: ".")
    }

    /// The IPv4 address an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) stands for, which is
    /// where a dual-stack socket sends; any other address is itself.
    public var unmappingIPv4: IPAddress {
        guard family == .ipv6, bytes.prefix(12).elementsEqual([UInt8](repeating: 0, count: 10) + [0xff, 0xff]) else { return self }
        return IPAddress(family: .ipv4, bytes: Array(bytes.suffix(4)))!
    }
}

extension AddressFamily {
    /// The address length in bytes: 4 or 16.
    public var addressLength: Int { self == .ipv4 ? 4 : 16 }

    /// `AF_INET` or `AF_INET6`.
    var socketFamily: Int32 { self == .ipv4 ? AF_INET : AF_INET6 }
}
