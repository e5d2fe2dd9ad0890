// A CLAT (464XLAT's customer-side translator, RFC 6877) is known, never guessed.
//
// The evidence: the link holds an IPv4 address from 192.0.0.0/29, RFC 7335's IPv4 Service
// Continuity Prefix, which RFC 6877 §6.3 points a CLAT to when no IPv4 address is delegated to it
// (clatd's 192.0.0.1, Android's clatd 192.0.0.4, tayga set up as a CLAT, NetworkManager's CLAT on
// the uplink itself). An IPv4 route is a CLAT's when its output link holds one. Nothing else
// counts: a tun device with another address is a VPN, even on an IPv6-only uplink with a NAT64
// prefix known — IPv6-only networks are the ones that advertise PREF64, and VPN clients bring up
// tun devices with IPv4 routes there too. (A DS-Lite B4 takes its address from the same /29 and
// would read as a CLAT; it too carries IPv4 over the IPv6 uplink.)
//
// Through a CLAT an application's IPv4 traffic leaves translated on the uplink (IPv6's route's
// link): the properties (`Status`, `Interface`, `Transport`, `Metered`, IPv4's) and
// `CheckDestination` describe that link, and the reason says "via CLAT". The CLAT hands the
// translated packet to the network's NAT64, so what no NAT64 translates (RFC 6052 §3.1) is no
// more reachable through it than through NAT64 directly (``DestinationRule``).

/// An IPv4 route that leaves through a CLAT, and what an application's traffic finally leaves on.
public struct CLATPath: Sendable, Hashable {
    /// The CLAT's link: the IPv4 route's, holding an address from 192.0.0.0/29.
    public var clat: LinkFacts
    /// The link traffic leaves on, translated: the uplink when it is another link than the
    /// CLAT's, else the CLAT's own (a CLAT on the uplink itself, or an uplink not known).
    public var exit: LinkFacts
    /// What the reason adds: "; via CLAT on clat onto wlan0 (wifi)", or "; via CLAT".
    public var reasonSuffix: String

    /// The path of an IPv4 route through `routeLink`; nil when the route is not a CLAT's (its link
    /// holds no address from RFC 7335's range, ``LinkFacts/clatAddress``).
    ///
    /// - Parameters:
    ///   - routeLink: the IPv4 route's output link, nil when the route has none.
    ///   - uplink: the link of IPv6's route, which the CLAT translates onto; nil when IPv6 has none.
    public init?(routeLink: LinkFacts?, uplink: LinkFacts?) {
        guard let routeLink, routeLink.clatAddress != nil else { return nil }
        clat = routeLink
        if let uplink, uplink.index != routeLink.index {
            exit = uplink
            reasonSuffix = "; via CLAT on \(routeLink.name) onto \(uplink.name) (\(uplink.effectiveTransport.rawValue))"
        } else {
            exit = routeLink
            reasonSuffix = "; via CLAT"
        }
    }

    /// Whether `address` is in RFC 7335's IPv4 Service Continuity Prefix, 192.0.0.0/29: the
    /// addresses a CLAT gives itself.
    public static func isCLATAddress(_ address: IPAddress) -> Bool {
        address.family == .ipv4 && address.bytes[0...2] == [192, 0, 0] && address.bytes[3] < 8
    }

    /// The verdict on an IPv4 destination reached through this path: its link the exit, its
    /// reason with ``reasonSuffix``.
    public func describing(_ verdict: DestinationVerdict) -> DestinationVerdict {
        var described = verdict
        described.link = exit
        described.reason += reasonSuffix
        return described
    }
}

extension ReachabilitySnapshot {
    /// The snapshot as an application sees it through `path`, IPv4's route's CLAT: with
    /// ``ipv4Access`` `clat` and IPv4 reachable, `Status`, `Interface`, `Transport` and `Metered`
    /// (the status's family is IPv4's) and IPv4's interface and transport describe the link the
    /// CLAT translates onto, and `Reason` ends in ``CLATPath/reasonSuffix``. Otherwise the
    /// snapshot unchanged.
    public func describing(_ path: CLATPath?) -> ReachabilitySnapshot {
        guard let path, ipv4Access == .clat, isIPv4Reachable else { return self }
        var described = self
        described.reason += path.reasonSuffix
        described.status = ReachabilityStatus(reachableVia: path.exit.effectiveTransport)
        described.interface = path.exit.name
        described.transport = path.exit.transport
        described.isMetered = path.exit.isMetered
        described.meteredReason = path.exit.meteredReason
        described.ipv4Interface = path.exit.name
        described.ipv4Transport = path.exit.transport
        return described
    }
}
