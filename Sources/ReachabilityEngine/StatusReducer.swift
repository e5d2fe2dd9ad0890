#if canImport(Glibc)
import Glibc
#endif
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The status reducer: the engine's evaluation without its sockets. Parsed rtnetlink messages
/// (dumps and events) keep a ``LinkTable``; the kernel's answers to the route lookups for the
/// probe destinations, with that table, give the snapshot through ``ReachabilityRule``; with the
/// evidence beyond the route, the nameservers and the NAT64 prefixes known, the walk's whole rule
/// step (``evaluation(of:configuration:)``): every published property but `Interfaces`.
///
/// Pure: no sockets, and sysfs is read only through the table's inspector (when a link appears
/// or is renamed). The engine does the I/O around it; the fuzzer and the tests call it directly.
enum StatusReducer {
    /// The flow the daemon answers for, "an application's connection": TCP to port 443 (HTTPS,
    /// what browsers, package managers and most APIs open first). Both kernel questions carry
    /// its keys, so policy rules on `ipproto` and `dport` match them as they match the connection.
    static let applicationFlow = FlowKeys(.tcp, destinationPort: 443)

    /// The flow of a query to a nameserver: UDP to port 53, what glibc's resolver (and
    /// systemd-resolved) sends first. A nameserver is asked about with these keys, so a policy
    /// rule on `ipproto udp dport 53` (or one on TCP 443 that queries never match) is judged as
    /// the queries see it.
    static let nameServerFlow = FlowKeys(.udp, destinationPort: 53)

    /// What the kernel answered for one destination: the source address of the application's
    /// flow (``applicationSource(probe:probeFlowLookup:applicationFlowLookup:family:)``), and
    /// the route lookup for that source with the flow's keys.
    struct KernelAnswers {
        /// The selected source address, or why `connect` failed.
        var source: Result<IPAddress, SystemError>
        /// The route lookup.
        var lookup: RouteLookup
    }

    /// The snapshot the engine publishes for `table` and the kernel's answers for the two probe
    /// destinations (its `Interfaces` are the engine's next step, from the mirror).
    static func snapshot(of table: LinkTable, ipv4: KernelAnswers, ipv6: KernelAnswers, configuration: DaemonConfiguration) -> ReachabilitySnapshot {
        ReachabilityRule.decide(
            ipv4: destinationFacts(in: table, family: .ipv4, answers: ipv4, configuration: configuration),
            ipv6: destinationFacts(in: table, family: .ipv6, answers: ipv6, configuration: configuration)
        )
    }

    /// Everything a walk's rule step decides from, gathered before it (the kernel asked once,
    /// ``ReachabilityEngine``'s `gather(_:)`), so that the rule step asks nothing.
    struct Gathered {
        /// The mirror's links and addresses.
        var table: LinkTable
        /// The kernel's answers for the IPv4 probe.
        var ipv4: KernelAnswers
        /// The kernel's answers for the IPv6 probe.
        var ipv6: KernelAnswers
        /// Every configured nameserver with the kernel's answers for a query to it; nil until
        /// the nameservers are known (`DNS` is `unknown` till then).
        var nameServers: [NameServerFacts]?
        /// The NAT64 prefixes routers advertised.
        var advertisedNAT64Prefixes = AdvertisedNAT64Prefixes()
        /// The prefix RFC 7050 discovery found, with the path it was found on; nil when none.
        var discoveredNAT64Prefix: RFC7050Discovery.Discovered?
        /// The kernel's answers for IPv4's probe synthesized (RFC 6052) with each prefix of
        /// ``nat64PrefixesPossiblyInUse(advertised:discovered:)``.
        var synthesizedProbes: [IPPrefix: KernelAnswers] = [:]
        /// What each family's gateway's neighbour entry says (absent: nothing).
        var gatewayEvidence: [AddressFamily: Connectivity] = [:]
        /// Each family's gateway's link-layer address, where its entry resolved it (absent: not known).
        var gatewayLinkLayerAddresses: [AddressFamily: [UInt8]] = [:]
        /// The machine's key of ``NetworkIdentity``; empty: every id is "".
        var networkIDKey: [UInt8] = []
        /// Per wireless link, the SSID of its network, where the network manager says it.
        var wifiSSIDs: [InterfaceIndex: String] = [:]
        /// What the checks last said of each family, and over which path.
        var checkEvidence: [AddressFamily: CheckEvidence] = [:]
        /// The check's last round of name lookups; nil when there is none.
        var nameLookups: NameLookupEvidence?
        /// Whether the active check runs: RFC 7050 discovery is then wanted with IPv4 reachable too.
        var isCheckEnabled = false
        /// The time of the walk (`CLOCK_BOOTTIME` seconds): a captive-portal session's
        /// `seconds-remaining` is counted down to it.
        var now: Double = 0
    }

    /// What a walk's rule step decides: the whole published snapshot, and what the walk follows.
    struct Evaluation: Equatable {
        /// The snapshot, every property but `Interfaces` (listed from the mirror apart from the walk).
        var snapshot: ReachabilitySnapshot
        /// Per reachable family whose output link the mirror names: the route's link and gateway,
        /// which the active check follows.
        var checkPaths: [AddressFamily: CheckPath]
        /// Per link of ``checkPaths`` whose gateway's link-layer address is known, the id of the
        /// network it leads into (IPv4's gateway's when both families' routes take the link):
        /// the `network-id` of its `Interfaces` entry.
        var networkIDs: [InterfaceIndex: String] = [:]
        /// IPv6's path, which RFC 7050 discovery follows while it is wanted: no router advertised
        /// a prefix, and IPv4 is not reachable or the check runs. Nil: discovery not wanted.
        var nat64DiscoveryPath: CheckPath?
        /// The links the walk read: a link or address event concerning none of them takes no
        /// walk (every event walks while a NAT64 prefix is in use).
        var linksInUse: LinksInUse
        /// What `CheckDestination` decides with beside the kernel's answers, as the snapshot was
        /// decided: the NAT64 prefix in use and the link a CLAT translates onto (IPv6's route's).
        var destinationContext: DestinationRule.Context
        /// When (`CLOCK_BOOTTIME` seconds) the published captive-portal session's
        /// `seconds-remaining` next counts down (``CaptivePortalSessionReading/nextChange(after:)``):
        /// the walk is taken again then. Nil: it does not.
        var sessionCountdown: Double?
    }

    /// The walk's rule step, a function of its inputs only, in order:
    /// 1. ``ReachabilityRule`` on the probes' facts (as ``snapshot(of:ipv4:ipv6:configuration:)``,
    ///    which the fuzzer replays);
    /// 2. the paths of the reachable families' routes, then ``EvidenceRule`` with the gateways'
    ///    evidence and the checks' verdicts, a verdict counting only while its family's route
    ///    takes the path the check went over (a new gateway or link, or no route, has none yet),
    ///    and the captive-portal session an API described with it, counted down to the walk's time;
    /// 3. ``DNSRule`` on the nameservers' facts (``resolvingNames(_:servers:lookups:)``);
    /// 4. `NAT64Prefix`: the one advertised on IPv6's route's link first
    ///    (``AdvertisedNAT64Prefixes/inUse(ipv6Link:)``), else the one RFC 7050 discovery found,
    ///    while discovery is still wanted on the link it was found on;
    /// 5. `IPv4Access` (``IPv4AccessRule``), with IPv4's probe synthesized with that prefix;
    /// 6. the CLAT (``CLATPath``): the properties describe the link it translates onto
    ///    (``ReachabilitySnapshot/describing(_:)``); `CheckDestination` takes the same prefix and
    ///    uplink (``Evaluation/destinationContext``);
    /// 7. `NetworkID` (``NetworkIdentity``): per path of step 2 the id from its gateway's
    ///    link-layer address; the published one is that of the family whose link `Interface` names
    ///    (IPv4's first), "" when none is known.
    ///
    /// - Parameters:
    ///   - gathered: the mirror, the kernel's answers, the NAT64 prefixes known and the evidence held.
    ///   - configuration: the configuration in force.
    static func evaluation(of gathered: Gathered, configuration: DaemonConfiguration) -> Evaluation {
        let table = gathered.table
        let ipv4 = destinationFacts(in: table, family: .ipv4, answers: gathered.ipv4, configuration: configuration)
        let ipv6 = destinationFacts(in: table, family: .ipv6, answers: gathered.ipv6, configuration: configuration)
        let routes = ReachabilityRule.decide(ipv4: ipv4, ipv6: ipv6)
        let paths = checkPaths(routes, answers: [.ipv4: gathered.ipv4, .ipv6: gathered.ipv6], table: table)
        func evidence(_ family: AddressFamily) -> FamilyEvidence {
            let check = gathered.checkEvidence[family].flatMap { $0.path == paths[family] ? $0 : nil }
            return FamilyEvidence(
                gateway: gathered.gatewayEvidence[family], check: check?.connectivity, checkPortalURL: check?.portalURL ?? "", session: check?.session
            )
        }
        let (ipv4Evidence, ipv6Evidence) = (evidence(.ipv4), evidence(.ipv6))
        var snapshot = EvidenceRule.decide(routes, ipv4: ipv4Evidence, ipv6: ipv6Evidence, now: gathered.now)
        let session = EvidenceRule.session(of: [(snapshot.ipv4Connectivity, ipv4Evidence.session), (snapshot.ipv6Connectivity, ipv6Evidence.session)])
        if let servers = gathered.nameServers { snapshot = resolvingNames(snapshot, servers: servers, lookups: gathered.nameLookups) }
        let advertised = gathered.advertisedNAT64Prefixes.inUse(ipv6Link: gathered.ipv6.lookup.outputInterfaceIndex)?.prefix
        let discoveryPath = advertised == nil && (!snapshot.isIPv4Reachable || gathered.isCheckEnabled) ? paths[.ipv6] : nil
        // What discovery found stays while it follows the link it was found on (``RFC7050Discovery``).
        let nat64Prefix = advertised ?? gathered.discoveredNAT64Prefix.flatMap { $0.path.link == discoveryPath?.link ? $0.prefix : nil }
        snapshot.nat64Prefix = nat64Prefix?.description ?? ""
        let synthesized = nat64Prefix.flatMap { gathered.synthesizedProbes[$0] }.map {
            ReachabilityRule.evaluate(destinationFacts(in: table, family: .ipv6, answers: $0, configuration: configuration))
        }
        let context = DestinationRule.Context(nat64Prefix: nat64Prefix.map { NAT64Prefix(network: $0.network, length: $0.length) }, clatUplink: ipv6.outputLink)
        let clat = CLATPath(routeLink: ipv4.outputLink, uplink: context.clatUplink)
        snapshot.ipv4Access = IPv4AccessRule.decide(IPv4AccessFacts(
            isIPv4Reachable: snapshot.isIPv4Reachable, isIPv4RouteThroughCLAT: clat != nil, isNAT64PrefixKnown: nat64Prefix != nil,
            isSynthesizedProbeReachable: synthesized?.isReachable ?? false
        ))
        var described = snapshot.describing(clat)
        let networkIDs = networkIDs(paths: paths, addresses: gathered.gatewayLinkLayerAddresses, ssids: gathered.wifiSSIDs, key: gathered.networkIDKey)
        described.networkID = AddressFamily.allCases.lazy.compactMap { family in
            paths[family].flatMap { $0.linkName == described.interface ? networkIDs[$0.link] : nil }
        }.first ?? ""
        return Evaluation(
            snapshot: described, checkPaths: paths, networkIDs: networkIDs, nat64DiscoveryPath: discoveryPath,
            linksInUse: nat64Prefix == nil
                ? linksRead(probes: [gathered.ipv4, gathered.ipv6], nameServers: gathered.nameServers ?? [], table: table, configuration: configuration)
                : .every,
            destinationContext: context, sessionCountdown: session?.nextChange(after: gathered.now)
        )
    }

    /// The NAT64 prefixes ``evaluation(of:configuration:)`` may find in use, whichever link
    /// IPv6's route takes and whether discovery stays wanted: each that
    /// ``AdvertisedNAT64Prefixes/inUse(ipv6Link:)`` names for some link, else the one
    /// discovery found. Usually one; the walk asks the kernel about IPv4's probe synthesized with
    /// each beside its other questions, before the rule step knows which is in use.
    static func nat64PrefixesPossiblyInUse(advertised: AdvertisedNAT64Prefixes, discovered: RFC7050Discovery.Discovered?) -> Set<IPPrefix> {
        let links: [InterfaceIndex?] = [nil] + Set(advertised.advertisements.map(\.link)).map { $0 }
        let inUse = Set(links.compactMap { advertised.inUse(ipv6Link: $0)?.prefix })
        return inUse.isEmpty ? Set(discovered.map { [$0.prefix] } ?? []) : inUse
    }

    /// Per link of `paths` whose gateway's link-layer address `addresses` has, the network's id
    /// (``NetworkIdentity``, with the link's SSID from `ssids`); IPv4's when both families' paths take the link.
    private static func networkIDs(
        paths: [AddressFamily: CheckPath], addresses: [AddressFamily: [UInt8]], ssids: [InterfaceIndex: String], key: [UInt8]
    ) -> [InterfaceIndex: String] {
        var ids: [InterfaceIndex: String] = [:]
        for family in AddressFamily.allCases {
            guard let path = paths[family], path.gateway != nil, ids[path.link] == nil else { continue }
            let id = NetworkIdentity.id(gatewayLinkLayerAddress: addresses[family], ssid: ssids[path.link].map { Array($0.utf8) }, key: key)
            if !id.isEmpty { ids[path.link] = id }
        }
        return ids
    }

    /// Per family `routes` calls reachable whose route's output link `table` names: the link and gateway.
    private static func checkPaths(
        _ routes: ReachabilitySnapshot, answers: [AddressFamily: KernelAnswers], table: LinkTable
    ) -> [AddressFamily: CheckPath] {
        var paths: [AddressFamily: CheckPath] = [:]
        for (family, answers) in answers where family == .ipv4 ? routes.isIPv4Reachable : routes.isIPv6Reachable {
            guard case .route(let route) = answers.lookup, let link = route.outputInterfaceIndex, let name = table.links[link]?.name else { continue }
            paths[family] = CheckPath(link: link, linkName: name, gateway: route.gateway)
        }
        return paths
    }

    /// The links a walk read (``LinksInUse/read(routeLinks:sourceLinks:links:globalAddressHolders:defaultRouteLinks:zoneNames:configuration:)``),
    /// from the probes' answers and the nameservers' facts.
    private static func linksRead(
        probes: [KernelAnswers], nameServers: [NameServerFacts], table: LinkTable, configuration: DaemonConfiguration
    ) -> LinksInUse {
        var routeLinks: Set<InterfaceIndex> = []
        var sources: [IPAddress] = []
        for answers in probes {
            if case .route(let route) = answers.lookup, let link = route.outputInterfaceIndex { routeLinks.insert(link) }
            if case .success(let source) = answers.source { sources.append(source) }
        }
        var zoneNames: Set<String> = []
        for server in nameServers {
            if let link = server.facts.outputLink?.index { routeLinks.insert(link) }
            if case .selected(let source) = server.facts.source { sources.append(source.address) }
            if case .resolvedLink(let link) = server.server.origin { routeLinks.insert(link) }
            if let zone = server.server.address.zone {
                zoneNames.insert(zone)
                if let number = Int32(zone) { routeLinks.insert(InterfaceIndex(number)) }
            }
        }
        return LinksInUse.read(
            routeLinks: routeLinks, sourceLinks: Set(sources.compactMap { table.address($0)?.link.index }), links: table.links,
            globalAddressHolders: table.linksWithGlobalScopeAddress, defaultRouteLinks: Set(table.defaultRoutes.map(\.outputInterfaceIndex)),
            zoneNames: zoneNames, configuration: configuration
        )
    }

    /// `snapshot` with `DNS` (``DNSRule``) and, when the route is fine and names are not, a
    /// reason that says so.
    ///
    /// - Parameters:
    ///   - snapshot: the route rule's and the evidence rule's.
    ///   - servers: every configured nameserver with its verdict.
    ///   - lookups: the check's last round of name lookups, nil when there is none.
    static func resolvingNames(_ snapshot: ReachabilitySnapshot, servers: [NameServerFacts], lookups: NameLookupEvidence?) -> ReachabilitySnapshot {
        let verdict = DNSRule.decide(servers: servers, hostIsReachable: snapshot.isReachable, lookups: lookups)
        var snapshot = snapshot
        snapshot.dns = verdict.readiness
        snapshot.reason = DNSRule.reason(snapshot.reason, status: snapshot.status, dns: verdict)
        return snapshot
    }

    /// What the rule needs for one destination: the lookup, the output link's facts from
    /// `table` when the lookup names a link, and the source address with where it lives.
    static func destinationFacts(
        in table: LinkTable, family: AddressFamily, answers: KernelAnswers, configuration: DaemonConfiguration, destinationScope: AddressScope = .global,
        purpose: DestinationPurpose = .internetProbe
    ) -> DestinationFacts {
        let source = sourceSelection(answers.source, in: table)
        guard case .route(let route) = answers.lookup, let index = route.outputInterfaceIndex else {
            return DestinationFacts(family: family, lookup: answers.lookup, source: source, destinationScope: destinationScope, purpose: purpose)
        }
        return DestinationFacts(
            family: family, lookup: answers.lookup, outputLink: table.facts(forLink: index, configuration: configuration), source: source,
            destinationScope: destinationScope, purpose: purpose
        )
    }

    /// The source address of the application's flow (`flow`: ``applicationFlow`` unless a
    /// nameserver's, ``nameServerFlow``), from the probe's.
    ///
    /// The probe is a UDP `connect` (``SourceAddressQuery/flow``: a TCP `connect` would send a
    /// SYN) under the daemon's uid (a socket carries its creator's), and a policy rule on
    /// `ipproto` can tell it from the TCP flow, one on `uidrange` from a bus caller's flow (the
    /// caller's uid). So the kernel is also asked the lookup a `connect` makes first, without a
    /// source (the one that picks it), once with each flow's keys. When both answer alike no
    /// rule told the flows apart, and the probe's source is the application's (the probe also
    /// sees what a lookup without a source does not: IPv6 source-specific routes). When they
    /// differ the application's lookup decides: the source it selects (`RTA_PREFSRC`), or its
    /// error.
    ///
    /// - Parameters:
    ///   - probe: the UDP probe's source, or why its `connect` failed.
    ///   - probeFlowLookup: the source-less lookup with the probe's keys (the daemon's uid).
    ///   - applicationFlowLookup: the source-less lookup with `flow`'s keys (and the uid of the
    ///     user asked about).
    ///   - family: the destination's family.
    ///   - flow: the flow asked about, for the error's text.
    /// - Returns: the source as ``SourceAddressQuery`` reports one: an address (`0.0.0.0` when
    ///   IPv4 found no address), or an error carrying the kernel's errno.
    static func applicationSource(
        probe: Result<IPAddress, SystemError>, probeFlowLookup: NetlinkQueryClient.RouteAnswer, applicationFlowLookup: NetlinkQueryClient.RouteAnswer,
        family: AddressFamily, flow: FlowKeys = applicationFlow
    ) -> Result<IPAddress, SystemError> {
        if probeFlowLookup == applicationFlowLookup { return probe }
        switch applicationFlowLookup {
        case .error(let code):
            return .failure(SystemError(action: "look up the route of a connection (\(flow.description))", errno: code))
        case .route(let route):
            if let source = route.preferredSourceAddress { return .success(source) }
            // No address to select: IPv4 says 0.0.0.0 (as `getsockname` would), IPv6 refuses.
            return family == .ipv4
                ? .success(unspecifiedIPv4)
                : .failure(SystemError(action: "select a source address for a connection (\(flow.description))", errno: EADDRNOTAVAIL))
        }
    }

    /// Whether ``applicationSource(probe:probeFlowLookup:applicationFlowLookup:family:)``
    /// needs its two source-less lookups for a destination of `family` asked about for user
    /// `uid` (nil: the daemon's own), under the policy `rules` (nil: not known).
    ///
    /// The two lookups differ in the flow's keys only: the transport protocol and the port (the
    /// probe's UDP 443 against the application's TCP 443 or a nameserver's UDP 53), and the uid
    /// when a caller's is named (the probe's socket carries the daemon's). A rule can tell them apart
    /// only by selecting on one of those (`ipproto`, `sport`, `dport`; `uidrange` when a uid
    /// is named); without such a rule of the family the kernel walks the same rules for both,
    /// the answers are alike, and the probe's source stands — so they are not asked. Unknown
    /// rules (the dump failed) need them.
    static func needsFlowLookups(rules: [PolicyRuleSelectors]?, family: AddressFamily, uid: UInt32?) -> Bool {
        guard let rules else { return true }
        return rules.contains { rule in
            rule.family == family && (rule.selectsOnTransport || (uid != nil && rule.selectsOnUser))
        }
    }

    /// `0.0.0.0`: what `getsockname` says when IPv4 found no source address.
    private static let unspecifiedIPv4 = IPAddress("0.0.0.0")!

    /// The source address as the rule sees it: its scope (from `table` when a link holds it,
    /// else from the address itself), the link holding it and whether DAD lets it be used.
    static func sourceSelection(_ answer: Result<IPAddress, SystemError>, in table: LinkTable) -> SourceSelection {
        let address: IPAddress
        switch answer {
        case .failure(let error): return .failed(errno: Errno(error.errno))
        case .success(let selected): address = selected
        }
        let held = table.address(address)
        var scope = address.scope
        if scope == .global, let held, !held.facts.isGlobalScope { scope = .link }
        let isVerified = held.map { !($0.facts.isTentative && !$0.facts.isOptimistic) && !$0.facts.isDuplicateAddressDetectionFailed } ?? true
        return .selected(SourceAddress(
            address: address, scope: scope, linkName: held?.link.name,
            isVerified: isVerified, isHeld: held != nil
        ))
    }

    /// The kernel's answers to the two lookups for one destination, as the rule sees them.
    ///
    /// - Parameters:
    ///   - answer: the plain lookup's answer: the resolved next hop.
    ///   - matchedEntry: the `RTM_F_FIB_MATCH` lookup's answer (prefix and metric of the entry
    ///     that matched); asked only when `answer` is a route, ignored otherwise.
    static func routeLookup(answer: NetlinkQueryClient.RouteAnswer, matchedEntry: NetlinkQueryClient.RouteAnswer?) -> RouteLookup {
        let route: RouteMessage
        switch answer {
        case .error(let code): return .failed(errno: Errno(code))
        case .route(let resolved): route = resolved
        }
        var matched: RouteMessage?
        if case .route(let entry) = matchedEntry { matched = entry }
        return .route(RouteFacts(
            type: route.type,
            outputInterfaceIndex: route.outputInterface,
            gateway: route.gatewayAddress,
            table: route.table,
            isLinkDown: route.isLinkDown,
            matchedPrefix: matched.flatMap { entry in
                guard entry.destinationLength > 0, let prefix = entry.destinationAddress else { return nil }
                return "\(prefix)/\(entry.destinationLength)"
            },
            metric: matched?.priority
        ))
    }
}
