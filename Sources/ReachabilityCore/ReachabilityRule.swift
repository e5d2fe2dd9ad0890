#if canImport(Glibc)
import Glibc
#endif

/// The verdict of the rule for one destination of one family.
public struct DestinationVerdict: Sendable, Hashable {
    /// The destination's family.
    public var family: AddressFamily
    /// The link that carries traffic to the destination; set only when it is reachable.
    public var link: LinkFacts?
    /// One human sentence: why the destination is (not) reachable.
    public var reason: String

    /// Whether the destination is reachable.
    public var isReachable: Bool { link != nil }

    /// The status a caller asking about this destination sees: for a tunnel, the medium beneath.
    public var status: ReachabilityStatus {
        link.map { ReachabilityStatus(reachableVia: $0.effectiveTransport) } ?? .notReachable
    }
}

/// The decision rule: the one place that turns kernel facts into a reachability answer.
///
/// The truth is what an application gets. Per family, the kernel is asked what a TCP connection
/// to port 443 of a global destination would use: the source address a UDP `connect` selects
/// (the kernel's own choice: `src` hints, policy rules, IPv6 source-specific routes, addresses
/// on other links such as a /32 on `lo`; TCP's own choice where policy rules tell the two
/// protocols apart), then its route lookup for that source and flow. The destination is reachable
/// when that lookup resolves to a unicast route (not unreachable, blackhole, prohibit or throw)
/// whose output link is up with carrier (`IFF_UP` and `IFF_LOWER_UP`, next hop not `linkdown`),
/// is not loopback and not ignored, and the selected source is a global-scope address (or, for
/// a link-local destination, a link-local one) that DAD lets the kernel use, held by a link (wherever it lives; the kernel falls back to `::1`, a
/// link-local address or `0.0.0.0` when it has nothing better, and keeps an IPv6 route's `src`
/// after the address is deleted from another link: neither is reachable).
/// A `local` route, which delivers to this host, never reaches the Internet: for a probe it is
/// not reachable (`local default dev lo`, as transparent proxies set up). For an address a
/// caller asks about (127.0.0.1, ::1, the host's own addresses) it is what the caller's
/// connection takes, and it works while the route's link (loopback) is up and not ignored:
/// reachable through that link, whatever source the kernel picks.
/// The machine is reachable when either family is; the IPv4 link wins when both are (each
/// family's own link is published beside it). When
/// neither is, the reason is the more specific of the two families' reasons.
package enum ReachabilityRule {
    /// Decides reachability of one destination.
    ///
    /// - Parameter facts: the kernel's route lookup and the output link's state.
    /// - Returns: the verdict, with the link when reachable and a reason either way.
    package static func evaluate(_ facts: DestinationFacts) -> DestinationVerdict {
        let family = facts.family
        func notReachable(_ reason: String) -> DestinationVerdict {
            DestinationVerdict(family: family, link: nil, reason: reason)
        }
        let route: RouteFacts
        switch facts.lookup {
        case .failed(let code):
            return notReachable(lookupFailureReason(errno: code))
        case .route(let found):
            route = found
        }
        let leadsToThisHost: Bool
        switch route.type {
        case .unicast:
            leadsToThisHost = false
        case .local where facts.purpose == .callerAddress:
            leadsToThisHost = true
        case .local:
            return notReachable("route leads to this host only")
        default:
            return notReachable("default route is \(route.type.name)")
        }
        guard let index = route.outputInterfaceIndex else {
            return notReachable("default route has no output interface")
        }
        guard let link = facts.outputLink, link.index == index else {
            return notReachable("default route uses unknown interface \(index)")
        }
        if link.isLoopback && !leadsToThisHost { return notReachable("default route leads to loopback \(link.name) only") }
        if let ignored = link.ignoreReason { return notReachable("default route on \(link.name), which is ignored (\(ignored))") }
        if !link.isUp { return notReachable("\(link.name) is down") }
        if !link.hasCarrier || route.isLinkDown { return notReachable("\(link.name) has no carrier") }
        if leadsToThisHost {
            return DestinationVerdict(family: family, link: link, reason: "local route to this host on \(link.name), table \(route.table)")
        }
        let source: SourceAddress
        let usable = facts.destinationScope == .link ? "link-local or global" : "global"
        switch facts.source {
        case .failed(let code) where code == .addressNotAvailable:
            return notReachable("\(link.name) has no usable \(usable) \(family.displayName) address")
        case .failed(let code) where code == .invalidArgument && facts.destinationScope == .link && family == .ipv6:
            return notReachable("a link-local destination needs its link as a zone, e.g. fe80::1%\(link.name)")
        case .failed(let code):
            return notReachable("a connection over \(link.name) fails with errno \(code)")
        case .selected(let selected) where !selected.isUsable(toward: facts.destinationScope):
            let fallback = selected.scope == .unspecified ? "" : "; the kernel would send from \(selected.address)"
            return notReachable("\(link.name) has no usable \(usable) \(family.displayName) address\(fallback)")
        case .selected(let selected) where !selected.isHeld:
            return notReachable("the kernel would send from \(selected.address), which no link holds (a route's src whose address is gone)")
        case .selected(let selected):
            source = selected
        }
        var reason = route.matchedPrefix.map { "route \($0)" } ?? "default route"
        if let gateway = route.gateway { reason += " via \(gateway)" }
        // A CLAT's tun is no VPN: its transport is the uplink's, and the reason names it a CLAT.
        reason += " on \(link.name) (\(link.clatAddress == nil ? link.transport.rawValue : "CLAT")"
        if let underlying = link.underlying {
            reason += " over \(underlying.name), \(underlying.transport.rawValue)"
        } else if link.clatAddress != nil {
            reason += ", \(link.transport.rawValue)"
        }
        reason += "), table \(route.table)"
        if let metric = route.metric { reason += ", metric \(metric)" }
        if let sourceLink = source.linkName, sourceLink != link.name { reason += ", from \(source.address) on \(sourceLink)" }
        return DestinationVerdict(family: family, link: link, reason: reason)
    }

    /// Decides the machine's reachability from its IPv4 and IPv6 probe destinations.
    ///
    /// - Parameters:
    ///   - ipv4: facts for the global IPv4 probe destination.
    ///   - ipv6: facts for the global IPv6 probe destination.
    /// - Returns: the snapshot the daemon publishes.
    package static func decide(ipv4: DestinationFacts, ipv6: DestinationFacts) -> ReachabilitySnapshot {
        let v4 = evaluate(ipv4)
        let v6 = evaluate(ipv6)
        let chosen = v4.isReachable ? v4 : (v6.isReachable ? v6 : nil)
        let reason: String
        switch (chosen, v4.reason == v6.reason) {
        case (let verdict?, _) where verdict.family == .ipv6:
            reason = "IPv6 \(verdict.reason)"
        case (let verdict?, _):
            reason = verdict.reason
        case (nil, true):
            reason = v4.reason
        case (nil, false) where v6.reason == noRouteReason:
            reason = v4.reason
        case (nil, false) where v4.reason == noRouteReason:
            reason = v6.reason
        case (nil, false):
            reason = "IPv4: \(v4.reason); IPv6: \(v6.reason)"
        }
        var snapshot = ReachabilitySnapshot(
            status: chosen?.status ?? .notReachable,
            isIPv4Reachable: v4.isReachable,
            isIPv6Reachable: v6.isReachable,
            interface: chosen?.link?.name ?? "",
            transport: chosen?.link?.transport,
            isMetered: chosen?.link?.isMetered ?? false,
            reason: reason,
            ipv4Link: (v4.link?.name ?? "", v4.link?.transport),
            ipv6Link: (v6.link?.name ?? "", v6.link?.transport)
        )
        snapshot.meteredReason = chosen?.link?.meteredReason ?? .noRoute
        return snapshot
    }

    /// The reason given when the kernel has no route at all for a family. When only one family
    /// says so, the other family's more specific reason is the one published.
    package static let noRouteReason = "no default route"

    private static func lookupFailureReason(errno code: Errno) -> String {
        // The kernel answers a lookup that ends in a non-unicast route with an errno
        // (IPv4 fib_props, IPv6 likewise): unreachable → EHOSTUNREACH, blackhole → EINVAL,
        // prohibit → EACCES, throw past the last table → EAGAIN; no route at all → ENETUNREACH.
        switch code {
        case .networkUnreachable, .resourceTemporarilyUnavailable: noRouteReason
        case .noRouteToHost: "default route is unreachable"
        case .permissionDenied: "default route is prohibit"
        case .invalidArgument: "default route is blackhole"
        case .noSuchDevice: "its zone names no interface of this host"
        default: "route lookup failed with errno \(code)"
        }
    }
}
