/// `CheckConnectivity()`'s rule for who may send a new check to the server.
///
/// - A call while a check runs shares it: it is answered when that check finishes, and starts
///   nothing.
/// - Otherwise a caller starts a new check, at most one per ``windowSeconds``: a call inside its
///   caller's window gets the last result at once.
/// - A call that would wait (for a check it starts or shares) while its caller already has
///   ``waitingCallsPerCaller`` calls waiting is answered busy at once: what one user's calls
///   keep of the daemon while a check is in flight stays bounded (a waiting call holds its bus
///   message until the check ends). The caller says when a call stops waiting
///   (``stoppedWaiting(_:)``): answered, or its connection left.
///
/// A caller is a user (every connection of one uid, root's included, as the bus reports it), or
/// one connection whose user the bus cannot tell. Pure: the caller supplies the clock.
package struct OnDemandCheckGate: Sendable {
    /// What becomes of one call.
    package enum Decision: Sendable, Equatable {
        /// Start a new check now and answer when it finished.
        case startCheck
        /// Answer when the check in flight finished; start nothing.
        case shareCheckInFlight
        /// Answer the last result now (the caller started a check inside its window).
        case lastResult
        /// Answer busy now: the caller has ``OnDemandCheckGate/waitingCallsPerCaller`` calls
        /// waiting already.
        case busy
    }

    /// The shortest time between two checks one caller starts, in seconds.
    package let windowSeconds: Double
    /// The most callers remembered; beyond it, those whose window ended (equal to a new
    /// caller) are forgotten.
    package static let callerLimit = 1024

    /// The most calls one caller may have waiting for a check (an application asks once per
    /// check it wants; a few applications of one user, many times over).
    package static let waitingCallsPerCaller = 32

    /// When each caller last started a check (seconds on a monotonic clock).
    private var lastStart: [String: Double] = [:]
    /// How many calls each caller has waiting (none: absent).
    private var waiting: [String: Int] = [:]

    /// A gate letting each caller start one check per `windowSeconds` (10 s by default).
    package init(windowSeconds: Double = 10) {
        self.windowSeconds = windowSeconds
    }

    /// Decides `caller`'s call at `now` (seconds on a monotonic clock), given whether a check is
    /// in flight; a ``Decision/startCheck`` opens the caller's window. A
    /// ``Decision/startCheck`` or ``Decision/shareCheckInFlight`` counts a waiting call of the
    /// caller's, until ``stoppedWaiting(_:)``.
    package mutating func decide(for caller: CallerShare, checkInFlight: Bool, now: Double) -> Decision {
        let key = Self.key(of: caller)
        if !checkInFlight, let started = lastStart[key], now - started < windowSeconds { return .lastResult }
        guard waiting[key, default: 0] < Self.waitingCallsPerCaller else { return .busy }
        waiting[key, default: 0] += 1
        if checkInFlight { return .shareCheckInFlight }
        lastStart[key] = now
        if lastStart.count > Self.callerLimit { lastStart = lastStart.filter { now - $0.value < windowSeconds } }
        return .startCheck
    }

    /// One of `caller`'s waiting calls stopped waiting: it was answered, or its connection left.
    package mutating func stoppedWaiting(_ caller: CallerShare) {
        let key = Self.key(of: caller)
        guard let count = waiting[key] else { return }
        waiting[key] = count > 1 ? count - 1 : nil
    }

    /// How many calls `caller` has waiting.
    package func waitingCalls(of caller: CallerShare) -> Int {
        waiting[Self.key(of: caller)] ?? 0
    }

    /// How many callers are remembered.
    package var callerCount: Int { lastStart.count }

    /// The caller's user, or its own connection when the bus could not tell.
    private static func key(of caller: CallerShare) -> String {
        caller.uid.map { "uid \($0)" } ?? caller.name
    }
}
