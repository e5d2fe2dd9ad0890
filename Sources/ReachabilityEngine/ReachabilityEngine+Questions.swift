#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// What callers ask the engine besides the published snapshot: `Explain()`, `CheckAddress()`,
/// links by name and the captive-portal APIs the network managers report. Each asks the kernel
/// about one destination the way the walk asks about the probes (``askKernel(_:)``).
extension ReachabilityEngine {
    /// What `Explain()` shows, as values: per probe the kernel's answers and the verdict, every
    /// link with its classification and addresses, the settings, and what a held loss hides.
    public func report() -> ExplainReport {
        dispatchPrecondition(condition: .onQueue(queue))
        // The probes' and the nameservers' questions asked together, each once.
        let answered = askKernel(Probes.all.map { KernelLookups.Question(destination: $0) } + (nameServers?.compactMap(nameServerQuestion) ?? []))
        let families = Probes.all.map { probe in
            let facts = destinationFacts(probe, purpose: .internetProbe, answered: answered)
            return ExplainReport.Family(
                destination: probe.description, facts: facts, verdict: ReachabilityRule.evaluate(facts), gateway: gateways.current(probe.family),
                activeCheck: checks.report(probe.family)
            )
        }
        let state = ExplainAssembly.State(
            evaluation: snapshot, heldBack: publishing.isHoldingLoss ? publishing.published : nil,
            routesChangedPending: publishing.isAnnouncementPending, routeFilterRebuildPending: routeFilter.isRebuildPending,
            interfacesListingPending: isInterfacesListingPending, configuration: settings,
            nat64Prefixes: nat64Prefixes.explanation(
                ipv6Link: ipv6RouteLink, now: clockSeconds(CLOCK_BOOTTIME), discovered: rfc7050.discovered.map(\.prefix), discovery: rfc7050.explanation
            ) { [mirror] index in
                mirror.table.links[index]?.name ?? "link \(index.rawValue)"
            }
        )
        var report = ExplainAssembly.report(families: families, table: mirror.table, captivePortalAPIs: captivePortalAPIs, state: state)
        report.nameServers = nameServers.map { $0.map { nameServerFacts($0, answered: answered) } }
        report.nameLookup = checks.nameLookupEvidence
        return report
    }

    /// The indices of the links the engine knows.
    public var linkIndices: [InterfaceIndex] {
        dispatchPrecondition(condition: .onQueue(queue))
        return mirror.table.links.keys.sorted()
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

    /// Records NetworkManager's `Metered` of the device that is `link` (``MeteredRule``); nil:
    /// NetworkManager has no such device. Evaluates again when that changes the hints.
    public func setNetworkManagerMetered(_ metered: NetworkManagerMetered?, link: InterfaceIndex) {
        dispatchPrecondition(condition: .onQueue(queue))
        var hints = mirror.table.meteredHints[link] ?? .none
        hints.networkManager = metered
        guard mirror.setMeteredHints(hints, for: link) else { return }
        Log.info("NetworkManager on link \(link.rawValue): metered \(metered.map { "\($0)" } ?? "not known").")
        reevaluate([])
    }

    /// Records the SSID of the Wi-Fi network `link` is associated with (nil: none, or not a
    /// wireless link), as the network manager reports it: with the gateway's link-layer address,
    /// it tells networks apart for `NetworkID`. Evaluates again when it changed.
    public func setWiFiSSID(_ ssid: String?, link: InterfaceIndex) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard wifiSSIDs[link] != ssid else { return }
        wifiSSIDs[link] = ssid
        reevaluate([])
    }

    /// Records the links whose DHCPv4 lease (systemd-networkd's) carries ANDROID_METERED
    /// (``MeteredRule``); every other link's lease does not. Evaluates again when that changes the hints.
    public func setDHCPAndroidMetered(links: Set<InterfaceIndex>) {
        dispatchPrecondition(condition: .onQueue(queue))
        var changed = false
        for index in Set(mirror.table.links.keys) {
            var hints = mirror.table.meteredHints[index] ?? .none
            hints.isDHCPAndroidMetered = links.contains(index)
            if mirror.setMeteredHints(hints, for: index) {
                changed = true
                Log.info("DHCP lease of link \(index.rawValue): \(hints.isDHCPAndroidMetered ? "ANDROID_METERED" : "no ANDROID_METERED").")
            }
        }
        if changed { reevaluate([]) }
    }

    /// The index of the link named `name`, if the engine knows one.
    public func linkIndex(named name: String) -> InterfaceIndex? {
        dispatchPrecondition(condition: .onQueue(queue))
        return mirror.table.index(named: name)
    }

    /// Decides reachability of one literal address with the kernel's route lookup for it, for
    /// the caller's user (``CallerShare/uid``: the lookups carry it, so `uidrange` rules route
    /// it as they route that user's connections), and watches it: from then on, route events
    /// for prefixes containing it reach the engine and ``onRoutingEvents`` (until
    /// ``WatchedDestinations/capacity`` more recently asked addresses of its family push it out).
    ///
    /// - Parameter caller: whose share asks (a root connection, or all of one unprivileged
    ///   user's): each share's watches are its own, and only its own newer questions push them
    ///   out. Without a uid (in-process, or a bus caller whose user the bus could not tell) the
    ///   answer is for the process's own uid.
    /// - Throws: ``InvalidAddressError`` when `text` is not a literal IPv4/IPv6 address.
    public func checkAddress(_ text: String, caller: CallerShare = CallerShare(connection: "")) throws(InvalidAddressError) -> DestinationVerdict {
        dispatchPrecondition(condition: .onQueue(queue))
        // An IPv4-mapped address (::ffff:192.0.2.1) is where a dual-stack socket sends: IPv4.
        guard let given = IPAddress(text)?.unmappingIPv4 else { throw InvalidAddressError(address: text) }
        // The unspecified address is where a connection to it goes: loopback.
        let address = DestinationRule.connectionTarget(of: given)
        // Before the lookup, so that a route change right after it is not filtered out.
        routeFilter.watch(address, caller: caller)
        return ReachabilityRule.evaluate(destinationFacts(address, purpose: .callerAddress, uid: caller.uid))
    }

    /// `CheckDestination()`: ``checkAddress(_:caller:)``'s answer with how a connection gets
    /// there (``DestinationRule``): through a CLAT, or for an IPv4 literal without a route of its
    /// own through NAT64 at the address synthesized with the prefix in use (the prefix and the
    /// CLAT's uplink the published state was decided with, ``destinationContext``). Watches the
    /// address, and the synthesized one when it was asked about.
    ///
    /// - Throws: ``InvalidAddressError`` when `text` is not a literal IPv4/IPv6 address.
    public func checkDestination(_ text: String, caller: CallerShare = CallerShare(connection: "")) throws(InvalidAddressError) -> DestinationAnswer {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let address = IPAddress(text)?.unmappingIPv4 else { throw InvalidAddressError(address: text) }
        return DestinationRule.answer(for: address, as: text, context: destinationContext) { destination in
            // Before the lookup, so that a route change right after it is not filtered out.
            routeFilter.watch(destination, caller: caller)
            return destinationFacts(destination, purpose: .callerAddress, uid: caller.uid)
        }
    }

    /// `CheckConnectivity()`: when checks run and a family has a route, checks every family now
    /// and calls `reply` with the published `Connectivity` once they finished — unless a check
    /// is in flight (then it waits for that one) or `caller` started one within
    /// ``OnDemandCheckGate/windowSeconds`` (then it replies at once); otherwise replies at once.
    /// A call that would wait while `caller` has ``OnDemandCheckGate/waitingCallsPerCaller``
    /// waiting is refused.
    ///
    /// - Parameters:
    ///   - caller: who asks (its uid, as the bus reports it, is the caller of the window).
    ///   - connection: the asking connection, whose calls ``forgetConnectivityCalls(of:)`` drops.
    ///   - reply: called once on the queue, now or when the checks finished; never when refused.
    /// - Returns: false when the call is refused (`reply` is not called): answer it busy.
    public func checkConnectivity(caller: CallerShare, connection: String, reply: @escaping (Connectivity) -> Void) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        guard checks.canCheckNow else {
            reply(publishedSnapshot.connectivity)
            return true
        }
        let decision = onDemandChecks.decide(for: caller, checkInFlight: checks.isCheckInFlight, now: clockSeconds(CLOCK_MONOTONIC))
        switch decision {
        case .busy:
            return false
        case .lastResult:
            reply(publishedSnapshot.connectivity)
        case .startCheck, .shareCheckInFlight:
            // The waiter holds only its token: a call dropped when its caller leaves is gone whole.
            let waiter = checks.checkNow(startingNew: decision == .startCheck) { [weak self] in self?.answerConnectivityCall(waiting: $0) }
            guard let waiter else {
                onDemandChecks.stoppedWaiting(caller)
                reply(publishedSnapshot.connectivity)
                return true
            }
            waitingConnectivityCalls[waiter] = WaitingConnectivityCall(caller: caller, connection: connection, reply: reply)
        }
        return true
    }

    /// Drops the `CheckConnectivity()` calls of `connection` (it left the bus): nobody is there
    /// to read their answers, and they no longer count against their caller.
    public func forgetConnectivityCalls(of connection: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        for (waiter, call) in waitingConnectivityCalls where call.connection == connection {
            waitingConnectivityCalls[waiter] = nil
            checks.forgetWaiter(waiter)
            onDemandChecks.stoppedWaiting(call.caller)
        }
    }

    private func answerConnectivityCall(waiting waiter: Int) {
        guard let call = waitingConnectivityCalls.removeValue(forKey: waiter) else { return }
        onDemandChecks.stoppedWaiting(call.caller)
        call.reply(publishedSnapshot.connectivity)
    }

    /// Forgets the watched destinations of the share named `caller` (its last bus connection
    /// closed).
    public func forgetWatches(of caller: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        routeFilter.forgetWatches(of: caller)
    }

    /// The kernel's answers to `questions`, asked together (each distinct one once), with the
    /// mirror brought up to them (``LinkMirror/catchUp(with:)``).
    func askKernel(_ questions: [KernelLookups.Question]) -> [KernelLookups.Question: StatusReducer.KernelAnswers] {
        let answers = lookups.answers(for: questions)
        for answer in answers.values { mirror.catchUp(with: answer) }
        return answers
    }

    /// Replaces the configured nameservers (``NameServerSources``' reading) and judges `DNS`
    /// again; from then on a route change toward one of them does too (each is a watched
    /// destination of the daemon's own share).
    public func setNameServers(_ servers: [NameServer]) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard servers != nameServers else { return }
        nameServers = servers
        routeFilter.forgetWatches(of: Self.nameServerShare.name)
        for server in servers { routeFilter.watch(server.address, caller: Self.nameServerShare) }
        guard lookups.isOpen else { return }
        reevaluate([], announcingRoutes: false)
    }

    /// The share under which the nameservers are watched.
    static let nameServerShare = CallerShare(connection: "nameservers")

    /// What the kernel answers for a query to `server` (``StatusReducer/nameServerFlow``), as
    /// a caller's address: a link-local server's zone, or the link systemd-resolved sends to a
    /// per-link server over, binds the flow to that link. `answered` holds answers already
    /// asked in this walk.
    func nameServerFacts(_ server: NameServer, answered: [KernelLookups.Question: StatusReducer.KernelAnswers] = [:]) -> NameServerFacts {
        NameServerFacts(
            server: server,
            facts: destinationFacts(
                server.address, purpose: .callerAddress, boundTo: Self.resolvedLink(of: server), flow: StatusReducer.nameServerFlow, answered: answered
            )
        )
    }

    /// The question ``nameServerFacts(_:answered:)`` asks the kernel about `server`; nil when
    /// its zone names no link.
    func nameServerQuestion(_ server: NameServer) -> KernelLookups.Question? {
        question(about: server.address, boundTo: Self.resolvedLink(of: server), flow: StatusReducer.nameServerFlow)
    }

    /// The link systemd-resolved sends to `server` over, for a per-link server; nil otherwise.
    private static func resolvedLink(of server: NameServer) -> InterfaceIndex? {
        if case .resolvedLink(let index) = server.origin { return index }
        return nil
    }

    /// The question about `destination` for user `uid` (nil: the daemon's own): a link-local
    /// IPv6 destination's zone binds the flow to that link (`sin6_scope_id`, `RTA_OIF`); like
    /// the kernel, any other destination's zone is not looked at. `link`, when given, binds the
    /// flow to that link otherwise (as systemd-resolved sends to a link's own servers). `flow`
    /// is the connection's protocol and port. Nil when the zone names no link.
    private func question(
        about destination: IPAddress, uid: UInt32? = nil, boundTo link: InterfaceIndex? = nil, flow: FlowKeys = StatusReducer.applicationFlow
    ) -> KernelLookups.Question? {
        var zoneLink = link
        if destination.family == .ipv6, destination.scope == .link, let zone = destination.zone {
            guard let index = mirror.table.index(ofZone: zone) else { return nil }
            zoneLink = index
        }
        return KernelLookups.Question(destination: destination, zoneLink: zoneLink, uid: uid, flow: flow)
    }

    /// Asks the kernel about `destination` for user `uid` (nil: the daemon's own), bound as
    /// ``question(about:uid:boundTo:flow:)`` says, and gathers what the rule needs, for `purpose`.
    /// An answer in `answered` (asked earlier in the same walk) is not asked again.
    private func destinationFacts(
        _ destination: IPAddress, purpose: DestinationPurpose, uid: UInt32? = nil, boundTo link: InterfaceIndex? = nil,
        flow: FlowKeys = StatusReducer.applicationFlow, answered: [KernelLookups.Question: StatusReducer.KernelAnswers] = [:]
    ) -> DestinationFacts {
        let scope = destination.scope
        guard let question = question(about: destination, uid: uid, boundTo: link, flow: flow) else {
            return DestinationFacts(
                family: .ipv6, lookup: .failed(errno: .noSuchDevice), source: .failed(errno: .noSuchDevice), destinationScope: scope, purpose: purpose
            )
        }
        return StatusReducer.destinationFacts(
            in: mirror.table, family: destination.family, answers: answered[question] ?? askKernel([question])[question]!, configuration: settings,
            destinationScope: scope, purpose: purpose
        )
    }
}
