#if canImport(Glibc)
import Glibc
#endif
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The kernel's answers for one destination, asked the way an application's connection would
/// (a TCP connection to port 443, ``StatusReducer/applicationFlow``, or a nameserver's query,
/// ``StatusReducer/nameServerFlow``): the source address the
/// kernel selects, then the route lookup for that source with the flow's keys; the questions of
/// several destinations go together, and the policy rules' selectors (an `RTM_GETRULE` dump)
/// say which lookups are needed at all. Also the dumps of links, addresses and default routes
/// that refill the mirror, and the neighbour entry of a gateway. Only questions: what the answers mean is ``StatusReducer``'s and the rule's.
/// Confined to the engine's queue; the engine, its mirror and its gateway following share one.
final class KernelLookups {
    /// The query socket; nil before ``open()`` and after ``close()``.
    private var query: NetlinkQueryClient?
    /// The UDP sockets that find the sources.
    private let sourceQuery = SourceAddressQuery()

    /// Whether the query socket is open.
    var isOpen: Bool { query != nil }

    /// Opens the query socket.
    func open() throws(SystemError) {
        query = try NetlinkQueryClient()
    }

    /// Closes the query socket (every question then fails, `EBADF`, or is not asked) and the
    /// UDP sockets of the sources.
    func close() {
        query = nil
        sourceQuery.close()
        rulesChanged()
    }

    /// The distinct selectors (``PolicyRuleSelectors``) of the policy rules (only whether a rule
    /// selects so matters), read when first needed after ``rulesChanged()``, then kept from the
    /// rule messages (``ruleChanged(added:selectors:)``); nil until then, or when the dump failed
    /// (every flow lookup is then asked).
    private var rules: [PolicyRuleSelectors]?
    /// Whether ``rules`` must be read again before the next question.
    private var rulesNeedReading = true
    /// How many times the rules were read (`RTM_GETRULE` dumps), for the tests of the events' cost.
    private(set) var ruleDumps = 0

    /// Events may have been lost: the rules are read again (an `RTM_GETRULE` dump) before the
    /// next question.
    func rulesChanged() {
        rulesNeedReading = true
    }

    /// A rule message: the selectors follow it without a dump of every rule, so that a burst of
    /// rule changes costs a dump only where one can tell: a new rule's selectors join (again,
    /// harmlessly, for a message older than the last dump); a deleted rule that selects on
    /// nothing the lookups differ in changes nothing; one that does may leave another rule
    /// selecting the same, so the rules are read again before the next question, as they are
    /// when the message did not say what the rule selects on.
    func ruleChanged(added: Bool, selectors: PolicyRuleSelectors?) {
        guard !rulesNeedReading, let known = rules, let selectors else { return rulesChanged() }
        if added {
            if !known.contains(selectors) { rules = known + [selectors] }
        } else if selectors.selectsOnTransport || selectors.selectsOnUser {
            rulesChanged()
        }
    }

    /// One destination asked about: what an application of user ``uid`` (nil: the daemon's own)
    /// connecting to ``destination`` gets, bound to ``zoneLink`` when given (a link-local
    /// destination's zone, `sin6_scope_id` and `RTA_OIF`).
    struct Question: Hashable {
        /// The destination.
        var destination: IPAddress
        /// The link the flow is bound to; nil for none.
        var zoneLink: InterfaceIndex?
        /// The user whose connection it is; nil for the daemon's own.
        var uid: UInt32?
        /// The flow's protocol and port (its uid is ``uid``'s).
        var flow = StatusReducer.applicationFlow
    }

    /// The answers for one destination (``answers(for:)``).
    func answers(for destination: IPAddress, zoneLink: InterfaceIndex? = nil, uid: UInt32? = nil) -> StatusReducer.KernelAnswers {
        let question = Question(destination: destination, zoneLink: zoneLink, uid: uid)
        return answers(for: [question])[question]!
    }

    /// What an application of each question's user connecting to its destination gets: the
    /// source address the UDP probe selects (unless policy rules tell its flow from the
    /// application's, see ``applicationSources(probes:for:)``), then the route lookup for that
    /// source with the flow's keys (without a source when none could be selected, so that the
    /// route's own verdict — unreachable, prohibit... — can be told). Each distinct question is
    /// asked once, and the route lookups of all of them go to the kernel together
    /// (``NetlinkQueryClient/lookupRoutes(_:)``).
    func answers(for questions: [Question]) -> [Question: StatusReducer.KernelAnswers] {
        var distinct: [Question] = []
        for question in questions where !distinct.contains(question) { distinct.append(question) }
        let probes = distinct.map { sourceQuery.source(toward: $0.destination, boundTo: $0.zoneLink) }
        let sources = applicationSources(probes: probes, for: distinct)
        for case .failure(let error) in sources where error.errno == EAFNOSUPPORT {
            Log.debug("\(error)")
        }
        let lookups = routeLookups(for: distinct, sources: sources.map { try? $0.get() })
        var answers: [Question: StatusReducer.KernelAnswers] = [:]
        for (position, question) in distinct.enumerated() {
            answers[question] = StatusReducer.KernelAnswers(source: sources[position], lookup: lookups[position])
        }
        return answers
    }

    /// The sources of the application's flows: each UDP `probe`'s, unless the source-less
    /// lookups with the probe's keys (and the daemon's uid, the probe socket's) and the
    /// application's (and its user's) differ — a policy rule on `ipproto`, a port or `uidrange`
    /// — see ``StatusReducer/applicationSource(probe:probeFlowLookup:applicationFlowLookup:family:)``.
    /// Those two lookups are asked only where a rule could make them differ
    /// (``StatusReducer/needsFlowLookups(rules:family:uid:)``), all together.
    private func applicationSources(probes: [Result<IPAddress, SystemError>], for questions: [Question]) -> [Result<IPAddress, SystemError>] {
        guard let query else { return probes }
        let rules = currentRules(query)
        let asked = questions.indices.filter { StatusReducer.needsFlowLookups(rules: rules, family: questions[$0].destination.family, uid: questions[$0].uid) }
        guard !asked.isEmpty else { return probes }
        var sources = probes
        do {
            let answers = try query.lookupRoutes(asked.flatMap { position in
                let question = questions[position]
                return [
                    NetlinkQueryClient.RouteQuestion(to: question.destination, outputInterface: question.zoneLink, flow: SourceAddressQuery.flow),
                    NetlinkQueryClient.RouteQuestion(to: question.destination, outputInterface: question.zoneLink, flow: question.flow.of(uid: question.uid)),
                ]
            })
            for (number, position) in asked.enumerated() {
                sources[position] = StatusReducer.applicationSource(
                    probe: probes[position], probeFlowLookup: answers[2 * number], applicationFlowLookup: answers[2 * number + 1],
                    family: questions[position].destination.family, flow: questions[position].flow
                )
            }
        } catch {
            Log.warning("\(error); judging with the UDP probe's source.")
        }
        return sources
    }

    /// The policy rules' selectors, read again first when a rule changed; nil when they cannot
    /// be read (then every flow lookup is asked, as without the shortcut).
    private func currentRules(_ query: NetlinkQueryClient) -> [PolicyRuleSelectors]? {
        guard rulesNeedReading else { return rules }
        do {
            let read = try query.dumpRuleSelectors()
            rules = Array(Set(read))
            rulesNeedReading = false
            ruleDumps += 1
            Log.debug("Read the policy rules (dump \(ruleDumps)): \(read.count) rule(s).")
        } catch {
            Log.warning("\(error); asking the kernel about both flows.")
            rules = nil
        }
        return rules
    }

    /// Asks the kernel, for each question, for the route of the application's flow from its
    /// source: the resolved next hop and the matched entry, which adds prefix and metric (read
    /// only when the first is a route). All of them in one exchange.
    private func routeLookups(for questions: [Question], sources: [IPAddress?]) -> [RouteLookup] {
        guard let query else { return questions.map { _ in .failed(errno: .badFileDescriptor) } }
        let routeQuestions = zip(questions, sources).flatMap { question, source in
            // An unspecified source (IPv4 found no address) is no source: the lookup goes without.
            let source = source.flatMap { $0.scope == .unspecified ? nil : $0 }
            let flow = question.flow.of(uid: question.uid)
            return [false, true].map { matchedEntry in
                NetlinkQueryClient.RouteQuestion(to: question.destination, source: source, outputInterface: question.zoneLink, flow: flow, matchedEntry: matchedEntry)
            }
        }
        do {
            let answers = try query.lookupRoutes(routeQuestions)
            return questions.indices.map { position in
                let answer = answers[2 * position]
                guard case .route = answer else { return StatusReducer.routeLookup(answer: answer, matchedEntry: nil) }
                return StatusReducer.routeLookup(answer: answer, matchedEntry: answers[2 * position + 1])
            }
        } catch {
            Log.warning("\(error)")
            return questions.map { _ in .failed(errno: Errno(error.errno)) }
        }
    }

    /// The state of `gateway`'s neighbour entry (`RTM_GETNEIGH`); nil when the kernel has none
    /// or the socket is closed.
    func neighbourEntry(of gateway: GatewayNeighbour) throws(SystemError) -> NeighbourMessage? {
        try query?.neighbourEntry(of: gateway.address, on: gateway.link)
    }

    /// Dumps of every link and address; nil when the socket is closed.
    func dumpLinksAndAddresses() throws(SystemError) -> [NetlinkQueryClient.DumpResult]? {
        guard let query else { return nil }
        return [try query.dump(NetlinkRequest.dumpLinks), try query.dump(NetlinkRequest.dumpAddresses)]
    }

    /// The default routes of every table (``NetlinkQueryClient/dumpDefaultRoutes(attempts:)``:
    /// every route is read); nil when the socket is closed.
    func dumpDefaultRoutes() throws(SystemError) -> NetlinkQueryClient.DumpResult? {
        try query?.dumpDefaultRoutes()
    }
}
