import ReachabilityCore

/// The path a family's checks go over: the probe route's output link and gateway. A check's
/// verdict holds for the path it went over only.
package struct CheckPath: Sendable, Hashable {
    /// The output link's index.
    package var link: InterfaceIndex
    /// Its name (the check's socket is bound to it).
    package var linkName: String
    /// The route's gateway, if any.
    package var gateway: IPAddress?
}

/// What the checks last said of a family, and the path they said it of: the evaluation counts
/// it only while the family's route still takes that path.
struct CheckEvidence: Hashable {
    /// The path the checks went over.
    var path: CheckPath
    /// Their verdict.
    var connectivity: Connectivity
    /// The portal's URL when `connectivity` is `portal` and one is known, else "".
    var portalURL: String
    /// The session the network's captive-portal API described with the verdict; nil when it
    /// was not asked, did not answer, or gave none of the session's keys.
    var session: CaptivePortalSessionReading?
}

/// One family's active-check state, without I/O: which path it concerns, what the checks said,
/// when the next one is due. The engine's ``ActiveConnectivityChecks`` runs the exchanges.
struct ActiveCheckState: Hashable {
    /// The path the evidence concerns; nil: the family has no route (no checks).
    private(set) var path: CheckPath?
    /// What the checks say of the family (nil: no verdict yet on this path).
    private(set) var evidence: Connectivity?
    /// The portal's URL when `evidence` is `portal` and one is known, else "".
    private(set) var portalURL = ""
    /// The session the API described with the verdict (nil: none).
    private(set) var session: CaptivePortalSessionReading?
    /// How many checks in a row were not `full` (the back-off's exponent).
    private(set) var attempt = 0
    /// Whether a failure after `full` is being checked again before it is published.
    private(set) var isConfirmingFailure = false

    /// What the checks say, with the path they said it of; nil: no verdict yet (or no path).
    var verdict: CheckEvidence? {
        guard let path, let evidence else { return nil }
        return CheckEvidence(path: path, connectivity: evidence, portalURL: portalURL, session: session)
    }

    /// Follows the family's path. A new path (or none) forgets what the checks said.
    ///
    /// - Returns: whether a check should start now: the path is new and there is one.
    mutating func follow(_ next: CheckPath?) -> Bool {
        guard next != path else { return false }
        self = ActiveCheckState()
        path = next
        return next != nil
    }

    /// Records a check's verdict, with the session the network's API described (nil: none).
    ///
    /// - Returns: the seconds until the next check (no later than when the session runs out);
    ///   0 when a failure right after `full` is to be checked again at once before `limited` is
    ///   published (the published evidence stays).
    mutating func record(
        _ verdict: (connectivity: Connectivity, portalURL: String), session: CaptivePortalSessionReading? = nil, intervalSeconds: Double
    ) -> Double {
        if verdict.connectivity == .limited, evidence == .full, !isConfirmingFailure {
            isConfirmingFailure = true
            return 0
        }
        isConfirmingFailure = false
        evidence = verdict.connectivity
        portalURL = verdict.connectivity == .portal ? verdict.portalURL : ""
        self.session = session
        let delay = ConnectivityCheckSchedule.delay(
            after: verdict.connectivity, attempt: attempt, intervalSeconds: intervalSeconds, sessionSecondsRemaining: session?.session.secondsRemaining
        )
        attempt = verdict.connectivity == .full ? 0 : attempt + 1
        return delay
    }
}
