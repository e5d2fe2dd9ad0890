import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The engine's mirror of the kernel's links, addresses and default routes: a ``LinkTable``
/// kept by events, refilled from dumps when a message was lost, when a dump was interrupted, or
/// when the kernel's answer names a source address the mirror does not hold yet. Confined to
/// the engine's queue.
final class LinkMirror: @unchecked Sendable {
    private let queue: DispatchQueue
    /// Where the dumps are asked.
    private let lookups: KernelLookups
    /// The links and addresses.
    private(set) var table: LinkTable
    private var parseErrorLog = ParseErrorLog()
    /// Whether a resynchronisation is scheduled after an interrupted dump.
    private var resynchronisationScheduled = false
    /// Whether a reading of the default routes is scheduled after an overrun.
    private var defaultRouteReadingScheduled = false
    /// Whether a resynchronisation left the default routes for ``readDeferredDefaultRoutes()``.
    private var defaultRoutesDeferred = false
    /// The links classified under a configuration, by index: what ``interfaces(configuration:)``
    /// lists, each link classified again only when it or a link its classification reads changed
    /// (``reclassify``); nil: every link is classified at the next listing.
    private var classified: (configuration: DaemonConfiguration, links: [InterfaceIndex: LinkFacts])?
    /// The links changed since the last listing (and the bridges or bonds they left or joined).
    private var reclassify: Set<InterfaceIndex> = []
    /// Whether the links, addresses or default routes changed since the engine last listed the
    /// `Interfaces` (it also sets this when the configuration or the nameservers change).
    var isListingStale = true
    /// Called on the queue after a scheduled resynchronisation (``resynchronise()`` is not
    /// followed by it): the engine evaluates again.
    var onLateResynchronisation: () -> Void = {}
    /// Called on the queue after the default routes read at the queue's next turn
    /// (``DefaultRouteReading/atNextTurn``): only they changed, so the engine lists the links again.
    var onDefaultRoutesRead: () -> Void = {}

    /// An empty mirror classifying links with `inspector`, dumping through `lookups`.
    init(queue: DispatchQueue, lookups: KernelLookups, inspector: SysfsLinkInspector) {
        self.queue = queue
        self.lookups = lookups
        table = LinkTable(inspector: inspector)
    }

    /// Applies an event's message; returns the change when it was a link or address message.
    func apply(_ payload: RouteNetlinkPayload) -> MirrorChange? {
        var linkBefore: LinkDescription?
        if case .newLink(let link) = payload { linkBefore = table.links[link.index] }
        if case .deleteLink(let link) = payload { linkBefore = table.links[link.index] }
        guard table.apply(payload) else { return nil }
        isListingStale = true
        switch payload {
        case .newLink(let link), .deleteLink(let link):
            let change = LinkChange(index: link.index, before: linkBefore, after: table.links[link.index])
            reclassify.insert(link.index)
            reclassify.formUnion(change.masters)
            return .link(change)
        case .newAddress(let address), .deleteAddress(let address):
            // (A tunnel's underlying link is among the links with an address: every tunnel is
            // classified again at each listing. An address of RFC 7335's range makes or unmakes a CLAT.)
            if let held = address.ipAddress, CLATPath.isCLATAddress(held) { reclassify.insert(address.index) }
            return .address(index: address.index, isGlobalScope: address.isGlobalScope)
        default:
            // (LinkTable.apply takes nothing else.)
            return nil
        }
    }

    /// The `Interfaces` entries under `configuration` (``LinkTable/interfaces(configuration:)``).
    /// Only the links whose classification may have changed are classified again (every link
    /// under a new configuration or after a dump): a changed link, the links stacked on it and
    /// its masters, recursively, and every tunnel (its underlying link is any link's) — so a
    /// listing during a burst of container links classifies those and their bridge, not each link.
    func interfaces(configuration: DaemonConfiguration) -> [NetworkInterface] {
        var links: [InterfaceIndex: LinkFacts]
        if let classified, classified.configuration == configuration {
            links = classified.links
            for index in linksToClassifyAgain(links) { links[index] = table.facts(forLink: index, configuration: configuration) }
        } else {
            links = Dictionary(uniqueKeysWithValues: table.classifiedLinks(configuration: configuration).map { ($0.index, $0) })
        }
        classified = (configuration, links)
        reclassify = []
        return InterfaceListing.entries(links: Array(links.values), usableFamilies: table.usableFamilies, defaultRoutes: Array(table.defaultRoutes))
    }

    /// ``reclassify`` with the links whose classification reads one of them (stacked on it, its
    /// master), recursively, and every tunnel and CLAT of `links`.
    private func linksToClassifyAgain(_ links: [InterfaceIndex: LinkFacts]) -> Set<InterfaceIndex> {
        var pending = reclassify.union(links.values.filter { $0.transport == .vpn || $0.clatAddress != nil }.map(\.index))
        guard !pending.isEmpty else { return [] }
        let stackedOn = Dictionary(grouping: table.links.values.filter { $0.lowerIndex != nil }, by: { $0.lowerIndex! })
        var frontier = Array(pending)
        while let index = frontier.popLast() {
            let readers = (stackedOn[index]?.map(\.index) ?? []) + (table.links[index]?.masterIndex.map { [$0] } ?? [])
            for reader in readers where pending.insert(reader).inserted { frontier.append(reader) }
        }
        return pending
    }

    /// Records what NetworkManager and networkd say of link `index`'s meteredness
    /// (``LinkTable/setMeteredHints(_:for:)``); returns whether that changed. The link is
    /// classified again at the next listing.
    func setMeteredHints(_ hints: MeteredHints, for index: InterfaceIndex) -> Bool {
        guard table.setMeteredHints(hints, for: index) else { return false }
        reclassify.insert(index)
        isListingStale = true
        return true
    }

    /// Applies an event's route message to the default routes (see
    /// ``LinkTable/applyDefaultRoute(_:replacing:)``).
    func applyRoute(_ message: NetlinkMessage) {
        if table.applyDefaultRoute(message.payload, replacing: message.header.isReplacement) { isListingStale = true }
    }

    /// Logs what could not be parsed of a batch (rate-limited, see ``ParseErrorLog``).
    func report(_ parseErrors: [NetlinkParseError]) {
        parseErrorLog.report(parseErrors, parsing: "rtnetlink message")
    }

    /// When a resynchronisation reads the default routes (their dump reads every route: a large
    /// table takes the kernel a while).
    enum DefaultRouteReading {
        /// With the links and addresses.
        case now
        /// At the queue's next turn, then ``onDefaultRoutesRead``.
        case atNextTurn
        /// When ``readDeferredDefaultRoutes()`` asks, at the queue's next turn then: at start-up,
        /// the first status (which needs no route dump), the bus name's reply and `READY=1` do
        /// not wait for a large table's dump, and whatever the queue holds after `READY=1` (a
        /// method call) waits for it, so no caller reads `Interfaces` without their gateways.
        case deferred
        /// 100 ms later, then ``onLateResynchronisation``: after an overrun the status, which
        /// needs no route dump, is published first, and what is still queued is read first.
        case shortlyAfter
        /// Not at all: the mirror's are kept (the addresses read again for a source).
        case kept
    }

    /// Replaces the mirror with fresh dumps, the default routes when `reading` says; on failure
    /// the old mirror stays. A dump the kernel still flagged as interrupted after its retries
    /// is used, and another resynchronisation follows shortly (objects that changed during it
    /// may be missing, and no event would bring them back).
    func resynchronise(defaultRoutes reading: DefaultRouteReading = .now) throws(SystemError) {
        guard let dumps = try lookups.dumpLinksAndAddresses() else { return }
        let routes = reading == .now ? try lookups.dumpDefaultRoutes() : nil
        if routes != nil { defaultRoutesDeferred = false }
        if reading == .deferred { defaultRoutesDeferred = true }
        let all = dumps + (routes.map { [$0] } ?? [])
        table.replace(withDump: all.flatMap(\.messages), keepingDefaultRoutes: routes == nil)
        classified = nil
        isListingStale = true
        parseErrorLog.report(all.flatMap(\.parseErrors), parsing: "rtnetlink dump message")
        if all.contains(where: \.isInterrupted) { scheduleResynchronisation() }
        if reading == .atNextTurn || reading == .shortlyAfter { scheduleDefaultRouteReading(reading) }
    }

    /// Brings the mirror up to the kernel's `answers` for a destination: a source
    /// no link holds is not reachable (an IPv6 route's src outliving its address), but the
    /// mirror may lag the kernel by an address added a moment ago, whose message is not read
    /// yet, so the addresses are read again before the rule judges.
    func catchUp(with answers: StatusReducer.KernelAnswers) {
        guard case .success(let source) = answers.source, source.scope != .unspecified, table.address(source) == nil else { return }
        Log.debug("The selected source \(source) is not in the mirror; reading the addresses again.")
        do {
            try resynchronise(defaultRoutes: .kept)
        } catch {
            Log.warning("\(error); judging the source with the mirror as it is.")
        }
    }

    /// Reads the default routes that a resynchronisation left for later
    /// (``DefaultRouteReading/deferred``) at the queue's next turn, then calls
    /// ``onDefaultRoutesRead``; nothing when none was left or they were read since.
    func readDeferredDefaultRoutes() {
        guard defaultRoutesDeferred else { return }
        defaultRoutesDeferred = false
        scheduleDefaultRouteReading(.atNextTurn)
    }

    /// Reads the default routes again when `reading` says (``DefaultRouteReading/atNextTurn``
    /// or ``DefaultRouteReading/shortlyAfter``), then calls its callback (once, however often
    /// it is asked for meanwhile).
    private func scheduleDefaultRouteReading(_ reading: DefaultRouteReading) {
        guard !defaultRouteReadingScheduled else { return }
        defaultRouteReadingScheduled = true
        let read: @Sendable () -> Void = { [weak self] in
            guard let self, lookups.isOpen else { return }
            defaultRouteReadingScheduled = false
            do {
                guard let routes = try lookups.dumpDefaultRoutes() else { return }
                table.replaceDefaultRoutes(withDump: routes.messages)
                defaultRoutesDeferred = false
                isListingStale = true
                parseErrorLog.report(routes.parseErrors, parsing: "rtnetlink dump message")
                if routes.isInterrupted { scheduleResynchronisation() }
            } catch {
                Log.error("\(error); keeping the previous default routes.")
            }
            reading == .atNextTurn ? onDefaultRoutesRead() : onLateResynchronisation()
        }
        if reading == .atNextTurn {
            queue.async(execute: read)
        } else {
            queue.asyncAfter(deadline: .now() + .milliseconds(100), execute: read)
        }
    }

    /// Resynchronises in 100 ms, then calls ``onLateResynchronisation`` (once, however often it
    /// is asked for).
    private func scheduleResynchronisation() {
        guard !resynchronisationScheduled else { return }
        resynchronisationScheduled = true
        Log.warning("The kernel's link, address or route dumps kept changing while they were read; reading them again in 100 ms.")
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self, lookups.isOpen else { return }
            resynchronisationScheduled = false
            do {
                try resynchronise()
            } catch {
                Log.error("\(error); keeping the previous link state.")
            }
            onLateResynchronisation()
        }
    }
}
