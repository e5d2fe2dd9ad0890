import Dispatch
import ReachabilityCore
import SystemSupport

/// What becomes of the engine's evaluations before anyone sees them: the one place of the
/// publishing policy, so that the daemon and the client library's in-process source give the
/// same statuses under the same configuration.
///
/// - A loss of reachability (or of connectivity alone) is held for `DownDelaySec=` and dropped
///   if it recovers meanwhile (``FlapDamping``); every other change is published at once.
/// - Routing announcements (`RoutesChanged` on the bus) come at most once per
///   ``BusContract/routesChangedIntervalMilliseconds``: one at once, a burst's rest once at the
///   end of the interval.
///
/// Confined to the engine's queue.
final class PublishingStage {
    private let queue: DispatchQueue
    /// Called with each published snapshot (never twice the same in a row).
    var publish: (ReachabilitySnapshot) -> Void = { _ in }
    /// Called for each routing announcement.
    var announceRouting: () -> Void = {}
    /// What subscribers see now (it lags the evaluation while a loss is held).
    private(set) var published = ReachabilitySnapshot.unknown
    private var heldLoss: DispatchWorkItem?
    /// The spacing the stage keeps between announcements: the promised minimum plus a margin,
    /// so that the delivery jitter of the bus (a signal queued behind others, then not) does not
    /// bring two of them closer than promised where clients receive them.
    private var announcementWindow = CoalescingWindow(intervalNanoseconds: UInt64(BusContract.routesChangedIntervalMilliseconds + 5) * 1_000_000)
    private var announcementScheduled: DispatchWorkItem?

    /// Creates a stage confined to `queue`.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Whether a loss of reachability is being held by `DownDelaySec=`.
    var isHoldingLoss: Bool { heldLoss != nil }

    /// Whether a routing announcement is scheduled for the end of the current interval (a
    /// burst's rest, not yet announced).
    var isAnnouncementPending: Bool { announcementScheduled != nil }

    /// Starts from `first`, published without delay (the first evaluation).
    func start(with first: ReachabilitySnapshot) {
        published = first
    }

    /// A new evaluation: published at once, except a loss of reachability while `delaySeconds`
    /// is positive, which is held that long; then what `current` gives is published.
    ///
    /// - Parameters:
    ///   - snapshot: the new evaluation.
    ///   - delaySeconds: `DownDelaySec=`.
    ///   - current: the evaluation in force when a held loss is released.
    func evaluated(_ snapshot: ReachabilitySnapshot, delaySeconds: Double, current: @escaping () -> ReachabilitySnapshot) {
        if FlapDamping.holdsTransition(from: published, to: snapshot, delaySeconds: delaySeconds) {
            guard heldLoss == nil else { return }
            Log.info("Holding \(snapshot.status.rawValue), connectivity \(snapshot.connectivity.rawValue) (\(snapshot.reason)) for DownDelaySec=\(delaySeconds).")
            let release = DispatchWorkItem { [weak self] in
                guard let self else { return }
                heldLoss = nil
                send(current())
            }
            heldLoss = release
            queue.asyncAfter(deadline: .now() + delaySeconds, execute: release)
            return
        }
        cancelHeldLoss()
        send(snapshot)
    }

    /// Drops a held loss without publishing it (before judging it again under a new
    /// configuration); returns whether one was held.
    @discardableResult
    func cancelHeldLoss() -> Bool {
        guard let heldLoss else { return false }
        heldLoss.cancel()
        self.heldLoss = nil
        return true
    }

    /// Routing events happened: announce at once, or, within the interval of the last
    /// announcement, once at its end.
    func routingEventsOccurred() {
        switch announcementWindow.changed(at: DispatchTime.now().uptimeNanoseconds) {
        case .runNow:
            announce()
        case .runAt(let due):
            let later = DispatchWorkItem { [weak self] in
                self?.announcementScheduled = nil
                self?.announce()
            }
            announcementScheduled = later
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due), execute: later)
        case .alreadyScheduled:
            break
        }
    }

    /// Cancels what is scheduled.
    func stop() {
        cancelHeldLoss()
        announcementScheduled?.cancel()
        announcementScheduled = nil
    }

    private func send(_ snapshot: ReachabilitySnapshot) {
        guard snapshot != published else { return }
        published = snapshot
        publish(snapshot)
    }

    private func announce() {
        announcementWindow.ran(at: DispatchTime.now().uptimeNanoseconds)
        announceRouting()
    }
}
