#if canImport(Glibc)
import Glibc
#endif
import RTNetlink
import ReachabilityCore
import SystemSupport

/// The kernel's answers for one destination, asked the way an application's connection would
/// (a TCP connection to port 443, ``StatusReducer/applicationFlow``): the source address the
/// kernel selects, then the route lookup for that source with the flow's keys. Also the dumps
/// of links, addresses and default routes that refill the mirror, and the neighbour entry of a
/// gateway. Only questions: what the answers mean is ``StatusReducer``'s and the rule's.
/// Confined to the engine's queue; the engine, its mirror and its gateway following share one.
final class KernelLookups {
    /// The query socket; nil before ``open()`` and after ``close()``.
    private var query: NetlinkQueryClient?

    /// Whether the query socket is open.
    var isOpen: Bool { query != nil }

    /// Opens the query socket.
    func open() throws(SystemError) {
        query = try NetlinkQueryClient()
    }

    /// Closes the query socket: every question then fails (`EBADF`) or is not asked.
    func close() {
        query = nil
    }

    /// What an application of user `uid` (nil: the daemon's own) connecting to `destination`
    /// gets: the source address the UDP probe selects (unless policy rules tell its flow from
    /// the application's, see ``applicationSource(probe:toward:zoneLink:flow:)``), then the
    /// route lookup for that source with the flow's keys (without a source when none could be
    /// selected, so that the route's own verdict — unreachable, prohibit... — can be told).
    /// `zoneLink` binds both to a link-local destination's link (`sin6_scope_id`, `RTA_OIF`).
    func answers(for destination: IPAddress, zoneLink: InterfaceIndex? = nil, uid: UInt32? = nil) -> StatusReducer.KernelAnswers {
        let flow = StatusReducer.applicationFlow.of(uid: uid)
        let probe = SourceAddressQuery.source(toward: destination, boundTo: zoneLink)
        let source = applicationSource(probe: probe, toward: destination, zoneLink: zoneLink, flow: flow)
        if case .failure(let error) = source, error.errno == EAFNOSUPPORT {
            Log.debug("\(error)")
        }
        return StatusReducer.KernelAnswers(source: source, lookup: routeLookup(to: destination, source: try? source.get(), outputInterface: zoneLink, flow: flow))
    }

    /// The source of the application's `flow` toward `destination`: the UDP `probe`'s, unless
    /// the source-less lookups with the probe's keys (and the daemon's uid, the probe socket's)
    /// and the application's (and its user's) differ — a policy rule on `ipproto` or
    /// `uidrange` — see ``StatusReducer/applicationSource(probe:probeFlowLookup:applicationFlowLookup:family:)``.
    private func applicationSource(
        probe: Result<IPAddress, SystemError>, toward destination: IPAddress, zoneLink: InterfaceIndex?, flow: FlowKeys
    ) -> Result<IPAddress, SystemError> {
        guard let query else { return probe }
        do {
            let probeFlowLookup = try query.lookupRoute(to: destination, outputInterface: zoneLink, flow: SourceAddressQuery.flow)
            let applicationFlowLookup = try query.lookupRoute(to: destination, outputInterface: zoneLink, flow: flow)
            return StatusReducer.applicationSource(
                probe: probe, probeFlowLookup: probeFlowLookup, applicationFlowLookup: applicationFlowLookup, family: destination.family
            )
        } catch {
            Log.warning("\(error); judging with the UDP probe's source.")
            return probe
        }
    }

    /// Asks the kernel for the route of the application's `flow` to `destination` from `source`:
    /// the resolved next hop, then (for a route) the matched entry, which adds prefix and metric.
    private func routeLookup(to destination: IPAddress, source: IPAddress?, outputInterface: InterfaceIndex?, flow: FlowKeys) -> RouteLookup {
        // An unspecified source (IPv4 found no address) is no source: the lookup goes without.
        let source = source.flatMap { $0.scope == .unspecified ? nil : $0 }
        do {
            guard let query else { return .failed(errno: .badFileDescriptor) }
            let answer = try query.lookupRoute(to: destination, source: source, outputInterface: outputInterface, flow: flow)
            guard case .route = answer else { return StatusReducer.routeLookup(answer: answer, matchedEntry: nil) }
            let matchedEntry = try query.lookupRoute(to: destination, source: source, outputInterface: outputInterface, flow: flow, matchedEntry: true)
            return StatusReducer.routeLookup(answer: answer, matchedEntry: matchedEntry)
        } catch {
            Log.warning("\(error)")
            return .failed(errno: Errno(error.errno))
        }
    }

    /// The state of `gateway`'s neighbour entry (`RTM_GETNEIGH`); nil when the kernel has none
    /// or the socket is closed.
    func neighbourState(of gateway: GatewayNeighbour) throws(SystemError) -> NeighbourState? {
        try query?.neighbourState(of: gateway.address, on: gateway.link)
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
