import ReachabilityCore

/// What a manager needs from a source of snapshots. Both methods are called on the manager's
/// queue; the source reports there with the session of the run. The daemon's source is this
/// module's; the in-process engine's is `ReachabilityInProcess`'s, so that a program that only
/// follows the daemon links no engine.
package protocol SnapshotSource: AnyObject, Sendable {
    /// Starts a run; reports carry `session`.
    func start(session: UInt64)
    /// Stops the run.
    func stop()
}

/// How a source reports: the snapshot, whether the daemon gave it, and the run's session. A nil
/// snapshot tells only that the daemon answers, before the first check of an address or a
/// host name has ended.
package typealias SnapshotReport = @Sendable (ReachabilitySnapshot?, _ daemonAvailable: Bool, _ session: UInt64) -> Void

extension DaemonSource: SnapshotSource {}
