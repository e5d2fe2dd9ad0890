/// What one family's evidence beyond the route says: the passive evidence of the route's
/// gateway (its neighbour entry) and the active check's verdict.
package struct FamilyEvidence: Sendable, Hashable {
    /// What the gateway's neighbour entry says (`limited` after `NUD_FAILED`); nil: nothing.
    package var gateway: Connectivity?
    /// The active check's verdict on the family's path; nil: none yet, or checks off.
    package var check: Connectivity?
    /// The portal's URL the check found when its verdict is `portal`, else "".
    package var checkPortalURL: String
    /// The session the network's captive-portal API described with the check's verdict; nil: none.
    package var session: CaptivePortalSessionReading?

    /// Creates a family's evidence; the defaults say there is none.
    package init(gateway: Connectivity? = nil, check: Connectivity? = nil, checkPortalURL: String = "", session: CaptivePortalSessionReading? = nil) {
        self.gateway = gateway
        self.check = check
        self.checkPortalURL = checkPortalURL
        self.session = session
    }
}

/// The evidence rule: which evidence beyond the route a snapshot carries, beside
/// ``ReachabilityRule`` (which decides the route part).
///
/// Per family, a failed gateway wins over the check's verdict: it says packets do not get out
/// now, while the check's verdict may date from before the gateway failed. Without the
/// gateway's evidence the check's verdict stands. The captive portal's URL is the check's,
/// from the first family (IPv4, then IPv6) whose connectivity is `portal` and whose check
/// found a URL; "" when none did (a portal the gateway's failure hides shows no URL). The
/// captive-portal session likewise: the one the network's API described over the first family
/// whose connectivity is `full` or `portal` (a session is moot where traffic does not get out),
/// as published at the moment of the evaluation (``CaptivePortalSessionReading``); empty when
/// none did.
package enum EvidenceRule {
    /// The snapshot `routes` (``ReachabilityRule``'s decision) with the evidence of each family.
    ///
    /// - Parameters:
    ///   - routes: the snapshot the route rule decided; its evidence and portal are replaced.
    ///   - ipv4: IPv4's evidence.
    ///   - ipv6: IPv6's evidence.
    ///   - now: the time of the evaluation (`CLOCK_BOOTTIME` seconds), which the session's
    ///     `seconds-remaining` is counted down to.
    /// - Returns: `routes` with ``ReachabilitySnapshot/ipv4Evidence``,
    ///   ``ReachabilitySnapshot/ipv6Evidence``, ``ReachabilitySnapshot/captivePortal`` and
    ///   ``ReachabilitySnapshot/captivePortalSession`` set.
    package static func decide(_ routes: ReachabilitySnapshot, ipv4: FamilyEvidence, ipv6: FamilyEvidence, now: Double = 0) -> ReachabilitySnapshot {
        var next = routes
        next.ipv4Evidence = ipv4.gateway ?? ipv4.check
        next.ipv6Evidence = ipv6.gateway ?? ipv6.check
        next.captivePortal = [(next.ipv4Connectivity, ipv4.checkPortalURL), (next.ipv6Connectivity, ipv6.checkPortalURL)]
            .first { $0.0 == .portal && !$0.1.isEmpty }?.1 ?? ""
        next.captivePortalSession = session(of: [(next.ipv4Connectivity, ipv4.session), (next.ipv6Connectivity, ipv6.session)])?
            .published(at: now) ?? CaptivePortalSession()
        return next
    }

    /// The session ``decide(_:ipv4:ipv6:now:)`` publishes, of the families' connectivity and
    /// sessions in order (IPv4's, IPv6's); nil when none: the walk counts it down with
    /// ``CaptivePortalSessionReading/nextChange(after:)``.
    public static func session(of families: [(Connectivity, CaptivePortalSessionReading?)]) -> CaptivePortalSessionReading? {
        families.first { [.full, .portal].contains($0.0) && $0.1 != nil }?.1
    }

    /// A destination's snapshot with the machine's evidence beyond the route, for the routes
    /// they share: per family, the machine's evidence for that family when the destination's
    /// route of that family leaves through the machine's interface for it (the path the
    /// machine's evidence is about), else none (`unknown`). The portal's URL comes with a
    /// `portal`. `reachabilityctl wait --host H --connectivity full` needs this: a destination
    /// has no evidence of its own. `DNS` is the machine's: names resolve machine-wide.
    ///
    /// - Parameters:
    ///   - destination: the destination's snapshot (its routes per family, from `CheckAddress`).
    ///   - machine: the machine's snapshot, with its evidence.
    /// - Returns: `destination` with ``ReachabilitySnapshot/ipv4Evidence``,
    ///   ``ReachabilitySnapshot/ipv6Evidence``, ``ReachabilitySnapshot/captivePortal``,
    ///   ``ReachabilitySnapshot/captivePortalSession`` (with `full` or `portal`) and
    ///   ``ReachabilitySnapshot/dns`` set.
    package static func destination(_ destination: ReachabilitySnapshot, machine: ReachabilitySnapshot) -> ReachabilitySnapshot {
        func shared(_ destinationInterface: String, _ machineInterface: String) -> Bool {
            !destinationInterface.isEmpty && destinationInterface == machineInterface
        }
        var next = destination
        next.ipv4Evidence = shared(destination.ipv4Interface, machine.ipv4Interface) ? machine.ipv4Evidence : nil
        next.ipv6Evidence = shared(destination.ipv6Interface, machine.ipv6Interface) ? machine.ipv6Evidence : nil
        next.captivePortal = next.connectivity == .portal ? machine.captivePortal : ""
        next.captivePortalSession = [.full, .portal].contains(next.connectivity) ? machine.captivePortalSession : CaptivePortalSession()
        next.dns = machine.dns
        next.nat64Prefix = machine.nat64Prefix
        next.ipv4Access = machine.ipv4Access
        return next
    }
}
