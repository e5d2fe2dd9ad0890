import RTNetlink
import ReachabilityCore

/// The NAT64 prefixes routers advertise (RFC 8781's PREF64 option), one per link and router,
/// each until its own lifetime runs out (a router that stops being a default router, router
/// lifetime 0, still vouches for its prefix: RFC 8781 gives the prefix a lifetime of its own):
/// the kernel hands the option over (`RTM_NEWNDUSEROPT`) and never withdraws it, so the
/// lifetime is kept here; where systemd-networkd handles the router
/// advertisements itself the kernel hands over nothing, and networkd's record of the link is
/// taken instead. Pure state: the times are given (seconds on `CLOCK_BOOTTIME`); the engine feeds
/// it, expires it at ``nextExpiry``, and asks which prefix is in use.
///
/// The prefix in use, when several are known: one advertised on the link that carries IPv6's
/// route first (the NAT64 is reached over IPv6: a prefix from another link is routed elsewhere,
/// or not at all), then one the kernel handed over before one from networkd's record (the
/// kernel's is first-hand), then the one learned first (a second router's prefix does not
/// displace the one applications already use), then the lowest prefix, so that the choice is
/// stable.
struct AdvertisedNAT64Prefixes: Equatable {
    /// Who told the daemon about a prefix, in the order of preference.
    enum Source: Int, Comparable {
        /// The kernel handed the router advertisement's option over (`RTM_NEWNDUSEROPT`).
        case routerAdvertisement
        /// systemd-networkd handled the router advertisement and recorded the option.
        case networkd

        /// How `Explain()` names it.
        var description: String {
            switch self {
            case .routerAdvertisement: "from router advertisement (RFC 8781)"
            case .networkd: "from systemd-networkd (RFC 8781)"
            }
        }

        static func < (left: Source, right: Source) -> Bool { left.rawValue < right.rawValue }
    }

    /// One prefix one router advertised on one link.
    struct Advertisement: Equatable {
        /// Who told the daemon.
        var source: Source = .routerAdvertisement
        /// The prefix.
        var prefix: IPPrefix
        /// The link it came in on.
        var link: InterfaceIndex
        /// The router that sent it (its link-local address), when the kernel said.
        var router: IPAddress?
        /// When it was first advertised (the clock of ``AdvertisedNAT64Prefixes``).
        var learned: Double
        /// When its lifetime runs out.
        var expires: Double
    }

    /// The prefixes known, in the order they were learned.
    private(set) var advertisements: [Advertisement] = []

    /// The most prefixes kept from the kernel's options (one per router and link): a flood of
    /// advertisements from forged routers costs a bounded set, and the ones learned first (in
    /// use) stay.
    static let advertisedCapacity = 8

    /// Records a PREF64 option `router` sent on `link` at `now`: a new prefix, a refreshed
    /// lifetime, or (lifetime 0) a withdrawal. One prefix is kept per router and link, as Android
    /// keeps one per network: a router that advertises another prefix replaces its previous one
    /// (of several options in one advertisement, the last is kept). Once
    /// ``advertisedCapacity`` routers' prefixes are kept, a new router's replaces the one learned
    /// last, so that those learned first stay. At most ``advertisedCapacity`` entries are
    /// searched, whatever the advertisements.
    ///
    /// - Returns: whether the prefixes known changed (not only a lifetime).
    @discardableResult
    mutating func set(_ option: NAT64PrefixOption, on link: InterfaceIndex, router: IPAddress?, now: Double) -> Bool {
        let existing = advertisements.firstIndex { $0.source == .routerAdvertisement && $0.link == link && $0.router == router }
        guard option.lifetimeSeconds > 0 else {
            guard let existing, advertisements[existing].prefix == option.prefix else { return false }
            advertisements.remove(at: existing)
            return true
        }
        let expires = now + Double(option.lifetimeSeconds)
        if let existing {
            guard advertisements[existing].prefix != option.prefix else {
                advertisements[existing].expires = expires
                return false
            }
            advertisements.remove(at: existing)
        } else if advertisements.count(where: { $0.source == .routerAdvertisement }) >= Self.advertisedCapacity,
                  let latest = advertisements.lastIndex(where: { $0.source == .routerAdvertisement }) {
            advertisements.remove(at: latest)
        }
        advertisements.append(Advertisement(prefix: option.prefix, link: link, router: router, learned: now, expires: expires))
        return true
    }

    /// Takes systemd-networkd's record of `link` (each prefix with its router and the end of its
    /// lifetime; nil: no end given, taken as RFC 8781's longest, 65528 s from `now`) in place of
    /// its previous one. A prefix networkd still records keeps when it was learned.
    ///
    /// - Returns: whether the prefixes known changed (not only a lifetime).
    mutating func replaceNetworkdRecord(
        _ records: [(prefix: IPPrefix, router: IPAddress?, expires: Double?)], of link: InterfaceIndex, now: Double
    ) -> Bool {
        let previous = advertisements.filter { $0.source == .networkd && $0.link == link }
        advertisements.removeAll { $0.source == .networkd && $0.link == link }
        for record in records where record.expires.map({ $0 > now }) ?? true {
            let learned = previous.first { $0.prefix == record.prefix && $0.router == record.router }?.learned ?? now
            advertisements.append(Advertisement(
                source: .networkd, prefix: record.prefix, link: link, router: record.router, learned: learned,
                expires: record.expires ?? now + Self.longestLifetimeSeconds
            ))
        }
        advertisements.sort { $0.learned < $1.learned }
        let kept = advertisements.filter { $0.source == .networkd && $0.link == link }
        return kept.count != previous.count || !kept.allSatisfy { record in previous.contains { $0.prefix == record.prefix && $0.router == record.router } }
    }

    /// RFC 8781's longest lifetime: 8191 units of 8 s.
    static let longestLifetimeSeconds: Double = 65528

    /// Forgets what was advertised on `link` (it went down or away: the network that comes back
    /// may not be the one that advertised it).
    ///
    /// - Returns: whether that changed the prefixes.
    mutating func forget(_ link: InterfaceIndex) -> Bool {
        removeAll { $0.link == link }
    }

    /// Forgets the prefixes whose lifetime has run out at `now`.
    ///
    /// - Returns: whether that changed the prefixes.
    mutating func expire(now: Double) -> Bool {
        removeAll { $0.expires <= now }
    }

    /// When the next lifetime runs out; nil when no prefix is known.
    var nextExpiry: Double? { advertisements.map(\.expires).min() }

    /// The prefix in use (see the type's rule), given the link of IPv6's route (nil: none).
    func inUse(ipv6Link: InterfaceIndex?) -> Advertisement? {
        advertisements.min { left, right in
            let leftOnRoute = left.link == ipv6Link, rightOnRoute = right.link == ipv6Link
            if leftOnRoute != rightOnRoute { return leftOnRoute }
            if left.source != right.source { return left.source < right.source }
            if left.learned != right.learned { return left.learned < right.learned }
            return left.prefix.network.bytes.lexicographicallyPrecedes(right.prefix.network.bytes)
        }
    }

    /// `Explain()`'s lines: each prefix known, where it came from and for how long, and which one
    /// is in use and why; with none advertised, the one RFC 7050 discovery found, if any.
    ///
    /// - Parameters:
    ///   - ipv6Link: the link of IPv6's route, nil when none.
    ///   - now: the clock's current time.
    ///   - discovered: the prefix RFC 7050 discovery found (it looks only while none is advertised).
    ///   - discovery: its line.
    ///   - linkName: a link's name for its index.
    func explanation(
        ipv6Link: InterfaceIndex?, now: Double, discovered: IPPrefix? = nil, discovery: String? = nil, linkName: (InterfaceIndex) -> String
    ) -> [String] {
        guard let used = inUse(ipv6Link: ipv6Link) else {
            guard let discovered else { return ["NAT64 prefix: none (no router advertised one)"] }
            return ["NAT64 prefix: \(discovered) (no router advertised one: RFC 7050 discovery)"] + (discovery.map { [$0] } ?? [])
        }
        var why = "the only one known"
        let others = advertisements.filter { $0 != used }
        if used.link == ipv6Link, others.contains(where: { $0.link != ipv6Link }) {
            why = "advertised on the link of IPv6's route"
        } else if others.contains(where: { $0.source > used.source && ($0.link == ipv6Link) == (used.link == ipv6Link) }) {
            why = "handed over by the kernel: preferred to systemd-networkd's record"
        } else if !others.isEmpty {
            why = "learned first"
        }
        return ["NAT64 prefix: \(used.prefix) (\(why))"] + advertisements.map { advertisement in
            let remaining = max(0, Int((advertisement.expires - now).rounded(.up)))
            return "  \(advertisement.prefix) \(advertisement.source.description)"
                + (advertisement.router.map { " by \($0)" } ?? "") + " on \(linkName(advertisement.link)), \(remaining) s left"
        }
    }

    private mutating func removeAll(where condition: (Advertisement) -> Bool) -> Bool {
        let count = advertisements.count
        advertisements.removeAll(where: condition)
        return advertisements.count != count
    }
}
