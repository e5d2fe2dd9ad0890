/// `[Connectivity]`: the opt-in active check. With no `CheckURL=` (the default) the daemon
/// sends nothing.
public struct ConnectivityCheckSettings: Sendable, Hashable {
    /// `CheckURL=`: an http(s) URL answering 204 (or `checkResponse`); "" turns checks off.
    public var checkURL = ""
    /// `CheckResponse=`: the expected body's prefix (with HTTP 200); "" expects HTTP 204.
    public var checkResponse = ""
    /// `CheckIntervalSec=`: the time between checks while `full`, and the longest back-off.
    public var intervalSeconds: Double = 300
    /// `CheckTimeoutSec=`: one check's limit, connection included.
    public var timeoutSeconds: Double = 10
    /// `CaptivePortalAPI=`: query the captive-portal API a network advertises (RFC 8908),
    /// only while checks are on.
    public var queriesCaptivePortalAPI = true
    /// `CaptivePortalAPICAFile=`: a PEM file of CAs trusted for that API besides the system's.
    public var captivePortalAPICAFile = ""

    /// Checks off, the API not queried.
    public init() {}

    /// Whether checks are on (a `CheckURL=` is set).
    public var isEnabled: Bool { !checkURL.isEmpty }

    /// Whether `family` is checked: every family, except when `CheckURL=`'s host is a literal
    /// address (`http://192.0.2.1/`, `http://[2001:db8::1]/`), which only its own family can
    /// reach (the other would always fail, saying nothing about its path).
    public func checks(_ family: AddressFamily) -> Bool {
        guard let literal = Self.host(of: checkURL).flatMap({ IPAddress($0) }) else { return true }
        return literal.family == family
    }

    /// The host of an http(s) URL: between "//" and the next "/", "?", "#" or port, without
    /// user info and IPv6 brackets.
    static func host(of url: String) -> String? {
        // Not firstRange(of:): it would link _StringProcessing and _RegexParser into the daemon.
        guard let scheme = url.indices.first(where: { url[$0...].hasPrefix("://") }) else { return nil }
        let start = url.index(scheme, offsetBy: 3)
        var authority = url[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        return String(authority.prefix { $0 != ":" })
    }
}

/// One HTTP GET of a check, as the daemon asks its HTTP client for it.
public struct HTTPCheckRequest: Sendable, Hashable {
    /// The URL.
    public var url: String
    /// Resolve and connect over this family only.
    public var family: AddressFamily
    /// The interface the socket is bound to (`SO_BINDTODEVICE`): the route's output link.
    public var interfaceName: String
    /// The whole exchange's limit.
    public var timeoutSeconds: Double
    /// The `Accept` header, if any (`application/captive+json` for the API).
    public var accept: String?
    /// A CA file trusted besides the system's store.
    public var caFile: String?

    /// Creates a request.
    public init(url: String, family: AddressFamily, interfaceName: String, timeoutSeconds: Double, accept: String? = nil, caFile: String? = nil) {
        self.url = url
        self.family = family
        self.interfaceName = interfaceName
        self.timeoutSeconds = timeoutSeconds
        self.accept = accept
        self.caFile = caFile
    }
}

/// What one HTTP exchange came to.
public enum HTTPCheckOutcome: Sendable, Hashable {
    /// A response: its status, the absolute `Location` of a redirection, the body's first bytes.
    case response(status: Int, redirect: String?, body: [UInt8])
    /// No response: timeout, refusal, reset, name not resolvable, TLS failure... (the text says
    /// which). `silent`: nothing answered at all — a timeout, or `EPERM` (a local firewall, or the
    /// unit's `IPAddressDeny=`, dropped the packet) — rather than a refusal or another answer.
    case failed(String, silent: Bool = false)

    /// The most body bytes an exchange keeps (a portal page's start, an API's JSON).
    public static let bodyLimit = 16 * 1024

    /// "HTTP 204", "HTTP 302 to http://portal/", "failed: Timeout was reached".
    public var summary: String {
        switch self {
        case .response(let status, let redirect?, _): "HTTP \(status) to \(redirect)"
        case .response(let status, nil, _): "HTTP \(status)"
        case .failed(let why, _): "failed: \(why)"
        }
    }
}

/// What a network's captive-portal API (RFC 8908) answered.
package struct CaptivePortalAPIAnswer: Sendable, Hashable {
    /// `captive`: whether the network holds this host behind its portal.
    package var isCaptive: Bool
    /// `user-portal-url`: the page a user opens to get through, if given.
    package var userPortalURL: String?
    /// The rest of RFC 8908 §5's keys: the session's time and bytes left, the venue's page,
    /// whether the session can be extended (``CaptivePortalSession/init(apiMembers:)``).
    package var session: CaptivePortalSession

    /// Creates an answer.
    package init(isCaptive: Bool, userPortalURL: String? = nil, session: CaptivePortalSession = CaptivePortalSession()) {
        self.isCaptive = isCaptive
        self.userPortalURL = userPortalURL
        self.session = session
    }

    /// The answer in an HTTP outcome: a 200 whose body is a JSON object with a boolean
    /// `captive`; nil for anything else (the API then says nothing). A `user-portal-url` that is
    /// not https (RFC 8908 requires it; `javascript:` would reach every client) is dropped.
    package init?(_ outcome: HTTPCheckOutcome) {
        guard case .response(200, _, let body) = outcome, case .object(let members)? = JSONValue.parse(body),
              case .boolean(let captive)? = members["captive"]
        else { return nil }
        var url: String?
        if case .string(let text)? = members["user-portal-url"], URLScheme.of(text) == "https" { url = text }
        self.init(isCaptive: captive, userPortalURL: url, session: CaptivePortalSession(apiMembers: members))
    }
}

/// The scheme of a URL, lower-cased: "https" of "HTTPS://portal/"; nil without one.
package enum URLScheme {
    /// The scheme of `url`, lower-cased; nil without one.
    package static func of(_ url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), colon > url.startIndex,
              url[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
              url[url.startIndex].isLetter
        else { return nil }
        return url[..<colon].lowercased()
    }
}

/// The verdicts of the active check: pure functions of what the HTTP exchanges got.
package enum ConnectivityCheckVerdict {
    /// The check URL's outcome as evidence, with the portal's URL when it redirected: 204 (or
    /// 200 with the expected body prefix) → `full`; 3xx → `portal` (the `Location`, when it is
    /// http or https); other content → `portal`; no response → `limited`.
    package static func of(_ outcome: HTTPCheckOutcome, expecting response: String) -> (connectivity: Connectivity, portalURL: String) {
        switch outcome {
        case .failed: return (.limited, "")
        case .response(let status, let redirect, let body):
            if response.isEmpty ? status == 204 : status == 200 && body.starts(with: Array(response.utf8)) { return (.full, "") }
            if (300...399).contains(status) {
                let web = redirect.flatMap { ["http", "https"].contains(URLScheme.of($0)) ? $0 : nil }
                return (.portal, web ?? "")
            }
            return (.portal, "")
        }
    }

    /// The check's verdict with the network's API answer: `captive: true` makes it `portal`
    /// (its `user-portal-url` first); otherwise the check decides.
    package static func combining(check: (connectivity: Connectivity, portalURL: String), api: CaptivePortalAPIAnswer?) -> (connectivity: Connectivity, portalURL: String) {
        guard let api, api.isCaptive else { return check }
        return (.portal, api.userPortalURL ?? check.portalURL)
    }
}

/// When checks run (as NetworkManager does): every interval while `full`; otherwise after 1 s,
/// doubling per check that is not `full`, up to the interval (``RetryDelays``).
package enum ConnectivityCheckSchedule {
    /// The shortest time between two checks (or RFC 7050 lookups) of a family that a path
    /// change starts: a route flapping costs one per spacing, not one lookup and one HTTP
    /// exchange per flip.
    package static let pathChangeSpacingSeconds: Double = 1

    /// When a check that a path change at `now` asks for starts: at once, unless the last
    /// started at `lastStart` less than ``pathChangeSpacingSeconds`` ago, then at the end of
    /// that spacing (nanoseconds of a monotonic clock).
    package static func startAfterPathChange(at now: UInt64, lastStart: UInt64?) -> UInt64 {
        guard let lastStart else { return now }
        return max(now, lastStart &+ UInt64(pathChangeSpacingSeconds * 1e9))
    }

    /// The seconds until the next check after `verdict`, the `attempt`-th check in a row that
    /// was not `full` (0 for the first); no later than when the session the network's API
    /// described runs out (`sessionSecondsRemaining`), so that the check says at once what the
    /// network does then, but not sooner than ``pathChangeSpacingSeconds``: an API that keeps
    /// saying a second or none is left costs one check per spacing, as a flapping route does.
    package static func delay(after verdict: Connectivity, attempt: Int, intervalSeconds: Double, sessionSecondsRemaining: UInt64? = nil) -> Double {
        let scheduled: Double
        if verdict == .full {
            scheduled = intervalSeconds
        } else {
            let delays = RetryDelays(first: .seconds(1), longest: .seconds(intervalSeconds))
            let delay = delays.delay(afterFailures: attempt + 1).components
            scheduled = Double(delay.seconds) + Double(delay.attoseconds) / 1e18
        }
        guard let remaining = sessionSecondsRemaining else { return scheduled }
        return min(scheduled, max(Double(remaining), pathChangeSpacingSeconds))
    }
}

/// Performs the active check's HTTP exchanges: the engine's only way to the network. Confined to
/// the engine's queue: called there, completions run there.
public protocol HTTPCheckClient: AnyObject {
    /// Starts `request`. `completion` runs once, with the outcome, the exchange's duration in
    /// seconds and what the lookup of the URL's host name came to (nil when it has none to
    /// look up: a literal address), unless ``cancel(_:)`` comes first.
    ///
    /// - Returns: the exchange's token for ``cancel(_:)``.
    func start(_ request: HTTPCheckRequest, completion: @escaping @Sendable (HTTPCheckOutcome, Double, NameLookupEvidence?) -> Void) -> Int
    /// Why no exchange can run on this host at all (e.g. "libcurl could not be loaded: …"), a
    /// local fault rather than evidence about the network; nil when exchanges can run. Asked
    /// only once checks are on (it may load the client's library).
    var unavailability: String? { get }
    /// Abandons the exchange `token` (finished or unknown ones: nothing happens).
    func cancel(_ token: Int)
    /// Looks up `host`'s addresses of `family` through the system resolver, as the checks' own
    /// lookups go (away from the queue, bounded with them); `completion` runs once, with the
    /// addresses in the resolver's order (none: the lookup failed or found none).
    func lookUpAddresses(of host: String, family: AddressFamily, completion: @escaping @Sendable ([IPAddress]) -> Void)
    /// Checks were turned off: no exchange comes before the next ``start(_:completion:)``, and
    /// the client may let go of what it keeps between exchanges (the daemon's check helper
    /// process). Nothing is in flight (each was cancelled).
    func releaseResources()
}

extension HTTPCheckClient {
    /// Keeps everything: a client that holds nothing between exchanges.
    public func releaseResources() {}
}
