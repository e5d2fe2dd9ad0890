#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address parsed from its literal text: the one parser of address literals for
/// the daemon (`CheckAddress`), the client library and the CLI. Kernel numbers (`AF_INET`'s
/// byte) stay in RTNetlink, whose messages carry this value up; it is what the layers above
/// exchange.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// IPv4 or IPv6.
    public let family: AddressFamily
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]
    /// The IPv6 zone (RFC 4007) the literal named after `%`: an interface name ("eth1") or
    /// index ("2"). It says which link a link-local address is on; like the kernel, the rule
    /// uses it only for link-local destinations.
    public let zone: String?

    /// Parses a literal IPv4 or IPv6 address, an IPv6 one optionally with a zone
    /// ("fe80::1%eth1"): no host names, no prefix length, no brackets or whitespace.
    /// The corresponding C function is `inet_pton`.
    ///
    /// - Parameter text: e.g. "192.0.2.7", "2001:db8::1" or "fe80::1%eth1".
    public init?(_ text: String) {
        // inet_pton would stop at an embedded NUL and accept "192.0.2.1\0anything".
        guard !text.utf8.contains(0) else { return nil }
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        let zone = parts.count == 2 ? String(parts[1]) : nil
        if let zone, !Self.isValidZone(zone) { return nil }
        for family in AddressFamily.allCases where zone == nil || family == .ipv6 {
            var bytes = [UInt8](repeating: 0, count: family.addressLength)
            if bytes.withUnsafeMutableBytes({ inet_pton(family.socketFamily, String(parts[0]), $0.baseAddress) }) == 1 {
                self.init(family: family, bytes: bytes, zone: zone)
                return
            }
        }
        return nil
    }

    /// Parses an IPv4 address in any of the forms `inet_aton` takes, as glibc's resolver reads a
    /// resolv.conf `nameserver` line: dotted with one to four parts ("127.1" is 127.0.0.1),
    /// each decimal, octal ("0177") or hexadecimal ("0x7f"), and nothing after it.
    /// The corresponding C function is `inet_aton`.
    ///
    /// - Parameter text: e.g. "192.0.2.7", "127.1" or "0x7f.1".
    /// - Returns: the address; nil when `text` is not one.
    package static func ipv4(numbersAndDots text: String) -> IPAddress? {
        // inet_aton stops at whitespace and ignores what follows; glibc's resolver takes only
        // an address that ends the text (its `__inet_aton_exact`).
        guard !text.isEmpty, !text.utf8.contains(where: { $0 == 0 || $0 == 32 || (9...13).contains($0) }) else { return nil }
        var address = in_addr()
        guard inet_aton(text, &address) == 1 else { return nil }
        return IPAddress(family: .ipv4, bytes: withUnsafeBytes(of: address.s_addr) { Array($0) })
    }

    /// An address from its bytes; nil when their count is not the family's address length.
    public init?(family: AddressFamily, bytes: [UInt8]) {
        self.init(family: family, bytes: bytes, zone: nil)
    }

    private init?(family: AddressFamily, bytes: [UInt8], zone: String?) {
        guard bytes.count == family.addressLength else { return nil }
        self.family = family
        self.bytes = bytes
        self.zone = zone
    }

    /// Whether `zone` can name an interface: 1 to 15 bytes (`IFNAMSIZ` - 1), not "." or "..",
    /// without "/", ":", "%" or whitespace — the kernel's own rule for interface names.
    private static func isValidZone(_ zone: String) -> Bool {
        let forbidden: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "%"), UInt8(ascii: " "), 9, 10, 11, 12, 13]
        return (1...15).contains(zone.utf8.count) && zone != "." && zone != ".." && !zone.utf8.contains(where: forbidden.contains)
    }

    /// The canonical text ("10.0.0.1", "2001:db8::1", "fe80::1%eth1").
    /// The corresponding C function is `inet_ntop`.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { inet_ntop(family.socketFamily, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return Self.dotted(bytes) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + (zone.map { "%\($0)" } ?? "")
    }

    /// The address's scope, as the kernel's source selection sees a destination: link for
    /// `169.254.0.0/16` and `fe80::/10`, host for `127.0.0.0/8` and `::1`, unspecified for
    /// `0.0.0.0` and `::`, global otherwise.
    public var scope: AddressScope {
        if bytes.allSatisfy({ $0 == 0 }) { return .unspecified }
        switch family {
        case .ipv4:
            if bytes[0] == 127 { return .host }
            if bytes[0] == 169 && bytes[1] == 254 { return .link }
        case .ipv6:
            if bytes.prefix(15).allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return .host }
            if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return .link }
        }
        return .global
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
