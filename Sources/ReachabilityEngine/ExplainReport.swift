import ReachabilityCore
import SystemSupport

/// What `Explain()` shows, as values: the engine gathers them (``ReachabilityEngine/report()``),
/// ``text`` lays them out for admins.
public struct ExplainReport: Sendable, Hashable {
    /// One probe destination: what the kernel answered and what the rule made of it.
    public struct Family: Sendable, Hashable {
        /// The probe destination, e.g. "8.8.8.8".
        public var destination: String
        /// The kernel's answers for it.
        public var facts: DestinationFacts
        /// The rule's verdict.
        public var verdict: DestinationVerdict
        /// The route's gateway and what its neighbour entry says; nil without one.
        public var gateway: GatewayNeighbour?
        /// What the active check (and the network's captive-portal API) got, as report lines;
        /// empty with checks off or no route.
        public var activeCheck: [String]
    }

    /// One configured address.
    public struct Address: Sendable, Hashable {
        /// "ADDRESS/PREFIX", e.g. "2001:db8::2/64".
        public var text: String
        /// Its scope and DAD state.
        package var facts: AddressFacts
    }

    /// One link and its addresses.
    public struct Link: Sendable, Hashable {
        /// The classified link.
        public var facts: LinkFacts
        /// Its addresses, sorted by text.
        public var addresses: [Address]
        /// The captive-portal APIs advertised on it (RFC 8910), each with how it came.
        public var captivePortalAPIs: [String]
    }

    /// Links beyond the report's limit, only counted.
    public struct OmittedLinks: Sendable, Hashable {
        /// How many.
        public var count: Int
        /// How many of them are up.
        public var up: Int
        /// How many are up with carrier.
        public var withCarrier: Int
    }

    /// How many links a report shows in full (by index), besides the probes' output links.
    public static let linkLimit = 64

    /// The last evaluation.
    public var evaluation: ReachabilitySnapshot
    /// What subscribers see while `DownDelaySec=` holds a loss back; nil when nothing is held.
    public var heldBack: ReachabilitySnapshot?
    /// Whether a `RoutesChanged` is due at the end of the current rate-limit interval.
    public var routesChangedPending: Bool
    /// Whether the route filter keeps every route until a rebuild due shortly (new watched
    /// destinations came faster than one rebuild per interval).
    public var routeFilterRebuildPending: Bool
    /// Whether a listing of `Interfaces` is due at the end of its window (links changed within
    /// ``BusContract/interfacesIntervalMilliseconds`` of the last listing).
    public var interfacesListingPending = false
    /// IPv4, then IPv6.
    public var families: [Family]
    /// The NAT64 prefix in use and why, then each one known with where it came from.
    public var nat64Prefixes: [String]
    /// The probes' output links and the first ``linkLimit`` links, by index.
    public var links: [Link]
    /// The other links, counted; nil when every link is shown.
    public var omittedLinks: OmittedLinks?
    /// The settings in force.
    public var configuration: DaemonConfiguration
    /// The configured nameservers as the kernel routes them now; nil while they are not known.
    public var nameServers: [NameServerFacts]?
    /// What the checks' last lookups of their host name came to; nil when none was made.
    public var nameLookup: NameLookupEvidence?

    /// The report for admins: per family the route the kernel picked and the verdict, then every
    /// link (state, transport and why, addresses, ignored and why), then the settings.
    public var text: String {
        var lines = [
            "Status: \(evaluation.status.rawValue)", "Reason: \(evaluation.reason)",
            "Connectivity: \(evaluation.connectivity.rawValue) (IPv4 \(evaluation.ipv4Connectivity.rawValue), IPv6 \(evaluation.ipv6Connectivity.rawValue))",
        ]
        if let heldBack {
            lines.append("Held by DownDelaySec=: subscribers still see \(heldBack.status.rawValue) (\(heldBack.reason))")
        }
        if routeFilterRebuildPending {
            lines.append("Route filter: keeping every route until its rebuild (new watched destinations) within \(BusContract.routesChangedIntervalMilliseconds) ms")
        }
        if routesChangedPending {
            lines.append("RoutesChanged: one is due within \(BusContract.routesChangedIntervalMilliseconds) ms (the rest of a burst)")
        }
        if interfacesListingPending {
            lines.append("Interfaces: a listing is due within \(BusContract.interfacesIntervalMilliseconds) ms (the rest of a burst)")
        }
        for family in families {
            let facts = family.facts
            let route = Self.routeText(facts)
            let verdict = family.verdict
            lines.append("\(facts.family.displayName) (route to \(family.destination)): \(route) -> \(verdict.isReachable ? "reachable" : "not reachable"): \(verdict.reason)")
            if let gateway = family.gateway {
                lines.append("  gateway \(gateway.address) neighbour entry: " + (gateway.hasFailed
                    ? "address resolution failed, nothing answered since -> connectivity limited"
                    : "no failed address resolution"))
            }
            lines += family.activeCheck
        }
        if let nameServers {
            let dns = DNSRule.decide(servers: nameServers, hostIsReachable: evaluation.isReachable, lookups: nameLookup)
            lines.append("DNS: \(evaluation.dns.rawValue) (\(dns.reason))")
            for server in nameServers {
                let verdict = !server.server.servesAnyDomain
                    ? "only for its link's own domains (systemd-resolved: no default route), not counted"
                    : server.isOnThisHost
                    ? "on this host (a local resolver: where it forwards is not visible here), counts while the host is reachable"
                    : server.verdict.isReachable ? "routed: \(server.verdict.reason)" : "not routed: \(server.verdict.reason)"
                lines.append("  nameserver \(server.server.address) from \(server.server.origin.description): \(Self.routeText(server.facts)) -> \(verdict)")
            }
        }
        lines += nat64Prefixes
        lines.append("Links:")
        for link in links {
            let facts = link.facts
            var state = [facts.isUp ? "up" : "down", facts.hasCarrier ? "carrier" : "no carrier"]
            if facts.isLoopback { state.append("loopback") }
            var line = "  \(facts.name) (index \(facts.index)): \(state.joined(separator: ", ")); transport \(facts.transport.rawValue) (\(facts.transportReason))"
            if let underlying = facts.underlying { line += " over \(underlying.name) (\(underlying.transport.rawValue))" }
            if facts.isMetered || facts.meteredReason != .transport { line += "; \(facts.isMetered ? "metered" : "not metered") (\(facts.meteredReason.rawValue))" }
            if let ignored = facts.ignoreReason { line += "; ignored: \(ignored)" }
            lines.append(line)
            let addresses = link.addresses.map { address in
                address.text + (address.facts.isUsableGlobal ? "" : " (not usable: \(address.facts.isGlobalScope ? "tentative or DAD failed" : "not global scope"))")
            }
            lines.append("    addresses: \(addresses.isEmpty ? "none" : addresses.joined(separator: ", "))")
            lines += link.captivePortalAPIs.map { "    captive-portal API: \($0)" }
        }
        if let omittedLinks {
            lines.append("  ... and \(omittedLinks.count) more link(s) not shown (\(omittedLinks.up) up, \(omittedLinks.withCarrier) with carrier)")
        }
        lines.append("Configuration:")
        lines += configuration.summary.split(separator: "\n").map { "  \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The kernel's answers for one destination in a line: the route (type, gateway, link,
    /// table) and the source, or why there is none.
    static func routeText(_ facts: DestinationFacts) -> String {
        var route: String
        switch facts.lookup {
        case .failed(let code): route = "kernel lookup failed: \(SystemError.describe(errno: code.rawValue))"
        case .route(let found):
            route = "\(found.type.name) route" + (found.gateway.map { " via \($0)" } ?? "")
                + (facts.outputLink.map { " dev \($0.name)" } ?? "") + ", table \(found.table)"
        }
        switch facts.source {
        case .selected(let source): route += ", source \(source.address)" + (source.linkName.map { " (\($0))" } ?? "")
        case .failed(let code): route += ", no source address (connect: \(SystemError.describe(errno: code.rawValue)))"
        }
        return route
    }
}
