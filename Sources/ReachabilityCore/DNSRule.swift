/// One configured nameserver and what the kernel answered for an application's query to it.
public struct NameServerFacts: Sendable, Hashable {
    /// The server.
    public let server: NameServer
    /// The kernel's answers for a query to the server, as for an address a caller asks about.
    public let facts: DestinationFacts
    /// The decision rule's verdict on ``facts`` (a query to port 53 goes where a connection to
    /// the server would).
    public let verdict: DestinationVerdict

    /// A server and the kernel's answers for it.
    public init(server: NameServer, facts: DestinationFacts) {
        self.server = server
        self.facts = facts
        verdict = ReachabilityRule.evaluate(facts)
    }

    /// Whether the server is on this host (loopback, or one of the host's own addresses): its
    /// route is the loopback link's, and where it forwards to is hidden from us.
    public var isOnThisHost: Bool { verdict.link?.isLoopback ?? false }
}

/// What the connectivity check's own name lookups came to in its last round.
public enum NameLookupEvidence: Sendable, Hashable {
    /// At least one of the check's lookups of its host name got an answer.
    case answered
    /// Every lookup of the check's host name failed (the resolver's text: "Temporary failure in
    /// name resolution"...).
    case failed(String)
}

/// The DNS readiness rule: the one place that turns the configured nameservers, the kernel's
/// routes toward them and the check's lookups into the `DNS` value and its sentence.
///
/// No server configured is `none`, and so are only split-DNS servers (systemd-resolved's
/// servers of a link that is no default route, ``NameServer/servesAnyDomain``): a public name
/// goes to none of them, so they are never counted. A server is routed when the decision rule, asked as for an
/// address a caller gives, finds it reachable: the kernel's route toward it and a usable source.
/// A server on this host (a local dnsmasq or unbound; resolved's stub is never one, its upstream
/// servers are listed instead) forwards to servers we cannot see: it counts while the host itself
/// is reachable. With no routed server the value is `unreachable`; with one, `reachable` — unless
/// the check's last round of name lookups says more: `answering` when one got an answer,
/// `failing` when they all failed. Lookup evidence never lifts `none` or `unreachable`: an answer
/// then came from elsewhere (`/etc/hosts`, a cache), not from the servers.
public enum DNSRule {
    /// The readiness and its reason.
    public struct Verdict: Sendable, Hashable {
        /// The `DNS` value.
        public var readiness: DNSReadiness
        /// One human sentence: why.
        public var reason: String
    }

    /// Decides the host's DNS readiness.
    ///
    /// - Parameters:
    ///   - servers: every configured server with its verdict, in the resolver's order.
    ///   - hostIsReachable: whether `Status` is reachable (what a server on this host needs).
    ///   - lookups: the check's last round of name lookups; nil when no check by host name is
    ///     configured or none has finished.
    /// - Returns: the readiness and its reason.
    public static func decide(servers: [NameServerFacts], hostIsReachable: Bool, lookups: NameLookupEvidence?) -> Verdict {
        guard !servers.isEmpty else { return Verdict(readiness: .none, reason: "no nameserver is configured") }
        let splitDNS = servers.filter { !$0.server.servesAnyDomain }
        let servers = servers.filter(\.server.servesAnyDomain)
        guard !servers.isEmpty else {
            let list = splitDNS.map { "\($0.server.address) from \($0.server.origin.description)" }.joined(separator: ", ")
            return Verdict(readiness: .none, reason: "no nameserver takes names outside its link's own domains (\(list))")
        }
        let routed = servers.first { $0.verdict.isReachable && (!$0.isOnThisHost || hostIsReachable) }
        guard let routed else {
            let why = servers.map { "\($0.server.address): \(unroutedReason($0))" }.joined(separator: "; ")
            return Verdict(readiness: .unreachable, reason: "no nameserver is routed (\(why))")
        }
        let via = routed.isOnThisHost ? "on this host" : "via \(routed.verdict.link?.name ?? "")"
        switch lookups {
        case nil:
            return Verdict(readiness: .reachable, reason: "nameserver \(routed.server.address) is routed \(via)")
        case .answered:
            return Verdict(readiness: .answering, reason: "the check's name lookup got an answer")
        case .failed(let why):
            return Verdict(readiness: .failing, reason: "nameserver \(routed.server.address) is routed \(via), but the check's name lookup failed: \(why)")
        }
    }

    /// `Reason` when the route is fine and DNS is not: the route's reason, then what is wrong
    /// with name resolution ("default route via 10.0.0.1 on wlan0 (wifi), table 254, but no
    /// nameserver is configured"). Other readiness values leave the reason as it is.
    ///
    /// - Parameters:
    ///   - reason: the route's reason (the decision rule's).
    ///   - status: the published status.
    ///   - dns: the DNS verdict.
    public static func reason(_ reason: String, status: ReachabilityStatus, dns: Verdict) -> String {
        guard status != .notReachable else { return reason }
        switch dns.readiness {
        case .none, .unreachable, .failing:
            return "\(reason), but \(dns.reason)"
        case .unknown, .reachable, .answering:
            return reason
        }
    }

    private static func unroutedReason(_ facts: NameServerFacts) -> String {
        facts.verdict.isReachable ? "on this host, which has no usable route" : facts.verdict.reason
    }
}
