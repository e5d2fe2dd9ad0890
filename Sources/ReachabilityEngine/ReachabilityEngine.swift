#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// How the engine reads the kernel.
public struct EngineConfiguration: Sendable {
    /// The sysfs mount point used to classify links ("/sys"; tests inject a fake tree).
    public var sysfsRoot: String
    /// The netlink receive buffer to request, in bytes.
    public var receiveBufferBytes: Int32

    /// The global IPv4 destination whose route decides IPv4 reachability. Only the kernel's
    /// route lookup is done for it; no packet is ever sent.
    public static let ipv4ProbeDestination = "8.8.8.8"
    /// The global IPv6 destination whose route decides IPv6 reachability.
    public static let ipv6ProbeDestination = "2001:4860:4860::8888"

    /// Creates a configuration; the defaults are the production values.
    public init(sysfsRoot: String = "/sys", receiveBufferBytes: Int32 = 8 * 1024 * 1024) {
        self.sysfsRoot = sysfsRoot
        self.receiveBufferBytes = receiveBufferBytes
    }
}

/// A destination that is not a literal IPv4 or IPv6 address.
public struct InvalidAddressError: Error, Sendable, CustomStringConvertible {
    /// The rejected text.
    public var address: String

    /// "'foo' is not a literal IPv4 or IPv6 address"; long input is cut (the length is given),
    /// so a hostile caller cannot make the daemon echo megabytes.
    public var description: String {
        let shown = address.unicodeScalars.count > 64 ? String(address.unicodeScalars.prefix(64)) + "…' (\(address.utf8.count) bytes)" : address + "'"
        return "'\(shown) is not a literal IPv4 or IPv6 address"
    }
}

/// The reachability engine: rtnetlink events in, ``ReachabilitySnapshot`` changes out.
///
/// Start-up subscribes to link, address, route and rule groups, dumps links and addresses,
/// and evaluates. Each batch of link, address or rule events, or of routes whose prefix contains
/// a probe destination, updates the link/address mirror, asks the kernel for the routes to the
/// probe destinations, applies ``ReachabilityRule`` once and reports the snapshot if it changed.
/// Routes for the destinations clients asked about (``checkAddress(_:)``, kept in
/// ``WatchedDestinations``) only call ``onRoutingEvents``. Confined to `queue`: call every
/// method there; callbacks run there.
public final class ReachabilityEngine: @unchecked Sendable {
    private let queue: DispatchQueue
    private let configuration: EngineConfiguration
    private var table: LinkTable
    private var query: NetlinkQueryClient?
    private var events: NetlinkEventSource?
    /// The subscribed socket (owned and closed by `events`), whose filter changes with `watched`.
    private var monitor: NetlinkSocket?
    /// The socket subscribed to neighbour entries (owned and closed by `neighbourEvents`), whose
    /// filter keeps only the followed gateways'; nil when it could not be opened.
    private var neighbourMonitor: NetlinkSocket?
    private var neighbourEvents: NetlinkEventSource?
    /// The addresses recently asked about with ``checkAddress(_:)``, whose routes the filter keeps.
    private var watched = WatchedDestinations()
    /// Damping and the announcements' rate limit: what subscribers see.
    private let publishing: PublishingStage
    private var parseErrorLog = ParseErrorLog()
    private var settings = DaemonConfiguration.default
    /// The gateways of the probes' routes and what their neighbour entries say.
    private var gateways = GatewayNeighbours()
    /// The captive-portal APIs networks advertise per link (RFC 8910), for the active check and
    /// `Explain()`.
    private var captivePortalAPIs = AdvertisedCaptivePortalAPIs()
    /// The kernel's last answers per probe family, reused for a family no event of a batch
    /// concerned (an IPv4 route cannot change what IPv6 gets, nor the reverse).
    private var answers: [AddressFamily: StatusReducer.KernelAnswers] = [:]
    /// When the route filter was last rebuilt, and whether a rebuild waits for the interval's end.
    private var lastFilterRebuild = DispatchTime(uptimeNanoseconds: 1)  // (0 would mean now)
    private var filterRebuildScheduled = false
    /// The least time between two rebuilds of the route filter (each costs ~0.6 ms and an
    /// attach): a burst of new watched destinations gets one rebuild per interval.
    static let filterRebuildInterval: DispatchTimeInterval = .milliseconds(100)
    /// Whether a resynchronisation is scheduled after an interrupted dump.
    private var resynchronisationScheduled = false
    /// The opt-in active check (`[Connectivity] CheckURL=`).
    private let checks: ActiveConnectivityChecks

    /// The HTTP client the active check uses; nil (the default): no active check can run,
    /// whatever the configuration says. Set before ``start(onChange:)``.
    public var checkClient: HTTPCheckClient? {
        get { checks.client }
        set { checks.client = newValue }
    }

    /// Called on the queue after batches of link, address, route, rule or nexthop events (and
    /// after a resynchronisation), once evaluated, whether or not the snapshot changed: routes
    /// to other destinations may have changed. At most once per
    /// ``BusContract/routesChangedIntervalMilliseconds`` (a burst's rest comes once at the end
    /// of the interval), as `RoutesChanged` on the bus. Route events reach the engine only for
    /// prefixes containing a probe or a watched destination (see ``checkAddress(_:)``).
    /// Set before ``start(onChange:)``.
    public var onRoutingEvents: () -> Void {
        get { publishing.announceRouting }
        set { publishing.announceRouting = newValue }
    }

    /// The last evaluated snapshot (`.unknown` before ``start(onChange:)``).
    public private(set) var snapshot = ReachabilitySnapshot.unknown

    /// What subscribers see: ``snapshot``, except while `DownDelaySec=` holds a loss back.
    public var publishedSnapshot: ReachabilitySnapshot { publishing.published }

    /// Creates an engine confined to `queue`.
    public init(queue: DispatchQueue, configuration: EngineConfiguration = EngineConfiguration()) {
        self.queue = queue
        self.configuration = configuration
        table = LinkTable(inspector: SysfsLinkInspector(root: configuration.sysfsRoot))
        publishing = PublishingStage(queue: queue)
        checks = ActiveConnectivityChecks(queue: queue)
        checks.onEvidence = { [weak self] in self?.reevaluate([], announcingRoutes: false) }
        checks.captivePortalAPI = { [weak self] link in self?.captivePortalAPIs.uri(for: link) }
    }

    /// Subscribes, enumerates, evaluates and starts listening.
    ///
    /// - Parameter onChange: called on the queue with each published snapshot: every new
    ///   evaluation that differs from the last published one, except that a loss of
    ///   reachability waits `DownDelaySec=` and is dropped if reachability returns meanwhile.
    /// - Returns: the first evaluation, published at once.
    public func start(onChange: @escaping (ReachabilitySnapshot) -> Void) throws(SystemError) -> ReachabilitySnapshot {
        dispatchPrecondition(condition: .onQueue(queue))
        publishing.publish = onChange
        // Subscribe before dumping so that no change between the dump and the first event is lost.
        let monitor = try NetlinkSocket.open()
        do throws(SystemError) {
            let effective = try monitor.setReceiveBuffer(bytes: configuration.receiveBufferBytes)
            Log.debug("Netlink receive buffer: \(effective) bytes")
            // The kernel drops route messages that cannot change the route to the probes.
            try Self.routeFilter(watching: watched).attach(to: monitor)
            try monitor.subscribe(to: NetlinkSocket.Group.allCases.filter { $0 != .neighbour })
            query = try NetlinkQueryClient()
            try resynchronise()
        } catch {
            monitor.close()
            throw error
        }
        self.monitor = monitor
        // Before the evaluation, which follows the probes' gateways through this socket's filter.
        neighbourMonitor = Self.openNeighbourMonitor()
        snapshot = evaluate()
        publishing.start(with: snapshot)
        let source = NetlinkEventSource(socket: monitor, queue: queue) { [weak self] batch in self?.handle(batch) }
        source.start()
        events = source
        if let neighbourMonitor {
            let neighbourSource = NetlinkEventSource(socket: neighbourMonitor, queue: queue) { [weak self] batch in self?.handle(batch) }
            neighbourSource.start()
            neighbourEvents = neighbourSource
        }
        return snapshot
    }

    /// A socket subscribed to neighbour entries (filtered to none until gateways are followed)
    /// and router advertisement options; nil (and a warning: connectivity then has no evidence
    /// from them) when that fails.
    private static func openNeighbourMonitor() -> NetlinkSocket? {
        do {
            let socket = try NetlinkSocket.open()
            do throws(SystemError) {
                try NetlinkSocketFilter.neighboursOf(ipv4Neighbours: [], ipv6Neighbours: []).attach(to: socket)
                try socket.subscribe(to: [.neighbour, .routerOption])
            } catch {
                socket.close()
                throw error
            }
            return socket
        } catch {
            Log.warning("\(error); connectivity will have no evidence from the gateways' neighbour entries or router advertisements.")
            return nil
        }
    }

    /// The monitor socket's filter: only routes whose prefix contains a probe or a `watched`
    /// destination (and every non-route message) reach the engine. See ``NetlinkSocketFilter``.
    /// When more destinations are watched than a filter lists, it keeps every route and the
    /// engine tells watched routes from others itself.
    static func routeFilter(watching watched: WatchedDestinations) -> NetlinkSocketFilter {
        guard watched.fitsTheFilter else { return .keepingEverything }
        return NetlinkSocketFilter.routesContaining(ipv4Destinations: [ipv4Probe.bytes] + watched.ipv4, ipv6Destinations: [ipv6Probe.bytes] + watched.ipv6)
    }

    private static let ipv4Probe = IPAddress(EngineConfiguration.ipv4ProbeDestination)!
    private static let ipv6Probe = IPAddress(EngineConfiguration.ipv6ProbeDestination)!

    /// Stops listening and closes the sockets.
    public func stop() {
        publishing.stop()
        checks.stop()
        events?.cancel()
        events = nil
        neighbourEvents?.cancel()
        neighbourEvents = nil
        neighbourMonitor = nil
        monitor = nil
        query = nil
    }

    /// The configuration in force.
    public var daemonConfiguration: DaemonConfiguration { settings }

    /// Replaces the configuration and re-evaluates; reports a changed snapshot like an event
    /// would. A loss held under the old `DownDelaySec=` is judged again under the new one.
    public func apply(_ configuration: DaemonConfiguration) {
        dispatchPrecondition(condition: .onQueue(queue))
        settings = configuration
        checks.apply(configuration.connectivity)
        guard query != nil else { return }
        if publishing.cancelHeldLoss() { publish(snapshot) }
        reevaluate()
    }

    /// What `Explain()` shows, as values: per probe the kernel's answers and the verdict, every
    /// link with its classification and addresses, the settings, and what a held loss hides.
    public func report() -> ExplainReport {
        dispatchPrecondition(condition: .onQueue(queue))
        let families = [Self.ipv4Probe, Self.ipv6Probe].map { probe in
            let facts = destinationFacts(probe)
            return ExplainReport.Family(
                destination: probe.description, facts: facts, verdict: ReachabilityRule.evaluate(facts), gateway: gateways.current(probe.family),
                activeCheck: checks.report(probe.family)
            )
        }
        // The probes' output links in full, then the first links by index up to the limit; the
        // rest only counted (in one pass), so that a host with thousands of links gets a
        // bounded report at a small cost.
        let shown = Set(table.links.keys.sorted().prefix(ExplainReport.linkLimit)).union(families.compactMap { $0.facts.outputLink?.index })
        let addressesByLink = Dictionary(grouping: table.addresses.filter { shown.contains($0.key.index) }, by: \.key.index)
        let links = shown.sorted().compactMap { index -> ExplainReport.Link? in
            guard let facts = table.facts(forLink: index, configuration: settings) else { return nil }
            let addresses = (addressesByLink[index] ?? [])
                .map { ExplainReport.Address(text: "\(IPAddress.text(of: $0.key.bytes, family: $0.key.family))/\($0.key.prefixLength)", facts: $0.value) }
                .sorted { $0.text < $1.text }
            return ExplainReport.Link(
                facts: facts, addresses: addresses, captivePortalAPIs: captivePortalAPIs.advertised(on: index).map { "\($0.uri) (RFC 8910, \($0.source.rawValue))" }
            )
        }
        var omitted = ExplainReport.OmittedLinks(count: 0, up: 0, withCarrier: 0)
        for (index, link) in table.links where !shown.contains(index) {
            omitted.count += 1
            if link.isUp { omitted.up += 1 }
            if link.isUp, link.hasCarrier { omitted.withCarrier += 1 }
        }
        return ExplainReport(
            evaluation: snapshot, heldBack: publishing.isHoldingLoss ? publishing.published : nil,
            routesChangedPending: publishing.isAnnouncementPending, routeFilterRebuildPending: filterRebuildScheduled,
            families: families, links: links,
            omittedLinks: omitted.count == 0 ? nil : omitted,
            configuration: settings
        )
    }

    /// The indices of the links the engine knows.
    public var linkIndices: [InterfaceIndex] {
        dispatchPrecondition(condition: .onQueue(queue))
        return table.links.keys.sorted()
    }

    /// Records the captive-portal API URI (RFC 8910) that DHCPv4 gave `link`, as the network
    /// manager that holds the lease (`source`: systemd-networkd or NetworkManager) reports it;
    /// nil, "" or the unrestricted URN: none. The active check asks it when the probe route goes
    /// over that link.
    public func setCaptivePortalAPI(_ uri: String?, link: InterfaceIndex, from source: CaptivePortalAPISource) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard captivePortalAPIs.set(uri, for: link, from: source) else { return }
        checks.captivePortalAPIChanged(on: link)
        Log.info("\(source.rawValue.prefix(1).uppercased() + source.rawValue.dropFirst()) on link \(link.rawValue): "
            + (uri.map { "the captive-portal API \($0)" } ?? "no captive-portal API") + ".")
    }

    /// The index of the link named `name`, if the engine knows one.
    public func linkIndex(named name: String) -> InterfaceIndex? {
        dispatchPrecondition(condition: .onQueue(queue))
        return table.index(named: name)
    }

    /// Decides reachability of one literal address with the kernel's route lookup for it, and
    /// watches it: from then on, route events for prefixes containing it reach the engine and
    /// ``onRoutingEvents`` (until ``WatchedDestinations/capacity`` more recently asked addresses
    /// of its family push it out).
    ///
    /// - Parameter caller: whose share asks (a root connection, or all of one unprivileged
    ///   user's): each share's watches are its own, and only its own newer questions push them out.
    /// - Throws: ``InvalidAddressError`` when `text` is not a literal IPv4/IPv6 address.
    public func checkAddress(_ text: String, caller: CallerShare = CallerShare(connection: "")) throws(InvalidAddressError) -> DestinationVerdict {
        dispatchPrecondition(condition: .onQueue(queue))
        // An IPv4-mapped address (::ffff:192.0.2.1) is where a dual-stack socket sends: IPv4.
        guard let address = IPAddress(text)?.unmappingIPv4 else { throw InvalidAddressError(address: text) }
        // Before the lookup, so that a route change right after it is not filtered out.
        watch(address.bytes, caller: caller)
        return ReachabilityRule.evaluate(destinationFacts(address))
    }

    /// Forgets the watched destinations of the share named `caller` (its last bus connection
    /// closed).
    public func forgetWatches(of caller: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        if watched.forget(caller: caller) { scheduleFilterRebuild() }
    }

    /// Adds `address` to the watched destinations; a new one gets the socket's filter rebuilt
    /// (`SO_ATTACH_FILTER` swaps programs atomically), one already watched costs nothing.
    /// Rebuilds come at most once per ``filterRebuildInterval``: within it, a program keeping
    /// every message stands in until the interval ends and one rebuild covers every address
    /// watched meanwhile (the engine tells watched routes from others itself).
    private func watch(_ address: [UInt8], caller: CallerShare) {
        guard address != Self.ipv4Probe.bytes, address != Self.ipv6Probe.bytes, watched.ask(about: address, caller: caller) else { return }
        scheduleFilterRebuild()
    }

    /// Rebuilds the route filter for the watched destinations now, or at the end of the
    /// rebuild interval with every route kept until then.
    private func scheduleFilterRebuild() {
        guard !filterRebuildScheduled else { return }
        let due = lastFilterRebuild + Self.filterRebuildInterval
        guard DispatchTime.now() < due else { return replaceFilter() }
        attach(NetlinkSocketFilter.keepingEverything)
        filterRebuildScheduled = true
        queue.asyncAfter(deadline: due) { [weak self] in
            guard let self else { return }
            filterRebuildScheduled = false
            replaceFilter()
        }
    }

    /// Attaches the filter for the watched destinations in force.
    private func replaceFilter() {
        lastFilterRebuild = .now()
        attach(Self.routeFilter(watching: watched))
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

    /// Follows the gateways of the probes' routes: a new one joins the socket filter first, then
    /// its neighbour entry is read (so that no change after the read is filtered out).
    private func followGateways() {
        var chosen: [AddressFamily: (address: IPAddress, link: InterfaceIndex)] = [:]
        for (family, answer) in answers {
            guard case .route(let route) = answer.lookup, let gateway = route.gateway.flatMap(IPAddress.init), let link = route.outputInterfaceIndex else { continue }
            chosen[family] = (gateway, link)
        }
        let fresh = gateways.follow(chosen)
        if let neighbourMonitor, !fresh.isEmpty {
            do {
                try NetlinkSocketFilter.neighboursOf(ipv4Neighbours: gateways.addresses(of: .ipv4), ipv6Neighbours: gateways.addresses(of: .ipv6))
                    .attach(to: neighbourMonitor)
            } catch {
                Log.warning("Failed to follow the gateways' neighbour entries: \(error), ignoring.")
            }
        }
        for family in fresh {
            guard let gateway = gateways.current(family), let query else { continue }
            do {
                gateways.read(try query.neighbourState(of: gateway.address.bytes, family: family.netlinkFamily, index: gateway.link.rawValue), for: family)
            } catch {
                Log.warning("\(error); following gateway \(gateway.address)'s neighbour entry from its next change.")
            }
        }
    }

    /// Whether a route message can change the route to a probe destination (its prefix contains
    /// the probe of its family); other route messages come from watched destinations.
    private static func concernsProbes(_ route: RouteMessage) -> Bool {
        guard let family = LinkTable.family(route.family) else { return true }
        let probe = family == .ipv4 ? ipv4Probe : ipv6Probe
        return IPAddressBytes.prefix(route.destination, length: route.destinationLength, contains: probe.bytes)
    }

    private func handle(_ batch: NetlinkBatch) {
        parseErrorLog.report(batch.parseErrors, parsing: "rtnetlink message")
        if batch.foreignDatagrams > 0 {
            Log.debug("Ignored \(batch.foreignDatagrams) netlink datagram(s) not sent by the kernel.")
        }
        Log.debug("Read \(batch.messages.count) rtnetlink message(s), \(Self.routeMessageCount(batch)) of them route(s).")
        // changed: the families whose probe route may have changed; routing: only other
        // destinations' routes. Links, addresses, rules and nexthops concern both families.
        var changed: Set<AddressFamily> = []
        var routing = false
        var gatewayEvidence = false
        if batch.overflowed {
            Log.warning("Netlink receive queue overrun, resynchronising.")
            // The gateways' entries are read again too.
            gateways = GatewayNeighbours()
            do {
                try resynchronise()
            } catch {
                Log.error("\(error); keeping the previous link state.")
            }
            changed = Set(AddressFamily.allCases)
        }
        for message in batch.messages {
            switch message.payload {
            case .deleteLink(let link): captivePortalAPIs.forget(InterfaceIndex(link.index))
            case .newLink(let link) where !(link.isUp && link.hasCarrier):
                // The network that comes back may not be the one that advertised it: a router
                // advertisement names the API again. (DHCP's goes with its lease: networkd and
                // NetworkManager publish that themselves.)
                let index = InterfaceIndex(link.index)
                if captivePortalAPIs.set(nil, for: index, from: .routerAdvertisement) { checks.captivePortalAPIChanged(on: index) }
            default: break
            }
            if table.apply(message.payload) {
                changed = Set(AddressFamily.allCases)
                continue
            }
            switch message.payload {
            case .newRoute(let route), .deleteRoute(let route):
                if Self.concernsProbes(route) {
                    changed.formUnion(LinkTable.family(route.family).map { [$0] } ?? AddressFamily.allCases)
                } else if LinkTable.family(route.family).map({ watched.isAffected(byRouteTo: route.destination, length: route.destinationLength, family: $0) }) ?? true {
                    // (The filter may keep every route for a moment: see watch(_:).)
                    routing = true
                }
            case .ruleChanged, .nexthopChanged: changed = Set(AddressFamily.allCases)
            case .newNeighbour(let neighbour):
                // (A deleted entry says nothing: a failed gateway stays failed until it resolves.)
                guard let family = LinkTable.family(neighbour.family) else { break }
                let before = gateways.current(family)?.evidence
                guard gateways.apply(neighbour, family: family) else { break }
                gatewayEvidence = true
                // The gateway answers again (an application got through): what checks said
                // during the outage is checked again now, not at the back-off's next turn.
                if before != nil, gateways.current(family)?.evidence == nil { checks.passiveEvidenceCleared(family) }
            case .routerAdvertisementOption(let option):
                guard let uri = option.captivePortalAPI else { break }
                if captivePortalAPIs.set(uri, for: InterfaceIndex(option.index), from: .routerAdvertisement) {
                    checks.captivePortalAPIChanged(on: InterfaceIndex(option.index))
                }
            default: break
            }
        }
        if !changed.isEmpty {
            reevaluate(changed)
        } else {
            if gatewayEvidence { reevaluate([], announcingRoutes: false) }
            if routing { publishing.routingEventsOccurred() }
        }
    }

    /// Evaluates again, asking the kernel anew about the probes of `families` only (none: only
    /// the gateways' evidence changed), and announces routing events unless told not to.
    private func reevaluate(_ families: Set<AddressFamily> = Set(AddressFamily.allCases), announcingRoutes: Bool = true) {
        let next = evaluate(families)
        if next != snapshot {
            snapshot = next
            publish(next)
        }
        if announcingRoutes { publishing.routingEventsOccurred() }
    }

    /// Hands an evaluation to the publishing stage under the configuration in force.
    private func publish(_ evaluation: ReachabilitySnapshot) {
        publishing.evaluated(evaluation, delaySeconds: settings.downDelaySeconds) { [weak self] in self?.snapshot ?? evaluation }
    }

    /// Replaces the mirror with fresh dumps; on failure the old mirror stays. A dump the kernel
    /// still flagged as interrupted after its retries is used, and another resynchronisation
    /// follows shortly (objects that changed during it may be missing, and no event would
    /// bring them back).
    private func resynchronise() throws(SystemError) {
        guard let query else { return }
        let links = try query.dump(NetlinkRequest.dumpLinks)
        let addresses = try query.dump(NetlinkRequest.dumpAddresses)
        table.replace(withDump: links.messages + addresses.messages)
        parseErrorLog.report(links.parseErrors + addresses.parseErrors, parsing: "rtnetlink dump message")
        if links.isInterrupted || addresses.isInterrupted { scheduleResynchronisation() }
    }

    /// Resynchronises and re-evaluates in 100 ms (once, however often it is asked for).
    private func scheduleResynchronisation() {
        guard !resynchronisationScheduled else { return }
        resynchronisationScheduled = true
        Log.warning("The kernel's link and address dumps kept changing while they were read; reading them again in 100 ms.")
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self, self.query != nil else { return }
            self.resynchronisationScheduled = false
            do {
                try self.resynchronise()
            } catch {
                Log.error("\(error); keeping the previous link state.")
            }
            self.reevaluate()
        }
    }

    private func evaluate(_ families: Set<AddressFamily> = Set(AddressFamily.allCases)) -> ReachabilitySnapshot {
        func answers(for probe: IPAddress) -> StatusReducer.KernelAnswers {
            if !families.contains(probe.family), let kept = self.answers[probe.family] { return kept }
            let fresh = kernelAnswers(for: probe)
            self.answers[probe.family] = fresh
            return fresh
        }
        let ipv4 = answers(for: Self.ipv4Probe)
        let ipv6 = answers(for: Self.ipv6Probe)
        followGateways()
        var next = StatusReducer.snapshot(of: table, ipv4: ipv4, ipv6: ipv6, configuration: settings)
        if checks.isEnabled { checks.follow(checkPaths(of: next)) }
        // A failed gateway says more than a check done before it failed.
        let checked = (ipv4: checks.evidence(.ipv4), ipv6: checks.evidence(.ipv6))
        next.ipv4Evidence = gateways.current(.ipv4)?.evidence ?? checked.ipv4.connectivity
        next.ipv6Evidence = gateways.current(.ipv6)?.evidence ?? checked.ipv6.connectivity
        next.captivePortal = [(next.ipv4Connectivity, checked.ipv4.portalURL), (next.ipv6Connectivity, checked.ipv6.portalURL)]
            .first { $0.0 == .portal && !$0.1.isEmpty }?.1 ?? ""
        return next
    }

    /// The path each reachable family's route takes (output link and gateway), which the
    /// active check follows.
    private func checkPaths(of evaluation: ReachabilitySnapshot) -> [AddressFamily: CheckPath] {
        var paths: [AddressFamily: CheckPath] = [:]
        for family in AddressFamily.allCases where family == .ipv4 ? evaluation.isIPv4Reachable : evaluation.isIPv6Reachable {
            guard case .route(let route) = answers[family]?.lookup, let link = route.outputInterfaceIndex, let name = table.links[link]?.name else { continue }
            paths[family] = CheckPath(link: link, linkName: name, gateway: route.gateway)
        }
        return paths
    }

    /// Asks the kernel about `destination` and gathers what the rule needs.
    /// A link-local IPv6 destination's zone binds the flow to that link (`sin6_scope_id`,
    /// `RTA_OIF`); like the kernel, any other destination's zone is not looked at.
    private func destinationFacts(_ destination: IPAddress) -> DestinationFacts {
        let scope = destination.scope
        var zoneLink: InterfaceIndex?
        if destination.family == .ipv6, scope == .link, let zone = destination.zone {
            guard let index = table.index(ofZone: zone) else {
                return DestinationFacts(family: .ipv6, lookup: .failed(errno: ENODEV), source: .failed(errno: ENODEV), destinationScope: scope)
            }
            zoneLink = index
        }
        return StatusReducer.destinationFacts(
            in: table, family: destination.family, answers: kernelAnswers(for: destination, zoneLink: zoneLink), configuration: settings,
            destinationScope: scope
        )
    }

    /// What an application connecting to `destination` gets (a TCP connection to port 443,
    /// ``StatusReducer/applicationFlow``): the source address the kernel selects, then the
    /// route lookup for that source with the flow's keys (without a source when none could be
    /// selected, so that the route's own verdict — unreachable, prohibit... — can be told).
    /// `zoneLink` binds both to a link-local destination's link.
    private func kernelAnswers(for destination: IPAddress, zoneLink: InterfaceIndex? = nil) -> StatusReducer.KernelAnswers {
        let probe = SourceAddressQuery.source(
            toward: destination.bytes, family: destination.family.netlinkFamily, scopeID: UInt32(bitPattern: zoneLink?.rawValue ?? 0)
        )
        let source = applicationSource(probe: probe, toward: destination, zoneLink: zoneLink)
        if case .failure(let error) = source, error.errno == EAFNOSUPPORT {
            Log.debug("\(error)")
        }
        // A source no link holds is not reachable (an IPv6 route's src outliving its address).
        // The mirror may also lag the kernel by an address added a moment ago, whose message is
        // not read yet: read the addresses again before judging.
        if case .success(let bytes) = source, !bytes.allSatisfy({ $0 == 0 }), table.address(bytes, family: destination.family) == nil {
            Log.debug("The selected source \(IPAddress.text(of: bytes, family: destination.family)) is not in the mirror; reading the addresses again.")
            do {
                try resynchronise()
            } catch {
                Log.warning("\(error); judging the source with the mirror as it is.")
            }
        }
        return StatusReducer.KernelAnswers(source: source, lookup: routeLookup(to: destination, source: try? source.get(), outputInterface: zoneLink))
    }

    /// The source of the application's flow toward `destination`: the UDP `probe`'s, unless the
    /// source-less lookups with the probe's keys and the application's differ (a policy rule on
    /// `ipproto`), see ``StatusReducer/applicationSource(probe:probeFlowLookup:applicationFlowLookup:family:)``.
    private func applicationSource(
        probe: Result<[UInt8], SystemError>, toward destination: IPAddress, zoneLink: InterfaceIndex?
    ) -> Result<[UInt8], SystemError> {
        guard let query else { return probe }
        let family = destination.family.netlinkFamily
        do {
            let probeFlowLookup = try query.lookupRoute(
                to: destination.bytes, family: family, outputInterface: zoneLink?.rawValue, flow: SourceAddressQuery.flow
            )
            let applicationFlowLookup = try query.lookupRoute(
                to: destination.bytes, family: family, outputInterface: zoneLink?.rawValue, flow: StatusReducer.applicationFlow
            )
            return StatusReducer.applicationSource(
                probe: probe, probeFlowLookup: probeFlowLookup, applicationFlowLookup: applicationFlowLookup, family: destination.family
            )
        } catch {
            Log.warning("\(error); judging with the UDP probe's source.")
            return probe
        }
    }

    /// Asks the kernel for the route of the application's flow to `destination` from `source`:
    /// the resolved next hop, then (for a route) the matched entry, which adds prefix and metric.
    private func routeLookup(to destination: IPAddress, source: [UInt8]?, outputInterface: InterfaceIndex?) -> RouteLookup {
        // An unspecified source (IPv4 found no address) is no source: the lookup goes without.
        let source = source.flatMap { $0.allSatisfy { $0 == 0 } ? nil : $0 }
        do {
            guard let query else { return .failed(errno: EBADF) }
            let family = destination.family.netlinkFamily
            let flow = StatusReducer.applicationFlow
            let answer = try query.lookupRoute(to: destination.bytes, family: family, source: source, outputInterface: outputInterface?.rawValue, flow: flow)
            guard case .route = answer else { return StatusReducer.routeLookup(answer: answer, matchedEntry: nil, family: destination.family) }
            let matchedEntry = try query.lookupRoute(
                to: destination.bytes, family: family, source: source, outputInterface: outputInterface?.rawValue, flow: flow, matchedEntry: true
            )
            return StatusReducer.routeLookup(answer: answer, matchedEntry: matchedEntry, family: destination.family)
        } catch {
            Log.warning("\(error)")
            return .failed(errno: error.errno)
        }
    }

    private static func routeMessageCount(_ batch: NetlinkBatch) -> Int {
        batch.messages.reduce(0) { count, message in
            switch message.payload {
            case .newRoute, .deleteRoute: count + 1
            default: count
            }
        }
    }
}
