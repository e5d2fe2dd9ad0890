import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The monitor socket's route filter: which route messages reach the engine. It keeps routes
/// whose prefix contains a probe or a watched destination (or, past the filter's room, overlaps
/// a prefix covering several) (the addresses clients recently asked
/// about with `CheckAddress`, ``WatchedDestinations``), and every non-route message; see
/// ``NetlinkSocketFilter``. A new watched destination gets the filter rebuilt (`SO_ATTACH_FILTER`
/// swaps programs atomically), at most once per ``rebuildInterval``. Confined to the engine's
/// queue.
final class RouteFilterControl: @unchecked Sendable {
    private let queue: DispatchQueue
    /// The subscribed socket (owned and closed by the engine's event source); nil before
    /// ``attach(to:)`` and after ``detach()``.
    private var monitor: NetlinkSocket?
    /// The addresses recently asked about, whose routes the filter keeps.
    private(set) var watched = WatchedDestinations()
    /// When the filter was last rebuilt.
    private var lastRebuild = DispatchTime(uptimeNanoseconds: 1)  // (0 would mean now)
    /// Whether a rebuild waits for the interval's end (`Explain()` shows it).
    private(set) var isRebuildPending = false
    /// The least time between two rebuilds of the route filter (each costs an assembly and an
    /// attach; docs/design.md, "Events and the kernel filter"): a burst of new watched destinations gets one rebuild per interval.
    static let rebuildInterval: DispatchTimeInterval = .milliseconds(100)

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Attaches the filter for the destinations watched now to `monitor`, which from then on
    /// follows the watched set.
    func attach(to monitor: NetlinkSocket) throws(SystemError) {
        try Self.filter(watching: watched).attach(to: monitor)
        self.monitor = monitor
    }

    /// Stops following: the socket is closing.
    func detach() {
        monitor = nil
    }

    /// The filter for `watched` and the probes: each address listed while a family's fit the
    /// filter's room (``WatchedDestinations/filterCapacity`` and the probe); beyond that they
    /// are covered by that many prefixes (``IPPrefix/aggregating(_:into:)``), so the kernel
    /// still drops every route outside them however many callers watch, and the engine tells
    /// watched routes from others among the rest itself (``concernsWatched(_:)``).
    static func filter(watching watched: WatchedDestinations) -> NetlinkSocketFilter {
        NetlinkSocketFilter.routesOverlapping(AddressFamily.allCases.flatMap { family in
            IPPrefix.aggregating(watched.addresses(of: family, with: Probes.address(of: family)), into: WatchedDestinations.filterCapacity + 1)
        })
    }

    /// Whether a route message can change the route to a probe destination (its prefix contains
    /// the probe of its family); other route messages come from watched destinations.
    static func concernsProbes(_ route: RouteMessage) -> Bool {
        guard let family = route.addressFamily else { return true }
        return route.prefixContains(Probes.address(of: family))
    }

    /// Whether a route message (not the probes') can change the route to a watched destination.
    /// (The filter may keep every route for a moment: see ``watch(_:caller:)``.)
    func concernsWatched(_ route: RouteMessage) -> Bool {
        watched.isAffected(byRouteTo: route)
    }

    /// Adds `address` to the watched destinations; a new one gets the filter rebuilt, one
    /// already watched costs nothing. Within the rebuild interval a program keeping every
    /// message stands in until the interval ends and one rebuild covers every address watched
    /// meanwhile (the engine tells watched routes from others itself).
    func watch(_ address: IPAddress, caller: CallerShare) {
        guard address != Probes.ipv4, address != Probes.ipv6, watched.ask(about: address, caller: caller) else { return }
        scheduleRebuild()
    }

    /// Forgets the watched destinations of the share named `caller`.
    func forgetWatches(of caller: String) {
        if watched.forget(caller: caller) { scheduleRebuild() }
    }

    /// Rebuilds the filter for the watched destinations now, or at the end of the rebuild
    /// interval with every route kept until then.
    private func scheduleRebuild() {
        guard !isRebuildPending else { return }
        let due = lastRebuild + Self.rebuildInterval
        guard DispatchTime.now() < due else { return rebuild() }
        attach(NetlinkSocketFilter.keepingEverything)
        isRebuildPending = true
        queue.asyncAfter(deadline: due) { [weak self] in
            guard let self else { return }
            isRebuildPending = false
            rebuild()
        }
    }

    /// Attaches the filter for the watched destinations in force.
    private func rebuild() {
        lastRebuild = .now()
        attach(Self.filter(watching: watched))
    }

    /// Attaches `filter`; when the kernel refuses it, the filter keeping every route instead
    /// (the engine tells watched routes from others itself): no watched destination is left
    /// unfiltered-out, at the price of reading every route message until the next rebuild.
    private func attach(_ filter: NetlinkSocketFilter) {
        guard let monitor else { return }
        do {
            try filter.attach(to: monitor)
        } catch {
            Log.warning("Failed to replace the netlink socket filter for \(watched.ipv4.count + watched.ipv6.count) watched destination(s): \(error); keeping every route message until the next rebuild.")
            do {
                try NetlinkSocketFilter.keepingEverything.attach(to: monitor)
            } catch {
                Log.error("Failed to attach a filter keeping every route: \(error); route changes for the newest watched destinations may not be announced.")
            }
        }
    }
}
