// `CheckDestination(s)`: what `CheckAddress` answers, and how an application gets there.
//
// The rule, for the address asked (an IPv4-mapped one counts as IPv4):
// 0. The unspecified address is asked as its family's loopback address: a connection to
//    0.0.0.0 goes to 127.0.0.1 and one to :: to ::1 (Linux's `ip_route_output_key_hash_rcu`
//    and `ip4_datagram_connect`, `tcp_v6_connect` and `ip6_datagram_connect` substitute it), and
//    the reason says so. `CheckAddress` does the same.
// 1. The kernel's answer for the literal, as `CheckAddress` gives it. Reachable: `via` is `clat`
//    when its route is a CLAT's (``CLATPath``: then status, interface and transport describe the
//    uplink it translates onto, as the properties do), `nat64` for an IPv6 address inside the
//    NAT64 prefix in use, else `direct`; `address` is the address given. Not reachable after all
//    when the NAT64 behind the path does not translate the IPv4 address (the literal through a
//    CLAT, the one an IPv6 literal inside the prefix embeds), as 2. says.
// 2. An IPv4 literal that is not reachable, with a NAT64 prefix known: the address embedded in
//    the prefix (RFC 6052 §2.2) and the kernel's answer for that one. Reachable: `via` `nat64`,
//    `address` the synthesized one (connect there: the literal through an `AF_INET` socket fails).
//    Never for an address the NAT64 does not translate: with the well-known prefix 64:ff9b::/96
//    none of RFC 6890's non-global ranges (RFC 6052 §3.1: private, shared, documentation…), with
//    any prefix (or none known, behind a CLAT) none that is never forwarded (this network,
//    loopback, link-local, multicast, reserved, broadcast). Those stay not reachable, and the
//    reason says why.
// 3. Otherwise not reachable: `via` `direct`, `address` the address given, and the reason says
//    why, with why the NAT64 does not help either when a prefix is known.

/// How a connection to a destination leaves this host (`CheckDestination`'s `via`).
public enum DestinationPath: String, Sendable, CaseIterable, Hashable {
    /// To the address as given, over its own family's route.
    case direct
    /// To the IPv4 address as given, through the CLAT (464XLAT), which translates onto IPv6.
    case clat
    /// To the IPv6 address that embeds the IPv4 address in the NAT64 prefix.
    case nat64
}

/// A NAT64 prefix (RFC 6052): its network and length.
public struct NAT64Prefix: Sendable, Hashable, CustomStringConvertible {
    /// The prefix's network, an IPv6 address.
    public var network: IPAddress
    /// The prefix length: 32, 40, 48, 56, 64 or 96.
    public var length: Int

    /// The well-known prefix, 64:ff9b::/96 (RFC 6052 §2.1).
    public static let wellKnown = NAT64Prefix(network: IPAddress("64:ff9b::")!, length: 96)

    /// Creates the prefix.
    public init(network: IPAddress, length: Int) {
        self.network = network
        self.length = length
    }

    /// Parses `NAT64Prefix`'s form, "64:ff9b::/96"; nil for "" or anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let network = IPAddress(String(parts[0])), network.family == .ipv6, let length = Int(parts[1]),
              NAT64Synthesis.prefixLengths.contains(length) else { return nil }
        self.init(network: network, length: length)
    }

    /// "64:ff9b::/96".
    public var description: String { "\(network)/\(length)" }

    /// Whether `address` (IPv6) lies inside the prefix.
    public func contains(_ address: IPAddress) -> Bool {
        address.family == .ipv6 && address.bytes.prefix(length / 8) == network.bytes.prefix(length / 8)
    }

    /// The IPv6 address that reaches `ipv4` through this prefix's NAT64 (RFC 6052 §2.2).
    public func synthesizing(_ ipv4: IPAddress) -> IPAddress? {
        NAT64Synthesis.address(embedding: ipv4, in: network, length: length)
    }

    /// The IPv4 address an IPv6 address inside the prefix embeds (RFC 6052 §2.2); nil for an
    /// address outside it.
    public func embeddedIPv4(in ipv6: IPAddress) -> IPAddress? {
        contains(ipv6) ? NAT64Synthesis.ipv4(embeddedIn: ipv6, length: length) : nil
    }
}

/// RFC 6890's special-purpose IPv4 ranges (IANA's registry), and what a NAT64 does with them.
public enum IPv4SpecialPurpose {
    /// One range of the registry.
    public struct Range: Sendable, Hashable {
        /// The network's four bytes.
        public var network: [UInt8]
        /// The prefix length.
        public var length: Int
        /// The registry's name, as a reason says it.
        public var name: String
        /// The registry's "Global" column: a NAT64 with the well-known prefix translates it.
        public var isGlobal: Bool
        /// Never forwarded by any router (RFC 6890's "Forwardable" false, and multicast): no
        /// NAT64 reaches it, whatever its prefix.
        public var isNeverForwarded: Bool

        /// Whether `address` (IPv4) is inside the range.
        public func contains(_ address: IPAddress) -> Bool {
            guard address.family == .ipv4 else { return false }
            let value = { (bytes: [UInt8]) in bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
            let mask: UInt32 = length == 0 ? 0 : ~UInt32(0) << (32 - length)
            return value(address.bytes) & mask == value(network) & mask
        }
    }

    /// The ranges, most specific first (the first that contains an address is its range).
    public static let ranges: [Range] = [
        Range(network: [192, 0, 0, 9], length: 32, name: "Port Control Protocol anycast", isGlobal: true, isNeverForwarded: false),
        Range(network: [192, 0, 0, 10], length: 32, name: "TURN anycast", isGlobal: true, isNeverForwarded: false),
        Range(network: [255, 255, 255, 255], length: 32, name: "the limited broadcast address", isGlobal: false, isNeverForwarded: true),
        Range(network: [192, 0, 0, 0], length: 24, name: "an IETF protocol assignment (192.0.0.0/24)", isGlobal: false, isNeverForwarded: false),
        Range(network: [0, 0, 0, 0], length: 8, name: "\"this network\" (0.0.0.0/8)", isGlobal: false, isNeverForwarded: true),
        Range(network: [10, 0, 0, 0], length: 8, name: "private-use (10.0.0.0/8)", isGlobal: false, isNeverForwarded: false),
        Range(network: [100, 64, 0, 0], length: 10, name: "shared address space (100.64.0.0/10)", isGlobal: false, isNeverForwarded: false),
        Range(network: [127, 0, 0, 0], length: 8, name: "loopback (127.0.0.0/8)", isGlobal: false, isNeverForwarded: true),
        Range(network: [169, 254, 0, 0], length: 16, name: "link-local (169.254.0.0/16)", isGlobal: false, isNeverForwarded: true),
        Range(network: [172, 16, 0, 0], length: 12, name: "private-use (172.16.0.0/12)", isGlobal: false, isNeverForwarded: false),
        Range(network: [192, 0, 2, 0], length: 24, name: "documentation (192.0.2.0/24)", isGlobal: false, isNeverForwarded: false),
        Range(network: [192, 168, 0, 0], length: 16, name: "private-use (192.168.0.0/16)", isGlobal: false, isNeverForwarded: false),
        Range(network: [198, 18, 0, 0], length: 15, name: "benchmarking (198.18.0.0/15)", isGlobal: false, isNeverForwarded: false),
        Range(network: [198, 51, 100, 0], length: 24, name: "documentation (198.51.100.0/24)", isGlobal: false, isNeverForwarded: false),
        Range(network: [203, 0, 113, 0], length: 24, name: "documentation (203.0.113.0/24)", isGlobal: false, isNeverForwarded: false),
        Range(network: [224, 0, 0, 0], length: 4, name: "multicast (224.0.0.0/4)", isGlobal: false, isNeverForwarded: true),
        Range(network: [240, 0, 0, 0], length: 4, name: "reserved (240.0.0.0/4)", isGlobal: false, isNeverForwarded: true),
    ]

    /// The range `address` (IPv4) is in, nil for an ordinary global address.
    public static func range(containing address: IPAddress) -> Range? {
        ranges.first { $0.contains(address) }
    }

    /// Why a NAT64 with `prefix` does not translate `address` (IPv4), nil when it does: with the
    /// well-known prefix no non-global address (RFC 6052 §3.1), with any prefix, or none known,
    /// none that is never forwarded.
    ///
    /// - Parameter subject: how the sentence starts, "10.1.2.3 is" when nil.
    public static func refusal(of address: IPAddress, through prefix: NAT64Prefix?, subject: String? = nil) -> String? {
        guard let range = range(containing: address) else { return nil }
        let subject = subject ?? "\(address) is"
        if range.isNeverForwarded {
            return "\(subject) \(range.name), which no NAT64 translates"
        }
        if let prefix, prefix == .wellKnown, !range.isGlobal {
            return "\(subject) \(range.name), which NAT64 with the well-known prefix \(prefix) does not translate (RFC 6052 §3.1)"
        }
        return nil
    }
}

/// What `CheckDestination(s)` answers for one address.
public struct DestinationAnswer: Sendable, Hashable {
    /// The verdict on the path taken: its status, link and reason (the uplink's for a CLAT).
    public var verdict: DestinationVerdict
    /// The source address a connection gets, when the kernel selects one.
    public var source: IPAddress?
    /// The route's gateway, nil for a route on the link.
    public var gateway: IPAddress?
    /// How the connection leaves this host.
    public var path: DestinationPath
    /// Where to connect: the synthesized IPv6 address through NAT64, else the address given.
    public var address: String

    /// Creates an answer.
    public init(verdict: DestinationVerdict, source: IPAddress?, gateway: IPAddress?, path: DestinationPath, address: String) {
        self.verdict = verdict
        self.source = source
        self.gateway = gateway
        self.path = path
        self.address = address
    }

    /// The key of the reply's status, which the GIO module reads.
    public static let statusKey = "status"
    /// The key of the reply's path (``DestinationPath``), which the GIO module reads too.
    public static let viaKey = "via"
}

/// The rule at the top of this file.
public enum DestinationRule {
    /// What the rule needs to know of the host beside the kernel's answers.
    public struct Context: Sendable, Hashable {
        /// The NAT64 prefix in use (`NAT64Prefix`), nil when none is known.
        public var nat64Prefix: NAT64Prefix?
        /// The link a CLAT translates onto (IPv6's route's), nil when none.
        public var clatUplink: LinkFacts?

        /// Creates the context.
        public init(nat64Prefix: NAT64Prefix? = nil, clatUplink: LinkFacts? = nil) {
            self.nat64Prefix = nat64Prefix
            self.clatUplink = clatUplink
        }
    }

    /// Answers for `address` (`text` as given, parsed and IPv4-unmapped).
    ///
    /// - Parameter facts: the kernel's answer for a destination, as for a caller's address.
    public static func answer(for address: IPAddress, as text: String, context: Context, facts: (IPAddress) -> DestinationFacts) -> DestinationAnswer {
        let target = connectionTarget(of: address)
        let literal = facts(target)
        var verdict = ReachabilityRule.evaluate(literal)
        if target != address {
            verdict.reason = "a connection to \(address) goes to \(target) (Linux sends the unspecified address to loopback): \(verdict.reason)"
        }
        func refused(_ refusal: String, path: DestinationPath) -> DestinationAnswer {
            DestinationAnswer(verdict: DestinationVerdict(family: verdict.family, link: nil, reason: "\(verdict.reason); \(refusal)"), literal, path: path, address: text)
        }
        if verdict.isReachable {
            if address.family == .ipv4, let clat = CLATPath(routeLink: verdict.link, uplink: context.clatUplink) {
                if let refusal = IPv4SpecialPurpose.refusal(of: address, through: context.nat64Prefix) { return refused(refusal, path: .clat) }
                return DestinationAnswer(verdict: clat.describing(verdict), literal, path: .clat, address: text)
            }
            guard let prefix = context.nat64Prefix, prefix.contains(address) else {
                return DestinationAnswer(verdict: verdict, literal, path: .direct, address: text)
            }
            if let embedded = prefix.embeddedIPv4(in: address),
               let refusal = IPv4SpecialPurpose.refusal(of: embedded, through: prefix, subject: "\(address) embeds \(embedded), which is") {
                return refused(refusal, path: .nat64)
            }
            return DestinationAnswer(verdict: verdict, literal, path: .nat64, address: text)
        }
        guard address.family == .ipv4, let prefix = context.nat64Prefix else {
            return DestinationAnswer(verdict: verdict, literal, path: .direct, address: text)
        }
        if let refusal = IPv4SpecialPurpose.refusal(of: address, through: prefix) { return refused(refusal, path: .direct) }
        guard let synthesized = prefix.synthesizing(address) else { return DestinationAnswer(verdict: verdict, literal, path: .direct, address: text) }
        let translated = facts(synthesized)
        var translatedVerdict = ReachabilityRule.evaluate(translated)
        guard translatedVerdict.isReachable else {
            return refused("through NAT64 at \(synthesized) (prefix \(prefix)): \(translatedVerdict.reason)", path: .direct)
        }
        translatedVerdict.reason = "through NAT64 at \(synthesized) (prefix \(prefix)): \(translatedVerdict.reason)"
        return DestinationAnswer(verdict: translatedVerdict, translated, path: .nat64, address: synthesized.description)
    }

    /// Where a connection to `address` goes (the rule's step 0): its family's loopback address
    /// for the unspecified one, else `address` itself.
    public static func connectionTarget(of address: IPAddress) -> IPAddress {
        guard address.bytes.allSatisfy({ $0 == 0 }) else { return address }
        return address.family == .ipv4 ? loopback.ipv4 : loopback.ipv6
    }

    /// The loopback address of each family.
    private static let loopback = (ipv4: IPAddress("127.0.0.1")!, ipv6: IPAddress("::1")!)
}

extension DestinationAnswer {
    /// An answer with the source and gateway of `facts`.
    init(verdict: DestinationVerdict, _ facts: DestinationFacts, path: DestinationPath, address: String) {
        var source: IPAddress?
        if case .selected(let selected) = facts.source { source = selected.address }
        var gateway: IPAddress?
        if case .route(let route) = facts.lookup { gateway = route.gateway }
        self.init(verdict: verdict, source: source, gateway: gateway, path: path, address: address)
    }
}
