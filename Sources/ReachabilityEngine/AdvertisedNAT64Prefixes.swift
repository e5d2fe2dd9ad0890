import RTNetlink
import ReachabilityCore

/// The NAT64 prefixes routers advertise (RFC 8781's PREF64 option), per link and router, each
/// until its lifetime runs out: the kernel hands the option over (`RTM_NEWNDUSEROPT`) and never
/// withdraws it, so the lifetime is kept here. Pure state: the times are given (seconds on a
/// monotonic clock); the engine feeds it, expires it at ``nextExpiry``, and asks which prefix is
/// in use.
///
/// The prefix in use, when several are known: one advertised on the link that carries IPv6's
/// route first (the NAT64 is reached over IPv6: a prefix from another link is routed elsewhere,
/// or not at all), then the one learned first (a second router's prefix does not displace the
/// one applications already use), then the lowest prefix, so that the choice is stable.
struct AdvertisedNAT64Prefixes: Equatable {
    /// One prefix one router advertised on one link.
    struct Advertisement: Equatable {
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

    /// Records a PREF64 option `router` sent on `link` at `now`: a new prefix, a refreshed
    /// lifetime, or (lifetime 0) a withdrawal.
    ///
    /// - Returns: whether the prefixes known changed (not only a lifetime).
    @discardableResult
    mutating func set(_ option: NAT64PrefixOption, on link: InterfaceIndex, router: IPAddress?, now: Double) -> Bool {
        let existing = advertisements.firstIndex { $0.prefix == option.prefix && $0.link == link && $0.router == router }
        guard option.lifetimeSeconds > 0 else {
            guard let existing else { return false }
            advertisements.remove(at: existing)
            return true
        }
        let expires = now + Double(option.lifetimeSeconds)
        if let existing {
            advertisements[existing].expires = expires
            return false
        }
        advertisements.append(Advertisement(prefix: option.prefix, link: link, router: router, learned: now, expires: expires))
        return true
    }

    /// Forgets what was advertised on `link` (it went down or away: the network that comes back
    /// may not be the one that advertised it).
    ///
    /// - Returns: whether that changed the prefixes.
    mutating func forget(_ link: InterfaceIndex) -> Bool {
        removeAll { $0.link == link }
    }

    /// Forgets what `router` advertised on `link` once it is no longer a router there (the
    /// kernel removed its default route: it advertised a router lifetime of 0, or that ran out).
    ///
    /// - Returns: whether that changed the prefixes.
    mutating func forget(router: IPAddress, on link: InterfaceIndex) -> Bool {
        removeAll { $0.link == link && $0.router == router }
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
            if left.learned != right.learned { return left.learned < right.learned }
            return left.prefix.network.bytes.lexicographicallyPrecedes(right.prefix.network.bytes)
        }
    }

    /// `Explain()`'s lines: each prefix known, where it came from and for how long, and which one
    /// is in use and why.
    ///
    /// - Parameters:
    ///   - ipv6Link: the link of IPv6's route, nil when none.
    ///   - now: the clock's current time.
    ///   - linkName: a link's name for its index.
    func explanation(ipv6Link: InterfaceIndex?, now: Double, linkName: (InterfaceIndex) -> String) -> [String] {
        guard let used = inUse(ipv6Link: ipv6Link) else { return ["NAT64 prefix: none (no router advertised one)"] }
        var why = "the only one known"
        if advertisements.count > 1 {
            why = used.link == ipv6Link && advertisements.contains(where: { $0.link != ipv6Link })
                ? "advertised on the link of IPv6's route" : "learned first"
        }
        return ["NAT64 prefix: \(used.prefix) (\(why))"] + advertisements.map { advertisement in
            let remaining = max(0, Int((advertisement.expires - now).rounded(.up)))
            return "  \(advertisement.prefix) from router advertisement (RFC 8781)"
                + (advertisement.router.map { " by \($0)" } ?? "") + " on \(linkName(advertisement.link)), \(remaining) s left"
        }
    }

    private mutating func removeAll(where condition: (Advertisement) -> Bool) -> Bool {
        let count = advertisements.count
        advertisements.removeAll(where: condition)
        return advertisements.count != count
    }
}
