/// One NAT64 prefix systemd-networkd recorded from a router advertisement's PREF64 option (RFC
/// 8781) when it handles router advertisements itself (`IPv6AcceptRA=yes`, `UsePREF64=yes`,
/// systemd ≥ 255; the kernel then hands the option to nobody else): an element of `NDisc.PREF64`
/// in `org.freedesktop.network1.Link.Describe()`'s JSON.
///
/// systemd 255 and 256 give `Prefix` and `ConfigProvider` as arrays of 16 byte values; later
/// versions add `PrefixString` and `ConfigProviderString`. `LifetimeUSec` is when the lifetime runs
/// out, in microseconds of `CLOCK_BOOTTIME` (networkd omits it for an infinite one, which PREF64
/// cannot carry).
public struct NetworkdPREF64: Sendable, Hashable {
    /// The prefix's network address (the bits past ``length`` are zero).
    public var network: IPAddress
    /// The prefix length: 96, 64, 56, 48, 40 or 32.
    public var length: Int
    /// The router that advertised it (its link-local address), when networkd said.
    public var router: IPAddress?
    /// When its lifetime runs out, in seconds of `CLOCK_BOOTTIME`; nil when networkd gave none.
    public var lifetimeEndSeconds: Double?

    /// Creates a record.
    public init(network: IPAddress, length: Int, router: IPAddress?, lifetimeEndSeconds: Double?) {
        self.network = network
        self.length = length
        self.router = router
        self.lifetimeEndSeconds = lifetimeEndSeconds
    }

    /// The records in a link's description (the top-level object of `Describe()`'s JSON): none
    /// when networkd keeps none (no `NDisc` or no `PREF64`, as systemd < 255 or `UsePREF64=no`
    /// describe a link). An element without a valid IPv6 prefix of an allowed length is skipped.
    package static func records(inLinkDescription link: [String: JSONValue]) -> [NetworkdPREF64] {
        guard case .object(let ndisc)? = link["NDisc"], case .array(let elements)? = ndisc["PREF64"] else { return [] }
        return elements.compactMap { element in
            guard case .object(let fields) = element,
                  let network = address(fields, "Prefix"),
                  case .number(let lengthNumber)? = fields["PrefixLength"], let length = Int(exactly: lengthNumber), NAT64Synthesis.prefixLengths.contains(length)
            else { return nil }
            var lifetimeEnd: Double?
            if case .number(let microseconds)? = fields["LifetimeUSec"], microseconds >= 0 { lifetimeEnd = microseconds / 1_000_000 }
            return NetworkdPREF64(network: network, length: length, router: address(fields, "ConfigProvider"), lifetimeEndSeconds: lifetimeEnd)
        }
    }

    /// The IPv6 address in `fields[name]` (16 byte values), or else in `fields[name + "String"]`.
    private static func address(_ fields: [String: JSONValue], _ name: String) -> IPAddress? {
        if case .array(let values)? = fields[name] {
            let bytes = values.compactMap { value -> UInt8? in
                guard case .number(let number) = value else { return nil }
                return UInt8(exactly: number)
            }
            if bytes.count == values.count, let address = IPAddress(family: .ipv6, bytes: bytes) { return address }
        }
        if case .string(let text)? = fields[name + "String"], let address = IPAddress(text), address.family == .ipv6 { return address }
        return nil
    }
}
