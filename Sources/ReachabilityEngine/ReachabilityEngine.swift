#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The reachability engine: rtnetlink events in, ``ReachabilitySnapshot`` changes out.
///
/// One event's walk goes one way, each step in a room of its own:
/// 1. events: `handle(_:)` reads a batch from a ``NetlinkEventSource`` (the route socket,
///    filtered by ``RouteFilterControl``, or the neighbour socket of ``GatewayFollowing``);
/// 2. mirror: links, addresses and default routes go into ``LinkMirror`` (dumped again after a
///    lost message);
/// 3. gather: `gather(_:)` asks ``KernelLookups`` everything the rule needs, in one exchange:
///    the probes of the families the batch concerned, the nameservers, and IPv4's probe
///    synthesized with each NAT64 prefix that may be in use (the mirror catches up first when
///    an answer names an address it lacks); ``GatewayFollowing`` follows the probe routes'
///    gateways; the evidence held is read;
/// 4. rule: ``StatusReducer/evaluation(of:configuration:)``, one pure function from what was
///    gathered and the configuration to the whole snapshot (``ReachabilityRule``,
///    ``EvidenceRule``, ``DNSRule``, the NAT64 prefix in use, ``IPv4AccessRule``, ``CLATPath``)
///    and what to follow;
/// 5. follow: `follow(_:)`: ``ActiveConnectivityChecks`` follows the paths the rule found (a new
///    path's check starts at a later turn of the queue), ``DataStallSampling`` their uplinks'
///    counters, ``RFC7050Discovery`` IPv6's path while the rule wants discovery, and the links
///    read decide which events walk next;
/// 6. publish: ``PublishingStage`` damps losses and rate-limits the announcements.
///
/// A link or address event that no link the last walk read concerns (``LinksInUse``: a
/// container's veth end, a bridge port, a link without a global address or a default route)
/// takes no walk. The `Interfaces` property is listed from the mirror apart from the walk
/// (``LinkMirror/interfaces(configuration:)``): at once with a snapshot whose other properties
/// changed, otherwise at most once per ``BusContract/interfacesIntervalMilliseconds`` while
/// links keep changing (``CoalescingWindow``), so that a burst of link events costs a few
/// listings and announcements, not one per event.
///
/// A check's verdict enters like an event: it schedules a walk from the rule on at the queue's
/// next turn (`checkEvidenceChanged()`), so no walk runs inside another.
///
/// Only batches of link, address, rule or nexthop events, or of routes whose prefix contains a
/// probe destination, take the walk; routes for the destinations clients asked about
/// (``checkAddress(_:caller:)``) only call ``onRoutingEvents``. What callers ask besides is in
/// `ReachabilityEngine+Questions.swift`. Confined to `queue`: call every method there;
/// callbacks run there.
public final class ReachabilityEngine: @unchecked Sendable {
    let queue: DispatchQueue
    private let configuration: EngineConfiguration
    /// The mirror of links and addresses.
    let mirror: LinkMirror
    /// The questions to the kernel (the query socket).
    let lookups = KernelLookups()
    /// The subscribed socket's event source (it owns and closes the socket).
    private var events: NetlinkEventSource?
    /// Which route messages the subscribed socket lets through.
    let routeFilter: RouteFilterControl
    /// The gateways of the probes' routes and what their neighbour entries say.
    let gateways: GatewayFollowing
    /// Damping and the announcements' rate limit: what subscribers see.
    let publishing: PublishingStage
    var settings = DaemonConfiguration.default
    /// Per link, the `network-id` the last walk found (``StatusReducer/Evaluation/networkIDs``).
    private var networkIDs: [InterfaceIndex: String] = [:]
    /// Per wireless link, the SSID of the network it is associated with, as systemd-networkd
    /// says (``setWiFiSSID(_:link:)``): part of ``NetworkIdentity``.
    var wifiSSIDs: [InterfaceIndex: String] = [:]
    /// The captive-portal APIs networks advertise per link (RFC 8910), for the active check and
    /// `Explain()`.
    var captivePortalAPIs = AdvertisedCaptivePortalAPIs()
    /// The NAT64 prefixes routers advertise (RFC 8781), for `NAT64Prefix` and `Explain()`.
    var nat64Prefixes = AdvertisedNAT64Prefixes()
    /// RFC 7050 discovery of the NAT64 prefix, while no router advertises one and checks run.
    let rfc7050: RFC7050Discovery
    /// Fires when the next NAT64 prefix's lifetime runs out; nil when none is known.
    private var nat64ExpiryTimer: DispatchSourceTimer?
    /// Fires when the published captive-portal session's `seconds-remaining` next counts down
    /// (``StatusReducer/Evaluation/sessionCountdown``); nil when it does not.
    private var sessionCountdownTimer: DispatchSourceTimer?
    /// The kernel's last answers per probe family, reused for a family no event of a batch
    /// concerned (an IPv4 route cannot change what IPv6 gets, nor the reverse).
    private var answers: [AddressFamily: StatusReducer.KernelAnswers] = [:]
    /// Per family, the removals the events announced that its answers must no longer show
    /// (``AnnouncedRemovals``: the kernel announces some before they take effect).
    private var announcedRemovals: [AddressFamily: AnnouncedRemovals] = [:]
    /// Per family, how many times in a row its answer has been asked again because it still
    /// showed an announced removal; a family is in it while such a walk is scheduled.
    private var settlingAttempts: [AddressFamily: Int] = [:]
    /// The opt-in active check (`[Connectivity] CheckURL=`).
    let checks: ActiveConnectivityChecks
    /// Data-stall detection from the host's own traffic over the families' uplinks.
    let stalls: DataStallSampling
    /// Whether a walk for the checks' new evidence is scheduled.
    private var isCheckEvidenceWalkScheduled = false
    /// Who may start a check on demand (``checkConnectivity(caller:connection:reply:)``).
    var onDemandChecks = OnDemandCheckGate()
    /// The `CheckConnectivity()` calls waiting for a check, by the checks' waiter token.
    var waitingConnectivityCalls: [Int: WaitingConnectivityCall] = [:]
    /// A `CheckConnectivity()` call waiting for a check: whose, from which connection, its reply.
    struct WaitingConnectivityCall {
        var caller: CallerShare
        var connection: String
        var reply: (Connectivity) -> Void
    }
    /// The configured nameservers (``setNameServers(_:)``), asked about in every walk for `DNS`;
    /// nil until the daemon has read them (`DNS` is `unknown` till then). `Interfaces` lists
    /// each link's.
    var nameServers: [NameServer]? {
        didSet { mirror.isListingStale = true }
    }
    /// The links the last walk read: a link or address event concerning none of them takes no walk.
    private var linksInUse = LinksInUse.every
    /// The NAT64 prefix and the CLAT's uplink the last walk decided with, which `CheckDestination`
    /// decides with too.
    private(set) var destinationContext = DestinationRule.Context()
    /// When `Interfaces` is listed while links keep changing.
    private var listingWindow = CoalescingWindow(intervalNanoseconds: UInt64(BusContract.interfacesIntervalMilliseconds) * 1_000_000)
    /// The listing scheduled at the end of the window; nil when none is.
    private var scheduledListing: DispatchWorkItem?
    /// Whether a listing of `Interfaces` waits for the end of its window (`Explain()` says so).
    var isInterfacesListingPending: Bool { scheduledListing != nil }

    /// The HTTP client the active check uses; nil (the default): no active check can run,
    /// whatever the configuration says. Set before ``start(onChange:)``.
    public var checkClient: HTTPCheckClient? {
        get { checks.client }
        set {
            checks.client = newValue
            chooseNAT64PrefixLookup()
        }
    }

    /// The way RFC 7050's lookup of `ipv4only.arpa` goes to the network's resolver; nil (the
    /// default): through ``checkClient``'s resolver. Its answers come on the queue. Set before
    /// ``start(onChange:)``.
    public var nat64PrefixLookup: IPv6AddressLookup? {
        didSet { chooseNAT64PrefixLookup() }
    }

    private func chooseNAT64PrefixLookup() {
        rfc7050.lookup = nat64PrefixLookup ?? checks.client.map { CheckClientAddressLookup(client: $0) }
    }

    /// Called on the queue after batches of link, address, route, rule or nexthop events (and
    /// after a resynchronisation), once evaluated, whether or not the snapshot changed: routes
    /// to other destinations may have changed. At most once per
    /// ``BusContract/routesChangedIntervalMilliseconds`` (a burst's rest comes once at the end
    /// of the interval), as `RoutesChanged` on the bus. Route events reach the engine only for
    /// prefixes containing a probe or a watched destination (see ``checkAddress(_:caller:)``).
    /// Set before ``start(onChange:)``.
    public var onRoutingEvents: () -> Void {
        get { publishing.announceRouting }
        set { publishing.announceRouting = newValue }
    }

    /// Called on the queue with the links on which routes that router advertisements installed
    /// were added, replaced or deleted, once per batch: where systemd-networkd handles the
    /// advertisements it installs their routes again at each one (refreshing their lifetimes),
    /// while it signals nothing when their PREF64 option changes, so its record is read again
    /// then. Set on the queue.
    public var onRouterAdvertisementRoutes: (Set<InterfaceIndex>) -> Void = { _ in }

    /// The last evaluated snapshot (`.unknown` before ``start(onChange:)``).
    public private(set) var snapshot = ReachabilitySnapshot.unknown

    /// What subscribers see: ``snapshot``, except while `DownDelaySec=` holds a loss back.
    public var publishedSnapshot: ReachabilitySnapshot { publishing.published }

    /// Creates an engine confined to `queue`.
    public init(queue: DispatchQueue, configuration: EngineConfiguration = EngineConfiguration()) {
        self.queue = queue
        self.configuration = configuration
        mirror = LinkMirror(queue: queue, lookups: lookups, inspector: SysfsLinkInspector(root: configuration.sysfsRoot))
        gateways = GatewayFollowing(lookups: lookups)
        routeFilter = RouteFilterControl(queue: queue)
        publishing = PublishingStage(queue: queue)
        checks = ActiveConnectivityChecks(queue: queue)
        stalls = DataStallSampling(queue: queue, sysfsRoot: configuration.sysfsRoot)
        rfc7050 = RFC7050Discovery(queue: queue)
        checks.onEvidence = { [weak self] in self?.checkEvidenceChanged() }
        checks.captivePortalAPI = { [weak self] link in self?.captivePortalAPIs.uri(for: link) }
        rfc7050.onChange = { [weak self] in self?.checkEvidenceChanged() }
        // A stall found is checked at once (to confirm or clear it), and so is one that ended.
        stalls.onChange = { [weak self] began, ended in
            guard let self else { return }
            began.forEach(checks.passiveEvidenceRaised)
            ended.forEach(checks.passiveEvidenceCleared)
            checkEvidenceChanged()
        }
        mirror.onLateResynchronisation = { [weak self] in self?.reevaluate() }
        // Only the default routes changed: no question to the kernel, no routing announcement;
        // the start-up's listing is completed at once, not at the end of its window.
        mirror.onDefaultRoutesRead = { [weak self] in
            self?.reevaluate([], announcingRoutes: false)
            if self?.mirror.isListingStale == true { self?.listInterfacesAndPublish() }
        }
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
            try routeFilter.attach(to: monitor)
            try monitor.subscribe(to: NetlinkSocket.Group.allCases.filter { $0 != .neighbour })
            try lookups.open()
            // The default routes (for `Interfaces`) now, or later (readDeferredDefaultRoutes()):
            // their dump reads every route, and the first status needs none of them.
            try mirror.resynchronise(defaultRoutes: configuration.readsDefaultRoutesAfterStart ? .deferred : .now)
        } catch {
            routeFilter.detach()
            monitor.close()
            throw error
        }
        // Before the evaluation, which follows the probes' gateways through this socket's filter.
        gateways.open()
        snapshot = walk()
        snapshot.interfaces = listInterfaces()
        publishing.start(with: snapshot)
        let source = NetlinkEventSource(socket: monitor, queue: queue) { [weak self] batch in self?.handle(batch) }
        source.start()
        events = source
        gateways.startListening(on: queue) { [weak self] batch in self?.handle(batch) }
        if configuration.readsDefaultRoutesAfterStart {
            queue.asyncAfter(deadline: .now() + Self.deferredDefaultRoutesLatest) { [weak self] in self?.readDeferredDefaultRoutes() }
        }
        return snapshot
    }

    /// How long after ``start(onChange:)`` the default routes are read at the latest when
    /// ``EngineConfiguration/readsDefaultRoutesAfterStart`` and nobody asked sooner.
    static let deferredDefaultRoutesLatest = DispatchTimeInterval.seconds(1)

    /// Reads the default routes (the `Interfaces` gateways) that start-up left for later
    /// (``EngineConfiguration/readsDefaultRoutesAfterStart``), at the queue's next turn, and
    /// publishes the `Interfaces` they change; nothing when they were read already. The daemon
    /// calls it once `READY=1` is sent.
    public func readDeferredDefaultRoutes() {
        dispatchPrecondition(condition: .onQueue(queue))
        mirror.readDeferredDefaultRoutes()
    }

    /// Stops listening and closes the sockets.
    public func stop() {
        publishing.stop()
        scheduledListing?.cancel()
        scheduledListing = nil
        checks.stop()
        stalls.stop()
        rfc7050.follow(ipv6Path: nil, intervalSeconds: settings.connectivity.intervalSeconds)
        nat64ExpiryTimer?.cancel()
        nat64ExpiryTimer = nil
        sessionCountdownTimer?.cancel()
        sessionCountdownTimer = nil
        events?.cancel()
        events = nil
        gateways.stop()
        routeFilter.detach()
        lookups.close()
    }

    /// The configuration in force.
    public var daemonConfiguration: DaemonConfiguration { settings }

    /// Replaces the configuration and re-evaluates; reports a changed snapshot like an event
    /// would. A loss held under the old `DownDelaySec=` is judged again under the new one.
    public func apply(_ configuration: DaemonConfiguration) {
        dispatchPrecondition(condition: .onQueue(queue))
        settings = configuration
        mirror.isListingStale = true
        checks.apply(configuration.connectivity)
        stalls.isEnabled = configuration.connectivity.detectsDataStalls
        guard lookups.isOpen else { return }
        if publishing.cancelHeldLoss() { publish(snapshot) }
        reevaluate()
    }

    // MARK: The walk: events -> mirror -> gather -> rule -> follow -> publish

    /// Events: a batch updates the mirror (a lost message resynchronises it), and tells which
    /// probe families to ask the kernel about again, whether only other destinations' routes
    /// changed, or only a gateway's evidence.
    private func handle(_ batch: NetlinkBatch) {
        mirror.report(batch.parseErrors)
        if batch.foreignDatagrams > 0 {
            Log.debug("Ignored \(batch.foreignDatagrams) netlink datagram(s) not sent by the kernel.")
        }
        Log.debug("Read \(batch.messages.count) rtnetlink message(s), \(Self.routeMessageCount(batch)) of them route(s).")
        // changed: the families whose probe route may have changed; routing: only other
        // destinations' routes. Links, addresses, rules and nexthops concern both families.
        var changed: Set<AddressFamily> = []
        var routing = false
        var gatewayEvidence = false
        // A route toward a configured nameserver: `DNS` is judged again (its own walk).
        var nameServerRoutes = false
        var nat64PrefixesChanged = false
        // Links or addresses changed that no walk needs: RoutesChanged and the listing still follow.
        var linksChangedAside = false
        var advertisedRouteLinks: Set<InterfaceIndex> = []
        if batch.overflowed {
            Log.warning("Netlink receive queue overrun, resynchronising.")
            // The gateways' entries are read again too, and the policy rules.
            gateways.reset()
            lookups.rulesChanged()
            do {
                try mirror.resynchronise(defaultRoutes: .shortlyAfter)
            } catch {
                Log.error("\(error); keeping the previous link state.")
            }
            changed = Set(AddressFamily.allCases)
        }
        for message in batch.messages {
            switch message.payload {
            case .deleteLink(let link):
                captivePortalAPIs.forget(link.index)
                wifiSSIDs[link.index] = nil
                if nat64Prefixes.forget(link.index) { nat64PrefixesChanged = true }
                if gateways.linkLostCarrier(link.index) { gatewayEvidence = true }
            case .newLink(let link) where !(link.isUp && link.hasCarrier):
                // The network that comes back may not be the one that advertised it: a router
                // advertisement names the API and the NAT64 prefix again. (DHCP's goes with its
                // lease: networkd and NetworkManager publish that themselves.) Its gateways'
                // entries tell of it only once something is sent to them again.
                if captivePortalAPIs.set(nil, for: link.index, from: .routerAdvertisement) { checks.captivePortalAPIChanged(on: link.index) }
                if nat64Prefixes.forget(link.index) { nat64PrefixesChanged = true }
                if gateways.linkLostCarrier(link.index) { gatewayEvidence = true }
            case .deleteRoute(let route) where route.destinationLength == 0:
                // A router's default route goes when it stops being one: the API it advertised
                // goes too. (Its NAT64 prefix stays for its own lifetime: RFC 8781.)
                guard let router = route.gatewayAddress, let link = route.outputInterface else { break }
                if captivePortalAPIs.forget(router: router, on: link) { checks.captivePortalAPIChanged(on: link) }
            default: break
            }
            if let link = message.payload.linkOfRouteFromRouterAdvertisement { advertisedRouteLinks.insert(link) }
            noteRemoval(message.payload)
            if let change = mirror.apply(message.payload) {
                if linksInUse.needsWalk(change) { changed = Set(AddressFamily.allCases) } else { linksChangedAside = true }
                continue
            }
            switch message.payload {
            case .newRoute(let route), .deleteRoute(let route):
                mirror.applyRoute(message)
                if RouteFilterControl.concernsProbes(route) {
                    changed.formUnion(route.addressFamily.map { [$0] } ?? AddressFamily.allCases)
                } else if routeFilter.concernsWatched(route) {
                    routing = true
                    if nameServers?.contains(where: { route.prefixContains($0.address) }) == true { nameServerRoutes = true }
                }
            case .ruleChanged(let added, let selectors):
                lookups.ruleChanged(added: added, selectors: selectors)
                changed = Set(AddressFamily.allCases)
            case .nexthopChanged: changed = Set(AddressFamily.allCases)
            case .newNeighbour(let neighbour):
                // Only the followed gateways' entries come: one that changes tells of traffic.
                stalls.trafficMayHaveStarted()
                guard let change = gateways.apply(neighbour, linkHasCarrier: linkHasCarrier(neighbour.index)) else { break }
                gatewayEvidence = true
                // The gateway answers again (an application got through): what checks said
                // during the outage is checked again now, not at the back-off's next turn.
                if change.cleared { checks.passiveEvidenceCleared(change.family) }
            case .routerAdvertisementOption(let option):
                if let uri = option.captivePortalAPI, captivePortalAPIs.set(uri, for: option.index, from: .routerAdvertisement, router: option.router) {
                    checks.captivePortalAPIChanged(on: option.index)
                }
                if let prefix = option.nat64Prefix {
                    if nat64Prefixes.set(prefix, on: option.index, router: option.router, now: clockSeconds(CLOCK_BOOTTIME)) { nat64PrefixesChanged = true }
                    // A refreshed lifetime moves the expiry too.
                    scheduleNAT64Expiry()
                }
            default: break
            }
        }
        if nat64PrefixesChanged { scheduleNAT64Expiry() }
        if !advertisedRouteLinks.isEmpty { onRouterAdvertisementRoutes(advertisedRouteLinks) }
        if !changed.isEmpty {
            reevaluate(changed)
        } else {
            if gatewayEvidence || nameServerRoutes || nat64PrefixesChanged { reevaluate([], announcingRoutes: false) }
            if routing || linksChangedAside { publishing.routingEventsOccurred() }
            if mirror.isListingStale { interfacesMayHaveChanged() }
        }
    }

    /// Events: records a removal a message announces for the probes, or takes one back
    /// (``AnnouncedRemovals``): a route containing a probe, an address.
    private func noteRemoval(_ payload: RouteNetlinkPayload) {
        switch payload {
        case .newRoute(let route), .deleteRoute(let route):
            guard let family = route.addressFamily, RouteFilterControl.concernsProbes(route) else { return }
            let removed = AnnouncedRemovals.Route(
                prefix: route.destinationLength == 0 ? nil : route.destinationAddress.map { "\($0)/\(route.destinationLength)" }, table: route.table,
                metric: route.priority ?? 0, outputLink: route.outputInterface, gateway: route.gatewayAddress, type: route.type
            )
            if case .deleteRoute = payload { announcedRemovals[family, default: .init()].routeDeleted(removed) } else { announcedRemovals[family]?.routeAdded(removed) }
        case .newAddress(let message), .deleteAddress(let message):
            guard let address = message.ipAddress else { return }
            let removed = AnnouncedRemovals.Address(address: address, link: message.index)
            if case .deleteAddress = payload { announcedRemovals[address.family, default: .init()].addressDeleted(removed) } else { announcedRemovals[address.family]?.addressAdded(removed) }
        default:
            break
        }
    }

    /// Lookups: whether `family`'s new answer may still show a removal the events announced
    /// (``AnnouncedRemovals/mayPredateRemoval(lookup:source:family:outputLink:)``); if so, the
    /// family is asked again shortly (at growing intervals, a bounded number of times), else
    /// the removals are settled.
    private func settle(_ family: AddressFamily) {
        guard let answer = answers[family] else { return }
        let table = mirror.table
        let removals = announcedRemovals[family] ?? AnnouncedRemovals()
        var outputLink: AnnouncedRemovals.OutputLink?
        if case .route(let route) = answer.lookup, let index = route.outputInterfaceIndex, let link = table.links[index] {
            // The mirror's addresses are scanned only for a link that lost one (the rule asks
            // nothing else of them): not on every walk.
            let lostAnAddress = removals.addresses.contains { $0.link == index }
            outputLink = AnnouncedRemovals.OutputLink(
                isUp: link.isUp, holdsAddressOfFamily: !lostAnAddress || table.addresses.keys.contains { $0.index == index && $0.family == family }
            )
        }
        guard removals.mayPredateRemoval(lookup: answer.lookup, source: try? answer.source.get(), family: family, outputLink: outputLink) else {
            announcedRemovals[family] = nil
            settlingAttempts[family] = nil
            return
        }
        let attempt = settlingAttempts[family] ?? 0
        guard attempt < Self.settlingAttemptLimit else {
            Log.warning("The kernel's \(family) answer still shows a removal it announced after \(attempt) new questions; judging it as it is.")
            announcedRemovals[family] = nil
            settlingAttempts[family] = nil
            return
        }
        settlingAttempts[family] = attempt + 1
        Log.debug("The kernel's \(family) answer may predate a removal it announced; asking again.")
        queue.asyncAfter(deadline: .now() + .milliseconds(1 << attempt)) { [weak self] in
            guard let self, lookups.isOpen else { return }
            reevaluate([family], announcingRoutes: false)
        }
    }

    /// How many times in a row a family's answer is asked again while it may predate an
    /// announced removal (after 1, 2, 4... ms: about a second in all), before it is taken as it is.
    static let settlingAttemptLimit = 10

    /// Events: (re)arms the timer for the next NAT64 prefix's lifetime to run out (the kernel
    /// sends no withdrawal), or cancels it when none is known. The lifetimes count on
    /// `CLOCK_BOOTTIME` and the timer on the wall clock, so that time spent suspended counts.
    private func scheduleNAT64Expiry() {
        arm(&nat64ExpiryTimer, at: nat64Prefixes.nextExpiry) { [weak self] in self?.expireNAT64Prefixes() }
    }

    /// (Re)arms `timer` (made at the first deadline) to call `handler` on the queue at
    /// `deadline`, seconds of `CLOCK_BOOTTIME`, on the wall clock, so that time spent suspended
    /// counts; cancels it when `deadline` is nil.
    private func arm(_ timer: inout DispatchSourceTimer?, at deadline: Double?, handler: @escaping () -> Void) {
        guard let deadline else {
            timer?.cancel()
            timer = nil
            return
        }
        let armed = timer ?? {
            let made = DispatchSource.makeTimerSource(queue: queue)
            made.setEventHandler(handler: handler)
            made.resume()
            return made
        }()
        timer = armed
        let delay = max(0, deadline - clockSeconds(CLOCK_BOOTTIME))
        armed.schedule(wallDeadline: .now() + .milliseconds(Int((delay * 1000).rounded(.up))), leeway: .milliseconds(100))
    }

    /// Events: the lifetime of a NAT64 prefix ran out.
    private func expireNAT64Prefixes() {
        guard lookups.isOpen else { return }
        if nat64Prefixes.expire(now: clockSeconds(CLOCK_BOOTTIME)) {
            Log.info("A NAT64 prefix's lifetime ran out.")
            reevaluate([], announcingRoutes: false)
        }
        scheduleNAT64Expiry()
    }

    /// Takes systemd-networkd's record of the NAT64 prefixes on `link` (where networkd handles
    /// router advertisements itself, `UsePREF64=yes`, the kernel hands the PREF64 option to
    /// nobody else) in place of its previous one; an empty record forgets them.
    public func setNetworkdNAT64Prefixes(_ records: [NetworkdPREF64], link: InterfaceIndex) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard lookups.isOpen else { return }
        let prefixes = records.map { (prefix: IPPrefix($0.network, length: $0.length), router: $0.router, expires: $0.lifetimeEndSeconds) }
        let changed = nat64Prefixes.replaceNetworkdRecord(prefixes, of: link, now: clockSeconds(CLOCK_BOOTTIME))
        scheduleNAT64Expiry()
        guard changed else { return }
        Log.info("systemd-networkd on link \(link.rawValue): " + (prefixes.isEmpty ? "no NAT64 prefix." : "the NAT64 prefix(es) \(prefixes.map { "\($0.prefix)" }.joined(separator: ", "))."))
        reevaluate([], announcingRoutes: false)
    }

    /// The link IPv6's probe route goes out of, from the last answers; nil when none.
    var ipv6RouteLink: InterfaceIndex? {
        guard case .route(let route)? = answers[.ipv6]?.lookup else { return nil }
        return route.outputInterfaceIndex
    }

    /// Events: the active check's evidence changed. The walk from the rule on follows at the
    /// queue's next turn, as for an event of its own: never inside the walk under way (following
    /// the checks is a step of it), and once for all the changes of one turn.
    private func checkEvidenceChanged() {
        guard !isCheckEvidenceWalkScheduled else { return }
        isCheckEvidenceWalkScheduled = true
        queue.async { [weak self] in
            guard let self else { return }
            isCheckEvidenceWalkScheduled = false
            // Stopped meanwhile: nothing more is published.
            guard lookups.isOpen else { return }
            reevaluate([], announcingRoutes: false)
        }
    }

    /// The walk after the mirror: asks the kernel anew about the probes of `families` only
    /// (none: only the evidence changed), evaluates, publishes a changed snapshot, and announces
    /// routing events unless told not to.
    func reevaluate(_ families: Set<AddressFamily> = Set(AddressFamily.allCases), announcingRoutes: Bool = true) {
        StageTimes.recorder?.mark(.evaluating)
        var next = walk(families)
        if next != snapshot {
            // Never delayed, and with the entries that explain it.
            if mirror.isListingStale { next.interfaces = listInterfaces() }
            snapshot = next
            publish(next)
        } else if mirror.isListingStale {
            interfacesMayHaveChanged()
        }
        if announcingRoutes { publishing.routingEventsOccurred() }
    }

    /// Publish: the links, addresses, default routes, configuration or nameservers changed and
    /// nothing else: `Interfaces` is listed again now, or at the end of the window of the last
    /// listing (once, however many changes come meanwhile), and published when an entry changed.
    private func interfacesMayHaveChanged() {
        switch listingWindow.changed(at: DispatchTime.now().uptimeNanoseconds) {
        case .runNow:
            listInterfacesAndPublish()
        case .runAt(let due):
            let listing = DispatchWorkItem { [weak self] in
                guard let self, lookups.isOpen else { return }
                listInterfacesAndPublish()
            }
            scheduledListing = listing
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due), execute: listing)
        case .alreadyScheduled:
            break
        }
    }

    /// Publish: lists `Interfaces` and publishes the snapshot with them when an entry changed.
    private func listInterfacesAndPublish() {
        let listing = listInterfaces()
        guard listing != snapshot.interfaces else { return }
        snapshot.interfaces = listing
        publish(snapshot)
    }

    /// `interfaces` with each entry's `network-id` from the last walk's ``networkIDs``.
    private func withNetworkIDs(_ interfaces: [NetworkInterface]) -> [NetworkInterface] {
        var interfaces = interfaces
        for position in interfaces.indices {
            let id = networkIDs[interfaces[position].index] ?? ""
            if interfaces[position].networkID != id { interfaces[position].networkID = id }
        }
        return interfaces
    }

    /// The `Interfaces` entries of the mirror's links (``LinkMirror/interfaces(configuration:)``)
    /// with their nameservers and network ids; the listing window starts again (a scheduled listing is dropped:
    /// this one covers it).
    private func listInterfaces() -> [NetworkInterface] {
        scheduledListing?.cancel()
        scheduledListing = nil
        listingWindow.ran(at: DispatchTime.now().uptimeNanoseconds)
        mirror.isListingStale = false
        var interfaces = mirror.interfaces(configuration: settings)
        if let nameServers, !nameServers.isEmpty {
            let table = mirror.table
            for (position, entry) in interfaces.enumerated() {
                interfaces[position].nameServers = nameServers.filter { $0.link(indexOfZone: table.index(ofZone:)) == entry.index }.map(\.address)
            }
        }
        return withNetworkIDs(interfaces)
    }

    /// The walk after the mirror, in three steps: `gather(_:)` asks the kernel everything the
    /// rule needs (once) and reads the evidence held; ``StatusReducer/evaluation(of:configuration:)``,
    /// pure, decides the whole snapshot and what to follow; `follow(_:)` hands the paths on.
    /// Returns the snapshot with the `Interfaces` last listed.
    private func walk(_ families: Set<AddressFamily> = Set(AddressFamily.allCases)) -> ReachabilitySnapshot {
        let gathered = gather(families)
        StageTimes.recorder?.mark(.answered)
        let evaluation = StatusReducer.evaluation(of: gathered, configuration: settings)
        follow(evaluation)
        var snapshot = evaluation.snapshot
        // (The entries published carry the ids of the walk before: each listing applies them.
        // Only a change walks the entries, which a host with thousands of links has.)
        let idsChanged = evaluation.networkIDs != networkIDs
        networkIDs = evaluation.networkIDs
        snapshot.interfaces = idsChanged ? withNetworkIDs(self.snapshot.interfaces) : self.snapshot.interfaces
        return snapshot
    }

    /// Lookups: what the rule step decides from. The kernel is asked about the probes of
    /// `families` (the others' answers are kept from before), the nameservers, and IPv4's probe
    /// synthesized with each NAT64 prefix that may be in use
    /// (``StatusReducer/nat64PrefixesPossiblyInUse(advertised:discovered:)``: whether IPv4 needs
    /// it is known only once the answers are), all together (`refresh(_:alsoAsking:)`, which
    /// also follows the probe routes' gateways); then the evidence held is read.
    private func gather(_ families: Set<AddressFamily>) -> StatusReducer.Gathered {
        let synthesized = StatusReducer.nat64PrefixesPossiblyInUse(advertised: nat64Prefixes, discovered: rfc7050.discovered).compactMap { prefix in
            NAT64Synthesis.address(embedding: Probes.ipv4, in: prefix.network, length: prefix.length).map { (prefix: prefix, question: KernelLookups.Question(destination: $0)) }
        }
        let (ipv4, ipv6, answered) = refresh(families, alsoAsking: (nameServers?.compactMap(nameServerQuestion) ?? []) + synthesized.map(\.question))
        var gathered = StatusReducer.Gathered(
            table: mirror.table, ipv4: ipv4, ipv6: ipv6, nameServers: nameServers.map { $0.map { nameServerFacts($0, answered: answered) } },
            advertisedNAT64Prefixes: nat64Prefixes, discoveredNAT64Prefix: rfc7050.discovered,
            synthesizedProbes: Dictionary(uniqueKeysWithValues: synthesized.compactMap { probe in answered[probe.question].map { (probe.prefix, $0) } }),
            nameLookups: checks.nameLookupEvidence, isCheckEnabled: checks.isEnabled, now: clockSeconds(CLOCK_BOOTTIME)
        )
        gathered.networkIDKey = configuration.networkIDKey
        gathered.wifiSSIDs = wifiSSIDs
        for family in AddressFamily.allCases {
            gathered.gatewayEvidence[family] = gateways.current(family)?.evidence
            gathered.gatewayLinkLayerAddresses[family] = gateways.current(family)?.linkLayerAddress
            gathered.checkEvidence[family] = checks.evidence(family)
            if let stall = stalls.stall(family), let path = stalls.path(family) { gathered.stallEvidence[family] = (path, stall) }
        }
        return gathered
    }

    /// Follow: the active check takes the paths the rule found, RFC 7050 discovery IPv6's while
    /// the rule wants it (a path on another link drops what it found: the rule step already
    /// counted on that), the links read decide which events walk next (``linksInUse``), and
    /// `CheckDestination` takes the rule's NAT64 prefix and CLAT uplink (``destinationContext``),
    /// and the walk is taken again when the captive-portal session next counts down.
    private func follow(_ evaluation: StatusReducer.Evaluation) {
        checks.follow(evaluation.checkPaths)
        stalls.follow(evaluation.checkPaths)
        arm(&sessionCountdownTimer, at: evaluation.sessionCountdown) { [weak self] in
            guard let self, lookups.isOpen else { return }
            reevaluate([], announcingRoutes: false)
        }
        rfc7050.follow(ipv6Path: evaluation.nat64DiscoveryPath, intervalSeconds: settings.connectivity.intervalSeconds)
        linksInUse = evaluation.linksInUse
        destinationContext = evaluation.destinationContext
    }

    /// Lookups: the kernel's answers for the probes of `families` (the others' are kept from
    /// before) and for the `extra` questions, asked together; then the gateways of the probes'
    /// routes followed. Returns the probes' answers and every answer of this exchange.
    private func refresh(
        _ families: Set<AddressFamily>, alsoAsking extra: [KernelLookups.Question]
    ) -> (ipv4: StatusReducer.KernelAnswers, ipv6: StatusReducer.KernelAnswers, answered: [KernelLookups.Question: StatusReducer.KernelAnswers]) {
        let probes = Probes.all.filter { families.contains($0.family) || answers[$0.family] == nil }
        let answered = askKernel(probes.map { KernelLookups.Question(destination: $0) } + extra)
        for probe in probes {
            answers[probe.family] = answered[KernelLookups.Question(destination: probe)]
            settle(probe.family)
        }
        gateways.follow(answers, linkHasCarrier: linkHasCarrier)
        // (Both set by the loop above.)
        return (answers[.ipv4]!, answers[.ipv6]!, answered)
    }

    /// Whether `link` is up with carrier in the mirror: whether its gateways' entries tell of a network.
    private func linkHasCarrier(_ link: InterfaceIndex) -> Bool {
        mirror.table.links[link].map { $0.isUp && $0.hasCarrier } ?? false
    }

    /// Publish: hands an evaluation to the publishing stage under the configuration in force.
    private func publish(_ evaluation: ReachabilitySnapshot) {
        publishing.evaluated(evaluation, delaySeconds: settings.downDelaySeconds) { [weak self] in self?.snapshot ?? evaluation }
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
