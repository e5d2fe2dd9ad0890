/// The session a network's captive-portal API (RFC 8908 §5) describes, as `CaptivePortalSession`
/// publishes it: each member nil when the API did not give it (or gave it in a form the RFC does
/// not allow), so that "unlimited" and "not said" are not confused.
public struct CaptivePortalSession: Sendable, Hashable {
    /// `seconds-remaining`: the seconds until the network holds this host behind its portal again.
    public var secondsRemaining: UInt64?
    /// `bytes-remaining`: the bytes this host may still send and receive before that.
    public var bytesRemaining: UInt64?
    /// `venue-info-url`: a page about the venue (https only).
    public var venueInfoURL: String?
    /// `can-extend-session`: whether the user can extend the session at the portal's page.
    public var canExtendSession: Bool?

    /// The keys of the published dictionary, RFC 8908's own names.
    public enum Key: String, Sendable, CaseIterable {
        /// `seconds-remaining` (t).
        case secondsRemaining = "seconds-remaining"
        /// `bytes-remaining` (t).
        case bytesRemaining = "bytes-remaining"
        /// `venue-info-url` (s).
        case venueInfoURL = "venue-info-url"
        /// `can-extend-session` (b).
        case canExtendSession = "can-extend-session"
    }

    /// Creates a session description; with no argument, one the API said nothing of.
    public init(secondsRemaining: UInt64? = nil, bytesRemaining: UInt64? = nil, venueInfoURL: String? = nil, canExtendSession: Bool? = nil) {
        self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining
        self.venueInfoURL = venueInfoURL
        self.canExtendSession = canExtendSession
    }

    /// Whether the API gave none of the keys.
    public var isEmpty: Bool { self == CaptivePortalSession() }

    /// The keys given, with their values, in RFC 8908's order: "seconds-remaining 600,
    /// venue-info-url https://venue.example/" ("" when none).
    public var summary: String {
        let values: [(Key, String?)] = [
            (.secondsRemaining, secondsRemaining.map { String($0) }), (.bytesRemaining, bytesRemaining.map { String($0) }),
            (.venueInfoURL, venueInfoURL), (.canExtendSession, canExtendSession.map { $0 ? "yes" : "no" }),
        ]
        return values.compactMap { key, value in value.map { "\(key.rawValue) \($0)" } }.joined(separator: ", ")
    }

    /// The session an API's JSON object describes: `seconds-remaining` and `bytes-remaining`
    /// when they are whole numbers from 0 to 2⁶⁴−1, `venue-info-url` when it is an https URL (as
    /// for `user-portal-url`: RFC 8908 requires it, and a `javascript:` URL would reach every
    /// client), `can-extend-session` when it is a boolean; anything else is left out.
    package init(apiMembers members: [String: JSONValue]) {
        func count(_ key: Key) -> UInt64? {
            guard case .number(let number)? = members[key.rawValue], number >= 0, number < 0x1p64, number.rounded() == number else { return nil }
            return UInt64(number)
        }
        var venue: String?
        if case .string(let text)? = members[Key.venueInfoURL.rawValue], URLScheme.of(text) == "https" { venue = text }
        var extendable: Bool?
        if case .boolean(let flag)? = members[Key.canExtendSession.rawValue] { extendable = flag }
        self.init(secondsRemaining: count(.secondsRemaining), bytesRemaining: count(.bytesRemaining), venueInfoURL: venue, canExtendSession: extendable)
    }
}

/// A session as an API read gave it, and when (seconds of `CLOCK_BOOTTIME`, so that time spent
/// suspended counts): what the published session is computed from until the next read.
///
/// `seconds-remaining` counts down between reads without a wake-up per second: the published
/// value changes only when the time left falls to the next of a fixed set of marks (every minute
/// in the last 16 minutes; above that 8 marks per doubling, each an eighth of its octave apart),
/// and is then exactly the time left; until the next mark it stays, at most a minute or an eighth
/// high. A client that keeps the time of the announcement knows the deadline to the second. A
/// day-long session is announced about 70 times; 0 is announced when it runs out.
/// `bytes-remaining` is the API's figure of its last read: the daemon does not count the bytes.
package struct CaptivePortalSessionReading: Sendable, Hashable {
    /// The session as read.
    package var session: CaptivePortalSession
    /// When it was read (`CLOCK_BOOTTIME` seconds).
    package var readAt: Double

    /// Creates a reading.
    package init(session: CaptivePortalSession, readAt: Double) {
        self.session = session
        self.readAt = readAt
    }

    /// The session to publish at `now` (`CLOCK_BOOTTIME` seconds): `seconds-remaining` counted
    /// down to the last mark passed (never above what was read, 0 once the session ran out).
    package func published(at now: Double) -> CaptivePortalSession {
        guard let read = session.secondsRemaining else { return session }
        var published = session
        published.secondsRemaining = min(read, Self.mark(atOrAbove: remaining(at: now, read: read)))
        return published
    }

    /// When (`CLOCK_BOOTTIME` seconds) ``published(at:)`` next gives another value than at `now`;
    /// nil when it never will (no `seconds-remaining`, or it is 0 already).
    package func nextChange(after now: Double) -> Double? {
        guard let read = session.secondsRemaining, let current = published(at: now).secondsRemaining, current > 0 else { return nil }
        return readAt + Double(read) - Double(Self.mark(below: current))
    }

    /// The whole seconds left at `now`, rounded up.
    private func remaining(at now: Double, read: UInt64) -> UInt64 {
        let left = Double(read) - (now - readAt)
        guard left > 0 else { return 0 }
        return left >= 0x1p63 ? read : UInt64(left.rounded(.up))
    }

    /// The distance between the marks around `seconds`: a minute up to 16 minutes, then doubling
    /// with each doubling of the time (an eighth of the octave).
    private static func step(around seconds: UInt64) -> UInt64 {
        var step: UInt64 = 60
        var octaveEnd: UInt64 = 16 * 60
        while seconds > octaveEnd, octaveEnd <= UInt64.max / 4 {
            step *= 2
            octaveEnd *= 2
        }
        return step
    }

    /// The smallest mark at or above `seconds` (`seconds` itself past the marks' range).
    package static func mark(atOrAbove seconds: UInt64) -> UInt64 {
        let step = step(around: seconds)
        let (rounded, overflow) = (seconds / step + (seconds % step == 0 ? 0 : 1)).multipliedReportingOverflow(by: step)
        return overflow ? seconds : rounded
    }

    /// The largest mark below `seconds` (> 0).
    package static func mark(below seconds: UInt64) -> UInt64 {
        let step = step(around: seconds - 1)
        return (seconds - 1) / step * step
    }
}
