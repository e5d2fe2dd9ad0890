/// Whether traffic gets out beyond the route (the `Connectivity` properties' wire strings).
public enum Connectivity: String, Sendable, CaseIterable, Hashable {
    /// A route exists and there is no evidence either way (active checks off, nothing seen).
    case unknown
    /// No route: `Status` is `not-reachable` (for the family: it is not reachable).
    case none
    /// A route exists but the evidence says packets do not get out.
    case limited
    /// A captive portal stands in the way.
    case portal
    /// The check got the expected answer.
    case full

    /// The order of "better" that `Connectivity` takes the better family by:
    /// full > portal > limited > unknown > none.
    package var rank: Int {
        switch self {
        case .none: 0
        case .unknown: 1
        case .limited: 2
        case .portal: 3
        case .full: 4
        }
    }

    /// How well traffic gets through by this value, the order `DownDelaySec=` damps drops in:
    /// full > unknown (no evidence) > portal > limited > none. (``rank`` is another order: the
    /// better family is the one with more evidence.)
    package var usability: Int {
        switch self {
        case .none: 0
        case .limited: 1
        case .portal: 2
        case .unknown: 3
        case .full: 4
        }
    }

    /// This value as evidence beyond the route (`limited`, `portal`, `full`); nil for `unknown`
    /// and `none`, which say there is none.
    package var asEvidence: Connectivity? {
        self == .unknown || self == .none ? nil : self
    }
}
