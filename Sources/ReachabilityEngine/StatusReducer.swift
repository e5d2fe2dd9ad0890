#if canImport(Glibc)
import Glibc
#endif
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The status reducer: the engine's evaluation without its sockets. Parsed rtnetlink messages
/// (dumps and events) keep a ``LinkTable``; the kernel's answers to the route lookups for the
/// probe destinations, with that table, give the snapshot through ``ReachabilityRule``; with the
/// evidence beyond the route, the walk's whole rule step (``evaluation(of:ipv4:ipv6:configuration:gatewayEvidence:checkEvidence:)``).
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

    /// The walk's rule step: the snapshot, and the path each reachable family's probe route
    /// takes, which the active check follows in the step after.
    struct Evaluation: Equatable {
        /// The snapshot: the route rule's, with the evidence that counts.
        var snapshot: ReachabilitySnapshot
        /// Per reachable family whose output link the mirror names: the route's link and gateway.
        var checkPaths: [AddressFamily: CheckPath]
    }

    /// The walk's rule step, a function of its inputs only: ``snapshot(of:ipv4:ipv6:configuration:)``,
    /// the paths of the reachable families' routes, then ``EvidenceRule`` with the gateways'
    /// evidence and the checks' verdicts. A verdict counts only while its family's route takes
    /// the path the check went over (a new gateway or link, or no route, has none yet).
    ///
    /// - Parameters:
    ///   - table: the mirror's links and addresses.
    ///   - ipv4: the kernel's answers for the IPv4 probe.
    ///   - ipv6: the kernel's answers for the IPv6 probe.
    ///   - configuration: the configuration in force.
    ///   - gatewayEvidence: what each family's gateway's neighbour entry says (absent: nothing).
    ///   - checkEvidence: what the checks last said of each family, and over which path.
    static func evaluation(
        of table: LinkTable, ipv4: KernelAnswers, ipv6: KernelAnswers, configuration: DaemonConfiguration,
        gatewayEvidence: [AddressFamily: Connectivity], checkEvidence: [AddressFamily: CheckEvidence]
    ) -> Evaluation {
        let routes = snapshot(of: table, ipv4: ipv4, ipv6: ipv6, configuration: configuration)
        var paths: [AddressFamily: CheckPath] = [:]
        for (family, answers) in [(AddressFamily.ipv4, ipv4), (.ipv6, ipv6)] where family == .ipv4 ? routes.isIPv4Reachable : routes.isIPv6Reachable {
            guard case .route(let route) = answers.lookup, let link = route.outputInterfaceIndex, let name = table.links[link]?.name else { continue }
            paths[family] = CheckPath(link: link, linkName: name, gateway: route.gateway)
        }
        func evidence(_ family: AddressFamily) -> FamilyEvidence {
            let check = checkEvidence[family].flatMap { $0.path == paths[family] ? $0 : nil }
            return FamilyEvidence(gateway: gatewayEvidence[family], check: check?.connectivity, checkPortalURL: check?.portalURL ?? "")
        }
        return Evaluation(snapshot: EvidenceRule.decide(routes, ipv4: evidence(.ipv4), ipv6: evidence(.ipv6)), checkPaths: paths)
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
