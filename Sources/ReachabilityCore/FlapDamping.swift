/// Flap damping (`DownDelaySec=`): whether a transition should be held back.
package enum FlapDamping {
    /// Whether going from `published` to `next` must wait `delaySeconds` first: a loss of
    /// reachability, and a drop of `Connectivity` while the status and interface stay (a drop
    /// with another change is published at once, with it); only when a delay is configured.
    package static func holdsTransition(from published: ReachabilitySnapshot, to next: ReachabilitySnapshot, delaySeconds: Double) -> Bool {
        guard delaySeconds > 0, published.isReachable else { return false }
        if !next.isReachable { return true }
        return next.status == published.status && next.interface == published.interface
            && next.connectivity.usability < published.connectivity.usability
    }
}
