import Dispatch
import RTNetlink
import ReachabilityCore
import SystemSupport

/// Follows the gateways of the probes' routes through their neighbour (ARP / NDP) entries:
/// a socket subscribed to neighbour entries alone (router advertisement options come on the
/// engine's monitor socket), whose filter keeps only the followed gateways' entries; the reads (`RTM_GETNEIGH`) of a new gateway's
/// entry; and the state, ``GatewayNeighbours``. Confined to the engine's queue.
final class GatewayFollowing {
    /// Where a new gateway's entry is read.
    private let lookups: KernelLookups
    /// The neighbour socket (owned and closed by `events`); nil when it could not be opened.
    private var monitor: NetlinkSocket?
    private var events: NetlinkEventSource?
    /// The gateways followed and what their entries say.
    private var gateways = GatewayNeighbours()

    init(lookups: KernelLookups) {
        self.lookups = lookups
    }

    /// Opens the neighbour socket (filtered to no entry until gateways are followed); on failure
    /// warns (connectivity then has no evidence from the entries) and follows nothing.
    func open() {
        do {
            let socket = try NetlinkSocket.open()
            do throws(SystemError) {
                try NetlinkSocketFilter.neighboursOf([]).attach(to: socket)
                try socket.subscribe(to: [.neighbour])
            } catch {
                socket.close()
                throw error
            }
            monitor = socket
        } catch {
            Log.warning("\(error); connectivity will have no evidence from the gateways' neighbour entries.")
        }
    }

    /// Starts reading the neighbour socket's batches on `queue` into `handler`.
    func startListening(on queue: DispatchQueue, handler: @escaping (NetlinkBatch) -> Void) {
        guard let monitor else { return }
        let source = NetlinkEventSource(socket: monitor, queue: queue, handler: handler)
        source.start()
        events = source
    }

    /// Stops listening and closes the socket.
    func stop() {
        events?.cancel()
        events = nil
        monitor = nil
    }

    /// Forgets every gateway, so that the next ``follow(_:)`` reads their entries again
    /// (after a lost message).
    func reset() {
        gateways = GatewayNeighbours()
    }

    /// The gateway `family`'s probe route takes now, with what is known of it.
    func current(_ family: AddressFamily) -> GatewayNeighbour? {
        gateways.current(family)
    }

    /// Follows the gateways of the probes' routes as `answers` give them: a new one joins the
    /// socket filter first, then its neighbour entry is read (so that no change after the read
    /// is filtered out) and counted only if its link has carrier (`linkHasCarrier`).
    func follow(_ answers: [AddressFamily: StatusReducer.KernelAnswers], linkHasCarrier: (InterfaceIndex) -> Bool) {
        var chosen: [AddressFamily: (address: IPAddress, link: InterfaceIndex)] = [:]
        for (family, answer) in answers {
            guard case .route(let route) = answer.lookup, let gateway = route.gateway, let link = route.outputInterfaceIndex else { continue }
            chosen[family] = (gateway, link)
        }
        let fresh = gateways.follow(chosen)
        if let monitor, !fresh.isEmpty {
            do {
                try NetlinkSocketFilter.neighboursOf(gateways.addresses(of: .ipv4) + gateways.addresses(of: .ipv6)).attach(to: monitor)
            } catch {
                Log.warning("Failed to follow the gateways' neighbour entries: \(error), ignoring.")
            }
        }
        for family in fresh {
            guard let gateway = gateways.current(family), lookups.isOpen else { continue }
            do {
                let entry = try lookups.neighbourEntry(of: gateway)
                gateways.read(entry?.state, linkLayerAddress: entry?.linkLayerAddress, for: family, linkHasCarrier: linkHasCarrier(gateway.link))
            } catch {
                Log.warning("\(error); following gateway \(gateway.address)'s neighbour entry from its next change.")
            }
        }
    }

    /// A new or changed neighbour entry (`RTM_NEWNEIGH`; a deleted entry says nothing: a failed
    /// gateway stays failed until it resolves again or its link loses carrier), on a link with
    /// carrier or not (`linkHasCarrier`: a failure without carrier is not counted).
    ///
    /// - Returns: nil when no family's current gateway's evidence changed; else the family, and
    ///   whether its evidence cleared (the gateway answers again).
    func apply(_ neighbour: NeighbourMessage, linkHasCarrier: Bool) -> (family: AddressFamily, cleared: Bool)? {
        guard let family = neighbour.addressFamily else { return nil }
        let before = gateways.current(family)?.evidence
        guard gateways.apply(neighbour, linkHasCarrier: linkHasCarrier) else { return nil }
        return (family, before != nil && gateways.current(family)?.evidence == nil)
    }

    /// `link` lost its carrier or went: what its gateways' entries said is forgotten (see
    /// ``GatewayNeighbours``). Returns whether a family's current gateway's evidence changed.
    func linkLostCarrier(_ link: InterfaceIndex) -> Bool {
        gateways.linkLostCarrier(link)
    }
}
