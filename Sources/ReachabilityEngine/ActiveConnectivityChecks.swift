#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// The opt-in active check (`[Connectivity] CheckURL=`), per family that has a route: an HTTP
/// GET over that family, bound to the route's output link, at once when the path changes, then
/// every `CheckIntervalSec=` while `full` and at 1 s doubling while not; with the captive-portal
/// API the link advertises (RFC 8910/8908) asked alongside when `CaptivePortalAPI=yes`. At most
/// one check per family in flight; ``checkNow(startingNew:then:)`` checks at once on demand
/// (`CheckConnectivity()`). Without a `CheckURL=` nothing is ever started. Confined to the
/// engine's queue.
final class ActiveConnectivityChecks: @unchecked Sendable {
    /// What the last check of a family got, for `Explain()`.
    struct Record {
        var url: String
        var linkName: String
        var finished: DispatchTime
        var outcome: HTTPCheckOutcome
        var seconds: Double
        var api: (uri: String, outcome: HTTPCheckOutcome)?
    }

    /// A family's state and the exchanges and timer around it.
    private struct Family {
        var state = ActiveCheckState()
        /// The exchanges in flight (the check's and the API's tokens).
        var inFlight: [Int] = []
        /// The outcomes gathered for the check in flight.
        var checkOutcome: (HTTPCheckOutcome, Double)?
        /// What the last check's lookup of its host name came to (nil: none yet, or a literal address).
        var nameLookup: NameLookupEvidence?
        var apiOutcome: (uri: String, outcome: HTTPCheckOutcome)?
        var apiURI: String?
        /// The link's captive-portal API changed while a check was in flight: check again as
        /// soon as it ends.
        var recheckWhenDone = false
        /// The timer of the next check (made at the first), and when it is due (nil: none).
        var timer: DispatchSourceTimer?
        var nextDue: DispatchTime?
        var last: Record?
        /// Callers wait for this family's check on demand: until its next verdict (a failure
        /// after `full` checked again first), or until it has no path.
        var isAwaited = false
        /// When the last check started (nanoseconds of `DispatchTime`): a path change checks
        /// no sooner than the spacing after it.
        var lastStarted: UInt64?
    }

    private let queue: DispatchQueue
    /// The HTTP client; nil: checks cannot run (they are reported as off).
    var client: HTTPCheckClient?
    private var settings = ConnectivityCheckSettings()
    private var families: [AddressFamily: Family] = [:]
    /// Why the client cannot run any exchange (logged once), until the next ``apply(_:)``.
    private var unavailability: String?
    /// Called on the queue when a family's evidence changed (from a timer or an exchange's
    /// completion, never from ``follow(_:)``).
    var onEvidence: () -> Void = {}
    /// The captive-portal API a link's routers advertise.
    var captivePortalAPI: (InterfaceIndex) -> String? = { _ in nil }
    /// What runs once no family is awaited any more (``checkNow(startingNew:then:)``), by token.
    private var waiters: [Int: () -> Void] = [:]
    /// The waiters let go, to run at the queue's next turn.
    private var released: [Int: () -> Void] = [:]
    private var nextWaiter = 1

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Whether checks run: a `CheckURL=` and a client.
    var isEnabled: Bool { settings.isEnabled && client != nil }

    /// Takes new settings (a start, a reload): when they differ, or when checks could not run
    /// (libcurl may have been installed since: the reload the log asks for tries again), every
    /// check in flight or scheduled is dropped and what the checks said is forgotten; the next
    /// ``follow(_:)`` starts over.
    func apply(_ next: ConnectivityCheckSettings) {
        guard next != settings || unavailability != nil else { return }
        settings = next
        unavailability = nil
        stop()
        if !next.isEnabled { client?.releaseResources() }
    }

    /// Drops every check in flight or scheduled and what they said; callers waiting for a check
    /// on demand are let go.
    func stop() {
        for family in families.keys { reset(family) }
        families = [:]
        releaseWaitersWhenSettled()
    }

    /// Whether a check on demand has anything to check: checks run and a family has a path.
    var canCheckNow: Bool {
        isEnabled && unavailability == nil && families.values.contains { $0.state.path != nil }
    }

    /// Whether a family's check is in flight or awaited, or a failure after `full` is being
    /// checked again.
    var isCheckInFlight: Bool {
        families.values.contains { !$0.inFlight.isEmpty || $0.state.isConfirmingFailure || $0.isAwaited }
    }

    /// Checks on demand (`CheckConnectivity()`): when `startingNew`, starts a check now of every
    /// family that has a path and none in flight; then calls `done` (with its waiter's token)
    /// once every family checked (or found in flight) has its verdict, on the queue after the
    /// walk its evidence schedules, so that the published snapshot has it. Families that lose
    /// their path, a reload that changes the settings, or checks that cannot run let `done` go
    /// earlier.
    ///
    /// - Returns: the waiter's token for ``forgetWaiter(_:)``; nil when there is nothing to wait
    ///   for (nothing in flight, and nothing started): `done` is not called.
    func checkNow(startingNew: Bool, then done: @escaping (_ waiter: Int) -> Void) -> Int? {
        guard isEnabled, unavailability == nil else { return nil }
        for (family, current) in families where current.state.path != nil {
            if current.inFlight.isEmpty, !current.state.isConfirmingFailure, !current.isAwaited {
                guard startingNew else { continue }
                // The scheduled check is this one; the next is scheduled when it finishes.
                current.timer?.schedule(deadline: .distantFuture)
                families[family]?.nextDue = nil
                startCheck(family)
            }
            families[family]?.isAwaited = unavailability == nil
        }
        guard isAnyFamilyAwaited else { return nil }
        let waiter = nextWaiter
        nextWaiter += 1
        waiters[waiter] = { done(waiter) }
        return waiter
    }

    /// Drops the waiter `waiter` (its caller left): it is not called.
    func forgetWaiter(_ waiter: Int) {
        waiters[waiter] = nil
        released[waiter] = nil
    }

    private var isAnyFamilyAwaited: Bool {
        unavailability == nil && families.values.contains { $0.isAwaited && $0.state.path != nil }
    }

    /// Lets the callers of ``checkNow(startingNew:then:)`` go once no family is awaited: at a
    /// later turn of the queue, after the walk that the last verdict scheduled.
    private func releaseWaitersWhenSettled() {
        guard !waiters.isEmpty, !isAnyFamilyAwaited else { return }
        released.merge(waiters) { first, _ in first }
        waiters = [:]
        queue.async { [weak self] in
            guard let self else { return }
            let now = released
            released = [:]
            // In the order they came.
            now.sorted { $0.key < $1.key }.forEach { $0.value() }
        }
    }

    /// Follows each family's path (absent: no route) when checks run: a changed path forgets the
    /// old evidence (the evaluation already did not count it) and starts a check at once (after
    /// the current turn of the queue, so that a burst of events starts one), or, when the
    /// family's last check started less than ``ConnectivityCheckSchedule/pathChangeSpacingSeconds``
    /// ago, at the end of that spacing: a flapping route costs one check per spacing. The walk's
    /// step after the evaluation: it cancels and arms, and reports no evidence.
    func follow(_ paths: [AddressFamily: CheckPath]) {
        guard isEnabled else { return }
        for family in AddressFamily.allCases {
            let path = settings.checks(family) ? paths[family] : nil
            guard families[family, default: Family()].state.follow(path) else {
                if path == nil {
                    reset(family, keepingState: true)
                    families[family]?.isAwaited = false
                }
                continue
            }
            reset(family, keepingState: true)
            let now = DispatchTime.now().uptimeNanoseconds
            let due = ConnectivityCheckSchedule.startAfterPathChange(at: now, lastStart: families[family]?.lastStarted)
            schedule(family, after: Double(due - now) / 1e9)
        }
        releaseWaitersWhenSettled()
    }

    /// The captive-portal API advertised on `link` changed: the families whose path goes over
    /// it are checked again at once (with the API, or without it).
    func captivePortalAPIChanged(on link: InterfaceIndex) {
        guard isEnabled else { return }
        for (family, current) in families where current.state.path?.link == link {
            if current.inFlight.isEmpty { schedule(family, after: 0) } else { families[family]?.recheckWhenDone = true }
        }
    }

    /// The passive evidence against `family`'s path cleared (its gateway resolves again): unless
    /// the checks already say `full` or one is in flight, check at once.
    func passiveEvidenceCleared(_ family: AddressFamily) {
        guard isEnabled, let current = families[family], current.state.path != nil, current.inFlight.isEmpty,
              current.state.evidence != .full
        else { return }
        schedule(family, after: 0)
    }

    /// What the checks say of `family`, with the path they said it of; nil: nothing (no verdict
    /// yet, or checks off or unable to run).
    func evidence(_ family: AddressFamily) -> CheckEvidence? {
        guard isEnabled, unavailability == nil else { return nil }
        return families[family]?.state.verdict
    }

    /// What the checks' last lookups of their host name came to, for `DNS`: answered when a
    /// family's was, else failed when one's failed; nil when none was made (checks off, a
    /// literal address, none finished yet).
    var nameLookupEvidence: NameLookupEvidence? {
        guard isEnabled, unavailability == nil else { return nil }
        let lookups = AddressFamily.allCases.compactMap { families[$0]?.nameLookup }
        return lookups.contains(.answered) ? .answered : lookups.first
    }

    /// `Explain()`'s lines for `family`.
    func report(_ family: AddressFamily) -> [String] {
        guard isEnabled, let current = families[family], current.state.path != nil else { return [] }
        if let unavailability { return ["  checks cannot run: \(unavailability) (Connectivity stays unknown)"] }
        var lines: [String] = []
        let now = DispatchTime.now()
        if let last = current.last {
            let ago = Double(now.uptimeNanoseconds - last.finished.uptimeNanoseconds) / 1e9
            if let api = last.api {
                let answer = CaptivePortalAPIAnswer(api.outcome).map {
                    "captive \($0.isCaptive)" + ($0.userPortalURL.map { ", user-portal-url \($0)" } ?? "") + ($0.session.isEmpty ? "" : ", \($0.session.summary)")
                }
                lines.append("  captive-portal API \(api.uri): \(api.outcome.summary)" + (answer.map { " -> \($0)" } ?? " (no usable answer: ignored)"))
            }
            lines.append("  check GET \(last.url) over \(last.linkName), \(Self.format(ago)) s ago: \(last.outcome.summary) in \(Int((last.seconds * 1000).rounded())) ms")
            if case .failed(_, silent: true) = last.outcome {
                lines.append("  (no answer: a local firewall, or the packaged unit's IPAddressDeny=any without a drop-in setting IPAddressAllow=, may drop the check's packets; see reachabilityd(8))")
            }
        }
        var summary = "  check verdict: " + (current.state.evidence.map { $0.rawValue } ?? "none yet")
        if !current.state.portalURL.isEmpty { summary += " (portal \(current.state.portalURL))" }
        if current.state.isConfirmingFailure { summary += "; a failure after full is being checked again" }
        if !current.inFlight.isEmpty {
            summary += "; a check is in flight"
        } else if let due = current.nextDue {
            summary += "; next check in \(Self.format(max(0, Double(Int64(due.uptimeNanoseconds) - Int64(now.uptimeNanoseconds)) / 1e9))) s"
        }
        lines.append(summary)
        return lines
    }

    private static func format(_ seconds: Double) -> String {
        seconds < 10 ? String(Double(Int(seconds * 10)) / 10) : String(Int(seconds))
    }

    /// Cancels `family`'s exchanges and timer; forgets its state unless told to keep it.
    private func reset(_ family: AddressFamily, keepingState: Bool = false) {
        guard var current = families[family] else { return }
        for token in current.inFlight { client?.cancel(token) }
        current.inFlight = []
        current.checkOutcome = nil
        current.apiOutcome = nil
        current.recheckWhenDone = false
        current.timer?.schedule(deadline: .distantFuture)
        current.nextDue = nil
        if !keepingState {
            current.timer?.cancel()
            current = Family()
        }
        families[family] = current
    }

    /// Arms `family`'s timer (one per family, re-armed: no cancelled work piles up until its
    /// deadline, as it would with `asyncAfter`).
    private func schedule(_ family: AddressFamily, after seconds: Double) {
        guard families[family] != nil else { return }
        let timer = families[family]?.timer ?? {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.startCheck(family) }
            timer.activate()
            return timer
        }()
        let due = DispatchTime.now() + .milliseconds(Int(seconds * 1000))
        families[family]?.timer = timer
        families[family]?.nextDue = due
        timer.schedule(deadline: due)
    }

    private func startCheck(_ family: AddressFamily) {
        guard let client, settings.isEnabled, unavailability == nil, var current = families[family], let path = current.state.path, current.inFlight.isEmpty else { return }
        current.nextDue = nil
        current.lastStarted = DispatchTime.now().uptimeNanoseconds
        if let why = client.unavailability {
            families[family] = current
            return becomeUnavailable(why)
        }
        let check = HTTPCheckRequest(url: settings.checkURL, family: family, interfaceName: path.linkName, timeoutSeconds: settings.timeoutSeconds)
        current.checkOutcome = nil
        current.apiOutcome = nil
        current.apiURI = settings.queriesCaptivePortalAPI ? captivePortalAPI(path.link).flatMap { $0.lowercased().hasPrefix("https://") ? $0 : nil } : nil
        families[family] = current
        let checkToken = client.start(check) { [weak self] outcome, seconds, lookup in
            self?.finished(family, check: (outcome, seconds), lookup: lookup)
        }
        families[family]?.inFlight.append(checkToken)
        if let uri = current.apiURI {
            let request = HTTPCheckRequest(
                url: uri, family: family, interfaceName: path.linkName, timeoutSeconds: settings.timeoutSeconds,
                accept: "application/captive+json", caFile: settings.captivePortalAPICAFile.isEmpty ? nil : settings.captivePortalAPICAFile
            )
            let apiToken = client.start(request) { [weak self] outcome, _, _ in
                self?.finished(family, api: (uri, outcome))
            }
            families[family]?.inFlight.append(apiToken)
        }
    }

    /// A fault of this host, not evidence about the network (`why`: the client cannot run any
    /// exchange): said once, no verdict published, the checks in flight abandoned and none
    /// tried until the next reload.
    private func becomeUnavailable(_ why: String) {
        unavailability = why
        for family in families.keys { reset(family, keepingState: true) }
        Log.warning("Connectivity checks cannot run: \(why); Connectivity stays unknown. Install libcurl4 and reload.")
        onEvidence()
        releaseWaitersWhenSettled()
    }

    private func finished(
        _ family: AddressFamily, check: (HTTPCheckOutcome, Double)? = nil, lookup: NameLookupEvidence? = nil, api: (uri: String, outcome: HTTPCheckOutcome)? = nil
    ) {
        // A client that learns it cannot run only from an exchange (the check helper's libcurl).
        if let why = client?.unavailability { return becomeUnavailable(why) }
        guard var current = families[family], let path = current.state.path else { return }
        let lookupBefore = nameLookupEvidence
        if let check {
            current.checkOutcome = check
            current.nameLookup = lookup
        }
        if let api { current.apiOutcome = api }
        families[family] = current
        // Both answers first, when the API is asked too.
        guard let (outcome, seconds) = current.checkOutcome, current.apiURI == nil || current.apiOutcome != nil else { return }
        current.inFlight = []
        current.last = Record(url: settings.checkURL, linkName: path.linkName, finished: .now(), outcome: outcome, seconds: seconds, api: current.apiOutcome)
        let api = current.apiOutcome.flatMap { CaptivePortalAPIAnswer($0.outcome) }
        let verdict = ConnectivityCheckVerdict.combining(check: ConnectivityCheckVerdict.of(outcome, expecting: settings.checkResponse), api: api)
        let session = api.flatMap { $0.session.isEmpty ? nil : CaptivePortalSessionReading(session: $0.session, readAt: clockSeconds(CLOCK_BOOTTIME)) }
        let before = current.state.verdict
        var delay = current.state.record(verdict, session: session, intervalSeconds: settings.intervalSeconds)
        if current.recheckWhenDone {
            // The link's API changed while this check ran: ask again, with the new one, at once.
            delay = 0
            current.recheckWhenDone = false
        }
        families[family] = current
        Log.debug("Connectivity check over \(path.linkName) (\(family.displayName)): \(outcome.summary) in \(Int(seconds * 1000)) ms -> \(verdict.connectivity.rawValue); next in \(delay) s.")
        schedule(family, after: delay)
        if before != current.state.verdict || lookupBefore != nameLookupEvidence { onEvidence() }
        if !current.state.isConfirmingFailure {
            families[family]?.isAwaited = false
            releaseWaitersWhenSettled()
        }
    }
}
