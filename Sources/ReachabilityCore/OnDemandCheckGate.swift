/// `CheckConnectivity()`'s rule for who may send a new check to the server.
///
/// - A call while a check runs shares it: it is answered when that check finishes, and starts
///   nothing.
/// - Otherwise a caller starts a new check, at most one per ``windowSeconds``: a call inside its
///   caller's window gets the last result at once.
///
/// A caller is a user (every connection of one uid, root's included, as the bus reports it), or
/// one connection whose user the bus cannot tell. Pure: the caller supplies the clock.
public struct OnDemandCheckGate: Sendable {
    /// What becomes of one call.
    public enum Decision: Sendable, Equatable {
        /// Start a new check now and answer when it finished.
        case startCheck
        /// Answer when the check in flight finished; start nothing.
        case shareCheckInFlight
        /// Answer the last result now (the caller started a check inside its window).
        case lastResult
    }

    /// The shortest time between two checks one caller starts, in seconds.
    public let windowSeconds: Double
    /// The most callers remembered; beyond it, those whose window ended (equal to a new
    /// caller) are forgotten.
    public static let callerLimit = 1024

    /// When each caller last started a check (seconds on a monotonic clock).
    private var lastStart: [String: Double] = [:]

    /// A gate letting each caller start one check per `windowSeconds` (10 s by default).
    public init(windowSeconds: Double = 10) {
        self.windowSeconds = windowSeconds
    }

    /// Decides `caller`'s call at `now` (seconds on a monotonic clock), given whether a check is
    /// in flight; a ``Decision/startCheck`` opens the caller's window.
    public mutating func decide(for caller: CallerShare, checkInFlight: Bool, now: Double) -> Decision {
        if checkInFlight { return .shareCheckInFlight }
        let key = Self.key(of: caller)
        if let started = lastStart[key], now - started < windowSeconds { return .lastResult }
        lastStart[key] = now
        if lastStart.count > Self.callerLimit { lastStart = lastStart.filter { now - $0.value < windowSeconds } }
        return .startCheck
    }

    /// How many callers are remembered.
    public var callerCount: Int { lastStart.count }

    /// The caller's user, or its own connection when the bus could not tell.
    private static func key(of caller: CallerShare) -> String {
        caller.uid.map { "uid \($0)" } ?? caller.name
    }
}
