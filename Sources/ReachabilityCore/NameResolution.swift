/// Whether the host's names will resolve (the `DNS` property's wire strings).
///
/// Kept like `Status`: evaluated on every relevant change and published only when it changes.
/// `failing` and `answering` come only from the connectivity check's own name lookups, so only
/// when a check by host name is configured; the daemon never sends a query of its own otherwise.
public enum DNSReadiness: String, Sendable, CaseIterable, Hashable {
    /// Before the first evaluation.
    case unknown
    /// No nameserver takes public names: none is configured, systemd-resolved (named by
    /// resolv.conf) is not running, or the only ones are split-DNS servers of their link's domains.
    case none
    /// Nameservers are configured, and the kernel routes none of them from a usable source.
    case unreachable
    /// At least one configured nameserver is routed from a usable source.
    case reachable
    /// A nameserver is routed, but the check's last name lookup got no answer.
    case failing
    /// The check's last name lookup got an answer.
    case answering

    /// How far toward "names resolve" this value is, the order `reachabilityctl wait --dns`
    /// compares by: unknown, none, unreachable < failing < reachable < answering. (`failing` is
    /// below `reachable`: it is `reachable` with evidence against it.)
    package var rank: Int {
        switch self {
        case .unknown, .none, .unreachable: 0
        case .failing: 1
        case .reachable: 2
        case .answering: 3
        }
    }
}

/// Where a configured nameserver was found.
public enum NameServerOrigin: Sendable, Hashable {
    /// A `nameserver` line of a resolv.conf file (the path, as followed).
    case resolvConf(String)
    /// systemd-resolved's global servers (`DNS=` of resolved.conf, or its fallback).
    case resolvedGlobal
    /// systemd-resolved's servers for one link (from networkd, NetworkManager, DHCP...).
    case resolvedLink(InterfaceIndex)
    /// systemd-resolved's fallback servers (`FallbackDNS=`), which it uses while no other is known.
    case resolvedFallback
    /// glibc's own server, 127.0.0.1, which its resolver asks when the resolv.conf file (the
    /// path) has no `nameserver` line or cannot be read.
    case resolverDefault(String)

    /// The origin in a sentence's words: "/etc/resolv.conf", "systemd-resolved (global)",
    /// "systemd-resolved (link 3)".
    public var description: String {
        switch self {
        case .resolvConf(let path): path
        case .resolvedGlobal: "systemd-resolved (global)"
        case .resolvedLink(let index): "systemd-resolved (link \(index))"
        case .resolvedFallback: "systemd-resolved (fallback)"
        case .resolverDefault(let path): "glibc's default (no nameserver in \(path))"
        }
    }
}

/// One configured nameserver: the address an application's query goes to, and where it was found.
public struct NameServer: Sendable, Hashable {
    /// The server's address; a link-local IPv6 server carries its link as the zone.
    public var address: IPAddress
    /// Where the server was configured.
    public var origin: NameServerOrigin
    /// Whether names outside its link's routing domains may go to it: false for a split-DNS
    /// server, which systemd-resolved asks only about its link's own domains
    /// (``ResolvedDefaultRoute``).
    public var servesAnyDomain: Bool

    /// The link the server is configured for, where known: systemd-resolved's link, or the zone
    /// of a link-local server (an index, or a name that `index(ofZone:)` resolves); nil for a
    /// server of the whole host.
    public func link(indexOfZone: (String) -> InterfaceIndex?) -> InterfaceIndex? {
        if case .resolvedLink(let index) = origin { return index }
        guard address.scope == .link, let zone = address.zone else { return nil }
        return indexOfZone(zone)
    }

    /// A server configured at `address`, found in `origin`, which serves names of any domain
    /// unless `servesAnyDomain` says otherwise.
    public init(address: IPAddress, origin: NameServerOrigin, servesAnyDomain: Bool = true) {
        self.address = address
        self.origin = origin
        self.servesAnyDomain = servesAnyDomain
    }
}

/// What the host's resolver configuration reads: glibc's view of `/etc/resolv.conf`.
package enum ResolvConf {
    /// The addresses of systemd-resolved's stub listeners: a resolv.conf naming one of them
    /// means "ask resolved", whose upstream servers are the real ones.
    package static let resolvedStubAddresses: Set<IPAddress> = [IPAddress("127.0.0.53")!, IPAddress("127.0.0.54")!]

    /// The most servers glibc's resolver uses (`MAXNS`): later `nameserver` lines are ignored.
    package static let maximumServers = 3

    /// The server glibc's resolver asks when resolv.conf names none (`INADDR_LOOPBACK`).
    package static let resolverDefault = IPAddress("127.0.0.1")!

    /// The addresses of a resolv.conf's `nameserver` lines, read as glibc reads them: lines that
    /// begin with the keyword `nameserver` (no leading blank) and an address — an IPv4 one in any
    /// form `inet_aton` takes ("127.1"), an IPv6 one possibly with a `%zone`; the first
    /// ``maximumServers`` such lines count, duplicates included, lines whose address does not
    /// parse are skipped; other lines (comments, `search`, `options`) ignored.
    ///
    /// - Parameter text: the file's contents.
    /// - Returns: the addresses, in order, without duplicates.
    package static func nameServers(in text: String) -> [IPAddress] {
        var lines: [IPAddress] = []
        for line in text.split(whereSeparator: \.isNewline) where lines.count < maximumServers {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).flatMap { $0.split(separator: "\t") }
            guard line.hasPrefix("nameserver"), fields.count >= 2, fields[0] == "nameserver" else { continue }
            let text = String(fields[1])
            guard let address = IPAddress.ipv4(numbersAndDots: text) ?? IPAddress(text).flatMap({ $0.family == .ipv6 ? $0 : nil }) else { continue }
            lines.append(address)
        }
        return lines.reduce(into: []) { servers, address in
            if !servers.contains(address) { servers.append(address) }
        }
    }

    /// The servers an application's resolver asks, given the resolv.conf at `path` (`text`, nil
    /// when it cannot be read): its ``nameServers(in:)``, or, when it names none or cannot be
    /// read, glibc's default, 127.0.0.1 (its `res_init` adds the loopback address then).
    package static func servers(in text: String?, path: String) -> [NameServer] {
        let addresses = nameServers(in: text ?? "")
        guard !addresses.isEmpty else { return [NameServer(address: resolverDefault, origin: .resolverDefault(path))] }
        return addresses.map { NameServer(address: $0, origin: .resolvConf(path)) }
    }

    /// Whether `servers` (a resolv.conf's) hand every query to systemd-resolved's stub.
    package static func pointsAtResolvedStub(_ servers: [IPAddress]) -> Bool {
        !servers.isEmpty && servers.allSatisfy(resolvedStubAddresses.contains)
    }
}
